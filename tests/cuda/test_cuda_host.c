/*
 * test_cuda_host.c: cuda_host: the host-side logic of the CUDA backends
 * that decides what a GPU run does, without a GPU (issue 39): the operand
 * rotation's set count from the L2 size, the graph's batch, the
 * time-based warm-up with an injected clock, the padding to the chosen
 * tile, table membership, where NVRTC's headers and CUDA's libraries are
 * found (fake toolkit, CUDA_HOME and pip trees) and which dtypes are
 * declined without them, the library versions in the identity and the
 * portable key, the sticky-error classification and the exit it takes,
 * and the driver loader under concurrent first calls.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgemm.h"
#include "cu_driver.h"
#include "cu_nvrtc.h"

/* ---- cold timing: rotation, graph batch ------------------------------ */

static void rotation_spans_twice_the_l2(void **state) {
  (void)state;
  const uint64_t l2 = 60ull << 20, big = 64ull << 30; /* an H200's L2, memory to spare */
  /* 1024^3 fp16: A + B = 4 MiB: 30 sets span 120 MiB */
  assert_int_equal(cu_rotation_sets(l2, 4ull << 20, big), 30);
  /* a set not dividing: rounded up */
  assert_int_equal(cu_rotation_sets(l2, 7ull << 20, big), 18);
  /* 4096^3 fp16, 64 MiB: already past twice the L2 with two sets */
  assert_int_equal(cu_rotation_sets(l2, 64ull << 20, big), 2);
  assert_int_equal(cu_rotation_sets(l2, 200ull << 20, big), 1);
  /* tiny sets: at most CU_ROTATION_MAX */
  assert_int_equal(cu_rotation_sets(l2, 64ull << 10, big), CU_ROTATION_MAX);
  /* the memory budget caps it, never below 1 */
  assert_int_equal(cu_rotation_sets(l2, 4ull << 20, 10ull << 20), 2);
  assert_int_equal(cu_rotation_sets(l2, 4ull << 20, 1), 1);
  /* an A100's 40 MiB L2 */
  assert_int_equal(cu_rotation_sets(40ull << 20, 4ull << 20, big), 20);
  assert_int_equal(cu_rotation_sets(0, 4ull << 20, big), 1);
}

static void graph_batch_holds_whole_rotations(void **state) {
  (void)state;
  assert_int_equal(cu_graph_batch(1), 32);
  assert_int_equal(cu_graph_batch(30), 60); /* two whole rotations, >= 32 */
  assert_int_equal(cu_graph_batch(32), 32);
  assert_int_equal(cu_graph_batch(2), 32);
  assert_int_equal(cu_graph_batch(7), 35);
  assert_int_equal(cu_graph_batch(256), 256);
  assert_int_equal(cu_graph_batch(0), 32);
}

/* ---- time-based warm-up with an injected clock ----------------------- */

typedef struct fake_clock {
  double now, tick; /* each step advances the clock by tick */
  int steps, fail_at;
} fake_clock;

static double clock_read(void *user) {
  return ((fake_clock *)user)->now;
}

static CUresult clock_step(void *user) {
  fake_clock *c = user;
  c->steps++;
  c->now += c->tick;
  return c->steps == c->fail_at ? CUDA_ERROR_LAUNCH_FAILED : CUDA_SUCCESS;
}

