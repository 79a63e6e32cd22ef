//! The [`Gnb`]: its state, how it is built, its inputs, timers and outputs.
//! The data path itself is in the sibling modules (`downlink`, `slot`,
//! `ue`, `uplink`); this module dispatches the node's events to them and
//! holds what every part shares.

use crate::config::{ChannelContext, GnbConfig};
use crate::counters::{CellCounters, DrbCounters, Timing};
use crate::drb::{Drb, Outputs, Scratch};
use crate::uplink::{sr_model, SrModel};
use crate::uplink_drbs::UplinkDrbs;
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use tcran_core::event::EventQueue;
use tcran_core::{
    ConfigError, DrbId, DropReason, Duration, FlowId, Instant, MarkReason, Packet, PacketId, Rnti,
};
use tcran_ran::mac::{LcInput, Mac, SlotOutput, UeInput};
use tcran_ran::pdcp::PdcpRx;
use tcran_ran::rlc::{BufferStatus, RlcPdu, RlcRx, RlcTx, StatusPdu};
use tcran_ran::sdap::{Sdap, SdapConfig, SdapRule};
use tcran_ran::{AnyChannel, ChannelSample};
use tcran_tc::stats::PipelineStats;
use tcran_tc::{LowerLayerReport, Pipeline, PipelineConfig};

/// Where along the data path something happened (drops, marks).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// The UE's queue at the UPF.
    Upf,
    /// QFI -> DRB mapping, and routing to a UE.
    Sdap,
    /// The DRB's TC pipeline.
    Tc,
    /// The PDCP receiver at the UE (reordering).
    Pdcp,
    /// The RLC transmit buffer (full, its AQM, AM give-ups).
    Rlc,
    /// The radio: HARQ gave up, or RLC UM found a segment missing.
    Air,
    /// The uplink from a UE (no such UE).
    Uplink,
    /// A handover: TC packets the source did not forward (`no_route`),
    /// RLC UM data lost with the source's RLC and HARQ (`air_loss`).
    Handover,
}

impl Layer {
    pub const fn label(self) -> &'static str {
        match self {
            Layer::Upf => "upf",
            Layer::Sdap => "sdap",
            Layer::Tc => "tc",
            Layer::Pdcp => "pdcp",
            Layer::Rlc => "rlc",
            Layer::Air => "air",
            Layer::Uplink => "uplink",
            Layer::Handover => "handover",
        }
    }
}

/// What the node tells its driver; polled with [`Gnb::poll_output`].
// Packets move by value (at most 256 bytes, see `tcran_core::Packet`);
// boxing them would cost an allocation per packet.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Output {
    /// A downlink packet reached UE `rnti` at `at`. If its DRB carries a
    /// DL SDAP header, the packet still has it (`sdap_header`, and for a
    /// packet with real bytes, the header's byte in front of them): the
    /// UE's SDAP entity removes it.
    Delivered {
        rnti: Rnti,
        packet: Packet,
        at: Instant,
    },
    /// An uplink packet of UE `rnti` reaches the UPF (the core side of the
    /// node) at `at`. The uplink's fixed transmission delay is part of
    /// `at`, which may lie ahead of the time it is reported: the driver
    /// forwards it at `at` (plus its own core delay), as it does with its
    /// other delay lines.
    Uplink {
        rnti: Rnti,
        packet: Packet,
        at: Instant,
    },
    /// A packet left the data path.
    Dropped {
        packet: Packet,
        layer: Layer,
        reason: DropReason,
        at: Instant,
    },
    /// A drop reported earlier was none: an RLC AM transmitter gave up on
    /// an SDU whose last segments still reached the UE.
    DropWithdrawn {
        id: PacketId,
        flow: Option<FlowId>,
        layer: Layer,
        reason: DropReason,
        at: Instant,
    },
    /// CE marks counted since the node last looked (marks are counted
    /// inside the pipelines; the node collects the increase on
    /// [`Gnb::collect_marks`] and before every reconfiguration).
    Marked {
        layer: Layer,
        reason: MarkReason,
        count: u64,
        at: Instant,
    },
    /// A slot (or scheduling period) was scheduled.
    Slot(SlotRecord),
}

