//! The types and constants of `tcran.h`, spelled as C sees them (cbindgen
//! copies names and doc comments into the header as they are here).
//!
//! Values that come *from* C are plain integers (`uint32_t`), never Rust
//! enums or `bool`: a C caller can put any bit pattern there, and an invalid
//! enum value would be undefined behaviour on the Rust side. Enums appear
//! only in values tcran writes.
#![allow(non_camel_case_types)]

use tcran_core::{DropReason, Duration};
use tcran_tc::LowerLayerReport;

/// Result of every call. 0 and positive values are successes, negative
/// values errors; after an error `tcran_last_error()` says what went wrong.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum tcran_status {
    /// Done.
    TCRAN_OK = 0,
    /// Done, nothing to hand out: `tcran_pull` may not send anything now,
    /// `tcran_next_wakeup` has no wake-up to ask for.
    TCRAN_EMPTY = 1,
    /// A required pointer argument was NULL.
    TCRAN_ERR_NULL = -1,
    /// An argument is out of range: a zero or oversized length, an unknown
    /// flag or format, an RNTI or DRB id outside the 3GPP range, a report
    /// with an impossible TTI.
    TCRAN_ERR_INVALID = -2,
    /// A config or control text does not parse (syntax, unknown key, wrong
    /// type, text not UTF-8). The message gives line and column.
    TCRAN_ERR_PARSE = -3,
    /// A config or control parses but cannot be applied: a value out of
    /// range, a missing queue, a plug-in that cannot be found or created.
    /// The message names the field, the value and what is allowed. Nothing
    /// changed.
    TCRAN_ERR_CONFIG = -4,
    /// The caller's buffer is too small. Nothing is lost: the function says
    /// how many bytes it needs and keeps what it had to hand out.
    TCRAN_ERR_BUFFER_TOO_SMALL = -5,
    /// Called from inside a callback (egress or drop) of the same instance.
    TCRAN_ERR_REENTRANT = -6,
    /// tcran caught an internal error (a bug: please report the message).
    /// The instance must not be used any more, except to free it.
    TCRAN_ERR_INTERNAL = -7,
}

/// Largest packet `tcran_push` takes, SDAP header included: a PDCP SDU is at
/// most 9000 octets (TS 38.323 sec. 4.3.1).
pub const TCRAN_MAX_PACKET: u32 = 9000;

/// `format` of a config or control text: JSON if its first non-blank
/// character is `{`, else TOML.
pub const TCRAN_FORMAT_AUTO: u32 = 0;
/// `format`: TOML.
pub const TCRAN_FORMAT_TOML: u32 = 1;
/// `format`: JSON.
pub const TCRAN_FORMAT_JSON: u32 = 2;

/// `tcran_push` flag: the bytes start with the 1-octet SDAP DL data PDU
/// header (TS 37.324 sec. 6.2.2.2); the IP packet follows it. The header
/// stays part of the packet and comes back out of `tcran_pull`.
pub const TCRAN_PUSH_SDAP: u32 = 1;

/// `tcran_next_wakeup` when there is no wake-up.
pub const TCRAN_NO_WAKEUP: u64 = u64::MAX;

/// What happened to a pushed packet.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum tcran_verdict {
    /// Queued.
    TCRAN_ACCEPTED = 0,
    /// Queued with its ECN field set to CE (a policer or an enqueue-time
    /// AQM signalled congestion; the IPv4 checksum is fixed).
    TCRAN_MARKED = 1,
    /// Dropped (see `reason`); tcran freed its copy.
    TCRAN_DROPPED = 2,
}

/// Why a packet was dropped; the same reasons, in the same order, as the
/// Rust `tcran_core::DropReason`, whose label `tcran_drop_reason_str` gives.
/// Only those a TC pipeline produces occur here.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum tcran_drop_reason {
    /// Not dropped.
    TCRAN_DROP_NONE = 0,
    /// A queue's packet or byte limit (tail drop).
    TCRAN_DROP_QUEUE_FULL = 1,
    /// The pipeline's total limit: from the head of the fattest queue (RFC 8290).
    TCRAN_DROP_FAT_FLOW = 2,
    /// CoDel at dequeue (RFC 8289).
    TCRAN_DROP_CODEL = 3,
    /// PIE at enqueue (RFC 8033).
    TCRAN_DROP_PIE = 4,
    /// RED.
    TCRAN_DROP_RED = 5,
    /// L4S ramp or DualQ, on a Not-ECT packet.
    TCRAN_DROP_L4S = 6,
    /// A policer found the packet out of profile.
    TCRAN_DROP_POLICER = 7,
    /// A live control lowered a limit below the backlog.
    TCRAN_DROP_RECONFIGURED = 8,
    /// (RAN layers below tcran; never from a TC pipeline.)
    TCRAN_DROP_RLC_FULL = 9,
    TCRAN_DROP_UPF_FULL = 10,
    TCRAN_DROP_AIR_LOSS = 11,
    TCRAN_DROP_NO_ROUTE = 12,
    TCRAN_DROP_PDCP_LATE = 13,
    TCRAN_DROP_PDCP_DUPLICATE = 14,
    /// A plug-in queue's AQM.
    TCRAN_DROP_PLUGIN = 15,
}

