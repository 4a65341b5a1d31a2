/*
 * test_verify_devices.c: verify_devices: `calhost verify`, `lookup
 * --workload` and calibrate on a device backend, end to end with the test
 * plugin test_devices (tests/plugins/misbehave.c: two GPUs "fake-gpu-a v1"
 * and "fake-gpu-b v1", a CPU device; the exact key's processor is the
 * device identity). Issue 22:
 *   - item 15: verify judges every device's key (it judged device 0 and
 *     called device 1's "same key as before"): device 1's profile made
 *     1000x too good is "slower", device 0's is "ok"; the table has a
 *     device column and --json a "device" object;
 *   - item 17: a stored median of 0 is "invalid" (nothing was compared),
 *     never "ok"; figures (1e300 device seconds, a 1e-300 stored median)
 *     printed with significant digits;
 *   - item 16: lookup --workload on a device backend builds the key for the
 *     first device of [plugin NAME] devices (it took device 0 always);
 *   - item 32: lookup --explain shows the asked key's rejections and counts
 *     the profiles for other keys (it listed every one as rejected);
 *   - item 1: a lookup without --plugin asks every enabled plugin serving
 *     the operator until one selects a profile;
 *   - item 27: a device listing's failure names the backend once;
 *   - item 21: with no device on the machine calibrate and verify skip the
 *     plugin and say so ("has no device on this machine"), never "no
 *     configured workload uses an operator of the selected plugins".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>
#include <jansson.h>

#include "calhost/calstore.h"
#include "harness.h"

static char g_dir[256];
static char g_store[600];

/* Runs a shell command line (harness_shell: "$CALHOST" is bin/calhost)
 * in g_dir; *out gets its stdout (and stderr with 2>&1). */
