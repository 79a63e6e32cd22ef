//! Builders of valid packets, for tests and the emulator's traffic sources.
//!
//! Every builder writes correct length fields and checksums (IPv4 header
//! checksum RFC 791; TCP/UDP/ICMPv6 checksums over their pseudo-headers,
//! RFC 9293 sec. 3.1, RFC 768, RFC 4443 sec. 2.3; ICMP RFC 792) using
//! `etherparse`'s `PacketBuilder`, so `parse(build(x))` gives back `x`.

use crate::parse::SdapDlHeader;
use crate::WireError;
use etherparse::err::packet::BuildWriteError;
use etherparse::{
    IpHeaders, IpNumber, Ipv4Dscp, Ipv4Ecn, Ipv4Header, Ipv6FlowLabel, Ipv6Header, PacketBuilder,
    PacketBuilderStep, TcpHeader, TcpOptionElement,
};
use std::net::{Ipv4Addr, Ipv6Addr};
use tcran_core::packet::TcpFlags;
use tcran_core::{Dscp, Ecn};

/// IPv4 header fields a builder takes (RFC 791). Length, protocol and
/// checksum are filled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Spec {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    /// 0..=63; higher bits are ignored.
    pub dscp: Dscp,
    pub ecn: Ecn,
    pub ttl: u8,
    pub ident: u16,
    /// Don't Fragment flag.
    pub dont_fragment: bool,
}

impl Ipv4Spec {
    /// DSCP 0, Not-ECT, TTL 64, identification 0, DF set.
    pub fn new(src: Ipv4Addr, dst: Ipv4Addr) -> Ipv4Spec {
        Ipv4Spec {
            src,
            dst,
            dscp: Dscp::DEFAULT,
            ecn: Ecn::NotEct,
            ttl: 64,
            ident: 0,
            dont_fragment: true,
        }
    }

    fn header(&self) -> IpHeaders {
        let mut h = Ipv4Header {
            dscp: Ipv4Dscp::try_new(self.dscp.0 & 0x3f).unwrap_or_default(),
            ecn: Ipv4Ecn::try_new(self.ecn.bits()).unwrap_or_default(),
            identification: self.ident,
            dont_fragment: self.dont_fragment,
            time_to_live: self.ttl,
            source: self.src.octets(),
            destination: self.dst.octets(),
            ..Ipv4Header::default()
        };
        // Overwritten on write; set so the header is valid on its own too.
        h.header_checksum = h.calc_header_checksum();
        IpHeaders::Ipv4(h, Default::default())
    }
}

/// IPv6 header fields a builder takes (RFC 8200 sec. 3). Payload length and
/// next header are filled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv6Spec {
    pub src: Ipv6Addr,
    pub dst: Ipv6Addr,
    /// 0..=63; higher bits are ignored.
    pub dscp: Dscp,
    pub ecn: Ecn,
    pub hop_limit: u8,
    /// 20 bits; higher bits are ignored.
    pub flow_label: u32,
}

impl Ipv6Spec {
    /// DSCP 0, Not-ECT, hop limit 64, flow label 0.
    pub fn new(src: Ipv6Addr, dst: Ipv6Addr) -> Ipv6Spec {
        Ipv6Spec {
            src,
            dst,
            dscp: Dscp::DEFAULT,
            ecn: Ecn::NotEct,
            hop_limit: 64,
            flow_label: 0,
        }
    }

    fn header(&self) -> IpHeaders {
        let h = Ipv6Header {
            traffic_class: ((self.dscp.0 & 0x3f) << 2) | self.ecn.bits(),
            flow_label: Ipv6FlowLabel::try_new(self.flow_label & 0xf_ffff).unwrap_or_default(),
            hop_limit: self.hop_limit,
            source: self.src.octets(),
            destination: self.dst.octets(),
            // payload_length and next_header are set on write.
            payload_length: 0,
            next_header: IpNumber(0),
        };
        IpHeaders::Ipv6(h, Default::default())
    }
}

/// TCP header fields a builder takes (RFC 9293 sec. 3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TcpSpec {
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    /// Written only when `flags` has ACK (the field is meaningless otherwise).
    pub ack: u32,
    /// FIN..CWR as in [`TcpFlags`] (bit 0x20 is URG, with urgent pointer 0).
    pub flags: TcpFlags,
    pub window: u16,
    /// SACK blocks (RFC 2018) to send as an option; `(0, 0)` = unused.
    pub sack: [(u32, u32); 3],
}

