//! The lab's pictures, built from the cells' per-frame samples.

use crate::experiment::{Cell, LabReport};
use crate::machine::{Profile, ms};
use crate::strategy::{Design, Strategy, guard_max_steps};
use crate::svg::{Chart, Scale, Series, Style};

/// Most points drawn per series (longer series are thinned evenly).
const MAX_POINTS: usize = 1_500;

fn thin(points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    if points.len() <= MAX_POINTS {
        return points;
    }
    let stride = points.len().div_ceil(MAX_POINTS);
    let last = points.last().copied();
    let mut v: Vec<(f64, f64)> = points.into_iter().step_by(stride).collect();
    if let Some(l) = last
        && v.last() != Some(&l)
    {
        v.push(l);
    }
    v
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

const GUARDED_INTERP: Strategy = Strategy {
    design: Design::Interpolated,
    guards: true,
};

/// One chart and the file name it is written to.
#[derive(Clone, Debug)]
pub struct NamedChart {
    /// File name inside the report folder, e.g. `death-spiral.svg`.
    pub file: String,
    /// What the chart shows, one line (used as the caption in the report).
    pub caption: String,
    /// The chart.
    pub chart: Chart,
}

/// Every chart of the report.
#[must_use]
pub fn all(report: &LabReport) -> Vec<NamedChart> {
    let mut v: Vec<NamedChart> = Profile::ALL
        .iter()
        .map(|&p| sim_vs_real(report, p))
        .collect();
    v.push(frame_times(report));
    v.push(death_spiral(report));
    v.push(jitter_guard(report));
    v.push(interpolation(report));
    v
}

fn sim_vs_real(report: &LabReport, profile: Profile) -> NamedChart {
    let mut chart = Chart::new(
        format!("Sim time vs real time: {profile}"),
        "real time (s)",
        "sim time (s)",
    );
    chart.subtitle = profile.describe().to_owned();
    let end = f64::from(report.settings.seconds());
    chart.x_range = Some((0.0, end));
    let mut ideal = Series::line("ideal: 1 sim s per real s", vec![(0.0, 0.0), (end, end)]);
    ideal.dashed = true;
    chart.series.push(ideal);
    // The six accumulator strategies draw the same line on every machine
    // except where the guards differ, so one of each guard setting is shown.
    let shown = |s: Strategy| !s.design.is_accumulator() || s.design == Design::Interpolated;
    for c in report
        .cells
        .iter()
        .filter(|c| c.profile == profile && shown(c.strategy))
    {
        let pts = c
            .samples
            .iter()
            .map(|s| (secs(s.seen_ns), s.sim_s))
            .collect();
        chart
            .series
            .push(Series::line(c.strategy.label(), thin(pts)));
    }
    NamedChart {
        file: format!("sim-vs-real-{profile}.svg"),
        caption: format!(
            "Sim time against real time on the {profile} machine; a correct loop follows the \
             dashed diagonal. The accumulator designs overlap, so only accum+interp is drawn \
             (guards on and off)."
        ),
        chart,
    }
}

fn frame_times(report: &LabReport) -> NamedChart {
    let mut chart = Chart::new(
        "Frame-time distribution per machine",
        "frame time (ms, log scale)",
        "share of frames at or below",
    );
    chart.subtitle = format!(
        "cumulative distribution of measured frame times, {}",
        GUARDED_INTERP.label()
    );
    chart.x_scale = Scale::Log;
    chart.y_range = Some((0.0, 1.0));
    for p in Profile::ALL {
        let Some(c) = report.cell(GUARDED_INTERP, p) else {
            continue;
        };
        let mut dts: Vec<u64> = c.samples.iter().filter_map(|s| s.dt_ns).collect();
        dts.sort_unstable();
        let n = dts.len() as f64;
        // Start at zero at the shortest frame so a single-valued distribution
        // still draws its vertical step.
        let mut pts: Vec<(f64, f64)> = dts.first().map(|d| (ms(*d), 0.0)).into_iter().collect();
        for (i, d) in dts.iter().enumerate() {
            let point = (ms(*d), (i + 1) as f64 / n);
            match pts.last_mut() {
                Some(last) if last.0 == point.0 && last.1 > 0.0 => *last = point,
                _ => pts.push(point),
            }
        }
        let mut s = Series::line(p.name(), thin(pts));
        s.style = Style::Step;
        chart.series.push(s);
    }
    NamedChart {
        file: "frame-times.svg".to_owned(),
        caption: "Cumulative frame-time distribution on each machine: vsync steps, \
                  jitter around 16.7 ms, the stalls' long tail, the overloaded machine's slow frames."
            .to_owned(),
        chart,
    }
}

fn death_spiral(report: &LabReport) -> NamedChart {
    let mut chart = Chart::new(
        "The death spiral: overloaded machine",
        "real time (s)",
        "frame time (ms, log scale)",
    );
    let step_ms = report.settings.step().as_nanos_floor() as f64 / 1e6;
    let cost_ms = ms(Profile::Overloaded
        .update_cost(report.settings.step())
        .as_nanos());
    chart.subtitle = format!(
        "one update costs {cost_ms:.1} ms of real time, more than the {step_ms:.1} ms step it simulates"
    );
    chart.y_scale = Scale::Log;
    chart
        .reference_lines
        .push((step_ms, format!("one step ({step_ms:.1} ms)")));
    let cap = guard_max_steps(report.settings.step()).get();
    let bound = ms(Profile::Overloaded.render_time().as_nanos()) + f64::from(cap) * cost_ms;
    chart.reference_lines.push((
        bound,
        format!("render + {cap} capped updates ({bound:.0} ms)"),
    ));
    for guards in [false, true] {
        for design in [Design::Accumulator, Design::JitterGuard] {
            let s = Strategy { design, guards };
            let Some(c) = report.cell(s, Profile::Overloaded) else {
                continue;
            };
            let mut series = Series::line(s.label(), frame_time_points(c));
            series.dashed = design == Design::JitterGuard;
            chart.series.push(series);
        }
    }
    NamedChart {
        file: "death-spiral.svg".to_owned(),
        caption: "Frame time on the overloaded machine: without guards every frame owes more \
                  updates than the last and frame times grow without bound; with the step cap \
                  and frame clamp they level off (the excess is thrown away and reported)."
            .to_owned(),
        chart,
    }
}

fn frame_time_points(c: &Cell) -> Vec<(f64, f64)> {
    thin(
        c.samples
            .iter()
            .filter_map(|s| s.dt_ns.map(|d| (secs(s.seen_ns), ms(d))))
            .collect(),
    )
}

fn jitter_guard(report: &LabReport) -> NamedChart {
    let mut chart = Chart::new(
        "The jitter guard: updates per frame on the jittery machine",
        "frame",
        "updates run",
    );
    chart.subtitle =
        "60 Hz ticks on a 60 Hz display whose timestamps carry +-0.5 ms of noise (first 90 frames)"
            .to_owned();
    chart.y_range = Some((-0.2, 2.2));
    for (design, offset) in [(Design::Interpolated, 0.0), (Design::JitterGuard, 0.04)] {
        let s = Strategy {
            design,
            guards: true,
        };
        let Some(c) = report.cell(s, Profile::Jittery) else {
            continue;
        };
        let pts = c
            .samples
            .iter()
            .enumerate()
            .skip(1)
            .take(90)
            .map(|(i, smp)| (i as f64, smp.steps as f64 + offset))
            .collect();
        let mut series = Series::line(s.label(), pts);
        series.style = Style::Step;
        chart.series.push(series);
    }
    NamedChart {
        file: "jitter-guard.svg".to_owned(),
        caption: "Updates per frame on the jittery machine: the plain accumulator alternates \
                  0 and 2 as timestamps straddle the step boundary; the jitter guard runs 1 per frame."
            .to_owned(),
        chart,
    }
}

fn interpolation(report: &LabReport) -> NamedChart {
    let mut chart = Chart::new(
        "What interpolation buys: drawn minus ideal position, 144 Hz machine",
        "real time (s)",
        "drawn - ideal runner position (px)",
    );
    let step_px = crate::world::RUNNER_SPEED_PX_PER_S as f64
        * report.settings.step().as_nanos_floor() as f64
        / 1e9;
    chart.subtitle = format!(
        "the runner moves at {} px/s ({step_px:.1} px per tick); first 0.25 s of the run",
        crate::world::RUNNER_SPEED_PX_PER_S
    );
    chart.y_range = Some((-1.3 * step_px, 0.3 * step_px));
    for design in [Design::Variable, Design::Accumulator, Design::Interpolated] {
        let s = Strategy {
            design,
            guards: design.has_guards(),
        };
        let Some(c) = report.cell(s, Profile::Hz144) else {
            continue;
        };
        let pts = c
            .samples
            .iter()
            .filter(|smp| smp.true_ns <= 250_000_000)
            .map(|smp| (secs(smp.true_ns), smp.error_px))
            .collect();
        let mut series = Series::line(s.label(), pts);
        series.style = Style::Step;
        chart.series.push(series);
    }
    NamedChart {
        file: "interpolation.svg".to_owned(),
        caption: "On-screen error against the ideal continuous motion: drawing the last tick \
                  gives a sawtooth (judder); interpolating gives a constant one-step lag, which \
                  the eye does not see as stutter."
            .to_owned(),
        chart,
    }
}
