//! What the RAN node is made of: the cell (MAC/PHY), its UEs with their
//! channels, SDAP mapping, DRBs (RLC, PDCP, TC pipeline) and optional UPF
//! queue, and the uplink model. Serde, unknown keys rejected; every value
//! is checked when the node is built ([`GnbConfig::build`]), and a mistake
//! is a [`ConfigError`] naming the field (`ues[0].drbs[1].rlc.mode`).
//!
//! The simulator's scenario (`tcran_sim::SimConfig`) carries these same
//! fields at its top level; the emulator reads the same scenario files.

use crate::Gnb;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;
use tcran_core::{ConfigError, Duration, Instant};
use tcran_ran::channel::{GeometryChannel, GeometryParams, LosMode};
use tcran_ran::mac::MacConfig;
use tcran_ran::mobility::drive::{DriveChannel, DriveTrace};
use tcran_ran::mobility::pathloss::Scenario;
use tcran_ran::pdcp::PdcpConfig;
use tcran_ran::phy::mcs::{CqiTable, McsTable};
use tcran_ran::rlc::RlcConfig;
use tcran_ran::sdap::SdapConfig;
use tcran_ran::AnyChannel;
use tcran_tc::PipelineConfig;

/// The uplink delay when none is configured: 4 ms, LTE FDD's grant to
/// PUSCH time.
pub fn default_ul_delay() -> Duration {
    Duration::from_millis(4)
}
fn qam64() -> McsTable {
    McsTable::Qam64
}
fn cqi_table1() -> CqiTable {
    CqiTable::Table1
}
fn default_drbs() -> Vec<DrbConfig> {
    vec![DrbConfig::default()]
}

/// One cell and its UEs: everything between the core network and the UEs'
/// IP layer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GnbConfig {
    /// Seeds the node's random streams (HARQ outcomes), combined with
    /// `cell.seed`.
    #[serde(default)]
    pub seed: u64,
    #[serde(default)]
    pub cell: MacConfig,
    /// Uplink delay from the UE to the gNB for ACKs, echo replies and RLC
    /// status PDUs (see [`UplinkConfig`]).
    #[serde(default = "default_ul_delay")]
    pub ul_delay: Duration,
    #[serde(default)]
    pub uplink: UplinkConfig,
    /// Granularity of the TC egress timer (TC-RAN sec. IV-C drives egress
    /// with a timer fd): pacer and shaper wake-ups are rounded up to
    /// multiples of it. Absent: wake-ups happen exactly when due.
    #[serde(default)]
    pub tc_tick: Option<Duration>,
    /// At least one.
    #[schemars(length(min = 1))]
    pub ues: Vec<UeConfig>,
}

impl GnbConfig {
    /// Checks every value and builds the node; `base` resolves relative
    /// trace paths.
    pub fn build(&self, base: &Path) -> Result<Gnb, ConfigError> {
        Gnb::new(self, base)
    }
}

/// How a UE gets to send in the uplink (ACKs, echo replies, RLC status
/// PDUs). Off by default: every uplink packet then takes `ul_delay`.
///
/// On (`sr_period` or `grant_delay` given): a UE with uplink data and no
/// grant waits for its next scheduling-request occasion, then
/// `grant_delay` for the grant, and at that instant everything it has
/// queued for the uplink goes together, each packet taking `ul_delay`. In
/// a TDD cell the transmission waits for the start of the next U slot
/// (if the pattern has one). An RLC STATUS PDU is built at the grant, with
/// what the receiver knows then, and t-StatusProhibit starts there (TS
/// 38.322 §5.3.4: at the transmission opportunity). Kumar et al. (Fig. 5)
/// see status PDUs every 30 ms with a 25-ms tStatusProhibit and put the
/// rest down to LTE's SR periodicity; a status PDU riding a grant asked
/// for by a TCP ACK (their Fig. 7 discussion) happens here too.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct UplinkConfig {
    /// Scheduling-request period: a whole number of slots, 1 to 640 slots
    /// (TS 38.331 `SchedulingRequestResourceConfig` periodicities go up to
    /// 640 slots; LTE's SR periods are 5-80 ms). The UE with RNTI r has its
    /// occasions at the slots s with (s - r) mod P = 0, P the period in
    /// slots: a fixed per-UE offset, as the gNB assigns one to each UE (TS
    /// 38.213 §9.2.4), spreading the UEs over the period. Absent: a request
    /// can go at any instant.
    pub sr_period: Option<Duration>,
    /// From the scheduling request to the granted uplink transmission
    /// (0 to 100 ms; e.g. LTE FDD's 4 ms from SR to grant plus 4 ms from
    /// grant to PUSCH). Default 0.
    pub grant_delay: Duration,
}

