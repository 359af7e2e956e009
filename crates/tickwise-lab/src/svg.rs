//! A small SVG line-chart writer.
//!
//! Written by hand rather than with a plotting crate: the charts need lines,
//! axes, ticks and a legend, nothing else, and plain SVG text needs no font
//! stack to produce (the viewer renders the text), so the lab builds on a
//! bare machine and its output is byte-for-byte reproducible.

use core::fmt::Write as _;

/// Line colours, one per series in order (repeating).
const PALETTE: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#7f7f7f", "#bcbd22",
];

const WIDTH: f64 = 960.0;
const HEIGHT: f64 = 540.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 250.0;
const TOP: f64 = 64.0;
const BOTTOM: f64 = 60.0;

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Straight segments between points.
    Line,
    /// A staircase: horizontal to the next x, then vertical.
    Step,
}

/// One named series of `(x, y)` points.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// Points in data units.
    pub points: Vec<(f64, f64)>,
    /// Drawing style.
    pub style: Style,
    /// Dashed line.
    pub dashed: bool,
}

impl Series {
    /// A solid line series.
    #[must_use]
    pub fn line(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            points,
            style: Style::Line,
            dashed: false,
        }
    }
}

/// Axis scale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Linear.
    Linear,
    /// Base-10 logarithmic (non-positive values are not drawn).
    Log,
}

/// A line chart.
#[derive(Clone, Debug)]
pub struct Chart {
    /// Title above the plot.
    pub title: String,
    /// A smaller line under the title.
    pub subtitle: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// X scale.
    pub x_scale: Scale,
    /// Y scale.
    pub y_scale: Scale,
    /// Fixed x range, or `None` to fit the data.
    pub x_range: Option<(f64, f64)>,
    /// Fixed y range, or `None` to fit the data.
    pub y_range: Option<(f64, f64)>,
    /// Horizontal reference lines `(y, label)`.
    pub reference_lines: Vec<(f64, String)>,
    /// The series.
    pub series: Vec<Series>,
}

impl Chart {
    /// An empty linear chart.
    #[must_use]
    pub fn new(title: impl Into<String>, x_label: &str, y_label: &str) -> Chart {
        Chart {
            title: title.into(),
            subtitle: String::new(),
            x_label: x_label.to_owned(),
            y_label: y_label.to_owned(),
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            x_range: None,
            y_range: None,
            reference_lines: Vec::new(),
            series: Vec::new(),
        }
    }

    /// Renders the chart as a standalone SVG document.
    #[must_use]
    pub fn render(&self) -> String {
        let xs = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0));
        let ys = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .chain(self.reference_lines.iter().map(|r| r.0));
        let x_axis = Axis::fit(self.x_scale, self.x_range, xs);
        let y_axis = Axis::fit(self.y_scale, self.y_range, ys);
        let (pw, ph) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
        let px = |x: f64| LEFT + x_axis.frac(x) * pw;
        let py = |y: f64| TOP + (1.0 - y_axis.frac(y)) * ph;

        let mut o = String::new();
        let _ = write!(
            o,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
        );
        o.push('\n');
        let _ = writeln!(
            o,
            r#"<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/><defs><clipPath id="plot"><rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}"/></clipPath></defs>"#
        );
        let _ = writeln!(
            o,
            r#"<text x="{LEFT}" y="26" font-size="17" font-weight="bold">{}</text>"#,
            escape(&self.title)
        );
        if !self.subtitle.is_empty() {
            let _ = writeln!(
                o,
                r##"<text x="{LEFT}" y="46" fill="#555">{}</text>"##,
                escape(&self.subtitle)
            );
        }
        // Grid, ticks and tick labels.
        for t in x_axis.ticks() {
            let x = px(t);
            let _ = writeln!(
                o,
                r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#e4e4e4"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                TOP + ph,
                TOP + ph + 18.0,
                tick_label(t)
            );
        }
        for t in y_axis.ticks() {
            let y = py(t);
            let _ = writeln!(
                o,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e4e4e4"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                LEFT + pw,
                LEFT - 6.0,
                y + 4.0,
                tick_label(t)
            );
        }
        let _ = writeln!(
            o,
            r##"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>"##
        );
        let _ = writeln!(
            o,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            LEFT + pw / 2.0,
            HEIGHT - 16.0,
            escape(&self.x_label)
        );
        let _ = writeln!(
            o,
            r#"<text transform="translate(20 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
            TOP + ph / 2.0,
            escape(&self.y_label)
        );
        o.push_str("<g clip-path=\"url(#plot)\">\n");
        for (y, label) in &self.reference_lines {
            if !y_axis.drawable(*y) {
                continue;
            }
            let yy = py(*y);
            let _ = writeln!(
                o,
                r##"<line x1="{LEFT}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" stroke="#444" stroke-dasharray="2 3"/><text x="{:.1}" y="{:.1}" text-anchor="end" fill="#444">{}</text>"##,
                LEFT + pw,
                LEFT + pw - 4.0,
                yy - 4.0,
                escape(label)
            );
        }
        for (i, s) in self.series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let mut pts = String::new();
            let mut prev: Option<(f64, f64)> = None;
            for &(x, y) in &s.points {
                if !x_axis.drawable(x) || !y_axis.drawable(y) {
                    continue;
                }
                let (sx, sy) = (px(x), py(y));
                if s.style == Style::Step
                    && let Some((_, last_y)) = prev
                {
                    let _ = write!(pts, "{sx:.1},{last_y:.1} ");
                }
                let _ = write!(pts, "{sx:.1},{sy:.1} ");
                prev = Some((sx, sy));
            }
            let dash = if s.dashed {
                r#" stroke-dasharray="6 4""#
            } else {
                ""
            };
            let _ = writeln!(
                o,
                r#"<polyline fill="none" stroke="{color}" stroke-width="1.6"{dash} points="{}"/>"#,
                pts.trim_end()
            );
        }
        o.push_str("</g>\n");
        // Legend.
        for (i, s) in self.series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let y = TOP + 10.0 + 20.0 * i as f64;
            let x = LEFT + pw + 16.0;
            let dash = if s.dashed {
                r#" stroke-dasharray="6 4""#
            } else {
                ""
            };
            let _ = writeln!(
                o,
                r#"<line x1="{x:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{color}" stroke-width="2.5"{dash}/><text x="{:.1}" y="{:.1}">{}</text>"#,
                x + 22.0,
                x + 28.0,
                y + 4.0,
                escape(&s.name)
            );
        }
        o.push_str("</svg>\n");
        o
    }
}

