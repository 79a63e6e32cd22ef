//! Classifier tests. Oracles: RFC 9331 sec. 5.1 codepoints, ns-3's
//! pfifo_fast DSCP -> band table (algorithms.md sec. 2.6), the chi-square
//! distribution for hash uniformity, and hand-written packets for the filter.

use super::*;
use crate::PipelineConfig;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use tcran_core::rng::RngStream;
use tcran_core::{Dscp, Ecn, FiveTuple, Instant, PacketId, Protocol};

fn pkt(src: &str, dst: &str, sport: u16, dport: u16, proto: Protocol) -> Packet {
    let tuple = FiveTuple {
        src: src.parse().unwrap(),
        dst: dst.parse().unwrap(),
        sport,
        dport,
        proto,
    };
    Packet::new(PacketId(1), 1000, tuple, Instant::ZERO)
}

fn with(mut p: Packet, dscp: u8, ecn: Ecn) -> Packet {
    p.dscp = Dscp(dscp);
    p.ecn = ecn;
    p
}

fn classifier(toml_text: &str) -> AnyClassifier {
    toml::from_str::<ClassifierConfig>(toml_text)
        .unwrap()
        .build()
        .unwrap()
}

fn build_err(toml_text: &str) -> String {
    match toml::from_str::<ClassifierConfig>(toml_text) {
        Err(e) => format!("parse: {e}"),
        Ok(c) => match c.build() {
            Ok(_) => panic!("expected an error for {toml_text}"),
            Err(e) => format!("build: {e}"),
        },
    }
}

fn q(n: u16) -> Option<QueueId> {
    Some(QueueId(n))
}

// ------------------------------------------------------------------- filter

#[test]
fn filter_matches_prefixes_ports_protocol_dscp_and_ecn() {
    let mut c = classifier(
        r#"
        kind = "filter"
        rules = [
          { priority = 10, protocol = "udp", dst_port = "5000-5010", queue = 1 },
          { priority = 20, src = "10.1.0.0/16", protocol = "tcp", src_port = 443, queue = 2 },
          { priority = 30, dst = "192.0.2.7", queue = 3 },
          { priority = 40, dscp = "ef", queue = 4 },
          { priority = 50, ecn = "ect1", queue = 5 },
          { priority = 60, protocol = "icmp", queue = 6 },
        ]
        "#,
    );
    let udp = |dport| pkt("10.0.0.1", "10.45.0.2", 40000, dport, Protocol::UDP);
    assert_eq!(c.classify(&udp(5000)), q(1));
    assert_eq!(c.classify(&udp(5010)), q(1));
    assert_eq!(c.classify(&udp(4999)), None);
    assert_eq!(c.classify(&udp(5011)), None);
    // Same ports over TCP do not match the UDP rule.
    assert_eq!(
        c.classify(&pkt("10.0.0.1", "10.45.0.2", 1, 5005, Protocol::TCP)),
        None
    );
    // Prefix /16 and exact source port.
    assert_eq!(
        c.classify(&pkt("10.1.255.3", "10.45.0.2", 443, 1, Protocol::TCP)),
        q(2)
    );
    assert_eq!(
        c.classify(&pkt("10.2.0.3", "10.45.0.2", 443, 1, Protocol::TCP)),
        None
    );
    assert_eq!(
        c.classify(&pkt("10.1.0.3", "10.45.0.2", 444, 1, Protocol::TCP)),
        None
    );
    // Plain address = /32.
    assert_eq!(
        c.classify(&pkt("10.0.0.1", "192.0.2.7", 1, 1, Protocol::TCP)),
        q(3)
    );
    assert_eq!(
        c.classify(&pkt("10.0.0.1", "192.0.2.8", 1, 1, Protocol::TCP)),
        None
    );
    // DSCP and ECN.
    let tcp = pkt("10.0.0.1", "10.45.0.2", 1, 1, Protocol::TCP);
    assert_eq!(c.classify(&with(tcp.clone(), 46, Ecn::NotEct)), q(4));
    assert_eq!(c.classify(&with(tcp.clone(), 34, Ecn::Ect1)), q(5));
    assert_eq!(c.classify(&with(tcp.clone(), 34, Ecn::Ect0)), None);
    assert_eq!(
        c.classify(&pkt("10.0.0.1", "10.45.0.2", 0, 0, Protocol::ICMP)),
        q(6)
    );
}

