//! `tcran._native`: the compiled half of the `tcran` Python package
//! (python/tcran, docs/python.md). The public API is the Python package;
//! this module is what it calls.
//!
//! Contract:
//! - Runs go through the command line's own code (`tcran_cli::simulate`,
//!   `load`, `set`, `series_csv`, `report`), so a scenario, a `--set`
//!   override or a bad value behaves and fails exactly as with `tcran run`,
//!   and the files written are the same.
//! - Errors are the command line's one-line messages: a user mistake (exit
//!   code 2 on the command line) raises `ConfigError` (a `ValueError`), a
//!   file that cannot be written `OutputError` (an `OSError`).
//! - The GIL is released while a simulation runs, so other Python threads
//!   (a progress display, a Dask worker's heartbeat) keep going.
//! - Pipelines take time as integer nanoseconds (`now_ns`) with the C
//!   ABI's policy ([`CallerClock`]): a time before the pipeline's is taken
//!   as the pipeline's and counted (`time_clamped`), so threads that read a
//!   clock and then race for the pipeline are not errors. Packet sizes are
//!   bytes (1..=9000, a PDCP SDU's maximum, TS 38.323 sec. 4.3.1); every
//!   drop is handed back with its reason.
//! - Changes are tcran-tc's [`Change`], applied all or nothing: one
//!   control, a list, or a whole pipeline deployed.

use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use tcran_cli::error::{CliError, EXIT_USAGE};
use tcran_cli::load::{Source, Syntax};
use tcran_cli::set::Override;
use tcran_cli::simulate::{self, Options, Outcome};
use tcran_cli::{outdir, series_csv, stages};
use tcran_core::{
    CallerClock, DropReason, Dscp, Ecn, FiveTuple, Instant, Packet, PacketId, Protocol,
};
use tcran_tc::{Change, Control, LowerLayerReport, PipelineConfig, PushOutcome};

mod xapp;

create_exception!(
    _native,
    ConfigError,
    PyValueError,
    "A scenario, configuration, override or argument that tcran refuses; the message is the command line's one line (file, line or field, value, what is allowed)."
);
create_exception!(
    _native,
    OutputError,
    PyOSError,
    "An output file or directory that cannot be written."
);

/// The command line's error as the matching Python exception.
fn py_err(e: CliError) -> PyErr {
    if e.exit_code() == EXIT_USAGE {
        ConfigError::new_err(e.one_line())
    } else {
        OutputError::new_err(e.one_line())
    }
}

/// A scenario as the Python side hands it over.
struct Job {
    /// `path`, `toml` or `json`.
    kind: String,
    /// The path, or the document's text.
    text: String,
    /// The scenario's name (ignored for a path: its file stem).
    name: String,
    /// What error messages call the document (ignored for a path: the
    /// path), e.g. `<string>` or the path it was read from.
    display: String,
    /// Directory that relative trace paths start from (ignored for a path:
    /// the file's directory).
    base: String,
    /// `KEY=VALUE` overrides, as on the command line.
    sets: Vec<String>,
    /// `(KEY, JSON value)` overrides with typed values.
    typed_sets: Vec<(String, String)>,
    seed: Option<u64>,
    variants: Option<Vec<String>>,
}

/// The scenario read and the overrides parsed, ready to run.
struct Prepared {
    name: String,
    src: Source,
    base: PathBuf,
    sets: Vec<Override>,
    seed: Option<u64>,
    variants: Option<Vec<String>>,
}

impl Job {
    fn prepare(self) -> Result<Prepared, CliError> {
        let (name, src, base) = match self.kind.as_str() {
            "path" => {
                let path = Path::new(&self.text);
                let src = tcran_cli::load::read_config(path)?;
                let base = path.parent().unwrap_or(Path::new(".")).to_path_buf();
                (simulate::scenario_name(path), src, base)
            }
            kind => {
                let syntax = if kind == "json" {
                    Syntax::Json
                } else {
                    Syntax::Toml
                };
                let src = Source {
                    name: self.display,
                    text: self.text,
                    syntax,
                };
                (self.name, src, PathBuf::from(self.base))
            }
        };
        let mut sets = Vec::with_capacity(self.sets.len() + self.typed_sets.len());
        for a in &self.sets {
            sets.push(Override::parse(a).map_err(|message| CliError::Set {
                arg: a.clone(),
                message,
            })?);
        }
        for (key, json) in &self.typed_sets {
            let value: serde_json::Value =
                serde_json::from_str(json).map_err(|e| CliError::Set {
                    arg: format!("{key}={json}"),
                    message: format!("not a value: {e}"),
                })?;
            sets.push(
                Override::from_value(key, value).map_err(|message| CliError::Set {
                    arg: format!("{key}={json}"),
                    message,
                })?,
            );
        }
        Ok(Prepared {
            name,
            src,
            base,
            sets,
            seed: self.seed,
            variants: self.variants,
        })
    }
}

