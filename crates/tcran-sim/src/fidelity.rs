//! The papers' numbers next to ours, as data.
//!
//! A reproduction scenario lists the numbers its paper printed
//! (`[[paper]]`: seed document, figure, variant, flow, metric, the value
//! or range). [`measure`] reads each one off the scenario's runs (the mean
//! and 95 % confidence interval across its seeds) and says how far it is:
//!
//! - **ratio**: ours over the paper's; inside a range it is 1, outside it
//!   is ours over the nearer end. `within_2x` holds for ratios in
//!   `[0.5, 2]`. A paper value of 0 has no ratio: the row is within 2x
//!   only when ours is 0 too.
//! - **ordering**: the rows of one experiment that share figure, metric,
//!   flow and reference form a group; the group keeps the paper's ordering
//!   when every pair of its variants compares as in the paper (ranges by
//!   their middle), a difference under 5 % of the larger value being a tie
//!   on both sides: a tie must stay a tie and an order must stay that order.
//!   Two variants that try the same variant of the paper (`paper_variant`)
//!   are not ordered against each other.
//!
//! Nothing here is tuned to pass: the paper's values are typed in from the
//! seed documents, ours come from the runs, and the totals are what the
//! tests ratchet (`crates/tcran-cli/tests/fidelity.rs`).

use crate::scenario::{FlowKind, SimConfig};
use crate::seeds::Interval;
use crate::series::RunSeries;
use crate::{RunSummary, ScenarioOutput};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use tcran_core::{ConfigError, Duration};

/// The seed documents a number can come from.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// M. Irazabal, PhD thesis (5G QoS: the pacers, EQP).
    IrazabalThesis,
    /// The TC-RAN paper.
    TcRanPaper,
    /// Kumar et al., dynamic RLC buffer sizing.
    KumarDynamicRlc,
    /// Brunello, L4S in 5G (thesis).
    BrunelloL4sThesis,
    /// The student ns-3 study of DRQL.
    StudentNs3Study,
}

/// What a paper number measures. Flow metrics need `flow`; delays are in
/// ms, shares in percent (0-100), as the papers print them.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    ThroughputMbps,
    /// One-way delay, server to UE, core delay included.
    DelayMeanMs,
    DelayP50Ms,
    DelayP95Ms,
    DelayP99Ms,
    /// One-way delay minus the (constant) core delay: UPF queue + TC
    /// queues + RLC + air.
    RanDelayMeanMs,
    RanDelayP95Ms,
    /// UPF queue + TC queues + RLC (means): the delay until the MAC takes
    /// the packet, without its time on the air.
    EnbDelayMeanMs,
    /// UPF queue + TC queues (means).
    TcDelayMeanMs,
    RlcDelayMeanMs,
    /// Ping flows: the round trip.
    RttMeanMs,
    RttP95Ms,
    /// Lost over created packets of the flow.
    LostPct,
    /// Delivered packets whose one-way delay is at most `within` (read off
    /// the run's delay CDF of at most 200 points: exact to 0.5 %).
    DelayWithinPct,
    /// PRBs used over PRBs available (DL slots, after warm-up).
    PrbUsedPct,
    PrbUnusedPct,
    RlcMeanBytes,
    RlcSojournMeanMs,
}

impl Metric {
    fn of_flow(self) -> bool {
        !matches!(
            self,
            Metric::PrbUsedPct
                | Metric::PrbUnusedPct
                | Metric::RlcMeanBytes
                | Metric::RlcSojournMeanMs
        )
    }
    fn of_ping(self) -> bool {
        matches!(self, Metric::RttMeanMs | Metric::RttP95Ms)
    }
    /// As written in a scenario.
    pub fn name(self) -> String {
        serde_name(self)
    }
}

impl Source {
    /// As written in a scenario.
    pub fn name(self) -> String {
        serde_name(self)
    }
}

/// A unit variant's name as serde writes it.
fn serde_name(v: impl Serialize) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The paper's value: one number or a range `[low, high]` (a span it
/// gives, or a bound such as "more than 95 %" as `[95, 100]`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PaperValue {
    pub low: f64,
    pub high: f64,
}

impl PaperValue {
    fn middle(self) -> f64 {
        (self.low + self.high) / 2.0
    }
}

impl<'de> Deserialize<'de> for PaperValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PaperValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number or a range [low, high]")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<PaperValue, E> {
                Ok(PaperValue { low: v, high: v })
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<PaperValue, E> {
                self.visit_f64(v as f64)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<PaperValue, E> {
                self.visit_f64(v as f64)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<PaperValue, A::Error> {
                let low: f64 = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(0, &self))?;
                let high: f64 = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(1, &self))?;
                if seq.next_element::<f64>()?.is_some() {
                    return Err(de::Error::invalid_length(3, &self));
                }
                Ok(PaperValue { low, high })
            }
        }
        d.deserialize_any(V)
    }
}

impl schemars::JsonSchema for PaperValue {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "PaperValue".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A number, or a range [low, high].",
            "anyOf": [
                { "type": "number" },
                { "type": "array", "items": { "type": "number" }, "minItems": 2, "maxItems": 2 }
            ]
        })
    }
}

