//! The two metering primitives shared by the policer and the shaper: an exact
//! integer token bucket and a fixed-window rate meter.
//!
//! ## Token bucket
//!
//! Tokens are bytes. They accrue continuously at `rate` and are capped at the
//! bucket `size`; the bucket starts full (RFC 2697 sec. 3: "initially the
//! token count Tc(0) = CBS"; ns-3 `TbfQueueDisc` and Linux `sch_tbf` alike).
//!
//! Internally a token count is kept in units of 1/8e9 byte ("bit-nanoseconds"),
//! so that a refill of `rate_bps * elapsed_ns` is an exact integer and the
//! wake-up time `deficit / rate_bps` is an exact (ceiled) number of
//! nanoseconds. No floating point on the data path means the simulator and
//! the emulator agree to the nanosecond and the oracle numbers of ns-3's TBF
//! test (algorithms.md sec. 2.5) come out exactly, not approximately.
//! `i128` holds any `u64` elapsed time times any `u64` rate without overflow.
//!
//! Time must not go backwards; an earlier `now` than the last one is treated
//! as "no time elapsed" (it can neither mint nor destroy tokens).
//!
//! ## Rate meter
//!
//! Bytes are counted in fixed windows aligned to multiples of the window
//! length from time zero (so the windows of every meter in a run line up and
//! results do not depend on when a stage was created). The measured rate is
//! the rate of the last *completed* window: exact, cheap, and what TC-RAN
//! sec. IV-A calls "the rate ... and its time window to calculate it".

use tcran_core::{BitRate, ByteSize, Duration, Instant};

/// Token units per byte: 8 bits x 1e9 ns/s.
const UNITS_PER_BYTE: i128 = 8_000_000_000;

/// A token bucket with an exact integer state.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    rate_bps: u64,
    /// Bucket size, token units.
    capacity: i128,
    /// Token units at `checkpoint`; negative after an oversize packet
    /// (see [`TokenBucket::can_send`]).
    tokens: i128,
    checkpoint: Instant,
}

impl TokenBucket {
    /// A full bucket of `size` bytes filling at `rate`. `rate` must be > 0
    /// (the configs validate this).
    pub fn new(rate: BitRate, size: ByteSize) -> TokenBucket {
        debug_assert!(rate.bps() > 0, "a token bucket needs a positive rate");
        let capacity = size.bytes() as i128 * UNITS_PER_BYTE;
        TokenBucket {
            rate_bps: rate.bps(),
            capacity,
            tokens: capacity,
            checkpoint: Instant::ZERO,
        }
    }

    pub fn rate(&self) -> BitRate {
        BitRate(self.rate_bps)
    }

    /// Bucket size in bytes.
    pub fn size_bytes(&self) -> u64 {
        (self.capacity / UNITS_PER_BYTE) as u64
    }

    /// Token units there would be at `now`, without changing anything.
    fn tokens_at(&self, now: Instant) -> i128 {
        let elapsed = now.saturating_since(self.checkpoint).as_nanos();
        if elapsed == 0 || self.tokens >= self.capacity {
            return self.tokens.min(self.capacity);
        }
        // Capping only at the end is equivalent to capping at every
        // intermediate refill (refilling is monotone), so lazy refill on
        // events gives the same numbers as a continuous fluid bucket.
        (self.tokens + self.rate_bps as i128 * elapsed as i128).min(self.capacity)
    }

    /// Brings the state up to `now`.
    fn refill(&mut self, now: Instant) {
        self.tokens = self.tokens_at(now);
        if now > self.checkpoint {
            self.checkpoint = now;
        }
    }

    /// Tokens (bytes) at `now`; negative while paying off an oversize packet.
    pub fn tokens_bytes_at(&self, now: Instant) -> f64 {
        self.tokens_at(now) as f64 / UNITS_PER_BYTE as f64
    }

    /// Tokens (bytes) as of the last event.
    pub fn tokens_bytes(&self) -> f64 {
        self.tokens as f64 / UNITS_PER_BYTE as f64
    }

    /// Token units a packet of `len` bytes waits for before it may be *sent*
    /// (shaper semantics): `len`, or the whole bucket if `len` exceeds it. The
    /// second case lets an oversize packet leave once the bucket is full and
    /// leaves the bucket in debt, instead of blocking the queue forever (a
    /// shaper must never drop; Linux TBF would drop such a packet at enqueue).
    fn need_to_send(&self, len: u32) -> i128 {
        (len as i128 * UNITS_PER_BYTE).min(self.capacity)
    }

    /// Shaper test: may `len` bytes be sent at `now`? True iff the tokens at
    /// `now` cover `len` (or the bucket is full, for an oversize packet).
    pub fn can_send(&self, len: u32, now: Instant) -> bool {
        self.tokens_at(now) >= self.need_to_send(len)
    }

    /// Time from `now` until [`TokenBucket::can_send`] becomes true, with
    /// nothing else sent meanwhile. Exact: `ceil(deficit / rate)`.
    pub fn time_until_send(&self, len: u32, now: Instant) -> Duration {
        let deficit = self.need_to_send(len) - self.tokens_at(now);
        if deficit <= 0 {
            return Duration::ZERO;
        }
        let rate = self.rate_bps.max(1) as i128;
        let ns = (deficit + rate - 1) / rate;
        Duration::from_nanos(ns.min(u64::MAX as i128) as u64)
    }

    /// Takes `len` bytes of tokens at `now`, unconditionally (the shaper's
    /// `on_sent`; the count may go negative, see `can_send`).
    pub fn consume(&mut self, len: u32, now: Instant) {
        self.refill(now);
        self.tokens -= len as i128 * UNITS_PER_BYTE;
    }

