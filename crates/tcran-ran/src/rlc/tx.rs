//! The transmitting RLC entity (gNB side of a downlink DRB).
//!
//! UM: TS 38.322 §5.2.2.1 (SN only for segmented SDUs, TX_Next incremented
//! after the last segment). AM: §5.2.3.1 (transmit window from TX_Next_Ack),
//! §5.3.2 (retransmission, RETX_COUNT, maxRetxThreshold), §5.3.3 (polling,
//! t-PollRetransmit). Within a grant, retransmissions go before new data
//! (§5.2.3.1.1 leaves the order to the implementation; every open source
//! gNB serves retransmissions first so the receiver window can advance).

use super::{
    mac_subheader_bytes, BufferStatus, RlcMode, RlcParams, RlcPdu, SduDeparture, StatusPdu,
};
use std::collections::VecDeque;
use std::sync::Arc;
use tcran_core::reason::MarkCounts;
use tcran_core::{DrbId, DropReason, Ecn, Instant, Packet, Stamp};
use tcran_tc::queue::Codel;
use tcran_tc::stage::{Events, Queue};

/// The AQM on the SDUs not yet started (module docs of [`super`]).
#[derive(Debug)]
struct Aqm {
    /// Holds a metadata-only copy of every SDU not yet started, in order.
    codel: Codel,
    /// Drops and marks of the last dequeue; marks accumulate.
    ev: Events,
    /// `sdus[new_idx]` has left the AQM although none of its bytes went out
    /// yet (no data byte fitted what was left of the grant).
    head_taken: bool,
}

impl Aqm {
    fn new(params: &super::RlcAqmParams) -> Aqm {
        let super::RlcAqmConfig::Codel(c) = params.config();
        Aqm {
            codel: c.build().expect("validated by RlcConfig::build"),
            ev: Events::default(),
            head_taken: false,
        }
    }

    /// Hands CoDel its copy of a new SDU. The copy leaves the real bytes
    /// behind: the AQM only needs the size, the ECN field and the enqueue
    /// time.
    #[cold]
    fn enqueue_copy(&mut self, packet: &mut Packet, now: Instant) {
        let payload = packet.payload.take();
        self.codel.enqueue(packet.clone(), now, &mut self.ev);
        packet.payload = payload;
    }
}

#[derive(Debug)]
struct TxSdu {
    sn: u64,
    /// Shared with the PDUs that carry its segments (module docs of
    /// [`super`]).
    packet: Arc<Packet>,
    len: u32,
    arrived: Instant,
    /// Bytes transmitted for the first time.
    sent: u32,
    /// AM: positively acknowledged (or abandoned).
    acked: bool,
    /// AM: byte ranges `[s, e)` waiting for retransmission, sorted, disjoint.
    retx: Vec<(u32, u32)>,
    /// AM: whether it was ever considered for retransmission.
    ever_retx: bool,
    retx_count: u32,
    /// AM: in the retransmission queue.
    queued: bool,
    /// The SDU's PDCP COUNT, given at its first transmission (or carried
    /// over from the source cell of a handover, `numbered`).
    count: u64,
    numbered: bool,
    /// When its last byte was first handed to the MAC ([`RlcPdu::mac_in`]).
    mac_in: Stamp,
}

