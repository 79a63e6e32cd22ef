//! Transport block size.
//!
//! # NR: TS 38.214 §5.1.3.2 (PDSCH; PUSCH §6.1.4.2 uses the same procedure)
//!
//! 1. N'_RE = 12·N_symb^sh − N_DMRS^PRB − N_oh^PRB; N_RE = min(156, N'_RE)·n_PRB.
//! 2. N_info = S·N_RE·R·Qm·υ.
//! 3. N_info <= 3824: n = max(3, ⌊log2 N_info⌋ − 6),
//!    N'_info = max(24, 2^n·⌊N_info/2^n⌋), TBS = smallest entry of
//!    Table 5.1.3.2-1 that is >= N'_info.
//! 4. N_info > 3824: n = ⌊log2(N_info − 24)⌋ − 5,
//!    N'_info = max(3840, 2^n·round((N_info − 24)/2^n)) with ties rounded
//!    **up**; then with C code blocks: R <= 1/4: C = ⌈(N'_info+24)/3816⌉;
//!    else if N'_info > 8424: C = ⌈(N'_info+24)/8424⌉; else C = 1;
//!    TBS = 8·C·⌈(N'_info+24)/(8·C)⌉ − 24.
//!
//! Everything here is exact integer arithmetic: N_info is the fraction
//! `S·N_RE·(R·10240)·Qm·υ / 10240` (see [`CodeRate`]). This matters: stacks
//! that truncate N_info to an integer (OAI) get 3824 instead of 3840/3848 for
//! N_info just above 3824, and banker's rounding in step 4 is wrong on exact
//! ties (both are checked by `nr_tbs_edge_vectors_derived.csv`).
//!
//! Reserved MCS indices have no TBS of their own (the TBS is that of the
//! initial transmission, §5.1.3.2): asking for one is [`TbsError::ReservedMcs`].
//!
//! # LTE: TS 36.213 Table 7.1.7.2.1-1
//!
//! Plain lookup for I_TBS 0..=26 × N_PRB 1..=110. The table keeps the spec
//! value 328 at (I_TBS 6, N_PRB 1), which ns-3 replaces with 88.

use crate::phy::mcs::{lte_mcs, Mcs};
use crate::phy::numerology::SYMBOLS_PER_SLOT;
use crate::phy::CodeRate;
use crate::tables;
use serde::{Deserialize, Serialize};
use tcran_core::config::check_range;
use tcran_core::ConfigError;

/// Why no TBS could be computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TbsError {
    /// A reserved MCS index: it only signals the modulation of a
    /// retransmission, whose TBS is that of the initial transmission.
    #[error("{mcs} is reserved: the TBS is that of the initial transmission (TS 38.214 §5.1.3.2)")]
    ReservedMcs { mcs: Mcs },
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// The scaling factor S of TS 38.214 Table 5.1.3.2-2, from the DCI 1_0
/// "TB scaling" field (only for P-RNTI / RA-RNTI; S = 1 otherwise).
#[derive(
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Debug,
    Default,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
pub enum TbScaling {
    /// Field 0: S = 1.
    #[default]
    One,
    /// Field 1: S = 0.5.
    Half,
    /// Field 2: S = 0.25.
    Quarter,
}

impl TbScaling {
    /// From the 2-bit DCI field (3 is reserved).
    pub fn from_field(field: u8) -> Result<TbScaling, ConfigError> {
        check_range("tb_scaling", field, 0, 2)
            .map(|f| [TbScaling::One, TbScaling::Half, TbScaling::Quarter][usize::from(f)])
    }

    /// 1/S.
    const fn divisor(self) -> u64 {
        match self {
            TbScaling::One => 1,
            TbScaling::Half => 2,
            TbScaling::Quarter => 4,
        }
    }
}

/// The allocation-dependent inputs of TS 38.214 §5.1.3.2.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TbsInput {
    /// N_symb^sh: PDSCH symbols in the slot, 1..=14.
    pub n_symb_sh: u8,
    /// N_DMRS^PRB: DM-RS REs per PRB over the allocation, including CDM
    /// groups without data (one front-loaded type-1 symbol: 6 REs with one
    /// CDM group without data, 12 with two).
    pub n_dmrs_prb: u16,
    /// N_oh^PRB: RRC `xOverhead`, one of 0, 6, 12, 18.
    pub n_oh_prb: u16,
    /// n_PRB: allocated PRBs, 1..=275.
    pub n_prb: u16,
    /// υ: layers the transport block is mapped to, 1..=4 (one codeword).
    pub layers: u8,
    pub tb_scaling: TbScaling,
}

