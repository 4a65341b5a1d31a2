/*
 * test_stats.c: the statistics of the measurement engine on synthetic
 * timings: median, quantiles, MAD, CV, the noise flag and pruning decisions.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sweep/stats.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void median_of_odd_and_even_counts(void **state) {
  (void)state;
  double odd[] = {5, 1, 3};
  double even[] = {4, 1, 3, 2};
  double one[] = {7};
  assert_float_equal(sweep_stats_median(odd, N(odd)), 3.0, 1e-12);
  assert_float_equal(sweep_stats_median(even, N(even)), 2.5, 1e-12);
  assert_float_equal(sweep_stats_median(one, 1), 7.0, 1e-12);
  assert_true(isnan(sweep_stats_median(NULL, 0)));
}

static void median_does_not_modify_input(void **state) {
  (void)state;
  double v[] = {3, 2, 1};
  sweep_stats_median(v, 3);
  assert_float_equal(v[0], 3, 0);
  assert_float_equal(v[2], 1, 0);
}

static void quantiles_interpolate(void **state) {
  (void)state;
  double v[] = {10, 20, 30, 40, 50};
  assert_float_equal(sweep_stats_quantile(v, 5, 0.0), 10, 1e-12);
  assert_float_equal(sweep_stats_quantile(v, 5, 0.25), 20, 1e-12);
  assert_float_equal(sweep_stats_quantile(v, 5, 1.0), 50, 1e-12);
  assert_float_equal(sweep_stats_quantile(v, 5, 0.125), 15, 1e-12);
}

static void mad_is_robust_to_an_outlier(void **state) {
  (void)state;
  double v[] = {10, 10, 11, 9, 10, 1000};
  /* median 10; deviations 0,0,1,1,0,990 -> median 0.5 */
  assert_float_equal(sweep_stats_mad(v, N(v)), 0.5, 1e-12);
  double one[] = {3};
  assert_float_equal(sweep_stats_mad(one, 1), 0.0, 0);
}

static void cv_of_constant_and_spread_samples(void **state) {
  (void)state;
  double c[] = {5, 5, 5, 5};
  assert_float_equal(sweep_stats_cv(c, 4), 0.0, 1e-12);
  double v[] = {1, 2, 3, 4}; /* mean 2.5, sample sd 1.2910 */
  assert_float_equal(sweep_stats_cv(v, 4), 1.2909944487 / 2.5, 1e-9);
  double one[] = {9};
  assert_float_equal(sweep_stats_cv(one, 1), 0.0, 0);
}

static void noise_flag_follows_threshold(void **state) {
  (void)state;
  assert_false(sweep_stats_is_noisy(100, 1, 0.01, 0.05));
  assert_true(sweep_stats_is_noisy(100, 1, 0.30, 0.05));  /* CV, far above */
  assert_false(sweep_stats_is_noisy(100, 1, 0.20, 0.05)); /* CV alone: one outlier */
  assert_true(sweep_stats_is_noisy(100, 10, 0.01, 0.05)); /* relative MAD */
  sweep_stats s;
  double quiet[] = {100, 101, 99, 100, 100};
  double loud[] = {100, 150, 60, 130, 80};
  assert_int_equal(sweep_stats_summarize(quiet, N(quiet), 0.05, &s), 0);
  assert_false(s.noisy);
  assert_float_equal(s.median, 100, 1e-12);
  assert_float_equal(s.min, 99, 0);
  assert_int_equal(s.n, 5);
  assert_int_equal(sweep_stats_summarize(loud, N(loud), 0.05, &s), 0);
  assert_true(s.noisy);
  assert_int_equal(sweep_stats_summarize(NULL, 0, 0.05, &s), -1);
}

static void figures_carry_the_summary_or_nan(void **state) {
  (void)state;
  double v[] = {100, 101, 99, 100, 140};
  sweep_stats s;
  sweep_figures f;
  assert_int_equal(sweep_stats_summarize(v, N(v), 0.05, &s), 0);
  assert_int_equal(sweep_figures_fill(v, N(v), 7, 0.05, &f), 0);
  assert_float_equal(f.median_us, s.median, 0);
  assert_float_equal(f.mad_us, s.mad, 0);
  assert_float_equal(f.min_us, s.min, 0);
  assert_float_equal(f.cv, s.cv, 0);
  assert_int_equal(f.samples, 5);
  assert_int_equal(f.iterations, 7);
  assert_int_equal(f.noisy, s.noisy);
  /* no samples: no figures */
  assert_int_equal(sweep_figures_fill(NULL, 0, 7, 0.05, &f), -1);
  assert_true(isnan(f.median_us) && isnan(f.mad_us) && isnan(f.min_us) && isnan(f.cv));
  assert_int_equal(f.samples, 0);
  assert_int_equal(f.iterations, 0);
  assert_int_equal(f.noisy, 0);
}

static void prunes_a_clearly_slower_candidate(void **state) {
  (void)state;
  double slow[] = {200, 210, 205};
  assert_true(sweep_stats_should_prune(slow, 3, 100.0, 0.25, 3));
}

static void keeps_a_close_candidate(void **state) {
  (void)state;
  double close[] = {110, 112, 108};
  assert_false(sweep_stats_should_prune(close, 3, 100.0, 0.25, 3));
}

static void waits_for_enough_samples(void **state) {
  (void)state;
  double slow[] = {300, 300};
  assert_false(sweep_stats_should_prune(slow, 2, 100.0, 0.25, 3));
}

static void one_lucky_sample_does_not_save_a_loser_but_a_fast_quarter_does(void **state) {
  (void)state;
  /* lower quartile of {40, 200, 200, 200, 200} is 200: still pruned */
  double lucky[] = {200, 40, 200, 200, 200};
  assert_true(sweep_stats_should_prune(lucky, 5, 100.0, 0.25, 3));
  /* two fast samples out of four move the lower quartile under the bar */
  double mixed[] = {90, 95, 300, 300};
  assert_false(sweep_stats_should_prune(mixed, 4, 100.0, 0.25, 3));
}

static void never_prunes_without_a_leader(void **state) {
  (void)state;
  double v[] = {500, 500, 500};
  assert_false(sweep_stats_should_prune(v, 3, INFINITY, 0.25, 3));
  assert_false(sweep_stats_should_prune(v, 3, 0.0, 0.25, 3));
  assert_false(sweep_stats_should_prune(v, 3, NAN, 0.25, 3));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(median_of_odd_and_even_counts),
      cmocka_unit_test(median_does_not_modify_input),
      cmocka_unit_test(quantiles_interpolate),
      cmocka_unit_test(mad_is_robust_to_an_outlier),
      cmocka_unit_test(cv_of_constant_and_spread_samples),
      cmocka_unit_test(noise_flag_follows_threshold),
      cmocka_unit_test(figures_carry_the_summary_or_nan),
      cmocka_unit_test(prunes_a_clearly_slower_candidate),
      cmocka_unit_test(keeps_a_close_candidate),
      cmocka_unit_test(waits_for_enough_samples),
      cmocka_unit_test(one_lucky_sample_does_not_save_a_loser_but_a_fast_quarter_does),
      cmocka_unit_test(never_prunes_without_a_leader),
  };
  return cmocka_run_group_tests_name("sweep statistics", tests, NULL, NULL);
}
