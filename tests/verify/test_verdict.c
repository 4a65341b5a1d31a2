/*
 * test_verdict.c: the verdict rule of `calhost verify` (host/calibrate/verify.h)
 * on numbers: within the threshold is ok; a median beyond it with a fastest
 * sample also beyond it is slower, while a median inflated by noise (a fast
 * sample near the stored time) is ok; a default clearly faster than the
 * stored policy is lost-to-default (never when the stored policy is the
 * default); unknown current numbers never fail a key, a stored median
 * that compares nothing (missing, 0, negative) is invalid; --threshold's
 * parser; names and failing verdicts.
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

#include "calibrate/shard.h"
#include "calibrate/verify.h"
#include "config/values.h"

/* stored median; current median and fastest; default median and fastest */
static calibrate_verify_numbers nums(double stored, double cur, double cur_min, double def,
                                     double def_min) {
  calibrate_verify_numbers n = {stored, cur, cur_min, def, def_min, 0};
  return n;
}

static void within_threshold_is_ok(void **state) {
  (void)state;
  calibrate_verify_numbers n = nums(100, 120, 119, NAN, NAN);
  assert_int_equal(calibrate_verify_judge(&n, 0.25), CALHOST_VERDICT_OK);
  n = nums(100, 130, 127, NAN, NAN);
  assert_int_equal(calibrate_verify_judge(&n, 0.25), CALHOST_VERDICT_SLOWER);
  assert_int_equal(calibrate_verify_judge(&n, 0.30), CALHOST_VERDICT_OK);
}

static void faster_is_ok(void **state) {
  (void)state;
  calibrate_verify_numbers n = nums(100, 10, 9, 50, 49);
  assert_int_equal(calibrate_verify_judge(&n, 0.25), CALHOST_VERDICT_OK);
}

static void a_median_inflated_by_noise_is_ok(void **state) {
  (void)state;
  /* 4x the stored median, but the fastest sample ran at the stored speed */
  calibrate_verify_numbers n = nums(100, 400, 101, NAN, NAN);
  assert_int_equal(calibrate_verify_judge(&n, 0.25), CALHOST_VERDICT_OK);
  /* every sample moved: a regression */
  n = nums(100, 400, 300, NAN, NAN);
  assert_int_equal(calibrate_verify_judge(&n, 0.25), CALHOST_VERDICT_SLOWER);
  /* no fastest sample recorded: the medians decide */
  n = nums(100, 400, NAN, NAN, NAN);
  assert_int_equal(calibrate_verify_judge(&n, 0.25), CALHOST_VERDICT_SLOWER);
}

static void default_clearly_faster_is_lost_to_default(void **state) {
  (void)state;
  calibrate_verify_numbers n = nums(100, 100, 98, 40, 39);
  assert_int_equal(calibrate_verify_judge(&n, 0.25), CALHOST_VERDICT_LOST_TO_DEFAULT);
  /* also when slower than stored: losing to the default is the stronger finding */
  n = nums(10, 100, 98, 40, 39);
  assert_int_equal(calibrate_verify_judge(&n, 0.25), CALHOST_VERDICT_LOST_TO_DEFAULT);
  /* a default within the threshold does not win */
  n = nums(100, 100, 98, 85, 84);
  assert_int_equal(calibrate_verify_judge(&n, 0.25), CALHOST_VERDICT_OK);
  /* nor one whose lead is noise: the policy's fastest sample beats it */
  n = nums(100, 100, 45, 60, 58);
  assert_int_equal(calibrate_verify_judge(&n, 0.25), CALHOST_VERDICT_OK);
}

static void stored_default_never_loses_to_itself(void **state) {
  (void)state;
  calibrate_verify_numbers n = nums(100, 100, 98, 40, 39);
  n.policy_is_default = 1;
  assert_int_equal(calibrate_verify_judge(&n, 0.25), CALHOST_VERDICT_OK);
}

/* issue 22 item 17: a stored median that is missing, 0, negative or not
 * finite compares nothing, so it is never "ok" (it was) */
