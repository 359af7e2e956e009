//! What several of the CLI's integration tests share: a `tickwise` server
//! process (`verifyd`, `serve`) on a free port, killed when dropped, and the
//! horde's config with a few keys changed.

#![allow(dead_code, reason = "each test file uses some of these")]

use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A `tickwise` server process, killed (and reaped) when dropped.
pub(crate) struct Server {
    child: Child,
    /// Where it listens, from its banner.
    pub(crate) addr: SocketAddr,
}

impl Server {
    /// `http://HOST:PORT`.
    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Its port.
    pub(crate) fn port(&self) -> u16 {
        self.addr.port()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `tickwise ARGS`, a server whose first line on stdout names its
/// address (`... http://HOST:PORT/ ...`), and waits up to 20 s for it. The
/// rest of its stdout is drained so it never blocks on a full pipe.
pub(crate) fn start(args: &[&str]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tickwise"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("start tickwise {args:?}: {e}"));
    let out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(out).lines();
        if let Some(Ok(l)) = lines.next() {
            let _ = tx.send(l);
        }
        for _ in lines {}
    });
    let line = rx
        .recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("no banner from tickwise {args:?}"));
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    Server { child, addr }
}

/// `config/horde.json` with `enemies` enemies, and `tick_hz` when given.
pub(crate) fn horde_config(tick_hz: Option<u64>, enemies: u64) -> String {
    let mut v: serde_json::Value =
        serde_json::from_slice(include_bytes!("../../../../config/horde.json")).unwrap();
    v["enemies"] = enemies.into();
    if let Some(hz) = tick_hz {
        v["tickHz"] = hz.into();
    }
    v.to_string()
}