/// One scheduling decision (a slot, or a scheduling period of several).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct SlotRecord {
    pub at: Instant,
    /// First slot of the decision (slots count from 0 at time 0).
    pub slot: u64,
    /// Bytes the RLC transmitters of all DRBs held before the MAC pulled.
    pub rlc_bytes: u64,
    /// What the decision newly offers with every PRB: the full-cell
    /// capacity of the scheduled UEs (TBS at their MCS, or a trace's bytes,
    /// without what a trace carries over from earlier decisions) weighted
    /// by the PRBs each got, or the mean over all UEs when nobody was
    /// scheduled.
    pub capacity_bytes: u64,
    /// Bytes the decision's transport blocks carry: what the logical
    /// channels were granted (pulled from RLC) plus HARQ retransmissions.
    pub used_bytes: u64,
    /// PRB·slots granted (new data and HARQ retransmissions) and offered.
    pub prbs_used: u32,
    pub prbs_available: u32,
}

/// One DRB's view of its last TTI: the report its pipeline got.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TtiRecord {
    pub at: Instant,
    pub report: LowerLayerReport,
    /// RLC payload bytes waiting for their first transmission after the
    /// MAC pulled (the RLC occupancy the reports plot).
    pub new_payload_bytes: u64,
}

/// Events of the node, run in `(time, scheduling order)`.
#[derive(Debug)]
pub(crate) enum Ev {
    Slot,
    /// The UPF queue of UE `usize` may release packets.
    UpfWake(usize),
    TcWake(usize, usize),
    RlcWake(usize, usize),
    /// A transport block was decoded by UE `usize`.
    AtUe(usize, Vec<RlcPdu>),
    /// An RLC status PDU reached the gNB for (UE, DRB).
    StatusAtGnb(usize, usize, StatusPdu),
    /// UE `usize`'s uplink grant: what it queued goes up now.
    UlGrant(usize),
}

#[derive(Debug)]
pub(crate) struct Ue {
    pub rnti: Rnti,
    pub channel: AnyChannel,
    /// Where in the channel's recording time 0 falls (`ues[].channel.start`).
    pub channel_start: Duration,
    /// Whether `channel_start` was drawn from the seed.
    pub channel_start_random: bool,
    pub sample: ChannelSample,
    pub sdap: Sdap,
    pub drbs: Vec<Drb>,
    pub upf: Option<Upf>,
    /// Uplink packets waiting for the grant at `ul_grant` (SR model only);
    /// STATUS PDUs are built at the grant.
    pub ul_queue: Vec<Packet>,
    pub ul_grant: Option<Instant>,
    /// PRB·slots of the UE's downlink grants so far (new data and HARQ
    /// retransmissions): the MAC grants PRBs per UE, not per DRB.
    pub prbs: u64,
    /// The MAC's HARQ counters of the UE's transport blocks so far.
    pub harq: tcran_control::HarqCounters,
    /// Handed over to another cell: a tombstone that keeps the indices of
    /// the node's events stable (`crate::handover`).
    pub detached: bool,
}

impl Ue {
    /// A UE joining the cell, at the start or by handover
    /// (`crate::handover`), its channel recording from its start.
    pub(crate) fn attached(
        rnti: Rnti,
        channel: AnyChannel,
        sdap: Sdap,
        drbs: Vec<Drb>,
        upf: Option<Upf>,
    ) -> Ue {
        Ue {
            rnti,
            channel,
            channel_start: Duration::ZERO,
            channel_start_random: false,
            sample: ChannelSample::Outage,
            sdap,
            drbs,
            upf,
            ul_queue: Vec::new(),
            ul_grant: None,
            prbs: 0,
            harq: tcran_control::HarqCounters::default(),
            detached: false,
        }
    }
}

