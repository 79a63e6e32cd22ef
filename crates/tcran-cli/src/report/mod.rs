//! `report.html`: one self-contained page (inline SVG, no network) showing
//! what every variant of a scenario did (docs/report.md):
//!
//! - the summary table (per variant and flow: delay mean/p95/p99,
//!   throughput, PRB use, use of the capacity the channel offered, losses
//!   and drops; with several seeds, means ± 95 % confidence half-widths);
//! - the delay-versus-utilisation scatter of all variants (thesis
//!   Fig. 3.29, TC-RAN Fig. 15a; error bars across seeds) and, per flow,
//!   the delay CDFs of all variants side by side (ping: round-trip time;
//!   shaded 95 % bands across seeds);
//! - per variant: a drawing of each distinct DRB pipeline, RLC occupancy
//!   against slot capacity, PRB utilisation, per-flow goodput and delay
//!   over time, per-flow delay CDF, the drop/mark timeline, with every
//!   reconfiguration marked on the time plots and listed.
//!
//! Plots are drawn by `plotters` (SVG backend) in Okabe & Ito's
//! colour-blind-safe palette, every axis labelled with its quantity and
//! unit. Each plot can also be written on its own as SVG and PDF
//! ([`write_figures`], `svg2pdf`), linked under the plot. Long series are
//! thinned to at most [`downsample::MAX_POINTS`] points per line, keeping
//! extremes, so a 200 s run stays a few MB.

mod chart;
mod downsample;
pub mod html;
mod pipeline;

pub use chart::Chart;
use chart::{color, ErrorBar, Glyph, LegendEntry, Series, Shape};
use downsample::{min_max, segments, MAX_POINTS};
use html::escape;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use tcran_sim::series::{RunSeries, SlotSeries};
use tcran_sim::{ScenarioSummary, SimConfig, VariantSummary};

/// Everything the page shows.
#[derive(Debug, Clone, Copy)]
pub struct Report<'a> {
    pub summary: &'a ScenarioSummary,
    /// Per variant, in the summary's order.
    pub series: &'a [RunSeries],
    /// Per variant, its name and configuration (`SimConfig::runs()`).
    pub runs: &'a [(String, SimConfig)],
    /// Per variant, the directory (relative to the page) of its CSV files.
    pub csv_dirs: Option<&'a [String]>,
    /// With several seeds: per seed, per variant, the series with their
    /// CDFs (`ScenarioOutput::seed_series`); empty with one seed.
    pub seed_series: &'a [Vec<RunSeries>],
    /// The directory (relative to the page) holding each figure alone as
    /// SVG and PDF ([`write_figures`]): linked under each figure.
    pub figure_dir: Option<&'a str>,
    /// Whose time the run's seconds are (the header says what ran).
    pub clock: crate::simulate::Clock,
}

/// Where each figure goes alone, beside `report.html`.
pub const FIGURE_DIR: &str = "figures";

/// The plots that run over simulated time: they span the whole run and
/// carry the reconfiguration markers.
const TIME_PLOTS: [&str; 5] = ["rlc", "prb", "throughput", "delay", "events"];

/// The plots of each variant section, in page order.
const PLOT_KINDS: [&str; 7] = [
    "rlc",
    "prb",
    "throughput",
    "delay",
    "delay-cdf",
    "layer-cdf",
    "events",
];

/// Most PRB-utilisation points per plot: slots are averaged in windows.
const PRB_WINDOWS: usize = 500;

impl Report<'_> {
    /// `c` with the links to its own files, if the page has them.
    fn linked(&self, mut c: Chart, id: &str) -> Chart {
        c.files = self.figure_dir.map(|d| format!("{d}/{id}"));
        c
    }
}

/// Every plot of the page, in page order, with its element id (also the
/// name of its own files): the overview, then each variant's.
pub fn charts(r: &Report) -> Vec<(String, Chart)> {
    let mut all = overview_charts(r);
    for i in 0..r.summary.variants.len() {
        all.extend(variant_charts(r, i));
    }
    all
}

/// Writes plots alone into a directory as `<id>.svg` (legend and note
/// inside the image) and `<id>.pdf`, one plot at a time: nothing of a plot
/// is kept once its files are written.
#[derive(Debug)]
pub struct FigureFiles {
    dir: std::path::PathBuf,
    fonts: std::sync::Arc<svg2pdf::usvg::fontdb::Database>,
}

impl FigureFiles {
    /// Creates `dir` if needed and loads the system's fonts (for the PDFs).
    pub fn new(dir: &std::path::Path) -> Result<FigureFiles, crate::error::CliError> {
        std::fs::create_dir_all(dir).map_err(|e| crate::error::CliError::write(dir, &e))?;
        Ok(FigureFiles {
            dir: dir.to_path_buf(),
            fonts: chart::system_fonts(),
        })
    }

    /// Writes `c` as `<id>.svg` and `<id>.pdf`.
    pub fn write(&self, id: &str, c: &Chart) -> Result<(), crate::error::CliError> {
        use crate::error::CliError;
        let other = |path: &std::path::Path, reason: String| CliError::Write {
            file: path.display().to_string(),
            reason,
        };
        let svg_path = self.dir.join(format!("{id}.svg"));
        let svg = c.standalone_svg().map_err(|e| other(&svg_path, e))?;
        std::fs::write(&svg_path, &svg).map_err(|e| CliError::write(&svg_path, &e))?;
        let pdf_path = self.dir.join(format!("{id}.pdf"));
        let pdf = chart::svg_to_pdf(&svg, &self.fonts).map_err(|e| other(&pdf_path, e))?;
        std::fs::write(&pdf_path, pdf).map_err(|e| CliError::write(&pdf_path, &e))
    }
}

/// Writes every plot of the page alone into `dir` ([`FigureFiles`]), in
/// page order, building each variant's plots only when it comes.
pub fn write_figures(dir: &std::path::Path, r: &Report) -> Result<(), crate::error::CliError> {
    let files = FigureFiles::new(dir)?;
    for (id, c) in overview_charts(r) {
        files.write(&id, &c)?;
    }
    for i in 0..r.summary.variants.len() {
        for (id, c) in variant_charts(r, i) {
            files.write(&id, &c)?;
        }
    }
    Ok(())
}

/// The HTML page, in one string. [`page_start`], [`variant_section`] and
/// [`page_end`] give the same page part by part, for writing it to a file
/// without holding it whole.
pub fn render(r: &Report) -> String {
    let no_files = &mut |_: &str, _: &Chart| Ok::<(), std::convert::Infallible>(());
    let Ok(mut out) = page_start(r, no_files);
    for i in 0..r.summary.variants.len() {
        let Ok(section) = variant_section(r, i, no_files);
        out.push_str(&section);
    }
    out.push_str(&page_end());
    out
}

/// The page up to the variants: head, title, the summary table and the
/// overview's plots. `each(id, chart)` is called with each plot before it
/// goes into the page (to write its own files: [`FigureFiles::write`]).
pub fn page_start<E>(
    r: &Report,
    each: &mut impl FnMut(&str, &Chart) -> Result<(), E>,
) -> Result<String, E> {
    let s = r.summary;
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>tcran report: {}</title>\n<style>{}</style>\n<script>{}</script>\n</head>\n<body>\n",
        escape(&s.scenario),
        html::STYLE,
        html::ERROR_CATCHER
    );
    let _ = writeln!(
        out,
        "<h1>tcran report: {}</h1>\n<p class=\"note\" id=\"what-ran\">{}.</p>",
        escape(&s.scenario),
        escape(&crate::simulate::what_ran(s, r.clock))
    );
    out.push_str("<pre id=\"script-errors\" hidden></pre>\n<nav>");
    for (i, v) in s.variants.iter().enumerate() {
        let _ = write!(out, "<a href=\"#variant-{i}\">{}</a>", escape(&v.name));
    }
    out.push_str("</nav>\n");
    out.push_str("<section id=\"overview\">\n<h2>All variants</h2>\n");
    out.push_str(&summary_table(s));
    out.push_str(&handover_table(s));
    let mut overview = overview_charts(r).into_iter();
    if let Some((id, c)) = overview.next() {
        each(&id, &c)?;
        out.push_str(&r.linked(c, &id).figure(&id));
    }
    out.push_str("<div class=\"grid\">\n");
    for (id, c) in overview {
        each(&id, &c)?;
        out.push_str(&r.linked(c, &id).figure(&id));
    }
    out.push_str("</div>\n");
    out.push_str("</section>\n");
    Ok(out)
}

