//! The E2 node protocol core (E2AP v02.03 clause 8), sans-IO.
//!
//! The [`Agent`] never touches a socket or a clock: the transport hands it
//! each received PDU with [`Agent::handle`] and takes what it must send
//! with [`Agent::poll_transmit`]; the caller tells it the time and calls
//! [`Agent::on_timeout`] at [`Agent::next_wakeup`]. It borrows the RAN node
//! ([`RanNode`]) for every call that needs it, so the node's pipelines live
//! on across connections: a RIC restart costs subscriptions (the RIC makes
//! them again), never pipeline state.
//!
//! Procedures (E2AP clause 8):
//! - E2 Setup (8.3.1): sent on [`Agent::connected`]: the RAN functions of
//!   every model, GlobalE2node-ID (gNB), one component configuration (NG,
//!   never empty: FlexRIC aborts on an empty list). A Setup Failure is
//!   retried on the same association when [`crate::backoff`] says (never
//!   before its TimeToWait, exponentially later on each failure); no
//!   answer is asked again after `setup_timeout`.
//! - Reconnections: the agent also decides when its driver opens the next
//!   association ([`Agent::connect_at`]): the driver reports a connection
//!   that failed ([`Agent::connect_failed`]) or ended
//!   ([`Agent::disconnected`]), and the same backoff, which only a
//!   successful E2 Setup resets, spaces the attempts.
//! - RIC Subscription / Subscription Delete (8.2.1, 8.2.2): each REPORT
//!   action the model accepts becomes a timed job (period from 1 ms); the
//!   others are "not admitted" with the model's cause; none admitted is a
//!   Subscription Failure.
//! - RIC Indication (8.2.3): one per job per period when the model has
//!   something to report; SN per action (standard profile only).
//! - RIC Control (8.2.4): Acknowledge (unless noAck) or Failure with a cause.
//! - Error Indication (8.3.3), Reset (8.3.2), RIC Service Update (8.3.4:
//!   [`Agent::refresh_functions`] when the RAN functions change), RIC
//!   Service Query (8.3.5), E2 Removal (8.3.7).
//!
//! [`RicProfile::Flexric`] adapts to FlexRIC (shared/e2/FLEXRIC-INTEROP.md,
//! FLEXRIC-SMS.md section 11, every way its RIC aborts): E2 Setup offers
//! only RAN functions FlexRIC has a plugin for ([`FLEXRIC_RAN_FUNCTIONS`]),
//! and the node never sends RIC Subscription Failure (a subscription with
//! no admitted action is left unanswered, counted and logged: FlexRIC's RIC
//! times the request out, it does not abort), RIC Control Failure (a
//! refused control is acknowledged, logged and counted), RIC Service
//! Update, Reset or Error Indication, and leaves the SN out of indications.
//!
//! [`RicProfile::Auto`], the default of the command line, behaves as
//! `Flexric` until the RIC sends a RIC Service Query (E2AP 8.3.5). FlexRIC
//! never does; a RIC that does asks for the node's RAN functions and so
//! takes a RIC Service Update (8.3.4: the node's answer to the query). From
//! then on, on that association, the agent is `Standard`: it announces the
//! models it held back (E2SM-TCRAN) by that Service Update and answers with
//! failures and error indications as E2AP says. tcran's own xApp SDK sends
//! the query after every E2 Setup, so it reaches every model while FlexRIC
//! and its stock xApps see only what they can take.

use crate::backoff::{self, Backoff, BackoffConfig};
use crate::e2ap::{
    self, E2apPdu, ErrorIndication, GlobalE2node_ID, RanFunction, RanFunctionRevision, RicRequestId,
};
use crate::sm::{AnyModel, ControlOutcome, Job, ServiceModel};
use std::collections::{BTreeMap, VecDeque};
use tcran_control::RanNode;
use tcran_core::{Duration, Instant};

