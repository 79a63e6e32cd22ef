//! `--pcap DIR`: what crossed each emulated link, as pcapng files Wireshark
//! reads: `server.pcapng` (the server's side of the core network) and
//! `ue<RNTI>.pcapng` (each UE's side of the radio). Packets are raw IP
//! (link type RAW), timestamped in nanoseconds at the moment the emulator
//! read or wrote them, the direction in the packet's flags.

use crate::error::EmuError;
use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::DataLink;
use std::borrow::Cow;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::time::Duration;

/// Which way a packet crossed the device, seen from the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// The host sent it (the emulator read it).
    FromHost,
    /// The host received it (the emulator wrote it).
    ToHost,
}

/// One capture file.
pub struct Capture {
    writer: PcapNgWriter<BufWriter<File>>,
    /// Wall-clock time (since 1970) of the emulation's time 0.
    epoch: Duration,
    path: String,
}

impl std::fmt::Debug for Capture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capture").field("path", &self.path).finish()
    }
}

impl Capture {
    pub fn create(path: &Path, interface: &str, epoch: Duration) -> Result<Capture, EmuError> {
        let shown = path.display().to_string();
        let file = File::create(path).map_err(|e| EmuError::io(shown.clone(), e))?;
        let mut writer = PcapNgWriter::new(BufWriter::new(file)).map_err(|e| EmuError::Io {
            what: shown.clone(),
            detail: e.to_string(),
        })?;
        let idb = InterfaceDescriptionBlock {
            linktype: DataLink::RAW,
            snaplen: 0,
            options: vec![
                InterfaceDescriptionOption::IfName(Cow::Owned(interface.to_string())),
                // Timestamps in nanoseconds (10^-9).
                InterfaceDescriptionOption::IfTsResol(9),
            ],
        };
        writer.write_pcapng_block(idb).map_err(|e| EmuError::Io {
            what: shown.clone(),
            detail: e.to_string(),
        })?;
        Ok(Capture {
            writer,
            epoch,
            path: shown,
        })
    }

    /// Records `bytes` at emulation time `at_ns`.
    pub fn record(&mut self, at_ns: u64, dir: Direction, bytes: &[u8]) -> Result<(), EmuError> {
        // epb_flags bits 0-1: 01 inbound, 10 outbound (pcapng spec,
        // "Enhanced Packet Block Flags Word"), from the host's view.
        let flags = match dir {
            Direction::ToHost => 0b01,
            Direction::FromHost => 0b10,
        };
        let epb = EnhancedPacketBlock {
            interface_id: 0,
            timestamp: self.epoch + Duration::from_nanos(at_ns),
            original_len: bytes.len() as u32,
            data: Cow::Borrowed(bytes),
            options: vec![EnhancedPacketOption::Flags(flags)],
        };
        self.writer
            .write_pcapng_block(epb)
            .map(drop)
            .map_err(|e| EmuError::Io {
                what: self.path.clone(),
                detail: e.to_string(),
            })
    }
}
