/*
 * test_policy.c: the cpu_gemm policy language: a table of malformed and
 * inconsistent policies, each refused with the expected reason; every
 * candidate of several shapes and thread counts accepted and round-tripped;
 * the default accepted; random bytes never crash the parser.
 */
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
#include "space.h"

typedef struct bad_policy {
  const char *text;
  const char *reason; /* expected substring of the error */
} bad_policy;

static const bad_policy bad[] = {
    {"", "empty policy"},
    {"kernel=gen_4x8;mc=64;nc=512;kc=128", "missing field split"},
    {"kernel=gen_4x8;nc=512;kc=128;split=n", "missing field mc"},
    {"mc=64;nc=512;kc=128;split=n", "missing field kernel"},
    {"kernel=gen_4x8;mc=64;nc=512;kc=128;split=n;", "trailing ';'"},
    {"kernel=gen_4x8;mc=64;nc=512;kc=128;split=n;x", "no '='"},
    {"kernel=gen_4x8;mc=64;nc=512;kc=128;split=n;mc=64", "duplicate field mc"},
    {"kernel=gen_4x8;kernel=gen_4x8;mc=64;nc=512;kc=128;split=n", "duplicate field kernel"},
    {"kernel=gen_4x8;mc=64;nc=512;kc=128;split=n;foo=1", "unknown field 'foo'"},
    {"kernel=gen_4x8;;mc=64;nc=512;kc=128;split=n", "empty field"},
    {";kernel=gen_4x8;mc=64;nc=512;kc=128;split=n", "empty field"},
    {"kernel=gen_9x9;mc=63;nc=512;kc=128;split=n", "unknown kernel"},
    {"kernel=;mc=64;nc=512;kc=128;split=n", "unknown kernel"},
    {"kernel=gen_4x8;mc=66;nc=512;kc=128;split=n", "not a multiple of MR=4"},
    {"kernel=gen_4x8;mc=64;nc=516;kc=128;split=n", "not a multiple of NR=8"},
    {"kernel=gen_4x8;mc=0;nc=512;kc=128;split=n", "out of range"},
    {"kernel=gen_4x8;mc=8192;nc=512;kc=128;split=n", "out of range"},
    {"kernel=gen_4x8;mc=64;nc=32768;kc=128;split=n", "out of range"},
    {"kernel=gen_4x8;mc=64;nc=512;kc=0;split=n", "kc=0 out of range"},
    {"kernel=gen_4x8;mc=64;nc=512;kc=5000;split=n", "out of range"},
    {"kernel=gen_4x8;mc=4096;nc=512;kc=4096;split=n", "packed-A limit"},
    {"kernel=gen_4x8;mc=64;nc=16384;kc=4096;split=n", "packed-B limit"},
    {"kernel=gen_4x8;mc=64;nc=512;kc=128;split=x", "split: expected"},
    {"kernel=gen_4x8;mc=64;nc=512;kc=128;split=nm", "split: expected"},
    {"kernel=gen_4x8;mc=64;nc=512;kc=128;split=", "split: expected"},
    {"kernel=gen_4x8;mc=6a4;nc=512;kc=128;split=n", "mc: not a decimal number"},
    {"kernel=gen_4x8;mc=-64;nc=512;kc=128;split=n", "mc: not a decimal number"},
    {"kernel=gen_4x8;mc=+64;nc=512;kc=128;split=n", "mc: not a decimal number"},
    {"kernel=gen_4x8;mc=064;nc=512;kc=128;split=n", "mc: leading zero"},
    {"kernel=gen_4x8;mc=;nc=512;kc=128;split=n", "mc: empty value"},
    {"kernel=gen_4x8;mc=64;nc=512;kc=99999999999999999999;split=n", "overflow"},
    {"kernel=gen_4x8;mc=64;nc=4294967808;kc=128;split=n", "overflow"},
    {"kernel=gen_4x8;mc=64;nc=512;kc=1e3;split=n", "kc: not a decimal number"},
    {"kernel=gen_4x8;mc=64;nc=512;kc=0x80;split=n", "kc: not a decimal number"},
    {"kernel=gen_4x8;mc=64;nc=512;kc=128;split=n trailing", "invalid byte 0x20"},
    {"kernel=gen_4x8; mc=64;nc=512;kc=128;split=n", "invalid byte 0x20"},
    {"kernel=gen_4x8;mc=64;nc=512;kc=128;split=n\n", "invalid byte 0x0a"},
    {"kernel=gen_4x8;mc=64;nc=512;kc=128;split=n=m", "unexpected '='"},
    {"KERNEL=gen_4x8;mc=64;nc=512;kc=128;split=n", "unknown field"},
    {"kernel=gen_4x8,mc=64,nc=512,kc=128,split=n", "unexpected '='"},
    {"kernel=gen_4x8;mc=64;nc=512;kc=128;split=n;kernel=gen_4x8;mc=64;nc=512;kc=128;split=n;"
     "kernel=gen_4x8;mc=64;nc=512;kc=128;split=n;kernel=gen_4x8;mc=64;nc=512;kc=128;split=n",
     "longer than"},
};

