//! Format 4: one input stream per player. A two-player file written out by
//! hand from `docs/replay-format.md`, the player count's bounds, forged
//! inputs of one player caught and named, and the size of four independent
//! random streams against one.

#[allow(
    dead_code,
    reason = "the shared helpers; this file uses the byte builders"
)]
use crate::replay_bytes;

use replay_bytes::*;
use tickwise::{
    InputDifference, Pcg32, Recorder, Replay, ReplayError, ReplayHeader, ReplayVerdict, Sim,
    StateVisitor, compare_replays, verify,
};

/// Two players: `a` sums player 0's inputs, `b` player 1's.
#[derive(Clone, Debug, Default)]
struct Pair {
    steps: u64,
    a: i64,
    b: i64,
}

impl Sim for Pair {
    type Input = i32;
    fn players(&self) -> usize {
        2
    }
    fn step(&mut self, inputs: &[i32]) {
        self.steps += 1;
        self.a += i64::from(inputs[0]);
        self.b += i64::from(inputs[1]);
    }
    fn visit_state(&self, v: &mut dyn StateVisitor) {
        v.field("steps");
        v.value(self.steps);
        v.field("a");
        v.value_i64(self.a);
        v.field("b");
        v.value_i64(self.b);
    }
    fn digest(&self) -> String {
        format!("{}|{}|{}", self.steps, self.a, self.b)
    }
}

/// `n` players, each summing its own inputs into its own field.
#[derive(Clone, Debug)]
struct Many {
    sums: Vec<i64>,
}

impl Sim for Many {
    type Input = i32;
    fn players(&self) -> usize {
        self.sums.len()
    }
    fn step(&mut self, inputs: &[i32]) {
        for (s, i) in self.sums.iter_mut().zip(inputs) {
            *s += i64::from(*i);
        }
    }
    fn visit_state(&self, v: &mut dyn StateVisitor) {
        const NAMES: [&str; 4] = ["p0", "p1", "p2", "p3"];
        for (name, s) in NAMES.iter().zip(&self.sums) {
            v.field(name);
            v.value_i64(*s);
        }
    }
}

fn pair_header(every: u64) -> ReplayHeader {
    ReplayHeader {
        sim_id: "pair".into(),
        sim_version: 1,
        config: b"{}".to_vec(),
        seed: 9,
        ticks: 0,
        checkpoint_every: every,
        input_kind: 0,
        players: 0, // the recorder sets it from the sim
    }
}

fn record_pair(p0: &[i32], p1: &[i32], every: u64) -> Replay<i32> {
    let mut rec = Recorder::new(Pair::default(), pair_header(every)).unwrap();
    for (x, y) in p0.iter().zip(p1) {
        rec.step(&[*x, *y]);
    }
    rec.finish().unwrap().1
}

/// Three ticks: player 0 presses 1, 1, 1 and player 1 presses 2, 2, 2.
/// Each stream is one runs block of one run: `03 00 03 02` and `03 00 03 04`
/// (block of 3 ticks, mode 0, run of 3, zigzag(1) = 2 / zigzag(2) = 4).
fn two_player_file() -> Vec<u8> {
    FileBuilder::new()
        .lp(b"pair")
        .raw(&1u32.to_le_bytes())
        .lp(b"{}")
        .u64(fnv(b"{}"))
        .u64(9)
        .varint(3) // T
        .varint(3) // K
        .raw(&[0x01]) // input kind: i32
        .raw(&[0x02]) // players: 2
        .lp(&[0x03, 0x00, 0x03, 0x02]) // player 0
        .lp(&[0x03, 0x00, 0x03, 0x04]) // player 1
        .raw(&[0x00]) // no host events
        .varint(3)
        .lp(b"steps")
        .lp(b"a")
        .lp(b"b")
        // the checkpoint at tick 3 and the final state: steps 3, a 3, b 6
        .u64(state_sum(&[3, 3, 6]))
        .raw(&short(3))
        .raw(&short(3))
        .raw(&short(6))
        .u64(state_sum(&[3, 3, 6]))
        .raw(&short(3))
        .raw(&short(3))
        .raw(&short(6))
        .lp(b"3|3|6")
        .finish()
}

#[test]
fn a_two_player_file_is_written_and_read_as_documented() {
    let expected = two_player_file();
    let written = record_pair(&[1, 1, 1], &[2, 2, 2], 3).to_bytes();
    assert_eq!(written, expected);
    let r = Replay::<i32>::from_bytes(&expected, &tickwise::ReplayLimits::DEFAULT).unwrap();
    assert_eq!(r.header().players, 2);
    assert_eq!(r.players(), 2);
    assert_eq!(r.inputs(0).copied().collect::<Vec<_>>(), [1, 1, 1]);
    assert_eq!(r.inputs(1).copied().collect::<Vec<_>>(), [2, 2, 2]);
    assert!(verify(Pair::default(), &r).is_match());
}

