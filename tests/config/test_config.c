/*
 * test_config.c: behaviours of calhost's INI configuration (host/config):
 * every kind of error names its file and line, defaults, values and their
 * origins, model digests (checked against known SHA-256 vectors, not
 * against the code under test; computed on demand, never while loading),
 * the value parsers shared with the command line (values.h), the default
 * search order, and the shipped files config/calhost.ini and
 * config/deploy-portable.ini.
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
#include <unistd.h>

#include "config/config.h"
#include "config/digest.h"
#include "config/values.h"
#include "base/tuning.h"

/* sha256("abc") and sha256("") as printed by sha256sum (FIPS 180-2 vectors). */
#define SHA256_ABC "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define SHA256_EMPTY "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
/* printf 'operator=MatMul;dtype=float32;shape=256,256,256;alpha=2;zeta=1;' | sha256sum */
#define SHA256_CANON_SORTED                                                                        \
  "sha256:191413a045ac8a42791176e4f8f6e55bb18df4c6800d408c872ad74c4d7f31c8"

static char tmpdir[PATH_MAX];

static int setup_dir(void **state) {
  (void)state;
  snprintf(tmpdir, sizeof tmpdir, "/tmp/calhost-config-test-XXXXXX");
  if (!mkdtemp(tmpdir))
    return -1;
  return 0;
}

static int teardown_dir(void **state) {
  char cmd[PATH_MAX + 16];
  (void)state;
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  return system(cmd) == 0 ? 0 : -1;
}

/* Writes text to tmpdir/name; returns the path (static buffer rotation). */
static const char *write_file(const char *name, const char *text) {
  static char paths[4][PATH_MAX];
  static int next;
  char *path = paths[next++ % 4];
  FILE *f;
  if (snprintf(path, PATH_MAX, "%s/%s", tmpdir, name) >= PATH_MAX)
    fail_msg("path too long");
  f = fopen(path, "wb");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return path;
}

/* Loads text as tmpdir/name and expects an error "PATH:LINE: ..." whose
 * message contains needle. */
static void expect_error(const char *text, unsigned line, const char *needle) {
  config_settings cfg;
  char err[1024], prefix[PATH_MAX + 32];
  const char *path = write_file("bad.ini", text);
  int rc = config_load(path, &cfg, err, sizeof err);
  if (rc == 0) {
    config_free(&cfg);
    fail_msg("accepted: %s", text);
  }
  snprintf(prefix, sizeof prefix, "%s:%u: ", path, line);
  if (strncmp(err, prefix, strlen(prefix)) != 0 || !strstr(err, needle))
    fail_msg("for:\n%s\nexpected '%s...%s', got '%s'", text, prefix, needle, err);
  /* a refused load leaves the config zeroed */
  assert_null(cfg.workloads);
  assert_null(cfg.source_path);
}

static void load_ok(const char *text, config_settings *cfg) {
  char err[1024];
  const char *path = write_file("good.ini", text);
  if (config_load(path, cfg, err, sizeof err) != 0)
    fail_msg("refused: %s\n%s", err, text);
}

/* [plugin NAME] devices: the host's key (never a plugin setting), all or
 * indices and identities, with the list rules of the other lists. */
static void plugin_devices_select_indices_or_identities(void **state) {
  (void)state;
  config_settings cfg;
  char **list = NULL, why[300];
  size_t n = 0;
  int all = -1;
  assert_int_equal(config_value_devices(" ALL ", &list, &n, &all, why, sizeof why), -1);
  assert_int_equal(config_value_devices("ALL", &list, &n, &all, why, sizeof why), 0);
  assert_int_equal(all, 1);
  assert_null(list);
  assert_int_equal(config_value_devices("1 , opencl:a b/c", &list, &n, &all, why, sizeof why), 0);
  assert_int_equal(all, 0);
  assert_int_equal(n, 2);
  assert_string_equal(list[0], "1");
  assert_string_equal(list[1], "opencl:a b/c");
  config_value_strings_free(list, n);
  uint32_t idx = 0;
  assert_true(config_value_device_index("12", &idx));
  assert_int_equal(idx, 12);
  assert_false(config_value_device_index("1a", &idx));
  assert_int_equal(config_value_devices("0,0", &list, &n, &all, why, sizeof why), -1);
  assert_non_null(strstr(why, "twice"));
  assert_int_equal(config_value_devices("0,,1", &list, &n, &all, why, sizeof why), -1);
  assert_int_equal(config_value_devices("99999999", &list, &n, &all, why, sizeof why), -1);
  assert_non_null(strstr(why, "device index"));
  assert_int_equal(config_value_devices("", &list, &n, &all, why, sizeof why), -1);

  load_ok("[plugin opencl_gemm]\ndevices = 0, opencl:x\nwidth = 4\n", &cfg);
  const config_plugin_section *sec = config_plugin_named(&cfg, "opencl_gemm");
  assert_non_null(sec);
  assert_int_equal(sec->device_count, 2);
  assert_string_equal(sec->devices[1], "opencl:x");
  assert_int_equal(sec->setting_count, 1); /* devices is not handed to the plugin */
  assert_string_equal(sec->settings[0].name, "width");
  config_free(&cfg);
  load_ok("[plugin opencl_gemm]\ndevices = all\n", &cfg);
  sec = config_plugin_named(&cfg, "opencl_gemm");
  assert_int_equal(sec->device_count, 0);
  assert_int_equal(sec->setting_count, 0);
  config_free(&cfg);
  expect_error("[plugin x]\n\ndevices = 1,1\n", 3, "bad value for 'devices'");
}

/* ---- errors, each with its line ---------------------------------------- */

static void unknown_section_is_an_error(void **state) {
  (void)state;
  expect_error("[store]\npath = x\n\n[stor]\n", 4, "unknown section [stor]");
  expect_error("[workloads a]\noperator = MatMul\n", 1, "unknown section");
}

static void unknown_key_is_an_error(void **state) {
  (void)state;
  expect_error("[store]\npaht = x\n", 2, "unknown key 'paht' in [store]");
  expect_error("[calibration]\nrigor = quick\nthread = 2\n", 3, "unknown key 'thread'");
  expect_error("[lookup]\nforce_portabel = true\n", 2, "unknown key");
}

static void bad_boolean_is_an_error(void **state) {
  (void)state;
  expect_error("[store]\npersistence_enabled = maybe\n", 2, "persistence_enabled");
  expect_error("[lookup]\n\nforce_portable = 2\n", 3, "force_portable");
}

