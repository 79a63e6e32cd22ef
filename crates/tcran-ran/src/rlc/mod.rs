//! RLC (TS 38.322): one transmitting entity ([`RlcTx`], gNB) and one
//! receiving entity ([`RlcRx`], UE) per downlink DRB, in UM or AM.
//!
//! # What is modelled
//!
//! - **Segmentation** (TS 38.322 §5.2.2.1 UM, §5.2.3.1 AM): NR RLC does not
//!   concatenate, so one RLC PDU carries one SDU or one SDU segment; the MAC
//!   multiplexes several RLC PDUs into a transport block, each behind its own
//!   MAC subheader (TS 38.321 §6.1.2). [`RlcTx::fill`] fills a grant exactly:
//!   when at least one data byte fits after the headers, the head SDU is
//!   segmented so that the PDU ends on the last byte of the grant.
//! - **Header sizes** (TS 38.322 §6.2.2): UMD complete SDU 1 B (SI + R);
//!   UMD segment 1 B (6-bit SN) or 2 B (12-bit SN), plus a 2-byte SO on middle
//!   and last segments (§6.2.2.3); AMD 2 B (12-bit SN) or 3 B (18-bit SN),
//!   plus 2 B SO on non-first segments (§6.2.2.4). MAC subheader: 2 B when the
//!   RLC PDU is at most 255 bytes (8-bit L), 3 B otherwise (16-bit L)
//!   (TS 38.321 §6.1.2). [`RlcPdu::bytes`] includes both.
//! - **UM reception** (§5.2.2.2): SNs are given to segmented SDUs only;
//!   reassembly by SN/SO, t-Reassembly with RX_Next_Reassembly /
//!   RX_Timer_Trigger / RX_Next_Highest and the UM window (32 or 2048).
//! - **AM** (§5.2.3, §5.3): TX window (2048 / 131072), polling with
//!   pollPDU / pollByte / empty buffer / t-PollRetransmit (§5.3.3),
//!   retransmission of NACKed SDUs or byte ranges with maxRetxThreshold
//!   (§5.3.2), reception with RX_Next / RX_Next_Highest / RX_Highest_Status /
//!   RX_Next_Status_Trigger and t-Reassembly (§5.2.3.2), STATUS reporting
//!   triggered by a poll or by t-Reassembly expiry and rate-limited by
//!   t-StatusProhibit (§5.3.4). STATUS PDUs travel UE -> gNB; the simulator
//!   carries them over its uplink model and calls [`RlcTx::on_status`].
//!
//! # Simplifications (documented, deliberate)
//!
//! - Sequence numbers are kept unbounded (`u64`) inside both entities; the
//!   configured SN length only sets header sizes and window sizes. Modulo
//!   arithmetic changes nothing observable in a lossless-ordering simulator
//!   and would only add bugs.
//! - When an AM SDU reaches maxRetxThreshold the spec indicates a radio link
//!   failure to RRC (§5.3.2); we give up on that SDU, report it through
//!   [`RlcTx::drain_abandoned`] (count it as `DropReason::AirLoss`) and treat
//!   it as acknowledged so the TX window moves on. The receiver is not
//!   re-established, so it keeps NACKing the hole; with the default
//!   threshold (8) and HARQ underneath this practically never happens.
//! - UM loss accounting: a receiver cannot know about an SDU none of whose
//!   PDUs arrived. For exact drop accounting the simulator hands the PDUs of
//!   transport blocks the MAC gave up on to [`RlcRx::on_pdu_lost`]; the
//!   receiver then reports each lost SDU exactly once (immediately for a
//!   complete SDU, at t-Reassembly expiry for a segmented one). In AM the
//!   transmitter recovers the loss by itself and `on_pdu_lost` is a no-op.
//! - Each PDU carries its SDU's [`Packet`] so the receiver can deliver it
//!   whichever segment completes it: a reference-counted handle the
//!   transmitter's copy shares, so segmenting copies no packet and PDUs stay
//!   small (`Arc::unwrap_or_clone` at delivery copies it once if the
//!   transmitter still holds it). The transmitter never changes a packet
//!   once a byte of it left; the one fact learnt later, when the SDU's last
//!   byte was first sent (`mac_in`), travels in the PDUs
//!   ([`RlcPdu::mac_in`]) and is written into the packet at delivery.
//! - Buffer limits (OAI-like tail drop of whole SDUs) count SDU bytes not yet
//!   transmitted once; sent-but-unacknowledged AM data does not count against
//!   the limit but is reported in [`BufferStatus::sdus_held`] /
//!   [`BufferStatus::held_bytes`] (Kumar's SDU buffer, which releases an SDU
//!   only when a STATUS PDU acknowledges it).
//! - AM SNs are given to SDUs at their first transmission rather than on
//!   arrival, so that an SDU the AQM drops before any byte of it was sent
//!   leaves no SN hole for the receiver to NACK forever.
//!
//! # AQM in the transmit buffer (`aqm`, optional)
//!
//! "CoDel at the RLC" (thesis ch. 3, first scenario: the RLC FIFO replaced
//! by a CoDel queue, target 15 ms, interval 300 ms): CoDel (RFC 8289) runs on
//! the sojourn of an SDU in the RLC buffer (enqueue into RLC to the moment
//! the MAC pulls it for its first transmission), with dequeue-side drops.
//! It is the very CoDel of `tcran-tc` ([`tcran_tc::queue::Codel`], Linux
//! semantics and fixed point), fed with a metadata-only copy of every SDU not
//! yet started, so its decisions are identical to a CoDel queue holding the
//! SDUs. Only SDUs not yet started can be dropped: a partly transmitted SDU
//! has left the AQM. Drops come out of [`RlcTx::drain_dropped`] as
//! `DropReason::Codel`; with `ecn = true` ECN-capable SDUs are CE-marked
//! instead and counted in [`RlcTx::aqm_marks`]. The `mtu` floor compares the
//! bytes of the SDUs not yet started behind the one examined.

