//! Plug-in stages: a classifier, queue, scheduler or pacer whose code lives
//! outside tcran (TC-RAN sec. IV-C: "the classifier, queue, scheduler and
//! pacer stages are designed as shared objects with a common interface").
//!
//! A config names one with `kind = "plugin"`, wherever a built-in kind
//! could stand:
//!
//! ```toml
//! scheduler = { kind = "plugin", path = "./libprio.so", symbol = "prio_ops", params = "bands=3" }
//! ```
//!
//! This crate loads no code and stays free of FFI: it hands the
//! [`PluginConfig`] to a [`PluginResolver`] that the embedding application
//! gives to [`crate::PipelineConfig::build_with_plugins`]. The pipeline keeps
//! that resolver, so a live [`crate::Control`] (e.g. `set_scheduler`) deploys
//! a plug-in exactly like a built-in kind. Without a resolver a plug-in kind
//! is a config error naming the field. The C library `tcran-capi` is the
//! resolver for C plug-ins (ops tables registered from C or found with
//! `dlopen`/`dlsym`).
//!
//! A resolved plug-in is a `Custom(Box<dyn ...>)` variant of the stage's
//! `Any*` enum, so the data path is the same as for any custom stage. A
//! plug-in queue has no in-place `change()`: modifying it builds a new one
//! and moves the packets over in order, like a change of kind.

use crate::stage::{Classifier, Pacer, Queue, Scheduler};
use serde::{Deserialize, Serialize};
use std::fmt;
use tcran_core::ConfigError;

/// Where to find a plug-in stage and what to tell it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PluginConfig {
    /// Shared object to load the plug-in from (a `dlopen` path). Default:
    /// a plug-in the application registered under `symbol`.
    #[serde(default)]
    pub path: Option<String>,
    /// Name of the plug-in's ops table: a symbol exported by `path`, or the
    /// name it was registered under.
    pub symbol: String,
    /// Parameters handed verbatim to the plug-in's `create`.
    #[serde(default)]
    pub params: String,
}

impl fmt::Display for PluginConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(path) => write!(f, "{path}:{}", self.symbol),
            None => write!(f, "{}", self.symbol),
        }
    }
}

/// The stage kinds a plug-in can implement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginStage {
    Classifier,
    Queue,
    Scheduler,
    Pacer,
}

impl PluginStage {
    pub fn name(self) -> &'static str {
        match self {
            PluginStage::Classifier => "classifier",
            PluginStage::Queue => "queue",
            PluginStage::Scheduler => "scheduler",
            PluginStage::Pacer => "pacer",
        }
    }
}

/// Turns a [`PluginConfig`] into a stage. Implemented by the embedding
/// application (the C library); one resolver may serve many pipelines and
/// threads, hence `Send + Sync`. Errors name the field (`path`, `symbol`,
/// `params`) and say what went wrong; the pipeline prefixes the stage.
pub trait PluginResolver: fmt::Debug + Send + Sync {
    fn classifier(&self, config: &PluginConfig) -> Result<Box<dyn Classifier>, ConfigError>;
    fn queue(&self, config: &PluginConfig) -> Result<Box<dyn Queue>, ConfigError>;
    fn scheduler(&self, config: &PluginConfig) -> Result<Box<dyn Scheduler>, ConfigError>;
    fn pacer(&self, config: &PluginConfig) -> Result<Box<dyn Pacer>, ConfigError>;
}

/// The resolver a build may use, if the application gave one.
pub type Resolver<'a> = Option<&'a dyn PluginResolver>;

/// The error for a plug-in kind built without a resolver.
pub(crate) fn no_resolver(config: &PluginConfig) -> ConfigError {
    ConfigError::new(
        "kind",
        format!("plugin ({config})"),
        "plug-in stages can only be built by a program that loads them (the C library libtcran); use a built-in kind here",
    )
}
