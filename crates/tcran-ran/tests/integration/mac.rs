//! MAC scheduler oracles: N_RB from TS 38.101-1 Table 5.3.2-1, RBG size
//! from TS 38.214 Table 5.1.2.2.1-1, TBS from TS 38.214 §5.1.3.2 (via
//! `TbsInput`), the thesis ch. 4 fixed partition numbers and Fig. 4.10;
//! LTE mode against TS 36.101 Table 5.6-1 and TS 36.213 Tables 7.1.6.1-1,
//! 7.1.7.1-1 and 7.1.7.2.1-1.

use tcran_core::{DrbId, Instant, Rnti};
use tcran_ran::channel::ChannelSample;
use tcran_ran::mac::{
    rbg_size_config1, rbg_size_lte, LcInput, Mac, MacConfig, Rat, SchedulerKind, SliceConfig,
    SlotOutput, UeInput,
};
use tcran_ran::phy::mcs::{Mcs, McsTable};
use tcran_ran::phy::tbs::TbsInput;

fn mcs(i: u8) -> ChannelSample {
    ChannelSample::Mcs(Mcs::new(McsTable::Qam64, i).unwrap())
}

fn mac(c: MacConfig) -> Mac {
    Mac::new(c.build().unwrap())
}

const BIG: u64 = 1 << 40;

fn lc(bytes: u64) -> [LcInput<'static>; 1] {
    [LcInput {
        drb: DrbId(1),
        priority: 1,
        buffer_bytes: bytes,
        sdu_sizes: &[],
        head_of_line_age: tcran_core::Duration::ZERO,
    }]
}

#[test]
fn prb_counts_and_rbg_sizes_from_the_tables() {
    let m = mac(MacConfig::default());
    assert_eq!(m.n_prb(), 25); // 5 MHz, 15 kHz
    assert_eq!(m.rbg_sizes().len(), 13); // 12 x 2 + 1
    assert_eq!(*m.rbg_sizes().last().unwrap(), 1);
    let m = mac(MacConfig {
        numerology: 1,
        bandwidth_mhz: Some(100),
        ..MacConfig::default()
    });
    assert_eq!(m.n_prb(), 273);
    assert_eq!(m.params().rbg, 16);
    assert_eq!(
        [1, 36, 37, 72, 73, 144, 145, 275].map(rbg_size_config1),
        [2, 2, 4, 4, 8, 8, 16, 16]
    );
    let e = MacConfig {
        bandwidth_mhz: Some(7),
        ..MacConfig::default()
    }
    .build()
    .unwrap_err();
    assert_eq!(e.field, "bandwidth_mhz");
}

#[test]
fn tdd_uplink_slots_grant_nothing_special_slots_less() {
    let mut m = mac(MacConfig {
        numerology: 1,
        bandwidth_mhz: Some(20),
        slot_pattern: "DDDSU".into(),
        ..MacConfig::default()
    });
    let l = lc(BIG);
    let ues = [UeInput {
        rnti: Rnti(1),
        channel: mcs(20),
        lcs: &l,
    }];
    let mut out = SlotOutput::default();
    let mut tbs = Vec::new();
    for slot in 0..10 {
        m.schedule(slot, Instant::ZERO, &ues, &mut out);
        tbs.push(out.grants.first().map_or(0, |g| g.tbs_bytes));
        if slot % 5 == 4 {
            assert!(out.grants.is_empty());
            assert_eq!(out.prbs_available, 0);
            assert_eq!(out.lc_grants[0].max_bytes, 0);
        }
    }
    assert!(tbs[3] > 0 && tbs[3] < tbs[0], "{tbs:?}");
    // S slot: 6 DL symbols - 2 PDCCH = 4 PDSCH symbols.
    let n = m.n_prb();
    let expect = TbsInput {
        n_symb_sh: 4,
        n_prb: n,
        ..TbsInput::default()
    }
    .tbs(Mcs::new(McsTable::Qam64, 20).unwrap())
    .unwrap()
        / 8;
    assert_eq!(tbs[3], expect);
}

#[test]
fn round_robin_splits_prbs_within_one_rbg_and_rotates() {
    let mut m = mac(MacConfig::default());
    let l = lc(BIG);
    let ues = [
        UeInput {
            rnti: Rnti(1),
            channel: mcs(15),
            lcs: &l,
        },
        UeInput {
            rnti: Rnti(2),
            channel: mcs(15),
            lcs: &l,
        },
    ];
    let mut out = SlotOutput::default();
    let mut total = [0u32; 2];
    for slot in 0..100 {
        m.schedule(slot, Instant::ZERO, &ues, &mut out);
        let a = out.grant(Rnti(1)).unwrap().prbs;
        let b = out.grant(Rnti(2)).unwrap().prbs;
        assert_eq!(a + b, 25);
        assert!(a.abs_diff(b) <= 2, "{a} vs {b}");
        total[0] += u32::from(a);
        total[1] += u32::from(b);
        assert_eq!(out.prbs_used, 25);
    }
    assert_eq!(total[0], total[1]);
}

