//! The receiving RLC entity (UE side of a downlink DRB).
//!
//! UM: TS 38.322 §5.2.2.2 (RX_Next_Reassembly, RX_Timer_Trigger,
//! RX_Next_Highest, UM window, t-Reassembly). AM: §5.2.3.2 (RX_Next,
//! RX_Next_Status_Trigger, RX_Highest_Status, RX_Next_Highest, AM window,
//! t-Reassembly) and §5.3.4 (STATUS triggering by poll or t-Reassembly
//! expiry, t-StatusProhibit, STATUS contents with NACK SO ranges). NR RLC
//! delivers each SDU as soon as it is reassembled, out of order (in-order
//! delivery is PDCP's job, TS 38.323 §5.2.2).

use super::{Nack, Ranges, RlcMode, RlcParams, RlcPdu, SoRange, StatusPdu};
use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;
use tcran_core::{DrbId, Instant, Packet, Stamp};

#[derive(Debug, Default)]
struct RxSdu {
    /// The SDU's metadata, kept from its first segment until it completes
    /// (a handle shared with the PDU, see [`RlcPdu::packet`]).
    packet: Option<Arc<Packet>>,
    ranges: Ranges,
    /// SDU length, known once the last segment arrived.
    total: Option<u32>,
    delivered: bool,
    /// The first [`RlcPdu::mac_in`] set among its segments.
    mac_in: Stamp,
}

/// Reception state per SN, as a map from SN to [`RxSdu`] would hold it, in
/// a window from the lowest SN held: SNs in reception are dense (they span
/// at most the RLC window above RX_Next), so a ring buffer indexed by SN
/// serves the receiver without the allocation and rebalancing per SDU of a
/// B-tree.
#[derive(Debug, Default)]
struct RxBuf {
    /// SN of `slots[0]`.
    base: u64,
    /// `slots[i]` is the entry of SN `base + i`, if held; `slots[0]` is held
    /// whenever `slots` is not empty.
    slots: VecDeque<Option<RxSdu>>,
}

impl RxBuf {
    fn get(&self, sn: u64) -> Option<&RxSdu> {
        let i = usize::try_from(sn.checked_sub(self.base)?).ok()?;
        self.slots.get(i)?.as_ref()
    }

    /// The entry of `sn`, created empty if not held.
    fn entry(&mut self, sn: u64) -> &mut RxSdu {
        if self.slots.is_empty() {
            self.base = sn;
        } else if sn < self.base {
            for _ in sn..self.base {
                self.slots.push_front(None);
            }
            self.base = sn;
        }
        let i = (sn - self.base) as usize;
        if i >= self.slots.len() {
            self.slots.resize_with(i + 1, || None);
        }
        self.slots[i].get_or_insert_with(RxSdu::default)
    }

    /// The lowest SN held and its entry.
    fn first(&self) -> Option<(u64, &RxSdu)> {
        let e = self.slots.front()?.as_ref().expect("the front is held");
        Some((self.base, e))
    }

    /// Removes the lowest SN held.
    fn pop_first(&mut self) -> Option<(u64, RxSdu)> {
        let e = self.slots.pop_front()?.expect("the front is held");
        let sn = self.base;
        self.base += 1;
        while self.slots.front().is_some_and(Option::is_none) {
            self.slots.pop_front();
            self.base += 1;
        }
        Some((sn, e))
    }

    fn values(&self) -> impl Iterator<Item = &RxSdu> {
        self.slots.iter().flatten()
    }
}

/// Range vectors kept for reuse (segmented SDUs come and go all the time).
const SPARE_RANGES: usize = 64;

/// Receiver counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RxStats {
    pub delivered_sdus: u64,
    pub delivered_bytes: u64,
    /// PDUs (or parts) received twice or outside the window.
    pub duplicate_pdus: u64,
    pub discarded_sdus: u64,
    pub status_pdus: u64,
}

/// The receiving side of one RLC entity.
#[derive(Debug)]
pub struct RlcRx {
    p: RlcParams,
    drb: DrbId,
    buf: RxBuf,
    /// Emptied range vectors of completed SDUs, for the next ones.
    spare: Vec<Vec<(u32, u32)>>,
    /// UM: RX_Next_Reassembly; AM: RX_Next.
    rx_next: u64,
    rx_next_highest: u64,
    /// UM: RX_Timer_Trigger; AM: RX_Next_Status_Trigger.
    timer_trigger: u64,
    t_reassembly: Option<Instant>,
    // AM.
    rx_highest_status: u64,
    status_triggered: bool,
    deferred_poll: Option<u64>,
    t_status_prohibit: Option<Instant>,
    // UM loss accounting (see the module docs).
    reported_lost: BTreeSet<u64>,
    /// UM SDUs discarded outside a timer run, reported at the next one.
    pending_lost: Vec<Packet>,
    /// The PDCP COUNTs of the SDUs delivered, in delivery order, until
    /// [`RlcRx::clear_counts`].
    counts: Vec<u64>,
    stats: RxStats,
}

