//! The per-bearer pipeline: `push` runs classifier -> policer -> queue;
//! `pull` runs scheduler -> shaper -> pacer and yields the next packet for
//! PDCP/RLC.
//!
//! Contract:
//! - Conservation: packets (and bytes) pushed = pulled + dropped + queued,
//!   always, including across live reconfiguration ([`Pipeline::totals`]).
//! - Every drop is handed back to the caller with its reason
//!   ([`Pipeline::drain_dropped`]) and counted per queue.
//! - A packet the scheduler picked but the shaper or pacer refused stays at
//!   the head of its queue without running the AQM again (Linux's
//!   `qdisc_peek_dequeued` stash), so a refusal never reorders or loses it.
//! - No clock: `now` is a parameter. No allocation per packet once buffers
//!   have grown to the working set.

use crate::classify::AnyClassifier;
use crate::config::{Limits, PipelineConfig, QueueConfig};
use crate::control::Control;
use crate::pacer::AnyPacer;
use crate::plugin::PluginResolver;
use crate::policer::AnyPolicer;
use crate::queue::AnyQueue;
use crate::sched::AnyScheduler;
use crate::shaper::AnyShaper;
use crate::stage::*;
use crate::stats::{ClassifierStats, PipelineStats, QueueCounters, QueueStats, Totals};
use std::collections::BTreeSet;
use std::sync::Arc;
use tcran_core::{ConfigError, DropReason, Dropped, Duration, Instant, Packet, QueueId};

/// Where an arriving packet ended up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushOutcome {
    Enqueued(QueueId),
    /// Enqueued with a CE mark (by the policer or the AQM at enqueue).
    Marked(QueueId),
    Dropped(DropReason),
}

#[derive(Debug)]
pub(crate) struct Slot {
    pub(crate) config: QueueConfig,
    pub(crate) queue: AnyQueue,
    /// Head packet already dequeued (AQM applied) but refused downstream.
    pub(crate) stash: Option<Packet>,
    pub(crate) policer: Option<AnyPolicer>,
    pub(crate) shaper: Option<AnyShaper>,
    pub(crate) limits: Limits,
    pub(crate) attrs: QueueAttrs,
    pub(crate) counters: QueueCounters,
}

impl Slot {
    fn packets(&self) -> usize {
        self.queue.packets() + self.stash.is_some() as usize
    }
    fn bytes(&self) -> u64 {
        self.queue.bytes() + self.stash.as_ref().map_or(0, |p| p.len as u64)
    }
    fn oldest(&self) -> Option<Instant> {
        match (&self.stash, self.queue.oldest_enqueued_at()) {
            (Some(p), Some(t)) => Some(p.enqueued_at.min(t)),
            (Some(p), None) => Some(p.enqueued_at),
            (None, t) => t,
        }
    }
    /// Oldest packet, the stash first (it left the queue's head earliest).
    fn pop_oldest(&mut self) -> Option<Packet> {
        self.stash.take().or_else(|| self.queue.pop_oldest())
    }
    fn pop_newest(&mut self) -> Option<Packet> {
        self.queue.pop_newest().or_else(|| self.stash.take())
    }
}

/// Read-only view of the queue table for schedulers.
struct Slots<'a>(&'a [Option<Slot>]);

impl QueueView for Slots<'_> {
    fn packets(&self, q: QueueId) -> usize {
        self.0
            .get(q.index())
            .and_then(Option::as_ref)
            .map_or(0, Slot::packets)
    }
    fn bytes(&self, q: QueueId) -> u64 {
        self.0
            .get(q.index())
            .and_then(Option::as_ref)
            .map_or(0, Slot::bytes)
    }
    fn oldest_enqueued_at(&self, q: QueueId) -> Option<Instant> {
        self.0
            .get(q.index())
            .and_then(Option::as_ref)
            .and_then(Slot::oldest)
    }
    fn attrs(&self, q: QueueId) -> QueueAttrs {
        self.0
            .get(q.index())
            .and_then(Option::as_ref)
            .map_or_else(QueueAttrs::default, |s| s.attrs)
    }
}

/// One TC pipeline (one per UE data radio bearer).
#[derive(Debug)]
pub struct Pipeline {
    config: PipelineConfig,
    classifier: AnyClassifier,
    slots: Vec<Option<Slot>>,
    /// Ids of existing queues, ordered (for deterministic iteration).
    ids: BTreeSet<QueueId>,
    default_queue: QueueId,
    scheduler: AnyScheduler,
    pacer: AnyPacer,
    lower: LowerState,
    limit_packets: Option<u32>,
    queued_packets: usize,
    queued_bytes: u64,
    totals: Totals,
    /// CE marks given so far, by any stage.
    marked_packets: u64,
    classifier_stats: ClassifierStats,
    ev: Events,
    /// Builds `kind = "plugin"` stages, at creation and on live changes.
    plugins: Option<Arc<dyn PluginResolver>>,
}

