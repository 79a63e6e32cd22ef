//! ECN CE marking on real bytes (RFC 3168 sec. 5) with the IPv4 header
//! checksum fixed incrementally (RFC 1624 eqn. 3), checked against an
//! independent full recomputation (etherparse's `calc_header_checksum`).

use crate::common;

use common::*;
use etherparse::{Ipv4Header, Ipv4HeaderSlice};
use proptest::prelude::*;
use tcran_core::Ecn;
use tcran_wire::*;

/// A random IPv4 header with random options (IHL 5..=15) and a valid
/// checksum, followed by a random payload, as etherparse serialises it.
fn random_ipv4() -> impl Strategy<Value = Vec<u8>> {
    (
        any::<[u8; 20]>(),
        0usize..=10,
        prop::collection::vec(any::<u8>(), 40),
        prop::collection::vec(any::<u8>(), 0..64),
    )
        .prop_map(|(fixed, opt_words, opts, payload)| {
            let mut b = fixed.to_vec();
            b[0] = 0x40 | (5 + opt_words as u8);
            // etherparse's header model has no field for the reserved flag
            // bit (RFC 791), so its checksum would not cover it.
            b[6] &= 0x7f;
            b.extend_from_slice(&opts[..opt_words * 4]);
            let hlen = b.len();
            let total = (hlen + payload.len()) as u16;
            b[2..4].copy_from_slice(&total.to_be_bytes());
            b.extend_from_slice(&payload);
            let hdr = Ipv4HeaderSlice::from_slice(&b).unwrap().to_header();
            let sum = hdr.calc_header_checksum();
            b[10..12].copy_from_slice(&sum.to_be_bytes());
            b
        })
}

fn etherparse_checksum(ip: &[u8]) -> u16 {
    Ipv4HeaderSlice::from_slice(ip)
        .unwrap()
        .to_header()
        .calc_header_checksum()
}

fn stored_checksum(ip: &[u8]) -> u16 {
    u16::from_be_bytes([ip[10], ip[11]])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn ipv4_checksum_verifies_after_marking(mut b in random_ipv4(), sdap: bool, qfi_byte: u8) {
        prop_assert!(ipv4_header_checksum_ok(&b));
        prop_assert_eq!(ipv4_header_checksum(&b), Some(etherparse_checksum(&b)));
        let before = b.clone();
        if sdap {
            b.insert(0, qfi_byte);
        }
        set_ce(&mut b, sdap).unwrap();
        if sdap {
            prop_assert_eq!(b.remove(0), qfi_byte);
        }
        // CE set, checksum equal to a full recomputation, and it verifies.
        prop_assert_eq!(b[1] & 0b11, 0b11);
        prop_assert_eq!(stored_checksum(&b), etherparse_checksum(&b));
        prop_assert!(ipv4_header_checksum_ok(&b));
        // Nothing else changed.
        prop_assert_eq!(b[1] & !0b11, before[1] & !0b11);
        prop_assert_eq!(&b[..1], &before[..1]);
        prop_assert_eq!(&b[2..10], &before[2..10]);
        prop_assert_eq!(&b[12..], &before[12..]);
        // Marking again changes nothing.
        let once = b.clone();
        set_ce(&mut b, false).unwrap();
        prop_assert_eq!(b, once);
    }

    /// Any 20..60-byte header, reserved flag bit included, checked against
    /// a plain RFC 1071 sum over the raw bytes.
    #[test]
    fn raw_ipv4_headers_stay_valid(
        mut fixed in any::<[u8; 20]>(), opt_words in 0usize..=10, opts in any::<[u8; 40]>()
    ) {
        fixed[0] = 0x40 | (5 + opt_words as u8);
        let mut b = fixed.to_vec();
        b.extend_from_slice(&opts[..opt_words * 4]);
        b[10..12].copy_from_slice(&[0, 0]);
        let sum = inet_checksum(&b);
        b[10..12].copy_from_slice(&sum.to_be_bytes());
        prop_assert!(ipv4_header_checksum_ok(&b));
        prop_assert_eq!(ipv4_header_checksum(&b), Some(sum));
        let was_ce = b[1] & 0b11 == 0b11;
        set_ce(&mut b, false).unwrap();
        prop_assert!(ipv4_header_checksum_ok(&b));
        if !was_ce {
            let stored = u16::from_be_bytes([b[10], b[11]]);
            b[10..12].copy_from_slice(&[0, 0]);
            prop_assert_eq!(stored, inet_checksum(&b));
        }
    }

    #[test]
    fn ipv6_marking_sets_only_the_ecn_bits(
        ip in ipv6_spec(), sport: u16, dport: u16, data in payload(), sdap: bool, qfi_byte: u8
    ) {
        let mut b = build_ipv6_udp(&ip, sport, dport, &data).unwrap();
        let before = b.clone();
        if sdap {
            b.insert(0, qfi_byte);
        }
        set_ce(&mut b, sdap).unwrap();
        if sdap {
            prop_assert_eq!(b.remove(0), qfi_byte);
        }
        // Traffic class = octet 0 low nibble : octet 1 high nibble.
        let tc = ((b[0] & 0x0f) << 4) | (b[1] >> 4);
        prop_assert_eq!(tc & 0b11, 0b11);
        prop_assert_eq!(tc >> 2, ip.dscp.0);
        let mut diff: Vec<usize> = Vec::new();
        for (i, (x, y)) in before.iter().zip(&b).enumerate() {
            if x != y {
                diff.push(i);
            }
        }
        prop_assert!(diff.is_empty() || diff == vec![1]);
        prop_assert_eq!(b[1] & !0b0011_0000, before[1] & !0b0011_0000);
        let h = parse(&b, false).unwrap();
        prop_assert_eq!(h.ecn, Ecn::Ce);
        prop_assert_eq!(h, Headers { ecn: Ecn::Ce, ..parse(&before, false).unwrap() });
    }

    #[test]
    fn marked_ipv4_packets_reparse_as_ce_with_valid_transport(
        ip in ipv4_spec(), tcp in tcp_spec(), data in payload(), sdap: bool,
    ) {
        let mut b = build_ipv4_tcp(&ip, &tcp, &data).unwrap();
        if sdap {
            b = with_sdap(SdapDlHeader::from_byte(9), &b);
        }
        let h = parse(&b, sdap).unwrap();
        set_ce(&mut b, sdap).unwrap();
        prop_assert_eq!(parse(&b, sdap).unwrap(), Headers { ecn: Ecn::Ce, ..h });
        prop_assert!(ipv4_header_checksum_ok(&b[usize::from(sdap)..]));
    }
}

