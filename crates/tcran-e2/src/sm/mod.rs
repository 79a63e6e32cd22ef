//! Service models: one trait, [`ServiceModel`], a module per model, and
//! [`AnyModel`] dispatching over them (FlexRIC's layout: one plugin per RAN
//! function).
//!
//! | module | RAN function | what it does |
//! |---|---|---|
//! | [`flexric_tc`] | 146 `TC_STATS_V0` | FlexRIC's TC model, PLAIN encoding: one DRB's pipeline |
//! | [`flexric_slice`] | 145 `SLICE_STATS_V0` | FlexRIC's SLICE model on the MAC's slicing (codec: [`flexric_slice_codec`]) |
//! | [`flexric_stats`] | 142 MAC, 143 RLC, 144 PDCP, 148 GTP | FlexRIC's monitoring models, PLAIN encoding ([`plain`]): the node's MAC, RLC, PDCP and SDAP counters |
//! | [`e2sm_tcran`] | configurable (default 246) | tcran's TC model (E2SM-TCRAN v1): every DRB, every stage, triggers by period and condition |
//! | [`kpm`] | 2 | E2SM-KPM v02.03 REPORT styles 1-5, TS 28.552 measurements |
//! | [`rc`] | 3 | E2SM-RC v01.03: REPORT style 4 (RRC state), CONTROL style 1 action 2 (QoS flow -> DRB on SDAP), style 2 action 6 (PRB quota on the MAC's slicing) |
//!
//! The RIC side reads E2SM-TCRAN indications as tcran's statistics types
//! with [`tc_status`] (the direct decoder of [`aper_fast`], hampi's
//! otherwise); [`report_stream`] is the node's writer of them.
//!
//! A model is sans-IO like the agent: it reads the node through
//! [`RanNode`] and the time it is given.

pub mod aper_fast;
pub mod e2sm_tcran;
pub mod flexric_slice;
pub mod flexric_slice_codec;
pub mod flexric_stats;
pub mod flexric_tc;
pub mod kpm;
pub mod plain;
pub mod rc;
pub mod report_stream;
pub mod tc_status;

use crate::e2ap::{Action, Cause, RanFunction};
use tcran_control::RanNode;
use tcran_core::{Duration, Instant};

/// Why a service model's bytes (a trigger, an outcome, an indication) do
/// not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SmDecodeError {
    /// Not APER of the model's ASN.1 type (the codec's reason).
    #[error("{0}")]
    Aper(String),
    /// Valid ASN.1 carrying a value the model gives no meaning.
    #[error("{what} {value} unknown")]
    Unknown { what: &'static str, value: u64 },
    /// A KPM UE id that is no RNTI (16 bits).
    #[error("UE id {0} is not an RNTI")]
    NotAnRnti(u64),
    /// Valid ASN.1 of a form this decoder does not read.
    #[error("{0} is not understood")]
    NotUnderstood(&'static str),
}

/// The APER encoding of `v`, a value tcran built (so within its ASN.1
/// ranges: a failure is a bug).
pub(crate) fn to_aper<T: asn1_codecs::aper::AperCodec>(v: &T) -> Vec<u8> {
    let mut d = asn1_codecs::PerCodecData::new_aper();
    v.aper_encode(&mut d)
        .expect("service-model values built by tcran are within their ASN.1 ranges");
    d.into_bytes()
}

/// Decodes `bytes` as the APER encoding of `T`.
pub(crate) fn aper<T: asn1_codecs::aper::AperCodec<Output = T>>(
    bytes: &[u8],
) -> Result<T, SmDecodeError> {
    T::aper_decode(&mut asn1_codecs::PerCodecData::from_slice_aper(bytes))
        .map_err(|e| SmDecodeError::Aper(e.to_string()))
}

/// Why a subscription's action or a control was not accepted.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub cause: Cause,
    /// One line for logs and, where the model has a field for it, the RIC.
    pub message: String,
}