/// The UE's queue at the UPF, before SDAP (thesis ch. 3, second scenario).
/// Its "lower layer" is the UE's TC pipelines (the SDAP buffers): its
/// per-TTI report carries what they handed down to RLC and what they still
/// hold, as USP (thesis Algs. 6-7) expects.
#[derive(Debug)]
pub(crate) struct Upf {
    pub pipeline: Pipeline,
    pub wake: Option<Instant>,
    /// Bytes the UE's TC pipelines released into RLC since the last report.
    pub released: u64,
}

/// The RAN node of one cell. See the crate documentation for the contract.
#[derive(Debug)]
pub struct Gnb {
    pub(crate) now: Instant,
    pub(crate) events: EventQueue<Ev>,
    pub(crate) ul_delay: Duration,
    pub(crate) sr: Option<SrModel>,
    /// The UEs' uplink DRBs and the uplink scheduler; `None` when no UE
    /// has uplink DRBs.
    pub(crate) uplink_drbs: Option<Box<UplinkDrbs>>,
    pub(crate) tc_tick: Option<Duration>,
    pub(crate) mac: Mac,
    /// The MAC's output, reused from decision to decision; boxed so that
    /// the slot handler takes it out of the node and puts it back as a
    /// pointer, not as the whole struct (every slot).
    pub(crate) out: Option<Box<SlotOutput>>,
    /// First slot of the next scheduling decision.
    pub(crate) slot: u64,
    /// The scheduling period (one slot unless configured) and its slots.
    pub(crate) period: Duration,
    pub(crate) period_slots: u64,
    /// One slot of the numerology.
    pub(crate) slot_duration: Duration,
    /// Reports per TDD pattern repetition (`LowerLayerReport::pulls_per_pattern`).
    pub(crate) pulls_per_pattern: u16,
    pub(crate) ues: Vec<Ue>,
    /// UE index by RNTI, sorted by RNTI (without handed-over UEs).
    pub(crate) ue_index: Vec<(Rnti, usize)>,
    /// Outputs as the data path appends them, and those moved on for
    /// [`Gnb::poll_output`] (oldest first).
    pub(crate) outputs: Outputs,
    polled: VecDeque<Output>,
    pub(crate) cell: CellCounters,
    /// The summed KPM volumes of the DRBs of UEs that left the cell by
    /// handover, so that the cell's sums over DRBs only grow
    /// ([`crate::counters`]) when a UE takes its DRBs away.
    pub(crate) departed: tcran_control::KpmCounters,
    timing: Timing,
    pub(crate) scratch: Scratch,
    /// Per-slot buffers kept between slots for their allocations: the
    /// logical channels of every UE in UE order (UE `u`'s from
    /// `lc_base[u]`), what each handed to the MAC, and whether each UE got
    /// a grant.
    pub(crate) slot_lcs: Vec<LcInput<'static>>,
    /// The allocation of the MAC's per-UE inputs, which borrow `slot_lcs`
    /// while a slot is scheduled and are kept empty in between
    /// ([`crate::slot::recycle`]).
    pub(crate) slot_inputs: Vec<UeInput<'static>>,
    pub(crate) lc_base: Vec<usize>,
    /// For EQP: the sizes of every logical channel's next SDUs, one run
    /// per channel in `slot_lcs` order (`LcInput::sdu_sizes` borrows it).
    pub(crate) slot_sdu_sizes: Vec<u32>,
    pub(crate) slot_sdu_runs: Vec<std::ops::Range<usize>>,
    pub(crate) slot_pulled: Vec<u64>,
    pub(crate) slot_granted: Vec<bool>,
    /// Per UE, the MAC's view of the current decision (the reports' MCS,
    /// PRBs and HARQ outcomes).
    pub(crate) slot_mac: Vec<crate::slot::MacView>,
    /// Emptied PDU lists of delivered or lost TBs, for the next TBs.
    pub(crate) pdu_lists: Vec<Vec<RlcPdu>>,
}

