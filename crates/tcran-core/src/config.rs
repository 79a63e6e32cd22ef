//! The one error type every configuration `build()` returns.
//!
//! It names the field (a dotted path such as `queues[2].target`), the value
//! that was given and what is allowed, so a front end can print a single line
//! like `scenario.toml: queues[2].target = "0ms": must be in 1us..=10s`.

use std::fmt;

/// A configuration value that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// Dotted path of the offending field.
    pub field: String,
    /// The value as the user wrote it (or as it was read).
    pub value: String,
    /// What is allowed instead.
    pub allowed: String,
}

impl ConfigError {
    pub fn new(
        field: impl Into<String>,
        value: impl fmt::Display,
        allowed: impl Into<String>,
    ) -> Self {
        ConfigError {
            field: field.into(),
            value: value.to_string(),
            allowed: allowed.into(),
        }
    }

    /// Prefixes the field path, for errors bubbling up from nested configs.
    pub fn within(mut self, parent: impl fmt::Display) -> Self {
        self.field = if self.field.is_empty() {
            parent.to_string()
        } else if self.field.starts_with('[') {
            format!("{parent}{}", self.field)
        } else {
            format!("{parent}.{}", self.field)
        };
        self
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} = {}: {}", self.field, self.value, self.allowed)
    }
}

impl std::error::Error for ConfigError {}

/// Checks `lo <= value <= hi` and names the field otherwise.
pub fn check_range<T: PartialOrd + fmt::Display + Copy>(
    field: &str,
    value: T,
    lo: T,
    hi: T,
) -> Result<T, ConfigError> {
    if value >= lo && value <= hi {
        Ok(value)
    } else {
        Err(ConfigError::new(
            field,
            value,
            format!("must be in {lo}..={hi}"),
        ))
    }
}

/// Longest name of a flow or a variant, in characters.
pub const MAX_NAME_CHARS: usize = 100;

/// Checks a name that tables, CSV rows, file names and reports carry:
/// 1 to [`MAX_NAME_CHARS`] characters, none of them a control character
/// (a NUL or a newline would break a file name or a CSV row).
pub fn check_name(field: &str, name: &str) -> Result<(), ConfigError> {
    let shown = || {
        let head: String = name.chars().take(40).collect();
        if name.chars().count() > 40 {
            format!("{head:?}...")
        } else {
            format!("{head:?}")
        }
    };
    let n = name.chars().count();
    if n == 0 || n > MAX_NAME_CHARS {
        return Err(ConfigError::new(
            field,
            shown(),
            format!("must be 1 to {MAX_NAME_CHARS} characters long (it has {n})"),
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(ConfigError::new(
            field,
            shown(),
            "must not contain control characters (NUL, tab, newline, ...)",
        ));
    }
    Ok(())
}

/// Checks a real number is finite and within `[lo, hi]`.
pub fn check_f64(field: &str, value: f64, lo: f64, hi: f64) -> Result<f64, ConfigError> {
    if value.is_finite() && value >= lo && value <= hi {
        Ok(value)
    } else {
        Err(ConfigError::new(
            field,
            value,
            format!("must be a number in {lo}..={hi}"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    /// A name fits a file name and a CSV cell: not empty, at most 100
    /// characters (a 15 MB name once passed and blew up every CSV row), no
    /// control character (a NUL once passed validation and failed the
    /// PDF writer after the whole run).
    #[test]
    fn names_are_short_and_printable() {
        assert!(check_name("flows[0].name", "bulk").is_ok());
        assert!(check_name("flows[0].name", &"é".repeat(MAX_NAME_CHARS)).is_ok());
        let long = check_name("flows[0].name", &"x".repeat(15_000_000)).unwrap_err();
        assert_eq!(
            long.to_string(),
            format!(
                "flows[0].name = \"{}\"...: must be 1 to 100 characters long (it has 15000000)",
                "x".repeat(40)
            )
        );
        assert!(check_name("flows[0].name", "").is_err());
        let nul = check_name("variants[1].name", "a\0b").unwrap_err();
        assert_eq!(
            nul.to_string(),
            "variants[1].name = \"a\\0b\": must not contain control characters (NUL, tab, newline, ...)"
        );
        assert!(check_name("flows[0].name", "two\nlines").is_err());
    }

    #[test]
    fn range_error_names_field_value_and_range() {
        let e = check_range(
            "target",
            Duration::ZERO,
            Duration::from_micros(1),
            Duration::from_secs(10),
        )
        .unwrap_err()
        .within("queues[2]");
        assert_eq!(
            e.to_string(),
            "queues[2].target = 0ms: must be in 1us..=10s"
        );
    }

    #[test]
    fn f64_check_rejects_nan() {
        assert!(check_f64("alpha", f64::NAN, 0.0, 1.0).is_err());
        assert!(check_f64("alpha", 0.5, 0.0, 1.0).is_ok());
    }
}
