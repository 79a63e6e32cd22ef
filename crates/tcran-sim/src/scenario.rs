//! What to simulate: the cell, its UEs with their channels, DRBs (RLC + TC
//! pipeline) and SDAP mapping, the flows, and the core-network delays.
//! Serde, unknown keys rejected, validated when the simulator is built.

use serde::{Deserialize, Serialize};
use tcran_core::{BitRate, ByteSize, Duration};
use tcran_gnb::config::default_ul_delay;
use tcran_gnb::GnbConfig;
use tcran_ran::mac::MacConfig;
use tcran_ran::rlc::RlcConfig;
use tcran_tc::PipelineConfig;
use tcran_traffic::TcpConfig;

pub use tcran_control::controller::{ControllerConfig, EventConfig};
/// The RAN node's part of a scenario, defined with the node.
pub use tcran_gnb::config::{
    builtin_trace, load_trace, load_trace_as, ChannelConfig, DrbConfig, TraceFormatName, UeConfig,
    UpfConfig, UplinkConfig, BUILTIN_TRACES,
};

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}
fn default_core_delay() -> Duration {
    ms(10)
}
fn default_series_bin() -> Duration {
    ms(100)
}

/// One simulation run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    /// Seeds every random stream of the run.
    #[serde(default)]
    pub seed: u64,
    /// Runs every variant once per seed instead of once with `seed`:
    /// `"1..10"` (ten seeds, both ends included), `"1,5,9"` or `[1, 5, 9]`;
    /// 2 to 1000 distinct seeds. The summary then gives each metric's mean
    /// and 95 % Student t confidence interval across the seeds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seeds: Option<crate::seeds::Seeds>,
    /// Simulated time.
    pub duration: Duration,
    /// Statistics ignore what happens before this.
    #[serde(default)]
    pub warmup: Duration,
    #[serde(default)]
    pub cell: MacConfig,
    /// One-way delay between the servers and the UPF/gNB (both directions).
    #[serde(default = "default_core_delay")]
    pub core_delay: Duration,
    /// Uplink delay from the UE to the gNB (scheduling request, grant,
    /// transmission) for ACKs, echo replies and RLC status PDUs. With the
    /// `uplink` scheduling-request model on, only the transmission: the
    /// wait for the SR occasion and the grant comes first.
    #[serde(default = "default_ul_delay")]
    pub ul_delay: Duration,
    /// Optional uplink scheduling-request / grant model; default off.
    #[serde(default)]
    pub uplink: UplinkConfig,
    /// Granularity of the TC egress timer (TC-RAN sec. IV-C drives egress
    /// with a timer fd): pacer and shaper wake-ups are rounded up to
    /// multiples of it. Absent: wake-ups happen exactly when due.
    #[serde(default)]
    pub tc_tick: Option<Duration>,
    /// Width of the time-series bins (per-flow goodput, delay, cwnd; drop
    /// and mark timeline): 1 ms up to the duration. Default 100 ms.
    #[serde(default = "default_series_bin")]
    pub series_bin: Duration,
    /// At least one.
    #[schemars(length(min = 1))]
    pub ues: Vec<UeConfig>,
    /// The modelled traffic: at least one for `tcran run`; `tcran emulate`
    /// runs them only when asked (its traffic is live).
    #[serde(default)]
    pub flows: Vec<FlowConfig>,
    /// Variants compared by one run: each replaces the TC pipeline of every
    /// DRB (absent pipeline = the 3GPP baseline) and may change the
    /// congestion control of every TCP flow. No variants: the scenario runs
    /// once as written.
    #[serde(default)]
    pub variants: Vec<VariantConfig>,
    /// Scheduled pipeline changes.
    #[serde(default)]
    pub events: Vec<EventConfig>,
    /// Closed-loop controllers (xApps).
    #[serde(default)]
    pub controllers: Vec<ControllerConfig>,
    /// Several cells (docs/scenarios.md, "Several cells"): each a node
    /// of its own at a site, UEs moving between them by handover. Empty:
    /// the one cell of `[cell]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cells: Vec<crate::cells::CellSiteConfig>,
    /// How UEs hand over between `cells` (defaults without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handover: Option<crate::cells::HandoverConfig>,
    /// The numbers a paper printed for this experiment, for `tcran
    /// reproduce`'s comparison ([`crate::fidelity`]); they change nothing
    /// in the runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paper: Vec<crate::fidelity::PaperNumber>,
    /// Why a group of those numbers does not keep the paper's ordering
    /// (`[[ordering_gap]]`); they change nothing in the runs either.
    #[serde(
        default,
        rename = "ordering_gap",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub ordering_gaps: Vec<crate::fidelity::OrderingGap>,
}

