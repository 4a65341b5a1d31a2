/*
 * test_shard.c: the shard rule of fleet calibration (host/calibrate/shard.h):
 * "I/N" parsing, every item in exactly one shard for every N, the split
 * independent of the other items and of their order, a statistically even
 * split of many items, the device part of the identity, and the rule's
 * values pinned (a changed hash would move items between shards of a
 * campaign in flight: a retried shard would run other items).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "calibrate/shard.h"

static void parse_accepts_i_of_n(void **state) {
  (void)state;
  calibrate_shard s;
  char why[200];
  assert_int_equal(calibrate_shard_parse("0/1", &s, why, sizeof why), 0);
  assert_int_equal(s.index, 0);
  assert_int_equal(s.count, 1);
  assert_int_equal(calibrate_shard_parse("3/4", &s, why, sizeof why), 0);
  assert_int_equal(s.index, 3);
  assert_int_equal(s.count, 4);
  assert_int_equal(calibrate_shard_parse("65535/65536", &s, why, sizeof why), 0);
  assert_int_equal(s.count, CALHOST_SHARD_MAX);
}

static void parse_refuses_bad_text(void **state) {
  (void)state;
  const char *bad[] = {"",
                       "1",
                       "/2",
                       "1/",
                       "a/2",
                       "1/b",
                       "-1/2",
                       "+1/2",
                       "1/-2",
                       "2/2",
                       "5/4",
                       "0/0",
                       " 0/2",
                       "0/2 ",
                       "0/2/3",
                       "1.0/2",
                       "0x1/2",
                       "1/65537",
                       "0/99999999999999999999",
                       NULL};
  for (size_t i = 0; bad[i]; i++) {
    calibrate_shard s = {7, 7};
    char why[200] = "";
    if (calibrate_shard_parse(bad[i], &s, why, sizeof why) != -1)
      fail_msg("'%s' was accepted", bad[i]);
    assert_true(strlen(why) > 0);
    assert_int_equal(s.index, 7); /* untouched */
  }
  calibrate_shard s;
  char why[200];
  assert_int_equal(calibrate_shard_parse(NULL, &s, why, sizeof why), -1);
  calibrate_shard_parse("2/2", &s, why, sizeof why);
  assert_non_null(strstr(why, "below N"));
}

/* The items of a made-up fleet: backends x workloads x thread counts. */
#define NB 3
#define NW 40
#define NT 4
static const char *backends[NB] = {"cpu_gemm", "openblas", "example"};
static const uint32_t threads[NT] = {1, 2, 4, 64};

static void workload_name(char *buf, size_t cap, size_t w) {
  snprintf(buf, cap, "matmul_%zux%zux%zu", 32 * (w + 1), 64 + w, 7 * w + 1);
}

static void every_item_in_exactly_one_shard(void **state) {
  (void)state;
  for (uint32_t n = 1; n <= 9; n++) {
    size_t per_shard[9] = {0};
    for (size_t b = 0; b < NB; b++)
      for (size_t w = 0; w < NW; w++)
        for (size_t t = 0; t < NT; t++) {
          char name[64];
          workload_name(name, sizeof name, w);
          uint32_t of = calibrate_shard_of(backends[b], name, threads[t], NULL, n);
          assert_true(of < n);
          size_t owners = 0;
          for (uint32_t i = 0; i < n; i++) {
            calibrate_shard s = {i, n};
            owners += (size_t)calibrate_shard_has(&s, backends[b], name, threads[t], NULL);
            if (calibrate_shard_has(&s, backends[b], name, threads[t], NULL))
              assert_int_equal(i, of);
          }
          assert_int_equal(owners, 1);
          per_shard[of]++;
        }
    size_t total = 0;
    for (uint32_t i = 0; i < n; i++)
      total += per_shard[i];
    assert_int_equal(total, (size_t)NB * NW * NT); /* the union is the whole run */
  }
  /* unsharded: everything */
  calibrate_shard none = {0, 0};
  assert_true(calibrate_shard_has(&none, "x", "y", 3, NULL));
  assert_true(calibrate_shard_has(NULL, "x", "y", 3, NULL));
  assert_int_equal(calibrate_shard_of("x", "y", 3, NULL, 0), 0);
  assert_int_equal(calibrate_shard_of("x", "y", 3, NULL, 1), 0);
}

/* An item's shard depends on the item alone: computing the split over the
 * items in reverse order, or with a third of them removed, gives every
 * remaining item the same shard. */
