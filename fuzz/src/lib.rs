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
//! accepted configs build worlds and loops that run, a resume under an
//! accepted lifecycle config conserves time, every netplay datagram is
//! accepted or counted under its reason and decoded messages re-encode to
//! their bytes, and a batch upload splits the same however its bytes arrive.
#![forbid(unsafe_code)]

use std::fmt::Write as _;

use tickwise::codec::{Reader, put_varint};
use tickwise::replay::is_valid_name;
use tickwise::{
    CatchUpPolicy, FixedLoop, Fnv1a64, Nanos, Replay, ReplayInput, ReplayLimits, Sim, StepLength,
    TickInput, TickInputs, Timestamp, read_header, read_snapshot, write_snapshot,
};
use tickwise_catalog::Catalog;
use tickwise_catalog::serde_json;
use tickwise_lab::script::{self, Command};
use tickwise_net::wire::{self, Body, Envelope, MAX_PACKET, WIRE_MAGIC, WIRE_VERSION, WireError};
use tickwise_net::{
    Auth, Datagram, Drops, Rejoiner, Session, SessionConfig, SessionKey, SessionStats,
    SnapshotCodec, Spectator, Transport,
};
use tickwise_service::batch::{BatchError, BatchReader, frame_batch};
use tickwise_sims::horde::{HordeConfig, HordeWorld, scripted_input};
use tickwise_sims::island::{IslandConfig, IslandWorld, LifecycleConfig, MAX_STEP_MS};

