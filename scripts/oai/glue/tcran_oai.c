/*
 * tcran_oai.c: tcran's glue inside OpenAirInterface's gNB (v2.1.0,
 * monolithic, one cell): one libtcran instance per (UE, DRB) between SDAP
 * and PDCP, the TC-RAN sublayer of the paper (sec. III-A, IV-C). `make oai`
 * copies this file into OAI's tree and links it into nr-softmodem only;
 * docs/oai.md says what it does and why at these points.
 *
 * Contract with OAI (the three calls of tcran_oai.h, added by
 * scripts/oai/tcran-oai.patch):
 *  - tcran_oai_dl_sdu, on the thread that runs SDAP (the TUN reader in
 *    --noS1, GTP-U with a core): the SDU is pushed into its bearer's
 *    pipeline; OAI's own call to PDCP is skipped.
 *  - tcran_oai_dl_slot, in the MAC's slot thread under its scheduler lock,
 *    every downlink slot, right after the MAC pulled from RLC
 *    (nr_schedule_ue_spec): the report of the slot (bytes the MAC pulled,
 *    what the grant could carry, the RLC occupancy after the pull, MCS,
 *    PRBs, HARQ outcomes; TS 38.321 §5.3.2 for HARQ, TS 38.214 §5.1.3.2
 *    for the TBS) goes to the pacer, then what the pipeline lets go is
 *    handed to PDCP, in this thread. Why here: the MAC reads the RLC
 *    buffer status at the start of a slot and takes only what it saw, and
 *    PDCP hands SDUs to RLC through OAI's queue thread, so what is released
 *    after slot n's pull is what slot n+1 can take: the release must follow
 *    the report at once, and only a pacer that fills the next pull at the
 *    report fills the next pull. The release runs at the last instant that
 *    still reaches the MAC's next pull (one ns before it, on the radio
 *    clock): whatever a pacer lets go anywhere between this pull and the
 *    next is in RLC when the next pull reads it, so releasing it all at
 *    the report, as of that instant, gives the MAC the same pull as a
 *    release spread over the slot would. Pacers that spread a TTI's
 *    bytes over the TTI (bdp, e5g_bdp) then let a whole TTI's bytes go,
 *    and jit's held packet ("just before the next pull") goes too. SDAP's
 *    pushes are stamped with the same instant, so each instance's clock
 *    only moves forward. A separate release thread woken per slot would
 *    add a thread hop and its scheduling delay to every packet; what the
 *    release costs the slot thread is measured and reported
 *    (`release_ns_*`).
 *  - tcran_oai_dl_harq, where the MAC handles a DL HARQ ACK/NACK.
 *
 * Time is OAI's radio clock, never the wall clock: (frame, slot) of the
 * slot being scheduled, unwrapped over the 1024-frame SFN cycle (TS 38.211
 * §4.3.1), times the slot length of the cell's numerology. rfsimulator runs
 * faster or slower than real time; tcran's timers (CoDel's 5 ms, the
 * pacers' windows) run in radio time, as they would on air.
 *
 * Configuration (environment of nr-softmodem):
 *  - TCRAN_OAI_PIPELINE=file.toml: the pipeline of every DRB (the format of
 *    docs/pipeline.md); TCRAN_OAI_PIPELINE_DRB<n>=file.toml for DRB n.
 *    Without either, SDUs go to PDCP as in vanilla OAI.
 *  - The files are re-read when they change (checked every 100 ms of radio
 *    time): the new pipeline is deployed live with tcran_deploy, keeping
 *    every queued packet. A file that does not parse or validate is
 *    refused at start (exit code 2, the message names file, field and
 *    value) and, live, logged with the running pipeline kept.
 *  - TCRAN_OAI_E2=HOST:PORT (or the E2 node's whole config, TOML, when the
 *    value holds a '='; docs/c-api.md): libtcran's E2 node, on a thread of
 *    its own, connects to the RIC there and serves every bearer the glue
 *    made (E2SM-TCRAN, FlexRIC's TC, MAC and RLC models, KPM), with the
 *    per-slot report below as its RLC and MAC counters. An xApp's deploy
 *    is applied under the instance's lock, between two slots. Needs a
 *    pipeline (TCRAN_OAI_PIPELINE): the one every bearer starts with.
 *  - TCRAN_OAI_STATS=file.jsonl: every 100 ms of radio time one JSON line
 *    per bearer: radio clock next to the wall clock, the MAC/RLC report
 *    sums, the pipeline's totals, drops by reason, and the release cost.
 *    Written in vanilla mode too (RLC occupancy and throughput without
 *    tcran).
 *
 * Nothing is lost uncounted: pipeline drops are counted by tcran's reason,
 * an SDU PDCP refuses on release is counted as `pdcp_refused`, an SDU for
 * which no instance could be made (more bearers than the table holds) is
 * handed to PDCP as vanilla OAI would and counted as `bypassed`.
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h> /* before f1ap_ids.h's <netinet/sctp.h>, which defines IPPROTO_SCTP as a macro */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/ran_context.h"
#include "common/utils/LOG/log.h"
#include "common/utils/nr/nr_common.h"
#include "F1AP/f1ap_ids.h"
#include "LAYER2/NR_MAC_gNB/mac_proto.h"
#include "LAYER2/NR_MAC_gNB/nr_mac_gNB.h"
#include "LAYER2/nr_pdcp/nr_pdcp_oai_api.h"
#include "NR_MAC_COMMON/nr_mac_common.h"

