//! An output directory holds one run.
//!
//! Contract:
//! - A command that writes a run's outputs (`run`, `demo`, `reproduce`)
//!   writes them into a staging directory beside `--out`
//!   (`.NAME.partial-PID`) and, once everything is written, moves it into
//!   place ([`Staged::commit`]): what was in `--out` before goes away as a
//!   whole, so a second run into the same folder never leaves the first
//!   run's files (`seeds.csv`, other variants' folders, `figures/`) beside
//!   its own, and a run that fails or is interrupted leaves `--out` as it
//!   was.
//! - `--out` is checked before the run starts ([`stage`]): it may be
//!   absent, empty, or an earlier output of tcran (it holds [`MARKER`], or
//!   the `summary.json` / `fidelity.json` that outputs of earlier versions
//!   hold). Anything else is refused with a usage error (exit 2) naming the
//!   directory: tcran never deletes files it did not write.
//! - The marker records which command and version wrote the directory.
//! - `emulate` is the exception to staging: the programs it runs may
//!   write into `--out` while it runs, so [`fresh`] clears an earlier
//!   output (checked the same way) and the run writes in place.
//!
//! A run killed before it could clean up (Ctrl-C, SIGKILL) leaves its
//! staging directory; the next run into the same `--out` removes those
//! whose process is gone.
//!
//! The replacement is two renames within one parent directory: the old
//! output moves aside, the new one into place, then the old one is
//! removed. A crash between the two renames leaves the run complete under
//! its staging name and the old output aside, never a mix.

use crate::error::CliError;
use std::path::{Path, PathBuf};

/// The file that marks a directory as a tcran output.
pub const MARKER: &str = "tcran-output.json";

/// A run's outputs being written, not yet in place.
#[derive(Debug)]
pub struct Staged {
    out: PathBuf,
    staging: PathBuf,
    committed: bool,
}

/// Checks that `out` may receive a run and creates the staging directory
/// the run writes into. `command` is recorded in the marker.
pub fn stage(out: &Path, command: &str) -> Result<Staged, CliError> {
    check(out)?;
    remove_abandoned(out);
    let staging = sibling(out, "partial")?;
    if staging.exists() {
        std::fs::remove_dir_all(&staging).map_err(|e| CliError::write(&staging, &e))?;
    }
    std::fs::create_dir_all(&staging).map_err(|e| CliError::write(&staging, &e))?;
    write_marker(&staging, command)?;
    Ok(Staged {
        out: out.to_path_buf(),
        staging,
        committed: false,
    })
}

/// For a run whose programs write into `--out` while it runs
/// (`emulate`): checks `out` as [`stage`] does, removes an earlier run's
/// outputs and writes into `out` itself from the start; the returned value
/// commits to nothing (a failed run leaves what it wrote so far).
pub fn fresh(out: &Path, command: &str) -> Result<Staged, CliError> {
    check(out)?;
    if out.exists() {
        std::fs::remove_dir_all(out).map_err(|e| CliError::write(out, &e))?;
    }
    std::fs::create_dir_all(out).map_err(|e| CliError::write(out, &e))?;
    write_marker(out, command)?;
    Ok(Staged {
        out: out.to_path_buf(),
        staging: out.to_path_buf(),
        committed: true,
    })
}

fn write_marker(dir: &Path, command: &str) -> Result<(), CliError> {
    let marker = serde_json::json!({
        "tcran": env!("CARGO_PKG_VERSION"),
        "command": command,
    });
    let path = dir.join(MARKER);
    std::fs::write(&path, format!("{marker:#}\n")).map_err(|e| CliError::write(&path, &e))
}

impl Staged {
    /// Where the run writes its outputs now.
    pub fn path(&self) -> &Path {
        &self.staging
    }

    /// Moves the outputs into place, replacing what `--out` held.
    pub fn commit(mut self) -> Result<(), CliError> {
        if self.staging == self.out {
            return Ok(()); // written in place ([`fresh`])
        }
        // Checked again: something may have appeared during the run.
        check(&self.out)?;
        let old = sibling(&self.out, "old")?;
        if self.out.exists() {
            if old.exists() {
                std::fs::remove_dir_all(&old).map_err(|e| CliError::write(&old, &e))?;
            }
            std::fs::rename(&self.out, &old).map_err(|e| CliError::write(&self.out, &e))?;
        }
        std::fs::rename(&self.staging, &self.out).map_err(|e| CliError::write(&self.out, &e))?;
        self.committed = true;
        if old.exists() {
            std::fs::remove_dir_all(&old).map_err(|e| CliError::write(&old, &e))?;
        }
        Ok(())
    }
}

/// A run that did not finish leaves nothing behind but `--out` as it was.
impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.staging);
        }
    }
}

/// `out` is absent, an empty directory or an output of tcran.
fn check(out: &Path) -> Result<(), CliError> {
    let refuse = |why: &str| {
        CliError::Usage(format!(
            "--out {}: {why}; tcran replaces only a directory it wrote (it holds {MARKER}): give another --out or remove it",
            out.display()
        ))
    };
    match std::fs::symlink_metadata(out) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(CliError::write(out, &e)),
        Ok(m) if !m.is_dir() => return Err(refuse("exists and is not a directory")),
        Ok(_) => {}
    }
    let mut entries = std::fs::read_dir(out).map_err(|e| CliError::write(out, &e))?;
    if entries.next().is_none() {
        return Ok(());
    }
    let ours = [MARKER, "summary.json", "fidelity.json"]
        .iter()
        .any(|f| out.join(f).is_file());
    if ours {
        Ok(())
    } else {
        Err(refuse("holds files tcran did not write"))
    }
}

