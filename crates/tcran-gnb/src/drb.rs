//! One data radio bearer of one UE ([`Drb`]): its TC pipeline, the gNB's
//! RLC transmitter, the UE's RLC and PDCP receivers, and the glue between
//! them (egress from the pipeline into RLC, drop and mark collection, the
//! AM give-up bookkeeping, the counters).
//!
//! Contract:
//! - A `Drb` owns no clock and schedules nothing: every method takes the
//!   time it runs at, and those that arm a timer return the instant the
//!   node must wake it at (`None`: nothing new to schedule).
//! - What it drops or marks goes to the node's [`Outputs`], each drop
//!   with its layer and reason, so nothing leaves the data path unreported.
//! - A change to the pipeline ([`Drb::apply`]) is all or nothing
//!   ([`tcran_tc::Pipeline::apply_change`]); marks counted before it are
//!   collected first (queues about to be deleted lose none), its drops and
//!   the egress it allows run right after.

use crate::config::DrbConfig;
use crate::counters::DrbCounters;
use crate::node::{Layer, Output, TtiRecord};
use std::collections::BTreeMap;
use tcran_core::reason::MarkCounts;
use tcran_core::{
    ConfigError, DrbId, DropReason, FlowId, Instant, MarkReason, Packet, PacketId, Stamp,
};
use tcran_ran::pdcp::PdcpRx;
use tcran_ran::rlc::{RlcMode, RlcPdu, RlcRx, RlcTx, SduDeparture, StatusPdu};
use tcran_tc::{Applied, Change, Pipeline, PipelineConfig, Refused};

/// Deliveries remembered per DRB: more than an AM window's worth of
/// packets delivered in the time a transmitter takes to give up.
const RECENT_DELIVERIES: usize = 8192;

/// What the data path hands the node's user, oldest first, and the tallies
/// of drops and marks by (layer, reason) that the node's views report.
#[derive(Debug, Default)]
pub(crate) struct Outputs {
    pub list: Vec<Output>,
    pub drops: BTreeMap<(Layer, &'static str), u64>,
    pub marks: BTreeMap<(Layer, &'static str), u64>,
}

impl Outputs {
    pub fn drop(&mut self, layer: Layer, reason: DropReason, packet: Packet, at: Instant) {
        *self.drops.entry((layer, reason.label())).or_default() += 1;
        self.list.push(Output::Dropped {
            packet,
            layer,
            reason,
            at,
        });
    }

    /// Counts every packet `pipeline` dropped as a drop at `layer`.
    pub fn pipeline_drops(&mut self, layer: Layer, pipeline: &mut Pipeline, at: Instant) {
        if !pipeline.has_dropped() {
            return;
        }
        for x in pipeline.drain_dropped() {
            self.drop(layer, x.reason, x.packet, at);
        }
    }

    /// Takes back an RLC give-up the UE turned out to have received.
    pub(crate) fn withdraw_air_loss(&mut self, id: PacketId, flow: Option<FlowId>, at: Instant) {
        let key = (Layer::Rlc, DropReason::AirLoss.label());
        if let Some(n) = self.drops.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                self.drops.remove(&key);
            }
        }
        self.list.push(Output::DropWithdrawn {
            id,
            flow,
            layer: Layer::Rlc,
            reason: DropReason::AirLoss,
            at,
        });
    }

    /// Counts the marks of `total` that `seen` had not, and remembers them.
    fn marks_since(&mut self, layer: Layer, total: MarkCounts, seen: &mut MarkCounts, at: Instant) {
        let before = std::mem::replace(seen, total);
        for r in MarkReason::ALL {
            let count = total.get(*r).saturating_sub(before.get(*r));
            if count > 0 {
                *self.marks.entry((layer, r.label())).or_default() += count;
                self.list.push(Output::Marked {
                    layer,
                    reason: *r,
                    count,
                    at,
                });
            }
        }
    }
}

/// Buffers the bearers lend each other between calls, for their
/// allocations (the node has one).
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    pub departures: Vec<SduDeparture>,
    /// Packets a receiver or transmitter gave up on.
    pub packets: Vec<Packet>,
    /// Packets a transport block delivered up the UE's stack.
    pub delivered: Vec<Packet>,
    pub aqm_drops: Vec<(Packet, DropReason)>,
    /// SDUs an RLC receiver just delivered on their way through PDCP.
    pub pdcp: Vec<Packet>,
}

