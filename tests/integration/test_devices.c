/*
 * test_devices.c: integration_devices: the devices of a device backend in
 * calibrate, with the test plugin test_devices (two GPUs on different
 * hardware, one device on the host's CPUs; tests/plugins/misbehave.c):
 *   - the schedule (runtime/devices.c): devices that do not share hardware
 *     share a wave, a CPU device is alone, equal hardware is serialised;
 *   - calibrate runs one sweep per device, the two GPUs at once (each
 *     device's session waits for the other GPU's: a rendezvous, not a
 *     timing) and the CPU device alone; each result names its device and
 *     its exact key's processor is the device identity;
 *   - [plugin NAME] devices selects devices by index and identity;
 *   - `calhost devices --json` lists the three;
 *   - `calhost plan` has one item per device, in the shard calibrate
 *     --shard gives that device's sweep;
 *   - with a CPU backend beside it, every progress line has the final total.
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
#include "runtime/devices.h"

static char g_dir[256];

static void schedule_groups_devices_that_do_not_share_hardware(void **state) {
  (void)state;
  runtime_device a = {.index = 0, .kind = CALHOST_DEVICE_GPU, .hardware = "hw-a"};
  runtime_device b = {.index = 1, .kind = CALHOST_DEVICE_GPU, .hardware = "hw-b"};
  runtime_device a2 = {.index = 2, .kind = CALHOST_DEVICE_GPU, .hardware = "hw-a"};
  runtime_device cpu = {.index = 3, .kind = CALHOST_DEVICE_OTHER, .hardware = "cpu"};
  runtime_device unknown = {.index = 4, .kind = CALHOST_DEVICE_GPU, .hardware = ""};
  const runtime_device *d[] = {&a, &b, &a2, &cpu, &unknown};
  size_t wave[5];
  size_t n = runtime_devices_schedule(d, 5, wave);
  assert_int_equal(wave[0], 0);
  assert_int_equal(wave[1], 0); /* hw-b beside hw-a */
  assert_int_equal(wave[2], 1); /* a second hw-a: after the first */
  assert_int_equal(wave[3], 2); /* on the CPUs: alone */
  assert_int_equal(wave[4], 3); /* unknown hardware: may be shared, alone */
  assert_int_equal(n, 4);
  assert_true(runtime_devices_share_hardware(&a, &a2));
  assert_false(runtime_devices_share_hardware(&a, &b));
  assert_true(runtime_device_on_cpu(&cpu));
}

/* Runs a shell command line (harness_shell: "$CALHOST" is bin/calhost)
 * in the temp dir; *out gets its stdout (and stderr with 2>&1). */
