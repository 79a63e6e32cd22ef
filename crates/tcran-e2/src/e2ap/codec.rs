//! The RIC Indication's hand-written APER codec, the hot path of E2
//! (every report period): [`encode_indication`] and [`decode_indication`]
//! write and read the same bytes as hampi's derived codec behind the bridge
//! (E2AP v02.03 clause 9.1.1.8 laid out by X.691 aligned PER), which the
//! property tests in `tests/integration/roundtrip.rs` and the `e2_e2ap`
//! fuzz target check.

use super::{ie, procedure, Indication, IndicationType, RicRequestId};

/// APER length determinant of an unconstrained length (X.691 11.9.3.6,
/// aligned): one octet below 128, two below 16384; `None` above (X.691
/// fragmentation, which tcran's messages never need: [`crate::sm::MAX_MESSAGE`]).
fn length_determinant(out: &mut Vec<u8>, n: usize) -> Option<()> {
    match n {
        0..=127 => out.push(n as u8),
        128..=16383 => out.extend_from_slice(&(0x8000 | n as u16).to_be_bytes()),
        _ => return None,
    }
    Some(())
}

/// A RIC Indication, APER-encoded directly: E2AP-PDU `initiatingMessage`
/// (procedure 5, criticality ignore) whose RICindication holds the IEs in
/// the order and with the criticality (reject) of E2AP 9.1.1.8, each an
/// open type (X.691 10.2: length, then the value's octets). The same bytes
/// as hampi's derived encoder (property test in `tests/integration/roundtrip.rs`);
/// `None` when a length needs fragmentation (the caller then uses hampi,
/// which reports it).
pub fn encode_indication(m: &Indication) -> Option<Vec<u8>> {
    // Octets of an APER length determinant (X.691 11.9.3.6, aligned).
    fn ld(n: usize) -> usize {
        if n < 128 {
            1
        } else {
            2
        }
    }
    // Every IE: id (2 octets), criticality reject (2 bits, padded), open
    // type length, value.
    fn ie_len(value: usize) -> usize {
        3 + ld(value) + value
    }
    // An OCTET STRING IE: the open type holds the string's own length.
    fn octets_ie_len(v: usize) -> usize {
        ie_len(ld(v) + v)
    }
    fn put_ie(out: &mut Vec<u8>, id: u16, value: &[u8]) -> Option<()> {
        out.extend_from_slice(&id.to_be_bytes());
        out.push(0);
        length_determinant(out, value.len())?;
        out.extend_from_slice(value);
        Some(())
    }
    fn octets_ie(out: &mut Vec<u8>, id: u16, v: &[u8]) -> Option<()> {
        out.extend_from_slice(&id.to_be_bytes());
        out.push(0);
        length_determinant(out, ld(v.len()) + v.len())?;
        length_determinant(out, v.len())?;
        out.extend_from_slice(v);
        Some(())
    }
    if m.function > 4095 {
        return None; // out of RANfunctionID's range: hampi says so
    }
    let count = 6 + m.sn.is_some() as u16 + m.call_process_id.is_some() as u16;
    // The RICindication value's length comes first on the wire: it is
    // computed, so the value is written once, straight into the PDU (a
    // 16 KB report is not copied twice).
    let value_len = 3
        + ie_len(5)
        + ie_len(2)
        + ie_len(1)
        + m.sn.map_or(0, |_| ie_len(2))
        + ie_len(1)
        + octets_ie_len(m.header.len())
        + octets_ie_len(m.message.len())
        + m.call_process_id
            .as_ref()
            .map_or(0, |c| octets_ie_len(c.len()));
    let mut out = Vec::with_capacity(value_len + 6);
    // CHOICE initiatingMessage (extension bit, index 0 of 3), procedure
    // code (one octet), criticality ignore (2 bits, padded).
    out.extend_from_slice(&[0x00, procedure::RIC_INDICATION, 0x40]);
    length_determinant(&mut out, value_len)?;
    // RICindication: extension bit (padded), then the IE count (0..65535,
    // two aligned octets).
    out.push(0);
    out.extend_from_slice(&count.to_be_bytes());
    let r = m.request;
    let [a, b] = r.requestor.to_be_bytes();
    let [c, d] = r.instance.to_be_bytes();
    put_ie(&mut out, ie::REQUEST_ID, &[0, a, b, c, d])?;
    put_ie(&mut out, ie::RAN_FUNCTION_ID, &m.function.to_be_bytes())?;
    put_ie(&mut out, ie::ACTION_ID, &[m.action])?;
    if let Some(sn) = m.sn {
        put_ie(&mut out, ie::INDICATION_SN, &sn.to_be_bytes())?;
    }
    // ENUMERATED { report, insert, ... }: extension bit, one bit.
    let kind = match m.kind {
        IndicationType::Report => 0x00,
        IndicationType::Insert => 0x40,
    };
    put_ie(&mut out, ie::INDICATION_TYPE, &[kind])?;
    octets_ie(&mut out, ie::INDICATION_HEADER, &m.header)?;
    octets_ie(&mut out, ie::INDICATION_MESSAGE, &m.message)?;
    if let Some(c) = &m.call_process_id {
        octets_ie(&mut out, ie::CALL_PROCESS_ID, c)?;
    }
    debug_assert_eq!(out.len(), value_len + 3 + ld(value_len));
    Some(out)
}