impl UplinkConfig {
    /// Whether the SR/grant model is on.
    pub fn is_on(&self) -> bool {
        self.sr_period.is_some() || !self.grant_delay.is_zero()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UeConfig {
    pub rnti: u16,
    pub channel: ChannelConfig,
    /// QFI -> DRB mapping; default: every QFI to the first DRB.
    #[serde(default)]
    pub sdap: Option<SdapConfig>,
    #[serde(default = "default_drbs")]
    pub drbs: Vec<DrbConfig>,
    /// A queue for this UE at the UPF, before SDAP, with its own pipeline
    /// (e.g. the USP pacer); absent = packets go straight to SDAP.
    #[serde(default)]
    pub upf: Option<UpfConfig>,
    /// The UE's uplink DRBs (`[[ues.uplink_drbs]]`: `id`, `priority`,
    /// `rlc` with the UE's buffer limit, `pipeline` run in the UE, `pdcp`
    /// of the gNB's receiver). Absent or empty: the UE's uplink packets
    /// take the `uplink` delay model; present: they cross SDAP, the
    /// pipeline, RLC and the UE's MAC, and the cell's uplink scheduler
    /// (`cell.uplink`) grants them (`uplink_drbs` module).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uplink_drbs: Vec<DrbConfig>,
    /// The UE's QFI -> uplink DRB mapping; default: every QFI to the first
    /// uplink DRB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uplink_sdap: Option<SdapConfig>,
    /// The UE's uplink MAC (TS 38.321 §5.4: BSR timers, SR period and
    /// limits, logical channels); default: one logical channel per uplink
    /// DRB with its `priority` + 1.
    #[serde(default, skip_serializing_if = "is_default_mac")]
    pub uplink_mac: tcran_ran::mac::ue::UeMacConfig,
    /// The UE's own uplink channel (`[ues.uplink_channel]`, the syntax of
    /// `channel`: `mcs`, `cqi`, `mcs_ramp` or `trace`, e.g. a mahimahi
    /// `.up` trace); needs `uplink_drbs`. Absent: the PUSCH sees the
    /// downlink channel's sample of the slot (`uplink_drbs` module).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uplink_channel: Option<ChannelConfig>,
}

fn is_default_mac(m: &tcran_ran::mac::ue::UeMacConfig) -> bool {
    *m == tcran_ran::mac::ue::UeMacConfig::default()
}

/// The UE's queue at the UPF (thesis ch. 3 second scenario: USP between
/// the UPF and the SDAP buffers).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpfConfig {
    /// A TC pipeline whose "lower layer" is the UE's SDAP/TC queues.
    pub pipeline: PipelineConfig,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DrbConfig {
    #[serde(default = "one")]
    pub id: u8,
    /// Logical channel priority (lower first).
    #[serde(default)]
    pub priority: u8,
    #[serde(default)]
    pub rlc: RlcConfig,
    /// The TC pipeline; absent = the 3GPP baseline (one FIFO, no pacer:
    /// packets go straight down to RLC).
    #[serde(default)]
    pub pipeline: Option<PipelineConfig>,
    /// The UE's PDCP receiver: reordering with t-Reordering (default
    /// 100 ms) or `out_of_order_delivery = true`.
    #[serde(default)]
    pub pdcp: PdcpConfig,
}

fn one() -> u8 {
    1
}

impl Default for DrbConfig {
    fn default() -> Self {
        DrbConfig {
            id: 1,
            priority: 0,
            rlc: RlcConfig::default(),
            pipeline: None,
            pdcp: PdcpConfig::default(),
        }
    }
}

/// The radio channel of a UE.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ChannelConfig {
    /// A fixed MCS.
    Mcs {
        mcs: u8,
        #[serde(default = "qam64")]
        table: McsTable,
    },
    /// A fixed CQI, mapped to an MCS (TS 38.214 tables, as the three stacks do).
    Cqi {
        cqi: u8,
        #[serde(default = "cqi_table1")]
        table: CqiTable,
    },
    /// MCS staircase from `from` to `to` over `over`, starting at `start`
    /// (TC-RAN Fig. 12: 6 -> 18 over 60 s).
    McsRamp {
        from: u8,
        to: u8,
        #[serde(default)]
        start: Duration,
        over: Duration,
        #[serde(default = "qam64")]
        table: McsTable,
    },
    /// A capacity trace file (mahimahi, thesis packets-per-10-ms, UCC CSV),
    /// relative to the scenario file, or a trace shipped inside tcran
    /// (`builtin:NAME`, see [`BUILTIN_TRACES`]). A UCC CSV is used through
    /// its CQI column (an MCS channel).
    Trace {
        path: String,
        /// The file's format: `auto` (default) tells it from the content.
        #[serde(default, skip_serializing_if = "TraceFormatName::is_auto")]
        format: TraceFormatName,
        /// How long the MAC keeps bytes the trace offered and no grant used
        /// (0 to 1 s; `tcran_ran::mac` module docs). Default 0, `mm-link`'s
        /// behaviour: an unused opportunity is lost. `"24ms"` models the
        /// bunching of a receiver-side delivery trace by HARQ
        /// ([`tcran_ran::channel::MAHIMAHI_CARRY_OVER`]), a hypothesis no
        /// measurement here confirms.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        carry_over: Option<Duration>,
        /// Where in the recording time 0 of the run falls: `"random"`
        /// (default: drawn from the run's seed, uniform over one pass in
        /// whole milliseconds, so each seed replays another window of the
        /// trace) or an offset (`"0s"`: the first line).
        #[serde(default, skip_serializing_if = "TraceStart::is_random")]
        start: TraceStart,
    },
    /// A UE moving past sites: TR 38.901 path loss, LOS and shadowing,
    /// SINR -> CQI -> MCS ([`tcran_ran::channel::GeometryChannel`]).
    Geometry {
        #[serde(default = "uma")]
        scenario: Scenario,
        /// The serving site, metres.
        #[serde(default)]
        site: [f64; 2],
        /// Sites that interfere, each always transmitting.
        #[serde(default)]
        interferers: Vec<[f64; 2]>,
        /// Default: 25 m (UMa), 10 m (UMi), TR 38.901 Table 7.2-1.
        #[serde(default)]
        site_height_m: Option<f64>,
        /// Default 46 dBm, a macro site (TR 36.814 Table A.2.1.1-2).
        #[serde(default = "tx_power")]
        tx_power_dbm: f64,
        #[serde(default = "fc")]
        fc_ghz: f64,
        #[serde(default = "ue_height")]
        ue_height_m: f64,
        /// Default 9 dB, a UE (TR 36.814 Table A.2.1.1-2).
        #[serde(default = "noise_figure")]
        noise_figure_db: f64,
        /// Waypoints, metres; the UE walks them from time 0.
        track: Vec<[f64; 2]>,
        #[serde(default)]
        speed_mps: f64,
        /// `los`, `nlos` or `random` (Table 7.4.2-1's probability, drawn
        /// again every `los_update_m` travelled).
        #[serde(default)]
        los: LosName,
        #[serde(default = "los_update")]
        los_update_m: f64,
        #[serde(default = "yes")]
        shadowing: bool,
        /// The attenuated Shannon bound's cap, bit/s/Hz (TR 36.942 A.2: 4.4).
        #[serde(default = "max_efficiency")]
        max_efficiency: f64,
        #[serde(default = "cqi_table1")]
        table: CqiTable,
    },
    /// A recorded drive ([`tcran_ran::mobility::drive`]): the serving
    /// cell's CQI per row as link adaptation, and, in a `[[cells]]`
    /// scenario, every cell's RSRP for the handover decisions. A file
    /// relative to the scenario, or a drive shipped inside tcran
    /// (`builtin:NAME`, see [`BUILTIN_DRIVES`]).
    Drive {
        path: String,
        #[serde(default = "cqi_table1")]
        table: CqiTable,
        /// The cell the run serves the UE from, whose CQI the channel
        /// gives ([`DriveChannel::serving_from`]); set per cell by a
        /// `[[cells]]` run, not a scenario key.
        #[serde(skip)]
        #[schemars(skip)]
        serving_cell: Option<tcran_core::CellId>,
    },
}

/// How a geometry channel's LOS state is chosen.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum LosName {
    Los,
    Nlos,
    #[default]
    Random,
}

