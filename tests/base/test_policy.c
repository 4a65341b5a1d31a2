/*
 * test_policy.c: the host's one rule for whether two policy texts are the
 * same policy (host/base/policy.h): ';' and the GPU backends' earlier ','
 * separate the same parameters, a ',' inside a value stays a ','.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "base/policy.h"

static void the_separator_of_a_text(void **state) {
  (void)state;
  const char *t[] = {"wg=64;vw=4", "wg=64,vw=4", "shape=1,2", "", "wg=64", "a=1;b=2,3"};
  const char want[] = {';', ',', ';', ';', ';', ';'};
  for (size_t i = 0; i < sizeof want; i++)
    assert_int_equal(base_policy_separator(t[i], strlen(t[i])), want[i]);
  /* only the given bytes count: "a=1,b" cut to "a=1" has no ',' */
  assert_int_equal(base_policy_separator("a=1,b=2", 3), ';');
}

static void the_old_and_new_separators_are_the_same_policy(void **state) {
  (void)state;
  assert_true(base_policy_same("MWG=64,NWG=64,KWG=16", "MWG=64;NWG=64;KWG=16"));
  assert_true(base_policy_same("MWG=64;NWG=64;KWG=16", "MWG=64,NWG=64,KWG=16"));
  assert_true(base_policy_same("MWG=64,NWG=64", "MWG=64,NWG=64"));
  assert_true(base_policy_same("work=2", "work=2"));
  assert_false(base_policy_same("MWG=64,NWG=64", "MWG=64;NWG=32"));
  assert_false(base_policy_same("MWG=64,NWG=64", "MWG=64;NWG=64;KWG=16"));
  /* a ',' inside a value of a ';' text is part of the value */
  assert_false(base_policy_same("a=1;b=2,3", "a=1;b=2;3"));
  assert_true(base_policy_same("shape=1,2", "shape=1,2"));
  assert_false(base_policy_same("shape=1,2", "shape=1;2"));
  assert_false(base_policy_same(NULL, "a=1"));
  assert_false(base_policy_same("a=1", NULL));
  assert_false(base_policy_same(NULL, NULL));
  assert_true(base_policy_same_n("a=1,b=2xyz", 7, "a=1;b=2", 7));
  assert_false(base_policy_same_n("a=1,b=2", 7, "a=1;b=2", 6));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(the_separator_of_a_text),
      cmocka_unit_test(the_old_and_new_separators_are_the_same_policy),
  };
  return cmocka_run_group_tests_name("base_policy", tests, NULL, NULL);
}
