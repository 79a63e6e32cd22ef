/* The C API as a C program sees it, run under ASan + UBSan by
 * `make capi-test`: every entry point given NULL, zero lengths, truncated
 * and garbage packets, bad configs and controls, changes all or nothing,
 * whole-pipeline deploys, too-small buffers,
 * reentrant calls, and plug-ins registered from C or loaded with dlopen,
 * well- and ill-behaved. Prints "N passed, M failed".
 *
 * Usage: api_test DIR   (DIR holds libprio_plugin.so and libbad_plugin.so) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tcran.h>

#include "packet.h"

static int passed, failed;

#define CHECK(cond)                                                                               \
    do {                                                                                          \
        if (cond) {                                                                               \
            passed++;                                                                             \
        } else {                                                                                  \
            failed++;                                                                             \
            fprintf(stderr, "%s:%d: FAILED: %s (last error: %s)\n", __FILE__, __LINE__, #cond,   \
                    tcran_last_error());                                                          \
        }                                                                                         \
    } while (0)

/* The last error contains `text`. */
static int says(const char *text) { return strstr(tcran_last_error(), text) != NULL; }

static const char FIFO[] = "[[queues]]\nid = 0\nkind = \"fifo\"\n";

static tcran_t *make(const char *config, const tcran_plugins_t *plugins) {
    tcran_t *tc = NULL;
    tcran_status s = tcran_new(config, strlen(config), TCRAN_FORMAT_AUTO, 0x4601, 1, plugins, &tc);
    if (s != TCRAN_OK)
        fprintf(stderr, "tcran_new: %s: %s\n", tcran_status_str(s), tcran_last_error());
    return tc;
}

static int conserved(tcran_t *tc) {
    tcran_totals t;
    if (tcran_get_totals(tc, &t) != TCRAN_OK)
        return 0;
    return t.in_packets == t.out_packets + t.dropped_packets + t.queued_packets;
}

