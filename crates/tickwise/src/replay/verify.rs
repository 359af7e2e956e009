//! Re-simulating a replay and checking every stored checkpoint.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use super::blocks::RunDecoder;
use super::codec::ReplayInput;
use super::format::{Checkpoint, HostEvent, Replay, TickInputsCursor};
use crate::sim::Sim;
use crate::state_hasher::StateHasher;

/// Where a re-simulation first disagreed with the replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// The checkpoint index (0-based) that failed, or `None` for the final state.
    pub checkpoint: Option<usize>,
    /// The last tick whose stored state matched (0 when no checkpoint
    /// matched yet: the initial state is rebuilt from the config).
    pub last_good_tick: u64,
    /// The tick of the failing checkpoint. The states first differed after
    /// one of the ticks `last_good_tick + 1 ..= tick` (the inputs of ticks
    /// `last_good_tick .. tick`).
    pub tick: u64,
    /// The checksum the replay stores.
    pub expected_checksum: u64,
    /// The checksum re-simulation computed.
    pub found_checksum: u64,
    /// Fields whose stored hash differs from the re-simulated one.
    pub fields: Vec<String>,
    /// At the final state: the stored and re-simulated text digests, when
    /// they differ.
    pub digests: Option<(String, String)>,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.checkpoint {
            Some(j) => write!(f, "checkpoint {} at tick {}", j + 1, self.tick)?,
            None => write!(f, "final state at tick {}", self.tick)?,
        }
        // (issue 13) When no tick ran since the last match (the final state at
        // the tick of the last checkpoint, or a replay of 0 ticks), there is
        // no range of ticks to name: say what differs instead.
        if self.last_good_tick >= self.tick {
            write!(
                f,
                "; no tick ran after the last match at tick {}",
                self.last_good_tick
            )?;
        } else {
            write!(
                f,
                " diverges (last match at tick {}, so within ticks {}..={})",
                self.last_good_tick,
                self.last_good_tick + 1,
                self.tick
            )?;
        }
        if self.fields.is_empty() {
            write!(
                f,
                "; checksum {:016x} expected, {:016x} found",
                self.expected_checksum, self.found_checksum
            )?;
        } else {
            write!(f, "; fields differ: {}", self.fields.join(", "))?;
        }
        if let Some((expected, found)) = &self.digests {
            write!(f, "; digest {expected:?} expected, {found:?} found")?;
        }
        Ok(())
    }
}

/// The result of [`verify`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub enum ReplayVerdict {
    /// Every checkpoint and the final state match.
    Match {
        /// The final text digest.
        digest: String,
    },
    /// Re-simulation disagreed; verification stopped there.
    Diverged(Divergence),
    /// The sim describes its state with other fields than the replay
    /// records (a different sim build that kept its version number).
    FieldNamesDiffer {
        /// The replay's field names.
        recorded: Vec<String>,
        /// The sim's.
        sim: Vec<&'static str>,
    },
    /// The replay holds inputs for another number of players than the sim
    /// built from its config takes.
    PlayersDiffer {
        /// Players in the replay.
        recorded: usize,
        /// Players the sim takes.
        sim: usize,
    },
}

/// What [`verify`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct VerifyReport {
    /// Ticks re-simulated (at most the replay's tick count).
    pub ticks_run: u64,
    /// The outcome.
    pub verdict: ReplayVerdict,
    /// The final text digest the replay claims (what a score server shows
    /// next to the verdict), whatever the outcome.
    pub claimed_digest: String,
}

impl VerifyReport {
    /// Whether the replay verified.
    #[must_use]
    pub const fn is_match(&self) -> bool {
        matches!(self.verdict, ReplayVerdict::Match { .. })
    }
}

fn check(
    probe: &StateHasher,
    stored: &Checkpoint<'_>,
    names: &[String],
    checkpoint: Option<usize>,
    last_good_tick: u64,
) -> Option<Divergence> {
    let fields: Vec<String> = probe
        .short_hashes()
        .zip(stored.fields)
        .zip(names)
        .filter(|((found, expected), _)| found != *expected)
        .map(|(_, name)| name.clone())
        .collect();
    if probe.checksum() == stored.checksum && fields.is_empty() {
        return None;
    }
    Some(Divergence {
        checkpoint,
        last_good_tick,
        tick: stored.tick,
        expected_checksum: stored.checksum,
        found_checksum: probe.checksum(),
        fields,
        digests: None,
    })
}

/// Applies the host events at `tick`, starting at `events[*next]`; returns
/// the tick of the next event (`u64::MAX` when none is left).
fn apply_events<S: Sim>(sim: &mut S, events: &[HostEvent], next: &mut usize, tick: u64) -> u64 {
    while let Some(e) = events.get(*next) {
        if e.tick != tick {
            return e.tick;
        }
        e.kind.apply(sim);
        *next += 1;
    }
    u64::MAX
}

/// Where a re-simulation takes each stretch of ticks' inputs from: the
/// inputs of every player and how many ticks in a row they hold (possibly
/// 0, which steps nothing).
trait Stretches<I> {
    fn next_stretch(&mut self) -> Option<(&[I], u64)>;
}

impl<I: ReplayInput> Stretches<I> for TickInputsCursor<'_, I> {
    #[inline]
    fn next_stretch(&mut self) -> Option<(&[I], u64)> {
        TickInputsCursor::next_stretch(self)
    }
}

/// A one-player replay's single stream: each run is a stretch.
struct OneStream<'a, I> {
    runs: RunDecoder<'a, I>,
    input: [I; 1],
}

impl<I: ReplayInput> Stretches<I> for OneStream<'_, I> {
    #[inline]
    fn next_stretch(&mut self) -> Option<(&[I], u64)> {
        let run = self.runs.next()?;
        self.input[0] = run.input;
        Some((&self.input, run.len))
    }
}

