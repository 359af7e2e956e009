//! Spectators attached to this player: their slots, the confirmed inputs
//! each is sent (from a buffer of [`SPECTATOR_BUFFER`] ticks), and when one
//! is too far behind. The wire side of joining is in `watch`.

use tickwise::{ReplayInput, Sim};

use super::Serve;
use super::inputs::ring;
use super::{Session, SessionError};
use crate::config::{FIRST_SPECTATOR_SLOT, SPECTATOR_BUFFER};
use crate::transport::Transport;
use crate::wire::{KIND_SPECTATE, MAX_INPUTS_PER_PACKET, WATCH_BEHIND, write_envelope};

#[derive(Clone, Debug, Default)]
pub(super) struct SpectatorLink {
    pub(super) active: bool,
    pub(super) acked: u64,
    pub(super) last_seq: Option<u64>,
    pub(super) last_heard: u64,
    pub(super) error: Option<u64>,
    /// A spectator process admitted over the wire: its epoch, and when.
    pub(super) epoch: Option<u64>,
    pub(super) admitted_at: u64,
    /// Its snapshot, while it loads (no inputs are sent until it acks one).
    pub(super) loading: Option<Serve>,
    /// Why it was dropped (a watch reply code and its two values), and how
    /// many more times to say so.
    pub(super) dropped: Option<(u8, u64, u64)>,
    pub(super) notices: u8,
}

/// Times a player tells a spectator it dropped it (and once more for each
/// datagram the spectator sends afterwards, at most once a tick).
pub(super) const DROP_NOTICES: u8 = 8;

impl<S: Sim + Clone> Session<S>
where
    S::Input: ReplayInput,
{
    pub(super) fn send_spectator(&mut self, k: usize, transport: &mut dyn Transport) {
        let Some(link) = self.spectators.get(k) else {
            return;
        };
        if !link.active || link.error.is_some() {
            return;
        }
        let oldest = self.probed.saturating_sub(SPECTATOR_BUFFER as u64);
        if link.acked < oldest {
            let needs = link.acked;
            let probed = self.probed;
            if let Some(l) = self.spectators.get_mut(k) {
                l.error = Some(needs);
                l.active = false;
                l.loading = None;
                if l.epoch.is_some() {
                    l.dropped = Some((WATCH_BEHIND, needs, probed));
                    l.notices = DROP_NOTICES;
                }
            }
            return;
        }
        let start = link.acked;
        let env = self.env();
        let players = usize::from(self.cfg.players);
        let mut out = core::mem::take(&mut self.out);
        write_envelope(&mut out, KIND_SPECTATE, &env);
        out.varint(start);
        let count_at = out.len();
        out.push(0);
        out.push(self.cfg.players);
        let mut count = 0u8;
        let mut t = start;
        while t < self.probed && usize::from(count) < MAX_INPUTS_PER_PACKET {
            let base = ring(t, SPECTATOR_BUFFER) * players;
            let mark = out.len();
            for p in 0..players {
                self.enc.clear();
                self.spec_buf[base + p].encode(&mut self.enc);
                out.extend(&self.enc);
            }
            if out.overflowed() {
                out.truncate(mark);
                break;
            }
            count += 1;
            t += 1;
        }
        out.set(count_at, count);
        if out.seal(&self.auth) {
            #[allow(clippy::cast_possible_truncation, reason = "at most 8 spectators")]
            transport.send(FIRST_SPECTATOR_SLOT + k as u8, out.bytes());
            self.stats.sent += 1;
        }
        self.out = out;
    }

    /// Starts feeding spectator `slot` (4, 5, ...) from tick `from` (a
    /// anchor's tick; the spectator holds that state).
    ///
    /// # Errors
    ///
    /// [`SessionError::NoSuchSpectator`], or
    /// [`SessionError::SpectatorTooFarBehind`] when `from` is no longer buffered.
    pub fn add_spectator(&mut self, slot: u8, from: u64) -> Result<(), SessionError> {
        let oldest = self.probed.saturating_sub(SPECTATOR_BUFFER as u64);
        let now = self.stats.local_ticks;
        let k = usize::from(slot.wrapping_sub(FIRST_SPECTATOR_SLOT));
        let link = self
            .spectators
            .get_mut(k)
            .filter(|_| slot >= FIRST_SPECTATOR_SLOT)
            .ok_or(SessionError::NoSuchSpectator { slot })?;
        if from < oldest || from > self.probed {
            return Err(SessionError::SpectatorTooFarBehind {
                slot,
                needs: from,
                oldest,
            });
        }
        *link = SpectatorLink {
            active: true,
            acked: from,
            last_seq: None,
            last_heard: now,
            ..SpectatorLink::default()
        };
        Ok(())
    }

    /// A spectator this host had to drop, and the tick it needed.
    ///
    /// # Errors
    ///
    /// [`SessionError::SpectatorTooFarBehind`] for a spectator that fell
    /// out of the buffer.
    pub fn spectator_status(&self, slot: u8) -> Result<(), SessionError> {
        let k = usize::from(slot.wrapping_sub(FIRST_SPECTATOR_SLOT));
        match self.spectators.get(k) {
            None => Err(SessionError::NoSuchSpectator { slot }),
            Some(l) => match l.error {
                Some(needs) => Err(SessionError::SpectatorTooFarBehind {
                    slot,
                    needs,
                    oldest: self.probed.saturating_sub(SPECTATOR_BUFFER as u64),
                }),
                None => Ok(()),
            },
        }
    }
}
