//! One tcran instance (`tcran_t`): the pipeline of one (RNTI, DRB), its
//! lock, its clock guard and its drop reporting. Safe Rust; `ffi` only
//! checks pointers and lengths and calls in here.
//!
//! Threading: every call takes the instance's mutex, so ingress, egress
//! and feedback may come from different threads (TC-RAN sec. IV-C:
//! "ingress and egress can be considered as two independent processes that
//! only share a queue"); calls on one instance are serialised, different
//! instances never contend. A call from inside one of this instance's
//! callbacks (egress, drop) would deadlock: it is detected and refused with
//! `TCRAN_ERR_REENTRANT`.
//!
//! Time: `now` is the caller's clock in ns (any epoch, e.g.
//! CLOCK_MONOTONIC). Threads that read the clock and then race for the
//! lock can hand in times slightly out of order; the instance never lets
//! its time go backwards (a [`CallerClock`]: it uses the latest time seen)
//! and counts how often it had to (`time_clamped`).
//!
//! Changes: one control, several all or nothing, or a whole pipeline
//! deployed, as a [`Change`] applied by the pipeline all or nothing; a
//! refusal is one line naming the control, the field, the value and what
//! is allowed.

use crate::error::Error;
use crate::plugin::{PluginErrors, Registry, Resolver};
use crate::types::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tcran_control::{KpmCounters, LowerLayerKpis};
use tcran_core::{CallerClock, DrbId, Dropped, Duration, Instant, Packet, PacketId, Rnti};
use tcran_tc::stats::PipelineStats;
use tcran_tc::{
    Applied, Change, Control, LowerLayerReport, Pipeline, PipelineConfig, PushOutcome, Refused,
};

/// Receives every dropped packet.
pub type DropSink = Box<dyn FnMut(&Dropped) + Send>;

/// Counters of the C layer itself.
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
pub struct Counters {
    /// Pushed packets that did not parse as IPv4/IPv6 (carried anyway).
    pub malformed: u64,
    /// Pulls refused for a too-small buffer (the packet waited for the next).
    pub buffer_too_small: u64,
}

/// The C layer's part of the statistics (`capi` in `tcran_stats_json`).
#[derive(serde::Serialize)]
struct CapiStats {
    /// Calls whose `now` was before the instance's time (used the latter).
    time_clamped: u64,
    #[serde(flatten)]
    counters: Counters,
}

struct State {
    pipeline: Pipeline,
    clock: CallerClock,
    /// What the reports said, summed: the E2 node's view of the layers
    /// below ([`crate::e2`]).
    below: Below,
    /// A packet pulled for a buffer too small for it; it goes first next.
    held: Option<Packet>,
    on_drop: Option<DropSink>,
    counters: Counters,
}

impl State {
    fn clock(&mut self, now_ns: u64) -> Instant {
        self.clock.at(Instant::from_nanos(now_ns))
    }

    /// Hands the pipeline's drops to the sink (if any) and frees them.
    #[inline]
    fn flush_drops(&mut self) {
        if self.pipeline.has_dropped() {
            self.hand_out_drops();
        }
    }

    #[cold]
    fn hand_out_drops(&mut self) {
        let sink = &mut self.on_drop;
        for d in self.pipeline.drain_dropped() {
            if let Some(f) = sink.as_mut() {
                f(&d);
            }
        }
    }

    fn next_packet(&mut self, now: Instant) -> Option<Packet> {
        self.held.take().or_else(|| self.pipeline.pull(now))
    }
}

/// What a pulled packet looks like to C.
fn packet_out(p: &Packet, now: Instant) -> tcran_packet_out {
    tcran_packet_out {
        len: p.payload.as_deref().map_or(p.len, |b| b.len() as u32),
        tag: p.id.0,
        sojourn_ns: now.saturating_since(p.enqueued_at).as_nanos(),
        ecn: p.ecn.bits(),
        malformed: p.malformed as u8,
    }
}

thread_local! {
    /// One byte per thread whose address names the thread (cheaper than
    /// `std::thread::current().id()`, which clones an `Arc`).
    static THREAD_MARK: u8 = const { 0 };
}

