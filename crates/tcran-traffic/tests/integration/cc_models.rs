//! Congestion-control oracles: RFC 9438 CUBIC curve, CUBIC/BBR/DCTCP/Prague
//! behaviour on a bottleneck (algorithms.md §3.2–§3.6).

use crate::common;

use common::{percentile, TcpPair};
use tcran_core::{BitRate, Duration, Instant};
use tcran_traffic::cc::bbr::BbrMode;
use tcran_traffic::cc::cubic::{cubic_k, w_cubic, Cubic};
use tcran_traffic::cc::{
    AckEvent, AnyCongestionControl, CcKind, CcState, CongestionControl, CongestionEvent,
};
use tcran_traffic::tcp::TcpConfig;

const RATE: BitRate = BitRate::from_mbps(20);
const RTT: Duration = Duration::from_millis(40);
/// 20 Mbit/s · 40 ms.
const BDP: u64 = 100_000;

fn ack(now: Instant, acked: u64, rtt: Duration) -> AckEvent {
    AckEvent {
        now,
        acked,
        ece_acked: 0,
        ece: false,
        rtt: Some(rtt),
        srtt: Some(rtt),
        min_rtt: Some(rtt),
        prior_inflight: 0,
        inflight: 0,
        delivered: 0,
        round_start: false,
        rate: None,
        newly_lost: 0,
        in_reduction: false,
        is_cwnd_limited: true,
    }
}

#[test]
fn cubic_k_for_wmax_100_is_4_2172_s() {
    // K = ∛(W_max(1 − β)/C) = ∛(100·0.3/0.4) = ∛75.
    assert!((cubic_k(100.0, 70.0) - 4.2172).abs() < 1e-4);
    assert_eq!(cubic_k(100.0, 120.0), 0.0);
    assert!((w_cubic(cubic_k(100.0, 70.0), cubic_k(100.0, 70.0), 100.0) - 100.0).abs() < 1e-12);
}

#[test]
fn cubic_window_follows_w_cubic_after_a_scripted_loss() {
    // W_max = 100 segments, one loss, then ACKs of one segment each, spread
    // evenly over a constant 100 ms RTT (cwnd ACKs per RTT).
    let mss = 1000;
    let rtt = Duration::from_millis(100);
    let mut cc = Cubic::new(false);
    let mut s = CcState {
        cwnd: 100 * mss,
        ssthresh: 50 * mss,
        mss,
    };
    let t0 = Instant::from_secs_f64(10.0);
    cc.on_congestion_event(
        &mut s,
        CongestionEvent::Loss {
            flight: 100 * mss,
            inflight: 100 * mss,
        },
        t0,
    );
    assert_eq!(s.cwnd, 70 * mss);
    assert_eq!(s.ssthresh, 70 * mss);
    let mut now = t0;
    let mut per_rtt = Vec::new();
    let mut epoch = None;
    // RFC 9438 §4.3 Reno estimate: +α_cubic segments per RTT, α = 3(1 − β)/(1 + β)
    // until it reaches cwnd_prior = 100, then +1 per RTT.
    let mut w_est = 70.0;
    for _round in 0..80 {
        let w = s.cwnd / mss;
        let start_cwnd = s.cwnd as f64 / mss as f64;
        for _ in 0..w {
            now += Duration::from_nanos(rtt.as_nanos() / w);
            cc.on_ack(&mut s, &ack(now, mss, rtt));
        }
        w_est += if w_est >= 100.0 { 1.0 } else { 3.0 * 0.3 / 1.7 };
        let e = *epoch.get_or_insert(cc.epoch_start().unwrap());
        let t = now.saturating_since(e).as_secs_f64();
        let cwnd = s.cwnd as f64 / mss as f64;
        // RFC 9438 §4.4: after an RTT the window reaches W_cubic(t + RTT)
        // evaluated an RTT earlier, i.e. W_cubic(t) now (±1.5 segment), unless
        // the Reno-friendly estimate is larger (§4.3).
        let target = w_cubic(t, cc.k(), 100.0).min(1.5 * start_cwnd).max(w_est);
        assert!(
            (cwnd - target).abs() < 1.5,
            "t {t:.2}: cwnd {cwnd:.2} vs W_cubic {target:.2}"
        );
        per_rtt.push((t, cwnd - start_cwnd));
    }
    assert!((cc.k() - 4.2172).abs() < 1e-3);
    assert_eq!(cc.w_max(), 100.0);
    // Concave before K (growth per RTT shrinking), convex after (growing).
    let before: Vec<f64> = per_rtt
        .iter()
        .filter(|(t, _)| *t > 0.5 && *t < 3.8)
        .map(|x| x.1)
        .collect();
    let after: Vec<f64> = per_rtt
        .iter()
        .filter(|(t, _)| *t > 6.5 && *t < 8.0)
        .map(|x| x.1)
        .collect();
    assert!(before.first().unwrap() > before.last().unwrap());
    assert!(after.first().unwrap() < after.last().unwrap());
    assert!(before.windows(2).all(|w| w[1] <= w[0] + 0.35), "{before:?}");
    assert!(after.windows(2).all(|w| w[1] >= w[0] - 0.35), "{after:?}");
}

