//! Keyboard glue for pages whose input is an [`InputBuffer`]: a
//! `KeyboardEvent.code` → button map, and the events pushed at the host time
//! of their `timeStamp` (so each lands on the tick whose window contains it).
//!
//! The pages used to repeat this, each with its own record of held keys for
//! "release everything" (window blur, hidden tab). That record is not
//! needed: [`InputBuffer::release_all`] releases whatever the buffer holds at
//! a host time, is one queue entry, and is never refused, so a blur can
//! never leave a key stuck even when the queue is full.

use tickwise::{Button, EventKind, InputBuffer, InputEvent, Timestamp};

/// A page's key bindings and the count of key events its buffer refused.
#[derive(Clone, Copy, Debug)]
pub struct Keys {
    map: fn(&str) -> Option<Button>,
    refused: u64,
}

impl Keys {
    /// Keys bound by `map` (`KeyboardEvent.code` to button; `None`: unbound).
    #[must_use]
    pub const fn new(map: fn(&str) -> Option<Button>) -> Keys {
        Keys { map, refused: 0 }
    }

    /// Whether `code` is bound (the page then prevents its default action).
    #[must_use]
    pub fn binds(&self, code: &str) -> bool {
        (self.map)(code).is_some()
    }

    /// Queues `code` going down (`down`) or up at host time `at` into
    /// `buffer`. Returns whether `code` is bound; an unbound key changes
    /// nothing. A full buffer refuses the event (no ticks are consuming
    /// events: a long pause with keys mashed): it is counted in
    /// [`Keys::refused`], and a down is then lost rather than queued late.
    pub fn key(&mut self, buffer: &mut InputBuffer, code: &str, down: bool, at: Timestamp) -> bool {
        let Some(b) = (self.map)(code) else {
            return false;
        };
        let kind = if down {
            EventKind::Down(b)
        } else {
            EventKind::Up(b)
        };
        if buffer.push(InputEvent { at, kind }).is_err() {
            self.refused += 1;
        }
        true
    }

    /// Key events the buffer refused so far.
    #[must_use]
    pub const fn refused(&self) -> u64 {
        self.refused
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrows(code: &str) -> Option<Button> {
        match code {
            "ArrowLeft" => Button::new(2),
            "ArrowRight" => Button::new(3),
            _ => None,
        }
    }

    const fn ms(v: u64) -> Timestamp {
        Timestamp::from_millis(v)
    }

    #[test]
    fn bound_keys_reach_their_ticks_and_release_all_lets_go() {
        let mut keys = Keys::new(arrows);
        let mut buf = InputBuffer::new();
        assert!(!keys.key(&mut buf, "KeyQ", true, ms(0)), "unbound");
        assert!(keys.binds("ArrowRight") && !keys.binds("KeyQ"));
        assert!(keys.key(&mut buf, "ArrowRight", true, ms(5)));
        assert!(keys.key(&mut buf, "ArrowLeft", true, ms(25)));
        // Ticks of 16 ms: the first window [0, 16) sees Right go down.
        let right = Button::new(3).unwrap();
        let left = Button::new(2).unwrap();
        let t0 = buf.take_tick(ms(16));
        assert!(t0.is_held(right) && t0.was_pressed(right) && !t0.is_held(left));
        buf.release_all(ms(40));
        let t1 = buf.take_tick(ms(32));
        assert!(t1.is_held(right) && t1.is_held(left));
        let t2 = buf.take_tick(ms(48));
        assert!(!t2.is_held(right) && !t2.is_held(left));
        assert!(t2.was_released(right) && t2.was_released(left));
        assert_eq!(keys.refused(), 0);
    }

    #[test]
    fn a_full_buffer_refuses_and_counts() {
        let mut keys = Keys::new(arrows);
        let mut buf = InputBuffer::with_capacity(2);
        for k in 0..5 {
            assert!(keys.key(&mut buf, "ArrowLeft", k % 2 == 0, ms(k)));
        }
        assert_eq!(keys.refused(), 3);
        assert_eq!(buf.pending(), 2);
    }
}
