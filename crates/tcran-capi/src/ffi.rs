//! The `extern "C"` entry points of `tcran.h`. Each one checks its
//! pointers and lengths, runs its body in [`guard`] (errors become codes
//! and the thread's last error; panics never unwind into C) and calls the
//! safe [`Instance`].
//!
//! # Safety
//! One contract for every function, stated here and in tcran.h rather than
//! on each: a non-NULL pointer points to a live object of its type (an
//! instance or registry from its `_new`, not yet freed) or to as many
//! readable (writable, for outputs) bytes as its length argument says.
//! NULL pointers and lengths are checked.
#![allow(unsafe_code)] // The C ABI: raw pointers from the caller.
#![allow(clippy::missing_safety_doc)] // See "Safety" above.
#![allow(non_camel_case_types)] // C names, as the header spells them.

use crate::e2::E2Node;
use crate::error::{guard, guard_void, last_error_ptr, Error};
use crate::instance::Instance;
use crate::plugin::abi::tcran_plugin_header;
use crate::plugin::Registry;
use crate::types::*;
use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;
use tcran_core::DropReason;

/// A TC instance: the pipeline of one (RNTI, DRB). Opaque.
#[derive(Debug)]
pub struct tcran_t {
    /// Shared with the E2 node that serves it (`tcran_e2_add`), if any.
    inner: Arc<Instance>,
}

/// A running E2 node (`tcran_e2_start`). Opaque.
#[derive(Debug)]
pub struct tcran_e2_t {
    node: E2Node,
}

/// A registry of C plug-in ops tables. Opaque.
#[derive(Debug)]
pub struct tcran_plugins_t {
    registry: Arc<Registry>,
}

/// Longest config or control text taken (a pipeline config is a few kB).
const MAX_TEXT: usize = 16 << 20;

use tcran_status::*;

/// `&T` from a caller's pointer, or `TCRAN_ERR_NULL`.
///
/// # Safety
/// A non-NULL `p` must point to a live `T`.
unsafe fn reference<'a, T>(p: *const T, name: &str) -> Result<&'a T, Error> {
    // SAFETY: forwarded from the caller.
    unsafe { p.as_ref() }.ok_or_else(|| Error::null(name))
}

/// Writes `v` through an optional out pointer.
///
/// # Safety
/// A non-NULL `p` must be writable.
unsafe fn put<T>(p: *mut T, v: T) {
    if let Some(out) = unsafe { p.as_mut() } {
        *out = v;
    }
}

/// The caller's bytes, or an error for NULL or an absurd length.
///
/// # Safety
/// A non-NULL `p` must be readable for `len` bytes.
unsafe fn bytes<'a>(p: *const u8, len: usize, name: &str, max: usize) -> Result<&'a [u8], Error> {
    if p.is_null() {
        return Err(Error::null(name));
    }
    if len > max {
        return Err(Error::invalid(format!(
            "{name} length = {len}: at most {max} bytes"
        )));
    }
    // SAFETY: non-NULL, readable for `len` bytes by the contract, `len` bounded.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// The version of the library, e.g. "0.1.0".
#[no_mangle]
pub extern "C" fn tcran_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// What the last failed call on this thread went wrong with: one line
/// naming the argument or config field, the value and what is allowed.
/// Valid until the next failing call on this thread; "" if none failed.
#[no_mangle]
pub extern "C" fn tcran_last_error() -> *const c_char {
    last_error_ptr()
}

/// The name of a status code ("TCRAN_ERR_CONFIG"), "unknown" for others.
#[no_mangle]
pub extern "C" fn tcran_status_str(status: i32) -> *const c_char {
    let s: &'static str = match status {
        0 => "TCRAN_OK\0",
        1 => "TCRAN_EMPTY\0",
        -1 => "TCRAN_ERR_NULL\0",
        -2 => "TCRAN_ERR_INVALID\0",
        -3 => "TCRAN_ERR_PARSE\0",
        -4 => "TCRAN_ERR_CONFIG\0",
        -5 => "TCRAN_ERR_BUFFER_TOO_SMALL\0",
        -6 => "TCRAN_ERR_REENTRANT\0",
        -7 => "TCRAN_ERR_INTERNAL\0",
        _ => "unknown\0",
    };
    s.as_ptr().cast()
}

