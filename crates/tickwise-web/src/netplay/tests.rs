//! The netplay page's model, driven by hand.

use super::*;
use crate::test_support::verified;

fn page(rtt: u64, loss: u64, delay: u64) -> NetplayPage {
    NetplayPage::with_settings(rtt, loss, delay).expect("valid settings")
}

fn peers(p: &NetplayPage) -> Vec<Value> {
    p.state_json()["peers"].as_array().unwrap().clone()
}

#[test]
fn both_views_end_on_the_same_confirmed_state_and_the_replay_verifies() {
    let mut p = page(200, 5, 0);
    p.step_frames(5.0, 16.0).unwrap();
    p.key("ArrowRight", true, 200.0).unwrap();
    p.step_frames(120.0, 16.0).unwrap();
    p.key("ArrowRight", false, 2300.0).unwrap();
    p.set_rtt(60.0).unwrap();
    p.set_input_delay(2.0).unwrap();
    p.step_frames(120.0, 16.0).unwrap();
    let stop = p.end_match();
    p.step_frames(200.0, 16.0).unwrap();
    let ps = peers(&p);
    for s in &ps {
        assert_eq!(s["finished"], true, "{s}");
        assert_eq!(s["confirmedTick"], stop);
        assert_eq!(s["desyncs"], 0);
        assert_eq!(s["inputDelay"], 2, "the slider reached the session");
    }
    assert_eq!(ps[0]["confirmedChecksum"], ps[1]["confirmedChecksum"]);
    assert!(ps[0]["rollbacks"].as_u64().unwrap() > 0, "{}", ps[0]);
    // Both players' recordings re-simulate to the confirmed state; the
    // horde's digest ends with its checksum.
    for k in [0.0, 1.0] {
        let (ticks, digest) = verified(&p.replay_bytes(k).unwrap());
        assert_eq!(ticks, stop);
        let sum = digest.rsplit('|').next().unwrap();
        assert_eq!(sum, ps[0]["confirmedChecksum"].as_str().unwrap());
    }
}

/// Both views' heroes after a finished match, with or without the
/// keyboard holding ArrowRight for 1.5 s, and a fresh page's heroes.
fn heroes_after(keys: bool) -> (Value, Value, u64) {
    let mut p = page(120, 0, 0);
    let start = peers(&p)[0]["heroes"].clone();
    p.step_frames(5.0, 16.0).unwrap();
    if keys {
        p.key("ArrowRight", true, 100.0).unwrap();
    }
    p.step_frames(100.0, 16.0).unwrap();
    if keys {
        p.key("ArrowRight", false, 1_700.0).unwrap();
    }
    p.step_frames(20.0, 16.0).unwrap();
    let stop = p.end_match();
    p.step_frames(200.0, 16.0).unwrap();
    let ps = peers(&p);
    for s in &ps {
        assert_eq!(
            (s["finished"].as_bool(), s["confirmedTick"].as_u64()),
            (Some(true), Some(stop))
        );
    }
    // Finished, each view's current state is the confirmed one: the
    // two views agree on every hero.
    assert_eq!(ps[0]["heroes"], ps[1]["heroes"]);
    assert_eq!(ps[0]["confirmedChecksum"], ps[1]["confirmedChecksum"]);
    (start, ps[0]["heroes"].clone(), stop)
}

#[test]
fn the_keys_move_only_hero_0_and_the_bot_only_hero_1() {
    let (start, keyed, stop) = heroes_after(true);
    let (start2, still, stop2) = heroes_after(false);
    assert_eq!((start.clone(), stop), (start2, stop2));
    assert_eq!(start.as_array().unwrap().len(), 2, "two heroes");
    let at = |v: &Value, h: usize, k: &str| v[h][k].as_i64().unwrap();
    // Without keys, hero 0 never moves; with ArrowRight held it moves
    // right only, in whole steps of playerSpeed (768/256 px a tick).
    assert_eq!(
        (at(&still, 0, "x"), at(&still, 0, "y")),
        (at(&start, 0, "x"), at(&start, 0, "y"))
    );
    let dx = at(&keyed, 0, "x") - at(&start, 0, "x");
    assert!(dx > 0 && dx % 768 == 0, "hero 0 moved {dx}");
    assert_eq!(at(&keyed, 0, "y"), at(&start, 0, "y"));
    // Hero 1 moves by the bot alone: it moved, and the same way whether
    // or not the keyboard was used.
    assert_eq!(
        (at(&keyed, 1, "x"), at(&keyed, 1, "y")),
        (at(&still, 1, "x"), at(&still, 1, "y"))
    );
    assert_ne!(
        (at(&still, 1, "x"), at(&still, 1, "y")),
        (at(&start, 1, "x"), at(&start, 1, "y"))
    );
}