static void every_boolean_spelling_is_accepted(void **state) {
  static const char *yes[] = {"true", "yes", "on", "1", "TRUE", "Yes"};
  static const char *no[] = {"false", "no", "off", "0", "False", "OFF"};
  (void)state;
  for (size_t i = 0; i < 6; i++) {
    char text[128];
    config_settings cfg;
    snprintf(text, sizeof text, "[lookup]\nforce_portable = %s\n", yes[i]);
    load_ok(text, &cfg);
    assert_int_equal(cfg.force_portable, 1);
    config_free(&cfg);
    snprintf(text, sizeof text, "[store]\npersistence_enabled = %s\n", no[i]);
    load_ok(text, &cfg);
    assert_int_equal(cfg.persistence_enabled, 0);
    config_free(&cfg);
  }
}

static void bad_number_is_an_error(void **state) {
  (void)state;
  expect_error("[calibration]\nrepetitions = 12x\n", 2, "repetitions");
  expect_error("[calibration]\nrepetitions = -1\n", 2, "repetitions");
  expect_error("[calibration]\ntime_budget = fast\n", 2, "time_budget");
  expect_error("[calibration]\ntime_budget = 10 days\n", 2, "time_budget");
  expect_error("[calibration]\nplugin_timeout = 0\n", 2, "plugin_timeout");
  expect_error("[calibration]\nthreads = 0\n", 2, "threads");
  expect_error("[calibration]\nthreads = 1,1\n", 2, "listed twice");
  expect_error("[calibration]\nthreads = 1,maximum\n", 2, "threads");
}

/* The reference says "decimal": no empty list items, no hexadecimal, no
 * exponent, no sign, no inf/nan (these were accepted once). */
static void numbers_are_decimal_and_lists_have_no_empty_items(void **state) {
  (void)state;
  expect_error("[calibration]\nthreads = 1,,2\n", 2, "empty item");
  expect_error("[calibration]\nthreads = 1,\n", 2, "empty item");
  expect_error("[calibration]\nthreads = ,1\n", 2, "empty item");
  expect_error("[calibration]\ntime_budget = 0x10\n", 2, "time_budget");
  expect_error("[calibration]\ntime_budget = 1e3\n", 2, "time_budget");
  expect_error("[calibration]\ntime_budget = inf\n", 2, "time_budget");
  expect_error("[calibration]\nplugin_timeout = nan\n", 2, "plugin_timeout");
  expect_error("[calibration]\nplugin_timeout = +5\n", 2, "plugin_timeout");
  expect_error("[calibration]\nrepetitions = +5\n", 2, "repetitions");
  expect_error("[calibration]\nrepetitions = 1000001\n", 2, "repetitions");
  expect_error("[workload a]\noperator = MatMul\nshape = 0x10\n", 3, "shape");
  expect_error("[workload a]\noperator = MatMul\nshape = 4,\n", 3, "shape");
}

/* ---- the value parsers shared with the command line ---------------------- */

static void thread_lists_parse_with_one_set_of_limits(void **state) {
  uint32_t *list = NULL, one = 7;
  size_t n = 0;
  char why[256];
  (void)state;
  /* blanks around items, none around the value (issue 36 item 8) */
  assert_int_equal(config_value_threads(" 1, 2 ,MAX", &list, &n, why, sizeof why), -1);
  assert_int_equal(config_value_threads("1, 2 ,MAX", &list, &n, why, sizeof why), 0);
  assert_int_equal(n, 3);
  assert_int_equal(list[0], 1);
  assert_int_equal(list[1], 2);
  assert_int_equal(list[2], 0); /* max */
  free(list);
  assert_int_equal(config_value_threads("4096", &list, &n, why, sizeof why), 0);
  assert_int_equal(list[0], 4096);
  free(list);
  list = NULL;
  assert_int_equal(config_value_threads("1,1", &list, &n, why, sizeof why), -1);
  assert_non_null(strstr(why, "listed twice"));
  assert_null(list);
  assert_int_equal(config_value_threads("max,max", &list, &n, why, sizeof why), -1);
  assert_int_equal(config_value_threads("1,,2", &list, &n, why, sizeof why), -1);
  assert_non_null(strstr(why, "empty item"));
  assert_int_equal(config_value_threads("", &list, &n, why, sizeof why), -1);
  assert_int_equal(config_value_threads("4097", &list, &n, why, sizeof why), -1);
  assert_non_null(strstr(why, "'4097'"));
  assert_int_equal(config_value_threads("0", &list, &n, why, sizeof why), -1);
  assert_int_equal(config_value_threads("0x2", &list, &n, why, sizeof why), -1);
  assert_int_equal(config_value_threads("-1", &list, &n, why, sizeof why), -1);
  assert_null(list);

  assert_int_equal(config_value_thread_count("max", &one, why, sizeof why), 0);
  assert_int_equal(one, 0);
  assert_int_equal(config_value_thread_count(" 3 ", &one, why, sizeof why), -1);
  assert_int_equal(config_value_thread_count("3", &one, why, sizeof why), 0);
  assert_int_equal(one, 3);
  assert_int_equal(config_value_thread_count("0", &one, why, sizeof why), -1);
  assert_int_equal(config_value_thread_count("1,2", &one, why, sizeof why), -1);
  assert_int_equal(config_value_thread_count("4097", &one, why, sizeof why), -1);
  assert_int_equal(one, 3); /* unchanged on failure */
}

static void durations_are_decimal_with_a_unit(void **state) {
  double d = -1;
  char why[256];
  (void)state;
  static const struct {
    const char *text;
    double seconds;
  } good[] = {{"20", 20}, {"20s", 20},  {"1.5m", 90}, {"1h", 3600},     {".5", 0.5},
              {"5.", 5},  {"2 M", 120}, {"0", 0},     {"10000000", 1e7}};
  static const char *bad[] = {"",    ".",   "0x10",    "1e3",   "-1",       "+1",   "inf",
                              "nan", "1ms", "10 days", "1.2.3", "10000001", "2h30m"};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    if (config_value_duration(good[i].text, 1, &d, why, sizeof why) != 0)
      fail_msg("refused '%s': %s", good[i].text, why);
    assert_true(d == good[i].seconds);
  }
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    d = -1;
    if (config_value_duration(bad[i], 1, &d, why, sizeof why) == 0)
      fail_msg("accepted '%s' as %g s", bad[i], d);
    assert_true(d == -1);
    assert_non_null(strstr(why, "decimal"));
  }
  assert_int_equal(config_value_duration("0", 0, &d, why, sizeof why), -1);
  assert_non_null(strstr(why, "positive"));
  assert_int_equal(config_value_duration("0.0s", 0, &d, why, sizeof why), -1);
}

