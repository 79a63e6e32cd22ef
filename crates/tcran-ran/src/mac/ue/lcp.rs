//! Logical channel prioritisation of a UE's MAC (TS 38.321 §5.4.3.1).
//!
//! Contract: each logical channel j has a priority (lower value first), a
//! prioritisedBitRate PBR_j and a bucketSizeDuration BSD_j. Its bucket
//! B_j starts at 0 when the channel is established and, before every LCP
//! run, grows by PBR_j x T (T: time since the last growth), capped at the
//! bucket size PBR_j x BSD_j (§5.4.3.1.1). A grant is then shared
//! (§5.4.3.1.3):
//!
//! 1. channels with B_j > 0, in decreasing priority, get up to B_j bytes
//!    (a channel with an infinite PBR gets all its data before any lower
//!    priority channel's PBR is met);
//! 2. B_j decreases by what step 1 gave it (the spec lets B_j go negative
//!    when an RLC SDU could not be segmented; here allocations are in
//!    bytes, so step 1 never exceeds B_j);
//! 3. what is left goes in strict decreasing priority, regardless of B_j,
//!    until the data or the grant runs out; channels of equal priority
//!    are served equally (byte by byte round, §5.4.3.1.3 "should be
//!    served equally").
//!
//! Bytes here include the RLC headers and MAC subheaders, as
//! [`crate::rlc::BufferStatus`] counts them, so the caller pulls each RLC
//! entity with exactly its share. Not modelled: the §5.4.3.1.2 selection
//! of channels by allowedSCS-List / maxPUSCH-Duration / configured grant
//! type 1 (every channel may use every grant), and the "do not segment an
//! RLC SDU that fits" hints.
//!
//! PBR is in kBps as TS 38.331 `prioritisedBitRate` writes it, 1 kB =
//! 1000 bytes; the buckets count micro-bytes so that PBR x T is exact for
//! every numerology's slot (PBR kB/s x T ns = PBR x T micro-bytes).

use tcran_core::{Duration, Instant};

/// Values TS 38.331 allows for `prioritisedBitRate` (kBps, finite ones).
pub const PBR_KBPS: [u32; 15] = [
    0, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536,
];

/// Values TS 38.331 allows for `bucketSizeDuration` (ms).
pub const BSD_MS: [u32; 9] = [5, 10, 20, 50, 100, 150, 300, 500, 1000];

/// The LCP parameters of one logical channel.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct LcpParams {
    /// 1..=16, lower value = higher priority.
    pub priority: u8,
    /// kB/s; `None`: infinity.
    pub pbr_kbps: Option<u32>,
    /// Bucket size duration in ms.
    pub bsd_ms: u32,
}

const MICRO: i64 = 1_000_000;

/// The buckets of one UE's logical channels and the LCP procedure.
#[derive(Clone, Debug)]
pub struct Lcp {
    params: Vec<LcpParams>,
    /// B_j in micro-bytes (unused for an infinite PBR).
    bucket: Vec<i64>,
    last_growth: Instant,
    /// Channel indices by priority (stable: equal priorities keep their
    /// configured order).
    order: Vec<usize>,
}

impl Lcp {
    /// Buckets empty, established at `now`.
    pub fn new(params: Vec<LcpParams>, now: Instant) -> Lcp {
        let mut order: Vec<usize> = (0..params.len()).collect();
        order.sort_by_key(|&j| params[j].priority);
        Lcp {
            bucket: vec![0; params.len()],
            params,
            last_growth: now,
            order,
        }
    }

    /// B_j in bytes (rounded toward zero), for reports and tests.
    pub fn bucket_bytes(&self, j: usize) -> i64 {
        self.bucket[j] / MICRO
    }

    /// §5.4.3.1.1: every B_j grows by PBR_j x (now - last growth), capped.
    fn grow(&mut self, now: Instant) {
        let t: Duration = now.saturating_since(self.last_growth);
        self.last_growth = self.last_growth.max(now);
        let t_ns = i64::try_from(t.as_nanos()).unwrap_or(i64::MAX);
        for (b, p) in self.bucket.iter_mut().zip(&self.params) {
            let Some(pbr) = p.pbr_kbps else { continue };
            let pbr = i64::from(pbr);
            let size = pbr * i64::from(p.bsd_ms) * 1000 * 1000;
            *b = b.saturating_add(pbr.saturating_mul(t_ns)).min(size);
        }
    }