static void null_arguments(void) {
    uint8_t pkt[64], buf[64];
    build_ipv4(pkt, sizeof pkt, PKT_UDP, 1, 2, 3, 4, 0);
    tcran_t *tc = NULL;
    tcran_packet_out out;
    tcran_totals totals;
    tcran_rlc_report rep = {.tti_ns = 1000000};
    uint64_t at;
    size_t n;

    CHECK(tcran_new(NULL, 10, 0, 1, 1, NULL, &tc) == TCRAN_ERR_NULL);
    CHECK(tc == NULL);
    tc = make(FIFO, NULL);
    CHECK(tcran_new(FIFO, strlen(FIFO), 0, 1, 1, NULL, NULL) == TCRAN_ERR_NULL);
    CHECK(tcran_push(NULL, pkt, sizeof pkt, 0, 0, 0, NULL) == TCRAN_ERR_NULL && says("tc is NULL"));
    CHECK(tcran_push(tc, NULL, sizeof pkt, 0, 0, 0, NULL) == TCRAN_ERR_NULL && says("data"));
    CHECK(tcran_pull(NULL, 0, buf, sizeof buf, &out) == TCRAN_ERR_NULL);
    CHECK(tcran_pull(tc, 0, NULL, 10, &out) == TCRAN_ERR_NULL && says("buf"));
    CHECK(tcran_pull(tc, 0, buf, sizeof buf, NULL) == TCRAN_ERR_NULL && says("out"));
    CHECK(tcran_pull(tc, 0, NULL, 0, &out) == TCRAN_EMPTY);
    CHECK(tcran_pull_each(NULL, 0, 0, NULL, NULL, NULL) == TCRAN_ERR_NULL);
    CHECK(tcran_pull_each(tc, 0, 0, NULL, NULL, &n) == TCRAN_ERR_NULL && n == 0);
    CHECK(tcran_next_wakeup(NULL, 0, &at) == TCRAN_ERR_NULL);
    CHECK(tcran_next_wakeup(tc, 0, NULL) == TCRAN_ERR_NULL);
    CHECK(tcran_on_report(NULL, &rep, 0) == TCRAN_ERR_NULL);
    CHECK(tcran_on_report(tc, NULL, 0) == TCRAN_ERR_NULL && says("report"));
    CHECK(tcran_on_sdu_departed(NULL, 0, 0) == TCRAN_ERR_NULL);
    CHECK(tcran_on_status_pdu(NULL, 0) == TCRAN_ERR_NULL);
    CHECK(tcran_control(NULL, "x", 1, 0, 0) == TCRAN_ERR_NULL);
    CHECK(tcran_control(tc, NULL, 1, 0, 0) == TCRAN_ERR_NULL);
    CHECK(tcran_get_totals(NULL, &totals) == TCRAN_ERR_NULL);
    CHECK(tcran_get_totals(tc, NULL) == TCRAN_ERR_NULL);
    CHECK(tcran_stats_json(NULL, 0, NULL, 0, NULL) == TCRAN_ERR_NULL);
    CHECK(tcran_stats_json(tc, 0, NULL, 5, NULL) == TCRAN_ERR_NULL);
    CHECK(tcran_set_drop_callback(NULL, NULL, NULL) == TCRAN_ERR_NULL);
    CHECK(tcran_set_drop_callback(tc, NULL, NULL) == TCRAN_OK);
    CHECK(tcran_plugins_new(NULL) == TCRAN_ERR_NULL);
    CHECK(tcran_plugins_register(NULL, "x", NULL) == TCRAN_ERR_NULL);
    tcran_plugins_t *p;
    CHECK(tcran_plugins_new(&p) == TCRAN_OK);
    CHECK(tcran_plugins_register(p, NULL, NULL) == TCRAN_ERR_NULL);
    CHECK(tcran_plugins_register(p, "x", NULL) == TCRAN_ERR_NULL && says("ops"));
    tcran_plugins_free(p);
    tcran_plugins_free(NULL);
    tcran_free(NULL);
    CHECK(strcmp(tcran_status_str(-4), "TCRAN_ERR_CONFIG") == 0);
    CHECK(strcmp(tcran_status_str(12345), "unknown") == 0);
    CHECK(strcmp(tcran_drop_reason_str(TCRAN_DROP_CODEL), "codel") == 0);
    CHECK(strcmp(tcran_drop_reason_str(0), "none") == 0);
    CHECK(strcmp(tcran_drop_reason_str(99999), "unknown") == 0);
    tcran_free(tc);
}

static void bad_lengths_and_packets(void) {
    tcran_t *tc = make(FIFO, NULL);
    uint8_t pkt[TCRAN_MAX_PACKET + 1];
    build_ipv4(pkt, 100, PKT_UDP, 1, 2, 3, 4, 0);
    tcran_push_result r;
    CHECK(tcran_push(tc, pkt, 0, 0, 0, 0, &r) == TCRAN_ERR_INVALID && says("len = 0"));
    CHECK(tcran_push(tc, pkt, TCRAN_MAX_PACKET + 1, 0, 0, 0, &r) == TCRAN_ERR_INVALID);
    CHECK(tcran_push(tc, pkt, 100, 0x80, 0, 0, &r) == TCRAN_ERR_INVALID && says("flags"));
    /* Truncated: the IP header says 100 bytes, 30 are there. */
    CHECK(tcran_push(tc, pkt, 30, 0, 1, 0, &r) == TCRAN_OK && r.malformed == 1 &&
          r.verdict == TCRAN_ACCEPTED);
    /* Only the SDAP header. */
    CHECK(tcran_push(tc, pkt, 1, TCRAN_PUSH_SDAP, 2, 0, &r) == TCRAN_OK && r.malformed == 1);
    /* Random bytes of random lengths, with and without the SDAP flag. */
    srand(7);
    int ok = 1;
    for (int i = 0; i < 3000; i++) {
        size_t len = 1 + (size_t)rand() % 300;
        for (size_t k = 0; k < len; k++)
            pkt[k] = (uint8_t)rand();
        if (i % 3 == 0)
            pkt[(i % 2) ? 1 : 0] = 0x45; /* often an IPv4 start */
        ok &= tcran_push(tc, pkt, len, (uint32_t)(i & 1), (uint64_t)i, (uint64_t)i, &r) == TCRAN_OK;
        if (i % 7 == 0) {
            size_t n;
            uint8_t buf[TCRAN_MAX_PACKET];
            tcran_packet_out out;
            ok &= tcran_pull(tc, (uint64_t)i, buf, sizeof buf, &out) >= 0;
            ok &= tcran_pull_each(tc, (uint64_t)i, 2, NULL, NULL, &n) == TCRAN_ERR_NULL;
        }
    }
    CHECK(ok);
    CHECK(conserved(tc));
    /* Bad reports. */
    tcran_rlc_report rep = {.tti_ns = 0};
    CHECK(tcran_on_report(tc, &rep, 0) == TCRAN_ERR_INVALID && says("tti_ns"));
    rep.tti_ns = 2000000000ULL;
    CHECK(tcran_on_report(tc, &rep, 0) == TCRAN_ERR_INVALID);
    tcran_free(tc);
}