impl Default for TbsInput {
    /// A full downlink slot as [`bytes_per_slot`] assumes it: 12 PDSCH
    /// symbols, 12 DM-RS REs/PRB, no xOverhead, 1 PRB, 1 layer, S = 1.
    fn default() -> Self {
        TbsInput {
            n_symb_sh: DEFAULT_PDSCH_SYMBOLS,
            n_dmrs_prb: DEFAULT_DMRS_RE_PER_PRB,
            n_oh_prb: 0,
            n_prb: 1,
            layers: 1,
            tb_scaling: TbScaling::One,
        }
    }
}

/// Largest n_PRB of an NR carrier (TS 38.101-1 Table 5.3.2-1, 100 MHz at 30 kHz = 273; 275 RB grid).
pub const MAX_PRB: u16 = 275;

impl TbsInput {
    /// Validates the inputs and returns N_RE (step 1).
    pub fn n_re(&self) -> Result<u32, ConfigError> {
        check_range("n_symb_sh", self.n_symb_sh, 1, SYMBOLS_PER_SLOT)?;
        check_range("n_prb", self.n_prb, 1, MAX_PRB)?;
        check_range("layers", self.layers, 1, 4)?;
        if ![0, 6, 12, 18].contains(&self.n_oh_prb) {
            return Err(ConfigError::new(
                "n_oh_prb",
                self.n_oh_prb,
                "must be one of 0, 6, 12, 18 (xOverhead)",
            ));
        }
        let total = 12 * u32::from(self.n_symb_sh);
        let overhead = u32::from(self.n_dmrs_prb) + u32::from(self.n_oh_prb);
        if overhead >= total {
            return Err(ConfigError::new(
                "n_dmrs_prb",
                self.n_dmrs_prb,
                format!(
                    "DM-RS + xOverhead ({overhead} REs/PRB) must leave data REs in 12 x {} symbols",
                    self.n_symb_sh
                ),
            ));
        }
        // 156 = 12 x 13: the cap keeps one symbol's worth of REs for DM-RS.
        Ok((total - overhead).min(156) * u32::from(self.n_prb))
    }

    /// TBS in bits for an MCS of the NR tables.
    pub fn tbs(&self, mcs: Mcs) -> Result<u32, TbsError> {
        let e = mcs.table.entry(mcs.index)?;
        match e.rate {
            Some(rate) => self.tbs_for(e.qm(), rate),
            None => Err(TbsError::ReservedMcs { mcs }),
        }
    }

    /// TBS in bits for an explicit modulation order Qm (2, 4, 6, 8) and code
    /// rate (what the MATLAB test vectors specify).
    pub fn tbs_for(&self, qm: u8, rate: CodeRate) -> Result<u32, TbsError> {
        if ![2, 4, 6, 8].contains(&qm) {
            return Err(ConfigError::new("qm", qm, "must be one of 2, 4, 6, 8").into());
        }
        let n_re = u64::from(self.n_re()?);
        // N_info = num / den exactly.
        let num = n_re * u64::from(rate.x1024_tenths()) * u64::from(qm) * u64::from(self.layers);
        let den = 10240 * self.tb_scaling.divisor();
        Ok(tbs_from_n_info(num, den, rate.x1024_tenths() <= 2560))
    }
}

/// ⌊log2(num/den)⌋ for num >= den > 0.
fn floor_log2_ratio(num: u64, den: u64) -> u32 {
    // 2^k <= x  <=>  2^k <= ⌊x⌋ for integer 2^k, so use the integer quotient.
    (num / den).ilog2()
}

