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