impl TcpSpec {
    fn header(&self) -> Result<TcpHeader, WireError> {
        let f = self.flags;
        let mut h = TcpHeader::new(self.sport, self.dport, self.seq, self.window);
        h.fin = f.has(TcpFlags::FIN);
        h.syn = f.has(TcpFlags::SYN);
        h.rst = f.has(TcpFlags::RST);
        h.psh = f.has(TcpFlags::PSH);
        h.ack = f.has(TcpFlags::ACK);
        h.urg = f.has(0x20);
        h.ece = f.has(TcpFlags::ECE);
        h.cwr = f.has(TcpFlags::CWR);
        if h.ack {
            h.acknowledgment_number = self.ack;
        }
        let blocks: Vec<(u32, u32)> = self.sack.iter().copied().filter(|&b| b != (0, 0)).collect();
        if let Some((&first, rest)) = blocks.split_first() {
            let mut more = [None; 3];
            for (slot, &b) in more.iter_mut().zip(rest) {
                *slot = Some(b);
            }
            h.set_options(&[
                TcpOptionElement::Noop,
                TcpOptionElement::Noop,
                TcpOptionElement::SelectiveAcknowledgement(first, more),
            ])
            .map_err(|_| WireError::Invalid("tcp options do not fit"))?;
        }
        Ok(h)
    }
}

fn write<B>(step: PacketBuilderStep<B>, size: usize, payload: &[u8]) -> Result<Vec<u8>, WireError>
where
    PacketBuilderStep<B>: Writable,
{
    let mut out = Vec::with_capacity(size);
    step.write_to(&mut out, payload).map_err(|e| match e {
        BuildWriteError::PayloadLen(_) => WireError::TooLong(payload.len()),
        _ => WireError::Invalid("packet could not be serialized"),
    })?;
    Ok(out)
}

/// The last builder steps, which can write a packet.
trait Writable {
    fn write_to(self, out: &mut Vec<u8>, payload: &[u8]) -> Result<(), BuildWriteError>;
}

macro_rules! writable {
    ($($t:ty),*) => {$(
        impl Writable for PacketBuilderStep<$t> {
            fn write_to(self, out: &mut Vec<u8>, payload: &[u8]) -> Result<(), BuildWriteError> {
                self.write(out, payload)
            }
        }
    )*};
}
writable!(
    etherparse::UdpHeader,
    etherparse::TcpHeader,
    etherparse::Icmpv4Header,
    etherparse::Icmpv6Header
);

/// Size hint: IP header (+ TCP options) + transport header + payload.
fn size_hint(payload: &[u8]) -> usize {
    payload.len() + 100
}

/// An IPv4/UDP packet.
pub fn build_ipv4_udp(
    ip: &Ipv4Spec,
    sport: u16,
    dport: u16,
    payload: &[u8],
) -> Result<Vec<u8>, WireError> {
    let step = PacketBuilder::ip(ip.header()).udp(sport, dport);
    write(step, size_hint(payload), payload)
}

/// An IPv6/UDP packet.
pub fn build_ipv6_udp(
    ip: &Ipv6Spec,
    sport: u16,
    dport: u16,
    payload: &[u8],
) -> Result<Vec<u8>, WireError> {
    let step = PacketBuilder::ip(ip.header()).udp(sport, dport);
    write(step, size_hint(payload), payload)
}

/// An IPv4/TCP segment.
pub fn build_ipv4_tcp(ip: &Ipv4Spec, tcp: &TcpSpec, payload: &[u8]) -> Result<Vec<u8>, WireError> {
    let step = PacketBuilder::ip(ip.header()).tcp_header(tcp.header()?);
    write(step, size_hint(payload), payload)
}

/// An IPv6/TCP segment.
pub fn build_ipv6_tcp(ip: &Ipv6Spec, tcp: &TcpSpec, payload: &[u8]) -> Result<Vec<u8>, WireError> {
    let step = PacketBuilder::ip(ip.header()).tcp_header(tcp.header()?);
    write(step, size_hint(payload), payload)
}

/// An ICMP echo request (`reply = false`) or reply (RFC 792).
pub fn build_ipv4_icmp_echo(
    ip: &Ipv4Spec,
    ident: u16,
    seq: u16,
    reply: bool,
    payload: &[u8],
) -> Result<Vec<u8>, WireError> {
    let b = PacketBuilder::ip(ip.header());
    let step = if reply {
        b.icmpv4_echo_reply(ident, seq)
    } else {
        b.icmpv4_echo_request(ident, seq)
    };
    write(step, size_hint(payload), payload)
}

/// An ICMPv6 echo request (`reply = false`) or reply (RFC 4443 sec. 4).
pub fn build_ipv6_icmp_echo(
    ip: &Ipv6Spec,
    ident: u16,
    seq: u16,
    reply: bool,
    payload: &[u8],
) -> Result<Vec<u8>, WireError> {
    let b = PacketBuilder::ip(ip.header());
    let step = if reply {
        b.icmpv6_echo_reply(ident, seq)
    } else {
        b.icmpv6_echo_request(ident, seq)
    };
    write(step, size_hint(payload), payload)
}

/// `ip_packet` behind a downlink SDAP header (TS 37.324 sec. 6.2.2.2).
pub fn with_sdap(header: SdapDlHeader, ip_packet: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(ip_packet.len() + SdapDlHeader::LEN);
    out.push(header.to_byte());
    out.extend_from_slice(ip_packet);
    out
}
