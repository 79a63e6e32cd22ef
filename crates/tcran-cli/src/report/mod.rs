//! `report.html`: one self-contained page (inline SVG, no network) showing
//! what every variant of a scenario did (docs/report.md):
//!
//! - the summary table (per variant and flow: delay mean/p95/p99,
//!   throughput, PRB use, losses and drops);
//! - the delay-versus-PRB-utilisation scatter of all variants (thesis
//!   Fig. 3.29, TC-RAN Fig. 15a) and, per flow, the delay CDFs of all
//!   variants side by side;
//! - per variant: a drawing of each distinct DRB pipeline, RLC occupancy
//!   against slot capacity, PRB utilisation, per-flow goodput and delay
//!   over time, per-flow delay CDF, the drop/mark timeline, with every
//!   reconfiguration marked on the time plots and listed.
//!
//! Plots are drawn by `plotters` (SVG backend). Long series are thinned to
//! at most [`downsample::MAX_POINTS`] points per line, keeping extremes, so
//! a 200 s run stays a few MB.

mod chart;
mod downsample;
pub mod html;
mod pipeline;

use chart::{color, Chart, Glyph, Series};
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
}

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

/// The HTML page.
pub fn render(r: &Report) -> String {
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
        "<h1>tcran report: {}</h1>\n<p class=\"note\">{} variant(s), {:.1} s simulated in {:.2} s wall time, seed {}.</p>",
        escape(&s.scenario),
        s.variants.len(),
        s.sim_s,
        s.wall_s,
        s.seed
    );
    out.push_str("<pre id=\"script-errors\" hidden></pre>\n<nav>");
    for (i, v) in s.variants.iter().enumerate() {
        let _ = write!(out, "<a href=\"#variant-{i}\">{}</a>", escape(&v.name));
    }
    out.push_str("</nav>\n");
    out.push_str("<section id=\"overview\">\n<h2>All variants</h2>\n");
    out.push_str(&summary_table(s));
    out.push_str(&scatter(s).figure("scatter"));
    out.push_str("<div class=\"grid\">\n");
    for (k, c) in compare_cdfs(s, r.series).iter().enumerate() {
        out.push_str(&c.figure(&format!("compare-cdf-{k}")));
    }
    out.push_str("</div>\n");
    out.push_str("</section>\n");
    for (i, v) in s.variants.iter().enumerate() {
        let empty = RunSeries::default();
        let series = r.series.get(i).unwrap_or(&empty);
        let cfg = r.runs.get(i).map(|(_, c)| c);
        let csv = r.csv_dirs.and_then(|d| d.get(i)).map(String::as_str);
        out.push_str(&variant_section(i, v, series, cfg, s.sim_s, csv));
    }
    let _ = write!(
        out,
        "<footer><p id=\"report-status\" class=\"note\"></p></footer>\n<script>{}</script>\n</body>\n</html>\n",
        html::STATUS
    );
    out
}