#[test]
fn filter_matches_ipv6_and_keeps_families_apart() {
    let mut c = classifier(
        r#"
        kind = "filter"
        rules = [
          { priority = 1, dst = "2001:db8::/32", protocol = "icmpv6", queue = 1 },
          { priority = 2, src = "2001:db8:aa::1", queue = 2 },
          { priority = 3, dst = "::/0", queue = 3 },
          { priority = 4, dst = "0.0.0.0/0", queue = 4 },
        ]
        "#,
    );
    assert_eq!(
        c.classify(&pkt(
            "2001:db8:ff::9",
            "2001:db8:1::2",
            0,
            0,
            Protocol::ICMPV6
        )),
        q(1)
    );
    assert_eq!(
        c.classify(&pkt("2001:db8:aa::1", "2001:db9::2", 1, 1, Protocol::UDP)),
        q(2)
    );
    assert_eq!(
        c.classify(&pkt("2001:db8:aa::2", "2001:db9::2", 1, 1, Protocol::UDP)),
        q(3),
        "any IPv6 destination"
    );
    assert_eq!(
        c.classify(&pkt("10.0.0.1", "10.0.0.2", 1, 1, Protocol::UDP)),
        q(4),
        "::/0 does not match IPv4, 0.0.0.0/0 does"
    );
    // An IPv4-mapped IPv6 address is IPv6.
    let mapped = IpAddr::V6(Ipv4Addr::new(10, 0, 0, 2).to_ipv6_mapped());
    let mut p = pkt("::1", "::1", 1, 1, Protocol::UDP);
    p.tuple.dst = mapped;
    assert_eq!(c.classify(&p), q(3));
}

#[test]
fn lowest_priority_first_and_first_match_wins_whatever_the_order_written() {
    let text = r#"
        kind = "filter"
        rules = [
          { priority = 30, queue = 3 },
          { priority = 10, protocol = "udp", queue = 1 },
          { priority = 20, protocol = "udp", dst_port = 53, queue = 2 },
        ]
    "#;
    let mut c = classifier(text);
    let dns = pkt("10.0.0.1", "10.0.0.2", 1000, 53, Protocol::UDP);
    assert_eq!(
        c.classify(&dns),
        q(1),
        "priority 10 wins over the more specific 20"
    );
    assert_eq!(
        c.classify(&pkt("10.0.0.1", "10.0.0.2", 1, 1, Protocol::TCP)),
        q(3)
    );
    if let AnyClassifier::Filter(f) = &c {
        assert_eq!(f.matching_priority(&dns), Some(10));
        assert_eq!(f.len(), 3);
    } else {
        unreachable!()
    }
}

#[test]
fn port_rules_only_match_protocols_with_ports() {
    let mut c = classifier(
        "kind = \"filter\"\nrules = [{ priority = 1, dst_port = \"0-100\", queue = 1 }]",
    );
    assert_eq!(
        c.classify(&pkt("10.0.0.1", "10.0.0.2", 0, 0, Protocol::ICMP)),
        None
    );
    assert_eq!(
        c.classify(&pkt("10.0.0.1", "10.0.0.2", 0, 0, Protocol(132))),
        q(1),
        "SCTP has ports"
    );
}

#[test]
fn malformed_packets_get_the_default_queue() {
    let mut c = classifier("kind = \"filter\"\nrules = [{ priority = 1, queue = 1 }]");
    let mut p = pkt("10.0.0.1", "10.0.0.2", 1, 1, Protocol::UDP);
    assert_eq!(c.classify(&p), q(1));
    p.malformed = true;
    assert_eq!(c.classify(&p), None);
    let mut h = classifier("kind = \"flow_hash\"");
    assert_eq!(h.classify(&p), None);
}

