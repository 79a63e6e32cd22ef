//! Downlink MAC scheduler of one cell, one call per slot or per scheduling
//! period (TS 38.321, TS 38.214 §5.1.2.2 resource allocation, §5.1.3.2 TBS).
//!
//! Per slot (or period) the caller passes every UE's channel sample and the
//! buffer status of its logical channels; [`Mac::schedule`] returns the
//! grants.
//! The caller then pulls the RLC entities ([`crate::rlc::RlcTx::fill`]) with
//! the per-logical-channel bytes and hands the resulting PDUs back with
//! [`Mac::transmit`], which draws the HARQ outcome.
//!
//! - **Resources**: N_RB from the bandwidth and numerology
//!   (TS 38.101-1 Table 5.3.2-1) or given; allocation type 0 in RBGs of
//!   size P from TS 38.214 Table 5.1.2.2.1-1, configuration 1 by BWP size
//!   (1-36 PRB: 2, 37-72: 4, 73-144: 8, 145-275: 16), the last RBG holding
//!   the remainder. TDD: no DL grant in U slots; an S slot carries
//!   `special_dl_symbols - pdcch_symbols` PDSCH symbols in the TBS.
//! - **Bytes**: `ChannelSample::Mcs` -> TS 38.214 TBS of the granted PRBs
//!   ([`crate::phy::tbs::TbsInput`]); `Bytes(b)` (capacity trace) -> the UE
//!   could send b bytes with the whole cell, so n of N PRBs carry
//!   ⌊b·n/N⌋; `Outage` -> nothing.
//! - **Carry-over of a capacity trace's unused bytes** ([`Mac::set_carry_over`],
//!   off unless set: the node turns it on only when a scenario's trace
//!   channel asks for a `carry_over` window):
//!   bytes a decision offered a UE and its grant did not carry (no data, or
//!   padding up to whole RBGs) stay usable for `window` (then they expire),
//!   oldest first. Each carried chunk keeps the
//!   bytes-per-PRB of the decision that offered it (b of its whole-cell
//!   bytes need b/b_full of the N PRBs), so a buffer that uses a 15-kB burst
//!   in ten 1.5-kB pieces spends the same PRBs as one that takes it at once,
//!   and a slot never carries more than its N PRBs hold. A buffer that takes
//!   every offer at once (an unpaced, backlogged one) never has anything to
//!   carry and sees exactly the trace. Why a window could be physical (a
//!   hypothesis, not measured here, so not the default): a
//!   delivery trace (mahimahi, recorded by Saturator at the receiver) shows
//!   *when packets reached the UE*, after HARQ retransmissions (LTE: 8-ms
//!   round trip, TS 36.213 §8/§10, commonly 4 transmissions) and RLC
//!   in-sequence delivery bunched the TTIs of up to (4 - 1) x 8 = 24 ms into
//!   one millisecond; and an eNB's proportional-fair scheduler serves a UE
//!   that left its turn unused sooner afterwards (its average rate fell), so
//!   its share is kept over a few tens of ms, not lost at the millisecond.
//!   `mm-link` itself wastes an unused opportunity at once (window 0);
//!   per-TTI capacity replays (the thesis emulator, whose MAC lost what a
//!   TTI did not use) keep window 0 too.
//! - **Logical channel prioritization** (TS 38.321 §5.4.3.1, simplified):
//!   no prioritised bit rate / Bj buckets; the TB is shared strictly by
//!   logical channel priority (lower value first), each LC taking up to its
//!   buffer status; what is left is padding.
//! - **Schedulers**: round robin by RBG over backlogged UEs (the first UE
//!   rotates every slot); proportional fair (TBS with all PRBs / EWMA
//!   throughput, per RBG, flat channel so in practice one UE per slot until
//!   its buffer is drained); fixed partition (thesis ch. 4 FP, the
//!   FlexRAN/OAI baseline: slice i owns ⌊N·share_i⌋ PRBs every slot, unused
//!   PRBs are not lent; round robin inside a slice); EQP (thesis Alg. 8-9,
//!   see [`eqp`]).
//! - **LTE mode** (`rat = "lte"`): 1 ms TTI (µ = 0), N_RB from TS 36.101
//!   Table 5.6-1 (3/5/10/15/20 MHz -> 15/25/50/75/100 PRB; 1.4 MHz is
//!   `prbs = 6`), RBG size P from TS 36.213 Table 7.1.6.1-1 (type 0), TBS
//!   from TS 36.213 Table 7.1.7.2.1-1 with I_TBS from the PDSCH I_MCS by
//!   Table 7.1.7.1-1: the index of a `ChannelSample::Mcs` is read as the
//!   LTE I_MCS (0..=28) and its NR table is ignored. The LTE TBS table
//!   already accounts for control and reference-signal overhead, so
//!   `pdcch_symbols` and `dmrs_re_per_prb` do not apply. Only FDD, one
//!   layer and the 64QAM MCS table are modelled (LTE TDD special subframes
//!   scale N_PRB, TS 36.213 §7.1.7; two layers need Table 7.1.7.2.2-1):
//!   other values are configuration errors. The RLC/MAC header model stays
//!   NR's (no LTE RLC concatenation).
//! - **Scheduling period** (`scheduling_period`, default one slot): the
//!   thesis emulator's MAC pulls the RLC once every 10 ms (Irazabal thesis
//!   sec. 3.6.1) and its traces give packets per 10 ms. With a period of K
//!   slots the MAC decides once per period, at its first slot, with the
//!   resources of all the period's downlink slots: a UE granted n PRBs
//!   gets n PRBs in every DL slot of the period, and its TB carries the sum
//!   of those slots' TBS for n PRBs (S slots with their fewer PDSCH
//!   symbols, U slots nothing). A capacity trace's sample covers the whole
//!   period; as with per-slot scheduling, the share of it that falls in U
//!   slots is not carried (K_DL / K of it is). HARQ: the period's TB counts
//!   as sent in its first slot and is retransmitted in the first period
//!   starting `harq_rtt` slots after it or later (so at the earliest the
//!   next period). PF averages use the period as their step.
//! - **HARQ** (simplified): a new TB fails with probability `bler`; it is
//!   retransmitted `harq_rtt` slots later (or at the next DL slot with room)
//!   with the same TBS and PRB count, before new data, failing again with
//!   the same probability (no soft combining gain), and is lost after
//!   `max_harq_tx` transmissions (its RLC PDUs never arrive; RLC AM
//!   recovers, UM reports the loss). A UE with a retransmission in a slot
//!   gets no new TB in that slot (one PDSCH per UE per slot). The number of
//!   HARQ processes is not limited.

pub mod eqp;
pub mod ue;
pub mod ul;

/// Order in which carried trace bytes fill a slot's PRBs: oldest first
/// (false, so nothing expires that a later chunk could have waited for),
/// or best bytes-per-PRB first (true: more bytes per slot, fewer PRBs, but
/// old chunks expire). Measured on T-Mobile with a 10-ms MAC (30 s, seed
/// 1, jit with a mean target): best-rate-first gave jit 90 % of the unpaced
/// buffer's PRB use and 91 % of its throughput, oldest first 92 % and 84 %.
const BEST_RATE_FIRST: bool = false;

use crate::channel::ChannelSample;
use crate::phy::bandwidth::{lte_n_rb, max_n_rb, FrequencyRange};
use crate::phy::mcs::{Mcs, McsTable};
use crate::phy::numerology::Numerology;
use crate::phy::tbs::{lte_tbs_for_mcs, TbsInput, MAX_PRB};
use crate::phy::tdd::{SlotPattern, DEFAULT_SPECIAL_DL_SYMBOLS};
use crate::rlc::RlcPdu;
use serde::{Deserialize, Serialize};
use tcran_core::config::{check_f64, check_range};
use tcran_core::rng::RngStream;
use tcran_core::{ConfigError, DrbId, Duration, Instant, Rnti};

/// The radio access technology of the cell.
#[derive(
    Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Rat {
    /// 5G NR: TS 38.214 TBS, any numerology, TDD patterns.
    #[default]
    Nr,
    /// LTE: 1 ms TTI, TS 36.101 PRB counts, TS 36.213 TBS table.
    Lte,
}

/// Largest LTE N_RB (TS 36.213 Table 7.1.7.2.1-1 has N_PRB 1..=110).
pub const LTE_MAX_PRB: u16 = 110;

