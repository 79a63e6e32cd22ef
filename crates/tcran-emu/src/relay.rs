//! The real-time loop: the simulator engine paced to the wall clock.
//! Packets from the hosts' TUN devices (the emulator; none for
//! `tcran run --realtime`) go into the engine (core delay, then the RAN
//! node) at the wall clock's `now`; what comes out is written to the other
//! side's device; the E2 agent, if any, runs between two events of the
//! engine; between all that the loop sleeps until the next event is due.
//!
//! Contract:
//! - One thread, no locks: epoll (mio) waits on every TUN device, on the
//!   E2 agent's waker (a PDU arrived on its I/O thread) and on a timerfd
//!   armed at the engine's or the agent's next deadline, so a slot runs
//!   when it is due and a packet or an E2 control is taken when it
//!   arrives.
//! - A packet is handed in at the instant it was read; events are run with
//!   their own times even when the loop wakes late (the RAN node runs the
//!   slots it missed), and every wake-up for a deadline records its
//!   lateness (`RelayStats`).
//! - Reads are taken in batches of at most [`BATCH`] per device per turn,
//!   so a flood on one link cannot hold up the slots.
//! - Nothing is lost silently: a packet the host cannot take (its device
//!   queue is full) or that fails to write is counted.

use crate::clock::{host_steal, realtime_scheduling, Clock, Timer};
use crate::e2::E2Link;
use crate::error::EmuError;
use crate::pcap::{Capture, Direction};
use crate::tundev::{Tun, MTU};
use hdrhistogram::Histogram;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use tcran_core::{Duration, Instant, PacketId, Rnti};
use tcran_sim::{LiveOutput, Sim};

/// Packets read from one device before the loop looks at the clock again.
pub const BATCH: usize = 64;

const TIMER: Token = Token(0);
const E2_WAKE: Token = Token(1);
const SERVER: Token = Token(2);
const FIRST_UE: usize = 3;

/// What the loop measured about itself.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RelayStats {
    /// Packets read from the server side and from the UEs.
    pub downlink_in: u64,
    pub uplink_in: u64,
    /// Packets written to the UEs and to the server side.
    pub downlink_out: u64,
    pub uplink_out: u64,
    /// Packets a host could not take (its device queue full) or whose
    /// write failed: lost after the model, counted here.
    pub write_dropped: u64,
    pub write_errors: u64,
    /// Packets read that are not IPv4/IPv6 (still carried, as the node
    /// carries any PDU).
    pub malformed_in: u64,
    /// How late the loop woke for a deadline (a slot, a timer),
    /// microseconds.
    pub lateness_us: Distribution,
    /// What the relay added to each packet beyond the modelled delays:
    /// from the instant the model let it out to its write, microseconds.
    pub added_latency_us: Distribution,
    /// Turns of the loop.
    pub turns: u64,
    /// The relay thread's scheduling policy (`SCHED_FIFO 50`, or why not).
    pub scheduling: String,
    /// Whole seconds of the run, after the first packet, in which no
    /// packet moved in either direction, each with what held things up.
    pub quiet: QuietSeconds,
}

/// Seconds in which nothing moved, and why: a stall of the host, of the
/// relay or of the model is then told apart from a quiet application.
/// Second `k` is `[k, k + 1)` s of the emulation's clock.
#[derive(Debug, Clone, Default, Serialize)]
pub struct QuietSeconds {
    /// How many seconds were quiet (all of them, whatever `first` holds).
    pub count: u64,
    /// The first [`QUIET_LISTED`] of them.
    pub first: Vec<Quiet>,
    #[serde(skip)]
    watch: QuietWatch,
}

/// Quiet seconds listed in `emulation.json` (all are counted).
pub const QUIET_LISTED: usize = 100;

/// A gap between two turns of the loop this long means the relay itself
/// did not run (it wakes at least every 10 ms).
const RELAY_GAP: Duration = Duration::from_millis(500);

/// One quiet second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Quiet {
    pub second: u64,
    /// `vm`: the loop did not run for at least 0.5 s in it and the
    /// hypervisor did not run the machine's CPUs for at least half that
    /// time (their steal time, [`crate::clock::host_steal`]): the whole
    /// machine stood still, programs and relay alike; `relay`: the loop
    /// did not run for at least 0.5 s in it while the machine ran (the
    /// kernel did not schedule the relay); `model`: the model held data
    /// packets (downlink, or uplink of a UE with uplink DRBs) and let none
    /// out (a pacer, a queue, a grant or the channel holding them); `hosts`: nothing to carry, the programs sent nothing (e.g. a
    /// TCP sender waiting out a retransmission timeout).
    pub cause: &'static str,
}