static int run(char **out, const char *fmt, ...) {
  char cmd[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  harness_opts o = {.cwd = g_dir};
  harness_result r = {0};
  int code = harness_shell(&o, &r, cmd);
  *out = r.out;
  free(r.err);
  return code;
}

/* A configuration of test_devices alone with one ReduceSum workload and
 * [plugin test_devices] devices = `devices` (NULL: no such key). */
static void write_config(const char *name, const char *devices, char *path, size_t cap) {
  snprintf(path, cap, "%s/%s.ini", g_dir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f,
          "[store]\npath = %s\n[plugins]\ndirectories = %s/lib/calhost/test-plugins/devices\n"
          "enabled = test_devices\n[calibration]\nthreads = 1\nrigor = quick\ntime_budget = 60\n"
          "[workload w]\noperator = ReduceSum\nshape = 1024\n",
          g_store, getenv("CALHOST_BUILD_DIR"));
  if (devices)
    fprintf(f, "[plugin test_devices]\ndevices = %s\n", devices);
  fclose(f);
}

/* ---- crafting the store: one device's stored median scaled -------------- */

typedef struct craft {
  calstore_batch *batch;
  const char *processor; /* the device identity whose exact profile changes */
  double scale;
  int changed;
} craft;

static int craft_one(void *user, const calstore_profile *p) {
  craft *c = user;
  if (p->key.kind != CALSTORE_KEY_EXACT || strcmp(p->key.processor, c->processor))
    return 0;
  calstore_profile q = *p;
  calstore_measurement m[32];
  size_t n = p->measurement_count < 32 ? p->measurement_count : 32;
  memcpy(m, p->measurements, n * sizeof *m);
  for (size_t i = 0; i < n; i++)
    if (!strcmp(m[i].name, "median_latency") || !strcmp(m[i].name, "spread"))
      m[i].value *= c->scale;
  q.measurements = m;
  q.measurement_count = n;
  assert_int_equal(calstore_batch_put(c->batch, &q, NULL), CALSTORE_OK);
  c->changed++;
  return 0;
}

static void scale_median(const char *processor, double scale) {
  calstore_options so;
  calstore_options_init(&so);
  so.path = g_store;
  calstore *s = NULL;
  assert_int_equal(calstore_open(&so, &s, NULL), CALSTORE_OK);
  craft c = {NULL, processor, scale, 0};
  assert_int_equal(calstore_batch_begin(s, &c.batch, NULL), CALSTORE_OK);
  assert_int_equal(calstore_inspect(s, craft_one, &c), CALSTORE_OK);
  assert_int_equal(c.changed, 1);
  assert_int_equal(calstore_batch_commit(&c.batch, NULL), CALSTORE_OK);
  calstore_close(&s);
}

static json_t *row_on_device(json_t *results, unsigned device) {
  size_t i;
  json_t *row;
  json_array_foreach(results, i, row) {
    json_t *d = json_object_get(row, "device");
    if (json_is_object(d) && json_integer_value(json_object_get(d, "index")) == (json_int_t)device)
      return row;
  }
  return NULL;
}

/* ---- tests ------------------------------------------------------------- */

static void verify_judges_every_device_and_names_it(void **state) {
  (void)state;
  char cfg[700], *out;
  write_config("two", "0, 1", cfg, sizeof cfg);
  remove(g_store);
  assert_int_equal(run(&out, "\"$CALHOST\" --config '%s' calibrate 2>&1", cfg), 0);
  free(out);
  /* device 0 generous (1000x slower stored: ok), device 1 made 1000x too
   * good (slower) */
  scale_median("fake-gpu-a v1", 1000.0);
  scale_median("fake-gpu-b v1", 1.0 / 1000.0);
  int rc = run(&out, "\"$CALHOST\" --config '%s' verify --threshold 3 --json 2>/dev/null", cfg);
  json_t *doc = json_loads(out, 0, NULL);
  if (rc != 1 || !doc)
    fprintf(stderr, "rc %d\n%s\n", rc, out);
  assert_int_equal(rc, 1);
  assert_non_null(doc);
  json_t *results = json_object_get(doc, "results");
  assert_int_equal(json_array_size(results), 2);
  json_t *d0 = row_on_device(results, 0), *d1 = row_on_device(results, 1);
  assert_non_null(d0);
  assert_non_null(d1);
  assert_string_equal(json_string_value(json_object_get(d0, "verdict")), "ok");
  assert_string_equal(json_string_value(json_object_get(d1, "verdict")), "slower");
  assert_string_equal(json_string_value(json_object_get(json_object_get(d1, "device"), "identity")),
                      "fake-gpu-b v1");
  json_decref(doc);
  free(out);

  /* the text: a device column, one progress line per device, none "same key" */
  rc = run(&out, "\"$CALHOST\" --config '%s' verify --threshold 3 2>&1", cfg);
  assert_int_equal(rc, 1);
  assert_null(strstr(out, "same key as before"));
  assert_non_null(strstr(out, "test_devices w t=1 device 1: slower"));
  char *header = strstr(out, "backend");
  assert_non_null(header);
  assert_non_null(strstr(header, "threads  device  verdict"));
  free(out);

  /* item 17: a stored median of 0 compares nothing: invalid, not ok */
  scale_median("fake-gpu-a v1", 0.0);
  rc = run(&out, "\"$CALHOST\" --config '%s' verify --threshold 3 --json 2>/dev/null", cfg);
  assert_int_equal(rc, 1);
  doc = json_loads(out, 0, NULL);
  assert_non_null(doc);
  d0 = row_on_device(json_object_get(doc, "results"), 0);
  assert_non_null(d0);
  assert_string_equal(json_string_value(json_object_get(d0, "verdict")), "invalid");
  assert_non_null(strstr(json_string_value(json_object_get(d0, "reason")), "median_latency is 0"));
  json_decref(doc);
  free(out);

  /* --recalibrate recalibrates exactly the two failed devices' keys */
  rc = run(&out, "\"$CALHOST\" --config '%s' verify --threshold 3 --recalibrate --json 2>/dev/null",
           cfg);
  doc = json_loads(out, 0, NULL);
  if (rc != 0 || !doc)
    fprintf(stderr, "rc %d\n%s\n", rc, out);
  assert_int_equal(rc, 0);
  assert_int_equal(
      json_integer_value(json_object_get(json_object_get(doc, "recalibrated"), "keys")), 2);
  json_decref(doc);
  free(out);
}

/* The processor of the exact profile `lookup --workload w --json` selects. */
static char *looked_up_processor(const char *cfg, const char *extra) {
  char *out;
  int rc =
      run(&out, "\"$CALHOST\" --config '%s' lookup --workload w --plugin test_devices %s --json",
          cfg, extra);
  json_t *doc = json_loads(out, 0, NULL);
  if (rc != 0 || !doc)
    fprintf(stderr, "rc %d\n%s\n", rc, out);
  assert_int_equal(rc, 0);
  assert_non_null(doc);
  json_t *p = json_object_get(doc, "profile");
  assert_string_equal(json_string_value(json_object_get(p, "kind")), "exact");
  char *proc = strdup(json_string_value(json_object_get(p, "processor")));
  json_decref(doc);
  free(out);
  return proc;
}

static void lookup_builds_the_key_of_the_configured_device(void **state) {
  (void)state;
  char all[700], one[700], *out;
  write_config("all", NULL, all, sizeof all);
  write_config("one", "1", one, sizeof one);
  remove(g_store);
  assert_int_equal(run(&out, "\"$CALHOST\" --config '%s' calibrate 2>&1", all), 0);
  free(out);
  char *p = looked_up_processor(all, "");
  assert_string_equal(p, "fake-gpu-a v1"); /* no selection: the first device */
  free(p);
  p = looked_up_processor(one, ""); /* devices = 1: what calibrate calibrates */
  assert_string_equal(p, "fake-gpu-b v1");
  free(p);
  p = looked_up_processor(one, "--device 2"); /* --device still wins */
  assert_string_equal(p, "fake-cpu v1");
  free(p);

  /* item 32: --explain shows the rejections of the asked key and counts the
   * backend's profiles for other keys (the other devices'), listed with -v */
  int rc = run(&out,
               "\"$CALHOST\" --config '%s' lookup --workload w --plugin test_devices --explain "
               "--force-portable 2>&1",
               all);
  assert_int_equal(rc, 0);
  const char *mine = strstr(out, "rejected [force_portable]");
  assert_non_null(mine);
  assert_null(strstr(mine + 1, "rejected [")); /* only this key's exact profile */
  assert_non_null(strstr(out, "  2 other profiles of test_devices ReduceSum, for other keys "
                              "(force_portable 2); --verbose lists them\n"));
  free(out);
  rc = run(&out,
           "\"$CALHOST\" --config '%s' lookup --workload w --plugin test_devices --explain 2>&1",
           all);
  assert_int_equal(rc, 0);
  assert_null(strstr(out, "rejected [different_processor]"));
  assert_non_null(strstr(out, "(different_processor 2)"));
  free(out);
  rc = run(&out,
           "\"$CALHOST\" -v --config '%s' lookup --workload w --plugin test_devices --explain "
           "2>/dev/null",
           all);
  assert_int_equal(rc, 0);
  const char *first = strstr(out, "rejected [different_processor]");
  assert_non_null(first);
  assert_non_null(strstr(first + 1, "rejected [different_processor]"));
  assert_non_null(strstr(out, "listed above: 2 other profiles"));
  free(out);
}

static void no_device_is_a_clear_skip(void **state) {
  (void)state;
  char cfg[700], *out;
  write_config("none", "1", cfg, sizeof cfg);
  remove(g_store);
  int rc = run(&out, "CALHOST_TEST_DEVICE_COUNT=0 \"$CALHOST\" --config '%s' calibrate 2>&1", cfg);
  if (!strstr(out, "nothing was calibrated: test_devices has no device on this machine"))
    fprintf(stderr, "rc %d\n%s\n", rc, out);
  assert_int_equal(rc, 0); /* a skip, not a failure (issue 26: never fails the run) */
  assert_non_null(strstr(out, "test_devices has no device on this machine: skipped"));
  assert_non_null(
      strstr(out, "nothing was calibrated: test_devices has no device on this machine"));
  assert_null(strstr(out, "no configured workload"));
  assert_null(strstr(out, "failures:")); /* devices = 1 names no device here: no failure */
  free(out);
  rc = run(&out, "CALHOST_TEST_DEVICE_COUNT=0 \"$CALHOST\" --config '%s' plan 2>&1", cfg);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(out, "nothing to calibrate: test_devices has no device on this machine"));
  free(out);
  rc = run(&out, "CALHOST_TEST_DEVICE_COUNT=0 \"$CALHOST\" --config '%s' verify 2>&1", cfg);
  assert_non_null(strstr(out, "nothing to verify (test_devices has no device on this machine)"));
  free(out);
  /* plugin check: the checks that run the plugin are skipped, saying why
   * (they failed, 8 of them advising --operator/--shape) */
  rc = run(&out,
           "CALHOST_TEST_DEVICE_COUNT=0 \"$CALHOST\" plugin check "
           "'%s/lib/calhost/test-plugins/devices/test_devices.so' 2>&1",
           getenv("CALHOST_BUILD_DIR"));
  if (rc != 0)
    fprintf(stderr, "%s\n", out);
  assert_int_equal(rc, 0);
  assert_null(strstr(out, "FAIL "));
  assert_non_null(strstr(out, "SKIP tiny_sweep: test_devices has no device on this machine\n"));
  assert_non_null(
      strstr(out, "checks passed, 10 skipped: test_devices has no device on this machine\n"));
  free(out);
  rc = run(&out,
           "CALHOST_TEST_DEVICE_COUNT=0 \"$CALHOST\" --json plugin check "
           "'%s/lib/calhost/test-plugins/devices/test_devices.so'",
           getenv("CALHOST_BUILD_DIR"));
  assert_int_equal(rc, 0);
  json_t *doc = json_loads(out, 0, NULL);
  assert_non_null(doc);
  assert_int_equal(json_integer_value(json_object_get(doc, "skipped")), 10);
  assert_int_equal(json_integer_value(json_object_get(doc, "failed")), 0);
  json_decref(doc);
  free(out);
}

