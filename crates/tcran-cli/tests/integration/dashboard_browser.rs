//! `tcran dashboard` in a real browser (Debian's headless Chromium driven
//! over the DevTools protocol): the TC-RAN paper's Fig. 7 story watched
//! and triggered from the page.
//!
//! The test starts the dashboard (E2 and HTTP on ports the kernel picks)
//! and `tcran run scenarios/demo.toml --realtime --e2` (its `vanilla`
//! variant: one bearer, a 5 MB RLC buffer, a CUBIC download) against it,
//! then, in the page: the node is listed, the sojourn chart receives
//! points, a deploy without the token is refused (401, nothing sent), a
//! bad TOML shows `tcran validate`'s own message, and a mouse click on
//! "Deploy fq_codel+5g-bdp" deploys it: the outcome is "applied" and the
//! RLC sojourn the node reports falls below 30 ms within 2 s. A click on
//! the pacer opens its parameters as a control; one within range is
//! applied, one outside refused with the node's reason. The run's
//! reconfigurations.csv records the changes as made over E2. Last, the
//! dashboard replays the run's outputs with the time slider.
//!
//! With TCRAN_DASHBOARD_SCREENSHOTS=DIR (`make dashboard-screenshots`)
//! it also saves the screenshots of docs/dashboard.md into DIR.

#[path = "support/cdp.rs"]
mod cdp;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn tcran(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tcran"));
    c.args(args).stdin(Stdio::null());
    c
}

