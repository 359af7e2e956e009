//! `slot_of[id]`: where enemy `id` is stored, kept up to date lazily.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use crate::horde::grid::Body;

/// `slot_of[id]`: where enemy `id` is stored, derived from the enemies'
/// ids (`body[k].id`), rebuilt when it is read after the storage order
/// changed.
///
/// Why lazily: the step re-sorts the enemies every tick but reads this map
/// only on a wave tick (respawning goes by id); the digest, the snapshots
/// and the by-id accessors read it between ticks, if at all. Updating it in
/// the re-sort cost a write at a random place per enemy, every tick; on
/// several threads both cores wrote into the same cache lines, which moved
/// between them every tick (at 100,000 enemies on two threads, 0.4 ms of a
/// 2.9 ms tick). It is not part of the state: a clone or a restore marks it
/// stale instead of copying it.
///
/// The entries and the flag are atomic so that a read through `&self` can
/// rebuild it: every rebuild writes the same values, so two threads doing it
/// at once agree, and the flag's release/acquire pair makes a finished
/// rebuild visible to a thread that sees the flag set. Only `&mut` access
/// (a step, a restore) marks it stale.
#[derive(Debug, Default)]
pub(in crate::horde) struct SlotOf {
    slots: Vec<AtomicU32>,
    fresh: AtomicBool,
}

impl SlotOf {
    /// Enemy `id` in slot `id` (a new world's layout).
    pub(in crate::horde) fn identity(n: usize) -> SlotOf {
        SlotOf {
            slots: (0..n as u32).map(AtomicU32::new).collect(),
            fresh: AtomicBool::new(true),
        }
    }

    /// The enemy count.
    pub(in crate::horde) fn len(&self) -> usize {
        self.slots.len()
    }

    /// The storage order changed (a re-sort, a restore, a snapshot read):
    /// the next read rebuilds the map.
    pub(in crate::horde) fn stale(&mut self) {
        *self.fresh.get_mut() = false;
    }

    /// The map for the enemies stored as `body` (which must hold every id
    /// below [`SlotOf::len`] once, as the world keeps it), rebuilt first if
    /// it is stale.
    pub(in crate::horde) fn of(&self, body: &[Body]) -> Slots<'_> {
        if !self.fresh.load(Ordering::Acquire) {
            for (k, b) in body.iter().enumerate() {
                if let Some(s) = self.slots.get(b.id as usize) {
                    #[allow(
                        clippy::cast_possible_truncation,
                        reason = "slots fit in u32 (ids do)"
                    )]
                    s.store(k as u32, Ordering::Relaxed);
                }
            }
            self.fresh.store(true, Ordering::Release);
        }
        Slots(&self.slots)
    }

    /// Takes `src`'s length, keeping this buffer when it fits: no
    /// allocation in a steady rollback. The map is stale afterwards.
    pub(in crate::horde) fn resize_like(&mut self, src: &SlotOf) {
        if self.slots.len() != src.slots.len() {
            self.slots = (0..src.slots.len()).map(|_| AtomicU32::new(0)).collect();
        }
        self.stale();
    }
}

impl Clone for SlotOf {
    /// The same length, stale (a clone's first read rebuilds it).
    fn clone(&self) -> SlotOf {
        let mut s = SlotOf::default();
        s.resize_like(self);
        s
    }

    /// [`SlotOf::resize_like`].
    fn clone_from(&mut self, src: &SlotOf) {
        self.resize_like(src);
    }
}

/// An up-to-date `slot_of` ([`SlotOf::of`]).
#[derive(Clone, Copy, Debug)]
pub(in crate::horde) struct Slots<'a>(&'a [AtomicU32]);

impl Slots<'_> {
    /// Where enemy `id` is stored.
    pub(in crate::horde) fn get(self, id: usize) -> Option<usize> {
        self.0.get(id).map(|s| s.load(Ordering::Relaxed) as usize)
    }

    /// The slots in id order.
    pub(in crate::horde) fn iter(self) -> impl ExactSizeIterator<Item = usize> {
        self.0.iter().map(|s| s.load(Ordering::Relaxed) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(ids: &[u32]) -> Vec<Body> {
        ids.iter().map(|&id| Body { x: 0, y: 0, id }).collect()
    }

    #[test]
    fn rebuilt_only_when_stale() {
        let mut s = SlotOf::identity(3);
        // Fresh: the identity, whatever the body says.
        let moved = body(&[2, 0, 1]);
        assert_eq!(s.of(&moved).iter().collect::<Vec<_>>(), [0, 1, 2]);
        s.stale();
        // Enemy 0 in slot 1, 1 in slot 2, 2 in slot 0 (by hand).
        assert_eq!(s.of(&moved).iter().collect::<Vec<_>>(), [1, 2, 0]);
        assert_eq!(s.of(&moved).get(2), Some(0));
        assert_eq!(s.of(&moved).get(3), None);
    }

    #[test]
    fn a_clone_is_stale_and_rebuilds_from_its_own_body() {
        let s = SlotOf::identity(2);
        let c = s.clone();
        assert_eq!(c.len(), 2);
        assert_eq!(c.of(&body(&[1, 0])).iter().collect::<Vec<_>>(), [1, 0]);
        let mut d = SlotOf::identity(5);
        d.clone_from(&s);
        assert_eq!(d.len(), 2);
        assert_eq!(d.of(&body(&[1, 0])).iter().collect::<Vec<_>>(), [1, 0]);
    }
}
