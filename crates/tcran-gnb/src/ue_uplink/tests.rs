//! A UE's uplink DRBs in a closed loop with the gNB's uplink scheduler
//! ([`tcran_ran::mac::ul`]): SR, BSR, grants, LCP into RLC, the gNB's RLC
//! and PDCP receivers, and the pacer's report.

use super::*;
use std::net::{IpAddr, Ipv4Addr};
use tcran_core::{FiveTuple, PacketId, Protocol, Qfi};
use tcran_ran::channel::ChannelSample;
use tcran_ran::mac::ul::{PuschOutcome, UlGrant, UlParams, UlScheduler, UlSchedulerKind};
use tcran_ran::phy::mcs::{Mcs, McsTable};
use tcran_ran::phy::tdd::SlotPattern;
use tcran_ran::rlc::{RlcPdu, StatusPdu};

const SLOT_US: u64 = 1000;

fn at(slot: u64) -> Instant {
    Instant::from_micros(slot * SLOT_US)
}

fn drb(id: u8, priority: u8, toml_extra: &str) -> DrbConfig {
    let mut d: DrbConfig = toml::from_str(toml_extra).expect("drb parses");
    d.id = id;
    d.priority = priority;
    d
}

fn packet(id: u64, len: u32, proto: Protocol, t: Instant) -> Packet {
    let tuple = FiveTuple {
        src: IpAddr::V4(Ipv4Addr::new(10, 45, 0, 1)),
        dst: IpAddr::V4(Ipv4Addr::new(198, 51, 100, 1)),
        sport: 5000,
        dport: 443,
        proto,
    };
    Packet::new(PacketId(id), len, tuple, t)
}

fn scheduler(mcs: u8, n_prb: u16, bler: f64) -> (UlScheduler, ChannelSample) {
    let p = UlParams {
        kind: UlSchedulerKind::RoundRobin,
        n_prb,
        pattern: SlotPattern::fdd(),
        k2: 4,
        pusch_symbols: 14,
        dmrs_re_per_prb: 12,
        layers: 1,
        sr_grant_bytes: 512,
        bler,
        harq_rtt: 8,
        max_harq_tx: 4,
        pf_alpha: 0.01,
        seed: 1,
        slices: Vec::new(),
    };
    let ch = ChannelSample::Mcs(Mcs {
        table: McsTable::Qam64,
        index: mcs,
    });
    (UlScheduler::new(p, &[Rnti(1)]).unwrap(), ch)
}

/// Drives one UE and the scheduler slot by slot; `arrivals(slot)` gives
/// the packets the UE's IP layer sends in the slot. Returns the packets
/// the gNB passed up, with their slot.
struct Run {
    ue: UeUplink,
    sched: UlScheduler,
    channel: ChannelSample,
    pending: Vec<UlGrant>,
    /// The PDUs and BSR of each TB until it is decoded or lost.
    tbs: std::collections::BTreeMap<u64, (Vec<RlcPdu>, Option<tcran_ran::mac::ue::bsr::BsrCe>)>,
    /// AM STATUS PDUs on their way down to the UE (5 ms).
    statuses: Vec<(Instant, DrbId, StatusPdu)>,
    up: Vec<(u64, Packet)>,
    rlc_bytes: Vec<u64>,
}

impl Run {
    fn new(ue: UeUplink, mcs: u8, n_prb: u16) -> Run {
        Run::with_bler(ue, mcs, n_prb, 0.0)
    }

    fn with_bler(ue: UeUplink, mcs: u8, n_prb: u16, bler: f64) -> Run {
        let (sched, channel) = scheduler(mcs, n_prb, bler);
        Run {
            ue,
            sched,
            channel,
            pending: Vec::new(),
            tbs: Default::default(),
            statuses: Vec::new(),
            up: Vec::new(),
            rlc_bytes: Vec::new(),
        }
    }

