//! Web, FTP and video flows in the scenario format (Brunello thesis secs. 4.4, 5.1).

use crate::common;

use common::run;

const CELL: &str = r#"
    [cell]
    bandwidth_mhz = 5
    [[ues]]
    rnti = 1
    channel = { kind = "mcs", mcs = 28 }
"#;

/// 30 frames/s of 2920 B (two 1460-B RTP payloads = two 1500-B IP packets)
/// and a 14600-B I-frame (ten packets) once a second: 29 x 2 + 10 = 68
/// packets of 1500 B per second = 816 kbit/s, all delivered on an idle cell.
#[test]
fn video_frames_carry_their_bit_rate() {
    let s = run(&format!(
        r#"duration = "10s"
    warmup = "2s"
    {CELL}
    [[flows]]
    name = "video"
    ue = 1
    kind = "video"
    fps = 30
    frame_size = "2920B"
    iframe_size = "14600B"
    iframe_period = "1s"
    "#
    ));
    let v = &s.flows[0];
    assert_eq!(v.kind, "video");
    assert!(
        (v.throughput_mbps - 0.816).abs() < 0.816 * 0.01,
        "{}",
        v.throughput_mbps
    );
    assert_eq!(v.lost_packets, 0);
    // Ten back-to-back packets (15 kB) take 7 slots of 2304 B: the last
    // packet of an I-frame waits about 6 slots.
    assert!(
        v.delay_ms.max >= 16.0 && v.delay_ms.max < 20.0,
        "{:?}",
        v.delay_ms
    );
}

/// Web pages: main object + embedded objects (NGMN mean about 180 kB per
/// page) and 5 s mean reading time, so about one page per 5 s; each page
/// takes at least one round trip (25 ms) to load.
#[test]
fn web_pages_load_and_are_timed() {
    let s = run(&format!(
        r#"duration = "110s"
    warmup = "10s"
    seed = 4
    {CELL}
    [[flows]]
    name = "web"
    ue = 1
    kind = "web"
    "#
    ));
    let w = &s.flows[0];
    assert_eq!(w.kind, "web");
    let pages = w.page_ms.expect("web flows report page load times");
    assert!((8..=40).contains(&pages.count), "{pages:?}");
    assert!(pages.p50 > 25.0 && pages.max < 5000.0, "{pages:?}");
    assert!(w.throughput_mbps > 0.05, "{}", w.throughput_mbps);
}

/// FTP model 1 at Brunello sec. 5.1's per-cell rate for the 1 Mb files: 2
/// arrivals per second of 125 kB over 100 s after warm-up: 200 files
/// expected (Poisson, standard deviation 14.1), 2 Mbit/s of payload, each
/// download at least a round trip (25 ms).
#[test]
fn ftp_files_arrive_at_their_rate_and_are_timed() {
    let s = run(&format!(
        r#"duration = "110s"
    warmup = "10s"
    seed = 5
    {CELL}
    [[flows]]
    name = "ftp"
    ue = 1
    kind = "ftp"
    file_size = "125kB"
    per_second = 2.0
    "#
    ));
    let f = &s.flows[0];
    assert_eq!(f.kind, "ftp");
    let files = f.page_ms.expect("ftp flows report download times");
    assert!((158..=242).contains(&files.count), "{files:?}");
    assert!(files.p50 > 25.0 && files.max < 5000.0, "{files:?}");
    // Payload 2.0 Mbit/s +-21 % (3 sd of the count), plus 40 B per 1460.
    assert!(
        (1.55..=2.5).contains(&f.throughput_mbps),
        "{}",
        f.throughput_mbps
    );
}

/// `stop` ends TCP flows as it ends UDP ones: the bulk application stops
/// writing (it then creates well under half the packets of a run without
/// `stop` at 5 s of 20: its window and the RLC buffer are all that follows),
/// and FTP users stop arriving (5 per second from warm-up at 1 s to 5 s:
/// Poisson mean 20, at most 35 at 3 sd; 95 without `stop`).
#[test]
fn tcp_and_ftp_flows_stop_at_their_stop() {
    let scenario = |stop: &str| {
        run(&format!(
            r#"duration = "20s"
    warmup = "1s"
    {CELL}
    [[flows]]
    name = "bulk"
    ue = 1
    kind = "tcp"
    {stop}
    [[flows]]
    name = "ftp"
    ue = 1
    kind = "ftp"
    file_size = "100kB"
    per_second = 5.0
    {stop}
    "#
        ))
    };
    let (stopped, running) = (scenario(r#"stop = "5s""#), scenario(""));
    let (bulk, bulk_on) = (&stopped.flows[0], &running.flows[0]);
    assert!(
        bulk.created_packets * 2 < bulk_on.created_packets,
        "{} vs {}",
        bulk.created_packets,
        bulk_on.created_packets
    );
    let files = |s: &tcran_sim::RunSummary| s.flows[1].page_ms.expect("ftp").count;
    assert!((8..=35).contains(&files(&stopped)), "{}", files(&stopped));
    assert!(files(&running) > 60, "{}", files(&running));
}
