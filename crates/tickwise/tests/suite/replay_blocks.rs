//! Format 3 input blocks: a packed block written out by hand, every hostile
//! block with its own error and offset, sizes checked against arithmetic,
//! and round trips over many alphabets and run structures.
//!
//! Expected bytes and sizes are computed here from `docs/replay-format.md`
//! (with the test-side LEB128 and FNV-1a helpers of `replay_bytes`), never
//! taken from the writer's output.

use crate::replay_bytes;

use proptest::prelude::*;
use replay_bytes::*;
use tickwise::{
    BlockFault, Pcg32, Replay, ReplayError, ReplayLimits, ReplayVerdict, Run, TickInput,
    read_header, verify,
};

/// A file of the `ctr` sim (config `{}`, seed 42) with `blocks` as its input
/// blocks section, then the rest as given; length and checksum patched.
fn file(ticks: u64, every: u64, blocks: &[u8], rest: &[u8]) -> Vec<u8> {
    golden_header(ticks, every).lp(blocks).raw(rest).finish()
}

/// The worked example's inputs: 12 ticks, 9 runs, 3 distinct values.
const TWELVE: [i32; 12] = [1, 0, -1, -1, 0, 1, 1, 1, 0, -1, 0, 1];

/// The packed block of `TWELVE`, by hand: 12 ticks (`0c`), mode 1, palette
/// of 3 in order of first appearance: 1, 0, −1 (zigzag `02 00 01`), so
/// symbols 0 1 2 2 1 0 0 0 1 2 1 0 at 2 bits each, first symbol in the low
/// bits: 0 | 1<<2 | 2<<4 | 2<<6 = a4; 1 | 0 | 0 | 0 = 01; 1 | 2<<2 | 1<<4 | 0 = 19.
const TWELVE_PACKED: [u8; 9] = [0x0c, 0x01, 0x03, 0x02, 0x00, 0x01, 0xa4, 0x01, 0x19];

/// The rest of the twelve-tick file (K = 12): no host events, fields, one
/// checkpoint at 12 and the final state (steps 12, total 2), digest.
fn twelve_rest() -> Vec<u8> {
    let mut r = vec![0x00, 0x02, 0x05];
    r.extend(b"steps");
    r.push(0x05);
    r.extend(b"total");
    for _ in 0..2 {
        r.extend(state_sum(&[12, 2]).to_le_bytes());
        r.extend(short(12));
        r.extend(short(2));
    }
    r.push(0x04);
    r.extend(b"12|2");
    r
}

#[test]
fn the_writer_packs_changing_inputs_as_documented() {
    let expected = file(12, 12, &TWELVE_PACKED, &twelve_rest());
    // 9 runs would take 18 bytes as runs; the packed block takes 9.
    assert_eq!(expected.len(), 52 + 9 + twelve_rest().len() + 8);
    let written = record(&TWELVE, 12).to_bytes();
    assert_eq!(written, expected);
    let r = read(&expected).unwrap();
    assert_eq!(r.inputs(0).copied().collect::<Vec<_>>(), TWELVE);
    assert_eq!(r.run_count(), 9);
    assert_eq!(r.runs(0).len(), 9);
    assert!(verify(Counter::default(), &r).is_match());
}

#[test]
fn a_long_run_stays_a_run_and_neighbours_merge_across_blocks() {
    // 70 ticks of +1, then TWELVE (which starts with +1). The writer merges
    // first: a runs block for the long run of 71 × (+1) (71 = 0x47), then a
    // packed block for the other 11 ticks: 0 −1 −1 0 1 1 1 0 −1 0 1, palette
    // (0, −1, 1) = 00 01 02, symbols 0 1 1 0 2 2 2 0 1 0 2:
    // 0 | 1<<2 | 1<<4 | 0 = 14; 2 | 2<<2 | 2<<4 | 0 = 2a; 1 | 0 | 2<<4 = 21.
    let mut inputs = vec![1; 70];
    inputs.extend(TWELVE);
    let replay = record(&inputs, 1000);
    let bytes = replay.to_bytes();
    let blocks = [
        0x47, 0x00, 0x47, 0x02, // runs block: 71 × (+1)
        0x0b, 0x01, 0x03, 0x00, 0x01, 0x02, 0x14, 0x2a, 0x21,
    ];
    // The section follows its length prefix at byte 52 (T = 82, K = 1000: 3 bytes).
    let at = 20 + 4 + 4 + 3 + 8 + 8 + 1 + 2 + 1 + 1;
    assert_eq!(bytes[at], blocks.len() as u8);
    assert_eq!(bytes[at + 1..at + 1 + blocks.len()], blocks[..]);
    let r = read(&bytes).unwrap();
    assert_eq!(r.run_count(), 9);
    assert_eq!(r.runs(0)[0], Run { len: 71, input: 1 });
    assert_eq!(r.inputs(0).copied().collect::<Vec<_>>(), inputs);
    assert!(verify(Counter::default(), &r).is_match());
}

