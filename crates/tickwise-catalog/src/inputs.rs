//! Where a run's inputs come from, and the one reader of inputs files.
//!
//! Every tool that accepts an inputs file (record, compare, sync-test,
//! budget, and the CLI's `script`) goes through [`parse_inputs`], so there is
//! one format, one byte limit and one set of error messages.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::Value;
use tickwise::Pcg32;

use crate::error::InputsError;
use crate::sim::CatalogSim;

/// The largest inputs file accepted, in bytes (16 MiB).
///
/// Elements are decoded one at a time, so memory is bounded by the decoded
/// inputs themselves, at most one per two bytes of file.
pub const MAX_INPUTS_BYTES: u64 = 16 * 1024 * 1024;

/// Where a run's per-tick inputs come from, for every player.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputPlan {
    /// The sim's scripted input for every tick: player `p` gets
    /// [`CatalogSim::scripted_player_input`]`(p, tick)` (by default the
    /// same [`CatalogSim::scripted_input`] for every player).
    Scripted,
    /// Inputs drawn by [`CatalogSim::random_input`], player `p` from its own
    /// [`Pcg32`] seeded with this value on stream `p` (so player 0's inputs
    /// are the one-player run's).
    Random(u64),
    /// The bytes of an inputs file: a JSON array of one array per player,
    /// one element per tick (see [`parse_inputs`]); ticks past an array's
    /// end get the absent input.
    Json(Vec<u8>),
    /// One plan per player, in slot order (`netplay --inputs` given once per
    /// player); players past the list get the absent input. A JSON plan
    /// inside is one player's: a flat array (or an array holding one array).
    PerPlayer(Vec<InputPlan>),
}

/// Reads an inputs file: a JSON array whose element `i` is the input of
/// tick `i`, each decoded by [`CatalogSim::json_input`].
///
/// The array is walked element by element (each element is parsed on its
/// own), so a large file never exists as one big JSON tree in memory.
///
/// # Errors
///
/// [`InputsError::TooLarge`] above [`MAX_INPUTS_BYTES`],
/// [`InputsError::NotJson`] for malformed JSON (with the byte offset),
/// [`InputsError::NotAnArray`], and [`InputsError::Element`] naming the first
/// element the sim refuses.
pub fn parse_inputs<S: CatalogSim>(
    bytes: &[u8],
    players: usize,
) -> Result<Vec<Vec<S::Input>>, InputsError> {
    // The per-player form: every element of the top-level array is an array.
    let mut nested = None::<bool>;
    let mut out: Vec<Vec<S::Input>> = Vec::new();
    let mut flat: Vec<S::Input> = Vec::new();
    for_each_element(bytes, |index, value| {
        let is_array = value.is_array();
        let nested = *nested.get_or_insert(is_array && (players > 1 || index == 0));
        if nested {
            let Value::Array(items) = value else {
                return Err(InputsError::NotAnArray);
            };
            let player = usize::try_from(index).unwrap_or(usize::MAX);
            if player >= players {
                return Err(InputsError::Players {
                    found: player + 1,
                    expected: players,
                });
            }
            let mut stream = Vec::with_capacity(items.len());
            for (i, v) in items.iter().enumerate() {
                stream.push(element::<S>(i as u64, v, Some(player))?);
            }
            out.push(stream);
        } else {
            if players > 1 {
                return Err(InputsError::NotAnArray);
            }
            flat.push(element::<S>(index, value, None)?);
        }
        Ok(())
    })?;
    match nested {
        Some(true) if out.len() != players => Err(InputsError::Players {
            found: out.len(),
            expected: players,
        }),
        Some(true) => Ok(out),
        // A flat array (or an empty one) is player 0's; a one-player sim
        // whose inputs are JSON arrays must use the per-player form.
        _ if players <= 1 => Ok(alloc::vec![flat]),
        _ => Err(InputsError::Players {
            found: 0,
            expected: players,
        }),
    }
}

