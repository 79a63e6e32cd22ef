// tcran dashboard: the page. Live mode reads server-sent events (the
// newest state of the nodes, 10 per second) and sends controls; replay
// mode reads a finished run's series once and moves a 30 s window along
// them with a slider. No framework: the DOM, uPlot for the charts.
"use strict";

// Okabe-Ito: distinguishable with every common colour-vision deficiency.
const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442"];
const LIVE_WINDOW_S = 60;
const REPLAY_WINDOW_S = 30;
const MAX_QUEUES_DRAWN = 8;

const $ = (id) => document.getElementById(id);
const state = {
  info: null,
  node: null,        // selected node id (live) or variant index (replay)
  drb: null,         // selected "rnti/drb"
  token: "",
  events: null,
  history: new Map(), // "node:rnti/drb" -> series
  snapshot: null,
  charts: {},
  replay: null,
  playing: null,
  controlsRendered: "",
};
// What the page costs the browser: handling time of each push, for
// docs/performance.md (read by the browser test over CDP).
window.tcranStats = { updates: 0, meanMs: 0, maxMs: 0, frames: 0, frameMeanMs: 0, frameMaxMs: 0 };
// The time between two frames the browser painted: what a person sees
// as smooth (about 16.7 ms at 60 Hz) or stuttering.
(function frames() {
  const st = window.tcranStats;
  let last = null;
  function frame(now) {
    if (last != null) {
      const d = now - last;
      st.frames += 1;
      st.frameMeanMs += (d - st.frameMeanMs) / st.frames;
      st.frameMaxMs = Math.max(st.frameMaxMs, d);
    }
    last = now;
    requestAnimationFrame(frame);
  }
  requestAnimationFrame(frame);
})();

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c != null) e.append(c);
  return e;
}

const fmt = (v, digits = 1) => (v == null || !isFinite(v) ? "-" : v.toFixed(digits));

// ------------------------------------------------------------------ charts

// One chart: `series` are {label, scale?}; units name every axis.
function chart(id, title, unit, series, opts = {}) {
  let box = $(id);
  if (box) {
    if (box._plot) box._plot.destroy();
    box.replaceChildren();
  } else {
    box = el("div", { class: "chart", id });
    $("charts").append(box);
  }
  const now = el("span", { class: "now" });
  box.append(el("h3", {}, title, now));
  const plotDiv = el("div", {});
  box.append(plotDiv);
  const axes = [
    { label: opts.xLabel || "node time (s)", stroke: "#333" },
    { label: unit, stroke: "#333", size: 60 },
  ];
  const scales = { x: { time: false } };
  if (opts.right) {
    scales[opts.right.scale] = { auto: true };
    axes.push({ scale: opts.right.scale, side: 1, label: opts.right.unit, stroke: "#333", grid: { show: false }, size: 50 });
  }
  const width = Math.max(300, (box.clientWidth || 480) - 10);
  const plot = new uPlot({
    width,
    height: 220,
    scales,
    axes,
    legend: { live: false },
    cursor: { drag: { x: false, y: false } },
    series: [{ label: "t" }].concat(series.map((s, i) => {
      // Only the keys given: an `undefined` would replace uPlot's default
      // (the "y" scale) and hide the axis.
      const o = { label: s.label, stroke: PALETTE[i % PALETTE.length], width: 1.6, points: { show: false } };
      if (s.scale) o.scale = s.scale;
      if (i >= PALETTE.length) o.dash = [6, 3];
      return o;
    })),
  }, [[]].concat(series.map(() => [])), plotDiv);
  box._plot = plot;
  box._now = now;
  box._labels = series.map((s) => s.label).join("|");
  box.dataset.points = "0";
  state.charts[id] = box;
  return box;
}

function setChart(id, data, nowText, lastValue) {
  const box = state.charts[id];
  if (!box) return;
  box._plot.setData(data);
  box.dataset.points = String(data[0].length);
  if (lastValue != null) box.dataset.last = String(lastValue);
  box._now.textContent = nowText || "";
}

window.addEventListener("resize", () => {
  for (const box of Object.values(state.charts)) {
    box._plot.setSize({ width: Math.max(300, box.clientWidth - 10), height: 220 });
  }
});

// ------------------------------------------------------------------ live

function newHistory() {
  return {
    t: [], rlcKB: [], sojourn: [], queueSojourn: [], inMbps: [], outMbps: [], macMbps: [],
    prbPerMs: [], mcs: [], drops: new Map(), marks: new Map(), prev: null,
  };
}

