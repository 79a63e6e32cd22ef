//! The cell's uplink data path: the UEs that declare uplink DRBs
//! (`ues[].uplink_drbs`), each a [`UeUplink`], in a closed loop with the
//! gNB's uplink scheduler ([`tcran_ran::mac::ul`], `cell.uplink`).
//!
//! Contract, per slot (the node calls [`UplinkDrbs::on_slot`] after its
//! downlink decision):
//! - each UE runs its due timers (pacer releases, RLC/PDCP timers of both
//!   ends) at the slot's start: uplink timers have slot granularity;
//! - RLC AM STATUS PDUs of the gNB's receivers reach the UE's transmitter
//!   one slot after they were built (they ride the next downlink slot; their
//!   few bytes are not charged to the PDSCH);
//! - the scheduler decides the PUSCHs of slot n + K2 from the SRs and BSRs
//!   it has decoded (TS 38.321 §5.4.4, §5.4.5; TS 38.214 §6.1.2.1) and
//!   each UE's uplink channel (below);
//! - each UE's MAC runs its slot: SR on PUCCH, and for a new-data grant
//!   of this slot a MAC PDU by LCP (a retransmission resends the TB);
//! - the PUSCH is decoded, retransmitted or lost at the end of its slot
//!   (the HARQ model of the downlink): decoded PDUs go up through the
//!   gNB's RLC and PDCP, and the BSR it carried reaches the scheduler; the
//!   UE learns the HARQ outcome at its next slot (the new-data indicator of
//!   its next DCI);
//! - packets the gNB's PDCP lets go are reported as [`Output::Uplink`] at
//!   the slot's time (the radio's delay is modelled here, so `ul_delay` is
//!   not added); drops come out as [`Output::Dropped`] with their layer.
//!
//! A UE's uplink channel is its own `uplink_channel` when it has one (a
//! fixed MCS or CQI, an MCS ramp, a capacity trace such as a mahimahi
//! `.up` trace; geometry and drive channels compute or record the
//! downlink and are refused), else its downlink channel's sample of the
//! slot. An MCS channel answers for the slot. A capacity trace is a list
//! of delivery opportunities over time, all of them the UE's uplink, so
//! each PUSCH decision takes the opportunities offered since the previous
//! decision: in FDD the slot's, in TDD those of the whole interval since
//! the last uplink slot (one slot's worth would lose the D and S slots'
//! share of the trace). Bytes a decision offers and no grant uses are
//! lost, as in `mm-link`.
//!
//! Nothing is lost uncounted: every packet handed to [`UplinkDrbs::push`]
//! is delivered up, dropped with a reason, or found by
//! [`UplinkDrbs::for_each_in_flight`].

use crate::config::{ChannelConfig, ChannelContext, UeConfig};
use crate::drb::{Drb, Outputs};
use crate::node::{Gnb, Output};
use crate::ue_uplink::{UeUplink, UlDci};
use std::collections::BTreeMap;
use std::path::Path;
use tcran_core::{ConfigError, DrbId, Duration, Instant, Packet, Rnti};
use tcran_ran::mac::ue::bsr::BsrCe;
use tcran_ran::mac::ue::sr::SrAction;
use tcran_ran::mac::ul::{PuschOutcome, UlConfig, UlGrant, UlScheduler};
use tcran_ran::mac::Mac;
use tcran_ran::rlc::{RlcPdu, StatusPdu};
use tcran_ran::{AnyChannel, Channel, ChannelSample};

/// A transport block sent on a PUSCH whose HARQ process is still open.
#[derive(Debug)]
pub(crate) struct PuschTb {
    /// Index in [`UplinkDrbs::ues`].
    pub member: usize,
    pub pdus: Vec<RlcPdu>,
    pub bsr: Option<BsrCe>,
}

/// A UE's own uplink channel (`ues[].uplink_channel`, module docs).
#[derive(Debug)]
pub(crate) struct UplinkChannel {
    channel: AnyChannel,
    /// Where in the channel's recording time 0 falls.
    pub start: Duration,
    /// Whether `start` was drawn from the seed.
    pub start_drawn: bool,
    /// A capacity trace: a decision takes the bytes since the last one.
    capacity: bool,
    /// Recording time up to which decisions have taken the trace's bytes.
    taken_to: Instant,
    /// The last decision's sample.
    last: ChannelSample,
}

