/* A gNB downlink loop shaped like TC-RAN's hook in OpenAirInterface
 * (paper sec. IV-C), driving tcran through its C API in real time:
 *
 *   SDAP ingress callback --tcran_push--> [ tcran: one instance per (RNTI, DRB) ]
 *   200-us timerfd egress tick --tcran_pull_each--> "pdcp_data_req" --> toy RLC
 *   every 1 ms: the MAC pulls a fixed grant from the toy RLC, and the RLC
 *   status (bytes left, bytes pulled, grant) goes back with tcran_on_report.
 *
 * Traffic: a bulk TCP-like flow (AIMD: slow start, +1 packet per RTT, half
 * on a loss, losses told by tcran's drop callback or the full RLC buffer;
 * ACKs return 10 ms after delivery) and a VoIP flow (200 B every 20 ms),
 * on one bearer of 24 Mbit/s. Three pipelines, each for a few seconds:
 *
 *   vanilla          one FIFO, no pacing: the 1.5 MB RLC buffer fills (3GPP as is)
 *   codel+5g-bdp     CoDel queue + 5G-BDP pacer (thesis Alg. 2)
 *   prio-plugin      VoIP first by a C plug-in scheduler loaded with dlopen
 *                    (libprio_plugin.so), bulk in CoDel, 5G-BDP pacer
 *   vanilla->codel   vanilla, then codel+5g-bdp deployed live (tcran_deploy,
 *                    as an xApp would) when the measurement starts: the
 *                    packets queued in tcran carry over, in order
 *
 * Usage: gnb_loop [PLUGIN_PATH [SECONDS_PER_VARIANT]]
 * Exits 1 if the VoIP delay does not improve as it must (p95 at least 5x
 * lower with CoDel + 5G-BDP than vanilla), so it doubles as a test. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <tcran.h>

#include "packet.h"

#define MS 1000000ULL
#define GRANT_BYTES 3000u            /* per 1-ms TTI: 24 Mbit/s */
#define RLC_LIMIT_BYTES 1500000u     /* the RLC buffer vanilla fills */
#define RLC_CAP 65536u               /* SDUs the toy RLC can index */
#define ACK_DELAY (10 * MS)          /* delivery -> ACK at the sender */
#define VOIP_PERIOD (20 * MS)
#define VOIP_BYTES 200u
#define BULK_BYTES 1500u
#define MAX_SAMPLES 100000

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A tag carries the flow (top bit: 1 = VoIP) and the send time. */
static uint64_t tag_of(int voip, uint64_t sent) { return ((uint64_t)voip << 63) | sent; }
static int tag_voip(uint64_t tag) { return (int)(tag >> 63); }
static uint64_t tag_sent(uint64_t tag) { return tag & ~(1ULL << 63); }

/* ------------------------------------------------------------- toy RLC */

struct sdu {
    uint64_t tag;
    uint64_t rlc_in;
    uint32_t len;
};

struct rlc {
    struct sdu q[RLC_CAP];
    unsigned head, count;
    uint32_t head_sent; /* bytes of the head SDU already given to the MAC */
    uint64_t bytes;
};

/* ------------------------------------------------------------- traffic */

struct sender {
    double cwnd, ssthresh;
    unsigned inflight;
    uint64_t last_cut;
    uint64_t acks[RLC_CAP]; /* ACK arrival times, FIFO */
    unsigned ack_head, ack_count;
    uint64_t next_voip;
};

struct run {
    tcran_t *tc;
    struct rlc rlc;
    struct sender tx;
    uint64_t now;
    uint64_t measure_from; /* results exclude the first 0.5 s (slow start) */
    /* results */
    double voip_ms[MAX_SAMPLES];
    unsigned voip_n;
    uint64_t bulk_delivered, rlc_backlog_sum, ttis, rlc_drops;
};

static void on_loss(struct run *r) {
    struct sender *s = &r->tx;
    if (s->inflight > 0)
        s->inflight--;
    if (r->now - s->last_cut > 100 * MS) { /* at most one cut per RTT-ish */
        s->ssthresh = s->cwnd / 2 > 2 ? s->cwnd / 2 : 2;
        s->cwnd = s->ssthresh;
        s->last_cut = r->now;
    }
}