fn this_thread() -> usize {
    THREAD_MARK.with(|m| m as *const u8 as usize)
}

struct ClearOnDrop<'a>(&'a AtomicUsize);

impl Drop for ClearOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(0, Ordering::Relaxed);
    }
}

/// Parses a config or control text.
pub(crate) fn parse<T: serde::de::DeserializeOwned>(
    what: &str,
    text: &[u8],
    format: u32,
) -> Result<T, Error> {
    let text = std::str::from_utf8(text).map_err(|e| {
        Error::new(
            tcran_status::TCRAN_ERR_PARSE,
            format!("{what}: not UTF-8 text (byte {})", e.valid_up_to()),
        )
    })?;
    let json = match format {
        TCRAN_FORMAT_AUTO => text.trim_start().starts_with('{'),
        TCRAN_FORMAT_TOML => false,
        TCRAN_FORMAT_JSON => true,
        f => {
            return Err(Error::invalid(format!(
                "format = {f}: must be TCRAN_FORMAT_AUTO (0), TCRAN_FORMAT_TOML (1) or TCRAN_FORMAT_JSON (2)"
            )))
        }
    };
    if json {
        serde_json::from_str(text).map_err(|e| Error::parse(what, e))
    } else {
        toml::from_str(text).map_err(|e| Error::parse(what, e))
    }
}

/// The bearer (`rnti`, `drb`), or why it cannot be one: C-RNTI values
/// 0x0001..=0xFFEF (TS 38.321 Table 7.1-1), DRB ids 1..=32 (TS 38.331
/// DRB-Identity).
pub(crate) fn check_key(rnti: u16, drb: u8) -> Result<tcran_control::DrbKey, Error> {
    if !(0x0001..=0xFFEF).contains(&rnti) {
        return Err(Error::invalid(format!(
            "rnti = {rnti:#06x}: must be a C-RNTI, 0x0001..=0xffef (TS 38.321 Table 7.1-1)"
        )));
    }
    if !(1..=32).contains(&drb) {
        return Err(Error::invalid(format!(
            "drb = {drb}: must be 1..=32 (TS 38.331 DRB-Identity)"
        )));
    }
    Ok(tcran_control::DrbKey::new(rnti, drb))
}

/// A TC pipeline for one (RNTI, DRB), shareable between threads.
pub struct Instance {
    /// The thread running a call on this instance (0: none). Written only
    /// with the lock held; read before locking, where only the equality
    /// with the reader's own thread matters: a thread sees its own mark
    /// only while it is inside a call, i.e. when a callback re-enters.
    owner: AtomicUsize,
    rnti: Rnti,
    drb: DrbId,
    plugin_errors: Arc<PluginErrors>,
    state: Mutex<State>,
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "tcran instance {} {}", self.rnti, self.drb)
    }
}

impl Instance {
    /// Builds the pipeline of `config` for (`rnti`, `drb`). Plug-ins are
    /// looked up in `plugins` (or, by `path`, loaded).
    pub fn new(
        config: &[u8],
        format: u32,
        rnti: u16,
        drb: u8,
        plugins: Option<Arc<Registry>>,
    ) -> Result<Instance, Error> {
        check_key(rnti, drb)?;
        let config: PipelineConfig = parse("config", config, format)?;
        let plugin_errors = Arc::new(PluginErrors::default());
        let resolver = Resolver {
            registry: plugins.unwrap_or_default(),
            errors: plugin_errors.clone(),
        };
        let pipeline = config
            .build_with_plugins(Arc::new(resolver))
            .map_err(|e| Error::config("config", &e))?;
        Ok(Instance {
            owner: AtomicUsize::new(0),
            rnti: Rnti(rnti),
            drb: DrbId(drb),
            plugin_errors,
            state: Mutex::new(State {
                pipeline,
                clock: CallerClock::default(),
                below: Below::default(),
                held: None,
                on_drop: None,
                counters: Counters::default(),
            }),
        })
    }

