//! UDP/ICMP sources and the request-driven downloads (web pages, FTP files).

use crate::common;

use common::flow;
use tcran_core::packet::L4Meta;
use tcran_core::rng::RngStream;
use tcran_core::{BitRate, Duration, Instant, Packet, Protocol};
use tcran_traffic::sources::udp::{G711_IP_PACKET, GAMING_SD};
use tcran_traffic::sources::{
    Demand, DownloadServer, GamingSource, PacketSource, PeriodicSource, PingResponder, Pinger,
    UdpSink, VideoSource, WebPageModel,
};
use tcran_traffic::tcp::{TcpConfig, TcpReceiver, TcpSender};

fn drain(src: &mut impl PacketSource, until: Instant) -> Vec<Packet> {
    let mut out = Vec::new();
    while let Some(t) = src.next_send() {
        if t > until {
            break;
        }
        while let Some(p) = src.poll(t) {
            out.push(p);
        }
    }
    out
}

#[test]
fn voip_g711_sends_200_byte_packets_every_20_ms() {
    let mut v = PeriodicSource::voip_g711(flow(2, Protocol::UDP), Instant::from_millis(5), None);
    let pkts = drain(&mut v, Instant::from_millis(1005));
    assert_eq!(pkts.len(), 51);
    assert_eq!(
        G711_IP_PACKET, 200,
        "160 B G.711 + 12 RTP + 8 UDP + 20 IPv4"
    );
    for (i, p) in pkts.iter().enumerate() {
        assert_eq!(p.len, 200);
        assert_eq!(p.created, Instant::from_millis(5 + 20 * i as u64));
        assert_eq!(p.l4, L4Meta::Udp { seq: i as u64 });
        assert_eq!(p.flow, Some(tcran_core::FlowId(2)));
    }
}

#[test]
fn cbr_spacing_is_size_over_rate() {
    // 1250 B at 1 Mbit/s = 10 ms.
    let mut c = PeriodicSource::cbr(
        flow(3, Protocol::UDP),
        BitRate::from_mbps(1),
        1250,
        Instant::ZERO,
        Some(Instant::from_millis(100)),
    )
    .unwrap();
    let pkts = drain(&mut c, Instant::from_secs_f64(1.0));
    assert_eq!(pkts.len(), 10, "stops at 100 ms");
    assert_eq!(pkts[3].created, Instant::from_millis(30));
    assert!(
        PeriodicSource::cbr(flow(3, Protocol::UDP), BitRate(0), 100, Instant::ZERO, None).is_err()
    );
}

fn gaming(seed: u64, mean_ms: u64) -> GamingSource {
    GamingSource::new(
        flow(4, Protocol::UDP),
        100,
        Duration::from_millis(mean_ms),
        GAMING_SD,
        RngStream::new(seed, "flow/4/gaming"),
        Instant::ZERO,
        None,
    )
    .unwrap()
}

#[test]
fn gaming_interarrivals_have_the_configured_mean_and_sd() {
    for mean_ms in [20.0, 40.0, 70.0] {
        let mut g = gaming(11, mean_ms as u64);
        let gaps: Vec<f64> = (0..10_000).map(|_| g.draw_gap().as_millis_f64()).collect();
        let m = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let sd =
            (gaps.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (gaps.len() - 1) as f64).sqrt();
        // Standard error of the mean is 0.05 ms; of the sd about 0.035 ms.
        assert!((m - mean_ms).abs() < 0.2, "mean {m}");
        assert!((sd - 5.0).abs() < 0.2, "sd {sd}");
        assert!(gaps.iter().all(|&x| x >= 1.0));
    }
}