fn summary_table(s: &ScenarioSummary) -> String {
    let mut out = String::from(
        "<table id=\"summary\">\n<tr><th class=\"name\">variant</th><th class=\"name\">flow</th><th>throughput (Mbit/s)</th><th>mean delay (ms)</th><th>p95 (ms)</th><th>p99 (ms)</th><th>lost packets</th><th>PRB use</th><th>mean RLC (kB)</th><th class=\"name\">drops by layer/reason</th></tr>\n",
    );
    for v in &s.variants {
        let drops = drops_text(v);
        let n = v.run.flows.len().max(1);
        for (i, f) in v.run.flows.iter().enumerate() {
            let (d, which) = match &f.rtt_ms {
                Some(rtt) => (rtt, " (RTT)"),
                None => (&f.delay_ms, ""),
            };
            out.push_str("<tr>");
            if i == 0 {
                let _ = write!(
                    out,
                    "<td class=\"name\" rowspan=\"{n}\">{}</td>",
                    escape(&v.name)
                );
            }
            let _ = write!(
                out,
                "<td class=\"name\">{}{which}</td><td>{:.2}</td><td>{:.1}</td><td>{:.1}</td><td>{:.1}</td><td>{}</td>",
                escape(&f.name),
                f.throughput_mbps,
                d.mean,
                d.p95,
                d.p99,
                f.lost_packets
            );
            if i == 0 {
                let _ = write!(
                    out,
                    "<td rowspan=\"{n}\">{:.1}%</td><td rowspan=\"{n}\">{:.1}</td><td class=\"name\" rowspan=\"{n}\">{}</td>",
                    100.0 * v.run.prb_utilization,
                    v.run.rlc.mean_bytes / 1e3,
                    escape(&drops)
                );
            }
            out.push_str("</tr>\n");
        }
    }
    out.push_str("</table>\n<p class=\"note\">Delays are one-way, server to UE (ping flows: round trip), after warm-up; PRB use is PRBs used over PRBs available in downlink slots.</p>\n");
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

/// Mean delay against PRB utilisation, one point per variant and flow:
/// the ideal is bottom right (all PRBs used, unloaded delay).
fn scatter(s: &ScenarioSummary) -> Chart {
    let mut c = Chart::new(
        "scatter",
        "Mean delay vs PRB utilisation (all variants)",
        "PRB utilisation (%)",
        "mean one-way delay (ms)",
    );
    for (vi, v) in s.variants.iter().enumerate() {
        for (fi, f) in v.run.flows.iter().enumerate() {
            if f.delay_ms.count == 0 {
                continue;
            }
            c.series.push(Series::dots(
                format!("{} / {}", v.name, f.name),
                color(vi),
                Glyph::nth(fi),
                vec![(100.0 * v.run.prb_utilization, f.delay_ms.mean)],
            ));
        }
    }
    c.log_y_if_wide();
    c.note = Some(format!(
        "Colour: variant; marker: flow. Thesis Fig. 3.29, TC-RAN Fig. 15a: the best operating point uses all PRBs at the unloaded delay.{}",
        log_note(c.y_log)
    ));
    c
}

/// The sentence that says an axis is logarithmic.
fn log_note(log: bool) -> &'static str {
    if log {
        " The delay axis is logarithmic: the variants' delays span more than two decades."
    } else {
        ""
    }
}

/// One delay CDF per flow name with every variant that has the flow, to
/// compare variants directly (thesis Fig. 3.27 style).
fn compare_cdfs(s: &ScenarioSummary, series: &[RunSeries]) -> Vec<Chart> {
    let mut names: Vec<&str> = Vec::new();
    for f in s.variants.iter().flat_map(|v| &v.run.flows) {
        if !names.contains(&f.name.as_str()) {
            names.push(&f.name);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let mut c = Chart::new(
                "compare-cdf",
                format!("Delay CDF of {name}, all variants"),
                "one-way delay (ms)",
                "fraction of packets (≤ delay)",
            );
            for (vi, (v, r)) in s.variants.iter().zip(series).enumerate() {
                if let Some(f) = r.flows.iter().find(|f| f.name == name) {
                    c.series
                        .push(Series::line(&v.name, color(vi), vec![f.delay_cdf.clone()]));
                }
            }
            c.log_x_if_wide();
            c.note = c.x_log.then(|| log_note(true).trim().to_string());
            c
        })
        .collect()
}

