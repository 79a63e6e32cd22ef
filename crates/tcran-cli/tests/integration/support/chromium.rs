//! Loads a page in Debian's headless Chromium and returns the DOM after
//! the page's scripts ran (`--dump-dom`), and Chromium's log (console
//! messages included). Installed by `scripts/ensure-chromium.sh`, which
//! `make test` runs first.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The Chromium binary: `$TCRAN_CHROMIUM`, else Debian's `/usr/bin/chromium`.
pub fn chromium() -> PathBuf {
    let path = std::env::var_os("TCRAN_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if !path.exists() {
        let ci = std::env::var("CI").is_ok_and(|v| v == "true");
        panic!(
            "{} not found: the report tests need Debian's headless Chromium{}. Install it with \
             `sudo scripts/ensure-chromium.sh` (apt-get install chromium), or run `make test`, \
             which does; TCRAN_CHROMIUM=/path/to/chromium picks another binary.",
            path.display(),
            if ci {
                " (CI=true: the test setup should have installed it)"
            } else {
                ""
            }
        );
    }
    path
}

/// How every test starts Chromium: headless, no sandbox (root in CI), no
/// GPU, nothing of a user's browser (sync, extensions, first-run pages).
pub const HEADLESS: [&str; 9] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-extensions",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
];

/// What the browser made of a page.
#[derive(Debug)]
pub struct Loaded {
    pub dom: String,
    pub log: String,
}

/// Opens `page` (an HTML file) with networking off and returns the DOM.
pub fn load(page: &Path) -> Loaded {
    // One profile per load: Chromium instances must not share one.
    static LOADS: AtomicUsize = AtomicUsize::new(0);
    let profile = std::env::temp_dir().join(format!(
        "tcran-chromium-profile-{}-{}",
        std::process::id(),
        LOADS.fetch_add(1, Ordering::Relaxed)
    ));
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    let mut child = Command::new(chromium())
        .args(HEADLESS)
        .args([
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,2000",
            // Nothing may be fetched: every resource is inline.
            "--proxy-server=127.0.0.1:9",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(&url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        out.read_to_string(&mut s).unwrap();
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("chromium did not finish loading {url} within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let dom = reader.join().unwrap();
    let log = err_reader.join().unwrap();
    let _ = std::fs::remove_dir_all(&profile);
    assert!(
        dom.contains("</html>"),
        "chromium printed no DOM for {url}; its log:\n{log}"
    );
    Loaded { dom, log }
}

/// The text of the element with `id` (no nested elements expected).
pub fn text_of<'a>(dom: &'a str, id: &str) -> Option<&'a str> {
    let at = dom.find(&format!("id=\"{id}\""))?;
    let start = at + dom[at..].find('>')? + 1;
    let len = dom[start..].find('<')?;
    Some(&dom[start..start + len])
}
