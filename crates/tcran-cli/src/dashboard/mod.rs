//! `tcran dashboard`: a web page that shows every node's DRBs live (the
//! pipeline drawn from the node's own reports, RLC occupancy and sojourn,
//! throughput, drops and marks, PRBs and MCS, KPM) and deploys pipelines
//! from the browser; or, with `--replay OUT_DIR`, a finished run's series
//! with a time slider. docs/dashboard.md is the user's guide.
//!
//! ```text
//!  E2 nodes --E2SM-TCRAN reports, 10/s--> node tasks --> Hub (one latest
//!  (tcran run --realtime --e2,            (xApp SDK)     state per node)
//!   tcran emulate --e2, any E2SM-TCRAN node)                 |
//!                                     browser <--SSE, 10/s-- snapshot of the hub
//!                                     browser --POST /api/control + token--> E2 control
//! ```
//!
//! Contract:
//! - It is an xApp like `tcran xapp`: it listens for E2 nodes
//!   (`--ric-listen`, framed TCP or TLS with client certificates) and
//!   subscribes to each node's E2SM-TCRAN reports every 100 ms (and its
//!   E2SM-KPM measurements every second when it offers KPM).
//! - HTTP on `--http` (default 127.0.0.1:8080: this machine only unless
//!   told). Every asset (page, script, styles, uPlot and its licence) is
//!   compiled into the binary; the page loads nothing from elsewhere.
//! - Server push: server-sent events at 10 per second per browser, each
//!   the newest state ([`hub`]): a browser that reads slowly misses pushes
//!   (counted, shown on the page), it never gets a growing backlog.
//! - Controls (deploy a preset or a pipeline from the editor, change one
//!   stage) need the token printed at start (`X-Tcran-Token`); without
//!   it they are refused (401) and nothing is sent. `--read-only` serves
//!   no control route at all. Each control is one E2SM-TCRAN control; its
//!   outcome (applied, refused with the node's reason, failed) is shown on
//!   the page and the node records it (`reconfigurations.csv`, `by = e2`).
//! - A pipeline from the editor is checked with `tcran validate`'s code
//!   (the same messages) before anything is sent.

mod flexric;
mod http;
pub mod hub;
pub mod presets;
pub mod replay;

use crate::error::CliError;
use hub::Hub;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tcran_xapp::{KpmQuery, NodeEvent, NodeInfo, Trigger, Xapp, XappConfig};

/// How often a node reports and a browser is pushed: 10 per second.
pub const PERIOD: std::time::Duration = std::time::Duration::from_millis(100);

/// What `tcran dashboard` was asked.
#[derive(Debug, Clone)]
pub struct Args {
    /// Where E2 nodes connect (none with `replay`).
    pub ric_listen: Option<String>,
    pub tls: Option<(PathBuf, PathBuf, PathBuf)>,
    pub http: String,
    pub read_only: bool,
    pub replay: Option<PathBuf>,
    pub duration: Option<String>,
    pub max_connections: usize,
}

/// Where a started dashboard is.
#[derive(Debug, Clone)]
pub struct Started {
    /// Where E2 nodes connect (live mode).
    pub e2: Option<std::net::SocketAddr>,
    pub http: std::net::SocketAddr,
    /// The control token (live mode without `--read-only`).
    pub token: Option<String>,
}

impl Started {
    /// The URL to open: with the token, so that the page may send controls.
    pub fn url(&self) -> String {
        match &self.token {
            Some(t) => format!("http://{}/?token={t}", self.http),
            None => format!("http://{}/", self.http),
        }
    }
}

fn say(line: &str) {
    let mut e = std::io::stderr().lock();
    let _ = writeln!(e, "{line}");
}

fn socket_addr(flag: &str, text: &str, example: &str) -> Result<std::net::SocketAddr, CliError> {
    use std::net::ToSocketAddrs;
    text.to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| {
            CliError::Usage(format!(
                "{flag} {text}: not an address: expected HOST:PORT, e.g. {example}"
            ))
        })
}

/// 128 bits from the operating system, as 32 hex digits.
fn new_token() -> Result<String, CliError> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b)
        .map_err(|e| CliError::System(format!("cannot draw the control token: {e}")))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// What the HTTP server serves from.
