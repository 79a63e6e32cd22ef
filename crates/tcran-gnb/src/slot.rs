//! One scheduling decision (a slot, or a scheduling period of several):
//! the MAC schedules the UEs from their RLC buffer status and channel, RLC
//! fills each grant, HARQ decides which transport blocks arrive (at the
//! end of the slot or period) and which are retransmitted; then every
//! pipeline gets its per-TTI report and runs its egress.
//!
//! Contract:
//! - With `cell.scheduling_period` (the thesis emulator's 10-ms TTI) the
//!   MAC schedules the resources of all the period's DL slots at once,
//!   every pipeline gets its report once per period with `tti` = the
//!   period, and the channel is sampled once per period (a capacity trace
//!   for the bytes of the whole period, an MCS channel at the period's
//!   start).
//! - A transport block sent in slot n reaches the UE at the end of slot n
//!   (with a scheduling period: at the end of the period), or later, after
//!   HARQ retransmissions.
//! - The report's `granted_bytes` is the larger of the grant and a fair
//!   share of the cell at the bearer's MCS (see `on_slot`); every pacer
//!   reads the same report.
//! - Reports go to the pipelines (and the UPF queue) only for decisions
//!   with downlink: a TDD U slot pulls nothing, and a report of it would
//!   read as a slot of zero capacity (e5G-BDP's bandwidth average would
//!   count it). A pacer that wants those reports asks
//!   (`Pacer::wants_every_slot`). Each report says when the next pull is
//!   (`next_pull_in`) and how many reports the TDD pattern spans
//!   (`pulls_per_pattern`), the same for every pacer.

use crate::counters::thp_update;
use crate::node::{Ev, Gnb, Layer, Output, SlotRecord, TtiRecord};
use tcran_core::{DropReason, Duration, Instant};
use tcran_ran::mac::{eqp, LcInput, SchedulerKind, SlotOutput, UeInput};
use tcran_ran::{Channel, ChannelSample};
use tcran_tc::LowerLayerReport;

