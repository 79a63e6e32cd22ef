//! The downlink simulator: servers -> core network -> UPF/gNB (SDAP, TC
//! pipeline, RLC) -> MAC/HARQ -> UE (RLC reassembly, applications) and the
//! uplink back (ACKs, echo replies, RLC status PDUs).
//!
//! Contract:
//! - Deterministic: events run in `(time, sequence)` order and every random
//!   draw comes from a stream seeded by the run seed and the entity's name,
//!   so a scenario and a seed give byte-identical results.
//! - Time: the MAC runs one event per slot, or per scheduling period when
//!   `cell.scheduling_period` is set (the thesis emulator's 10-ms TTI): it
//!   then schedules the resources of all the period's DL slots at once,
//!   every pipeline gets its per-TTI report once per period with `tti` =
//!   the period, and the channel is sampled once per period (a capacity
//!   trace for the bytes of the whole period, an MCS channel at the
//!   period's start). The TC egress runs right after
//!   every arrival and every slot report, and again whenever the pipeline's
//!   `next_wakeup()` says a refusal may turn into a yes (pacers release
//!   bytes as the TTI elapses, thesis Fig. 3.4; shapers refill), rounded up
//!   to the `tc_tick` timer grid when one is configured. Endpoints and RLC
//!   entities wake at their own `next_wakeup`.
//! - A transport block sent in slot n reaches the UE at the end of slot n
//!   (with a scheduling period: at the end of the period), or later, after
//!   HARQ retransmissions.
//! - Every packet that leaves the data path is counted with its layer and
//!   reason; the summary's packet ledger checks `created = delivered +
//!   dropped + in flight` for the downlink.
//! - Uplink: ACKs, echo replies and RLC status PDUs take `ul_delay`; with
//!   the scenario's `uplink` scheduling-request model they first wait for
//!   the UE's next SR occasion, the grant delay and (TDD) a U slot, and go
//!   up together with everything the UE queued by then ([`SrModel`]).
//! - A UE may have a queue at the UPF (its own pipeline) before SDAP; its
//!   per-TTI report describes the UE's TC queues below it.
//! - Scheduled events and controllers run as events of their own, between
//!   packet events; each change is applied atomically and recorded
//!   ([`crate::controller`]).
//! - The time series ([`crate::series`]) cost O(1) per delivered packet,
//!   drop and slot; CE marks are read from the pipelines' counters at the
//!   end of every series bin and before every reconfiguration.

mod ledger;

use crate::controller::{
    deploy_controls, describe, Action, AnyController, Command, ControlView, Controller, DrbView,
    FlowView,
};
use crate::event::EventQueue;
use crate::metrics::{DelayRecorder, TimeSeries};
use crate::recorder::{SeriesRecorder, CDF_POINTS};
use crate::report::{
    FlowSummary, LayerDelays, PacketCounts, ReconfigCounts, RlcSummary, RunSummary,
};
use crate::scenario::{FlowKind, SimConfig};
use crate::series::Reconfiguration;
use crate::RunOutput;
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use tcran_core::reason::MarkCounts;
use tcran_core::rng::RngStream;
use tcran_core::{
    ConfigError, DrbId, DropReason, Dscp, Duration, FiveTuple, FlowId, Instant, MarkReason, Packet,
    PacketId, Protocol, Qfi, Rnti, Stamp,
};
use tcran_ran::mac::{LcInput, Mac, SlotOutput, UeInput};
use tcran_ran::pdcp::PdcpRx;
use tcran_ran::rlc::{RlcMode, RlcPdu, RlcRx, RlcTx, SduDeparture, StatusPdu};
use tcran_ran::sdap::{Sdap, SdapConfig, SdapRule};
use tcran_ran::{AnyChannel, Channel, ChannelSample};
use tcran_tc::{LowerLayerReport, Pipeline, PipelineConfig};
use tcran_traffic::sources::{
    GamingSource, PacketSource, PeriodicSource, PingResponder, Pinger, UdpSink, VideoSource,
    WebPageModel, WebServer,
};
use tcran_traffic::{FlowSpec, TcpReceiver, TcpSender};

#[derive(Debug)]
enum Ev {
    Slot,
    /// End of a series bin: sample TCP state and TC marks.
    Bin,
    /// Scheduled reconfiguration `usize` is due.
    Scheduled(usize),
    /// Controller `usize` is due.
    Control(usize),
    /// The UPF queue of UE `usize` may release packets.
    UpfWake(usize),
    TcWake(usize, usize),
    ServerWake(usize),
    ClientWake(usize),
    RlcWake(usize, usize),
    /// A downlink packet reached the gNB (after the core network). Packets
    /// are boxed so heap entries stay small: the event heap moves entries on
    /// every push and pop.
    AtGnb(Box<Packet>),
    /// An uplink packet reached its server.
    AtServer(Box<Packet>),
    /// A transport block was decoded by UE `usize`.
    AtUe(usize, Vec<RlcPdu>),
    /// An RLC status PDU reached the gNB for (UE, DRB).
    StatusAtGnb(usize, usize, StatusPdu),
    /// UE `usize`'s uplink grant: what it queued goes up now.
    UlGrant(usize),
}

/// Something a UE sends in the uplink.
#[derive(Debug)]
enum UlItem {
    /// A TCP ACK or echo reply for its server.
    Server(Box<Packet>),
    /// An RLC status PDU for DRB `usize` of the UE.
    Status(usize, StatusPdu),
}

/// The uplink scheduling-request / grant model (scenario `uplink`).
#[derive(Debug)]
struct SrModel {
    /// SR period in slots; `None`: a request can go at any instant.
    period_slots: Option<u64>,
    grant_delay: Duration,
    slot: Duration,
    /// TDD: slots per pattern and the indexes of its U slots (empty: FDD or
    /// a pattern without U slot, no rounding).
    pattern_slots: u64,
    u_slots: Vec<u64>,
}

impl SrModel {
    /// When UE `rnti`, which has uplink data from `t` on and no grant,
    /// transmits: its next SR occasion at or after `t` (slot s with
    /// (s - rnti) mod P = 0), plus the grant delay, rounded up to the start
    /// of the next U slot in TDD.
    fn transmit_at(&self, rnti: u16, t: Instant) -> Instant {
        let slot = self.slot.as_nanos();
        let mut at = t;
        if let Some(p) = self.period_slots {
            let s0 = t.as_nanos().div_ceil(slot);
            let r = u64::from(rnti) % p;
            let s = s0 + (r + p - s0 % p) % p;
            at = Instant::from_nanos(s * slot);
        }
        at += self.grant_delay;
        if !self.u_slots.is_empty() {
            let s0 = at.as_nanos().div_ceil(slot);
            let base = s0 - s0 % self.pattern_slots;
            let s = self
                .u_slots
                .iter()
                .map(|&u| {
                    let c = base + u;
                    if c < s0 {
                        c + self.pattern_slots
                    } else {
                        c
                    }
                })
                .min()
                .expect("at least one U slot");
            at = Instant::from_nanos(s * slot);
        }
        at
    }
}

#[derive(Debug)]
struct Drb {
    id: DrbId,
    priority: u8,
    pipeline: Pipeline,
    tx: RlcTx,
    rx: RlcRx,
    /// The UE's PDCP receiver (reordering).
    pdcp: PdcpRx,
    rlc_wake: Option<Instant>,
    tc_wake: Option<Instant>,
    /// RLC occupancy (payload bytes awaiting transmission) per slot.
    occupancy: TimeSeries,
    occupancy_max: u64,
    rlc_sojourn: DelayRecorder,
    /// CE marks of the pipeline's queues when last looked at (marks are
    /// counted inside the pipeline; the engine collects the increase).
    marks_seen: MarkCounts,
    /// The same for the RLC buffer's AQM.
    rlc_marks_seen: MarkCounts,
    /// Whole-run RLC departures and the sum of their sojourns (controllers
    /// take differences).
    departed: u64,
    sojourn_sum_ns: u64,
    /// Whole-run packets delivered to the UE from this DRB and the sum of
    /// their times from RLC entry to delivery.
    delivered: u64,
    rlc_delay_sum_ns: u64,
    /// Ids of the last packets delivered to the UE (a ring): an AM
    /// transmitter may give up on an SDU the UE already has (its
    /// acknowledgement was still on the way), which is no loss.
    recent: Vec<PacketId>,
    recent_next: usize,
    /// Packets counted as dropped by an RLC AM give-up whose segments may
    /// still complete at the UE (rare; the drop is withdrawn if they do).
    given_up: Vec<(PacketId, Option<FlowId>)>,
}

/// Deliveries remembered per DRB: more than an AM window's worth of
/// packets delivered in the time a transmitter takes to give up.
const RECENT_DELIVERIES: usize = 8192;

/// A scheduled change: who, where (`None` = every UE / DRB), what.
#[derive(Debug)]
struct Scheduled {
    ue: Option<u16>,
    drb: Option<u8>,
    action: Action,
}