function sumReasons(queues, field) {
  const m = new Map();
  for (const q of queues) for (const [r, n] of Object.entries(q[field] || {})) m.set(r, (m.get(r) || 0) + n);
  return m;
}

// Appends one report of a DRB to its history (rates from the counters'
// differences between two reports).
function record(h, t, d) {
  const s = d.stats;
  const drops = sumReasons(s.queues, "drops");
  const marks = sumReasons(s.queues, "marks");
  const cur = { t, in: s.totals.in_bytes, out: s.totals.out_bytes, mac: d.mac_tx_bytes, prbs: d.mac_prbs, drops, marks };
  const p = h.prev;
  h.prev = cur;
  if (!p || t <= p.t) return;
  const dt = t - p.t;
  const rate = (a, b) => (Math.max(0, a - b) * 8) / dt / 1e6;
  h.t.push(t);
  h.rlcKB.push(d.rlc_bytes / 1000);
  h.sojourn.push(d.rlc_sojourn_ms);
  h.queueSojourn.push(s.queues.reduce((m, q) => Math.max(m, q.backlog_packets > 0 ? q.last_sojourn_ms : 0), 0));
  h.inMbps.push(rate(cur.in, p.in));
  h.outMbps.push(rate(cur.out, p.out));
  h.macMbps.push(rate(cur.mac, p.mac));
  h.prbPerMs.push(Math.max(0, cur.prbs - p.prbs) / (dt * 1000));
  h.mcs.push(d.mcs);
  for (const [what, now, before] of [[h.drops, drops, p.drops], [h.marks, marks, p.marks]]) {
    for (const r of now.keys()) if (!what.has(r)) what.set(r, h.t.slice(0, -1).map(() => 0));
    for (const [r, arr] of what) arr.push(Math.max(0, ((now.get(r) || 0) - (before.get(r) || 0)) / dt));
  }
  while (h.t.length && h.t[0] < t - LIVE_WINDOW_S) {
    for (const k of ["t", "rlcKB", "sojourn", "queueSojourn", "inMbps", "outMbps", "macMbps", "prbPerMs", "mcs"]) h[k].shift();
    for (const m of [h.drops, h.marks]) for (const arr of m.values()) arr.shift();
  }
}

function liveCharts() {
  $("charts").replaceChildren();
  state.charts = {};
  chart("chart-rlc", "RLC buffer occupancy", "kB", [{ label: "RLC occupancy" }]);
  chart("chart-sojourn", "RLC sojourn (head of line)", "ms", [{ label: "RLC sojourn" }, { label: "TC queue sojourn (largest)" }]);
  chart("chart-throughput", "Throughput", "Mbit/s", [{ label: "into the pipeline" }, { label: "pipeline to RLC" }, { label: "MAC scheduled" }]);
  chart("chart-drops", "Drops and marks by reason", "packets/s", [{ label: "none yet" }]);
  chart("chart-prb", "PRBs and MCS", "PRBs per ms", [{ label: "PRBs per ms" }, { label: "MCS", scale: "mcs" }], { right: { scale: "mcs", unit: "MCS index" } });
}

function drawLiveCharts(h) {
  const last = (a) => (a.length ? a[a.length - 1] : null);
  setChart("chart-rlc", [h.t, h.rlcKB], `${fmt(last(h.rlcKB))} kB`, last(h.rlcKB));
  setChart("chart-sojourn", [h.t, h.sojourn, h.queueSojourn], `${fmt(last(h.sojourn))} ms`, last(h.sojourn));
  setChart("chart-throughput", [h.t, h.inMbps, h.outMbps, h.macMbps], `${fmt(last(h.outMbps), 2)} Mbit/s to RLC`, last(h.outMbps));
  setChart("chart-prb", [h.t, h.prbPerMs, h.mcs], `MCS ${last(h.mcs) ?? "-"}`, last(h.prbPerMs));
  const labels = [];
  const data = [h.t];
  for (const [what, m] of [["drop", h.drops], ["mark", h.marks]]) {
    for (const [r, arr] of m) { labels.push(`${what} ${r}`); data.push(arr); }
  }
  const box = state.charts["chart-drops"];
  const key = labels.join("|") || "none yet";
  if (box._labels !== key) {
    chart("chart-drops", "Drops and marks by reason", "packets/s", (labels.length ? labels : ["none yet"]).map((label) => ({ label })));
  }
  if (labels.length === 0) data.push(h.t.map(() => 0));
  const total = data.slice(1).reduce((s, a) => s + (a.length ? a[a.length - 1] : 0), 0);
  setChart("chart-drops", data, `${fmt(total)} /s`, total);
}