/// The IP address of the UE with `rnti` (the address of its PDU session):
/// 10.45.x.y with x.y the RNTI. The node routes downlink packets by it.
pub fn ue_address(rnti: Rnti) -> IpAddr {
    let [hi, lo] = rnti.0.to_be_bytes();
    IpAddr::V4(Ipv4Addr::new(10, 45, hi, lo))
}

/// The RNTI whose [`ue_address`] is `addr`, if any.
pub fn ue_rnti(addr: IpAddr) -> Option<Rnti> {
    match addr {
        IpAddr::V4(a) => match a.octets() {
            [10, 45, hi, lo] => Some(Rnti(u16::from_be_bytes([hi, lo]))),
            _ => None,
        },
        IpAddr::V6(_) => None,
    }
}

impl Gnb {
    /// Builds the node; `base` resolves relative trace paths. Every value
    /// is checked; a mistake names its field.
    pub fn new(cfg: &GnbConfig, base: &Path) -> Result<Gnb, ConfigError> {
        Gnb::build(cfg, base, true)
    }

    /// [`Gnb::new`] for one cell of several: it may start without UEs
    /// (they join by handover, [`Gnb::attach`]).
    pub fn new_cell(cfg: &GnbConfig, base: &Path) -> Result<Gnb, ConfigError> {
        Gnb::build(cfg, base, false)
    }

