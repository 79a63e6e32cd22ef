//! Queues (TC-RAN stage 3): a buffer plus, optionally, an AQM.
//!
//! Each kind has a config (params), its state, and its statistics
//! ([`crate::stage::AqmStats`]). [`AnyQueue`] dispatches statically over
//! the built-in kinds; `Custom` takes a plug-in.

pub mod fifo;

use crate::stage::{AqmStats, Events, Queue};
use serde::{Deserialize, Serialize};
use tcran_core::{ConfigError, Instant, Packet};

pub use fifo::{Fifo, FifoConfig, PacketFifo};

/// The queue discipline, tagged by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum QueueKindConfig {
    /// Plain FIFO; limits come from the queue's `limit_packets`/`limit_bytes`.
    Fifo(FifoConfig),
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
        }
    }

    pub fn build(&self) -> Result<AnyQueue, ConfigError> {
        Ok(match self {
            QueueKindConfig::Fifo(_) => AnyQueue::Fifo(Fifo::default()),
        })
    }

    /// Applies these parameters to `queue` in place if it is of the same
    /// kind (state kept, Linux `change()` style) and returns true; returns
    /// false if the kinds differ (the caller then builds a new queue).
    pub fn reconfigure(&self, queue: &mut AnyQueue) -> Result<bool, ConfigError> {
        Ok(match (self, queue) {
            (QueueKindConfig::Fifo(_), AnyQueue::Fifo(_)) => true,
            #[allow(unreachable_patterns)]
            _ => false,
        })
    }
}

/// Every built-in queue kind, plus plug-ins.
#[derive(Debug)]
pub enum AnyQueue {
    Fifo(Fifo),
    Custom(Box<dyn Queue>),
}

macro_rules! fwd {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            AnyQueue::Fifo($q) => $e,
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
    fn next_wakeup(&self) -> Option<Instant> {
        fwd!(self, q => q.next_wakeup())
    }
    fn aqm_stats(&self) -> AqmStats {
        fwd!(self, q => q.aqm_stats())
    }
}
