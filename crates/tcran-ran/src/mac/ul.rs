//! The gNB's uplink scheduler: PUSCH grants from scheduling requests and
//! buffer status reports, over the cell's uplink slots, with uplink HARQ.
//!
//! Contract: the caller calls [`UlScheduler::schedule`] once per slot n,
//! in order; it decides the PUSCH of slot n + K2 (TS 38.214 §6.1.2.1, the
//! DCI 0_1 in slot n) if that slot is an uplink slot (FDD: every slot;
//! TDD: the pattern's U slots; S slots carry no PUSCH here). Between
//! decisions the caller reports what the gNB received: an SR on PUCCH
//! ([`UlScheduler::on_sr`]), a BSR MAC CE in a decoded PUSCH
//! ([`UlScheduler::on_bsr`]). Grants come out with the PUSCH slot, PRBs,
//! TBS and whether they are a HARQ retransmission; the caller has the UE
//! build (or resend) its MAC PDU and reports each PUSCH's fate through
//! [`UlScheduler::transmit`], which draws the HARQ outcome.
//!
//! - **What the gNB knows** of a UE's buffer: per LCG the upper end of the
//!   level its last BSR reported (TS 38.321 Table 6.1.3.1-1/-2, read by
//!   [`super::ue::bsr::BufferSizeTable::upper_bound`]; a Long or Short BSR
//!   says the LCGs it leaves out are empty, a truncated one says nothing
//!   about them), less the bytes granted since (each grant's PDU brings the next
//!   report). An SR without a BSR asks for `sr_grant_bytes` (the UE then
//!   sends a BSR in it).
//! - **Resources**: every PRB of the carrier on every uplink slot (PUCCH
//!   and SRS regions are not set aside); TBS by the same TS 38.214
//!   procedure as the downlink (§6.1.4.2 refers PUSCH to §5.1.3.2) with
//!   `pusch_symbols` symbols and the cell's DM-RS REs per PRB, no
//!   transform precoding. A UE gets whole PRBs, as few as hold its need.
//! - **Schedulers**: round robin (the first UE rotates every uplink slot;
//!   each UE in turn takes what it needs of the PRBs left); proportional
//!   fair (UEs by TBS-with-all-PRBs / EWMA of their granted bytes, with
//!   the downlink's time constant, the best first).
//! - **Slices** (`partition`): the cell's slice shares cut every uplink
//!   slot as the downlink's fixed partition does (thesis ch. 4 FP): slice
//!   i owns ⌊N·share_i⌋ PRBs, unused PRBs are not lent, a retransmission
//!   takes its PRBs from its UE's slice; UEs no slice lists share the PRBs
//!   the slices leave. Inside a slice, the scheduler above.
//! - **HARQ**: each new PUSCH fails with probability `bler` (the same
//!   model as the downlink: no soft combining gain); a failed one is
//!   retransmitted, same TBS and PRBs, in the first uplink slot at least
//!   `harq_rtt` slots later, before any new grant (adaptive retransmission
//!   by DCI; NR has no non-adaptive uplink HARQ), and is lost after
//!   `max_harq_tx` transmissions.

use super::ue::bsr::{BsrCe, MAX_LCGS};
use super::{MacParams, Rat};
use crate::channel::ChannelSample;
use crate::phy::tbs::TbsInput;
use crate::phy::tdd::{SlotKind, SlotPattern};
use serde::{Deserialize, Serialize};
use tcran_core::rng::RngStream;
use tcran_core::{ConfigError, Rnti};

/// Which uplink scheduler.
#[derive(
    Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum UlSchedulerKind {
    #[default]
    RoundRobin,
    ProportionalFair,
}

