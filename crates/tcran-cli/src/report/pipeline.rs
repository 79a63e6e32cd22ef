//! A drawing of one DRB's data path as SVG boxes, in data-path order:
//! classifier -> (policer) -> queues -> (shaper) -> scheduler -> pacer ->
//! RLC, each box with its kind and key parameters; or the 3GPP baseline
//! (SDAP straight into the RLC buffer) when the DRB has no pipeline.
//!
//! Hand-built SVG: this is a block diagram, not a plot, which plotters does
//! not lay out. Parameters are read from the stage configs' serde form, so
//! a new parameter shows up without changes here.

use super::html::escape;
use serde::Serialize;
use serde_json::Value;
use std::fmt::Write as _;
use tcran_tc::{PipelineConfig, QueueConfig};

const BOX_W: i32 = 176;
const GAP: i32 = 34;
const LINE_H: i32 = 14;
const PAD: i32 = 8;
const ROW_GAP: i32 = 10;
const MAX_LINES: usize = 6;
const MAX_CHARS: usize = 27;

/// A box: a bold title line and parameter lines.
#[derive(Debug, Clone)]
struct Block {
    title: String,
    lines: Vec<String>,
    fill: &'static str,
}

impl Block {
    fn new(title: impl Into<String>, lines: Vec<String>, fill: &'static str) -> Block {
        let mut lines = lines;
        if lines.len() > MAX_LINES {
            let more = lines.len() - (MAX_LINES - 1);
            lines.truncate(MAX_LINES - 1);
            lines.push(format!("(+{more} more)"));
        }
        Block {
            title: title.into(),
            lines,
            fill,
        }
    }
    fn height(&self) -> i32 {
        2 * PAD + LINE_H * (1 + self.lines.len() as i32)
    }
    fn svg(&self, x: i32, y: i32, out: &mut String) {
        let _ = write!(
            out,
            "<g class=\"stage\"><rect x=\"{x}\" y=\"{y}\" width=\"{BOX_W}\" height=\"{}\" rx=\"5\" fill=\"{}\" stroke=\"#555\"/>",
            self.height(),
            self.fill
        );
        let tx = x + PAD;
        let _ = write!(
            out,
            "<text x=\"{tx}\" y=\"{}\" font-weight=\"bold\">{}</text>",
            y + PAD + 11,
            escape(&clip(&self.title))
        );
        for (i, l) in self.lines.iter().enumerate() {
            let _ = write!(
                out,
                "<text x=\"{tx}\" y=\"{}\">{}</text>",
                y + PAD + 11 + LINE_H * (i as i32 + 1),
                escape(&clip(l))
            );
        }
        out.push_str("</g>");
    }
}

fn clip(s: &str) -> String {
    if s.chars().count() <= MAX_CHARS {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(MAX_CHARS - 1).collect();
        t.push('\u{2026}');
        t
    }
}

/// `key = value` lines of a serialized config, without `kind` and the keys
/// in `skip`; nulls (unset options) are left out.
fn params<T: Serialize>(cfg: &T, skip: &[&str]) -> Vec<String> {
    let Ok(Value::Object(map)) = serde_json::to_value(cfg) else {
        return Vec::new();
    };
    map.iter()
        .filter(|(k, v)| k.as_str() != "kind" && !skip.contains(&k.as_str()) && !v.is_null())
        .map(|(k, v)| format!("{k} = {}", show(v)))
        .collect()
}

fn kind_of<T: Serialize>(cfg: &T) -> String {
    serde_json::to_value(cfg)
        .ok()
        .and_then(|v| v.get("kind").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_default()
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => format!("[{} item{}]", a.len(), if a.len() == 1 { "" } else { "s" }),
        other => other.to_string(),
    }
}

fn classifier_block(p: &PipelineConfig) -> Block {
    let c = &p.classifier;
    let mut lines = params(c, &["rules"]);
    if let Ok(Value::Object(m)) = serde_json::to_value(c) {
        if let Some(Value::Array(rules)) = m.get("rules") {
            lines.insert(0, format!("{} rule(s)", rules.len()));
            for r in rules {
                if let Value::Object(r) = r {
                    let q = r.get("queue").map(show).unwrap_or_default();
                    let what: Vec<String> = r
                        .iter()
                        .filter(|(k, v)| {
                            !matches!(k.as_str(), "queue" | "priority") && !v.is_null()
                        })
                        .map(|(k, v)| format!("{k}={}", show(v)))
                        .collect();
                    lines.push(format!("{} -> q{q}", what.join(",")));
                }
            }
        }
    }
    if let Some(q) = p.default_queue {
        lines.push(format!("default queue {}", q.0));
    }
    Block::new(format!("classifier: {}", kind_of(c)), lines, "#e8f0fa")
}

