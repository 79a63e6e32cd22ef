//! The RIC side of one E2 association (E2AP v02.03 clause 8), sans-IO.
//!
//! [`Termination`] is the mirror image of `tcran_e2::Agent`: the transport
//! hands it every received PDU with [`Termination::handle`] and sends what
//! [`Termination::poll_transmit`] returns; the application asks for
//! subscriptions and controls and reads [`Event`]s. It never touches a
//! socket or a clock, and it never panics on what a node sends.
//!
//! Procedures:
//! - E2 Setup (8.3.1): the first PDU of the node must be an E2 Setup
//!   Request; every RAN function is accepted and every component
//!   configuration acknowledged (the SDK offers whatever the node has),
//!   unless the application refuses the node ([`Termination::handle_admitting`]:
//!   E2 Setup Failure with a cause and a TimeToWait, then the association
//!   closes).
//! - RIC Service Query (8.3.5), sent with the E2 Setup Response: a tcran
//!   node holds back the models a FlexRIC RIC cannot take (E2SM-TCRAN)
//!   until a RIC asks, and answers the query with a RIC Service Update
//!   announcing them (`tcran_e2::agent`, `RicProfile::Auto`). The
//!   application learns of the node ([`Event::SetupDone`]) once that
//!   update came, with every function, or when the driver says the node
//!   will not answer ([`Termination::query_unanswered`], a node that does
//!   not implement the procedure).
//! - RIC Subscription / Subscription Delete (8.2.1, 8.2.2) on request,
//!   answers matched by RIC request id.
//! - RIC Indication (8.2.3): passed on when it belongs to a live
//!   subscription; one for a deleted or unknown request is counted
//!   (an indication may cross a Subscription Delete on the wire).
//! - RIC Control (8.2.4): acknowledge or failure matched by request id.
//! - RIC Service Update (8.3.4): acknowledged, the function list updated.
//! - Reset (8.3.2) from the node: answered; its subscriptions end.
//! - Error Indication (8.3.3): reported.
//!
//! Misbehaviour: a PDU that does not decode, a first PDU that is not E2
//! Setup, a second E2 Setup, or an answer to nothing we asked are
//! protocol errors: the association is closed with a [`CloseCause`]
//! (the SDK does not negotiate with a node that breaks E2AP; it drops the
//! association and the node may connect again). The termination then
//! refuses everything and sends nothing more.

use std::collections::{BTreeMap, VecDeque};
use tcran_e2::e2ap::{
    self, Action, E2apPdu, GlobalE2node_ID, RanFunction, RanFunctionRevision, RicRequestId,
};

/// The RIC's requestor id in every RIC request id (E2AP 9.2.7).
pub const REQUESTOR: u16 = 1021;

/// Why an association was closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CloseCause {
    /// Bytes that are not an E2AP PDU tcran understands.
    Undecodable(String),
    /// A valid PDU that breaks the procedure (wrong state, no such request).
    Protocol(String),
    /// The transport failed or the node closed it.
    Transport(String),
    /// Refused at connection time (TLS authentication).
    Authentication(String),
    /// E2 Setup refused by the application (E2 Setup Failure sent).
    SetupRefused(String),
    /// Another association of the same node (GlobalE2node-ID) took its
    /// place: the node reconnected.
    Replaced { by: u64 },
    /// The application closed it.
    Local,
}

impl std::fmt::Display for CloseCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CloseCause::Undecodable(e) => write!(f, "undecodable PDU: {e}"),
            CloseCause::Protocol(e) => write!(f, "protocol error: {e}"),
            CloseCause::Transport(e) => write!(f, "transport: {e}"),
            CloseCause::Authentication(e) => write!(f, "authentication failed: {e}"),
            CloseCause::SetupRefused(e) => write!(f, "E2 Setup refused: {e}"),
            CloseCause::Replaced { by } => {
                write!(f, "replaced by association {by} of the same node")
            }
            CloseCause::Local => write!(f, "closed by the xApp"),
        }
    }
}

/// Where the association is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// Waiting for the node's E2 Setup Request.
    AwaitingSetup,
    /// E2 Setup done, RIC Service Query sent: waiting for the node's RIC
    /// Service Update (or [`Termination::query_unanswered`]).
    Querying { transaction: u8 },
    /// E2 Setup done, the node's functions known.
    Ready,
    /// Closed; nothing more is sent or accepted.
    Closed(CloseCause),
}

