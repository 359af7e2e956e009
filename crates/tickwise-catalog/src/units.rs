//! Work units: the catalog measures work per tick in units of one
//! nanosecond of CPU on the reference machine, and prints them as seconds.

/// Work units per second of CPU on the reference machine (one per ns).
pub const UNITS_PER_SECOND: u64 = 1_000_000_000;

/// `units` as seconds on the reference machine with one decimal, for
/// messages (integers only: this crate bans floats).
pub(crate) fn seconds(units: u64) -> impl core::fmt::Display {
    struct Secs(u64);
    impl core::fmt::Display for Secs {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            let tenths = self.0 / (UNITS_PER_SECOND / 10);
            write!(f, "{}.{}", tenths / 10, tenths % 10)
        }
    }
    Secs(units)
}

#[cfg(test)]
mod tests {
    use alloc::string::ToString;

    use super::*;

    #[test]
    fn seconds_are_rounded_down_to_tenths() {
        assert_eq!(seconds(0).to_string(), "0.0");
        assert_eq!(seconds(1_250_000_000).to_string(), "1.2");
        assert_eq!(seconds(60_000_000_000).to_string(), "60.0");
    }
}
