//! The compiled-in 3GPP tables (`data/3gpp/*.csv`, see the README there),
//! parsed once on first use. The raw files are public as `(name, text)` so a
//! front end can show them and tests can compare them with their origin.
//!
//! The CSVs are fixed at compile time, so a parse failure is a build defect,
//! not a run-time condition: it panics with the file and line, and the unit
//! test `embedded_tables_parse` makes sure it never ships.

use crate::phy::mcs::{CqiEntry, LteMcsEntry, McsEntry};
use crate::phy::{CodeRate, Modulation};
use std::sync::OnceLock;

macro_rules! table_file {
    ($name:ident, $file:literal) => {
        pub const $name: (&str, &str) = (
            $file,
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/data/3gpp/", $file)),
        );
    };
}

table_file!(NR_MCS1, "nr_mcs_table1_64qam_38214_t5.1.3.1-1.csv");
table_file!(NR_MCS2, "nr_mcs_table2_256qam_38214_t5.1.3.1-2.csv");
table_file!(NR_MCS3, "nr_mcs_table3_64qam_lowse_38214_t5.1.3.1-3.csv");
table_file!(NR_CQI1, "nr_cqi_table1_38214_t5.2.2.1-2.csv");
table_file!(NR_CQI2, "nr_cqi_table2_38214_t5.2.2.1-3.csv");
table_file!(NR_CQI3, "nr_cqi_table3_38214_t5.2.2.1-4.csv");
table_file!(NR_CQI_TO_MCS, "nr_cqi_to_mcs_mappings.csv");
table_file!(NR_TBS_SMALL, "nr_tbs_table_38214_t5.1.3.2-1.csv");
table_file!(NR_NRB_FR1, "nr_max_nrb_fr1_38101-1_t5.3.2-1.csv");
table_file!(NR_NRB_FR2, "nr_max_nrb_fr2_38101-2_t5.3.2-1.csv");
table_file!(NR_NUMEROLOGY, "nr_numerology_38211.csv");
table_file!(LTE_MCS, "lte_pdsch_mcs_table_36213_t7.1.7.1-1.csv");
table_file!(LTE_TBS, "lte_tbs_table_36213_t7.1.7.2.1-1.csv");
table_file!(LTE_CQI_TO_MCS, "lte_cqi_to_mcs_oai.csv");
table_file!(LTE_NRB, "lte_nrb_36101_t5.6-1.csv");

/// Every embedded file, for tests that compare them with their origin.
pub const ALL_FILES: &[(&str, &str)] = &[
    NR_MCS1,
    NR_MCS2,
    NR_MCS3,
    NR_CQI1,
    NR_CQI2,
    NR_CQI3,
    NR_CQI_TO_MCS,
    NR_TBS_SMALL,
    NR_NRB_FR1,
    NR_NRB_FR2,
    NR_NUMEROLOGY,
    LTE_MCS,
    LTE_TBS,
    LTE_CQI_TO_MCS,
    LTE_NRB,
];

/// One N_RB table: rows of (bandwidth, N_RB per SCS column; `None` = not applicable).
#[derive(Debug)]
pub(crate) struct NrbTable {
    pub scs_khz: Vec<u32>,
    pub rows: Vec<(u32, Vec<Option<u16>>)>,
}

#[derive(Debug)]
pub(crate) struct Tables {
    /// Indexed by `McsTable as usize`, then MCS index 0..=31.
    pub nr_mcs: [Vec<McsEntry>; 3],
    /// Indexed by `CqiTable as usize`, then CQI 0..=15 (`None` for CQI 0).
    pub nr_cqi: [Vec<Option<CqiEntry>>; 3],
    /// CQI -> MCS per table pair, CQI 0..=15 (`None` for CQI 0); the three
    /// stacks' columns in CSV order (srsRAN, OAI, 5G-LENA).
    pub nr_cqi_to_mcs: [Vec<Option<[u8; 3]>>; 3],
    /// TS 38.214 Table 5.1.3.2-1, ascending.
    pub nr_tbs_small: Vec<u32>,
    pub nrb_fr1: NrbTable,
    pub nrb_fr2: NrbTable,
    pub lte_mcs: Vec<LteMcsEntry>,
    /// `lte_tbs[i_tbs][n_prb - 1]`.
    pub lte_tbs: Vec<Vec<u32>>,
    pub lte_cqi_to_mcs: Vec<u8>,
    /// (bandwidth in kHz, N_RB).
    pub lte_nrb: Vec<(u32, u16)>,
}