static void search_strategies_and_budgets_parse_strictly(void **state) {
  uint32_t n = 7;
  double sec = -1;
  int st = -1;
  char why[256];
  (void)state;
  assert_int_equal(config_value_strategy(" annealing ", &st, why, sizeof why), -1);
  assert_int_equal(config_value_strategy("annealing", &st, why, sizeof why), 0);
  assert_int_equal(st, CALHOST_SEARCH_ANNEALING);
  assert_int_equal(config_value_strategy("default", &st, why, sizeof why), 0);
  assert_int_equal(st, CALHOST_SEARCH_DEFAULT);
  assert_int_equal(config_value_strategy("Model", &st, why, sizeof why), -1);
  assert_non_null(strstr(why, "'Model' is not a search strategy"));
  assert_int_equal(st, CALHOST_SEARCH_DEFAULT); /* unchanged */
  /* a plain number is a count, a duration needs its unit */
  assert_int_equal(config_value_search_budget("40", &n, &sec, why, sizeof why), 0);
  assert_true(n == 40 && sec == 0);
  assert_int_equal(config_value_search_budget("1.5m", &n, &sec, why, sizeof why), 0);
  assert_true(n == 0 && sec == 90);
  assert_int_equal(config_value_search_budget("0", &n, &sec, why, sizeof why), 0);
  assert_true(n == 0 && sec == 0);
  static const char *bad[] = {"", "s", "1.5", "-1", "0s", "1e3", "1000000001", "5 x", "30 sec"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    n = 7;
    sec = -1;
    if (config_value_search_budget(bad[i], &n, &sec, why, sizeof why) == 0)
      fail_msg("accepted budget '%s'", bad[i]);
    assert_true(n == 7 && sec == -1);
    assert_non_null(strstr(why, "is not a search budget"));
  }
}

static void counts_shapes_and_booleans_parse_strictly(void **state) {
  unsigned long long x = 0;
  uint32_t reps = 9;
  int64_t dims[CALHOST_MAX_SHAPE_RANK];
  size_t rank = 0;
  int b = -1;
  char why[256];
  (void)state;
  assert_int_equal(config_value_repetitions("0", &reps, why, sizeof why), 0);
  assert_int_equal(reps, 0);
  assert_int_equal(config_value_repetitions("1000000", &reps, why, sizeof why), 0);
  assert_int_equal(config_value_repetitions("1000001", &reps, why, sizeof why), -1);
  assert_int_equal(config_value_repetitions("12x", &reps, why, sizeof why), -1);
  assert_int_equal(config_value_uint("18446744073709551616", 0, ~0ULL, &x, why, sizeof why), -1);
  assert_int_equal(config_value_uint("4294967295", 1, 4294967295ULL, &x, why, sizeof why), 0);
  assert_true(x == 4294967295ULL);

  assert_int_equal(config_value_shape("256, 64 ,32", dims, &rank, why, sizeof why), 0);
  assert_int_equal(rank, 3);
  assert_int_equal(dims[1], 64);
  assert_int_equal(config_value_shape("1,2,3,4,5,6,7,8", dims, &rank, why, sizeof why), 0);
  assert_int_equal(rank, 8);
  assert_int_equal(config_value_shape("1,2,3,4,5,6,7,8,9", dims, &rank, why, sizeof why), -1);
  assert_int_equal(config_value_shape("4,,4", dims, &rank, why, sizeof why), -1);
  assert_int_equal(config_value_shape("4,0", dims, &rank, why, sizeof why), -1);
  assert_int_equal(config_value_shape("9223372036854775808", dims, &rank, why, sizeof why), -1);
  assert_int_equal(rank, 8); /* unchanged */

  assert_int_equal(config_value_bool(" Off ", &b, why, sizeof why), -1);
  assert_int_equal(config_value_bool("Off", &b, why, sizeof why), 0);
  assert_int_equal(b, 0);
  assert_int_equal(config_value_bool("truthy", &b, why, sizeof why), -1);
  assert_int_equal(config_value_bool("", &b, why, sizeof why), -1);
}

static void durations_take_units(void **state) {
  config_settings cfg;
  (void)state;
  load_ok("[calibration]\ntime_budget = 1.5m\nplugin_timeout = 1h\n", &cfg);
  assert_true(cfg.time_budget_seconds == 90.0);
  assert_true(cfg.plugin_timeout_seconds == 3600.0);
  config_free(&cfg);
  load_ok("[calibration]\ntime_budget = 20s\nplugin_timeout = 45\n", &cfg);
  assert_true(cfg.time_budget_seconds == 20.0);
  assert_true(cfg.plugin_timeout_seconds == 45.0);
  config_free(&cfg);
}

static void bad_shape_is_an_error(void **state) {
  (void)state;
  expect_error("[workload a]\noperator = MatMul\nshape = 256,0,256\n", 3, "shape");
  expect_error("[workload a]\noperator = MatMul\nshape = 256,,256\n", 3, "shape");
  expect_error("[workload a]\noperator = MatMul\nshape = -4\n", 3, "shape");
  expect_error("[workload a]\noperator = MatMul\nshape = 4x4\n", 3, "shape");
  expect_error("[workload a]\noperator = MatMul\nshape = 1,2,3,4,5,6,7,8,9\n", 3, "shape");
  expect_error("[workload a]\noperator = MatMul\nshape = 99999999999999999999\n", 3, "shape");
}

static void bad_cpu_list_is_an_error(void **state) {
  (void)state;
  expect_error("[calibration]\ncpus = 3-1\n", 2, "cpus");
  expect_error("[calibration]\ncpus = 0,0\n", 2, "listed twice");
  expect_error("[calibration]\ncpus = some\n", 2, "cpus");
  expect_error("[calibration]\ncpus = 0-\n", 2, "cpus");
}

static void bad_rigor_is_an_error(void **state) {
  (void)state;
  expect_error("[calibration]\nrigor = thorough\n", 2, "quick, measure or exhaustive");
}

