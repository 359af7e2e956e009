//! What each fuzz target checks, one function per target.
//!
//! The functions live here, not in the target files, so that two callers run
//! exactly the same checks: the libFuzzer targets in `fuzz_targets/` (three
//! lines each) and the plain `cargo test` regression test
//! (`crates/tickwise-cli/tests/fuzz_regressions.rs`, which includes this file
//! with `#[path]` and feeds it every file under `fuzz/seeds/<target>/` and
//! `fuzz/regressions/<target>/`). A check either returns or panics; a panic is
//! a finding.
//!
//! Every target asserts "no panic, bounded work" by construction (libFuzzer
//! reports panics, and `-timeout`/`-rss_limit_mb` in `run.sh` report the
//! rest). On top of that each asserts what its API lets it state: replays
//! that are accepted write back byte for byte, the header reader agrees with
//! the full reader, a parsed script renders back to the same commands,
//! accepted configs build worlds and loops that run, and a resume under an
//! accepted lifecycle config conserves time.
#![forbid(unsafe_code)]

use std::fmt::Write as _;

use tickwise::replay::is_valid_name;
use tickwise::{
    CatchUpPolicy, FixedLoop, Fnv1a64, Nanos, Replay, ReplayLimits, Sim, StepLength, TickInput,
    TickInputs, Timestamp, read_header,
};
use tickwise_catalog::Catalog;
use tickwise_cli::script::{self, Command};
use tickwise_sims::horde::{HordeConfig, HordeWorld, scripted_input};
use tickwise_sims::island::{IslandConfig, IslandWorld, LifecycleConfig, MAX_STEP_MS};

/// Every target, as named in `fuzz/Cargo.toml`, `fuzz/seeds/` and `fuzz/regressions/`.
pub const TARGETS: [&str; 7] = [
    "replay_reader",
    "replay_header",
    "script_parser",
    "island_loop_config",
    "island_lifecycle_config",
    "horde_config",
    "inputs_file",
];

/// Runs target `name`'s checks on `data`.
///
/// # Panics
///
/// On a finding, or for an unknown target name.
pub fn run(name: &str, data: &[u8]) {
    match name {
        "replay_reader" => replay_reader(data),
        "replay_header" => replay_header(data),
        "script_parser" => script_parser(data),
        "island_loop_config" => island_loop_config(data),
        "island_lifecycle_config" => island_lifecycle_config(data),
        "horde_config" => horde_config(data),
        "inputs_file" => inputs_file(data),
        other => panic!("unknown fuzz target {other:?}"),
    }
}

/// Limits small enough that one execution stays in the milliseconds: the
/// limits themselves are under test (a declared count above them must be
/// refused before anything is allocated or simulated). Every field is at
/// most [`ReplayLimits::DEFAULT`]'s, which [`replay_header`] relies on.
pub const LIMITS: ReplayLimits = ReplayLimits {
    max_file_bytes: 1 << 20,
    max_ticks: 2_000,
    max_work: 200_000,
    ..ReplayLimits::DEFAULT
};

/// `data` with its declared length and integrity checksum made right, so that
/// mutated bytes reach the header and body parsers instead of stopping at the
/// envelope (random bytes almost never carry a valid checksum). `None` when
/// `data` is too short to hold the fixed header and the trailer.
#[must_use]
pub fn repaired(data: &[u8]) -> Option<Vec<u8>> {
    const LEN_AT: usize = 12; // magic (8) + version (2) + flags (2)
    const TRAILER: usize = 8;
    if data.len() < LEN_AT + 8 + TRAILER {
        return None;
    }
    let mut fixed = data.to_vec();
    let len = fixed.len() as u64;
    fixed[LEN_AT..LEN_AT + 8].copy_from_slice(&len.to_le_bytes());
    let end = fixed.len() - TRAILER;
    let sum = Fnv1a64::hash(&fixed[..end]);
    fixed[end..].copy_from_slice(&sum.to_le_bytes());
    Some(fixed)
}

/// The bytes as given and, when they differ, with the envelope repaired.
fn variants(data: &[u8]) -> impl Iterator<Item = Vec<u8>> {
    let fixed = repaired(data).filter(|f| f.as_slice() != data);
    core::iter::once(data.to_vec()).chain(fixed)
}

/// Replay reader: a result or an error for any bytes, re-simulation bounded
/// by [`LIMITS`], and every accepted file writes back to the same bytes (one
/// encoding per replay, so a replay's hash identifies it).
pub fn replay_reader(data: &[u8]) {
    for bytes in variants(data) {
        if let Err(e) = Catalog::builtin().verify(&bytes, &LIMITS) {
            assert!(!e.to_string().is_empty(), "empty error message");
        }
        if let Ok(r) = Replay::<i32>::from_bytes(&bytes, &LIMITS) {
            assert!(r.to_bytes() == bytes, "i32 replay did not round-trip");
        }
        if let Ok(r) = Replay::<TickInput>::from_bytes(&bytes, &LIMITS) {
            assert!(r.to_bytes() == bytes, "TickInput replay did not round-trip");
        }
    }
}

