//! PHY abstraction: the numbers that turn radio resources into bytes.
//!
//! - [`numerology`]: subcarrier spacing and slot duration per µ (TS 38.211 §4.2).
//! - [`bandwidth`]: maximum N_RB per channel bandwidth and SCS (TS 38.101-1/-2
//!   Table 5.3.2-1; LTE TS 36.101 Table 5.6-1).
//! - [`mcs`]: NR MCS tables 1-3 (TS 38.214 Table 5.1.3.1-1..3), CQI tables 1-3
//!   (Table 5.2.2.1-2..4), the CQI -> MCS mapping, LTE MCS -> I_TBS (TS 36.213
//!   Table 7.1.7.1-1) and OAI's LTE CQI -> MCS.
//! - [`tbs`]: NR TBS (TS 38.214 §5.1.3.2), computed in exact integer
//!   arithmetic, and the LTE TBS table (TS 36.213 Table 7.1.7.2.1-1).
//! - [`tdd`]: FDD / TDD slot patterns ("DDDSU").

pub mod bandwidth;
pub mod mcs;
pub mod numerology;
pub mod tbs;
pub mod tdd;

use serde::{Deserialize, Serialize};
use std::fmt;

/// Modulation scheme of an MCS or CQI entry.
#[derive(
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Debug,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Modulation {
    Qpsk,
    Qam16,
    Qam64,
    Qam256,
}

impl Modulation {
    /// Modulation order Qm: bits per modulation symbol.
    pub const fn qm(self) -> u8 {
        match self {
            Modulation::Qpsk => 2,
            Modulation::Qam16 => 4,
            Modulation::Qam64 => 6,
            Modulation::Qam256 => 8,
        }
    }

    pub const fn from_qm(qm: u8) -> Option<Modulation> {
        match qm {
            2 => Some(Modulation::Qpsk),
            4 => Some(Modulation::Qam16),
            6 => Some(Modulation::Qam64),
            8 => Some(Modulation::Qam256),
            _ => None,
        }
    }

    /// The name the 3GPP tables print (`QPSK`, `16QAM`, ...).
    pub const fn spec_name(self) -> &'static str {
        match self {
            Modulation::Qpsk => "QPSK",
            Modulation::Qam16 => "16QAM",
            Modulation::Qam64 => "64QAM",
            Modulation::Qam256 => "256QAM",
        }
    }

    pub fn from_spec_name(s: &str) -> Option<Modulation> {
        [
            Modulation::Qpsk,
            Modulation::Qam16,
            Modulation::Qam64,
            Modulation::Qam256,
        ]
        .into_iter()
        .find(|m| m.spec_name() == s)
    }
}

impl fmt::Display for Modulation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.spec_name())
    }
}

/// A target code rate R, stored exactly as R x 1024 in tenths
/// (R = `x1024_tenths` / 10240).
///
/// Why tenths: the spec prints R x 1024 with at most one decimal (682.5 and
/// 916.5 in the 256QAM table), and the MATLAB TBS vectors use R = 0.1 and 0.9
/// (102.4 and 921.6). An integer numerator keeps N_info exact in the TBS
/// procedure (TS 38.214 §5.1.3.2 step 2), which matters right at the
/// 3824-bit boundary and at the rounding ties of step 4.
#[derive(
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Debug,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
pub struct CodeRate {
    x1024_tenths: u32,
}

impl CodeRate {
    /// `R x 1024 x 10`; must be in 1..=10240 (0 < R <= 1).
    pub const fn from_x1024_tenths(x1024_tenths: u32) -> Option<CodeRate> {
        if x1024_tenths == 0 || x1024_tenths > 10240 {
            None
        } else {
            Some(CodeRate { x1024_tenths })
        }
    }

    /// R x 1024 as an integer (e.g. 948 for R = 948/1024).
    pub const fn from_x1024(x1024: u32) -> Option<CodeRate> {
        CodeRate::from_x1024_tenths(x1024 * 10)
    }

    /// Parses R x 1024 as printed in the spec tables (`"948"`, `"682.5"`,
    /// `"102.4"`): digits with at most one decimal.
    pub fn parse_x1024(s: &str) -> Option<CodeRate> {
        let (int, frac) = match s.split_once('.') {
            Some((i, f)) => (i, f),
            None => (s, "0"),
        };
        if int.is_empty()
            || frac.len() != 1
            || !int.bytes().all(|b| b.is_ascii_digit())
            || !frac.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let int: u32 = int.parse().ok()?;
        let frac: u32 = frac.parse().ok()?;
        CodeRate::from_x1024_tenths(int.checked_mul(10)?.checked_add(frac)?)
    }

    pub const fn x1024_tenths(self) -> u32 {
        self.x1024_tenths
    }

    /// R x 1024 as printed in the spec.
    pub fn x1024(self) -> f64 {
        f64::from(self.x1024_tenths) / 10.0
    }

    /// R itself.
    pub fn as_f64(self) -> f64 {
        f64::from(self.x1024_tenths) / 10240.0
    }
}

impl fmt::Display for CodeRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (i, d) = (self.x1024_tenths / 10, self.x1024_tenths % 10);
        if d == 0 {
            write!(f, "{i}/1024")
        } else {
            write!(f, "{i}.{d}/1024")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_rate_parses_spec_notation_exactly() {
        assert_eq!(CodeRate::parse_x1024("948").unwrap().x1024_tenths(), 9480);
        assert_eq!(CodeRate::parse_x1024("682.5").unwrap().x1024_tenths(), 6825);
        assert_eq!(CodeRate::parse_x1024("102.4").unwrap().x1024_tenths(), 1024);
        assert!((CodeRate::parse_x1024("102.4").unwrap().as_f64() - 0.1).abs() < 1e-12);
        for bad in ["", ".5", "1.25", "abc", "-3", "0", "1024.1", "9.x"] {
            assert_eq!(CodeRate::parse_x1024(bad), None, "{bad}");
        }
        assert_eq!(
            CodeRate::parse_x1024("916.5").unwrap().to_string(),
            "916.5/1024"
        );
    }

    #[test]
    fn modulation_names_round_trip() {
        for qm in [2, 4, 6, 8] {
            let m = Modulation::from_qm(qm).unwrap();
            assert_eq!(m.qm(), qm);
            assert_eq!(Modulation::from_spec_name(m.spec_name()), Some(m));
        }
        assert_eq!(Modulation::from_qm(10), None);
    }
}
