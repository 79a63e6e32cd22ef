//! NR numerology µ (TS 38.211 §4.2, Table 4.2-1; slot structure §4.3.2).
//!
//! Δf = 15·2^µ kHz, 14 OFDM symbols per slot (normal CP), 2^µ slots per 1-ms
//! subframe, so the slot lasts 1 ms / 2^µ: 1 ms, 500 µs, 250 µs, 125 µs for
//! µ = 0..=3. Only µ 0..=3 carry data (µ 4 is SSB-only in FR2-1; µ 5/6 are
//! FR2-2, Rel-17, not modelled), so anything else is a [`ConfigError`].

use serde::{Deserialize, Serialize};
use tcran_core::config::check_range;
use tcran_core::{ConfigError, Duration};

/// OFDM symbols per slot with normal cyclic prefix (TS 38.211 Table 4.3.2-1).
pub const SYMBOLS_PER_SLOT: u8 = 14;
/// Subcarriers per resource block (TS 38.211 §4.4.4.1).
pub const SUBCARRIERS_PER_RB: u16 = 12;
/// Largest µ with data channels.
pub const MAX_MU: u8 = 3;

/// A numerology µ in 0..=3.
#[derive(
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Debug,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(try_from = "u8", into = "u8")]
pub struct Numerology(u8);

impl Numerology {
    pub const MU0: Numerology = Numerology(0);
    pub const MU1: Numerology = Numerology(1);
    pub const MU2: Numerology = Numerology(2);
    pub const MU3: Numerology = Numerology(3);

    pub fn new(mu: u8) -> Result<Numerology, ConfigError> {
        check_range("mu", mu, 0, MAX_MU).map(Numerology)
    }

    /// From the subcarrier spacing in kHz (15, 30, 60, 120).
    pub fn from_scs_khz(scs_khz: u32) -> Result<Numerology, ConfigError> {
        (0..=MAX_MU)
            .map(Numerology)
            .find(|n| n.scs_khz() == scs_khz)
            .ok_or_else(|| {
                ConfigError::new(
                    "scs",
                    format!("{scs_khz}kHz"),
                    "must be one of 15, 30, 60, 120 kHz",
                )
            })
    }

    pub const fn mu(self) -> u8 {
        self.0
    }

    /// Subcarrier spacing Δf = 15·2^µ kHz.
    pub const fn scs_khz(self) -> u32 {
        15 << self.0
    }

    /// Slots per 1-ms subframe, 2^µ.
    pub const fn slots_per_subframe(self) -> u32 {
        1 << self.0
    }

    /// Slots per 10-ms frame, 10·2^µ.
    pub const fn slots_per_frame(self) -> u32 {
        10 << self.0
    }

    /// Slot duration, 1 ms / 2^µ (exact in nanoseconds for µ <= 3).
    pub const fn slot_duration(self) -> Duration {
        Duration::from_nanos(1_000_000 >> self.0)
    }

    /// Index of the slot that contains `t` (time since the start of slot 0).
    pub const fn slot_index(self, since_start: Duration) -> u64 {
        since_start.as_nanos() / self.slot_duration().as_nanos()
    }
}

impl TryFrom<u8> for Numerology {
    type Error = ConfigError;
    fn try_from(mu: u8) -> Result<Self, ConfigError> {
        Numerology::new(mu)
    }
}

impl From<Numerology> for u8 {
    fn from(n: Numerology) -> u8 {
        n.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_durations_follow_ts38211_table_4_2_1() {
        let want = [(15, 1, 1_000), (30, 2, 500), (60, 4, 250), (120, 8, 125)];
        for (mu, (scs, slots, us)) in want.into_iter().enumerate() {
            let n = Numerology::new(mu as u8).unwrap();
            assert_eq!(n.scs_khz(), scs);
            assert_eq!(n.slots_per_subframe(), slots);
            assert_eq!(n.slots_per_frame(), 10 * slots);
            assert_eq!(n.slot_duration(), Duration::from_micros(us));
            assert_eq!(Numerology::from_scs_khz(scs).unwrap(), n);
        }
    }

    #[test]
    fn matches_the_embedded_numerology_csv() {
        for line in crate::tables::NR_NUMEROLOGY.1.lines().skip(1) {
            let c: Vec<&str> = line.split(',').collect();
            let mu: u8 = c[0].parse().unwrap();
            let Ok(n) = Numerology::new(mu) else {
                assert!(mu > MAX_MU);
                continue;
            };
            assert_eq!(n.scs_khz().to_string(), c[1]);
            assert_eq!(SYMBOLS_PER_SLOT.to_string(), c[2]);
            assert_eq!(n.slots_per_subframe().to_string(), c[3]);
            assert_eq!(n.slots_per_frame().to_string(), c[4]);
            assert_eq!(
                n.slot_duration(),
                Duration::from_micros(c[5].parse().unwrap())
            );
        }
    }

    #[test]
    fn rejects_mu_above_3_naming_the_field() {
        let e = Numerology::new(4).unwrap_err();
        assert_eq!(e.to_string(), "mu = 4: must be in 0..=3");
        assert!(Numerology::from_scs_khz(240).is_err());
        assert!(serde_json::from_str::<Numerology>("5").is_err());
        assert_eq!(
            serde_json::from_str::<Numerology>("1").unwrap(),
            Numerology::MU1
        );
    }

    #[test]
    fn slot_index_counts_whole_slots() {
        let n = Numerology::MU1;
        assert_eq!(n.slot_index(Duration::from_micros(499)), 0);
        assert_eq!(n.slot_index(Duration::from_micros(500)), 1);
        assert_eq!(n.slot_index(Duration::from_millis(10)), 20);
    }
}
