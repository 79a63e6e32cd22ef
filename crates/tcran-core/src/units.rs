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

/// What went wrong when reading a quantity: the text, what it should have
/// been and why it is not (no unit, a negative number, out of range).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{input:?} is not a {what}: {problem}")]
pub struct UnitError {
    pub input: String,
    pub what: &'static str,
    pub problem: String,
}

const DURATION_UNITS: &str = "ns, us, ms, s, min, h";
const SIZE_UNITS: &str = "B, kB, KiB, MB, MiB, GB, GiB";
const RATE_UNITS: &str =
    "bit/s, kbit/s, Mbit/s, Gbit/s (or bps, kbps, Mbps, Gbps), B/s, kB/s, MB/s";

/// A non-negative decimal number as written: its integer digits and its
/// fractional digits (`_` separators removed), e.g. `"12.5"` -> `("12", "5")`.
struct Decimal {
    int: String,
    frac: String,
}

/// Fractional digits kept: with scales below 10^13 (hours in ns), digits
/// after the 25th change a value by less than 10^-12 of its base unit.
const FRAC_DIGITS: usize = 25;

impl Decimal {
    /// `self x scale` in base units, rounded half up, computed exactly in
    /// integers (no binary floating point: `18446744073s` is exact);
    /// `None` when it does not fit in a u64.
    fn times(&self, scale: u64) -> Option<u64> {
        let digits = |d: &str| -> Option<u128> {
            d.bytes().try_fold(0u128, |acc, b| {
                acc.checked_mul(10)?.checked_add(u128::from(b - b'0'))
            })
        };
        let int = digits(&self.int)?;
        let frac = &self.frac[..self.frac.len().min(FRAC_DIGITS)];
        // frac < 10^25 < 2^84 and every scale is below 2^42: the product
        // fits in a u128 (checked all the same).
        let den = 10u128.pow(frac.len() as u32);
        let num = digits(frac)?.checked_mul(u128::from(scale))?;
        let frac_part = (num + den / 2) / den;
        let total = int.checked_mul(u128::from(scale))?.checked_add(frac_part)?;
        u64::try_from(total).ok()
    }
}

/// Splits `"12.5 ms"` into `(12.5, "ms")`; `None` unless the number has at
/// least one digit and at most one decimal point.
fn split_number(s: &str) -> Option<(Decimal, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == '_'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let num: String = num.chars().filter(|c| *c != '_').collect();
    let (int, frac) = num.split_once('.').unwrap_or((&num, ""));
    if frac.contains('.') || (int.is_empty() && frac.is_empty()) {
        return None;
    }
    let decimal = Decimal {
        int: int.to_string(),
        frac: frac.to_string(),
    };
    Some((decimal, unit.trim()))
}

/// One kind of quantity: its name in messages, its units with their scale
/// to the base unit, and how the largest value (`u64::MAX` base units) reads.
struct Quantity {
    what: &'static str,
    units: &'static str,
    scales: &'static [(&'static str, u64)],
    largest: &'static str,
}

const DURATION: Quantity = Quantity {
    what: "duration",
    units: DURATION_UNITS,
    scales: &[
        ("ns", 1),
        ("us", 1_000),
        ("µs", 1_000),
        ("ms", 1_000_000),
        ("s", 1_000_000_000),
        ("min", 60_000_000_000),
        ("h", 3_600_000_000_000),
    ],
    // Durations are u64 nanoseconds.
    largest: "18446744073s (2^64-1 ns, about 584 years)",
};

const SIZE: Quantity = Quantity {
    what: "byte size",
    units: SIZE_UNITS,
    scales: &[
        ("B", 1),
        ("kB", 1_000),
        ("KB", 1_000),
        ("KiB", 1 << 10),
        ("MB", 1_000_000),
        ("MiB", 1 << 20),
        ("GB", 1_000_000_000),
        ("GiB", 1 << 30),
    ],
    largest: "18446744073709551615B (2^64-1 bytes)",
};

const RATE: Quantity = Quantity {
    what: "bit rate",
    units: RATE_UNITS,
    scales: &[
        ("bit/s", 1),
        ("bps", 1),
        ("kbit/s", 1_000),
        ("kbps", 1_000),
        ("Mbit/s", 1_000_000),
        ("Mbps", 1_000_000),
        ("Gbit/s", 1_000_000_000),
        ("Gbps", 1_000_000_000),
        ("B/s", 8),
        ("kB/s", 8_000),
        ("KB/s", 8_000),
        ("MB/s", 8_000_000),
    ],
    largest: "18446744073709551615bit/s (2^64-1 bit/s)",
};