/// The label of a drop reason as the statistics spell it ("codel",
/// "queue_full"); "none" for `TCRAN_DROP_NONE`, "unknown" out of range.
#[no_mangle]
pub extern "C" fn tcran_drop_reason_str(reason: u32) -> *const c_char {
    // Labels with their NUL, built once per reason.
    static LABELS: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    let labels = LABELS.get_or_init(|| {
        DropReason::ALL
            .iter()
            .map(|r| format!("{}\0", r.label()).into_bytes())
            .collect()
    });
    match reason {
        0 => c"none".as_ptr(),
        r => labels
            .get(r as usize - 1)
            .map_or(c"unknown".as_ptr(), |l| l.as_ptr().cast()),
    }
}

// ------------------------------------------------------------------ plug-ins

/// Creates an empty plug-in registry in `*out`. Free it with
/// `tcran_plugins_free` whenever you like: instances keep what they use.
#[no_mangle]
pub unsafe extern "C" fn tcran_plugins_new(out: *mut *mut tcran_plugins_t) -> tcran_status {
    guard(|| {
        if out.is_null() {
            return Err(Error::null("out"));
        }
        let p = Box::new(tcran_plugins_t {
            registry: Arc::default(),
        });
        // SAFETY: `out` is non-NULL and writable by the contract.
        unsafe { *out = Box::into_raw(p) };
        Ok(TCRAN_OK)
    })
}

/// Frees a registry (NULL: nothing). Instances built with it keep working.
#[no_mangle]
pub unsafe extern "C" fn tcran_plugins_free(plugins: *mut tcran_plugins_t) {
    guard_void(|| {
        if !plugins.is_null() {
            // SAFETY: made by `tcran_plugins_new`, freed once by the contract.
            drop(unsafe { Box::from_raw(plugins) });
        }
    })
}

/// Registers the ops table `ops` (the `header` member of a
/// `tcran_classifier_ops`, `tcran_queue_ops`, `tcran_scheduler_ops` or
/// `tcran_pacer_ops`) under `name`, for configs that say
/// `kind = "plugin", symbol = "<name>"` without a `path`. tcran copies the
/// table; its functions must stay loaded while instances use them.
#[no_mangle]
pub unsafe extern "C" fn tcran_plugins_register(
    plugins: *mut tcran_plugins_t,
    name: *const c_char,
    ops: *const tcran_plugin_header,
) -> tcran_status {
    guard(|| {
        // SAFETY: pointers as the contract says, checked for NULL.
        let p = unsafe { reference(plugins, "plugins") }?;
        if name.is_null() {
            return Err(Error::null("name"));
        }
        if ops.is_null() {
            return Err(Error::null("ops"));
        }
        // SAFETY: `name` is NUL-terminated by the contract.
        let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
        // SAFETY: `ops` points to an ops table by the contract.
        unsafe { p.registry.register(&name, ops) }
            .map_err(|e| Error::new(TCRAN_ERR_CONFIG, format!("plug-in {name}: {e}")))?;
        Ok(TCRAN_OK)
    })
}

// ------------------------------------------------------------------ instance

/// Creates the TC instance of (`rnti`, `drb`) in `*out` from a pipeline
/// config (`config_len` bytes of TOML or JSON, see `TCRAN_FORMAT_*`).
/// `plugins` may be NULL. On error `*out` is NULL.
#[no_mangle]
pub unsafe extern "C" fn tcran_new(
    config: *const c_char,
    config_len: usize,
    format: u32,
    rnti: u16,
    drb: u8,
    plugins: *const tcran_plugins_t,
    out: *mut *mut tcran_t,
) -> tcran_status {
    guard(|| {
        if out.is_null() {
            return Err(Error::null("out"));
        }
        // SAFETY: `out` is writable.
        unsafe { *out = std::ptr::null_mut() };
        // SAFETY: readable for `config_len` bytes by the contract.
        let text = unsafe { bytes(config.cast(), config_len, "config", MAX_TEXT) }?;
        // SAFETY: NULL or a registry from `tcran_plugins_new`.
        let registry = unsafe { plugins.as_ref() }.map(|p| p.registry.clone());
        let inner = Instance::new(text, format, rnti, drb, registry)?;
        // SAFETY: `out` is writable.
        unsafe {
            *out = Box::into_raw(Box::new(tcran_t {
                inner: Arc::new(inner),
            }))
        };
        Ok(TCRAN_OK)
    })
}