impl Refusal {
    /// A subscription's action the model does not take (E2AP
    /// `CauseRICrequest` action-not-supported).
    pub fn action_not_supported(message: impl Into<String>) -> Refusal {
        Refusal::ric_request(cause::ACTION_NOT_SUPPORTED, message)
    }

    pub fn ric_request(cause: u8, message: impl Into<String>) -> Refusal {
        Refusal {
            cause: crate::e2ap::ric_request_cause(cause),
            message: message.into(),
        }
    }
}

/// E2AP `CauseRICrequest` values the models use (E2AP 9.2.1.2).
pub mod cause {
    use crate::asn::e2ap::CauseRICrequest as C;
    pub const ACTION_NOT_SUPPORTED: u8 = C::ACTION_NOT_SUPPORTED;
    pub const CONTROL_MESSAGE_INVALID: u8 = C::CONTROL_MESSAGE_INVALID;
    pub const CONTROL_FAILED_TO_EXECUTE: u8 = C::CONTROL_FAILED_TO_EXECUTE;
    pub const UNSPECIFIED: u8 = C::UNSPECIFIED;
}

/// The report duty one admitted action gives the node.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// How often [`ServiceModel::indicate`] runs (at least 1 ms).
    pub period: Duration,
    pub state: JobState,
}

/// Model-specific state of a [`Job`].
#[derive(Debug, Clone, PartialEq)]
pub enum JobState {
    FlexricTc,
    FlexricStats(flexric_stats::StatsJob),
    FlexricSlice,
    Kpm(kpm::KpmJob),
    Rc(rc::RcJob),
    TcRan(e2sm_tcran::TcRanJob),
}

/// What a control did.
#[derive(Debug, Clone, PartialEq)]
pub enum ControlOutcome {
    /// Applied. `outcome` is the model's RICcontrolOutcome, if it has one.
    Done { outcome: Option<Vec<u8>> },
    /// A request that changes nothing and reads the state (E2SM-TCRAN's
    /// empty control list): answered like an applied control, counted
    /// apart from the changes. `outcome` carries what was read.
    Read { outcome: Option<Vec<u8>> },
    /// Not applied, for `refusal`; `outcome` carries the model's own
    /// description, if it has one.
    Refused {
        refusal: Refusal,
        outcome: Option<Vec<u8>>,
    },
}

/// One E2 service model on the node side.
pub trait ServiceModel {
    /// The RAN function id (cheap; [`ServiceModel::ran_function`] builds
    /// the whole definition).
    fn ran_function_id(&self) -> u16;
    /// The RAN function as announced in E2 Setup and RIC Service Update.
    fn ran_function(&self, node: &dyn RanNode) -> RanFunction;
    /// Checks one action of a RIC Subscription Request with the event
    /// trigger `trigger` and returns its job.
    fn subscribe(
        &self,
        trigger: &[u8],
        action: &Action,
        node: &dyn RanNode,
    ) -> Result<Job, Refusal>;
    /// The indications (header, message) of `job` at `now`: none when
    /// there is nothing to report this period (a condition that does not
    /// hold), several when one report would exceed [`MAX_MESSAGE`].
    /// Called every `job.period`.
    fn indicate(&self, job: &mut JobState, node: &dyn RanNode, now: Instant) -> Vec<Indication>;
    /// Whether the RIC reads this model as FlexRIC does (the agent's
    /// FlexRIC rules, `agent::RicProfile`): set at every E2 Setup and when
    /// a RIC Service Query ends those rules. Models with a FlexRIC dialect
    /// (KPM, RC) follow it; the others have none.
    fn set_flexric_dialect(&mut self, flexric: bool) {
        let _ = flexric;
    }
    /// Executes one RIC Control Request.
    fn control(
        &mut self,
        header: &[u8],
        message: &[u8],
        node: &mut dyn RanNode,
        now: Instant,
    ) -> ControlOutcome;
}

