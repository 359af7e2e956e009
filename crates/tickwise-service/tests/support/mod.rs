//! Shared by the service tests (and the CLI's end-to-end tests, which
//! include this file by path): a corpus of uploads whose verdicts are known
//! by construction, a private Redis, and small HTTP helpers.
#![allow(dead_code, unreachable_pub)]

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tickwise::{Replay, ReplayLimits, TickInput};
use tickwise_catalog::{Catalog, InputPlan};

/// The verdict an upload must get, known from how it was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    Ok,
    Diverged,
    Refused,
}

impl Expect {
    pub fn as_str(self) -> &'static str {
        match self {
            Expect::Ok => "ok",
            Expect::Diverged => "diverged",
            Expect::Refused => "refused",
        }
    }
}

/// One upload: bytes, expected verdict, and what it is.
#[derive(Clone, Debug)]
pub struct Upload {
    pub bytes: Vec<u8>,
    pub expect: Expect,
    pub kind: &'static str,
}

fn island(seed: u64, ticks: u64) -> Vec<u8> {
    Catalog::builtin()
        .record("island", None, &InputPlan::Random(seed), ticks, 60)
        .expect("record island")
        .bytes
}

fn horde(seed: u64, ticks: u64) -> Vec<u8> {
    Catalog::builtin()
        .record("horde", None, &InputPlan::Random(seed), ticks, 30)
        .expect("record horde")
        .bytes
}

/// An island replay with one input changed and the file re-sealed: only
/// re-simulation can tell.
fn forged_island(seed: u64, ticks: u64) -> Vec<u8> {
    let r = Replay::<i32>::from_bytes(&island(seed, ticks), &ReplayLimits::DEFAULT).unwrap();
    let mut inputs: Vec<i32> = r.inputs(0).copied().collect();
    let mut parts = r.into_parts();
    let k = inputs.len() / 2;
    inputs[k] = if inputs[k] == 1 { -1 } else { 1 };
    parts.set_inputs(0, inputs);
    Replay::from_parts(parts).unwrap().to_bytes()
}

/// A horde replay claiming another final state (a doctored score).
fn forged_horde(seed: u64, ticks: u64) -> Vec<u8> {
    let r = Replay::<TickInput>::from_bytes(&horde(seed, ticks), &ReplayLimits::DEFAULT).unwrap();
    let mut parts = r.into_parts();
    parts.final_checksum ^= 1;
    Replay::from_parts(parts).unwrap().to_bytes()
}

fn relabelled(bytes: &[u8], sim: Option<&str>, version: Option<u32>) -> Vec<u8> {
    let r = Replay::<i32>::from_bytes(bytes, &ReplayLimits::DEFAULT).unwrap();
    let mut parts = r.into_parts();
    if let Some(s) = sim {
        parts.header.sim_id = s.into();
    }
    if let Some(v) = version {
        parts.header.sim_version = v;
    }
    Replay::from_parts(parts).unwrap().to_bytes()
}

/// `n` distinct uploads cycling through ten kinds: valid island and horde
/// replays, forged ones of each, bit flips, truncations, garbage, another
/// sim version, an unknown sim, and an empty body.
pub fn corpus(n: usize, island_ticks: u64, horde_ticks: u64) -> Vec<Upload> {
    (0..n)
        .map(|i| {
            let seed = i as u64 + 1;
            let (bytes, expect, kind) = match i % 10 {
                0 | 1 => (island(seed, island_ticks), Expect::Ok, "island"),
                2 => (horde(seed, horde_ticks), Expect::Ok, "horde"),
                3 => (
                    forged_island(seed, island_ticks),
                    Expect::Diverged,
                    "forged island",
                ),
                4 => (
                    forged_horde(seed, horde_ticks),
                    Expect::Diverged,
                    "forged horde",
                ),
                5 => {
                    let mut b = island(seed, island_ticks);
                    let k = b.len() / 2;
                    b[k] ^= 0x10;
                    (b, Expect::Refused, "bit flip")
                }
                6 => {
                    let mut b = island(seed, island_ticks);
                    b.truncate(b.len() * 2 / 3);
                    (b, Expect::Refused, "truncated")
                }
                7 => (
                    relabelled(&island(seed, island_ticks), None, Some(99)),
                    Expect::Refused,
                    "wrong version",
                ),
                8 => (
                    relabelled(&island(seed, island_ticks), Some("pong"), None),
                    Expect::Refused,
                    "unknown sim",
                ),
                _ => (
                    format!("not a replay {i}").into_bytes(),
                    Expect::Refused,
                    "garbage",
                ),
            };
            Upload {
                bytes,
                expect,
                kind,
            }
        })
        .collect()
}

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `POST` of a batch body with its content type.
pub fn post_batch(addr: SocketAddr, path: &str, body: &[u8]) -> (u16, String) {
    http_with(
        addr,
        "POST",
        path,
        &["Content-Type: application/x-tickwise-batch"],
        body,
    )
}