/// The transmitting side of one RLC entity.
#[derive(Debug)]
pub struct RlcTx {
    p: RlcParams,
    drb: DrbId,
    /// UM: SDUs not completely sent. AM: SDUs from TX_Next_Ack on (front is
    /// never acked: acked SDUs at the front are popped at once).
    sdus: VecDeque<TxSdu>,
    /// SN of `sdus[0]` (AM: TX_Next_Ack).
    base_sn: u64,
    /// Index in `sdus` of the first SDU not completely sent once.
    new_idx: usize,
    /// Next SN to give an SDU at enqueue (AM) / UM TX_Next.
    next_sn: u64,
    // Counters kept incrementally so buffer_status() is O(retx queue).
    new_payload: u64,
    new_sdus: u32,
    /// Header + MAC subheader estimate of SDUs not started.
    new_overhead_unstarted: u64,
    held_sdus: u32,
    held_bytes: u64,
    /// SDU payload bytes sent for the first time, since the entity was
    /// made (retransmissions and headers not counted).
    first_tx_bytes: u64,
    // AM.
    retx_q: VecDeque<u64>,
    pdu_without_poll: u64,
    byte_without_poll: u64,
    poll_sn: Option<u64>,
    poll_pending: bool,
    t_poll_retransmit: Option<Instant>,
    abandoned: Vec<Packet>,
    /// Highest SN transmitted at least partly, + 1 (AM).
    tx_next_sent: u64,
    /// The PDCP COUNT of the next SDU to start (see [`RlcPdu::count`]).
    next_count: u64,
    aqm: Option<Aqm>,
    /// SDUs the AQM dropped, until [`RlcTx::drain_dropped`].
    dropped: Vec<(Packet, DropReason)>,
    /// Packet handles of acknowledged SDUs that nothing else holds any
    /// more, reused for new SDUs instead of allocating. All of them are
    /// kept: a handle is only made when none is spare, so the handles
    /// alive (SDUs held + spare) never outnumber the most SDUs held at
    /// once, and the memory kept is what the fullest buffer took. A cap
    /// would free the handles a draining buffer releases and allocate
    /// them again when it fills up (a TCP flow's sawtooth does both every
    /// cycle).
    spare: Vec<Arc<Packet>>,
}

impl RlcTx {
    pub fn new(params: RlcParams, drb: DrbId) -> RlcTx {
        RlcTx {
            drb,
            sdus: VecDeque::new(),
            base_sn: 0,
            new_idx: 0,
            next_sn: 0,
            new_payload: 0,
            new_sdus: 0,
            new_overhead_unstarted: 0,
            held_sdus: 0,
            held_bytes: 0,
            first_tx_bytes: 0,
            retx_q: VecDeque::new(),
            pdu_without_poll: 0,
            byte_without_poll: 0,
            poll_sn: None,
            poll_pending: false,
            t_poll_retransmit: None,
            abandoned: Vec::new(),
            tx_next_sent: 0,
            next_count: 0,
            aqm: params.aqm.as_ref().map(Aqm::new),
            dropped: Vec::new(),
            spare: Vec::new(),
            p: params,
        }
    }

    pub fn params(&self) -> &RlcParams {
        &self.p
    }

    pub fn drb(&self) -> DrbId {
        self.drb
    }

    fn unstarted_overhead(&self, len: u32) -> u64 {
        let h = self.p.header_complete();
        u64::from(h + mac_subheader_bytes(len + h))
    }

    /// Takes an SDU (a PDCP PDU). Refuses it, handing it back, when the
    /// buffer limit would be exceeded: the caller counts
    /// `DropReason::RlcFull` (tail drop of the whole SDU). The packet is
    /// returned by value, as everywhere on the tcran data path, so the
    /// refusal does not allocate.
    ///
    /// Inlined so that the packet moves from the caller's hands straight
    /// into its handle: a call would move it into its argument first (a
    /// packet move is a `memcpy` call, docs/performance.md).
    #[allow(clippy::result_large_err)]
    #[inline]
    pub fn enqueue(&mut self, packet: Packet, now: Instant) -> Result<(), Packet> {
        let len = packet.len;
        if len == 0
            || self.new_payload + u64::from(len) > self.p.buffer_limit
            || self
                .p
                .buffer_limit_sdus
                .is_some_and(|lim| self.new_sdus >= lim)
        {
            return Err(packet);
        }
        self.new_payload += u64::from(len);
        self.new_sdus += 1;
        self.new_overhead_unstarted += self.unstarted_overhead(len);
        self.held_sdus += 1;
        self.held_bytes += u64::from(len);
        let mut handle = match self.spare.pop() {
            Some(mut handle) => {
                *Arc::get_mut(&mut handle).expect("spare handles are unshared") = packet;
                handle
            }
            None => Arc::new(packet),
        };
        // Stamped where it stays, not before its move into the handle.
        let sdu = Arc::get_mut(&mut handle).expect("a new or spare handle is unshared");
        sdu.enqueued_at = now;
        sdu.stamps.rlc_in = Stamp::at(now);
        if let Some(aqm) = &mut self.aqm {
            aqm.enqueue_copy(sdu, now);
        }
        self.sdus.push_back(TxSdu {
            // UM: given at the first segment, if segmented; AM: at the first
            // transmission (module docs).
            sn: u64::MAX,
            packet: handle,
            len,
            arrived: now,
            sent: 0,
            acked: false,
            retx: Vec::new(),
            ever_retx: false,
            retx_count: 0,
            queued: false,
            count: 0,
            numbered: false,
            mac_in: Stamp::NONE,
        });
        Ok(())
    }

