//! The node's uplink DRBs (`ues[].uplink_drbs`): packets a UE sends cross
//! its SDAP, pipeline, RLC and MAC, wait for grants of the cell's uplink
//! scheduler, and come out at the core; nothing is lost uncounted.

use proptest::prelude::*;
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use tcran_core::{Duration, FiveTuple, Instant, Packet, PacketId, Protocol, Rnti};
use tcran_gnb::{ue_address, Gnb, GnbConfig, Output, Place};

fn config(toml_text: &str) -> GnbConfig {
    toml::from_str(toml_text).expect("config parses")
}

fn node(toml_text: &str) -> Gnb {
    config(toml_text)
        .build(Path::new("."))
        .expect("config builds")
}

fn upload(rnti: u16, id: u64, len: u32, at: Instant) -> Packet {
    let tuple = FiveTuple {
        src: ue_address(Rnti(rnti)),
        dst: IpAddr::V4(Ipv4Addr::new(198, 51, 100, 1)),
        sport: 40000,
        dport: 5201,
        proto: Protocol::UDP,
    };
    Packet::new(PacketId(id), len, tuple, at)
}

const MS: u64 = 1_000_000;

fn t(ns: u64) -> Instant {
    Instant::from_nanos(ns)
}

/// Feeds `inputs` (sorted by time) as uplink packets of UE 1 and runs the
/// node to `until`; returns every output.
fn drive(gnb: &mut Gnb, inputs: &[Packet], until: Instant) -> Vec<Output> {
    let mut outputs = Vec::new();
    let mut next = 0;
    loop {
        let t_in = inputs.get(next).map(|p| p.created);
        match (t_in, gnb.next_wakeup()) {
            (Some(ti), Some(tn)) if ti <= tn && ti <= until => {
                gnb.uplink(Rnti(1), inputs[next].clone(), ti);
                next += 1;
            }
            (_, Some(tn)) if tn <= until => gnb.on_timeout(tn),
            _ => break,
        }
        outputs.extend(std::iter::from_fn(|| gnb.poll_output()));
    }
    outputs
}

fn at_core(outputs: &[Output]) -> Vec<(u64, Instant)> {
    outputs
        .iter()
        .filter_map(|o| match o {
            Output::Uplink { packet, at, .. } => Some((packet.id.0, *at)),
            _ => None,
        })
        .collect()
}

const CELL_20MHZ: &str = r#"
    ul_delay = "7ms"
    [cell]
    bandwidth_mhz = 20
    [[ues]]
    rnti = 1
    channel = { kind = "mcs", mcs = 28 }
"#;

/// A packet on an idle uplink waits for the UE's SR occasion (default
/// period 10 slots at offset 0, TS 38.331 `SchedulingRequestResourceConfig`),
/// the DCI in the next slot, the PUSCH K2 = 4 slots after the DCI (TS
/// 38.214 §6.1.2.1), and reaches the core at the end of the PUSCH's slot, not `ul_delay` after it was sent.
#[test]
fn an_uplink_packet_waits_for_sr_and_grant_not_the_delay_model() {
    let cfg = format!("{CELL_20MHZ}\n[[ues.uplink_drbs]]\nrlc = {{ mode = \"um\" }}\n");
    let mut gnb = node(&cfg);
    let sent = t(MS + 300_000);
    let out = drive(&mut gnb, &[upload(1, 5, 200, sent)], t(40 * MS));
    let got = at_core(&out);
    assert_eq!(got.len(), 1, "{out:?}");
    // SR in slot 10 (the first occasion after 1.3 ms), the DCI in slot
    // 11 (the gNB decodes the PUCCH in slot 10), PUSCH in slot 15, decoded
    // at its end.
    assert_eq!(got[0], (5, t(16 * MS)));
}

/// A backlogged upload fills every uplink slot: 106 PRBs at MCS 28
/// (64QAM table), 14 PUSCH symbols with one DM-RS symbol carry a TBS of
/// 92200 bits = 11525 bytes (TS 38.214 §6.1.4.2 / §5.1.3.2, worked by
/// hand: N_RE = 106 x (12 x 14 - 12) = 16536, R x Qm = 948/1024 x 6,
/// N_info = 91854 -> 92200 from the formula for N_info > 3824). What
/// reaches the core per slot is that TBS less the MAC subheaders, RLC UM
/// and PDCP headers (a few bytes per 1500-byte packet) and the BSR.
#[test]
fn a_backlogged_upload_gets_the_pusch_tbs_every_slot() {
    let cfg = format!(
        "{CELL_20MHZ}\n[[ues.uplink_drbs]]\nrlc = {{ mode = \"um\", buffer_limit = \"50MB\" }}\n"
    );
    let mut gnb = node(&cfg);
    let inputs: Vec<Packet> = (0..30_000).map(|i| upload(1, i, 1500, t(0))).collect();
    let out = drive(&mut gnb, &inputs, t(1100 * MS));
    let bytes_in = |from: u64, to: u64| -> u64 {
        at_core(&out)
            .iter()
            .filter(|(_, at)| *at > t(from * MS) && *at <= t(to * MS))
            .count() as u64
            * 1500
    };
    let steady = bytes_in(100, 1100);
    let tbs_bytes = 11_525 * 1000;
    assert!(
        steady <= tbs_bytes && steady as f64 >= 0.99 * tbs_bytes as f64,
        "{steady} bytes in 1000 slots, TBS x slots {tbs_bytes}"
    );
}

