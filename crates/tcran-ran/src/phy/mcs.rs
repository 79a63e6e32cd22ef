//! MCS and CQI tables.
//!
//! - NR PDSCH MCS index tables (TS 38.214 §5.1.3.1): Table 5.1.3.1-1
//!   ("qam64", table 1), 5.1.3.1-2 ("qam256", table 2), 5.1.3.1-3
//!   ("qam64LowSE", table 3). Each row gives Qm, the target code rate
//!   R x 1024 and the spectral efficiency; the last rows are *reserved*
//!   (modulation only, for retransmissions: 29-31 in tables 1 and 3, 28-31 in
//!   table 2).
//! - NR 4-bit CQI tables (TS 38.214 §5.2.2.1): Table 5.2.2.1-2 (table 1),
//!   5.2.2.1-3 (table 2, 256QAM), 5.2.2.1-4 (table 3, low SE). CQI 0 is "out of
//!   range".
//! - CQI -> MCS: not standardised. The embedded mapping is the one srsRAN
//!   (static table), OAI ("lowest MCS with the same Qm and R >= CQI rate") and
//!   5G-LENA ("highest MCS with SE <= CQI SE") all produce; CQI table *k* maps
//!   into MCS table *k*.
//! - LTE: TS 36.213 Table 7.1.7.1-1 (I_MCS -> Qm, I_TBS) and OpenAirInterface's
//!   CQI -> MCS table (`openair2/LAYER2/MAC/mac.h`, used by the thesis
//!   emulator's OAI runs).

use crate::phy::{CodeRate, Modulation};
use crate::tables;
use serde::{Deserialize, Serialize};
use std::fmt;
use tcran_core::config::check_range;
use tcran_core::ConfigError;

/// Which NR PDSCH MCS index table (RRC `mcs-Table`).
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
pub enum McsTable {
    /// Table 5.1.3.1-1, up to 64QAM (RRC default).
    #[serde(rename = "qam64")]
    Qam64,
    /// Table 5.1.3.1-2, up to 256QAM.
    #[serde(rename = "qam256")]
    Qam256,
    /// Table 5.1.3.1-3, 64QAM with low spectral efficiencies (URLLC).
    #[serde(rename = "qam64LowSE")]
    Qam64LowSe,
}

impl McsTable {
    pub const ALL: [McsTable; 3] = [McsTable::Qam64, McsTable::Qam256, McsTable::Qam64LowSe];

    /// The table number used in TS 38.214 (1, 2, 3).
    pub const fn number(self) -> u8 {
        self as u8 + 1
    }

    pub fn from_number(n: u8) -> Result<McsTable, ConfigError> {
        check_range("mcs_table", n, 1, 3).map(|n| McsTable::ALL[usize::from(n - 1)])
    }

    /// All 32 rows, index 0..=31.
    pub fn entries(self) -> &'static [McsEntry] {
        &tables::get().nr_mcs[self as usize]
    }

    /// Row `index` (0..=31), reserved rows included.
    pub fn entry(self, index: u8) -> Result<&'static McsEntry, ConfigError> {
        check_range("mcs", index, 0, 31)?;
        Ok(&self.entries()[usize::from(index)])
    }

    /// Highest non-reserved index (28 for tables 1 and 3, 27 for table 2).
    pub fn max_index(self) -> u8 {
        self.entries()
            .iter()
            .rev()
            .find(|e| !e.is_reserved())
            .map_or(0, |e| e.index)
    }
}

impl fmt::Display for McsTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            McsTable::Qam64 => "qam64",
            McsTable::Qam256 => "qam256",
            McsTable::Qam64LowSe => "qam64LowSE",
        };
        write!(f, "MCS table {} ({name})", self.number())
    }
}

/// One row of an NR MCS table.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct McsEntry {
    pub index: u8,
    pub modulation: Modulation,
    /// Target code rate; `None` for reserved rows.
    pub rate: Option<CodeRate>,
    /// Qm·R as printed in the spec (4 decimals); `None` for reserved rows.
    pub spectral_efficiency: Option<f64>,
}

impl McsEntry {
    pub fn is_reserved(&self) -> bool {
        self.rate.is_none()
    }
    pub fn qm(&self) -> u8 {
        self.modulation.qm()
    }
}

/// An MCS as link adaptation picks it: a table and a non-reserved index.
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
pub struct Mcs {
    pub table: McsTable,
    pub index: u8,
}