/// Frees an instance and the packets it still holds (NULL: nothing).
/// No other call on it may run or follow.
#[no_mangle]
pub unsafe extern "C" fn tcran_free(tc: *mut tcran_t) {
    guard_void(|| {
        if !tc.is_null() {
            // SAFETY: made by `tcran_new`, freed once by the contract.
            drop(unsafe { Box::from_raw(tc) });
        }
    })
}

struct SendPtr(*mut c_void);
// SAFETY: the caller promises its callback context may be used from the
// threads that call tcran (docs/c-api.md).
unsafe impl Send for SendPtr {}
impl SendPtr {
    fn get(&self) -> *mut c_void {
        self.0
    }
}

/// Sets (or, with NULL, removes) the callback told of every dropped packet.
#[no_mangle]
pub unsafe extern "C" fn tcran_set_drop_callback(
    tc: *mut tcran_t,
    callback: tcran_drop_fn,
    ctx: *mut c_void,
) -> tcran_status {
    guard(|| {
        // SAFETY: NULL or an instance from `tcran_new`.
        let tc = unsafe { reference(tc, "tc") }?;
        let sink = callback.map(|f| {
            let ctx = SendPtr(ctx);
            Box::new(move |d: &tcran_core::Dropped| {
                let len = d
                    .packet
                    .payload
                    .as_deref()
                    .map_or(d.packet.len, |b| b.len() as u32);
                // SAFETY: the caller's callback with the caller's context.
                unsafe { f(ctx.get(), d.packet.id.0, len, d.reason.into()) }
            }) as crate::instance::DropSink
        });
        tc.inner.set_drop_sink(sink)?;
        Ok(TCRAN_OK)
    })
}

/// Ingress: tcran copies the `len` bytes at `data` (an IP packet, behind an
/// SDAP header with `TCRAN_PUSH_SDAP`); the caller keeps its buffer.
/// `tag` comes back with the packet (pull, drop callback). `result` may be
/// NULL. Bytes that are not an IP packet are carried too (`malformed`).
#[no_mangle]
pub unsafe extern "C" fn tcran_push(
    tc: *mut tcran_t,
    data: *const u8,
    len: usize,
    flags: u32,
    tag: u64,
    now_ns: u64,
    result: *mut tcran_push_result,
) -> tcran_status {
    guard(|| {
        // SAFETY: NULL or an instance from `tcran_new`.
        let tc = unsafe { reference(tc, "tc") }?;
        if len == 0 {
            return Err(Error::invalid("len = 0: a packet has at least one byte"));
        }
        // SAFETY: readable for `len` bytes by the contract.
        let packet = unsafe { bytes(data, len, "data", TCRAN_MAX_PACKET as usize) }?;
        let r = tc.inner.push(packet, flags, tag, now_ns)?;
        // SAFETY: NULL or writable.
        unsafe { put(result, r) };
        Ok(TCRAN_OK)
    })
}

/// Egress of one packet into `buf` (`cap` bytes; `TCRAN_MAX_PACKET` always
/// suffices). `TCRAN_OK`: `*out` describes it; `TCRAN_EMPTY`: nothing may
/// go now; `TCRAN_ERR_BUFFER_TOO_SMALL`: `out->len` is the size needed and
/// the packet stays first in line.
///
/// The BDP pacers size what goes from the RLC reports: until the first
/// `tcran_on_report`, `bdp` (5G-BDP) lets nothing go and `e5g_bdp` one
/// packet (to start its estimate): a pipeline with either pacer pulls
/// `TCRAN_EMPTY` until the MAC reports (docs/pacer.md).
#[no_mangle]
pub unsafe extern "C" fn tcran_pull(
    tc: *mut tcran_t,
    now_ns: u64,
    buf: *mut u8,
    cap: usize,
    out: *mut tcran_packet_out,
) -> tcran_status {
    guard(|| {
        // SAFETY: NULL or an instance from `tcran_new`.
        let tc = unsafe { reference(tc, "tc") }?;
        if out.is_null() {
            return Err(Error::null("out"));
        }
        if buf.is_null() && cap > 0 {
            return Err(Error::null("buf"));
        }
        // No packet is longer than TCRAN_MAX_PACKET: never look further.
        let cap = cap.min(TCRAN_MAX_PACKET as usize);
        let buf: &mut [u8] = if cap == 0 {
            &mut []
        } else {
            // SAFETY: non-NULL and writable for `cap` bytes by the contract.
            unsafe { std::slice::from_raw_parts_mut(buf, cap) }
        };
        let mut needed = 0;
        let r = tc.inner.pull(now_ns, buf, &mut needed);
        // SAFETY: `out` is non-NULL and writable.
        let out = unsafe { &mut *out };
        match r {
            Ok(Some(meta)) => {
                *out = meta;
                Ok(TCRAN_OK)
            }
            Ok(None) => {
                *out = tcran_packet_out::default();
                Ok(TCRAN_EMPTY)
            }
            Err(e) => {
                *out = tcran_packet_out {
                    len: needed,
                    ..Default::default()
                };
                Err(e)
            }
        }
    })
}

