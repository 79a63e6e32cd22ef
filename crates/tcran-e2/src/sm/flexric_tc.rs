//! FlexRIC's TC service model (RAN function 146, `TC_STATS_V0`), PLAIN
//! encoding: raw little-endian x86-64 C structs, as FlexRIC's `src/sm/tc_sm`
//! writes them (layout: shared/e2/FLEXRIC-INTEROP.md, TC-RAN sec. IV-B).
//!
//! - Event trigger: u32 period in ms. Action: report, no definition.
//!   Indication header: u32 0. Control header: u32 0; control outcome: u32 0.
//! - One indication describes one pipeline (the model has no UE, DRB or
//!   direction field), the DRB the agent is configured with: downlink or
//!   uplink, named by a number per direction ([`drb_key`]).
//! - Controls map onto tcran [`Control`]s; FlexRIC's numbering of queues by
//!   position becomes tcran's queue ids. Filters come in the 48-byte layout
//!   (FlexRIC `dev`) or the 40-byte one (FlexRIC v1.0.0, OAI tc-ran: no L7
//!   field); bytes after the message are ignored (FlexRIC's own CLS ADD OSI
//!   encoder writes 4 uninitialised ones).
//!
//! What FlexRIC's vocabulary cannot say is reported as its nearest term,
//! listed in docs/e2.md (e.g. a PIE queue is reported as FIFO, a DRR
//! scheduler as RR).

use super::{cause, ControlOutcome, Indication, Job, JobState, Refusal, ServiceModel, MIN_PERIOD};
use crate::e2ap::{Action, ActionType, RanFunction};
use std::net::Ipv4Addr;
use tcran_control::{Direction, DrbKey, RanNode, TcView};
use tcran_core::{BitRate, ByteSize, Duration, Instant, QueueId};
use tcran_tc::classify::{ClassifierConfig, FilterRule, NumOrText};
use tcran_tc::pacer::{BdpConfig, PacerConfig};
use tcran_tc::policer::{PolicerAction, PolicerConfig};
use tcran_tc::queue::{CodelConfig, FifoConfig, QueueKindConfig};
use tcran_tc::sched::SchedulerConfig;
use tcran_tc::shaper::ShaperConfig;
use tcran_tc::{Change, Control, PipelineConfig, QueueConfig};
use thiserror::Error;

/// RAN function id FlexRIC gives its TC service model.
pub const RAN_FUNCTION_ID: u16 = 146;
/// RAN function definition (ASCII, no terminator).
pub const DEFINITION: &[u8] = b"TC_STATS_V0";
/// RAN function OID FlexRIC's agents announce.
pub const OID: &str = "0.0.0.0.0.0.0.0.1.146.0";

/// Why bytes are not a TC PLAIN message.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PlainError {
    #[error("TC message ends at byte {at} while reading {what} ({len} bytes long)")]
    Truncated {
        what: &'static str,
        at: usize,
        len: usize,
    },
    #[error("TC message: {what} = {value} is not a known value ({allowed})")]
    Unknown {
        what: &'static str,
        value: u64,
        allowed: &'static str,
    },
}

/// Why a well-formed FlexRIC control has no tcran equivalent: the node
/// refuses it with this reason and changes nothing.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Untranslatable {
    #[error("{what} {value} unknown ({allowed})")]
    Unknown {
        what: &'static str,
        value: i64,
        allowed: &'static str,
    },
    #[error("{what} {value} out of range")]
    OutOfRange { what: &'static str, value: i64 },
    #[error("filter {what} {value} is neither -1 nor {expected}")]
    Filter {
        what: &'static str,
        value: i64,
        expected: &'static str,
    },
    #[error("{context}queue {id} does not exist")]
    NoSuchQueue { id: u32, context: &'static str },
    #[error("no queue id left")]
    NoQueueIdLeft,
    #[error("a stochastic classifier needs consecutive queue ids (have {ids:?})")]
    NotConsecutive { ids: Vec<u16> },
    #[error("priority list names queue {id}, which does not exist")]
    PriorityOfMissingQueue { id: u32 },
    #[error(
        "SHP ADD names no queue; tcran attaches shapers to queues: use SHP MOD with the queue id"
    )]
    ShaperWithoutQueue,
    #[error(
        "policer deviating above {dev_rate_kbps} kbit/s and dropping above \
         {drop_rate_kbps} kbit/s needs two rates; tcran's policer has one"
    )]
    TwoRatePolicer {
        dev_rate_kbps: u32,
        drop_rate_kbps: u32,
    },
}

/// Little-endian reader over a PLAIN message.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }
    fn take<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], PlainError> {
        let end = self.at.checked_add(N).filter(|e| *e <= self.bytes.len());
        let Some(end) = end else {
            return Err(PlainError::Truncated {
                what,
                at: self.at,
                len: self.bytes.len(),
            });
        };
        let out = self.bytes[self.at..end].try_into().expect("N bytes");
        self.at = end;
        Ok(out)
    }
    fn u32(&mut self, what: &'static str) -> Result<u32, PlainError> {
        self.take::<4>(what).map(u32::from_le_bytes)
    }
    fn i32(&mut self, what: &'static str) -> Result<i32, PlainError> {
        self.take::<4>(what).map(i32::from_le_bytes)
    }
    fn f32(&mut self, what: &'static str) -> Result<f32, PlainError> {
        self.take::<4>(what).map(f32::from_le_bytes)
    }
    fn i64(&mut self, what: &'static str) -> Result<i64, PlainError> {
        self.take::<8>(what).map(i64::from_le_bytes)
    }
    fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }
    /// A count of items of `size` bytes each: refused before any
    /// allocation if the message cannot hold that many.
    fn count(&mut self, what: &'static str, size: usize) -> Result<usize, PlainError> {
        let n = self.u32(what)? as usize;
        if n.saturating_mul(size) > self.remaining() {
            return Err(PlainError::Truncated {
                what,
                at: self.at,
                len: self.bytes.len(),
            });
        }
        Ok(n)
    }
}

