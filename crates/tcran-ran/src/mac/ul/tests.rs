//! The uplink scheduler alone, and in a closed loop with UE MACs
//! ([`crate::mac::ue`]): SR -> grant -> BSR -> grants, over FDD and TDD
//! uplink slots, with the TBS of TS 38.214 §5.1.3.2.

use super::*;
use crate::mac::ue::bsr::{BsrCe, BsrFormat};
use crate::mac::ue::sr::SrAction;
use crate::mac::ue::{LogicalChannelConfig, UeMac, UeMacConfig};
use crate::phy::mcs::{Mcs, McsTable};
use std::collections::BTreeMap;
use tcran_core::Instant;

const MCS28: ChannelSample = ChannelSample::Mcs(Mcs {
    table: McsTable::Qam64,
    index: 28,
});

fn params(pattern: SlotPattern) -> UlParams {
    UlParams {
        kind: UlSchedulerKind::RoundRobin,
        n_prb: 106,
        pattern,
        k2: 4,
        pusch_symbols: 14,
        dmrs_re_per_prb: 12,
        layers: 1,
        sr_grant_bytes: 512,
        bler: 0.0,
        harq_rtt: 8,
        max_harq_tx: 4,
        pf_alpha: 0.01,
        seed: 7,
        slices: Vec::new(),
    }
}

/// Worked by hand from TS 38.214 §5.1.3.2 for 106 PRB (20 MHz at 15 kHz),
/// 14 PUSCH symbols, one DM-RS symbol (12 REs/PRB), MCS 28 of Table
/// 5.1.3.1-1 (Qm 6, R 948/1024), one layer:
/// N'_RE = 12 x 14 - 12 = 156; N_RE = 156 x 106 = 16536;
/// N_info = 16536 x 948/1024 x 6 = 91852.3125; n = floor(log2(91828.3)) - 5
/// = 11; N'_info = 2048 x round(44.84) = 92160; C = ceil(92184 / 8424) =
/// 11; TBS = 88 x ceil(92184 / 88) - 24 = 92200 bits = 11525 bytes.
const TBS_106_MCS28_BYTES: u64 = 11_525;

#[test]
fn tbs_of_a_full_uplink_slot_matches_the_hand_computed_value() {
    let p = params(SlotPattern::fdd());
    assert_eq!(p.tb_bytes(MCS28, 106), TBS_106_MCS28_BYTES);
    assert_eq!(p.tb_bytes(ChannelSample::Outage, 106), 0);
    assert_eq!(p.tb_bytes(ChannelSample::Bytes(1000), 53), 500);
}

/// UEs with one logical channel each, served by the scheduler slot by
/// slot; the test fills their buffers.
struct Loop {
    sched: UlScheduler,
    macs: Vec<UeMac>,
    /// Bytes each UE's buffer holds (data incl. headers).
    buffers: Vec<u64>,
    /// Grants decided, not yet transmitted.
    pending: Vec<UlGrant>,
    /// Data bytes of each TB in flight, by TB id.
    in_flight: BTreeMap<u64, u64>,
    /// Data bytes decoded at the gNB per UE, and the slot of the first.
    decoded: Vec<u64>,
    first_decoded: Vec<Option<u64>>,
    /// Every PUSCH transmitted.
    grants: Vec<UlGrant>,
    srs: Vec<(usize, u64)>,
    slot_us: u64,
}

impl Loop {
    fn new(p: UlParams, n: usize, slot_us: u64) -> Loop {
        let rntis: Vec<Rnti> = (0..n).map(|i| Rnti(100 + i as u16)).collect();
        let mac_cfg = UeMacConfig {
            sr_period_slots: 10,
            logical_channels: vec![LogicalChannelConfig::default()],
            ..UeMacConfig::default()
        };
        Loop {
            sched: UlScheduler::new(p, &rntis).unwrap(),
            macs: (0..n)
                .map(|_| mac_cfg.build(Instant::ZERO).unwrap())
                .collect(),
            buffers: vec![0; n],
            pending: Vec::new(),
            in_flight: BTreeMap::new(),
            decoded: vec![0; n],
            first_decoded: vec![None; n],
            grants: Vec::new(),
            srs: Vec::new(),
            slot_us,
        }
    }