#[test]
fn round_robin_gives_a_small_buffer_only_what_it_needs() {
    let mut m = mac(MacConfig::default());
    let small = lc(100);
    let big = lc(BIG);
    let ues = [
        UeInput {
            rnti: Rnti(1),
            channel: mcs(27),
            lcs: &small,
        },
        UeInput {
            rnti: Rnti(2),
            channel: mcs(27),
            lcs: &big,
        },
    ];
    let mut out = SlotOutput::default();
    m.schedule(0, Instant::ZERO, &ues, &mut out);
    let a = out.grant(Rnti(1)).unwrap();
    assert!(a.tbs_bytes >= 100 && a.prbs <= 2, "{a:?}");
    assert_eq!(a.prbs + out.grant(Rnti(2)).unwrap().prbs, 25);
    assert_eq!(out.lc_grants[0].granted_bytes, 100);
}

#[test]
fn proportional_fair_equal_time_share_and_favours_better_channel() {
    let mut m = mac(MacConfig {
        scheduler: SchedulerKind::ProportionalFair,
        ..MacConfig::default()
    });
    let l = lc(BIG);
    let ues = [
        UeInput {
            rnti: Rnti(1),
            channel: mcs(10),
            lcs: &l,
        },
        UeInput {
            rnti: Rnti(2),
            channel: mcs(20),
            lcs: &l,
        },
    ];
    let mut out = SlotOutput::default();
    m.schedule(0, Instant::ZERO, &ues, &mut out);
    assert_eq!(out.grant(Rnti(2)).unwrap().prbs, 25, "better channel first");
    assert!(out.grant(Rnti(1)).is_none());
    // Equal channels: equal PRB-time.
    let mut m = mac(MacConfig {
        scheduler: SchedulerKind::ProportionalFair,
        ..MacConfig::default()
    });
    let ues = [
        UeInput {
            rnti: Rnti(1),
            channel: mcs(15),
            lcs: &l,
        },
        UeInput {
            rnti: Rnti(2),
            channel: mcs(15),
            lcs: &l,
        },
    ];
    let mut prb = [0u64; 2];
    for slot in 0..2000 {
        m.schedule(slot, Instant::ZERO, &ues, &mut out);
        for g in &out.grants {
            prb[usize::from(g.rnti.0 - 1)] += u64::from(g.prbs);
        }
    }
    let share = prb[0] as f64 / (prb[0] + prb[1]) as f64;
    assert!((share - 0.5).abs() < 0.01, "{share}");
}

fn two_slices(kind: SchedulerKind, a: f64, b: f64) -> MacConfig {
    MacConfig {
        prbs: Some(24),
        scheduler: kind,
        slices: vec![
            SliceConfig {
                name: "a".into(),
                share: a,
                ues: vec![1],
            },
            SliceConfig {
                name: "b".into(),
                share: b,
                ues: vec![2],
            },
        ],
        ..MacConfig::default()
    }
}

#[test]
fn fixed_partition_25_75_of_24_prbs_never_lends() {
    let mut m = mac(two_slices(SchedulerKind::FixedPartition, 25.0, 75.0));
    let l = lc(BIG);
    let idle = lc(0);
    let mut out = SlotOutput::default();
    let ues = [
        UeInput {
            rnti: Rnti(1),
            channel: mcs(28),
            lcs: &l,
        },
        UeInput {
            rnti: Rnti(2),
            channel: mcs(28),
            lcs: &l,
        },
    ];
    m.schedule(0, Instant::ZERO, &ues, &mut out);
    assert_eq!(out.grant(Rnti(1)).unwrap().prbs, 6);
    assert_eq!(out.grant(Rnti(2)).unwrap().prbs, 18);
    let ues = [
        UeInput {
            rnti: Rnti(1),
            channel: mcs(28),
            lcs: &idle,
        },
        UeInput {
            rnti: Rnti(2),
            channel: mcs(28),
            lcs: &l,
        },
    ];
    m.schedule(1, Instant::ZERO, &ues, &mut out);
    assert!(out.grant(Rnti(1)).is_none());
    assert_eq!(out.grant(Rnti(2)).unwrap().prbs, 18);
    assert_eq!(out.prbs_used, 18);
    // 25 PRBs (thesis 5 MHz): ⌊18.75⌋ = 18 and ⌊6.25⌋ = 6, one PRB unused.
    let mut m = mac(MacConfig {
        prbs: Some(25),
        ..two_slices(SchedulerKind::FixedPartition, 25.0, 75.0)
    });
    let ues = [
        UeInput {
            rnti: Rnti(1),
            channel: mcs(28),
            lcs: &l,
        },
        UeInput {
            rnti: Rnti(2),
            channel: mcs(28),
            lcs: &l,
        },
    ];
    m.schedule(0, Instant::ZERO, &ues, &mut out);
    assert_eq!(out.prbs_used, 24);
}

