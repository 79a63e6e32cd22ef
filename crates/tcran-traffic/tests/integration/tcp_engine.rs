//! Oracle tests of the common TCP machinery: numbers from RFC 6298, RFC 5681,
//! RFC 6582 and the ns-3 / Linux oracles quoted in algorithms.md §2.10.

use crate::common;

use common::{Link, TcpPair};
use tcran_core::packet::{L4Meta, TcpFlags, TcpMeta};
use tcran_core::{BitRate, ByteSize, Duration, Ecn, Instant, Protocol};
use tcran_traffic::cc::CcKind;
use tcran_traffic::tcp::{RttEstimator, SendBuffer, TcpConfig, TcpReceiver};

const MS: Duration = Duration::from_millis(1);

fn ms(x: u64) -> Duration {
    Duration::from_millis(x)
}

#[test]
fn rfc6298_rto_follows_the_hand_computed_sequence_and_backs_off() {
    let mut r = RttEstimator::new(Duration::from_secs(1), MS, Duration::from_secs(60));
    assert_eq!(r.rto(), Duration::from_secs(1), "initial RTO (§2.1)");
    // First sample 100 ms: SRTT 100, RTTVAR 50, RTO = 100 + 4·50 = 300 ms.
    r.on_sample(ms(100));
    assert_eq!(r.srtt(), Some(ms(100)));
    assert_eq!(r.rttvar(), ms(50));
    assert_eq!(r.rto(), ms(300));
    // 200 ms: RTTVAR = 3/4·50 + 1/4·|100 − 200| = 62.5; SRTT = 7/8·100 + 1/8·200 = 112.5;
    // RTO = 112.5 + 250 = 362.5 ms.
    r.on_sample(ms(200));
    assert_eq!(r.rttvar(), Duration::from_micros(62_500));
    assert_eq!(r.srtt(), Some(Duration::from_micros(112_500)));
    assert_eq!(r.rto(), Duration::from_micros(362_500));
    // 100 ms: RTTVAR = 3/4·62.5 + 1/4·12.5 = 50; SRTT = 7/8·112.5 + 12.5 = 110.9375;
    // RTO = 310.9375 ms.
    r.on_sample(ms(100));
    assert_eq!(r.rttvar(), ms(50));
    assert_eq!(r.srtt(), Some(Duration::from_nanos(110_937_500)));
    assert_eq!(r.rto(), Duration::from_nanos(310_937_500));
    // §5.5: each expiry doubles it.
    r.on_timeout();
    assert_eq!(r.rto(), Duration::from_nanos(621_875_000));
    r.on_timeout();
    assert_eq!(r.rto(), Duration::from_nanos(1_243_750_000));
    // A new sample clears the back-off.
    r.on_sample(ms(100));
    assert_eq!(r.backoff_exponent(), 0);
}

#[test]
fn rto_is_clamped_to_min_and_max() {
    let mut r = RttEstimator::new(Duration::from_secs(1), ms(200), Duration::from_secs(60));
    r.on_sample(ms(10)); // 10 + 4·5 = 30 ms < 200 ms floor (Linux TCP_RTO_MIN).
    assert_eq!(r.rto(), ms(200));
    for _ in 0..20 {
        r.on_timeout();
    }
    assert_eq!(r.rto(), Duration::from_secs(60));
}

fn reno(iw: u32, delack: u32) -> TcpConfig {
    TcpConfig {
        cc: CcKind::NewReno,
        initial_window: iw,
        delayed_ack_segments: delack,
        pacing: false,
        ..TcpConfig::default()
    }
}

/// Fast, uncongested path with 5 ms one-way delay (ns-3 TcpGeneralTest).
fn fast_path(cfg: &TcpConfig) -> TcpPair {
    TcpPair::new(
        cfg,
        Link::new(Some(BitRate::from_mbps(1000)), ms(5), 10_000_000),
        Link::new(None, ms(5), u64::MAX),
        false,
        1,
    )
}