impl PipelineConfig {
    /// Validates every stage and builds the pipeline.
    pub fn build(&self) -> Result<Pipeline, ConfigError> {
        Pipeline::new(self.clone())
    }

    /// Like [`PipelineConfig::build`], with `kind = "plugin"` stages
    /// resolved by `plugins`, now and on every later [`Pipeline::apply`].
    pub fn build_with_plugins(
        &self,
        plugins: Arc<dyn PluginResolver>,
    ) -> Result<Pipeline, ConfigError> {
        Pipeline::with_plugins(self.clone(), Some(plugins))
    }
}

impl Pipeline {
    pub fn new(config: PipelineConfig) -> Result<Pipeline, ConfigError> {
        Pipeline::with_plugins(config, None)
    }

    /// A new pipeline built from `config` with this one's plug-in
    /// resolver (the rehearsal of [`Pipeline::apply_change`]).
    pub(crate) fn sibling(&self, config: PipelineConfig) -> Result<Pipeline, ConfigError> {
        Pipeline::with_plugins(config, self.plugins.clone())
    }

    /// A pipeline whose plug-in stages are resolved by `plugins`.
    pub fn with_plugins(
        config: PipelineConfig,
        plugins: Option<Arc<dyn PluginResolver>>,
    ) -> Result<Pipeline, ConfigError> {
        if config.queues.is_empty() {
            return Err(ConfigError::new(
                "queues",
                "[]",
                "at least one queue is needed",
            ));
        }
        let default_queue = config.default_queue_id().expect("non-empty");
        let resolver = plugins.as_deref();
        let classifier = config
            .classifier
            .build_with(resolver)
            .map_err(|e| e.within("classifier"))?;
        let scheduler = config
            .scheduler
            .build_with(resolver)
            .map_err(|e| e.within("scheduler"))?;
        let pacer = config
            .pacer
            .build_with(resolver)
            .map_err(|e| e.within("pacer"))?;
        if let Some(l) = config.limit_packets {
            tcran_core::config::check_range("limit_packets", l, 1, 10_000_000)?;
        }
        let mut p = Pipeline {
            classifier,
            slots: Vec::new(),
            ids: BTreeSet::new(),
            default_queue,
            scheduler,
            pacer,
            lower: LowerState::default(),
            limit_packets: config.limit_packets,
            queued_packets: 0,
            queued_bytes: 0,
            totals: Totals::default(),
            marked_packets: 0,
            classifier_stats: ClassifierStats::default(),
            ev: Events {
                dropped: Vec::with_capacity(256),
                ..Events::default()
            },
            config: PipelineConfig {
                queues: Vec::new(),
                ..config.clone()
            },
            plugins,
        };
        for (i, q) in config.queues.iter().enumerate() {
            p.add_queue(q.clone())
                .map_err(|e| e.within(format!("queues[{i}]")))?;
        }
        if !p.ids.contains(&default_queue) {
            return Err(ConfigError::new(
                "default_queue",
                default_queue.0,
                format!("must name a configured queue (configured: {})", p.id_list()),
            ));
        }
        p.check_references(&config.queues)?;
        Ok(p)
    }

    fn id_list(&self) -> String {
        let ids: Vec<String> = self.ids.iter().map(|q| q.0.to_string()).collect();
        ids.join(", ")
    }