/// One way of running the scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VariantConfig {
    pub name: String,
    /// The pipeline of every DRB; absent = the 3GPP baseline (one FIFO, no
    /// pacer).
    #[serde(default)]
    pub pipeline: Option<PipelineConfig>,
    /// Congestion control of every TCP flow (e.g. the thesis' "BBR" variant).
    #[serde(default)]
    pub tcp_cc: Option<tcran_traffic::CcKind>,
    /// The RLC configuration of every DRB; absent = as the scenario says.
    #[serde(default)]
    pub rlc: Option<RlcConfig>,
    /// The UPF queue of every UE; absent = as the scenario says.
    #[serde(default)]
    pub upf: Option<UpfConfig>,
    /// The pipeline every UE runs on each of its uplink DRBs; absent = as
    /// the scenario says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uplink_pipeline: Option<PipelineConfig>,
    /// The RLC configuration (the UE's buffer) of every uplink DRB; absent
    /// = as the scenario says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uplink_rlc: Option<RlcConfig>,
    /// The whole cell (MAC) configuration, e.g. another MAC scheduler or
    /// other slices; absent = as the scenario says.
    #[serde(default)]
    pub cell: Option<MacConfig>,
    /// The whole list of flows (e.g. more calls, another game rate);
    /// absent = as the scenario says. `tcp_cc` applies to these.
    #[serde(default)]
    pub flows: Option<Vec<FlowConfig>>,
    /// Scheduled changes of this variant, after the scenario's own.
    #[serde(default)]
    pub events: Vec<EventConfig>,
    /// Controllers of this variant, after the scenario's own.
    #[serde(default)]
    pub controllers: Vec<ControllerConfig>,
}

/// One traffic flow between a server and a UE.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FlowConfig {
    pub name: String,
    /// RNTI of the UE.
    pub ue: u16,
    #[serde(default)]
    pub qfi: u8,
    #[serde(default)]
    pub dscp: u8,
    #[serde(default)]
    pub start: Duration,
    /// The flow starts at `start` plus a time drawn from the run's seed,
    /// uniform in `[0, start_jitter)`: real flows start at any point of
    /// the radio frame, so the default is one frame (10 ms, TS 38.211
    /// §4.3.1). `"0s"` starts it exactly at `start`.
    #[serde(default = "default_start_jitter")]
    pub start_jitter: Duration,
    #[serde(default)]
    pub stop: Option<Duration>,
    /// `"downlink"` (default): the server sends, the UE receives;
    /// `"uplink"`: the UE's application sends (a TCP upload, a call's
    /// upstream, game inputs, a ping from the UE) through the UE's uplink
    /// DRBs (`[[ues.uplink_drbs]]`, which the UE must have), the server
    /// receives, and TCP's ACKs and echo replies come back on the downlink.
    #[serde(default, skip_serializing_if = "Direction::is_downlink")]
    pub direction: Direction,
    #[serde(flatten)]
    pub kind: FlowKind,
}

/// Which way a flow's data goes (the DRBs' own direction type).
pub use tcran_control::Direction;

fn default_start_jitter() -> Duration {
    ms(10)
}