#include "tcran.h"
#include "tcran_oai.h"

/* Bearers the glue keeps: in --noS1 one UE with one DRB; a few UEs with a
 * core. More are handed to PDCP untouched and counted (`bypassed`). */
#define TCRAN_OAI_MAX_BEARERS 64
#define TCRAN_OAI_MAX_UES 32
/* Logical channel id of DRB n (TS 38.321 Table 6.2.1-1: 4..32 for DTCH;
 * OAI maps DRB n to LCID n + 3). */
#define TCRAN_OAI_FIRST_DRB_LCID 4
#define TCRAN_OAI_STATS_PERIOD_NS 100000000ULL
#define TCRAN_OAI_RELOAD_PERIOD_NS 100000000ULL
#define TCRAN_OAI_DROP_REASONS 16

typedef struct {
  char path[512];
  struct timespec mtime;
  char *text;
  size_t len;
} pipeline_file_t;

typedef struct {
  /* Fixed once the entry is published (under table_lock). */
  uint64_t ue_id;
  int drb;
  pipeline_file_t *config; /* NULL: vanilla, SDUs go straight to PDCP */
  _Atomic(tcran_t *) tc;  /* NULL until the first SDU, or in vanilla */
  _Atomic uint64_t bypassed;
  /* Slot thread only. */
  bool primed; /* the MAC's cumulative counters have been read once */
  uint16_t rnti;
  uint64_t last_report_ns;
  uint64_t last_lc_bytes, last_tbs_bytes, last_rbs;
  uint64_t period_pulled, period_granted, period_prbs, period_rlc_max, period_slots;
  uint64_t period_acks, period_nacks;
  uint32_t last_rlc_bytes, last_mcs;
  uint64_t pdcp_refused;
  uint64_t release_slots, release_packets, release_ns_sum, release_ns_max;
  uint64_t drops_by_reason[TCRAN_OAI_DROP_REASONS];
  uint64_t deploys, deploy_errors;
  bool e2_served; /* handed to the E2 node (slot thread only) */
} bearer_t;

typedef struct {
  _Atomic uint32_t rnti; /* 0: free */
  _Atomic uint64_t acks, nacks;
} harq_count_t;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static bearer_t bearers[TCRAN_OAI_MAX_BEARERS];
static _Atomic int bearer_count;
static harq_count_t harq_counts[TCRAN_OAI_MAX_UES];

static pipeline_file_t *default_config;
static pipeline_file_t *drb_configs[33]; /* DRB ids 1..32, TS 38.331 */
static FILE *stats_file;
static tcran_e2_t *e2_node;

