//! `kind = "plugin"` stages: resolved by the application's resolver at
//! build time and on live controls, a config error without one.

use crate::common;

use common::packet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tcran_core::{ConfigError, Ecn, Instant, QueueId};
use tcran_tc::plugin::{PluginConfig, PluginResolver};
use tcran_tc::queue::Fifo;
use tcran_tc::stage::{
    Blocked, Classifier, LowerLayerReport, LowerState, Pacer, PacerStats, Queue, QueueAttrs,
    QueueView, Scheduler,
};
use tcran_tc::{Control, PipelineConfig};

/// Classifies every packet to the queue named in `params`.
#[derive(Debug)]
struct ToQueue(QueueId);
impl Classifier for ToQueue {
    fn classify(&mut self, _: &tcran_core::Packet) -> Option<QueueId> {
        Some(self.0)
    }
}

/// Serves the backlogged queue with the highest id first.
#[derive(Debug, Default)]
struct HighestFirst(Vec<QueueId>);
impl Scheduler for HighestFirst {
    fn on_queue_added(&mut self, q: QueueId, _: QueueAttrs) {
        self.0.push(q);
        self.0.sort();
    }
    fn on_queue_removed(&mut self, q: QueueId) {
        self.0.retain(|x| *x != q);
    }
    fn on_backlogged(&mut self, _: QueueId, _: &dyn QueueView) {}
    fn select(&mut self, _: Instant, view: &dyn QueueView, blocked: &Blocked) -> Option<QueueId> {
        self.0
            .iter()
            .rev()
            .copied()
            .find(|q| view.packets(*q) > 0 && !blocked.contains(*q))
    }
    fn on_sent(&mut self, _: QueueId, _: u32, _: &dyn QueueView) {}
    fn on_empty(&mut self, _: QueueId, _: &dyn QueueView) {}
}

/// Admits `params` packets in all.
#[derive(Debug)]
struct Budget(u32);
impl Pacer for Budget {
    fn admits(&mut self, _: u32, _: Instant, _: &LowerState) -> bool {
        self.0 > 0
    }
    fn on_forwarded(&mut self, _: u32, _: Instant) {
        self.0 -= 1;
    }
    fn on_report(&mut self, _: &LowerLayerReport, _: Instant) {}
    fn stats(&self) -> PacerStats {
        PacerStats::default()
    }
}

/// Resolves symbol "test" for every stage; counts what it built.
#[derive(Debug, Default)]
struct TestResolver {
    built: AtomicUsize,
}

impl TestResolver {
    fn param(&self, c: &PluginConfig) -> Result<u16, ConfigError> {
        if c.symbol != "test" {
            return Err(ConfigError::new("symbol", &c.symbol, "not registered"));
        }
        self.built.fetch_add(1, Ordering::Relaxed);
        c.params
            .parse()
            .map_err(|_| ConfigError::new("params", &c.params, "a number"))
    }
}

impl PluginResolver for TestResolver {
    fn classifier(&self, c: &PluginConfig) -> Result<Box<dyn Classifier>, ConfigError> {
        Ok(Box::new(ToQueue(QueueId(self.param(c)?))))
    }
    fn queue(&self, c: &PluginConfig) -> Result<Box<dyn Queue>, ConfigError> {
        self.param(c)?;
        Ok(Box::new(Fifo::default()))
    }
    fn scheduler(&self, c: &PluginConfig) -> Result<Box<dyn Scheduler>, ConfigError> {
        self.param(c)?;
        Ok(Box::<HighestFirst>::default())
    }
    fn pacer(&self, c: &PluginConfig) -> Result<Box<dyn Pacer>, ConfigError> {
        Ok(Box::new(Budget(self.param(c)? as u32)))
    }
}

const THREE_QUEUES: &str = r#"
[[queues]]
id = 0
kind = "fifo"
[[queues]]
id = 1
kind = "fifo"
[[queues]]
id = 2
kind = "plugin"
symbol = "test"
params = "0"
"#;

fn config(text: &str) -> PipelineConfig {
    toml::from_str(text).unwrap()
}

#[test]
fn plugin_kind_without_a_resolver_is_an_error_naming_the_field() {
    let e = config(THREE_QUEUES).build().unwrap_err();
    assert_eq!(e.field, "queues[2].plugin.kind");
    assert_eq!(e.value, "plugin (test)");
    let mut c = config("[[queues]]\nid = 0\nkind = \"fifo\"");
    c.pacer = toml::from_str("kind = \"plugin\"\npath = \"/x/libp.so\"\nsymbol = \"p\"").unwrap();
    let e = c.build().unwrap_err();
    assert_eq!(
        (e.field.as_str(), e.value.as_str()),
        ("pacer.kind", "plugin (/x/libp.so:p)")
    );
}

