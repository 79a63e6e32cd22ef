//! The six stage kinds of the TC-RAN pipeline (paper-tc-ran.txt sec. IV-A),
//! one trait each because their questions differ:
//!
//! | stage | question it answers | called on |
//! |---|---|---|
//! | [`Classifier`] | which queue? | push |
//! | [`Policer`] | may this much rate enter (else drop, mark or deviate)? | push |
//! | [`Queue`] | (buffers; its AQM may drop or mark) | push and pull |
//! | [`Scheduler`] | which queue next? | pull |
//! | [`Shaper`] | may this queue send now (else wait)? | pull |
//! | [`Pacer`] | may anything go down to RLC now? | pull |
//!
//! Every method takes `now`; no stage reads a clock. Drops and marks go
//! through [`Events`], so the pipeline can count them by reason and hand the
//! dropped packets back to the caller.

use crate::mark;
use tcran_core::reason::{DropCounts, MarkCounts};
use tcran_core::{DropReason, Dropped, Duration, Instant, MarkReason, Packet, QueueId};

/// Drops and marks produced by one stage operation. The pipeline owns one,
/// reuses its buffer (no allocation in steady state) and attributes what it
/// collects to the stage that produced it.
#[derive(Debug, Default)]
pub struct Events {
    pub dropped: Vec<Dropped>,
    pub drop_counts: DropCounts,
    pub marks: MarkCounts,
}

impl Events {
    /// Records that `packet` leaves the data path for `reason`.
    pub fn drop(&mut self, packet: Packet, reason: DropReason) {
        self.drop_counts.add(reason, 1);
        self.dropped.push(Dropped { packet, reason });
    }

    /// Sets CE on an ECN-capable packet (fixing the real bytes, if any) and
    /// counts the mark. Returns false, changing nothing, for a Not-ECT packet:
    /// the caller must then drop it instead (RFC 3168 sec. 5).
    pub fn mark(&mut self, packet: &mut Packet, reason: MarkReason) -> bool {
        if mark::set_ce(packet) {
            self.marks.add(reason, 1);
            true
        } else {
            false
        }
    }

    /// Signals congestion on `packet`: marks it if ECN-capable and `use_ecn`,
    /// otherwise drops it. Returns the packet back if it survives (marked).
    pub fn signal(
        &mut self,
        mut packet: Packet,
        use_ecn: bool,
        mark_reason: MarkReason,
        drop_reason: DropReason,
    ) -> Option<Packet> {
        if use_ecn && self.mark(&mut packet, mark_reason) {
            Some(packet)
        } else {
            self.drop(packet, drop_reason);
            None
        }
    }

    /// Clears counters (not the dropped-packet buffer) and returns them.
    pub fn take_counts(&mut self) -> (DropCounts, MarkCounts) {
        (
            std::mem::take(&mut self.drop_counts),
            std::mem::take(&mut self.marks),
        )
    }
}

// ---------------------------------------------------------------- classifier

/// Answers "which queue?" for an arriving packet.
pub trait Classifier: std::fmt::Debug + Send {
    /// The queue for `packet`, or `None` for the pipeline's default queue.
    /// A malformed packet must get `None` (it is counted by the pipeline).
    fn classify(&mut self, packet: &Packet) -> Option<QueueId>;
}

// ------------------------------------------------------------------- policer

/// What a policer decided for one packet (RFC 2475 meter + action; TC-RAN's
/// "deviate" is `Redirect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoliceVerdict {
    /// In profile.
    Pass,
    /// Out of profile: drop.
    Drop,
    /// Out of profile: CE-mark if ECN-capable, else drop.
    Mark,
    /// Out of profile: enqueue into another queue instead.
    Redirect(QueueId),
}

/// Meters the rate entering one queue.
pub trait Policer: std::fmt::Debug + Send {
    fn police(&mut self, len: u32, now: Instant) -> PoliceVerdict;
}

// --------------------------------------------------------------------- queue

