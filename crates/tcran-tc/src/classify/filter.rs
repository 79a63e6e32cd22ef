//! The 5-tuple filter (TC-RAN's "OSI classifier", paper-tc-ran.txt sec.
//! IV-A "Ingress::Classifier": packets "separated according to their
//! protocol, source address, source port, destination address and
//! destination port"), extended with the DiffServ field (DSCP, RFC 2474
//! sec. 3) and the ECN field (RFC 3168 sec. 5), the two header fields a
//! packet still carries above PDCP.
//!
//! Contract:
//! - Rules are tried in ascending `priority` (unique); the first rule whose
//!   every given constraint holds wins; no match -> `None` (default queue).
//! - A constraint left out matches anything. Given constraints:
//!   - `src`, `dst`: an IPv4 or IPv6 prefix (`"10.0.0.0/8"`,
//!     `"2001:db8::/32"`) or a plain address (a /32 or /128). An IPv4 rule
//!     never matches an IPv6 packet or vice versa (IPv4-mapped IPv6
//!     addresses are IPv6). Host bits beyond the prefix are an error, as in
//!     `ip route`, because `"10.0.0.1/8"` is more likely a typo than intent.
//!   - `src_port`, `dst_port`: a port (`443` or `"443"`) or an inclusive
//!     range `"5000-5010"`. A rule with a port constraint only matches
//!     protocols that have ports (TCP, UDP, DCCP, SCTP, UDP-Lite), like tc
//!     flower; with such a rule, `protocol` must be one of those.
//!   - `protocol`: `"tcp"`, `"udp"`, `"icmp"`, `"icmpv6"`, `"sctp"`,
//!     `"dccp"`, `"udplite"`, `"gre"`, `"esp"` or an IANA number 0..=255.
//!   - `dscp`: 0..=63 or a PHB name (`"ef"`, `"af41"`, `"cs1"`, `"le"`,
//!     `"va"`, `"be"`).
//!   - `ecn`: `"not_ect"`, `"ect0"`, `"ect1"` or `"ce"`.
//! - `build()` parses every string once; matching does no parsing and no
//!   allocation: addresses become (family, mask, value) with `u128` masks,
//!   and protocol, DSCP and ECN are packed into one masked 32-bit compare.

use super::spec::NumOrText;
use serde::{Deserialize, Serialize};
use std::net::IpAddr;
use tcran_core::{ConfigError, Ecn, Packet, Protocol, QueueId};

/// One filter rule. Fields left out match anything.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FilterRule {
    /// Lower values are tried first; unique within a classifier.
    pub priority: u32,
    /// Destination queue.
    pub queue: QueueId,
    /// Source prefix or address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src: Option<String>,
    /// Destination prefix or address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst: Option<String>,
    /// Source port or inclusive range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src_port: Option<NumOrText>,
    /// Destination port or inclusive range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst_port: Option<NumOrText>,
    /// Protocol name or number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<NumOrText>,
    /// DSCP value or PHB name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dscp: Option<NumOrText>,
    /// ECN codepoint name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<String>,
}

impl FilterRule {
    /// A rule matching everything, sending it to `queue`.
    pub fn new(priority: u32, queue: QueueId) -> FilterRule {
        FilterRule {
            priority,
            queue,
            src: None,
            dst: None,
            src_port: None,
            dst_port: None,
            protocol: None,
            dscp: None,
            ecn: None,
        }
    }
}

// ------------------------------------------------------------- compiled form

const FAMILY_ANY: u8 = 0;
const FAMILY_V4: u8 = 4;
const FAMILY_V6: u8 = 6;

/// `(addr & mask) == value` within one address family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct AddrMatch {
    family: u8,
    mask: u128,
    value: u128,
}

impl AddrMatch {
    const ANY: AddrMatch = AddrMatch {
        family: FAMILY_ANY,
        mask: 0,
        value: 0,
    };

    #[inline]
    fn matches(&self, family: u8, addr: u128) -> bool {
        self.family == FAMILY_ANY || (self.family == family && addr & self.mask == self.value)
    }
}

#[inline]
fn addr_key(a: &IpAddr) -> (u8, u128) {
    match a {
        IpAddr::V4(v4) => (FAMILY_V4, u32::from(*v4) as u128),
        IpAddr::V6(v6) => (FAMILY_V6, u128::from(*v6)),
    }
}

/// The header fields a rule looks at, extracted once per packet.
#[derive(Debug, Clone, Copy)]
struct Key {
    src_family: u8,
    src: u128,
    dst_family: u8,
    dst: u128,
    sport: u16,
    dport: u16,
    has_ports: bool,
    /// `protocol << 16 | dscp << 8 | ecn bits`.
    misc: u32,
}

const fn has_ports(proto: u8) -> bool {
    matches!(proto, 6 | 17 | 33 | 132 | 136)
}