    fn slots(&mut self, range: std::ops::Range<u64>, mut arrivals: impl FnMut(u64) -> Vec<Packet>) {
        let mut pdus = Vec::new();
        let mut up = Vec::new();
        for n in range {
            let now = at(n);
            if self.ue.next_wakeup(now).is_some_and(|t| t <= now) {
                self.ue.on_timeout(now, &mut up);
            }
            while let Some(i) = self.statuses.iter().position(|s| s.0 <= now) {
                let (_, drb, status) = self.statuses.remove(i);
                self.ue.on_status(drb, &status, now);
            }
            let ids: Vec<DrbId> = self.ue.drb_ids().collect();
            for drb in ids {
                if let Some(status) = self.ue.poll_status(drb, now) {
                    self.statuses
                        .push((now + Duration::from_millis(5), drb, status));
                }
            }
            for p in arrivals(n) {
                self.ue.push(p, now);
            }
            self.sched.schedule(n, &[self.channel], &mut self.pending);
            let grant = self
                .pending
                .iter()
                .position(|g| g.pusch_slot == n)
                .map(|i| self.pending.remove(i));
            let bwp = self
                .sched
                .params()
                .tb_bytes(self.channel, self.sched.params().n_prb);
            // A retransmission resends the TB: the UE's MAC builds nothing.
            let dci = grant.filter(UlGrant::is_new).map(|g| UlDci {
                tb_bytes: g.tb_bytes,
                mcs: Some(10),
                prbs: g.prbs,
                bwp_tb_bytes: u32::try_from(bwp).unwrap(),
            });
            let out = self.ue.on_slot(now, n, dci, (0, 0), &mut pdus);
            if out.sr == tcran_ran::mac::ue::sr::SrAction::Signal {
                self.sched.on_sr(Rnti(1));
            }
            if let Some(g) = grant {
                if g.is_new() {
                    self.tbs.insert(g.tb, (std::mem::take(&mut pdus), out.bsr));
                }
                match self.sched.transmit(&g) {
                    PuschOutcome::Decoded => {
                        let (tb, bsr) = self.tbs.remove(&g.tb).unwrap();
                        if let Some(bsr) = bsr {
                            self.sched.on_bsr(Rnti(1), &bsr);
                        }
                        for pdu in tb {
                            self.ue.at_gnb(pdu, now, &mut up);
                        }
                    }
                    PuschOutcome::Lost => {
                        for pdu in self.tbs.remove(&g.tb).unwrap().0 {
                            self.ue.lost(&pdu, now);
                        }
                    }
                    PuschOutcome::Retransmit => {}
                }
            }
            self.up.extend(up.drain(..).map(|p| (n, p)));
            self.rlc_bytes.push(self.ue.rlc_bytes());
        }
    }

    fn drops(&mut self) -> Vec<(Layer, DropReason)> {
        let mut out = Vec::new();
        self.ue.take_drops(&mut out);
        out.into_iter()
            .filter_map(|o| match o {
                Output::Dropped { layer, reason, .. } => Some((layer, reason)),
                _ => None,
            })
            .collect()
    }
}

fn one_drb(extra: &str) -> UeUplink {
    UeUplink::new(
        Rnti(1),
        &[drb(1, 0, extra)],
        None,
        &UeMacConfig::default(),
        Duration::from_micros(SLOT_US),
        Instant::ZERO,
    )
    .unwrap()
}

#[test]
fn packets_go_up_in_order_after_sr_bsr_and_grants() {
    let mut r = Run::new(one_drb("rlc = { mode = \"um\" }"), 10, 25);
    r.slots(0..300, |n| {
        if n == 0 {
            (0..100)
                .map(|i| packet(i, 1000, Protocol::TCP, at(0)))
                .collect()
        } else {
            Vec::new()
        }
    });
    let ids: Vec<u64> = r.up.iter().map(|(_, p)| p.id.0).collect();
    assert_eq!(ids, (0..100).collect::<Vec<_>>());
    assert!(r.drops().is_empty());
    // The first PUSCH is the SR's grant: SR at slot 0, decided at 1, sent
    // at 1 + K2 = 5.
    assert!(r.up[0].0 >= 5, "{}", r.up[0].0);
    assert_eq!(r.ue.rlc_bytes(), 0);
    assert_eq!(r.ue.mac().stats().srs_signalled, 1);
}

/// With PUSCH errors (BLER 0.4, 4 transmissions: 0.4^4 = 2.6 % of the TBs
/// are lost): RLC AM recovers every
/// lost TB by its STATUS reports (carried down in 5 ms) and delivers all
/// in order; RLC UM loses the SDUs of TBs HARQ gave up on and counts each
/// as an air loss. Either way every packet is delivered or counted.
#[test]
fn harq_losses_are_recovered_by_am_and_counted_by_um() {
    let burst = |n: u64| {
        if n < 200 {
            vec![packet(n, 1000, Protocol::TCP, at(n))]
        } else {
            Vec::new()
        }
    };
    let mut am = Run::with_bler(one_drb("rlc = { mode = \"am\" }"), 10, 25, 0.4);
    am.slots(0..3000, burst);
    let ids: Vec<u64> = am.up.iter().map(|(_, p)| p.id.0).collect();
    assert_eq!(ids, (0..200).collect::<Vec<_>>());
    assert!(am.drops().is_empty());
    assert!(am.sched.stats().lost > 0, "{:?}", am.sched.stats());

    let mut um = Run::with_bler(one_drb("rlc = { mode = \"um\" }"), 10, 25, 0.4);
    um.slots(0..3000, burst);
    let drops = um.drops();
    assert!(um.sched.stats().lost > 0);
    assert!(!drops.is_empty());
    assert!(drops
        .iter()
        .all(|&d| d == (Layer::Air, DropReason::AirLoss)));
    assert_eq!(um.up.len() + drops.len(), 200);
}

