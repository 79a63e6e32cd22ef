//! In-place ECN marking and the IPv4 header checksum.
//!
//! - RFC 3168 sec. 5: the ECN field is the two low bits of the IPv4 TOS
//!   octet / IPv6 Traffic Class; a router signals congestion to an
//!   ECN-capable transport by setting it to CE (`11`) instead of dropping.
//! - RFC 791 sec. 3.1: the IPv4 header checksum is "the 16 bit one's
//!   complement of the one's complement sum of all 16 bit words in the
//!   header". IPv6 (RFC 8200) has no header checksum, and the ECN bits are
//!   outside every transport checksum's pseudo-header, so only IPv4 needs a
//!   fix-up.
//! - RFC 1624 sec. 3, eqn. 3: `HC' = ~(~HC + ~m + m')` updates the checksum
//!   when one 16-bit word changes from `m` to `m'`. Unlike RFC 1141's
//!   `HC' = HC + m + ~m'`, it gives the same result as a full recomputation
//!   in the corner case where the new sum is one's complement zero: the
//!   checksum becomes `0x0000`, never `0xFFFF` (RFC 1624 sec. 4 works the
//!   example `HC = 0xDD2F, m = 0x5555, m' = 0x3285` and gets `0x0000`; the
//!   tests replay it).

use crate::WireError;

/// One's complement sum of 16-bit big-endian words with end-around carry
/// (RFC 1071 sec. 1). An odd trailing octet is padded with zero.
fn ones_complement_sum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    let mut chunks = bytes.chunks_exact(2);
    for w in &mut chunks {
        sum += u32::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [last] = chunks.remainder() {
        sum += u32::from(*last) << 8;
    }
    fold(sum)
}

fn fold(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

/// RFC 1624 eqn. 3: the header checksum after one 16-bit word of the header
/// changed from `old` to `new`.
pub(crate) fn checksum_update(hc: u16, old: u16, new: u16) -> u16 {
    !fold(u32::from(!hc) + u32::from(!old) + u32::from(new))
}

/// The IPv4 header checksum (RFC 791) the header at the start of `ip` should
/// carry, computed from scratch over its IHL words with the checksum field
/// taken as zero. `None` if `ip` does not start with a complete IPv4 header.
pub fn ipv4_header_checksum(ip: &[u8]) -> Option<u16> {
    let header = ipv4_header(ip)?;
    let sum = fold(
        u32::from(ones_complement_sum(&header[..10]))
            + u32::from(ones_complement_sum(&header[12..])),
    );
    Some(!sum)
}

/// Whether the IPv4 header at the start of `ip` (an IP packet, no SDAP
/// header) verifies: the one's complement sum over the whole header,
/// checksum included, is all ones (RFC 1071 sec. 1). False for anything
/// that is not a complete IPv4 header.
pub fn ipv4_header_checksum_ok(ip: &[u8]) -> bool {
    ipv4_header(ip).is_some_and(|h| ones_complement_sum(h) == 0xffff)
}

fn ipv4_header(ip: &[u8]) -> Option<&[u8]> {
    let first = *ip.first()?;
    let ihl = usize::from(first & 0x0f) * 4;
    if first >> 4 != 4 || ihl < 20 {
        return None;
    }
    ip.get(..ihl)
}

/// Sets the ECN field to CE in the IP header of `bytes` (after the 1-octet
/// SDAP header if `sdap_header`), in place, updating the IPv4 header
/// checksum incrementally (RFC 1624 eqn. 3). Nothing but the ECN bits and
/// the IPv4 checksum changes; a packet already CE is left byte-for-byte
/// unchanged. Errors (and changes nothing) if the bytes are too short to
/// hold the IP header's fixed part or are not IPv4/IPv6.
///
/// Whether the packet may be marked (it must be ECN-capable, RFC 3168
/// sec. 5) is the caller's decision: this edits whatever it is given.
pub fn set_ce(bytes: &mut [u8], sdap_header: bool) -> Result<(), WireError> {
    let ip = if sdap_header {
        bytes
            .get_mut(1..)
            .ok_or(WireError::Truncated("sdap header"))?
    } else {
        bytes
    };
    let first = *ip.first().ok_or(WireError::Truncated("ip header"))?;
    match first >> 4 {
        4 => {
            if ip.len() < 20 {
                return Err(WireError::Truncated("ipv4 header"));
            }
            if ip[1] & 0b11 == 0b11 {
                return Ok(());
            }
            // The TOS octet is the low half of the header's first word.
            let old = u16::from_be_bytes([ip[0], ip[1]]);
            ip[1] |= 0b11;
            let new = u16::from_be_bytes([ip[0], ip[1]]);
            let hc = u16::from_be_bytes([ip[10], ip[11]]);
            ip[10..12].copy_from_slice(&checksum_update(hc, old, new).to_be_bytes());
            Ok(())
        }
        6 => {
            if ip.len() < 40 {
                return Err(WireError::Truncated("ipv6 header"));
            }
            // Traffic class spans the low nibble of octet 0 and the high
            // nibble of octet 1; ECN is its two low bits = bits 5..4 of
            // octet 1.
            ip[1] |= 0b0011_0000;
            Ok(())
        }
        v => Err(WireError::BadVersion(v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1624_section4_example_gives_plus_zero() {
        // RFC 1624 sec. 4: m = 0x5555 -> m' = 0x3285, other words sum to
        // 0xCD7A, so HC = ~(0xCD7A + 0x5555) = 0xDD2F; recomputing from
        // scratch gives ~(0xCD7A + 0x3285) = ~0xFFFF = 0x0000.
        assert_eq!(!fold(0xcd7a + 0x5555), 0xdd2f);
        assert_eq!(checksum_update(0xdd2f, 0x5555, 0x3285), 0x0000);
        // RFC 1141's eqn. 2 (HC + m + ~m') would have produced 0xFFFF.
        assert_eq!(fold(0xdd2f + 0x5555 + u32::from(!0x3285u16)), 0xffff);
    }

    #[test]
    fn ones_complement_sum_matches_rfc1071_example() {
        // RFC 1071 sec. 3: 00 01 f2 03 f4 f5 f6 f7 sums to 0xddf2.
        assert_eq!(
            ones_complement_sum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]),
            0xddf2
        );
    }

    #[test]
    fn update_of_unchanged_word_keeps_checksum() {
        for hc in [0x0000u16, 0x1234, 0xfffe] {
            for m in [0x0000u16, 0x4500, 0xffff] {
                assert_eq!(checksum_update(hc, m, m), hc, "hc {hc:#x} m {m:#x}");
            }
        }
    }
}