/// The end of the page, after the last variant.
pub fn page_end() -> String {
    format!(
        "<footer><p id=\"report-status\" class=\"note\"></p></footer>\n<script>{}</script>\n</body>\n</html>\n",
        html::STATUS
    )
}

/// A measure with `digits` decimals, or nothing when there is none.
fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or(String::new(), |v| format!("{v:.digits$}"))
}

/// The handover timeline of a multi-cell run (nothing with one cell):
/// which UE, when, from which cell to which, and what crossed Xn.
fn handover_table(s: &ScenarioSummary) -> String {
    if s.variants.iter().all(|v| v.run.handovers.is_empty()) {
        return String::new();
    }
    let mut out = String::from(
        "<h3>Handovers</h3>\n<div class=\"table-scroll\"><table id=\"handovers\">\n<tr><th class=\"name\">variant</th><th>UE</th><th>time (s)</th><th>from cell</th><th>to cell</th><th>interruption (ms)</th><th>forwarded packets</th><th>forwarded (kB)</th><th>of which TC</th><th>arrived meanwhile</th><th>dropped</th><th>ping-pong</th><th>TCP before (Mbit/s)</th><th>TCP lowest after (Mbit/s)</th><th>TCP back to 90 % (ms)</th><th>call delay before (ms)</th><th>call delay max (ms)</th></tr>\n",
    );
    for v in &s.variants {
        for h in &v.run.handovers {
            let _ = writeln!(
                out,
                "<tr><td class=\"name\">{}</td><td>{}</td><td>{:.3}</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&v.name),
                h.ue,
                h.at_s,
                h.source,
                h.target,
                h.interruption_ms,
                h.forwarded_packets,
                h.forwarded_bytes as f64 / 1e3,
                h.tc_forwarded_packets,
                h.arrived_meanwhile,
                h.dropped_packets,
                if h.ping_pong { "yes" } else { "" },
                opt(h.impact.tcp_before_mbps, 1),
                opt(h.impact.tcp_min_after_mbps, 1),
                match (h.impact.tcp_before_mbps, h.impact.tcp_recovery_ms) {
                    (None, _) => String::new(),
                    (Some(_), None) => "not within 5 s".to_string(),
                    (Some(_), Some(v)) => format!("{v:.0}"),
                },
                opt(h.impact.call_delay_before_ms, 1),
                opt(h.impact.call_max_delay_ms, 1),
            );
        }
    }
    out.push_str("</table></div>\n<p class=\"note\">Forwarded: over Xn from the source to the target, the TC pipeline's queued packets and the PDCP SDUs not yet acknowledged; arrived meanwhile: downlink packets for the UE during the interruption, forwarded as they came (handovers.csv). Ping-pong: back to the cell the UE left less than the scenario's <code>ping_pong_window</code> (1 s) before. TCP: the UE's downloads' goodput in the second before the command, the lowest 100-ms bin after it, and when a bin is back at 90 % of before; call: the largest one-way delay of the UE's call packets created from 500 ms before the command to 500 ms after the interruption, against the median of the second before (docs/simulator.md).</p>\n");
    for v in &s.variants {
        let n = v.run.handovers.len();
        let pp = v.run.handovers.iter().filter(|h| h.ping_pong).count();
        let _ = writeln!(
            out,
            "<p class=\"note\">{}: {n} handovers, {pp} ping-pong.</p>",
            escape(&v.name)
        );
    }
    for v in s.variants.iter().filter(|v| !v.run.cells.is_empty()) {
        let cells: Vec<String> = v
            .run
            .cells
            .iter()
            .map(|c| {
                format!(
                    "cell {}: {:.1}% PRBs, {:.2} Mbit/s",
                    c.cell,
                    100.0 * c.prb_utilization,
                    c.carried_mbps
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "<p class=\"note\">{}: {}.</p>",
            escape(&v.name),
            cells.join("; ")
        );
    }
    out
}

fn summary_table(s: &ScenarioSummary) -> String {
    let seeds = !s.across_seeds.is_empty();
    let mut out = String::from(
        "<div class=\"table-scroll\"><table id=\"summary\">\n<tr><th class=\"name\">variant</th><th class=\"name\">flow</th><th>throughput (Mbit/s)</th><th>mean delay (ms)</th><th>p95 (ms)</th><th>p99 (ms)</th><th>lost packets</th><th>PRB use</th><th>capacity use</th><th>mean RLC (kB)</th><th class=\"name\">drops by layer/reason</th></tr>\n",
    );
    // With seeds: "mean ± half-width" from the interval.
    let ci = |i: &tcran_sim::seeds::Interval, scale: f64, prec: usize| {
        format!(
            "{:.prec$} ± {:.prec$}",
            i.mean * scale,
            i.half_width * scale
        )
    };
    for (vi, v) in s.variants.iter().enumerate() {
        let stats = s.across_seeds.get(vi);
        let drops = drops_text(v);
        let n = v.run.flows.len().max(1);
        for (i, f) in v.run.flows.iter().enumerate() {
            let fs = stats.and_then(|st| st.flows.get(i));
            let (d, which) = match &f.rtt_ms {
                Some(rtt) => (rtt, " (RTT)"),
                None => (&f.delay_ms, ""),
            };
            let cells: [String; 5] = match fs {
                Some(fs) => {
                    let (mean, p95, p99) = match (&fs.rtt_mean_ms, &fs.rtt_p95_ms, &fs.rtt_p99_ms) {
                        (Some(m), Some(p), Some(q)) => (m, p, q),
                        _ => (&fs.delay_mean_ms, &fs.delay_p95_ms, &fs.delay_p99_ms),
                    };
                    [
                        ci(&fs.throughput_mbps, 1.0, 2),
                        ci(mean, 1.0, 1),
                        ci(p95, 1.0, 1),
                        ci(p99, 1.0, 1),
                        ci(&fs.lost_packets, 1.0, 1),
                    ]
                }
                None => [
                    format!("{:.2}", f.throughput_mbps),
                    format!("{:.1}", d.mean),
                    format!("{:.1}", d.p95),
                    format!("{:.1}", d.p99),
                    f.lost_packets.to_string(),
                ],
            };
            out.push_str("<tr>");
            if i == 0 {
                let _ = write!(
                    out,
                    "<td class=\"name\" rowspan=\"{n}\">{}</td>",
                    escape(&v.name)
                );
            }
            let _ = write!(out, "<td class=\"name\">{}{which}</td>", escape(&f.name));
            for c in &cells {
                let _ = write!(out, "<td>{c}</td>");
            }
            if i == 0 {
                let (prb, cap) = match stats {
                    Some(st) => (
                        format!("{} %", ci(&st.prb_utilization, 100.0, 1)),
                        format!("{} %", ci(&st.capacity_utilization, 100.0, 1)),
                    ),
                    None => (
                        format!("{:.1}%", 100.0 * v.run.prb_utilization),
                        format!("{:.1}%", 100.0 * v.run.capacity_utilization),
                    ),
                };
                let _ = write!(
                    out,
                    "<td rowspan=\"{n}\">{prb}</td><td rowspan=\"{n}\">{cap}</td><td rowspan=\"{n}\">{:.1}</td><td class=\"name wrap\" rowspan=\"{n}\">{}</td>",
                    v.run.rlc.mean_bytes / 1e3,
                    escape(&drops)
                );
            }
            out.push_str("</tr>\n");
        }
    }
    out.push_str("</table></div>\n<p class=\"note\">Delays are one-way, server to UE (ping flows: round trip), after warm-up. PRB use: PRBs used over PRBs available in downlink slots. Capacity use: the bytes the granted PRBs could carry over the bytes the channel offered (on a capacity trace, a slot without a delivery opportunity offers nothing).");
    if seeds {
        let _ = write!(
            out,
            " Seeds {}: each figure is the mean over the {} seeds ± the half-width of its 95 % confidence interval (Student t, {} degrees of freedom); RLC and drops are the first seed's.",
            crate::simulate::seeds_label(&s.seeds),
            s.seeds.len(),
            s.seeds.len() - 1
        );
    }
    out.push_str("</p>\n");
    out
}

fn drops_text(v: &VariantSummary) -> String {
    let parts: Vec<String> = v
        .run
        .drops
        .iter()
        .flat_map(|(layer, reasons)| reasons.iter().map(move |(r, n)| format!("{layer}/{r} {n}")))
        .collect();
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

/// Mean delay against the use of the capacity the channel offered, one
/// point per variant and flow (colour: variant, marker: flow; with seeds,
/// the means with their 95 % intervals as error bars): the ideal is
/// bottom right (all capacity used, unloaded delay).
fn scatter(s: &ScenarioSummary) -> Chart {
    let mut c = Chart::new(
        "scatter",
        "Mean delay vs capacity utilisation (all variants)",
        "utilisation of the capacity the channel offered (%)",
        "mean one-way delay (ms)",
    );
    let mut flows: Vec<&str> = Vec::new();
    for (vi, v) in s.variants.iter().enumerate() {
        let stats = s.across_seeds.get(vi);
        for (fi, f) in v.run.flows.iter().enumerate() {
            if f.delay_ms.count == 0 {
                continue;
            }
            if !flows.contains(&f.name.as_str()) {
                flows.push(&f.name);
            }
            let glyph = Glyph::nth(flows.iter().position(|n| *n == f.name).unwrap_or(fi));
            let mut dot = Series::dots(
                format!("{} / {}", v.name, f.name),
                color(vi),
                glyph,
                vec![(100.0 * v.run.capacity_utilization, f.delay_ms.mean)],
            );
            if let Some((st, fs)) = stats.and_then(|st| Some((st, st.flows.get(fi)?))) {
                let (u, d) = (&st.capacity_utilization, &fs.delay_mean_ms);
                dot.segments = vec![vec![(100.0 * u.mean, d.mean)]];
                // An interval of a share reaches no further than 0..100 %.
                dot.errors = vec![ErrorBar {
                    x: ((100.0 * u.low).max(0.0), (100.0 * u.high).min(100.0)),
                    y: (d.low, d.high),
                }];
            }
            c.series.push(dot);
        }
    }
    // The legend tells colours (variants) and markers (flows) apart, not
    // every pair.
    let mut legend: Vec<LegendEntry> = s
        .variants
        .iter()
        .enumerate()
        .map(|(vi, v)| LegendEntry {
            name: v.name.clone(),
            color: color(vi),
            shape: Shape::Line,
        })
        .collect();
    legend.extend(flows.iter().enumerate().map(|(k, f)| LegendEntry {
        name: format!("flow {f}"),
        color: (0x55, 0x55, 0x55),
        shape: Shape::Dots(Glyph::nth(k)),
    }));
    c.legend_entries = Some(legend);
    c.x_range = Some(utilisation_range(&c));
    c.x_max = Some(100.0);
    c.log_y_if_wide();
    c.note = Some(format!(
        "Colour: variant; marker: flow (one-way delay, ping included).{} Thesis Fig. 3.29, TC-RAN Fig. 15a: the best operating point uses all the capacity at the unloaded delay.{}",
        if s.across_seeds.is_empty() {
            ""
        } else {
            " Means over the seeds with 95 % confidence intervals (Student t) as error bars."
        },
        log_note(c.y_log)
    ));
    c
}

/// The x range of a utilisation scatter: whole multiples of 5 % around
/// the points and their error bars, with room so that no marker touches
/// the frame, within 0..100 % (a point at 100 % is on the frame).
fn utilisation_range(c: &Chart) -> (f64, f64) {
    let (lo, hi) = c
        .series
        .iter()
        .flat_map(Series::points)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), (x, _)| {
            (a.min(x), b.max(x))
        });
    if !lo.is_finite() {
        return (0.0, 100.0);
    }
    let lo = (((lo - 2.0) / 5.0).floor() * 5.0).max(0.0);
    let hi = (((hi + 2.0) / 5.0).ceil() * 5.0).min(100.0);
    let lo = lo.min(hi - 5.0);
    (lo, hi)
}

/// The sentence that says an axis is logarithmic.
fn log_note(log: bool) -> &'static str {
    if log {
        " The delay axis is logarithmic: the delays span more than two decades."
    } else {
        ""
    }
}