/// A UE's own uplink channel sets its PUSCH: MCS 10 up while the downlink
/// runs at MCS 28. MCS 10 of TS 38.214 Table 5.1.3.1-1 is Qm = 4, R =
/// 340/1024; on 106 PRBs of 14 symbols with one DM-RS symbol (N_RE = 106 x
/// 156 = 16536), §5.1.3.2 worked by hand: N_info = 16536 x 340/1024 x 4 =
/// 21961.9, n = 9, N'_info = 512 x round(21937.9 / 512) = 22016, C = 3,
/// TBS = 24 x ceil(22040 / 24) - 24 = 22032 bits = 2754 bytes per uplink
/// slot (MCS 28 would carry 11525).
#[test]
fn an_own_uplink_mcs_sets_the_pusch_tbs_not_the_downlink_mcs() {
    let cfg = format!(
        "{CELL_20MHZ}uplink_channel = {{ kind = \"mcs\", mcs = 10 }}\n\
         [[ues.uplink_drbs]]\nrlc = {{ mode = \"um\", buffer_limit = \"50MB\" }}\n"
    );
    let mut gnb = node(&cfg);
    let inputs: Vec<Packet> = (0..4_000).map(|i| upload(1, i, 1500, t(0))).collect();
    let out = drive(&mut gnb, &inputs, t(1100 * MS));
    let steady = bytes_at_core(&out, 100 * MS, 1100 * MS);
    let tbs_bytes = 2_754 * 1000;
    eprintln!("{steady} bytes in 1000 slots of TBS 2754");
    assert!(
        steady <= tbs_bytes && steady as f64 >= 0.98 * tbs_bytes as f64,
        "{steady} bytes in 1000 slots, TBS x slots {tbs_bytes}"
    );
}

/// IP bytes of the uplink packets that reached the core in `(from, to]` ns.
fn bytes_at_core(out: &[Output], from: u64, to: u64) -> u64 {
    at_core(out)
        .iter()
        .filter(|(_, at)| *at > t(from) && *at <= t(to))
        .count() as u64
        * 1500
}

/// The mahimahi uplink trace shipped with tcran (a copy of the reference
/// collection's, tests/integration/oracle_copies.rs in tcran-ran): its
/// delivery opportunities, ms.
fn verizon_up() -> Vec<u64> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../data/traces/mahimahi/Verizon-LTE-short.up"
    );
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .map(|l| l.trim().parse().expect("a timestamp"))
        .collect()
}

/// A backlogged upload over an uplink mahimahi trace carries what the
/// trace offers: one 1500-byte IP packet per opportunity, less the
/// MAC/RLC/PDCP headers and BSRs the opportunities' bytes also carry. In
/// FDD (15 kHz, a PUSCH every ms) and in TDD (DDDSU at 30 kHz, a PUSCH
/// every 2.5 ms, whose grant must take the opportunities of the whole
/// 2.5 ms, not one slot's): two-sided, against the opportunities counted
/// in the trace file over the same window, shifted by the 5 ms from a
/// decision to the core (K2 = 4 slots and the PUSCH's own).
#[test]
fn a_backlogged_upload_over_an_uplink_trace_carries_what_the_trace_offers() {
    let trace = verizon_up();
    let offered = |from_ms: u64, to_ms: u64| -> u64 {
        trace
            .iter()
            .filter(|&&ms| ms >= from_ms && ms < to_ms)
            .count() as u64
            * 1500
    };
    let (from, to, shift) = (200, 2200, 5);
    let expected = offered(from - shift, to - shift);
    let ue = "uplink_channel = { kind = \"trace\", path = \"builtin:verizon-lte-short-up\", start = \"0s\" }\n\
              [[ues.uplink_drbs]]\nrlc = { mode = \"um\", buffer_limit = \"50MB\" }\n";
    let tdd = CELL_20MHZ.replace("[cell]", "[cell]\nnumerology = 1\nslot_pattern = \"DDDSU\"");
    for (name, cell) in [("FDD", CELL_20MHZ.to_string()), ("TDD", tdd)] {
        let mut gnb = node(&format!("{cell}{ue}"));
        let inputs: Vec<Packet> = (0..5_000).map(|i| upload(1, i, 1500, t(0))).collect();
        let out = drive(&mut gnb, &inputs, t((to + 10) * MS));
        let got = bytes_at_core(&out, from * MS, to * MS);
        eprintln!("{name}: {got} of the {expected} bytes the trace offers");
        assert!(
            got as f64 <= expected as f64 * 1.003 && got as f64 >= 0.97 * expected as f64,
            "{name}: {got} bytes at the core in {from}-{to} ms, the trace offers {expected}"
        );
    }
}

