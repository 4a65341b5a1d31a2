/*
 * test_kernels.c: every micro-kernel variant this processor can run, and a
 * sample of tile combinations, against a double-precision triple loop on odd
 * shapes: 1x1x1, K=1, primes, tiles larger than the matrix, non-multiples of
 * the tiles, accumulate mode, 1 to 4 threads with both splits, more threads
 * than panels and many more slabs than threads.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gemm.h"
#include "policy.h"

static float rnd(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((double)(*s >> 40) / (double)(1ull << 23) - 1.0);
}

/* Runs cfg on an m x n x k product with padded strides and compares with a
 * double reference; also checks that the padding of C is untouched. */
static void check_product(gemm_ctx *ctx, const gemm_config *cfg, size_t m, size_t n, size_t k,
                          int accumulate) {
  size_t lda = k + 3, ldb = n + 5, ldc = n + 7;
  float *a = malloc(m * lda * sizeof *a), *b = malloc(k * ldb * sizeof *b);
  float *c = malloc(m * ldc * sizeof *c), *c0 = malloc(m * ldc * sizeof *c0);
  uint64_t seed = m * 131 + n * 7 + k;
  assert_non_null(a);
  assert_non_null(b);
  assert_non_null(c);
  assert_non_null(c0);
  for (size_t i = 0; i < m * lda; i++)
    a[i] = rnd(&seed);
  for (size_t i = 0; i < k * ldb; i++)
    b[i] = rnd(&seed);
  for (size_t i = 0; i < m * ldc; i++)
    c0[i] = c[i] = rnd(&seed);
  assert_int_equal(gemm_sgemm(ctx, cfg, m, n, k, a, lda, b, ldb, c, ldc, accumulate), 0);
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++) {
      double want = accumulate ? c0[i * ldc + j] : 0.0, mag = fabs(want);
      for (size_t p = 0; p < k; p++) {
        want += (double)a[i * lda + p] * b[p * ldb + j];
        mag += fabs((double)a[i * lda + p] * b[p * ldb + j]);
      }
      if (fabs(c[i * ldc + j] - want) > 1e-5 * (mag + 1.0)) {
        fail_msg("kernel %s mc=%d nc=%d kc=%d split=%d %zux%zux%zu acc=%d: C[%zu][%zu]=%g want %g",
                 gemm_kernel_at(cfg->kernel)->name, cfg->mc, cfg->nc, cfg->kc, (int)cfg->split, m,
                 n, k, accumulate, i, j, (double)c[i * ldc + j], want);
      }
    }
    for (size_t j = n; j < ldc; j++)
      assert_true(c[i * ldc + j] == c0[i * ldc + j]); /* padding untouched */
  }
  free(a);
  free(b);
  free(c);
  free(c0);
}

static const size_t shapes[][3] = {
    {1, 1, 1},  {1, 1, 7},   {17, 31, 13}, {5, 3, 1},
    {1, 40, 9}, {29, 1, 19}, {33, 65, 37}, {64, 48, 1},
};

/* Every supported kernel, its smallest tiles (multi-block paths) and tiles
 * larger than the matrix, on every odd shape, overwrite and accumulate. */
static void every_kernel_matches_the_reference_on_odd_shapes(void **state) {
  gemm_ctx *ctx = gemm_ctx_create(1, NULL, 0);
  gemm_isa isa = gemm_isa_detect();
  int tested = 0;
  (void)state;
  assert_non_null(ctx);
  for (int ki = 0; ki < gemm_kernel_count(); ki++) {
    const gemm_kernel_info *kern = gemm_kernel_at(ki);
    if (kern->isa > isa)
      continue;
    gemm_config small = {ki, kern->mr, kern->nr, 4, GEMM_SPLIT_N};
    gemm_config large = {ki, kern->mr * 40, kern->nr * 20, 512, GEMM_SPLIT_N};
    gemm_config mixed = {ki, kern->mr * 2, kern->nr * 3, 5, GEMM_SPLIT_M};
    assert_int_equal(gemm_config_check(&small, NULL, 0), 0);
    assert_int_equal(gemm_config_check(&large, NULL, 0), 0);
    assert_int_equal(gemm_config_check(&mixed, NULL, 0), 0);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
      for (int acc = 0; acc < 2; acc++) {
        check_product(ctx, &small, shapes[s][0], shapes[s][1], shapes[s][2], acc);
        check_product(ctx, &large, shapes[s][0], shapes[s][1], shapes[s][2], acc);
        check_product(ctx, &mixed, shapes[s][0], shapes[s][1], shapes[s][2], acc);
      }
    tested++;
  }
  assert_true(tested >= 3);
  gemm_ctx_destroy(ctx);
}

/* A sample of the candidate space (every 7th candidate of a 45x70x300
 * product) on one thread, and with three threads both splits. */