#[derive(Debug)]
pub(crate) struct Drb {
    pub id: DrbId,
    pub priority: u8,
    pub pipeline: Pipeline,
    pub tx: RlcTx,
    pub rx: RlcRx,
    /// The UE's PDCP receiver (reordering).
    pub pdcp: PdcpRx,
    pub rlc_wake: Option<Instant>,
    pub tc_wake: Option<Instant>,
    /// CE marks of the pipeline's queues when last looked at (marks are
    /// counted inside the pipeline; the node collects the increase).
    marks_seen: MarkCounts,
    /// The same for the RLC buffer's AQM.
    rlc_marks_seen: MarkCounts,
    /// Ids of the last packets delivered to the UE (a ring): an AM
    /// transmitter may give up on an SDU the UE already has (its
    /// acknowledgement was still on the way), which is no loss.
    recent: Vec<PacketId>,
    recent_next: usize,
    /// Packets counted as dropped by an RLC AM give-up whose segments may
    /// still complete at the UE (rare; the drop is withdrawn if they do).
    given_up: Vec<(PacketId, Option<FlowId>)>,
    pub counters: DrbCounters,
    pub last_tti: TtiRecord,
}

impl Drb {
    /// The bearer `dc` describes: its TC pipeline (one FIFO when it names
    /// none), RLC transmitter and receiver, PDCP receiver. Errors name the
    /// field within the DRB's table.
    pub(crate) fn from_config(dc: &DrbConfig) -> Result<Drb, ConfigError> {
        let rlc = dc.rlc.build().map_err(|e| e.within("rlc"))?;
        let pdcp = dc.pdcp.build().map_err(|e| e.within("pdcp"))?;
        let pipeline = dc
            .pipeline
            .clone()
            .unwrap_or_else(|| PipelineConfig::single_queue(Default::default()))
            .build()
            .map_err(|e| e.within("pipeline"))?;
        let id = DrbId(dc.id);
        Ok(Drb::new(
            id,
            dc.priority,
            pipeline,
            RlcTx::new(rlc.clone(), id),
            RlcRx::new(rlc, id),
            PdcpRx::new(pdcp),
        ))
    }

    pub fn new(
        id: DrbId,
        priority: u8,
        pipeline: Pipeline,
        tx: RlcTx,
        rx: RlcRx,
        pdcp: PdcpRx,
    ) -> Drb {
        Drb {
            id,
            priority,
            pipeline,
            tx,
            rx,
            pdcp,
            rlc_wake: None,
            tc_wake: None,
            marks_seen: MarkCounts::default(),
            rlc_marks_seen: MarkCounts::default(),
            recent: Vec::new(),
            recent_next: 0,
            given_up: Vec::new(),
            counters: DrbCounters::default(),
            last_tti: TtiRecord::default(),
        }
    }

    /// A packet SDAP mapped to this DRB enters its pipeline; returns the
    /// bytes the egress that follows released into RLC.
    pub fn push(&mut self, mut p: Packet, now: Instant, out: &mut Outputs) -> u64 {
        if self.pipeline.pass_through(&mut p, now) {
            // Pushed and pulled at once, dropping nothing (drops of
            // earlier calls still go out first, as after a push): the
            // egress takes it on, and its next pull would find nothing.
            self.collect_tc_drops(now, out);
            return self.enter_rlc(p, now, out);
        }
        self.pipeline.push(p, now);
        self.collect_tc_drops(now, out);
        self.egress(now, out)
    }

    /// Moves what the pipeline lets go down into PDCP/RLC; returns the
    /// bytes it released (an SDU the full RLC buffer refuses counts: the
    /// pipeline let it go, the RLC dropped it).
    pub fn egress(&mut self, now: Instant, out: &mut Outputs) -> u64 {
        let mut released = 0;
        while let Some(p) = self.pipeline.pull(now) {
            released += self.enter_rlc(p, now, out);
        }
        self.collect_tc_drops(now, out);
        released
    }

