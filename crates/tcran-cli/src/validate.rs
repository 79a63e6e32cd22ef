//! `tcran validate`: parse and build a configuration without running it.
//!
//! Two documents: a pipeline config and a simulation scenario. `--kind`
//! says which; without it [`detect`] tells them apart by their top-level
//! keys (each kind's keys come from its JSON Schema, so they cannot drift),
//! counting a misspelled key for the kind it is closest to. An error is
//! then about the right kind: a scenario with `duraton` gets "unknown field
//! `duraton`, expected one of `seed`, `duration`, ...", not the pipeline's
//! "missing field `queues`".

use crate::error::CliError;
use crate::load::{read_config, Source};
use crate::set::Override;
use std::path::Path;
use tcran_tc::PipelineConfig;

/// `--kind`: what the file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum KindArg {
    /// Told from the file's top-level keys.
    #[default]
    Auto,
    /// A simulation scenario (`tcran schema scenario`).
    Scenario,
    /// A TC pipeline configuration (`tcran schema pipeline`).
    Pipeline,
}

/// A kind of configuration document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Scenario,
    Pipeline,
}

impl Kind {
    /// Every kind, in the order ties are reported.
    pub const ALL: [Kind; 2] = [Kind::Scenario, Kind::Pipeline];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Scenario => "scenario",
            Kind::Pipeline => "pipeline",
        }
    }

    /// The top-level keys this kind accepts, from its JSON Schema.
    pub fn keys(self) -> Vec<String> {
        let schema = crate::schema::schema(match self {
            Kind::Scenario => crate::schema::SchemaName::Scenario,
            Kind::Pipeline => crate::schema::SchemaName::Pipeline,
        });
        schema
            .get("properties")
            .and_then(|p| p.as_object())
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    }
}

/// How well `keys` fit `kind`: 2 per key it accepts, 1 per key that looks
/// like a misspelling of one of its keys (edit distance at most 2, or a
/// third of the key's length for long keys).
fn fit(kind: Kind, keys: &[&str]) -> usize {
    let allowed = kind.keys();
    keys.iter()
        .map(|k| {
            if allowed.iter().any(|a| a == k) {
                2
            } else if allowed
                .iter()
                .any(|a| strsim::levenshtein(a, k) <= (a.len() / 3).max(2))
            {
                1
            } else {
                0
            }
        })
        .sum()
}

