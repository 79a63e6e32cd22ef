//! Writing to stdout. A closed pipe (`tcran stages | head`) ends the program
//! quietly with success instead of panicking in `println!`.

use crate::error::CliError;
use std::io::Write;

/// Writes `text` to stdout and flushes it.
pub fn emit(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    let r = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    match r {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => Err(CliError::Output(e)),
    }
}

/// Pretty JSON with a final newline.
pub fn emit_json(value: &serde_json::Value) -> Result<(), CliError> {
    let mut s = serde_json::to_string_pretty(value).map_err(|e| CliError::Output(e.into()))?;
    s.push('\n');
    emit(&s)
}
