//! The horde against numbers computed another way: `parity/horde_ref.py`, an
//! independent Python implementation of docs/horde.md (all-pairs neighbours,
//! Python integers, its own checksum), wrote `parity/horde_golden.json`: the
//! state checksum after every tick of the scripted walk for a few small hordes
//! that reach every rule (steering, walls, separation, the same-spot split,
//! attacks, kills, waves, contact damage, downs). The Python unit tests
//! (`parity/test_horde.py`) regenerate the file's numbers and fail if they
//! differ from what is checked in, so these values are the reference's, not
//! a copy of this crate's output.
//!
//! Since horde version 3 the file also holds co-op worlds of 2, 3 and 4
//! heroes in which every player has its own seeded button pattern
//! (`inputs`: one string per player, one hex digit per tick = the held mask
//! of buttons 0–3), so a step that gives one player's input to another hero
//! fails here on the first tick where it matters.
//!
//! If this test fails after a deliberate rule change: change
//! `parity/horde_ref.py` the same way, run `python3 parity/horde_ref.py
//! golden`, and bump the horde's sim version (see `sim_versions.rs`). That
//! alone cannot move the version pin: `crates/tickwise-catalog/tests/
//! horde_v3_pin.rs` checks a checked-in replay that only a version bump
//! may replace.

use tickwise::{Button, Buttons, Sim, TickInput};
use tickwise_sims::horde::{HordeConfig, HordeWorld, NaiveHorde, scripted_input};

const GOLDEN: &str = include_str!("../../../../parity/horde_golden.json");

struct Scenario {
    name: String,
    config: Vec<u8>,
    /// Per player, per tick: the held-button masks (`None`: the scripted walk
    /// for a one-hero world).
    inputs: Option<Vec<Vec<u8>>>,
    initial: String,
    checksums: Vec<String>,
    digest: String,
}

fn scenarios() -> Vec<Scenario> {
    let v: serde_json::Value = serde_json::from_str(GOLDEN).unwrap();
    v["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| Scenario {
            name: s["name"].as_str().unwrap().to_owned(),
            config: serde_json::to_vec(&s["config"]).unwrap(),
            inputs: s.get("inputs").map(|players| {
                players
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| {
                        p.as_str()
                            .unwrap()
                            .chars()
                            .map(|c| u8::try_from(c.to_digit(16).unwrap()).unwrap())
                            .collect()
                    })
                    .collect()
            }),
            initial: s["initial"].as_str().unwrap().to_owned(),
            checksums: s["checksums"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap().to_owned())
                .collect(),
            digest: s["digest"].as_str().unwrap().to_owned(),
        })
        .collect()
}

/// Holding the buttons of `mask` (bit `b` = button `b`: up, down, left, right).
fn held(mask: u8) -> TickInput {
    let mut held = Buttons::NONE;
    for b in 0..4 {
        if mask >> b & 1 == 1 {
            held = held.with(Button::new(b).unwrap());
        }
    }
    TickInput {
        held,
        ..TickInput::default()
    }
}

impl Scenario {
    /// Every player's input for tick `t`.
    fn inputs_at(&self, t: usize) -> Vec<TickInput> {
        match &self.inputs {
            None => vec![scripted_input(t as u64)],
            Some(players) => players.iter().map(|p| held(p[t])).collect(),
        }
    }
}

/// A horde stepped with every player's input.
trait CoopSim: Sim {
    fn step_all(&mut self, inputs: &[TickInput]);
}

impl CoopSim for HordeWorld {
    fn step_all(&mut self, inputs: &[TickInput]) {
        self.step_players(inputs);
    }
}

impl CoopSim for NaiveHorde {
    fn step_all(&mut self, inputs: &[TickInput]) {
        self.step_players(inputs);
    }
}

/// Steps `sim` through the scenario, asserting every tick's checksum.
fn check<S: CoopSim>(what: &str, sc: &Scenario, mut sim: S) {
    assert_eq!(
        format!("{:016x}", sim.checksum()),
        sc.initial,
        "{what} {}: initial state (spawn) differs from the Python reference",
        sc.name
    );
    for (t, want) in sc.checksums.iter().enumerate() {
        sim.step_all(&sc.inputs_at(t));
        let got = format!("{:016x}", sim.checksum());
        assert_eq!(
            &got,
            want,
            "{what} {}: checksum after tick {} differs from the Python reference (fields: {:?})",
            sc.name,
            t + 1,
            sim.field_hashes()
                .iter()
                .map(|f| f.name)
                .collect::<Vec<_>>()
        );
    }
    assert_eq!(sim.digest(), sc.digest, "{what} {}: final digest", sc.name);
}