fn queue_block(q: &QueueConfig) -> Block {
    let title = if q.count > 1 {
        format!(
            "queues {}-{} (x{}): {}",
            q.id.0,
            q.id.0 as u32 + q.count as u32 - 1,
            q.count,
            q.kind.kind_name()
        )
    } else {
        format!("queue {}: {}", q.id.0, q.kind.kind_name())
    };
    let mut lines = params(&q.kind, &[]);
    if let Some(p) = q.limit_packets {
        lines.push(format!("limit = {p} packets"));
    }
    if let Some(b) = q.limit_bytes {
        lines.push(format!("limit = {b}"));
    }
    if q.priority != 0 {
        lines.push(format!("priority = {}", q.priority));
    }
    if q.weight != 1 {
        lines.push(format!("weight = {}", q.weight));
    }
    Block::new(title, lines, "#eef7ee")
}

/// The drawing of `pipeline` feeding an RLC entity configured as `rlc`
/// (its serde form), or the 3GPP baseline if `pipeline` is `None`.
pub fn drawing<R: Serialize>(pipeline: Option<&PipelineConfig>, rlc: &R) -> String {
    let rlc_lines = params(rlc, &[])
        .into_iter()
        .filter(|l| l.starts_with("mode") || l.starts_with("buffer_limit"))
        .collect();
    let rlc = Block::new("RLC", rlc_lines, "#fdf1e4");
    let Some(p) = pipeline else {
        let sdap = Block::new("SDAP", vec!["QFI -> DRB".into()], "#f4f4f4");
        let base = Block::new(
            "3GPP baseline",
            vec![
                "no TC pipeline:".into(),
                "packets go straight".into(),
                "into the RLC buffer".into(),
            ],
            "#f4f4f4",
        );
        return layout(&[vec![sdap], vec![base], vec![rlc]], "3GPP baseline");
    };
    let has_policer = p.queues.iter().any(|q| q.policer.is_some());
    let has_shaper = p.queues.iter().any(|q| q.shaper.is_some());
    let mut columns = vec![vec![classifier_block(p)]];
    let side = |cfg: Option<Block>| cfg.unwrap_or_else(|| Block::new("-", vec![], "#ffffff"));
    if has_policer {
        columns.push(
            p.queues
                .iter()
                .map(|q| {
                    side(q.policer.as_ref().map(|c| {
                        Block::new(
                            format!("policer: {}", kind_of(c)),
                            params(c, &[]),
                            "#fbeaea",
                        )
                    }))
                })
                .collect(),
        );
    }
    columns.push(p.queues.iter().map(queue_block).collect());
    if has_shaper {
        columns.push(
            p.queues
                .iter()
                .map(|q| {
                    side(q.shaper.as_ref().map(|c| {
                        Block::new(format!("shaper: {}", kind_of(c)), params(c, &[]), "#f3eefa")
                    }))
                })
                .collect(),
        );
    }
    let mut sched_lines = params(&p.scheduler, &[]);
    if let Some(l) = p.limit_packets {
        sched_lines.push(format!("total limit = {l} packets"));
    }
    columns.push(vec![Block::new(
        format!("scheduler: {}", kind_of(&p.scheduler)),
        sched_lines,
        "#e8f0fa",
    )]);
    columns.push(vec![Block::new(
        format!("pacer: {}", p.pacer.kind_name()),
        params(&p.pacer, &[]),
        "#fff7d6",
    )]);
    columns.push(vec![rlc]);
    layout(&columns, "TC pipeline")
}