#[test]
fn rule_errors_name_the_field_value_and_what_is_allowed() {
    let rules =
        |r: &str| format!("kind = \"filter\"\nrules = [{{ priority = 1, queue = 1 }}, {r}]");
    assert_eq!(
        build_err(&rules("{ priority = 2, dst_port = \"5010-5000\", queue = 1 }")),
        "build: rules[1].dst_port = 5010-5000: must be a port 0..=65535 or an inclusive range like \"5000-5010\" (low <= high)"
    );
    assert_eq!(
        build_err(&rules("{ priority = 2, src_port = 70000, queue = 1 }")),
        "build: rules[1].src_port = 70000: must be a port 0..=65535 or an inclusive range like \"5000-5010\" (low <= high)"
    );
    assert_eq!(
        build_err(&rules("{ priority = 2, dst = \"10.0.0.1/8\", queue = 1 }")),
        "build: rules[1].dst = 10.0.0.1/8: has host bits set beyond /8; the network is 10.0.0.0/8"
    );
    assert!(
        build_err(&rules("{ priority = 2, src = \"10.0.0.256\", queue = 1 }"))
            .starts_with("build: rules[1].src = 10.0.0.256: must be an IPv4 or IPv6 address")
    );
    assert_eq!(
        build_err(&rules("{ priority = 2, protocol = \"quic\", queue = 1 }")),
        "build: rules[1].protocol = quic: must be tcp, udp, icmp, icmpv6, sctp, dccp, udplite, gre, esp or an IP protocol number 0..=255"
    );
    assert_eq!(
        build_err(&rules("{ priority = 2, dscp = 64, queue = 1 }")),
        "build: rules[1].dscp = 64: must be 0..=63 or a PHB name: be, cs0..cs7, af11..af43, ef, va, le"
    );
    assert_eq!(
        build_err(&rules("{ priority = 2, ecn = \"ect\", queue = 1 }")),
        "build: rules[1].ecn = ect: must be not_ect, ect0, ect1 or ce"
    );
    assert_eq!(
        build_err(&rules("{ priority = 2, protocol = \"icmp\", dst_port = 80, queue = 1 }")),
        "build: rules[1].dst_port = 80: ports apply only to tcp, udp, dccp, sctp and udplite, but protocol is icmp"
    );
    assert_eq!(
        build_err(&rules(
            "{ priority = 2, src = \"10.0.0.1\", dst = \"::1\", queue = 1 }"
        )),
        "build: rules[1].dst = ::1: is IPv6 but src is IPv4; no packet could match"
    );
    assert_eq!(
        build_err(&rules("{ priority = 1, queue = 2 }")),
        "build: rules[1].priority = 1: must be unique: rules[0] has this priority already"
    );
    assert!(build_err(&rules("{ priority = 2, dport = 80, queue = 1 }"))
        .contains("unknown field `dport`"));
}

#[test]
fn live_rule_changes_are_validated_on_their_own() {
    let mut c: ClassifierConfig =
        toml::from_str("kind = \"filter\"\nrules = [{ priority = 1, queue = 1 }]").unwrap();
    let bad: FilterRule = toml::from_str("priority = 2\nqueue = 1\necn = \"cee\"").unwrap();
    assert_eq!(
        c.add_rule(bad.clone()).unwrap_err().to_string(),
        "rule.ecn = cee: must be not_ect, ect0, ect1 or ce"
    );
    let mut good = FilterRule::new(2, QueueId(2));
    good.protocol = Some("udp".into());
    c.add_rule(good).unwrap();
    assert!(c.add_rule(FilterRule::new(2, QueueId(1))).is_err());
    let bad1 = FilterRule { priority: 1, ..bad };
    assert!(c.modify_rule(bad1).is_err());
    assert_eq!(c.referenced_queues(), vec![QueueId(1), QueueId(2)]);
    c.delete_rule(1).unwrap();
    assert!(c.delete_rule(1).is_err());
    let mut other = ClassifierConfig::L4s {
        l_queue: QueueId(1),
        c_queue: QueueId(0),
    };
    assert!(other.add_rule(FilterRule::new(1, QueueId(1))).is_err());
}