    fn build(cfg: &GnbConfig, base: &Path, needs_ue: bool) -> Result<Gnb, ConfigError> {
        if let Some(t) = cfg.tc_tick {
            tcran_core::config::check_range(
                "tc_tick",
                t,
                Duration::from_micros(1),
                Duration::from_millis(10),
            )?;
        }
        let mut mac_cfg = cfg.cell.clone();
        mac_cfg.seed ^= cfg.seed;
        let mut mac = Mac::new(mac_cfg.build().map_err(|e| e.within("cell"))?);
        let period = mac.period();
        let period_slots = u64::from(mac.period_slots());
        let slot_duration = mac.slot_duration();
        let pulls_per_pattern = mac.pulls_per_pattern();
        // PRBs x 12 subcarriers x the spacing, 15 kHz x 2^mu (TS 38.211
        // §4.2: slots of 1 ms / 2^mu).
        let occupied_hz = f64::from(mac.n_prb()) * 12.0 * 15e3 * 1e-3 / slot_duration.as_secs_f64();
        if needs_ue && cfg.ues.is_empty() {
            return Err(ConfigError::new("ues", "[]", "must hold at least one UE"));
        }
        let mut ues = Vec::new();
        for (u, uc) in cfg.ues.iter().enumerate() {
            let at = |e: ConfigError| e.within(format!("ues[{u}]"));
            if cfg.ues[..u].iter().any(|o| o.rnti == uc.rnti) {
                return Err(ConfigError::new(
                    format!("ues[{u}].rnti"),
                    uc.rnti,
                    "must be unique",
                ));
            }
            let channel = uc
                .channel
                .build(
                    base,
                    &ChannelContext {
                        seed: cfg.seed,
                        rnti: uc.rnti,
                        bandwidth_hz: occupied_hz,
                    },
                )
                .map_err(|e| at(e.within("channel")))?;
            mac.set_carry_over(Rnti(uc.rnti), uc.channel.carry_over());
            let (channel_start, random_start) =
                uc.channel
                    .recording_start(&channel, cfg.seed, &format!("channel/ue{}", uc.rnti));
            let sdap_cfg = uc.sdap.clone().unwrap_or_else(|| SdapConfig {
                rules: (0..64)
                    .map(|qfi| SdapRule {
                        qfi,
                        drb: uc.drbs.first().map_or(1, |d| d.id),
                    })
                    .collect(),
                ..SdapConfig::default()
            });
            let sdap = sdap_cfg.build().map_err(|e| at(e.within("sdap")))?;
            if uc.drbs.is_empty() {
                return Err(ConfigError::new(
                    format!("ues[{u}].drbs"),
                    "[]",
                    "at least one DRB is needed",
                ));
            }
            let mut drbs = Vec::new();
            for (d, dc) in uc.drbs.iter().enumerate() {
                let at = |e: ConfigError| e.within(format!("ues[{u}].drbs[{d}]"));
                // Packets, reports and controls find a DRB by its id: two
                // DRBs of one UE with the same id would share a buffer's
                // accounting (`id` defaults to 1, so a second DRB without
                // one is such a twin).
                if uc.drbs[..d].iter().any(|o| o.id == dc.id) {
                    return Err(ConfigError::new(
                        format!("ues[{u}].drbs[{d}].id"),
                        dc.id,
                        "must be unique within the UE (a DRB without `id` has id 1)",
                    ));
                }
                drbs.push(Drb::from_config(dc).map_err(at)?);
            }
            let upf = match &uc.upf {
                None => None,
                Some(c) => Some(Upf {
                    pipeline: c
                        .pipeline
                        .build()
                        .map_err(|e| at(e.within("upf.pipeline")))?,
                    wake: None,
                    released: 0,
                }),
            };
            ues.push(Ue {
                channel_start,
                channel_start_random: random_start,
                ..Ue::attached(Rnti(uc.rnti), channel, sdap, drbs, upf)
            });
        }
        let sr = sr_model(&cfg.uplink, &mac).map_err(|e| e.within("uplink"))?;
        let uplink_drbs = UplinkDrbs::new(
            &cfg.ues,
            cfg.cell.uplink.as_ref(),
            &mac,
            base,
            &ChannelContext {
                seed: cfg.seed,
                rnti: 0,
                bandwidth_hz: occupied_hz,
            },
            Instant::ZERO,
        )?
        .map(Box::new);
        let mut ue_index: Vec<(Rnti, usize)> =
            ues.iter().enumerate().map(|(u, ue)| (ue.rnti, u)).collect();
        ue_index.sort_unstable();
        let mut gnb = Gnb {
            now: Instant::ZERO,
            events: EventQueue::default(),
            ul_delay: cfg.ul_delay,
            sr,
            uplink_drbs,
            tc_tick: cfg.tc_tick,
            mac,
            out: Some(Box::default()),
            slot: 0,
            period,
            period_slots,
            slot_duration,
            pulls_per_pattern,
            ues,
            ue_index,
            outputs: Outputs::default(),
            polled: VecDeque::new(),
            cell: CellCounters::default(),
            departed: Default::default(),
            timing: Timing::default(),
            scratch: Scratch::default(),
            slot_lcs: Vec::new(),
            slot_inputs: Vec::new(),
            lc_base: Vec::new(),
            slot_sdu_sizes: Vec::new(),
            slot_sdu_runs: Vec::new(),
            slot_pulled: Vec::new(),
            slot_granted: Vec::new(),
            slot_mac: Vec::new(),
            pdu_lists: Vec::new(),
        };
        gnb.events.schedule(Instant::ZERO, Ev::Slot);
        Ok(gnb)
    }

    // ------------------------------------------------------------ inputs

    /// A packet from the core network for one of the cell's UEs (routed by
    /// its destination address, [`ue_address`]). Its `id` is the caller's:
    /// the node tells packets apart by it.
    #[inline(always)]
    pub fn downlink(&mut self, packet: Packet, now: Instant) {
        self.advance(now);
        self.at_gnb(packet);
    }