/// The CDF a flow's plots show: the round-trip time for a ping (as the
/// summary reports it), else the one-way delay; and what it is.
fn shown_cdf(f: &tcran_sim::series::FlowSeries) -> (&[(f64, f64)], &'static str) {
    if f.kind == "ping" && !f.rtt_cdf.is_empty() {
        (&f.rtt_cdf, "round-trip time")
    } else {
        (&f.delay_cdf, "one-way delay")
    }
}

/// Fractions at which the CDFs of several seeds are compared.
const BAND_LEVELS: usize = 100;

/// The delay at which `cdf` reaches `q`: the first point with a fraction
/// of at least `q` (the CDF is a step function through its points).
/// An empirical CDF as a line that rises from 0 at its smallest value, so
/// that a CDF of one value (a single packet, or all delays equal) is a
/// vertical step there rather than a lone point no plot draws.
fn cdf_line(cdf: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let rise = cdf
        .first()
        .filter(|(_, f)| *f > 0.0)
        .map(|(d, _)| (*d, 0.0));
    rise.into_iter().chain(cdf.iter().copied()).collect()
}

fn quantile_of(cdf: &[(f64, f64)], q: f64) -> Option<f64> {
    cdf.iter().find(|(_, f)| *f >= q - 1e-12).map(|(d, _)| *d)
}

/// Across seeds, at each of [`BAND_LEVELS`] fractions: the mean delay and
/// its 95 % interval (Student t) as `(mean line, lower edge, upper edge)`.
fn cdf_band(cdfs: &[&[(f64, f64)]]) -> Option<[Vec<(f64, f64)>; 3]> {
    if cdfs.len() < 2 {
        return None;
    }
    let mut out: [Vec<(f64, f64)>; 3] = Default::default();
    for k in 1..=BAND_LEVELS {
        let q = k as f64 / BAND_LEVELS as f64;
        let xs: Option<Vec<f64>> = cdfs.iter().map(|c| quantile_of(c, q)).collect();
        let i = tcran_sim::seeds::Interval::of(&xs?);
        out[0].push((i.mean, q));
        out[1].push((i.low, q));
        out[2].push((i.high, q));
    }
    Some(out)
}

