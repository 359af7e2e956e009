//! The HTTP front end with the embedded queue, in process: the API, its
//! verdicts for every kind of upload, and hostile clients (slow heads and
//! bodies, oversized uploads, a full queue).

mod support;

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use support::*;
use tickwise::ReplayLimits;
use tickwise_catalog::Catalog;
use tickwise_service::{ApiLimits, ConnLimits, JobId, MemoryConfig, QueueChoice, VerifydConfig};

/// A running in-process `verifyd`; stops when dropped.
struct Server {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn start(catalog: Catalog, memory: MemoryConfig, api: ApiLimits, conn: ConnLimits) -> Server {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let config = VerifydConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        queue: QueueChoice::Memory(memory),
        api,
        conn,
        replay: ReplayLimits::DEFAULT,
    };
    let thread = std::thread::spawn(move || {
        tickwise_service::block_on(tickwise_service::verifyd(
            Arc::new(catalog),
            config,
            move |a| addr_tx.send(a).unwrap(),
            async move {
                let _ = rx.await;
            },
        ))
        .unwrap()
        .unwrap();
    });
    let addr = addr_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    Server {
        addr,
        stop: Some(tx),
        thread: Some(thread),
    }
}

fn default_server() -> Server {
    start(
        Catalog::builtin(),
        MemoryConfig {
            jobs: 2,
            ..MemoryConfig::default()
        },
        ApiLimits::default(),
        ConnLimits::default(),
    )
}

#[test]
fn every_kind_of_upload_gets_its_verdict_and_uploads_are_idempotent() {
    let server = default_server();
    let uploads = corpus(60, 600, 30);
    let mut ids = Vec::new();
    for u in &uploads {
        let (code, body) = http(server.addr, "POST", "/v1/replays", &u.bytes);
        assert!(code == 202 || code == 200, "{} -> {code} {body}", u.kind);
        let id = field(&body, "id").unwrap();
        assert_eq!(
            id,
            job_id(&u.bytes),
            "the id is b3- and the BLAKE3 of the bytes"
        );
        ids.push(id);
    }
    for (u, id) in uploads.iter().zip(&ids) {
        let body = wait_verdict(server.addr, id, Duration::from_secs(60)).expect("a verdict");
        assert_eq!(
            field(&body, "status").unwrap(),
            u.expect.as_str(),
            "{}: {body}",
            u.kind
        );
        match u.expect {
            Expect::Ok => {
                assert_eq!(
                    field(&body, "digest"),
                    field(&body, "claimedDigest"),
                    "{body}"
                );
                assert!(field(&body, "sim").is_some());
            }
            Expect::Diverged => {
                assert!(field(&body, "firstDivergentTick").is_some(), "{body}");
                // The claim is read from the file, even when re-simulation
                // stopped at an early checkpoint.
                let claimed = field(&body, "claimedDigest").expect("a claimed digest");
                assert!(!claimed.is_empty(), "{body}");
            }
            Expect::Refused => assert!(field(&body, "error").is_some(), "{body}"),
        }
        // The same bytes again: the stored verdict, not a new job.
        let (code, again) = http(server.addr, "POST", "/v1/replays", &u.bytes);
        assert_eq!(code, 200, "{again}");
        assert_eq!(again, body);
    }
    let (_, m) = http(server.addr, "GET", "/metrics", b"");
    assert_eq!(jobs_total(&m), 60, "one verdict per distinct upload:\n{m}");
}

#[test]
fn wait_answers_with_the_verdict_and_unknown_ids_are_404() {
    let server = default_server();
    let u = &corpus(1, 3000, 30)[0];
    let (code, body) = http(server.addr, "POST", "/v1/replays?wait=20", &u.bytes);
    assert_eq!(
        (code, field(&body, "status").as_deref()),
        (200, Some("ok")),
        "{body}"
    );
    assert_eq!(field(&body, "ticks").as_deref(), Some("3000"));
    let unknown = JobId::of(b"never uploaded").to_string();
    assert_eq!(
        http(server.addr, "GET", &format!("/v1/replays/{unknown}"), b"").0,
        404
    );
    assert_eq!(http(server.addr, "GET", "/v1/replays/nothex", b"").0, 404);
    assert_eq!(
        http(server.addr, "POST", "/v1/replays?wait=soon", &u.bytes).0,
        400
    );
    assert_eq!(http(server.addr, "GET", "/nowhere", b"").0, 404);
    let (code, health) = http(server.addr, "GET", "/healthz", b"");
    assert_eq!(
        (code, field(&health, "queue").as_deref()),
        (200, Some("memory"))
    );
}

