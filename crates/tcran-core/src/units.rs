//! Quantities with units. Configuration always spells the unit out
//! (`"5ms"`, `"15Mbit/s"`, `"1500B"`): a bare number is rejected, because a
//! rate of `15` could be bits, bytes, kilo or mega, and guessing is how
//! experiments go silently wrong.
//!
//! Decimal prefixes are powers of 1000 (SI, as in `tc` and iperf3 `-f`);
//! binary prefixes (`KiB`, `MiB`) are powers of 1024.

use crate::time::Duration;
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A number of bytes.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ByteSize(pub u64);

/// A data rate in bits per second.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct BitRate(pub u64);

impl ByteSize {
    pub const fn bytes(self) -> u64 {
        self.0
    }
}

impl BitRate {
    pub const fn from_bps(bps: u64) -> Self {
        BitRate(bps)
    }
    pub const fn from_mbps(mbps: u64) -> Self {
        BitRate(mbps * 1_000_000)
    }
    pub const fn bps(self) -> u64 {
        self.0
    }
    pub fn mbps(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub fn bytes_per_sec(self) -> f64 {
        self.0 as f64 / 8.0
    }
    /// Bytes that this rate carries in `d` (real-valued).
    pub fn bytes_in(self, d: Duration) -> f64 {
        self.bytes_per_sec() * d.as_secs_f64()
    }
    /// Time to send `bytes` at this rate; `Duration::MAX` for a zero rate.
    pub fn time_to_send(self, bytes: u64) -> Duration {
        if self.0 == 0 {
            return Duration::MAX;
        }
        let ns = (bytes as u128 * 8 * 1_000_000_000).div_ceil(self.0 as u128);
        Duration::from_nanos(ns.min(u64::MAX as u128) as u64)
    }
}

/// What went wrong when reading a quantity.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{input:?} is not a {what}: expected a number followed by one of {units}")]
pub struct UnitError {
    pub input: String,
    pub what: &'static str,
    pub units: &'static str,
}

const DURATION_UNITS: &str = "ns, us, ms, s";
const SIZE_UNITS: &str = "B, kB, KiB, MB, MiB, GB, GiB";
const RATE_UNITS: &str =
    "bit/s, kbit/s, Mbit/s, Gbit/s (or bps, kbps, Mbps, Gbps), B/s, kB/s, MB/s";

/// Splits `"12.5 ms"` into `(12.5, "ms")`.
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == '_'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let num: String = num.chars().filter(|c| *c != '_').collect();
    let value: f64 = num.parse().ok()?;
    value.is_finite().then_some((value, unit.trim()))
}

fn to_u64(x: f64) -> Option<u64> {
    (x >= 0.0 && x <= u64::MAX as f64).then(|| x.round() as u64)
}

pub fn parse_duration(s: &str) -> Result<Duration, UnitError> {
    let err = || UnitError {
        input: s.to_string(),
        what: "duration",
        units: DURATION_UNITS,
    };
    let (v, unit) = split_number(s).ok_or_else(err)?;
    let scale = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return Err(err()),
    };
    to_u64(v * scale).map(Duration::from_nanos).ok_or_else(err)
}

pub fn parse_size(s: &str) -> Result<ByteSize, UnitError> {
    let err = || UnitError {
        input: s.to_string(),
        what: "byte size",
        units: SIZE_UNITS,
    };
    let (v, unit) = split_number(s).ok_or_else(err)?;
    let scale = match unit {
        "B" => 1.0,
        "kB" | "KB" => 1e3,
        "KiB" => 1024.0,
        "MB" => 1e6,
        "MiB" => 1024.0 * 1024.0,
        "GB" => 1e9,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(err()),
    };
    to_u64(v * scale).map(ByteSize).ok_or_else(err)
}

pub fn parse_rate(s: &str) -> Result<BitRate, UnitError> {
    let err = || UnitError {
        input: s.to_string(),
        what: "bit rate",
        units: RATE_UNITS,
    };
    let (v, unit) = split_number(s).ok_or_else(err)?;
    let scale = match unit {
        "bit/s" | "bps" => 1.0,
        "kbit/s" | "kbps" => 1e3,
        "Mbit/s" | "Mbps" => 1e6,
        "Gbit/s" | "Gbps" => 1e9,
        "B/s" => 8.0,
        "kB/s" | "KB/s" => 8e3,
        "MB/s" => 8e6,
        _ => return Err(err()),
    };
    to_u64(v * scale).map(BitRate).ok_or_else(err)
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b != 0 && b.is_multiple_of(1_000_000) {
            write!(f, "{}MB", b / 1_000_000)
        } else if b != 0 && b.is_multiple_of(1_000) {
            write!(f, "{}kB", b / 1_000)
        } else {
            write!(f, "{}B", b)
        }
    }
}
impl fmt::Debug for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
impl fmt::Display for BitRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b != 0 && b.is_multiple_of(1_000_000_000) {
            write!(f, "{}Gbit/s", b / 1_000_000_000)
        } else if b != 0 && b.is_multiple_of(1_000_000) {
            write!(f, "{}Mbit/s", b / 1_000_000)
        } else if b != 0 && b.is_multiple_of(1_000) {
            write!(f, "{}kbit/s", b / 1_000)
        } else {
            write!(f, "{}bit/s", b)
        }
    }
}
impl fmt::Debug for BitRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

