//! The MAC of a UE on the uplink (TS 38.321 §5.4): buffer status
//! reporting (§5.4.5), scheduling requests (§5.4.4) and logical channel
//! prioritisation (§5.4.3.1), sans-IO and driven once per slot.
//!
//! Contract: the caller calls [`UeMac::on_slot`] once for every slot, in
//! order, with the slot's start time, its absolute index, the data
//! available for transmission on each configured logical channel (RLC
//! buffer status including headers, [`crate::rlc::BufferStatus`], plus
//! PDCP data not yet handed to RLC) and the size of an uplink grant for a
//! new transmission usable in this slot, if the gNB gave one. It returns
//! what the UE does in the slot: an SR on PUCCH (or, after sr-TransMax,
//! random access), and for a grant the MAC PDU's layout: a BSR MAC CE (if
//! any), the bytes each logical channel's RLC entity is to fill, and the
//! padding. The caller pulls the RLC entities with those shares. (The
//! buffers include the MAC subheader estimate `BufferStatus` carries, so
//! that a grant of that size empties them; a BSR therefore reports 2-3
//! bytes per SDU more than the RLC and PDCP data volume TS 38.321 §5.4.5
//! counts, well inside one level of either table above 100 bytes.)
//!
//! - **BSR triggers** (§5.4.5): a *Regular* BSR when data arrives on a
//!   channel and either no channel had data or it outranks every channel
//!   with data, and when retxBSR-Timer expires with data waiting; a
//!   *Periodic* BSR when periodicBSR-Timer expires; a *Padding* BSR when
//!   a PDU's padding holds a BSR and no Regular/Periodic one is in it.
//! - **Formats** (§5.4.5, §6.1.3.1): Regular/Periodic: Long if more than
//!   one LCG has data, else Short. Padding: Short if one LCG has data and
//!   the padding is smaller than a Long BSR, Short Truncated (LCG of the
//!   highest-priority channel with data) if it is exactly a Short BSR,
//!   Long Truncated (LCGs by decreasing priority of their best channel,
//!   equal priorities by increasing LCG id) if in between, Long if it
//!   holds one. Buffer sizes are those left after the PDU is built,
//!   quantised by [`bsr::BufferSizeTable`].
//! - **Timers**: any BSR sent (Regular, Periodic or Padding) (re)starts
//!   retxBSR-Timer and, unless truncated, periodicBSR-Timer; any grant for
//!   new data restarts retxBSR-Timer. A non-truncated BSR sent cancels every triggered BSR
//!   and the pending SR; so does a grant that holds all the data (it then
//!   carries no BSR if the BSR would not also fit).
//! - **SR** ([`sr`]): a Regular BSR without a grant in its slot triggers
//!   one. logicalChannelSR-Mask / logicalChannelSR-DelayTimer are absent
//!   (every channel may trigger an SR at once). After sr-TransMax the UE
//!   falls back to random access ([`UeMac::in_random_access`]) and asks
//!   for nothing more until a grant arrives (its Msg3 grant, which the
//!   caller models).
//! - **LCP** ([`lcp`]): a Regular/Periodic BSR goes before the data, a
//!   Padding BSR after it (§5.4.3.1.3 priority of MAC CEs).
//!
//! Not modelled: HARQ retransmissions on the uplink (the gNB asks for them
//! with the same HARQ process; they carry the same PDU and do not run this
//! procedure), configured grants, several SR resources, the LCH selection
//! restrictions of §5.4.3.1.2, and the MAC CEs other than BSR.

pub mod bsr;
pub mod lcp;
pub mod sr;

use bsr::{long_bsr_with_subheader, BsrCe, BsrFormat, LcgId, MAX_LCGS, SHORT_BSR_WITH_SUBHEADER};
use lcp::{Lcp, LcpParams, BSD_MS, PBR_KBPS};
use serde::{Deserialize, Serialize};
use sr::{SrAction, SrParams, SrProcedure, SR_PERIOD_SLOTS, SR_PROHIBIT_MS, SR_TRANS_MAX};
use tcran_core::config::check_range;
use tcran_core::{ConfigError, Duration, Instant};

