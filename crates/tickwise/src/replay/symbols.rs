//! Checking a packed input block's symbols (format 4's `BLOCK_PACKED`):
//! each symbol is inside the palette, and the block's first and last
//! symbols and how often the symbol changes (which is how many runs the
//! block adds).
//!
//! Why a module of its own: it is the reader's one per-tick loop. A ten
//! minute replay holds 36 000 symbols, and checking them one by one (a
//! shift, a mask, two compares each) took 8 % of `tickwise verify`'s time
//! on island replays with random inputs. This version takes 64 bits at a
//! time (SWAR: SIMD within a register): every symbol of the word checked
//! against the palette with one addition per lane, the changes counted by
//! comparing the word with itself moved one symbol along. A word that holds
//! a symbol outside the palette, and the symbols past the last whole word,
//! go through the one-by-one loop, which also names the first bad symbol.
//! Both give the same answer for any bytes (the property test below).

/// What a block's symbols say: the first and last symbol, and how many
/// times the symbol changes from one to the next.
pub(super) type Summary = (u8, u8, usize);

/// Checks `count` symbols (n ≥ 1) of `bits` bits each (1, 2 or 4), packed
/// from the low bits of each byte up, against a palette of `size`: the
/// [`Summary`], or the index and value of the first symbol outside the
/// palette. Bytes past the `count`-th symbol are not read.
pub(super) fn check_symbols(
    symbols: &[u8],
    count: usize,
    bits: u32,
    size: usize,
) -> Result<Summary, (u64, u8)> {
    // One copy of the word loop per width, its shifts and masks constants.
    match bits {
        1 => check::<1>(symbols, count, size),
        2 => check::<2>(symbols, count, size),
        _ => check::<4>(symbols, count, size),
    }
}

/// [`check_symbols`] for `BITS`-bit symbols.
fn check<const BITS: u32>(symbols: &[u8], count: usize, size: usize) -> Result<Summary, (u64, u8)> {
    let lanes = Lanes::<BITS>::new(size);
    // Words whose every symbol is one of the `count`.
    let words = (count / Lanes::<BITS>::PER_WORD).min(symbols.len() / 8);
    let mut scan = Scan::default();
    for word in symbols[..words * 8].chunks_exact(8) {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(word);
        let w = u64::from_le_bytes(bytes);
        if lanes.any_outside(w) {
            // One by one, which names the first bad symbol.
            scan.bytes(word, Lanes::<BITS>::PER_WORD, BITS, size)?;
        } else {
            scan.word::<BITS>(w);
        }
    }
    let rest = count - scan.i;
    scan.bytes(&symbols[words * 8..], rest, BITS, size)?;
    Ok((scan.first, scan.previous, scan.changes))
}

/// Where a check has got to: symbols seen, the first one, the last one
/// and the changes so far.
#[derive(Default)]
struct Scan {
    i: usize,
    first: u8,
    previous: u8,
    changes: usize,
}

impl Scan {
    /// One symbol, `sym`, already inside the palette.
    #[inline]
    fn push(&mut self, sym: u8) {
        if self.i == 0 {
            self.first = sym;
        } else {
            self.changes += usize::from(sym != self.previous);
        }
        self.previous = sym;
        self.i += 1;
    }

    /// Up to `n` symbols from `bytes`, one by one.
    fn bytes(&mut self, bytes: &[u8], n: usize, bits: u32, size: usize) -> Result<(), (u64, u8)> {
        let per_byte = (8 / bits) as usize;
        let mask = (1u8 << bits) - 1;
        let end = self.i + n;
        for &byte in bytes {
            let mut b = byte;
            for _ in 0..per_byte.min(end - self.i) {
                let sym = b & mask;
                b >>= bits;
                if usize::from(sym) >= size {
                    return Err((self.i as u64, sym));
                }
                self.push(sym);
            }
        }
        Ok(())
    }

    /// A whole word of symbols, every one inside the palette.
    #[inline]
    fn word<const BITS: u32>(&mut self, w: u64) {
        // The first symbol against the last one before it; then each
        // symbol against the next: lane j of `w ^ (w >> BITS)` is zero when
        // symbols j and j + 1 are equal (the top lane compares with
        // nothing and is left out).
        self.push((w & Lanes::<BITS>::MASK).to_le_bytes()[0]);
        let differ = (w ^ (w >> BITS)) & !Lanes::<BITS>::TOP;
        let mut any = differ;
        for s in 1..BITS {
            any |= differ >> s;
        }
        self.changes += (any & Lanes::<BITS>::ONES).count_ones() as usize;
        self.i += Lanes::<BITS>::PER_WORD - 1;
        self.previous = (w >> (64 - BITS)).to_le_bytes()[0];
    }
}