/// What the node answered to a subscription.
#[derive(Debug, Clone, PartialEq)]
pub enum SubscriptionAnswer {
    /// These actions were admitted (others refused, with a cause each).
    Admitted {
        admitted: Vec<u8>,
        not_admitted: Vec<(u8, String)>,
    },
    Refused(String),
}

/// What the node answered to a control.
#[derive(Debug, Clone, PartialEq)]
pub enum ControlAnswer {
    /// RIC Control Acknowledge with the model's outcome, if any.
    Acknowledged { outcome: Option<Vec<u8>> },
    /// RIC Control Failure: the cause and the model's outcome, if any.
    Failed {
        cause: String,
        outcome: Option<Vec<u8>>,
    },
}

/// Something for the application.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// E2 Setup done: the node and its RAN functions.
    SetupDone {
        node: GlobalE2node_ID,
        functions: Vec<RanFunction>,
    },
    /// The node changed its RAN functions (RIC Service Update).
    FunctionsChanged {
        functions: Vec<RanFunction>,
    },
    Subscription {
        request: RicRequestId,
        answer: SubscriptionAnswer,
    },
    SubscriptionDeleted {
        request: RicRequestId,
    },
    Indication(e2ap::Indication),
    Control {
        request: RicRequestId,
        answer: ControlAnswer,
    },
    /// The node reset the association: every subscription ended.
    Reset,
    ErrorIndication(e2ap::ErrorIndication),
    Closed(CloseCause),
}

/// Counters of one association.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    pub pdus_received: u64,
    pub pdus_sent: u64,
    pub indications: u64,
    /// Indications of no live subscription (ignored).
    pub stray_indications: u64,
    pub controls_sent: u64,
    pub controls_acknowledged: u64,
    pub controls_failed: u64,
    pub error_indications: u64,
}

/// Why a request could not be sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    #[error("the node has not completed E2 Setup")]
    NotReady,
    #[error("the association is closed ({0})")]
    Closed(String),
    #[error("the node offers no RAN function {0}")]
    NoSuchFunction(u16),
    #[error("cannot encode the request: {0}")]
    Encode(String),
}

/// Why the application refuses a node's E2 Setup: the E2 Setup Failure's
/// cause and TimeToWait, and a reason for the logs.
#[derive(Debug, Clone, PartialEq)]
pub struct SetupRefusal {
    pub cause: e2ap::Cause,
    /// TimeToWait index (E2AP 9.2.24: 0 = 1 s ... 5 = 60 s).
    pub time_to_wait: Option<u8>,
    pub why: String,
}

/// The RIC side of one association (see the module docs).
#[derive(Debug)]
pub struct Termination {
    state: State,
    ric_id: e2ap::GlobalRicId,
    node: Option<GlobalE2node_ID>,
    functions: BTreeMap<u16, RanFunction>,
    /// Live (or pending) subscriptions: request -> function.
    subscriptions: BTreeMap<RicRequestId, u16>,
    pending_deletes: BTreeMap<RicRequestId, u16>,
    pending_controls: BTreeMap<RicRequestId, u16>,
    next_instance: u16,
    next_transaction: u8,
    outbox: VecDeque<Vec<u8>>,
    events: VecDeque<Event>,
    stats: Stats,
}

impl Termination {
    /// A new association of the RIC `ric_id`, waiting for E2 Setup.
    pub fn new(ric_id: e2ap::GlobalRicId) -> Termination {
        Termination {
            state: State::AwaitingSetup,
            ric_id,
            node: None,
            functions: BTreeMap::new(),
            subscriptions: BTreeMap::new(),
            pending_deletes: BTreeMap::new(),
            pending_controls: BTreeMap::new(),
            next_instance: 1,
            next_transaction: 0,
            outbox: VecDeque::new(),
            events: VecDeque::new(),
            stats: Stats::default(),
        }
    }

    pub fn state(&self) -> &State {
        &self.state
    }
    pub fn stats(&self) -> Stats {
        self.stats
    }
    /// The node's GlobalE2node-ID, once E2 Setup is done.
    pub fn node(&self) -> Option<&GlobalE2node_ID> {
        self.node.as_ref()
    }
    pub fn functions(&self) -> impl Iterator<Item = &RanFunction> {
        self.functions.values()
    }
    pub fn function(&self, id: u16) -> Option<&RanFunction> {
        self.functions.get(&id)
    }

