/* ns per packet through the C ABI (`make capi-bench`, docs/performance.md).
 *
 * The workload of `make bench` (tcran_tc::workload), driven from C: one
 * element = one tcran_push of a real 1500-byte IPv4/UDP packet (copied and
 * parsed by tcran) and the pulls that follow it until the pacer says stop
 * (the packet copied out into the caller's buffer); 16 arrive per 1-ms TTI,
 * spread over it, on a link that carries 17 per TTI; the per-TTI
 * tcran_on_report is included. Pipelines:
 *   (a) one FIFO + round robin + 5G-BDP, one flow
 *   (b) flow hash into 1024 CoDel queues + DRR++ + e5G-BDP, 10,000 flows
 *   (c) (a) with strict priority: built-in, then the prio plug-in (dlopen)
 * Each figure is the median of 15 runs of 20,000 TTIs after 20,000 TTIs of
 * warm-up.
 *
 * Usage: bench PATH_TO_libprio_plugin.so [RUNS TTIS] */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tcran.h>

#include "packet.h"

#define PER_TTI 16
#define LEN 1500
#define TTI_NS 1000000ULL
static int RUNS = 15, TTIS = 20000;

static uint64_t clock_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct driver {
    tcran_t *tc;
    uint8_t (*flows)[LEN];
    int n_flows, next_flow;
    uint64_t now, tti_start, rlc_bytes, next_tag;
    uint8_t out[TCRAN_MAX_PACKET];
};

static void tti(struct driver *d) {
    const uint64_t gap = TTI_NS / PER_TTI, capacity = (PER_TTI + 1) * LEN;
    for (int i = 0; i < PER_TTI; i++) {
        tcran_push(d->tc, d->flows[d->next_flow], LEN, 0, d->next_tag++, d->now, NULL);
        d->next_flow = (d->next_flow + 1) % d->n_flows;
        tcran_packet_out m;
        while (tcran_pull(d->tc, d->now, d->out, sizeof d->out, &m) == TCRAN_OK)
            d->rlc_bytes += m.len;
        d->now += gap;
    }
    uint64_t pulled = d->rlc_bytes < capacity ? d->rlc_bytes : capacity;
    d->rlc_bytes -= pulled;
    d->tti_start += TTI_NS;
    d->now = d->tti_start;
    tcran_rlc_report r = {.tti_ns = TTI_NS,
                          .backlog_bytes = d->rlc_bytes,
                          .backlog_sdus = (uint32_t)(d->rlc_bytes / LEN),
                          .pulled_bytes = pulled,
                          .granted_bytes = capacity,
                          .max_bytes = capacity};
    tcran_on_report(d->tc, &r, d->now);
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median ns per packet of `config` with `n_flows` flows. */
static double measure(const char *name, const char *config, int n_flows) {
    struct driver d = {.n_flows = n_flows};
    d.flows = malloc((size_t)n_flows * LEN);
    for (int i = 0; i < n_flows; i++)
        build_ipv4(d.flows[i], LEN, PKT_UDP, 0x0a000000u | (uint32_t)i, 0x0a2d0002,
                   (uint16_t)(1024 + i % 60000), 5001, 0);
    if (tcran_new(config, strlen(config), TCRAN_FORMAT_TOML, 1, 1, NULL, &d.tc) != TCRAN_OK) {
        fprintf(stderr, "%s: %s\n", name, tcran_last_error());
        exit(1);
    }
    for (int i = 0; i < TTIS; i++)
        tti(&d);
    double ns[64];
    for (int r = 0; r < RUNS; r++) {
        uint64_t t0 = clock_ns();
        for (int i = 0; i < TTIS; i++)
            tti(&d);
        ns[r] = (double)(clock_ns() - t0) / ((double)TTIS * PER_TTI);
    }
    qsort(ns, RUNS, sizeof ns[0], cmp);
    tcran_totals t;
    tcran_get_totals(d.tc, &t);
    printf("%-48s %7.1f ns/packet  (min %.1f, max %.1f; forwarded %.1f %%)\n", name, ns[RUNS / 2],
           ns[0], ns[RUNS - 1], 100.0 * (double)t.out_packets / (double)t.in_packets);
    tcran_free(d.tc);
    free(d.flows);
    return ns[RUNS / 2];
}

int main(int argc, char **argv) {
    if (argc != 2 && argc != 4) {
        fprintf(stderr, "usage: %s PATH_TO_libprio_plugin.so [RUNS TTIS]\n", argv[0]);
        return 2;
    }
    if (argc == 4) {
        RUNS = atoi(argv[2]);
        TTIS = atoi(argv[3]);
        if (RUNS < 1 || RUNS > 64 || TTIS < 1) {
            fprintf(stderr, "RUNS must be 1..64, TTIS at least 1\n");
            return 2;
        }
    }
    static const char a[] = "scheduler = { kind = \"round_robin\" }\npacer = { kind = \"bdp\" }\n"
                            "[[queues]]\nid = 0\nkind = \"fifo\"\n";
    static const char b[] =
        "classifier = { kind = \"flow_hash\", first_queue = 0, buckets = 1024 }\n"
        "scheduler = { kind = \"drr\", quantum = \"1500B\" }\npacer = { kind = \"e5g_bdp\" }\n"
        "limit_packets = 10240\n"
        "[[queues]]\nid = 0\ncount = 1024\nkind = \"codel\"\ntarget = \"5ms\"\ninterval = \"100ms\"\n";
    static const char c_builtin[] = "scheduler = { kind = \"priority\" }\npacer = { kind = \"bdp\" }\n"
                                    "[[queues]]\nid = 0\nkind = \"fifo\"\n";
    char c_plugin[1024];
    snprintf(c_plugin, sizeof c_plugin,
             "scheduler = { kind = \"plugin\", path = \"%s\", symbol = \"tcran_prio_scheduler\" }\n"
             "pacer = { kind = \"bdp\" }\n[[queues]]\nid = 0\nkind = \"fifo\"\n",
             argv[1]);
    printf("tcran %s C ABI, median of %d runs of %d TTIs x %d packets\n", tcran_version(), RUNS,
           TTIS, PER_TTI);
    measure("(a) fifo + round robin + 5G-BDP", a, 1);
    measure("(b) 1024 CoDel + DRR++ + e5G-BDP, 10k flows", b, 10000);
    double builtin = measure("(c) fifo + priority (built-in) + 5G-BDP", c_builtin, 1);
    double plugin = measure("(c) fifo + priority (C plug-in) + 5G-BDP", c_plugin, 1);
    printf("plug-in scheduler: %+.1f ns per packet against the built-in\n", plugin - builtin);
    return 0;
}