/// A controller with its schedule, scope and the counters it last saw.
#[derive(Debug)]
struct ControllerSlot {
    name: String,
    period: Duration,
    ue: Option<u16>,
    drb: Option<u8>,
    controller: AnyController,
    /// Per (UE, DRB): (departed, sojourn sum, delivered, RLC delay sum) at
    /// the previous call.
    prev_drb: BTreeMap<(usize, usize), [u64; 4]>,
    /// Per flow: (bytes, delay sum ns, packets) at the previous call.
    prev_flow: Vec<(u64, u64, u64)>,
    prev_at: Instant,
}

#[derive(Debug)]
struct Ue {
    rnti: Rnti,
    channel: AnyChannel,
    sample: ChannelSample,
    sdap: Sdap,
    drbs: Vec<Drb>,
    upf: Option<Upf>,
    /// TCP ACKs and echo replies waiting for the grant at `ul_grant` (SR
    /// model only); STATUS PDUs are built at the grant.
    ul_queue: Vec<Packet>,
    ul_grant: Option<Instant>,
}

/// The UE's queue at the UPF, before SDAP (thesis ch. 3, second scenario).
/// Its "lower layer" is the UE's TC pipelines (the SDAP buffers): its
/// per-TTI report carries what they handed down to RLC and what they still
/// hold, as USP (thesis Algs. 6-7) expects.
#[derive(Debug)]
struct Upf {
    pipeline: Pipeline,
    wake: Option<Instant>,
    /// Bytes the UE's TC pipelines released into RLC since the last report.
    released: u64,
}

// One per flow, not per packet: size differences do not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Source {
    Periodic(PeriodicSource),
    Gaming(GamingSource),
    Video(VideoSource),
}

impl PacketSource for Source {
    fn next_send(&self) -> Option<Instant> {
        match self {
            Source::Periodic(s) => s.next_send(),
            Source::Gaming(s) => s.next_send(),
            Source::Video(s) => s.next_send(),
        }
    }
    fn poll(&mut self, now: Instant) -> Option<Packet> {
        match self {
            Source::Periodic(s) => s.poll(now),
            Source::Gaming(s) => s.poll(now),
            Source::Video(s) => s.poll(now),
        }
    }
}

/// The server side of a TCP flow: a bulk/sized download or web pages.
/// Already boxed in `Endpoints`, one per flow: sizes do not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum TcpServer {
    Download(TcpSender),
    Web(WebServer),
}

impl TcpServer {
    fn sender(&self) -> &TcpSender {
        match self {
            TcpServer::Download(t) => t,
            TcpServer::Web(w) => &w.tcp,
        }
    }
    fn on_timer(&mut self, now: Instant) {
        match self {
            TcpServer::Download(t) => t.on_timer(now),
            TcpServer::Web(w) => w.on_timer(now),
        }
    }
    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        match self {
            TcpServer::Download(t) => t.poll_transmit(now),
            TcpServer::Web(w) => w.poll_transmit(now),
        }
    }
    fn next_wakeup(&self) -> Option<Instant> {
        match self {
            TcpServer::Download(t) => t.next_wakeup(),
            TcpServer::Web(w) => w.next_wakeup(),
        }
    }
    fn on_packet(&mut self, p: &Packet, now: Instant) {
        match self {
            TcpServer::Download(t) => t.on_packet(p, now),
            TcpServer::Web(w) => w.on_packet(p, now),
        }
    }
}

#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Endpoints {
    Tcp {
        tx: Box<TcpServer>,
        rx: Box<TcpReceiver>,
    },
    Udp {
        src: Source,
        sink: UdpSink,
    },
    Ping {
        pinger: Pinger,
        responder: PingResponder,
    },
}

#[derive(Debug)]
struct Flow {
    name: String,
    kind: &'static str,
    ends: Endpoints,
    server_wake: Option<Instant>,
    client_wake: Option<Instant>,
    delay: DelayRecorder,
    layers: LayerDelays,
    delivered_bytes: u64,
    lost: u64,
    /// Whole run: packets the server sent (the ledger).
    created: u64,
    rnti: u16,
    /// Index of the flow's UE.
    ue: usize,
    tuple: FiveTuple,
    /// DRB of the flow's last packet at the gNB.
    drb: Option<u8>,
    /// Whole run (controllers take differences): bytes, delay sum, packets.
    total_bytes: u64,
    total_delay_ns: u64,
    total_packets: u64,
}

/// The simulator of one scenario run.
#[derive(Debug)]
pub struct Sim {
    now: Instant,
    end: Instant,
    warmup_end: Instant,
    core_delay: Duration,
    ul_delay: Duration,
    sr: Option<SrModel>,
    tc_tick: Option<Duration>,
    events: EventQueue<Ev>,
    next_id: u64,
    mac: Mac,
    out: SlotOutput,
    /// First slot of the next scheduling decision.
    slot: u64,
    /// The scheduling period (one slot unless configured) and its slots.
    period: Duration,
    period_slots: u64,
    ues: Vec<Ue>,
    flows: Vec<Flow>,
    prbs_used: u64,
    prbs_available: u64,
    drops: BTreeMap<(&'static str, &'static str), u64>,
    marks: BTreeMap<(&'static str, &'static str), u64>,
    series: SeriesRecorder,
    scheduled: Vec<Scheduled>,
    controllers: Vec<ControllerSlot>,
    reconfig_counts: ReconfigCounts,
    packets: PacketCounts,
    scratch_departures: Vec<SduDeparture>,
    scratch_packets: Vec<Packet>,
    /// PDCP COUNTs of the SDUs an RLC receiver just delivered, and those
    /// SDUs on their way through PDCP (`pdcp_in`).
    scratch_counts: Vec<u64>,
    scratch_pdcp: Vec<Packet>,
    scratch_aqm_drops: Vec<(Packet, DropReason)>,
    scratch_up: Vec<Packet>,
    /// UE index by RNTI, sorted by RNTI.
    ue_index: Vec<(Rnti, usize)>,
    /// Per-slot buffers kept between slots for their allocations: the
    /// logical channels of every UE in UE order (UE `u`'s from
    /// `lc_base[u]`), what each handed to the MAC, and whether each UE got a
    /// grant.
    slot_lcs: Vec<LcInput<'static>>,
    lc_base: Vec<usize>,
    slot_pulled: Vec<u64>,
    slot_granted: Vec<bool>,
    /// Emptied PDU lists of delivered or lost TBs, for the next TBs.
    pdu_lists: Vec<Vec<RlcPdu>>,
}

/// Takes every packet `src` has due by `now`; returns when it is next due.
fn drain_due(src: &mut impl PacketSource, now: Instant, out: &mut Vec<Packet>) -> Option<Instant> {
    while let Some(p) = src.poll(now) {
        out.push(p);
    }
    src.next_send()
}

fn server_addr(flow: usize) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(198, 51, 100, 1 + (flow % 250) as u8))
}
fn ue_addr(rnti: u16) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 45, (rnti >> 8) as u8, rnti as u8))
}

/// The RNTI whose [`ue_addr`] is `addr`, if any.
fn addr_rnti(addr: IpAddr) -> Option<Rnti> {
    match addr {
        IpAddr::V4(a) => match a.octets() {
            [10, 45, hi, lo] => Some(Rnti(u16::from_be_bytes([hi, lo]))),
            _ => None,
        },
        IpAddr::V6(_) => None,
    }
}

