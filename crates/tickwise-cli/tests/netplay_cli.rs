//! `tickwise netplay` and `tickwise peer` through the real binary.

use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

fn tickwise(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tickwise"))
        .args(args)
        .output()
        .unwrap()
}

fn tmp(name: &str) -> PathBuf {
    // Under target/tmp, by name: a rerun replaces it, so runs leave no trail.
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("netplay-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {o:?}"))
}

#[test]
fn netplay_chaos_replay_verifies_with_the_peers_checksum() {
    let dir = tmp("chaos");
    let d = dir.to_str().unwrap();
    let o = tickwise(&[
        "netplay",
        "--players",
        "4",
        "--ticks",
        "2000",
        "--rtt-ms",
        "300",
        "--input-delay",
        "0",
        "--loss",
        "0.1",
        "--dup",
        "0.05",
        "--reorder",
        "0.05",
        "--seed",
        "21",
        "--out",
        d,
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let v = json(&o);
    let peers = v["peers"].as_array().unwrap();
    assert_eq!(peers.len(), 4);
    let sum = peers[0]["confirmedChecksum"].as_str().unwrap().to_owned();
    for p in peers {
        assert_eq!(p["confirmedTick"], 2000);
        assert_eq!(p["confirmedChecksum"], sum.as_str());
        assert_eq!(p["desyncs"], 0);
        assert!(p["rollbacks"].as_u64().unwrap() > 0);
        // Every datagram carries at least its envelope and its 16-byte MAC.
        let (sent, bytes) = (
            p["packetsSent"].as_u64().unwrap(),
            p["bytesSent"].as_u64().unwrap(),
        );
        assert!(sent > 0 && bytes >= sent * (13 + 16), "{p}");
    }
    let replay = dir.join("session.twr");
    let ok = tickwise(&["verify", replay.to_str().unwrap()]);
    assert_eq!(ok.status.code(), Some(0), "{ok:?}");
    // The replay's final checksum is the peers' confirmed checksum.
    let bytes = std::fs::read(&replay).unwrap();
    let r = tickwise::Replay::<tickwise::TickInput>::from_bytes(
        &bytes,
        &tickwise::ReplayLimits::DEFAULT,
    )
    .unwrap();
    assert_eq!(r.players(), 4);
    assert_eq!(format!("{:016x}", r.final_state().checksum), sum);
}

#[test]
fn injected_desync_exits_1_and_the_bundle_opens_in_compare() {
    let dir = tmp("desync");
    let d = dir.to_str().unwrap();
    let o = tickwise(&[
        "netplay",
        "--ticks",
        "1200",
        "--rtt-ms",
        "300",
        "--input-delay",
        "0",
        "--loss",
        "0.1",
        "--inject-desync-at",
        "500",
        "--out",
        d,
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let v = json(&o);
    assert_eq!(v["desync"]["tick"], 500);
    let fields: Vec<&str> = v["desync"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f.as_str())
        .collect();
    assert!(fields.contains(&"tick"), "{fields:?}");
    let b = dir.join("desync");
    let (a, f) = (b.join("peer0.twr"), b.join("peer1.twr"));
    let c = tickwise(&["compare", a.to_str().unwrap(), f.to_str().unwrap()]);
    assert_eq!(c.status.code(), Some(0), "{c:?}");
    assert!(String::from_utf8_lossy(&c.stdout).contains("no divergence in 1200 ticks"));
    let good = tickwise(&["verify", a.to_str().unwrap()]);
    assert_eq!(good.status.code(), Some(0), "{good:?}");
    let bad = tickwise(&["verify", f.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(1), "{bad:?}");
    assert!(String::from_utf8_lossy(&bad.stdout).contains("tick"));
    let report = std::fs::read_to_string(b.join("report.txt")).unwrap();
    assert!(
        report.contains("first divergent checked confirmed tick: 500"),
        "{report}"
    );
    assert!(report.contains("<- differs"), "{report}");
}

#[test]
fn bad_settings_are_usage_errors() {
    for args in [
        &["netplay", "--players", "5"][..],
        &["netplay", "--window", "33"],
        &["netplay", "--loss", "1.5"],
        &["netplay", "--sim", "pong"],
        &["netplay", "--inject-desync-at", "0"],
    ] {
        let o = tickwise(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
    }
}

fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The session key both peers of the UDP test are given.
const KEY: &str = "00112233445566778899aabbccddeeff";

#[test]
fn two_peer_processes_over_udp_agree_and_the_replay_verifies() {
    let (pa, pb) = (free_port(), free_port());
    let (a, b) = (format!("127.0.0.1:{pa}"), format!("127.0.0.1:{pb}"));
    let dirs = [tmp("udp0"), tmp("udp1")];
    let spawn = |k: usize, bind: &str, remote: &str| {
        Command::new(env!("CARGO_BIN_EXE_tickwise"))
            .args([
                "peer",
                "--bind",
                bind,
                "--remote",
                remote,
                "--player",
                &k.to_string(),
                "--ticks",
                "300",
                "--input-delay",
                "1",
                "--seed",
                "5",
                "--timeout-s",
                "60",
                "--session-key",
                KEY,
                "--out",
                dirs[k].to_str().unwrap(),
                "--json",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let c0 = spawn(0, &a, &b);
    let c1 = spawn(1, &b, &a);
    let (o0, o1) = (
        c0.wait_with_output().unwrap(),
        c1.wait_with_output().unwrap(),
    );
    assert_eq!(o0.status.code(), Some(0), "{o0:?}");
    assert_eq!(o1.status.code(), Some(0), "{o1:?}");
    let (v0, v1) = (json(&o0), json(&o1));
    assert_eq!(v0["confirmedTick"], 300);
    assert_eq!(v1["confirmedTick"], 300);
    assert_eq!(v0["confirmedChecksum"], v1["confirmedChecksum"]);
    assert!(v0["checksCompared"].as_u64().unwrap() > 100);
    assert_eq!(v0["droppedUnauthenticated"], 0);
    for d in &dirs {
        let r = d.join("session.twr");
        let o = tickwise(&["verify", r.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{o:?}");
    }
    let c = tickwise(&[
        "compare",
        dirs[0].join("session.twr").to_str().unwrap(),
        dirs[1].join("session.twr").to_str().unwrap(),
    ]);
    assert_eq!(c.status.code(), Some(0), "{c:?}");
}

#[test]
fn a_peer_without_a_session_key_is_refused_and_told_how_to_make_one() {
    let args = [
        "peer",
        "--bind",
        "127.0.0.1:0",
        "--remote",
        "127.0.0.1:9",
        "--player",
        "0",
    ];
    let o = tickwise(&args);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("a peer needs the session's key")
            && err.contains("--session-key random")
            && err.contains("openssl rand -hex 16"),
        "{err}"
    );
    for (bad, says) in [
        (
            "0011",
            "a session key is 32 hex digits (128 bits), found 4 characters",
        ),
        (
            "00112233445566778899aabbccddeefg",
            "character 32 is not a hex digit",
        ),
    ] {
        let mut with = args.to_vec();
        with.extend(["--session-key", bad]);
        let o = tickwise(&with);
        assert_eq!(o.status.code(), Some(2), "{o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(says) && err.contains("--session-key random"),
            "{err}"
        );
    }
    let o = tickwise(&["netplay", "--session-key", "xyz"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
}

#[test]
fn session_key_random_prints_the_key_for_the_other_peers() {
    // Nobody answers: the peer gives up at its deadline (exit 1), having
    // printed the key it made on stderr, never on stdout.
    let port = free_port();
    let o = tickwise(&[
        "peer",
        "--bind",
        "127.0.0.1:0",
        "--remote",
        &format!("127.0.0.1:{port}"),
        "--player",
        "0",
        "--ticks",
        "30",
        "--timeout-s",
        "1",
        "--session-key",
        "random",
    ]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    let key = err
        .strip_prefix("session key: ")
        .and_then(|r| r.get(..32))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(key.bytes().all(|b| b.is_ascii_hexdigit()), "{key}");
    assert!(err.contains(&format!("--session-key {key}")), "{err}");
    assert!(!String::from_utf8_lossy(&o.stdout).contains(key));
}

#[test]
fn peers_with_different_keys_never_talk() {
    // The session id is derived from the key: each side drops the other's
    // datagrams as another session's, and neither confirms a tick.
    let (pa, pb) = (free_port(), free_port());
    let (a, b) = (format!("127.0.0.1:{pa}"), format!("127.0.0.1:{pb}"));
    let spawn = |k: usize, bind: &str, remote: &str, key: &str| {
        Command::new(env!("CARGO_BIN_EXE_tickwise"))
            .args([
                "peer",
                "--bind",
                bind,
                "--remote",
                remote,
                "--player",
                &k.to_string(),
                "--ticks",
                "60",
                "--timeout-s",
                "2",
                "--session-key",
                key,
                "--json",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let c0 = spawn(0, &a, &b, KEY);
    let c1 = spawn(1, &b, &a, "ffeeddccbbaa99887766554433221100");
    let (o0, o1) = (
        c0.wait_with_output().unwrap(),
        c1.wait_with_output().unwrap(),
    );
    for o in [&o0, &o1] {
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        let v = json(o);
        assert!(v["confirmedTick"].as_u64().unwrap() < 60, "{v}");
        assert!(v["droppedOther"].as_u64().unwrap() > 10, "{v}");
        assert_eq!(v["checksCompared"], 0);
    }
}

#[test]
fn netplay_reports_unauthenticated_drops() {
    let o = tickwise(&["netplay", "--ticks", "120", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let v = json(&o);
    for p in v["peers"].as_array().unwrap() {
        assert_eq!(p["droppedUnauthenticated"], 0, "{p}");
    }
    let text = tickwise(&["netplay", "--ticks", "120", "--session-key", KEY]);
    assert_eq!(text.status.code(), Some(0), "{text:?}");
    let out = String::from_utf8_lossy(&text.stdout);
    assert!(
        out.lines().nth(1).is_some_and(|h| h.contains(" unauth ")),
        "{out}"
    );
}

#[test]
fn netplay_leave_the_others_finish_and_the_replay_verifies() {
    let dir = tmp("leave");
    let d = dir.to_str().unwrap();
    let o = tickwise(&[
        "netplay",
        "--players",
        "3",
        "--ticks",
        "1500",
        "--rtt-ms",
        "100",
        "--loss",
        "0.05",
        "--leave",
        "1@600",
        "--out",
        d,
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let v = json(&o);
    let peers = v["peers"].as_array().unwrap();
    assert!(
        peers[1]["ended"]
            .as_str()
            .unwrap()
            .starts_with("left the match")
    );
    let from = peers[0]["departed"][0]["absentFrom"].as_u64().unwrap();
    // Player 1 filed inputs up to tick 600 + input delay 2 at most.
    assert!((500..=602).contains(&from), "{from}");
    for p in [&peers[0], &peers[2]] {
        assert_eq!(p["confirmedTick"], 1500);
        assert_eq!(p["desyncs"], 0);
        assert_eq!(p["departed"][0]["player"], 1);
        assert_eq!(p["departed"][0]["absentFrom"], from);
        assert_eq!(p["confirmedChecksum"], peers[0]["confirmedChecksum"]);
    }
    let ok = tickwise(&["verify", dir.join("session.twr").to_str().unwrap()]);
    assert_eq!(ok.status.code(), Some(0), "{ok:?}");
    for bad in ["3@10", "1", "x@5", "1@y"] {
        let o = tickwise(&["netplay", "--players", "3", "--leave", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {o:?}");
    }
    let o = tickwise(&["netplay", "--leave", "1@5", "--leave", "1@9"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
}

#[test]
fn netplay_leave_and_rejoin_the_match_finishes_clean_and_verifies() {
    let dir = tmp("rejoin");
    let d = dir.to_str().unwrap();
    let o = tickwise(&[
        "netplay",
        "--players",
        "4",
        "--ticks",
        "2000",
        "--rtt-ms",
        "300",
        "--jitter-ms",
        "20",
        "--input-delay",
        "0",
        "--loss",
        "0.1",
        "--dup",
        "0.05",
        "--reorder",
        "0.05",
        "--leave",
        "2@500",
        "--rejoin",
        "2@900",
        "--out",
        d,
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let v = json(&o);
    let peers = v["peers"].as_array().unwrap();
    let sum = peers[0]["confirmedChecksum"].as_str().unwrap().to_owned();
    let gap = peers[0]["rejoined"][0].clone();
    assert_eq!(gap["player"], 2);
    let join = gap["joinedAt"].as_u64().unwrap();
    assert!((900..=1000).contains(&join), "{gap}");
    for p in peers {
        assert_eq!(p["confirmedTick"], 2000);
        assert_eq!(p["confirmedChecksum"], sum.as_str());
        assert_eq!(p["desyncs"], 0);
        if p["player"] != 2 {
            assert_eq!(p["rejoined"][0], gap);
        }
    }
    let ok = tickwise(&["verify", dir.join("session.twr").to_str().unwrap()]);
    assert_eq!(ok.status.code(), Some(0), "{ok:?}");
    // A rejoin without a leave, or before it, is a usage error.
    for bad in [
        &["--rejoin", "1@50"][..],
        &["--leave", "1@50", "--rejoin", "1@40"],
    ] {
        let mut args = vec!["netplay", "--players", "3"];
        args.extend(bad);
        let o = tickwise(&args);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {o:?}");
    }
}

/// `config/horde.json` at 60 Hz with `enemies` enemies, written in `dir`.
fn horde60(dir: &Path, enemies: u64) -> PathBuf {
    let cfg = dir.join("horde.json");
    std::fs::create_dir_all(dir).unwrap();
    let mut c: serde_json::Value = serde_json::from_slice(
        &std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../config/horde.json"
        ))
        .unwrap(),
    )
    .unwrap();
    c["tickHz"] = 60.into();
    c["enemies"] = enemies.into();
    std::fs::write(&cfg, c.to_string()).unwrap();
    cfg
}

/// A `tickwise peer` process of a `ticks`-tick match of the horde at `cfg`
/// (1 s of silence is a leave), bound to `bind`, talking to `remote`, with
/// `extra` arguments (`--player K`, `--spectate`, ...).
fn spawn_peer(cfg: &Path, ticks: u64, bind: &str, remote: &str, extra: &[&str]) -> Child {
    let ticks = ticks.to_string();
    let mut args = vec![
        "peer",
        "--bind",
        bind,
        "--remote",
        remote,
        "--config",
        cfg.to_str().unwrap(),
        "--ticks",
        &ticks,
        "--disconnect-after",
        "60",
        "--timeout-s",
        "60",
        "--session-key",
        KEY,
        "--json",
    ];
    args.extend(extra);
    Command::new(env!("CARGO_BIN_EXE_tickwise"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Issue 17's "Done when" over UDP with real processes: `kill -9` one peer,
/// start a new process for its slot with `--rejoin`, and the match
/// finishes clean: both confirm every tick with the same checksum, and the
/// peer that stayed writes a replay that verifies.
#[test]
fn a_killed_udp_peer_restarted_with_rejoin_takes_its_slot_back() {
    let (pa, pb) = (free_port(), free_port());
    let (a, b) = (format!("127.0.0.1:{pa}"), format!("127.0.0.1:{pb}"));
    let dir = tmp("udp-rejoin");
    let cfg = horde60(&dir, 200);
    let out0 = dir.join("p0");
    let c0 = spawn_peer(
        &cfg,
        900,
        &a,
        &b,
        &["--player", "0", "--out", out0.to_str().unwrap()],
    );
    let mut c1 = spawn_peer(&cfg, 900, &b, &a, &["--player", "1"]);
    std::thread::sleep(std::time::Duration::from_secs(3));
    c1.kill().unwrap(); // SIGKILL: no goodbye
    let _ = c1.wait();
    std::thread::sleep(std::time::Duration::from_secs(2));
    let c1b = spawn_peer(&cfg, 900, &b, &a, &["--player", "1", "--rejoin"]);
    let (o0, o1) = (
        c0.wait_with_output().unwrap(),
        c1b.wait_with_output().unwrap(),
    );
    assert_eq!(o0.status.code(), Some(0), "{o0:?}");
    assert_eq!(o1.status.code(), Some(0), "{o1:?}");
    let (v0, v1) = (json(&o0), json(&o1));
    assert_eq!(v0["confirmedTick"], 900);
    assert_eq!(v1["confirmedTick"], 900);
    assert_eq!(v0["confirmedChecksum"], v1["confirmedChecksum"]);
    assert_eq!(v0["desyncs"], 0);
    assert_eq!(v1["desyncs"], 0);
    let gap = &v0["rejoined"][0];
    assert_eq!(gap["player"], 1, "{v0}");
    let ok = tickwise(&["verify", out0.join("session.twr").to_str().unwrap()]);
    assert_eq!(ok.status.code(), Some(0), "{ok:?}");
}

/// Two players of a horde match over UDP, and a spectator process started
/// about 5 s (300 ticks at 60 Hz) into it: it loads the player's latest
/// confirmed checkpoint, follows the match to its end, and its final
/// checksum is both players'.
#[test]
fn a_udp_spectator_joins_a_running_match_and_ends_with_the_players_checksum() {
    let (pa, pb, ps) = (free_port(), free_port(), free_port());
    let (a, b, s) = (
        format!("127.0.0.1:{pa}"),
        format!("127.0.0.1:{pb}"),
        format!("127.0.0.1:{ps}"),
    );
    let dir = tmp("udp-spectate");
    let cfg = horde60(&dir, 200);
    let c0 = spawn_peer(&cfg, 720, &a, &b, &["--player", "0"]);
    let c1 = spawn_peer(&cfg, 720, &b, &a, &["--player", "1"]);
    std::thread::sleep(std::time::Duration::from_secs(5));
    let cs = spawn_peer(&cfg, 720, &s, &a, &["--spectate"]);
    let (o0, o1, os) = (
        c0.wait_with_output().unwrap(),
        c1.wait_with_output().unwrap(),
        cs.wait_with_output().unwrap(),
    );
    for o in [&o0, &o1, &os] {
        assert_eq!(o.status.code(), Some(0), "{o:?}");
    }
    let (v0, v1, vs) = (json(&o0), json(&o1), json(&os));
    assert_eq!(vs["spectator"], true, "{vs}");
    assert_eq!(vs["player"], 4, "{vs}");
    // It started from an anchor of the running match (one every 64
    // ticks), not from tick 0.
    let joined = vs["joinedAt"].as_u64().unwrap();
    assert!(joined >= 128 && joined.is_multiple_of(64), "{vs}");
    assert!(vs["snapshotBytes"].as_u64().unwrap() > 1000, "{vs}");
    for v in [&v0, &v1, &vs] {
        assert_eq!(v["confirmedTick"], 720, "{v}");
        assert_eq!(v["desyncs"], 0, "{v}");
        assert_eq!(v["droppedUnauthenticated"], 0, "{v}");
    }
    assert_eq!(vs["confirmedChecksum"], v0["confirmedChecksum"]);
    assert_eq!(vs["confirmedChecksum"], v1["confirmedChecksum"]);
    // Usage errors: two players to watch, a slot past the players, --out
    // (a spectator writes no replay), --player with --spectate.
    for bad in [
        &["--spectate", "--remote", "127.0.0.1:9"][..],
        &["--spectate", "--watch", "2"],
        &["--spectate", "--out", "x"],
        &["--spectate", "--player", "1"],
    ] {
        let mut args = vec![
            "peer",
            "--bind",
            "127.0.0.1:0",
            "--remote",
            "127.0.0.1:9",
            "--session-key",
            KEY,
        ];
        args.extend(bad);
        let o = tickwise(&args);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {o:?}");
    }
}

/// A spectator stopped with SIGSTOP for 3 s (longer than the players' 1 s
/// timeout, 60 ticks) is dropped: after SIGCONT it hears why and exits 1
/// with a clear message, and the players finish clean.
#[test]
fn a_stopped_udp_spectator_is_dropped_and_the_players_finish_clean() {
    let (pa, pb, ps) = (free_port(), free_port(), free_port());
    let (a, b, s) = (
        format!("127.0.0.1:{pa}"),
        format!("127.0.0.1:{pb}"),
        format!("127.0.0.1:{ps}"),
    );
    let dir = tmp("udp-spectate-stop");
    let cfg = horde60(&dir, 200);
    let c0 = spawn_peer(&cfg, 720, &a, &b, &["--player", "0"]);
    let c1 = spawn_peer(&cfg, 720, &b, &a, &["--player", "1"]);
    std::thread::sleep(std::time::Duration::from_secs(2));
    let cs = spawn_peer(&cfg, 720, &s, &a, &["--spectate"]);
    std::thread::sleep(std::time::Duration::from_secs(2));
    let pid = cs.id().to_string();
    let signal = |sig: &str| {
        let st = Command::new("kill").args([sig, &pid]).status().unwrap();
        assert!(st.success(), "kill {sig} {pid}");
    };
    signal("-STOP");
    std::thread::sleep(std::time::Duration::from_secs(3));
    signal("-CONT");
    let (o0, o1, os) = (
        c0.wait_with_output().unwrap(),
        c1.wait_with_output().unwrap(),
        cs.wait_with_output().unwrap(),
    );
    assert_eq!(os.status.code(), Some(1), "{os:?}");
    let err = String::from_utf8_lossy(&os.stderr);
    assert!(err.contains("dropped by the player"), "{err}");
    let vs = json(&os);
    assert_eq!(vs["finished"], false, "{vs}");
    assert!(vs["confirmedTick"].as_u64().unwrap() < 720, "{vs}");
    for o in [&o0, &o1] {
        assert_eq!(o.status.code(), Some(0), "{o:?}");
    }
    let (v0, v1) = (json(&o0), json(&o1));
    for v in [&v0, &v1] {
        assert_eq!(v["confirmedTick"], 720, "{v}");
        assert_eq!(v["desyncs"], 0, "{v}");
    }
    assert_eq!(v0["confirmedChecksum"], v1["confirmedChecksum"]);
}

/// A peer sends for session tick `t` what its `--inputs` say for `t`,
/// whatever the network's timing: peer 1 starts 0.6 s after peer 0 (under
/// the 1 s that would make it a leaver), so peer 0's loop runs about 30
/// ticks while its session stalls, and the match must
/// still end on the checksum of the same match over the network simulator
/// (`netplay`, same config and inputs), the independent reference. A peer
/// that read its script by the loop's tick sent each input about 90 ticks
/// late and ended elsewhere.
#[test]
fn udp_peers_send_their_scripted_inputs_by_session_tick_whatever_the_timing() {
    let dir = tmp("udp-script");
    let cfg = horde60(&dir, 100);
    let reference = tickwise(&[
        "netplay",
        "--config",
        cfg.to_str().unwrap(),
        "--ticks",
        "300",
        "--inputs",
        "random:7",
        "--inputs",
        "random:8",
        "--json",
    ]);
    assert_eq!(reference.status.code(), Some(0), "{reference:?}");
    let want = json(&reference)["peers"][0]["confirmedChecksum"].clone();
    assert!(want.is_string(), "{want}");
    // The simulator itself: a 600 ms round trip makes every player stall
    // for hundreds of ticks, and the match ends on the same state.
    let slow = tickwise(&[
        "netplay",
        "--config",
        cfg.to_str().unwrap(),
        "--ticks",
        "300",
        "--inputs",
        "random:7",
        "--inputs",
        "random:8",
        "--rtt-ms",
        "600",
        "--json",
    ]);
    let slow = json(&slow);
    assert!(
        slow["peers"][0]["stalls"].as_u64().is_some_and(|n| n > 100),
        "{slow}"
    );
    assert_eq!(slow["peers"][0]["confirmedChecksum"], want, "{slow}");

    let (pa, pb) = (free_port(), free_port());
    let (a, b) = (format!("127.0.0.1:{pa}"), format!("127.0.0.1:{pb}"));
    let inputs = ["--inputs", "random:7", "--inputs", "random:8"];
    let mut p0 = vec!["--player", "0"];
    p0.extend(inputs);
    let c0 = spawn_peer(&cfg, 300, &a, &b, &p0);
    std::thread::sleep(std::time::Duration::from_millis(600));
    let mut p1 = vec!["--player", "1"];
    p1.extend(inputs);
    let c1 = spawn_peer(&cfg, 300, &b, &a, &p1);
    let (o0, o1) = (
        c0.wait_with_output().unwrap(),
        c1.wait_with_output().unwrap(),
    );
    assert_eq!(o0.status.code(), Some(0), "{o0:?}");
    assert_eq!(o1.status.code(), Some(0), "{o1:?}");
    let (v0, v1) = (json(&o0), json(&o1));
    // The timing this test is about: peer 0 stalled, and nobody left.
    assert!(v0["stalls"].as_u64().is_some_and(|n| n > 0), "{v0}");
    assert_eq!(v0["departed"], serde_json::json!([]), "{v0}");
    assert_eq!(v0["confirmedTick"], 300, "{v0}");
    assert_eq!(v0["confirmedChecksum"], want, "peer 0 vs netplay: {v0}");
    assert_eq!(v1["confirmedChecksum"], want, "peer 1 vs netplay: {v1}");
}
