//! The horde against its O(n²) reference, through the kernel's loop and
//! lifecycle, and its config validation.

use tickwise::{
    Capture, ClockConfig, EventKind, FixedLoop, InputBuffer, InputEvent, Nanos, Sim, StepLength,
    TickInput, Timestamp, differing_fields,
};
use tickwise_config::ConfigError;
use tickwise_sims::horde::{
    DOWN, HordeConfig, HordeWorld, LEFT, NaiveHorde, RIGHT, UP, scripted_input,
};

const SHIPPED: &[u8] = include_bytes!("../../../../config/horde.json");

/// The shipped config with some keys replaced (or removed, with `None`).
fn json_with(over: &[(&str, Option<serde_json::Value>)]) -> Vec<u8> {
    let mut m: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(SHIPPED).unwrap();
    for (k, v) in over {
        match v {
            Some(v) => m.insert((*k).into(), v.clone()),
            None => m.remove(*k),
        };
    }
    serde_json::to_vec(&m).unwrap()
}

fn cfg_with(over: &[(&str, i64)]) -> HordeConfig {
    let over: Vec<_> = over.iter().map(|&(k, v)| (k, Some(v.into()))).collect();
    HordeConfig::from_json(&json_with(&over)).unwrap()
}

/// Steps the grid world and the reference side by side, comparing checksums
/// every tick; on the first difference, names the tick and the fields.
fn assert_same_as_reference(cfg: &HordeConfig, ticks: u64, input: impl Fn(u64) -> TickInput) {
    let mut grid = HordeWorld::new(cfg);
    let mut naive = NaiveHorde::new(cfg);
    for t in 0..ticks {
        let inp = input(t);
        grid.step(core::slice::from_ref(&inp));
        naive.step(core::slice::from_ref(&inp));
        if grid.checksum() != naive.checksum() {
            panic!(
                "{}: grid and reference differ after tick {t} in {:?}",
                cfg.summary(),
                differing_fields(&grid.field_hashes(), &naive.field_hashes())
            );
        }
    }
    assert_eq!(grid.digest(), naive.digest());
    // The run exercised what the grid has to get right.
    assert!(
        grid.kills() > 0 || cfg.enemies() < 10,
        "{}: nobody died",
        cfg.summary()
    );
}

#[test]
fn grid_matches_reference_small_and_medium_hordes() {
    let base = cfg_with(&[]);
    for (n, ticks) in [(1u64, 300u64), (2, 300), (60, 400), (300, 450)] {
        assert_same_as_reference(&base.with_enemies(n).unwrap(), ticks, scripted_input);
    }
}

#[test]
fn grid_matches_reference_two_thousand_enemies() {
    // Two waves and the horde closing in: a few hundred thousand pair
    // decisions per tick for the reference.
    let cfg = cfg_with(&[("waveTicks", 100)]).with_enemies(2000).unwrap();
    assert_same_as_reference(&cfg, 300, scripted_input);
}

#[test]
fn grid_matches_reference_in_a_crowded_box() {
    // A field barely larger than the spawn band: enemies pile against the
    // walls and corners (clamped, often on the same spot), the attack covers
    // half the field, cells are larger than needed, no crowd limit.
    let cfg = cfg_with(&[
        ("fieldWidth", 300),
        ("fieldHeight", 200),
        ("gridCell", 24),
        ("attackRadius", 90),
        ("crowdLimit", 0),
        ("spawnDistance", 20),
        ("maxPush", 2048),
        ("separationStrength", 256),
    ])
    .with_enemies(700)
    .unwrap();
    assert_same_as_reference(&cfg, 300, scripted_input);
}

