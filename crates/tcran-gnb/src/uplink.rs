//! The uplink from the UEs: TCP ACKs, echo replies and RLC STATUS PDUs.
//!
//! Contract: a UE with uplink DRBs sends every uplink packet through them
//! (`uplink_drbs`); for the others, without the scheduling-request model every uplink packet
//! takes `ul_delay` to the gNB. With it (`uplink.sr_period` or
//! `uplink.grant_delay`), a UE with uplink data and no grant waits for its
//! next SR occasion, the grant delay and (TDD) the next U slot; at the
//! grant everything it queued goes up together, and its RLC STATUS PDUs
//! are built there, with what the receivers know then (TS 38.322 §5.3.4).
//! Packets for the core come out as [`Output::Uplink`] with the time they
//! reach the UPF; STATUS PDUs reach the DRB's transmitter inside the node.
//!
//! [`Output::Uplink`]: crate::Output::Uplink

use crate::config::UplinkConfig;
use crate::node::{Ev, Gnb, Output};
use tcran_core::{ConfigError, Duration, Instant, Packet};
use tcran_ran::mac::Mac;
use tcran_ran::rlc::StatusPdu;

/// The uplink scheduling-request / grant model (`uplink`).
#[derive(Debug)]
pub(crate) struct SrModel {
    /// SR period in slots; `None`: a request can go at any instant.
    period_slots: Option<u64>,
    grant_delay: Duration,
    slot: Duration,
    /// TDD: slots per pattern and the indexes of its U slots (empty: FDD or
    /// a pattern without U slot, no rounding).
    pattern_slots: u64,
    u_slots: Vec<u64>,
}

impl SrModel {
    /// When UE `rnti`, which has uplink data from `t` on and no grant,
    /// transmits: its next SR occasion at or after `t` (slot s with
    /// (s - rnti) mod P = 0), plus the grant delay, rounded up to the start
    /// of the next U slot in TDD.
    fn transmit_at(&self, rnti: u16, t: Instant) -> Instant {
        let slot = self.slot.as_nanos();
        let mut at = t;
        if let Some(p) = self.period_slots {
            let s0 = t.as_nanos().div_ceil(slot);
            let r = u64::from(rnti) % p;
            let s = s0 + (r + p - s0 % p) % p;
            at = Instant::from_nanos(s * slot);
        }
        at += self.grant_delay;
        if !self.u_slots.is_empty() {
            let s0 = at.as_nanos().div_ceil(slot);
            let base = s0 - s0 % self.pattern_slots;
            let s = self
                .u_slots
                .iter()
                .map(|&u| {
                    let c = base + u;
                    if c < s0 {
                        c + self.pattern_slots
                    } else {
                        c
                    }
                })
                .min()
                .expect("at least one U slot");
            at = Instant::from_nanos(s * slot);
        }
        at
    }
}

/// The uplink SR/grant model, checked; `None` when it is off.
pub(crate) fn sr_model(c: &UplinkConfig, mac: &Mac) -> Result<Option<SrModel>, ConfigError> {
    if !c.is_on() {
        return Ok(None);
    }
    let slot = mac.slot_duration();
    let period_slots = match c.sr_period {
        None => None,
        Some(p) => {
            let k = p.as_nanos() / slot.as_nanos();
            if p.is_zero() || !p.as_nanos().is_multiple_of(slot.as_nanos()) || k > 640 {
                return Err(ConfigError::new(
                    "sr_period",
                    p,
                    format!("must be a whole number of slots ({slot} each) from 1 to 640 slots"),
                ));
            }
            Some(k)
        }
    };
    tcran_core::config::check_range(
        "grant_delay",
        c.grant_delay,
        Duration::ZERO,
        Duration::from_millis(100),
    )?;
    let pattern = &mac.params().pattern;
    let pattern_slots = pattern.period_slots() as u64;
    let u_slots = if pattern.is_fdd() {
        Vec::new()
    } else {
        (0..pattern_slots)
            .filter(|&s| pattern.kind(s) == tcran_ran::phy::tdd::SlotKind::Uplink)
            .collect()
    };
    Ok(Some(SrModel {
        period_slots,
        grant_delay: c.grant_delay,
        slot,
        pattern_slots,
        u_slots,
    }))
}

impl Gnb {
    /// Hands an uplink packet of UE `u` to the uplink: at once without the
    /// SR model, else at the UE's next grant (asking for one if none is
    /// pending).
    #[inline]
    pub(crate) fn uplink_from(&mut self, u: usize, p: Packet) {
        if let Some(ul) = self.uplink_drbs.as_deref_mut() {
            if ul.has(u) {
                ul.push(u, p, self.now, &mut self.outputs);
                return;
            }
        }
        if self.sr.is_none() {
            self.send_to_core(u, p);
            return;
        }
        self.request_grant(u);
        self.ues[u].ul_queue.push(p);
    }

    /// With the SR model: UE `u` asks for an uplink grant at its next SR
    /// occasion, unless one is pending.
    fn request_grant(&mut self, u: usize) {
        let Some(sr) = &self.sr else { return };
        let ue = &mut self.ues[u];
        if ue.ul_grant.is_none() {
            let at = sr.transmit_at(ue.rnti.0, self.now);
            ue.ul_grant = Some(at);
            self.events.schedule(at, Ev::UlGrant(u));
        }
    }

    /// UE `u`'s uplink grant: its STATUS PDUs are built now, at the
    /// transmission opportunity, with what the receivers know now (TS
    /// 38.322 §5.3.4), whichever packet asked for the grant; then what it
    /// queued goes up.
    pub(crate) fn ul_grant(&mut self, u: usize) {
        self.ues[u].ul_grant = None;
        for d in 0..self.ues[u].drbs.len() {
            if let Some(status) = self.ues[u].drbs[d].rx.poll_status(self.now) {
                self.send_status_pdu(u, d, status);
            }
            self.arm_rlc(u, d);
        }
        let mut items = std::mem::take(&mut self.ues[u].ul_queue);
        for p in items.drain(..) {
            self.send_to_core(u, p);
        }
        // Keep the allocation for the next grant.
        self.ues[u].ul_queue = items;
    }

    /// Transmits an uplink packet for the core now: it reaches the UPF
    /// `ul_delay` later.
    #[inline]
    fn send_to_core(&mut self, u: usize, packet: Packet) {
        self.outputs.list.push(Output::Uplink {
            rnti: self.ues[u].rnti,
            packet,
            at: self.now + self.ul_delay,
        });
    }

    /// Transmits a STATUS PDU of (UE, DRB) now: it reaches the gNB's
    /// transmitter `ul_delay` later.
    fn send_status_pdu(&mut self, u: usize, d: usize, status: StatusPdu) {
        self.events
            .schedule(self.now + self.ul_delay, Ev::StatusAtGnb(u, d, status));
    }

    /// A STATUS PDU of (UE, DRB) may go: without the SR model it is built
    /// and sent now; with it the UE asks for a grant, and the PDU is built
    /// when the grant comes.
    pub(crate) fn send_status(&mut self, u: usize, d: usize) {
        let now = self.now;
        if self.sr.is_some() {
            if self.ues[u].drbs[d].rx.status_at().is_some_and(|t| t <= now) {
                self.request_grant(u);
            }
            return;
        }
        if let Some(status) = self.ues[u].drbs[d].rx.poll_status(now) {
            self.send_status_pdu(u, d, status);
        }
    }
}
