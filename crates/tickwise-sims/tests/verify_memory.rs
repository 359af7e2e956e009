//! Verifying a replay takes memory for its encoded file, not for its runs
//! decoded: every heap call of this test process goes through a counting
//! allocator, and re-simulating a replay of random island inputs (a new run
//! almost every tick) must allocate next to nothing, however many ticks it has.
//!
//! The count is this thread's alone (`allocation-counter`), and the code
//! under test runs on it: a count of the whole process also took in
//! libtest's own first heap calls on a loaded machine (docs/testing.md).

use std::hint::black_box;

use allocation_counter::measure;
use tickwise::{Pcg32, Recorder, Replay, ReplayHeader, ReplayLimits, verify};
use tickwise_sims::island::{IslandConfig, IslandWorld};

const LOOP: &[u8] = include_bytes!("../../../config/island_loop.json");
const TICKS: u64 = 300_000;

#[test]
fn verify_streams_the_runs() {
    // The counter counts: 16 u64 are 128 bytes.
    let one = measure(|| drop(black_box(Vec::<u64>::with_capacity(16))));
    assert_eq!((one.count_total, one.bytes_total), (1, 128));
    let config = IslandConfig::from_json(LOOP).unwrap();
    let header = ReplayHeader {
        sim_id: "island".into(),
        sim_version: 1,
        config: LOOP.to_vec(),
        seed: 20_261_012,
        ticks: 0,
        // Few checkpoints, so that what they take does not hide the runs.
        checkpoint_every: 100_000,
        input_kind: 0,
        players: 1,
    };
    let mut rec = Recorder::new(IslandWorld::new(&config), header).unwrap();
    let mut rng = Pcg32::new(7, 1);
    let mut inputs = Vec::with_capacity(TICKS as usize);
    for _ in 0..TICKS {
        // -1, 0 or 1 at random: a new run two ticks in three.
        let input = i32::try_from(rng.next_u32() % 3).unwrap() - 1;
        inputs.push(input);
        rec.step(&[input]);
    }
    let (_, replay) = rec.finish().unwrap();
    let bytes = replay.to_bytes();
    let runs = replay.run_count();
    // Two ticks in three start a run (each -1/0/1 differs from the last with
    // probability 2/3): about 200 000 runs, far more than the bound below
    // could hold decoded (16 bytes each).
    assert!(runs > 190_000 && runs < 210_000, "{runs}");

    // Reading from an owned buffer keeps the buffer: no copy of the runs.
    let mut read = None;
    let read_bytes = measure(|| {
        read = Some(Replay::<i32>::from_vec(bytes.clone(), &ReplayLimits::DEFAULT).unwrap());
    })
    .bytes_total;
    let read = read.unwrap();
    // The clone above is `bytes.len()`; the rest (config, names, a few
    // checkpoints) is small.
    assert!(
        read_bytes < bytes.len() as u64 + 16 * 1024,
        "{read_bytes} for a {} byte file",
        bytes.len()
    );

    let mut report = None;
    let stats = measure(|| report = Some(verify(IslandWorld::new(&config), &read)));
    let report = report.unwrap();
    assert!(report.is_match(), "{report:?}");
    assert_eq!(report.ticks_run, TICKS);
    // The runs decoded would be 16 bytes x ~200 000 = ~3.2 MB.
    assert!(stats.bytes_total < 16 * 1024, "verify allocated {stats:?}");

    // The slice view still works and agrees with what was recorded.
    let expanded: Vec<i32> = read.inputs(0).copied().collect();
    assert_eq!(expanded, inputs);
    assert_eq!(read.runs(0).len(), runs);
    // Decoding for the slice view does not change equality or the bytes.
    assert_eq!(read, replay);
    assert_eq!(read.to_bytes(), bytes);
}