    fn run(&mut self, slots: std::ops::Range<u64>, channels: &[ChannelSample]) {
        let mut shares = [0u64];
        for n in slots {
            let now = Instant::from_micros(n * self.slot_us);
            self.sched.schedule(n, channels, &mut self.pending);
            for u in 0..self.macs.len() {
                let rnti = Rnti(100 + u as u16);
                let mine = self
                    .pending
                    .iter()
                    .position(|g| g.rnti == rnti && g.pusch_slot == n)
                    .map(|i| self.pending.remove(i));
                // A retransmission resends the TB: no LCP, no new BSR.
                let new_grant = mine.filter(UlGrant::is_new).map(|g| g.tb_bytes);
                let out =
                    self.macs[u].on_slot(now, n, &self.buffers[u..=u], new_grant, &mut shares);
                if out.sr == SrAction::Signal {
                    self.srs.push((u, n));
                    self.sched.on_sr(rnti);
                }
                let Some(g) = mine else { continue };
                if g.is_new() {
                    self.buffers[u] -= shares[0];
                    self.in_flight.insert(g.tb, shares[0]);
                    if let Some(bsr) = out.bsr {
                        self.sched.on_bsr(rnti, &bsr);
                    }
                }
                self.grants.push(g);
                match self.sched.transmit(&g) {
                    PuschOutcome::Decoded => {
                        self.decoded[u] += self.in_flight.remove(&g.tb).unwrap();
                        self.first_decoded[u].get_or_insert(n);
                    }
                    PuschOutcome::Lost => {
                        self.in_flight.remove(&g.tb);
                    }
                    PuschOutcome::Retransmit => {}
                }
            }
        }
    }
}

#[test]
fn data_goes_up_after_sr_grant_and_bsr() {
    let mut l = Loop::new(params(SlotPattern::fdd()), 1, 1000);
    l.buffers[0] = 100_000;
    l.run(0..40, &[MCS28]);
    // Data at slot 0; SR occasion at slot 0 (period 10, offset 0); the
    // gNB's next decision (slot 1) grants the SR's 512 bytes (5 PRBs, 544)
    // at 1 + K2 = 5: the UE's first PUSCH carries a Short BSR and data.
    assert_eq!(l.srs, [(0, 0)]);
    let first = l.grants[0];
    assert_eq!((first.pusch_slot, first.prbs, first.tb_bytes), (5, 5, 544));
    // The BSR (99458 bytes left: Table 6.1.3.1-1 index 29, read as up to 107669)
    // makes the next decision, slot 6, grant every PRB at slot 10.
    assert_eq!(l.grants[1].pusch_slot, 10);
    assert_eq!(l.grants[1].prbs, 106);
    assert_eq!(l.first_decoded[0], Some(5));
}

/// The no-load upload: one backlogged UE gets the whole carrier in every
/// uplink slot, so its MAC throughput is TBS x uplink slots per second,
/// less the BSR MAC CEs (a 2-byte Short BSR per periodicBSR-Timer).
#[test]
fn a_backlogged_upload_gets_tbs_times_uplink_slots() {
    // FDD, 15 kHz: 1000 uplink slots per second.
    let mut l = Loop::new(params(SlotPattern::fdd()), 1, 1000);
    l.buffers[0] = u64::MAX / 4;
    l.run(0..100, &[MCS28]);
    let before = l.decoded[0];
    l.run(100..1100, &[MCS28]);
    let per_s = l.decoded[0] - before;
    let oracle = TBS_106_MCS28_BYTES * 1000;
    assert!(
        per_s <= oracle && per_s + 2 * 100 + 2 >= oracle,
        "{per_s} vs {oracle}"
    );

    // TDD "DDDSU" at 30 kHz: one uplink slot in five, 400 per second.
    let tdd = SlotPattern::tdd("DDDSU", 10).unwrap();
    let mut l = Loop::new(params(tdd), 1, 500);
    l.buffers[0] = u64::MAX / 4;
    l.run(0..200, &[MCS28]);
    let before = l.decoded[0];
    l.run(200..2200, &[MCS28]);
    let per_s = l.decoded[0] - before;
    let oracle = TBS_106_MCS28_BYTES * 400;
    assert!(
        per_s <= oracle && per_s + 2 * 100 + 2 >= oracle,
        "{per_s} vs {oracle}"
    );
    assert!(l.grants.iter().all(|g| g.pusch_slot % 5 == 4));
}