// ---------------------------------------------------------------- flow hash

fn random_tuple(r: &mut RngStream) -> FiveTuple {
    let v6 = r.bernoulli(0.25);
    let (src, dst) = if v6 {
        (
            IpAddr::V6(Ipv6Addr::from(
                ((r.next_u64() as u128) << 64) | r.next_u64() as u128,
            )),
            IpAddr::V6(Ipv6Addr::from(
                ((r.next_u64() as u128) << 64) | r.next_u64() as u128,
            )),
        )
    } else {
        (
            IpAddr::V4(Ipv4Addr::from(r.next_u64() as u32)),
            IpAddr::V4(Ipv4Addr::from(r.next_u64() as u32)),
        )
    };
    FiveTuple {
        src,
        dst,
        sport: r.next_u64() as u16,
        dport: r.next_u64() as u16,
        proto: if r.bernoulli(0.5) {
            Protocol::TCP
        } else {
            Protocol::UDP
        },
    }
}

fn hasher(first: u16, buckets: u32, perturbation: u64) -> FlowHash {
    match (ClassifierConfig::FlowHash {
        first_queue: QueueId(first),
        buckets,
        perturbation,
    })
    .build()
    .unwrap()
    {
        AnyClassifier::FlowHash(h) => h,
        _ => unreachable!(),
    }
}

#[test]
fn flow_hash_is_stable_per_flow_and_stays_in_range() {
    let h = hasher(100, 37, 5);
    let mut r = RngStream::new(1, "flow_hash/stable");
    for _ in 0..5000 {
        let t = random_tuple(&mut r);
        let a = h.classify(&t);
        assert_eq!(a, h.classify(&t));
        assert_eq!(a, hasher(100, 37, 5).classify(&t), "rebuilt, same mapping");
        assert!((100..137).contains(&a.0), "{a:?}");
    }
}

#[test]
fn perturbation_reshuffles_the_mapping() {
    let (a, b) = (hasher(0, 1024, 0), hasher(0, 1024, 1));
    let mut r = RngStream::new(2, "flow_hash/perturb");
    let n = 2000;
    let same = (0..n)
        .filter(|_| {
            let t = random_tuple(&mut r);
            a.classify(&t) == b.classify(&t)
        })
        .count();
    // Independent mappings agree with probability 1/1024: ~2 of 2000.
    assert!(same <= 12, "{same} of {n} flows kept their bucket");
}

#[test]
fn flow_hash_spreads_10000_flows_uniformly_over_1024_buckets() {
    let h = hasher(0, 1024, 0);
    let mut r = RngStream::new(3, "flow_hash/chi2");
    let n = 10_000;
    let mut counts = [0u32; 1024];
    for _ in 0..n {
        counts[h.classify(&random_tuple(&mut r)).index()] += 1;
    }
    let expected = n as f64 / 1024.0;
    let chi2: f64 = counts
        .iter()
        .map(|&c| (c as f64 - expected).powi(2) / expected)
        .sum();
    // 1023 degrees of freedom: mean 1023, sd sqrt(2 * 1023) = 45.2. The
    // 99.9th percentile is about 1167; 1023 +- 5 sd covers a bad hash's
    // failure with no flakiness (the run is deterministic anyway).
    assert!(
        chi2 > 1023.0 - 5.0 * 45.2 && chi2 < 1023.0 + 5.0 * 45.2,
        "chi2 = {chi2}"
    );
    // And a structured workload (one server, sequential client ports) too.
    let mut counts = [0u32; 1024];
    for i in 0..n {
        let t = FiveTuple {
            src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            dst: IpAddr::V4(Ipv4Addr::new(10, 45, 0, 2)),
            sport: 1024 + i as u16,
            dport: 443,
            proto: Protocol::TCP,
        };
        counts[h.classify(&t).index()] += 1;
    }
    let chi2: f64 = counts
        .iter()
        .map(|&c| (c as f64 - expected).powi(2) / expected)
        .sum();
    assert!(
        chi2 < 1023.0 + 5.0 * 45.2,
        "sequential ports: chi2 = {chi2}"
    );
}

