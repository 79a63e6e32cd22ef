//! Several cells in one scenario: the `[[cells]]` and `[handover]`
//! sections (docs/scenarios.md, "Several cells"), and what a run reports
//! of them (the handovers, each cell's load).
//!
//! A scenario with `[[cells]]` runs one [`tcran_gnb::Gnb`] per cell in one
//! event loop (`crate::engine`'s `cells` module). A UE's channel is either
//! `geometry` (its track and radio parameters are the UE's, the sites are
//! the cells': the serving cell's site, the others as interferers) or a
//! recorded `drive` (each cell's RSRP per row, by cell id, and the
//! serving CQI: `tcran_ran::mobility::drive`). A UE starts in the cell it measures strongest at time 0
//! (cell selection) and moves on by handover (TS 38.300 §9.2.3): its
//! measured RSRP of every cell goes through the layer-3 filter into the
//! measurement event (TS 38.331 §5.5.4, A3 by default), whose trigger is
//! the handover decision.

use crate::handover_impact::HandoverImpact;
use serde::{Deserialize, Serialize};
use tcran_core::{ConfigError, Duration};
use tcran_gnb::TcForwarding;
use tcran_ran::mac::MacConfig;
use tcran_ran::mobility::events::{EventConfig, EventKind};

/// One cell of a multi-cell scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CellSiteConfig {
    /// The cell's id in reports (its NR cell identity).
    pub id: u32,
    /// The site's position (x, y), metres: needed when a UE's channel is
    /// `geometry`; a scenario whose UEs replay `drive` traces has no use
    /// for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<[f64; 2]>,
    /// The cell's own settings, as `[cell]` (default: the scenario's
    /// `[cell]`, or the variant's).
    #[serde(default)]
    pub cell: Option<MacConfig>,
}

fn default_measurement_period() -> Duration {
    Duration::from_millis(200)
}

fn default_interruption() -> Duration {
    Duration::from_millis(50)
}

fn default_xn_delay() -> Duration {
    Duration::from_millis(5)
}

fn default_ping_pong_window() -> Duration {
    Duration::from_secs(1)
}

fn default_event() -> EventConfig {
    EventConfig {
        event: EventKind::A3 { offset_db: 0.0 },
        hysteresis_db: 3.0,
        time_to_trigger: Duration::from_millis(256),
        filter_coefficient: 4,
    }
}

/// How UEs hand over between the cells.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HandoverConfig {
    /// The measurement event whose trigger is the handover decision, with
    /// its hysteresis, time-to-trigger and layer-3 filter (default: A3,
    /// offset 0 dB, hysteresis 3 dB, time-to-trigger 256 ms, filter
    /// coefficient 4: the values of the ns-3 comparison case).
    #[serde(default = "default_event")]
    pub trigger: EventConfig,
    /// How often a UE measures every cell's RSRP (one layer-3 filter
    /// update each): 200 ms, ns-3 LENA's `UeMeasurementsFilterPeriod`
    /// and TS 38.133's intra-frequency measurement period without DRX.
    #[serde(default = "default_measurement_period")]
    pub measurement_period: Duration,
    /// From the handover command until the UE can receive at the target.
    /// TS 38.133 §6.1.1 bounds it as the sum of the target search (none
    /// for a known cell), the RRC processing and the random access to the
    /// target (waiting for an SSB and a RACH occasion): a few tens of ms.
    /// The default, 50 ms, is of that order; set it to what the network
    /// being modelled measures.
    #[serde(default = "default_interruption")]
    pub interruption: Duration,
    /// From the handover decision (the UE's measurement report) to the
    /// handover command: the source's HANDOVER REQUEST over Xn, the
    /// target's admission control and its HANDOVER REQUEST ACKNOWLEDGE
    /// (TS 38.300 §9.2.3.2.1, steps 2-5). Meanwhile the source keeps
    /// serving the UE. Default 0, the decision is the command: TS 38.300
    /// and TS 38.133 give no value for it, and tcran ships no measurement
    /// of one; set it to what the network being modelled takes.
    #[serde(default)]
    pub preparation: Duration,
    /// One-way delay of the Xn interface carrying the UE context and the
    /// forwarded data; the target serves the UE once both the
    /// interruption is over and the context has arrived.
    #[serde(default = "default_xn_delay")]
    pub xn_delay: Duration,
    /// What the source does with the TC pipeline's queued packets:
    /// `forward` them to the target's pipeline, or `drop` them.
    #[serde(default)]
    pub tc_forwarding: TcForwarding,
    /// A handover back to the cell the UE came from less than this long
    /// after it left it is a ping-pong: the time of stay in the cell in
    /// between was below the minimum time of stay. 1 s, the value of 3GPP
    /// TR 36.839 §5.2's ping-pong definition (the mobility robustness
    /// metric TS 38.300 §15.5.2 optimises against).
    #[serde(default = "default_ping_pong_window")]
    pub ping_pong_window: Duration,
}