#[test]
fn already_ce_packets_are_left_unchanged_and_valid() {
    let mut ip = Ipv4Spec::new(v4(10, 0, 0, 1), v4(10, 0, 0, 2));
    ip.ecn = Ecn::Ce;
    let b = build_ipv4_udp(&ip, 1000, 2000, b"hello").unwrap();
    let mut m = b.clone();
    set_ce(&mut m, false).unwrap();
    assert_eq!(m, b);
    assert!(ipv4_header_checksum_ok(&m));

    // Even a CE header whose checksum is stored in the non-canonical
    // 0xFFFF form (it still verifies) is not rewritten.
    let mut odd = b.clone();
    // Pick the identification so the canonical checksum is 0x0000.
    let id = (0..=u16::MAX)
        .find(|&id| {
            odd[4..6].copy_from_slice(&id.to_be_bytes());
            ipv4_header_checksum(&odd) == Some(0)
        })
        .expect("some identification gives checksum 0");
    odd[4..6].copy_from_slice(&id.to_be_bytes());
    odd[10..12].copy_from_slice(&0xffffu16.to_be_bytes());
    assert!(ipv4_header_checksum_ok(&odd));
    let mut m = odd.clone();
    set_ce(&mut m, false).unwrap();
    assert_eq!(m, odd);

    let mut ip6 = Ipv6Spec::new(v6(1), v6(2));
    ip6.ecn = Ecn::Ce;
    let b6 = build_ipv6_udp(&ip6, 1, 2, b"x").unwrap();
    let mut m6 = b6.clone();
    set_ce(&mut m6, false).unwrap();
    assert_eq!(m6, b6);
}