#[test]
fn each_view_draws_every_hero() {
    let mut p = page(100, 0, 0);
    p.step_frames(10.0, 16.0).unwrap();
    for v in 0..2 {
        let d = p.interpolated(v).to_vec();
        // The count, two heroes (four numbers), then one pair per
        // enemy alive (at most the config's 300).
        assert_eq!(d[0], 2.0, "two heroes in view {v}");
        assert_eq!((d.len() - 5) % 2, 0);
        assert!(d.len() > 5 && d.len() <= 5 + 2 * 300, "{}", d.len());
        // Hero 1 is drawn within a tick's move (3 px) of where the view's
        // state has it.
        let h1 = &peers(&p)[v]["heroes"][1];
        let x = h1["x"].as_i64().unwrap() as f32 / 256.0;
        assert!((d[3] - x).abs() <= 3.0, "{} vs {x}", d[3]);
    }
}

#[test]
fn two_pages_fed_the_same_frames_and_keys_agree() {
    // Deterministic: two pages fed the same frames and events agree.
    let run = || {
        let mut p = page(100, 10, 0);
        p.step_frames(10.0, 20.0).unwrap();
        p.key("KeyA", true, 250.0).unwrap();
        p.step_frames(50.0, 20.0).unwrap();
        p.key("KeyA", false, 1300.0).unwrap();
        p.step_frames(50.0, 20.0).unwrap();
        p.state_json()
    };
    assert_eq!(run(), run());
}

#[test]
fn no_delay_and_no_latency_means_no_rollback_but_latency_does() {
    let mut still = page(0, 0, 2);
    still.step_frames(300.0, 16.0).unwrap();
    assert_eq!(peers(&still)[0]["rollbacks"], 0);
    let mut lag = page(300, 0, 0);
    lag.step_frames(300.0, 16.0).unwrap();
    let ps = peers(&lag);
    // 150 ms each way at 30 Hz is 4.5 ticks: the bot changes direction
    // every 10 to 59 ticks, so player 1 mispredicts and rolls back.
    assert!(ps[0]["mispredictions"].as_u64().unwrap() > 0, "{}", ps[0]);
    assert!(ps[0]["rollbacks"].as_u64().unwrap() > 0);
    assert_eq!(ps[0]["desyncs"], 0);
}

#[test]
fn bad_settings_are_refused_and_change_nothing() {
    let mut p = page(100, 2, 0);
    assert!(p.set_rtt(1001.0).is_err());
    assert!(p.set_rtt(f64::NAN).is_err());
    assert!(p.set_loss(51.0).is_err());
    assert!(p.set_loss(2.5).is_err());
    assert!(p.set_input_delay(17.0).is_err());
    assert!(p.set_input_delay(-1.0).is_err());
    assert!(p.step_frames(1.0, 1001.0).is_err());
    assert!(p.replay_bytes(2.0).is_err());
    let s = p.state_json();
    assert_eq!(
        (s["rttMs"].as_u64(), s["lossPct"].as_u64()),
        (Some(100), Some(2))
    );
    assert_eq!(s["inputDelay"], 0);
    assert_eq!(s["frames"], 0);
    assert!(p.frame_at(f64::NAN).is_err());
    assert_eq!(p.state_json()["rejectedTimes"], 1);
    assert!(NetplayPage::with_settings(2000, 0, 0).is_err());
}

#[test]
fn end_match_is_idempotent_and_reset_starts_over() {
    let mut p = page(40, 0, 1);
    p.step_frames(30.0, 33.0).unwrap();
    let t = p.end_match();
    assert_eq!(p.end_match(), t);
    p.step_frames(60.0, 33.0).unwrap();
    assert_eq!(peers(&p)[1]["confirmedTick"], t);
    p.reset().unwrap();
    let s = p.state_json();
    assert_eq!(s["stopAt"], Value::Null);
    assert_eq!(s["peers"][0]["confirmedTick"], 0);
    assert_eq!(s["inputDelay"], 1, "settings survive a reset");
}

/// A page whose peers declare each other gone after 45 ticks (1.5 s).
fn quick_page() -> NetplayPage {
    let mut p = page(120, 0, 0);
    p.set_disconnect_after(45.0).unwrap();
    p
}