impl UplinkChannel {
    fn build(
        cfg: &ChannelConfig,
        base: &Path,
        ctx: &ChannelContext,
        now: Instant,
    ) -> Result<UplinkChannel, ConfigError> {
        let kinds = "mcs, cqi, mcs_ramp or trace";
        match cfg {
            ChannelConfig::Geometry { .. } | ChannelConfig::Drive { .. } => {
                let kind = match cfg {
                    ChannelConfig::Geometry { .. } => "geometry",
                    _ => "drive",
                };
                return Err(ConfigError::new(
                    "kind",
                    kind,
                    format!(
                        "an uplink channel is one of {kinds} ({kind} channels compute or \
                         record the downlink: the serving site's power, the UE's CQI)"
                    ),
                ));
            }
            ChannelConfig::Trace {
                carry_over: Some(c),
                ..
            } => {
                return Err(ConfigError::new(
                    "carry_over",
                    c,
                    "not modelled for the uplink: the uplink scheduler grants each \
                     decision's bytes or loses them, as mm-link",
                ));
            }
            _ => {}
        }
        let channel = cfg.build(base, ctx)?;
        let (start, start_drawn) = cfg.recording_start(
            &channel,
            ctx.seed,
            &format!("uplink_channel/ue{}", ctx.rnti),
        );
        Ok(UplinkChannel {
            capacity: channel.info().is_some(),
            channel,
            start,
            start_drawn,
            taken_to: now + start,
            last: ChannelSample::Outage,
        })
    }

    /// The channel of slot `now` (of length `slot`); `decides` says
    /// whether the scheduler decides a PUSCH in this slot.
    fn sample(&mut self, now: Instant, slot: Duration, decides: bool) -> ChannelSample {
        if !self.capacity {
            self.last = self.channel.sample(now + self.start, slot);
        } else if decides {
            let end = now + self.start + slot;
            self.last = self
                .channel
                .sample(self.taken_to, end.saturating_since(self.taken_to));
            self.taken_to = end;
        }
        self.last
    }
}

/// The cell's uplink DRBs and scheduler (module docs).
#[derive(Debug)]
pub(crate) struct UplinkDrbs {
    sched: UlScheduler,
    slot: Duration,
    /// The UEs with uplink DRBs, in configuration order.
    pub ues: Vec<UeUplink>,
    /// Their indexes in the node's UE list.
    pub node_ue: Vec<usize>,
    /// Per node UE index: its index in `ues`, if it has uplink DRBs.
    member_of: Vec<Option<usize>>,
    /// Grants decided and waiting for their PUSCH slot.
    pending: Vec<UlGrant>,
    /// TBs by id, from their first transmission to decoding or loss.
    pub tbs: BTreeMap<u64, PuschTb>,
    /// STATUS PDUs on their way down: (arrival, member, DRB, PDU).
    statuses: Vec<(Instant, usize, DrbId, StatusPdu)>,
    /// Per member: (ACKs, NACKs) the UE has not learnt of yet.
    harq: Vec<(u16, u16)>,
    /// Per member: PRB·slots of the PUSCHs granted so far (E2's view).
    pub prbs: Vec<u64>,
    /// Per member: its own uplink channel, if it has one.
    pub own_channels: Vec<Option<UplinkChannel>>,
    channels: Vec<ChannelSample>,
    pdus: Vec<RlcPdu>,
    up: Vec<Packet>,
}

