//! report.html in a real browser (Debian's headless Chromium): every plot
//! is there and laid out, the page's scripts raise no error, and nothing is
//! loaded from the network. One page from a real `tcran run`, one from
//! hand-built long series (a 200 s run at 0.5 ms slots) that must stay
//! small, and a control page with a broken script that must be caught.

use crate::chromium;

use std::path::{Path, PathBuf};
use tcran_cli::report::{render, Report};
use tcran_sim::series::{EventCount, FlowSeries, Reconfiguration, RunSeries};
use tcran_sim::SimConfig;

const TIME_PLOTS: [&str; 5] = ["rlc", "prb", "throughput", "delay", "events"];
const PLOTS: [&str; 7] = [
    "rlc",
    "prb",
    "throughput",
    "delay",
    "delay-cdf",
    "layer-cdf",
    "events",
];

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcran-report-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The parts of the DOM between `<section class="variant"` openings.
fn variant_sections(dom: &str) -> Vec<&str> {
    dom.split("<section class=\"variant\"").skip(1).collect()
}

/// The checks every report must pass in the browser, for a page of
/// `variants` with `flows` distinct flow names; returns the DOM.
fn check_page(page: &Path, variants: usize, flows: usize) -> String {
    let html = std::fs::read_to_string(page).unwrap();
    for external in ["src=\"http", "href=\"http", "<link", "@import", "url(http"] {
        assert!(!html.contains(external), "the page loads {external}...");
    }
    let loaded = chromium::load(page);
    let dom = loaded.dom;
    assert!(
        !loaded.log.contains("Uncaught"),
        "script error in the log:\n{}",
        loaded.log
    );
    assert_eq!(
        chromium::text_of(&dom, "script-errors"),
        Some(""),
        "errors caught on the page"
    );
    // The status script ran last and counted every plot as laid out.
    // The scatter, one CDF comparison per flow, seven plots per variant.
    let plots = 1 + flows + PLOTS.len() * variants;
    assert_eq!(
        chromium::text_of(&dom, "report-status"),
        Some(format!("{plots} of {plots} plots drawn").as_str())
    );
    assert!(dom.contains("id=\"summary\""), "the summary table");
    assert_eq!(dom.matches("data-plot=\"scatter\"").count(), 1);
    assert_eq!(dom.matches("data-plot=\"compare-cdf\"").count(), flows);
    let sections = variant_sections(&dom);
    assert_eq!(sections.len(), variants);
    for s in sections {
        for p in PLOTS {
            let at = s
                .find(&format!("data-plot=\"{p}\""))
                .unwrap_or_else(|| panic!("plot {p} missing"));
            let fig = &s[at..at + s[at..].find("</figure>").unwrap()];
            assert_eq!(fig.matches("<svg").count(), 1, "{p}: one SVG");
            assert!(fig.contains("class=\"legend\""), "{p}: a legend");
            assert!(fig.contains("</text>"), "{p}: title and axis labels");
        }
        assert!(s.contains("class=\"pipeline-svg\""), "a pipeline drawing");
    }
    dom
}

