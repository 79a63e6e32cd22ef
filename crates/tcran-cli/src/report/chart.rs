//! One plot of the report: a description ([`Chart`]) drawn by `plotters`
//! into an SVG string, and an HTML `<figure>` around it with the legend.
//!
//! The legend is HTML below the plot rather than a box inside it, so it
//! never hides data and can hold many entries. Non-finite values are never
//! drawn (the caller represents "no sample" as a gap).

use super::html::escape;
use plotters::prelude::*;
use std::fmt::Write as _;

/// A colour of the palette: Okabe & Ito's colour-blind-safe set ("Color
/// Universal Design", 2008), told apart with any of the common colour-vision
/// deficiencies; yellow comes last as it is faint on white.
pub type Rgb = (u8, u8, u8);

pub const PALETTE: [Rgb; 8] = [
    (0x00, 0x72, 0xb2), // blue
    (0xd5, 0x5e, 0x00), // vermillion
    (0x00, 0x9e, 0x73), // bluish green
    (0xcc, 0x79, 0xa7), // reddish purple
    (0xe6, 0x9f, 0x00), // orange
    (0x56, 0xb4, 0xe9), // sky blue
    (0x00, 0x00, 0x00), // black
    (0xf0, 0xe4, 0x42), // yellow
];

/// The colour of the `i`-th series.
pub fn color(i: usize) -> Rgb {
    PALETTE[i % PALETTE.len()]
}

const MARKER_COLOR: Rgb = (0x55, 0x55, 0x55);
/// The plot's size in SVG pixels. The page shows it about 560 px wide (two
/// per row), so fonts are sized for that: 15 px tick labels show at about
/// 11 px.
const WIDTH: u32 = 760;
const HEIGHT: u32 = 340;
/// Font sizes (SVG px): tick labels, axis descriptions, title, markers.
const TICK_FONT: u32 = 15;
const AXIS_FONT: u32 = 16;
const TITLE_FONT: u32 = 19;
const SMALL_FONT: u32 = 14;

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Line,
    Dots(Glyph),
    /// A shaded area between two lines: `segments[0]` is the lower edge,
    /// `segments[1]` the upper one (e.g. a confidence band).
    Band,
}

/// An error bar around a point: the x and y intervals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ErrorBar {
    pub x: (f64, f64),
    pub y: (f64, f64),
}

/// A legend entry drawn instead of the series' own (a scatter's legend
/// lists colours and markers apart).
#[derive(Debug, Clone, PartialEq)]
pub struct LegendEntry {
    pub name: String,
    pub color: Rgb,
    pub shape: Shape,
}

/// Point markers, cycled to tell flows apart in scatter plots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Glyph {
    Circle,
    Triangle,
    Square,
    Cross,
}

impl Glyph {
    pub fn nth(i: usize) -> Glyph {
        [Glyph::Circle, Glyph::Triangle, Glyph::Square, Glyph::Cross][i % 4]
    }
    /// The same shape as a character, for the HTML legend.
    fn symbol(self) -> &'static str {
        match self {
            Glyph::Circle => "\u{25cf}",
            Glyph::Triangle => "\u{25b2}",
            Glyph::Square => "\u{25a0}",
            Glyph::Cross => "\u{2715}",
        }
    }
}

/// One named series: one or more line segments (a gap between segments is
/// a stretch without samples), or points.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub color: Rgb,
    pub shape: Shape,
    pub segments: Vec<Vec<(f64, f64)>>,
    /// Dots: an error bar per point (empty: none).
    pub errors: Vec<ErrorBar>,
}

impl Series {
    pub fn line(name: impl Into<String>, color: Rgb, segments: Vec<Vec<(f64, f64)>>) -> Series {
        Series {
            name: name.into(),
            color,
            shape: Shape::Line,
            segments,
            errors: Vec::new(),
        }
    }
    /// The area between `lower` and `upper` (same x values, in order).
    pub fn band(
        name: impl Into<String>,
        color: Rgb,
        lower: Vec<(f64, f64)>,
        upper: Vec<(f64, f64)>,
    ) -> Series {
        Series {
            name: name.into(),
            color,
            shape: Shape::Band,
            segments: vec![lower, upper],
            errors: Vec::new(),
        }
    }
    pub fn dots(name: impl Into<String>, color: Rgb, glyph: Glyph, pts: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            color,
            shape: Shape::Dots(glyph),
            segments: vec![pts],
            errors: Vec::new(),
        }
    }
    /// Every finite point the series draws: its points, and the ends of
    /// its error bars.
    pub fn points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        let bars = self
            .errors
            .iter()
            .zip(self.segments.iter().flatten())
            .flat_map(|(e, (x, y))| [(e.x.0, *y), (e.x.1, *y), (*x, e.y.0), (*x, e.y.1)]);
        self.data_points()
            .chain(bars)
            .filter(|(x, y)| x.is_finite() && y.is_finite())
    }

    /// The series' own points (not its error bars' ends): where a dot
    /// series puts its markers.
    fn data_points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.segments.iter().flatten().copied()
    }

    /// When the series is drawn: lines under markers, and the larger
    /// markers first so that a smaller one at the same place stays
    /// visible on top (a triangle is not hidden under a square).
    fn layer(&self) -> u8 {
        match self.shape {
            Shape::Band => 0,
            Shape::Line => 1,
            Shape::Dots(Glyph::Square) => 2,
            Shape::Dots(Glyph::Circle) => 3,
            Shape::Dots(Glyph::Triangle) => 4,
            Shape::Dots(Glyph::Cross) => 5,
        }
    }
}