/// One number a paper printed, that this scenario reproduces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PaperNumber {
    pub source: Source,
    /// Where it is printed or plotted: "Fig. 3.22", "Table 3.2".
    pub figure: String,
    /// The variant of this scenario it is compared with.
    pub variant: String,
    /// The paper's name for the variant, when several of this scenario's
    /// variants try the same one (e.g. two readings of a setup the paper
    /// leaves open): rows with one paper variant are not ordered against
    /// each other. Absent: `variant`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paper_variant: Option<String>,
    /// Flow metrics: the flow (of that variant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<String>,
    pub metric: Metric,
    /// `delay_within_pct` only: the delay bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within: Option<Duration>,
    /// A factor: the metric of `variant` over the same metric of this
    /// variant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative_to: Option<String>,
    pub paper: PaperValue,
    /// How the number was obtained when the paper does not print it (read
    /// off a plot, derived from two printed numbers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Why ours differs from the paper's when it is outside 2x: a
    /// difference of setup or a limit of the model, as measured, or what
    /// was tried when the cause is not isolated. Shown beside the number;
    /// the reproduction ratchet requires one for every number outside 2x.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<String>,
}

impl PaperNumber {
    /// The variant of the paper this row is.
    fn in_paper(&self) -> &str {
        self.paper_variant.as_deref().unwrap_or(&self.variant)
    }

    /// "flow: metric <= bound / reference".
    fn metric_text(&self) -> String {
        metric_text(
            self.metric,
            self.flow.as_deref(),
            self.within,
            self.relative_to.as_deref(),
        )
    }

    /// The name of the group this row's ordering is judged in.
    fn group(&self, scenario: &str) -> String {
        group_name(scenario, self.source, &self.figure, &self.metric_text())
    }
}

/// Why one group of a scenario's paper numbers does not keep the paper's
/// ordering: the group is named as its rows name it (source, figure,
/// metric, and flow, bound and reference where they have them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderingGap {
    pub source: Source,
    pub figure: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<String>,
    pub metric: Metric,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative_to: Option<String>,
    /// The pairs that compare otherwise than in the paper, and why: a
    /// difference of setup or a limit of the model, as measured, or what
    /// was tried. Shown under the group; the ratchet requires one for
    /// every group that does not keep its ordering.
    pub gap: String,
}

impl OrderingGap {
    /// The group's name, as [`Row::group`] writes it.
    fn group(&self, scenario: &str) -> String {
        group_name(
            scenario,
            self.source,
            &self.figure,
            &metric_text(
                self.metric,
                self.flow.as_deref(),
                self.within,
                self.relative_to.as_deref(),
            ),
        )
    }
}

/// The longest `gap` explanation: a few sentences, not a section.
pub const GAP_MAX_CHARS: usize = 1000;