/* issue 22 item 1: a lookup without --plugin asks every enabled plugin
 * serving the operator in turn: a deployment configuration enabling a
 * plugin the calibration configuration disabled (deploy-portable.ini and
 * calhost.ini with clblast) still finds the calibrated profile; it took the
 * first plugin serving the operator and answered "none" */
/* Whether every line of s is at most max bytes long. */
static int lines_within(const char *s, size_t max) {
  while (*s) {
    size_t n = strcspn(s, "\n");
    if (n > max)
      return 0;
    s += n + (s[n] == '\n');
  }
  return 1;
}

/* issue 22 item 17: every figure is printed for a person (significant
 * digits): a device timer's 1e300 s in calibrate's table and a stored
 * median of 1e-300 us in verify's ratio printed hundreds of digits (%f) */
static void figures_are_formatted_for_a_person(void **state) {
  (void)state;
  char cfg[700], *out;
  write_config("fig", "0", cfg, sizeof cfg);
  remove(g_store);
  int rc =
      run(&out, "CALHOST_TEST_DEVICE_SECONDS=1e300 \"$CALHOST\" --config '%s' calibrate 2>&1", cfg);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(out, " 1e+306 us (device clock)"));
  assert_non_null(strstr(out, "  1e+306  "));
  assert_true(lines_within(out, 200));
  free(out);
  remove(g_store);
  assert_int_equal(run(&out, "\"$CALHOST\" --config '%s' calibrate 2>&1", cfg), 0);
  free(out);
  scale_median("fake-gpu-a v1", 1e-300);
  rc = run(&out, "\"$CALHOST\" --config '%s' verify 2>&1", cfg);
  assert_int_equal(rc, 1);
  assert_non_null(strstr(out, "slower: "));
  assert_non_null(strstr(out, "e+")); /* the ratio, in scientific notation */
  assert_true(lines_within(out, 250));
  free(out);
}

