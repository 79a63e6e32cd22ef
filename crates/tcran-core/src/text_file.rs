//! Reading a text file given by a user (a scenario, a pipeline, a channel
//! trace) with errors a user can act on: the OS reason without Rust's
//! "(os error N)" suffix, the line of the first byte that is not UTF-8, and
//! a size limit, so that a path to a device or a pipe that never ends
//! (`/dev/zero`) fails instead of filling memory.
//!
//! The error says what is wrong; the caller names the file.

use std::io::Read;
use std::path::Path;

/// Why a text file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TextFileError {
    /// Missing, a directory, no permission, ...: the OS reason.
    #[error("{0}")]
    Io(String),
    /// More than the caller's limit.
    #[error("larger than {max_mib} MiB, the largest {what} accepted")]
    TooLarge { what: &'static str, max_mib: u64 },
    /// Not UTF-8; `line` (1-based) holds the first bad byte.
    #[error("not UTF-8 text (line {line}): a binary file?")]
    NotUtf8 { line: usize },
}

/// Reads `path` as UTF-8 text of at most `max_bytes` bytes; `what` names
/// the kind of file in the too-large message ("trace file").
pub fn read_text_file(
    path: &Path,
    what: &'static str,
    max_bytes: u64,
) -> Result<String, TextFileError> {
    let mut bytes = Vec::new();
    // One byte past the limit tells "exactly at the limit" from "more".
    std::fs::File::open(path)
        .and_then(|f| f.take(max_bytes + 1).read_to_end(&mut bytes))
        .map_err(|e| TextFileError::Io(io_reason(&e)))?;
    if bytes.len() as u64 > max_bytes {
        return Err(TextFileError::TooLarge {
            what,
            max_mib: max_bytes >> 20,
        });
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        TextFileError::NotUtf8 {
            line: valid.iter().filter(|b| **b == b'\n').count() + 1,
        }
    })
}

/// An OS error message without Rust's " (os error N)" suffix: the code
/// tells a user nothing the words do not.
pub fn without_os_code(s: &str) -> &str {
    s.find(" (os error").map_or(s, |i| &s[..i])
}

/// What went wrong with a file, for a user: the OS reason of `e` without
/// its code.
pub fn io_reason(e: &std::io::Error) -> String {
    without_os_code(&e.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_text_and_reports_each_failure() {
        let dir = std::env::temp_dir().join(format!("tcran-text-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.txt");
        std::fs::write(&good, "a\nb\n").unwrap();
        assert_eq!(read_text_file(&good, "file", 4).unwrap(), "a\nb\n");
        assert_eq!(
            read_text_file(&good, "test file", 3)
                .unwrap_err()
                .to_string(),
            "larger than 0 MiB, the largest test file accepted"
        );
        let binary = dir.join("binary.txt");
        std::fs::write(&binary, b"ok\nok\n\xff\n").unwrap();
        assert_eq!(
            read_text_file(&binary, "file", 100).unwrap_err(),
            TextFileError::NotUtf8 { line: 3 }
        );
        assert_eq!(
            read_text_file(&dir.join("missing"), "file", 100)
                .unwrap_err()
                .to_string(),
            "No such file or directory"
        );
        assert_eq!(
            read_text_file(&dir, "file", 100).unwrap_err().to_string(),
            "Is a directory"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn os_code_is_dropped() {
        assert_eq!(
            without_os_code("No such file or directory (os error 2)"),
            "No such file or directory"
        );
        assert_eq!(without_os_code("plain"), "plain");
    }
}
