//! The node's control surface for uplink DRBs: their keys, TC views and
//! the one apply of a [`Change`], which [`crate::ran_node`] dispatches to
//! for a [`DrbKey`] whose direction is uplink (E2 service models, xApps,
//! the simulator's controllers alike). The pipelines are the UEs'
//! ([`crate::ue_uplink`]); what each view holds is said there
//! (`ue_uplink::control`).

use crate::node::Gnb;
use crate::DrbCounters;
use tcran_control::{DrbKey, LowerLayerKpis, TcView};
use tcran_core::{DrbId, Instant, Qfi, Rnti};
use tcran_tc::stats::PipelineStats;
use tcran_tc::{Applied, Change, Refused};

impl Gnb {
    /// The uplink DRBs, by UE in configuration order, each UE's in
    /// logical channel order.
    pub fn uplink_drb_ids(&self) -> impl Iterator<Item = DrbKey> + '_ {
        self.uplink_drbs.iter().flat_map(|ul| {
            ul.ues
                .iter()
                .flat_map(|ue| ue.drb_ids().map(|d| DrbKey::uplink(ue.rnti().0, d.0)))
        })
    }

    /// The counters of uplink DRB `drb` of UE `rnti`: the UE's RLC
    /// transmitter and the gNB's receivers (delivery is to the gNB's PDCP).
    pub fn uplink_drb_counters(&self, rnti: Rnti, drb: DrbId) -> Option<&DrbCounters> {
        let ul = self.uplink_drbs.as_deref()?;
        Some(&ul.ues[ul.member(rnti)?].drb(drb)?.counters)
    }

    /// The uplink DRB UE `rnti`'s SDAP maps QoS flow `qfi` to.
    pub fn uplink_sdap_drb(&self, rnti: Rnti, qfi: Qfi) -> Option<DrbId> {
        let ul = self.uplink_drbs.as_deref()?;
        ul.ues[ul.member(rnti)?].sdap_drb(qfi)
    }

    /// Applies `change` to the pipeline of uplink DRB `drb` of UE `rnti`
    /// (in the UE) at `now`: all or nothing, as [`Gnb::apply`].
    pub fn apply_uplink(
        &mut self,
        rnti: Rnti,
        drb: DrbId,
        change: &Change,
        now: Instant,
    ) -> Result<Applied, Refused> {
        let exists = self
            .uplink_drbs
            .as_deref()
            .and_then(|ul| ul.ues[ul.member(rnti)?].drb(drb))
            .is_some();
        if !exists {
            return Err(Refused::NoSuchDrb);
        }
        // Run what was due before `now` (an input at `now` comes first).
        self.advance(now);
        let now = self.now;
        let Some(ul) = self.uplink_drbs.as_deref_mut() else {
            return Err(Refused::NoSuchDrb);
        };
        let Some(m) = ul.member(rnti) else {
            return Err(Refused::NoSuchDrb);
        };
        let result = ul.ues[m].apply(drb, change, now);
        ul.ues[m].take_outputs(&mut self.outputs);
        result
    }

    /// Uplink DRB `key`'s pipeline configuration, statistics and
    /// lower-layer KPIs at `now`.
    pub(crate) fn uplink_tc_view(&self, key: DrbKey, now: Instant) -> Option<TcView> {
        let (stats, lower) = self.uplink_tc_stats(key, now)?;
        let ul = self.uplink_drbs.as_deref()?;
        let d = ul.ues[ul.member(key.rnti)?].drb(key.drb)?;
        Some(TcView {
            config: d.pipeline.config(),
            stats,
            lower,
        })
    }

    /// [`Gnb::uplink_tc_view`] without the configuration.
    pub(crate) fn uplink_tc_stats(
        &self,
        key: DrbKey,
        now: Instant,
    ) -> Option<(PipelineStats, LowerLayerKpis)> {
        let mut stats = PipelineStats::default();
        let mut lower = LowerLayerKpis::default();
        self.uplink_tc_stats_into(key, now, &mut stats, &mut lower)
            .then_some((stats, lower))
    }

    /// [`Gnb::uplink_tc_stats`] written over `stats` and `lower`.
    pub(crate) fn uplink_tc_stats_into(
        &self,
        key: DrbKey,
        now: Instant,
        stats: &mut PipelineStats,
        lower: &mut LowerLayerKpis,
    ) -> bool {
        let Some(ul) = self.uplink_drbs.as_deref() else {
            return false;
        };
        let Some(m) = ul.member(key.rnti) else {
            return false;
        };
        let ue = &ul.ues[m];
        let (Some(d), Some(kpis)) = (ue.drb(key.drb), ue.kpis(key.drb, ul.prbs[m], now)) else {
            return false;
        };
        d.pipeline.stats_into(now, stats);
        *lower = kpis;
        true
    }
}