static void a_stored_median_that_compares_nothing_is_invalid(void **state) {
  (void)state;
  const double bad[] = {NAN, 0, -0.0, -5, INFINITY, -INFINITY};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    calibrate_verify_numbers n = nums(bad[i], 100, 99, NAN, NAN);
    assert_int_equal(calibrate_verify_judge(&n, 0.25), CALHOST_VERDICT_INVALID);
    n = nums(bad[i], 100, 99, 110, 109); /* a default within the threshold */
    assert_int_equal(calibrate_verify_judge(&n, 0.25), CALHOST_VERDICT_INVALID);
  }
  /* losing to the default needs no stored median */
  calibrate_verify_numbers n = nums(0, 100, 98, 40, 39);
  assert_int_equal(calibrate_verify_judge(&n, 0.25), CALHOST_VERDICT_LOST_TO_DEFAULT);
  /* a tiny but positive stored median is compared */
  n = nums(1e-300, 100, 99, NAN, NAN);
  assert_int_equal(calibrate_verify_judge(&n, 0.25), CALHOST_VERDICT_SLOWER);
}

/* issue 22 item 17: --threshold goes through the shared decimal parser:
 * a fraction or a percentage, 0 to 10 (1000 %); no hex, exponent or sign,
 * and a bare 25 (2500 %) is refused saying a bare number is a fraction */
static void the_threshold_is_a_decimal_fraction_or_percentage(void **state) {
  (void)state;
  double v = -1;
  char why[256];
  assert_int_equal(config_value_fraction("0.25", CALHOST_VERIFY_MAX_THRESHOLD, &v, why, sizeof why),
                   0);
  assert_true(v == 0.25);
  assert_int_equal(config_value_fraction("25%", CALHOST_VERIFY_MAX_THRESHOLD, &v, why, sizeof why),
                   0);
  assert_true(v == 0.25);
  assert_int_equal(config_value_fraction("3", CALHOST_VERIFY_MAX_THRESHOLD, &v, why, sizeof why),
                   0);
  assert_true(v == 3);
  assert_int_equal(config_value_fraction("0", CALHOST_VERIFY_MAX_THRESHOLD, &v, why, sizeof why),
                   0);
  assert_true(v == 0);
  const char *refused[] = {"0x10",  "1e-1", "-0.1",  "+0.5",    "inf",  "nan",  "",      "%",
                           "25 %%", ".",    "1.2.3", "1000.1%", " 0.5", "0.5 ", "\t25%", " 25% "};
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    v = -1;
    assert_int_equal(
        config_value_fraction(refused[i], CALHOST_VERIFY_MAX_THRESHOLD, &v, why, sizeof why), -1);
    assert_true(v == -1);
  }
  assert_int_equal(config_value_fraction("25", CALHOST_VERIFY_MAX_THRESHOLD, &v, why, sizeof why),
                   -1);
  assert_non_null(strstr(why, "2500%"));
  assert_non_null(strstr(why, "a bare number is a fraction"));
}

/* issue 36 item 8: every numeric value (the CLI's options and the
 * config's values, one parser: config/values.h) refuses a blank before or
 * after it; blanks stay allowed around a list's items */