#[test]
fn grid_matches_reference_with_the_largest_small_cells_and_larger_ones() {
    // Squared distances inside the separation are 32-bit for cells up to
    // 64 px (two touching cells: under 2^15 sub-pixels apart per axis) and
    // 64-bit beyond. 64 px is the edge (a debug build would panic on an
    // overflow); 80 px takes the 64-bit path. Spread-out enemies, so that
    // candidates lie up to two cells apart.
    for cell in [64, 80] {
        let cfg = cfg_with(&[
            ("fieldWidth", 900),
            ("fieldHeight", 700),
            ("gridCell", cell),
            ("spawnDistance", 300),
            ("enemyRadius", 24),
            ("maxPush", 2048),
        ])
        .with_enemies(500)
        .unwrap();
        assert_same_as_reference(&cfg, 200, scripted_input);
    }
}

/// Player `p`'s own pattern for tick `t`: a walk in one of the eight
/// directions, changing every `23 + 7p` ticks, each player through the
/// directions in its own order (distinct per player, so a swap shows).
fn coop_input(p: usize, t: u64) -> TickInput {
    const DIRS: [&[tickwise::Button]; 9] = [
        &[RIGHT],
        &[DOWN, RIGHT],
        &[DOWN],
        &[DOWN, LEFT],
        &[LEFT],
        &[UP, LEFT],
        &[UP],
        &[UP, RIGHT],
        &[],
    ];
    let phase = t / (23 + 7 * p as u64);
    let dir = DIRS[((phase * (2 * p as u64 + 1) + p as u64) % 9) as usize];
    let mut held = tickwise::Buttons::NONE;
    for &b in dir {
        held = held.with(b);
    }
    TickInput {
        held,
        ..TickInput::default()
    }
}

/// The grid world and the reference, `players` heroes each with its own
/// pattern, compared after every tick.
fn assert_coop_same_as_reference(cfg: &HordeConfig, ticks: u64) {
    let mut grid = HordeWorld::new(cfg);
    let mut naive = NaiveHorde::new(cfg);
    let mut downs = 0;
    for t in 0..ticks {
        let inputs: Vec<TickInput> = (0..cfg.players()).map(|p| coop_input(p, t)).collect();
        grid.step_players(&inputs);
        naive.step_players(&inputs);
        if grid.checksum() != naive.checksum() {
            panic!(
                "{}: grid and reference differ after tick {t} in {:?}",
                cfg.summary(),
                differing_fields(&grid.field_hashes(), &naive.field_hashes())
            );
        }
        downs = grid.heroes().iter().map(|h| h.downs).sum::<u64>();
    }
    assert_eq!(grid.digest(), naive.digest());
    assert!(grid.kills() > 0 && downs > 0, "{}", grid.digest());
}

#[test]
fn grid_matches_reference_with_two_three_and_four_heroes() {
    let base = cfg_with(&[
        ("waveTicks", 90),
        ("contactDamage", 5),
        ("spawnDistance", 120),
    ]);
    for (players, n, ticks) in [(2u64, 300u64, 400u64), (3, 800, 300), (4, 2000, 250)] {
        let cfg = base.with_players(players).unwrap().with_enemies(n).unwrap();
        assert_coop_same_as_reference(&cfg, ticks);
    }
}

#[test]
fn players_key_is_optional_and_checked() {
    use serde_json::json;
    let cfg = HordeConfig::from_json(&json_with(&[("players", None)])).unwrap();
    assert_eq!(cfg.players(), 1);
    for n in 1..=4 {
        let cfg = HordeConfig::from_json(&json_with(&[("players", Some(json!(n)))])).unwrap();
        assert_eq!(cfg.players(), n as usize);
        assert_eq!(
            HordeWorld::new(&cfg.with_enemies(3).unwrap()).players(),
            n as usize
        );
    }
    for bad in [json!(0), json!(5), json!(-1), json!("two"), json!(2.0)] {
        let e = err(&[("players", Some(bad.clone()))]);
        assert_eq!(key_of(&e), "players", "{bad}: {e}");
    }
    let e = err(&[("players", Some(json!(5)))]);
    assert!(e.to_string().contains("1..=4"), "{e}");
    for bad in [0, 5, u64::MAX] {
        assert_eq!(key_of(&cfg.with_players(bad).unwrap_err()), "players");
    }
}