/// Reads an APER length determinant (X.691 11.9.3.6, aligned) of at most
/// 16383 from `b` at `*at`: `None` for the fragmented form.
fn read_length(b: &[u8], at: &mut usize) -> Option<usize> {
    let first = *b.get(*at)?;
    match first >> 6 {
        0 | 1 => {
            *at += 1;
            Some(first as usize)
        }
        2 => {
            let second = *b.get(*at + 1)?;
            *at += 2;
            Some(((first as usize & 0x3f) << 8) | second as usize)
        }
        _ => None,
    }
}

/// A RIC Indication decoded directly, the inverse of
/// [`encode_indication`], for the RIC side's hot path: the same
/// [`Indication`] hampi's decoder and [`super::from_asn`] give, or `None` where
/// this decoder leaves the bytes to them. It takes the PDU tcran and
/// asn1c-based nodes send: `initiatingMessage` of procedure 5 with
/// criticality ignore, the IEs of E2AP 9.1.1.8 each once with criticality
/// reject, in any order, every open type exactly as long as its value and
/// nothing after the PDU. Anything else (another criticality, an unknown
/// or repeated IE, an extension, a fragmented length, trailing bytes) goes
/// to hampi, which decodes or rejects it as it always has. The property
/// test in `tests/integration/roundtrip.rs` and the `e2_e2ap` fuzz target hold both
/// paths to the same result.
pub fn decode_indication(bytes: &[u8]) -> Option<Indication> {
    if bytes.get(..3)? != [0x00, procedure::RIC_INDICATION, 0x40] {
        return None;
    }
    let mut at = 3;
    let len = read_length(bytes, &mut at)?;
    if bytes.len() - at != len {
        return None;
    }
    // RICindication: extension bit clear (its padding too), IE count.
    let count = match bytes.get(at..at + 3)? {
        [0, hi, lo] => u16::from_be_bytes([*hi, *lo]),
        _ => return None,
    };
    at += 3;
    let (mut request, mut function, mut action, mut sn, mut kind) = (None, None, None, None, None);
    let (mut header, mut message, mut call_process_id) = (None, None, None);
    fn once<T>(slot: &mut Option<T>, v: T) -> Option<()> {
        if slot.is_some() {
            return None; // a repeated IE: hampi's path names it
        }
        *slot = Some(v);
        Some(())
    }
    for _ in 0..count {
        let [a, b, 0] = *bytes.get(at..at + 3)? else {
            return None;
        };
        at += 3;
        let id = u16::from_be_bytes([a, b]);
        let n = read_length(bytes, &mut at)?;
        let v = bytes.get(at..at.checked_add(n)?)?;
        at += n;
        // An OCTET STRING inside the open type: its own length, then
        // exactly that many octets.
        let octets = |v: &[u8]| -> Option<Vec<u8>> {
            let mut i = 0;
            let n = read_length(v, &mut i)?;
            (v.len() - i == n).then(|| v[i..].to_vec())
        };
        match id {
            ie::REQUEST_ID => match *v {
                [0, a, b, c, d] => once(
                    &mut request,
                    RicRequestId {
                        requestor: u16::from_be_bytes([a, b]),
                        instance: u16::from_be_bytes([c, d]),
                    },
                )?,
                _ => return None,
            },
            ie::RAN_FUNCTION_ID => match *v {
                [a, b] if u16::from_be_bytes([a, b]) <= 4095 => {
                    once(&mut function, u16::from_be_bytes([a, b]))?
                }
                _ => return None,
            },
            ie::ACTION_ID => match *v {
                [a] => once(&mut action, a)?,
                _ => return None,
            },
            ie::INDICATION_SN => match *v {
                [a, b] => once(&mut sn, u16::from_be_bytes([a, b]))?,
                _ => return None,
            },
            ie::INDICATION_TYPE => match *v {
                [0x00] => once(&mut kind, IndicationType::Report)?,
                [0x40] => once(&mut kind, IndicationType::Insert)?,
                _ => return None,
            },
            ie::INDICATION_HEADER => once(&mut header, octets(v)?)?,
            ie::INDICATION_MESSAGE => once(&mut message, octets(v)?)?,
            ie::CALL_PROCESS_ID => once(&mut call_process_id, octets(v)?)?,
            _ => return None,
        }
    }
    if at != bytes.len() {
        return None;
    }
    Some(Indication {
        request: request?,
        function: function?,
        action: action?,
        sn,
        kind: kind?,
        header: header?,
        message: message?,
        call_process_id,
    })
}
