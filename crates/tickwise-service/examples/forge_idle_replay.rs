//! Writes the forged replay of issue 20's finding 2: a horde replay a few
//! kilobytes long declaring `TICKS` idle ticks, with one checkpoint at the
//! end and its integrity checksum recomputed, so it passes every cheap
//! check and costs `TICKS` horde ticks of CPU to refute. For
//! `scripts/service-attacks.py`; never a test input (it costs a minute).
//!
//! `cargo run --release -p tickwise-service --example forge_idle_replay -- OUT TICKS`

use tickwise::{Replay, ReplayLimits, TickInput};
use tickwise_catalog::{Catalog, InputPlan};

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(out), Some(ticks)) = (args.next(), args.next()) else {
        eprintln!("usage: forge_idle_replay OUT TICKS");
        std::process::exit(2);
    };
    let ticks: u64 = ticks.parse().expect("TICKS is a whole number");
    let honest = Catalog::builtin()
        .record("horde", None, &InputPlan::Random(1), 30, 30)
        .expect("record a horde replay")
        .bytes;
    let replay = Replay::<TickInput>::from_bytes(&honest, &ReplayLimits::DEFAULT).expect("read");
    let idle = replay.inputs(0).next().cloned().expect("an input");
    let mut parts = replay.into_parts();
    let fields = parts.field_names.len();
    parts.set_inputs(
        0,
        std::iter::repeat_n(idle, usize::try_from(ticks).expect("fits")),
    );
    parts.header.checkpoint_every = ticks;
    parts.checkpoint_checksums = vec![0];
    parts.checkpoint_fields = vec![0; fields];
    let bytes = Replay::from_parts(parts).expect("forge").to_bytes();
    std::fs::write(&out, &bytes).expect("write");
    println!(
        "{out}: {} bytes declaring {ticks} idle horde ticks",
        bytes.len()
    );
}
