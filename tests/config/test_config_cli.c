/*
 * test_config_cli.c: `calhost config check` and `calhost config show`, run
 * as the built program ($CALHOST_BUILD_DIR/bin/calhost): exit statuses,
 * "ok: FILE", errors with FILE:LINE, and the origins `show` prints (text
 * and --json); and how every command uses the configuration: one rule for
 * which file is read (--store does not skip ./calhost.ini), loaded once,
 * model files hashed only for a key, flags parsed like the config's values;
 * `config check --plugins` hands each [plugin NAME] section to its plugin
 * (a refused setting, a missing device, a failing create are invalid; a
 * section no plugin receives is a warning).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static char tmpdir[PATH_MAX];
static char output[65536];

static int setup(void **state) {
  const char *dir = harness_scratch("config-cli");
  (void)state;
  if (!dir || !getenv("CALHOST_BUILD_DIR"))
    return -1;
  snprintf(tmpdir, sizeof tmpdir, "%s", dir);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return harness_scratch_remove();
}

static const char *write_file(const char *name, const char *text) {
  static char path[PATH_MAX];
  if (snprintf(path, sizeof path, "%s/%s", tmpdir, name) >= (int)sizeof path)
    fail_msg("path too long");
  assert_int_equal(harness_write(path, text), 0);
  return path;
}

/* Runs calhost with args (a shell fragment) in tmpdir/sub, stdout and
 * stderr into output; returns the exit status. HOME is tmpdir, the XDG
 * directories below it (xdg, cache). */
static int run_in(const char *sub, const char *args) {
  char cwd[PATH_MAX + 80], xdg[PATH_MAX + 8], cache[PATH_MAX + 8];
  harness_result r = {0};
  int code;
  if (strlen(args) > PATH_MAX || strlen(sub) > 64)
    fail_msg("arguments too long");
  snprintf(cwd, sizeof cwd, "%s/%s", tmpdir, sub);
  snprintf(xdg, sizeof xdg, "%s/xdg", tmpdir);
  snprintf(cache, sizeof cache, "%s/cache", tmpdir);
  harness_opts o = {.cwd = cwd,
                    .home = tmpdir,
                    .xdg_config_home = xdg,
                    .xdg_cache_home = cache,
                    .merge_output = 1};
  code = harness_run_sh(&o, &r, args);
  assert_true(code < 128); /* exited, not killed */
  snprintf(output, sizeof output, "%s", r.out);
  harness_result_free(&r);
  return code;
}

static int run(const char *args) {
  return run_in("", args);
}

/* How many times needle occurs in output. */
static int count(const char *needle) {
  int k = 0;
  for (const char *p = strstr(output, needle); p; p = strstr(p + 1, needle))
    k++;
  return k;
}

static const char fleet_store[] =
    "onnx_light_calibration_profiles 1\n"
    "profile exact calibrated\nbackend \"b\"\noperator \"MatMul\"\nimplementation \"1\"\n"
    "model_digest \"sha256:00\"\nprocessor \"cpu\"\nthread_count 4\n"
    "measurement \"median_latency\" 2.5 \"us\"\npolicy \"tile=8\"\nend\n";

static void check_accepts_a_good_file(void **state) {
  char want[PATH_MAX + 8];
  (void)state;
  const char *path = write_file("good.ini", "[calibration]\nrigor = quick\n");
  snprintf(want, sizeof want, "ok: %s\n", path);
  assert_int_equal(run("config check good.ini"), 0);
  assert_string_equal(output, "ok: good.ini\n");
  {
    char args[PATH_MAX + 32];
    snprintf(args, sizeof args, "--config '%s' config check", path);
    assert_int_equal(run(args), 0);
    assert_string_equal(output, want);
  }
}

static void check_refuses_a_bad_file_with_its_line(void **state) {
  (void)state;
  write_file("bad.ini", "[calibration]\nrigor = quick\n\nrigour = measure\n");
  assert_int_equal(run("config check bad.ini"), 1);
  assert_non_null(strstr(output, "bad.ini:4: unknown key 'rigour' in [calibration]"));
  assert_int_equal(run("config check --json bad.ini"), 1);
  assert_non_null(strstr(output, "\"valid\": false"));
  assert_int_equal(run("config check missing.ini"), 2); /* operational, not "invalid" */
  assert_non_null(strstr(output, "missing.ini"));
}