fn unknown(what: &'static str, value: u32, allowed: &'static str) -> PlainError {
    PlainError::Unknown {
        what,
        value: value as u64,
        allowed,
    }
}

// ------------------------------------------------------------ indication

/// `sch` of the indication.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlainScheduler {
    RoundRobin,
    /// Queue ids from highest to lowest priority.
    Priority(Vec<u32>),
}

/// `pcr` of the indication (16 B).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlainPacer {
    /// 0 none ("dummy"), 1 5G-BDP.
    pub kind: u32,
    pub id: u32,
    pub bandwidth_kbps: f32,
    pub window_ms: u32,
}

/// One OSI filter. `-1` means "any" for addresses, ports and protocol.
/// Addresses are IPv4 in network byte order in the low 32 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlainFilter {
    pub id: u32,
    pub src_addr: i64,
    pub dst_addr: i64,
    pub src_port: i32,
    pub dst_port: i32,
    pub protocol: i32,
    pub dst_queue: i32,
}

/// Size of a filter in FlexRIC `dev` (with the L7 field and 4 bytes of
/// trailing alignment) and in v1.0.0 (neither).
pub const FILTER_LEN: usize = 48;
pub const FILTER_LEN_V1: usize = 40;

impl PlainFilter {
    fn read(r: &mut Reader, len: usize) -> Result<PlainFilter, PlainError> {
        let id = r.u32("filter id")?;
        r.take::<4>("filter padding")?;
        let src_addr = r.i64("filter src_addr")?;
        let dst_addr = r.i64("filter dst_addr")?;
        let src_port = r.i32("filter src_port")?;
        let dst_port = r.i32("filter dst_port")?;
        let protocol = r.i32("filter protocol")?;
        if len == FILTER_LEN {
            r.u32("filter l7")?;
        }
        let dst_queue = r.i32("filter dst_queue")?;
        if len == FILTER_LEN {
            // Alignment of the 48-byte struct to 8 bytes; the 40-byte one
            // ends on a boundary.
            r.take::<4>("filter padding")?;
        }
        Ok(PlainFilter {
            id,
            src_addr,
            dst_addr,
            src_port,
            dst_port,
            protocol,
            dst_queue,
        })
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.id.to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&self.src_addr.to_le_bytes());
        out.extend_from_slice(&self.dst_addr.to_le_bytes());
        out.extend_from_slice(&self.src_port.to_le_bytes());
        out.extend_from_slice(&self.dst_port.to_le_bytes());
        out.extend_from_slice(&self.protocol.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&self.dst_queue.to_le_bytes());
        out.extend_from_slice(&[0; 4]);
    }
}

/// `cls` of the indication.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlainClassifier {
    RoundRobin { dummy: u32 },
    Osi(Vec<PlainFilter>),
    Stochastic { dummy: u32 },
}

/// `shp` (20 B).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlainShaper {
    pub id: u32,
    pub active: u32,
    pub max_rate_kbps: u32,
    pub measured_kbps: f32,
    pub window_ms: u32,
}

/// `plc` (36 B).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlainPolicer {
    pub id: u32,
    pub measured_kbps: f32,
    pub window_ms: u32,
    pub dropped: u32,
    pub marked: u32,
    pub max_rate_kbps: f32,
    pub active: u32,
    pub dst_id: u32,
    pub dev_id: u32,
}

/// `q` (36 B). The queue id is not on the wire.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlainQueue {
    /// 0 FIFO, 1 CoDel, 2 ECN-CoDel.
    pub kind: u32,
    pub bytes: u32,
    pub packets: u32,
    pub bytes_forwarded: u32,
    pub packets_forwarded: u32,
    /// Drops (marks for ECN-CoDel).
    pub dropped_or_marked: u32,
    /// Mean sojourn of forwarded packets, ms.
    pub avg_sojourn_ms: f32,
    /// Sojourn of the last forwarded packet, us.
    pub last_sojourn_us: i64,
}

/// One TC indication message.
#[derive(Debug, Clone, PartialEq)]
pub struct PlainIndication {
    pub scheduler: PlainScheduler,
    pub pacer: PlainPacer,
    pub classifier: PlainClassifier,
    pub queues: Vec<(PlainShaper, PlainPolicer, PlainQueue)>,
    pub timestamp_us: i64,
}

const QUEUE_ENTRY_LEN: usize = 20 + 36 + 36;

impl PlainIndication {
    pub fn encode(&self) -> Vec<u8> {
        let mut o = Vec::with_capacity(64 + self.queues.len() * QUEUE_ENTRY_LEN);
        let u = |o: &mut Vec<u8>, v: u32| o.extend_from_slice(&v.to_le_bytes());
        match &self.scheduler {
            PlainScheduler::RoundRobin => u(&mut o, 0),
            PlainScheduler::Priority(q) => {
                u(&mut o, 1);
                u(&mut o, q.len() as u32);
                q.iter().for_each(|v| u(&mut o, *v));
            }
        }
        u(&mut o, self.pacer.kind);
        u(&mut o, self.pacer.id);
        o.extend_from_slice(&self.pacer.bandwidth_kbps.to_le_bytes());
        u(&mut o, self.pacer.window_ms);
        match &self.classifier {
            PlainClassifier::RoundRobin { dummy } => {
                u(&mut o, 0);
                u(&mut o, *dummy);
            }
            PlainClassifier::Osi(f) => {
                u(&mut o, 1);
                u(&mut o, f.len() as u32);
                f.iter().for_each(|f| f.write(&mut o));
            }
            PlainClassifier::Stochastic { dummy } => {
                u(&mut o, 2);
                u(&mut o, *dummy);
            }
        }
        u(&mut o, self.queues.len() as u32);
        for (s, p, q) in &self.queues {
            u(&mut o, s.id);
            u(&mut o, s.active);
            u(&mut o, s.max_rate_kbps);
            o.extend_from_slice(&s.measured_kbps.to_le_bytes());
            u(&mut o, s.window_ms);
            u(&mut o, p.id);
            o.extend_from_slice(&p.measured_kbps.to_le_bytes());
            u(&mut o, p.window_ms);
            u(&mut o, p.dropped);
            u(&mut o, p.marked);
            o.extend_from_slice(&p.max_rate_kbps.to_le_bytes());
            u(&mut o, p.active);
            u(&mut o, p.dst_id);
            u(&mut o, p.dev_id);
            u(&mut o, q.kind);
            u(&mut o, q.bytes);
            u(&mut o, q.packets);
            u(&mut o, q.bytes_forwarded);
            u(&mut o, q.packets_forwarded);
            u(&mut o, q.dropped_or_marked);
            o.extend_from_slice(&q.avg_sojourn_ms.to_le_bytes());
            o.extend_from_slice(&q.last_sojourn_us.to_le_bytes());
        }
        o.extend_from_slice(&self.timestamp_us.to_le_bytes());
        o
    }