#[test]
fn readers_accept_any_split_into_blocks() {
    // The same twelve ticks as three blocks (runs, packed, runs): another
    // writer's choice, read as the same inputs and the same merged runs.
    // Ticks 3..=6 are −1, 0, 1, 1: palette (−1, 0, 1) = 01 00 02, symbols
    // 0 1 2 2 = 0 | 1<<2 | 2<<4 | 2<<6 = a4.
    let blocks = [
        0x03, 0x00, 0x01, 0x02, 0x01, 0x00, 0x01, 0x01, // 1 × +1, 1 × 0, 1 × −1
        0x04, 0x01, 0x03, 0x01, 0x00, 0x02, 0xa4, // −1 0 +1 +1
        0x05, 0x00, 0x01, 0x02, 0x01, 0x00, 0x01, 0x01, 0x01, 0x00, 0x01,
        0x02, // +1 0 −1 0 +1
    ];
    let f = file(12, 12, &blocks, &twelve_rest());
    let r = read(&f).unwrap();
    assert_eq!(r.inputs(0).copied().collect::<Vec<_>>(), TWELVE);
    // −1 at tick 2 (runs block) and −1 at tick 3 (packed block) are one run.
    assert_eq!(r.run_count(), 9);
    assert!(verify(Counter::default(), &r).is_match());
    // The file is kept as read: writing it gives the same bytes.
    assert_eq!(r.to_bytes(), f);
}

// ---- hostile blocks: each has its own error and offset ----

/// The section starts at byte 52 in these files (T and K one byte each,
/// then the input kind and the player count).
const AT: u64 = 52;

fn block_error(ticks: u64, blocks: &[u8]) -> ReplayError {
    read(&file(ticks, 12, blocks, &twelve_rest())).unwrap_err()
}

fn bad(offset: u64, fault: BlockFault) -> ReplayError {
    ReplayError::BadInputBlock { offset, fault }
}

#[test]
fn palette_too_large_or_too_small() {
    assert_eq!(
        block_error(12, &[0x0c, 0x01, 0x11, 0x02, 0x00]),
        bad(AT + 2, BlockFault::PaletteSize { size: 17 })
    );
    // 2^40 = 80 80 80 80 80 20: refused before any entry is read.
    assert_eq!(
        block_error(12, &[0x0c, 0x01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20]),
        bad(AT + 2, BlockFault::PaletteSize { size: 1 << 40 })
    );
    assert_eq!(
        block_error(12, &[0x0c, 0x01, 0x01, 0x02, 0x00, 0x00, 0x00]),
        bad(AT + 2, BlockFault::PaletteSize { size: 1 })
    );
    assert_eq!(
        block_error(12, &[0x0c, 0x01, 0x00]),
        bad(AT + 2, BlockFault::PaletteSize { size: 0 })
    );
}

#[test]
fn duplicate_palette_entry() {
    // Palette 1, 0, 1: entry 2 at 52 + 3 + 2.
    assert_eq!(
        block_error(12, &[0x0c, 0x01, 0x03, 0x02, 0x00, 0x02, 0xa4, 0x01, 0x19]),
        bad(AT + 5, BlockFault::DuplicatePaletteEntry { index: 2 })
    );
}