macro_rules! unit_serde {
    ($ty:ty, $parse:ident, $expect:literal) => {
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl de::Visitor<'_> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($expect)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$ty, E> {
                        $parse(s).map_err(E::custom)
                    }
                }
                d.deserialize_str(V)
            }
        }
    };
}

unit_serde!(
    Duration,
    parse_duration,
    "a duration string with a unit, like \"5ms\" (units: ns, us, ms, s)"
);
unit_serde!(
    ByteSize,
    parse_size,
    "a size string with a unit, like \"1500B\" or \"5MB\""
);
unit_serde!(
    BitRate,
    parse_rate,
    "a rate string with a unit, like \"15Mbit/s\""
);

/// JSON Schema of the unit strings, for `tcran schema` and `tcran stages`:
/// a string with a pattern that accepts what the parser accepts (a decimal
/// number with optional `_` separators, then a unit) and a description that
/// lists the units.
macro_rules! unit_schema {
    ($ty:ty, $name:literal, $what:literal, $units_pattern:literal, $units:expr, $example:literal) => {
        impl schemars::JsonSchema for $ty {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                $name.into()
            }
            fn schema_id() -> std::borrow::Cow<'static, str> {
                concat!("tcran_core::", $name).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({
                    "type": "string",
                    "pattern": concat!(r"^\s*([0-9][0-9_]*(\.[0-9_]*)?|\.[0-9][0-9_]*)\s*(", $units_pattern, r")\s*$"),
                    "description": format!(
                        "A {} written with its unit, like \"{}\"; a bare number is rejected. Units: {}.",
                        $what, $example, $units
                    ),
                    "examples": [$example],
                })
            }
        }
    };
}

unit_schema!(
    Duration,
    "Duration",
    "duration",
    "ns|us|µs|ms|s",
    DURATION_UNITS,
    "5ms"
);
unit_schema!(
    ByteSize,
    "ByteSize",
    "byte size (decimal prefixes are powers of 1000, binary ones of 1024)",
    "B|kB|KB|KiB|MB|MiB|GB|GiB",
    SIZE_UNITS,
    "1500B"
);
unit_schema!(
    BitRate,
    "BitRate",
    "bit rate (decimal prefixes, powers of 1000)",
    r"bit/s|bps|kbit/s|kbps|Mbit/s|Mbps|Gbit/s|Gbps|B/s|kB/s|KB/s|MB/s",
    RATE_UNITS,
    "15Mbit/s"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_unit() {
        assert_eq!(parse_duration("5ms").unwrap(), Duration::from_millis(5));
        assert_eq!(
            parse_duration("2.5 s").unwrap(),
            Duration::from_millis(2500)
        );
        assert_eq!(parse_duration("125us").unwrap(), Duration::from_micros(125));
        assert_eq!(parse_size("5MB").unwrap(), ByteSize(5_000_000));
        assert_eq!(parse_size("1KiB").unwrap(), ByteSize(1024));
        assert_eq!(parse_size("1_500B").unwrap(), ByteSize(1500));
        assert_eq!(parse_rate("15Mbit/s").unwrap(), BitRate(15_000_000));
        assert_eq!(parse_rate("15 Mbps").unwrap(), BitRate(15_000_000));
        assert_eq!(parse_rate("1MB/s").unwrap(), BitRate(8_000_000));
    }

    #[test]
    fn rejects_missing_or_wrong_units_with_the_allowed_list() {
        let e = parse_duration("5").unwrap_err();
        assert!(e.to_string().contains("ns, us, ms, s"), "{e}");
        assert!(parse_rate("15Mb").is_err());
        assert!(parse_size("-3B").is_err());
        assert!(parse_duration("ms").is_err());
        assert!(parse_duration("1e400s").is_err());
    }

    #[test]
    fn display_round_trips() {
        for s in ["5ms", "125us", "3s", "1500ns"] {
            assert_eq!(parse_duration(s).unwrap().to_string(), s);
        }
        for s in ["15Mbit/s", "64kbit/s", "1Gbit/s", "7bit/s"] {
            assert_eq!(parse_rate(s).unwrap().to_string(), s);
        }
        for s in ["5MB", "3kB", "1499B"] {
            assert_eq!(parse_size(s).unwrap().to_string(), s);
        }
    }

    #[test]
    fn time_to_send_rounds_up() {
        // 1500 B at 12 Mbit/s = 1 ms exactly; one more byte needs a little more.
        assert_eq!(
            BitRate::from_mbps(12).time_to_send(1500),
            Duration::from_millis(1)
        );
        assert!(BitRate::from_mbps(12).time_to_send(1501) > Duration::from_millis(1));
        assert_eq!(BitRate(0).time_to_send(1), Duration::MAX);
    }
}