/// Every target, as named in `fuzz/Cargo.toml`, `fuzz/seeds/` and `fuzz/regressions/`.
pub const TARGETS: [&str; 11] = [
    "replay_reader",
    "replay_header",
    "script_parser",
    "island_loop_config",
    "island_lifecycle_config",
    "horde_config",
    "inputs_file",
    "net_datagram",
    "batch_upload",
    "room_message",
    "rejoin_snapshot",
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
        "net_datagram" => net_datagram(data),
        "batch_upload" => batch_upload(data),
        "room_message" => room_message(data),
        "rejoin_snapshot" => rejoin_snapshot(data),
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
    if let Err(e) = tickwise_catalog::parse_inputs::<IslandWorld>(data, 1) {
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
    let run = || wild_run(HordeWorld::new(&small), 1);
    assert!(
        run() == run(),
        "same config, same inputs, different digests"
    );
}

/// Steps `w` 40 ticks, the first `players` players all on the scripted
/// input with an extreme stick every 7th tick, and returns its digest.
fn wild_run(mut w: HordeWorld, players: usize) -> String {
    let mut wild = TickInput::default();
    wild.axes[0] = i16::MIN;
    wild.axes[1] = i16::MAX;
    for t in 0..40 {
        let input = if t % 7 == 3 { wild } else { scripted_input(t) };
        w.step(&vec![input; players]);
    }
    w.digest()
}

/// The horde's rejoin snapshot (`tickwise::read_snapshot`, what a
/// rejoining player reads from the chunks a peer sent): any bytes are read
/// or refused with an error, never a panic. The first byte picks the player
/// count (1 to 4); the rest is the snapshot, read into a world of 24
/// enemies. A state that is read steps 40 ticks without a panic
/// (overflow checks on), deterministically, and writes back to bytes that
/// read into a fresh world with the same checksum.
pub fn rejoin_snapshot(data: &[u8]) {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let cfg = HordeConfig::from_json(include_bytes!("../../config/horde.json"))
        .and_then(|c| c.with_enemies(24))
        .and_then(|c| c.with_players(u64::from(pick % 4) + 1))
        .unwrap_or_else(|e| panic!("config: {e}"));
    let mut read = HordeWorld::new(&cfg);
    if let Err(e) = read_snapshot(&mut read, bytes) {
        assert!(!e.to_string().is_empty(), "empty error message");
        return;
    }
    let mut again = HordeWorld::new(&cfg);
    read_snapshot(&mut again, &write_snapshot(&read))
        .unwrap_or_else(|e| panic!("a state that was read does not read back: {e}"));
    assert_eq!(
        read.checksum(),
        again.checksum(),
        "written back, another state"
    );
    assert!(
        wild_run(read, cfg.players()) == wild_run(again, cfg.players()),
        "same state, same inputs, different digests"
    );
}

/// The inputs-file reader (`record --inputs FILE`): a list of inputs or an
/// error, for both sims' input forms. Kept to three lines so it is easy to
/// point at the reader's new home.
pub fn inputs_file(data: &[u8]) {
    let _ = tickwise_catalog::parse_inputs::<IslandWorld>(data, 1);
    let _ = tickwise_catalog::parse_inputs::<HordeWorld>(data, 2);
}

/// The most datagrams one `net_datagram` execution feeds (each is followed
/// by a tick of every session, so this bounds an execution's work; it is
/// past the 300-tick disconnect timeout, so an ended session is fuzzed too).
pub const MAX_DATAGRAMS: usize = 512;

/// Splits a `net_datagram` input into datagrams: a length byte, then that
/// many bytes (fewer if the input ends first); the length byte 255 takes
/// the rest of the input, so datagrams over the 508-byte limit (and the
/// 1536-byte receive buffer) are reachable too.
#[must_use]
pub fn split_datagrams(data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = data;
    while let Some((&n, tail)) = rest.split_first() {
        let n = if n == u8::MAX {
            tail.len()
        } else {
            usize::from(n).min(tail.len())
        };
        let (datagram, after) = tail.split_at(n);
        out.push(datagram);
        rest = after;
    }
    out
}

/// The inverse of [`split_datagrams`] (for writing seeds): `None` when a
/// datagram other than the last is 255 bytes or longer.
#[must_use]
pub fn join_datagrams<B: AsRef<[u8]>>(datagrams: &[B]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    for (i, d) in datagrams.iter().enumerate() {
        let d = d.as_ref();
        match u8::try_from(d.len()) {
            Ok(n) if n < u8::MAX => out.push(n),
            _ if i + 1 == datagrams.len() => out.push(u8::MAX),
            _ => return None,
        }
        out.extend_from_slice(d);
    }
    Some(out)
}

/// Two island worlds side by side, one per player: player `p`'s input
/// steps world `p`. The `net_datagram` sessions' sim: two players with the
/// island's i32 inputs (so captured datagrams stay valid seeds).
#[derive(Clone, Debug)]
pub struct IslandPair([IslandWorld; 2]);

impl IslandPair {
    /// Both players start from `world`.
    #[must_use]
    pub fn new(world: IslandWorld) -> IslandPair {
        IslandPair([world.clone(), world])
    }
}

impl Sim for IslandPair {
    type Input = i32;
    fn players(&self) -> usize {
        2
    }
    fn step(&mut self, inputs: &[i32]) {
        for (w, i) in self.0.iter_mut().zip(inputs) {
            w.step(core::slice::from_ref(i));
        }
    }
    fn visit_state(&self, v: &mut dyn tickwise::StateVisitor) {
        for w in &self.0 {
            w.visit_state(v);
        }
    }
}

/// The sim of the `net_datagram` sessions: a pair of island worlds of the
/// checked-in config.
#[must_use]
pub fn net_world() -> IslandPair {
    let cfg = IslandConfig::from_json(include_bytes!("../../config/island_loop.json"))
        .unwrap_or_else(|e| panic!("checked-in island config: {e}"));
    IslandPair::new(IslandWorld::new(&cfg))
}

/// The session key of the `net_datagram` sessions (a fixed test key, so
/// the target can seal the fuzzer's bytes).
pub const NET_KEY: SessionKey = SessionKey::from_bytes(*b"tickwise fuzzkey");

/// `bytes` with their MAC under [`NET_KEY`] appended: what an authentic
/// peer would send. The seeds are real datagrams without their MAC, so
/// sealed they are the real datagrams again, and the fuzzer's mutations
/// get past the MAC to the decoder and the session.
#[must_use]
pub fn net_seal(bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    out.extend_from_slice(&Auth::new(&NET_KEY).tag(bytes));
    out
}

/// Player `local`'s session of a 2-player match, default settings
/// (key [`NET_KEY`], input delay 2, window 8, every confirmed tick checked).
#[must_use]
pub fn net_session(local: u8) -> Session<IslandPair> {
    Session::new(net_world(), SessionConfig::new(2, local, NET_KEY))
        .unwrap_or_else(|e| panic!("session: {e}"))
}

/// Player 0's input on the tick after datagram `k` (the seed generator
/// gives the same, so its captured datagrams replay a real match).
#[must_use]
pub const fn net_local_input(k: usize) -> i32 {
    match k % 3 {
        0 => -1,
        1 => 0,
        _ => 1,
    }
}

/// A transport that delivers nothing and drops what is sent.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sink;

impl Transport for Sink {
    fn send(&mut self, _: u8, _: &[u8]) {}
    fn recv(&mut self, _: &mut [u8]) -> Option<Datagram> {
        None
    }
}

/// Delivers one datagram as a socket would (cut to the buffer, its full
/// length reported) and drops what is sent.
#[derive(Debug)]
struct Deliver<'a> {
    from: Option<u8>,
    bytes: Option<&'a [u8]>,
}

impl Transport for Deliver<'_> {
    fn send(&mut self, _: u8, _: &[u8]) {}
    fn recv(&mut self, buf: &mut [u8]) -> Option<Datagram> {
        let bytes = self.bytes.take()?;
        let n = bytes.len().min(buf.len());
        buf.get_mut(..n)?.copy_from_slice(bytes.get(..n)?);
        Some(Datagram {
            from: self.from,
            len: bytes.len(),
        })
    }
}

/// Inputs `raw` holds `n` of, decoded as `I` and encoded again.
fn reencode_inputs<I: ReplayInput>(out: &mut Vec<u8>, raw: &[u8], n: usize) {
    let mut r = Reader::new(raw);
    for i in 0..n {
        match I::decode(&mut r) {
            Ok(input) => input.encode(out),
            Err(e) => panic!("input {i} of a decoded message does not decode: {e}"),
        }
    }
    assert!(
        r.is_empty(),
        "a decoded input section is longer than its inputs"
    );
}