impl Gnb {
    pub(crate) fn on_slot(&mut self) {
        let now = self.now;
        let slot = self.slot;
        let mut out = self
            .out
            .take()
            .expect("the slot handler holds it only while it runs");
        // Channel and buffer status of every UE.
        for ue in &mut self.ues {
            // Once per decision, for all of it: exact for capacity traces
            // (their bytes over the period); an MCS channel's value at the
            // period's start holds for the period.
            ue.sample = ue.channel.sample(now + ue.channel_start, self.period);
        }
        let scheduler = self.mac.params().scheduler;
        // Only EQP reads the SDU sizes (it sends whole packets, thesis
        // Alg. 8-9), only the delay-based scheduler the oldest packets.
        let mut sizes = std::mem::take(&mut self.slot_sdu_sizes);
        sizes.clear();
        let mut runs = std::mem::take(&mut self.slot_sdu_runs);
        runs.clear();
        if scheduler == SchedulerKind::Eqp {
            let mut one = Vec::with_capacity(eqp::MAX_PKTS);
            for d in self.ues.iter().flat_map(|ue| &ue.drbs) {
                d.tx.pending_sizes(eqp::MAX_PKTS, &mut one);
                runs.push(sizes.len()..sizes.len() + one.len());
                sizes.extend_from_slice(&one);
            }
        }
        let mut lcs = recycle(std::mem::take(&mut self.slot_lcs));
        self.lc_base.clear();
        let by_delay = scheduler == SchedulerKind::DelayBased;
        for ue in &self.ues {
            self.lc_base.push(lcs.len());
            for d in &ue.drbs {
                let sdu_sizes = runs.get(lcs.len()).map_or(&[][..], |r| &sizes[r.clone()]);
                lcs.push(LcInput {
                    drb: d.id,
                    priority: d.priority,
                    buffer_bytes: d.tx.buffer_status().total(),
                    sdu_sizes,
                    head_of_line_age: if by_delay {
                        oldest_packet_age(d, now)
                    } else {
                        Duration::ZERO
                    },
                });
            }
        }
        let mut inputs = recycle(std::mem::take(&mut self.slot_inputs));
        inputs.extend(
            self.ues
                .iter()
                .zip(&self.lc_base)
                // A handed-over UE is not the MAC's any more.
                .filter(|(ue, _)| !ue.detached)
                .map(|(ue, &base)| UeInput {
                    rnti: ue.rnti,
                    channel: ue.sample,
                    lcs: &lcs[base..base + ue.drbs.len()],
                }),
        );
        self.mac.schedule(slot, now, &inputs, &mut out);
        self.slot_inputs = recycle(inputs);
        let rlc_bytes: u64 = lcs.iter().map(|l| l.buffer_bytes).sum();
        let n_lcs = lcs.len();
        let dl_slots = u32::from(out.dl_slots);
        let record = SlotRecord {
            at: now,
            slot,
            rlc_bytes,
            capacity_bytes: slot_capacity(&out),
            used_bytes: out
                .lc_grants
                .iter()
                .map(|l| u64::from(l.granted_bytes))
                .sum::<u64>()
                + out.retx.iter().map(|r| u64::from(r.tbs_bytes)).sum::<u64>(),
            prbs_used: u32::from(out.prbs_used) * dl_slots,
            prbs_available: u32::from(out.prbs_available) * dl_slots,
        };
        self.cell.add_slot(&record, u64::from(dl_slots));
        self.outputs.list.push(Output::Slot(record));

        // Fill each grant from the UE's logical channels, then let HARQ decide.
        // `lc_grants` holds one entry per logical channel of the input, in
        // its order: UE `u`'s DRB `d` is at `lc_base[u] + d`.
        let mut pulled = std::mem::take(&mut self.slot_pulled);
        pulled.clear();
        pulled.resize(n_lcs, 0);
        let mut granted = std::mem::take(&mut self.slot_granted);
        granted.clear();
        granted.resize(self.ues.len(), false);
        let mut mac_views = std::mem::take(&mut self.slot_mac);
        mac_views.clear();
        mac_views.extend(self.ues.iter().map(|ue| MacView {
            mcs: match ue.sample {
                ChannelSample::Mcs(m) => Some(m.index),
                ChannelSample::Bytes(_) | ChannelSample::Outage => None,
            },
            ..MacView::default()
        }));
        for gi in 0..out.grants.len() {
            // `UeGrant` is Copy: no clone of the grant list per slot.
            let g = out.grants[gi];
            let Some(u) = self.ue_of(g.rnti) else {
                continue;
            };
            granted[u] = true;
            mac_views[u].transmitted(g.prbs, dl_slots);
            self.ues[u].prbs += u64::from(g.prbs) * u64::from(dl_slots);
            self.ues[u].harq.tx[0] += 1;
            let mut pdus = self.pdu_lists.pop().unwrap_or_default();
            let base = self.lc_base[u];
            for d in 0..self.ues[u].drbs.len() {
                let lg = out.lc_grants[base + d];
                debug_assert!(lg.rnti == g.rnti && lg.drb == self.ues[u].drbs[d].id);
                if lg.granted_bytes == 0 {
                    continue;
                }
                pulled[base + d] += self.ues[u].drbs[d].fill(
                    lg.granted_bytes,
                    now,
                    &mut pdus,
                    &mut self.scratch,
                    &mut self.outputs,
                );
            }
            self.mac.transmit(&g, pdus, &mut out);
        }
        for r in &out.retx {
            if let Some(u) = self.ue_of(r.rnti) {
                mac_views[u].transmitted(r.prbs, dl_slots);
                let prb_slots = u64::from(r.prbs) * u64::from(dl_slots);
                self.ues[u].prbs += prb_slots;
                let harq = &mut self.ues[u].harq;
                // `attempt` counts transmissions: 2 is the first retransmission.
                harq.tx[usize::from(r.attempt.saturating_sub(1)).min(3)] += 1;
                harq.retx_prbs += prb_slots;
            }
        }
        let arrive = now + self.period;
        for tb in out.delivered.drain(..) {
            if let Some(u) = self.ue_of(tb.rnti) {
                mac_views[u].harq_acks += 1;
                self.events.schedule(arrive, Ev::AtUe(u, tb.pdus));
            }
        }
        for mut tb in out.lost.drain(..) {
            let Some(u) = self.ue_of(tb.rnti) else {
                continue;
            };
            self.ues[u].harq.lost += 1;
            for pdu in &tb.pdus {
                if let Some(d) = self.ues[u].drbs.iter().position(|x| x.id == pdu.drb) {
                    self.ues[u].drbs[d]
                        .rx
                        .on_pdu_lost(pdu, &mut self.scratch.packets);
                }
            }
            for p in self.scratch.packets.drain(..) {
                self.outputs.drop(Layer::Air, DropReason::AirLoss, p, now);
            }
            tb.pdus.clear();
            self.pdu_lists.push(tb.pdus);
        }

        // Per-TTI report to every pipeline, then its egress.
        // Grants go one per scheduled UE.
        let n_grants = out.grants.len() as u64;
        let has_dl = out.dl_slots > 0;
        let next_pull_in =
            Duration::from_nanos(self.slot_duration.as_nanos() * self.mac.slots_to_next_pull(slot));
        for (u, &has_grant) in granted.iter().enumerate() {
            let base = self.lc_base[u];
            for d in 0..self.ues[u].drbs.len() {
                let pulled_bytes = pulled[base + d];
                let period = self.period;
                let drb = &mut self.ues[u].drbs[d];
                if !has_dl && !drb.pipeline.wants_every_slot() {
                    // No pull, no report: the counters still see the slot.
                    let total = drb.tx.buffer_status().total();
                    let had_data = lcs[base + d].buffer_bytes > 0;
                    thp_update(&mut drb.counters, had_data, total > 0, 0, period);
                    continue;
                }
                let bs = drb.tx.buffer_status();
                let lg = &out.lc_grants[base + d];
                let max_bytes = lg.max_bytes as u64;
                // 5G-BDP's channel capacity is what the channel offers this
                // bearer (thesis sec. 3.3: CQI and RBs turned into bytes; the
                // thesis emulator's MAC offered the trace capacity whatever
                // the RLC held). The MAC's grant is demand-limited: a bearer
                // that holds little gets a small grant or none, which would
                // read as "no capacity" and keep it starved (the
                // non-virtuous cycle of sec. 3.4). So the report carries the
                // larger of the grant and a fair share of the cell at the
                // bearer's MCS among the UEs scheduled in this slot.
                let sharing = n_grants - u64::from(has_grant) + 1;
                let granted_bytes = (lg.granted_bytes as u64).max(max_bytes / sharing);
                let report = mac_views[u].report(LowerLayerReport {
                    tti: period,
                    next_pull_in,
                    pulls_per_pattern: self.pulls_per_pattern,
                    backlog_bytes: bs.new_payload_bytes + bs.retx_bytes,
                    backlog_sdus: bs.sdus_held,
                    pulled_bytes,
                    granted_bytes,
                    max_bytes,
                    head_of_line_age: age(drb.tx.head_of_line_arrival(), now),
                    ..LowerLayerReport::default()
                });
                drb.pipeline.on_report(&report, now);
                drb.last_tti = TtiRecord {
                    at: now,
                    report,
                    new_payload_bytes: bs.new_payload_bytes,
                };
                thp_update(
                    &mut drb.counters,
                    // The buffer before the MAC pulled.
                    lcs[base + d].buffer_bytes > 0,
                    bs.total() > 0,
                    pulled_bytes,
                    period,
                );
                self.egress(u, d);
                self.abandoned(u, d);
            }
            if has_dl
                || self.ues[u]
                    .upf
                    .as_ref()
                    .is_some_and(|p| p.pipeline.wants_every_slot())
            {
                self.report_to_upf(u, &out, next_pull_in, mac_views[u]);
            }
        }
        self.slot_pulled = pulled;
        self.slot_granted = granted;
        self.slot_mac = mac_views;
        self.slot_lcs = recycle(lcs);
        self.slot_sdu_sizes = sizes;
        self.slot_sdu_runs = runs;
        self.out = Some(out);
        if self.uplink_drbs.is_some() {
            self.uplink_slot(slot, now);
        }
        self.slot += self.period_slots;
        self.events.schedule(now + self.period, Ev::Slot);
    }