/// Steps 3-4 for N_info = num/den; `low_rate` is R <= 1/4.
fn tbs_from_n_info(num: u64, den: u64, low_rate: bool) -> u32 {
    if num <= 3824 * den {
        // Step 3. For N_info < 2^10, ⌊log2⌋ - 6 < 4, so n = 3 (also for N_info < 1).
        let n = if num >= den {
            floor_log2_ratio(num, den).saturating_sub(6).max(3)
        } else {
            3
        };
        let q = num / (den << n);
        let n_info_q = ((q << n) as u32).max(24);
        let small = &tables::get().nr_tbs_small;
        let i = small.partition_point(|&t| t < n_info_q);
        // N'_info <= 3824 = the last entry, so i is in range.
        small[i.min(small.len() - 1)]
    } else {
        // Step 4. N_info - 24 = (num - 24·den)/den.
        let m = num - 24 * den;
        let n = floor_log2_ratio(m, den) - 5;
        // round(m / (den·2^n)) with ties up = ⌊(2m + den·2^n) / (2·den·2^n)⌋.
        let d = den << n;
        let rounded = (2 * m + d) / (2 * d);
        let n_info_q = (rounded << n).max(3840);
        let c = if low_rate {
            (n_info_q + 24).div_ceil(3816)
        } else if n_info_q > 8424 {
            (n_info_q + 24).div_ceil(8424)
        } else {
            1
        };
        let tbs = 8 * c * (n_info_q + 24).div_ceil(8 * c) - 24;
        u32::try_from(tbs).unwrap_or(u32::MAX)
    }
}

/// PDSCH symbols of a full DL slot assumed by [`bytes_per_slot`]: 14 minus 2
/// for the PDCCH CORESET.
pub const DEFAULT_PDSCH_SYMBOLS: u8 = 12;
/// DM-RS REs per PRB assumed by [`bytes_per_slot`]: one front-loaded type-1
/// DM-RS symbol with two CDM groups without data (12 REs), the srsRAN / OAI
/// default for a single layer.
pub const DEFAULT_DMRS_RE_PER_PRB: u16 = 12;

/// Bytes one transport block carries in a full downlink slot at `mcs` over
/// `n_prb` PRBs and `layers` layers, with the typical overheads of
/// [`TbsInput::default`]: 12 PDSCH symbols (2 for PDCCH), 12 DM-RS REs per
/// PRB, xOverhead 0, S = 1. This is the MAC PDU size: MAC subheaders, RLC and
/// PDCP headers still come out of it. For a TDD special slot or another
/// layout, fill a [`TbsInput`] yourself.
pub fn bytes_per_slot(mcs: Mcs, n_prb: u16, layers: u8) -> Result<u32, TbsError> {
    let input = TbsInput {
        n_prb,
        layers,
        ..TbsInput::default()
    };
    // Every TBS is a multiple of 8 (table entries and 8·C·k − 24).
    Ok(input.tbs(mcs)? / 8)
}

/// LTE TBS in bits, TS 36.213 Table 7.1.7.2.1-1 (I_TBS 0..=26, N_PRB 1..=110).
pub fn lte_tbs(i_tbs: u8, n_prb: u16) -> Result<u32, ConfigError> {
    check_range("i_tbs", i_tbs, 0, 26)?;
    check_range("n_prb", n_prb, 1, 110)?;
    Ok(tables::get().lte_tbs[usize::from(i_tbs)][usize::from(n_prb - 1)])
}

