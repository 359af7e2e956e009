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