impl Mcs {
    /// Checks the index exists and is not reserved (reserved indices only
    /// signal a retransmission's modulation; they have no TBS of their own).
    pub fn new(table: McsTable, index: u8) -> Result<Mcs, ConfigError> {
        let max = table.max_index();
        check_range("mcs", index, 0, max).map_err(|e| ConfigError {
            allowed: format!("{} ({table}; {}..=31 are reserved)", e.allowed, max + 1),
            ..e
        })?;
        Ok(Mcs { table, index })
    }

    /// The table row.
    pub fn entry(self) -> &'static McsEntry {
        &self.table.entries()[usize::from(self.index.min(31))]
    }
}

impl fmt::Display for Mcs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MCS {} of table {}", self.index, self.table.number())
    }
}

/// Which NR CQI table (RRC `cqi-Table`).
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
pub enum CqiTable {
    /// Table 5.2.2.1-2 (also LTE TS 36.213 Table 7.2.3-1).
    #[serde(rename = "table1")]
    Table1,
    /// Table 5.2.2.1-3 (256QAM).
    #[serde(rename = "table2")]
    Table2,
    /// Table 5.2.2.1-4 (low SE).
    #[serde(rename = "table3")]
    Table3,
}

/// One row of an NR CQI table (CQI 1..=15).
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct CqiEntry {
    pub index: u8,
    pub modulation: Modulation,
    pub rate: CodeRate,
    pub efficiency: f64,
}

impl CqiTable {
    pub const ALL: [CqiTable; 3] = [CqiTable::Table1, CqiTable::Table2, CqiTable::Table3];

    pub const fn number(self) -> u8 {
        self as u8 + 1
    }

    pub fn from_number(n: u8) -> Result<CqiTable, ConfigError> {
        check_range("cqi_table", n, 1, 3).map(|n| CqiTable::ALL[usize::from(n - 1)])
    }

    /// The MCS table the CQI -> MCS mapping targets (CQI table k -> MCS table k).
    pub const fn mcs_table(self) -> McsTable {
        McsTable::ALL[self as usize]
    }

    /// Row `cqi` (0..=15); `Ok(None)` for CQI 0 ("out of range").
    pub fn entry(self, cqi: u8) -> Result<Option<&'static CqiEntry>, ConfigError> {
        check_range("cqi", cqi, 0, 15)?;
        Ok(tables::get().nr_cqi[self as usize][usize::from(cqi)].as_ref())
    }

    /// The highest CQI whose efficiency does not exceed `efficiency` (0:
    /// none does): what a UE reports for a channel of that efficiency.
    pub fn cqi_at_most(self, efficiency: f64) -> u8 {
        (1..=15u8)
            .rev()
            .find(|&c| {
                self.entry(c)
                    .ok()
                    .flatten()
                    .is_some_and(|e| e.efficiency <= efficiency)
            })
            .unwrap_or(0)
    }

    /// CQI -> MCS (in [`CqiTable::mcs_table`]); `Ok(None)` for CQI 0, where
    /// nothing should be scheduled.
    pub fn to_mcs(self, cqi: u8) -> Result<Option<Mcs>, ConfigError> {
        check_range("cqi", cqi, 0, 15)?;
        Ok(
            tables::get().nr_cqi_to_mcs[self as usize][usize::from(cqi)].map(|m| Mcs {
                table: self.mcs_table(),
                index: m[0],
            }),
        )
    }
}

/// One row of LTE TS 36.213 Table 7.1.7.1-1.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct LteMcsEntry {
    pub index: u8,
    pub modulation: Modulation,
    /// TBS index; `None` for the reserved rows 29-31.
    pub i_tbs: Option<u8>,
}

/// LTE PDSCH I_MCS (0..=31) -> (Qm, I_TBS), TS 36.213 Table 7.1.7.1-1.
pub fn lte_mcs(i_mcs: u8) -> Result<&'static LteMcsEntry, ConfigError> {
    check_range("mcs", i_mcs, 0, 31)?;
    Ok(&tables::get().lte_mcs[usize::from(i_mcs)])
}

