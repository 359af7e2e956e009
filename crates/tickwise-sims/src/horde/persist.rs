//! The horde's state as bytes ([`tickwise::SnapshotBytes`]), for a player
//! who rejoins a netplay match.
//!
//! Layout (version 1; varints are LEB128, `i32`/`i64` zig-zag varints):
//! tick, rng state, rng increment, players, then per hero x, y, hp, downs,
//! invuln, attack timer; wipes, kills, waves, alive, last pairs, last
//! contacts; the enemy count `n` (must equal the config's), then per storage
//! slot x, y, id, vx, vy, hp, crowd. Slots are kept in storage order, and
//! where each id is stored follows from the ids, so the restored world steps
//! exactly as the original.
//!
//! The bytes come from a peer, so reading refuses what no run reaches and
//! the step relies on: a hero or an enemy off the field, an enemy faster
//! than [`MAX_ENEMY_VELOCITY`] on an axis (steering sums positions and
//! velocities in `i32`), an `alive` other than the enemies with hit
//! points, an id twice. Anything else a step takes as it is, without a
//! panic (`fuzz/`, target `rejoin_snapshot`): the counters (wipes, kills,
//! waves, downs) wrap at `u64::MAX`.

use alloc::vec::Vec;

use tickwise::codec::{Reader, put_signed, put_varint};
use tickwise::{Pcg32, SnapshotBytes, SnapshotError};

use super::hero::MAX_HEROES;
use super::rules::MAX_ENEMY_VELOCITY;
use super::world::HordeWorld;

impl SnapshotBytes for HordeWorld {
    const SNAPSHOT_VERSION: u16 = 1;

    fn write_state(&self, out: &mut Vec<u8>) {
        put_varint(out, self.tick);
        let (state, inc) = self.rng.parts();
        put_varint(out, state);
        put_varint(out, inc);
        put_varint(out, self.players as u64);
        for h in &self.heroes[..self.players] {
            put_signed(out, i64::from(h.x));
            put_signed(out, i64::from(h.y));
            put_signed(out, h.hp);
            put_varint(out, h.downs);
            put_varint(out, u64::from(h.invuln));
            put_varint(out, u64::from(h.attack_timer));
        }
        for v in [self.wipes, self.kills, self.waves, u64::from(self.alive)] {
            put_varint(out, v);
        }
        put_varint(out, self.last_pairs);
        put_varint(out, u64::from(self.last_contacts));
        let e = &self.e;
        put_varint(out, e.body.len() as u64);
        for k in 0..e.body.len() {
            let b = &e.body[k];
            put_signed(out, i64::from(b.x));
            put_signed(out, i64::from(b.y));
            put_varint(out, u64::from(b.id));
            put_signed(out, i64::from(e.vel[k][0]));
            put_signed(out, i64::from(e.vel[k][1]));
            put_signed(out, i64::from(e.hp[k]));
            put_varint(out, u64::from(e.crowd[k]));
        }
    }

    fn read_state(&mut self, r: &mut Reader<'_>) -> Result<(), SnapshotError> {
        self.tick = r.varint("tick")?;
        let state = r.varint("rng state")?;
        let inc = r.varint("rng increment")?;
        self.rng = Pcg32::from_parts(state, inc).ok_or(SnapshotError::Malformed {
            what: "rng increment",
        })?;
        let players = r.varint("players")?;
        if players != self.players as u64 || self.players > MAX_HEROES {
            return Err(SnapshotError::Config {
                what: "player count",
            });
        }
        let (max_x, max_y) = (i64::from(self.p.max_x), i64::from(self.p.max_y));
        for h in &mut self.heroes[..self.players] {
            // Heroes start on the field and every move is clamped to it.
            h.x = r.signed_in("hero x", 0, max_x)? as i32;
            h.y = r.signed_in("hero y", 0, max_y)? as i32;
            h.hp = r.signed_in("hero hp", i64::MIN, i64::MAX)?;
            h.downs = r.varint("hero downs")?;
            h.invuln = r.varint_u32("hero invulnerability")?;
            h.attack_timer = r.varint_u32("hero attack timer")?;
        }
        self.wipes = r.varint("wipes")?;
        self.kills = r.varint("kills")?;
        self.waves = r.varint("waves")?;
        self.alive = r.varint_u32("alive")?;
        self.last_pairs = r.varint("last pairs")?;
        self.last_contacts = r.varint_u32("last contacts")?;
        let n = r.varint("enemy count")?;
        if n != self.e.body.len() as u64 || self.slot_of.len() != self.e.body.len() {
            return Err(SnapshotError::Config {
                what: "enemy count",
            });
        }
        // The storage order is about to change (even if a later field fails).
        self.slot_of.stale();
        // Every id exactly once: `seen` marks ids already placed.
        let mut seen = alloc::vec![false; self.e.body.len()];
        let fastest = i64::from(MAX_ENEMY_VELOCITY);
        for k in 0..self.e.body.len() {
            // Every enemy, dead or alive, stands on the field: it spawns
            // there and every move is clamped to it.
            let x = r.signed_in("enemy x", 0, max_x)? as i32;
            let y = r.signed_in("enemy y", 0, max_y)? as i32;
            let id = r.varint_u32("enemy id")?;
            match seen.get_mut(id as usize) {
                Some(s) if !*s => *s = true,
                _ => return Err(SnapshotError::Malformed { what: "enemy id" }),
            }
            let vx = r.signed_in("enemy velocity", -fastest, fastest)? as i32;
            let vy = r.signed_in("enemy velocity", -fastest, fastest)? as i32;
            let hp = r.signed_i32("enemy hp")?;
            let crowd =
                u16::try_from(r.varint("enemy crowd")?).map_err(|_| SnapshotError::Malformed {
                    what: "enemy crowd",
                })?;
            let b = &mut self.e.body[k];
            b.x = x;
            b.y = y;
            b.id = id;
            self.e.vel[k] = [vx, vy];
            self.e.hp[k] = hp;
            self.e.crowd[k] = crowd;
        }
        // `alive` counts the enemies with hit points, which every step keeps
        // true; a count that disagrees would underflow at the next kills.
        let live = self.e.hp.iter().filter(|&&hp| hp > 0).count();
        if u64::from(self.alive) != live as u64 {
            return Err(SnapshotError::Malformed { what: "alive" });
        }
        Ok(())
    }
}
