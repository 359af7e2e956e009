//! Rule-by-rule tests on hand-placed states. Every expected value is worked
//! out in the comment above it from the rules in the crate docs.

use tickwise::{Buttons, Sim, TickInput};

use crate::{ConfigError, DEFAULT_CONFIG, Duel, DuelConfig, Key};

/// The default config: 640 × 360, paddles at x = 16 and 624, half height 32,
/// paddle speed 6, top ball speed 12, smash boost 3.
fn duel_in_play() -> Duel {
    let cfg = DuelConfig::parse(DEFAULT_CONFIG).expect("the default config parses");
    let mut d = Duel::new(&cfg);
    d.serve_in = 0;
    d
}

/// Both players' inputs with `keys` held, each key in its own player's input.
fn holding(keys: &[Key]) -> [TickInput; 2] {
    let mut out = [TickInput::default(); 2];
    for k in keys {
        let input = &mut out[k.side().index()];
        input.held = input.held.with(k.button());
    }
    out
}

#[test]
fn starts_centred_with_a_serve_pending() {
    let d = Duel::new(&DuelConfig::parse(DEFAULT_CONFIG).unwrap());
    assert_eq!(
        (d.ball(), d.velocity(), d.paddles()),
        ([320, 180], [0, 0], [180, 180])
    );
    assert_eq!((d.serve_in, d.score(), d.winner()), (30, [0, 0], None));
}

#[test]
fn ball_reflects_off_top_and_bottom_walls() {
    let mut d = duel_in_play();
    // (100, 4) + (3, -6) = (103, -2): 2 above the top, reflected to y = 2, vy = +6.
    d.ball = [100, 4];
    d.vel = [3, -6];
    d.step(&[TickInput::default(); 2]);
    assert_eq!((d.ball(), d.velocity()), ([103, 2], [3, 6]));
    // Next tick: (106, 8), nothing to reflect.
    d.step(&[TickInput::default(); 2]);
    assert_eq!(d.ball(), [106, 8]);
    // (100, 358) + (3, 6) = (103, 364): 4 below the bottom (360), y = 356, vy = -6.
    d.ball = [100, 358];
    d.vel = [3, 6];
    d.step(&[TickInput::default(); 2]);
    assert_eq!((d.ball(), d.velocity()), ([103, 356], [3, -6]));
}

#[test]
fn paddle_returns_with_spin_truncated_toward_zero() {
    let mut d = duel_in_play();
    // (18, 200) + (-4, 1) = (14, 201): crosses the left face x = 16. The
    // paddle is at 180, offset 21 <= 32: returned. x = 2*16 - 14 = 18,
    // vx = +4, vy = 1 + 21/4 = 1 + 5 = 6.
    d.ball = [18, 200];
    d.vel = [-4, 1];
    d.step(&[TickInput::default(); 2]);
    assert_eq!((d.ball(), d.velocity()), ([18, 201], [4, 6]));
    // Offset -23 above the paddle: -23/4 = -5 (toward zero, not -6).
    d.ball = [18, 157];
    d.vel = [-4, 0];
    d.step(&[TickInput::default(); 2]);
    assert_eq!(d.velocity(), [4, -5]);
    // Right paddle (face 640 - 16 = 624): (622, 190) + (4, 10) = (626, 200),
    // offset 20: vy = 10 + 5 = 15, capped at 12; vx = -4; x = 1248 - 626 = 622.
    d.ball = [622, 190];
    d.vel = [4, 10];
    d.step(&[TickInput::default(); 2]);
    assert_eq!((d.ball(), d.velocity()), ([622, 200], [-4, 12]));
}

#[test]
fn a_charged_paddle_smashes_once_up_to_the_top_speed() {
    let mut d = duel_in_play();
    let tap = TickInput {
        pressed: Buttons::NONE.with(Key::LeftSmash.button()),
        released: Buttons::NONE.with(Key::LeftSmash.button()),
        ..TickInput::default()
    };
    d.step(&[tap, TickInput::default()]);
    assert_eq!(
        d.charged(),
        [true, false],
        "a press edge charges even when released in the same tick"
    );
    // (26, 180) + (-11, 0) = (15, 180): returned at speed min(11 + 3, 12) = 12,
    // x = 32 - 15 = 17; the charge is spent.
    d.ball = [26, 180];
    d.vel = [-11, 0];
    d.step(&[TickInput::default(); 2]);
    assert_eq!(
        (d.ball(), d.velocity(), d.charged()),
        ([17, 180], [12, 0], [false, false])
    );
}

#[test]
fn a_ball_outside_the_paddle_passes_and_scores() {
    let mut d = duel_in_play();
    // Crosses x = 16 at y = 140: offset -40 from the paddle at 180, more than 32.
    d.ball = [18, 140];
    d.vel = [-5, 0];
    d.step(&[TickInput::default(); 2]);
    assert_eq!(d.ball(), [13, 140]);
    d.step(&[TickInput::default(); 2]); // x = 8
    d.step(&[TickInput::default(); 2]); // x = 3
    d.step(&[TickInput::default(); 2]); // x = -2: the right player scores
    assert_eq!(
        (d.score(), d.ball(), d.velocity(), d.serve_in),
        ([0, 1], [320, 180], [0, 0], 30)
    );
}