static void warmup_runs_until_the_time_has_passed(void **state) {
  (void)state;
  fake_clock c = {100.0, 0.01, 0, 0};
  CUresult e = CUDA_SUCCESS;
  /* 0.1 s of steps of 10 ms: 10 steps, whatever the count would say */
  assert_int_equal(cu_warmup(0.1, 4096, clock_read, clock_step, &c, &e), 10);
  assert_int_equal(c.steps, 10);
  /* a slow step (a 1024^3 product on an idle GPU): one is enough */
  c = (fake_clock){0, 0.5, 0, 0};
  assert_int_equal(cu_warmup(0.1, 4096, clock_read, clock_step, &c, &e), 1);
  /* a clock that does not move: bounded by max_steps */
  c = (fake_clock){0, 0, 0, 0};
  assert_int_equal(cu_warmup(0.1, 50, clock_read, clock_step, &c, &e), 50);
  /* a failing step stops it with its error */
  c = (fake_clock){0, 0.001, 0, 3};
  assert_int_equal(cu_warmup(0.1, 4096, clock_read, clock_step, &c, &e), -1);
  assert_int_equal(e, CUDA_ERROR_LAUNCH_FAILED);
  assert_int_equal(c.steps, 3);
}

/* ---- padding and tables ---------------------------------------------- */

static void padding_follows_the_chosen_tile(void **state) {
  (void)state;
  uint64_t d[3];
  cgemm_config c = {{64, 64, 16, 32, 32, 2, 4, 1, 1}};
  /* 8192x64x4096 with a 64-wide tile computes N = 64, not 128 */
  cgemm_padded(&c, 8192, 64, 4096, d);
  assert_int_equal(d[0], 8192);
  assert_int_equal(d[1], 64);
  assert_int_equal(d[2], 4096);
  cgemm_padded(&c, 100, 72, 40, d);
  assert_int_equal(d[0], 128);
  assert_int_equal(d[1], 128);
  assert_int_equal(d[2], 48); /* K to bk = 16, not 64 */
  cgemm_config big = {{128, 32, 64, 32, 32, 2, 4, 1, 1}};
  cgemm_padded(&big, 100, 72, 40, d);
  assert_int_equal(d[0], 128);
  assert_int_equal(d[1], 96);
  assert_int_equal(d[2], 64);
  /* every configuration stays inside the session's buffers */
  for (uint32_t i = 0; i < cgemm_curated_count; i++) {
    cgemm_padded(&cgemm_curated[i], 100, 72, 40, d);
    assert_true(d[0] <= 128 && d[1] <= 128 && d[2] <= 64);
  }
  /* split-K counts the steps of the configuration's own K */
  cgemm_config split = {{64, 64, 16, 32, 32, 2, 4, 2, 1}};
  assert_int_equal(cgemm_fits(&split, CG_F32, &cgemm_limits_sm90, 48, NULL, 0), -1); /* 3 steps */
  assert_int_equal(cgemm_fits(&split, CG_F32, &cgemm_limits_sm90, 64, NULL, 0), 0);
}

static void values_outside_the_tables_are_refused(void **state) {
  (void)state;
  char err[256];
  cgemm_config bk8 = {{128, 128, 8, 64, 32, 2, 4, 1, 8}}, st4 = {{128, 64, 32, 64, 32, 4, 4, 2, 1}};
  assert_int_equal(cgemm_valid(&bk8, CG_F32, err, sizeof err), -1);
  assert_non_null(strstr(err, "bk=8"));
  assert_int_equal(cgemm_fits(&st4, CG_F32, &cgemm_limits_sm90, 4096, err, sizeof err), -1);
  assert_non_null(strstr(err, "stages=4"));
  for (uint32_t i = 0; i < cgemm_curated_count; i++)
    if (cgemm_in_tables(&cgemm_curated[i], err, sizeof err) != 0)
      fail_msg("curated entry %u: %s", i, err);
}

/* ---- headers and libraries in the usual layouts ---------------------- */

static void mkdirs(const char *path) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%.1000s", path);
  for (char *p = buf + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      mkdir(buf, 0755);
      *p = '/';
    }
  mkdir(buf, 0755);
}

static void touch(const char *dir, const char *name) {
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  char *slash = strrchr(path, '/');
  *slash = '\0';
  mkdirs(path);
  *slash = '/';
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fclose(f);
}