/* tcran's drop callback: a packet the pipeline dropped (CoDel, limits). */
static void on_drop(void *ctx, uint64_t tag, uint32_t len, tcran_drop_reason reason) {
    (void)len;
    (void)reason;
    if (!tag_voip(tag))
        on_loss(ctx);
}

/* OAI's pdcp_data_req, as far as this loop cares: the SDU enters RLC. */
static int pdcp_data_req(void *ctx, const uint8_t *data, size_t len, const tcran_packet_out *meta) {
    (void)data;
    struct run *r = ctx;
    if (r->rlc.bytes + len > RLC_LIMIT_BYTES || r->rlc.count == RLC_CAP) {
        r->rlc_drops++;
        if (!tag_voip(meta->tag))
            on_loss(r);
        return 0;
    }
    struct sdu *s = &r->rlc.q[(r->rlc.head + r->rlc.count++) % RLC_CAP];
    s->tag = meta->tag;
    s->len = (uint32_t)len;
    s->rlc_in = r->now;
    r->rlc.bytes += len;
    return 0;
}

/* The SDAP ingress callback: (RNTI, DRB, packet) into tcran. */
static int sdap_ingress(struct run *r, const uint8_t *pkt, size_t len, uint64_t tag) {
    tcran_push_result res;
    tcran_status s = tcran_push(r->tc, pkt, len, 0, tag, r->now, &res);
    if (s != TCRAN_OK) {
        fprintf(stderr, "tcran_push: %s\n", tcran_last_error());
        return -1;
    }
    return 0;
}

static int traffic(struct run *r) {
    struct sender *s = &r->tx;
    uint8_t pkt[BULK_BYTES];
    while (s->ack_count > 0 && s->acks[s->ack_head] <= r->now) {
        s->ack_head = (s->ack_head + 1) % RLC_CAP;
        s->ack_count--;
        if (s->inflight > 0)
            s->inflight--;
        s->cwnd += s->cwnd < s->ssthresh ? 1.0 : 1.0 / s->cwnd;
    }
    while (s->inflight < (unsigned)s->cwnd && s->inflight < RLC_CAP) {
        build_ipv4(pkt, BULK_BYTES, PKT_TCP, 0x0a000001, 0x0a2d0002, 443, 40000, 0);
        if (sdap_ingress(r, pkt, BULK_BYTES, tag_of(0, r->now)) != 0)
            return -1;
        s->inflight++;
    }
    if (r->now >= s->next_voip) {
        build_ipv4(pkt, VOIP_BYTES, PKT_UDP, 0x0a000002, 0x0a2d0002, 4000, 5060, 0);
        if (sdap_ingress(r, pkt, VOIP_BYTES, tag_of(1, r->now)) != 0)
            return -1;
        s->next_voip += VOIP_PERIOD;
    }
    return 0;
}

/* One TTI: the MAC pulls a fixed grant, segmenting the head SDU; whole
 * SDUs are delivered; then the RLC status goes back to tcran. */