impl Prepared {
    fn run(&self, progress: bool) -> Result<Outcome, CliError> {
        let opts = Options {
            seed: self.seed,
            sets: &self.sets,
            progress,
            ..Options::default()
        };
        simulate::run_source(
            &self.name,
            &self.src,
            &self.base,
            opts,
            self.variants.as_deref(),
        )
    }
}

/// What one `run` produced: the summary, every variant's time series and
/// configuration (for the report).
#[pyclass(module = "tcran._native", name = "Outcome", frozen)]
#[derive(Debug)]
struct PyOutcome {
    outcome: Outcome,
}

#[pymethods]
impl PyOutcome {
    /// The summary as JSON text (the CLI's summary.json).
    fn summary_json(&self) -> String {
        serde_json::to_string(&self.outcome.output.summary).expect("summary serializes")
    }

    /// The CLI's table for this run.
    fn table(&self) -> String {
        simulate::to_text(&self.outcome.output.summary, self.outcome.clock)
    }

    /// `(variant, CSV bytes)` of the series `stem` for every variant: the
    /// bytes of `<variant>/<stem>.csv` the CLI writes.
    fn series_csv<'py>(
        &self,
        py: Python<'py>,
        stem: &str,
    ) -> PyResult<Vec<(String, Bound<'py, PyBytes>)>> {
        let o = &self.outcome.output;
        let mut out = Vec::with_capacity(o.series.len());
        for (v, s) in o.summary.variants.iter().zip(&o.series) {
            let mut buf = Vec::new();
            series_csv::write_one(stem, s, &mut buf)
                .map_err(|e| ConfigError::new_err(format!("series: {e}")))?;
            out.push((v.name.clone(), PyBytes::new(py, &buf)));
        }
        Ok(out)
    }

    /// Writes summary.json, the CSV series and report.html into `dir`.
    fn write(&self, py: Python<'_>, dir: PathBuf) -> PyResult<()> {
        // As `tcran run --out`: the directory ends up holding this run
        // only, and one that tcran did not write is refused.
        py.detach(|| {
            let staged = outdir::stage(&dir, "python")?;
            simulate::write_outputs(staged.path(), &self.outcome)?;
            staged.commit()
        })
        .map_err(py_err)
    }
}

/// A scenario as the Python side hands it over: `(kind, text, name,
/// display, base, sets, typed_sets, seed, variants)`, the fields of
/// [`Job`] in order (python/tcran/_scenario.py builds it).
type JobTuple = (
    String,
    String,
    String,
    String,
    String,
    Vec<String>,
    Vec<(String, String)>,
    Option<u64>,
    Option<Vec<String>>,
);

impl From<JobTuple> for Job {
    fn from(t: JobTuple) -> Job {
        let (kind, text, name, display, base, sets, typed_sets, seed, variants) = t;
        Job {
            kind,
            text,
            name,
            display,
            base,
            sets,
            typed_sets,
            seed,
            variants,
        }
    }
}

/// Runs a scenario (a [`JobTuple`]) with the GIL released.
#[pyfunction]
#[pyo3(signature = (job, progress=false))]
fn run(py: Python<'_>, job: JobTuple, progress: bool) -> PyResult<PyOutcome> {
    let job = Job::from(job);
    let outcome = py
        .detach(|| job.prepare().and_then(|p| p.run(progress)))
        .map_err(py_err)?;
    Ok(PyOutcome { outcome })
}