#[test]
fn a_two_hero_world_stepped_with_one_input_leaves_hero_1_still() {
    // Sim::step (the one-input seam) is step_players with player 0's input.
    let cfg = cfg_with(&[])
        .with_players(2)
        .unwrap()
        .with_enemies(50)
        .unwrap();
    let (mut a, mut b) = (HordeWorld::new(&cfg), HordeWorld::new(&cfg));
    let x1 = a.heroes()[1].x;
    for t in 0..100 {
        a.step(&[scripted_input(t)]);
        b.step_players(&[scripted_input(t), TickInput::default()]);
        assert_eq!(a.checksum(), b.checksum(), "tick {t}");
    }
    assert_eq!(a.heroes()[1].x, x1);
    assert_ne!(a.heroes()[0].x, HordeWorld::new(&cfg).heroes()[0].x);
    // Inputs past the heroes are ignored.
    b.step_players(&[
        TickInput::default(),
        TickInput::default(),
        scripted_input(0),
    ]);
    a.step_players(&[TickInput::default(), TickInput::default()]);
    assert_eq!(a.checksum(), b.checksum());
}

#[test]
fn snapshot_carries_every_hero() {
    let cfg = cfg_with(&[])
        .with_players(3)
        .unwrap()
        .with_enemies(40)
        .unwrap();
    let mut w = HordeWorld::new(&cfg);
    for t in 0..30 {
        w.step_players(&[scripted_input(t), coop_input(1, t), coop_input(2, t)]);
    }
    let snap = w.capture();
    assert_eq!(snap.heroes(), w.heroes());
    assert_eq!(snap.heroes().len(), 3);
    assert_eq!(snap.player(), (w.player_x(), w.player_y()));
}

#[test]
fn grid_matches_reference_with_a_still_player_and_slow_steering() {
    let cfg = cfg_with(&[("steerShift", 5), ("enemySpeed", 900), ("waveTicks", 60)])
        .with_enemies(500)
        .unwrap();
    assert_same_as_reference(&cfg, 400, |_| TickInput::default());
}

#[test]
fn same_seed_same_run_other_seed_other_run() {
    let cfg = cfg_with(&[]);
    let run = |cfg: &HordeConfig| {
        let mut w = HordeWorld::new(cfg);
        for t in 0..200 {
            w.step(&[scripted_input(t)]);
        }
        w.digest()
    };
    assert_eq!(run(&cfg), run(&cfg));
    assert_ne!(run(&cfg), run(&cfg.with_seed(cfg.seed() + 1)));
}

#[test]
fn desync_reports_name_the_fields() {
    // One tick of different input moves the player, and the enemies steer
    // after it: both show up by name.
    let cfg = cfg_with(&[]);
    let (mut a, mut b) = (HordeWorld::new(&cfg), HordeWorld::new(&cfg));
    for t in 0..50 {
        a.step(&[scripted_input(t)]);
        b.step(&[if t == 20 {
            TickInput::default()
        } else {
            scripted_input(t)
        }]);
    }
    let diff = differing_fields(&a.field_hashes(), &b.field_hashes());
    assert!(
        diff.contains(&"hero0.x") && diff.contains(&"enemyX"),
        "{diff:?}"
    );
    assert!(
        !diff.contains(&"tick") && !diff.contains(&"waves"),
        "{diff:?}"
    );
}

#[test]
fn snapshot_matches_the_world_and_reuses_its_buffers() {
    let cfg = cfg_with(&[]).with_enemies(400).unwrap();
    let mut w = HordeWorld::new(&cfg);
    let mut snap = w.capture();
    let ptr = snap.enemy_x().as_ptr();
    for t in 0..200 {
        w.step(&[scripted_input(t)]);
        w.capture_into(&mut snap);
    }
    assert_eq!(snap.enemy_x().as_ptr(), ptr, "capture_into reallocated");
    assert_eq!(snap.tick(), 200);
    assert_eq!(snap.player(), (w.player_x(), w.player_y()));
    let xs: Vec<i32> = w.enemies().map(|e| e.x).collect();
    let ys: Vec<i32> = w.enemies().map(|e| e.y).collect();
    let alive: Vec<bool> = w.enemies().map(|e| e.hp > 0).collect();
    assert_eq!((snap.enemy_x(), snap.enemy_y()), (&xs[..], &ys[..]));
    assert_eq!(snap.alive(), &alive[..]);
    assert_eq!(w.enemy(399).map(|e| e.x), Some(xs[399]));
    assert_eq!(w.enemy(400), None);
    assert_eq!(alive.iter().filter(|&&a| a).count(), w.alive() as usize);
}