mod rx;
mod tx;

pub use rx::{RlcRx, RxStats};
pub use tcran_tc::queue::{CodelConfig, InvSqrt};
pub use tx::{HeldSdu, RlcTx};

use serde::{Deserialize, Serialize};
use std::sync::Arc;
use tcran_core::config::check_range;
use tcran_core::{ByteSize, ConfigError, DrbId, Duration, Packet, PacketId, Stamp};

/// RLC mode of a DRB (TM carries no DRB traffic).
#[derive(
    Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum RlcMode {
    /// Unacknowledged mode: no retransmission, losses reported at the receiver.
    Um,
    /// Acknowledged mode: STATUS PDUs, ARQ retransmissions (default).
    #[default]
    Am,
}

/// Configuration of one RLC entity pair (RRC `RLC-Config`, TS 38.331).
///
/// Defaults: t-Reassembly 35 ms, t-PollRetransmit 45 ms and
/// maxRetxThreshold 8 are the TS 38.331 §9.2.1 default RLC configuration
/// (specified for SRBs, commonly reused for DRBs); t-StatusProhibit 10 ms is
/// Kumar et al.'s recommended delay/throughput compromise (the SRB default is
/// 0 ms); pollPDU 64 and pollByte 500 kB are the usual DRB values of open
/// source gNBs; SN length 18 (AM) and 12 (UM) are the long SNs DRBs use in
/// practice; the 5 MB buffer limit mirrors OAI's default RLC buffer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RlcConfig {
    /// `"am"` (default) or `"um"`.
    pub mode: RlcMode,
    /// Tail-drop limit on SDU bytes not yet transmitted.
    pub buffer_limit: ByteSize,
    /// Optional limit on SDUs not yet completely transmitted.
    pub buffer_limit_sdus: Option<u32>,
    /// SN field length in bits: UM 6 or 12, AM 12 or 18. `None` = 12 (UM) /
    /// 18 (AM).
    pub sn_length: Option<u8>,
    /// t-Reassembly of the receiver (0..=200 ms).
    pub t_reassembly: Duration,
    /// AM only: t-StatusProhibit (0..=2400 ms).
    pub t_status_prohibit: Duration,
    /// AM only: t-PollRetransmit (1..=4000 ms).
    pub t_poll_retransmit: Duration,
    /// AM only: poll every this many new PDUs; `None` = infinity.
    pub poll_pdu: Option<u32>,
    /// AM only: poll every this many new data bytes; `None` = infinity.
    pub poll_byte: Option<ByteSize>,
    /// AM only: retransmissions of one SDU before giving up (1..=32).
    pub max_retx_threshold: u8,
    /// Active queue management on the SDUs waiting in the transmit buffer,
    /// e.g. `{ kind = "codel", target = "15ms", interval = "300ms" }`.
    /// Default none (plain FIFO with tail drop at `buffer_limit`).
    pub aqm: Option<RlcAqmConfig>,
}

