//! `tcran validate`: parse and build a configuration without running it.
//!
//! Two documents: a pipeline config and a simulation scenario, told apart by
//! [`Document::load`] from their top-level keys (a scenario has `duration`).

use crate::error::CliError;
use crate::load::{read_config, Source};
use crate::set::Override;
use std::path::Path;
use tcran_tc::PipelineConfig;

/// A configuration document that `validate` understands.
#[derive(Debug)]
pub enum Document {
    Pipeline(PipelineConfig),
    Scenario(Box<tcran_sim::SimConfig>, std::path::PathBuf),
}

impl Document {
    /// Reads the file and decides what it is: a scenario has a top-level
    /// `duration`, anything else is read as a pipeline.
    /// `sets` are applied before the document is checked.
    pub fn load(path: &Path, sets: &[Override]) -> Result<(Source, Document), CliError> {
        let src = read_config(path)?;
        let doc = if src
            .parse::<serde_json::Value>()
            .is_ok_and(|v| v.get("duration").is_some())
        {
            let base = path.parent().unwrap_or(Path::new(".")).to_path_buf();
            Document::Scenario(Box::new(src.parse_with(sets)?), base)
        } else {
            Document::Pipeline(src.parse_with(sets)?)
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

fn pipeline_summary(p: &PipelineConfig) -> String {
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
