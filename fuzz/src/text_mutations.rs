//! Seed files and their line-level mutations for the stable `cargo test`
//! side of the fuzz targets: the seeds, changed a few lines at a time, reach the
//! corners of a parser that random text rarely does (a valid file with one
//! value at its limit, one line missing, one duplicated).
//!
//! Test-only (it needs proptest): compiled into crates/tcran-ran/tests/
//! fuzz_trace.rs, crates/tcran-tc/tests/integration/fuzz_config.rs and
//! crates/tcran-sim/tests/integration/fuzz_scenario.rs with `#[path]`, never into the
//! fuzz crate itself.

use proptest::prelude::*;
use std::path::Path;

/// Every file directly in `dir` as (path, text), sorted by path.
pub fn read_seeds(dir: &Path) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("readable").path())
        .filter(|path| path.is_file())
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("utf-8 seed");
            (path.display().to_string(), text)
        })
        .collect();
    out.sort();
    out
}

#[derive(Debug, Clone)]
pub enum Mutation {
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    /// Replace a whole line.
    SetLine(usize, &'static str),
    /// Replace the value after the `=` of a `key = value` line.
    SetValue(usize, &'static str),
    /// Replace one byte of the result (after the line mutations).
    ReplaceByte(usize, u8),
    /// Cut the result at a byte.
    Truncate(usize),
}

/// Mutations drawing replacement lines from `lines` and replacement values
/// from `values` (either may be empty: no such mutation), and byte-level
/// mutations if `bytes`.
pub fn mutation(
    lines: &'static [&'static str],
    values: &'static [&'static str],
    bytes: bool,
) -> BoxedStrategy<Mutation> {
    let mut choices: Vec<BoxedStrategy<Mutation>> = vec![
        any::<usize>().prop_map(Mutation::DeleteLine).boxed(),
        any::<usize>().prop_map(Mutation::DuplicateLine).boxed(),
        (any::<usize>(), any::<usize>())
            .prop_map(|(a, b)| Mutation::SwapLines(a, b))
            .boxed(),
    ];
    if !lines.is_empty() {
        choices.push(
            (any::<usize>(), prop::sample::select(lines))
                .prop_map(|(i, v)| Mutation::SetLine(i, v))
                .boxed(),
        );
    }
    if !values.is_empty() {
        choices.push(
            (any::<usize>(), prop::sample::select(values))
                .prop_map(|(i, v)| Mutation::SetValue(i, v))
                .boxed(),
        );
    }
    if bytes {
        choices.push(
            (any::<usize>(), any::<u8>())
                .prop_map(|(i, b)| Mutation::ReplaceByte(i, b))
                .boxed(),
        );
        choices.push(any::<usize>().prop_map(Mutation::Truncate).boxed());
    }
    prop::strategy::Union::new(choices).boxed()
}

/// `text` with `mutations` applied in order: the line mutations first, on
/// the lines as they stand, then the byte mutations on the joined result.
pub fn apply(text: &str, mutations: &[Mutation]) -> Vec<u8> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for m in mutations {
        let n = lines.len();
        if n == 0 {
            break;
        }
        match *m {
            Mutation::DeleteLine(i) => {
                lines.remove(i % n);
            }
            Mutation::DuplicateLine(i) => {
                let l = lines[i % n].clone();
                lines.insert(i % n, l);
            }
            Mutation::SwapLines(a, b) => lines.swap(a % n, b % n),
            Mutation::SetLine(i, v) => lines[i % n] = v.to_string(),
            Mutation::SetValue(i, v) => {
                let l = &mut lines[i % n];
                if let Some(eq) = l.find('=') {
                    l.truncate(eq + 1);
                    l.push(' ');
                    l.push_str(v);
                }
            }
            Mutation::ReplaceByte(..) | Mutation::Truncate(_) => {}
        }
    }
    let mut bytes = lines.join("\n").into_bytes();
    for m in mutations {
        match *m {
            Mutation::ReplaceByte(i, b) if !bytes.is_empty() => {
                let k = i % bytes.len();
                bytes[k] = b;
            }
            Mutation::Truncate(i) => bytes.truncate(i % (bytes.len() + 1)),
            _ => {}
        }
    }
    bytes
}
