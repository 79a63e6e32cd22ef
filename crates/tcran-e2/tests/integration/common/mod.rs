//! Shared test helpers: the FlexRIC golden vectors, a node to drive.
#![allow(dead_code)]

pub mod node;

/// One captured PDU of `tests/data/flexric-golden-vectors.jsonl`.
pub struct Vector {
    pub line: usize,
    pub source: String,
    pub message: String,
    pub bytes: Vec<u8>,
    pub json: serde_json::Value,
}

pub const VECTORS: &str = include_str!("../../data/flexric-golden-vectors.jsonl");

pub fn hex(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "odd hex length");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

pub fn vectors() -> Vec<Vector> {
    VECTORS
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let json: serde_json::Value = serde_json::from_str(line).expect("JSON line");
            Vector {
                line: i + 1,
                source: json["source"].as_str().expect("source").to_string(),
                message: json["e2ap"].as_str().expect("e2ap").to_string(),
                bytes: hex(json["aper_hex"].as_str().expect("aper_hex")),
                json,
            }
        })
        .collect()
}