static void bad_policies_are_refused_with_a_reason(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char err[256] = "";
    gemm_config cfg;
    int rc = cpu_gemm_policy_parse(bad[i].text, strlen(bad[i].text), -1, &cfg, err, sizeof err);
    if (rc != -1)
      fail_msg("accepted bad policy [%zu] '%s'", i, bad[i].text);
    if (!strstr(err, bad[i].reason))
      fail_msg("policy [%zu] '%s': reason '%s' lacks '%s'", i, bad[i].text, err, bad[i].reason);
  }
}

/* A NUL inside the length and a length that cuts a valid policy short. */
static void the_length_not_the_nul_ends_a_policy(void **state) {
  static const char good[] = "kernel=gen_4x8;mc=64;nc=512;kc=128;split=n";
  char buf[sizeof good + 8];
  char err[128];
  (void)state;
  assert_int_equal(cpu_gemm_policy_parse(good, strlen(good), -1, NULL, err, sizeof err), 0);
  assert_int_equal(cpu_gemm_policy_parse(good, strlen(good) - 1, -1, NULL, err, sizeof err), -1);
  assert_non_null(strstr(err, "split: expected"));
  memcpy(buf, good, sizeof good); /* NUL included in the length */
  assert_int_equal(cpu_gemm_policy_parse(buf, sizeof good, -1, NULL, err, sizeof err), -1);
  assert_non_null(strstr(err, "invalid byte 0x00"));
  /* fields in another order are accepted; split=s (serial) too */
  assert_int_equal(
      cpu_gemm_policy_parse("split=m;kc=7;nc=16;mc=4;kernel=gen_4x8", 38, -1, NULL, NULL, 0), 0);
  {
    gemm_config cfg;
    assert_int_equal(
        cpu_gemm_policy_parse("split=s;kc=7;nc=16;mc=4;kernel=gen_4x8", 38, -1, &cfg, NULL, 0), 0);
    assert_int_equal(cfg.split, GEMM_SPLIT_SERIAL);
  }
  /* tiny error buffers are safe */
  assert_int_equal(cpu_gemm_policy_parse("x", 1, -1, NULL, err, 1), -1);
  assert_int_equal(err[0], '\0');
}

/* A kernel above the processor's ISA class is refused by name. */
static void a_kernel_above_the_isa_class_is_refused_by_name(void **state) {
  char err[160];
  char text[128];
  (void)state;
  for (int ki = 0; ki < gemm_kernel_count(); ki++) {
    const gemm_kernel_info *kern = gemm_kernel_at(ki);
    gemm_config cfg = {ki, kern->mr, kern->nr, 64, GEMM_SPLIT_N};
    int n = cpu_gemm_policy_format(&cfg, text, sizeof text);
    assert_true(n > 0 && n < (int)sizeof text);
    if (kern->isa == GEMM_ISA_PORTABLE)
      continue;
    assert_int_equal(
        cpu_gemm_policy_parse(text, (size_t)n, GEMM_ISA_PORTABLE, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "needs"));
    assert_int_equal(cpu_gemm_policy_parse(text, (size_t)n, (int)kern->isa, NULL, err, sizeof err),
                     0);
  }
}