    /// Takes an SDU forwarded from the source cell of a handover (TS
    /// 38.300 §9.2.3.2.2: the target transmits forwarded PDCP SDUs with
    /// the COUNT the source gave them, if it gave one). Refused as by
    /// [`RlcTx::enqueue`].
    #[allow(clippy::result_large_err)]
    pub fn enqueue_forwarded(
        &mut self,
        packet: Packet,
        count: Option<u64>,
        now: Instant,
    ) -> Result<(), Packet> {
        self.enqueue(packet, now)?;
        if let (Some(c), Some(sdu)) = (count, self.sdus.back_mut()) {
            sdu.count = c;
            sdu.numbered = true;
        }
        Ok(())
    }

    /// The PDCP COUNT the next SDU not yet numbered will get: the SN
    /// status a source cell hands over (TS 38.300 §9.2.3.2.2, SN STATUS
    /// TRANSFER).
    pub fn next_count(&self) -> u64 {
        self.next_count
    }

    /// Continues the COUNTs of a source cell: the next SDU not yet
    /// numbered gets `count` (COUNT continuity across a handover, so the
    /// UE's PDCP reordering keeps order).
    pub fn continue_counts_from(&mut self, count: u64) {
        self.next_count = count;
    }

    /// The buffer as a BSR would report it.
    pub fn buffer_status(&self) -> BufferStatus {
        let mut new_bytes = self.new_payload + self.new_overhead_unstarted;
        if let Some(head) = self.sdus.get(self.new_idx) {
            if head.sent > 0 {
                let h = self.p.header_segment(head.sent);
                let rem = head.len - head.sent;
                new_bytes += u64::from(h + mac_subheader_bytes(rem + h));
            }
        }
        BufferStatus {
            new_bytes,
            retx_bytes: self.retx_bytes(),
            status_bytes: 0,
            new_payload_bytes: self.new_payload,
            new_sdus: self.new_sdus,
            sdus_held: self.held_sdus,
            held_bytes: self.held_bytes,
        }
    }

    /// Bytes the retransmission queue needs, headers included. The queue is
    /// empty but after a NACK, and the node asks twice a slot: an empty
    /// queue answers without setting up a walk over it.
    fn retx_bytes(&self) -> u64 {
        if self.retx_q.is_empty() {
            return 0;
        }
        let mut retx_bytes = 0;
        for &sn in &self.retx_q {
            let Some(sdu) = self.sdu(sn) else { continue };
            if sdu.acked {
                continue;
            }
            for &(s, e) in &sdu.retx {
                let h = if s == 0 && e == sdu.len {
                    self.p.header_complete()
                } else {
                    self.p.header_segment(s)
                };
                retx_bytes += u64::from(e - s + h + mac_subheader_bytes(e - s + h));
            }
        }
        retx_bytes
    }

