//! The progress bar of `tcran run`, `demo` and `reproduce`: one bar over
//! all variants (simulated seconds done of all to do, summed over the runs
//! going at once), on stderr. Its message counts runs (done, going, of
//! all) rather than naming the run that last reported: with several runs
//! at once, that name would jump between them at every update. Callers
//! create it only when stderr is a terminal and stdout is not reserved for
//! JSON, so logs and pipes never see it.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::Mutex;
use tcran_sim::{Progress, SimConfig};

/// A bar in simulated milliseconds over every variant.
#[derive(Debug)]
pub struct Bar {
    bar: ProgressBar,
    /// Simulated seconds of one run.
    duration_s: f64,
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
        let done_s = vec![0.0; runs.len() * seeds.max(1)];
        bar.set_message(message(&done_s, duration_s));
        bar.set_draw_target(ProgressDrawTarget::stderr());
        Bar {
            bar,
            duration_s,
            done_s: Mutex::new(done_s),
        }
    }

    pub fn update(&self, p: Progress) {
        let run = p.seed * p.variants + p.variant;
        let (done_s, msg) = {
            let mut done = self.done_s.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(d) = done.get_mut(run) {
                *d = p.sim_s.min(p.duration_s);
            }
            (done.iter().sum::<f64>(), message(&done, self.duration_s))
        };
        self.bar.set_position((done_s * 1e3).round() as u64);
        self.bar.set_message(msg);
    }

    /// Removes the bar (the table that follows says what happened).
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}

/// The bar's message from the simulated seconds each run has done: how
/// many runs are done and going, of all (the same whichever run reported).
fn message(done_s: &[f64], duration_s: f64) -> String {
    let finished = done_s.iter().filter(|d| **d >= duration_s).count();
    let going = done_s
        .iter()
        .filter(|d| **d > 0.0 && **d < duration_s)
        .count();
    format!("{finished}/{} runs done, {going} going", done_s.len())
}

#[cfg(test)]
mod tests {
    use super::message;

    /// Two variants going at once: whichever reported last, the message
    /// is the same (it used to name the reporting variant, and jumped).
    #[test]
    fn the_message_does_not_depend_on_which_run_reported() {
        let a = message(&[12.0, 3.0, 0.0, 0.0], 12.0);
        let b = message(&[12.0, 0.0, 7.5, 0.0], 12.0);
        assert_eq!(a, "1/4 runs done, 1 going");
        assert_eq!(a, b);
        assert_eq!(message(&[0.0; 3], 5.0), "0/3 runs done, 0 going");
        assert_eq!(message(&[5.0, 5.0], 5.0), "2/2 runs done, 0 going");
    }
}