impl Key {
    #[inline]
    fn of(p: &Packet) -> Key {
        let (src_family, src) = addr_key(&p.tuple.src);
        let (dst_family, dst) = addr_key(&p.tuple.dst);
        let proto = p.tuple.proto.0;
        Key {
            src_family,
            src,
            dst_family,
            dst,
            sport: p.tuple.sport,
            dport: p.tuple.dport,
            has_ports: has_ports(proto),
            misc: (proto as u32) << 16 | ((p.dscp.0 & 0x3f) as u32) << 8 | p.ecn.bits() as u32,
        }
    }
}

/// A validated rule in matching form.
#[derive(Debug, Clone)]
pub(crate) struct CompiledRule {
    pub(crate) priority: u32,
    pub(crate) queue: QueueId,
    src: AddrMatch,
    dst: AddrMatch,
    sport: (u16, u16),
    dport: (u16, u16),
    needs_ports: bool,
    misc_mask: u32,
    misc_value: u32,
}

impl CompiledRule {
    #[inline]
    fn matches(&self, k: &Key) -> bool {
        k.misc & self.misc_mask == self.misc_value
            && (!self.needs_ports
                || (k.has_ports
                    && (self.sport.0..=self.sport.1).contains(&k.sport)
                    && (self.dport.0..=self.dport.1).contains(&k.dport)))
            && self.dst.matches(k.dst_family, k.dst)
            && self.src.matches(k.src_family, k.src)
    }
}

/// Checks and compiles one rule; error fields are relative to the rule
/// (`dst_port`), the caller prefixes `rules[i]`.
pub(crate) fn compile(rule: &FilterRule) -> Result<CompiledRule, ConfigError> {
    let err = |field: &str, value: &dyn std::fmt::Display, allowed: String| {
        ConfigError::new(field, value, allowed)
    };
    let src = match &rule.src {
        Some(s) => parse_prefix(s).map_err(|a| err("src", s, a))?,
        None => AddrMatch::ANY,
    };
    let dst = match &rule.dst {
        Some(s) => parse_prefix(s).map_err(|a| err("dst", s, a))?,
        None => AddrMatch::ANY,
    };
    if src.family != FAMILY_ANY && dst.family != FAMILY_ANY && src.family != dst.family {
        return Err(err(
            "dst",
            rule.dst.as_ref().expect("set"),
            format!(
                "is IPv{} but src is IPv{}; no packet could match",
                dst.family, src.family
            ),
        ));
    }
    let sport = match &rule.src_port {
        Some(v) => Some(parse_ports(v).map_err(|a| err("src_port", v, a))?),
        None => None,
    };
    let dport = match &rule.dst_port {
        Some(v) => Some(parse_ports(v).map_err(|a| err("dst_port", v, a))?),
        None => None,
    };
    let proto = match &rule.protocol {
        Some(v) => Some(parse_protocol(v).map_err(|a| err("protocol", v, a))?),
        None => None,
    };
    if let (Some(p), true) = (proto, sport.is_some() || dport.is_some()) {
        if !has_ports(p) {
            let (field, v) = match (&rule.dst_port, &rule.src_port) {
                (Some(v), _) => ("dst_port", v),
                (None, Some(v)) => ("src_port", v),
                (None, None) => unreachable!(),
            };
            return Err(err(
                field,
                v,
                format!(
                    "ports apply only to tcp, udp, dccp, sctp and udplite, but protocol is {:?}",
                    Protocol(p)
                ),
            ));
        }
    }
    let dscp = match &rule.dscp {
        Some(v) => Some(parse_dscp(v).map_err(|a| err("dscp", v, a))?),
        None => None,
    };
    let ecn = match &rule.ecn {
        Some(s) => Some(parse_ecn(s).map_err(|a| err("ecn", s, a))?),
        None => None,
    };
    let (mut misc_mask, mut misc_value) = (0u32, 0u32);
    if let Some(p) = proto {
        misc_mask |= 0xff << 16;
        misc_value |= (p as u32) << 16;
    }
    if let Some(d) = dscp {
        misc_mask |= 0x3f << 8;
        misc_value |= (d as u32) << 8;
    }
    if let Some(e) = ecn {
        misc_mask |= 0b11;
        misc_value |= e.bits() as u32;
    }
    Ok(CompiledRule {
        priority: rule.priority,
        queue: rule.queue,
        src,
        dst,
        sport: sport.unwrap_or((0, u16::MAX)),
        dport: dport.unwrap_or((0, u16::MAX)),
        needs_ports: sport.is_some() || dport.is_some(),
        misc_mask,
        misc_value,
    })
}

/// The compiled rule list, sorted by priority.
#[derive(Debug, Clone)]
pub struct FilterClassifier {
    rules: Vec<CompiledRule>,
}

