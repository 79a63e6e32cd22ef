//! The traffic around the RAN node: each flow's server and UE-side
//! endpoints (the sans-IO transports and sources of `tcran-traffic`), how
//! they are built from the scenario, and how their packets enter and leave
//! the node.
//!
//! Contract: servers send at their own wake-ups and on every packet they
//! receive; their packets reach the node after the core delay. A packet
//! the node delivers to a UE goes to its flow's UE-side endpoint at once,
//! and whatever that sends back (ACKs, echo replies) enters the node's
//! uplink. Packet ids are numbered here, in the order packets are created.
//!
//! An uplink flow (`direction = "uplink"`) swaps the ends' places: the
//! sender (TCP sender, source, pinger) is the UE's application and sends
//! into the node's uplink; what the node passes up reaches the receiver
//! (TCP receiver, sink, echo responder) at the server after the core
//! delay, and its ACKs and echo replies go down through the core and the
//! node's downlink back to the sender. Delays and throughput are measured
//! where the data arrives: at the server.

use super::{CoreKey, Ev, Sim};
use crate::metrics::DelayRecorder;
use crate::report::LayerDelays;
use crate::scenario::{Direction, FlowConfig, FlowKind, SimConfig};
use std::net::{IpAddr, Ipv4Addr};
use tcran_core::rng::RngStream;
use tcran_core::{
    ConfigError, Dscp, Duration, FiveTuple, FlowId, Instant, Packet, PacketId, Protocol, Qfi, Rnti,
};
use tcran_gnb::ue_address;
use tcran_traffic::sources::{
    Demand, DownloadServer, GamingSource, PacketSource, PeriodicSource, PingResponder, Pinger,
    UdpSink, VideoSource, WebPageModel,
};
use tcran_traffic::{FlowSpec, TcpConfig, TcpReceiver, TcpSender};

// One per flow, not per packet: size differences do not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(super) enum Source {
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
pub(super) enum TcpServer {
    /// A bulk or sized download; at `stop` (if any) a bulk application
    /// stops writing.
    Download {
        tx: TcpSender,
        stop: Option<Instant>,
    },
    Downloads(DownloadServer),
}

impl TcpServer {
    pub(super) fn sender(&self) -> &TcpSender {
        match self {
            TcpServer::Download { tx, .. } => tx,
            TcpServer::Downloads(w) => &w.tcp,
        }
    }
    fn on_timer(&mut self, now: Instant) {
        match self {
            TcpServer::Download { tx, .. } => tx.on_timer(now),
            TcpServer::Downloads(w) => w.on_timer(now),
        }
    }
    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        match self {
            TcpServer::Download { tx, stop } => {
                if stop.is_some_and(|s| now >= s) {
                    tx.stop_writing();
                    *stop = None;
                }
                tx.poll_transmit(now)
            }
            TcpServer::Downloads(w) => w.poll_transmit(now),
        }
    }
    fn next_wakeup(&self) -> Option<Instant> {
        match self {
            TcpServer::Download { tx, stop } => Instant::earliest(tx.next_wakeup(), *stop),
            TcpServer::Downloads(w) => w.next_wakeup(),
        }
    }
    fn on_packet(&mut self, p: &Packet, now: Instant) {
        match self {
            TcpServer::Download { tx, .. } => tx.on_packet(p, now),
            TcpServer::Downloads(w) => w.on_packet(p, now),
        }
    }
}

#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(super) enum Endpoints {
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
    /// Real programs outside the process (the emulator).
    Live(super::live::LiveEnds),
}

impl Endpoints {
    /// The receiving end's next packet to send (an ACK, an echo reply).
    fn poll_client(&mut self, now: Instant) -> Option<Packet> {
        match self {
            Endpoints::Tcp { rx, .. } => rx.poll_transmit(now),
            Endpoints::Ping { responder, .. } => responder.poll_transmit(now),
            Endpoints::Udp { .. } | Endpoints::Live(_) => None,
        }
    }

