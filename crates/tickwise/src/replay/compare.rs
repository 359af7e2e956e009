//! Desync reports: two runs stepped in lockstep, checksums compared every tick.

use alloc::vec::Vec;
use core::fmt;

use super::codec::ReplayInput;
use super::format::{HostEvent, Replay};
use crate::digest::differing_fields;
use crate::sim::Sim;

/// The first tick at which two runs' states differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TickDivergence {
    /// The tick (steps run): the states at this tick differ, those at the
    /// tick before matched. 0 means the initial states differ.
    pub tick: u64,
    /// Run A's checksum at `tick`.
    pub checksum_a: u64,
    /// Run B's checksum at `tick`.
    pub checksum_b: u64,
    /// The fields whose 64-bit hashes differ.
    pub fields: Vec<&'static str>,
}

/// Where two runs' inputs first differ: the tick and the player.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputDifference {
    /// The tick (its input is consumed by the step from state `tick` to
    /// `tick + 1`).
    pub tick: u64,
    /// The lowest player slot whose input differs at that tick.
    pub player: usize,
}

/// The result of [`compare_lockstep`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct Comparison {
    /// Ticks stepped on both sides.
    pub ticks: u64,
    /// The first tick and player whose inputs differ between the runs, if
    /// any.
    pub first_input_difference: Option<InputDifference>,
    /// The first tick whose host events differ between the runs, if any
    /// (events of tick `t` are applied after the step to state `t`).
    pub first_event_difference: Option<u64>,
    /// The first state divergence, if any (comparison stops there).
    pub divergence: Option<TickDivergence>,
}

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.divergence {
            None => write!(f, "no divergence in {} ticks", self.ticks)?,
            Some(d) => write!(
                f,
                "first divergent tick {} (checksums {:016x} vs {:016x}); fields differ: {}",
                d.tick,
                d.checksum_a,
                d.checksum_b,
                d.fields.join(", ")
            )?,
        }
        if let Some(d) = self.first_input_difference {
            write!(
                f,
                "; inputs first differ at tick {} (player {})",
                d.tick, d.player
            )?;
        }
        if let Some(t) = self.first_event_difference {
            write!(f, "; host events first differ at tick {t}")?;
        }
        Ok(())
    }
}

fn diverged<S: Sim>(a: &S, b: &S, tick: u64) -> Option<TickDivergence> {
    let (ca, cb) = (a.checksum(), b.checksum());
    if ca == cb {
        return None;
    }
    Some(TickDivergence {
        tick,
        checksum_a: ca,
        checksum_b: cb,
        fields: differing_fields(&a.field_hashes(), &b.field_hashes()),
    })
}

/// The events of `events` at `tick`, starting at `*next` (sorted by tick).
fn events_at<'e>(events: &'e [HostEvent], next: &mut usize, tick: u64) -> &'e [HostEvent] {
    let start = (*next).min(events.len());
    let len = events[start..]
        .iter()
        .take_while(|e| e.tick == tick)
        .count();
    *next = start + len;
    &events[start..start + len]
}

/// Steps `a` and `b` side by side for `ticks` ticks, feeding each its own
/// inputs, and compares their 64-bit checksums at every tick, starting with
/// the initial states. Stops at the first tick whose checksums differ and
/// names the fields that differ.
///
/// `inputs_a(tick, out)` writes every player's input of `tick` into `out`
/// (one entry per player `a` takes; it starts as the absent input), and
/// likewise `inputs_b` for `b`. Runs without host events;
/// [`compare_lockstep_with_events`] applies them.
pub fn compare_lockstep<S: Sim>(
    a: &mut S,
    b: &mut S,
    inputs_a: impl FnMut(u64, &mut [S::Input]),
    inputs_b: impl FnMut(u64, &mut [S::Input]),
    ticks: u64,
) -> Comparison {
    compare_lockstep_with_events(a, b, inputs_a, inputs_b, &[], &[], ticks)
}