/* The radio clock: ns since the first slot seen, from (frame, slot). */
static _Atomic uint64_t radio_now_ns;
/* The instant of this slot's release: 1 ns before the MAC's next pull.
 * Pushes (SDAP's thread) are stamped with it too. */
static _Atomic uint64_t release_ns;
static uint64_t sfn_cycles;
static int last_frame = -1;
static uint64_t next_stats_ns, next_reload_ns;

static uint64_t wall_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t monotonic_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Reads the whole file; 0 on success, else errno with the file untouched. */
static int read_pipeline_file(pipeline_file_t *f)
{
  struct stat st;
  if (stat(f->path, &st) != 0)
    return errno;
  FILE *in = fopen(f->path, "rb");
  if (in == NULL)
    return errno;
  char *text = malloc((size_t)st.st_size + 1);
  size_t len = text ? fread(text, 1, (size_t)st.st_size, in) : 0;
  fclose(in);
  if (text == NULL)
    return ENOMEM;
  text[len] = '\0';
  free(f->text);
  f->text = text;
  f->len = len;
  f->mtime = st.st_mtim;
  return 0;
}

/* Loads and validates one pipeline file at start; a bad one ends the gNB
 * with exit code 2 before it serves anybody, naming the variable, the file
 * and tcran's message (field, value, allowed range). */
static pipeline_file_t *load_pipeline_or_exit(const char *variable, const char *path)
{
  pipeline_file_t *f = calloc(1, sizeof(*f));
  if (f == NULL || strlen(path) >= sizeof(f->path)) {
    fprintf(stderr, "tcran-oai: %s=%s: path too long (at most %zu bytes)\n", variable, path, sizeof(f->path) - 1);
    exit(2);
  }
  strcpy(f->path, path);
  int err = read_pipeline_file(f);
  if (err != 0) {
    fprintf(stderr, "tcran-oai: %s=%s: %s\n", variable, path, strerror(err));
    exit(2);
  }
  tcran_t *probe = NULL;
  if (f->len == 0 || tcran_new(f->text, f->len, TCRAN_FORMAT_AUTO, 1, 1, NULL, &probe) != TCRAN_OK) {
    fprintf(stderr, "tcran-oai: %s=%s: %s\n", variable, path, f->len == 0 ? "empty file" : tcran_last_error());
    exit(2);
  }
  tcran_free(probe);
  return f;
}

__attribute__((constructor)) static void tcran_oai_init(void)
{
  const char *path = getenv("TCRAN_OAI_PIPELINE");
  if (path != NULL && *path != '\0')
    default_config = load_pipeline_or_exit("TCRAN_OAI_PIPELINE", path);
  for (int drb = 1; drb <= 32; drb++) {
    char variable[40];
    snprintf(variable, sizeof(variable), "TCRAN_OAI_PIPELINE_DRB%d", drb);
    path = getenv(variable);
    if (path != NULL && *path != '\0')
      drb_configs[drb] = load_pipeline_or_exit(variable, path);
  }
  const char *ric = getenv("TCRAN_OAI_E2");
  if (ric != NULL && *ric != '\0') {
    if (default_config == NULL) {
      fprintf(stderr, "tcran-oai: TCRAN_OAI_E2=%s needs TCRAN_OAI_PIPELINE, the pipeline every bearer starts with (e.g. scripts/oai/pipelines/passthrough.toml)\n", ric);
      exit(2);
    }
    char config[1024];
    if (strchr(ric, '=') != NULL)
      snprintf(config, sizeof(config), "%s", ric);
    else
      snprintf(config, sizeof(config), "ric = \"%s\"", ric);
    if (tcran_e2_start(config, strlen(config), TCRAN_FORMAT_TOML, &e2_node) != TCRAN_OK) {
      fprintf(stderr, "tcran-oai: TCRAN_OAI_E2=%s: %s\n", ric, tcran_last_error());
      exit(2);
    }
  }
  const char *stats = getenv("TCRAN_OAI_STATS");
  if (stats != NULL && *stats != '\0') {
    stats_file = fopen(stats, "w");
    if (stats_file == NULL) {
      fprintf(stderr, "tcran-oai: TCRAN_OAI_STATS=%s: %s\n", stats, strerror(errno));
      exit(2);
    }
  }
  fprintf(stderr, "tcran-oai: libtcran %s, pipeline %s, E2 %s\n", tcran_version(), default_config ? default_config->path : "none (vanilla)", e2_node ? ric : "off");
}