    /// Decodes an indication with 48-byte filters (FlexRIC `dev`); use
    /// [`PlainIndication::decode_with`] for the 40-byte layout.
    pub fn decode(bytes: &[u8]) -> Result<PlainIndication, PlainError> {
        Self::decode_with(bytes, FILTER_LEN)
    }

    pub fn decode_with(bytes: &[u8], filter_len: usize) -> Result<PlainIndication, PlainError> {
        let mut r = Reader::new(bytes);
        let scheduler = match r.u32("sch type")? {
            0 => PlainScheduler::RoundRobin,
            1 => {
                let n = r.count("sch n", 4)?;
                PlainScheduler::Priority(
                    (0..n)
                        .map(|_| r.u32("sch queue"))
                        .collect::<Result<_, _>>()?,
                )
            }
            v => return Err(unknown("sch type", v, "0 RR, 1 PRIO")),
        };
        let pacer = PlainPacer {
            kind: r.u32("pcr type")?,
            id: r.u32("pcr id")?,
            bandwidth_kbps: r.f32("pcr bandwidth")?,
            window_ms: r.u32("pcr window")?,
        };
        let classifier = match r.u32("cls type")? {
            0 => PlainClassifier::RoundRobin {
                dummy: r.u32("cls dummy")?,
            },
            1 => {
                let n = r.count("cls n", filter_len)?;
                PlainClassifier::Osi(
                    (0..n)
                        .map(|_| PlainFilter::read(&mut r, filter_len))
                        .collect::<Result<_, _>>()?,
                )
            }
            2 => PlainClassifier::Stochastic {
                dummy: r.u32("cls dummy")?,
            },
            v => return Err(unknown("cls type", v, "0 RR, 1 OSI, 2 STO")),
        };
        let n = r.count("len_q", QUEUE_ENTRY_LEN)?;
        let mut queues = Vec::with_capacity(n);
        for _ in 0..n {
            let s = PlainShaper {
                id: r.u32("shp id")?,
                active: r.u32("shp active")?,
                max_rate_kbps: r.u32("shp max_rate")?,
                measured_kbps: r.f32("shp rate")?,
                window_ms: r.u32("shp window")?,
            };
            let p = PlainPolicer {
                id: r.u32("plc id")?,
                measured_kbps: r.f32("plc rate")?,
                window_ms: r.u32("plc window")?,
                dropped: r.u32("plc dropped")?,
                marked: r.u32("plc marked")?,
                max_rate_kbps: r.f32("plc max_rate")?,
                active: r.u32("plc active")?,
                dst_id: r.u32("plc dst_id")?,
                dev_id: r.u32("plc dev_id")?,
            };
            let q = PlainQueue {
                kind: r.u32("q type")?,
                bytes: r.u32("q bytes")?,
                packets: r.u32("q pkts")?,
                bytes_forwarded: r.u32("q bytes_fwd")?,
                packets_forwarded: r.u32("q pkts_fwd")?,
                dropped_or_marked: r.u32("q dropped")?,
                avg_sojourn_ms: r.f32("q avg sojourn")?,
                last_sojourn_us: r.i64("q last sojourn")?,
            };
            queues.push((s, p, q));
        }
        let timestamp_us = r.i64("tstamp")?;
        Ok(PlainIndication {
            scheduler,
            pacer,
            classifier,
            queues,
            timestamp_us,
        })
    }
}

fn kbps(bps: f64) -> f32 {
    (bps / 1000.0) as f32
}

fn sat32(v: u64) -> u32 {
    v.min(u32::MAX as u64) as u32
}