static void duplicate_key_is_an_error(void **state) {
  (void)state;
  expect_error("[calibration]\nrigor = quick\n; again\nrigor = measure\n", 4,
               "duplicate key 'rigor' in [calibration] (first at line 2)");
  expect_error("[workload a]\noperator = MatMul\nshape = 1\nshape = 2\n", 4, "duplicate key");
  expect_error("[plugin cpu_gemm]\nmax_isa = avx2\nmax_isa = avx512\n", 3, "duplicate key");
}

static void duplicate_section_is_an_error(void **state) {
  (void)state;
  expect_error("[workload a]\noperator = MatMul\nshape = 1\n\n[workload a]\n", 5,
               "duplicate section [workload a] (first at line 1)");
  expect_error("[plugin p]\n[plugin p]\n", 2, "duplicate section");
  /* a repeated [store] too, even when empty the first time */
  expect_error("[store]\n[lookup]\n[store]\npath = x\n", 3, "duplicate section [store]");
}

/* Issue 22 item 24: duplicates are found by the hash sets of a linear
 * reader among many sections and keys too, each naming its first line. */
static void duplicates_are_found_among_many_sections(void **state) {
  (void)state;
  size_t cap = 4u << 20, n = 0;
  char *text = malloc(cap);
  assert_non_null(text);
  for (unsigned i = 0; i < 5000; i++)
    n += (size_t)snprintf(text + n, cap - n, "[workload w%u]\noperator = MatMul\nshape = %u\n", i,
                          i + 1);
  config_settings cfg;
  text[n] = '\0';
  load_ok(text, &cfg);
  assert_int_equal(cfg.workload_count, 5000);
  assert_string_equal(config_workload_named(&cfg, "w4321")->name, "w4321");
  assert_int_equal(config_origin_of(&cfg, "workload.w4321.shape").line, 4321 * 3 + 3);
  config_free(&cfg);
  /* w1234 again at the end: line 3 * 1234 + 1 first */
  snprintf(text + n, cap - n, "[workload w1234]\noperator = MatMul\nshape = 1\n");
  expect_error(text, 5000 * 3 + 1, "duplicate section [workload w1234] (first at line 3703)");
  free(text);
}

/* Issue 22 item 4: [plugin NAME] time_budget is the host's key (never a
 * plugin setting): that plugin's budget instead of [calibration]'s. */
static void a_plugin_section_may_set_its_own_time_budget(void **state) {
  (void)state;
  config_settings cfg;
  load_ok("[calibration]\ntime_budget = 20s\n[plugin clblast]\ntime_budget = 4m\nwidth = 2\n",
          &cfg);
  const config_plugin_section *s = config_plugin_named(&cfg, "clblast");
  assert_non_null(s);
  assert_float_equal(s->time_budget_seconds, 240, 1e-9);
  assert_int_equal(s->setting_count, 1); /* width only */
  assert_string_equal(s->settings[0].name, "width");
  assert_float_equal(config_plugin_time_budget(&cfg, "clblast"), 240, 1e-9);
  assert_float_equal(config_plugin_time_budget(&cfg, "cpu_gemm"), 20, 1e-9);
  config_free(&cfg);
  expect_error("[plugin clblast]\n\ntime_budget = soon\n", 3, "bad value for 'time_budget'");
}

static void workload_needs_operator_and_shape(void **state) {
  (void)state;
  expect_error("[store]\n\n[workload a]\nshape = 4,4,4\n", 3, "lacks the required key 'operator'");
  expect_error("[workload a]\noperator = MatMul\n[lookup]\n", 1, "lacks the required key 'shape'");
  expect_error("[workload b]\noperator = MatMul\n", 1, "'shape'"); /* at the end of the file */
  expect_error("[workload]\noperator = MatMul\n", 1, "needs a name");
  expect_error("[store main]\n", 1, "takes no name");
}

/* Loads text as tmpdir/name (it must load) and expects the first workload's
 * digest to fail with "PATH:LINE: model file of [workload a]: ...needle". */
static void expect_digest_error(const char *text, unsigned line, const char *needle) {
  config_settings cfg;
  char err[1024], prefix[PATH_MAX + 32];
  const char *path = write_file("model.ini", text);
  if (config_load(path, &cfg, err, sizeof err) != 0)
    fail_msg("refused: %s", err);
  assert_null(cfg.workloads[0].model_digest); /* loading hashes nothing */
  assert_null(config_workload_digest(&cfg.workloads[0], err, sizeof err));
  snprintf(prefix, sizeof prefix, "%s:%u: model file of [workload a]: ", path, line);
  if (strncmp(err, prefix, strlen(prefix)) != 0 || !strstr(err, needle))
    fail_msg("expected '%s...%s', got '%s'", prefix, needle, err);
  assert_int_equal(config_digest_all(&cfg, err, sizeof err), -1);
  assert_non_null(strstr(err, needle));
  config_free(&cfg);
}

/* A missing model file does not stop the configuration from loading (a
 * command that needs no key never reads it); its digest fails with the
 * model key's line. */
static void missing_model_file_fails_its_digest_with_its_line(void **state) {
  (void)state;
  expect_digest_error("[workload a]\noperator = MatMul\nshape = 4\n\nmodel = no-such-model.onnx\n",
                      5, "no-such-model.onnx");
}

/* A model must be a regular file: hashing a device or a FIFO would never end
 * (or, for a FIFO, never start). */
static void non_regular_model_file_fails_its_digest(void **state) {
  char fifo[PATH_MAX + 16], text[PATH_MAX + 128];
  (void)state;
  expect_digest_error("[workload a]\noperator = MatMul\nshape = 4\nmodel = /dev/zero\n", 4,
                      "/dev/zero: is not a regular file");
  snprintf(fifo, sizeof fifo, "%s/model.fifo", tmpdir);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  snprintf(text, sizeof text, "[workload a]\noperator = MatMul\nshape = 4\nmodel = %s\n", fifo);
  expect_digest_error(text, 4, "is not a regular file");
  unlink(fifo);
}

/* Digests are computed on first use and cached: a model file changed after
 * the first use does not change the digest of this configuration. */
