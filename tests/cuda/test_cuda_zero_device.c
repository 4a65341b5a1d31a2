/*
 * test_cuda_zero_device.c: cuda_zero_device: the CUDA backends on a
 * machine without an NVIDIA GPU, through the calhost binary (a
 * configuration enabling them only, a temporary store): `devices` lists
 * them with 0 devices, `calibrate` says "no NVIDIA device" once and
 * succeeds with nothing stored, `plan` has 0 items and succeeds, `lookup
 * --device 0` is refused naming the missing device, and `plugin check`
 * passes both plugins, saying they list no device. Also against the
 * toolkit's stub libcuda (CALHOST_CUDA_DRIVER): the same, with cuInit's
 * refusal as the reason. A machine with a GPU skips.
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

static char g_dir[256], g_cfg[600], g_store[600], g_plugins[1200];

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

static size_t count_of(const char *text, const char *needle) {
  size_t n = 0;
  for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
    n++;
  return n;
}

static int setup(void **state) {
  (void)state;
  const char *b = getenv("CALHOST_BUILD_DIR");
  assert_non_null(b);
  snprintf(g_dir, sizeof g_dir, "%s", "/tmp/calhost-cuda-zero-XXXXXX");
  assert_non_null(mkdtemp(g_dir));
  snprintf(g_plugins, sizeof g_plugins, "%s/lib/calhost/plugins", b);
  snprintf(g_cfg, sizeof g_cfg, "%s/calhost.ini", g_dir);
  snprintf(g_store, sizeof g_store, "%s/store.txt", g_dir);
  FILE *f = fopen(g_cfg, "w");
  assert_non_null(f);
  fprintf(f,
          "[plugins]\ndirectories = %s\nenabled = cuda_gemm\n[calibration]\nrigor = quick\n"
          "time_budget = 10s\n[workload mm_bf16]\noperator = MatMul\ndtype = bfloat16\n"
          "shape = 128,128,128\n[workload mm_f32]\noperator = MatMul\ndtype = float32\n"
          "shape = 64,64,64\n",
          g_plugins);
  fclose(f);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* 1 when this machine has a usable NVIDIA device (then the test skips). */
static int has_gpu(void) {
  char *out;
  run(&out, "\"$CALHOST\" --config '%s' devices 2>/dev/null", g_cfg);
  int gpu = strstr(out, "cuda_gemm: 0 devices") == NULL;
  free(out);
  return gpu;
}

static void zero_device_path(const char *env) {
  char *out;
  if (!*env && has_gpu())
    skip();
  assert_int_equal(run(&out, "%s \"$CALHOST\" --config '%s' devices 2>&1", env, g_cfg), 0);
  assert_non_null(strstr(out, "cuda_gemm: 0 devices"));
  free(out);

  assert_int_equal(
      run(&out, "%s \"$CALHOST\" --config '%s' --store '%s' calibrate 2>&1", env, g_cfg, g_store),
      0);
  assert_int_equal(count_of(out, "no NVIDIA device"), 1);
  assert_non_null(strstr(out, "cuda_gemm has no device on this machine"));
  free(out);

  assert_int_equal(
      run(&out, "%s \"$CALHOST\" --config '%s' --store '%s' plan 2>&1", env, g_cfg, g_store), 0);
  assert_non_null(strstr(out, "0 items"));
  free(out);

  assert_int_not_equal(
      run(&out,
          "%s \"$CALHOST\" --config '%s' --store '%s' lookup --workload mm_bf16 --plugin "
          "cuda_gemm --device 0 2>&1",
          env, g_cfg, g_store),
      0);
  assert_non_null(strstr(out, "no device 0"));
  free(out);
}

static void no_driver_lists_no_device_and_calibrate_succeeds(void **state) {
  (void)state;
  zero_device_path("");
}

static void stub_driver_lists_no_device_and_calibrate_succeeds(void **state) {
  (void)state;
  const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  char env[300];
  if (access(stub, R_OK) != 0)
    skip();
  snprintf(env, sizeof env, "CALHOST_CUDA_DRIVER=%s", stub);
  zero_device_path(env);
  char *out;
  run(&out, "%s \"$CALHOST\" --config '%s' --store '%s' calibrate 2>&1", env, g_cfg, g_store);
  assert_non_null(strstr(out, "CUDA_ERROR_STUB_LIBRARY"));
  free(out);
}

static void plugin_check_passes_without_a_device(void **state) {
  (void)state;
  const char *plugins[] = {"cuda_gemm", "cublaslt"};
  if (has_gpu())
    skip();
  for (int i = 0; i < 2; i++) {
    char path[1400], *out;
    snprintf(path, sizeof path, "%s/%s.so", g_plugins, plugins[i]);
    if (i == 1 && access(path, R_OK) != 0)
      continue; /* cublaslt not built */
    int rc = run(&out, "\"$CALHOST\" plugin check -v '%s' 2>&1", path);
    if (rc != 0)
      fail_msg("plugin check %s: %s", plugins[i], out);
    assert_non_null(strstr(out, "has no device on this machine"));
    assert_non_null(strstr(out, "7 of 7 checks passed, 10 skipped"));
    free(out);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(no_driver_lists_no_device_and_calibrate_succeeds),
      cmocka_unit_test(stub_driver_lists_no_device_and_calibrate_succeeds),
      cmocka_unit_test(plugin_check_passes_without_a_device),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