/// Tells the kind of a document from its top-level keys (after `sets`).
pub fn detect(src: &Source, sets: &[Override]) -> Result<Kind, CliError> {
    let doc: serde_json::Value = src.parse_with(sets)?;
    let Some(table) = doc.as_object() else {
        // Not a table at all: either kind's reader says what it expected.
        return Ok(Kind::Scenario);
    };
    let keys: Vec<&str> = table.keys().map(String::as_str).collect();
    let list = |k: Kind| {
        k.keys()
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let expected = Kind::ALL
        .iter()
        .map(|&k| format!("a {} has {}", k.name(), list(k)))
        .collect::<Vec<_>>()
        .join("; ");
    if keys.is_empty() {
        return Err(CliError::Kind {
            file: src.name.clone(),
            message: format!("the document is empty: {expected}"),
        });
    }
    let mut scored: Vec<(usize, Kind)> = Kind::ALL.iter().map(|&k| (fit(k, &keys), k)).collect();
    scored.sort_by_key(|s| std::cmp::Reverse(s.0));
    if scored[0].0 == 0 || scored[0].0 == scored[1].0 {
        let keys = keys
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(CliError::Kind {
            file: src.name.clone(),
            message: format!(
                "cannot tell the kind of document from its keys ({keys}): {expected}; \
                 pass --kind scenario or --kind pipeline"
            ),
        });
    }
    Ok(scored[0].1)
}

/// A configuration document that `validate` understands.
#[derive(Debug)]
pub enum Document {
    Pipeline(PipelineConfig),
    Scenario(Box<tcran_sim::SimConfig>, std::path::PathBuf),
}

impl Document {
    /// Reads the file as `kind` (told from its keys for `Auto`) after
    /// applying `sets`.
    pub fn load(
        path: &Path,
        sets: &[Override],
        kind: KindArg,
    ) -> Result<(Source, Document), CliError> {
        let src = read_config(path)?;
        let kind = match kind {
            KindArg::Auto => detect(&src, sets)?,
            KindArg::Scenario => Kind::Scenario,
            KindArg::Pipeline => Kind::Pipeline,
        };
        let doc = match kind {
            Kind::Scenario => {
                let base = path.parent().unwrap_or(Path::new(".")).to_path_buf();
                let cfg =
                    src.parse_checked(sets, |c| tcran_sim::build_scenario(c, &base).map(drop))?;
                Document::Scenario(Box::new(cfg), base)
            }
            Kind::Pipeline => Document::Pipeline(pipeline(&src, sets)?),
        };
        Ok((src, doc))
    }

    /// Builds everything (range checks, references between stages).
    pub fn check(&self, src: &Source) -> Result<(), CliError> {
        match self {
            Document::Pipeline(p) => p.build().map(drop).map_err(|error| CliError::Config {
                file: src.name.clone(),
                error,
            }),
            // Builds the scenario and every variant's simulator (channels
            // and traces loaded, every stage checked) without running it.
            Document::Scenario(c, base) => {
                tcran_sim::build_scenario(c, base)
                    .map(drop)
                    .map_err(|error| CliError::Config {
                        file: src.name.clone(),
                        error,
                    })
            }
        }
    }

    /// What deserves a second look although it is valid.
    pub fn warnings(&self) -> Vec<String> {
        match self {
            Document::Pipeline(_) => Vec::new(),
            Document::Scenario(c, _) => crate::simulate::long_duration_warning(c)
                .into_iter()
                .collect(),
        }
    }

    /// One line describing what was validated.
    pub fn summary(&self) -> String {
        match self {
            Document::Pipeline(p) => pipeline_summary(p),
            Document::Scenario(c, _) => format!(
                "scenario: {} UE(s), {} flow(s), {}, variants: {}",
                c.ues.len(),
                c.flows.len(),
                c.duration,
                if c.variants.is_empty() {
                    "none (runs once)".to_string()
                } else {
                    c.variants
                        .iter()
                        .map(|v| v.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
        }
    }
}

/// Reads a pipeline configuration after `sets` and builds it: what `tcran
/// validate --kind pipeline` checks, with its messages (the dashboard's
/// editor shows them).
pub fn pipeline(src: &Source, sets: &[Override]) -> Result<PipelineConfig, CliError> {
    let p = src.parse_checked(sets, |p: &PipelineConfig| p.build().map(drop))?;
    p.build().map_err(|error| CliError::Config {
        file: src.name.clone(),
        error,
    })?;
    Ok(p)
}

/// One line: the pipeline's stages.
pub fn pipeline_summary(p: &PipelineConfig) -> String {
    use tcran_tc::classify::ClassifierConfig;
    let classifier = match &p.classifier {
        ClassifierConfig::Filter { rules } => format!(
            "filter ({} rule{})",
            rules.len(),
            if rules.len() == 1 { "" } else { "s" }
        ),
        c => c.kind_name().to_string(),
    };
    let queues: Vec<String> = p
        .queues
        .iter()
        .map(|q| {
            let mut s = if q.count > 1 {
                format!(
                    "{}-{} {} (x{})",
                    q.id.0,
                    q.id.0 as u32 + q.count as u32 - 1,
                    q.kind.kind_name(),
                    q.count
                )
            } else {
                format!("{} {}", q.id.0, q.kind.kind_name())
            };
            if q.policer.is_some() {
                s.push_str(" +policer");
            }
            if q.shaper.is_some() {
                s.push_str(" +shaper");
            }
            s
        })
        .collect();
    format!(
        "pipeline: classifier {classifier} -> queues [{}] -> scheduler {} -> pacer {}",
        queues.join(", "),
        p.scheduler.kind_name(),
        p.pacer.kind_name()
    )
}
