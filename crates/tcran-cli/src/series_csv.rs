//! The time series of every variant as CSV files, one directory per
//! variant (`DIR/<variant>/slots.csv`, `flows.csv`, `delay_cdf.csv`,
//! `layer_delay_cdf.csv`, `events.csv`, `reconfigurations.csv`; columns in
//! docs/report.md). A bin
//! without a sample is an empty field, never a made-up zero.

use serde::Serialize;
use std::path::{Path, PathBuf};
use tcran_sim::series::{EventCount, FlowSeries, SeriesSink, SlotSeries};
use tcran_sim::RunSeries;

/// File-system-safe, distinct directory names for the variants: letters,
/// digits, `-`, `_` and `.` are kept, anything else becomes `_`; a name
/// that is empty, starts with a dot or repeats an earlier one gets a
/// suffix.
pub fn dir_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in names {
        let mut s: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if s.is_empty() || s.starts_with('.') {
            s.insert_str(0, "variant");
        }
        let base = s.clone();
        let mut k = 2;
        while out.iter().any(|o| o.eq_ignore_ascii_case(&s)) {
            s = format!("{base}-{k}");
            k += 1;
        }
        out.push(s);
    }
    out
}

#[derive(Serialize)]
struct FlowRow<'a> {
    flow: &'a str,
    kind: &'a str,
    t_s: f64,
    goodput_mbps: Option<f64>,
    delay_ms: Option<f64>,
    cwnd_bytes: Option<f64>,
    srtt_ms: Option<f64>,
}

#[derive(Serialize)]
struct CdfRow<'a> {
    flow: &'a str,
    delay_ms: f64,
    fraction: f64,
}

#[derive(Serialize)]
struct LayerCdfRow<'a> {
    flow: &'a str,
    layer: &'a str,
    delay_ms: f64,
    fraction: f64,
}

/// The CSV files of a variant, by stem (`DIR/<variant>/<stem>.csv`), in
/// the order they are written.
pub const FILES: [&str; 6] = [
    "slots",
    "flows",
    "delay_cdf",
    "layer_delay_cdf",
    "events",
    "reconfigurations",
];

/// The files a streaming run writes as it goes ([`CsvSink`]).
pub const STREAMED: [&str; 3] = ["slots", "flows", "events"];

const SLOT_HEADER: [&str; 5] = [
    "t_s",
    "rlc_bytes",
    "capacity_bytes",
    "prbs_used",
    "prbs_available",
];
const FLOW_HEADER: [&str; 7] = [
    "flow",
    "kind",
    "t_s",
    "goodput_mbps",
    "delay_ms",
    "cwnd_bytes",
    "srtt_ms",
];
const EVENT_HEADER: [&str; 5] = ["t_s", "what", "layer", "reason", "count"];

/// Writes the CSV files of one variant into `dir` (created if needed).
pub fn write(dir: &Path, s: &RunSeries) -> Result<(), csv::Error> {
    write_except(dir, s, &[])
}

/// [`write`] but for the files named in `skip` (written elsewhere, e.g.
/// by a [`CsvSink`]).
pub fn write_except(dir: &Path, s: &RunSeries, skip: &[&str]) -> Result<(), csv::Error> {
    std::fs::create_dir_all(dir)?;
    for stem in FILES.iter().filter(|f| !skip.contains(f)) {
        let file = std::fs::File::create(dir.join(format!("{stem}.csv")))?;
        write_one(stem, s, file)?;
    }
    Ok(())
}

