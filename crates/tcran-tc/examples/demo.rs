//! tcran pipeline demo: a greedy bulk stream and a VoIP call share one
//! bearer whose radio link carries 20 Mbit/s (1 ms TTI). The same packets go
//! through two pipelines:
//!
//! - vanilla 3GPP: one FIFO, no pacer, so everything piles up in the 5 MB
//!   RLC buffer and the call waits behind the bulk data;
//! - TC-RAN: a filter sends the call to a priority queue, the bulk stream
//!   goes to a CoDel queue, and the e5G-BDP pacer keeps the RLC buffer at
//!   about one TTI of data.
//!
//! The bulk source is not congestion controlled (a UDP flood at 25 Mbit/s),
//! so this shows the queueing, not TCP's reaction to it; the simulator
//! (`tcran demo`) runs real TCP models.

use std::collections::VecDeque;
use std::net::{IpAddr, Ipv4Addr};
use tcran_core::{Duration, FiveTuple, FlowId, Instant, Packet, PacketId, Protocol};
use tcran_tc::{LowerLayerReport, Pipeline, PipelineConfig};

const VANILLA: &str = r#"
[[queues]]
id = 0
kind = "fifo"
limit_packets = 100000
"#;

const TC_RAN: &str = r#"
default_queue = 1
classifier = { kind = "filter", rules = [ { priority = 1, protocol = "udp", dst_port = 5060, queue = 0 } ] }
scheduler = { kind = "priority" }
pacer = { kind = "e5g_bdp" }

[[queues]]
id = 0
kind = "fifo"
priority = 0

[[queues]]
id = 1
kind = "codel"
target = "5ms"
interval = "100ms"
priority = 1
"#;

const TTI: Duration = Duration::from_millis(1);
const LINK_BYTES_PER_TTI: u64 = 2_500; // 20 Mbit/s
const RLC_LIMIT: u64 = 5_000_000; // OAI's default RLC buffer, bytes
const RUN: Duration = Duration::from_secs(10);

/// RLC transmit buffer + MAC: drains `LINK_BYTES_PER_TTI` per TTI, segmenting
/// the head packet; a packet is delivered when its last byte is sent.
struct Rlc {
    queue: VecDeque<(Packet, u64)>,
    bytes: u64,
    dropped: u64,
}

impl Rlc {
    fn enqueue(&mut self, p: Packet) {
        if self.bytes + p.len as u64 > RLC_LIMIT {
            self.dropped += 1;
            return;
        }
        self.bytes += p.len as u64;
        let len = p.len as u64;
        self.queue.push_back((p, len));
    }
    fn tti(&mut self, mut budget: u64, delivered: &mut Vec<Packet>) -> u64 {
        let start = budget;
        while budget > 0 {
            let Some((_, left)) = self.queue.front_mut() else {
                break;
            };
            let take = (*left).min(budget);
            *left -= take;
            budget -= take;
            self.bytes -= take;
            if *left == 0 {
                delivered.push(self.queue.pop_front().unwrap().0);
            }
        }
        start - budget
    }
}

struct Outcome {
    voip_delays_ms: Vec<f64>,
    bulk_bytes: u64,
    rlc_samples: Vec<u64>,
    pipeline_drops: u64,
    rlc_drops: u64,
}

fn tuple(sport: u16, dport: u16) -> FiveTuple {
    FiveTuple {
        src: IpAddr::V4(Ipv4Addr::new(203, 0, 113, 7)),
        dst: IpAddr::V4(Ipv4Addr::new(10, 45, 0, 2)),
        sport,
        dport,
        proto: Protocol::UDP,
    }
}