#[test]
fn flow_hash_config_defaults_and_errors() {
    let c: ClassifierConfig = toml::from_str("kind = \"flow_hash\"").unwrap();
    assert_eq!(
        c,
        ClassifierConfig::FlowHash {
            first_queue: QueueId(0),
            buckets: 1024,
            perturbation: 0
        }
    );
    let refs = c.referenced_queues();
    assert_eq!(refs.len(), 1024);
    assert_eq!((refs[0], refs[1023]), (QueueId(0), QueueId(1023)));
    assert_eq!(
        build_err("kind = \"flow_hash\"\nbuckets = 0"),
        "build: buckets = 0: must be in 1..=8192"
    );
    assert_eq!(
        build_err("kind = \"flow_hash\"\nfirst_queue = 8000\nbuckets = 1024"),
        "build: first_queue = 8000: first_queue + buckets - 1 must be at most 8191 (got 9023)"
    );
}

// ---------------------------------------------------------------------- l4s

#[test]
fn l4s_classifier_follows_rfc9331_codepoints() {
    let mut c = classifier("kind = \"l4s\"\nl_queue = 1\nc_queue = 0");
    let p = pkt("10.0.0.1", "10.0.0.2", 1, 1, Protocol::TCP);
    // RFC 9331 sec. 5.1: ECT(1) (01) and CE (11) -> L; Not-ECT (00), ECT(0) (10) -> C.
    for (bits, queue) in [(0b00, 0), (0b01, 1), (0b10, 0), (0b11, 1)] {
        assert_eq!(
            c.classify(&with(p.clone(), 0, Ecn::from_bits(bits))),
            q(queue),
            "ECN {bits:02b}"
        );
    }
    assert_eq!(
        build_err("kind = \"l4s\"\nl_queue = 1\nc_queue = 1"),
        "build: l_queue = 1: must differ from c_queue, or nothing is separated"
    );
    assert!(build_err("kind = \"l4s\"\nl_queue = 1").contains("missing field `c_queue`"));
}

// --------------------------------------------------------------------- dscp

#[test]
fn dscp_map_in_table_or_list_form() {
    let mut a = classifier("kind = \"dscp\"\nmap = { \"46\" = 1, \"af41\" = 2 }");
    let mut b = classifier(
        "kind = \"dscp\"\nmap = [{ dscp = 46, queue = 1 }, { dscp = \"af41\", queue = 2 }]",
    );
    let p = pkt("10.0.0.1", "10.0.0.2", 1, 1, Protocol::TCP);
    for c in [&mut a, &mut b] {
        assert_eq!(c.classify(&with(p.clone(), 46, Ecn::NotEct)), q(1));
        assert_eq!(c.classify(&with(p.clone(), 34, Ecn::Ce)), q(2));
        assert_eq!(c.classify(&with(p.clone(), 0, Ecn::NotEct)), None);
    }
    assert_eq!(
        build_err("kind = \"dscp\"\nmap = { \"46\" = 1, \"ef\" = 2 }"),
        "build: map.ef = ef: DSCP 46 is mapped already by map.46"
    );
    assert_eq!(
        build_err("kind = \"dscp\"\nmap = [{ dscp = 70, queue = 1 }]"),
        "build: map[0].dscp = 70: must be 0..=63 or a PHB name: be, cs0..cs7, af11..af43, ef, va, le"
    );
    assert!(build_err("kind = \"dscp\"").starts_with("build: map = {}: give at least one"));
    let c: ClassifierConfig =
        toml::from_str("kind = \"dscp\"\nmap = { \"46\" = 3, \"10\" = 1 }\nbands = [0, 1, 2]")
            .unwrap();
    assert_eq!(
        c.referenced_queues(),
        vec![QueueId(0), QueueId(1), QueueId(2), QueueId(3)]
    );
}