/// One delay CDF per flow name with every variant that has the flow, to
/// compare variants directly (thesis Fig. 3.27 style); with several
/// seeds, each variant's mean across seeds with a shaded 95 % band.
fn compare_cdfs(s: &ScenarioSummary, series: &[RunSeries], seeds: &[Vec<RunSeries>]) -> Vec<Chart> {
    let mut names: Vec<&str> = Vec::new();
    for f in s.variants.iter().flat_map(|v| &v.run.flows) {
        if !names.contains(&f.name.as_str()) {
            names.push(&f.name);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let what = series
                .iter()
                .flat_map(|r| &r.flows)
                .find(|f| f.name == name)
                .map_or("one-way delay", |f| shown_cdf(f).1);
            let mut c = cdf_axes(
                "compare-cdf",
                format!("{} CDF of {name}, all variants", capitalised(what)),
                &format!("{what} (ms)"),
            );
            for (vi, v) in s.variants.iter().enumerate() {
                let per_seed: Vec<&[(f64, f64)]> = seeds
                    .iter()
                    .filter_map(|runs| runs.get(vi)?.flows.iter().find(|f| f.name == name))
                    .map(|f| shown_cdf(f).0)
                    .collect();
                if let Some([mean, lo, hi]) = cdf_band(&per_seed) {
                    c.series
                        .push(Series::band(format!("{} 95 %", v.name), color(vi), lo, hi));
                    c.series.push(Series::line(&v.name, color(vi), vec![mean]));
                } else if let Some(f) = series
                    .get(vi)
                    .and_then(|r| r.flows.iter().find(|f| f.name == name))
                {
                    c.series
                        .push(Series::line(&v.name, color(vi), vec![cdf_line(shown_cdf(f).0)]));
                }
            }
            c.log_x_if_wide();
            let mut note = Vec::new();
            if !seeds.is_empty() {
                note.push(format!(
                    "Mean over {} seeds at each fraction, shaded: its 95 % confidence interval (Student t).",
                    seeds.len()
                ));
            }
            if c.x_log {
                note.push(log_note(true).trim().to_string());
            }
            c.note = (!note.is_empty()).then(|| note.join(" "));
            c
        })
        .collect()
}

/// A CDF's chart: the fraction of packets up to x, on an axis ending at 1.
fn cdf_axes(kind: &'static str, title: impl Into<String>, x: &str) -> Chart {
    let mut c = Chart::new(kind, title, x, "fraction of packets (≤ x)");
    c.y_max = Some(1.0);
    c
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

/// The overview's plots with their ids: the scatter, then one CDF
/// comparison per flow.
fn overview_charts(r: &Report) -> Vec<(String, Chart)> {
    let mut out = vec![("scatter".to_string(), scatter(r.summary))];
    for (k, c) in compare_cdfs(r.summary, r.series, r.seed_series)
        .into_iter()
        .enumerate()
    {
        out.push((format!("compare-cdf-{k}"), c));
    }
    out
}

/// The flow a scenario is about: the first flow that is not a bulk, web or
/// FTP TCP download (the game, the call, the ping, the video), else the
/// first flow.
pub fn key_flow(s: &ScenarioSummary) -> Option<&str> {
    let flows = s.variants.first().map(|v| &v.run.flows)?;
    flows
        .iter()
        .find(|f| !matches!(f.kind.as_str(), "tcp" | "web" | "ftp"))
        .or(flows.first())
        .map(|f| f.name.as_str())
}

/// A figure for pages other than the report (docs, the reproduction
/// index): a plot with its legend and note drawn inside the image.
#[derive(Debug, Clone)]
pub struct Figure {
    /// `scatter` or `cdf`: the file name suffix.
    pub kind: &'static str,
    chart: Chart,
}

impl Figure {
    /// The standalone SVG document.
    pub fn svg(&self) -> Result<String, String> {
        self.chart.standalone_svg()
    }
    /// The HTML `<figure>` (inline SVG, HTML legend), as in the report.
    pub fn html(&self, id: &str) -> String {
        self.chart.figure(id)
    }
    pub fn title(&self) -> &str {
        &self.chart.title
    }
}

/// Most variants whose scatter points are labelled with their names.
const FIGURE_LABELLED_POINTS: usize = 10;

/// Most points per CDF line in a [`Figure`] (files for docs stay small).
const FIGURE_CDF_POINTS: usize = 100;

/// At most about `max` of `points`, evenly spaced, always with the last.
fn every_nth(points: &[(f64, f64)], max: usize) -> Vec<(f64, f64)> {
    let step = points.len().div_ceil(max.max(1)).max(1);
    let mut out: Vec<(f64, f64)> = points.iter().step_by(step).copied().collect();
    if let Some(last) = points.last() {
        if out.last() != Some(last) {
            out.push(*last);
        }
    }
    out
}

/// The two figures of a scenario: mean delay of its key flow against PRB
/// utilisation, one labelled point per variant, and the key flow's delay
/// CDF with one line per variant. Delay axes spanning more than two
/// decades are logarithmic.
pub fn figures(s: &ScenarioSummary, series: &[RunSeries]) -> Vec<Figure> {
    let Some(key) = key_flow(s) else {
        return Vec::new();
    };
    let mut scatter = Chart::new(
        "scatter",
        format!(
            "{}: mean delay of {key} vs capacity utilisation",
            s.scenario
        ),
        "utilisation of the capacity offered (%)",
        &format!("mean one-way delay of {key} (ms)"),
    );
    // Labels next to the points while they stay readable; the legend
    // (colour, and the marker after every ten variants) always.
    scatter.point_labels = s.variants.len() <= FIGURE_LABELLED_POINTS;
    for (vi, v) in s.variants.iter().enumerate() {
        if let Some(f) = v.run.flows.iter().find(|f| f.name == key) {
            if f.delay_ms.count > 0 {
                scatter.series.push(Series::dots(
                    &v.name,
                    color(vi),
                    Glyph::nth(vi / chart::PALETTE.len()),
                    vec![(100.0 * v.run.capacity_utilization, f.delay_ms.mean)],
                ));
            }
        }
    }
    scatter.x_range = Some(utilisation_range(&scatter));
    scatter.x_max = Some(100.0);
    scatter.log_y_if_wide();
    scatter.note = Some(format!(
        "One point per variant. Best: bottom right (all the capacity used at the unloaded delay).{}",
        if scatter.y_log {
            " Log delay axis."
        } else {
            ""
        }
    ));
    let what = series
        .iter()
        .flat_map(|r| &r.flows)
        .find(|f| f.name == key)
        .map_or("one-way delay", |f| shown_cdf(f).1);
    let mut cdf = cdf_axes(
        "cdf",
        format!("{}: {what} CDF of {key}, all variants", s.scenario),
        &format!("{what} of {key} (ms)"),
    );
    for (vi, (v, r)) in s.variants.iter().zip(series).enumerate() {
        if let Some(f) = r.flows.iter().find(|f| f.name == key) {
            cdf.series.push(Series::line(
                &v.name,
                color(vi),
                vec![every_nth(shown_cdf(f).0, FIGURE_CDF_POINTS)],
            ));
        }
    }
    cdf.log_x_if_wide();
    cdf.note = Some(format!(
        "After warm-up; server to UE, core delay included.{}",
        if cdf.x_log { " Log delay axis." } else { "" }
    ));
    vec![
        Figure {
            kind: "scatter",
            chart: scatter,
        },
        Figure {
            kind: "cdf",
            chart: cdf,
        },
    ]
}

/// The plots of variant `i` with their ids, in page order
/// ([`PLOT_KINDS`]): time plots span the whole run and mark every
/// reconfiguration; distributions have their own axes.
fn variant_charts(r: &Report, i: usize) -> Vec<(String, Chart)> {
    let empty = RunSeries::default();
    let s = r.series.get(i).unwrap_or(&empty);
    let markers: Vec<(f64, String)> = s
        .reconfigurations
        .iter()
        .enumerate()
        .map(|(k, r)| (r.t_s, format!("R{}", k + 1)))
        .collect();
    let time_axis = Some((
        0.0,
        r.summary
            .sim_s
            .max(s.slots.t_s.last().copied().unwrap_or(0.0)),
    ));
    let mut charts = vec![
        rlc_chart(&s.slots),
        prb_chart(&s.slots),
        throughput_chart(s),
        delay_chart(s),
        cdf_chart(s),
        layer_cdf_chart(s),
        events_chart(s),
    ];
    debug_assert!(charts.iter().map(|c| c.kind).eq(PLOT_KINDS));
    for c in &mut charts {
        if TIME_PLOTS.contains(&c.kind) {
            c.x_range = time_axis;
            c.markers = markers.clone();
        }
    }
    charts
        .into_iter()
        .map(|c| (format!("{}-{i}", c.kind), c))
        .collect()
}

/// Variant `i`'s section of the page: its pipelines, plots (each passed
/// to `each` first, as in [`page_start`]) and reconfigurations. It reads
/// only variant `i`'s series (and the summary), so the others may already
/// be gone.
pub fn variant_section<E>(
    r: &Report,
    i: usize,
    each: &mut impl FnMut(&str, &Chart) -> Result<(), E>,
) -> Result<String, E> {
    let Some(v) = r.summary.variants.get(i) else {
        return Ok(String::new());
    };
    let cfg = r.runs.get(i).map(|(_, c)| c);
    let csv = r.csv_dirs.and_then(|d| d.get(i)).map(String::as_str);
    let mut out = format!(
        "<section class=\"variant\" id=\"variant-{i}\" data-variant=\"{}\">\n<h2>Variant {}</h2>\n",
        escape(&v.name),
        escape(&v.name)
    );
    if !r.summary.seeds.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"note\">Plots of one seed ({}); the overview compares all {} seeds.</p>",
            r.summary.seed,
            r.summary.seeds.len()
        );
    }
    if let Some(dir) = csv {
        let _ = writeln!(
            out,
            "<p class=\"note\">Time series as CSV: <a href=\"{0}/slots.csv\">slots</a>, <a href=\"{0}/flows.csv\">flows</a>, <a href=\"{0}/delay_cdf.csv\">delay CDF</a>, <a href=\"{0}/layer_delay_cdf.csv\">delay CDF per layer</a>, <a href=\"{0}/events.csv\">drops and marks</a>, <a href=\"{0}/reconfigurations.csv\">reconfigurations</a>.</p>",
            escape(dir)
        );
    }
    if let Some(cfg) = cfg {
        out.push_str(&pipelines(i, cfg));
    }
    out.push_str("<div class=\"grid\">\n");
    for (id, c) in variant_charts(r, i) {
        each(&id, &c)?;
        out.push_str(&r.linked(c, &id).figure(&id));
    }
    out.push_str("</div>\n");
    let empty = RunSeries::default();
    out.push_str(&reconfiguration_table(r.series.get(i).unwrap_or(&empty)));
    out.push_str("</section>\n");
    Ok(out)
}

