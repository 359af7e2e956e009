//! Plugging a session into the game's `FixedLoop`, and injected faults.

use alloc::rc::Rc;
use core::cell::Cell;
use core::fmt;

use tickwise::codec::{Reader, put_varint};
use tickwise::{Capture, Nanos, ReplayInput, Sim, SnapshotBytes, SnapshotError, StateVisitor};

use crate::session::{Session, TickOutcome};
use crate::transport::Transport;

/// A session and its transport as a [`Sim`], so a [`tickwise::FixedLoop`]
/// drives it: every tick the loop's clock yields (catch-up ticks after a
/// resume included) is one [`Session::tick`] with that tick's local input.
/// The loop's clock, lifecycle and catch-up rules therefore apply to
/// netplay unchanged; a tick the session stalls or waits is still a tick of
/// the loop (the loop counts time, the session counts simulated ticks).
///
/// The transport `T` is owned (a handle such as a socket or a shared
/// network's port) or borrowed (`&mut dyn Transport`: a `&mut` of any
/// transport is one). Owning it lets a game keep the loop in a struct of
/// its own, as the browser's netplay page keeps two.
///
/// When the sim can be drawn ([`Capture`]), so can the game: the snapshot
/// is of the session's current state, predicted ticks included, which is
/// what a player sees.
pub struct NetGame<S: Sim, T> {
    session: Session<S>,
    transport: T,
    last: Option<TickOutcome>,
    /// Set to the session's current tick after every step
    /// ([`NetGame::session_tick_cell`]).
    tick_cell: Option<Rc<Cell<u64>>>,
}

impl<S: Sim + fmt::Debug, T> fmt::Debug for NetGame<S, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NetGame")
            .field("session", &self.session)
            .field("last", &self.last)
            .finish_non_exhaustive()
    }
}

impl<S: Sim + Clone, T: Transport> NetGame<S, T>
where
    S::Input: ReplayInput,
{
    /// Wraps `session`, talking over `transport`.
    #[must_use]
    pub fn new(session: Session<S>, transport: T) -> NetGame<S, T> {
        NetGame {
            session,
            transport,
            last: None,
            tick_cell: None,
        }
    }

    /// A cell that holds the session's current tick, updated after every
    /// step: for an input source that scripts the local player's inputs by
    /// session tick. The loop's own tick runs ahead of the session's by
    /// every stall and time-sync wait, which depend on the network's timing,
    /// so a script indexed by the loop's tick would send other inputs in
    /// each run; indexed by this one, a peer sends for session tick `t`
    /// what the script says for `t`, as `netplay` over the network
    /// simulator does.
    pub fn session_tick_cell(&mut self) -> Rc<Cell<u64>> {
        let cell = Rc::new(Cell::new(self.session.current_tick()));
        self.tick_cell = Some(Rc::clone(&cell));
        cell
    }

    /// The session.
    #[must_use]
    pub const fn session(&self) -> &Session<S> {
        &self.session
    }

    /// The session, mutably (to change the input delay, add spectators).
    pub const fn session_mut(&mut self) -> &mut Session<S> {
        &mut self.session
    }

    /// What the last tick did.
    #[must_use]
    pub const fn last_outcome(&self) -> Option<TickOutcome> {
        self.last
    }

    /// The transport.
    #[must_use]
    pub const fn transport(&self) -> &T {
        &self.transport
    }

    /// The session back.
    #[must_use]
    pub fn into_session(self) -> Session<S> {
        self.session
    }
}

impl<S: Sim + Clone, T: Transport> Sim for NetGame<S, T>
where
    S::Input: ReplayInput,
{
    type Input = S::Input;

    /// The local player's input only: the session gets the other players'
    /// over the network.
    fn step(&mut self, inputs: &[S::Input]) {
        let local = inputs.first().cloned().unwrap_or_default();
        self.last = Some(self.session.tick(&local, &mut self.transport));
        if let Some(cell) = &self.tick_cell {
            cell.set(self.session.current_tick());
        }
    }

    fn visit_state(&self, visitor: &mut dyn StateVisitor) {
        self.session.sim().visit_state(visitor);
    }
}

