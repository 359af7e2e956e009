//! The CPU features this build was compiled to assume, checked before any
//! command runs.
//!
//! The repository's `.cargo/config.toml` builds x86_64 code for
//! `x86-64-v2` (SSE3, SSSE3, SSE4.1, SSE4.2, POPCNT, CMPXCHG16B: every
//! x86_64 CPU since 2009). SSE4.1's 32-bit vector multiply lets the
//! compiler compute a separation pair's two axes in one register, which
//! makes the horde step about a sixth faster (`docs/benchmarks.md`, round
//! 9); sims are integer code, so every result is the same bit for bit on
//! any CPU level. On an older CPU such a binary would die on its first
//! SSE4 instruction with `SIGILL` and no word of why; this check says why
//! and how to build for it instead.

/// `(feature, compiled in, present on this CPU)` for each feature named.
#[cfg(target_arch = "x86_64")]
macro_rules! levels {
    ($($feature:tt),*) => {
        vec![$((
            $feature,
            cfg!(target_feature = $feature),
            std::is_x86_feature_detected!($feature),
        )),*]
    };
}

/// What the build assumes, as `(feature, compiled in, present on this
/// CPU)`: the features of x86-64-v2 and v3 (a build for v3 is checked as
/// well); only x86_64 builds assume anything.
fn assumed() -> Vec<(&'static str, bool, bool)> {
    #[cfg(target_arch = "x86_64")]
    {
        levels!(
            "sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "avx", "avx2", "bmi2", "fma"
        )
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Vec::new()
    }
}

/// The features compiled in that the CPU lacks, in `assumed`'s order.
fn missing_of(assumed: &[(&'static str, bool, bool)]) -> Vec<&'static str> {
    assumed
        .iter()
        .filter(|&&(_, compiled, present)| compiled && !present)
        .map(|&(name, _, _)| name)
        .collect()
}

/// Why this binary cannot run on this CPU, or `None` when it can.
pub(crate) fn unsupported(tool: &str) -> Option<String> {
    message(tool, &missing_of(&assumed()))
}

fn message(tool: &str, missing: &[&str]) -> Option<String> {
    if missing.is_empty() {
        return None;
    }
    Some(format!(
        "{tool}: this build needs CPU features this processor lacks ({}). It was \
         compiled for a newer x86-64 level (the repository's .cargo/config.toml sets \
         x86-64-v2; RUSTFLAGS may ask for more). Build it for this CPU with RUSTFLAGS='-C target-cpu=native' (or '-C target-cpu=x86-64'): \
         results are the same bit for bit on every CPU level, only slower.",
        missing.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_features_compiled_in_and_absent_are_missing() {
        let table = [
            ("sse4.1", true, true),
            ("sse4.2", true, false),
            ("avx2", false, false),
            ("popcnt", true, false),
        ];
        assert_eq!(missing_of(&table), ["sse4.2", "popcnt"]);
        let m = message("tickwise", &missing_of(&table)).expect("a message");
        assert!(m.starts_with("tickwise: "), "{m}");
        assert!(m.contains("(sse4.2, popcnt)"), "{m}");
        assert!(m.contains("target-cpu=native"), "{m}");
        assert_eq!(message("tickwise", &[]), None);
    }

    #[test]
    fn the_machine_running_the_tests_can_run_this_build() {
        // The test binary was compiled with the same flags as the tool: if
        // it runs at all, every feature compiled in is present.
        assert_eq!(unsupported("tickwise"), None);
    }

    /// The speed figures in docs/benchmarks.md (round 9 on) assume the
    /// repository's `.cargo/config.toml` is in effect; a build that lost it
    /// (a `RUSTFLAGS` that replaces it, a moved config) is slower, not
    /// wrong, and this says so.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_x86_64_build_targets_x86_64_v2() {
        let level = assumed();
        for want in ["sse3", "ssse3", "sse4.1", "sse4.2", "popcnt"] {
            assert!(
                level
                    .iter()
                    .any(|&(name, compiled, _)| name == want && compiled),
                "{want} is not compiled in: the build does not use .cargo/config.toml's \
                 target-cpu=x86-64-v2 (is RUSTFLAGS set? it replaces the config's flags)"
            );
        }
    }
}