/// ns-3 pfifo-fast-queue-disc-test-suite (algorithms.md sec. 2.6): DSCP ->
/// band. Default (CS0) 1; EF 1; AF11, AF21, AF31, AF41 -> 2; AF12, AF22,
/// AF32, AF42 -> 0; AF13, AF23, AF33, AF43 -> 1; CS1-CS7 -> 1.
#[test]
fn dscp_bands_reproduce_pfifo_fast() {
    let oracle: &[(&str, u16)] = &[
        ("cs0", 1),
        ("ef", 1),
        ("af11", 2),
        ("af21", 2),
        ("af31", 2),
        ("af41", 2),
        ("af12", 0),
        ("af22", 0),
        ("af32", 0),
        ("af42", 0),
        ("af13", 1),
        ("af23", 1),
        ("af33", 1),
        ("af43", 1),
        ("cs1", 1),
        ("cs2", 1),
        ("cs3", 1),
        ("cs4", 1),
        ("cs5", 1),
        ("cs6", 1),
        ("cs7", 1),
    ];
    // Bands 0, 1, 2 on queues 10, 11, 12; EF overridden to queue 5.
    let mut c = classifier("kind = \"dscp\"\nbands = [10, 11, 12]\nmap = { \"ef\" = 5 }");
    let p = pkt("10.0.0.1", "10.0.0.2", 1, 1, Protocol::TCP);
    for &(name, band) in oracle {
        let d = filter_dscp(name);
        let want = if name == "ef" { 5 } else { 10 + band };
        assert_eq!(
            c.classify(&with(p.clone(), d, Ecn::NotEct)),
            q(want),
            "{name}"
        );
        assert_eq!(dscp::pfifo_fast_band(Dscp(d)) as u16, band, "{name}");
    }
    // ns-3's TOS-byte table (TOS = DSCP << 2 | ECN): 0x00, 0x02, 0x04, 0x06
    // -> 1; 0x08, 0x0a, 0x0c, 0x0e -> 2; 0x10 .. 0x16 -> 0; 0x18 .. 0x1e -> 1.
    let tos_oracle: &[(&[u8], u16)] = &[
        (&[0x00, 0x02, 0x04, 0x06], 1),
        (&[0x08, 0x0a, 0x0c, 0x0e], 2),
        (&[0x10, 0x12, 0x14, 0x16], 0),
        (&[0x18, 0x1a, 0x1c, 0x1e], 1),
    ];
    for &(toses, band) in tos_oracle {
        for &tos in toses {
            let p = with(p.clone(), tos >> 2, Ecn::from_bits(tos & 0b11));
            assert_eq!(c.classify(&p), q(10 + band), "TOS {tos:#04x}");
        }
    }
}

fn filter_dscp(name: &str) -> u8 {
    filter::parse_dscp(&name.into()).unwrap()
}

// -------------------------------------------------------- through the config

#[test]
fn every_kind_round_trips_through_json_and_toml() {
    for text in [
        "kind = \"none\"",
        "kind = \"filter\"\nrules = [{ priority = 1, src = \"10.0.0.0/8\", dst_port = 443, protocol = 6, dscp = \"ef\", ecn = \"ce\", queue = 2 }]",
        "kind = \"flow_hash\"\nfirst_queue = 4\nbuckets = 16\nperturbation = 99",
        "kind = \"l4s\"\nl_queue = 1\nc_queue = 0",
        "kind = \"dscp\"\nmap = { \"46\" = 1 }\nbands = [0, 1, 2]",
        "kind = \"dscp\"\nmap = [{ dscp = \"af41\", queue = 3 }]",
    ] {
        let c: ClassifierConfig = toml::from_str(text).unwrap();
        c.build().unwrap();
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(serde_json::from_str::<ClassifierConfig>(&json).unwrap(), c, "{json}");
        let back = toml::to_string(&c).unwrap();
        assert_eq!(toml::from_str::<ClassifierConfig>(&back).unwrap(), c, "{back}");
    }
}

