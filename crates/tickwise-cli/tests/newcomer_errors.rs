//! Error messages where a newcomer following the README stalled (issue 22,
//! item 7), through the real binary: each says what to do next.

use std::process::{Command, Output};

mod servers;
#[path = "../../tickwise-service/tests/support/mod.rs"]
mod support;

fn tickwise(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tickwise"))
        .args(args)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A loopback port with nothing listening on it (bound, then released).
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// `verifyd --queue redis://…` and `worker` with no Redis there said only
/// "queue backend error: Connection refused". They now say how to start
/// one, and that `--queue memory` needs none.
#[test]
fn redis_refused_says_how_to_start_it_or_use_the_memory_queue() {
    let port = closed_port();
    let url = format!("redis://127.0.0.1:{port}");
    let bind = format!("127.0.0.1:{}", closed_port());
    for args in [
        vec!["verifyd", "--bind", bind.as_str(), "--queue", url.as_str()],
        vec!["worker", "--redis", url.as_str()],
    ] {
        let o = tickwise(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        assert!(err.contains("Connection refused"), "{args:?}: {err}");
        assert!(
            err.contains(&format!("no Redis is listening at {url}")),
            "{args:?}: {err}"
        );
        assert!(
            err.contains(&format!("redis-server --port {port} --daemonize yes")),
            "{args:?}: {err}"
        );
        assert!(err.contains("--queue memory"), "{args:?}: {err}");
    }
}

/// `lab --seconds 1 --hz 30` printed "0 of 9 pass, UNEXPECTED" and exit 1:
/// one second is 30 steps, too few for the lab's 1 % test. It is refused
/// (exit 2) with the shortest run that works at that rate: ceil(100 / 30) = 4 s.
#[test]
fn lab_refuses_a_run_too_short_for_its_tolerance() {
    let o = tickwise(&["lab", "--seconds", "1", "--hz", "30", "--no-report"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(err.contains("the shortest run at 30 Hz is 4 s"), "{err}");
    assert!(err.contains("--seconds 4"), "{err}");
    assert!(!String::from_utf8_lossy(&o.stdout).contains("UNEXPECTED"));
    let o = tickwise(&["lab", "--seconds", "4", "--hz", "30", "--no-report"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
}

/// `loadtest --generate N --seconds S`: generating the replays is timed and
/// reported apart (`generated … in … s, before the S s of the run`;
/// `generated` and `generateSeconds` in JSON), never inside the S seconds.
#[test]
fn loadtest_reports_generation_apart_from_the_measured_seconds() {
    let service = servers::start(&["verifyd", "--bind", "127.0.0.1:0"]);
    let url = service.url();
    let args = |json: bool| {
        let mut a = vec![
            "loadtest",
            "--url",
            url.as_str(),
            "--generate",
            "4",
            "--sim",
            "island",
            "--ticks",
            "5000",
            "--seconds",
            "30",
        ];
        if json {
            a.push("--json");
        }
        tickwise(&a)
    };
    let o = args(false);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    let first = out.lines().next().unwrap_or("");
    assert!(
        first.starts_with("generated 4 replays (20000 ticks) in ")
            && first.ends_with(" s, before the 30 s of the run"),
        "{out}"
    );
    assert!(
        out.contains("4 ok, 0 diverged, 0 refused, 0 errors"),
        "{out}"
    );
    let o = args(true);
    let v: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
    assert_eq!(
        (v["generated"].as_u64(), v["ok"].as_u64()),
        (Some(4), Some(4)),
        "{v}"
    );
    assert!(
        v["generateSeconds"].as_f64().is_some_and(|s| s >= 0.0),
        "{v}"
    );
}

/// `--io-threads` (verifyd, worker, loadtest): 0 is refused by name before
/// anything starts; one executor thread on each side serves and loads.
#[test]
fn io_threads_zero_is_refused_and_one_thread_serves() {
    for cmd in [
        vec!["verifyd", "--bind", "127.0.0.1:0", "--io-threads", "0"],
        vec![
            "worker",
            "--redis",
            "redis://127.0.0.1:1",
            "--io-threads",
            "0",
        ],
        vec!["loadtest", "--generate", "1", "--io-threads", "0"],
    ] {
        let o = tickwise(&cmd);
        assert_eq!(o.status.code(), Some(2), "{cmd:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("--io-threads"),
            "{cmd:?}: {}",
            stderr(&o)
        );
    }
    let service = servers::start(&["verifyd", "--bind", "127.0.0.1:0", "--io-threads", "1"]);
    load_three_island_replays(&service.url(), &["--io-threads", "1"]);
}

/// `loadtest` of three generated 2000-tick island replays (80 000 work
/// units each) against `url`: every one verified `ok`.
fn load_three_island_replays(url: &str, extra: &[&str]) {
    let mut args = vec![
        "loadtest",
        "--url",
        url,
        "--generate",
        "3",
        "--sim",
        "island",
        "--ticks",
        "2000",
        "--seconds",
        "30",
    ];
    args.extend_from_slice(extra);
    let o = tickwise(&args);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(
        out.contains("3 ok, 0 diverged, 0 refused, 0 errors"),
        "{out}"
    );
}

/// `--inline-work`: refused with the Redis queue, where workers verify and
/// it could do nothing, and with fewer `--io-threads` than cores; with the
/// embedded queue and the default threads, `loadtest`'s lone uploads
/// (each waiting for its verdict) are verified by the thread that received
/// them, and `/metrics` counts them.
#[test]
fn inline_work_applies_to_the_embedded_queue() {
    let o = tickwise(&[
        "verifyd",
        "--bind",
        "127.0.0.1:0",
        "--queue",
        "redis://127.0.0.1:1",
        "--inline-work",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--inline-work applies to the embedded queue"),
        "{}",
        stderr(&o)
    );
    // Verifying on one executor thread of two cores would idle the other.
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    assert!(cores >= 2, "this test needs two cores, found {cores}");
    let o = tickwise(&[
        "verifyd",
        "--bind",
        "127.0.0.1:0",
        "--inline-work",
        "1",
        "--io-threads",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("--io-threads of at least the {cores} cores")),
        "{}",
        stderr(&o)
    );
    let service = servers::start(&["verifyd", "--bind", "127.0.0.1:0", "--inline-work", "80000"]);
    load_three_island_replays(&service.url(), &[]);
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], service.port()));
    let (code, m) = support::http(addr, "GET", "/metrics", b"");
    assert_eq!(code, 200, "{m}");
    assert_eq!(
        support::metric(&m, "tickwise_inline_verifications_total"),
        3,
        "{m}"
    );
}