impl From<DropReason> for tcran_drop_reason {
    fn from(r: DropReason) -> Self {
        use tcran_drop_reason::*;
        const BY_INDEX: [tcran_drop_reason; DropReason::COUNT] = [
            TCRAN_DROP_QUEUE_FULL,
            TCRAN_DROP_FAT_FLOW,
            TCRAN_DROP_CODEL,
            TCRAN_DROP_PIE,
            TCRAN_DROP_RED,
            TCRAN_DROP_L4S,
            TCRAN_DROP_POLICER,
            TCRAN_DROP_RECONFIGURED,
            TCRAN_DROP_RLC_FULL,
            TCRAN_DROP_UPF_FULL,
            TCRAN_DROP_AIR_LOSS,
            TCRAN_DROP_NO_ROUTE,
            TCRAN_DROP_PDCP_LATE,
            TCRAN_DROP_PDCP_DUPLICATE,
            TCRAN_DROP_PLUGIN,
        ];
        BY_INDEX[r.index()]
    }
}

/// What `tcran_push` did with a packet.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct tcran_push_result {
    pub verdict: tcran_verdict,
    /// `TCRAN_DROP_NONE` unless dropped.
    pub reason: tcran_drop_reason,
    /// The queue the packet entered (0 when dropped).
    pub queue: u16,
    /// 1 if the bytes are not an IPv4/IPv6 packet (truncated, bad version,
    /// bad header): it is carried in the default queue all the same, as a
    /// bearer carries any PDU, and counted (`classifier.malformed` in the
    /// statistics).
    pub malformed: u8,
}

/// A packet `tcran_pull` or `tcran_pull_each` hands out.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct tcran_packet_out {
    /// Bytes of the packet (SDAP header included if it was pushed with
    /// one); with `TCRAN_ERR_BUFFER_TOO_SMALL`, the bytes needed.
    pub len: u32,
    /// The caller's tag given to `tcran_push`.
    pub tag: u64,
    /// Time spent in tcran (pull time - push time), ns.
    pub sojourn_ns: u64,
    /// ECN field as it leaves (3 = CE if tcran or an earlier hop marked it).
    pub ecn: u8,
    /// 1 if the packet did not parse as IPv4/IPv6 at push.
    pub malformed: u8,
}

/// The per-TTI report of the RLC entity under this bearer, right after the
/// MAC pulled (TC-RAN sec. IV-C; in a split gNB, what F1-U Downlink Data
/// Delivery Status carries).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct tcran_rlc_report {
    /// Length of the period this report closes (slot or TTI), ns, 1 us..1 s.
    pub tti_ns: u64,
    /// Bytes left in the RLC buffer after the MAC pulled.
    pub backlog_bytes: u64,
    /// SDUs (whole or partly sent) left in the RLC buffer.
    pub backlog_sdus: u32,
    /// Bytes the MAC pulled from this RLC entity in the period.
    pub pulled_bytes: u64,
    /// Bytes the grant of this bearer could carry (5G-BDP's capacity).
    pub granted_bytes: u64,
    /// Bytes one TTI could carry with every PRB at the current MCS
    /// (e5G-BDP's `max_bytes`); 0 if unknown.
    pub max_bytes: u64,
    /// Time from this pull to the MAC's next pull, ns: `tti_ns`, or more
    /// when slots without downlink come first (two slots after the S slot
    /// of DDDSU); 0 if unknown (read as `tti_ns`); at most 1 s.
    pub next_pull_in_ns: u64,
    /// Reports per repetition of the cell's TDD pattern (DDDSU: 4, the U
    /// slot having none; FDD: 1); 0 if unknown. jit sets its target per
    /// phase of the pattern.
    pub pulls_per_pattern: u16,
    /// The UE's transport blocks decoded in the period (HARQ ACKs).
    pub harq_acks: u16,
    /// The UE's transport blocks that failed in the period (HARQ NACKs).
    pub harq_nacks: u16,
    /// Whether `mcs` holds the UE's MCS (false on a channel known only as
    /// capacity, or in an outage).
    pub mcs_known: bool,
    /// The UE's MCS index in the period, 0..=31, when `mcs_known`.
    pub mcs: u8,
    /// PRBs given to the UE in the period (new data and HARQ
    /// retransmissions), summed over its downlink slots.
    pub prbs: u32,
    /// How long the oldest SDU with bytes still to send has waited in the
    /// RLC buffer after the pull, ns; 0 when nothing waits.
    pub head_of_line_age_ns: u64,
}