    /// A packet the pipeline let go enters PDCP/RLC; returns its bytes.
    fn enter_rlc(&mut self, p: Packet, now: Instant, out: &mut Outputs) -> u64 {
        let len = u64::from(p.len);
        self.counters.pdcp_sdu_bytes += len;
        // The RLC stamps `rlc_in` on the SDUs it takes; one it refuses
        // reached it all the same.
        if let Err(mut p) = self.tx.enqueue(p, now) {
            p.stamps.rlc_in = Stamp::at(now);
            out.drop(Layer::Rlc, DropReason::RlcFull, p, now);
        }
        len
    }

    /// When the egress must run again ([`arm_pipeline`]).
    pub fn arm_tc(&mut self, now: Instant, tick: Option<tcran_core::Duration>) -> Option<Instant> {
        arm_pipeline(&self.pipeline, &mut self.tc_wake, now, tick)
    }

    /// When the RLC/PDCP timers of both ends next need to run (a STATUS
    /// report waiting for an uplink grant needs none: the grant builds
    /// it); `Some` only when earlier than the wake-up already armed.
    pub fn arm_rlc(&mut self, now: Instant, status_waits_for_grant: bool) -> Option<Instant> {
        let status = if status_waits_for_grant {
            None
        } else {
            self.rx.status_at()
        };
        let next = Instant::earliest(
            Instant::earliest(self.tx.next_wakeup(), self.rx.next_timer()),
            Instant::earliest(status, self.pdcp.next_wakeup()),
        )?;
        arm(&mut self.rlc_wake, next.max(now))
    }

    fn collect_tc_drops(&mut self, now: Instant, out: &mut Outputs) {
        out.pipeline_drops(Layer::Tc, &mut self.pipeline, now);
    }

    /// Counts the CE marks the pipeline and the RLC buffer made since the
    /// last look.
    pub fn collect_marks(&mut self, now: Instant, out: &mut Outputs) {
        let mut total = MarkCounts::default();
        for q in self.pipeline.stats(now).queues {
            total.add_all(&q.marks);
        }
        out.marks_since(Layer::Tc, total, &mut self.marks_seen, now);
        let rlc_total = self.tx.aqm_marks().copied().unwrap_or_default();
        out.marks_since(Layer::Rlc, rlc_total, &mut self.rlc_marks_seen, now);
    }

    /// Applies `change` to the pipeline, all or nothing; returns the
    /// configuration it left and the bytes the egress then released.
    pub fn apply(
        &mut self,
        change: &Change,
        now: Instant,
        out: &mut Outputs,
    ) -> (Result<Applied, Refused>, u64) {
        self.collect_marks(now, out);
        let result = self.pipeline.apply_change(change, now);
        self.collect_tc_drops(now, out);
        (result, self.egress(now, out))
    }

    /// Fills `grant` bytes of a transport block from the RLC buffer
    /// (appending its PDUs to `pdus`); returns the bytes used.
    pub fn fill(
        &mut self,
        grant: u32,
        now: Instant,
        pdus: &mut Vec<RlcPdu>,
        scratch: &mut Scratch,
        out: &mut Outputs,
    ) -> u64 {
        let sent_before = self.tx.first_tx_bytes();
        let used = self.tx.fill(grant, now, pdus, &mut scratch.departures) as u64;
        self.counters.rlc_sdu_tx_bytes += self.tx.first_tx_bytes() - sent_before;
        self.counters.mac_tx_bytes += used;
        self.departed(&mut scratch.departures, now);
        self.tx.drain_dropped(&mut scratch.aqm_drops);
        for (p, reason) in scratch.aqm_drops.drain(..) {
            out.drop(Layer::Rlc, reason, p, now);
        }
        used
    }