    /// Runs `f` on the locked state, then reports the drops it caused.
    fn with<R>(&self, f: impl FnOnce(&mut State) -> Result<R, Error>) -> Result<R, Error> {
        let me = this_thread();
        if self.owner.load(Ordering::Relaxed) == me {
            return Err(Error::new(
                tcran_status::TCRAN_ERR_REENTRANT,
                "called from inside a callback of the same instance (egress or drop callback); call after it returned",
            ));
        }
        let mut s = self.lock()?;
        self.owner.store(me, Ordering::Relaxed);
        // Cleared on every exit, a caught panic included.
        let _owner = ClearOnDrop(&self.owner);
        let r = f(&mut s);
        s.flush_drops();
        r
    }

    fn lock(&self) -> Result<MutexGuard<'_, State>, Error> {
        // A poisoned lock means a panic (a bug) interrupted a call half way:
        // the pipeline may be inconsistent, so the instance stays unusable.
        self.state.lock().map_err(|_| {
            Error::new(
                tcran_status::TCRAN_ERR_INTERNAL,
                "an earlier internal error left this instance unusable; free it",
            )
        })
    }

    pub fn set_drop_sink(&self, sink: Option<DropSink>) -> Result<(), Error> {
        self.with(|s| {
            s.on_drop = sink;
            Ok(())
        })
    }

    /// Ingress: a copy of `bytes` enters the pipeline.
    pub fn push(
        &self,
        bytes: &[u8],
        flags: u32,
        tag: u64,
        now_ns: u64,
    ) -> Result<tcran_push_result, Error> {
        if bytes.is_empty() {
            return Err(Error::invalid("len = 0: a packet has at least one byte"));
        }
        if bytes.len() > TCRAN_MAX_PACKET as usize {
            return Err(Error::invalid(format!(
                "len = {}: at most {TCRAN_MAX_PACKET} bytes (TCRAN_MAX_PACKET, the largest PDCP SDU, TS 38.323)",
                bytes.len()
            )));
        }
        if flags & !TCRAN_PUSH_SDAP != 0 {
            return Err(Error::invalid(format!(
                "flags = {flags:#x}: only TCRAN_PUSH_SDAP ({TCRAN_PUSH_SDAP:#x}) is defined"
            )));
        }
        // Copy and parse before taking the lock.
        let packet = tcran_wire::packet_from_bytes(
            PacketId(tag),
            Box::from(bytes),
            flags & TCRAN_PUSH_SDAP != 0,
            Instant::from_nanos(now_ns),
        );
        let malformed = packet.malformed;
        self.with(|s| {
            let now = s.clock(now_ns);
            s.counters.malformed += malformed as u64;
            let (verdict, reason, queue) = match s.pipeline.push(packet, now) {
                PushOutcome::Marked(q) => (
                    tcran_verdict::TCRAN_MARKED,
                    tcran_drop_reason::TCRAN_DROP_NONE,
                    q.0,
                ),
                PushOutcome::Enqueued(q) => (
                    tcran_verdict::TCRAN_ACCEPTED,
                    tcran_drop_reason::TCRAN_DROP_NONE,
                    q.0,
                ),
                PushOutcome::Dropped(r) => (tcran_verdict::TCRAN_DROPPED, r.into(), 0),
            };
            Ok(tcran_push_result {
                verdict,
                reason,
                queue,
                malformed: malformed as u8,
            })
        })
    }

    /// Egress into `buf`: `Ok(None)` when nothing may go now; a packet
    /// larger than `buf` stays first in line (`TCRAN_ERR_BUFFER_TOO_SMALL`,
    /// its size in `needed`).
    pub fn pull(
        &self,
        now_ns: u64,
        buf: &mut [u8],
        needed: &mut u32,
    ) -> Result<Option<tcran_packet_out>, Error> {
        self.with(|s| {
            let now = s.clock(now_ns);
            let Some(p) = s.next_packet(now) else {
                return Ok(None);
            };
            let meta = packet_out(&p, now);
            let bytes = p.payload.as_deref().unwrap_or_default();
            if bytes.len() > buf.len() {
                *needed = meta.len;
                s.counters.buffer_too_small += 1;
                s.held = Some(p);
                return Err(Error::new(
                    tcran_status::TCRAN_ERR_BUFFER_TOO_SMALL,
                    format!(
                        "cap = {}: the next packet has {} bytes (it stays first in line; TCRAN_MAX_PACKET always fits)",
                        buf.len(),
                        meta.len
                    ),
                ));
            }
            buf[..bytes.len()].copy_from_slice(bytes);
            Ok(Some(meta))
        })
    }

    /// Egress through `f` (bytes valid during the call) until the pipeline
    /// says stop, `max` packets went (0: no limit) or `f` returns false.
    /// Returns how many went.
    pub fn pull_each(
        &self,
        now_ns: u64,
        max: usize,
        mut f: impl FnMut(&[u8], &tcran_packet_out) -> bool,
    ) -> Result<usize, Error> {
        self.with(|s| {
            let now = s.clock(now_ns);
            let mut n = 0;
            while max == 0 || n < max {
                let Some(p) = s.next_packet(now) else { break };
                n += 1;
                let meta = packet_out(&p, now);
                if !f(p.payload.as_deref().unwrap_or_default(), &meta) {
                    break;
                }
            }
            Ok(n)
        })
    }

    pub fn next_wakeup(&self, now_ns: u64) -> Result<Option<u64>, Error> {
        self.with(|s| {
            let now = s.clock(now_ns);
            if s.held.is_some() {
                return Ok(Some(now.as_nanos()));
            }
            Ok(s.pipeline.next_wakeup(now).map(Instant::as_nanos))
        })
    }

    pub fn on_report(&self, r: &tcran_rlc_report, now_ns: u64) -> Result<(), Error> {
        let report = LowerLayerReport::from(r);
        report
            .check()
            .map_err(|e| Error::invalid(e.within("report").to_string()))?;
        self.with(|s| {
            let now = s.clock(now_ns);
            s.below.add(&report, now);
            s.pipeline.on_report(&report, now);
            Ok(())
        })
    }

    pub fn on_sdu_departed(&self, sojourn_ns: u64, now_ns: u64) -> Result<(), Error> {
        self.with(|s| {
            let now = s.clock(now_ns);
            s.pipeline
                .on_sdu_departed(Duration::from_nanos(sojourn_ns), now);
            Ok(())
        })
    }

    pub fn on_status_pdu(&self, now_ns: u64) -> Result<(), Error> {
        self.with(|s| {
            let now = s.clock(now_ns);
            s.pipeline.on_status_pdu(now);
            Ok(())
        })
    }

    /// Applies one `Control` (the Rust enum's serde form, TOML or JSON).
    pub fn control(&self, text: &[u8], format: u32, now_ns: u64) -> Result<(), Error> {
        let control: Control = parse("control", text, format)?;
        self.change("control", &Change::Control(control), now_ns)
    }

    /// Applies a list of controls all or none: `controls = [...]` (TOML,
    /// or `[[controls]]` tables) or `{"controls": [...]}` (JSON).
    pub fn controls(&self, text: &[u8], format: u32, now_ns: u64) -> Result<(), Error> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct List {
            controls: Vec<Control>,
        }
        let list: List = parse("controls", text, format)?;
        self.change("controls", &Change::Controls(list.controls), now_ns)
    }

    /// Replaces the whole pipeline by `config` (the format of
    /// [`Instance::new`]), keeping every queued packet in order.
    pub fn deploy(&self, config: &[u8], format: u32, now_ns: u64) -> Result<(), Error> {
        let config: PipelineConfig = parse("config", config, format)?;
        self.change("config", &Change::Deploy(config), now_ns)
    }

    /// Applies `change` all or nothing; a refusal names `what` was given.
    fn change(&self, what: &str, change: &Change, now_ns: u64) -> Result<(), Error> {
        self.with(|s| {
            let now = s.clock(now_ns);
            match s.pipeline.apply_change(change, now) {
                Ok(_) => Ok(()),
                Err(refused) => Err(Error::refused(what, &refused)),
            }
        })
    }

    pub fn totals(&self) -> Result<tcran_totals, Error> {
        self.with(|s| {
            let t = s.pipeline.totals();
            let held = s.held.as_ref().map_or((0, 0), |p| (1, p.len as u64));
            Ok(tcran_totals {
                in_packets: t.in_packets,
                in_bytes: t.in_bytes,
                // A held packet left the pipeline but not tcran.
                out_packets: t.out_packets - held.0,
                out_bytes: t.out_bytes - held.1,
                dropped_packets: t.dropped_packets,
                dropped_bytes: t.dropped_bytes,
                marked_packets: s.pipeline.marked_packets(),
                queued_packets: t.queued_packets + held.0,
                queued_bytes: t.queued_bytes + held.1,
            })
        })
    }

    /// The statistics snapshot as JSON: the pipeline's (the TC service
    /// model's statistics), this layer's counters and plug-in errors.
    pub fn stats_json(&self, now_ns: u64) -> Result<String, Error> {
        self.with(|s| {
            let now = s.clock(now_ns);
            let v = serde_json::json!({
                "rnti": self.rnti.0,
                "drb": self.drb.0,
                "pipeline": s.pipeline.stats(now),
                "held_packets": s.held.is_some() as u8,
                "capi": CapiStats {
                    time_clamped: s.clock.clamped(),
                    counters: s.counters,
                },
                "plugin_errors": self.plugin_errors.to_json(),
            });
            Ok(v.to_string())
        })
    }

    /// The E2 node's view of this bearer: its pipeline as configured, its
    /// statistics and what the reports said about RLC and MAC, at the
    /// instance's own time (the caller's clock, e.g. OAI's radio clock:
    /// the E2 agent's wall clock never enters the pipeline).
    pub(crate) fn tc_view(
        &self,
        with_config: bool,
    ) -> Result<(Option<PipelineConfig>, PipelineStats, LowerLayerKpis), Error> {
        self.with(|s| {
            let now = s.clock.now();
            let config = with_config.then(|| s.pipeline.config());
            Ok((config, s.pipeline.stats(now), s.below.kpis(now)))
        })
    }

    /// The bearer's cumulative TS 28.552 counters (E2SM-KPM).
    pub(crate) fn kpm(&self) -> Result<KpmCounters, Error> {
        self.with(|s| Ok(s.below.kpm(s.pipeline.totals().in_bytes)))
    }

    /// Applies an E2 control at the instance's own time, all or nothing,
    /// under the instance's lock: between two calls of the gNB's threads.
    pub(crate) fn apply_e2(&self, change: &Change) -> Result<Result<Applied, Refused>, Error> {
        self.with(|s| {
            let now = s.clock.now();
            Ok(s.pipeline.apply_change(change, now))
        })
    }
}