/// A decoded message written again from its decoded values, by the layout
/// in `docs/netplay.md` (an encoder of its own, not the session's).
fn encode_message<I: ReplayInput>(env: &Envelope, body: &Body<'_>) -> Vec<u8> {
    let mut out = WIRE_MAGIC.to_vec();
    out.push(WIRE_VERSION);
    out.push(match body {
        Body::Inputs(_) => 1,
        Body::Fields(_) => 2,
        Body::Spectate(_) => 3,
        Body::SpectatorAck { .. } => 4,
        Body::Departure(_) => 5,
        Body::Goodbye => 6,
        Body::Rejoin { .. } => 7,
        Body::Notice { .. } => 8,
        Body::NoticeAck { .. } => 9,
        Body::Chunk(_) => 10,
        Body::ChunkAck { .. } => 11,
        Body::Refuse { .. } => 12,
        Body::Watch { .. } => 13,
        Body::WatchReply(_) => 14,
    });
    out.extend_from_slice(&Auth::new(&NET_KEY).session_id().to_le_bytes());
    assert!(
        env.session == Auth::new(&NET_KEY).session_id(),
        "a datagram of another session decoded"
    );
    out.push(env.sender);
    put_varint(&mut out, env.seq);
    match body {
        Body::Inputs(m) => {
            for v in [m.ack, m.ping, m.pong, m.sim_tick, m.checks_upto, m.start] {
                put_varint(&mut out, v);
            }
            out.push(m.count);
            reencode_inputs::<I>(&mut out, m.inputs, usize::from(m.count));
            let checks: Vec<(u64, u64)> = m.checks.iter().collect();
            out.push(u8::try_from(checks.len()).unwrap_or(u8::MAX));
            for (tick, sum) in checks {
                put_varint(&mut out, tick);
                out.extend_from_slice(&sum.to_le_bytes());
            }
        }
        Body::Fields(f) => {
            put_varint(&mut out, f.tick);
            out.push(u8::try_from(f.iter().count()).unwrap_or(u8::MAX));
            for h in f.iter() {
                out.extend_from_slice(&h.to_le_bytes());
            }
        }
        Body::Spectate(m) => {
            put_varint(&mut out, m.start);
            out.push(m.count);
            out.push(m.players);
            let n = usize::from(m.count) * usize::from(m.players);
            reencode_inputs::<I>(&mut out, m.inputs, n);
        }
        Body::SpectatorAck { ack } => put_varint(&mut out, *ack),
        Body::Departure(m) => {
            out.push(m.leaver);
            out.push(u8::from(m.settled));
            for v in [m.held, m.end, m.start] {
                put_varint(&mut out, v);
            }
            out.push(m.count);
            reencode_inputs::<I>(&mut out, m.inputs, usize::from(m.count));
        }
        Body::Goodbye => {}
        Body::Rejoin { epoch } => out.extend_from_slice(&epoch.to_le_bytes()),
        Body::Notice {
            player,
            epoch,
            join,
        } => {
            out.push(*player);
            out.extend_from_slice(&epoch.to_le_bytes());
            put_varint(&mut out, *join);
        }
        Body::NoticeAck { player, join } => {
            out.push(*player);
            put_varint(&mut out, *join);
        }
        Body::Chunk(m) => {
            out.extend_from_slice(&m.epoch.to_le_bytes());
            put_varint(&mut out, m.join);
            put_varint(&mut out, m.total);
            out.extend_from_slice(&m.checksum.to_le_bytes());
            put_varint(&mut out, m.index);
            out.extend_from_slice(m.data);
        }
        Body::ChunkAck { epoch, next, have } => {
            out.extend_from_slice(&epoch.to_le_bytes());
            put_varint(&mut out, *next);
            out.extend_from_slice(&have.to_le_bytes());
        }
        Body::Refuse {
            epoch,
            reason,
            bytes,
            limit,
        } => {
            out.extend_from_slice(&epoch.to_le_bytes());
            out.push(*reason);
            put_varint(&mut out, *bytes);
            put_varint(&mut out, *limit);
        }
        Body::Watch { epoch } => out.extend_from_slice(&epoch.to_le_bytes()),
        Body::WatchReply(r) => {
            out.extend_from_slice(&r.epoch.to_le_bytes());
            out.push(r.code);
            out.push(r.slot);
            put_varint(&mut out, r.a);
            put_varint(&mut out, r.b);
        }
    }
    net_seal(&out)
}

