//! The four plug-in stages as tcran-tc stages: each calls its C table and
//! checks every answer before acting on it (see `abi` for the fallback of
//! each bad answer). Errors are counted per stage kind in the instance's
//! `PluginErrors`.
#![allow(unsafe_code)] // Calls the plug-in's C functions.

use super::abi::*;
use super::{packet_info, Instance};
use std::collections::BTreeSet;
use std::ffi::c_void;
use tcran_core::{DropReason, Duration, Instant, MarkReason, Packet, QueueId};
use tcran_tc::config::MAX_QUEUE_ID;
use tcran_tc::plugin::PluginStage;
use tcran_tc::queue::PacketFifo;
use tcran_tc::stage::{
    AqmStats, Blocked, Classifier, Events, LowerLayerReport, LowerState, Pacer, PacerStats, Queue,
    QueueAttrs, QueueView, Scheduler,
};

// SAFETY (for the four `unsafe impl Send` below): a stage holds a copy of
// its ops table (function pointers and the `name` pointer, never used after
// validation) and its `Instance`, which is `Send` by the plug-in contract.

/// A queue id a plug-in returned, if it is one.
fn queue_id(v: i32) -> Option<QueueId> {
    u16::try_from(v)
        .ok()
        .filter(|q| *q <= MAX_QUEUE_ID)
        .map(QueueId)
}

// ---------------------------------------------------------------- classifier

#[derive(Debug)]
pub(crate) struct PluginClassifier {
    ops: tcran_classifier_ops,
    inst: Instance,
}

unsafe impl Send for PluginClassifier {}

impl PluginClassifier {
    pub(crate) fn new(ops: tcran_classifier_ops, inst: Instance) -> Self {
        PluginClassifier { ops, inst }
    }
}

impl Classifier for PluginClassifier {
    fn classify(&mut self, packet: &Packet) -> Option<QueueId> {
        let classify = self.ops.classify.expect("checked when the table was read");
        let info = packet_info(packet);
        // SAFETY: the plug-in's function with its own state; `info` lives
        // through the call.
        let v = unsafe { classify(self.inst.state, &info) };
        if v == TCRAN_NO_QUEUE {
            return None;
        }
        let q = queue_id(v);
        if q.is_none() {
            self.inst.errors.count(PluginStage::Classifier);
        }
        q
    }
}

// --------------------------------------------------------------------- queue

#[derive(Debug)]
pub(crate) struct PluginQueue {
    ops: tcran_queue_ops,
    inst: Instance,
    fifo: PacketFifo,
}

unsafe impl Send for PluginQueue {}

impl PluginQueue {
    pub(crate) fn new(ops: tcran_queue_ops, inst: Instance) -> Self {
        PluginQueue {
            ops,
            inst,
            fifo: PacketFifo::default(),
        }
    }
    fn backlog(&self) -> tcran_backlog {
        tcran_backlog {
            packets: self.fifo.len() as u64,
            bytes: self.fifo.bytes(),
        }
    }
}

impl Queue for PluginQueue {
    fn enqueue(&mut self, packet: Packet, now: Instant, ev: &mut Events) {
        let verdict = match self.ops.enqueue {
            None => TCRAN_AQM_PASS,
            Some(enqueue) => {
                let (info, backlog) = (packet_info(&packet), self.backlog());
                // SAFETY: as in `classify`.
                unsafe { enqueue(self.inst.state, &info, &backlog, now.as_nanos()) }
            }
        };
        match verdict {
            TCRAN_AQM_DROP => ev.drop(packet, DropReason::Plugin),
            TCRAN_AQM_MARK => {
                if let Some(p) = ev.signal(packet, true, MarkReason::Plugin, DropReason::Plugin) {
                    self.fifo.push_back(p);
                }
            }
            v => {
                if v != TCRAN_AQM_PASS {
                    self.inst.errors.count(PluginStage::Queue);
                }
                self.fifo.push_back(packet);
            }
        }
    }

    fn dequeue(&mut self, now: Instant, ev: &mut Events) -> Option<Packet> {
        let Some(dequeue) = self.ops.dequeue else {
            return self.fifo.pop_front();
        };
        loop {
            let head = self.fifo.front()?;
            let (info, backlog) = (packet_info(head), self.backlog());
            // SAFETY: as in `classify`.
            let verdict = unsafe { dequeue(self.inst.state, &info, &backlog, now.as_nanos()) };
            let packet = self.fifo.pop_front().expect("head exists");
            match verdict {
                TCRAN_AQM_DROP => ev.drop(packet, DropReason::Plugin),
                TCRAN_AQM_MARK => {
                    let kept = ev.signal(packet, true, MarkReason::Plugin, DropReason::Plugin);
                    if kept.is_some() {
                        return kept;
                    }
                }
                v => {
                    if v != TCRAN_AQM_PASS {
                        self.inst.errors.count(PluginStage::Queue);
                    }
                    return Some(packet);
                }
            }
        }
    }