/// An AQM inside the RLC transmit buffer, tagged by `kind`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RlcAqmConfig {
    /// CoDel (RFC 8289) on the SDU sojourn in the RLC buffer; the fields and
    /// defaults of the TC CoDel queue (target 5 ms, interval 100 ms, mtu
    /// 1500 B, ecn off).
    Codel(CodelConfig),
}

/// A validated [`RlcAqmConfig`].
#[derive(Clone, Debug, PartialEq)]
pub struct RlcAqmParams(RlcAqmConfig);

impl RlcAqmParams {
    pub fn config(&self) -> &RlcAqmConfig {
        &self.0
    }
}

impl RlcAqmConfig {
    /// Validates the parameters (errors name `aqm.<field>`).
    pub fn build(&self) -> Result<RlcAqmParams, ConfigError> {
        match self {
            RlcAqmConfig::Codel(c) => c.build().map_err(|e| e.within("aqm"))?,
        };
        Ok(RlcAqmParams(self.clone()))
    }
}

impl Default for RlcConfig {
    fn default() -> Self {
        RlcConfig {
            mode: RlcMode::Am,
            buffer_limit: ByteSize(5_000_000),
            buffer_limit_sdus: None,
            sn_length: None,
            t_reassembly: Duration::from_millis(35),
            t_status_prohibit: Duration::from_millis(10),
            t_poll_retransmit: Duration::from_millis(45),
            poll_pdu: Some(64),
            poll_byte: Some(ByteSize(500_000)),
            max_retx_threshold: 8,
            aqm: None,
        }
    }
}

/// A validated [`RlcConfig`].
#[derive(Clone, Debug, PartialEq)]
pub struct RlcParams {
    pub mode: RlcMode,
    pub buffer_limit: u64,
    pub buffer_limit_sdus: Option<u32>,
    pub sn_length: u8,
    pub t_reassembly: Duration,
    pub t_status_prohibit: Duration,
    pub t_poll_retransmit: Duration,
    pub poll_pdu: u64,
    pub poll_byte: u64,
    pub max_retx_threshold: u32,
    pub aqm: Option<RlcAqmParams>,
}

impl RlcConfig {
    /// A UM configuration with the other fields at their defaults.
    pub fn um() -> RlcConfig {
        RlcConfig {
            mode: RlcMode::Um,
            ..RlcConfig::default()
        }
    }

    /// An AM configuration with the other fields at their defaults.
    pub fn am() -> RlcConfig {
        RlcConfig::default()
    }

