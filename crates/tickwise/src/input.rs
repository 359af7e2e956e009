//! Inputs belong to ticks, never to frames.
//!
//! A frame that runs two steps must feed each step the input of *its* tick; a
//! frame that runs none consumes nothing. The loop asks an [`InputSource`] for
//! the input of each tick it steps, with the host time at which that tick's
//! window ends, so event-driven sources can assign timestamped events to ticks.
//!
//! Two sources ship with the kernel:
//!
//! * **Simple mode**, [`TickInputs`]: `inputs[tick]`, one input per tick as the island
//!   rules script it (see `docs/background.md`).
//! * **Event mode**, [`InputBuffer`]: timestamped platform events (button
//!   down/up, axis values) assigned to the tick whose window contains them and
//!   reduced to one [`TickInput`] per tick: buttons held at the end of the tick,
//!   pressed edges, released edges, last axis values. A press and release inside
//!   one tick keep both edges; presses in two ticks are two presses even when one
//!   frame runs both ticks; nothing is merged across ticks and nothing is lost.

use alloc::vec::Vec;
use core::fmt;

use crate::time::{Tick, Timestamp};

/// Supplies the input of each tick, in tick order.
pub trait InputSource<T> {
    /// Whether [`InputSource::input`] looks at its `window_end`. A source
    /// that answers from the tick alone sets it to `false`, and the loop then
    /// skips the per-step window arithmetic (exact 128-bit maths and a
    /// division per step, most of a cheap frame's loop overhead) and passes
    /// [`Timestamp::ZERO`] instead. Defaults to `true`, which is always correct.
    const NEEDS_WINDOW: bool = true;

    /// The input for `tick`, whose window on the host clock ends at
    /// `window_end` (exclusive; [`Timestamp::ZERO`] when the source declares
    /// [`InputSource::NEEDS_WINDOW`] `false`). Called exactly once per tick,
    /// in order.
    fn input(&mut self, tick: Tick, window_end: Timestamp) -> T;

    /// Feeds `f` the inputs of the `n` ticks from `start` on, in order,
    /// exactly as [`InputSource::input`] would give them with no window
    /// (ticks past `u64::MAX` stay at it, as [`Tick::next`] does). The loop
    /// calls this instead of `input` for a batch of steps when
    /// [`InputSource::NEEDS_WINDOW`] is `false`; a source that can answer a
    /// batch faster than tick by tick (a slice walked without a bounds test
    /// per tick) overrides it.
    fn for_each_input(&mut self, start: Tick, n: u64, mut f: impl FnMut(T))
    where
        Self: Sized,
    {
        let mut tick = start;
        for _ in 0..n {
            f(self.input(tick, Timestamp::ZERO));
            tick = tick.next();
        }
    }

    /// The app was hidden at host time `at`: release every button held then.
    /// The platform will not deliver the key-ups (another window has focus),
    /// so without this a held key would drive every catch-up tick after the
    /// app comes back. [`crate::FixedLoop::background`] calls it; a pause does
    /// not. The default does nothing (inputs that do not model held state,
    /// such as [`TickInputs`], have nothing to release).
    fn release_all(&mut self, at: Timestamp) {
        let _ = at;
    }

    /// Every player's input for `tick`, written to `out` (one entry per
    /// player the sim takes, in slot order). A source is one player's: the
    /// default gives player 0 [`InputSource::input`] and every other player
    /// the absent input, `T::default()`. [`PlayerSources`] gives each
    /// player a source of its own (local multiplayer on one machine).
    /// [`crate::FixedLoop`] calls this instead of `input` for sims of more
    /// than one player.
    fn inputs(&mut self, tick: Tick, window_end: Timestamp, out: &mut [T])
    where
        T: Default,
    {
        if let Some((first, rest)) = out.split_first_mut() {
            *first = self.input(tick, window_end);
            for x in rest {
                *x = T::default();
            }
        }
    }
}

/// One input source per player, in slot order: local multiplayer on one
/// machine (two players on one keyboard, a player and a bot). Players with
/// no source of their own get the absent input, `T::default()`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlayerSources<I> {
    sources: Vec<I>,
}