    /// A PDU of this bearer the UE decoded: through the UE's RLC receiver
    /// and PDCP (reordering) into `delivered` (what PDCP lets go up);
    /// what PDCP discards is counted.
    pub fn at_ue(
        &mut self,
        pdu: RlcPdu,
        now: Instant,
        delivered: &mut Vec<Packet>,
        scratch: &mut Scratch,
        out: &mut Outputs,
    ) {
        let first = delivered.len();
        self.rx.on_pdu(pdu, now, delivered);
        for p in &delivered[first..] {
            if let Some(t) = p.stamps.rlc_in.get() {
                self.counters.delivered_packets += 1;
                self.counters.rlc_delay_ns += now.saturating_since(t).as_nanos();
            }
        }
        // Only an AM transmitter gives up on SDUs the UE may hold.
        if self.tx.params().mode == RlcMode::Am {
            for p in &delivered[first..] {
                self.remember_delivery(p.id, now, out);
            }
        }
        self.pdcp_in(delivered, first, now, scratch, out);
    }

    /// Passes the SDUs the RLC receiver just delivered (`sdus[first..]`)
    /// through the UE's PDCP receiver: `sdus[first..]` becomes what PDCP
    /// lets go up; what it discards is counted.
    fn pdcp_in(
        &mut self,
        sdus: &mut Vec<Packet>,
        first: usize,
        now: Instant,
        scratch: &mut Scratch,
        out: &mut Outputs,
    ) {
        // The common case, SDUs in order: they stay where they are.
        if !self.pdcp.pass_in_order(self.rx.counts()) {
            let from_rlc = &mut scratch.pdcp;
            let mut dropped = Vec::new();
            from_rlc.extend(sdus.drain(first..));
            for (p, &c) in from_rlc.drain(..).zip(self.rx.counts()) {
                self.pdcp.on_sdu(c, p, now, sdus, &mut dropped);
            }
            for (p, reason) in dropped {
                out.drop(Layer::Pdcp, reason, p, now);
            }
        }
        self.rx.clear_counts();
    }

    /// A STATUS PDU from the UE reached the gNB's transmitter.
    pub fn on_status(
        &mut self,
        status: &StatusPdu,
        now: Instant,
        scratch: &mut Scratch,
        out: &mut Outputs,
    ) {
        self.tx.on_status(status, now, &mut scratch.departures);
        self.pipeline.on_status_pdu(now);
        self.departed(&mut scratch.departures, now);
        self.abandoned(now, out, scratch);
    }

    /// The RLC timers of both ends and PDCP's t-Reordering: what the
    /// receiver gives up on is counted, what t-Reordering lets go goes to
    /// `up`.
    pub fn on_rlc_timers(
        &mut self,
        now: Instant,
        up: &mut Vec<Packet>,
        scratch: &mut Scratch,
        out: &mut Outputs,
    ) {
        self.tx.on_timer(now);
        self.rx.on_timer(now, &mut scratch.packets);
        for p in scratch.packets.drain(..) {
            out.drop(Layer::Air, DropReason::AirLoss, p, now);
        }
        self.pdcp.on_timer(now, up);
    }

    /// SDUs that left the RLC buffer: the pipeline hears of each
    /// (DynRLC), the counters add their sojourn.
    fn departed(&mut self, departures: &mut Vec<SduDeparture>, now: Instant) {
        for dep in departures.drain(..) {
            self.pipeline.on_sdu_departed(dep.sojourn, now);
            self.counters.rlc_sdus_departed += 1;
            self.counters.rlc_sdu_sojourn_ns += dep.sojourn.as_nanos();
        }
    }

    /// Counts the SDUs an RLC AM transmitter gave up on (maximum
    /// retransmissions reached), unless the UE already has them.
    pub fn abandoned(&mut self, now: Instant, out: &mut Outputs, scratch: &mut Scratch) {
        // Asked after every TTI report; an SDU is given up on rarely.
        if !self.tx.has_abandoned() {
            return;
        }
        self.tx.drain_abandoned(&mut scratch.packets);
        for p in scratch.packets.drain(..) {
            if self.recent.contains(&p.id) {
                continue; // the UE has it: not a loss
            }
            self.given_up.push((p.id, p.flow));
            out.drop(Layer::Rlc, DropReason::AirLoss, p, now);
        }
    }