impl RlcRx {
    pub fn new(params: RlcParams, drb: DrbId) -> RlcRx {
        RlcRx {
            p: params,
            drb,
            buf: RxBuf::default(),
            spare: Vec::new(),
            rx_next: 0,
            rx_next_highest: 0,
            timer_trigger: 0,
            t_reassembly: None,
            rx_highest_status: 0,
            status_triggered: false,
            deferred_poll: None,
            t_status_prohibit: None,
            reported_lost: BTreeSet::new(),
            pending_lost: Vec::new(),
            counts: Vec::new(),
            stats: RxStats::default(),
        }
    }

    pub fn drb(&self) -> DrbId {
        self.drb
    }

    pub fn stats(&self) -> RxStats {
        self.stats
    }

    /// SDUs partly received and waiting for reassembly.
    pub fn pending_sdus(&self) -> usize {
        self.buf.values().filter(|s| !s.delivered).count()
    }

    /// Whether the SDU of `sn` was reassembled and delivered (AM; in UM an
    /// SN below the reassembly window may also have been discarded, see
    /// [`RlcRx::reported_lost`]).
    pub fn has_delivered(&self, sn: u64) -> bool {
        (self.p.mode == RlcMode::Am && sn < self.rx_next) || self.fully_received(sn)
    }

    /// UM: whether the SDU of `sn` was reported lost (by
    /// [`RlcRx::on_pdu_lost`], a window move or t-Reassembly).
    pub fn reported_lost(&self, sn: u64) -> bool {
        self.reported_lost.contains(&sn)
    }

    /// SDUs held partly received (waiting for their other segments), by SN,
    /// and UM SDUs discarded but not yet reported (accounting only).
    pub fn partial_sdus(&self) -> impl Iterator<Item = (Option<u64>, &Packet)> {
        let held = self.buf.slots.iter().enumerate().filter_map(|(i, e)| {
            let e = e.as_ref()?;
            let p = e.packet.as_deref().filter(|_| !e.delivered)?;
            Some((Some(self.buf.base + i as u64), p))
        });
        held.chain(self.pending_lost.iter().map(|p| (None, p)))
    }

    /// The PDCP COUNTs ([`RlcPdu::count`]) of the SDUs delivered since the
    /// last [`RlcRx::clear_counts`], in the order the SDUs were delivered.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// Forgets the COUNTs [`RlcRx::counts`] lists (PDCP has them).
    pub fn clear_counts(&mut self) {
        self.counts.clear();
    }

    /// Receives one RLC PDU; appends every SDU it completes to `delivered`.
    pub fn on_pdu(&mut self, pdu: RlcPdu, now: Instant, delivered: &mut Vec<Packet>) {
        match self.p.mode {
            RlcMode::Um => self.on_pdu_um(pdu, now, delivered),
            RlcMode::Am => self.on_pdu_am(pdu, now, delivered),
        }
    }