/// Which scheduler.
#[derive(
    Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SchedulerKind {
    /// Round robin by RBG over backlogged UEs.
    #[default]
    RoundRobin,
    /// Proportional fair (achievable rate / EWMA throughput).
    ProportionalFair,
    /// Static slice partition (thesis ch. 4 FP baseline); needs `slices`.
    FixedPartition,
    /// Enhanced quota partition (thesis Alg. 8-9); needs `slices`.
    Eqp,
    /// Delay-based (Brunello sec. 4.5, "DBS"): the UE whose oldest packet
    /// has waited longest is served first, as many PRBs as its buffer
    /// needs, then the next; a UE of `dbs_boosted_ues` holding a packet
    /// older than `dbs_boost_after` goes before every UE that does not.
    DelayBased,
}

/// A slice for `fixed_partition` / `eqp`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SliceConfig {
    /// Label used in reports.
    #[serde(default)]
    pub name: String,
    /// Percent of the cell's PRBs (0..=100).
    pub share: f64,
    /// RNTIs of the UEs in this slice.
    pub ues: Vec<u16>,
}

/// MAC configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MacConfig {
    /// `"nr"` (default) or `"lte"` (1 ms TTI, TS 36.213 TBS table).
    pub rat: Rat,
    /// µ (0..=3): 15·2^µ kHz SCS, 1 ms / 2^µ slots. LTE: 0.
    pub numerology: u8,
    /// Channel bandwidth in MHz (N_RB from TS 38.101-1/-2 Table 5.3.2-1).
    pub bandwidth_mhz: Option<u32>,
    /// N_RB directly (overrides `bandwidth_mhz`).
    pub prbs: Option<u16>,
    /// `fr1` (default) or `fr2`.
    pub frequency_range: Option<FrequencyRange>,
    /// "FDD" or a TDD pattern like "DDDSU".
    pub slot_pattern: String,
    /// DL symbols of a special (S) slot in a TDD pattern.
    pub special_dl_symbols: u8,
    /// Symbols of each DL slot taken by the PDCCH CORESET (default 2, so a
    /// full slot has the 12 PDSCH symbols of [`crate::phy::tbs::bytes_per_slot`]).
    pub pdcch_symbols: u8,
    /// DM-RS REs per PRB (default 12: one type-1 symbol, 2 CDM groups).
    pub dmrs_re_per_prb: u16,
    /// MIMO layers of every transport block (1..=4).
    pub layers: u8,
    /// RBG size P; default from TS 38.214 Table 5.1.2.2.1-1 configuration 1.
    pub rbg_size: Option<u16>,
    /// The MCS table link adaptation uses (channel samples carry their own
    /// table; this is the default for channels built from CQIs).
    pub mcs_table: McsTable,
    /// The downlink scheduler.
    pub scheduler: SchedulerKind,
    /// Proportional fair EWMA time constant.
    pub pf_time_constant: Duration,
    /// Slices for `fixed_partition` and `eqp`.
    pub slices: Vec<SliceConfig>,
    /// EQP quantum limit in PRBs (thesis default 100).
    pub eqp_quantum_limit: u32,
    /// `delay_based`: the head-of-line age past which a UE of
    /// `dbs_boosted_ues` goes first (Brunello's threshold, `l4sHighTh`:
    /// 10 ms in sec. 5.3); absent: no UE is boosted.
    pub dbs_boost_after: Option<Duration>,
    /// `delay_based`: the RNTIs whose queues the boost applies to (the
    /// thesis' video gaming users; other traffic keeps the default
    /// priority).
    pub dbs_boosted_ues: Vec<u16>,
    /// Block error rate of each transmission (0..1).
    pub bler: f64,
    /// HARQ round trip in slots.
    pub harq_rtt: u32,
    /// Transmissions of a TB before it is lost (1..=16).
    pub max_harq_tx: u8,
    /// Seed of the HARQ error draws.
    pub seed: u64,
    /// How often the MAC schedules: a whole number of slots, from one slot
    /// to 100 ms (e.g. `"10ms"`, the thesis emulator's TTI). Absent: every
    /// slot. Each decision uses the resources of all the period's DL slots
    /// (module docs).
    pub scheduling_period: Option<Duration>,
    /// The uplink scheduler (`[cell.uplink]`, [`ul::UlConfig`]) of the
    /// cell's uplink DRBs; used only when a UE declares uplink DRBs, and
    /// its defaults apply when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uplink: Option<ul::UlConfig>,
}

impl Default for MacConfig {
    fn default() -> Self {
        MacConfig {
            rat: Rat::Nr,
            numerology: 0,
            bandwidth_mhz: Some(5),
            prbs: None,
            frequency_range: None,
            slot_pattern: "FDD".into(),
            special_dl_symbols: DEFAULT_SPECIAL_DL_SYMBOLS,
            pdcch_symbols: 2,
            dmrs_re_per_prb: 12,
            layers: 1,
            rbg_size: None,
            mcs_table: McsTable::Qam64,
            scheduler: SchedulerKind::RoundRobin,
            pf_time_constant: Duration::from_millis(100),
            slices: Vec::new(),
            eqp_quantum_limit: 100,
            dbs_boost_after: None,
            dbs_boosted_ues: Vec::new(),
            bler: 0.0,
            harq_rtt: 8,
            max_harq_tx: 4,
            seed: 0,
            scheduling_period: None,
            uplink: None,
        }
    }
}

/// RBG size P, TS 38.214 Table 5.1.2.2.1-1, configuration 1.
pub fn rbg_size_config1(bwp_prbs: u16) -> u16 {
    match bwp_prbs {
        0..=36 => 2,
        37..=72 => 4,
        73..=144 => 8,
        _ => 16,
    }
}

/// LTE RBG size P for resource allocation type 0, TS 36.213 Table
/// 7.1.6.1-1, by downlink bandwidth in PRBs.
pub fn rbg_size_lte(n_rb: u16) -> u16 {
    match n_rb {
        0..=10 => 1,
        11..=26 => 2,
        27..=63 => 3,
        _ => 4,
    }
}

/// Validated MAC parameters.
#[derive(Clone, Debug)]
pub struct MacParams {
    pub rat: Rat,
    pub numerology: Numerology,
    pub n_prb: u16,
    pub rbg: u16,
    pub pattern: SlotPattern,
    pub pdcch_symbols: u8,
    pub dmrs_re_per_prb: u16,
    pub layers: u8,
    pub mcs_table: McsTable,
    pub scheduler: SchedulerKind,
    pub pf_alpha: f64,
    /// Slice shares (fraction) and UE lists.
    pub slices: Vec<(f64, Vec<Rnti>)>,
    pub quantum_limit: f64,
    /// `delay_based`: the boost threshold and the UEs it applies to.
    pub dbs_boost: Option<(Duration, Vec<Rnti>)>,
    pub bler: f64,
    pub harq_rtt: u64,
    pub max_harq_tx: u8,
    pub seed: u64,
    /// Slots per scheduling decision (1 unless `scheduling_period` is set).
    pub period_slots: u32,
}

impl MacConfig {
    /// What LTE mode does not model (module docs), as errors naming the field.
    fn check_lte(&self) -> Result<(), ConfigError> {
        const WHY: &str = "with rat = \"lte\"";
        if self.numerology != 0 {
            return Err(ConfigError::new(
                "numerology",
                self.numerology,
                format!("must be 0 {WHY} (15 kHz, 1 ms TTI)"),
            ));
        }
        if let Some(fr) = self.frequency_range {
            return Err(ConfigError::new(
                "frequency_range",
                format!("{fr:?}").to_lowercase(),
                format!("is an NR setting: leave it out {WHY}"),
            ));
        }
        if !self.slot_pattern.eq_ignore_ascii_case("fdd") {
            return Err(ConfigError::new(
                "slot_pattern",
                &self.slot_pattern,
                format!("must be \"FDD\" {WHY} (LTE TDD is not modelled)"),
            ));
        }
        if self.layers != 1 {
            return Err(ConfigError::new(
                "layers",
                self.layers,
                format!("must be 1 {WHY} (TS 36.213 Table 7.1.7.2.2-1 is not modelled)"),
            ));
        }
        if self.mcs_table != McsTable::Qam64 {
            return Err(ConfigError::new(
                "mcs_table",
                self.mcs_table,
                format!("must be qam64 {WHY} (TS 36.213 Table 7.1.7.1-1)"),
            ));
        }
        Ok(())
    }