    fn packets(&self) -> usize {
        self.fifo.len()
    }
    fn bytes(&self) -> u64 {
        self.fifo.bytes()
    }
    fn oldest_enqueued_at(&self) -> Option<Instant> {
        self.fifo.front().map(|p| p.enqueued_at)
    }
    fn pop_oldest(&mut self) -> Option<Packet> {
        self.fifo.pop_front()
    }
    fn pop_newest(&mut self) -> Option<Packet> {
        self.fifo.pop_back()
    }
    fn push_raw(&mut self, packet: Packet) {
        self.fifo.push_back(packet);
    }
    fn for_each_packet(&self, f: &mut dyn FnMut(&Packet)) {
        self.fifo.iter().for_each(f);
    }
    fn aqm_stats(&self) -> AqmStats {
        let probability = self.ops.probability.and_then(|p| {
            // SAFETY: as in `classify`.
            let v = unsafe { p(self.inst.state) };
            if v.is_finite() && v >= 0.0 {
                Some(v)
            } else {
                // A negative value means "none"; NaN and +inf are errors.
                if v.is_nan() || v == f64::INFINITY {
                    self.inst.errors.count(PluginStage::Queue);
                }
                None
            }
        });
        AqmStats {
            probability,
            ..AqmStats::default()
        }
    }
}

// ----------------------------------------------------------------- scheduler

/// What the scheduler's C view functions read, on the stack of `select`.
struct ViewCtx<'a> {
    view: &'a dyn QueueView,
    blocked: &'a Blocked,
}

/// # Safety (for the four view functions)
/// `ctx` is the `ctx` of the `tcran_sched_view` passed to `select`, used
/// during that call, as the ABI says.
unsafe fn view_ctx<'a>(ctx: *const c_void) -> &'a ViewCtx<'a> {
    // SAFETY: see above.
    unsafe { &*ctx.cast::<ViewCtx<'a>>() }
}

unsafe extern "C" fn view_packets(ctx: *const c_void, q: u16) -> u64 {
    // SAFETY: see `view_ctx`.
    unsafe { view_ctx(ctx) }.view.packets(QueueId(q)) as u64
}
unsafe extern "C" fn view_bytes(ctx: *const c_void, q: u16) -> u64 {
    // SAFETY: see `view_ctx`.
    unsafe { view_ctx(ctx) }.view.bytes(QueueId(q))
}
unsafe extern "C" fn view_head(ctx: *const c_void, q: u16) -> u64 {
    // SAFETY: see `view_ctx`.
    let v = unsafe { view_ctx(ctx) };
    v.view
        .oldest_enqueued_at(QueueId(q))
        .map_or(crate::types::TCRAN_NO_WAKEUP, Instant::as_nanos)
}
unsafe extern "C" fn view_blocked(ctx: *const c_void, q: u16) -> u8 {
    // SAFETY: see `view_ctx`.
    unsafe { view_ctx(ctx) }.blocked.contains(QueueId(q)) as u8
}

#[derive(Debug)]
pub(crate) struct PluginScheduler {
    ops: tcran_scheduler_ops,
    inst: Instance,
    /// The queues that exist, for the fallback choice.
    queues: BTreeSet<QueueId>,
}

unsafe impl Send for PluginScheduler {}

impl PluginScheduler {
    pub(crate) fn new(ops: tcran_scheduler_ops, inst: Instance) -> Self {
        PluginScheduler {
            ops,
            inst,
            queues: BTreeSet::new(),
        }
    }
}