#[test]
fn round_robin_shares_the_carrier_between_backlogged_ues() {
    let mut l = Loop::new(params(SlotPattern::fdd()), 2, 1000);
    l.buffers = vec![u64::MAX / 4; 2];
    l.run(0..2000, &[MCS28, MCS28]);
    let (a, b) = (l.decoded[0] as f64, l.decoded[1] as f64);
    assert!((a / b - 1.0).abs() < 0.01, "{a} {b}");
    // Together about the whole carrier (2 s).
    let per_s = (a + b) / 2.0;
    assert!(
        per_s > 0.95 * TBS_106_MCS28_BYTES as f64 * 1000.0,
        "{per_s}"
    );
}

#[test]
fn proportional_fair_gives_a_weaker_ue_its_share_of_time() {
    let mut p = params(SlotPattern::fdd());
    p.kind = UlSchedulerKind::ProportionalFair;
    let weak = ChannelSample::Mcs(Mcs {
        table: McsTable::Qam64,
        index: 9,
    });
    let mut l = Loop::new(p, 2, 1000);
    l.buffers = vec![u64::MAX / 4; 2];
    l.run(0..3000, &[MCS28, weak]);
    // Equal time: the PUSCH counts per UE are close.
    let count = |r: u16| l.grants.iter().filter(|g| g.rnti == Rnti(r)).count() as f64;
    let (a, b) = (count(100), count(101));
    assert!((a / b - 1.0).abs() < 0.05, "{a} {b}");
    assert!(l.decoded[0] > 3 * l.decoded[1]);
}

#[test]
fn harq_retransmits_after_the_round_trip_and_loses_after_max_tx() {
    let mut p = params(SlotPattern::fdd());
    p.bler = 0.3;
    let mut l = Loop::new(p, 1, 1000);
    l.buffers[0] = u64::MAX / 4;
    l.run(0..3000, &[MCS28]);
    let s = *l.sched.stats();
    assert!(s.retx_grants > 0 && s.lost > 0);
    // Every TB is decoded, lost, waiting for its retransmission, or has a
    // grant not yet transmitted.
    assert_eq!(
        s.new_grants,
        s.decoded + s.lost + l.sched.harq_pending() as u64 + l.pending.len() as u64
    );
    // Retransmissions come at least harq_rtt after the transmission before.
    let mut last: BTreeMap<u64, (u64, u8)> = BTreeMap::new();
    for g in &l.grants {
        if let Some(&(slot, tx)) = last.get(&g.tb) {
            assert_eq!(g.tx, tx + 1);
            assert!(g.pusch_slot >= slot + 8);
        } else {
            assert_eq!(g.tx, 1);
        }
        assert!(g.tx <= 4);
        last.insert(g.tb, (g.pusch_slot, g.tx));
    }
    // The measured BLER of first transmissions is near 0.3.
    let firsts = l.grants.iter().filter(|g| g.tx == 1).count() as f64;
    let seconds = l.grants.iter().filter(|g| g.tx == 2).count() as f64;
    assert!(
        (seconds / firsts - 0.3).abs() < 0.05,
        "{}",
        seconds / firsts
    );
}

#[test]
fn a_long_or_short_bsr_clears_the_lcgs_it_leaves_out() {
    let mut s = UlScheduler::new(params(SlotPattern::fdd()), &[Rnti(1)]).unwrap();
    let mut sizes = [None; 8];
    sizes[1] = Some(30);
    sizes[2] = Some(10);
    s.on_bsr(
        Rnti(1),
        &BsrCe {
            format: BsrFormat::Long,
            sizes,
        },
    );
    // Table 6.1.3.1-2: index 30 -> 66 bytes, 10 -> 19.
    assert_eq!(s.known_bytes(Rnti(1)), 66 + 19);
    let mut sizes = [None; 8];
    sizes[2] = Some(5);
    s.on_bsr(
        Rnti(1),
        &BsrCe {
            format: BsrFormat::Long,
            sizes,
        },
    );
    assert_eq!(s.known_bytes(Rnti(1)), 14);
    // A Short Truncated BSR only updates its LCG (Table 6.1.3.1-1 index 1:
    // 10 bytes)...
    let mut sizes = [None; 8];
    sizes[1] = Some(1);
    let mut ce = BsrCe {
        format: BsrFormat::ShortTruncated,
        sizes,
    };
    s.on_bsr(Rnti(1), &ce);
    assert_eq!(s.known_bytes(Rnti(1)), 14 + 10);
    // ...a Short BSR means its LCG is the only one with data.
    ce.format = BsrFormat::Short;
    s.on_bsr(Rnti(1), &ce);
    assert_eq!(s.known_bytes(Rnti(1)), 10);
}