/// What [`resimulate`] did.
enum Resimulated {
    /// Every stretch ran: the ticks run and the last tick whose checkpoint
    /// matched.
    Ran { tick: u64, last_good: u64 },
    /// A checkpoint did not match: the report to return.
    Diverged(VerifyReport),
}

/// Steps `sim` through every stretch, checking the checkpoints and applying
/// the host events on the way (see [`verify`]).
#[inline]
fn resimulate<S: Sim>(
    sim: &mut S,
    replay: &Replay<S::Input>,
    probe: &mut StateHasher,
    mut stretches: impl Stretches<S::Input>,
) -> Resimulated
where
    S::Input: ReplayInput,
{
    let names = replay.field_names();
    let every = replay.header().checkpoint_every;
    let events = replay.host_events();
    let mut next_event = 0usize;
    let mut event_tick = apply_events(sim, events, &mut next_event, 0);
    let mut tick = 0u64;
    let mut checkpoint_tick = every;
    // The next tick at which anything besides a step happens.
    let mut stop = checkpoint_tick.min(event_tick);
    let mut j = 0usize;
    let mut last_good = 0u64;
    while let Some((inputs, len)) = stretches.next_stretch() {
        let mut left = len;
        while left > 0 {
            // Steps up to the next checkpoint or event without a test per tick.
            let burst = left.min(stop - tick);
            for _ in 0..burst {
                sim.step(inputs);
            }
            tick += burst;
            left -= burst;
            if tick != stop {
                continue;
            }
            if tick == checkpoint_tick {
                checkpoint_tick = checkpoint_tick.saturating_add(every);
                probe.take(sim);
                if let Some(stored) = replay.checkpoint(j)
                    && let Some(d) = check(probe, &stored, names, Some(j), last_good)
                {
                    return Resimulated::Diverged(VerifyReport {
                        ticks_run: tick,
                        verdict: ReplayVerdict::Diverged(d),
                        claimed_digest: replay.final_digest().into(),
                    });
                }
                last_good = tick;
                j += 1;
            }
            if tick == event_tick {
                event_tick = apply_events(sim, events, &mut next_event, tick);
            }
            stop = checkpoint_tick.min(event_tick);
        }
    }
    Resimulated::Ran { tick, last_good }
}

/// Re-simulates `replay` on `sim` (which must be the initial state built
/// from the replay's config) and checks every checkpoint and the final
/// state. Stops at the first divergence.
///
/// Host events are applied where they were recorded: the events of tick 0
/// before the first step; then, for each tick `t`, the step to state `t`,
/// the checkpoint at `t` if one is due, and the events recorded at `t`. The
/// final state is compared after the events of the last tick.
///
/// Work is bounded by the replay's declared tick count, which the reader
/// has already checked against [`super::ReplayLimits::max_ticks`], plus one
/// call per host event (bounded by the file's size). Memory does not grow
/// with the tick count: the runs are decoded one at a time from the
/// replay's encoded form ([`Replay::tick_inputs`]).
///
/// A replay that holds another number of players than the sim takes is
/// reported as [`ReplayVerdict::PlayersDiffer`] without running a step.
pub fn verify<S: Sim>(mut sim: S, replay: &Replay<S::Input>) -> VerifyReport
where
    S::Input: ReplayInput,
{
    if replay.players() != sim.players() {
        return VerifyReport {
            ticks_run: 0,
            claimed_digest: replay.final_digest().into(),
            verdict: ReplayVerdict::PlayersDiffer {
                recorded: replay.players(),
                sim: sim.players(),
            },
        };
    }
    let mut probe = StateHasher::default();
    probe.take(&sim);
    let names = replay.field_names();
    if probe.names().len() != names.len()
        || probe
            .names()
            .iter()
            .zip(names)
            .any(|(a, b)| *a != b.as_str())
    {
        return VerifyReport {
            ticks_run: 0,
            claimed_digest: replay.final_digest().into(),
            verdict: ReplayVerdict::FieldNamesDiffer {
                recorded: names.to_vec(),
                sim: probe.names().to_vec(),
            },
        };
    }
    // One player (most replays): its runs are the stretches, read straight
    // from the decoder as before replays had players, so the loop that
    // steps the sim costs no more than it did then. Several players: the
    // cursor that walks their streams in step.
    let ran = if replay.players() == 1 {
        let one = OneStream {
            runs: replay.run_decoder(0),
            input: [S::Input::default()],
        };
        resimulate(&mut sim, replay, &mut probe, one)
    } else {
        resimulate(&mut sim, replay, &mut probe, replay.tick_inputs())
    };
    let (tick, last_good) = match ran {
        Resimulated::Ran { tick, last_good } => (tick, last_good),
        Resimulated::Diverged(report) => return report,
    };
    probe.take(&sim);
    let digest = sim.digest();
    let divergence = check(&probe, &replay.final_state(), names, None, last_good);
    let verdict = match divergence {
        Some(mut d) => {
            if digest != replay.final_digest() {
                d.digests = Some((replay.final_digest().to_string(), digest));
            }
            ReplayVerdict::Diverged(d)
        }
        None if digest != replay.final_digest() => ReplayVerdict::Diverged(Divergence {
            checkpoint: None,
            last_good_tick: last_good,
            tick,
            expected_checksum: replay.final_state().checksum,
            found_checksum: probe.checksum(),
            fields: Vec::new(),
            digests: Some((replay.final_digest().to_string(), digest)),
        }),
        None => ReplayVerdict::Match { digest },
    };
    VerifyReport {
        ticks_run: tick,
        verdict,
        claimed_digest: replay.final_digest().into(),
    }
}