    /// When the receiving end next needs its timer (a delayed ACK).
    fn client_wakeup(&self) -> Option<Instant> {
        match self {
            Endpoints::Tcp { rx, .. } => rx.next_wakeup(),
            _ => None,
        }
    }
}

#[derive(Debug)]
pub(super) struct Flow {
    pub name: String,
    pub kind: &'static str,
    pub ends: Endpoints,
    /// When the server starts: `start` plus the seed's draw of
    /// `start_jitter`.
    pub start: Instant,
    server_wake: Option<Instant>,
    client_wake: Option<Instant>,
    pub delay: DelayRecorder,
    /// Ping flows: round-trip times measured after warm-up (moved here from
    /// the pinger at every series bin, so the pinger keeps none for long).
    pub rtt: DelayRecorder,
    /// Web and FTP flows: download times of the pages or files requested
    /// after warm-up (moved here from the server at every series bin, so
    /// the server keeps none for long).
    pub downloads: DelayRecorder,
    pub layers: LayerDelays,
    pub delivered_bytes: u64,
    pub lost: u64,
    /// Whole run: packets the server sent (the ledger).
    pub created: u64,
    pub rnti: Rnti,
    pub qfi: Qfi,
    pub tuple: FiveTuple,
    /// The data goes from the UE to the server.
    pub uplink: bool,
    /// When the flow's first packet reached (or reaches) the RAN node.
    pub first_at_gnb: Option<Instant>,
    /// Whole run (controllers take differences): bytes, delay sum, packets.
    pub total_bytes: u64,
    pub total_delay_ns: u64,
    pub total_packets: u64,
}

impl Flow {
    /// The way its data goes.
    pub(crate) fn dir(&self) -> Direction {
        if self.uplink {
            Direction::Uplink
        } else {
            Direction::Downlink
        }
    }

    /// The DRB `gnb`'s SDAP maps it to: the UE's uplink SDAP for an
    /// uplink flow.
    pub(crate) fn drb_in(&self, gnb: &tcran_gnb::Gnb) -> Option<tcran_core::DrbId> {
        if self.uplink {
            gnb.uplink_sdap_drb(self.rnti, self.qfi)
        } else {
            gnb.sdap_drb(self.rnti, self.qfi)
        }
    }

    /// A flow with nothing measured yet.
    fn new(
        name: String,
        kind: &'static str,
        ends: Endpoints,
        (rnti, qfi, tuple): (Rnti, Qfi, FiveTuple),
        first_at_gnb: Option<Instant>,
    ) -> Flow {
        Flow {
            name,
            kind,
            ends,
            start: first_at_gnb.unwrap_or(Instant::ZERO),
            server_wake: None,
            client_wake: None,
            delay: DelayRecorder::default(),
            rtt: DelayRecorder::default(),
            downloads: DelayRecorder::default(),
            layers: LayerDelays::default(),
            delivered_bytes: 0,
            lost: 0,
            created: 0,
            rnti,
            qfi,
            tuple,
            uplink: false,
            first_at_gnb,
            total_bytes: 0,
            total_delay_ns: 0,
            total_packets: 0,
        }
    }

    /// A live flow, found by its downlink 5-tuple at `now`.
    pub(super) fn live(
        name: String,
        kind: &'static str,
        rnti: Rnti,
        tuple: FiveTuple,
        now: Instant,
    ) -> Flow {
        let ends = Endpoints::Live(Default::default());
        Flow::new(name, kind, ends, (rnti, Qfi(0), tuple), Some(now))
    }

    /// Whether the flow measures round-trip times (a ping).
    pub(super) fn is_ping(&self) -> bool {
        match &self.ends {
            Endpoints::Ping { .. } => true,
            Endpoints::Live(ends) => self.kind == "ping" && ends.requests,
            _ => false,
        }
    }