/// The reports of the layers below, summed since the instance was made:
/// what an E2 node serves as RLC and MAC KPIs and KPM counters.
#[derive(Debug, Default, Clone)]
struct Below {
    last: LowerLayerReport,
    pulled_bytes: u64,
    prbs: u64,
    slots: u64,
    /// TS 28.552 5.1.1.3.1: volume and time of the slots that left data
    /// in RLC (a burst's last slot, which emptied the buffer, excluded).
    thp_bits: u64,
    thp_time: Duration,
    /// Bytes the MAC pulls per second, averaged over about 100 ms.
    drain_rate: f64,
    /// Since when RLC has held data without emptying (`None`: empty).
    busy_since: Option<Instant>,
}

/// How long the drain-rate average remembers.
const DRAIN_WINDOW: Duration = Duration::from_millis(100);

impl Below {
    fn add(&mut self, r: &LowerLayerReport, now: Instant) {
        self.pulled_bytes += r.pulled_bytes;
        self.prbs += u64::from(r.prbs);
        self.slots += 1;
        if r.backlog_bytes > 0 && r.pulled_bytes > 0 {
            self.thp_bits += r.pulled_bytes * 8;
            self.thp_time += r.tti;
        }
        let tti = r.tti.as_secs_f64();
        if tti > 0.0 {
            let weight = (tti / DRAIN_WINDOW.as_secs_f64()).min(1.0);
            self.drain_rate += (r.pulled_bytes as f64 / tti - self.drain_rate) * weight;
        }
        self.busy_since = match (r.backlog_bytes, self.busy_since) {
            (0, _) => None,
            (_, Some(t)) => Some(t),
            (_, None) => Some(now),
        };
        self.last = *r;
    }