fn uma() -> Scenario {
    Scenario::Uma
}
fn tx_power() -> f64 {
    46.0
}
fn fc() -> f64 {
    3.5
}
fn ue_height() -> f64 {
    1.5
}
fn noise_figure() -> f64 {
    9.0
}
fn los_update() -> f64 {
    50.0
}
fn yes() -> bool {
    true
}
fn max_efficiency() -> f64 {
    4.4
}

/// What building a channel needs from the node: the seed and a name for
/// its random streams, and the cell's occupied bandwidth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChannelContext {
    pub seed: u64,
    pub rnti: u16,
    pub bandwidth_hz: f64,
}

/// Where a looping trace starts ([`ChannelConfig::Trace`]'s `start`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TraceStart {
    /// A point drawn from the run's seed.
    #[default]
    Random,
    /// This far into the recording (taken modulo one pass).
    At(Duration),
}

impl TraceStart {
    pub fn is_random(&self) -> bool {
        *self == TraceStart::Random
    }
}

impl Serialize for TraceStart {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            TraceStart::Random => s.serialize_str("random"),
            TraceStart::At(d) => d.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for TraceStart {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s.trim() == "random" {
            return Ok(TraceStart::Random);
        }
        tcran_core::units::parse_duration(&s)
            .map(TraceStart::At)
            .map_err(|e| {
                serde::de::Error::custom(format!(
                    "{e}; or \"random\" for a start drawn from the seed"
                ))
            })
    }
}