/// Which RIC the agent talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RicProfile {
    /// FlexRIC's rules until the RIC sends a RIC Service Query, `Standard`
    /// after it (see the module docs).
    #[default]
    Auto,
    /// E2AP as specified, every model offered at E2 Setup.
    Standard,
    /// FlexRIC: only its RAN function ids at E2 Setup; no Subscription
    /// Failure, Control Failure, Service Update, Reset or Error Indication
    /// is ever sent (its RIC and xApps assert on them), except the Service
    /// Update that answers a RIC Service Query (FlexRIC never queries; the
    /// update re-announces the same functions, so a RIC that queries, such
    /// as tcran's xApp SDK, does not wait for an answer in vain).
    Flexric,
}

/// The RAN function ids FlexRIC's RIC has a plugin for (KPM 2, RC 3, MAC
/// 142, RLC 143, PDCP 144, SLICE 145, TC 146, GTP 148): any other id in E2
/// Setup aborts it (FLEXRIC-SMS.md sections 1 and 11).
pub const FLEXRIC_RAN_FUNCTIONS: [u16; 8] = [2, 3, 142, 143, 144, 145, 146, 148];

/// How the agent presents itself.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    pub node_id: GlobalE2node_ID,
    pub profile: RicProfile,
    pub models: Vec<AnyModel>,
    /// Time to wait for an E2 Setup Response before asking again.
    pub setup_timeout: Duration,
    /// When to ask again after a failure (E2 Setup, connection).
    pub backoff: BackoffConfig,
}

impl AgentConfig {
    /// A gNB (PLMN 001/01, gNB id 1 on 22 bits) with the given models.
    pub fn new(models: Vec<AnyModel>, profile: RicProfile) -> AgentConfig {
        AgentConfig {
            node_id: e2ap::gnb_node_id([0x00, 0xf1, 0x10], 1, 22),
            profile,
            models,
            setup_timeout: Duration::from_secs(5),
            backoff: BackoffConfig::default(),
        }
    }
}

/// Where the association is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentState {
    /// No transport.
    Disconnected,
    /// E2 Setup Request sent, waiting for the answer until the deadline.
    SetupPending { transaction: u8, deadline: Instant },
    /// E2 Setup failed: ask again at `retry_at`.
    SetupBackoff { retry_at: Instant },
    /// E2 Setup done: the RIC may subscribe and control.
    Ready,
    /// The RIC removed the node (E2 Removal): the transport should close.
    Removed,
}

/// Counters of the agent (never reset, also across connections).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AgentStats {
    pub pdus_received: u64,
    pub pdus_sent: u64,
    /// Received bytes that were not an E2AP PDU tcran understands.
    pub decode_errors: u64,
    pub setups_sent: u64,
    pub setups_done: u64,
    /// E2 Setup Failures received.
    pub setup_failures: u64,
    pub subscriptions: u64,
    pub subscription_failures: u64,
    /// Subscriptions with no admitted action left unanswered because the
    /// RIC aborts on RIC Subscription Failure (FlexRIC's rules).
    pub subscriptions_unanswered: u64,
    pub indications: u64,
    /// Report periods missed because `on_timeout` came late (each job
    /// resumes at the next period instead of sending a burst).
    pub periods_skipped: u64,
    /// Controls that changed the node.
    pub controls_applied: u64,
    /// Requests that only read (E2SM-TCRAN's empty control list),
    /// answered like applied controls but not counted among them.
    pub controls_read: u64,
    /// Controls refused by the node or the model (malformed included).
    pub controls_refused: u64,
    /// Of those, acknowledged anyway (FlexRIC profile).
    pub controls_refused_acknowledged: u64,
    pub error_indications_received: u64,
    pub error_indications_sent: u64,
    pub resets: u64,
    pub service_updates_sent: u64,
}

