//! Shaper tests. Oracles: ns-3 `tbf-queue-disc-test-suite.cc`
//! (algorithms.md sec. 2.5), re-expressed against the shaper alone; numbers
//! marked [derived] in algorithms.md are computed there from the TBF rule,
//! not from this implementation.

use super::*;
use proptest::prelude::*;

fn tbf(rate_bytes_per_s: u64, burst: u64, peak: Option<(u64, u64)>) -> TokenBucketShaper {
    let cfg = ShaperConfig::TokenBucket {
        rate: BitRate(rate_bytes_per_s * 8),
        burst: Some(ByteSize(burst)),
        peak_rate: peak.map(|(p, _)| BitRate(p * 8)),
        mtu: peak.map(|(_, m)| ByteSize(m)),
        window: default_window(),
    };
    match cfg.build().unwrap() {
        AnyShaper::TokenBucket(s) => s,
        AnyShaper::Custom(_) => unreachable!(),
    }
}

fn ms(t: u64) -> Instant {
    Instant::from_millis(t)
}

/// ns-3 TBF case 1: Burst 6000 B, Rate 6 KB/s, no peak; four 1500 B packets
/// dequeued at t = 0 leave 4500, 3000, 1500, 0 tokens.
#[test]
fn ns3_tbf_case1_tokens_after_each_dequeue_at_time_zero() {
    let mut s = tbf(6_000, 6_000, None);
    assert_eq!(s.tokens_at(Instant::ZERO), 6000.0, "bucket starts full");
    for expected in [4500.0, 3000.0, 1500.0, 0.0] {
        assert!(s.admits(1500, Instant::ZERO));
        s.on_sent(1500, Instant::ZERO);
        assert_eq!(s.tokens_at(Instant::ZERO), expected);
    }
    assert!(!s.admits(1500, Instant::ZERO));
    // 1500 B at 6 KB/s = 250 ms.
    assert_eq!(s.ready_at(1500, Instant::ZERO), ms(250));
}

/// ns-3 TBF case 2: Burst 10 000, Mtu 1000, Rate 10 KB/s, Peak 100 KB/s,
/// 1000 B packets dequeued at 0.2, 0.3, ..., 1.1 s: none blocked.
#[test]
fn ns3_tbf_case2_no_dequeue_blocked() {
    let mut s = tbf(10_000, 10_000, Some((100_000, 1000)));
    for i in 1..=10u64 {
        let t = ms((i + 1) * 100);
        assert!(s.admits(1000, t), "dequeue {i} at {t} blocked");
        s.on_sent(1000, t);
    }
    assert_eq!(s.stats().delayed, 0);
}

/// ns-3 TBF case 3: Burst 5000, Mtu 1000, Rate 5 KB/s, Peak 100 KB/s, same
/// timing: dequeues 1-9 succeed (main tokens 4000, 3500, ..., 500, 0
/// [derived]); the 10th at 1.1 s is blocked (-500 tokens) and ready at 1.2 s.
#[test]
fn ns3_tbf_case3_tenth_dequeue_blocked_until_1_2_s() {
    let mut s = tbf(5_000, 5_000, Some((100_000, 1000)));
    let mut expected = 4000.0;
    for i in 1..=9u64 {
        let t = ms((i + 1) * 100);
        assert!(s.admits(1000, t), "dequeue {i} blocked");
        s.on_sent(1000, t);
        assert_eq!(s.tokens_at(t), expected, "after dequeue {i}");
        expected -= 500.0;
    }
    let t10 = ms(1100);
    assert!(!s.admits(1000, t10));
    assert_eq!(s.tokens_at(t10), 500.0);
    assert_eq!(s.ready_at(1000, t10), ms(1200));
    assert!(!s.admits(1000, ms(1200) - Duration::from_nanos(1)));
    assert!(s.admits(1000, ms(1200)));
}

/// ns-3 TBF case 4: Burst 15 000, Mtu 1000, Rate 15 KB/s, Peak 20 KB/s,
/// attempts at 0.10, 0.14, 0.20, 0.24, ...: odd attempts succeed, even ones
/// are blocked (the peak bucket refilled only 800 B in 40 ms; 10 ms short).
#[test]
fn ns3_tbf_case4_peak_bucket_blocks_every_other_attempt() {
    let mut s = tbf(15_000, 15_000, Some((20_000, 1000)));
    for k in 0..10u64 {
        let odd = ms(100 + 100 * k);
        assert!(s.admits(1000, odd), "attempt at {odd} blocked");
        s.on_sent(1000, odd);
        let even = odd + Duration::from_millis(40);
        assert!(!s.admits(1000, even), "attempt at {even} admitted");
        assert_eq!(s.peak_tokens_at(even), Some(800.0));
        assert_eq!(s.ready_at(1000, even), even + Duration::from_millis(10));
    }
    assert_eq!(s.stats().delayed, 10);
}