    /// The UPF queue's per-TTI report: its lower layer is the UE's TC
    /// pipelines (bytes they handed to RLC this TTI, bytes they still hold)
    /// and the capacity the cell offered the UE.
    fn report_to_upf(
        &mut self,
        u: usize,
        out: &SlotOutput,
        next_pull_in: Duration,
        mac_view: MacView,
    ) {
        let now = self.now;
        let ue = &mut self.ues[u];
        let Some(upf) = ue.upf.as_mut() else {
            return;
        };
        let (bytes, packets) = ue.drbs.iter().fold((0, 0), |(b, n), d| {
            (
                b + d.pipeline.queued_bytes(),
                n + d.pipeline.queued_packets(),
            )
        });
        let rnti = ue.rnti;
        let granted = out.grant(rnti).map_or(0, |g| u64::from(g.tbs_bytes));
        let max_bytes = out
            .lc_grants
            .iter()
            .find(|l| l.rnti == rnti)
            .map_or(0, |l| u64::from(l.max_bytes));
        let oldest = ue
            .drbs
            .iter()
            .filter_map(|d| d.pipeline.oldest_enqueued_at())
            .min();
        let report = mac_view.report(LowerLayerReport {
            tti: self.period,
            next_pull_in,
            pulls_per_pattern: self.pulls_per_pattern,
            backlog_bytes: bytes,
            backlog_sdus: packets as u32,
            pulled_bytes: std::mem::take(&mut upf.released),
            granted_bytes: granted,
            max_bytes,
            head_of_line_age: age(oldest, now),
            ..LowerLayerReport::default()
        });
        upf.pipeline.on_report(&report, now);
        self.upf_egress(u);
    }