static void bad_configs_and_controls(void) {
    tcran_t *tc = NULL;
    const char *bad[] = {
        "",                                                      /* no queues */
        "queues = [",                                            /* syntax */
        "[[queues]]\nid = 0\nkind = \"codl\"\n",                 /* unknown kind */
        "[[queues]]\nid = 0\nkind = \"codel\"\ntarget = \"0ms\"\n", /* out of range */
        "{\"queues\": [{\"id\": 0, \"kind\": \"fifo\"}], \"pacer\": {\"kind\": \"bdp\", \"offset\": -3}}",
        "\xff\xfe garbage",
    };
    const tcran_status want[] = {TCRAN_ERR_PARSE, TCRAN_ERR_PARSE, TCRAN_ERR_PARSE,
                                 TCRAN_ERR_CONFIG, TCRAN_ERR_CONFIG, TCRAN_ERR_PARSE};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tcran_status s = tcran_new(bad[i], strlen(bad[i]), TCRAN_FORMAT_AUTO, 1, 1, NULL, &tc);
        CHECK(s == want[i] && tc == NULL && strchr(tcran_last_error(), '\n') == NULL);
    }
    CHECK(tcran_new(FIFO, strlen(FIFO), 9, 1, 1, NULL, &tc) == TCRAN_ERR_INVALID && says("format"));
    CHECK(tcran_new(FIFO, strlen(FIFO), 0, 0xFFFF, 1, NULL, &tc) == TCRAN_ERR_INVALID && says("rnti"));
    CHECK(tcran_new(FIFO, strlen(FIFO), 0, 1, 0, NULL, &tc) == TCRAN_ERR_INVALID && says("drb"));
    CHECK(tcran_new(FIFO, strlen(FIFO), TCRAN_FORMAT_JSON, 1, 1, NULL, &tc) == TCRAN_ERR_PARSE);

    tc = make(FIFO, NULL);
    const char *c1 = "op = \"delete_queue\"\nid = 5\n";
    CHECK(tcran_control(tc, c1, strlen(c1), 0, 0) == TCRAN_ERR_CONFIG && says("no such queue"));
    const char *c2 = "{\"op\": \"explode\"}";
    CHECK(tcran_control(tc, c2, strlen(c2), 0, 0) == TCRAN_ERR_PARSE && says("explode"));
    CHECK(tcran_control(tc, c2, 0, 0, 0) == TCRAN_ERR_PARSE);
    const char *c3 = "op = \"add_queue\"\nqueue = { id = 1, kind = \"pie\" }\n";
    CHECK(tcran_control(tc, c3, strlen(c3), TCRAN_FORMAT_TOML, 0) == TCRAN_OK);
    tcran_free(tc);
}