#[test]
fn linux_reno_slow_start_iw2_seven_writes_ends_at_nine_segments() {
    // algorithms.md §2.10 tcp-linux-reno-test: IW 2, 7 one-segment writes
    // 1 ms apart -> final cwnd 9 segments, for delayed-ACK count 1 and 2.
    for delack in [1, 2] {
        let cfg = reno(2, delack);
        let mut pair = fast_path(&cfg);
        let mss = 1448;
        for i in 0..7 {
            pair.writes.push_back((Instant::from_millis(i), mss));
        }
        pair.run_until(Instant::from_millis(500));
        assert_eq!(pair.sender.snd_una(), 7 * mss, "everything delivered");
        assert_eq!(pair.sender.cwnd(), 9 * mss, "delack {delack}");
    }
}

#[test]
fn linux_reno_congestion_avoidance_iw1_ssthresh2_six_writes_ends_at_four_segments() {
    // algorithms.md §2.10: initial cwnd 1, ssthresh 2 segments, 6 writes -> 4 segments.
    for delack in [1, 2] {
        let mut cfg = reno(1, delack);
        cfg.initial_ssthresh = Some(ByteSize(2 * 1448));
        let mut pair = fast_path(&cfg);
        for i in 0..6 {
            pair.writes.push_back((Instant::from_millis(i), 1448));
        }
        pair.run_until(Instant::from_millis(500));
        assert_eq!(pair.sender.snd_una(), 6 * 1448);
        assert_eq!(pair.sender.cwnd(), 4 * 1448, "delack {delack}");
    }
}

#[test]
fn reno_congestion_avoidance_adds_one_mss_per_window_acked() {
    // tcp-cong-avoid-test: in CA the window grows by at most (and, when
    // cwnd-limited, exactly) one MSS per window of ACKed data, i.e. per RTT.
    let mut cfg = reno(10, 2);
    cfg.initial_ssthresh = Some(ByteSize(10 * 1448));
    let mut pair = TcpPair::dumbbell(&cfg, BitRate::from_mbps(10), ms(50), 5_000_000, 1);
    let mss = 1448;
    let mut last = (pair.sender.cwnd(), pair.sender.delivered());
    let mut increases = 0;
    pair.run_until_with(Instant::from_millis(10_000), |p| {
        let cwnd = p.sender.cwnd();
        if cwnd != last.0 {
            assert_eq!(cwnd, last.0 + mss, "one MSS at a time");
            let acked = p.sender.delivered() - last.1;
            // Delayed ACKs deliver 2 segments at once, hence the slack.
            assert!(
                acked + 2 * mss >= last.0,
                "grew after {acked} B with cwnd {}",
                last.0
            );
            assert!(
                acked <= last.0 + 2 * mss,
                "grew too late: {acked} B, cwnd {}",
                last.0
            );
            increases += 1;
            last = (cwnd, p.sender.delivered());
        }
    });
    assert!(increases > 30, "{increases}");
    assert_eq!(pair.fwd.drops, 0);
}

/// Runs a bulk flow on a 20 Mbit/s, 40 ms path with a big buffer and one
/// dropped segment; returns (pair, outstanding at loss detection, cwnd
/// before, cwnd and ssthresh right after entering recovery).
fn single_loss(cc: CcKind) -> (TcpPair, u64, u64, u64, u64) {
    let cfg = TcpConfig {
        cc,
        hystart: false,
        ..TcpConfig::default()
    };
    let mut pair = TcpPair::dumbbell(&cfg, BitRate::from_mbps(20), ms(40), 3_000_000, 1);
    pair.fwd.drop_seqs.push(60 * 1448);
    let mut prev = (0, 0);
    let mut at_entry = None;
    let mut prev_in_recovery = false;
    pair.run_until_with(Instant::from_millis(3000), |p| {
        if p.sender.in_recovery() && !prev_in_recovery && at_entry.is_none() {
            at_entry = Some((prev.0, prev.1, p.sender.cwnd(), p.sender.ssthresh()));
        }
        prev_in_recovery = p.sender.in_recovery();
        prev = (p.sender.outstanding(), p.sender.cwnd());
        p.sender.check_invariants().unwrap();
    });
    let (flight, cwnd_before, cwnd, ssthresh) = at_entry.expect("entered recovery");
    (pair, flight, cwnd_before, cwnd, ssthresh)
}