impl FilterClassifier {
    /// Compiles `rules`; errors name `rules[i].<field>`.
    pub fn new(rules: &[FilterRule]) -> Result<FilterClassifier, ConfigError> {
        let mut compiled = Vec::with_capacity(rules.len());
        for (i, r) in rules.iter().enumerate() {
            if let Some(j) = rules[..i].iter().position(|o| o.priority == r.priority) {
                return Err(ConfigError::new(
                    format!("rules[{i}].priority"),
                    r.priority,
                    format!("must be unique: rules[{j}] has this priority already"),
                ));
            }
            compiled.push(compile(r).map_err(|e| e.within(format!("rules[{i}]")))?);
        }
        compiled.sort_by_key(|r| r.priority);
        Ok(FilterClassifier { rules: compiled })
    }

    pub fn len(&self) -> usize {
        self.rules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// First matching rule's queue, by ascending priority.
    #[inline]
    pub fn classify(&self, packet: &Packet) -> Option<QueueId> {
        if self.rules.is_empty() {
            return None;
        }
        let key = Key::of(packet);
        self.rules.iter().find(|r| r.matches(&key)).map(|r| r.queue)
    }

    /// The priority of the rule that would classify `packet` (for tests and
    /// diagnostics).
    pub fn matching_priority(&self, packet: &Packet) -> Option<u32> {
        let key = Key::of(packet);
        self.rules
            .iter()
            .find(|r| r.matches(&key))
            .map(|r| r.priority)
    }
}

// ------------------------------------------------------------------- parsing

const PREFIX_ALLOWED: &str = "must be an IPv4 or IPv6 address or prefix, like \"10.0.0.0/8\", \"2001:db8::/32\" or \"192.0.2.7\"";

fn parse_prefix(s: &str) -> Result<AddrMatch, String> {
    let s = s.trim();
    let (addr, len) = match s.split_once('/') {
        Some((a, l)) => (a.trim(), Some(l.trim())),
        None => (s, None),
    };
    let ip: IpAddr = addr.parse().map_err(|_| PREFIX_ALLOWED.to_string())?;
    let (family, value) = addr_key(&ip);
    let bits: u32 = if family == FAMILY_V4 { 32 } else { 128 };
    let len = match len {
        None => bits,
        Some(l) => l
            .parse::<u32>()
            .ok()
            .filter(|l| *l <= bits)
            .ok_or_else(|| format!("the prefix length must be 0..={bits}"))?,
    };
    let full: u128 = if bits == 32 {
        u32::MAX as u128
    } else {
        u128::MAX
    };
    let mask = if len == 0 {
        0
    } else {
        (u128::MAX << (bits - len)) & full
    };
    if value & !mask != 0 {
        let net = match ip {
            IpAddr::V4(_) => IpAddr::V4(((value & mask) as u32).into()),
            IpAddr::V6(_) => IpAddr::V6((value & mask).into()),
        };
        return Err(format!(
            "has host bits set beyond /{len}; the network is {net}/{len}"
        ));
    }
    Ok(AddrMatch {
        family,
        mask,
        value,
    })
}

const PORT_ALLOWED: &str =
    "must be a port 0..=65535 or an inclusive range like \"5000-5010\" (low <= high)";

fn parse_ports(v: &NumOrText) -> Result<(u16, u16), String> {
    let one = |s: &str| {
        s.trim()
            .parse::<u16>()
            .map_err(|_| PORT_ALLOWED.to_string())
    };
    let (lo, hi) = match v {
        NumOrText::Num(n) => {
            let p = u16::try_from(*n).map_err(|_| PORT_ALLOWED.to_string())?;
            (p, p)
        }
        NumOrText::Text(s) => match s.split_once('-') {
            Some((a, b)) => (one(a)?, one(b)?),
            None => {
                let p = one(s)?;
                (p, p)
            }
        },
    };
    if lo > hi {
        return Err(PORT_ALLOWED.to_string());
    }
    Ok((lo, hi))
}

const PROTOCOL_ALLOWED: &str = "must be tcp, udp, icmp, icmpv6, sctp, dccp, udplite, gre, esp or an IP protocol number 0..=255";

fn parse_protocol(v: &NumOrText) -> Result<u8, String> {
    match v {
        NumOrText::Num(n) => u8::try_from(*n).map_err(|_| PROTOCOL_ALLOWED.to_string()),
        NumOrText::Text(s) => {
            let s = s.trim().to_ascii_lowercase();
            Ok(match s.as_str() {
                "tcp" => Protocol::TCP.0,
                "udp" => Protocol::UDP.0,
                "icmp" => Protocol::ICMP.0,
                "icmpv6" | "ipv6-icmp" => Protocol::ICMPV6.0,
                "sctp" => 132,
                "dccp" => 33,
                "udplite" => 136,
                "gre" => 47,
                "esp" => 50,
                other => other
                    .parse::<u8>()
                    .map_err(|_| PROTOCOL_ALLOWED.to_string())?,
            })
        }
    }
}

const DSCP_ALLOWED: &str = "must be 0..=63 or a PHB name: be, cs0..cs7, af11..af43, ef, va, le";

/// DSCP value or standard PHB name (RFC 2474 CS, RFC 2597 AF, RFC 3246 EF,
/// RFC 5865 VOICE-ADMIT, RFC 8622 LE).
pub(crate) fn parse_dscp(v: &NumOrText) -> Result<u8, String> {
    let n = match v {
        NumOrText::Num(n) => *n,
        NumOrText::Text(s) => {
            let s = s.trim().to_ascii_lowercase();
            let b = s.as_bytes();
            match s.as_str() {
                "be" | "df" | "default" => 0,
                "ef" => 46,
                "va" => 44,
                "le" => 1,
                _ if b.len() == 3 && &b[..2] == b"cs" && (b'0'..=b'7').contains(&b[2]) => {
                    8 * (b[2] - b'0') as i64
                }
                _ if b.len() == 4
                    && &b[..2] == b"af"
                    && (b'1'..=b'4').contains(&b[2])
                    && (b'1'..=b'3').contains(&b[3]) =>
                {
                    8 * (b[2] - b'0') as i64 + 2 * (b[3] - b'0') as i64
                }
                _ => s.parse::<i64>().map_err(|_| DSCP_ALLOWED.to_string())?,
            }
        }
    };
    u8::try_from(n)
        .ok()
        .filter(|d| *d <= 63)
        .ok_or_else(|| DSCP_ALLOWED.to_string())
}

fn parse_ecn(s: &str) -> Result<Ecn, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "not_ect" => Ok(Ecn::NotEct),
        "ect0" => Ok(Ecn::Ect0),
        "ect1" => Ok(Ecn::Ect1),
        "ce" => Ok(Ecn::Ce),
        _ => Err("must be not_ect, ect0, ect1 or ce".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_parse_to_masks() {
        let m = parse_prefix("10.0.0.0/8").unwrap();
        assert_eq!((m.family, m.mask, m.value), (4, 0xff00_0000, 0x0a00_0000));
        let m = parse_prefix("192.0.2.7").unwrap();
        assert_eq!(m.mask, 0xffff_ffff);
        let m = parse_prefix("0.0.0.0/0").unwrap();
        assert_eq!((m.family, m.mask), (4, 0));
        let m = parse_prefix("2001:db8::/32").unwrap();
        assert_eq!(m.mask, u128::MAX << 96);
        assert_eq!(m.value, 0x2001_0db8u128 << 96);
        assert_eq!(parse_prefix("::1").unwrap().mask, u128::MAX);
        assert!(parse_prefix("10.0.0.0/33").unwrap_err().contains("0..=32"));
        assert!(parse_prefix("2001:db8::/129")
            .unwrap_err()
            .contains("0..=128"));
        assert!(parse_prefix("10.0.0.1/8")
            .unwrap_err()
            .contains("the network is 10.0.0.0/8"));
        assert!(parse_prefix("10.0.0/8").is_err());
    }

    #[test]
    fn ports_protocols_dscps_and_ecn_parse() {
        assert_eq!(parse_ports(&"5000-5010".into()), Ok((5000, 5010)));
        assert_eq!(parse_ports(&" 80 - 81 ".into()), Ok((80, 81)));
        assert_eq!(parse_ports(&443.into()), Ok((443, 443)));
        assert_eq!(parse_ports(&"443".into()), Ok((443, 443)));
        assert!(parse_ports(&"10-5".into()).is_err());
        assert!(parse_ports(&65536.into()).is_err());
        assert!(parse_ports(&(-1).into()).is_err());
        assert_eq!(parse_protocol(&"UDP".into()), Ok(17));
        assert_eq!(parse_protocol(&"icmpv6".into()), Ok(58));
        assert_eq!(parse_protocol(&132.into()), Ok(132));
        assert!(parse_protocol(&256.into()).is_err());
        assert!(parse_protocol(&"quic".into()).is_err());
        assert_eq!(parse_dscp(&"ef".into()), Ok(46));
        assert_eq!(parse_dscp(&"af41".into()), Ok(34));
        assert_eq!(parse_dscp(&"AF13".into()), Ok(14));
        assert_eq!(parse_dscp(&"cs7".into()), Ok(56));
        assert_eq!(parse_dscp(&"46".into()), Ok(46));
        assert!(parse_dscp(&64.into()).is_err());
        assert!(parse_dscp(&"af44".into()).is_err());
        assert_eq!(parse_ecn("ect1"), Ok(Ecn::Ect1));
        assert!(parse_ecn("ect").is_err());
    }
}