/// `periodicBSR-Timer` values in ms (TS 38.331 `BSR-Config`, sf1 ..
/// sf2560; absent here = infinity).
pub const PERIODIC_BSR_MS: [u32; 15] = [
    1, 5, 10, 16, 20, 32, 40, 64, 80, 128, 160, 320, 640, 1280, 2560,
];

/// `retxBSR-Timer` values in ms (sf10 .. sf10240).
pub const RETX_BSR_MS: [u32; 11] = [10, 20, 40, 80, 160, 320, 640, 1280, 2560, 5120, 10240];

/// One uplink logical channel of the UE (TS 38.331 `LogicalChannelConfig`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogicalChannelConfig {
    /// `logicalChannelGroup`, 0..=7 (default 1, where a gNB usually puts
    /// data bearers; LCG 0 is commonly signalling).
    #[serde(default = "default_lcg")]
    pub lcg: LcgId,
    /// `priority`, 1..=16, lower value first (default 1).
    #[serde(default = "default_priority")]
    pub priority: u8,
    /// `prioritisedBitRate` in kB/s (1 kB = 1000 bytes), one of 0, 8, 16,
    /// ... 65536; absent: infinity (the default).
    #[serde(default)]
    pub prioritised_bit_rate_kbps: Option<u32>,
    /// `bucketSizeDuration` in ms: 5, 10, 20, 50, 100, 150, 300, 500 or
    /// 1000 (default 100).
    #[serde(default = "default_bsd")]
    pub bucket_size_duration_ms: u32,
}

fn default_lcg() -> LcgId {
    1
}
fn default_priority() -> u8 {
    1
}
fn default_bsd() -> u32 {
    100
}

impl Default for LogicalChannelConfig {
    fn default() -> Self {
        LogicalChannelConfig {
            lcg: default_lcg(),
            priority: default_priority(),
            prioritised_bit_rate_kbps: None,
            bucket_size_duration_ms: default_bsd(),
        }
    }
}

/// The UE MAC's configuration (TS 38.331 `BSR-Config`,
/// `SchedulingRequestConfig`, `SchedulingRequestResourceConfig`). The
/// defaults are tcran's choices (the RRC has none): a 10-slot SR period
/// at offset 0, sr-TransMax 64, no sr-ProhibitTimer, periodicBSR-Timer
/// 10 ms and retxBSR-Timer 80 ms, the values OAI's and srsRAN's gNBs
/// configure by default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct UeMacConfig {
    /// SR period in slots (1, 2, 4, 5, 8, 10, 16, 20, 40, 80, 160, 320, 640).
    pub sr_period_slots: u32,
    /// SR offset in slots, below the period.
    pub sr_offset_slots: u32,
    /// `sr-TransMax`: 4, 8, 16, 32 or 64.
    pub sr_trans_max: u32,
    /// `sr-ProhibitTimer` in ms: 0 (absent), 1, 2, 4, ... 128.
    pub sr_prohibit_timer_ms: u32,
    /// `periodicBSR-Timer` in ms (1, 5, 10, 16, 20, 32, 40, 64, 80, 128,
    /// 160, 320, 640, 1280, 2560); absent: infinity.
    pub periodic_bsr_timer_ms: Option<u32>,
    /// `retxBSR-Timer` in ms (10, 20, 40, ... 10240).
    pub retx_bsr_timer_ms: u32,
    /// The uplink logical channels, in the order the caller passes their
    /// buffers.
    pub logical_channels: Vec<LogicalChannelConfig>,
}

impl Default for UeMacConfig {
    fn default() -> Self {
        UeMacConfig {
            sr_period_slots: 10,
            sr_offset_slots: 0,
            sr_trans_max: 64,
            sr_prohibit_timer_ms: 0,
            periodic_bsr_timer_ms: Some(10),
            retx_bsr_timer_ms: 80,
            logical_channels: vec![LogicalChannelConfig::default()],
        }
    }
}