#[test]
fn cubic_fast_convergence_lowers_w_max() {
    let mut cc = Cubic::new(false);
    let mss = 1000;
    let mut s = CcState {
        cwnd: 100 * mss,
        ssthresh: u64::MAX,
        mss,
    };
    let ev = CongestionEvent::Loss {
        flight: 0,
        inflight: 0,
    };
    cc.on_congestion_event(&mut s, ev, Instant::ZERO);
    assert_eq!(cc.w_max(), 100.0);
    // Second loss at 80 < W_max: W_max = 80·(1 + 0.7)/2 = 68.
    s.cwnd = 80 * mss;
    cc.on_congestion_event(&mut s, ev, Instant::ZERO);
    assert!((cc.w_max() - 68.0).abs() < 1e-9);
}

fn cfg(cc: CcKind) -> TcpConfig {
    TcpConfig {
        cc,
        ..TcpConfig::default()
    }
}

/// Queueing delays (ms) of packets enqueued after `from`.
fn queue_delays_ms(pair: &TcpPair, from: Instant) -> Vec<f64> {
    pair.fwd
        .queue_delays
        .iter()
        .filter(|(t, _)| *t >= from)
        .map(|(_, d)| d.as_millis_f64())
        .collect()
}

#[test]
fn cubic_fills_a_two_bdp_buffer_link() {
    let mut pair = TcpPair::dumbbell(&cfg(CcKind::Cubic), RATE, RTT, 2 * BDP, 1);
    pair.run_until(Instant::from_millis(30_000));
    let u = pair.utilisation();
    assert!(u >= 0.95, "utilisation {u}");
    assert!(pair.fwd.drops > 0, "a loss-based CC must fill the buffer");
    assert!(pair.sender.stats().fast_recoveries > 3);
}

#[test]
fn cubic_with_a_huge_buffer_builds_a_standing_queue_of_hundreds_of_ms() {
    let mut pair = TcpPair::dumbbell(&cfg(CcKind::Cubic), RATE, RTT, 5_000_000, 1);
    pair.run_until(Instant::from_millis(30_000));
    let q = queue_delays_ms(&pair, Instant::from_millis(20_000));
    let median = percentile(q, 0.5);
    assert!(median > 300.0, "median queueing delay {median} ms");
    assert!(pair.sender.srtt().unwrap() > Duration::from_millis(300));
}