impl schemars::JsonSchema for TraceStart {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "TraceStart".into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "\"random\" (a start drawn from the run's seed) or a duration into the recording",
            "anyOf": [{ "const": "random" }, g.subschema_for::<Duration>()],
        })
    }
}

/// How a trace file is read: its format told from its content, or forced.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormatName {
    /// Told from the content (a UCC CSV header, a thesis sample count,
    /// else mahimahi).
    #[default]
    Auto,
    /// mahimahi: one millisecond timestamp per 1500-byte delivery opportunity.
    Mahimahi,
    /// Thesis packets-per-10-ms trace: a sample count, then the samples.
    Thesis,
    /// UCC 5G dataset CSV, used through its CQI column.
    Ucc,
}

impl TraceFormatName {
    pub fn is_auto(&self) -> bool {
        *self == TraceFormatName::Auto
    }
}

impl ChannelConfig {
    /// Where the recording starts: a trace's `start`; the others have no
    /// recording to start elsewhere in (a fixed channel, an MCS profile).
    pub fn start(&self) -> TraceStart {
        match self {
            ChannelConfig::Trace { start, .. } => *start,
            _ => TraceStart::At(Duration::ZERO),
        }
    }

    /// Where in `channel`'s recording (built from this configuration) time
    /// 0 falls, and whether the seed drew it: `start`, or with `"random"`
    /// a whole millisecond of one pass drawn from the random stream
    /// `stream` of `seed` (0 for a channel without a recording).
    pub(crate) fn recording_start(
        &self,
        channel: &AnyChannel,
        seed: u64,
        stream: &str,
    ) -> (Duration, bool) {
        match (self.start(), channel.loop_length()) {
            (TraceStart::At(d), _) => (d, false),
            (TraceStart::Random, None) => (Duration::ZERO, false),
            (TraceStart::Random, Some(len)) => {
                let ms = (len.as_nanos() / 1_000_000).max(1);
                let mut rng = tcran_core::rng::RngStream::new(seed, stream);
                (
                    Duration::from_millis((rng.uniform() * ms as f64) as u64),
                    true,
                )
            }
        }
    }

    /// The carry-over window ([`Self::Trace`]'s `carry_over`; none
    /// unless set).
    pub fn carry_over(&self) -> Duration {
        match self {
            ChannelConfig::Trace {
                carry_over: Some(c),
                ..
            } => *c,
            _ => Duration::ZERO,
        }
    }

