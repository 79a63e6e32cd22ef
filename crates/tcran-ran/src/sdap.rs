//! SDAP (TS 37.324): QoS flow -> DRB mapping per UE.
//!
//! - Many-to-one: each of the 64 QFIs (0..=63, 6 bits) maps to at most one
//!   DRB of the UE (1..=32, TS 38.331 `DRB-Identity`); several QFIs may share
//!   a DRB (§5.2.1). A QFI without a rule goes to the default DRB (§5.3.1,
//!   `defaultDRB`), and is dropped with `DropReason::NoRoute` when there is
//!   none.
//! - Optional 1-byte DL SDAP header per DRB (§6.2.2.3: RDI, RQI, QFI;
//!   `sdap-HeaderDL` in TS 38.331). Where it is accounted: [`Sdap::map`]
//!   returns the DRB and the header size, and [`Sdap::apply`] adds it to
//!   `Packet::len`, so from the TC pipeline down (PDCP, RLC, MAC) every
//!   layer counts the packet as it is on the air. Upper-layer metrics should
//!   use the original length (subtract [`SdapMapping::header_bytes`]).
//!   Live packets with real bytes keep their payload untouched here (the
//!   framing belongs to tcran-wire); only `len` and `sdap_header` change.

use serde::{Deserialize, Serialize};
use tcran_core::config::check_range;
use tcran_core::{ConfigError, DrbId, DropReason, Packet, Qfi};

/// Configuration of one UE's SDAP entity.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SdapConfig {
    /// `(qfi, drb)` rules.
    pub rules: Vec<SdapRule>,
    pub default_drb: Option<u8>,
    /// DRBs whose DL PDUs carry the 1-byte SDAP header.
    pub dl_header_drbs: Vec<u8>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SdapRule {
    pub qfi: u8,
    pub drb: u8,
}

/// Result of mapping one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SdapMapping {
    pub drb: DrbId,
    /// 1 when this DRB carries a DL SDAP header, else 0.
    pub header_bytes: u32,
}

/// One UE's SDAP entity: a 64-entry table, no allocation per packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sdap {
    map: [Option<DrbId>; 64],
    default_drb: Option<DrbId>,
    /// Bit d set: DRB d has a DL header.
    header: u64,
}

impl SdapConfig {
    pub fn build(&self) -> Result<Sdap, ConfigError> {
        let mut map = [None; 64];
        for (i, r) in self.rules.iter().enumerate() {
            let f = |e: ConfigError| e.within(format!("rules[{i}]"));
            check_range("qfi", r.qfi, 0, 63).map_err(f)?;
            check_range("drb", r.drb, 1, 32).map_err(f)?;
            if map[usize::from(r.qfi)].is_some() {
                return Err(ConfigError::new(
                    format!("rules[{i}].qfi"),
                    r.qfi,
                    "each QFI maps to one DRB only",
                ));
            }
            map[usize::from(r.qfi)] = Some(DrbId(r.drb));
        }
        let default_drb = match self.default_drb {
            Some(d) => Some(DrbId(check_range("default_drb", d, 1, 32)?)),
            None => None,
        };
        let mut header = 0u64;
        for (i, &d) in self.dl_header_drbs.iter().enumerate() {
            check_range("dl_header_drbs", d, 1, 32).map_err(|e| ConfigError {
                field: format!("dl_header_drbs[{i}]"),
                ..e
            })?;
            header |= 1 << d;
        }
        Ok(Sdap {
            map,
            default_drb,
            header,
        })
    }
}

impl Sdap {
    /// The DRB for a QFI, or `Err(DropReason::NoRoute)`.
    pub fn map(&self, qfi: Qfi) -> Result<SdapMapping, DropReason> {
        let drb = self
            .map
            .get(usize::from(qfi.0))
            .copied()
            .flatten()
            .or(self.default_drb)
            .ok_or(DropReason::NoRoute)?;
        Ok(SdapMapping {
            drb,
            header_bytes: u32::from(self.header >> drb.0 & 1 == 1),
        })
    }

    /// Maps `packet` and adds the DL header to its length. On `Err` the
    /// caller counts the packet as dropped with the returned reason.
    pub fn apply(&self, packet: &mut Packet) -> Result<SdapMapping, DropReason> {
        let m = self.map(packet.qfi)?;
        if m.header_bytes > 0 {
            packet.len += m.header_bytes;
            packet.sdap_header = true;
        }
        Ok(m)
    }

    /// Maps `qfi` onto `drb` from now on (a RIC's QoS flow mapping
    /// control; TS 37.324 5.3.1: packets already mapped stay on their
    /// DRB). Out-of-range values are refused.
    pub fn map_flow(&mut self, qfi: Qfi, drb: DrbId) -> Result<(), ConfigError> {
        check_range("qfi", qfi.0, 0, 63)?;
        check_range("drb", drb.0, 1, 32)?;
        self.map[usize::from(qfi.0)] = Some(drb);
        Ok(())
    }

    /// QFIs mapped to `drb` explicitly, in order.
    pub fn qfis_of(&self, drb: DrbId) -> impl Iterator<Item = Qfi> + '_ {
        (0u8..64)
            .filter(move |&q| self.map[usize::from(q)] == Some(drb))
            .map(Qfi)
    }
}