static void every_candidate_is_accepted_and_round_trips(void **state) {
  static const size_t dims[][3] = {{1, 1, 1},       {17, 31, 13},       {32, 32, 32},
                                   {256, 256, 256}, {1024, 1024, 1024}, {2048, 64, 512},
                                   {64, 2048, 512}};
  size_t biggest = 0;
  (void)state;
  for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++)
    for (unsigned threads = 1; threads <= 2; threads++) {
      size_t count = cpu_gemm_candidates(gemm_isa_detect(), dims[d][0], dims[d][1], dims[d][2],
                                         threads, NULL, 0);
      gemm_config *c = malloc(count * sizeof *c);
      assert_non_null(c);
      assert_true(count >= 1);
      assert_int_equal(cpu_gemm_candidates(gemm_isa_detect(), dims[d][0], dims[d][1], dims[d][2],
                                           threads, c, count),
                       count);
      for (size_t i = 0; i < count; i++) {
        char text[CPU_GEMM_POLICY_MAX + 1], err[160];
        gemm_config back;
        int n = cpu_gemm_policy_format(&c[i], text, sizeof text);
        assert_true(n > 0 && n <= CPU_GEMM_POLICY_MAX);
        if (cpu_gemm_policy_parse(text, (size_t)n, (int)gemm_isa_detect(), &back, err, sizeof err))
          fail_msg("candidate '%s' refused: %s", text, err);
        assert_memory_equal(&back, &c[i], sizeof back);
        for (size_t j = 0; j < i; j++) /* distinct */
          assert_false(memcmp(&c[j], &c[i], sizeof back) == 0);
      }
      if (count > biggest)
        biggest = count;
      free(c);
    }
  assert_true(biggest >= 200); /* "a few hundred points" on the big shapes */
}

static void the_default_is_valid_for_every_shape(void **state) {
  gemm_config cfg;
  char text[128];
  int n;
  (void)state;
  cpu_gemm_policy_default(&cfg);
  n = cpu_gemm_policy_format(&cfg, text, sizeof text);
  assert_string_equal(text, "kernel=gen_4x8;mc=64;nc=512;kc=128;split=n");
  assert_int_equal(cpu_gemm_policy_parse(text, (size_t)n, GEMM_ISA_PORTABLE, NULL, NULL, 0), 0);
  /* a too-small buffer reports the length needed */
  assert_int_equal(cpu_gemm_policy_format(&cfg, text, 4), n);
}

static void random_bytes_never_crash_the_parser(void **state) {
  uint64_t s = 42;
  char buf[200];
  static const char alphabet[] = "kernel=gen_4x8;mcnkspliavx2_6x160123456789=;m";
  (void)state;
  for (int round = 0; round < 20000; round++) {
    size_t len = (size_t)(s % sizeof buf);
    char *heap;
    for (size_t i = 0; i < len; i++) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      buf[i] = (round & 1) ? (char)(s >> 56) : alphabet[(s >> 33) % (sizeof alphabet - 1)];
    }
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    heap = malloc(len ? len : 1); /* exact-size copy: ASan sees any over-read */
    assert_non_null(heap);
    memcpy(heap, buf, len);
    (void)cpu_gemm_policy_parse(heap, len, (int)gemm_isa_detect(), NULL, buf, 64);
    free(heap);
  }
}

/* split=b (threads take whole products of a batch) parses and round-trips;
 * a batch's candidates are the single product's plus split b, and only
 * with several threads. */
static void split_b_is_a_batch_candidate_and_round_trips(void **state) {
  gemm_config cfg;
  char text[CPU_GEMM_POLICY_MAX + 1];
  size_t one, batched, single_thread;
  gemm_config *list;
  int with_b = 0;
  (void)state;
  assert_int_equal(
      cpu_gemm_policy_parse("kernel=gen_4x8;mc=64;nc=512;kc=128;split=b", 42, -1, &cfg, NULL, 0),
      0);
  assert_int_equal(cfg.split, GEMM_SPLIT_BATCH);
  assert_true(cpu_gemm_policy_format(&cfg, text, sizeof text) > 0);
  assert_string_equal(text, "kernel=gen_4x8;mc=64;nc=512;kc=128;split=b");
  one = cpu_gemm_candidates(GEMM_ISA_PORTABLE, 128, 128, 64, 2, NULL, 0);
  assert_int_equal(cpu_gemm_candidates_batched(GEMM_ISA_PORTABLE, 128, 128, 64, 1, 2, NULL, 0),
                   one);
  batched = cpu_gemm_candidates_batched(GEMM_ISA_PORTABLE, 128, 128, 64, 12, 2, NULL, 0);
  assert_int_equal(batched, one / 3 * 4);
  single_thread = cpu_gemm_candidates_batched(GEMM_ISA_PORTABLE, 128, 128, 64, 12, 1, NULL, 0);
  assert_int_equal(single_thread, one / 3);
  list = malloc(batched * sizeof *list);
  assert_non_null(list);
  cpu_gemm_candidates_batched(GEMM_ISA_PORTABLE, 128, 128, 64, 12, 2, list, batched);
  for (size_t i = 0; i < batched; i++) {
    assert_true(cpu_gemm_policy_format(&list[i], text, sizeof text) > 0);
    assert_int_equal(cpu_gemm_policy_parse(text, strlen(text), -1, &cfg, NULL, 0), 0);
    with_b += cfg.split == GEMM_SPLIT_BATCH;
  }
  assert_int_equal(with_b, (int)(one / 3));
  free(list);
}

