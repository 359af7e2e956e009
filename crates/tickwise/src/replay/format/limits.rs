//! What a reader accepts: the bounds that keep a hostile file from making
//! it allocate or work without limit.

/// Bounds on what a reader accepts, so that a hostile file cannot make it
/// allocate or work without limit. Every field can be raised by the caller
/// (the CLI has flags for the first two).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplayLimits {
    /// Largest file accepted (checked before parsing; callers reading from
    /// disk should check the file's size before reading it).
    pub max_file_bytes: u64,
    /// Largest declared tick count accepted; re-simulation never runs more
    /// ticks than the file declares, so this bounds verification work.
    pub max_ticks: u64,
    /// Largest embedded config.
    pub max_config_bytes: usize,
    /// Most state fields per checkpoint.
    pub max_fields: usize,
    /// Longest final text digest.
    pub max_digest_bytes: usize,
    /// Most work a re-simulation may take: declared ticks × the sim's work
    /// units per tick. The kernel cannot know what a tick costs, so the sim
    /// catalog checks this (`tickwise_catalog::limits`: units are calibrated
    /// to about one nanosecond of CPU each on a reference machine, per sim);
    /// it stops a small file with a huge world from buying hours of
    /// verification.
    pub max_work: u64,
}

impl ReplayLimits {
    /// The defaults: 64 MiB files, 10 million ticks (46 hours at 60 Hz),
    /// 64 KiB configs, 1024 fields, 4 KiB digests, 6·10¹⁰ work units
    /// (about a minute of CPU on the reference machine, whatever the sim).
    pub const DEFAULT: ReplayLimits = ReplayLimits {
        max_file_bytes: 64 * 1024 * 1024,
        max_ticks: 10_000_000,
        max_config_bytes: 64 * 1024,
        max_fields: 1024,
        max_digest_bytes: 4096,
        max_work: 60_000_000_000,
    };
}

impl Default for ReplayLimits {
    fn default() -> Self {
        ReplayLimits::DEFAULT
    }
}
