//! Reference workloads shared by the benchmarks, the allocation test and the
//! demo: a fake RLC/MAC that drains a fixed number of bytes per TTI and
//! reports after each pull, as a gNB would.

use crate::{LowerLayerReport, Pipeline, PipelineConfig};
use std::net::{IpAddr, Ipv4Addr};
use tcran_core::{Duration, FiveTuple, FlowId, Instant, Packet, PacketId, Protocol};

/// Benchmark (a): one FIFO, round robin, 5G-BDP pacer.
pub const FIFO_RR_BDP: &str = r#"
scheduler = { kind = "round_robin" }
pacer = { kind = "bdp" }
[[queues]]
id = 0
kind = "fifo"
"#;

/// Benchmark (b): FQ-CoDel composed from stages (TC-RAN sec. IV-B (i)):
/// flow hash into 1024 CoDel queues, DRR++, e5G-BDP.
pub const FQ_CODEL_E5G: &str = r#"
classifier = { kind = "flow_hash", first_queue = 0, buckets = 1024 }
scheduler = { kind = "drr", quantum = "1500B" }
pacer = { kind = "e5g_bdp" }
limit_packets = 10240
[[queues]]
id = 0
count = 1024
kind = "codel"
target = "5ms"
interval = "100ms"
"#;

pub fn config(text: &str) -> PipelineConfig {
    toml::from_str(text).expect("reference workload config parses")
}

/// `n` distinct UDP flows (different source port/address), one template
/// packet each.
pub fn flow_templates(n: usize, len: u32) -> Vec<Packet> {
    (0..n)
        .map(|i| {
            let tuple = FiveTuple {
                src: IpAddr::V4(Ipv4Addr::new(10, (i >> 16) as u8, (i >> 8) as u8, i as u8)),
                dst: IpAddr::V4(Ipv4Addr::new(10, 45, 0, 2)),
                sport: 1024 + (i % 60_000) as u16,
                dport: 5001,
                proto: Protocol::UDP,
            };
            let mut p = Packet::new(PacketId(0), len, tuple, Instant::ZERO);
            p.flow = Some(FlowId(i as u32));
            p
        })
        .collect()
}

/// Drives a pipeline like a gNB: packets arrive evenly spread over each TTI
/// (round robin over the flows), after each arrival the egress pulls until
/// the pacer says no, and at the end of the TTI the RLC drains `capacity`
/// bytes and reports.
#[derive(Debug)]
pub struct Driver {
    pub now: Instant,
    pub tti: Duration,
    pub capacity: u64,
    /// Time between arrivals (TTI / packets per TTI).
    gap: Duration,
    tti_start: Instant,
    rlc_bytes: u64,
    next_id: u64,
    next_flow: usize,
    pub forwarded: u64,
}

impl Driver {
    pub fn new(tti: Duration, capacity: u64, per_tti: u32) -> Driver {
        Driver {
            now: Instant::ZERO,
            tti,
            capacity,
            gap: Duration::from_nanos(tti.as_nanos() / per_tti.max(1) as u64),
            tti_start: Instant::ZERO,
            rlc_bytes: 0,
            next_id: 0,
            next_flow: 0,
            forwarded: 0,
        }
    }

    /// Pushes the next packet (round-robin over `flows`), pulls while the
    /// pipeline lets packets go, and moves time on to the next arrival.
    #[inline]
    pub fn push_pull(&mut self, p: &mut Pipeline, flows: &[Packet]) {
        let mut pkt = flows[self.next_flow].clone();
        self.next_flow = (self.next_flow + 1) % flows.len();
        self.next_id += 1;
        pkt.id = PacketId(self.next_id);
        pkt.created = self.now;
        p.push(pkt, self.now);
        while let Some(out) = p.pull(self.now) {
            self.rlc_bytes += out.len as u64;
            self.forwarded += 1;
        }
        self.now += self.gap;
    }

    /// Ends the TTI: the MAC drains up to `capacity` bytes and reports.
    pub fn end_tti(&mut self, p: &mut Pipeline) {
        let pulled = self.rlc_bytes.min(self.capacity);
        self.rlc_bytes -= pulled;
        self.tti_start += self.tti;
        self.now = self.tti_start;
        p.on_report(
            &LowerLayerReport {
                tti: self.tti,
                backlog_bytes: self.rlc_bytes,
                backlog_sdus: (self.rlc_bytes / 1500) as u32,
                pulled_bytes: pulled,
                granted_bytes: self.capacity,
                max_bytes: self.capacity,
                ..LowerLayerReport::default()
            },
            self.now,
        );
        p.drain_dropped().for_each(drop);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The benchmark measures a working bearer, not an overloaded one: in
    /// steady state almost every arriving packet is forwarded and the TC
    /// queues stay short.
    #[test]
    fn reference_workloads_forward_their_load_in_steady_state() {
        for (cfg, flows) in [(FIFO_RR_BDP, 1), (FQ_CODEL_E5G, 10_000)] {
            let templates = flow_templates(flows, 1500);
            let mut p = config(cfg).build().unwrap();
            let mut d = Driver::new(Duration::from_millis(1), 17 * 1500, 16);
            for _ in 0..2_000 {
                for _ in 0..16 {
                    d.push_pull(&mut p, &templates);
                }
                d.end_tti(&mut p);
            }
            let (f0, t0) = (d.forwarded, p.totals());
            for _ in 0..2_000 {
                for _ in 0..16 {
                    d.push_pull(&mut p, &templates);
                }
                d.end_tti(&mut p);
            }
            let t1 = p.totals();
            let forwarded = (d.forwarded - f0) as f64 / 32_000.0;
            assert!(forwarded > 0.95, "{cfg}: forwarded {forwarded}");
            assert_eq!(
                t1.dropped_packets, t0.dropped_packets,
                "{cfg}: drops in steady state"
            );
            assert!(
                p.queued_packets() < 200,
                "{cfg}: standing queue {}",
                p.queued_packets()
            );
        }
    }
}
