//! Plays the duel's live demo session and writes its replay:
//! `duel-live OUT.twr`, then `duel verify OUT.twr` re-simulates it.
//!
//! The session ([`live_demo_actions`]) runs on irregular frames (3, 7, 13,
//! 29 and 48 ms) with keys through the input buffer, a tap shorter than a
//! tick, a pause, a hide with a key held, two capped resumes and a frame
//! that hits the step cap. Exit codes: 0 written, 2 bad usage or I/O error.
use std::process::ExitCode;

use tickwise_example_duel::DEFAULT_CONFIG;
use tickwise_example_duel::session::{
    DEMO_POLICY, LIVE_CHECKPOINT_EVERY, LiveSession, live_demo_actions,
};

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (Some(out), None) = (args.next(), args.next()) else {
        eprintln!("usage: duel-live OUT.twr  (plays the live demo session and writes its replay)");
        return ExitCode::from(2);
    };
    let played = LiveSession::new(DEFAULT_CONFIG, DEMO_POLICY, LIVE_CHECKPOINT_EVERY)
        .and_then(|mut session| session.run(live_demo_actions()).map(|()| session));
    let session = match played {
        Ok(s) => s,
        Err(e) => {
            eprintln!("duel-live: {e}");
            return ExitCode::from(2);
        }
    };
    let bytes = match session.replay() {
        Ok(replay) => replay.to_bytes(),
        Err(e) => {
            eprintln!("duel-live: cannot encode the replay: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = std::fs::write(&out, &bytes) {
        eprintln!("duel-live: cannot write {}: {e}", out.display());
        return ExitCode::from(2);
    }
    let lp = session.fixed_loop();
    println!(
        "wrote {} ({} bytes, {} ticks, {} resumes, frames at the step cap: {}, ms dropped by frames: {})",
        out.display(),
        bytes.len(),
        lp.tick().get(),
        session.resumes().len(),
        session.capped_frames(),
        session.thrown_away().as_nanos() / 1_000_000,
    );
    println!("final digest: {}", tickwise::Sim::digest(session.sim()));
    ExitCode::SUCCESS
}
