//! The lab's text report: a detailed table, a legend, the verdicts.

use core::fmt::Write as _;

use crate::experiment::{Cell, LabReport, RATE_TOLERANCE, StrategySummary, StrategyVerdict};
use crate::machine::{Profile, ms};
use crate::strategy::Design;

/// Column alignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Align {
    Left,
    Right,
}

/// A plain-text table with columns sized to their content.
#[derive(Debug, Default)]
struct Table {
    headers: Vec<(&'static str, Align)>,
    rows: Vec<Option<Vec<String>>>,
}

impl Table {
    fn new(headers: &[(&'static str, Align)]) -> Table {
        Table {
            headers: headers.to_vec(),
            rows: Vec::new(),
        }
    }

    fn row(&mut self, cells: Vec<String>) {
        self.rows.push(Some(cells));
    }

    fn gap(&mut self) {
        self.rows.push(None);
    }

    fn render(&self, out: &mut String) {
        let mut widths: Vec<usize> = self.headers.iter().map(|(h, _)| h.len()).collect();
        for row in self.rows.iter().flatten() {
            for (w, c) in widths.iter_mut().zip(row) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |out: &mut String, cells: &mut dyn Iterator<Item = &str>| {
            let mut text = String::new();
            for (i, cell) in cells.enumerate() {
                let (w, align) = (widths[i], self.headers[i].1);
                if i > 0 {
                    text.push_str("  ");
                }
                let pad = w.saturating_sub(cell.chars().count());
                if align == Align::Right {
                    text.push_str(&" ".repeat(pad));
                    text.push_str(cell);
                } else {
                    text.push_str(cell);
                    text.push_str(&" ".repeat(pad));
                }
            }
            out.push_str(text.trim_end());
            out.push('\n');
        };
        line(out, &mut self.headers.iter().map(|(h, _)| *h));
        for row in &self.rows {
            match row {
                Some(cells) => line(out, &mut cells.iter().map(String::as_str)),
                None => out.push('\n'),
            }
        }
    }
}

fn pct(x: f64) -> String {
    format!("{:.0}", x * 100.0)
}

/// A duration in ns as a short human string: `16.7 ms`, `2.05 s`.
#[must_use]
pub fn human_ns(ns: u64) -> String {
    let m = ms(ns);
    if m >= 1000.0 {
        format!("{:.2} s", m / 1000.0)
    } else if m >= 100.0 {
        format!("{m:.0} ms")
    } else {
        format!("{m:.1} ms")
    }
}

fn cell_row(c: &Cell) -> Vec<String> {
    let frame = c.frame_time.map_or_else(
        || "-".to_owned(),
        |f| format!("{:.1}/{:.1}/{:.1}", ms(f.p50), ms(f.p95), ms(f.p99)),
    );
    let alpha = c.alpha.map_or_else(
        || "-".to_owned(),
        |a| format!("{:.2}/{:.2}/{:.2}", a.p10, a.p50, a.p90),
    );
    let world = c.probe.map_or_else(
        || "not reached".to_owned(),
        |p| format!("#{:08x}", p.checksum >> 32),
    );
    vec![
        c.strategy.design.name().to_owned(),
        c.strategy.guards_label().to_owned(),
        c.profile.name().to_owned(),
        c.frames.to_string(),
        format!("{:.3}", c.real_s),
        format!("{:.3}", c.sim_s),
        c.updates.to_string(),
        format!("{:.3}", c.sim_per_real),
        format!("{:.3}", c.thrown_away_s),
        frame,
        format!(
            "{}/{}/{}",
            pct(c.steps_share[0]),
            pct(c.steps_share[1]),
            pct(c.steps_share[2])
        ),
        alpha,
        format!("{:.1}", c.lag_px),
        format!("{:.2}", c.judder_px),
        world,
    ]
}

fn summary_row(s: &StrategySummary) -> Vec<String> {
    let mut row = vec![
        s.strategy.design.name().to_owned(),
        s.strategy.guards_label().to_owned(),
    ];
    for p in Profile::ALL.iter().filter(|p| !p.is_fault()) {
        let r = s.rates.iter().find(|(q, _)| q == p).map(|r| r.1);
        row.push(r.map_or_else(|| "-".to_owned(), |r| format!("{r:.3}")));
    }
    row.push(if s.world_same { "same" } else { "DIFFERS" }.to_owned());
    row.push(
        s.stalls_thrown_s
            .map_or_else(|| "-".to_owned(), |t| format!("{t:.2} s")),
    );
    row.push(match (s.overload_max_frame_ns, s.overload_spiral) {
        (Some(max), Some(true)) => format!("{} SPIRAL", human_ns(max)),
        (Some(max), _) => format!("{} bounded", human_ns(max)),
        _ => "-".to_owned(),
    });
    row.push(match &s.verdict {
        StrategyVerdict::Pass if s.overload_spiral == Some(true) => {
            "PASS on normal machines, but spirals when overloaded: needs the guards".to_owned()
        }
        StrategyVerdict::Pass => "PASS".to_owned(),
        StrategyVerdict::Fail(reasons) => format!("FAIL: {}", reasons.join("; ")),
    });
    row
}

/// The whole text report: machines and designs, the detailed table, the
/// legend, the per-design verdicts and a closing verdict line.
#[must_use]
pub fn render(report: &LabReport) -> String {
    let st = &report.settings;
    let probe_s = st.probe_ns() as f64 / 1e9;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "tickwise lab: {} loop strategies x {} simulated machines, {} s of real time each, {} Hz ticks, seed {}",
        report.summaries.len(),
        Profile::ALL.len(),
        st.seconds(),
        st.tick_hz(),
        st.seed()
    );
    out.push_str("\nMachines\n");
    for p in Profile::ALL {
        let _ = writeln!(out, "  {:<11} {}", p.name(), p.describe());
    }
    out.push_str("Designs (accumulators with death-spiral guards on = step cap 8 + 250 ms frame clamp, off = neither)\n");
    for d in Design::ALL {
        let _ = writeln!(out, "  {:<13} {}", d.name(), d.describe());
    }
    out.push('\n');

    let world_header: &'static str = "world";
    let mut t = Table::new(&[
        ("design", Align::Left),
        ("guards", Align::Left),
        ("machine", Align::Left),
        ("frames", Align::Right),
        ("real s", Align::Right),
        ("sim s", Align::Right),
        ("updates", Align::Right),
        ("sim/real", Align::Right),
        ("thrown s", Align::Right),
        ("frame ms p50/95/99", Align::Right),
        ("steps 0/1/2+ %", Align::Right),
        ("alpha p10/50/90", Align::Right),
        ("lag px", Align::Right),
        ("judder px", Align::Right),
        (world_header, Align::Left),
    ]);
    let mut last = None;
    for c in &report.cells {
        if last.is_some_and(|s| s != c.strategy) {
            t.gap();
        }
        last = Some(c.strategy);
        t.row(cell_row(c));
    }
    t.render(&mut out);

    let _ = write!(
        out,
        "\nLegend\n\
         \x20 sim/real   sim seconds per real second; 1.000 means the world keeps real time\n\
         \x20 thrown s   time the clock threw away (frame clamp + step cap), never simulated\n\
         \x20 frame ms   measured frame time, nearest-rank percentiles\n\
         \x20 steps      share of frames that ran 0 / 1 / 2+ updates\n\
         \x20 alpha      interpolation factor after each frame (accumulators only)\n\
         \x20 lag px     how far the drawn runner (600 px/s) trails its ideal position, on average\n\
         \x20 judder px  std dev of the frame-to-frame change of that error: the visible stutter\n\
         \x20 world      checksum of the world (runner + bouncing ball) at sim time {probe_s} s;\n\
         \x20            the same checksum on every machine means the same world\n\
         \nPass condition, per design: on every normal machine ({normal}) sim/real is 1.000 +- {tol:.0} %\n\
         (so it does not depend on the machine) AND the world at sim {probe_s} s is bit-identical.\n\
         stalls and overloaded are fault injection: they show what the guards cost (thrown time)\n\
         and what they prevent (the death spiral: frame times that keep growing).\n\n",
        normal = Profile::ALL
            .iter()
            .filter(|p| !p.is_fault())
            .map(|p| p.name())
            .collect::<Vec<_>>()
            .join(", "),
        tol = RATE_TOLERANCE * 100.0,
    );

    let mut v = Table::new(&[
        ("design", Align::Left),
        ("guards", Align::Left),
        ("144hz", Align::Right),
        ("60hz", Align::Right),
        ("30hz", Align::Right),
        ("jittery", Align::Right),
        ("world", Align::Left),
        ("stalls thrown", Align::Right),
        ("overloaded max frame", Align::Right),
        ("verdict", Align::Left),
    ]);
    for s in &report.summaries {
        v.row(summary_row(s));
    }
    out.push_str("Sim seconds per real second, and verdicts\n");
    v.render(&mut out);
    out.push('\n');
    out.push_str(&verdict_line(report));
    out.push('\n');
    out
}

/// The closing line: how many designs passed and what the fault runs showed.
#[must_use]
pub fn verdict_line(report: &LabReport) -> String {
    let total = report.summaries.len();
    let passed = report.passed();
    // Strategies by their full label: a design's guarded and unguarded
    // variants can get different verdicts, and naming only the design put
    // `accum` in both lists.
    let names = |pass: bool| {
        let v: Vec<String> = report
            .summaries
            .iter()
            .filter(|s| s.verdict.passed() == pass)
            .map(|s| s.strategy.label())
            .collect();
        if v.is_empty() {
            "none".to_owned()
        } else {
            v.join(", ")
        }
    };
    let max_frame = |guards: bool| {
        report
            .summaries
            .iter()
            .filter(|s| s.strategy.design.has_guards() && s.strategy.guards == guards)
            .filter_map(|s| s.overload_max_frame_ns)
            .max()
            .map_or_else(|| "-".to_owned(), human_ns)
    };
    let unmet = report.unmet_expectations();
    let mut line = format!(
        "Verdict: {passed} of {total} strategies pass (pass: {}; fail: {}). Overloaded machine: \
         longest frame {} without guards, {} with them.",
        names(true),
        names(false),
        max_frame(false),
        max_frame(true),
    );
    if unmet.is_empty() {
        line.push_str(" As expected: only fixed steps from an accumulator keep the same world at the same speed on every machine, and only the guards stop the spiral.");
    } else {
        let _ = write!(line, " UNEXPECTED: {}.", unmet.join("; "));
    }
    line
}
