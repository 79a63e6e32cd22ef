//! Behaviour of the UE MAC against TS 38.321 §5.4.4 / §5.4.5 / §6.1.3.1.

use super::bsr::{BsrFormat, BufferSizeTable};
use super::sr::SrAction;
use super::*;

/// µ = 1: 0.5-ms slots.
fn at(slot: u64) -> Instant {
    Instant::from_micros(500 * slot)
}

fn lc(lcg: u8, priority: u8) -> LogicalChannelConfig {
    LogicalChannelConfig {
        lcg,
        priority,
        ..LogicalChannelConfig::default()
    }
}

fn mac(channels: Vec<LogicalChannelConfig>) -> UeMac {
    UeMacConfig {
        sr_period_slots: 10,
        sr_offset_slots: 3,
        logical_channels: channels,
        ..UeMacConfig::default()
    }
    .build(at(0))
    .unwrap()
}

#[test]
fn first_data_triggers_a_regular_bsr_and_an_sr_on_the_next_occasion() {
    let mut m = mac(vec![lc(1, 1)]);
    let mut shares = [0];
    let idle = m.on_slot(at(0), 0, &[0], None, &mut shares);
    assert_eq!(idle.sr, SrAction::None);
    assert!(!m.bsr_triggered());
    // 1000 bytes arrive in slot 1: the SR waits for occasion 3 (offset 3).
    assert_eq!(
        m.on_slot(at(1), 1, &[1000], None, &mut shares).sr,
        SrAction::None
    );
    assert!(m.bsr_triggered() && m.sr_pending());
    assert_eq!(
        m.on_slot(at(2), 2, &[1000], None, &mut shares).sr,
        SrAction::None
    );
    assert_eq!(
        m.on_slot(at(3), 3, &[1000], None, &mut shares).sr,
        SrAction::Signal
    );
    // A small grant: the Short BSR (2 bytes) goes first, 98 bytes of data,
    // and 902 left quantise to Table 6.1.3.1-1 index 15 (745 < 902 <= 1038).
    let out = m.on_slot(at(8), 8, &[1000], Some(100), &mut shares);
    assert_eq!(shares, [98]);
    assert_eq!(out.padding, 0);
    let bsr = out.bsr.unwrap();
    assert_eq!(bsr.format, BsrFormat::Short);
    assert_eq!(bsr.sizes[1], Some(15));
    assert_eq!(bsr.decoded().collect::<Vec<_>>(), [(1, 1038)]);
    assert!(!m.bsr_triggered() && !m.sr_pending());
    assert_eq!(m.stats().srs_signalled, 1);
}

#[test]
fn two_lcgs_with_data_make_a_long_bsr() {
    let mut m = mac(vec![lc(1, 2), lc(2, 5)]);
    let mut shares = [0; 2];
    m.on_slot(at(0), 0, &[3000, 400], None, &mut shares);
    let out = m.on_slot(at(1), 1, &[3000, 400], Some(1005), &mut shares);
    // Long BSR with 2 LCGs: 2 (subheader) + 1 (bitmap) + 2 = 5 bytes,
    // then priority 2 takes the 1000 left (infinite PBR).
    let bsr = out.bsr.unwrap();
    assert_eq!(bsr.format, BsrFormat::Long);
    assert_eq!(bsr.bytes(), 5);
    assert_eq!(shares, [1000, 0]);
    // Table 6.1.3.1-2: 2000 -> index 85 (1970 < 2000 <= 2098); 400 -> 59
    // (384 < 400 <= 409).
    assert_eq!(bsr.sizes[1], Some(85));
    assert_eq!(bsr.sizes[2], Some(59));
    assert_eq!(BufferSizeTable::Long.upper_bound(85), Some(2098));
}

#[test]
fn only_data_that_outranks_the_waiting_data_triggers_a_regular_bsr() {
    let mut m = mac(vec![lc(1, 3), lc(1, 8)]);
    let mut shares = [0; 2];
    m.on_slot(at(0), 0, &[500, 0], None, &mut shares);
    let triggers = m.stats().regular_bsr_triggers;
    assert_eq!(triggers, 1);
    // Serve everything: the grant holds data and BSR.
    m.on_slot(at(1), 1, &[500, 0], Some(600), &mut shares);
    // Lower-priority data arrives while none waits: no channel had data,
    // so it triggers.
    m.on_slot(at(2), 2, &[0, 100], None, &mut shares);
    assert_eq!(m.stats().regular_bsr_triggers, 2);
    // A 50-byte grant: Short BSR and 48 bytes, 52 stay.
    m.on_slot(at(3), 3, &[0, 100], Some(50), &mut shares);
    assert_eq!(shares, [0, 48]);
    // Channel 2 (priority 8) waits; more data on it does not trigger...
    m.on_slot(at(4), 4, &[0, 52], None, &mut shares);
    m.on_slot(at(5), 5, &[0, 300], None, &mut shares);
    assert_eq!(m.stats().regular_bsr_triggers, 2);
    // ...but data on the priority-3 channel does.
    m.on_slot(at(6), 6, &[50, 300], None, &mut shares);
    assert_eq!(m.stats().regular_bsr_triggers, 3);
}