/// `wire::decode` with `I`'s input decoder (the session's own closure):
/// only datagrams within the size limit decode, and a decoded message
/// re-encodes (and seals) to exactly its bytes (one encoding per message).
fn decode_checked<I: ReplayInput>(bytes: &[u8]) -> Result<(Envelope, Body<'_>), WireError> {
    let decoded = wire::decode(bytes, &Auth::new(&NET_KEY), |r: &mut Reader<'_>| {
        I::decode(r).is_ok()
    });
    match &decoded {
        Ok((env, body)) => {
            assert!(
                bytes.len() <= MAX_PACKET,
                "a datagram over the limit decoded"
            );
            assert!(
                encode_message::<I>(env, body) == bytes,
                "decoded message re-encodes to other bytes: {env:?} {body:?}"
            );
        }
        Err(e) => {
            assert!(!e.to_string().is_empty(), "empty error message");
            assert!(
                matches!(e, WireError::Oversized { .. }) == (bytes.len() > MAX_PACKET),
                "{e} for a datagram of {} bytes",
                bytes.len()
            );
        }
    }
    decoded
}

/// How much each drop counter grew.
fn grown(after: &Drops, before: &Drops) -> Drops {
    let d = |a: u64, b: u64| {
        a.checked_sub(b)
            .unwrap_or_else(|| panic!("a drop counter went down"))
    };
    Drops {
        malformed: d(after.malformed, before.malformed),
        oversized: d(after.oversized, before.oversized),
        version: d(after.version, before.version),
        unknown_kind: d(after.unknown_kind, before.unknown_kind),
        unknown_peer: d(after.unknown_peer, before.unknown_peer),
        wrong_session: d(after.wrong_session, before.wrong_session),
        unauthenticated: d(after.unauthenticated, before.unauthenticated),
        stale: d(after.stale, before.stale),
        far_future: d(after.far_future, before.far_future),
        departed: d(after.departed, before.departed),
    }
}

/// One drop, under `e`'s reason.
fn one_drop_for(e: &WireError) -> Drops {
    let mut d = Drops::default();
    match e {
        WireError::Oversized { .. } => d.oversized = 1,
        WireError::Malformed { .. } => d.malformed = 1,
        WireError::Version { .. } => d.version = 1,
        WireError::UnknownKind { .. } => d.unknown_kind = 1,
        WireError::WrongSession { .. } => d.wrong_session = 1,
        WireError::Unauthenticated => d.unauthenticated = 1,
    }
    d
}