/* Writes plugins.ini: cpu_gemm (max_isa = isa; devices = 0, which a
 * backend without devices ignores), test_devices (3 devices; devices =
 * devices), test_create (create() always fails), test_crash_create (create()
 * crashes), test_stdout (prints in create()) and test_missing (rejected:
 * no prepare), copied into one
 * plugin folder, a [plugin nosuch] no plugin provides, then extra. */
static void write_plugins_ini(const char *isa, const char *devices, const char *extra) {
  const char *build = getenv("CALHOST_BUILD_DIR");
  char cmd[PATH_MAX * 8], ini[PATH_MAX * 2];
  /* one folder of the six (a paths line of six would pass the line limit) */
  snprintf(cmd, sizeof cmd,
           "mkdir -p '%s/p' && cd '%s/lib/calhost' && cp plugins/cpu_gemm.so "
           "test-plugins/devices/test_devices.so test-plugins/test_create.so "
           "test-plugins/test_crash_create.so test-plugins/unloadable/test_missing.so "
           "test-plugins/test_stdout.so '%s/p/'",
           tmpdir, build, tmpdir);
  assert_int_equal(system(cmd), 0);
  snprintf(ini, sizeof ini,
           "[plugins]\ndirectories = %s/p\n"
           "[plugin cpu_gemm]\nmax_isa = %s\ndevices = 0\n"
           "[plugin test_devices]\ndevices = %s\n"
           "[plugin nosuch]\nfoo = 1\n"
           "[plugin test_missing]\nfoo = 1\n%s",
           tmpdir, isa, devices, extra);
  write_file("plugins.ini", ini);
}

static void check_plugins_gives_each_section_to_its_plugin(void **state) {
  (void)state;
  write_plugins_ini("avx3", "9", "[plugin test_create]\n[plugin test_crash_create]\n");
  /* without --plugins the sections are not looked at */
  assert_int_equal(run("config check plugins.ini"), 0);
  assert_int_equal(run("config check plugins.ini --plugins"), 1);
  assert_non_null(strstr(output, "plugins.ini:3: [plugin cpu_gemm]: create failed: "
                                 "CALHOST_INVALID_ARGUMENT: cpu_gemm: max_isa"));
  assert_non_null(strstr(output, "(got 'avx3')"));
  assert_non_null(strstr(output, "plugins.ini:7: [plugin test_devices]: devices: no device 9"));
  /* test_missing was rejected before it told its name: the warning says
   * a plugin was rejected (nosuch's too: the name is unknown) */
  assert_non_null(strstr(output, "plugins.ini:8: [plugin nosuch]: warning: not checked: "
                                 "no loaded plugin provides this backend ("));
  assert_non_null(strstr(output, "plugins.ini:10: [plugin test_missing]: warning: not checked: "
                                 "no loaded plugin provides this backend ("));
  assert_non_null(strstr(output, " rejected: see `calhost plugins`)"));
  assert_non_null(strstr(output, "plugins.ini:12: [plugin test_create]: create failed: "
                                 "CALHOST_UNSUPPORTED"));
  assert_non_null(strstr(output, "plugins.ini:13: [plugin test_crash_create]: create: killed by "
                                 "signal 11 (SIGSEGV)"));
  assert_null(strstr(output, "ok: "));
  assert_int_equal(run("--json config check plugins.ini --plugins 2>/dev/null"), 1);
  assert_non_null(strstr(output, "\"valid\": false"));
  assert_non_null(strstr(output, "{\"backend\": \"cpu_gemm\", \"line\": 3, \"accepted\": false, "
                                 "\"error\": \"create failed: CALHOST_INVALID_ARGUMENT"));
  assert_non_null(strstr(output, "{\"backend\": \"nosuch\", \"line\": 8, \"accepted\": false, "
                                 "\"warning\": \"not checked"));
  /* --quiet: the refusals only */
  assert_int_equal(run("-q config check plugins.ini --plugins"), 1);
  assert_non_null(strstr(output, "[plugin cpu_gemm]: create failed"));
  assert_null(strstr(output, "warning"));
  /* settings the plugins take: valid, with the warnings kept */
  write_plugins_ini("avx2", "1", "[plugin test_stdout]\n");
  assert_int_equal(run("config check plugins.ini --plugins"), 0);
  assert_non_null(
      strstr(output, "ok: plugins.ini (3 of 5 [plugin NAME] sections checked by their plugins)"));
  /* what a plugin prints in create() stays in the child's capture: never
   * on calhost's stdout or stderr */
  assert_null(strstr(output, "garbage from create"));
  assert_non_null(strstr(output, "[plugin nosuch]: warning: "));
  assert_null(strstr(output, "create failed"));
  assert_int_equal(run("--json config check plugins.ini --plugins 2>/dev/null"), 0);
  assert_non_null(strstr(output, "{\"backend\": \"cpu_gemm\", \"line\": 3, \"accepted\": true, "
                                 "\"warning\": null}"));
  /* --plugins is check's */
  assert_int_equal(run("config show --plugins"), 2);
}

