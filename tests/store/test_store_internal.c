/*
 * test_store_internal.c: internals that the public API exercises only
 * indirectly: the fast %.17g formatter against printf on millions of
 * values, the identity index under heavy churn. Compiled from the store's
 * sources. Under valgrind the randomized loops run 1/50 of their
 * iterations (tu_iterations), so memcheck on a loaded CI machine stays
 * within the ctest timeout.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>

#include "internal.h"
#include "util.h"

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static void check(double v) {
  char a[64], b[64];
  cs_format_double(a, sizeof a, v);
  snprintf(b, sizeof b, "%.17g", v);
  if (strcmp(a, b))
    fail_msg("%%.17g of %a: fast '%s', printf '%s'", v, a, b);
}

static void format_double_matches_printf(void **state) {
  (void)state;
  static const double fixed[] = {0.0,
                                 -0.0,
                                 1.0,
                                 2.5,
                                 0.1,
                                 1e-07,
                                 1e-5,
                                 9.99999e-6,
                                 1e-4,
                                 0.3,
                                 1234.5678901234567,
                                 1e15,
                                 1e16,
                                 1e17,
                                 4503599627370495.5,
                                 4503599627370496.0,
                                 9007199254740993.0,
                                 -3.25,
                                 1e300,
                                 5e-324,
                                 0.99999999999999999,
                                 9.9999999999999995e-08,
                                 123456789.123};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
    check(fixed[i]);
  long n = tu_iterations(2000000, 50);
  for (long i = 0; i < n; i++) {
    uint64_t bits = rng();
    double v;
    memcpy(&v, &bits, sizeof v);
    if (isfinite(v))
      check(v);
    /* and values in the usual range of measurements */
    check((double)(rng() >> 11) / 9007199254740992.0 * 5000.0);
    check(ldexp((double)(rng() >> 11), -(int)(rng() % 90)));
  }
}

static void check_parse(const char *text) {
  double fast, slow = strtod(text, NULL);
  if (!cs_parse_decimal(text, strlen(text), &fast))
    return; /* outside the fast form: the caller uses strtod */
  if (memcmp(&fast, &slow, sizeof fast))
    fail_msg("'%s': fast %a, strtod %a", text, fast, slow);
}

static void parse_decimal_matches_strtod(void **state) {
  (void)state;
  static const char *fixed[] = {"0",
                                "-0",
                                "0.0",
                                "2.5",
                                "0.1",
                                "1234.5678901234567",
                                "9007199254740993",
                                "18446744073709551615",
                                "0.30000000000000004",
                                "4999.9999999999991",
                                "1.0000000000000002",
                                "0.000001",
                                "123456789012345678.9",
                                "-3.25",
                                "5e3",
                                "1.",
                                ".5",
                                "-",
                                "",
                                "1.2.3",
                                "00012.500",
                                "0.99999999999999999999"};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
    check_parse(fixed[i]);
  double v;
  assert_int_equal(cs_parse_decimal("1e5", 3, &v), 0);
  assert_int_equal(cs_parse_decimal("", 0, &v), 0);
  assert_int_equal(cs_parse_decimal("-", 1, &v), 0);
  assert_int_equal(cs_parse_decimal("2.5", 3, &v), 1);
  assert_true(v == 2.5);
  char buf[64];
  long n = tu_iterations(3000000, 50);
  for (long i = 0; i < n; i++) {
    /* %.17g of a random value, and random digit strings with a point */
    double x = (double)(rng() >> 11) / 9007199254740992.0 * (double)(1ull << (rng() % 40));
    snprintf(buf, sizeof buf, "%.17g", x);
    check_parse(buf);
    int len = 1 + (int)(rng() % 19), point = (int)(rng() % (uint64_t)(len + 1));
    int k = 0;
    for (int j = 0; j < len; j++) {
      if (j == point)
        buf[k++] = '.';
      buf[k++] = (char)('0' + rng() % 10);
    }
    buf[k] = '\0';
    check_parse(buf);
  }
}

static void index_stays_consistent_under_insert_and_delete_churn(void **state) {
  (void)state;
  cs_set *set = cs_set_new();
  char digest[32];
  long rounds = tu_iterations(5, 2);
  for (int round = 0; round < rounds; round++) {
    for (int i = 0; i < 5000; i++) {
      snprintf(digest, sizeof digest, "m%d", i);
      calstore_key k = {
          CALSTORE_KEY_EXACT, "b", i % 2 ? "op1" : "op2", "1", digest, "p", 1, NULL, 0};
      cs_prof *p = cs_prof_create(&k, CALSTORE_SOURCE_CALIBRATED, NULL, 0, "x", 1, NULL, 0, NULL);
      assert_int_equal(cs_set_put(set, p), 0);
    }
    assert_int_equal(set->live, 5000);
    for (int i = 0; i < 5000; i += 2) {
      snprintf(digest, sizeof digest, "m%d", i);
      calstore_key k = {CALSTORE_KEY_EXACT, "b", "op2", "1", digest, "p", 1, NULL, 0};
      long pos = cs_set_find(set, &k, CALSTORE_SOURCE_CALIBRATED,
                             cs_identity_hash(&k, CALSTORE_SOURCE_CALIBRATED));
      assert_true(pos >= 0);
      cs_set_remove_at(set, (size_t)pos);
    }
    assert_int_equal(set->live, 2500);
    assert_int_equal(cs_set_compact(set), 0);
    assert_int_equal(set->n, 2500);
    const cs_group *g = cs_set_group(set, "b", "op1");
    assert_non_null(g);
    assert_int_equal(g->n, 2500);
    assert_null(cs_set_group(set, "b", "op2")
                    ? (void *)(uintptr_t)(cs_set_group(set, "b", "op2")->n)
                    : NULL);
    cs_set *c = cs_set_clone(set, round % 2);
    assert_int_equal(cs_set_invalidate(c, "b", NULL), 2500);
    assert_int_equal(c->live, 0);
    cs_set_free(c);
  }
  cs_set_free(set);
}

