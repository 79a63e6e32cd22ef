/*
 * Checks tcran's nr_polar_kronecker_power_matrices() against TS 38.212
 * §5.3.1 written out independently: G_2 = F = [[1,0],[1,1]] and
 * G_{2N} = F (x) G_N, the Kronecker product built block by block
 * ([[G_N, 0], [G_N, G_N]]), for every n OAI asks for (N = 2..1024); and
 * that every row is 32-byte aligned, as OAI's 256-bit loads need.
 * `make oai` compiles and runs it before building OAI (well under a second).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const uint8_t **nr_polar_kronecker_power_matrices(uint8_t n);

int main(void)
{
  uint8_t *expected = malloc(1024 * 1024);
  uint8_t *next = malloc(1024 * 1024);
  /* G_1 = [1]: the Kronecker power of order 0. */
  expected[0] = 1;
  for (int n = 0; n <= 10; n++) {
    const int N = 1 << n;
    const uint8_t **g = nr_polar_kronecker_power_matrices((uint8_t)n);
    for (int i = 0; i < N; i++) {
      if ((uintptr_t)g[i] % 32 != 0) {
        fprintf(stderr, "polar_test: n=%d row %d is not 32-byte aligned\n", n, i);
        return 1;
      }
      if (memcmp(g[i], &expected[i * N], (size_t)N) != 0) {
        fprintf(stderr, "polar_test: n=%d row %d differs from F^(x)n\n", n, i);
        return 1;
      }
    }
    if (nr_polar_kronecker_power_matrices((uint8_t)n) != g) {
      fprintf(stderr, "polar_test: n=%d built twice\n", n);
      return 1;
    }
    if (n == 10)
      break;
    /* G_{2N} = [[G_N, 0], [G_N, G_N]] */
    for (int i = 0; i < 2 * N; i++)
      for (int j = 0; j < 2 * N; j++) {
        const int in_lower_half = i >= N, in_right_half = j >= N;
        const uint8_t f = in_right_half && !in_lower_half ? 0 : 1;
        next[i * 2 * N + j] = f & expected[(i % N) * N + (j % N)];
      }
    memcpy(expected, next, (size_t)(4 * N * N));
  }
  /* TS 38.212 §5.3.1's G_4, spelled out. */
  const uint8_t g4[4][4] = {{1, 0, 0, 0}, {1, 1, 0, 0}, {1, 0, 1, 0}, {1, 1, 1, 1}};
  const uint8_t **g = nr_polar_kronecker_power_matrices(2);
  for (int i = 0; i < 4; i++)
    if (memcmp(g[i], g4[i], 4) != 0) {
      fprintf(stderr, "polar_test: G_4 row %d differs from TS 38.212\n", i);
      return 1;
    }
  free(expected);
  free(next);
  puts("polar_test: G_N = F^(x)n for N = 1..1024, rows 32-byte aligned");
  return 0;
}