static pipeline_file_t *config_of(int drb)
{
  if (drb >= 1 && drb <= 32 && drb_configs[drb] != NULL)
    return drb_configs[drb];
  return default_config;
}

static void count_drop(void *ctx, uint64_t tag, uint32_t len, enum tcran_drop_reason reason)
{
  (void)tag;
  (void)len;
  bearer_t *b = ctx;
  b->drops_by_reason[reason < TCRAN_OAI_DROP_REASONS ? reason : 0]++;
}

/* The entry of (ue_id, drb), made if missing; NULL when the table is full. */
static bearer_t *bearer_of(uint64_t ue_id, int drb, bool make)
{
  int n = atomic_load(&bearer_count);
  for (int i = 0; i < n; i++)
    if (bearers[i].ue_id == ue_id && bearers[i].drb == drb)
      return &bearers[i];
  if (!make)
    return NULL;
  pthread_mutex_lock(&table_lock);
  bearer_t *found = NULL;
  n = atomic_load(&bearer_count);
  for (int i = 0; i < n && found == NULL; i++)
    if (bearers[i].ue_id == ue_id && bearers[i].drb == drb)
      found = &bearers[i];
  if (found == NULL && n < TCRAN_OAI_MAX_BEARERS) {
    found = &bearers[n];
    memset(found, 0, sizeof(*found));
    found->ue_id = ue_id;
    found->drb = drb;
    found->config = config_of(drb);
    found->last_report_ns = atomic_load(&radio_now_ns);
    atomic_store(&bearer_count, n + 1);
  }
  pthread_mutex_unlock(&table_lock);
  return found;
}

/* The instance of a bearer, made from its config on first use. */
static tcran_t *instance_of(bearer_t *b)
{
  if (b->config == NULL)
    return NULL;
  tcran_t *tc = b->tc;
  if (tc != NULL)
    return tc;
  pthread_mutex_lock(&table_lock);
  if (b->tc == NULL) {
    /* The RNTI only names the instance (its statistics); 0x0001 until the
     * MAC has told us which RNTI the UE has. */
    uint16_t rnti = b->rnti != 0 ? b->rnti : 1;
    tcran_t *made = NULL;
    if (tcran_new(b->config->text, b->config->len, TCRAN_FORMAT_AUTO, rnti, (uint8_t)b->drb, NULL, &made) == TCRAN_OK) {
      tcran_set_drop_callback(made, count_drop, b);
      b->tc = made;
      LOG_I(PDCP, "tcran: pipeline %s on UE %" PRIu64 " DRB %d\n", b->config->path, b->ue_id, b->drb);
    } else {
      LOG_E(PDCP, "tcran: UE %" PRIu64 " DRB %d: %s\n", b->ue_id, b->drb, tcran_last_error());
    }
  }
  tc = b->tc;
  pthread_mutex_unlock(&table_lock);
  return tc;
}

bool tcran_oai_dl_sdu(uint64_t ue_id, int drb, uint32_t mui, const uint8_t *sdu, int len, bool sdap_header)
{
  if (config_of(drb) == NULL)
    return false;
  bearer_t *b = bearer_of(ue_id, drb, true);
  tcran_t *tc = b ? instance_of(b) : NULL;
  if (tc == NULL) {
    if (b != NULL)
      atomic_fetch_add(&b->bypassed, 1);
    return false;
  }
  tcran_push_result result;
  tcran_status status = tcran_push(tc, sdu, (size_t)len, sdap_header ? TCRAN_PUSH_SDAP : 0, mui, atomic_load(&release_ns), &result);
  if (status != TCRAN_OK) {
    /* Only an SDU over TCRAN_MAX_PACKET gets here (SDAP refuses those
     * before): PDCP gets it as in vanilla OAI, counted. */
    atomic_fetch_add(&b->bypassed, 1);
    return false;
  }
  return true;
}