/// Replay header reader (what `verify` reads to pick a sim): anything it
/// accepts is within the limits; it accepts every file the full reader
/// accepts, with the same header; and raising the limits never changes the
/// header it reads.
pub fn replay_header(data: &[u8]) {
    for bytes in variants(data) {
        let full_i32 = Replay::<i32>::from_bytes(&bytes, &LIMITS).ok();
        let full_tick = Replay::<TickInput>::from_bytes(&bytes, &LIMITS).ok();
        match read_header(&bytes, &LIMITS) {
            Ok(h) => {
                assert!(h.ticks <= LIMITS.max_ticks, "ticks above the limit");
                assert!(h.checkpoint_every >= 1, "checkpoint interval 0");
                assert!(
                    h.config.len() <= LIMITS.max_config_bytes,
                    "config too large"
                );
                assert!(
                    is_valid_name(h.sim_id.as_bytes()),
                    "invalid sim id accepted"
                );
                let loose = read_header(&bytes, &ReplayLimits::DEFAULT);
                assert!(
                    loose.as_ref() == Ok(&h),
                    "looser limits read another header"
                );
                if let Some(r) = &full_i32 {
                    assert!(r.header() == &h, "full reader (i32) read another header");
                }
                if let Some(r) = &full_tick {
                    assert!(
                        r.header() == &h,
                        "full reader (TickInput) read another header"
                    );
                }
            }
            Err(e) => {
                assert!(!e.to_string().is_empty(), "empty error message");
                assert!(
                    full_i32.is_none() && full_tick.is_none(),
                    "header refused ({e}) but the full reader accepted the file"
                );
            }
        }
    }
}

/// One command in the script language's canonical spelling.
fn render(command: &Command) -> String {
    let mut s = String::from(command.name());
    match command {
        Command::Frames { count, ms } => write!(s, " {count} {ms}"),
        Command::Frame(list) => list.iter().try_for_each(|ms| write!(s, " {ms}")),
        Command::Advance(n) => write!(s, " {n}"),
        Command::ResumeAfter(ms) => write!(s, " {ms}"),
        Command::Speed(speed) => write!(s, " {} {}", speed.numerator(), speed.denominator()),
        Command::Push(name) => write!(s, " {name}"),
        Command::Pause | Command::Background | Command::Pop => Ok(()),
    }
    .unwrap_or_default();
    s
}

/// `tickwise script`'s parser and its `--inputs` reader: a result or an
/// error naming a line that exists; accepted scripts have strictly increasing
/// line numbers, and rendering their commands back to text parses to the same
/// commands (the parser reads exactly what the script language says).
pub fn script_parser(data: &[u8]) {
    if let Ok(text) = core::str::from_utf8(data) {
        let lines = text.lines().count();
        match script::parse(text) {
            Ok(parsed) => {
                let mut last = 0;
                for l in &parsed {
                    assert!(
                        l.line > last && l.line <= lines,
                        "line number {} out of order",
                        l.line
                    );
                    last = l.line;
                }
                let rendered: String = parsed.iter().map(|l| render(&l.command) + "\n").collect();
                let again = match script::parse(&rendered) {
                    Ok(again) => again,
                    Err(e) => panic!("canonical rendering refused: {e}\n{rendered}"),
                };
                assert!(
                    again.len() == parsed.len(),
                    "rendering changed the command count"
                );
                for (a, b) in parsed.iter().zip(&again) {
                    assert!(
                        a.command == b.command,
                        "{:?} rendered as {:?}",
                        a.command,
                        b.command
                    );
                }
            }
            Err(e) => {
                assert!(e.line <= lines, "error names line {} of {lines}", e.line);
                assert!(!e.message.is_empty(), "empty error message");
            }
        }
    }
    if let Err(e) = tickwise_catalog::parse_inputs::<IslandWorld>(data) {
        assert!(!e.to_string().is_empty(), "empty error message");
    }
}

/// The island loop config (`config/island_loop.json`): an accepted config is
/// within its documented ranges, and the world and loop it configures run
/// (extreme inputs, 0 ms to huge frames, a capped frame) without panicking,
/// deterministically.
pub fn island_loop_config(data: &[u8]) {
    let cfg = match IslandConfig::from_json(data) {
        Ok(cfg) => cfg,
        Err(e) => {
            assert!(!e.to_string().is_empty(), "empty error message");
            return;
        }
    };
    assert!(
        (1..=MAX_STEP_MS).contains(&cfg.step_ms),
        "stepMs out of range"
    );
    assert!(cfg.friction_den >= 1 && (0..=cfg.friction_den).contains(&cfg.friction_num));
    assert!(cfg.max_steps_per_frame >= 1);
    let clock = cfg.clock_config();
    assert!(
        Ok(clock.step()) == StepLength::from_millis(cfg.step_ms),
        "step mismatch"
    );
    assert!(clock.max_steps_per_frame().get() == cfg.max_steps_per_frame);
    let run = || {
        let inputs = vec![1, -1, i32::MAX, i32::MIN, 0, 7];
        let mut lp = FixedLoop::new(
            IslandWorld::new(&cfg),
            TickInputs::new(inputs),
            clock,
            CatchUpPolicy::Full,
        );
        for ms in [0, 1, cfg.step_ms, cfg.step_ms * 3 + 1, 86_400_000] {
            let r = lp.frame(Nanos::from_millis(ms));
            assert!(r.steps <= cfg.max_steps_per_frame, "step cap exceeded");
        }
        lp.advance(64);
        lp.sim().digest()
    };
    assert!(
        run() == run(),
        "same config, same frames, different digests"
    );
}