    /// The delay-based scheduler's boost: both fields or neither, and only
    /// with that scheduler (elsewhere they would be ignored).
    fn dbs_boost(&self) -> Result<Option<(Duration, Vec<Rnti>)>, ConfigError> {
        let dbs = self.scheduler == SchedulerKind::DelayBased;
        match (self.dbs_boost_after, self.dbs_boosted_ues.is_empty()) {
            (None, true) => Ok(None),
            _ if !dbs => Err(match self.dbs_boost_after {
                Some(after) => ConfigError::new(
                    "dbs_boost_after",
                    after,
                    "is for scheduler = \"delay_based\" only",
                ),
                None => ConfigError::new(
                    "dbs_boosted_ues",
                    format!("{:?}", self.dbs_boosted_ues),
                    "is for scheduler = \"delay_based\" only",
                ),
            }),
            (None, false) => Err(ConfigError::new(
                "dbs_boost_after",
                "(absent)",
                "dbs_boosted_ues needs the threshold, e.g. \"10ms\"",
            )),
            (Some(after), empty) => {
                if after > Duration::from_secs(10) {
                    return Err(ConfigError::new(
                        "dbs_boost_after",
                        after,
                        "must be at most 10s",
                    ));
                }
                if empty {
                    return Err(ConfigError::new(
                        "dbs_boosted_ues",
                        "[]",
                        "dbs_boost_after needs the RNTIs it boosts",
                    ));
                }
                Ok(Some((
                    after,
                    self.dbs_boosted_ues.iter().map(|&r| Rnti(r)).collect(),
                )))
            }
        }
    }

    pub fn build(&self) -> Result<MacParams, ConfigError> {
        let numerology = Numerology::new(self.numerology).map_err(|e| e.within("numerology"))?;
        if self.rat == Rat::Lte {
            self.check_lte()?;
        }
        let n_prb = match (self.prbs, self.bandwidth_mhz) {
            (Some(p), _) if self.rat == Rat::Lte => check_range("prbs", p, 1, LTE_MAX_PRB)?,
            (Some(p), _) => check_range("prbs", p, 1, MAX_PRB)?,
            (None, Some(bw)) if self.rat == Rat::Lte => {
                lte_n_rb(bw.saturating_mul(1000)).map_err(|_| {
                    ConfigError::new(
                        "bandwidth_mhz",
                        bw,
                        "LTE: must be one of 3, 5, 10, 15, 20 (TS 36.101 Table 5.6-1; \
                         for 1.4 MHz give prbs = 6)",
                    )
                })?
            }
            (None, Some(bw)) => max_n_rb(
                self.frequency_range.unwrap_or(FrequencyRange::Fr1),
                bw,
                numerology,
            )
            .map_err(|e| ConfigError {
                field: "bandwidth_mhz".into(),
                ..e
            })?,
            (None, None) => {
                return Err(ConfigError::new(
                    "bandwidth_mhz",
                    "none",
                    "give bandwidth_mhz or prbs",
                ))
            }
        };
        let pattern = if self.slot_pattern.eq_ignore_ascii_case("fdd") {
            SlotPattern::fdd()
        } else {
            SlotPattern::tdd(&self.slot_pattern, self.special_dl_symbols).map_err(|e| {
                ConfigError {
                    field: "slot_pattern".into(),
                    ..e
                }
            })?
        };
        check_range("pdcch_symbols", self.pdcch_symbols, 0, 3)?;
        check_range("dmrs_re_per_prb", self.dmrs_re_per_prb, 0, 48)?;
        check_range("layers", self.layers, 1, 4)?;
        let rbg = match self.rbg_size {
            Some(p) => check_range("rbg_size", p, 1, 16)?,
            None if self.rat == Rat::Lte => rbg_size_lte(n_prb),
            None => rbg_size_config1(n_prb),
        };
        let slot = numerology.slot_duration();
        let period_slots = match self.scheduling_period {
            None => 1,
            Some(p) => {
                let max = Duration::from_millis(100);
                let k = p.as_nanos() / slot.as_nanos();
                if p.is_zero() || !p.as_nanos().is_multiple_of(slot.as_nanos()) || p > max {
                    return Err(ConfigError::new(
                        "scheduling_period",
                        p,
                        format!(
                            "must be a whole number of slots ({slot} each at numerology {}) \
                             from {slot} to {max}",
                            self.numerology
                        ),
                    ));
                }
                k as u32
            }
        };
        let period = Duration::from_nanos(slot.as_nanos() * u64::from(period_slots));
        let tc = self.pf_time_constant.ratio(period);
        if tc < 1.0 {
            return Err(ConfigError::new(
                "pf_time_constant",
                self.pf_time_constant,
                "must be at least one slot (one scheduling period)",
            ));
        }
        let mut slices = Vec::new();
        let mut total = 0.0;
        let mut seen: Vec<u16> = Vec::new();
        for (i, s) in self.slices.iter().enumerate() {
            let share = check_f64("share", s.share, 0.0, 100.0)
                .map_err(|e| e.within(format!("slices[{i}]")))?;
            total += share;
            for &u in &s.ues {
                if seen.contains(&u) {
                    return Err(ConfigError::new(
                        format!("slices[{i}].ues"),
                        u,
                        "a UE belongs to one slice only",
                    ));
                }
                seen.push(u);
            }
            slices.push((share / 100.0, s.ues.iter().map(|&u| Rnti(u)).collect()));
        }
        if total > 100.0 + 1e-9 {
            return Err(ConfigError::new(
                "slices",
                format!("{total}%"),
                "shares must add up to at most 100%",
            ));
        }
        if matches!(
            self.scheduler,
            SchedulerKind::FixedPartition | SchedulerKind::Eqp
        ) && slices.is_empty()
        {
            return Err(ConfigError::new(
                "slices",
                "[]",
                "fixed_partition and eqp need at least one slice",
            ));
        }
        check_range("eqp_quantum_limit", self.eqp_quantum_limit, 1, 1_000_000)?;
        let dbs_boost = self.dbs_boost()?;
        let bler = check_f64("bler", self.bler, 0.0, 0.99)?;
        let harq_rtt = check_range("harq_rtt", self.harq_rtt, 1, 1000)?;
        let max_harq_tx = check_range("max_harq_tx", self.max_harq_tx, 1, 16)?;
        Ok(MacParams {
            rat: self.rat,
            numerology,
            n_prb,
            rbg,
            pattern,
            pdcch_symbols: self.pdcch_symbols,
            dmrs_re_per_prb: self.dmrs_re_per_prb,
            layers: self.layers,
            mcs_table: self.mcs_table,
            scheduler: self.scheduler,
            pf_alpha: 1.0 / tc,
            slices,
            quantum_limit: f64::from(self.eqp_quantum_limit),
            dbs_boost,
            bler,
            harq_rtt: u64::from(harq_rtt),
            max_harq_tx,
            seed: self.seed,
            period_slots,
        })
    }
}

/// One logical channel's buffer status as the scheduler sees it.
#[derive(Clone, Copy, Debug)]
pub struct LcInput<'a> {
    pub drb: DrbId,
    /// TS 38.321 priority: lower value = served first.
    pub priority: u8,
    /// Bytes a grant needs to empty it (`BufferStatus::total()`).
    pub buffer_bytes: u64,
    /// Sizes of the next SDUs with header estimates (for EQP; may be empty:
    /// the buffer then counts as one SDU). See `RlcTx::pending_sizes`.
    pub sdu_sizes: &'a [u32],
    /// How long the bearer's oldest packet has waited in the gNB (for the
    /// delay-based scheduler; zero when nothing waits).
    pub head_of_line_age: Duration,
}

/// One UE in one slot.
#[derive(Clone, Copy, Debug)]
pub struct UeInput<'a> {
    pub rnti: Rnti,
    pub channel: ChannelSample,
    pub lcs: &'a [LcInput<'a>],
}

/// A new-data grant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UeGrant {
    pub rnti: Rnti,
    pub prbs: u16,
    /// MAC PDU bytes (TBS / 8).
    pub tbs_bytes: u32,
}

/// Per logical channel, every slot, for every UE passed in: what the TC
/// pipeline's `LowerLayerReport` needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LcGrant {
    pub rnti: Rnti,
    pub drb: DrbId,
    /// Bytes of the TB given to this LC (pull this much from its RLC).
    pub granted_bytes: u32,
    /// TBS bytes if this UE had every PRB of this slot (e5G-BDP max_bytes).
    pub max_bytes: u32,
    /// What the channel newly offers the UE in this decision with every
    /// PRB: `max_bytes` without the capacity carried over from earlier
    /// decisions (equal to it without carry-over), for the cell's
    /// capacity accounting.
    pub offered_bytes: u32,
}