function selectNode(id) {
  if (state.node === id) return;
  state.node = id;
  state.drb = null;
  connect();
}

function connect() {
  if (state.events) state.events.close();
  const q = state.node != null ? `?node=${state.node}` : "";
  const es = new EventSource(`/api/events${q}`);
  state.events = es;
  es.onopen = () => { $("status").dataset.state = "live"; $("status").textContent = "live"; };
  es.onerror = () => { $("status").dataset.state = "down"; $("status").textContent = "reconnecting"; };
  es.onmessage = (m) => {
    const started = performance.now();
    onSnapshot(JSON.parse(m.data));
    const ms = performance.now() - started;
    const st = window.tcranStats;
    st.updates += 1;
    st.meanMs += (ms - st.meanMs) / st.updates;
    st.maxMs = Math.max(st.maxMs, ms);
  };
}

// A DRB's key in the page: "rnti/drb", "rnti/ul<drb>" for an uplink DRB
// (a UE numbers its DRBs per direction), and its label.
const drbKey = (d) => `${d.rnti}/${d.direction === "uplink" ? "ul" : ""}${d.drb}`;
const drbLabel = (d) => `UE ${d.rnti} ${d.direction === "uplink" ? "uplink " : ""}DRB ${d.drb}`;

function onSnapshot(s) {
  state.snapshot = s;
  $("skipped").textContent = s.skipped ? `${s.skipped} update(s) skipped: this browser read slower than 10/s` : "";
  renderNodes(s.nodes);
  const n = s.node;
  if (n) {
    if (state.node == null) state.node = n.id;
    for (const d of n.drbs) {
      const key = `${n.id}:${drbKey(d)}`;
      if (!state.history.has(key)) state.history.set(key, newHistory());
      record(state.history.get(key), n.t_s, d);
    }
    if (!state.drb || !n.drbs.some((d) => drbKey(d) === state.drb)) {
      state.drb = n.drbs.length ? drbKey(n.drbs[0]) : null;
    }
    renderDrbs(n);
    renderKpm(n.kpm);
    const d = n.drbs.find((x) => drbKey(x) === state.drb);
    if (d) {
      drawPipeline(n, d);
      drawLiveCharts(state.history.get(`${n.id}:${state.drb}`));
    }
  } else {
    renderDrbs(null);
  }
  renderControlLog(s.controls);
}

function renderNodes(nodes) {
  const ul = $("nodes");
  ul.replaceChildren(...nodes.map((n) => el("li", {
    "data-node": String(n.id),
    "aria-selected": String(n.id === (state.node ?? nodes[0]?.id)),
    onclick: () => selectNode(n.id),
  }, n.name, el("span", { class: "sub" },
    `${n.drbs} DRB(s), RLC ${fmt(n.rlc_bytes / 1000)} kB, sojourn up to ${fmt(n.max_sojourn_ms)} ms, ${n.peer}${n.tls ? " (TLS)" : ""}`))));
  if (nodes.length === 0) ul.append(el("li", { class: "note" }, "no node yet: start one with --e2 to this dashboard's E2 address"));
}

function renderDrbs(n) {
  const ul = $("drbs");
  if (!n) { ul.replaceChildren(); return; }
  ul.replaceChildren(...n.drbs.map((d) => {
    const key = drbKey(d);
    return el("li", {
      "data-drb": key,
      "aria-selected": String(key === state.drb),
      onclick: () => { state.drb = key; onSnapshot(state.snapshot); },
    }, drbLabel(d), el("span", { class: "sub" }, `RLC ${fmt(d.rlc_bytes / 1000)} kB, ${fmt(d.rlc_sojourn_ms)} ms`));
  }));
  const s = selectedDrb();
  const t = n && s ? `${drbLabel(s)} of ${n.name}` : "";
  $("pipeline-drb").textContent = t;
  $("control-drb").textContent = t;
}