    /// Moves the endpoints' measured samples (ping round trips, download
    /// times) into the flow's recorders, keeping those after warm-up.
    pub(super) fn take_samples(&mut self, warmup_end: Instant) {
        let rtts = match &mut self.ends {
            Endpoints::Ping { pinger, .. } => &mut pinger.rtts,
            Endpoints::Live(ends) => &mut ends.rtts,
            Endpoints::Tcp { tx, .. } => {
                if let TcpServer::Downloads(server) = tx.as_mut() {
                    for d in server.completed.drain(..) {
                        if d.requested_at >= warmup_end {
                            self.downloads
                                .record(d.completed_at.saturating_since(d.requested_at));
                        }
                    }
                }
                return;
            }
            _ => return,
        };
        for (at, rtt) in rtts.drain(..) {
            if at >= warmup_end {
                self.rtt.record(rtt);
            }
        }
    }

    /// Whether the flow's server answers requests (web pages, FTP files).
    pub(super) fn serves_downloads(&self) -> bool {
        matches!(&self.ends, Endpoints::Tcp { tx, .. } if matches!(tx.as_ref(), TcpServer::Downloads(_)))
    }
}

/// Hands `emit` every packet `src` has due by `now`; returns when it is
/// next due.
fn drain_due(
    src: &mut impl PacketSource,
    now: Instant,
    mut emit: impl FnMut(Packet),
) -> Option<Instant> {
    while let Some(p) = src.poll(now) {
        emit(p);
    }
    src.next_send()
}

fn server_addr(flow: usize) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(198, 51, 100, 1 + (flow % 250) as u8))
}

/// The flows of a scenario with their endpoints; `ue(rnti)` says whether
/// the UE exists and whether it has uplink DRBs.
pub(super) fn build_flows(
    cfg: &SimConfig,
    ue: impl Fn(u16) -> Option<bool>,
) -> Result<Vec<Flow>, ConfigError> {
    // Flows are told apart by name in the summary, the series and the
    // report: a second flow of the same name would be mistaken for the first.
    for (i, f) in cfg.flows.iter().enumerate() {
        tcran_core::config::check_name(&format!("flows[{i}].name"), &f.name)?;
        if let Some(j) = cfg.flows[..i].iter().position(|g| g.name == f.name) {
            return Err(ConfigError::new(
                format!("flows[{i}].name"),
                format!("{:?}", f.name),
                format!("must be unique: flows[{j}] has the same name"),
            ));
        }
    }
    cfg.flows
        .iter()
        .enumerate()
        .map(|(i, fc)| {
            build_flow(cfg.seed, i, fc, &ue).map_err(|e| e.within(format!("flows[{i}]")))
        })
        .collect()
}