#[test]
fn a_small_ue_buffer_drops_what_it_cannot_hold_and_counts_it() {
    let mut r = Run::new(
        one_drb("rlc = { mode = \"um\", buffer_limit = \"3000B\" }"),
        10,
        25,
    );
    r.slots(0..200, |n| {
        if n == 0 {
            (0..10)
                .map(|i| packet(i, 1000, Protocol::TCP, at(0)))
                .collect()
        } else {
            Vec::new()
        }
    });
    let drops = r.drops();
    assert!(!drops.is_empty());
    assert!(drops
        .iter()
        .all(|&d| d == (Layer::Rlc, DropReason::RlcFull)));
    assert_eq!(r.up.len() + drops.len(), 10);
}

#[test]
fn sdap_maps_qfis_to_uplink_drbs_and_drops_what_it_cannot_map() {
    let sdap: SdapConfig =
        toml::from_str("rules = [ { qfi = 1, drb = 1 }, { qfi = 5, drb = 2 } ]").unwrap();
    let mut ue = UeUplink::new(
        Rnti(1),
        &[drb(1, 0, ""), drb(2, 3, "")],
        Some(&sdap),
        &UeMacConfig::default(),
        Duration::from_micros(SLOT_US),
        Instant::ZERO,
    )
    .unwrap();
    let mut p = packet(1, 100, Protocol::UDP, at(0));
    p.qfi = Qfi(5);
    ue.push(p, at(0));
    let mut p = packet(2, 100, Protocol::UDP, at(0));
    p.qfi = Qfi(9);
    ue.push(p, at(0));
    assert!(ue.drbs[0].tx.buffer_status().total() == 0);
    assert!(ue.drbs[1].tx.buffer_status().total() > 0);
    let mut out = Vec::new();
    ue.take_drops(&mut out);
    assert_eq!(out.len(), 1);
    // Logical channels from the DRBs' priorities: 1 and 4.
    assert_eq!(ue.drb_ids().map(|d| d.0).collect::<Vec<_>>(), [1, 2]);
}

#[test]
fn a_mismatched_channel_list_names_the_field() {
    let mac = UeMacConfig {
        logical_channels: vec![LogicalChannelConfig::default(); 3],
        ..UeMacConfig::default()
    };
    let e = UeUplink::new(
        Rnti(1),
        &[drb(1, 0, ""), drb(2, 1, "")],
        None,
        &mac,
        Duration::from_micros(SLOT_US),
        Instant::ZERO,
    )
    .unwrap_err();
    assert_eq!(e.field, "mac.logical_channels");
}

/// Vanilla: one FIFO and a 5-MB RLC buffer, as 3GPP specifies the UE.
const VANILLA: &str = "rlc = { mode = \"um\", buffer_limit = \"5MB\" }";

/// UDP (the call) before the rest, then `pacer` between the pipeline and
/// the UE's 5-MB RLC buffer.
fn cured(pacer: &str) -> String {
    format!(
        r#"
        rlc = {{ mode = "um", buffer_limit = "5MB" }}
        [pipeline]
        default_queue = 1
        classifier = {{ kind = "filter", rules = [ {{ priority = 1, protocol = "udp", queue = 0 }} ] }}
        scheduler = {{ kind = "priority" }}
        pacer = {pacer}
        [[pipeline.queues]]
        id = 0
        kind = "fifo"
        [[pipeline.queues]]
        id = 1
        kind = "fifo"
        priority = 1
    "#
    )
}

/// What one run of the bloat experiment measured over its second second.
#[derive(Debug, Clone, Copy)]
struct Bloat {
    /// Median delay of the call's packets, UE IP layer to gNB PDCP, ms.
    call_ms: f64,
    /// Upload bytes passed up at the gNB.
    upload_bytes_per_s: u64,
    /// Median bytes in the UE's RLC buffer.
    rlc_bytes: u64,
}

