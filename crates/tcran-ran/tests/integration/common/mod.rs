//! Helpers shared by the integration tests.
//!
//! Oracle data (3GPP tables, the MATLAB TBS vectors, traces) is read
//! from the copies kept in the repository, so the tests run on a clone
//! alone; `tests/integration/oracle_copies.rs` checks that every copy still equals the
//! project's reference collection (`../shared` next to the repository)
//! whenever that is present.
#![allow(dead_code)]

use std::path::PathBuf;

/// `../shared` next to the repository (the project's reference data), which
/// may be absent.
pub fn shared(rel: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared")).join(rel)
}

/// The repository's copy of the reference file `rel` (a path inside the
/// reference collection, e.g. `3gpp/nr_tbs_table_38214_t5.1.3.2-1.csv`):
/// the tables compiled into the crate (`data/3gpp`), the test vectors in
/// `tests/data/3gpp` (see the PROVENANCE.md there), the traces in the
/// repository's `data/traces`.
pub fn oracle(rel: &str) -> PathBuf {
    let krate = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if let Some(f) = rel.strip_prefix("3gpp/") {
        let embedded = krate.join("data/3gpp").join(f);
        if embedded.exists() {
            return embedded;
        }
        return krate.join("tests/data/3gpp").join(f);
    }
    if let Some(t) = rel.strip_prefix("traces/") {
        return krate.join("../../data/traces").join(t);
    }
    panic!("{rel}: no copy of this reference file is kept in the repository")
}

/// Every reference file the tests read, as a path inside the collection.
pub const ORACLE_FILES: &[&str] = &[
    "3gpp/nr_tbs_test_vectors_matlab_via_srsran.csv",
    "3gpp/nr_tbs_edge_vectors_derived.csv",
    "traces/uccmisl-5Gdataset/Download/Driving/B_2019.12.16_07.22.43.csv",
    "traces/uccmisl-5Gdataset/Download/Driving/B_2020.01.16_09.56.56.csv",
    "traces/uccmisl-5Gdataset/Download/Static/B_2019.12.16_13.40.04.csv",
    "traces/uccmisl-5Gdataset/Download/Static/B_2020.02.14_13.21.26.csv",
    "traces/uccmisl-5Gdataset/LICENSE",
    // The mahimahi traces tcran ships as built-ins (`builtin:verizon-lte-short`,
    // `-up`, ...): the node's uplink-trace test counts their opportunities.
    "traces/mahimahi/Verizon-LTE-short.down",
    "traces/mahimahi/Verizon-LTE-short.up",
    "traces/mahimahi/TMobile-LTE-short.down",
    "traces/mahimahi/TMobile-LTE-short.up",
    "traces/mahimahi/README.md",
    "traces/mahimahi/README.traces",
    "traces/mahimahi/COPYING",
];

/// The repository's `data/traces`.
pub fn repo_traces(rel: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/traces")).join(rel)
}

pub fn read(p: &std::path::Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// CSV rows (header skipped) as cells.
pub fn csv_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split(',').map(|c| c.trim().to_string()).collect())
        .collect()
}
