//! `tcran reproduce`: runs every scenario file of a directory (sorted by
//! name), writes each one's outputs into `OUT/<scenario>/` (summary.json,
//! CSV series, report.html) and one `OUT/index.html` linking them all, with
//! the wall time each took.

use crate::error::CliError;
use crate::report::html::{escape, STYLE};
use crate::simulate::{self, Options};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use tcran_sim::ScenarioSummary;

/// One scenario that ran.
#[derive(Debug)]
pub struct Done {
    pub file: PathBuf,
    /// Its directory under OUT.
    pub dir: String,
    pub summary: ScenarioSummary,
}

/// The scenario files (`.toml`, `.json`) directly in `dir`, sorted by name.
pub fn scenario_files(dir: &Path) -> Result<Vec<PathBuf>, CliError> {
    let read = |e: std::io::Error| CliError::Read {
        file: dir.display().to_string(),
        reason: crate::load::without_os_code(&e.to_string()),
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

/// Runs every scenario of `dir` into `out`; stops at the first failure.
pub fn run(dir: &Path, out: &Path, opts: Options) -> Result<Vec<Done>, CliError> {
    let files = scenario_files(dir)?;
    let dirs = crate::series_csv::dir_names(
        files
            .iter()
            .map(|f| f.file_stem().and_then(|s| s.to_str()).unwrap_or("scenario")),
    );
    let mut done = Vec::new();
    for (file, sub) in files.into_iter().zip(dirs) {
        let o = simulate::run_file(&file, opts)?;
        simulate::write_outputs(&out.join(&sub), &o)?;
        done.push(Done {
            file,
            dir: sub,
            summary: o.output.summary,
        });
    }
    let path = out.join("index.html");
    std::fs::write(&path, index_html(&done)).map_err(|e| CliError::Write {
        file: path.display().to_string(),
        reason: crate::load::without_os_code(&e.to_string()),
    })?;
    Ok(done)
}

/// One line per scenario for stdout.
pub fn to_text(done: &[Done], out: &Path) -> String {
    let mut s = String::new();
    for d in done {
        let _ = writeln!(
            s,
            "{:<28} {} variant(s), {:.0} s simulated in {:.2} s: {}",
            d.summary.scenario,
            d.summary.variants.len(),
            d.summary.sim_s,
            d.summary.wall_s,
            out.join(&d.dir).join("report.html").display()
        );
    }
    let _ = writeln!(s, "\nindex: {}", out.join("index.html").display());
    s
}

/// The index page: every scenario and variant with its key figures and a
/// link to its report.
pub fn index_html(done: &[Done]) -> String {
    let total: f64 = done.iter().map(|d| d.summary.wall_s).sum();
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>tcran reproduction</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>tcran reproduction</h1>\n<p class=\"note\">{} scenario(s), {:.1} s wall time in all.</p>\n<table id=\"scenarios\">\n<tr><th class=\"name\">scenario</th><th>wall time (s)</th><th>simulated (s)</th><th class=\"name\">variant</th><th>PRB use</th><th class=\"name\">flows: Mbit/s, mean / p95 delay (ms)</th></tr>\n",
        done.len(),
        total
    );
    for d in done {
        let s = &d.summary;
        let n = s.variants.len().max(1);
        for (i, v) in s.variants.iter().enumerate() {
            out.push_str("<tr>");
            if i == 0 {
                let _ = write!(
                    out,
                    "<td class=\"name\" rowspan=\"{n}\"><a href=\"{}/report.html\">{}</a><br><span class=\"note\">{}</span></td><td rowspan=\"{n}\">{:.2}</td><td rowspan=\"{n}\">{:.0}</td>",
                    escape(&d.dir),
                    escape(&s.scenario),
                    escape(&d.file.display().to_string()),
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
                "<td class=\"name\"><a href=\"{}/report.html#variant-{i}\">{}</a></td><td>{:.1}%</td><td class=\"name\">{}</td></tr>",
                escape(&d.dir),
                escape(&v.name),
                100.0 * v.run.prb_utilization,
                escape(&flows.join("; "))
            );
        }
    }
    out.push_str("</table>\n</body>\n</html>\n");
    out
}
