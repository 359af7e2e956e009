//! The fuzz targets' checks under plain `cargo test`: every seed in
//! `fuzz/seeds/<target>/` and every kept finding in
//! `fuzz/regressions/<target>/` goes through exactly the checks the fuzzer
//! runs (`fuzz/src/lib.rs` and its modules, included below), so a fixed
//! crash stays fixed without cargo-fuzz, and a seed that stops parsing is
//! noticed here. The targets in `fuzz_checks::DELEGATED` (the duel
//! example's `duel_snapshot` and `duel_config`: the duel depends on this
//! crate, so this test cannot link it) are run by the test named there instead; this one checks
//! that their seeds and that test are there.

use std::path::{Path, PathBuf};

use tickwise_net::{MAC_LEN, Session, SessionConfig};
use tickwise_sims::island::{IslandConfig, IslandWorld};

// `unexpected_cfgs`: lib.rs declares the duel module under the fuzz crate's
// `duel` feature, which this crate has not, so here it is left out.
#[allow(unreachable_pub, dead_code, unexpected_cfgs)]
#[path = "../../../fuzz/src/lib.rs"]
mod fuzz_checks;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

use fuzz_checks::corpus::files;

/// Feeds every input in `root/<target>/` (for the targets named in
/// `targets`) through its target's checks; returns how many ran.
///
/// An empty corpus is an error, not a pass: a target folder with no input
/// in it, or no input at all. A runner that checks nothing would report
/// success if the files were moved or lost.
fn run_dir(root: &Path, targets: &[&str]) -> Result<usize, String> {
    let mut n = 0;
    for target in targets {
        n += fuzz_checks::corpus::run_dir(&root.join(target), |data| {
            fuzz_checks::run(target, data);
        })
        .map_err(|e| format!("{target}: {e}"))?;
    }
    if n == 0 {
        return Err(format!("no input at all under {}", root.display()));
    }
    Ok(n)
}

