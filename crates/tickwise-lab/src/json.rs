//! The lab's machine-readable report.
//!
//! Durations are nanoseconds (integers) unless a key says `_s` (seconds) or
//! `_px` (pixels); per-frame samples are left out (they are in the charts).

use serde_json::{Value, json};

use crate::experiment::{Cell, LabReport, RATE_TOLERANCE, SPIRAL_GROWTH, StrategyVerdict};
use crate::machine::Profile;
use crate::strategy::{Design, Strategy};

/// JSON has no NaN or infinity: map them to `null`.
fn num(x: f64) -> Value {
    if x.is_finite() { json!(x) } else { Value::Null }
}

fn strategy_json(s: Strategy) -> Value {
    json!({
        "design": s.design.name(),
        "guards": if s.design.has_guards() { json!(s.guards) } else { Value::Null },
    })
}

fn cell_json(c: &Cell) -> Value {
    json!({
        "strategy": strategy_json(c.strategy),
        "machine": c.profile.name(),
        "frames": c.frames,
        "real_s": num(c.real_s),
        "sim_s": num(c.sim_s),
        "updates": c.updates,
        "sim_per_real": num(c.sim_per_real),
        "thrown_away_s": num(c.thrown_away_s),
        "frame_time_ns": c.frame_time.map(|f| json!({
            "p50": f.p50, "p95": f.p95, "p99": f.p99, "max": f.max,
        })),
        "steps_share": {
            "zero": num(c.steps_share[0]),
            "one": num(c.steps_share[1]),
            "two_or_more": num(c.steps_share[2]),
        },
        "alpha": c.alpha.map(|a| json!({
            "p10": num(a.p10), "p50": num(a.p50), "p90": num(a.p90),
            "histogram_tenths": a.histogram,
        })),
        "lag_px": num(c.lag_px),
        "judder_px": num(c.judder_px),
        "error_rms_px": num(c.error_rms_px),
        "probe": c.probe.map(|p| json!({
            "sim_ns": p.sim_ns,
            "checksum": format!("{:016x}", p.checksum),
            "ball_um": p.ball_um,
        })),
        "first_half_max_frame_ns": c.first_half_max_ns,
        "second_half_max_frame_ns": c.second_half_max_ns,
        "spiral": c.spiral,
        "truncated": c.truncated,
    })
}

/// The report as a JSON value.
#[must_use]
pub fn to_json(report: &LabReport) -> Value {
    let st = &report.settings;
    let summaries: Vec<Value> = report
        .summaries
        .iter()
        .map(|s| {
            json!({
                "strategy": strategy_json(s.strategy),
                "sim_per_real": s.rates.iter().map(|(p, r)| (p.name().to_owned(), num(*r))).collect::<serde_json::Map<_, _>>(),
                "rate_spread": num(s.rate_spread),
                "rate_ok": s.rate_ok,
                "world_same": s.world_same,
                "stalls_thrown_away_s": s.stalls_thrown_s.map(num),
                "stalls_sim_per_real": s.stalls_rate.map(num),
                "overloaded_max_frame_ns": s.overload_max_frame_ns,
                "overloaded_spiral": s.overload_spiral,
                "pass": s.verdict.passed(),
                "reasons": match &s.verdict {
                    StrategyVerdict::Pass => Vec::new(),
                    StrategyVerdict::Fail(r) => r.clone(),
                },
            })
        })
        .collect();
    let unmet = report.unmet_expectations();
    json!({
        "settings": {
            "seconds": st.seconds(),
            "seed": st.seed(),
            "tick_hz": st.tick_hz(),
            "step_ns": { "num": st.step().numerator(), "den": st.step().denominator() },
            "probe_sim_ns": st.probe_ns(),
            "rate_tolerance": RATE_TOLERANCE,
            "spiral_growth": SPIRAL_GROWTH,
        },
        "machines": Profile::ALL.iter().map(|p| json!({
            "name": p.name(), "description": p.describe(), "fault": p.is_fault(),
        })).collect::<Vec<_>>(),
        "designs": Design::ALL.iter().map(|d| json!({
            "name": d.name(), "description": d.describe(), "has_guards": d.has_guards(),
        })).collect::<Vec<_>>(),
        "cells": report.cells.iter().map(cell_json).collect::<Vec<_>>(),
        "strategies": summaries,
        "passed": report.passed(),
        "expected_outcome": unmet.is_empty(),
        "unmet_expectations": unmet,
    })
}