fn element<S: CatalogSim>(
    index: u64,
    value: &Value,
    player: Option<usize>,
) -> Result<S::Input, InputsError> {
    S::json_input(value).map_err(|expected| InputsError::Element {
        index,
        expected,
        found: shorten(&value.to_string()),
        player,
    })
}

/// The longest element text quoted in an error.
const MAX_QUOTED: usize = 80;

fn shorten(text: &str) -> String {
    match text.char_indices().nth(MAX_QUOTED) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.into(),
    }
}

const fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).copied().is_some_and(is_ws) {
        i += 1;
    }
    i
}

fn not_json(message: String) -> InputsError {
    InputsError::NotJson { message }
}

/// Calls `f` with every element of the top-level JSON array in `bytes`.
///
/// Element boundaries are found by a small scanner (commas and the closing
/// bracket outside strings and nested brackets); each element's text is then
/// parsed and validated by `serde_json`, so malformed JSON anywhere is still
/// refused.
fn for_each_element(
    bytes: &[u8],
    mut f: impl FnMut(u64, &Value) -> Result<(), InputsError>,
) -> Result<(), InputsError> {
    if bytes.len() as u64 > MAX_INPUTS_BYTES {
        return Err(InputsError::TooLarge {
            bytes: bytes.len() as u64,
            limit: MAX_INPUTS_BYTES,
        });
    }
    let mut i = skip_ws(bytes, 0);
    if bytes.get(i) != Some(&b'[') {
        return Err(match serde_json::from_slice::<Value>(bytes) {
            Ok(_) => InputsError::NotAnArray,
            Err(e) => not_json(e.to_string()),
        });
    }
    i = skip_ws(bytes, i + 1);
    let mut index = 0u64;
    if bytes.get(i) == Some(&b']') {
        i += 1;
    } else {
        loop {
            let start = i;
            let (mut depth, mut in_string) = (0u32, false);
            while let Some(&b) = bytes.get(i) {
                if in_string {
                    match b {
                        b'\\' => i += 1,
                        b'"' => in_string = false,
                        _ => {}
                    }
                } else {
                    match b {
                        b'"' => in_string = true,
                        b'[' | b'{' => depth += 1,
                        b']' | b'}' if depth == 0 => break,
                        b']' | b'}' => depth -= 1,
                        b',' if depth == 0 => break,
                        _ => {}
                    }
                }
                i += 1;
            }
            let Some(&sep) = bytes.get(i) else {
                return Err(not_json(format!(
                    "the array is not closed (element {index} starts at byte {start})"
                )));
            };
            let value: Value = serde_json::from_slice(&bytes[start..i]).map_err(|e| {
                not_json(format!(
                    "inputs[{index}] (from byte {start}): {e} (columns count from that byte)"
                ))
            })?;
            f(index, &value)?;
            index += 1;
            i += 1;
            match sep {
                b',' => {}
                b']' => break,
                _ => {
                    return Err(not_json(format!(
                        "unexpected {:?} at byte {}",
                        char::from(sep),
                        i - 1
                    )));
                }
            }
        }
    }
    let end = skip_ws(bytes, i);
    if end != bytes.len() {
        return Err(not_json(format!(
            "trailing characters after the array, at byte {end}"
        )));
    }
    Ok(())
}

/// One player's endless per-tick inputs.
#[derive(Debug)]
pub(crate) enum PlayerInputs<S: CatalogSim> {
    Scripted { player: usize, tick: u64 },
    Random(Pcg32),
    Listed(alloc::vec::IntoIter<S::Input>),
    Absent,
}

impl<S: CatalogSim> PlayerInputs<S> {
    /// The next tick's input.
    pub(crate) fn next_input(&mut self) -> S::Input {
        match self {
            PlayerInputs::Scripted { player, tick } => {
                let i = S::scripted_player_input(*player, *tick);
                *tick = tick.saturating_add(1);
                i
            }
            PlayerInputs::Random(rng) => S::random_input(rng),
            PlayerInputs::Listed(it) => it.next().unwrap_or_default(),
            PlayerInputs::Absent => S::Input::default(),
        }
    }
}