#[test]
fn bad_parameters_name_the_field() {
    let mut p = params(SlotPattern::fdd());
    p.pusch_symbols = 0;
    let e = UlScheduler::new(p, &[]).unwrap_err();
    assert_eq!(e.field, "pusch_symbols");
}

#[test]
fn config_takes_the_carrier_from_the_cell_and_names_bad_fields() {
    let cell = crate::mac::MacConfig {
        bandwidth_mhz: Some(20),
        ..crate::mac::MacConfig::default()
    }
    .build()
    .unwrap();
    let c: UlConfig = toml::from_str("scheduler = \"proportional_fair\"\nbler = 0.1\n").unwrap();
    let p = c.build(&cell).unwrap();
    assert_eq!(p.n_prb, 106);
    assert_eq!(p.kind, UlSchedulerKind::ProportionalFair);
    assert_eq!((p.bler, p.k2, p.harq_rtt), (0.1, 4, 8));
    let e = UlConfig {
        k2_slots: 40,
        ..UlConfig::default()
    }
    .build(&cell)
    .unwrap_err();
    assert_eq!(e.to_string(), "k2_slots = 40: must be in 0..=32");
    assert!(toml::from_str::<UlConfig>("k2 = 4").is_err());
}

#[test]
fn slices_own_their_share_of_every_uplink_slot_and_lend_nothing() {
    // 70 % / 30 % of 106 PRB: 74 and 31 PRBs, 1 left for UEs in no slice.
    let mut p = params(SlotPattern::fdd());
    p.slices = vec![(0.7, vec![Rnti(100)]), (0.3, vec![Rnti(101)])];
    let mut l = Loop::new(p, 3, 1000);
    l.buffers = vec![u64::MAX / 4; 3];
    l.run(0..1000, &[MCS28, MCS28, MCS28]);
    let prbs = |r: u16| {
        l.grants
            .iter()
            .filter(|g| g.rnti == Rnti(r) && g.pusch_slot >= 100)
            .map(|g| g.prbs)
            .max()
            .unwrap_or(0)
    };
    assert_eq!((prbs(100), prbs(101), prbs(102)), (74, 31, 1));
    // A slice alone still gets only its share.
    let mut p = params(SlotPattern::fdd());
    p.slices = vec![(0.5, vec![Rnti(100)])];
    let mut l = Loop::new(p, 1, 1000);
    l.buffers = vec![u64::MAX / 4];
    l.run(0..200, &[MCS28]);
    assert!(l.grants.iter().all(|g| g.prbs <= 53));
    let mut p = params(SlotPattern::fdd());
    p.slices = vec![(0.7, vec![]), (0.4, vec![])];
    assert_eq!(UlScheduler::new(p, &[]).unwrap_err().field, "slices");
}

proptest::proptest! {
    // Whatever the demand, a PUSCH slot never holds more PRBs than the
    // carrier, and PUSCH only goes on uplink slots.
    #[test]
    fn grants_fit_the_carrier_on_uplink_slots(
        bufs in proptest::collection::vec(0u64..200_000, 1..5),
        mcs in 0u8..=28,
        tdd in proptest::bool::ANY,
        bler in 0.0f64..0.5,
    ) {
        let pattern = if tdd { SlotPattern::tdd("DDDSU", 10).unwrap() } else { SlotPattern::fdd() };
        let mut p = params(pattern);
        p.bler = bler;
        let ch = ChannelSample::Mcs(Mcs { table: McsTable::Qam64, index: mcs });
        let n = bufs.len();
        let mut l = Loop::new(p, n, 1000);
        l.buffers = bufs;
        l.run(0..200, &vec![ch; n]);
        let mut per_slot: BTreeMap<u64, u32> = BTreeMap::new();
        for g in &l.grants {
            *per_slot.entry(g.pusch_slot).or_default() += u32::from(g.prbs);
            proptest::prop_assert!(!tdd || g.pusch_slot % 5 == 4);
        }
        proptest::prop_assert!(per_slot.values().all(|&p| p <= 106));
    }
}