/// Builds the indication FlexRIC's xApps expect from a DRB's view at
/// `timestamp_us` (microseconds of the node's clock).
pub fn indication(view: &TcView, timestamp_us: i64) -> PlainIndication {
    let cfg = &view.config;
    let scheduler = match &cfg.scheduler {
        SchedulerConfig::Priority => {
            let mut ids: Vec<(u8, u16)> = cfg
                .queues
                .iter()
                .flat_map(|q| q.ids().map(move |id| (q.priority, id.0)))
                .collect();
            ids.sort_unstable();
            PlainScheduler::Priority(ids.into_iter().map(|(_, id)| id as u32).collect())
        }
        _ => PlainScheduler::RoundRobin,
    };
    let pacer = PlainPacer {
        kind: matches!(cfg.pacer, PacerConfig::Bdp(_) | PacerConfig::E5gBdp(_)) as u32,
        id: 0,
        bandwidth_kbps: kbps(view.stats.pacer.bandwidth_bps * 8.0),
        window_ms: 0,
    };
    let classifier = match &cfg.classifier {
        ClassifierConfig::Filter { rules } => {
            PlainClassifier::Osi(rules.iter().map(filter_of_rule).collect())
        }
        ClassifierConfig::FlowHash { .. } => PlainClassifier::Stochastic { dummy: 0 },
        _ => PlainClassifier::RoundRobin { dummy: 0 },
    };
    let queues = view
        .stats
        .queues
        .iter()
        .map(|q| {
            let qc = cfg.queues.iter().find(|c| c.ids().any(|id| id == q.id));
            let (kind, ecn) = match qc.map(|c| &c.kind) {
                Some(QueueKindConfig::Codel(c)) => (if c.ecn { 2 } else { 1 }, c.ecn),
                _ => (0, false),
            };
            let shaper = match (&q.shaper, qc.and_then(|c| c.shaper.as_ref())) {
                (Some(s), Some(ShaperConfig::TokenBucket { window, .. })) => PlainShaper {
                    id: q.id.0 as u32,
                    active: 1,
                    max_rate_kbps: sat32(s.rate_bps / 1000),
                    measured_kbps: kbps(s.measured_bps),
                    window_ms: sat32(window.as_nanos() / 1_000_000),
                },
                _ => PlainShaper {
                    id: q.id.0 as u32,
                    active: 0,
                    max_rate_kbps: 0,
                    measured_kbps: 0.0,
                    window_ms: 0,
                },
            };
            let policer = match (&q.policer, qc.and_then(|c| c.policer.as_ref())) {
                (
                    Some(p),
                    Some(PolicerConfig::TokenBucket {
                        window, redirect, ..
                    }),
                ) => PlainPolicer {
                    id: q.id.0 as u32,
                    measured_kbps: kbps(p.measured_bps),
                    window_ms: sat32(window.as_nanos() / 1_000_000),
                    dropped: sat32(p.dropped_packets),
                    marked: sat32(p.marked_packets),
                    max_rate_kbps: kbps(p.rate_bps as f64),
                    active: 1,
                    dst_id: q.id.0 as u32,
                    dev_id: redirect.map_or(q.id.0 as u32, |r| r.0 as u32),
                },
                _ => PlainPolicer {
                    id: q.id.0 as u32,
                    measured_kbps: 0.0,
                    window_ms: 0,
                    dropped: 0,
                    marked: 0,
                    max_rate_kbps: 0.0,
                    active: 0,
                    dst_id: q.id.0 as u32,
                    dev_id: q.id.0 as u32,
                },
            };
            let queue = PlainQueue {
                kind,
                bytes: sat32(q.backlog_bytes),
                packets: sat32(q.backlog_packets as u64),
                bytes_forwarded: sat32(q.forwarded_bytes),
                packets_forwarded: sat32(q.forwarded_packets),
                dropped_or_marked: sat32(if ecn {
                    q.marks.total()
                } else {
                    q.drops.total()
                }),
                avg_sojourn_ms: q.avg_sojourn_ms as f32,
                last_sojourn_us: (q.last_sojourn_ms * 1000.0) as i64,
            };
            (shaper, policer, queue)
        })
        .collect();
    PlainIndication {
        scheduler,
        pacer,
        classifier,
        queues,
        timestamp_us,
    }
}

/// A tcran rule as an OSI filter: exact IPv4 addresses, single ports and
/// the protocol number; what a filter cannot say (prefixes, port ranges,
/// IPv6, DSCP, ECN) is reported as "any".
fn filter_of_rule(r: &FilterRule) -> PlainFilter {
    let addr = |a: &Option<String>| -> i64 {
        a.as_deref()
            .and_then(|s| s.strip_suffix("/32").unwrap_or(s).parse::<Ipv4Addr>().ok())
            .map_or(-1, |ip| u32::from_le_bytes(ip.octets()) as i64)
    };
    let port = |p: &Option<NumOrText>| -> i32 {
        match p {
            Some(NumOrText::Num(n)) if (0..=65535).contains(n) => *n as i32,
            Some(NumOrText::Text(t)) => t.parse::<u16>().map_or(-1, i32::from),
            _ => -1,
        }
    };
    let protocol = match &r.protocol {
        Some(NumOrText::Num(n)) if (0..=255).contains(n) => *n as i32,
        Some(NumOrText::Text(t)) => match t.as_str() {
            "tcp" => 6,
            "udp" => 17,
            "icmp" => 1,
            "sctp" => 132,
            _ => t.parse::<u8>().map_or(-1, i32::from),
        },
        _ => -1,
    };
    PlainFilter {
        id: r.priority,
        src_addr: addr(&r.src),
        dst_addr: addr(&r.dst),
        src_port: port(&r.src_port),
        dst_port: port(&r.dst_port),
        protocol,
        dst_queue: r.queue.0 as i32,
    }
}

// --------------------------------------------------------------- control

/// What a control message asks for (FlexRIC `tc_ctrl_msg_t`).
#[derive(Debug, Clone, PartialEq)]
pub enum PlainControl {
    /// QUEUE ADD: 0 FIFO, 1 CoDel (target, interval in ms), 2 ECN-CoDel.
    QueueAdd {
        kind: u32,
        target_ms: u32,
        interval_ms: u32,
    },
    QueueDel {
        id: u32,
        kind: u32,
    },
    QueueMod {
        id: u32,
        kind: u32,
        target_ms: u32,
        interval_ms: u32,
    },
    /// CLS ADD or MOD of an OSI filter.
    ClsOsiFilter {
        modify: bool,
        filter: PlainFilter,
    },
    ClsOsiDel {
        id: u32,
    },
    /// CLS MOD to round robin (0) or stochastic (2).
    ClsSet {
        kind: u32,
    },
    SchRoundRobin,
    /// Queue ids from highest to lowest priority.
    SchPriority(Vec<u32>),
    ShpAdd,
    ShpMod {
        id: u32,
        window_ms: u32,
        rate_kbps: u32,
        active: u32,
    },
    PlcMod {
        id: u32,
        drop_rate_kbps: u32,
        dev_id: u32,
        dev_rate_kbps: u32,
        active: u32,
    },
    /// PCR MOD: 0 none, 1 5G-BDP (with FlexRIC's `drb_sz`).
    PcrMod {
        kind: u32,
        drb_sz: u32,
        timestamp_us: i64,
    },
}

