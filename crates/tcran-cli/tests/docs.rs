//! Every command and output example of README.md and docs/*.md runs as
//! shown, so the documentation cannot drift from the program.
//!
//! - ```` ```console ```` blocks are run by trycmd: each `$ tcran ...` line
//!   (or `$ target/release/tcran ...`, as the README writes it) runs the
//!   binary built with this test, from the repository root, and what
//!   follows, stdout and stderr together, must match (`...` on its own line
//!   stands for any lines, `[..]` for the rest of a line: wall times and
//!   measured numbers are elided that way). `? 2` gives the expected exit
//!   code.
//! - ```` ```sh ```` blocks hold shell compositions (pipes, redirections)
//!   and build commands: each line that starts with `tcran` is run by bash
//!   with `pipefail` and must succeed (the tcran binary first on `PATH`);
//!   `cargo`, `make`, `gcc` lines are not run (they build the project, which
//!   this test is part of).
//! - A block that is not run carries, on the line before its fence, an
//!   HTML comment `<!-- docs-test: skip: REASON -->` (long runs, root
//!   privileges); this test checks that every skipped block says why, and
//!   that no `$ ` line calls a program trycmd would silently skip.
//!
//! docs/emulator.md is not run: `tcran emulate` needs root, network
//! namespaces and an idle machine (`make emu-test` runs it alone).

use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root exists")
}