/// A plot: title, axis labels with units, series, and vertical markers at
/// the given times (reconfigurations).
#[derive(Debug, Clone)]
pub struct Chart {
    /// What the plot shows (`rlc`, `throughput`, ...), the figure's
    /// `data-plot` attribute.
    pub kind: &'static str,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// Fixed x range (time plots span the whole run); else from the data.
    pub x_range: Option<(f64, f64)>,
    /// The largest value each axis' quantity can take (a percentage's
    /// 100, a fraction's 1): the axis ends there at most, whatever room
    /// around the points it would otherwise leave.
    pub x_max: Option<f64>,
    pub y_max: Option<f64>,
    pub series: Vec<Series>,
    /// Vertical lines: (x, label).
    pub markers: Vec<(f64, String)>,
    /// A sentence under the plot (how the data was binned or thinned).
    pub note: Option<String>,
    /// Logarithmic axes (only positive values are drawn on them).
    pub x_log: bool,
    pub y_log: bool,
    /// Write each dot series' name next to its points (scatter plots
    /// with one point per series).
    pub point_labels: bool,
    /// The legend, when not one entry per series.
    pub legend_entries: Option<Vec<LegendEntry>>,
    /// Where the figure's own SVG and PDF files are, relative to the page
    /// (`figures/<id>`, without extension), for the links under it.
    pub files: Option<String>,
}

/// How many times the largest positive value must exceed the smallest for
/// [`Chart::log_x_if_wide`] / [`Chart::log_y_if_wide`] to switch to a
/// logarithmic axis: two decades (vanilla at seconds, cured variants at
/// milliseconds would otherwise be squashed onto the axis).
pub const LOG_SPAN: f64 = 100.0;

/// Whether the positive finite values span more than [`LOG_SPAN`].
pub fn spans_decades(values: impl Iterator<Item = f64>) -> bool {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    lo.is_finite() && hi / lo > LOG_SPAN
}

/// The largest 1, 2 or 5 times a power of ten at or below `v / 1.1`
/// (`v` > 0): a little room below the smallest value, on a round number.
fn decade_below(v: f64) -> f64 {
    let x = v.max(f64::MIN_POSITIVE) / 1.1;
    let p = 10f64.powf(x.log10().floor());
    [5.0, 2.0, 1.0]
        .into_iter()
        .map(|m| m * p)
        .find(|c| *c <= x)
        .unwrap_or(p)
}