const ACT_ADD: u32 = 0;
const ACT_DEL: u32 = 1;
const ACT_MOD: u32 = 2;

impl PlainControl {
    /// Decodes a control message. Filters may be 48 or 40 bytes long (told
    /// apart by the message length); trailing bytes are ignored.
    pub fn decode(bytes: &[u8]) -> Result<PlainControl, PlainError> {
        let mut r = Reader::new(bytes);
        let ty = r.u32("type")?;
        let act = r.u32("action")?;
        let acts = "0 ADD, 1 DEL, 2 MOD";
        Ok(match (ty, act) {
            (2, ACT_ADD) => {
                let kind = r.u32("queue type")?;
                match kind {
                    0 => PlainControl::QueueAdd {
                        kind,
                        target_ms: 0,
                        interval_ms: 0,
                    },
                    1 | 2 => PlainControl::QueueAdd {
                        kind,
                        target_ms: r.u32("codel target")?,
                        interval_ms: r.u32("codel interval")?,
                    },
                    v => return Err(unknown("queue type", v, "0 FIFO, 1 CoDel, 2 ECN-CoDel")),
                }
            }
            (2, ACT_DEL) => PlainControl::QueueDel {
                id: r.u32("queue id")?,
                kind: r.u32("queue type")?,
            },
            (2, ACT_MOD) => {
                let id = r.u32("queue id")?;
                let kind = r.u32("queue type")?;
                let (target_ms, interval_ms) = if kind == 1 || kind == 2 {
                    (r.u32("codel target")?, r.u32("codel interval")?)
                } else {
                    (0, 0)
                };
                PlainControl::QueueMod {
                    id,
                    kind,
                    target_ms,
                    interval_ms,
                }
            }
            (0, ACT_ADD | ACT_MOD) => match r.u32("cls type")? {
                1 => {
                    // 48-byte filters unless only a 40-byte one fits.
                    let len = if r.remaining() >= FILTER_LEN {
                        FILTER_LEN
                    } else {
                        FILTER_LEN_V1
                    };
                    PlainControl::ClsOsiFilter {
                        modify: act == ACT_MOD,
                        filter: PlainFilter::read(&mut r, len)?,
                    }
                }
                k @ (0 | 2) => PlainControl::ClsSet { kind: k },
                v => return Err(unknown("cls type", v, "0 RR, 1 OSI, 2 STO")),
            },
            (0, ACT_DEL) => match r.u32("cls type")? {
                1 => PlainControl::ClsOsiDel {
                    id: r.u32("filter id")?,
                },
                v => return Err(unknown("cls type of a DEL", v, "1 OSI")),
            },
            (3, ACT_MOD) => match r.u32("sch type")? {
                0 => PlainControl::SchRoundRobin,
                1 => {
                    let n = r.count("sch n", 4)?;
                    PlainControl::SchPriority(
                        (0..n)
                            .map(|_| r.u32("sch queue"))
                            .collect::<Result<_, _>>()?,
                    )
                }
                v => return Err(unknown("sch type", v, "0 RR, 1 PRIO")),
            },
            (4, ACT_ADD) => PlainControl::ShpAdd,
            (4, ACT_MOD) => PlainControl::ShpMod {
                id: r.u32("shp id")?,
                window_ms: r.u32("shp window")?,
                rate_kbps: r.u32("shp rate")?,
                active: r.u32("shp active")?,
            },
            (1, ACT_MOD) => PlainControl::PlcMod {
                id: r.u32("plc id")?,
                drop_rate_kbps: r.u32("plc drop rate")?,
                dev_id: r.u32("plc dev id")?,
                dev_rate_kbps: r.u32("plc dev rate")?,
                active: r.u32("plc active")?,
            },
            (5, ACT_MOD) => {
                let kind = r.u32("pcr type")?;
                let drb_sz = if kind == 1 { r.u32("pcr drb_sz")? } else { 0 };
                let timestamp_us = if r.remaining() >= 8 {
                    r.i64("pcr tstamp")?
                } else {
                    0
                };
                PlainControl::PcrMod {
                    kind,
                    drb_sz,
                    timestamp_us,
                }
            }
            (0..=5, a) if a > ACT_MOD => return Err(unknown("action", a, acts)),
            (0..=5, a) => {
                return Err(PlainError::Unknown {
                    what: "action for this type",
                    value: a as u64,
                    allowed:
                        "QUEUE ADD/DEL/MOD, CLS ADD/DEL/MOD, SCH MOD, SHP ADD/MOD, PLC MOD, PCR MOD",
                })
            }
            (t, _) => {
                return Err(unknown(
                    "type",
                    t,
                    "0 CLS, 1 PLC, 2 QUEUE, 3 SCH, 4 SHP, 5 PCR",
                ))
            }
        })
    }

