//! Host events: the calls a host made on the sim outside a step, which a
//! replay stores so that re-simulation makes them at the same point, and
//! how the reader and the builder from parts check them.

use alloc::vec::Vec;

use super::layout::{HOST_EVENT_TIME_DROPPED, MIN_HOST_EVENT_BYTES};
use crate::codec::Reader;
use crate::replay::error::ReplayError;
use crate::sim::Sim;
use crate::time::Nanos;

/// A fact from the host that changed the sim's state outside a step.
///
/// A loop's timing decides how many steps run, which the inputs of the
/// ticks already capture; but a sim that is told about the time its host
/// threw away ([`Sim::on_time_dropped`], the island's `droppedMs`) changes
/// state on a call no input records. Replays store those calls so that
/// re-simulation makes them at the same point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HostEventKind {
    /// [`Sim::on_time_dropped`] was called with this duration (frame clamp,
    /// step cap).
    TimeDropped(Nanos),
}

impl HostEventKind {
    /// The kind byte stored in the file.
    #[must_use]
    pub const fn kind_byte(self) -> u8 {
        match self {
            HostEventKind::TimeDropped(_) => HOST_EVENT_TIME_DROPPED,
        }
    }

    /// Makes the call the event records.
    pub fn apply<S: Sim + ?Sized>(self, sim: &mut S) {
        match self {
            HostEventKind::TimeDropped(d) => sim.on_time_dropped(d),
        }
    }
}

/// A host event and the tick it happened at: after the step to state `tick`
/// (and its checkpoint, if one is due) and before the next step. Events at
/// tick 0 happened before the first step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HostEvent {
    /// The state's tick (steps run) when it happened.
    pub tick: u64,
    /// What happened.
    pub kind: HostEventKind,
}

pub(super) fn read_events(r: &mut Reader<'_>, ticks: u64) -> Result<Vec<HostEvent>, ReplayError> {
    let offset = r.offset();
    let count = r.varint("host event count")?;
    let needed = count.saturating_mul(MIN_HOST_EVENT_BYTES as u64);
    if needed > r.remaining() as u64 {
        return Err(ReplayError::Truncated {
            what: "host events",
            offset,
            needed,
            available: r.remaining() as u64,
        });
    }
    // count * 3 bytes are present, so the capacity is bounded by the file.
    let mut events = Vec::with_capacity(usize::try_from(count).unwrap_or(usize::MAX));
    let mut tick = 0u64;
    for index in 0..count {
        let delta = r.varint("host event tick delta")?;
        tick = match tick.checked_add(delta) {
            Some(t) if t <= ticks => t,
            _ => {
                return Err(ReplayError::HostEventAfterEnd {
                    index,
                    tick: tick.saturating_add(delta),
                    ticks,
                });
            }
        };
        let kind_offset = r.offset();
        let kind = match r.u8("host event kind")? {
            HOST_EVENT_TIME_DROPPED => {
                HostEventKind::TimeDropped(Nanos::from_nanos(r.varint("time dropped")?))
            }
            found => {
                return Err(ReplayError::UnknownHostEvent {
                    offset: kind_offset,
                    kind: found,
                });
            }
        };
        events.push(HostEvent { tick, kind });
    }
    Ok(events)
}

/// Host events must be in tick order and within the replay's ticks.
pub(super) fn check_events(events: &[HostEvent], ticks: u64) -> Result<(), ReplayError> {
    let mut previous = 0u64;
    for (index, e) in events.iter().enumerate() {
        let index = index as u64;
        if e.tick > ticks {
            return Err(ReplayError::HostEventAfterEnd {
                index,
                tick: e.tick,
                ticks,
            });
        }
        if e.tick < previous {
            return Err(ReplayError::HostEventsOutOfOrder {
                index,
                tick: e.tick,
                previous,
            });
        }
        previous = e.tick;
    }
    Ok(())
}