fn check_one_of(field: &str, value: u32, allowed: &[u32]) -> Result<u32, ConfigError> {
    if allowed.contains(&value) {
        Ok(value)
    } else {
        let list: Vec<String> = allowed.iter().map(u32::to_string).collect();
        Err(ConfigError::new(
            field,
            value,
            format!("must be one of {}", list.join(", ")),
        ))
    }
}

impl UeMacConfig {
    /// Checks every value against the sets TS 38.331 allows and builds the
    /// MAC, established at `now` (LCP buckets empty, no timer running).
    pub fn build(&self, now: Instant) -> Result<UeMac, ConfigError> {
        let period = check_one_of("sr_period_slots", self.sr_period_slots, &SR_PERIOD_SLOTS)?;
        check_range("sr_offset_slots", self.sr_offset_slots, 0, period - 1)?;
        check_one_of("sr_trans_max", self.sr_trans_max, &SR_TRANS_MAX)?;
        check_one_of(
            "sr_prohibit_timer_ms",
            self.sr_prohibit_timer_ms,
            &SR_PROHIBIT_MS,
        )?;
        if let Some(t) = self.periodic_bsr_timer_ms {
            check_one_of("periodic_bsr_timer_ms", t, &PERIODIC_BSR_MS)?;
        }
        check_one_of("retx_bsr_timer_ms", self.retx_bsr_timer_ms, &RETX_BSR_MS)?;
        if self.logical_channels.is_empty() || self.logical_channels.len() > 32 {
            return Err(ConfigError::new(
                "logical_channels",
                self.logical_channels.len(),
                "must list 1..=32 channels",
            ));
        }
        let mut params = Vec::with_capacity(self.logical_channels.len());
        for (i, lc) in self.logical_channels.iter().enumerate() {
            let within = |e: ConfigError| e.within(format!("logical_channels[{i}]"));
            check_range("lcg", lc.lcg, 0, MAX_LCGS as u8 - 1).map_err(within)?;
            check_range("priority", lc.priority, 1, 16).map_err(within)?;
            if let Some(pbr) = lc.prioritised_bit_rate_kbps {
                check_one_of("prioritised_bit_rate_kbps", pbr, &PBR_KBPS).map_err(within)?;
            }
            check_one_of(
                "bucket_size_duration_ms",
                lc.bucket_size_duration_ms,
                &BSD_MS,
            )
            .map_err(within)?;
            params.push(LcpParams {
                priority: lc.priority,
                pbr_kbps: lc.prioritised_bit_rate_kbps,
                bsd_ms: lc.bucket_size_duration_ms,
            });
        }
        let n = params.len();
        Ok(UeMac {
            lcg: self.logical_channels.iter().map(|lc| lc.lcg).collect(),
            priority: params.iter().map(|p| p.priority).collect(),
            periodic_bsr: self
                .periodic_bsr_timer_ms
                .map(|ms| Duration::from_millis(u64::from(ms))),
            retx_bsr: Duration::from_millis(u64::from(self.retx_bsr_timer_ms)),
            lcp: Lcp::new(params, now),
            sr: SrProcedure::new(SrParams {
                period_slots: period,
                offset_slots: self.sr_offset_slots,
                trans_max: self.sr_trans_max,
                prohibit: Duration::from_millis(u64::from(self.sr_prohibit_timer_ms)),
            }),
            left_after_last_slot: vec![0; n],
            regular_triggered: false,
            periodic_triggered: false,
            periodic_expiry: None,
            retx_expiry: None,
            random_access: false,
            stats: UeMacStats::default(),
        })
    }
}

/// Counters of a UE MAC.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UeMacStats {
    pub regular_bsr_triggers: u64,
    pub periodic_bsr_triggers: u64,
    /// BSR MAC CEs sent, by format (Short, Short Truncated, Long, Long
    /// Truncated).
    pub bsrs_sent: [u64; 4],
    /// Of those, padding BSRs.
    pub padding_bsrs: u64,
    pub srs_signalled: u64,
    pub random_accesses: u64,
    pub grants: u64,
    pub grant_bytes: u64,
    /// Bytes handed to the logical channels.
    pub data_bytes: u64,
    pub padding_bytes: u64,
}

