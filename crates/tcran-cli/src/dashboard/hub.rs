//! The dashboard's state, without I/O: the newest report of every node and
//! the controls sent from the page, and the snapshot each browser is sent.
//!
//! Contract:
//! - One latest-state slot per node: a report replaces the one before it
//!   (`tcran xapp monitor`'s rule). A browser that reads slowly gets the
//!   newest state at its next read, never a backlog; the reports it did
//!   not see are counted per browser ([`Snapshot::skipped`]).
//! - A snapshot lists every node in one line each and details one (its
//!   DRBs' pipeline statistics and lower-layer KPIs as E2SM-TCRAN carried
//!   them, its KPM values): what the page draws, no more, so the cost of
//!   a push grows with the nodes' count, not with all their DRBs.
//! - Every control sent from the page is kept (the last
//!   [`CONTROLS_KEPT`]) with its E2 outcome: applied, refused with the
//!   node's reason, or failed (no answer, node gone).

use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};
use tcran_control::{Direction, DrbKey};
use tcran_tc::stats::PipelineStats;
use tcran_xapp::{KpmReport, KpmValue, NodeId, NodeInfo, TcIndication};

/// Controls kept for the page's log.
pub const CONTROLS_KEPT: usize = 50;

/// One node as the hub knows it.
#[derive(Debug)]
struct Node {
    name: String,
    peer: String,
    tls: bool,
    latest: Option<TcIndication>,
    /// Reports received (each replaced the one before).
    reports: u64,
    kpm: Option<KpmReport>,
}

/// What happened to a control sent from the page.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Sent, no answer yet.
    Pending,
    /// The node applied it.
    Applied,
    /// The node refused it (its reason) and changed nothing.
    Refused,
    /// No outcome: the node did not answer in time or went away.
    Failed,
}

/// One control sent from the page.
#[derive(Debug, Clone, Serialize)]
pub struct ControlRecord {
    pub id: u64,
    pub node: NodeId,
    pub node_name: String,
    pub rnti: u16,
    pub drb: u8,
    /// `"uplink"` for an uplink DRB; absent: downlink.
    #[serde(skip_serializing_if = "Direction::is_downlink")]
    pub direction: Direction,
    /// What was asked, in one line (a preset's name, "pipeline from the
    /// editor", a control's `op`).
    pub what: String,
    pub outcome: Outcome,
    /// The refusal or failure, in the node's words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The dashboard's state.
#[derive(Debug, Default)]
pub struct Hub {
    nodes: BTreeMap<NodeId, Node>,
    controls: VecDeque<ControlRecord>,
    next_control: u64,
    /// Bumped by every report and every control's change: a browser that
    /// saw `version` has seen everything up to it.
    version: u64,
}

/// One line of the node list.
#[derive(Debug, Serialize)]
pub struct NodeLine {
    pub id: NodeId,
    pub name: String,
    pub peer: String,
    pub tls: bool,
    pub drbs: usize,
    /// The node's clock in its newest report, s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t_s: Option<f64>,
    /// The largest RLC head-of-line sojourn over its DRBs, ms.
    pub max_sojourn_ms: f64,
    /// RLC bytes over its DRBs.
    pub rlc_bytes: u64,
    pub reports: u64,
}

/// A DRB of the detailed node.
#[derive(Debug, Serialize)]
pub struct DrbLine<'a> {
    pub rnti: u16,
    pub drb: u8,
    /// `"uplink"` for an uplink DRB (the UE's pipeline); absent: downlink.
    #[serde(skip_serializing_if = "Direction::is_downlink")]
    pub direction: Direction,
    pub rlc_bytes: u64,
    pub rlc_sdus: u32,
    pub rlc_sojourn_ms: f64,
    pub rlc_tx_bytes: u64,
    pub mac_tx_bytes: u64,
    pub mac_prbs: u64,
    pub mcs: u8,
    pub stats: &'a PipelineStats,
}

/// The detailed node.
#[derive(Debug, Serialize)]
pub struct Detail<'a> {
    pub id: NodeId,
    pub name: String,
    /// The node's clock in the report, s.
    pub t_s: f64,
    pub drbs: Vec<DrbLine<'a>>,
    /// KPM measurements of the node (E2SM-KPM style 1), newest period:
    /// name, value, unit.
    pub kpm: Vec<(String, Option<f64>, &'static str)>,
}

/// What one push sends to one browser.
#[derive(Debug, Serialize)]
pub struct Snapshot<'a> {
    pub version: u64,
    pub nodes: Vec<NodeLine>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<Detail<'a>>,
    pub controls: &'a VecDeque<ControlRecord>,
    /// Pushes this browser missed because it read too slowly (it got the
    /// newest state instead of each of them).
    pub skipped: u64,
}

impl Hub {
    /// A node finished its E2 Setup.
    pub fn connected(&mut self, n: &NodeInfo) {
        self.nodes.insert(
            n.id,
            Node {
                name: n.name.clone(),
                peer: n.peer.to_string(),
                tls: n.tls,
                latest: None,
                reports: 0,
                kpm: None,
            },
        );
        self.version += 1;
    }