    /// The RLC head-of-line sojourn: the report's, or, from a gNB that
    /// does not know it (OAI v2.1.0's RLC), the backlog over the drain
    /// rate (Little's law), never more than the time since RLC was last
    /// empty (every SDU in it came after that).
    fn sojourn(&self, now: Instant) -> Duration {
        if self.last.head_of_line_age > Duration::ZERO || self.last.backlog_bytes == 0 {
            return self.last.head_of_line_age;
        }
        let busy = self
            .busy_since
            .map_or(Duration::ZERO, |t| now.saturating_since(t));
        if self.drain_rate <= 0.0 {
            return busy;
        }
        let estimate = Duration::from_secs_f64(self.last.backlog_bytes as f64 / self.drain_rate);
        estimate.min(busy)
    }

    fn kpis(&self, now: Instant) -> LowerLayerKpis {
        LowerLayerKpis {
            rlc_backlog_bytes: self.last.backlog_bytes,
            rlc_backlog_sdus: self.last.backlog_sdus,
            rlc_sojourn: self.sojourn(now),
            rlc_tx_bytes: self.pulled_bytes,
            mac_tx_bytes: self.pulled_bytes,
            mac_prbs: self.prbs,
            mcs: self.last.mcs.unwrap_or(0),
            // The C report carries no measurement reports.
            handover_margin_cdb: None,
        }
    }

