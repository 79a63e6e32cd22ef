//! Queues (TC-RAN stage 3): a buffer plus, optionally, an AQM.
//!
//! Each kind has a config (params), its state, and its statistics
//! ([`crate::stage::AqmStats`]). [`AnyQueue`] dispatches statically over
//! the built-in kinds; `Custom` takes a plug-in.
//!
//! | kind | discipline | acts at | reference |
//! |---|---|---|---|
//! | `fifo` | tail drop only (by the pipeline's limits) | - | - |
//! | `codel` | CoDel, Linux fixed point or exact 1/sqrt | dequeue | RFC 8289 |
//! | `red` | RED with gentle and "wait" variants | enqueue | Floyd & Jacobson 1993 |
//! | `pie` | PIE with derandomisation and auto-tuning | enqueue | RFC 8033 |
//! | `l4s` | L4S marking ramp, head or tail marking | dequeue or enqueue | Brunello sec. 4.2 |
//! | `dualq` | DualPI2 coupled L/C queues in one queue | dequeue | RFC 9332 |
//! | `plugin` | code of the application's ([`crate::plugin`]) | - | TC-RAN sec. IV-C |
//!
//! Every kind validates its parameters in `build()` and applies new ones
//! in place, keeping packets and AQM state, with `reconfigure()`.

pub mod codel;
pub mod dualq;
pub mod fifo;
pub mod l4s;
pub mod pie;
pub mod red;
#[cfg(test)]
pub(crate) mod testing;
mod ticker;

use crate::plugin::{no_resolver, PluginConfig, Resolver};
use crate::stage::{AqmStats, Events, Queue};
use serde::{Deserialize, Serialize};
use tcran_core::{ConfigError, Instant, Packet};

pub use codel::{Codel, CodelConfig, InvSqrt};
pub use dualq::{DualQ, DualQConfig};
pub use fifo::{Fifo, FifoConfig, PacketFifo};
pub use l4s::{L4sConfig, L4sRamp};
pub use pie::{Pie, PieConfig};
pub use red::{Red, RedConfig};

/// The queue discipline, tagged by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum QueueKindConfig {
    /// Plain FIFO; limits come from the queue's `limit_packets`/`limit_bytes`.
    Fifo(FifoConfig),
    /// CoDel (RFC 8289).
    Codel(CodelConfig),
    /// RED (Floyd & Jacobson 1993).
    Red(RedConfig),
    /// PIE (RFC 8033).
    Pie(PieConfig),
    /// L4S marking ramp (Brunello sec. 4.2).
    L4s(L4sConfig),
    /// DualPI2 coupled dual queue (RFC 9332).
    #[serde(rename = "dualq")]
    DualQ(DualQConfig),
    /// A queue written in C and loaded through the C library (docs/c-api.md).
    // See `crate::plugin`; boxed, so that the rarely used variant does not
    // grow every config.
    Plugin(Box<PluginConfig>),
}

impl Default for QueueKindConfig {
    fn default() -> Self {
        QueueKindConfig::Fifo(FifoConfig {})
    }
}