#[test]
fn horde_matches_the_python_reference_tick_by_tick() {
    let all = scenarios();
    assert!(all.len() >= 3, "the golden file lost its scenarios");
    for sc in &all {
        let cfg = HordeConfig::from_json(&sc.config).unwrap();
        assert!(
            (3..=20).contains(&cfg.enemies()),
            "{}: a small horde",
            sc.name
        );
        assert!(
            sc.checksums.len() >= 200,
            "{}: a few hundred ticks",
            sc.name
        );
        if let Some(inputs) = &sc.inputs {
            assert_eq!(
                inputs.len(),
                cfg.players(),
                "{}: one pattern per player",
                sc.name
            );
        }
        check("grid", sc, HordeWorld::new(&cfg));
        check("all-pairs", sc, NaiveHorde::new(&cfg));
    }
    // The co-op cases: at least one of 2 and one of 4 heroes.
    let coop: Vec<usize> = all
        .iter()
        .filter(|sc| sc.inputs.is_some())
        .map(|sc| HordeConfig::from_json(&sc.config).unwrap().players())
        .collect();
    assert!(
        coop.contains(&2) && coop.contains(&4),
        "the golden file lost its 2- and 4-hero scenarios: {coop:?}"
    );
}

#[test]
fn golden_file_catches_players_swapped() {
    // Each player's input must move its own hero: the same patterns dealt to
    // the other heroes (reversed) leave the golden run within a few ticks.
    for sc in scenarios().iter().filter(|sc| sc.inputs.is_some()) {
        let cfg = HordeConfig::from_json(&sc.config).unwrap();
        let mut w = HordeWorld::new(&cfg);
        let first_diff = sc.checksums.iter().enumerate().position(|(t, want)| {
            let mut inputs = sc.inputs_at(t);
            inputs.reverse();
            w.step_players(&inputs);
            &format!("{:016x}", w.checksum()) != want
        });
        assert!(
            first_diff.is_some_and(|t| t < 60),
            "{}: swapped players reached the golden states until {first_diff:?}",
            sc.name
        );
    }
}

/// The first tick after which `sc` with `key` set to `value` leaves the
/// golden checksums, if it does.
fn first_divergence(sc: &Scenario, key: &str, value: u64) -> Option<usize> {
    let mut cfg: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&sc.config).unwrap();
    cfg.insert(key.into(), value.into());
    let cfg = HordeConfig::from_json(&serde_json::to_vec(&cfg).unwrap()).unwrap();
    let mut w = HordeWorld::new(&cfg);
    sc.checksums.iter().enumerate().position(|(t, want)| {
        w.step_players(&sc.inputs_at(t));
        &format!("{:016x}", w.checksum()) != want
    })
}

#[test]
fn golden_file_is_sensitive_to_the_rules() {
    // A test that cannot fail proves nothing: one changed rule (a weaker
    // attack) must move the checksums away from the golden ones.
    let sc = &scenarios()[0];
    assert!(
        first_divergence(sc, "attackDamage", 9).is_some(),
        "attackDamage 9 reached the same states"
    );
}

#[test]
fn golden_file_pins_separation_every_few_ticks() {
    // Scenarios with `separationTicks` > 1 (separation only on every n-th
    // tick, its push times n): the same world separating every tick, or
    // every n + 1 ticks, must leave their checksums.
    let every: Vec<(Scenario, u64)> = scenarios()
        .into_iter()
        .filter_map(|sc| {
            let n = HordeConfig::from_json(&sc.config)
                .unwrap()
                .separation_ticks();
            (n > 1).then_some((sc, u64::from(n)))
        })
        .collect();
    assert!(
        every.len() >= 2 && every.iter().any(|(sc, _)| sc.inputs.is_some()),
        "the golden file lost its separationTicks scenarios"
    );
    for (sc, n) in &every {
        for other in [1, n + 1] {
            assert!(
                first_divergence(sc, "separationTicks", other).is_some(),
                "{}: separationTicks {other} reached the states of {n}",
                sc.name
            );
        }
    }
}