impl<I> PlayerSources<I> {
    /// Player `p`'s source is `sources[p]`.
    #[must_use]
    pub const fn new(sources: Vec<I>) -> PlayerSources<I> {
        PlayerSources { sources }
    }

    /// Player `p`'s source.
    #[must_use]
    pub fn get(&self, p: usize) -> Option<&I> {
        self.sources.get(p)
    }

    /// Player `p`'s source, to feed it events.
    pub fn get_mut(&mut self, p: usize) -> Option<&mut I> {
        self.sources.get_mut(p)
    }
}

impl<T: Default, I: InputSource<T>> InputSource<T> for PlayerSources<I> {
    const NEEDS_WINDOW: bool = I::NEEDS_WINDOW;

    /// Player 0's input (the loop uses [`InputSource::inputs`] for sims of
    /// more than one player).
    fn input(&mut self, tick: Tick, window_end: Timestamp) -> T {
        match self.sources.first_mut() {
            Some(s) => s.input(tick, window_end),
            None => T::default(),
        }
    }

    fn release_all(&mut self, at: Timestamp) {
        for s in &mut self.sources {
            s.release_all(at);
        }
    }

    fn inputs(&mut self, tick: Tick, window_end: Timestamp, out: &mut [T]) {
        for (p, x) in out.iter_mut().enumerate() {
            *x = match self.sources.get_mut(p) {
                Some(s) => s.input(tick, window_end),
                None => T::default(),
            };
        }
    }
}

/// Simple mode: `inputs[tick]`, and the default input for ticks past the end.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TickInputs<T> {
    inputs: Vec<T>,
}

impl<T> TickInputs<T> {
    /// Inputs indexed by tick.
    #[must_use]
    pub const fn new(inputs: Vec<T>) -> TickInputs<T> {
        TickInputs { inputs }
    }

    /// The inputs.
    #[must_use]
    pub fn as_slice(&self) -> &[T] {
        &self.inputs
    }
}

impl<T: Clone + Default> TickInputs<T> {
    /// The input of `tick` (default past the end).
    #[must_use]
    #[inline]
    pub fn get(&self, tick: Tick) -> T {
        usize::try_from(tick.get())
            .ok()
            .and_then(|i| self.inputs.get(i))
            .cloned()
            .unwrap_or_default()
    }
}

impl<T: Clone + Default> InputSource<T> for TickInputs<T> {
    const NEEDS_WINDOW: bool = false;

    #[inline]
    fn input(&mut self, tick: Tick, _window_end: Timestamp) -> T {
        self.get(tick)
    }

    /// The stored inputs of the batch as a slice walk, then the default
    /// input for the ticks past the end; both four ticks per loop iteration.
    ///
    /// Why four: V8 (the browser's wasm engine) checks for interrupts on
    /// every loop back edge and keeps a loop's counter on the stack when
    /// registers run short, which a small sim's step leaves them; a body of
    /// four steps pays for that once per four ticks (about 10 % of the
    /// island's step in wasm). The order of the calls is the same.
    #[inline]
    fn for_each_input(&mut self, start: Tick, n: u64, mut f: impl FnMut(T)) {
        let from = usize::try_from(start.get()).unwrap_or(usize::MAX);
        let stored = self.inputs.get(from..).unwrap_or(&[]);
        let k = usize::try_from(n).map_or(stored.len(), |n| n.min(stored.len()));
        let mut quads = stored[..k].chunks_exact(4);
        for q in &mut quads {
            if let [a, b, c, d] = q {
                f(a.clone());
                f(b.clone());
                f(c.clone());
                f(d.clone());
            }
        }
        for x in quads.remainder() {
            f(x.clone());
        }
        let past_end = n - k as u64;
        for _ in 0..past_end / 4 {
            f(T::default());
            f(T::default());
            f(T::default());
            f(T::default());
        }
        for _ in 0..past_end % 4 {
            f(T::default());
        }
    }
}

/// A function of the tick, for generated inputs.
#[derive(Clone, Copy, Debug)]
pub struct FnInputs<F>(pub F);

impl<T, F: FnMut(Tick) -> T> InputSource<T> for FnInputs<F> {
    const NEEDS_WINDOW: bool = false;

