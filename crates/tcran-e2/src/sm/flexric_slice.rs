//! FlexRIC's SLICE service model (RAN function 145, `SLICE_STATS_V0`) on
//! the MAC's downlink slicing (FLEXRIC-SMS.md section 7; codec:
//! [`super::flexric_slice_codec`]).
//!
//! - Subscription: event trigger `u32` period in ms, REPORT action without
//!   definition. Indication: header `u32 0`; message: the DL slices (those
//!   set over E2 with their ids, labels and parameters; otherwise the
//!   MAC's configured slices as NVS capacity slices numbered from 0), no
//!   UL slice (tcran slices the downlink only), each UE's DL slice id (UL
//!   id 0), the timestamp.
//! - Control ADD/MOD (same message), DEL, UE-slice association, each
//!   applied to the MAC all or nothing ([`RanNode::set_slices`]): a slice's
//!   share of the cell's PRBs comes from its algorithm where it maps onto
//!   a share:
//!
//! | FlexRIC algorithm | share of the cell's N PRBs |
//! |---|---|
//! | STATIC, SCN19 FIXED `[pos_low, pos_high]` | (pos_high - pos_low + 1) / N (the positions are PRBs) |
//! | NVS CAPACITY, SCN19 ON_DEMAND `pct_reserved` | pct_reserved (0..=1) |
//! | NVS RATE, SCN19 DYNAMIC | mbps_required / mbps_reference |
//! | EDF `guaranteed_prbs` | guaranteed_prbs / N (deadlines are not modelled) |
//! | NONE | refused: no share |
//!
//! The MAC schedules a fixed partition with these shares (round robin
//! inside each slice; unused PRBs are not lent) while slices exist, its
//! configured scheduler again when the last is deleted. A UE no control
//! associated belongs to the slice with the lowest id, and so does a UE
//! that attaches after the last control (the MAC's default slice). The outcome
//! is FlexRIC's: `u32 len | diagnostic` (empty when applied, the refusal
//! otherwise).

use super::flexric_slice_codec::{
    self as sc, SliceConf, SliceControl, SliceIndication, SliceParams, UeAssoc, UeSlice,
};
use super::flexric_stats::{check_report_action, period_of, plain_function, HEADER};
use super::{cause, ControlOutcome, Indication, Job, JobState, Refusal, ServiceModel};
use crate::e2ap::{Action, RanFunction};
use tcran_control::{DrbKey, RanNode};
use tcran_core::{Instant, Rnti};

pub const RAN_FUNCTION_ID: u16 = 145;
pub const DEFINITION: &str = "SLICE_STATS_V0";
pub const OID: &str = "0.0.0.0.0.0.0.0.1.145.0";

/// The SLICE model: the DL slices set over E2 and the UEs associated.
#[derive(Debug, Clone, Default)]
pub struct FlexricSlice {
    /// Microseconds from the node's clock to the Unix epoch.
    pub time_offset_us: i64,
    sched_name: Vec<u8>,
    /// DL slices set over E2, ascending id.
    slices: Vec<sc::Slice>,
    /// UE -> DL slice id, from UE-slice associations.
    assoc: Vec<(Rnti, u32)>,
}