    /// When the oldest SDU with bytes still to send (an AM retransmission
    /// or new data) entered the buffer; `None` when nothing waits. SNs
    /// follow arrival, so the oldest is the lowest SN waiting. O(retx
    /// queue), as [`Self::buffer_status`].
    pub fn head_of_line_arrival(&self) -> Option<Instant> {
        let new = self.sdus.get(self.new_idx).map(|s| s.arrived);
        if self.retx_q.is_empty() {
            return new; // as `retx_bytes`: mostly empty, no walk
        }
        let retx = self
            .retx_q
            .iter()
            .filter_map(|&sn| self.sdu(sn))
            .filter(|s| !s.acked)
            .map(|s| s.arrived)
            .min();
        Instant::earliest(new, retx)
    }

    /// Sizes (payload + header estimate) of the next `max` SDUs or SDU
    /// remainders the MAC would send, in order: retransmissions, then new
    /// data. Used by segmentation-aware schedulers (EQP).
    pub fn pending_sizes(&self, max: usize, out: &mut Vec<u32>) {
        out.clear();
        for &sn in &self.retx_q {
            if out.len() >= max {
                return;
            }
            if let Some(sdu) = self.sdu(sn).filter(|s| !s.acked) {
                let b: u32 = sdu
                    .retx
                    .iter()
                    .map(|&(s, e)| {
                        let h = self.p.header_segment(s);
                        e - s + h + mac_subheader_bytes(e - s + h)
                    })
                    .sum();
                if b > 0 {
                    out.push(b);
                }
            }
        }
        for sdu in self.sdus.iter().skip(self.new_idx) {
            if out.len() >= max {
                return;
            }
            let rem = sdu.len - sdu.sent;
            let h = if sdu.sent == 0 {
                self.p.header_complete()
            } else {
                self.p.header_segment(sdu.sent)
            };
            out.push(rem + h + mac_subheader_bytes(rem + h));
        }
    }

    fn sdu(&self, sn: u64) -> Option<&TxSdu> {
        let i = sn.checked_sub(self.base_sn)? as usize;
        self.sdus.get(i).filter(|s| s.sn == sn)
    }

    fn idx(&self, sn: u64) -> Option<usize> {
        let i = sn.checked_sub(self.base_sn)? as usize;
        (i < self.sdus.len() && self.sdus[i].sn == sn).then_some(i)
    }

    /// Data bytes that fit in `left` bytes behind an RLC header of `hdr`
    /// bytes and the MAC subheader, at most `rem`; `None` if not even one.
    /// The PDU ends exactly on the grant except when only a 255-byte RLC PDU
    /// fits with an 8-bit L but 256 would need a 16-bit L: one byte of MAC
    /// padding is left then.
    fn fit(left: u32, hdr: u32, rem: u32) -> Option<u32> {
        if hdr + rem + mac_subheader_bytes(hdr + rem) <= left {
            return Some(rem);
        }
        // Largest d < rem: 8-bit L needs hdr + d <= 255, 16-bit L any d.
        let d2 = left
            .checked_sub(hdr + 2)
            .filter(|&d| hdr + d <= 255 && d >= 1);
        let d3 = left.checked_sub(hdr + 3).filter(|&d| d >= 1);
        let d = d2.max(d3)?;
        Some(d.min(rem))
    }

