//! Rooms end to end through the real binary: `tickwise serve` hosts a
//! room, two `tickwise peer --room` processes play a 2-player horde match
//! through its relay; one is killed and takes its seat back through the
//! room (issue 18's native peer, docs/rooms.md).

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

mod servers;

fn tmp(name: &str) -> PathBuf {
    // Under target/tmp, by name: a rerun replaces it, so runs leave no trail.
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("rooms-cli-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {o:?}"))
}

/// `tickwise serve` on a free port (rooms need a page folder), killed on drop.
fn serve(dir: &std::path::Path) -> servers::Server {
    let www = dir.join("www");
    std::fs::create_dir_all(&www).unwrap();
    std::fs::write(www.join("index.html"), "<h1>rooms</h1>").unwrap();
    servers::start(&["serve", "--port", "0", "--dir", www.to_str().unwrap()])
}

/// One HTTP request on a fresh connection: (status, body).
fn http(port: u16, method: &str, path: &str, body: &str) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let status = out
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = out.split("\r\n\r\n").nth(1).unwrap_or_default().to_string();
    (status, body)
}

fn create_room(port: u16, ticks: u64, disconnect_after: u64) -> String {
    let req = serde_json::json!({
        "sim": "horde", "version": 3, "players": 2, "config": servers::horde_config(Some(60), 200),
        "ticks": ticks, "disconnectAfter": disconnect_after,
    });
    let (status, body) = http(port, "POST", "/v1/rooms", &req.to_string());
    assert_eq!(status, 201, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["players"], 2);
    assert_eq!(v["ticks"], ticks);
    // The effective config is the one sent, for 2 players.
    let cfg: serde_json::Value = serde_json::from_str(v["config"].as_str().unwrap()).unwrap();
    assert_eq!(
        (cfg["players"].as_u64(), cfg["tickHz"].as_u64()),
        (Some(2), Some(60))
    );
    format!("ws://127.0.0.1:{port}{}", v["path"].as_str().unwrap())
}