void tcran_oai_dl_harq(uint16_t rnti, bool success)
{
  harq_count_t *slot = NULL;
  for (int i = 0; i < TCRAN_OAI_MAX_UES && slot == NULL; i++) {
    uint32_t seen = atomic_load(&harq_counts[i].rnti);
    uint32_t expected = 0;
    if (seen == rnti || (seen == 0 && atomic_compare_exchange_strong(&harq_counts[i].rnti, &expected, rnti)) || expected == rnti)
      slot = &harq_counts[i];
  }
  if (slot != NULL)
    atomic_fetch_add(success ? &slot->acks : &slot->nacks, 1);
}

static void take_harq(uint16_t rnti, uint64_t *acks, uint64_t *nacks)
{
  *acks = *nacks = 0;
  for (int i = 0; i < TCRAN_OAI_MAX_UES; i++)
    if (atomic_load(&harq_counts[i].rnti) == rnti) {
      *acks = atomic_exchange(&harq_counts[i].acks, 0);
      *nacks = atomic_exchange(&harq_counts[i].nacks, 0);
      return;
    }
}

typedef struct {
  bearer_t *bearer;
  protocol_ctxt_t ctxt;
} release_ctx_t;

/* tcran -> PDCP: the call SDAP would have made (nr_sdap_tx_entity). */
static int32_t to_pdcp(void *ctx, const uint8_t *data, size_t len, const tcran_packet_out *meta)
{
  release_ctx_t *r = ctx;
  if (!nr_pdcp_data_req_drb(&r->ctxt,
                            SRB_FLAG_NO,
                            r->bearer->drb,
                            (mui_t)meta->tag,
                            SDU_CONFIRM_NO,
                            (sdu_size_t)len,
                            (unsigned char *)data,
                            PDCP_TRANSMISSION_MODE_DATA,
                            NULL,
                            NULL))
    r->bearer->pdcp_refused++;
  return 0;
}

/* Slots to the next slot with downlink after `slot`, and DL slots per
 * frame, from the MAC's TDD bitmap (TS 38.213 §11.1). */
static void dl_slot_pattern(const gNB_MAC_INST *mac, int slot, int slots_per_frame, int *gap_slots, int *dl_per_frame)
{
  *gap_slots = 1;
  *dl_per_frame = 0;
  for (int s = 0; s < slots_per_frame; s++)
    *dl_per_frame += is_xlsch_in_slot(mac->dlsch_slot_bitmap[s / 64], s);
  for (int k = 1; k <= slots_per_frame; k++) {
    int s = (slot + k) % slots_per_frame;
    if (is_xlsch_in_slot(mac->dlsch_slot_bitmap[s / 64], s)) {
      *gap_slots = k;
      return;
    }
  }
}

static void reload_configs(uint64_t now)
{
  pipeline_file_t *files[34];
  int n = 0;
  if (default_config)
    files[n++] = default_config;
  for (int drb = 1; drb <= 32; drb++)
    if (drb_configs[drb])
      files[n++] = drb_configs[drb];
  for (int i = 0; i < n; i++) {
    struct stat st;
    pipeline_file_t *f = files[i];
    if (stat(f->path, &st) != 0 || (st.st_mtim.tv_sec == f->mtime.tv_sec && st.st_mtim.tv_nsec == f->mtime.tv_nsec))
      continue;
    if (read_pipeline_file(f) != 0)
      continue;
    int count = atomic_load(&bearer_count);
    for (int j = 0; j < count; j++) {
      bearer_t *b = &bearers[j];
      if (b->config != f || b->tc == NULL)
        continue;
      if (tcran_deploy(b->tc, f->text, f->len, TCRAN_FORMAT_AUTO, now) == TCRAN_OK) {
        b->deploys++;
        LOG_I(PDCP, "tcran: deployed %s on UE %" PRIu64 " DRB %d\n", f->path, b->ue_id, b->drb);
      } else {
        b->deploy_errors++;
        LOG_E(PDCP, "tcran: %s: %s (the running pipeline stays)\n", f->path, tcran_last_error());
      }
    }
  }
}

