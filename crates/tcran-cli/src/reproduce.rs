//! `tcran reproduce`: runs every scenario file of a directory (sorted by
//! name, several at a time), writes each one's outputs into
//! `OUT/<scenario>/` (summary.json, CSV series, report.html) and one
//! combined `OUT/index.html`: every scenario's key figures, its delay vs PRB
//! scatter and key-flow delay CDF, the wall time each took and links to the
//! full reports. With `--figures DIR` the two figures of each scenario are
//! also written as standalone SVG files (for docs).

use crate::error::CliError;
use crate::report::html::{escape, STYLE};
use crate::report::{figures, key_flow, Figure};
use crate::simulate::{self, Options};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use tcran_sim::fidelity::{self, Fidelity};
use tcran_sim::ScenarioSummary;

/// One scenario that ran.
#[derive(Debug)]
pub struct Done {
    pub file: PathBuf,
    /// Its directory under OUT.
    pub dir: String,
    pub summary: ScenarioSummary,
    /// Its scatter and key-flow CDF.
    pub figures: Vec<Figure>,
    /// Its paper numbers next to ours.
    pub fidelity: fidelity::Measured,
}

/// What a whole reproduction did.
#[derive(Debug)]
pub struct Reproduction {
    pub done: Vec<Done>,
    /// Wall-clock seconds of the whole run (scenarios in parallel).
    pub wall_s: f64,
    pub jobs: usize,
    /// Every scenario's paper numbers next to ours, with the totals.
    pub fidelity: Fidelity,
}

/// How to reproduce: where the standalone figures go, how many scenarios
/// run at a time.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub figures: Option<PathBuf>,
    /// Scenarios run at a time; 0 = one per available core.
    pub jobs: usize,
}

/// The scenario files (`.toml`, `.json`) directly in `dir`, sorted by name.
pub fn scenario_files(dir: &Path) -> Result<Vec<PathBuf>, CliError> {
    let read = |e: std::io::Error| CliError::Read {
        file: dir.display().to_string(),
        reason: tcran_core::text_file::io_reason(&e),
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(read)? {
        let path = entry.map_err(read)?.path();
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        if path.is_file() && matches!(ext.as_deref(), Some("toml" | "json")) {
            files.push(path);
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(CliError::Read {
            file: dir.display().to_string(),
            reason: "no scenario files (*.toml, *.json) in this directory".into(),
        });
    }
    Ok(files)
}

fn write_file(path: &Path, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text).map_err(|e| CliError::Write {
        file: path.display().to_string(),
        reason: tcran_core::text_file::io_reason(&e),
    })
}

/// Runs one scenario into `out/sub` and draws its figures.
fn one(file: &Path, sub: &str, out: &Path, opts: Options) -> Result<Done, CliError> {
    let mut o = simulate::run_file(file, opts)?;
    // Every variant's configuration carries the scenario's paper numbers.
    let fidelity = o
        .runs
        .first()
        .map(|(_, c)| fidelity::measure(c, &o.output))
        .unwrap_or_default();
    // The figures below need only the distributions the writing leaves.
    simulate::write_outputs_releasing(&out.join(sub), &mut o)?;
    let figures = figures(&o.output.summary, &o.output.series);
    Ok(Done {
        file: file.to_path_buf(),
        dir: sub.to_string(),
        summary: o.output.summary,
        figures,
        fidelity,
    })
}

/// Runs every scenario of `dir` into `out`, `settings.jobs` at a time.
/// Every scenario is checked first (parsed with the `--set`s and built):
/// the first file (in name order) that does not build is reported and
/// nothing is written. When a run fails later, the error of the first
/// failing file is returned; nothing is written into the index then.
#[allow(clippy::disallowed_types, clippy::disallowed_methods)] // wall_s is a wall-clock measurement
pub fn run(
    dir: &Path,
    out: &Path,
    opts: Options,
    settings: &Settings,
) -> Result<Reproduction, CliError> {
    run_files(&scenario_files(dir)?, out, opts, settings)
}

/// [`run`] on a list of scenario files (at least one), in the order given.
#[allow(clippy::disallowed_types, clippy::disallowed_methods)] // wall_s is a wall-clock measurement
pub fn run_files(
    files: &[PathBuf],
    out: &Path,
    opts: Options,
    settings: &Settings,
) -> Result<Reproduction, CliError> {
    let started = std::time::Instant::now();
    // Every file is read and every variant built before anything runs or
    // is written: a mistake in the last scenario (or a `--set` that does
    // not fit one of them) must not leave a half-written OUT behind.
    for f in files {
        simulate::check_file(f, opts)?;
    }
    let dirs = crate::series_csv::dir_names(
        files
            .iter()
            .map(|f| f.file_stem().and_then(|s| s.to_str()).unwrap_or("scenario")),
    );
    let jobs = match settings.jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .min(files.len())
    .max(1);
    // One progress bar makes sense only when one scenario runs at a time;
    // the cores go to scenarios, or to one scenario's runs.
    let opts = Options {
        progress: opts.progress && jobs == 1,
        jobs: if jobs > 1 {
            Some(std::num::NonZeroUsize::MIN)
        } else {
            opts.jobs
        },
        ..opts
    };
    let results: Vec<Mutex<Option<Result<Done, CliError>>>> =
        files.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(file) = files.get(i) else { break };
                let r = one(file, &dirs[i], out, opts);
                let failed = r.is_err();
                *results[i].lock().expect("no worker panics holding it") = Some(r);
                if failed {
                    // Let the other workers finish what they hold, start no more.
                    next.store(files.len(), Ordering::Relaxed);
                }
            });
        }
    });
    let mut done = Vec::with_capacity(files.len());
    for r in results {
        match r.into_inner().expect("no worker panics holding it") {
            Some(Ok(d)) => done.push(d),
            Some(Err(e)) => return Err(e),
            None => {} // not started after a failure; the failure is returned above
        }
    }
    if let Some(fig_dir) = &settings.figures {
        std::fs::create_dir_all(fig_dir).map_err(|e| CliError::Write {
            file: fig_dir.display().to_string(),
            reason: tcran_core::text_file::io_reason(&e),
        })?;
        for d in &done {
            for f in &d.figures {
                let svg = f.svg().map_err(|reason| CliError::Write {
                    file: format!("{} figure {}", d.dir, f.kind),
                    reason,
                })?;
                write_file(&fig_dir.join(format!("{}-{}.svg", d.dir, f.kind)), &svg)?;
            }
        }
    }
    let fidelity = Fidelity::of(done.iter().map(|d| d.fidelity.clone()).collect());
    let json = serde_json::to_string_pretty(&fidelity).expect("the rows serialize");
    write_file(&out.join("fidelity.json"), &(json + "\n"))?;
    write_file(&out.join("fidelity.md"), &fidelity.markdown())?;
    let rep = Reproduction {
        done,
        wall_s: started.elapsed().as_secs_f64(),
        jobs,
        fidelity,
    };
    write_file(&out.join("index.html"), &index_html(&rep))?;
    Ok(rep)
}