impl Quantity {
    /// The value in base units (rounded to the nearest, half up), or why there is
    /// none: the message says what was wrong with the text, so that `-5s`
    /// is not answered with "expected a number followed by a unit".
    fn parse(&self, s: &str) -> Result<u64, UnitError> {
        let err = |problem: String| UnitError {
            input: s.to_string(),
            what: self.what,
            problem,
        };
        let scale_of = |unit: &str| {
            self.scales
                .iter()
                .find(|(u, _)| *u == unit)
                .map(|(_, scale)| *scale)
        };
        let syntax = || {
            err(format!(
                "expected a number followed by one of {}",
                self.units
            ))
        };
        if let Some(rest) = s.trim().strip_prefix('-') {
            // A well-formed negative quantity: say what is wrong with it.
            return Err(match split_number(rest) {
                Some((_, unit)) if scale_of(unit).is_some() => {
                    err(format!("negative {}s are not allowed", self.what))
                }
                _ => syntax(),
            });
        }
        let (v, unit) = split_number(s).ok_or_else(syntax)?;
        let scale = scale_of(unit).ok_or_else(syntax)?;
        v.times(scale).ok_or_else(|| {
            err(format!(
                "too large: the largest {} is {}",
                self.what, self.largest
            ))
        })
    }
}

/// A duration: a number and one of ns, us (µs), ms, s, min, h.
pub fn parse_duration(s: &str) -> Result<Duration, UnitError> {
    DURATION.parse(s).map(Duration::from_nanos)
}

/// A byte size: a number and one of B, kB, KiB, MB, MiB, GB, GiB.
pub fn parse_size(s: &str) -> Result<ByteSize, UnitError> {
    SIZE.parse(s).map(ByteSize)
}

/// A bit rate: a number and one of bit/s, kbit/s, Mbit/s, Gbit/s (or bps,
/// kbps, Mbps, Gbps), B/s, kB/s, MB/s.
pub fn parse_rate(s: &str) -> Result<BitRate, UnitError> {
    RATE.parse(s).map(BitRate)
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
    "a duration string with a unit, like \"5ms\" (units: ns, us, ms, s, min, h)"
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
    "ns|us|µs|ms|s|min|h",
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
    fn minutes_and_hours() {
        assert_eq!(parse_duration("2min").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1.5h").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("24 h").unwrap(), Duration::from_secs(86_400));
        // Minutes are `min`: `m` would read as metres or be confused with `ms`.
        assert!(parse_duration("2m").is_err());
    }

    #[test]
    fn negative_and_huge_values_say_why_they_are_refused() {
        let e = parse_duration("-5s").unwrap_err().to_string();
        assert_eq!(
            e,
            "\"-5s\" is not a duration: negative durations are not allowed"
        );
        let e = parse_size("-3B").unwrap_err().to_string();
        assert!(e.contains("negative byte sizes are not allowed"), "{e}");
        // A minus sign before something that is not a quantity is a syntax error.
        let e = parse_duration("-fast").unwrap_err().to_string();
        assert!(e.contains("expected a number followed by one of"), "{e}");
        let e = parse_duration("99999999999999999999s")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("too large: the largest duration is 18446744073s"),
            "{e}"
        );
        let e = parse_rate(&format!("{}Gbit/s", "9".repeat(400)))
            .unwrap_err()
            .to_string();
        assert!(e.contains("too large"), "{e}");
        // The largest duration itself is accepted, to the nanosecond.
        assert_eq!(
            parse_duration("18446744073s").unwrap(),
            Duration::from_secs(18_446_744_073)
        );
        assert_eq!(
            parse_duration("18446744073.709551615s").unwrap().as_nanos(),
            u64::MAX
        );
        assert!(parse_duration("18446744073.709551616s").is_err());
        assert!(parse_duration("1.2.3s").is_err());
        assert!(parse_duration(".s").is_err());
    }

    #[test]
    fn decimals_are_exact_and_round_half_up() {
        // 0.1 and 0.3 have no exact binary form; the decimal parse is exact.
        assert_eq!(parse_duration("0.3ms").unwrap().as_nanos(), 300_000);
        assert_eq!(
            parse_duration("2.0000000015s").unwrap().as_nanos(),
            2_000_000_002
        );
        assert_eq!(
            parse_duration("2.0000000014s").unwrap().as_nanos(),
            2_000_000_001
        );
        assert_eq!(parse_duration(".5us").unwrap().as_nanos(), 500);
        assert_eq!(parse_duration("5.s").unwrap().as_nanos(), 5_000_000_000);
        assert_eq!(parse_size("1.5KiB").unwrap(), ByteSize(1536));
        assert_eq!(parse_rate("0.125B/s").unwrap(), BitRate(1));
        // Digits past the 25th decimal place are below 10^-12 ns.
        assert_eq!(
            parse_duration(&format!("1.{}ns", "0".repeat(40)))
                .unwrap()
                .as_nanos(),
            1
        );
    }

    proptest::proptest! {
        /// Every integer and every value with up to nine decimals reads as
        /// the exact product with its unit's scale.
        #[test]
        fn integer_and_decimal_values_are_exact(int in 0u64..100_000_000, frac in 0u64..1_000_000_000) {
            let ns = u128::from(int) * 1_000_000_000 + u128::from(frac);
            proptest::prop_assert_eq!(
                u128::from(parse_duration(&format!("{int}.{frac:09}s")).unwrap().as_nanos()),
                ns
            );
            proptest::prop_assert_eq!(
                u128::from(parse_duration(&format!("{int}ms")).unwrap().as_nanos()),
                u128::from(int) * 1_000_000
            );
        }
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
