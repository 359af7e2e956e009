//! Issue 13 regression tests through the real binary: every input path is
//! bounded before or while reading (devices, FIFOs, sparse files, endless
//! stdin), every command that runs a sim refuses work and memory over its
//! limit quickly, `verify DIR` reports every entry, and the smaller
//! defects (record vs verify limits, huge tokens, doubled error text).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use tickwise::{Replay, ReplayLimits, TickInput};

mod servers;

/// Runs the binary with `stdin`, killing it (and failing the test) if it
/// has not finished within `secs`: a hang is a failure, not a stuck CI job.
fn tickwise_in(args: &[&str], stdin: Stdio, secs: u64) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tickwise"))
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("tickwise {args:?} did not finish within {secs} s: {out:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn tickwise(args: &[&str]) -> Output {
    tickwise_in(args, Stdio::null(), 60)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn mkfifo(path: &Path) {
    let st = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(st.success(), "mkfifo {path:?}");
}

/// Asserts exit code 2 within the deadline and that stderr contains `needle`.
fn refused(o: &Output, needle: &str) {
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        stderr(o).contains(needle),
        "wanted {needle:?} in {}",
        stderr(o)
    );
}

#[test]
fn dev_zero_as_config_inputs_or_script_is_refused_by_type() {
    for args in [
        &["script", "--loop", "/dev/zero", "-"][..],
        &["script", "--lifecycle", "/dev/zero", "-"][..],
        &["script", "--inputs", "/dev/zero", "-"][..],
        &["script", "/dev/zero"][..],
        &[
            "record",
            "--ticks",
            "1",
            "--config",
            "/dev/zero",
            "--out",
            "/dev/null",
        ][..],
        &["sync-test", "--inputs", "/dev/zero"][..],
        &["verify", "/dev/zero"][..],
    ] {
        let o = tickwise_in(args, Stdio::null(), 10);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        let all = format!("{}{}", stderr(&o), stdout(&o));
        assert!(
            all.contains("it is a character device, not a regular file"),
            "{args:?}: {all}"
        );
    }
}

#[test]
fn a_fifo_path_is_refused_not_waited_on() {
    let d = scratch("fifo");
    let fifo = d.join("pipe.twr");
    mkfifo(&fifo);
    let f = s(&fifo);
    // No writer ever opens the FIFO: opening it for reading would block
    // forever, so finishing at all (within the deadline) is the test.
    for args in [
        &["verify", f][..],
        &["compare", f, f][..],
        &["script", f][..],
        &["script", "--loop", f, "-"][..],
        &[
            "record",
            "--ticks",
            "1",
            "--inputs",
            f,
            "--out",
            "/dev/null",
        ][..],
        &["sync-test", "--config", f][..],
        &["budget", "--config", f, "--cost-ms", "1"][..],
        &["horde", "--config", f][..],
    ] {
        let o = tickwise_in(args, Stdio::null(), 10);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        let all = format!("{}{}", stderr(&o), stdout(&o));
        assert!(
            all.contains("it is a FIFO (named pipe), not a regular file"),
            "{args:?}: {all}"
        );
    }
}

#[test]
fn a_2_gb_sparse_file_is_refused_by_its_size_before_reading() {
    let d = scratch("sparse");
    let big = d.join("big.twr");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let b = s(&big);
    for (args, limit) in [
        (&["script", "--loop", b, "-"][..], "65536"),
        (&["script", "--inputs", b, "-"][..], "16777216"),
        (&["script", b][..], "16777216"),
        (&["sync-test", "--config", b][..], "65536"),
        (&["compare", b, b][..], "67108864"),
    ] {
        let start = Instant::now();
        let o = tickwise_in(args, Stdio::null(), 10);
        refused(
            &o,
            &format!("is 2147483648 bytes, above the limit of {limit}"),
        );
        // Reading 2 GiB takes seconds; a size check takes milliseconds.
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "{args:?} took {:?}",
            start.elapsed()
        );
    }
    let o = tickwise_in(&["verify", b], Stdio::null(), 10);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        stdout(&o).contains("(raise it with --max-file-bytes)"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn script_from_endless_stdin_stops_at_the_limit() {
    let zero = std::fs::File::open("/dev/zero").unwrap();
    let start = Instant::now();
    let o = tickwise_in(&["script", "-"], Stdio::from(zero), 20);
    refused(
        &o,
        "script stdin is more than the 16777216 bytes accepted (stopped reading there)",
    );
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "took {:?}",
        start.elapsed()
    );
}