/// Places columns of boxes left to right (per-queue columns share rows),
/// centred vertically, with arrows between consecutive columns.
fn layout(columns: &[Vec<Block>], label: &str) -> String {
    let rows = columns.iter().map(Vec::len).max().unwrap_or(1);
    // Row heights: the tallest box of the row over the per-queue columns.
    let row_h: Vec<i32> = (0..rows)
        .map(|r| {
            columns
                .iter()
                .filter(|c| c.len() == rows)
                .filter_map(|c| c.get(r).map(Block::height))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let per_row_total: i32 = row_h.iter().sum::<i32>() + ROW_GAP * (rows as i32 - 1);
    let single_max = columns
        .iter()
        .filter(|c| c.len() == 1)
        .map(|c| c[0].height())
        .max()
        .unwrap_or(0);
    let inner_h = per_row_total.max(single_max);
    let top = 10;
    let height = inner_h + 2 * top;
    let width = columns.len() as i32 * (BOX_W + GAP) - GAP + 20;
    let mut out = format!(
        "<svg class=\"pipeline-svg\" role=\"img\" aria-label=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"11\">",
        escape(label)
    );
    // Anchor points (right edge out, left edge in) of every box per column.
    let mut prev_out: Vec<(i32, i32)> = Vec::new();
    for (ci, col) in columns.iter().enumerate() {
        let x = 10 + ci as i32 * (BOX_W + GAP);
        let mut anchors = Vec::new();
        if col.len() == rows && rows > 1 {
            let mut y = top + (inner_h - per_row_total) / 2;
            for (r, b) in col.iter().enumerate() {
                let by = y + (row_h[r] - b.height()) / 2;
                b.svg(x, by, &mut out);
                anchors.push((x, by + b.height() / 2));
                y += row_h[r] + ROW_GAP;
            }
        } else {
            for b in col {
                let by = top + (inner_h - b.height()) / 2;
                b.svg(x, by, &mut out);
                anchors.push((x, by + b.height() / 2));
            }
        }
        // Arrows from every box of the previous column to every box of this
        // one when one side is a single box; row to row otherwise.
        for (i, (ax, ay)) in anchors.iter().enumerate() {
            let from: Vec<&(i32, i32)> = if prev_out.len() == anchors.len() {
                prev_out.get(i).into_iter().collect()
            } else {
                prev_out.iter().collect()
            };
            for (px, py) in from {
                arrow(&mut out, *px, *py, *ax, *ay);
            }
        }
        prev_out = anchors.iter().map(|(ax, ay)| (ax + BOX_W, *ay)).collect();
    }
    out.push_str("</svg>");
    out
}

fn arrow(out: &mut String, x1: i32, y1: i32, x2: i32, y2: i32) {
    let _ = write!(
        out,
        "<line x1=\"{x1}\" y1=\"{y1}\" x2=\"{}\" y2=\"{y2}\" stroke=\"#555\"/><polygon points=\"{x2},{y2} {},{} {},{}\" fill=\"#555\"/>",
        x2 - 6,
        x2 - 7,
        y2 - 4,
        x2 - 7,
        y2 + 4
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pipeline(toml_text: &str) -> PipelineConfig {
        toml::from_str(toml_text).unwrap()
    }

    #[test]
    fn baseline_is_drawn_as_sdap_into_rlc() {
        let svg = drawing(None, &tcran_ran::rlc::RlcConfig::default());
        assert!(svg.contains("3GPP baseline"));
        assert!(svg.contains(">RLC<"));
        assert!(svg.contains("buffer_limit = "));
        assert_eq!(svg.matches("<rect").count(), 3);
        assert_eq!(svg.matches("<polygon").count(), 2, "two arrows");
    }

    #[test]
    fn every_stage_is_drawn_in_data_path_order_with_its_parameters() {
        let p = pipeline(
            r#"
            default_queue = 1
            classifier = { kind = "filter", rules = [ { priority = 1, protocol = "udp", queue = 0 } ] }
            scheduler = { kind = "priority" }
            pacer = { kind = "bdp", offset = 0.5 }
            [[queues]]
            id = 0
            kind = "fifo"
            policer = { kind = "token_bucket", rate = "1Mbit/s", burst = "10kB" }
            [[queues]]
            id = 1
            kind = "codel"
            target = "7ms"
            priority = 1
            "#,
        );
        let svg = drawing(Some(&p), &tcran_ran::rlc::RlcConfig::default());
        let order = [
            "classifier: filter",
            "policer: token_bucket",
            "queue 0: fifo",
            "queue 1: codel",
            "scheduler: priority",
            "pacer: bdp",
            ">RLC<",
        ];
        let pos: Vec<usize> = order
            .iter()
            .map(|s| svg.find(s).unwrap_or_else(|| panic!("{s} missing: {svg}")))
            .collect();
        assert!(pos.windows(2).all(|w| w[0] < w[1]), "{pos:?}");
        for p in [
            "target = 7ms",
            "offset = 0.5",
            "priority = 1",
            "protocol=udp -&gt; q0",
        ] {
            assert!(svg.contains(p), "{p} missing");
        }
        // classifier, 2 policer slots, 2 queues, scheduler, pacer, RLC.
        assert_eq!(svg.matches("<rect").count(), 8);
        // classifier -> 2 policers, 2 policer -> queue, 2 queues -> scheduler,
        // scheduler -> pacer -> RLC.
        assert_eq!(svg.matches("<polygon").count(), 8);
    }
}
