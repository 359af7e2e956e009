//! What a netplay run needs besides the sim and what it is held to: a
//! peer's transport and clocks ([`PeerIo`]), a spectator's
//! ([`SpectateIo`]), and the limits checked before anything runs
//! ([`NetLimits`]).

use tickwise::ReplayLimits;

use crate::limits::RunLimits;

/// What a netplay peer needs besides the sim: its transport, the host
/// clock, how long to linger after the last tick and the overall deadline.
pub struct PeerIo<'a> {
    /// The datagram transport (UDP for real processes).
    pub transport: &'a mut dyn tickwise_net::Transport,
    /// The host clock.
    pub clock: &'a mut dyn tickwise_net::HostClock,
    /// This player's slot.
    pub local: u8,
    /// Time to keep talking after confirming the last tick.
    pub linger: tickwise::Nanos,
    /// Give up after this long.
    pub deadline: tickwise::Nanos,
    /// `Some(epoch)`: this process takes its slot back in a running match
    /// (a rejoin; `epoch` is random per process).
    pub rejoin: Option<u64>,
}

impl core::fmt::Debug for PeerIo<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PeerIo")
            .field("local", &self.local)
            .field("linger", &self.linger)
            .field("deadline", &self.deadline)
            .finish_non_exhaustive()
    }
}

/// What a spectator process needs besides the sim: its transport, the
/// host clock, the player it watches, its epoch and its deadline.
pub struct SpectateIo<'a> {
    /// The datagram transport (UDP for real processes), mapping `host`.
    pub transport: &'a mut dyn tickwise_net::Transport,
    /// The host clock.
    pub clock: &'a mut dyn tickwise_net::HostClock,
    /// The slot of the player that feeds this spectator.
    pub host: u8,
    /// A random number of this process.
    pub epoch: u64,
    /// Give up after this long.
    pub deadline: tickwise::Nanos,
}

impl core::fmt::Debug for SpectateIo<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SpectateIo")
            .field("host", &self.host)
            .field("deadline", &self.deadline)
            .finish_non_exhaustive()
    }
}

/// The limits of a netplay run ([`Catalog::netplay_within`](crate::Catalog::netplay_within),
/// [`Catalog::peer_within`](crate::Catalog::peer_within)): the run's own work and snapshot memory, and
/// the limits of the verifier its recorded replay is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetLimits {
    /// Work and snapshot memory of the run.
    pub run: RunLimits,
    /// What a verifier of the recorded replay accepts.
    pub replay: ReplayLimits,
}

impl NetLimits {
    /// [`RunLimits::DEFAULT`] and [`ReplayLimits::DEFAULT`].
    pub const DEFAULT: NetLimits = NetLimits {
        run: RunLimits::DEFAULT,
        replay: ReplayLimits::DEFAULT,
    };
}

impl Default for NetLimits {
    fn default() -> NetLimits {
        NetLimits::DEFAULT
    }
}