/// The state behind [`QuietSeconds`].
#[derive(Debug, Clone, Default)]
struct QuietWatch {
    /// The second being watched, and the packets moved before it began.
    second: u64,
    moved_before: u64,
    /// The last turn of the loop.
    last_turn: Option<Instant>,
    /// Seconds the relay did not run through (from the last long gap),
    /// and whose stall it was (`vm` or `relay`).
    relay_gap: Option<(u64, u64, &'static str)>,
    /// The machine's steal time when last sampled, and when.
    steal: Option<(Instant, Duration)>,
}

/// How often the loop samples the machine's steal time (reading
/// `/proc/stat` costs tens of microseconds: not every turn).
const STEAL_EVERY: Duration = Duration::from_millis(100);

impl QuietSeconds {
    /// A turn of the loop at `now`: `moved` packets read and written so
    /// far, `held` data packets inside the model ([`Sim::packets_held`]); `steal` reads the
    /// machine's steal time (called at most every [`STEAL_EVERY`] and
    /// after a long gap). Closes every second that ended since the last
    /// turn.
    pub fn turn(
        &mut self,
        now: Instant,
        moved: u64,
        held: u64,
        steal: &mut dyn FnMut() -> Option<Duration>,
    ) {
        let w = &mut self.watch;
        let now_s = now.as_nanos() / 1_000_000_000;
        let gap = w.last_turn.map(|last| (last, now.saturating_since(last)));
        let long_gap = gap.is_some_and(|(_, g)| g >= RELAY_GAP);
        if long_gap
            || w.steal
                .is_none_or(|(t, _)| now.saturating_since(t) >= STEAL_EVERY)
        {
            let sample = steal();
            if let Some((last, g)) = gap.filter(|_| long_gap) {
                // Stolen for at least half the gap (the last sample was
                // at most STEAL_EVERY before it began): the machine, not
                // the relay, stood still.
                let stolen = match (w.steal, sample) {
                    (Some((_, before)), Some(after)) => after.saturating_sub(before),
                    _ => Duration::ZERO,
                };
                let whose = if stolen.as_nanos() * 2 >= g.as_nanos() {
                    "vm"
                } else {
                    "relay"
                };
                w.relay_gap = Some((last.as_nanos() / 1_000_000_000, now_s, whose));
            }
            w.steal = sample.map(|s| (now, s));
        }
        w.last_turn = Some(now);
        if now_s == w.second {
            return;
        }
        // Seconds w.second..now_s have ended. `moved` counts what moved
        // before this turn: in the watched second if the relay ran in it
        // (a turn at least every 10 ms), and nothing in the seconds after
        // it that had no turn at all (the relay did not run through them).
        let mut quiet = Vec::new();
        if moved == w.moved_before && w.moved_before > 0 {
            quiet.push(w.second);
        }
        if moved > 0 {
            quiet.extend(w.second + 1..now_s);
        }
        for k in quiet {
            let stalled = w
                .relay_gap
                .filter(|(a, b, _)| *a <= k && k <= *b)
                .map(|(_, _, whose)| whose);
            let cause = if let Some(whose) = stalled {
                whose
            } else if held > 0 {
                "model"
            } else {
                "hosts"
            };
            self.count += 1;
            if self.first.len() < QUIET_LISTED {
                self.first.push(Quiet { second: k, cause });
            }
        }
        w.second = now_s;
        w.moved_before = moved;
    }
}

/// A distribution of durations in bounded memory: an HDR histogram from
/// 1 ns to 60 s with 3 significant digits (a percentile is within 0.1 % of
/// the true value, whatever the run's length; a longer value counts as
/// 60 s).
#[derive(Debug, Clone, Serialize)]
pub struct Distribution {
    pub count: u64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
    #[serde(skip)]
    histogram: Histogram<u64>,
}

impl Default for Distribution {
    fn default() -> Self {
        Distribution {
            count: 0,
            p50: 0.0,
            p99: 0.0,
            max: 0.0,
            histogram: Histogram::new_with_bounds(1, 60_000_000_000, 3)
                .expect("1 ns .. 60 s at 3 significant digits is a valid range"),
        }
    }
}

impl Distribution {
    /// Records `ns` nanoseconds.
    pub fn record(&mut self, ns: u64) {
        self.histogram.saturating_record(ns);
    }

