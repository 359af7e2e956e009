//! Type conversions for the `#[wasm_bindgen]` classes that
//! [`wasm_page!`](crate::wasm_page) writes: numbers cross as `f64`, structured
//! results as JSON text (the page parses them), errors as JS `Error`s carrying
//! the Rust message. Public because the macro's expansion, in the page's own
//! crate, calls them.

use serde_json::json;
use tickwise::TimeError;
use wasm_bindgen::JsError;

use crate::lifecycle::VisibilityOutcome;

/// A Rust error as a JS `Error` with its message.
pub fn js_err(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

/// A count as a JS number (exact below 2^53, which ticks and frames never reach).
#[must_use]
#[allow(
    clippy::cast_precision_loss,
    reason = "ticks stay far below 2^53, where f64 is exact"
)]
pub const fn num(v: u64) -> f64 {
    v as f64
}

/// A visibility outcome as the page's JSON: `{"outcome": ..., "resume": ...}`,
/// with `"rejected"` for a refused browser time.
#[must_use]
pub fn visibility_json(out: Result<VisibilityOutcome, TimeError>) -> String {
    out.map_or_else(
        |_| json!({ "outcome": "rejected", "resume": null }).to_string(),
        |o| o.to_json().to_string(),
    )
}