/// Writes rows of `slots.csv`, one per slot sample. By hand, not through
/// serde and `csv`: a run writes a row per slot (60 000 per
/// simulated minute at 1 ms), where the generic path cost about 1 500
/// instructions a row, more than a tenth of what `tcran run` spent
/// simulating (docs/performance.md). The bytes are those `csv` writes: it
/// formats numbers with the same `ryu` and `itoa` calls, and a number never
/// needs quoting.
fn slot_rows(w: &mut impl std::io::Write, sl: &SlotSeries) -> std::io::Result<()> {
    let mut float = ryu::Buffer::new();
    let mut int = itoa::Buffer::new();
    let mut row = Vec::with_capacity(64);
    for i in 0..sl.t_s.len() {
        row.clear();
        push_seconds(&mut row, sl.t_s[i], &mut float, &mut int);
        for v in [
            sl.rlc_bytes.get(i).copied().unwrap_or(0),
            sl.capacity_bytes.get(i).copied().unwrap_or(0),
            sl.prbs_used.get(i).copied().map_or(0, u64::from),
            sl.prbs_available.get(i).copied().map_or(0, u64::from),
        ] {
            row.push(b',');
            row.extend_from_slice(int.format(v).as_bytes());
        }
        row.push(b'\n');
        w.write_all(&row)?;
    }
    Ok(())
}

/// Appends `t` seconds as `ryu` (and so `csv`) writes it. A slot starts
/// at a whole nanosecond `ns`, and its time in seconds (`ns * 1e-9`) is,
/// for about 3 slots in 5, the double nearest to `ns / 10^9`: the check
/// below, a division that rounds correctly. For such a `t` below 2^22 s,
/// where doubles lie less than 10^-9 apart, no other decimal of at most 9
/// fractional digits rounds to `t`, and none with fewer digits does: `ns /
/// 10^9` with its trailing zeros cut is the shortest decimal that reads
/// back as `t`, which is what `ryu` prints (`0.0000625`, `12.5`, `60.0`,
/// from 10^-5 s on; below it `ryu` switches to `1e-6`). Written with
/// `itoa` from the integer nanoseconds it costs a fraction of `ryu`'s ~470
/// instructions, once per slot row. Every other value goes to `ryu`.
fn push_seconds(row: &mut Vec<u8>, t: f64, float: &mut ryu::Buffer, int: &mut itoa::Buffer) {
    const NS_PER_S: u64 = 1_000_000_000;
    if (1e-5..4_194_304.0).contains(&t) {
        let ns = (t * NS_PER_S as f64).round() as u64;
        if ns as f64 / NS_PER_S as f64 == t {
            let (whole, frac) = (ns / NS_PER_S, ns % NS_PER_S);
            row.extend_from_slice(int.format(whole).as_bytes());
            row.push(b'.');
            if frac == 0 {
                row.push(b'0');
                return;
            }
            // The 9 fractional digits, leading zeros kept, trailing cut.
            let digits = int.format(NS_PER_S + frac).as_bytes();
            let last = digits.iter().rposition(|&d| d != b'0').expect("frac > 0");
            row.extend_from_slice(&digits[1..=last]);
            return;
        }
    }
    row.extend_from_slice(float.format(t).as_bytes());
}

fn slot_header(w: &mut impl std::io::Write) -> std::io::Result<()> {
    writeln!(w, "{}", SLOT_HEADER.join(","))
}

fn flow_rows<W: std::io::Write>(w: &mut csv::Writer<W>, f: &FlowSeries) -> csv::Result<()> {
    for (i, t) in f.t_s.iter().enumerate() {
        let at = |v: &Vec<Option<f64>>| v.get(i).copied().flatten();
        w.serialize(FlowRow {
            flow: &f.name,
            kind: &f.kind,
            t_s: *t,
            goodput_mbps: f.goodput_mbps.get(i).copied(),
            delay_ms: at(&f.delay_ms),
            cwnd_bytes: at(&f.cwnd_bytes),
            srtt_ms: at(&f.srtt_ms),
        })?;
    }
    Ok(())
}

type FileWriter = csv::Writer<std::io::BufWriter<std::fs::File>>;

/// The first error of a [`CsvSink`]: the file and why.
pub type SinkError = std::sync::Arc<std::sync::Mutex<Option<(PathBuf, csv::Error)>>>;