#[test]
fn symbol_outside_the_palette() {
    // Symbol 5 is 3 (byte 1 = 1 | 3<<2 = 0x0d) with a palette of 3; the
    // symbols start at 52 + 6, so its byte is at 59.
    assert_eq!(
        block_error(12, &[0x0c, 0x01, 0x03, 0x02, 0x00, 0x01, 0xa4, 0x0d, 0x19]),
        bad(
            AT + 7,
            BlockFault::SymbolOutsidePalette {
                index: 5,
                symbol: 3,
                palette: 3
            }
        )
    );
}

#[test]
fn symbols_beyond_the_section() {
    // 12 symbols of 2 bits need 3 bytes; 2 are there.
    assert_eq!(
        block_error(12, &[0x0c, 0x01, 0x03, 0x02, 0x00, 0x01, 0xa4, 0x01]),
        ReplayError::Truncated {
            what: "packed input symbols",
            offset: AT + 6,
            needed: 3,
            available: 2
        }
    );
    // A block of 2^40 ticks in a file of T = 12 is refused as too long
    // before its symbols are counted.
    assert_eq!(
        block_error(12, &[0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0x01, 0x02]),
        bad(
            AT,
            BlockFault::PastEnd {
                block_ticks: 1 << 40,
                ticks_left: 12
            }
        )
    );
}

#[test]
fn padding_bits_must_be_zero() {
    // T = 10: 20 bits, so the last byte's high 4 bits are padding.
    assert_eq!(
        block_error(10, &[0x0a, 0x01, 0x03, 0x02, 0x00, 0x01, 0xa4, 0x01, 0xf1]),
        bad(AT + 8, BlockFault::NonZeroPadding)
    );
    // The same with zero padding reads (the rest of this file is for
    // T = 12, so it fails later, on the checkpoints, not on the blocks).
    assert!(!matches!(
        block_error(10, &[0x0a, 0x01, 0x03, 0x02, 0x00, 0x01, 0xa4, 0x01, 0x01]),
        ReplayError::BadInputBlock { .. }
    ));
}

#[test]
fn blocks_longer_than_the_declared_ticks() {
    assert_eq!(
        block_error(12, &[0x0d, 0x00, 0x0d, 0x00]),
        bad(
            AT,
            BlockFault::PastEnd {
                block_ticks: 13,
                ticks_left: 12
            }
        )
    );
    // The second block passes the end: 12 − 10 = 2 ticks were left.
    assert_eq!(
        block_error(12, &[0x0a, 0x00, 0x0a, 0x00, 0x03, 0x00, 0x03, 0x00]),
        bad(
            AT + 4,
            BlockFault::PastEnd {
                block_ticks: 3,
                ticks_left: 2
            }
        )
    );
    // Blocks that end short of T.
    assert_eq!(
        block_error(12, &[0x0b, 0x00, 0x0b, 0x00]),
        ReplayError::RunsDoNotCoverTicks {
            declared: 12,
            covered: 11
        }
    );
}

#[test]
fn empty_blocks_unknown_modes_and_runs_past_their_block() {
    assert_eq!(block_error(12, &[0x00, 0x00]), bad(AT, BlockFault::Empty));
    assert_eq!(
        block_error(12, &[0x0c, 0x02, 0x00]),
        bad(AT + 1, BlockFault::UnknownMode { mode: 2 })
    );
    // A run of 13 in a block of 12.
    assert_eq!(
        block_error(12, &[0x0c, 0x00, 0x0d, 0x00]),
        bad(
            AT + 2,
            BlockFault::RunPastBlock {
                block_ticks: 12,
                covered: 13
            }
        )
    );
    // A zero run inside a runs block.
    assert_eq!(
        block_error(12, &[0x0c, 0x00, 0x00, 0x00]),
        ReplayError::EmptyRun { offset: AT + 2 }
    );
    // A palette entry that is not a valid input (past the i32 range).
    assert!(matches!(
        block_error(12, &[0x0c, 0x01, 0x02, 0x80, 0x80, 0x80, 0x80, 0x10]),
        ReplayError::BadInput { offset, .. } if offset == AT + 3
    ));
}

