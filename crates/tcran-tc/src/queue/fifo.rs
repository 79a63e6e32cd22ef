//! The packet store every queue kind builds on, and the plain FIFO queue.

use crate::stage::{Events, Queue};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use tcran_core::{Duration, Instant, Packet};

/// A FIFO of packets that tracks its byte count. Grows to the working set
/// once and then never allocates.
#[derive(Debug, Default, Clone)]
pub struct PacketFifo {
    packets: VecDeque<Packet>,
    bytes: u64,
}

impl PacketFifo {
    pub fn push_back(&mut self, p: Packet) {
        self.bytes += p.len as u64;
        self.packets.push_back(p);
    }
    pub fn push_front(&mut self, p: Packet) {
        self.bytes += p.len as u64;
        self.packets.push_front(p);
    }
    pub fn pop_front(&mut self) -> Option<Packet> {
        let p = self.packets.pop_front()?;
        self.bytes -= p.len as u64;
        Some(p)
    }
    pub fn pop_back(&mut self) -> Option<Packet> {
        let p = self.packets.pop_back()?;
        self.bytes -= p.len as u64;
        Some(p)
    }
    pub fn front(&self) -> Option<&Packet> {
        self.packets.front()
    }
    pub fn back(&self) -> Option<&Packet> {
        self.packets.back()
    }
    pub fn len(&self) -> usize {
        self.packets.len()
    }
    /// The packets held, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &Packet> {
        self.packets.iter()
    }
    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    pub fn oldest_enqueued_at(&self) -> Option<Instant> {
        self.packets.front().map(|p| p.enqueued_at)
    }
    pub fn newest_enqueued_at(&self) -> Option<Instant> {
        self.packets.back().map(|p| p.enqueued_at)
    }
    /// Sojourn of the head packet at `now`, zero when empty.
    pub fn head_sojourn(&self, now: Instant) -> Duration {
        self.oldest_enqueued_at()
            .map_or(Duration::ZERO, |t| now.saturating_since(t))
    }
}

/// Implements the storage half of [`Queue`] (`packets`, `bytes`,
/// `oldest_enqueued_at`, `pop_oldest`, `pop_newest`, `push_raw`,
/// `for_each_packet`) for a queue
/// kind that keeps its packets in one [`PacketFifo`] field.
macro_rules! fifo_storage {
    ($field:ident) => {
        fn packets(&self) -> usize {
            self.$field.len()
        }
        fn bytes(&self) -> u64 {
            self.$field.bytes()
        }
        fn oldest_enqueued_at(&self) -> Option<tcran_core::Instant> {
            self.$field.oldest_enqueued_at()
        }
        fn pop_oldest(&mut self) -> Option<tcran_core::Packet> {
            self.$field.pop_front()
        }
        fn pop_newest(&mut self) -> Option<tcran_core::Packet> {
            self.$field.pop_back()
        }
        fn push_raw(&mut self, packet: tcran_core::Packet) {
            self.$field.push_back(packet);
        }
        fn for_each_packet(&self, f: &mut dyn FnMut(&tcran_core::Packet)) {
            self.$field.iter().for_each(f);
        }
    };
}
pub(crate) use fifo_storage;

/// Plain FIFO parameters: none (limits are the queue's `limit_packets` and
/// `limit_bytes`, enforced by the pipeline as tail drop).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FifoConfig {}

/// First in, first out; drops only at the tail when full (by the pipeline).
#[derive(Debug, Default)]
pub struct Fifo {
    fifo: PacketFifo,
}

impl Queue for Fifo {
    fn enqueue(&mut self, packet: Packet, _now: Instant, _ev: &mut Events) {
        self.fifo.push_back(packet);
    }
    fn dequeue(&mut self, _now: Instant, _ev: &mut Events) -> Option<Packet> {
        self.fifo.pop_front()
    }
    crate::queue::fifo::fifo_storage!(fifo);
}