static void all_headers(const char *inc) {
  const char *names[] = {"cuda_fp16.h",   "cuda_fp16.hpp", "cuda_bf16.h",
                         "cuda_bf16.hpp", "mma.h",         "crt/mma.h"};
  for (int i = 0; i < 6; i++)
    touch(inc, names[i]);
}

static char g_tree[512];

static int make_tree(void **state) {
  (void)state;
  snprintf(g_tree, sizeof g_tree, "/tmp/cuda_host_%d", (int)getpid());
  mkdirs(g_tree);
  return 0;
}

static int remove_tree(void **state) {
  char cmd[600];
  (void)state;
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tree);
  return system(cmd) == 0 ? 0 : -1;
}

static void toolkit_layout_via_cuda_home(void **state) {
  (void)state;
  char home[600], lib[700], path[1024], inc[1024], want[800];
  snprintf(home, sizeof home, "%s/toolkit", g_tree);
  snprintf(lib, sizeof lib, "%s/targets/x86_64-linux/lib", home);
  touch(lib, "libfakecuda39.so.13");
  snprintf(want, sizeof want, "%s/targets/x86_64-linux/include", home);
  all_headers(want);
  setenv("CUDA_HOME", home, 1);
  const char *names[] = {"libfakecuda39.so.13", NULL};
  assert_int_equal(cu_find_library(names, path, sizeof path), 0);
  snprintf(want, sizeof want, "%s/libfakecuda39.so.13", lib);
  assert_string_equal(path, want);
  /* the headers next to the library (../../include of targets/ARCH/lib) */
  assert_int_equal(cu_find_headers(lib, inc, sizeof inc), CU_HDR_ALL);
  assert_non_null(strstr(inc, "/toolkit/targets/x86_64-linux/include"));
  /* lib64 + include of CUDA_PATH, with CUDA_HOME unset */
  unsetenv("CUDA_HOME");
  snprintf(home, sizeof home, "%s/cudapath", g_tree);
  snprintf(lib, sizeof lib, "%s/lib64", home);
  touch(lib, "libfakecuda39.so.13");
  setenv("CUDA_PATH", home, 1);
  assert_int_equal(cu_find_library(names, path, sizeof path), 0);
  assert_non_null(strstr(path, "/cudapath/lib64/libfakecuda39.so.13"));
  unsetenv("CUDA_PATH");
}

static void pip_layouts_via_pythonpath_and_virtualenv(void **state) {
  (void)state;
  char site[600], lib[700], path[1024], inc[1024], venv[600];
  const char *names[] = {"libfakecuda39.so.13", NULL};
  /* pip install --target SITE nvidia-...-cu13: SITE/nvidia/cu13/{lib,include} */
  snprintf(site, sizeof site, "%s/site", g_tree);
  snprintf(lib, sizeof lib, "%s/nvidia/cu13/lib", site);
  touch(lib, "libfakecuda39.so.13");
  snprintf(inc, sizeof inc, "%s/nvidia/cu13/include", site);
  all_headers(inc);
  setenv("PYTHONPATH", site, 1);
  assert_int_equal(cu_find_library(names, path, sizeof path), 0);
  assert_non_null(strstr(path, "/site/nvidia/cu13/lib/libfakecuda39.so.13"));
  assert_int_equal(cu_find_headers(lib, inc, sizeof inc), CU_HDR_ALL);
  assert_non_null(strstr(inc, "/site/nvidia/cu13/include"));
  unsetenv("PYTHONPATH");
  /* a virtualenv with CUDA 12's per-component wheels */
  snprintf(venv, sizeof venv, "%s/venv", g_tree);
  snprintf(lib, sizeof lib, "%s/lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib", venv);
  touch(lib, "libfakecuda39.so.13");
  setenv("VIRTUAL_ENV", venv, 1);
  assert_int_equal(cu_find_library(names, path, sizeof path), 0);
  assert_non_null(strstr(path, "/venv/lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib/"));
  char roots[CU_ROOTS_MAX][CU_PATH_MAX];
  size_t n = cu_cuda_roots(roots, CU_ROOTS_MAX);
  int seen = 0;
  for (size_t i = 0; i < n; i++)
    seen |= strstr(roots[i], "/venv/lib/python3.12/site-packages/nvidia/cuda_nvrtc") != NULL;
  assert_true(seen);
  unsetenv("VIRTUAL_ENV");
  /* nothing anywhere */
  const char *none[] = {"libnosuchcuda39.so.13", NULL};
  assert_int_equal(cu_find_library(none, path, sizeof path), -1);
}

