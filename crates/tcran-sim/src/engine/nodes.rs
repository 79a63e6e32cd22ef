//! Each cell of a run as a RAN node of its own: what a front end that
//! makes every cell an E2 node (`tcran run --realtime --e2`, docs/e2.md
//! "Several cells") reads and changes, cell by cell.
//!
//! Contract:
//! - Cells are numbered `0..cell_count()` in the scenario's `[[cells]]`
//!   order; a run without `[[cells]]` has one, cell 0, the simulator's
//!   node, and everything here is then what [`Sim::gnb`] and
//!   [`Sim::apply_control`] already do.
//! - A cell's node holds the UEs attached to it at the moment: a UE that
//!   hands over leaves the source's DRBs at the handover command and
//!   appears among the target's when it attaches; while its context is on
//!   Xn no cell lists it.
//! - A change goes to one cell's node, with the refusal semantics of
//!   [`Sim::apply_control`]: a DRB of a UE that is not in that cell (gone
//!   by handover, or never there) is refused with [`Refused::NoSuchDrb`]
//!   and recorded as refused, never applied in another cell.
//! - Handover counters ([`HandoverCounters`], TS 28.552 §5.1.1.6.1:
//!   inter-gNB handovers, since each cell is a gNB of its own with Xn
//!   between them) count as the handovers happen: at the handover
//!   decision the source counts a preparation requested and succeeded
//!   (the target admits every UE: there is no admission control to fail)
//!   and the target a resource allocation requested and succeeded; at the
//!   handover command (`[handover] preparation` after the decision) the
//!   source counts an execution requested; when the UE attaches at the target, the
//!   source counts the execution succeeded (the target's UE Context
//!   Release, TS 38.300 §9.2.3.2.1 step 12).

use super::cells::node;
use super::Sim;
use tcran_control::{DrbKey, HandoverCounters, RanNode};
use tcran_core::{CellId, DrbId, Qfi, Rnti};
use tcran_gnb::Gnb;
use tcran_tc::{Applied, Change, Refused};

impl Sim {
    /// How many cells the run has: 1 without `[[cells]]`.
    pub fn cell_count(&self) -> usize {
        self.cells.as_ref().map_or(1, |c| c.others.len() + 1)
    }

    /// Cell `k`'s id (`[[cells]].id`); `None` without `[[cells]]`.
    pub fn cell_id(&self, k: usize) -> Option<CellId> {
        self.cells.as_ref().and_then(|c| c.ids.get(k).copied())
    }

    /// Cell `k`'s node, read-only; `None` past the last cell.
    pub fn cell_gnb(&self, k: usize) -> Option<&Gnb> {
        match (&self.cells, k) {
            (_, 0) => Some(&self.gnb),
            (None, _) => None,
            (Some(c), k) => c.others.get(k - 1),
        }
    }

    /// Cell `k`'s handover counters so far (all zero without `[[cells]]`).
    pub fn handover_counters(&self, k: usize) -> HandoverCounters {
        self.cells
            .as_ref()
            .and_then(|c| c.handovers.get(k).copied())
            .unwrap_or_default()
    }

    /// The cell whose node holds UE `rnti` now; `None` while it hands
    /// over (or if no UE has that RNTI). Always 0 without `[[cells]]`.
    pub fn serving_cell(&self, rnti: Rnti) -> Option<usize> {
        match &self.cells {
            None => Some(0),
            Some(c) => c.serving(rnti),
        }
    }

    /// UE `rnti`'s handover margin: its strongest neighbour's RSRP less
    /// its serving cell's (dB, layer-3 filtered) at its last measurement,
    /// as its measurement report gives it; `None` with one cell, before
    /// the first measurement and while it hands over.
    pub fn handover_margin_db(&self, rnti: Rnti) -> Option<f64> {
        self.cells.as_ref().and_then(|c| c.margin_db(rnti))
    }

    /// Cell `k`'s node, to change (`k < cell_count()`).
    fn cell_node_mut(&mut self, k: usize) -> &mut Gnb {
        match self.cells.as_deref_mut() {
            None => &mut self.gnb,
            Some(c) => node(&mut self.gnb, &mut c.others, k),
        }
    }

    /// Handles what cell `k`'s node reported after a change.
    fn drain_cell_outputs(&mut self, k: usize) {
        if self.cells.is_none() {
            if self.gnb.has_outputs() {
                self.drain_outputs();
            }
        } else {
            self.drain_cell(k);
        }
    }

    /// [`Sim::apply_control`] on cell `k`'s node: a DRB not in that cell
    /// now is refused ([`Refused::NoSuchDrb`]), and recorded so.
    pub fn apply_control_in(
        &mut self,
        k: usize,
        by: &str,
        key: DrbKey,
        change: &Change,
    ) -> Result<Applied, Refused> {
        if k >= self.cell_count() {
            return Err(Refused::NoSuchDrb);
        }
        let now = self.now;
        let result = RanNode::apply(self.cell_node_mut(k), key, change, now);
        self.record_control(by, key, change, &result);
        // What the change let go or dropped at once, handled now.
        self.drain_cell_outputs(k);
        result
    }

    /// [`Sim::set_slices`] on cell `k`'s node.
    pub fn set_slices_in(
        &mut self,
        k: usize,
        by: &str,
        slices: Vec<(f64, Vec<Rnti>)>,
    ) -> Result<(), String> {
        if k >= self.cell_count() {
            return Err(format!("no cell {k}"));
        }
        let now = self.now;
        let what = super::control::describe_slices(&slices);
        let result = tcran_control::RanNode::set_slices(self.cell_node_mut(k), slices, now);
        self.record_cell_change(by, 0, 0, what, &result);
        result
    }

    /// [`Sim::map_qos_flow`] on cell `k`'s node.
    pub fn map_qos_flow_in(
        &mut self,
        k: usize,
        by: &str,
        rnti: Rnti,
        qfi: Qfi,
        drb: DrbId,
    ) -> Result<(), String> {
        if k >= self.cell_count() {
            return Err(format!("no cell {k}"));
        }
        let now = self.now;
        let what = format!("SDAP QFI {} -> DRB {}", qfi.0, drb.0);
        let result =
            tcran_control::RanNode::map_qos_flow(self.cell_node_mut(k), rnti, qfi, drb, now);
        self.record_cell_change(by, rnti.0, drb.0, what, &result);
        result
    }
}
