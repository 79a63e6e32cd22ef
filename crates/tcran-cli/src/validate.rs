//! `tcran validate`: parse and build a configuration without running it.
//!
//! Today the only document is a pipeline config; a scenario (issue 3) is the
//! next [`Document`] variant, told apart by [`Document::load`].

use crate::error::CliError;
use crate::load::{read_config, Source};
use std::path::Path;
use tcran_tc::PipelineConfig;

/// A configuration document that `validate` understands.
#[derive(Debug)]
pub enum Document {
    Pipeline(PipelineConfig),
}

impl Document {
    /// Reads the file and decides what it is. Every file is a pipeline for
    /// now; when scenarios exist, their top-level keys tell them apart.
    pub fn load(path: &Path) -> Result<(Source, Document), CliError> {
        let src = read_config(path)?;
        let doc = Document::Pipeline(src.parse()?);
        Ok((src, doc))
    }

    /// Builds everything (range checks, references between stages).
    pub fn check(&self, src: &Source) -> Result<(), CliError> {
        match self {
            Document::Pipeline(p) => p.build().map(drop).map_err(|error| CliError::Config {
                file: src.name.clone(),
                error,
            }),
        }
    }

    /// One line describing what was validated.
    pub fn summary(&self) -> String {
        match self {
            Document::Pipeline(p) => pipeline_summary(p),
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
