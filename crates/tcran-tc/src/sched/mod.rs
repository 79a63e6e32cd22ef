//! Schedulers (TC-RAN stage 4): which queue does the next packet come from?
//!
//! | kind | discipline | reference |
//! |---|---|---|
//! | `round_robin` | one packet per backlogged queue in turn | TC-RAN Fig. 5a/6a |
//! | `drr` | DRR++ with new/old lists and byte quantum (fq_codel) | RFC 8290 sec. 4.2 |
//! | `weighted` | deficit round robin, quantum x weight: byte shares | Shreedhar & Varghese 1995 |
//! | `priority` | strict priority by queue `priority`, round robin within a level | Linux `prio` |
//! | `delay_based` | oldest head first; queues whose head waited past a threshold jump to the top priority | Brunello sec. 4.5 |
//! | `plugin` | the application's code ([`crate::plugin`]) | TC-RAN sec. IV-A `next_queue` |

mod active;
mod delay;
mod drr;
mod priority;
mod round_robin;
mod weighted;

pub use delay::DelayBased;
pub use drr::{Drr, FlowList};
pub use priority::StrictPriority;
pub use round_robin::RoundRobin;
pub use weighted::Weighted;

use crate::plugin::{no_resolver, PluginConfig, Resolver};
use crate::stage::{Blocked, QueueAttrs, QueueView, Scheduler};
use serde::{Deserialize, Serialize};
use tcran_core::config::check_range;
use tcran_core::{ByteSize, ConfigError, Duration, Instant, QueueId};

/// RFC 8290 sec. 5.1: quantum defaults to the interface MTU. The RAN carries
/// IP packets without an Ethernet header, so 1500 bytes.
pub const DEFAULT_QUANTUM: ByteSize = ByteSize(1500);

fn default_quantum() -> ByteSize {
    DEFAULT_QUANTUM
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum SchedulerConfig {
    /// One packet per backlogged queue in turn.
    #[default]
    RoundRobin,
    /// DRR++ with new/old flow lists and a byte quantum (fq_codel).
    Drr {
        /// Bytes a queue may send per round. Default 1500 B (one MTU,
        /// RFC 8290 sec. 5.1).
        #[serde(default = "default_quantum")]
        quantum: ByteSize,
    },
    /// Deficit round robin with quantum x queue `weight`: byte shares.
    Weighted {
        /// Bytes per round for a queue of weight 1.
        #[serde(default = "default_quantum")]
        quantum: ByteSize,
    },
    /// Strict priority by queue `priority` (0 first), round robin within a level.
    Priority,
    /// Oldest head first; queues whose head waited past `threshold` jump
    /// to the top priority.
    DelayBased {
        /// Head sojourn above which a queue is served first (Brunello:
        /// equal to the L4S high threshold, e.g. 10 ms).
        threshold: Duration,
        /// The queues the threshold may boost (Brunello: the video gaming
        /// queues; web traffic keeps the default priority). Absent: all.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        boost: Option<Vec<QueueId>>,
    },
    /// A scheduler written in C and loaded through the C library (docs/c-api.md).
    // See `crate::plugin`; boxed, so that the rarely used variant does not
    // grow every config.
    Plugin(Box<PluginConfig>),
}

impl SchedulerConfig {
    pub fn kind_name(&self) -> &'static str {
        match self {
            SchedulerConfig::RoundRobin => "round_robin",
            SchedulerConfig::Drr { .. } => "drr",
            SchedulerConfig::Weighted { .. } => "weighted",
            SchedulerConfig::Priority => "priority",
            SchedulerConfig::DelayBased { .. } => "delay_based",
            SchedulerConfig::Plugin(_) => "plugin",
        }
    }

    /// Builds a built-in scheduler; a plug-in needs [`Self::build_with`].
    pub fn build(&self) -> Result<AnyScheduler, ConfigError> {
        self.build_with(None)
    }

    /// Builds the scheduler, resolving a plug-in with `plugins`.
    pub fn build_with(&self, plugins: Resolver<'_>) -> Result<AnyScheduler, ConfigError> {
        let quantum = |q: ByteSize| {
            check_range("quantum", q, ByteSize(64), ByteSize(1_000_000)).map(|q| q.0 as i64)
        };
        Ok(match self {
            SchedulerConfig::RoundRobin => AnyScheduler::RoundRobin(RoundRobin::default()),
            SchedulerConfig::Drr { quantum: q } => AnyScheduler::Drr(Drr::new(quantum(*q)?)),
            SchedulerConfig::Weighted { quantum: q } => {
                AnyScheduler::Weighted(Weighted::new(quantum(*q)?))
            }
            SchedulerConfig::Priority => AnyScheduler::Priority(StrictPriority::default()),
            SchedulerConfig::DelayBased { threshold, boost } => {
                check_range(
                    "threshold",
                    *threshold,
                    Duration::ZERO,
                    Duration::from_secs(60),
                )?;
                if boost.as_ref().is_some_and(|b| b.is_empty()) {
                    return Err(ConfigError::new(
                        "boost",
                        "[]",
                        "list at least one queue id, or leave boost out to boost every queue",
                    ));
                }
                AnyScheduler::DelayBased(DelayBased::with_boost(*threshold, boost.clone()))
            }
            SchedulerConfig::Plugin(c) => match plugins {
                Some(r) => AnyScheduler::Custom(r.scheduler(c)?),
                None => return Err(no_resolver(c)),
            },
        })
    }
}

