//! CPU time used by the calling thread, read from Linux's `/proc`.
//!
//! No system calls and no `unsafe`: the kernel already publishes the numbers
//! as text. `/proc/thread-self/schedstat` gives this thread's time on the CPU
//! in nanoseconds; where it is missing (kernels without scheduler statistics)
//! `/proc/self/stat` gives the process's user + system time in clock ticks,
//! assumed to be 100 per second (`USER_HZ`, fixed at 100 on mainstream Linux).
//! Elsewhere the runner reports that CPU time is unavailable.

use core::fmt;

use tickwise::Nanos;

/// Clock ticks per second in `/proc/self/stat` (Linux's `USER_HZ`).
pub const USER_HZ: u64 = 100;

/// Where a CPU time reading came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuSource {
    /// `/proc/thread-self/schedstat`: this thread, nanoseconds.
    Schedstat,
    /// `/proc/self/stat`: the whole process, 10 ms ticks.
    Stat,
}

impl fmt::Display for CpuSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CpuSource::Schedstat => "/proc/thread-self/schedstat (this thread, ns)",
            CpuSource::Stat => "/proc/self/stat (whole process, 10 ms ticks)",
        })
    }
}

/// The first field of a `schedstat` line: nanoseconds spent on the CPU.
#[must_use]
pub fn parse_schedstat(text: &str) -> Option<Nanos> {
    text.split_whitespace()
        .next()?
        .parse::<u64>()
        .ok()
        .map(Nanos::from_nanos)
}

/// `utime + stime` (fields 14 and 15) of a `/proc/<pid>/stat` line, in clock
/// ticks. The command name (field 2) is in parentheses and may contain spaces
/// or parentheses, so fields are counted after its last `)`.
#[must_use]
pub fn parse_stat_ticks(text: &str) -> Option<u64> {
    let rest = &text[text.rfind(')')? + 1..];
    // After the name: field 3 (state) is index 0, so utime (14) is index 11.
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    utime.checked_add(stime)
}

/// CPU time used so far by the calling thread (or, with the fallback, the
/// process), and where it came from. `None` off Linux or when `/proc` is not
/// readable.
#[must_use]
pub fn cpu_time() -> Option<(Nanos, CpuSource)> {
    if let Some(ns) = std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .as_deref()
        .and_then(parse_schedstat)
    {
        return Some((ns, CpuSource::Schedstat));
    }
    Some((process_cpu_time()?, CpuSource::Stat))
}

/// CPU time used so far by the whole process, every thread (user + system,
/// from `/proc/self/stat`, in 10 ms ticks). `None` off Linux or when `/proc`
/// is not readable.
#[must_use]
pub fn process_cpu_time() -> Option<Nanos> {
    let ticks = std::fs::read_to_string("/proc/self/stat")
        .ok()
        .as_deref()
        .and_then(parse_stat_ticks)?;
    Some(Nanos::from_nanos(
        ticks.saturating_mul(1_000_000_000 / USER_HZ),
    ))
}