static void write_stats(int frame, int slot, uint64_t now)
{
  uint64_t wall = wall_ns();
  int count = atomic_load(&bearer_count);
  for (int i = 0; i < count; i++) {
    bearer_t *b = &bearers[i];
    tcran_totals t = {0};
    if (b->tc)
      tcran_get_totals(b->tc, &t);
    fprintf(stats_file,
            "{\"radio_ns\":%" PRIu64 ",\"frame\":%d,\"slot\":%d,\"wall_ns\":%" PRIu64 ",\"ue\":%" PRIu64 ",\"drb\":%d,\"rnti\":%u,"
            "\"tcran\":%s,\"slots\":%" PRIu64 ",\"pulled_bytes\":%" PRIu64 ",\"granted_bytes\":%" PRIu64 ",\"prbs\":%" PRIu64
            ",\"harq_acks\":%" PRIu64 ",\"harq_nacks\":%" PRIu64 ",\"mcs\":%u,\"rlc_bytes\":%u,\"rlc_bytes_max\":%" PRIu64
            ",\"in_packets\":%" PRIu64 ",\"out_packets\":%" PRIu64 ",\"dropped_packets\":%" PRIu64 ",\"marked_packets\":%" PRIu64
            ",\"queued_packets\":%" PRIu64 ",\"queued_bytes\":%" PRIu64 ",\"pdcp_refused\":%" PRIu64 ",\"bypassed\":%" PRIu64
            ",\"deploys\":%" PRIu64 ",\"deploy_errors\":%" PRIu64 ",\"release_slots\":%" PRIu64 ",\"release_packets\":%" PRIu64
            ",\"release_ns_sum\":%" PRIu64 ",\"release_ns_max\":%" PRIu64 ",\"drops\":{",
            now, frame, slot, wall, b->ue_id, b->drb, b->rnti, b->tc ? "true" : "false", b->period_slots, b->period_pulled,
            b->period_granted, b->period_prbs, b->period_acks, b->period_nacks, b->last_mcs, b->last_rlc_bytes,
            b->period_rlc_max, t.in_packets, t.out_packets, t.dropped_packets, t.marked_packets, t.queued_packets,
            t.queued_bytes, b->pdcp_refused, atomic_load(&b->bypassed), b->deploys, b->deploy_errors, b->release_slots,
            b->release_packets, b->release_ns_sum, b->release_ns_max);
    bool first = true;
    for (int r = 1; r < TCRAN_OAI_DROP_REASONS; r++)
      if (b->drops_by_reason[r]) {
        fprintf(stats_file, "%s\"%s\":%" PRIu64, first ? "" : ",", tcran_drop_reason_str((uint32_t)r), b->drops_by_reason[r]);
        first = false;
      }
    fputs("}}\n", stats_file);
    b->period_slots = b->period_pulled = b->period_granted = b->period_prbs = 0;
    b->period_acks = b->period_nacks = b->period_rlc_max = 0;
    b->release_slots = b->release_packets = b->release_ns_sum = b->release_ns_max = 0;
  }
  fflush(stats_file);
}

