//! The progress bar of `tcran run`, `demo` and `reproduce`: one bar over
//! all variants (simulated seconds done of all to do, summed over the runs
//! going at once), on stderr. Callers
//! create it only when stderr is a terminal and stdout is not reserved for
//! JSON, so logs and pipes never see it.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::Mutex;
use tcran_sim::{Progress, SimConfig};

/// A bar in simulated milliseconds over every variant.
#[derive(Debug)]
pub struct Bar {
    bar: ProgressBar,
    names: Vec<String>,
    /// Simulated seconds done per run (seed-major), runs going in parallel.
    done_s: Mutex<Vec<f64>>,
}

impl Bar {
    /// A bar over `seeds` times the `runs`.
    pub fn new(scenario: &str, runs: &[(String, SimConfig)], seeds: usize, duration_s: f64) -> Bar {
        let total = ((runs.len() * seeds.max(1)) as f64 * duration_s * 1e3).round() as u64;
        // Hidden until styled, so the first frame already has the message.
        let bar = ProgressBar::with_draw_target(Some(total.max(1)), ProgressDrawTarget::hidden());
        let style =
            ProgressStyle::with_template("{prefix} [{bar:30}] {percent:>3}% {msg}, eta {eta}")
                .expect("the template is valid")
                .progress_chars("=> ");
        bar.set_style(style);
        bar.set_prefix(scenario.to_string());
        bar.set_message(format!(
            "variant 1/{} {}",
            runs.len(),
            runs.first().map_or("", |(n, _)| n.as_str())
        ));
        bar.set_draw_target(ProgressDrawTarget::stderr());
        Bar {
            bar,
            names: runs.iter().map(|(n, _)| n.clone()).collect(),
            done_s: Mutex::new(vec![0.0; runs.len() * seeds.max(1)]),
        }
    }

    pub fn update(&self, p: Progress) {
        let run = p.seed * p.variants + p.variant;
        let done_s = {
            let mut done = self.done_s.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(d) = done.get_mut(run) {
                *d = p.sim_s.min(p.duration_s);
            }
            done.iter().sum::<f64>()
        };
        self.bar.set_position((done_s * 1e3).round() as u64);
        let name = self.names.get(p.variant).map_or("", String::as_str);
        let seed = if p.seeds > 1 {
            format!("seed {}/{}, ", p.seed + 1, p.seeds)
        } else {
            String::new()
        };
        self.bar.set_message(format!(
            "{seed}variant {}/{} {name}: {:.0}/{:.0} s",
            p.variant + 1,
            p.variants,
            p.sim_s,
            p.duration_s
        ));
    }

    /// Removes the bar (the table that follows says what happened).
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}
