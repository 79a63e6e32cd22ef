//! Limits a user can hit end with one line on stderr and exit code 2, never
//! a backtrace or a silent kill: memory (an address-space limit, as `ulimit
//! -v` or a container sets), file size (`ulimit -f`); and a run's memory
//! does not grow with its simulated duration.

use std::path::{Path, PathBuf};
use std::process::Output;

fn tcran() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_tcran"))
}

/// Runs `script` in `sh` (for `ulimit`), with `$TCRAN` the binary.
fn sh(script: &str) -> Output {
    std::process::Command::new("sh")
        .arg("-c")
        .arg(script)
        .env("TCRAN", tcran())
        .output()
        .unwrap()
}

fn one_error_line(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(err.lines().count(), 1, "one line: {err:?}");
    assert!(err.starts_with("error: "), "{err:?}");
    assert!(
        !err.contains("backtrace") && !err.contains("panicked"),
        "{err:?}"
    );
    err
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcran-limits-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn an_allocation_over_the_memory_limit_is_one_line_and_exit_2() {
    // 256 MiB of address space; 1 GiB asked for.
    let out = sh("ulimit -v 262144 && exec \"$TCRAN\" internal-allocate 1073741824");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = one_error_line(&out);
    assert!(
        err.contains("out of memory: cannot allocate 1073741824 more bytes"),
        "{err}"
    );
    // The control: the same allocation without the limit succeeds.
    let ok = sh("exec \"$TCRAN\" internal-allocate 1073741824");
    assert!(ok.status.success(), "{ok:?}");
}

#[test]
fn a_file_size_limit_while_writing_outputs_is_one_line_and_exit_2() {
    let dir = temp_dir("fsize");
    // 64 blocks of 1024 bytes (POSIX ulimit -f units in sh): report.html
    // is larger.
    let out = sh(&format!(
        "ulimit -f 64 && exec \"$TCRAN\" run {} --out {}",
        fixture("small_scenario.toml"),
        dir.display()
    ));
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = one_error_line(&out);
    assert!(err.contains("cannot write: File too large"), "{err}");
    assert!(
        err.contains("file-size, disk-space or quota limit"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// 100 000 000 simulated seconds (three years) used to make `validate`
/// allocate every series bin up front (tens of GB). Now it checks the
/// scenario within a small address-space limit.
#[test]
fn validating_a_very_long_scenario_allocates_nothing_per_bin() {
    let dir = temp_dir("long");
    let text = std::fs::read_to_string(fixture("small_scenario.toml"))
        .unwrap()
        .replace(
            "duration = \"3s\"",
            "duration = \"100000000s\"\nseries_bin = \"1ms\"",
        )
        .replace(
            "../../../../data/traces/mahimahi/Verizon-LTE-short.down",
            "builtin:verizon-lte-short",
        );
    let file = dir.join("long.toml");
    std::fs::write(&file, text).unwrap();
    let out = sh(&format!(
        "ulimit -v {} && exec \"$TCRAN\" validate {}",
        VALIDATE_LIMIT_KB,
        file.display()
    ));
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("ok "));
    let _ = std::fs::remove_dir_all(dir);
}

/// Address space for `tcran validate` (KiB): the binary and its libraries
/// take most of it (measured: see docs/performance.md, "Memory").
const VALIDATE_LIMIT_KB: u64 = 150_000;