static int mac_tti(struct run *r) {
    uint32_t budget = GRANT_BYTES;
    uint64_t pulled = 0;
    while (budget > 0 && r->rlc.count > 0) {
        struct sdu *s = &r->rlc.q[r->rlc.head];
        uint32_t take = s->len - r->rlc.head_sent;
        if (take > budget)
            take = budget;
        budget -= take;
        pulled += take;
        r->rlc.head_sent += take;
        r->rlc.bytes -= take;
        if (r->rlc.head_sent < s->len)
            break;
        /* Delivered. */
        tcran_on_sdu_departed(r->tc, r->now - s->rlc_in, r->now);
        if (tag_sent(s->tag) < r->measure_from) {
            /* warm-up: not measured */
        } else if (tag_voip(s->tag)) {
            if (r->voip_n < MAX_SAMPLES)
                r->voip_ms[r->voip_n++] = (double)(r->now - tag_sent(s->tag)) / MS;
        } else {
            r->bulk_delivered += s->len;
        }
        if (!tag_voip(s->tag)) {
            struct sender *tx = &r->tx;
            /* Still in flight until its ACK reaches the sender. */
            tx->acks[(tx->ack_head + tx->ack_count++) % RLC_CAP] = r->now + ACK_DELAY;
        }
        r->rlc.head = (r->rlc.head + 1) % RLC_CAP;
        r->rlc.count--;
        r->rlc.head_sent = 0;
    }
    tcran_rlc_report rep = {
        .tti_ns = MS,
        .backlog_bytes = r->rlc.bytes,
        .backlog_sdus = r->rlc.count,
        .pulled_bytes = pulled,
        .granted_bytes = GRANT_BYTES,
        .max_bytes = GRANT_BYTES,
    };
    r->rlc_backlog_sum += r->rlc.bytes;
    r->ttis++;
    if (tcran_on_report(r->tc, &rep, r->now) != TCRAN_OK) {
        fprintf(stderr, "tcran_on_report: %s\n", tcran_last_error());
        return -1;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct result {
    double voip_mean, voip_p95, goodput_mbps, rlc_kb;
    uint64_t tc_drops, rlc_drops;
};

/* Runs one pipeline for `seconds` of wall-clock time; `deploy` (if not
 * NULL) replaces it live when the measurement starts. */
static int run_variant(const char *name, const char *config, const char *deploy,
                       double seconds, struct result *out) {
    struct run *r = calloc(1, sizeof *r);
    if (r == NULL)
        return -1;
    int rc = -1, tfd = -1, ep = -1;
    if (tcran_new(config, strlen(config), TCRAN_FORMAT_TOML, 0x4601, 1, NULL, &r->tc) != TCRAN_OK) {
        fprintf(stderr, "%s: %s\n", name, tcran_last_error());
        goto out;
    }
    tcran_set_drop_callback(r->tc, on_drop, r);
    r->tx.cwnd = 10;
    r->tx.ssthresh = 1e9;

    /* The egress timer: 200 us, as in OAI's tc-ran branch. */
    tfd = timerfd_create(CLOCK_MONOTONIC, 0);
    ep = epoll_create1(0);
    struct itimerspec its = {.it_interval = {0, 200000}, .it_value = {0, 200000}};
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = tfd};
    if (tfd < 0 || ep < 0 || timerfd_settime(tfd, 0, &its, NULL) != 0 ||
        epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev) != 0) {
        perror("timerfd/epoll");
        goto out;
    }
    uint64_t start = now_ns(), end = start + (uint64_t)(seconds * 1e9);
    uint64_t next_tti = start + MS;
    r->measure_from = start + 500 * MS;
    r->tx.next_voip = start;
    while ((r->now = now_ns()) < end) {
        struct epoll_event got;
        if (epoll_wait(ep, &got, 1, 10) < 0)
            continue;
        uint64_t expirations;
        if (read(tfd, &expirations, sizeof expirations) < 0)
            continue;
        r->now = now_ns();
        if (deploy != NULL && r->now >= r->measure_from) {
            /* All or nothing, and no queued packet lost or reordered. */
            if (tcran_deploy(r->tc, deploy, strlen(deploy), TCRAN_FORMAT_TOML, r->now) != TCRAN_OK) {
                fprintf(stderr, "tcran_deploy: %s\n", tcran_last_error());
                goto out;
            }
            deploy = NULL;
        }
        if (traffic(r) != 0)
            goto out;
        /* Egress tick: everything the pipeline lets go goes to PDCP. */
        size_t sent;
        if (tcran_pull_each(r->tc, r->now, 0, pdcp_data_req, r, &sent) < 0) {
            fprintf(stderr, "tcran_pull_each: %s\n", tcran_last_error());
            goto out;
        }
        while (next_tti <= r->now) {
            if (mac_tti(r) != 0)
                goto out;
            next_tti += MS;
        }
    }
    tcran_totals t;
    tcran_get_totals(r->tc, &t);
    qsort(r->voip_ms, r->voip_n, sizeof r->voip_ms[0], cmp_double);
    double sum = 0;
    for (unsigned i = 0; i < r->voip_n; i++)
        sum += r->voip_ms[i];
    out->voip_mean = r->voip_n ? sum / r->voip_n : 0;
    out->voip_p95 = r->voip_n ? r->voip_ms[(unsigned)(0.95 * (r->voip_n - 1))] : 0;
    out->goodput_mbps = (double)r->bulk_delivered * 8 / (seconds - 0.5) / 1e6;
    out->rlc_kb = r->ttis ? (double)r->rlc_backlog_sum / r->ttis / 1e3 : 0;
    out->tc_drops = t.dropped_packets;
    out->rlc_drops = r->rlc_drops;
    printf("%-14s %10.1f %9.1f %12.1f %12.1f %9llu %9llu\n", name, out->voip_mean, out->voip_p95,
           out->goodput_mbps, out->rlc_kb, (unsigned long long)out->tc_drops,
           (unsigned long long)out->rlc_drops);
    rc = 0;
out:
    if (tfd >= 0)
        close(tfd);
    if (ep >= 0)
        close(ep);
    tcran_free(r->tc);
    free(r);
    return rc;
}