/// What the UE does in one slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UeMacSlot {
    /// PUCCH: an SR, or random access after sr-TransMax.
    pub sr: SrAction,
    /// With a grant: the BSR MAC CE in the PDU, if any.
    pub bsr: Option<BsrCe>,
    /// With a grant: the bytes no CE and no channel used.
    pub padding: u64,
}

/// A UE's uplink MAC: params, state and stats (see the module docs).
#[derive(Clone, Debug)]
pub struct UeMac {
    // Params.
    lcg: Vec<LcgId>,
    priority: Vec<u8>,
    periodic_bsr: Option<Duration>,
    retx_bsr: Duration,
    // State.
    lcp: Lcp,
    sr: SrProcedure,
    /// Each channel's data after the last slot's PDU: growth since then is
    /// new data (a Regular BSR trigger).
    left_after_last_slot: Vec<u64>,
    regular_triggered: bool,
    periodic_triggered: bool,
    periodic_expiry: Option<Instant>,
    retx_expiry: Option<Instant>,
    /// sr-TransMax was reached and no grant came since.
    random_access: bool,
    stats: UeMacStats,
}

fn format_slot(f: BsrFormat) -> usize {
    match f {
        BsrFormat::Short => 0,
        BsrFormat::ShortTruncated => 1,
        BsrFormat::Long => 2,
        BsrFormat::LongTruncated => 3,
    }
}

impl UeMac {
    pub fn stats(&self) -> &UeMacStats {
        &self.stats
    }

    /// Is a Regular or Periodic BSR triggered and not yet sent.
    pub fn bsr_triggered(&self) -> bool {
        self.regular_triggered || self.periodic_triggered
    }

    /// Has the UE fallen back to random access (sr-TransMax reached) and
    /// not received a grant since.
    pub fn in_random_access(&self) -> bool {
        self.random_access
    }

    /// Is an SR pending.
    pub fn sr_pending(&self) -> bool {
        self.sr.is_pending()
    }

    /// Per LCG: the data in it, and the best (lowest) priority value of its
    /// channels with data (17 when none has data).
    fn lcg_view(&self, buffers: &[u64], sent: &[u64]) -> ([u64; MAX_LCGS], [u8; MAX_LCGS]) {
        let mut bytes = [0u64; MAX_LCGS];
        let mut best = [17u8; MAX_LCGS];
        for j in 0..buffers.len() {
            let left = buffers[j] - sent[j];
            let g = usize::from(self.lcg[j]);
            bytes[g] += left;
            if left > 0 {
                best[g] = best[g].min(self.priority[j]);
            }
        }
        (bytes, best)
    }

    /// Runs the slot that starts at `now` (absolute slot index `slot`);
    /// see the module docs. `shares` receives each channel's bytes of the
    /// PDU (all 0 without a grant).
    ///
    /// # Panics
    /// If `buffers` or `shares` do not have one entry per configured
    /// channel (a caller bug).
    pub fn on_slot(
        &mut self,
        now: Instant,
        slot: u64,
        buffers: &[u64],
        grant: Option<u32>,
        shares: &mut [u64],
    ) -> UeMacSlot {
        assert_eq!(buffers.len(), self.lcg.len(), "one buffer per channel");
        assert_eq!(shares.len(), self.lcg.len(), "one share per channel");
        shares.fill(0);
        self.detect_triggers(now, buffers);
        // After sr-TransMax the UE is in random access: its Msg3 grant
        // (the caller's model) carries the BSR, no new SR until then.
        if grant.is_some() {
            self.random_access = false;
        }
        if self.regular_triggered && grant.is_none() && !self.random_access {
            self.sr.trigger();
        }
        let mut out = UeMacSlot {
            sr: SrAction::None,
            bsr: None,
            padding: 0,
        };
        if let Some(g) = grant {
            let (bsr, padding) = self.build_pdu(now, u64::from(g), buffers, shares);
            out.bsr = bsr;
            out.padding = padding;
        }
        for j in 0..buffers.len() {
            self.left_after_last_slot[j] = buffers[j] - shares[j];
        }
        out.sr = self.sr.on_slot(now, slot);
        match out.sr {
            SrAction::Signal => self.stats.srs_signalled += 1,
            SrAction::RandomAccess => {
                self.random_access = true;
                self.stats.random_accesses += 1;
            }
            SrAction::None => {}
        }
        out
    }

