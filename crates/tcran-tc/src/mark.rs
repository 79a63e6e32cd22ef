//! Congestion Experienced marking on metadata and, for live packets, on the
//! real header bytes (IPv4 checksum fixed incrementally, RFC 1624).

use tcran_core::{Ecn, Packet};

/// Sets CE on an ECN-capable packet. Returns false (and changes nothing) for
/// Not-ECT packets, which must be dropped instead (RFC 3168 sec. 5).
/// A CE packet stays CE and counts as marked.
pub fn set_ce(packet: &mut Packet) -> bool {
    if !packet.ecn.is_ect() {
        return false;
    }
    packet.ecn = Ecn::Ce;
    if let Some(bytes) = packet.payload.as_deref_mut() {
        // Metadata came from these bytes, so they parse; if they do not
        // (a caller built an inconsistent packet), the metadata still carries CE.
        let _ = tcran_wire::set_ce(bytes, packet.sdap_header);
    }
    true
}
