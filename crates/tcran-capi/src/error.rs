//! Errors across the C boundary: a status code plus a message the caller
//! reads with `tcran_last_error()` (one per thread, like `errno` or
//! libgit2's `git_error_last`), and the unwinding guard every entry point
//! runs in.

use crate::types::tcran_status;
use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use tcran_core::ConfigError;
use tcran_tc::Refused;

/// A failed call: what the caller gets back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub status: tcran_status,
    pub message: String,
}

impl Error {
    pub fn new(status: tcran_status, message: impl Into<String>) -> Error {
        Error {
            status,
            message: message.into(),
        }
    }
    pub fn null(argument: &str) -> Error {
        Error::new(tcran_status::TCRAN_ERR_NULL, format!("{argument} is NULL"))
    }
    pub fn invalid(message: impl Into<String>) -> Error {
        Error::new(tcran_status::TCRAN_ERR_INVALID, message)
    }
    pub fn parse(what: &str, message: impl std::fmt::Display) -> Error {
        // toml's messages span several lines (a caret under the column);
        // the caller gets one line.
        let text = message.to_string();
        let one_line: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('|') && !l.starts_with('^'))
            .map(|l| l.trim_end_matches('|').trim())
            .collect();
        Error::new(
            tcran_status::TCRAN_ERR_PARSE,
            format!("{what}: {}", one_line.join(": ")),
        )
    }
    pub fn config(what: &str, e: &ConfigError) -> Error {
        Error::new(tcran_status::TCRAN_ERR_CONFIG, format!("{what}: {e}"))
    }
    /// A change the pipeline refused (nothing changed).
    pub fn refused(what: &str, r: &Refused) -> Error {
        Error::new(tcran_status::TCRAN_ERR_CONFIG, format!("{what}: {r}"))
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: &str) {
    // An interior NUL would cut the C string short; replace it.
    let text = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
}

/// The message of the last failed call on this thread. The pointer is
/// valid until the next failing call on this thread.
pub fn last_error_ptr() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// Runs an entry point's body: its error becomes the status and the
/// thread's last error; a panic (a tcran bug) is caught here, never
/// unwinds into C, and becomes `TCRAN_ERR_INTERNAL`.
pub fn guard(body: impl FnOnce() -> Result<tcran_status, Error>) -> tcran_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(status)) => status,
        Ok(Err(e)) => {
            set_last_error(&e.message);
            e.status
        }
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            set_last_error(&format!("internal error in tcran: {what}"));
            tcran_status::TCRAN_ERR_INTERNAL
        }
    }
}

/// [`guard`] for entry points that return nothing (`tcran_free`): a
/// panic is swallowed after setting the last error.
pub fn guard_void(body: impl FnOnce()) {
    let _ = guard(|| {
        body();
        Ok(tcran_status::TCRAN_OK)
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn last() -> String {
        // SAFETY: the pointer is this thread's live CString.
        #[allow(unsafe_code)]
        unsafe { CStr::from_ptr(last_error_ptr()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn a_panic_becomes_an_internal_error_with_its_message() {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let s = guard(|| panic!("boom {}", 7));
        std::panic::set_hook(prev);
        assert_eq!(s, tcran_status::TCRAN_ERR_INTERNAL);
        assert_eq!(last(), "internal error in tcran: boom 7");
    }

    #[test]
    fn errors_set_the_message_and_successes_keep_it() {
        let s = guard(|| Err(Error::null("tc")));
        assert_eq!(
            (s, last()),
            (tcran_status::TCRAN_ERR_NULL, "tc is NULL".into())
        );
        assert_eq!(
            guard(|| Ok(tcran_status::TCRAN_EMPTY)),
            tcran_status::TCRAN_EMPTY
        );
        assert_eq!(last(), "tc is NULL");
    }

    #[test]
    fn toml_messages_become_one_line() {
        let e = toml::from_str::<toml::Value>("a = = 1").unwrap_err();
        let m = Error::parse("config", e).message;
        assert!(!m.contains('\n'), "{m}");
        assert!(m.starts_with("config: "), "{m}");
    }
}