fn default_gaming_sd() -> Duration {
    ms(5)
}
fn default_gaming_size() -> ByteSize {
    ByteSize(200)
}
fn default_ping_size() -> ByteSize {
    ByteSize(84)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum FlowKind {
    /// A TCP download; `size` absent = bulk (never ends).
    Tcp {
        #[serde(default)]
        tcp: TcpConfig,
        #[serde(default)]
        size: Option<ByteSize>,
    },
    /// G.711 VoIP: 200-byte IP packets every 20 ms.
    Voip {},
    /// Online game: inter-arrival Normal(mean, sd) (thesis sec. 3.6.1).
    Gaming {
        mean: Duration,
        #[serde(default = "default_gaming_sd")]
        sd: Duration,
        #[serde(default = "default_gaming_size")]
        size: ByteSize,
    },
    /// ICMP echo every `interval`.
    Ping {
        interval: Duration,
        #[serde(default = "default_ping_size")]
        size: ByteSize,
    },
    /// Constant bit rate UDP.
    Cbr { rate: BitRate, size: ByteSize },
    /// Web browsing over one persistent TCP connection (Brunello thesis
    /// sec. 4.4, NGMN sizes): a page (main object + Pareto-many embedded
    /// objects) then an exponential reading time, repeated.
    Web {
        #[serde(default)]
        tcp: TcpConfig,
        /// Mean reading time between pages; default 5 s (capped at 7 s;
        /// a custom mean is capped at 1.4 x it, the same ratio).
        #[serde(default)]
        reading_mean: Option<Duration>,
    },
    /// FTP traffic model 1 (3GPP TR 36.814 Annex A.2.1.3.1): downloads of
    /// `file_size` bytes arriving as a Poisson process of `per_second`,
    /// over the flow's one TCP connection (Brunello sec. 5.1's background).
    Ftp {
        #[serde(default)]
        tcp: TcpConfig,
        file_size: ByteSize,
        per_second: f64,
    },
    /// Video frames over UDP/RTP, each fragmented into MTU-sized packets
    /// sent back to back (Brunello sec. 4.4), with a larger I-frame every
    /// `iframe_period`.
    Video {
        fps: f64,
        /// Application bytes per frame.
        frame_size: ByteSize,
        /// Application bytes of an I-frame; default `frame_size`.
        #[serde(default)]
        iframe_size: Option<ByteSize>,
        #[serde(default)]
        iframe_period: Option<Duration>,
        #[serde(default = "default_mtu")]
        mtu: ByteSize,
    },
}

fn default_mtu() -> ByteSize {
    ByteSize(1500)
}

impl FlowKind {
    pub fn name(&self) -> &'static str {
        match self {
            FlowKind::Tcp { .. } => "tcp",
            FlowKind::Voip {} => "voip",
            FlowKind::Gaming { .. } => "gaming",
            FlowKind::Ping { .. } => "ping",
            FlowKind::Cbr { .. } => "cbr",
            FlowKind::Web { .. } => "web",
            FlowKind::Ftp { .. } => "ftp",
            FlowKind::Video { .. } => "video",
        }
    }
}

impl SimConfig {
    /// The RAN node this scenario describes.
    pub fn gnb(&self) -> GnbConfig {
        GnbConfig {
            seed: self.seed,
            cell: self.cell.clone(),
            ul_delay: self.ul_delay,
            uplink: self.uplink.clone(),
            tc_tick: self.tc_tick,
            ues: self.ues.clone(),
        }
    }

    pub fn from_toml(text: &str) -> Result<SimConfig, toml::de::Error> {
        toml::from_str(text)
    }

    /// The scenario as one variant runs it (variants list cleared).
    pub fn for_variant(&self, v: &VariantConfig) -> SimConfig {
        let mut c = self.clone();
        c.variants.clear();
        c.seeds = None;
        if let Some(cell) = &v.cell {
            c.cell = cell.clone();
        }
        if let Some(flows) = &v.flows {
            c.flows = flows.clone();
        }
        for ue in &mut c.ues {
            if v.upf.is_some() {
                ue.upf = v.upf.clone();
            }
            for drb in &mut ue.drbs {
                drb.pipeline = v.pipeline.clone();
                if let Some(rlc) = &v.rlc {
                    drb.rlc = rlc.clone();
                }
            }
            for drb in &mut ue.uplink_drbs {
                if v.uplink_pipeline.is_some() {
                    drb.pipeline = v.uplink_pipeline.clone();
                }
                if let Some(rlc) = &v.uplink_rlc {
                    drb.rlc = rlc.clone();
                }
            }
        }
        c.events.extend(v.events.iter().cloned());
        c.controllers.extend(v.controllers.iter().cloned());
        if let Some(cc) = v.tcp_cc {
            for f in &mut c.flows {
                if let FlowKind::Tcp { tcp, .. }
                | FlowKind::Web { tcp, .. }
                | FlowKind::Ftp { tcp, .. } = &mut f.kind
                {
                    tcp.cc = cc;
                }
            }
        }
        c
    }

    /// The seeds this scenario runs with: `seeds`, or `seed` alone.
    pub fn seed_list(&self) -> Vec<u64> {
        match &self.seeds {
            Some(s) => s.as_slice().to_vec(),
            None => vec![self.seed],
        }
    }

    /// The runs this scenario asks for of one seed: its variants, or
    /// itself once (each with `seed`, and no `seeds`).
    pub fn runs(&self) -> Vec<(String, SimConfig)> {
        if self.variants.is_empty() {
            let mut c = self.clone();
            c.seeds = None;
            vec![("default".to_string(), c)]
        } else {
            self.variants
                .iter()
                .map(|v| (v.name.clone(), self.for_variant(v)))
                .collect()
        }
    }
}