fn scenario(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(name)
        .display()
        .to_string()
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcran-dashboard-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Kills its process when dropped (a failed assertion must not leave
/// servers behind).
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `tcran dashboard ARGS`, the E2 address (live) and the URL it printed.
fn dashboard(args: &[&str]) -> (Running, Option<SocketAddr>, String) {
    let mut child = tcran(&["dashboard", "--http", "127.0.0.1:0", "--duration", "120s"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut e2 = None;
    let mut line = String::new();
    let url = loop {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "the dashboard ended");
        if line.contains("listening for E2 nodes on") {
            e2 = line
                .split_whitespace()
                .find_map(|w| w.parse::<SocketAddr>().ok());
        }
        if let Some(at) = line.find("http://") {
            break line[at..].split_whitespace().next().unwrap().to_string();
        }
    };
    std::thread::spawn(move || {
        let mut rest = String::new();
        while err.read_line(&mut rest).unwrap_or(0) > 0 {
            eprint!("dashboard: {rest}");
            rest.clear();
        }
    });
    (Running(child), e2, url)
}

fn shots() -> Option<PathBuf> {
    std::env::var_os("TCRAN_DASHBOARD_SCREENSHOTS").map(PathBuf::from)
}

fn number(v: serde_json::Value) -> f64 {
    v.as_f64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        .unwrap_or(f64::NAN)
}

#[test]
fn the_paper_story_is_watched_and_triggered_from_the_page() {
    let started = Instant::now();
    let (_dash, e2, url) = dashboard(&["--ric-listen", "127.0.0.1:0"]);
    let e2 = e2.expect("the E2 address");
    assert!(url.contains("?token="), "the URL carries the token: {url}");
    let out = temp_dir("run");
    let mut run = Running(
        tcran(&[
            "run",
            &scenario("demo.toml"),
            "--realtime",
            "--e2",
            &e2.to_string(),
            "--set",
            "variants=[{ name = \"vanilla\" }]",
            "--set",
            "duration=\"60s\"",
            "--set",
            "warmup=\"0s\"",
            "--json",
            "--out",
        ])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap(),
    );

    let mut b = cdp::Browser::launch(1400, 1100);
    b.navigate(&url);
    // The node the test started, listed and detailed.
    b.wait_for(
        "document.querySelectorAll('#nodes li[data-node]').length === 1",
        Duration::from_secs(10),
    );
    b.wait_for(
        "document.querySelector('#drbs li[data-drb=\"1/1\"]') !== null",
        Duration::from_secs(5),
    );
    // The sojourn chart receives points (10 per second).
    b.wait_for(
        "Number(document.getElementById('chart-sojourn').dataset.points) >= 5",
        Duration::from_secs(5),
    );
    // The token field is filled from the URL, and the URL loses it.
    assert!(b.eval("location.search").as_str().unwrap().is_empty());
    let token = b.eval("document.getElementById('token').value");
    assert_eq!(token.as_str().unwrap().len(), 32);

    // Without the token a deploy is refused before anything is sent.
    b.type_into("#token", "");
    b.click("button[data-preset=\"fq_codel+5g-bdp\"]");
    b.wait_for(
        "document.getElementById('editor-error').dataset.status === '401'",
        Duration::from_secs(5),
    );
    let refusal = b.eval("document.getElementById('editor-error').textContent");
    assert!(refusal.as_str().unwrap().contains("no token"), "{refusal}");
    assert_eq!(
        b.eval("document.querySelectorAll('#control-log li').length"),
        0,
        "a refused control is not sent"
    );

    // A bad TOML shows tcran validate's own message.
    let bad = "pacer = { kind = \"bdp\" }\n[[queues]]\nid = 0\nkind = \"codel\"\ntarget = \"5 parsecs\"\n";
    b.type_into("#editor", bad);
    b.click("#validate");
    let shown = b.wait_for(
        "(() => { const t = document.getElementById('editor-error').textContent; return t.startsWith('editor.toml:') ? t : ''; })()",
        Duration::from_secs(5),
    );
    let file = out.with_extension("bad.toml");
    std::fs::write(&file, bad).unwrap();
    let v = tcran(&["validate", "--kind", "pipeline"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(v.status.code(), Some(2));
    let cli = String::from_utf8(v.stderr).unwrap();
    let cli_message = cli.trim().split_once(".toml:").unwrap().1;
    let page_message = shown.as_str().unwrap().split_once(".toml:").unwrap().1;
    assert_eq!(
        page_message, cli_message,
        "the page and tcran validate agree"
    );
    std::fs::remove_file(&file).unwrap();
    if let Some(dir) = shots() {
        b.click("#editor");
        b.screenshot(&dir.join("dashboard-error.png"));
    }

    // The bearer bloats: the download fills the RLC buffer.
    b.type_into("#token", token.as_str().unwrap());
    b.wait_for(
        "Number(document.getElementById('chart-sojourn').dataset.last) > 60",
        Duration::from_secs(10),
    );
    if let Some(dir) = shots() {
        // A few seconds of bloat for the picture.
        b.wait_for(
            "Number(document.getElementById('chart-sojourn').dataset.last) > 500",
            Duration::from_secs(15),
        );
        b.eval("window.scrollTo(0, 0)");
        b.screenshot(&dir.join("dashboard-bloat.png"));
    }
    let before = number(b.eval("document.getElementById('chart-sojourn').dataset.last"));

    // The cure, with one click.
    b.click("button[data-preset=\"fq_codel+5g-bdp\"]");
    let clicked = Instant::now();
    b.wait_for(
        "document.querySelector('#control-log li[data-outcome=\"applied\"]') !== null",
        Duration::from_secs(5),
    );
    b.wait_for(
        "document.querySelector('#pipeline [data-stage=\"pacer\"] h4').textContent === 'pacer bdp'",
        Duration::from_secs(2),
    );
    b.wait_for(
        "Number(document.getElementById('chart-sojourn').dataset.last) < 30",
        Duration::from_secs(2).saturating_sub(clicked.elapsed()),
    );
    let cured_in = clicked.elapsed();
    eprintln!(
        "RLC sojourn {before:.0} ms before the deploy, below 30 ms {:.2} s after the click",
        cured_in.as_secs_f64()
    );
    if let Some(dir) = shots() {
        std::thread::sleep(Duration::from_secs(4));
        b.eval("window.scrollTo(0, 0)");
        b.screenshot(&dir.join("dashboard-cure.png"));
    }
    // One stage's parameters: a click on the pacer puts the control that
    // sets it, as the node runs it, in the editor; a change within range
    // is applied, one outside is refused with the node's reason.
    b.click("#pipeline [data-stage=\"pacer\"]");
    let control = b.wait_for(
        "(() => { const t = document.getElementById('editor').value; return t.includes('set_pacer') ? t : ''; })()",
        Duration::from_secs(5),
    );
    let control: serde_json::Value = serde_json::from_str(control.as_str().unwrap()).unwrap();
    assert_eq!(control["pacer"]["kind"], "bdp", "{control}");
    for (offset, outcome, count) in [(0.5, "applied", 2), (3.0, "refused", 1)] {
        let text =
            serde_json::json!({ "op": "set_pacer", "pacer": { "kind": "bdp", "offset": offset } });
        b.type_into("#editor", &text.to_string());
        b.click("#send-control");
        b.wait_for(
            &format!("document.querySelectorAll('#control-log li[data-outcome=\"{outcome}\"]').length === {count}"),
            Duration::from_secs(5),
        );
    }
    let refused =
        b.eval("document.querySelector('#control-log li[data-outcome=\"refused\"]').textContent");
    assert!(
        refused.as_str().unwrap().contains("offset"),
        "the node's reason names the field: {refused}"
    );

    let stats = b.eval("window.tcranStats");
    eprintln!("browser: {stats} (ms per push handled)");
    assert!(b.errors.is_empty(), "errors on the page: {:?}", b.errors);

    // The run ends (SIGTERM: outputs so far); the deploy is among its
    // reconfigurations, made over E2.
    let pid = run.0.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    assert!(run.0.wait().unwrap().success());
    let csv = std::fs::read_to_string(out.join("vanilla/reconfigurations.csv")).unwrap();
    assert!(
        csv.lines()
            .skip(1)
            .any(|l| l.split(',').nth(1) == Some("e2")),
        "an E2 change in reconfigurations.csv:\n{csv}"
    );

    // The same run, replayed with the time slider.
    let (_replay, _, url) = dashboard(&["--replay", out.to_str().unwrap()]);
    b.navigate(&url);
    b.wait_for(
        "Number(document.getElementById('chart-rlc')?.dataset.points) > 10",
        Duration::from_secs(5),
    );
    assert_eq!(
        b.eval("document.querySelectorAll('#reconfigurations tbody tr').length"),
        2,
        "the deploy and the pacer change"
    );
    assert!(b.eval("document.getElementById('controls').hidden") == true);
    if let Some(dir) = shots() {
        b.screenshot(&dir.join("dashboard-replay.png"));
    }
    b.eval("const s = document.getElementById('time-slider'); s.value = '2'; s.dispatchEvent(new Event('input'))");
    assert_eq!(
        b.eval("document.getElementById('time-label').textContent"),
        "t = 2.0 s"
    );
    assert!(b.errors.is_empty(), "errors on the page: {:?}", b.errors);
    let _ = std::fs::remove_dir_all(&out);
    eprintln!(
        "the browser test took {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// `--read-only` serves the page and no control route at all.
#[test]
fn read_only_serves_no_control() {
    let (_dash, _, url) = dashboard(&["--ric-listen", "127.0.0.1:0", "--read-only"]);
    assert!(!url.contains("token"), "{url}");
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let status = |req: &str| {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        s.write_all(req.as_bytes()).unwrap();
        let mut r = String::new();
        let _ = s.read_to_string(&mut r);
        r.split_whitespace().nth(1).unwrap_or("").to_string()
    };
    let body = r#"{"node":1,"rnti":1,"drb":1,"preset":"fq_codel+5g-bdp"}"#;
    let post = format!(
        "POST /api/control HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nx-tcran-token: x\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    assert_eq!(status(&post), "404");
    assert_eq!(
        status("GET /api/info HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"),
        "200"
    );
    assert_eq!(
        status("GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"),
        "200"
    );
}
