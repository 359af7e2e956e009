//! Verification, forgery detection and lockstep desync reports.

use tickwise::{
    Divergence, InputDifference, Recorder, Replay, ReplayHeader, ReplayLimits, ReplayVerdict, Sim,
    StateVisitor, compare_lockstep, one_player, verify,
};

use crate::sims::{Walker, pattern};

fn record(ticks: u64, every: u64) -> Replay<i32> {
    let header = ReplayHeader {
        sim_id: "walker".into(),
        sim_version: 1,
        config: Vec::new(),
        seed: 0,
        ticks: 0,
        checkpoint_every: every,
        input_kind: 0,
        players: 1,
    };
    let mut rec = Recorder::new(Walker::default(), header).unwrap();
    for t in 0..ticks {
        rec.step(&[pattern(t)]);
    }
    rec.finish().unwrap().1
}

/// Edits the input of `tick` and rebuilds the file, integrity checksum and
/// all: what a forger with the format spec would do.
fn forge(replay: &Replay<i32>, tick: u64, input: i32) -> Vec<u8> {
    let mut inputs: Vec<i32> = replay.inputs(0).copied().collect();
    inputs[usize::try_from(tick).unwrap()] = input;
    let mut parts = replay.clone().into_parts();
    parts.set_inputs(0, inputs);
    Replay::from_parts(parts).unwrap().to_bytes()
}

fn diverged(v: ReplayVerdict) -> Divergence {
    match v {
        ReplayVerdict::Diverged(d) => d,
        other => panic!("expected a divergence, got {other:?}"),
    }
}

#[test]
fn forged_inputs_are_caught_at_the_first_checkpoint_after_the_edit() {
    let replay = record(600, 60);
    // Tick 130's input is consumed by the step to tick 131; checkpoints are
    // at 60, 120, 180: the first one after the edit is tick 180 (index 2).
    let forged = forge(&replay, 130, 5);
    let read = Replay::<i32>::from_bytes(&forged, &ReplayLimits::DEFAULT).unwrap();
    let report = verify(Walker::default(), &read);
    assert_eq!(
        report.ticks_run, 180,
        "verification stops at the divergence"
    );
    let d = diverged(report.verdict);
    assert_eq!(d.checkpoint, Some(2));
    assert_eq!((d.last_good_tick, d.tick), (120, 180));
    assert_eq!(d.fields, ["vel", "pos"]);
    assert_ne!(d.expected_checksum, d.found_checksum);
    let msg = d.to_string();
    assert!(
        msg.contains("ticks 121..=180") && msg.contains("vel, pos"),
        "{msg}"
    );
}

#[test]
fn edits_right_before_a_checkpoint_and_in_the_last_stretch() {
    let replay = record(610, 60);
    // Tick 119's input (-1 in the pattern) produces the state of tick 120: caught at 120.
    let d = diverged(
        verify(
            Walker::default(),
            &Replay::from_bytes(&forge(&replay, 119, 1), &ReplayLimits::DEFAULT).unwrap(),
        )
        .verdict,
    );
    assert_eq!((d.checkpoint, d.last_good_tick, d.tick), (Some(1), 60, 120));
    // Tick 120's input (1 in the pattern) only affects 121 onwards: caught at 180.
    let d = diverged(
        verify(
            Walker::default(),
            &Replay::from_bytes(&forge(&replay, 120, -1), &ReplayLimits::DEFAULT).unwrap(),
        )
        .verdict,
    );
    assert_eq!(
        (d.checkpoint, d.last_good_tick, d.tick),
        (Some(2), 120, 180)
    );
    // After the last checkpoint (600), only the final state can catch it.
    let d = diverged(
        verify(
            Walker::default(),
            &Replay::from_bytes(&forge(&replay, 605, 0), &ReplayLimits::DEFAULT).unwrap(),
        )
        .verdict,
    );
    assert_eq!((d.checkpoint, d.last_good_tick, d.tick), (None, 600, 610));
}

