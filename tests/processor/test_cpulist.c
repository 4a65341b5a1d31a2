/*
 * test_cpulist.c: CPU lists ("0-3,6", "all"): what parses, what is refused,
 * and the canonical formatting.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "processor/processor.h"

static void parses_indices_and_ranges(void **state) {
  int *cpus = NULL, all = -1;
  size_t n = 0;
  static const int want[] = {0, 1, 2, 3, 6};
  (void)state;
  assert_int_equal(processor_cpulist_parse("0-3,6", &cpus, &n, &all, NULL, 0), 0);
  assert_int_equal(all, 0);
  assert_int_equal(n, 5);
  assert_memory_equal(cpus, want, sizeof want);
  free(cpus);
  /* spaces around items, out of order: sorted */
  assert_int_equal(processor_cpulist_parse(" 6 , 0 - 3 ", &cpus, &n, &all, NULL, 0), 0);
  assert_int_equal(n, 5);
  assert_memory_equal(cpus, want, sizeof want);
  free(cpus);
  assert_int_equal(processor_cpulist_parse("5", &cpus, &n, &all, NULL, 0), 0);
  assert_int_equal(n, 1);
  assert_int_equal(cpus[0], 5);
  free(cpus);
  assert_int_equal(processor_cpulist_parse("4095", &cpus, &n, &all, NULL, 0), 0);
  free(cpus);
}

static void all_means_every_cpu(void **state) {
  int *cpus = (int *)1, all = 0;
  size_t n = 7;
  (void)state;
  assert_int_equal(processor_cpulist_parse("all", &cpus, &n, &all, NULL, 0), 0);
  assert_int_equal(all, 1);
  assert_null(cpus);
  assert_int_equal(n, 0);
  assert_int_equal(processor_cpulist_parse(" ALL ", &cpus, &n, &all, NULL, 0), 0);
  assert_int_equal(all, 1);
}

static void refuses_bad_lists_with_a_reason(void **state) {
  static const char *bad[] = {"",       "  ",  "3-1",  "0,0", "0-3,2", "a",
                              "1-",     "-1",  "1,,2", ",1",  "1,",    "4096",
                              "0-4096", "1 2", "1;2",  "al",  "all,1", "99999999999"};
  (void)state;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int *cpus = (int *)1, all = 1;
    size_t n = 9;
    char err[256] = "";
    if (processor_cpulist_parse(bad[i], &cpus, &n, &all, err, sizeof err) == 0)
      fail_msg("accepted '%s'", bad[i]);
    assert_null(cpus);
    assert_int_equal(n, 0);
    assert_int_equal(all, 0);
    assert_true(err[0] != '\0');
  }
}

static void formats_in_canonical_form(void **state) {
  char buf[64];
  static const int a[] = {6, 0, 1, 2, 3};
  static const int b[] = {1, 3, 5};
  static const int c[] = {4, 4, 5};
  (void)state;
  assert_int_equal(processor_cpulist_format(a, 5, buf, sizeof buf), 5);
  assert_string_equal(buf, "0-3,6");
  processor_cpulist_format(b, 3, buf, sizeof buf);
  assert_string_equal(buf, "1,3,5");
  processor_cpulist_format(c, 3, buf, sizeof buf);
  assert_string_equal(buf, "4-5");
  processor_cpulist_format(NULL, 0, buf, sizeof buf);
  assert_string_equal(buf, "all");
  /* snprintf-like: the full length, truncated output */
  assert_int_equal(processor_cpulist_format(a, 5, buf, 3), 5);
  assert_string_equal(buf, "0-");
  assert_int_equal(processor_cpulist_format(a, 5, NULL, 0), 5);
}

static void format_then_parse_round_trips(void **state) {
  static const int set[] = {0, 2, 3, 4, 8, 10, 11};
  char buf[64];
  int *cpus;
  size_t n;
  int all;
  (void)state;
  processor_cpulist_format(set, 7, buf, sizeof buf);
  assert_string_equal(buf, "0,2-4,8,10-11");
  assert_int_equal(processor_cpulist_parse(buf, &cpus, &n, &all, NULL, 0), 0);
  assert_int_equal(n, 7);
  assert_memory_equal(cpus, set, sizeof set);
  free(cpus);
}

static void allowed_cpus_are_the_affinity_mask(void **state) {
  int *cpus;
  size_t n;
  (void)state;
  assert_int_equal(processor_allowed_cpus(&cpus, &n, NULL, 0), 0);
  assert_true(n >= 1);
  for (size_t i = 1; i < n; i++)
    assert_true(cpus[i - 1] < cpus[i]);
  free(cpus);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(parses_indices_and_ranges),
      cmocka_unit_test(all_means_every_cpu),
      cmocka_unit_test(refuses_bad_lists_with_a_reason),
      cmocka_unit_test(formats_in_canonical_form),
      cmocka_unit_test(format_then_parse_round_trips),
      cmocka_unit_test(allowed_cpus_are_the_affinity_mask),
  };
  return cmocka_run_group_tests_name("processor_cpulist", tests, NULL, NULL);
}