/// An axis tick label: no trailing zeros, at most 3 significant decimals.
fn tick(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    let s = if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        let decimals = (-a.log10().floor()) as usize + 2;
        format!("{v:.decimals$}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

impl Chart {
    pub fn new(kind: &'static str, title: impl Into<String>, x: &str, y: &str) -> Chart {
        Chart {
            kind,
            title: title.into(),
            x_label: x.to_string(),
            y_label: y.to_string(),
            x_range: None,
            x_max: None,
            y_max: None,
            series: Vec::new(),
            markers: Vec::new(),
            note: None,
            x_log: false,
            y_log: false,
            point_labels: false,
            legend_entries: None,
            files: None,
        }
    }

    /// The legend: [`Chart::legend_entries`], or one entry per series
    /// (bands share their line's entry and are left out).
    pub fn legend_list(&self) -> Vec<LegendEntry> {
        self.legend_entries.clone().unwrap_or_else(|| {
            self.series
                .iter()
                .filter(|s| s.shape != Shape::Band)
                .map(|s| LegendEntry {
                    name: s.name.clone(),
                    color: s.color,
                    shape: s.shape,
                })
                .collect()
        })
    }

    /// The axes' ranges, as drawn: `((x0, x1), (y0, y1))`.
    pub fn axis_ranges(&self) -> ((f64, f64), (f64, f64)) {
        self.ranges()
    }

    /// Every point the chart draws on its axes (non-finite values and, on
    /// a log axis, values <= 0 are not drawn).
    pub fn drawn_points(&self) -> Vec<(f64, f64)> {
        self.series
            .iter()
            .flat_map(Series::points)
            .filter(|p| self.drawable(*p))
            .collect()
    }

    /// Logarithmic x axis if its positive values span more than two decades.
    pub fn log_x_if_wide(&mut self) {
        self.x_log = spans_decades(self.series.iter().flat_map(Series::points).map(|p| p.0));
    }

    /// Logarithmic y axis if its positive values span more than two decades.
    pub fn log_y_if_wide(&mut self) {
        self.y_log = spans_decades(self.series.iter().flat_map(Series::points).map(|p| p.1));
    }

    /// The points that can be drawn on the chart's axes.
    fn drawable(&self, (x, y): (f64, f64)) -> bool {
        x.is_finite() && y.is_finite() && (!self.x_log || x > 0.0) && (!self.y_log || y > 0.0)
    }

    fn has_data(&self) -> bool {
        self.series
            .iter()
            .any(|s| s.points().any(|p| self.drawable(p)))
    }

    fn ranges(&self) -> ((f64, f64), (f64, f64)) {
        let pts = || {
            self.series
                .iter()
                .flat_map(Series::points)
                .filter(|p| self.drawable(*p))
        };
        let (mut x0, mut x1) = self.x_range.unwrap_or_else(|| {
            pts().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), (x, _)| {
                (a.min(x), b.max(x))
            })
        });
        if !x0.is_finite() || !x1.is_finite() {
            (x0, x1) = if self.x_log { (1.0, 10.0) } else { (0.0, 1.0) };
        } else if self.x_log {
            // Down to a round number below the smallest value, a tenth
            // of a decade of room above.
            (x0, x1) = (decade_below(x0), x1 * 1.25);
        } else if self.x_range.is_none() {
            // Room around the outermost points, so markers are not cut.
            let pad = 0.05 * (x1 - x0).max(x0.abs() * 0.01).max(1e-9);
            (x0, x1) = (x0 - pad, x1 + pad);
        }
        if let Some(m) = self.x_max {
            x1 = x1.min(m);
        }
        if x1 <= x0 {
            x1 = if self.x_log { x0 * 10.0 } else { x0 + 1.0 };
        }
        let ((x0, x1), (y0, y1)) = self.y_range((x0, x1));
        let y1 = match self.y_max {
            Some(m) if m > y0 => y1.min(m),
            _ => y1,
        };
        ((x0, x1), (y0, y1))
    }

    /// The y range, from the points drawn.
    fn y_range(&self, xs: (f64, f64)) -> ((f64, f64), (f64, f64)) {
        let (x0, x1) = xs;
        let pts = || {
            self.series
                .iter()
                .flat_map(Series::points)
                .filter(|p| self.drawable(*p))
        };
        if self.y_log {
            let (lo, hi) = pts().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), (_, y)| {
                (a.min(y), b.max(y))
            });
            let (lo, hi) = if lo.is_finite() {
                (decade_below(lo), (hi * 1.6).max(lo * 10.0))
            } else {
                (1.0, 10.0)
            };
            return ((x0, x1), (lo, hi));
        }
        let (lo, hi) = pts().fold((0.0f64, f64::NEG_INFINITY), |(a, b), (_, y)| {
            (a.min(y), b.max(y))
        });
        let hi = if hi.is_finite() && hi > lo {
            hi + 0.05 * (hi - lo)
        } else {
            lo + 1.0
        };
        ((x0, x1), (lo, hi))
    }

    /// The plot as an SVG document (plotters' SVG backend).
    pub fn svg(&self) -> Result<String, String> {
        let mut buf = String::new();
        self.draw(&mut buf).map_err(|e| e.to_string())?;
        Ok(buf)
    }

    fn draw(&self, buf: &mut String) -> Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::with_string(buf, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        self.draw_in(&root)?;
        root.present()?;
        Ok(())
    }

    /// The plot as a standalone SVG document for other pages (docs): the
    /// legend and the note are drawn inside the image, below the plot.
    pub fn standalone_svg(&self) -> Result<String, String> {
        let mut buf = String::new();
        self.draw_standalone(&mut buf).map_err(|e| e.to_string())?;
        Ok(buf)
    }

    fn draw_standalone(&self, buf: &mut String) -> Result<(), Box<dyn std::error::Error>> {
        const COLS: usize = 3;
        const ROW: u32 = 22;
        let col_w = (WIDTH - 24) / COLS as u32;
        let entries = self.legend_list();
        let rows = entries.len().div_ceil(COLS) as u32;
        let note_font = SMALL_FONT - 1;
        let note = self
            .note
            .as_deref()
            .map_or(Vec::new(), |n| wrap(n, chars_within(WIDTH - 24, note_font)));
        let note_h = if note.is_empty() {
            0
        } else {
            note.len() as u32 * ROW + 4
        };
        let legend_h = 8 + rows * ROW + note_h;
        let root = SVGBackend::with_string(buf, (WIDTH, HEIGHT + legend_h)).into_drawing_area();
        root.fill(&WHITE)?;
        let (plot, legend) = root.split_vertically(HEIGHT);
        self.draw_in(&plot)?;
        let font = ("sans-serif", SMALL_FONT).into_font();
        for (i, s) in entries.iter().enumerate() {
            let x = 12 + (i % COLS) as i32 * col_w as i32;
            let y = 4 + (i / COLS) as i32 * ROW as i32;
            let c = rgb(s.color);
            let mid = (x + 8, y + 8);
            match s.shape {
                Shape::Line | Shape::Band => {
                    legend.draw(&PathElement::new(
                        vec![(x, y + 8), (x + 16, y + 8)],
                        c.stroke_width(3),
                    ))?;
                }
                Shape::Dots(Glyph::Circle) => legend.draw(&Circle::new(mid, 5, c.filled()))?,
                Shape::Dots(Glyph::Triangle) => {
                    legend.draw(&TriangleMarker::new(mid, 6, c.filled()))?
                }
                Shape::Dots(Glyph::Square) => legend.draw(&Rectangle::new(
                    [(mid.0 - 5, mid.1 - 5), (mid.0 + 5, mid.1 + 5)],
                    c.filled(),
                ))?,
                Shape::Dots(Glyph::Cross) => legend.draw(&Cross::new(mid, 5, c.stroke_width(2)))?,
            }
            let name = shorten(&s.name, col_w as usize / 8 - 3);
            legend.draw(&Text::new(name, (x + 22, y + 1), font.clone()))?;
        }
        for (k, line) in note.into_iter().enumerate() {
            let y = 8 + (rows as usize + k) as i32 * ROW as i32;
            legend.draw(&Text::new(
                line,
                (12, y),
                ("sans-serif", note_font)
                    .into_font()
                    .color(&rgb(MARKER_COLOR)),
            ))?;
        }
        root.present()?;
        Ok(())
    }

    fn draw_in(
        &self,
        root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let ((x0, x1), (y0, y1)) = self.ranges();
        let (xs, ys) = (x0..x1, y0..y1);
        match (self.x_log, self.y_log) {
            (false, false) => self.draw_on(root, xs, ys),
            (true, false) => self.draw_on(root, xs.log_scale(), ys),
            (false, true) => self.draw_on(root, xs, ys.log_scale()),
            (true, true) => self.draw_on(root, xs.log_scale(), ys.log_scale()),
        }
    }

    fn axis_label(&self, label: &str, log: bool) -> String {
        if log {
            format!("{label}, log scale")
        } else {
            label.to_string()
        }
    }

    fn draw_on<X, Y>(
        &self,
        root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
        xs: X,
        ys: Y,
    ) -> Result<(), Box<dyn std::error::Error>>
    where
        X: plotters::coord::ranged1d::AsRangedCoord<Value = f64>,
        Y: plotters::coord::ranged1d::AsRangedCoord<Value = f64>,
        X::CoordDescType: Ranged<ValueType = f64> + plotters::coord::ranged1d::ValueFormatter<f64>,
        Y::CoordDescType: Ranged<ValueType = f64> + plotters::coord::ranged1d::ValueFormatter<f64>,
    {
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, ("sans-serif", TITLE_FONT))
            .margin(14)
            .x_label_area_size(50)
            .y_label_area_size(78)
            .build_cartesian_2d(xs, ys)?;
        let (x0, x1) = {
            let r = chart.x_range();
            (r.start, r.end)
        };
        let (y0, y1) = {
            let r = chart.y_range();
            (r.start, r.end)
        };
        chart
            .configure_mesh()
            .x_desc(self.axis_label(&self.x_label, self.x_log))
            .y_desc(self.axis_label(&self.y_label, self.y_log))
            .x_label_formatter(&|v| tick(*v))
            .y_label_formatter(&|v| tick(*v))
            .max_light_lines(2)
            .light_line_style(RGBColor(0xf0, 0xf0, 0xf0))
            .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
            .x_labels(8)
            .y_labels(7)
            .label_style(("sans-serif", TICK_FONT))
            .axis_desc_style(("sans-serif", AXIS_FONT))
            .draw()?;
        for (x, label) in &self.markers {
            let c = rgb(MARKER_COLOR);
            chart.draw_series(LineSeries::new([(*x, y0), (*x, y1)], c.stroke_width(1)))?;
            chart.draw_series(std::iter::once(Text::new(
                label.clone(),
                (*x, y1),
                ("sans-serif", SMALL_FONT).into_font().color(&c),
            )))?;
        }
        let ok = |p: &(f64, f64)| self.drawable(*p);
        // Bands under everything else.
        for s in self.series.iter().filter(|s| s.shape == Shape::Band) {
            if let [lo, hi] = s.segments.as_slice() {
                let mut poly: Vec<(f64, f64)> = lo.iter().copied().filter(ok).collect();
                poly.extend(hi.iter().rev().copied().filter(ok));
                if poly.len() >= 3 {
                    chart.draw_series(std::iter::once(Polygon::new(
                        poly,
                        rgb(s.color).mix(0.18).filled(),
                    )))?;
                }
            }
        }
        let mut layered: Vec<&Series> = self.series.iter().collect();
        layered.sort_by_key(|s| s.layer());
        for s in layered {
            let c = rgb(s.color);
            for (e, (x, y)) in s.errors.iter().zip(s.segments.iter().flatten()) {
                let bar = c.mix(0.8).stroke_width(2);
                for line in [[(e.x.0, *y), (e.x.1, *y)], [(*x, e.y.0), (*x, e.y.1)]] {
                    if line.iter().all(ok) {
                        chart.draw_series(LineSeries::new(line, bar))?;
                    }
                }
            }
            match s.shape {
                Shape::Band => {}
                Shape::Line => {
                    for seg in &s.segments {
                        // A line needs two points the axes can show (a log
                        // axis drops zeros): one left is a dot.
                        let pts: Vec<_> = seg.iter().copied().filter(ok).collect();
                        if let [p] = pts[..] {
                            chart.draw_series([Circle::new(p, 2, c.filled())])?;
                        } else if pts.len() > 1 {
                            chart.draw_series(LineSeries::new(pts, c.stroke_width(2)))?;
                        }
                    }
                }
                Shape::Dots(g) => {
                    // Slightly see-through, so overlapping points show.
                    let style = c.mix(0.8).filled();
                    let pts = || s.data_points().filter(ok);
                    match g {
                        Glyph::Circle => {
                            chart.draw_series(pts().map(|p| Circle::new(p, 4, style)))?;
                        }
                        Glyph::Triangle => {
                            chart.draw_series(pts().map(|p| TriangleMarker::new(p, 5, style)))?;
                        }
                        Glyph::Square => {
                            chart.draw_series(pts().map(|p| {
                                EmptyElement::at(p) + Rectangle::new([(-4, -4), (4, 4)], style)
                            }))?;
                        }
                        Glyph::Cross => {
                            chart
                                .draw_series(pts().map(|p| Cross::new(p, 4, c.stroke_width(2))))?;
                        }
                    }
                    if self.point_labels {
                        use plotters::style::text_anchor::{HPos, Pos, VPos};
                        let font = ("sans-serif", SMALL_FONT).into_font().color(&c);
                        // Right of the point, but left of it in the right
                        // third, so the label stays inside the image.
                        let share = |x: f64| {
                            if self.x_log {
                                (x / x0).ln() / (x1 / x0).ln()
                            } else {
                                (x - x0) / (x1 - x0)
                            }
                        };
                        chart.draw_series(pts().map(|p| {
                            let (dx, h) = if share(p.0) > 0.67 {
                                (-7, HPos::Right)
                            } else {
                                (7, HPos::Left)
                            };
                            let f = font.clone().pos(Pos::new(h, VPos::Top));
                            EmptyElement::at(p) + Text::new(s.name.clone(), (dx, -6), f)
                        }))?;
                    }
                }
            }
        }
        if !self.has_data() {
            let mid = if self.x_log || self.y_log {
                let m =
                    |a: f64, b: f64, log: bool| if log { (a * b).sqrt() } else { (a + b) / 2.0 };
                (m(x0, x1, self.x_log), m(y0, y1, self.y_log))
            } else {
                ((x0 + x1) / 2.0, (y0 + y1) / 2.0)
            };
            chart.draw_series(std::iter::once(Text::new(
                "no samples",
                mid,
                ("sans-serif", AXIS_FONT)
                    .into_font()
                    .color(&rgb(MARKER_COLOR)),
            )))?;
        }
        Ok(())
    }

    /// The `<figure>`: the SVG, the HTML legend, the note. A plot that
    /// cannot be drawn becomes a message in the figure, not a failed report.
    pub fn figure(&self, id: &str) -> String {
        let body = match self.svg() {
            Ok(svg) => tag_svg(&svg, &self.title),
            Err(e) => format!(
                "<p class=\"plot-error\">cannot draw this plot: {}</p>",
                escape(&e)
            ),
        };
        let mut out = format!(
            "<figure class=\"plot\" id=\"{}\" data-plot=\"{}\">\n{body}\n",
            escape(id),
            self.kind
        );
        out.push_str(&self.legend());
        let files = self.files.as_ref().map(|f| {
            format!(
                " <span class=\"save\">This figure alone: <a href=\"{0}.svg\">SVG</a>, <a href=\"{0}.pdf\">PDF</a>.</span>",
                escape(f)
            )
        });
        if self.note.is_some() || files.is_some() {
            let _ = writeln!(
                out,
                "<figcaption>{}{}</figcaption>",
                escape(self.note.as_deref().unwrap_or("")),
                files.unwrap_or_default()
            );
        }
        out.push_str("</figure>\n");
        out
    }

    fn legend(&self) -> String {
        let mut out = String::from("<ul class=\"legend\">");
        let entries = self.legend_list();
        for s in &entries {
            let symbol = match s.shape {
                Shape::Line | Shape::Band => "\u{2501}",
                Shape::Dots(g) => g.symbol(),
            };
            let _ = write!(
                out,
                "<li><span class=\"swatch\" style=\"color:{}\">{symbol}</span>{}</li>",
                hex(s.color),
                escape(&s.name)
            );
        }
        if !self.markers.is_empty() {
            let _ = write!(
                out,
                "<li><span class=\"swatch\" style=\"color:{}\">\u{2502}</span>reconfiguration (R<i>n</i>, listed below)</li>",
                hex(MARKER_COLOR)
            );
        }
        if entries.is_empty() {
            out.push_str("<li>nothing to show</li>");
        }
        out.push_str("</ul>\n");
        out
    }
}