/// Writes what a streaming run hands on ([`tcran_sim::Sim::stream_series`])
/// as it comes: `slots.csv` and `events.csv` row by row, each flow's bins
/// into a part file of its own, joined into `flows.csv` at the end (grouped
/// by flow, as [`write_one`] orders it). The bytes are those [`write`]
/// gives for the same series. Its first error goes to `error` and stops
/// the writing; the caller reports it after the run.
pub struct CsvSink {
    dir: PathBuf,
    /// `slots.csv`, written by hand ([`slot_rows`]).
    slots: Option<std::io::BufWriter<std::fs::File>>,
    events: Option<FileWriter>,
    flows: Vec<Option<FileWriter>>,
    error: SinkError,
}

impl std::fmt::Debug for CsvSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CsvSink").field("dir", &self.dir).finish()
    }
}

impl CsvSink {
    /// A sink writing into `dir` (created if needed).
    pub fn new(dir: &Path, error: SinkError) -> CsvSink {
        let mut sink = CsvSink {
            dir: dir.to_path_buf(),
            slots: None,
            events: None,
            flows: Vec::new(),
            error,
        };
        if let Err(e) = std::fs::create_dir_all(dir) {
            sink.fail(dir.to_path_buf(), e.into());
        }
        sink
    }

    fn failed(&self) -> bool {
        self.error.lock().map_or(true, |e| e.is_some())
    }

    fn fail(&mut self, path: PathBuf, error: csv::Error) {
        if let Ok(mut e) = self.error.lock() {
            e.get_or_insert((path, error));
        }
        self.slots = None;
        self.events = None;
        self.flows.clear();
    }

    fn path(&self, file: &str) -> PathBuf {
        self.dir.join(file)
    }

    fn part(&self, flow: usize) -> PathBuf {
        self.path(&format!("flows.csv.{flow}.part"))
    }

    /// `slot`'s writer, opened on first use (`headers`: written before the
    /// first row).
    fn open<'w>(
        slot: &'w mut Option<FileWriter>,
        path: &Path,
        headers: bool,
    ) -> Result<&'w mut FileWriter, csv::Error> {
        if slot.is_none() {
            let file = std::fs::File::create(path)?;
            *slot = Some(
                csv::WriterBuilder::new()
                    .has_headers(headers)
                    .from_writer(std::io::BufWriter::new(file)),
            );
        }
        Ok(slot.as_mut().expect("opened"))
    }

    /// The writer of `slots.csv`, opened with its header on first use.
    fn open_slots<'w>(
        slot: &'w mut Option<std::io::BufWriter<std::fs::File>>,
        path: &Path,
    ) -> std::io::Result<&'w mut std::io::BufWriter<std::fs::File>> {
        if slot.is_none() {
            let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
            slot_header(&mut w)?;
            *slot = Some(w);
        }
        Ok(slot.as_mut().expect("opened"))
    }

    fn check(&mut self, file: PathBuf, r: csv::Result<()>) {
        if let Err(e) = r {
            self.fail(file, e);
        }
    }

    /// Ends every file; an error names the file it happened on.
    fn finish(&mut self) -> Result<(), (PathBuf, csv::Error)> {
        // A writer opens at its first row: one still closed has none, and
        // its file gets the header alone.
        let path = self.path("slots.csv");
        let mut slots = self.slots.take();
        let r = Self::open_slots(&mut slots, &path).and_then(std::io::Write::flush);
        r.map_err(|e| (path, e.into()))?;
        let path = self.path("events.csv");
        let mut events = self.events.take();
        let empty = events.is_none();
        let r = Self::open(&mut events, &path, true).and_then(|w| {
            if empty {
                w.write_record(EVENT_HEADER)?;
            }
            Ok(w.flush()?)
        });
        r.map_err(|e| (path, e))?;
        let path = self.path("flows.csv");
        let at = |path: &Path| {
            let path = path.to_path_buf();
            move |e: std::io::Error| (path, csv::Error::from(e))
        };
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path).map_err(at(&path))?);
        {
            let mut w = csv::Writer::from_writer(&mut out);
            w.write_record(FLOW_HEADER)
                .and_then(|()| Ok(w.flush()?))
                .map_err(|e| (path.clone(), e))?;
        }
        for (k, part) in std::mem::take(&mut self.flows).into_iter().enumerate() {
            if let Some(mut w) = part {
                let part = self.part(k);
                w.flush().map_err(at(&part))?;
                drop(w);
                let mut from = std::fs::File::open(&part).map_err(at(&part))?;
                std::io::copy(&mut from, &mut out).map_err(at(&path))?;
                std::fs::remove_file(&part).map_err(at(&part))?;
            }
        }
        std::io::Write::flush(&mut out).map_err(at(&path))
    }
}