static void headers_missing_decline_the_16_bit_types(void **state) {
  (void)state;
  char home[600], inc[700], dir[1024];
  /* a tree with fp16 only, and mma.h without crt/mma.h */
  snprintf(home, sizeof home, "%s/partial/lib64", g_tree);
  mkdirs(home);
  snprintf(inc, sizeof inc, "%s/partial/include", g_tree);
  touch(inc, "cuda_fp16.h");
  touch(inc, "cuda_fp16.hpp");
  touch(inc, "mma.h");
  unsigned have = CU_HDR_FP16;                     /* what that folder offers */
  assert_null(cu_headers_missing(have, 0, 1));     /* float32 needs none */
  assert_null(cu_headers_missing(have, 1, 0));     /* fp16 reference: fine */
  assert_non_null(cu_headers_missing(have, 1, 1)); /* fp16 WMMA: mma.h missing */
  assert_non_null(strstr(cu_headers_missing(have, 1, 1), "crt/mma.h"));
  assert_non_null(strstr(cu_headers_missing(have, 2, 0), "cuda_bf16.h"));
  assert_null(cu_headers_missing(CU_HDR_ALL, 2, 1));
  /* cu_find_headers prefers the folder with every header over a partial
   * one next to the library */
  snprintf(home, sizeof home, "%s/partial/lib64", g_tree);
  unsigned m = cu_find_headers(home, dir, sizeof dir);
  if (m == CU_HDR_ALL) /* a complete toolkit elsewhere (/usr/local/cuda) won */
    assert_null(strstr(dir, "/partial/include"));
  else
    assert_int_equal(m & CU_HDR_FP16, CU_HDR_FP16);
}

/* ---- versions in the keys -------------------------------------------- */

static void library_versions_change_the_identity_and_key(void **state) {
  (void)state;
  char a[320], b[320];
  cu_identity(a, sizeof a, "NVIDIA H200", 9, 0, 132, 143771ull << 20, 13000, "nvrtc 13.0");
  cu_identity(b, sizeof b, "NVIDIA H200", 9, 0, 132, 143771ull << 20, 13000, "nvrtc 13.1");
  assert_string_equal(a, "cuda:NVIDIA H200/sm_9.0/SMs 132/mem 143771MiB/driver 13.0/nvrtc 13.0");
  assert_string_not_equal(a, b);
  /* the portable key of a backend with a library key */
  cu_instance inst;
  cu_device dev;
  memset(&inst, 0, sizeof inst);
  memset(&dev, 0, sizeof dev);
  inst.mm.backend = "cublaslt";
  dev.limits = cgemm_limits_sm90;
  cu_identity(dev.identity, sizeof dev.identity, "NVIDIA H200", 9, 0, 132, 143771ull << 20, 13000,
              "cublasLt 130100");
  inst.devs.initialised = 1;
  inst.devs.items = &dev;
  inst.devs.count = 1;
  int64_t shape[] = {1024, 1024, 1024};
  calhost_workload w = {
      {CALHOST_STRUCT_WORKLOAD, 1, sizeof w}, "w", "MatMul", "float16", shape, 3, NULL, 0, "d"};
  calhost_target t = {
      {CALHOST_STRUCT_TARGET, 1, sizeof t}, dev.identity, 1, NULL, 0, "", dev.identity, 0};
  calhost_built_key k;
  calhost_plugin_instance *pi = (calhost_plugin_instance *)(void *)&inst;
  assert_int_equal(cu_instance_build_key(pi, &w, &t, &k), CALHOST_OK);
  assert_int_equal(k.structure_count, 5);
  snprintf(inst.library_key, sizeof inst.library_key, "cublasLt 130100");
  assert_int_equal(cu_instance_build_key(pi, &w, &t, &k), CALHOST_OK);
  assert_int_equal(k.structure_count, 6);
  assert_string_equal(k.structure[5].name, "library");
  assert_string_equal(k.structure[5].value, "cublasLt 130100");
  assert_non_null(strstr(k.processor, "/cublasLt 130100"));
}