/// One drawing per distinct pipeline among the variant's DRBs, captioned
/// with the DRBs that use it.
fn pipelines(i: usize, cfg: &SimConfig) -> String {
    let mut groups: Vec<(
        Option<&tcran_tc::PipelineConfig>,
        &tcran_ran::rlc::RlcConfig,
        Vec<String>,
    )> = Vec::new();
    for ue in &cfg.ues {
        for drb in &ue.drbs {
            let who = format!("UE {} DRB {}", ue.rnti, drb.id);
            let key = (drb.pipeline.as_ref(), &drb.rlc);
            match groups.iter_mut().find(|(p, r, _)| (*p, *r) == key) {
                Some(g) => g.2.push(who),
                None => groups.push((key.0, key.1, vec![who])),
            }
        }
    }
    let mut out = String::from("<h3>Pipeline</h3>\n");
    let _ = writeln!(
        out,
        "<p class=\"note\">Flows: {}.</p>",
        escape(&flows_text(cfg))
    );
    for (k, (p, rlc, who)) in groups.iter().enumerate() {
        let _ = write!(
            out,
            "<figure class=\"pipeline\" id=\"pipeline-{i}-{k}\">\n<div class=\"pipelines\">{}</div>\n<figcaption>{}</figcaption>\n</figure>\n",
            pipeline::drawing(*p, *rlc),
            escape(&who.join(", "))
        );
    }
    out
}

/// `bulk (tcp, cubic), voip (voip)`: what a variant runs, with the TCP
/// congestion control (variants may change it).
fn flows_text(cfg: &SimConfig) -> String {
    let flows: Vec<String> = cfg
        .flows
        .iter()
        .map(|f| {
            let v = serde_json::to_value(f).unwrap_or_default();
            match v.pointer("/tcp/cc").and_then(|c| c.as_str()) {
                Some(cc) => format!("{} ({}, {cc})", f.name, f.kind.name()),
                None => format!("{} ({})", f.name, f.kind.name()),
            }
        })
        .collect();
    flows.join(", ")
}

fn rlc_chart(slots: &SlotSeries) -> Chart {
    let mut c = Chart::new(
        "rlc",
        "RLC occupancy and slot capacity",
        "time (s)",
        "RLC bytes, slot capacity (kB)",
    );
    let rlc: Vec<(f64, f64)> = slots
        .t_s
        .iter()
        .zip(&slots.rlc_bytes)
        .map(|(t, b)| (*t, *b as f64 / 1e3))
        .collect();
    // Uplink slots carry nothing by construction; plotting their zeros
    // would paint the capacity line down to the axis at every UL slot.
    let cap: Vec<(f64, f64)> = slots
        .t_s
        .iter()
        .zip(&slots.capacity_bytes)
        .zip(&slots.prbs_available)
        .filter(|(_, a)| **a > 0)
        .map(|((t, b), _)| (*t, *b as f64 / 1e3))
        .collect();
    c.series.push(Series::line(
        "RLC buffer, all DRBs (kB)",
        color(0),
        vec![min_max(&rlc, MAX_POINTS)],
    ));
    c.series.push(Series::line(
        "slot capacity, DL slots (kB)",
        color(1),
        vec![min_max(&cap, MAX_POINTS)],
    ));
    // A bloated buffer (MB) next to one slot's capacity (kB): on a linear
    // axis the capacity would be a flat line at zero.
    c.log_y_if_wide();
    let mut note = Vec::new();
    if rlc.len() > MAX_POINTS {
        note.push(format!(
            "{} slots, drawn as the minimum and maximum of each of {} windows.",
            rlc.len(),
            MAX_POINTS / 2
        ));
    }
    if slots.stride > 1 {
        note.push(format!(
            "Each sample covers {} slots (their largest RLC occupancy, the mean capacity of their DL slots).",
            slots.stride
        ));
    }
    if c.y_log {
        note.push("Log axis (the buffer and one slot's capacity differ by decades); empty buffers are not drawn.".into());
    }
    c.note = (!note.is_empty()).then(|| note.join(" "));
    c
}

fn prb_chart(slots: &SlotSeries) -> Chart {
    let mut c = Chart::new(
        "prb",
        "PRB and capacity utilisation",
        "time (s)",
        "utilisation (%)",
    );
    c.y_max = Some(100.0);
    // The vectors have one length by contract; never slice past the shortest.
    let n = slots
        .t_s
        .len()
        .min(slots.prbs_used.len())
        .min(slots.prbs_available.len())
        .min(slots.capacity_bytes.len());
    let w = n.div_ceil(PRB_WINDOWS).max(1);
    let (mut prb, mut cap) = (Vec::new(), Vec::new());
    for k in (0..n).step_by(w) {
        let end = (k + w).min(n);
        let (mut used, mut avail, mut offered, mut carried) = (0u64, 0u64, 0.0, 0.0);
        let window = slots.prbs_used[k..end]
            .iter()
            .zip(&slots.prbs_available[k..end])
            .zip(&slots.capacity_bytes[k..end]);
        for ((&u, &a), &b) in window {
            used += u64::from(u);
            avail += u64::from(a);
            if a > 0 {
                let b = b as f64;
                offered += b;
                carried += b * f64::from(u) / f64::from(a);
            }
        }
        if avail > 0 {
            prb.push((slots.t_s[k], 100.0 * used as f64 / avail as f64));
        }
        if offered > 0.0 {
            cap.push((slots.t_s[k], 100.0 * carried / offered));
        }
    }
    c.series.push(Series::line(
        "PRBs used / PRBs available (%)",
        color(0),
        vec![prb],
    ));
    c.series.push(Series::line(
        "capacity used / capacity offered (%)",
        color(1),
        vec![cap],
    ));
    if n > 1 {
        let slot = (slots.t_s[1] - slots.t_s[0]) / slots.stride.max(1) as f64;
        c.note = Some(format!(
            "Averaged over windows of {} slot(s) ({:.1} ms). Capacity: what the channel offered (a slot without a delivery opportunity offers nothing).",
            w as u64 * slots.stride.max(1),
            w as f64 * slots.stride.max(1) as f64 * slot * 1e3
        ));
    }
    c
}