/* How many of the list's candidates have kc == kc_value; fails the test
 * when one of them is not a kernel of class isa with an mc near 128 or 64. */
static size_t deep_candidates(const gemm_config *list, size_t count, int kc_value, int isa) {
  size_t deep = 0;
  for (size_t i = 0; i < count; i++) {
    const gemm_kernel_info *kern = gemm_kernel_at(list[i].kernel);
    if (list[i].kc != kc_value)
      continue;
    if ((int)kern->isa != isa || list[i].mc > 128 + kern->mr)
      fail_msg("kc=%d with %s mc=%d: the deep kc is for the best class's kernels and mc "
               "targets 128 and 64 only",
               kc_value, kern->name, list[i].mc);
    deep++;
  }
  return deep;
}

/* kc 1024 (the whole of K below it) is a candidate of deep products, with
 * the best class's kernels and the mc targets 128 and 64 only; the kc values
 * of before are all still there (stored policies stay points of the space),
 * and a product with k <= 512 gets no new candidate. */
static void deep_products_get_kc_1024_on_the_best_class(void **state) {
  static const size_t dims[][3] = {{1024, 768, 3072}, {1024, 3072, 768}, {200, 100, 1000}};
  static const int deep_kc[] = {1024, 768, 1000};
  int isa = (int)gemm_isa_detect();
  (void)state;
  for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
    size_t count = cpu_gemm_candidates(isa, dims[d][0], dims[d][1], dims[d][2], 1, NULL, 0);
    gemm_config *list = malloc(count * sizeof *list);
    size_t shallow[4] = {0};
    static const int kcs[4] = {128, 256, 384, 512};
    cpu_gemm_space sp;
    uint32_t point[CPU_GEMM_SPACE_PARAMS];
    assert_non_null(list);
    cpu_gemm_candidates(isa, dims[d][0], dims[d][1], dims[d][2], 1, list, count);
    assert_true(deep_candidates(list, count, deep_kc[d], isa) > 0);
    for (size_t i = 0; i < count; i++)
      for (int v = 0; v < 4; v++)
        shallow[v] += list[i].kc == kcs[v];
    for (int v = 1; v < 4; v++) /* every class, every tile, at each kc of before */
      assert_int_equal(shallow[v], shallow[0]);
    assert_int_equal(shallow[0] * 4 + deep_candidates(list, count, deep_kc[d], isa), count);
    /* a policy of the old list (mc target 256, kc 384) is still a point */
    assert_int_equal(cpu_gemm_space_init(&sp, list, count), 0);
    for (size_t i = 0; i < count; i++)
      if (list[i].kc == 384 && list[i].mc > 200) {
        assert_int_equal(cpu_gemm_space_assignment(&sp, &list[i], point), 0);
        break;
      }
    cpu_gemm_space_free(&sp);
    free(list);
  }
  { /* k <= 512: 512 and 1024 both collapse onto k, one candidate each */
    size_t count = cpu_gemm_candidates(isa, 256, 256, 512, 1, NULL, 0);
    gemm_config *list = malloc(count * sizeof *list);
    assert_non_null(list);
    cpu_gemm_candidates(isa, 256, 256, 512, 1, list, count);
    for (size_t i = 0; i < count; i++)
      assert_true(list[i].kc <= 512);
    free(list);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bad_policies_are_refused_with_a_reason),
      cmocka_unit_test(the_length_not_the_nul_ends_a_policy),
      cmocka_unit_test(a_kernel_above_the_isa_class_is_refused_by_name),
      cmocka_unit_test(every_candidate_is_accepted_and_round_trips),
      cmocka_unit_test(the_default_is_valid_for_every_shape),
      cmocka_unit_test(random_bytes_never_crash_the_parser),
      cmocka_unit_test(split_b_is_a_batch_candidate_and_round_trips),
      cmocka_unit_test(deep_products_get_kc_1024_on_the_best_class),
  };
  return cmocka_run_group_tests_name("gemm_policy", tests, NULL, NULL);
}
