/*
 * test_opencl_devices.c: opencl_devices: issue 11's "done when", through the
 * calhost binary with the default configuration (config/calhost.ini) and a
 * temporary store:
 *   - `calhost devices --json` lists the OpenCL device(s) for opencl_gemm and
 *     for clblast (enabled by the default configuration, with its own budget);
 *   - `calhost calibrate` stores an exact profile of opencl_gemm keyed by the
 *     device (processor = the device identity), reported with its device and
 *     its clock;
 *   - `calhost lookup --workload W --plugin opencl_gemm --device 0` (and the
 *     device's identity) selects it, `--force-portable` the portable one;
 *   - [plugin opencl_gemm] devices naming a device the machine lacks is a
 *     failure naming it; --device of a CPU backend is refused.
 * A machine without an OpenCL device skips.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include <jansson.h>

static char g_dir[256];
static char g_cfg[1200], g_store[600];

/* Runs a shell command line (harness_shell: "$CALHOST" is bin/calhost)
 * in the temp dir; its stdout (malloc'd) in *out; returns the exit
 * status. */
static int run(char **out, const char *fmt, ...) {
  char cmd[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  harness_opts o = {.cwd = g_dir, .timeout_s = 600};
  harness_result r = {0};
  int code = harness_shell(&o, &r, cmd);
  *out = r.out;
  free(r.err);
  return code;
}

static json_t *parse(const char *text) {
  json_error_t e;
  json_t *j = json_loads(text, 0, &e);
  if (!j)
    fail_msg("not JSON (%s): %.400s", e.text, text);
  return j;
}

/* The identity of the first device of backend in `devices --json`. */
static const char *device_of(json_t *devices, const char *backend, int *enabled) {
  size_t i;
  json_t *d;
  json_array_foreach(json_object_get(devices, "devices"), i, d) {
    if (!strcmp(json_string_value(json_object_get(d, "backend")), backend)) {
      *enabled = json_is_true(json_object_get(d, "enabled"));
      return json_string_value(json_object_get(d, "identity"));
    }
  }
  return NULL;
}

static void default_config_calibrates_and_looks_up_per_device(void **state) {
  (void)state;
  char *out;
  assert_int_equal(run(&out, "\"$CALHOST\" --config '%s' devices --json", g_cfg), 0);
  json_t *devices = parse(out);
  free(out);
  int enabled = -1;
  const char *identity = device_of(devices, "opencl_gemm", &enabled);
  if (!identity) {
    json_decref(devices);
    skip(); /* no OpenCL device on this machine */
  }
  assert_int_equal(enabled, 1);
  char *id = strdup(identity);
  /* clblast is enabled by the default configuration (with a time budget of
   * its own, issue 22 item 4) */
  int cb_enabled = -1;
  const char *cb = device_of(devices, "clblast", &cb_enabled);
  json_t *plugins = json_object_get(devices, "plugins");
  size_t i;
  json_t *p;
  int have_clblast = 0;
  json_array_foreach(plugins, i, p) {
    have_clblast |= !strcmp(json_string_value(json_object_get(p, "backend")), "clblast");
  }
  if (have_clblast) {
    assert_non_null(cb);
    assert_string_equal(cb, id);
    assert_int_equal(cb_enabled, 1);
  }
  json_decref(devices);
  /* the human listing names the device too */
  assert_int_equal(run(&out, "\"$CALHOST\" --config '%s' devices", g_cfg), 0);
  assert_non_null(strstr(out, "opencl_gemm: "));
  assert_non_null(strstr(out, id));
  free(out);

  /* calibrate: one workload, quick, opencl_gemm only */
  assert_int_equal(run(&out,
                       "\"$CALHOST\" --config '%s' --store '%s' calibrate --plugin opencl_gemm "
                       "--workload matmul_small_64 --rigor quick --json 2>/dev/null",
                       g_cfg, g_store),
                   0);
  json_t *rep = parse(out);
  free(out);
  json_t *results = json_object_get(rep, "results");
  assert_true(json_array_size(results) >= 1);
  json_t *r0 = json_array_get(results, 0);
  assert_string_equal(json_string_value(json_object_get(r0, "status")), "stored");
  json_t *dev = json_object_get(r0, "device");
  assert_true(json_is_object(dev));
  assert_int_equal(json_integer_value(json_object_get(dev, "index")), 0);
  assert_string_equal(json_string_value(json_object_get(dev, "identity")), id);
  assert_string_equal(json_string_value(json_object_get(json_object_get(r0, "key"), "processor")),
                      id);
  assert_string_equal(json_string_value(json_object_get(r0, "clock")), "device");
  json_decref(rep);

  /* lookup on the device: the exact profile; by identity: the same */
  assert_int_equal(run(&out,
                       "\"$CALHOST\" --config '%s' --store '%s' lookup --workload matmul_small_64 "
                       "--plugin opencl_gemm --device 0",
                       g_cfg, g_store),
                   0);
  assert_non_null(strstr(out, "exact_calibrated opencl_gemm: "));
  free(out);
  assert_int_equal(run(&out,
                       "\"$CALHOST\" --config '%s' --store '%s' lookup --workload matmul_small_64 "
                       "--plugin opencl_gemm --device '%s'",
                       g_cfg, g_store, id),
                   0);
  assert_non_null(strstr(out, "exact_calibrated opencl_gemm: "));
  free(out);
  assert_int_equal(run(&out,
                       "\"$CALHOST\" --config '%s' --store '%s' lookup --workload matmul_small_64 "
                       "--plugin opencl_gemm --device 0 --force-portable",
                       g_cfg, g_store),
                   0);
  assert_non_null(strstr(out, "portable_calibrated opencl_gemm: "));
  free(out);
  /* a device the backend lacks; a device for a CPU backend */
  assert_int_equal(run(&out,
                       "\"$CALHOST\" --config '%s' --store '%s' lookup --workload matmul_small_64 "
                       "--plugin opencl_gemm --device 4096 2>&1",
                       g_cfg, g_store),
                   2);
  assert_non_null(strstr(out, "no device 4096"));
  free(out);
  assert_int_equal(run(&out,
                       "\"$CALHOST\" --config '%s' --store '%s' lookup --workload matmul_small_64 "
                       "--plugin cpu_gemm --device 0 2>&1",
                       g_cfg, g_store),
                   2);
  assert_non_null(strstr(out, "drives no devices"));
  free(out);
  free(id);
}

static void a_configured_device_the_machine_lacks_is_a_failure(void **state) {
  (void)state;
  char cfg[700], *out;
  snprintf(cfg, sizeof cfg, "%s/missing.ini", g_dir);
  FILE *f = fopen(cfg, "w");
  assert_non_null(f);
  fprintf(f, "[calibration]\nrigor = quick\ntime_budget = 5\n"
             "[workload w]\noperator = MatMul\nshape = 32,32,32\n"
             "[plugin opencl_gemm]\ndevices = 4096\n");
  fclose(f);
  int rc =
      run(&out,
          "\"$CALHOST\" --config '%s' --store '%s/missing.txt' calibrate --plugin opencl_gemm 2>&1",
          cfg, g_dir);
  if (strstr(out, "not found")) { /* opencl_gemm not built */
    free(out);
    skip();
  }
  assert_int_not_equal(rc, 0);
  assert_non_null(strstr(out, "[plugin opencl_gemm] devices: no device 4096"));
  assert_non_null(strstr(out, "missing.ini:8)")); /* where the key is */
  free(out);
}

static int setup(void **state) {
  (void)state;
  const char *b = getenv("CALHOST_BUILD_DIR"), *s = getenv("CALHOST_SOURCE_DIR");
  if (!b || !s)
    return -1;
  snprintf(g_dir, sizeof g_dir, "/tmp/calhost-devices-XXXXXX");
  if (!mkdtemp(g_dir))
    return -1;
  snprintf(g_cfg, sizeof g_cfg, "%s/config/calhost.ini", s);
  snprintf(g_store, sizeof g_store, "%s/store.txt", g_dir);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(default_config_calibrates_and_looks_up_per_device),
      cmocka_unit_test(a_configured_device_the_machine_lacks_is_a_failure),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