static void split_independent_of_other_items_and_order(void **state) {
  (void)state;
  static uint32_t forward[NB * NW * NT];
  size_t k = 0;
  for (size_t b = 0; b < NB; b++)
    for (size_t w = 0; w < NW; w++)
      for (size_t t = 0; t < NT; t++) {
        char name[64];
        workload_name(name, sizeof name, w);
        forward[k++] = calibrate_shard_of(backends[b], name, threads[t], NULL, 5);
      }
  k = NB * NW * NT;
  for (size_t b = NB; b-- > 0;)
    for (size_t w = NW; w-- > 0;)
      for (size_t t = NT; t-- > 0;) {
        k--;
        if (w % 3 == 1)
          continue; /* removed from the configuration */
        char name[64];
        workload_name(name, sizeof name, w);
        assert_int_equal(calibrate_shard_of(backends[b], name, threads[t], NULL, 5), forward[k]);
      }
}

/* 2000 items over 4 shards: each within 15% of 500 (the hash spreads them;
 * the bound is about 5 standard deviations). */
static void many_items_split_evenly(void **state) {
  (void)state;
  size_t per[4] = {0};
  for (size_t i = 0; i < 2000; i++) {
    char name[32];
    snprintf(name, sizeof name, "w%zu", i / 2);
    per[calibrate_shard_of("cpu_gemm", name, (uint32_t)(1 + i % 2), NULL, 4)]++;
  }
  for (size_t i = 0; i < 4; i++) {
    if (per[i] < 425 || per[i] > 575)
      fail_msg("shard %zu holds %zu of 2000 items", i, per[i]);
  }
}

/* The identity's fields are separated: ("ab", "c") and ("a", "bc") are
 * different items; a device is part of the identity, an empty one is none. */
static void identity_fields_and_device(void **state) {
  (void)state;
  size_t differ = 0, device_moves = 0;
  for (uint32_t n = 2; n < 200; n++) {
    differ +=
        calibrate_shard_of("ab", "c", 1, NULL, n) != calibrate_shard_of("a", "bc", 1, NULL, n);
    assert_int_equal(calibrate_shard_of("a", "b", 1, NULL, n),
                     calibrate_shard_of("a", "b", 1, "", n));
    device_moves +=
        calibrate_shard_of("a", "b", 1, NULL, n) != calibrate_shard_of("a", "b", 1, "gpu0", n);
  }
  assert_true(differ > 100);
  assert_true(device_moves > 100);
  assert_int_not_equal(calibrate_shard_of("a", "b", 1, NULL, 1000),
                       calibrate_shard_of("a", "b", 2, NULL, 1000));
}

/* The rule's values, pinned: the hash is a contract with campaigns in
 * flight (shard.h). Computed independently from the documented rule:
 * FNV-1a 64 over "cpu_gemm\0matmul_square_256\0" "1", MurmurHash3 fmix64,
 * mod N. */
static uint64_t ref_hash(const char *bytes, size_t n) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)bytes[i];
    h *= 1099511628211ull;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

static void rule_matches_its_documentation(void **state) {
  (void)state;
  static const char id[] = "cpu_gemm\0matmul_square_256\0"
                           "1";
  static const char dev[] = "cpu_gemm\0matmul_square_256\0"
                            "1\0gpu0";
  uint64_t h = ref_hash(id, sizeof id - 1), hd = ref_hash(dev, sizeof dev - 1);
  for (uint32_t n = 2; n < 100; n++) {
    assert_int_equal(calibrate_shard_of("cpu_gemm", "matmul_square_256", 1, NULL, n), h % n);
    assert_int_equal(calibrate_shard_of("cpu_gemm", "matmul_square_256", 1, "gpu0", n), hd % n);
  }
  /* and pinned (computed by hand from the rule): it must never change */
  assert_int_equal(calibrate_shard_of("cpu_gemm", "matmul_square_256", 1, NULL, 1000), h % 1000);
  assert_int_equal(h, 0xd3dce21507fd5ec6ull);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(parse_accepts_i_of_n),
      cmocka_unit_test(parse_refuses_bad_text),
      cmocka_unit_test(every_item_in_exactly_one_shard),
      cmocka_unit_test(split_independent_of_other_items_and_order),
      cmocka_unit_test(many_items_split_evenly),
      cmocka_unit_test(identity_fields_and_device),
      cmocka_unit_test(rule_matches_its_documentation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