#[test]
fn player_counts_outside_one_to_four_are_refused() {
    for bad in [0u8, 5, 255] {
        let mut f = two_player_file();
        // players byte: 20 + 5 ("pair") + 4 + 3 + 8 + 8 + 3 (T, K, kind) = 51
        assert_eq!(f[51], 2);
        f[51] = bad;
        let f = FileBuilder {
            bytes: f[..f.len() - 8].to_vec(),
        }
        .finish();
        assert_eq!(
            Replay::<i32>::from_bytes(&f, &tickwise::ReplayLimits::DEFAULT).unwrap_err(),
            ReplayError::LengthOutOfRange {
                what: "player count",
                declared: u64::from(bad),
                min: 1,
                max: 4
            }
        );
    }
}

#[test]
fn a_second_stream_that_does_not_cover_the_ticks_is_refused() {
    let mut f = two_player_file();
    // Player 1's block says 2 ticks: 03 00 03 04 -> 02 00 02 04.
    // players at 51, player 0's length at 52 and its 4 bytes, player 1's length at 57.
    let at = 58;
    assert_eq!(f[at..at + 4], [0x03, 0x00, 0x03, 0x04]);
    f[at] = 0x02;
    f[at + 2] = 0x02;
    let f = FileBuilder {
        bytes: f[..f.len() - 8].to_vec(),
    }
    .finish();
    assert_eq!(
        Replay::<i32>::from_bytes(&f, &tickwise::ReplayLimits::DEFAULT).unwrap_err(),
        ReplayError::RunsDoNotCoverTicks {
            declared: 3,
            covered: 2
        }
    );
}

#[test]
fn forged_inputs_of_one_player_are_caught_and_named() {
    let p0: Vec<i32> = (0..200).map(|t| if t % 7 < 3 { 1 } else { -1 }).collect();
    let p1: Vec<i32> = (0..200).map(|t| if t % 5 < 2 { 2 } else { 0 }).collect();
    let honest = record_pair(&p0, &p1, 50);
    assert!(verify(Pair::default(), &honest).is_match());
    // Player 1 claims a 5 at tick 120: the checkpoint at 150 catches it, on b.
    let mut parts = honest.clone().into_parts();
    let mut forged_p1 = p1.clone();
    forged_p1[120] = 5;
    parts.set_inputs(1, forged_p1);
    let forged = Replay::from_parts(parts).unwrap();
    let ReplayVerdict::Diverged(d) = verify(Pair::default(), &forged).verdict else {
        panic!("a forged player-1 input must not verify");
    };
    assert_eq!((d.last_good_tick, d.tick), (100, 150));
    assert_eq!(d.fields, ["b"]);
    let c = compare_replays(&mut Pair::default(), &mut Pair::default(), &honest, &forged);
    assert_eq!(
        c.first_input_difference,
        Some(InputDifference {
            tick: 120,
            player: 1
        })
    );
    assert_eq!(c.divergence.unwrap().tick, 121);
}

#[test]
fn a_replay_of_another_player_count_is_refused_before_any_step() {
    let r = record_pair(&[1, 1], &[0, 0], 1);
    let report = verify(
        Many {
            sums: vec![0, 0, 0],
        },
        &Replay::from_parts(r.into_parts()).unwrap(),
    );
    assert_eq!(report.ticks_run, 0);
    assert_eq!(
        report.verdict,
        ReplayVerdict::PlayersDiffer {
            recorded: 2,
            sim: 3
        }
    );
}

#[test]
fn four_independent_random_streams_cost_at_most_4_2_times_one() {
    let ticks = 20_000u64;
    let mut sizes = Vec::new();
    for n in [1usize, 4] {
        let sim = Many { sums: vec![0; n] };
        let mut rec = Recorder::new(sim, pair_header(60)).unwrap();
        let mut rngs: Vec<Pcg32> = (0..n as u64).map(|p| Pcg32::new(7, p)).collect();
        let mut inputs = vec![0i32; n];
        for _ in 0..ticks {
            for (x, rng) in inputs.iter_mut().zip(&mut rngs) {
                *x = rng.range_i32(-1, 1);
            }
            rec.step(&inputs);
        }
        let (_, replay) = rec.finish().unwrap();
        assert_eq!(replay.players(), n);
        sizes.push((replay.input_bytes(), replay.to_bytes().len()));
    }
    let (one, four) = (sizes[0], sizes[1]);
    // 2 bits a tick per stream (docs/replay-format.md): 5 000 bytes and a few.
    assert!((5_000..5_100).contains(&one.0), "{one:?}");
    assert!(four.0 * 10 <= one.0 * 42, "inputs {four:?} vs {one:?}");
    assert!(four.1 * 10 <= one.1 * 42, "files {four:?} vs {one:?}");
}