    /// Encodes as FlexRIC's encoder does (48-byte filters).
    pub fn encode(&self) -> Vec<u8> {
        let mut o = Vec::with_capacity(64);
        let mut u = |v: u32| o.extend_from_slice(&v.to_le_bytes());
        match self {
            PlainControl::QueueAdd {
                kind,
                target_ms,
                interval_ms,
            } => {
                u(2);
                u(ACT_ADD);
                u(*kind);
                if *kind == 0 {
                    u(0);
                } else {
                    u(*target_ms);
                    u(*interval_ms);
                }
            }
            PlainControl::QueueDel { id, kind } => {
                u(2);
                u(ACT_DEL);
                u(*id);
                u(*kind);
            }
            PlainControl::QueueMod {
                id,
                kind,
                target_ms,
                interval_ms,
            } => {
                u(2);
                u(ACT_MOD);
                u(*id);
                u(*kind);
                if *kind != 0 {
                    u(*target_ms);
                    u(*interval_ms);
                }
            }
            PlainControl::ClsOsiFilter { modify, filter } => {
                u(0);
                u(if *modify { ACT_MOD } else { ACT_ADD });
                u(1);
                filter.write(&mut o);
            }
            PlainControl::ClsOsiDel { id } => {
                u(0);
                u(ACT_DEL);
                u(1);
                u(*id);
            }
            PlainControl::ClsSet { kind } => {
                u(0);
                u(ACT_MOD);
                u(*kind);
                u(0);
            }
            PlainControl::SchRoundRobin => {
                u(3);
                u(ACT_MOD);
                u(0);
            }
            PlainControl::SchPriority(q) => {
                u(3);
                u(ACT_MOD);
                u(1);
                u(q.len() as u32);
                q.iter().for_each(|v| u(*v));
            }
            PlainControl::ShpAdd => {
                u(4);
                u(ACT_ADD);
                u(0);
            }
            PlainControl::ShpMod {
                id,
                window_ms,
                rate_kbps,
                active,
            } => {
                u(4);
                u(ACT_MOD);
                u(*id);
                u(*window_ms);
                u(*rate_kbps);
                u(*active);
            }
            PlainControl::PlcMod {
                id,
                drop_rate_kbps,
                dev_id,
                dev_rate_kbps,
                active,
            } => {
                u(1);
                u(ACT_MOD);
                u(*id);
                u(*drop_rate_kbps);
                u(*dev_id);
                u(*dev_rate_kbps);
                u(*active);
            }
            PlainControl::PcrMod {
                kind,
                drb_sz,
                timestamp_us,
            } => {
                u(5);
                u(ACT_MOD);
                u(*kind);
                if *kind == 1 {
                    u(*drb_sz);
                }
                o.extend_from_slice(&timestamp_us.to_le_bytes());
            }
        }
        o
    }
}

/// Burst given to policers and shapers FlexRIC configures (it has no
/// burst): 10 ms at the rate, at least one 1500-byte packet, as tcran's
/// shaper default (tbf's rule of thumb).
fn burst_for(rate: BitRate) -> ByteSize {
    ByteSize(((rate.0 / 8) / 100).max(1500))
}

fn codel(target_ms: u32, interval_ms: u32, ecn: bool) -> QueueKindConfig {
    QueueKindConfig::Codel(CodelConfig {
        target: Duration::from_millis(target_ms as u64),
        interval: Duration::from_millis(interval_ms as u64),
        ecn,
        ..CodelConfig::default()
    })
}

fn queue_kind(
    kind: u32,
    target_ms: u32,
    interval_ms: u32,
) -> Result<QueueKindConfig, Untranslatable> {
    match kind {
        0 => Ok(QueueKindConfig::Fifo(FifoConfig {})),
        1 => Ok(codel(target_ms, interval_ms, false)),
        2 => Ok(codel(target_ms, interval_ms, true)),
        v => Err(Untranslatable::Unknown {
            what: "queue type",
            value: v.into(),
            allowed: "0 FIFO, 1 CoDel, 2 ECN-CoDel",
        }),
    }
}

fn queue_id(id: u32) -> Result<u16, Untranslatable> {
    u16::try_from(id).map_err(|_| Untranslatable::OutOfRange {
        what: "queue id",
        value: id.into(),
    })
}

fn existing_queue(cfg: &PipelineConfig, id: u32) -> Result<QueueConfig, Untranslatable> {
    let id16 = queue_id(id)?;
    cfg.queues
        .iter()
        .find(|q| q.ids().any(|q| q.0 == id16))
        .map(|q| QueueConfig {
            id: QueueId(id16),
            count: 1,
            ..q.clone()
        })
        .ok_or(Untranslatable::NoSuchQueue { id, context: "" })
}