/// Runs many scenarios on `threads` threads (0: one per core) with the GIL
/// released, calling `on_done(index, summary_json)` (with the GIL) as each
/// one finishes, in completion order. The first error (a bad scenario, or
/// an exception from `on_done`, or Ctrl-C) stops new runs from starting;
/// runs already going finish and are reported; then it is raised.
#[pyfunction]
fn run_many(
    py: Python<'_>,
    jobs: Vec<JobTuple>,
    threads: usize,
    on_done: Py<PyAny>,
) -> PyResult<()> {
    let jobs: Vec<Mutex<Option<Job>>> = jobs
        .into_iter()
        .map(|j| Mutex::new(Some(Job::from(j))))
        .collect();
    let threads = match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .min(jobs.len())
    .max(1);
    let next = AtomicUsize::new(0);
    let running = AtomicUsize::new(threads);
    let stop = AtomicBool::new(false);
    let first_error: Mutex<Option<PyErr>> = Mutex::new(None);
    let fail = |e: PyErr| {
        stop.store(true, Ordering::Relaxed);
        let mut slot = first_error.lock().expect("never poisoned");
        if slot.is_none() {
            *slot = Some(e);
        }
    };
    py.detach(|| {
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| {
                    let _running = Running(&running);
                    while !stop.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(cell) = jobs.get(i) else { break };
                        let job = cell.lock().expect("never poisoned").take();
                        let Some(job) = job else { continue };
                        let result = job.prepare().and_then(|p| p.run(false));
                        match result {
                            Ok(o) => {
                                let json = serde_json::to_string(&o.output.summary)
                                    .expect("summary serializes");
                                let called = Python::attach(|py| on_done.call1(py, (i, json)));
                                if let Err(e) = called {
                                    fail(e);
                                }
                            }
                            Err(e) => fail(py_err(e)),
                        }
                    }
                });
            }
            // Python runs signal handlers only on the main thread: look
            // for Ctrl-C while the workers run.
            while running.load(Ordering::Relaxed) > 0 {
                std::thread::sleep(std::time::Duration::from_millis(10));
                if let Err(e) = Python::attach(|py| py.check_signals()) {
                    fail(e);
                }
            }
        });
    });
    match first_error.into_inner().expect("never poisoned") {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Counts a worker out when it ends, even by a panic (a bug), so the
/// thread watching for Ctrl-C stops waiting.
struct Running<'a>(&'a AtomicUsize);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Checks a scenario (a [`JobTuple`]; its seed and variants are not
/// used) without running it; returns its run names.
#[pyfunction]
fn validate(job: JobTuple) -> PyResult<Vec<String>> {
    let job = Job::from(job);
    let p = job.prepare().map_err(py_err)?;
    // As `run` reads it (simulate::run_source), so the messages match.
    let cfg: tcran_sim::SimConfig = p
        .src
        .parse_checked(&p.sets, |c| tcran_sim::build_scenario(c, &p.base).map(drop))
        .map_err(py_err)?;
    tcran_sim::build_scenario(&cfg, &p.base)
        .map(|sims| sims.into_iter().map(|(n, _)| n).collect())
        .map_err(|error| config_err(&p.src.name, error))
}

/// `tcran stages --json` as text.
#[pyfunction]
fn stages_json() -> String {
    stages::to_json(&stages::catalog()).to_string()
}

/// The series file stems, in the CLI's order.
#[pyfunction]
fn series_names() -> Vec<&'static str> {
    series_csv::FILES.to_vec()
}

/// The drop reasons' labels, by index.
#[pyfunction]
fn drop_reasons() -> Vec<&'static str> {
    DropReason::ALL.iter().map(|r| r.label()).collect()
}

/// The largest packet a pipeline takes, bytes: a PDCP SDU is at most 9000
/// octets (TS 38.323 sec. 4.3.1), as in the C API.
const MAX_PACKET: u32 = 9000;

/// Push outcome codes: 0 queued, 1 queued and CE-marked, 2 + i dropped
/// for `DropReason::ALL[i]`.
const QUEUED: u8 = 0;
const MARKED: u8 = 1;
const DROPPED_BASE: u8 = 2;

#[derive(Debug)]
struct PipeState {
    pipeline: tcran_tc::Pipeline,
    clock: CallerClock,
    next_id: u64,
    /// Every drop not handed out yet: packet id and reason index.
    dropped_ids: Vec<u64>,
    dropped_reasons: Vec<u8>,
}