/// Removes the staging and set-aside directories beside `out` that a run
/// killed before it could clean up left (Ctrl-C, SIGKILL): those whose
/// process is gone. A live run's are kept (a reused pid only delays the
/// removal to a later run).
fn remove_abandoned(out: &Path) {
    let (Some(name), Some(parent)) = (out.file_name(), out.parent()) else {
        return;
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    let name = name.to_string_lossy();
    for e in entries.flatten() {
        let file = e.file_name();
        let file = file.to_string_lossy();
        let pid = ["partial", "old"]
            .iter()
            .find_map(|kind| file.strip_prefix(&format!(".{name}.{kind}-")))
            .and_then(|pid| pid.parse::<u32>().ok());
        if let Some(pid) = pid {
            if !Path::new(&format!("/proc/{pid}")).exists() {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
}

/// `.NAME.KIND-PID` beside `out`.
fn sibling(out: &Path, kind: &str) -> Result<PathBuf, CliError> {
    let name = out
        .file_name()
        .ok_or_else(|| CliError::Usage(format!("--out {}: not a directory name", out.display())))?;
    let hidden = format!(".{}.{kind}-{}", name.to_string_lossy(), std::process::id());
    Ok(out.with_file_name(hidden))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tcran-outdir-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// A second run into the same folder leaves none of the first run's
    /// files.
    #[test]
    fn a_second_run_replaces_the_first_entirely() {
        let root = scratch("replace");
        let out = root.join("X");
        let first = stage(&out, "run").unwrap();
        std::fs::write(first.path().join("summary.json"), "{}").unwrap();
        std::fs::write(first.path().join("seeds.csv"), "seed\n").unwrap();
        first.commit().unwrap();
        assert!(out.join("seeds.csv").is_file());

        let second = stage(&out, "run").unwrap();
        std::fs::write(second.path().join("summary.json"), "{\"second\":1}").unwrap();
        assert!(out.join("seeds.csv").is_file(), "untouched until the end");
        second.commit().unwrap();
        assert!(
            !out.join("seeds.csv").exists(),
            "the first run's file is gone"
        );
        assert_eq!(
            std::fs::read_to_string(out.join("summary.json")).unwrap(),
            "{\"second\":1}"
        );
        assert!(out.join(MARKER).is_file());
        let left: Vec<_> = std::fs::read_dir(&root).unwrap().collect();
        assert_eq!(left.len(), 1, "no staging or old directory left beside it");
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// What a killed run left beside `--out` (its process gone) is removed
    /// by the next run; a live run's staging directory is not.
    #[test]
    fn a_killed_runs_staging_is_removed_by_the_next() {
        let root = scratch("killed");
        let out = root.join("X");
        // Beyond any pid_max (at most 2^22 on Linux): no such process.
        let dead = root.join(".X.partial-999999999");
        std::fs::create_dir_all(&dead).unwrap();
        let live = root.join(format!(".X.old-{}", std::process::id()));
        std::fs::create_dir_all(&live).unwrap();
        let other = root.join(".Y.partial-999999999");
        std::fs::create_dir_all(&other).unwrap();
        let staged = stage(&out, "run").unwrap();
        assert!(!dead.exists());
        assert!(live.exists(), "a live process's directory stays");
        assert!(other.exists(), "another output's directory stays");
        staged.commit().unwrap();
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// A run that fails leaves `--out` as it was and no staging directory.
    #[test]
    fn a_failed_run_leaves_the_old_outputs() {
        let root = scratch("fail");
        let out = root.join("X");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("summary.json"), "old").unwrap();
        {
            let staged = stage(&out, "run").unwrap();
            std::fs::write(staged.path().join("summary.json"), "new").unwrap();
            // Dropped without commit: the run failed.
        }
        assert_eq!(
            std::fs::read_to_string(out.join("summary.json")).unwrap(),
            "old"
        );
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 1);
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// A directory tcran did not write is refused before anything runs,
    /// and its files are left alone; an empty one is fine; `fresh` clears
    /// an earlier output and writes in place.
    #[test]
    fn a_foreign_directory_is_refused_and_kept() {
        let root = scratch("foreign");
        let out = root.join("mine");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("thesis.tex"), "precious").unwrap();
        let err = stage(&out, "run").unwrap_err();
        assert!(
            matches!(&err, CliError::Usage(m) if m.contains("holds files tcran did not write")),
            "{err}"
        );
        assert!(fresh(&out, "emulate").is_err());
        assert_eq!(
            std::fs::read_to_string(out.join("thesis.tex")).unwrap(),
            "precious"
        );
        let file = root.join("a-file");
        std::fs::write(&file, "x").unwrap();
        assert!(stage(&file, "run").is_err());
        let empty = root.join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        stage(&empty, "run").unwrap().commit().unwrap();
        assert!(empty.join(MARKER).is_file());
        std::fs::write(empty.join("seeds.csv"), "old").unwrap();
        let in_place = fresh(&empty, "emulate").unwrap();
        assert_eq!(in_place.path(), empty.as_path());
        assert!(!empty.join("seeds.csv").exists());
        in_place.commit().unwrap();
        assert!(empty.join(MARKER).is_file());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