/// Something the agent wants the application to know (logs, metrics).
#[derive(Debug, Clone, PartialEq)]
pub enum AgentEvent {
    SetupDone,
    SetupFailed {
        cause: e2ap::Cause,
        retry_in: Duration,
    },
    Subscribed {
        request: RicRequestId,
        function: u16,
        actions: usize,
    },
    SubscriptionRefused {
        request: RicRequestId,
        function: u16,
        why: String,
        /// Left unanswered (FlexRIC's rules) rather than failed.
        unanswered: bool,
    },
    Unsubscribed {
        request: RicRequestId,
        function: u16,
    },
    ControlApplied {
        request: RicRequestId,
        function: u16,
    },
    /// A control that changed nothing and read the state.
    ControlRead {
        request: RicRequestId,
        function: u16,
    },
    ControlRefused {
        request: RicRequestId,
        function: u16,
        why: String,
        acknowledged: bool,
    },
    ErrorIndication(ErrorIndication),
    DecodeError(String),
    /// A message the agent did not expect in its state; answered or ignored.
    Unexpected(&'static str),
    Reset,
    Removed,
}

#[derive(Debug)]
struct ActiveJob {
    model: usize,
    request: RicRequestId,
    function: u16,
    action: u8,
    job: Job,
    next_due: Instant,
    sn: u16,
}

/// The E2 node side of one E2 association (see the module docs).
#[derive(Debug)]
pub struct Agent {
    config: AgentConfig,
    state: AgentState,
    /// Jobs ordered by (request, function, action) for determinism.
    jobs: Vec<ActiveJob>,
    outbox: VecDeque<Vec<u8>>,
    events: VecDeque<AgentEvent>,
    stats: AgentStats,
    next_transaction: u8,
    /// RAN functions as last announced (id -> function).
    announced: BTreeMap<u16, RanFunction>,
    /// Outstanding RIC Service Update, if any.
    update_pending: Option<u8>,
    backoff: Backoff,
    /// The RIC sent a RIC Service Query on this association
    /// ([`RicProfile::Auto`] then follows E2AP as specified).
    queried: bool,
}

impl Agent {
    pub fn new(config: AgentConfig) -> Agent {
        let backoff = Backoff::new(config.backoff, &e2ap::node_id_string(&config.node_id));
        Agent {
            backoff,
            config,
            state: AgentState::Disconnected,
            jobs: Vec::new(),
            outbox: VecDeque::new(),
            events: VecDeque::new(),
            stats: AgentStats::default(),
            next_transaction: 0,
            announced: BTreeMap::new(),
            update_pending: None,
            queried: false,
        }
    }

    /// Whether the agent follows FlexRIC's rules now (see [`RicProfile`]).
    pub fn flexric_rules(&self) -> bool {
        match self.config.profile {
            RicProfile::Standard => false,
            RicProfile::Flexric => true,
            RicProfile::Auto => !self.queried,
        }
    }

    pub fn state(&self) -> AgentState {
        self.state
    }
    pub fn stats(&self) -> AgentStats {
        self.stats
    }
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }
    /// Number of report jobs (admitted actions) running.
    pub fn jobs(&self) -> usize {
        self.jobs.len()
    }

