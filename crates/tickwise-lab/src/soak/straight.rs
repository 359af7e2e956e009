//! The straight side: the same sim stepped in a plain loop on its own
//! thread, applying the loop side's drop events at their ticks and
//! comparing its field hashes at every checkpoint.

use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use tickwise::{FieldHash, Nanos};

use super::{SoakError, Soaked};

/// What the loop side tells the straight side, in the order it happened.
pub(super) enum Msg {
    /// The loop called `on_time_dropped(ns)` after its sim had run `tick` steps.
    Dropped { tick: u64, ns: Nanos },
    /// The loop side's sim after `tick` steps.
    Check { tick: u64, fields: Vec<FieldHash> },
}

impl Msg {
    pub(super) const fn tick(&self) -> u64 {
        match self {
            Msg::Dropped { tick, .. } | Msg::Check { tick, .. } => *tick,
        }
    }
}

/// What the straight side did.
pub(super) struct StraightStats {
    pub(super) ticks: u64,
    pub(super) checkpoints: u64,
    pub(super) drops: u64,
    pub(super) digest: String,
    pub(super) busy: Duration,
}

/// Steps `sim` through the messages in `rx` (see the module docs).
pub(super) fn straight<S: Soaked>(
    mut sim: S,
    seed: u64,
    inject_at: Option<u64>,
    rx: &Receiver<Msg>,
) -> Result<StraightStats, SoakError> {
    let started = Instant::now();
    let (mut t, mut checkpoints, mut drops) = (0u64, 0u64, 0u64);
    for msg in rx {
        let target = msg.tick();
        if target < t {
            return Err(SoakError::OutOfOrder {
                tick: target,
                after: t,
            });
        }
        while t < target {
            let input = S::input_for(seed, t);
            if inject_at == Some(t) {
                sim.step(&[S::perturbed(input)]);
            } else {
                sim.step(&[input]);
            }
            t += 1;
        }
        match msg {
            Msg::Dropped { ns, .. } => {
                sim.on_time_dropped(ns);
                drops += 1;
            }
            Msg::Check { fields, .. } => {
                let mine = sim.field_hashes();
                if mine != fields {
                    let differ: Vec<&str> = mine
                        .iter()
                        .zip(&fields)
                        .filter(|(a, b)| a != b)
                        .map(|(a, _)| a.name)
                        .collect();
                    return Err(SoakError::Diverged {
                        tick: t,
                        fields: differ,
                    });
                }
                checkpoints += 1;
            }
        }
    }
    Ok(StraightStats {
        ticks: t,
        checkpoints,
        drops,
        digest: sim.digest(),
        busy: started.elapsed(),
    })
}
