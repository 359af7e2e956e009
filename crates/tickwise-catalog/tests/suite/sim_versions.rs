//! Sim versions and results move together.
//!
//! A replay names its sim's version. If a sim's results change while its
//! version stays, every replay recorded before the change re-simulates
//! differently and is reported as a forgery ("DIVERGED at checkpoint 1"),
//! which is what happened to the horde's version-1 replays. Bumping the
//! version turns that into an honest refusal ("recorded by horde version 1;
//! this build runs version 2").
//!
//! So each built-in sim pins (version, digest after N ticks of its scripted
//! input), with the digest taken from an independent source: the island rules'
//! golden numbers for the island, the Python horde reference
//! (`parity/horde_golden.json`) for the horde. Changing results without
//! bumping the version fails here with "bump VERSION".
//!
//! That pin moves with the Python reference; `horde_pin.rs` also holds the
//! horde's results to a checked-in replay that only a version bump may
//! replace.

use std::path::{Path, PathBuf};

use tickwise::{Recorder, ReplayHeader, ReplayLimits, ReplayVerdict, read_header};
use tickwise_catalog::{Catalog, CatalogError, CatalogSim, InputPlan};
use tickwise_sims::horde::{HordeConfig, HordeWorld, scripted_input};

fn catalog() -> Catalog {
    Catalog::builtin()
}

const LIMITS: ReplayLimits = ReplayLimits::DEFAULT;
const GOLDEN: &str = include_str!("../../../../parity/horde_golden.json");

/// One sim's pinned results.
struct Pin {
    id: &'static str,
    version: u32,
    config: Vec<u8>,
    ticks: u64,
    digest: String,
    source: &'static str,
}

/// The horde's golden scenario `name`: (config bytes, ticks, final digest).
fn horde_golden(name: &str) -> (Vec<u8>, u64, String) {
    let v: serde_json::Value = serde_json::from_str(GOLDEN).unwrap();
    let s = v["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no scenario {name} in parity/horde_golden.json"));
    (
        serde_json::to_vec(&s["config"]).unwrap(),
        s["ticks"].as_u64().unwrap(),
        s["digest"].as_str().unwrap().to_owned(),
    )
}

fn pins() -> Vec<Pin> {
    let (horde_config, horde_ticks, horde_digest) = horde_golden("small-field");
    vec![
        Pin {
            id: "island",
            version: 1,
            config: include_bytes!("../../../../config/island_loop.json").to_vec(),
            ticks: 100,
            // Seeds 000 and 002: 100 ticks of the `tick % 40 < 20` pattern.
            digest: "100|-131|5050|18|100|323|3492529440|0".into(),
            source: "the island rules' golden digest (docs/background.md)",
        },
        Pin {
            id: "horde",
            // Version 2: the checksum's rng field and the speed cap's rounding
            // changed after version 1. Version 3: co-op for 1 to 4 heroes; a
            // one-hero world (this pin) keeps version 2's results
            // (docs/horde.md, "Versions").
            version: 3,
            config: horde_config,
            ticks: horde_ticks,
            digest: horde_digest,
            source: "parity/horde_ref.py (parity/horde_golden.json, scenario small-field)",
        },
    ]
}

#[test]
fn every_builtin_sim_pins_its_version_and_results() {
    let pins = pins();
    for info in catalog().sims() {
        let pin = pins.iter().find(|p| p.id == info.id).unwrap_or_else(|| {
            panic!(
                "sim `{}` has no pinned (version, digest): add one here from an independent source",
                info.id
            )
        });
        let got = catalog()
            .record(
                info.id,
                Some(&pin.config),
                &InputPlan::Scripted,
                pin.ticks,
                60,
            )
            .unwrap()
            .digest;
        assert!(
            info.version == pin.version,
            "sim `{}` is now version {}, but its pin is for version {}: re-pin its digest \
             after {} ticks from {} (and record the change in the sim's docs)",
            info.id,
            info.version,
            pin.version,
            pin.ticks,
            pin.source
        );
        assert!(
            got == pin.digest,
            "sim `{}` version {}: the digest after {} scripted ticks is now {got}, pinned {} ({}). \
             Results changed without a version change: bump VERSION (the sim's CatalogSim::VERSION) so \
             that old replays are refused by version instead of reported as forgeries, then re-pin.",
            info.id,
            info.version,
            pin.ticks,
            pin.digest,
            pin.source
        );
    }
}

