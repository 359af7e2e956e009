//! Plugging a session into the game's `FixedLoop`, and injected faults.

use core::fmt;

use tickwise::{Nanos, ReplayInput, Sim, StateVisitor};

use crate::session::{Session, TickOutcome};
use crate::transport::Transport;

/// A session and its transport as a [`Sim`], so a [`tickwise::FixedLoop`]
/// drives it: every tick the loop's clock yields (catch-up ticks after a
/// resume included) is one [`Session::tick`] with that tick's local input.
/// The loop's clock, lifecycle and catch-up rules therefore apply to
/// netplay unchanged; a tick the session stalls or waits is still a tick of
/// the loop (the loop counts time, the session counts simulated ticks).
pub struct NetGame<'t, S: Sim> {
    session: Session<S>,
    transport: &'t mut dyn Transport,
    last: Option<TickOutcome>,
}

impl<S: Sim + fmt::Debug> fmt::Debug for NetGame<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NetGame")
            .field("session", &self.session)
            .field("last", &self.last)
            .finish_non_exhaustive()
    }
}

impl<'t, S: Sim + Clone> NetGame<'t, S>
where
    S::Input: ReplayInput,
{
    /// Wraps `session`, talking over `transport`.
    #[must_use]
    pub fn new(session: Session<S>, transport: &'t mut dyn Transport) -> NetGame<'t, S> {
        NetGame {
            session,
            transport,
            last: None,
        }
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

    /// The session back.
    #[must_use]
    pub fn into_session(self) -> Session<S> {
        self.session
    }
}

impl<S: Sim + Clone> Sim for NetGame<'_, S>
where
    S::Input: ReplayInput,
{
    type Input = S::Input;

    fn step(&mut self, input: &S::Input) {
        self.last = Some(self.session.tick(input, self.transport));
    }

    fn visit_state(&self, visitor: &mut dyn StateVisitor) {
        self.session.sim().visit_state(visitor);
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

    fn step(&mut self, input: &S::Input) {
        self.inner.step(input);
        self.steps += 1;
        if self.at == Some(self.steps) {
            self.inner.step(input);
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
