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

#[path = "driver.rs"]
mod driver;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use driver::{Way, PER_TTI};
use tcran_tc::workload::{FIFO_RR_BDP, FQ_CODEL_E5G};

fn run(c: &mut Criterion, name: &str, cfg: &str, n_flows: usize) {
    let mut g = c.benchmark_group(format!("capi_{name}"));
    g.throughput(Throughput::Elements(PER_TTI as u64));
    g.sample_size(20)
        .measurement_time(std::time::Duration::from_secs(4));
    for way in Way::NAMES {
        g.bench_function(way, |b| {
            let mut w = Way::new(way, cfg, n_flows);
            (0..20_000).for_each(|_| w.tti());
            b.iter_batched_ref(|| (), |_| w.tti(), BatchSize::SmallInput);
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
