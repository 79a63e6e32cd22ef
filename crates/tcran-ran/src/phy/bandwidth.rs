//! Maximum transmission bandwidth configuration N_RB.
//!
//! - NR FR1: TS 38.101-1 Table 5.3.2-1 (= TS 38.104 Table 5.3.2-1), channel
//!   bandwidths 5..=100 MHz at SCS 15/30/60 kHz.
//! - NR FR2: TS 38.101-2 Table 5.3.2-1, 50..=400 MHz at SCS 60/120 kHz.
//! - LTE: TS 36.101 Table 5.6-1, 1.4..=20 MHz.
//!
//! Cells the tables mark "N/A" (e.g. FR1 5 MHz at 60 kHz, FR1 60 MHz at
//! 15 kHz, FR2 400 MHz at 60 kHz) are a [`ConfigError`], as is a bandwidth
//! the table does not list. The frequency range must be given because the
//! same (bandwidth, SCS) pair can differ between FR1 and FR2 (50 MHz at
//! 60 kHz: 65 in FR1, 66 in FR2).

use crate::phy::numerology::Numerology;
use crate::tables::{self, NrbTable};
use serde::{Deserialize, Serialize};
use tcran_core::ConfigError;

/// NR frequency range (TS 38.104 §5.1).
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
pub enum FrequencyRange {
    /// 410 MHz - 7.125 GHz.
    Fr1,
    /// 24.25 - 52.6 GHz (FR2-1).
    Fr2,
}

impl FrequencyRange {
    fn table(self) -> (&'static NrbTable, &'static str) {
        let t = tables::get();
        match self {
            FrequencyRange::Fr1 => (&t.nrb_fr1, "TS 38.101-1 Table 5.3.2-1"),
            FrequencyRange::Fr2 => (&t.nrb_fr2, "TS 38.101-2 Table 5.3.2-1"),
        }
    }

    /// Channel bandwidths (MHz) listed for this range.
    pub fn bandwidths_mhz(self) -> Vec<u32> {
        self.table().0.rows.iter().map(|r| r.0).collect()
    }
}

/// N_RB for a channel bandwidth in MHz and a numerology.
pub fn max_n_rb(
    fr: FrequencyRange,
    bandwidth_mhz: u32,
    scs: Numerology,
) -> Result<u16, ConfigError> {
    let (table, name) = fr.table();
    let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    let col = table
        .scs_khz
        .iter()
        .position(|&s| s == scs.scs_khz())
        .ok_or_else(|| {
            ConfigError::new(
                "scs",
                format!("{}kHz", scs.scs_khz()),
                format!(
                    "{fr:?} data channels use SCS {} kHz ({name})",
                    list(&table.scs_khz)
                ),
            )
        })?;
    let row = table
        .rows
        .iter()
        .find(|r| r.0 == bandwidth_mhz)
        .ok_or_else(|| {
            ConfigError::new(
                "bandwidth",
                format!("{bandwidth_mhz}MHz"),
                format!(
                    "must be one of {} MHz in {fr:?} ({name})",
                    list(&fr.bandwidths_mhz())
                ),
            )
        })?;
    row.1[col].ok_or_else(|| {
        ConfigError::new(
            "bandwidth",
            format!("{bandwidth_mhz}MHz"),
            format!(
                "not applicable at {} kHz SCS in {fr:?} ({name})",
                scs.scs_khz()
            ),
        )
    })
}

/// LTE N_RB for a channel bandwidth given in kHz (1400, 3000, 5000, 10000,
/// 15000, 20000), TS 36.101 Table 5.6-1.
pub fn lte_n_rb(bandwidth_khz: u32) -> Result<u16, ConfigError> {
    let t = &tables::get().lte_nrb;
    t.iter()
        .find(|r| r.0 == bandwidth_khz)
        .map(|r| r.1)
        .ok_or_else(|| {
            ConfigError::new(
                "bandwidth",
                format!("{bandwidth_khz}kHz"),
                "must be one of 1400, 3000, 5000, 10000, 15000, 20000 kHz (TS 36.101 Table 5.6-1)",
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use FrequencyRange::*;

    #[test]
    fn spot_checks_of_ts38101_table_5_3_2_1() {
        let mu = |m| Numerology::new(m).unwrap();
        assert_eq!(max_n_rb(Fr1, 5, mu(0)).unwrap(), 25);
        assert_eq!(max_n_rb(Fr1, 20, mu(0)).unwrap(), 106);
        assert_eq!(max_n_rb(Fr1, 50, mu(0)).unwrap(), 270);
        assert_eq!(max_n_rb(Fr1, 40, mu(1)).unwrap(), 106);
        assert_eq!(max_n_rb(Fr1, 100, mu(1)).unwrap(), 273);
        assert_eq!(max_n_rb(Fr1, 100, mu(2)).unwrap(), 135);
        assert_eq!(max_n_rb(Fr1, 35, mu(0)).unwrap(), 188);
        assert_eq!(max_n_rb(Fr1, 50, mu(2)).unwrap(), 65);
        assert_eq!(max_n_rb(Fr2, 50, mu(2)).unwrap(), 66);
        assert_eq!(max_n_rb(Fr2, 100, mu(3)).unwrap(), 66);
        assert_eq!(max_n_rb(Fr2, 400, mu(3)).unwrap(), 264);
        assert_eq!(lte_n_rb(5000).unwrap(), 25);
        assert_eq!(lte_n_rb(1400).unwrap(), 6);
        assert_eq!(lte_n_rb(20000).unwrap(), 100);
    }

    #[test]
    fn not_applicable_cells_are_config_errors() {
        let mu = |m| Numerology::new(m).unwrap();
        let e = max_n_rb(Fr1, 5, mu(2)).unwrap_err();
        assert_eq!(e.field, "bandwidth");
        assert!(e.allowed.contains("not applicable at 60 kHz"), "{e}");
        assert!(max_n_rb(Fr1, 60, mu(0)).is_err());
        assert!(max_n_rb(Fr2, 400, mu(2)).is_err());
        let e = max_n_rb(Fr1, 100, mu(3)).unwrap_err();
        assert_eq!(e.field, "scs");
        let e = max_n_rb(Fr1, 12, mu(0)).unwrap_err();
        assert!(e.allowed.contains("5, 10, 15"), "{e}");
        assert!(lte_n_rb(7000).is_err());
    }
}