impl PipeState {
    fn collect_drops(&mut self) {
        if self.pipeline.has_dropped() {
            for d in self.pipeline.drain_dropped() {
                self.dropped_ids.push(d.packet.id.0);
                self.dropped_reasons.push(d.reason.index() as u8);
            }
        }
    }

    fn push_one(&mut self, p: Packet, now: Instant) -> u8 {
        let outcome = self.pipeline.push(p, now);
        self.collect_drops();
        match outcome {
            PushOutcome::Dropped(r) => DROPPED_BASE + r.index() as u8,
            PushOutcome::Marked(_) => MARKED,
            PushOutcome::Enqueued(_) => QUEUED,
        }
    }
}

fn size_ok(what: &str, size: u32) -> PyResult<()> {
    if (1..=MAX_PACKET).contains(&size) {
        Ok(())
    } else {
        Err(ConfigError::new_err(format!(
            "{what} = {size}: a packet is 1..={MAX_PACKET} bytes (TS 38.323 sec. 4.3.1)"
        )))
    }
}

fn dscp_ecn(what: &str, dscp: u8, ecn: u8) -> PyResult<(Dscp, Ecn)> {
    if dscp > 63 {
        return Err(ConfigError::new_err(format!(
            "{what}dscp = {dscp}: must be 0..=63 (RFC 2474)"
        )));
    }
    if ecn > 3 {
        return Err(ConfigError::new_err(format!(
            "{what}ecn = {ecn}: must be 0..=3 (the IP header's 2-bit ECN field, RFC 3168)"
        )));
    }
    Ok((Dscp(dscp), Ecn::from_bits(ecn)))
}

/// Reads a pipeline config or a control from TOML or JSON text with the
/// command line's error messages (`<config>:line:col: ...`).
pub(crate) fn parse_doc<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> PyResult<T> {
    let syntax = if text.trim_start().starts_with('{') {
        Syntax::Json
    } else {
        Syntax::Toml
    };
    let src = Source {
        name: format!("<{what}>"),
        text: text.to_string(),
        syntax,
    };
    src.parse().map_err(py_err)
}

/// `n` little-endian values of `N` bytes each from `b` (a numpy column's
/// bytes), or the one-line error naming the argument.
fn le_array<T, const N: usize>(
    what: &str,
    b: &[u8],
    n: usize,
    from: impl Fn([u8; N]) -> T,
) -> PyResult<Vec<T>> {
    if b.len() != N * n {
        return Err(ConfigError::new_err(format!(
            "{what}: {} bytes, expected {n} little-endian {}-bit values",
            b.len(),
            8 * N
        )));
    }
    Ok(b.chunks_exact(N)
        .map(|c| from(c.try_into().expect("N bytes")))
        .collect())
}

/// A refused configuration or control as `ConfigError`, as the command
/// line words it (`<config>: field ...`).
fn config_err(file: &str, error: tcran_core::ConfigError) -> PyErr {
    py_err(CliError::Config {
        file: file.into(),
        error,
    })
}

fn to_bytes<T: Copy, const N: usize>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * N);
    for &x in v {
        out.extend_from_slice(&f(x));
    }
    out
}

/// A pulled packet: id, size, sojourn ns, DSCP, ECN bits.
type PulledTuple = (u64, u32, u64, u8, u8);

/// One TC pipeline (one UE bearer) driven from Python.
#[pyclass(module = "tcran._native", name = "Pipeline", frozen)]
#[derive(Debug)]
struct PyPipeline {
    state: Mutex<PipeState>,
}

impl PyPipeline {
    fn lock(&self) -> std::sync::MutexGuard<'_, PipeState> {
        // A panic inside tcran is a bug; the state is still the last
        // consistent one, so later calls may go on.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The state, its clock moved to `now_ns` (the pipeline's time if
    /// that is earlier).
    fn at(&self, now_ns: u64) -> (std::sync::MutexGuard<'_, PipeState>, Instant) {
        let mut st = self.lock();
        let now = st.clock.at(Instant::from_nanos(now_ns));
        (st, now)
    }