    /// Fills a grant of `grant` bytes (MAC PDU bytes for this logical
    /// channel): retransmissions first (AM), then new data. Appends the RLC
    /// PDUs to `out`, UM SDU departures to `departures`, and returns the
    /// bytes used (<= `grant`; the rest is padding).
    pub fn fill(
        &mut self,
        grant: u32,
        now: Instant,
        out: &mut Vec<RlcPdu>,
        departures: &mut Vec<SduDeparture>,
    ) -> u32 {
        let mut left = grant;
        if self.p.mode == RlcMode::Am {
            left = self.fill_retx(left, now, out);
        }
        while left > 0 && self.new_idx < self.sdus.len() {
            if self.window_stalled() {
                break;
            }
            self.aqm_take_head(now);
            if self.new_idx == self.sdus.len() {
                break;
            }
            let p = &self.p;
            let sdu = &self.sdus[self.new_idx];
            let rem = sdu.len - sdu.sent;
            let first = sdu.sent == 0;
            let (hdr, d, complete) = if first
                && p.header_complete() + rem + mac_subheader_bytes(p.header_complete() + rem)
                    <= left
            {
                (p.header_complete(), rem, true)
            } else {
                let hdr = p.header_segment(sdu.sent);
                match Self::fit(left, hdr, rem) {
                    Some(d) => (hdr, d, false),
                    None => break,
                }
            };
            let mac = mac_subheader_bytes(hdr + d);
            let so = sdu.sent;
            let last = so + d == sdu.len;
            let sn = match p.mode {
                RlcMode::Am if !first => sdu.sn,
                _ => self.next_sn,
            };
            // Counters.
            if first {
                self.new_overhead_unstarted -= self.unstarted_overhead(sdu.len);
                if p.mode == RlcMode::Am {
                    self.next_sn += 1;
                }
                if let Some(aqm) = &mut self.aqm {
                    aqm.head_taken = false;
                }
            }
            self.new_payload -= u64::from(d);
            self.first_tx_bytes += u64::from(d);
            left -= hdr + d + mac;
            let sdu = &mut self.sdus[self.new_idx];
            if first && !sdu.numbered {
                sdu.count = self.next_count;
                self.next_count += 1;
            }
            sdu.sent += d;
            sdu.sn = sn;
            if last {
                // The first transmission of the last byte: the SDU's wait
                // in RLC ends here (every PDU built from now on, including
                // retransmissions, carries the stamp).
                sdu.mac_in = Stamp::at(now);
            }
            out.push(RlcPdu {
                drb: self.drb,
                sn,
                so,
                len: d,
                last,
                complete,
                header: hdr as u16,
                mac_subheader: mac as u8,
                poll: false,
                retx: false,
                count: sdu.count,
                packet: Arc::clone(&sdu.packet),
                mac_in: sdu.mac_in,
            });
            if last {
                self.new_sdus -= 1;
                self.new_idx += 1;
            }
            match self.p.mode {
                RlcMode::Um => {
                    if last {
                        if !complete {
                            self.next_sn += 1;
                        }
                        let s = self.sdus.pop_front().expect("head SDU");
                        self.new_idx -= 1;
                        self.held_sdus -= 1;
                        self.held_bytes -= u64::from(s.len);
                        departures.push(SduDeparture {
                            packet_id: s.packet.id,
                            len: s.len,
                            sojourn: now.saturating_since(s.arrived),
                        });
                    }
                }
                RlcMode::Am => {
                    self.tx_next_sent = self.tx_next_sent.max(sn + 1);
                    self.pdu_without_poll += 1;
                    self.byte_without_poll += u64::from(d);
                    self.maybe_poll(now, out);
                }
            }
        }
        grant - left
    }

    /// AM: the next new SDU (which gets SN `next_sn` at its first
    /// transmission unless it is already under way) lies outside the
    /// transmit window (§5.2.3.1.1).
    fn window_stalled(&self) -> bool {
        self.p.mode == RlcMode::Am
            && self.sdus.get(self.new_idx).is_some_and(|s| {
                let sn = if s.sent > 0 { s.sn } else { self.next_sn };
                sn >= self.base_sn + self.p.window()
            })
    }