#[test]
fn paddles_follow_buttons_then_axes_and_stay_on_the_field() {
    let mut d = duel_in_play();
    d.step(&holding(&[Key::LeftUp, Key::RightDown]));
    assert_eq!(d.paddles(), [174, 186]);
    // Both directions held cancel out and hand over to the stick:
    // 16384 * 6 / 32767 = 3 (98304 / 32767 = 3.00003); -32768 is clamped to
    // -32767, a full -6.
    // Each stick is its own player's axis 0.
    let mut input = holding(&[Key::LeftUp, Key::LeftDown]);
    input[0].axes = [16_384, 0, 0, 0];
    input[1].axes = [-32_768, 0, 0, 0];
    d.step(&input);
    assert_eq!(d.paddles(), [177, 180]);
    // A held button beats the stick.
    input[0].held = Buttons::NONE.with(Key::LeftDown.button());
    d.step(&input);
    assert_eq!(d.paddles(), [183, 174]);
    // Centres stay within [32, 328].
    d.paddles = [35, 325];
    d.step(&holding(&[Key::LeftUp, Key::RightDown]));
    assert_eq!(d.paddles(), [32, 328]);
}

#[test]
fn the_state_names_every_field() {
    let d = duel_in_play();
    let names: Vec<&str> = d.field_hashes().iter().map(|f| f.name).collect();
    assert_eq!(
        names,
        [
            "tick", "ball", "velocity", "paddles", "charged", "score", "serveIn", "rng"
        ]
    );
    assert!(
        d.digest()
            .starts_with("t=0 ball=(320,180) vel=(0,0) paddles=(180,180) score=0-0 chk=")
    );
}

fn config_with(key: &str, value: &str) -> Vec<u8> {
    let text = core::str::from_utf8(DEFAULT_CONFIG).unwrap();
    let start = text.find(&format!("\"{key}\":")).unwrap();
    let end = start + text[start..].find([',', '\n']).unwrap();
    format!("{}\"{key}\": {value}{}", &text[..start], &text[end..]).into_bytes()
}

#[test]
fn config_errors_name_the_key() {
    let err = |bytes: &[u8]| DuelConfig::parse(bytes).unwrap_err();
    assert!(matches!(err(b"[1, 2]"), ConfigError::NotAnObject));
    assert!(matches!(err(b"{\"seed\": 1,"), ConfigError::Syntax { .. }));
    assert_eq!(err(b"{}"), ConfigError::Missing { key: "seed".into() });
    let unknown = err(&config_with("width", "640, \"widht\": 1"));
    assert_eq!(
        unknown,
        ConfigError::UnknownKey {
            key: "widht".into(),
            suggestion: Some("width"),
        }
    );
    assert_eq!(
        unknown.to_string(),
        "config key `widht` is not a key of this config; did you mean `width`?"
    );
    // Issue 19: two values for one key were read as the last one; readers
    // disagree on which counts, so the library's reader refuses it.
    let twice = err(&config_with("width", "640, \"width\": 320"));
    assert_eq!(
        twice,
        ConfigError::DuplicateKey {
            key: "width".into()
        }
    );
    let float = err(&config_with("width", "640.5"));
    assert_eq!(
        float.to_string(),
        "config key `width` must be an integer, found 640.5"
    );
    assert!(matches!(
        err(&config_with("winScore", "0")),
        ConfigError::OutOfRange { key, .. } if key == "winScore"
    ));
    assert!(matches!(
        err(&config_with("seed", "-1")),
        ConfigError::OutOfRange { key, .. } if key == "seed"
    ));
    assert!(matches!(
        err(&config_with("stepMs", "\"16\"")),
        ConfigError::WrongType { key, .. } if key == "stepMs"
    ));
    // 2 * 180 >= 360: the paddle could not move.
    let tall = err(&config_with("paddleHalf", "180"));
    assert_eq!(
        tall.to_string(),
        "config key `paddleHalf`: must be under half the height (180)"
    );
    for key in ["paddleInset", "maxBallSpeed", "maxServeVy"] {
        let value = match key {
            "paddleInset" => "161",
            "maxBallSpeed" => "4",
            _ => "13",
        };
        assert!(
            matches!(
                err(&config_with(key, value)),
                ConfigError::Inconsistent { key: k, .. } if k == key
            ),
            "{key}"
        );
    }
    // The largest seed is fine.
    let big = DuelConfig::parse(&config_with("seed", "18446744073709551615")).unwrap();
    assert_eq!(big.seed(), u64::MAX);
}

#[test]
fn config_parser_never_panics_on_garbage() {
    let samples: [&[u8]; 6] = [
        b"",
        b"\xff\xfe",
        b"null",
        b"{\"seed\":1e400}",
        &[b'['; 10_000],
        b"{\"a\":{}}",
    ];
    for s in samples {
        assert!(DuelConfig::parse(s).is_err());
    }
    // Every prefix of the default config is refused, the whole is accepted.
    for n in 0..DEFAULT_CONFIG.len() - 1 {
        assert!(
            DuelConfig::parse(&DEFAULT_CONFIG[..n]).is_err(),
            "prefix {n}"
        );
    }
    assert!(DuelConfig::parse(DEFAULT_CONFIG).is_ok());
}
