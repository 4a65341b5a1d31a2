/*
 * test_cuda_nvrtc.c: cuda_nvrtc: NVRTC (dlopen'ed, no GPU needed) compiles
 * a deterministic sample of cuda_gemm's space for sm_80 and sm_90: for
 * each dtype every value of every parameter at least once and the corners
 * (smallest and largest tiles), and 200 further valid points per
 * architecture (a fixed-seed draw); none may fail to compile, and ptxas's
 * register report must fit the architecture's register file without
 * spilling (what the validity rule promised); the largest warp tiles the
 * rule refuses reach ptxas's register ceiling. Also the reference kernel.
 * Skips without NVRTC and under valgrind (CALHOST_UNDER_VALGRIND: NVRTC is
 * a compiler, not this project's code). tests/cuda/compile-all.sh compiles
 * every valid point.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include "space_walk.h"

typedef struct collect {
  cgemm_config *pts;
  size_t n, cap;
} collect;

static void collect_point(const cgemm_config *c, void *user) {
  collect *k = user;
  if (k->n == k->cap) {
    k->cap = k->cap ? 2 * k->cap : 1024;
    k->pts = realloc(k->pts, k->cap * sizeof *k->pts);
    assert_non_null(k->pts);
  }
  k->pts[k->n++] = *c;
}

/* The sample of one architecture: coverage and corners per dtype, then
 * 200 distinct further points over the three dtypes. */
static void sample(const cgemm_limits *l, walk_list *w) {
  uint64_t x = 0x5eed;
  size_t before_random;
  collect all[3] = {{0}};
  for (int t = 0; t < 3; t++) {
    walk_points((cgemm_dtype)t, l, 4096, collect_point, &all[t]);
    assert_true(all[t].n > 0);
    for (int p = 0; p < CG_COUNT; p++)
      for (uint32_t v = 0; v < cgemm_params[p].count; v++)
        for (size_t i = 0; i < all[t].n; i++)
          if (all[t].pts[i].v[p] == cgemm_params[p].values[v]) {
            walk_add(w, &all[t].pts[i], (cgemm_dtype)t);
            break;
          }
    walk_add(w, &all[t].pts[0], (cgemm_dtype)t);            /* smallest */
    walk_add(w, &all[t].pts[all[t].n - 1], (cgemm_dtype)t); /* largest */
  }
  before_random = w->count;
  while (w->count < before_random + 200) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    int t = (int)((x >> 33) % 3);
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    walk_add(w, &all[t].pts[(x >> 20) % all[t].n], (cgemm_dtype)t);
  }
  for (int t = 0; t < 3; t++)
    free(all[t].pts);
}

static void arch_sample_compiles_within_limits(const char *arch, const cgemm_limits *l) {
  char why[256], verdict[640];
  const cu_nvrtc *nv;
  if (getenv("CALHOST_UNDER_VALGRIND"))
    skip();
  nv = cu_nvrtc_load(why, sizeof why);
  if (!nv) {
    print_message("skipped: %s\n", why);
    skip();
  }
  walk_list w = {0};
  sample(l, &w);
  walk_compile(nv, arch, &w, 2, 0);
  size_t bad = 0;
  double secs = 0;
  for (size_t i = 0; i < w.count; i++) {
    secs += w.items[i].seconds;
    if (walk_verdict(&w.items[i], l, verdict, sizeof verdict)[0]) {
      char text[128];
      cgemm_format(&w.items[i].c, text, sizeof text);
      print_message("%s %s %s: %s\n", arch, cgemm_dtype_name(w.items[i].t), text, verdict);
      bad++;
    }
  }
  print_message("%s: %zu modules compiled, %zu bad, %.1f s of compiling\n", arch, w.count, bad,
                secs);
  assert_true(w.count >= 200);
  assert_int_equal(bad, 0);
  /* the reference kernel of each dtype */
  for (int t = 0; t < 3; t++) {
    char defs[64];
    cu_nvrtc_result r;
    snprintf(defs, sizeof defs, "-DREFERENCE -DDT=%d", t);
    if (cu_nvrtc_compile(nv, cgemm_source, defs, arch, "reference", &r) != 0)
      fail_msg("reference %d for %s: %s", t, arch, r.log);
    free(r.cubin);
  }
  free(w.items);
}

static void sm80_sample_compiles_within_limits(void **state) {
  (void)state;
  arch_sample_compiles_within_limits("sm_80", &cgemm_limits_sm80);
}

static void sm90_sample_compiles_within_limits(void **state) {
  (void)state;
  arch_sample_compiles_within_limits("sm_90", &cgemm_limits_sm90);
}

/* The largest warp tiles the rule refuses (fp32 64x64: 128 accumulators
 * per thread; bf16 64x64: 16 fragments) compile, but at the per-thread
 * ceiling of 255 registers (ptxas: 255 and 238 on sm_90): the rule's
 * accumulator limits are where ptxas runs out of room, not arbitrary. */
static void refused_warp_tiles_reach_the_register_ceiling(void **state) {
  (void)state;
  char why[256], defs[200], err[256];
  const cu_nvrtc *nv;
  if (getenv("CALHOST_UNDER_VALGRIND"))
    skip();
  nv = cu_nvrtc_load(why, sizeof why);
  if (!nv)
    skip();
  const cgemm_config big = {{128, 128, 32, 64, 64, 2, 4, 1, 1}},
                     big16 = {{128, 128, 32, 64, 64, 2, 8, 1, 1}};
  const struct {
    const cgemm_config *c;
    cgemm_dtype t;
  } cases[] = {{&big, CG_F32}, {&big16, CG_BF16}};
  for (size_t i = 0; i < 2; i++) {
    cu_nvrtc_result r;
    assert_int_equal(cgemm_fits(cases[i].c, cases[i].t, &cgemm_limits_sm90, 4096, err, sizeof err),
                     -1);
    cgemm_defines(cases[i].c, cases[i].t, defs, sizeof defs);
    if (cu_nvrtc_compile(nv, cgemm_source, defs, "sm_90", "gemm", &r) != 0)
      fail_msg("%s: %s", defs, r.log);
    free(r.cubin);
    print_message("refused %s: %d registers, %d bytes spilled (%s)\n", defs, r.registers,
                  r.spill_bytes, err);
    assert_true(r.registers >= 224 || r.spill_bytes > 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sm80_sample_compiles_within_limits),
      cmocka_unit_test(sm90_sample_compiles_within_limits),
      cmocka_unit_test(refused_warp_tiles_reach_the_register_ceiling),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