/// What one datagram did to the drop counters of a session that got it as
/// from player 1 (`from_peer`) or from an unknown address. A datagram that
/// does not decode (another session's id and a MAC that does not match
/// included) is one drop under its error's reason and changes nothing
/// else; one from an unknown address or with another sender byte is one
/// drop under that reason. From player 1 it is otherwise accepted (no drop)
/// or one `stale` or `far_future` drop, except that an accepted inputs
/// message also counts each of its checksums that is unusable: tick 0
/// (`malformed`, with every tick checked) or too far ahead (`far_future`).
/// So one datagram adds at most `max(1, nchecks)` (at most 8) drops.
fn check_drops(
    decoded: &Result<(Envelope, Body<'_>), WireError>,
    from_peer: bool,
    before: &SessionStats,
    after: &SessionStats,
) {
    assert!(
        after.received == before.received + 1,
        "received not counted"
    );
    let d = grown(&after.drops, &before.drops);
    let one = |f: fn(&mut Drops)| {
        let mut x = Drops::default();
        f(&mut x);
        x
    };
    let (env, body) = match decoded {
        Err(e) => {
            assert!(d == one_drop_for(e), "{e} counted as {d:?}");
            let mut want = *before;
            want.received += 1;
            want.drops = after.drops;
            assert!(
                *after == want,
                "an undecodable datagram changed the session"
            );
            return;
        }
        Ok(x) => x,
    };
    // A watch request (sender byte 255) from an unknown address is how a
    // spectator arrives: answered (admitted, or refused with a reply), not
    // dropped; with a slot in its sender byte, or from a player, it is
    // `unknown_peer`.
    if let Body::Watch { .. } = body
        && !from_peer
        && env.sender == wire::UNASSIGNED_SLOT
    {
        assert!(
            d == Drops::default() || d == one(|x| x.stale = 1),
            "watch request: {d:?}"
        );
        return;
    }
    if !from_peer || env.sender != 1 {
        assert!(d == one(|x| x.unknown_peer = 1), "unknown peer: {d:?}");
        return;
    }
    let stale = one(|x| x.stale = 1);
    let far = one(|x| x.far_future = 1);
    // After a goodbye (or a departure naming it, or its silence), player 1
    // is gone: everything it sends is one `departed` drop.
    if d == one(|x| x.departed = 1) {
        return;
    }
    match body {
        Body::Inputs(m) => {
            if d == stale || d == far {
                return;
            }
            let checks = m.checks.iter().count() as u64;
            let zero_ticks = m.checks.iter().filter(|&(t, _)| t == 0).count() as u64;
            assert!(
                d.undecodable() == d.malformed
                    && d.malformed <= zero_ticks
                    && d.unknown_peer + d.wrong_session + d.stale == 0
                    && d.total() <= checks.max(1),
                "inputs message with {checks} checks counted as {d:?}"
            );
        }
        Body::Fields(_) => assert!(
            d == Drops::default() || d == stale || d == far,
            "fields: {d:?}"
        ),
        Body::Departure(_)
        | Body::Goodbye
        | Body::Rejoin { .. }
        | Body::NoticeAck { .. }
        | Body::ChunkAck { .. } => assert!(
            d == Drops::default() || d == stale || d == far,
            "departure, goodbye or rejoin message: {d:?}"
        ),
        // A notice naming the receiver, the sender or a slot past the
        // players is one `malformed`.
        Body::Notice { .. } => assert!(
            d == Drops::default() || d == stale || d == far || d == one(|x| x.malformed = 1),
            "rejoin notice: {d:?}"
        ),
        // Chunks and refusals go to a rejoiner, never to a session.
        Body::Chunk(_) | Body::Refuse { .. } => assert!(
            d == stale || d == far || d == one(|x| x.unknown_peer = 1),
            "chunk or refusal sent to a session: {d:?}"
        ),
        Body::Watch { .. } => assert!(
            d == one(|x| x.unknown_peer = 1),
            "watch request from a player: {d:?}"
        ),
        Body::Spectate(_) | Body::SpectatorAck { .. } | Body::WatchReply(_) => {
            assert!(
                d == stale || d == far || d == one(|x| x.unknown_peer = 1),
                "spectator message from a player: {d:?}"
            );
        }
    }
}

/// What a session guarantees whatever it was sent: it never runs more than
/// its window ahead of its confirmed tick, never rolls back further, never
/// misses a confirmed state it has to checksum, and reports a desync
/// exactly when it counts one.
fn check_session(s: &Session<IslandPair>) {
    let window = u64::from(s.config().window);
    let st = s.stats();
    assert!(
        s.current_tick() <= s.confirmed_tick() + window,
        "tick {} runs more than {window} ahead of confirmed tick {}",
        s.current_tick(),
        s.confirmed_tick()
    );
    assert!(st.max_rollback <= window, "rollback of {}", st.max_rollback);
    assert!(st.missing_states == 0, "a confirmed state was missing");
    assert!(
        (st.desyncs > 0) == s.desync().is_some(),
        "desync count and report disagree"
    );
}

/// Netplay datagrams (`tickwise_net::wire::decode` and
/// `Session::handle_datagram`): the input is a sequence of datagrams
/// ([`split_datagrams`]). Each goes two ways: raw (as an attacker without
/// the key would send it: almost always refused by the MAC, and then it
/// must change nothing) and sealed with [`NET_KEY`] ([`net_seal`]: as an
/// authentic, possibly buggy, peer would send it, so the fuzzer's bytes
/// reach the decoder and the session). Each way it is decoded with both
/// input types (a decoded message re-encodes to its bytes) and handed to
/// three receivers of a 2-player island match: player 0's session as from
/// player 1, a second session as from an unknown address, and a spectator
/// as from the host; then each session runs a tick (a transport that
/// delivers nothing).
/// Every datagram is accepted or counted under its reason ([`check_drops`]);
/// the sessions stay within their window ([`check_session`]) and keep
/// ticking; the unknown address never causes a comparison, and a desync
/// is reported only for a checksum player 1 actually sent, at that tick.
pub fn net_datagram(data: &[u8]) {
    let _ = net_datagram_session(data);
}

/// [`net_datagram`], returning player 0's session (which took the
/// datagrams as from player 1) so that tests can look at what a seed did.
///
/// # Panics
///
/// On a finding.
pub fn net_datagram_session(data: &[u8]) -> Session<IslandPair> {
    let mut peer = net_session(0);
    let mut stranger = net_session(0);
    let mut spectator = Spectator::new(net_world(), 0, 4, 2, &NET_KEY);
    // A rejoiner for slot 1 (epoch 0, snapshots up to 4 KiB) taking every
    // datagram as from player 0: chunks of any shape are dropped, counted
    // or refused, never a panic and never a buffer over its limit.
    let mut rejoiner = Rejoiner::new(
        net_world(),
        SessionConfig::new(2, 1, NET_KEY),
        SnapshotCodec::from_fns(
            |_, _| {},
            |_, b| {
                if b.is_empty() {
                    Ok(())
                } else {
                    Err(tickwise::SnapshotError::Malformed { what: "state" })
                }
            },
        ),
        0,
        4096,
    )
    .unwrap_or_else(|e| panic!("rejoiner: {e}"));
    let mut sent_checks = Vec::new();
    for (k, raw) in split_datagrams(data)
        .into_iter()
        .take(MAX_DATAGRAMS)
        .enumerate()
    {
        let sealed = net_seal(raw);
        for bytes in [raw, &sealed[..]] {
            let decoded = decode_checked::<i32>(bytes);
            let _ = decode_checked::<TickInput>(bytes);
            if let Ok((env, Body::Inputs(m))) = &decoded
                && env.sender == 1
            {
                sent_checks.extend(m.checks.iter());
            }

            let _ = rejoiner.handle_datagram(Some(0), bytes);

            let before = *peer.stats();
            peer.handle_datagram(Some(1), bytes);
            check_drops(&decoded, true, &before, peer.stats());
            let before = *stranger.stats();
            stranger.handle_datagram(None, bytes);
            check_drops(&decoded, false, &before, stranger.stats());

            let before = *spectator.drops();
            let mut deliver = Deliver {
                from: Some(0),
                bytes: Some(bytes),
            };
            let ran = spectator.tick_once(&mut deliver, 4);
            assert!(ran <= 4, "spectator ran {ran} steps");
            let d = grown(spectator.drops(), &before);
            match &decoded {
                Err(e) => assert!(d == one_drop_for(e), "spectator: {e} counted as {d:?}"),
                Ok((env, body)) => {
                    let maybe_accepted = env.sender == 0 && matches!(body, Body::Spectate(_));
                    assert!(
                        d.total() == 1 || (d.total() == 0 && maybe_accepted),
                        "spectator: {d:?}"
                    );
                }
            }
        }

        let input = net_local_input(k);
        let _ = peer.tick(&input, &mut Sink);
        let _ = stranger.tick(&input, &mut Sink);
        check_session(&peer);
        check_session(&stranger);
    }
    for k in 0..4 {
        let _ = peer.tick(&net_local_input(k), &mut Sink);
        let _ = stranger.tick(&net_local_input(k), &mut Sink);
    }
    check_session(&peer);
    check_session(&stranger);
    assert!(
        stranger.stats().checks_compared == 0 && stranger.desync().is_none(),
        "datagrams from an unknown address reached the checksums"
    );
    if let Some(d) = peer.desync() {
        assert!(d.peer == 1 && d.local != d.remote, "{d}");
        assert!(
            sent_checks.contains(&(d.tick, d.remote)),
            "{d}, but player 1 never sent that checksum for that tick"
        );
    }
    peer
}

/// `batch_upload`'s limits, cut points and body, read from its input:
/// byte 0 gives at most 1 + (b0 mod 16) replays, bytes 1-2 (big-endian)
/// the bytes per replay, bytes 3-4 the bytes in all, bytes 5-7 three cut
/// points (at b × len / 255); the body is the rest. Missing bytes are 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchCase<'a> {
    /// Replays per batch, 1 to 16.
    pub max_replays: usize,
    /// Bytes per replay.
    pub max_replay: usize,
    /// Bytes per batch.
    pub max_total: usize,
    /// Where the body is cut into pieces, in order.
    pub cuts: [usize; 3],
    /// The batch body.
    pub body: &'a [u8],
}

