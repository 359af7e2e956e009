//! Runs N island steps with the scripted input and prints the digest (for profiling).
use tickwise::Sim;
use tickwise_sims::island::{IslandConfig, IslandWorld, scripted_inputs};

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000_000);
    let cfg = IslandConfig::from_json(include_bytes!("../../../config/island_loop.json"))
        .expect("config");
    let inputs = scripted_inputs(40);
    let mut w = IslandWorld::new(&cfg);
    for t in 0..n {
        w.step(core::slice::from_ref(&inputs[t % 40]));
    }
    println!("{}", w.digest());
}