    #[inline]
    fn input(&mut self, tick: Tick, _window_end: Timestamp) -> T {
        (self.0)(tick)
    }
}

/// One of the 64 buttons an [`InputBuffer`] tracks (keys, pad buttons, touch
/// zones: the game decides the mapping).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Button(u8);

impl Button {
    /// The number of distinct buttons.
    pub const COUNT: u8 = 64;

    /// Button `index`, or `None` when `index >= 64`.
    #[must_use]
    pub const fn new(index: u8) -> Option<Button> {
        if index < Button::COUNT {
            Some(Button(index))
        } else {
            None
        }
    }

    /// The button's index, `0..64`.
    #[must_use]
    pub const fn index(self) -> u8 {
        self.0
    }
}

/// A set of buttons, one bit each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Buttons(u64);

impl Buttons {
    /// No buttons.
    pub const NONE: Buttons = Buttons(0);

    /// The set whose bit `i` is button `i`.
    #[must_use]
    pub const fn from_bits(bits: u64) -> Buttons {
        Buttons(bits)
    }

    /// The bits.
    #[must_use]
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// Whether `b` is in the set.
    #[must_use]
    pub const fn contains(self, b: Button) -> bool {
        self.0 & (1 << b.0) != 0
    }

    /// The set with `b` added.
    #[must_use]
    pub const fn with(self, b: Button) -> Buttons {
        Buttons(self.0 | (1 << b.0))
    }

    /// The set with `b` removed.
    #[must_use]
    pub const fn without(self, b: Button) -> Buttons {
        Buttons(self.0 & !(1 << b.0))
    }

    /// Whether the set is empty.
    #[must_use]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// The number of analog axes a [`TickInput`] carries.
pub const AXES: usize = 4;

/// One tick's input in event mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TickInput {
    /// Buttons down at the end of the tick.
    pub held: Buttons,
    /// Buttons that went down during the tick (also if released again in it).
    pub pressed: Buttons,
    /// Buttons that went up during the tick.
    pub released: Buttons,
    /// The last value of each axis at the end of the tick, quantised by the host
    /// (for example a stick's -1.0..=1.0 as -32767..=32767).
    pub axes: [i16; AXES],
}

impl TickInput {
    /// Whether `b` is down at the end of the tick.
    #[must_use]
    pub const fn is_held(&self, b: Button) -> bool {
        self.held.contains(b)
    }

    /// Whether `b` went down during the tick.
    #[must_use]
    pub const fn was_pressed(&self, b: Button) -> bool {
        self.pressed.contains(b)
    }

    /// Whether `b` went up during the tick.
    #[must_use]
    pub const fn was_released(&self, b: Button) -> bool {
        self.released.contains(b)
    }
}

/// What happened, in an [`InputEvent`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// A button went down (repeats while already down are ignored).
    Down(Button),
    /// A button went up (an up for a button that is not down is ignored).
    Up(Button),
    /// An axis took a value.
    Axis {
        /// Axis index, `0..AXES`; other indices are refused at push.
        axis: u8,
        /// The quantised value.
        value: i16,
    },
}

/// A timestamped platform event. The timestamp is on the same host clock the
/// loop is driven with ([`crate::FixedLoop::frame_at`] or the sum of frame durations).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InputEvent {
    /// When it happened.
    pub at: Timestamp,
    /// What happened.
    pub kind: EventKind,
}

/// Why an event was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputError {
    /// The buffer already holds its capacity of pending events: the game is
    /// not consuming ticks (paused without draining, or a flood of events).
    Full {
        /// The capacity.
        capacity: usize,
    },
    /// An axis index outside `0..AXES`.
    NoSuchAxis {
        /// The index given.
        axis: u8,
    },
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::Full { capacity } => {
                write!(
                    f,
                    "input buffer full: {capacity} events are waiting for ticks to consume them"
                )
            }
            InputError::NoSuchAxis { axis } => {
                write!(f, "axis {axis} does not exist (there are {AXES})")
            }
        }
    }
}

impl core::error::Error for InputError {}

