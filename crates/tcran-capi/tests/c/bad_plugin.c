/* Plug-ins that break their contract's rules on return values, for
 * api_test.c: tcran must count every bad answer and carry on safely. */
#include <tcran.h>

static int32_t classify_out_of_range(void *s, const tcran_packet_info *p) {
    (void)s;
    (void)p;
    return 70000;
}
static uint32_t verdict_garbage(void *s, const tcran_packet_info *p, const tcran_backlog *b,
                                uint64_t now) {
    (void)s, (void)p, (void)b, (void)now;
    return 0xdeadbeef;
}
static int32_t select_missing_queue(void *s, uint64_t now, const tcran_sched_view *v) {
    (void)s, (void)now, (void)v;
    return 4242;
}
static uint32_t admits_garbage(void *s, uint32_t len, uint64_t now, uint64_t b, uint32_t n) {
    (void)s, (void)len, (void)now, (void)b, (void)n;
    return 99;
}
static void stats_nan(void *s, tcran_pacer_stats *out) {
    (void)s;
    out->bandwidth_bps = 0.0 / 0.0;
}

#define HEADER(stage_, name_)                                                                     \
    {.abi_version = TCRAN_PLUGIN_ABI_VERSION, .stage = stage_, .name = name_}

const tcran_classifier_ops bad_classifier = {.header = HEADER(TCRAN_STAGE_CLASSIFIER, "bad"),
                                             .classify = classify_out_of_range};
const tcran_queue_ops bad_queue = {.header = HEADER(TCRAN_STAGE_QUEUE, "bad"),
                                   .enqueue = verdict_garbage,
                                   .dequeue = verdict_garbage};
const tcran_scheduler_ops bad_scheduler = {.header = HEADER(TCRAN_STAGE_SCHEDULER, "bad"),
                                           .select = select_missing_queue};
const tcran_pacer_ops bad_pacer = {
    .header = HEADER(TCRAN_STAGE_PACER, "bad"), .admits = admits_garbage, .stats = stats_nan};
/* A table built for another ABI version. */
const tcran_pacer_ops old_abi_pacer = {
    .header = {.abi_version = 0x54430000, .stage = TCRAN_STAGE_PACER, .name = "old"},
    .admits = admits_garbage};
/* Not a table at all. */
const char not_a_table[64] = "hello";
