//! Network namespaces for the emulated hosts, made and removed with
//! iproute2 (`ip netns`), the tool every Linux network test bench uses.
//!
//! Contract:
//! - A namespace is named `tcran-<pid>-<start>-<role>`, `<pid>` being the
//!   emulator's process id and `<start>` its start time (clock ticks after
//!   boot, field 22 of `/proc/<pid>/stat`), so two emulators never collide
//!   and a namespace is known to be a leftover when no process with that
//!   pid *and* that start time runs: a pid the kernel gave to another
//!   process since does not hide a dead emulator's namespaces.
//! - [`Namespace`] removes its namespace when dropped, after killing every
//!   process still inside it; [`remove_leftovers`] does the same for the
//!   namespaces of emulators that were killed.
//! - Every failure says which command failed and what it printed.

use crate::error::EmuError;
use std::process::{Command, Stdio};

/// The prefix of every namespace the emulator makes.
pub const PREFIX: &str = "tcran-";

/// Runs `ip ARGS`; an error carries the command and its stderr.
pub fn ip(args: &[&str]) -> Result<(), EmuError> {
    run("ip", args)
}

fn run(program: &str, args: &[&str]) -> Result<(), EmuError> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| EmuError::Setup {
            what: format!("{program} {}", args.join(" ")),
            detail: e.to_string(),
        })?;
    if out.status.success() {
        return Ok(());
    }
    Err(EmuError::Setup {
        what: format!("{program} {}", args.join(" ")),
        detail: String::from_utf8_lossy(&out.stderr).trim().to_string(),
    })
}

/// A network namespace, removed on drop.
#[derive(Debug)]
pub struct Namespace {
    name: String,
}

impl Namespace {
    /// Makes namespace `tcran-<pid>-<role>` with its loopback up and IPv6
    /// off (the RAN node routes IPv4 UE addresses; IPv6 router
    /// solicitations would only be noise on the emulated links).
    pub fn create(role: &str) -> Result<Namespace, EmuError> {
        let name = format!("{}{role}", own_prefix());
        ip(&["netns", "add", &name])?;
        let ns = Namespace { name };
        ns.ip(&["link", "set", "lo", "up"])?;
        ns.sysctl("net.ipv6.conf.all.disable_ipv6", "1")?;
        ns.sysctl("net.ipv6.conf.default.disable_ipv6", "1")?;
        Ok(ns)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `ip -n NAME ARGS`.
    pub fn ip(&self, args: &[&str]) -> Result<(), EmuError> {
        let mut all = vec!["-n", self.name.as_str()];
        all.extend_from_slice(args);
        ip(&all)
    }

    /// Sets a sysctl inside the namespace.
    pub fn sysctl(&self, key: &str, value: &str) -> Result<(), EmuError> {
        run(
            "ip",
            &[
                "netns",
                "exec",
                &self.name,
                "sysctl",
                "-q",
                "-w",
                &format!("{key}={value}"),
            ],
        )
    }

    /// A command that runs `program ARGS` inside the namespace.
    pub fn command(&self, program: &str, args: &[String]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name, program]).args(args);
        c
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        remove(&self.name);
    }
}

/// Kills every process inside namespace `name`, then removes it. Errors
/// are ignored: this runs while cleaning up.
pub fn remove(name: &str) {
    kill_inside(name);
    let _ = ip(&["netns", "del", name]);
}

fn kill_inside(name: &str) {
    let Ok(out) = Command::new("ip").args(["netns", "pids", name]).output() else {
        return;
    };
    for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
        if let Ok(pid) = pid.parse::<i32>() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// `tcran-<pid>-<start>-`: the start of this process's namespace names.
fn own_prefix() -> String {
    let pid = std::process::id();
    // A process can always read its own stat; 0 only if /proc is absent,
    // where `ip netns` cannot work either.
    format!("{PREFIX}{pid}-{}-", start_time(pid).unwrap_or(0))
}

/// When process `pid` started, in clock ticks after boot (field 22 of
/// `/proc/<pid>/stat`, proc(5)); `None` when no such process runs.
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces
    // and parentheses itself: count fields after the last ')'.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

/// Whether namespace `name` was made by an emulator that no longer runs:
/// no process `<pid>` started at `<start>`, as `start_of` tells (the
/// namespaces of this process, `own_pid`, never are). Names without a
/// start time (`tcran-<pid>-<role>`, earlier versions) are judged by the
/// pid alone. Not a tcran name: never.
fn is_leftover(name: &str, own_pid: u32, start_of: impl Fn(u32) -> Option<u64>) -> bool {
    let Some(rest) = name.strip_prefix(PREFIX) else {
        return false;
    };
    let mut parts = rest.split('-');
    let Some(pid) = parts.next().and_then(|p| p.parse::<u32>().ok()) else {
        return false;
    };
    if pid == own_pid {
        return false;
    }
    match (
        parts.next().and_then(|s| s.parse::<u64>().ok()),
        start_of(pid),
    ) {
        (_, None) => true,
        (Some(start), Some(running)) => start != running,
        (None, Some(_)) => false,
    }
}

/// The namespaces `ip netns list` shows.
fn list() -> Vec<String> {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

/// Removes the namespaces left by emulators that no longer run (killed
/// with SIGKILL, or a crashed machine), with every process still inside
/// them; returns their names.
pub fn remove_leftovers() -> Vec<String> {
    let own = std::process::id();
    let mut removed = Vec::new();
    for name in list() {
        if is_leftover(&name, own, start_time) {
            remove(&name);
            removed.push(name);
        }
    }
    removed
}

/// Removes every namespace this process made (the panic path).
pub fn remove_own() {
    let own = own_prefix();
    for name in list().into_iter().filter(|n| n.starts_with(&own)) {
        remove(&name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_knows_its_start_time_and_a_missing_one_has_none() {
        let me = std::process::id();
        let t = start_time(me).expect("our own stat");
        assert_eq!(start_time(me), Some(t), "stable");
        // pid_max is at most 2^22 (proc(5)): this pid cannot run.
        assert_eq!(start_time(u32::MAX), None);
        assert!(own_prefix().starts_with(&format!("tcran-{me}-{t}-")));
    }

    #[test]
    fn a_leftover_is_a_name_whose_pid_and_start_time_run_no_more() {
        let running = |pid: u32| (pid == 100).then_some(5000);
        // The emulator that made it runs: kept.
        assert!(!is_leftover("tcran-100-5000-srv", 1, running));
        // Its pid runs, started at another time: the pid was reused.
        assert!(is_leftover("tcran-100-4000-ue1", 1, running));
        // No such pid.
        assert!(is_leftover("tcran-200-4000-srv", 1, running));
        // Ours: never, whatever /proc says.
        assert!(!is_leftover("tcran-1-7-srv", 1, |_| None));
        // An earlier version's name: by the pid alone.
        assert!(!is_leftover("tcran-100-srv", 1, running));
        assert!(is_leftover("tcran-200-srv", 1, running));
        // Not ours to judge.
        for other in ["tcranx-200-1-srv", "blue", "tcran-abc-1-srv", "tcran-"] {
            assert!(!is_leftover(other, 1, |_| None), "{other}");
        }
    }
}