    pub fn build(&self, base: &Path, ctx: &ChannelContext) -> Result<AnyChannel, ConfigError> {
        match self {
            ChannelConfig::Geometry {
                scenario,
                site,
                interferers,
                site_height_m,
                tx_power_dbm,
                fc_ghz,
                ue_height_m,
                noise_figure_db,
                track,
                speed_mps,
                los,
                los_update_m,
                shadowing,
                max_efficiency,
                table,
            } => {
                let xy = |p: &[f64; 2]| (p[0], p[1]);
                let params = GeometryParams {
                    scenario: *scenario,
                    site: xy(site),
                    interferers: interferers.iter().map(xy).collect(),
                    site_height_m: site_height_m.unwrap_or(match scenario {
                        Scenario::Uma => 25.0,
                        Scenario::UmiStreetCanyon => 10.0,
                    }),
                    tx_power_dbm: *tx_power_dbm,
                    fc_ghz: *fc_ghz,
                    ue_height_m: *ue_height_m,
                    noise_figure_db: *noise_figure_db,
                    bandwidth_hz: ctx.bandwidth_hz,
                    track: track.iter().map(xy).collect(),
                    speed_mps: *speed_mps,
                    los: match los {
                        LosName::Los => LosMode::Los,
                        LosName::Nlos => LosMode::Nlos,
                        LosName::Random => LosMode::Random {
                            update_m: *los_update_m,
                        },
                    },
                    shadowing: *shadowing,
                    max_efficiency: *max_efficiency,
                    cqi_table: *table,
                };
                GeometryChannel::new(params, ctx.seed, &format!("channel/ue{}", ctx.rnti))
                    .map(|c| AnyChannel::Geometry(Box::new(c)))
            }
            ChannelConfig::Drive {
                path,
                table,
                serving_cell,
            } => Ok(AnyChannel::Drive(
                DriveChannel::new(load_drive(base, path)?, *table).serving_from(*serving_cell),
            )),
            ChannelConfig::Mcs { mcs, table } => AnyChannel::fixed_mcs(*table, *mcs),
            ChannelConfig::Cqi { cqi, table } => AnyChannel::fixed_cqi(*table, *cqi),
            ChannelConfig::McsRamp {
                from,
                to,
                start,
                over,
                table,
            } => tcran_ran::channel::McsSeries::linear_ramp(
                *table,
                *from,
                *to,
                Instant::ZERO + *start,
                *over,
            )
            .map(AnyChannel::McsSeries),
            ChannelConfig::Trace {
                path,
                format,
                carry_over,
                start: _,
            } => {
                if let Some(c) = carry_over {
                    tcran_core::config::check_range(
                        "carry_over",
                        *c,
                        Duration::ZERO,
                        Duration::from_secs(1),
                    )?;
                }
                if path.starts_with("builtin:") && builtin_trace(path).is_none() {
                    let names: Vec<&str> = BUILTIN_TRACES.iter().map(|(n, _)| *n).collect();
                    return Err(ConfigError::new(
                        "path",
                        path,
                        format!("no such built-in trace; built-in: {}", names.join(", ")),
                    ));
                }
                let full = base.join(path);
                load_trace_as(&full, *format)
                    .map_err(|e| ConfigError::new("path", full.display(), e))
            }
        }
    }
}

/// Traces shipped inside tcran (data/traces, with their licenses), usable as
/// `path = "builtin:NAME"` without any file.
pub const BUILTIN_TRACES: &[(&str, &str)] = &[
    (
        "builtin:thesis-pedestrian",
        include_str!("../../../data/traces/dynamic-buffer-tmc/packets_pedestrian.txt"),
    ),
    (
        "builtin:thesis-train",
        include_str!("../../../data/traces/dynamic-buffer-tmc/packets_train.txt"),
    ),
    (
        "builtin:verizon-lte-short",
        include_str!("../../../data/traces/mahimahi/Verizon-LTE-short.down"),
    ),
    (
        "builtin:tmobile-lte-short",
        include_str!("../../../data/traces/mahimahi/TMobile-LTE-short.down"),
    ),
    // The `.up` files of the same two mahimahi recordings, for a UE's
    // `uplink_channel`.
    (
        "builtin:verizon-lte-short-up",
        include_str!("../../../data/traces/mahimahi/Verizon-LTE-short.up"),
    ),
    (
        "builtin:tmobile-lte-short-up",
        include_str!("../../../data/traces/mahimahi/TMobile-LTE-short.up"),
    ),
];

