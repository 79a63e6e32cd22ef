//! A few lines of the Chrome DevTools Protocol over a WebSocket: enough to
//! open a page in Debian's headless Chromium, read it with JavaScript,
//! click with the mouse (real input events at an element's place), type
//! and take screenshots. One browser per [`Browser`], its own profile and
//! its own debugging port (port 0: Chromium picks one and says which).

use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tungstenite::{Message, WebSocket};

pub struct Browser {
    child: Child,
    ws: WebSocket<TcpStream>,
    next_id: u64,
    session: String,
    profile: PathBuf,
    /// Uncaught exceptions and console errors of the page.
    pub errors: Vec<String>,
}

impl Browser {
    /// Starts Chromium with a `width` x `height` window and one blank page.
    pub fn launch(width: u32, height: u32) -> Browser {
        let profile = std::env::temp_dir().join(format!(
            "tcran-cdp-profile-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&profile);
        let mut child = Command::new(crate::chromium::chromium())
            .args(crate::chromium::HEADLESS)
            .args([
                "--remote-debugging-port=0",
                "--remote-debugging-address=127.0.0.1",
                &format!("--window-size={width},{height}"),
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("chromium starts");
        // "DevTools listening on ws://127.0.0.1:PORT/devtools/browser/ID"
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut url = None;
        let mut seen = String::new();
        let mut line = String::new();
        while err.read_line(&mut line).unwrap_or(0) > 0 {
            if let Some(at) = line.find("ws://") {
                url = Some(line[at..].trim().to_string());
                break;
            }
            seen.push_str(&line);
            line.clear();
        }
        let url = url.unwrap_or_else(|| panic!("chromium printed no DevTools address:\n{seen}"));
        // The rest of its log is not read: drain it so it never blocks.
        std::thread::spawn(move || {
            let mut sink = String::new();
            while err.read_line(&mut sink).unwrap_or(0) > 0 {
                sink.clear();
            }
        });
        let host = url
            .trim_start_matches("ws://")
            .split('/')
            .next()
            .unwrap()
            .to_string();
        let stream = TcpStream::connect(&host).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let (ws, _) = tungstenite::client(url.as_str(), stream).expect("DevTools handshake");
        let mut b = Browser {
            child,
            ws,
            next_id: 1,
            session: String::new(),
            profile,
            errors: Vec::new(),
        };
        let target = b.call_browser("Target.createTarget", json!({ "url": "about:blank" }));
        let target_id = target["targetId"].as_str().unwrap().to_string();
        let attached = b.call_browser(
            "Target.attachToTarget",
            json!({ "targetId": target_id, "flatten": true }),
        );
        b.session = attached["sessionId"].as_str().unwrap().to_string();
        b.call("Page.enable", json!({}));
        b.call("Runtime.enable", json!({}));
        b.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": false }),
        );
        b
    }

    fn send(&mut self, method: &str, params: Value, session: bool) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if session {
            msg["sessionId"] = json!(self.session);
        }
        self.ws.send(Message::text(msg.to_string())).unwrap();
        loop {
            let m = self.ws.read().expect("DevTools answers");
            let Message::Text(text) = m else { continue };
            let v: Value = serde_json::from_str(text.as_str()).unwrap();
            if v["id"].as_u64() == Some(id) {
                if let Some(e) = v.get("error") {
                    panic!("{method}: {e}");
                }
                return v["result"].clone();
            }
            self.note_event(&v);
        }
    }

    fn note_event(&mut self, v: &Value) {
        match v["method"].as_str() {
            Some("Runtime.exceptionThrown") => self
                .errors
                .push(v["params"]["exceptionDetails"].to_string()),
            Some("Runtime.consoleAPICalled") if v["params"]["type"] == "error" => {
                self.errors.push(v["params"]["args"].to_string())
            }
            _ => {}
        }
    }

    fn call_browser(&mut self, method: &str, params: Value) -> Value {
        self.send(method, params, false)
    }

    /// A command to the page.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.send(method, params, true)
    }

    /// Opens `url` and waits until its document has loaded.
    pub fn navigate(&mut self, url: &str) {
        self.call("Page.navigate", json!({ "url": url }));
        self.wait_for(
            "document.readyState === 'complete'",
            Duration::from_secs(10),
        );
    }

    /// The value of a JavaScript expression (promises awaited).
    pub fn eval(&mut self, js: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({ "expression": js, "returnByValue": true, "awaitPromise": true }),
        );
        if let Some(e) = r.get("exceptionDetails") {
            panic!("{js}: {e}");
        }
        r["result"]["value"].clone()
    }

    /// Polls `js` every 50 ms until it is truthy; its value. Panics after
    /// `timeout`, naming the expression.
    pub fn wait_for(&mut self, js: &str, timeout: Duration) -> Value {
        let started = Instant::now();
        loop {
            let v = self.eval(js);
            let truthy = match &v {
                Value::Null => false,
                Value::Bool(b) => *b,
                Value::Number(n) => n.as_f64() != Some(0.0),
                Value::String(s) => !s.is_empty(),
                _ => true,
            };
            if truthy {
                return v;
            }
            if started.elapsed() > timeout {
                panic!("not true within {timeout:?}: {js}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Clicks the middle of the element `selector` with the mouse.
    pub fn click(&mut self, selector: &str) {
        let sel = serde_json::to_string(selector).unwrap();
        let at = self.eval(&format!(
            "(() => {{ const e = document.querySelector({sel}); if (!e) return null; \
             e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); \
             return [r.x + r.width / 2, r.y + r.height / 2]; }})()"
        ));
        let (x, y) = match at.as_array() {
            Some(a) => (a[0].as_f64().unwrap(), a[1].as_f64().unwrap()),
            None => panic!("no element {selector} to click"),
        };
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({ "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1 }),
            );
        }
    }

    /// Replaces the text of the input or textarea `selector` as typing
    /// would (focus, select all, insert).
    pub fn type_into(&mut self, selector: &str, text: &str) {
        self.click(selector);
        let sel = serde_json::to_string(selector).unwrap();
        self.eval(&format!("document.querySelector({sel}).select()"));
        if text.is_empty() {
            for kind in ["keyDown", "keyUp"] {
                self.call(
                    "Input.dispatchKeyEvent",
                    json!({ "type": kind, "key": "Backspace", "code": "Backspace", "windowsVirtualKeyCode": 8 }),
                );
            }
        } else {
            self.call("Input.insertText", json!({ "text": text }));
        }
    }

    /// A PNG of the viewport.
    pub fn screenshot(&mut self, path: &Path) {
        use base64::Engine;
        let r = self.call("Page.captureScreenshot", json!({ "format": "png" }));
        let png = base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().unwrap())
            .unwrap();
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(path, png).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.ws.close(None);
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}
