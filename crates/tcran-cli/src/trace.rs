//! `tcran trace info`: what a capacity trace offers.

use crate::error::CliError;
use crate::load::read_text;
use serde_json::{json, Value};
use std::path::Path;
use tcran_ran::channel::{MahimahiTrace, ThesisTrace, UccTrace};
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
    /// UCC 5G dataset CSV (DL_bitrate column).
    Ucc,
}

/// Stable short name of a format (the `--format` value; JSON `format`).
pub fn short_name(f: TraceFormat) -> &'static str {
    f.short_name()
}

/// Reads and summarises a trace file.
pub fn info(path: &Path, format: FormatArg) -> Result<(String, TraceInfo), CliError> {
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
    let info = match format {
        TraceFormat::Mahimahi => MahimahiTrace::parse(&name, &text)?.info(),
        TraceFormat::ThesisPackets => ThesisTrace::parse(&name, &text)?.info(),
        TraceFormat::Ucc5g => UccTrace::parse(&name, &text)?.dl_rate_series()?.info(),
    };
    Ok((name, info))
}

/// The `--json` document (docs/cli.md).
pub fn to_json(file: &str, i: &TraceInfo) -> Value {
    json!({
        "file": file,
        "format": short_name(i.format),
        "format_description": i.format.to_string(),
        "samples": i.samples,
        "duration_s": i.duration.as_secs_f64(),
        "mean_mbps": i.mean_mbps,
        "min_mbps": i.min_mbps,
        "max_mbps": i.max_mbps,
        "window_s": i.window.as_secs_f64(),
    })
}

/// The readable form.
pub fn to_text(file: &str, i: &TraceInfo) -> String {
    format!(
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
    )
}