    fn finish(&mut self) {
        let h = &self.histogram;
        self.count = h.len();
        self.p50 = h.value_at_quantile(0.50) as f64 / 1e3;
        self.p99 = h.value_at_quantile(0.99) as f64 / 1e3;
        self.max = h.max() as f64 / 1e3;
    }
}

/// The hosts' devices and capture files.
#[derive(Debug)]
pub struct Links {
    pub server: Tun,
    /// Each UE's device, by RNTI.
    pub ues: Vec<(Rnti, Tun)>,
    pub server_pcap: Option<Capture>,
    pub ue_pcaps: Vec<Option<Capture>>,
}

/// What the loop serves besides the engine's own events.
#[derive(Debug, Default)]
pub struct Io<'a> {
    /// The hosts' devices (the emulator), if any.
    pub links: Option<&'a mut Links>,
    /// The cell's E2 node, if any (started by the loop).
    pub e2: Option<&'a mut E2Link>,
}

/// Why the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The planned duration elapsed.
    Duration,
    /// The UE command (or the caller's check) said so.
    Done,
    /// A signal asked for it.
    Signal,
}

/// How long the relay runs and how it waits.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// The run ends at this time of the clock.
    pub until: Instant,
    /// Wake this long before each deadline and busy-wait the rest.
    pub spin: Duration,
    /// Run the loop thread at SCHED_FIFO ([`realtime_scheduling`]): for
    /// one loop per core at most, since a real-time thread that cannot
    /// keep up holds its core against everything else.
    pub realtime: bool,
}

/// Relays until `plan.until`, `stop` is set, or `done()` returns true
/// (checked every 10 ms); returns why and when it stopped.
pub fn run(
    sim: &mut Sim,
    io: Io<'_>,
    clock: &Clock,
    plan: Plan,
    stop: &AtomicBool,
    done: &mut dyn FnMut() -> bool,
    stats: &mut RelayStats,
) -> Result<(Stop, Instant), EmuError> {
    let Plan {
        until,
        spin,
        realtime,
    } = plan;
    // After the programs were spawned: they keep normal priority anyway
    // (SCHED_RESET_ON_FORK), and the relay must not wait behind them.
    stats.scheduling = if realtime {
        realtime_scheduling()
    } else {
        "normal (more real-time loops than cores less one)".to_string()
    };
    let Io { mut links, mut e2 } = io;
    let mut poll = Poll::new().map_err(|e| EmuError::io("epoll", e))?;
    let timer = Timer::new()?;
    let registry = poll.registry();
    registry
        .register(&mut SourceFd(&timer.raw_fd()), TIMER, Interest::READABLE)
        .map_err(|e| EmuError::io("epoll", e))?;
    if let Some(links) = links.as_deref() {
        registry
            .register(
                &mut SourceFd(&links.server.raw_fd()),
                SERVER,
                Interest::READABLE,
            )
            .map_err(|e| EmuError::io("epoll", e))?;
        for (k, (_, tun)) in links.ues.iter().enumerate() {
            registry
                .register(
                    &mut SourceFd(&tun.raw_fd()),
                    Token(FIRST_UE + k),
                    Interest::READABLE,
                )
                .map_err(|e| EmuError::io("epoll", e))?;
        }
    }
    if let Some(e2) = e2.as_deref_mut() {
        let waker = mio::Waker::new(registry, E2_WAKE).map_err(|e| EmuError::io("epoll", e))?;
        e2.start(clock.unix_offset_us(), move || {
            let _ = waker.wake();
        })?;
    }
    let mut events = Events::with_capacity(64);
    let mut buf = vec![0u8; MTU + 64];
    let check_every = Duration::from_millis(10);
    let mut next_check = Instant::ZERO;
    let mut deadline: Option<Instant> = None;
    loop {
        stats.turns += 1;
        let now = clock.now();
        let moved = stats.downlink_in + stats.uplink_in + stats.downlink_out + stats.uplink_out;
        stats
            .quiet
            .turn(now, moved, sim.packets_held(), &mut host_steal);
        if let Some(d) = deadline.take() {
            if now >= d {
                stats.lateness_us.record(now.saturating_since(d).as_nanos());
            }
        }
        if stop.load(Ordering::Relaxed) {
            return Ok((Stop::Signal, now));
        }
        if now >= until {
            return Ok((Stop::Duration, until));
        }
        if now >= next_check {
            next_check = now + check_every;
            if done() {
                return Ok((Stop::Done, now));
            }
        }
        sim.run_until(now);
        if let Some(e2) = e2.as_deref_mut() {
            e2.poll(sim, clock.now())?;
        }
        let mut more = false;
        if let Some(links) = links.as_deref_mut() {
            write_out(sim, links, clock, stats)?;
            // Edge-triggered readiness: a device that gave a full batch may
            // hold more, so the loop comes back without sleeping.
            more = read_batch(sim, links, None, clock, &mut buf, stats)?;
            for k in 0..links.ues.len() {
                more |= read_batch(sim, links, Some(k), clock, &mut buf, stats)?;
            }
            write_out(sim, links, clock, stats)?;
        }
        let next = Instant::earliest(
            sim.next_event_time(),
            e2.as_deref().and_then(E2Link::next_wakeup),
        )
        .map_or(until, |t| t.min(until));
        if more || next <= clock.now() {
            continue;
        }
        let next = next.min(next_check.max(clock.now()));
        // The timer's own wake-up latency (tens of microseconds on a
        // virtual machine) is what `spin` trades CPU against.
        timer.arm(clock, next - spin)?;
        deadline = Some(next);
        match poll.poll(&mut events, None) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(EmuError::io("epoll", e)),
        }
        if !events.iter().any(|e| e.token() == TIMER) {
            // Woken by a packet before the deadline: not a late wake-up.
            deadline = None;
        } else if spin > Duration::ZERO {
            while clock.now() < next {
                std::hint::spin_loop();
            }
        }
    }
}