#[test]
fn the_periodic_timer_triggers_a_bsr_after_the_last_one() {
    // periodicBSR-Timer 10 ms = 20 slots after the BSR of slot 1.
    let mut m = mac(vec![lc(1, 1)]);
    let mut shares = [0];
    m.on_slot(at(0), 0, &[5000], None, &mut shares);
    m.on_slot(at(1), 1, &[5000], Some(500), &mut shares);
    assert!(!m.bsr_triggered());
    for s in 2..21 {
        m.on_slot(at(s), s, &[4502], None, &mut shares);
        assert!(!m.bsr_triggered(), "slot {s}");
    }
    m.on_slot(at(21), 21, &[4502], None, &mut shares);
    assert!(m.bsr_triggered());
    assert_eq!(m.stats().periodic_bsr_triggers, 1);
    // A periodic BSR asks for no SR (only a Regular one does).
    assert!(!m.sr_pending());
}

#[test]
fn retx_bsr_timer_expiry_with_data_triggers_a_regular_bsr_and_an_sr() {
    let mut m = UeMacConfig {
        periodic_bsr_timer_ms: None,
        retx_bsr_timer_ms: 10,
        sr_period_slots: 1,
        ..UeMacConfig::default()
    }
    .build(at(0))
    .unwrap();
    let mut shares = [0];
    m.on_slot(at(0), 0, &[5000], Some(500), &mut shares);
    assert!(!m.sr_pending());
    for s in 1..20 {
        assert_eq!(
            m.on_slot(at(s), s, &[4502], None, &mut shares).sr,
            SrAction::None
        );
    }
    // 10 ms = 20 slots after the grant of slot 0.
    assert_eq!(
        m.on_slot(at(20), 20, &[4502], None, &mut shares).sr,
        SrAction::Signal
    );
    assert_eq!(m.stats().regular_bsr_triggers, 2);
}

#[test]
fn a_grant_that_holds_the_data_but_not_the_bsr_cancels_it() {
    let mut m = mac(vec![lc(1, 1)]);
    let mut shares = [0];
    m.on_slot(at(0), 0, &[100], None, &mut shares);
    assert!(m.bsr_triggered() && m.sr_pending());
    let out = m.on_slot(at(1), 1, &[100], Some(101), &mut shares);
    assert_eq!(out.bsr, None);
    assert_eq!(shares, [100]);
    assert_eq!(out.padding, 1);
    assert!(!m.bsr_triggered() && !m.sr_pending());
}

#[test]
fn padding_left_by_the_data_carries_a_padding_bsr() {
    // Three LCGs; priorities: LCG 3 holds the best channel.
    let channels = vec![lc(1, 4), lc(2, 6), lc(3, 2)];
    let run = |grant: u32| {
        let mut m = mac(channels.clone());
        let mut shares = [0; 3];
        // No data yet: the first grant finds nothing to trigger a regular
        // BSR; data arrives in a slot with a grant.
        m.on_slot(at(0), 0, &[0, 0, 0], None, &mut shares);
        // Cancel the regular trigger with a first PDU that reports it.
        m.on_slot(at(1), 1, &[10, 10, 10], Some(6), &mut shares);
        assert!(!m.bsr_triggered());
        // The buffers stay, the grant covers channel 3 (priority 2) only:
        // what is left is padding for a padding BSR.
        m.on_slot(at(2), 2, &[10, 10, 10], Some(grant), &mut shares)
    };
    // Everything fits in 30 bytes; padding 2 with no LCG left: Short, 0.
    let out = run(32);
    assert_eq!(out.bsr.unwrap().format, BsrFormat::Short);
    assert_eq!(out.padding, 0);
    // 12-byte grant: 10 to LCG 3, 2 to LCG 1; padding 0: no BSR.
    assert_eq!(run(12).bsr, None);
    // 3 channels, grant 9: LCP gives the whole grant away, no padding.
    assert_eq!(run(9).bsr, None);
}

