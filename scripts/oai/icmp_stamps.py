#!/usr/bin/env python3
"""Stamps every ICMP echo crossing one TUN device, for `make oai-test`.

    icmp_stamps.py DEVICE

Prints one line per ICMP echo request or reply the device carries:
`wall_ns direction type seq`, where wall_ns is the kernel's receive stamp
(CLOCK_REALTIME, SO_TIMESTAMPNS: when the packet crossed the device, not
when this process woke), direction is `out` for a packet the kernel hands
to OAI (into the device) and `in` for one OAI wrote (out of it), type is 8
(request) or 0 (reply) and seq the echo's sequence number (RFC 792).

Run in the UE's and in the gNB's namespace, the stamps split a ping's RTT
into its uplink leg (the request from the UE's device to the gNB's) and
its downlink leg (the reply back), which judge.py maps onto the radio
clock. A classic BPF filter (IP protocol 1) keeps the download's packets
out of this process.
"""
import ctypes
import socket
import struct
import sys

ETH_P_ALL = 0x0003
SO_TIMESTAMPNS = 35
SO_ATTACH_FILTER = 26
PACKET_OUTGOING = 4
# ldb [9]; jeq #1 (ICMP), accept, drop: the device carries bare IP packets.
ICMP_ONLY = [(0x30, 0, 0, 9), (0x15, 0, 1, 1), (0x06, 0, 0, 0xFFFF), (0x06, 0, 0, 0)]


def attach_icmp_filter(sock):
    """Attaches ICMP_ONLY; returns the program's buffer, which must stay
    alive while the kernel copies it (during setsockopt)."""
    program = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *insn) for insn in ICMP_ONLY))
    fprog = struct.pack("HL", len(ICMP_ONLY), ctypes.addressof(program))
    sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, fprog)
    return program


def main():
    device = sys.argv[1]
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_ALL))
    attach_icmp_filter(sock)
    sock.bind((device, 0))
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    out = sys.stdout
    while True:
        data, ancillary, _flags, address = sock.recvmsg(128, socket.CMSG_SPACE(16))
        if len(data) < 20 or data[0] >> 4 != 4:
            continue
        header = (data[0] & 0x0F) * 4
        if data[9] != 1 or len(data) < header + 8:
            continue
        kind = data[header]
        if kind not in (0, 8):
            continue
        seq = struct.unpack_from("!H", data, header + 6)[0]
        stamp = None
        for level, ctype, value in ancillary:
            if level == socket.SOL_SOCKET and ctype == SO_TIMESTAMPNS:
                sec, nsec = struct.unpack("qq", value[:16])
                stamp = sec * 1_000_000_000 + nsec
        if stamp is None:
            continue
        direction = "out" if address[2] == PACKET_OUTGOING else "in"
        out.write(f"{stamp} {direction} {kind} {seq}\n")
        out.flush()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