impl BatchCase<'_> {
    /// Reads a case from a fuzz input.
    #[must_use]
    pub fn from_input(data: &[u8]) -> BatchCase<'_> {
        let byte = |i: usize| data.get(i).copied().unwrap_or(0);
        let body = data.get(8..).unwrap_or(&[]);
        let mut cuts = [byte(5), byte(6), byte(7)].map(|b| usize::from(b) * body.len() / 255);
        cuts.sort_unstable();
        BatchCase {
            max_replays: 1 + usize::from(byte(0) % 16),
            max_replay: usize::from(u16::from_be_bytes([byte(1), byte(2)])),
            max_total: usize::from(u16::from_be_bytes([byte(3), byte(4)])),
            cuts,
            body,
        }
    }
}

/// What the service's reader makes of `pieces` fed one after another.
fn read_pieces(case: &BatchCase<'_>, pieces: &[&[u8]]) -> Result<Vec<Vec<u8>>, BatchError> {
    let mut r = BatchReader::new(case.max_replay, case.max_replays, case.max_total);
    for p in pieces {
        r.feed(p)?;
    }
    Ok(r.finish()?.iter().map(|b| b.to_vec()).collect())
}

/// The batch framing as specified, on the whole body at once: frames in
/// order, and the first limit broken by the earliest byte (the total
/// breaks at byte `max_total`; a frame's length at its fourth byte).
fn batch_reference<'a>(case: &BatchCase<'a>) -> Result<Vec<&'a [u8]>, BatchError> {
    let body = case.body;
    let too_large = BatchError::TooLarge {
        limit: case.max_total,
    };
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(head) = body.get(pos..pos + 4) {
        if pos + 4 > case.max_total {
            return Err(too_large);
        }
        let declared = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
        let len = usize::try_from(declared).unwrap_or(usize::MAX);
        if len > case.max_replay {
            return Err(BatchError::ReplayTooLarge {
                index: out.len(),
                declared: u64::from(declared),
                limit: case.max_replay,
            });
        }
        if out.len() >= case.max_replays {
            return Err(BatchError::TooManyReplays {
                limit: case.max_replays,
            });
        }
        let Some(replay) = body.get(pos + 4..pos + 4 + len) else {
            break;
        };
        if pos + 4 + len > case.max_total {
            return Err(too_large);
        }
        out.push(replay);
        pos += 4 + len;
    }
    if body.len() > case.max_total {
        return Err(too_large);
    }
    if pos < body.len() {
        return Err(BatchError::Truncated {
            left: body.len() - pos,
        });
    }
    if out.is_empty() {
        return Err(BatchError::Empty);
    }
    Ok(out)
}

