//! # tcran-emu: the live emulator
//!
//! Real Linux traffic through tcran's RAN node, in real time: `mm-link`
//! with a 5G RAN inside. Each UE of a scenario and the servers get a
//! network namespace joined to the emulator by a TUN device; a packet a
//! server sends to a UE is read here, crosses the modelled core network
//! and the RAN node (UPF queue, SDAP, the DRB's TC pipeline, PDCP, RLC,
//! MAC and HARQ over the scenario's channel) and is written into the UE's
//! namespace when the node delivers it; the UE's packets go up through
//! the node's uplink model. Real bytes are classified, dropped (counted
//! with layer and reason) and CE-marked by the same code the simulator
//! runs.
//!
//! The emulator is a front end of the simulator engine (`tcran_sim::Sim`):
//! it adds the wall clock and the packets' I/O, and the engine's live flows
//! ([`tcran_sim::Sim::live_downlink`]) measure real traffic exactly as the
//! simulator measures its modelled flows, so `tcran emulate` writes the
//! same summary, CSV series and report as `tcran run`. The scenario's
//! modelled flows can run beside the real ones.
//!
//! - [`emulation`]: one emulation, from the checks to the clean-up.
//! - [`relay`]: the real-time loop (also `tcran run --realtime`, without
//!   devices).
//! - [`realtime`]: a scenario's run paced to the wall clock, without
//!   devices (`tcran run --realtime`).
//! - [`e2`]: the cell's E2 node (`--e2 HOST:PORT`), for both.
//! - [`netns`], [`tundev`]: namespaces and devices.
//! - [`clock`]: CLOCK_MONOTONIC and a timerfd.
//! - [`pcap`]: pcapng captures.
//!
//! Linux only; needs root (CAP_NET_ADMIN) and `/dev/net/tun`.

pub mod clock;
pub mod e2;
pub mod emulation;
pub mod error;
pub mod netns;
pub mod pcap;
pub mod realtime;
pub mod relay;
pub mod tundev;

pub use emulation::{emulate, pick_variant, preflight, Options, Outcome, Report, SERVER_ADDR};
pub use error::EmuError;
