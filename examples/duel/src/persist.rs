//! The duel's state as bytes ([`tickwise::SnapshotBytes`]), so a player can
//! rejoin a netplay match: tick, ball x/y, velocity x/y, paddles, charged
//! flags, scores, serve wait and the serve generator, as varints (signed
//! ones zig-zag). Version 1. A state no game reaches (a ball off the field,
//! a speed past the top speed, ...) is refused as malformed: the bytes come
//! from a peer, and the step's integer maths hold only inside those ranges.

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
        self.check_reachable()
    }
}

impl Duel {
    /// Refuses a state no game under this config reaches. The bytes come
    /// from a peer, and the step's maths rely on these ranges (a ball at
    /// the edge of `i32` overflowed its next move): the ball on the field,
    /// each speed at most `maxBallSpeed`, each paddle's centre in its
    /// clamp range, no score past `winScore` (scoring stops there), the
    /// serve wait at most `serveDelay`.
    fn check_reachable(&self) -> Result<(), SnapshotError> {
        let c = &self.cfg;
        let bad = |what| Err(SnapshotError::Malformed { what });
        if !(0..=c.width).contains(&self.ball[0]) || !(0..=c.height).contains(&self.ball[1]) {
            return bad("ball");
        }
        if self
            .vel
            .iter()
            .any(|v| v.unsigned_abs() > c.max_ball_speed.unsigned_abs())
        {
            return bad("velocity");
        }
        let paddle = c.paddle_half..=c.height - c.paddle_half;
        if !self.paddles.iter().all(|p| paddle.contains(p)) {
            return bad("paddle");
        }
        if self.score.iter().any(|&s| s > c.win_score) {
            return bad("score");
        }
        if self.serve_in > c.serve_delay {
            return bad("serve wait");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use tickwise::{Pcg32, Sim, SnapshotError, read_snapshot, write_snapshot};

    use crate::{DuelConfig, random_input};

    /// The default config's duel after `ticks` of random inputs from
    /// `seed`, and the generator to go on with.
    fn played(ticks: u32, seed: u64) -> (DuelConfig, crate::Duel, Pcg32) {
        let cfg = DuelConfig::parse(crate::DEFAULT_CONFIG).unwrap();
        let mut a = crate::Duel::new(&cfg);
        let mut rng = Pcg32::new(seed, 0);
        for _ in 0..ticks {
            a.step(&[random_input(&mut rng), random_input(&mut rng)]);
        }
        (cfg, a, rng)
    }

    #[test]
    fn a_duel_read_back_plays_on_like_the_original() {
        let (cfg, mut a, mut rng) = played(900, 3);
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

    #[test]
    fn any_changed_byte_is_refused_or_plays_on() {
        // Every byte of a real snapshot with each of four masks: the
        // reader refuses it or gives a state that plays 300 ticks of both
        // players' random inputs (a debug build checks every sum).
        let (cfg, a, mut rng) = played(700, 4);
        let bytes = write_snapshot(&a);
        let (mut read, mut refused) = (0, 0);
        for i in 0..bytes.len() {
            for mask in [0x01, 0x40, 0x80, 0xff] {
                let mut b = bytes.clone();
                b[i] ^= mask;
                let mut d = crate::Duel::new(&cfg);
                if read_snapshot(&mut d, &b).is_err() {
                    refused += 1;
                    continue;
                }
                read += 1;
                for _ in 0..300 {
                    d.step(&[random_input(&mut rng), random_input(&mut rng)]);
                }
            }
        }
        // Both happen: the sweep reaches the step, and the checks refuse.
        assert!(read > 0 && refused > 0, "{read} read, {refused} refused");
    }

    /// Snapshot bytes written by hand from the layout in the module docs:
    /// tick, ball, velocity, paddles, charged, score, serve wait, rng.
    fn hand_written(
        ball: [i64; 2],
        vel: [i64; 2],
        paddles: [i64; 2],
        score: u64,
        wait: u64,
    ) -> Vec<u8> {
        use tickwise::codec::{put_signed, put_varint};
        let mut out = 1u16.to_le_bytes().to_vec();
        put_varint(&mut out, 7);
        for v in ball.into_iter().chain(vel).chain(paddles) {
            put_signed(&mut out, v);
        }
        out.extend([0, 1]);
        for v in [score, 0, wait, 5, 1] {
            put_varint(&mut out, v);
        }
        out
    }

    #[test]
    fn a_state_no_game_reaches_is_refused_not_played() {
        // A rejoin snapshot comes from a peer. Before the checks, a ball or
        // paddle at the edge of `i32` made the next step overflow (a debug
        // build panicked): the sim's maths assume the config's ranges.
        let cfg = DuelConfig::parse(crate::DEFAULT_CONFIG).unwrap();
        let (w, h) = (i64::from(cfg.width), i64::from(cfg.height));
        let (half, max) = (i64::from(cfg.paddle_half), i64::from(cfg.max_ball_speed));
        let read = |bytes: &[u8]| {
            let mut d = crate::Duel::new(&cfg);
            read_snapshot(&mut d, bytes).map(|()| d)
        };
        // The extremes a game reaches are read, and play on.
        let edge = hand_written(
            [w, 0],
            [-max, max],
            [half, h - half],
            u64::from(cfg.win_score) - 1,
            0,
        );
        let mut d = read(&edge).unwrap();
        let mut rng = Pcg32::new(9, 0);
        for _ in 0..200 {
            d.step(&[random_input(&mut rng), random_input(&mut rng)]);
        }
        // Any tick is read; it wraps rather than overflow.
        let mut late = edge.clone();
        late.splice(
            2..3,
            [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
        );
        let mut d = read(&late).unwrap();
        assert_eq!(d.tick(), u64::MAX);
        d.step(&[random_input(&mut rng), random_input(&mut rng)]);
        assert_eq!(d.tick(), 0);
        let big = i64::from(i32::MAX);
        for (bytes, what) in [
            (
                hand_written([big, h / 2], [max, 0], [half; 2], 0, 0),
                "ball",
            ),
            (hand_written([w / 2, -1], [max, 0], [half; 2], 0, 0), "ball"),
            (
                hand_written([w / 2, h / 2], [big, 0], [half; 2], 0, 0),
                "velocity",
            ),
            (
                hand_written([w / 2, h / 2], [0, -big - 1], [half; 2], 0, 0),
                "velocity",
            ),
            (
                hand_written([w / 2, h / 2], [max, 0], [big, half], 0, 0),
                "paddle",
            ),
            (
                hand_written([w / 2, h / 2], [max, 0], [half, half - 1], 0, 0),
                "paddle",
            ),
            (
                hand_written([w / 2, h / 2], [max, 0], [half; 2], u64::from(u32::MAX), 0),
                "score",
            ),
            (
                hand_written([w / 2, h / 2], [max, 0], [half; 2], 0, u64::from(u32::MAX)),
                "serve wait",
            ),
        ] {
            assert_eq!(
                read(&bytes).err(),
                Some(SnapshotError::Malformed { what }),
                "{what}"
            );
        }
    }
}
