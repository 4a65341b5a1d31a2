/*
 * test_check.c: loader_check: the conformance checker (host/check) passes
 * the example and the good test plugin and fails each misbehaving plugin
 * with a report naming the failed check (a crash, an exit or a hang is a
 * FAIL, not a crash of the checker), including what discovery would refuse
 * (permissions), extra exported symbols, output on stderr and output left in
 * stdio's buffer; a Transpose plugin passes with the guessed 2-D workload
 * and with an explicit one; and, through the calhost binary when it is
 * built, `calhost plugin check` exits 0 / 1, takes --threads and shows the
 * plugin's debug/info logs with -v (or CALHOST_LOG_LEVEL), and
 * `calhost plugins --json` stays valid with a plugin that prints to stdout;
 * a plugin's declared sample workload (opencl_gemm) replaces the guess; a
 * described parameter space (ABI 2) is checked (a careless one fails).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/wait.h>

#include "check/check.h"
#include "loader/loader.h"
#include "harness.h"
#include "loader_test_util.h"

/* Runs the checker on path with options (NULL: defaults) and a timeout;
 * returns its status and the report (malloc'd). */
static int check_report_with(const char *path, const check_options *opt, double timeout,
                             char **report) {
  check_options o;
  FILE *out = tmpfile();
  long n;
  int rc;
  assert_non_null(out);
  if (opt)
    o = *opt;
  else
    check_options_init(&o);
  o.timeout_seconds = timeout;
  rc = check_plugin_check(path, &o, out);
  fflush(out);
  n = ftell(out);
  rewind(out);
  *report = calloc(1, (size_t)n + 1);
  assert_non_null(*report);
  assert_int_equal(fread(*report, 1, (size_t)n, out), (size_t)n);
  fclose(out);
  return rc;
}

static int check_report(const char *path, double timeout, char **report) {
  return check_report_with(path, NULL, timeout, report);
}

static void example_passes(void **state) {
  char path[4096], *report;
  (void)state;
  assert_int_equal(check_report(example_plugin(path, sizeof path), 30, &report), 0);
  assert_null(strstr(report, "FAIL"));
  assert_non_null(strstr(report, "PASS tiny_sweep"));
  assert_non_null(strstr(report, "PASS validator_refuses_random"));
  assert_non_null(strstr(report, "PASS file_permissions"));
  assert_non_null(strstr(report, "PASS exported_symbols"));
  assert_non_null(strstr(report, "PASS quiet_stderr"));
  assert_non_null(strstr(report, "PASS parameter_space"));
  assert_non_null(strstr(report, "17 of 17 checks passed"));
  free(report);
  assert_int_equal(check_report(test_plugin(path, sizeof path, "test_good"), 30, &report), 0);
  free(report);
  /* a described space (ABI 2) that keeps its contract */
  assert_int_equal(check_report(test_plugin(path, sizeof path, "test_space"), 30, &report), 0);
  assert_non_null(strstr(report, "PASS parameter_space"));
  free(report);
}