/// Checks every `[[paper]]` row against the scenario: its variants, flows
/// and metric fit, its value is a finite non-negative number or range.
pub fn check(cfg: &SimConfig) -> Result<(), ConfigError> {
    let variant_names: Vec<&str> = if cfg.variants.is_empty() {
        vec!["default"]
    } else {
        cfg.variants.iter().map(|v| v.name.as_str()).collect()
    };
    let flows_of = |variant: &str| {
        cfg.variants
            .iter()
            .find(|v| v.name == variant)
            .and_then(|v| v.flows.as_ref())
            .unwrap_or(&cfg.flows)
    };
    for (i, p) in cfg.paper.iter().enumerate() {
        let at = |field: &str| format!("paper[{i}].{field}");
        let variants = || {
            variant_names
                .iter()
                .map(|n| format!("{n:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        for (field, name) in [
            ("variant", Some(&p.variant)),
            ("relative_to", p.relative_to.as_ref()),
        ] {
            if let Some(name) = name {
                if !variant_names.contains(&name.as_str()) {
                    return Err(ConfigError::new(
                        at(field),
                        format!("{name:?}"),
                        format!("must be a variant of this scenario: {}", variants()),
                    ));
                }
            }
        }
        if p.relative_to.as_ref() == Some(&p.variant) {
            return Err(ConfigError::new(
                at("relative_to"),
                format!("{:?}", p.variant),
                "must be another variant than `variant` (a factor of a variant over itself is 1)",
            ));
        }
        match (&p.flow, p.metric.of_flow()) {
            (None, true) => {
                return Err(ConfigError::new(
                    at("flow"),
                    "(absent)",
                    format!("metric {} is a flow's: name the flow", p.metric.name()),
                ))
            }
            (Some(f), false) => {
                return Err(ConfigError::new(
                    at("flow"),
                    format!("{f:?}"),
                    format!("metric {} is the whole variant's: no flow", p.metric.name()),
                ))
            }
            _ => {}
        }
        if let Some(flow) = &p.flow {
            for variant in std::iter::once(&p.variant).chain(&p.relative_to) {
                let flows = flows_of(variant);
                let Some(f) = flows.iter().find(|f| &f.name == flow) else {
                    let names: Vec<String> =
                        flows.iter().map(|f| format!("{:?}", f.name)).collect();
                    return Err(ConfigError::new(
                        at("flow"),
                        format!("{flow:?}"),
                        format!(
                            "must be a flow of variant {variant:?}: {}",
                            names.join(", ")
                        ),
                    ));
                };
                if p.metric.of_ping() && !matches!(f.kind, FlowKind::Ping { .. }) {
                    return Err(ConfigError::new(
                        at("metric"),
                        p.metric.name(),
                        format!("is a round trip: flow {flow:?} must be a ping flow"),
                    ));
                }
            }
        }
        match (p.metric, p.within) {
            (Metric::DelayWithinPct, None) => {
                return Err(ConfigError::new(
                    at("within"),
                    "(absent)",
                    "delay_within_pct needs the delay bound, e.g. \"10ms\"",
                ))
            }
            (m, Some(w)) if m != Metric::DelayWithinPct => {
                return Err(ConfigError::new(
                    at("within"),
                    w,
                    "only delay_within_pct has a delay bound",
                ))
            }
            _ => {}
        }
        if let Some(gap) = &p.gap {
            check_gap_text(gap)
                .map_err(|(value, allowed)| ConfigError::new(at("gap"), value, allowed))?;
        }
        let PaperValue { low, high } = p.paper;
        if !(low.is_finite() && high.is_finite() && 0.0 <= low && low <= high) {
            return Err(ConfigError::new(
                at("paper"),
                format!("[{low}, {high}]"),
                "must be a number >= 0, or a range [low, high] with 0 <= low <= high",
            ));
        }
    }
    check_ordering_gaps(cfg)
}

/// Each `[[ordering_gap]]` names a group of `[[paper]]` rows with an
/// ordering (two or more variants of the paper), once, and says why in
/// `gap`'s bounds.
fn check_ordering_gaps(cfg: &SimConfig) -> Result<(), ConfigError> {
    let groups = paper_groups(&cfg.paper);
    let mut seen = Vec::new();
    for (i, o) in cfg.ordering_gaps.iter().enumerate() {
        let at = |field: &str| format!("ordering_gap[{i}].{field}");
        let name = o.group("");
        if groups.get(&name).is_none_or(|v| v.len() < 2) {
            let ordered: Vec<String> = groups
                .iter()
                .filter(|(_, v)| v.len() >= 2)
                .map(|(g, _)| format!("{:?}", g.trim_start_matches(" | ")))
                .collect();
            return Err(ConfigError::new(
                at("figure"),
                format!("{:?}", name.trim_start_matches(" | ")),
                format!(
                    "must name a group of two or more [[paper]] variants (source, figure, metric, flow, within, relative_to as its rows have them): {}",
                    if ordered.is_empty() { "this scenario has none".to_string() } else { ordered.join(", ") }
                ),
            ));
        }
        if seen.contains(&name) {
            return Err(ConfigError::new(
                at("figure"),
                format!("{:?}", name.trim_start_matches(" | ")),
                "must name a group no other [[ordering_gap]] names",
            ));
        }
        seen.push(name);
        check_gap_text(&o.gap)
            .map_err(|(value, allowed)| ConfigError::new(at("gap"), value, allowed))?;
    }
    Ok(())
}

/// Each group's name (without a scenario: any will do, it is the same on
/// both sides) with the paper variants it holds.
fn paper_groups(paper: &[PaperNumber]) -> BTreeMap<String, Vec<&str>> {
    paper.iter().fold(BTreeMap::new(), |mut groups, p| {
        let variants: &mut Vec<&str> = groups.entry(p.group("")).or_default();
        if !variants.contains(&p.in_paper()) {
            variants.push(p.in_paper());
        }
        groups
    })
}

impl OrderingGap {
    /// Whether `paper` holds the group this names with two or more paper
    /// variants (what [`check`] requires).
    pub fn names_a_group_of(&self, paper: &[PaperNumber]) -> bool {
        paper_groups(paper)
            .get(&self.group(""))
            .is_some_and(|v| v.len() >= 2)
    }
}

/// `gap`'s bounds: 1 to [`GAP_MAX_CHARS`] characters, none a control
/// character; the error's value and allowed range otherwise.
fn check_gap_text(gap: &str) -> Result<(), (String, String)> {
    let chars = gap.chars().count();
    if !(1..=GAP_MAX_CHARS).contains(&chars) || gap.chars().any(char::is_control) {
        return Err((
            format!("{chars} characters"),
            format!("must be 1 to {GAP_MAX_CHARS} characters without control characters"),
        ));
    }
    Ok(())
}

/// Ours: the mean over the seeds and, with several, the 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Ours {
    pub seeds: u64,
    pub mean: f64,
    /// With several seeds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci_low: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci_high: Option<f64>,
}

impl Ours {
    fn of(values: &[f64]) -> Ours {
        if values.len() >= 2 {
            let i = Interval::of(values);
            Ours {
                seeds: i.n,
                mean: i.mean,
                ci_low: Some(i.low),
                ci_high: Some(i.high),
            }
        } else {
            Ours {
                seeds: values.len() as u64,
                mean: values.first().copied().unwrap_or(f64::NAN),
                ci_low: None,
                ci_high: None,
            }
        }
    }
}

/// One paper number and ours.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub scenario: String,
    #[serde(flatten)]
    pub number: PaperNumber,
    pub ours: Ours,
    /// Ours over the paper's (1 inside a range); absent when the paper's
    /// value is 0.
    pub ratio: Option<f64>,
    pub within_2x: bool,
    /// Whether every pair of this row and another of its group compares as
    /// in the paper; absent when the row is alone in its group.
    pub ordering_kept: Option<bool>,
}