static void digest_is_computed_once_on_demand(void **state) {
  config_settings cfg;
  char err[512];
  const char *d1, *d2;
  (void)state;
  write_file("lazy.model", "abc");
  load_ok("[workload a]\noperator = MatMul\nshape = 4\nmodel = lazy.model\n", &cfg);
  assert_null(cfg.workloads[0].model_digest);
  d1 = config_workload_digest(&cfg.workloads[0], err, sizeof err);
  assert_non_null(d1);
  assert_string_equal(d1, SHA256_ABC);
  write_file("lazy.model", "");
  d2 = config_workload_digest(&cfg.workloads[0], err, sizeof err);
  assert_ptr_equal(d1, d2);
  assert_string_equal(d2, SHA256_ABC);
  config_free(&cfg);
}

static void syntax_errors_and_stray_keys_name_their_line(void **state) {
  (void)state;
  expect_error("[store]\npersistence_enabled = true\njust some words\n", 3, "syntax error");
  expect_error("path = x\n[store]\n", 1, "outside any section");
  expect_error("[store\npath = x\n", 1, "']'");
  expect_error("[store] trailing\n", 1, "after the section header");
  /* a syntax error before a bad value: the first one wins */
  expect_error("[store]\nnonsense\npersistence_enabled = maybe\n", 2, "syntax error");
  /* a bad value before a syntax error: the first one wins */
  expect_error("[store]\npersistence_enabled = maybe\nnonsense\n", 2, "persistence_enabled");
}

static void overlong_line_is_an_error_not_a_split(void **state) {
  char text[1024];
  (void)state;
  strcpy(text, "[store]\npath = /");
  for (int i = 0; i < 400; i++)
    strcat(text, "x");
  strcat(text, "\n");
  expect_error(text, 2, "line too long");
}

static void enabled_and_disabled_conflict(void **state) {
  (void)state;
  expect_error("[plugins]\nenabled = a, b\ndisabled = b\n", 3, "both enabled and disabled");
  expect_error("[plugins]\nenabled = a, a\n", 2, "twice");
  expect_error("[plugins]\nenabled = a b\n", 2, "bad backend name");
}

static void workload_property_rules(void **state) {
  (void)state;
  expect_error("[workload a]\noperator = MatMul\nshape = 4\nmodel_digest = x\n", 4, "reserved");
  expect_error("[workload a]\noperator = MatMul\nshape = 4\nlayout = a;b\n", 4, "layout");
  expect_error("[workload a]\noperator = Mat Mul\nshape = 4\n", 2, "operator");
}

/* ---- accepted files ------------------------------------------------------ */

static void defaults_are_documented_values(void **state) {
  config_settings cfg;
  (void)state;
  assert_int_equal(config_defaults(&cfg), 0);
  assert_null(cfg.source_path);
  assert_null(cfg.store_path);
  assert_int_equal(cfg.persistence_enabled, 1);
  assert_int_equal(cfg.cpus_all, 1);
  assert_int_equal(cfg.thread_count_count, 2);
  assert_int_equal(cfg.thread_counts[0], 1);
  assert_int_equal(cfg.thread_counts[1], 0); /* max */
  assert_int_equal(cfg.rigor, CALHOST_RIGOR_MEASURE);
  assert_true(cfg.time_budget_seconds == 60.0);
  assert_int_equal(cfg.repetitions, 0);
  assert_true(cfg.plugin_timeout_seconds == 120.0);
  assert_int_equal(cfg.force_portable, 0);
  assert_int_equal(cfg.workload_count, 0);
  assert_null(config_origin_of(&cfg, "calibration.rigor").file);
  assert_int_equal(config_backend_enabled(&cfg, "anything"), 1);
  config_free(&cfg);
  config_free(&cfg); /* freeing twice is harmless: it was zeroed */
  config_free(NULL);
}

static void a_full_file_is_read_with_origins(void **state) {
  config_settings cfg;
  const config_workload *w;
  const config_plugin_section *ps;
  config_origin o;
  char path[PATH_MAX + 32];
  (void)state;
  load_ok("; comment\n"
          "[store]\n"
          "path = profiles.txt\n"
          "persistence_enabled = off\n"
          "[plugins]\n"
          "directories = /opt/a:plugins\n"
          "enabled = cpu_gemm, openblas\n"
          "disabled = example\n"
          "[calibration]\n"
          "  cpus = 0-1 ; indented keys are ordinary keys\n"
          "  threads = 1, 2, max\n"
          "rigor = exhaustive\n"
          "[workload sq]\n"
          "operator = MatMul\n"
          "shape = 256, 256, 256\n"
          "accumulate = 1\n"
          "[plugin cpu_gemm]\n"
          "max_isa = avx2\n",
          &cfg);
  snprintf(path, sizeof path, "%s/profiles.txt", tmpdir);
  assert_string_equal(cfg.store_path, path); /* relative to the config's dir */
  assert_int_equal(cfg.persistence_enabled, 0);
  assert_int_equal(cfg.plugin_dir_count, 2);
  assert_string_equal(cfg.plugin_dirs[0], "/opt/a");
  snprintf(path, sizeof path, "%s/plugins", tmpdir);
  assert_string_equal(cfg.plugin_dirs[1], path);
  assert_int_equal(cfg.enabled_count, 2);
  assert_true(config_backend_enabled(&cfg, "openblas"));
  assert_false(config_backend_enabled(&cfg, "example"));
  assert_false(config_backend_enabled(&cfg, "other"));
  assert_int_equal(cfg.cpus_all, 0);
  assert_int_equal(cfg.cpu_count, 2);
  assert_int_equal(cfg.cpus[1], 1);
  assert_int_equal(cfg.thread_count_count, 3);
  assert_int_equal(cfg.thread_counts[2], 0);
  assert_int_equal(cfg.rigor, CALHOST_RIGOR_EXHAUSTIVE);
  assert_string_equal(base_rigor_name(cfg.rigor), "exhaustive");

  w = config_workload_named(&cfg, "sq");
  assert_non_null(w);
  assert_null(config_workload_named(&cfg, "nope"));
  assert_string_equal(w->operator_name, "MatMul");
  assert_string_equal(w->dtype, "float32"); /* default */
  assert_int_equal(w->shape_rank, 3);
  assert_int_equal(w->shape[2], 256);
  assert_int_equal(w->property_count, 1);
  assert_string_equal(w->properties[0].name, "accumulate");
  assert_string_equal(w->properties[0].value, "1");
  assert_int_equal(w->origin.line, 13);
  ps = config_plugin_named(&cfg, "cpu_gemm");
  assert_non_null(ps);
  assert_int_equal(ps->setting_count, 1);
  assert_string_equal(ps->settings[0].value, "avx2");
  assert_int_equal(ps->origin.line, 17);

  o = config_origin_of(&cfg, "calibration.rigor");
  assert_string_equal(o.file, cfg.source_path);
  assert_int_equal(o.line, 12);
  assert_int_equal(config_origin_of(&cfg, "calibration.cpus").line, 10);
  assert_int_equal(config_origin_of(&cfg, "workload.sq.shape").line, 15);
  assert_int_equal(config_origin_of(&cfg, "plugin.cpu_gemm.max_isa").line, 18);
  o = config_origin_of(&cfg, "calibration.time_budget");
  assert_null(o.file); /* default */
  assert_int_equal(o.line, 0);
  config_free(&cfg);
}

