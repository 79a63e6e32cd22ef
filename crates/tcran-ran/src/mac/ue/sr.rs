//! The scheduling request procedure of a UE's MAC (TS 38.321 §5.4.4) on
//! one PUCCH SR resource (TS 38.331 `SchedulingRequestResourceConfig`).
//!
//! Contract: a Regular BSR that finds no uplink grant triggers an SR
//! (§5.4.5); the SR stays pending until a BSR (not truncated) goes out or
//! a grant holds all the data (§5.4.4 cancellation). While it is pending,
//! at each SR occasion (slot s with (s - offset) mod period = 0, TS 38.213
//! §9.2.4, slot-level periods only) with sr-ProhibitTimer not running: if
//! SR_COUNTER < sr-TransMax the UE signals the SR, increments SR_COUNTER
//! and starts sr-ProhibitTimer; otherwise it gives up on PUCCH, cancels
//! the SR and starts random access (counted; the caller models what the
//! random access costs). SR_COUNTER is set to 0 when an SR is triggered
//! and no other SR is pending.

use tcran_core::{Duration, Instant};

/// Slot periods TS 38.331 `periodicityAndOffset` allows (sl1 .. sl640;
/// the sub-slot sym2 / sym6or7 periods are not modelled).
pub const SR_PERIOD_SLOTS: [u32; 13] = [1, 2, 4, 5, 8, 10, 16, 20, 40, 80, 160, 320, 640];

/// `sr-TransMax` values (n4 .. n64).
pub const SR_TRANS_MAX: [u32; 5] = [4, 8, 16, 32, 64];

/// `sr-ProhibitTimer` values in ms (0 when absent; ms1 .. ms128).
pub const SR_PROHIBIT_MS: [u32; 9] = [0, 1, 2, 4, 8, 16, 32, 64, 128];

/// The SR resource and procedure parameters.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SrParams {
    pub period_slots: u32,
    pub offset_slots: u32,
    pub trans_max: u32,
    pub prohibit: Duration,
}

/// What the procedure does in a slot.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SrAction {
    /// Nothing on PUCCH.
    None,
    /// An SR goes out on PUCCH in this slot.
    Signal,
    /// sr-TransMax reached: the SR is cancelled and random access starts.
    RandomAccess,
}

/// State of the SR procedure.
#[derive(Clone, Debug)]
pub struct SrProcedure {
    p: SrParams,
    pending: bool,
    counter: u32,
    prohibit_until: Option<Instant>,
}

impl SrProcedure {
    pub fn new(p: SrParams) -> SrProcedure {
        SrProcedure {
            p,
            pending: false,
            counter: 0,
            prohibit_until: None,
        }
    }

    pub fn is_pending(&self) -> bool {
        self.pending
    }

    /// SR_COUNTER.
    pub fn counter(&self) -> u32 {
        self.counter
    }

    /// An SR is triggered (by a Regular BSR without a grant).
    pub fn trigger(&mut self) {
        if !self.pending {
            self.pending = true;
            self.counter = 0;
        }
    }

    /// Cancels the pending SR and stops sr-ProhibitTimer (a BSR went out,
    /// or a grant held all the data).
    pub fn cancel(&mut self) {
        self.pending = false;
        self.prohibit_until = None;
    }

    /// Is `slot` an SR occasion of the resource.
    pub fn is_occasion(&self, slot: u64) -> bool {
        let p = u64::from(self.p.period_slots);
        slot % p == u64::from(self.p.offset_slots) % p
    }

    /// Runs the procedure in slot `slot` starting at `now`.
    pub fn on_slot(&mut self, now: Instant, slot: u64) -> SrAction {
        if !self.pending || !self.is_occasion(slot) {
            return SrAction::None;
        }
        if self.prohibit_until.is_some_and(|until| now < until) {
            return SrAction::None;
        }
        if self.counter < self.p.trans_max {
            self.counter += 1;
            self.prohibit_until = Some(now + self.p.prohibit);
            SrAction::Signal
        } else {
            self.cancel();
            SrAction::RandomAccess
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SLOT: u64 = 500; // µs, µ = 1

    fn at(slot: u64) -> Instant {
        Instant::from_micros(slot * SLOT)
    }

    fn params(period: u32, offset: u32, trans_max: u32, prohibit_ms: u64) -> SrParams {
        SrParams {
            period_slots: period,
            offset_slots: offset,
            trans_max,
            prohibit: Duration::from_millis(prohibit_ms),
        }
    }

    fn signals(sr: &mut SrProcedure, slots: std::ops::Range<u64>) -> Vec<(u64, SrAction)> {
        slots
            .map(|s| (s, sr.on_slot(at(s), s)))
            .filter(|(_, a)| *a != SrAction::None)
            .collect()
    }

    #[test]
    fn an_sr_goes_out_on_the_occasions_of_its_period_and_offset() {
        let mut sr = SrProcedure::new(params(10, 3, 64, 0));
        sr.trigger();
        let got = signals(&mut sr, 0..40);
        let slots: Vec<u64> = got.iter().map(|g| g.0).collect();
        assert_eq!(slots, [3, 13, 23, 33]);
        assert_eq!(sr.counter(), 4);
    }

    #[test]
    fn the_prohibit_timer_skips_occasions() {
        // Period 2 slots (1 ms), prohibit 4 ms = 8 slots: after the SR in
        // slot 0 the occasions 2, 4, 6 fall inside the timer, 8 does not.
        let mut sr = SrProcedure::new(params(2, 0, 64, 4));
        sr.trigger();
        let slots: Vec<u64> = signals(&mut sr, 0..20).iter().map(|g| g.0).collect();
        assert_eq!(slots, [0, 8, 16]);
    }

    #[test]
    fn sr_trans_max_ends_in_random_access() {
        let mut sr = SrProcedure::new(params(1, 0, 4, 0));
        sr.trigger();
        let got = signals(&mut sr, 0..10);
        assert_eq!(
            got,
            [
                (0, SrAction::Signal),
                (1, SrAction::Signal),
                (2, SrAction::Signal),
                (3, SrAction::Signal),
                (4, SrAction::RandomAccess),
            ]
        );
        assert!(!sr.is_pending());
    }

    #[test]
    fn a_new_trigger_while_pending_keeps_the_counter() {
        let mut sr = SrProcedure::new(params(1, 0, 8, 0));
        sr.trigger();
        sr.on_slot(at(0), 0);
        sr.trigger();
        assert_eq!(sr.counter(), 1);
        sr.cancel();
        sr.trigger();
        assert_eq!(sr.counter(), 0);
    }
}