fn run(mut pipeline: Pipeline) -> Outcome {
    let mut rlc = Rlc {
        queue: VecDeque::new(),
        bytes: 0,
        dropped: 0,
    };
    let mut out = Outcome {
        voip_delays_ms: vec![],
        bulk_bytes: 0,
        rlc_samples: vec![],
        pipeline_drops: 0,
        rlc_drops: 0,
    };
    let mut id = 0;
    let mut delivered = Vec::new();
    let bulk_gap = Duration::from_nanos(480_000); // 1500 B every 0.48 ms = 25 Mbit/s
    let voip_gap = Duration::from_millis(20); // G.711: 172 B every 20 ms
    let (mut next_bulk, mut next_voip) = (Instant::ZERO, Instant::from_millis(3));
    // Sub-TTI ticks of 100 us: arrivals land between slots and the pacer
    // gets several forwarding opportunities per TTI (thesis Fig. 3.4).
    let tick = Duration::from_micros(100);
    let mut now = Instant::ZERO;
    let mut next_tti = Instant::ZERO + TTI;
    while now < Instant::ZERO + RUN {
        while next_bulk <= now {
            id += 1;
            let mut p = Packet::new(PacketId(id), 1500, tuple(443, 40000), next_bulk);
            p.flow = Some(FlowId(0));
            pipeline.push(p, now);
            next_bulk += bulk_gap;
        }
        while next_voip <= now {
            id += 1;
            let mut p = Packet::new(PacketId(id), 172, tuple(5060, 5060), next_voip);
            p.flow = Some(FlowId(1));
            pipeline.push(p, now);
            next_voip += voip_gap;
        }
        while let Some(p) = pipeline.pull(now) {
            rlc.enqueue(p);
        }
        if now >= next_tti {
            let pulled = rlc.tti(LINK_BYTES_PER_TTI, &mut delivered);
            for p in delivered.drain(..) {
                match p.flow {
                    Some(FlowId(1)) => out
                        .voip_delays_ms
                        .push(now.saturating_since(p.created).as_millis_f64()),
                    _ => out.bulk_bytes += p.len as u64,
                }
            }
            pipeline.on_report(
                &LowerLayerReport {
                    tti: TTI,
                    backlog_bytes: rlc.bytes,
                    backlog_sdus: rlc.queue.len() as u32,
                    pulled_bytes: pulled,
                    granted_bytes: LINK_BYTES_PER_TTI,
                    max_bytes: LINK_BYTES_PER_TTI,
                    ..LowerLayerReport::default()
                },
                now,
            );
            out.rlc_samples.push(rlc.bytes);
            next_tti += TTI;
        }
        out.pipeline_drops += pipeline.drain_dropped().count() as u64;
        now += tick;
    }
    out.rlc_drops = rlc.dropped;
    out
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    println!(
        "tcran pipeline demo: 20 Mbit/s link, 1 ms TTI, 10 s; bulk UDP at 25 Mbit/s + G.711 VoIP\n"
    );
    println!(
        "{:<10} {:>10} {:>10} {:>10} {:>10} {:>12} {:>14} {:>10}",
        "pipeline",
        "voip mean",
        "voip p95",
        "voip max",
        "bulk",
        "rlc mean",
        "drops tc/rlc",
        "link use"
    );
    for (name, cfg) in [("vanilla", VANILLA), ("tc-ran", TC_RAN)] {
        let config: PipelineConfig = toml::from_str(cfg).expect("demo config");
        let o = run(config.build().expect("demo pipeline"));
        let mut d = o.voip_delays_ms.clone();
        d.sort_by(f64::total_cmp);
        let mean = d.iter().sum::<f64>() / d.len() as f64;
        let secs = RUN.as_secs_f64();
        let rlc_mean = o.rlc_samples.iter().sum::<u64>() as f64 / o.rlc_samples.len() as f64;
        let link_use = (o.bulk_bytes as f64 + d.len() as f64 * 172.0)
            / (LINK_BYTES_PER_TTI as f64 * secs * 1000.0);
        println!(
            "{:<10} {:>8.1}ms {:>8.1}ms {:>8.1}ms {:>6.1}Mb/s {:>10.0}kB {:>8}/{:<5} {:>9.1}%",
            name,
            mean,
            percentile(&d, 0.95),
            percentile(&d, 1.0),
            o.bulk_bytes as f64 * 8.0 / secs / 1e6,
            rlc_mean / 1e3,
            o.pipeline_drops,
            o.rlc_drops,
            100.0 * link_use
        );
    }
    println!("\nThe vanilla bearer fills the RLC buffer and the call waits behind it;");
    println!("TC-RAN keeps the RLC buffer near one TTI and lets the call overtake the bulk data.");
}