#[test]
fn oversize_packet_is_delayed_until_the_bucket_is_full_never_stuck() {
    let mut s = tbf(1_000, 1_000, None);
    assert!(s.admits(1500, Instant::ZERO));
    s.on_sent(1500, Instant::ZERO);
    // Debt of 500 B + a full 1000 B bucket = 1.5 s.
    assert_eq!(s.ready_at(1500, Instant::ZERO), ms(1500));
    assert_eq!(s.ready_at(100, Instant::ZERO), ms(600));
}

#[test]
fn measured_rate_matches_the_configured_rate_under_greedy_load() {
    // 1 Mbit/s, default burst (1500 B), 100 ms window, pulled every 1 ms.
    let cfg: ShaperConfig =
        toml::from_str("kind = \"token_bucket\"\nrate = \"1Mbit/s\"\nwindow = \"100ms\"").unwrap();
    let mut s = cfg.build().unwrap();
    let mut t = Instant::ZERO;
    while t < ms(1000) {
        while s.admits(125, t) {
            s.on_sent(125, t);
        }
        t += Duration::from_millis(1);
    }
    let st = s.stats();
    assert_eq!(st.rate_bps, 1_000_000);
    assert!(
        (st.measured_bps - 1e6).abs() <= 1e4,
        "measured {}",
        st.measured_bps
    );
    assert!(st.delayed > 0);
    // Idle for two windows: the rate drops to zero.
    assert_eq!(s.stats_at(ms(1300)).measured_bps, 0.0);
}

#[test]
fn default_burst_holds_ten_ms_of_tokens_with_an_mtu_floor() {
    assert_eq!(default_burst(BitRate::from_mbps(100)), ByteSize(125_000));
    assert_eq!(default_burst(BitRate(64_000)), ByteSize(1500));
    // At 100 Mbit/s pulled once per 1 ms slot, the default bucket delivers
    // the full rate: 12 500 B per slot in 1250 B packets.
    let mut s = ShaperConfig::token_bucket(BitRate::from_mbps(100))
        .build()
        .unwrap();
    let mut sent = 0u64;
    for slot in 0..=1000u64 {
        let t = ms(slot);
        while s.admits(1250, t) {
            s.on_sent(1250, t);
            sent += 1250;
        }
    }
    // 1 s at 100 Mbit/s plus the initial burst.
    assert_eq!(sent, 12_500_000 + 125_000);
}

fn build_err(text: &str) -> String {
    match toml::from_str::<ShaperConfig>(text) {
        Err(e) => format!("parse: {e}"),
        Ok(c) => format!("build: {}", c.build().unwrap_err()),
    }
}

#[test]
fn config_errors_name_the_field() {
    assert_eq!(
        build_err("kind = \"token_bucket\"\nrate = \"0bit/s\""),
        "build: rate = 0bit/s: must be in 1bit/s..=1000Gbit/s"
    );
    assert_eq!(
        build_err("kind = \"token_bucket\"\nrate = \"1Mbit/s\"\nburst = \"0B\""),
        "build: burst = 0B: must be in 1B..=10000MB"
    );
    assert!(
        build_err("kind = \"token_bucket\"\nrate = \"10Mbit/s\"\npeak_rate = \"5Mbit/s\"")
            .starts_with("build: peak_rate = 5Mbit/s: must be greater than rate (10Mbit/s)")
    );
    assert!(
        build_err("kind = \"token_bucket\"\nrate = \"10Mbit/s\"\nmtu = \"1500B\"")
            .starts_with("build: mtu = 1500B: is the peak bucket size and needs peak_rate")
    );
    assert_eq!(
        build_err("kind = \"token_bucket\"\nrate = \"10Mbit/s\"\nwindow = \"0ms\""),
        "build: window = 0ms: must be in 1ms..=3600s"
    );
    assert!(
        build_err("kind = \"token_bucket\"\nrate = \"10Mbit/s\"\nbrust = \"1B\"")
            .contains("unknown field `brust`")
    );
    assert!(build_err("kind = \"token_bucket\"\nrate = 10").contains("rate string with a unit"));
}

/// Runs a greedy sender against a shaper: at each attempt time it sends
/// packets of the given sizes for as long as the shaper admits them.
fn greedy_run(s: &mut AnyShaper, attempts: &[(u64, Vec<u32>)]) -> Vec<(u64, u32)> {
    let mut t = 0u64;
    let mut sent = Vec::new();
    for (gap, lens) in attempts {
        t += gap;
        let now = Instant::from_nanos(t);
        for &len in lens {
            if !s.admits(len, now) {
                // `ready_at` is exact: refused one ns before, admitted at it.
                let r = s.ready_at(len, now);
                assert!(r > now);
                assert!(!s.admits(len, r - Duration::from_nanos(1)));
                assert!(s.admits(len, r));
                break;
            }
            s.on_sent(len, now);
            sent.push((t, len));
        }
    }
    sent
}