/// The uplink scheduler's configuration; the carrier (PRBs, numerology,
/// TDD pattern, DM-RS) is the cell's ([`super::MacConfig`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct UlConfig {
    /// `round_robin` (default) or `proportional_fair`.
    pub scheduler: UlSchedulerKind,
    /// K2, slots from the DCI to its PUSCH (TS 38.214 §6.1.2.1; default 4,
    /// a common gNB setting for FDD).
    pub k2_slots: u32,
    /// PUSCH symbols of an uplink slot (default 14: the whole slot, one
    /// DM-RS symbol among them).
    pub pusch_symbols: u8,
    /// Bytes granted on an SR when no BSR is known (default 512, tcran's
    /// choice: room for a BSR and a first packet's start).
    pub sr_grant_bytes: u32,
    /// PUSCH block error rate; absent: the cell's (downlink) `bler`.
    pub bler: Option<f64>,
    /// Uplink HARQ round trip in slots; absent: the cell's `harq_rtt`.
    pub harq_rtt: Option<u32>,
    /// Transmissions of a TB before it is lost; absent: the cell's.
    pub max_harq_tx: Option<u8>,
    /// Partition the uplink PRBs by the cell's `slices` (module docs).
    pub partition: bool,
}

impl Default for UlConfig {
    fn default() -> Self {
        UlConfig {
            scheduler: UlSchedulerKind::RoundRobin,
            k2_slots: 4,
            pusch_symbols: 14,
            sr_grant_bytes: 512,
            bler: None,
            harq_rtt: None,
            max_harq_tx: None,
            partition: false,
        }
    }
}

impl UlConfig {
    /// The scheduler's parameters on `cell`'s carrier; every value checked.
    pub fn build(&self, cell: &MacParams) -> Result<UlParams, ConfigError> {
        if cell.rat != Rat::Nr {
            return Err(ConfigError::new(
                "rat",
                "lte",
                "must be \"nr\" for the uplink scheduler (PUSCH TBS by TS 38.214)",
            ));
        }
        let p = UlParams {
            kind: self.scheduler,
            n_prb: cell.n_prb,
            pattern: cell.pattern.clone(),
            k2: u64::from(self.k2_slots),
            pusch_symbols: self.pusch_symbols,
            dmrs_re_per_prb: cell.dmrs_re_per_prb,
            layers: 1,
            sr_grant_bytes: u64::from(self.sr_grant_bytes),
            bler: self.bler.unwrap_or(cell.bler),
            harq_rtt: self.harq_rtt.map_or(cell.harq_rtt, u64::from),
            max_harq_tx: self.max_harq_tx.unwrap_or(cell.max_harq_tx),
            pf_alpha: cell.pf_alpha,
            seed: cell.seed ^ 0x75_6c,
            slices: if self.partition {
                cell.slices.clone()
            } else {
                Vec::new()
            },
        };
        p.check().map_err(|e| {
            // Name the fields as this config spells them.
            let field = match e.field.as_str() {
                "k2" => "k2_slots".to_string(),
                _ => e.field.clone(),
            };
            ConfigError { field, ..e }
        })?;
        Ok(p)
    }
}

/// Parameters of the uplink scheduler (one layer: a UE's single
/// transmit chain, the common case).
#[derive(Clone, Debug)]
pub struct UlParams {
    pub kind: UlSchedulerKind,
    pub n_prb: u16,
    pub pattern: SlotPattern,
    /// K2: slots from the DCI to its PUSCH.
    pub k2: u64,
    /// PUSCH symbols of an uplink slot (1..=14).
    pub pusch_symbols: u8,
    pub dmrs_re_per_prb: u16,
    pub layers: u8,
    /// Bytes granted on an SR with no BSR known.
    pub sr_grant_bytes: u64,
    pub bler: f64,
    pub harq_rtt: u64,
    pub max_harq_tx: u8,
    /// Proportional fair EWMA weight of one slot.
    pub pf_alpha: f64,
    pub seed: u64,
    /// Slice shares (fractions, at most 1 in total) and their UEs; empty:
    /// no partition.
    pub slices: Vec<(f64, Vec<Rnti>)>,
}

