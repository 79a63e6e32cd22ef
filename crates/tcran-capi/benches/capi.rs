//! What the C ABI adds per packet (docs/performance.md), measured side by
//! side under the same conditions on the workload of `make bench`
//! (`tcran_tc::workload`: 16 packets of 1500 bytes per 1-ms TTI, one push
//! and the pulls after it per element, the per-TTI report included):
//!
//! - `rust_metadata`: the pipeline in Rust on metadata-only packets (what
//!   `make bench` measures);
//! - `rust_bytes`: the pipeline in Rust on real bytes, as a Rust gNB would
//!   use it: copy the packet into tcran (`packet_from_bytes`, which parses
//!   it), push, pull, copy each pulled packet out;
//! - `c_abi`: the same through the C entry points (`tcran_push`, then
//!   `tcran_pull` into a buffer until `TCRAN_EMPTY`);
//! - `c_abi_pull_each`: the same with `tcran_pull_each` (one call per egress).
#![allow(unsafe_code)]

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use std::ptr::null_mut;
use tcran::types::*;
use tcran::*;
use tcran_core::{Duration, Instant, PacketId};
use tcran_tc::workload::{config, flow_templates, Driver, FIFO_RR_BDP, FQ_CODEL_E5G};
use tcran_tc::{LowerLayerReport, Pipeline};
use tcran_wire::{build_ipv4_udp, Ipv4Spec};

const PER_TTI: usize = 16;
const LEN: usize = 1500;
const TTI_NS: u64 = 1_000_000;
const CAPACITY: u64 = (PER_TTI as u64 + 1) * LEN as u64;

fn packets(flows: usize) -> Vec<Vec<u8>> {
    (0..flows)
        .map(|i| {
            let src = [10, (i >> 16) as u8, (i >> 8) as u8, i as u8];
            let ip = Ipv4Spec::new(src.into(), [10, 45, 0, 2].into());
            let sport = 1024 + (i % 60_000) as u16;
            build_ipv4_udp(&ip, sport, 5001, &[0u8; LEN - 28]).unwrap()
        })
        .collect()
}

/// The gNB side of the workload: time, the toy RLC and the flows.
struct Gnb {
    now: u64,
    tti_start: u64,
    rlc_bytes: u64,
    next: usize,
    tag: u64,
    out: Vec<u8>,
}

impl Gnb {
    fn new() -> Gnb {
        Gnb {
            now: 0,
            tti_start: 0,
            rlc_bytes: 0,
            next: 0,
            tag: 0,
            out: vec![0; TCRAN_MAX_PACKET as usize],
        }
    }
    fn next_packet<'a>(&mut self, flows: &'a [Vec<u8>]) -> &'a [u8] {
        let p = &flows[self.next];
        self.next = (self.next + 1) % flows.len();
        self.tag += 1;
        p
    }
    fn end_tti(&mut self) -> tcran_rlc_report {
        let pulled = self.rlc_bytes.min(CAPACITY);
        self.rlc_bytes -= pulled;
        self.tti_start += TTI_NS;
        self.now = self.tti_start;
        tcran_rlc_report {
            tti_ns: TTI_NS,
            backlog_bytes: self.rlc_bytes,
            backlog_sdus: (self.rlc_bytes / LEN as u64) as u32,
            pulled_bytes: pulled,
            granted_bytes: CAPACITY,
            max_bytes: CAPACITY,
        }
    }
}

fn rust_bytes_tti(p: &mut Pipeline, g: &mut Gnb, flows: &[Vec<u8>]) {
    for _ in 0..PER_TTI {
        let bytes = g.next_packet(flows);
        let now = Instant::from_nanos(g.now);
        let pkt = tcran_wire::packet_from_bytes(PacketId(g.tag), Box::from(bytes), false, now);
        p.push(pkt, now);
        while let Some(out) = p.pull(now) {
            let b = out.payload.as_deref().unwrap();
            g.out[..b.len()].copy_from_slice(b);
            g.rlc_bytes += b.len() as u64;
        }
        g.now += TTI_NS / PER_TTI as u64;
    }
    let r = g.end_tti();
    p.on_report(
        &LowerLayerReport {
            tti: Duration::from_nanos(r.tti_ns),
            backlog_bytes: r.backlog_bytes,
            backlog_sdus: r.backlog_sdus,
            pulled_bytes: r.pulled_bytes,
            granted_bytes: r.granted_bytes,
            max_bytes: r.max_bytes,
        },
        Instant::from_nanos(g.now),
    );
    p.drain_dropped().for_each(drop);
}