/// One axis: its scale and its range in transformed units.
#[derive(Clone, Copy, Debug)]
struct Axis {
    scale: Scale,
    lo: f64,
    hi: f64,
}

impl Axis {
    fn transform(scale: Scale, v: f64) -> f64 {
        match scale {
            Scale::Linear => v,
            Scale::Log => v.log10(),
        }
    }

    fn fit(scale: Scale, fixed: Option<(f64, f64)>, values: impl Iterator<Item = f64>) -> Axis {
        let usable = |v: &f64| v.is_finite() && (scale == Scale::Linear || *v > 0.0);
        let (mut lo, mut hi) = match fixed {
            Some((a, b)) if usable(&a) && usable(&b) && a < b => (a, b),
            _ => values
                .filter(usable)
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(v), hi.max(v))
                }),
        };
        if !lo.is_finite() || !hi.is_finite() {
            (lo, hi) = if scale == Scale::Log {
                (1.0, 10.0)
            } else {
                (0.0, 1.0)
            };
        }
        let (mut tlo, mut thi) = (Axis::transform(scale, lo), Axis::transform(scale, hi));
        if thi - tlo < 1e-12 {
            tlo -= 0.5;
            thi += 0.5;
        }
        if fixed.is_none() {
            match scale {
                Scale::Linear => {
                    let step = nice_step((thi - tlo) / 6.0);
                    tlo = (tlo / step).floor() * step;
                    thi = (thi / step).ceil() * step;
                }
                Scale::Log => {
                    tlo = tlo.floor();
                    thi = thi.ceil();
                }
            }
        }
        Axis {
            scale,
            lo: tlo,
            hi: thi,
        }
    }

    fn frac(&self, v: f64) -> f64 {
        (Axis::transform(self.scale, v) - self.lo) / (self.hi - self.lo)
    }

    fn drawable(&self, v: f64) -> bool {
        v.is_finite() && (self.scale == Scale::Linear || v > 0.0)
    }

    fn ticks(&self) -> Vec<f64> {
        match self.scale {
            Scale::Linear => {
                let step = nice_step((self.hi - self.lo) / 6.0);
                let first = (self.lo / step).ceil() as i64;
                let last = (self.hi / step).floor() as i64;
                (first..=last).map(|k| k as f64 * step).collect()
            }
            Scale::Log => {
                let decades = (self.hi - self.lo).max(0.0);
                let mults: &[f64] = if decades <= 2.5 {
                    &[1.0, 2.0, 5.0]
                } else {
                    &[1.0]
                };
                let mut v = Vec::new();
                for e in (self.lo.floor() as i32)..=(self.hi.ceil() as i32) {
                    for m in mults {
                        let t = m * 10f64.powi(e);
                        let lt = t.log10();
                        if lt >= self.lo - 1e-9 && lt <= self.hi + 1e-9 {
                            v.push(t);
                        }
                    }
                }
                v
            }
        }
    }
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

fn tick_label(v: f64) -> String {
    if v == 0.0 {
        return "0".to_owned();
    }
    let s = format!("{v:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_owned()
    } else {
        s.to_owned()
    }
}

/// Escapes text for SVG element content.
#[must_use]
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_steps_by_hand() {
        assert_eq!(nice_step(0.3), 0.5);
        assert_eq!(nice_step(1.0), 1.0);
        assert_eq!(nice_step(1.5), 2.0);
        assert_eq!(nice_step(7.0), 10.0);
        assert_eq!(nice_step(f64::NAN), 1.0);
    }

    #[test]
    fn tick_labels_trim_zeros() {
        assert_eq!(tick_label(2.5), "2.5");
        assert_eq!(tick_label(10.0), "10");
        assert_eq!(tick_label(0.001), "0.001");
        assert_eq!(tick_label(-0.0), "0");
    }
}
