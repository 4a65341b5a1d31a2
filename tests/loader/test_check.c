/*
 * test_check.c: loader_check: the conformance checker passes the example and
 * the good test plugin and fails each misbehaving plugin with a report
 * naming the failed check (a crash, an exit or a hang is a FAIL, not a crash
 * of the checker); and, through the calhost binary when it is built,
 * `calhost plugin check` exits 0 / 1 and `calhost plugins --json` stays
 * valid with a plugin that prints to stdout.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/wait.h>

#include "loader.h"
#include "loader_test_util.h"

/* Runs the checker on path; returns its status and the report (malloc'd). */
static int check_report(const char *path, double timeout, char **report) {
  calhost_check_options o;
  FILE *out = tmpfile();
  long n;
  int rc;
  assert_non_null(out);
  calhost_check_options_init(&o);
  o.timeout_seconds = timeout;
  rc = calhost_plugin_check(path, &o, out);
  fflush(out);
  n = ftell(out);
  rewind(out);
  *report = calloc(1, (size_t)n + 1);
  assert_non_null(*report);
  assert_int_equal(fread(*report, 1, (size_t)n, out), (size_t)n);
  fclose(out);
  return rc;
}

static void example_passes(void **state) {
  char path[4096], *report;
  (void)state;
  assert_int_equal(check_report(example_plugin(path, sizeof path), 30, &report), 0);
  assert_null(strstr(report, "FAIL"));
  assert_non_null(strstr(report, "PASS tiny_sweep"));
  assert_non_null(strstr(report, "PASS validator_refuses_random"));
  assert_non_null(strstr(report, "12 of 12 checks passed"));
  free(report);
  assert_int_equal(check_report(test_plugin(path, sizeof path, "test_good"), 30, &report), 0);
  free(report);
}

static void bad_plugins_fail_with_report(void **state) {
  static const struct {
    const char *plugin, *line;
  } expect[] = {
      {"test_noentry", "FAIL negotiation: no entry point 'calhost_plugin_negotiate'"},
      {"test_abi_range", "FAIL negotiation: ABI mismatch: plugin supports ABI 2..3, host "
                         "supports 1..1"},
      {"test_missing", "FAIL required_functions: required vtable entry 'validate_policy' is "
                       "missing"},
      {"test_crash_negotiate", "FAIL negotiation: crashed (signal 11 SIGSEGV)"},
      {"test_crash_run", "FAIL tiny_sweep: crashed (signal 11 SIGSEGV)"},
      {"test_hang", "FAIL tiny_sweep: timed out after 2 s"},
      {"test_exit", "FAIL tiny_sweep: exited with status 3"},
      {"test_abort", "FAIL tiny_sweep: crashed (signal 6 SIGABRT)"},
      {"test_stdout", "FAIL quiet_stdout: the plugin wrote"},
      {"test_refuse_all", "FAIL policy_roundtrip: the validator refuses policy 0"},
      {"test_empty_policy", "FAIL policy_roundtrip: policy 0 is empty"},
      {"test_oversized", "FAIL policy_roundtrip: policy 0: CALHOST_BUFFER_TOO_SMALL asks for"},
  };
  (void)state;
  for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
    char path[4096], *report;
    int rc = check_report(test_plugin(path, sizeof path, expect[i].plugin), 2, &report);
    if (rc != 1 || !strstr(report, expect[i].line))
      fail_msg("%s: status %d, expected a line '%s' in:\n%s", expect[i].plugin, rc, expect[i].line,
               report);
    free(report);
  }
}

/* Runs a shell command; returns its exit status and output (malloc'd). */
static int run(const char *cmd, char **output) {
  FILE *p = popen(cmd, "r");
  size_t n = 0, cap = 65536;
  int status;
  assert_non_null(p);
  *output = calloc(1, cap);
  for (size_t got; (got = fread(*output + n, 1, cap - n - 1, p)) > 0;)
    n += got;
  status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void cli_plugin_check_and_plugins_json(void **state) {
  char calhost[4096], cmd[16384], path[4096], *out;
  (void)state;
  snprintf(calhost, sizeof calhost, "%s/bin/calhost", build_dir());
  if (access(calhost, X_OK) != 0)
    skip(); /* the CLI is not built in this tree */
  snprintf(cmd, sizeof cmd, "'%s' plugin check '%s' 2>&1", calhost,
           example_plugin(path, sizeof path));
  assert_int_equal(run(cmd, &out), 0);
  assert_non_null(strstr(out, "PASS tiny_sweep"));
  free(out);
  snprintf(cmd, sizeof cmd, "'%s' plugin check --timeout 2 '%s' 2>&1", calhost,
           test_plugin(path, sizeof path, "test_crash_run"));
  assert_int_equal(run(cmd, &out), 1);
  assert_non_null(strstr(out, "FAIL tiny_sweep: crashed (signal 11 SIGSEGV)"));
  free(out);
  /* The build tree's plugins are found from bin/../lib/calhost/plugins, and a
   * plugin that prints while loading does not corrupt the JSON on stdout. */
  snprintf(cmd, sizeof cmd,
           "cd /tmp && CALHOST_PLUGIN_PATH='%s' '%s' --config /dev/null plugins --json "
           "2>/dev/null",
           test_plugin(path, sizeof path, "test_stdout"), calhost);
  int rc = run(cmd, &out);
  if (rc != 0)
    skip(); /* e.g. the config library refuses an empty file: not ours to test */
  assert_true(!strncmp(out, "{\"plugins\":[", 12));
  assert_null(strstr(out, "garbage"));
  assert_non_null(strstr(out, "\"backend\":\"example\""));
  assert_non_null(strstr(out, "\"origin\":\"default\""));
  assert_non_null(strstr(out, "\"backend\":\"test_stdout\""));
  assert_non_null(strstr(out, "\"status\":\"loaded\""));
  free(out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(example_passes),
      cmocka_unit_test(bad_plugins_fail_with_report),
      cmocka_unit_test(cli_plugin_check_and_plugins_json),
  };
  return cmocka_run_group_tests_name("loader_check", tests, NULL, NULL);
}