#[test]
fn single_loss_newreno_fast_retransmit_halves_flight_size() {
    let (pair, flight, _, cwnd, ssthresh) = single_loss(CcKind::NewReno);
    let s = pair.sender.stats();
    assert_eq!(s.retransmissions, 1);
    assert_eq!(s.fast_recoveries, 1);
    assert_eq!(s.timeouts, 0);
    // RFC 5681 eq. 4 (RFC 6675 §5 step 4.2: cwnd = ssthresh).
    assert_eq!(ssthresh, (flight / 2).max(2 * 1448));
    assert_eq!(cwnd, ssthresh);
    assert!(!pair.sender.in_recovery());
    assert_eq!(
        pair.receiver.rcv_nxt(),
        pair.sender.snd_una().max(pair.receiver.rcv_nxt())
    );
}

#[test]
fn single_loss_cubic_reduces_to_beta_times_cwnd() {
    let (pair, _, cwnd_before, cwnd, ssthresh) = single_loss(CcKind::Cubic);
    let s = pair.sender.stats();
    assert_eq!(
        (s.retransmissions, s.fast_recoveries, s.timeouts),
        (1, 1, 0)
    );
    // RFC 9438 §4.6: ssthresh = cwnd·0.7, cwnd = ssthresh.
    assert_eq!(ssthresh, (cwnd_before as f64 * 0.7) as u64);
    assert_eq!(cwnd, ssthresh);
}

#[test]
fn single_loss_without_sack_uses_newreno_dupacks() {
    let cfg = TcpConfig {
        cc: CcKind::NewReno,
        sack: false,
        ..TcpConfig::default()
    };
    let mut pair = TcpPair::dumbbell(&cfg, BitRate::from_mbps(20), ms(40), 3_000_000, 1);
    pair.fwd.drop_seqs.push(60 * 1448);
    pair.run_until_with(Instant::from_millis(3000), |p| {
        p.sender.check_invariants().unwrap()
    });
    let s = pair.sender.stats();
    assert_eq!(
        (s.retransmissions, s.fast_recoveries, s.timeouts),
        (1, 1, 0)
    );
}

#[test]
fn two_losses_in_one_window_are_repaired_without_timeout() {
    // RFC 6582 partial ACK (no SACK) and RFC 6675 scoreboard (SACK).
    for sack in [true, false] {
        let cfg = TcpConfig {
            cc: CcKind::NewReno,
            sack,
            ..TcpConfig::default()
        };
        let mut pair = TcpPair::dumbbell(&cfg, BitRate::from_mbps(20), ms(40), 3_000_000, 1);
        pair.fwd.drop_seqs.extend([60 * 1448, 65 * 1448]);
        pair.run_until_with(Instant::from_millis(3000), |p| {
            p.sender.check_invariants().unwrap()
        });
        let s = pair.sender.stats();
        assert_eq!(s.retransmissions, 2, "sack {sack}");
        assert_eq!(s.fast_recoveries, 1, "sack {sack}");
        assert_eq!(s.timeouts, 0, "sack {sack}");
    }
}

#[test]
fn tail_loss_is_repaired_by_rto_with_backoff() {
    // A finite 5-segment transfer whose last segment is lost: no dupACKs
    // can arrive, so the RTO must fire (and only once).
    let cfg = reno(10, 1);
    let mut pair = fast_path(&cfg);
    pair.writes.push_back((Instant::ZERO, 5 * 1448));
    pair.fwd.drop_seqs.push(4 * 1448);
    pair.run_until(Instant::from_secs_f64(3.0));
    let s = pair.sender.stats();
    assert_eq!(s.timeouts, 1);
    assert_eq!(s.retransmissions, 1);
    assert_eq!(pair.receiver.rcv_nxt(), 5 * 1448);
    // The retransmission left at the RTO: first RTT 10 ms -> RTO = max(200 ms, 30 ms).
    let done = pair.sender.all_acked_at().unwrap();
    assert!(
        done > Instant::from_millis(200) && done < Instant::from_millis(250),
        "{done:?}"
    );
}