impl UplinkDrbs {
    /// The uplink DRBs of `ues` (`None` when no UE declares one: the node
    /// then keeps its uplink delay model for every UE, at the cost of a
    /// branch); `sched` is `cell.uplink`; `base` and `ctx` build the UEs'
    /// `uplink_channel`s (`ctx.rnti` is ignored).
    pub fn new(
        ues: &[UeConfig],
        sched: Option<&UlConfig>,
        mac: &Mac,
        base: &Path,
        ctx: &ChannelContext,
        now: Instant,
    ) -> Result<Option<UplinkDrbs>, ConfigError> {
        if let Some(u) = ues
            .iter()
            .position(|u| u.uplink_channel.is_some() && u.uplink_drbs.is_empty())
        {
            return Err(ConfigError::new(
                format!("ues[{u}].uplink_channel"),
                "(set)",
                "needs uplink_drbs: without them the UE's uplink packets take the \
                 uplink delay model, which has no channel",
            ));
        }
        if ues.iter().all(|u| u.uplink_drbs.is_empty()) {
            return Ok(None);
        }
        if mac.period_slots() != 1 {
            return Err(ConfigError::new(
                "cell.scheduling_period",
                mac.period(),
                "must be one slot when a UE has uplink DRBs (the UE's MAC runs every slot)",
            ));
        }
        let params = sched
            .cloned()
            .unwrap_or_default()
            .build(mac.params())
            .map_err(|e| e.within("cell.uplink"))?;
        let mut members = Vec::new();
        let mut node_ue = Vec::new();
        let mut member_of = vec![None; ues.len()];
        let mut own_channels = Vec::new();
        for (u, uc) in ues.iter().enumerate() {
            if uc.uplink_drbs.is_empty() {
                continue;
            }
            let ue = UeUplink::new(
                Rnti(uc.rnti),
                &uc.uplink_drbs,
                uc.uplink_sdap.as_ref(),
                &uc.uplink_mac,
                mac.slot_duration(),
                now,
            )
            .map_err(|e| {
                // UeUplink names its fields as a UE's uplink sees them.
                let field = match e.field.strip_prefix("drbs") {
                    Some(rest) => format!("uplink_drbs{rest}"),
                    None => match e.field.strip_prefix("sdap") {
                        Some(rest) => format!("uplink_sdap{rest}"),
                        None => e.field.replacen("mac", "uplink_mac", 1),
                    },
                };
                ConfigError { field, ..e }.within(format!("ues[{u}]"))
            })?;
            let own = uc
                .uplink_channel
                .as_ref()
                .map(|c| {
                    let ctx = ChannelContext {
                        rnti: uc.rnti,
                        ..*ctx
                    };
                    UplinkChannel::build(c, base, &ctx, now)
                        .map_err(|e| e.within(format!("ues[{u}].uplink_channel")))
                })
                .transpose()?;
            member_of[u] = Some(members.len());
            node_ue.push(u);
            members.push(ue);
            own_channels.push(own);
        }
        let rntis: Vec<Rnti> = members.iter().map(UeUplink::rnti).collect();
        let sched = UlScheduler::new(params, &rntis).map_err(|e| e.within("cell.uplink"))?;
        let n = members.len();
        Ok(Some(UplinkDrbs {
            sched,
            slot: mac.slot_duration(),
            ues: members,
            node_ue,
            member_of,
            pending: Vec::new(),
            tbs: BTreeMap::new(),
            statuses: Vec::new(),
            harq: vec![(0, 0); n],
            prbs: vec![0; n],
            own_channels,
            channels: vec![ChannelSample::Outage; n],
            pdus: Vec::new(),
            up: Vec::new(),
        }))
    }

    /// The member with RNTI `rnti`, if it has uplink DRBs.
    pub fn member(&self, rnti: Rnti) -> Option<usize> {
        self.ues.iter().position(|u| u.rnti() == rnti)
    }

    /// Whether node UE `u` sends its uplink packets through uplink DRBs.
    #[inline]
    pub fn has(&self, u: usize) -> bool {
        self.member_of.get(u).is_some_and(Option::is_some)
    }

    /// A packet of node UE `u`'s IP layer (`has(u)` must hold).
    pub fn push(&mut self, u: usize, p: Packet, now: Instant, outputs: &mut Outputs) {
        if let Some(m) = self.member_of[u] {
            self.ues[m].push(p, now);
            self.ues[m].take_outputs(outputs);
        }
    }

