/* Builds IPv4 packets for the examples and tests: a 20-byte header
 * (RFC 791, checksum RFC 1071) with a UDP (RFC 768) or TCP (RFC 9293)
 * header behind it. Enough for tcran to see the 5-tuple, DSCP and ECN. */
#ifndef TCRAN_EXAMPLE_PACKET_H
#define TCRAN_EXAMPLE_PACKET_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { PKT_UDP = 17, PKT_TCP = 6 };

static inline void put16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static inline uint16_t ipv4_checksum(const uint8_t *h, size_t len) {
    uint32_t sum = 0;
    for (size_t i = 0; i + 1 < len; i += 2)
        sum += (uint32_t)(h[i] << 8 | h[i + 1]);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

/* Writes a `len`-byte IPv4 packet (len >= 40) into `buf`; returns len.
 * `ecn` is the 2-bit ECN field (2 = ECT(0)). */
static inline size_t build_ipv4(uint8_t *buf, size_t len, uint8_t proto, uint32_t src,
                                uint32_t dst, uint16_t sport, uint16_t dport, uint8_t ecn) {
    memset(buf, 0, len);
    buf[0] = 0x45; /* version 4, IHL 5 */
    buf[1] = ecn & 3;
    put16(buf + 2, (uint16_t)len);
    buf[8] = 64; /* TTL */
    buf[9] = proto;
    put16(buf + 12, (uint16_t)(src >> 16));
    put16(buf + 14, (uint16_t)src);
    put16(buf + 16, (uint16_t)(dst >> 16));
    put16(buf + 18, (uint16_t)dst);
    put16(buf + 10, ipv4_checksum(buf, 20));
    uint8_t *l4 = buf + 20;
    put16(l4, sport);
    put16(l4 + 2, dport);
    if (proto == PKT_UDP) {
        put16(l4 + 4, (uint16_t)(len - 20));
    } else {
        l4[12] = 5 << 4; /* data offset: 5 words */
        l4[13] = 0x10;   /* ACK */
    }
    return len;
}

#endif