unsafe extern "C" fn count(
    ctx: *mut std::ffi::c_void,
    _: *const u8,
    len: usize,
    _: *const tcran_packet_out,
) -> i32 {
    unsafe { *ctx.cast::<u64>() += len as u64 };
    0
}

fn c_tti(tc: *mut tcran_t, g: &mut Gnb, flows: &[Vec<u8>], each: bool) {
    for _ in 0..PER_TTI {
        let bytes = g.next_packet(flows);
        unsafe {
            tcran_push(tc, bytes.as_ptr(), bytes.len(), 0, g.tag, g.now, null_mut());
            if each {
                let ctx = (&mut g.rlc_bytes as *mut u64).cast();
                tcran_pull_each(tc, g.now, 0, Some(count), ctx, null_mut());
            } else {
                let mut m = tcran_packet_out::default();
                while tcran_pull(tc, g.now, g.out.as_mut_ptr(), g.out.len(), &mut m)
                    == tcran_status::TCRAN_OK
                {
                    g.rlc_bytes += m.len as u64;
                }
            }
        }
        g.now += TTI_NS / PER_TTI as u64;
    }
    let r = g.end_tti();
    unsafe { tcran_on_report(tc, &r, g.now) };
}

fn run(c: &mut Criterion, name: &str, cfg: &str, n_flows: usize) {
    let mut g = c.benchmark_group(format!("capi_{name}"));
    g.throughput(Throughput::Elements(PER_TTI as u64));
    g.sample_size(20)
        .measurement_time(std::time::Duration::from_secs(4));
    let warm = 20_000;

    g.bench_function("rust_metadata", |b| {
        let templates = flow_templates(n_flows, LEN as u32);
        let mut p = config(cfg).build().unwrap();
        let mut d = Driver::new(Duration::from_millis(1), CAPACITY, PER_TTI as u32);
        let mut tti = |p: &mut Pipeline| {
            for _ in 0..PER_TTI {
                d.push_pull(p, &templates);
            }
            d.end_tti(p);
        };
        (0..warm).for_each(|_| tti(&mut p));
        b.iter_batched_ref(|| (), |_| tti(&mut p), BatchSize::SmallInput);
    });

    let flows = packets(n_flows);
    g.bench_function("rust_bytes", |b| {
        let mut p = config(cfg).build().unwrap();
        let mut gnb = Gnb::new();
        (0..warm).for_each(|_| rust_bytes_tti(&mut p, &mut gnb, &flows));
        b.iter_batched_ref(
            || (),
            |_| rust_bytes_tti(&mut p, &mut gnb, &flows),
            BatchSize::SmallInput,
        );
    });

    for (label, each) in [("c_abi", false), ("c_abi_pull_each", true)] {
        g.bench_function(label, |b| {
            let mut tc = null_mut();
            let s = unsafe {
                tcran_new(
                    cfg.as_ptr().cast(),
                    cfg.len(),
                    TCRAN_FORMAT_TOML,
                    1,
                    1,
                    std::ptr::null(),
                    &mut tc,
                )
            };
            assert_eq!(s, tcran_status::TCRAN_OK);
            let mut gnb = Gnb::new();
            (0..warm).for_each(|_| c_tti(tc, &mut gnb, &flows, each));
            b.iter_batched_ref(
                || (),
                |_| c_tti(tc, &mut gnb, &flows, each),
                BatchSize::SmallInput,
            );
            unsafe { tcran_free(tc) };
        });
    }
    g.finish();
}

fn benches(c: &mut Criterion) {
    run(c, "a_fifo_rr_bdp", FIFO_RR_BDP, 1);
    run(
        c,
        "b_fq_codel_1024_drr_e5g_bdp_10k_flows",
        FQ_CODEL_E5G,
        10_000,
    );
}

criterion_group!(capi, benches);
criterion_main!(capi);