typedef struct visit_log {
  int rigor_line;
  int budget_default;
  int digest_seen;
  int keys;
} visit_log;

static int record_visit(void *user, const char *section, const char *key, const char *value,
                        config_origin origin) {
  visit_log *log = user;
  log->keys++;
  if (!strcmp(section, "calibration") && !strcmp(key, "rigor")) {
    assert_string_equal(value, "quick");
    log->rigor_line = (int)origin.line;
  }
  if (!strcmp(section, "calibration") && !strcmp(key, "time_budget"))
    log->budget_default = origin.file == NULL && !strcmp(value, "60");
  if (!strcmp(section, "workload w") && !strcmp(key, "model_digest"))
    log->digest_seen = value && !strncmp(value, "sha256:", 7);
  return 0;
}

static void visit_walks_every_key_with_its_origin(void **state) {
  config_settings cfg;
  visit_log log = {0};
  (void)state;
  load_ok("[calibration]\n\nrigor = quick\n[workload w]\noperator = Add\nshape = 8\n", &cfg);
  assert_int_equal(config_digest_all(&cfg, NULL, 0), 0);
  assert_int_equal(config_visit(&cfg, record_visit, &log), 0);
  assert_int_equal(log.rigor_line, 3);
  assert_true(log.budget_default);
  assert_true(log.digest_seen);
  assert_true(log.keys >= 17);
  config_free(&cfg);
}

/* The values built from lists: joined with their separator, in order. */
typedef struct list_log {
  char enabled[64], threads[64], shape[64], devices[64];
} list_log;

static int record_lists(void *user, const char *section, const char *key, const char *value,
                        config_origin origin) {
  list_log *log = user;
  char *into = NULL;
  (void)origin;
  if (!strcmp(section, "plugins") && !strcmp(key, "enabled"))
    into = log->enabled;
  else if (!strcmp(section, "calibration") && !strcmp(key, "threads"))
    into = log->threads;
  else if (!strcmp(section, "workload w") && !strcmp(key, "shape"))
    into = log->shape;
  else if (!strcmp(section, "plugin x") && !strcmp(key, "devices"))
    into = log->devices;
  if (into)
    snprintf(into, 64, "%s", value ? value : "(null)");
  return 0;
}

static void visit_joins_list_values_in_order(void **state) {
  config_settings cfg;
  list_log log;
  memset(&log, 0, sizeof log);
  (void)state;
  load_ok("[plugins]\nenabled = b, a\n[calibration]\nthreads = 2, max\n"
          "[workload w]\noperator = Add\nshape = 2, 3\n[plugin x]\ndevices = 1, 0\n",
          &cfg);
  assert_int_equal(config_visit(&cfg, record_lists, &log), 0);
  assert_string_equal(log.enabled, "b,a");
  assert_string_equal(log.threads, "2,max");
  assert_string_equal(log.shape, "2,3");
  assert_string_equal(log.devices, "1, 0");
  config_free(&cfg);
}

/* ---- digests --------------------------------------------------------------- */

static void model_digest_matches_sha256sum(void **state) {
  config_settings cfg;
  char out[CALHOST_DIGEST_CAPACITY], err[256];
  (void)state;
  write_file("abc.model", "abc");
  write_file("empty.model", "");
  load_ok("[workload a]\noperator = MatMul\nshape = 4\nmodel = abc.model\n"
          "[workload e]\noperator = MatMul\nshape = 4\nmodel = empty.model\n",
          &cfg);
  assert_int_equal(config_digest_all(&cfg, err, sizeof err), 0);
  assert_string_equal(cfg.workloads[0].model_digest, SHA256_ABC);
  assert_string_equal(cfg.workloads[1].model_digest, SHA256_EMPTY);
  config_free(&cfg);

  assert_int_equal(config_digest_bytes("abc", 3, out), 0);
  assert_string_equal(out, SHA256_ABC);
  assert_int_equal(config_digest_bytes("", 0, out), 0);
  assert_string_equal(out, SHA256_EMPTY);
  assert_int_equal(config_digest_file("/nonexistent/model", out, err, sizeof err), -1);
  assert_non_null(strstr(err, "/nonexistent/model"));
}

static void workload_without_model_digests_its_canonical_description(void **state) {
  config_settings cfg;
  char canon[256];
  size_t n;
  (void)state;
  /* properties given out of order: the canonical form sorts them */
  load_ok("[workload w]\nzeta = 1\noperator = MatMul\nshape = 256,256,256\nalpha = 2\n", &cfg);
  n = config_workload_canonical(&cfg.workloads[0], canon, sizeof canon);
  assert_string_equal(canon, "operator=MatMul;dtype=float32;shape=256,256,256;alpha=2;zeta=1;");
  assert_int_equal(n, strlen(canon));
  assert_string_equal(config_workload_digest(&cfg.workloads[0], NULL, 0), SHA256_CANON_SORTED);
  /* truncation is reported like snprintf */
  assert_int_equal(config_workload_canonical(&cfg.workloads[0], canon, 8), n);
  assert_int_equal(strlen(canon), 7);
  config_free(&cfg);
}

static void equal_workloads_under_other_names_share_a_digest(void **state) {
  config_settings cfg;
  (void)state;
  load_ok("[workload a]\noperator = MatMul\nshape = 8,8,8\n"
          "[workload b]\nshape = 8,8,8\noperator = MatMul\n"
          "[workload c]\noperator = MatMul\nshape = 8,8,9\n",
          &cfg);
  assert_int_equal(config_digest_all(&cfg, NULL, 0), 0);
  assert_string_equal(cfg.workloads[0].model_digest, cfg.workloads[1].model_digest);
  assert_string_not_equal(cfg.workloads[0].model_digest, cfg.workloads[2].model_digest);
  config_free(&cfg);
}

