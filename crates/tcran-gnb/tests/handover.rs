//! Handover between two nodes driven by hand (TS 38.300 §9.2.3): what the
//! source forwards reaches the UE through the target, in order, and no
//! packet is lost without a reason, whenever the handovers happen.

use proptest::prelude::*;
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use tcran_control::{KpmCounters, RanNode};
use tcran_core::{Duration, FiveTuple, Instant, Packet, PacketId, Protocol, Rnti};
use tcran_gnb::{ue_address, Gnb, GnbConfig, Layer, Output, Place, TcForwarding, UeContext};
use tcran_ran::{AnyChannel, McsTable};

fn node(toml_text: &str) -> Gnb {
    let cfg: GnbConfig = toml::from_str(toml_text).expect("config parses");
    cfg.build(Path::new(".")).expect("config builds")
}

fn packet(rnti: u16, id: u64, len: u32, at: Instant, dport: u16) -> Packet {
    let tuple = FiveTuple {
        src: IpAddr::V4(Ipv4Addr::new(198, 51, 100, 1)),
        dst: ue_address(Rnti(rnti)),
        sport: 5000,
        dport,
        proto: Protocol::UDP,
    };
    Packet::new(PacketId(id), len, tuple, at)
}

fn mcs(index: u8) -> AnyChannel {
    AnyChannel::fixed_mcs(McsTable::Qam64, index).expect("valid MCS")
}

/// Two bearers per UE: AM behind a 5G-BDP pacer (so the TC pipeline holds
/// packets), UM without one (so the RLC buffer holds them). UE 1 moves,
/// UE 2 stays in cell A. A slow MCS keeps every layer busy.
fn cell(with_ue2: bool) -> String {
    let mut s = String::from(
        r#"
    [cell]
    bandwidth_mhz = 5
    bler = 0.1
    [[ues]]
    rnti = 1
    channel = { kind = "mcs", mcs = 5 }
    sdap = { rules = [{ qfi = 0, drb = 1 }, { qfi = 1, drb = 2 }] }
    [[ues.drbs]]
    id = 1
    rlc = { mode = "am", buffer_limit = "60kB" }
    pipeline = { pacer = { kind = "bdp" }, queues = [{ id = 0, kind = "fifo" }] }
    [[ues.drbs]]
    id = 2
    rlc = { mode = "um", buffer_limit = "20kB" }
"#,
    );
    if with_ue2 {
        s.push_str(
            r#"
    [[ues]]
    rnti = 2
    channel = { kind = "mcs", mcs = 16 }
    [[ues.drbs]]
    id = 1
    rlc = { mode = "am", buffer_limit = "40kB" }
"#,
        );
    }
    s
}

/// A node without UE 1 (the target): UE 1's config is that of cell A.
fn target() -> Gnb {
    node(
        r#"
    [cell]
    bandwidth_mhz = 5
    bler = 0.1
    [[ues]]
    rnti = 9
    channel = { kind = "mcs", mcs = 10 }
    [[ues.drbs]]
    id = 1
"#,
    )
}

/// Two cells, UE 1 moving between them, a driver holding the context for
/// `gap` (the interruption, which covers the Xn delay) and holding UE 1's
/// downlink packets that arrive meanwhile (the source forwards them).
struct Drive {
    cells: [Gnb; 2],
    serving: usize,
    /// The context on its way and when it reaches the target.
    moving: Option<(UeContext, Instant)>,
    held: Vec<Packet>,
    outputs: Vec<Output>,
    /// Handovers done: (source, target, forwarded, dropped).
    handovers: Vec<(usize, usize, u64, u64)>,
    /// Each cell's E2SM-KPM counters after every step.
    kpm: Vec<[KpmCounters; 2]>,
}

impl Drive {
    fn new(with_ue2: bool) -> Drive {
        Drive {
            cells: [node(&cell(with_ue2)), target()],
            serving: 0,
            moving: None,
            held: Vec::new(),
            outputs: Vec::new(),
            handovers: Vec::new(),
            kpm: Vec::new(),
        }
    }

    fn collect(&mut self) {
        for c in &mut self.cells {
            self.outputs.extend(std::iter::from_fn(|| c.poll_output()));
        }
        self.kpm
            .push([self.cells[0].kpm_cell(), self.cells[1].kpm_cell()]);
    }

    fn downlink(&mut self, p: Packet, at: Instant) {
        self.run_until(at, false);
        let to_ue1 = p.tuple.dst == ue_address(Rnti(1));
        if to_ue1 && self.moving.is_some() {
            self.held.push(p);
        } else if to_ue1 {
            self.cells[self.serving].downlink(p, at);
        } else {
            self.cells[0].downlink(p, at);
        }
        self.collect();
    }

    fn hand_over(&mut self, at: Instant, gap: Duration, tc: TcForwarding) {
        self.run_until(at, false);
        if self.moving.is_some() {
            return;
        }
        let ctx = self.cells[self.serving]
            .detach(Rnti(1), at, tc)
            .expect("UE 1 is served");
        let c = ctx.counts();
        let target = 1 - self.serving;
        self.handovers
            .push((self.serving, target, c.forwarded(), c.dropped));
        self.moving = Some((ctx, at + gap));
        self.serving = target;
        self.collect();
    }