fn peer(url: &str, extra: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_tickwise"))
        .args(["peer", "--room", url, "--timeout-s", "90", "--json"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn verify(path: &std::path::Path) {
    let o = Command::new(env!("CARGO_BIN_EXE_tickwise"))
        .args(["verify", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{o:?}");
}

#[test]
fn two_native_peers_play_a_horde_match_through_a_room() {
    let dir = tmp("match");
    let s = serve(&dir);
    let url = create_room(s.port(), 600, 300);
    let (o0, o1) = (dir.join("p0"), dir.join("p1"));
    let c0 = peer(&url, &["--out", o0.to_str().unwrap()]);
    let c1 = peer(
        &url,
        &["--out", o1.to_str().unwrap(), "--inputs", "random:5"],
    );
    let (r0, r1) = (
        c0.wait_with_output().unwrap(),
        c1.wait_with_output().unwrap(),
    );
    assert_eq!(r0.status.code(), Some(0), "{r0:?}");
    assert_eq!(r1.status.code(), Some(0), "{r1:?}");
    let (v0, v1) = (json(&r0), json(&r1));
    let mut slots = [v0["room"]["slot"].as_u64(), v1["room"]["slot"].as_u64()];
    slots.sort_unstable();
    assert_eq!(slots, [Some(0), Some(1)], "one seat each");
    for v in [&v0, &v1] {
        assert_eq!(v["confirmedTick"], 600, "{v}");
        assert_eq!(v["desyncs"], 0, "{v}");
        assert_eq!(v["droppedUnauthenticated"], 0, "{v}");
        // Every datagram went through the relay, and came back.
        assert!(v["room"]["relaySent"].as_u64().unwrap() >= 600, "{v}");
        assert!(v["room"]["relayReceived"].as_u64().unwrap() >= 600, "{v}");
        assert_eq!(v["room"]["rejoined"], false);
    }
    assert_eq!(v0["confirmedChecksum"], v1["confirmedChecksum"]);
    let (f0, f1) = (o0.join("session.twr"), o1.join("session.twr"));
    verify(&f0);
    verify(&f1);
    // The two peers recorded the same match, byte for byte.
    assert_eq!(std::fs::read(&f0).unwrap(), std::fs::read(&f1).unwrap());
    // The server counted the relay's work.
    let (status, metrics) = http(s.port(), "GET", "/metrics", "");
    assert_eq!(status, 200);
    let count = |name: &str| -> u64 {
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("{name} in {metrics}"))
    };
    assert_eq!(count("tickwise_room_starts_total "), 1);
    assert!(count("tickwise_relay_frames_total ") >= 1200, "{metrics}");
    assert_eq!(
        count("tickwise_relay_drops_total{reason=\"over-rate\"} "),
        0
    );
}

/// Issue 17's rejoin through a room: `kill -9` one peer; a new process
/// with the same `--room` URL gets the empty seat back (`welcome.started`)
/// and rejoins the running match; it finishes clean and the replay of the
/// peer that stayed verifies.
#[test]
fn a_killed_room_peer_takes_its_seat_back_through_the_room() {
    let dir = tmp("rejoin");
    let s = serve(&dir);
    let url = create_room(s.port(), 900, 60);
    let o0 = dir.join("p0");
    let c0 = peer(&url, &["--out", o0.to_str().unwrap(), "--player", "0"]);
    let mut c1 = peer(&url, &["--player", "1"]);
    std::thread::sleep(Duration::from_secs(3));
    c1.kill().unwrap(); // SIGKILL: no goodbye, no leave
    let _ = c1.wait();
    std::thread::sleep(Duration::from_secs(2));
    // No --player: the lowest empty seat, which is 1.
    let c1b = peer(&url, &[]);
    let (r0, r1) = (
        c0.wait_with_output().unwrap(),
        c1b.wait_with_output().unwrap(),
    );
    assert_eq!(r0.status.code(), Some(0), "{r0:?}");
    assert_eq!(r1.status.code(), Some(0), "{r1:?}");
    let (v0, v1) = (json(&r0), json(&r1));
    assert_eq!(v1["room"]["slot"], 1, "{v1}");
    assert_eq!(v1["room"]["rejoined"], true, "{v1}");
    assert!(v1["rejoinTicks"].as_u64().is_some(), "{v1}");
    assert_eq!(v0["confirmedTick"], 900);
    assert_eq!(v1["confirmedTick"], 900);
    assert_eq!(v0["confirmedChecksum"], v1["confirmedChecksum"]);
    assert_eq!(
        (v0["desyncs"].as_u64(), v1["desyncs"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(v0["rejoined"][0]["player"], 1, "{v0}");
    verify(&o0.join("session.twr"));
    let (_, metrics) = http(s.port(), "GET", "/metrics", "");
    assert!(
        metrics
            .lines()
            .any(|l| l == "tickwise_room_rejoins_total 1"),
        "{metrics}"
    );
}

#[test]
fn room_peer_usage_errors() {
    let dir = tmp("usage");
    let s = serve(&dir);
    let url = create_room(s.port(), 60, 300);
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_tickwise"))
            .args(args)
            .output()
            .unwrap()
    };
    // The room gives the key, the players and the sim.
    for extra in [
        &["--session-key", "random"][..],
        &["--players", "3"],
        &["--sim", "horde"],
        &["--bind", "127.0.0.1:0"],
    ] {
        let mut args = vec!["peer", "--room", &url];
        args.extend(extra);
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {o:?}");
    }
    let o = run(&["peer", "--room", "http://127.0.0.1:1/v1/rooms/x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("ws://"),
        "{o:?}"
    );
    let unknown = format!(
        "ws://127.0.0.1:{}/v1/rooms/AAAAAAAAAAAAAAAAAAAAAA",
        s.port()
    );
    let o = run(&["peer", "--room", &unknown]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no-such-room"),
        "{o:?}"
    );
    // A seat that is not a player seat of the room.
    let o = run(&["peer", "--room", &url, "--player", "3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no-such-slot"),
        "{o:?}"
    );
}