#[test]
fn bbr_fills_the_link_with_a_small_queue_and_probes_rtt_every_10s() {
    let mut pair = TcpPair::dumbbell(&cfg(CcKind::Bbr), RATE, RTT, 5_000_000, 3);
    let mut probe_rtt: Vec<(Instant, Instant, u64)> = Vec::new();
    let mut inside: Option<(Instant, u64)> = None;
    pair.run_until_with(Instant::from_millis(25_000), |p| {
        let AnyCongestionControl::Bbr(b) = p.sender.congestion_control() else {
            unreachable!()
        };
        match (b.mode() == BbrMode::ProbeRtt, inside) {
            (true, None) => inside = Some((p.now, p.sender.cwnd())),
            (true, Some((t, c))) => inside = Some((t, c.max(p.sender.cwnd()))),
            (false, Some((t, c))) => {
                probe_rtt.push((t, p.now, c));
                inside = None;
            }
            (false, None) => {}
        }
    });
    let u = pair.utilisation();
    assert!(u >= 0.90, "utilisation {u}");
    let q = queue_delays_ms(&pair, Instant::from_millis(5_000));
    let median = percentile(q.clone(), 0.5);
    assert!(
        median < RTT.as_millis_f64(),
        "median queueing delay {median} ms"
    );
    assert_eq!(pair.fwd.drops, 0);
    // PROBE_RTT about every 10 s, >= 200 ms long, cwnd clamped to 4 segments.
    assert!(probe_rtt.len() >= 2, "{probe_rtt:?}");
    for (start, end, max_cwnd) in &probe_rtt {
        let d = end.saturating_since(*start);
        assert!(
            d >= Duration::from_millis(200) && d < Duration::from_millis(400),
            "{d:?}"
        );
        // The clamp applies from the first ACK in PROBE_RTT on.
        assert!(*max_cwnd <= 4 * 1448 || *max_cwnd == 0, "{max_cwnd}");
    }
    for w in probe_rtt.windows(2) {
        let gap = w[1].0.saturating_since(w[0].0).as_secs_f64();
        assert!((9.9..=10.6).contains(&gap), "PROBE_RTT spacing {gap} s");
    }
}

fn marking_run(cc: CcKind) -> (TcpPair, f64, f64) {
    let mut pair = TcpPair::dumbbell(&cfg(cc), RATE, RTT, 2_000_000, 1);
    // Step marking at K ≈ 20 packets (RFC 8257 §3.1 style threshold).
    pair.fwd.mark_above = Some(30_000);
    let from = Instant::from_millis(5_000);
    let (mut marks0, mut ect0) = (0, 0);
    let mut alphas = Vec::new();
    pair.run_until_with(Instant::from_millis(20_000), |p| {
        if p.now < from {
            marks0 = p.fwd.marks;
            ect0 = p.fwd.ect_packets;
        } else if let AnyCongestionControl::Dctcp(d) = p.sender.congestion_control() {
            alphas.push(d.alpha());
        }
    });
    let frac = (pair.fwd.marks - marks0) as f64 / (pair.fwd.ect_packets - ect0) as f64;
    let alpha = alphas.iter().sum::<f64>() / alphas.len() as f64;
    (pair, frac, alpha)
}

#[test]
fn dctcp_alpha_tracks_the_marking_fraction_without_losses() {
    let (mut pair, frac, alpha) = marking_run(CcKind::Dctcp);
    assert_eq!(pair.fwd.drops, 0);
    assert_eq!(pair.sender.stats().retransmissions, 0);
    assert!(frac > 0.01, "some marking {frac}");
    assert!(
        (alpha - frac).abs() < 0.35 * frac + 0.01,
        "alpha {alpha} vs marked {frac}"
    );
    assert!(pair.utilisation() > 0.9);
}

#[test]
fn prague_alpha_tracks_the_marking_fraction_and_uses_ect1() {
    let (mut pair, frac, alpha) = marking_run(CcKind::Prague);
    assert_eq!(pair.fwd.drops, 0);
    assert_eq!(pair.sender.stats().retransmissions, 0);
    assert!(frac > 0.01, "some marking {frac}");
    assert!(
        (alpha - frac).abs() < 0.35 * frac + 0.01,
        "alpha {alpha} vs marked {frac}"
    );
    assert!(pair.utilisation() > 0.9);
    // Queue stays near K: 30 kB is 12 ms at 20 Mbit/s.
    let q = queue_delays_ms(&pair, Instant::from_millis(5_000));
    assert!(percentile(q, 0.99) < 30.0);
    assert_eq!(
        pair.fwd.ect1_packets, pair.fwd.ect_packets,
        "all data is ECT(1)"
    );
}