/// One line per scenario for stdout.
pub fn to_text(rep: &Reproduction, out: &Path, figures: Option<&Path>) -> String {
    let mut s = String::new();
    for d in &rep.done {
        let _ = writeln!(
            s,
            "{:<40} {:>2} variant(s), {:>4.0} s simulated in {:>5.2} s: {}",
            d.summary.scenario,
            d.summary.variants.len(),
            d.summary.sim_s,
            d.summary.wall_s,
            out.join(&d.dir).join("report.html").display()
        );
    }
    let summed: f64 = rep.done.iter().map(|d| d.summary.wall_s).sum();
    let _ = writeln!(
        s,
        "\n{} scenario(s) in {:.1} s wall time ({} at a time; {:.1} s summed over scenarios)",
        rep.done.len(),
        rep.wall_s,
        rep.jobs,
        summed
    );
    let t = rep.fidelity.totals;
    if t.rows > 0 {
        let seeds = rep.done.first().map_or_else(String::new, |d| {
            let s = &d.summary;
            if s.seeds.is_empty() {
                format!("seed {}", s.seed)
            } else {
                format!("mean over seeds {}", simulate::seeds_label(&s.seeds))
            }
        });
        let _ = writeln!(
            s,
            "paper numbers ({seeds}): {} of {} within 2x, {} of {} orderings kept: {}",
            t.within_2x,
            t.rows,
            t.orderings_kept,
            t.groups,
            out.join("fidelity.json").display()
        );
    }
    if let Some(f) = figures {
        let _ = writeln!(s, "figures: {}", f.display());
    }
    let _ = writeln!(s, "index: {}", out.join("index.html").display());
    s
}

