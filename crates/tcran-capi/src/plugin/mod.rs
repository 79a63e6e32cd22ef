//! C plug-in stages: the ops tables of [`abi`], a registry of tables the
//! application registered (`tcran_plugins_t`), `dlopen` loading, and the
//! [`tcran_tc::plugin::PluginResolver`] that turns a `kind = "plugin"`
//! config into a stage.
//!
//! Design:
//! - No process-wide state. The application creates a registry
//!   (`tcran_plugins_new`), registers tables into it and passes it to every
//!   `tcran_new` that may use them; instances keep it alive (reference
//!   counted), so it may be freed at any time. An instance created without
//!   one can still load plug-ins by `path`.
//! - A config's `path` is opened with `dlopen` (the `libloading` crate) and
//!   `symbol` looked up in it; without `path`, `symbol` is the name of a
//!   registered table. The library stays loaded while a stage built from
//!   it lives.
//! - tcran copies a table when it reads it and checks the header (ABI
//!   version, stage) and the required functions first.
//! - Every answer of a plug-in is checked ([`stages`]); a bad one is
//!   counted in the instance's [`PluginErrors`] and replaced by a safe
//!   choice, so a faulty plug-in can degrade a bearer's service but never
//!   cause undefined behaviour in tcran or lose a packet uncounted.
#![allow(unsafe_code)] // Reads C ops tables and calls C function pointers.

pub mod abi;
mod stages;

use abi::*;
use libloading::Library;
use std::collections::BTreeMap;
use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use tcran_core::{ConfigError, Packet};
use tcran_tc::plugin::{PluginConfig, PluginResolver, PluginStage};
use tcran_tc::stage::{Classifier, Pacer, Queue, Scheduler};

/// A validated copy of one ops table.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Ops {
    Classifier(tcran_classifier_ops),
    Queue(tcran_queue_ops),
    Scheduler(tcran_scheduler_ops),
    Pacer(tcran_pacer_ops),
}

// SAFETY: the tables hold function pointers and the `name` pointer, which
// tcran only reads while validating (the name is copied into a String);
// the plug-in contract makes the functions callable from any thread.
unsafe impl Send for Ops {}
unsafe impl Sync for Ops {}

impl Ops {
    fn stage(&self) -> PluginStage {
        match self {
            Ops::Classifier(_) => PluginStage::Classifier,
            Ops::Queue(_) => PluginStage::Queue,
            Ops::Scheduler(_) => PluginStage::Scheduler,
            Ops::Pacer(_) => PluginStage::Pacer,
        }
    }
    fn header(&self) -> &tcran_plugin_header {
        match self {
            Ops::Classifier(o) => &o.header,
            Ops::Queue(o) => &o.header,
            Ops::Scheduler(o) => &o.header,
            Ops::Pacer(o) => &o.header,
        }
    }

    /// Reads and checks the table at `header`.
    ///
    /// # Safety
    /// `header` must point to a readable `tcran_plugin_header`; if its
    /// `abi_version` and `stage` are right, to the whole ops table of that
    /// stage.
    pub(crate) unsafe fn read(header: *const tcran_plugin_header) -> Result<(Ops, String), String> {
        // SAFETY: the caller guarantees the header is readable.
        let h = unsafe { header.read_unaligned() };
        if h.abi_version != TCRAN_PLUGIN_ABI_VERSION {
            return Err(format!(
                "abi_version is {:#x}, this libtcran needs {TCRAN_PLUGIN_ABI_VERSION:#x} (TCRAN_PLUGIN_ABI_VERSION): rebuild the plug-in against this tcran.h",
                h.abi_version
            ));
        }
        // SAFETY: abi and stage checked: the table of that stage follows.
        let ops = unsafe {
            match h.stage {
                TCRAN_STAGE_CLASSIFIER => Ops::Classifier(header.cast::<tcran_classifier_ops>().read_unaligned()),
                TCRAN_STAGE_QUEUE => Ops::Queue(header.cast::<tcran_queue_ops>().read_unaligned()),
                TCRAN_STAGE_SCHEDULER => Ops::Scheduler(header.cast::<tcran_scheduler_ops>().read_unaligned()),
                TCRAN_STAGE_PACER => Ops::Pacer(header.cast::<tcran_pacer_ops>().read_unaligned()),
                s => return Err(format!("stage is {s}, not one of TCRAN_STAGE_CLASSIFIER (1), _QUEUE (2), _SCHEDULER (3), _PACER (4)")),
            }
        };
        let missing = match &ops {
            Ops::Classifier(o) => o.classify.is_none().then_some("classify"),
            Ops::Queue(_) => None,
            Ops::Scheduler(o) => o.select.is_none().then_some("select"),
            Ops::Pacer(o) => o.admits.is_none().then_some("admits"),
        };
        if let Some(f) = missing {
            return Err(format!("the required function `{f}` is NULL"));
        }
        let name = if h.name.is_null() {
            String::from("unnamed")
        } else {
            // SAFETY: the contract makes `name` a NUL-terminated string.
            unsafe { CStr::from_ptr(h.name) }
                .to_string_lossy()
                .into_owned()
        };
        Ok((ops, name))
    }
}

