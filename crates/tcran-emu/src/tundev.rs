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
    /// The namespace the device lives in.
    ns: String,
}

/// What the kernel dropped at a device, by its own counters (`ip -s
/// link`): packets lost at the host's side of the emulated link, outside
/// the model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct DeviceDrops {
    /// Packets the host sent into the device that its queue had no room
    /// for before the emulator read them (`tx_dropped`: the TUN driver's
    /// ring is full).
    pub not_read: u64,
    /// Packets the emulator wrote that the host's stack did not take
    /// (`rx_dropped`).
    pub not_taken: u64,
}

impl DeviceDrops {
    pub fn total(&self) -> u64 {
        self.not_read + self.not_taken
    }

    /// Reads the counters of one device from `ip -s -j link show` output.
    fn parse(json: &str) -> Option<DeviceDrops> {
        let v: serde_json::Value = serde_json::from_str(json).ok()?;
        let stats = v.get(0)?.get("stats64")?;
        let dropped = |dir: &str| stats.get(dir)?.get("dropped")?.as_u64();
        Some(DeviceDrops {
            not_read: dropped("tx")?,
            not_taken: dropped("rx")?,
        })
    }
}

impl std::ops::AddAssign for DeviceDrops {
    fn add_assign(&mut self, o: DeviceDrops) {
        self.not_read += o.not_read;
        self.not_taken += o.not_taken;
    }
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
            ns: ns.name().to_string(),
        })
    }

    /// The kernel's drop counters of this device.
    pub fn kernel_drops(&self) -> Result<DeviceDrops, EmuError> {
        let what = format!("ip -n {} -s -j link show dev {}", self.ns, self.name);
        let out = std::process::Command::new("ip")
            .args([
                "-n", &self.ns, "-s", "-j", "link", "show", "dev", &self.name,
            ])
            .output()
            .map_err(|e| EmuError::Setup {
                what: what.clone(),
                detail: e.to_string(),
            })?;
        let text = String::from_utf8_lossy(&out.stdout);
        DeviceDrops::parse(&text).ok_or_else(|| EmuError::Setup {
            what,
            detail: format!(
                "no drop counters in its output: {}{}",
                text.trim(),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
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

#[cfg(test)]
mod tests {
    use super::DeviceDrops;

    /// `ip -s -j link show dev X` as iproute2 6.1 prints it (Debian 12).
    #[test]
    fn drop_counters_come_from_the_devices_statistics() {
        let json = r#"[{"ifindex":7,"ifname":"tce1s","flags":["POINTOPOINT","UP"],"mtu":1500,
            "qdisc":"pfifo_fast","txqlen":500,"link_type":"none",
            "stats64":{"rx":{"bytes":10,"packets":1,"errors":0,"dropped":3,"over_errors":0,"multicast":0},
                       "tx":{"bytes":20,"packets":2,"errors":0,"dropped":298,"carrier_errors":0,"collisions":0}}}]"#;
        assert_eq!(
            DeviceDrops::parse(json),
            Some(DeviceDrops {
                not_read: 298,
                not_taken: 3
            })
        );
        assert_eq!(DeviceDrops::parse("[]"), None);
        assert_eq!(DeviceDrops::parse("Device \"x\" does not exist."), None);
    }
}