/* ---- load_string, odd input ------------------------------------------------- */

static void load_string_names_its_source(void **state) {
  config_settings cfg;
  char err[256];
  static const char text[] = "[lookup]\nforce_portable = nah\n";
  (void)state;
  assert_int_equal(config_load_string(text, sizeof text - 1, "inline.ini", &cfg, err, sizeof err),
                   -1);
  assert_non_null(strstr(err, "inline.ini:2: "));
  assert_int_equal(
      config_load_string("[lookup]\nforce_portable = on", 28, "x.ini", &cfg, err, sizeof err), 0);
  assert_int_equal(cfg.force_portable, 1);
  config_free(&cfg);
  /* a NUL byte is refused with its line */
  assert_int_equal(config_load_string("[store]\n\0x", 10, "nul.ini", &cfg, err, sizeof err), -1);
  assert_non_null(strstr(err, "nul.ini:2: "));
  /* CRLF line ends and a UTF-8 BOM are fine */
  {
    static const char crlf[] = "\xEF\xBB\xBF[lookup]\r\nforce_portable = yes\r\n";
    assert_int_equal(config_load_string(crlf, sizeof crlf - 1, "crlf.ini", &cfg, err, sizeof err),
                     0);
  }
  assert_int_equal(cfg.force_portable, 1);
  config_free(&cfg);
}

static void missing_file_is_an_error(void **state) {
  config_settings cfg;
  char err[512];
  (void)state;
  assert_int_equal(config_load("/nonexistent/calhost.ini", &cfg, err, sizeof err), -1);
  assert_non_null(strstr(err, "/nonexistent/calhost.ini"));
  assert_int_equal(config_load(tmpdir, &cfg, err, sizeof err), -1); /* a directory */
}

/* ---- default search ------------------------------------------------------------ */

static void default_search_order(void **state) {
  char cwd[PATH_MAX], buf[PATH_MAX], want[PATH_MAX + 64], sub[PATH_MAX + 32];
  const char *src = getenv("CALHOST_SOURCE_DIR");
  char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
  char *old_xdg = getenv("XDG_CONFIG_HOME") ? strdup(getenv("XDG_CONFIG_HOME")) : NULL;
  (void)state;
  assert_non_null(getcwd(cwd, sizeof cwd));
  snprintf(sub, sizeof sub, "%s/work", tmpdir);
  mkdir(sub, 0700);
  snprintf(sub, sizeof sub, "%s/xdg", tmpdir);
  mkdir(sub, 0700);
  snprintf(sub, sizeof sub, "%s/xdg/calhost", tmpdir);
  mkdir(sub, 0700);
  snprintf(sub, sizeof sub, "%s/home", tmpdir);
  mkdir(sub, 0700);
  snprintf(sub, sizeof sub, "%s/home/.config", tmpdir);
  mkdir(sub, 0700);
  snprintf(sub, sizeof sub, "%s/home/.config/calhost", tmpdir);
  mkdir(sub, 0700);
  write_file("work/calhost.ini", "[store]\n");
  write_file("xdg/calhost/calhost.ini", "[store]\n");
  write_file("home/.config/calhost/calhost.ini", "[store]\n");
  snprintf(sub, sizeof sub, "%s/work", tmpdir);
  assert_int_equal(chdir(sub), 0);
  snprintf(sub, sizeof sub, "%s/xdg", tmpdir);
  setenv("XDG_CONFIG_HOME", sub, 1);
  snprintf(sub, sizeof sub, "%s/home", tmpdir);
  setenv("HOME", sub, 1);

  /* 1. ./calhost.ini */
  assert_int_equal(config_find_default(buf, sizeof buf), 0);
  assert_string_equal(buf, "calhost.ini");
  /* 2. $XDG_CONFIG_HOME/calhost/calhost.ini */
  unlink("calhost.ini");
  assert_int_equal(config_find_default(buf, sizeof buf), 0);
  snprintf(want, sizeof want, "%s/xdg/calhost/calhost.ini", tmpdir);
  assert_string_equal(buf, want);
  /* 3. without XDG_CONFIG_HOME (or with a relative one): ~/.config */
  unsetenv("XDG_CONFIG_HOME");
  assert_int_equal(config_find_default(buf, sizeof buf), 0);
  snprintf(want, sizeof want, "%s/home/.config/calhost/calhost.ini", tmpdir);
  assert_string_equal(buf, want);
  setenv("XDG_CONFIG_HOME", "relative/dir", 1);
  assert_int_equal(config_find_default(buf, sizeof buf), 0);
  assert_string_equal(buf, want);
  /* a set XDG_CONFIG_HOME without the file does not fall back to ~/.config */
  snprintf(sub, sizeof sub, "%s/work", tmpdir);
  setenv("XDG_CONFIG_HOME", sub, 1);
  /* 4. then the installed config, then (from the build tree) the source's */
  if (config_find_default(buf, sizeof buf) == 0) {
    char src_cfg[PATH_MAX];
    snprintf(src_cfg, sizeof src_cfg, "%s/config/calhost.ini", src ? src : "");
    if (strcmp(buf, src_cfg) != 0 && !strstr(buf, "/calhost/calhost.ini"))
      fail_msg("unexpected fallback %s", buf);
    if (src)
      assert_true(strcmp(buf, src_cfg) == 0 || access(buf, R_OK) == 0);
  } else {
    assert_null(src); /* from the build tree the source config is always found */
  }
  /* a small buffer is refused, not overrun */
  assert_int_equal(chdir(tmpdir), 0);
  write_file("calhost.ini", "[store]\n");
  assert_int_equal(config_find_default(buf, 5), -1);

  assert_int_equal(chdir(cwd), 0);
  if (old_home)
    setenv("HOME", old_home, 1);
  else
    unsetenv("HOME");
  if (old_xdg)
    setenv("XDG_CONFIG_HOME", old_xdg, 1);
  else
    unsetenv("XDG_CONFIG_HOME");
  free(old_home);
  free(old_xdg);
}

/* config show's roles: each place of the search says what it is; a file
 * that is none of them (a --config FILE) has none. */
