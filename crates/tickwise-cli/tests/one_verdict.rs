//! Issue 19, part 1: one verdict. `tickwise verify --json` and the
//! verification service (`tickwise verifyd`, its job status) print the
//! catalog's verdict as it is, so they agree field for field, and an
//! old-version replay is `refused: version` in both, never lumped with
//! corrupt files.

#[path = "../../tickwise-service/tests/support/mod.rs"]
mod support;

mod servers;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use support::{http, wait_verdict};
use tickwise::{Replay, ReplayLimits};

const BIN: &str = env!("CARGO_BIN_EXE_tickwise");

fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn tickwise(args: &[&str]) -> std::process::Output {
    Command::new(BIN).args(args).output().expect("run tickwise")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The `verify --json` line of one file, without the CLI's own keys.
fn cli_verdict(path: &Path) -> Value {
    let o = tickwise(&["verify", "--json", s(path)]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let mut line: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let map = line.as_object_mut().unwrap();
    assert_eq!(map.remove("type"), Some(Value::from("replay")));
    assert_eq!(map.remove("path"), Some(Value::from(s(path))));
    line
}

/// The service's job record for the same bytes, once final.
fn service_record(addr: SocketAddr, bytes: &[u8]) -> Value {
    let (code, body) = http(addr, "POST", "/v1/replays", bytes);
    assert!(code == 200 || code == 202, "{code} {body}");
    let id: Value = serde_json::from_str(&body).unwrap();
    let id = id["id"].as_str().unwrap().to_string();
    let body = wait_verdict(addr, &id, Duration::from_secs(60)).expect("a verdict");
    serde_json::from_str(&body).unwrap()
}

#[test]
fn verify_json_and_the_service_agree_field_for_field_on_five_cases() {
    let d = scratch("one_verdict");
    let good = d.join("good.twr");
    let o = tickwise(&[
        "record",
        "--sim",
        "island",
        "--ticks",
        "200",
        "--checkpoint-every",
        "50",
        "--out",
        s(&good),
    ]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let bytes = std::fs::read(&good).unwrap();

    // Diverged: the island's scripted input at tick 60 is -1 (twenty ticks
    // right, twenty left: ticks 40..60 right, 60..80 left, so 60 is left);
    // make it 1. The state first differs after tick 61, so checkpoint 2 at
    // tick 100 is the first to fail, with the last match at tick 50.
    let replay = Replay::<i32>::from_bytes(&bytes, &ReplayLimits::DEFAULT).unwrap();
    let mut inputs: Vec<i32> = replay.inputs(0).copied().collect();
    assert_eq!(inputs[60], -1, "the recorded input");
    inputs[60] = 1;
    let mut parts = replay.into_parts();
    parts.set_inputs(0, inputs);
    let diverged = d.join("diverged.twr");
    std::fs::write(&diverged, Replay::from_parts(parts).unwrap().to_bytes()).unwrap();

    // Refused as corrupt: one byte of the body flipped (the checksum fails).
    let mut broken = bytes.clone();
    let mid = broken.len() / 2;
    broken[mid] ^= 0x55;
    let corrupt = d.join("corrupt.twr");
    std::fs::write(&corrupt, &broken).unwrap();

    // Refused for version: a replay of horde version 2 (this build runs 3).
    let version = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tickwise-catalog/tests/fixtures/horde_v2_format4.twr");

    // Refused for a limit: a small horde replay whose embedded config
    // claims a million enemies, over the default work limit of 60e9 units.
    let small = d.join("small.json");
    std::fs::write(&small, servers::horde_config(None, 10)).unwrap();
    let h = d.join("h.twr");
    let o = tickwise(&[
        "record",
        "--sim",
        "horde",
        "--config",
        s(&small),
        "--ticks",
        "1999",
        "--out",
        s(&h),
    ]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let hb = std::fs::read(&h).unwrap();
    let mut parts = Replay::<tickwise::TickInput>::from_bytes(&hb, &ReplayLimits::DEFAULT)
        .unwrap()
        .into_parts();
    parts.header.config = servers::horde_config(None, 1_000_000).into_bytes();
    let limit = d.join("limit.twr");
    std::fs::write(&limit, Replay::from_parts(parts).unwrap().to_bytes()).unwrap();

    let service = servers::start(&["verifyd", "--bind", "127.0.0.1:0", "--queue", "memory"]);
    // (file, status, reason, the service's job status)
    let cases = [
        (&good, "ok", None, "ok"),
        (&diverged, "diverged", None, "diverged"),
        (&version, "refused", Some("version"), "refused"),
        (&corrupt, "refused", Some("corrupt"), "refused"),
        (&limit, "refused", Some("limit"), "refused"),
    ];
    for (path, status, reason, job_status) in cases {
        let cli = cli_verdict(path);
        let record = service_record(service.addr, &std::fs::read(path).unwrap());
        assert_eq!(cli["status"], status, "{path:?}: {cli}");
        assert_eq!(
            cli["reason"],
            reason.map_or(Value::Null, Value::from),
            "{cli}"
        );
        assert_eq!(record["status"], job_status, "{record}");
        // The job's reason is the verdict's, never a bucket of its own.
        assert_eq!(record["reason"], cli["reason"], "{record}");
        assert_eq!(record["verdict"], cli, "{path:?}: service vs verify --json");
        // The job's own fields say the same as its verdict.
        assert_eq!(record["error"], cli["error"], "{record}");
    }

    // What each verdict says, from the files' making rather than the code.
    let ok = cli_verdict(&good);
    assert_eq!(
        (
            &ok["sim"],
            &ok["simVersion"],
            &ok["players"],
            &ok["ticks"],
            &ok["ticksRun"]
        ),
        (
            &"island".into(),
            &1.into(),
            &1.into(),
            &200.into(),
            &200.into()
        )
    );
    assert!(ok["error"].is_null() && ok["divergence"].is_null(), "{ok}");
    let div = cli_verdict(&diverged);
    assert_eq!(div["divergence"]["checkpoint"], 2, "{div}");
    assert_eq!(div["divergence"]["tick"], 100, "{div}");
    assert_eq!(div["divergence"]["lastGoodTick"], 50, "{div}");
    let old = cli_verdict(&version);
    assert_eq!(
        (&old["sim"], &old["simVersion"]),
        (&"horde".into(), &2.into())
    );
    assert_eq!(
        old["error"],
        "replay was recorded by horde version 2; this build runs version 3"
    );
    let lim = cli_verdict(&limit);
    assert!(
        lim["error"]
            .as_str()
            .unwrap()
            .starts_with("running 1999 ticks at 139652340 work units each"),
        "{lim}"
    );
    assert_eq!(cli_verdict(&corrupt)["sim"], Value::Null);

    // The text output names the reason too, and the flag for a limit.
    let o = tickwise(&["verify", s(&version), s(&limit)]);
    assert_eq!(o.status.code(), Some(2));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("REFUSED") && out.contains(": version: replay was recorded"),
        "{out}"
    );
    assert!(
        out.contains(": limit: running 1999 ticks") && out.contains("(raise it with --max-work)"),
        "{out}"
    );
}
