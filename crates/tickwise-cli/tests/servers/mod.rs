//! What several of the CLI's integration tests share: a `tickwise` server
//! process (`verifyd`, `serve`) on a free port, killed when dropped, and the
//! horde's config with a few keys changed.

#![allow(dead_code, reason = "each test file uses some of these")]

use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A `tickwise` process, killed (SIGKILL) and reaped when dropped.
pub(crate) struct Proc(pub(crate) Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A `tickwise` server process, killed (and reaped) when dropped.
pub(crate) struct Server {
    _proc: Proc,
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

/// Starts `tickwise ARGS` and waits up to 20 s for its first line on stdout;
/// returns the process and the address that line names
/// (`... http://HOST:PORT/ ...`), if any. The rest of its stdout is drained
/// so it never blocks on a full pipe.
pub(crate) fn spawn(args: &[&str]) -> (Proc, Option<SocketAddr>) {
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
        .unwrap_or_else(|_| panic!("no start-up line from tickwise {args:?}"));
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .and_then(|a| a.parse().ok());
    (Proc(child), addr)
}

/// Starts `tickwise ARGS`, a server whose first line on stdout names its
/// address, and waits up to 20 s for it (see [`spawn`]).
pub(crate) fn start(args: &[&str]) -> Server {
    let (proc, addr) = spawn(args);
    let addr = addr.unwrap_or_else(|| panic!("no address in tickwise {args:?}'s banner"));
    Server { _proc: proc, addr }
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
