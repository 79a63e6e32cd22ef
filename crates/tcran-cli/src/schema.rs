//! `tcran schema NAME`: JSON Schemas of the configuration files, generated
//! from the serde types. Adding a document (the simulator's scenario) is one
//! more [`SchemaName`] variant.

use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SchemaName {
    /// A per-bearer TC pipeline (`tcran_tc::PipelineConfig`).
    Pipeline,
}

pub fn schema(name: SchemaName) -> Value {
    match name {
        SchemaName::Pipeline => crate::stages::pipeline_schema(),
    }
}