fn build_flow(
    seed: u64,
    i: usize,
    fc: &FlowConfig,
    ue: impl Fn(u16) -> Option<bool>,
) -> Result<Flow, ConfigError> {
    let Some(has_uplink_drbs) = ue(fc.ue) else {
        return Err(ConfigError::new(
            "ue",
            fc.ue,
            "must be the rnti of a configured UE",
        ));
    };
    let uplink = fc.direction == Direction::Uplink;
    if uplink && !has_uplink_drbs {
        return Err(ConfigError::new(
            "direction",
            "uplink",
            format!(
                "needs uplink DRBs on UE {}: add [[ues.uplink_drbs]] to it (scenarios.md, Uplink DRBs)",
                fc.ue
            ),
        ));
    }
    tcran_core::config::check_range("qfi", fc.qfi, 0, 63)?;
    tcran_core::config::check_range("dscp", fc.dscp, 0, 63)?;
    let proto = match fc.kind {
        FlowKind::Tcp { .. } | FlowKind::Web { .. } | FlowKind::Ftp { .. } => Protocol::TCP,
        FlowKind::Ping { .. } => Protocol::ICMP,
        _ => Protocol::UDP,
    };
    let (sport, dport) = if proto == Protocol::ICMP {
        (0, 0)
    } else {
        (5000 + i as u16, 40000 + i as u16)
    };
    let (src, dst) = if uplink {
        (ue_address(Rnti(fc.ue)), server_addr(i))
    } else {
        (server_addr(i), ue_address(Rnti(fc.ue)))
    };
    let mut spec = FlowSpec::new(
        FlowId(i as u32),
        FiveTuple {
            src,
            dst,
            sport,
            dport,
            proto,
        },
    );
    spec.dscp = Dscp(fc.dscp);
    spec.qfi = Qfi(fc.qfi);
    let rng = |what: &str| RngStream::new(seed, &format!("flow/{}/{what}", fc.name));
    let jitter = tcran_core::config::check_range(
        "start_jitter",
        fc.start_jitter,
        Duration::ZERO,
        Duration::from_secs(3600),
    )?;
    let jitter = Duration::from_nanos((rng("start").uniform() * jitter.as_nanos() as f64) as u64);
    let start = Instant::ZERO + fc.start + jitter;
    let stop = fc.stop.map(|s| Instant::ZERO + s);
    // Web pages and FTP files: a download server on one TCP connection;
    // for an uplink flow the same model reversed, an upload: the UE's
    // application writes each page or file (the same object sizes and
    // arrivals) into its connection to the server, and it is complete
    // when its last byte is acknowledged at the UE.
    let downloads = |tcp: &TcpConfig, demand: Demand, stream: &str| {
        let params = tcp.build().map_err(|e| e.within("tcp"))?;
        let tx = TcpSender::new(params.clone(), spec, rng("tcp"));
        let server = DownloadServer::new(tx, demand, rng(stream), start).until(stop);
        Ok::<_, ConfigError>(Endpoints::Tcp {
            tx: Box::new(TcpServer::Downloads(server)),
            rx: Box::new(TcpReceiver::new(params, spec)),
        })
    };
    let ends = match &fc.kind {
        FlowKind::Tcp { tcp, size } => {
            let params = tcp.build().map_err(|e| e.within("tcp"))?;
            let mut tx = TcpSender::new(params.clone(), spec, rng("tcp"));
            match size {
                None => tx = tx.bulk(),
                Some(b) => tx.write(b.0),
            }
            let rx = TcpReceiver::new(params, spec);
            Endpoints::Tcp {
                tx: Box::new(TcpServer::Download { tx, stop }),
                rx: Box::new(rx),
            }
        }
        FlowKind::Web { tcp, reading_mean } => {
            let mut model = WebPageModel::default();
            if let Some(r) = reading_mean {
                tcran_core::config::check_range(
                    "reading_mean",
                    *r,
                    Duration::from_millis(1),
                    Duration::from_secs(3600),
                )?;
                model.reading_mean = *r;
                model.reading_max = Duration::from_nanos(r.as_nanos() * 7 / 5);
            }
            downloads(tcp, Demand::Pages(model), "web")?
        }
        FlowKind::Ftp {
            tcp,
            file_size,
            per_second,
        } => {
            tcran_core::config::check_range("file_size", file_size.0, 1, 1 << 30)?;
            tcran_core::config::check_range("per_second", *per_second, 1e-6, 1e4)?;
            let demand = Demand::Files {
                size: file_size.0,
                per_second: *per_second,
            };
            downloads(tcp, demand, "ftp")?
        }
        FlowKind::Video {
            fps,
            frame_size,
            iframe_size,
            iframe_period,
            mtu,
        } => Endpoints::Udp {
            src: Source::Video(VideoSource::new(
                spec,
                *fps,
                frame_size.0,
                iframe_size.map_or(frame_size.0, |b| b.0),
                *iframe_period,
                mtu.0 as u32,
                start,
                stop,
            )?),
            sink: UdpSink::default(),
        },
        FlowKind::Voip {} => Endpoints::Udp {
            src: Source::Periodic(PeriodicSource::voip_g711(spec, start, stop)),
            sink: UdpSink::default(),
        },
        FlowKind::Cbr { rate, size } => Endpoints::Udp {
            src: Source::Periodic(PeriodicSource::cbr(
                spec,
                *rate,
                size.0 as u32,
                start,
                stop,
            )?),
            sink: UdpSink::default(),
        },
        FlowKind::Gaming { mean, sd, size } => Endpoints::Udp {
            src: Source::Gaming(GamingSource::new(
                spec,
                size.0 as u32,
                *mean,
                *sd,
                rng("gaming"),
                start,
                stop,
            )?),
            sink: UdpSink::default(),
        },
        FlowKind::Ping { interval, size } => Endpoints::Ping {
            pinger: Pinger::new(spec, i as u16, size.0 as u32, *interval, start, stop)?,
            responder: PingResponder::default(),
        },
    };
    let ids = (Rnti(fc.ue), spec.qfi, spec.tuple);
    let mut flow = Flow::new(fc.name.clone(), fc.kind.name(), ends, ids, None);
    flow.start = start;
    flow.uplink = uplink;
    Ok(flow)
}