#[test]
fn a_real_run_renders_every_plot_without_script_errors() {
    let dir = temp_dir("run");
    let scenario =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/small_scenario.toml");
    let out = assert_cmd::Command::cargo_bin("tcran")
        .unwrap()
        .args(["run", &scenario.display().to_string(), "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let dom = check_page(&dir.join("report.html"), 1, 2);
    assert!(
        dom.contains("3GPP baseline"),
        "the scenario has no pipeline"
    );
    for f in [
        "slots.csv",
        "flows.csv",
        "delay_cdf.csv",
        "layer_delay_cdf.csv",
        "events.csv",
        "reconfigurations.csv",
    ] {
        assert!(dir.join("default").join(f).exists(), "{f}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A two-variant scenario (3GPP baseline, CoDel + 5G-BDP) to draw.
fn scenario() -> SimConfig {
    toml::from_str(
        r#"
        duration = "200s"
        [[ues]]
        rnti = 1
        channel = { kind = "mcs", mcs = 20 }
        [[flows]]
        name = "bulk"
        ue = 1
        kind = "tcp"
        [[flows]]
        name = "voip"
        ue = 1
        kind = "voip"
        [[variants]]
        name = "vanilla"
        [[variants]]
        name = "codel+5g-bdp"
        [variants.pipeline]
        pacer = { kind = "bdp" }
        [[variants.pipeline.queues]]
        id = 0
        kind = "codel"
        "#,
    )
    .unwrap()
}

/// 200 s of 0.5 ms slots and 100 ms bins: a sawtooth RLC buffer, flows
/// with gaps, drops, marks and two reconfigurations.
fn long_series(k: u64) -> RunSeries {
    let mut s = RunSeries {
        bin_s: 0.1,
        ..RunSeries::default()
    };
    let slots = 400_000u64;
    for i in 0..slots {
        let dl = i % 5 != 4;
        s.slots.t_s.push(i as f64 * 0.0005);
        s.slots.rlc_bytes.push((i * 37 * (k + 1)) % 90_000);
        s.slots
            .capacity_bytes
            .push(if dl { 3_000 + (i % 7) * 100 } else { 0 });
        s.slots.prbs_used.push(if dl { (i % 25) as u32 } else { 0 });
        s.slots.prbs_available.push(if dl { 25 } else { 0 });
    }
    for (f, name) in ["bulk", "voip"].iter().enumerate() {
        let bins = 2000;
        let t: Vec<f64> = (0..bins).map(|b| b as f64 * 0.1).collect();
        s.flows.push(FlowSeries {
            name: name.to_string(),
            kind: if f == 0 { "tcp" } else { "voip" }.into(),
            goodput_mbps: t.iter().map(|t| 10.0 + (t * 0.3).sin()).collect(),
            delay_ms: (0..bins)
                .map(|b| (b % 50 != 0).then_some(20.0 + (b % 97) as f64))
                .collect(),
            cwnd_bytes: vec![None; bins],
            srtt_ms: vec![None; bins],
            delay_cdf: (1..=200).map(|i| (i as f64, i as f64 / 200.0)).collect(),
            rtt_cdf: Vec::new(),
            layer_delay_cdf: tcran_sim::series::LayerCdfs {
                core: vec![(10.0, 1.0)],
                tc: (1..=200)
                    .map(|i| (i as f64 * 0.5, i as f64 / 200.0))
                    .collect(),
                rlc: (1..=200)
                    .map(|i| (i as f64 * 0.1, i as f64 / 200.0))
                    .collect(),
                air: vec![(1.0, 0.9), (9.0, 1.0)],
                ..Default::default()
            },
            t_s: t,
        });
    }
    for b in (0..2000).step_by(40) {
        s.events.push(EventCount {
            t_s: b as f64 * 0.1,
            what: if b % 80 == 0 { "drop" } else { "mark" },
            layer: "tc",
            reason: "codel",
            count: 3,
        });
    }
    for (t, what) in [(50.0, "pacer bdp offset 0.5"), (120.0, "add queue 1 codel")] {
        s.reconfigurations.push(Reconfiguration {
            t_s: t,
            by: "event".into(),
            rnti: 1,
            drb: 1,
            what: what.into(),
        });
    }
    s
}

fn hand_built_page(dir: &Path) -> PathBuf {
    let cfg = scenario();
    // The summary of a real (short) run of the same scenario, with the
    // long hand-built series in place of the recorded ones.
    let mut short = cfg.clone();
    short.duration = tcran_core::Duration::from_millis(500);
    let mut out = tcran_sim::run_scenario("hand-built", &short, Path::new(".")).unwrap();
    out.summary.sim_s = 200.0;
    let series = [long_series(0), long_series(1)];
    let runs = cfg.runs();
    let html = render(&Report {
        summary: &out.summary,
        series: &series,
        runs: &runs,
        csv_dirs: None,
        seed_series: &[],
        figure_dir: None,
        clock: tcran_cli::simulate::Clock::Simulated,
    });
    let page = dir.join("report.html");
    std::fs::write(&page, html).unwrap();
    page
}

#[test]
fn long_hand_built_series_stay_small_and_render_with_reconfigurations() {
    let dir = temp_dir("long");
    let page = hand_built_page(&dir);
    let size = std::fs::metadata(&page).unwrap().len();
    assert!(size < 3_000_000, "a 200 s run makes {size} bytes");
    let dom = check_page(&page, 2, 2);
    for s in variant_sections(&dom) {
        assert!(!s.contains("no samples"), "every plot has data");
        for p in TIME_PLOTS {
            let at = s.find(&format!("data-plot=\"{p}\"")).unwrap();
            // plotters puts SVG text on its own line.
            let fig = s[at..at + s[at..].find("</figure>").unwrap()].replace('\n', "");
            assert!(
                fig.contains(">R1<") && fig.contains(">R2<"),
                "{p}: reconfigurations marked"
            );
        }
        assert!(s.contains("add queue 1 codel"), "reconfigurations listed");
        assert!(
            s.contains(">bulk</li>") && s.contains(">voip</li>"),
            "flow legends"
        );
        assert!(s.contains("drop tc/codel") && s.contains("mark tc/codel"));
    }
    assert!(dom.contains("pacer: bdp") && dom.contains("queue 0: codel"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_script_error_on_the_page_is_caught() {
    // The control for the checks above: a broken script must show up.
    let dir = temp_dir("broken");
    let page = hand_built_page(&dir);
    let html = std::fs::read_to_string(&page)
        .unwrap()
        .replace("</body>", "<script>noSuchFunction();</script></body>");
    std::fs::write(&page, html).unwrap();
    let loaded = chromium::load(&page);
    let caught = chromium::text_of(&loaded.dom, "script-errors").unwrap_or_default();
    assert!(caught.contains("noSuchFunction"), "caught: {caught:?}");
    let _ = std::fs::remove_dir_all(dir);
}

/// `tcran reproduce` on a bloated scenario: vanilla waits seconds, the
/// paced variant milliseconds. The report's scatter and the all-variant
/// CDFs switch to a logarithmic delay axis so the cured variant is
/// readable, and the combined index (each scenario's scatter and key-flow
/// CDF) renders in the browser without script errors or external loads.
#[test]
fn reproduce_index_and_report_put_seconds_and_milliseconds_on_a_log_axis() {
    let dir = temp_dir("repro-in");
    let out = temp_dir("repro-out");
    std::fs::write(
        dir.join("bloat.toml"),
        r#"
        duration = "20s"
        warmup = "8s"
        core_delay = "1ms"
        [[ues]]
        rnti = 1
        channel = { kind = "mcs", mcs = 10 }
        [[flows]]
        name = "bulk"
        ue = 1
        kind = "tcp"
        [[flows]]
        name = "voip"
        ue = 1
        kind = "voip"
        start = "1s"
        [[variants]]
        name = "vanilla"
        [[variants]]
        name = "priority+e5g-bdp"
        [variants.pipeline]
        default_queue = 1
        classifier = { kind = "filter", rules = [ { priority = 1, protocol = "udp", queue = 0 } ] }
        scheduler = { kind = "priority" }
        pacer = { kind = "e5g_bdp" }
        [[variants.pipeline.queues]]
        id = 0
        kind = "fifo"
        [[variants.pipeline.queues]]
        id = 1
        kind = "fifo"
        priority = 1
        "#,
    )
    .unwrap();
    let run = assert_cmd::Command::cargo_bin("tcran")
        .unwrap()
        .args(["reproduce", "--dir"])
        .arg(&dir)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    // The report: every plot, the overview plots on a log delay axis.
    let dom = check_page(&out.join("bloat/report.html"), 2, 2);
    let figure = |kind: &str, nth: usize| {
        let at = dom
            .match_indices(&format!("data-plot=\"{kind}\""))
            .nth(nth)
            .unwrap_or_else(|| panic!("{kind} #{nth}"))
            .0;
        dom[at..at + dom[at..].find("</figure>").unwrap()].replace('\n', "")
    };
    assert!(figure("scatter", 0).contains("log scale"), "scatter");
    assert!(figure("compare-cdf", 1).contains("log scale"), "voip CDFs");
    // The combined index in the browser.
    let index = out.join("index.html");
    let html = std::fs::read_to_string(&index).unwrap();
    for external in ["src=\"http", "href=\"http", "<link", "@import", "url(http"] {
        assert!(!html.contains(external), "the index loads {external}...");
    }
    let loaded = chromium::load(&index);
    assert!(!loaded.log.contains("Uncaught"), "{}", loaded.log);
    let dom = loaded.dom.replace('\n', "");
    for kind in ["scatter", "cdf"] {
        let at = dom
            .find(&format!("data-plot=\"{kind}\""))
            .unwrap_or_else(|| panic!("{kind} in the index"));
        let fig = &dom[at..at + dom[at..].find("</figure>").unwrap()];
        assert_eq!(fig.matches("<svg").count(), 1, "{kind}: one SVG");
        assert!(fig.contains("log scale"), "{kind}: log delay axis");
        assert!(fig.contains(">vanilla</li>") && fig.contains(">priority+e5g-bdp</li>"));
    }
    assert!(dom.contains("(key flow: voip)"));
    for d in [dir, out] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// Run in the page (before `</body>`): every table cell that is not meant
/// to wrap (`.wrap`) on one line and nothing spilling out of any cell, the
/// findings written into `#layout-problems`; a control cell squeezed to
/// 40 px must be caught, written into `#layout-control`.
const LAYOUT_CHECK: &str = r#"<table><tr><td id="squeezed" style="width:40px;max-width:40px;white-space:normal">2102.3 ± 8.5</td></tr></table>
<pre id="layout-problems"></pre><pre id="layout-control"></pre>
<script>
function lines(el) {
  var r = document.createRange(); r.selectNodeContents(el);
  var tops = {}; var rects = r.getClientRects();
  for (var i = 0; i < rects.length; i++) { if (rects[i].width > 0) tops[Math.round(rects[i].top)] = 1; }
  return Object.keys(tops).length;
}
function problem(el) {
  var p = [];
  if (!el.classList.contains('wrap') && lines(el) > 1) p.push('wraps');
  if (el.scrollWidth > el.clientWidth + 1) p.push('overflows');
  return p.join(', ');
}
var bad = [];
document.querySelectorAll('td').forEach(function (td) {
  if (td.id === 'squeezed') return;
  var p = problem(td);
  if (p) bad.push(p + ': ' + td.textContent);
});
document.getElementById('layout-problems').textContent = bad.join(' | ');
document.getElementById('layout-control').textContent = problem(document.getElementById('squeezed'));
</script>
</body>"#;

/// A report over two seeds in the browser: the header names the seeds,
/// the ping row has its p99, and no table cell wraps or overflows.
#[test]
fn a_multi_seed_report_has_no_wrapped_or_overflowing_table_cell() {
    let dir = temp_dir("seeds");
    let scenario =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/small_scenario.toml");
    let out = assert_cmd::Command::cargo_bin("tcran")
        .unwrap()
        .args([
            "run",
            &scenario.display().to_string(),
            "--seeds",
            "1..3",
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let page = dir.join("report.html");
    let dom = check_page(&page, 1, 2);
    let header = chromium::text_of(&dom, "what-ran").unwrap();
    assert!(
        header.contains("3 seeds (1..3)") && !header.contains("seed 1"),
        "{header}"
    );
    let ping = dom
        .lines()
        .find(|l| l.starts_with("<tr>") && l.contains(">ping (RTT)<"))
        .unwrap();
    assert!(!ping.contains("<td>–</td>"), "{ping}");
    let html = std::fs::read_to_string(&page)
        .unwrap()
        .replace("</body>", LAYOUT_CHECK);
    std::fs::write(&page, html).unwrap();
    let loaded = chromium::load(&page);
    let control = chromium::text_of(&loaded.dom, "layout-control").unwrap();
    assert!(control.contains("wraps"), "the squeezed cell: {control:?}");
    assert_eq!(chromium::text_of(&loaded.dom, "layout-problems"), Some(""));
    let _ = std::fs::remove_dir_all(dir);
}
