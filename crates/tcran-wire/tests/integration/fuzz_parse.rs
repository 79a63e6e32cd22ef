//! The `parse_packet` fuzz target's body (`tcran_wire::fuzz_parse`) on
//! stable `cargo test`: the seed corpus in fuzz/seeds/parse_packet, random
//! bytes, and random mutations of valid packets (which get much deeper than
//! random bytes: past the version nibble, lengths and checksums).
//!
//! `TCRAN_WRITE_SEEDS=1 cargo test -p tcran-wire --test integration fuzz_parse:: -- --ignored`
//! regenerates the seed corpus.

use crate::common;

use common::*;
use proptest::prelude::*;
use std::path::PathBuf;
use tcran_core::packet::TcpFlags;
use tcran_core::{Dscp, Ecn, Qfi};
use tcran_wire::*;

fn seed_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/parse_packet")
}

/// The seed corpus: named valid packets of every supported shape.
fn seed_packets() -> Vec<(&'static str, Vec<u8>)> {
    let mut ip4 = Ipv4Spec::new(v4(192, 0, 2, 1), v4(10, 45, 0, 2));
    ip4.ecn = Ecn::Ect0;
    ip4.dscp = Dscp::EF;
    let mut ip6 = Ipv6Spec::new(v6(1), v6(2));
    ip6.ecn = Ecn::Ect1;
    ip6.flow_label = 0x12345;
    let tcp = TcpSpec {
        sport: 443,
        dport: 50_000,
        seq: 1,
        ack: 2,
        flags: TcpFlags(TcpFlags::ACK | TcpFlags::PSH),
        window: 512,
        sack: [(100, 200), (300, 400), (0, 0)],
    };
    let mut ce = ip4;
    ce.ecn = Ecn::Ce;
    let sdap = SdapDlHeader {
        rdi: false,
        rqi: true,
        qfi: Qfi(5),
    };
    let udp4 = build_ipv4_udp(&ip4, 5060, 5060, b"INVITE").unwrap();

    // IPv6: hop-by-hop -> routing -> destination options -> fragment (first,
    // M = 1) -> UDP.
    let mut chain = vec![43, 0, 1, 4, 0, 0, 0, 0]; // HBH, PadN
    chain.extend_from_slice(&[60, 0, 0, 0, 0, 0, 0, 0]); // routing, type 0, segments left 0
    chain.extend_from_slice(&[44, 0, 1, 4, 0, 0, 0, 0]); // dest opts, PadN
    chain.extend_from_slice(&[17, 0, 0x00, 0x01, 0, 0, 0, 9]); // fragment offset 0, M
    let udp6 = build_ipv6_udp(&ip6, 1000, 2000, b"fragment-one").unwrap();
    let udp = &udp6[40..];
    chain.extend_from_slice(udp);
    let mut ext6 = build_ipv6_udp(&ip6, 1000, 2000, b"fragment-one").unwrap();
    ext6.truncate(40);
    ext6[4..6].copy_from_slice(&(chain.len() as u16).to_be_bytes());
    ext6[6] = 0; // next header: hop-by-hop
    ext6.extend_from_slice(&chain);

    // IPv4 non-first fragment (offset 185 x 8, MF clear), checksum fixed.
    let mut frag4 = udp4.clone();
    frag4[6..8].copy_from_slice(&185u16.to_be_bytes());
    frag4[10..12].copy_from_slice(&[0, 0]);
    let sum = ipv4_header_checksum(&frag4).unwrap();
    frag4[10..12].copy_from_slice(&sum.to_be_bytes());

    vec![
        ("ipv4_udp", udp4.clone()),
        (
            "ipv4_tcp_sack",
            build_ipv4_tcp(&ip4, &tcp, b"data").unwrap(),
        ),
        (
            "ipv4_icmp_echo",
            build_ipv4_icmp_echo(&ip4, 7, 1, false, b"ping").unwrap(),
        ),
        ("ipv4_ce", build_ipv4_udp(&ce, 1, 2, b"").unwrap()),
        ("ipv4_nonfirst_fragment", frag4),
        (
            "ipv6_udp",
            build_ipv6_udp(&ip6, 4433, 443, b"quic").unwrap(),
        ),
        ("ipv6_tcp", build_ipv6_tcp(&ip6, &tcp, b"data").unwrap()),
        (
            "ipv6_icmp_echo_reply",
            build_ipv6_icmp_echo(&ip6, 9, 3, true, b"pong").unwrap(),
        ),
        ("ipv6_ext_chain_first_fragment", ext6),
        ("sdap_ipv4_udp", with_sdap(sdap, &udp4)),
        (
            "sdap_ipv6_tcp",
            with_sdap(sdap, &build_ipv6_tcp(&ip6, &tcp, b"x").unwrap()),
        ),
    ]
}