pub(crate) fn get() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(parse_all)
}

/// Data rows of an embedded CSV as (1-based line number, cells).
fn rows(file: (&'static str, &'static str)) -> impl Iterator<Item = Row> {
    file.1
        .lines()
        .enumerate()
        .skip(1)
        .filter(|(_, l)| !l.trim().is_empty())
        .map(move |(i, l)| Row {
            file: file.0,
            line: i + 1,
            cells: l.split(',').map(str::trim).collect(),
        })
}

struct Row {
    file: &'static str,
    line: usize,
    cells: Vec<&'static str>,
}

impl Row {
    fn bad(&self, col: usize) -> ! {
        panic!(
            "embedded table {} line {}: bad cell {} ({:?})",
            self.file,
            self.line,
            col,
            self.cells.get(col)
        )
    }
    fn str(&self, col: usize) -> &'static str {
        match self.cells.get(col) {
            Some(s) => s,
            None => self.bad(col),
        }
    }
    fn opt<T: std::str::FromStr>(&self, col: usize) -> Option<T> {
        let s = self.str(col);
        if s.is_empty() {
            None
        } else {
            Some(s.parse().unwrap_or_else(|_| self.bad(col)))
        }
    }
    fn num<T: std::str::FromStr>(&self, col: usize) -> T {
        self.opt(col).unwrap_or_else(|| self.bad(col))
    }
    fn modulation(&self, col: usize) -> Modulation {
        Modulation::from_spec_name(self.str(col)).unwrap_or_else(|| self.bad(col))
    }
    fn rate(&self, col: usize) -> Option<CodeRate> {
        let s = self.str(col);
        if s.is_empty() {
            None
        } else {
            Some(CodeRate::parse_x1024(s).unwrap_or_else(|| self.bad(col)))
        }
    }
}

fn nr_mcs(file: (&'static str, &'static str)) -> Vec<McsEntry> {
    let v: Vec<McsEntry> = rows(file)
        .enumerate()
        .map(|(i, r)| {
            let reserved: u8 = r.num(5);
            let e = McsEntry {
                index: r.num(0),
                modulation: r.modulation(1),
                rate: r.rate(3),
                spectral_efficiency: r.opt(4),
            };
            let ok = usize::from(e.index) == i
                && r.num::<u8>(2) == e.modulation.qm()
                && (reserved == 1) == e.rate.is_none();
            if !ok {
                r.bad(0)
            }
            e
        })
        .collect();
    assert_eq!(v.len(), 32, "{}: expected 32 MCS rows", file.0);
    v
}

fn nr_cqi(file: (&'static str, &'static str)) -> Vec<Option<CqiEntry>> {
    let v: Vec<Option<CqiEntry>> = rows(file)
        .enumerate()
        .map(|(i, r)| {
            if r.num::<usize>(0) != i {
                r.bad(0)
            }
            if r.str(1) == "out of range" {
                return None;
            }
            let e = CqiEntry {
                index: r.num(0),
                modulation: r.modulation(1),
                rate: r.rate(3).unwrap_or_else(|| r.bad(3)),
                efficiency: r.num(4),
            };
            if r.num::<u8>(2) != e.modulation.qm() {
                r.bad(2)
            }
            Some(e)
        })
        .collect();
    assert_eq!(v.len(), 16, "{}: expected 16 CQI rows", file.0);
    v
}

fn nrb(file: (&'static str, &'static str)) -> NrbTable {
    let header = file.1.lines().next().unwrap_or_default();
    let scs_khz = header
        .split(',')
        .skip(1)
        .map(|h| {
            h.trim()
                .strip_prefix("nrb_scs")
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("{}: bad header {h:?}", file.0))
        })
        .collect::<Vec<u32>>();
    let rows = rows(file)
        .map(|r| {
            let bw: u32 = r.num(0);
            let cells = (1..=scs_khz.len()).map(|c| r.opt(c)).collect();
            (bw, cells)
        })
        .collect();
    NrbTable { scs_khz, rows }
}

