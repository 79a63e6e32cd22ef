//! The plug-in ABI of `tcran.h`: one ops table per stage kind, Linux
//! `Qdisc_ops` style (function pointers plus an opaque state the plug-in
//! allocates in `create` and frees in `destroy`).
//!
//! Every table starts with a [`tcran_plugin_header`] whose `abi_version`
//! and `stage` tcran checks before it reads the rest, so a wrong symbol, a
//! table of another stage or of another ABI version is a config error, not
//! a crash. Optional functions may be NULL.
//!
//! Contract a plug-in keeps (tcran keeps its side: see `tcran.h`):
//! - its functions do not unwind (no C++ exception escapes them);
//! - its state is used by one thread at a time, not always the same one
//!   (the instance's lock orders the calls);
//! - pointers it is given are valid only during the call.
#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void};

/// `abi_version` of this header: "TC" and version 1. A table with another
/// value is refused.
pub const TCRAN_PLUGIN_ABI_VERSION: u32 = 0x5443_0001;

/// `stage` of a plug-in header.
pub const TCRAN_STAGE_CLASSIFIER: u32 = 1;
pub const TCRAN_STAGE_QUEUE: u32 = 2;
pub const TCRAN_STAGE_SCHEDULER: u32 = 3;
pub const TCRAN_STAGE_PACER: u32 = 4;

/// A queue plug-in's verdict on a packet: keep it (and, at dequeue, send
/// it).
pub const TCRAN_AQM_PASS: u32 = 0;
/// Verdict: drop the packet (counted with reason `plugin`).
pub const TCRAN_AQM_DROP: u32 = 1;
/// Verdict: set CE and keep the packet; a Not-ECT packet is dropped
/// instead (RFC 3168 sec. 5).
pub const TCRAN_AQM_MARK: u32 = 2;

/// A pacer plug-in's answer: the packet may not go down now.
pub const TCRAN_PACER_HOLD: u32 = 0;
/// The packet may go down now.
pub const TCRAN_PACER_ADMIT: u32 = 1;

/// A classifier or scheduler plug-in's "no queue": the default queue
/// (classifier) or nothing to send now (scheduler).
pub const TCRAN_NO_QUEUE: i32 = -1;

/// Creates a plug-in's state from its config `params` (NUL-terminated,
/// `params_len` bytes before the NUL). Returns the state, or NULL with a
/// NUL-terminated reason written to `err` (at most `err_cap` bytes).
pub type tcran_create_fn = Option<
    unsafe extern "C" fn(
        params: *const c_char,
        params_len: usize,
        err: *mut c_char,
        err_cap: usize,
    ) -> *mut c_void,
>;

/// Frees a plug-in's state.
pub type tcran_destroy_fn = Option<unsafe extern "C" fn(state: *mut c_void)>;

/// First member of every ops table.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct tcran_plugin_header {
    /// `TCRAN_PLUGIN_ABI_VERSION`.
    pub abi_version: u32,
    /// `TCRAN_STAGE_*`: which ops table follows.
    pub stage: u32,
    /// Short name, for messages and statistics (NUL-terminated).
    pub name: *const c_char,
    /// Optional: without it the state is NULL.
    pub create: tcran_create_fn,
    /// Optional.
    pub destroy: tcran_destroy_fn,
}

/// What a plug-in sees of a packet. Pointers are valid during the call only.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct tcran_packet_info {
    /// The bytes as pushed (SDAP header first if pushed with one).
    pub data: *const u8,
    pub data_len: u32,
    /// IP length (what queues and pacers count); `data_len` if malformed.
    pub len: u32,
    /// The caller's tag given to `tcran_push`.
    pub tag: u64,
    /// When it entered tcran, ns.
    pub enqueued_at_ns: u64,
    /// 4 or 6; 0 if malformed (then only `data`, `len`, `tag` and `qfi` mean anything).
    pub ip_version: u8,
    /// IP protocol number of the upper layer (6 TCP, 17 UDP, ...).
    pub protocol: u8,
    pub dscp: u8,
    /// ECN field: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE.
    pub ecn: u8,
    /// QFI of the SDAP header; 0 without one.
    pub qfi: u8,
    pub src_port: u16,
    pub dst_port: u16,
    /// Addresses in network byte order; IPv4 uses the first 4 bytes.
    pub src_addr: [u8; 16],
    pub dst_addr: [u8; 16],
}

/// The packets and bytes a queue holds.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct tcran_backlog {
    pub packets: u64,
    pub bytes: u64,
}

/// A classifier: which queue does a packet go to?
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct tcran_classifier_ops {
    pub header: tcran_plugin_header,
    /// Required. A queue id (0..8191) or `TCRAN_NO_QUEUE` for the default
    /// queue. A queue that does not exist sends the packet to the default
    /// queue (counted as `missing_queue`); any other value is an error,
    /// counted, and the packet goes to the default queue.
    pub classify:
        Option<unsafe extern "C" fn(state: *mut c_void, pkt: *const tcran_packet_info) -> i32>,
}