/// The documents checked: README.md and docs/*.md but docs/emulator.md.
fn documents(root: &Path) -> Vec<PathBuf> {
    let mut docs = vec![root.join("README.md")];
    let mut more: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .map(|e| e.expect("docs/ is readable").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .filter(|p| !p.ends_with("docs/emulator.md"))
        .collect();
    more.sort();
    docs.extend(more);
    docs
}

/// A fenced block: its info string, its lines, whether the line before its
/// fence says it is skipped (and why), and where it starts.
#[derive(Debug)]
struct Block {
    info: String,
    lines: Vec<String>,
    skip_reason: Option<String>,
    line: usize,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut current: Option<Block> = None;
    let mut previous = "";
    for (i, l) in text.lines().enumerate() {
        if let Some(b) = current.as_mut() {
            if l.trim_start().starts_with("```") {
                out.push(current.take().expect("inside a block"));
            } else {
                b.lines.push(l.to_string());
            }
        } else if let Some(info) = l.trim_start().strip_prefix("```") {
            let skip_reason = previous
                .trim()
                .strip_prefix("<!-- docs-test: skip:")
                .and_then(|r| r.strip_suffix("-->"))
                .map(|r| r.trim().to_string());
            current = Some(Block {
                info: info.trim().to_string(),
                lines: Vec::new(),
                skip_reason,
                line: i + 1,
            });
        }
        if !l.trim().is_empty() {
            previous = l;
        }
    }
    out
}

const BINARIES: [&str; 2] = ["tcran", "target/release/tcran"];

#[test]
fn console_blocks_run_as_shown() {
    let root = repo_root();
    // The commands are written as run from the repository root.
    std::env::set_current_dir(&root).expect("cd to the repository root");
    let cases = trycmd::TestCases::new();
    for b in BINARIES {
        cases.register_bin(b, trycmd::cargo::cargo_bin!("tcran"));
    }
    // Progress bars are for terminals; make sure none is drawn.
    cases.env("NO_COLOR", "1");
    for doc in documents(&root) {
        let text = std::fs::read_to_string(&doc).expect("readable");
        let has_console = blocks(&text)
            .iter()
            .any(|b| b.info.starts_with("console") && !b.info.contains("ignore"));
        if has_console {
            cases.case(&doc);
        }
    }
}

#[test]
fn every_block_not_run_says_why_and_every_command_is_known() {
    let root = repo_root();
    let mut problems = Vec::new();
    for doc in documents(&root) {
        let text = std::fs::read_to_string(&doc).expect("readable");
        let name = doc
            .strip_prefix(&root)
            .unwrap_or(&doc)
            .display()
            .to_string();
        for b in blocks(&text) {
            if b.info.is_empty() {
                // trycmd runs a fence without a language as commands.
                problems.push(format!(
                    "{name}:{}: give the block a language (text, sh, toml, console, ...)",
                    b.line
                ));
            }
            let ignored = b.info.starts_with("console") && b.info.contains("ignore");
            if ignored && b.skip_reason.as_deref().is_none_or(str::is_empty) {
                problems.push(format!(
                    "{name}:{}: a console block marked ignore needs `<!-- docs-test: skip: REASON -->` before it",
                    b.line
                ));
            }
            if !b.info.starts_with("console") {
                continue;
            }
            for l in &b.lines {
                if let Some(cmd) = l.strip_prefix("$ ") {
                    let program = cmd.split_whitespace().next().unwrap_or("");
                    if !BINARIES.contains(&program) {
                        problems.push(format!(
                            "{name}:{}: `$ {cmd}`: trycmd would skip `{program}` silently; \
                             use a ```sh block",
                            b.line
                        ));
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn shell_lines_calling_tcran_succeed() {
    let root = repo_root();
    let bin = PathBuf::from(trycmd::cargo::cargo_bin!("tcran"));
    let bin_dir = bin.parent().expect("the binary is in a directory");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let scratch = std::env::temp_dir().join(format!("tcran-docs-sh-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("scratch directory");
    let mut failures = Vec::new();
    let mut ran = 0;
    for doc in documents(&root) {
        let text = std::fs::read_to_string(&doc).expect("readable");
        let name = doc
            .strip_prefix(&root)
            .unwrap_or(&doc)
            .display()
            .to_string();
        for b in blocks(&text) {
            if !(b.info == "sh" || b.info == "bash") || b.skip_reason.is_some() {
                continue;
            }
            for l in &b.lines {
                // `target/release/tcran` (the README's spelling) is the
                // binary under test too.
                let Some(cmd) = BINARIES
                    .iter()
                    .find_map(|b| l.trim().strip_prefix(&format!("{b} ")))
                    .map(|args| format!("tcran {args}"))
                else {
                    continue;
                };
                let cmd = cmd.as_str();
                // `jq` is a common tool, not a dependency of tcran.
                if cmd.contains("| jq") && !has_program("jq") {
                    eprintln!("{name}: not run, jq is not installed: {cmd}");
                    continue;
                }
                ran += 1;
                // Relative output files (`> summary.json`) go to a scratch
                // directory; input paths are relative to the repository.
                let script = format!(
                    "set -eo pipefail; cd {root}; {cmd}",
                    root = shell_quote(&root),
                    cmd = redirect_outputs(cmd, &scratch),
                );
                let out = std::process::Command::new("bash")
                    .arg("-c")
                    .arg(&script)
                    .env("PATH", &path)
                    .output()
                    .expect("bash runs");
                if !out.status.success() {
                    failures.push(format!(
                        "{name}:{}: `{cmd}` failed ({}): {}",
                        b.line,
                        out.status,
                        String::from_utf8_lossy(&out.stderr).trim()
                    ));
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(ran > 0, "no shell line calling tcran was found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn has_program(name: &str) -> bool {
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {name}"))
        .output()
        .is_ok_and(|o| o.status.success())
}

fn shell_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', r"'\''"))
}

/// `> file` becomes `> SCRATCH/file`, so running the docs leaves no file
/// in the repository.
fn redirect_outputs(cmd: &str, scratch: &Path) -> String {
    match cmd.split_once(" > ") {
        Some((before, file)) if !file.trim().starts_with('/') => {
            format!("{before} > {}", shell_quote(&scratch.join(file.trim())))
        }
        _ => cmd.to_string(),
    }
}

#[test]
fn block_parser_reads_fences_and_skip_reasons() {
    let text = "intro\n<!-- docs-test: skip: takes ten minutes -->\n```console\n$ tcran reproduce\n```\n\n```sh\ntcran stages | head\n```\n";
    let b = blocks(text);
    assert_eq!(b.len(), 2);
    assert_eq!(b[0].info, "console");
    assert_eq!(b[0].skip_reason.as_deref(), Some("takes ten minutes"));
    assert_eq!(b[0].lines, vec!["$ tcran reproduce"]);
    assert_eq!(b[1].info, "sh");
    assert_eq!(b[1].skip_reason, None);
    assert_eq!(
        redirect_outputs("tcran schema > s.json", Path::new("/t")),
        "tcran schema > '/t/s.json'"
    );
}

/// docs/fidelity.md is `tcran reproduce`'s `fidelity.md` for the
/// scenarios as they are: one table row per `[[paper]]` number of
/// scenarios/reproduction, and docs/reproduction.md quotes its totals.
#[test]
fn the_fidelity_page_has_every_paper_number_and_its_totals_are_quoted() {
    let root = repo_root();
    let page = std::fs::read_to_string(root.join("docs/fidelity.md")).expect("docs/fidelity.md");
    let rows = page
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| source |"))
        .count();
    let numbers: usize = std::fs::read_dir(root.join("scenarios/reproduction"))
        .expect("scenarios/reproduction")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|p| {
            std::fs::read_to_string(&p)
                .expect("readable")
                .lines()
                .filter(|l| l.trim() == "[[paper]]")
                .count()
        })
        .sum();
    assert_eq!(
        rows, numbers,
        "docs/fidelity.md has {rows} rows, the scenarios {numbers} paper numbers: rerun `tcran reproduce` and copy OUT/fidelity.md"
    );
    let totals = page
        .lines()
        .find(|l| l.contains("within 2x"))
        .expect("a totals line");
    let reproduction =
        std::fs::read_to_string(root.join("docs/reproduction.md")).expect("docs/reproduction.md");
    assert!(
        reproduction.contains(totals),
        "docs/reproduction.md does not quote docs/fidelity.md's totals: {totals}"
    );
}

/// The long options (`--name`) in `text`, without `--help`.
fn long_options(text: &str) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("--") {
        let name: String = rest[at + 2..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if name.starts_with(|c: char| c.is_ascii_lowercase()) && name != "help" {
            out.insert(format!("--{name}"));
        }
        rest = &rest[at + 2 + name.len()..];
    }
    out
}

/// The options `tcran ARGS --help` lists (from its option lines, not from
/// the prose under them).
fn help_options(args: &[&str]) -> std::collections::BTreeSet<String> {
    let out = std::process::Command::new(trycmd::cargo::cargo_bin!("tcran"))
        .args(args)
        .arg("--help")
        .output()
        .expect("tcran runs");
    assert!(out.status.success(), "{out:?}");
    let help = String::from_utf8(out.stdout).expect("UTF-8 help");
    let lines: Vec<&str> = help
        .lines()
        .filter(|l| l.trim_start().starts_with('-'))
        .collect();
    long_options(&lines.join("\n"))
}

/// The options in the first cells of the `| option | meaning |` table
/// that follows `heading` in `doc`.
fn table_options(doc: &str, heading: &str) -> std::collections::BTreeSet<String> {
    let text = std::fs::read_to_string(repo_root().join(doc)).expect("the document exists");
    let section = &text[text
        .find(heading)
        .unwrap_or_else(|| panic!("{doc}: {heading}"))..];
    let table = &section[section
        .find("| option | meaning |")
        .unwrap_or_else(|| panic!("{doc}: no option table under {heading}"))..];
    let first_cells: Vec<&str> = table
        .lines()
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| l[1..].split(" | ").next())
        .collect();
    long_options(&first_cells.join("\n"))
}

/// Every option of a command documented with a table is in the table, and
/// every option in the table is one the command has.
#[test]
fn option_tables_match_the_help() {
    let emulate = help_options(&["emulate"]);
    assert!(
        emulate.contains("--e2") && emulate.contains("--spin"),
        "{emulate:?}"
    );
    assert_eq!(
        table_options("docs/emulator.md", "## Options"),
        emulate,
        "docs/emulator.md's option table against `tcran emulate --help`"
    );
    // cli.md's table under `--realtime` documents the real-time options of
    // `tcran run`: its E2 and CPU-latency options, all of them.
    let run: std::collections::BTreeSet<String> = help_options(&["run"])
        .into_iter()
        .filter(|o| o.starts_with("--e2") || o == "--cpu-latency")
        .collect();
    assert_eq!(
        table_options("docs/cli.md", "### `--realtime` and `--e2 HOST:PORT`"),
        run,
        "docs/cli.md's --realtime table against `tcran run --help`"
    );
}
