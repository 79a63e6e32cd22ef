//! How `scripts/flexric-matrix.sh` reads the logs of a live run against
//! FlexRIC (`--classify RUN_DIR`), on logs of real runs: the matrix itself
//! needs a FlexRIC build and is not part of `make test`, its verdicts are.
//!
//! The fixtures (`tests/fixtures/flexric-matrix/<xapp>/`) are the files the
//! script wrote for one xApp on 2026-11-29 (FlexRIC dev c74bcef0, Debug,
//! built by `scripts/build-flexric-peer.sh`; `tcran run scenarios/demo.toml
//! --realtime --e2` with the default profile, six E2 nodes), cut to what the
//! classification reads: `node.log` keeps tcran's E2 lines, `xapp.trace`
//! its first 400 lines. `xapp_ric_abort` is a run with `--e2-profile
//! standard`, whose E2 Setup offers E2SM-TCRAN (246) and aborts FlexRIC's
//! RIC. The expected numbers were counted from the logs by hand (grep, sort).

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn matrix() -> Command {
    let mut c = Command::new("bash");
    c.arg(repo().join("scripts/flexric-matrix.sh"));
    c
}

fn classify(case: &str) -> String {
    let dir = repo()
        .join("crates/tcran-cli/tests/fixtures/flexric-matrix")
        .join(case);
    let out = matrix()
        .arg("--classify")
        .arg(&dir)
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{case}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn a_monitoring_xapp_that_ran_to_its_end_works_with_its_numbers() {
    // 42 MAC latency lines, the 21st and 22nd of them sorted 8819 and
    // 10820 us; 370 indications between t = 1795916790130768 and
    // 1795916790163673 us: 369 / 32.905 ms = 11,214/s.
    assert_eq!(
        classify("xapp_gtp_mac_rlc_pdcp_moni"),
        "| xapp_gtp_mac_rlc_pdcp_moni | works | latency printout (median): MAC 9819.5us, \
         RLC 9608us, PDCP 5947us, GTP 4821us | ind/s=1.12e+04 |\n"
    );
}

#[test]
fn controls_are_timed_from_the_e42_request_to_the_acknowledge() {
    // Five 0011 -> 2004 pairs: 646, 351, 263, 253, 209 us.
    assert_eq!(
        classify("xapp_tc_partition"),
        "| xapp_tc_partition | works | 5 controls acked | 5 ctrl, rtt_us p50=263 max=646 |\n"
    );
}

#[test]
fn an_xapp_that_aborts_is_a_crash_with_its_assertion() {
    let row = classify("xapp_rc_moni");
    assert!(row.starts_with("| xapp_rc_moni | xApp crash | signal ABRT: Assertion `0 != 0 && \"SM ID could not be found in the RAN Function List\"' failed. |"), "{row}");
    // FlexRIC's pending-event race (the answer before the request's
    // pending event): a crash too; the matrix tries such a run again.
    let row = classify("xapp_kpm_moni");
    assert!(
        row.contains("| xApp crash | signal ABRT: ")
            && row.contains("Trying to extract a key not found in the tree"),
        "{row}"
    );
}

#[test]
fn a_dead_ric_is_an_abort_whatever_the_xapp_did() {
    let row = classify("xapp_ric_abort");
    assert!(row.starts_with("| xapp_hw | RIC abort | "), "{row}");
    assert!(row.contains("Assertion"), "{row}");
}

#[test]
fn without_flexric_dir_the_matrix_says_it_skips() {
    let out = matrix()
        .env_remove("FLEXRIC_DIR")
        .output()
        .expect("bash runs");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    assert!(
        text.starts_with("flexric-matrix: skipped: FLEXRIC_DIR is not set"),
        "{text}"
    );
}

#[test]
fn a_bad_classify_argument_is_exit_code_2() {
    let out = matrix()
        .args(["--classify", "/nonexistent"])
        .output()
        .expect("bash runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage"));
}
