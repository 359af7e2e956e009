//! The two players' sims on the shared simulated network, and the bot that
//! plays player 2.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use tickwise::{
    Button, Buttons, Capture, InputSource, Pcg32, Sim, StateVisitor, Tick, TickInput, Timestamp,
};
use tickwise_net::{Datagram, NetGame, Session, SimNetwork, Transport};
use tickwise_sims::horde::{DOWN, HordeSnapshot, HordeWorld, LEFT, RIGHT, UP};

/// A port of the shared network, owned by one player's [`NetGame`].
///
/// The network lives in an `Rc<RefCell>` because two loops share it; the
/// page never holds it across a loop's tick, so a borrow cannot fail. If
/// one ever did, the datagram is counted in [`SharedPort::refused`] and
/// treated as lost (the session survives loss), never a panic.
#[derive(Debug)]
pub struct SharedPort {
    pub(super) net: Rc<RefCell<SimNetwork>>,
    pub(super) slot: u8,
    pub(super) refused: u64,
}

impl SharedPort {
    /// Datagrams that could not reach the network (see the type's docs).
    #[must_use]
    pub const fn refused(&self) -> u64 {
        self.refused
    }
}

impl Transport for SharedPort {
    fn send(&mut self, to: u8, bytes: &[u8]) {
        match self.net.try_borrow_mut() {
            Ok(mut n) => n.port(self.slot).send(to, bytes),
            Err(_) => self.refused += 1,
        }
    }

    fn recv(&mut self, buf: &mut [u8]) -> Option<Datagram> {
        self.net.try_borrow_mut().ok()?.port(self.slot).recv(buf)
    }
}

/// What the page asks of both players' sessions, applied before their next tick.
#[derive(Debug, Default)]
pub(super) struct Controls {
    pub(super) input_delay: Cell<u32>,
    pub(super) stop_at: Cell<Option<u64>>,
}

/// One player's sim in its loop: the [`NetGame`], plus the page's controls
/// applied through the session's runtime API before each tick.
#[derive(Debug)]
pub struct Player {
    pub(super) game: NetGame<HordeWorld, SharedPort>,
    pub(super) controls: Rc<Controls>,
    /// A control the session refused (a stop tick already passed).
    pub(super) refused_controls: u64,
}

impl Player {
    /// The session.
    #[must_use]
    pub const fn session(&self) -> &Session<HordeWorld> {
        self.game.session()
    }

    fn apply_controls(&mut self) {
        let delay = self.controls.input_delay.get();
        let s = self.game.session_mut();
        if s.config().input_delay != delay && s.set_input_delay(delay).is_err() {
            self.refused_controls += 1;
        }
        if let Some(stop) = self.controls.stop_at.get()
            && s.config().stop_at != Some(stop)
            && s.set_stop_at(stop).is_err()
        {
            self.refused_controls += 1;
        }
    }
}

impl Sim for Player {
    type Input = TickInput;

    fn step(&mut self, inputs: &[TickInput]) {
        self.apply_controls();
        self.game.step(inputs);
    }

    fn visit_state(&self, visitor: &mut dyn StateVisitor) {
        self.game.visit_state(visitor);
    }
}

impl Capture for Player {
    type Snapshot = HordeSnapshot;

    fn capture_into(&self, out: &mut HordeSnapshot) {
        self.game.capture_into(out);
    }

    fn capture(&self) -> HordeSnapshot {
        self.game.capture()
    }
}

/// The moves the bot picks from: still, four straight, four diagonals.
const BOT_MOVES: [&[Button]; 9] = [
    &[],
    &[UP],
    &[DOWN],
    &[LEFT],
    &[RIGHT],
    &[UP, LEFT],
    &[UP, RIGHT],
    &[DOWN, LEFT],
    &[DOWN, RIGHT],
];

/// Player 2: a scripted bot that holds one of nine moves (still, four
/// straight, four diagonal) for 10 to 59 ticks, then picks another, all
/// drawn from a [`Pcg32`] seeded with [`BOT_SEED`]. It answers from its own count of ticks, so the same seed
/// gives the same inputs whatever the frame rate.
#[derive(Clone, Debug)]
pub struct Bot {
    rng: Pcg32,
    held: Buttons,
    left: u32,
}

impl Bot {
    /// A bot on `seed`.
    #[must_use]
    pub const fn new(seed: u64) -> Bot {
        Bot {
            rng: Pcg32::new(seed, 2),
            held: Buttons::NONE,
            left: 0,
        }
    }
}

impl InputSource<TickInput> for Bot {
    const NEEDS_WINDOW: bool = false;

    fn input(&mut self, _tick: Tick, _window_end: Timestamp) -> TickInput {
        let before = self.held;
        if self.left == 0 {
            let mv = BOT_MOVES
                .get(self.rng.below(9) as usize)
                .copied()
                .unwrap_or(&[]);
            self.held = mv.iter().fold(Buttons::NONE, |b, &x| b.with(x));
            self.left = 10 + self.rng.below(50);
        }
        self.left -= 1;
        TickInput {
            held: self.held,
            pressed: Buttons::from_bits(self.held.bits() & !before.bits()),
            released: Buttons::from_bits(before.bits() & !self.held.bits()),
            axes: [0; tickwise::AXES],
        }
    }
}