#[test]
fn pacing_gap_is_mss_rtt_over_factor_cwnd() {
    // algorithms.md §2.10 tcp-pacing-test: RTT 100 ms, MSS 1000, NewReno,
    // slow start only, or ssthresh 40 segments (SS -> CA); gap =
    // MSS·RTT/(factor·cwnd), factor 2 while cwnd < ssthresh/2, else 1.2;
    // the initial window is not paced.
    for (delack, ssthresh) in [(1, None), (2, None), (1, Some(40_000)), (2, Some(40_000))] {
        let cfg = TcpConfig {
            cc: CcKind::NewReno,
            mss: ByteSize(1000),
            initial_ssthresh: ssthresh.map(ByteSize),
            delayed_ack_segments: delack,
            pacing: true,
            ..TcpConfig::default()
        };
        let mut pair = TcpPair::new(
            &cfg,
            Link::new(None, ms(50), u64::MAX),
            Link::new(None, ms(50), u64::MAX),
            true,
            1,
        );
        pair.keep_log = true;
        pair.run_until(Instant::from_millis(350));
        let log = &pair.log;
        let (mut exact_ss, mut exact_ca) = (0, 0);
        for w in log.windows(2) {
            let (a, b) = (w[0], w[1]);
            let Some(srtt) = a.srtt else {
                // First window: back to back.
                assert_eq!(b.t, a.t.max(b.t));
                continue;
            };
            assert_eq!(srtt, ms(100));
            let factor = if a.cwnd < a.ssthresh / 2 { 2.0 } else { 1.2 };
            let expected = 1000.0 * 0.1 / (factor * a.cwnd as f64); // seconds
            let gap = b.t.saturating_since(a.t).as_secs_f64();
            assert!(
                gap >= expected - 10e-9,
                "gap {gap} < {expected} (delack {delack})"
            );
            if (gap - expected).abs() <= 10e-9 {
                if factor == 2.0 {
                    exact_ss += 1;
                } else {
                    exact_ca += 1;
                }
            }
        }
        if ssthresh.is_none() {
            assert!(
                exact_ss >= 20 && exact_ca == 0,
                "{exact_ss} {exact_ca} (delack {delack})"
            );
        } else {
            assert!(exact_ca >= 20, "{exact_ss} {exact_ca} (delack {delack})");
        }
    }
}

fn data(seq: u64, len: u32, ecn: Ecn, flags: u8) -> tcran_core::Packet {
    let f = common::flow(1, Protocol::TCP);
    let mut p = f.packet(
        len + 52,
        Instant::ZERO,
        L4Meta::Tcp(TcpMeta {
            seq,
            payload: len,
            flags: TcpFlags(flags | TcpFlags::ACK),
            ..TcpMeta::default()
        }),
    );
    p.ecn = ecn;
    p
}

fn acks(r: &mut TcpReceiver, now: Instant) -> Vec<TcpMeta> {
    let mut v = Vec::new();
    while let Some(p) = r.poll_transmit(now) {
        assert_eq!(p.ecn, Ecn::NotEct);
        let L4Meta::Tcp(m) = p.l4 else { panic!() };
        v.push(m);
    }
    v
}

#[test]
fn receiver_delays_acks_for_two_segments_or_40ms_and_acks_holes_at_once() {
    let p = TcpConfig::default().build().unwrap();
    let mut r = TcpReceiver::new(p, common::flow(1, Protocol::TCP));
    let t = Instant::from_millis(1);
    r.on_packet(&data(0, 1448, Ecn::NotEct, 0), t);
    assert!(acks(&mut r, t).is_empty());
    assert_eq!(r.next_wakeup(), Some(t + ms(40)));
    r.on_packet(&data(1448, 1448, Ecn::NotEct, 0), t);
    let a = acks(&mut r, t);
    assert_eq!((a.len(), a[0].ack), (1, 2896));
    // Timer path.
    r.on_packet(&data(2896, 1448, Ecn::NotEct, 0), t);
    r.on_timer(t + ms(40));
    assert_eq!(acks(&mut r, t)[0].ack, 4344);
    // Out of order: immediate duplicate ACK with the SACK block first.
    r.on_packet(&data(5792, 1448, Ecn::NotEct, 0), t);
    r.on_packet(&data(8688, 1448, Ecn::NotEct, 0), t);
    let a = acks(&mut r, t);
    assert_eq!(a.len(), 2);
    assert_eq!(a[1].ack, 4344);
    assert_eq!(a[1].sack[0], (8688, 10136), "most recent block first");
    assert_eq!(a[1].sack[1], (5792, 7240));
    // Filling the first hole: immediate ACK up to the next hole.
    r.on_packet(&data(4344, 1448, Ecn::NotEct, 0), t);
    let a = acks(&mut r, t);
    assert_eq!(a[0].ack, 7240);
    assert_eq!(a[0].sack[0], (8688, 10136));
}