    /// Validates every field (ranges from TS 38.331 `RLC-Config`).
    pub fn build(&self) -> Result<RlcParams, ConfigError> {
        let sn_length = match (self.mode, self.sn_length) {
            (RlcMode::Um, None) => 12,
            (RlcMode::Am, None) => 18,
            (RlcMode::Um, Some(s @ (6 | 12))) | (RlcMode::Am, Some(s @ (12 | 18))) => s,
            (RlcMode::Um, Some(s)) => {
                return Err(ConfigError::new("sn_length", s, "UM: must be 6 or 12"))
            }
            (RlcMode::Am, Some(s)) => {
                return Err(ConfigError::new("sn_length", s, "AM: must be 12 or 18"))
            }
        };
        if self.buffer_limit.bytes() == 0 {
            return Err(ConfigError::new(
                "buffer_limit",
                self.buffer_limit,
                "must be at least 1B",
            ));
        }
        if let Some(n) = self.buffer_limit_sdus {
            check_range("buffer_limit_sdus", n, 1, u32::MAX)?;
        }
        check_range(
            "t_reassembly",
            self.t_reassembly,
            Duration::ZERO,
            Duration::from_millis(200),
        )?;
        check_range(
            "t_status_prohibit",
            self.t_status_prohibit,
            Duration::ZERO,
            Duration::from_millis(2400),
        )?;
        check_range(
            "t_poll_retransmit",
            self.t_poll_retransmit,
            Duration::from_millis(1),
            Duration::from_millis(4000),
        )?;
        if let Some(p) = self.poll_pdu {
            check_range("poll_pdu", p, 1, 65536)?;
        }
        if let Some(b) = self.poll_byte {
            check_range("poll_byte", b, ByteSize(1), ByteSize(1_000_000_000))?;
        }
        check_range("max_retx_threshold", self.max_retx_threshold, 1, 32)?;
        let aqm = self.aqm.as_ref().map(RlcAqmConfig::build).transpose()?;
        Ok(RlcParams {
            mode: self.mode,
            buffer_limit: self.buffer_limit.bytes(),
            buffer_limit_sdus: self.buffer_limit_sdus,
            sn_length,
            t_reassembly: self.t_reassembly,
            t_status_prohibit: self.t_status_prohibit,
            t_poll_retransmit: self.t_poll_retransmit,
            poll_pdu: self.poll_pdu.map_or(u64::MAX, u64::from),
            poll_byte: self.poll_byte.map_or(u64::MAX, |b| b.bytes()),
            max_retx_threshold: u32::from(self.max_retx_threshold),
            aqm,
        })
    }
}

impl RlcParams {
    /// UM_Window_Size (§7.2: 32 for 6-bit, 2048 for 12-bit SN) or
    /// AM_Window_Size (2048 for 12-bit, 131072 for 18-bit SN).
    pub fn window(&self) -> u64 {
        1u64 << (self.sn_length - 1)
    }

    /// RLC header bytes of a PDU carrying a whole SDU.
    pub fn header_complete(&self) -> u32 {
        match self.mode {
            RlcMode::Um => 1,
            RlcMode::Am => am_sn_bytes(self.sn_length),
        }
    }

    /// RLC header bytes of a PDU carrying a segment starting at `so` (> 0
    /// adds the 2-byte SO) of an SDU that is segmented.
    pub fn header_segment(&self, so: u32) -> u32 {
        let base = match self.mode {
            RlcMode::Um => {
                if self.sn_length == 6 {
                    1
                } else {
                    2
                }
            }
            RlcMode::Am => am_sn_bytes(self.sn_length),
        };
        base + if so > 0 { 2 } else { 0 }
    }
}

fn am_sn_bytes(sn_length: u8) -> u32 {
    if sn_length == 12 {
        2
    } else {
        3
    }
}

/// MAC subheader for a MAC SDU of `rlc_pdu_len` bytes (TS 38.321 §6.1.2):
/// R/F/LCID + 8-bit L up to 255 bytes, 16-bit L above.
pub const fn mac_subheader_bytes(rlc_pdu_len: u32) -> u32 {
    if rlc_pdu_len <= 255 {
        2
    } else {
        3
    }
}

/// One RLC PDU (one SDU or SDU segment) as the MAC carries it.
#[derive(Clone, Debug, PartialEq)]
pub struct RlcPdu {
    pub drb: DrbId,
    /// Sequence number (unbounded; UM complete SDUs have none on the air but
    /// carry their internal number here).
    pub sn: u64,
    /// Segment offset: first data byte of the SDU in this PDU.
    pub so: u32,
    /// Data bytes carried.
    pub len: u32,
    /// Whether this PDU carries the last byte of the SDU.
    pub last: bool,
    /// Whether the SDU is carried whole (UM: no SN on the air).
    pub complete: bool,
    /// RLC header bytes.
    pub header: u16,
    /// MAC subheader bytes in front of it.
    pub mac_subheader: u8,
    /// AM poll bit.
    pub poll: bool,
    /// AM: a retransmission.
    pub retx: bool,
    /// The PDCP COUNT of the SDU (TS 38.323 §7.1). The PDCP transmitter is
    /// not modelled apart: the RLC transmitter numbers SDUs in the order of
    /// their first transmission, so an SDU dropped in the RLC buffer before
    /// it leaves no COUNT gap (as if PDCP discarded it before numbering).
    pub count: u64,
    /// The SDU's metadata, shared with the transmitter and the SDU's other
    /// PDUs. Its `stamps.mac_in` is not set: see [`RlcPdu::mac_in`].
    pub packet: Arc<Packet>,
    /// When the SDU's last byte was first handed to the MAC, if it was by
    /// the time this PDU was built (the packet's `stamps.mac_in` once it
    /// leaves the receiver). It travels with each PDU rather than in the
    /// shared packet, which would have to be copied to be stamped after its
    /// first segments left.
    pub mac_in: Stamp,
}