/// The rows of scenarios, their ordering groups and the totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Fidelity {
    pub rows: Vec<Row>,
    /// Every group of two or more variants of the paper, in name order.
    pub groups: Vec<Group>,
    pub totals: Totals,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    pub rows: usize,
    pub within_2x: usize,
    /// Groups of two or more rows (an ordering to keep).
    pub groups: usize,
    pub orderings_kept: usize,
}

/// One group of rows whose ordering is judged together ([`Row::group`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    pub scenario: String,
    pub group: String,
    pub kept: bool,
    /// The pairs that compare otherwise than in the paper.
    pub differing: Vec<Pair>,
    /// The scenario's `[[ordering_gap]]` for this group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gap: Option<String>,
}

/// Two variants of a group and how they compare.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pair {
    pub a: String,
    pub b: String,
    pub paper: Order,
    pub ours: Order,
}

/// `a` against `b`: below, tied with (within 5 % of the larger) or above.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    Below,
    Tie,
    Above,
}

impl Order {
    fn sign(self) -> &'static str {
        match self {
            Order::Below => "<",
            Order::Tie => "~",
            Order::Above => ">",
        }
    }
}

impl Pair {
    /// "a > b (paper: a ~ b)".
    pub fn text(&self) -> String {
        format!(
            "{} {} {} (paper {})",
            self.a,
            self.ours.sign(),
            self.b,
            self.paper.sign()
        )
    }
}

/// One scenario's rows and its `[[ordering_gap]]` texts by group name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Measured {
    pub rows: Vec<Row>,
    pub ordering_gaps: BTreeMap<String, String>,
}

impl Fidelity {
    /// All the rows of several scenarios, with the totals over them.
    pub fn of(parts: Vec<Measured>) -> Fidelity {
        let mut gaps = BTreeMap::new();
        let mut rows = Vec::new();
        for m in parts {
            rows.extend(m.rows);
            gaps.extend(m.ordering_gaps);
        }
        let mut groups = mark_orderings(&mut rows);
        for g in &mut groups {
            g.gap = gaps.get(&g.group).cloned();
        }
        let totals = Totals {
            rows: rows.len(),
            within_2x: rows.iter().filter(|r| r.within_2x).count(),
            groups: groups.len(),
            orderings_kept: groups.iter().filter(|g| g.kept).count(),
        };
        Fidelity {
            rows,
            groups,
            totals,
        }
    }
}

/// "flow: metric <= bound / reference".
fn metric_text(
    metric: Metric,
    flow: Option<&str>,
    within: Option<Duration>,
    relative_to: Option<&str>,
) -> String {
    let mut text = metric.name();
    if let Some(flow) = flow {
        text = format!("{flow}: {text}");
    }
    if let Some(w) = within {
        text.push_str(&format!(" <= {w}"));
    }
    if let Some(v) = relative_to {
        text.push_str(&format!(" / {v}"));
    }
    text
}

/// "scenario | source figure | metric text".
fn group_name(scenario: &str, source: Source, figure: &str, metric_text: &str) -> String {
    format!("{scenario} | {} {figure} | {metric_text}", source.name())
}

