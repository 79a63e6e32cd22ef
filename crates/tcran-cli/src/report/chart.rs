//! One plot of the report: a description ([`Chart`]) drawn by `plotters`
//! into an SVG string, and an HTML `<figure>` around it with the legend.
//!
//! The legend is HTML below the plot rather than a box inside it, so it
//! never hides data and can hold many entries. Non-finite values are never
//! drawn (the caller represents "no sample" as a gap).

use super::html::escape;
use plotters::prelude::*;
use std::fmt::Write as _;

/// A colour of the palette (Tableau 10: tells ten series apart, also in
/// grey-scale print).
pub type Rgb = (u8, u8, u8);

pub const PALETTE: [Rgb; 10] = [
    (0x4e, 0x79, 0xa7),
    (0xf2, 0x8e, 0x2b),
    (0xe1, 0x57, 0x59),
    (0x76, 0xb7, 0xb2),
    (0x59, 0xa1, 0x4f),
    (0xed, 0xc9, 0x48),
    (0xb0, 0x7a, 0xa1),
    (0xff, 0x9d, 0xa7),
    (0x9c, 0x75, 0x5f),
    (0xba, 0xb0, 0xac),
];

/// The colour of the `i`-th series.
pub fn color(i: usize) -> Rgb {
    PALETTE[i % PALETTE.len()]
}

const MARKER_COLOR: Rgb = (0x55, 0x55, 0x55);
const WIDTH: u32 = 760;
const HEIGHT: u32 = 300;

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Line,
    Dots(Glyph),
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
}

impl Series {
    pub fn line(name: impl Into<String>, color: Rgb, segments: Vec<Vec<(f64, f64)>>) -> Series {
        Series {
            name: name.into(),
            color,
            shape: Shape::Line,
            segments,
        }
    }
    pub fn dots(name: impl Into<String>, color: Rgb, glyph: Glyph, pts: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            color,
            shape: Shape::Dots(glyph),
            segments: vec![pts],
        }
    }
    fn points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.segments
            .iter()
            .flatten()
            .copied()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
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
    pub series: Vec<Series>,
    /// Vertical lines: (x, label).
    pub markers: Vec<(f64, String)>,
    /// A sentence under the plot (how the data was binned or thinned).
    pub note: Option<String>,
}

impl Chart {
    pub fn new(kind: &'static str, title: impl Into<String>, x: &str, y: &str) -> Chart {
        Chart {
            kind,
            title: title.into(),
            x_label: x.to_string(),
            y_label: y.to_string(),
            x_range: None,
            series: Vec::new(),
            markers: Vec::new(),
            note: None,
        }
    }

    fn has_data(&self) -> bool {
        self.series.iter().any(|s| s.points().next().is_some())
    }

    fn ranges(&self) -> ((f64, f64), (f64, f64)) {
        let pts = || self.series.iter().flat_map(Series::points);
        let (mut x0, mut x1) = self.x_range.unwrap_or_else(|| {
            pts().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), (x, _)| {
                (a.min(x), b.max(x))
            })
        });
        if !x0.is_finite() || !x1.is_finite() {
            (x0, x1) = (0.0, 1.0);
        } else if self.x_range.is_none() {
            // Room around the outermost points, so markers are not cut.
            let pad = 0.05 * (x1 - x0).max(x0.abs() * 0.01).max(1e-9);
            (x0, x1) = (x0 - pad, x1 + pad);
        }
        if x1 <= x0 {
            x1 = x0 + 1.0;
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
        let ((x0, x1), (y0, y1)) = self.ranges();
        let root = SVGBackend::with_string(buf, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&self.title, ("sans-serif", 17))
            .margin(12)
            .x_label_area_size(42)
            .y_label_area_size(64)
            .build_cartesian_2d(x0..x1, y0..y1)?;
        chart
            .configure_mesh()
            .x_desc(self.x_label.as_str())
            .y_desc(self.y_label.as_str())
            .max_light_lines(2)
            .light_line_style(RGBColor(0xf0, 0xf0, 0xf0))
            .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
            .label_style(("sans-serif", 12))
            .axis_desc_style(("sans-serif", 13))
            .draw()?;
        for (x, label) in &self.markers {
            let c = rgb(MARKER_COLOR);
            chart.draw_series(LineSeries::new([(*x, y0), (*x, y1)], c.stroke_width(1)))?;
            chart.draw_series(std::iter::once(Text::new(
                label.clone(),
                (*x, y1),
                ("sans-serif", 11).into_font().color(&c),
            )))?;
        }
        for s in &self.series {
            let c = rgb(s.color);
            match s.shape {
                Shape::Line => {
                    for seg in &s.segments {
                        let pts = seg
                            .iter()
                            .copied()
                            .filter(|(x, y)| x.is_finite() && y.is_finite());
                        if seg.len() == 1 {
                            chart.draw_series(pts.map(|p| Circle::new(p, 2, c.filled())))?;
                        } else {
                            chart.draw_series(LineSeries::new(pts, c.stroke_width(2)))?;
                        }
                    }
                }
                Shape::Dots(g) => {
                    let style = c.filled();
                    match g {
                        Glyph::Circle => {
                            chart.draw_series(s.points().map(|p| Circle::new(p, 4, style)))?;
                        }
                        Glyph::Triangle => {
                            chart.draw_series(
                                s.points().map(|p| TriangleMarker::new(p, 5, style)),
                            )?;
                        }
                        Glyph::Square => {
                            chart.draw_series(s.points().map(|p| {
                                EmptyElement::at(p) + Rectangle::new([(-4, -4), (4, 4)], style)
                            }))?;
                        }
                        Glyph::Cross => {
                            chart.draw_series(
                                s.points().map(|p| Cross::new(p, 4, c.stroke_width(2))),
                            )?;
                        }
                    }
                }
            }
        }
        if !self.has_data() {
            let mid = ((x0 + x1) / 2.0, (y0 + y1) / 2.0);
            chart.draw_series(std::iter::once(Text::new(
                "no samples",
                mid,
                ("sans-serif", 16).into_font().color(&rgb(MARKER_COLOR)),
            )))?;
        }
        root.present()?;
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
        if let Some(n) = &self.note {
            let _ = writeln!(out, "<figcaption>{}</figcaption>", escape(n));
        }
        out.push_str("</figure>\n");
        out
    }

    fn legend(&self) -> String {
        let mut out = String::from("<ul class=\"legend\">");
        for s in &self.series {
            let symbol = match s.shape {
                Shape::Line => "\u{2501}",
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
        if self.series.is_empty() {
            out.push_str("<li>nothing to show</li>");
        }
        out.push_str("</ul>\n");
        out
    }
}

fn rgb(c: Rgb) -> RGBColor {
    RGBColor(c.0, c.1, c.2)
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