/* issue 22 item 27: a device listing's failure is named by one layer
 * ("test_devices: test_devices: device 0 has no usable identity") */
static void a_device_failure_names_the_backend_once(void **state) {
  (void)state;
  char cfg[700], *out;
  write_config("noid", NULL, cfg, sizeof cfg);
  int rc =
      run(&out, "CALHOST_TEST_DEVICE_NO_IDENTITY=1 \"$CALHOST\" --config '%s' devices 2>&1", cfg);
  assert_int_equal(rc, 1);
  assert_non_null(
      strstr(out, "test_devices: cannot list devices: device 0 has no usable identity"));
  assert_null(strstr(out, "test_devices: test_devices"));
  free(out);
  rc =
      run(&out, "CALHOST_TEST_DEVICE_NO_IDENTITY=1 \"$CALHOST\" --config '%s' calibrate 2>&1", cfg);
  assert_int_not_equal(rc, 0);
  assert_non_null(strstr(out, "  test_devices: device 0 has no usable identity"));
  assert_null(strstr(out, "test_devices: test_devices"));
  free(out);
  rc = run(
      &out,
      "CALHOST_TEST_DEVICE_NO_IDENTITY=1 \"$CALHOST\" --config '%s' lookup --workload w --plugin "
      "test_devices 2>&1",
      cfg);
  assert_int_equal(rc, 2);
  assert_non_null(strstr(out, "calhost: test_devices: device 0 has no usable identity"));
  assert_null(strstr(out, "test_devices: test_devices"));
  free(out);
  /* the [plugin NAME] devices key names the plugin: no "test_devices: " before it */
  write_config("seven", "7", cfg, sizeof cfg);
  rc = run(&out, "\"$CALHOST\" --config '%s' lookup --workload w --plugin test_devices 2>&1", cfg);
  assert_int_equal(rc, 2);
  assert_non_null(strstr(out, "calhost: [plugin test_devices] devices: no device 7 (the backend "
                              "has 3 devices"));
  free(out);
}