/// The endless per-tick inputs of an [`InputPlan`] for sim `S`, every player.
#[derive(Debug)]
pub(crate) struct PlanInputs<S: CatalogSim> {
    players: Vec<PlayerInputs<S>>,
}

impl<S: CatalogSim> PlanInputs<S> {
    /// The inputs of `plan` for `players` players; a JSON plan is parsed
    /// here, in full, before anything runs.
    pub(crate) fn new(plan: &InputPlan, players: usize) -> Result<PlanInputs<S>, InputsError> {
        let players = players.max(1);
        let streams = match plan {
            InputPlan::PerPlayer(plans) => {
                if plans.len() > players {
                    return Err(InputsError::Players {
                        found: plans.len(),
                        expected: players,
                    });
                }
                let mut out = Vec::with_capacity(players);
                for (p, one) in plans.iter().enumerate() {
                    out.push(Self::single(one, p)?);
                }
                out.resize_with(players, || PlayerInputs::Absent);
                out
            }
            InputPlan::Json(bytes) => parse_inputs::<S>(bytes, players)?
                .into_iter()
                .map(|v| PlayerInputs::Listed(v.into_iter()))
                .collect(),
            _ => {
                let mut out = Vec::with_capacity(players);
                for p in 0..players {
                    out.push(Self::single(plan, p)?);
                }
                out
            }
        };
        Ok(PlanInputs { players: streams })
    }

    /// Player `p`'s inputs of a plan meant for one player.
    fn single(plan: &InputPlan, p: usize) -> Result<PlayerInputs<S>, InputsError> {
        Ok(match plan {
            InputPlan::Scripted => PlayerInputs::Scripted { player: p, tick: 0 },
            InputPlan::Random(seed) => PlayerInputs::Random(Pcg32::new(*seed, p as u64)),
            InputPlan::Json(bytes) => {
                let mut v = parse_inputs::<S>(bytes, 1)?;
                PlayerInputs::Listed(v.pop().unwrap_or_default().into_iter())
            }
            InputPlan::PerPlayer(plans) => match plans.get(p) {
                Some(one) => Self::single(one, p)?,
                None => PlayerInputs::Absent,
            },
        })
    }

    /// How many players the plan feeds.
    pub(crate) fn players(&self) -> usize {
        self.players.len()
    }

    /// The next tick's inputs, one per player, into `out`.
    pub(crate) fn fill(&mut self, out: &mut [S::Input]) {
        for (o, p) in out.iter_mut().zip(&mut self.players) {
            *o = p.next_input();
        }
    }

    /// Runs `ticks` ticks, calling `step` with each tick's inputs (one per
    /// player): the same inputs as [`Self::fill`] once a tick.
    ///
    /// Why not `fill` in a loop: with one player (the common recording), the
    /// stream's kind is matched once here, not every tick, so the recording
    /// hot loop is the input expression and the step; the per-tick match,
    /// zip and slice bookkeeping cost about a third of an island `record`.
    pub(crate) fn drive(&mut self, ticks: u64, mut step: impl FnMut(&[S::Input])) {
        if let [one] = self.players.as_mut_slice() {
            let mut buf = [S::Input::default()];
            match one {
                PlayerInputs::Scripted { player, tick } => {
                    let (player, mut t) = (*player, *tick);
                    for _ in 0..ticks {
                        buf[0] = S::scripted_player_input(player, t);
                        t = t.saturating_add(1);
                        step(&buf);
                    }
                    *tick = t;
                }
                PlayerInputs::Random(rng) => {
                    for _ in 0..ticks {
                        buf[0] = S::random_input(rng);
                        step(&buf);
                    }
                }
                PlayerInputs::Listed(it) => {
                    for _ in 0..ticks {
                        buf[0] = it.next().unwrap_or_default();
                        step(&buf);
                    }
                }
                PlayerInputs::Absent => {
                    for _ in 0..ticks {
                        step(&buf);
                    }
                }
            }
            return;
        }
        let mut buf = alloc::vec![S::Input::default(); self.players.len()];
        for _ in 0..ticks {
            self.fill(&mut buf);
            step(&buf);
        }
    }

