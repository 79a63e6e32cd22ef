//! Why packets were dropped or marked. Every layer reports drops as values
//! with one of these reasons; nothing is lost without being counted.

use crate::packet::Packet;
use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! reason_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $label:literal,)+ }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name { $($(#[$vdoc])* $variant,)+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];
            pub const COUNT: usize = Self::ALL.len();
            pub const fn label(self) -> &'static str {
                match self { $($name::$variant => $label,)+ }
            }
            pub const fn index(self) -> usize {
                self as usize
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.label())
            }
        }
    };
}

reason_enum!(
    /// Why a packet was dropped.
    DropReason {
        /// A queue's packet or byte limit was reached on enqueue (tail drop).
        QueueFull => "queue_full",
        /// FQ-CoDel overload: dropped from the head of the fattest flow queue.
        FatFlow => "fat_flow",
        /// CoDel control law at dequeue (RFC 8289).
        Codel => "codel",
        /// PIE early drop (RFC 8033).
        Pie => "pie",
        /// RED early or forced drop.
        Red => "red",
        /// L4S ramp or DualQ AQM decided to drop a non-ECT packet.
        L4s => "l4s",
        /// A policer's meter found the packet out of profile (RFC 2475).
        Policer => "policer",
        /// A live reconfiguration lowered a limit below the backlog.
        Reconfigured => "reconfigured",
        /// The RLC transmit buffer was full.
        RlcFull => "rlc_full",
        /// The UPF queue was full.
        UpfFull => "upf_full",
        /// A packet lost on the air interface after all retransmissions.
        AirLoss => "air_loss",
        /// No route: the QFI maps to no DRB, or the UE is unknown.
        NoRoute => "no_route",
        /// PDCP receiver: the SDU's COUNT is below RX_DELIV, it came after
        /// t-Reordering gave up on it (TS 38.323 §5.2.2.2.2).
        PdcpLate => "late",
        /// PDCP receiver: an SDU with this COUNT is already stored.
        PdcpDuplicate => "duplicate",
        /// A plug-in stage's AQM decided to drop, or to mark a Not-ECT
        /// packet (C library plug-ins, TC-RAN sec. IV-C).
        Plugin => "plugin",
    }
);

reason_enum!(
    /// Why a packet was CE-marked.
    MarkReason {
        /// CoDel decided to signal and the packet was ECN-capable.
        Codel => "codel",
        /// Sojourn above a CE threshold (fq_codel `ce_threshold`, DualQ L step).
        CeThreshold => "ce_threshold",
        /// PIE decided to signal and p was below the ECN threshold.
        Pie => "pie",
        /// RED decided to signal on an ECN-capable packet.
        Red => "red",
        /// L4S marking ramp (Brunello sec. 4.2) or DualQ coupled probability.
        L4s => "l4s",
        /// A policer configured to mark instead of drop.
        Policer => "policer",
        /// A plug-in stage's AQM decided to mark.
        Plugin => "plugin",
    }
);

/// A packet that left the data path, with the reason.
#[derive(Debug, Clone)]
pub struct Dropped {
    pub packet: Packet,
    pub reason: DropReason,
}

/// A counter per reason: fixed size, so counting never allocates.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ReasonCounts<const N: usize>(pub [u64; N]);

pub type DropCounts = ReasonCounts<{ DropReason::COUNT }>;
pub type MarkCounts = ReasonCounts<{ MarkReason::COUNT }>;

impl<const N: usize> Default for ReasonCounts<N> {
    fn default() -> Self {
        ReasonCounts([0; N])
    }
}

impl<const N: usize> ReasonCounts<N> {
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
    pub fn add_all(&mut self, other: &Self) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a += *b;
        }
    }
}

impl DropCounts {
    pub fn add(&mut self, reason: DropReason, n: u64) {
        self.0[reason.index()] += n;
    }
    pub fn get(&self, reason: DropReason) -> u64 {
        self.0[reason.index()]
    }
    /// Non-zero counts by label, in declaration order (stable for reports).
    pub fn by_label(&self) -> std::collections::BTreeMap<&'static str, u64> {
        DropReason::ALL
            .iter()
            .filter(|r| self.get(**r) > 0)
            .map(|r| (r.label(), self.get(*r)))
            .collect()
    }
}

impl MarkCounts {
    pub fn add(&mut self, reason: MarkReason, n: u64) {
        self.0[reason.index()] += n;
    }
    pub fn get(&self, reason: MarkReason) -> u64 {
        self.0[reason.index()]
    }
    pub fn by_label(&self) -> std::collections::BTreeMap<&'static str, u64> {
        MarkReason::ALL
            .iter()
            .filter(|r| self.get(**r) > 0)
            .map(|r| (r.label(), self.get(*r)))
            .collect()
    }
}

macro_rules! counts_serde {
    ($ty:ty) => {
        impl Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                self.by_label().serialize(s)
            }
        }
    };
}
counts_serde!(DropCounts);
counts_serde!(MarkCounts);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_serialize_only_non_zero_reasons_by_label() {
        let mut c = DropCounts::default();
        c.add(DropReason::Codel, 3);
        c.add(DropReason::QueueFull, 1);
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            r#"{"codel":3,"queue_full":1}"#
        );
        assert_eq!(c.total(), 4);
    }
}