static void sampled_candidates_match_the_reference_on_one_and_three_threads(void **state) {
  gemm_ctx *one = gemm_ctx_create(1, NULL, 0);
  int cpus[] = {0};
  gemm_ctx *three = gemm_ctx_create(3, cpus, 1);
  const size_t m = 45, n = 70, k = 300;
  size_t count = cpu_gemm_candidates(gemm_isa_detect(), m, n, k, 3, NULL, 0);
  gemm_config *cands = malloc(count * sizeof *cands);
  (void)state;
  assert_non_null(one);
  assert_non_null(three);
  assert_non_null(cands);
  assert_true(count > 10);
  cpu_gemm_candidates(gemm_isa_detect(), m, n, k, 3, cands, count);
  for (size_t i = 0; i < count; i += 7) {
    check_product(one, &cands[i], m, n, k, (int)(i & 1));
    check_product(three, &cands[i], m, n, k, (int)((i >> 1) & 1));
  }
  free(cands);
  gemm_ctx_destroy(one);
  gemm_ctx_destroy(three);
}

/* More threads than panels: some threads get empty slabs. */
static void more_threads_than_panels_leave_slabs_empty_and_stay_exact(void **state) {
  gemm_ctx *ctx = gemm_ctx_create(4, NULL, 0);
  gemm_config n_split = {0, gemm_kernel_at(0)->mr, gemm_kernel_at(0)->nr, 8, GEMM_SPLIT_N};
  gemm_config m_split = n_split;
  (void)state;
  m_split.split = GEMM_SPLIT_M;
  assert_non_null(ctx);
  check_product(ctx, &n_split, 3, 5, 11, 0);
  check_product(ctx, &m_split, 3, 5, 11, 1);
  {
    gemm_config serial = n_split;
    serial.split = GEMM_SPLIT_SERIAL; /* the caller alone on a 4-thread context */
    check_product(ctx, &serial, 33, 70, 9, 0);
    check_product(ctx, &serial, 33, 70, 9, 1);
  }
  check_product(ctx, &n_split, 1, 1, 1, 1);
  for (int rep = 0; rep < 50; rep++) /* the pool's hand-off, repeatedly */
    check_product(ctx, &m_split, 9, 17, 3, 0);
  gemm_ctx_destroy(ctx);
}

/* Many more slabs than threads (dynamic distribution), both splits. */
static void many_more_slabs_than_threads_stay_exact(void **state) {
  gemm_ctx *ctx = gemm_ctx_create(2, NULL, 0);
  const gemm_kernel_info *kern = gemm_kernel_at(1); /* gen_6x8 */
  gemm_config n_split = {1, kern->mr * 4, kern->nr * 10, 16, GEMM_SPLIT_N};
  gemm_config m_split = n_split;
  (void)state;
  m_split.split = GEMM_SPLIT_M;
  assert_non_null(ctx);
  check_product(ctx, &n_split, 37, 601, 20, 0);
  check_product(ctx, &m_split, 601, 37, 20, 1);
  check_product(ctx, &m_split, 37, 601, 20, 0);
  check_product(ctx, &n_split, 601, 37, 20, 1);
  gemm_ctx_destroy(ctx);
}

static void invalid_configurations_are_refused_with_a_reason(void **state) {
  char err[128];
  int ki = gemm_kernel_find("gen_4x8", 7);
  gemm_config cfg = {ki, 6, 8, 16, GEMM_SPLIT_N};
  (void)state;
  assert_true(ki >= 0);
  assert_int_equal(gemm_config_check(&cfg, err, sizeof err), -1);
  assert_non_null(strstr(err, "multiple of MR"));
  cfg.mc = 8;
  cfg.nc = 12;
  assert_int_equal(gemm_config_check(&cfg, err, sizeof err), -1);
  assert_non_null(strstr(err, "multiple of NR"));
  cfg.nc = 16;
  cfg.kc = 0;
  assert_int_equal(gemm_config_check(&cfg, err, sizeof err), -1);
  cfg.kc = 16;
  cfg.kernel = 999;
  assert_int_equal(gemm_config_check(&cfg, err, sizeof err), -1);
  assert_null(gemm_kernel_at(999));
  assert_int_equal(gemm_kernel_find("nope", 4), -1);
  assert_null(gemm_ctx_create(0, NULL, 0));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_kernel_matches_the_reference_on_odd_shapes), cmocka_unit_test(sampled_candidates_match_the_reference_on_one_and_three_threads),
      cmocka_unit_test(more_threads_than_panels_leave_slabs_empty_and_stay_exact),   cmocka_unit_test(many_more_slabs_than_threads_stay_exact),
      cmocka_unit_test(invalid_configurations_are_refused_with_a_reason),
  };
  return cmocka_run_group_tests_name("gemm_kernels", tests, NULL, NULL);
}