/// The built-in service models.
#[derive(Debug, Clone)]
pub enum AnyModel {
    FlexricTc(flexric_tc::FlexricTc),
    FlexricStats(flexric_stats::FlexricStats),
    FlexricSlice(flexric_slice::FlexricSlice),
    Kpm(kpm::Kpm),
    Rc(rc::Rc),
    TcRan(e2sm_tcran::TcRan),
}

macro_rules! dispatch {
    ($self:ident, $m:ident => $e:expr) => {
        match $self {
            AnyModel::FlexricTc($m) => $e,
            AnyModel::FlexricStats($m) => $e,
            AnyModel::FlexricSlice($m) => $e,
            AnyModel::Kpm($m) => $e,
            AnyModel::Rc($m) => $e,
            AnyModel::TcRan($m) => $e,
        }
    };
}

impl ServiceModel for AnyModel {
    fn ran_function_id(&self) -> u16 {
        dispatch!(self, m => m.ran_function_id())
    }
    fn ran_function(&self, node: &dyn RanNode) -> RanFunction {
        dispatch!(self, m => m.ran_function(node))
    }
    fn subscribe(
        &self,
        trigger: &[u8],
        action: &Action,
        node: &dyn RanNode,
    ) -> Result<Job, Refusal> {
        dispatch!(self, m => m.subscribe(trigger, action, node))
    }
    fn indicate(&self, job: &mut JobState, node: &dyn RanNode, now: Instant) -> Vec<Indication> {
        dispatch!(self, m => m.indicate(job, node, now))
    }
    fn set_flexric_dialect(&mut self, flexric: bool) {
        dispatch!(self, m => m.set_flexric_dialect(flexric))
    }
    fn control(
        &mut self,
        header: &[u8],
        message: &[u8],
        node: &mut dyn RanNode,
        now: Instant,
    ) -> ControlOutcome {
        dispatch!(self, m => m.control(header, message, node, now))
    }
}

/// One indication's (header, message).
pub type Indication = (Vec<u8>, Vec<u8>);

/// Largest service model message tcran sends: hampi encodes OCTET STRINGs
/// of up to 16383 bytes (no APER fragmentation), and a little room is left
/// for the rest of the E2AP PDU. Larger reports are split over several
/// indications.
pub const MAX_MESSAGE: usize = 16_000;

/// Encodes `items` as messages of at most [`MAX_MESSAGE`] bytes each:
/// `message` encodes a group, `size` one item alone. Items are grouped by
/// count, from the largest size among a sample of them (encoding every
/// item twice would double the cost of a large report); a group that
/// still comes out too large is split in two until it fits. Groups are
/// slices of `items`: nothing is copied to make them.
pub fn encode_in_messages<T>(
    items: &[T],
    message: &dyn Fn(&[T]) -> Vec<u8>,
    size: &dyn Fn(&T) -> usize,
) -> Vec<Vec<u8>> {
    const SAMPLES: usize = 16;
    let step = (items.len() / SAMPLES).max(1);
    let largest = items.iter().step_by(step).map(size).max().unwrap_or(1);
    // A third of slack for items larger than the sampled ones.
    let per_message = ((MAX_MESSAGE * 2 / 3) / (largest + 2)).max(1);
    let mut out = Vec::new();
    let mut pending: Vec<(usize, usize)> = (0..items.len())
        .step_by(per_message)
        .map(|a| (a, (a + per_message).min(items.len())))
        .rev()
        .collect();
    while let Some((a, b)) = pending.pop() {
        let bytes = message(&items[a..b]);
        if bytes.len() <= MAX_MESSAGE || b - a == 1 {
            out.push(bytes);
        } else {
            let mid = a + (b - a) / 2;
            pending.push((mid, b));
            pending.push((a, mid));
        }
    }
    out
}

/// Smallest reporting period (E2 indications every 1 ms at most).
pub const MIN_PERIOD: Duration = Duration::from_millis(1);
