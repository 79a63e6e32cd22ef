//! `tcran sweep SWEEP.toml [...]`: parameter sweeps are driven by the Python
//! package (the Parquet store, the Dask and Ray backends live there; see
//! docs/python.md), so this command hands its arguments to
//! `PYTHON -m tcran sweep` and exits with its code. `PYTHON` is
//! `$TCRAN_PYTHON`, or the project virtualenv's (`target/venv/bin/python`,
//! made by `make python`) when it exists, or `python3`.

use crate::error::CliError;
use std::path::PathBuf;
use std::process::Command;

/// The Python that runs the sweep (see the module docs).
pub fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("TCRAN_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = PathBuf::from("target/venv/bin/python");
    if venv.is_file() {
        return venv;
    }
    PathBuf::from("python3")
}

/// Runs `python -m tcran sweep ARGS`; its exit code, or why it cannot run
/// (no such Python, or no `tcran` package in it).
pub fn run(args: &[String]) -> Result<i32, CliError> {
    let py = python();
    let shown = py.display().to_string();
    let cannot_run = |e: std::io::Error| {
        let e = e.to_string();
        format!(
            "cannot run {shown}: {}",
            tcran_core::text_file::without_os_code(&e)
        )
    };
    let missing = |why: String| {
        CliError::Sweep(format!(
            "{why}: sweeps run in the Python package (`make python` installs it into \
             target/venv; set TCRAN_PYTHON to a Python that has it)"
        ))
    };
    // find_spec does not import the package: the check costs no import time.
    let probe = Command::new(&py)
        .args([
            "-c",
            "import importlib.util, sys; sys.exit(importlib.util.find_spec('tcran') is None)",
        ])
        .status()
        .map_err(|e| missing(cannot_run(e)))?;
    if !probe.success() {
        return Err(missing(format!("{shown} has no `tcran` package")));
    }
    let status = Command::new(&py)
        .args(["-m", "tcran", "sweep"])
        .args(args)
        .status()
        .map_err(|e| missing(cannot_run(e)))?;
    // A Python killed by a signal has no code: 128 + signal, as a shell says.
    Ok(status.code().unwrap_or_else(|| {
        use std::os::unix::process::ExitStatusExt;
        128 + status.signal().unwrap_or(0)
    }))
}