/// A buffer with an optional AQM. The pipeline enforces the configured packet
/// and byte limits (tail drop) before calling `enqueue`; the queue implements
/// only its own algorithm (early drop at enqueue like PIE/RED, or at dequeue
/// like CoDel).
pub trait Queue: std::fmt::Debug + Send {
    /// Takes `packet` (its `enqueued_at` is already `now`). It may refuse it or
    /// drop others through `ev`.
    fn enqueue(&mut self, packet: Packet, now: Instant, ev: &mut Events);
    /// Hands out the next packet, running the dequeue-time AQM.
    fn dequeue(&mut self, now: Instant, ev: &mut Events) -> Option<Packet>;
    /// Packets held.
    fn packets(&self) -> usize;
    /// Bytes held.
    fn bytes(&self) -> u64;
    /// Enqueue time of the oldest packet held.
    fn oldest_enqueued_at(&self) -> Option<Instant>;
    /// Removes the oldest packet without running the AQM (used to move
    /// packets on reconfiguration and for fat-flow drops).
    fn pop_oldest(&mut self) -> Option<Packet>;
    /// Removes the newest packet (used when a lowered limit must shed excess).
    fn pop_newest(&mut self) -> Option<Packet>;
    /// Appends a packet bypassing the AQM, keeping its `enqueued_at` (used
    /// when packets are moved between queues).
    fn push_raw(&mut self, packet: Packet);
    /// Calls `f` with every packet held (inspection only: e.g. the
    /// simulator counts what is still queued at the end of a run, per flow).
    fn for_each_packet(&self, f: &mut dyn FnMut(&Packet));
    /// When this queue next needs time to pass (periodic AQM updates); queues
    /// that catch up lazily on the next packet event return `None`.
    fn next_wakeup(&self) -> Option<Instant> {
        None
    }
    /// Algorithm-specific state for the statistics snapshot.
    fn aqm_stats(&self) -> AqmStats {
        AqmStats::default()
    }
}

/// AQM state worth reporting; fields that do not apply stay `None`.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct AqmStats {
    /// Current drop/mark probability (PIE, RED, L4S ramp, DualQ p').
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probability: Option<f64>,
    /// CoDel: in the dropping state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropping: Option<bool>,
    /// CoDel: drops since entering the dropping state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// RED: average queue size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub average: Option<f64>,
}

// ----------------------------------------------------------------- scheduler

/// Per-queue attributes a scheduler may use, from the queue's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueAttrs {
    /// Strict-priority level: 0 is served first.
    pub priority: u8,
    /// Relative share for weighted schedulers.
    pub weight: u32,
}

impl Default for QueueAttrs {
    fn default() -> Self {
        QueueAttrs {
            priority: 0,
            weight: 1,
        }
    }
}

/// Read-only facts about the queues a scheduler chooses among.
pub trait QueueView {
    fn packets(&self, q: QueueId) -> usize;
    fn bytes(&self, q: QueueId) -> u64;
    fn oldest_enqueued_at(&self, q: QueueId) -> Option<Instant>;
    fn attrs(&self, q: QueueId) -> QueueAttrs;
}

/// Queues a scheduler must pass over during one pull because their shaper
/// holds them back. Small and fixed-size: shapers are few.
#[derive(Debug, Clone, Default)]
pub struct Blocked {
    ids: [u16; Blocked::CAP],
    len: usize,
}