    /// Runs the AQM when the head of the new data has not started: CoDel's
    /// dequeue on its copies, removing the SDUs it drops (always the oldest
    /// ones not started) and CE-marking the one it hands out if it marked it.
    fn aqm_take_head(&mut self, now: Instant) {
        let Some(aqm) = &mut self.aqm else { return };
        let head_started = self.sdus.get(self.new_idx).is_none_or(|s| s.sent > 0);
        if aqm.head_taken || head_started {
            return;
        }
        let out = aqm.codel.dequeue(now, &mut aqm.ev);
        for d in aqm.ev.dropped.drain(..) {
            let sdu = self
                .sdus
                .remove(self.new_idx)
                .expect("the AQM holds a copy of every SDU not started, in order");
            debug_assert_eq!(sdu.packet.id, d.packet.id);
            let h = self.p.header_complete();
            self.new_overhead_unstarted -= u64::from(h + mac_subheader_bytes(sdu.len + h));
            self.new_payload -= u64::from(sdu.len);
            self.new_sdus -= 1;
            self.held_sdus -= 1;
            self.held_bytes -= u64::from(sdu.len);
            self.dropped
                .push((Arc::unwrap_or_clone(sdu.packet), d.reason));
        }
        if let Some(copy) = out {
            let sdu = &mut self.sdus[self.new_idx];
            debug_assert_eq!(sdu.packet.id, copy.id);
            if copy.ecn == Ecn::Ce && sdu.packet.ecn != Ecn::Ce {
                // Not shared: no byte of it was sent.
                tcran_tc::mark::set_ce(Arc::make_mut(&mut sdu.packet));
            }
            aqm.head_taken = true;
        }
    }

    /// Hands out the SDUs the AQM dropped since the last call, with their
    /// reason (`DropReason::Codel`). Call after each [`RlcTx::fill`].
    pub fn drain_dropped(&mut self, out: &mut Vec<(Packet, DropReason)>) {
        // Asked after every grant; the AQM drops rarely, and `append` of
        // nothing still goes through its reservation.
        if self.dropped.is_empty() {
            return;
        }
        out.append(&mut self.dropped);
    }

    /// CE marks the AQM gave (`None` without an AQM).
    pub fn aqm_marks(&self) -> Option<&MarkCounts> {
        self.aqm.as_ref().map(|a| &a.ev.marks)
    }

    fn fill_retx(&mut self, mut left: u32, now: Instant, out: &mut Vec<RlcPdu>) -> u32 {
        while left > 0 {
            let Some(&sn) = self.retx_q.front() else {
                break;
            };
            let Some(i) = self.idx(sn).filter(|&i| {
                let s = &self.sdus[i];
                !s.acked && !s.retx.is_empty()
            }) else {
                self.retx_q.pop_front();
                if let Some(i) = self.idx(sn) {
                    self.sdus[i].queued = false;
                }
                continue;
            };
            let sdu = &self.sdus[i];
            let (s, e) = sdu.retx[0];
            let whole = s == 0 && e == sdu.len;
            let hdr = if whole {
                self.p.header_complete()
            } else {
                self.p.header_segment(s)
            };
            let Some(d) = Self::fit(left, hdr, e - s) else {
                break;
            };
            // A partial retransmission of a whole SDU becomes a segment with
            // the segment header (same size for the first segment in AM).
            let hdr = if whole && d < e - s {
                self.p.header_segment(s)
            } else {
                hdr
            };
            let mac = mac_subheader_bytes(hdr + d);
            left -= hdr + d + mac;
            let sdu = &mut self.sdus[i];
            if s + d == e {
                sdu.retx.remove(0);
            } else {
                sdu.retx[0].0 = s + d;
            }
            let done = sdu.retx.is_empty();
            out.push(RlcPdu {
                drb: self.drb,
                sn,
                so: s,
                len: d,
                last: s + d == sdu.len,
                complete: whole && d == e - s,
                header: hdr as u16,
                mac_subheader: mac as u8,
                poll: false,
                retx: true,
                count: sdu.count,
                packet: Arc::clone(&sdu.packet),
                mac_in: sdu.mac_in,
            });
            if done {
                sdu.queued = false;
                self.retx_q.pop_front();
            }
            self.maybe_poll(now, out);
        }
        left
    }

    fn retx_pending(&self) -> bool {
        self.retx_q
            .iter()
            .any(|&sn| self.sdu(sn).is_some_and(|s| !s.acked && !s.retx.is_empty()))
    }