impl RlcPdu {
    /// The SDU's packet as the receiver hands it on, stamped with this
    /// PDU's [`RlcPdu::mac_in`].
    pub fn sdu(self) -> Packet {
        let mut p = Arc::unwrap_or_clone(self.packet);
        p.stamps.mac_in = self.mac_in;
        p
    }

    /// [`RlcPdu::sdu`] of a PDU that stays where it is.
    pub fn sdu_copy(&self) -> Packet {
        let mut p = Packet::clone(&self.packet);
        p.stamps.mac_in = self.mac_in;
        p
    }

    /// Size on the air: data + RLC header + MAC subheader.
    pub fn bytes(&self) -> u32 {
        self.len + u32::from(self.header) + u32::from(self.mac_subheader)
    }

    /// Size of the RLC PDU alone (the MAC SDU).
    pub fn rlc_bytes(&self) -> u32 {
        self.len + u32::from(self.header)
    }
}

/// An SDU left the RLC transmit buffer: UM when its last byte was sent, AM
/// when a STATUS PDU acknowledged all of it (Kumar et al., DynRLC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SduDeparture {
    pub packet_id: PacketId,
    pub len: u32,
    /// Time from enqueue into RLC to departure.
    pub sojourn: Duration,
}

/// What a BSR would report for one logical channel, plus what the TC
/// pipeline's `LowerLayerReport` needs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufferStatus {
    /// New data, including the RLC header and MAC subheader estimate of each
    /// remaining SDU (what a grant must hold to empty it).
    pub new_bytes: u64,
    /// AM data to retransmit, including headers.
    pub retx_bytes: u64,
    /// STATUS PDUs waiting (always 0 at the downlink transmitter: STATUS
    /// PDUs for downlink data flow in the uplink).
    pub status_bytes: u64,
    /// SDU payload bytes not yet transmitted once.
    pub new_payload_bytes: u64,
    /// SDUs not yet completely transmitted once.
    pub new_sdus: u32,
    /// SDUs held: UM = not completely sent; AM = not yet acknowledged.
    pub sdus_held: u32,
    /// Payload bytes of the SDUs held.
    pub held_bytes: u64,
}

impl BufferStatus {
    /// Bytes a grant needs to empty the buffer (new + retransmissions + status).
    pub fn total(&self) -> u64 {
        self.new_bytes + self.retx_bytes + self.status_bytes
    }
}

/// A missing part of an SDU in a STATUS PDU: bytes `[start, end)`, with
/// `end = None` meaning "up to the last byte" (SOend = 0xFFFF, §6.2.3.16).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SoRange {
    pub start: u32,
    pub end: Option<u32>,
}

/// One NACK: an SN and, when only parts are missing, the byte range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nack {
    pub sn: u64,
    /// `None` = the whole SDU is missing.
    pub so: Option<SoRange>,
}

/// An AM STATUS PDU (TS 38.322 §6.2.2.5).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatusPdu {
    /// Next SN not received and not NACKed: everything below it that is not
    /// NACKed is acknowledged.
    pub ack_sn: u64,
    pub nacks: Vec<Nack>,
    /// SN field length used to size the PDU.
    pub sn_length: u8,
}

impl StatusPdu {
    /// Size on the air (§6.2.2.5): 3-byte fixed part (D/C, CPT, ACK_SN, E1,
    /// R) for either SN length; per NACK_SN 2 B (12-bit) or 3 B (18-bit),
    /// plus 4 B for SOstart/SOend.
    pub fn bytes(&self) -> u32 {
        let per_nack = if self.sn_length == 12 { 2 } else { 3 };
        3 + self
            .nacks
            .iter()
            .map(|n| per_nack + if n.so.is_some() { 4 } else { 0 })
            .sum::<u32>()
    }
}