    /// A node's association ended.
    pub fn disconnected(&mut self, id: NodeId) {
        if self.nodes.remove(&id).is_some() {
            self.version += 1;
        }
    }

    /// A node's newest E2SM-TCRAN report (replaces the one before).
    pub fn report(&mut self, id: NodeId, ind: TcIndication) {
        if let Some(n) = self.nodes.get_mut(&id) {
            n.latest = Some(ind);
            n.reports += 1;
            self.version += 1;
        }
    }

    /// A node's newest KPM report.
    pub fn kpm(&mut self, id: NodeId, report: KpmReport) {
        if let Some(n) = self.nodes.get_mut(&id) {
            n.kpm = Some(report);
            self.version += 1;
        }
    }

    pub fn version(&self) -> u64 {
        self.version
    }

    pub fn node_name(&self, id: NodeId) -> Option<&str> {
        self.nodes.get(&id).map(|n| n.name.as_str())
    }

    /// A control is being sent; its id for [`Hub::settle`].
    pub fn control_sent(&mut self, node: NodeId, drb: DrbKey, what: String) -> u64 {
        let id = self.next_control;
        self.next_control += 1;
        if self.controls.len() == CONTROLS_KEPT {
            self.controls.pop_front();
        }
        self.controls.push_back(ControlRecord {
            id,
            node,
            node_name: self.node_name(node).unwrap_or("?").to_string(),
            rnti: drb.rnti.0,
            drb: drb.drb.0,
            direction: drb.dir,
            what,
            outcome: Outcome::Pending,
            reason: None,
        });
        self.version += 1;
        id
    }

    /// A control's outcome.
    pub fn settle(&mut self, id: u64, outcome: Outcome, reason: Option<String>) {
        if let Some(c) = self.controls.iter_mut().find(|c| c.id == id) {
            c.outcome = outcome;
            c.reason = reason;
            self.version += 1;
        }
    }

    /// The snapshot for a browser that looks at node `selected` (else the
    /// first node) and missed `skipped` pushes.
    pub fn snapshot(&self, selected: Option<NodeId>, skipped: u64) -> Snapshot<'_> {
        let nodes = self
            .nodes
            .iter()
            .map(|(id, n)| {
                let drbs = n.latest.as_ref().map_or(&[][..], |l| &l.drbs[..]);
                NodeLine {
                    id: *id,
                    name: n.name.clone(),
                    peer: n.peer.clone(),
                    tls: n.tls,
                    drbs: drbs.len(),
                    t_s: n.latest.as_ref().map(|l| l.time_ns as f64 / 1e9),
                    max_sojourn_ms: drbs
                        .iter()
                        .map(|d| d.lower.rlc_sojourn.as_millis_f64())
                        .fold(0.0, f64::max),
                    rlc_bytes: drbs.iter().map(|d| d.lower.rlc_backlog_bytes).sum(),
                    reports: n.reports,
                }
            })
            .collect();
        let chosen = selected
            .filter(|s| self.nodes.contains_key(s))
            .or_else(|| self.nodes.keys().next().copied());
        let node = chosen.and_then(|id| {
            let n = &self.nodes[&id];
            let latest = n.latest.as_ref()?;
            Some(Detail {
                id,
                name: n.name.clone(),
                t_s: latest.time_ns as f64 / 1e9,
                drbs: latest
                    .drbs
                    .iter()
                    .map(|d| DrbLine {
                        rnti: d.drb.rnti.0,
                        drb: d.drb.drb.0,
                        direction: d.drb.dir,
                        rlc_bytes: d.lower.rlc_backlog_bytes,
                        rlc_sdus: d.lower.rlc_backlog_sdus,
                        rlc_sojourn_ms: d.lower.rlc_sojourn.as_millis_f64(),
                        rlc_tx_bytes: d.lower.rlc_tx_bytes,
                        mac_tx_bytes: d.lower.mac_tx_bytes,
                        mac_prbs: d.lower.mac_prbs,
                        mcs: d.lower.mcs,
                        stats: &d.stats,
                    })
                    .collect(),
                kpm: n.kpm.as_ref().map(kpm_values).unwrap_or_default(),
            })
        });
        Snapshot {
            version: self.version,
            nodes,
            node,
            controls: &self.controls,
            skipped,
        }
    }
}

/// The unit of a KPM measurement as TS 28.552 defines it (the table of
/// `tcran_e2::sm::kpm`, which reports them).
fn kpm_unit(name: &str) -> &'static str {
    match name {
        "DRB.UEThpDl" => "kbit/s",
        "DRB.RlcSduDelayDl" => "0.1 ms",
        "DRB.RlcSduTransmittedVolumeDL" => "kbit",
        "DRB.PdcpSduVolumeDL" => "Mbit",
        "RRU.PrbUsedDl" | "RRU.PrbAvailDl" => "PRB",
        "RRU.PrbTotDl" => "%",
        _ => "",
    }
}