    /// §5.4.5 triggers: new data, retxBSR-Timer, periodicBSR-Timer.
    fn detect_triggers(&mut self, now: Instant, buffers: &[u64]) {
        let before = &self.left_after_last_slot;
        let best_with_data = (0..buffers.len())
            .filter(|&j| before[j] > 0)
            .map(|j| self.priority[j])
            .min();
        let arrival_triggers = (0..buffers.len()).any(|j| {
            buffers[j] > before[j] && best_with_data.is_none_or(|best| self.priority[j] < best)
        });
        let any_data = buffers.iter().any(|&b| b > 0);
        let retx_expired = self.retx_expiry.is_some_and(|t| now >= t);
        if retx_expired {
            self.retx_expiry = None;
        }
        if arrival_triggers || (retx_expired && any_data) {
            self.regular_triggered = true;
            self.stats.regular_bsr_triggers += 1;
        }
        if self.periodic_expiry.is_some_and(|t| now >= t) {
            self.periodic_expiry = None;
            self.periodic_triggered = true;
            self.stats.periodic_bsr_triggers += 1;
        }
    }

    /// Lays out the PDU of a `grant`-byte new transmission.
    fn build_pdu(
        &mut self,
        now: Instant,
        grant: u64,
        buffers: &[u64],
        shares: &mut [u64],
    ) -> (Option<BsrCe>, u64) {
        self.stats.grants += 1;
        self.stats.grant_bytes += grant;
        self.retx_expiry = Some(now + self.retx_bsr);
        let total: u64 = buffers.iter().sum();
        // Nothing sent yet (a UE has at most 32 channels, checked in build).
        let no_sent = [0u64; 32];
        let (lcg_bytes, _) = self.lcg_view(buffers, &no_sent[..buffers.len()]);
        let lcgs_with_data = lcg_bytes.iter().filter(|&&b| b > 0).count();
        // A Regular/Periodic BSR goes before the data if it fits; a grant
        // that holds all the data but not the BSR too cancels it.
        let mut scheduled: Option<BsrFormat> = None;
        if self.bsr_triggered() {
            let format = if lcgs_with_data > 1 {
                BsrFormat::Long
            } else {
                BsrFormat::Short
            };
            let size = u64::from(format.bytes_with_subheader(lcgs_with_data));
            if total <= grant && total + size > grant {
                self.cancel_triggers();
            } else if size <= grant {
                scheduled = Some(format);
            }
        }
        let room =
            grant - scheduled.map_or(0, |f| u64::from(f.bytes_with_subheader(lcgs_with_data)));
        let mut padding = self.lcp.allocate(now, room, buffers, shares);
        let sent_data: u64 = shares.iter().sum();
        self.stats.data_bytes += sent_data;
        let (after, best) = self.lcg_view(buffers, shares);
        let bsr = match scheduled {
            Some(format) => {
                // Sizes after the PDU; the format was fixed by the LCGs with
                // data when the BSR was scheduled.
                Some(self.fill(format, &after, &best, lcgs_with_data, &lcg_bytes))
            }
            None => {
                let ce = self.padding_bsr(padding, &after, &best);
                if let Some(ce) = ce {
                    padding -= u64::from(ce.bytes());
                    self.stats.padding_bsrs += 1;
                }
                ce
            }
        };
        if let Some(ce) = bsr {
            // §5.4.5: generating any BSR (a Padding BSR is a triggered BSR
            // too) restarts retxBSR-Timer, and periodicBSR-Timer unless the
            // BSR is truncated. (Not restarting it after a Padding BSR
            // would leave a UE whose buffer never empties without any
            // report but retxBSR-Timer's.)
            self.stats.bsrs_sent[format_slot(ce.format)] += 1;
            self.retx_expiry = Some(now + self.retx_bsr);
            if !ce.format.is_truncated() {
                self.periodic_expiry = self.periodic_bsr.map(|p| now + p);
                self.cancel_triggers();
            }
        }
        if total <= sent_data {
            // The grant held all the data: nothing left to ask for.
            self.sr.cancel();
        }
        self.stats.padding_bytes += padding;
        (bsr, padding)
    }