/// How many characters of `font` px surely fit in `width` px: at most
/// 0.6 em each (DejaVu Sans, the PDFs' face, averages about 0.55 em over
/// text; digits are 0.64 em but come with narrow spaces and dots).
fn chars_within(width: u32, font: u32) -> usize {
    (f64::from(width) / (0.6 * f64::from(font))) as usize
}

/// `text` broken into lines of at most `max` characters, between words
/// (a longer word is cut with an ellipsis).
fn wrap(text: &str, max: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let word = shorten(word, max);
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > max {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// `text` cut to `max` characters, with an ellipsis when cut.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let mut t: String = text.chars().take(max.saturating_sub(1)).collect();
        t.push('\u{2026}');
        t
    }
}

fn rgb(c: Rgb) -> RGBColor {
    RGBColor(c.0, c.1, c.2)
}

/// An SVG document as a one-page PDF (`svg2pdf`; text is converted with
/// the system's fonts, e.g. DejaVu Sans, loaded once into `fonts`).
pub fn svg_to_pdf(
    svg: &str,
    fonts: &std::sync::Arc<svg2pdf::usvg::fontdb::Database>,
) -> Result<Vec<u8>, String> {
    let opt = svg2pdf::usvg::Options {
        fontdb: fonts.clone(),
        ..svg2pdf::usvg::Options::default()
    };
    let tree = svg2pdf::usvg::Tree::from_str(svg, &opt).map_err(|e| e.to_string())?;
    let mut pdf = svg2pdf::to_pdf(
        &tree,
        svg2pdf::ConversionOptions::default(),
        svg2pdf::PageOptions::default(),
    )
    .map_err(|e| e.to_string())?;
    sort_resource_entries(&mut pdf);
    Ok(pdf)
}