impl QueueKindConfig {
    pub fn kind_name(&self) -> &'static str {
        match self {
            QueueKindConfig::Fifo(_) => "fifo",
            QueueKindConfig::Codel(_) => "codel",
            QueueKindConfig::Red(_) => "red",
            QueueKindConfig::Pie(_) => "pie",
            QueueKindConfig::L4s(_) => "l4s",
            QueueKindConfig::DualQ(_) => "dualq",
            QueueKindConfig::Plugin(_) => "plugin",
        }
    }

    /// Builds a built-in queue; a plug-in needs [`Self::build_with`].
    pub fn build(&self) -> Result<AnyQueue, ConfigError> {
        self.build_with(None)
    }

    /// Builds the queue, resolving a plug-in with `plugins`.
    pub fn build_with(&self, plugins: Resolver<'_>) -> Result<AnyQueue, ConfigError> {
        Ok(match self {
            QueueKindConfig::Fifo(_) => AnyQueue::Fifo(Fifo::default()),
            QueueKindConfig::Codel(c) => AnyQueue::Codel(c.build()?),
            QueueKindConfig::Red(c) => AnyQueue::Red(c.build()?),
            QueueKindConfig::Pie(c) => AnyQueue::Pie(c.build()?),
            QueueKindConfig::L4s(c) => AnyQueue::L4s(c.build()?),
            QueueKindConfig::DualQ(c) => AnyQueue::DualQ(c.build()?),
            QueueKindConfig::Plugin(c) => match plugins {
                Some(r) => AnyQueue::Custom(r.queue(c)?),
                None => return Err(no_resolver(c)),
            },
        })
    }

    /// Applies these parameters to `queue` in place if it is of the same
    /// kind (state kept, Linux `change()` style) and returns true; returns
    /// false if the kinds differ (the caller then builds a new queue).
    pub fn reconfigure(&self, queue: &mut AnyQueue) -> Result<bool, ConfigError> {
        Ok(match (self, queue) {
            (QueueKindConfig::Fifo(_), AnyQueue::Fifo(_)) => true,
            (QueueKindConfig::Codel(c), AnyQueue::Codel(q)) => c.reconfigure(q).map(|()| true)?,
            (QueueKindConfig::Red(c), AnyQueue::Red(q)) => c.reconfigure(q).map(|()| true)?,
            (QueueKindConfig::Pie(c), AnyQueue::Pie(q)) => c.reconfigure(q).map(|()| true)?,
            (QueueKindConfig::L4s(c), AnyQueue::L4s(q)) => c.reconfigure(q).map(|()| true)?,
            (QueueKindConfig::DualQ(c), AnyQueue::DualQ(q)) => c.reconfigure(q).map(|()| true)?,
            _ => false,
        })
    }
}

/// Every built-in queue kind, plus plug-ins.
#[derive(Debug)]
pub enum AnyQueue {
    Fifo(Fifo),
    Codel(Codel),
    Red(Red),
    Pie(Pie),
    L4s(L4sRamp),
    DualQ(DualQ),
    Custom(Box<dyn Queue>),
}

macro_rules! fwd {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            AnyQueue::Fifo($q) => $e,
            AnyQueue::Codel($q) => $e,
            AnyQueue::Red($q) => $e,
            AnyQueue::Pie($q) => $e,
            AnyQueue::L4s($q) => $e,
            AnyQueue::DualQ($q) => $e,
            AnyQueue::Custom($q) => $e,
        }
    };
}

impl Queue for AnyQueue {
    fn enqueue(&mut self, packet: Packet, now: Instant, ev: &mut Events) {
        fwd!(self, q => q.enqueue(packet, now, ev))
    }
    fn dequeue(&mut self, now: Instant, ev: &mut Events) -> Option<Packet> {
        fwd!(self, q => q.dequeue(now, ev))
    }
    fn packets(&self) -> usize {
        fwd!(self, q => q.packets())
    }
    fn bytes(&self) -> u64 {
        fwd!(self, q => q.bytes())
    }
    fn oldest_enqueued_at(&self) -> Option<Instant> {
        fwd!(self, q => q.oldest_enqueued_at())
    }
    fn pop_oldest(&mut self) -> Option<Packet> {
        fwd!(self, q => q.pop_oldest())
    }
    fn pop_newest(&mut self) -> Option<Packet> {
        fwd!(self, q => q.pop_newest())
    }
    fn push_raw(&mut self, packet: Packet) {
        fwd!(self, q => q.push_raw(packet))
    }
    fn for_each_packet(&self, f: &mut dyn FnMut(&Packet)) {
        fwd!(self, q => q.for_each_packet(f))
    }
    fn next_wakeup(&self) -> Option<Instant> {
        fwd!(self, q => q.next_wakeup())
    }
    fn aqm_stats(&self) -> AqmStats {
        fwd!(self, q => q.aqm_stats())
    }
}