    /// Meter test (policer semantics, RFC 2697 sec. 3 with EBS = 0): if the
    /// tokens at `now` cover `len`, take them and return true (in profile);
    /// otherwise change nothing and return false. A packet larger than the
    /// bucket is never in profile.
    pub fn try_take(&mut self, len: u32, now: Instant) -> bool {
        self.refill(now);
        let need = len as i128 * UNITS_PER_BYTE;
        if self.tokens >= need {
            self.tokens -= need;
            true
        } else {
            false
        }
    }
}

/// Bytes per fixed, time-aligned window; reports the last completed window.
#[derive(Debug, Clone)]
pub struct RateMeter {
    window_ns: u64,
    /// Index (`t / window`) of the window being filled.
    index: u64,
    current: u64,
    /// Bytes of window `index - 1`.
    last: u64,
}

impl RateMeter {
    /// `window` must be > 0 (the configs validate this).
    pub fn new(window: Duration) -> RateMeter {
        RateMeter {
            window_ns: window.as_nanos().max(1),
            index: 0,
            current: 0,
            last: 0,
        }
    }

    pub fn window(&self) -> Duration {
        Duration::from_nanos(self.window_ns)
    }

    fn roll(&mut self, now: Instant) {
        let i = now.as_nanos() / self.window_ns;
        if i > self.index {
            self.last = if i == self.index + 1 { self.current } else { 0 };
            self.current = 0;
            self.index = i;
        }
    }

    pub fn record(&mut self, bytes: u64, now: Instant) {
        self.roll(now);
        self.current += bytes;
    }

    fn to_bps(&self, bytes: u64) -> f64 {
        bytes as f64 * 8.0 * 1e9 / self.window_ns as f64
    }

    /// Rate of the last window completed before the last recorded event.
    pub fn rate_bps(&self) -> f64 {
        self.to_bps(self.last)
    }

    /// Rate of the last window completed before `now` (idle windows count
    /// as zero).
    pub fn rate_bps_at(&self, now: Instant) -> f64 {
        let i = now.as_nanos() / self.window_ns;
        let bytes = if i <= self.index {
            self.last
        } else if i == self.index + 1 {
            self.current
        } else {
            0
        };
        self.to_bps(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_starts_full_and_refills_exactly() {
        // 8 kbit/s = 1000 B/s, 3000 B bucket.
        let mut b = TokenBucket::new(BitRate(8_000), ByteSize(3000));
        assert_eq!(b.tokens_bytes(), 3000.0);
        assert!(b.try_take(3000, Instant::ZERO));
        assert!(!b.try_take(1, Instant::ZERO));
        // 1.5 ms -> 1.5 bytes.
        assert_eq!(b.tokens_bytes_at(Instant::from_micros(1500)), 1.5);
        assert!(b.try_take(1, Instant::from_micros(1500)));
        assert_eq!(b.tokens_bytes(), 0.5);
        // Refill is capped at the bucket size.
        assert_eq!(b.tokens_bytes_at(Instant::from_millis(100_000)), 3000.0);
    }

    #[test]
    fn wait_time_is_ceiled_to_the_nanosecond() {
        // 3 bit/s: one byte takes 8/3 s = 2_666_666_666.67 ns.
        let mut b = TokenBucket::new(BitRate(3), ByteSize(1));
        b.consume(1, Instant::ZERO);
        let d = b.time_until_send(1, Instant::ZERO);
        assert_eq!(d, Duration::from_nanos(2_666_666_667));
        assert!(!b.can_send(1, Instant::ZERO + Duration::from_nanos(2_666_666_666)));
        assert!(b.can_send(1, Instant::ZERO + d));
    }

    #[test]
    fn oversize_packet_goes_when_full_and_leaves_a_debt() {
        let mut b = TokenBucket::new(BitRate(8_000), ByteSize(1000));
        assert!(b.can_send(1500, Instant::ZERO));
        b.consume(1500, Instant::ZERO);
        assert_eq!(b.tokens_bytes(), -500.0);
        // Next oversize packet waits for a full bucket again: 1.5 s.
        assert_eq!(
            b.time_until_send(1500, Instant::ZERO),
            Duration::from_millis(1500)
        );
        // The policer never passes it.
        let mut p = TokenBucket::new(BitRate(8_000), ByteSize(1000));
        assert!(!p.try_take(1500, Instant::ZERO));
    }

    #[test]
    fn time_going_backwards_mints_nothing() {
        let mut b = TokenBucket::new(BitRate(8_000), ByteSize(1000));
        b.consume(1000, Instant::from_secs_f64(1.0));
        assert_eq!(b.tokens_bytes_at(Instant::ZERO), 0.0);
        b.consume(0, Instant::ZERO);
        assert_eq!(b.tokens_bytes_at(Instant::from_secs_f64(1.5)), 500.0);
    }

    #[test]
    fn meter_reports_the_last_completed_window() {
        let mut m = RateMeter::new(Duration::from_millis(100));
        for i in 0..10u64 {
            // 1250 B every 10 ms = 1 Mbit/s.
            m.record(1250, Instant::from_millis(i * 10));
        }
        assert_eq!(m.rate_bps(), 0.0, "first window not complete yet");
        assert_eq!(m.rate_bps_at(Instant::from_millis(150)), 1e6);
        m.record(1250, Instant::from_millis(100));
        assert_eq!(m.rate_bps(), 1e6);
        // Idle for two windows: zero.
        assert_eq!(m.rate_bps_at(Instant::from_millis(300)), 0.0);
        m.record(1, Instant::from_millis(350));
        assert_eq!(m.rate_bps(), 0.0);
    }
}