/// The batch framing of `POST /v1/batches`
/// (`tickwise_service::batch::BatchReader`), with limits and cut points
/// from the input ([`BatchCase`]): the body fed in one piece, cut at the
/// three points, and one byte at a time gives the same replays or the same
/// error, and that is what the framing specifies ([`batch_reference`]);
/// accepted replays framed again (`frame_batch`, and by hand) are the body,
/// and are within every limit.
pub fn batch_upload(data: &[u8]) {
    let case = BatchCase::from_input(data);
    let body = case.body;
    let [a, b, c] = case.cuts;
    let whole = read_pieces(&case, &[body]);
    let cut = read_pieces(
        &case,
        &[&body[..a], &body[a..b], &body[b..c], &body[c..], &[]],
    );
    assert!(
        cut == whole,
        "cut at {:?}: {cut:?}, whole: {whole:?}",
        case.cuts
    );
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    let by_byte = read_pieces(&case, &bytes);
    assert!(
        by_byte == whole,
        "byte by byte: {by_byte:?}, whole: {whole:?}"
    );
    let reference = batch_reference(&case).map(|v| v.iter().map(|r| r.to_vec()).collect());
    assert!(
        whole == reference,
        "reader: {whole:?}, framing: {reference:?}"
    );
    match &whole {
        Ok(replays) => {
            assert!(!replays.is_empty(), "an empty batch accepted");
            assert!(replays.len() <= case.max_replays, "too many replays");
            assert!(body.len() <= case.max_total, "over the total");
            let mut framed = Vec::new();
            for r in replays {
                assert!(r.len() <= case.max_replay, "a replay over the limit");
                let n = u32::try_from(r.len()).unwrap_or(u32::MAX);
                framed.extend_from_slice(&n.to_be_bytes());
                framed.extend_from_slice(r);
            }
            assert!(framed == body, "replays framed again differ from the body");
            assert!(frame_batch(replays) == body, "frame_batch differs");
        }
        Err(e) => assert!(!e.to_string().is_empty(), "empty error message"),
    }
}

/// The room code of [`room_message`]'s room.
const ROOM_CODE: &str = "AAECAwQFBgcICQoLDA0ODw";