/* Several controls all or none, and a whole pipeline deployed without
 * losing or reordering a queued packet. */
static void changes_all_or_nothing(void) {
    tcran_t *tc = make(FIFO, NULL);
    uint8_t pkt[200], buf[TCRAN_MAX_PACKET];
    tcran_push_result r;
    tcran_packet_out out;
    for (uint64_t tag = 0; tag < 5; tag++) {
        build_ipv4(pkt, 100, PKT_UDP, 1, 2, 3, 4, 0);
        CHECK(tcran_push(tc, pkt, 100, 0, tag, 0, &r) == TCRAN_OK && r.verdict == TCRAN_ACCEPTED);
    }
    /* The third control fails: the first two are not kept. */
    const char *bad = "{\"controls\": [{\"op\": \"add_queue\", \"queue\": {\"id\": 1, \"kind\": \"fifo\"}},"
                      " {\"op\": \"set_default_queue\", \"id\": 1},"
                      " {\"op\": \"set_total_limit\", \"limit_packets\": 0}]}";
    CHECK(tcran_controls(tc, bad, strlen(bad), 0, 1) == TCRAN_ERR_CONFIG &&
          says("controls: control 3 of 3: limit_packets = 0"));
    const char *two = "[[controls]]\nop = \"add_queue\"\nqueue = { id = 1, kind = \"fifo\" }\n"
                      "[[controls]]\nop = \"set_default_queue\"\nid = 1\n";
    CHECK(tcran_controls(tc, two, strlen(two), TCRAN_FORMAT_TOML, 1) == TCRAN_OK);
    const char *none = "{\"controls\": 3}";
    CHECK(tcran_controls(tc, none, strlen(none), 0, 1) == TCRAN_ERR_PARSE);
    CHECK(tcran_controls(tc, NULL, 1, 0, 1) == TCRAN_ERR_NULL);
    /* Queue 0 is gone in the target: its packets move, in order, to 7. */
    const char *target = "[[queues]]\nid = 7\nkind = \"codel\"\n";
    CHECK(tcran_deploy(tc, target, strlen(target), 0, 2) == TCRAN_OK);
    const char *invalid = "[[queues]]\nid = 0\nkind = \"fifo\"\nweight = 0\n";
    CHECK(tcran_deploy(tc, invalid, strlen(invalid), 0, 2) == TCRAN_ERR_CONFIG &&
          says("config: queues[0].weight = 0"));
    CHECK(tcran_deploy(NULL, target, strlen(target), 0, 2) == TCRAN_ERR_NULL);
    int in_order = 1;
    for (uint64_t tag = 0; tag < 5; tag++)
        in_order &= tcran_pull(tc, 3, buf, sizeof buf, &out) == TCRAN_OK && out.tag == tag;
    CHECK(in_order);
    CHECK(tcran_pull(tc, 3, buf, sizeof buf, &out) == TCRAN_EMPTY);
    CHECK(conserved(tc));
    tcran_free(tc);
}

/* The egress callback tries to push into its own instance. */
struct reentry {
    tcran_t *tc;
    tcran_status status;
};
static int reentrant_egress(void *ctx, const uint8_t *data, size_t len, const tcran_packet_out *m) {
    (void)m;
    struct reentry *r = ctx;
    r->status = tcran_push(r->tc, data, len, 0, 0, 0, NULL);
    return 0;
}