    /// A delay-based scheduler's boost list must name existing queues.
    fn check_boost(&self, c: &crate::sched::SchedulerConfig) -> Result<(), ConfigError> {
        if let crate::sched::SchedulerConfig::DelayBased {
            boost: Some(boost), ..
        } = c
        {
            if let Some(q) = boost.iter().find(|q| !self.ids.contains(q)) {
                return Err(ConfigError::new(
                    "scheduler.boost",
                    q.0,
                    format!(
                        "must name a configured queue (configured: {})",
                        self.id_list()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Classifier targets, DBS boost lists and policer redirects must name
    /// existing queues.
    fn check_references(&self, queues: &[QueueConfig]) -> Result<(), ConfigError> {
        for q in self.config.classifier.referenced_queues() {
            if !self.ids.contains(&q) {
                return Err(ConfigError::new(
                    "classifier",
                    format!("queue {}", q.0),
                    format!(
                        "refers to a queue that does not exist (configured: {})",
                        self.id_list()
                    ),
                ));
            }
        }
        self.check_boost(&self.config.scheduler)?;
        for (i, qc) in queues.iter().enumerate() {
            if let Some(target) = qc.policer.as_ref().and_then(|p| p.redirect_target()) {
                if !self.ids.contains(&target) {
                    return Err(ConfigError::new(
                        format!("queues[{i}].policer.redirect"),
                        target.0,
                        format!(
                            "must name a configured queue (configured: {})",
                            self.id_list()
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    // ------------------------------------------------------------ data path

    /// Ingress: classifier -> policer -> queue.
    pub fn push(&mut self, mut packet: Packet, now: Instant) -> PushOutcome {
        let len = packet.len;
        // The stages acting at push only ever mark the packet they are
        // given: a mark counted during this call is this packet's.
        let marks = self.marked_packets;
        let mut q = self.arrive(&mut packet, now);

        // Policer: one per queue (TC-RAN: lifetime tied to its queue).
        let slot = self.slots[q.index()].as_mut().expect("exists");
        if let Some(policer) = slot.policer.as_mut() {
            match policer.police(len, now) {
                PoliceVerdict::Pass => {}
                PoliceVerdict::Drop => return self.drop_at_ingress(q, packet, DropReason::Policer),
                PoliceVerdict::Mark => {
                    if !self.ev.mark(&mut packet, tcran_core::MarkReason::Policer) {
                        return self.drop_at_ingress(q, packet, DropReason::Policer);
                    }
                    slot.counters.marks.add(tcran_core::MarkReason::Policer, 1);
                    self.marked_packets += 1;
                    self.ev.marks = Default::default();
                }
                PoliceVerdict::Redirect(to) => {
                    slot.counters.redirected_out += 1;
                    if self.exists(to) {
                        q = to;
                    }
                }
            }
        }

        let slot = self.slots[q.index()].as_mut().expect("exists");
        if !slot.limits.admits(slot.packets(), slot.bytes(), len) {
            return self.drop_at_ingress(q, packet, DropReason::QueueFull);
        }
        let (p0, b0) = (slot.packets(), slot.bytes());
        slot.queue.enqueue(packet, now, &mut self.ev);
        let became_backlogged = p0 == 0 && slot.packets() > 0;
        let accepted = self.account(q, p0, b0, 1, len as u64);
        if became_backlogged {
            self.scheduler.on_backlogged(q, &Slots(&self.slots));
        }
        self.enforce_total_limit();
        if !accepted {
            PushOutcome::Dropped(
                self.ev
                    .dropped
                    .last()
                    .map_or(DropReason::QueueFull, |d| d.reason),
            )
        } else if self.marked_packets > marks {
            PushOutcome::Marked(q)
        } else {
            PushOutcome::Enqueued(q)
        }
    }

    /// A packet enters the pipeline at `now`: counted in, stamped, and
    /// classified; returns the classifier's queue.
    fn arrive(&mut self, packet: &mut Packet, now: Instant) -> QueueId {
        self.totals.in_packets += 1;
        self.totals.in_bytes += u64::from(packet.len);
        packet.enqueued_at = now;
        packet.stamps.tc_in = tcran_core::Stamp::at(now);
        self.classify(packet)
    }

    /// The classifier's queue for `packet` (the default queue for a
    /// malformed packet or one the classifier leaves or sends nowhere),
    /// counted in the classifier's statistics.
    fn classify(&mut self, packet: &Packet) -> QueueId {
        if packet.malformed {
            self.classifier_stats.malformed += 1;
            return self.default_queue;
        }
        match self.classifier.classify(packet) {
            Some(q) if self.exists(q) => {
                self.classifier_stats.classified += 1;
                q
            }
            Some(_) => {
                self.classifier_stats.missing_queue += 1;
                self.default_queue
            }
            None => {
                self.classifier_stats.defaulted += 1;
                self.default_queue
            }
        }
    }

    /// `push` and the `pull` right after it, without the queue, for the
    /// pipeline most bearers run (3GPP's baseline: one plain FIFO, round
    /// robin, no pacer) when it is empty: then the arriving packet is
    /// the one that pull returns, and nothing else can happen in between.
    /// Returns true when `packet` went through, stamped and counted
    /// exactly as `push` then `pull` would have (the caller now holds it as
    /// pulled, and a further `pull` would return `None`); false when
    /// anything else may happen (another stage, a packet already queued,
    /// a limit refusing it): nothing was done, and the packet must take
    /// `push`.
    ///
    /// Why the short cut is exact: with one queue every classification
    /// lands in it; a FIFO neither drops nor marks; a queue admitting the
    /// packet into an empty pipeline cannot exceed the total limit (at
    /// least 1); the `none` pacer admits everything and no shaper can
    /// refuse, so the pull forwards it at once with a zero sojourn. Round
    /// robin's only state is its list of backlogged queues, which with one
    /// queue ends empty after the packet is sent, as `on_sent` leaves it
    /// here. tests/integration/pipeline_properties.rs runs both ways side
    /// by side.
    pub fn pass_through(&mut self, packet: &mut Packet, now: Instant) -> bool {
        let q = self.default_queue;
        if self.queued_packets != 0
            || self.ids.len() != 1
            || !matches!(self.pacer, AnyPacer::None)
            || !matches!(self.scheduler, AnyScheduler::RoundRobin(_))
        {
            return false;
        }
        let slot = self.slots[q.index()]
            .as_ref()
            .expect("the default queue exists");
        if !matches!(slot.queue, AnyQueue::Fifo(_))
            || slot.policer.is_some()
            || slot.shaper.is_some()
            || !slot.limits.admits(0, 0, packet.len)
        {
            return false;
        }
        // push: in, stamped, classified, offered to the queue.
        let len = packet.len;
        let classified = self.arrive(packet, now);
        debug_assert_eq!(classified, q, "one queue takes everything");
        let slot = self.slots[q.index()].as_mut().expect("exists");
        slot.counters.offered_packets += 1;
        slot.counters.offered_bytes += u64::from(len);
        self.queued_packets += 1;
        self.queued_bytes += u64::from(len);
        // pull: forwarded at once.
        self.forwarded(q, len, packet.enqueued_at, now);
        true
    }

    fn drop_at_ingress(&mut self, q: QueueId, packet: Packet, reason: DropReason) -> PushOutcome {
        let slot = self.slots[q.index()].as_mut().expect("exists");
        slot.counters.offered_packets += 1;
        slot.counters.offered_bytes += packet.len as u64;
        slot.counters.drops.add(reason, 1);
        self.totals.dropped_packets += 1;
        self.totals.dropped_bytes += packet.len as u64;
        self.ev.drop(packet, reason);
        self.ev.drop_counts = Default::default();
        PushOutcome::Dropped(reason)
    }

    /// Books a queue operation: `offered` packets/bytes entered queue `q`,
    /// which held `p0`/`b0` before; the events since then were its drops and
    /// marks. Returns whether the offered packet is still held.
    fn account(
        &mut self,
        q: QueueId,
        p0: usize,
        b0: u64,
        offered: u64,
        offered_bytes: u64,
    ) -> bool {
        // Most operations neither drop nor mark: skip the per-reason sums.
        let dropped = self.ev.drop_counts.total();
        let quiet = dropped == 0 && self.ev.marks.total() == 0;
        let slot = self.slots[q.index()].as_mut().expect("exists");
        slot.counters.offered_packets += offered;
        slot.counters.offered_bytes += offered_bytes;
        if !quiet {
            let (drops, marks) = self.ev.take_counts();
            self.marked_packets += marks.total();
            slot.counters.drops.add_all(&drops);
            slot.counters.marks.add_all(&marks);
        }
        let (p1, b1) = (slot.packets(), slot.bytes());
        let dropped_bytes = (b0 + offered_bytes).saturating_sub(b1);
        self.totals.dropped_packets += dropped;
        self.totals.dropped_bytes += dropped_bytes;
        self.queued_packets = self.queued_packets + p1 - p0;
        self.queued_bytes = self.queued_bytes + b1 - b0;
        p1 > p0
    }

    /// The queue with the largest `size`, the lowest id on ties. Linear in
    /// the number of queues, like Linux `fq_codel_drop`; it runs only when
    /// the total limit is exceeded.
    fn fattest_queue(&self, size: impl Fn(&Slot) -> u64) -> QueueId {
        self.ids
            .iter()
            .copied()
            .max_by_key(|q| {
                (
                    self.slots[q.index()].as_ref().map_or(0, &size),
                    std::cmp::Reverse(*q),
                )
            })
            .expect("a queue holds packets")
    }

    /// fq_codel's overload rule: over the total limit, drop from the head of
    /// the queue with the largest byte backlog until half of it is gone or
    /// 64 packets were dropped (RFC 8290 sec. 4.1; Linux `fq_codel_drop`).
    fn enforce_total_limit(&mut self) {
        let Some(limit) = self.limit_packets else {
            return;
        };
        while self.queued_packets > limit as usize {
            let fattest = self.fattest_queue(Slot::bytes);
            let slot = self.slots[fattest.index()].as_mut().expect("exists");
            let threshold = slot.bytes() / 2;
            let mut dropped_bytes = 0;
            let mut n = 0;
            while n < 64 && dropped_bytes < threshold {
                let Some(p) = slot.pop_oldest() else { break };
                dropped_bytes += p.len as u64;
                n += 1;
                slot.counters.drops.add(DropReason::FatFlow, 1);
                self.ev.drop(p, DropReason::FatFlow);
            }
            self.ev.drop_counts = Default::default();
            if n == 0 {
                break;
            }
            self.queued_packets -= n as usize;
            self.queued_bytes -= dropped_bytes;
            self.totals.dropped_packets += n;
            self.totals.dropped_bytes += dropped_bytes;
        }
    }

    /// Egress: scheduler -> shaper -> pacer. Returns the next packet for
    /// PDCP/RLC, or `None` when nothing may (or can) go now.
    pub fn pull(&mut self, now: Instant) -> Option<Packet> {
        let mut blocked = Blocked::default();
        // Each round either forwards, empties a queue or blocks a queue, so
        // this bound is never reached by a correct scheduler; it turns a
        // scheduler bug into a stall instead of a hang.
        let mut budget = 2 * self.ids.len() + Blocked::CAP + 8;
        loop {
            budget = budget.checked_sub(1)?;
            let q = self.scheduler.select(now, &Slots(&self.slots), &blocked)?;
            let Some(slot) = self.slots.get_mut(q.index()).and_then(Option::as_mut) else {
                self.scheduler.on_queue_removed(q);
                continue;
            };
            if slot.stash.is_none() {
                let (p0, b0) = (slot.packets(), slot.bytes());
                slot.stash = slot.queue.dequeue(now, &mut self.ev);
                self.account(q, p0, b0, 0, 0);
                let slot = self.slots[q.index()].as_mut().expect("exists");
                if slot.stash.is_none() {
                    self.scheduler.on_empty(q, &Slots(&self.slots));
                    continue;
                }
            }
            let slot = self.slots[q.index()].as_mut().expect("exists");
            let len = slot.stash.as_ref().expect("stashed").len;
            if let Some(shaper) = slot.shaper.as_mut() {
                if !shaper.admits(len, now) {
                    if !blocked.insert(q) {
                        return None;
                    }
                    continue;
                }
            }
            if !self.pacer.admits(len, now, &self.lower) {
                return None;
            }
            let packet = slot.stash.take().expect("stashed");
            self.forwarded(q, len, packet.enqueued_at, now);
            return Some(packet);
        }
    }

    /// Books a packet of `len` bytes, enqueued at `enqueued_at`, that
    /// left queue `q` for the lower layers at `now` (the shaper and the
    /// pacer agreed).
    fn forwarded(&mut self, q: QueueId, len: u32, enqueued_at: Instant, now: Instant) {
        let slot = self.slots[q.index()].as_mut().expect("exists");
        if let Some(shaper) = slot.shaper.as_mut() {
            shaper.on_sent(len, now);
        }
        slot.counters.forwarded_packets += 1;
        slot.counters.forwarded_bytes += len as u64;
        let sojourn = now.saturating_since(enqueued_at);
        slot.counters.sojourn_sum += sojourn;
        slot.counters.last_sojourn = sojourn;
        self.queued_packets -= 1;
        self.queued_bytes -= len as u64;
        self.totals.out_packets += 1;
        self.totals.out_bytes += len as u64;
        self.pacer.on_forwarded(len, now);
        self.lower.bytes += len as u64;
        self.lower.sdus += 1;
        self.scheduler.on_sent(q, len, &Slots(&self.slots));
    }

    /// Packets dropped since the last call, with their reasons.
    #[inline]
    pub fn drain_dropped(&mut self) -> std::vec::Drain<'_, Dropped> {
        self.ev.dropped.drain(..)
    }

    /// Whether [`Pipeline::drain_dropped`] has packets to hand out.
    #[inline]
    pub fn has_dropped(&self) -> bool {
        !self.ev.dropped.is_empty()
    }

    // ------------------------------------------------------------ feedback

    /// The per-TTI RLC/MAC report (after the MAC pulled).
    pub fn on_report(&mut self, report: &LowerLayerReport, now: Instant) {
        self.lower = LowerState {
            bytes: report.backlog_bytes,
            sdus: report.backlog_sdus,
        };
        self.pacer.on_report(report, now);
    }

    /// Whether the pacer wants a report also for slots without downlink
    /// ([`crate::stage::Pacer::wants_every_slot`]).
    pub fn wants_every_slot(&self) -> bool {
        self.pacer.wants_every_slot()
    }

    /// An RLC SDU left the RLC buffer (fully sent in UM, acknowledged in AM).
    pub fn on_sdu_departed(&mut self, sojourn: Duration, now: Instant) {
        self.lower.sdus = self.lower.sdus.saturating_sub(1);
        self.pacer.on_sdu_departed(sojourn, now);
    }

    /// An RLC AM status PDU arrived from the UE.
    pub fn on_status_pdu(&mut self, now: Instant) {
        self.pacer.on_status_pdu(now);
    }

    /// The earliest time at which `pull` may return something it would
    /// refuse now, for callers that sleep between events. `None` = only new
    /// packets or reports can change anything.
    pub fn next_wakeup(&self, now: Instant) -> Option<Instant> {
        // Periodic AQM updates (PIE, L4S, DualQ) are not wake-ups: they
        // catch up lazily on the next packet event, exactly, and never make
        // a refused packet leave.
        let mut t = self.pacer.next_wakeup(now);
        for q in &self.ids {
            let slot = self.slots[q.index()].as_ref().expect("exists");
            // A shaper can only have refused a packet that `pull` already
            // dequeued into the stash, so only stashed heads need a wake-up.
            if let (Some(shaper), Some(head)) = (slot.shaper.as_ref(), slot.stash.as_ref()) {
                let len = head.len;
                let r = shaper.ready_at(len, now);
                if r > now {
                    t = Some(t.map_or(r, |t| t.min(r)));
                }
            }
        }
        t
    }

    // --------------------------------------------------------- inspection

    pub fn totals(&self) -> Totals {
        Totals {
            queued_packets: self.queued_packets as u64,
            queued_bytes: self.queued_bytes,
            ..self.totals
        }
    }
    /// CE marks given so far by any stage (policer, AQM at enqueue or
    /// dequeue). A mark at `push` is the arriving packet's, and `push` says
    /// so ([`PushOutcome::Marked`]).
    pub fn marked_packets(&self) -> u64 {
        self.marked_packets
    }
    pub fn queued_packets(&self) -> usize {
        self.queued_packets
    }
    pub fn queued_bytes(&self) -> u64 {
        self.queued_bytes
    }
    /// Calls `f` with every packet the queues hold (a head refused
    /// downstream included), queue by queue. Inspection only: the count
    /// is [`Pipeline::queued_packets`] when the bookkeeping is right.
    pub fn for_each_queued(&self, mut f: impl FnMut(&Packet)) {
        for slot in self.slots.iter().flatten() {
            if let Some(p) = &slot.stash {
                f(p);
            }
            slot.queue.for_each_packet(&mut f);
        }
    }
    /// When the oldest packet the queues hold was enqueued.
    pub fn oldest_enqueued_at(&self) -> Option<Instant> {
        self.slots.iter().flatten().filter_map(Slot::oldest).min()
    }
    pub fn lower_state(&self) -> LowerState {
        self.lower
    }
    pub fn default_queue(&self) -> QueueId {
        self.default_queue
    }
    pub fn queue_ids(&self) -> impl Iterator<Item = QueueId> + '_ {
        self.ids.iter().copied()
    }
    pub fn exists(&self, q: QueueId) -> bool {
        self.slots.get(q.index()).is_some_and(Option::is_some)
    }
    /// Packets and bytes held by queue `q`.
    pub fn queue_backlog(&self, q: QueueId) -> Option<(usize, u64)> {
        self.slots
            .get(q.index())
            .and_then(Option::as_ref)
            .map(|s| (s.packets(), s.bytes()))
    }
    /// The configuration as it stands after all live changes.
    pub fn config(&self) -> PipelineConfig {
        let mut c = self.config.clone();
        c.default_queue = Some(self.default_queue);
        c.queues = self.queue_configs();
        c
    }

    /// One config entry per existing queue, regrouping banks (`count`) that
    /// are still whole.
    fn queue_configs(&self) -> Vec<QueueConfig> {
        let mut out: Vec<QueueConfig> = Vec::new();
        for q in &self.ids {
            let slot = self.slots[q.index()].as_ref().expect("exists");
            let mut c = slot.config.clone();
            c.id = *q;
            c.count = 1;
            if let Some(last) = out.last_mut() {
                let next = QueueId(last.id.0 + last.count);
                let same = QueueConfig {
                    id: last.id,
                    count: last.count,
                    ..c.clone()
                } == *last;
                if next == *q && same {
                    last.count += 1;
                    continue;
                }
            }
            out.push(c);
        }
        out
    }

    /// Statistics snapshot (what the TC service model reports).
    pub fn stats(&self, now: Instant) -> PipelineStats {
        let mut out = PipelineStats {
            queues: Vec::with_capacity(self.ids.len()),
            ..PipelineStats::default()
        };
        self.stats_into(now, &mut out);
        out
    }

    /// [`Pipeline::stats`] written over `out`, reusing its allocations (the
    /// queue list and the two names): a report of many pipelines every
    /// millisecond (E2) then allocates nothing per pipeline.
    pub fn stats_into(&self, now: Instant, out: &mut PipelineStats) {
        out.queues.clear();
        out.queues.extend(self.ids.iter().map(|q| {
            let s = self.slots[q.index()].as_ref().expect("exists");
            QueueStats::new(
                *q,
                s.config.kind.kind_name(),
                s.packets(),
                s.bytes(),
                &s.counters,
            )
            .with_policer(s.policer.as_ref().map(|p| p.stats_at(now)))
            .with_shaper(s.shaper.as_ref().map(|p| p.stats_at(now)))
            .with_aqm(s.queue.aqm_stats())
        }));
        out.time_s = now.as_secs_f64();
        out.totals = self.totals();
        out.classifier.clone_from(&self.classifier_stats);
        out.scheduler.clear();
        out.scheduler.push_str(self.config.scheduler.kind_name());
        out.pacer_kind.clear();
        out.pacer_kind.push_str(self.config.pacer.kind_name());
        out.pacer = self.pacer.stats();
        out.lower = self.lower;
    }

    // ------------------------------------------------------- reconfiguration

    /// Applies one control (add / modify / delete of any stage), the step
    /// [`Pipeline::apply_change`] is made of. Nothing queued is lost
    /// silently: a deleted queue's packets move to the default queue; a
    /// lowered limit sheds the excess with reason `Reconfigured`. On error
    /// nothing changes, but cross references are not checked (a policer may
    /// be pointed at a queue that does not exist): front ends apply a
    /// [`crate::Change`], which checks them.
    pub fn apply(&mut self, control: Control, now: Instant) -> Result<(), ConfigError> {
        crate::control::apply(self, control, now)
    }

    pub(crate) fn set_classifier(
        &mut self,
        c: crate::classify::ClassifierConfig,
    ) -> Result<(), ConfigError> {
        for q in c.referenced_queues() {
            if !self.exists(q) {
                return Err(ConfigError::new(
                    "classifier",
                    format!("queue {}", q.0),
                    format!(
                        "refers to a queue that does not exist (configured: {})",
                        self.id_list()
                    ),
                ));
            }
        }
        self.classifier = c
            .build_with(self.plugins.as_deref())
            .map_err(|e| e.within("classifier"))?;
        self.config.classifier = c;
        Ok(())
    }

    pub(crate) fn set_scheduler(
        &mut self,
        c: crate::sched::SchedulerConfig,
    ) -> Result<(), ConfigError> {
        self.check_boost(&c)?;
        let mut sched = c
            .build_with(self.plugins.as_deref())
            .map_err(|e| e.within("scheduler"))?;
        let view = Slots(&self.slots);
        for q in &self.ids {
            sched.on_queue_added(*q, view.attrs(*q));
        }
        for q in &self.ids {
            if view.packets(*q) > 0 {
                sched.on_backlogged(*q, &view);
            }
        }
        self.scheduler = sched;
        self.config.scheduler = c;
        Ok(())
    }

    pub(crate) fn set_pacer(&mut self, c: crate::pacer::PacerConfig) -> Result<(), ConfigError> {
        self.pacer = c
            .build_with(self.plugins.as_deref())
            .map_err(|e| e.within("pacer"))?;
        self.config.pacer = c;
        Ok(())
    }

    pub(crate) fn set_default_queue(&mut self, q: QueueId) -> Result<(), ConfigError> {
        if !self.exists(q) {
            return Err(ConfigError::new(
                "default_queue",
                q.0,
                format!(
                    "must name a configured queue (configured: {})",
                    self.id_list()
                ),
            ));
        }
        self.default_queue = q;
        Ok(())
    }

    pub(crate) fn set_total_limit(&mut self, limit: Option<u32>) -> Result<(), ConfigError> {
        if let Some(l) = limit {
            tcran_core::config::check_range("limit_packets", l, 1, 10_000_000)?;
        }
        self.limit_packets = limit;
        self.config.limit_packets = limit;
        self.enforce_total_limit_reconfigured();
        Ok(())
    }

    /// Like the overload rule, but the reason is `Reconfigured` and the
    /// newest packets go first (they would not have been admitted).
    fn enforce_total_limit_reconfigured(&mut self) {
        let Some(limit) = self.limit_packets else {
            return;
        };
        while self.queued_packets > limit as usize {
            let fattest = self.fattest_queue(|s| s.packets() as u64);
            self.shed_newest(fattest, 1);
        }
    }

    /// Drops the `n` newest packets of `q` with reason `Reconfigured`.
    fn shed_newest(&mut self, q: QueueId, n: usize) {
        let slot = self.slots[q.index()].as_mut().expect("exists");
        for _ in 0..n {
            let Some(p) = slot.pop_newest() else { break };
            slot.counters.drops.add(DropReason::Reconfigured, 1);
            self.queued_packets -= 1;
            self.queued_bytes -= p.len as u64;
            self.totals.dropped_packets += 1;
            self.totals.dropped_bytes += p.len as u64;
            self.ev.drop(p, DropReason::Reconfigured);
        }
        self.ev.drop_counts = Default::default();
    }

    /// Sheds packets over `q`'s limits, newest first.
    fn enforce_queue_limits(&mut self, q: QueueId) {
        loop {
            let slot = self.slots[q.index()].as_ref().expect("exists");
            if !slot.limits.exceeded(slot.packets(), slot.bytes()) {
                break;
            }
            self.shed_newest(q, 1);
        }
    }

    /// Adds the queue(s) of `c`. Fails if an id is taken.
    pub(crate) fn add_queue(&mut self, c: QueueConfig) -> Result<(), ConfigError> {
        c.validate()?;
        if let Some(taken) = c.ids().find(|q| self.exists(*q)) {
            return Err(ConfigError::new(
                "id",
                taken.0,
                "a queue with this id exists already",
            ));
        }
        let mut built = Vec::with_capacity(c.count as usize);
        for q in c.ids() {
            built.push((q, self.build_slot(&c)?));
        }
        for (q, slot) in built {
            if self.slots.len() <= q.index() {
                self.slots.resize_with(q.index() + 1, || None);
            }
            self.slots[q.index()] = Some(slot);
            self.ids.insert(q);
            self.scheduler.on_queue_added(q, c.attrs());
        }
        Ok(())
    }

    fn build_slot(&self, c: &QueueConfig) -> Result<Slot, ConfigError> {
        let queue = c
            .kind
            .build_with(self.plugins.as_deref())
            .map_err(|e| e.within(c.kind.kind_name()))?;
        let policer = c
            .policer
            .as_ref()
            .map(|p| p.build())
            .transpose()
            .map_err(|e| e.within("policer"))?;
        let shaper = c
            .shaper
            .as_ref()
            .map(|s| s.build())
            .transpose()
            .map_err(|e| e.within("shaper"))?;
        Ok(Slot {
            config: QueueConfig {
                count: 1,
                ..c.clone()
            },
            queue,
            stash: None,
            policer,
            shaper,
            limits: c.limits(),
            attrs: c.attrs(),
            counters: QueueCounters::default(),
        })
    }

    /// Replaces the configuration of existing queue(s), keeping their
    /// packets. Same kind: parameters change in place (AQM state kept, like
    /// Linux `change()`); another kind: a new queue takes the packets over in
    /// order. Policer and shaper are replaced as configured.
    pub(crate) fn modify_queue(&mut self, c: QueueConfig) -> Result<(), ConfigError> {
        c.validate()?;
        if let Some(missing) = c.ids().find(|q| !self.exists(*q)) {
            return Err(ConfigError::new(
                "id",
                missing.0,
                format!("no such queue (configured: {})", self.id_list()),
            ));
        }
        // Build everything first so that an error leaves the pipeline as it was.
        let mut fresh = Vec::new();
        for q in c.ids() {
            fresh.push((q, self.build_slot(&c)?));
        }
        for (q, mut new) in fresh {
            let old = self.slots[q.index()].as_mut().expect("exists");
            if !c.kind.reconfigure(&mut old.queue)? {
                // Different kind: move the packets into the new queue, oldest first.
                while let Some(p) = old.pop_oldest() {
                    new.queue.push_raw(p);
                }
            } else {
                std::mem::swap(&mut new.queue, &mut old.queue);
                new.stash = old.stash.take();
            }
            new.counters = std::mem::take(&mut old.counters);
            let attrs_changed = new.attrs != old.attrs;
            *old = new;
            if attrs_changed {
                self.scheduler.on_queue_removed(q);
                self.scheduler.on_queue_added(q, c.attrs());
                if self.slots[q.index()].as_ref().expect("exists").packets() > 0 {
                    self.scheduler.on_backlogged(q, &Slots(&self.slots));
                }
            }
            self.enforce_queue_limits(q);
        }
        Ok(())
    }

    /// Deletes queue `q`, moving its packets to the default queue (which then
    /// sheds what exceeds its own limits with reason `Reconfigured`).
    pub(crate) fn delete_queue(&mut self, q: QueueId) -> Result<(), ConfigError> {
        if !self.exists(q) {
            return Err(ConfigError::new(
                "queue",
                q.0,
                format!("no such queue (configured: {})", self.id_list()),
            ));
        }
        if q == self.default_queue {
            return Err(ConfigError::new(
                "queue",
                q.0,
                "the default queue cannot be deleted; make another queue the default first",
            ));
        }
        let mut old = self.slots[q.index()].take().expect("exists");
        self.ids.remove(&q);
        self.scheduler.on_queue_removed(q);
        let d = self.default_queue;
        let dest = self.slots[d.index()].as_mut().expect("default exists");
        let was_empty = dest.packets() == 0;
        let mut moved = 0u64;
        while let Some(p) = old.pop_oldest() {
            moved += 1;
            dest.counters.moved_in_bytes += p.len as u64;
            dest.queue.push_raw(p);
        }
        dest.counters.moved_in_packets += moved;
        if was_empty && dest.packets() > 0 {
            self.scheduler.on_backlogged(d, &Slots(&self.slots));
        }
        self.enforce_queue_limits(d);
        Ok(())
    }

    pub(crate) fn queue_config(&self, q: QueueId) -> Option<&QueueConfig> {
        self.slots
            .get(q.index())
            .and_then(Option::as_ref)
            .map(|s| &s.config)
    }
}
