/*
 * test_plan.c: rigor levels (how candidates are measured; which ones run is
 * the search's choice: tests/sweep/test_measure.c and tests/search).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sweep/rigor.h"

static void quick_measures_few_short_samples(void **state) {
  (void)state;
  sweep_rigor_params q, m, e;
  sweep_rigor_params_init(CALHOST_RIGOR_QUICK, 0, &q);
  sweep_rigor_params_init(CALHOST_RIGOR_MEASURE, 0, &m);
  sweep_rigor_params_init(CALHOST_RIGOR_EXHAUSTIVE, 0, &e);
  assert_true(q.min_sample_seconds < m.min_sample_seconds);
  assert_true(m.min_sample_seconds < e.min_sample_seconds);
  assert_true(q.repetitions < m.repetitions && m.repetitions < e.repetitions);
  assert_true(q.prune && m.prune && !e.prune);
  assert_true(m.halving && !q.halving && !e.halving);
}

static void repetitions_override_is_kept_above_prune_minimum(void **state) {
  (void)state;
  sweep_rigor_params p;
  sweep_rigor_params_init(CALHOST_RIGOR_MEASURE, 7, &p);
  assert_int_equal(p.repetitions, 7);
  sweep_rigor_params_init(CALHOST_RIGOR_MEASURE, 1, &p);
  assert_int_equal(p.repetitions, p.prune_after);
  sweep_rigor_params_init(CALHOST_RIGOR_EXHAUSTIVE, 1, &p);
  assert_int_equal(p.repetitions, 1);
}

static void rigor_words_round_trip(void **state) {
  (void)state;
  sweep_rigor r;
  assert_int_equal(base_rigor_parse("quick", &r), 0);
  assert_int_equal(r, CALHOST_RIGOR_QUICK);
  assert_string_equal(base_rigor_name(CALHOST_RIGOR_EXHAUSTIVE), "exhaustive");
  assert_int_equal(base_rigor_parse("measure", &r), 0);
  assert_int_equal(r, CALHOST_RIGOR_MEASURE);
  assert_int_equal(base_rigor_parse("fast", &r), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(quick_measures_few_short_samples),
      cmocka_unit_test(repetitions_override_is_kept_above_prune_minimum),
      cmocka_unit_test(rigor_words_round_trip),
  };
  return cmocka_run_group_tests_name("sweep rigor plans", tests, NULL, NULL);
}
