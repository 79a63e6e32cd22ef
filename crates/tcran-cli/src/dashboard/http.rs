//! The dashboard's HTTP routes (axum). The page and its assets are
//! compiled in; the API is JSON.
//!
//! | route | what |
//! |---|---|
//! | `GET /` and `/assets/*` | the page, its script and styles, uPlot and its licence |
//! | `GET /api/info` | mode (live or replay), whether controls are served, the presets |
//! | `GET /api/events?node=ID` | live: server-sent events, the hub's snapshot 10 times per second |
//! | `GET /api/replay` | replay: the run's series |
//! | `POST /api/validate` | a pipeline from the editor, checked as `tcran validate` does |
//! | `GET /api/pipeline?node=&rnti=&drb=&direction=` | a DRB's running pipeline (for the stage editor); `direction` `downlink` (default) or `uplink` |
//! | `POST /api/control` | a preset, a pipeline or one control, sent to a DRB over E2 |
//!
//! The last three exist only in live mode without `--read-only`, and the
//! last two need the token (`X-Tcran-Token`).

use super::hub::Outcome;
use super::{lock, presets, App, PERIOD};
use crate::load::{Source, Syntax};
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;
use std::convert::Infallible;
use tcran_control::{Direction, DrbKey};
use tcran_core::{DrbId, Rnti};
use tcran_tc::{Change, Control, PipelineConfig};
use tcran_xapp::{ControlOutcome, NodeId};

const INDEX: &str = include_str!("assets/index.html");
const APP_JS: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/style.css");
const UPLOT_JS: &str = include_str!("assets/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("assets/uPlot.min.css");
const UPLOT_LICENSE: &str = include_str!("assets/uPlot.LICENSE");

/// Serves `app` on `listener` until the runtime ends.
pub(crate) async fn serve(listener: tokio::net::TcpListener, app: App) {
    let live_controls = app.xapp.is_some() && app.token.is_some();
    let mut r = Router::new()
        .route("/", get(|| async { asset("text/html", INDEX) }))
        .route(
            "/assets/app.js",
            get(|| async { asset("text/javascript", APP_JS) }),
        )
        .route(
            "/assets/style.css",
            get(|| async { asset("text/css", STYLE) }),
        )
        .route(
            "/assets/uPlot.iife.min.js",
            get(|| async { asset("text/javascript", UPLOT_JS) }),
        )
        .route(
            "/assets/uPlot.min.css",
            get(|| async { asset("text/css", UPLOT_CSS) }),
        )
        .route(
            "/assets/uPlot.LICENSE",
            get(|| async { asset("text/plain", UPLOT_LICENSE) }),
        )
        .route("/api/info", get(info));
    if app.replay.is_some() {
        r = r.route("/api/replay", get(replay));
    } else {
        r = r.route("/api/events", get(events));
    }
    if live_controls {
        r = r
            .route("/api/validate", post(validate))
            .route("/api/pipeline", get(pipeline))
            .route("/api/control", post(control));
    }
    let _ = axum::serve(listener, r.with_state(app)).await;
}

fn asset(kind: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, format!("{kind}; charset=utf-8")),
            // The binary is the version: a new tcran must not meet a
            // browser's cached page of the old one.
            (header::CACHE_CONTROL, "no-cache".to_string()),
        ],
        body,
    )
        .into_response()
}

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({ "error": message.into() }))).into_response()
}

async fn info(State(app): State<App>) -> Response {
    let controls = app.xapp.is_some() && app.token.is_some();
    Json(json!({
        "mode": if app.replay.is_some() { "replay" } else { "live" },
        "controls": controls,
        "period_ms": PERIOD.as_millis() as u64,
        "presets": if controls { presets::PRESETS.to_vec() } else { Vec::new() },
        "version": env!("CARGO_PKG_VERSION"),
    }))
    .into_response()
}

async fn replay(State(app): State<App>) -> Response {
    match &app.replay {
        Some(r) => Json(&**r).into_response(),
        None => error(StatusCode::NOT_FOUND, "not a replay"),
    }
}

#[derive(Deserialize)]
struct Selected {
    node: Option<NodeId>,
}

/// One browser's stream: at each tick the newest snapshot. When the
/// browser reads slowly the stream is not polled, ticks pass (skipped,
/// never queued) and the next push is the state of that moment.
struct Feed {
    app: App,
    selected: Option<NodeId>,
    tick: tokio::time::Interval,
    last: Option<tokio::time::Instant>,
    skipped: u64,
}