/// Ends the match and checks it finished clean: both peers on the stop
/// tick with one checksum, and the match replay verifies to it.
fn finish_clean(p: &mut NetplayPage) -> Vec<Value> {
    let stop = p.end_match();
    p.step_frames(300.0, 16.0).unwrap();
    let ps = peers(p);
    for s in &ps {
        assert_eq!(s["finished"], true, "{s}");
        assert_eq!(s["confirmedTick"], stop, "{s}");
        assert_eq!(s["desyncs"], 0, "{s}");
    }
    assert_eq!(ps[0]["confirmedChecksum"], ps[1]["confirmedChecksum"]);
    let (ticks, digest) = verified(&p.match_replay_bytes().unwrap());
    assert_eq!(ticks, stop);
    assert_eq!(
        digest.rsplit('|').next().unwrap(),
        ps[0]["confirmedChecksum"].as_str().unwrap()
    );
    ps
}

#[test]
fn hidden_past_the_timeout_player_1_stops_is_declared_gone_and_rejoins() {
    let mut p = quick_page();
    p.step_frames(90.0, 16.0).unwrap();
    p.key("ArrowRight", true, 100.0).unwrap();
    p.step_frames(30.0, 16.0).unwrap();
    let before = peers(&p);
    p.hide(0.0).unwrap();
    // 3.2 s hidden with frames still coming (an emulated hidden tab):
    // only player 2 runs.
    p.step_frames(200.0, 16.0).unwrap();
    let hidden = peers(&p);
    assert_eq!(
        hidden[0]["loopTick"], before[0]["loopTick"],
        "player 1 stopped"
    );
    assert!(hidden[1]["loopTick"].as_u64() > before[1]["loopTick"].as_u64());
    assert_eq!(p.leaves_and_rejoins(), (0, 0), "no rejoin while hidden");
    p.show(0.0).unwrap();
    p.step_frames(120.0, 16.0).unwrap();
    assert_eq!(p.leaves_and_rejoins(), (1, 1), "{}", p.state_json());
    let ps = finish_clean(&mut p);
    // Player 2 saw player 1 leave and come back.
    assert!(p.session(1).rejoined(0).is_some());
    assert!(ps[0]["rollbacks"].is_u64());
    // The rejoined session records nothing: player 1's replay is gone,
    // the match's is player 2's.
    assert!(p.replay_bytes(0.0).is_err());
}

#[test]
fn frames_that_stop_for_longer_than_the_timeout_rejoin_too() {
    // A frozen page: no events, its frames just stop for 4 s; the next
    // frame runs player 2 through the gap a tick at a time.
    let mut p = quick_page();
    for k in 0..=120u32 {
        let _ = p.frame_at(f64::from(k) * 16.0).unwrap();
    }
    let at = peers(&p)[1]["loopTick"].as_u64().unwrap();
    let _ = p.frame_at(1_920.0 + 4_000.0).unwrap();
    let caught = peers(&p)[1]["loopTick"].as_u64().unwrap();
    // 4 s at 30 Hz: about 120 ticks of player 2, none dropped.
    assert!((at + 118..=at + 122).contains(&caught), "{at} -> {caught}");
    for k in 1..=300u32 {
        let _ = p.frame_at(5_920.0 + f64::from(k) * 16.0).unwrap();
    }
    assert_eq!(p.leaves_and_rejoins(), (1, 1), "{}", p.state_json());
    finish_clean(&mut p);
}

#[test]
fn a_short_hide_catches_up_without_a_leave() {
    let mut p = quick_page();
    p.step_frames(90.0, 16.0).unwrap();
    p.hide(0.0).unwrap();
    p.step_frames(50.0, 16.0).unwrap(); // 0.8 s < 1.5 s
    p.show(0.0).unwrap();
    p.step_frames(120.0, 16.0).unwrap();
    assert_eq!(p.leaves_and_rejoins(), (0, 0));
    let ps = finish_clean(&mut p);
    assert!(p.session(1).departed(0).is_none());
    assert!(
        ps[1]["stalls"].as_u64().unwrap() > 0,
        "player 2 waited for player 1"
    );
}

#[test]
fn the_timeout_is_checked() {
    let mut p = page(120, 0, 0);
    assert!(p.set_disconnect_after(29.0).is_err());
    assert!(p.set_disconnect_after(3001.0).is_err());
    assert!(p.set_disconnect_after(1.5).is_err());
    assert_eq!(p.state_json()["disconnectAfter"], 300);
    p.set_disconnect_after(60.0).unwrap();
    assert_eq!(p.state_json()["disconnectAfter"], 60);
}
