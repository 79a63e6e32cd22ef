//! The hot path allocates nothing once buffers have grown to the working set
#![allow(unsafe_code)] // a GlobalAlloc impl is unsafe by definition
//! (ARCHITECTURE.md principle 6). A counting global allocator proves it for
//! both benchmark pipelines.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use tcran_core::Duration;
use tcran_tc::workload::{config, flow_templates, Driver, FIFO_RR_BDP, FQ_CODEL_E5G};

struct Counting;

thread_local! {
    // Per thread, so tests running in parallel do not count each other.
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
}

fn allocations() -> u64 {
    ALLOCS.with(Cell::get)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations in each of three consecutive windows of 20,000 TTIs (320,000
/// packets each) after a warm-up. Buffers grow to their high-water mark and
/// stay there: a queue of a 1024-bucket bank can meet a new, slightly deeper
/// backlog late in the run and grow its buffer once, but nothing allocates
/// per packet, so the last window must be clean.
fn allocations_in_steady_state(cfg: &str, flows: usize) -> [u64; 3] {
    let templates = flow_templates(flows, 1500);
    let mut p = config(cfg).build().unwrap();
    let mut d = Driver::new(Duration::from_millis(1), 17 * 1500, 16);
    let mut run = |ttis: usize| {
        let before = allocations();
        for _ in 0..ttis {
            for _ in 0..16 {
                d.push_pull(&mut p, &templates);
            }
            d.end_tti(&mut p);
        }
        allocations() - before
    };
    run(20_000);
    [run(20_000), run(20_000), run(20_000)]
}

#[test]
fn fifo_rr_bdp_allocates_nothing_per_packet() {
    assert_eq!(allocations_in_steady_state(FIFO_RR_BDP, 1), [0, 0, 0]);
}

#[test]
fn fq_codel_e5g_bdp_allocates_nothing_per_packet() {
    let windows = allocations_in_steady_state(FQ_CODEL_E5G, 10_000);
    // At most a few one-off buffer growths over 960,000 packets, none last.
    assert!(windows.iter().sum::<u64>() <= 8, "{windows:?}");
    assert_eq!(windows[2], 0, "{windows:?}");
}