    fn kpm(&self, in_bytes: u64) -> KpmCounters {
        KpmCounters {
            pdcp_sdu_bits_dl: in_bytes * 8,
            rlc_sdu_transmitted_bits_dl: self.pulled_bytes * 8,
            thp_volume_bits_dl: self.thp_bits,
            thp_time_dl: self.thp_time,
            prb_used_dl: self.prbs,
            prb_used_total_dl: self.prbs,
            slots: self.slots,
            ..KpmCounters::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(backlog: u64, pulled: u64) -> LowerLayerReport {
        LowerLayerReport {
            tti: Duration::from_micros(500),
            backlog_bytes: backlog,
            pulled_bytes: pulled,
            ..LowerLayerReport::default()
        }
    }

    /// Without the gNB's head-of-line age, the sojourn is the backlog over
    /// the drain rate (Little's law), capped by the time RLC has held data.
    #[test]
    fn the_sojourn_estimate_is_backlog_over_drain_rate_capped_by_the_busy_time() {
        let mut b = Below::default();
        let slot = Duration::from_micros(500);
        let mut now = Instant::ZERO;
        // 1 s of slots pulling 10 kB each (20 MB/s) over a 2 MB backlog.
        for _ in 0..2000 {
            now += slot;
            b.add(&report(2_000_000, 10_000), now);
        }
        let s = b.sojourn(now).as_secs_f64();
        assert!((s - 0.1).abs() < 0.001, "{s}");
        // Just after RLC was empty, nothing in it can be older than that.
        now += slot;
        b.add(&report(0, 10_000), now);
        now += slot;
        b.add(&report(2_000_000, 10_000), now);
        now += slot;
        assert_eq!(b.sojourn(now), slot);
        // The gNB's own head-of-line age wins when it has one.
        let mut r = report(2_000_000, 10_000);
        r.head_of_line_age = Duration::from_millis(42);
        b.add(&r, now);
        assert_eq!(b.sojourn(now), Duration::from_millis(42));
        // Empty: no sojourn.
        b.add(&report(0, 0), now);
        assert_eq!(b.sojourn(now), Duration::ZERO);
    }

    /// TS 28.552 5.1.1.3.1: a burst's last slot (it emptied RLC) counts in
    /// neither the throughput volume nor its time.
    #[test]
    fn ue_throughput_leaves_out_the_slot_that_emptied_rlc() {
        let mut b = Below::default();
        let now = Instant::ZERO;
        b.add(&report(5_000, 10_000), now);
        b.add(&report(0, 5_000), now);
        let k = b.kpm(1_000);
        assert_eq!(k.thp_volume_bits_dl, 80_000);
        assert_eq!(k.thp_time_dl, Duration::from_micros(500));
        assert_eq!(k.rlc_sdu_transmitted_bits_dl, 120_000);
        assert_eq!(k.pdcp_sdu_bits_dl, 8_000);
        assert_eq!(k.slots, 2);
    }
}