/// Received byte ranges of one SDU at the receiver, kept sorted and merged.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ranges {
    /// Disjoint, sorted, non-adjacent `[start, end)` ranges.
    pub v: Vec<(u32, u32)>,
}

impl Ranges {
    /// Adds `[s, e)`; returns the number of bytes that were new. Merges in
    /// place: no allocation beyond the vector's growth.
    pub fn insert(&mut self, s: u32, e: u32) -> u32 {
        if s >= e {
            return 0;
        }
        // Ranges entirely before [s, e) (not even adjacent) stay; those
        // overlapping or adjacent to it merge into one.
        let first = self.v.partition_point(|&(_, b)| b < s);
        let last = self.v.partition_point(|&(a, _)| a <= e);
        if first == last {
            self.v.insert(first, (s, e));
            return e - s;
        }
        let ns = s.min(self.v[first].0);
        let ne = e.max(self.v[last - 1].1);
        // The merged ranges and [s, e) cover [ns, ne) without a gap.
        let before: u32 = self.v[first..last].iter().map(|(a, b)| b - a).sum();
        self.v[first] = (ns, ne);
        self.v.drain(first + 1..last);
        (ne - ns) - before
    }

    /// Whether `[0, total)` is covered.
    pub fn complete(&self, total: Option<u32>) -> bool {
        match total {
            Some(t) => self.v.len() == 1 && self.v[0] == (0, t),
            None => false,
        }
    }

    /// Whether a byte is missing before the highest byte received.
    pub fn has_hole(&self) -> bool {
        match self.v.first() {
            None => false,
            Some(&(a, _)) => a > 0 || self.v.len() > 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_merge_and_count_new_bytes() {
        let mut r = Ranges::default();
        assert_eq!(r.insert(10, 20), 10);
        assert_eq!(r.insert(0, 5), 5);
        assert!(r.has_hole());
        assert_eq!(r.insert(3, 12), 5);
        assert_eq!(r.v, vec![(0, 20)]);
        assert_eq!(r.insert(0, 20), 0);
        assert!(r.complete(Some(20)));
        assert!(!r.complete(Some(21)));
        assert_eq!(r.insert(20, 25), 5);
        assert_eq!(r.v, vec![(0, 25)]);
    }

    proptest::proptest! {
        /// Against a byte bitmap: new-byte counts, and the ranges stay
        /// sorted, disjoint, non-adjacent and cover exactly the bytes seen.
        #[test]
        fn ranges_match_a_bitmap(ops in proptest::collection::vec((0u32..64, 0u32..64), 1..40)) {
            let mut r = Ranges::default();
            let mut seen = [false; 128];
            for (s, len) in ops {
                let e = s + len;
                let fresh = (s..e).filter(|&i| !seen[i as usize]).count() as u32;
                (s..e).for_each(|i| seen[i as usize] = true);
                proptest::prop_assert_eq!(r.insert(s, e), fresh);
                for w in r.v.windows(2) {
                    proptest::prop_assert!(w[0].1 < w[1].0, "{:?}", r.v);
                }
                let covered: Vec<bool> = (0..128u32)
                    .map(|i| r.v.iter().any(|&(a, b)| a <= i && i < b))
                    .collect();
                proptest::prop_assert_eq!(&covered[..], &seen[..]);
            }
        }
    }

    #[test]
    fn config_validation_names_fields() {
        let mut c = RlcConfig::um();
        c.sn_length = Some(18);
        assert_eq!(c.build().unwrap_err().field, "sn_length");
        let mut c = RlcConfig::am();
        c.max_retx_threshold = 0;
        assert_eq!(c.build().unwrap_err().field, "max_retx_threshold");
        let p = RlcConfig::am().build().unwrap();
        assert_eq!(p.sn_length, 18);
        assert_eq!(p.window(), 131072);
        let c: RlcConfig = serde_json::from_str(
            r#"{"mode":"um","t_reassembly":"20ms","buffer_limit":"1MB","sn_length":6}"#,
        )
        .unwrap();
        let p = c.build().unwrap();
        assert_eq!(p.window(), 32);
        assert_eq!(p.buffer_limit, 1_000_000);
        assert!(serde_json::from_str::<RlcConfig>(r#"{"bogus":1}"#).is_err());
    }
}