static void check_usage_errors(void **state) {
  (void)state;
  write_file("a.ini", "[store]\n");
  assert_int_equal(run("config check a.ini a.ini"), 2);
  assert_int_equal(run("config"), 2);
  assert_int_equal(run("config frobnicate"), 2);
  assert_int_equal(run("config show extra"), 2);
}

static void show_prints_every_key_with_its_origin(void **state) {
  (void)state;
  write_file("show.ini", "[calibration]\n\nrigor = quick\n[workload w]\noperator = MatMul\n"
                         "shape = 8,8,8\n");
  assert_int_equal(run("--config show.ini config show"), 0);
  assert_non_null(strstr(output, "[calibration]"));
  assert_non_null(strstr(output, "rigor = quick"));
  assert_non_null(strstr(output, "; show.ini:3"));
  assert_non_null(strstr(output, "time_budget = 60"));
  assert_non_null(strstr(output, "; default"));
  assert_non_null(strstr(output, "[workload w]"));
  assert_non_null(strstr(output, "model_digest = sha256:"));
  assert_non_null(strstr(output, "; computed"));

  assert_int_equal(run("--config show.ini config show --json"), 0);
  assert_non_null(strstr(output, "{\"file\": \"show.ini\", \"keys\": ["));
  assert_non_null(strstr(output, "{\"section\": \"calibration\", \"key\": \"rigor\", \"value\": "
                                 "\"quick\", \"origin\": \"show.ini:3\"}"));
  assert_non_null(strstr(output, "\"key\": \"plugin_timeout\", \"value\": \"120\", \"origin\": "
                                 "\"default\""));
  assert_int_equal(run("--json --config show.ini config show"), 0);
  assert_non_null(strstr(output, "\"origin\": \"show.ini:3\""));
}

static void show_uses_the_default_search(void **state) {
  (void)state;
  write_file("calhost.ini", "[lookup]\nforce_portable = yes\n");
  assert_int_equal(run("config show"), 0);
  assert_non_null(strstr(output, "from calhost.ini"));
  assert_non_null(strstr(output, "force_portable = true"));
  assert_int_equal(run("config check"), 0);
  assert_string_equal(output, "ok: calhost.ini\n");
  unlink(write_file("calhost.ini", ""));
}

static void shipped_configs_pass_check(void **state) {
  const char *src = getenv("CALHOST_SOURCE_DIR");
  char args[PATH_MAX * 2 + 32];
  (void)state;
  if (!src)
    fail_msg("CALHOST_SOURCE_DIR is not set (run the test through ctest)");
  snprintf(args, sizeof args, "config check '%s/config/calhost.ini'", src);
  assert_int_equal(run(args), 0);
  snprintf(args, sizeof args, "config check '%s/config/deploy-portable.ini'", src);
  assert_int_equal(run(args), 0);
}

/* Issue 9 item 12: --store replaces only the store's path; the implicit
 * ./calhost.ini is still read, so its persistence_enabled = false holds. */
static void store_flag_keeps_the_implicit_config(void **state) {
  char sub[PATH_MAX + 16], store[PATH_MAX + 32];
  (void)state;
  snprintf(sub, sizeof sub, "%s/persist", tmpdir);
  assert_int_equal(mkdir(sub, 0700), 0);
  write_file("persist/calhost.ini", "[store]\npersistence_enabled = false\n");
  write_file("persist/fleet.txt", fleet_store);
  snprintf(store, sizeof store, "%s/s.txt", sub);
  assert_int_equal(run_in("persist", "--store s.txt import fleet.txt"), 0);
  if (access(store, F_OK) == 0)
    fail_msg("--store wrote %s although ./calhost.ini disables persistence", store);
  /* the same rule with --config given too, and without --store */
  assert_int_equal(run_in("persist", "--config calhost.ini --store s.txt import fleet.txt"), 0);
  assert_int_equal(access(store, F_OK), -1);
  /* and a config that persists does write the --store path */
  write_file("persist/calhost.ini", "[store]\npersistence_enabled = true\n");
  assert_int_equal(run_in("persist", "--store s.txt import fleet.txt"), 0);
  assert_int_equal(access(store, F_OK), 0);
}

