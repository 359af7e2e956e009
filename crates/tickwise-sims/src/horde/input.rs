//! How a [`TickInput`] moves the player.
//!
//! * **Stick:** `axes[0]` is x (right positive) and `axes[1]` is y (down
//!   positive, screen convention), each `-32767..=32767` (`-32768` reads as
//!   `-32767`). A vector longer than 32767 (octagonal length) is scaled back
//!   to 32767, so a diagonal is never faster than a straight line.
//! * **Buttons,** used only when both axes are zero: [`UP`], [`DOWN`],
//!   [`LEFT`], [`RIGHT`] held at the end of the tick (buttons 0 to 3; opposite
//!   buttons cancel). A diagonal is `(±23170, ±23170)`, 32767/√2.
//!
//! The player's velocity is `stick · playerSpeed / 32767` sub-pixels per
//! tick, truncated toward zero. Other buttons and axes are ignored.

use tickwise::{Button, Buttons, TickInput};

use super::fixed::oct_len;

/// The largest stick value.
pub const STICK_MAX: i32 = 32_767;
/// A digital diagonal's component: ⌊32767/√2⌋.
const DIAGONAL: i32 = 23_170;

const fn button(i: u8) -> Button {
    match Button::new(i) {
        Some(b) => b,
        None => unreachable!(),
    }
}

/// Move up (button 0).
pub const UP: Button = button(0);
/// Move down (button 1).
pub const DOWN: Button = button(1);
/// Move left (button 2).
pub const LEFT: Button = button(2);
/// Move right (button 3).
pub const RIGHT: Button = button(3);

/// The stick vector a tick's input means, each component in
/// `-32767..=32767` and its octagonal length at most 32767.
#[must_use]
pub fn move_vector(input: &TickInput) -> (i32, i32) {
    let (ax, ay) = (
        i32::from(input.axes[0]).max(-STICK_MAX),
        i32::from(input.axes[1]).max(-STICK_MAX),
    );
    if ax != 0 || ay != 0 {
        let len = oct_len(i64::from(ax), i64::from(ay));
        if len > STICK_MAX as u64 {
            // len <= 1.375 * 32767, so both products fit in i64 easily.
            let scale = |v: i32| (i64::from(v) * i64::from(STICK_MAX) / len as i64) as i32;
            return (scale(ax), scale(ay));
        }
        return (ax, ay);
    }
    let axis =
        |neg: Button, pos: Button| i32::from(input.is_held(pos)) - i32::from(input.is_held(neg));
    let (dx, dy) = (axis(LEFT, RIGHT), axis(UP, DOWN));
    let unit = if dx != 0 && dy != 0 {
        DIAGONAL
    } else {
        STICK_MAX
    };
    (dx * unit, dy * unit)
}

/// The horde's scripted input for `tick`, a square walk used by
/// `tickwise horde`, `budget`, `--inputs scripted`, the benches and the
/// tests: the player holds right, down, left, up for 90 ticks each, with the
/// pressed and released edges a keyboard would give.
#[must_use]
pub fn scripted_input(tick: u64) -> TickInput {
    const SIDES: [Button; 4] = [RIGHT, DOWN, LEFT, UP];
    let phase = (tick / 90) % 4;
    let held = SIDES[phase as usize];
    let edge = tick.is_multiple_of(90);
    let prev = SIDES[((phase + 3) % 4) as usize];
    TickInput {
        held: Buttons::NONE.with(held),
        pressed: if edge {
            Buttons::NONE.with(held)
        } else {
            Buttons::NONE
        },
        released: if edge && tick > 0 {
            Buttons::NONE.with(prev)
        } else {
            Buttons::NONE
        },
        axes: [0; tickwise::AXES],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(bs: &[Button]) -> TickInput {
        TickInput {
            held: bs.iter().fold(Buttons::NONE, |s, &b| s.with(b)),
            ..TickInput::default()
        }
    }

    #[test]
    fn buttons_by_hand() {
        assert_eq!(move_vector(&TickInput::default()), (0, 0));
        assert_eq!(move_vector(&held(&[RIGHT])), (32_767, 0));
        assert_eq!(move_vector(&held(&[UP])), (0, -32_767));
        assert_eq!(move_vector(&held(&[UP, LEFT])), (-23_170, -23_170));
        assert_eq!(move_vector(&held(&[LEFT, RIGHT, DOWN])), (0, 32_767));
    }

    #[test]
    fn stick_wins_and_is_capped() {
        let mut t = held(&[RIGHT]);
        t.axes = [-100, 50, 0, 0];
        assert_eq!(move_vector(&t), (-100, 50));
        // Full diagonal: oct = 32767 + 12287 = 45054; 32767*32767/45054 = 23830.9.
        t.axes = [32_767, 32_767, 0, 0];
        assert_eq!(move_vector(&t), (23_830, 23_830));
        t.axes = [i16::MIN, 0, 0, 0];
        assert_eq!(move_vector(&t), (-32_767, 0));
    }

    #[test]
    fn demo_walks_a_square() {
        assert_eq!(move_vector(&scripted_input(0)), (32_767, 0));
        assert!(scripted_input(0).was_pressed(RIGHT));
        assert_eq!(move_vector(&scripted_input(90)), (0, 32_767));
        assert!(scripted_input(90).was_released(RIGHT) && scripted_input(90).was_pressed(DOWN));
        assert_eq!(move_vector(&scripted_input(200)), (-32_767, 0));
        assert_eq!(move_vector(&scripted_input(359)), (0, -32_767));
        assert_eq!(move_vector(&scripted_input(360)), (32_767, 0));
    }
}
