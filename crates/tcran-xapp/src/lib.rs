//! # tcran-xapp: write TC xApps against tcran (or any E2SM-TCRAN node)
//!
//! The other end of `tcran-e2`: an E2 termination (the RIC side of E2AP
//! v02.03) that accepts one or many E2 nodes, keeps track of them, their
//! RAN functions and DRBs, and gives xApps a small typed API. It reuses
//! `tcran-e2`'s codec (hampi APER, generated once from the ASN.1 there),
//! its service-model encoders and its transports: there is one copy of
//! the ASN.1 in the workspace.
//!
//! ```text
//!  E2 nodes (tcran run --realtime --e2, tcran-e2 agents, FlexRIC-style nodes)
//!      | framed TCP / TLS with client certificates
//!  server::Xapp  --- one task per association ---> termination::Termination (sans-IO)
//!      | typed API: nodes(), drbs(), subscribe_tc/kpm(), control(), deploy(), pipeline()
//!  your xApp  |  adapter::run(any tcran_control Controller)  |  xapps::* (the paper's xApps)
//! ```
//!
//! | module | what |
//! |---|---|
//! | [`termination`] | the RIC side of one association, sans-IO |
//! | [`server`] | listeners, registry, async API ([`Xapp`]) |
//! | [`blocking`] | the same API for programs without async code |
//! | [`report`] | E2SM-TCRAN indications as tcran's statistics types |
//! | [`adapter`] | runs a simulator `Controller` over E2, unchanged |
//! | [`xapps`] | the TC-RAN paper's xApps and the L4S xApp; the monitor's view |
//! | [`fuzzing`] | the fuzz target's body (also run by `cargo test`) |
//!
//! Tutorial and reference: docs/xapps.md.

pub mod adapter;
pub mod blocking;
pub mod fuzzing;
pub mod report;
pub mod server;
pub mod termination;
pub mod xapps;

pub use report::{DrbStatus, TcIndication};
pub use server::{
    ControlOutcome, KpmQuery, Listen, ListenTransport, NodeEvent, NodeId, NodeInfo, Subscription,
    Xapp, XappConfig, XappError,
};
pub use tcran_control::{Direction, DrbKey};
pub use tcran_e2::sm::e2sm_tcran::{Metric, Trigger};
pub use tcran_e2::sm::kpm::{KpmReport, Value as KpmValue};
pub use termination::CloseCause;