/// `sha256sum`'s hex digest of `bytes`: the job id of the form before
/// the `b3-` ids.
fn sha256_hex(bytes: &[u8]) -> String {
    let mut child = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("sha256sum");
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout)[..64].to_string()
}

#[test]
fn ids_are_blake3_and_the_old_sha256_ids_are_gone_with_a_reason() {
    let server = default_server();
    let u = &corpus(2, 600, 30)[0];
    let (code, body) = http(server.addr, "POST", "/v1/replays?wait=20", &u.bytes);
    assert_eq!(code, 200, "{body}");
    let id = job_id(&u.bytes);
    assert_eq!(field(&body, "id").as_deref(), Some(id.as_str()), "{body}");
    let (code, again) = http(server.addr, "GET", &format!("/v1/replays/{id}"), b"");
    assert_eq!((code, again), (200, body));
    // The id a client of the SHA-256 service holds for the same upload.
    let old = sha256_hex(&u.bytes);
    for path in [
        format!("/v1/replays/{old}"),
        format!("/v1/replays?ids={id},{old}"),
    ] {
        let (code, answer) = http(server.addr, "GET", &path, b"");
        assert_eq!(code, 410, "{path}: {answer}");
        let error = field(&answer, "error").unwrap_or_default();
        assert!(
            error.contains(&old) && error.contains("upload the replay again"),
            "{path}: {answer}"
        );
    }
    // A malformed id in a list is a bad request, naming what an id is.
    let (code, answer) = http(server.addr, "GET", "/v1/replays?ids=b3-12", b"");
    assert_eq!(code, 400, "{answer}");
    assert!(answer.contains("64 lowercase hex digits"), "{answer}");
}