/// A queued entry: a platform event, or a release of everything held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pending {
    Event(EventKind),
    ReleaseAll,
}

/// Event mode: assigns timestamped events to tick windows and reduces each
/// tick to one [`TickInput`].
///
/// Tick windows come from the loop (see [`crate::FixedLoop`]): tick `k`
/// consumes the pending events with timestamps before its window end. Events
/// arriving with a timestamp before the previous tick's window end are *late*
/// (the host delivered them after that tick ran): they go to the next tick and
/// are counted in [`InputBuffer::late_events`], never dropped. Pending events
/// are kept in timestamp order (ties in arrival order), so out-of-order
/// delivery within a frame is sorted out.
#[derive(Clone, Debug)]
pub struct InputBuffer {
    pending: Vec<(Timestamp, u64, Pending)>,
    capacity: usize,
    seq: u64,
    held: Buttons,
    axes: [i16; AXES],
    consumed_until: Option<Timestamp>,
    late: u64,
}

impl Default for InputBuffer {
    fn default() -> Self {
        InputBuffer::new()
    }
}

impl InputBuffer {
    /// The default capacity: 4096 pending events, minutes of frantic input.
    pub const DEFAULT_CAPACITY: usize = 4096;

    /// An empty buffer with [`InputBuffer::DEFAULT_CAPACITY`].
    #[must_use]
    pub const fn new() -> InputBuffer {
        InputBuffer::with_capacity(InputBuffer::DEFAULT_CAPACITY)
    }

    /// An empty buffer holding at most `capacity` pending events.
    #[must_use]
    pub const fn with_capacity(capacity: usize) -> InputBuffer {
        InputBuffer {
            pending: Vec::new(),
            capacity,
            seq: 0,
            held: Buttons::NONE,
            axes: [0; AXES],
            consumed_until: None,
            late: 0,
        }
    }

    /// Queues an event.
    ///
    /// # Errors
    ///
    /// [`InputError::Full`] at capacity, [`InputError::NoSuchAxis`] for a bad
    /// axis index. A refused event is not queued; the caller decides what to do.
    pub fn push(&mut self, event: InputEvent) -> Result<(), InputError> {
        if let EventKind::Axis { axis, .. } = event.kind
            && usize::from(axis) >= AXES
        {
            return Err(InputError::NoSuchAxis { axis });
        }
        if self.pending.len() >= self.capacity {
            return Err(InputError::Full {
                capacity: self.capacity,
            });
        }
        self.enqueue(event.at, Pending::Event(event.kind));
        Ok(())
    }

    fn enqueue(&mut self, at: Timestamp, entry: Pending) {
        let key = (at, self.seq);
        self.seq = self.seq.wrapping_add(1);
        // Events almost always arrive in order: insert from the back.
        let pos = self
            .pending
            .iter()
            .rposition(|&(t, seq, _)| (t, seq) <= key)
            .map_or(0, |p| p + 1);
        self.pending.insert(pos, (at, key.1, entry));
    }

    /// Releases every button held at host time `at`: the tick whose window
    /// contains `at` gets a released edge for each of them (after the events
    /// queued before it, so a key pressed just before `at` is pressed and
    /// released in that tick), and no button is held after it until a new
    /// down event. Axes keep their values (a stick at rest reports 0 anyway).
    ///
    /// Used when the app is hidden (see [`InputSource::release_all`]); the
    /// release is one queue entry and is never refused: at capacity it takes
    /// the queue one entry past it, so a hide can never leave a key stuck.
    pub fn release_all(&mut self, at: Timestamp) {
        self.enqueue(at, Pending::ReleaseAll);
    }