    /// Runs both cells (and the attach) up to `until`: events due before
    /// it, or also those due at it with `inclusive`.
    fn run_until(&mut self, until: Instant, inclusive: bool) {
        loop {
            let attach = self.moving.as_ref().map(|(_, t)| *t);
            let next = [
                self.cells[0].next_wakeup(),
                self.cells[1].next_wakeup(),
                attach,
            ]
            .into_iter()
            .flatten()
            .min()
            .expect("cells always have a next slot");
            if next > until || (next == until && !inclusive) {
                break;
            }
            if attach == Some(next) {
                let (ctx, t) = self.moving.take().expect("attach pending");
                let cell = &mut self.cells[self.serving];
                cell.attach(ctx, mcs(9), t)
                    .map_err(|(_, e)| e)
                    .expect("attach");
                for p in std::mem::take(&mut self.held) {
                    cell.downlink(p, t);
                }
            } else {
                for c in &mut self.cells {
                    if c.next_wakeup() == Some(next) {
                        c.on_timeout(next);
                    }
                }
            }
            self.collect();
        }
    }

    /// Every packet's count of appearances: outputs (delivered, dropped,
    /// withdrawn), both cells in flight, the context on Xn, the driver.
    fn ledger(&self) -> (BTreeMap<PacketId, i64>, BTreeMap<Place, u64>) {
        let mut seen = BTreeMap::new();
        let mut places = BTreeMap::new();
        for o in &self.outputs {
            match o {
                Output::Delivered { packet, .. } | Output::Dropped { packet, .. } => {
                    *seen.entry(packet.id).or_insert(0) += 1;
                }
                Output::DropWithdrawn { id, .. } => *seen.entry(*id).or_insert(0) -= 1,
                _ => {}
            }
        }
        let mut add = |place: Place, p: &Packet| {
            *seen.entry(p.id).or_insert(0) += 1;
            *places.entry(place).or_insert(0) += 1;
        };
        for c in &self.cells {
            c.for_each_in_flight(&mut add);
        }
        if let Some((ctx, _)) = &self.moving {
            ctx.for_each_in_flight(&mut add);
        }
        for p in &self.held {
            add(Place::Xn, p);
        }
        (seen, places)
    }

    fn delivered_to(&self, rnti: u16) -> Vec<u64> {
        self.outputs
            .iter()
            .filter_map(|o| match o {
                Output::Delivered {
                    rnti: r, packet, ..
                } if r.0 == rnti => Some(packet.id.0),
                _ => None,
            })
            .collect()
    }
}

/// One bulk burst on UE 1's AM bearer (QFI 0), then a handover while the
/// TC pipeline and RLC still hold most of it: every packet reaches the UE
/// exactly once, in order (forwarded PDCP SDUs keep their COUNT, new ones
/// continue the source's COUNTs, so the UE's PDCP reordering, which moves
/// with it, delivers in sequence), and the counts say what moved.
#[test]
fn forwarded_am_data_reaches_the_ue_through_the_target_in_order() {
    let mut d = Drive::new(false);
    let t0 = Instant::ZERO;
    for i in 0..300 {
        d.downlink(packet(1, i + 1, 1400, t0, 7), t0);
    }
    let at = t0 + Duration::from_millis(60);
    d.hand_over(at, Duration::from_millis(40), TcForwarding::Forward);
    let (_, _, forwarded, dropped) = d.handovers[0];
    assert!(
        forwarded > 100,
        "most of the burst is still queued: {forwarded}"
    );
    assert_eq!(dropped, 0, "AM loses nothing at a handover");
    d.run_until(t0 + Duration::from_secs(5), true);
    let got = d.delivered_to(1);
    assert_eq!(got, (1..=300).collect::<Vec<_>>(), "each once, in order");
    let drops: Vec<_> = d
        .outputs
        .iter()
        .filter(|o| matches!(o, Output::Dropped { .. }))
        .collect();
    assert!(drops.is_empty(), "{drops:?}");
    // The target's UE kept the source's PDCP state (COUNTs 0..300).
    let ue = d.cells[1]
        .drb(Rnti(1), tcran_core::DrbId(1))
        .expect("attached");
    assert_eq!(ue.pdcp_rx().state().1, 300, "RX_DELIV after 300 COUNTs");
    assert!(d.cells[0].drb(Rnti(1), tcran_core::DrbId(1)).is_none());
}

