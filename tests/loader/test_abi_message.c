/*
 * test_abi_message.c: what the loader says when negotiation finds no common
 * ABI version: a plugin that left vtable.abi_version at 0
 * (calhost_negotiate_default then reports the empty range 1..0) is refused
 * with both ranges and a hint, probed or not; a plugin declaring a newer
 * ABI than the host's (99) is negotiated down to the host's newest, not
 * refused as a mismatch. The plugins are abi_unset_plugin.c, built into
 * ABI_TEST_PLUGIN_DIR.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "loader/loader.h"

/* Opens ABI_TEST_PLUGIN_DIR/NAME.so with the host's own range. */
static loader_plugin *open_plugin(const char *name, int probe) {
  loader_options o;
  char path[4096];
  loader_options_init(&o);
  o.probe = probe;
  snprintf(path, sizeof path, "%s/%s.so", ABI_TEST_PLUGIN_DIR, name);
  loader_plugin *p = loader_open(&o, NULL, path);
  assert_non_null(p);
  return p;
}

static void abi_version_unset_names_both_ranges(void **state) {
  char want[256];
  (void)state;
  snprintf(want, sizeof want,
           "ABI mismatch: plugin supports ABI %u..0, host supports %u..%u (an empty range: is "
           "vtable.abi_version set?)",
           (unsigned)CALHOST_ABI_VERSION_MIN, (unsigned)CALHOST_ABI_VERSION_MIN,
           (unsigned)CALHOST_ABI_VERSION);
  for (int probe = 0; probe < 2; probe++) {
    loader_plugin *p = open_plugin("test_abi_unset", probe);
    assert_false(p->loaded);
    assert_non_null(p->reason);
    if (!strstr(p->reason, want))
      fail_msg("probe %d: reason '%s', expected '%s'", probe, p->reason, want);
    assert_null(strstr(p->reason, "found no common version"));
    assert_int_equal(p->plugin_abi_min, CALHOST_ABI_VERSION_MIN);
    assert_int_equal(p->plugin_abi_max, 0);
    loader_plugin_free(p);
  }
}

static void newer_abi_is_negotiated_down(void **state) {
  (void)state;
  for (int probe = 0; probe < 2; probe++) {
    loader_plugin *p = open_plugin("test_abi_99", probe);
    assert_false(p->loaded); /* its vtable has no functions */
    assert_non_null(p->reason);
    if (strstr(p->reason, "ABI mismatch") || !strstr(p->reason, "required vtable entry"))
      fail_msg("probe %d: reason '%s'", probe, p->reason);
    assert_int_equal(p->plugin_abi_max, 99);
    loader_plugin_free(p);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(abi_version_unset_names_both_ranges),
      cmocka_unit_test(newer_abi_is_negotiated_down),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