/// [`compare_lockstep`] with each run's host events (sorted by tick, as
/// [`Replay::host_events`] are), applied as [`super::verify()`] applies them:
/// the events of tick 0 before the initial comparison, and those of tick `t`
/// after the step to state `t`, before state `t` is compared. Events after
/// `ticks` are not applied.
pub fn compare_lockstep_with_events<S: Sim>(
    a: &mut S,
    b: &mut S,
    mut inputs_a: impl FnMut(u64, &mut [S::Input]),
    mut inputs_b: impl FnMut(u64, &mut [S::Input]),
    events_a: &[HostEvent],
    events_b: &[HostEvent],
    ticks: u64,
) -> Comparison {
    let mut x = alloc::vec![S::Input::default(); a.players().max(1)];
    let mut y = alloc::vec![S::Input::default(); b.players().max(1)];
    let mut first_input_difference = None;
    let mut first_event_difference = None;
    let (mut next_a, mut next_b) = (0usize, 0usize);
    let mut apply = |a: &mut S, b: &mut S, tick: u64, first: &mut Option<u64>| {
        let ea = events_at(events_a, &mut next_a, tick);
        let eb = events_at(events_b, &mut next_b, tick);
        if first.is_none() && ea != eb {
            *first = Some(tick);
        }
        for e in ea {
            e.kind.apply(a);
        }
        for e in eb {
            e.kind.apply(b);
        }
    };
    apply(a, b, 0, &mut first_event_difference);
    if let Some(d) = diverged(a, b, 0) {
        return Comparison {
            ticks: 0,
            first_input_difference,
            first_event_difference,
            divergence: Some(d),
        };
    }
    for t in 0..ticks {
        inputs_a(t, &mut x);
        inputs_b(t, &mut y);
        if first_input_difference.is_none() && x != y {
            let n = x.len().max(y.len());
            let player = (0..n).find(|&p| x.get(p) != y.get(p)).unwrap_or_default();
            first_input_difference = Some(InputDifference { tick: t, player });
        }
        a.step(&x);
        b.step(&y);
        apply(a, b, t + 1, &mut first_event_difference);
        if let Some(d) = diverged(a, b, t + 1) {
            return Comparison {
                ticks: t + 1,
                first_input_difference,
                first_event_difference,
                divergence: Some(d),
            };
        }
    }
    Comparison {
        ticks,
        first_input_difference,
        first_event_difference,
        divergence: None,
    }
}

/// The inputs of a one-player run, tick by tick, as the per-tick fill
/// [`compare_lockstep`] takes: player 0 gets the iterator's next input (the
/// absent input once it ends), any other player the absent input.
pub fn one_player<I: Default>(inputs: impl IntoIterator<Item = I>) -> impl FnMut(u64, &mut [I]) {
    let mut it = inputs.into_iter();
    move |_tick, out: &mut [I]| {
        if let Some((first, rest)) = out.split_first_mut() {
            *first = it.next().unwrap_or_default();
            for x in rest {
                *x = I::default();
            }
        }
    }
}

/// Re-simulates two replays of one sim in lockstep from the initial states
/// `a` and `b` (built from each replay's config), with their inputs and host
/// events, over their common length (the shorter replay's tick count).
pub fn compare_replays<S: Sim>(
    a: &mut S,
    b: &mut S,
    replay_a: &Replay<S::Input>,
    replay_b: &Replay<S::Input>,
) -> Comparison
where
    S::Input: ReplayInput,
{
    let ticks = replay_a.ticks().min(replay_b.ticks());
    compare_lockstep_with_events(
        a,
        b,
        expand(replay_a),
        expand(replay_b),
        replay_a.host_events(),
        replay_b.host_events(),
        ticks,
    )
}

/// A replay's inputs tick by tick, all players, decoded stretch by stretch
/// (constant memory); called once per tick in order. Past the last tick
/// every player gets the absent input.
fn expand<I: ReplayInput>(replay: &Replay<I>) -> impl FnMut(u64, &mut [I]) + '_ {
    let mut cursor = replay.tick_inputs();
    move |_tick, out: &mut [I]| {
        if !cursor.next_tick(out) {
            out.fill(I::default());
        }
    }
}