#[derive(Debug, Clone)]
pub(crate) struct App {
    pub hub: Arc<Mutex<Hub>>,
    /// The E2 termination (live mode).
    pub xapp: Option<Xapp>,
    /// `None`: no control is served.
    pub token: Option<Arc<str>>,
    pub replay: Option<Arc<replay::Replay>>,
}

pub(crate) fn lock(hub: &Mutex<Hub>) -> std::sync::MutexGuard<'_, Hub> {
    hub.lock().unwrap_or_else(|p| p.into_inner())
}

/// Checks the arguments, opens the listeners and starts serving on the
/// current tokio runtime; returns where it listens. The tasks run until
/// the runtime ends.
pub async fn start(args: &Args) -> Result<Started, CliError> {
    let http_addr = socket_addr("--http", &args.http, "127.0.0.1:8080")?;
    let replay = args
        .replay
        .as_ref()
        .map(|dir| replay::Replay::read(dir).map(Arc::new))
        .transpose()?;
    let hub = Arc::new(Mutex::new(Hub::default()));
    let (xapp, e2) = match (&replay, &args.ric_listen) {
        (Some(_), _) => (None, None),
        (None, None) => {
            return Err(CliError::Usage(
                "give --ric-listen ADDR (where E2 nodes connect, e.g. 127.0.0.1:36421) or --replay OUT_DIR".into(),
            ))
        }
        (None, Some(listen)) => {
            let cfg = xapp_config(args, listen)?;
            let x = Xapp::start(cfg)
                .await
                .map_err(|e| CliError::Xapp(e.to_string()))?;
            // Events before anyone learns the address: a node that
            // connects at once must not be missed.
            let events = x.events();
            tokio::spawn(follow_nodes(x.clone(), events, hub.clone()));
            let addr = x.local_addrs()[0];
            (Some(x), Some(addr))
        }
    };
    let token = if xapp.is_some() && !args.read_only {
        Some(new_token()?)
    } else {
        None
    };
    let listener = tokio::net::TcpListener::bind(http_addr)
        .await
        .map_err(|e| {
            CliError::Usage(format!(
                "--http {}: cannot listen: {}",
                args.http,
                tcran_core::text_file::without_os_code(&e.to_string())
            ))
        })?;
    let http = listener
        .local_addr()
        .map_err(|e| CliError::System(format!("--http {}: {e}", args.http)))?;
    let app = App {
        hub,
        xapp,
        token: token.as_deref().map(Arc::from),
        replay,
    };
    tokio::spawn(http::serve(listener, app));
    Ok(Started { e2, http, token })
}

fn xapp_config(args: &Args, listen: &str) -> Result<XappConfig, CliError> {
    let addr = socket_addr("--ric-listen", listen, "127.0.0.1:36421")?;
    if args.max_connections == 0 {
        return Err(CliError::Usage(
            "--max-connections 0: at least 1 (one association per E2 node)".into(),
        ));
    }
    let mut cfg = XappConfig::tcp(addr);
    cfg.max_connections = args.max_connections;
    if let Some((ca, cert, key)) = &args.tls {
        let pem = tcran_e2::transport::TlsPem::read(ca, cert, key).map_err(|e| CliError::Read {
            file: e.file,
            reason: e.error.to_string(),
        })?;
        let tls = tcran_e2::transport::tls_server_config(&pem)
            .map_err(|e| CliError::Usage(format!("--tls-ca/--tls-cert/--tls-key: {e}")))?;
        cfg.listen[0].transport = tcran_xapp::ListenTransport::Tls(tls);
    }
    Ok(cfg)
}

/// Prints where the dashboard is: the E2 address first (as `tcran xapp`
/// does), then the URL.
pub fn announce(args: &Args, s: &Started) {
    if let Some(e2) = s.e2 {
        say(&format!(
            "tcran dashboard: listening for E2 nodes on {e2} ({})",
            if args.tls.is_some() {
                "TLS"
            } else {
                "framed TCP"
            }
        ));
    }
    if let Some(dir) = &args.replay {
        say(&format!("tcran dashboard: replaying {}", dir.display()));
    }
    let mode = if s.token.is_some() {
        "controls need the token in this URL"
    } else {
        "read-only"
    };
    say(&format!("tcran dashboard: open {} ({mode})", s.url()));
    if !s.http.ip().is_loopback() {
        say(&format!(
            "warning: --http {}: the dashboard is reachable from other machines{}",
            s.http,
            if s.token.is_some() {
                "; anyone with the token can reconfigure the nodes"
            } else {
                ""
            }
        ));
    }
}