/// The node-level values of a KPM report's newest period, by name
/// (`None`: the node had no value for the period), with their units.
fn kpm_values(r: &KpmReport) -> Vec<(String, Option<f64>, &'static str)> {
    let Some(newest) = r
        .records
        .iter()
        .filter(|(ue, _)| ue.is_none())
        .flat_map(|(_, periods)| periods.last())
        .next_back()
    else {
        return Vec::new();
    };
    r.names
        .iter()
        .zip(newest)
        .map(|(name, v)| {
            let v = match v {
                KpmValue::Integer(i) => Some(f64::from(*i)),
                KpmValue::Real(x) => Some(*x),
                KpmValue::NoValue => None,
            };
            (name.clone(), v, kpm_unit(name))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcran_control::LowerLayerKpis;
    use tcran_core::Duration;
    use tcran_xapp::DrbStatus;

    fn info(id: NodeId) -> NodeInfo {
        NodeInfo {
            id,
            name: format!("gnb:001f01:{id}"),
            peer: "127.0.0.1:40000".parse().unwrap(),
            tls: false,
            functions: Vec::new(),
            drbs: Vec::new(),
            indications: 0,
            indications_dropped: 0,
        }
    }

    fn report(t_ms: u64, sojourn_ms: u64) -> TcIndication {
        TcIndication {
            time_ns: t_ms * 1_000_000,
            condition: false,
            drbs: vec![DrbStatus {
                drb: DrbKey::new(1, 1),
                stats: PipelineStats::default(),
                lower: LowerLayerKpis {
                    rlc_backlog_bytes: 1500 * sojourn_ms,
                    rlc_sojourn: Duration::from_millis(sojourn_ms),
                    ..LowerLayerKpis::default()
                },
            }],
        }
    }

    #[test]
    fn a_report_replaces_the_one_before() {
        let mut h = Hub::default();
        h.connected(&info(7));
        h.report(7, report(100, 80));
        h.report(7, report(200, 20));
        let s = h.snapshot(None, 0);
        assert_eq!(s.nodes.len(), 1);
        assert_eq!(s.nodes[0].reports, 2);
        assert_eq!(s.nodes[0].max_sojourn_ms, 20.0);
        let d = s.node.unwrap();
        assert_eq!(d.t_s, 0.2);
        assert_eq!(d.drbs.len(), 1);
        assert_eq!(d.drbs[0].rlc_sojourn_ms, 20.0);
    }

    /// A UE numbers its DRBs per direction: its downlink and uplink DRB 1
    /// are two lines, the uplink one labelled so (and so are controls).
    #[test]
    fn an_uplink_drb_is_its_own_line_labelled_uplink() {
        let mut h = Hub::default();
        h.connected(&info(7));
        let mut r = report(100, 5);
        let mut up = r.drbs[0].clone();
        up.drb = DrbKey::uplink(1, 1);
        r.drbs.push(up);
        h.report(7, r);
        h.control_sent(7, DrbKey::uplink(1, 1), "set_pacer".into());
        let s = h.snapshot(None, 0);
        let json = serde_json::to_value(&s).unwrap();
        let drbs = &json["node"]["drbs"];
        assert_eq!(drbs.as_array().unwrap().len(), 2);
        assert!(drbs[0].get("direction").is_none(), "{drbs}");
        assert_eq!(drbs[1]["direction"], "uplink");
        assert_eq!(json["controls"][0]["direction"], "uplink");
    }

    #[test]
    fn the_selected_node_is_detailed_and_a_gone_one_falls_back_to_the_first() {
        let mut h = Hub::default();
        for id in [3, 5] {
            h.connected(&info(id));
            h.report(id, report(id, id));
        }
        assert_eq!(h.snapshot(Some(5), 0).node.unwrap().id, 5);
        h.disconnected(5);
        assert_eq!(h.snapshot(Some(5), 0).node.unwrap().id, 3);
        // Reports of a node that went away are not kept.
        h.report(5, report(9, 9));
        assert_eq!(h.snapshot(None, 0).nodes.len(), 1);
    }

    #[test]
    fn controls_keep_their_outcome_and_the_log_is_bounded() {
        let mut h = Hub::default();
        h.connected(&info(1));
        let a = h.control_sent(1, DrbKey::new(1, 1), "preset fq_codel+5g-bdp".into());
        let b = h.control_sent(1, DrbKey::new(1, 1), "set_pacer".into());
        h.settle(a, Outcome::Applied, None);
        h.settle(b, Outcome::Refused, Some("pacer: bad".into()));
        let s = h.snapshot(None, 0);
        assert_eq!(s.controls[0].outcome, Outcome::Applied);
        assert_eq!(s.controls[1].reason.as_deref(), Some("pacer: bad"));
        for _ in 0..CONTROLS_KEPT + 5 {
            h.control_sent(1, DrbKey::new(1, 1), "x".into());
        }
        assert_eq!(h.snapshot(None, 0).controls.len(), CONTROLS_KEPT);
    }
}