/// The island lifecycle config (`config/island_lifecycle.json`): an accepted
/// config gives a policy whose resume conserves time exactly (elapsed =
/// caught-up steps + carried + dropped), never catches up more than it owes
/// or than its cap, and runs the steps it reports.
pub fn island_lifecycle_config(data: &[u8]) {
    let lc = match LifecycleConfig::from_json(data) {
        Ok(lc) => lc,
        Err(e) => {
            assert!(!e.to_string().is_empty(), "empty error message");
            return;
        }
    };
    assert!(
        (1..=MAX_STEP_MS).contains(&lc.step_ms),
        "stepMs out of range"
    );
    let base = IslandConfig::from_json(include_bytes!("../../config/island_loop.json"))
        .unwrap_or_else(|e| panic!("checked-in island config: {e}"));
    let cfg = IslandConfig {
        step_ms: lc.step_ms,
        ..base
    };
    let step = Nanos::from_millis(lc.step_ms);
    for away_ms in [0, lc.step_ms - 1, 31, 32, 33, 5_000] {
        let mut lp = FixedLoop::new(
            IslandWorld::new(&cfg),
            TickInputs::new(vec![1, -1]),
            cfg.clock_config(),
            lc.policy,
        );
        lp.background(Timestamp::ZERO)
            .unwrap_or_else(|e| panic!("background: {e}"));
        let r = lp
            .resume(Timestamp::from_millis(away_ms))
            .unwrap_or_else(|e| panic!("resume: {e}"));
        assert!(r.elapsed == Nanos::from_millis(away_ms), "elapsed");
        assert!(r.wanted_steps == away_ms / lc.step_ms, "wanted steps");
        assert!(
            r.catch_up_steps <= r.wanted_steps,
            "caught up more than owed"
        );
        match lc.policy {
            CatchUpPolicy::Freeze => assert!(r.catch_up_steps == 0, "freeze ran steps"),
            CatchUpPolicy::Full => assert!(r.catch_up_steps == r.wanted_steps, "full skipped"),
            CatchUpPolicy::Capped { max_steps, .. } => {
                assert!(r.catch_up_steps <= max_steps, "cap exceeded");
            }
        }
        let ran = step.as_nanos() * r.catch_up_steps;
        let total = ran + r.carried.as_nanos() + r.dropped.as_nanos();
        assert!(total == r.elapsed.as_nanos(), "time not conserved: {r:?}");
        assert!(r.carried < step, "carried a whole step");
        assert!(
            lp.tick().get() == r.catch_up_steps,
            "reported steps not run"
        );
    }
}

/// The horde config (`config/horde.json`): an accepted config builds a world
/// (with few enemies, so one execution stays fast; every other key as given)
/// that steps deterministically with extreme and scripted inputs.
pub fn horde_config(data: &[u8]) {
    let cfg = match HordeConfig::from_json(data) {
        Ok(cfg) => cfg,
        Err(e) => {
            assert!(!e.to_string().is_empty(), "empty error message");
            return;
        }
    };
    assert!((1..=1000).contains(&cfg.tick_hz()), "tickHz out of range");
    assert!(
        cfg.grid_cell_px() >= 2 * cfg.enemy_radius_px(),
        "grid cell below two radii"
    );
    let _ = (
        cfg.clock_config(),
        cfg.catch_up_policy(),
        cfg.settle_ticks(),
        cfg.summary(),
    );
    let small = cfg
        .with_enemies(u64::from(cfg.enemies().min(24)))
        .unwrap_or_else(|e| panic!("with_enemies: {e}"));
    let run = || {
        let mut w = HordeWorld::new(&small);
        let mut wild = TickInput::default();
        wild.axes[0] = i16::MIN;
        wild.axes[1] = i16::MAX;
        for t in 0..40 {
            w.step(&if t % 7 == 3 { wild } else { scripted_input(t) });
        }
        w.digest()
    };
    assert!(
        run() == run(),
        "same config, same inputs, different digests"
    );
}

/// The inputs-file reader (`record --inputs FILE`): a list of inputs or an
/// error, for both sims' input forms. Kept to three lines so it is easy to
/// point at the reader's new home.
pub fn inputs_file(data: &[u8]) {
    let _ = tickwise_catalog::parse_inputs::<IslandWorld>(data);
    let _ = tickwise_catalog::parse_inputs::<HordeWorld>(data);
}