/* The parser keeps a record's own text only when it is exactly what the
 * writer renders; every variant below must end up with canonical text. */
static void cached_text_is_canonical(void **state) {
  (void)state;
  static const char *variants[] = {
      "profile exact calibrated\nbackend \"b\"\noperator \"o\"\nimplementation \"1\"\n"
      "model_digest \"d\"\nprocessor \"p \\\"q\\\" \\\\\"\nthread_count 8\n"
      "measurement \"m\" 2.5 \"us\"\nmeasurement \"n\" 57 \"count\"\npolicy \"x\"\nend\n",
      "profile exact calibrated \nbackend \"b\"\noperator \"o\"\nimplementation \"1\"\n"
      "model_digest \"d\"\nprocessor \"p\"\nthread_count 8\npolicy \"x\"\nend\n",
      "profile  exact calibrated\nbackend \"b\"\noperator \"o\"\nimplementation \"1\"\n"
      "model_digest \"d\"\nprocessor \"p\"\nthread_count 8\npolicy \"x\"\nend\n",
      "profile exact calibrated\nbackend  \"b\"\noperator \"o\"\nimplementation \"1\"\n"
      "model_digest \"d\"\nprocessor \"p\"\nthread_count 08\npolicy \"x\"\nend\n",
      "profile exact calibrated\nbackend \"b\"\noperator \"o\"\nimplementation \"1\"\n"
      "model_digest \"\\d\"\nprocessor \"p\"\nthread_count 8\npolicy \"x\" \nend\n",
      "profile exact calibrated\nbackend \"b\"\n# note\noperator \"o\"\nimplementation "
      "\"1\"\nmodel_digest \"d\"\nprocessor \"p\"\nthread_count 8\n\npolicy \"x\"\n end\n",
      "profile exact calibrated\nbackend \"b\"\noperator \"o\"\nimplementation \"1\"\n"
      "model_digest \"d\"\nprocessor \"p\"\nthread_count 8\nmeasurement \"m\" 1e-07 \"s\"\n"
      "measurement \"m2\" 0.1 \"s\"\nmeasurement \"m3\" 2.50 \"s\"\npolicy \"x\"\nend\n",
      "profile portable override\nbackend \"b\"\noperator \"o\"\nimplementation \"1\"\n"
      "structure \"z\" \"1\"\nstructure \"a\" \"2\"\npolicy \"x\"\nend\n",
      "profile portable override\nbackend \"b\"\noperator \"o\"\nimplementation \"1\"\n"
      "structure \"a\" \"1\"\nstructure \"z\" \"2\"\npolicy \"x\"\nend",
  };
  for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
    cs_buf in = {0};
    cs_write_header(&in);
    cs_buf_put(&in, variants[i], strlen(variants[i]));
    cs_set *set = cs_set_new();
    calstore_error err = {0};
    calstore_status st = cs_parse(in.data, in.len, 1, set, NULL, NULL, NULL, &err);
    if (st != CALSTORE_OK)
      fail_msg("variant %zu: %s", i, err.message);
    assert_int_equal(set->live, 1);
    cs_prof *p = set->items[0];
    cs_buf out = {0};
    cs_write_prof(&out, &p->v);
    cs_buf_put(&out, "", 0);
    out.data[out.len] = '\0';
    if (out.len != p->text_len || memcmp(out.data, p->text, out.len))
      fail_msg("variant %zu: cached\n%.*s\nrendered\n%s", i, (int)p->text_len, p->text, out.data);
    cs_buf_free(&out);
    cs_buf_free(&in);
    cs_set_free(set);
  }
}

/* cs_grow, the store's one grow rule: first capacity, doubling to what is
 * needed, contents kept, and nothing lost when the size overflows. */
static void grow_keeps_items_and_refuses_overflow(void **state) {
  (void)state;
  size_t cap = 0;
  int *v = cs_grow(NULL, 1, &cap, sizeof *v, 8);
  assert_non_null(v);
  assert_int_equal(cap, 8);
  for (int i = 0; i < 8; i++)
    v[i] = i * 7;
  assert_ptr_equal(cs_grow(v, 8, &cap, sizeof *v, 8), v); /* room already */
  int *g = cs_grow(v, 33, &cap, sizeof *g, 8);            /* 8 -> 16 -> 32 -> 64 */
  assert_non_null(g);
  v = g;
  assert_int_equal(cap, 64);
  for (int i = 0; i < 8; i++)
    assert_int_equal(v[i], i * 7);
  size_t before = cap;
  assert_null(cs_grow(v, SIZE_MAX / 2 + 2, &cap, sizeof *v, 8));
  assert_null(cs_grow(v, SIZE_MAX / sizeof *v + 1, &cap, sizeof *v, 8));
  assert_int_equal(cap, before);
  assert_int_equal(v[7], 49);
  free(v);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(grow_keeps_items_and_refuses_overflow),
      cmocka_unit_test(format_double_matches_printf),
      cmocka_unit_test(parse_decimal_matches_strtod),
      cmocka_unit_test(index_stays_consistent_under_insert_and_delete_churn),
      cmocka_unit_test(cached_text_is_canonical),
  };
  return cmocka_run_group_tests_name("store_internal", tests, NULL, NULL);
}
