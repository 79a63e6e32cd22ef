//! The workload of `make bench` driven through each interface, shared by
//! the criterion bench (`benches/capi.rs`) and the instruction-count
//! example (`examples/per_packet.rs`).
#![allow(unsafe_code, dead_code)]

use std::ptr::null_mut;
use tcran::types::*;
use tcran::*;
use tcran_core::{Duration, Instant, PacketId};
use tcran_tc::workload::{config, flow_templates, Driver};
use tcran_tc::{LowerLayerReport, Pipeline};
use tcran_wire::{build_ipv4_udp, Ipv4Spec};

pub(crate) const PER_TTI: usize = 16;
pub(crate) const LEN: usize = 1500;
pub(crate) const TTI_NS: u64 = 1_000_000;
pub(crate) const CAPACITY: u64 = (PER_TTI as u64 + 1) * LEN as u64;

pub(crate) fn packets(flows: usize) -> Vec<Vec<u8>> {
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
pub(crate) struct Gnb {
    now: u64,
    tti_start: u64,
    rlc_bytes: u64,
    next: usize,
    tag: u64,
    out: Vec<u8>,
}

impl Default for Gnb {
    fn default() -> Gnb {
        Gnb::new()
    }
}

impl Gnb {
    pub(crate) fn new() -> Gnb {
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
            ..Default::default()
        }
    }
}

pub(crate) fn rust_bytes_tti(p: &mut Pipeline, g: &mut Gnb, flows: &[Vec<u8>]) {
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
            ..LowerLayerReport::default()
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

pub(crate) fn c_tti(tc: *mut tcran_t, g: &mut Gnb, flows: &[Vec<u8>], each: bool) {
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

/// One of the four ways through, ready to run TTIs.
pub(crate) enum Way {
    RustMetadata(Pipeline, Driver, Vec<tcran_core::Packet>),
    RustBytes(Pipeline, Gnb, Vec<Vec<u8>>),
    CAbi(*mut tcran_t, Gnb, Vec<Vec<u8>>, bool),
}

impl Way {
    pub(crate) const NAMES: [&'static str; 4] =
        ["rust_metadata", "rust_bytes", "c_abi", "c_abi_pull_each"];

    pub(crate) fn new(name: &str, cfg: &str, n_flows: usize) -> Way {
        Way::with_plugins(name, cfg, n_flows, std::ptr::null())
    }

    /// A way whose C-ABI instance resolves plug-ins in `plugins`.
    pub(crate) fn with_plugins(
        name: &str,
        cfg: &str,
        n_flows: usize,
        plugins: *const tcran_plugins_t,
    ) -> Way {
        match name {
            "rust_metadata" => Way::RustMetadata(
                config(cfg).build().unwrap(),
                Driver::new(Duration::from_millis(1), CAPACITY, PER_TTI as u32),
                flow_templates(n_flows, LEN as u32),
            ),
            "rust_bytes" => {
                Way::RustBytes(config(cfg).build().unwrap(), Gnb::new(), packets(n_flows))
            }
            "c_abi" | "c_abi_pull_each" => {
                let mut tc = null_mut();
                let s = unsafe {
                    tcran_new(
                        cfg.as_ptr().cast(),
                        cfg.len(),
                        TCRAN_FORMAT_TOML,
                        1,
                        1,
                        plugins,
                        &mut tc,
                    )
                };
                assert_eq!(s, tcran_status::TCRAN_OK);
                Way::CAbi(tc, Gnb::new(), packets(n_flows), name == "c_abi_pull_each")
            }
            other => panic!("no way {other}"),
        }
    }

    pub(crate) fn tti(&mut self) {
        match self {
            Way::RustMetadata(p, d, templates) => {
                for _ in 0..PER_TTI {
                    d.push_pull(p, templates);
                }
                d.end_tti(p);
            }
            Way::RustBytes(p, g, flows) => rust_bytes_tti(p, g, flows),
            Way::CAbi(tc, g, flows, each) => c_tti(*tc, g, flows, *each),
        }
    }
}

impl Drop for Way {
    fn drop(&mut self) {
        if let Way::CAbi(tc, ..) = self {
            unsafe { tcran_free(*tc) };
        }
    }
}