#[test]
fn pins_can_fail() {
    // The comparison above is not vacuous: a different input plan (random
    // sticks instead of the demo walk) gives another horde digest.
    let (config, ticks, digest) = horde_golden("small-field");
    let other = catalog()
        .record("horde", Some(&config), &InputPlan::Random(1), ticks, 60)
        .unwrap()
        .digest;
    assert_ne!(other, digest);
}

/// A horde replay whose header says `sim_version`, with genuine inputs and
/// checkpoints from this build.
fn horde_replay_claiming_version(sim_version: u32) -> Vec<u8> {
    let config = HordeWorld::DEFAULT_CONFIG;
    let cfg = HordeConfig::from_json(config).unwrap();
    let header = ReplayHeader {
        sim_id: "horde".into(),
        sim_version,
        config: config.to_vec(),
        seed: cfg.seed(),
        ticks: 0,
        checkpoint_every: 5,
        input_kind: 0,
        players: 1,
    };
    let mut rec = Recorder::new(HordeWorld::new(&cfg), header).unwrap();
    for t in 0..20 {
        rec.step(&[scripted_input(t)]);
    }
    rec.finish().unwrap().1.to_bytes()
}

#[test]
fn old_version_replay_is_refused_by_version_never_as_a_forgery() {
    let current = HordeWorld::VERSION;
    assert!(current >= 2);
    let old = horde_replay_claiming_version(current - 1);
    let e = catalog().verify(&old, &LIMITS).unwrap_err();
    assert_eq!(
        e,
        CatalogError::VersionMismatch {
            id: "horde".into(),
            found: current - 1,
            supported: current
        }
    );
    assert!(
        e.to_string().contains(&format!(
            "recorded by horde version {}; this build runs version {current}",
            current - 1
        )),
        "{e}"
    );
    // The same bytes under the current version verify: the refusal is the
    // version's, not the content's.
    let same = horde_replay_claiming_version(current);
    assert!(matches!(
        catalog().verify(&same, &LIMITS).unwrap().verdict,
        ReplayVerdict::Match { .. }
    ));
}

fn checked_in_replays() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/replay_reader");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "twr"))
        .collect();
    files.sort();
    files
}

#[test]
fn checked_in_replays_verify_or_are_refused_by_version() {
    // Every replay kept in the repository either verifies with this build
    // (its sim version is the current one) or is refused by version. None may
    // re-simulate to DIVERGED: that would report an honest old replay as a
    // forgery.
    let files = checked_in_replays();
    let mut verified_by_sim = std::collections::BTreeMap::<String, usize>::new();
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let header = read_header(&bytes, &LIMITS)
            .unwrap_or_else(|e| panic!("{}: unreadable: {e}", path.display()));
        let current = catalog().get(&header.sim_id).unwrap().version;
        let result = catalog().verify(&bytes, &LIMITS);
        if header.sim_version == current {
            let report = result.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(
                matches!(report.verdict, ReplayVerdict::Match { .. }),
                "{}: {:?}",
                path.display(),
                report.verdict
            );
            *verified_by_sim.entry(header.sim_id).or_default() += 1;
        } else {
            assert_eq!(
                result.unwrap_err(),
                CatalogError::VersionMismatch {
                    id: header.sim_id.clone(),
                    found: header.sim_version,
                    supported: current
                },
                "{}",
                path.display()
            );
        }
    }
    // At least one replay of each sim is verified by the current build.
    for info in catalog().sims() {
        assert!(
            verified_by_sim.get(info.id).copied().unwrap_or(0) >= 1,
            "no checked-in {} replay of the current version ({:?})",
            info.id,
            files
        );
    }
}