fn throughput_chart(s: &RunSeries) -> Chart {
    let mut c = Chart::new(
        "throughput",
        "Goodput per flow",
        "time (s)",
        "goodput (Mbit/s)",
    );
    for (k, f) in s.flows.iter().enumerate() {
        let pts: Vec<(f64, f64)> = f
            .t_s
            .iter()
            .copied()
            .zip(f.goodput_mbps.iter().copied())
            .collect();
        c.series.push(Series::line(
            &f.name,
            color(k),
            vec![min_max(&pts, MAX_POINTS)],
        ));
    }
    // A call (0.08 Mbit/s) next to a download (7 Mbit/s) is a flat line at
    // zero on a linear axis: log when the flows' mean rates differ by more
    // than a decade.
    let means = s
        .flows
        .iter()
        .map(|f| f.goodput_mbps.iter().sum::<f64>() / f.goodput_mbps.len().max(1) as f64);
    let (lo, hi) = means
        .filter(|m| *m > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(a, b), m| (a.min(m), b.max(m)));
    c.y_log = lo.is_finite() && hi / lo > 10.0;
    c.note = bin_note(s).map(|n| {
        if c.y_log {
            format!("{n} Log axis: the flows' rates differ by more than a decade; empty bins are not drawn.")
        } else {
            n
        }
    });
    c
}

fn delay_chart(s: &RunSeries) -> Chart {
    let mut c = Chart::new(
        "delay",
        "One-way delay per flow",
        "time (s)",
        "mean one-way delay per bin (ms)",
    );
    for (k, f) in s.flows.iter().enumerate() {
        c.series.push(Series::line(
            &f.name,
            color(k),
            segments(&f.t_s, &f.delay_ms, MAX_POINTS),
        ));
    }
    c.log_y_if_wide();
    c.note = bin_note(s).map(|n| {
        format!(
            "{n} Gaps: no packet delivered in the bin.{}",
            log_note(c.y_log)
        )
    });
    c
}

fn bin_note(s: &RunSeries) -> Option<String> {
    (s.bin_s > 0.0).then(|| {
        if s.requested_bin_s > 0.0 && s.bin_s > s.requested_bin_s * 1.000001 {
            format!(
                "Bins of {} (series_bin {} widened in the plots of this long run).",
                duration_text(s.bin_s),
                duration_text(s.requested_bin_s)
            )
        } else {
            format!("Bins of {}.", duration_text(s.bin_s))
        }
    })
}

/// `100 ms`, `2.4 s`.
fn duration_text(s: f64) -> String {
    if s < 1.0 {
        format!("{:.0} ms", s * 1e3)
    } else {
        format!("{} s", chart_tick(s))
    }
}

fn chart_tick(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn cdf_chart(s: &RunSeries) -> Chart {
    let ping = s.flows.iter().any(|f| shown_cdf(f).1 == "round-trip time");
    let mut c = cdf_axes(
        "delay-cdf",
        "Delay CDF per flow (after warm-up)",
        if ping {
            "delay (ms): one-way; ping: round trip"
        } else {
            "one-way delay (ms)"
        },
    );
    for (k, f) in s.flows.iter().enumerate() {
        let (cdf, what) = shown_cdf(f);
        let name = if what == "round-trip time" {
            format!("{} (RTT)", f.name)
        } else {
            f.name.clone()
        };
        c.series
            .push(Series::line(name, color(k), vec![cdf_line(cdf)]));
    }
    c.log_x_if_wide();
    c.note = c.x_log.then(|| log_note(true).trim().to_string());
    c
}

/// Thesis Fig. 3.22 (delay at SDAP, at RLC, and their sum): per flow, the
/// CDF of each layer that holds packets at all (the core's delay is a
/// constant and a layer that never delays is a step at 0: both left out).
fn layer_cdf_chart(s: &RunSeries) -> Chart {
    let mut c = cdf_axes(
        "layer-cdf",
        "Delay CDF per layer (after warm-up)",
        "delay in the layer (ms)",
    );
    let mut k = 0;
    for f in &s.flows {
        for (layer, cdf) in f.layer_delay_cdf.iter() {
            if layer == "core" || cdf.last().is_none_or(|(d, _)| *d <= 0.0) {
                continue;
            }
            c.series.push(Series::line(
                format!("{} {layer}", f.name),
                color(k),
                vec![cdf_line(cdf)],
            ));
            k += 1;
        }
    }
    c.log_x_if_wide();
    c.note = Some(format!(
        "tc: TC queues; rlc: RLC buffer until the last byte is first sent; air: from then to delivery (HARQ, ARQ, reassembly); upf: the UPF queue.{}",
        log_note(c.x_log)
    ));
    c
}

/// Most markers one group of the drops-and-marks plot keeps (thinned with
/// [`min_max`]): beyond a few hundred across a figure they overlap.
const MAX_MARKERS: usize = 500;

fn events_chart(s: &RunSeries) -> Chart {
    let mut c = Chart::new(
        "events",
        "Drops and marks",
        "time (s)",
        &format!("packets per {} bin", duration_text(s.bin_s.max(1e-3))),
    );
    // (what, layer, reason) -> (bin start, packets), in a stable order.
    type Key<'a> = (&'a str, &'a str, &'a str);
    let mut groups: BTreeMap<Key, Vec<(f64, f64)>> = BTreeMap::new();
    for e in &s.events {
        groups
            .entry((e.what, e.layer, e.reason))
            .or_default()
            .push((e.t_s, e.count as f64));
    }
    for (k, ((what, layer, reason), pts)) in groups.into_iter().enumerate() {
        let glyph = if what == "mark" {
            Glyph::Triangle
        } else {
            Glyph::Cross
        };
        // A long run drops in every bin: thinned like a line, so a day of
        // 2.4-s bins is not 36 000 markers on top of each other.
        c.series.push(Series::dots(
            format!("{what} {layer}/{reason}"),
            color(k),
            glyph,
            min_max(&pts, MAX_MARKERS),
        ));
    }
    c.note = Some(match bin_note(s) {
        Some(n) if !s.events.is_empty() => n,
        _ if s.events.is_empty() => "No packet was dropped or marked.".into(),
        _ => String::new(),
    });
    c
}