#[test]
fn block_errors_say_what_and_where() {
    let msg = block_error(12, &[0x0c, 0x01, 0x11, 0x02]).to_string();
    assert!(
        msg.contains("byte 54") && msg.contains("palette of 17 inputs, outside 2..=16"),
        "{msg}"
    );
}

// ---- sizes, from arithmetic ----

/// The input blocks section of a file written by `record`: its length
/// prefix follows the header (`ctr`, T and K as varints).
fn section_len(bytes: &[u8], ticks: u64, every: u64) -> usize {
    let at = 20 + 4 + 4 + 3 + 8 + 8 + varint(ticks).len() + varint(every).len() + 2;
    let mut v = 0u64;
    for (i, &b) in bytes[at..].iter().enumerate() {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            break;
        }
    }
    usize::try_from(v).unwrap()
}

fn random_inputs(n: usize, values: &[i32], seed: u64) -> Vec<i32> {
    let mut rng = Pcg32::new(seed, 3);
    (0..n)
        .map(|_| values[rng.next_u32() as usize % values.len()])
        .collect()
}

#[test]
fn random_ternary_inputs_cost_two_bits_a_tick() {
    // 10 000 ticks of −1/0/1: one packed block, 2 bits a symbol:
    // 10 000 × 2 / 8 = 2 500 bytes of symbols, + varint(10 000) (2) + mode (1)
    // + palette size (1) + 3 one-byte entries = 2 507 bytes: 2.006 bits a
    // tick, 1.27 × the entropy log2(3) = 1.585 (the goal is 2 ×: 3.17).
    let inputs = random_inputs(10_000, &[-1, 0, 1], 7);
    let bytes = record(&inputs, 60).to_bytes();
    assert_eq!(section_len(&bytes, 10_000, 60), 2_507);
    // Whole file: the same arithmetic for every part (K = 60: 166
    // checkpoints of 8 + 2 × 4 bytes, and the final state).
    let total: i64 = inputs.iter().map(|&i| i64::from(i)).sum();
    let digest = format!("10000|{total}");
    let expected = 20 + 4 + 4 + 3 + 8 + 8 + 2 + 1 + 1 + 1 // header to player count
        + 2 + 2_507                                     // input blocks
        + 1                                             // no host events
        + 1 + 6 + 6                                     // 2 field names
        + 166 * 16 + 16                                 // checkpoints, final state
        + 1 + digest.len()
        + 8;
    assert_eq!(bytes.len(), expected);
}

#[test]
fn other_alphabets_cost_their_symbol_width() {
    // Two values: 1 bit a tick. 10 000 / 8 = 1 250, + 2 + 1 + 1 + 2.
    let inputs = random_inputs(10_000, &[-1, 1], 11);
    assert_eq!(
        section_len(&record(&inputs, 60).to_bytes(), 10_000, 60),
        1_256
    );
    // Five values: 4 bits a tick. 5 000, + 2 + 1 + 1 + 5.
    let inputs = random_inputs(10_000, &[-2, -1, 0, 1, 2], 13);
    assert_eq!(
        section_len(&record(&inputs, 60).to_bytes(), 10_000, 60),
        5_009
    );
}

#[test]
fn scripted_runs_cost_what_they_cost_as_runs() {
    // The island's scripted input: 20 ticks of +1, 20 of −1, … 10 000 ticks
    // are 500 runs of 2 bytes (version 2: 1 000 bytes); version 3 adds one
    // block header: varint(10 000) and the mode byte.
    let inputs: Vec<i32> = (0..10_000)
        .map(|t| if t % 40 < 20 { 1 } else { -1 })
        .collect();
    assert_eq!(
        section_len(&record(&inputs, 60).to_bytes(), 10_000, 60),
        1_003
    );
    // One long run: a single run in a single block.
    let idle = vec![0; 10_000];
    assert_eq!(
        section_len(&record(&idle, 60).to_bytes(), 10_000, 60),
        2 + 1 + 2 + 1
    );
}

// ---- the checked-in replays: written by the Python writer, the same bytes as the Rust one ----