#[test]
fn issue_13_defect_1_sync_test_of_a_million_enemies_is_refused_at_once() {
    let d = scratch("defect1");
    let c = d.join("horde.json");
    std::fs::write(&c, servers::horde_config(None, 1_000_000)).unwrap();
    let c = s(&c);
    for rollback in ["1000", "8"] {
        let o = tickwise_in(
            &[
                "sync-test",
                "--sim",
                "horde",
                "--config",
                c,
                "--ticks",
                "2000",
                "--rollback",
                rollback,
            ],
            Stdio::null(),
            10,
        );
        refused(
            &o,
            "exceeds the work limit of 60000000000 (about 60.0 s) (raise it with --max-work)",
        );
    }
    // Few ticks but a deep ring of 84 MB states: refused by memory.
    let o = tickwise(&[
        "sync-test",
        "--sim",
        "horde",
        "--config",
        c,
        "--ticks",
        "2",
        "--rollback",
        "8",
    ]);
    refused(
        &o,
        "exceed the snapshot memory limit of 268435456 bytes (raise it with --max-memory)",
    );
    for args in [
        &["horde", "--enemies", "1000000", "--ticks", "10000000"][..],
        &["budget", "--enemies", "1000000"][..],
    ] {
        let o = tickwise_in(args, Stdio::null(), 10);
        refused(&o, "exceeds the work limit");
    }
}

#[test]
fn issue_13_defect_3_a_small_replay_declaring_a_huge_horde_is_refused_at_once() {
    let d = scratch("defect3");
    let small = d.join("small.json");
    std::fs::write(&small, servers::horde_config(None, 10)).unwrap();
    let f = d.join("h.twr");
    let o = tickwise(&[
        "record",
        "--sim",
        "horde",
        "--config",
        s(&small),
        "--ticks",
        "1999",
        "--out",
        s(&f),
    ]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    // The same file, its embedded config claiming a million enemies.
    let bytes = std::fs::read(&f).unwrap();
    let mut parts = Replay::<TickInput>::from_bytes(&bytes, &ReplayLimits::DEFAULT)
        .unwrap()
        .into_parts();
    parts.header.config = servers::horde_config(None, 1_000_000).into_bytes();
    let forged = Replay::from_parts(parts).unwrap().to_bytes();
    assert!(forged.len() < 8192, "{} bytes", forged.len());
    std::fs::write(&f, forged).unwrap();
    let start = Instant::now();
    let o = tickwise_in(&["verify", s(&f)], Stdio::null(), 10);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    // 1999 ticks × (500 + 4096 × 55 + 995 904 × 140) units.
    assert!(
        stdout(&o).contains("running 1999 ticks at 139652340 work units each"),
        "{}",
        stdout(&o)
    );
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "took {:?}",
        start.elapsed()
    );
}