function renderKpm(kpm) {
  const tb = $("kpm").tBodies[0];
  tb.replaceChildren(...(kpm || []).map(([name, v, unit]) => el("tr", {}, el("td", {}, name), el("td", { class: "v" }, v == null ? "-" : fmt(v, 1)), el("td", { class: "unit" }, unit))));
  if (!kpm || kpm.length === 0) tb.append(el("tr", {}, el("td", { class: "note" }, "no KPM report yet (once per second)")));
}

function stage(kind, title, lines, key) {
  const box = el("div", { class: "stage", "data-stage": key || kind }, el("h4", {}, title), ...lines.map((l) => el("div", { class: "kv" }, l)));
  if (state.info.controls && key) {
    box.classList.add("clickable");
    box.title = "edit this stage's parameters";
    box.addEventListener("click", () => editStage(key));
  }
  return box;
}

function drawPipeline(n, d) {
  const s = d.stats;
  const arrow = () => el("span", { class: "arrow" }, "\u2192");
  const queues = [...s.queues].sort((a, b) => b.backlog_bytes - a.backlog_bytes || a.id - b.id);
  const shown = queues.slice(0, MAX_QUEUES_DRAWN);
  const maxBytes = Math.max(1, ...shown.map((q) => q.backlog_bytes));
  const qbox = el("div", { class: "stage", "data-stage": "queues" }, el("h4", {}, `queues (${s.queues.length})`),
    el("div", { class: "queues" }, ...shown.map((q) => {
      const drops = Object.values(q.drops || {}).reduce((a, b) => a + b, 0);
      const marks = Object.values(q.marks || {}).reduce((a, b) => a + b, 0);
      const extra = [];
      if (q.policer) extra.push(" +policer");
      if (q.shaper) extra.push(` +shaper ${fmt(q.shaper.rate_bps / 1e6)} Mbit/s`);
      const div = el("div", { class: "queue", "data-queue": String(q.id) },
        `${q.id} ${q.kind}${extra.join("")}: ${q.backlog_packets} pkt, ${fmt(q.backlog_bytes / 1000)} kB, sojourn ${fmt(q.last_sojourn_ms)} ms, drops ${drops}, marks ${marks}`,
        el("div", { class: "bar", style: `width:${(100 * q.backlog_bytes) / maxBytes}%` }));
      if (state.info.controls) { div.style.cursor = "pointer"; div.title = "edit this queue"; div.addEventListener("click", (e) => { e.stopPropagation(); editStage(`queue:${q.id}`); }); }
      return div;
    }), queues.length > shown.length ? el("div", { class: "note" }, `+${queues.length - shown.length} more, less backlogged`) : null));
  const p = s.pacer;
  $("pipeline").replaceChildren(
    stage("classifier", "classifier", [`classified ${s.classifier.classified}`, `default ${s.classifier.defaulted}`, `malformed ${s.classifier.malformed}`], "classifier"),
    arrow(), qbox, arrow(),
    stage("scheduler", `scheduler ${s.scheduler}`, [`in ${s.totals.in_packets} pkt`, `out ${s.totals.out_packets} pkt`, `dropped ${s.totals.dropped_packets}`], "scheduler"),
    arrow(),
    stage("pacer", `pacer ${s.pacer_kind}`, [`bandwidth ${fmt((p.bandwidth_bps * 8) / 1e6, 2)} Mbit/s`, `allowance ${fmt(p.allowance_bytes / 1000)} kB`, p.limit != null ? `limit ${fmt(p.limit, 0)}` : null, `refused ${p.refused}`].filter(Boolean), "pacer"),
    arrow(),
    stage("rlc", "RLC", [`${fmt(d.rlc_bytes / 1000)} kB, ${d.rlc_sdus} SDUs`, `sojourn ${fmt(d.rlc_sojourn_ms)} ms`]),
    arrow(),
    stage("mac", "MAC", [`MCS ${d.mcs}`, `${d.mac_prbs} PRBs so far`]),
  );
  $("stage-hint").textContent = state.info.controls ? "Click a stage or a queue to change its parameters." : "";
}

// ------------------------------------------------------------------ controls

function selectedDrb() {
  const n = state.snapshot?.node;
  if (!n || !state.drb) return null;
  const [rnti, drb] = state.drb.split("/");
  const up = drb.startsWith("ul");
  return { node: n.id, rnti: Number(rnti), drb: Number(up ? drb.slice(2) : drb), direction: up ? "uplink" : "downlink" };
}