/* Issue 10 §4: a command that builds no key reads no model file, so a
 * configuration whose model file is missing still serves `list`; `config
 * check` and `lookup --workload` (which need the digest) report it with the
 * model key's line. */
static void model_files_are_hashed_only_when_a_key_is_needed(void **state) {
  (void)state;
  write_file("model.ini", "[workload w]\noperator = MatMul\nshape = 8,8,8\n"
                          "model = absent.onnx\n");
  write_file("fleet.txt", fleet_store);
  assert_int_equal(run("--config model.ini --store s.txt list"), 0);
  assert_null(strstr(output, "absent.onnx"));
  assert_int_equal(run("config check model.ini"), 1);
  assert_non_null(strstr(output, "model.ini:4: model file of [workload w]: "));
  assert_non_null(strstr(output, "absent.onnx"));
  assert_int_equal(run("--config model.ini --store s.txt lookup --workload w"), 2);
  assert_non_null(strstr(output, "model.ini:4: model file of [workload w]: "));
  write_file("absent.onnx", "abc");
  assert_int_equal(run("--config model.ini config show"), 0);
  assert_non_null(strstr(output, "model_digest = sha256:ba7816bf8f01cfea414140de5dae2223b00361a3"));
}

/* Issue 10 §4: one command loads the configuration once (--verbose names
 * each load); `lookup --workload` loaded it twice. */
static void a_command_loads_the_configuration_once(void **state) {
  (void)state;
  write_file("once.ini", "[workload w]\noperator = MatMul\nshape = 8,8,8\n");
  run("--verbose --config once.ini --store s.txt lookup --workload w --plugin no_such_plugin");
  assert_non_null(strstr(output, "no_such_plugin"));
  assert_int_equal(count("calhost: configuration: once.ini"), 1);
  assert_int_equal(run("--verbose --config once.ini --store s.txt list"), 0);
  assert_int_equal(count("calhost: configuration: once.ini"), 1);
}

/* Issue 9 item 16: the command line parses thread lists, durations and
 * counts as calhost.ini does (values.h), with the same limits. */
static void flags_parse_like_the_config(void **state) {
  (void)state;
  write_file("flags.ini", "[workload w]\noperator = MatMul\nshape = 8,8,8\n");
  assert_int_equal(run("--config flags.ini calibrate --threads 1,1"), 2);
  assert_non_null(strstr(output, "bad --threads '1,1': '1' is listed twice"));
  assert_int_equal(run("--config flags.ini calibrate --threads 1,,2"), 2);
  assert_non_null(strstr(output, "empty item"));
  assert_int_equal(run("--config flags.ini calibrate --threads 4097"), 2);
  assert_non_null(strstr(output, "bad --threads"));
  assert_int_equal(run("--config flags.ini calibrate --time-budget 0x10"), 2);
  assert_non_null(strstr(output, "bad --time-budget '0x10'"));
  assert_int_equal(run("--config flags.ini calibrate --time-budget inf"), 2);
  assert_non_null(strstr(output, "bad --time-budget"));
  assert_int_equal(run("--config flags.ini calibrate --timeout 0"), 2);
  assert_non_null(strstr(output, "bad --timeout"));
  assert_int_equal(run("--config flags.ini calibrate --repetitions 1e3"), 2);
  assert_non_null(strstr(output, "bad --repetitions"));
  assert_int_equal(run("--config flags.ini --store s.txt lookup --workload w --threads 0"), 2);
  assert_non_null(strstr(output, "bad --threads '0'"));
  assert_int_equal(run("plugin check --shape 4,,4 /dev/null"), 2);
  assert_non_null(strstr(output, "bad --shape"));
  assert_int_equal(run("plugin check --timeout 0x10 /dev/null"), 2);
  assert_non_null(strstr(output, "bad --timeout"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(check_accepts_a_good_file),
      cmocka_unit_test(check_refuses_a_bad_file_with_its_line),
      cmocka_unit_test(check_plugins_gives_each_section_to_its_plugin),
      cmocka_unit_test(check_usage_errors),
      cmocka_unit_test(show_prints_every_key_with_its_origin),
      cmocka_unit_test(show_uses_the_default_search),
      cmocka_unit_test(shipped_configs_pass_check),
      cmocka_unit_test(store_flag_keeps_the_implicit_config),
      cmocka_unit_test(model_files_are_hashed_only_when_a_key_is_needed),
      cmocka_unit_test(a_command_loads_the_configuration_once),
      cmocka_unit_test(flags_parse_like_the_config),
  };
  return cmocka_run_group_tests_name("config_cli", tests, setup, teardown);
}
