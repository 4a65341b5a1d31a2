/*
 * test_plan.c: rigor levels and the choice of the candidate subset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sweep/plan.h"

static void quick_measures_few_short_samples(void **state) {
  (void)state;
  calhost_rigor_params q, m, e;
  calhost_rigor_params_init(CALHOST_RIGOR_QUICK, 0, &q);
  calhost_rigor_params_init(CALHOST_RIGOR_MEASURE, 0, &m);
  calhost_rigor_params_init(CALHOST_RIGOR_EXHAUSTIVE, 0, &e);
  assert_true(q.max_candidates >= 8 && q.max_candidates <= 16);
  assert_int_equal(m.max_candidates, 0);
  assert_int_equal(e.max_candidates, 0);
  assert_true(q.min_sample_seconds < m.min_sample_seconds);
  assert_true(m.min_sample_seconds < e.min_sample_seconds);
  assert_true(q.repetitions < m.repetitions && m.repetitions < e.repetitions);
  assert_true(q.prune && m.prune && !e.prune);
  assert_true(m.halving && !q.halving && !e.halving);
}

static void repetitions_override_is_kept_above_prune_minimum(void **state) {
  (void)state;
  calhost_rigor_params p;
  calhost_rigor_params_init(CALHOST_RIGOR_MEASURE, 7, &p);
  assert_int_equal(p.repetitions, 7);
  calhost_rigor_params_init(CALHOST_RIGOR_MEASURE, 1, &p);
  assert_int_equal(p.repetitions, p.prune_after);
  calhost_rigor_params_init(CALHOST_RIGOR_EXHAUSTIVE, 1, &p);
  assert_int_equal(p.repetitions, 1);
}

static void rigor_words_round_trip(void **state) {
  (void)state;
  calhost_rigor r;
  assert_int_equal(calhost_rigor_parse("quick", &r), 0);
  assert_int_equal(r, CALHOST_RIGOR_QUICK);
  assert_string_equal(calhost_rigor_name(CALHOST_RIGOR_EXHAUSTIVE), "exhaustive");
  assert_int_equal(calhost_rigor_parse("measure", &r), 0);
  assert_int_equal(r, CALHOST_RIGOR_MEASURE);
  assert_int_equal(calhost_rigor_parse("fast", &r), -1);
}

static void all_candidates_when_no_limit_or_few(void **state) {
  (void)state;
  uint32_t out[16];
  assert_int_equal(calhost_plan_select(5, 0, out, 16), 5);
  for (uint32_t i = 0; i < 5; i++)
    assert_int_equal(out[i], i);
  assert_int_equal(calhost_plan_select(5, 12, out, 16), 5);
  assert_int_equal(calhost_plan_select(0, 12, out, 16), 0);
}

static void subset_is_spread_evenly_with_both_ends(void **state) {
  (void)state;
  uint32_t out[16];
  size_t n = calhost_plan_select(100, 12, out, 16);
  assert_int_equal(n, 12);
  assert_int_equal(out[0], 0);
  assert_int_equal(out[11], 99);
  for (size_t i = 1; i < n; i++) {
    assert_true(out[i] > out[i - 1]);
    uint32_t gap = out[i] - out[i - 1];
    assert_true(gap >= 8 && gap <= 10); /* 99 / 11 = 9 */
  }
  n = calhost_plan_select(13, 12, out, 16); /* nearly all: still distinct */
  assert_int_equal(n, 12);
  for (size_t i = 1; i < n; i++)
    assert_true(out[i] > out[i - 1]);
}

static void reports_needed_room(void **state) {
  (void)state;
  uint32_t out[4];
  assert_int_equal(calhost_plan_select(1000, 12, out, 4), 12);
  assert_int_equal(calhost_plan_select(1000, 0, NULL, 0), 1000);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(quick_measures_few_short_samples),
      cmocka_unit_test(repetitions_override_is_kept_above_prune_minimum),
      cmocka_unit_test(rigor_words_round_trip),
      cmocka_unit_test(all_candidates_when_no_limit_or_few),
      cmocka_unit_test(subset_is_spread_evenly_with_both_ends),
      cmocka_unit_test(reports_needed_room),
  };
  return cmocka_run_group_tests_name("sweep rigor plans", tests, NULL, NULL);
}