#[test]
fn replays_recorded_before_format_4_are_refused_by_version_never_as_forgeries() {
    // Real files written by builds before the format changes (format 1: no
    // host-events section, the horde one also predates horde version 2;
    // format 2: inputs as bare runs, written by the build before format 3;
    // format 3: one input stream, no player count; it is
    // fuzz/seeds/replay_reader/island_seed_100.twr before its conversion).
    // Their content is genuine; the only honest answer is "recorded by an
    // older build", never a divergence.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for (name, format) in [
        ("horde_v1_format1.twr", 1u16),
        ("island_v1_format1.twr", 1),
        ("island_v1_format2.twr", 2),
        ("island_v1_format3.twr", 3),
    ] {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), format, "{name}");
        let e = catalog().verify(&bytes, &LIMITS).unwrap_err();
        assert_eq!(
            e,
            CatalogError::Replay(tickwise::ReplayError::UnsupportedVersion {
                found: format,
                supported: tickwise::FORMAT_VERSION
            }),
            "{name}"
        );
        assert!(
            e.to_string().contains(&format!(
                "replay format version {format} is not supported (this build reads version 4)"
            )),
            "{name}: {e}"
        );
    }
}

#[test]
fn horde_version_2_replays_are_refused_by_version_never_as_forgeries() {
    // The fuzzer's horde seed as recorded at horde version 2 (format 3,
    // converted to format 4 by `parity/replay_v4.py convert`): genuine
    // content, which a one-hero version-3 world even re-simulates to the
    // same checksums (below); but the version moved, so it is refused by
    // version, in the existing wording.
    let bytes = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/horde_v2_format4.twr"),
    )
    .unwrap();
    assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 4);
    let header = read_header(&bytes, &LIMITS).unwrap();
    assert_eq!((header.sim_id.as_str(), header.sim_version), ("horde", 2));
    let e = catalog().verify(&bytes, &LIMITS).unwrap_err();
    assert_eq!(
        e,
        CatalogError::VersionMismatch {
            id: "horde".into(),
            found: 2,
            supported: HordeWorld::VERSION
        }
    );
    assert!(
        e.to_string().contains(&format!(
            "recorded by horde version 2; this build runs version {}",
            HordeWorld::VERSION
        )),
        "{e}"
    );
}

#[test]
fn a_one_hero_world_re_simulates_a_version_2_replay_exactly() {
    // Below the catalog's version check: the version-2 replay's inputs
    // through a version-3 one-hero world reach the same checksum at every
    // checkpoint and the same final digest (the state's field names changed,
    // playerX -> hero0.x; names are not hashed). This is the evidence that a
    // one-hero world keeps version 2's results; the version moved anyway
    // because the config's meaning did.
    use tickwise::{Replay, Sim, TickInput};
    let bytes = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/horde_v2_format4.twr"),
    )
    .unwrap();
    let replay = Replay::<TickInput>::from_bytes(&bytes, &LIMITS).unwrap();
    assert!(replay.field_names().iter().any(|f| f == "playerX"));
    let cfg = HordeConfig::from_json(&replay.header().config).unwrap();
    assert_eq!(cfg.players(), 1);
    let mut w = HordeWorld::new(&cfg);
    let mut next = 0;
    for (t, input) in replay.inputs(0).enumerate() {
        w.step(core::slice::from_ref(input));
        if let Some(c) = replay.checkpoint(next)
            && c.tick == t as u64 + 1
        {
            assert_eq!(w.checksum(), c.checksum, "checkpoint at tick {}", c.tick);
            next += 1;
        }
    }
    assert!(next >= 2, "{next} checkpoints compared");
    assert_eq!(w.checksum(), replay.final_state().checksum);
    assert_eq!(w.digest(), replay.final_digest());
}