fn parse_all() -> Tables {
    let mut nr_cqi_to_mcs: [Vec<Option<[u8; 3]>>; 3] = Default::default();
    for t in &mut nr_cqi_to_mcs {
        *t = vec![None; 16];
    }
    for r in rows(NR_CQI_TO_MCS) {
        let table: usize = r.num(0);
        let cqi: usize = r.num(1);
        if !(1..=3).contains(&table) || !(1..=15).contains(&cqi) {
            r.bad(0)
        }
        nr_cqi_to_mcs[table - 1][cqi] = Some([r.num(2), r.num(3), r.num(4)]);
    }

    let nr_tbs_small: Vec<u32> = rows(NR_TBS_SMALL)
        .enumerate()
        .map(|(i, r)| {
            if r.num::<usize>(0) != i + 1 {
                r.bad(0)
            }
            r.num(1)
        })
        .collect();

    let lte_mcs: Vec<LteMcsEntry> = rows(LTE_MCS)
        .enumerate()
        .map(|(i, r)| {
            let e = LteMcsEntry {
                index: r.num(0),
                modulation: r.modulation(1),
                i_tbs: r.opt(3),
            };
            let reserved: u8 = r.num(4);
            if usize::from(e.index) != i
                || r.num::<u8>(2) != e.modulation.qm()
                || (reserved == 1) != e.i_tbs.is_none()
            {
                r.bad(0)
            }
            e
        })
        .collect();

    let lte_tbs: Vec<Vec<u32>> = rows(LTE_TBS)
        .enumerate()
        .map(|(i, r)| {
            if r.num::<usize>(0) != i {
                r.bad(0)
            }
            (1..=110).map(|c| r.num(c)).collect()
        })
        .collect();

    let lte_cqi_to_mcs: Vec<u8> = rows(LTE_CQI_TO_MCS)
        .enumerate()
        .map(|(i, r)| {
            if r.num::<usize>(0) != i {
                r.bad(0)
            }
            r.num(1)
        })
        .collect();

    let lte_nrb = rows(LTE_NRB)
        .map(|r| {
            // Bandwidth in MHz with at most one decimal (1.4): keep kHz integers.
            let mhz: f64 = r.num(0);
            ((mhz * 1000.0).round() as u32, r.num(1))
        })
        .collect();

    let t = Tables {
        nr_mcs: [nr_mcs(NR_MCS1), nr_mcs(NR_MCS2), nr_mcs(NR_MCS3)],
        nr_cqi: [nr_cqi(NR_CQI1), nr_cqi(NR_CQI2), nr_cqi(NR_CQI3)],
        nr_cqi_to_mcs,
        nr_tbs_small,
        nrb_fr1: nrb(NR_NRB_FR1),
        nrb_fr2: nrb(NR_NRB_FR2),
        lte_mcs,
        lte_tbs,
        lte_cqi_to_mcs,
        lte_nrb,
    };
    assert_eq!(t.nr_tbs_small.len(), 93, "TBS table must have 93 entries");
    assert_eq!(t.lte_mcs.len(), 32);
    assert_eq!(t.lte_tbs.len(), 27);
    assert_eq!(t.lte_cqi_to_mcs.len(), 16);
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_tables_parse() {
        let t = get();
        assert_eq!(t.nr_mcs.iter().map(Vec::len).sum::<usize>(), 96);
        assert!(t
            .nr_cqi_to_mcs
            .iter()
            .all(|m| m[1..].iter().all(Option::is_some)));
        assert_eq!(t.nrb_fr1.scs_khz, [15, 30, 60]);
        assert_eq!(t.nrb_fr2.scs_khz, [60, 120]);
        assert_eq!(t.lte_nrb[0], (1400, 6));
        assert!(t.nr_tbs_small.windows(2).all(|w| w[0] < w[1]));
    }
}