    /// Shares `grant` bytes among the channels holding `buffers[j]` bytes
    /// at `now`; writes channel j's share to `share[j]` and returns the
    /// bytes left (padding).
    pub fn allocate(
        &mut self,
        now: Instant,
        grant: u64,
        buffers: &[u64],
        share: &mut [u64],
    ) -> u64 {
        assert_eq!(buffers.len(), self.params.len());
        assert_eq!(share.len(), self.params.len());
        self.grow(now);
        share.fill(0);
        let mut left = grant;
        // Step 1 and 2.
        for &j in &self.order {
            if left == 0 {
                break;
            }
            let give = match self.params[j].pbr_kbps {
                None => buffers[j],
                Some(_) if self.bucket[j] > 0 => {
                    let bj = u64::try_from(self.bucket[j].div_euclid(MICRO)).unwrap_or(0)
                        + u64::from(self.bucket[j].rem_euclid(MICRO) > 0);
                    bj.min(buffers[j])
                }
                Some(_) => 0,
            }
            .min(left);
            share[j] += give;
            left -= give;
            if self.params[j].pbr_kbps.is_some() {
                let served = i64::try_from(give)
                    .unwrap_or(i64::MAX)
                    .saturating_mul(MICRO);
                self.bucket[j] = self.bucket[j].saturating_sub(served);
            }
        }
        // Step 3: strict priority, equal priorities served equally.
        let mut k = 0;
        while k < self.order.len() && left > 0 {
            let prio = self.params[self.order[k]].priority;
            let mut end = k;
            while end < self.order.len() && self.params[self.order[end]].priority == prio {
                end += 1;
            }
            let group = &self.order[k..end];
            loop {
                let wanting: u64 = group.iter().filter(|&&j| share[j] < buffers[j]).count() as u64;
                if wanting == 0 || left == 0 {
                    break;
                }
                // An equal split, at least one byte each while bytes last.
                let each = (left / wanting).max(1);
                for &j in group {
                    if left == 0 {
                        break;
                    }
                    let give = (buffers[j] - share[j]).min(each).min(left);
                    share[j] += give;
                    left -= give;
                }
            }
            k = end;
        }
        left
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Instant {
        Instant::from_millis(x)
    }

    /// Worked by hand from §5.4.3.1: three channels established at 0,
    /// first LCP at 10 ms with a 700-byte grant.
    ///
    /// | LC | prio | PBR kB/s | BSD ms | bucket size | B_j at 10 ms | buffer |
    /// |----|------|----------|--------|-------------|--------------|--------|
    /// | A  | 1    | 16       | 5      | 80          | min(160, 80) = 80  | 500 |
    /// | B  | 2    | 32       | 50     | 1600        | 320          | 200    |
    /// | C  | 3    | 8        | 100    | 800         | 80           | 1000   |
    ///
    /// Step 1: A 80 (620 left), B min(320, 200) = 200 (420 left), C 80
    /// (340 left). Step 2: B_A = 0, B_B = 120, B_C = 0. Step 3: A takes its
    /// remaining 420 but only 340 are left. Shares: A 420, B 200, C 80;
    /// strict priority alone would have starved C (A 500, B 200, C 0).
    /// 1 ms later the buckets are A 16, B 152, C 8.
    #[test]
    fn lcp_worked_example_from_the_clause() {
        let p = |priority, pbr, bsd| LcpParams {
            priority,
            pbr_kbps: Some(pbr),
            bsd_ms: bsd,
        };
        let mut lcp = Lcp::new(vec![p(1, 16, 5), p(2, 32, 50), p(3, 8, 100)], ms(0));
        let mut share = [0; 3];
        let left = lcp.allocate(ms(10), 700, &[500, 200, 1000], &mut share);
        assert_eq!(share, [420, 200, 80]);
        assert_eq!(left, 0);
        assert_eq!(
            [
                lcp.bucket_bytes(0),
                lcp.bucket_bytes(1),
                lcp.bucket_bytes(2)
            ],
            [0, 120, 0]
        );
        let left = lcp.allocate(ms(11), 0, &[80, 0, 920], &mut share);
        assert_eq!(left, 0);
        assert_eq!(
            [
                lcp.bucket_bytes(0),
                lcp.bucket_bytes(1),
                lcp.bucket_bytes(2)
            ],
            [16, 152, 8]
        );
    }

    #[test]
    fn an_infinite_pbr_is_served_whole_before_lower_priorities_get_their_pbr() {
        let mut lcp = Lcp::new(
            vec![
                LcpParams {
                    priority: 1,
                    pbr_kbps: None,
                    bsd_ms: 5,
                },
                LcpParams {
                    priority: 2,
                    pbr_kbps: Some(64),
                    bsd_ms: 100,
                },
            ],
            ms(0),
        );
        let mut share = [0; 2];
        // B_2 = 64 x 10 = 640 at 10 ms; the first channel takes 900 first.
        let left = lcp.allocate(ms(10), 1000, &[900, 5000], &mut share);
        assert_eq!(share, [900, 100]);
        assert_eq!(left, 0);
    }

    #[test]
    fn a_grant_larger_than_the_data_leaves_padding() {
        let mut lcp = Lcp::new(
            vec![LcpParams {
                priority: 5,
                pbr_kbps: Some(0),
                bsd_ms: 5,
            }],
            ms(0),
        );
        let mut share = [0];
        assert_eq!(lcp.allocate(ms(1), 300, &[120], &mut share), 180);
        assert_eq!(share, [120]);
    }

    #[test]
    fn equal_priorities_share_equally() {
        let p = LcpParams {
            priority: 3,
            pbr_kbps: Some(0),
            bsd_ms: 5,
        };
        let mut lcp = Lcp::new(vec![p, p, p], ms(0));
        let mut share = [0; 3];
        let left = lcp.allocate(ms(1), 301, &[50, 1000, 1000], &mut share);
        assert_eq!(left, 0);
        assert_eq!(share[0], 50);
        assert!(share[1].abs_diff(share[2]) <= 1, "{share:?}");
    }

    #[test]
    fn buckets_are_exact_at_every_numerology() {
        // 8 kB/s over 125 µs (µ = 3) is exactly 1 byte.
        let mut lcp = Lcp::new(
            vec![LcpParams {
                priority: 1,
                pbr_kbps: Some(8),
                bsd_ms: 1000,
            }],
            ms(0),
        );
        let mut share = [0];
        for k in 1..=8u64 {
            lcp.allocate(Instant::from_micros(125 * k), 0, &[0], &mut share);
        }
        assert_eq!(lcp.bucket_bytes(0), 8);
    }

    proptest::proptest! {
        // Nothing is invented or lost: shares never exceed the buffers, and
        // shares + padding = grant.
        #[test]
        fn shares_conserve_the_grant(
            grant in 0u64..100_000,
            bufs in proptest::collection::vec(0u64..20_000, 1..6),
            prios in proptest::collection::vec(1u8..=16, 6),
            pbrs in proptest::collection::vec(0usize..16, 6),
            t in 0u64..2000,
        ) {
            let params: Vec<LcpParams> = (0..bufs.len())
                .map(|j| LcpParams {
                    priority: prios[j],
                    pbr_kbps: PBR_KBPS.get(pbrs[j]).copied(),
                    bsd_ms: 20,
                })
                .collect();
            let mut lcp = Lcp::new(params, ms(0));
            let mut share = vec![0; bufs.len()];
            let left = lcp.allocate(ms(t), grant, &bufs, &mut share);
            proptest::prop_assert_eq!(share.iter().sum::<u64>() + left, grant);
            for j in 0..bufs.len() {
                proptest::prop_assert!(share[j] <= bufs[j]);
            }
            // Padding only when every buffer is served whole.
            if left > 0 {
                proptest::prop_assert_eq!(&share, &bufs);
            }
        }
    }
}