#[test]
fn pipeline_config_parses_the_documented_classifier() {
    let text = r#"
        classifier = { kind = "filter", rules = [ { priority = 1, protocol = "udp", dst_port = "5000-5010", queue = 1 } ] }
        [[queues]]
        id = 0
        kind = "fifo"
        [[queues]]
        id = 1
        kind = "fifo"
    "#;
    let cfg = PipelineConfig::from_toml(text).unwrap();
    let ClassifierConfig::Filter { rules } = &cfg.classifier else {
        panic!("{:?}", cfg.classifier)
    };
    assert_eq!(rules[0].dst_port, Some(NumOrText::Text("5000-5010".into())));
    assert_eq!(rules[0].protocol, Some(NumOrText::Text("udp".into())));
    let mut p = cfg.build().unwrap();
    let t = Instant::ZERO;
    assert_eq!(
        p.push(pkt("10.0.0.1", "10.0.0.2", 1, 5003, Protocol::UDP), t),
        crate::PushOutcome::Enqueued(QueueId(1))
    );
    assert_eq!(
        p.push(pkt("10.0.0.1", "10.0.0.2", 1, 5011, Protocol::UDP), t),
        crate::PushOutcome::Enqueued(QueueId(0))
    );
    // Serialization round-trips.
    let json = serde_json::to_string(&cfg).unwrap();
    assert_eq!(serde_json::from_str::<PipelineConfig>(&json).unwrap(), cfg);

    // Unknown keys are rejected, in the rule and in the classifier.
    let e = PipelineConfig::from_toml(&text.replace("queue = 1 }", "queue = 1, dport = 5 }"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown field `dport`"), "{e}");
    let e = PipelineConfig::from_toml(
        &text.replace("kind = \"filter\",", "kind = \"filter\", rulez = [],"),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("unknown field `rulez`"), "{e}");
    // Build errors are prefixed with `classifier.`.
    let e = PipelineConfig::from_toml(&text.replace("\"5000-5010\"", "\"5000-\""))
        .unwrap()
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("classifier.rules[0].dst_port = 5000-: must be a port"),
        "{e}"
    );
}

#[test]
fn pipeline_with_flow_hash_bank_and_l4s_builds() {
    let bank = r#"
        classifier = { kind = "flow_hash", first_queue = 1, buckets = 1024 }
        [[queues]]
        id = 0
        kind = "fifo"
        [[queues]]
        id = 1
        count = 1024
        kind = "fifo"
    "#;
    let mut p = PipelineConfig::from_toml(bank).unwrap().build().unwrap();
    let mut r = RngStream::new(4, "flow_hash/pipeline");
    for _ in 0..100 {
        let mut pk = pkt("10.0.0.1", "10.0.0.2", 1, 1, Protocol::UDP);
        pk.tuple = random_tuple(&mut r);
        let crate::PushOutcome::Enqueued(q) = p.push(pk, Instant::ZERO) else {
            panic!("dropped")
        };
        assert!((1..=1024).contains(&q.0));
    }
    assert_eq!(p.stats(Instant::ZERO).classifier.classified, 100);
    let text = r#"
        classifier = { kind = "l4s", l_queue = 1, c_queue = 0 }
        [[queues]]
        id = 0
        kind = "fifo"
        [[queues]]
        id = 1
        kind = "fifo"
    "#;
    let mut p = PipelineConfig::from_toml(text).unwrap().build().unwrap();
    let t = Instant::ZERO;
    let l4s = with(
        pkt("10.0.0.1", "10.0.0.2", 1, 1, Protocol::TCP),
        0,
        Ecn::Ect1,
    );
    assert_eq!(p.push(l4s, t), crate::PushOutcome::Enqueued(QueueId(1)));
    // A bank too small for the hash is caught by the pipeline.
    let e = PipelineConfig::from_toml(&text.replace(
        "kind = \"l4s\", l_queue = 1, c_queue = 0",
        "kind = \"flow_hash\", buckets = 4",
    ))
    .unwrap()
    .build()
    .unwrap_err();
    assert!(e.to_string().contains("queue 2"), "{e}");
}
