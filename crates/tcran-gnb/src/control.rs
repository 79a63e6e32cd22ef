//! Run-time reconfiguration of a DRB's pipeline: the node's side of the
//! TC service model (TC-RAN sec. IV-B), used alike by the simulator's
//! scheduled events and controllers, the E2 agent and the emulator.
//!
//! Contract:
//! - [`Gnb::apply`] applies one [`Change`] to (RNTI, DRB) all or nothing,
//!   with the pipeline's own rule ([`tcran_tc::Pipeline::apply_change`]):
//!   a refused change changes nothing and says why ([`Refused`]).
//! - The bearer does the work ([`crate::drb`]): marks the pipeline counted
//!   so far are collected first (queues about to be deleted lose none), and
//!   the pipeline's drops and egress run right after (a lowered limit sheds
//!   at once, a new pacer may let packets go); the node arms the timers.

use crate::node::Gnb;
use tcran_core::{DrbId, Instant, Rnti};
use tcran_tc::{Applied, Change, Refused};

impl Gnb {
    /// Applies `change` to the pipeline of DRB `drb` of UE `rnti` at `now`;
    /// returns the configuration it left, or why nothing was changed.
    pub fn apply(
        &mut self,
        rnti: Rnti,
        drb: DrbId,
        change: &Change,
        now: Instant,
    ) -> Result<Applied, Refused> {
        let target = self
            .ue_of(rnti)
            .and_then(|u| Some((u, self.ues[u].drbs.iter().position(|d| d.id == drb)?)));
        let Some((u, d)) = target else {
            return Err(Refused::NoSuchDrb);
        };
        // Run what was due before `now` (an input at `now` comes first).
        self.advance(now);
        let (result, released) = self.ues[u].drbs[d].apply(change, self.now, &mut self.outputs);
        self.released_to_rlc(u, d, released);
        result
    }
}
