//! An in-memory [`RanNode`] for tests, examples and benchmarks: real
//! `tcran_tc::Pipeline`s (so controls really change what packets do) with
//! RLC/MAC KPIs and KPM counters set by hand or advanced by
//! [`FakeNode::transmit`]. Not a RAN model: the simulator's gNB is.

use std::collections::BTreeMap;
use tcran_control::{Direction, DrbKey, KpmCounters, LowerLayerKpis, RanNode, TcView};
use tcran_core::{Duration, FiveTuple, Instant, Packet, PacketId};
use tcran_tc::{Applied, Change, Pipeline, PipelineConfig, PushOutcome, Refused};

/// One DRB of the fake node.
#[derive(Debug)]
pub struct FakeDrb {
    pub pipeline: Pipeline,
    pub lower: LowerLayerKpis,
    pub kpm: KpmCounters,
}

/// A node with DRBs in a map; see the module docs.
#[derive(Debug, Default)]
pub struct FakeNode {
    drbs: BTreeMap<DrbKey, FakeDrb>,
    cell: KpmCounters,
    next_packet: u64,
    /// Changes applied and refused, for tests.
    pub applied: u64,
    pub refused: u64,
}

impl FakeNode {
    pub fn new() -> FakeNode {
        FakeNode::default()
    }

    /// Adds a DRB (of either direction: the key says) with a pipeline
    /// built from `config`.
    pub fn add_drb(&mut self, drb: DrbKey, config: &PipelineConfig) -> Result<(), String> {
        let pipeline = config.build().map_err(|e| e.to_string())?;
        self.drbs.insert(
            drb,
            FakeDrb {
                pipeline,
                lower: LowerLayerKpis::default(),
                kpm: KpmCounters::default(),
            },
        );
        Ok(())
    }

    pub fn remove_drb(&mut self, drb: DrbKey) -> Option<FakeDrb> {
        self.drbs.remove(&drb)
    }

    pub fn drb(&self, drb: DrbKey) -> Option<&FakeDrb> {
        self.drbs.get(&drb)
    }

    pub fn drb_mut(&mut self, drb: DrbKey) -> Option<&mut FakeDrb> {
        self.drbs.get_mut(&drb)
    }

    pub fn cell_mut(&mut self) -> &mut KpmCounters {
        &mut self.cell
    }

    /// Pushes a packet of `len` bytes with `tuple` into the DRB's pipeline.
    pub fn push(
        &mut self,
        drb: DrbKey,
        tuple: FiveTuple,
        len: u32,
        now: Instant,
    ) -> Option<PushOutcome> {
        let id = PacketId(self.next_packet);
        self.next_packet += 1;
        let d = self.drbs.get_mut(&drb)?;
        let out = d.pipeline.push(Packet::new(id, len, tuple, now), now);
        d.pipeline.drain_dropped().for_each(drop);
        Some(out)
    }

    /// Lets the DRB's pipeline forward up to `budget` bytes to a lower
    /// layer that sends them at once, `delay` after they arrived in RLC,
    /// and updates the KPIs and counters as a gNB would. Returns the bytes
    /// sent.
    pub fn transmit(&mut self, drb: DrbKey, budget: u64, delay: Duration, now: Instant) -> u64 {
        let Some(d) = self.drbs.get_mut(&drb) else {
            return 0;
        };
        let mut sent = 0u64;
        let mut sdus = 0u64;
        while sent < budget {
            let Some(p) = d.pipeline.pull(now) else { break };
            sent += p.len as u64;
            sdus += 1;
        }
        d.pipeline.drain_dropped().for_each(drop);
        let bits = sent * 8;
        for k in [&mut d.kpm, &mut self.cell] {
            k.pdcp_sdu_bits_dl += bits;
            k.rlc_sdu_transmitted_bits_dl += bits;
            k.rlc_sdu_delay_sum += Duration::from_nanos(delay.as_nanos() * sdus);
            k.rlc_sdus_delivered += sdus;
            if sent > 0 {
                k.thp_volume_bits_dl += bits;
                k.thp_time_dl += Duration::from_millis(1);
            }
        }
        d.lower.rlc_tx_bytes += sent;
        d.lower.mac_tx_bytes += sent;
        sent
    }
}

impl RanNode for FakeNode {
    fn drbs(&self, out: &mut Vec<DrbKey>) {
        out.extend(self.drbs.keys().filter(|k| k.dir == Direction::Downlink));
    }

    fn uplink_drbs(&self, out: &mut Vec<DrbKey>) {
        out.extend(self.drbs.keys().filter(|k| k.dir == Direction::Uplink));
    }

    fn tc_view(&self, drb: DrbKey, now: Instant) -> Option<TcView> {
        let d = self.drbs.get(&drb)?;
        Some(TcView {
            config: d.pipeline.config(),
            stats: d.pipeline.stats(now),
            lower: d.lower,
        })
    }

    fn tc_stats(
        &self,
        drb: DrbKey,
        now: Instant,
    ) -> Option<(tcran_tc::stats::PipelineStats, LowerLayerKpis)> {
        let d = self.drbs.get(&drb)?;
        Some((d.pipeline.stats(now), d.lower))
    }

    fn tc_stats_into(
        &self,
        drb: DrbKey,
        now: Instant,
        stats: &mut tcran_tc::stats::PipelineStats,
        lower: &mut LowerLayerKpis,
    ) -> bool {
        let Some(d) = self.drbs.get(&drb) else {
            return false;
        };
        d.pipeline.stats_into(now, stats);
        *lower = d.lower;
        true
    }

    fn kpm_cell(&self) -> KpmCounters {
        self.cell
    }

    fn kpm_drb(&self, drb: DrbKey) -> Option<KpmCounters> {
        self.drbs.get(&drb).map(|d| d.kpm)
    }

    fn bearer(&self, drb: DrbKey, _now: Instant) -> Option<tcran_control::Bearer> {
        self.drbs.get(&drb).map(|d| tcran_control::Bearer {
            lower: d.lower,
            counters: d.kpm,
            ..Default::default()
        })
    }

    fn apply(&mut self, drb: DrbKey, change: &Change, now: Instant) -> Result<Applied, Refused> {
        let d = self.drbs.get_mut(&drb).ok_or(Refused::NoSuchDrb)?;
        let r = d.pipeline.apply_change(change, now);
        match r {
            Ok(_) => self.applied += 1,
            Err(_) => self.refused += 1,
        }
        r
    }
}