/// RFC 1624 sec. 3/4: when the new one's complement sum is all ones, the
/// new checksum is 0x0000 (what a full recomputation gives), not the 0xFFFF
/// RFC 1141's incremental formula produced.
#[test]
fn rfc1624_corner_case_gives_0x0000_like_full_recomputation() {
    let mut ip = Ipv4Spec::new(v4(192, 0, 2, 1), v4(198, 51, 100, 7));
    ip.ecn = Ecn::Ect0;
    let mut b = build_ipv4_udp(&ip, 5000, 6000, &[1, 2, 3]).unwrap();
    // Choose the identification so that, after marking, the header's words
    // sum to 0xFFFF: its correct checksum is then 0x0000.
    let id = (0..=u16::MAX)
        .find(|&id| {
            let mut t = b.clone();
            t[4..6].copy_from_slice(&id.to_be_bytes());
            t[1] |= 0b11;
            ipv4_header_checksum(&t) == Some(0)
        })
        .expect("exists");
    b[4..6].copy_from_slice(&id.to_be_bytes());
    let fixed = ipv4_header_checksum(&b).unwrap();
    b[10..12].copy_from_slice(&fixed.to_be_bytes());
    assert!(ipv4_header_checksum_ok(&b));
    assert_ne!(fixed, 0);

    set_ce(&mut b, false).unwrap();
    assert_eq!(stored_checksum(&b), 0x0000);
    assert_eq!(etherparse_checksum(&b), 0x0000);
    assert!(ipv4_header_checksum_ok(&b));
    assert_eq!(parse(&b, false).unwrap().ecn, Ecn::Ce);

    // And from the other side: a header whose checksum before marking is
    // 0x0000 marks to the recomputed value.
    let mut c = build_ipv4_udp(&ip, 5000, 6000, &[1, 2, 3]).unwrap();
    let id = (0..=u16::MAX)
        .find(|&id| {
            c[4..6].copy_from_slice(&id.to_be_bytes());
            ipv4_header_checksum(&c) == Some(0)
        })
        .expect("exists");
    c[4..6].copy_from_slice(&id.to_be_bytes());
    c[10..12].copy_from_slice(&[0, 0]);
    assert!(ipv4_header_checksum_ok(&c));
    set_ce(&mut c, false).unwrap();
    assert_eq!(stored_checksum(&c), etherparse_checksum(&c));
    assert!(ipv4_header_checksum_ok(&c));
}

#[test]
fn sdap_offset_is_respected() {
    let mut ip = Ipv4Spec::new(v4(10, 0, 0, 1), v4(10, 0, 0, 2));
    ip.ecn = Ecn::Ect1;
    let ipb = build_ipv4_udp(&ip, 1, 2, b"payload").unwrap();
    // An SDAP octet that looks like an IPv6 version nibble must not be
    // taken for the IP header.
    let mut b = with_sdap(SdapDlHeader::from_byte(0x6a), &ipb);
    set_ce(&mut b, true).unwrap();
    assert_eq!(b[0], 0x6a);
    assert_eq!(b[2] & 0b11, 0b11);
    assert!(ipv4_header_checksum_ok(&b[1..]));
    assert_eq!(parse(&b, true).unwrap().ecn, Ecn::Ce);
}

#[test]
fn set_ce_rejects_short_or_foreign_bytes_without_touching_them() {
    for (bytes, sdap) in [
        (vec![], false),
        (vec![], true),
        (vec![0x01], true),
        (vec![0x45; 19], false),
        (vec![0x60; 39], false),
        (vec![0x00, 0x60], true),
        (vec![0x20; 60], false),
    ] {
        let mut m = bytes.clone();
        assert!(set_ce(&mut m, sdap).is_err(), "{bytes:?}");
        assert_eq!(m, bytes);
    }
}

#[test]
fn checksum_helpers_reject_non_ipv4() {
    assert!(!ipv4_header_checksum_ok(&[]));
    assert!(!ipv4_header_checksum_ok(&[0x45; 10]));
    assert!(!ipv4_header_checksum_ok(&[0x44; 20]));
    assert_eq!(ipv4_header_checksum(&[0x60; 40]), None);
    let hdr =
        Ipv4Header::new(0, 64, etherparse::IpNumber::UDP, [1, 2, 3, 4], [5, 6, 7, 8]).unwrap();
    let mut b = hdr.to_bytes().to_vec();
    assert!(!ipv4_header_checksum_ok(&b) || hdr.calc_header_checksum() == 0);
    b[10..12].copy_from_slice(&hdr.calc_header_checksum().to_be_bytes());
    assert!(ipv4_header_checksum_ok(&b));
    assert_eq!(inet_checksum(&b), 0);
}
