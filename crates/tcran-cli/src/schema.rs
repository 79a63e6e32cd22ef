//! `tcran schema NAME`: JSON Schemas of the configuration files, generated
//! from the serde types, so they cannot drift from what the parser accepts.

use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SchemaName {
    /// A per-bearer TC pipeline (`tcran_tc::PipelineConfig`).
    Pipeline,
    /// A simulator scenario (`tcran_sim::SimConfig`, docs/scenarios.md).
    Scenario,
}

pub fn schema(name: SchemaName) -> Value {
    match name {
        SchemaName::Pipeline => crate::stages::pipeline_schema(),
        SchemaName::Scenario => serde_json::to_value(schemars::schema_for!(tcran_sim::SimConfig))
            .expect("a schema is plain JSON"),
    }
}