#[test]
fn key_events_drive_the_player_through_the_loop() {
    // 30 Hz: tick k's window ends at (k+1)/30 s. Right goes down at 0 ms and
    // up at exactly 500 ms, the end of tick 14's window (exclusive): ticks
    // 0..=14 hold it, so the player moves 15 * playerSpeed (768) = 11520.
    let cfg = cfg_with(&[]).with_enemies(10).unwrap();
    let start = HordeWorld::new(&cfg).player_x();
    let mut buf = InputBuffer::new();
    for (ms, kind) in [(0, EventKind::Down(RIGHT)), (500, EventKind::Up(RIGHT))] {
        buf.push(InputEvent {
            at: Timestamp::from_millis(ms),
            kind,
        })
        .unwrap();
    }
    assert_eq!(cfg.step(), StepLength::from_hz(30).unwrap());
    let mut lp = FixedLoop::new(
        HordeWorld::new(&cfg),
        buf,
        cfg.clock_config(),
        cfg.catch_up_policy(),
    );
    for f in 1..=70 {
        let _ = lp.frame_at(Timestamp::from_millis(10 * f));
    }
    assert_eq!(lp.tick().get(), 21);
    assert_eq!(lp.sim().player_x() - start, 11_520);
}

#[test]
fn a_long_pause_catches_up_max_catch_up_steps() {
    let cfg = cfg_with(&[]);
    let mut lp = FixedLoop::new(
        HordeWorld::new(&cfg),
        tickwise::FnInputs(|t: tickwise::Tick| scripted_input(t.get())),
        ClockConfig::new(cfg.step()),
        cfg.catch_up_policy(),
    );
    // 100 ms at 30 Hz: three whole steps.
    assert_eq!(lp.frame(Nanos::from_millis(100)).steps, 3);
    lp.pause(lp.host_time()).unwrap();
    let r = lp
        .resume(lp.host_time().saturating_add(Nanos::from_secs(60)))
        .unwrap();
    // 60 s at 30 Hz is 1800 ticks; the shipped config caps catch-up at 300.
    assert_eq!((r.wanted_steps, r.catch_up_steps), (1800, 300));
    assert_eq!(lp.sim().tick(), 303);
}

#[test]
fn settle_ticks_by_hand() {
    // 300 enemies: band outer 424 px; 424 * 256 * 11 / 8 / 384 = 388.7.
    assert_eq!(cfg_with(&[]).settle_ticks(), 388);
    // Enemies that never move never settle: the cap.
    assert_eq!(
        cfg_with(&[("enemySpeed", 0)]).settle_ticks(),
        tickwise_sims::horde::MAX_SETTLE_TICKS
    );
}

fn err(over: &[(&str, Option<serde_json::Value>)]) -> ConfigError {
    HordeConfig::from_json(&json_with(over)).unwrap_err()
}

fn key_of(e: &ConfigError) -> &str {
    match e {
        ConfigError::Missing { key }
        | ConfigError::WrongType { key, .. }
        | ConfigError::OutOfRange { key, .. }
        | ConfigError::Inconsistent { key, .. } => key,
        other => panic!("no key in {other:?}"),
    }
}