/// Uplink bufferbloat on one DRB: an upload offering `per_slot` 1000-B
/// packets per 1-ms slot (more than the cell carries) and a call's 200-B
/// packet every 20 ms, for 2.5 s, with `drb` as the UE's bearer.
fn bloat(drb: &str, mcs: u8, prbs: u16, per_slot: u64) -> Bloat {
    let mut r = Run::new(one_drb(drb), mcs, prbs);
    let mut id = 0;
    r.slots(0..3000, |n| {
        let mut v = Vec::new();
        if n < 2500 {
            for _ in 0..per_slot {
                v.push(packet(id, 1000, Protocol::TCP, at(n)));
                id += 1;
            }
        }
        if n % 20 == 10 {
            v.push(packet(1_000_000 + n, 200, Protocol::UDP, at(n)));
        }
        v
    });
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let call =
        r.up.iter()
            .filter(|(n, p)| p.id.0 >= 1_000_000 && (1000..2000).contains(n))
            .map(|(n, p)| (n - (p.id.0 - 1_000_000)) as f64)
            .collect();
    let upload_bytes_per_s =
        r.up.iter()
            .filter(|(n, p)| p.id.0 < 1_000_000 && (1000..2000).contains(n))
            .map(|(_, p)| u64::from(p.len))
            .sum();
    let rlc = r.rlc_bytes[1000..2000].iter().map(|&b| b as f64).collect();
    Bloat {
        call_ms: median(call),
        upload_bytes_per_s,
        rlc_bytes: median(rlc) as u64,
    }
}

/// The measured table (`cargo test --release -p tcran-gnb --lib
/// uplink_bloat -- --nocapture` prints it; docs/simulator.md quotes it).
/// 25 PRB at MCS 10 carry 647 B per 1-ms slot; the upload offers 2000.
#[test]
fn uplink_bloat_and_its_cure_by_a_limit_sized_to_the_grant_loop() {
    let vanilla = bloat(VANILLA, 10, 25, 2);
    let limited = bloat(
        &cured(r#"{ kind = "static", limit_bytes = "20kB" }"#),
        10,
        25,
        2,
    );
    for (name, b) in [("vanilla", vanilla), ("priority+static 20kB", limited)] {
        eprintln!("{name}: {b:?}");
    }
    // Vanilla: the UE's RLC buffer holds seconds of upload and the call
    // waits behind it.
    assert!(vanilla.rlc_bytes > 1_000_000, "{vanilla:?}");
    assert!(vanilla.call_ms > 500.0, "{vanilla:?}");
    // A limit of about the grant loop's bandwidth-delay product (SR period
    // + K2 + the BSR's way back, some 30 slots of 647 B): the buffer
    // stays at the limit, the call waits for it only, the upload keeps
    // its throughput.
    assert!(limited.rlc_bytes <= 20_000, "{limited:?}");
    assert!(limited.call_ms < 40.0, "{limited:?}");
    assert!(
        limited.upload_bytes_per_s as f64 > 0.95 * vanilla.upload_bytes_per_s as f64,
        "{limited:?} vs {vanilla:?}"
    );
}

/// A known limit, measured: the downlink's grant-driven pacers keep the
/// UE's RLC buffer at about one slot's grant, too little for the uplink's
/// grant loop. The gNB grants what the last BSR showed; data the pacer
/// adds to a buffer that is not empty triggers no Regular BSR (TS 38.321
/// §5.4.5), so it is reported only by a BSR riding a grant. Once the
/// grants have used up what the gNB knew, none comes: the Periodic BSR
/// waits for one (it asks for no SR), and only retxBSR-Timer (80 ms)
/// triggers a Regular BSR and an SR. The upload starves. An uplink pacer
/// must keep the loop's bandwidth-delay product in RLC.
#[test]
fn downlink_grant_pacers_starve_the_uplink_grant_loop() {
    let vanilla = bloat(VANILLA, 28, 106, 16);
    eprintln!("106 PRB MCS 28 vanilla: {vanilla:?}");
    for pacer in [
        r#"{ kind = "bdp" }"#,
        r#"{ kind = "e5g_bdp" }"#,
        r#"{ kind = "jit" }"#,
    ] {
        let b = bloat(&cured(pacer), 28, 106, 16);
        eprintln!("106 PRB MCS 28 {pacer}: {b:?}");
        assert!(
            (b.upload_bytes_per_s as f64) < 0.1 * vanilla.upload_bytes_per_s as f64,
            "{pacer}: {b:?}"
        );
    }
    let limited = bloat(
        &cured(r#"{ kind = "static", limit_bytes = "100kB" }"#),
        28,
        106,
        16,
    );
    eprintln!("106 PRB MCS 28 static 100kB: {limited:?}");
    assert!(limited.upload_bytes_per_s as f64 > 0.9 * vanilla.upload_bytes_per_s as f64);
    assert!(limited.call_ms < 0.1 * vanilla.call_ms);
}
