//! MAC + RLC together: HARQ losses under RLC AM (every SDU delivered once)
//! and under RLC UM (every SDU delivered or reported lost exactly once).

use tcran_core::{DrbId, FiveTuple, Instant, Packet, PacketId, Rnti};
use tcran_ran::channel::ChannelSample;
use tcran_ran::mac::{LcInput, Mac, MacConfig, SlotOutput, UeInput};
use tcran_ran::phy::mcs::{Mcs, McsTable};
use tcran_ran::rlc::{RlcConfig, RlcRx, RlcTx};

fn run(rlc: RlcConfig, bler: f64, max_harq_tx: u8) -> (Vec<u64>, Vec<u64>, usize) {
    let p = rlc.build().unwrap();
    let mut tx = RlcTx::new(p.clone(), DrbId(1));
    let mut rx = RlcRx::new(p, DrbId(1));
    let mut mac = Mac::new(
        MacConfig {
            bler,
            max_harq_tx,
            seed: 3,
            ..MacConfig::default()
        }
        .build()
        .unwrap(),
    );
    let n = 1000u64;
    let mut out = SlotOutput::default();
    let mut pdus = Vec::new();
    let mut dep = Vec::new();
    let mut delivered = Vec::new();
    let mut lost = Vec::new();
    let mut departed = 0usize;
    let mut next_id = 0u64;
    for slot in 0..4000u64 {
        let now = Instant::from_millis(slot);
        // 1500-byte SDUs every 2 ms (6 Mbit/s) on a ~9 Mbit/s link.
        if next_id < n && slot % 2 == 0 {
            let p = Packet::new(PacketId(next_id), 1500, FiveTuple::default(), now);
            tx.enqueue(p, now).unwrap();
            next_id += 1;
        }
        tx.on_timer(now);
        rx.on_timer(now, &mut lost);
        let bs = tx.buffer_status();
        let lcs = [LcInput {
            drb: DrbId(1),
            priority: 1,
            buffer_bytes: bs.total(),
            sdu_sizes: &[],
            head_of_line_age: tcran_core::Duration::ZERO,
        }];
        let ues = [UeInput {
            rnti: Rnti(1),
            channel: ChannelSample::Mcs(Mcs::new(McsTable::Qam64, 20).unwrap()),
            lcs: &lcs,
        }];
        mac.schedule(slot, now, &ues, &mut out);
        if let Some(g) = out.grants.first().copied() {
            pdus.clear();
            let used = tx.fill(out.lc_grants[0].granted_bytes, now, &mut pdus, &mut dep);
            assert!(used <= g.tbs_bytes);
            mac.transmit(&g, std::mem::take(&mut pdus), &mut out);
        }
        for tb in out.delivered.drain(..) {
            for pdu in tb.pdus {
                rx.on_pdu(pdu, now, &mut delivered);
            }
        }
        for tb in out.lost.drain(..) {
            for pdu in &tb.pdus {
                rx.on_pdu_lost(pdu, &mut lost);
            }
        }
        if let Some(s) = rx.poll_status(now) {
            tx.on_status(&s, now, &mut dep);
        }
        departed += dep.len();
        dep.clear();
    }
    let mut d: Vec<u64> = delivered.iter().map(|p| p.id.0).collect();
    d.sort_unstable();
    let mut l: Vec<u64> = lost.iter().map(|p| p.id.0).collect();
    l.sort_unstable();
    (d, l, departed)
}

#[test]
fn am_over_lossy_harq_delivers_every_sdu_exactly_once() {
    let (d, l, departed) = run(RlcConfig::am(), 0.3, 2);
    assert!(d == (0..1000).collect::<Vec<_>>(), "delivered {}", d.len());
    assert!(l.is_empty());
    assert_eq!(departed, 1000);
}

#[test]
fn um_over_lossy_harq_accounts_for_every_sdu_once() {
    let (d, l, departed) = run(RlcConfig::um(), 0.3, 2);
    assert!(!l.is_empty());
    let mut all: Vec<u64> = d.iter().chain(l.iter()).copied().collect();
    all.sort_unstable();
    assert!(
        all == (0..1000).collect::<Vec<_>>(),
        "delivered + lost = sent, no doubles"
    );
    assert_eq!(departed, 1000);
}