/// Drive traces shipped inside tcran (data/traces/ucc-drive, with their
/// license and provenance), usable as `path = "builtin:NAME"` of a
/// `drive` channel.
pub const BUILTIN_DRIVES: &[(&str, &str)] = &[(
    "builtin:ucc-drive-cork",
    include_str!("../../../data/traces/ucc-drive/B_2020.01.16_09.56.56-150s.csv"),
)];

/// Reads a drive trace: `builtin:NAME` or a file relative to `base`; the
/// error names the field (`path`) and says which line, column and value
/// are wrong.
pub fn load_drive(base: &Path, path: &str) -> Result<Arc<DriveTrace>, ConfigError> {
    if let Some(name) = path.strip_prefix("builtin:") {
        let Some((_, text)) = BUILTIN_DRIVES.iter().find(|(n, _)| n[8..] == *name) else {
            let names: Vec<&str> = BUILTIN_DRIVES.iter().map(|(n, _)| *n).collect();
            return Err(ConfigError::new(
                "path",
                path,
                format!("no such built-in drive; built-in: {}", names.join(", ")),
            ));
        };
        return DriveTrace::parse(path, text)
            .map(Arc::new)
            .map_err(|e| ConfigError::new("path", path, e.detail()));
    }
    let full = base.join(path);
    DriveTrace::from_path(&full)
        .map(Arc::new)
        .map_err(|e| ConfigError::new("path", full.display(), e.detail()))
}

/// The text of a built-in trace named `builtin:NAME` (the path may carry the
/// scenario's directory in front).
pub fn builtin_trace(path: &str) -> Option<(&'static str, &'static str)> {
    let name = &path[path.find("builtin:")?..];
    BUILTIN_TRACES.iter().copied().find(|(n, _)| *n == name)
}

/// Reads a capacity trace in whichever supported format its content has;
/// the error says what is wrong without the file name (the caller shows
/// the path). UCC 5G CSVs are used through their CQI column, as the thesis used the 4G
/// dataset (1 sample per second).
pub fn load_trace(path: &Path) -> Result<AnyChannel, String> {
    load_trace_as(path, TraceFormatName::Auto)
}

