//! The statistics snapshot: what the TC service model's indication reports
//! (TC-RAN sec. IV-A "typical statistics" of each stage), serde-serializable.

use crate::stage::{AqmStats, LowerState, PacerStats, ShaperStats};
use serde::Serialize;
use tcran_core::reason::{DropCounts, MarkCounts};
use tcran_core::{Duration, QueueId};

/// Whole-pipeline counters. Conservation: `in = out + dropped + queued`
/// for packets and for bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    pub in_packets: u64,
    pub in_bytes: u64,
    pub out_packets: u64,
    pub out_bytes: u64,
    pub dropped_packets: u64,
    pub dropped_bytes: u64,
    pub queued_packets: u64,
    pub queued_bytes: u64,
}

impl Totals {
    pub fn conserved(&self) -> bool {
        self.in_packets == self.out_packets + self.dropped_packets + self.queued_packets
            && self.in_bytes == self.out_bytes + self.dropped_bytes + self.queued_bytes
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ClassifierStats {
    /// Sent to the queue the classifier chose.
    pub classified: u64,
    /// No rule matched: default queue.
    pub defaulted: u64,
    /// The chosen queue does not exist (deleted): default queue.
    pub missing_queue: u64,
    /// Real bytes that did not parse: default queue.
    pub malformed: u64,
}

/// Running counters of one queue.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueueCounters {
    /// Packets that arrived for this queue (after classification/policing).
    pub offered_packets: u64,
    pub offered_bytes: u64,
    pub forwarded_packets: u64,
    pub forwarded_bytes: u64,
    pub drops: DropCounts,
    pub marks: MarkCounts,
    /// Packets the policer deviated to another queue.
    pub redirected_out: u64,
    /// Packets moved in from a deleted queue.
    pub moved_in_packets: u64,
    pub moved_in_bytes: u64,
    pub sojourn_sum: Duration,
    pub last_sojourn: Duration,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueueStats {
    pub id: QueueId,
    pub kind: &'static str,
    pub backlog_packets: usize,
    pub backlog_bytes: u64,
    pub offered_packets: u64,
    pub offered_bytes: u64,
    pub forwarded_packets: u64,
    pub forwarded_bytes: u64,
    pub drops: DropCounts,
    pub marks: MarkCounts,
    pub redirected_out: u64,
    pub moved_in_packets: u64,
    /// Mean sojourn of forwarded packets, ms.
    pub avg_sojourn_ms: f64,
    pub last_sojourn_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policer: Option<crate::policer::PolicerStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shaper: Option<ShaperStats>,
    pub aqm: AqmStats,
}

impl QueueStats {
    pub(crate) fn new(
        id: QueueId,
        kind: &'static str,
        packets: usize,
        bytes: u64,
        c: &QueueCounters,
    ) -> Self {
        let avg = if c.forwarded_packets == 0 {
            0.0
        } else {
            c.sojourn_sum.as_millis_f64() / c.forwarded_packets as f64
        };
        QueueStats {
            id,
            kind,
            backlog_packets: packets,
            backlog_bytes: bytes,
            offered_packets: c.offered_packets,
            offered_bytes: c.offered_bytes,
            forwarded_packets: c.forwarded_packets,
            forwarded_bytes: c.forwarded_bytes,
            drops: c.drops,
            marks: c.marks,
            redirected_out: c.redirected_out,
            moved_in_packets: c.moved_in_packets,
            avg_sojourn_ms: avg,
            last_sojourn_ms: c.last_sojourn.as_millis_f64(),
            policer: None,
            shaper: None,
            aqm: AqmStats::default(),
        }
    }
    pub(crate) fn with_policer(mut self, p: Option<crate::policer::PolicerStats>) -> Self {
        self.policer = p;
        self
    }
    pub(crate) fn with_shaper(mut self, s: Option<ShaperStats>) -> Self {
        self.shaper = s;
        self
    }
    pub(crate) fn with_aqm(mut self, a: AqmStats) -> Self {
        self.aqm = a;
        self
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PipelineStats {
    pub time_s: f64,
    pub totals: Totals,
    pub classifier: ClassifierStats,
    pub queues: Vec<QueueStats>,
    pub scheduler: String,
    pub pacer_kind: String,
    pub pacer: PacerStats,
    #[serde(serialize_with = "ser_lower")]
    pub lower: LowerState,
}

fn ser_lower<S: serde::Serializer>(l: &LowerState, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeStruct;
    let mut st = s.serialize_struct("LowerState", 2)?;
    st.serialize_field("rlc_bytes", &l.bytes)?;
    st.serialize_field("rlc_sdus", &l.sdus)?;
    st.end()
}