    /// Next PDU to send, if any.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.outbox.pop_front()
    }

    /// Next event for the application, if any.
    pub fn poll_event(&mut self) -> Option<AgentEvent> {
        self.events.pop_front()
    }

    /// When [`Agent::on_timeout`] must run next (`None`: only on input).
    pub fn next_wakeup(&self) -> Option<Instant> {
        match self.state {
            AgentState::SetupPending { deadline, .. } => Some(deadline),
            AgentState::SetupBackoff { retry_at } => Some(retry_at),
            AgentState::Ready => self.jobs.iter().map(|j| j.next_due).min(),
            AgentState::Disconnected | AgentState::Removed => None,
        }
    }

    /// A transport to the RIC is up: start E2 Setup.
    pub fn connected(&mut self, node: &dyn RanNode, now: Instant) {
        self.jobs.clear();
        self.update_pending = None;
        self.queried = false;
        self.sync_dialects();
        self.send_setup(node, now);
    }

    /// Tells every model whether the RIC reads it as FlexRIC does (KPM's
    /// and RC's dialects follow the agent's rules, so a RIC Service Query
    /// switches them to the standard along with the rest).
    fn sync_dialects(&mut self) {
        let flexric = self.flexric_rules();
        for m in &mut self.config.models {
            m.set_flexric_dialect(flexric);
        }
    }

    /// The transport is gone at `now`. Subscriptions end with it (E2AP:
    /// they belong to the association); the node keeps everything else.
    /// Counts as a failure for the backoff, unless the association ended
    /// after an E2 Setup Failure that already did (its TimeToWait holds).
    pub fn disconnected(&mut self, now: Instant) {
        if !matches!(self.state, AgentState::SetupBackoff { .. }) {
            self.backoff.failed(now, None);
        }
        self.jobs.clear();
        self.outbox.clear();
        self.update_pending = None;
        self.state = AgentState::Disconnected;
    }

    /// The driver could not open an association at `now` (refused,
    /// unreachable, TLS handshake failed).
    pub fn connect_failed(&mut self, now: Instant) {
        self.backoff.failed(now, None);
    }

    /// When the driver should open the next association: `Some` only while
    /// disconnected, at once ([`Instant::ZERO`]) before any failure.
    pub fn connect_at(&self) -> Option<Instant> {
        (self.state == AgentState::Disconnected)
            .then(|| self.backoff.retry_at().unwrap_or(Instant::ZERO))
    }

    /// Failures (connections, E2 Setup) since the last successful E2 Setup.
    pub fn failures(&self) -> u32 {
        self.backoff.failures()
    }

    fn transaction(&mut self) -> u8 {
        let t = self.next_transaction;
        self.next_transaction = self.next_transaction.wrapping_add(1);
        t
    }

    /// The RAN functions the RIC may see now: under FlexRIC's rules only
    /// those with an id FlexRIC has a plugin for.
    fn functions(&self, node: &dyn RanNode) -> Vec<RanFunction> {
        let flexric = self.flexric_rules();
        self.config
            .models
            .iter()
            .filter(|m| !flexric || FLEXRIC_RAN_FUNCTIONS.contains(&m.ran_function_id()))
            .map(|m| m.ran_function(node))
            .collect()
    }

    fn send_setup(&mut self, node: &dyn RanNode, now: Instant) {
        let transaction = self.transaction();
        let functions = self.functions(node);
        self.announced = functions.iter().map(|f| (f.id, f.clone())).collect();
        let pdu = E2apPdu::E2SetupRequest(e2ap::E2SetupRequest {
            transaction,
            node: self.config.node_id.clone(),
            functions,
            components: vec![e2ap::ComponentConfig {
                interface: crate::asn::e2ap::E2nodeComponentInterfaceType::NG,
                id: e2ap::E2nodeComponentID::E2nodeComponentInterfaceTypeNG(
                    crate::asn::e2ap::E2nodeComponentInterfaceNG {
                        amf_name: crate::asn::e2ap::AMFName("tcran-amf".into()),
                    },
                ),
                request_part: b"tcran NG setup request".to_vec(),
                response_part: b"tcran NG setup response".to_vec(),
            }],
        });
        self.stats.setups_sent += 1;
        self.send(&pdu);
        self.state = AgentState::SetupPending {
            transaction,
            deadline: now + self.config.setup_timeout,
        };
    }

    fn send(&mut self, pdu: &E2apPdu) {
        match e2ap::encode(pdu) {
            Ok(bytes) => {
                self.stats.pdus_sent += 1;
                self.outbox.push_back(bytes);
            }
            // A value out of its ASN.1 range is a bug of the agent or a
            // model; report it instead of sending garbage.
            Err(e) => self
                .events
                .push_back(AgentEvent::DecodeError(format!("internal: {e}"))),
        }
    }

    fn error_indication(&mut self, ind: ErrorIndication) {
        if self.flexric_rules() {
            return;
        }
        self.stats.error_indications_sent += 1;
        self.send(&E2apPdu::ErrorIndication(ind));
    }

    /// Runs the timers due at `now`: E2 Setup retries and report jobs.
    pub fn on_timeout(&mut self, node: &dyn RanNode, now: Instant) {
        match self.state {
            AgentState::SetupPending { deadline, .. } if now >= deadline => {
                self.send_setup(node, now)
            }
            AgentState::SetupBackoff { retry_at } if now >= retry_at => self.send_setup(node, now),
            AgentState::Ready => self.run_jobs(node, now),
            _ => {}
        }
    }

    fn run_jobs(&mut self, node: &dyn RanNode, now: Instant) {
        let standard = !self.flexric_rules();
        for i in 0..self.jobs.len() {
            if self.jobs[i].next_due > now {
                continue;
            }
            let j = &mut self.jobs[i];
            let reports = self.config.models[j.model].indicate(&mut j.job.state, node, now);
            // Next period; a late call skips the missed ones (no burst).
            j.next_due += j.job.period;
            if j.next_due <= now {
                let late = now.saturating_since(j.next_due).as_nanos() / j.job.period.as_nanos();
                self.stats.periods_skipped += late + 1;
                j.next_due += Duration::from_nanos((late + 1) * j.job.period.as_nanos());
            }
            let (request, function, action) = (j.request, j.function, j.action);
            for (header, message) in reports {
                let j = &mut self.jobs[i];
                let sn = j.sn;
                j.sn = j.sn.wrapping_add(1);
                let pdu = E2apPdu::Indication(e2ap::Indication {
                    request,
                    function,
                    action,
                    sn: standard.then_some(sn),
                    kind: e2ap::IndicationType::Report,
                    header,
                    message,
                    call_process_id: None,
                });
                self.stats.indications += 1;
                self.send(&pdu);
            }
        }
    }

    /// Announces changed RAN functions (RIC Service Update, E2AP 8.3.4),
    /// e.g. after DRBs came or went (the E2SM-TCRAN definition lists
    /// them) or a model was added. Not sent under FlexRIC's rules.
    pub fn refresh_functions(&mut self, node: &dyn RanNode) {
        if self.flexric_rules() {
            return;
        }
        self.send_service_update(node, false);
    }

    /// Sends a RIC Service Update with the RAN functions that changed
    /// since the last announcement; with `even_empty`, also when none did
    /// (the answer to a RIC Service Query, which a RIC waits for).
    fn send_service_update(&mut self, node: &dyn RanNode, even_empty: bool) {
        if self.state != AgentState::Ready {
            return;
        }
        let now: BTreeMap<u16, RanFunction> = self
            .functions(node)
            .into_iter()
            .map(|f| (f.id, f))
            .collect();
        let added: Vec<RanFunction> = now
            .values()
            .filter(|f| !self.announced.contains_key(&f.id))
            .cloned()
            .collect();
        let modified: Vec<RanFunction> = now
            .values()
            .filter(|f| self.announced.get(&f.id).is_some_and(|a| a != *f))
            .cloned()
            .collect();
        let deleted: Vec<RanFunctionRevision> = self
            .announced
            .values()
            .filter(|a| !now.contains_key(&a.id))
            .map(|a| RanFunctionRevision {
                id: a.id,
                revision: a.revision,
            })
            .collect();
        if added.is_empty() && modified.is_empty() && deleted.is_empty() && !even_empty {
            return;
        }
        let transaction = self.transaction();
        fn nonempty<T>(v: Vec<T>) -> Option<Vec<T>> {
            (!v.is_empty()).then_some(v)
        }
        let pdu = E2apPdu::ServiceUpdate(e2ap::ServiceUpdate {
            transaction,
            added: nonempty(added),
            modified: nonempty(modified),
            deleted: nonempty(deleted),
        });
        self.announced = now;
        self.update_pending = Some(transaction);
        self.stats.service_updates_sent += 1;
        self.send(&pdu);
    }

    /// Handles one received PDU.
    pub fn handle(&mut self, bytes: &[u8], node: &mut dyn RanNode, now: Instant) {
        self.stats.pdus_received += 1;
        let pdu = match e2ap::decode(bytes) {
            Ok(p) => p,
            Err(e) => {
                self.stats.decode_errors += 1;
                self.events
                    .push_back(AgentEvent::DecodeError(e.to_string()));
                let cause = match e {
                    e2ap::DecodeError::Syntax(_) => {
                        crate::asn::e2ap::CauseProtocol::TRANSFER_SYNTAX_ERROR
                    }
                    e2ap::DecodeError::Unsupported(_) => {
                        crate::asn::e2ap::CauseProtocol::ABSTRACT_SYNTAX_ERROR_IGNORE_AND_NOTIFY
                    }
                    _ => crate::asn::e2ap::CauseProtocol::ABSTRACT_SYNTAX_ERROR_FALSELY_CONSTRUCTED_MESSAGE,
                };
                self.error_indication(ErrorIndication {
                    cause: Some(e2ap::protocol_cause(cause)),
                    ..ErrorIndication::default()
                });
                return;
            }
        };
        match pdu {
            E2apPdu::E2SetupResponse(r) => match self.state {
                AgentState::SetupPending { transaction, .. } if transaction == r.transaction => {
                    self.state = AgentState::Ready;
                    self.stats.setups_done += 1;
                    self.backoff.succeeded();
                    self.events.push_back(AgentEvent::SetupDone);
                }
                _ => self.unexpected("E2 Setup Response"),
            },
            E2apPdu::E2SetupFailure(f) => match self.state {
                AgentState::SetupPending { transaction, .. } if transaction == f.transaction => {
                    self.stats.setup_failures += 1;
                    let retry_at = self
                        .backoff
                        .failed(now, f.time_to_wait.map(backoff::time_to_wait));
                    let retry_in = retry_at.saturating_since(now);
                    self.state = AgentState::SetupBackoff { retry_at };
                    self.events.push_back(AgentEvent::SetupFailed {
                        cause: f.cause,
                        retry_in,
                    });
                }
                _ => self.unexpected("E2 Setup Failure"),
            },
            _ if self.state != AgentState::Ready => self.unexpected(pdu.name()),
            E2apPdu::SubscriptionRequest(s) => self.subscribe(s, node, now),
            E2apPdu::SubscriptionDeleteRequest(d) => {
                let before = self.jobs.len();
                self.jobs
                    .retain(|j| !(j.request == d.request && j.function == d.function));
                if self.jobs.len() < before {
                    self.events.push_back(AgentEvent::Unsubscribed {
                        request: d.request,
                        function: d.function,
                    });
                    self.send(&E2apPdu::SubscriptionDeleteResponse(d));
                } else {
                    self.send(&E2apPdu::SubscriptionDeleteFailure(
                        e2ap::SubscriptionDeleteFailure {
                            request: d.request,
                            function: d.function,
                            cause: e2ap::ric_request_cause(
                                crate::asn::e2ap::CauseRICrequest::REQUEST_ID_UNKNOWN,
                            ),
                            diagnostics: None,
                        },
                    ));
                }
            }
            E2apPdu::ControlRequest(c) => self.control(c, node, now),
            E2apPdu::ErrorIndication(e) => {
                self.stats.error_indications_received += 1;
                self.events.push_back(AgentEvent::ErrorIndication(e));
            }
            E2apPdu::ResetRequest(r) => {
                self.jobs.clear();
                self.stats.resets += 1;
                self.events.push_back(AgentEvent::Reset);
                self.send(&E2apPdu::ResetResponse(e2ap::ResetResponse {
                    transaction: r.transaction,
                    diagnostics: None,
                }));
            }
            E2apPdu::ServiceQuery(_) => {
                // A RIC that queries takes a Service Update (E2AP 8.3.5),
                // and is not FlexRIC (which never queries). Under `Auto`
                // the query ends FlexRIC's rules: E2SM-TCRAN is announced
                // and KPM and RC switch to their standard dialects. Under
                // `Flexric` the functions stay FlexRIC's, but the query is
                // still answered, so the RIC (tcran's xApp SDK) does not
                // wait for an update that would never come.
                if self.config.profile != RicProfile::Flexric {
                    self.queried = true;
                    self.sync_dialects();
                }
                // Announce everything again.
                self.announced.clear();
                self.send_service_update(node, true);
            }
            E2apPdu::ServiceUpdateAcknowledge(a) if self.update_pending == Some(a.transaction) => {
                self.update_pending = None;
            }
            E2apPdu::ServiceUpdateFailure(f) if self.update_pending == Some(f.transaction) => {
                self.update_pending = None;
            }
            E2apPdu::E2RemovalRequest { transaction } => {
                self.send(&E2apPdu::E2RemovalResponse(e2ap::E2RemovalResponse {
                    transaction,
                    diagnostics: None,
                }));
                self.jobs.clear();
                self.state = AgentState::Removed;
                self.events.push_back(AgentEvent::Removed);
            }
            other => self.unexpected(other.name()),
        }
    }

    fn unexpected(&mut self, what: &'static str) {
        self.events.push_back(AgentEvent::Unexpected(what));
        self.error_indication(ErrorIndication {
            cause: Some(e2ap::protocol_cause(
                crate::asn::e2ap::CauseProtocol::MESSAGE_NOT_COMPATIBLE_WITH_RECEIVER_STATE,
            )),
            ..ErrorIndication::default()
        });
    }

    fn model_index(&self, function: u16) -> Option<usize> {
        self.config
            .models
            .iter()
            .position(|m| m.ran_function_id() == function)
    }

    fn subscribe(&mut self, s: e2ap::SubscriptionRequest, node: &dyn RanNode, now: Instant) {
        use crate::asn::e2ap::CauseRICrequest as C;
        let fail = |this: &mut Agent, cause: u8, why: String| {
            let unanswered = this.flexric_rules();
            this.stats.subscription_failures += 1;
            log::warn!(
                "RIC subscription {:?} to RAN function {} refused{}: {why}",
                s.request,
                s.function,
                if unanswered {
                    " (left unanswered: FlexRIC aborts on RIC Subscription Failure)"
                } else {
                    ""
                }
            );
            this.events.push_back(AgentEvent::SubscriptionRefused {
                request: s.request,
                function: s.function,
                why,
                unanswered,
            });
            if unanswered {
                this.stats.subscriptions_unanswered += 1;
                return;
            }
            this.send(&E2apPdu::SubscriptionFailure(e2ap::SubscriptionFailure {
                request: s.request,
                function: s.function,
                cause: e2ap::ric_request_cause(cause),
                diagnostics: None,
            }));
        };
        let Some(m) = self.model_index(s.function) else {
            return fail(
                self,
                C::RAN_FUNCTION_ID_INVALID,
                format!("RAN function {} is not offered", s.function),
            );
        };
        if self
            .jobs
            .iter()
            .any(|j| j.request == s.request && j.function == s.function)
        {
            return fail(
                self,
                C::DUPLICATE_ACTION,
                format!("request {:?} is already subscribed", s.request),
            );
        }
        let mut admitted = Vec::new();
        let mut not_admitted = Vec::new();
        let mut jobs = Vec::new();
        let mut why = Vec::new();
        for a in &s.actions {
            if admitted.contains(&a.id) {
                not_admitted.push((a.id, e2ap::ric_request_cause(C::DUPLICATE_ACTION)));
                continue;
            }
            match self.config.models[m].subscribe(&s.event_trigger, a, node) {
                Ok(job) => {
                    admitted.push(a.id);
                    jobs.push(ActiveJob {
                        model: m,
                        request: s.request,
                        function: s.function,
                        action: a.id,
                        next_due: now + job.period,
                        job,
                        sn: 0,
                    });
                }
                Err(r) => {
                    why.push(format!("action {}: {}", a.id, r.message));
                    not_admitted.push((a.id, r.cause));
                }
            }
        }
        if admitted.is_empty() {
            let cause = not_admitted
                .first()
                .and_then(|(_, c)| match c {
                    e2ap::Cause::RicRequest(r) => Some(r.0),
                    _ => None,
                })
                .unwrap_or(C::ACTION_NOT_SUPPORTED);
            return fail(self, cause, why.join("; "));
        }
        self.stats.subscriptions += 1;
        self.events.push_back(AgentEvent::Subscribed {
            request: s.request,
            function: s.function,
            actions: admitted.len(),
        });
        self.jobs.extend(jobs);
        self.jobs.sort_by_key(|j| (j.request, j.function, j.action));
        self.send(&E2apPdu::SubscriptionResponse(e2ap::SubscriptionResponse {
            request: s.request,
            function: s.function,
            admitted,
            not_admitted: (!not_admitted.is_empty()).then_some(not_admitted),
        }));
    }

    fn control(&mut self, c: e2ap::ControlRequest, node: &mut dyn RanNode, now: Instant) {
        use crate::asn::e2ap::CauseRICrequest as C;
        let outcome = match self.model_index(c.function) {
            Some(m) => self.config.models[m].control(&c.header, &c.message, node, now),
            None => ControlOutcome::Refused {
                refusal: crate::sm::Refusal::ric_request(
                    C::RAN_FUNCTION_ID_INVALID,
                    format!("RAN function {} is not offered", c.function),
                ),
                outcome: None,
            },
        };
        let ack = |outcome| {
            E2apPdu::ControlAcknowledge(e2ap::ControlAcknowledge {
                request: c.request,
                function: c.function,
                call_process_id: c.call_process_id.clone(),
                outcome,
            })
        };
        match outcome {
            ControlOutcome::Done { outcome } => {
                self.stats.controls_applied += 1;
                self.events.push_back(AgentEvent::ControlApplied {
                    request: c.request,
                    function: c.function,
                });
                if c.ack_request != Some(false) {
                    self.send(&ack(outcome));
                }
            }
            ControlOutcome::Read { outcome } => {
                self.stats.controls_read += 1;
                self.events.push_back(AgentEvent::ControlRead {
                    request: c.request,
                    function: c.function,
                });
                if c.ack_request != Some(false) {
                    self.send(&ack(outcome));
                }
            }
            ControlOutcome::Refused { refusal, outcome } => {
                self.stats.controls_refused += 1;
                let flexric = self.flexric_rules();
                if flexric {
                    self.stats.controls_refused_acknowledged += 1;
                }
                log::warn!(
                    "RIC control {:?} for RAN function {} refused: {}",
                    c.request,
                    c.function,
                    refusal.message
                );
                self.events.push_back(AgentEvent::ControlRefused {
                    request: c.request,
                    function: c.function,
                    why: refusal.message.clone(),
                    acknowledged: flexric,
                });
                if flexric {
                    // FlexRIC asserts on RIC Control Failure.
                    if c.ack_request != Some(false) {
                        self.send(&ack(outcome));
                    }
                } else {
                    self.send(&E2apPdu::ControlFailure(e2ap::ControlFailure {
                        request: c.request,
                        function: c.function,
                        call_process_id: c.call_process_id.clone(),
                        cause: refusal.cause,
                        outcome,
                    }));
                }
            }
        }
    }
}
