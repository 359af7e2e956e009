//! Round-trip properties of the replay codec, and "never panics" on any bytes.

use proptest::prelude::*;
use tickwise::codec::{Reader, put_signed, put_varint};
use tickwise::{
    AXES, Buttons, Recorder, Replay, ReplayHeader, ReplayInput, ReplayLimits, Sim, StateVisitor,
    TickInput, verify,
};

/// A sim over any input type: counts steps and hashes the inputs it saw.
#[derive(Clone, Debug, Default)]
struct Echo<I> {
    steps: u64,
    seen: u64,
    _input: core::marker::PhantomData<I>,
}

impl<I: ReplayInput + core::fmt::Debug> Sim for Echo<I> {
    type Input = I;
    fn step(&mut self, inputs: &[I]) {
        let input = &inputs.first().cloned().unwrap_or_default();
        let mut bytes = Vec::new();
        input.encode(&mut bytes);
        for b in bytes {
            self.seen = (self.seen ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.steps += 1;
    }
    fn visit_state(&self, v: &mut dyn StateVisitor) {
        v.field("steps");
        v.value(self.steps);
        v.field("seen");
        v.value(self.seen);
    }
}

fn header(every: u64) -> ReplayHeader {
    ReplayHeader {
        sim_id: "echo".into(),
        sim_version: 1,
        config: b"{\"k\":1}".to_vec(),
        seed: 9,
        ticks: 0,
        checkpoint_every: every,
        input_kind: 0,
        players: 1,
    }
}

fn record<I: ReplayInput + core::fmt::Debug>(inputs: &[I], every: u64) -> Replay<I> {
    let mut rec = Recorder::new(Echo::<I>::default(), header(every)).unwrap();
    for i in inputs {
        rec.step(std::slice::from_ref(i));
    }
    rec.finish().unwrap().1
}

fn tick_input() -> impl Strategy<Value = TickInput> {
    // Mostly idle or repeated inputs, sometimes anything: runs of identical inputs matter.
    let any = (
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        any::<[i16; AXES]>(),
    )
        .prop_map(|(h, p, r, axes)| TickInput {
            held: Buttons::from_bits(h),
            pressed: Buttons::from_bits(p),
            released: Buttons::from_bits(r),
            axes,
        });
    prop_oneof![
        3 => Just(TickInput::default()),
        1 => Just(TickInput { held: Buttons::from_bits(1), ..TickInput::default() }),
        2 => any,
    ]
}

fn small_i32() -> impl Strategy<Value = i32> {
    prop_oneof![4 => -1i32..=1, 1 => any::<i32>()]
}

proptest! {
    #[test]
    fn varints_round_trip(v in any::<u64>()) {
        let mut out = Vec::new();
        put_varint(&mut out, v);
        let mut r = Reader::new(&out);
        prop_assert_eq!(r.varint("v"), Ok(v));
        prop_assert!(r.is_empty());
        prop_assert_eq!(out.len(), (64 - v.leading_zeros() as usize).div_ceil(7).max(1));
        let mut signed = Vec::new();
        put_signed(&mut signed, v.cast_signed());
        prop_assert_eq!(Reader::new(&signed).signed_in("s", i64::MIN, i64::MAX), Ok(v.cast_signed()));
    }

    #[test]
    fn tick_inputs_round_trip(i in tick_input()) {
        let mut out = Vec::new();
        i.encode(&mut out);
        let mut r = Reader::new(&out);
        prop_assert_eq!(TickInput::decode(&mut r), Ok(i));
        prop_assert!(r.is_empty());
    }

    #[test]
    fn i32_replays_round_trip(inputs in prop::collection::vec(small_i32(), 0..400), every in 1u64..80) {
        let replay = record(&inputs, every);
        let bytes = replay.to_bytes();
        let back = Replay::<i32>::from_bytes(&bytes, &ReplayLimits::DEFAULT).unwrap();
        prop_assert_eq!(&back, &replay);
        prop_assert_eq!(back.inputs(0).copied().collect::<Vec<_>>(), inputs.clone());
        // Runs are maximal: neighbours differ, so identical inputs cost one run.
        prop_assert!(back.runs(0).windows(2).all(|w| w[0].input != w[1].input));
        prop_assert_eq!(back.checkpoint_count() as u64, inputs.len() as u64 / every);
        prop_assert!(verify(Echo::<i32>::default(), &back).is_match());
        prop_assert_eq!(back.to_bytes(), bytes);
    }

    #[test]
    fn tick_input_replays_round_trip(inputs in prop::collection::vec(tick_input(), 0..200), every in 1u64..50) {
        let replay = record(&inputs, every);
        let bytes = replay.to_bytes();
        let back = Replay::<TickInput>::from_bytes(&bytes, &ReplayLimits::DEFAULT).unwrap();
        prop_assert_eq!(back.inputs(0).copied().collect::<Vec<_>>(), inputs);
        prop_assert!(verify(Echo::<TickInput>::default(), &back).is_match());
        prop_assert_eq!(back.to_bytes(), bytes);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = Replay::<i32>::from_bytes(&bytes, &ReplayLimits::DEFAULT);
        let _ = Replay::<TickInput>::from_bytes(&bytes, &ReplayLimits::DEFAULT);
    }

    /// Mutations of a valid file with the integrity checksum recomputed reach
    /// the body parser: it must refuse or accept, never panic, and what it
    /// accepts must write back to the same bytes (one encoding per replay).
    #[test]
    fn mutated_files_with_fixed_checksums_never_panic(
        inputs in prop::collection::vec(small_i32(), 0..100),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
    ) {
        let mut bytes = record(&inputs, 7).to_bytes();
        let body = bytes.len() - 8;
        for (at, value) in edits {
            let i = 20 + at.index(body - 20);
            bytes[i] = value;
        }
        let sum = tickwise::Fnv1a64::hash(&bytes[..body]);
        bytes[body..].copy_from_slice(&sum.to_le_bytes());
        if let Ok(r) = Replay::<i32>::from_bytes(&bytes, &ReplayLimits::DEFAULT) {
            prop_assert_eq!(r.to_bytes(), bytes);
            let _ = verify(Echo::<i32>::default(), &r);
        }
    }
}
