/*
 * test_recording.c: `calibrate --record FILE`'s per-sweep files
 * (host/sweep/recording.c, issue 36 item 4): names never collide (two
 * workloads sharing their first 95 bytes, a backend with '-', a workload
 * with blanks get a hashed name; readable names stay as they were), and a
 * sweep never renames its recording over another sweep's recording of the
 * same run (a later run may replace it; the same sweep again may too).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "sweep/recording.h"

static char dir[64];

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/calhost-recording-XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

static void name_of(const char *backend, const char *workload, long device, char *path,
                    char *name) {
  assert_int_equal(
      sweep_recording_path("camp.space", 0, backend, workload, device, 1, path, 4096, name, 256),
      0);
}

static void names_never_collide(void **state) {
  (void)state;
  char p1[4096], p2[4096], n1[256], n2[256];
  /* readable names as before */
  name_of("test_good", "w1", -1, p1, n1);
  assert_string_equal(p1, "camp-test_good-w1-t1.space");
  assert_string_equal(n1, "test_good-w1-t1");
  name_of("gpu", "w1", 2, p1, n1);
  assert_string_equal(p1, "camp-gpu-w1-d2-t1.space");
  /* two workloads whose first 95 bytes are the same (they were cut there
   * and wrote one file) */
  char a[128], b[128];
  memset(a, 'x', 100);
  memcpy(b, a, 100);
  a[100] = b[100] = '\0';
  a[99] = 'a';
  b[99] = 'b';
  name_of("example", a, -1, p1, n1);
  name_of("example", b, -1, p2, n2);
  assert_string_not_equal(p1, p2);
  assert_string_not_equal(n1, n2);
  assert_non_null(strchr(n1, '~'));
  assert_true(strlen(n1) < 130);
  /* a backend with '-': "a-b" + "c" is not "a" + "b-c" */
  name_of("a-b", "c", -1, p1, n1);
  name_of("a", "b-c", -1, p2, n2);
  assert_string_not_equal(p1, p2);
  /* what is not a name: blanks and '/' never make a folder or a collision */
  name_of("example", "w 1", -1, p1, n1);
  name_of("example", "w_1", -1, p2, n2);
  assert_string_not_equal(p1, p2);
  name_of("example", "../w", -1, p1, n1);
  assert_null(strchr(p1, '/'));
  /* a hashed name is stable (a re-run replaces its own file) */
  name_of("example", a, -1, p2, n2);
  name_of("example", a, -1, p1, n1);
  assert_string_equal(p1, p2);
}

/* Records one candidate of a one-parameter space into path as space name;
 * returns sweep_recording_finish's status, the error into err. */
static int record(const char *path, const char *name, const char *policy, char *err, size_t cap) {
  static const char *const values[] = {"1", "2"};
  search_param param = {"p", values, 2, 1};
  sweep_search_info info;
  memset(&info, 0, sizeof info);
  info.params = &param;
  info.param_count = 1;
  info.strategy = CALHOST_SEARCH_EXHAUSTIVE;
  sweep_recording r;
  sweep_recording_init(&r, path, name, NULL, 0);
  sweep_recording_start(&r, &info);
  uint32_t config = 0;
  sweep_evaluation ev;
  memset(&ev, 0, sizeof ev);
  ev.evaluation = 1;
  ev.config = &config;
  ev.policy = policy;
  ev.median_us = 10;
  ev.spread_us = 1;
  ev.seconds = 0.1;
  sweep_recording_add(&r, &ev);
  int rc = sweep_recording_finish(&r);
  snprintf(err, cap, "%s", r.error);
  return rc;
}

static int holds(const char *path, const char *text) {
  char buf[8192];
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return strstr(buf, text) != NULL;
}

static void another_sweeps_recording_is_never_replaced(void **state) {
  (void)state;
  char path[256], part[300], err[4700];
  snprintf(path, sizeof path, "%s/one.space", dir);
  snprintf(part, sizeof part, "%s.part", path);
  sweep_recording_new_run();
  assert_int_equal(record(path, "sweep_a", "p=first", err, sizeof err), 0);
  assert_true(holds(path, "space sweep_a"));
  /* a second sweep of the run whose file is the same: refused, kept aside */
  assert_int_equal(record(path, "sweep_b", "p=second", err, sizeof err), -1);
  assert_non_null(strstr(err, "another sweep of this run"));
  assert_non_null(strstr(err, "sweep_a"));
  assert_non_null(strstr(err, ".part"));
  assert_true(holds(path, "p=first"));
  assert_true(holds(part, "p=second"));
  /* the same sweep again (a restarted child) replaces its own */
  assert_int_equal(record(path, "sweep_a", "p=again", err, sizeof err), 0);
  assert_true(holds(path, "p=again"));
  /* a later run replaces the earlier run's file */
  sweep_recording_new_run();
  assert_int_equal(record(path, "sweep_b", "p=later", err, sizeof err), 0);
  assert_true(holds(path, "space sweep_b"));
  assert_true(holds(path, "p=later"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(names_never_collide),
      cmocka_unit_test(another_sweeps_recording_is_never_replaced),
  };
  return cmocka_run_group_tests_name("sweep_recording", tests, setup, teardown);
}