/// `tcran dashboard`: serves until `--duration` or Ctrl-C.
pub fn run(args: &Args) -> Result<(), CliError> {
    let stop_after = args
        .duration
        .as_deref()
        .map(|d| crate::emulate::duration("--duration", d))
        .transpose()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::Xapp(format!("cannot start the runtime: {e}")))?;
    rt.block_on(async {
        let s = start(args).await?;
        announce(args, &s);
        let forever = std::future::pending::<()>();
        match stop_after {
            Some(d) => {
                let _ =
                    tokio::time::timeout(std::time::Duration::from_nanos(d.as_nanos()), forever)
                        .await;
            }
            None => forever.await,
        }
        Ok(())
    })
}

/// Lists nodes as they come and go, and watches each.
async fn follow_nodes(
    x: Xapp,
    mut events: tokio::sync::broadcast::Receiver<NodeEvent>,
    hub: Arc<Mutex<Hub>>,
) {
    let mut early: std::collections::VecDeque<NodeEvent> =
        x.nodes().into_iter().map(NodeEvent::Connected).collect();
    let mut watched = std::collections::BTreeSet::new();
    loop {
        let ev = match early.pop_front() {
            Some(e) => e,
            None => match events.recv().await {
                Ok(e) => e,
                // Missed events: the registry is the truth.
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                    early.extend(x.nodes().into_iter().map(NodeEvent::Connected));
                    continue;
                }
                Err(_) => return,
            },
        };
        match ev {
            NodeEvent::Connected(n) => {
                if watched.insert(n.id) {
                    lock(&hub).connected(&n);
                    tokio::spawn(watch_node(x.clone(), n, hub.clone()));
                }
            }
            NodeEvent::Disconnected { id, name, cause } => {
                if watched.remove(&id) {
                    lock(&hub).disconnected(id);
                    say(&format!("node {id} ({name}) disconnected: {cause}"));
                }
            }
            NodeEvent::Refused { peer, cause } => say(&format!("refused {peer}: {cause}")),
            NodeEvent::ErrorIndication { id, what } => {
                say(&format!("node {id} sent an Error Indication: {what}"))
            }
        }
    }
}

/// Keeps the hub's slot of one node filled with its newest reports.
async fn watch_node(x: Xapp, n: NodeInfo, hub: Arc<Mutex<Hub>>) {
    let period_ms = PERIOD.as_millis() as u32;
    if n.tc_function().is_none() {
        if let Some(function) = flexric::function(&n) {
            return watch_flexric(x, n, function, hub).await;
        }
    }
    let mut tc = match x
        .subscribe_tc(n.id, Trigger::Periodic { period_ms }, &[])
        .await
    {
        Ok(s) => s,
        Err(e) => return say(&format!("node {} ({}): {e}", n.id, n.name)),
    };
    // KPM is optional: a node without it still shows its pipelines.
    let mut kpm = match n.kpm_function() {
        Some(_) => x
            .subscribe_kpm(
                n.id,
                &KpmQuery {
                    style: 1,
                    names: tcran_e2::sm::kpm::MEASUREMENTS
                        .iter()
                        .map(|s| s.to_string())
                        .collect(),
                    granularity_ms: 1000,
                    report_ms: 1000,
                },
            )
            .await
            .map_err(|e| say(&format!("node {} ({}): KPM: {e}", n.id, n.name)))
            .ok(),
        None => None,
    };
    loop {
        tokio::select! {
            ind = tc.recv() => match ind {
                Some(ind) => lock(&hub).report(n.id, ind),
                None => break,
            },
            Some(r) = async { match kpm.as_mut() { Some(k) => k.recv().await, None => None } } => {
                lock(&hub).kpm(n.id, r);
            }
        }
    }
    lock(&hub).disconnected(n.id);
}