/// [`load_trace`] in a given format. A file whose format cannot be told
/// from its content is read in the format it most likely has
/// ([`TraceFormat::guess`](tcran_ran::TraceFormat::guess)), so the error
/// names the line that is wrong rather than only "not a trace".
pub fn load_trace_as(path: &Path, format: TraceFormatName) -> Result<AnyChannel, String> {
    use tcran_ran::channel::{MahimahiTrace, ThesisTrace, TraceFormat, UccTrace};
    let (name, text) = match builtin_trace(&path.to_string_lossy()) {
        Some((name, text)) => (name.to_string(), text.to_string()),
        None => tcran_ran::channel::read_trace_file(path).map_err(|e| e.detail())?,
    };
    let (chosen, guessed) = match format {
        TraceFormatName::Auto => match TraceFormat::detect(&text) {
            Some(f) => (f, false),
            None => (TraceFormat::guess(&text), true),
        },
        TraceFormatName::Mahimahi => (TraceFormat::Mahimahi, false),
        TraceFormatName::Thesis => (TraceFormat::ThesisPackets, false),
        TraceFormatName::Ucc => (TraceFormat::Ucc5g, false),
    };
    // The caller names the file (the field's value): say what is wrong
    // with it without repeating its name.
    let err = |e: tcran_ran::TraceError| {
        if guessed {
            format!(
                "the format cannot be told from the content (set `format` to one of \
                 mahimahi, thesis, ucc to force it); read as {}: {}",
                chosen.short_name(),
                e.detail()
            )
        } else {
            e.detail()
        }
    };
    match chosen {
        TraceFormat::Mahimahi => MahimahiTrace::parse(&name, &text)
            .map(AnyChannel::Mahimahi)
            .map_err(err),
        TraceFormat::ThesisPackets => ThesisTrace::parse(&name, &text)
            .map(AnyChannel::Thesis)
            .map_err(err),
        TraceFormat::Ucc5g => UccTrace::parse(&name, &text)
            .and_then(|t| t.cqi_series(CqiTable::Table1))
            .map(AnyChannel::Cqi)
            .map_err(err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(path: &str, format: TraceFormatName) -> Result<AnyChannel, ConfigError> {
        ChannelConfig::Trace {
            path: path.to_string(),
            format,
            carry_over: None,
            start: TraceStart::Random,
        }
        .build(
            Path::new("."),
            &ChannelContext {
                seed: 1,
                rnti: 1,
                bandwidth_hz: 10e6,
            },
        )
    }

    #[test]
    fn a_misspelled_builtin_lists_the_builtins() {
        let e = trace("builtin:thesis-pedestrain", TraceFormatName::Auto).unwrap_err();
        assert_eq!(e.field, "path");
        assert_eq!(e.value, "builtin:thesis-pedestrain");
        for (name, _) in BUILTIN_TRACES {
            assert!(e.allowed.contains(name), "{e}");
        }
    }

    #[test]
    fn a_broken_trace_names_its_line_with_or_without_a_forced_format() {
        let dir = std::env::temp_dir().join(format!("tcran-gnb-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("bad.down");
        // Line 3 is not a timestamp: no format fits, mahimahi is the guess.
        std::fs::write(&f, "0\n1\n1x\n2\n").unwrap();
        let p = f.to_str().unwrap();
        let e = trace(p, TraceFormatName::Auto).unwrap_err();
        assert!(e.allowed.contains("read as mahimahi"), "{e}");
        assert!(e.allowed.contains("line 3: \"1x\""), "{e}");
        assert!(e.allowed.contains("`format`"), "{e}");
        let e = trace(p, TraceFormatName::Mahimahi).unwrap_err();
        assert!(e.allowed.starts_with("line 3: \"1x\""), "{e}");
        // A valid thesis trace forced into the mahimahi reader fails there.
        std::fs::write(&f, "4\n1\n2\n3\n1\n").unwrap();
        assert!(trace(p, TraceFormatName::Auto).is_ok());
        assert!(trace(p, TraceFormatName::Thesis).is_ok());
        let e = trace(p, TraceFormatName::Mahimahi).unwrap_err();
        assert!(e.allowed.starts_with("line 2:"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `start` is "random" by default and written only when it is not; an
    /// offset is a duration; anything else names both forms.
    #[test]
    fn trace_start_is_random_or_an_offset() {
        let parse = |extra: &str| {
            toml::from_str::<ChannelConfig>(&format!("kind = \"trace\"\npath = \"x\"\n{extra}"))
                .map(|c| c.start())
        };
        assert_eq!(parse("").unwrap(), TraceStart::Random);
        assert_eq!(parse("start = \"random\"").unwrap(), TraceStart::Random);
        assert_eq!(
            parse("start = \"90s\"").unwrap(),
            TraceStart::At(Duration::from_secs(90))
        );
        let e = parse("start = \"later\"").unwrap_err().to_string();
        assert!(e.contains("random"), "{e}");
        let c: ChannelConfig = toml::from_str("kind = \"trace\"\npath = \"x\"").unwrap();
        assert!(!toml::to_string(&c).unwrap().contains("start"));
    }

    #[test]
    fn the_format_is_optional_and_written_only_when_forced() {
        let c: ChannelConfig = toml::from_str("kind = \"trace\"\npath = \"x\"").unwrap();
        assert_eq!(
            c,
            ChannelConfig::Trace {
                path: "x".into(),
                format: TraceFormatName::Auto,
                carry_over: None,
                start: TraceStart::Random,
            }
        );
        let c: ChannelConfig =
            toml::from_str("kind = \"trace\"\npath = \"x\"\nformat = \"ucc\"").unwrap();
        assert!(matches!(
            c,
            ChannelConfig::Trace {
                format: TraceFormatName::Ucc,
                ..
            }
        ));
        assert!(toml::from_str::<ChannelConfig>(
            "kind = \"trace\"\npath = \"x\"\nformat = \"csv\""
        )
        .is_err());
    }
}