/// Reads up to [`BATCH`] packets from the server's device (`ue = None`) or
/// UE `ue`'s, into the engine; returns whether the batch was full.
fn read_batch(
    sim: &mut Sim,
    links: &mut Links,
    ue: Option<usize>,
    clock: &Clock,
    buf: &mut [u8],
    stats: &mut RelayStats,
) -> Result<bool, EmuError> {
    for _ in 0..BATCH {
        let tun = match ue {
            None => &links.server,
            Some(k) => &links.ues[k].1,
        };
        let Some(n) = tun.recv(buf)? else {
            return Ok(false);
        };
        let now = clock.now();
        let bytes = &buf[..n];
        let capture = match ue {
            None => links.server_pcap.as_mut(),
            Some(k) => links.ue_pcaps[k].as_mut(),
        };
        if let Some(c) = capture {
            c.record(now.as_nanos(), Direction::FromHost, bytes)?;
        }
        let packet = tcran_wire::packet_from_bytes(PacketId(0), bytes.into(), false, now);
        if packet.malformed {
            stats.malformed_in += 1;
        }
        sim.run_until(now);
        match ue {
            None => {
                stats.downlink_in += 1;
                sim.live_downlink(packet, now);
            }
            Some(k) => {
                stats.uplink_in += 1;
                let rnti = links.ues[k].0;
                sim.live_uplink(rnti, packet, now);
            }
        }
    }
    Ok(true)
}

/// Writes every packet the engine let out to its device.
fn write_out(
    sim: &mut Sim,
    links: &mut Links,
    clock: &Clock,
    stats: &mut RelayStats,
) -> Result<(), EmuError> {
    while let Some(out) = sim.poll_live() {
        let (tun, capture, packet, due, down) = match out {
            LiveOutput::ToUe { rnti, packet, at } => {
                let Some(k) = links.ues.iter().position(|(r, _)| *r == rnti) else {
                    stats.write_errors += 1;
                    continue;
                };
                (
                    &links.ues[k].1,
                    links.ue_pcaps[k].as_mut(),
                    packet,
                    at,
                    true,
                )
            }
            LiveOutput::ToServer { packet, at } => {
                (&links.server, links.server_pcap.as_mut(), packet, at, false)
            }
        };
        let Some(bytes) = packet.payload.as_deref() else {
            stats.write_errors += 1;
            continue;
        };
        // A DL SDAP header the node added is the radio's, not the host's.
        let bytes = if packet.sdap_header && !bytes.is_empty() {
            &bytes[1..]
        } else {
            bytes
        };
        let now = clock.now();
        stats
            .added_latency_us
            .record(now.saturating_since(due).as_nanos());
        if let Some(c) = capture {
            c.record(now.as_nanos(), Direction::ToHost, bytes)?;
        }
        match tun.send(bytes) {
            Ok(true) => {
                if down {
                    stats.downlink_out += 1;
                } else {
                    stats.uplink_out += 1;
                }
            }
            Ok(false) => stats.write_dropped += 1,
            Err(_) => stats.write_errors += 1,
        }
    }
    Ok(())
}

