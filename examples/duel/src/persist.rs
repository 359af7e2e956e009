//! The duel's state as bytes ([`tickwise::SnapshotBytes`]), so a player can
//! rejoin a netplay match: tick, ball x/y, velocity x/y, paddles, charged
//! flags, scores, serve wait and the serve generator, as varints (signed
//! ones zig-zag). Version 1.

use tickwise::codec::{Reader, put_signed, put_varint};
use tickwise::{Pcg32, SnapshotBytes, SnapshotError};

use crate::Duel;

impl SnapshotBytes for Duel {
    const SNAPSHOT_VERSION: u16 = 1;

    fn write_state(&self, out: &mut Vec<u8>) {
        put_varint(out, self.tick);
        for v in self.ball.iter().chain(&self.vel).chain(&self.paddles) {
            put_signed(out, i64::from(*v));
        }
        for c in self.charged {
            out.push(u8::from(c));
        }
        for s in self.score {
            put_varint(out, u64::from(s));
        }
        put_varint(out, u64::from(self.serve_in));
        let (state, inc) = self.rng.parts();
        put_varint(out, state);
        put_varint(out, inc);
    }

    fn read_state(&mut self, r: &mut Reader<'_>) -> Result<(), SnapshotError> {
        self.tick = r.varint("tick")?;
        for v in self
            .ball
            .iter_mut()
            .chain(&mut self.vel)
            .chain(&mut self.paddles)
        {
            *v = r.signed_i32("position or velocity")?;
        }
        for c in &mut self.charged {
            *c = match r
                .u8("charged")
                .map_err(SnapshotError::malformed("charged"))?
            {
                0 => false,
                1 => true,
                _ => return Err(SnapshotError::Malformed { what: "charged" }),
            };
        }
        for s in &mut self.score {
            *s = r.varint_u32("score")?;
        }
        self.serve_in = r.varint_u32("serve wait")?;
        let state = r.varint("rng state")?;
        let inc = r.varint("rng increment")?;
        self.rng = Pcg32::from_parts(state, inc).ok_or(SnapshotError::Malformed {
            what: "rng increment",
        })?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use tickwise::{Pcg32, Sim, read_snapshot, write_snapshot};

    use crate::{DuelConfig, random_input};

    #[test]
    fn a_duel_read_back_plays_on_like_the_original() {
        let cfg = DuelConfig::parse(crate::DEFAULT_CONFIG).unwrap();
        let mut a = crate::Duel::new(&cfg);
        let mut rng = Pcg32::new(3, 0);
        for _ in 0..900 {
            a.step(&[random_input(&mut rng), random_input(&mut rng)]);
        }
        let bytes = write_snapshot(&a);
        let mut b = crate::Duel::new(&cfg);
        assert_ne!(a.checksum(), b.checksum());
        read_snapshot(&mut b, &bytes).unwrap();
        assert_eq!(a.checksum(), b.checksum());
        let mut rng_b = rng;
        for _ in 0..900 {
            a.step(&[random_input(&mut rng), random_input(&mut rng)]);
            b.step(&[random_input(&mut rng_b), random_input(&mut rng_b)]);
        }
        assert_eq!(a.checksum(), b.checksum());
        for n in 0..bytes.len() {
            let mut c = crate::Duel::new(&cfg);
            assert!(read_snapshot(&mut c, &bytes[..n]).is_err());
        }
    }
}
