//! The blocking facade: the same API for programs without async code. It
//! owns a small tokio runtime (two worker threads) on which the
//! termination runs; each call blocks the calling thread until its answer.

use crate::report::TcIndication;
use crate::server::{
    self, ControlOutcome, KpmQuery, NodeEvent, NodeId, NodeInfo, XappConfig, XappError,
};
use std::sync::Arc;
use std::time::Duration;
use tcran_control::DrbKey;
use tcran_e2::sm::e2sm_tcran::Trigger;
use tcran_e2::sm::kpm::KpmReport;
use tcran_tc::{Change, PipelineConfig};

/// A blocking [`server::Xapp`].
#[derive(Debug, Clone)]
pub struct Xapp {
    rt: Arc<tokio::runtime::Runtime>,
    inner: server::Xapp,
}

/// A blocking [`server::Subscription`].
#[derive(Debug)]
pub struct Subscription<T> {
    rt: Arc<tokio::runtime::Runtime>,
    inner: server::Subscription<T>,
}

impl<T> Subscription<T> {
    /// The next indication, waiting at most `timeout`; `None` on timeout
    /// or once the node is gone.
    pub fn recv_timeout(&mut self, timeout: Duration) -> Option<T> {
        let inner = &mut self.inner;
        self.rt.block_on(async {
            tokio::time::timeout(timeout, inner.recv())
                .await
                .ok()
                .flatten()
        })
    }
    /// The next indication; `None` once the node is gone.
    pub fn recv(&mut self) -> Option<T> {
        let inner = &mut self.inner;
        self.rt.block_on(inner.recv())
    }
    pub fn node(&self) -> NodeId {
        self.inner.node
    }
}

impl Xapp {
    /// Starts the termination on its own runtime.
    pub fn start(config: XappConfig) -> Result<Xapp, XappError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("tcran-xapp")
            .enable_all()
            .build()
            .map_err(|e| XappError::Transport(format!("cannot start the runtime: {e}")))?;
        let inner = rt.block_on(server::Xapp::start(config))?;
        Ok(Xapp {
            rt: Arc::new(rt),
            inner,
        })
    }

    /// The async handle, for code that mixes both.
    pub fn handle(&self) -> &server::Xapp {
        &self.inner
    }

    pub fn local_addrs(&self) -> Vec<std::net::SocketAddr> {
        self.inner.local_addrs().to_vec()
    }
    pub fn nodes(&self) -> Vec<NodeInfo> {
        self.inner.nodes()
    }
    pub fn drbs(&self, node: NodeId) -> Result<Vec<DrbKey>, XappError> {
        self.inner.drbs(node)
    }
    /// Node events from now on (read with `try_recv` or `blocking_recv`).
    pub fn events(&self) -> tokio::sync::broadcast::Receiver<NodeEvent> {
        self.inner.events()
    }
    pub fn wait_for_nodes(&self, n: usize, timeout: Duration) -> Result<Vec<NodeInfo>, XappError> {
        self.rt.block_on(self.inner.wait_for_nodes(n, timeout))
    }
    pub fn subscribe_tc(
        &self,
        node: NodeId,
        trigger: Trigger,
        drbs: &[DrbKey],
    ) -> Result<Subscription<TcIndication>, XappError> {
        let inner = self
            .rt
            .block_on(self.inner.subscribe_tc(node, trigger, drbs))?;
        Ok(Subscription {
            rt: self.rt.clone(),
            inner,
        })
    }
    pub fn subscribe_kpm(
        &self,
        node: NodeId,
        query: &KpmQuery,
    ) -> Result<Subscription<KpmReport>, XappError> {
        let inner = self.rt.block_on(self.inner.subscribe_kpm(node, query))?;
        Ok(Subscription {
            rt: self.rt.clone(),
            inner,
        })
    }
    pub fn query_kpm(&self, node: NodeId, query: &KpmQuery) -> Result<KpmReport, XappError> {
        self.rt.block_on(self.inner.query_kpm(node, query))
    }
    pub fn control(
        &self,
        node: NodeId,
        drb: DrbKey,
        change: &Change,
    ) -> Result<ControlOutcome, XappError> {
        self.rt.block_on(self.inner.control(node, drb, change))
    }
    pub fn deploy(
        &self,
        node: NodeId,
        drb: DrbKey,
        pipeline: PipelineConfig,
    ) -> Result<ControlOutcome, XappError> {
        self.rt.block_on(self.inner.deploy(node, drb, pipeline))
    }
    pub fn pipeline(&self, node: NodeId, drb: DrbKey) -> Result<PipelineConfig, XappError> {
        self.rt.block_on(self.inner.pipeline(node, drb))
    }
    pub fn disconnect(&self, node: NodeId) {
        self.rt.block_on(self.inner.disconnect(node))
    }
    pub fn shutdown(&self) {
        self.inner.shutdown()
    }
}