#[test]
fn checked_in_replays_are_what_the_rust_writer_writes() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/replay_reader");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "twr") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let h = read_header(&bytes, &ReplayLimits::DEFAULT).unwrap();
        let again = match h.input_kind {
            1 => Replay::from_parts(read(&bytes).unwrap().into_parts())
                .unwrap()
                .to_bytes(),
            _ => {
                let r = Replay::<TickInput>::from_bytes(&bytes, &ReplayLimits::DEFAULT).unwrap();
                Replay::from_parts(r.into_parts()).unwrap().to_bytes()
            }
        };
        assert!(again == bytes, "{}", path.display());
        n += 1;
    }
    assert!(n >= 5, "{n} replays");
}

// ---- round trips ----

/// Inputs as runs over an alphabet: short runs (changing inputs), long runs
/// (scripted or idle stretches), or a mix, over 1 to 40 distinct values that
/// include wide ones (several varint bytes).
fn inputs() -> impl Strategy<Value = Vec<i32>> {
    let alphabet = prop::collection::vec(
        prop_oneof![-2i32..=2, any::<i32>(), Just(i32::MIN), Just(i32::MAX)],
        1..40,
    );
    let lengths = prop_oneof![
        4 => 1u64..4,
        1 => 60u64..200,
        1 => 1u64..70
    ];
    (
        alphabet,
        prop::collection::vec((any::<prop::sample::Index>(), lengths), 0..300),
    )
        .prop_map(|(alphabet, runs)| {
            let mut out = Vec::new();
            for (i, len) in runs {
                let v = alphabet[i.index(alphabet.len())];
                out.extend(std::iter::repeat_n(v, usize::try_from(len).unwrap()));
            }
            out
        })
}

/// What version 2 stored: every merged run as `length, input`.
fn runs_bytes(inputs: &[i32]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < inputs.len() {
        let mut j = i;
        while j < inputs.len() && inputs[j] == inputs[i] {
            j += 1;
        }
        let z = ((i64::from(inputs[i]) << 1) ^ (i64::from(inputs[i]) >> 63)).cast_unsigned();
        n += varint((j - i) as u64).len() + varint(z).len();
        i = j;
    }
    n
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn blocks_round_trip(inputs in inputs(), every in 1u64..50) {
        let replay = record(&inputs, every);
        let bytes = replay.to_bytes();
        let back = read(&bytes).unwrap();
        prop_assert_eq!(back.inputs(0).copied().collect::<Vec<_>>(), inputs.clone());
        // Runs come back merged, whatever the blocks.
        prop_assert!(back.runs(0).windows(2).all(|w| w[0].input != w[1].input));
        prop_assert_eq!(back.run_count(), back.runs(0).len());
        prop_assert_eq!(back.encoded_runs(0).map(|r| r.len).sum::<u64>(), inputs.len() as u64);
        let verdict = verify(Counter::default(), &back).verdict;
        prop_assert!(matches!(verdict, ReplayVerdict::Match { .. }), "{:?}", verdict);
        prop_assert_eq!(back.to_bytes(), bytes.clone());
        // Never larger than the same runs in one runs block (version 2's
        // encoding plus one block header).
        let ticks = inputs.len() as u64;
        let section = section_len(&bytes, ticks, every);
        let bound = runs_bytes(&inputs) + if ticks == 0 { 0 } else { varint(ticks).len() + 1 };
        prop_assert!(section <= bound, "{} > {}", section, bound);
    }

    #[test]
    fn any_block_bytes_are_refused_or_decode_to_the_declared_ticks(
        blocks in prop::collection::vec(any::<u8>(), 0..40),
        ticks in 0u64..40,
    ) {
        // Never a panic; an accepted section decodes to exactly T ticks.
        // (K = 100 > T: no checkpoints, so any final state reads.)
        let mut rest = vec![0x00, 0x02, 0x01, b'a', 0x01, b'b'];
        rest.extend([0u8; 16]);
        rest.push(0x00);
        if let Ok(r) = read(&file(ticks, 100, &blocks, &rest)) {
            prop_assert_eq!(r.inputs(0).count() as u64, ticks);
        }
    }
}
