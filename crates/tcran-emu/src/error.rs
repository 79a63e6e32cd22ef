//! What can stop an emulation before it runs, or while it sets up.

/// An emulator error, one line each.
#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    /// Not root (network namespaces and TUN devices need CAP_NET_ADMIN).
    #[error("tcran emulate needs root (it creates network namespaces and TUN devices); run it with sudo")]
    NotRoot,
    /// No TUN driver.
    #[error("tcran emulate needs /dev/net/tun (the Linux TUN driver): {0}")]
    NoTun(String),
    /// A tool the emulator runs is missing.
    #[error("tcran emulate needs `{0}` (iproute2) on the PATH")]
    Missing(&'static str),
    /// Setting up a namespace, device or route failed.
    #[error("{what} failed: {detail}")]
    Setup { what: String, detail: String },
    /// A command could not be started.
    #[error("cannot start `{command}`: {detail}")]
    Spawn { command: String, detail: String },
    /// The scenario cannot be emulated as asked.
    #[error("{0}")]
    Scenario(String),
    /// A command-line option that cannot work (it names itself).
    #[error("{0}")]
    Flag(String),
    /// Reading or writing a device or a file failed while running.
    #[error("{what}: {detail}")]
    Io { what: String, detail: String },
}

impl EmuError {
    pub(crate) fn io(what: impl Into<String>, e: std::io::Error) -> EmuError {
        EmuError::Io {
            what: what.into(),
            detail: e.to_string(),
        }
    }

    /// Whether the mistake is the user's (exit code 2) rather than the
    /// machine's.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            EmuError::NotRoot
                | EmuError::NoTun(_)
                | EmuError::Missing(_)
                | EmuError::Scenario(_)
                | EmuError::Flag(_)
        )
    }
}