/// The share of the cell's `n_prb` PRBs a slice's parameters ask for.
pub fn share_of(p: &SliceParams, n_prb: u16) -> Result<f64, String> {
    let n = f64::from(n_prb.max(1));
    let fraction = |what: &str, v: f64| {
        if (0.0..=1.0).contains(&v) {
            Ok(v)
        } else {
            Err(format!("{what} {v} is not within 0..=1"))
        }
    };
    match p {
        SliceParams::Static { pos_high, pos_low }
        | SliceParams::Scn19Fixed { pos_high, pos_low } => {
            if pos_low > pos_high || *pos_high >= u32::from(n_prb) {
                return Err(format!(
                    "PRB positions [{pos_low}, {pos_high}] are not within the cell's 0..={}",
                    n_prb.saturating_sub(1)
                ));
            }
            Ok(f64::from(pos_high - pos_low + 1) / n)
        }
        SliceParams::NvsCapacity { pct_reserved }
        | SliceParams::Scn19OnDemand { pct_reserved, .. } => {
            fraction("pct_reserved", f64::from(*pct_reserved))
        }
        SliceParams::NvsRate {
            mbps_reference,
            mbps_required,
        }
        | SliceParams::Scn19Dynamic {
            mbps_reference,
            mbps_required,
        } => {
            if *mbps_reference <= 0.0 {
                return Err(format!("mbps_reference {mbps_reference} is not above 0"));
            }
            fraction(
                "mbps_required / mbps_reference",
                f64::from(*mbps_required) / f64::from(*mbps_reference),
            )
        }
        SliceParams::Edf {
            guaranteed_prbs, ..
        } => fraction("guaranteed_prbs / N", f64::from(*guaranteed_prbs) / n),
        SliceParams::None => Err("algorithm NONE gives the slice no share".into()),
    }
}

fn ues_of(node: &dyn RanNode) -> Vec<Rnti> {
    let mut drbs: Vec<DrbKey> = Vec::new();
    node.drbs(&mut drbs);
    let mut ues: Vec<Rnti> = drbs.iter().map(|d| d.rnti).collect();
    ues.dedup();
    ues
}

impl FlexricSlice {
    /// The model of a node whose clock is `time_offset_us` µs from the
    /// Unix epoch, with no slice set over E2 yet.
    pub fn new(time_offset_us: i64) -> FlexricSlice {
        FlexricSlice {
            time_offset_us,
            ..FlexricSlice::default()
        }
    }

    /// The MAC's slices for `slices` and `assoc` (see the module docs).
    fn partition(
        slices: &[sc::Slice],
        assoc: &[(Rnti, u32)],
        node: &dyn RanNode,
        n_prb: u16,
    ) -> Result<Vec<(f64, Vec<Rnti>)>, String> {
        let mut out = Vec::with_capacity(slices.len());
        for s in slices {
            let share = share_of(&s.params, n_prb).map_err(|e| format!("slice {}: {e}", s.id))?;
            out.push((share, Vec::new()));
        }
        if slices.is_empty() {
            return Ok(out);
        }
        for rnti in ues_of(node) {
            let id = assoc
                .iter()
                .find(|(r, _)| *r == rnti)
                .map_or(slices[0].id, |(_, id)| *id);
            if let Some(i) = slices.iter().position(|s| s.id == id) {
                out[i].1.push(rnti);
            }
        }
        Ok(out)
    }

    /// Applies a control to copies of the table, then to the node; the
    /// table changes only if the node took it.
    fn apply(
        &mut self,
        ctrl: SliceControl,
        node: &mut dyn RanNode,
        now: Instant,
    ) -> Result<(), String> {
        let n_prb = node.slicing().ok_or("this node has no MAC slicing")?.n_prb;
        let mut slices = self.slices.clone();
        let mut assoc = self.assoc.clone();
        let mut sched_name = self.sched_name.clone();
        match ctrl {
            SliceControl::AddMod { dl, ul } => {
                if !ul.slices.is_empty() {
                    return Err("tcran slices the downlink only: UL slices are refused".into());
                }
                for s in dl.slices {
                    match slices.iter_mut().find(|t| t.id == s.id) {
                        Some(t) => *t = s,
                        None => slices.push(s),
                    }
                }
                slices.sort_by_key(|s| s.id);
                sched_name = dl.sched_name;
            }
            SliceControl::Del { dl, ul } => {
                if let Some(id) = dl.iter().find(|id| !slices.iter().any(|s| s.id == **id)) {
                    return Err(format!("DL slice {id} does not exist"));
                }
                if let Some(id) = ul.first() {
                    return Err(format!("UL slice {id} does not exist (no UL slicing)"));
                }
                slices.retain(|s| !dl.contains(&s.id));
                assoc.retain(|(_, id)| !dl.contains(id));
            }
            SliceControl::UeSliceAssoc(UeAssoc(list)) => {
                for u in list {
                    if !slices.iter().any(|s| s.id == u.dl_id) {
                        return Err(format!(
                            "RNTI {}: DL slice {} does not exist",
                            u.rnti, u.dl_id
                        ));
                    }
                    let rnti = Rnti(u.rnti);
                    assoc.retain(|(r, _)| *r != rnti);
                    assoc.push((rnti, u.dl_id));
                }
            }
        }
        let partition = Self::partition(&slices, &assoc, node, n_prb)?;
        node.set_slices(partition, now)?;
        self.slices = slices;
        self.assoc = assoc;
        self.sched_name = sched_name;
        Ok(())
    }