function showError(text, ok) {
  const e = $("editor-error");
  e.textContent = text;
  e.classList.toggle("ok", !!ok);
}

async function api(method, path, body) {
  const headers = { "content-type": "application/json" };
  if (state.token) headers["x-tcran-token"] = state.token;
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let json = null;
  try { json = await r.json(); } catch (_) { /* no body */ }
  return { status: r.status, json };
}

async function sendControl(what) {
  const target = selectedDrb();
  if (!target) { showError("no DRB selected: wait for a node's first report"); return; }
  showError("sending...", true);
  const { status, json } = await api("POST", "/api/control", Object.assign(target, what));
  if (status !== 200) {
    showError(`refused (${status}): ${json?.error ?? "no answer"}`);
    $("editor-error").dataset.status = String(status);
    return;
  }
  $("editor-error").dataset.status = "200";
  if (json.outcome === "applied") showError(`applied: the node runs it (control #${json.id})`, true);
  else showError(`${json.outcome}: ${json.reason ?? ""}`);
}

function renderControlLog(controls) {
  const key = JSON.stringify(controls);
  if (key === state.controlsRendered) return;
  state.controlsRendered = key;
  $("control-log").replaceChildren(...[...controls].reverse().map((c) => el("li", { "data-outcome": c.outcome, "data-control": String(c.id) },
    `#${c.id} ${c.node_name} ${drbLabel(c)}: ${c.what} `,
    el("span", { class: "outcome" }, c.outcome), c.reason ? ` (${c.reason})` : "")));
}

// The running configuration of one stage as the control that sets it.
async function editStage(key) {
  const t = selectedDrb();
  if (!t) return;
  const { status, json } = await api("GET", `/api/pipeline?node=${t.node}&rnti=${t.rnti}&drb=${t.drb}&direction=${t.direction}`);
  if (status !== 200) { showError(`cannot read the pipeline (${status}): ${json?.error ?? ""}`); return; }
  let control;
  if (key === "classifier") control = { op: "set_classifier", classifier: json.classifier };
  else if (key === "scheduler") control = { op: "set_scheduler", scheduler: json.scheduler };
  else if (key === "pacer") control = { op: "set_pacer", pacer: json.pacer };
  else if (key.startsWith("queue:")) {
    const id = Number(key.slice(6));
    const q = json.queues.find((q) => id >= q.id && id < q.id + (q.count || 1));
    control = { op: "modify_queue", queue: q };
  } else return;
  $("syntax").value = "json";
  $("editor").value = JSON.stringify(control, null, 2);
  showError(`Edit ${key} and press "Send as one control".`, true);
}

function setupControls() {
  $("controls").hidden = false;
  const params = new URLSearchParams(location.search);
  if (params.get("token")) {
    state.token = params.get("token");
    params.delete("token");
    // Out of the address bar (and of screenshots); kept in the field.
    history.replaceState(null, "", location.pathname + (params.toString() ? `?${params}` : ""));
  }
  $("token").value = state.token;
  $("token").addEventListener("input", (e) => { state.token = e.target.value.trim(); });
  $("presets").replaceChildren(...state.info.presets.map((p) => el("button", {
    type: "button",
    "data-preset": p.name,
    title: "deploy this pipeline to the selected DRB",
    onclick: () => {
      $("syntax").value = "toml";
      $("editor").value = p.toml;
      sendControl({ preset: p.name });
    },
  }, `Deploy ${p.name}`)));
  $("editor").value = state.info.presets[0]?.toml ?? "";
  $("validate").addEventListener("click", async () => {
    const { status, json } = await api("POST", "/api/validate", { text: $("editor").value, syntax: $("syntax").value });
    if (status !== 200) showError(`validation failed (${status}): ${json?.error ?? ""}`);
    else if (json.ok) showError(`ok: ${json.summary}`, true);
    else showError(json.error);
  });
  $("deploy").addEventListener("click", () => sendControl({ pipeline: { text: $("editor").value, syntax: $("syntax").value } }));
  $("send-control").addEventListener("click", () => {
    let control;
    try { control = JSON.parse($("editor").value); } catch (e) { showError(`editor: not JSON: ${e.message}`); return; }
    sendControl({ control });
  });
}

// ------------------------------------------------------------------ replay