impl Blocked {
    pub const CAP: usize = 32;
    #[inline]
    pub fn contains(&self, q: QueueId) -> bool {
        self.ids[..self.len].contains(&q.0)
    }
    /// Adds `q`; returns false when full (the pull then stops trying).
    pub fn insert(&mut self, q: QueueId) -> bool {
        if self.len == Self::CAP {
            return false;
        }
        self.ids[self.len] = q.0;
        self.len += 1;
        true
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Answers "which queue next?" (TC-RAN's `next_queue`).
pub trait Scheduler: std::fmt::Debug + Send {
    /// A queue was created (or recreated) with these attributes.
    fn on_queue_added(&mut self, q: QueueId, attrs: QueueAttrs);
    /// A queue was deleted; forget it.
    fn on_queue_removed(&mut self, q: QueueId);
    /// `q` went from empty to backlogged.
    fn on_backlogged(&mut self, q: QueueId, view: &dyn QueueView);
    /// The queue to take the next packet from, skipping `blocked` ones.
    fn select(&mut self, now: Instant, view: &dyn QueueView, blocked: &Blocked) -> Option<QueueId>;
    /// A packet of `len` bytes from `q` was forwarded (the shaper and the
    /// pacer agreed).
    fn on_sent(&mut self, q: QueueId, len: u32, view: &dyn QueueView);
    /// `q` was selected but turned out empty (its AQM dropped what it had).
    fn on_empty(&mut self, q: QueueId, view: &dyn QueueView);
}

// -------------------------------------------------------------------- shaper

/// Limits the rate leaving one queue; delays, never drops.
pub trait Shaper: std::fmt::Debug + Send {
    /// May a packet of `len` bytes leave now?
    fn admits(&mut self, len: u32, now: Instant) -> bool;
    /// A packet of `len` bytes left.
    fn on_sent(&mut self, len: u32, now: Instant);
    /// Earliest time a packet of `len` bytes will be admitted.
    fn ready_at(&self, len: u32, now: Instant) -> Instant;
    fn stats(&self) -> ShaperStats;
}

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ShaperStats {
    pub rate_bps: u64,
    /// Rate actually sent, measured over the configured window.
    pub measured_bps: f64,
    pub tokens_bytes: f64,
    /// Times a packet was held back.
    pub delayed: u64,
}

// --------------------------------------------------------------------- pacer

/// What the layer below reports once per TTI/slot, right after the MAC pulled
/// from the RLC buffer (TC-RAN sec. IV-C: "just after the MAC scheduler has
/// formed the TBS"). In a split gNB this is what F1-U Downlink Data Delivery
/// Status carries.
///
/// Every pacer gets the same report. It comes for every slot (or
/// scheduling period) that has downlink: a TDD slot without downlink
/// symbols (U) has no pull, so it has no report, unless the pacer asks for
/// one ([`Pacer::wants_every_slot`]). What the cell knows about what comes
/// next is in the report for everyone: when the next pull is
/// (`next_pull_in`), how the TDD pattern repeats (`pulls_per_pattern`),
/// the grant (`granted_bytes`) and the MCS as bytes (`max_bytes`).
/// The MAC's view of the UE in the period (its MCS, PRBs and HARQ
/// outcomes) and the RLC's head-of-line age are there for pacers and
/// controllers that want them; no built-in pacer reads them yet.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LowerLayerReport {
    /// Length of the slot or scheduling period this report closes (the
    /// numerology's slot, or the MAC's period).
    pub tti: Duration,
    /// Time from this pull to the MAC's next pull: `tti`, or more when
    /// slots without downlink come first (DDDSU: two slots after the S
    /// slot). Zero: not known (read as `tti`).
    pub next_pull_in: Duration,
    /// Reports per period of the cell's TDD pattern (DDDSU: 4, the U slot
    /// having none); 1 in FDD, 0 when not known. A pacer that estimates per
    /// phase compares a report with the one this many reports earlier.
    pub pulls_per_pattern: u16,
    /// Bytes left in the RLC buffer after the MAC pulled.
    pub backlog_bytes: u64,
    /// SDUs (whole or partly sent) left in the RLC buffer.
    pub backlog_sdus: u32,
    /// Bytes the MAC pulled from this RLC entity in this period.
    pub pulled_bytes: u64,
    /// Bytes the grant given to this bearer could carry (TBS of its PRBs);
    /// 5G-BDP's `channel_capacity`.
    pub granted_bytes: u64,
    /// Bytes one TTI could carry if the bearer had every PRB at the current
    /// MCS; e5G-BDP's `max_bytes`.
    pub max_bytes: u64,
    /// How long the oldest SDU still to be sent (a retransmission or new
    /// data) has waited in the RLC buffer, after the pull; zero when the
    /// buffer has nothing to send. The head-of-line delay a delay-based MAC
    /// scheduler reads.
    pub head_of_line_age: Duration,
    /// The UE's MCS index in this period (link adaptation's choice, TS
    /// 38.214 §5.1.3.1); `None` on a channel given as capacity (a trace of
    /// bytes), which has no MCS, and in an outage (CQI 0).
    pub mcs: Option<u8>,
    /// PRBs given to the UE in this period (new data and HARQ
    /// retransmissions), summed over its downlink slots.
    pub prbs: u32,
    /// The UE's transport blocks decoded in this period, first try or
    /// retransmission (HARQ ACK, TS 38.321 §5.3.2).
    pub harq_acks: u16,
    /// The UE's transport blocks that failed in this period (HARQ NACK):
    /// each is retransmitted later, or given up after the last attempt.
    pub harq_nacks: u16,
}

impl LowerLayerReport {
    /// The slot or period lengths a report may close, ns: 1 us (a slot of
    /// the highest numerology is 15.6 us) to 1 s.
    pub const TTI_NS: std::ops::RangeInclusive<u64> = 1_000..=1_000_000_000;
    /// The largest MCS index (5 bits in DCI 1_1).
    pub const MAX_MCS: u8 = 31;

    /// Checks a report given from outside Rust (the C ABI, Python): `tti`
    /// within [`Self::TTI_NS`], `next_pull_in` 0 (not known) or at most
    /// 1 s. Fields are named as the bindings take them, in ns.
    pub fn check(&self) -> Result<(), tcran_core::ConfigError> {
        let tti_ns = self.tti.as_nanos();
        if !Self::TTI_NS.contains(&tti_ns) {
            return Err(tcran_core::ConfigError::new(
                "tti_ns",
                tti_ns,
                "must be 1000..=1000000000 (1 us to 1 s)",
            ));
        }
        let next_ns = self.next_pull_in.as_nanos();
        if next_ns > *Self::TTI_NS.end() {
            return Err(tcran_core::ConfigError::new(
                "next_pull_in_ns",
                next_ns,
                "must be 0 (not known) or at most 1000000000 (1 s)",
            ));
        }
        if let Some(mcs) = self.mcs.filter(|m| *m > Self::MAX_MCS) {
            return Err(tcran_core::ConfigError::new(
                "mcs",
                mcs,
                "must be 0..=31 (the 5-bit MCS index of DCI 1_1, TS 38.214 §5.1.3.1)",
            ));
        }
        Ok(())
    }
}

/// The pipeline's running view of the buffer below it: the last report plus
/// what was forwarded since.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LowerState {
    pub bytes: u64,
    pub sdus: u32,
}

/// Pacer statistics for the TC service model indication.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct PacerStats {
    /// Estimated bandwidth of the bearer, bytes per second.
    pub bandwidth_bps: f64,
    /// Bytes the pacer would let through now (or the current limit).
    pub allowance_bytes: f64,
    /// Current buffer limit for limit-based pacers (DRQL, DynRLC, static), bytes or SDUs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<f64>,
    /// Forwarding opportunities refused.
    pub refused: u64,
}

