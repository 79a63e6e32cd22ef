//! Pipeline configuration: kind-tagged serde (TOML or JSON), unknown keys
//! rejected, every value range-checked by `build()` with a [`ConfigError`]
//! naming the field, the value and the allowed range.
//!
//! ```toml
//! default_queue = 0
//! classifier = { kind = "filter", rules = [
//!   { priority = 1, protocol = "udp", dst_port = "5000-5010", queue = 1 },
//! ] }
//! scheduler = { kind = "priority" }
//! pacer = { kind = "bdp", offset = 0.33 }
//!
//! [[queues]]
//! id = 0
//! kind = "codel"
//! target = "5ms"
//! interval = "100ms"
//!
//! [[queues]]
//! id = 1
//! kind = "fifo"
//! priority = 0
//! ```

use crate::classify::ClassifierConfig;
use crate::pacer::PacerConfig;
use crate::policer::PolicerConfig;
use crate::queue::QueueKindConfig;
use crate::sched::SchedulerConfig;
use crate::shaper::ShaperConfig;
use crate::stage::QueueAttrs;
use serde::{Deserialize, Serialize};
use tcran_core::config::check_range;
use tcran_core::{ByteSize, ConfigError, QueueId};

/// Highest queue id a pipeline accepts. The pipeline indexes a table with
/// queue ids, so they must stay small; 4096 covers an FQ-CoDel-style bank of
/// 1024 (Linux default) or 4096 flow queues plus a few named ones.
pub const MAX_QUEUE_ID: u16 = 8191;

/// Default per-queue packet limit: fq_codel's default `limit` (10240 packets).
pub const DEFAULT_QUEUE_LIMIT_PACKETS: u32 = 10_240;

/// The whole pipeline of one UE data radio bearer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PipelineConfig {
    /// Where packets go; default: everything to the default queue.
    #[serde(default)]
    pub classifier: ClassifierConfig,
    /// The queues. At least one.
    pub queues: Vec<QueueConfig>,
    /// Queue for unclassified and malformed packets; default: the first queue.
    #[serde(default)]
    pub default_queue: Option<QueueId>,
    /// Which queue next; default: round robin.
    #[serde(default)]
    pub scheduler: SchedulerConfig,
    /// What may go down to RLC; default: no pacing.
    #[serde(default)]
    pub pacer: PacerConfig,
    /// Total packets over all queues; above it the fattest queue loses
    /// packets from its head (fq_codel's overload rule). Default: no total.
    #[serde(default)]
    pub limit_packets: Option<u32>,
}

/// One queue (or, with `count`, a bank of identical queues for a flow-hash
/// classifier) with its optional policer and shaper.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QueueConfig {
    /// Queue id, 0..=8191, unique in the pipeline.
    pub id: QueueId,
    /// Number of identical queues with ids `id..id+count`. Default 1.
    #[serde(default = "one_u16")]
    pub count: u16,
    /// Packet limit (tail drop). Default 10240 when no limit is given.
    #[serde(default)]
    pub limit_packets: Option<u32>,
    /// Byte limit (tail drop).
    #[serde(default)]
    pub limit_bytes: Option<ByteSize>,
    /// Strict-priority level, 0 served first (priority scheduler).
    #[serde(default)]
    pub priority: u8,
    /// Relative share (weighted scheduler).
    #[serde(default = "one_u32")]
    pub weight: u32,
    /// Rate limit on entry (drop, mark or redirect). Default: none.
    #[serde(default)]
    pub policer: Option<PolicerConfig>,
    /// Rate limit on exit (delays the head packet). Default: none.
    #[serde(default)]
    pub shaper: Option<ShaperConfig>,
    /// The queue discipline: `kind = "fifo" | "codel" | "red" | "pie" | "l4s" | "dualq"`.
    #[serde(flatten)]
    pub kind: QueueKindConfig,
}

fn one_u16() -> u16 {
    1
}
fn one_u32() -> u32 {
    1
}

/// Resolved packet/byte limits of a queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub packets: Option<u32>,
    pub bytes: Option<u64>,
}

impl Limits {
    /// Whether a queue holding `packets`/`bytes` can take `len` more bytes.
    pub fn admits(&self, packets: usize, bytes: u64, len: u32) -> bool {
        self.packets.is_none_or(|p| packets < p as usize)
            && self.bytes.is_none_or(|b| bytes + len as u64 <= b)
    }
    pub fn exceeded(&self, packets: usize, bytes: u64) -> bool {
        self.packets.is_some_and(|p| packets > p as usize) || self.bytes.is_some_and(|b| bytes > b)
    }
}

impl QueueConfig {
    /// A queue of `kind` with every other field at its default.
    pub fn new(id: u16, kind: QueueKindConfig) -> QueueConfig {
        QueueConfig {
            id: QueueId(id),
            count: 1,
            limit_packets: None,
            limit_bytes: None,
            priority: 0,
            weight: 1,
            policer: None,
            shaper: None,
            kind,
        }
    }

    pub fn ids(&self) -> impl Iterator<Item = QueueId> {
        let first = self.id.0;
        (0..self.count).map(move |i| QueueId(first + i))
    }

    pub fn attrs(&self) -> QueueAttrs {
        QueueAttrs {
            priority: self.priority,
            weight: self.weight,
        }
    }

    pub fn limits(&self) -> Limits {
        match (self.limit_packets, self.limit_bytes) {
            (None, None) => Limits {
                packets: Some(DEFAULT_QUEUE_LIMIT_PACKETS),
                bytes: None,
            },
            (p, b) => Limits {
                packets: p,
                bytes: b.map(|b| b.0),
            },
        }
    }

    /// Checks everything but the stage parameters (those are checked when
    /// the stages are built).
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_range("count", self.count, 1, MAX_QUEUE_ID + 1)?;
        let last = self.id.0 as u32 + self.count as u32 - 1;
        if last > MAX_QUEUE_ID as u32 {
            return Err(ConfigError::new(
                "id",
                self.id.0,
                format!("id + count - 1 must be at most {MAX_QUEUE_ID} (got {last})"),
            ));
        }
        if let Some(p) = self.limit_packets {
            check_range("limit_packets", p, 1, 10_000_000)?;
        }
        if let Some(b) = self.limit_bytes {
            check_range("limit_bytes", b, ByteSize(64), ByteSize(10_000_000_000))?;
        }
        check_range("weight", self.weight, 1, 1_000_000)?;
        Ok(())
    }
}

impl PipelineConfig {
    /// A pipeline with one queue of `kind` and every other stage at its default.
    pub fn single_queue(kind: QueueKindConfig) -> PipelineConfig {
        PipelineConfig {
            classifier: ClassifierConfig::default(),
            queues: vec![QueueConfig::new(0, kind)],
            default_queue: None,
            scheduler: SchedulerConfig::default(),
            pacer: PacerConfig::default(),
            limit_packets: None,
        }
    }

    pub fn from_toml(text: &str) -> Result<PipelineConfig, toml::de::Error> {
        toml::from_str(text)
    }

    pub fn default_queue_id(&self) -> Option<QueueId> {
        self.default_queue
            .or_else(|| self.queues.first().map(|q| q.id))
    }
}