/// Egress through `callback`, packet after packet, until the pipeline says
/// stop, `max_packets` went (0: no limit) or the callback returns non-zero.
/// The packet's bytes are valid during its callback only (no copy is
/// made); the instance stays locked meanwhile. `*sent` (may be NULL) is
/// the number handed out.
/// As with `tcran_pull`, the `bdp` and `e5g_bdp` pacers let nothing (bdp)
/// or one packet (e5g_bdp) go until the first `tcran_on_report`.
#[no_mangle]
pub unsafe extern "C" fn tcran_pull_each(
    tc: *mut tcran_t,
    now_ns: u64,
    max_packets: usize,
    callback: tcran_egress_fn,
    ctx: *mut c_void,
    sent: *mut usize,
) -> tcran_status {
    guard(|| {
        // SAFETY: NULL or an instance from `tcran_new`.
        let tc = unsafe { reference(tc, "tc") }?;
        // SAFETY: NULL or writable.
        unsafe { put(sent, 0) };
        let f = callback.ok_or_else(|| Error::null("callback"))?;
        let n = tc.inner.pull_each(now_ns, max_packets, |data, meta| {
            // SAFETY: the caller's callback with its context; `data` and
            // `meta` live through the call.
            unsafe { f(ctx, data.as_ptr(), data.len(), meta) == 0 }
        })?;
        // SAFETY: NULL or writable.
        unsafe { put(sent, n) };
        Ok(if n == 0 { TCRAN_EMPTY } else { TCRAN_OK })
    })
}

/// When to pull again if nothing else happens: `TCRAN_OK` with `*at_ns`,
/// or `TCRAN_EMPTY` (`*at_ns` = `TCRAN_NO_WAKEUP`) when only new packets
/// or reports can let anything go.
#[no_mangle]
pub unsafe extern "C" fn tcran_next_wakeup(
    tc: *mut tcran_t,
    now_ns: u64,
    at_ns: *mut u64,
) -> tcran_status {
    guard(|| {
        // SAFETY: NULL or an instance from `tcran_new`.
        let tc = unsafe { reference(tc, "tc") }?;
        if at_ns.is_null() {
            return Err(Error::null("at_ns"));
        }
        let t = tc.inner.next_wakeup(now_ns)?;
        // SAFETY: non-NULL and writable.
        unsafe { *at_ns = t.unwrap_or(TCRAN_NO_WAKEUP) };
        Ok(if t.is_some() { TCRAN_OK } else { TCRAN_EMPTY })
    })
}

/// The per-TTI RLC report, right after the MAC pulled.
#[no_mangle]
pub unsafe extern "C" fn tcran_on_report(
    tc: *mut tcran_t,
    report: *const tcran_rlc_report,
    now_ns: u64,
) -> tcran_status {
    guard(|| {
        // SAFETY: NULL or live objects by the contract.
        let (tc, report) = unsafe { (reference(tc, "tc")?, reference(report, "report")?) };
        tc.inner.on_report(report, now_ns)?;
        Ok(TCRAN_OK)
    })
}

/// An RLC SDU left the RLC buffer (fully sent in UM, acknowledged in AM)
/// after `sojourn_ns` there (DynRLC's delay sample).
#[no_mangle]
pub unsafe extern "C" fn tcran_on_sdu_departed(
    tc: *mut tcran_t,
    sojourn_ns: u64,
    now_ns: u64,
) -> tcran_status {
    guard(|| {
        // SAFETY: NULL or an instance from `tcran_new`.
        let tc = unsafe { reference(tc, "tc") }?;
        tc.inner.on_sdu_departed(sojourn_ns, now_ns)?;
        Ok(TCRAN_OK)
    })
}

