//! Which player a state field belongs to, by its name alone.
//!
//! `verify` has one recording and no second input stream to compare with,
//! so when the re-simulated state differs it can name the tick and the
//! fields, but not who pressed what. A sim can still say which fields are a
//! player's own by naming them after a convention, and the tools then name
//! the player too. The rule is generic (the catalog knows no sim's fields)
//! and documented in `docs/replay-format.md` ("Which player a field
//! belongs to"):
//!
//! A field belongs to player `p` when its name is one of the prefixes
//! `player`, `hero` or `p`, then `p` in decimal without leading zeros, then
//! the end of the name or a character that is not a digit, and `p` is a slot
//! of the sim (below its player count). So `hero1.x`, `p0`, `p1.paddle` and
//! `player2Score` belong to players 1, 0, 1 and 2; `enemyX`, `wave2`,
//! `p01` and `hero7.x` (in a 4-player sim) belong to nobody. Fields that belong
//! to nobody never name a player.

use alloc::vec::Vec;

/// The prefixes of a player's own fields, longest first (so `player1` is
/// not read as `p` followed by `layer1`, which would not match anyway).
pub const PLAYER_FIELD_PREFIXES: [&str; 3] = ["player", "hero", "p"];

/// The player slot the field `name` belongs to in a sim of `players`
/// players, by the rule of this module; `None` for a shared field.
///
/// ```
/// use tickwise_catalog::field_player;
///
/// assert_eq!(field_player("hero1.x", 2), Some(1));
/// assert_eq!(field_player("p0", 2), Some(0));
/// assert_eq!(field_player("player3Score", 4), Some(3));
/// assert_eq!(field_player("hero2.x", 2), None); // not a slot of a 2-player sim
/// assert_eq!(field_player("enemyX", 2), None);
/// assert_eq!(field_player("wave1", 2), None); // not a player prefix
/// assert_eq!(field_player("p01", 2), None); // a leading zero
/// assert_eq!(field_player("p", 2), None); // no number
/// ```
#[must_use]
pub fn field_player(name: &str, players: usize) -> Option<usize> {
    PLAYER_FIELD_PREFIXES.iter().find_map(|prefix| {
        let rest = name.strip_prefix(prefix)?;
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let number = &rest[..digits];
        if number.is_empty() || (number.len() > 1 && number.starts_with('0')) {
            return None;
        }
        number.parse::<usize>().ok().filter(|&p| p < players)
    })
}

/// The players whose own fields are among `fields`, in slot order, each
/// once (empty when every field is shared).
///
/// ```
/// use tickwise_catalog::field_players;
///
/// let fields = ["hero1.x", "enemyX", "hero1.y", "hero0.hp"];
/// assert_eq!(field_players(fields, 2), [0, 1]);
/// assert!(field_players(["enemyX", "kills"], 2).is_empty());
/// ```
#[must_use]
pub fn field_players<S: AsRef<str>>(
    fields: impl IntoIterator<Item = S>,
    players: usize,
) -> Vec<usize> {
    let mut out: Vec<usize> = fields
        .into_iter()
        .filter_map(|f| field_player(f.as_ref(), players))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}