/// A number with the precision a table wants: 3 significant digits
/// above 10, 2 decimals below.
fn short(v: f64) -> String {
    if !v.is_finite() {
        "-".to_string()
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

impl Row {
    /// "flow: metric <= bound / reference".
    pub fn metric_text(&self) -> String {
        self.number.metric_text()
    }

    /// The paper's value or range.
    pub fn paper_text(&self) -> String {
        let v = self.number.paper;
        if v.low == v.high {
            short(v.low)
        } else {
            format!("{}-{}", short(v.low), short(v.high))
        }
    }

    /// Ours, with the confidence interval when there is one.
    pub fn ours_text(&self) -> String {
        match (self.ours.ci_low, self.ours.ci_high) {
            (Some(lo), Some(hi)) => {
                format!("{} ({}..{})", short(self.ours.mean), short(lo), short(hi))
            }
            _ => short(self.ours.mean),
        }
    }

    /// The group the row's ordering is judged in: the scenario, source,
    /// figure and metric (flow, bound and reference included) its rows
    /// share, as text.
    pub fn group(&self) -> String {
        self.number.group(&self.scenario)
    }

    pub fn ratio_text(&self) -> String {
        self.ratio.map_or("-".into(), |x| format!("{x:.2}"))
    }
}

impl Fidelity {
    /// The rows as Markdown: the totals, then one table per scenario.
    pub fn markdown(&self) -> String {
        use std::fmt::Write as _;
        let t = self.totals;
        let mut out = format!(
            "{} of {} paper numbers within 2x; {} of {} groups keep the paper's ordering.\n",
            t.within_2x, t.rows, t.orderings_kept, t.groups
        );
        let mut scenario = "";
        for (i, r) in self.rows.iter().enumerate() {
            if r.scenario != scenario {
                scenario = &r.scenario;
                let _ = write!(
                    out,
                    "\n`{scenario}`\n\n| source | variant | metric | paper | ours (95 % CI) | ratio | within 2x | ordering kept |\n|---|---|---|---|---|---|---|---|\n"
                );
            }
            let yes_no = |b: bool| if b { "yes" } else { "**no**" };
            let _ = writeln!(
                out,
                "| {} {} | {} | {} | {} | {} | {} | {} | {} |",
                r.number.source.name(),
                r.number.figure,
                r.number.variant,
                r.metric_text(),
                r.paper_text(),
                r.ours_text(),
                r.ratio_text(),
                yes_no(r.within_2x),
                r.ordering_kept.map_or("-", yes_no)
            );
            let last = self
                .rows
                .get(i + 1)
                .is_none_or(|n| n.scenario != r.scenario);
            if last {
                let outside: Vec<&Row> = self
                    .rows
                    .iter()
                    .filter(|o| o.scenario == r.scenario && !o.within_2x)
                    .collect();
                if !outside.is_empty() {
                    out.push_str("\nOutside 2x, and why:\n\n");
                    for o in outside {
                        let _ = writeln!(
                            out,
                            "- {} {}: {}",
                            o.number.variant,
                            o.metric_text(),
                            o.gap_text()
                        );
                    }
                }
                let broken: Vec<&Group> = self
                    .groups
                    .iter()
                    .filter(|g| g.scenario == r.scenario && !g.kept)
                    .collect();
                if !broken.is_empty() {
                    out.push_str("\nOrderings not kept, and why:\n\n");
                    for g in broken {
                        let _ = writeln!(out, "- {}: {}", g.short_name(), g.differing_text());
                        let _ = writeln!(out, "  {}", g.gap_text());
                    }
                }
            }
        }
        out
    }
}

impl Row {
    /// The row's explanation of its gap, or that it has none.
    pub fn gap_text(&self) -> &str {
        self.number.gap.as_deref().unwrap_or("not explained yet")
    }
}

impl Group {
    /// The group's name without its scenario: "source figure | metric".
    pub fn short_name(&self) -> &str {
        self.group
            .strip_prefix(&self.scenario)
            .map_or(&self.group[..], |rest| rest.trim_start_matches(" | "))
    }

    /// The differing pairs, "a < b (paper ~); ...".
    pub fn differing_text(&self) -> String {
        self.differing
            .iter()
            .map(Pair::text)
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The group's explanation of its ordering, or that it has none.
    pub fn gap_text(&self) -> &str {
        self.gap.as_deref().unwrap_or("not explained yet")
    }
}

/// Each of `p`'s values, one per seed, read off `out`.
fn per_seed(p: &PaperNumber, variant: &str, out: &ScenarioOutput) -> Vec<f64> {
    let s = &out.summary;
    let Some(vi) = s.variants.iter().position(|v| v.name == variant) else {
        return Vec::new();
    };
    let runs: Vec<&RunSummary> = if s.seed_runs.is_empty() {
        vec![&s.variants[vi].run]
    } else {
        s.seed_runs.iter().map(|r| &r.variants[vi].run).collect()
    };
    let series: Vec<Option<&RunSeries>> = if out.seed_series.is_empty() {
        vec![out.series.get(vi)]
    } else {
        out.seed_series.iter().map(|k| k.get(vi)).collect()
    };
    runs.iter()
        .zip(series)
        .map(|(run, series)| value(p, run, series))
        .collect()
}

/// `p`'s metric in one run.
fn value(p: &PaperNumber, run: &RunSummary, series: Option<&RunSeries>) -> f64 {
    let flow = p
        .flow
        .as_ref()
        .and_then(|name| run.flows.iter().find(|f| &f.name == name));
    let Some(f) = flow else {
        return match p.metric {
            Metric::PrbUsedPct => 100.0 * run.prb_utilization,
            Metric::PrbUnusedPct => 100.0 * (1.0 - run.prb_utilization),
            Metric::RlcMeanBytes => run.rlc.mean_bytes,
            Metric::RlcSojournMeanMs => run.rlc.mean_sojourn_ms,
            _ => f64::NAN, // checked: flow metrics name a flow of the variant
        };
    };
    let l = &f.layers_ms;
    let core = l.core.mean;
    match p.metric {
        Metric::ThroughputMbps => f.throughput_mbps,
        Metric::DelayMeanMs => f.delay_ms.mean,
        Metric::DelayP50Ms => f.delay_ms.p50,
        Metric::DelayP95Ms => f.delay_ms.p95,
        Metric::DelayP99Ms => f.delay_ms.p99,
        Metric::RanDelayMeanMs => f.delay_ms.mean - core,
        Metric::RanDelayP95Ms => f.delay_ms.p95 - core,
        Metric::EnbDelayMeanMs => l.upf.mean + l.tc.mean + l.rlc.mean,
        Metric::TcDelayMeanMs => l.upf.mean + l.tc.mean,
        Metric::RlcDelayMeanMs => l.rlc.mean,
        Metric::RttMeanMs => f.rtt_ms.map_or(f64::NAN, |r| r.mean),
        Metric::RttP95Ms => f.rtt_ms.map_or(f64::NAN, |r| r.p95),
        Metric::LostPct => match f.created_packets {
            0 => 0.0,
            n => 100.0 * f.lost_packets as f64 / n as f64,
        },
        Metric::DelayWithinPct => {
            let bound_ms = p.within.map_or(0.0, |w| w.as_secs_f64() * 1e3);
            let cdf = series
                .and_then(|s| s.flows.iter().find(|fs| fs.name == f.name))
                .map_or(&[][..], |fs| &fs.delay_cdf[..]);
            // The largest CDF point at or below the bound (1 ns of slack
            // for the ms conversion).
            100.0
                * cdf
                    .iter()
                    .take_while(|(ms, _)| *ms <= bound_ms + 1e-6)
                    .last()
                    .map_or(0.0, |&(_, share)| share)
        }
        Metric::PrbUsedPct
        | Metric::PrbUnusedPct
        | Metric::RlcMeanBytes
        | Metric::RlcSojournMeanMs => {
            unreachable!("checked: variant metrics name no flow")
        }
    }
}

/// The rows of one scenario's `[[paper]]` numbers, read off its output,
/// with its `[[ordering_gap]]` texts.
pub fn measure(cfg: &SimConfig, out: &ScenarioOutput) -> Measured {
    let scenario = &out.summary.scenario;
    Measured {
        rows: rows(&cfg.paper, out),
        ordering_gaps: cfg
            .ordering_gaps
            .iter()
            .map(|o| (o.group(scenario), o.gap.clone()))
            .collect(),
    }
}

fn rows(paper: &[PaperNumber], out: &ScenarioOutput) -> Vec<Row> {
    paper
        .iter()
        .map(|p| {
            let values = per_seed(p, &p.variant, out);
            let values: Vec<f64> = match &p.relative_to {
                Some(reference) => values
                    .iter()
                    .zip(per_seed(p, reference, out))
                    .map(|(v, r)| v / r)
                    .collect(),
                None => values,
            };
            let ours = Ours::of(&values);
            let ratio = ratio(ours.mean, p.paper);
            let within_2x = match ratio {
                Some(r) => (0.5..=2.0).contains(&r),
                None => ours.mean == 0.0,
            };
            Row {
                scenario: out.summary.scenario.clone(),
                number: p.clone(),
                ours,
                ratio,
                within_2x,
                ordering_kept: None,
            }
        })
        .collect()
}

/// Ours over the paper's: 1 inside its range, else over the nearer end;
/// none when that end is 0 (or ours is not a number).
fn ratio(ours: f64, paper: PaperValue) -> Option<f64> {
    if !ours.is_finite() {
        return None;
    }
    if (paper.low..=paper.high).contains(&ours) {
        return Some(1.0);
    }
    let end = if ours < paper.low {
        paper.low
    } else {
        paper.high
    };
    (end > 0.0).then(|| ours / end)
}

/// `a` against `b`, a difference under 5 % of the larger being a tie.
fn compare(a: f64, b: f64) -> Order {
    if (a - b).abs() <= 0.05 * a.abs().max(b.abs()) {
        Order::Tie
    } else if a < b {
        Order::Below
    } else {
        Order::Above
    }
}

/// Sets each row's `ordering_kept` and returns every group of two or more
/// rows with the pairs that compare otherwise than in the paper (no gap
/// texts yet).
fn mark_orderings(rows: &mut [Row]) -> Vec<Group> {
    let mut members_of: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, r) in rows.iter().enumerate() {
        members_of.entry(r.group()).or_default().push(i);
    }
    let mut groups = Vec::new();
    for (name, members) in members_of.into_iter().filter(|(_, m)| m.len() >= 2) {
        let mut row_kept = vec![true; members.len()];
        let mut differing = Vec::new();
        for (a, &i) in members.iter().enumerate() {
            for (b, &j) in members.iter().enumerate().skip(a + 1) {
                let (ri, rj) = (&rows[i], &rows[j]);
                if ri.number.in_paper() == rj.number.in_paper() {
                    continue;
                }
                let paper = compare(ri.number.paper.middle(), rj.number.paper.middle());
                let ours = compare(ri.ours.mean, rj.ours.mean);
                if paper != ours {
                    row_kept[a] = false;
                    row_kept[b] = false;
                    differing.push(Pair {
                        a: ri.number.variant.clone(),
                        b: rj.number.variant.clone(),
                        paper,
                        ours,
                    });
                }
            }
        }
        groups.push(Group {
            scenario: rows[members[0]].scenario.clone(),
            group: name,
            kept: differing.is_empty(),
            differing,
            gap: None,
        });
        for (&i, kept) in members.iter().zip(row_kept) {
            rows[i].ordering_kept = Some(kept);
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paper(low: f64, high: f64) -> PaperValue {
        PaperValue { low, high }
    }

    #[test]
    fn the_ratio_is_one_inside_a_range_and_to_the_nearer_end_outside() {
        assert_eq!(ratio(80.0, paper(75.0, 85.0)), Some(1.0));
        assert_eq!(ratio(170.0, paper(75.0, 85.0)), Some(2.0));
        assert_eq!(ratio(37.5, paper(75.0, 85.0)), Some(0.5));
        assert_eq!(ratio(5.0, paper(0.0, 0.0)), None);
        assert_eq!(ratio(0.0, paper(0.0, 0.0)), Some(1.0));
        assert_eq!(ratio(f64::NAN, paper(1.0, 1.0)), None);
    }

    /// Each mistake in a `[[paper]]` row names the row's field, the value
    /// and what is allowed.
    #[test]
    fn a_row_that_does_not_fit_the_scenario_is_refused_with_its_field() {
        let base =
            format!("{VARIANTS_A_B}[[paper]]\nsource = \"tc-ran-paper\"\nfigure = \"Fig. 15\"\n");
        let refused = |row: &str| {
            let cfg: SimConfig = toml::from_str(&format!("{base}{row}")).expect("parses");
            check(&cfg).map_err(|e| e.to_string())
        };
        assert_eq!(
            refused("variant = \"a\"\nflow = \"bulk\"\nmetric = \"throughput_mbps\"\npaper = 1"),
            Ok(())
        );
        let err = |row: &str| refused(row).expect_err(row);
        assert!(
            err("variant = \"c\"\nmetric = \"prb_used_pct\"\npaper = 1").starts_with(
                "paper[0].variant = \"c\": must be a variant of this scenario: \"a\", \"b\""
            )
        );
        assert!(
            err("variant = \"a\"\nrelative_to = \"a\"\nmetric = \"prb_used_pct\"\npaper = 1")
                .starts_with("paper[0].relative_to = \"a\"")
        );
        assert!(
            err("variant = \"a\"\nmetric = \"throughput_mbps\"\npaper = 1")
                .starts_with("paper[0].flow = (absent)")
        );
        assert!(
            err("variant = \"a\"\nflow = \"bulk\"\nmetric = \"prb_used_pct\"\npaper = 1")
                .starts_with("paper[0].flow = \"bulk\"")
        );
        assert!(
            err("variant = \"a\"\nflow = \"web\"\nmetric = \"throughput_mbps\"\npaper = 1")
                .starts_with("paper[0].flow = \"web\": must be a flow of variant \"a\": \"bulk\"")
        );
        assert!(
            err("variant = \"a\"\nflow = \"bulk\"\nmetric = \"rtt_mean_ms\"\npaper = 1")
                .starts_with("paper[0].metric = rtt_mean_ms")
        );
        assert!(
            err("variant = \"a\"\nflow = \"bulk\"\nmetric = \"delay_within_pct\"\npaper = 1")
                .starts_with("paper[0].within = (absent)")
        );
        assert!(err("variant = \"a\"\nflow = \"bulk\"\nmetric = \"delay_mean_ms\"\nwithin = \"1ms\"\npaper = 1")
            .starts_with("paper[0].within = 1ms"));
        assert!(
            err("variant = \"a\"\nmetric = \"prb_used_pct\"\npaper = [2, 1]")
                .starts_with("paper[0].paper = [2, 1]")
        );
        assert!(
            err("variant = \"a\"\nmetric = \"prb_used_pct\"\npaper = -1")
                .starts_with("paper[0].paper = [-1, -1]")
        );
        let gap = |text: &str| {
            format!("variant = \"a\"\nmetric = \"prb_used_pct\"\npaper = 1\ngap = {text:?}")
        };
        assert_eq!(refused(&gap("The paper's cell is wider.")), Ok(()));
        assert!(err(&gap("")).starts_with("paper[0].gap = 0 characters: must be 1 to 1000"));
        assert!(err(&gap(&"x".repeat(1001))).starts_with("paper[0].gap = 1001 characters"));
        assert!(err(&gap("a\tb")).starts_with("paper[0].gap = 3 characters"));
    }

    #[test]
    fn differences_under_five_percent_are_ties() {
        assert_eq!(compare(100.0, 95.5), Order::Tie);
        assert_eq!(compare(95.5, 100.0), Order::Tie);
        assert_eq!(compare(100.0, 94.0), Order::Above);
        assert_eq!(compare(94.0, 100.0), Order::Below);
        assert_eq!(compare(0.0, 0.0), Order::Tie);
    }

    /// One UE, a bulk flow, variants "a" and "b".
    const VARIANTS_A_B: &str = r#"
duration = "1s"
[[ues]]
rnti = 1
channel = { kind = "mcs", mcs = 20 }
[[flows]]
name = "bulk"
ue = 1
kind = "tcp"
[[variants]]
name = "a"
[[variants]]
name = "b"
"#;

    /// Paper rows for `VARIANTS_A_B`: a group of two (Fig. 15) and one of one.
    const PAPER_ROWS: &str = r#"
[[paper]]
source = "tc-ran-paper"
figure = "Fig. 15"
variant = "a"
flow = "bulk"
metric = "throughput_mbps"
paper = 10
[[paper]]
source = "tc-ran-paper"
figure = "Fig. 15"
variant = "b"
flow = "bulk"
metric = "throughput_mbps"
paper = 20
[[paper]]
source = "tc-ran-paper"
figure = "Table III"
variant = "a"
metric = "prb_used_pct"
paper = 80
"#;

    /// An `[[ordering_gap]]` must name a group with an ordering, once.
    #[test]
    fn an_ordering_gap_names_a_group_of_two_or_more_variants() {
        let check_with = |gap: &str| {
            let cfg: SimConfig = toml::from_str(&format!(
                "{VARIANTS_A_B}{PAPER_ROWS}[[ordering_gap]]\n{gap}"
            ))
            .expect("parses");
            check(&cfg).map_err(|e| e.to_string())
        };
        let fifteen = "source = \"tc-ran-paper\"\nfigure = \"Fig. 15\"\nflow = \"bulk\"\nmetric = \"throughput_mbps\"\n";
        assert_eq!(
            check_with(&format!("{fifteen}gap = \"The cell differs.\"")),
            Ok(())
        );
        let err = check_with("source = \"tc-ran-paper\"\nfigure = \"Table III\"\nmetric = \"prb_used_pct\"\ngap = \"x\"")
            .expect_err("a group of one variant has no ordering");
        assert!(
            err.starts_with("ordering_gap[0].figure = \"tc-ran-paper Table III | prb_used_pct\": must name a group of two or more [[paper]] variants")
                && err.ends_with("\"tc-ran-paper Fig. 15 | bulk: throughput_mbps\""),
            "{err}"
        );
        let err = check_with("source = \"tc-ran-paper\"\nfigure = \"Fig. 15\"\nmetric = \"throughput_mbps\"\ngap = \"x\"")
            .expect_err("without its flow it is another group");
        assert!(err.starts_with("ordering_gap[0].figure"), "{err}");
        let err = check_with(&format!("{fifteen}gap = \"\"")).expect_err("empty");
        assert!(
            err.starts_with("ordering_gap[0].gap = 0 characters"),
            "{err}"
        );
        let cfg: SimConfig = toml::from_str(&format!(
            "{VARIANTS_A_B}{PAPER_ROWS}[[ordering_gap]]\n{fifteen}gap = \"x\"\n[[ordering_gap]]\n{fifteen}gap = \"y\""
        ))
        .expect("parses");
        let err = check(&cfg).expect_err("named twice").to_string();
        assert!(err.starts_with("ordering_gap[1].figure"), "{err}");
    }

    fn row(variant: &str, paper: f64, ours: f64) -> Row {
        Row {
            scenario: "s".into(),
            number: PaperNumber {
                source: Source::TcRanPaper,
                figure: "Fig. 15".into(),
                variant: variant.into(),
                paper_variant: None,
                flow: Some("bulk".into()),
                metric: Metric::ThroughputMbps,
                within: None,
                relative_to: None,
                paper: PaperValue {
                    low: paper,
                    high: paper,
                },
                note: None,
                gap: None,
            },
            ours: Ours::of(&[ours]),
            ratio: None,
            within_2x: true,
            ordering_kept: None,
        }
    }

    /// A group lists each pair that compares otherwise than in the paper,
    /// and carries its scenario's explanation.
    #[test]
    fn a_broken_ordering_lists_its_pairs_and_its_explanation() {
        let group = "s | tc-ran-paper Fig. 15 | bulk: throughput_mbps".to_string();
        let f = Fidelity::of(vec![Measured {
            // Paper a < b < c; ours a ~ b, c above both.
            rows: vec![
                row("a", 10.0, 15.0),
                row("b", 20.0, 15.5),
                row("c", 30.0, 40.0),
            ],
            ordering_gaps: [(group.clone(), "Why.".to_string())].into(),
        }]);
        assert_eq!(f.totals.groups, 1);
        assert_eq!(f.totals.orderings_kept, 0);
        let g = &f.groups[0];
        assert_eq!(
            (g.group.as_str(), g.kept, g.gap.as_deref()),
            (group.as_str(), false, Some("Why."))
        );
        assert_eq!(g.differing_text(), "a ~ b (paper <)");
        assert_eq!(
            f.rows.iter().map(|r| r.ordering_kept).collect::<Vec<_>>(),
            [Some(false), Some(false), Some(true)]
        );
        let md = f.markdown();
        assert!(
            md.contains("Orderings not kept, and why:\n\n- tc-ran-paper Fig. 15 | bulk: throughput_mbps: a ~ b (paper <)\n  Why.\n"),
            "{md}"
        );
    }
}