/// The report a gNB gives (C to Rust): every field, one to one.
impl From<&tcran_rlc_report> for LowerLayerReport {
    fn from(r: &tcran_rlc_report) -> Self {
        LowerLayerReport {
            tti: Duration::from_nanos(r.tti_ns),
            next_pull_in: Duration::from_nanos(r.next_pull_in_ns),
            pulls_per_pattern: r.pulls_per_pattern,
            backlog_bytes: r.backlog_bytes,
            backlog_sdus: r.backlog_sdus,
            pulled_bytes: r.pulled_bytes,
            granted_bytes: r.granted_bytes,
            max_bytes: r.max_bytes,
            head_of_line_age: Duration::from_nanos(r.head_of_line_age_ns),
            mcs: r.mcs_known.then_some(r.mcs),
            prbs: r.prbs,
            harq_acks: r.harq_acks,
            harq_nacks: r.harq_nacks,
        }
    }
}

/// The report a C plug-in pacer gets (Rust to C).
impl From<&LowerLayerReport> for tcran_rlc_report {
    fn from(r: &LowerLayerReport) -> Self {
        tcran_rlc_report {
            tti_ns: r.tti.as_nanos(),
            backlog_bytes: r.backlog_bytes,
            backlog_sdus: r.backlog_sdus,
            pulled_bytes: r.pulled_bytes,
            granted_bytes: r.granted_bytes,
            max_bytes: r.max_bytes,
            next_pull_in_ns: r.next_pull_in.as_nanos(),
            pulls_per_pattern: r.pulls_per_pattern,
            harq_acks: r.harq_acks,
            harq_nacks: r.harq_nacks,
            mcs_known: r.mcs.is_some(),
            mcs: r.mcs.unwrap_or(0),
            prbs: r.prbs,
            head_of_line_age_ns: r.head_of_line_age.as_nanos(),
        }
    }
}

/// Running totals of one instance (a cheap alternative to the JSON stats).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct tcran_totals {
    pub in_packets: u64,
    pub in_bytes: u64,
    pub out_packets: u64,
    pub out_bytes: u64,
    pub dropped_packets: u64,
    pub dropped_bytes: u64,
    pub marked_packets: u64,
    /// In the queues now (a packet held for a too-small pull buffer included).
    pub queued_packets: u64,
    pub queued_bytes: u64,
}

/// Called for every packet tcran drops, from inside the call that dropped
/// it (push, pull, control), with the caller's tag, the packet's length and
/// the reason. It must not call into the same instance.
pub type tcran_drop_fn = Option<
    unsafe extern "C" fn(
        ctx: *mut core::ffi::c_void,
        tag: u64,
        len: u32,
        reason: tcran_drop_reason,
    ),
>;

/// Called by `tcran_pull_each` for every packet leaving, with its bytes
/// (valid during the call only) and facts. Return 0 to go on, anything else
/// to stop after this packet. It must not call into the same instance.
pub type tcran_egress_fn = Option<
    unsafe extern "C" fn(
        ctx: *mut core::ffi::c_void,
        data: *const u8,
        len: usize,
        meta: *const tcran_packet_out,
    ) -> i32,
>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drop_reasons_keep_the_order_of_the_rust_enum() {
        for (i, r) in DropReason::ALL.iter().enumerate() {
            let c = tcran_drop_reason::from(*r);
            assert_eq!(c as usize, i + 1, "{r}");
            let name = format!("{c:?}").to_lowercase();
            let label = match r.label() {
                "late" => "pdcp_late",
                "duplicate" => "pdcp_duplicate",
                l => l,
            };
            assert_eq!(name, format!("tcran_drop_{label}"));
        }
    }

    /// Every field of the report crosses the ABI both ways unchanged (a
    /// field forgotten in one direction comes back as zero).
    #[test]
    fn a_report_crosses_the_abi_both_ways_unchanged() {
        let report = LowerLayerReport {
            tti: Duration::from_nanos(500_000),
            next_pull_in: Duration::from_nanos(1_000_000),
            pulls_per_pattern: 4,
            backlog_bytes: 5,
            backlog_sdus: 6,
            pulled_bytes: 7,
            granted_bytes: 8,
            max_bytes: 9,
            head_of_line_age: Duration::from_nanos(10),
            mcs: Some(27),
            prbs: 11,
            harq_acks: 12,
            harq_nacks: 13,
        };
        let c = tcran_rlc_report::from(&report);
        assert_eq!(LowerLayerReport::from(&c), report);
        let no_mcs = LowerLayerReport {
            mcs: None,
            ..report
        };
        let c = tcran_rlc_report::from(&no_mcs);
        assert!(!c.mcs_known);
        assert_eq!(LowerLayerReport::from(&c), no_mcs);
    }
}
