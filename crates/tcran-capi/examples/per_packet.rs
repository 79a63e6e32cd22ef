//! Instructions per packet, independent of machine load: runs TTIs of the
//! `make bench` workload through one interface, for `valgrind
//! --tool=callgrind` (docs/performance.md). Two runs with different TTI
//! counts cancel the set-up: Ir per packet = (Ir2 - Ir1) / (16 (TTI2 - TTI1)).
//!
//! cargo build --release -p tcran-capi --example per_packet
//! valgrind --tool=callgrind target/release/examples/per_packet a c_abi 2000
//!
//! Pipelines: `a` and `b` of `make bench`; `prio`, (a) with the built-in
//! strict-priority scheduler; `prio_plugin`, the same with the C plug-in
//! of examples/c (its path in `TCRAN_PRIO_PLUGIN`); `none`, (a) without a
//! pacer; `noop_pacer`, the same with a plug-in pacer that admits
//! everything (the cost of calling a plug-in: `admits` and `forwarded` per
//! packet, `report` per TTI).

#![allow(unsafe_code)]

#[path = "../benches/driver.rs"]
mod driver;

use driver::Way;
use std::ffi::c_void;
use tcran::plugin::abi::*;
use tcran::types::{tcran_rlc_report, tcran_status};
use tcran::{tcran_plugins_new, tcran_plugins_register, tcran_plugins_t};
use tcran_tc::workload::{FIFO_RR_BDP, FQ_CODEL_E5G};

const NONE: &str = "[[queues]]\nid = 0\nkind = \"fifo\"\n";
const NOOP_PACER: &str =
    "pacer = { kind = \"plugin\", symbol = \"noop\" }\n[[queues]]\nid = 0\nkind = \"fifo\"\n";

unsafe extern "C" fn admit_all(_: *mut c_void, _: u32, _: u64, _: u64, _: u32) -> u32 {
    TCRAN_PACER_ADMIT
}
unsafe extern "C" fn forwarded(_: *mut c_void, _: u32, _: u64) {}
unsafe extern "C" fn report(_: *mut c_void, _: *const tcran_rlc_report, _: u64) {}

/// A registry with the pacer "noop": every function present, none doing work.
fn noop_registry() -> *mut tcran_plugins_t {
    let ops = tcran_pacer_ops {
        header: tcran_plugin_header {
            abi_version: TCRAN_PLUGIN_ABI_VERSION,
            stage: TCRAN_STAGE_PACER,
            name: c"noop".as_ptr(),
            create: None,
            destroy: None,
        },
        admits: Some(admit_all),
        forwarded: Some(forwarded),
        report: Some(report),
        sdu_departed: None,
        status_pdu: None,
        next_wakeup: None,
        stats: None,
    };
    let mut p = std::ptr::null_mut();
    unsafe {
        assert_eq!(tcran_plugins_new(&mut p), tcran_status::TCRAN_OK);
        // tcran copies the table.
        assert_eq!(
            tcran_plugins_register(p, c"noop".as_ptr(), &ops.header),
            tcran_status::TCRAN_OK
        );
    }
    p
}

const PRIO: &str =
    "scheduler = { kind = \"priority\" }\npacer = { kind = \"bdp\" }\n[[queues]]\nid = 0\nkind = \"fifo\"\n";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage =
        "usage: per_packet a|b|prio|prio_plugin rust_metadata|rust_bytes|c_abi|c_abi_pull_each TTIS";
    let plugin = format!(
        "scheduler = {{ kind = \"plugin\", path = \"{}\", symbol = \"tcran_prio_scheduler\" }}\n\
         pacer = {{ kind = \"bdp\" }}\n[[queues]]\nid = 0\nkind = \"fifo\"\n",
        std::env::var("TCRAN_PRIO_PLUGIN").unwrap_or_default()
    );
    let [_, pipeline, way, ttis] = &args[..] else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let (cfg, flows) = match pipeline.as_str() {
        "a" => (FIFO_RR_BDP, 1),
        "b" => (FQ_CODEL_E5G, 10_000),
        "prio" => (PRIO, 1),
        "prio_plugin" => (plugin.as_str(), 1),
        "none" => (NONE, 1),
        "noop_pacer" => (NOOP_PACER, 1),
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    let Ok(ttis) = ttis.parse::<u32>() else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    if !Way::NAMES.contains(&way.as_str()) {
        eprintln!("{usage}");
        std::process::exit(2);
    }
    let plugins = if pipeline == "noop_pacer" {
        noop_registry()
    } else {
        std::ptr::null_mut()
    };
    let mut w = Way::with_plugins(way, cfg, flows, plugins);
    (0..ttis).for_each(|_| w.tti());
}