/// The flow a scenario is about: the first flow that is not a bulk or web
/// TCP download (the game, the call, the ping, the video), else the first
/// flow.
pub fn key_flow(s: &ScenarioSummary) -> Option<&str> {
    let flows = s.variants.first().map(|v| &v.run.flows)?;
    flows
        .iter()
        .find(|f| !matches!(f.kind.as_str(), "tcp" | "web"))
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
        format!("{}: mean delay of {key} vs PRB utilisation", s.scenario),
        "PRB utilisation (%)",
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
                    vec![(100.0 * v.run.prb_utilization, f.delay_ms.mean)],
                ));
            }
        }
    }
    scatter.log_y_if_wide();
    scatter.note = Some(format!(
        "One point per variant. Best: bottom right (every PRB used at the unloaded delay).{}",
        if scatter.y_log {
            " Log delay axis."
        } else {
            ""
        }
    ));
    let mut cdf = Chart::new(
        "cdf",
        format!("{}: delay CDF of {key}, all variants", s.scenario),
        &format!("one-way delay of {key} (ms)"),
        "fraction of packets (≤ delay)",
    );
    for (vi, (v, r)) in s.variants.iter().zip(series).enumerate() {
        if let Some(f) = r.flows.iter().find(|f| f.name == key) {
            cdf.series.push(Series::line(
                &v.name,
                color(vi),
                vec![every_nth(&f.delay_cdf, FIGURE_CDF_POINTS)],
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

fn variant_section(
    i: usize,
    v: &VariantSummary,
    s: &RunSeries,
    cfg: Option<&SimConfig>,
    sim_s: f64,
    csv: Option<&str>,
) -> String {
    let mut out = format!(
        "<section class=\"variant\" id=\"variant-{i}\" data-variant=\"{}\">\n<h2>Variant {}</h2>\n",
        escape(&v.name),
        escape(&v.name)
    );
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
    let markers: Vec<(f64, String)> = s
        .reconfigurations
        .iter()
        .enumerate()
        .map(|(k, r)| (r.t_s, format!("R{}", k + 1)))
        .collect();
    let time_axis = Some((0.0, sim_s.max(s.slots.t_s.last().copied().unwrap_or(0.0))));
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
    out.push_str("<div class=\"grid\">\n");
    for c in &mut charts {
        if c.kind != "delay-cdf" {
            c.x_range = time_axis;
            c.markers = markers.clone();
        }
        out.push_str(&c.figure(&format!("{}-{i}", c.kind)));
    }
    out.push_str("</div>\n");
    out.push_str(&reconfiguration_table(s));
    out.push_str("</section>\n");
    out
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
        "bytes (kB)",
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
    if rlc.len() > MAX_POINTS {
        c.note = Some(format!(
            "{} slots, drawn as the minimum and maximum of each of {} windows.",
            rlc.len(),
            MAX_POINTS / 2
        ));
    }
    c
}

fn prb_chart(slots: &SlotSeries) -> Chart {
    let mut c = Chart::new("prb", "PRB utilisation", "time (s)", "PRBs used (%)");
    // The vectors have one length by contract; never slice past the shortest.
    let n = slots
        .t_s
        .len()
        .min(slots.prbs_used.len())
        .min(slots.prbs_available.len());
    let w = n.div_ceil(PRB_WINDOWS).max(1);
    let mut pts = Vec::new();
    for k in (0..n).step_by(w) {
        let end = (k + w).min(n);
        let used: u64 = slots.prbs_used[k..end].iter().map(|&u| u as u64).sum();
        let avail: u64 = slots.prbs_available[k..end].iter().map(|&a| a as u64).sum();
        if avail > 0 {
            pts.push((slots.t_s[k], 100.0 * used as f64 / avail as f64));
        }
    }
    c.series.push(Series::line(
        "PRBs used / PRBs available (%)",
        color(4),
        vec![pts],
    ));
    if n > 1 {
        let slot = slots.t_s[1] - slots.t_s[0];
        c.note = Some(format!(
            "Averaged over windows of {w} slot(s) ({:.1} ms).",
            w as f64 * slot * 1e3
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
    c.note = bin_note(s);
    c
}

fn delay_chart(s: &RunSeries) -> Chart {
    let mut c = Chart::new(
        "delay",
        "One-way delay per flow",
        "time (s)",
        "mean delay in bin (ms)",
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
    (s.bin_s > 0.0).then(|| format!("Bins of {:.0} ms.", s.bin_s * 1e3))
}

fn cdf_chart(s: &RunSeries) -> Chart {
    let mut c = Chart::new(
        "delay-cdf",
        "Delay CDF per flow (after warm-up)",
        "one-way delay (ms)",
        "fraction of packets (≤ delay)",
    );
    for (k, f) in s.flows.iter().enumerate() {
        c.series
            .push(Series::line(&f.name, color(k), vec![f.delay_cdf.clone()]));
    }
    c.log_x_if_wide();
    c.note = c.x_log.then(|| log_note(true).trim().to_string());
    c
}

/// Thesis Fig. 3.22 (delay at SDAP, at RLC, and their sum): per flow, the
/// CDF of each layer that holds packets at all (the core's delay is a
/// constant and a layer that never delays is a step at 0: both left out).
fn layer_cdf_chart(s: &RunSeries) -> Chart {
    let mut c = Chart::new(
        "layer-cdf",
        "Delay CDF per layer (after warm-up)",
        "delay in the layer (ms)",
        "fraction of packets (≤ delay)",
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
                vec![cdf.to_vec()],
            ));
            k += 1;
        }
    }
    c.note = Some(
        "tc: TC queues; rlc: RLC buffer until the last byte is first sent; air: from then to delivery (HARQ, ARQ, reassembly); upf: the UPF queue.".into(),
    );
    c
}

fn events_chart(s: &RunSeries) -> Chart {
    let mut c = Chart::new("events", "Drops and marks", "time (s)", "packets per bin");
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
        c.series.push(Series::dots(
            format!("{what} {layer}/{reason}"),
            color(k),
            glyph,
            pts,
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
            "<tr><td class=\"name\">R{}</td><td>{:.3}</td><td class=\"name\">{}</td><td class=\"name\">{} / {}</td><td class=\"name\">{}</td></tr>",
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
        })
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