/// Target `room_message`: the room protocol's parsers and the room state
/// machine (docs/rooms.md).
///
/// * The whole input as a client's text frame (`ClientMsg::parse`): a
///   message that parses writes back to text that parses to the same
///   message (numbers to within serde_json's rounding); a refusal is `TooBig` exactly over the limit, else a short
///   `Invalid`. As a server's frame (`ServerMsg::parse`, the lenient
///   client side) and as a create body (`CreateRequest::parse`): accepted
///   values are in range and round-trip.
/// * Then the input drives a 2-player, 1-spectator room: records split at
///   `0xff`, the first byte of each an operation (low 3 bits: connect,
///   text, binary, disconnect, wait, join as player, ready, join as
///   spectator) and a connection (high bits), the rest its payload. After
///   every record: a seat holds a live connection that knows it is there,
///   nobody closed hears anything more, relay frames go to seated
///   connections from another seat and are at most 509 bytes, forwarded
///   signals at most 16 KiB and every server message parses, and the
///   match starts at most once.
///
/// # Panics
///
/// On a finding.
pub fn room_message(data: &[u8]) {
    use tickwise_rooms::{
        Action, ClientMsg, CreateRequest, MAX_RELAY_FRAME, MAX_SERVER_TEXT_BYTES, MAX_TEXT_BYTES,
        ParseError, RoomLimits, RoomSpec, Rooms, ServerMsg,
    };
    if let Ok(text) = std::str::from_utf8(data) {
        match ClientMsg::parse(text) {
            Ok(m) => {
                // Written back and read again it is the same message;
                // numbers to within serde_json's parsing, which is not
                // correctly rounded for long mantissas (the server forwards
                // signalling data verbatim, so it never re-rounds one).
                let t = m.to_text();
                let again = ClientMsg::parse(&t).expect("a parsed message writes back parsable");
                let (x, y): (serde_json::Value, serde_json::Value) = (
                    serde_json::from_str(&t).expect("JSON"),
                    serde_json::from_str(&again.to_text()).expect("JSON"),
                );
                assert!(json_close(&x, &y), "round trip of {text:?}: {x} / {y}");
            }
            Err(ParseError::TooBig { len, limit }) => {
                assert!(len == text.len() && len > limit && limit == MAX_TEXT_BYTES);
            }
            Err(ParseError::Invalid { detail }) => assert!(detail.len() <= 210, "{detail}"),
        }
        if let Ok(m) = ServerMsg::parse(text)
            && m != ServerMsg::Unknown
        {
            let t = m.to_text();
            let again = ServerMsg::parse(&t).expect("a server message writes back parsable");
            let (x, y): (serde_json::Value, serde_json::Value) = (
                serde_json::from_str(&t).expect("JSON"),
                serde_json::from_str(&again.to_text()).expect("JSON"),
            );
            assert!(json_close(&x, &y), "round trip of {text:?}: {x} / {y}");
        }
    }
    if let Ok(r) = CreateRequest::parse(data) {
        assert!((2..=4).contains(&r.players) && r.spectators <= 8, "{r:?}");
        assert!(r.ticks >= 1 && r.check_every >= 1 && r.disconnect_after >= 1);
        assert!(r.config.as_ref().is_none_or(|c| c.len() <= 16 * 1024));
    }

    let mut rooms = Rooms::new(RoomLimits {
        text_burst: 10_000,
        relay_burst_bytes: 4_096,
        relay_bytes_per_s: 10_000,
        ..RoomLimits::default()
    });
    let spec = RoomSpec {
        sim: "horde".into(),
        version: 3,
        config: "{}".into(),
        players: 2,
        spectators: 1,
        ticks: 60,
        check_every: 1,
        disconnect_after: 30,
    };
    rooms
        .create(spec, ROOM_CODE.into(), [7; 16], 0)
        .expect("one room");
    let ip = std::net::IpAddr::from([127, 0, 0, 1]);
    let mut conns: Vec<u64> = Vec::new();
    let mut closed: Vec<u64> = Vec::new();
    let mut seat_of = std::collections::BTreeMap::<u64, u8>::new();
    let mut now = 0u64;
    let mut out = Vec::new();
    for rec in data.split(|&b| b == 0xff).take(64) {
        let Some((&op, rest)) = rec.split_first() else {
            continue;
        };
        let pick = conns
            .get(usize::from(op >> 3) % conns.len().max(1))
            .copied();
        match (op & 7, pick) {
            (0, _) => {
                if let Ok(c) = rooms.connect(ROOM_CODE, ip, now) {
                    conns.push(c);
                }
            }
            (1, Some(c)) => rooms.on_text(c, &String::from_utf8_lossy(rest), now, &mut out),
            (2, Some(c)) => rooms.on_binary(c, rest, now, &mut out),
            (3, Some(c)) => {
                rooms.disconnect(c, now, &mut out);
                closed.push(c);
                seat_of.remove(&c);
            }
            (4, _) => {
                now += u64::from(rest.first().copied().unwrap_or(1)) * 100;
                rooms.tick(now, &mut out);
            }
            (5 | 7, Some(c)) => {
                let role = if op & 7 == 5 { "player" } else { "spectator" };
                let slot = rest
                    .first()
                    .map_or(String::new(), |s| format!(r#","slot":{s}"#));
                let t = format!(r#"{{"t":"join","role":"{role}"{slot}}}"#);
                rooms.on_text(c, &t, now, &mut out);
            }
            (6, Some(c)) => rooms.on_text(c, r#"{"t":"ready"}"#, now, &mut out),
            _ => {}
        }
        for a in out.drain(..) {
            match a {
                Action::Close { to, .. } => {
                    seat_of.remove(&to);
                    closed.push(to);
                }
                Action::Text { to, text } => {
                    assert!(!closed.contains(&to), "a message to a closed connection");
                    assert!(text.len() <= MAX_SERVER_TEXT_BYTES);
                    match ServerMsg::parse(&text).expect("server messages parse") {
                        ServerMsg::Welcome(w) => {
                            seat_of.insert(to, w.slot);
                        }
                        ServerMsg::Signal { .. } => assert!(text.len() <= MAX_TEXT_BYTES),
                        ServerMsg::Unknown => panic!("the server sent {text}"),
                        _ => {}
                    }
                }
                Action::Binary { to, frame } => {
                    assert!(frame.len() <= MAX_RELAY_FRAME);
                    let own = seat_of.get(&to).expect("frames go to seated connections");
                    assert_ne!(frame.first(), Some(own));
                }
            }
        }
        assert!(rooms.stats().starts <= 1, "the match started twice");
        if let Some(seats) = rooms.seats_of(ROOM_CODE) {
            for (s, c) in seats.iter().enumerate() {
                if let Some(c) = c {
                    assert_eq!(seat_of.get(c).map(|&x| usize::from(x)), Some(s));
                    assert_eq!(rooms.seat(*c).map(usize::from), Some(s));
                }
            }
            for (c, s) in &seat_of {
                assert_eq!(seats[usize::from(*s)], Some(*c));
            }
        }
    }
}

/// `a` and `b` are the same JSON value, numbers equal or within a relative
/// 1e-15 of each other (serde_json's best-effort float parsing).
fn json_close(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y
                || match (x.as_f64(), y.as_f64()) {
                    (Some(p), Some(q)) => (p - q).abs() <= 1e-15 * p.abs().max(q.abs()),
                    _ => false,
                }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_close(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k, p), (l, q))| k == l && json_close(p, q))
        }
        _ => a == b,
    }
}