    /// Remembers a delivery to the UE; withdraws the drop of a packet the
    /// transmitter had given up on.
    fn remember_delivery(&mut self, id: PacketId, now: Instant, out: &mut Outputs) {
        if self.recent.len() < RECENT_DELIVERIES {
            self.recent.push(id);
        } else {
            self.recent[self.recent_next] = id;
            self.recent_next = (self.recent_next + 1) % RECENT_DELIVERIES;
        }
        if self.given_up.is_empty() {
            return;
        }
        if let Some(k) = self.given_up.iter().position(|(g, _)| *g == id) {
            let (_, flow) = self.given_up.swap_remove(k);
            out.withdraw_air_loss(id, flow, now);
        }
    }
}

/// Arms `wake` at `t` if that is earlier than what is armed; returns `t`
/// when the node must schedule it.
fn arm(wake: &mut Option<Instant>, t: Instant) -> Option<Instant> {
    if wake.is_none_or(|w| t < w) {
        *wake = Some(t);
        Some(t)
    } else {
        None
    }
}

/// When a pipeline holding packets must be looked at again because waiting
/// alone can let one go (a pacer's allowance, a shaper's tokens): its next
/// wake-up rounded up to the `tick` grid, never `now` itself; `Some` only
/// when that is earlier than `wake`, which it then becomes. The bearers'
/// TC pipelines and the UPF queue are armed alike.
pub(crate) fn arm_pipeline(
    pipeline: &Pipeline,
    wake: &mut Option<Instant>,
    now: Instant,
    tick: Option<tcran_core::Duration>,
) -> Option<Instant> {
    if pipeline.queued_packets() == 0 {
        return None;
    }
    let t = on_tick_grid(pipeline.next_wakeup(now)?, tick)
        .max(now + tcran_core::Duration::from_nanos(1));
    arm(wake, t)
}