    /// A packet the IP layer of UE `rnti` sends (a TCP ACK, an echo reply):
    /// it goes up through the uplink model and comes out as
    /// [`Output::Uplink`].
    #[inline]
    pub fn uplink(&mut self, rnti: Rnti, packet: Packet, now: Instant) {
        self.advance(now);
        match self.ue_of(rnti) {
            Some(u) => self.uplink_from(u, packet),
            None => self.count_drop(Layer::Uplink, DropReason::NoRoute, packet),
        }
    }

    /// Runs the node's events due before `now` (not those due at `now`:
    /// an input at `now` comes first) and moves the node's time to `now`.
    #[inline]
    pub(crate) fn advance(&mut self, now: Instant) {
        while self.events.peek_time().is_some_and(|t| t < now) {
            self.step(now);
        }
        self.now = self.now.max(now);
    }

    // ------------------------------------------------------------ timers

    /// When the node next needs [`Gnb::on_timeout`]: there is always a next
    /// slot, so this is never `None` for a node that runs.
    pub fn next_wakeup(&self) -> Option<Instant> {
        self.events.peek_time()
    }

    /// Runs every event due by `now`, each at its own time (see the crate
    /// documentation on late wake-ups).
    pub fn on_timeout(&mut self, now: Instant) {
        while self.step(now) {}
        self.now = self.now.max(now);
    }