/// Without uplink DRBs nothing changes: the delay model still applies to
/// the UE without them when another UE has some.
#[test]
fn a_ue_without_uplink_drbs_keeps_the_delay_model() {
    let cfg = format!(
        "{CELL_20MHZ}\n[[ues.uplink_drbs]]\n[[ues]]\nrnti = 2\nchannel = {{ kind = \"mcs\", mcs = 10 }}\n"
    );
    let mut gnb = node(&cfg);
    let sent = t(2 * MS + 100);
    gnb.uplink(Rnti(2), upload(2, 9, 84, sent), sent);
    let got = at_core(&std::iter::from_fn(|| gnb.poll_output()).collect::<Vec<_>>());
    assert_eq!(got, vec![(9, sent + Duration::from_millis(7))]);
}

#[test]
fn bad_uplink_settings_name_their_field() {
    let cases = [
        (
            format!("{CELL_20MHZ}\n[[ues.uplink_drbs]]\nrlc = {{ mode = \"um\", buffer_limit = \"0B\" }}\n"),
            "ues[0].uplink_drbs[0].rlc",
        ),
        (
            CELL_20MHZ.replace("[cell]", "[cell]\nscheduling_period = \"2ms\"")
                + "\n[[ues.uplink_drbs]]\n",
            "cell.scheduling_period",
        ),
        (
            CELL_20MHZ.replace("[cell]", "[cell.uplink]\nk2_slots = 99\n[cell]")
                + "\n[[ues.uplink_drbs]]\n",
            "cell.uplink.k2_slots",
        ),
        (
            format!(
                "{CELL_20MHZ}uplink_channel = {{ kind = \"geometry\", track = [[0.0, 0.0]] }}\n\
                 [[ues.uplink_drbs]]\n"
            ),
            "ues[0].uplink_channel.kind",
        ),
        (
            format!(
                "{CELL_20MHZ}uplink_channel = {{ kind = \"trace\", path = \"no-such.up\" }}\n\
                 [[ues.uplink_drbs]]\n"
            ),
            "ues[0].uplink_channel.path",
        ),
        (
            format!(
                "{CELL_20MHZ}uplink_channel = {{ kind = \"trace\", path = \"builtin:verizon-lte-short-up\", carry_over = \"24ms\" }}\n\
                 [[ues.uplink_drbs]]\n"
            ),
            "ues[0].uplink_channel.carry_over",
        ),
        (
            format!("{CELL_20MHZ}uplink_channel = {{ kind = \"mcs\", mcs = 10 }}\n"),
            "ues[0].uplink_channel",
        ),
    ];
    for (cfg, field) in cases {
        let e = config(&cfg).build(Path::new(".")).unwrap_err();
        assert!(e.field.starts_with(field), "{field}: got {e}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Every uplink packet is, at any time, at the core, dropped with a
    /// reason, or in exactly one place of the node: with a small UE buffer
    /// (RLC drops), PUSCH errors, UM or AM, and a pipeline in the UE.
    #[test]
    fn every_uplink_packet_is_accounted_for(
        am in any::<bool>(),
        bler in prop_oneof![Just(0.0), Just(0.2)],
        sizes in prop::collection::vec((0u64..200, 40u32..1500), 1..300),
        stop_ms in 1u64..300,
    ) {
        let mode = if am { "am" } else { "um" };
        let cfg = format!(
            "{}\n[[ues.uplink_drbs]]\nrlc = {{ mode = \"{mode}\", buffer_limit = \"20kB\" }}\n\
             [ues.uplink_drbs.pipeline]\n[[ues.uplink_drbs.pipeline.queues]]\nid = 0\nkind = \"fifo\"\nlimit_packets = 50\n",
            CELL_20MHZ.replace("[cell]", &format!("[cell]\nbler = {bler}"))
        );
        let mut gnb = node(&cfg);
        let mut inputs: Vec<Packet> = sizes
            .iter()
            .enumerate()
            .map(|(i, &(ms, len))| upload(1, i as u64, len, t(ms * MS)))
            .collect();
        inputs.sort_by_key(|p| p.created);
        let out = drive(&mut gnb, &inputs, t(stop_ms * MS));
        let mut seen = BTreeMap::<u64, i64>::new();
        for o in &out {
            match o {
                Output::Uplink { packet, .. } | Output::Dropped { packet, .. } => {
                    *seen.entry(packet.id.0).or_insert(0) += 1;
                }
                Output::DropWithdrawn { id, .. } => *seen.entry(id.0).or_insert(0) -= 1,
                _ => {}
            }
        }
        gnb.for_each_in_flight(|place, p| {
            assert!(
                matches!(
                    place,
                    Place::UeTc | Place::UeRlc | Place::UplinkAir | Place::GnbReassembly | Place::GnbReordering
                ),
                "{place:?}"
            );
            *seen.entry(p.id.0).or_insert(0) += 1;
        });
        for p in inputs.iter().filter(|p| p.created <= t(stop_ms * MS)) {
            prop_assert_eq!(seen.get(&p.id.0).copied(), Some(1), "packet {:?}", p.id);
        }
        prop_assert!(seen.values().all(|&n| n == 1));
    }
}