impl SeriesSink for CsvSink {
    fn slots(&mut self, chunk: &SlotSeries) {
        if self.failed() {
            return;
        }
        let path = self.path("slots.csv");
        let r = Self::open_slots(&mut self.slots, &path)
            .and_then(|w| slot_rows(w, chunk))
            .map_err(csv::Error::from);
        self.check(path, r);
    }

    fn flow_bins(&mut self, flow: usize, chunk: &FlowSeries) {
        if self.failed() {
            return;
        }
        if self.flows.len() <= flow {
            self.flows.resize_with(flow + 1, || None);
        }
        let path = self.part(flow);
        let r = Self::open(&mut self.flows[flow], &path, false).and_then(|w| flow_rows(w, chunk));
        self.check(path, r);
    }

    fn events(&mut self, chunk: &[EventCount]) {
        if self.failed() {
            return;
        }
        let path = self.path("events.csv");
        let r = Self::open(&mut self.events, &path, true)
            .and_then(|w| chunk.iter().try_for_each(|e| w.serialize(e)));
        self.check(path, r);
    }

    fn end(&mut self) {
        if self.failed() {
            return;
        }
        if let Err((path, e)) = self.finish() {
            self.fail(path, e);
        }
    }
}

/// Writes the series `stem` (one of [`FILES`]) of one variant as CSV into
/// `out`: exactly the bytes of `<stem>.csv` (other front ends, such as the
/// Python package, read the same text). An unknown stem is an
/// `InvalidInput` error naming the allowed ones.
pub fn write_one<W: std::io::Write>(
    stem: &str,
    s: &RunSeries,
    mut out: W,
) -> Result<(), csv::Error> {
    if stem == "slots" {
        slot_header(&mut out)?;
        slot_rows(&mut out, &s.slots)?;
        return Ok(out.flush()?);
    }
    let mut w = csv::Writer::from_writer(out);
    match stem {
        "flows" => {
            if s.flows.iter().all(|f| f.t_s.is_empty()) {
                w.write_record(FLOW_HEADER)?;
            }
            for f in &s.flows {
                flow_rows(&mut w, f)?;
            }
        }
        "delay_cdf" => {
            let mut any = false;
            for f in &s.flows {
                for (d, p) in &f.delay_cdf {
                    any = true;
                    w.serialize(CdfRow {
                        flow: &f.name,
                        delay_ms: *d,
                        fraction: *p,
                    })?;
                }
            }
            if !any {
                w.write_record(["flow", "delay_ms", "fraction"])?;
            }
        }
        // A file of its own, so delay_cdf.csv keeps its columns.
        "layer_delay_cdf" => {
            let mut any = false;
            for f in &s.flows {
                for (layer, points) in f.layer_delay_cdf.iter() {
                    for (d, p) in points {
                        any = true;
                        w.serialize(LayerCdfRow {
                            flow: &f.name,
                            layer,
                            delay_ms: *d,
                            fraction: *p,
                        })?;
                    }
                }
            }
            if !any {
                w.write_record(["flow", "layer", "delay_ms", "fraction"])?;
            }
        }
        "events" => {
            if s.events.is_empty() {
                w.write_record(EVENT_HEADER)?;
            }
            for e in &s.events {
                w.serialize(e)?;
            }
        }
        "reconfigurations" => {
            if s.reconfigurations.is_empty() {
                w.write_record(["t_s", "by", "rnti", "drb", "what"])?;
            }
            for r in &s.reconfigurations {
                w.serialize(r)?;
            }
        }
        other => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("no series `{other}` (series: {})", FILES.join(", ")),
            )
            .into())
        }
    }
    w.flush()?;
    Ok(())
}