/// Puts the entries of every resource sub-dictionary (`/XObject`,
/// `/ExtGState`, `/Font`, ...) of a PDF in byte order, so that the same
/// SVG always gives the same file. `svg2pdf` 0.13 writes them from a
/// `HashMap`, in an order that changes from run to run as soon as a page
/// has two resources of a kind (the scatter's see-through markers are a
/// transparency group each). `pdf-writer` puts each entry on a line of
/// its own, so sorting the lines permutes bytes inside the dictionary:
/// its length, and every offset of the cross-reference table, stay as
/// they are. Streams are skipped (their bytes are not lines).
fn sort_resource_entries(pdf: &mut [u8]) {
    const KINDS: [&[u8]; 6] = [
        b"/XObject <<",
        b"/ExtGState <<",
        b"/Font <<",
        b"/Pattern <<",
        b"/Shading <<",
        b"/ColorSpace <<",
    ];
    let mut at = 0;
    while let Some(len) = pdf[at..].iter().position(|&b| b == b'\n') {
        let line = pdf[at..at + len].trim_ascii();
        let (stream, resources) = (line == b"stream", KINDS.contains(&line));
        at += len + 1;
        if stream {
            match find(&pdf[at..], b"\nendstream") {
                Some(end) => at += end + 1,
                None => return,
            }
        } else if resources {
            // The entries run to the line that closes the dictionary.
            let start = at;
            let mut lines = Vec::new();
            while let Some(len) = pdf[at..].iter().position(|&b| b == b'\n') {
                let entry = &pdf[at..at + len];
                at += len + 1;
                if entry.trim_ascii() == b">>" {
                    break;
                }
                lines.push(entry.to_vec());
            }
            lines.sort();
            let mut w = start;
            for l in lines {
                pdf[w..w + l.len()].copy_from_slice(&l);
                pdf[w + l.len()] = b'\n';
                w += l.len() + 1;
            }
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The system's fonts, for [`svg_to_pdf`].
pub fn system_fonts() -> std::sync::Arc<svg2pdf::usvg::fontdb::Database> {
    let mut db = svg2pdf::usvg::fontdb::Database::new();
    db.load_system_fonts();
    // fontdb's generic sans-serif is Arial; use a sans-serif face this
    // system has (Debian's fonts-dejavu-core is a Chromium dependency).
    let sans = ["DejaVu Sans", "Liberation Sans", "Noto Sans", "Arial"]
        .into_iter()
        .find(|f| {
            db.faces()
                .any(|face| face.families.iter().any(|(n, _)| n == f))
        });
    if let Some(f) = sans {
        db.set_sans_serif_family(f);
        hold_in_memory(&mut db, f);
    }
    std::sync::Arc::new(db)
}

/// Reads the files of `family`'s faces once and serves them from memory.
/// `fontdb` keeps a system font as a path and opens, maps and unmaps the
/// file whenever a text is laid out: the reference scenario's report did
/// that 9,000 times for DejaVu Sans, most of the report's wall time. The
/// family's faces keep their order among themselves, the one a font query
/// looks at (other families' faces stay files: the charts ask for
/// sans-serif only). A file that cannot be read stays as it was.
fn hold_in_memory(db: &mut svg2pdf::usvg::fontdb::Database, family: &str) {
    use svg2pdf::usvg::fontdb::Source;
    let mut paths: Vec<std::path::PathBuf> = Vec::new();
    for face in db.faces() {
        if let Source::File(path) = &face.source {
            if face.families.iter().any(|(n, _)| n == family) && !paths.contains(path) {
                paths.push(path.clone());
            }
        }
    }
    for path in paths {
        // A font file is a few MB; a bigger one is no font the charts need.
        let Ok(data) = tcran_core::text_file::read_bounded(&path, "font file", 64 << 20) else {
            continue;
        };
        let ids: Vec<_> = db
            .faces()
            .filter(|f| matches!(&f.source, Source::File(p) if *p == path))
            .map(|f| f.id)
            .collect();
        for id in ids {
            db.remove_face(id);
        }
        db.load_font_source(Source::Binary(std::sync::Arc::new(data)));
    }
}

pub fn hex(c: Rgb) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// Marks a plot's `<svg>` for styling and accessibility (role and label).
pub fn tag_svg(svg: &str, title: &str) -> String {
    match svg.find("<svg") {
        Some(i) => format!(
            "{}<svg class=\"plot-svg\" role=\"img\" aria-label=\"{}\"{}",
            &svg[..i],
            escape(title),
            &svg[i + 4..]
        ),
        None => svg.to_string(),
    }
}

/// The texts of an SVG document that do not fit inside it, with their
/// extent: laid out by `usvg` with the system's fonts (as the PDFs are),
/// so the widths are the font's, not an estimate.
#[cfg(test)]
pub fn texts_outside(svg: &str) -> Vec<String> {
    use svg2pdf::usvg::{Group, Node};
    let fonts = system_fonts();
    assert!(
        !fonts.is_empty(),
        "no system fonts to lay the text out with"
    );
    let opt = svg2pdf::usvg::Options {
        fontdb: fonts,
        ..svg2pdf::usvg::Options::default()
    };
    let tree = svg2pdf::usvg::Tree::from_str(svg, &opt).expect("the SVG parses");
    let (w, h) = (tree.size().width(), tree.size().height());
    fn walk(g: &Group, w: f32, h: f32, out: &mut Vec<String>) {
        for n in g.children() {
            match n {
                Node::Group(g) => walk(g, w, h, out),
                Node::Text(t) => {
                    let b = t.abs_bounding_box();
                    let text: String = t.chunks().iter().map(|c| c.text()).collect();
                    assert!(
                        b.width() > 0.0 || text.trim().is_empty(),
                        "{text}: no glyphs"
                    );
                    if b.left() < -0.5
                        || b.top() < -0.5
                        || b.right() > w + 0.5
                        || b.bottom() > h + 0.5
                    {
                        out.push(format!(
                            "{text:?} spans x {:.0}..{:.0}, y {:.0}..{:.0} of {w}x{h}",
                            b.left(),
                            b.right(),
                            b.top(),
                            b.bottom()
                        ));
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(tree.root(), w, h, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The face the charts' text resolves to is served from memory, not
    /// opened from its file per text (the report's former cost).
    #[test]
    fn the_charts_font_is_held_in_memory() {
        use svg2pdf::usvg::fontdb::{Family, Query, Source};
        let fonts = system_fonts();
        let id = fonts
            .query(&Query {
                families: &[Family::SansSerif],
                ..Query::default()
            })
            .expect("a sans-serif face on the system");
        let face = fonts.face(id).expect("queried");
        assert!(
            matches!(face.source, Source::Binary(_)),
            "{:?} is served from {:?}",
            face.families,
            face.source
        );
    }

    /// Two conversions of a chart with many see-through markers (a
    /// resource each) give the same bytes: `svg2pdf`'s resource order
    /// comes from a `HashMap` seeded afresh for every conversion.
    #[test]
    fn a_pdf_is_the_same_bytes_every_time() {
        let mut c = Chart::new("scatter", "S", "utilisation (%)", "delay (ms)");
        let points = (0..20)
            .map(|i| (f64::from(i) * 5.0, f64::from(i)))
            .collect();
        c.series
            .push(Series::dots("v / f", color(0), Glyph::Square, points));
        let svg = c.svg().unwrap();
        let fonts = system_fonts();
        let first = svg_to_pdf(&svg, &fonts).unwrap();
        assert!(
            String::from_utf8_lossy(&first).contains("/XObject <<"),
            "the chart has transparency groups, the case this checks"
        );
        for _ in 0..3 {
            assert!(svg_to_pdf(&svg, &fonts).unwrap() == first);
        }
    }

    #[test]
    fn resource_entries_are_sorted_in_place() {
        let mut pdf = b"<<\n  /XObject <<\n    /xo3 9 0 R\n    /xo10 12 0 R\n  >>\nstream\n/Font <<\n b\n a\n\nendstream\n".to_vec();
        sort_resource_entries(&mut pdf);
        assert_eq!(
            String::from_utf8(pdf).unwrap(),
            "<<\n  /XObject <<\n    /xo10 12 0 R\n    /xo3 9 0 R\n  >>\nstream\n/Font <<\n b\n a\n\nendstream\n",
            "the dictionary sorted, the stream's bytes untouched"
        );
    }

    #[test]
    fn a_point_with_error_bars_has_one_marker() {
        let mut c = Chart::new("scatter", "S", "utilisation (%)", "delay (ms)");
        let mut dot = Series::dots("v / f", color(0), Glyph::Circle, vec![(50.0, 10.0)]);
        dot.errors = vec![ErrorBar {
            x: (45.0, 55.0),
            y: (8.0, 12.0),
        }];
        c.series.push(dot);
        let svg = c.svg().unwrap();
        assert_eq!(
            svg.matches("<circle").count(),
            1,
            "one marker, not one per bar end"
        );
    }

    #[test]
    fn a_small_marker_is_drawn_over_a_large_one_at_the_same_place() {
        let mut c = Chart::new("scatter", "S", "x", "y");
        // The triangle's series comes first, as VoIP comes before ping.
        c.series.push(Series::dots(
            "voip",
            color(0),
            Glyph::Triangle,
            vec![(1.0, 1.0)],
        ));
        c.series.push(Series::dots(
            "ping",
            color(0),
            Glyph::Square,
            vec![(1.0, 1.0)],
        ));
        let svg = c.svg().unwrap();
        let square = svg.rfind("<rect").unwrap();
        let triangle = svg.find("<polygon").unwrap();
        assert!(square < triangle, "the triangle after (over) the square");
    }

    #[test]
    fn a_long_note_wraps_inside_a_standalone_figure() {
        let mut c = Chart::new("scatter", "S", "x", "y");
        c.series
            .push(Series::dots("a", color(0), Glyph::Circle, vec![(1.0, 1.0)]));
        let note = "Colour: variant; marker: flow (one-way delay, ping included). Means over the \
                    seeds with 95 % confidence intervals (Student t) as error bars. Thesis Fig. \
                    3.29, TC-RAN Fig. 15a: the best operating point uses all the capacity at the \
                    unloaded delay. The delay axis is logarithmic.";
        c.note = Some(note.into());
        let svg = c.standalone_svg().unwrap();
        assert_eq!(texts_outside(&svg), Vec::<String>::new());
        assert!(
            svg.contains("logarithmic.") && !svg.contains('\u{2026}'),
            "not cut"
        );
        assert_eq!(wrap("ab cd ef", 5), ["ab cd", "ef"]);
        assert_eq!(wrap("abcdefgh", 5), ["abcd\u{2026}"]);
        // The control: the check sees a text running off the right edge.
        let wide = svg.replace("<text x=\"12\"", "<text x=\"600\"");
        assert!(!texts_outside(&wide).is_empty());
    }

    #[test]
    fn a_chart_draws_its_title_axis_labels_and_every_series() {
        let mut c = Chart::new("throughput", "Goodput", "time (s)", "goodput (Mbit/s)");
        c.series.push(Series::line(
            "bulk",
            color(0),
            vec![vec![(0.0, 1.0), (1.0, 3.0)]],
        ));
        c.series.push(Series::dots(
            "drops",
            color(1),
            Glyph::Cross,
            vec![(0.5, 2.0)],
        ));
        c.markers.push((0.7, "R1".into()));
        let svg = c.svg().unwrap();
        for text in ["Goodput", "time (s)", "goodput (Mbit/s)", "R1"] {
            assert!(svg.contains(text), "{text} missing");
        }
        assert!(svg.contains("<polyline"), "the line");
        let fig = c.figure("x");
        assert!(fig.contains("data-plot=\"throughput\""));
        assert!(fig.contains("class=\"plot-svg\""));
        assert!(fig.contains(">bulk</li>") && fig.contains(">drops</li>"));
        assert!(fig.contains("reconfiguration"));
    }

    /// Every `<polyline>` of `svg` has at least two points (a viewer or
    /// PDF converter skips one of a single point, with a warning).
    fn polylines_have_two_points(svg: &str) -> bool {
        svg.split("<polyline").skip(1).all(|p| {
            let pts = p
                .split("points=\"")
                .nth(1)
                .and_then(|r| r.split('"').next());
            pts.is_some_and(|v| v.split_whitespace().count() >= 2)
        })
    }

    /// A line with a single point, or a single one the log axis can show
    /// (a CDF rising from a zero delay): drawn as a dot, not as a line of
    /// one point.
    #[test]
    fn a_line_with_one_drawable_point_is_a_dot() {
        for seg in [vec![(3.0, 1.0)], vec![(0.0, 0.0), (300.0, 1.0)]] {
            let mut c = Chart::new("delay-cdf", "CDF", "delay (ms)", "fraction of packets");
            c.series.push(Series::line("ping", color(0), vec![seg]));
            c.series.push(Series::line(
                "bulk",
                color(1),
                vec![vec![(1.0, 0.5), (2000.0, 1.0)]],
            ));
            c.log_x_if_wide();
            let svg = c.svg().unwrap();
            assert!(svg.contains("<circle"), "the dot");
            assert!(polylines_have_two_points(&svg), "{svg}");
        }
        let one = "<polyline fill=\"none\" points=\"167,39 \"/>";
        assert!(!polylines_have_two_points(one), "the check sees it");
    }

    #[test]
    fn an_empty_chart_still_has_axes_and_says_so() {
        let c = Chart::new("prb", "PRBs", "time (s)", "PRB utilisation (%)");
        let svg = c.svg().unwrap();
        assert!(svg.contains("no samples") && svg.contains("PRB utilisation (%)"));
    }

    #[test]
    fn non_finite_values_are_not_drawn_and_do_not_break_the_ranges() {
        let mut c = Chart::new("delay", "D", "x", "y");
        c.series.push(Series::line(
            "f",
            color(0),
            vec![vec![(0.0, f64::NAN), (1.0, 2.0), (f64::INFINITY, 1.0)]],
        ));
        let (x0, x1) = c.ranges().0;
        assert!(
            x0 < 1.0 && x1 > 1.0,
            "{x0}..{x1} holds the one finite point"
        );
        assert!(c.svg().is_ok());
    }

    #[test]
    fn a_delay_axis_spanning_more_than_two_decades_becomes_logarithmic() {
        assert!(!spans_decades([2.0, 150.0].into_iter()));
        assert!(spans_decades([2.0, 250.0, 0.0, f64::NAN].into_iter()));
        let mut c = Chart::new("scatter", "S", "PRB (%)", "delay (ms)");
        c.series.push(Series::dots(
            "vanilla",
            color(0),
            Glyph::Circle,
            vec![(99.0, 7000.0)],
        ));
        c.series.push(Series::dots(
            "cured",
            color(1),
            Glyph::Circle,
            vec![(95.0, 3.0)],
        ));
        c.log_y_if_wide();
        c.log_x_if_wide();
        assert!(c.y_log && !c.x_log);
        let ((_, _), (y0, y1)) = c.ranges();
        assert!(
            y0 == 2.0 && y1 > 7000.0,
            "{y0}..{y1}: from a round number below 3 ms"
        );
        assert_eq!(decade_below(12.6), 10.0);
        assert_eq!(decade_below(8.0), 5.0);
        assert_eq!(decade_below(0.3), 0.2);
        c.point_labels = true;
        let svg = c.svg().unwrap();
        assert!(svg.contains("delay (ms), log scale"));
        assert!(svg.contains("\ncured\n"), "point label");
        // Zero and negative values cannot be drawn on a log axis: skipped.
        c.series.push(Series::dots(
            "zero",
            color(2),
            Glyph::Circle,
            vec![(90.0, 0.0)],
        ));
        assert!(c.svg().is_ok());
    }

    #[test]
    fn a_standalone_figure_has_its_legend_and_note_inside() {
        let mut c = Chart::new("cdf", "CDF", "delay (ms)", "fraction");
        for (i, name) in ["vanilla", "bbr", "e5g-bdp", "jit"].iter().enumerate() {
            c.series.push(Series::line(
                *name,
                color(i),
                vec![vec![(1.0 + i as f64, 0.5), (2.0 + i as f64, 1.0)]],
            ));
        }
        c.note = Some("After warm-up.".into());
        let svg = c.standalone_svg().unwrap();
        assert!(svg.starts_with("<svg"));
        for text in ["vanilla", "e5g-bdp", "jit", "After warm-up."] {
            assert!(svg.contains(text), "{text}");
        }
        // Two legend rows and the note below the plot.
        assert!(
            svg.contains(&format!("height=\"{}\"", HEIGHT + 8 + 2 * 22 + 26)),
            "{}",
            &svg[..200]
        );
    }

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(tick(1000.0), "1000");
        assert_eq!(tick(12.5), "12.5");
        assert_eq!(tick(0.05), "0.05");
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(3.0), "3");
    }
}