/// A transport block leaving HARQ.
#[derive(Clone, Debug)]
pub struct TbOutcome {
    pub rnti: Rnti,
    pub pdus: Vec<RlcPdu>,
    pub tbs_bytes: u32,
    /// Slot of the first transmission.
    pub first_slot: u64,
    /// Transmissions made (1 = first try).
    pub attempts: u8,
}

/// A HARQ retransmission made in this slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HarqRetx {
    pub rnti: Rnti,
    pub prbs: u16,
    pub tbs_bytes: u32,
    pub attempt: u8,
}

/// Everything one slot produced. Reuse it across slots (`clear` keeps the
/// capacity).
#[derive(Debug, Default)]
pub struct SlotOutput {
    pub slot: u64,
    /// DL symbols of the slot (14, the S-slot DL symbols, or 0); with a
    /// scheduling period, of its first slot.
    pub dl_symbols: u8,
    /// Slots of the period that carry a PDSCH (0 or 1 without a scheduling
    /// period). PRB counts below are per such slot: PRB·slots are them
    /// times this.
    pub dl_slots: u16,
    /// PRBs the slot offers in DL (0 in U slots; with a period, 0 when none
    /// of its slots is DL).
    pub prbs_available: u16,
    /// PRBs granted (new data + HARQ retransmissions), in each DL slot.
    pub prbs_used: u16,
    /// One grant per UE given PRBs for new data, in input order.
    pub grants: Vec<UeGrant>,
    /// One entry per logical channel of every UE of the input (granted or
    /// not), in input order: a UE's channels in the order of its `lcs`.
    pub lc_grants: Vec<LcGrant>,
    pub retx: Vec<HarqRetx>,
    /// TBs decoded in this slot (first try or retransmission).
    pub delivered: Vec<TbOutcome>,
    /// TBs given up after `max_harq_tx` transmissions.
    pub lost: Vec<TbOutcome>,
}

impl SlotOutput {
    pub fn clear(&mut self) {
        self.grants.clear();
        self.lc_grants.clear();
        self.retx.clear();
        self.delivered.clear();
        self.lost.clear();
        self.prbs_used = 0;
        self.prbs_available = 0;
        self.dl_symbols = 0;
        self.dl_slots = 0;
    }

    /// The grant of `rnti` in this slot, if any.
    pub fn grant(&self, rnti: Rnti) -> Option<&UeGrant> {
        self.grants.iter().find(|g| g.rnti == rnti)
    }
}

#[derive(Debug)]
struct HarqTb {
    tb: TbOutcome,
    prbs: u16,
    due: u64,
}

#[derive(Debug)]
struct UeState {
    rnti: Rnti,
    avg: f64,
    slice: Option<usize>,
    harq: Vec<HarqTb>,
    /// Slots a capacity trace's unused bytes stay usable (0: not at all).
    carry_slots: u64,
    /// Unused capacity, oldest first (only with `carry_slots > 0`).
    credit: std::collections::VecDeque<Credit>,
}

impl UeState {
    fn new(rnti: Rnti, slice: Option<usize>) -> UeState {
        UeState {
            rnti,
            avg: 1.0,
            slice,
            harq: Vec::new(),
            carry_slots: 0,
            credit: std::collections::VecDeque::new(),
        }
    }
}

/// Bytes a capacity trace offered and no grant used yet.
#[derive(Debug, Clone, Copy)]
struct Credit {
    /// First slot at which it can no longer be used.
    expires: u64,
    /// Bytes left.
    bytes: u64,
    /// Whole-cell bytes of the decision that offered it (its bytes per
    /// PRB times N).
    full: u64,
}

/// The downlink slots of one scheduling decision, by PDSCH symbols: at
/// most two kinds (D slots and S slots), each `(symbols, slots)`, larger
/// symbol count first, `(0, 0)` when unused.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
struct DlSlots([(u8, u16); 2]);

impl DlSlots {
    fn add(&mut self, symbols: u8) {
        if symbols == 0 {
            return;
        }
        let k = &mut self.0;
        if k[0].1 == 0 || k[0].0 == symbols {
            k[0] = (symbols, k[0].1 + 1);
        } else if k[1].1 == 0 || k[1].0 == symbols {
            k[1] = (symbols, k[1].1 + 1);
        } else {
            unreachable!("a slot pattern has two kinds of DL slot at most");
        }
        if k[1].0 > k[0].0 {
            k.swap(0, 1);
        }
    }

    fn count(&self) -> u16 {
        self.0[0].1 + self.0[1].1
    }
}

/// Bytes as a function of PRBs for one UE in one slot.
#[derive(Debug, Clone)]
pub(crate) enum Rate {
    None,
    /// Index into the TBS cache.
    Tbs(usize),
    /// Capacity trace: whole-cell bytes.
    Bytes(u64),
    /// Capacity trace with carried bytes: `(bytes, whole-cell bytes)`
    /// chunks `credit_view[start..start + len]`, oldest first.
    Credit {
        start: usize,
        len: usize,
    },
}

/// The scheduler of one cell.
#[derive(Debug)]
pub struct Mac {
    p: MacParams,
    /// Every UE the MAC has scheduled, by RNTI.
    ues: Vec<UeState>,
    /// Per UE of the decision: the index of its state in `ues`, found once
    /// per decision (per-slot scratch).
    states: Vec<usize>,
    rng: RngStream,
    rr_offset: usize,
    /// Bytes by n_PRB (index) for (MCS, DL slots of the decision): the
    /// sum of the slots' TBS.
    tbs_cache: Vec<((Mcs, DlSlots), Vec<u32>)>,
    quantum: Vec<f64>,
    // Scratch.
    order: Vec<usize>,
    alloc: Vec<u16>,
    demand: Vec<u16>,
    rates: Vec<Rate>,
    /// Per UE of the decision: the bytes its own sample offers with every
    /// PRB, before carried capacity is added (per-slot scratch).
    offered: Vec<u32>,
    rbgs: Vec<u16>,
    /// How many of `rbgs` are of the full size P (all but a shorter last).
    full_rbgs: usize,
    /// [`Mac::slots_to_next_pull`] by the decision's slot modulo the slot
    /// pattern's length: the answer depends on nothing else, and the node
    /// asks for it every decision.
    next_pull: Vec<u64>,
    busy: Vec<bool>,
    /// A UE's logical channels in priority order (per-slot scratch).
    lc_order: Vec<usize>,
    /// Carried capacity of this decision's UEs, `(bytes, whole-cell bytes)`
    /// (per-slot scratch, see [`Rate::Credit`]).
    credit_view: Vec<(u64, u64)>,
    last_slot: Option<u64>,
    /// The scheduler of the configuration: what the cell returns to when
    /// slices set at run time are removed ([`Mac::set_slices`]).
    configured_scheduler: SchedulerKind,
    /// Whether the slices were set at run time: then a UE no slice lists
    /// is in the first one ([`Mac::set_slices`]).
    runtime_slices: bool,
}

impl Mac {
    pub fn new(params: MacParams) -> Mac {
        let n = params.n_prb;
        let p = params.rbg;
        let mut rbgs = vec![p; usize::from(n / p)];
        if !n.is_multiple_of(p) {
            rbgs.push(n % p);
        }
        let full_rbgs = rbgs.iter().take_while(|&&s| s == p).count();
        let quantum = vec![0.0; params.slices.len()];
        let rng = RngStream::new(params.seed, "mac/harq");
        let mut mac = Mac {
            configured_scheduler: params.scheduler,
            runtime_slices: false,
            p: params,
            ues: Vec::new(),
            states: Vec::new(),
            rng,
            rr_offset: 0,
            tbs_cache: Vec::new(),
            quantum,
            order: Vec::new(),
            alloc: Vec::new(),
            demand: Vec::new(),
            rates: Vec::new(),
            offered: Vec::new(),
            rbgs,
            full_rbgs,
            next_pull: Vec::new(),
            busy: Vec::new(),
            lc_order: Vec::new(),
            credit_view: Vec::new(),
            last_slot: None,
        };
        let cycle = mac.p.pattern.period_slots().max(1) as u64;
        mac.next_pull = (0..cycle).map(|s| mac.pull_distance(s)).collect();
        mac
    }

    pub fn params(&self) -> &MacParams {
        &self.p
    }

    /// N_RB of the cell.
    pub fn n_prb(&self) -> u16 {
        self.p.n_prb
    }

    /// Sizes of the RBGs (all P, the last one the remainder).
    pub fn rbg_sizes(&self) -> &[u16] {
        &self.rbgs
    }