#[test]
fn wall_clock_header_flags_implausible_sessions() {
    let server = default_server();
    // 3600 island ticks at 16 ms = 57.6 s simulated.
    let bytes = corpus(1, 3600, 30)[0].bytes.clone();
    let ask = |session: u64, bytes: &[u8]| {
        let h = format!("Tickwise-Session-Ms: {session}");
        let (code, body) = http_with(server.addr, "POST", "/v1/replays?wait=20", &[&h], bytes);
        assert_eq!(code, 200, "{body}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        v["wallClock"]["verdict"].as_str().unwrap().to_string()
    };
    assert_eq!(ask(58_000, &bytes), "plausible");
    // Same replay content would share the id (first header wins), so each
    // case uses a replay of its own.
    let other = corpus(2, 3600, 30)[1].bytes.clone();
    assert_eq!(ask(20_000, &other), "too-fast");
    let third = Catalog::builtin()
        .record(
            "island",
            None,
            &tickwise_catalog::InputPlan::Random(77),
            3600,
            60,
        )
        .unwrap()
        .bytes;
    assert_eq!(ask(600_000, &third), "too-slow");
    let (code, _) = http_with(
        server.addr,
        "POST",
        "/v1/replays",
        &["Tickwise-Session-Ms: soon"],
        &bytes,
    );
    assert_eq!(code, 400);
}

#[test]
fn oversized_uploads_are_refused_before_the_body_is_read() {
    let server = start(
        Catalog::builtin(),
        MemoryConfig::default(),
        ApiLimits {
            max_upload_bytes: 64 * 1024,
            ..ApiLimits::default()
        },
        ConnLimits::default(),
    );
    // A declared 100 MB body: the answer comes after 1 KB of it was sent.
    let mut s = TcpStream::connect(server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(
        b"POST /v1/replays HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000000\r\n\r\n",
    )
    .unwrap();
    s.write_all(&[0u8; 1024]).unwrap();
    let mut buf = [0u8; 512];
    let n = s.read(&mut buf).unwrap();
    assert_eq!(parse_response(&buf[..n]).0, 413);

    // Chunked, no length: refused once past the limit, while still sending.
    let mut s = TcpStream::connect(server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(
        b"POST /v1/replays HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n",
    )
    .unwrap();
    let chunk = format!("{:x}\r\n{}\r\n", 16 * 1024, "x".repeat(16 * 1024));
    let mut sent = 0;
    let mut answered = None;
    s.set_nonblocking(true).unwrap();
    while sent < 100 {
        let _ = s.write_all(chunk.as_bytes());
        sent += 1;
        let mut buf = [0u8; 512];
        if let Ok(n) = s.read(&mut buf)
            && n > 0
        {
            answered = Some((parse_response(&buf[..n]).0, sent));
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let (code, chunks) = answered.expect("an answer before 1.6 MB were sent");
    assert_eq!(code, 413);
    assert!(chunks < 100, "refused after {chunks} chunks of 16 KiB");
}

#[test]
fn slow_clients_cannot_hold_the_service() {
    let conn = ConnLimits {
        max_connections: 6,
        header_deadline: Duration::from_millis(800),
        request_deadline: Duration::from_secs(10),
        connection_lifetime: Duration::from_secs(30),
        ..ConnLimits::default()
    };
    let api = ApiLimits {
        body_deadline: Duration::from_millis(800),
        ..ApiLimits::default()
    };
    let server = start(Catalog::builtin(), MemoryConfig::default(), api, conn);
    let addr = server.addr;
    // Twice the connection cap, half trickling a head, half a body, one
    // byte every 100 ms.
    let trickle = |body: bool| {
        std::thread::spawn(move || {
            let mut s = TcpStream::connect(addr).unwrap();
            s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
            let start = Instant::now();
            let mut prefix: Vec<u8> = if body {
                b"POST /v1/replays HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n"
                    .to_vec()
            } else {
                Vec::new()
            };
            let _ = s.write_all(&prefix);
            prefix.clear();
            let mut reply = Vec::new();
            loop {
                if s.write_all(if body { b"x" } else { b"G" }).is_err() {
                    break;
                }
                let mut buf = [0u8; 256];
                match s.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => reply.extend_from_slice(&buf[..n]),
                    Err(_) => {}
                }
                if start.elapsed() > Duration::from_secs(8) {
                    return (start.elapsed(), None);
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            (start.elapsed(), Some(parse_response(&reply).0))
        })
    };
    let slow: Vec<_> = (0..12).map(|i| trickle(i % 2 == 1)).collect();
    std::thread::sleep(Duration::from_millis(200));
    // A normal request still gets through, within about one deadline.
    let t = Instant::now();
    let (code, _) = http(addr, "GET", "/healthz", b"");
    assert_eq!(code, 200);
    assert!(
        t.elapsed() < Duration::from_secs(4),
        "healthz took {:?}",
        t.elapsed()
    );
    for h in slow {
        let (held, status) = h.join().unwrap();
        assert!(
            status.is_some(),
            "a slow client held its connection for {held:?}"
        );
        assert!(held < Duration::from_secs(5), "held {held:?}");
    }
}

#[test]
fn a_full_queue_answers_429_with_retry_after() {
    let server = start(
        moody_catalog(),
        MemoryConfig {
            jobs: 1,
            capacity: 2,
            max_results: 100,
            ..MemoryConfig::default()
        },
        ApiLimits::default(),
        ConnLimits::default(),
    );
    // Three slow jobs (300 ms each) for a queue of two.
    let jobs: Vec<Vec<u8>> = (0..3).map(|i| moody(&[300, i])).collect();
    assert_eq!(http(server.addr, "POST", "/v1/replays", &jobs[0]).0, 202);
    assert_eq!(http(server.addr, "POST", "/v1/replays", &jobs[1]).0, 202);
    let mut s = TcpStream::connect(server.addr).unwrap();
    let head = format!(
        "POST /v1/replays HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        jobs[2].len()
    );
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(&jobs[2]).unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    assert!(raw.starts_with("HTTP/1.1 429 "), "{raw}");
    assert!(
        raw.to_ascii_lowercase().contains("\r\nretry-after: 1\r\n"),
        "{raw}"
    );
    // Once the queue drains, the same upload is accepted.
    let id = JobId::of(&jobs[0]).to_string();
    wait_verdict(server.addr, &id, Duration::from_secs(10)).unwrap();
    let (code, body) = http(server.addr, "POST", "/v1/replays?wait=10", &jobs[2]);
    assert_eq!(
        (code, field(&body, "status").as_deref()),
        (200, Some("ok")),
        "{body}"
    );
}

#[test]
fn a_panicking_sim_is_retried_then_dead_lettered_and_the_service_lives_on() {
    let server = start(
        moody_catalog(),
        MemoryConfig {
            jobs: 1,
            ..MemoryConfig::default()
        },
        ApiLimits::default(),
        ConnLimits::default(),
    );
    let poison = moody(&[0, -99, 0]);
    let (code, body) = http(server.addr, "POST", "/v1/replays?wait=20", &poison);
    assert_eq!(code, 200, "{body}");
    assert_eq!(field(&body, "status").as_deref(), Some("refused"));
    assert_eq!(
        field(&body, "reason").as_deref(),
        Some("dead-letter"),
        "{body}"
    );
    assert_eq!(field(&body, "attempts").as_deref(), Some("5"));
    assert!(
        field(&body, "error")
            .unwrap()
            .contains("dead-lettered after 5 deliveries"),
        "{body}"
    );
    let (_, m) = http(server.addr, "GET", "/metrics", b"");
    assert_eq!(metric(&m, "tickwise_dead_letters_total"), 1);
    assert_eq!(metric(&m, "tickwise_redeliveries_total"), 4);
    let fine = moody(&[0, 0, 1]);
    let (code, body) = http(server.addr, "POST", "/v1/replays?wait=20", &fine);
    assert_eq!(
        (code, field(&body, "status").as_deref()),
        (200, Some("ok")),
        "{body}"
    );
}

/// Many clients at once, each uploading one replay after another and
/// waiting for its verdict, while batches arrive too: every request is
/// answered with its final verdict within the wait. An upload wakes only
/// verification threads that sleep; one that counted them wrong would leave
/// a job queued with every thread asleep, and its request would run out of
/// time with `202`.
#[test]
fn bursts_of_uploads_from_many_clients_all_get_their_verdicts() {
    burst(&default_server());
}

/// The burst again with inline verification on for every small job: lone
/// uploads verified on the threads that received them, batches queued
/// beside them, every request still answered with its verdict.
#[test]
fn bursts_with_inline_verification_all_get_their_verdicts() {
    let server = start(
        Catalog::builtin(),
        MemoryConfig {
            jobs: 2,
            inline_work: u64::MAX,
            ..MemoryConfig::default()
        },
        ApiLimits::default(),
        ConnLimits::default(),
    );
    burst(&server);
    let (_, m) = http(server.addr, "GET", "/metrics", b"");
    assert!(
        metric(&m, "tickwise_inline_verifications_total") > 0,
        "some lone upload found no small job waiting:\n{m}"
    );
}

fn burst(server: &Server) {
    let uploads = Arc::new(corpus(96, 300, 20));
    let addr = server.addr;
    let clients: Vec<_> = (0..12)
        .map(|c| {
            let uploads = Arc::clone(&uploads);
            std::thread::spawn(move || {
                for u in uploads.iter().skip(c).step_by(12).take(6) {
                    let (code, body) = http(addr, "POST", "/v1/replays?wait=30", &u.bytes);
                    assert_eq!(code, 200, "{}: {body}", u.kind);
                    assert_eq!(field(&body, "status").unwrap(), u.expect.as_str(), "{body}");
                }
            })
        })
        .collect();
    for chunk in uploads[72..].chunks(8) {
        let refs: Vec<&[u8]> = chunk.iter().map(|u| &u.bytes[..]).collect();
        let (code, body) = post_batch(addr, "/v1/batches?wait=30", &frame(&refs));
        assert_eq!(code, 200, "{body}");
        let got = replays_of(&body);
        assert_eq!(got.len(), chunk.len(), "{body}");
        for (u, r) in chunk.iter().zip(&got) {
            assert_eq!(r["status"].as_str(), Some(u.expect.as_str()), "{body}");
        }
    }
    for c in clients {
        c.join().unwrap();
    }
}

/// Inline verification (`MemoryConfig::inline_work`): a lone upload that
/// waits, within the limit, is verified by the thread that received it and
/// answered with its verdict; one over the limit, one that does not wait
/// and a batch are queued. Each verdict is the one its upload was made to
/// get, and the counter tells the two paths apart.
#[test]
fn lone_waiting_uploads_within_the_limit_are_verified_inline() {
    // 600 island ticks are 24 000 work units; 3000 are 120 000.
    let server = start(
        Catalog::builtin(),
        MemoryConfig {
            jobs: 1,
            inline_work: 30_000,
            ..MemoryConfig::default()
        },
        ApiLimits::default(),
        ConnLimits::default(),
    );
    let inline = || {
        let (_, m) = http(server.addr, "GET", "/metrics", b"");
        (
            metric(&m, "tickwise_inline_verifications_total"),
            jobs_total(&m),
        )
    };
    let small = corpus(4, 600, 30);
    let (ok, forged) = (&small[0], &small[3]);
    assert_eq!((ok.expect, forged.expect), (Expect::Ok, Expect::Diverged));
    for (n, u) in [ok, forged].into_iter().enumerate() {
        let (code, body) = http(server.addr, "POST", "/v1/replays?wait=20", &u.bytes);
        assert_eq!(code, 200, "{body}");
        assert_eq!(field(&body, "status").unwrap(), u.expect.as_str(), "{body}");
        assert_eq!(field(&body, "attempts").as_deref(), Some("1"), "{body}");
        assert_eq!(inline(), (n as u64 + 1, n as u64 + 1));
    }
    // The same bytes again: the stored verdict, nothing verified.
    let (code, _) = http(server.addr, "POST", "/v1/replays?wait=20", &ok.bytes);
    assert_eq!((code, inline()), (200, (2, 2)));
    // Over the limit, not waiting, in a batch: queued.
    let big = &corpus(1, 3000, 30)[0];
    let (code, body) = http(server.addr, "POST", "/v1/replays?wait=20", &big.bytes);
    assert_eq!((code, field(&body, "status").as_deref()), (200, Some("ok")));
    let other = &corpus(2, 600, 30)[1];
    let (code, body) = http(server.addr, "POST", "/v1/replays", &other.bytes);
    assert_eq!(code, 202, "{body}");
    let id = field(&body, "id").unwrap();
    let body = wait_verdict(server.addr, &id, Duration::from_secs(20)).expect("a verdict");
    assert_eq!(field(&body, "status").as_deref(), Some("ok"), "{body}");
    let batch = corpus(12, 600, 30);
    let refs = [&batch[10].bytes[..], &batch[11].bytes[..]];
    let (code, body) = post_batch(server.addr, "/v1/batches?wait=20", &frame(&refs));
    assert_eq!(code, 200, "{body}");
    assert_eq!(inline(), (2, 6));
}

/// A job verified inline that fails is queued again like any other: its
/// retries go to a verification thread, and after the last it is
/// dead-lettered, the waiting request answered with that.
#[test]
fn an_inline_job_that_fails_is_retried_by_the_queue() {
    let server = start(
        moody_catalog(),
        MemoryConfig {
            jobs: 1,
            inline_work: u64::MAX,
            ..MemoryConfig::default()
        },
        ApiLimits::default(),
        ConnLimits::default(),
    );
    let (code, body) = http(
        server.addr,
        "POST",
        "/v1/replays?wait=20",
        &moody(&[0, -99, 0]),
    );
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        field(&body, "reason").as_deref(),
        Some("dead-letter"),
        "{body}"
    );
    assert_eq!(field(&body, "attempts").as_deref(), Some("5"), "{body}");
    let (_, m) = http(server.addr, "GET", "/metrics", b"");
    assert_eq!(metric(&m, "tickwise_inline_verifications_total"), 1, "{m}");
    assert_eq!(metric(&m, "tickwise_redeliveries_total"), 4, "{m}");
    assert_eq!(metric(&m, "tickwise_dead_letters_total"), 1, "{m}");
}

#[test]
fn a_mixed_batch_gets_one_verdict_per_replay_and_repeats_are_one_job() {
    let server = default_server();
    let distinct = check_mixed_batch(server.addr, 0);
    let (_, m) = http(server.addr, "GET", "/metrics", b"");
    assert_eq!(
        jobs_total(&m),
        distinct as u64,
        "one verdict per distinct replay:\n{m}"
    );
    assert_eq!(metric(&m, "tickwise_batches_total"), 2, "{m}");
}

#[test]
fn batch_limits_are_checked_while_receiving() {
    let server = start(
        moody_catalog(),
        MemoryConfig::default(),
        ApiLimits {
            max_upload_bytes: 64 * 1024,
            max_batch_replays: 4,
            max_batch_bytes: 256 * 1024,
            ..ApiLimits::default()
        },
        ConnLimits::default(),
    );
    check_batch_limits(server.addr);
    let (_, m) = http(server.addr, "GET", "/metrics", b"");
    assert_eq!(metric(&m, "tickwise_batches_total"), 0, "{m}");
}

#[test]
fn a_batch_that_does_not_fit_the_queue_is_refused_whole() {
    let server = start(
        moody_catalog(),
        MemoryConfig {
            jobs: 1,
            capacity: 3,
            max_results: 100,
            ..MemoryConfig::default()
        },
        ApiLimits::default(),
        ConnLimits::default(),
    );
    let jobs: Vec<Vec<u8>> = (0..4).map(|i| moody(&[200, i])).collect();
    let refs: Vec<&[u8]> = jobs.iter().map(Vec::as_slice).collect();
    let (code, body) = post_batch(server.addr, "/v1/batches", &frame(&refs));
    assert_eq!(code, 429, "{body}");
    // Nothing of it was queued: a batch of three fits, and all get verdicts.
    let (code, body) = post_batch(server.addr, "/v1/batches?wait=20", &frame(&refs[..3]));
    assert_eq!(code, 200, "{body}");
    assert!(
        replays_of(&body).iter().all(|r| r["status"] == "ok"),
        "{body}"
    );
}