    /// The indication message of the node's slicing at `now`.
    pub fn message(&self, node: &dyn RanNode, now: Instant) -> Vec<u8> {
        let mac = node.slicing().unwrap_or_default();
        let (sched_name, slices) = if self.slices.is_empty() {
            let slices = mac
                .slices
                .iter()
                .enumerate()
                .map(|(i, (share, _))| sc::Slice {
                    id: i as u32,
                    label: Vec::new(),
                    sched: Vec::new(),
                    params: SliceParams::NvsCapacity {
                        pct_reserved: *share as f32,
                    },
                })
                .collect();
            (b"tcran".to_vec(), slices)
        } else {
            (self.sched_name.clone(), self.slices.clone())
        };
        let ues = ues_of(node)
            .into_iter()
            .map(|rnti| {
                let index = mac.slices.iter().position(|(_, u)| u.contains(&rnti));
                // A UE no slice lists is in the MAC's default slice, the
                // first (`Mac::set_slices`), while slices set over E2 exist.
                let dl_id = match index {
                    Some(i) => slices.get(i).map_or(i as u32, |s| s.id),
                    None if !self.slices.is_empty() => slices[0].id,
                    None => 0,
                };
                UeSlice {
                    dl_id,
                    ul_id: 0,
                    rnti: rnti.0,
                }
            })
            .collect();
        sc::encode(&SliceIndication {
            dl: SliceConf { sched_name, slices },
            ul: SliceConf::default(),
            ues: UeAssoc(ues),
            tstamp_us: (now.as_nanos() / 1000) as i64 + self.time_offset_us,
        })
    }
}

impl ServiceModel for FlexricSlice {
    fn ran_function_id(&self) -> u16 {
        RAN_FUNCTION_ID
    }

    fn ran_function(&self, _node: &dyn RanNode) -> RanFunction {
        plain_function(RAN_FUNCTION_ID, DEFINITION, OID)
    }

    fn subscribe(
        &self,
        trigger: &[u8],
        action: &Action,
        _node: &dyn RanNode,
    ) -> Result<Job, Refusal> {
        check_report_action(action)?;
        Ok(Job {
            period: period_of(trigger)?,
            state: JobState::FlexricSlice,
        })
    }

    fn indicate(&self, _job: &mut JobState, node: &dyn RanNode, now: Instant) -> Vec<Indication> {
        vec![(HEADER.to_vec(), self.message(node, now))]
    }

    fn control(
        &mut self,
        _header: &[u8],
        message: &[u8],
        node: &mut dyn RanNode,
        now: Instant,
    ) -> ControlOutcome {
        let refused = |c, why: String| ControlOutcome::Refused {
            outcome: Some(sc::outcome(&why)),
            refusal: Refusal::ric_request(c, why),
        };
        let ctrl = match sc::decode::<SliceControl>(message) {
            Ok(c) => c,
            Err(e) => return refused(cause::CONTROL_MESSAGE_INVALID, e.to_string()),
        };
        match self.apply(ctrl, node, now) {
            Ok(()) => ControlOutcome::Done {
                outcome: Some(sc::outcome("")),
            },
            Err(why) => refused(cause::CONTROL_FAILED_TO_EXECUTE, why),
        }
    }
}