/// The combined report: a table of every scenario and variant with its key
/// figures and links, then per scenario its two figures.
pub fn index_html(rep: &Reproduction) -> String {
    let done = &rep.done;
    let summed: f64 = done.iter().map(|d| d.summary.wall_s).sum();
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>tcran reproduction</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>tcran reproduction</h1>\n<p class=\"note\">{} scenario(s) in {:.1} s wall time ({} at a time; {:.1} s summed over scenarios). Each scenario's figures are <a href=\"#figures\">below the table</a>; its full report (every plot of every variant, CSV series) is linked from its name.</p>\n<table id=\"scenarios\">\n<tr><th class=\"name\">scenario</th><th>wall time (s)</th><th>simulated (s)</th><th class=\"name\">variant</th><th>PRB use</th><th class=\"name\">flows: Mbit/s, mean / p95 delay (ms)</th></tr>\n",
        done.len(),
        rep.wall_s,
        rep.jobs,
        summed
    );
    for d in done {
        let s = &d.summary;
        let n = s.variants.len().max(1);
        for (i, v) in s.variants.iter().enumerate() {
            out.push_str("<tr>");
            if i == 0 {
                let _ = write!(
                    out,
                    "<td class=\"name\" rowspan=\"{n}\"><a href=\"{}/report.html\">{}</a><br><span class=\"note\">{}</span><br><a class=\"note\" href=\"#fig-{}\">figures</a></td><td rowspan=\"{n}\">{:.2}</td><td rowspan=\"{n}\">{:.0}</td>",
                    escape(&d.dir),
                    escape(&s.scenario),
                    escape(&d.file.display().to_string()),
                    escape(&d.dir),
                    s.wall_s,
                    s.sim_s
                );
            }
            let flows: Vec<String> = v
                .run
                .flows
                .iter()
                .map(|f| {
                    let dl = f.rtt_ms.as_ref().unwrap_or(&f.delay_ms);
                    format!(
                        "{}: {:.2}, {:.1} / {:.1}",
                        f.name, f.throughput_mbps, dl.mean, dl.p95
                    )
                })
                .collect();
            let _ = writeln!(
                out,
                "<td class=\"name\"><a href=\"{}/report.html#variant-{i}\">{}</a></td><td>{:.1}%</td><td class=\"name wrap\">{}</td></tr>",
                escape(&d.dir),
                escape(&v.name),
                100.0 * v.run.prb_utilization,
                escape(&flows.join("; "))
            );
        }
    }
    out.push_str("</table>\n<p class=\"note\">Delays are one-way, server to UE (ping flows: round trip), after warm-up.</p>\n");
    out.push_str(&fidelity_html(&rep.fidelity));
    out.push_str("<section id=\"figures\">\n<h2>Figures</h2>\n");
    for d in done {
        let _ = writeln!(
            out,
            "<section class=\"scenario\" id=\"fig-{0}\">\n<h3><a href=\"{0}/report.html\">{1}</a>{2}</h3>\n<div class=\"grid\">",
            escape(&d.dir),
            escape(&d.summary.scenario),
            key_flow(&d.summary)
                .map(|k| format!(" (key flow: {})", escape(k)))
                .unwrap_or_default()
        );
        for f in &d.figures {
            out.push_str(&f.html(&format!("{}-{}", d.dir, f.kind)));
        }
        out.push_str("</div>\n</section>\n");
    }
    out.push_str("</section>\n</body>\n</html>\n");
    out
}

/// The paper numbers next to ours (`fidelity.json` as a table).
fn fidelity_html(f: &Fidelity) -> String {
    let t = f.totals;
    if t.rows == 0 {
        return String::new();
    }
    let mut out = format!(
        "<section id=\"paper\">\n<h2>The papers' numbers and ours</h2>\n<p class=\"note\">{} of {} paper numbers within 2x; {} of {} groups keep the paper's ordering (every pair of variants compares as in the paper, a difference under 5 % being a tie on both sides). Ours: the mean across seeds, with the 95 % confidence interval. Also in <a href=\"fidelity.json\">fidelity.json</a>.</p>\n<table id=\"fidelity\">\n<tr><th class=\"name\">scenario</th><th class=\"name\">source</th><th class=\"name\">variant</th><th class=\"name\">metric</th><th>paper</th><th>ours</th><th>ratio</th><th>within 2x</th><th>ordering kept</th><th class=\"name\">why it differs (outside 2x)</th></tr>\n",
        t.within_2x, t.rows, t.orderings_kept, t.groups
    );
    for r in &f.rows {
        let n = &r.number;
        let yes_no = |b: bool| if b { "yes" } else { "<strong>no</strong>" };
        let _ = writeln!(
            out,
            "<tr><td class=\"name\">{}</td><td class=\"name\">{} {}</td><td class=\"name\">{}</td><td class=\"name\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"name note\">{}</td></tr>",
            escape(&r.scenario),
            n.source.name(),
            escape(&n.figure),
            escape(&n.variant),
            escape(&r.metric_text()),
            r.paper_text(),
            r.ours_text(),
            r.ratio_text(),
            yes_no(r.within_2x),
            r.ordering_kept.map_or("-", yes_no),
            if r.within_2x {
                String::new()
            } else {
                escape(r.gap_text())
            },
        );
    }
    out.push_str("</table>\n");
    let broken: Vec<&fidelity::Group> = f.groups.iter().filter(|g| !g.kept).collect();
    if !broken.is_empty() {
        out.push_str("<h3>Orderings not kept, and why</h3>\n<table id=\"orderings\">\n<tr><th class=\"name\">scenario</th><th class=\"name\">group</th><th class=\"name\">pairs that compare otherwise than in the paper</th><th class=\"name\">why</th></tr>\n");
        for g in broken {
            let _ = writeln!(
                out,
                "<tr><td class=\"name\">{}</td><td class=\"name\">{}</td><td class=\"name\">{}</td><td class=\"name note\">{}</td></tr>",
                escape(&g.scenario),
                escape(g.short_name()),
                escape(&g.differing_text()),
                escape(g.gap_text()),
            );
        }
        out.push_str("</table>\n");
    }
    out.push_str("</section>\n");
    out
}
