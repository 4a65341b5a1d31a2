/*
 * test_kernels.c: every micro-kernel variant this processor can run, and a
 * sample of tile combinations, against a double-precision triple loop on odd
 * shapes: 1x1x1, K=1, primes, tiles larger than the matrix, non-multiples of
 * the tiles, accumulate mode, 1 to 4 threads with both splits, more threads
 * than panels and many more slabs than threads; the vector packing of A and
 * B at every remainder of K; gemm_run's structures
 * (transposed A and B through their packing routines, alpha, batches with
 * shared and broadcast operands, split b) on every kernel.
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

/* The packing of A and B by whole vectors (blocks of 8 k steps of A for
 * the AVX2 and AVX-512 kernels, whole NR-wide panels of B) and what they
 * leave to the element-wise copies: K just below, at and above multiples
 * of 8 and of kc, kc below 8, two full row panels and a partial one, a full
 * column panel and a partial one, on every kernel this processor runs. */
static void packing_blocks_and_their_remainders_match_the_reference(void **state) {
  static const size_t ks[] = {1, 7, 8, 9, 16, 23, 40};
  static const int kcs[] = {5, 8, 24, 512};
  gemm_ctx *ctx = gemm_ctx_create(1, NULL, 0);
  gemm_isa isa = gemm_isa_detect();
  (void)state;
  assert_non_null(ctx);
  for (int ki = 0; ki < gemm_kernel_count(); ki++) {
    const gemm_kernel_info *kern = gemm_kernel_at(ki);
    if (kern->isa > isa)
      continue;
    for (size_t c = 0; c < sizeof kcs / sizeof kcs[0]; c++) {
      gemm_config cfg = {ki, kern->mr * 3, kern->nr * 2, kcs[c], GEMM_SPLIT_N};
      for (size_t x = 0; x < sizeof ks / sizeof ks[0]; x++) {
        check_product(ctx, &cfg, (size_t)kern->mr * 2 + 1, (size_t)kern->nr + 3, ks[x], 0);
        check_product(ctx, &cfg, (size_t)kern->mr * 3, (size_t)kern->nr * 2, ks[x], 1);
      }
    }
  }
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

/* gemm_run on a problem against a double loop: op(A), op(B) through the
 * stored layouts (padded strides), alpha, `batch` products with the
 * operand mapping of gemm_problem; C's padding untouched. */
static void check_problem(gemm_ctx *ctx, const gemm_config *cfg, size_t m, size_t n, size_t k,
                          int ta, int tb, float alpha, int acc, size_t batch, size_t ba,
                          size_t bb) {
  size_t arows = ta ? k : m, acols = ta ? m : k, brows = tb ? n : k, bcols = tb ? k : n;
  size_t lda = acols + 2, ldb = bcols + 3, ldc = n + 1;
  size_t sa = arows * lda, sb = brows * ldb, sc = m * ldc;
  float *a = malloc(ba * sa * sizeof *a), *b = malloc(bb * sb * sizeof *b);
  float *c = malloc(batch * sc * sizeof *c), *c0 = malloc(batch * sc * sizeof *c0);
  uint64_t seed = m * 7 + n * 131 + k + batch;
  gemm_problem p = {m, n, k, a, lda, sa, ta, b, ldb, sb, tb, c, ldc, sc, alpha, acc, batch, ba, bb};
  assert_non_null(a);
  assert_non_null(b);
  assert_non_null(c);
  assert_non_null(c0);
  for (size_t i = 0; i < ba * sa; i++)
    a[i] = rnd(&seed);
  for (size_t i = 0; i < bb * sb; i++)
    b[i] = rnd(&seed);
  for (size_t i = 0; i < batch * sc; i++)
    c0[i] = c[i] = rnd(&seed);
  assert_int_equal(gemm_run(ctx, cfg, &p), 0);
  for (size_t q = 0; q < batch; q++) {
    const float *aq = a + (q * ba / batch) * sa, *bq = b + (q % bb) * sb;
    const float *cq = c + q * sc, *c0q = c0 + q * sc;
    for (size_t i = 0; i < m; i++) {
      for (size_t j = 0; j < n; j++) {
        double sum = 0, mag = 0, want;
        for (size_t r = 0; r < k; r++) {
          double x = ta ? aq[r * lda + i] : aq[i * lda + r];
          double y = tb ? bq[j * ldb + r] : bq[r * ldb + j];
          sum += x * y;
          mag += fabs(x * y);
        }
        want = alpha * sum + (acc ? c0q[i * ldc + j] : 0.0);
        mag = fabs(alpha) * mag + (acc ? fabs(c0q[i * ldc + j]) : 0.0);
        if (fabs(cq[i * ldc + j] - want) > 1e-5 * (mag + 1.0))
          fail_msg("kernel %s split=%d %zux%zux%zu ta=%d tb=%d alpha=%g acc=%d batch=%zu/%zu/%zu: "
                   "C[%zu][%zu][%zu]=%g want %g",
                   gemm_kernel_at(cfg->kernel)->name, (int)cfg->split, m, n, k, ta, tb,
                   (double)alpha, acc, batch, ba, bb, q, i, j, (double)cq[i * ldc + j], want);
      }
      assert_true(cq[i * ldc + n] == c0q[i * ldc + n]); /* padding untouched */
    }
  }
  free(a);
  free(b);
  free(c);
  free(c0);
}

/* Transposed packing of A and B on every kernel with small (multi-block,
 * partial panels) and large tiles, with alpha, overwrite and accumulate. */
static void every_kernel_runs_transposed_operands_and_alpha(void **state) {
  gemm_ctx *ctx = gemm_ctx_create(1, NULL, 0);
  gemm_isa isa = gemm_isa_detect();
  (void)state;
  assert_non_null(ctx);
  for (int ki = 0; ki < gemm_kernel_count(); ki++) {
    const gemm_kernel_info *kern = gemm_kernel_at(ki);
    if (kern->isa > isa)
      continue;
    gemm_config small = {ki, kern->mr, kern->nr, 4, GEMM_SPLIT_N};
    gemm_config large = {ki, kern->mr * 40, kern->nr * 20, 512, GEMM_SPLIT_N};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
      for (int t = 0; t < 4; t++) {
        float alpha = t == 3 ? -0.75f : 1.0f;
        check_problem(ctx, &small, shapes[s][0], shapes[s][1], shapes[s][2], t & 1, t >> 1, alpha,
                      t == 2, 1, 1, 1);
        check_problem(ctx, &large, shapes[s][0], shapes[s][1], shapes[s][2], t & 1, t >> 1,
                      t == 1 ? 2.5f : alpha, t == 1, 1, 1, 1);
      }
  }
  gemm_ctx_destroy(ctx);
}

/* Batches: one A shared by every product, broadcast A and B (2 x 3 = 6),
 * one B shared, on one thread and three, with each split including b. */
static void batches_map_their_operands_on_every_split(void **state) {
  gemm_ctx *one = gemm_ctx_create(1, NULL, 0);
  gemm_ctx *three = gemm_ctx_create(3, NULL, 0);
  const gemm_kernel_info *kern = gemm_kernel_at(1); /* gen_6x8 */
  static const gemm_split splits[] = {GEMM_SPLIT_N, GEMM_SPLIT_M, GEMM_SPLIT_SERIAL,
                                      GEMM_SPLIT_BATCH};
  static const size_t maps[][3] = {{6, 6, 6}, {6, 1, 6}, {6, 2, 3}, {4, 4, 1}, {1, 1, 1}};
  (void)state;
  assert_non_null(one);
  assert_non_null(three);
  for (size_t sp = 0; sp < 4; sp++) {
    gemm_config cfg = {1, kern->mr * 2, kern->nr * 3, 7, splits[sp]};
    for (size_t mp = 0; mp < sizeof maps / sizeof maps[0]; mp++) {
      check_problem(one, &cfg, 13, 29, 17, 0, 0, 1.0f, 0, maps[mp][0], maps[mp][1], maps[mp][2]);
      check_problem(three, &cfg, 70, 33, 9, (int)(mp & 1), (int)(sp & 1), 0.5f, (int)(mp == 2),
                    maps[mp][0], maps[mp][1], maps[mp][2]);
    }
  }
  for (int rep = 0; rep < 20; rep++) { /* the pool's hand-off of whole products, repeatedly */
    gemm_config cfg = {1, kern->mr, kern->nr, 16, GEMM_SPLIT_BATCH};
    check_problem(three, &cfg, 5, 9, 3, 0, 1, 1.0f, rep & 1, 7, 1, 7);
  }
  gemm_ctx_destroy(one);
  gemm_ctx_destroy(three);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_kernel_matches_the_reference_on_odd_shapes),
      cmocka_unit_test(sampled_candidates_match_the_reference_on_one_and_three_threads),
      cmocka_unit_test(more_threads_than_panels_leave_slabs_empty_and_stay_exact),
      cmocka_unit_test(many_more_slabs_than_threads_stay_exact),
      cmocka_unit_test(packing_blocks_and_their_remainders_match_the_reference),
      cmocka_unit_test(invalid_configurations_are_refused_with_a_reason),
      cmocka_unit_test(every_kernel_runs_transposed_operands_and_alpha),
      cmocka_unit_test(batches_map_their_operands_on_every_split),
  };
  return cmocka_run_group_tests_name("gemm_kernels", tests, NULL, NULL);
}