static void buffers_and_callbacks(void) {
    tcran_t *tc = make(FIFO, NULL);
    uint8_t pkt[1000], small[100], big[TCRAN_MAX_PACKET];
    build_ipv4(pkt, sizeof pkt, PKT_UDP, 1, 2, 3, 4, 2);
    CHECK(tcran_push(tc, pkt, sizeof pkt, 0, 42, 1000, NULL) == TCRAN_OK);
    tcran_packet_out out;
    CHECK(tcran_pull(tc, 2000, small, sizeof small, &out) == TCRAN_ERR_BUFFER_TOO_SMALL &&
          out.len == sizeof pkt);
    CHECK(tcran_pull(tc, 3000, big, sizeof big, &out) == TCRAN_OK && out.tag == 42 &&
          out.len == sizeof pkt && memcmp(big, pkt, sizeof pkt) == 0 && out.sojourn_ns == 2000);
    CHECK(tcran_pull(tc, 3000, big, sizeof big, &out) == TCRAN_EMPTY);

    size_t need = 0;
    CHECK(tcran_stats_json(tc, 0, NULL, 0, &need) == TCRAN_ERR_BUFFER_TOO_SMALL && need > 10);
    char *json = malloc(need);
    CHECK(json && tcran_stats_json(tc, 0, json, need, &need) == TCRAN_OK &&
          strlen(json) == need - 1 && strstr(json, "\"rnti\":17921") != NULL);
    free(json);

    struct reentry ctx = {tc, TCRAN_OK};
    CHECK(tcran_push(tc, pkt, sizeof pkt, 0, 1, 4000, NULL) == TCRAN_OK);
    size_t n = 0;
    CHECK(tcran_pull_each(tc, 4000, 0, reentrant_egress, &ctx, &n) == TCRAN_OK && n == 1);
    CHECK(ctx.status == TCRAN_ERR_REENTRANT);
    CHECK(conserved(tc));
    tcran_free(tc);
}

/* A classifier registered from C: UDP to queue 1, the rest to the default. */
static int32_t udp_to_1(void *state, const tcran_packet_info *p) {
    (void)state;
    return p->ip_version == 4 && p->protocol == 17 ? 1 : TCRAN_NO_QUEUE;
}
static const tcran_classifier_ops udp_classifier = {
    .header = {.abi_version = TCRAN_PLUGIN_ABI_VERSION, .stage = TCRAN_STAGE_CLASSIFIER,
               .name = "udp"},
    .classify = udp_to_1,
};