#[test]
fn single_ue_mcs28_25prb_tbs_and_one_second_throughput() {
    let mut m = mac(MacConfig::default());
    let l = lc(BIG);
    let ues = [UeInput {
        rnti: Rnti(1),
        channel: mcs(28),
        lcs: &l,
    }];
    let expect = TbsInput {
        n_prb: 25,
        ..TbsInput::default()
    }
    .tbs(Mcs::new(McsTable::Qam64, 28).unwrap())
    .unwrap()
        / 8;
    let mut out = SlotOutput::default();
    let mut total = 0u64;
    for slot in 0..1000 {
        m.schedule(slot, Instant::from_millis(slot), &ues, &mut out);
        let g = out.grants[0];
        assert_eq!(g.tbs_bytes, expect);
        assert_eq!(out.lc_grants[0].max_bytes, expect);
        assert_eq!(out.lc_grants[0].granted_bytes, expect);
        total += u64::from(g.tbs_bytes);
    }
    assert_eq!(total, 1000 * u64::from(expect));
    assert_eq!(m.slot_duration(), tcran_core::Duration::from_millis(1));
}

#[test]
fn capacity_trace_bytes_are_prorated_by_prb_share() {
    let mut m = mac(MacConfig::default());
    let l = lc(BIG);
    let ues = [
        UeInput {
            rnti: Rnti(1),
            channel: ChannelSample::Bytes(2500),
            lcs: &l,
        },
        UeInput {
            rnti: Rnti(2),
            channel: ChannelSample::Outage,
            lcs: &l,
        },
    ];
    let mut out = SlotOutput::default();
    m.schedule(0, Instant::ZERO, &ues, &mut out);
    assert_eq!(out.grants.len(), 1);
    assert_eq!(out.grants[0].tbs_bytes, 2500);
    assert_eq!(out.lc_grants[1].max_bytes, 0);
}

#[test]
fn harq_bler_delays_a_tenth_of_tbs_by_the_rtt() {
    let mut m = mac(MacConfig {
        bler: 0.1,
        harq_rtt: 8,
        seed: 7,
        ..MacConfig::default()
    });
    let l = lc(BIG);
    let ues = [UeInput {
        rnti: Rnti(1),
        channel: mcs(10),
        lcs: &l,
    }];
    let mut out = SlotOutput::default();
    let (mut first, mut retx_ok, mut total, mut lost) = (0u32, 0u32, 0u32, 0u32);
    let slots = 20_000;
    for slot in 0..slots {
        m.schedule(slot, Instant::ZERO, &ues, &mut out);
        if let Some(g) = out.grants.first().copied() {
            total += 1;
            m.transmit(&g, Vec::new(), &mut out);
        }
        for d in &out.delivered {
            if d.attempts == 1 {
                first += 1;
            } else {
                assert_eq!(slot - d.first_slot, 8 * u64::from(d.attempts - 1));
                if d.attempts == 2 {
                    retx_ok += 1;
                }
            }
        }
        lost += out.lost.len() as u32;
    }
    let f = 1.0 - f64::from(first) / f64::from(total);
    assert!((f - 0.1).abs() < 0.01, "first-try failure {f}");
    let r = f64::from(retx_ok) / f64::from(total);
    assert!((r - 0.09).abs() < 0.01, "{r}");
    // 0.1^4 residual: about 2 of 20000.
    assert!(lost < 10);
}