static void every_number_refuses_a_blank_around_it(void **state) {
  (void)state;
  const char *const pre[] = {" ", "", "\t", ""}, *const post[] = {"", " ", "", "\n"};
  for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++) {
    char t[64];
    unsigned long long u;
    double d;
    uint32_t n, *list = NULL, ev;
    size_t count = 0, rank;
    int64_t dims[CALHOST_MAX_SHAPE_RANK];
    char **devs = NULL;
    int all = 0, b, strategy;
    calibrate_shard sh;
#define FORM(v) (snprintf(t, sizeof t, "%s%s%s", pre[i], v, post[i]), t)
    assert_int_equal(config_value_uint(FORM("5"), 0, 10, &u, NULL, 0), -1);
    assert_int_equal(config_value_fraction(FORM("0.5"), 10, &d, NULL, 0), -1);
    assert_int_equal(config_value_duration(FORM("20s"), 1, &d, NULL, 0), -1);
    assert_int_equal(config_value_repetitions(FORM("3"), &n, NULL, 0), -1);
    assert_int_equal(config_value_thread_count(FORM("4"), &n, NULL, 0), -1);
    assert_int_equal(config_value_threads(FORM("1,2"), &list, &count, NULL, 0), -1);
    assert_int_equal(config_value_shape(FORM("4,4"), dims, &rank, NULL, 0), -1);
    assert_int_equal(config_value_devices(FORM("0,1"), &devs, &count, &all, NULL, 0), -1);
    assert_int_equal(config_value_search_budget(FORM("200"), &ev, &d, NULL, 0), -1);
    assert_int_equal(config_value_bool(FORM("1"), &b, NULL, 0), -1);
    assert_int_equal(config_value_strategy(FORM("random"), &strategy, NULL, 0), -1);
    assert_int_equal(calibrate_shard_parse(FORM("0/2"), &sh, NULL, 0), -1);
#undef FORM
    assert_null(list);
    assert_null(devs);
  }
  /* the same values without the blank, and blanks around list items */
  unsigned long long u;
  uint32_t *list = NULL;
  size_t count = 0;
  calibrate_shard sh;
  assert_int_equal(config_value_uint("5", 0, 10, &u, NULL, 0), 0);
  assert_int_equal(config_value_threads("1, 2", &list, &count, NULL, 0), 0);
  assert_int_equal(count, 2);
  free(list);
  assert_int_equal(calibrate_shard_parse("1/2", &sh, NULL, 0), 0);
  assert_int_equal(sh.index, 1);
  assert_int_equal(sh.count, 2);
  assert_int_equal(calibrate_shard_parse("1/ 2", &sh, NULL, 0), -1);
  assert_int_equal(calibrate_shard_parse("+1/2", &sh, NULL, 0), -1);
  assert_int_equal(calibrate_shard_parse("2/2", &sh, NULL, 0), -1);
}

static void unknown_numbers_do_not_fail(void **state) {
  (void)state;
  calibrate_verify_numbers n = nums(100, NAN, NAN, 10, 9); /* nothing measured */
  assert_int_equal(calibrate_verify_judge(&n, 0.25), CALHOST_VERDICT_OK);
  n = nums(100, 1000, 990, NAN, NAN);
  assert_int_equal(calibrate_verify_judge(&n, NAN), CALHOST_VERDICT_SLOWER); /* default 0.25 */
  assert_int_equal(calibrate_verify_judge(&n, -1), CALHOST_VERDICT_SLOWER);
}

static void names_and_failing_verdicts(void **state) {
  (void)state;
  const char *want[] = {"ok",      "slower",  "lost-to-default", "outdated",
                        "invalid", "missing", "error",           "override"};
  for (int i = 0; i <= CALHOST_VERDICT_OVERRIDE; i++)
    assert_string_equal(calibrate_verdict_name((calibrate_verdict)i), want[i]);
  assert_string_equal(calibrate_verdict_name((calibrate_verdict)99), "unknown");
  assert_false(calibrate_verdict_failed(CALHOST_VERDICT_OK));
  assert_true(calibrate_verdict_failed(CALHOST_VERDICT_SLOWER));
  assert_true(calibrate_verdict_failed(CALHOST_VERDICT_LOST_TO_DEFAULT));
  assert_true(calibrate_verdict_failed(CALHOST_VERDICT_OUTDATED));
  assert_true(calibrate_verdict_failed(CALHOST_VERDICT_INVALID));
  assert_false(calibrate_verdict_failed(CALHOST_VERDICT_MISSING));
  assert_false(calibrate_verdict_failed(CALHOST_VERDICT_ERROR));
  assert_false(calibrate_verdict_failed(CALHOST_VERDICT_OVERRIDE));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(within_threshold_is_ok),
      cmocka_unit_test(faster_is_ok),
      cmocka_unit_test(a_median_inflated_by_noise_is_ok),
      cmocka_unit_test(default_clearly_faster_is_lost_to_default),
      cmocka_unit_test(stored_default_never_loses_to_itself),
      cmocka_unit_test(unknown_numbers_do_not_fail),
      cmocka_unit_test(a_stored_median_that_compares_nothing_is_invalid),
      cmocka_unit_test(the_threshold_is_a_decimal_fraction_or_percentage),
      cmocka_unit_test(every_number_refuses_a_blank_around_it),
      cmocka_unit_test(names_and_failing_verdicts),
  };
  return cmocka_run_group_tests_name("verify_verdict", tests, NULL, NULL);
}