impl Scheduler for PluginScheduler {
    fn on_queue_added(&mut self, q: QueueId, attrs: QueueAttrs) {
        self.queues.insert(q);
        if let Some(f) = self.ops.queue_added {
            // SAFETY: as in `classify`.
            unsafe { f(self.inst.state, q.0, attrs.priority, attrs.weight) }
        }
    }
    fn on_queue_removed(&mut self, q: QueueId) {
        self.queues.remove(&q);
        if let Some(f) = self.ops.queue_removed {
            // SAFETY: as in `classify`.
            unsafe { f(self.inst.state, q.0) }
        }
    }
    fn on_backlogged(&mut self, q: QueueId, _: &dyn QueueView) {
        if let Some(f) = self.ops.backlogged {
            // SAFETY: as in `classify`.
            unsafe { f(self.inst.state, q.0) }
        }
    }
    fn select(&mut self, now: Instant, view: &dyn QueueView, blocked: &Blocked) -> Option<QueueId> {
        let select = self.ops.select.expect("checked when the table was read");
        let ctx = ViewCtx { view, blocked };
        let c_view = tcran_sched_view {
            ctx: (&ctx as *const ViewCtx<'_>).cast(),
            packets: view_packets,
            bytes: view_bytes,
            head_enqueued_at_ns: view_head,
            blocked: view_blocked,
        };
        // SAFETY: as in `classify`; `ctx` outlives the call.
        let v = unsafe { select(self.inst.state, now.as_nanos(), &c_view) };
        let eligible = |q: &QueueId| view.packets(*q) > 0 && !blocked.contains(*q);
        if v == TCRAN_NO_QUEUE {
            return None;
        }
        match queue_id(v).filter(|q| self.queues.contains(q) && eligible(q)) {
            Some(q) => Some(q),
            None => {
                self.inst.errors.count(PluginStage::Scheduler);
                self.queues.iter().copied().find(eligible)
            }
        }
    }
    fn on_sent(&mut self, q: QueueId, len: u32, _: &dyn QueueView) {
        if let Some(f) = self.ops.sent {
            // SAFETY: as in `classify`.
            unsafe { f(self.inst.state, q.0, len) }
        }
    }
    fn on_empty(&mut self, q: QueueId, _: &dyn QueueView) {
        if let Some(f) = self.ops.empty {
            // SAFETY: as in `classify`.
            unsafe { f(self.inst.state, q.0) }
        }
    }
}

// --------------------------------------------------------------------- pacer

#[derive(Debug)]
pub(crate) struct PluginPacer {
    ops: tcran_pacer_ops,
    inst: Instance,
    refused: u64,
}

unsafe impl Send for PluginPacer {}

impl PluginPacer {
    pub(crate) fn new(ops: tcran_pacer_ops, inst: Instance) -> Self {
        PluginPacer {
            ops,
            inst,
            refused: 0,
        }
    }
}

impl Pacer for PluginPacer {
    fn admits(&mut self, len: u32, now: Instant, lower: &LowerState) -> bool {
        let admits = self.ops.admits.expect("checked when the table was read");
        // SAFETY: as in `classify`.
        let v = unsafe {
            admits(
                self.inst.state,
                len,
                now.as_nanos(),
                lower.bytes,
                lower.sdus,
            )
        };
        match v {
            TCRAN_PACER_ADMIT => true,
            TCRAN_PACER_HOLD => {
                self.refused += 1;
                false
            }
            _ => {
                self.inst.errors.count(PluginStage::Pacer);
                true
            }
        }
    }
    fn on_forwarded(&mut self, len: u32, now: Instant) {
        if let Some(f) = self.ops.forwarded {
            // SAFETY: as in `classify`.
            unsafe { f(self.inst.state, len, now.as_nanos()) }
        }
    }
    fn on_report(&mut self, r: &LowerLayerReport, now: Instant) {
        if let Some(f) = self.ops.report {
            let report = crate::types::tcran_rlc_report::from(r);
            // SAFETY: as in `classify`.
            unsafe { f(self.inst.state, &report, now.as_nanos()) }
        }
    }
    fn on_sdu_departed(&mut self, sojourn: Duration, now: Instant) {
        if let Some(f) = self.ops.sdu_departed {
            // SAFETY: as in `classify`.
            unsafe { f(self.inst.state, sojourn.as_nanos(), now.as_nanos()) }
        }
    }
    fn on_status_pdu(&mut self, now: Instant) {
        if let Some(f) = self.ops.status_pdu {
            // SAFETY: as in `classify`.
            unsafe { f(self.inst.state, now.as_nanos()) }
        }
    }
    fn next_wakeup(&self, now: Instant) -> Option<Instant> {
        let f = self.ops.next_wakeup?;
        // SAFETY: as in `classify`.
        let t = unsafe { f(self.inst.state, now.as_nanos()) };
        if t == crate::types::TCRAN_NO_WAKEUP {
            None
        } else if t <= now.as_nanos() {
            self.inst.errors.count(PluginStage::Pacer);
            None
        } else {
            Some(Instant::from_nanos(t))
        }
    }
    fn stats(&self) -> PacerStats {
        let mut s = tcran_pacer_stats {
            limit: -1.0,
            ..Default::default()
        };
        if let Some(f) = self.ops.stats {
            // SAFETY: as in `classify`; `s` is writable.
            unsafe { f(self.inst.state, &mut s) }
        }
        let finite = |v: f64| {
            if v.is_finite() {
                v
            } else {
                self.inst.errors.count(PluginStage::Pacer);
                0.0
            }
        };
        let (bandwidth_bps, allowance_bytes, limit) = (
            finite(s.bandwidth_bps),
            finite(s.allowance_bytes),
            finite(s.limit),
        );
        PacerStats {
            bandwidth_bps,
            allowance_bytes,
            limit: (limit >= 0.0).then_some(limit),
            refused: self.refused,
        }
    }
}

impl std::fmt::Debug for ViewCtx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ViewCtx")
    }
}