#[test]
fn classic_ecn_echo_sticks_until_cwr_and_accurate_echo_follows_each_packet() {
    let classic = TcpConfig {
        ecn: true,
        delayed_ack_segments: 1,
        ..TcpConfig::default()
    };
    let mut r = TcpReceiver::new(classic.build().unwrap(), common::flow(1, Protocol::TCP));
    let t = Instant::ZERO;
    r.on_packet(&data(0, 1448, Ecn::Ce, 0), t);
    r.on_packet(&data(1448, 1448, Ecn::Ect0, 0), t);
    r.on_packet(&data(2896, 1448, Ecn::Ect0, TcpFlags::CWR), t);
    let e: Vec<bool> = acks(&mut r, t)
        .iter()
        .map(|m| m.flags.has(TcpFlags::ECE))
        .collect();
    assert_eq!(e, [true, true, false]);

    let dctcp = TcpConfig {
        cc: CcKind::Dctcp,
        ..TcpConfig::default()
    };
    let mut r = TcpReceiver::new(dctcp.build().unwrap(), common::flow(1, Protocol::TCP));
    // CE state 0 -> 1 with one segment pending: that ACK goes out first with ECE = 0.
    r.on_packet(&data(0, 1448, Ecn::Ect0, 0), t);
    r.on_packet(&data(1448, 1448, Ecn::Ce, 0), t);
    r.on_packet(&data(2896, 1448, Ecn::Ce, 0), t);
    r.on_packet(&data(4344, 1448, Ecn::Ect0, 0), t);
    r.on_timer(t + ms(40));
    let a: Vec<(u64, bool)> = acks(&mut r, t)
        .iter()
        .map(|m| (m.ack, m.flags.has(TcpFlags::ECE)))
        .collect();
    assert_eq!(a, [(1448, false), (4344, true), (5792, false)]);
}

#[test]
fn same_seed_gives_identical_packet_sequences() {
    let run = || {
        let cfg = TcpConfig {
            cc: CcKind::Bbr,
            ..TcpConfig::default()
        };
        let mut pair = TcpPair::dumbbell(&cfg, BitRate::from_mbps(20), ms(40), 200_000, 7);
        pair.keep_log = true;
        pair.run_until(Instant::from_millis(3000));
        pair.log
    };
    let (a, b) = (run(), run());
    assert!(a.len() > 1000);
    assert_eq!(a, b);
}

/// RFC 2861 restart after idle as Linux `tcp_cwnd_restart` computes it: 60
/// segments in slow start from IW 10 (delayed ACK off) end at cwnd 70; then
/// one more segment written `idle_rtos` RTOs after the last data segment
/// left. Linux halves cwnd while `(delta -= rto) > 0` and cwnd > IW, so
/// 0.9 RTO keeps 70, 2.5 RTO gives 70 -> 35 -> 17, 10 RTO stops at IW 10
/// (70 -> 35 -> 17 -> 8, then max(8, 10)); ssthresh becomes
/// max(ssthresh, 3/4 cwnd): still "infinite" in slow start. The sysctl off
/// keeps 70.
#[test]
fn idle_restart_halves_cwnd_per_rto_down_to_the_initial_window() {
    let mss = 1448;
    for (idle_rtos, enabled, expected) in [
        (0.9, true, 70),
        (2.5, true, 17),
        (10.0, true, 10),
        (2.5, false, 70),
    ] {
        let cfg = TcpConfig {
            slow_start_after_idle: enabled,
            ..reno(10, 1)
        };
        let mut pair = fast_path(&cfg);
        pair.keep_log = true;
        pair.writes.push_back((Instant::ZERO, 60 * mss));
        // Four round trips of 10 ms carry it; the shortest idle is 180 ms.
        pair.run_until(Instant::from_millis(100));
        assert_eq!(pair.sender.snd_una(), 60 * mss);
        assert_eq!(pair.sender.cwnd(), 70 * mss, "slow start: IW + acked");
        let last = pair.log.last().expect("sent").t;
        let rto = pair.sender.rto();
        let idle = Duration::from_nanos((rto.as_nanos() as f64 * idle_rtos) as u64);
        pair.writes.push_back((last + idle, mss));
        let before = pair.log.len();
        pair.run_until(last + idle + ms(1));
        let resent = &pair.log[before];
        assert_eq!(resent.t, last + idle);
        let case = format!("idle {idle_rtos} RTO, enabled {enabled}");
        assert_eq!(resent.cwnd, expected * mss, "{case}");
        assert_eq!(resent.ssthresh, u64::MAX, "{case}");
    }
}

