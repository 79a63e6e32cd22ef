//! Every way a `tcran` command can fail, each rendered as ONE line that names
//! the file, the line/column or the field path, the bad value and what is
//! allowed (issue 3, "Bad input").

use std::fmt;
use tcran_core::ConfigError;
use tcran_ran::TraceError;

/// Exit code for a user mistake (bad file, bad value, bad arguments).
pub const EXIT_USAGE: i32 = 2;
/// Exit code when stdout cannot be written (other than a closed pipe).
pub const EXIT_IO: i32 = 1;
/// Exit code of a bug in tcran (a panic), as Rust's own default.
pub const EXIT_INTERNAL: i32 = 101;

/// A failed command.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The command line itself is wrong (clap's message, first line only).
    #[error("{0}")]
    Usage(String),

    /// A file that cannot be read (missing, a directory, no permission, not UTF-8).
    #[error("{file}: cannot read: {reason}")]
    Read { file: String, reason: String },

    /// A configuration file whose type cannot be told from its extension.
    #[error("{file}: cannot tell the file type from the extension {ext}: expected .toml or .json")]
    UnknownExtension { file: String, ext: String },

    /// TOML or JSON that does not parse or does not fit the schema (syntax,
    /// unknown keys, unknown kinds, wrong units, wrong types), at a position.
    #[error("{file}:{pos}: {message}")]
    Parse {
        file: String,
        pos: Pos,
        message: String,
    },

    /// A value that parsed but is not allowed (from `build()`), by field path.
    #[error("{file}: {error}")]
    Config { file: String, error: ConfigError },

    /// A document whose kind (scenario, pipeline) cannot be told.
    #[error("{file}: {message}")]
    Kind { file: String, message: String },

    /// A trace file that cannot be parsed in the chosen format (the error
    /// names the file and the line itself).
    #[error("{0}")]
    Trace(#[from] TraceError),

    /// A trace whose format autodetection cannot tell; `detail` is what the
    /// reader of the likeliest format says about it (with the line).
    #[error("{file}: cannot tell the trace format: expected mahimahi (one ms timestamp per line, non-decreasing), thesis (a sample count, then that many packet counts) or ucc (CSV with CQI and DL_bitrate columns); read as {guess}: {detail}; pass --format to force one")]
    UnknownTraceFormat {
        file: String,
        guess: &'static str,
        detail: String,
    },

    /// A trace file with no data at all.
    #[error("{file}: empty trace: the file has no samples")]
    EmptyTrace { file: String },

    /// Writing the output failed.
    #[error("cannot write the output: {0}")]
    Output(std::io::Error),

    /// A setting of the machine that cannot be made (e.g. `--cpu-latency`
    /// without root).
    #[error("{0}")]
    System(String),

    /// An output file or directory that cannot be written.
    #[error("{file}: cannot write: {reason}")]
    Write { file: String, reason: String },

    /// An output that hit a limit the user can change: the file-size limit
    /// (`ulimit -f`), a full disk or a quota.
    #[error("{file}: cannot write: {reason} (a file-size, disk-space or quota limit: free space or raise the limit)")]
    Limit { file: String, reason: String },

    /// A `--set KEY=VALUE` that is malformed or whose path does not fit the
    /// document.
    #[error("--set {arg}: {message}")]
    Set { arg: String, message: String },

    /// A variant asked for by name (the Python API's `variants=`) that the
    /// scenario does not have.
    #[error("{file}: variants: no variant named `{name}` (the scenario has: {known})")]
    UnknownVariant {
        file: String,
        name: String,
        known: String,
    },

    /// The live emulator failed while setting up or running.
    #[error("emulation: {0}")]
    Emulation(String),

    /// `tcran sweep` cannot hand over to the Python package.
    #[error("sweep: {0}")]
    Sweep(String),

    /// The xApp's E2 termination failed (an address that cannot be bound).
    #[error("xApp: {0}")]
    Xapp(String),

    /// A document that no longer fits the schema after `--set` (no line
    /// numbers: the text was changed).
    #[error("{file} with --set {sets}: {message}")]
    AfterSet {
        file: String,
        sets: String,
        message: String,
    },
}

impl CliError {
    /// The error of writing `file`: [`CliError::Limit`] for a file-size,
    /// disk-space or quota limit, else [`CliError::Write`].
    pub fn write(file: &std::path::Path, e: &std::io::Error) -> CliError {
        use std::io::ErrorKind::{FileTooLarge, QuotaExceeded, StorageFull};
        let file = file.display().to_string();
        let reason = tcran_core::text_file::without_os_code(&e.to_string()).to_string();
        if matches!(e.kind(), FileTooLarge | StorageFull | QuotaExceeded) {
            CliError::Limit { file, reason }
        } else {
            CliError::Write { file, reason }
        }
    }

    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Output(_)
            | CliError::Write { .. }
            | CliError::System(_)
            | CliError::Emulation(_)
            | CliError::Xapp(_) => EXIT_IO,
            _ => EXIT_USAGE,
        }
    }

    /// The message as exactly one line (a stray newline in a library's
    /// message must not break the one-line rule).
    pub fn one_line(&self) -> String {
        let s = self.to_string();
        let mut out = String::with_capacity(s.len());
        for (i, part) in s
            .split(['\n', '\r'])
            .filter(|p| !p.trim().is_empty())
            .enumerate()
        {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(if i > 0 { part.trim() } else { part.trim_end() });
        }
        out
    }
}

/// A 1-based line and column in a text file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
}

impl Pos {
    /// The position of byte `offset` in `text` (column counted in characters).
    pub fn of_offset(text: &str, offset: usize) -> Pos {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        Pos { line, column }
    }
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_become_one_based_lines_and_character_columns() {
        let t = "a = 1\nbé = \"x\"\n";
        assert_eq!(Pos::of_offset(t, 0), Pos { line: 1, column: 1 });
        assert_eq!(Pos::of_offset(t, 6), Pos { line: 2, column: 1 });
        // 'é' is two bytes but one column.
        assert_eq!(Pos::of_offset(t, 9), Pos { line: 2, column: 3 });
        assert_eq!(Pos::of_offset(t, 999).line, 3);
    }

    #[test]
    fn messages_are_folded_onto_one_line() {
        let e = CliError::Read {
            file: "f".into(),
            reason: "a\nb\n".into(),
        };
        assert_eq!(e.one_line(), "f: cannot read: a b");
    }
}