#[test]
fn every_bad_key_is_named() {
    use serde_json::json;
    for (key, value) in [
        ("seed", Some(json!(-1))),
        ("enemies", Some(json!(0))),
        ("enemies", Some(json!(1_000_001))),
        ("enemies", None),
        ("fieldWidth", Some(json!(8))),
        ("fieldHeight", Some(json!("big"))),
        ("gridCell", Some(json!(12.5))),
        ("enemyRadius", Some(json!(65))),
        ("separationStrength", Some(json!(257))),
        ("tickHz", Some(json!(0))),
        ("maxCatchUpSteps", Some(json!(-5))),
        ("attackCooldownTicks", Some(json!(0))),
        ("waveTicks", None),
        ("crowdLimit", Some(json!(true))),
        ("version", Some(json!(2))),
        ("sim", Some(json!("island"))),
        ("sim", Some(json!(4))),
    ] {
        let e = err(&[(key, value.clone())]);
        assert_eq!(key_of(&e), key, "{key} = {value:?}: {e}");
        assert!(e.to_string().contains(key), "{e}");
    }
}

#[test]
fn horde_config_refuses_duplicate_and_unknown_keys() {
    let text = std::str::from_utf8(SHIPPED).unwrap().trim_end();
    let plus = |extra: &str| format!("{}, {extra}}}", text.strip_suffix('}').unwrap()).into_bytes();
    assert_eq!(
        HordeConfig::from_json(&plus(r#""enemies": 1000000"#)).unwrap_err(),
        ConfigError::DuplicateKey {
            key: "enemies".into()
        }
    );
    let e = HordeConfig::from_json(&plus(r#""enemySped": 1"#)).unwrap_err();
    assert_eq!(
        e,
        ConfigError::UnknownKey {
            key: "enemySped".into(),
            suggestion: Some("enemySpeed")
        }
    );
    assert!(e.to_string().contains("did you mean `enemySpeed`?"), "{e}");
    // An island key in a horde config is unknown here.
    assert!(matches!(
        HordeConfig::from_json(&plus(r#""stepMs": 16"#)),
        Err(ConfigError::UnknownKey { key, .. }) if key == "stepMs"
    ));
    assert!(HordeConfig::from_json(&plus(r#""$comment": "fine""#)).is_ok());
    // Every documented key is accepted: the shipped file holds all of them.
    let shipped: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(SHIPPED).unwrap();
    for key in tickwise_sims::horde::HORDE_KEYS {
        assert!(shipped.contains_key(key), "config/horde.json lacks {key}");
    }
}

#[test]
fn cross_checks_are_named() {
    use serde_json::json;
    // Cells smaller than two enemy radii would miss overlapping pairs.
    let e = err(&[("gridCell", Some(json!(15)))]);
    assert!(
        matches!(&e, ConfigError::Inconsistent { key, .. } if key == "gridCell"),
        "{e}"
    );
    assert!(e.to_string().contains("16 px"), "{e}");
    // A million px field in 16 px cells is 3.9 billion cells.
    let e = err(&[
        ("fieldWidth", Some(json!(1_000_000))),
        ("fieldHeight", Some(json!(1_000_000))),
    ]);
    assert!(
        matches!(&e, ConfigError::Inconsistent { key, .. } if key == "gridCell"),
        "{e}"
    );
    // Not JSON, not an object.
    assert!(matches!(
        HordeConfig::from_json(b"{"),
        Err(ConfigError::Syntax { .. })
    ));
    assert_eq!(
        HordeConfig::from_json(b"[]").unwrap_err(),
        ConfigError::NotAnObject
    );
}

#[test]
fn optional_keys_default_and_enemy_override_is_checked() {
    let cfg = HordeConfig::from_json(&json_with(&[
        ("tickHz", None),
        ("maxCatchUpSteps", None),
        ("version", None),
        ("sim", None),
        ("note", None),
    ]))
    .unwrap();
    assert_eq!((cfg.tick_hz(), cfg.max_catch_up_steps()), (30, 300));
    assert_eq!(cfg.step(), StepLength::from_hz(30).unwrap());
    for bad in [0, 1_000_001, u64::MAX] {
        let e = cfg.with_enemies(bad).unwrap_err();
        assert_eq!(key_of(&e), "enemies");
    }
    assert_eq!(cfg.with_enemies(100_000).unwrap().enemies(), 100_000);
}