    /// Applies `change` all or nothing; a refusal is `ConfigError` naming
    /// the document (`<control>: ...`).
    fn change(&self, what: &str, change: &Change, now_ns: u64) -> PyResult<()> {
        let (mut st, now) = self.at(now_ns);
        let r = st.pipeline.apply_change(change, now);
        st.collect_drops();
        match r {
            Ok(_) => Ok(()),
            Err(refused) => Err(ConfigError::new_err(format!("{what}: {refused}"))),
        }
    }
}

#[pymethods]
impl PyPipeline {
    /// Builds a pipeline from a TOML or JSON config text.
    #[new]
    fn new(config: &str) -> PyResult<Self> {
        let cfg: PipelineConfig = parse_doc("config", config)?;
        let pipeline = cfg.build().map_err(|e| config_err("<config>", e))?;
        Ok(PyPipeline {
            state: Mutex::new(PipeState {
                pipeline,
                clock: CallerClock::default(),
                next_id: 0,
                dropped_ids: Vec::new(),
                dropped_reasons: Vec::new(),
            }),
        })
    }

    /// Pushes one packet; returns (packet id, outcome code).
    #[pyo3(signature = (size, now_ns, src, dst, sport, dport, proto, dscp, ecn))]
    #[allow(clippy::too_many_arguments)]
    fn push(
        &self,
        size: u32,
        now_ns: u64,
        src: &str,
        dst: &str,
        sport: u16,
        dport: u16,
        proto: u8,
        dscp: u8,
        ecn: u8,
    ) -> PyResult<(u64, u8)> {
        size_ok("size", size)?;
        let (dscp, ecn) = dscp_ecn("", dscp, ecn)?;
        let addr = |what: &str, s: &str| {
            s.parse::<IpAddr>().map_err(|_| {
                ConfigError::new_err(format!("{what} = {s:?}: not an IPv4 or IPv6 address"))
            })
        };
        let tuple = FiveTuple {
            src: addr("src", src)?,
            dst: addr("dst", dst)?,
            sport,
            dport,
            proto: Protocol(proto),
        };
        let (mut st, now) = self.at(now_ns);
        let id = st.next_id;
        st.next_id += 1;
        let mut p = Packet::new(PacketId(id), size, tuple, now);
        p.dscp = dscp;
        p.ecn = ecn;
        Ok((id, st.push_one(p, now)))
    }