    /// Reduces the events of the tick whose window ends at `window_end`
    /// (exclusive) to one input.
    pub fn take_tick(&mut self, window_end: Timestamp) -> TickInput {
        let n = self.pending.partition_point(|&(at, _, _)| at < window_end);
        let mut held = self.held;
        let mut pressed = Buttons::NONE;
        let mut released = Buttons::NONE;
        for &(at, _, kind) in &self.pending[..n] {
            if self.consumed_until.is_some_and(|end| at < end) {
                self.late += 1;
            }
            match kind {
                Pending::Event(EventKind::Down(b)) if !held.contains(b) => {
                    held = held.with(b);
                    pressed = pressed.with(b);
                }
                Pending::Event(EventKind::Up(b)) if held.contains(b) => {
                    held = held.without(b);
                    released = released.with(b);
                }
                Pending::Event(EventKind::Axis { axis, value }) => {
                    // Checked at push; `get_mut` keeps a bad index from panicking.
                    if let Some(a) = self.axes.get_mut(usize::from(axis)) {
                        *a = value;
                    }
                }
                Pending::ReleaseAll => {
                    released = Buttons::from_bits(released.bits() | held.bits());
                    held = Buttons::NONE;
                }
                Pending::Event(EventKind::Down(_) | EventKind::Up(_)) => {}
            }
        }
        self.pending.drain(..n);
        self.held = held;
        self.consumed_until = Some(
            self.consumed_until
                .map_or(window_end, |e| e.max(window_end)),
        );
        TickInput {
            held,
            pressed,
            released,
            axes: self.axes,
        }
    }

    /// Events that arrived after their tick had run and went to a later tick.
    #[must_use]
    pub const fn late_events(&self) -> u64 {
        self.late
    }

    /// Events waiting for their tick.
    #[must_use]
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Buttons currently held (as of the last consumed tick).
    #[must_use]
    pub const fn held(&self) -> Buttons {
        self.held
    }
}

impl InputSource<TickInput> for InputBuffer {
    fn input(&mut self, _tick: Tick, window_end: Timestamp) -> TickInput {
        self.take_tick(window_end)
    }

