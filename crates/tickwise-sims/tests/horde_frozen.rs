//! The horde against numbers computed another way: `parity/horde_ref.py`, an
//! independent Python implementation of docs/horde.md (all-pairs neighbours,
//! Python integers, its own checksum), wrote `parity/horde_golden.json`: the
//! state checksum after every tick of the demo walk for a few small hordes
//! that reach every rule (steering, walls, separation, the same-spot split,
//! attacks, kills, waves, contact damage, downs). The Python unit tests
//! (`parity/test_horde.py`) regenerate the file's numbers and fail if they
//! differ from what is checked in, so these values are the reference's, not
//! a copy of this crate's output.
//!
//! If this test fails after a deliberate rule change: change
//! `parity/horde_ref.py` the same way, run `python3 parity/horde_ref.py
//! golden`, and bump the horde's sim version (see `sim_versions.rs`).

use tickwise::Sim;
use tickwise_sims::horde::{HordeConfig, HordeWorld, NaiveHorde, scripted_input};

const GOLDEN: &str = include_str!("../../../parity/horde_golden.json");

struct Scenario {
    name: String,
    config: Vec<u8>,
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

/// Steps `sim` through the scenario, asserting every tick's checksum.
fn check<S: Sim<Input = tickwise::TickInput>>(what: &str, sc: &Scenario, mut sim: S) {
    assert_eq!(
        format!("{:016x}", sim.checksum()),
        sc.initial,
        "{what} {}: initial state (spawn) differs from the Python reference",
        sc.name
    );
    for (t, want) in sc.checksums.iter().enumerate() {
        sim.step(&scripted_input(t as u64));
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
        check("grid", sc, HordeWorld::new(&cfg));
        check("all-pairs", sc, NaiveHorde::new(&cfg));
    }
}

#[test]
fn golden_file_is_sensitive_to_the_rules() {
    // A test that cannot fail proves nothing: one changed rule (a weaker
    // attack) must move the checksums away from the golden ones.
    let sc = &scenarios()[0];
    let mut cfg: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&sc.config).unwrap();
    cfg.insert("attackDamage".into(), 9.into());
    let cfg = HordeConfig::from_json(&serde_json::to_vec(&cfg).unwrap()).unwrap();
    let mut w = HordeWorld::new(&cfg);
    let mut first_diff = None;
    for (t, want) in sc.checksums.iter().enumerate() {
        w.step(&scripted_input(t as u64));
        if &format!("{:016x}", w.checksum()) != want {
            first_diff = Some(t);
            break;
        }
    }
    assert!(
        first_diff.is_some(),
        "attackDamage 9 reached the same states"
    );
}