/// The constants of one symbol width (`BITS`) and palette.
struct Lanes<const BITS: u32> {
    /// `0x80 - size` in every byte, or `None` when every value a symbol
    /// can hold is inside the palette.
    over: Option<u64>,
}

impl<const BITS: u32> Lanes<BITS> {
    const PER_WORD: usize = (64 / BITS) as usize;
    /// One symbol's mask, in lane 0.
    const MASK: u64 = (1 << BITS) - 1;
    /// The top lane's bits.
    const TOP: u64 = Self::MASK << (64 - BITS);
    /// The lowest bit of every lane.
    const ONES: u64 = u64::MAX / Self::MASK;
    /// One symbol's mask in every byte.
    const IN_BYTE: u64 = Self::MASK * 0x0101_0101_0101_0101;

    fn new(size: usize) -> Lanes<BITS> {
        let over = (size < 1 << BITS).then(|| (0x80 - size as u64) * 0x0101_0101_0101_0101);
        Lanes { over }
    }

    /// Whether any symbol of `w` is `size` or more. Each of the 8 / BITS
    /// symbols of every byte is moved into its own byte-wide lane, below
    /// 16: adding `0x80 - size` sets the lane's top bit exactly when it is
    /// `size` or more, and never carries into the next lane.
    #[inline]
    fn any_outside(&self, w: u64) -> bool {
        let Some(over) = self.over else {
            return false;
        };
        let mut high = 0u64;
        let mut s = 0;
        while s < 8 {
            high |= ((w >> s) & Self::IN_BYTE) + over;
            s += BITS;
        }
        high & 0x8080_8080_8080_8080 != 0
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use proptest::prelude::*;

    use super::*;

    /// The plain definition: symbol by symbol.
    fn reference(
        symbols: &[u8],
        count: usize,
        bits: u32,
        size: usize,
    ) -> Result<Summary, (u64, u8)> {
        let mut all = Vec::new();
        for &byte in symbols {
            for k in 0..8 / bits {
                all.push((byte >> (k * bits)) & ((1 << bits) - 1));
            }
        }
        all.truncate(count);
        if let Some(i) = all.iter().position(|&s| usize::from(s) >= size) {
            return Err((i as u64, all[i]));
        }
        let changes = all.windows(2).filter(|p| p[0] != p[1]).count();
        Ok((all[0], all[all.len() - 1], changes))
    }

    #[test]
    fn by_hand() {
        // 4 bits: symbols 1, 2, 2, 3 (low nibble first): 2 changes.
        assert_eq!(check_symbols(&[0x21, 0x32], 4, 4, 5), Ok((1, 3, 2)));
        // The same twice over, as one whole word and a tail: 16 + 4 symbols.
        let word = [0x21, 0x32, 0x21, 0x32, 0x21, 0x32, 0x21, 0x32, 0x21, 0x32];
        assert_eq!(check_symbols(&word, 20, 4, 5), Ok((1, 3, 14)));
        // Symbol 9 is 4, outside a palette of 4: named by index and value.
        let mut bad = word;
        bad[4] = 0x41;
        assert_eq!(check_symbols(&bad, 20, 4, 4), Err((9, 4)));
        // 2 bits, 33 symbols of 0 then a 1 at index 33 past `count`: unread.
        let mut zeros = [0u8; 9];
        zeros[8] = 0b0100;
        assert_eq!(check_symbols(&zeros, 33, 2, 2), Ok((0, 0, 0)));
        assert_eq!(check_symbols(&zeros, 34, 2, 2), Ok((0, 1, 1)));
        assert_eq!(check_symbols(&zeros, 34, 2, 1), Err((33, 1)));
        // 1 bit: alternating 0, 1 over a whole word: 63 changes.
        assert_eq!(check_symbols(&[0xaa; 8], 64, 1, 2), Ok((0, 1, 63)));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn the_same_as_one_symbol_at_a_time(
            bits in prop::sample::select(&[1u32, 2, 4][..]),
            size_pick in 1usize..=16,
            bytes in prop::collection::vec(any::<u8>(), 1..80),
            skew in 0u8..4,
            cut in 0usize..8,
        ) {
            // Mostly symbols inside a small palette, so that runs of equal
            // symbols and whole good words are common.
            let size = size_pick.min(1 << bits);
            let bytes: Vec<u8> = bytes.iter().map(|&b| match skew {
                0 => b,
                1 => b & 0x11,
                2 => if b & 1 == 0 { 0 } else { b & 0x55 },
                _ => b & 0x33,
            }).collect();
            let all = bytes.len() * (8 / bits) as usize;
            let count = all.saturating_sub(cut).max(1);
            prop_assert_eq!(
                check_symbols(&bytes, count, bits, size),
                reference(&bytes, count, bits, size)
            );
        }
    }
}