    /// Runs the earliest event if it is due by `now`; returns whether there
    /// was one. Outputs may be polled after every step.
    #[inline]
    pub fn step(&mut self, now: Instant) -> bool {
        if self.events.peek_time().is_none_or(|t| t > now) {
            return false;
        }
        let (t, ev) = self.events.pop().expect("peeked");
        self.timing.record(t, now);
        self.now = t;
        self.handle(ev);
        true
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::Slot => self.on_slot(),
            Ev::UpfWake(u) => {
                if let Some(upf) = self.ues[u].upf.as_mut() {
                    if upf.wake == Some(self.now) {
                        upf.wake = None;
                        self.upf_egress(u);
                    }
                }
            }
            // A handed-over UE has no bearers left: its timers find none.
            Ev::TcWake(u, d) => {
                if self.ues[u]
                    .drbs
                    .get(d)
                    .is_some_and(|x| x.tc_wake == Some(self.now))
                {
                    self.ues[u].drbs[d].tc_wake = None;
                    self.egress(u, d);
                }
            }
            Ev::RlcWake(u, d) => {
                if self.ues[u]
                    .drbs
                    .get(d)
                    .is_some_and(|x| x.rlc_wake == Some(self.now))
                {
                    self.ues[u].drbs[d].rlc_wake = None;
                    self.rlc_timers(u, d);
                }
            }
            Ev::AtUe(u, pdus) => self.at_ue(u, pdus),
            Ev::StatusAtGnb(u, d, status) => {
                if d < self.ues[u].drbs.len() {
                    self.status_at_gnb(u, d, &status);
                }
            }
            Ev::UlGrant(u) => self.ul_grant(u),
        }
    }

    // ----------------------------------------------------------- outputs

    /// Whether there is an output to poll or take.
    #[inline]
    pub fn has_outputs(&self) -> bool {
        !self.outputs.list.is_empty() || !self.polled.is_empty()
    }

    /// The next output, oldest first.
    pub fn poll_output(&mut self) -> Option<Output> {
        if self.polled.is_empty() {
            self.polled.extend(self.outputs.list.drain(..));
        }
        self.polled.pop_front()
    }

    /// Moves every pending output to the end of `into`, oldest first: the
    /// batch form of [`Gnb::poll_output`], for drivers that handle many
    /// outputs per call (an empty `into` is swapped with the node's buffer,
    /// so no packet is copied and both allocations are kept).
    #[inline]
    pub fn take_outputs(&mut self, into: &mut Vec<Output>) {
        if !self.polled.is_empty() {
            into.extend(self.polled.drain(..));
        }
        if into.is_empty() {
            std::mem::swap(into, &mut self.outputs.list);
        } else {
            into.append(&mut self.outputs.list);
        }
    }

    /// Reports the CE marks the pipelines and RLC buffers made since the
    /// node last looked, as [`Output::Marked`].
    pub fn collect_marks(&mut self, now: Instant) {
        self.advance(now);
        for drb in self.ues.iter_mut().flat_map(|ue| &mut ue.drbs) {
            drb.collect_marks(self.now, &mut self.outputs);
        }
    }

    pub(crate) fn count_drop(&mut self, layer: Layer, reason: DropReason, packet: Packet) {
        self.outputs.drop(layer, reason, packet, self.now);
    }

    // -------------------------------------------------------------- views

    /// Index in `ues` of the UE with `rnti`.
    pub(crate) fn ue_of(&self, rnti: Rnti) -> Option<usize> {
        self.ue_index
            .binary_search_by_key(&rnti, |&(r, _)| r)
            .ok()
            .map(|i| self.ue_index[i].1)
    }

    /// The UE (index) a downlink packet is for, by destination address.
    pub(crate) fn route(&self, p: &Packet) -> Option<usize> {
        ue_rnti(p.tuple.dst).and_then(|r| self.ue_of(r))
    }

    /// The node's time: that of the last event run or input taken.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// The scheduling period: one slot, or the configured period.
    pub fn period(&self) -> Duration {
        self.period
    }

    /// Slots per scheduling decision.
    pub fn period_slots(&self) -> u64 {
        self.period_slots
    }

    /// The MAC (its parameters: numerology, PRBs, TDD pattern...).
    pub fn mac(&self) -> &Mac {
        &self.mac
    }

    /// The UEs' RNTIs and their DRB ids, in configuration order.
    pub fn drb_ids(&self) -> impl Iterator<Item = (Rnti, DrbId)> + '_ {
        self.ues
            .iter()
            .flat_map(|u| u.drbs.iter().map(move |d| (u.rnti, d.id)))
    }

    /// Read access to DRB `drb` of UE `rnti`.
    pub fn drb(&self, rnti: Rnti, drb: DrbId) -> Option<DrbRef<'_>> {
        let ue = &self.ues[self.ue_of(rnti)?];
        let drb = ue.drbs.iter().find(|d| d.id == drb)?;
        Some(DrbRef { ue, drb })
    }

    /// How loaded the other cells are, in the order of the interferers of
    /// this cell's geometry channels: each UE's SINR counts an
    /// interferer's power times its load from the next slot on
    /// ([`tcran_ran::channel::GeometryChannel::set_interferer_loads`]).
    /// A driver of several cells calls it as their PRB use changes; other
    /// channels ignore it.
    pub fn set_interferer_loads(&mut self, loads: &[f64]) {
        for ue in &mut self.ues {
            ue.channel.set_interferer_loads(loads);
        }
    }

    /// The UEs whose channel recording starts at a point drawn from the
    /// seed, with that point (what a seed varies in the channel).
    pub fn random_channel_starts(&self) -> impl Iterator<Item = (Rnti, Duration)> + '_ {
        self.ues
            .iter()
            .filter(|ue| ue.channel_start_random)
            .map(|ue| (ue.rnti, ue.channel_start))
    }

    /// The UEs whose own uplink channel (`uplink_channel`) starts its
    /// recording at a point drawn from the seed, with that point.
    pub fn random_uplink_channel_starts(&self) -> impl Iterator<Item = (Rnti, Duration)> + '_ {
        self.uplink_drbs
            .iter()
            .flat_map(|ul| ul.ues.iter().zip(&ul.own_channels))
            .filter_map(|(ue, c)| {
                let c = c.as_ref().filter(|c| c.start_drawn)?;
                Some((ue.rnti(), c.start))
            })
    }

    /// Every DRB, in configuration order.
    pub fn drbs(&self) -> impl Iterator<Item = DrbRef<'_>> + '_ {
        self.ues
            .iter()
            .flat_map(|ue| ue.drbs.iter().map(move |drb| DrbRef { ue, drb }))
    }

    /// Cell-wide counters since the node was built.
    pub fn cell_counters(&self) -> &CellCounters {
        &self.cell
    }

    /// Drops by layer and reason label since the node was built.
    pub fn drop_counts(&self) -> &BTreeMap<(Layer, &'static str), u64> {
        &self.outputs.drops
    }

    /// CE marks by layer and reason label, as far as collected
    /// ([`Gnb::collect_marks`]).
    pub fn mark_counts(&self) -> &BTreeMap<(Layer, &'static str), u64> {
        &self.outputs.marks
    }

    /// How late the node's events ran (late wake-ups of a wall clock).
    pub fn timing(&self) -> &Timing {
        &self.timing
    }
}

