/*
 * tcran's replacement for OAI's nr_polar_kronecker_power_matrices.c, which is
 * absent from the OpenAirInterface v2.1.0 mirror. `make oai` copies it into
 * openair1/PHY/CODING/nrPolar_tools/ before building.
 *
 * Contract (nr_polar_defs.h): nr_polar_kronecker_power_matrices(n) returns the
 * polar generator matrix G_N = F^{(x)n}, the n-fold Kronecker power of
 * F = [[1,0],[1,1]] (TS 38.212 §5.3.1, "d = u G_N"), as N = 2^n rows of one
 * byte per bit. Because F has a single zero, at row 0 / column 1, the entry
 * G_N[i][j] is 1 exactly when no bit position has i_b = 0 and j_b = 1, that
 * is when (i & j) == j. The polar encoder loads rows with 256-bit SIMD, so
 * every row starts on a 32-byte boundary (rows shorter than 32 are padded).
 *
 * The tables are built once, on first use, for every n the codes of TS 38.212
 * use (N <= 1024), under pthread_once: gNB and UE threads may ask at the same
 * time.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nr_polar_defs.h"

#define POLAR_MAX_LOG2_N 10

static uint8_t **kronecker_tables[POLAR_MAX_LOG2_N + 1];
static pthread_once_t kronecker_once = PTHREAD_ONCE_INIT;

static void build_kronecker_tables(void)
{
  for (int n = 0; n <= POLAR_MAX_LOG2_N; n++) {
    const size_t rows = (size_t)1 << n;
    const size_t stride = rows < 32 ? 32 : rows; /* keeps every row 32-byte aligned */
    uint8_t *cells = aligned_alloc(32, rows * stride);
    uint8_t **table = malloc(rows * sizeof(*table));
    if (cells == NULL || table == NULL)
      abort();
    memset(cells, 0, rows * stride);
    for (size_t i = 0; i < rows; i++) {
      table[i] = cells + i * stride;
      for (size_t j = 0; j < rows; j++)
        table[i][j] = (i & j) == j;
    }
    kronecker_tables[n] = table;
  }
}

const uint8_t **nr_polar_kronecker_power_matrices(uint8_t n)
{
  if (n > POLAR_MAX_LOG2_N)
    abort(); /* TS 38.212 §5.3.1 bounds N by 2^10 */
  pthread_once(&kronecker_once, build_kronecker_tables);
  return (const uint8_t **)kronecker_tables[n];
}
