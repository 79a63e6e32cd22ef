//! Duplexing: which slots carry downlink, and how many DL symbols.
//!
//! FDD: every slot is downlink (14 symbols). TDD: a periodic pattern written
//! as a string of slot letters, as in the RRC `TDD-UL-DL-ConfigCommon`
//! (TS 38.331) / TS 38.213 §11.1 and the usual shorthand:
//!
//! - `D`: downlink slot, all 14 symbols DL;
//! - `U`: uplink slot, no DL symbols;
//! - `S`: special (flexible) slot: the first `special_dl_symbols` symbols are
//!   DL, then guard and UL symbols.
//!
//! `special_dl_symbols` defaults to [`DEFAULT_SPECIAL_DL_SYMBOLS`] = 6 of 14
//! (e.g. an S slot of 6 DL + 4 guard + 4 UL symbols); deployments differ
//! (srsRAN, OAI and commercial configurations use anything from 2 to 12), so
//! it is a parameter. Common patterns: `"DDDSU"` (2.5 ms at 30 kHz),
//! `"DDDDDDDSUU"` (5 ms at 30 kHz), `"DDSUU"`.
//!
//! The PDSCH of a slot usually leaves room for the PDCCH: pass
//! `dl_symbols(slot) - control_symbols` as `n_symb_sh` to the TBS
//! ([`crate::phy::tbs::TbsInput`]).

use crate::phy::numerology::SYMBOLS_PER_SLOT;
use std::fmt;
use std::str::FromStr;
use tcran_core::config::check_range;
use tcran_core::ConfigError;

/// DL symbols of an `S` slot unless configured otherwise.
pub const DEFAULT_SPECIAL_DL_SYMBOLS: u8 = 6;
/// Longest pattern accepted: a 10-ms period at µ = 3 has 80 slots.
pub const MAX_PATTERN_SLOTS: usize = 80;

/// The direction of one slot.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum SlotKind {
    Downlink,
    Uplink,
    Special,
}

impl SlotKind {
    const fn letter(self) -> char {
        match self {
            SlotKind::Downlink => 'D',
            SlotKind::Uplink => 'U',
            SlotKind::Special => 'S',
        }
    }
}

/// A periodic slot pattern (FDD = the one-slot pattern `D`).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct SlotPattern {
    slots: Vec<SlotKind>,
    special_dl_symbols: u8,
    fdd: bool,
}

impl SlotPattern {
    /// FDD: every slot is a full downlink slot.
    pub fn fdd() -> SlotPattern {
        SlotPattern {
            slots: vec![SlotKind::Downlink],
            special_dl_symbols: DEFAULT_SPECIAL_DL_SYMBOLS,
            fdd: true,
        }
    }