/// An RLC AM status PDU arrived from the UE (DynRLC).
#[no_mangle]
pub unsafe extern "C" fn tcran_on_status_pdu(tc: *mut tcran_t, now_ns: u64) -> tcran_status {
    guard(|| {
        // SAFETY: NULL or an instance from `tcran_new`.
        let tc = unsafe { reference(tc, "tc") }?;
        tc.inner.on_status_pdu(now_ns)?;
        Ok(TCRAN_OK)
    })
}

/// Applies one live change (`op = "set_pacer"`, `"add_queue"`, ... as in
/// Rust's `tcran_tc::Control`), TOML or JSON. On error nothing changed.
#[no_mangle]
pub unsafe extern "C" fn tcran_control(
    tc: *mut tcran_t,
    text: *const c_char,
    len: usize,
    format: u32,
    now_ns: u64,
) -> tcran_status {
    // SAFETY: forwarded contract.
    unsafe { change(tc, text, len, |tc, text| tc.control(text, format, now_ns)) }
}

/// Applies several live changes in order, all or none: `controls = [...]`
/// (TOML, or `[[controls]]` tables) or `{"controls": [...]}` (JSON), each
/// as `tcran_control` takes it. On error nothing changed, and the message
/// says which control (`control 2 of 3: ...`).
#[no_mangle]
pub unsafe extern "C" fn tcran_controls(
    tc: *mut tcran_t,
    text: *const c_char,
    len: usize,
    format: u32,
    now_ns: u64,
) -> tcran_status {
    // SAFETY: forwarded contract.
    unsafe { change(tc, text, len, |tc, text| tc.controls(text, format, now_ns)) }
}

/// Replaces the whole pipeline by `config` (as `tcran_new` takes it)
/// without losing or reordering a queued packet: queues kept by id change
/// in place, queues that are gone hand their packets to the new default
/// queue. On error nothing changed.
#[no_mangle]
pub unsafe extern "C" fn tcran_deploy(
    tc: *mut tcran_t,
    config: *const c_char,
    len: usize,
    format: u32,
    now_ns: u64,
) -> tcran_status {
    // SAFETY: forwarded contract.
    unsafe { change(tc, config, len, |tc, text| tc.deploy(text, format, now_ns)) }
}

/// The body of the change entry points: checks `tc` and the text, then
/// applies it with `apply`.
///
/// # Safety
/// `tc` is NULL or an instance from `tcran_new`; `text` is NULL or
/// readable for `len` bytes.
unsafe fn change(
    tc: *mut tcran_t,
    text: *const c_char,
    len: usize,
    apply: impl FnOnce(&Instance, &[u8]) -> Result<(), Error>,
) -> tcran_status {
    guard(|| {
        // SAFETY: NULL or an instance from `tcran_new`.
        let tc = unsafe { reference(tc, "tc") }?;
        // SAFETY: readable for `len` bytes by the contract.
        let text = unsafe { bytes(text.cast(), len, "text", MAX_TEXT) }?;
        apply(&tc.inner, text)?;
        Ok(TCRAN_OK)
    })
}

/// The running totals.
#[no_mangle]
pub unsafe extern "C" fn tcran_get_totals(
    tc: *mut tcran_t,
    out: *mut tcran_totals,
) -> tcran_status {
    guard(|| {
        // SAFETY: NULL or an instance from `tcran_new`.
        let tc = unsafe { reference(tc, "tc") }?;
        if out.is_null() {
            return Err(Error::null("out"));
        }
        let t = tc.inner.totals()?;
        // SAFETY: non-NULL and writable.
        unsafe { *out = t };
        Ok(TCRAN_OK)
    })
}