/// A minimal HTTP/1.1 exchange on a fresh connection: status and body.
pub fn http(addr: SocketAddr, method: &str, path: &str, body: &[u8]) -> (u16, String) {
    http_with(addr, method, path, &[], body)
}

/// As [`http`], with extra header lines.
pub fn http_with(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[&str],
    body: &[u8],
) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for h in headers {
        head.push_str(h);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).unwrap();
    let _ = s.write_all(body);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    parse_response(&out)
}

/// Status code and body of a raw response (0 if there is none).
pub fn parse_response(raw: &[u8]) -> (u16, String) {
    let text = String::from_utf8_lossy(raw).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

/// A JSON field of a body, as text (strings unquoted).
pub fn field(body: &str, key: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    match v.get(key)? {
        serde_json::Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// A metric's value in a `/metrics` text (the line starting with `name`).
pub fn metric(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in\n{text}"))
}

/// `tickwise_jobs_total` over every outcome: the verdicts a front end counted.
pub fn jobs_total(metrics: &str) -> u64 {
    ["ok", "diverged", "refused"]
        .iter()
        .map(|o| metric(metrics, &format!("tickwise_jobs_total{{outcome=\"{o}\"}}")))
        .sum()
}

/// Polls `GET /v1/replays/{id}` until the status is final or `timeout`.
pub fn wait_verdict(addr: SocketAddr, id: &str, timeout: Duration) -> Option<String> {
    let end = Instant::now() + timeout;
    while Instant::now() < end {
        let (code, body) = http(addr, "GET", &format!("/v1/replays/{id}"), b"");
        if code == 200
            && let Some(s) = field(&body, "status")
            && s != "queued"
            && s != "running"
        {
            return Some(body);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// A private `redis-server` on a free port in a temp dir, append-only
/// file on; stopped (and its dir removed) on drop.
pub struct Redis {
    pub port: u16,
    pub dir: PathBuf,
    child: Option<Child>,
}

/// `redis-server`, or a panic saying how to install it.
pub fn redis_server() -> PathBuf {
    for dir in ["/usr/bin", "/usr/local/bin", "/usr/sbin"] {
        let p = Path::new(dir).join("redis-server");
        if p.is_file() {
            return p;
        }
    }
    panic!(
        "redis-server is not installed: run `bash .ci/setup-redis.sh` (apt-get install redis-server)"
    );
}

impl Redis {
    pub fn start() -> Redis {
        let dir = std::env::temp_dir().join(format!(
            "tickwise-redis-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let mut r = Redis {
            port: free_port(),
            dir,
            child: None,
        };
        r.launch();
        r
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn launch(&mut self) {
        let child = Command::new(redis_server())
            .args([
                "--port",
                &self.port.to_string(),
                "--bind",
                "127.0.0.1",
                "--dir",
                self.dir.to_str().unwrap(),
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--save",
                "",
                "--daemonize",
                "no",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        self.child = Some(child);
        let end = Instant::now() + Duration::from_secs(10);
        // Listening, then done loading its append-only file.
        while self.cli(&["PING"]).trim() != "PONG" {
            assert!(Instant::now() < end, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops Redis politely (SIGTERM: it flushes the append-only file) and
    /// starts it again on the same port and directory.
    pub fn restart(&mut self) {
        self.stop();
        self.launch();
    }

    fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = Command::new("kill").arg(c.id().to_string()).status();
            let _ = c.wait();
        }
    }

    /// A command through `redis-cli`, its output.
    pub fn cli(&self, args: &[&str]) -> String {
        let out = Command::new("redis-cli")
            .args(["-p", &self.port.to_string()])
            .args(args)
            .output()
            .expect("redis-cli");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A test-only sim whose step obeys its input except while recording on
/// this thread: input `n > 0` sleeps `n` ms, input `-99` panics. So the
/// recorded replays are valid, and verifying them makes slow or poison
/// jobs.
#[derive(Clone, Debug)]
pub struct Moody {
    pub ticks: u64,
}

thread_local! {
    static RECORDING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl tickwise::Sim for Moody {
    type Input = i32;
    fn step(&mut self, inputs: &[i32]) {
        let input = &inputs.first().cloned().unwrap_or_default();
        if !RECORDING.with(std::cell::Cell::get) {
            if *input == -99 {
                panic!("moody sim refuses input -99");
            }
            if *input > 0 {
                std::thread::sleep(Duration::from_millis(*input as u64));
            }
        }
        self.ticks += 1;
    }
    fn visit_state(&self, s: &mut dyn tickwise::StateVisitor) {
        s.field("ticks");
        s.value(self.ticks);
    }
}

impl tickwise_catalog::CatalogSim for Moody {
    const ID: &'static str = "moody";
    const VERSION: u32 = 1;
    const DEFAULT_CONFIG: &'static [u8] = b"{}";
    type Config = ();
    type ConfigError = &'static str;
    fn parse_config(_: &[u8]) -> Result<(), &'static str> {
        Ok(())
    }
    fn build(_: &()) -> Moody {
        Moody { ticks: 0 }
    }
    fn seed(_: &()) -> u64 {
        0
    }
    fn clock_config(_: &()) -> tickwise::ClockConfig {
        tickwise::ClockConfig::new(tickwise::StepLength::from_hz(60).unwrap())
    }
    fn work_per_tick(_: &()) -> u64 {
        1
    }
    fn scripted_input(_: u64) -> i32 {
        0
    }
    fn random_input(_: &mut tickwise::Pcg32) -> i32 {
        0
    }
    fn json_input(v: &tickwise_catalog::serde_json::Value) -> Result<i32, String> {
        v.as_i64()
            .and_then(|x| i32::try_from(x).ok())
            .ok_or_else(|| "an integer".into())
    }
}

/// The built-in sims plus [`Moody`].
pub fn moody_catalog() -> Catalog {
    Catalog::builtin().with::<Moody>()
}

/// A moody replay of the given inputs (one per tick).
pub fn moody(inputs: &[i32]) -> Vec<u8> {
    let json = serde_json::to_vec(inputs).unwrap();
    RECORDING.with(|r| r.set(true));
    let bytes = moody_catalog()
        .record(
            "moody",
            None,
            &InputPlan::Json(json),
            inputs.len() as u64,
            1,
        )
        .unwrap()
        .bytes;
    RECORDING.with(|r| r.set(false));
    bytes
}

/// A batch body: each replay as a 4-byte big-endian length and its bytes
/// (framed here by hand, not with the service's own encoder).
pub fn frame(replays: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in replays {
        out.extend_from_slice(&(r.len() as u32).to_be_bytes());
        out.extend_from_slice(r);
    }
    out
}

/// The `replays` array of a batch or many-status answer.
pub fn replays_of(body: &str) -> Vec<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    v["replays"].as_array().cloned().unwrap_or_default()
}

/// One mixed batch (valid island and horde replays, forged ones, bit
/// flips, truncations, garbage, wrong version, unknown sim, and the first
/// replay again at the end): every frame gets its own record with the
/// verdict its construction implies, ids are `b3-` and the BLAKE3 of the bytes, the
/// repeat is the same job. Answers the number of distinct replays sent.
pub fn check_mixed_batch(addr: SocketAddr, seed_offset: usize) -> usize {
    let uploads: Vec<Upload> = corpus(20 + seed_offset, 600, 30).split_off(seed_offset);
    let mut frames: Vec<&[u8]> = uploads.iter().map(|u| u.bytes.as_slice()).collect();
    frames.push(&uploads[0].bytes);
    let (code, body) = post_batch(addr, "/v1/batches?wait=30", &frame(&frames));
    assert_eq!(code, 200, "{body}");
    let got = replays_of(&body);
    assert_eq!(got.len(), frames.len(), "one record per frame: {body}");
    for (i, (r, bytes)) in got.iter().zip(&frames).enumerate() {
        let expect = uploads[i % uploads.len()].expect;
        let kind = uploads[i % uploads.len()].kind;
        assert_eq!(r["id"], job_id(bytes), "frame {i} ({kind})");
        assert_eq!(r["status"], expect.as_str(), "frame {i} ({kind}): {r}");
        if expect == Expect::Diverged {
            assert!(r["firstDivergentTick"].is_u64(), "{r}");
        }
    }
    assert_eq!(got[0], got[frames.len() - 1], "the repeat is the same job");
    // The same verdicts through the many-status read, unknown ids listed.
    let unknown = job_id(b"never uploaded");
    let ids: Vec<String> = got
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    let (code, many) = http(
        addr,
        "GET",
        &format!("/v1/replays?ids={},{unknown}", ids.join(",")),
        b"",
    );
    assert_eq!(code, 200, "{many}");
    let listed = replays_of(&many);
    assert_eq!(listed.len(), uploads.len(), "repeats are listed once");
    assert_eq!(listed[3], got[3]);
    let v: serde_json::Value = serde_json::from_str(&many).unwrap();
    assert_eq!(v["unknown"], serde_json::json!([unknown]));
    // Sent again, the batch answers the stored verdicts at once.
    let (code, again) = post_batch(addr, "/v1/batches", &frame(&frames));
    assert_eq!((code, replays_of(&again)), (200, got));
    uploads.len()
}

/// The job id of `bytes`: `b3-` and their BLAKE3 in hex through `b3sum`,
/// an implementation independent of the service's (Debian package
/// `b3sum`; `bash .ci/setup-base.sh` installs it).
pub fn job_id(bytes: &[u8]) -> String {
    let mut child = Command::new("b3sum")
        .arg("--no-names")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("b3sum (Debian package b3sum: bash .ci/setup-base.sh)");
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    let hex = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert_eq!(hex.len(), 64, "b3sum printed {hex:?}");
    format!("b3-{hex}")
}

/// Batch limits of a front end started with at most 64 KiB per replay,
/// 4 replays per batch and 256 KiB per batch: each refused with its code,
/// the refusals of size while the body is still being sent.
pub fn check_batch_limits(addr: SocketAddr) {
    let small = moody(&[0, 0, 2]);
    // Five replays for a cap of four.
    let five: Vec<&[u8]> = (0..5).map(|_| small.as_slice()).collect();
    let (code, body) = post_batch(addr, "/v1/batches", &frame(&five));
    assert_eq!(code, 413, "{body}");
    assert!(body.contains("more than 4 replays"), "{body}");
    // A frame declaring 1 MB: refused from its length, before its bytes.
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"POST /v1/batches HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-tickwise-batch\r\nContent-Length: 200000\r\n\r\n")
        .unwrap();
    s.write_all(&1_000_000u32.to_be_bytes()).unwrap();
    s.write_all(&[0u8; 100]).unwrap();
    let mut buf = [0u8; 1024];
    let n = s.read(&mut buf).unwrap();
    let (code, body) = parse_response(&buf[..n]);
    assert_eq!(code, 413, "{body}");
    assert!(
        body.contains("replay 0 of the batch declares 1000000 bytes"),
        "{body}"
    );
    // Chunked, frames of 60 KiB: refused once past 256 KiB, while sending.
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(
        b"POST /v1/batches HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-tickwise-batch\r\nTransfer-Encoding: chunked\r\n\r\n",
    )
    .unwrap();
    let one = frame(&[&vec![7u8; 60 * 1024]]);
    let chunk = [
        format!("{:x}\r\n", one.len()).into_bytes(),
        one,
        b"\r\n".to_vec(),
    ]
    .concat();
    s.set_nonblocking(true).unwrap();
    let mut answered = None;
    for sent in 1..=40 {
        let _ = s.write_all(&chunk);
        std::thread::sleep(Duration::from_millis(5));
        let mut buf = [0u8; 1024];
        if let Ok(n) = s.read(&mut buf)
            && n > 0
        {
            answered = Some((parse_response(&buf[..n]), sent));
            break;
        }
    }
    let ((code, body), sent) = answered.expect("an answer before 2.4 MB were sent");
    assert_eq!(code, 413, "{body}");
    assert!(sent <= 6, "refused after {sent} frames of 60 KiB: {body}");
    // A body that stops inside a frame, and an empty one.
    let mut cut = frame(&[&small]);
    cut.truncate(cut.len() - 1);
    assert_eq!(post_batch(addr, "/v1/batches", &cut).0, 400);
    assert_eq!(post_batch(addr, "/v1/batches", b"").0, 400);
    // Too many ids in one read.
    let ids: Vec<String> = (0..5u8).map(|i| job_id(&[i])).collect();
    let (code, _) = http(
        addr,
        "GET",
        &format!("/v1/replays?ids={}", ids.join(",")),
        b"",
    );
    assert_eq!(code, 400);
}