/// Translates a control into tcran's terms for a pipeline configured as
/// `cfg`. `Err` is why tcran cannot express the request.
pub fn change_of(ctrl: &PlainControl, cfg: &PipelineConfig) -> Result<Change, Untranslatable> {
    let one = |c: Control| Ok(Change::Control(c));
    match ctrl {
        PlainControl::QueueAdd {
            kind,
            target_ms,
            interval_ms,
        } => {
            // FlexRIC numbers queues by position: a new queue is the next id.
            let next = cfg
                .queues
                .iter()
                .map(|q| q.id.0 as u32 + q.count as u32)
                .max()
                .unwrap_or(0);
            let id = u16::try_from(next).map_err(|_| Untranslatable::NoQueueIdLeft)?;
            one(Control::AddQueue {
                queue: QueueConfig::new(id, queue_kind(*kind, *target_ms, *interval_ms)?),
            })
        }
        PlainControl::QueueDel { id, .. } => one(Control::DeleteQueue {
            id: QueueId(queue_id(*id)?),
        }),
        PlainControl::QueueMod {
            id,
            kind,
            target_ms,
            interval_ms,
        } => {
            let mut q = existing_queue(cfg, *id)?;
            q.kind = queue_kind(*kind, *target_ms, *interval_ms)?;
            one(Control::ModifyQueue { queue: q })
        }
        PlainControl::ClsOsiFilter { modify, filter } => {
            let rule = rule_of_filter(filter)?;
            match &cfg.classifier {
                ClassifierConfig::Filter { rules } => {
                    if rules.iter().any(|r| r.priority == rule.priority) {
                        one(Control::ModifyRule { rule })
                    } else {
                        one(Control::AddRule { rule })
                    }
                }
                // FlexRIC's "OSI classifier" replaces the classifier.
                _ => {
                    let _ = modify;
                    one(Control::SetClassifier {
                        classifier: ClassifierConfig::Filter { rules: vec![rule] },
                    })
                }
            }
        }
        PlainControl::ClsOsiDel { id } => one(Control::DeleteRule { priority: *id }),
        PlainControl::ClsSet { kind: 0 } => one(Control::SetClassifier {
            classifier: ClassifierConfig::None,
        }),
        PlainControl::ClsSet { .. } => {
            let mut ids: Vec<u16> = cfg
                .queues
                .iter()
                .flat_map(|q| q.ids().map(|i| i.0))
                .collect();
            ids.sort_unstable();
            let first = ids[0];
            if ids
                .iter()
                .enumerate()
                .any(|(i, id)| *id as usize != first as usize + i)
            {
                return Err(Untranslatable::NotConsecutive { ids });
            }
            one(Control::SetClassifier {
                classifier: ClassifierConfig::FlowHash {
                    first_queue: QueueId(first),
                    buckets: ids.len() as u32,
                    perturbation: 0,
                },
            })
        }
        PlainControl::SchRoundRobin => one(Control::SetScheduler {
            scheduler: SchedulerConfig::RoundRobin,
        }),
        PlainControl::SchPriority(order) => {
            let mut controls = Vec::new();
            let all: Vec<u16> = cfg
                .queues
                .iter()
                .flat_map(|q| q.ids().map(|i| i.0))
                .collect();
            for id in &all {
                let level = order
                    .iter()
                    .position(|q| *q == *id as u32)
                    .unwrap_or(order.len())
                    .min(u8::MAX as usize) as u8;
                let mut q = existing_queue(cfg, *id as u32)?;
                if q.priority != level {
                    q.priority = level;
                    controls.push(Control::ModifyQueue { queue: q });
                }
            }
            if let Some(missing) = order.iter().find(|q| !all.iter().any(|a| *a as u32 == **q)) {
                return Err(Untranslatable::PriorityOfMissingQueue { id: *missing });
            }
            controls.push(Control::SetScheduler {
                scheduler: SchedulerConfig::Priority,
            });
            Ok(Change::Controls(controls))
        }
        PlainControl::ShpAdd => Err(Untranslatable::ShaperWithoutQueue),
        PlainControl::ShpMod {
            id,
            window_ms,
            rate_kbps,
            active,
        } => {
            existing_queue(cfg, *id)?;
            let shaper = (*active != 0).then(|| {
                let rate = BitRate(*rate_kbps as u64 * 1000);
                ShaperConfig::TokenBucket {
                    rate,
                    burst: Some(burst_for(rate)),
                    peak_rate: None,
                    mtu: None,
                    window: Duration::from_millis((*window_ms).max(1) as u64),
                }
            });
            one(Control::SetShaper {
                id: QueueId(*id as u16),
                shaper,
            })
        }
        PlainControl::PlcMod {
            id,
            drop_rate_kbps,
            dev_id,
            dev_rate_kbps,
            active,
        } => {
            existing_queue(cfg, *id)?;
            let qid = QueueId(*id as u16);
            if *active == 0 {
                return one(Control::SetPolicer {
                    id: qid,
                    policer: None,
                });
            }
            let tb = |rate_kbps: u32, action, redirect| {
                let rate = BitRate(rate_kbps as u64 * 1000);
                PolicerConfig::TokenBucket {
                    rate,
                    burst: burst_for(rate),
                    action,
                    redirect,
                    window: Duration::from_secs(1),
                }
            };
            let policer = if *drop_rate_kbps > 0
                && (*dev_rate_kbps == 0 || drop_rate_kbps <= dev_rate_kbps)
            {
                // Dropping starts first: the deviation rate is never reached.
                tb(*drop_rate_kbps, PolicerAction::Drop, None)
            } else if *drop_rate_kbps == 0 && *dev_rate_kbps > 0 {
                let to = u16::try_from(*dev_id).map_err(|_| Untranslatable::OutOfRange {
                    what: "dev_id",
                    value: (*dev_id).into(),
                })?;
                existing_queue(cfg, *dev_id).map_err(|_| Untranslatable::NoSuchQueue {
                    id: *dev_id,
                    context: "dev_id: ",
                })?;
                tb(*dev_rate_kbps, PolicerAction::Redirect, Some(QueueId(to)))
            } else {
                return Err(Untranslatable::TwoRatePolicer {
                    dev_rate_kbps: *dev_rate_kbps,
                    drop_rate_kbps: *drop_rate_kbps,
                });
            };
            one(Control::SetPolicer {
                id: qid,
                policer: Some(policer),
            })
        }
        PlainControl::PcrMod { kind: 0, .. } => one(Control::SetPacer {
            pacer: PacerConfig::None,
        }),
        // FlexRIC's drb_sz has no counterpart: tcran's 5G-BDP sizes the RLC
        // buffer from the MAC's reports (thesis Alg. 2).
        PlainControl::PcrMod { kind: 1, .. } => one(Control::SetPacer {
            pacer: PacerConfig::Bdp(BdpConfig::default()),
        }),
        PlainControl::PcrMod { kind, .. } => Err(Untranslatable::Unknown {
            what: "pacer type",
            value: (*kind).into(),
            allowed: "0 none, 1 5G-BDP",
        }),
    }
}

fn rule_of_filter(f: &PlainFilter) -> Result<FilterRule, Untranslatable> {
    let filter = |what, value: i64, expected| Untranslatable::Filter {
        what,
        value,
        expected,
    };
    let addr = |v: i64, what| match v {
        -1 => Ok(None),
        0..=0xffff_ffff => Ok(Some(Ipv4Addr::from((v as u32).to_le_bytes()).to_string())),
        _ => Err(filter(what, v, "an IPv4 address")),
    };
    let port = |v: i32, what| match v {
        -1 => Ok(None),
        0..=65535 => Ok(Some(NumOrText::Num(v as i64))),
        _ => Err(filter(what, v.into(), "a port")),
    };
    let queue = u16::try_from(f.dst_queue).map_err(|_| Untranslatable::OutOfRange {
        what: "filter dst_queue",
        value: f.dst_queue.into(),
    })?;
    let mut rule = FilterRule::new(f.id, QueueId(queue));
    rule.src = addr(f.src_addr, "src_addr")?;
    rule.dst = addr(f.dst_addr, "dst_addr")?;
    rule.src_port = port(f.src_port, "src_port")?;
    rule.dst_port = port(f.dst_port, "dst_port")?;
    rule.protocol = match f.protocol {
        -1 => None,
        0..=255 => Some(NumOrText::Num(f.protocol as i64)),
        p => return Err(filter("protocol", p.into(), "0..=255")),
    };
    Ok(rule)
}