/// [`watch_node`] for a node with FlexRIC's TC model only ([`flexric`]).
async fn watch_flexric(x: Xapp, n: NodeInfo, function: u16, hub: Arc<Mutex<Hub>>) {
    let drb = n
        .drbs
        .first()
        .copied()
        .unwrap_or(tcran_control::DrbKey::new(1, 1));
    let trigger = flexric::trigger(PERIOD.as_millis() as u32);
    let mut sub = match x.subscribe_raw(n.id, function, trigger, None).await {
        Ok(s) => s,
        Err(e) => return say(&format!("node {} ({}): FlexRIC TC: {e}", n.id, n.name)),
    };
    // A report that does not decode is counted and said at the 1st, 2nd,
    // 4th, ... (a line per doubling, not one per report).
    let mut bad = 0u64;
    while let Some(ind) = sub.recv().await {
        match flexric::indication(drb, &ind.message) {
            Ok(r) => lock(&hub).report(n.id, r),
            Err(e) => {
                bad += 1;
                if bad.is_power_of_two() {
                    say(&format!(
                        "node {} ({}): {bad} FlexRIC TC report(s) that do not decode, the last: {e}",
                        n.id, n.name
                    ));
                }
            }
        }
    }
    lock(&hub).disconnected(n.id);
}

/// `tcran demo --live`: the demo's `vanilla` variant (the bloating
/// bearer) for `duration` in real time, an E2 node of a dashboard served
/// on `http`; the user watches the RLC buffer fill and deploys a cure
/// from the page. Returns the run for `tcran demo`'s outputs.
pub fn demo_live(http: &str, duration: &str) -> Result<crate::realtime::Realtime, CliError> {
    use crate::set::Override;
    let d = crate::emulate::duration("--duration", duration)?;
    let args = Args {
        ric_listen: Some("127.0.0.1:0".into()),
        tls: None,
        http: http.to_string(),
        read_only: false,
        replay: None,
        duration: None,
        max_connections: tcran_xapp::server::DEFAULT_MAX_CONNECTIONS,
    };
    // The dashboard runs on the runtime's workers while this thread runs
    // the real-time loop.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::Xapp(format!("cannot start the runtime: {e}")))?;
    let started = rt.block_on(start(&args))?;
    announce(&args, &started);
    open_in_browser(&started.url());
    let e2 = started.e2.expect("a live dashboard listens for E2");
    let sets = [
        "variants=[{ name = \"vanilla\" }]".to_string(),
        format!("duration=\"{}ms\"", d.as_nanos() / 1_000_000),
        "warmup=\"0s\"".to_string(),
    ]
    .iter()
    .map(|s| Override::parse(s).map_err(|e| CliError::Usage(format!("--set {s}: {e}"))))
    .collect::<Result<Vec<_>, _>>()?;
    let src = crate::load::Source {
        name: "scenarios/demo.toml (embedded)".into(),
        text: crate::simulate::DEMO.into(),
        syntax: crate::load::Syntax::Toml,
    };
    let e2 = tcran_emu::e2::E2Options {
        addr: e2.to_string(),
        transport: tcran_emu::e2::E2Transport::Tcp,
        tls: tcran_emu::e2::TlsFiles::default(),
        tc_drb: None,
        profile: tcran_e2::RicProfile::Standard,
        verbose: false,
    };
    say(&format!(
        "tcran demo --live: the demo's vanilla bearer for {duration} in real time; \
         open the page, watch the RLC sojourn climb, press \"Deploy fq_codel+5g-bdp\"; Ctrl-C ends it"
    ));
    let opts = crate::simulate::Options {
        sets: &sets,
        ..crate::simulate::Options::default()
    };
    let r = crate::realtime::run_source("demo", &src, std::path::Path::new("."), opts, Some(&e2));
    rt.shutdown_background();
    r
}

/// Opens `url` in the desktop's browser (`xdg-open`) when there is a
/// desktop and a person at the terminal; otherwise the printed URL is all.
fn open_in_browser(url: &str) {
    use std::io::IsTerminal;
    let desktop =
        std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some();
    if desktop && std::io::stderr().is_terminal() {
        let _ = std::process::Command::new("xdg-open")
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
    }
}