#[derive(Serialize)]
struct SeedRow<'a> {
    seed: u64,
    variant: &'a str,
    flow: &'a str,
    throughput_mbps: f64,
    delay_mean_ms: f64,
    delay_p50_ms: f64,
    delay_p95_ms: f64,
    delay_p99_ms: f64,
    rtt_mean_ms: Option<f64>,
    rtt_p95_ms: Option<f64>,
    lost_packets: u64,
    prb_utilization: f64,
    capacity_utilization: f64,
}

/// `seeds.csv`: one row per seed, variant and flow with the figures the
/// confidence intervals of the summary are computed from.
pub fn write_seeds(path: &Path, s: &tcran_sim::ScenarioSummary) -> Result<(), csv::Error> {
    let mut w = csv::Writer::from_path(path)?;
    for r in &s.seed_runs {
        for v in &r.variants {
            for f in &v.run.flows {
                w.serialize(SeedRow {
                    seed: r.seed,
                    variant: &v.name,
                    flow: &f.name,
                    throughput_mbps: f.throughput_mbps,
                    delay_mean_ms: f.delay_ms.mean,
                    delay_p50_ms: f.delay_ms.p50,
                    delay_p95_ms: f.delay_ms.p95,
                    delay_p99_ms: f.delay_ms.p99,
                    rtt_mean_ms: f.rtt_ms.map(|d| d.mean),
                    rtt_p95_ms: f.rtt_ms.map(|d| d.p95),
                    lost_packets: f.lost_packets,
                    prb_utilization: v.run.prb_utilization,
                    capacity_utilization: v.run.capacity_utilization,
                })?;
            }
        }
    }
    w.flush()?;
    Ok(())
}

/// One handover of one variant (`handovers.csv`).
#[derive(Serialize)]
struct HandoverRow<'a> {
    variant: &'a str,
    ue: u16,
    at_s: f64,
    source: u32,
    target: u32,
    interruption_ms: f64,
    preparation_ms: f64,
    forwarded_packets: u64,
    forwarded_bytes: u64,
    tc_forwarded_packets: u64,
    pdcp_forwarded_packets: u64,
    arrived_meanwhile: u64,
    dropped_packets: u64,
    ping_pong: bool,
    tcp_before_mbps: Option<f64>,
    tcp_min_after_mbps: Option<f64>,
    tcp_recovery_ms: Option<f64>,
    call_delay_before_ms: Option<f64>,
    call_max_delay_ms: Option<f64>,
}

