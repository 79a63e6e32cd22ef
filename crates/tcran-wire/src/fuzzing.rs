//! The body of the `parse_packet` fuzz target (fuzz/fuzz_targets), kept here
//! so stable `cargo test` runs it too (tests/integration/fuzz_parse.rs: random bytes and
//! the seed corpus).

use crate::{ipv4_header_checksum, ipv4_header_checksum_ok, packet_from_bytes, parse, set_ce};
use tcran_core::{Ecn, Instant, PacketId};

/// Parses `data` with and without an SDAP header and checks the invariants
/// of parsing and marking. Panics (the fuzzer's crash signal) only if one
/// fails:
///
/// - [`packet_from_bytes`] agrees with [`parse`]: the metadata of a parsed
///   packet, or `malformed` with `len = data.len()` for one that did not.
/// - The parsed length fits in the bytes.
/// - For a parsed packet, [`set_ce`] succeeds, the result parses to the same
///   headers with ECN = CE, only the ECN bits (and the IPv4 checksum) changed,
///   a verifying IPv4 checksum still verifies and, if the header changed,
///   equals a full recomputation, and marking again changes nothing.
/// - For any input, [`set_ce`] does not panic.
pub fn fuzz_parse(data: &[u8]) {
    for sdap in [false, true] {
        let parsed = parse(data, sdap);
        let packet = packet_from_bytes(PacketId(1), data.into(), sdap, Instant::ZERO);
        assert_eq!(packet.payload.as_deref(), Some(data));
        assert_eq!(packet.sdap_header, sdap);
        let mut marked = data.to_vec();
        let mark = set_ce(&mut marked, sdap);
        let Ok(h) = parsed else {
            assert!(packet.malformed);
            assert_eq!(packet.len as usize, data.len());
            continue;
        };
        assert!(!packet.malformed);
        assert_eq!(
            (
                packet.len,
                packet.tuple,
                packet.dscp,
                packet.ecn,
                packet.qfi,
                packet.l4
            ),
            (h.len, h.tuple, h.dscp, h.ecn, h.qfi, h.l4)
        );
        let off = usize::from(sdap);
        assert!(h.len as usize <= data.len() - off, "len beyond the bytes");
        assert!(h.dscp.0 < 64);
        if let Some(s) = h.sdap {
            assert_eq!(s.to_byte(), data[0]);
        }

        mark.expect("a parsed packet can be marked");
        let after = parse(&marked, sdap).expect("a marked packet parses");
        assert_eq!(after.ecn, Ecn::Ce);
        assert_eq!(after, crate::Headers { ecn: Ecn::Ce, ..h });
        let ip_before = &data[off..];
        let ip_after = &marked[off..];
        let v4 = ip_before[0] >> 4 == 4;
        for (i, (a, b)) in ip_before.iter().zip(ip_after).enumerate() {
            let allowed = match i {
                1 if v4 => 0b0000_0011,
                1 => 0b0011_0000,
                10 | 11 if v4 => 0xff,
                _ => 0,
            };
            assert_eq!(
                a & !allowed,
                b & !allowed,
                "octet {i} changed beyond ECN/checksum"
            );
        }
        assert_eq!(data[..off], marked[..off], "sdap header changed");
        if v4 && ipv4_header_checksum_ok(ip_before) {
            assert!(
                ipv4_header_checksum_ok(ip_after),
                "checksum broken by marking"
            );
            if h.ecn != Ecn::Ce {
                // RFC 1624 eqn. 3 yields exactly what a full recomputation
                // gives, even where the old checksum was the non-canonical
                // 0xFFFF form of zero (an unchanged CE packet keeps it).
                let stored = u16::from_be_bytes([ip_after[10], ip_after[11]]);
                assert_eq!(Some(stored), ipv4_header_checksum(ip_after));
            }
        }
        if h.ecn == Ecn::Ce {
            assert_eq!(marked, data, "marking a CE packet changed it");
        }
        let mut again = marked.clone();
        set_ce(&mut again, sdap).expect("marks twice");
        assert_eq!(again, marked, "marking is not idempotent");
    }
}