    /// EQP quanta per slice (PRBs lent > 0, borrowed < 0).
    pub fn quanta(&self) -> &[f64] {
        &self.quantum
    }

    /// Slot duration.
    pub fn slot_duration(&self) -> Duration {
        self.p.numerology.slot_duration()
    }

    /// Slot index containing `now` (slot 0 starts at `Instant::ZERO`).
    pub fn slot_at(&self, now: Instant) -> u64 {
        self.p
            .numerology
            .slot_index(now.saturating_since(Instant::ZERO))
    }

    /// PDSCH symbols in slot `slot` (0: no DL).
    pub fn pdsch_symbols(&self, slot: u64) -> u8 {
        let dl = self.p.pattern.dl_symbols(slot);
        let n = dl.saturating_sub(self.p.pdcch_symbols);
        // At least one data symbol besides the DM-RS REs.
        if u16::from(n) * 12 > self.p.dmrs_re_per_prb {
            n
        } else {
            0
        }
    }

    /// Replaces the downlink slices at run time (a RIC's slice control):
    /// `slices` are (share of the cell's PRBs as a fraction, UEs), the
    /// shares adding up to at most 1, each UE in at most one slice. A cell
    /// configured with a scheduler that does not slice becomes a fixed
    /// partition (the FlexRAN/OAI static slicing: round robin inside each
    /// slice) while it has slices, and gets its scheduler back when they
    /// are all removed; `fixed_partition` and `eqp` keep theirs and need
    /// at least one slice. Refused without change, with the reason.
    ///
    /// A UE that none of `slices` lists, one that attaches after the
    /// control among them, is scheduled in the first slice, the default
    /// slice: a RIC's slice control describes the UEs it knows, and a UE
    /// it did not know of must not be left without PRBs (FlexRIC's
    /// emulated gNB and OAI's slicing put a new UE into the default
    /// slice; the configuration's slices keep their UE lists exact).
    pub fn set_slices(&mut self, slices: Vec<(f64, Vec<Rnti>)>) -> Result<(), String> {
        let mut total = 0.0;
        let mut seen: Vec<Rnti> = Vec::new();
        for (i, (share, ues)) in slices.iter().enumerate() {
            if !(0.0..=1.0).contains(share) {
                return Err(format!("slice {i}: share {share} is not within 0..=1"));
            }
            total += share;
            for u in ues {
                if seen.contains(u) {
                    return Err(format!("RNTI {}: a UE belongs to one slice only", u.0));
                }
                seen.push(*u);
            }
        }
        if total > 1.0 + 1e-9 {
            return Err(format!(
                "the shares add up to {:.1} % of the cell's PRBs (at most 100 %)",
                total * 100.0
            ));
        }
        let slicing = |k| matches!(k, SchedulerKind::FixedPartition | SchedulerKind::Eqp);
        if slices.is_empty() && slicing(self.configured_scheduler) {
            return Err(format!(
                "the cell's scheduler {:?} needs at least one slice",
                self.configured_scheduler
            ));
        }
        self.p.scheduler = if slices.is_empty() || slicing(self.configured_scheduler) {
            self.configured_scheduler
        } else {
            SchedulerKind::FixedPartition
        };
        self.quantum = vec![0.0; slices.len()];
        self.runtime_slices = !slices.is_empty();
        self.p.slices = slices;
        for i in 0..self.ues.len() {
            self.ues[i].slice = self.slice_of(self.ues[i].rnti);
        }
        Ok(())
    }

    /// The slice `rnti` is scheduled in: the one that lists it, else,
    /// under slices set at run time, the first ([`Mac::set_slices`]).
    pub fn slice_of(&self, rnti: Rnti) -> Option<usize> {
        let listed = self.p.slices.iter().position(|(_, u)| u.contains(&rnti));
        listed.or((self.runtime_slices).then_some(0))
    }

    /// The state of `rnti`, if the MAC has scheduled it.
    fn state(&self, rnti: Rnti) -> Option<&UeState> {
        let i = self.ues.binary_search_by_key(&rnti, |u| u.rnti).ok()?;
        Some(&self.ues[i])
    }

    /// The index in `ues` of the state of `rnti`, a new one if needed.
    fn state_index(&mut self, rnti: Rnti) -> usize {
        self.ues
            .binary_search_by_key(&rnti, |u| u.rnti)
            .unwrap_or_else(|i| {
                let slice = self.slice_of(rnti);
                self.ues.insert(i, UeState::new(rnti, slice));
                i
            })
    }

    /// Index of the bytes-by-n_PRB table of `mcs` over `slots`.
    fn tbs_index(&mut self, mcs: Mcs, slots: DlSlots) -> usize {
        if let Some(i) = self.tbs_cache.iter().position(|(k, _)| *k == (mcs, slots)) {
            return i;
        }
        let one_slot = |n: u16, symbols: u8| -> u32 {
            if n == 0 {
                return 0;
            }
            if self.p.rat == Rat::Lte {
                // Every index of the three NR tables that `Mcs::new`
                // accepts is a valid LTE I_MCS (0..=28).
                return lte_tbs_for_mcs(mcs.index, n).map_or(0, |b| b / 8);
            }
            TbsInput {
                n_symb_sh: symbols,
                n_dmrs_prb: self.p.dmrs_re_per_prb,
                n_oh_prb: 0,
                n_prb: n,
                layers: self.p.layers,
                tb_scaling: Default::default(),
            }
            .tbs(mcs)
            .map_or(0, |b| b / 8)
        };
        // At most 800 slots (100 ms at µ = 3) of at most ~160 kB: far
        // below u32::MAX.
        let v = (0..=self.p.n_prb)
            .map(|n| {
                slots
                    .0
                    .iter()
                    .map(|&(symbols, k)| u32::from(k) * one_slot(n, symbols))
                    .sum()
            })
            .collect();
        self.tbs_cache.push(((mcs, slots), v));
        self.tbs_cache.len() - 1
    }

    /// Whether the decision starting at `slot` (one slot, or the period
    /// from it) has a slot with PDSCH symbols.
    pub fn decision_has_dl(&self, slot: u64) -> bool {
        (slot..slot + u64::from(self.p.period_slots)).any(|s| self.pdsch_symbols(s) > 0)
    }

    /// Slots from the decision at `slot` to the next decision with
    /// downlink (the next MAC pull): the period in FDD, more before TDD
    /// slots without downlink (DDDSU, from the S slot: 2). A pattern
    /// without any downlink answers one period.
    pub fn slots_to_next_pull(&self, slot: u64) -> u64 {
        let cycle = self.next_pull.len() as u64;
        self.next_pull[(slot % cycle) as usize]
    }

    /// [`Mac::slots_to_next_pull`] worked out: whether a decision has
    /// downlink depends on its slots' places in the slot pattern only, so
    /// the answer repeats with the pattern.
    fn pull_distance(&self, slot: u64) -> u64 {
        let k = u64::from(self.p.period_slots);
        let cycle = self.p.pattern.period_slots() as u64;
        (1..=cycle)
            .map(|i| i * k)
            .find(|&d| self.decision_has_dl(slot + d))
            .unwrap_or(k)
    }

    /// Decisions with downlink per repetition of the slot pattern as the
    /// MAC's decisions see it: DDDSU slot by slot 4; FDD 1; a 10-slot
    /// period over DDDSU 1. This is how many reports back the same TDD
    /// phase was.
    pub fn pulls_per_pattern(&self) -> u16 {
        let k = self.p.period_slots as usize;
        let l = self.p.pattern.period_slots().max(1);
        // Decisions until the (slot mod l) phase repeats: l / gcd(l, k).
        let (mut a, mut b) = (l, k);
        while b != 0 {
            (a, b) = (b, a % b);
        }
        let decisions = (l / a) as u64;
        let n = (0..decisions)
            .filter(|&i| self.decision_has_dl(i * k as u64))
            .count();
        n.clamp(1, usize::from(u16::MAX)) as u16
    }

    /// Slots per scheduling decision.
    pub fn period_slots(&self) -> u32 {
        self.p.period_slots
    }

    /// The scheduling period (one slot unless configured).
    pub fn period(&self) -> Duration {
        Duration::from_nanos(self.slot_duration().as_nanos() * u64::from(self.p.period_slots))
    }