impl Default for HandoverConfig {
    fn default() -> Self {
        HandoverConfig {
            trigger: default_event(),
            measurement_period: default_measurement_period(),
            interruption: default_interruption(),
            preparation: Duration::ZERO,
            xn_delay: default_xn_delay(),
            tc_forwarding: TcForwarding::default(),
            ping_pong_window: default_ping_pong_window(),
        }
    }
}

impl HandoverConfig {
    /// Checks the values (the event's with TS 38.331's ranges).
    pub fn check(&self) -> Result<(), ConfigError> {
        self.trigger
            .build()
            .map_err(|e| e.within("handover.trigger"))?;
        let ms = |d: Duration| d.as_millis_f64();
        if !(1.0..=10_000.0).contains(&ms(self.measurement_period)) {
            return Err(ConfigError::new(
                "handover.measurement_period",
                self.measurement_period,
                "1ms to 10s",
            ));
        }
        if ms(self.interruption) > 10_000.0 {
            return Err(ConfigError::new(
                "handover.interruption",
                self.interruption,
                "0 to 10s",
            ));
        }
        if ms(self.preparation) > 10_000.0 {
            return Err(ConfigError::new(
                "handover.preparation",
                self.preparation,
                "0 to 10s",
            ));
        }
        if ms(self.ping_pong_window) > 60_000.0 {
            return Err(ConfigError::new(
                "handover.ping_pong_window",
                self.ping_pong_window,
                "0 to 60s",
            ));
        }
        if ms(self.xn_delay) > 10_000.0 {
            return Err(ConfigError::new(
                "handover.xn_delay",
                self.xn_delay,
                "0 to 10s",
            ));
        }
        Ok(())
    }
}

/// One handover of a run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HandoverRecord {
    pub ue: u16,
    /// When the source let the UE go (the handover command), seconds.
    pub at_s: f64,
    pub source: u32,
    pub target: u32,
    /// Until the target served the UE (the interruption, or the Xn delay
    /// if longer), ms.
    pub interruption_ms: f64,
    /// From the decision to the command (`[handover] preparation`), ms.
    pub preparation_ms: f64,
    /// Packets (and bytes) forwarded over Xn: the TC pipelines' queues and
    /// the PDCP SDUs not yet acknowledged.
    pub forwarded_packets: u64,
    pub forwarded_bytes: u64,
    pub tc_forwarded_packets: u64,
    pub pdcp_forwarded_packets: u64,
    /// Downlink packets that arrived for the UE during the interruption
    /// (forwarded by the source as they came).
    pub arrived_meanwhile: u64,
    /// Packets the handover dropped (TC queues not forwarded, RLC UM data
    /// lost with the source's RLC).
    pub dropped_packets: u64,
    /// Back to the cell the UE left less than `ping_pong_window` before.
    pub ping_pong: bool,
    /// What it did to the UE's download and call
    /// ([`crate::handover_impact`]).
    #[serde(flatten)]
    pub impact: HandoverImpact,
}

/// One cell's load over the run, after warm-up.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CellLoad {
    pub cell: u32,
    /// PRBs used / PRBs available in DL slots.
    pub prb_utilization: f64,
    /// Bytes the transport blocks carried, Mbit/s.
    pub carried_mbps: f64,
    /// Handovers out of and into the cell.
    pub handovers_out: u64,
    pub handovers_in: u64,
}