/// Answers "may the next packet go down to PDCP/RLC now?", keeping the RLC
/// buffer full but not fuller (thesis ch. 3).
pub trait Pacer: std::fmt::Debug + Send {
    /// May a packet of `len` bytes (the scheduler's candidate) go down now?
    fn admits(&mut self, len: u32, now: Instant, lower: &LowerState) -> bool;
    /// A packet of `len` bytes went down.
    fn on_forwarded(&mut self, len: u32, now: Instant);
    /// The per-TTI report from RLC/MAC.
    fn on_report(&mut self, report: &LowerLayerReport, now: Instant);
    /// An RLC SDU left the RLC buffer after `sojourn` (DynRLC's delay sample).
    fn on_sdu_departed(&mut self, _sojourn: Duration, _now: Instant) {}
    /// An RLC AM status PDU arrived (DynRLC's DLT estimator).
    fn on_status_pdu(&mut self, _now: Instant) {}
    /// When the pacer will next change its mind without new events.
    fn next_wakeup(&self, _now: Instant) -> Option<Instant> {
        None
    }
    /// Whether the pacer wants a report also for slots without downlink
    /// (TDD U slots: nothing pulled, `max_bytes = 0`). No built-in pacer
    /// does: the report's `next_pull_in` and `pulls_per_pattern` say the
    /// same thing without a report that reads as a zero-capacity slot.
    fn wants_every_slot(&self) -> bool {
        false
    }
    fn stats(&self) -> PacerStats;
}
