/*
 * tcran_oai.h: the three calls tcran's patch adds to OpenAirInterface's gNB
 * (docs/oai.md). The glue (tcran_oai.c) is linked into nr-softmodem only; the
 * declarations are weak, so any other OAI binary (the UE, the unit
 * simulators) links without it and runs OAI unchanged.
 *
 * Plain C types on purpose: the patched OAI files include this header after
 * their own headers, and a type of theirs here would tie it to one release.
 */
#ifndef TCRAN_OAI_H
#define TCRAN_OAI_H

#include <stdbool.h>
#include <stdint.h>

/*
 * SDAP -> tcran: a downlink SDU of data radio bearer `drb` of the UE that
 * PDCP knows as `ue_id`, right after SDAP built it (`sdap_header`: the
 * 1-octet DL SDAP header, TS 37.324 §6.2.2.2, is its first byte) and
 * before PDCP numbers and ciphers it. Returns true when tcran took the SDU
 * (queued or dropped and counted), false when OAI should hand it to PDCP
 * itself (no pipeline configured for the bearer).
 */
bool tcran_oai_dl_sdu(uint64_t ue_id, int drb, uint32_t mui, const uint8_t *sdu, int len, bool sdap_header)
    __attribute__((weak));

/*
 * MAC -> tcran, once per downlink slot, from the slot scheduler right after
 * it pulled from every logical channel's RLC entity (nr_schedule_ue_spec):
 * the per-slot report of each DRB and the release of what its pacer lets go
 * into PDCP. Also the radio clock: frame and slot are the only time tcran
 * sees inside OAI.
 */
void tcran_oai_dl_slot(int module_id, int frame, int slot) __attribute__((weak));

/* MAC -> tcran: HARQ feedback on a downlink transport block of `rnti`. */
void tcran_oai_dl_harq(uint16_t rnti, bool success) __attribute__((weak));

#endif