impl UlParams {
    /// Checks the values the TBS procedure and HARQ need.
    pub fn check(&self) -> Result<(), ConfigError> {
        use tcran_core::config::{check_f64, check_range};
        check_range("n_prb", self.n_prb, 1, crate::phy::tbs::MAX_PRB)?;
        check_range("k2", self.k2, 0, 32)?;
        check_range("pusch_symbols", self.pusch_symbols, 1, 14)?;
        check_range("layers", self.layers, 1, 4)?;
        check_f64("bler", self.bler, 0.0, 0.99)?;
        check_range("max_harq_tx", self.max_harq_tx, 1, 16)?;
        check_range("harq_rtt", self.harq_rtt, 1, 64)?;
        let total: f64 = self.slices.iter().map(|s| s.0).sum();
        if self.slices.iter().any(|s| !(0.0..=1.0).contains(&s.0)) || total > 1.0 + 1e-9 {
            return Err(ConfigError::new(
                "slices",
                format!("{}%", total * 100.0),
                "shares must be 0..=100% and add up to at most 100%",
            ));
        }
        self.tbs_input(1).n_re()?;
        Ok(())
    }

    fn tbs_input(&self, n_prb: u16) -> TbsInput {
        TbsInput {
            n_symb_sh: self.pusch_symbols,
            n_dmrs_prb: self.dmrs_re_per_prb,
            n_prb,
            layers: self.layers,
            ..TbsInput::default()
        }
    }

    /// Is `slot` an uplink slot.
    pub fn is_uplink(&self, slot: u64) -> bool {
        self.pattern.is_fdd() || self.pattern.kind(slot) == SlotKind::Uplink
    }

    /// Bytes `n_prb` PRBs carry in one uplink slot on `channel`.
    pub fn tb_bytes(&self, channel: ChannelSample, n_prb: u16) -> u64 {
        match channel {
            ChannelSample::Outage => 0,
            ChannelSample::Bytes(b) => b * u64::from(n_prb) / u64::from(self.n_prb),
            ChannelSample::Mcs(m) => self
                .tbs_input(n_prb)
                .tbs(m)
                .map_or(0, |bits| u64::from(bits / 8)),
        }
    }
}

/// One PUSCH the gNB grants.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct UlGrant {
    pub rnti: Rnti,
    /// The slot of the PUSCH (the DCI went K2 slots before).
    pub pusch_slot: u64,
    pub prbs: u16,
    pub tb_bytes: u32,
    /// 1 for a new transmission, k for the k-th transmission of a TB.
    pub tx: u8,
    /// Identifies the TB across its retransmissions.
    pub tb: u64,
}

impl UlGrant {
    pub fn is_new(&self) -> bool {
        self.tx == 1
    }
}

/// What became of one PUSCH.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PuschOutcome {
    Decoded,
    /// Failed; retransmitted later.
    Retransmit,
    /// Failed for the last time: the TB is lost.
    Lost,
}

/// Counters of the uplink scheduler.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UlStats {
    pub srs: u64,
    pub bsrs: u64,
    pub new_grants: u64,
    pub retx_grants: u64,
    pub granted_bytes: u64,
    pub decoded: u64,
    pub lost: u64,
    pub prbs_granted: u64,
}

#[derive(Clone, Debug)]
struct UlUe {
    rnti: Rnti,
    /// Bytes the gNB believes each LCG holds.
    lcg_bytes: [u64; MAX_LCGS],
    sr: bool,
    avg: f64,
}

impl UlUe {
    fn need(&self) -> u64 {
        self.lcg_bytes.iter().sum()
    }
}

#[derive(Clone, Copy, Debug)]
struct Retx {
    ue: usize,
    at_or_after: u64,
    grant: UlGrant,
}

/// The gNB's uplink scheduler (module docs).
#[derive(Debug)]
pub struct UlScheduler {
    p: UlParams,
    ues: Vec<UlUe>,
    retx: Vec<Retx>,
    rr_next: usize,
    next_tb: u64,
    rng: RngStream,
    stats: UlStats,
    /// Per UE its slice (`slices.len()`: the PRBs the slices leave).
    slice_of: Vec<usize>,
    /// PRBs each slice (and the rest, last) owns in every uplink slot.
    slice_prbs: Vec<u16>,
    /// Per-decision scratch, kept for its allocation: the UEs in serving
    /// order, which UEs have a PUSCH in the slot, the PRBs each slice has
    /// left.
    order: Vec<usize>,
    busy: Vec<bool>,
    slice_free: Vec<u16>,
}