/// `bytes(t0..=t1) <= rate * (t1 - t0) + max(size, largest packet)` for every
/// pair of send times, in exact integers (bytes x 8e9 vs bit/s x ns).
fn check_bound(sent: &[(u64, u32)], rate_bps: u64, size: u64) {
    let max_len = sent.iter().map(|s| s.1 as u64).max().unwrap_or(0);
    let slack = size.max(max_len) as u128 * 8_000_000_000;
    for i in 0..sent.len() {
        let mut bytes = 0u128;
        for j in i..sent.len() {
            bytes += sent[j].1 as u128;
            let dt = (sent[j].0 - sent[i].0) as u128;
            assert!(
                bytes * 8_000_000_000 <= rate_bps as u128 * dt + slack,
                "{bytes} B sent in [{}, {}] ns exceeds rate {rate_bps} + bucket {size}",
                sent[i].0,
                sent[j].0
            );
        }
    }
}

fn attempts() -> impl Strategy<Value = Vec<(u64, Vec<u32>)>> {
    prop::collection::vec(
        (
            0u64..20_000_000,
            prop::collection::vec(prop_oneof![Just(1500u32), 40u32..1500, 1500u32..4000], 1..6),
        ),
        1..120,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn shaper_never_sends_above_rate_plus_burst(
        rate_kbps in 8u64..100_000,
        burst in 1u64..20_000,
        peak in prop::option::of((1u64..10, 100u64..3000)),
        a in attempts(),
    ) {
        let rate = rate_kbps * 1000;
        let cfg = ShaperConfig::TokenBucket {
            rate: BitRate(rate),
            burst: Some(ByteSize(burst)),
            peak_rate: peak.map(|(k, _)| BitRate(rate * (k + 1))),
            mtu: peak.map(|(_, m)| ByteSize(m)),
            window: default_window(),
        };
        let mut s = cfg.build().unwrap();
        let sent = greedy_run(&mut s, &a);
        check_bound(&sent, rate, burst);
        if let Some((k, m)) = peak {
            check_bound(&sent, rate * (k + 1), m);
        }
    }
}

#[test]
fn bound_is_tight_for_a_greedy_sender() {
    // 8 kbit/s = 1000 B/s, burst 3000 B, 1000 B packets, asked every 1 ms for
    // 10 s: exactly burst + 10 s of rate = 13 000 B.
    let mut s = ShaperConfig::TokenBucket {
        rate: BitRate(8_000),
        burst: Some(ByteSize(3000)),
        peak_rate: None,
        mtu: None,
        window: default_window(),
    }
    .build()
    .unwrap();
    let a: Vec<(u64, Vec<u32>)> = (0..=10_000)
        .map(|i| (if i == 0 { 0 } else { 1_000_000 }, vec![1000; 5]))
        .collect();
    let sent = greedy_run(&mut s, &a);
    assert_eq!(sent.iter().map(|s| s.1 as u64).sum::<u64>(), 13_000);
    check_bound(&sent, 8_000, 3000);
}

#[test]
fn shaper_and_policer_configs_round_trip_through_json_and_toml() {
    for text in [
        "kind = \"token_bucket\"\nrate = \"15Mbit/s\"",
        "kind = \"token_bucket\"\nrate = \"15Mbit/s\"\nburst = \"30kB\"\npeak_rate = \"20Mbit/s\"\nmtu = \"1500B\"\nwindow = \"100ms\"",
    ] {
        let c: ShaperConfig = toml::from_str(text).unwrap();
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(serde_json::from_str::<ShaperConfig>(&json).unwrap(), c);
        let back = toml::to_string(&c).unwrap();
        assert_eq!(toml::from_str::<ShaperConfig>(&back).unwrap(), c, "{back}");
    }
    use crate::policer::PolicerConfig;
    let text = "kind = \"token_bucket\"\nrate = \"1Mbit/s\"\nburst = \"3kB\"\naction = \"redirect\"\nredirect = 2";
    let c: PolicerConfig = toml::from_str(text).unwrap();
    let json = serde_json::to_string(&c).unwrap();
    assert_eq!(serde_json::from_str::<PolicerConfig>(&json).unwrap(), c);
    let back = toml::to_string(&c).unwrap();
    assert_eq!(toml::from_str::<PolicerConfig>(&back).unwrap(), c, "{back}");
}