    /// Player `p`'s stream, taken out (for a peer that owns one player).
    pub(crate) fn take_player(&mut self, p: usize) -> PlayerInputs<S> {
        match self.players.get_mut(p) {
            Some(x) => core::mem::replace(x, PlayerInputs::Absent),
            None => PlayerInputs::Absent,
        }
    }
}

#[cfg(all(test, feature = "builtin"))]
mod tests {
    use super::*;
    use tickwise_sims::island::IslandWorld;

    /// `ticks` ticks of `plan` for `players` players through `drive`, then
    /// `more` ticks through `fill` (the stream must go on where it stopped).
    fn driven(plan: &InputPlan, players: usize, ticks: u64, more: u64) -> Vec<Vec<i32>> {
        let mut inputs = PlanInputs::<IslandWorld>::new(plan, players).unwrap();
        let mut out = Vec::new();
        inputs.drive(ticks, |tick| out.push(tick.to_vec()));
        let mut buf = alloc::vec![0; inputs.players()];
        for _ in 0..more {
            inputs.fill(&mut buf);
            out.push(buf.clone());
        }
        out
    }

    /// The same ticks through `fill` alone (the per-tick reference).
    fn filled(plan: &InputPlan, players: usize, ticks: u64) -> Vec<Vec<i32>> {
        let mut inputs = PlanInputs::<IslandWorld>::new(plan, players).unwrap();
        let mut buf = alloc::vec![0; inputs.players()];
        (0..ticks)
            .map(|_| {
                inputs.fill(&mut buf);
                buf.clone()
            })
            .collect()
    }

    #[test]
    fn drive_gives_the_scripted_pattern_and_resumes_where_it_stopped() {
        // The island's script by hand: 20 ticks of 1, 20 of -1, then 1 again.
        let want: Vec<Vec<i32>> = (0..45)
            .map(|t| alloc::vec![if t % 40 < 20 { 1 } else { -1 }])
            .collect();
        assert_eq!(driven(&InputPlan::Scripted, 1, 30, 15), want);
        assert_eq!(driven(&InputPlan::Scripted, 1, 0, 45), want);
    }

    #[test]
    fn drive_gives_a_listed_plan_then_the_absent_input() {
        let plan = InputPlan::Json(b"[5, -3, 7]".to_vec());
        let want = [5, -3, 7, 0, 0].map(|i| alloc::vec![i]).to_vec();
        assert_eq!(driven(&plan, 1, 4, 1), want);
        // A per-player plan naming nobody: player 0 is absent (input 0).
        let none = InputPlan::PerPlayer(Vec::new());
        assert_eq!(driven(&none, 1, 3, 0), alloc::vec![alloc::vec![0]; 3]);
    }

    #[test]
    fn drive_agrees_with_fill_for_one_player_and_several() {
        let plans = [
            InputPlan::Scripted,
            InputPlan::Random(7),
            InputPlan::Json(b"[[1, 2], [3], [4, 5, 6]]".to_vec()),
            InputPlan::PerPlayer(alloc::vec![InputPlan::Random(3)]),
        ];
        for plan in &plans {
            for players in [1, 3] {
                if players == 1 && matches!(plan, InputPlan::Json(_)) {
                    continue; // three players' arrays
                }
                let want = filled(plan, players, 50);
                assert_eq!(want.len(), 50);
                assert_eq!(driven(plan, players, 20, 30), want, "{plan:?} x{players}");
            }
        }
    }
}