/// Every handover of every variant of a multi-cell run, in time order per
/// variant: what `summary.json`'s `handovers` lists, one row each.
pub fn write_handovers(path: &Path, s: &tcran_sim::ScenarioSummary) -> Result<(), csv::Error> {
    let mut w = csv::Writer::from_path(path)?;
    for v in &s.variants {
        for h in &v.run.handovers {
            w.serialize(HandoverRow {
                variant: &v.name,
                ue: h.ue,
                at_s: h.at_s,
                source: h.source,
                target: h.target,
                interruption_ms: h.interruption_ms,
                preparation_ms: h.preparation_ms,
                forwarded_packets: h.forwarded_packets,
                forwarded_bytes: h.forwarded_bytes,
                tc_forwarded_packets: h.tc_forwarded_packets,
                pdcp_forwarded_packets: h.pdcp_forwarded_packets,
                arrived_meanwhile: h.arrived_meanwhile,
                dropped_packets: h.dropped_packets,
                ping_pong: h.ping_pong,
                tcp_before_mbps: h.impact.tcp_before_mbps,
                tcp_min_after_mbps: h.impact.tcp_min_after_mbps,
                tcp_recovery_ms: h.impact.tcp_recovery_ms,
                call_delay_before_ms: h.impact.call_delay_before_ms,
                call_max_delay_ms: h.impact.call_max_delay_ms,
            })?;
        }
    }
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcran_core::Instant;
    use tcran_sim::series::{EventCount, FlowSeries, LayerCdfs, Reconfiguration};

    #[test]
    fn names_are_safe_and_distinct() {
        assert_eq!(
            dir_names(["fq_codel+5g-bdp", "a/b", "A/B", "", "..", "ok.1"]),
            [
                "fq_codel_5g-bdp",
                "a_b",
                "A_B-2",
                "variant",
                "variant..",
                "ok.1"
            ]
        );
    }

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap()
    }

    /// `slots.csv` is written by hand: its bytes are those of the `csv`
    /// crate's serde path (the reference) for every kind of value, odd
    /// floats included (subnormal, huge, negative, infinite, NaN).
    #[test]
    fn hand_written_slot_rows_are_the_csv_crates_bytes() {
        #[derive(Serialize)]
        struct Row {
            t_s: f64,
            rlc_bytes: u64,
            capacity_bytes: u64,
            prbs_used: u32,
            prbs_available: u32,
        }
        // splitmix64: reproducible values over the whole bit range.
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let mut sl = SlotSeries::default();
        let specials = [
            0.0,
            -0.0,
            1e-9,
            0.001,
            59.999,
            1e16,
            5e-324,
            f64::INFINITY,
            f64::NAN,
        ];
        for k in 0..40_000 {
            let t = match k % 6 {
                0 => specials[k % specials.len()],
                // Slot starts as the recorder computes them.
                1 => Instant::from_nanos(next() % 100_000_000_000_000).as_secs_f64(),
                // Slots of 62.5 us (numerology 4) from the start, and
                // around 10^-5 s and 2^22 s, where the digits change form.
                2 => Instant::from_nanos(k as u64 * 62_500).as_secs_f64(),
                3 => Instant::from_nanos(9_990 + next() % 20).as_secs_f64(),
                4 => Instant::from_nanos((1 << 22) * 1_000_000_000 - 50_000 + next() % 100_000)
                    .as_secs_f64(),
                _ => f64::from_bits(next()),
            };
            sl.t_s.push(t);
            sl.rlc_bytes.push(next() >> (next() % 64));
            sl.capacity_bytes.push(next() % 100_000);
            sl.prbs_used.push(next() as u32);
            sl.prbs_available.push((next() % 300) as u32);
        }
        let mut ours = Vec::new();
        slot_header(&mut ours).unwrap();
        slot_rows(&mut ours, &sl).unwrap();
        let mut reference = csv::Writer::from_writer(Vec::new());
        for i in 0..sl.t_s.len() {
            reference
                .serialize(Row {
                    t_s: sl.t_s[i],
                    rlc_bytes: sl.rlc_bytes[i],
                    capacity_bytes: sl.capacity_bytes[i],
                    prbs_used: sl.prbs_used[i],
                    prbs_available: sl.prbs_available[i],
                })
                .unwrap();
        }
        let reference = reference.into_inner().unwrap();
        assert_eq!(String::from_utf8(ours), String::from_utf8(reference));
    }

    #[test]
    fn files_have_headers_and_empty_fields_for_missing_samples() {
        let dir = std::env::temp_dir().join(format!("tcran-csv-test-{}", std::process::id()));
        let mut s = RunSeries {
            bin_s: 0.1,
            ..RunSeries::default()
        };
        s.slots.t_s = vec![0.0, 0.0005];
        s.slots.rlc_bytes = vec![0, 1500];
        s.slots.capacity_bytes = vec![3000, 0];
        s.slots.prbs_used = vec![0, 25];
        s.slots.prbs_available = vec![25, 0];
        s.flows.push(FlowSeries {
            name: "voip".into(),
            kind: "voip".into(),
            t_s: vec![0.0, 0.1],
            goodput_mbps: vec![0.08, 0.0],
            delay_ms: vec![Some(12.5), None],
            cwnd_bytes: vec![None, None],
            srtt_ms: vec![None, None],
            delay_cdf: vec![(12.5, 1.0)],
            rtt_cdf: Vec::new(),
            layer_delay_cdf: LayerCdfs {
                core: vec![(10.0, 1.0)],
                rlc: vec![(0.5, 0.5), (1.5, 1.0)],
                air: vec![(1.0, 1.0)],
                ..LayerCdfs::default()
            },
        });
        s.events.push(EventCount {
            t_s: 0.1,
            what: "drop",
            layer: "rlc",
            reason: "buffer_full",
            count: 3,
        });
        s.reconfigurations.push(Reconfiguration {
            t_s: 1.0,
            by: "event".into(),
            rnti: 1,
            drb: 1,
            what: "pacer bdp, offset 0.5".into(),
        });
        write(&dir, &s).unwrap();
        assert_eq!(
            read(&dir.join("slots.csv")),
            "t_s,rlc_bytes,capacity_bytes,prbs_used,prbs_available\n0.0,0,3000,0,25\n0.0005,1500,0,25,0\n"
        );
        assert_eq!(
            read(&dir.join("flows.csv")),
            "flow,kind,t_s,goodput_mbps,delay_ms,cwnd_bytes,srtt_ms\nvoip,voip,0.0,0.08,12.5,,\nvoip,voip,0.1,0.0,,,\n"
        );
        assert_eq!(
            read(&dir.join("delay_cdf.csv")),
            "flow,delay_ms,fraction\nvoip,12.5,1.0\n"
        );
        assert_eq!(
            read(&dir.join("layer_delay_cdf.csv")),
            "flow,layer,delay_ms,fraction\nvoip,core,10.0,1.0\nvoip,rlc,0.5,0.5\nvoip,rlc,1.5,1.0\nvoip,air,1.0,1.0\n"
        );
        assert_eq!(
            read(&dir.join("events.csv")),
            "t_s,what,layer,reason,count\n0.1,drop,rlc,buffer_full,3\n"
        );
        assert_eq!(
            read(&dir.join("reconfigurations.csv")),
            "t_s,by,rnti,drb,what\n1.0,event,1,1,\"pacer bdp, offset 0.5\"\n"
        );
        // An empty run still gets every file with its header.
        write(&dir, &RunSeries::default()).unwrap();
        assert_eq!(
            read(&dir.join("events.csv")),
            "t_s,what,layer,reason,count\n"
        );
        assert_eq!(
            read(&dir.join("flows.csv")),
            "flow,kind,t_s,goodput_mbps,delay_ms,cwnd_bytes,srtt_ms\n"
        );
        assert_eq!(
            read(&dir.join("layer_delay_cdf.csv")),
            "flow,layer,delay_ms,fraction\n"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A run that streams its series writes the very bytes a run that
    /// keeps them writes at the end: the demo for 12 s at 1 ms bins (12 000
    /// slots and bins per flow, chunks of 4 096), every variant.
    #[test]
    fn streamed_files_are_the_kept_series_files() {
        let dir = std::env::temp_dir().join(format!("tcran-stream-test-{}", std::process::id()));
        let sets = [
            crate::set::Override::parse("duration=12s").unwrap(),
            crate::set::Override::parse("series_bin=1ms").unwrap(),
        ];
        let run = |series_dir: Option<&Path>| {
            let opts = crate::simulate::Options {
                sets: &sets,
                series_dir,
                ..Default::default()
            };
            crate::simulate::run_text(
                "demo",
                "demo.toml",
                crate::simulate::DEMO,
                Path::new("."),
                opts,
            )
            .unwrap()
        };
        let streamed = run(Some(&dir.join("streamed")));
        assert!(streamed.streamed);
        let kept = run(None);
        let names = dir_names(kept.runs.iter().map(|(n, _)| n.as_str()));
        assert_eq!(names.len(), 6);
        for (name, series) in names.iter().zip(&kept.output.series) {
            assert_eq!(series.slots.t_s.len(), 12_000);
            write(&dir.join("kept").join(name), series).unwrap();
            for stem in STREAMED {
                let file = format!("{name}/{stem}.csv");
                let a = std::fs::read(dir.join("streamed").join(&file)).unwrap();
                let b = std::fs::read(dir.join("kept").join(&file)).unwrap();
                assert!(a == b, "{file}: {} vs {} bytes", a.len(), b.len());
            }
            assert!(
                !dir.join("streamed")
                    .join(name)
                    .join("flows.csv.0.part")
                    .exists(),
                "no part file left"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