int main(int argc, char **argv) {
    const char *plugin = argc > 1 ? argv[1] : "./libprio_plugin.so";
    double seconds = argc > 2 ? atof(argv[2]) : 3.0;
    if (!(seconds >= 1)) {
        fprintf(stderr, "usage: %s [PLUGIN_PATH [SECONDS_PER_VARIANT]]\n", argv[0]);
        return 2;
    }
    static const char vanilla[] = "[[queues]]\nid = 0\nkind = \"fifo\"\n";
    static const char codel_bdp[] = "pacer = { kind = \"bdp\" }\n"
                                    "[[queues]]\nid = 0\nkind = \"codel\"\n";
    char prio[1024];
    snprintf(prio, sizeof prio,
             "classifier = { kind = \"filter\", rules = [ { priority = 1, protocol = \"udp\", queue = 0 } ] }\n"
             "default_queue = 1\n"
             "scheduler = { kind = \"plugin\", path = \"%s\", symbol = \"tcran_prio_scheduler\" }\n"
             "pacer = { kind = \"bdp\" }\n"
             "[[queues]]\nid = 0\nkind = \"fifo\"\npriority = 0\n"
             "[[queues]]\nid = 1\nkind = \"codel\"\npriority = 1\n",
             plugin);

    printf("tcran %s: %.1f s per pipeline (the first 0.5 s not measured), 24 Mbit/s bearer,\n"
           "bulk AIMD flow + VoIP\n",
           tcran_version(), seconds);
    printf("%-14s %10s %9s %12s %12s %9s %9s\n", "pipeline", "voip mean", "voip p95",
           "bulk Mbit/s", "RLC kB mean", "tc drops", "rlc drops");
    printf("%-14s %10s %9s\n", "", "(ms)", "(ms)");
    struct result v, c, p, d;
    if (run_variant("vanilla", vanilla, NULL, seconds, &v) != 0 ||
        run_variant("codel+5g-bdp", codel_bdp, NULL, seconds, &c) != 0 ||
        run_variant("prio-plugin", prio, NULL, seconds, &p) != 0 ||
        run_variant("vanilla->codel", vanilla, codel_bdp, seconds, &d) != 0)
        return 1;
    /* vanilla->codel is not checked: what vanilla left in the RLC buffer
     * still has to drain when its measurement starts. */
    if (!(c.voip_p95 * 5 < v.voip_p95) || !(p.voip_p95 * 5 < v.voip_p95)) {
        fprintf(stderr, "FAIL: VoIP p95 did not drop 5x below vanilla's\n");
        return 1;
    }
    printf("VoIP p95: vanilla %.0f ms, codel+5g-bdp %.1f ms, prio-plugin %.1f ms, "
           "vanilla->codel %.1f ms\n",
           v.voip_p95, c.voip_p95, p.voip_p95, d.voip_p95);
    return 0;
}