/// `t` rounded up to the TC timer grid, if there is one.
fn on_tick_grid(t: Instant, tick: Option<tcran_core::Duration>) -> Instant {
    match tick {
        Some(tick) => {
            let n = tick.as_nanos();
            Instant::from_nanos(t.as_nanos().div_ceil(n) * n)
        }
        None => t,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr};
    use tcran_core::{Duration, FiveTuple, Protocol};
    use tcran_ran::pdcp::PdcpConfig;
    use tcran_ran::rlc::RlcConfig;
    use tcran_tc::{Control, PipelineConfig};

    fn drb(pipeline: &str, rlc: &str) -> Drb {
        let pipeline: PipelineConfig = toml::from_str(pipeline).expect("pipeline parses");
        let rlc: RlcConfig = toml::from_str(rlc).expect("rlc parses");
        let rlc = rlc.build().expect("rlc builds");
        Drb::new(
            DrbId(1),
            1,
            pipeline.build().expect("pipeline builds"),
            RlcTx::new(rlc.clone(), DrbId(1)),
            RlcRx::new(rlc, DrbId(1)),
            PdcpRx::new(PdcpConfig::default().build().expect("pdcp builds")),
        )
    }

    fn packet(id: u64, len: u32) -> Packet {
        let tuple = FiveTuple {
            src: IpAddr::V4(Ipv4Addr::new(198, 51, 100, 1)),
            dst: IpAddr::V4(Ipv4Addr::new(10, 45, 0, 1)),
            sport: 0,
            dport: 0,
            proto: Protocol::ICMP,
        };
        Packet::new(PacketId(id), len, tuple, Instant::ZERO)
    }

    const FIFO: &str = "[[queues]]\nid = 0\nkind = \"fifo\"\n";
    const AM: &str = "mode = \"am\"\nbuffer_limit = \"3000B\"\n";

    fn drops(out: &Outputs) -> Vec<(Layer, DropReason, u64)> {
        out.list
            .iter()
            .filter_map(|o| match o {
                Output::Dropped {
                    layer,
                    reason,
                    packet,
                    ..
                } => Some((*layer, *reason, packet.id.0)),
                _ => None,
            })
            .collect()
    }

    /// Without a pacer every packet goes on to RLC at once; what the full
    /// RLC buffer refuses is a drop at layer `rlc`, and still counts as
    /// released by the pipeline (and as a PDCP SDU).
    #[test]
    fn egress_hands_everything_to_rlc_and_counts_what_a_full_buffer_refuses() {
        let mut d = drb(FIFO, AM);
        let mut out = Outputs::default();
        let t = Instant::ZERO;
        let released: u64 = (1..=3).map(|i| d.push(packet(i, 1400), t, &mut out)).sum();
        assert_eq!(released, 4200);
        assert_eq!(d.counters.pdcp_sdu_bytes, 4200);
        assert_eq!(d.pipeline.queued_packets(), 0);
        assert_eq!(drops(&out), vec![(Layer::Rlc, DropReason::RlcFull, 3)]);
        assert_eq!(out.drops[&(Layer::Rlc, "rlc_full")], 1);
        assert_eq!(d.arm_tc(t, None), None, "nothing waits in the pipeline");
    }

    /// A refused change changes nothing and reports nothing; a lowered
    /// limit sheds what no longer fits, as drops at layer `tc` with reason
    /// `reconfigured`.
    #[test]
    fn apply_is_all_or_nothing_and_what_it_sheds_is_counted() {
        // A pacer that lets nothing go before the first report keeps the
        // packets in the pipeline.
        let mut d = drb(&format!("pacer = {{ kind = \"bdp\" }}\n{FIFO}"), AM);
        let mut out = Outputs::default();
        let t = Instant::ZERO;
        for i in 1..=5 {
            d.push(packet(i, 100), t, &mut out);
        }
        let held = d.pipeline.queued_packets();
        assert!(held > 0, "the pacer holds packets");
        let before = d.pipeline.config();

        let bad = Change::Control(Control::DeleteQueue {
            id: tcran_core::QueueId(7),
        });
        let (result, released) = d.apply(&bad, t, &mut out);
        assert!(result.is_err());
        assert_eq!(released, 0);
        assert_eq!(d.pipeline.config(), before);
        assert!(out.list.is_empty(), "{:?}", out.list);

        let mut queue = before.queues[0].clone();
        queue.limit_packets = Some(1);
        let (result, _) = d.apply(
            &Change::Control(Control::ModifyQueue { queue }),
            t,
            &mut out,
        );
        assert!(result.is_ok());
        assert_eq!(d.pipeline.queued_packets(), 1);
        let shed = drops(&out);
        assert_eq!(shed.len(), held - 1);
        assert!(shed
            .iter()
            .all(|(l, r, _)| *l == Layer::Tc && *r == DropReason::Reconfigured));
    }

    /// A wake-up is handed to the node only when it is earlier than the
    /// one already armed.
    #[test]
    fn a_timer_is_armed_only_when_earlier() {
        let mut wake = None;
        let t = |ms| Instant::ZERO + Duration::from_millis(ms);
        assert_eq!(arm(&mut wake, t(5)), Some(t(5)));
        assert_eq!(arm(&mut wake, t(7)), None);
        assert_eq!(arm(&mut wake, t(5)), None);
        assert_eq!(arm(&mut wake, t(3)), Some(t(3)));
        assert_eq!(wake, Some(t(3)));
        assert_eq!(
            on_tick_grid(
                t(3) + Duration::from_nanos(1),
                Some(Duration::from_millis(1))
            ),
            t(4)
        );
        assert_eq!(on_tick_grid(t(3), Some(Duration::from_millis(1))), t(3));
    }

    /// An AM give-up of an SDU the UE already received is no loss; one
    /// the UE receives after the give-up withdraws the drop.
    #[test]
    fn an_am_give_up_is_a_loss_only_if_the_ue_never_gets_the_sdu() {
        let mut d = drb(FIFO, AM);
        let mut out = Outputs::default();
        let t = Instant::ZERO;
        d.remember_delivery(PacketId(1), t, &mut out);
        d.given_up.push((PacketId(2), None));
        out.drop(Layer::Rlc, DropReason::AirLoss, packet(2, 100), t);
        d.remember_delivery(PacketId(2), t, &mut out);
        assert!(d.given_up.is_empty());
        assert!(
            out.drops.is_empty(),
            "the withdrawn drop is no longer counted"
        );
        assert!(matches!(
            out.list.last(),
            Some(Output::DropWithdrawn {
                id: PacketId(2),
                layer: Layer::Rlc,
                ..
            })
        ));
        assert_eq!(d.recent, vec![PacketId(1), PacketId(2)]);
    }
}