/// A queue: a FIFO that tcran keeps, with the plug-in's AQM deciding at
/// enqueue and at dequeue (how CoDel, PIE, RED and L4S ramps work). tcran
/// holds the packets, so a plug-in can neither lose nor leak one; the
/// pipeline's packet and byte limits apply before `enqueue`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct tcran_queue_ops {
    pub header: tcran_plugin_header,
    /// Optional: the verdict on an arriving packet, `backlog` not counting
    /// it. `TCRAN_AQM_*`; any other value is an error, counted, and the
    /// packet is kept.
    pub enqueue: Option<
        unsafe extern "C" fn(
            state: *mut c_void,
            pkt: *const tcran_packet_info,
            backlog: *const tcran_backlog,
            now_ns: u64,
        ) -> u32,
    >,
    /// Optional: the verdict on the head packet about to leave, `backlog`
    /// counting it. After a drop tcran asks again about the next head.
    /// `TCRAN_AQM_*`; any other value is an error, counted, and the packet
    /// leaves.
    pub dequeue: Option<
        unsafe extern "C" fn(
            state: *mut c_void,
            head: *const tcran_packet_info,
            backlog: *const tcran_backlog,
            now_ns: u64,
        ) -> u32,
    >,
    /// Optional: the current drop/mark probability for the statistics, or
    /// a negative value for none.
    pub probability: Option<unsafe extern "C" fn(state: *mut c_void) -> f64>,
}

/// Read-only facts about the queues, for a scheduler's `select`. Valid
/// during that call only; call the functions with `ctx`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct tcran_sched_view {
    pub ctx: *const c_void,
    /// Packets queue `queue` holds (0 if it does not exist).
    pub packets: unsafe extern "C" fn(ctx: *const c_void, queue: u16) -> u64,
    /// Bytes queue `queue` holds.
    pub bytes: unsafe extern "C" fn(ctx: *const c_void, queue: u16) -> u64,
    /// When the oldest packet of `queue` arrived, ns; `TCRAN_NO_WAKEUP` if empty.
    pub head_enqueued_at_ns: unsafe extern "C" fn(ctx: *const c_void, queue: u16) -> u64,
    /// 1 if `queue`'s shaper holds it back during this pull: pass it over.
    pub blocked: unsafe extern "C" fn(ctx: *const c_void, queue: u16) -> u8,
}

/// A scheduler: which queue does the next packet come from (TC-RAN's
/// `next_queue`)?
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct tcran_scheduler_ops {
    pub header: tcran_plugin_header,
    /// Optional: a queue was created, with its configured `priority`
    /// (0 first) and `weight`.
    pub queue_added:
        Option<unsafe extern "C" fn(state: *mut c_void, queue: u16, priority: u8, weight: u32)>,
    /// Optional: a queue was deleted.
    pub queue_removed: Option<unsafe extern "C" fn(state: *mut c_void, queue: u16)>,
    /// Optional: a queue went from empty to backlogged.
    pub backlogged: Option<unsafe extern "C" fn(state: *mut c_void, queue: u16)>,
    /// Required: the queue to take the next packet from, or `TCRAN_NO_QUEUE`
    /// for none. It must hold packets and not be `blocked`; any other
    /// answer is an error, counted, and tcran takes the lowest-numbered
    /// queue that qualifies instead, so a faulty scheduler never stalls
    /// the bearer.
    pub select: Option<
        unsafe extern "C" fn(state: *mut c_void, now_ns: u64, view: *const tcran_sched_view) -> i32,
    >,
    /// Optional: a packet of `len` bytes from `queue` went down.
    pub sent: Option<unsafe extern "C" fn(state: *mut c_void, queue: u16, len: u32)>,
    /// Optional: the selected queue turned out empty (its AQM dropped all).
    pub empty: Option<unsafe extern "C" fn(state: *mut c_void, queue: u16)>,
}

/// What a pacer reports for the statistics.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct tcran_pacer_stats {
    /// Estimated bandwidth, bytes per second.
    pub bandwidth_bps: f64,
    /// Bytes it would let through now (or its current limit).
    pub allowance_bytes: f64,
    /// Its buffer limit if it has one, else negative.
    pub limit: f64,
}

/// A pacer: may the next packet go down to PDCP/RLC now?
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct tcran_pacer_ops {
    pub header: tcran_plugin_header,
    /// Required: `TCRAN_PACER_ADMIT` or `TCRAN_PACER_HOLD` for a packet of
    /// `len` bytes, given what the RLC buffer holds by tcran's count (last
    /// report plus what went down since). Any other value is an error,
    /// counted, and admits (as pacer `none` would).
    pub admits: Option<
        unsafe extern "C" fn(
            state: *mut c_void,
            len: u32,
            now_ns: u64,
            lower_bytes: u64,
            lower_sdus: u32,
        ) -> u32,
    >,
    /// Optional: a packet of `len` bytes went down.
    pub forwarded: Option<unsafe extern "C" fn(state: *mut c_void, len: u32, now_ns: u64)>,
    /// Optional: the per-TTI RLC report.
    pub report: Option<
        unsafe extern "C" fn(
            state: *mut c_void,
            report: *const crate::types::tcran_rlc_report,
            now_ns: u64,
        ),
    >,
    /// Optional: an RLC SDU left the RLC buffer after `sojourn_ns`.
    pub sdu_departed:
        Option<unsafe extern "C" fn(state: *mut c_void, sojourn_ns: u64, now_ns: u64)>,
    /// Optional: an RLC AM status PDU arrived.
    pub status_pdu: Option<unsafe extern "C" fn(state: *mut c_void, now_ns: u64)>,
    /// Optional: when the pacer will change its mind with time alone, ns,
    /// or `TCRAN_NO_WAKEUP`. A time not after `now_ns` is an error, counted,
    /// and ignored.
    pub next_wakeup: Option<unsafe extern "C" fn(state: *mut c_void, now_ns: u64) -> u64>,
    /// Optional: statistics (not-finite numbers are errors, counted, shown as 0).
    pub stats: Option<unsafe extern "C" fn(state: *mut c_void, out: *mut tcran_pacer_stats)>,
}