#[test]
fn eqp_sends_whole_packets_where_fixed_partition_segments() {
    // Thesis Fig. 4.10: four queues, one packet of 4 PRBs each, 4 PRBs per
    // TTI, four 25% slices. FP gives each queue 1 PRB (every packet is
    // segmented and completes in TTI 4); EQP gives one queue all 4 PRBs.
    let slices = (1..=4)
        .map(|u| SliceConfig {
            name: format!("s{u}"),
            share: 25.0,
            ues: vec![u],
        })
        .collect::<Vec<_>>();
    let cfg = |k| MacConfig {
        prbs: Some(4),
        scheduler: k,
        slices: slices.clone(),
        ..MacConfig::default()
    };
    let mut eqp = mac(cfg(SchedulerKind::Eqp));
    let mut fp = mac(cfg(SchedulerKind::FixedPartition));
    let ch = mcs(20);
    let pkt = u64::from(
        TbsInput {
            n_prb: 4,
            ..TbsInput::default()
        }
        .tbs(Mcs::new(McsTable::Qam64, 20).unwrap())
        .unwrap()
            / 8,
    );
    let mut left = [pkt; 4];
    let mut done_at = [0u64; 4];
    let mut out = SlotOutput::default();
    for slot in 0..4 {
        let l: Vec<[LcInput<'static>; 1]> = left.iter().map(|&b| lc(b)).collect();
        let ues: Vec<UeInput> = (0..4)
            .map(|i| UeInput {
                rnti: Rnti(i as u16 + 1),
                channel: ch,
                lcs: &l[i],
            })
            .collect();
        eqp.schedule(slot, Instant::ZERO, &ues, &mut out);
        assert_eq!(out.grants.len(), 1, "slot {slot}: {:?}", out.grants);
        let g = out.grants[0];
        assert_eq!(g.prbs, 4);
        let i = usize::from(g.rnti.0 - 1);
        assert!(left[i] > 0);
        left[i] = 0;
        done_at[i] = slot + 1;
        fp.schedule(slot, Instant::ZERO, &ues, &mut SlotOutput::default());
    }
    let mut d = done_at;
    d.sort_unstable();
    assert_eq!(d, [1, 2, 3, 4], "mean completion 2.5 TTI");
    // FP: 1 PRB each.
    let l: Vec<[LcInput<'static>; 1]> = (0..4).map(|_| lc(pkt)).collect();
    let ues: Vec<UeInput> = (0..4)
        .map(|i| UeInput {
            rnti: Rnti(i as u16 + 1),
            channel: ch,
            lcs: &l[i],
        })
        .collect();
    fp.schedule(9, Instant::ZERO, &ues, &mut out);
    assert_eq!(out.grants.len(), 4);
    assert!(out.grants.iter().all(|g| g.prbs == 1));
    // Quanta stay within the limit and sum to zero (every PRB is owed).
    let s: f64 = eqp.quanta().iter().sum();
    assert!(s.abs() < 1e-9, "{:?}", eqp.quanta());
}

fn lte(bandwidth_mhz: Option<u32>, prbs: Option<u16>) -> MacConfig {
    MacConfig {
        rat: Rat::Lte,
        bandwidth_mhz,
        prbs,
        ..MacConfig::default()
    }
}

/// TS 36.101 Table 5.6-1: 3/5/10/15/20 MHz -> 15/25/50/75/100 PRB; TS 36.213
/// Table 7.1.6.1-1: P = 1 up to 10 PRB, 2 up to 26, 3 up to 63, 4 above.
#[test]
fn lte_prb_counts_rbg_sizes_and_tti() {
    for (bw, n, p) in [
        (3, 15, 2),
        (5, 25, 2),
        (10, 50, 3),
        (15, 75, 4),
        (20, 100, 4),
    ] {
        let m = mac(lte(Some(bw), None));
        assert_eq!((m.n_prb(), m.params().rbg), (n, p), "{bw} MHz");
        assert_eq!(m.slot_duration(), tcran_core::Duration::from_millis(1));
    }
    let m = mac(lte(None, Some(6))); // 1.4 MHz
    assert_eq!((m.n_prb(), m.params().rbg), (6, 1));
    assert_eq!(
        [1, 10, 11, 26, 27, 63, 64, 110].map(rbg_size_lte),
        [1, 1, 2, 2, 3, 3, 4, 4]
    );
}

/// Whole-cell grants with a full buffer: TBS from TS 36.213 Table
/// 7.1.7.2.1-1 at I_TBS from Table 7.1.7.1-1 (I_MCS 28 -> I_TBS 26,
/// 17 -> 15, 10 -> 9), read from the spec tables by hand:
/// (26, 25 PRB) = 18336 bits, (26, 100) = 75376, (15, 100) = 30576,
/// (9, 50) = 7992, (26, 6) = 4392.
#[test]
fn lte_tbs_follows_ts_36_213() {
    for (bw, prbs, i_mcs, bits) in [
        (Some(5), None, 28, 18336),
        (Some(20), None, 28, 75376),
        (Some(20), None, 17, 30576),
        (Some(10), None, 10, 7992),
        (None, Some(6), 28, 4392),
    ] {
        let mut m = mac(lte(bw, prbs));
        let l = lc(BIG);
        let ues = [UeInput {
            rnti: Rnti(1),
            channel: mcs(i_mcs),
            lcs: &l,
        }];
        let mut out = SlotOutput::default();
        m.schedule(0, Instant::ZERO, &ues, &mut out);
        let g = out.grant(Rnti(1)).unwrap();
        assert_eq!(g.prbs, m.n_prb());
        assert_eq!(g.tbs_bytes * 8, bits, "I_MCS {i_mcs}, {} PRB", m.n_prb());
    }
}

#[test]
fn lte_rejects_nr_only_settings_naming_the_field() {
    let err = |c: MacConfig| c.build().unwrap_err();
    let e = err(MacConfig {
        numerology: 1,
        ..lte(Some(5), None)
    });
    assert_eq!(
        e.to_string(),
        "numerology = 1: must be 0 with rat = \"lte\" (15 kHz, 1 ms TTI)"
    );
    let e = err(lte(Some(1), None));
    assert_eq!(e.field, "bandwidth_mhz");
    assert!(e.allowed.contains("prbs = 6"), "{e}");
    assert_eq!(err(lte(Some(40), None)).field, "bandwidth_mhz");
    assert_eq!(err(lte(None, Some(111))).field, "prbs");
    let e = err(MacConfig {
        slot_pattern: "DDDSU".into(),
        ..lte(Some(5), None)
    });
    assert_eq!(e.field, "slot_pattern");
    let e = err(MacConfig {
        layers: 2,
        ..lte(Some(5), None)
    });
    assert_eq!(e.field, "layers");
    let e = err(MacConfig {
        mcs_table: McsTable::Qam256,
        ..lte(Some(5), None)
    });
    assert_eq!(e.field, "mcs_table");
    let e = err(MacConfig {
        frequency_range: Some(tcran_ran::phy::bandwidth::FrequencyRange::Fr1),
        ..lte(Some(5), None)
    });
    assert_eq!(e.field, "frequency_range");
    // The same numbers are fine for NR (20 MHz at 15 kHz: 106 PRB).
    assert_eq!(
        mac(MacConfig {
            bandwidth_mhz: Some(20),
            ..MacConfig::default()
        })
        .n_prb(),
        106
    );
}

#[test]
fn rat_reads_from_toml() {
    let c: MacConfig = toml::from_str("rat = \"lte\"\nbandwidth_mhz = 10").unwrap();
    assert_eq!((c.rat, c.build().unwrap().n_prb), (Rat::Lte, 50));
    assert!(toml::from_str::<MacConfig>("rat = \"umts\"").is_err());
    assert_eq!(MacConfig::default().rat, Rat::Nr);
}

/// A 10-slot scheduling period (thesis emulator, 10 ms at 15 kHz): one
/// decision whose grant is the sum of the ten slots' TBS for its PRBs;
/// a failed TB is retransmitted in the next period (harq_rtt = 8 < 10);
/// a capacity trace's sample covers the period, less its U slots' share.
#[test]
fn a_scheduling_period_grants_the_sum_of_its_slots() {
    let per_slot = |n| {
        TbsInput {
            n_symb_sh: 12,
            n_dmrs_prb: 12,
            n_oh_prb: 0,
            n_prb: n,
            layers: 1,
            tb_scaling: Default::default(),
        }
        .tbs(Mcs::new(McsTable::Qam64, 20).unwrap())
        .unwrap()
            / 8
    };
    let mut m = mac(MacConfig {
        scheduling_period: Some(tcran_core::Duration::from_millis(10)),
        ..MacConfig::default()
    });
    assert_eq!(m.period_slots(), 10);
    assert_eq!(m.period(), tcran_core::Duration::from_millis(10));
    let mut out = SlotOutput::default();
    // A small demand: the fewest PRBs whose ten slots carry it.
    let l = lc(3000);
    let ues = [UeInput {
        rnti: Rnti(1),
        channel: mcs(20),
        lcs: &l,
    }];
    m.schedule(0, Instant::ZERO, &ues, &mut out);
    let g = out.grants[0];
    assert_eq!(out.dl_slots, 10);
    assert_eq!(g.tbs_bytes, 10 * per_slot(g.prbs));
    assert!(10 * per_slot(g.prbs) >= 3000 && 10 * per_slot(g.prbs - 1) < 3000);
    assert_eq!(out.lc_grants[0].max_bytes, 10 * per_slot(25));
    // Bytes from a trace: the whole period's, all DL.
    let l = lc(BIG);
    let ues = [UeInput {
        rnti: Rnti(1),
        channel: ChannelSample::Bytes(50_000),
        lcs: &l,
    }];
    m.schedule(10, Instant::from_millis(10), &ues, &mut out);
    assert_eq!((out.grants[0].tbs_bytes, out.grants[0].prbs), (50_000, 25));

    // TDD DDDSU at 15 kHz, period 10 slots: 6 D, 2 S, 2 U; a trace's
    // period sample loses the U slots' 2/10.
    let mut m = mac(MacConfig {
        slot_pattern: "DDDSU".into(),
        scheduling_period: Some(tcran_core::Duration::from_millis(10)),
        ..MacConfig::default()
    });
    m.schedule(0, Instant::ZERO, &ues, &mut out);
    assert_eq!(out.dl_slots, 8);
    assert_eq!(out.grants[0].tbs_bytes, 40_000);

    // HARQ: every first transmission fails; the retransmission goes in
    // the next period, before new data.
    let mut m = mac(MacConfig {
        scheduling_period: Some(tcran_core::Duration::from_millis(10)),
        bler: 0.99,
        seed: 1,
        ..MacConfig::default()
    });
    let l = lc(3000);
    let ues = [UeInput {
        rnti: Rnti(1),
        channel: mcs(20),
        lcs: &l,
    }];
    m.schedule(0, Instant::ZERO, &ues, &mut out);
    let g = out.grants[0];
    m.transmit(&g, Vec::new(), &mut out);
    assert_eq!(m.harq_pending(), 1);
    m.schedule(10, Instant::from_millis(10), &ues, &mut out);
    assert_eq!(out.retx.len(), 1);
    assert_eq!(
        (out.retx[0].prbs, out.retx[0].tbs_bytes),
        (g.prbs, g.tbs_bytes)
    );
    assert!(out.grants.is_empty(), "one PDSCH per UE per period");
}

#[test]
fn scheduling_period_must_be_whole_slots() {
    for (p_us, numerology) in [(0u64, 0u8), (1500, 0), (250, 1), (100_500, 0), (101_000, 0)] {
        let e = MacConfig {
            numerology,
            scheduling_period: Some(tcran_core::Duration::from_micros(p_us)),
            ..MacConfig::default()
        }
        .build()
        .unwrap_err();
        assert_eq!(e.field, "scheduling_period", "{p_us} us");
    }
    let p = MacConfig {
        numerology: 2,
        bandwidth_mhz: Some(20),
        scheduling_period: Some(tcran_core::Duration::from_micros(750)),
        ..MacConfig::default()
    }
    .build()
    .unwrap();
    assert_eq!(p.period_slots, 3);
}

// ------------------------------------------------------------ carry-over

/// Runs one UE on a capacity trace (`bytes[s]` offered in slot s) with a
/// buffer topped up to `fill` before each slot (backlogged: `BIG`), and
/// returns the bytes granted and PRBs used per slot.
fn run_trace(window_ms: u64, bytes: &[u64], fill: u64) -> (Vec<u32>, Vec<u16>) {
    let mut m = mac(MacConfig::default()); // 25 PRB, 1-ms slots
    m.set_carry_over(Rnti(1), tcran_core::Duration::from_millis(window_ms));
    let mut out = SlotOutput::default();
    let (mut got, mut prbs) = (Vec::new(), Vec::new());
    for (s, &b) in bytes.iter().enumerate() {
        let l = lc(fill);
        let ues = [UeInput {
            rnti: Rnti(1),
            channel: ChannelSample::Bytes(b),
            lcs: &l,
        }];
        m.schedule(s as u64, Instant::ZERO, &ues, &mut out);
        got.push(out.grants.first().map_or(0, |g| g.tbs_bytes));
        prbs.push(out.prbs_used);
    }
    (got, prbs)
}

/// A backlogged buffer takes every offer at once: with or without a
/// carry-over window it sees exactly the trace (mm-link's behaviour).
#[test]
fn carry_over_changes_nothing_for_a_backlogged_buffer() {
    let trace = [0, 15_000, 0, 0, 1500, 0, 3000, 0, 0, 0];
    let with = run_trace(24, &trace, BIG);
    let without = run_trace(0, &trace, BIG);
    assert_eq!(with, without);
    assert_eq!(with.0, trace.map(|b| b as u32));
}

/// A buffer that holds 1500 B per slot cannot take a 15-kB burst at
/// once. Without carry-over the rest of the burst is lost; with a 24-ms
/// window it takes the burst 1500 B per slot over the next ten slots. Each
/// grant is whole RBGs (P = 2 at 25 PRB, TS 38.214 Table 5.1.2.2.1-1) at
/// the burst's own rate of 600 B per PRB: 1500 B need 3 PRBs, so 2 RBGs
/// (2400 B, 900 of them padding). Padding costs PRBs, not trace bytes.
/// Past the window the rest expires.
#[test]
fn unused_bytes_stay_usable_for_the_window_at_their_own_prb_cost() {
    let carried = |got: &[u32]| got.iter().map(|&g| g.min(1500)).sum::<u32>();
    let mut trace = vec![0u64; 40];
    trace[0] = 15_000;
    let (got, prbs) = run_trace(24, &trace, 1500);
    assert_eq!(
        got[..11],
        [2400, 2400, 2400, 2400, 2400, 2400, 2400, 2400, 2400, 1500, 0]
    );
    assert_eq!(carried(&got), 15_000);
    assert_eq!(prbs[..11], [4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 0]);
    let (got, _) = run_trace(0, &trace, 1500);
    assert_eq!(carried(&got), 1500, "no carry-over: the rest is lost");
    // A window of 5 ms keeps it for slots 0..=4 only.
    let (got, _) = run_trace(5, &trace, 1500);
    assert_eq!(carried(&got), 5 * 1500);
}

/// A slot never carries more than its N PRBs hold: old bytes at their own
/// (lower) rate fill the slot before the new ones, and what does not fit
/// waits.
#[test]
fn carried_bytes_and_new_ones_share_the_slot_prbs() {
    // Slot 0 offers 3000 (whole cell), the buffer takes none; slot 1 offers
    // 30000. A backlogged slot 1 can use the 3000 carried (all 25 PRBs at
    // slot 0's rate) and nothing more: 3000 B, and the 30000 stay.
    let mut m = mac(MacConfig::default());
    m.set_carry_over(Rnti(1), tcran_core::Duration::from_millis(24));
    let mut out = SlotOutput::default();
    for (s, (b, fill)) in [(3000u64, 0u64), (30_000, BIG), (0, BIG)]
        .iter()
        .enumerate()
    {
        let l = lc(*fill);
        let ues = [UeInput {
            rnti: Rnti(1),
            channel: ChannelSample::Bytes(*b),
            lcs: &l,
        }];
        m.schedule(s as u64, Instant::ZERO, &ues, &mut out);
        let g = out.grants.first().map_or(0, |g| g.tbs_bytes);
        match s {
            0 => assert_eq!(g, 0),
            1 => {
                assert_eq!(g, 3000);
                assert_eq!(out.prbs_used, 25);
                assert_eq!(m.carried_bytes(Rnti(1)), 30_000);
            }
            _ => assert_eq!(g, 30_000),
        }
    }
}

/// One logical channel of `bytes` whose oldest packet waited `age_ms`.
fn aged(bytes: u64, age_ms: u64) -> [LcInput<'static>; 1] {
    [LcInput {
        head_of_line_age: tcran_core::Duration::from_millis(age_ms),
        ..lc(bytes)[0]
    }]
}

/// PRBs of UE 1 and UE 2 in one slot of a 24-PRB cell at MCS 28.
fn dbs_slot(cfg: &MacConfig, a: &[LcInput<'_>], b: &[LcInput<'_>]) -> (u16, u16) {
    let mut m = mac(cfg.clone());
    let mut out = SlotOutput::default();
    let ues = [
        UeInput {
            rnti: Rnti(1),
            channel: mcs(28),
            lcs: a,
        },
        UeInput {
            rnti: Rnti(2),
            channel: mcs(28),
            lcs: b,
        },
    ];
    m.schedule(0, Instant::ZERO, &ues, &mut out);
    let prbs = |r| out.grant(Rnti(r)).map_or(0, |g| g.prbs);
    (prbs(1), prbs(2))
}

/// Brunello sec. 4.5: DBS "always schedules first the oldest packet among
/// the queues" (UE 1 holds 1000 bytes, a few PRBs at MCS 28; UE 2 is
/// backlogged), and "assigns higher priority to queues with packets older
/// than a predefined threshold" (10 ms, `l4sHighTh`): then the video
/// user's queue goes first even before an older web queue, and below the
/// threshold the oldest packet wins again.
#[test]
fn delay_based_serves_the_oldest_packet_first_and_boosts_past_the_threshold() {
    let dbs = MacConfig {
        prbs: Some(24),
        scheduler: SchedulerKind::DelayBased,
        ..MacConfig::default()
    };
    let need = dbs_slot(&dbs, &aged(1000, 1), &lc(0)).0;
    assert!((1..24).contains(&need), "{need} PRBs for 1000 bytes");
    // Oldest first: the backlogged UE's older packet takes every PRB.
    assert_eq!(dbs_slot(&dbs, &aged(1000, 5), &aged(BIG, 20)), (0, 24));
    // UE 1's packet older: its buffer first, the rest to UE 2.
    assert_eq!(
        dbs_slot(&dbs, &aged(1000, 20), &aged(BIG, 5)),
        (need, 24 - need)
    );
    // Equal ages: by RNTI, the same every slot.
    assert_eq!(
        dbs_slot(&dbs, &aged(1000, 7), &aged(BIG, 7)),
        (need, 24 - need)
    );
    let boosted = MacConfig {
        dbs_boost_after: Some(tcran_core::Duration::from_millis(10)),
        dbs_boosted_ues: vec![1],
        ..dbs.clone()
    };
    assert_eq!(
        dbs_slot(&boosted, &aged(1000, 12), &aged(BIG, 50)),
        (need, 24 - need)
    );
    assert_eq!(dbs_slot(&boosted, &aged(1000, 8), &aged(BIG, 9)), (0, 24));
    // Only the UEs listed are boosted.
    let other = MacConfig {
        dbs_boosted_ues: vec![3],
        ..boosted.clone()
    };
    assert_eq!(dbs_slot(&other, &aged(1000, 12), &aged(BIG, 50)), (0, 24));
}

#[test]
fn the_delay_based_boost_is_refused_where_it_would_be_ignored() {
    let field = |c: MacConfig| c.build().map(drop).unwrap_err().to_string();
    let after = Some(tcran_core::Duration::from_millis(10));
    assert_eq!(
        field(MacConfig {
            dbs_boost_after: after,
            dbs_boosted_ues: vec![1],
            ..MacConfig::default()
        }),
        "dbs_boost_after = 10ms: is for scheduler = \"delay_based\" only"
    );
    let dbs = MacConfig {
        scheduler: SchedulerKind::DelayBased,
        ..MacConfig::default()
    };
    assert!(field(MacConfig {
        dbs_boosted_ues: vec![1],
        ..dbs.clone()
    })
    .starts_with("dbs_boost_after = (absent)"));
    assert!(field(MacConfig {
        dbs_boost_after: after,
        ..dbs.clone()
    })
    .starts_with("dbs_boosted_ues = []"));
    assert!(field(MacConfig {
        dbs_boost_after: Some(tcran_core::Duration::from_secs(11)),
        dbs_boosted_ues: vec![1],
        ..dbs
    })
    .starts_with("dbs_boost_after = 11s"));
}

/// Slices set at run time (a RIC's slice control): a round-robin cell
/// becomes a fixed partition while it has slices and gets round robin back
/// without them; a refused set changes nothing.
#[test]
fn slices_set_at_run_time_partition_the_cell_and_can_be_removed() {
    let mut m = mac(MacConfig {
        prbs: Some(24),
        ..MacConfig::default()
    });
    let l = lc(BIG);
    let ues = [
        UeInput {
            rnti: Rnti(1),
            channel: mcs(28),
            lcs: &l,
        },
        UeInput {
            rnti: Rnti(2),
            channel: mcs(28),
            lcs: &l,
        },
    ];
    let mut out = SlotOutput::default();
    let split = |m: &mut Mac, slot, out: &mut SlotOutput| {
        m.schedule(slot, Instant::ZERO, &ues, out);
        (
            out.grant(Rnti(1)).map_or(0, |g| g.prbs),
            out.grant(Rnti(2)).map_or(0, |g| g.prbs),
        )
    };
    assert_eq!(split(&mut m, 0, &mut out), (12, 12));
    m.set_slices(vec![(0.25, vec![Rnti(1)]), (0.75, vec![Rnti(2)])])
        .unwrap();
    assert_eq!(m.params().scheduler, SchedulerKind::FixedPartition);
    assert_eq!(split(&mut m, 1, &mut out), (6, 18));
    // Refused, nothing changes: shares above 100 %, a UE in two slices.
    assert!(m.set_slices(vec![(0.5, vec![]), (0.6, vec![])]).is_err());
    assert!(m
        .set_slices(vec![(0.5, vec![Rnti(1)]), (0.5, vec![Rnti(1)])])
        .is_err());
    assert_eq!(split(&mut m, 2, &mut out), (6, 18));
    m.set_slices(Vec::new()).unwrap();
    assert_eq!(m.params().scheduler, SchedulerKind::RoundRobin);
    assert_eq!(split(&mut m, 3, &mut out), (12, 12));
    // A cell configured to slice keeps at least one slice.
    let mut fp = mac(two_slices(SchedulerKind::FixedPartition, 25.0, 75.0));
    assert!(fp.set_slices(Vec::new()).is_err());
}

/// A UE that attaches after a RIC's slice control (the control did not
/// list it) is scheduled in the first slice, the default one, instead of
/// getting no PRBs.
#[test]
fn a_ue_attaching_after_a_slice_control_is_in_the_default_slice() {
    let mut m = mac(MacConfig {
        prbs: Some(24),
        ..MacConfig::default()
    });
    let l = lc(BIG);
    let ue = |rnti| UeInput {
        rnti: Rnti(rnti),
        channel: mcs(28),
        lcs: &l,
    };
    let mut out = SlotOutput::default();
    m.schedule(0, Instant::ZERO, &[ue(1)], &mut out);
    m.set_slices(vec![(0.25, vec![Rnti(1)]), (0.75, vec![])])
        .unwrap();
    // UE 2 attaches now: it shares slice 0's 6 PRBs with UE 1.
    assert_eq!(m.slice_of(Rnti(2)), Some(0));
    let mut prbs = [0u32; 2];
    for slot in 1..=4 {
        m.schedule(slot, Instant::ZERO, &[ue(1), ue(2)], &mut out);
        for (i, r) in [1, 2].into_iter().enumerate() {
            prbs[i] += out.grant(Rnti(r)).map_or(0, |g| u32::from(g.prbs));
        }
    }
    assert_eq!(prbs, [12, 12], "6 PRBs per slot between the two");
}
