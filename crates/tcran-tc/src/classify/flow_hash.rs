//! Stochastic flow hashing (SFQ, McKenney 1990; fq_codel, RFC 8290 sec. 4.1
//! and Linux `fq_codel_classify`), the classifier of TC-RAN's FQ-CoDel
//! composition (paper-tc-ran.txt sec. IV-B (i)).
//!
//! Contract:
//! - The 5-tuple (source and destination address, source and destination
//!   port, protocol) is hashed with SipHash-1-3 keyed by the `perturbation`
//!   seed; the same tuple and seed always give the same queue, on every
//!   platform (the input bytes are laid out explicitly, addresses as 16-byte
//!   IPv6 or IPv4-mapped IPv6, ports big-endian).
//! - The low 32 bits of the hash are mapped onto `buckets` queues with
//!   Linux's `reciprocal_scale`: `bucket = (hash32 * buckets) >> 32`, a
//!   multiply instead of a division, uniform for any `buckets`.
//! - Queue ids are `first_queue .. first_queue + buckets`.
//! - Different flows may share a bucket (that is the "stochastic" part);
//!   changing `perturbation` reshuffles which ones do. Unlike Linux (random
//!   per qdisc) the default seed is fixed, 0, for reproducible runs (ns-3's
//!   `Perturbation` default is 0 too).
//!
//! Cost: one SipHash-1-3 of 37 bytes (five compression rounds) plus a
//! multiply; no allocation.

use siphasher::sip::SipHasher13;
use tcran_core::{FiveTuple, QueueId};

/// The built classifier.
#[derive(Debug, Clone)]
pub struct FlowHash {
    hasher: SipHasher13,
    first: u16,
    buckets: u32,
}

/// SplitMix64 finaliser: the second SipHash key derived from the seed, so a
/// single `u64` seed fills the 128-bit key.
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Linux `reciprocal_scale(val, ep_ro)`: maps a uniform `u32` onto
/// `0..ep_ro` without a division.
#[inline]
pub fn reciprocal_scale(val: u32, ep_ro: u32) -> u32 {
    ((val as u64 * ep_ro as u64) >> 32) as u32
}

impl FlowHash {
    /// `buckets >= 1` and `first + buckets - 1 <= u16::MAX` are checked by
    /// the config.
    pub fn new(first_queue: QueueId, buckets: u32, perturbation: u64) -> FlowHash {
        debug_assert!(buckets >= 1 && first_queue.0 as u32 + buckets - 1 <= u16::MAX as u32);
        FlowHash {
            hasher: SipHasher13::new_with_keys(perturbation, splitmix64(perturbation)),
            first: first_queue.0,
            buckets,
        }
    }

    /// The keyed 64-bit hash of a 5-tuple.
    #[inline]
    pub fn hash(&self, t: &FiveTuple) -> u64 {
        let mut buf = [0u8; 37];
        buf[0..16].copy_from_slice(&v6_octets(&t.src));
        buf[16..32].copy_from_slice(&v6_octets(&t.dst));
        buf[32..34].copy_from_slice(&t.sport.to_be_bytes());
        buf[34..36].copy_from_slice(&t.dport.to_be_bytes());
        buf[36] = t.proto.0;
        self.hasher.hash(&buf)
    }

    /// Bucket index `0..buckets` of a 5-tuple.
    #[inline]
    pub fn bucket(&self, t: &FiveTuple) -> u32 {
        reciprocal_scale(self.hash(t) as u32, self.buckets)
    }

    #[inline]
    pub fn classify(&self, t: &FiveTuple) -> QueueId {
        // Cannot overflow: the config checks first + buckets - 1 fits.
        QueueId(self.first + self.bucket(t) as u16)
    }
}

#[inline]
fn v6_octets(a: &std::net::IpAddr) -> [u8; 16] {
    match a {
        std::net::IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
        std::net::IpAddr::V6(v6) => v6.octets(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reciprocal_scale_matches_linux_on_its_edges() {
        assert_eq!(reciprocal_scale(0, 1024), 0);
        assert_eq!(reciprocal_scale(u32::MAX, 1024), 1023);
        assert_eq!(reciprocal_scale(1 << 31, 1024), 512);
        assert_eq!(reciprocal_scale(u32::MAX, 1), 0);
        assert_eq!(reciprocal_scale(u32::MAX, 7), 6);
    }
}
