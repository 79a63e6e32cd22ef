//! `tcran trace info`: what a trace offers the simulator (for a UCC CSV,
//! its CQI column; the recorded DL_bitrate is shown for reference).

use crate::error::CliError;
use crate::load::read_text;
use serde_json::{json, Value};
use std::path::Path;
use tcran_ran::channel::{MahimahiTrace, ThesisTrace, UccTrace};
use tcran_ran::phy::mcs::CqiTable;
use tcran_ran::{TraceFormat, TraceInfo};

/// `--format`: which reader to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    /// Guess from the content (default).
    Auto,
    /// mahimahi delivery trace: one ms timestamp per 1500-byte opportunity.
    Mahimahi,
    /// Thesis packets-per-10-ms trace: a sample count, then the samples.
    Thesis,
    /// UCC 5G dataset CSV: the simulator uses its CQI column (CQI -> MCS);
    /// DL_bitrate is shown as recorded.
    Ucc,
}

/// Stable short name of a format (the `--format` value; JSON `format`).
pub fn short_name(f: TraceFormat) -> &'static str {
    f.short_name()
}

/// What a UCC CSV gives the simulator: its CQI column (1 sample per
/// second, CQI Table 1 -> MCS; CQI 0 is an outage). Its DL_bitrate column
/// is what the phone measured with whatever traffic it had, not used.
#[derive(Debug, Clone, PartialEq)]
pub struct CqiSummary {
    pub min: u8,
    pub mean: f64,
    pub max: u8,
    /// Seconds at CQI 0 (no transmission).
    pub outage_samples: usize,
    /// Rows without a CQI value (the previous one is held).
    pub missing: usize,
}

/// A trace's summary: the capacity statistics, and for UCC CSVs the CQI
/// the simulator actually uses.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub info: TraceInfo,
    pub cqi: Option<CqiSummary>,
}

/// Reads and summarises a trace file.
pub fn info(path: &Path, format: FormatArg) -> Result<(String, Summary), CliError> {
    let (name, text) = read_text(path, "trace file", tcran_ran::channel::MAX_TRACE_FILE_BYTES)?;
    if text.trim().is_empty() {
        return Err(CliError::EmptyTrace { file: name });
    }
    let format = match format {
        FormatArg::Auto => match TraceFormat::detect(&text) {
            Some(f) => f,
            None => {
                // Read it in the format it most likely has, so that the
                // message names the line that is wrong.
                let guess = TraceFormat::guess(&text);
                let detail = match guess {
                    TraceFormat::Mahimahi => MahimahiTrace::parse(&name, &text).err(),
                    TraceFormat::ThesisPackets => ThesisTrace::parse(&name, &text).err(),
                    TraceFormat::Ucc5g => UccTrace::parse(&name, &text)
                        .and_then(|t| t.dl_rate_series())
                        .err(),
                }
                .map_or_else(|| "no error".to_string(), |e| e.detail());
                return Err(CliError::UnknownTraceFormat {
                    file: name,
                    guess: short_name(guess),
                    detail,
                });
            }
        },
        FormatArg::Mahimahi => TraceFormat::Mahimahi,
        FormatArg::Thesis => TraceFormat::ThesisPackets,
        FormatArg::Ucc => TraceFormat::Ucc5g,
    };
    let (info, cqi) = match format {
        TraceFormat::Mahimahi => (MahimahiTrace::parse(&name, &text)?.info(), None),
        TraceFormat::ThesisPackets => (ThesisTrace::parse(&name, &text)?.info(), None),
        TraceFormat::Ucc5g => {
            let t = UccTrace::parse(&name, &text)?;
            let series = t.cqi_series(CqiTable::Table1)?;
            let c = series.cqi();
            let cqi = CqiSummary {
                min: c.iter().copied().min().unwrap_or(0),
                mean: c.iter().map(|&x| f64::from(x)).sum::<f64>() / c.len().max(1) as f64,
                max: c.iter().copied().max().unwrap_or(0),
                outage_samples: c.iter().filter(|&&x| x == 0).count(),
                missing: t.missing_cqi(),
            };
            (t.dl_rate_series()?.info(), Some(cqi))
        }
    };
    Ok((name, Summary { info, cqi }))
}

/// The `--json` document (docs/cli.md).
pub fn to_json(file: &str, summary: &Summary) -> Value {
    let i = &summary.info;
    let mut v = json!({
        "file": file,
        "format": short_name(i.format),
        "format_description": i.format.to_string(),
        "samples": i.samples,
        "duration_s": i.duration.as_secs_f64(),
        "mean_mbps": i.mean_mbps,
        "min_mbps": i.min_mbps,
        "max_mbps": i.max_mbps,
        "window_s": i.window.as_secs_f64(),
    });
    if let Some(c) = &summary.cqi {
        v["simulator_uses"] = json!("cqi");
        v["capacity_column"] = json!("DL_bitrate (as recorded; not used by the simulator)");
        v["cqi"] = json!({
            "min": c.min,
            "mean": c.mean,
            "max": c.max,
            "outage_samples": c.outage_samples,
            "missing": c.missing,
        });
    }
    v
}

/// The readable form.
pub fn to_text(file: &str, summary: &Summary) -> String {
    let i = &summary.info;
    let mut text = format!(
        "file:      {file}\n\
         format:    {} ({})\n\
         samples:   {}\n\
         duration:  {:.3} s (the trace loops after this)\n\
         capacity:  mean {:.2} Mbit/s, min {:.2} Mbit/s, max {:.2} Mbit/s (min/max over {} windows)\n",
        short_name(i.format),
        i.format,
        i.samples,
        i.duration.as_secs_f64(),
        i.mean_mbps,
        i.min_mbps,
        i.max_mbps,
        i.window,
    );
    if let Some(c) = &summary.cqi {
        // The capacity line above is the recorded DL_bitrate column.
        text = text.replacen("capacity:  ", "DL_bitrate: ", 1);
        text.push_str(&format!(
            "simulator: uses the CQI column, not DL_bitrate (CQI Table 1 -> MCS, TS 38.214 \
             Table 5.2.2.1-2; 1 sample per second; CQI 0 is an outage)\n\
             CQI:       min {}, mean {:.2}, max {}; {} s at CQI 0; {} rows without CQI (previous held)\n",
            c.min, c.mean, c.max, c.outage_samples, c.missing
        ));
    }
    text
}
