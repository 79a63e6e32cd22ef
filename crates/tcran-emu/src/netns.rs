//! Network namespaces for the emulated hosts, made and removed with
//! iproute2 (`ip netns`), the tool every Linux network test bench uses.
//!
//! Contract:
//! - A namespace is named `tcran-<pid>-<role>`, `<pid>` being the
//!   emulator's process id, so two emulators never collide and a
//!   namespace whose process is gone is known to be a leftover.
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
        let name = format!("{PREFIX}{}-{role}", std::process::id());
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

/// Removes the namespaces left by emulators that no longer run (killed
/// with SIGKILL, or a crashed machine); returns their names.
pub fn remove_leftovers() -> Vec<String> {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some(name) = line.split_whitespace().next() else {
            continue;
        };
        let Some(rest) = name.strip_prefix(PREFIX) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            remove(name);
            removed.push(name.to_string());
        }
    }
    removed
}

/// Removes every namespace this process made (the panic path).
pub fn remove_own() {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else {
        return;
    };
    let own = format!("{PREFIX}{}-", std::process::id());
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if let Some(name) = line.split_whitespace().next() {
            if name.starts_with(&own) {
                remove(name);
            }
        }
    }
}