impl Sim {
    /// Builds the run; `base` resolves relative trace paths.
    pub fn new(cfg: &SimConfig, base: &Path) -> Result<Sim, ConfigError> {
        if cfg.duration.is_zero() {
            return Err(ConfigError::new("duration", cfg.duration, "must be > 0"));
        }
        if cfg.warmup >= cfg.duration {
            return Err(ConfigError::new(
                "warmup",
                cfg.warmup,
                format!("must be shorter than duration ({})", cfg.duration),
            ));
        }
        // A run without UEs or flows measures nothing: an empty table is
        // never what was meant.
        if cfg.ues.is_empty() {
            return Err(ConfigError::new("ues", "[]", "must hold at least one UE"));
        }
        if cfg.flows.is_empty() {
            return Err(ConfigError::new(
                "flows",
                "[]",
                "must hold at least one flow (a run without traffic measures nothing)",
            ));
        }
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
        let mac = Mac::new(mac_cfg.build().map_err(|e| e.within("cell"))?);
        let period = mac.period();
        let period_slots = u64::from(mac.period_slots());
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
                .build(base)
                .map_err(|e| at(e.within("channel")))?;
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
                let rlc = dc.rlc.build().map_err(|e| at(e.within("rlc")))?;
                let pdcp = dc.pdcp.build().map_err(|e| at(e.within("pdcp")))?;
                let pipeline = dc
                    .pipeline
                    .clone()
                    .unwrap_or_else(|| PipelineConfig::single_queue(Default::default()))
                    .build()
                    .map_err(|e| at(e.within("pipeline")))?;
                drbs.push(Drb {
                    id: DrbId(dc.id),
                    priority: dc.priority,
                    pipeline,
                    tx: RlcTx::new(rlc.clone(), DrbId(dc.id)),
                    rx: RlcRx::new(rlc, DrbId(dc.id)),
                    pdcp: PdcpRx::new(pdcp),
                    rlc_wake: None,
                    tc_wake: None,
                    occupancy: TimeSeries::new(Duration::from_millis(10)),
                    occupancy_max: 0,
                    rlc_sojourn: DelayRecorder::default(),
                    marks_seen: MarkCounts::default(),
                    rlc_marks_seen: MarkCounts::default(),
                    departed: 0,
                    sojourn_sum_ns: 0,
                    delivered: 0,
                    rlc_delay_sum_ns: 0,
                    recent: Vec::new(),
                    recent_next: 0,
                    given_up: Vec::new(),
                });
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
                rnti: Rnti(uc.rnti),
                channel,
                sample: ChannelSample::Outage,
                sdap,
                drbs,
                upf,
                ul_queue: Vec::new(),
                ul_grant: None,
            });
        }
        let end = Instant::ZERO + cfg.duration;
        let mut flows = Vec::new();
        for (i, fc) in cfg.flows.iter().enumerate() {
            let at = |e: ConfigError| e.within(format!("flows[{i}]"));
            let Some(ue_index) = ues.iter().position(|u| u.rnti == Rnti(fc.ue)) else {
                return Err(ConfigError::new(
                    format!("flows[{i}].ue"),
                    fc.ue,
                    "must be the rnti of a configured UE",
                ));
            };
            tcran_core::config::check_range("qfi", fc.qfi, 0, 63).map_err(at)?;
            tcran_core::config::check_range("dscp", fc.dscp, 0, 63).map_err(at)?;
            let proto = match fc.kind {
                FlowKind::Tcp { .. } | FlowKind::Web { .. } => Protocol::TCP,
                FlowKind::Ping { .. } => Protocol::ICMP,
                _ => Protocol::UDP,
            };
            let (sport, dport) = if proto == Protocol::ICMP {
                (0, 0)
            } else {
                (5000 + i as u16, 40000 + i as u16)
            };
            let mut spec = FlowSpec::new(
                FlowId(i as u32),
                FiveTuple {
                    src: server_addr(i),
                    dst: ue_addr(fc.ue),
                    sport,
                    dport,
                    proto,
                },
            );
            spec.dscp = Dscp(fc.dscp);
            spec.qfi = Qfi(fc.qfi);
            let start = Instant::ZERO + fc.start;
            let stop = fc.stop.map(|s| Instant::ZERO + s);
            let rng = |what: &str| RngStream::new(cfg.seed, &format!("flow/{}/{what}", fc.name));
            let ends = match &fc.kind {
                FlowKind::Tcp { tcp, size } => {
                    let params = tcp.build().map_err(|e| at(e.within("tcp")))?;
                    let mut tx = TcpSender::new(params.clone(), spec, rng("tcp"));
                    match size {
                        None => tx = tx.bulk(),
                        Some(b) => tx.write(b.0),
                    }
                    let rx = TcpReceiver::new(params, spec);
                    Endpoints::Tcp {
                        tx: Box::new(TcpServer::Download(tx)),
                        rx: Box::new(rx),
                    }
                }
                FlowKind::Web { tcp, reading_mean } => {
                    let params = tcp.build().map_err(|e| at(e.within("tcp")))?;
                    let mut model = WebPageModel::default();
                    if let Some(r) = reading_mean {
                        tcran_core::config::check_range(
                            "reading_mean",
                            *r,
                            Duration::from_millis(1),
                            Duration::from_secs(3600),
                        )
                        .map_err(at)?;
                        model.reading_mean = *r;
                        model.reading_max = Duration::from_nanos(r.as_nanos() * 7 / 5);
                    }
                    let tx = TcpSender::new(params.clone(), spec, rng("tcp"));
                    let server = WebServer::new(tx, model, rng("web"), start);
                    Endpoints::Tcp {
                        tx: Box::new(TcpServer::Web(server)),
                        rx: Box::new(TcpReceiver::new(params, spec)),
                    }
                }
                FlowKind::Video {
                    fps,
                    frame_size,
                    iframe_size,
                    iframe_period,
                    mtu,
                } => Endpoints::Udp {
                    src: Source::Video(
                        VideoSource::new(
                            spec,
                            *fps,
                            frame_size.0,
                            iframe_size.map_or(frame_size.0, |b| b.0),
                            *iframe_period,
                            mtu.0 as u32,
                            start,
                            stop,
                        )
                        .map_err(at)?,
                    ),
                    sink: UdpSink::default(),
                },
                FlowKind::Voip {} => Endpoints::Udp {
                    src: Source::Periodic(PeriodicSource::voip_g711(spec, start, stop)),
                    sink: UdpSink::default(),
                },
                FlowKind::Cbr { rate, size } => Endpoints::Udp {
                    src: Source::Periodic(
                        PeriodicSource::cbr(spec, *rate, size.0 as u32, start, stop).map_err(at)?,
                    ),
                    sink: UdpSink::default(),
                },
                FlowKind::Gaming { mean, sd, size } => Endpoints::Udp {
                    src: Source::Gaming(
                        GamingSource::new(
                            spec,
                            size.0 as u32,
                            *mean,
                            *sd,
                            rng("gaming"),
                            start,
                            stop,
                        )
                        .map_err(at)?,
                    ),
                    sink: UdpSink::default(),
                },
                FlowKind::Ping { interval, size } => Endpoints::Ping {
                    pinger: Pinger::new(spec, i as u16, size.0 as u32, *interval, start, stop)
                        .map_err(at)?,
                    responder: PingResponder::default(),
                },
            };
            flows.push(Flow {
                name: fc.name.clone(),
                kind: fc.kind.name(),
                ends,
                server_wake: None,
                client_wake: None,
                delay: DelayRecorder::default(),
                layers: LayerDelays::default(),
                delivered_bytes: 0,
                lost: 0,
                created: 0,
                rnti: fc.ue,
                ue: ue_index,
                tuple: spec.tuple,
                drb: None,
                total_bytes: 0,
                total_delay_ns: 0,
                total_packets: 0,
            });
        }
        if cfg.series_bin < Duration::from_millis(1) || cfg.series_bin > cfg.duration {
            return Err(ConfigError::new(
                "series_bin",
                cfg.series_bin,
                format!("must be between 1ms and the duration ({})", cfg.duration),
            ));
        }
        let sr = sr_model(cfg, &mac).map_err(|e| e.within("uplink"))?;
        let series = SeriesRecorder::new(cfg.series_bin, end, period, flows.len(), |i| {
            matches!(flows[i].ends, Endpoints::Tcp { .. })
        });
        let mut sim = Sim {
            now: Instant::ZERO,
            end,
            warmup_end: Instant::ZERO + cfg.warmup,
            core_delay: cfg.core_delay,
            ul_delay: cfg.ul_delay,
            sr,
            tc_tick: cfg.tc_tick,
            events: EventQueue::default(),
            next_id: 0,
            mac,
            out: SlotOutput::default(),
            slot: 0,
            period,
            period_slots,
            ues,
            flows,
            prbs_used: 0,
            prbs_available: 0,
            drops: BTreeMap::new(),
            marks: BTreeMap::new(),
            series,
            scheduled: Vec::new(),
            controllers: Vec::new(),
            reconfig_counts: ReconfigCounts::default(),
            packets: PacketCounts::default(),
            scratch_departures: Vec::new(),
            scratch_packets: Vec::new(),
            scratch_counts: Vec::new(),
            scratch_pdcp: Vec::new(),
            scratch_aqm_drops: Vec::new(),
            scratch_up: Vec::new(),
            ue_index: Vec::new(),
            slot_lcs: Vec::new(),
            lc_base: Vec::new(),
            slot_pulled: Vec::new(),
            slot_granted: Vec::new(),
            pdu_lists: Vec::new(),
        };
        sim.ue_index = sim
            .ues
            .iter()
            .enumerate()
            .map(|(u, ue)| (ue.rnti, u))
            .collect();
        sim.ue_index.sort_unstable();
        sim.events.schedule(Instant::ZERO, Ev::Slot);
        let first_bin = Instant::ZERO + sim.series.bin();
        sim.events.schedule(first_bin.min(end), Ev::Bin);
        for (i, fc) in cfg.flows.iter().enumerate() {
            sim.wake_server(i, Instant::ZERO + fc.start);
        }
        for (i, ev) in cfg.events.iter().enumerate() {
            let at = |e: ConfigError| e.within(format!("events[{i}]"));
            sim.check_scope(ev.ue, ev.drb).map_err(at)?;
            if ev.at > cfg.duration {
                return Err(at(ConfigError::new(
                    "at",
                    ev.at,
                    format!("must be within the duration ({})", cfg.duration),
                )));
            }
            sim.events
                .schedule(Instant::ZERO + ev.at, Ev::Scheduled(sim.scheduled.len()));
            sim.scheduled.push(Scheduled {
                ue: ev.ue,
                drb: ev.drb,
                action: ev.action().map_err(at)?,
            });
        }
        let names: Vec<&str> = cfg.flows.iter().map(|f| f.name.as_str()).collect();
        for (i, c) in cfg.controllers.iter().enumerate() {
            let at = |e: ConfigError| e.within(format!("controllers[{i}]"));
            sim.check_scope(c.ue, c.drb).map_err(at)?;
            let controller = c.build(&names).map_err(at)?;
            let start = c.start.unwrap_or(c.period);
            sim.add_controller(c.name(), c.period, start, c.ue, c.drb, controller);
        }
        Ok(sim)
    }

    /// Adds a controller (e.g. an [`AnyController::Custom`] one) called
    /// every `period` from `start`, watching UE `ue` and DRB `drb` (`None`
    /// = all).
    pub fn add_controller(
        &mut self,
        name: String,
        period: Duration,
        start: Duration,
        ue: Option<u16>,
        drb: Option<u8>,
        controller: AnyController,
    ) {
        let i = self.controllers.len();
        self.controllers.push(ControllerSlot {
            name,
            period: period.max(Duration::from_nanos(1)),
            ue,
            drb,
            controller,
            prev_drb: BTreeMap::new(),
            prev_flow: vec![(0, 0, 0); self.flows.len()],
            prev_at: Instant::ZERO,
        });
        let at = Instant::ZERO + start;
        if at <= self.end {
            self.events.schedule(at, Ev::Control(i));
        }
    }

    fn check_scope(&self, ue: Option<u16>, drb: Option<u8>) -> Result<(), ConfigError> {
        let ues: Vec<&Ue> = self
            .ues
            .iter()
            .filter(|u| ue.is_none_or(|r| u.rnti.0 == r))
            .collect();
        if ues.is_empty() {
            return Err(ConfigError::new(
                "ue",
                ue.unwrap_or_default(),
                "must be the rnti of a configured UE",
            ));
        }
        if let Some(d) = drb {
            if !ues.iter().any(|u| u.drbs.iter().any(|x| x.id.0 == d)) {
                return Err(ConfigError::new("drb", d, "no such DRB on the UE(s)"));
            }
        }
        Ok(())
    }

    /// (UE, DRB) indexes in scope.
    fn scope(&self, ue: Option<u16>, drb: Option<u8>) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (u, x) in self.ues.iter().enumerate() {
            if ue.is_some_and(|r| x.rnti.0 != r) {
                continue;
            }
            for (d, y) in x.drbs.iter().enumerate() {
                if drb.is_none_or(|id| y.id.0 == id) {
                    out.push((u, d));
                }
            }
        }
        out
    }

    /// Runs to the end; returns the summary and the time series.
    pub fn run(self) -> RunOutput {
        self.run_with_progress(&mut |_| {})
    }

    /// [`Sim::run`], calling `progress` with the simulated seconds done
    /// about every simulated second and once at the end.
    pub fn run_with_progress(mut self, progress: &mut dyn FnMut(f64)) -> RunOutput {
        let second = Duration::from_secs(1);
        let mut next_report = Instant::ZERO + second;
        while let Some(t) = self.events.peek_time() {
            if t > self.end {
                break;
            }
            if t >= next_report {
                progress(next_report.as_secs_f64());
                next_report += second;
            }
            let (t, ev) = self.events.pop().expect("peeked");
            self.now = t;
            self.handle(ev);
        }
        self.now = self.end;
        progress(self.end.as_secs_f64());
        self.finish()
    }

    /// Index in `ues` of the UE with `rnti`.
    fn ue_of(&self, rnti: Rnti) -> Option<usize> {
        self.ue_index
            .binary_search_by_key(&rnti, |&(r, _)| r)
            .ok()
            .map(|i| self.ue_index[i].1)
    }

    fn counting(&self) -> bool {
        self.now >= self.warmup_end
    }

    fn count_drop(&mut self, layer: &'static str, reason: DropReason, packet: &Packet) {
        *self.drops.entry((layer, reason.label())).or_default() += 1;
        self.packets.dropped += 1;
        self.series
            .event(self.now, "drop", layer, reason.label(), 1);
        if let Some(f) = packet.flow.and_then(|f| self.flows.get_mut(f.0 as usize)) {
            f.lost += 1;
        }
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::Slot => self.on_slot(),
            Ev::Bin => self.on_bin(),
            Ev::Scheduled(i) => {
                let (ue, drb) = (self.scheduled[i].ue, self.scheduled[i].drb);
                for (u, d) in self.scope(ue, drb) {
                    let action = self.scheduled[i].action.clone();
                    self.reconfigure("event", u, d, action);
                }
            }
            Ev::Control(i) => self.run_controller(i),
            Ev::UpfWake(u) => {
                if let Some(upf) = self.ues[u].upf.as_mut() {
                    if upf.wake == Some(self.now) {
                        upf.wake = None;
                        self.upf_egress(u);
                    }
                }
            }
            Ev::TcWake(u, d) => {
                if self.ues[u].drbs[d].tc_wake == Some(self.now) {
                    self.ues[u].drbs[d].tc_wake = None;
                    self.egress(u, d);
                }
            }
            Ev::ServerWake(i) => {
                if self.flows[i].server_wake == Some(self.now) {
                    self.flows[i].server_wake = None;
                    self.serve(i);
                }
            }
            Ev::ClientWake(i) => {
                if self.flows[i].client_wake == Some(self.now) {
                    self.flows[i].client_wake = None;
                    self.client_timers(i);
                }
            }
            Ev::RlcWake(u, d) => {
                if self.ues[u].drbs[d].rlc_wake == Some(self.now) {
                    self.ues[u].drbs[d].rlc_wake = None;
                    self.rlc_timers(u, d);
                }
            }
            Ev::AtGnb(p) => self.at_gnb(*p),
            Ev::AtServer(p) => self.at_server(&p),
            Ev::AtUe(u, pdus) => self.at_ue(u, pdus),
            Ev::StatusAtGnb(u, d, status) => {
                let now = self.now;
                let drb = &mut self.ues[u].drbs[d];
                let mut departures = std::mem::take(&mut self.scratch_departures);
                drb.tx.on_status(&status, now, &mut departures);
                drb.pipeline.on_status_pdu(now);
                self.departed(u, d, &mut departures);
                self.scratch_departures = departures;
                self.abandoned(u, d);
                self.arm_rlc(u, d);
            }
            Ev::UlGrant(u) => {
                let ue = &mut self.ues[u];
                ue.ul_grant = None;
                // The STATUS PDUs are built now, at the transmission
                // opportunity, with what the receivers know now (TS
                // 38.322 §5.3.4), whichever packet asked for the grant.
                for d in 0..self.ues[u].drbs.len() {
                    if let Some(status) = self.ues[u].drbs[d].rx.poll_status(self.now) {
                        self.send_up(u, UlItem::Status(d, status));
                    }
                    self.arm_rlc(u, d);
                }
                let mut items = std::mem::take(&mut self.ues[u].ul_queue);
                for p in items.drain(..) {
                    self.send_up(u, UlItem::Server(Box::new(p)));
                }
                // Keep the allocation for the next grant.
                self.ues[u].ul_queue = items;
            }
        }
    }

    /// Hands an uplink packet of UE `u` to the uplink: at once without the
    /// SR model, else at the UE's next grant (asking for one if none is
    /// pending).
    fn uplink(&mut self, u: usize, p: Packet) {
        if self.sr.is_none() {
            self.send_up(u, UlItem::Server(Box::new(p)));
            return;
        }
        self.request_grant(u);
        self.ues[u].ul_queue.push(p);
    }

    /// With the SR model: UE `u` asks for an uplink grant at its next SR
    /// occasion, unless one is pending.
    fn request_grant(&mut self, u: usize) {
        let Some(sr) = &self.sr else { return };
        let ue = &mut self.ues[u];
        if ue.ul_grant.is_none() {
            let at = sr.transmit_at(ue.rnti.0, self.now);
            ue.ul_grant = Some(at);
            self.events.schedule(at, Ev::UlGrant(u));
        }
    }

    /// Transmits an uplink item now: `ul_delay` to the gNB (and the core
    /// delay on to a server).
    fn send_up(&mut self, u: usize, item: UlItem) {
        let now = self.now;
        match item {
            UlItem::Server(p) => self
                .events
                .schedule(now + self.ul_delay + self.core_delay, Ev::AtServer(p)),
            UlItem::Status(d, status) => self
                .events
                .schedule(now + self.ul_delay, Ev::StatusAtGnb(u, d, status)),
        }
    }

    // ------------------------------------------------------------- servers

    fn wake_server(&mut self, i: usize, at: Instant) {
        let f = &mut self.flows[i];
        if f.server_wake.is_none_or(|w| at < w) {
            f.server_wake = Some(at);
            self.events.schedule(at, Ev::ServerWake(i));
        }
    }

    fn wake_client(&mut self, i: usize, at: Instant) {
        let f = &mut self.flows[i];
        if f.client_wake.is_none_or(|w| at < w) {
            f.client_wake = Some(at);
            self.events.schedule(at, Ev::ClientWake(i));
        }
    }

    /// Lets flow `i`'s server send what it may now, and re-arms its timer.
    fn serve(&mut self, i: usize) {
        let now = self.now;
        let mut sent = std::mem::take(&mut self.scratch_packets);
        let next = match &mut self.flows[i].ends {
            Endpoints::Tcp { tx, .. } => {
                tx.on_timer(now);
                while let Some(p) = tx.poll_transmit(now) {
                    sent.push(p);
                }
                tx.next_wakeup()
            }
            Endpoints::Udp { src, .. } => drain_due(src, now, &mut sent),
            Endpoints::Ping { pinger, .. } => drain_due(pinger, now, &mut sent),
        };
        self.flows[i].created += sent.len() as u64;
        for mut p in sent.drain(..) {
            self.packets.created += 1;
            self.next_id += 1;
            p.id = PacketId(self.next_id);
            self.events
                .schedule(now + self.core_delay, Ev::AtGnb(Box::new(p)));
        }
        self.scratch_packets = sent;
        if let Some(t) = next {
            // A wake-up "now" after sending everything possible means the
            // endpoint waits on something else; never loop at one instant.
            let t = if t <= now {
                now + Duration::from_nanos(1)
            } else {
                t
            };
            if t <= self.end {
                self.wake_server(i, t);
            }
        }
    }

    fn at_server(&mut self, p: &Packet) {
        let Some(i) = p.flow.map(|f| f.0 as usize) else {
            return;
        };
        let now = self.now;
        match &mut self.flows[i].ends {
            Endpoints::Tcp { tx, .. } => tx.on_packet(p, now),
            Endpoints::Ping { pinger, .. } => pinger.on_packet(p, now),
            Endpoints::Udp { .. } => {}
        }
        self.serve(i);
    }

    // ------------------------------------------------------------ gNB side

    fn at_gnb(&mut self, mut p: Packet) {
        let now = self.now;
        p.stamps.upf_in = Stamp::at(now);
        let Some(u) = addr_rnti(p.tuple.dst).and_then(|r| self.ue_of(r)) else {
            self.count_drop("sdap", DropReason::NoRoute, &p);
            return;
        };
        if let Some(upf) = self.ues[u].upf.as_mut() {
            upf.pipeline.push(p, now);
            self.collect_upf_drops(u);
            self.upf_egress(u);
            return;
        }
        self.sdap_in(u, p);
    }

    /// Moves what the UE's UPF queue lets go on to SDAP.
    fn upf_egress(&mut self, u: usize) {
        let now = self.now;
        while let Some(p) = self.ues[u]
            .upf
            .as_mut()
            .and_then(|upf| upf.pipeline.pull(now))
        {
            self.sdap_in(u, p);
        }
        self.collect_upf_drops(u);
        let tick = self.tc_tick;
        let end = self.end;
        let Some(upf) = self.ues[u].upf.as_mut() else {
            return;
        };
        if upf.pipeline.queued_packets() == 0 {
            return;
        }
        let Some(mut t) = upf.pipeline.next_wakeup(now) else {
            return;
        };
        if let Some(tick) = tick {
            let n = tick.as_nanos();
            t = Instant::from_nanos(t.as_nanos().div_ceil(n) * n);
        }
        let t = t.max(now + Duration::from_nanos(1));
        if t <= end && upf.wake.is_none_or(|w| t < w) {
            upf.wake = Some(t);
            self.events.schedule(t, Ev::UpfWake(u));
        }
    }

    fn collect_upf_drops(&mut self, u: usize) {
        let Some(upf) = self.ues[u].upf.as_mut() else {
            return;
        };
        let dropped: Vec<_> = upf.pipeline.drain_dropped().collect();
        for x in dropped {
            self.count_drop("upf", x.reason, &x.packet);
        }
    }

    /// SDAP: maps the packet to its DRB and pushes it into that DRB's TC
    /// pipeline.
    fn sdap_in(&mut self, u: usize, mut p: Packet) {
        let now = self.now;
        let mapping = match self.ues[u].sdap.apply(&mut p) {
            Ok(m) => m,
            Err(reason) => {
                self.count_drop("sdap", reason, &p);
                return;
            }
        };
        let Some(d) = self.ues[u].drbs.iter().position(|d| d.id == mapping.drb) else {
            self.count_drop("sdap", DropReason::NoRoute, &p);
            return;
        };
        if let Some(f) = p.flow.and_then(|f| self.flows.get_mut(f.0 as usize)) {
            f.drb = Some(mapping.drb.0);
        }
        self.ues[u].drbs[d].pipeline.push(p, now);
        self.collect_tc_drops(u, d);
        self.egress(u, d);
    }

    /// Moves what the pipeline lets go down into RLC.
    fn egress(&mut self, u: usize, d: usize) {
        let now = self.now;
        loop {
            let drb = &mut self.ues[u].drbs[d];
            let Some(mut p) = drb.pipeline.pull(now) else {
                break;
            };
            p.stamps.rlc_in = Stamp::at(now);
            if let Some(upf) = self.ues[u].upf.as_mut() {
                upf.released += u64::from(p.len);
            }
            let drb = &mut self.ues[u].drbs[d];
            if let Err(p) = drb.tx.enqueue(p, now) {
                self.count_drop("rlc", DropReason::RlcFull, &p);
            }
        }
        self.collect_tc_drops(u, d);
        self.arm_rlc(u, d);
        self.arm_tc(u, d);
    }

    /// Schedules the next egress attempt when the pipeline says waiting
    /// alone can let something go.
    fn arm_tc(&mut self, u: usize, d: usize) {
        let now = self.now;
        let drb = &mut self.ues[u].drbs[d];
        if drb.pipeline.queued_packets() == 0 {
            return;
        }
        let Some(mut t) = drb.pipeline.next_wakeup(now) else {
            return;
        };
        if let Some(tick) = self.tc_tick {
            let n = tick.as_nanos();
            t = Instant::from_nanos(t.as_nanos().div_ceil(n) * n);
        }
        let t = t.max(now + Duration::from_nanos(1));
        if t <= self.end && drb.tc_wake.is_none_or(|w| t < w) {
            drb.tc_wake = Some(t);
            self.events.schedule(t, Ev::TcWake(u, d));
        }
    }

    fn collect_tc_drops(&mut self, u: usize, d: usize) {
        if !self.ues[u].drbs[d].pipeline.has_dropped() {
            return;
        }
        let dropped: Vec<_> = self.ues[u].drbs[d].pipeline.drain_dropped().collect();
        for x in dropped {
            self.count_drop("tc", x.reason, &x.packet);
        }
    }

    fn on_slot(&mut self) {
        let now = self.now;
        let slot = self.slot;
        let mut out = std::mem::take(&mut self.out);
        // Channel and buffer status of every UE.
        for ue in &mut self.ues {
            // Once per decision, for all of it: exact for capacity traces
            // (their bytes over the period); an MCS channel's value at the
            // period's start holds for the period.
            ue.sample = ue.channel.sample(now, self.period);
        }
        let mut lcs = std::mem::take(&mut self.slot_lcs);
        lcs.clear();
        self.lc_base.clear();
        for ue in &self.ues {
            self.lc_base.push(lcs.len());
            lcs.extend(ue.drbs.iter().map(|d| LcInput {
                drb: d.id,
                priority: d.priority,
                buffer_bytes: d.tx.buffer_status().total(),
                sdu_sizes: &[],
            }));
        }
        let lc_base = &self.lc_base;
        let inputs: Vec<UeInput<'_>> = self
            .ues
            .iter()
            .zip(lc_base)
            .map(|(ue, &base)| UeInput {
                rnti: ue.rnti,
                channel: ue.sample,
                lcs: &lcs[base..base + ue.drbs.len()],
            })
            .collect();
        self.mac.schedule(slot, now, &inputs, &mut out);
        drop(inputs);
        let rlc_bytes: u64 = lcs.iter().map(|l| l.buffer_bytes).sum();
        let n_lcs = lcs.len();
        self.slot_lcs = lcs;
        let dl_slots = u32::from(out.dl_slots);
        if self.series.samples_slot(slot / self.period_slots) && now < self.end {
            let capacity = slot_capacity(&out);
            self.series.slot(
                now,
                rlc_bytes,
                capacity,
                u32::from(out.prbs_used) * dl_slots,
                u32::from(out.prbs_available) * dl_slots,
            );
        }

        // Fill each grant from the UE's logical channels, then let HARQ decide.
        // `lc_grants` holds one entry per logical channel of the input, in
        // its order: UE `u`'s DRB `d` is at `lc_base[u] + d`.
        let mut pulled = std::mem::take(&mut self.slot_pulled);
        pulled.clear();
        pulled.resize(n_lcs, 0);
        let mut granted = std::mem::take(&mut self.slot_granted);
        granted.clear();
        granted.resize(self.ues.len(), false);
        for gi in 0..out.grants.len() {
            // `UeGrant` is Copy: no clone of the grant list per slot.
            let g = out.grants[gi];
            let Some(u) = self.ue_of(g.rnti) else {
                continue;
            };
            granted[u] = true;
            let mut pdus = self.pdu_lists.pop().unwrap_or_default();
            let base = self.lc_base[u];
            for d in 0..self.ues[u].drbs.len() {
                let lg = out.lc_grants[base + d];
                debug_assert!(lg.rnti == g.rnti && lg.drb == self.ues[u].drbs[d].id);
                if lg.granted_bytes == 0 {
                    continue;
                }
                let mut departures = std::mem::take(&mut self.scratch_departures);
                let used =
                    self.ues[u].drbs[d]
                        .tx
                        .fill(lg.granted_bytes, now, &mut pdus, &mut departures);
                pulled[base + d] += used as u64;
                self.departed(u, d, &mut departures);
                self.scratch_departures = departures;
                self.rlc_aqm_drops(u, d);
            }
            self.mac.transmit(&g, pdus, &mut out);
        }
        if self.counting() {
            // PRB·slots: a grant of n PRBs holds them in every DL slot of
            // the period.
            self.prbs_used += u64::from(out.prbs_used) * u64::from(dl_slots);
            self.prbs_available += u64::from(out.prbs_available) * u64::from(dl_slots);
        }
        let arrive = now + self.period;
        for tb in out.delivered.drain(..) {
            if let Some(u) = self.ue_of(tb.rnti) {
                self.events.schedule(arrive, Ev::AtUe(u, tb.pdus));
            }
        }
        for mut tb in out.lost.drain(..) {
            let Some(u) = self.ue_of(tb.rnti) else {
                continue;
            };
            let mut lost = std::mem::take(&mut self.scratch_packets);
            for pdu in &tb.pdus {
                if let Some(d) = self.ues[u].drbs.iter().position(|x| x.id == pdu.drb) {
                    self.ues[u].drbs[d].rx.on_pdu_lost(pdu, &mut lost);
                }
            }
            for p in lost.drain(..) {
                self.count_drop("air", DropReason::AirLoss, &p);
            }
            self.scratch_packets = lost;
            tb.pdus.clear();
            self.pdu_lists.push(tb.pdus);
        }

        // Per-TTI report to every pipeline, then its egress.
        let counting = self.counting();
        // Grants go one per scheduled UE.
        let n_grants = out.grants.len() as u64;
        for (u, &has_grant) in granted.iter().enumerate() {
            let base = self.lc_base[u];
            for d in 0..self.ues[u].drbs.len() {
                let pulled_bytes = pulled[base + d];
                let drb = &mut self.ues[u].drbs[d];
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
                let report = LowerLayerReport {
                    tti: self.period,
                    backlog_bytes: bs.new_payload_bytes + bs.retx_bytes,
                    backlog_sdus: bs.sdus_held,
                    pulled_bytes,
                    granted_bytes,
                    max_bytes,
                };
                drb.pipeline.on_report(&report, now);
                if counting {
                    drb.occupancy.add(now, bs.new_payload_bytes as f64);
                    drb.occupancy_max = drb.occupancy_max.max(bs.new_payload_bytes);
                }
                self.egress(u, d);
                self.abandoned(u, d);
            }
            self.report_to_upf(u, &out);
        }
        self.slot_pulled = pulled;
        self.slot_granted = granted;
        self.out = out;
        self.slot += self.period_slots;
        self.events.schedule(now + self.period, Ev::Slot);
    }

    // ------------------------------------------------------ reconfiguration

    /// Calls controller `i` with what happened since its previous call and
    /// applies its commands.
    fn run_controller(&mut self, i: usize) {
        let now = self.now;
        let c = &self.controllers[i];
        let window = now.saturating_since(c.prev_at).as_secs_f64();
        let scope = self.scope(c.ue, c.drb);
        let mut drbs = Vec::with_capacity(scope.len());
        let mut prev_drb = BTreeMap::new();
        for (u, d) in scope {
            let drb = &self.ues[u].drbs[d];
            let [n0, s0, m0, r0] = c.prev_drb.get(&(u, d)).copied().unwrap_or_default();
            let n = drb.departed - n0;
            let m = drb.delivered - m0;
            drbs.push(DrbView {
                rnti: self.ues[u].rnti.0,
                drb: drb.id.0,
                config: drb.pipeline.config(),
                stats: drb.pipeline.stats(now),
                rlc_bytes: drb.tx.buffer_status().total(),
                rlc_departed: n,
                rlc_sojourn_ms: (n > 0).then(|| (drb.sojourn_sum_ns - s0) as f64 / n as f64 / 1e6),
                rlc_delivered: m,
                rlc_delay_ms: (m > 0).then(|| (drb.rlc_delay_sum_ns - r0) as f64 / m as f64 / 1e6),
            });
            prev_drb.insert(
                (u, d),
                [
                    drb.departed,
                    drb.sojourn_sum_ns,
                    drb.delivered,
                    drb.rlc_delay_sum_ns,
                ],
            );
        }
        let mut flows = Vec::new();
        let mut prev_flow = Vec::with_capacity(self.flows.len());
        for (k, f) in self.flows.iter().enumerate() {
            prev_flow.push((f.total_bytes, f.total_delay_ns, f.total_packets));
            if c.ue.is_some_and(|r| r != f.rnti) {
                continue;
            }
            let (b0, d0, n0) = c.prev_flow[k];
            let n = f.total_packets - n0;
            flows.push(FlowView {
                name: f.name.clone(),
                kind: f.kind,
                rnti: f.rnti,
                drb: f.drb,
                tuple: f.tuple,
                goodput_mbps: if window > 0.0 {
                    (f.total_bytes - b0) as f64 * 8.0 / window / 1e6
                } else {
                    0.0
                },
                delay_ms: (n > 0).then(|| (f.total_delay_ns - d0) as f64 / n as f64 / 1e6),
            });
        }
        let view = ControlView {
            now,
            drbs: &drbs,
            flows: &flows,
        };
        let mut commands: Vec<Command> = Vec::new();
        let c = &mut self.controllers[i];
        c.controller.on_tick(&view, &mut commands);
        c.prev_drb = prev_drb;
        c.prev_flow = prev_flow;
        c.prev_at = now;
        let (name, next) = (c.name.clone(), now + c.period);
        for cmd in commands {
            let target = self.ues.iter().enumerate().find_map(|(u, x)| {
                let d = x.drbs.iter().position(|y| y.id.0 == cmd.drb)?;
                (x.rnti.0 == cmd.rnti).then_some((u, d))
            });
            match target {
                Some((u, d)) => self.reconfigure(&name, u, d, cmd.action),
                None => self.refused(
                    &name,
                    cmd.rnti,
                    cmd.drb,
                    "command".into(),
                    "no such UE/DRB".into(),
                ),
            }
        }
        if next <= self.end {
            self.events.schedule(next, Ev::Control(i));
        }
    }

    /// Applies `action` to the pipeline of (UE `u`, DRB `d`) and records it.
    fn reconfigure(&mut self, by: &str, u: usize, d: usize, action: Action) {
        let now = self.now;
        // Marks of queues about to be deleted must not be lost.
        self.collect_marks(u, d);
        let (rnti, drb_id) = (self.ues[u].rnti.0, self.ues[u].drbs[d].id.0);
        let pipeline = &mut self.ues[u].drbs[d].pipeline;
        match action {
            Action::Control(c) => {
                let what = describe(&c);
                match pipeline.apply(c, now) {
                    Ok(()) => self.applied(by, rnti, drb_id, what),
                    Err(e) => self.refused(by, rnti, drb_id, what, e.to_string()),
                }
            }
            Action::Deploy(target) => {
                let what = format!(
                    "deploy pipeline {}",
                    serde_json::to_string(&target).unwrap_or_default()
                );
                let current = pipeline.config();
                let controls = deploy_controls(&current, &target);
                // Rehearse on an empty pipeline of the same configuration,
                // so a deployment that would stop half-way changes nothing.
                let rehearsal = current
                    .build()
                    .and_then(|mut p| controls.iter().try_for_each(|c| p.apply(c.clone(), now)));
                let result = rehearsal.and_then(|()| {
                    controls
                        .into_iter()
                        .try_for_each(|c| pipeline.apply(c, now))
                });
                match result {
                    Ok(()) => self.applied(by, rnti, drb_id, what),
                    Err(e) => self.refused(by, rnti, drb_id, what, e.to_string()),
                }
            }
        }
        self.collect_tc_drops(u, d);
        self.egress(u, d);
    }

    fn applied(&mut self, by: &str, rnti: u16, drb: u8, what: String) {
        self.reconfig_counts.applied += 1;
        self.series.reconfigurations.push(Reconfiguration {
            t_s: self.now.as_secs_f64(),
            by: by.to_string(),
            rnti,
            drb,
            what,
        });
    }

    fn refused(&mut self, by: &str, rnti: u16, drb: u8, what: String, error: String) {
        self.reconfig_counts.failed += 1;
        self.series.failed.push(Reconfiguration {
            t_s: self.now.as_secs_f64(),
            by: by.to_string(),
            rnti,
            drb,
            what: format!("{what}: {error}"),
        });
    }

    /// Closes the series bin ending now: TCP state and the TC marks of the
    /// bin.
    fn on_bin(&mut self) {
        let now = self.now;
        for (i, f) in self.flows.iter().enumerate() {
            if let Endpoints::Tcp { tx, .. } = &f.ends {
                let tx = tx.sender();
                self.series.tcp_state(i, now, tx.cwnd(), tx.srtt());
            }
        }
        for u in 0..self.ues.len() {
            for d in 0..self.ues[u].drbs.len() {
                self.collect_marks(u, d);
            }
        }
        if now < self.end {
            let next = (now + self.series.bin()).min(self.end);
            self.events.schedule(next, Ev::Bin);
        }
    }

    /// Counts the CE marks the pipeline of (UE, DRB) made since the last
    /// look (before a reconfiguration, so deleted queues lose none).
    fn collect_marks(&mut self, u: usize, d: usize) {
        let now = self.now;
        let drb = &mut self.ues[u].drbs[d];
        let mut total = MarkCounts::default();
        for q in drb.pipeline.stats(now).queues {
            total.add_all(&q.marks);
        }
        let rlc_total = drb.tx.aqm_marks().copied().unwrap_or_default();
        let seen = [
            (total, std::mem::replace(&mut drb.marks_seen, total), "tc"),
            (
                rlc_total,
                std::mem::replace(&mut drb.rlc_marks_seen, rlc_total),
                "rlc",
            ),
        ];
        // The bin that just ended (marks are looked at on its end).
        let at = Instant::from_nanos(now.as_nanos().saturating_sub(1));
        for (total, before, layer) in seen {
            for r in MarkReason::ALL {
                let n = total.get(*r).saturating_sub(before.get(*r));
                if n > 0 {
                    *self.marks.entry((layer, r.label())).or_default() += n;
                    self.series.event(at, "mark", layer, r.label(), n);
                }
            }
        }
    }

    /// The UPF queue's per-TTI report: its lower layer is the UE's TC
    /// pipelines (bytes they handed to RLC this TTI, bytes they still hold)
    /// and the capacity the cell offered the UE.
    fn report_to_upf(&mut self, u: usize, out: &SlotOutput) {
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
        let report = LowerLayerReport {
            tti: self.period,
            backlog_bytes: bytes,
            backlog_sdus: packets as u32,
            pulled_bytes: std::mem::take(&mut upf.released),
            granted_bytes: granted,
            max_bytes,
        };
        upf.pipeline.on_report(&report, now);
        self.upf_egress(u);
    }

    fn departed(&mut self, u: usize, d: usize, departures: &mut Vec<SduDeparture>) {
        let now = self.now;
        let counting = self.counting();
        let drb = &mut self.ues[u].drbs[d];
        for dep in departures.drain(..) {
            drb.pipeline.on_sdu_departed(dep.sojourn, now);
            drb.departed += 1;
            drb.sojourn_sum_ns += dep.sojourn.as_nanos();
            if counting {
                drb.rlc_sojourn.record(dep.sojourn);
            }
        }
    }

    /// Counts the SDUs the RLC buffer's AQM dropped at dequeue.
    fn rlc_aqm_drops(&mut self, u: usize, d: usize) {
        let mut dropped = std::mem::take(&mut self.scratch_aqm_drops);
        self.ues[u].drbs[d].tx.drain_dropped(&mut dropped);
        for (p, reason) in dropped.drain(..) {
            self.count_drop("rlc", reason, &p);
        }
        self.scratch_aqm_drops = dropped;
    }

    fn abandoned(&mut self, u: usize, d: usize) {
        let mut lost = std::mem::take(&mut self.scratch_packets);
        self.ues[u].drbs[d].tx.drain_abandoned(&mut lost);
        for p in lost.drain(..) {
            let drb = &mut self.ues[u].drbs[d];
            if drb.recent.contains(&p.id) {
                continue; // the UE has it: not a loss
            }
            drb.given_up.push((p.id, p.flow));
            self.count_drop("rlc", DropReason::AirLoss, &p);
        }
        self.scratch_packets = lost;
    }

    /// Remembers a delivery from DRB (u, d); withdraws the drop of a packet
    /// its transmitter had given up on.
    fn remember_delivery(&mut self, u: usize, d: usize, id: PacketId) {
        let drb = &mut self.ues[u].drbs[d];
        if drb.recent.len() < RECENT_DELIVERIES {
            drb.recent.push(id);
        } else {
            drb.recent[drb.recent_next] = id;
            drb.recent_next = (drb.recent_next + 1) % RECENT_DELIVERIES;
        }
        if drb.given_up.is_empty() {
            return;
        }
        if let Some(k) = drb.given_up.iter().position(|(g, _)| *g == id) {
            let (_, flow) = drb.given_up.swap_remove(k);
            let key = ("rlc", DropReason::AirLoss.label());
            if let Some(n) = self.drops.get_mut(&key) {
                *n -= 1;
                if *n == 0 {
                    self.drops.remove(&key);
                }
            }
            self.packets.dropped -= 1;
            self.series.withdraw_drop(self.now, key.0, key.1);
            if let Some(f) = flow.and_then(|f| self.flows.get_mut(f.0 as usize)) {
                f.lost -= 1;
            }
        }
    }

    fn arm_rlc(&mut self, u: usize, d: usize) {
        // A triggered STATUS waiting for an uplink grant needs no wake-up:
        // the grant builds it.
        let waits_for_grant = self.sr.is_some() && self.ues[u].ul_grant.is_some();
        let drb = &mut self.ues[u].drbs[d];
        let status = if waits_for_grant {
            None
        } else {
            drb.rx.status_at()
        };
        let next = Instant::earliest(
            Instant::earliest(drb.tx.next_wakeup(), drb.rx.next_timer()),
            Instant::earliest(status, drb.pdcp.next_wakeup()),
        );
        if let Some(t) = next {
            let t = t.max(self.now);
            if drb.rlc_wake.is_none_or(|w| t < w) {
                drb.rlc_wake = Some(t);
                self.events.schedule(t, Ev::RlcWake(u, d));
            }
        }
    }

    fn rlc_timers(&mut self, u: usize, d: usize) {
        let now = self.now;
        let mut lost = std::mem::take(&mut self.scratch_packets);
        let drb = &mut self.ues[u].drbs[d];
        drb.tx.on_timer(now);
        drb.rx.on_timer(now, &mut lost);
        for p in lost.drain(..) {
            self.count_drop("air", DropReason::AirLoss, &p);
        }
        self.scratch_packets = lost;
        // t-Reordering: what it lets go goes up to the applications.
        let mut up = Vec::new();
        self.ues[u].drbs[d].pdcp.on_timer(now, &mut up);
        self.send_status(u, d);
        self.abandoned(u, d);
        self.arm_rlc(u, d);
        if !up.is_empty() {
            self.deliver_up(up);
        }
    }

    /// A STATUS PDU of (UE, DRB) may go: without the SR model it is built
    /// and sent now; with it the UE asks for a grant, and the PDU is built
    /// when the grant comes (`Ev::UlGrant`).
    fn send_status(&mut self, u: usize, d: usize) {
        let now = self.now;
        if self.sr.is_some() {
            if self.ues[u].drbs[d].rx.status_at().is_some_and(|t| t <= now) {
                self.request_grant(u);
            }
            return;
        }
        if let Some(status) = self.ues[u].drbs[d].rx.poll_status(now) {
            self.send_up(u, UlItem::Status(d, status));
        }
    }

    // ------------------------------------------------------------- UE side

    fn at_ue(&mut self, u: usize, mut pdus: Vec<RlcPdu>) {
        let now = self.now;
        let mut delivered = std::mem::take(&mut self.scratch_packets);
        for pdu in pdus.drain(..) {
            let Some(d) = self.ues[u].drbs.iter().position(|x| x.id == pdu.drb) else {
                continue;
            };
            let first = delivered.len();
            let drb = &mut self.ues[u].drbs[d];
            drb.rx.on_pdu(pdu, now, &mut delivered);
            for p in &delivered[first..] {
                if let Some(t) = p.stamps.rlc_in.get() {
                    drb.delivered += 1;
                    drb.rlc_delay_sum_ns += now.saturating_since(t).as_nanos();
                }
            }
            // Only an AM transmitter gives up on SDUs the UE may hold.
            if drb.tx.params().mode == RlcMode::Am {
                for p in &delivered[first..] {
                    self.remember_delivery(u, d, p.id);
                }
            }
            self.pdcp_in(u, d, &mut delivered, first);
            self.send_status(u, d);
            self.arm_rlc(u, d);
        }
        self.pdu_lists.push(pdus);
        self.deliver_up(delivered);
    }

    /// Passes the SDUs the RLC of (UE, DRB) just delivered (`sdus[first..]`)
    /// through the UE's PDCP receiver: `sdus[first..]` becomes what PDCP
    /// lets go up; what it discards is counted.
    fn pdcp_in(&mut self, u: usize, d: usize, sdus: &mut Vec<Packet>, first: usize) {
        let now = self.now;
        let mut counts = std::mem::take(&mut self.scratch_counts);
        let drb = &mut self.ues[u].drbs[d];
        drb.rx.drain_counts(&mut counts);
        // The common case, SDUs in order: they stay where they are.
        if !drb.pdcp.pass_in_order(&counts) {
            let mut from_rlc = std::mem::take(&mut self.scratch_pdcp);
            let mut dropped = Vec::new();
            from_rlc.extend(sdus.drain(first..));
            for (p, &c) in from_rlc.drain(..).zip(&counts) {
                drb.pdcp.on_sdu(c, p, now, sdus, &mut dropped);
            }
            self.scratch_pdcp = from_rlc;
            for (p, reason) in dropped {
                self.count_drop("pdcp", reason, &p);
            }
        }
        counts.clear();
        self.scratch_counts = counts;
    }

    /// Hands packets the UE's PDCP delivered to the applications.
    fn deliver_up(&mut self, mut delivered: Vec<Packet>) {
        let now = self.now;
        let counting = self.counting();
        for p in delivered.drain(..) {
            let Some(i) = p.flow.map(|f| f.0 as usize) else {
                continue;
            };
            let delay = now.saturating_since(p.created);
            self.packets.delivered += 1;
            self.series.delivered(i, now, p.len, delay);
            let f = &mut self.flows[i];
            f.total_bytes += u64::from(p.len);
            f.total_delay_ns += delay.as_nanos();
            f.total_packets += 1;
            if counting {
                f.delay.record(now.saturating_since(p.created));
                f.delivered_bytes += p.len as u64;
                f.layers.add(&p, now);
            }
            match &mut f.ends {
                Endpoints::Tcp { rx, .. } => rx.on_packet(&p, now),
                Endpoints::Udp { sink, .. } => sink.on_packet(&p, now),
                Endpoints::Ping { responder, .. } => responder.on_packet(&p, now),
            }
            self.client_send(i);
        }
        if delivered.capacity() > 0 {
            self.scratch_packets = delivered;
        }
    }

    fn client_timers(&mut self, i: usize) {
        let now = self.now;
        if let Endpoints::Tcp { rx, .. } = &mut self.flows[i].ends {
            rx.on_timer(now);
        }
        self.client_send(i);
    }

    /// Sends what flow `i`'s UE side has for the uplink and re-arms its timer.
    fn client_send(&mut self, i: usize) {
        let now = self.now;
        let mut up = std::mem::take(&mut self.scratch_up);
        let next = match &mut self.flows[i].ends {
            Endpoints::Tcp { rx, .. } => {
                while let Some(p) = rx.poll_transmit(now) {
                    up.push(p);
                }
                rx.next_wakeup()
            }
            Endpoints::Ping { responder, .. } => {
                while let Some(p) = responder.poll_transmit(now) {
                    up.push(p);
                }
                None
            }
            Endpoints::Udp { .. } => None,
        };
        let u = self.flows[i].ue;
        for mut p in up.drain(..) {
            self.next_id += 1;
            p.id = PacketId(self.next_id);
            self.uplink(u, p);
        }
        self.scratch_up = up;
        if let Some(t) = next.filter(|t| *t <= self.end) {
            self.wake_client(i, t.max(now));
        }
    }

    // ------------------------------------------------------------- summary

    fn finish(mut self) -> RunOutput {
        for u in 0..self.ues.len() {
            for d in 0..self.ues[u].drbs.len() {
                self.collect_marks(u, d);
            }
        }
        let names = self
            .flows
            .iter_mut()
            .map(|f| {
                (
                    f.name.clone(),
                    f.kind.to_string(),
                    f.delay.cdf(CDF_POINTS - 1),
                    f.layers.cdfs(CDF_POINTS - 1),
                )
            })
            .collect();
        let summary = self.summary();
        RunOutput {
            summary,
            series: self.series.finish(names),
        }
    }

    fn summary(&mut self) -> RunSummary {
        let measured = self.end.saturating_since(self.warmup_end).as_secs_f64();
        let ledger = self.ledger();
        let flows = self
            .flows
            .iter_mut()
            .zip(&ledger.by_flow)
            .map(|(f, &in_flight)| {
                let rtt = match &f.ends {
                    Endpoints::Ping { pinger, .. } => {
                        let mut r = DelayRecorder::default();
                        for (at, rtt) in &pinger.rtts {
                            if *at >= self.warmup_end {
                                r.record(*rtt);
                            }
                        }
                        Some(r.summary())
                    }
                    _ => None,
                };
                let pages = match &f.ends {
                    Endpoints::Tcp { tx, .. } => match tx.as_ref() {
                        TcpServer::Web(w) => {
                            let mut r = DelayRecorder::default();
                            for pg in w.pages.iter().filter(|p| p.requested_at >= self.warmup_end) {
                                r.record(pg.completed_at.saturating_since(pg.requested_at));
                            }
                            Some(r.summary())
                        }
                        TcpServer::Download(_) => None,
                    },
                    _ => None,
                };
                FlowSummary {
                    name: f.name.clone(),
                    kind: f.kind.to_string(),
                    throughput_mbps: f.delivered_bytes as f64 * 8.0 / measured / 1e6,
                    delay_ms: f.delay.summary(),
                    rtt_ms: rtt,
                    page_ms: pages,
                    layers_ms: f.layers.summaries(),
                    lost_packets: f.lost,
                    created_packets: f.created,
                    delivered_packets: f.total_packets,
                    in_flight_packets: in_flight,
                }
            })
            .collect();
        let mut occ_sum = 0.0;
        let mut occ_n = 0u64;
        let mut occ_max = 0;
        let (mut sojourn_sum_ms, mut sojourn_n) = (0.0, 0u64);
        let mut status_pdus = 0;
        for ue in &mut self.ues {
            for d in &mut ue.drbs {
                status_pdus += d.rx.stats().status_pdus;
                for (_, m) in d.occupancy.means() {
                    occ_sum += m;
                    occ_n += 1;
                }
                occ_max = occ_max.max(d.occupancy_max);
                // Weighted by SDUs, so the mean is over every SDU of every DRB.
                let s = d.rlc_sojourn.summary();
                sojourn_sum_ms += s.mean * s.count as f64;
                sojourn_n += s.count;
            }
        }
        RunSummary {
            sim_s: self.end.as_secs_f64(),
            flows,
            prb_utilization: if self.prbs_available == 0 {
                0.0
            } else {
                self.prbs_used as f64 / self.prbs_available as f64
            },
            rlc: RlcSummary {
                mean_bytes: if occ_n == 0 {
                    0.0
                } else {
                    occ_sum / occ_n as f64
                },
                max_bytes: occ_max,
                mean_sojourn_ms: if sojourn_n == 0 {
                    0.0
                } else {
                    sojourn_sum_ms / sojourn_n as f64
                },
                status_pdus,
            },
            drops: by_layer(&self.drops),
            marks: by_layer(&self.marks),
            reconfigurations: self.reconfig_counts,
            packets: {
                let p = self.packets;
                let in_flight = ledger.by_place.total();
                PacketCounts {
                    in_flight,
                    in_flight_by_place: ledger.by_place,
                    unaccounted: p.created as i64 - (p.delivered + p.dropped + in_flight) as i64,
                    ..p
                }
            },
        }
    }
}