async fn events(State(app): State<App>, Query(q): Query<Selected>) -> Response {
    let mut tick = tokio::time::interval(PERIOD);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let feed = Feed {
        app,
        selected: q.node,
        tick,
        last: None,
        skipped: 0,
    };
    let stream = futures_util::stream::unfold(feed, |mut f| async move {
        f.tick.tick().await;
        let now = tokio::time::Instant::now();
        if let Some(last) = f.last {
            // A gap of k periods means k - 1 pushes this browser missed.
            let gaps = (now - last).as_millis() / PERIOD.as_millis();
            f.skipped += (gaps as u64).saturating_sub(1);
        }
        f.last = Some(now);
        let data = {
            let hub = lock(&f.app.hub);
            serde_json::to_string(&hub.snapshot(f.selected, f.skipped))
                .expect("a snapshot serializes")
        };
        Some((Ok::<_, Infallible>(Event::default().data(data)), f))
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// A pipeline as the page's editor holds it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Text {
    text: String,
    /// `toml` or `json`.
    syntax: String,
}

/// Parses and builds a pipeline from the editor with `tcran validate`'s
/// code, so the page shows the same messages (the file is called
/// `editor.toml` or `editor.json`).
fn parse_pipeline(t: &Text) -> Result<PipelineConfig, String> {
    let syntax = match t.syntax.as_str() {
        "toml" => Syntax::Toml,
        "json" => Syntax::Json,
        other => return Err(format!("syntax {other:?}: expected \"toml\" or \"json\"")),
    };
    let src = Source {
        name: format!("editor.{}", t.syntax),
        text: t.text.clone(),
        syntax,
    };
    crate::validate::pipeline(&src, &[]).map_err(|e| e.one_line())
}

async fn validate(Json(t): Json<Text>) -> Response {
    match parse_pipeline(&t) {
        Ok(p) => Json(json!({ "ok": true, "summary": crate::validate::pipeline_summary(&p) }))
            .into_response(),
        Err(e) => Json(json!({ "ok": false, "error": e })).into_response(),
    }
}

/// Constant-time comparison, so the token cannot be guessed byte by byte
/// from response times.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether the request carries the token; else the refusal to answer.
fn authorized(app: &App, headers: &HeaderMap) -> Result<(), (StatusCode, &'static str)> {
    let Some(token) = &app.token else {
        return Err((StatusCode::FORBIDDEN, "read-only: no control"));
    };
    match headers.get("x-tcran-token") {
        Some(given) if same(given.as_bytes(), token.as_bytes()) => Ok(()),
        Some(_) => Err((
            StatusCode::UNAUTHORIZED,
            "wrong token: use the one tcran dashboard printed at start",
        )),
        None => Err((
            StatusCode::UNAUTHORIZED,
            "no token: a control needs the token tcran dashboard printed at start (the URL's ?token=)",
        )),
    }
}

#[derive(Deserialize)]
struct DrbQuery {
    node: NodeId,
    rnti: u16,
    drb: u8,
    #[serde(default)]
    direction: Direction,
}

async fn pipeline(
    State(app): State<App>,
    headers: HeaderMap,
    Query(q): Query<DrbQuery>,
) -> Response {
    if let Err((status, why)) = authorized(&app, &headers) {
        return error(status, why);
    }
    let Some(x) = &app.xapp else {
        return error(StatusCode::NOT_FOUND, "not live");
    };
    let drb = DrbKey {
        rnti: Rnti(q.rnti),
        drb: DrbId(q.drb),
        dir: q.direction,
    };
    match x.pipeline(q.node, drb).await {
        Ok(p) => Json(p).into_response(),
        Err(e) => error(StatusCode::BAD_GATEWAY, e.to_string()),
    }
}

/// What the page asks a DRB to do: exactly one of a preset, a pipeline
/// from the editor, or one control (`{"op": ...}`, docs/pipeline.md).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ControlRequest {
    node: NodeId,
    rnti: u16,
    drb: u8,
    /// `downlink` (default) or `uplink` (the UE's pipeline).
    #[serde(default)]
    direction: Direction,
    preset: Option<String>,
    pipeline: Option<Text>,
    control: Option<serde_json::Value>,
}

fn change_of(r: &ControlRequest) -> Result<(String, Change), String> {
    match (&r.preset, &r.pipeline, &r.control) {
        (Some(name), None, None) => Ok((
            format!("deploy preset {name}"),
            Change::Deploy(presets::pipeline(name)?),
        )),
        (None, Some(t), None) => Ok((
            "deploy pipeline from the editor".into(),
            Change::Deploy(parse_pipeline(t)?),
        )),
        (None, None, Some(v)) => {
            let c: Control =
                serde_json::from_value(v.clone()).map_err(|e| format!("control: {e}"))?;
            let op = v.get("op").and_then(|o| o.as_str()).unwrap_or("control");
            Ok((op.to_string(), Change::Control(c)))
        }
        _ => Err("give exactly one of `preset`, `pipeline` and `control`".into()),
    }
}

async fn control(State(app): State<App>, headers: HeaderMap, body: String) -> Response {
    if let Err((status, why)) = authorized(&app, &headers) {
        return error(status, why);
    }
    let Some(x) = &app.xapp else {
        return error(StatusCode::NOT_FOUND, "not live");
    };
    let req: ControlRequest = match serde_json::from_str(&body) {
        Ok(r) => r,
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("request: {e}")),
    };
    let (what, change) = match change_of(&req) {
        Ok(c) => c,
        Err(e) => return error(StatusCode::UNPROCESSABLE_ENTITY, e),
    };
    if lock(&app.hub).node_name(req.node).is_none() {
        return error(
            StatusCode::NOT_FOUND,
            format!("no node {} is connected", req.node),
        );
    }
    let drb = DrbKey {
        rnti: Rnti(req.rnti),
        drb: DrbId(req.drb),
        dir: req.direction,
    };
    let id = lock(&app.hub).control_sent(req.node, drb, what);
    let (outcome, reason, pipeline) = match x.control(req.node, drb, &change).await {
        Ok(ControlOutcome::Applied(p)) => (Outcome::Applied, None, Some(p)),
        Ok(ControlOutcome::Refused(why)) => (Outcome::Refused, Some(why), None),
        Err(e) => (Outcome::Failed, Some(e.to_string()), None),
    };
    lock(&app.hub).settle(id, outcome.clone(), reason.clone());
    Json(json!({
        "id": id,
        "outcome": outcome,
        "reason": reason,
        "pipeline": pipeline,
    }))
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_editor_pipeline_gets_the_messages_of_tcran_validate() {
        let bad = Text {
            text: "[[queues]]\nid = 0\nkind = \"codel\"\ntarget = \"5 parsecs\"\n".into(),
            syntax: "toml".into(),
        };
        let e = parse_pipeline(&bad).unwrap_err();
        assert!(e.starts_with("editor.toml:4:"), "{e}");
        let ok = Text {
            text: presets::PRESETS[0].toml.into(),
            syntax: "toml".into(),
        };
        parse_pipeline(&ok).unwrap();
    }

    #[test]
    fn a_request_names_exactly_one_change() {
        let r: ControlRequest =
            serde_json::from_str(r#"{"node":1,"rnti":1,"drb":1,"preset":"l4s-dualq","control":{"op":"set_total_limit"}}"#)
                .unwrap();
        assert!(change_of(&r).unwrap_err().contains("exactly one"));
        let r: ControlRequest = serde_json::from_str(
            r#"{"node":1,"rnti":1,"drb":1,"control":{"op":"set_pacer","pacer":{"kind":"bdp"}}}"#,
        )
        .unwrap();
        assert_eq!(change_of(&r).unwrap().0, "set_pacer");
        assert_eq!(r.direction, Direction::Downlink);
        let r: ControlRequest = serde_json::from_str(
            r#"{"node":1,"rnti":1,"drb":1,"direction":"uplink","preset":"l4s-dualq"}"#,
        )
        .unwrap();
        assert_eq!(r.direction, Direction::Uplink);
    }

    /// A browser's request is outside input: whatever it holds is an
    /// error message, never a panic and never a change.
    #[test]
    fn hostile_requests_are_refused_with_a_reason() {
        let deep = format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000));
        for body in [
            r#"{"node":1,"rnti":1,"drb":1,"preset":"no such preset"}"#,
            r#"{"node":1,"rnti":1,"drb":1}"#,
            r#"{"node":1,"rnti":1,"drb":1,"pipeline":{"text":"\u0000","syntax":"toml"}}"#,
            r#"{"node":1,"rnti":1,"drb":1,"pipeline":{"text":"[[queues]]","syntax":"yaml"}}"#,
            r#"{"node":1,"rnti":1,"drb":1,"pipeline":{"text":"{\"queues\":[{\"id\":0,\"kind\":\"codel\",\"target\":\"1e400ms\"}]}","syntax":"json"}}"#,
            r#"{"node":1,"rnti":1,"drb":1,"control":{"op":"launch_missiles"}}"#,
            r#"{"node":1,"rnti":1,"drb":1,"control":[]}"#,
        ] {
            let r: ControlRequest =
                serde_json::from_str(body).unwrap_or_else(|e| panic!("{body}: {e}"));
            let e = change_of(&r).unwrap_err();
            assert!(!e.is_empty(), "{body}");
        }
        for body in [
            r#"{"node":1,"rnti":70000,"drb":1,"preset":"l4s-dualq"}"#,
            r#"{"node":-1,"rnti":1,"drb":1}"#,
            r#"{"node":1,"rnti":1,"drb":1,"extra":true}"#,
            "\u{0}",
            deep.as_str(),
        ] {
            assert!(
                serde_json::from_str::<ControlRequest>(body).is_err(),
                "{body}"
            );
        }
    }

    #[test]
    fn the_token_compares_whole() {
        assert!(same(b"abcd", b"abcd"));
        assert!(!same(b"abcd", b"abce"));
        assert!(!same(b"abc", b"abcd"));
    }
}
