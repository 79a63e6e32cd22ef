//! Typed identifiers. A `QueueId` can never be passed where a `FlowId` is
//! expected, and there are no `-1` sentinels: absence is an `Option`.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $inner:ty, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize, schemars::JsonSchema)]
        #[serde(transparent)]
        pub struct $name(pub $inner);

        impl $name {
            pub const fn get(self) -> $inner {
                self.0
            }
        }
        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

id_type!(
    /// Radio Network Temporary Identifier: names a UE in a cell (TS 38.321).
    Rnti, u16, "rnti"
);
id_type!(
    /// Data radio bearer of a UE, 1..=32 (TS 38.331 `DRB-Identity`).
    DrbId, u8, "drb"
);
id_type!(
    /// A cell as a scenario or a trace numbers it (not the 36-bit NR cell
    /// identity, TS 38.331 `CellIdentity`, which a trace may not carry).
    CellId, u32, "cell"
);
id_type!(
    /// QoS Flow Identifier, 0..=63 (6 bits, TS 38.415 / TS 37.324).
    Qfi, u8, "qfi"
);
id_type!(
    /// A queue inside one TC pipeline. Ids are small dense integers chosen by
    /// the configuration; the pipeline indexes its queue table with them.
    QueueId, u16, "q"
);
id_type!(
    /// A traffic flow as the simulator knows it (for metrics), not a hash.
    FlowId, u32, "flow"
);

impl QueueId {
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}
