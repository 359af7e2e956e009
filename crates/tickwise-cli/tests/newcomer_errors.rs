//! Error messages where a newcomer following the README stalled (issue 22,
//! item 7), through the real binary: each says what to do next.

use std::process::{Command, Output};

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
