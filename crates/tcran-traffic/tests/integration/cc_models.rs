//! Congestion-control oracles: RFC 9438 CUBIC curve, CUBIC/BBR/DCTCP/Prague
//! behaviour on a bottleneck (algorithms.md §3.2–§3.6).

use crate::common;

use common::{percentile, TcpPair};
use tcran_core::rng::RngStream;
use tcran_core::{BitRate, Duration, Instant};
use tcran_traffic::cc::bbr::{Bbr, BbrMode};
use tcran_traffic::cc::cubic::{cubic_k, w_cubic, Cubic};
use tcran_traffic::cc::{
    AckEvent, AnyCongestionControl, CcKind, CcState, CongestionControl, CongestionEvent, RateSample,
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

// BBR's ACK-aggregation allowance (Linux `bbr_update_ack_aggregation`,
// `bbr_ack_aggregation_cwnd`), driven by scripted ACKs. The oracles follow
// the Linux algorithm by hand: per ACK with a valid rate sample,
// expected = floor(BtlBw · (now − epoch start)); if the epoch's ACKed data
// is <= expected, or would reach 2^20 segments, the epoch restarts at this
// ACK (expected = 0); excess = epoch's ACKed − expected, capped at the
// cwnd, into a max filter of two 5-round slots; allowance = min(max excess,
// BtlBw · 100 ms) in segments once the full bandwidth was found, added to
// the BDP before the quantization budget. Where an epoch goes on, the ACK
// comes 0.5 us off the millisecond grid (`us`) so that BtlBw · epoch is
// never an integer and its floor has no floating-point ambiguity.

const AGG_MSS: u64 = 1000;
const AGG_RTT: Duration = Duration::from_millis(10);

/// An ACK of `acked` bytes at `now` carrying a valid, not app-limited
/// rate sample of `bw` bytes/s over one min RTT (10 ms), nothing in flight.
fn bbr_ack(now: Instant, acked: u64, bw: u64, round_start: bool) -> AckEvent {
    AckEvent {
        round_start,
        rate: Some(RateSample {
            delivered: bw / 100,
            interval: AGG_RTT,
            prior_delivered: 0,
            is_app_limited: false,
        }),
        ..ack(now, acked, AGG_RTT)
    }
}

/// `us` microseconds and a half.
fn us(us: u64) -> Instant {
    Instant::from_nanos(us * 1000 + 500)
}

/// A new BBR flow with a 10-segment cwnd.
fn new_bbr() -> (Bbr, CcState) {
    let b = Bbr::new(RngStream::new(1, "flow/1/tcp"));
    let s = CcState {
        cwnd: 10 * AGG_MSS,
        ssthresh: u64::MAX,
        mss: AGG_MSS,
    };
    (b, s)
}

/// A BBR flow at BtlBw `bw` bytes/s, RTprop 10 ms, that has just found the
/// full bandwidth: four round-start ACKs of `warm` bytes at 10, 20, 30, 40 ms
/// (bw grows < 25 % for three rounds after the first). Each warm-up ACK
/// comes after `bw · 10 ms > warm` was expected, so each restarts the epoch
/// and leaves an excess of `warm` bytes; the last one starts the epoch at
/// 40 ms, and its slot is 4 rounds old.
fn bbr_at_full_bw(bw: u64, warm: u64) -> (Bbr, CcState) {
    let (mut b, mut s) = new_bbr();
    for k in 1..=4 {
        assert!(!b.full_bw_reached());
        b.on_ack(
            &mut s,
            &bbr_ack(Instant::from_millis(10 * k), warm, bw, true),
        );
    }
    assert!(b.full_bw_reached());
    assert_eq!(b.mode(), BbrMode::ProbeBw);
    assert_eq!(b.max_bw(), bw as f64);
    assert_eq!(b.extra_acked(), warm);
    (b, s)
}

#[test]
fn bbr_ack_aggregation_excess_is_the_data_acked_beyond_btlbw_over_the_epoch() {
    // 1 MB/s: BDP 10 segments, 100 ms cap 100 segments.
    let bw = 1_000_000;
    let (mut b, mut s) = bbr_at_full_bw(bw, 1000);
    // An aggregate of 5000 B 60 ms after the last ACK: the epoch (1000 B
    // since 40 ms) is behind the 60 000 B expected, so it restarts here and
    // the excess is the aggregate itself.
    s.cwnd = 100 * AGG_MSS;
    b.on_ack(&mut s, &bbr_ack(Instant::from_millis(100), 5000, bw, false));
    assert_eq!(b.extra_acked(), 5000);
    assert_eq!(b.ack_aggregation_cwnd(AGG_MSS), 5000);
    // 2.0005 ms later 4000 B more: expected floor(2000.5) = 2000 < 5000,
    // the epoch goes on: excess 5000 + 4000 − 2000 = 7000 B.
    s.cwnd = 100 * AGG_MSS;
    b.on_ack(&mut s, &bbr_ack(us(102_000), 4000, bw, false));
    assert_eq!(b.extra_acked(), 7000);
    assert_eq!(b.ack_aggregation_cwnd(AGG_MSS), 7000);
    // Target cwnd (the window was above it, so cwnd = target): BDP at
    // cwnd_gain 2 = 20 segments, + 7 for aggregation, + 3 TSO quanta of
    // 2 segments (pacing >= 1.2 Mbit/s, < 1 segment per ms), rounded up to
    // even = 34 segments, + 2 in the 1.25 phase. Without the allowance 26.
    let probe = if b.cycle_index() == 0 { 2 } else { 0 };
    assert_eq!(s.cwnd, (34 + probe) * AGG_MSS);
}

#[test]
fn bbr_ack_aggregation_excess_is_capped_at_the_cwnd_and_the_allowance_at_100ms_of_btlbw() {
    // 1 MB/s, the cwnd holds 4 segments: a 6000-B aggregate counts 4000.
    let (mut b, mut s) = bbr_at_full_bw(1_000_000, 1000);
    s.cwnd = 4 * AGG_MSS;
    b.on_ack(
        &mut s,
        &bbr_ack(Instant::from_millis(100), 6000, 1_000_000, false),
    );
    assert_eq!(b.extra_acked(), 4000);
    // 52 kB/s: BtlBw · 100 ms = 5200 B, 5 whole segments (Linux's
    // `bw · bbr_extra_acked_max_us` rounds down); warm-up ACKs of 250 B
    // (< 520 B expected per 10 ms, so each restarts the epoch).
    let (mut b, mut s) = bbr_at_full_bw(52_000, 250);
    s.cwnd = 100 * AGG_MSS;
    b.on_ack(
        &mut s,
        &bbr_ack(Instant::from_millis(100), 12_000, 52_000, false),
    );
    assert_eq!(b.extra_acked(), 12_000);
    assert_eq!(b.ack_aggregation_cwnd(AGG_MSS), 5000);
}

#[test]
fn bbr_ack_aggregation_allowance_waits_for_the_full_bandwidth() {
    let (mut b, mut s) = new_bbr();
    let bw = 1_000_000;
    b.on_ack(&mut s, &bbr_ack(Instant::from_millis(10), 1000, bw, true));
    b.on_ack(&mut s, &bbr_ack(Instant::from_millis(20), 1000, bw, true));
    // STARTUP grows the cwnd by the ACKed data: 10 + 1 + 1 segments. An
    // 8000-B aggregate at 25 ms (1000 B since 20 ms, behind the 5000 B
    // expected: the epoch restarts) is measured ...
    assert_eq!(s.cwnd, 12 * AGG_MSS);
    b.on_ack(&mut s, &bbr_ack(Instant::from_millis(25), 8000, bw, false));
    assert_eq!(b.extra_acked(), 8000);
    // ... but gives no allowance before the full bandwidth is found.
    assert!(!b.full_bw_reached());
    assert_eq!(b.ack_aggregation_cwnd(AGG_MSS), 0);
    // Two more rounds find it (3 rounds without 25 % growth); the 8000 B
    // are still in the window (4 rounds) and now count.
    b.on_ack(&mut s, &bbr_ack(Instant::from_millis(30), 1000, bw, true));
    b.on_ack(&mut s, &bbr_ack(Instant::from_millis(40), 1000, bw, true));
    assert!(b.full_bw_reached());
    assert_eq!(b.extra_acked(), 8000);
    assert_eq!(b.ack_aggregation_cwnd(AGG_MSS), 8000);
}

#[test]
fn bbr_ack_aggregation_window_forgets_an_aggregate_after_5_to_10_rounds() {
    let bw = 1_000_000;
    let (mut b, mut s) = bbr_at_full_bw(bw, 1000);
    // One round-start ACK of 1000 B every 10 ms (each behind BtlBw).
    let round = |b: &mut Bbr, s: &mut CcState, t: &mut u64| {
        *t += 10;
        b.on_ack(s, &bbr_ack(Instant::from_millis(*t), 1000, bw, true));
    };
    // The warm-up's slot is 4 rounds old: the next round start (60 ms)
    // opens the other slot.
    let mut t = 50;
    round(&mut b, &mut s, &mut t);
    assert_eq!(b.extra_acked(), 1000);
    // A 6000-B aggregate at 65 ms lands in the new slot.
    s.cwnd = 100 * AGG_MSS;
    b.on_ack(&mut s, &bbr_ack(Instant::from_millis(65), 6000, bw, false));
    assert_eq!(b.extra_acked(), 6000);
    // Remembered through 9 more round starts (its slot survives the
    // rotation at the 5th, the next rotation clears it) ...
    for _ in 0..9 {
        round(&mut b, &mut s, &mut t);
        assert_eq!(b.extra_acked(), 6000, "t = {t} ms");
    }
    // ... and forgotten at the 10th: only the 1000-B ACKs remain.
    round(&mut b, &mut s, &mut t);
    assert_eq!(b.extra_acked(), 1000);
    assert_eq!(b.ack_aggregation_cwnd(AGG_MSS), 1000);
}

#[test]
fn bbr_ack_epoch_restarts_before_2_pow_20_segments() {
    let bw = 1_000_000;
    let (mut b, mut s) = bbr_at_full_bw(bw, 1000);
    // 600 MB at 100 ms (the epoch restarts: far behind BtlBw), 500 MB at
    // 101 ms: together 1.1e9 >= 2^20 segments (1 048 576 000 B), so the
    // epoch restarts at this ACK with 500 MB; 200 MB at 102.0005 ms: 700 MB
    // − floor(1000.5) = 699 999 000. Without the restart the epoch would
    // hold (2^20 − 1) segments (the 20-bit clamp) at 101 ms already.
    let acks = [
        (Instant::from_millis(100), 600_000_000),
        (Instant::from_millis(101), 500_000_000),
        (us(102_000), 200_000_000),
    ];
    for (t, acked) in acks {
        s.cwnd = 4_000_000_000;
        b.on_ack(&mut s, &bbr_ack(t, acked, bw, false));
    }
    assert_eq!(b.extra_acked(), 699_999_000);
}

#[test]
fn bbr_ack_epoch_restarts_when_sending_resumes_after_an_app_limited_idle() {
    let bw = 1_000_000;
    // 3000 B at 100 ms start an epoch; 4000 B at 102.0005 ms continue it
    // (expected 2000 < 3000): excess 7000 − 2000 = 5000. A transmission
    // with nothing in flight at 101 ms (Linux CA_EVENT_TX_START) restarts
    // the epoch there if the sender was application-limited: then the
    // 4000 B find 0 <= floor(1000.5) expected and restart it again: 4000.
    for (tx_start, app_limited, excess) in [
        (false, false, 5000),
        (true, false, 5000),
        (true, true, 4000),
    ] {
        let (mut b, mut s) = bbr_at_full_bw(bw, 1000);
        s.cwnd = 100 * AGG_MSS;
        b.on_ack(&mut s, &bbr_ack(Instant::from_millis(100), 3000, bw, false));
        if tx_start {
            b.on_tx_start(&mut s, Instant::from_millis(101), app_limited);
        }
        s.cwnd = 100 * AGG_MSS;
        b.on_ack(&mut s, &bbr_ack(us(102_000), 4000, bw, false));
        assert_eq!(
            b.extra_acked(),
            excess,
            "tx start {tx_start}, app-limited {app_limited}"
        );
    }
}

#[test]
fn bbr_ack_aggregation_does_not_lift_the_probe_rtt_cap() {
    let bw = 1_000_000;
    let (mut b, mut s) = bbr_at_full_bw(bw, 1000);
    // min_rtt (10 ms, stamped at 10 ms) expires after 10 s: this ACK enters
    // PROBE_RTT; its 6000-B aggregate is measured and allowed, the cwnd is
    // still capped at 4 segments.
    s.cwnd = 100 * AGG_MSS;
    b.on_ack(
        &mut s,
        &bbr_ack(Instant::from_millis(10_020), 6000, bw, false),
    );
    assert_eq!(b.mode(), BbrMode::ProbeRtt);
    assert_eq!(b.extra_acked(), 6000);
    assert_eq!(b.ack_aggregation_cwnd(AGG_MSS), 6000);
    assert_eq!(s.cwnd, 4 * AGG_MSS);
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

/// Linux `bictcp_update`: while no congestion event has happened
/// (`last_max_cwnd == 0`), `ca->cnt <= 20`, so congestion avoidance adds at
/// least one segment per 20 ACKed: 100 segments ACKed over an RTT right
/// after leaving slow start (K = 0, W_cubic flat) grow cwnd 100 -> 105.
/// RFC 9438 alone (`loss_free_growth(0)`) grows it by less than one.
#[test]
fn cubic_grows_five_percent_per_rtt_before_the_first_loss() {
    let mss = 1000;
    let rtt = Duration::from_millis(100);
    for (growth, lo, hi) in [(0.05, 105.0, 105.3), (0.0, 100.0, 101.0)] {
        let mut cc = Cubic::new(false).loss_free_growth(growth);
        let mut s = CcState {
            cwnd: 100 * mss,
            ssthresh: 100 * mss,
            mss,
        };
        let mut now = Instant::from_secs_f64(1.0);
        for _ in 0..100 {
            now += Duration::from_millis(1);
            cc.on_ack(&mut s, &ack(now, mss, rtt));
        }
        let w = s.cwnd as f64 / mss as f64;
        assert!(w >= lo && w <= hi, "growth {growth}: cwnd {w}");
    }
    // After a loss the rule is off: the same ACKs right after the
    // reduction (concave region, W_cubic near cwnd_epoch) grow by less.
    let mut cc = Cubic::new(false);
    let mut s = CcState {
        cwnd: 100 * mss,
        ssthresh: u64::MAX,
        mss,
    };
    let ev = CongestionEvent::Loss {
        flight: 100 * mss,
        inflight: 100 * mss,
    };
    cc.on_congestion_event(&mut s, ev, Instant::ZERO);
    let mut now = Instant::from_secs_f64(1.0);
    let before = s.cwnd;
    for _ in 0..70 {
        now += Duration::from_millis(1);
        cc.on_ack(&mut s, &ack(now, mss, rtt));
    }
    assert!(((s.cwnd - before) as f64) < 0.05 * before as f64);
}
