//! The emulated links: one TUN device per host namespace, read and written
//! only by the emulator. A packet the host's kernel routes out of the
//! device is read here as raw IP bytes; a packet written here arrives in
//! the host's kernel as if received on that interface.
//!
//! Contract: devices are created in the emulator's own namespace, then
//! moved into the host's namespace and configured there (address, route,
//! link up) with iproute2; the file descriptor keeps working after the
//! move. Reads and writes never block (the relay waits with epoll). A
//! device disappears with its last descriptor.

use crate::error::EmuError;
use crate::netns::Namespace;
use std::os::fd::{AsRawFd, RawFd};

/// Largest IP packet a device carries (its MTU) plus headroom for reads.
pub const MTU: usize = 1500;

/// A TUN device inside a host namespace.
pub struct Tun {
    dev: tun::Device,
    name: String,
}

impl std::fmt::Debug for Tun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tun").field("name", &self.name).finish()
    }
}

impl Tun {
    /// Creates device `name` and moves it into `ns`, with address `addr`
    /// (a /32) and, if given, a route to `route` through it.
    pub fn create(name: &str, ns: &Namespace, addr: &str, route: &str) -> Result<Tun, EmuError> {
        let mut cfg = tun::Configuration::default();
        cfg.tun_name(name)
            .layer(tun::Layer::L3)
            .mtu(MTU as u16)
            .platform_config(|p| {
                p.ensure_root_privileges(false);
            });
        let dev = tun::create(&cfg).map_err(|e| EmuError::Setup {
            what: format!("creating TUN device {name}"),
            detail: e.to_string(),
        })?;
        dev.set_nonblock()
            .map_err(|e| EmuError::io(format!("TUN device {name}"), e))?;
        crate::netns::ip(&["link", "set", name, "netns", ns.name()])?;
        ns.ip(&["addr", "add", &format!("{addr}/32"), "dev", name])?;
        ns.ip(&["link", "set", name, "mtu", &MTU.to_string(), "up"])?;
        ns.ip(&["route", "add", route, "dev", name])?;
        Ok(Tun {
            dev,
            name: name.to_string(),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Reads one packet; `Ok(None)` when none is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> Result<Option<usize>, EmuError> {
        match self.dev.recv(buf) {
            Ok(n) => Ok(Some(n)),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ok(None),
            Err(e) => Err(EmuError::io(format!("reading {}", self.name), e)),
        }
    }

    /// Writes one packet. A full device queue (the host does not read
    /// fast enough) drops the packet, as a NIC would; the caller counts it.
    pub fn send(&self, packet: &[u8]) -> Result<bool, EmuError> {
        match self.dev.send(packet) {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(false),
            Err(e) => Err(EmuError::io(format!("writing {}", self.name), e)),
        }
    }

    pub fn raw_fd(&self) -> RawFd {
        self.dev.as_raw_fd()
    }
}