#[test]
fn verify_dir_reports_every_matching_entry() {
    let d = scratch("verify_dir");
    let o = tickwise(&["record", "--ticks", "100", "--out", s(&d.join("good.twr"))]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    std::os::unix::fs::symlink(d.join("missing"), d.join("dangling.twr")).unwrap();
    std::os::unix::fs::symlink(d.join("loop.twr"), d.join("loop.twr")).unwrap();
    mkfifo(&d.join("pipe.twr"));
    std::fs::create_dir(d.join("folder.twr")).unwrap();
    std::fs::write(d.join("notes.txt"), "not a replay").unwrap();
    let o = tickwise_in(&["verify", s(&d)], Stdio::null(), 20);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let out = stdout(&o);
    for (name, why) in [
        ("dangling.twr", "No such file"),
        ("loop.twr", "symbolic links"),
        ("pipe.twr", "FIFO"),
        ("folder.twr", "a directory"),
    ] {
        let line = out
            .lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("{name} not reported: {out}"));
        assert!(line.starts_with("REFUSED"), "{line}");
        assert!(line.contains(": unreadable: "), "{line}");
        assert!(line.contains(why), "{line}");
    }
    assert!(!out.contains("notes.txt"), "{out}");
    assert!(out.contains("verified 5 files"), "{out}");
    assert!(out.contains("(0 diverged, 4 refused)"), "{out}");

    // --json: one object per replay, then the summary.
    let o = tickwise_in(&["verify", "--json", s(&d)], Stdio::null(), 20);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 6, "{lines:?}");
    let good = lines
        .iter()
        .find(|v| v["path"].as_str().unwrap().ends_with("good.twr"))
        .unwrap();
    assert_eq!(good["type"], "replay");
    assert_eq!(good["status"], "ok");
    assert_eq!(good["sim"], "island");
    assert_eq!(good["simVersion"], 1);
    assert_eq!(good["ticks"], 100);
    assert!(
        good["digest"].as_str().unwrap().starts_with("100|"),
        "{good}"
    );
    assert!(good["error"].is_null());
    let bad: Vec<_> = lines.iter().filter(|v| v["status"] == "refused").collect();
    assert_eq!(bad.len(), 4);
    assert!(bad.iter().all(|v| v["reason"] == "unreadable"), "{bad:?}");
    assert!(
        bad.iter()
            .all(|v| v["error"].is_string() && v["ticks"].is_null())
    );
    let summary = &lines[5];
    assert_eq!(summary["type"], "summary");
    assert_eq!(
        (
            &summary["replays"],
            &summary["ok"],
            &summary["diverged"],
            &summary["refused"]
        ),
        (&5.into(), &1.into(), &0.into(), &4.into())
    );
    assert_eq!(summary["ticks"], 100);
    assert_eq!(summary["exitCode"], 2);
}