impl RelayStats {
    pub fn finish(&mut self) {
        self.lateness_us.finish();
        self.added_latency_us.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::Distribution;

    #[test]
    fn distribution_percentiles_are_within_a_thousandth() {
        let mut d = Distribution::default();
        for v in 1..=100_000u64 {
            d.record(v * 1000); // 1 us .. 100 ms
        }
        d.finish();
        // Exact nearest-rank values: p50 = 50 ms, p99 = 99 ms, max 100 ms.
        for (got, want) in [(d.p50, 50_000.0), (d.p99, 99_000.0), (d.max, 100_000.0)] {
            assert!((got - want).abs() <= want * 1e-3, "{got} vs {want}");
        }
        assert_eq!(d.count, 100_000);
    }

    use super::{Duration, Instant, QuietSeconds};

    fn at_ms(ms: u64) -> Instant {
        Instant::from_millis(ms)
    }

    /// Turns every 10 ms; packets move in seconds 0-2, none in 3-4 while
    /// the model holds some (a pacer), none in 5 with the model empty (the
    /// hosts sent nothing), then the loop does not run from 6.2 s to 9.5 s
    /// (seconds 6-9: the relay's, or the whole machine's if its CPUs were
    /// stolen meanwhile), and packets move again from 10 s.
    fn quiet_causes(stolen_in_gap: Duration) -> Vec<(u64, &'static str)> {
        let mut q = QuietSeconds::default();
        let mut moved = 0;
        let mut t = 0;
        let mut samples = 0;
        while t < 12_000 {
            if (6_200..9_500).contains(&t) {
                t = 9_500;
            }
            // Sampled when the previous second has just ended.
            let held = if t <= 5_000 { 3 } else { 0 };
            // 10 ms of steal per second outside the gap.
            let steal = Duration::from_millis(t / 100)
                + if t >= 9_500 {
                    stolen_in_gap
                } else {
                    Duration::ZERO
                };
            q.turn(at_ms(t), moved, held, &mut || {
                samples += 1;
                Some(steal)
            });
            if !(3_000..10_000).contains(&t) {
                moved += 1;
            }
            t += 10;
        }
        // Every 100 ms from 0 to 6.1 s and from 9.6 to 11.9 s (62 + 24),
        // and at the turn that ends the gap.
        assert_eq!(samples, 62 + 24 + 1);
        assert_eq!(q.count, q.first.len() as u64);
        q.first.iter().map(|x| (x.second, x.cause)).collect()
    }

    #[test]
    fn quiet_seconds_say_who_held_things_up() {
        let ours = [(3, "model"), (4, "model"), (5, "hosts")];
        let gap = [6, 7, 8, 9];
        let with = |whose| {
            ours.into_iter()
                .chain(gap.map(|s| (s, whose)))
                .collect::<Vec<_>>()
        };
        // The machine ran (33 ms of steal in 3.3 s): the relay stalled.
        assert_eq!(quiet_causes(Duration::ZERO), with("relay"));
        assert_eq!(quiet_causes(Duration::from_millis(1_500)), with("relay"));
        // Stolen for most of the gap: the machine stood still.
        assert_eq!(quiet_causes(Duration::from_millis(3_000)), with("vm"));
        // Nothing moved yet: the seconds before the first packet are not quiet.
        let mut q = QuietSeconds::default();
        for t in (0..5_000).step_by(10) {
            q.turn(at_ms(t), 0, 0, &mut || None);
        }
        assert_eq!(q.count, 0);
    }
}