static void bad_plugins_fail_with_report(void **state) {
  static const struct {
    const char *plugin, *line;
  } expect[] = {
      {"test_noentry", "FAIL negotiation: no entry point 'calhost_plugin_negotiate'"},
      {"test_abi_range", "FAIL negotiation: ABI mismatch: plugin supports ABI 3..4, host "
                         "supports 1..2"},
      {"test_missing", "FAIL required_functions: required vtable entry 'validate_policy' is "
                       "missing"},
      {"test_crash_negotiate", "FAIL negotiation: killed by signal 11 (SIGSEGV)"},
      {"test_crash_run", "FAIL tiny_sweep: killed by signal 11 (SIGSEGV)"},
      {"test_hang", "FAIL tiny_sweep: timed out after 2 s"},
      {"test_exit", "FAIL tiny_sweep: exited with status 3"},
      {"test_abort", "FAIL tiny_sweep: killed by signal 6 (SIGABRT)"},
      {"test_stdout", "FAIL quiet_stdout: the plugin wrote"},
      /* output left in stdio's buffer is output too (the child flushes) */
      {"test_stdout_buffered", "FAIL quiet_stdout: the plugin wrote"},
      {"test_stderr", "FAIL quiet_stderr: the plugin wrote"},
      {"test_export", "FAIL exported_symbols: 1 symbol besides calhost_plugin_negotiate "
                      "exported (test_extra_symbol)"},
      {"test_refuse_all", "FAIL policy_roundtrip: the validator refuses candidate 0"},
      {"test_nondet_key", "FAIL key_deterministic: two calls gave different keys for the same "
                          "workload and target: structure operator='call "},
      {"test_empty_policy", "FAIL policy_roundtrip: candidate 0 is empty"},
      {"test_oversized", "FAIL policy_roundtrip: candidate 0: serialize_candidate returned "
                         "CALHOST_BUFFER_TOO_SMALL asking for 1048577 bytes, more than"},
      {"test_short_ask", "FAIL policy_roundtrip: candidate 0: serialize_candidate returned "
                         "CALHOST_BUFFER_TOO_SMALL for a 256-byte buffer but asks for 3 bytes"},
      /* the serializer's fault is not blamed on the validator */
      {"test_short_ask", "FAIL validator_refuses_truncated: not run: no candidate policy"},
      {"test_bad_space", "FAIL parameter_space: assignment_valid accepts index 4 of parameter "
                         "'p', which has 4 values"},
      /* the default refused by the plugin's own rule on a sample workload
       * other than the checked one (item 20) */
      {"test_bad_default", "FAIL parameter_space: sample workload 'big': the default assignment "
                           "is not valid by the plugin's own assignment_valid: p=4 needs at most "
                           "4096 elements"},
      /* a device time of 0 is refused at once, saying what to fix (item 18) */
      {"test_zero_time", "FAIL tiny_sweep: ReduceSum float32 4096 on t=1: numbered candidate 0 "
                         "'p=1' rejected: run() reported a device time of 0 s for 1 iteration"},
      {"test_zero_time", "CL_QUEUE_PROFILING_ENABLE"},
      /* an identity that changes between listings (item 22) */
      {"test_unstable_devices", "FAIL devices: device 1 changed between two listings: index 1 "
                                "identity 'fake-gpu-b v1 #1'"},
      /* a setting that make create() fail is named (item 31): see below */
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

/* Runs calhost ARGS (a shell fragment) as o says (its output merged into
 * one stream unless o says otherwise); returns its exit status and output
 * (malloc'd). */
static int run_with(const harness_opts *o, const char *args, char **output) {
  harness_result r = {0};
  int code = harness_run_sh(o, &r, args);
  *output = r.out;
  free(r.err);
  return code < 128 ? code : -1;
}

/* run_with the harness's environment, stderr merged into stdout. */
static int run(const char *args, char **output) {
  static const harness_opts merged = {.merge_output = 1};
  return run_with(&merged, args, output);
}

static void cli_plugin_check_and_plugins_json(void **state) {
  char cmd[16384], path[4096], *out;
  (void)state;
  if (access(harness_calhost(), X_OK) != 0)
    fail_msg("%s is not built", harness_calhost());
  snprintf(cmd, sizeof cmd, "plugin check '%s'", example_plugin(path, sizeof path));
  assert_int_equal(run(cmd, &out), 0);
  assert_non_null(strstr(out, "PASS tiny_sweep"));
  free(out);
  snprintf(cmd, sizeof cmd, "plugin check --timeout 2 '%s'",
           test_plugin(path, sizeof path, "test_crash_run"));
  assert_int_equal(run(cmd, &out), 1);
  assert_non_null(strstr(out, "FAIL tiny_sweep: killed by signal 11 (SIGSEGV)"));
  free(out);
  /* The build tree's plugins are found from bin/../lib/calhost/plugins, and a
   * plugin that prints while loading does not corrupt the JSON on stdout. */
  harness_opts in_tmp = {.cwd = "/tmp",
                         .plugin_path = test_plugin(path, sizeof path, "test_stdout")};
  assert_int_equal(run_with(&in_tmp, "--config /dev/null plugins --json", &out), 0);
  assert_true(!strncmp(out, "{\"plugins\":[", 12));
  assert_null(strstr(out, "garbage"));
  assert_non_null(strstr(out, "\"backend\":\"example\""));
  assert_non_null(strstr(out, "\"origin\":\"default\""));
  assert_non_null(strstr(out, "\"backend\":\"test_stdout\""));
  assert_non_null(strstr(out, "\"status\":\"loaded\",\"state\":\"loaded\""));
  free(out);
}

/* A plugin file discovery would refuse (group/other-writable) fails the
 * check that says so, although everything else passes. */
static void refused_permissions_fail(void **state) {
  char dir[256], dst[512], path[4096], *report;
  (void)state;
  assert_non_null(make_tmpdir(dir, sizeof dir));
  snprintf(dst, sizeof dst, "%s/test_good.so", dir);
  assert_int_equal(copy_file(test_plugin(path, sizeof path, "test_good"), dst), 0);
  assert_int_equal(chmod(dst, 0666), 0);
  assert_int_equal(check_report(dst, 30, &report), 1);
  if (!strstr(report, "FAIL file_permissions: discovery would refuse it: file ") ||
      !strstr(report, "is writable by group and others") || !strstr(report, "16 of 17"))
    fail_msg("unexpected report:\n%s", report);
  free(report);
  remove_tmpdir(dir);
}

/* Operators other than MatMul: the guessed workload of a Transpose plugin is
 * 2-D (a 1-D guess failed 7 checks), and an explicit one works too. */
static void transpose_plugin_passes(void **state) {
  char path[4096], *report;
  check_options o;
  static const int64_t shape[] = {8, 16};
  (void)state;
  test_plugin(path, sizeof path, "test_transpose");
  if (check_report(path, 30, &report) != 0)
    fail_msg("bare check of a Transpose plugin failed:\n%s", report);
  free(report);
  check_options_init(&o);
  o.operator_name = "Transpose";
  o.shape = shape;
  o.shape_rank = 2;
  o.verbose = 1;
  assert_int_equal(check_report_with(path, &o, 30, &report), 0);
  assert_non_null(strstr(report, "Transpose float32 8,16"));
  free(report);
  o.shape_rank = 1; /* a workload the plugin refuses: a clear FAIL */
  assert_int_equal(check_report_with(path, &o, 30, &report), 1);
  assert_non_null(strstr(report, "(choose a workload with --operator/--shape)"));
  free(report);
}

/* -v shows what a dying child wrote to stderr (a sanitizer's report) under
 * the check it failed; without -v only the verdict. */
static void a_dying_childs_stderr_is_shown_with_v(void **state) {
  char path[4096], *report;
  check_options o;
  (void)state;
  test_plugin(path, sizeof path, "test_crash_loud");
  check_options_init(&o);
  o.verbose = 1;
  assert_int_equal(check_report_with(path, &o, 30, &report), 1);
  const char *fail = strstr(report, "FAIL tiny_sweep: ");
  assert_non_null(fail);
  assert_non_null(strstr(fail, "    its stderr ("));
  assert_non_null(strstr(fail, "      chatter on stderr from run"));
  free(report);
  assert_int_equal(check_report(path, 30, &report), 1);
  assert_null(strstr(report, "its stderr ("));
  free(report);
}

/* `plugin check -v` shows the plugin's debug and info logs; without -v they
 * are hidden unless CALHOST_LOG_LEVEL lowers the level; --threads N sets
 * the target's thread count. */
static void cli_logs_and_threads(void **state) {
  char cmd[16384], path[4096], *out;
  (void)state;
  if (access(harness_calhost(), X_OK) != 0)
    fail_msg("%s is not built", harness_calhost());
  test_plugin(path, sizeof path, "test_good");
  snprintf(cmd, sizeof cmd, "plugin check -v --threads 3 '%s'", path);
  assert_int_equal(run(cmd, &out), 0);
  assert_non_null(strstr(out, "log debug: debug message from create"));
  assert_non_null(strstr(out, "log info: info message from create"));
  assert_non_null(strstr(out, "PASS key_complete (1 structural properties, 3 threads)"));
  free(out);
  snprintf(cmd, sizeof cmd, "plugin check '%s'", path); /* CALHOST_LOG_LEVEL unset */
  assert_int_equal(run(cmd, &out), 0);
  assert_null(strstr(out, "message from create"));
  free(out);
  static const char *const info[] = {"CALHOST_LOG_LEVEL=info", NULL};
  harness_opts at_info = {.merge_output = 1, .env = info};
  snprintf(cmd, sizeof cmd, "plugin check '%s'", path);
  assert_int_equal(run_with(&at_info, cmd, &out), 0);
  assert_non_null(strstr(out, "log info: info message from create"));
  assert_null(strstr(out, "debug message"));
  free(out);
  snprintf(cmd, sizeof cmd, "plugin check --threads 0 '%s'", path);
  assert_int_equal(run(cmd, &out), 2);
  free(out);
}

/* A plugin that declares sample workloads (ABI 2) is checked on its first
 * one, not on a guessed workload; --shape still wins. */
static void declared_sample_workloads_are_used(void **state) {
  char path[4096], *report;
  check_options o;
  int64_t shape[3] = {16, 16, 16};
  (void)state;
  snprintf(path, sizeof path, "%s/lib/calhost/plugins/opencl_gemm.so", build_dir());
  if (access(path, R_OK) != 0)
    skip(); /* built only where OpenCL is found */
  /* Under valgrind (tests/reliability/run.sh) the checker's child compiles
   * OpenCL kernels with PoCL's LLVM for minutes: opencl_gemm's own tests
   * are left out of that run for the same reason (ASan covers this one). */
  if (getenv("CALHOST_UNDER_VALGRIND"))
    skip();
  check_options_init(&o);
  o.verbose = 1;
  assert_int_equal(check_report_with(path, &o, 60, &report), 0);
  /* opencl_gemm's first sample is matmul_64 (64,64,64); the guess for
   * MatMul would be 32,32,32 */
  assert_non_null(strstr(report, "key_deterministic (MatMul float32 64,64,64)"));
  free(report);
  o.shape = shape;
  o.shape_rank = 3;
  assert_int_equal(check_report_with(path, &o, 60, &report), 0);
  assert_non_null(strstr(report, "key_deterministic (MatMul float32 16,16,16)"));
  free(report);
}

/* A device backend's checks run on a device target: each listed device's
 * identity and name are checked (twice alike, a key for each) and the tiny
 * sweep runs on device 0, its message saying what ran (item 22). */
static void a_device_backend_is_checked_on_its_devices(void **state) {
  char path[4096], *report;
  (void)state;
  check_options o;
  check_options_init(&o);
  o.verbose = 1; /* the details of passing checks */
  assert_int_equal(
      check_report_with(test_plugin(path, sizeof path, "devices/test_devices"), &o, 30, &report),
      0);
  if (!strstr(report, "PASS devices (3 devices listed twice alike, a key for each: 0 'fake gpu', "
                      "1 'fake gpu', 2 'fake cpu device'; the checks ran on device 0)") ||
      !strstr(report, "PASS tiny_sweep (ReduceSum float32 4096 on device 0 'fake gpu': measured "
                      "numbered candidates 0, 1, 2 (host clock)") ||
      !strstr(report, "17 of 17 checks passed"))
    fail_msg("unexpected report:\n%s", report);
  free(report);
  /* a CPU backend says so */
  assert_int_equal(check_report_with(test_plugin(path, sizeof path, "test_good"), &o, 30, &report),
                   0);
  if (!strstr(report, "PASS devices (not a device backend") ||
      !strstr(report, "on t=1: measured numbered candidates 0, 1, 2"))
    fail_msg("unexpected report:\n%s", report);
  free(report);
}

/* Item 30: the SDK's device backend example (ABI 2: devices, a described
 * space with a validity rule, device timers, sample workloads) passes
 * every check, on one device and on two. */
static void the_device_backend_example_passes(void **state) {
  char path[4096], *report;
  (void)state;
  check_options o;
  check_options_init(&o);
  o.verbose = 1;
  test_plugin(path, sizeof path, "examples/rowsum_device");
  assert_int_equal(check_report_with(path, &o, 30, &report), 0);
  if (!strstr(report, "17 of 17 checks passed") ||
      !strstr(report, "PASS devices (1 device listed twice alike") ||
      !strstr(report, "PASS parameter_space (3 parameters, 102 of 120 points valid") ||
      !strstr(report, "on device 0 'rowsum sim 0': measured the default") ||
      !strstr(report, "(device clock)"))
    fail_msg("unexpected report:\n%s", report);
  free(report);
  calhost_property two[] = {{"devices_visible", "2"}};
  o.settings = two;
  o.setting_count = 1;
  assert_int_equal(check_report_with(path, &o, 30, &report), 0);
  if (!strstr(report, "PASS devices (2 devices listed twice alike, a key for each: 0 'rowsum sim "
                      "0', 1 'rowsum sim 1'"))
    fail_msg("unexpected report:\n%s", report);
  free(report);
}

/* Settings (`plugin check --setting KEY=VALUE`) reach every create() of
 * the checks: a plugin that takes them passes, one it refuses fails with
 * the plugin's message and the settings named (item 31). */
static void settings_reach_create(void **state) {
  char path[4096], *report;
  (void)state;
  check_options o;
  check_options_init(&o);
  calhost_property ok[] = {{"scale", "2"}}, bad[] = {{"scale", "2"}, {"fail", "1"}},
                   unknown[] = {{"colour", "red"}};
  test_plugin(path, sizeof path, "test_settings");
  o.settings = ok;
  o.setting_count = 1;
  assert_int_equal(check_report_with(path, &o, 30, &report), 0);
  free(report);
  o.settings = bad;
  o.setting_count = 2;
  assert_int_equal(check_report_with(path, &o, 30, &report), 1);
  if (!strstr(report, "FAIL tiny_sweep: not run: create() with the settings scale=2, fail=1 "
                      "returned CALHOST_ERROR (plugin says: create failed as the setting fail "
                      "asked)"))
    fail_msg("unexpected report:\n%s", report);
  free(report);
  o.settings = unknown;
  o.setting_count = 1;
  assert_int_equal(check_report_with(path, &o, 30, &report), 1);
  if (!strstr(report, "unknown setting 'colour' (known: fail, scale)"))
    fail_msg("unexpected report:\n%s", report);
  free(report);
  /* the command line's --setting KEY=VALUE (repeatable), and its usage errors */
  char cmd[16384], *out;
  snprintf(cmd, sizeof cmd, "plugin check '%s' --setting scale=2 --setting fail=x", path);
  assert_int_equal(run(cmd, &out), 1);
  if (!strstr(out, "create() with the settings scale=2, fail=x returned CALHOST_ERROR"))
    fail_msg("unexpected output:\n%s", out);
  free(out);
  snprintf(cmd, sizeof cmd, "plugin check '%s' --setting scale=2", path);
  assert_int_equal(run(cmd, &out), 0);
  free(out);
  static const char *const usage[][2] = {
      {"--setting scale", "give KEY=VALUE"},
      {"--setting =2", "give KEY=VALUE"},
      {"--setting 'a b=1'", "the key must be [A-Za-z0-9_.-]+"},
      {"--setting a=1 --setting a=2", "--setting a is given twice"}};
  for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
    snprintf(cmd, sizeof cmd, "plugin check '%s' %s", path, usage[i][0]);
    assert_int_equal(run(cmd, &out), 2);
    if (!strstr(out, usage[i][1]))
      fail_msg("%s: unexpected output:\n%s", usage[i][0], out);
    free(out);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(example_passes),
      cmocka_unit_test(bad_plugins_fail_with_report),
      cmocka_unit_test(refused_permissions_fail),
      cmocka_unit_test(transpose_plugin_passes),
      cmocka_unit_test(a_dying_childs_stderr_is_shown_with_v),
      cmocka_unit_test(cli_logs_and_threads),
      cmocka_unit_test(declared_sample_workloads_are_used),
      cmocka_unit_test(cli_plugin_check_and_plugins_json),
      cmocka_unit_test(a_device_backend_is_checked_on_its_devices),
      cmocka_unit_test(settings_reach_create),
      cmocka_unit_test(the_device_backend_example_passes),
  };
  return cmocka_run_group_tests_name("loader_check", tests, NULL, NULL);
}