/// The statistics snapshot as one JSON object, NUL-terminated, into `buf`
/// (`cap` bytes). `*needed` (may be NULL) is the size it takes, NUL
/// included; with a smaller `cap` nothing is written and the call returns
/// `TCRAN_ERR_BUFFER_TOO_SMALL` (`buf` may be NULL with `cap` 0 to ask).
#[no_mangle]
pub unsafe extern "C" fn tcran_stats_json(
    tc: *mut tcran_t,
    now_ns: u64,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> tcran_status {
    guard(|| {
        // SAFETY: NULL or an instance from `tcran_new`.
        let tc = unsafe { reference(tc, "tc") }?;
        if buf.is_null() && cap > 0 {
            return Err(Error::null("buf"));
        }
        let json = tc.inner.stats_json(now_ns)?;
        let n = json.len() + 1;
        // SAFETY: NULL or writable.
        unsafe { put(needed, n) };
        if cap < n {
            return Err(Error::new(
                TCRAN_ERR_BUFFER_TOO_SMALL,
                format!("cap = {cap}: the statistics take {n} bytes"),
            ));
        }
        // SAFETY: `buf` is writable for `cap` >= n bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(json.as_ptr(), buf.cast::<u8>(), json.len());
            *buf.add(json.len()) = 0;
        }
        Ok(TCRAN_OK)
    })
}

// ----------------------------------------------------------------------- E2

/// Starts an E2 node in `*out` from its config (`config_len` bytes of TOML
/// or JSON, see `TCRAN_FORMAT_*`): `ric = "HOST:PORT"` (framed TCP, as
/// `tcran xapp --ric-listen`), optionally `gnb_id` (0..2^22, default 1) and
/// `profile` (`"auto"`, `"standard"`, `"flexric"`). The agent runs on a
/// thread of its own, connects, and reconnects until `tcran_e2_stop`; a
/// RIC that is not there yet is no error. On error `*out` is NULL.
#[no_mangle]
pub unsafe extern "C" fn tcran_e2_start(
    config: *const c_char,
    config_len: usize,
    format: u32,
    out: *mut *mut tcran_e2_t,
) -> tcran_status {
    guard(|| {
        if out.is_null() {
            return Err(Error::null("out"));
        }
        // SAFETY: `out` is writable.
        unsafe { *out = std::ptr::null_mut() };
        // SAFETY: readable for `config_len` bytes by the contract.
        let text = unsafe { bytes(config.cast(), config_len, "config", MAX_TEXT) }?;
        let node = E2Node::start(text, format)?;
        // SAFETY: `out` is writable.
        unsafe { *out = Box::into_raw(Box::new(tcran_e2_t { node })) };
        Ok(TCRAN_OK)
    })
}

/// Serves instance `tc` over E2 as bearer (`rnti`, `drb`) (replacing a
/// bearer served under that key): the RIC reads its pipeline, statistics
/// and reports, and its controls are applied under the instance's lock,
/// between two of the caller's calls, all or nothing. The node keeps the
/// instance alive until `tcran_e2_remove` or `tcran_e2_stop`, even past
/// `tcran_free`.
#[no_mangle]
pub unsafe extern "C" fn tcran_e2_add(
    e2: *mut tcran_e2_t,
    tc: *mut tcran_t,
    rnti: u16,
    drb: u8,
) -> tcran_status {
    guard(|| {
        // SAFETY: NULL or live objects by the contract.
        let (e2, tc) = unsafe { (reference(e2, "e2")?, reference(tc, "tc")?) };
        e2.node.add(tc.inner.clone(), rnti, drb)?;
        Ok(TCRAN_OK)
    })
}

/// Stops serving bearer (`rnti`, `drb`): `TCRAN_OK`, or `TCRAN_EMPTY` if
/// it was not served.
#[no_mangle]
pub unsafe extern "C" fn tcran_e2_remove(e2: *mut tcran_e2_t, rnti: u16, drb: u8) -> tcran_status {
    guard(|| {
        // SAFETY: NULL or a node from `tcran_e2_start`.
        let e2 = unsafe { reference(e2, "e2") }?;
        Ok(if e2.node.remove(rnti, drb) {
            TCRAN_OK
        } else {
            TCRAN_EMPTY
        })
    })
}

/// Closes the association, ends the node's thread and frees it (NULL:
/// nothing). No other call on it may run or follow.
#[no_mangle]
pub unsafe extern "C" fn tcran_e2_stop(e2: *mut tcran_e2_t) {
    guard_void(|| {
        if !e2.is_null() {
            // SAFETY: made by `tcran_e2_start`, freed once by the contract.
            unsafe { Box::from_raw(e2) }.node.stop();
        }
    })
}