    /// Counts the SDUs an RLC AM transmitter of (UE, DRB) gave up on.
    pub(crate) fn abandoned(&mut self, u: usize, d: usize) {
        self.ues[u].drbs[d].abandoned(self.now, &mut self.outputs, &mut self.scratch);
    }
}

/// What the MAC knows of one UE after a decision: its MCS, the PRBs it
/// was given and the HARQ outcome of each transport block sent to it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct MacView {
    mcs: Option<u8>,
    prbs: u32,
    transmissions: u16,
    harq_acks: u16,
}

impl MacView {
    /// A transport block (new data or a retransmission) on `prbs` PRBs in
    /// each of the decision's `dl_slots` downlink slots.
    fn transmitted(&mut self, prbs: u16, dl_slots: u32) {
        self.prbs += u32::from(prbs) * dl_slots;
        self.transmissions = self.transmissions.saturating_add(1);
    }

    /// `report` with the UE's MAC fields filled in: every transport block
    /// sent is either decoded (ACK) or not (NACK).
    fn report(&self, report: LowerLayerReport) -> LowerLayerReport {
        LowerLayerReport {
            mcs: self.mcs,
            prbs: self.prbs,
            harq_acks: self.harq_acks,
            harq_nacks: self.transmissions.saturating_sub(self.harq_acks),
            ..report
        }
    }
}

/// How long the bearer's oldest packet has waited in the node: in its TC
/// pipeline's queues or in its RLC buffer (the queues Brunello's DBS
/// looks at sit in PDCP, which the TC pipeline replaces here).
fn oldest_packet_age(d: &crate::drb::Drb, now: Instant) -> Duration {
    let oldest = [d.pipeline.oldest_enqueued_at(), d.tx.head_of_line_arrival()]
        .into_iter()
        .flatten()
        .min();
    age(oldest, now)
}

/// How long something that arrived at `since` has waited at `now`.
fn age(since: Option<Instant>, now: Instant) -> Duration {
    since.map_or(Duration::ZERO, |t| now.saturating_since(t))
}

/// What the slot (or scheduling period) could carry with every PRB: the
/// full-cell TBS of the scheduled UEs weighted by the PRBs each got, or the
/// mean over all UEs in a slot that schedules nobody.
fn slot_capacity(out: &SlotOutput) -> u64 {
    // `offered_bytes` is per UE; every LC of a UE carries the same value.
    // Not `max_bytes`: capacity a trace carries over was offered, and
    // counted, in the decision that left it unused.
    let full_cell = |rnti| {
        out.lc_grants
            .iter()
            .find(|l| l.rnti == rnti)
            .map_or(0, |l| u64::from(l.offered_bytes))
    };
    let (mut num, mut den) = (0u64, 0u64);
    for (rnti, prbs) in out
        .grants
        .iter()
        .map(|g| (g.rnti, g.prbs))
        .chain(out.retx.iter().map(|r| (r.rnti, r.prbs)))
    {
        num += full_cell(rnti) * u64::from(prbs);
        den += u64::from(prbs);
    }
    if let Some(c) = num.checked_div(den) {
        return c;
    }
    let (mut sum, mut n) = (0u64, 0u64);
    let mut last = None;
    for l in &out.lc_grants {
        if last != Some(l.rnti) {
            sum += u64::from(l.offered_bytes);
            n += 1;
            last = Some(l.rnti);
        }
    }
    sum.checked_div(n).unwrap_or(0)
}

/// An empty vector on `v`'s allocation, for elements of another lifetime.
/// The MAC's inputs borrow what lives only for the slot (the logical
/// channels borrow the SDU sizes, the per-UE inputs the channel list), so
/// their vectors cannot be kept between slots as they are; their
/// allocations can, and then no slot allocates (std collects a vector's
/// `IntoIter` into a vector of a same-sized element in place, and nothing
/// is left to map).
pub(crate) fn recycle<T, U>(mut v: Vec<T>) -> Vec<U> {
    v.clear();
    v.into_iter()
        .map(|_| unreachable!("the vector was cleared"))
        .collect()
}