// ----------------------------------------------------------------- model

/// The model: reports and controls one DRB's pipeline, `drb` if set (of
/// either direction), otherwise the node's first downlink DRB.
#[derive(Debug, Clone, Default)]
pub struct FlexricTc {
    pub drb: Option<DrbKey>,
    /// Added to the node's clock (us) to make the indication's `tstamp`:
    /// FlexRIC's xApps compare it with their wall clock (us since the Unix
    /// epoch) to measure indication age. `WallClock::unix_offset_us` gives
    /// it for a node on the wall clock; 0 reports the node's clock as is.
    pub time_offset_us: i64,
}

impl FlexricTc {
    fn target(&self, node: &dyn RanNode) -> Option<DrbKey> {
        self.drb.or_else(|| {
            let mut all = Vec::new();
            node.drbs(&mut all);
            all.first().copied()
        })
    }
}

/// FlexRIC's TC model has no UE, DRB nor direction field: the node
/// reports and controls the one DRB it is configured with
/// ([`FlexricTc::drb`]). tcran names that DRB by a number in FlexRIC's DRB
/// id range, one range per direction: 1..=32 the downlink DRB of that id,
/// 33..=64 the uplink DRB `number - 32` (the UE's pipeline), so a tool that
/// carries a DRB as FlexRIC does (a u8) carries both
/// (`--e2-tc-drb RNTI:DRB`).
pub const UPLINK_DRB_OFFSET: u8 = 32;

/// The DRB that FlexRIC DRB number `number` of UE `rnti` names
/// ([`UPLINK_DRB_OFFSET`]), `None` outside 1..=64.
pub fn drb_key(rnti: u16, number: u8) -> Option<DrbKey> {
    match number {
        1..=32 => Some(DrbKey::new(rnti, number)),
        33..=64 => Some(DrbKey::uplink(rnti, number - UPLINK_DRB_OFFSET)),
        _ => None,
    }
}

/// The FlexRIC DRB number of `key` (the inverse of [`drb_key`]).
pub fn drb_number(key: DrbKey) -> u8 {
    match key.dir {
        Direction::Downlink => key.drb.0,
        Direction::Uplink => key.drb.0.saturating_add(UPLINK_DRB_OFFSET),
    }
}

/// FlexRIC's header and control outcome: a u32 0.
const ZERO: [u8; 4] = [0; 4];

impl ServiceModel for FlexricTc {
    fn ran_function_id(&self) -> u16 {
        RAN_FUNCTION_ID
    }

    fn ran_function(&self, _node: &dyn RanNode) -> RanFunction {
        RanFunction {
            id: RAN_FUNCTION_ID,
            definition: DEFINITION.to_vec(),
            revision: 1,
            oid: OID.into(),
        }
    }

    fn subscribe(
        &self,
        trigger: &[u8],
        action: &Action,
        _node: &dyn RanNode,
    ) -> Result<Job, Refusal> {
        if action.kind != ActionType::Report {
            return Err(Refusal::action_not_supported(
                "only REPORT actions are supported",
            ));
        }
        let period_ms = Reader::new(trigger)
            .u32("event trigger period")
            .map_err(|e| Refusal::action_not_supported(e.to_string()))?;
        if period_ms == 0 {
            return Err(Refusal::action_not_supported(
                "event trigger period 0 ms (at least 1 ms)",
            ));
        }
        Ok(Job {
            period: Duration::from_millis(period_ms as u64).max(MIN_PERIOD),
            state: JobState::FlexricTc,
        })
    }

    fn indicate(&self, _job: &mut JobState, node: &dyn RanNode, now: Instant) -> Vec<Indication> {
        let Some(view) = self.target(node).and_then(|d| node.tc_view(d, now)) else {
            return Vec::new();
        };
        let us = (now.as_nanos() / 1000) as i64 + self.time_offset_us;
        let mut ind = indication(&view, us);
        // One message describes one pipeline, so it cannot be split: a
        // pipeline with more queues than fit (a flow-hash bank) reports its
        // first ones.
        let fixed = ind.encode().len() - ind.queues.len() * QUEUE_ENTRY_LEN;
        ind.queues
            .truncate((super::MAX_MESSAGE - fixed) / QUEUE_ENTRY_LEN);
        vec![(ZERO.to_vec(), ind.encode())]
    }

    fn control(
        &mut self,
        _header: &[u8],
        message: &[u8],
        node: &mut dyn RanNode,
        now: Instant,
    ) -> ControlOutcome {
        let refused = |c: u8, m: String| ControlOutcome::Refused {
            refusal: Refusal::ric_request(c, m),
            outcome: Some(ZERO.to_vec()),
        };
        let ctrl = match PlainControl::decode(message) {
            Ok(c) => c,
            Err(e) => return refused(cause::CONTROL_MESSAGE_INVALID, e.to_string()),
        };
        let Some(drb) = self.target(node) else {
            return refused(
                cause::CONTROL_FAILED_TO_EXECUTE,
                "the node has no DRB".into(),
            );
        };
        let Some(view) = node.tc_view(drb, now) else {
            return refused(
                cause::CONTROL_FAILED_TO_EXECUTE,
                format!("{drb} does not exist"),
            );
        };
        // A request tcran cannot express is refused in the model's words,
        // one the node refuses in the node's.
        let why = match change_of(&ctrl, &view.config) {
            Ok(change) => match node.apply(drb, &change, now) {
                Ok(_) => {
                    return ControlOutcome::Done {
                        outcome: Some(ZERO.to_vec()),
                    }
                }
                Err(e) => e.to_string(),
            },
            Err(untranslatable) => untranslatable.to_string(),
        };
        refused(cause::CONTROL_FAILED_TO_EXECUTE, format!("{drb}: {why}"))
    }
}