    /// Places the segment; returns whether the SDU just became complete.
    fn place(&mut self, pdu: RlcPdu, delivered: &mut Vec<Packet>) -> bool {
        // The next SDU expected (SN = RX_Next), whole, with nothing else
        // held, the common case in order: it goes up without an entry in
        // the buffer. An entry would only mark it delivered until the
        // caller moves RX_Next past it and prunes it, which both callers do
        // at once (§5.2.2.2.3, §5.2.3.2.3); with nothing else held, the
        // first SN missing above it is SN + 1 either way.
        if pdu.so == 0 && pdu.last && pdu.sn == self.rx_next && self.buf.slots.is_empty() {
            let count = pdu.count;
            self.deliver(count, pdu.sdu(), delivered);
            return true;
        }
        let pdu_count = pdu.count;
        let e = self.buf.entry(pdu.sn);
        if e.delivered {
            self.stats.duplicate_pdus += 1;
            return false;
        }
        // A whole SDU arriving first (the common case) needs no reassembly
        // state; otherwise track the byte ranges received.
        let whole_at_once = pdu.so == 0 && pdu.last && e.ranges.v.is_empty();
        if !whole_at_once {
            if e.ranges.v.capacity() == 0 {
                if let Some(v) = self.spare.pop() {
                    e.ranges.v = v;
                }
            }
            let new = e.ranges.insert(pdu.so, pdu.so + pdu.len);
            if new < pdu.len {
                self.stats.duplicate_pdus += 1;
            }
            if pdu.last {
                e.total = Some(pdu.so + pdu.len);
            }
            if !e.ranges.complete(e.total) {
                // A segment sent before the SDU's last byte was first sent
                // has no `mac_in`; a later one has.
                e.mac_in = e.mac_in.or(pdu.mac_in);
                if e.packet.is_none() {
                    e.packet = Some(pdu.packet);
                }
                return false;
            }
        }
        e.delivered = true;
        let mut v = std::mem::take(&mut e.ranges.v);
        e.packet = None;
        if v.capacity() > 0 && self.spare.len() < SPARE_RANGES {
            v.clear();
            self.spare.push(v);
        }
        // Every PDU of an SDU carries the same packet: deliver this one's,
        // with the stamp of the SDU's last byte if any of its PDUs had it.
        let mac_in = pdu.mac_in.or(e.mac_in);
        let mut packet = pdu.sdu();
        packet.stamps.mac_in = mac_in;
        self.deliver(pdu_count, packet, delivered);
        true
    }

    /// Hands a reassembled SDU of PDCP COUNT `count` up.
    #[inline]
    fn deliver(&mut self, count: u64, sdu: Packet, delivered: &mut Vec<Packet>) {
        self.stats.delivered_sdus += 1;
        self.stats.delivered_bytes += u64::from(sdu.len);
        self.counts.push(count);
        delivered.push(sdu);
    }

    fn fully_received(&self, sn: u64) -> bool {
        self.buf.get(sn).is_some_and(|s| s.delivered)
    }

    fn has_hole(&self, sn: u64) -> bool {
        self.buf
            .get(sn)
            .is_some_and(|s| !s.delivered && s.ranges.has_hole())
    }

    /// First SN >= `from` not fully received.
    fn first_missing(&self, from: u64) -> u64 {
        let mut sn = from;
        while self.fully_received(sn) {
            sn += 1;
        }
        sn
    }

    // ------------------------------------------------------------------ UM

    fn on_pdu_um(&mut self, pdu: RlcPdu, now: Instant, delivered: &mut Vec<Packet>) {
        if pdu.complete {
            // §5.2.2.2.2: a UMD PDU with a complete SDU is delivered at once.
            let count = pdu.count;
            self.deliver(count, pdu.sdu(), delivered);
            return;
        }
        let x = pdu.sn;
        let w = self.p.window();
        // §5.2.2.2.2: discard if RX_Next_Highest - W <= x < RX_Next_Reassembly
        // (with unbounded SNs: anything below RX_Next_Reassembly).
        if x < self.rx_next || self.reported_lost.contains(&x) {
            // A segment of an SDU the reassembly window moved past before
            // any of its segments arrived (the others were late on the
            // air): discarded, and lost like those discarded in the
            // window.
            if x < self.rx_next && self.reported_lost.insert(x) {
                self.stats.discarded_sdus += 1;
                self.pending_lost.push(pdu.sdu());
                return;
            }
            self.stats.duplicate_pdus += 1;
            return;
        }
        let complete = self.place(pdu, delivered);
        // §5.2.2.2.3.
        if complete && x == self.rx_next {
            self.rx_next = self.first_missing(x + 1);
            self.prune_below(self.rx_next);
        }
        if x >= self.rx_next_highest {
            self.rx_next_highest = x + 1;
            let lower = self.rx_next_highest.saturating_sub(w);
            let mut lost = Vec::new();
            self.discard_below(lower, &mut lost);
            // Losses found here surface at the next timer run.
            self.pending_lost.append(&mut lost);
            if self.rx_next < lower {
                self.rx_next = self.first_missing(lower);
            }
        }
        self.um_timer_update(now);
    }

    fn um_timer_update(&mut self, now: Instant) {
        let w = self.p.window();
        if self.t_reassembly.is_some() {
            let outside = self.timer_trigger < self.rx_next_highest.saturating_sub(w);
            if self.timer_trigger <= self.rx_next
                || (outside && self.timer_trigger != self.rx_next_highest)
                || (self.rx_next_highest == self.rx_next + 1 && !self.has_hole(self.rx_next))
            {
                self.t_reassembly = None;
            }
        }
        if self.t_reassembly.is_none() && self.needs_timer(self.rx_next) {
            self.t_reassembly = Some(now + self.p.t_reassembly);
            self.timer_trigger = self.rx_next_highest;
        }
    }

