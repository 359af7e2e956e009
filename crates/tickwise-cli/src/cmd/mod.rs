//! One module per subcommand.
pub mod budget;
pub mod compare;
pub mod horde;
pub mod lab;
pub mod loadtest;
pub mod netplay;
pub mod peer;
pub mod record;
pub mod run;
pub mod script;
pub mod serve;
pub mod session_args;
pub mod sync_test;
pub mod verify;
pub mod verifyd;
pub mod worker;

/// The worker pool for `--threads N` (default: one thread per core). The
/// horde's tick splits its work over the pool it runs in, the same way
/// whatever its size, so results do not depend on N.
///
/// # Errors
///
/// When the threads cannot be started.
pub fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool, crate::Failure> {
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(n) = threads {
        pool = pool.num_threads(n);
    }
    Ok(pool
        .build()
        .map_err(|e| anyhow::anyhow!("cannot start {threads:?} worker threads: {e}"))?)
}

/// `--io-threads`, one definition for the commands whose heavy work has
/// threads of its own (`verifyd`, `worker`, `loadtest`).
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct IoThreadsArg {
    /// Executor threads that move bytes (HTTP, Redis); verification has
    /// threads of its own (default: one per four cores, at least one).
    #[arg(long = "io-threads", value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub io_threads: Option<u16>,
}

impl IoThreadsArg {
    /// The thread count: the flag's, or [`tickwise_service::default_io_threads`].
    #[must_use]
    pub fn get(self) -> std::num::NonZeroUsize {
        self.io_threads
            .and_then(|n| std::num::NonZeroUsize::new(usize::from(n)))
            .unwrap_or_else(tickwise_service::default_io_threads)
    }
}