#[test]
fn honest_replays_verify_and_run_exactly_their_ticks() {
    let replay = record(1000, 60);
    let report = verify(Walker::default(), &replay);
    assert_eq!(report.ticks_run, 1000);
    assert!(report.is_match());
}

#[test]
fn a_different_starting_state_is_caught_at_the_first_checkpoint() {
    let replay = record(200, 50);
    let start = Walker {
        pos: 1,
        ..Walker::default()
    };
    let d = diverged(verify(start, &replay).verdict);
    assert_eq!((d.checkpoint, d.last_good_tick, d.tick), (Some(0), 0, 50));
    assert_eq!(d.fields, ["pos"]);
}

#[test]
fn forged_final_digest_text_is_caught() {
    let mut parts = record(100, 60).into_parts();
    parts.final_digest = "fake".into();
    let replay = Replay::from_parts(parts).unwrap();
    let d = diverged(verify(Walker::default(), &replay).verdict);
    assert_eq!(d.checkpoint, None);
    assert!(d.fields.is_empty());
    let (stored, found) = d.digests.unwrap();
    assert_eq!(stored, "fake");
    assert_eq!(
        found,
        format!("{:016x}", Walker::default().checksum_after(100))
    );
}

trait After {
    fn checksum_after(self, ticks: u64) -> u64;
}

impl After for Walker {
    fn checksum_after(mut self, ticks: u64) -> u64 {
        for t in 0..ticks {
            self.step(core::slice::from_ref(&pattern(t)));
        }
        self.checksum()
    }
}

#[test]
fn a_sim_with_other_fields_is_refused_before_running() {
    #[derive(Default)]
    struct Renamed(Walker);
    impl Sim for Renamed {
        type Input = i32;
        fn step(&mut self, inputs: &[i32]) {
            let input = &inputs.first().cloned().unwrap_or_default();
            self.0.step(core::slice::from_ref(input));
        }
        fn visit_state(&self, v: &mut dyn StateVisitor) {
            v.field("ticks");
            v.value(self.0.steps);
        }
    }
    let report = verify(Renamed::default(), &record(100, 60));
    assert_eq!(report.ticks_run, 0);
    assert_eq!(
        report.verdict,
        ReplayVerdict::FieldNamesDiffer {
            recorded: vec!["steps".into(), "vel".into(), "pos".into()],
            sim: vec!["ticks"],
        }
    );
}

#[test]
fn lockstep_names_the_first_divergent_tick_and_fields() {
    let a: Vec<i32> = (0..300).map(pattern).collect();
    let mut b = a.clone();
    b[57] = 0;
    let c = compare_lockstep(
        &mut Walker::default(),
        &mut Walker::default(),
        one_player(a.iter().copied()),
        one_player(b.iter().copied()),
        300,
    );
    assert_eq!(
        c.first_input_difference,
        Some(InputDifference {
            tick: 57,
            player: 0
        })
    );
    let d = c.divergence.unwrap();
    // Input 57 is consumed by the step to tick 58.
    assert_eq!(d.tick, 58);
    assert_eq!(c.ticks, 58);
    assert_eq!(d.fields, ["vel", "pos"]);
}

#[test]
fn lockstep_of_identical_runs_and_of_different_starts() {
    let a: Vec<i32> = (0..100).map(pattern).collect();
    let c = compare_lockstep(
        &mut Walker::default(),
        &mut Walker::default(),
        one_player(a.clone()),
        one_player(a.clone()),
        100,
    );
    assert_eq!(
        (c.ticks, c.divergence, c.first_input_difference),
        (100, None, None)
    );
    let mut other = Walker {
        vel: 3,
        ..Walker::default()
    };
    let c = compare_lockstep(
        &mut Walker::default(),
        &mut other,
        one_player(a.clone()),
        one_player(a),
        100,
    );
    let d = c.divergence.unwrap();
    assert_eq!((d.tick, d.fields), (0, vec!["vel"]));
}