    /// §5.3.3.2: sets the poll bit on the PDU just appended when due.
    fn maybe_poll(&mut self, now: Instant, out: &mut [RlcPdu]) {
        let new_empty = self.new_idx >= self.sdus.len();
        let stalled = self.window_stalled();
        let poll = self.poll_pending
            || self.pdu_without_poll >= self.p.poll_pdu
            || self.byte_without_poll >= self.p.poll_byte
            || (new_empty && !self.retx_pending())
            || stalled;
        if poll {
            if let Some(pdu) = out.last_mut() {
                pdu.poll = true;
            }
            self.pdu_without_poll = 0;
            self.byte_without_poll = 0;
            self.poll_pending = false;
            // POLL_SN = TX_Next - 1: the highest SN submitted.
            self.poll_sn = self.tx_next_sent.checked_sub(1);
            self.t_poll_retransmit = Some(now + self.p.t_poll_retransmit);
        }
    }

    /// Handles a STATUS PDU (§5.3.2, §5.3.3.3): releases acknowledged SDUs
    /// (appending their departures), schedules NACKed data for
    /// retransmission, stops t-PollRetransmit when POLL_SN is covered.
    pub fn on_status(
        &mut self,
        status: &StatusPdu,
        now: Instant,
        departures: &mut Vec<SduDeparture>,
    ) {
        if self.p.mode != RlcMode::Am {
            return;
        }
        // Only SNs already submitted can be acknowledged.
        let ack_sn = status.ack_sn.min(self.tx_next_sent);
        if let (Some(psn), Some(_)) = (self.poll_sn, self.t_poll_retransmit) {
            if psn < ack_sn {
                self.t_poll_retransmit = None;
            }
        }
        let mut nacks = status.nacks.iter().peekable();
        for sn in self.base_sn..ack_sn {
            let Some(i) = self.idx(sn) else { continue };
            let mut nacked = false;
            while let Some(n) = nacks.peek() {
                if n.sn < sn {
                    nacks.next();
                } else if n.sn == sn {
                    nacked = true;
                    let n = *nacks.next().expect("peeked");
                    self.on_nack(i, n.so);
                } else {
                    break;
                }
            }
            if !nacked && !self.sdus[i].acked {
                let sdu = &mut self.sdus[i];
                // An SDU whose first transmission is not finished cannot be
                // acknowledged whole; the receiver would have NACKed it.
                if sdu.sent < sdu.len {
                    continue;
                }
                sdu.acked = true;
                sdu.retx.clear();
                self.held_sdus -= 1;
                self.held_bytes -= u64::from(sdu.len);
                departures.push(SduDeparture {
                    packet_id: sdu.packet.id,
                    len: sdu.len,
                    sojourn: now.saturating_since(sdu.arrived),
                });
            }
        }
        self.pop_acked();
    }

    fn on_nack(&mut self, i: usize, so: Option<super::SoRange>) {
        let threshold = self.p.max_retx_threshold;
        let sdu = &mut self.sdus[i];
        if sdu.acked {
            return;
        }
        let (s, e) = match so {
            None => (0, sdu.sent),
            Some(r) => (r.start, r.end.unwrap_or(sdu.len).min(sdu.sent)),
        };
        if s >= e {
            return;
        }
        // RETX_COUNT (§5.3.2): 0 the first time, +1 when not already pending.
        if !sdu.ever_retx {
            sdu.ever_retx = true;
        } else if sdu.retx.is_empty() {
            sdu.retx_count += 1;
        }
        if sdu.retx_count >= threshold {
            // Radio link failure in the spec; we give up on this SDU.
            sdu.acked = true;
            sdu.retx.clear();
            self.held_sdus -= 1;
            self.held_bytes -= u64::from(sdu.len);
            let mut p = Packet::clone(&sdu.packet);
            p.stamps.mac_in = sdu.mac_in;
            self.abandoned.push(p);
            return;
        }
        insert_range(&mut sdu.retx, s, e);
        if !sdu.queued {
            sdu.queued = true;
            let sn = sdu.sn;
            self.retx_q.push_back(sn);
        }
    }