/* One bearer's report of the period since its last one, then its release. */
static void serve_bearer(bearer_t *b, NR_UE_info_t *UE, int lcid, int slot_ns, int gap_slots, int dl_per_frame, uint64_t now, uint64_t release)
{
  NR_UE_sched_ctrl_t *sched = &UE->UE_sched_ctrl;
  const NR_mac_dir_stats_t *dl = &UE->mac_stats.dl;
  const NR_sched_pdsch_t *pdsch = &sched->sched_pdsch;
  b->rnti = UE->rnti;

  /* The MAC's counters are cumulative; the report carries what changed
   * since the last one (what the previous slots' pulls took). */
  if (!b->primed) {
    b->primed = true;
    b->last_lc_bytes = dl->lc_bytes[lcid];
    b->last_tbs_bytes = dl->total_bytes;
    b->last_rbs = (uint64_t)dl->total_rbs + dl->total_rbs_retx;
  }
  uint64_t pulled = dl->lc_bytes[lcid] - b->last_lc_bytes;
  uint64_t granted = dl->total_bytes - b->last_tbs_bytes;
  uint64_t rbs = (uint64_t)dl->total_rbs + dl->total_rbs_retx;
  uint64_t prbs = rbs - b->last_rbs;
  b->last_lc_bytes = dl->lc_bytes[lcid];
  b->last_tbs_bytes = dl->total_bytes;
  b->last_rbs = rbs;
  uint64_t acks, nacks;
  take_harq(UE->rnti, &acks, &nacks);
  /* The MAC read the RLC's occupancy at the start of the slot and took
   * at most that: what it left is the backlog after the pull (SDUs the RLC
   * queue thread added since are counted in the next slot's). */
  const uint32_t seen = sched->rlc_status[lcid].bytes_in_buffer;
  const uint32_t rlc_bytes = pulled < seen ? seen - (uint32_t)pulled : 0;

  /* What a slot with every PRB of the BWP would carry at the UE's MCS
   * (TS 38.214 §5.1.3.2), e5G-BDP's max_bytes; unknown before the first
   * grant gave the MCS, the symbols and the DMRS overhead. */
  uint64_t max_bytes = 0;
  if (pdsch->Qm != 0 && pdsch->tda_info.nrOfSymbols != 0)
    max_bytes = nr_compute_tbs(pdsch->Qm,
                               pdsch->R,
                               UE->current_DL_BWP.BWPSize,
                               pdsch->tda_info.nrOfSymbols,
                               pdsch->dmrs_parms.N_PRB_DMRS * pdsch->dmrs_parms.N_DMRS_SLOT,
                               0,
                               0,
                               pdsch->nrOfLayers ? pdsch->nrOfLayers : 1)
                >> 3;

  /* What the grant could carry: the TBS of the new transmission when the
   * MAC left data in RLC (the radio was the limit; 0 in a slot that only
   * retransmitted), the whole BWP's TBS at the UE's MCS when it took all it
   * saw (the data was the limit: OAI's MAC sizes a grant to the buffer).
   * With one UE that is the slot's capacity; with several, PRBs another UE
   * took are counted too (docs/oai.md). */
  const uint64_t capacity = pulled < seen ? granted : (granted > max_bytes ? granted : max_bytes);

  b->period_slots++;
  b->period_pulled += pulled;
  b->period_granted += capacity;
  b->period_prbs += prbs;
  b->period_acks += acks;
  b->period_nacks += nacks;
  b->last_mcs = pdsch->mcs;
  b->last_rlc_bytes = rlc_bytes;
  if (rlc_bytes > b->period_rlc_max)
    b->period_rlc_max = rlc_bytes;

  tcran_t *tc = b->tc;
  if (tc == NULL)
    return;
  uint64_t tti = now > b->last_report_ns ? now - b->last_report_ns : (uint64_t)slot_ns;
  if (tti > 1000000000ULL)
    tti = 1000000000ULL;
  b->last_report_ns = now;
  tcran_rlc_report report = {
      .tti_ns = tti,
      .backlog_bytes = rlc_bytes,
      .backlog_sdus = sched->rlc_status[lcid].pdus_in_buffer,
      .pulled_bytes = pulled,
      .granted_bytes = capacity,
      .max_bytes = max_bytes,
      .next_pull_in_ns = (uint64_t)gap_slots * (uint64_t)slot_ns,
      .pulls_per_pattern = (uint16_t)dl_per_frame,
      .harq_acks = (uint16_t)(acks > UINT16_MAX ? UINT16_MAX : acks),
      .harq_nacks = (uint16_t)(nacks > UINT16_MAX ? UINT16_MAX : nacks),
      .mcs_known = dl->total_bytes != 0,
      .mcs = pdsch->mcs,
      .prbs = (uint32_t)prbs,
      /* OAI v2.1.0's NR RLC does not report the head SDU's age
       * (head_sdu_creation_time is always 0): 0 here, which no built-in
       * pacer reads. */
      .head_of_line_age_ns = 0,
  };
  tcran_on_report(tc, &report, now);
  /* Served over E2 once the MAC named the UE's RNTI; from here the RIC
   * reads this bearer's reports and may change its pipeline. */
  if (e2_node != NULL && !b->e2_served) {
    b->e2_served = true;
    if (tcran_e2_add(e2_node, tc, UE->rnti, (uint8_t)b->drb) == TCRAN_OK)
      LOG_I(PDCP, "tcran: E2 serves UE %" PRIu64 " DRB %d as RNTI %04x\n", b->ue_id, b->drb, UE->rnti);
    else
      LOG_E(PDCP, "tcran: E2: UE %" PRIu64 " DRB %d: %s\n", b->ue_id, b->drb, tcran_last_error());
  }

  release_ctx_t r = {.bearer = b,
                     .ctxt = {.module_id = 0, .enb_flag = 1, .instance = 0, .rntiMaybeUEid = b->ue_id}};
  uint64_t start = monotonic_ns();
  size_t released = 0;
  tcran_pull_each(tc, release, 0, to_pdcp, &r, &released);
  if (released > 0) {
    uint64_t spent = monotonic_ns() - start;
    b->release_slots++;
    b->release_packets += released;
    b->release_ns_sum += spent;
    if (spent > b->release_ns_max)
      b->release_ns_max = spent;
  }
}

