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

/// Where a run's per-tick inputs come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputPlan {
    /// The sim's scripted input ([`CatalogSim::scripted_input`]) for every tick.
    Scripted,
    /// Inputs drawn by [`CatalogSim::random_input`] from a [`Pcg32`] seeded
    /// with this value (stream 0).
    Random(u64),
    /// The bytes of an inputs file: a JSON array, one element per tick
    /// (see [`parse_inputs`]); ticks past its end get the default input.
    Json(Vec<u8>),
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
pub fn parse_inputs<S: CatalogSim>(bytes: &[u8]) -> Result<Vec<S::Input>, InputsError> {
    let mut out = Vec::new();
    for_each_element(bytes, |index, value| {
        let input = S::json_input(value).map_err(|expected| InputsError::Element {
            index,
            expected,
            found: shorten(&value.to_string()),
        })?;
        out.push(input);
        Ok(())
    })?;
    Ok(out)
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

/// The endless per-tick inputs of an [`InputPlan`] for sim `S`.
#[derive(Debug)]
pub(crate) enum PlanInputs<S: CatalogSim> {
    Scripted(u64),
    Random(Pcg32),
    Listed(alloc::vec::IntoIter<S::Input>),
}

impl<S: CatalogSim> PlanInputs<S> {
    /// The inputs of `plan`; a JSON plan is parsed here, in full, before
    /// anything runs.
    pub(crate) fn new(plan: &InputPlan) -> Result<PlanInputs<S>, InputsError> {
        Ok(match plan {
            InputPlan::Scripted => PlanInputs::Scripted(0),
            InputPlan::Random(seed) => PlanInputs::Random(Pcg32::new(*seed, 0)),
            InputPlan::Json(bytes) => PlanInputs::Listed(parse_inputs::<S>(bytes)?.into_iter()),
        })
    }

    /// The next tick's input.
    pub(crate) fn next_input(&mut self) -> S::Input {
        match self {
            PlanInputs::Scripted(t) => {
                let i = S::scripted_input(*t);
                *t = t.saturating_add(1);
                i
            }
            PlanInputs::Random(rng) => S::random_input(rng),
            PlanInputs::Listed(it) => it.next().unwrap_or_default(),
        }
    }
}

impl<S: CatalogSim> Iterator for PlanInputs<S> {
    type Item = S::Input;
    fn next(&mut self) -> Option<S::Input> {
        Some(self.next_input())
    }
}