    fn needs_timer(&self, base: u64) -> bool {
        self.rx_next_highest > base + 1 || (self.rx_next_highest == base + 1 && self.has_hole(base))
    }

    /// Removes every entry below `sn`, reporting incomplete SDUs as lost.
    fn discard_below(&mut self, sn: u64, lost: &mut Vec<Packet>) {
        while let Some((k, _)) = self.buf.first() {
            if k >= sn {
                break;
            }
            let (k, e) = self.buf.pop_first().expect("non-empty");
            if !e.delivered {
                self.stats.discarded_sdus += 1;
                if let Some(p) = e.packet {
                    if self.reported_lost.insert(k) {
                        let mut p = Arc::unwrap_or_clone(p);
                        p.stamps.mac_in = e.mac_in;
                        lost.push(p);
                    }
                }
            }
        }
        // Keep the loss memory bounded: nothing below this can arrive again.
        let keep_from = sn.saturating_sub(4 * self.p.window());
        while self.reported_lost.first().is_some_and(|&k| k < keep_from) {
            self.reported_lost.pop_first();
        }
    }

    fn prune_below(&mut self, sn: u64) {
        while self.buf.first().is_some_and(|(k, e)| k < sn && e.delivered) {
            self.buf.pop_first();
        }
    }

    /// The MAC gave up on a transport block carrying `pdu` (HARQ failure).
    /// Not protocol behaviour: it lets the simulator count every UM SDU lost
    /// on the air exactly once (see the module docs). No-op in AM.
    pub fn on_pdu_lost(&mut self, pdu: &RlcPdu, lost: &mut Vec<Packet>) {
        if self.p.mode != RlcMode::Um {
            return;
        }
        if pdu.complete {
            lost.push(pdu.sdu_copy());
            return;
        }
        if self.reported_lost.insert(pdu.sn) {
            self.stats.discarded_sdus += 1;
            lost.push(pdu.sdu_copy());
        }
    }

    // ------------------------------------------------------------------ AM

    fn on_pdu_am(&mut self, pdu: RlcPdu, now: Instant, delivered: &mut Vec<Packet>) {
        let x = pdu.sn;
        let w = self.p.window();
        let poll = pdu.poll;
        if x < self.rx_next || x >= self.rx_next + w {
            self.stats.duplicate_pdus += 1;
            if poll {
                self.trigger_status(now);
            }
            return;
        }
        let complete = self.place(pdu, delivered);
        // §5.2.3.2.3.
        if x >= self.rx_next_highest {
            self.rx_next_highest = x + 1;
        }
        if complete {
            if x == self.rx_highest_status {
                self.rx_highest_status = self.first_missing(x + 1);
            }
            if x == self.rx_next {
                self.rx_next = self.first_missing(x + 1);
                self.prune_below(self.rx_next);
            }
        }
        if self.t_reassembly.is_some() {
            let t = self.timer_trigger;
            let outside = t < self.rx_next || t >= self.rx_next + w;
            if t == self.rx_next
                || (t == self.rx_next + 1 && !self.has_hole(self.rx_next))
                || (outside && t != self.rx_next + w)
            {
                self.t_reassembly = None;
            }
        }
        if self.t_reassembly.is_none() && self.needs_timer(self.rx_next) {
            self.t_reassembly = Some(now + self.p.t_reassembly);
            self.timer_trigger = self.rx_next_highest;
        }
        // §5.3.4: poll.
        if poll {
            if x < self.rx_highest_status || x >= self.rx_next + w {
                self.trigger_status(now);
            } else {
                self.deferred_poll = Some(self.deferred_poll.map_or(x, |d| d.max(x)));
            }
        }
        self.check_deferred_poll(now);
    }

    fn check_deferred_poll(&mut self, now: Instant) {
        if let Some(x) = self.deferred_poll {
            if x < self.rx_highest_status || x >= self.rx_next + self.p.window() {
                self.deferred_poll = None;
                self.trigger_status(now);
            }
        }
    }

    fn trigger_status(&mut self, _now: Instant) {
        self.status_triggered = true;
    }