#[test]
fn seed_packets_parse() {
    for (name, bytes) in seed_packets() {
        let sdap = name.starts_with("sdap");
        let h = parse(&bytes, sdap).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(h.len as usize, bytes.len() - usize::from(sdap), "{name}");
        fuzz_parse(&bytes);
    }
    let h = parse(&seed_packets()[8].1, false).unwrap();
    assert_eq!((h.tuple.sport, h.tuple.dport), (1000, 2000));
    assert_eq!(
        h.fragment.map(|f| (f.offset, f.more, f.ident)),
        Some((0, true, 9))
    );
}

#[test]
fn seed_corpus_on_disk_is_current_and_passes() {
    let dir = seed_dir();
    let mut n = 0;
    for (name, bytes) in seed_packets() {
        let on_disk = std::fs::read(dir.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e} (regenerate: see module docs)"));
        assert_eq!(
            on_disk, bytes,
            "{name} is stale (regenerate: see module docs)"
        );
    }
    for entry in std::fs::read_dir(&dir).unwrap() {
        fuzz_parse(&std::fs::read(entry.unwrap().path()).unwrap());
        n += 1;
    }
    assert!(n >= seed_packets().len());
}

#[test]
#[ignore = "writes fuzz/seeds/parse_packet; run with TCRAN_WRITE_SEEDS=1"]
fn regenerate_seed_corpus() {
    if std::env::var_os("TCRAN_WRITE_SEEDS").is_none() {
        return;
    }
    let dir = seed_dir();
    std::fs::create_dir_all(&dir).unwrap();
    for (name, bytes) in seed_packets() {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Set(usize, u8),
    Flip(usize, u8),
    Insert(usize, u8),
    Remove(usize),
    Truncate(usize),
    Extend(Vec<u8>),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Set(i, b)),
        3 => (any::<usize>(), 0u8..8).prop_map(|(i, b)| Mutation::Flip(i, b)),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        1 => any::<usize>().prop_map(Mutation::Remove),
        1 => any::<usize>().prop_map(Mutation::Truncate),
        1 => prop::collection::vec(any::<u8>(), 1..16).prop_map(Mutation::Extend),
    ]
}

fn mutate(b: &mut Vec<u8>, m: &Mutation) {
    let n = b.len().max(1);
    match m {
        Mutation::Set(i, v) if !b.is_empty() => b[i % n] = *v,
        Mutation::Flip(i, bit) if !b.is_empty() => b[i % n] ^= 1 << bit,
        Mutation::Insert(i, v) => b.insert(i % (b.len() + 1), *v),
        Mutation::Remove(i) if !b.is_empty() => {
            b.remove(i % n);
        }
        Mutation::Truncate(i) => b.truncate(i % (b.len() + 1)),
        Mutation::Extend(tail) => b.extend_from_slice(tail),
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn random_bytes_never_break_the_invariants(bytes in prop::collection::vec(any::<u8>(), 0..128)) {
        fuzz_parse(&bytes);
    }

    #[test]
    fn random_ip_looking_bytes_never_break_the_invariants(
        version in prop_oneof![Just(0x40u8), Just(0x60u8)],
        ihl in 0u8..16,
        rest in prop::collection::vec(any::<u8>(), 0..128),
        sdap: bool,
        qfi: u8,
    ) {
        let mut b = vec![version | ihl];
        b.extend_from_slice(&rest);
        if sdap {
            b.insert(0, qfi);
        }
        fuzz_parse(&b);
    }

    #[test]
    fn mutated_valid_packets_never_break_the_invariants(
        seed in any::<prop::sample::Index>(),
        muts in prop::collection::vec(mutation(), 1..5),
    ) {
        let seeds = seed_packets();
        let mut b = seeds[seed.index(seeds.len())].1.clone();
        for m in &muts {
            mutate(&mut b, m);
        }
        fuzz_parse(&b);
    }

    #[test]
    fn mutated_headers_with_fixed_lengths_never_break_the_invariants(
        seed in any::<prop::sample::Index>(),
        muts in prop::collection::vec((0usize..80, any::<u8>()), 1..4),
    ) {
        // Byte substitutions only inside the headers, keeping the length:
        // reaches the transport and extension-header parsing most often.
        let seeds = seed_packets();
        let mut b = seeds[seed.index(seeds.len())].1.clone();
        for (i, v) in muts {
            if i < b.len() && i != 2 && i != 3 {
                b[i] = v;
            }
        }
        fuzz_parse(&b);
    }
}
