//! # tcran-wire: real packet bytes
//!
//! Parsing of IPv4/IPv6 with TCP/UDP/ICMP (optionally behind the 1-byte
//! SDAP data PDU header, TS 37.324 sec. 6.2.2) into [`tcran_core::Packet`]
//! metadata, and in-place ECN CE marking with the IPv4 header checksum
//! updated incrementally (RFC 1624).

/// Why bytes could not be read or edited.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("packet truncated: {0}")]
    Truncated(&'static str),
    #[error("not an IPv4 or IPv6 packet (version {0})")]
    BadVersion(u8),
}

/// Sets the ECN field to CE in the IP header of `bytes` (after the SDAP
/// header if `sdap_header`), fixing the IPv4 header checksum.
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
            let old = u16::from_be_bytes([ip[0], ip[1]]);
            ip[1] |= 0b11;
            let new = u16::from_be_bytes([ip[0], ip[1]]);
            // RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m')
            let hc = u16::from_be_bytes([ip[10], ip[11]]);
            let mut sum = (!hc as u32) + (!old as u32) + new as u32;
            while sum > 0xffff {
                sum = (sum & 0xffff) + (sum >> 16);
            }
            let hc2 = !(sum as u16);
            ip[10..12].copy_from_slice(&hc2.to_be_bytes());
            Ok(())
        }
        6 => {
            if ip.len() < 40 {
                return Err(WireError::Truncated("ipv6 header"));
            }
            // Traffic class spans the low nibble of byte 0 and the high nibble
            // of byte 1; ECN is its two low bits = bits 5..4 of byte 1.
            ip[1] |= 0b0011_0000;
            Ok(())
        }
        v => Err(WireError::BadVersion(v)),
    }
}