/// Bad answers of plug-ins, per stage kind, for one instance.
#[derive(Debug, Default)]
pub struct PluginErrors {
    pub classifier: AtomicU64,
    pub queue: AtomicU64,
    pub scheduler: AtomicU64,
    pub pacer: AtomicU64,
}

impl PluginErrors {
    pub(crate) fn count(&self, stage: PluginStage) {
        let c = match stage {
            PluginStage::Classifier => &self.classifier,
            PluginStage::Queue => &self.queue,
            PluginStage::Scheduler => &self.scheduler,
            PluginStage::Pacer => &self.pacer,
        };
        c.fetch_add(1, Ordering::Relaxed);
    }
    pub fn to_json(&self) -> serde_json::Value {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        serde_json::json!({
            "classifier": get(&self.classifier),
            "queue": get(&self.queue),
            "scheduler": get(&self.scheduler),
            "pacer": get(&self.pacer),
        })
    }
}

/// The registry behind `tcran_plugins_t`: tables by name.
#[derive(Debug, Default)]
pub struct Registry {
    tables: RwLock<BTreeMap<String, (Ops, String)>>,
}

impl Registry {
    /// Registers the table at `header` under `name` (replacing an earlier
    /// one of that name for instances built from now on).
    ///
    /// # Safety
    /// As [`Ops::read`].
    pub unsafe fn register(
        &self,
        name: &str,
        header: *const tcran_plugin_header,
    ) -> Result<(), String> {
        if name.is_empty() {
            return Err("the plug-in name is empty".into());
        }
        // SAFETY: forwarded from the caller.
        let table = unsafe { Ops::read(header) }?;
        self.tables
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_string(), table);
        Ok(())
    }

    fn lookup(&self, name: &str) -> Option<(Ops, String)> {
        self.tables
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .cloned()
    }

    fn names(&self) -> String {
        let t = self.tables.read().unwrap_or_else(|e| e.into_inner());
        if t.is_empty() {
            "none".into()
        } else {
            t.keys().cloned().collect::<Vec<_>>().join(", ")
        }
    }
}

/// The opaque state a plug-in created, destroyed with it.
#[derive(Debug)]
pub(crate) struct Instance {
    pub(crate) state: *mut c_void,
    destroy: tcran_destroy_fn,
    pub(crate) errors: Arc<PluginErrors>,
    /// Keeps the shared object loaded while the state lives (dropped last).
    _library: Option<Arc<Library>>,
}

// SAFETY: the plug-in contract lets its state move between threads; tcran
// uses it from one thread at a time (the instance lock).
unsafe impl Send for Instance {}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Some(destroy) = self.destroy {
            // SAFETY: `state` came from this table's `create` and is
            // destroyed exactly once.
            unsafe { destroy(self.state) }
        }
    }
}

/// Resolves `kind = "plugin"` for one tcran instance: registered tables
/// first, `dlopen` for a `path`; built stages count their errors in the
/// instance's [`PluginErrors`].
#[derive(Debug)]
pub struct Resolver {
    pub registry: Arc<Registry>,
    pub errors: Arc<PluginErrors>,
}

impl Resolver {
    fn instantiate(
        &self,
        c: &PluginConfig,
        want: PluginStage,
    ) -> Result<(Ops, Instance), ConfigError> {
        let (library, (ops, name)) = match &c.path {
            None => {
                let found = self.registry.lookup(&c.symbol).ok_or_else(|| {
                    ConfigError::new(
                        "symbol",
                        &c.symbol,
                        format!(
                            "no plug-in is registered under this name (registered: {}); give `path` to load one from a shared object",
                            self.registry.names()
                        ),
                    )
                })?;
                (None, found)
            }
            Some(path) => {
                let (lib, found) = load(path, &c.symbol)?;
                (Some(lib), found)
            }
        };
        if ops.stage() != want {
            return Err(ConfigError::new(
                "symbol",
                &c.symbol,
                format!("is a {} plug-in, not a {}", ops.stage().name(), want.name()),
            ));
        }
        let state = create(ops.header(), &c.params, &name)?;
        let instance = Instance {
            state,
            destroy: ops.header().destroy,
            errors: self.errors.clone(),
            _library: library,
        };
        Ok((ops, instance))
    }
}

