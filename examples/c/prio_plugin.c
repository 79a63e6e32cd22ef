/* A scheduler plug-in for tcran: strict priority by the queues' configured
 * `priority` (0 first), round robin among queues of the same level -- the
 * Linux prio qdisc, written against tcran.h as a shared object.
 *
 * Build:  gcc -std=c11 -O2 -fPIC -shared $(pkg-config --cflags tcran) \
 *             prio_plugin.c -o libprio_plugin.so
 * Use:    scheduler = { kind = "plugin", path = "./libprio_plugin.so",
 *                       symbol = "tcran_prio_scheduler", params = "" }
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tcran.h>

#define MAX_QUEUES 64

struct prio {
    int n;
    uint16_t id[MAX_QUEUES];
    uint8_t priority[MAX_QUEUES];
    int last; /* index served last, for round robin within a level */
};

static void *prio_create(const char *params, size_t len, char *err, size_t cap) {
    if (len != 0) {
        snprintf(err, cap, "takes no parameters (got \"%s\")", params);
        return NULL;
    }
    struct prio *p = calloc(1, sizeof *p);
    if (p == NULL)
        snprintf(err, cap, "out of memory");
    return p;
}

static void prio_destroy(void *state) { free(state); }

static void prio_queue_added(void *state, uint16_t queue, uint8_t priority, uint32_t weight) {
    (void)weight;
    struct prio *p = state;
    for (int i = 0; i < p->n; i++)
        if (p->id[i] == queue) {
            p->priority[i] = priority;
            return;
        }
    if (p->n < MAX_QUEUES) {
        p->id[p->n] = queue;
        p->priority[p->n] = priority;
        p->n++;
    }
}

static void prio_queue_removed(void *state, uint16_t queue) {
    struct prio *p = state;
    for (int i = 0; i < p->n; i++)
        if (p->id[i] == queue) {
            memmove(&p->id[i], &p->id[i + 1], (size_t)(p->n - i - 1) * sizeof p->id[0]);
            memmove(&p->priority[i], &p->priority[i + 1], (size_t)(p->n - i - 1));
            p->n--;
            return;
        }
}

static int32_t prio_select(void *state, uint64_t now_ns, const tcran_sched_view *view) {
    (void)now_ns;
    struct prio *p = state;
    int best = -1;
    /* Lowest priority value wins; among equals, the first after `last`. */
    for (int k = 1; k <= p->n; k++) {
        int i = (p->last + k) % p->n;
        uint16_t q = p->id[i];
        if (view->packets(view->ctx, q) == 0 || view->blocked(view->ctx, q))
            continue;
        if (best < 0 || p->priority[i] < p->priority[best])
            best = i;
    }
    if (best < 0)
        return TCRAN_NO_QUEUE;
    p->last = best;
    return p->id[best];
}

/* The ops table tcran finds with dlsym("tcran_prio_scheduler"). */
const tcran_scheduler_ops tcran_prio_scheduler = {
    .header = {.abi_version = TCRAN_PLUGIN_ABI_VERSION,
               .stage = TCRAN_STAGE_SCHEDULER,
               .name = "prio",
               .create = prio_create,
               .destroy = prio_destroy},
    .queue_added = prio_queue_added,
    .queue_removed = prio_queue_removed,
    .select = prio_select,
};