    fn release_all(&mut self, at: Timestamp) {
        InputBuffer::release_all(self, at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn missing_ticks_read_default() {
        let mut t = TickInputs::new(vec![1, -1]);
        assert_eq!(t.input(Tick(0), Timestamp::ZERO), 1);
        assert_eq!(t.input(Tick(1), Timestamp::ZERO), -1);
        assert_eq!(t.input(Tick(2), Timestamp::ZERO), 0);
        assert_eq!(t.input(Tick(u64::MAX), Timestamp::ZERO), 0);
    }

    #[test]
    fn a_batch_feeds_the_inputs_of_its_ticks_in_order() {
        // Batches of every length 0..=11 from every start 0..=8 over five
        // stored inputs (ticks 5.. read the default 0): the unrolled walk
        // must give exactly inputs[start..start + n], padded with zeros.
        let stored = [10, 11, 12, 13, 14];
        let mut t = TickInputs::new(stored.to_vec());
        for start in 0..=8u64 {
            for n in 0..=11u64 {
                let mut got = Vec::new();
                t.for_each_input(Tick(start), n, |x| got.push(x));
                let want: Vec<i32> = (start..start + n)
                    .map(|i| {
                        usize::try_from(i)
                            .ok()
                            .and_then(|i| stored.get(i))
                            .copied()
                            .unwrap_or(0)
                    })
                    .collect();
                assert_eq!(got, want, "start {start}, n {n}");
            }
        }
        // Hand-written: from tick 3, seven ticks.
        let mut got = Vec::new();
        t.for_each_input(Tick(3), 7, |x| got.push(x));
        assert_eq!(got, vec![13, 14, 0, 0, 0, 0, 0]);
        // A start past any index (no stored input) and a huge start.
        let mut count = 0;
        t.for_each_input(Tick(u64::MAX), 6, |x| count += 1 + x);
        assert_eq!(count, 6);
    }

    fn b(i: u8) -> Button {
        Button::new(i).unwrap()
    }

    fn ev(ms: u64, kind: EventKind) -> InputEvent {
        InputEvent {
            at: Timestamp::from_millis(ms),
            kind,
        }
    }

    fn end(ms: u64) -> Timestamp {
        Timestamp::from_millis(ms)
    }

    #[test]
    fn tap_inside_one_tick_keeps_both_edges() {
        let mut buf = InputBuffer::new();
        buf.push(ev(3, EventKind::Down(b(0)))).unwrap();
        buf.push(ev(9, EventKind::Up(b(0)))).unwrap();
        let t = buf.take_tick(end(16));
        assert!(t.was_pressed(b(0)) && t.was_released(b(0)) && !t.is_held(b(0)));
        let t = buf.take_tick(end(32));
        assert_eq!(t, TickInput::default());
    }

    #[test]
    fn hold_gives_one_pressed_edge_and_repeats_are_ignored() {
        let mut buf = InputBuffer::new();
        buf.push(ev(1, EventKind::Down(b(5)))).unwrap();
        buf.push(ev(20, EventKind::Down(b(5)))).unwrap(); // key repeat
        buf.push(ev(40, EventKind::Up(b(5)))).unwrap();
        let ticks: Vec<TickInput> = [16, 32, 48]
            .iter()
            .map(|&e| buf.take_tick(end(e)))
            .collect();
        assert!(ticks[0].was_pressed(b(5)) && ticks[0].is_held(b(5)));
        assert!(!ticks[1].was_pressed(b(5)) && ticks[1].is_held(b(5)));
        assert!(ticks[2].was_released(b(5)) && !ticks[2].is_held(b(5)));
    }

    #[test]
    fn late_and_out_of_order_events() {
        let mut buf = InputBuffer::new();
        let _ = buf.take_tick(end(16));
        // Delivered after tick 0 ran, stamped inside tick 0: goes to tick 1, counted.
        buf.push(ev(20, EventKind::Up(b(1)))).unwrap();
        buf.push(ev(10, EventKind::Down(b(1)))).unwrap();
        let t = buf.take_tick(end(32));
        // Sorted: down at 10 then up at 20, both edges kept.
        assert!(t.was_pressed(b(1)) && t.was_released(b(1)));
        assert_eq!(buf.late_events(), 1);
    }

    #[test]
    fn axes_keep_last_value_and_bad_axis_is_refused() {
        let mut buf = InputBuffer::new();
        buf.push(ev(1, EventKind::Axis { axis: 1, value: -5 }))
            .unwrap();
        buf.push(ev(2, EventKind::Axis { axis: 1, value: 7 }))
            .unwrap();
        assert_eq!(
            buf.push(ev(2, EventKind::Axis { axis: 4, value: 7 })),
            Err(InputError::NoSuchAxis { axis: 4 })
        );
        assert_eq!(buf.take_tick(end(16)).axes, [0, 7, 0, 0]);
        assert_eq!(buf.take_tick(end(32)).axes, [0, 7, 0, 0]);
    }

    #[test]
    fn release_all_releases_what_is_held_at_that_time() {
        let mut buf = InputBuffer::with_capacity(2);
        buf.push(ev(1, EventKind::Down(b(0)))).unwrap();
        let t = buf.take_tick(end(16));
        assert!(t.is_held(b(0)));
        // Button 1 goes down at 20 ms, the app is hidden at 24 ms, and a
        // (platform-invented) down of button 2 at 30 ms follows.
        buf.push(ev(20, EventKind::Down(b(1)))).unwrap();
        buf.push(ev(30, EventKind::Down(b(2)))).unwrap();
        buf.release_all(end(24)); // at capacity: still queued
        assert_eq!(buf.pending(), 3);
        let t = buf.take_tick(end(32));
        assert_eq!(t.pressed, Buttons::from_bits(0b110));
        assert_eq!(t.released, Buttons::from_bits(0b011));
        assert_eq!(t.held, Buttons::from_bits(0b100));
        // Nothing stuck afterwards.
        let t = buf.take_tick(end(48));
        assert_eq!(
            (t.held, t.pressed, t.released),
            (Buttons::from_bits(0b100), Buttons::NONE, Buttons::NONE)
        );
    }

    #[test]
    fn full_buffer_is_an_error_not_a_loss() {
        let mut buf = InputBuffer::with_capacity(2);
        buf.push(ev(1, EventKind::Down(b(0)))).unwrap();
        buf.push(ev(2, EventKind::Up(b(0)))).unwrap();
        assert_eq!(
            buf.push(ev(3, EventKind::Down(b(0)))),
            Err(InputError::Full { capacity: 2 })
        );
        assert_eq!(buf.pending(), 2);
        assert!(Button::new(64).is_none());
    }
}