/// With `tc_forwarding = drop` the TC pipeline's packets are dropped at the
/// source, counted at the handover layer, and what was below TC (PDCP SDUs
/// in RLC) is still forwarded.
#[test]
fn tc_packets_not_forwarded_are_dropped_with_a_reason() {
    let mut d = Drive::new(false);
    let t0 = Instant::ZERO;
    for i in 0..300 {
        d.downlink(packet(1, i + 1, 1400, t0, 7), t0);
    }
    let at = t0 + Duration::from_millis(60);
    d.hand_over(at, Duration::from_millis(40), TcForwarding::Drop);
    let (_, _, forwarded, dropped) = d.handovers[0];
    assert!(
        dropped > 100,
        "the pacer held most of the burst in TC: {dropped}"
    );
    d.run_until(t0 + Duration::from_secs(5), true);
    let at_handover = d
        .outputs
        .iter()
        .filter(|o| {
            matches!(
                o,
                Output::Dropped {
                    layer: Layer::Handover,
                    ..
                }
            )
        })
        .count() as u64;
    assert_eq!(at_handover, dropped);
    assert_eq!(d.delivered_to(1).len() as u64 + dropped, 300);
    assert!(forwarded > 0, "the RLC's SDUs still move");
}

fn traffic() -> impl Strategy<Value = Vec<(Instant, Packet)>> {
    proptest::collection::vec((0u64..400_000, 0u16..3, 40u32..1500), 1..500).prop_map(|mut v| {
        // Ids in arrival order, so that "in order" means increasing ids.
        v.sort_by_key(|x| x.0);
        v.into_iter()
            .enumerate()
            .map(|(i, (us, kind, len))| {
                let at = Instant::ZERO + Duration::from_micros(us);
                // UE 1's AM bearer, UE 1's UM bearer (QFI 1), UE 2.
                let mut p = packet(if kind == 2 { 2 } else { 1 }, i as u64 + 1, len, at, 7);
                if kind == 1 {
                    p.qfi = tcran_core::Qfi(1);
                }
                (at, p)
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Forwarding conserves packets: with random traffic and handovers at
    /// random times (back and forth, with random interruptions, TC queues
    /// forwarded or dropped), at any instant every packet handed in is
    /// delivered, dropped with a reason, or in flight exactly once:
    /// in a cell, on Xn, or held for the target during the interruption.
    #[test]
    fn every_packet_is_delivered_dropped_or_in_flight_across_handovers(
        inputs in traffic(),
        handovers in proptest::collection::vec((0u64..400, 1u64..80, any::<bool>()), 0..4),
        stop_ms in 1u64..600,
    ) {
        let mut d = Drive::new(true);
        let until = Instant::ZERO + Duration::from_millis(stop_ms);
        let mut hos: Vec<_> = handovers
            .into_iter()
            .map(|(ms, gap, drop)| {
                let tc = if drop { TcForwarding::Drop } else { TcForwarding::Forward };
                (Instant::ZERO + Duration::from_millis(ms), Duration::from_millis(gap), tc)
            })
            .collect();
        hos.sort_by_key(|h| h.0);
        let given: Vec<_> = inputs.iter().filter(|(t, _)| *t <= until).cloned().collect();
        let (mut i, mut h) = (0, 0);
        loop {
            let next_in = given.get(i).map(|(t, _)| *t);
            let next_ho = hos.get(h).map(|x| x.0).filter(|t| *t <= until);
            match (next_in, next_ho) {
                (Some(ti), Some(th)) if th < ti => {
                    d.hand_over(th, hos[h].1, hos[h].2);
                    h += 1;
                }
                (Some(ti), _) => {
                    d.downlink(given[i].1.clone(), ti);
                    i += 1;
                }
                (None, Some(th)) => {
                    d.hand_over(th, hos[h].1, hos[h].2);
                    h += 1;
                }
                (None, None) => break,
            }
        }
        d.run_until(until, true);
        let (seen, _) = d.ledger();
        for (_, p) in &given {
            prop_assert_eq!(seen.get(&p.id).copied(), Some(1), "packet {:?}", p.id);
        }
        prop_assert_eq!(seen.len(), given.len());
        // UE 1's AM bearer delivers in order across every handover.
        let am: Vec<u64> = d
            .outputs
            .iter()
            .filter_map(|o| match o {
                Output::Delivered { rnti, packet, .. }
                    if rnti.0 == 1 && packet.qfi == tcran_core::Qfi(0) => Some(packet.id.0),
                _ => None,
            })
            .collect();
        prop_assert!(am.windows(2).all(|w| w[0] < w[1]), "AM order: {:?}", am);
        // A cell's KPM counters only grow (TS 28.552 measurements are
        // differences of them), also when a UE takes its bearers away.
        for w in d.kpm.windows(2) {
            for (a, b) in w[0].iter().zip(&w[1]) {
                let grows = |x: u64, y: u64| x <= y;
                prop_assert!(
                    grows(a.pdcp_sdu_bits_dl, b.pdcp_sdu_bits_dl)
                        && grows(a.rlc_sdu_transmitted_bits_dl, b.rlc_sdu_transmitted_bits_dl)
                        && a.rlc_sdu_delay_sum <= b.rlc_sdu_delay_sum
                        && grows(a.rlc_sdus_delivered, b.rlc_sdus_delivered)
                        && grows(a.thp_volume_bits_dl, b.thp_volume_bits_dl)
                        && a.thp_time_dl <= b.thp_time_dl
                        && grows(a.prb_used_dl, b.prb_used_dl)
                        && grows(a.slots, b.slots),
                    "cell counters fell: {:?} -> {:?}", a, b
                );
            }
        }
    }
}