#[test]
fn plugin_config_rejects_unknown_keys_and_needs_a_symbol() {
    let bad = toml::from_str::<PipelineConfig>(
        "scheduler = { kind = \"plugin\", symbol = \"s\", pth = \"x\" }\n[[queues]]\nid = 0\nkind = \"fifo\"",
    );
    assert!(bad.unwrap_err().to_string().contains("pth"));
    let bad = toml::from_str::<PipelineConfig>(
        "scheduler = { kind = \"plugin\", path = \"x.so\" }\n[[queues]]\nid = 0\nkind = \"fifo\"",
    );
    assert!(bad.unwrap_err().to_string().contains("symbol"));
}

#[test]
fn resolver_errors_name_the_stage_and_field() {
    let r = Arc::new(TestResolver::default());
    let mut c = config(THREE_QUEUES);
    c.scheduler = toml::from_str("kind = \"plugin\"\nsymbol = \"nope\"").unwrap();
    let e = c.build_with_plugins(r).unwrap_err();
    assert_eq!(
        (e.field.as_str(), e.value.as_str()),
        ("scheduler.symbol", "nope")
    );
}

#[test]
fn plugins_carry_the_data_path_and_are_deployed_by_live_controls() {
    let r = Arc::new(TestResolver::default());
    let mut p = config(THREE_QUEUES).build_with_plugins(r.clone()).unwrap();
    assert_eq!(r.built.load(Ordering::Relaxed), 1);
    let t = Instant::ZERO;
    // Built-in classifier (none): everything to the default queue 0.
    p.push(packet(1, 0, 100, Ecn::NotEct, t), t);
    // Live: a plug-in classifier sending to queue 2 (the plug-in queue),
    // a plug-in scheduler serving the highest id first, a plug-in pacer
    // that lets two packets through.
    for control in [
        r#"{"op":"set_classifier","classifier":{"kind":"plugin","symbol":"test","params":"2"}}"#,
        r#"{"op":"set_scheduler","scheduler":{"kind":"plugin","symbol":"test"}}"#,
        r#"{"op":"set_pacer","pacer":{"kind":"plugin","symbol":"test","params":"2"}}"#,
    ] {
        let c: Control = serde_json::from_str(control).unwrap();
        let c = match c {
            Control::SetScheduler { .. } => {
                // `params` is optional: the scheduler plug-in parses "".
                let e = p.apply(c.clone(), t).unwrap_err();
                assert_eq!(e.field, "scheduler.params");
                serde_json::from_str(
                    r#"{"op":"set_scheduler","scheduler":{"kind":"plugin","symbol":"test","params":"9"}}"#,
                )
                .unwrap()
            }
            c => c,
        };
        p.apply(c, t).unwrap();
    }
    p.push(packet(2, 0, 200, Ecn::NotEct, t), t);
    p.push(packet(3, 0, 300, Ecn::NotEct, t), t);
    assert_eq!(p.queue_backlog(QueueId(2)), Some((2, 500)));
    let out: Vec<u32> = std::iter::from_fn(|| p.pull(t)).map(|x| x.len).collect();
    assert_eq!(out, [200, 300], "highest queue first, two admitted");
    assert_eq!(p.queued_packets(), 1);
    assert_eq!(p.config().scheduler.kind_name(), "plugin");
    assert_eq!(p.stats(t).pacer_kind, "plugin");
}

#[test]
fn modifying_a_plugin_queue_rebuilds_it_and_keeps_its_packets_in_order() {
    let r = Arc::new(TestResolver::default());
    let mut c = config(THREE_QUEUES);
    c.default_queue = Some(QueueId(2));
    let mut p = c.build_with_plugins(r.clone()).unwrap();
    let t = Instant::ZERO;
    for i in 0..3 {
        p.push(packet(i, 0, 100 + i as u32, Ecn::NotEct, t), t);
    }
    let queue: tcran_tc::QueueConfig =
        toml::from_str("id = 2\nkind = \"plugin\"\nsymbol = \"test\"\nparams = \"1\"").unwrap();
    p.apply(Control::ModifyQueue { queue }, t).unwrap();
    assert_eq!(r.built.load(Ordering::Relaxed), 2);
    let out: Vec<u32> = std::iter::from_fn(|| p.pull(t)).map(|x| x.len).collect();
    assert_eq!(out, [100, 101, 102]);
}
