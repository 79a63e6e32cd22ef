//! DSCP -> queue classification (DiffServ behaviour aggregates, RFC 2474
//! sec. 3 / RFC 2475 sec. 2.3.1: a "BA classifier" selects on the DS
//! codepoint only).
//!
//! The Linux analogue is `pfifo_fast` / `prio`: the TOS byte becomes a
//! priority (`ip_tos2prio`) and a `priomap` maps priority -> band, band 0
//! served first (algorithms.md sec. 1.10). `bands = [q0, q1, q2]` reproduces
//! exactly that mapping onto three queues (ns-3's pfifo_fast test, sec. 2.6,
//! is the oracle); an explicit `map` entry overrides it for its DSCP.
//!
//! Contract:
//! - `map` lists `dscp -> queue`, as a table (`map = { "46" = 1, "af41" = 2 }`)
//!   or a list (`map = [{ dscp = 46, queue = 1 }]`). Keys are 0..=63 or PHB
//!   names (see [`super::filter`]); a DSCP listed twice is an error.
//! - A DSCP neither in `map` nor covered by `bands` -> `None` (default queue).
//! - Lookup is one index into a 64-entry table.

use super::filter::parse_dscp;
use super::spec::NumOrText;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use tcran_core::{ConfigError, Dscp, QueueId};

/// The `map` of a `dscp` classifier, in either spelling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum DscpMap {
    /// `{ "46" = 1, "af41" = 2 }`
    Table(BTreeMap<String, QueueId>),
    /// `[{ dscp = 46, queue = 1 }]`
    List(Vec<DscpEntry>),
}

impl Default for DscpMap {
    fn default() -> Self {
        DscpMap::Table(BTreeMap::new())
    }
}

/// One `dscp -> queue` entry of the list spelling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DscpEntry {
    pub dscp: NumOrText,
    pub queue: QueueId,
}

impl DscpMap {
    pub fn is_empty(&self) -> bool {
        match self {
            DscpMap::Table(t) => t.is_empty(),
            DscpMap::List(l) => l.is_empty(),
        }
    }

    /// `(field, raw dscp, queue)` of every entry, in the order written
    /// (table keys sorted, as the table is a map).
    fn entries(&self) -> Vec<(String, NumOrText, QueueId)> {
        match self {
            DscpMap::Table(t) => t
                .iter()
                .map(|(k, q)| (format!("map.{k}"), NumOrText::Text(k.clone()), *q))
                .collect(),
            DscpMap::List(l) => l
                .iter()
                .enumerate()
                .map(|(i, e)| (format!("map[{i}].dscp"), e.dscp.clone(), e.queue))
                .collect(),
        }
    }

    pub(crate) fn queues(&self) -> Vec<QueueId> {
        self.entries().into_iter().map(|e| e.2).collect()
    }
}

/// Linux `ip_tos2prio` (net/ipv4/route.c), indexed by `(tos & 0x1e) >> 1`:
/// 0 best effort, 2 bulk, 4 interactive bulk, 6 interactive.
const IP_TOS2PRIO: [u8; 16] = [0, 0, 0, 0, 2, 2, 2, 2, 6, 6, 6, 6, 4, 4, 4, 4];
/// Linux default `priomap` (sch_generic.c `prio2band`): priority -> band.
const PRIO2BAND: [u8; 16] = [1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1];

/// The pfifo_fast band (0 = served first) of a DSCP.
pub fn pfifo_fast_band(dscp: Dscp) -> u8 {
    // The ECN bits of the TOS byte are zero here; `IPTOS_TOS` masks 0x1e,
    // and the two entries differing only in bit 0x02 are equal anyway.
    let tos = (dscp.0 & 0x3f) << 2;
    PRIO2BAND[IP_TOS2PRIO[((tos & 0x1e) >> 1) as usize] as usize]
}

/// The built classifier: one entry per DSCP.
#[derive(Debug, Clone)]
pub struct DscpClassifier {
    table: [Option<QueueId>; 64],
}

impl DscpClassifier {
    pub fn new(map: &DscpMap, bands: Option<[QueueId; 3]>) -> Result<DscpClassifier, ConfigError> {
        if map.is_empty() && bands.is_none() {
            return Err(ConfigError::new(
                "map",
                "{}",
                "give at least one dscp -> queue entry or bands = [q0, q1, q2]",
            ));
        }
        let mut table = [None; 64];
        if let Some(b) = bands {
            for (d, slot) in table.iter_mut().enumerate() {
                *slot = Some(b[pfifo_fast_band(Dscp(d as u8)) as usize]);
            }
        }
        let mut seen: [Option<String>; 64] = std::array::from_fn(|_| None);
        for (field, raw, q) in map.entries() {
            let d = parse_dscp(&raw).map_err(|a| ConfigError::new(field.clone(), &raw, a))?;
            if let Some(first) = &seen[d as usize] {
                return Err(ConfigError::new(
                    field,
                    &raw,
                    format!("DSCP {d} is mapped already by {first}"),
                ));
            }
            seen[d as usize] = Some(field);
            table[d as usize] = Some(q);
        }
        Ok(DscpClassifier { table })
    }

    #[inline]
    pub fn classify(&self, dscp: Dscp) -> Option<QueueId> {
        self.table[(dscp.0 & 0x3f) as usize]
    }
}