fn run_all(kind: &str) -> usize {
    run_dir(&repo().join("fuzz").join(kind), &fuzz_checks::TARGETS)
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_seed_passes_its_targets_checks() {
    for target in fuzz_checks::TARGETS {
        // replay_header shares replay_reader's seeds (see fuzz/README.md).
        let dir = if target == "replay_header" {
            "replay_reader"
        } else {
            target
        };
        let seeds = files(&repo().join("fuzz/seeds").join(dir));
        assert!(!seeds.is_empty(), "no seeds for fuzz target {target}");
    }
    assert!(run_all("seeds") >= fuzz_checks::TARGETS.len());
}

/// A target's name is one of [`fuzz_checks::TARGETS`] or
/// [`fuzz_checks::DELEGATED`].
fn known_target(name: &str) -> bool {
    fuzz_checks::TARGETS.contains(&name) || fuzz_checks::DELEGATED.iter().any(|(t, _)| *t == name)
}

#[test]
fn every_seed_folder_names_a_known_target() {
    for entry in std::fs::read_dir(repo().join("fuzz/seeds")).expect("fuzz/seeds exists") {
        let name = entry.expect("entry").file_name();
        let name = name.to_string_lossy();
        assert!(
            known_target(&name),
            "fuzz/seeds/{name} is not a fuzz target"
        );
    }
}

#[test]
fn every_target_is_built_and_run_by_the_fuzzer() {
    // The targets this library knows are the files in fuzz/fuzz_targets/
    // and the targets fuzz/run.sh runs by default, no more, no fewer.
    let mut known: Vec<&str> = fuzz_checks::TARGETS.to_vec();
    known.extend(fuzz_checks::DELEGATED.iter().map(|(t, _)| *t));
    known.sort_unstable();
    let mut bins: Vec<String> = files(&repo().join("fuzz/fuzz_targets"))
        .iter()
        .filter_map(|p| Some(p.file_stem()?.to_str()?.to_owned()))
        .collect();
    bins.sort_unstable();
    assert_eq!(bins, known, "fuzz/fuzz_targets/");
    let script = std::fs::read_to_string(repo().join("fuzz/run.sh")).expect("fuzz/run.sh");
    let list = script
        .split("ALL_TARGETS=(")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .expect("ALL_TARGETS=(...) in fuzz/run.sh");
    let mut run: Vec<&str> = list.split_whitespace().collect();
    run.sort_unstable();
    assert_eq!(run, known, "ALL_TARGETS in fuzz/run.sh");
}

#[test]
fn delegated_targets_are_run_by_the_test_named() {
    // Not run here, not skipped either: each delegated target has seeds,
    // a fuzz target file, and a test that includes its checks and runs its
    // seeds and kept findings (examples/duel/tests/fuzz_regressions.rs,
    // under `cargo test -p tickwise-example-duel`).
    for (target, test) in fuzz_checks::DELEGATED {
        assert!(!fuzz_checks::TARGETS.contains(&target), "{target} twice");
        let seeds = files(&repo().join("fuzz/seeds").join(target));
        assert!(seeds.len() >= 10, "{} seeds for {target}", seeds.len());
        let bin = repo().join(format!("fuzz/fuzz_targets/{target}.rs"));
        assert!(bin.is_file(), "no {}", bin.display());
        let source = std::fs::read_to_string(repo().join(test))
            .unwrap_or_else(|e| panic!("{target} is delegated to {test}: {e}"));
        for needle in [
            "#[path = \"../../../fuzz/src/".to_owned(),
            format!("(\"{target}\", duel_checks::{target})"),
            "fuzz_dir(\"seeds\", target)".to_owned(),
            "fuzz_dir(\"regressions\", target)".to_owned(),
            "#[test]".to_owned(),
        ] {
            assert!(source.contains(&needle), "{test} lacks {needle}");
        }
    }
}

#[test]
fn every_kept_finding_passes_its_targets_checks() {
    let dir = repo().join("fuzz/regressions");
    let mut kept = 0;
    for entry in std::fs::read_dir(&dir).expect("fuzz/regressions exists") {
        let name = entry.expect("entry").file_name();
        let name = name.to_string_lossy();
        assert!(
            name == "README.md" || known_target(&name),
            "fuzz/regressions/{name} is not a fuzz target"
        );
        // A delegated target's kept findings are run by its own test.
        if fuzz_checks::TARGETS.contains(&&*name) {
            kept += files(&dir.join(&*name)).len();
        }
    }
    // Every kept finding ran (none skipped), and there is at least one.
    assert_eq!(run_all("regressions"), kept);
    assert!(kept >= 2, "{kept} kept findings");
}

#[test]
fn an_empty_corpus_fails_the_runner() {
    let root = std::env::temp_dir().join(format!("tickwise-fuzz-empty-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    // Nothing at all.
    std::fs::create_dir_all(&root).unwrap();
    let e = run_dir(&root, &fuzz_checks::TARGETS).unwrap_err();
    assert!(e.contains("no input at all"), "{e}");
    // A target's folder with only its README.
    std::fs::create_dir_all(root.join("net_datagram")).unwrap();
    std::fs::write(root.join("net_datagram/README.md"), "notes").unwrap();
    let e = run_dir(&root, &fuzz_checks::TARGETS).unwrap_err();
    assert!(
        e.contains("net_datagram") && e.contains("holds no input"),
        "{e}"
    );
    // One input: it runs.
    let seed = repo().join("fuzz/seeds/net_datagram/first_datagram");
    std::fs::copy(seed, root.join("net_datagram/first_datagram")).unwrap();
    assert_eq!(run_dir(&root, &fuzz_checks::TARGETS), Ok(1));
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn repairing_the_envelope_reaches_the_body() {
    // The replay targets also try each input with its length and checksum
    // made right; without that, mutated bytes would almost never get past
    // the integrity check. A seed with a wrong checksum is refused, and the
    // repaired copy is the original file again.
    let seed = std::fs::read(repo().join("fuzz/seeds/replay_reader/island_seed_100.twr"))
        .expect("seed replay");
    let mut broken = seed.clone();
    let last = broken.len() - 1;
    broken[last] ^= 0x55;
    assert!(tickwise::read_header(&broken, &fuzz_checks::LIMITS).is_err());
    assert_eq!(fuzz_checks::repaired(&broken).as_deref(), Some(&seed[..]));
    assert_eq!(fuzz_checks::repaired(&seed[..27]), None);
}

#[test]
fn the_kept_net_finding_still_reaches_the_session() {
    // Rewritten for wire version 2 (version byte and the fuzz key's session
    // id): sealed by the target, it is accepted whole (the checks ack near
    // u64::MAX that once overflowed); only its raw copy is dropped.
    let data = std::fs::read(repo().join("fuzz/regressions/net_datagram/checks_ack_u64_max"))
        .expect("kept finding");
    let s = fuzz_checks::net_datagram_session(&data);
    assert_eq!(s.stats().received, 2);
    assert_eq!(s.stats().drops.unauthenticated, 1);
    assert_eq!(s.stats().drops.total(), 1);
}

/// Sends nowhere, keeps what is sent, receives nothing (datagrams are
/// handed over with `handle_datagram`, as the fuzz target does).
#[derive(Default)]
struct Capture(Vec<(u8, Vec<u8>)>);

impl tickwise_net::Transport for Capture {
    fn send(&mut self, to: u8, bytes: &[u8]) {
        self.0.push((to, bytes.to_vec()));
    }
    fn recv(&mut self, _: &mut [u8]) -> Option<tickwise_net::Datagram> {
        None
    }
}

/// A datagram without its MAC: what the seeds hold (the target seals it
/// again, [`fuzz_checks::net_seal`]).
fn unsealed(d: &[u8]) -> Vec<u8> {
    let unsealed = d[..d.len() - MAC_LEN].to_vec();
    assert_eq!(
        fuzz_checks::net_seal(&unsealed),
        d,
        "sealed with the fuzz key"
    );
    unsealed
}

/// Player 1's datagrams to player 0 in a real match of `rounds` rounds,
/// with player 0 the fuzz target's own session, given them in order and
/// ticked after each with the target's inputs; its datagrams go back to
/// player 1. Fed to the target, they replay that match. Player 1 runs
/// `world` (another world than player 0's makes a desync). The datagrams
/// are returned without their MAC.
fn capture_match(world: fuzz_checks::IslandPair, rounds: usize) -> Vec<Vec<u8>> {
    let mut a = fuzz_checks::net_session(0);
    let mut b = Session::new(world, SessionConfig::new(2, 1, fuzz_checks::NET_KEY)).unwrap();
    let mut datagrams: Vec<Vec<u8>> = Vec::new();
    for round in 0..rounds {
        let mut b_out = Capture::default();
        let _ = b.tick(&[1, 1, -1, 0][round % 4], &mut b_out);
        for (to, d) in b_out.0 {
            assert_eq!(to, 0);
            a.handle_datagram(Some(1), &d);
            let mut a_out = Capture::default();
            let _ = a.tick(&fuzz_checks::net_local_input(datagrams.len()), &mut a_out);
            for (to, x) in a_out.0 {
                assert_eq!(to, 1);
                b.handle_datagram(Some(0), &x);
            }
            datagrams.push(unsealed(&d));
        }
    }
    datagrams
}

/// A host feeding spectator slot 4 while playing player 1: its first
/// spectator datagrams, then what a spectator answers to them.
fn capture_spectating(rounds: usize) -> Vec<Vec<u8>> {
    let mut cfg = SessionConfig::new(2, 0, fuzz_checks::NET_KEY);
    cfg.spectators = 1;
    let mut host = Session::new(fuzz_checks::net_world(), cfg).unwrap();
    host.add_spectator(4, 0).unwrap();
    let mut b = fuzz_checks::net_session(1);
    let mut spectate = Vec::new();
    for round in 0..rounds {
        let mut h_out = Capture::default();
        let _ = host.tick(&fuzz_checks::net_local_input(round), &mut h_out);
        for (to, d) in h_out.0 {
            match to {
                1 => b.handle_datagram(Some(0), &d),
                _ => spectate.push(d),
            }
        }
        let mut b_out = Capture::default();
        let _ = b.tick(&0, &mut b_out);
        for (_, d) in b_out.0 {
            host.handle_datagram(Some(1), &d);
        }
    }
    // Only datagrams that carry inputs, the last few.
    spectate.retain(|d| d.len() > 17 + MAC_LEN);
    let keep = spectate.split_off(spectate.len().saturating_sub(3));
    let mut spectator =
        tickwise_net::Spectator::new(fuzz_checks::net_world(), 0, 4, 2, &fuzz_checks::NET_KEY);
    struct Feed(Vec<Vec<u8>>, Vec<Vec<u8>>);
    impl tickwise_net::Transport for Feed {
        fn send(&mut self, _: u8, bytes: &[u8]) {
            self.1.push(bytes.to_vec());
        }
        fn recv(&mut self, buf: &mut [u8]) -> Option<tickwise_net::Datagram> {
            let d = self.0.pop()?;
            buf[..d.len()].copy_from_slice(&d);
            Some(tickwise_net::Datagram {
                from: Some(0),
                len: d.len(),
            })
        }
    }
    let mut feed = Feed(keep.iter().rev().cloned().collect(), Vec::new());
    let _ = spectator.tick_once(&mut feed, 64);
    let _ = spectator.tick_once(&mut feed, 64);
    keep.into_iter()
        .chain(feed.1)
        .map(|d| unsealed(&d))
        .collect()
}

/// One hand-made datagram of each leave and rejoin kind (docs/netplay.md),
/// without its MAC: player 1 says goodbye, asks for its slot back (epoch
/// 0), acknowledges a notice and chunks; "player 0" sends the fuzz target's
/// rejoiner (slot 1, epoch 0) a snapshot chunk and a refusal; player 1
/// sends a departure and a notice naming player 0.
fn leave_and_rejoin_datagrams() -> Vec<Vec<u8>> {
    let id = tickwise_net::Auth::new(&fuzz_checks::NET_KEY).session_id();
    let env = |kind: u8, sender: u8, seq: u8| {
        let mut v = b"TN".to_vec();
        v.extend([tickwise_net::wire::WIRE_VERSION, kind]);
        v.extend(id.to_le_bytes());
        v.extend([sender, seq]);
        v
    };
    let epoch = 0u64.to_le_bytes();
    let with = |mut v: Vec<u8>, parts: &[&[u8]]| {
        for p in parts {
            v.extend(*p);
        }
        v
    };
    vec![
        with(env(5, 1, 1), &[&[0, 0, 5, 5, 0, 0]]),
        with(env(8, 1, 2), &[&[0], &epoch, &[5]]),
        with(env(6, 1, 3), &[]),
        with(env(7, 1, 4), &[&epoch]),
        with(env(9, 1, 5), &[&[1, 5]]),
        with(env(11, 1, 6), &[&epoch, &[0], &0u64.to_le_bytes()]),
        with(
            env(10, 0, 7),
            &[&epoch, &[5, 10], &7u64.to_le_bytes(), &[0], b"0123456789"],
        ),
        with(env(12, 0, 8), &[&epoch, &[2, 0x88, 0x27, 0x80, 0x20]]),
    ]
}

/// `batch_upload`'s input for these limits, cut points and body (see
/// `BatchCase::from_input`).
fn batch_input(
    max_replays: u8,
    max_replay: u16,
    max_total: u16,
    cuts: [u8; 3],
    body: &[u8],
) -> Vec<u8> {
    let mut out = vec![max_replays - 1];
    out.extend(max_replay.to_be_bytes());
    out.extend(max_total.to_be_bytes());
    out.extend(cuts);
    out.extend(body);
    out
}

/// Every seed file of the two network-facing targets, by name.
fn network_seeds() -> Vec<(&'static str, Vec<u8>)> {
    let cfg = IslandConfig::from_json(include_bytes!("../../../config/island_loop.json")).unwrap();
    let other = IslandWorld::new(&IslandConfig {
        seed: cfg.seed.wrapping_add(1),
        ..cfg
    });
    let join =
        |d: Vec<Vec<u8>>| fuzz_checks::join_datagrams(&d).expect("datagrams under 255 bytes");
    let first = capture_match(fuzz_checks::net_world(), 1);
    let replay = std::fs::read(repo().join("fuzz/seeds/replay_reader/island_empty.twr")).unwrap();
    let frame = tickwise_service::batch::frame_batch;
    vec![
        ("net_datagram/first_datagram", join(first)),
        (
            "net_datagram/match_24_rounds",
            join(capture_match(fuzz_checks::net_world(), 24)),
        ),
        (
            "net_datagram/desync_and_fields",
            join(capture_match(fuzz_checks::IslandPair::new(other), 24)),
        ),
        ("net_datagram/spectator", join(capture_spectating(20))),
        (
            "net_datagram/leave_and_rejoin",
            join(leave_and_rejoin_datagrams()),
        ),
        (
            "batch_upload/three_replays",
            batch_input(
                8,
                64,
                1024,
                [40, 128, 200],
                &frame(&[&b"abc"[..], b"", b"0123456789"]),
            ),
        ),
        (
            "batch_upload/one_real_replay",
            batch_input(4, 1024, 2048, [1, 100, 254], &frame(&[&replay])),
        ),
        (
            "batch_upload/replay_too_large",
            batch_input(
                8,
                4,
                1024,
                [10, 100, 200],
                &frame(&[&b"ok"[..], b"too long"]),
            ),
        ),
        (
            "batch_upload/too_many_replays",
            batch_input(2, 64, 1024, [30, 60, 90], &frame(&[&b"a"[..], b"b", b"c"])),
        ),
        (
            "batch_upload/over_the_total",
            batch_input(
                8,
                64,
                20,
                [50, 120, 250],
                &frame(&[&b"0123456789"[..], b"0123456789"]),
            ),
        ),
        (
            "batch_upload/truncated",
            batch_input(8, 64, 1024, [80, 160, 240], &frame(&[&b"abc"[..]])[..5]),
        ),
    ]
}

/// Writes the seeds of `net_datagram` and `batch_upload` (checked in; run
/// again by hand when the wire format or the island sim changes:
/// `cargo test -p tickwise-cli --test fuzz_regressions -- --ignored`).
#[test]
#[ignore = "writes fuzz/seeds/net_datagram/ and fuzz/seeds/batch_upload/"]
fn write_network_seeds() {
    for (name, bytes) in network_seeds() {
        let path = repo().join("fuzz/seeds").join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
    }
}

#[test]
fn network_seeds_are_current_and_reach_the_session() {
    // The checked-in seeds are what the generator writes today (a change
    // to the wire format or the sim shows up here), and they replay a real
    // match: fed to the target, player 0 confirms ticks, compares
    // checksums and drops nothing but the raw (unsealed) copy of each
    // datagram, as unauthenticated; the mismatched match reports its desync
    // with the fields, and the spectator seed is refused by the session
    // (spectator traffic is not a player's), one drop per datagram, plus
    // the raw copies.
    for (name, bytes) in network_seeds() {
        let path = repo().join("fuzz/seeds").join(name);
        let kept = std::fs::read(&path).unwrap_or_default();
        assert!(
            kept == bytes,
            "{} is stale: run write_network_seeds",
            path.display()
        );
    }
    let seed =
        |name: &str| std::fs::read(repo().join("fuzz/seeds/net_datagram").join(name)).unwrap();
    let matched = seed("match_24_rounds");
    let n = fuzz_checks::split_datagrams(&matched).len() as u64;
    let s = fuzz_checks::net_datagram_session(&matched);
    assert!(s.confirmed_tick() >= 20, "{}", s.confirmed_tick());
    assert!(s.stats().checks_compared >= 20);
    // (A raw copy shorter than an envelope and a MAC is cut short.)
    let d = s.stats().drops;
    assert!(d.unauthenticated > n / 2, "{d:?}");
    assert_eq!(d.unauthenticated + d.malformed, n);
    assert_eq!(d.total(), n);
    assert!(s.desync().is_none());
    let s = fuzz_checks::net_datagram_session(&seed("desync_and_fields"));
    let d = s.desync().expect("a desync");
    assert!(d.fields.as_ref().is_some_and(|f| !f.is_empty()), "{d}");
    // The leave-and-rejoin seed: player 1's goodbye is taken (it is gone,
    // absent from tick 0 in a 2-player match), and its later acks are
    // `departed` drops.
    let s = fuzz_checks::net_datagram_session(&seed("leave_and_rejoin"));
    assert_eq!(s.departed(1), Some(0));
    assert!(s.stats().drops.departed >= 2, "{:?}", s.stats().drops);
    let spectator = seed("spectator");
    let n = fuzz_checks::split_datagrams(&spectator).len() as u64;
    let s = fuzz_checks::net_datagram_session(&spectator);
    assert!(n >= 4 && s.stats().received == 2 * n);
    let d = s.stats().drops;
    assert_eq!(d.unknown_peer, n);
    assert_eq!(d.unauthenticated + d.malformed, n);
    assert_eq!(d.total(), 2 * n);
}