impl UlScheduler {
    /// A scheduler for the UEs `rntis`, in this order.
    pub fn new(p: UlParams, rntis: &[Rnti]) -> Result<UlScheduler, ConfigError> {
        p.check()?;
        let rng = RngStream::new(p.seed, "ul-harq");
        let n = p.slices.len();
        let slice_of = rntis
            .iter()
            .map(|r| p.slices.iter().position(|s| s.1.contains(r)).unwrap_or(n))
            .collect();
        let mut slice_prbs: Vec<u16> = p
            .slices
            .iter()
            .map(|s| (f64::from(p.n_prb) * s.0).floor() as u16)
            .collect();
        let owned: u16 = slice_prbs.iter().sum();
        slice_prbs.push(p.n_prb.saturating_sub(owned));
        Ok(UlScheduler {
            ues: rntis
                .iter()
                .map(|&rnti| UlUe {
                    rnti,
                    lcg_bytes: [0; MAX_LCGS],
                    sr: false,
                    avg: 0.0,
                })
                .collect(),
            p,
            retx: Vec::new(),
            rr_next: 0,
            next_tb: 0,
            rng,
            stats: UlStats::default(),
            slice_of,
            slice_prbs,
            order: Vec::new(),
            busy: Vec::new(),
            slice_free: Vec::new(),
        })
    }

    pub fn params(&self) -> &UlParams {
        &self.p
    }

    pub fn stats(&self) -> &UlStats {
        &self.stats
    }

    fn ue(&self, rnti: Rnti) -> Option<usize> {
        self.ues.iter().position(|u| u.rnti == rnti)
    }

    /// The bytes the gNB believes UE `rnti` holds.
    pub fn known_bytes(&self, rnti: Rnti) -> u64 {
        self.ue(rnti).map_or(0, |u| self.ues[u].need())
    }

    /// TBs waiting for a HARQ retransmission grant.
    pub fn harq_pending(&self) -> usize {
        self.retx.len()
    }

    /// An SR from `rnti` reached the gNB.
    pub fn on_sr(&mut self, rnti: Rnti) {
        if let Some(u) = self.ue(rnti) {
            self.ues[u].sr = true;
            self.stats.srs += 1;
        }
    }

    /// A BSR from `rnti` was decoded.
    pub fn on_bsr(&mut self, rnti: Rnti, bsr: &BsrCe) {
        let Some(u) = self.ue(rnti) else { return };
        self.stats.bsrs += 1;
        let ue = &mut self.ues[u];
        // A Long BSR names every LCG with data, and a Short one is sent only
        // when a single LCG has data (TS 38.321 §5.4.5): either says the
        // LCGs it leaves out are empty. A truncated one says nothing of them.
        if !bsr.format.is_truncated() {
            ue.lcg_bytes = [0; MAX_LCGS];
        }
        for (lcg, bytes) in bsr.decoded() {
            ue.lcg_bytes[usize::from(lcg)] = bytes;
        }
        ue.sr = false;
    }