static void lookup_without_plugin_asks_every_plugin_serving_the_operator(void **state) {
  (void)state;
  char cal[700], dep[700], *out;
  const char *build = getenv("CALHOST_BUILD_DIR");
  for (int i = 0; i < 2; i++) {
    char *path = i ? dep : cal;
    snprintf(path, 700, "%s/%s.ini", g_dir, i ? "deploy" : "calibrate");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "[store]\npath = %s\n[plugins]\ndirectories = %s/lib/calhost/test-plugins, "
            "%s/lib/calhost/test-plugins/devices\n%s"
            "[calibration]\nthreads = 1\nrigor = quick\ntime_budget = 60\n[lookup]\n"
            "force_portable = %s\n[workload w]\noperator = ReduceSum\nshape = 1024\n",
            g_store, build, build,
            i ? "enabled = test_good, test_devices\n" : "enabled = test_devices\n",
            i ? "true" : "false");
    fclose(f);
  }
  remove(g_store);
  assert_int_equal(run(&out, "\"$CALHOST\" --config '%s' calibrate 2>&1", cal), 0);
  free(out);
  int rc = run(&out, "\"$CALHOST\" --config '%s' lookup --workload w 2>&1", dep);
  if (rc != 0)
    fprintf(stderr, "rc %d\n%s\n", rc, out);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(out, "portable_calibrated test_devices: p="));
  free(out);
  rc = run(&out, "\"$CALHOST\" --config '%s' lookup --workload w --explain 2>&1", dep);
  assert_int_equal(rc, 0);
  assert_non_null(
      strstr(out, "plugins asked: test_good (none, 0 rejected), test_devices (selected)"));
  free(out);
  /* --plugin still asks that plugin alone */
  rc = run(&out, "\"$CALHOST\" --config '%s' lookup --workload w --plugin test_good 2>&1", dep);
  assert_int_equal(rc, 1);
  assert_non_null(strstr(out, "none: no acceptable profile for workload w of test_good"));
  free(out);
  /* nothing anywhere: each plugin asked is named */
  remove(g_store);
  rc = run(&out, "\"$CALHOST\" --config '%s' lookup --workload w 2>&1", dep);
  assert_int_equal(rc, 1);
  assert_non_null(strstr(out, "from any plugin serving ReduceSum (asked: test_good (none, 0 "
                              "rejected), test_devices (none, 0 rejected))"));
  free(out);
}

static int setup(void **state) {
  (void)state;
  snprintf(g_dir, sizeof g_dir, "/tmp/calhost-verify-devices-XXXXXX");
  if (!mkdtemp(g_dir) || !getenv("CALHOST_BUILD_DIR"))
    return -1;
  snprintf(g_store, sizeof g_store, "%s/store.txt", g_dir);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  return getenv("CALHOST_KEEP_TEST_DIR") ? 0 : system(cmd);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(verify_judges_every_device_and_names_it),
      cmocka_unit_test(lookup_builds_the_key_of_the_configured_device),
      cmocka_unit_test(no_device_is_a_clear_skip),
      cmocka_unit_test(lookup_without_plugin_asks_every_plugin_serving_the_operator),
      cmocka_unit_test(a_device_failure_names_the_backend_once),
      cmocka_unit_test(figures_are_formatted_for_a_person),
  };
  return cmocka_run_group_tests_name("verify_devices", tests, setup, teardown);
}