void tcran_oai_dl_slot(int module_id, int frame, int slot)
{
  gNB_MAC_INST *mac = RC.nrmac[module_id];
  const NR_ServingCellConfigCommon_t *scc = mac->common_channels[0].ServingCellConfigCommon;
  const int slots_per_frame = nr_slots_per_frame[*scc->ssbSubcarrierSpacing];
  const int slot_ns = 10000000 / slots_per_frame;

  if (last_frame >= 0 && frame < last_frame)
    sfn_cycles++;
  last_frame = frame;
  uint64_t now = ((sfn_cycles * 1024 + (uint64_t)frame) * (uint64_t)slots_per_frame + (uint64_t)slot) * (uint64_t)slot_ns;
  atomic_store(&radio_now_ns, now);

  int gap_slots, dl_per_frame;
  dl_slot_pattern(mac, slot, slots_per_frame, &gap_slots, &dl_per_frame);
  /* The report goes in at the slot's own instant (a pacer measures the
   * slot from it), the release at the last instant that reaches the next
   * pull; only then do SDAP's pushes move to that instant. */
  const uint64_t release = now + (uint64_t)gap_slots * (uint64_t)slot_ns - 1;

  UE_iterator (mac->UE_info.list, UE) {
    /* The DU's UE (RNTI) to the UE id PDCP and SDAP use: the F1 id table,
     * which the monolithic gNB fills too; a UE not (yet) in it is known
     * above the MAC by its RNTI, as before F1 ids existed. */
    const uint64_t ue_id = du_exists_f1_ue_data(UE->rnti) ? du_get_f1_ue_data(UE->rnti).secondary_ue : UE->rnti;
    NR_UE_sched_ctrl_t *sched = &UE->UE_sched_ctrl;
    for (int i = 0; i < sched->dl_lc_num; i++) {
      const int lcid = sched->dl_lc_ids[i];
      if (lcid < TCRAN_OAI_FIRST_DRB_LCID)
        continue; /* SRBs never pass SDAP */
      bearer_t *b = bearer_of(ue_id, lcid - 3, stats_file != NULL);
      if (b != NULL)
        serve_bearer(b, UE, lcid, slot_ns, gap_slots, dl_per_frame, now, release);
    }
  }
  atomic_store(&release_ns, release);

  if (now >= next_reload_ns) {
    next_reload_ns = now + TCRAN_OAI_RELOAD_PERIOD_NS;
    reload_configs(release);
  }
  if (stats_file != NULL && now >= next_stats_ns) {
    if (next_stats_ns != 0)
      write_stats(frame, slot, now);
    next_stats_ns = now + TCRAN_OAI_STATS_PERIOD_NS;
  }
}