static int run(char **out, const char *fmt, ...) {
  char cmd[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  harness_opts o = {.cwd = g_dir, .timeout_s = 300};
  harness_result r = {0};
  int code = harness_shell(&o, &r, cmd);
  *out = r.out;
  free(r.err);
  return code;
}

/* A configuration with test_devices and its [plugin] body; cpu_backend
 * (NULL: none) is a test plugin enabled before it, with one thread count so
 * that it has one sweep per workload. */
static void write_config(const char *name, const char *cpu_backend, const char *plugin_body,
                         char *path, size_t cap) {
  const char *build = getenv("CALHOST_BUILD_DIR");
  snprintf(path, cap, "%s/%s.ini", g_dir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "[store]\npath = %s/%s.txt\n[plugins]\ndirectories = ", g_dir, name);
  if (cpu_backend)
    fprintf(f, "%s/lib/calhost/test-plugins, ", build);
  fprintf(f, "%s/lib/calhost/test-plugins/devices\nenabled = %s%stest_devices\n", build,
          cpu_backend ? cpu_backend : "", cpu_backend ? ", " : "");
  fprintf(f,
          "[calibration]\nthreads = %s\nrigor = quick\ntime_budget = 30\n"
          "[workload w]\noperator = ReduceSum\nshape = 1024\n",
          cpu_backend ? "1" : "1, 2");
  if (plugin_body)
    fprintf(f, "[plugin test_devices]\n%s\n", plugin_body);
  fclose(f);
}

static int marker(const char *dir, const char *what, int i) {
  char p[1200];
  snprintf(p, sizeof p, "%s/%s-%d", dir, what, i);
  return access(p, F_OK) == 0;
}

static void calibrate_runs_gpus_at_once_and_the_cpu_device_alone(void **state) {
  (void)state;
  char cfg[600], mdir[600], *out;
  write_config("all", NULL, NULL, cfg, sizeof cfg);
  snprintf(mdir, sizeof mdir, "%s/markers", g_dir);
  assert_int_equal(run(&out, "mkdir -p '%s'", mdir), 0);
  free(out);
  assert_int_equal(run(&out,
                       "CALHOST_TEST_DEVICE_DIR='%s' \"$CALHOST\" --config '%s' calibrate 2>&1",
                       mdir, cfg),
                   0);
  /* one row per device (thread counts do not multiply device sweeps) */
  assert_non_null(strstr(out, "test_devices w device 0: "));
  assert_non_null(strstr(out, "test_devices w device 1: "));
  assert_non_null(strstr(out, "test_devices w device 2: "));
  assert_null(strstr(out, "t=2"));
  /* the two GPUs finish at once, each with its own count (in ASan builds
   * one after the other) */
  assert_non_null(strstr(out, "calhost: [1/3] "));
  assert_non_null(strstr(out, "calhost: [2/3] "));
  assert_non_null(strstr(out, "calhost: [3/3] "));
  free(out);
#ifndef __SANITIZE_ADDRESS__
  assert_true(marker(mdir, "overlap", 0)); /* the GPUs met */
  assert_true(marker(mdir, "overlap", 1));
#else /* ASan builds run a wave's devices one after the other (driver.c):                          \
       * the first GPU waits for the second in vain */
  assert_true(marker(mdir, "alone", 0));
#endif
  assert_true(marker(mdir, "alone", 2)); /* the CPU device did not */
  assert_true(marker(mdir, "done", 2));

  /* the stored keys: one per device, processor = the identity */
  assert_int_equal(run(&out, "\"$CALHOST\" --config '%s' list --json", cfg), 0);
  assert_non_null(strstr(out, "\"fake-gpu-a v1\""));
  assert_non_null(strstr(out, "\"fake-gpu-b v1\""));
  assert_non_null(strstr(out, "\"fake-cpu v1\""));
  free(out);
  assert_int_equal(
      run(&out,
          "\"$CALHOST\" --config '%s' lookup --workload w --plugin test_devices --device "
          "'fake-gpu-b v1'",
          cfg),
      0);
  assert_non_null(strstr(out, "exact_calibrated test_devices"));
  free(out);
}

static void configured_devices_select_by_index_and_identity(void **state) {
  (void)state;
  char cfg[600], *out;
  write_config("some", NULL, "devices = 2, fake-gpu-a v1", cfg, sizeof cfg);
  assert_int_equal(run(&out, "\"$CALHOST\" --config '%s' --json calibrate 2>/dev/null", cfg), 0);
  assert_non_null(strstr(out, "\"identity\":\"fake-gpu-a v1\""));
  assert_non_null(strstr(out, "\"identity\":\"fake-cpu v1\""));
  assert_null(strstr(out, "fake-gpu-b"));
  assert_non_null(strstr(out, "\"clock\":\"host\""));
  free(out);
  assert_int_equal(run(&out, "\"$CALHOST\" --config '%s' devices --json", cfg), 0);
  assert_non_null(strstr(out, "\"index\":1,\"kind\":\"gpu\""));
  assert_non_null(strstr(out, "\"index\":2,\"kind\":\"cpu\""));
  free(out);
}

/* A wave has no cap on its devices (it was 64, the rest dropped in
 * silence): 69 GPUs on their own hardware share one wave, and every one of
 * them is calibrated, as is the CPU device alone. */
static void a_wave_of_many_devices_calibrates_every_one(void **state) {
  (void)state;
  char cfg[600], *out;
  write_config("wide", NULL, NULL, cfg, sizeof cfg);
  assert_int_equal(
      run(&out, "CALHOST_TEST_DEVICE_COUNT=70 \"$CALHOST\" --config '%s' calibrate 2>&1", cfg), 0);
  /* each device's sweep is announced once, numbered out of 70 */
  for (int i = 0; i < 70; i++) {
    char row[64];
    snprintf(row, sizeof row, "/70] test_devices w device %d: ", i);
    if (!strstr(out, row))
      fail_msg("no '%s' in:\n%s", row, out);
  }
  assert_non_null(strstr(out, "calhost: [70/70] "));
  free(out);
}

/* calhost plan lists one item per device (with the device), and the
 * shards of calibrate --shard are the plan's: each device's sweep runs in
 * exactly the shard the plan gives it. */
static void plan_and_shards_have_the_device_dimension(void **state) {
  (void)state;
  char cfg[600], *out;
  write_config("shards", NULL, NULL, cfg, sizeof cfg);
  assert_int_equal(run(&out, "\"$CALHOST\" --config '%s' plan --shards 2 --json", cfg), 0);
  int shard_of[3] = {-1, -1, -1};
  const char *q = out;
  for (int i = 0; i < 3; i++) {
    char needle[64];
    snprintf(needle, sizeof needle, "\"device\":{\"index\":%d,", i);
    const char *d = strstr(q, needle);
    assert_non_null(d);
    const char *sh = strstr(d, "\"shard\":");
    assert_non_null(sh);
    shard_of[i] = atoi(sh + 8);
  }
  free(out);
  for (int s = 0; s < 2; s++) {
    assert_int_equal(
        run(&out, "\"$CALHOST\" --config '%s' --json calibrate --shard %d/2 2>/dev/null", cfg, s),
        0);
    for (int i = 0; i < 3; i++) {
      char needle[64];
      snprintf(needle, sizeof needle, "\"device\":{\"index\":%d,", i);
      if (shard_of[i] == s)
        assert_non_null(strstr(out, needle));
      else
        assert_null(strstr(out, needle));
    }
    free(out);
  }
}

/* A device's sweep in a wave sees its own deadline: a kernel that polls
 * the host's is_cancelled is stopped at the end of its share of the time
 * budget on every device, the two GPUs of a wave as the CPU device alone
 * (a wave's children once read the parent run's deadline, which is never
 * set: is_cancelled never fired there). */
static void a_wave_device_sees_its_own_time_budget(void **state) {
  (void)state;
  char cfg[600], mdir[600], *out;
  write_config("budget", NULL, "time_budget = 1s", cfg, sizeof cfg);
  snprintf(mdir, sizeof mdir, "%s/budget-markers", g_dir);
  assert_int_equal(run(&out, "mkdir -p '%s'", mdir), 0);
  free(out);
  run(&out,
      "CALHOST_TEST_DEVICE_DIR='%s' CALHOST_TEST_DEVICE_UNTIL_CANCELLED=1 \"$CALHOST\" --config "
      "'%s' "
      "calibrate 2>&1",
      mdir, cfg);
  free(out);
  for (int i = 0; i < 3; i++) {
    assert_true(marker(mdir, "cancelled", i));
    assert_false(marker(mdir, "ignored", i));
  }
}

static int setup(void **state) {
  (void)state;
  if (!getenv("CALHOST_BUILD_DIR"))
    return -1;
  snprintf(g_dir, sizeof g_dir, "/tmp/calhost-devwaves-XXXXXX");
  return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* --record on a device backend: one space file per device sweep, the device
 * in its name, each recording its own device (none overwrites another). */
static void record_writes_one_space_file_per_device(void **state) {
  (void)state;
  char cfg[600], *out;
  write_config("rec", NULL, NULL, cfg, sizeof cfg);
  assert_int_equal(run(&out,
                       "\"$CALHOST\" --config '%s' calibrate --force --record '%s/rec.space' 2>&1",
                       cfg, g_dir),
                   0);
  free(out);
  const char *ids[] = {"fake-gpu-a v1", "fake-gpu-b v1", "fake-cpu v1"};
  for (int d = 0; d < 3; d++) {
    assert_int_equal(run(&out, "grep -c '^meta processor %s$' '%s/rec-test_devices-w-d%d-t1.space'",
                         ids[d], g_dir, d),
                     0);
    assert_string_equal(out, "1\n");
    free(out);
  }
  assert_int_equal(run(&out, "ls '%s' | grep -c '^rec-.*space$'", g_dir), 0);
  assert_string_equal(out, "3\n");
  free(out);
}

/* With a CPU backend and a device backend in one run, every progress line
 * has the run's final total: the devices are listed before the first sweep,
 * not when the device backend's turn comes. */
static void progress_counts_device_sweeps_from_the_first_line(void **state) {
  (void)state;
  char cfg[600], *out;
  write_config("mixed", "test_good", NULL, cfg, sizeof cfg);
  assert_int_equal(run(&out, "\"$CALHOST\" --config '%s' calibrate 2>&1", cfg), 0);
  /* test_good's sweep first (its folder is listed first), then the three
   * devices' */
  assert_non_null(strstr(out, "calhost: [1/4] test_good w t=1"));
  size_t lines = 0;
  for (const char *at = out; (at = strstr(at, "calhost: [")); at++) {
    unsigned k = 0, n = 0;
    assert_int_equal(sscanf(at, "calhost: [%u/%u]", &k, &n), 2);
    if (n != 4)
      fail_msg("a progress line with a total other than 4:\n%s", out);
    lines++;
  }
  assert_int_equal(lines, 4);
  free(out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(schedule_groups_devices_that_do_not_share_hardware),
      cmocka_unit_test(calibrate_runs_gpus_at_once_and_the_cpu_device_alone),
      cmocka_unit_test(configured_devices_select_by_index_and_identity),
      cmocka_unit_test(a_wave_of_many_devices_calibrates_every_one),
      cmocka_unit_test(plan_and_shards_have_the_device_dimension),
      cmocka_unit_test(record_writes_one_space_file_per_device),
      cmocka_unit_test(progress_counts_device_sweeps_from_the_first_line),
      cmocka_unit_test(a_wave_device_sees_its_own_time_budget),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