    /// The STATUS PDU to send in the uplink now, if one is triggered and
    /// t-StatusProhibit is not running (§5.3.4). Starts t-StatusProhibit.
    ///
    /// Asked after every PDU received, and nearly always with nothing
    /// triggered: that answer stays inline, the STATUS is built out of line.
    #[inline]
    pub fn poll_status(&mut self, now: Instant) -> Option<StatusPdu> {
        if self.p.mode != RlcMode::Am || !self.status_triggered {
            return None;
        }
        self.build_status(now)
    }

    /// [`RlcRx::poll_status`] with a STATUS triggered.
    #[inline(never)]
    fn build_status(&mut self, now: Instant) -> Option<StatusPdu> {
        if self.t_status_prohibit.is_some_and(|t| now < t) {
            return None;
        }
        self.status_triggered = false;
        self.t_status_prohibit =
            (!self.p.t_status_prohibit.is_zero()).then(|| now + self.p.t_status_prohibit);
        let mut nacks = Vec::new();
        for sn in self.rx_next..self.rx_highest_status {
            match self.buf.get(sn) {
                Some(e) if e.delivered => {}
                Some(e) if !e.ranges.v.is_empty() => {
                    let mut at = 0;
                    for &(a, b) in &e.ranges.v {
                        if a > at {
                            nacks.push(Nack {
                                sn,
                                so: Some(SoRange {
                                    start: at,
                                    end: Some(a),
                                }),
                            });
                        }
                        at = b;
                    }
                    if e.total != Some(at) {
                        nacks.push(Nack {
                            sn,
                            so: Some(SoRange {
                                start: at,
                                end: None,
                            }),
                        });
                    }
                }
                _ => nacks.push(Nack { sn, so: None }),
            }
        }
        self.stats.status_pdus += 1;
        Some(StatusPdu {
            ack_sn: self.rx_highest_status,
            nacks,
            sn_length: self.p.sn_length,
        })
    }

    /// Earliest time a timer expires or a triggered STATUS may be sent.
    /// A wakeup at `Instant::ZERO` means "as soon as possible" (a STATUS is
    /// ready, or window-discarded UM SDUs wait to be reported).
    pub fn next_wakeup(&self) -> Option<Instant> {
        Instant::earliest(self.next_timer(), self.status_at())
    }

    /// [`RlcRx::next_wakeup`] without the STATUS: when t-Reassembly
    /// expires (or `Instant::ZERO` while discarded UM SDUs wait to be
    /// reported).
    pub fn next_timer(&self) -> Option<Instant> {
        if !self.pending_lost.is_empty() {
            return Some(Instant::ZERO);
        }
        self.t_reassembly
    }

    /// When the triggered STATUS may be built: `Instant::ZERO` if now,
    /// else when t-StatusProhibit expires; `None` if none is triggered.
    /// A UE that must ask for an uplink grant asks once this time has come
    /// and calls [`RlcRx::poll_status`] at the grant: §5.3.4 builds the
    /// STATUS PDU at the transmission opportunity and starts
    /// t-StatusProhibit when it is submitted to the lower layer.
    pub fn status_at(&self) -> Option<Instant> {
        (self.p.mode == RlcMode::Am && self.status_triggered)
            .then(|| self.t_status_prohibit.unwrap_or(Instant::ZERO))
    }

    /// Runs expired timers. UM: SDUs discarded by t-Reassembly are appended
    /// to `lost` (count them as `DropReason::AirLoss`).
    pub fn on_timer(&mut self, now: Instant, lost: &mut Vec<Packet>) {
        lost.append(&mut self.pending_lost);
        if self.t_status_prohibit.is_some_and(|t| now >= t) {
            self.t_status_prohibit = None;
        }
        let Some(t) = self.t_reassembly else { return };
        if now < t {
            return;
        }
        self.t_reassembly = None;
        match self.p.mode {
            RlcMode::Um => {
                // §5.2.2.2.4.
                self.rx_next = self.first_missing(self.timer_trigger);
                self.discard_below(self.rx_next, lost);
                if self.needs_timer(self.rx_next) {
                    self.t_reassembly = Some(now + self.p.t_reassembly);
                    self.timer_trigger = self.rx_next_highest;
                }
            }
            RlcMode::Am => {
                // §5.2.3.2.4.
                self.rx_highest_status = self.first_missing(self.timer_trigger);
                self.trigger_status(now);
                if self.needs_timer(self.rx_highest_status) {
                    self.t_reassembly = Some(now + self.p.t_reassembly);
                    self.timer_trigger = self.rx_next_highest;
                }
                self.check_deferred_poll(now);
            }
        }
    }
}