/* ---- sticky errors ----------------------------------------------------- */

static int g_exit_status = -1;
static void fake_exit(int status) {
  g_exit_status = status;
}

static void sticky_errors_end_the_process(void **state) {
  (void)state;
  assert_true(cu_error_sticky(CUDA_ERROR_ILLEGAL_ADDRESS));
  assert_true(cu_error_sticky(CUDA_ERROR_LAUNCH_FAILED));
  assert_true(cu_error_sticky(CUDA_ERROR_MISALIGNED_ADDRESS));
  assert_false(cu_error_sticky(CUDA_ERROR_OUT_OF_MEMORY));
  assert_false(cu_error_sticky(CUDA_ERROR_INVALID_VALUE));
  assert_false(cu_error_sticky(CUDA_SUCCESS));
  void (*saved)(int) = cu_sticky_exit;
  cu_sticky_exit = fake_exit;
  cu_end_if_sticky(NULL, NULL, "t", "run", CUDA_ERROR_OUT_OF_MEMORY);
  assert_int_equal(g_exit_status, -1);
  cu_end_if_sticky(NULL, NULL, "t", "run", CUDA_ERROR_ILLEGAL_ADDRESS);
  assert_int_equal(g_exit_status, CU_STICKY_EXIT_STATUS);
  cu_sticky_exit = saved;
}

/* ---- the loader under concurrent first calls ------------------------- */

static void *list_devices(void *user) {
  cu_devices *d = user;
  memset(d, 0, sizeof *d);
  cu_devices_init(d, NULL, "t");
  return NULL;
}

static void concurrent_first_calls_agree(void **state) {
  (void)state;
  const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (access(stub, R_OK) != 0)
    skip();
  setenv("CALHOST_CUDA_DRIVER", stub, 1);
  enum { N = 8 };
  pthread_t th[N];
  cu_devices d[N];
  for (int i = 0; i < N; i++)
    assert_int_equal(pthread_create(&th[i], NULL, list_devices, &d[i]), 0);
  for (int i = 0; i < N; i++)
    pthread_join(th[i], NULL);
  /* every thread saw the loaded stub (cuInit's answer), none a half-made
   * "no NVIDIA driver" */
  for (int i = 0; i < N; i++) {
    assert_non_null(strstr(d[i].why, "cuInit: CUDA_ERROR_STUB_LIBRARY"));
    cu_devices_free(&d[i]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(rotation_spans_twice_the_l2),
      cmocka_unit_test(graph_batch_holds_whole_rotations),
      cmocka_unit_test(warmup_runs_until_the_time_has_passed),
      cmocka_unit_test(padding_follows_the_chosen_tile),
      cmocka_unit_test(values_outside_the_tables_are_refused),
      cmocka_unit_test(toolkit_layout_via_cuda_home),
      cmocka_unit_test(pip_layouts_via_pythonpath_and_virtualenv),
      cmocka_unit_test(headers_missing_decline_the_16_bit_types),
      cmocka_unit_test(library_versions_change_the_identity_and_key),
      cmocka_unit_test(sticky_errors_end_the_process),
      cmocka_unit_test(concurrent_first_calls_agree),
  };
  return cmocka_run_group_tests(tests, make_tree, remove_tree);
}