    /// Decides the PUSCH of slot `slot + K2` with each UE's uplink channel
    /// (`channels[i]` for the i-th UE given to [`UlScheduler::new`]);
    /// appends the grants to `out`.
    pub fn schedule(&mut self, slot: u64, channels: &[ChannelSample], out: &mut Vec<UlGrant>) {
        assert_eq!(channels.len(), self.ues.len(), "one channel per UE");
        let pusch = slot + self.p.k2;
        let decay = 1.0 - self.p.pf_alpha;
        for ue in &mut self.ues {
            ue.avg *= decay;
        }
        if !self.p.is_uplink(pusch) {
            return;
        }
        let mut free = std::mem::take(&mut self.slice_free);
        free.clear();
        free.extend_from_slice(&self.slice_prbs);
        let mut busy = std::mem::take(&mut self.busy);
        busy.clear();
        busy.resize(self.ues.len(), false);
        let mut order = std::mem::take(&mut self.order);
        // Retransmissions first, oldest first.
        let mut k = 0;
        while k < self.retx.len() {
            let r = self.retx[k];
            let slice = self.slice_of[r.ue];
            if r.at_or_after <= pusch && r.grant.prbs <= free[slice] && !busy[r.ue] {
                self.retx.remove(k);
                free[slice] -= r.grant.prbs;
                busy[r.ue] = true;
                let g = UlGrant {
                    pusch_slot: pusch,
                    tx: r.grant.tx + 1,
                    ..r.grant
                };
                self.stats.retx_grants += 1;
                self.stats.prbs_granted += u64::from(g.prbs);
                out.push(g);
            } else {
                k += 1;
            }
        }
        // New grants, in the scheduler's order.
        let n = self.ues.len();
        order.clear();
        order.extend(
            (0..n)
                .map(|i| (self.rr_next + i) % n)
                .filter(|&u| !busy[u] && (self.ues[u].need() > 0 || self.ues[u].sr)),
        );
        if self.p.kind == UlSchedulerKind::ProportionalFair {
            let metric = |u: usize| {
                let full = self.p.tb_bytes(channels[u], self.p.n_prb) as f64;
                full / self.ues[u].avg.max(1.0)
            };
            order.sort_by(|&a, &b| metric(b).total_cmp(&metric(a)));
        }
        self.rr_next = (self.rr_next + 1) % n.max(1);
        for &u in &order {
            let slice = self.slice_of[u];
            if free[slice] == 0 {
                continue;
            }
            let want = match self.ues[u].need() {
                0 => self.p.sr_grant_bytes,
                w => w,
            };
            let prbs = self.prbs_for(channels[u], want, free[slice]);
            let bytes = self.p.tb_bytes(channels[u], prbs);
            if prbs == 0 || bytes == 0 {
                continue;
            }
            free[slice] -= prbs;
            busy[u] = true;
            let g = UlGrant {
                rnti: self.ues[u].rnti,
                pusch_slot: pusch,
                prbs,
                tb_bytes: u32::try_from(bytes).unwrap_or(u32::MAX),
                tx: 1,
                tb: self.next_tb,
            };
            self.next_tb += 1;
            let ue = &mut self.ues[u];
            ue.sr = false;
            ue.avg += self.p.pf_alpha * bytes as f64;
            // The grant drains the gNB's estimate, best LCG first.
            let mut left = bytes;
            for b in ue.lcg_bytes.iter_mut() {
                let take = left.min(*b);
                *b -= take;
                left -= take;
            }
            self.stats.new_grants += 1;
            self.stats.granted_bytes += bytes;
            self.stats.prbs_granted += u64::from(prbs);
            out.push(g);
        }
        self.order = order;
        self.busy = busy;
        self.slice_free = free;
    }

    /// Fewest PRBs (at most `free`) whose TB holds `want` bytes.
    fn prbs_for(&self, channel: ChannelSample, want: u64, free: u16) -> u16 {
        if self.p.tb_bytes(channel, free) <= want {
            return free;
        }
        // TBS grows with the PRBs: binary search the smallest that holds.
        let (mut lo, mut hi) = (1u16, free);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.p.tb_bytes(channel, mid) >= want {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo
    }

    /// The PUSCH of `grant` was received: draws its HARQ outcome.
    pub fn transmit(&mut self, grant: &UlGrant) -> PuschOutcome {
        let failed = self.p.bler > 0.0 && self.rng.bernoulli(self.p.bler);
        if !failed {
            self.stats.decoded += 1;
            return PuschOutcome::Decoded;
        }
        if grant.tx >= self.p.max_harq_tx {
            self.stats.lost += 1;
            return PuschOutcome::Lost;
        }
        if let Some(ue) = self.ue(grant.rnti) {
            self.retx.push(Retx {
                ue,
                at_or_after: grant.pusch_slot + self.p.harq_rtt,
                grant: *grant,
            });
        }
        PuschOutcome::Retransmit
    }
}

#[cfg(test)]
mod tests;