static void default_search_names_each_place_role(void **state) {
  char buf[PATH_MAX + 128], sub[PATH_MAX + 32];
  const char *kind = "unset", *src = getenv("CALHOST_SOURCE_DIR");
  char *old_xdg = getenv("XDG_CONFIG_HOME") ? strdup(getenv("XDG_CONFIG_HOME")) : NULL;
  (void)state;
  assert_non_null(config_default_role("calhost.ini", &kind, buf, sizeof buf));
  assert_string_equal(kind, "current_directory");
  snprintf(sub, sizeof sub, "%s/xdg", tmpdir);
  setenv("XDG_CONFIG_HOME", sub, 1);
  snprintf(sub, sizeof sub, "%s/xdg/calhost/calhost.ini", tmpdir);
  assert_non_null(config_default_role(sub, &kind, buf, sizeof buf));
  assert_string_equal(kind, "user");
  assert_string_equal(buf, "the user's configuration");
  if (src) { /* run from the build tree: the source's config is a place */
    snprintf(sub, sizeof sub, "%s/config/calhost.ini", src);
    char real[PATH_MAX];
    if (realpath(sub, real) && config_default_role(real, &kind, buf, sizeof buf))
      assert_string_equal(kind, "source");
  }
  assert_null(config_default_role("/nowhere/else.ini", &kind, buf, sizeof buf));
  assert_null(kind);
  if (old_xdg)
    setenv("XDG_CONFIG_HOME", old_xdg, 1);
  else
    unsetenv("XDG_CONFIG_HOME");
  free(old_xdg);
}

/* ---- the shipped files ---------------------------------------------------------- */

static void shipped_configs_load_cleanly(void **state) {
  const char *src = getenv("CALHOST_SOURCE_DIR");
  char path[PATH_MAX], err[1024];
  config_settings cfg;
  (void)state;
  if (!src)
    fail_msg("CALHOST_SOURCE_DIR is not set (run the test through ctest)");
  snprintf(path, sizeof path, "%s/config/calhost.ini", src);
  if (config_load(path, &cfg, err, sizeof err) != 0)
    fail_msg("%s", err);
  assert_true(cfg.workload_count >= 3);
  assert_int_equal(cfg.force_portable, 0);
  assert_int_equal(cfg.rigor, CALHOST_RIGOR_MEASURE);
  /* issue 22 item 4: clblast is calibrated by the main job, with a budget
   * of its own (its kernels compile for tens of seconds on PoCL) */
  for (size_t i = 0; i < cfg.disabled_count; i++)
    assert_string_not_equal(cfg.disabled_backends[i], "clblast");
  assert_true(config_plugin_time_budget(&cfg, "clblast") > cfg.time_budget_seconds);
  assert_float_equal(config_plugin_time_budget(&cfg, "cpu_gemm"), cfg.time_budget_seconds, 0);
  for (size_t i = 0; i < cfg.workload_count; i++) {
    assert_string_equal(cfg.workloads[i].operator_name, "MatMul");
    assert_int_equal(cfg.workloads[i].shape_rank, 3);
    assert_int_equal(strlen(config_workload_digest(&cfg.workloads[i], NULL, 0)), 71);
  }
  config_free(&cfg);

  snprintf(path, sizeof path, "%s/config/deploy-portable.ini", src);
  if (config_load(path, &cfg, err, sizeof err) != 0)
    fail_msg("%s", err);
  assert_int_equal(cfg.force_portable, 1);
  assert_true(cfg.workload_count >= 3);
  {
    /* the same workloads as calhost.ini, with the same digests */
    config_settings def;
    snprintf(path, sizeof path, "%s/config/calhost.ini", src);
    assert_int_equal(config_load(path, &def, err, sizeof err), 0);
    for (size_t i = 0; i < def.workload_count; i++) {
      const config_workload *w = config_workload_named(&cfg, def.workloads[i].name);
      assert_non_null(w);
      assert_string_equal(config_workload_digest(w, NULL, 0),
                          config_workload_digest(&def.workloads[i], NULL, 0));
    }
    config_free(&def);
  }
  config_free(&cfg);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(unknown_section_is_an_error),
      cmocka_unit_test(unknown_key_is_an_error),
      cmocka_unit_test(bad_boolean_is_an_error),
      cmocka_unit_test(every_boolean_spelling_is_accepted),
      cmocka_unit_test(bad_number_is_an_error),
      cmocka_unit_test(durations_take_units),
      cmocka_unit_test(numbers_are_decimal_and_lists_have_no_empty_items),
      cmocka_unit_test(thread_lists_parse_with_one_set_of_limits),
      cmocka_unit_test(plugin_devices_select_indices_or_identities),
      cmocka_unit_test(durations_are_decimal_with_a_unit),
      cmocka_unit_test(search_strategies_and_budgets_parse_strictly),
      cmocka_unit_test(counts_shapes_and_booleans_parse_strictly),
      cmocka_unit_test(bad_shape_is_an_error),
      cmocka_unit_test(bad_cpu_list_is_an_error),
      cmocka_unit_test(bad_rigor_is_an_error),
      cmocka_unit_test(duplicate_key_is_an_error),
      cmocka_unit_test(duplicate_section_is_an_error),
      cmocka_unit_test(duplicates_are_found_among_many_sections),
      cmocka_unit_test(a_plugin_section_may_set_its_own_time_budget),
      cmocka_unit_test(workload_needs_operator_and_shape),
      cmocka_unit_test(missing_model_file_fails_its_digest_with_its_line),
      cmocka_unit_test(non_regular_model_file_fails_its_digest),
      cmocka_unit_test(digest_is_computed_once_on_demand),
      cmocka_unit_test(syntax_errors_and_stray_keys_name_their_line),
      cmocka_unit_test(overlong_line_is_an_error_not_a_split),
      cmocka_unit_test(enabled_and_disabled_conflict),
      cmocka_unit_test(workload_property_rules),
      cmocka_unit_test(defaults_are_documented_values),
      cmocka_unit_test(a_full_file_is_read_with_origins),
      cmocka_unit_test(visit_walks_every_key_with_its_origin),
      cmocka_unit_test(visit_joins_list_values_in_order),
      cmocka_unit_test(model_digest_matches_sha256sum),
      cmocka_unit_test(workload_without_model_digests_its_canonical_description),
      cmocka_unit_test(equal_workloads_under_other_names_share_a_digest),
      cmocka_unit_test(load_string_names_its_source),
      cmocka_unit_test(missing_file_is_an_error),
      cmocka_unit_test(default_search_order),
      cmocka_unit_test(default_search_names_each_place_role),
      cmocka_unit_test(shipped_configs_load_cleanly),
  };
  return cmocka_run_group_tests_name("config", tests, setup_dir, teardown_dir);
}