    pub(crate) fn bytes(&self, rate: &Rate, n: u16) -> u32 {
        match *rate {
            Rate::None => 0,
            Rate::Tbs(i) => self.tbs_cache[i].1[usize::from(n.min(self.p.n_prb))],
            Rate::Bytes(b) => (b * u64::from(n.min(self.p.n_prb)) / u64::from(self.p.n_prb))
                .min(u64::from(u32::MAX)) as u32,
            Rate::Credit { start, len } => {
                // Oldest chunk first, each at its own bytes per PRB: chunk
                // (b, f) needs b·N/f of the n PRBs.
                let big_n = f64::from(self.p.n_prb);
                let mut prbs = f64::from(n.min(self.p.n_prb));
                let mut total = 0u64;
                for &(b, f) in &self.credit_view[start..start + len] {
                    let need = b as f64 * big_n / f as f64;
                    if need <= prbs + 1e-9 {
                        total += b;
                        prbs -= need;
                    } else {
                        total += (prbs.max(0.0) * f as f64 / big_n).floor() as u64;
                        break;
                    }
                }
                total.min(u64::from(u32::MAX)) as u32
            }
        }
    }

    /// Smallest PRB count whose bytes cover `demand`, or if no count
    /// does, the smallest that carries as much as all N PRBs (N unless
    /// carried bytes fill fewer PRBs than the slot has).
    pub(crate) fn prbs_for(&self, rate: &Rate, demand: u64) -> u16 {
        let (mut lo, mut hi) = (0u16, self.p.n_prb);
        let demand = demand.min(u64::from(self.bytes(rate, hi)));
        if let Rate::Tbs(i) = *rate {
            // The same search over the cached bytes-by-n_PRB table itself
            // (non-decreasing in n_PRB, as the search below assumes).
            let table = &self.tbs_cache[i].1[..=usize::from(hi)];
            return table.partition_point(|&b| u64::from(b) < demand) as u16;
        }
        while lo < hi {
            let mid = (lo + hi) / 2;
            if u64::from(self.bytes(rate, mid)) >= demand {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo
    }

    /// Schedules slot `slot` (its start time is `now`), or with a
    /// scheduling period the period of [`Mac::period_slots`] slots starting
    /// at `slot`: HARQ retransmissions first, then new data with the
    /// configured scheduler. Channel samples must cover the same span.
    /// `ues` should list every attached UE with its logical channels, in any
    /// order; `out` is cleared first.
    pub fn schedule(&mut self, slot: u64, now: Instant, ues: &[UeInput<'_>], out: &mut SlotOutput) {
        let _ = now;
        out.clear();
        out.slot = slot;
        self.last_slot = Some(slot);
        // Each UE's state, found once for the decision. A new UE's state
        // goes in in RNTI order and moves the states after it.
        self.states.clear();
        for u in ues {
            let known = self.ues.len();
            let i = self.state_index(u.rnti);
            if self.ues.len() > known {
                for s in self.states.iter_mut().filter(|s| **s >= i) {
                    *s += 1;
                }
            }
            self.states.push(i);
        }
        let k = u64::from(self.p.period_slots);
        let mut dl = DlSlots::default();
        if k == 1 {
            // Every slot on its own (the default): no loop.
            let symbols = self.pdsch_symbols(slot);
            dl.0[0] = (symbols, u16::from(symbols > 0));
        } else {
            for s in slot..slot + k {
                dl.add(self.pdsch_symbols(s));
            }
        }
        let dl_slots = dl.count();
        out.dl_symbols = self.p.pattern.dl_symbols(slot);
        out.dl_slots = dl_slots;
        let n = if dl_slots == 0 { 0 } else { self.p.n_prb };
        out.prbs_available = n;
        // Rates.
        self.rates.clear();
        for u in ues {
            let r = match u.channel {
                _ if dl_slots == 0 => Rate::None,
                ChannelSample::Outage => Rate::None,
                ChannelSample::Mcs(m) => Rate::Tbs(self.tbs_index(m, dl)),
                // The trace's bytes of the U slots are not carried, as
                // when every slot is scheduled on its own (exact for a
                // trace at a constant rate over the period).
                ChannelSample::Bytes(b) if u64::from(dl_slots) == k => Rate::Bytes(b),
                ChannelSample::Bytes(b) => Rate::Bytes(b * u64::from(dl_slots) / k),
            };
            self.rates.push(r);
        }
        self.offered.clear();
        for k in 0..self.rates.len() {
            let b = self.bytes(&self.rates[k], n);
            self.offered.push(b);
        }
        self.apply_credit(slot, ues);
        // HARQ retransmissions due.
        self.busy.clear();
        self.busy.resize(ues.len(), false);
        let mut left = n;
        for (k, u) in ues.iter().enumerate() {
            if n == 0 || matches!(self.rates[k], Rate::None) {
                continue;
            }
            let st = &mut self.ues[self.states[k]];
            let Some(i) = st
                .harq
                .iter()
                .enumerate()
                .filter(|(_, h)| h.due <= slot && h.prbs <= left)
                .min_by_key(|(_, h)| (h.due, h.tb.first_slot))
                .map(|(i, _)| i)
            else {
                continue;
            };
            let mut h = st.harq.swap_remove(i);
            left -= h.prbs;
            self.busy[k] = true;
            h.tb.attempts += 1;
            out.retx.push(HarqRetx {
                rnti: u.rnti,
                prbs: h.prbs,
                tbs_bytes: h.tb.tbs_bytes,
                attempt: h.tb.attempts,
            });
            out.prbs_used += h.prbs;
            let fail = self.rng.bernoulli(self.p.bler);
            if !fail {
                out.delivered.push(h.tb);
            } else if h.tb.attempts >= self.p.max_harq_tx {
                out.lost.push(h.tb);
            } else {
                h.due = slot + self.p.harq_rtt;
                self.ues[self.states[k]].harq.push(h);
            }
        }
        // Demands in PRBs.
        self.alloc.clear();
        self.alloc.resize(ues.len(), 0);
        self.demand.clear();
        for (k, u) in ues.iter().enumerate() {
            let bytes: u64 = u.lcs.iter().map(|l| l.buffer_bytes).sum();
            let d = if self.busy[k] || bytes == 0 || matches!(self.rates[k], Rate::None) {
                0
            } else {
                self.prbs_for(&self.rates[k], bytes)
            };
            self.demand.push(d);
        }
        if left > 0 {
            match self.p.scheduler {
                SchedulerKind::RoundRobin => {
                    self.round_robin(ues, left, None);
                }
                SchedulerKind::ProportionalFair => self.proportional_fair(ues, left),
                SchedulerKind::FixedPartition => {
                    let shares: Vec<u16> = self
                        .p
                        .slices
                        .iter()
                        .map(|(s, _)| (f64::from(n) * s).floor() as u16)
                        .collect();
                    // Unused PRBs of a slice are not lent: its whole share
                    // leaves the budget whatever it used.
                    let mut budget = left;
                    for (i, &sh) in shares.iter().enumerate() {
                        let b = sh.min(budget);
                        self.round_robin(ues, b, Some(i));
                        budget -= b;
                    }
                }
                SchedulerKind::Eqp => eqp::schedule(self, ues, left),
                SchedulerKind::DelayBased => self.delay_based(ues, left),
            }
            self.rr_offset = self.rr_offset.wrapping_add(1);
        }
        // Grants, LCP, PF averages.
        for (k, u) in ues.iter().enumerate() {
            let prbs = self.alloc[k];
            let tbs = self.bytes(&self.rates[k], prbs);
            let max_bytes = self.bytes(&self.rates[k], n);
            if prbs > 0 && tbs > 0 {
                out.grants.push(UeGrant {
                    rnti: u.rnti,
                    prbs,
                    tbs_bytes: tbs,
                });
                out.prbs_used += prbs;
            }
            let served = if prbs > 0 { tbs } else { 0 };
            // Strict priority LCP (stable for equal priorities).
            let mut left_bytes = u64::from(served);
            let base = out.lc_grants.len();
            for l in u.lcs {
                out.lc_grants.push(LcGrant {
                    rnti: u.rnti,
                    drb: l.drb,
                    granted_bytes: 0,
                    max_bytes,
                    offered_bytes: self.offered[k],
                });
            }
            self.lc_order.clear();
            self.lc_order.extend(0..u.lcs.len());
            self.lc_order.sort_by_key(|&i| u.lcs[i].priority);
            for &i in &self.lc_order {
                let g = left_bytes.min(u.lcs[i].buffer_bytes);
                out.lc_grants[base + i].granted_bytes = g as u32;
                left_bytes -= g;
            }
            let st = &mut self.ues[self.states[k]];
            st.avg = (1.0 - self.p.pf_alpha) * st.avg + self.p.pf_alpha * f64::from(served);
            // The bytes the grant carried leave the carried capacity,
            // oldest first; padding (a grant rounded up to whole RBGs
            // beyond the buffer) costs PRBs but no trace bytes: the trace
            // counts delivered bytes.
            let mut used = u64::from(served) - left_bytes;
            while used > 0 {
                // The order of `apply_credit`'s view: best rate first,
                // oldest first among equals.
                let Some(i) = (0..st.credit.len())
                    .filter(|&i| st.credit[i].bytes > 0)
                    .min_by_key(|&i| {
                        let f = if BEST_RATE_FIRST {
                            st.credit[i].full
                        } else {
                            0
                        };
                        (std::cmp::Reverse(f), i)
                    })
                else {
                    break;
                };
                let c = &mut st.credit[i];
                let take = used.min(c.bytes);
                c.bytes -= take;
                used -= take;
            }
            if !st.credit.is_empty() {
                st.credit.retain(|c| c.bytes > 0);
            }
        }
    }

    /// Lets a capacity trace's unused bytes of `rnti` stay usable for
    /// `window` (rounded up to whole slots; zero: not at all, the default).
    /// See the module docs.
    pub fn set_carry_over(&mut self, rnti: Rnti, window: Duration) {
        let slot = self.slot_duration().as_nanos().max(1);
        let slots = window.as_nanos().div_ceil(slot);
        let i = self.state_index(rnti);
        let st = &mut self.ues[i];
        st.carry_slots = slots;
        if slots == 0 {
            st.credit.clear();
        }
    }

    /// Bytes of capacity `rnti` carries over from earlier decisions (not
    /// counting what the current one offered and used).
    pub fn carried_bytes(&self, rnti: Rnti) -> u64 {
        self.state(rnti)
            .map_or(0, |u| u.credit.iter().map(|c| c.bytes).sum())
    }

    /// Carry-over (module docs): expires old credit, adds this decision's
    /// trace bytes, and turns the rate of a UE holding older credit into
    /// [`Rate::Credit`].
    fn apply_credit(&mut self, slot: u64, ues: &[UeInput<'_>]) {
        self.credit_view.clear();
        for k in 0..ues.len() {
            let st = &mut self.ues[self.states[k]];
            if st.carry_slots == 0 {
                continue;
            }
            while st.credit.front().is_some_and(|c| c.expires <= slot) {
                st.credit.pop_front();
            }
            let new = match self.rates[k] {
                Rate::Bytes(b) => b,
                // No DL in this decision or an outage: only time passes.
                _ => continue,
            };
            if new > 0 {
                st.credit.push_back(Credit {
                    expires: slot + st.carry_slots.max(1),
                    bytes: new,
                    full: new,
                });
            }
            // Nothing carried (no credit, or only this decision's): the
            // plain rate, identical to no carry-over.
            if st.credit.is_empty() || (new > 0 && st.credit.len() == 1) {
                continue;
            }
            let start = self.credit_view.len();
            self.credit_view
                .extend(st.credit.iter().map(|c| (c.bytes, c.full)));
            // Best bytes-per-PRB first (most bytes in the slot's N PRBs),
            // oldest first among equals (stable sort).
            if BEST_RATE_FIRST {
                self.credit_view[start..].sort_by_key(|&(_, f)| std::cmp::Reverse(f));
            }
            self.rates[k] = Rate::Credit {
                start,
                len: st.credit.len(),
            };
        }
    }

    /// Round robin by RBG over backlogged UEs (of `slice` if given), using
    /// at most `budget` PRBs. Returns PRBs assigned.
    ///
    /// The UEs take turns in RNTI order (rotated by one each slot), one RBG
    /// per turn, a UE leaving the rotation once it holds its demand. RBGs
    /// are handed out from the first; all but the last are P PRBs, and
    /// `budget` never exceeds the cell, so the RBG list is never exhausted.
    /// Whole rounds in which every UE of the rotation takes a full RBG and
    /// none is sated before its last turn are given at once (P PRBs times
    /// the number of rounds each); the rounds in which the rotation
    /// changes, the last RBG or the budget's end are played turn by turn.
    /// Same allocation as turn by turn throughout, in a few steps, and in
    /// one when a single UE is in the rotation (the common cell of one
    /// UE, or of one backlogged UE).
    fn round_robin(&mut self, ues: &[UeInput<'_>], budget: u16, slice: Option<usize>) -> u16 {
        self.order.clear();
        for k in 0..ues.len() {
            let in_slice = slice.is_none_or(|s| self.ues[self.states[k]].slice == Some(s));
            if in_slice && self.demand[k] > self.alloc[k] {
                self.order.push(k);
            }
        }
        match self.order[..] {
            [] => 0,
            [k] => {
                let take = self.alone(self.demand[k] - self.alloc[k], budget);
                self.alloc[k] += take;
                take
            }
            _ => self.rounds(ues, budget),
        }
    }

    /// What a UE alone in the round robin's rotation takes towards the
    /// `missing` PRBs of its demand: its turns are every turn, so it gets
    /// RBGs from the first until they cover `missing` (whole RBGs of P
    /// PRBs, or all of them once the P-sized ones fall short), the last
    /// one cut to what is left of `budget`.
    fn alone(&self, missing: u16, budget: u16) -> u16 {
        let p = self.p.rbg;
        let rbgs = missing.div_ceil(p);
        let covering = if usize::from(rbgs) <= self.full_rbgs {
            rbgs * p
        } else {
            self.p.n_prb
        };
        covering.min(budget)
    }

    /// The round robin's turns over `self.order` (two UEs or more).
    fn rounds(&mut self, ues: &[UeInput<'_>], budget: u16) -> u16 {
        // Rotate by RNTI order so the first RBG goes to a different UE each slot.
        self.order.sort_by_key(|&k| ues[k].rnti);
        let m = self.order.len();
        self.order.rotate_left(self.rr_offset % m);
        let p = self.p.rbg;
        // RBGs of P PRBs (every one but a shorter last).
        let full = self.full_rbgs;
        let mut left = budget;
        let mut rbg_i = 0usize;
        loop {
            // UEs still in the rotation, and the fewest whole RBGs of P
            // PRBs any of them takes before its demand is met.
            let mut active = 0usize;
            let mut rounds = usize::MAX;
            for &k in &self.order {
                if self.alloc[k] < self.demand[k] {
                    active += 1;
                    rounds = rounds.min(usize::from((self.demand[k] - self.alloc[k]) / p));
                }
            }
            if left == 0 || active == 0 {
                break;
            }
            let rounds = rounds
                .min((full - rbg_i.min(full)) / active)
                .min(usize::from(left) / (active * usize::from(p)));
            if rounds > 0 {
                // `each` is at most a UE's missing PRBs and `each * active`
                // at most `left`: both fit in u16.
                let each = rounds as u16 * p;
                for &k in &self.order {
                    if self.alloc[k] < self.demand[k] {
                        self.alloc[k] += each;
                    }
                }
                left -= each * active as u16;
                rbg_i += rounds * active;
            }
            // One round turn by turn.
            for &k in &self.order {
                if left == 0 {
                    break;
                }
                if self.alloc[k] >= self.demand[k] {
                    continue;
                }
                let size = self.rbgs.get(rbg_i).copied().unwrap_or(1);
                rbg_i += 1;
                let take = size.min(left);
                self.alloc[k] += take;
                left -= take;
            }
        }
        budget - left
    }

    /// Brunello's DBS (sec. 4.5): oldest packet first. UEs in order of
    /// (boosted and past the threshold, head-of-line age, RNTI), each
    /// given what its buffer needs while PRBs last.
    fn delay_based(&mut self, ues: &[UeInput<'_>], budget: u16) {
        let age = |u: &UeInput<'_>| {
            u.lcs
                .iter()
                .map(|l| l.head_of_line_age)
                .max()
                .unwrap_or(Duration::ZERO)
        };
        let boosted = |u: &UeInput<'_>| {
            self.p
                .dbs_boost
                .as_ref()
                .is_some_and(|(after, who)| who.contains(&u.rnti) && age(u) > *after)
        };
        self.order.clear();
        self.order
            .extend((0..ues.len()).filter(|&k| self.demand[k] > self.alloc[k]));
        let key = |k: usize| {
            let u = &ues[k];
            (
                std::cmp::Reverse(boosted(u)),
                std::cmp::Reverse(age(u)),
                u.rnti,
            )
        };
        let mut order = std::mem::take(&mut self.order);
        order.sort_by_key(|&k| key(k));
        let mut left = budget;
        for &k in &order {
            let take = (self.demand[k] - self.alloc[k]).min(left);
            self.alloc[k] += take;
            left -= take;
        }
        self.order = order;
    }

    /// PF per RBG: metric = bytes with all PRBs / EWMA throughput.
    fn proportional_fair(&mut self, ues: &[UeInput<'_>], budget: u16) {
        let n = self.p.n_prb;
        let mut left = budget;
        let mut rbg_i = 0;
        let m = ues.len();
        while left > 0 {
            let mut best: Option<(f64, usize)> = None;
            for j in 0..m {
                let k = (j + self.rr_offset) % m;
                if self.alloc[k] >= self.demand[k] {
                    continue;
                }
                let r = f64::from(self.bytes(&self.rates[k], n));
                let metric = r / self.ues[self.states[k]].avg.max(1e-9);
                if best.is_none_or(|(b, _)| metric > b) {
                    best = Some((metric, k));
                }
            }
            let Some((_, k)) = best else { break };
            let size = self.rbgs[rbg_i % self.rbgs.len()];
            rbg_i += 1;
            let take = size.min(left);
            self.alloc[k] += take;
            left -= take;
        }
    }

    /// Hands the MAC the RLC PDUs built for `grant` in the current slot; the
    /// HARQ draw decides whether they arrive now (`out.delivered`) or wait
    /// for a retransmission.
    pub fn transmit(&mut self, grant: &UeGrant, pdus: Vec<RlcPdu>, out: &mut SlotOutput) {
        let slot = out.slot;
        let tb = TbOutcome {
            rnti: grant.rnti,
            pdus,
            tbs_bytes: grant.tbs_bytes,
            first_slot: slot,
            attempts: 1,
        };
        if !self.rng.bernoulli(self.p.bler) {
            out.delivered.push(tb);
        } else if self.p.max_harq_tx <= 1 {
            out.lost.push(tb);
        } else {
            let i = self.state_index(grant.rnti);
            self.ues[i].harq.push(HarqTb {
                tb,
                prbs: grant.prbs,
                due: slot + self.p.harq_rtt,
            });
        }
    }

    /// Flushes the HARQ processes of UE `rnti` (TS 38.321 §5.12: a MAC
    /// reset at handover): its TBs waiting for a retransmission are
    /// forgotten (whoever hands the UE over accounts for their data).
    pub fn flush_harq(&mut self, rnti: Rnti) {
        if let Ok(i) = self.ues.binary_search_by_key(&rnti, |u| u.rnti) {
            self.ues[i].harq.clear();
        }
    }

    /// TBs waiting for a HARQ retransmission.
    pub fn harq_pending(&self) -> usize {
        self.ues.iter().map(|u| u.harq.len()).sum()
    }

    /// The TBs waiting for a HARQ retransmission, with the RLC PDUs they
    /// carry (accounting only).
    pub fn harq_tbs(&self) -> impl Iterator<Item = &TbOutcome> {
        self.ues.iter().flat_map(|u| u.harq.iter().map(|h| &h.tb))
    }

    /// PF EWMA throughput (bytes per slot) of a UE.
    pub fn average_throughput(&self, rnti: Rnti) -> Option<f64> {
        self.state(rnti).map(|u| u.avg)
    }

    pub(crate) fn eqp_parts(&mut self) -> (&MacParams, &mut Vec<f64>) {
        (&self.p, &mut self.quantum)
    }

    pub(crate) fn quantum_mut(&mut self) -> &mut Vec<f64> {
        &mut self.quantum
    }

    pub(crate) fn demand_of(&self, k: usize) -> u16 {
        self.demand[k]
    }

    pub(crate) fn alloc_of(&self, k: usize) -> u16 {
        self.alloc[k]
    }

    pub(crate) fn add_alloc(&mut self, k: usize, prbs: u16) {
        self.alloc[k] += prbs;
    }

    pub(crate) fn rate_of(&self, k: usize) -> &Rate {
        &self.rates[k]
    }

    pub(crate) fn slice_index(&self, rnti: Rnti) -> Option<usize> {
        self.state(rnti).and_then(|u| u.slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn cell(rat: Rat, prbs: u16, pattern: &str, period_ms: u64) -> Mac {
        Mac::new(
            MacConfig {
                rat,
                prbs: Some(prbs),
                slot_pattern: pattern.into(),
                scheduling_period: (period_ms > 0).then(|| Duration::from_millis(period_ms)),
                ..MacConfig::default()
            }
            .build()
            .unwrap(),
        )
    }

    /// New UEs joining a decision, before and between known ones, each
    /// find their own state, and the known ones keep theirs.
    #[test]
    fn every_ue_of_a_decision_finds_its_own_state() {
        let mut mac = cell(Rat::Nr, 25, "FDD", 0);
        let mut out = SlotOutput::default();
        let ue = |r| UeInput {
            rnti: Rnti(r),
            channel: ChannelSample::Outage,
            lcs: &[],
        };
        mac.schedule(0, Instant::ZERO, &[ue(5)], &mut out);
        let ues = [ue(7), ue(3), ue(5), ue(1), ue(4)];
        mac.schedule(1, Instant::ZERO, &ues, &mut out);
        for (k, u) in ues.iter().enumerate() {
            assert_eq!(mac.ues[mac.states[k]].rnti, u.rnti);
        }
        assert!(mac.ues.is_sorted_by_key(|s| s.rnti));
    }

    proptest! {
        /// The search over the cached TBS table answers as the generic
        /// search does: the fewest PRBs whose bytes cover the demand (all
        /// N's bytes at most), checked against a scan of every count.
        #[test]
        fn prbs_for_a_tbs_rate_is_the_fewest_prbs_that_cover_the_demand(
            lte in any::<bool>(),
            table in prop::sample::select(McsTable::ALL.to_vec()),
            index in 0u8..=27,
            prbs in 1u16..=110,
            pattern in prop::sample::select(vec!["FDD", "DDDSU", "DDDDDDDSUU"]),
            period_ms in prop::sample::select(vec![0u64, 5, 10]),
            demand in 0u64..400_000,
        ) {
            let rat = if lte { Rat::Lte } else { Rat::Nr };
            let pattern = if lte { "FDD" } else { pattern };
            let mut mac = cell(rat, prbs, pattern, period_ms);
            let mcs = Mcs::new(table, index.min(table.max_index())).unwrap();
            let mut dl = DlSlots::default();
            for s in 0..u64::from(mac.p.period_slots) {
                dl.add(mac.pdsch_symbols(s));
            }
            let rate = Rate::Tbs(mac.tbs_index(mcs, dl));
            let wanted = demand.min(u64::from(mac.bytes(&rate, prbs)));
            let scan = (0..=prbs)
                .find(|&n| u64::from(mac.bytes(&rate, n)) >= wanted)
                .unwrap();
            prop_assert_eq!(mac.prbs_for(&rate, demand), scan);
        }

        /// A UE alone in the round robin's rotation gets in one step what
        /// the turns give it: RBGs in order until its demand or the budget
        /// is met.
        #[test]
        fn a_ue_alone_in_the_round_robin_gets_what_its_turns_give(
            prbs in 1u16..=MAX_PRB,
            rbg_size in prop::option::of(1u16..=16),
            missing in 1u16..=300,
            budget in 0u16..=MAX_PRB,
        ) {
            let mut mac = Mac::new(
                MacConfig { prbs: Some(prbs), rbg_size, ..MacConfig::default() }
                    .build()
                    .unwrap(),
            );
            let budget = budget.min(prbs);
            let ues = [UeInput { rnti: Rnti(1), channel: ChannelSample::Outage, lcs: &[] }];
            mac.order = vec![0];
            mac.demand = vec![missing];
            mac.alloc = vec![0];
            let turns = mac.rounds(&ues, budget);
            prop_assert_eq!(mac.alloc[0], turns);
            prop_assert_eq!(mac.alone(missing, budget), turns);
        }

        /// The table of pull distances answers for every slot as the
        /// pattern walk it was built from.
        #[test]
        fn slots_to_next_pull_repeats_with_the_slot_pattern(
            pattern in prop::sample::select(vec!["FDD", "DDDSU", "DDSUU", "DDDDDDDSUU", "UUUUU"]),
            period_ms in prop::sample::select(vec![0u64, 2, 3, 5, 10]),
            slot in 0u64..100_000,
        ) {
            let mac = cell(Rat::Nr, 25, pattern, period_ms);
            prop_assert_eq!(mac.slots_to_next_pull(slot), mac.pull_distance(slot));
        }
    }
}