    /// Pushes `n` packets (IPv4) from little-endian arrays; returns (first
    /// packet id, outcome codes as bytes).
    #[pyo3(signature = (n, sizes, times_ns, src, dst, sport, dport, proto, dscp, ecn))]
    #[allow(clippy::too_many_arguments)]
    fn push_many<'py>(
        &self,
        py: Python<'py>,
        n: usize,
        sizes: &[u8],
        times_ns: &[u8],
        src: &[u8],
        dst: &[u8],
        sport: &[u8],
        dport: &[u8],
        proto: &[u8],
        dscp: &[u8],
        ecn: &[u8],
    ) -> PyResult<(u64, Bound<'py, PyBytes>)> {
        let sizes = le_array("sizes", sizes, n, u32::from_le_bytes)?;
        let times = le_array("times_ns", times_ns, n, u64::from_le_bytes)?;
        let src = le_array("src", src, n, u32::from_le_bytes)?;
        let dst = le_array("dst", dst, n, u32::from_le_bytes)?;
        let sport = le_array("sport", sport, n, u16::from_le_bytes)?;
        let dport = le_array("dport", dport, n, u16::from_le_bytes)?;
        let proto = le_array("proto", proto, n, u8::from_le_bytes)?;
        let dscp = le_array("dscp", dscp, n, u8::from_le_bytes)?;
        let ecn = le_array("ecn", ecn, n, u8::from_le_bytes)?;
        // Check everything first, so a bad value changes nothing.
        let mut st = self.lock();
        for i in 0..n {
            // Messages are formatted only for a bad value.
            if !(1..=MAX_PACKET).contains(&sizes[i]) {
                size_ok(&format!("sizes[{i}]"), sizes[i])?;
            }
            if dscp[i] > 63 || ecn[i] > 3 {
                dscp_ecn(&format!("[{i}] "), dscp[i], ecn[i])?;
            }
        }
        let first = st.next_id;
        let st: &mut PipeState = &mut st;
        let out = py.detach(|| {
            let mut out = Vec::with_capacity(n);
            for i in 0..n {
                let now = st.clock.at(Instant::from_nanos(times[i]));
                let id = st.next_id;
                st.next_id += 1;
                let tuple = FiveTuple {
                    src: IpAddr::V4(Ipv4Addr::from(src[i])),
                    dst: IpAddr::V4(Ipv4Addr::from(dst[i])),
                    sport: sport[i],
                    dport: dport[i],
                    proto: Protocol(proto[i]),
                };
                let mut p = Packet::new(PacketId(id), sizes[i], tuple, now);
                p.dscp = Dscp(dscp[i]);
                p.ecn = Ecn::from_bits(ecn[i]);
                out.push(st.push_one(p, now));
            }
            out
        });
        Ok((first, PyBytes::new(py, &out)))
    }

    /// Pulls one packet: (id, size, sojourn ns, dscp, ecn bits) or None.
    fn pull(&self, now_ns: u64) -> PyResult<Option<PulledTuple>> {
        let (mut st, now) = self.at(now_ns);
        let p = st.pipeline.pull(now);
        st.collect_drops();
        Ok(p.map(|p| {
            (
                p.id.0,
                p.len,
                now.saturating_since(p.enqueued_at).as_nanos(),
                p.dscp.0,
                p.ecn.bits(),
            )
        }))
    }

    /// Pulls up to `max_packets` packets at `now_ns`; returns (ids u64,
    /// sizes u32, sojourns ns u64, ecn bits u8) as little-endian bytes.
    #[allow(clippy::type_complexity)]
    fn pull_many<'py>(
        &self,
        py: Python<'py>,
        now_ns: u64,
        max_packets: usize,
    ) -> PyResult<(
        Bound<'py, PyBytes>,
        Bound<'py, PyBytes>,
        Bound<'py, PyBytes>,
        Bound<'py, PyBytes>,
    )> {
        let (mut st, now) = self.at(now_ns);
        let (mut ids, mut sizes, mut soj, mut ecn) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        while ids.len() < max_packets {
            let Some(p) = st.pipeline.pull(now) else {
                break;
            };
            ids.push(p.id.0);
            sizes.push(p.len);
            soj.push(now.saturating_since(p.enqueued_at).as_nanos());
            ecn.push(p.ecn.bits());
        }
        st.collect_drops();
        Ok((
            PyBytes::new(py, &to_bytes(&ids, u64::to_le_bytes)),
            PyBytes::new(py, &to_bytes(&sizes, u32::to_le_bytes)),
            PyBytes::new(py, &to_bytes(&soj, u64::to_le_bytes)),
            PyBytes::new(py, &ecn),
        ))
    }

    /// The per-TTI RLC/MAC report (after the MAC pulled). `tti_ns` is
    /// 1 us..1 s and `next_pull_in_ns` at most 1 s, as the C ABI checks
    /// them; `next_pull_in_ns` and `pulls_per_pattern` 0 mean "not known"
    /// (read as `tti_ns` and no TDD pattern), as in `LowerLayerReport`.
    /// The MAC's view of the UE (`mcs`, `prbs`, HARQ outcomes) and the
    /// RLC's `head_of_line_age_ns` are optional (0 / `None` when the
    /// stack does not give them); `mcs` is 0..=31.
    #[pyo3(signature = (now_ns, tti_ns, backlog_bytes, backlog_sdus, pulled_bytes, granted_bytes, max_bytes, next_pull_in_ns=0, pulls_per_pattern=0, head_of_line_age_ns=0, mcs=None, prbs=0, harq_acks=0, harq_nacks=0))]
    #[allow(clippy::too_many_arguments)]
    fn report(
        &self,
        now_ns: u64,
        tti_ns: u64,
        backlog_bytes: u64,
        backlog_sdus: u32,
        pulled_bytes: u64,
        granted_bytes: u64,
        max_bytes: u64,
        next_pull_in_ns: u64,
        pulls_per_pattern: u16,
        head_of_line_age_ns: u64,
        mcs: Option<u8>,
        prbs: u32,
        harq_acks: u16,
        harq_nacks: u16,
    ) -> PyResult<()> {
        let r = LowerLayerReport {
            tti: tcran_core::Duration::from_nanos(tti_ns),
            next_pull_in: tcran_core::Duration::from_nanos(next_pull_in_ns),
            pulls_per_pattern,
            backlog_bytes,
            backlog_sdus,
            pulled_bytes,
            granted_bytes,
            max_bytes,
            head_of_line_age: tcran_core::Duration::from_nanos(head_of_line_age_ns),
            mcs,
            prbs,
            harq_acks,
            harq_nacks,
        };
        r.check().map_err(|e| ConfigError::new_err(e.to_string()))?;
        let (mut st, now) = self.at(now_ns);
        st.pipeline.on_report(&r, now);
        st.collect_drops();
        Ok(())
    }

    /// Applies controls (TOML or JSON texts) in order, all or none; one
    /// is a single control. Nothing changes if refused.
    fn control(&self, controls: Vec<String>, now_ns: u64) -> PyResult<()> {
        let mut list = controls
            .iter()
            .map(|c| parse_doc::<Control>("control", c))
            .collect::<PyResult<Vec<_>>>()?;
        let change = match list.len() {
            1 => Change::Control(list.remove(0)),
            _ => Change::Controls(list),
        };
        self.change("<control>", &change, now_ns)
    }

    /// Replaces the whole pipeline (a config as TOML or JSON text),
    /// keeping every queued packet in order. Nothing changes if refused.
    fn deploy(&self, config: &str, now_ns: u64) -> PyResult<()> {
        let config: PipelineConfig = parse_doc("config", config)?;
        self.change("<config>", &Change::Deploy(config), now_ns)
    }

    /// Per-stage statistics as JSON text.
    fn stats_json(&self, now_ns: u64) -> String {
        let (st, now) = self.at(now_ns);
        serde_json::to_string(&st.pipeline.stats(now)).expect("stats serialize")
    }

    /// Calls whose `now_ns` was before the pipeline's time (the latter was
    /// used).
    fn time_clamped(&self) -> u64 {
        self.lock().clock.clamped()
    }

    /// The running configuration as JSON text.
    fn config_json(&self) -> String {
        serde_json::to_string(&self.lock().pipeline.config()).expect("config serializes")
    }

    /// Conservation counters as JSON text.
    fn totals_json(&self) -> String {
        serde_json::to_string(&self.lock().pipeline.totals()).expect("totals serialize")
    }

    /// When `pull` may next release a packet it refuses now (ns), or None.
    fn next_wakeup(&self, now_ns: u64) -> Option<u64> {
        let st = self.lock();
        st.pipeline
            .next_wakeup(Instant::from_nanos(now_ns))
            .map(|t| t.as_nanos())
    }

    /// Every drop since the last call: (ids u64, reason indices u8) bytes.
    fn drain_dropped<'py>(&self, py: Python<'py>) -> (Bound<'py, PyBytes>, Bound<'py, PyBytes>) {
        let mut st = self.lock();
        let ids = std::mem::take(&mut st.dropped_ids);
        let reasons = std::mem::take(&mut st.dropped_reasons);
        (
            PyBytes::new(py, &to_bytes(&ids, u64::to_le_bytes)),
            PyBytes::new(py, &reasons),
        )
    }

    /// Packets and bytes queued now.
    fn backlog(&self) -> (usize, u64) {
        let st = self.lock();
        (st.pipeline.queued_packets(), st.pipeline.queued_bytes())
    }
}

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ConfigError", m.py().get_type::<ConfigError>())?;
    m.add("OutputError", m.py().get_type::<OutputError>())?;
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    m.add("GIT_COMMIT", env!("TCRAN_GIT_COMMIT"))?;
    m.add("MAX_PACKET", MAX_PACKET)?;
    m.add_class::<PyOutcome>()?;
    m.add_class::<PyPipeline>()?;
    m.add("XappError", m.py().get_type::<xapp::XappError>())?;
    m.add_class::<xapp::PyXapp>()?;
    m.add_class::<xapp::PySubscription>()?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_many, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(stages_json, m)?)?;
    m.add_function(wrap_pyfunction!(series_names, m)?)?;
    m.add_function(wrap_pyfunction!(drop_reasons, m)?)?;
    Ok(())
}