#[test]
fn verify_an_empty_directory_finds_no_replays_exit_2() {
    let d = scratch("verify_empty");
    let o = tickwise(&["verify", s(&d)]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(stdout(&o).contains("no replays found"), "{}", stdout(&o));
    let o = tickwise(&["verify", "--json", s(&d)]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let last: serde_json::Value = serde_json::from_str(stdout(&o).lines().last().unwrap()).unwrap();
    // A directory without replays is no replay: not counted as a refused
    // file but as a path without replays (issue 22), still exit 2.
    assert_eq!((&last["refused"], &last["missing"]), (&0.into(), &1.into()));
    assert_eq!(last["ok"], 0);
}

#[test]
fn record_refuses_what_verify_would_refuse_with_the_same_message() {
    let d = scratch("record_limits");
    let out = d.join("big.twr");
    // The issue's case: 2 000 000 checkpoints of 8 + 4 × 8 bytes = 80 MB,
    // more than a default verifier's 64 MiB: refused before running.
    let o = tickwise(&[
        "record",
        "--ticks",
        "2000000",
        "--checkpoint-every",
        "1",
        "--out",
        s(&out),
    ]);
    refused(&o, "2000000 checkpoints of 40 bytes");
    assert!(
        stderr(&o).contains("(raise it with --max-file-bytes)"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    // Checkpoints fit but the whole file does not: the verifier's own message.
    let o = tickwise(&[
        "record",
        "--ticks",
        "100",
        "--checkpoint-every",
        "1",
        "--max-file-bytes",
        "4001",
        "--out",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let msg = stderr(&o);
    let size: u64 = msg
        .split("file is ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{msg}"));
    assert!(!out.exists());
    let exact = size.to_string();
    let o = tickwise(&[
        "record",
        "--ticks",
        "100",
        "--checkpoint-every",
        "1",
        "--max-file-bytes",
        &exact,
        "--out",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(std::fs::metadata(&out).unwrap().len(), size);
    let one_less = (size - 1).to_string();
    let o = tickwise(&["verify", "--max-file-bytes", &one_less, s(&out)]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    // The same words as record's refusal.
    let want =
        format!("is {size} bytes, above the limit of {one_less} (raise it with --max-file-bytes)");
    assert!(
        msg.contains("above the limit of 4001 (raise it with --max-file-bytes)"),
        "{msg}"
    );
    assert!(stdout(&o).contains(&want), "{}", stdout(&o));
    // Ticks and work: the verifier's limits, before running.
    let o = tickwise(&["record", "--ticks", "10000001", "--out", s(&out)]);
    refused(&o, "above the limit of 10000000");
    let o = tickwise(&[
        "record",
        "--ticks",
        "1000",
        "--max-work",
        "39999",
        "--out",
        s(&out),
    ]);
    refused(&o, "running 1000 ticks at 40 work units each (40000 units");
}

#[test]
fn errors_never_echo_a_huge_token_in_full() {
    let d = scratch("huge_token");
    let script = d.join("s.txt");
    std::fs::write(&script, format!("frames {} 16\n", "9".repeat(10_000_000))).unwrap();
    let o = tickwise(&["script", s(&script)]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let e = stderr(&o);
    assert!(e.len() < 400, "{} bytes of error", e.len());
    assert!(e.contains("… (10000000 bytes)"), "{e}");
    let seed = format!("random:{}", "x".repeat(100_000));
    let o = tickwise(&["sync-test", "--inputs", &seed]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(stderr(&o).len() < 400, "{}", stderr(&o));
    assert!(stderr(&o).contains("… (100000 bytes)"), "{}", stderr(&o));
}

/// `a: b: b` or `a: a`: a message that repeats a segment of its chain.
fn repeats_a_segment(msg: &str) -> bool {
    let parts: Vec<&str> = msg.trim().split(": ").collect();
    (1..parts.len()).any(|i| parts[i..].join(": ") == parts[..i].join(": "))
        || parts.windows(2).any(|w| w[0] == w[1])
}

#[test]
fn error_text_is_never_doubled() {
    assert!(repeats_a_segment(
        "tickwise: config key `seed` is missing: config key `seed` is missing"
    ));
    assert!(!repeats_a_segment(
        "tickwise: cannot read config a: No such file"
    ));
    let d = scratch("doubled");
    let good = d.join("a.twr");
    let o = tickwise(&["record", "--ticks", "300", "--out", s(&good)]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let bytes = std::fs::read(&good).unwrap();
    let trunc = d.join("t.twr");
    std::fs::write(&trunc, &bytes[..200]).unwrap();
    let bad_cfg = d.join("bad.json");
    std::fs::write(&bad_cfg, "{\"seed\": 1}").unwrap();
    let garbage = d.join("g.json");
    std::fs::write(&garbage, "garbage").unwrap();
    let inputs = d.join("in.json");
    std::fs::write(&inputs, "[1, 2.5]").unwrap();
    let (g, t, b, x, i) = (s(&good), s(&trunc), s(&bad_cfg), s(&garbage), s(&inputs));
    for args in [
        &["compare", t, g][..],
        &["compare", g, t][..],
        &["compare", "/no/such.twr", g][..],
        &["compare", g, "--live", "--config", b][..],
        &["compare", g, "--live", "--inputs", i][..],
        &["sync-test", "--config", b][..],
        &["sync-test", "--sim", "horde", "--config", b][..],
        &["sync-test", "--inputs", i][..],
        &["sync-test", "--inputs", "/no/such.json"][..],
        &["sync-test", "--config", x][..],
    ] {
        let o = tickwise(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        let e = stderr(&o);
        assert!(!repeats_a_segment(&e), "{args:?}: {e}");
    }
}

#[test]
fn a_final_state_divergence_at_the_last_checkpoint_names_no_empty_range() {
    let d = tickwise::Divergence {
        checkpoint: None,
        last_good_tick: 3000,
        tick: 3000,
        expected_checksum: 1,
        found_checksum: 2,
        fields: Vec::new(),
        digests: None,
    };
    let text = d.to_string();
    assert!(!text.contains("3001..=3000"), "{text}");
    assert!(
        text.contains("no tick ran after the last match at tick 3000"),
        "{text}"
    );
    let ranged = tickwise::Divergence {
        checkpoint: Some(2),
        last_good_tick: 120,
        tick: 180,
        ..d
    };
    assert!(
        ranged.to_string().contains("within ticks 121..=180"),
        "{ranged}"
    );
}

/// Issue 17, item 8: `netplay` and `peer` check work, memory and the size
/// of the replay they record before anything runs.
#[test]
fn issue_17_netplay_and_peer_refuse_over_their_limits_at_once() {
    let d = scratch("issue17");
    let c = d.join("horde.json");
    std::fs::write(&c, servers::horde_config(None, 1_000_000)).unwrap();
    let c = s(&c);
    // The reported run: a million enemies, window 32 (2.27 GB before).
    let o = tickwise_in(
        &["netplay", "--sim", "horde", "--config", c, "--window", "32"],
        Stdio::null(),
        10,
    );
    refused(&o, "refusing to start the netplay run");
    // Few ticks: not the work but the states (2 players × (32 + 7)).
    let o = tickwise_in(
        &[
            "netplay", "--sim", "horde", "--config", c, "--window", "32", "--ticks", "10",
        ],
        Stdio::null(),
        10,
    );
    refused(&o, "78 state snapshots of about");
    refused(
        &o,
        "exceed the snapshot memory limit of 268435456 bytes (raise it with --max-memory)",
    );
    // Work: ticks × players × the horde's work per tick.
    let o = tickwise_in(
        &[
            "netplay",
            "--sim",
            "horde",
            "--config",
            c,
            "--ticks",
            "100000",
            "--max-memory",
            "1000000000000",
        ],
        Stdio::null(),
        10,
    );
    refused(
        &o,
        "exceeds the work limit of 60000000000 (about 60.0 s) (raise it with --max-work)",
    );
    // The recording: ten million ticks with a checkpoint each (402 MB
    // before, which `verify` then refused); the work limit raised so that
    // the replay's size is what refuses it.
    let o = tickwise_in(
        &[
            "netplay",
            "--ticks",
            "10000000",
            "--checkpoint-every",
            "1",
            "--max-work",
            "1000000000000",
        ],
        Stdio::null(),
        10,
    );
    refused(
        &o,
        "above the file size limit of 67108864 a verifier with the same limits accepts (raise it with --max-file-bytes)",
    );
    // The same checks for one peer (one session in the process).
    let o = tickwise_in(
        &[
            "peer",
            "--bind",
            "127.0.0.1:0",
            "--remote",
            "127.0.0.1:9",
            "--player",
            "0",
            "--session-key",
            "00112233445566778899aabbccddeeff",
            "--sim",
            "horde",
            "--config",
            c,
            "--window",
            "32",
            "--ticks",
            "10",
            "--spectators",
            "0",
        ],
        Stdio::null(),
        10,
    );
    refused(&o, "39 state snapshots of about");
    // Each spectator a peer admits (4 by default) holds an encoded
    // checkpoint while it loads: window + 7 + 4 states.
    let o = tickwise_in(
        &[
            "peer",
            "--bind",
            "127.0.0.1:0",
            "--remote",
            "127.0.0.1:9",
            "--player",
            "0",
            "--session-key",
            "00112233445566778899aabbccddeeff",
            "--sim",
            "horde",
            "--config",
            c,
            "--window",
            "32",
            "--ticks",
            "10",
        ],
        Stdio::null(),
        10,
    );
    refused(&o, "43 state snapshots of about");
    let o = tickwise_in(
        &[
            "peer",
            "--bind",
            "127.0.0.1:0",
            "--remote",
            "127.0.0.1:9",
            "--player",
            "0",
            "--session-key",
            "00112233445566778899aabbccddeeff",
            "--ticks",
            "10000000",
            "--checkpoint-every",
            "1",
            "--max-work",
            "1000000000000",
        ],
        Stdio::null(),
        10,
    );
    refused(&o, "(raise it with --max-file-bytes)");
    // Raised limits let a small run through.
    let o = tickwise(&["netplay", "--ticks", "60", "--max-work", "1000000000"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
}