    /// Uplink slot `slot` at `now` (module docs); `sample(u)` is node UE
    /// `u`'s downlink channel.
    pub fn on_slot(
        &mut self,
        slot: u64,
        now: Instant,
        sample: impl Fn(usize) -> ChannelSample,
        outputs: &mut Outputs,
    ) {
        for m in 0..self.ues.len() {
            let ue = &mut self.ues[m];
            if ue.next_wakeup(now).is_some_and(|t| t <= now) {
                ue.on_timeout(now, &mut self.up);
            }
            self.flush_up(m, now, outputs);
        }
        let decides = self.sched.params().is_uplink(slot + self.sched.params().k2);
        let mut k = 0;
        while k < self.statuses.len() {
            if self.statuses[k].0 <= now {
                let (_, m, drb, status) = self.statuses.swap_remove(k);
                self.ues[m].on_status(drb, &status, now);
            } else {
                k += 1;
            }
        }
        for (m, ue) in self.ues.iter_mut().enumerate() {
            for d in 0..ue.drbs().len() {
                let drb = ue.drbs()[d].id;
                if let Some(status) = ue.poll_status(drb, now) {
                    self.statuses.push((now + self.slot, m, drb, status));
                }
            }
            self.channels[m] = match &mut self.own_channels[m] {
                Some(c) => c.sample(now, self.slot, decides),
                None => sample(self.node_ue[m]),
            };
        }
        self.sched.schedule(slot, &self.channels, &mut self.pending);
        let n_prb = self.sched.params().n_prb;
        for m in 0..self.ues.len() {
            let rnti = self.ues[m].rnti();
            let channel = self.channels[m];
            let grant = self
                .pending
                .iter()
                .position(|g| g.pusch_slot == slot && g.rnti == rnti)
                .map(|i| self.pending.swap_remove(i));
            let bwp = self.sched.params().tb_bytes(channel, n_prb);
            let dci = grant.filter(UlGrant::is_new).map(|g| UlDci {
                tb_bytes: g.tb_bytes,
                mcs: match channel {
                    ChannelSample::Mcs(m) => Some(m.index),
                    _ => None,
                },
                prbs: g.prbs,
                bwp_tb_bytes: u32::try_from(bwp).unwrap_or(u32::MAX),
            });
            let harq = std::mem::take(&mut self.harq[m]);
            let out = self.ues[m].on_slot(now, slot, dci, harq, &mut self.pdus);
            if out.sr != SrAction::None {
                // Random access after sr-TransMax ends in a grant too (its
                // Msg3); the model does not delay it further.
                self.sched.on_sr(rnti);
            }
            if let Some(g) = grant {
                self.prbs[m] += u64::from(g.prbs);
                if g.is_new() {
                    let pdus = std::mem::take(&mut self.pdus);
                    self.tbs.insert(
                        g.tb,
                        PuschTb {
                            member: m,
                            pdus,
                            bsr: out.bsr,
                        },
                    );
                }
                self.transmit(m, &g, now);
            }
            self.pdus.clear();
            self.flush_up(m, now, outputs);
        }
    }

    /// The PUSCH of grant `g` (member `m`) at the end of its slot.
    fn transmit(&mut self, m: usize, g: &UlGrant, now: Instant) {
        match self.sched.transmit(g) {
            PuschOutcome::Decoded => {
                self.harq[m].0 = self.harq[m].0.saturating_add(1);
                if let Some(tb) = self.tbs.remove(&g.tb) {
                    if let Some(bsr) = &tb.bsr {
                        self.sched.on_bsr(g.rnti, bsr);
                    }
                    for pdu in tb.pdus {
                        self.ues[m].at_gnb(pdu, now, &mut self.up);
                    }
                }
            }
            PuschOutcome::Retransmit => {
                self.harq[m].1 = self.harq[m].1.saturating_add(1);
            }
            PuschOutcome::Lost => {
                self.harq[m].1 = self.harq[m].1.saturating_add(1);
                if let Some(tb) = self.tbs.remove(&g.tb) {
                    for pdu in &tb.pdus {
                        self.ues[m].lost(pdu, now);
                    }
                }
            }
        }
    }

    /// Reports what member `m`'s gNB PDCP let go, and its drops.
    fn flush_up(&mut self, m: usize, now: Instant, outputs: &mut Outputs) {
        let rnti = self.ues[m].rnti();
        for packet in self.up.drain(..) {
            outputs.list.push(Output::Uplink {
                rnti,
                packet,
                at: now + self.slot,
            });
        }
        self.ues[m].take_outputs(outputs);
    }

    /// Calls `f` with every uplink DRB: its node UE index, the DRB and its
    /// PDUs on the air (in TBs whose HARQ process is open).
    pub fn for_each_drb(&self, mut f: impl FnMut(usize, &Drb, &[&RlcPdu])) {
        let mut air: BTreeMap<(usize, DrbId), Vec<&RlcPdu>> = BTreeMap::new();
        for tb in self.tbs.values() {
            for pdu in &tb.pdus {
                air.entry((tb.member, pdu.drb)).or_default().push(pdu);
            }
        }
        for (m, ue) in self.ues.iter().enumerate() {
            for drb in ue.drbs() {
                let on_air = air.get(&(m, drb.id)).map_or(&[][..], |v| &v[..]);
                f(self.node_ue[m], drb, on_air);
            }
        }
    }
}

impl Gnb {
    /// The uplink DRBs' slot (module docs); only called when a UE has
    /// uplink DRBs.
    pub(crate) fn uplink_slot(&mut self, slot: u64, now: Instant) {
        if let Some(ul) = self.uplink_drbs.as_deref_mut() {
            let ues = &self.ues;
            ul.on_slot(slot, now, |u| ues[u].sample, &mut self.outputs);
        }
    }
}
