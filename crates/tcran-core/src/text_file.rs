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
    /// More than the caller's limit; `size` when the file says it (a
    /// regular file; a device or a pipe has none).
    #[error("{}larger than {}, the largest {what} accepted", size.map_or(String::new(), |s| format!("{s} bytes, ")), bytes_text(*max_bytes))]
    TooLarge {
        what: &'static str,
        max_bytes: u64,
        size: Option<u64>,
    },
    /// Not UTF-8; `line` (1-based) holds the first bad byte.
    #[error("not UTF-8 text (line {line}): a binary file?")]
    NotUtf8 { line: usize },
}

/// A limit for a message: whole MiB as MiB, else bytes.
fn bytes_text(n: u64) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else {
        format!("{n} bytes")
    }
}

/// Reads at most `max_bytes` of `path`: the one bounded read of every
/// file a user names (scenarios, traces, TLS certificates and keys), so
/// that `/dev/zero`, a FIFO that never ends or a huge file fails at the
/// limit instead of filling memory. `what` names the kind of file in the
/// too-large message ("trace file"). Reads only `max_bytes + 1` bytes
/// whatever the file's size.
pub fn read_bounded(
    path: &Path,
    what: &'static str,
    max_bytes: u64,
) -> Result<Vec<u8>, TextFileError> {
    let mut bytes = Vec::new();
    let f = std::fs::File::open(path).map_err(|e| TextFileError::Io(io_reason(&e)))?;
    let size = f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
    // One byte past the limit tells "exactly at the limit" from "more".
    f.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| TextFileError::Io(io_reason(&e)))?;
    if bytes.len() as u64 > max_bytes {
        return Err(TextFileError::TooLarge {
            what,
            max_bytes,
            size,
        });
    }
    Ok(bytes)
}

/// [`read_bounded`] as UTF-8 text.
pub fn read_text_file(
    path: &Path,
    what: &'static str,
    max_bytes: u64,
) -> Result<String, TextFileError> {
    let bytes = read_bounded(path, what, max_bytes)?;
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
            "4 bytes, larger than 3 bytes, the largest test file accepted"
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
    fn a_file_one_byte_over_the_limit_is_refused_with_its_size() {
        let dir = std::env::temp_dir().join(format!("tcran-bounded-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let limit = 1 << 20;
        let at = dir.join("at.pem");
        std::fs::write(&at, vec![b'a'; limit]).unwrap();
        assert_eq!(
            read_bounded(&at, "PEM file", limit as u64).unwrap().len(),
            limit
        );
        let over = dir.join("over.pem");
        std::fs::write(&over, vec![b'a'; limit + 1]).unwrap();
        assert_eq!(
            read_bounded(&over, "PEM file", limit as u64)
                .unwrap_err()
                .to_string(),
            "1048577 bytes, larger than 1 MiB, the largest PEM file accepted"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_huge_sparse_file_is_refused_after_reading_the_limit() {
        // 64 GiB of holes: reading it whole would take minutes and all
        // memory; the bounded read stops one byte past the limit.
        let dir = std::env::temp_dir().join(format!("tcran-sparse-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("sparse");
        let f = std::fs::File::create(&path).unwrap();
        f.set_len(64 << 30).unwrap();
        let e = read_bounded(&path, "trace file", 1 << 20).unwrap_err();
        assert_eq!(
            e,
            TextFileError::TooLarge {
                what: "trace file",
                max_bytes: 1 << 20,
                size: Some(64 << 30)
            }
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_endless_device_is_refused_without_a_size() {
        // /dev/zero never ends and has no size: `--tls-ca /dev/zero`.
        let e = read_bounded(Path::new("/dev/zero"), "PEM file", 1 << 20).unwrap_err();
        assert_eq!(
            e.to_string(),
            "larger than 1 MiB, the largest PEM file accepted"
        );
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
