//! The examples in docs/pipeline.md are real: the pipeline builds and the
//! control command parses and applies.

use tcran_core::Instant;
use tcran_tc::{Control, PipelineConfig};

fn toml_blocks() -> Vec<String> {
    let doc = include_str!("../../../../docs/pipeline.md");
    doc.split("```toml\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap().to_string())
        .collect()
}

#[test]
fn pipeline_md_examples_build_and_apply() {
    let blocks = toml_blocks();
    assert_eq!(blocks.len(), 2, "a pipeline and a control command");
    let config: PipelineConfig = toml::from_str(&blocks[0]).expect("pipeline example parses");
    let mut pipeline = config.build().expect("pipeline example builds");
    let control: Control = toml::from_str(&blocks[1]).expect("control example parses");
    pipeline
        .apply(control, Instant::ZERO)
        .expect("control example applies");
}
