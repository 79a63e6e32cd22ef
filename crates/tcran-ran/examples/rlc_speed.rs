//! Speed of the RLC data path alone: 1500-byte SDUs through an AM (and a
//! UM) transmitter and receiver, grants of 2292 bytes (25 PRB at MCS 28,
//! TS 36.213 / 38.214 order of magnitude) so about half of the SDUs are
//! segmented, a STATUS PDU every 10 grants. Prints ns per SDU (median of 5).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)] // measures wall time

use std::time::Instant as WallClock;
use tcran_core::{DrbId, FiveTuple, Instant, Packet, PacketId};
use tcran_ran::rlc::{RlcConfig, RlcRx, RlcTx};

const SDUS: u64 = 500_000;

fn run(cfg: &RlcConfig) -> f64 {
    let p = cfg.build().expect("valid");
    let mut tx = RlcTx::new(p.clone(), DrbId(1));
    let mut rx = RlcRx::new(p, DrbId(1));
    let (mut pdus, mut dep, mut delivered) = (Vec::new(), Vec::new(), Vec::new());
    let start = WallClock::now();
    let mut id = 0;
    let mut slot = 0u64;
    let mut done = 0;
    while done < SDUS as usize {
        let now = Instant::from_millis(slot);
        // Keep about 200 SDUs queued, as a bulk TCP flow would.
        while id < SDUS && tx.buffer_status().new_sdus < 200 {
            let pkt = Packet::new(PacketId(id), 1500, FiveTuple::default(), now);
            tx.enqueue(pkt, now).expect("room");
            id += 1;
        }
        tx.fill(2292, now, &mut pdus, &mut dep);
        for pdu in pdus.drain(..) {
            rx.on_pdu(pdu, now, &mut delivered);
        }
        if slot.is_multiple_of(10) {
            if let Some(s) = rx.poll_status(now) {
                tx.on_status(&s, now, &mut dep);
            }
        }
        done += delivered.len();
        delivered.clear();
        dep.clear();
        slot += 1;
    }
    start.elapsed().as_secs_f64() * 1e9 / SDUS as f64
}

fn main() {
    for (name, cfg) in [("am", RlcConfig::am()), ("um", RlcConfig::um())] {
        let mut ns: Vec<f64> = (0..5).map(|_| run(&cfg)).collect();
        ns.sort_by(f64::total_cmp);
        println!("rlc {name}: {:.0} ns per SDU (median of 5)", ns[2]);
    }
}