/// Linux skips the restart for controls with their own `cong_control`:
/// Prague (`prague_cong_control`) keeps its cwnd over an idle period of 2.5
/// RTOs, DCTCP (none) is halved twice like Reno, not below IW 10.
#[test]
fn idle_restart_is_left_to_controls_with_their_own_cong_control() {
    let mss = 1448;
    for cc in [CcKind::Prague, CcKind::Dctcp] {
        let cfg = TcpConfig {
            cc,
            delayed_ack_segments: 1,
            ..TcpConfig::default()
        };
        let mut pair = fast_path(&cfg);
        pair.keep_log = true;
        pair.writes.push_back((Instant::ZERO, 60 * mss));
        pair.run_until(Instant::from_millis(100));
        assert_eq!(pair.sender.outstanding(), 0);
        let cwnd = pair.sender.cwnd() / mss;
        let last = pair.log.last().expect("sent").t;
        let idle = Duration::from_nanos(pair.sender.rto().as_nanos() * 5 / 2);
        pair.writes.push_back((last + idle, mss));
        let before = pair.log.len();
        pair.run_until(last + idle + ms(1));
        let want = match cc {
            CcKind::Prague => cwnd,
            _ => (cwnd >> 2).max(10.min(cwnd)),
        };
        assert_eq!(
            pair.log[before].cwnd,
            want * mss,
            "{cc:?} from {cwnd} segments"
        );
    }
}

/// Linux send buffer (tcp_sndbuf_expand, sk_stream_memory_free,
/// sk_stream_write_space): a bulk CUBIC sender into a buffer deeper than
/// `tcp_wmem[2]`. The kernel rules give the oracle: the buffer starts at
/// 2·10·per_mss (per_mss = roundup_pow_of_two(1460 + 576) + 256 = 2304),
/// grows to `tcp_wmem[2]` = 4 MiB, and once the buffer is the limit the flight stays between 2/3 and all of it in payload (skbs of
/// 2 segments charged 832 B each: payload·(1 + 832/2896)), with no loss.
#[test]
fn send_buffer_limits_the_flight_as_linux_wmem_does() {
    use tcran_traffic::tcp::sndbuf_per_mss;
    assert_eq!(sndbuf_per_mss(1448), 2304);
    let cfg = TcpConfig::default();
    let mut pair = TcpPair::dumbbell(&cfg, BitRate::from_mbps(18), ms(30), 50_000_000, 1);
    assert_eq!(pair.sender.send_buffer(), 2 * 10 * 2304);
    let wmem_max = 4 * 1024 * 1024u64;
    let charge = 1.0 + 832.0 / (2.0 * 1448.0);
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    pair.run_until_with(Instant::from_secs_f64(40.0), |p| {
        if p.now.as_secs_f64() > 30.0 {
            lo = lo.min(p.sender.outstanding());
            hi = hi.max(p.sender.outstanding());
        }
    });
    assert_eq!(pair.sender.send_buffer(), wmem_max);
    let top = wmem_max as f64 / charge;
    assert!(
        hi <= wmem_max && hi as f64 >= top * 0.99,
        "top {hi} vs {top:.0}"
    );
    assert!(
        lo as f64 >= top * 2.0 / 3.0 * 0.99,
        "bottom {lo} vs {:.0}",
        top * 2.0 / 3.0
    );
    assert_eq!(pair.sender.stats().retransmissions, 0);
    // `send_buffer = "unlimited"`: the same path fills the 50 MB buffer
    // far beyond it.
    let cfg = TcpConfig {
        send_buffer: SendBuffer::Unlimited,
        ..TcpConfig::default()
    };
    let mut pair = TcpPair::dumbbell(&cfg, BitRate::from_mbps(18), ms(30), 50_000_000, 1);
    pair.run_until(Instant::from_secs_f64(40.0));
    assert!(pair.sender.outstanding() as f64 > 1.5 * top);
}
