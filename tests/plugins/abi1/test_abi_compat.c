/*
 * test_abi_compat.c: abi_compat: the ABI rules of plugin.h, end to end.
 *  - test_abi1 (built against the frozen ABI 1 header) loads in the ABI 1..2
 *    host at ABI 1, its ABI 2 entries read as absent, and it calibrates and
 *    looks up through bin/calhost exactly as an ABI 1 plugin always did;
 *  - test_abi2_only (requires ABI 2) is refused by a host offering only
 *    ABI 1 with a message naming both ranges, and loads at ABI 2 in the
 *    default host;
 *  - half of an ABI 2 entry group (device_count without list_device) is
 *    refused by name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "harness.h"
#include "loader/loader.h"
#include "loader_test_util.h"

static const char *abi_plugin(char *buf, size_t cap, const char *name) {
  snprintf(buf, cap, "%s/lib/calhost/test-plugins/abi/%s.so", build_dir(), name);
  return buf;
}

static loader_plugin *open_range(const char *name, uint32_t lo, uint32_t hi, int probe) {
  loader_options o;
  char path[4096];
  loader_options_init(&o);
  if (lo)
    o.host_abi_min = lo;
  if (hi)
    o.host_abi_max = hi;
  o.probe = probe;
  loader_plugin *p = loader_open(&o, NULL, abi_plugin(path, sizeof path, name));
  assert_non_null(p);
  return p;
}

static void host_offers_abi2(void **state) {
  loader_options o;
  (void)state;
  loader_options_init(&o);
  assert_int_equal(o.host_abi_min, 1);
  assert_int_equal(o.host_abi_max, 2);
}

static void abi1_plugin_loads_at_abi1(void **state) {
  (void)state;
  for (int probe = 0; probe < 2; probe++) {
    loader_plugin *p = open_range("test_abi1", 0, 0, probe);
    if (p->reason)
      fprintf(stderr, "reason: %s\n", p->reason);
    assert_true(p->loaded);
    assert_int_equal(p->abi_version, 1);
    assert_int_equal(p->plugin_abi_min, 1);
    assert_int_equal(p->plugin_abi_max, 1);
    assert_true(CALHOST_PLUGIN_HAS(p, check));
    /* the ABI 2 entries lie past the plugin's vtable: zero-filled copy */
    assert_false(CALHOST_PLUGIN_HAS(p, device_count));
    assert_false(CALHOST_PLUGIN_HAS(p, describe_space));
    assert_null(p->vtable.sample_workloads);
    loader_plugin_free(p);
  }
}

static void abi2_plugin_in_abi1_host_refused(void **state) {
  (void)state;
  for (int probe = 0; probe < 2; probe++) {
    loader_plugin *p = open_range("test_abi2_only", 1, 1, probe);
    assert_false(p->loaded);
    assert_non_null(p->reason);
    assert_non_null(
        strstr(p->reason, "ABI mismatch: plugin supports ABI 2..2, host supports 1..1"));
    loader_plugin_free(p);
  }
  loader_plugin *p = open_range("test_abi2_only", 0, 0, 1);
  assert_true(p->loaded);
  assert_int_equal(p->abi_version, 2);
  loader_plugin_free(p);
}

static void abi2_half_group_refused(void **state) {
  (void)state;
  loader_plugin *p = open_range("test_abi2_half", 0, 0, 0);
  assert_false(p->loaded);
  assert_non_null(p->reason);
  assert_non_null(strstr(p->reason, "'device_count' and 'list_device' come together"));
  loader_plugin_free(p);
  p = open_range("test_abi2_half", 1, 1, 0); /* not checked below the entries' version */
  assert_false(p->loaded);                   /* (its range is 2..2) */
  loader_plugin_free(p);
}

/* Runs a shell command line (harness_shell: "$CALHOST" is bin/calhost);
 * returns its exit status and its stdout in out. */
static int sh(char *out, size_t cap, const char *fmt, ...) {
  char cmd[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  harness_result r = {0};
  int code = harness_shell(NULL, &r, cmd);
  snprintf(out, cap, "%s", r.out);
  harness_result_free(&r);
  return code < 128 ? code : -1;
}

static void abi1_plugin_calibrates_and_looks_up(void **state) {
  char dir[256], cfg[512], out[16384];
  (void)state;
  assert_non_null(make_tmpdir(dir, sizeof dir));
  snprintf(cfg, sizeof cfg, "%s/calib.ini", dir);
  FILE *f = fopen(cfg, "w");
  assert_non_null(f);
  fprintf(f,
          "[store]\npath = %s/store\n[plugins]\ndirectories = %s/lib/calhost/test-plugins/abi\n"
          "enabled = test_abi1\n[calibration]\nthreads = 1\nrigor = quick\ntime_budget = 5\n"
          "[workload sum_4k]\noperator = ReduceSum\nshape = 4096\n",
          dir, build_dir());
  fclose(f);
  int rc = sh(out, sizeof out, "\"$CALHOST\" calibrate --config '%s' --json 2>&1", cfg);
  if (rc != 0)
    fprintf(stderr, "%s\n", out);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(out, "test_abi1"));
  rc =
      sh(out, sizeof out,
         "\"$CALHOST\" --config '%s' lookup --workload sum_4k --plugin test_abi1 --json 2>&1", cfg);
  if (rc != 0)
    fprintf(stderr, "%s\n", out);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(out, "\"level\":\"exact_calibrated\""));
  assert_non_null(strstr(out, "p="));
  harness_remove_tree(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(host_offers_abi2),
      cmocka_unit_test(abi1_plugin_loads_at_abi1),
      cmocka_unit_test(abi2_plugin_in_abi1_host_refused),
      cmocka_unit_test(abi2_half_group_refused),
      cmocka_unit_test(abi1_plugin_calibrates_and_looks_up),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