fn reconfiguration_table(s: &RunSeries) -> String {
    if s.reconfigurations.is_empty() {
        return "<p class=\"note reconfigurations\">No reconfiguration during the run.</p>\n"
            .into();
    }
    let mut out = String::from("<table class=\"reconfigurations\">\n<tr><th class=\"name\">mark</th><th>time (s)</th><th class=\"name\">by</th><th class=\"name\">UE / DRB</th><th class=\"name\">change</th></tr>\n");
    for (k, r) in s.reconfigurations.iter().enumerate() {
        let _ = writeln!(
            out,
            "<tr><td class=\"name\">R{}</td><td>{:.3}</td><td class=\"name\">{}</td><td class=\"name\">{} / {}</td><td class=\"name wrap\">{}</td></tr>",
            k + 1,
            r.t_s,
            escape(&r.by),
            r.rnti,
            r.drb,
            escape(&r.what)
        );
    }
    out.push_str("</table>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn page(variant_name: &str, series: &[RunSeries]) -> String {
        let cfg: SimConfig = toml::from_str(&format!(
            r#"
            duration = "300ms"
            [[ues]]
            rnti = 1
            channel = {{ kind = "mcs", mcs = 10 }}
            [[flows]]
            name = "ping"
            ue = 1
            kind = "ping"
            interval = "100ms"
            [[variants]]
            name = "{variant_name}"
            "#
        ))
        .unwrap();
        let out = tcran_sim::run_scenario("unit", &cfg, Path::new(".")).unwrap();
        render(&Report {
            summary: &out.summary,
            series,
            runs: &cfg.runs(),
            csv_dirs: Some(&["v".to_string()]),
            seed_series: &[],
            figure_dir: Some(FIGURE_DIR),
            clock: crate::simulate::Clock::Simulated,
        })
    }

    /// A CDF line starts from 0 at its smallest value: one value is a
    /// vertical step.
    #[test]
    fn a_cdf_line_rises_from_zero() {
        assert_eq!(cdf_line(&[(3.0, 1.0)]), [(3.0, 0.0), (3.0, 1.0)]);
        assert_eq!(
            cdf_line(&[(1.0, 0.5), (2.0, 1.0)]),
            [(1.0, 0.0), (1.0, 0.5), (2.0, 1.0)]
        );
        assert_eq!(cdf_line(&[]), []);
    }

    #[test]
    fn names_are_escaped_and_every_plot_is_present_even_without_series() {
        let html = page("<b>&co", &[]);
        assert!(html.contains("Variant &lt;b&gt;&amp;co"));
        assert!(!html.contains("<b>&co"));
        for kind in PLOT_KINDS {
            assert_eq!(
                html.matches(&format!("data-plot=\"{kind}\"")).count(),
                1,
                "{kind}"
            );
        }
        assert_eq!(html.matches("data-plot=\"compare-cdf\"").count(), 1);
        assert!(html.contains("href=\"v/flows.csv\""));
        assert!(html.contains("No reconfiguration during the run."));
    }

    /// A bloated variant (seconds of RLC delay) beside a paced one whose
    /// pacer changes during the run, a call and a ping, on the demo's
    /// capacity trace, over two seeds.
    const MIXED: &str = r#"
        duration = "12s"
        warmup = "2s"
        seeds = [1, 2]
        [cell]
        bandwidth_mhz = 5
        [[ues]]
        rnti = 1
        channel = { kind = "trace", path = "builtin:thesis-pedestrian" }
        [[flows]]
        name = "bulk"
        ue = 1
        kind = "tcp"
        [[flows]]
        name = "voip"
        ue = 1
        kind = "voip"
        start = "1s"
        [[flows]]
        name = "ping"
        ue = 1
        kind = "ping"
        interval = "100ms"
        start = "1s"
        [[variants]]
        name = "vanilla"
        [[variants]]
        name = "priority+e5g-bdp"
        [variants.pipeline]
        default_queue = 1
        classifier = { kind = "filter", rules = [
          { priority = 1, protocol = "udp", queue = 0 },
          { priority = 2, protocol = "icmp", queue = 0 },
        ] }
        scheduler = { kind = "priority" }
        pacer = { kind = "e5g_bdp" }
        [[variants.pipeline.queues]]
        id = 0
        kind = "fifo"
        [[variants.pipeline.queues]]
        id = 1
        kind = "codel"
        priority = 1
        [[variants.events]]
        at = "6s"
        ue = 1
        drb = 1
        control = { op = "set_pacer", pacer = { kind = "bdp" } }
    "#;

    fn mixed() -> (tcran_sim::ScenarioOutput, SimConfig) {
        let cfg: SimConfig = toml::from_str(MIXED).unwrap();
        let out = tcran_sim::run_scenario("mixed", &cfg, Path::new(".")).unwrap();
        (out, cfg)
    }

    fn mixed_report<'a>(
        out: &'a tcran_sim::ScenarioOutput,
        runs: &'a [(String, SimConfig)],
        figure_dir: Option<&'a str>,
    ) -> Report<'a> {
        Report {
            summary: &out.summary,
            series: &out.series,
            runs,
            csv_dirs: None,
            seed_series: &out.seed_series,
            figure_dir,
            clock: crate::simulate::Clock::Simulated,
        }
    }

    /// How much of an axis `[a0, a1]` the values `[v0, v1]` span, in the
    /// axis' own measure (log or linear).
    fn fill(log: bool, (a0, a1): (f64, f64), (v0, v1): (f64, f64)) -> f64 {
        if log {
            (v1 / v0).ln() / (a1 / a0).ln()
        } else {
            (v1 - v0) / (a1 - a0)
        }
    }

    /// Every plot's axes hold every point (and error bar, band, marker) it
    /// draws; time plots span the run; distributions and scatters are not
    /// lost in a wide axis; each line reaches a visible height (no flat
    /// line at zero under a curve a thousand times higher).
    #[test]
    fn every_plot_axis_range_fits_the_data_it_draws() {
        let (out, cfg) = mixed();
        let runs = cfg.runs();
        let r = mixed_report(&out, &runs, None);
        let all = charts(&r);
        assert_eq!(all.len(), 1 + 3 + 2 * PLOT_KINDS.len());
        for (id, c) in &all {
            let ((x0, x1), (y0, y1)) = c.axis_ranges();
            let pts = c.drawn_points();
            if pts.is_empty() {
                // Only a timeline without any drop or mark may be empty.
                assert_eq!(c.kind, "events", "{id}: draws nothing");
                continue;
            }
            let eps = 1e-9 * (x1 - x0).abs().max(1.0);
            for (x, y) in &pts {
                assert!(
                    *x >= x0 - eps && *x <= x1 + eps,
                    "{id}: x {x} outside {x0}..{x1}"
                );
                assert!(
                    *y >= y0 - eps && *y <= y1 + eps,
                    "{id}: y {y} outside {y0}..{y1}"
                );
            }
            for (m, _) in &c.markers {
                assert!(*m >= x0 && *m <= x1, "{id}: marker {m}");
            }
            let ext = |f: fn(&(f64, f64)) -> f64| {
                pts.iter()
                    .map(f)
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                        (a.min(v), b.max(v))
                    })
            };
            let (dx, dy) = (ext(|p| p.0), ext(|p| p.1));
            if TIME_PLOTS.contains(&c.kind) {
                assert_eq!((x0, x1), (0.0, 12.0), "{id}: the run's time axis");
            } else if c.kind == "scatter" {
                // No point on the frame, but at the physical limit (100 %).
                for (x, _) in &pts {
                    assert!(
                        fill(false, (x0, x1), (x0, *x)) > 0.02,
                        "{id}: {x} at the left edge"
                    );
                    assert!(
                        x1 >= 100.0 || fill(false, (x0, x1), (*x, x1)) > 0.02,
                        "{id}: {x} at the right edge"
                    );
                }
            } else if dx.1 > dx.0 {
                let f = fill(c.x_log, (x0, x1), dx);
                assert!(f > 0.5, "{id}: the data spans {f:.3} of the x axis");
            }
            assert!(
                fill(c.y_log, (y0, y1), (y0, dy.1)) > 0.5,
                "{id}: the highest point {} is low on the axis {y0}..{y1}",
                dy.1
            );
            for s in &c.series {
                let top = s
                    .points()
                    .filter(|p| pts.contains(p))
                    .map(|p| p.1)
                    .fold(f64::NEG_INFINITY, f64::max);
                if top > 0.0 {
                    let f = fill(c.y_log, (y0, y1), (y0, top));
                    assert!(f > 0.005, "{id}: {} is flat at the bottom ({f:.4})", s.name);
                }
            }
        }
    }

    /// Each axis stays within what its quantity can be: a percentage
    /// (label "(%)") within 0..100, a fraction within 0..1, a delay, a
    /// rate, a size or a count from 0 up.
    fn assert_physical_axes(id: &str, c: &Chart) {
        let ((x0, x1), (y0, y1)) = c.axis_ranges();
        for (label, (a0, a1)) in [(&c.x_label, (x0, x1)), (&c.y_label, (y0, y1))] {
            assert!(a0 >= 0.0, "{id}: {label} from {a0}");
            if label.contains("(%)") {
                assert!(a1 <= 100.0, "{id}: {label} up to {a1}");
            }
            if label.starts_with("fraction") {
                assert!(a1 <= 1.0, "{id}: {label} up to {a1}");
            }
        }
    }

    #[test]
    fn every_axis_stays_within_its_quantitys_physical_range() {
        let (out, cfg) = mixed();
        let runs = cfg.runs();
        let r = mixed_report(&out, &runs, None);
        for (id, c) in charts(&r) {
            assert_physical_axes(&id, &c);
        }
        for f in figures(&out.summary, &out.series) {
            assert_physical_axes(f.kind, &f.chart);
        }
        // The demo's vanilla uses 99.6 % of the capacity, its error bar
        // reaching past 100 %: the axis still ends at 100 %.
        let mut one = out.summary.clone();
        one.variants[0].run.capacity_utilization = 0.996;
        let st = &mut one.across_seeds[0].capacity_utilization;
        (st.mean, st.low, st.high) = (0.996, 0.99, 1.002);
        let c = scatter(&one);
        assert_physical_axes("scatter", &c);
        assert!(c.drawn_points().iter().all(|p| p.0 <= 100.0));
    }

    /// Each figure alone (the report's, and those for docs): every text
    /// inside the image, as the system's fonts lay it out.
    #[test]
    fn every_standalone_figure_keeps_its_texts_inside() {
        let (out, cfg) = mixed();
        let runs = cfg.runs();
        let r = mixed_report(&out, &runs, None);
        for (id, c) in charts(&r) {
            let svg = c.standalone_svg().unwrap();
            assert_eq!(chart::texts_outside(&svg), Vec::<String>::new(), "{id}");
        }
        for f in figures(&out.summary, &out.series) {
            let svg = f.svg().unwrap();
            assert_eq!(
                chart::texts_outside(&svg),
                Vec::<String>::new(),
                "{}",
                f.kind
            );
        }
    }

    /// With several seeds, the header names them all (not the first
    /// alone) and a ping's p99 is its round-trip time's, like its mean.
    #[test]
    fn a_multi_seed_report_names_its_seeds_and_every_ping_figure() {
        let (out, cfg) = mixed();
        let runs = cfg.runs();
        let html = render(&mixed_report(&out, &runs, None));
        let at = html.find("id=\"what-ran\"").unwrap();
        let header = &html[at..at + html[at..].find("</p>").unwrap()];
        assert!(header.contains("2 seeds (1..2)"), "{header}");
        assert!(!header.contains("seed 1"), "{header}");
        let ping_rows: Vec<&str> = html
            .lines()
            .filter(|l| l.starts_with("<tr>") && l.contains(">ping (RTT)<"))
            .collect();
        assert_eq!(ping_rows.len(), 2);
        for row in ping_rows {
            assert!(
                !row.contains("<td>–</td>") && row.matches(" ± ").count() == 5,
                "{row}"
            );
        }
        let p99 = &out.summary.across_seeds[0].flows[2];
        assert!(p99.rtt_p99_ms.unwrap().mean >= p99.rtt_p95_ms.unwrap().mean);
    }

    /// An emulation's header speaks of real time and no seed.
    #[test]
    fn an_emulation_is_described_as_real_time_without_a_seed() {
        use crate::simulate::{what_ran, Clock};
        let (out, _) = mixed();
        let mut s = out.summary.clone();
        (s.seeds, s.across_seeds) = (Vec::new(), Vec::new());
        s.sim_s = 22.2;
        let text = what_ran(&s, Clock::Emulated);
        assert!(text.contains("22.2 s of real time"), "{text}");
        assert!(
            !text.contains("simulated") && !text.contains("seed 1"),
            "{text}"
        );
        assert!(what_ran(&s, Clock::Simulated).contains("simulated"));
        assert!(what_ran(&s, Clock::Realtime).contains("in real time (seed 1)"));
    }

    #[test]
    fn the_overview_shows_seeds_as_error_bars_and_bands_and_ping_as_rtt() {
        let (out, cfg) = mixed();
        let runs = cfg.runs();
        let r = mixed_report(&out, &runs, Some(FIGURE_DIR));
        let all = charts(&r);
        let scatter = &all[0].1;
        // 2 variants x 3 flows with error bars; the legend: 2 colours, 3
        // markers.
        assert_eq!(scatter.series.len(), 6);
        assert!(scatter.series.iter().all(|s| s.errors.len() == 1));
        assert_eq!(scatter.legend_list().len(), 5);
        let ping = all
            .iter()
            .find(|(_, c)| c.kind == "compare-cdf" && c.title.contains("ping"))
            .map(|(_, c)| c)
            .unwrap();
        assert!(
            ping.title.starts_with("Round-trip time CDF") && ping.x_label.contains("round-trip")
        );
        assert_eq!(
            ping.series
                .iter()
                .filter(|s| s.shape == Shape::Band)
                .count(),
            2,
            "a band per variant"
        );
        let html = render(&r);
        assert!(
            html.contains("href=\"figures/scatter.svg\"")
                && html.contains("href=\"figures/layer-cdf-1.pdf\"")
        );
        assert!(html.contains(" ± "), "table with intervals");
        assert!(html.contains("capacity use"));
    }

    /// Each figure alone: an SVG with its legend inside, and a PDF.
    #[test]
    fn figures_are_written_alone_as_svg_and_pdf() {
        let (out, cfg) = mixed();
        let runs = cfg.runs();
        let r = mixed_report(&out, &runs, Some(FIGURE_DIR));
        let dir = std::env::temp_dir().join(format!("tcran-figures-{}", std::process::id()));
        write_figures(&dir, &r).unwrap();
        let svg = std::fs::read_to_string(dir.join("scatter.svg")).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("vanilla"));
        let pdf = std::fs::read(dir.join("delay-cdf-0.pdf")).unwrap();
        assert!(pdf.starts_with(b"%PDF-"), "a PDF");
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            2 * charts(&r).len()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A day of drops in every bin is thinned to a few hundred markers,
    /// keeping the largest count.
    #[test]
    fn a_long_run_of_drops_is_thinned_keeping_its_peak() {
        let mut s = RunSeries {
            bin_s: 2.4,
            ..RunSeries::default()
        };
        for i in 0..36_000u64 {
            s.events.push(tcran_sim::series::EventCount {
                t_s: i as f64 * 2.4,
                what: "drop",
                layer: "rlc",
                reason: "rlc_full",
                count: if i == 12_345 { 9_999 } else { 1 + i % 7 },
            });
        }
        let c = events_chart(&s);
        let pts: Vec<(f64, f64)> = c.series[0].points().collect();
        assert!(pts.len() <= MAX_MARKERS, "{} markers", pts.len());
        assert!(pts.contains(&(12_345.0 * 2.4, 9_999.0)));
    }

    #[test]
    fn prb_utilisation_is_used_over_available_per_window() {
        let mut s = SlotSeries::default();
        // 1000 slots: every 4th is UL (nothing available); DL slots use 10
        // of 20 PRBs in the first half and 20 of 20 in the second.
        for i in 0..1000u32 {
            s.t_s.push(f64::from(i) * 0.001);
            let dl = i % 4 != 3;
            s.prbs_available.push(if dl { 20 } else { 0 });
            s.prbs_used.push(match (dl, i < 500) {
                (false, _) => 0,
                (true, true) => 10,
                (true, false) => 20,
            });
            s.rlc_bytes.push(0);
            s.capacity_bytes.push(0);
        }
        s.stride = 1;
        let c = prb_chart(&s);
        let pts = &c.series[0].segments[0];
        assert_eq!(pts.len(), 500, "windows of 2 slots");
        assert_eq!(pts[0], (0.0, 50.0));
        assert_eq!(pts[499].1, 100.0);
        assert!((pts[499].0 - 0.998).abs() < 1e-12);
        // A series with a short PRB vector does not panic.
        s.prbs_used.truncate(10);
        // 10 windows of 1 slot, 2 of them UL (nothing available, no point).
        assert_eq!(prb_chart(&s).series[0].segments[0].len(), 8);
    }
}