#[derive(Debug)]
pub enum AnyScheduler {
    RoundRobin(RoundRobin),
    Drr(Drr),
    Weighted(Weighted),
    Priority(StrictPriority),
    DelayBased(DelayBased),
    Custom(Box<dyn Scheduler>),
}

macro_rules! fwd {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            AnyScheduler::RoundRobin($s) => $e,
            AnyScheduler::Drr($s) => $e,
            AnyScheduler::Weighted($s) => $e,
            AnyScheduler::Priority($s) => $e,
            AnyScheduler::DelayBased($s) => $e,
            AnyScheduler::Custom($s) => $e,
        }
    };
}

impl Scheduler for AnyScheduler {
    fn on_queue_added(&mut self, q: QueueId, attrs: QueueAttrs) {
        fwd!(self, s => s.on_queue_added(q, attrs))
    }
    fn on_queue_removed(&mut self, q: QueueId) {
        fwd!(self, s => s.on_queue_removed(q))
    }
    fn on_backlogged(&mut self, q: QueueId, view: &dyn QueueView) {
        fwd!(self, s => s.on_backlogged(q, view))
    }
    fn select(&mut self, now: Instant, view: &dyn QueueView, blocked: &Blocked) -> Option<QueueId> {
        fwd!(self, s => s.select(now, view, blocked))
    }
    fn on_sent(&mut self, q: QueueId, len: u32, view: &dyn QueueView) {
        fwd!(self, s => s.on_sent(q, len, view))
    }
    fn on_empty(&mut self, q: QueueId, view: &dyn QueueView) {
        fwd!(self, s => s.on_empty(q, view))
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! A scripted queue table for scheduler unit tests.
    use super::*;
    use std::collections::BTreeMap;

    #[derive(Default)]
    pub struct FakeQueues {
        pub q: BTreeMap<u16, (Vec<u32>, QueueAttrs, Vec<Instant>)>,
    }

    impl FakeQueues {
        pub fn push(&mut self, q: u16, len: u32, at: Instant) {
            let e = self
                .q
                .entry(q)
                .or_insert_with(|| (Vec::new(), QueueAttrs::default(), Vec::new()));
            e.0.push(len);
            e.2.push(at);
        }
        pub fn pop(&mut self, q: u16) -> u32 {
            let e = self.q.get_mut(&q).unwrap();
            e.2.remove(0);
            e.0.remove(0)
        }
        pub fn set_attrs(&mut self, q: u16, attrs: QueueAttrs) {
            self.q
                .entry(q)
                .or_insert_with(|| (Vec::new(), attrs, Vec::new()))
                .1 = attrs;
        }
    }

    impl QueueView for FakeQueues {
        fn packets(&self, q: QueueId) -> usize {
            self.q.get(&q.0).map_or(0, |e| e.0.len())
        }
        fn bytes(&self, q: QueueId) -> u64 {
            self.q
                .get(&q.0)
                .map_or(0, |e| e.0.iter().map(|l| *l as u64).sum())
        }
        fn oldest_enqueued_at(&self, q: QueueId) -> Option<Instant> {
            self.q.get(&q.0).and_then(|e| e.2.first().copied())
        }
        fn attrs(&self, q: QueueId) -> QueueAttrs {
            self.q.get(&q.0).map_or_else(QueueAttrs::default, |e| e.1)
        }
    }

    /// Pushes a packet and tells the scheduler if the queue became backlogged.
    pub fn arrive(s: &mut dyn Scheduler, v: &mut FakeQueues, q: u16, len: u32, at: Instant) {
        let was_empty = v.packets(QueueId(q)) == 0;
        v.push(q, len, at);
        if was_empty {
            s.on_backlogged(QueueId(q), v);
        }
    }

    /// Runs one selection + send; returns the queue served.
    pub fn serve(s: &mut dyn Scheduler, v: &mut FakeQueues, now: Instant) -> Option<u16> {
        loop {
            let q = s.select(now, v, &Blocked::default())?;
            if v.packets(q) == 0 {
                s.on_empty(q, v);
                continue;
            }
            let len = v.pop(q.0);
            s.on_sent(q, len, v);
            return Some(q.0);
        }
    }
}
