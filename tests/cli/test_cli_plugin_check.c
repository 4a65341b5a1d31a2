/*
 * test_cli_plugin_check.c: `calhost plugin check --setting` with the host's
 * keys of a [plugin NAME] section (issue 36 item 6): devices=... and
 * time_budget=... are calhost's, as calibrate reads the section: never
 * handed to create() (the SDK's device backend example, rowsum_device,
 * refuses any setting but devices_visible), the checks run on the first
 * device selected, an item that names no device fails with the reason, and
 * a malformed value is a usage error from the config's own parsers.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cli_harness.h"

static char example[PATH_MAX + 32]; /* the SDK's device backend example */

static int setup(void **state) {
  (void)state;
  if (cli_harness_setup("plugin-check") != 0)
    return -1;
  snprintf(example, sizeof example, "%s/examples/rowsum_device.so", plugins);
  return access(example, R_OK);
}

static int teardown(void **state) {
  (void)state;
  return cli_harness_teardown();
}

static void host_keys_are_not_handed_to_create(void **state) {
  (void)state;
  run_result *r = run("plugin", "check", example, "--setting", "devices=0", "--setting",
                      "time_budget=30s", NULL);
  if (r->code != 0)
    fail_msg("exit %d:\n%s\n%s", r->code, r->out, r->err);
  HAS(r->out, "17 of 17 checks passed");
  HASNT(r->out, "unknown setting");
  /* with the plugin's own setting beside them: it alone reaches create() */
  r = run("plugin", "check", example, "--setting", "devices_visible=2", "--setting", "devices=all",
          NULL);
  assert_int_equal(r->code, 0);
}

static void the_checks_run_on_the_first_device_selected(void **state) {
  (void)state;
  run_result *r = run("-v", "plugin", "check", example, "--setting", "devices_visible=2",
                      "--setting", "devices=1", NULL);
  if (r->code != 0)
    fail_msg("exit %d:\n%s\n%s", r->code, r->out, r->err);
  HAS(r->out, "the checks ran on device 1");
  r = run("plugin", "check", example, "--setting", "devices=7", NULL);
  assert_int_equal(r->code, 1);
  HAS(r->out, "--setting devices: no device 7");
}

static void malformed_host_keys_are_usage_errors(void **state) {
  (void)state;
  run_result *r = run("plugin", "check", example, "--setting", "time_budget=soon", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "bad --setting time_budget=soon");
  r = run("plugin", "check", example, "--setting", "devices=0,0", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "listed twice");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(host_keys_are_not_handed_to_create),
      cmocka_unit_test(the_checks_run_on_the_first_device_selected),
      cmocka_unit_test(malformed_host_keys_are_usage_errors),
  };
  return cmocka_run_group_tests_name("cli_plugin_check", tests, setup, teardown);
}