    /// A TDD pattern such as `"DDDSU"` (letters D, U, S, case-insensitive;
    /// spaces ignored) with `special_dl_symbols` DL symbols in each S slot
    /// (0..=14).
    pub fn tdd(pattern: &str, special_dl_symbols: u8) -> Result<SlotPattern, ConfigError> {
        check_range(
            "special_dl_symbols",
            special_dl_symbols,
            0,
            SYMBOLS_PER_SLOT,
        )?;
        let bad = |why: &str| ConfigError::new("tdd_pattern", format!("{pattern:?}"), why);
        let slots = pattern
            .chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| match c.to_ascii_uppercase() {
                'D' => Ok(SlotKind::Downlink),
                'U' => Ok(SlotKind::Uplink),
                'S' => Ok(SlotKind::Special),
                _ => Err(bad(
                    "must be slot letters D (downlink), U (uplink), S (special), like \"DDDSU\"",
                )),
            })
            .collect::<Result<Vec<_>, _>>()?;
        if slots.is_empty() || slots.len() > MAX_PATTERN_SLOTS {
            return Err(bad("must have 1..=80 slots"));
        }
        Ok(SlotPattern {
            slots,
            special_dl_symbols,
            fdd: false,
        })
    }

    pub fn is_fdd(&self) -> bool {
        self.fdd
    }

    /// Slots per period.
    pub fn period_slots(&self) -> usize {
        self.slots.len()
    }

    pub fn special_dl_symbols(&self) -> u8 {
        self.special_dl_symbols
    }

    /// The kind of slot `slot_index` (counted from the start of a period).
    pub fn kind(&self, slot_index: u64) -> SlotKind {
        self.slots[(slot_index % self.slots.len() as u64) as usize]
    }

    /// DL symbols in slot `slot_index`: 14, `special_dl_symbols` or 0.
    pub fn dl_symbols(&self, slot_index: u64) -> u8 {
        match self.kind(slot_index) {
            SlotKind::Downlink => SYMBOLS_PER_SLOT,
            SlotKind::Special => self.special_dl_symbols,
            SlotKind::Uplink => 0,
        }
    }

    /// Whether slot `slot_index` carries any downlink symbol.
    pub fn is_downlink(&self, slot_index: u64) -> bool {
        self.dl_symbols(slot_index) > 0
    }

    /// Share of all symbols that are downlink, e.g. 0.7714 for `DDDSU` with 6.
    pub fn dl_fraction(&self) -> f64 {
        let dl: u32 = (0..self.slots.len() as u64)
            .map(|i| u32::from(self.dl_symbols(i)))
            .sum();
        f64::from(dl) / (self.slots.len() as f64 * f64::from(SYMBOLS_PER_SLOT))
    }
}

impl Default for SlotPattern {
    fn default() -> Self {
        SlotPattern::fdd()
    }
}

impl FromStr for SlotPattern {
    type Err = ConfigError;
    /// `"FDD"` or a TDD pattern with the default S-slot DL symbols.
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        if s.trim().eq_ignore_ascii_case("fdd") {
            Ok(SlotPattern::fdd())
        } else {
            SlotPattern::tdd(s, DEFAULT_SPECIAL_DL_SYMBOLS)
        }
    }
}

impl fmt::Display for SlotPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.fdd {
            return f.write_str("FDD");
        }
        for s in &self.slots {
            write!(f, "{}", s.letter())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fdd_is_all_downlink() {
        let p = SlotPattern::fdd();
        assert!((0..100).all(|i| p.is_downlink(i) && p.dl_symbols(i) == 14));
        assert_eq!(p.to_string(), "FDD");
        assert_eq!("fdd".parse::<SlotPattern>().unwrap(), p);
        assert_eq!(p.dl_fraction(), 1.0);
    }

    #[test]
    fn dddsu_repeats_with_special_symbols() {
        let p: SlotPattern = "DDDSU".parse().unwrap();
        let syms: Vec<u8> = (0..10).map(|i| p.dl_symbols(i)).collect();
        assert_eq!(syms, [14, 14, 14, 6, 0, 14, 14, 14, 6, 0]);
        assert!(p.is_downlink(3) && !p.is_downlink(4) && !p.is_downlink(9));
        assert_eq!(p.kind(8), SlotKind::Special);
        assert!((p.dl_fraction() - 48.0 / 70.0).abs() < 1e-12);
        assert_eq!(p.to_string(), "DDDSU");
    }

    #[test]
    fn special_symbols_are_a_parameter() {
        let p = SlotPattern::tdd("DDDDDDDSUU", 10).unwrap();
        assert_eq!(p.period_slots(), 10);
        assert_eq!(p.dl_symbols(7), 10);
        let p = SlotPattern::tdd("ddsu", 0).unwrap();
        assert!(!p.is_downlink(2));
    }

    #[test]
    fn bad_patterns_are_config_errors() {
        assert_eq!(
            SlotPattern::tdd("DDXU", 6).unwrap_err().field,
            "tdd_pattern"
        );
        assert!(SlotPattern::tdd("", 6).is_err());
        assert!(SlotPattern::tdd(&"D".repeat(81), 6).is_err());
        assert_eq!(
            SlotPattern::tdd("DDSU", 15).unwrap_err().field,
            "special_dl_symbols"
        );
    }
}