/// Opens `path` and reads the table `symbol`.
fn load(path: &str, symbol: &str) -> Result<(Arc<Library>, (Ops, String)), ConfigError> {
    // SAFETY: loading a shared object runs its initialisers; which code to
    // trust is the configuration's decision (docs/c-api.md says so).
    let library = unsafe { Library::new(path) }
        .map_err(|e| ConfigError::new("path", path, format!("cannot be loaded: {e}")))?;
    let sym_name = CString::new(symbol)
        .map_err(|_| ConfigError::new("symbol", symbol, "must not contain a NUL character"))?;
    // SAFETY: the symbol is looked up as the address of data; what it
    // points to is checked by `Ops::read` before use.
    let table = unsafe {
        library
            .get::<*const tcran_plugin_header>(sym_name.as_bytes_with_nul())
            .map(|s| *s)
    }
    .map_err(|e| ConfigError::new("symbol", symbol, format!("not found in {path}: {e}")))?;
    if table.is_null() {
        return Err(ConfigError::new(
            "symbol",
            symbol,
            format!("is NULL in {path}"),
        ));
    }
    // SAFETY: the symbol names an ops table by the plug-in contract.
    let found = unsafe { Ops::read(table) }.map_err(|e| {
        ConfigError::new(
            "symbol",
            symbol,
            format!("is not a tcran plug-in table: {e}"),
        )
    })?;
    Ok((Arc::new(library), found))
}

/// Calls the table's `create` with `params`.
fn create(h: &tcran_plugin_header, params: &str, name: &str) -> Result<*mut c_void, ConfigError> {
    let Some(create) = h.create else {
        return Ok(std::ptr::null_mut());
    };
    let text = CString::new(params)
        .map_err(|_| ConfigError::new("params", params, "must not contain a NUL character"))?;
    let mut err = [0 as c_char; 256];
    // SAFETY: `text` is NUL-terminated and `err` writable for its length.
    let state = unsafe { create(text.as_ptr(), params.len(), err.as_mut_ptr(), err.len()) };
    if state.is_null() {
        // Whatever the plug-in wrote, read at most the buffer.
        err[err.len() - 1] = 0;
        // SAFETY: NUL-terminated within the buffer (set just above).
        let why = unsafe { CStr::from_ptr(err.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        let why = if why.is_empty() {
            "no reason given".into()
        } else {
            why
        };
        return Err(ConfigError::new(
            "params",
            params,
            format!("plug-in {name} refused them: {why}"),
        ));
    }
    Ok(state)
}

impl PluginResolver for Resolver {
    fn classifier(&self, c: &PluginConfig) -> Result<Box<dyn Classifier>, ConfigError> {
        match self.instantiate(c, PluginStage::Classifier)? {
            (Ops::Classifier(ops), inst) => Ok(Box::new(stages::PluginClassifier::new(ops, inst))),
            _ => unreachable!("stage checked"),
        }
    }
    fn queue(&self, c: &PluginConfig) -> Result<Box<dyn Queue>, ConfigError> {
        match self.instantiate(c, PluginStage::Queue)? {
            (Ops::Queue(ops), inst) => Ok(Box::new(stages::PluginQueue::new(ops, inst))),
            _ => unreachable!("stage checked"),
        }
    }
    fn scheduler(&self, c: &PluginConfig) -> Result<Box<dyn Scheduler>, ConfigError> {
        match self.instantiate(c, PluginStage::Scheduler)? {
            (Ops::Scheduler(ops), inst) => Ok(Box::new(stages::PluginScheduler::new(ops, inst))),
            _ => unreachable!("stage checked"),
        }
    }
    fn pacer(&self, c: &PluginConfig) -> Result<Box<dyn Pacer>, ConfigError> {
        match self.instantiate(c, PluginStage::Pacer)? {
            (Ops::Pacer(ops), inst) => Ok(Box::new(stages::PluginPacer::new(ops, inst))),
            _ => unreachable!("stage checked"),
        }
    }
}

/// What a plug-in sees of `p`.
pub(crate) fn packet_info(p: &Packet) -> tcran_packet_info {
    let (data, data_len) = p
        .payload
        .as_deref()
        .map_or((std::ptr::null(), 0), |b| (b.as_ptr(), b.len() as u32));
    let (ip_version, src_addr, dst_addr) = if p.malformed {
        (0, [0; 16], [0; 16])
    } else {
        let (v, s) = addr(p.tuple.src);
        (v, s, addr(p.tuple.dst).1)
    };
    tcran_packet_info {
        data,
        data_len,
        len: p.len,
        tag: p.id.0,
        enqueued_at_ns: p.enqueued_at.as_nanos(),
        ip_version,
        protocol: p.tuple.proto.0,
        dscp: p.dscp.0,
        ecn: p.ecn.bits(),
        qfi: p.qfi.0,
        src_port: p.tuple.sport,
        dst_port: p.tuple.dport,
        src_addr,
        dst_addr,
    }
}

fn addr(a: std::net::IpAddr) -> (u8, [u8; 16]) {
    let mut out = [0; 16];
    match a {
        std::net::IpAddr::V4(v4) => {
            out[..4].copy_from_slice(&v4.octets());
            (4, out)
        }
        std::net::IpAddr::V6(v6) => (6, v6.octets()),
    }
}