/// LTE CQI (0..=15) -> I_MCS as OpenAirInterface does it (`cqi_to_mcs[16]`).
/// CQI 0 maps to MCS 0 there (OAI keeps transmitting); callers that want an
/// outage at CQI 0 must check for it themselves.
pub fn lte_cqi_to_mcs_oai(cqi: u8) -> Result<u8, ConfigError> {
    check_range("cqi", cqi, 0, 15)?;
    Ok(tables::get().lte_cqi_to_mcs[usize::from(cqi)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nr_mcs_spot_values() {
        let e = McsTable::Qam256.entry(27).unwrap();
        assert_eq!((e.qm(), e.rate.unwrap().x1024()), (8, 948.0));
        assert_eq!(
            McsTable::Qam256.entry(20).unwrap().rate.unwrap().x1024(),
            682.5
        );
        assert!(McsTable::Qam256.entry(28).unwrap().is_reserved());
        assert_eq!(
            McsTable::Qam64.entry(17).unwrap().spectral_efficiency,
            Some(2.5664)
        );
        assert_eq!(
            McsTable::Qam64LowSe.entry(0).unwrap().rate.unwrap().x1024(),
            30.0
        );
        assert_eq!(McsTable::Qam64.max_index(), 28);
        assert_eq!(McsTable::Qam256.max_index(), 27);
        assert_eq!(McsTable::Qam64LowSe.max_index(), 28);
        assert!(McsTable::Qam64.entry(32).is_err());
    }

    #[test]
    fn mcs_new_rejects_reserved_indices() {
        assert!(Mcs::new(McsTable::Qam64, 28).is_ok());
        let e = Mcs::new(McsTable::Qam256, 28).unwrap_err();
        assert_eq!(
            e.to_string(),
            "mcs = 28: must be in 0..=27 (MCS table 2 (qam256); 28..=31 are reserved)"
        );
    }

    #[test]
    fn cqi_to_mcs_rows_of_the_three_stacks() {
        let map = |t: CqiTable| -> Vec<u8> {
            (1..=15)
                .map(|c| t.to_mcs(c).unwrap().unwrap().index)
                .collect()
        };
        assert_eq!(
            map(CqiTable::Table1),
            [0, 0, 2, 4, 6, 8, 11, 13, 15, 18, 20, 22, 24, 26, 28]
        );
        assert_eq!(
            map(CqiTable::Table2),
            [0, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27]
        );
        assert_eq!(
            map(CqiTable::Table3),
            (1..=15).map(|c| 2 * c - 2).collect::<Vec<u8>>()
        );
        assert_eq!(CqiTable::Table2.to_mcs(0).unwrap(), None);
        assert_eq!(
            CqiTable::Table2.to_mcs(15).unwrap().unwrap().table,
            McsTable::Qam256
        );
        assert!(CqiTable::Table1.to_mcs(16).is_err());
        // The three implementation columns agree on every row.
        for t in &tables::get().nr_cqi_to_mcs {
            for m in t.iter().flatten() {
                assert!(m[0] == m[1] && m[1] == m[2]);
            }
        }
    }

    #[test]
    fn cqi_to_mcs_follows_the_oai_and_lena_rules() {
        // Re-derive the mapping from the two tables: OAI rule (lowest MCS with
        // the same Qm and R >= CQI rate) and LENA rule (highest MCS with SE <=
        // CQI SE).
        for t in CqiTable::ALL {
            for cqi in 1..=15 {
                let c = t.entry(cqi).unwrap().unwrap();
                let rows = t.mcs_table().entries().iter().filter(|e| !e.is_reserved());
                let oai = rows
                    .clone()
                    .find(|e| e.modulation == c.modulation && e.rate.unwrap() >= c.rate)
                    .unwrap()
                    .index;
                let lena = rows
                    .filter(|e| e.spectral_efficiency.unwrap() <= c.efficiency)
                    .map(|e| e.index)
                    .max()
                    .unwrap_or(0); // LENA falls back to MCS 0 below the lowest SE
                let got = t.to_mcs(cqi).unwrap().unwrap().index;
                assert_eq!((got, got), (oai, lena), "{t:?} CQI {cqi}");
            }
        }
    }

    #[test]
    fn lte_tables() {
        assert_eq!(lte_mcs(10).unwrap().i_tbs, Some(9));
        assert_eq!(lte_mcs(17).unwrap().i_tbs, Some(15));
        assert_eq!(lte_mcs(28).unwrap().i_tbs, Some(26));
        assert_eq!(lte_mcs(29).unwrap().i_tbs, None);
        assert_eq!(lte_mcs(17).unwrap().modulation, Modulation::Qam64);
        let oai: Vec<u8> = (0..=15).map(|c| lte_cqi_to_mcs_oai(c).unwrap()).collect();
        assert_eq!(
            oai,
            [0, 0, 1, 2, 4, 6, 8, 11, 13, 16, 18, 20, 23, 25, 27, 28]
        );
        assert!(lte_cqi_to_mcs_oai(16).is_err());
    }
}