async function startReplay() {
  const r = await (await fetch("/api/replay")).json();
  state.replay = r;
  $("status").dataset.state = "live";
  $("status").textContent = `replay of ${r.scenario}`;
  $("nodes-title").textContent = "Variants";
  $("drbs").previousElementSibling.hidden = true;
  $("pipeline-section").hidden = true;
  $("kpm-section").hidden = true;
  $("replay-controls").hidden = false;
  $("reconfigurations-section").hidden = false;
  state.node = 0;
  $("time-slider").addEventListener("input", () => setTime(Number($("time-slider").value)));
  $("play").addEventListener("click", togglePlay);
  showVariant();
}

function showVariant() {
  const r = state.replay;
  $("nodes").replaceChildren(...r.variants.map((v, i) => el("li", {
    "data-node": String(i),
    "aria-selected": String(i === state.node),
    onclick: () => { state.node = i; showVariant(); },
  }, v.name)));
  const v = r.variants[state.node];
  $("charts").replaceChildren();
  state.charts = {};
  const opts = { xLabel: "time (s)" };
  chart("chart-rlc", "RLC buffer occupancy (mean per 100 ms)", "kB", [{ label: "RLC occupancy" }], opts);
  setChart("chart-rlc", [v.t_s, v.rlc_bytes.map((b) => b / 1000)]);
  chart("chart-prb", "PRB use", "%", [{ label: "PRBs used / available" }], opts);
  setChart("chart-prb", [v.t_s, v.prb_use]);
  // Per-flow series share one time axis: flows.csv has the same bins for every flow.
  const t = v.flows.length ? v.flows[0].t_s : [];
  chart("chart-goodput", "Goodput per flow", "Mbit/s", v.flows.map((f) => ({ label: f.name })), opts);
  setChart("chart-goodput", [t, ...v.flows.map((f) => f.goodput_mbps)]);
  chart("chart-delay", "One-way delay per flow (mean per bin)", "ms", v.flows.map((f) => ({ label: f.name })), opts);
  setChart("chart-delay", [t, ...v.flows.map((f) => f.delay_ms)]);
  const kinds = [...new Set(v.events.map((e) => `${e.what} ${e.layer}/${e.reason}`))];
  const times = [...new Set(v.events.map((e) => e.t_s))].sort((a, b) => a - b);
  const series = kinds.map((k) => times.map((tt) => v.events.filter((e) => e.t_s === tt && `${e.what} ${e.layer}/${e.reason}` === k).reduce((s, e) => s + e.count, 0)));
  chart("chart-drops", "Drops and marks by layer and reason", "packets per bin", (kinds.length ? kinds : ["none"]).map((label) => ({ label })), opts);
  setChart("chart-drops", [times, ...(series.length ? series : [times.map(() => 0)])]);
  $("reconfigurations").tBodies[0].replaceChildren(...v.reconfigurations.map((c) => el("tr", {},
    el("td", {}, fmt(c.t_s, 3)), el("td", {}, c.by), el("td", {}, `${c.rnti}/${c.drb}`), el("td", {}, c.what))));
  const end = Math.max(0, ...v.t_s, ...t);
  const slider = $("time-slider");
  slider.max = String(end);
  slider.value = String(end);
  setTime(end);
}

function setTime(t) {
  $("time-label").textContent = `t = ${fmt(t)} s`;
  $("time-slider").value = String(t);
  for (const box of Object.values(state.charts)) {
    box._plot.setScale("x", { min: Math.max(0, t - REPLAY_WINDOW_S), max: Math.max(t, 1) });
  }
}

function togglePlay() {
  if (state.playing) { clearInterval(state.playing); state.playing = null; $("play").textContent = "play"; return; }
  const slider = $("time-slider");
  if (Number(slider.value) >= Number(slider.max)) slider.value = "0";
  $("play").textContent = "pause";
  state.playing = setInterval(() => {
    const t = Math.min(Number(slider.max), Number(slider.value) + 0.1);
    setTime(t);
    if (t >= Number(slider.max)) togglePlay();
  }, 100);
}

// ------------------------------------------------------------------ start

async function main() {
  state.info = await (await fetch("/api/info")).json();
  $("version").textContent = state.info.version;
  $("mode").textContent = state.info.mode === "replay" ? "replay" : state.info.controls ? "live, controls on" : "live, read-only";
  if (state.info.mode === "replay") return startReplay();
  if (state.info.controls) setupControls();
  liveCharts();
  connect();
}

main().catch((e) => {
  $("status").dataset.state = "down";
  $("status").textContent = `error: ${e.message}`;
});