static void plugins(const char *dir) {
    char config[4096], path[256];
    tcran_plugins_t *reg;
    CHECK(tcran_plugins_new(&reg) == TCRAN_OK);
    CHECK(tcran_plugins_register(reg, "udp", &udp_classifier.header) == TCRAN_OK);
    CHECK(tcran_plugins_register(reg, "", &udp_classifier.header) == TCRAN_ERR_CONFIG);

    /* A registered classifier and the prio scheduler loaded by path:
     * UDP (queue 1, priority 0) overtakes TCP (queue 0, priority 1). */
    snprintf(path, sizeof path, "%s/libprio_plugin.so", dir);
    snprintf(config, sizeof config,
             "classifier = { kind = \"plugin\", symbol = \"udp\" }\n"
             "scheduler = { kind = \"plugin\", path = \"%s\", symbol = \"tcran_prio_scheduler\" }\n"
             "[[queues]]\nid = 0\nkind = \"fifo\"\npriority = 1\n"
             "[[queues]]\nid = 1\nkind = \"fifo\"\npriority = 0\n",
             path);
    tcran_t *tc = make(config, reg);
    tcran_plugins_free(reg); /* the instance keeps what it uses */
    CHECK(tc != NULL);
    uint8_t pkt[200], buf[TCRAN_MAX_PACKET];
    tcran_push_result r;
    build_ipv4(pkt, sizeof pkt, PKT_TCP, 1, 2, 3, 4, 0);
    CHECK(tcran_push(tc, pkt, sizeof pkt, 0, 1, 0, &r) == TCRAN_OK && r.queue == 0);
    build_ipv4(pkt, sizeof pkt, PKT_UDP, 1, 2, 3, 4, 0);
    CHECK(tcran_push(tc, pkt, sizeof pkt, 0, 2, 0, &r) == TCRAN_OK && r.queue == 1);
    tcran_packet_out out;
    CHECK(tcran_pull(tc, 0, buf, sizeof buf, &out) == TCRAN_OK && out.tag == 2);
    CHECK(tcran_pull(tc, 0, buf, sizeof buf, &out) == TCRAN_OK && out.tag == 1);
    /* A live control swaps the plug-in scheduler for a built-in one. */
    const char *c = "{\"op\": \"set_scheduler\", \"scheduler\": {\"kind\": \"round_robin\"}}";
    CHECK(tcran_control(tc, c, strlen(c), 0, 0) == TCRAN_OK);
    tcran_free(tc);

    /* Ill-behaved plug-ins: every bad answer counted, every packet carried. */
    snprintf(path, sizeof path, "%s/libbad_plugin.so", dir);
    snprintf(config, sizeof config,
             "classifier = { kind = \"plugin\", path = \"%s\", symbol = \"bad_classifier\" }\n"
             "scheduler = { kind = \"plugin\", path = \"%s\", symbol = \"bad_scheduler\" }\n"
             "pacer = { kind = \"plugin\", path = \"%s\", symbol = \"bad_pacer\" }\n"
             "[[queues]]\nid = 0\nkind = \"plugin\"\npath = \"%s\"\nsymbol = \"bad_queue\"\n",
             path, path, path, path);
    tc = make(config, NULL);
    CHECK(tc != NULL);
    for (int i = 0; i < 10; i++)
        CHECK(tcran_push(tc, pkt, sizeof pkt, 0, (uint64_t)i, 0, &r) == TCRAN_OK);
    size_t n;
    CHECK(tcran_pull_each(tc, 0, 0, NULL, NULL, &n) == TCRAN_ERR_NULL);
    for (int i = 0; i < 10; i++)
        CHECK(tcran_pull(tc, 0, buf, sizeof buf, &out) == TCRAN_OK && out.tag == (uint64_t)i);
    char json[8192];
    CHECK(tcran_stats_json(tc, 0, json, sizeof json, NULL) == TCRAN_OK);
    CHECK(strstr(json, "\"plugin_errors\":{\"classifier\":10,\"pacer\":11,\"queue\":20,"
                       "\"scheduler\":10}") != NULL);
    if (strstr(json, "\"plugin_errors\":{\"classifier\":10") == NULL)
        fprintf(stderr, "stats: %s\n", json);
    CHECK(conserved(tc));
    tcran_free(tc);

    /* Tables that are not right, and libraries that are not there. */
    const char *wrong[][2] = {
        {"old_abi_pacer", "abi_version"},
        {"not_a_table", "abi_version"},
        {"bad_scheduler", "is a scheduler plug-in, not a pacer"},
        {"no_such_symbol", "not found"},
    };
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
        snprintf(config, sizeof config,
                 "pacer = { kind = \"plugin\", path = \"%s\", symbol = \"%s\" }\n%s", path,
                 wrong[i][0], FIFO);
        tcran_t *t = NULL;
        CHECK(tcran_new(config, strlen(config), 0, 1, 1, NULL, &t) == TCRAN_ERR_CONFIG &&
              says(wrong[i][1]) && t == NULL);
    }
    snprintf(config, sizeof config,
             "pacer = { kind = \"plugin\", path = \"%s/nope.so\", symbol = \"x\" }\n%s", dir, FIFO);
    CHECK(tcran_new(config, strlen(config), 0, 1, 1, NULL, &tc) == TCRAN_ERR_CONFIG &&
          says("cannot be loaded"));
    snprintf(config, sizeof config,
             "scheduler = { kind = \"plugin\", path = \"%s/libprio_plugin.so\", symbol = "
             "\"tcran_prio_scheduler\", params = \"bands=3\" }\n%s",
             dir, FIFO);
    CHECK(tcran_new(config, strlen(config), 0, 1, 1, NULL, &tc) == TCRAN_ERR_CONFIG &&
          says("takes no parameters"));
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR_WITH_PLUGINS\n", argv[0]);
        return 2;
    }
    null_arguments();
    bad_lengths_and_packets();
    bad_configs_and_controls();
    changes_all_or_nothing();
    buffers_and_callbacks();
    plugins(argv[1]);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