/// The scenario's uplink SR/grant model, checked; `None` when it is off.
fn sr_model(cfg: &SimConfig, mac: &Mac) -> Result<Option<SrModel>, ConfigError> {
    let c = &cfg.uplink;
    if !c.is_on() {
        return Ok(None);
    }
    let slot = mac.slot_duration();
    let period_slots = match c.sr_period {
        None => None,
        Some(p) => {
            let k = p.as_nanos() / slot.as_nanos();
            if p.is_zero() || !p.as_nanos().is_multiple_of(slot.as_nanos()) || k > 640 {
                return Err(ConfigError::new(
                    "sr_period",
                    p,
                    format!("must be a whole number of slots ({slot} each) from 1 to 640 slots"),
                ));
            }
            Some(k)
        }
    };
    tcran_core::config::check_range(
        "grant_delay",
        c.grant_delay,
        Duration::ZERO,
        Duration::from_millis(100),
    )?;
    let pattern = &mac.params().pattern;
    let pattern_slots = pattern.period_slots() as u64;
    let u_slots = if pattern.is_fdd() {
        Vec::new()
    } else {
        (0..pattern_slots)
            .filter(|&s| pattern.kind(s) == tcran_ran::phy::tdd::SlotKind::Uplink)
            .collect()
    };
    Ok(Some(SrModel {
        period_slots,
        grant_delay: c.grant_delay,
        slot,
        pattern_slots,
        u_slots,
    }))
}

/// `(layer, reason) -> n` as the summary's nested `layer -> reason -> n`.
fn by_layer(
    counts: &BTreeMap<(&'static str, &'static str), u64>,
) -> BTreeMap<String, BTreeMap<String, u64>> {
    let mut m: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for ((layer, reason), n) in counts {
        m.entry(layer.to_string())
            .or_default()
            .insert(reason.to_string(), *n);
    }
    m
}

/// What the slot (or scheduling period) could carry with every PRB (see
/// [`crate::series::SlotSeries::capacity_bytes`]): the full-cell TBS of the
/// scheduled UEs weighted by the PRBs each got, or the mean over all UEs in
/// a slot that schedules nobody.
fn slot_capacity(out: &SlotOutput) -> u64 {
    // `max_bytes` is per UE; every LC of a UE carries the same value.
    let full_cell = |rnti: Rnti| {
        out.lc_grants
            .iter()
            .find(|l| l.rnti == rnti)
            .map_or(0, |l| u64::from(l.max_bytes))
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
            sum += u64::from(l.max_bytes);
            n += 1;
            last = Some(l.rnti);
        }
    }
    sum.checked_div(n).unwrap_or(0)
}