#[test]
fn same_seed_same_packets_other_seed_other_packets() {
    let until = Instant::from_millis(10_000);
    let a = drain(&mut gaming(1, 20), until);
    let b = drain(&mut gaming(1, 20), until);
    let c = drain(&mut gaming(2, 20), until);
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn ping_rtt_equals_path_rtt_on_an_idle_link() {
    let one_way = Duration::from_millis(17);
    let mut pinger = Pinger::new(
        flow(5, Protocol::ICMP),
        7,
        84,
        Duration::from_millis(200),
        Instant::ZERO,
        Some(Instant::from_millis(1000)),
    )
    .unwrap();
    let mut responder = PingResponder::default();
    let mut fwd = common::Link::new(None, one_way, u64::MAX);
    let mut rev = common::Link::new(None, one_way, u64::MAX);
    let mut now = Instant::ZERO;
    loop {
        let next = [pinger.next_send(), fwd.next_arrival(), rev.next_arrival()]
            .into_iter()
            .flatten()
            .min();
        let Some(t) = next else { break };
        now = t;
        while let Some(p) = pinger.poll(now) {
            fwd.send(p, now);
        }
        while let Some(p) = fwd.pop_arrival(now) {
            responder.on_packet(&p, now);
        }
        while let Some(p) = responder.poll_transmit(now) {
            assert_eq!(p.tuple.src, common::tuple(Protocol::ICMP).dst);
            rev.send(p, now);
        }
        while let Some(p) = rev.pop_arrival(now) {
            pinger.on_packet(&p, now);
        }
    }
    assert!(now >= Instant::from_millis(800));
    assert_eq!(pinger.sent(), 5);
    assert_eq!(pinger.rtts.len(), 5);
    assert!(pinger
        .rtts
        .iter()
        .all(|(_, r)| *r == Duration::from_millis(34)));
}

#[test]
fn video_frames_are_fragmented_into_mtu_packets_with_periodic_iframes() {
    let mut v = VideoSource::new(
        flow(6, Protocol::UDP),
        50.0,
        5_000,
        30_000,
        Some(Duration::from_secs(1)),
        1500,
        Instant::ZERO,
        None,
    )
    .unwrap();
    let pkts = drain(&mut v, Instant::from_millis(1990));
    // One frame per creation time, its packets back to back.
    let mut frames: Vec<(Instant, u32)> = Vec::new();
    for p in &pkts {
        match frames.last_mut() {
            Some((at, n)) if *at == p.created => *n += 1,
            _ => frames.push((p.created, 1)),
        }
    }
    assert_eq!(frames.len(), 100);
    // Payload per packet 1500 − 20 − 8 − 12 = 1460: 5000 B -> 4 packets,
    // 30000 B -> 21 packets.
    assert_eq!(frames[0].1, 21);
    assert_eq!(frames[1].1, 4);
    assert_eq!(frames[50].1, 21);
    assert_eq!(pkts.len(), 2 * 21 + 98 * 4);
    assert!(pkts.iter().all(|p| p.len <= 1500));
    let f1: u64 = pkts[21..25].iter().map(|p| (p.len - 40) as u64).sum();
    assert_eq!(f1, 5_000);
    assert!(pkts[21..25]
        .iter()
        .all(|p| p.created == Instant::from_millis(20)));
    let mut sink = UdpSink::default();
    for p in &pkts {
        if let L4Meta::Udp { seq } = p.l4 {
            if seq != 3 {
                sink.on_packet(p, p.created + Duration::from_millis(10));
            }
        }
    }
    assert_eq!(sink.lost(), 1);
    assert_eq!(sink.delay_max, Duration::from_millis(10));
    assert_eq!(sink.delay_total, Duration::from_millis(10 * sink.received));
}

#[test]
fn web_page_model_matches_the_thesis_moments() {
    let m = WebPageModel::default();
    let mut rng = RngStream::new(3, "web");
    let n = 20_000;
    let pages: Vec<_> = (0..n).map(|_| m.draw_page(&mut rng)).collect();
    let mean_main = pages.iter().map(|p| p.main_bytes as f64).sum::<f64>() / n as f64;
    // Truncation at 2 MB barely moves the 10 710 B mean.
    assert!((mean_main - 10_710.0).abs() < 600.0, "{mean_main}");
    let mean_count = pages.iter().map(|p| p.embedded as f64).sum::<f64>() / n as f64;
    // E[floor(Pareto(15, 3.1))] ≈ 22.14 − 0.5.
    assert!((mean_count - 21.6).abs() < 0.5, "{mean_count}");
    assert!(pages.iter().all(|p| (15..=53).contains(&p.embedded)));
    let reads: Vec<f64> = (0..n)
        .map(|_| m.draw_reading_time(&mut rng).as_secs_f64())
        .collect();
    assert!(reads.iter().all(|&r| r <= 7.0));
    // E[min(Exp(5), 7)] = 5·(1 − e^(−7/5)) = 3.767 s.
    let mr = reads.iter().sum::<f64>() / n as f64;
    assert!((mr - 3.767).abs() < 0.08, "{mr}");
}

/// A download server for `demand` on flow `id` (default TCP, streams of
/// `seed`), driven with its UE over a 10 Mbit/s, 10 ms link (20 ms round
/// trip) for 60 s.
fn serve_over_10_mbit_link(demand: Demand, id: u32, seed: u64) -> (DownloadServer, TcpReceiver) {
    let params = TcpConfig::default().build().unwrap();
    let flow_spec = flow(id, Protocol::TCP);
    let tcp = TcpSender::new(
        params.clone(),
        flow_spec,
        RngStream::new(seed, &format!("flow/{id}/tcp")),
    );
    let stream = match demand {
        Demand::Pages(_) => "web",
        Demand::Files { .. } => "ftp",
    };
    let mut server = DownloadServer::new(
        tcp,
        demand,
        RngStream::new(seed, &format!("flow/{id}/{stream}")),
        Instant::ZERO,
    );
    let end = Instant::from_millis(60_000);
    let mut ue = TcpReceiver::new(params, flow_spec);
    let mut fwd = common::Link::new(
        Some(BitRate::from_mbps(10)),
        Duration::from_millis(10),
        1_000_000,
    );
    let mut rev = common::Link::new(None, Duration::from_millis(10), u64::MAX);
    loop {
        let next = [
            server.next_wakeup(),
            ue.next_wakeup(),
            fwd.next_arrival(),
            rev.next_arrival(),
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(t) = next.filter(|&t| t <= end) else {
            break;
        };
        server.on_timer(t);
        ue.on_timer(t);
        while let Some(p) = fwd.pop_arrival(t) {
            ue.on_packet(&p, t);
        }
        while let Some(p) = rev.pop_arrival(t) {
            server.on_packet(&p, t);
        }
        while let Some(p) = server.poll_transmit(t) {
            fwd.send(p, t);
        }
        while let Some(p) = ue.poll_transmit(t) {
            rev.send(p, t);
        }
    }
    (server, ue)
}

#[test]
fn web_server_downloads_pages_over_tcp_with_reading_pauses() {
    let (server, ue) = serve_over_10_mbit_link(Demand::Pages(WebPageModel::default()), 8, 1);
    assert!(server.completed.len() >= 8, "{}", server.completed.len());
    let total: u64 = server.completed.iter().map(|p| p.bytes).sum();
    assert!(ue.rcv_nxt() >= total);
    for w in server.completed.windows(2) {
        let pause = w[1].requested_at.saturating_since(w[0].completed_at);
        assert!(pause <= Duration::from_secs(7));
    }
}

/// FTP model 1 (TR 36.814 A.2.1.3.1): 4 arrivals per second of 100 kB files
/// for 60 s, 3.2 Mbit/s offered to a 10 Mbit/s link. Poisson: 240 arrivals
/// expected, standard deviation 15.5; inter-arrival times Exp(250 ms), whose
/// coefficient of variation is 1. Arrivals do not wait for completions.
#[test]
fn ftp_files_arrive_as_a_poisson_process_and_complete_in_order() {
    let files = Demand::Files {
        size: 100_000,
        per_second: 4.0,
    };
    let (server, ue) = serve_over_10_mbit_link(files, 9, 2);
    let done = &server.completed;
    assert!(
        (194..=286).contains(&done.len()),
        "{} files (3 sd of 240)",
        done.len()
    );
    assert!(done.iter().all(|d| d.bytes == 100_000));
    assert!(ue.rcv_nxt() >= 100_000 * done.len() as u64);
    let gaps: Vec<f64> = done
        .windows(2)
        .map(|w| {
            w[1].requested_at
                .saturating_since(w[0].requested_at)
                .as_secs_f64()
        })
        .collect();
    let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
    let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
    assert!((mean - 0.25).abs() < 0.05, "mean inter-arrival {mean} s");
    assert!(
        (sd / mean - 1.0).abs() < 0.25,
        "coefficient of variation {}",
        sd / mean
    );
    // Open loop: some file arrived while the previous one was still loading.
    assert!(done
        .windows(2)
        .any(|w| w[1].requested_at < w[0].completed_at));
    for (w, d) in done.windows(2).zip(done) {
        // In order, each at least a round trip plus its 80 ms at 10 Mbit/s.
        assert!(w[0].completed_at <= w[1].completed_at);
        assert!(d.completed_at.saturating_since(d.requested_at) >= Duration::from_millis(100));
    }
}
