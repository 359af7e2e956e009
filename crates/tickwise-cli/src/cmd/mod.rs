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