    fn pop_acked(&mut self) {
        while self.sdus.front().is_some_and(|s| s.acked) {
            let mut s = self.sdus.pop_front().expect("front exists");
            if let Some(p) = Arc::get_mut(&mut s.packet) {
                p.payload = None; // hold no real bytes
                self.spare.push(s.packet);
            }
            self.base_sn += 1;
            self.new_idx = self.new_idx.saturating_sub(1);
        }
    }

    /// When t-PollRetransmit expires, if running.
    pub fn next_wakeup(&self) -> Option<Instant> {
        self.t_poll_retransmit
    }

    /// Runs expired timers (§5.3.3.4: t-PollRetransmit).
    pub fn on_timer(&mut self, now: Instant) {
        let Some(t) = self.t_poll_retransmit else {
            return;
        };
        if now < t {
            return;
        }
        self.t_poll_retransmit = None;
        let stalled = self.window_stalled();
        let nothing_new = self.new_idx >= self.sdus.len();
        if (nothing_new && !self.retx_pending()) || stalled {
            // Retransmit the highest SN submitted that is not acknowledged.
            if let Some(i) = (0..self.sdus.len()).rev().find(|&i| {
                let s = &self.sdus[i];
                !s.acked && s.sn < self.tx_next_sent && s.sent > 0
            }) {
                self.on_nack(i, None);
            }
        }
        self.poll_pending = true;
    }

    /// SDUs given up after maxRetxThreshold (count as `DropReason::AirLoss`).
    pub fn drain_abandoned(&mut self, out: &mut Vec<Packet>) {
        out.append(&mut self.abandoned);
    }

    /// SDU payload bytes sent for the first time so far (TS 28.552
    /// DRB.RlcSduTransmittedVolumeDL counts their difference).
    pub fn first_tx_bytes(&self) -> u64 {
        self.first_tx_bytes
    }

    /// Whether [`RlcTx::drain_abandoned`] would hand out anything.
    pub fn has_abandoned(&self) -> bool {
        !self.abandoned.is_empty()
    }

    /// The SDUs the transmitter is still responsible for, oldest first:
    /// not yet acknowledged and not given up (accounting only, e.g. the
    /// simulator's packet ledger; an SDU the receiver already holds whose
    /// acknowledgement is on its way is listed too).
    pub fn held_sdus(&self) -> impl Iterator<Item = HeldSdu<'_>> {
        self.sdus.iter().filter(|s| !s.acked).map(|s| HeldSdu {
            packet: &s.packet,
            sn: (s.sent > 0).then_some(s.sn),
            count: (s.sent > 0 || s.numbered).then_some(s.count),
            to_send: s.sent < s.len || !s.retx.is_empty(),
        })
    }

    /// Whether nothing is held (no new data, nothing unacknowledged).
    pub fn is_empty(&self) -> bool {
        self.sdus.is_empty()
    }
}

/// An SDU held by [`RlcTx`] (see [`RlcTx::held_sdus`]).
#[derive(Debug, Clone, Copy)]
pub struct HeldSdu<'a> {
    pub packet: &'a Packet,
    /// Its SN, once its first byte was sent (UM: only segmented SDUs use
    /// their SN).
    pub sn: Option<u64>,
    /// Its PDCP COUNT, once it has one (given at the first transmission,
    /// or carried over by a handover).
    pub count: Option<u64>,
    /// Bytes of it wait for their first transmission or a retransmission.
    pub to_send: bool,
}

/// Adds `[s, e)` to sorted disjoint ranges.
fn insert_range(v: &mut Vec<(u32, u32)>, s: u32, e: u32) {
    let mut ns = s;
    let mut ne = e;
    let mut i = 0;
    while i < v.len() {
        let (a, b) = v[i];
        if b < ns {
            i += 1;
        } else if a > ne {
            break;
        } else {
            ns = ns.min(a);
            ne = ne.max(b);
            v.remove(i);
        }
    }
    v.insert(i, (ns, ne));
}