    /// Next PDU to send.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.outbox.pop_front()
    }
    /// Next event for the application.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// The transport is gone (or the application drops the node).
    pub fn close(&mut self, cause: CloseCause) {
        if matches!(self.state, State::Closed(_)) {
            return;
        }
        self.outbox.clear();
        self.subscriptions.clear();
        self.pending_controls.clear();
        self.pending_deletes.clear();
        self.state = State::Closed(cause.clone());
        self.events.push_back(Event::Closed(cause));
    }

    fn send(&mut self, pdu: &E2apPdu) -> Result<(), RequestError> {
        let bytes = e2ap::encode(pdu).map_err(|e| RequestError::Encode(e.to_string()))?;
        self.stats.pdus_sent += 1;
        self.outbox.push_back(bytes);
        Ok(())
    }

    fn ready(&self, function: u16) -> Result<(), RequestError> {
        match &self.state {
            State::Ready if self.functions.contains_key(&function) => Ok(()),
            State::Ready => Err(RequestError::NoSuchFunction(function)),
            State::AwaitingSetup | State::Querying { .. } => Err(RequestError::NotReady),
            State::Closed(c) => Err(RequestError::Closed(c.to_string())),
        }
    }

    /// A request id no outstanding request uses.
    fn request_id(&mut self) -> RicRequestId {
        loop {
            let r = RicRequestId {
                requestor: REQUESTOR,
                instance: self.next_instance,
            };
            self.next_instance = self.next_instance.wrapping_add(1).max(1);
            if !self.subscriptions.contains_key(&r)
                && !self.pending_controls.contains_key(&r)
                && !self.pending_deletes.contains_key(&r)
            {
                return r;
            }
        }
    }

    /// Sends a RIC Subscription Request; the answer comes as
    /// [`Event::Subscription`] with the returned id.
    pub fn subscribe(
        &mut self,
        function: u16,
        event_trigger: Vec<u8>,
        actions: Vec<Action>,
    ) -> Result<RicRequestId, RequestError> {
        self.ready(function)?;
        let request = self.request_id();
        self.send(&E2apPdu::SubscriptionRequest(e2ap::SubscriptionRequest {
            request,
            function,
            event_trigger,
            actions,
        }))?;
        self.subscriptions.insert(request, function);
        Ok(request)
    }

    /// Sends a RIC Subscription Delete Request.
    pub fn unsubscribe(&mut self, request: RicRequestId) -> Result<(), RequestError> {
        let Some(function) = self.subscriptions.remove(&request) else {
            return Ok(());
        };
        self.ready(function)?;
        self.pending_deletes.insert(request, function);
        self.send(&E2apPdu::SubscriptionDeleteRequest(
            e2ap::SubscriptionDelete { request, function },
        ))
    }

    /// Sends a RIC Control Request asking for an acknowledgement; the
    /// answer comes as [`Event::Control`] with the returned id.
    pub fn control(
        &mut self,
        function: u16,
        header: Vec<u8>,
        message: Vec<u8>,
    ) -> Result<RicRequestId, RequestError> {
        self.ready(function)?;
        let request = self.request_id();
        self.send(&E2apPdu::ControlRequest(e2ap::ControlRequest {
            request,
            function,
            call_process_id: None,
            header,
            message,
            ack_request: Some(true),
        }))?;
        self.stats.controls_sent += 1;
        self.pending_controls.insert(request, function);
        Ok(request)
    }

    fn protocol_error(&mut self, what: String) {
        self.close(CloseCause::Protocol(what));
    }

    /// Handles one received PDU.
    pub fn handle(&mut self, bytes: &[u8]) {
        self.handle_admitting(bytes, &mut |_| Ok(()))
    }

    /// [`Termination::handle`], with `admit` deciding whether an E2 Setup
    /// Request's node is accepted: a refusal is answered with E2 Setup
    /// Failure and closes the association ([`CloseCause::SetupRefused`]).
    pub fn handle_admitting(
        &mut self,
        bytes: &[u8],
        admit: &mut dyn FnMut(&GlobalE2node_ID) -> Result<(), SetupRefusal>,
    ) {
        if matches!(self.state, State::Closed(_)) {
            return;
        }
        self.stats.pdus_received += 1;
        let pdu = match e2ap::decode(bytes) {
            Ok(p) => p,
            Err(e) => return self.close(CloseCause::Undecodable(e.to_string())),
        };
        if self.state == State::AwaitingSetup {
            return match pdu {
                E2apPdu::E2SetupRequest(r) => match admit(&r.node) {
                    Ok(()) => self.setup(r),
                    Err(refusal) => self.refuse_setup(r.transaction, refusal),
                },
                other => self.protocol_error(format!(
                    "{} before E2 Setup (E2AP 8.3.1: E2 Setup comes first)",
                    other.name()
                )),
            };
        }
        if matches!(self.state, State::Querying { .. }) {
            match pdu {
                E2apPdu::ServiceUpdate(u) => {
                    // The update answers the query whatever its
                    // transaction (the node picks it, E2AP 8.3.4).
                    self.service_update(u, false);
                    return self.setup_done();
                }
                // A node that does not implement the query may say so.
                E2apPdu::ErrorIndication(e) => {
                    self.stats.error_indications += 1;
                    self.events.push_back(Event::ErrorIndication(e));
                    return self.setup_done();
                }
                _ => {}
            }
        }
        match pdu {
            E2apPdu::Indication(ind) => {
                if self.subscriptions.get(&ind.request) == Some(&ind.function) {
                    self.stats.indications += 1;
                    self.events.push_back(Event::Indication(ind));
                } else {
                    self.stats.stray_indications += 1;
                }
            }
            E2apPdu::SubscriptionResponse(r) => {
                if self.subscriptions.get(&r.request) != Some(&r.function) {
                    return self.protocol_error(format!(
                        "RIC Subscription Response for request {:?} that is not pending",
                        r.request
                    ));
                }
                let not_admitted = r
                    .not_admitted
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(a, c)| (a, format!("{c:?}")))
                    .collect();
                self.events.push_back(Event::Subscription {
                    request: r.request,
                    answer: SubscriptionAnswer::Admitted {
                        admitted: r.admitted,
                        not_admitted,
                    },
                });
            }
            E2apPdu::SubscriptionFailure(f) => {
                if self.subscriptions.remove(&f.request).is_none() {
                    return self.protocol_error(format!(
                        "RIC Subscription Failure for request {:?} that is not pending",
                        f.request
                    ));
                }
                self.events.push_back(Event::Subscription {
                    request: f.request,
                    answer: SubscriptionAnswer::Refused(format!("{:?}", f.cause)),
                });
            }
            E2apPdu::SubscriptionDeleteResponse(d) => {
                if self.pending_deletes.remove(&d.request).is_some() {
                    self.events
                        .push_back(Event::SubscriptionDeleted { request: d.request });
                }
            }
            E2apPdu::SubscriptionDeleteFailure(d) => {
                // Already gone on the node: the same end state.
                if self.pending_deletes.remove(&d.request).is_some() {
                    self.events
                        .push_back(Event::SubscriptionDeleted { request: d.request });
                }
            }
            E2apPdu::ControlAcknowledge(a) => {
                if self.pending_controls.remove(&a.request).is_none() {
                    return self.protocol_error(format!(
                        "RIC Control Acknowledge for request {:?} that is not pending",
                        a.request
                    ));
                }
                self.stats.controls_acknowledged += 1;
                self.events.push_back(Event::Control {
                    request: a.request,
                    answer: ControlAnswer::Acknowledged { outcome: a.outcome },
                });
            }
            E2apPdu::ControlFailure(f) => {
                if self.pending_controls.remove(&f.request).is_none() {
                    return self.protocol_error(format!(
                        "RIC Control Failure for request {:?} that is not pending",
                        f.request
                    ));
                }
                self.stats.controls_failed += 1;
                self.events.push_back(Event::Control {
                    request: f.request,
                    answer: ControlAnswer::Failed {
                        cause: format!("{:?}", f.cause),
                        outcome: f.outcome,
                    },
                });
            }
            E2apPdu::ServiceUpdate(u) => self.service_update(u, true),
            E2apPdu::ResetRequest(r) => {
                self.subscriptions.clear();
                self.pending_deletes.clear();
                self.events.push_back(Event::Reset);
                let _ = self.send(&E2apPdu::ResetResponse(e2ap::ResetResponse {
                    transaction: r.transaction,
                    diagnostics: None,
                }));
            }
            E2apPdu::ErrorIndication(e) => {
                self.stats.error_indications += 1;
                self.events.push_back(Event::ErrorIndication(e));
            }
            E2apPdu::E2SetupRequest(_) => {
                self.protocol_error("a second E2 Setup Request on one association".into())
            }
            other => self.protocol_error(format!("{} is not sent by an E2 node", other.name())),
        }
    }

    fn refuse_setup(&mut self, transaction: u8, refusal: SetupRefusal) {
        let failure = E2apPdu::E2SetupFailure(e2ap::E2SetupFailure {
            transaction,
            cause: refusal.cause,
            time_to_wait: refusal.time_to_wait,
            diagnostics: None,
        });
        if let Err(e) = self.send(&failure) {
            return self.protocol_error(format!("E2 Setup Failure: {e}"));
        }
        // Closed with the failure still in the outbox: the transport
        // sends it, then closes.
        let cause = CloseCause::SetupRefused(refusal.why);
        self.state = State::Closed(cause.clone());
        self.events.push_back(Event::Closed(cause));
    }

    fn setup(&mut self, r: e2ap::E2SetupRequest) {
        let response = E2apPdu::E2SetupResponse(r.accept(self.ric_id));
        if let Err(e) = self.send(&response) {
            return self.protocol_error(format!("E2 Setup Request: {e}"));
        }
        self.functions = r.functions.iter().map(|f| (f.id, f.clone())).collect();
        self.node = Some(r.node);
        let transaction = self.transaction();
        let query = E2apPdu::ServiceQuery(e2ap::ServiceQuery {
            transaction,
            accepted: Some(
                r.functions
                    .iter()
                    .map(|f| RanFunctionRevision {
                        id: f.id,
                        revision: f.revision,
                    })
                    .collect(),
            ),
        });
        if let Err(e) = self.send(&query) {
            return self.protocol_error(format!("RIC Service Query: {e}"));
        }
        self.state = State::Querying { transaction };
    }

    /// The node did not answer the RIC Service Query in time: it is ready
    /// with the functions of its E2 Setup (no-op in any other state).
    pub fn query_unanswered(&mut self) {
        if matches!(self.state, State::Querying { .. }) {
            self.setup_done();
        }
    }

    fn setup_done(&mut self) {
        let Some(node) = self.node.clone() else {
            return;
        };
        self.state = State::Ready;
        self.events.push_back(Event::SetupDone {
            node,
            functions: self.functions.values().cloned().collect(),
        });
    }

    /// Applies a RIC Service Update and acknowledges it; `notify` tells the
    /// application (not for the answer to the query, which completes setup).
    fn service_update(&mut self, u: e2ap::ServiceUpdate, notify: bool) {
        let mut accepted = Vec::new();
        for f in u
            .added
            .into_iter()
            .flatten()
            .chain(u.modified.into_iter().flatten())
        {
            accepted.push(RanFunctionRevision {
                id: f.id,
                revision: f.revision,
            });
            self.functions.insert(f.id, f);
        }
        for d in u.deleted.into_iter().flatten() {
            self.functions.remove(&d.id);
            // Subscriptions of a deleted function end with it.
            self.subscriptions.retain(|_, f| *f != d.id);
        }
        let _ = self.send(&E2apPdu::ServiceUpdateAcknowledge(
            e2ap::ServiceUpdateAcknowledge {
                transaction: u.transaction,
                accepted: (!accepted.is_empty()).then_some(accepted),
                rejected: None,
            },
        ));
        if notify {
            self.events.push_back(Event::FunctionsChanged {
                functions: self.functions.values().cloned().collect(),
            });
        }
    }

    /// A transaction id for RIC-initiated global procedures.
    pub fn transaction(&mut self) -> u8 {
        let t = self.next_transaction;
        self.next_transaction = self.next_transaction.wrapping_add(1);
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ric() -> e2ap::GlobalRicId {
        e2ap::GlobalRicId {
            plmn: [0x00, 0xf1, 0x10],
            ric_id: 1,
        }
    }

    fn setup_request() -> Vec<u8> {
        crate::fuzzing::setup_request_of(
            7,
            vec![RanFunction {
                id: 246,
                definition: vec![1, 2, 3],
                revision: 1,
                oid: "tcran.e2sm-tcran.1".into(),
            }],
        )
    }

    #[test]
    fn setup_is_answered_then_the_functions_are_queried() {
        let mut t = Termination::new(ric());
        t.handle(&setup_request());
        assert!(matches!(t.state(), State::Querying { .. }));
        let E2apPdu::E2SetupResponse(r) = e2ap::decode(&t.poll_transmit().unwrap()).unwrap() else {
            panic!("a setup response")
        };
        assert_eq!(r.transaction, 1);
        assert_eq!(r.accepted.unwrap()[0].id, 246);
        let E2apPdu::ServiceQuery(q) = e2ap::decode(&t.poll_transmit().unwrap()).unwrap() else {
            panic!("a service query")
        };
        assert_eq!(q.accepted.unwrap()[0].id, 246);
        // Not ready before the node answered: requests wait.
        assert!(t.poll_event().is_none());
        assert_eq!(
            t.subscribe(246, vec![], vec![]),
            Err(RequestError::NotReady)
        );
        // The node's answer adds a function; setup is done with both.
        let update = e2ap::encode(&E2apPdu::ServiceUpdate(e2ap::ServiceUpdate {
            transaction: 0,
            added: Some(vec![RanFunction {
                id: 2,
                definition: vec![4],
                revision: 1,
                oid: "kpm".into(),
            }]),
            modified: None,
            deleted: None,
        }))
        .unwrap();
        t.handle(&update);
        assert!(matches!(
            e2ap::decode(&t.poll_transmit().unwrap()).unwrap(),
            E2apPdu::ServiceUpdateAcknowledge(_)
        ));
        let Some(Event::SetupDone { functions, .. }) = t.poll_event() else {
            panic!("setup done")
        };
        assert_eq!(functions.iter().map(|f| f.id).collect::<Vec<_>>(), [2, 246]);
        assert_eq!(t.state(), &State::Ready);
        assert_eq!(
            e2ap::node_id_string(t.node().unwrap()),
            "gnb:00f110:7".to_string()
        );
    }

    #[test]
    fn a_node_that_does_not_answer_the_query_is_ready_with_its_setup_functions() {
        let mut t = Termination::new(ric());
        t.handle(&setup_request());
        t.query_unanswered();
        assert_eq!(t.state(), &State::Ready);
        let Some(Event::SetupDone { functions, .. }) = t.poll_event() else {
            panic!("setup done")
        };
        assert_eq!(functions.len(), 1);
    }

    #[test]
    fn garbage_closes_with_a_cause_and_nothing_more_is_sent() {
        let mut t = Termination::new(ric());
        t.handle(&setup_request());
        t.query_unanswered();
        t.poll_transmit();
        t.handle(&[0xff, 0x00, 0x13, 0x37]);
        assert!(matches!(
            t.state(),
            State::Closed(CloseCause::Undecodable(_))
        ));
        assert!(t.poll_transmit().is_none());
        assert_eq!(
            t.subscribe(246, vec![], vec![]),
            Err(RequestError::Closed(match t.state() {
                State::Closed(c) => c.to_string(),
                _ => unreachable!(),
            }))
        );
    }

    #[test]
    fn anything_before_setup_is_a_protocol_error() {
        let mut t = Termination::new(ric());
        let pdu = e2ap::encode(&E2apPdu::ErrorIndication(Default::default())).unwrap();
        t.handle(&pdu);
        assert!(matches!(t.state(), State::Closed(CloseCause::Protocol(_))));
    }

    #[test]
    fn an_answer_to_nothing_closes_the_association() {
        let mut t = Termination::new(ric());
        t.handle(&setup_request());
        t.query_unanswered();
        let ack = e2ap::encode(&E2apPdu::ControlAcknowledge(e2ap::ControlAcknowledge {
            request: RicRequestId {
                requestor: REQUESTOR,
                instance: 99,
            },
            function: 246,
            call_process_id: None,
            outcome: None,
        }))
        .unwrap();
        t.handle(&ack);
        assert!(matches!(t.state(), State::Closed(CloseCause::Protocol(_))));
    }

    #[test]
    fn control_acknowledge_is_matched_to_its_request() {
        let mut t = Termination::new(ric());
        t.handle(&setup_request());
        t.query_unanswered();
        let id = t.control(246, vec![1], vec![2]).unwrap();
        assert_eq!(
            t.control(300, vec![], vec![]),
            Err(RequestError::NoSuchFunction(300))
        );
        let ack = e2ap::encode(&E2apPdu::ControlAcknowledge(e2ap::ControlAcknowledge {
            request: id,
            function: 246,
            call_process_id: None,
            outcome: Some(vec![9]),
        }))
        .unwrap();
        t.handle(&ack);
        let ev: Vec<Event> = std::iter::from_fn(|| t.poll_event()).collect();
        assert!(ev.contains(&Event::Control {
            request: id,
            answer: ControlAnswer::Acknowledged {
                outcome: Some(vec![9])
            }
        }));
    }
}