#[test]
fn padding_bsr_truncates_to_the_best_lcgs() {
    let m = mac(vec![lc(1, 4), lc(2, 6), lc(3, 2)]);
    let after = [0, 100, 200, 300, 0, 0, 0, 0];
    let best = [17, 4, 6, 2, 17, 17, 17, 17];
    // Exactly a Short BSR: Short Truncated of LCG 3 (best channel, prio 2).
    let ce = m.padding_bsr(2, &after, &best).unwrap();
    assert_eq!(ce.format, BsrFormat::ShortTruncated);
    assert_eq!(ce.sizes[3], Some(BufferSizeTable::Short.index(300)));
    assert_eq!(ce.reported(), 1);
    // 5 bytes: Long Truncated with 2 LCGs (3 then 1).
    let ce = m.padding_bsr(5, &after, &best).unwrap();
    assert_eq!(ce.format, BsrFormat::LongTruncated);
    assert_eq!(ce.sizes[3], Some(BufferSizeTable::Long.index(300)));
    assert_eq!(ce.sizes[1], Some(BufferSizeTable::Long.index(100)));
    assert_eq!(ce.sizes[2], None);
    // 6 bytes hold the Long BSR of all three.
    let ce = m.padding_bsr(6, &after, &best).unwrap();
    assert_eq!(ce.format, BsrFormat::Long);
    assert_eq!(ce.reported(), 3);
    // One LCG with data and 3 bytes: Short BSR.
    let one = [0, 0, 500, 0, 0, 0, 0, 0];
    let ce = m.padding_bsr(3, &one, &best).unwrap();
    assert_eq!(ce.format, BsrFormat::Short);
    assert_eq!(m.padding_bsr(1, &one, &best), None);
}

#[test]
fn sr_trans_max_leads_to_random_access() {
    let mut m = UeMacConfig {
        sr_period_slots: 1,
        sr_trans_max: 4,
        ..UeMacConfig::default()
    }
    .build(at(0))
    .unwrap();
    let mut shares = [0];
    let actions: Vec<SrAction> = (0..6)
        .map(|s| m.on_slot(at(s), s, &[100], None, &mut shares).sr)
        .collect();
    assert_eq!(
        actions,
        [
            SrAction::Signal,
            SrAction::Signal,
            SrAction::Signal,
            SrAction::Signal,
            SrAction::RandomAccess,
            SrAction::None,
        ]
    );
    assert_eq!(m.stats().random_accesses, 1);
}

#[test]
fn bad_configuration_names_the_field_and_the_allowed_values() {
    let bad = |c: UeMacConfig| c.build(at(0)).unwrap_err();
    let e = bad(UeMacConfig {
        sr_period_slots: 3,
        ..UeMacConfig::default()
    });
    assert_eq!(e.field, "sr_period_slots");
    assert!(e.allowed.contains("640"), "{e}");
    let e = bad(UeMacConfig {
        sr_offset_slots: 10,
        ..UeMacConfig::default()
    });
    assert_eq!(e.to_string(), "sr_offset_slots = 10: must be in 0..=9");
    let e = bad(UeMacConfig {
        logical_channels: vec![LogicalChannelConfig {
            prioritised_bit_rate_kbps: Some(100),
            ..LogicalChannelConfig::default()
        }],
        ..UeMacConfig::default()
    });
    assert_eq!(e.field, "logical_channels[0].prioritised_bit_rate_kbps");
    let e = bad(UeMacConfig {
        logical_channels: vec![lc(8, 1)],
        ..UeMacConfig::default()
    });
    assert_eq!(e.field, "logical_channels[0].lcg");
}

#[test]
fn config_reads_from_toml_with_defaults() {
    let c: UeMacConfig = toml::from_str(
        "sr_period_slots = 40\n[[logical_channels]]\npriority = 3\nprioritised_bit_rate_kbps = 64\n",
    )
    .unwrap();
    assert_eq!(c.sr_period_slots, 40);
    assert_eq!(c.retx_bsr_timer_ms, 80);
    assert_eq!(c.logical_channels[0].lcg, 1);
    assert_eq!(c.logical_channels[0].bucket_size_duration_ms, 100);
    c.build(at(0)).unwrap();
}

proptest::proptest! {
    // Every grant byte is a BSR, data or padding; no channel gets more
    // than it holds; a Regular BSR is never left without an SR or a BSR on
    // its way.
    #[test]
    fn pdu_bytes_add_up(
        steps in proptest::collection::vec(
            (proptest::collection::vec(0u64..5000, 3), proptest::option::of(0u32..4000)),
            1..60,
        ),
    ) {
        let mut m = mac(vec![lc(0, 1), lc(1, 4), lc(1, 9)]);
        let mut shares = [0u64; 3];
        let mut left = [0u64; 3];
        for (s, (arrivals, grant)) in steps.iter().enumerate() {
            let s = s as u64;
            let buffers: Vec<u64> = (0..3).map(|j| left[j] + arrivals[j] / 4).collect();
            let out = m.on_slot(at(s), s, &buffers, *grant, &mut shares);
            if let Some(g) = grant {
                let bsr = out.bsr.map_or(0, |b| u64::from(b.bytes()));
                proptest::prop_assert_eq!(
                    bsr + shares.iter().sum::<u64>() + out.padding,
                    u64::from(*g)
                );
            } else {
                proptest::prop_assert_eq!(shares, [0; 3]);
            }
            for j in 0..3 {
                proptest::prop_assert!(shares[j] <= buffers[j]);
                left[j] = buffers[j] - shares[j];
            }
            if m.regular_triggered {
                proptest::prop_assert!(m.sr_pending() || grant.is_some() || m.in_random_access());
            }
        }
    }
}