/// LTE TBS in bits for a PDSCH I_MCS (0..=28; 29..=31 are reserved and give
/// a `mcs` error) via TS 36.213 Table 7.1.7.1-1.
pub fn lte_tbs_for_mcs(i_mcs: u8, n_prb: u16) -> Result<u32, ConfigError> {
    let e = lte_mcs(i_mcs)?;
    let i_tbs = e.i_tbs.ok_or_else(|| {
        ConfigError::new("mcs", i_mcs, "must be in 0..=28 (29..=31 are reserved)")
    })?;
    lte_tbs(i_tbs, n_prb)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phy::mcs::McsTable;

    fn input(n_symb_sh: u8, n_dmrs_prb: u16, n_prb: u16, layers: u8) -> TbsInput {
        TbsInput {
            n_symb_sh,
            n_dmrs_prb,
            n_oh_prb: 0,
            n_prb,
            layers,
            tb_scaling: TbScaling::One,
        }
    }

    #[test]
    fn worked_examples_from_algorithms_md() {
        let m27 = Mcs::new(McsTable::Qam256, 27).unwrap();
        assert_eq!(input(12, 12, 273, 1).tbs(m27).unwrap(), 270_576);
        assert_eq!(input(12, 12, 273, 4).tbs(m27).unwrap(), 1_081_512);
        let m0 = Mcs::new(McsTable::Qam64, 0).unwrap();
        assert_eq!(input(12, 12, 1, 1).tbs(m0).unwrap(), 24);
    }

    #[test]
    fn n_info_just_above_3824_is_not_truncated() {
        // 10 symbols, 6 DM-RS, QPSK 193, 89 PRB: N_info = 3824.13..., TBS 3848
        // (OAI's integer N_info gives 3824).
        let r = CodeRate::from_x1024(193).unwrap();
        assert_eq!(input(10, 6, 89, 1).tbs_for(2, r).unwrap(), 3848);
    }

    #[test]
    fn step4_ties_round_up() {
        // 16QAM 378, 7 symbols, 12 DM-RS, 4 layers, 224 PRB: exact tie.
        let r = CodeRate::from_x1024(378).unwrap();
        assert_eq!(input(7, 12, 224, 4).tbs_for(4, r).unwrap(), 96_264);
    }

    #[test]
    fn reserved_mcs_is_an_error() {
        let mcs = Mcs {
            table: McsTable::Qam256,
            index: 28,
        };
        let e = input(12, 12, 10, 1).tbs(mcs).unwrap_err();
        assert!(matches!(e, TbsError::ReservedMcs { .. }), "{e}");
        assert!(e.to_string().contains("initial transmission"));
    }

    #[test]
    fn bad_inputs_name_the_field() {
        let m = Mcs::new(McsTable::Qam64, 5).unwrap();
        let cases = [
            (input(0, 12, 10, 1), "n_symb_sh"),
            (input(12, 12, 0, 1), "n_prb"),
            (input(12, 12, 276, 1), "n_prb"),
            (input(12, 12, 10, 5), "layers"),
            (input(2, 24, 10, 1), "n_dmrs_prb"),
            (
                TbsInput {
                    n_oh_prb: 7,
                    ..input(12, 12, 10, 1)
                },
                "n_oh_prb",
            ),
        ];
        for (i, field) in cases {
            match i.tbs(m) {
                Err(TbsError::Config(e)) => assert_eq!(e.field, field),
                other => panic!("{i:?}: {other:?}"),
            }
        }
        assert!(TbScaling::from_field(3).is_err());
    }

    #[test]
    fn n_re_is_capped_at_156_per_prb() {
        assert_eq!(input(14, 0, 10, 1).n_re().unwrap(), 1560);
        assert_eq!(input(12, 12, 10, 1).n_re().unwrap(), 1320);
    }

    #[test]
    fn bytes_per_slot_uses_documented_defaults() {
        let m = Mcs::new(McsTable::Qam256, 27).unwrap();
        assert_eq!(bytes_per_slot(m, 273, 1).unwrap(), 270_576 / 8);
        let m = Mcs::new(McsTable::Qam64, 10).unwrap();
        assert_eq!(
            bytes_per_slot(m, 52, 1).unwrap() * 8,
            input(12, 12, 52, 1).tbs(m).unwrap()
        );
    }

    #[test]
    fn lte_tbs_column_25_and_corner() {
        let col: Vec<u32> = (0..=26).map(|i| lte_tbs(i, 25).unwrap()).collect();
        assert_eq!(
            col,
            [
                680, 904, 1096, 1416, 1800, 2216, 2600, 3112, 3496, 4008, 4392, 4968, 5736, 6456,
                7224, 7736, 7992, 9144, 9912, 10680, 11448, 12576, 13536, 14112, 15264, 15840,
                18336
            ]
        );
        assert_eq!(lte_tbs(26, 100).unwrap(), 75_376);
        assert_eq!(
            lte_tbs(6, 1).unwrap(),
            328,
            "spec value kept (README doubt 1)"
        );
        assert!(lte_tbs(27, 1).is_err() && lte_tbs(0, 111).is_err() && lte_tbs(0, 0).is_err());
        assert_eq!(lte_tbs_for_mcs(28, 100).unwrap(), 75_376);
        assert!(lte_tbs_for_mcs(29, 100).is_err());
    }
}