impl Sim {
    pub(super) fn wake_server(&mut self, i: usize, at: Instant) {
        let f = &mut self.flows[i];
        if f.server_wake.is_none_or(|w| at < w) {
            f.server_wake = Some(at);
            self.events.schedule(at, Ev::ServerWake(i));
        }
    }

    pub(super) fn on_server_wake(&mut self, i: usize) {
        if self.flows[i].server_wake == Some(self.now) {
            self.flows[i].server_wake = None;
            self.serve(i);
        }
    }

    pub(super) fn on_client_wake(&mut self, i: usize) {
        if self.flows[i].client_wake == Some(self.now) {
            self.flows[i].client_wake = None;
            let now = self.now;
            if let Endpoints::Tcp { rx, .. } = &mut self.flows[i].ends {
                rx.on_timer(now);
            }
            self.client_send(i);
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
        let f = &mut self.flows[i];
        let (uplink, rnti) = (f.uplink, f.rnti);
        let at_gnb = now + self.core_delay;
        let mut sent = std::mem::take(&mut self.scratch_packets);
        let mut created = 0;
        // A downlink packet goes into the core as its endpoint emits it
        // (one move, not two more through a buffer): the core only holds
        // it, so the endpoint cannot be called back meanwhile. An uplink
        // packet enters the node, whose outputs may reach this flow's
        // endpoints again (several cells), so those are sent afterwards;
        // either way ids follow the order of creation.
        let mut emit = |mut p: Packet| {
            created += 1;
            if uplink {
                sent.push(p);
                return;
            }
            self.packets.created += 1;
            self.next_id += 1;
            p.id = PacketId(self.next_id);
            let k = CoreKey(self.core.insert(p));
            self.events.schedule(at_gnb, Ev::AtGnb(k));
        };
        let next = match &mut f.ends {
            Endpoints::Tcp { tx, .. } => {
                tx.on_timer(now);
                while let Some(p) = tx.poll_transmit(now) {
                    emit(p);
                }
                tx.next_wakeup()
            }
            Endpoints::Udp { src, .. } => drain_due(src, now, emit),
            Endpoints::Ping { pinger, .. } => drain_due(pinger, now, emit),
            Endpoints::Live(_) => None,
        };
        if f.first_at_gnb.is_none() && created > 0 {
            f.first_at_gnb = Some(if uplink { now } else { at_gnb });
        }
        f.created += created;
        for mut p in sent.drain(..) {
            self.packets.created += 1;
            self.next_id += 1;
            p.id = PacketId(self.next_id);
            if self.cells.is_none() {
                self.gnb.uplink(rnti, p, now);
            } else {
                self.uplink_cells(rnti, p);
            }
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

    pub(super) fn at_server(&mut self, p: &Packet) {
        let Some(i) = p.flow.map(|f| f.0 as usize) else {
            return;
        };
        if self.flows[i].uplink {
            self.receive(i, p);
            return;
        }
        let now = self.now;
        match &mut self.flows[i].ends {
            Endpoints::Tcp { tx, .. } => tx.on_packet(p, now),
            Endpoints::Ping { pinger, .. } => pinger.on_packet(p, now),
            Endpoints::Udp { .. } => {}
            Endpoints::Live(_) => return,
        }
        self.serve(i);
    }

    /// A packet the node delivered to a UE's IP layer at `now`: metrics,
    /// then the flow's UE-side endpoint.
    pub(super) fn deliver(&mut self, p: &Packet) {
        let Some(i) = p.flow.map(|f| f.0 as usize) else {
            return;
        };
        if self.flows[i].uplink {
            // An ACK or echo reply for the UE's sender.
            let now = self.now;
            match &mut self.flows[i].ends {
                Endpoints::Tcp { tx, .. } => tx.on_packet(p, now),
                Endpoints::Ping { pinger, .. } => pinger.on_packet(p, now),
                Endpoints::Udp { .. } | Endpoints::Live(_) => return,
            }
            self.serve(i);
            return;
        }
        self.receive(i, p);
    }

    /// Flow `i`'s data packet `p` reached its receiver at `now` (the UE
    /// for a downlink flow, the server for an uplink one): metrics, then
    /// the receiving endpoint.
    pub(super) fn receive(&mut self, i: usize, p: &Packet) {
        let now = self.now;
        let counting = self.counting();
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
            f.layers.add(p, now);
        }
        if let Some(c) = self.cells.as_deref_mut() {
            c.on_delivered(i, now, p);
        }
        let f = &mut self.flows[i];
        match &mut f.ends {
            Endpoints::Tcp { rx, .. } => rx.on_packet(p, now),
            Endpoints::Udp { sink, .. } => sink.on_packet(p, now),
            Endpoints::Ping { responder, .. } => responder.on_packet(p, now),
            Endpoints::Live(_) => return,
        }
        self.client_send(i);
    }

    /// Sends what flow `i`'s receiving end has (ACKs, echo replies: up from
    /// the UE, or for an uplink flow down from the server) and re-arms its
    /// timer.
    fn client_send(&mut self, i: usize) {
        let now = self.now;
        let next = self.flows[i].ends.client_wakeup();
        if self.cells.is_none() {
            // One node only queues what it is given (nothing it does calls
            // back into the flows before its outputs are drained), so each
            // packet goes on as the endpoint hands it over.
            while let Some(p) = self.flows[i].ends.poll_client(now) {
                self.client_packet(i, p);
            }
        } else {
            // A cell's outputs are handled as it takes a packet, which may
            // deliver to this flow again: what it has now goes first.
            let mut up = std::mem::take(&mut self.scratch_up);
            while let Some(p) = self.flows[i].ends.poll_client(now) {
                up.push(p);
            }
            for p in up.drain(..) {
                self.client_packet(i, p);
            }
            self.scratch_up = up;
        }
        if let Some(t) = next.filter(|t| *t <= self.end) {
            self.wake_client(i, t.max(now));
        }
    }

    /// Numbers a packet of flow `i`'s receiving end and sends it on.
    fn client_packet(&mut self, i: usize, mut p: Packet) {
        let now = self.now;
        let (rnti, uplink) = (self.flows[i].rnti, self.flows[i].uplink);
        self.next_id += 1;
        p.id = PacketId(self.next_id);
        if uplink {
            // The server's ACK or echo reply, down through the core.
            let k = CoreKey(self.core.insert(p));
            self.events.schedule(now + self.core_delay, Ev::AtGnb(k));
        } else if self.cells.is_none() {
            self.gnb.uplink(rnti, p, now);
        } else {
            self.uplink_cells(rnti, p);
        }
    }
}