    fn cancel_triggers(&mut self) {
        self.regular_triggered = false;
        self.periodic_triggered = false;
        self.sr.cancel();
    }

    /// A Short or Long BSR of the LCGs that had data when it was scheduled
    /// (`had`), with the sizes left after the PDU.
    fn fill(
        &self,
        format: BsrFormat,
        after: &[u64; MAX_LCGS],
        best: &[u8; MAX_LCGS],
        lcgs_with_data: usize,
        had: &[u64; MAX_LCGS],
    ) -> BsrCe {
        let table = format.table();
        let mut sizes = [None; MAX_LCGS];
        match format {
            BsrFormat::Long | BsrFormat::LongTruncated => {
                for g in 0..MAX_LCGS {
                    if had[g] > 0 {
                        sizes[g] = Some(table.index(after[g]));
                    }
                }
            }
            BsrFormat::Short | BsrFormat::ShortTruncated => {
                // The one LCG with data, else the best-ranked one (a zero
                // report when nothing waits).
                let g = if lcgs_with_data == 0 {
                    usize::from(self.lcg[self.best_channel()])
                } else {
                    (0..MAX_LCGS)
                        .filter(|&g| had[g] > 0)
                        .min_by_key(|&g| (best[g], g))
                        .unwrap_or(0)
                };
                sizes[g] = Some(table.index(after[g]));
            }
        }
        BsrCe { format, sizes }
    }

    /// The highest-priority channel (first in configuration order on ties).
    fn best_channel(&self) -> usize {
        (0..self.priority.len())
            .min_by_key(|&j| self.priority[j])
            .unwrap_or(0)
    }

    /// §5.4.5 padding BSR for `padding` bytes, sizes after the PDU.
    fn padding_bsr(
        &self,
        padding: u64,
        after: &[u64; MAX_LCGS],
        best: &[u8; MAX_LCGS],
    ) -> Option<BsrCe> {
        let with_data = after.iter().filter(|&&b| b > 0).count();
        if padding < u64::from(SHORT_BSR_WITH_SUBHEADER) {
            return None;
        }
        if padding >= u64::from(long_bsr_with_subheader(with_data)) {
            return Some(self.fill(BsrFormat::Long, after, best, with_data, after));
        }
        if with_data <= 1 {
            return Some(self.fill(BsrFormat::Short, after, best, with_data, after));
        }
        if padding == u64::from(SHORT_BSR_WITH_SUBHEADER) {
            return Some(self.fill(BsrFormat::ShortTruncated, after, best, with_data, after));
        }
        // Long Truncated: as many LCGs as the padding holds, by decreasing
        // priority of their best channel, then increasing LCG id.
        let room = usize::try_from(padding - u64::from(long_bsr_with_subheader(0))).unwrap_or(0);
        let mut order = [0usize; MAX_LCGS];
        let mut n = 0;
        for g in (0..MAX_LCGS).filter(|&g| after[g] > 0) {
            order[n] = g;
            n += 1;
        }
        order[..n].sort_by_key(|&g| (best[g], g));
        let mut kept = [0u64; MAX_LCGS];
        for &g in order[..n].iter().take(room) {
            kept[g] = after[g];
        }
        Some(self.fill(BsrFormat::LongTruncated, after, best, with_data, &kept))
    }
}

#[cfg(test)]
mod tests;