impl<S: Capture + Clone, T: Transport> Capture for NetGame<S, T>
where
    S::Input: ReplayInput,
{
    type Snapshot = S::Snapshot;

    fn capture_into(&self, out: &mut S::Snapshot) {
        self.session.sim().capture_into(out);
    }

    fn capture(&self) -> S::Snapshot {
        self.session.sim().capture()
    }
}

/// A sim made non-deterministic on purpose, to test desync detection: the
/// step that produces state `at` runs the inner sim's step twice (so the
/// state at tick `at` and after is wrong on this peer only). The counter
/// travels with snapshots, so rollbacks re-inject at the same tick, as a
/// real platform-dependent bug would.
#[derive(Debug)]
pub struct Injected<S> {
    inner: S,
    steps: u64,
    at: Option<u64>,
}

impl<S> Injected<S> {
    /// `inner`, starting at tick `start`, faulty at tick `at` when `Some`.
    #[must_use]
    pub const fn new(inner: S, start: u64, at: Option<u64>) -> Injected<S> {
        Injected {
            inner,
            steps: start,
            at,
        }
    }

    /// The wrapped sim.
    #[must_use]
    pub const fn inner(&self) -> &S {
        &self.inner
    }
}

impl<S: Sim> Sim for Injected<S> {
    type Input = S::Input;

    fn players(&self) -> usize {
        self.inner.players()
    }

    fn step(&mut self, inputs: &[S::Input]) {
        self.inner.step(inputs);
        self.steps += 1;
        if self.at == Some(self.steps) {
            self.inner.step(inputs);
        }
    }

    fn visit_state(&self, visitor: &mut dyn StateVisitor) {
        self.inner.visit_state(visitor);
    }

    fn on_time_dropped(&mut self, dropped: Nanos) {
        self.inner.on_time_dropped(dropped);
    }

    fn digest(&self) -> alloc::string::String {
        self.inner.digest()
    }
}

impl<S: Clone> Clone for Injected<S> {
    fn clone(&self) -> Injected<S> {
        Injected {
            inner: self.inner.clone(),
            steps: self.steps,
            at: self.at,
        }
    }

    /// Forwards to the inner sim's `clone_from`, keeping its buffer reuse.
    fn clone_from(&mut self, source: &Injected<S>) {
        self.inner.clone_from(&source.inner);
        self.steps = source.steps;
        self.at = source.at;
    }
}

/// The inner sim's bytes after the step counter (a varint), so a rejoined
/// peer's fault injection counts on from where the donor's was.
impl<S: SnapshotBytes> SnapshotBytes for Injected<S> {
    const SNAPSHOT_VERSION: u16 = S::SNAPSHOT_VERSION;

    fn write_state(&self, out: &mut alloc::vec::Vec<u8>) {
        put_varint(out, self.steps);
        self.inner.write_state(out);
    }

    fn read_state(&mut self, r: &mut Reader<'_>) -> Result<(), SnapshotError> {
        self.steps = r
            .varint("steps")
            .map_err(SnapshotError::malformed("step counter"))?;
        self.inner.read_state(r)
    }
}

impl<S: 'static> crate::SnapshotCodec<Injected<S>> {
    /// The encoding of [`Injected`] around a sim with `inner`'s: the step
    /// counter (a varint), then the inner sim's bytes.
    #[must_use]
    pub fn injected(inner: &crate::SnapshotCodec<S>) -> crate::SnapshotCodec<Injected<S>> {
        let w = inner.clone();
        let r = inner.clone();
        crate::SnapshotCodec::from_fns(
            move |sim: &Injected<S>, out: &mut alloc::vec::Vec<u8>| {
                put_varint(out, sim.steps);
                w.write(&sim.inner, out);
            },
            move |sim: &mut Injected<S>, bytes: &[u8]| {
                let mut rd = Reader::new(bytes);
                sim.steps = rd
                    .varint("steps")
                    .map_err(SnapshotError::malformed("step counter"))?;
                let rest = rd
                    .take(rd.remaining(), "state")
                    .map_err(SnapshotError::malformed("state"))?;
                r.read(&mut sim.inner, rest)
            },
        )
    }
}