/// One DRB of one UE, read-only: what an xApp or a report reads.
#[derive(Debug, Clone, Copy)]
pub struct DrbRef<'a> {
    ue: &'a Ue,
    drb: &'a Drb,
}

impl<'a> DrbRef<'a> {
    pub fn rnti(&self) -> Rnti {
        self.ue.rnti
    }
    pub fn id(&self) -> DrbId {
        self.drb.id
    }
    /// The pipeline's configuration as it stands (after earlier changes).
    pub fn config(&self) -> PipelineConfig {
        self.drb.pipeline.config()
    }
    pub fn stats(&self, now: Instant) -> PipelineStats {
        self.drb.pipeline.stats(now)
    }
    pub fn pipeline(&self) -> &'a Pipeline {
        &self.drb.pipeline
    }
    /// The RLC transmit buffer (what a BSR would report).
    pub fn rlc_buffer(&self) -> BufferStatus {
        self.drb.tx.buffer_status()
    }
    pub fn rlc_tx(&self) -> &'a RlcTx {
        &self.drb.tx
    }
    pub fn rlc_rx(&self) -> &'a RlcRx {
        &self.drb.rx
    }
    pub fn pdcp_rx(&self) -> &'a PdcpRx {
        &self.drb.pdcp
    }
    /// The UE's channel at the last scheduling decision (MCS or capacity).
    pub fn channel(&self) -> ChannelSample {
        self.ue.sample
    }
    /// The last per-TTI report its pipeline got.
    pub fn last_tti(&self) -> &'a TtiRecord {
        &self.drb.last_tti
    }
    pub fn counters(&self) -> &'a DrbCounters {
        &self.drb.counters
    }
    /// PRB·slots granted to the DRB's UE so far (new data and HARQ
    /// retransmissions; the MAC grants PRBs per UE, and the UE's DRBs
    /// share them).
    pub fn ue_prbs(&self) -> u64 {
        self.ue.prbs
    }
    /// The MAC's HARQ counters of the DRB's UE so far (per UE, as
    /// [`DrbRef::ue_prbs`]).
    pub fn ue_harq(&self) -> tcran_control::HarqCounters {
        self.ue.harq
    }
    /// The lowest QoS flow its UE's SDAP maps onto this DRB, if any.
    pub fn lowest_qfi(&self) -> Option<tcran_core::Qfi> {
        self.ue.sdap.qfis_of(self.drb.id).min()
    }
    /// Whether this is the UE's first DRB (where per-UE quantities such
    /// as [`DrbRef::ue_prbs`] are counted once when summing over DRBs).
    pub fn is_first_of_ue(&self) -> bool {
        self.ue.drbs.first().is_some_and(|d| d.id == self.drb.id)
    }
}

impl Gnb {
    /// The DRB SDAP maps QFI `qfi` of UE `rnti` to (its rules are fixed:
    /// every packet of a QoS flow takes the same DRB).
    pub fn sdap_drb(&self, rnti: Rnti, qfi: tcran_core::Qfi) -> Option<DrbId> {
        let ue = &self.ues[self.ue_of(rnti)?];
        ue.sdap.map(qfi).ok().map(|m| m.drb)
    }
}
