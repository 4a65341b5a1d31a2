/*
 * cuda_bench.c: cuda-bench [--quick] [PLUGIN_DIR]: on an NVIDIA GPU, for
 * each MatMul shape (square 1024 and 4096, tall-skinny 8192x64x4096, a
 * small 128x128x128) in float32 and bfloat16, and the square ones in
 * float16, in one run: cuda_gemm's
 * default and tuned (best of its curated candidates), cublaslt's default
 * (cuBLASLt's heuristic first choice: the cuBLAS default) and tuned (best
 * of its candidates), as TFLOP/s from CUDA events (device_seconds), and
 * the ratios tuned / cuBLAS default. Every timed candidate first passes
 * the plugin's reference check; and how long each plugin's open_session
 * took (cublaslt's includes its AlgoCheck enumeration). Figures are cold:
 * the plugins rotate copies of A and B over twice the L2. Without a device
 * it says so and exits 0.
 * --quick: the first 6 candidates of each plugin. Plugins from PLUGIN_DIR
 * (default: ../lib/calhost/plugins next to this program).
 */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "test_host.h"

typedef struct shape {
  const char *name;
  int64_t mnk[3];
} shape;

static const shape g_shapes[] = {{"square-1024", {1024, 1024, 1024}},
                                 {"square-4096", {4096, 4096, 4096}},
                                 {"tall-8192x64x4096", {8192, 64, 4096}},
                                 {"small-128", {128, 128, 128}}};
static const char *const g_dtypes[] = {"float32", "bfloat16", "float16"};

/* Seconds per product of policy on s (NAN-free: -1 on failure or a
 * failed check), over enough iterations for ~30 ms of device time. */
static double time_policy(const calhost_plugin_vtable *vt, calhost_session *s, const char *policy) {
  calhost_run_result r = {{CALHOST_STRUCT_RUN_RESULT, 1, sizeof r}, -1};
  char err[512] = "";
  if (vt->prepare(s, policy, strlen(policy)) != CALHOST_OK)
    return -1;
  if (vt->run(s, 1, &r) != CALHOST_OK ||
      (vt->check && vt->check(s, err, sizeof err) != CALHOST_OK)) {
    if (err[0])
      fprintf(stderr, "cuda-bench: %s: check failed: %s\n", policy, err);
    return -1;
  }
  double one = r.device_seconds > 0 ? r.device_seconds : 1e-3;
  uint32_t it = (uint32_t)(0.03 / one);
  /* at least two whole graphs (the plugins capture 32 or more products
   * per graph and launch the rest one by one) */
  it = it < 64 ? 64 : it > 4000 ? 4000 : it;
  r.device_seconds = -1;
  if (vt->run(s, it, &r) != CALHOST_OK || r.device_seconds <= 0)
    return -1;
  return r.device_seconds / it;
}

typedef struct outcome {
  double def, best;
  double open_seconds; /* open_session's wall time (matrices, reference, enumeration) */
  char best_policy[1024];
} outcome;

static double wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int measure(test_host_plugin *p, const calhost_workload *w, const calhost_target *t,
                   int quick, outcome *o) {
  const calhost_plugin_vtable *vt = p->vt;
  calhost_session *s = NULL;
  char policy[1024];
  size_t len;
  uint32_t n = 0;
  o->def = o->best = -1;
  o->best_policy[0] = '\0';
  double t0 = wall();
  calhost_status st = vt->open_session(p->inst, w, t, &s);
  o->open_seconds = wall() - t0;
  if (st != CALHOST_OK) {
    fprintf(stderr, "cuda-bench: %s %s: open_session: %s\n", vt->backend_name, w->name,
            test_host_error);
    return -1;
  }
  if (vt->default_policy(s, policy, sizeof policy, &len) == CALHOST_OK)
    o->def = time_policy(vt, s, policy);
  vt->candidate_count(s, &n);
  if (quick && n > 6)
    n = 6;
  for (uint32_t i = 0; i < n; i++) {
    if (vt->serialize_candidate(s, i, policy, sizeof policy, &len) != CALHOST_OK)
      continue;
    double sec = time_policy(vt, s, policy);
    if (sec > 0 && (o->best < 0 || sec < o->best)) {
      o->best = sec;
      memcpy(o->best_policy, policy, sizeof o->best_policy);
    }
  }
  if (o->def > 0 && (o->best < 0 || o->def < o->best))
    o->best = o->def; /* tuned is never worse than the default it could keep */
  vt->close_session(s);
  return 0;
}

static double tflops(const shape *sh, double sec) {
  return sec > 0 ? 2.0 * sh->mnk[0] * sh->mnk[1] * sh->mnk[2] / sec * 1e-12 : 0;
}

int main(int argc, char **argv) {
  int quick = 0;
  const char *dir = NULL;
  char dflt[PATH_MAX + 64], path[PATH_MAX + 128];
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick"))
      quick = 1;
    else
      dir = argv[i];
  }
  if (!dir) {
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    snprintf(dflt, sizeof dflt, "%s/../lib/calhost/plugins", dirname(self));
    dir = dflt;
  }
  test_host_plugin cg = {0}, lt = {0};
  snprintf(path, sizeof path, "%s/cuda_gemm.so", dir);
  if (test_host_load(path, 2, 2, &cg) != 0) {
    fprintf(stderr, "cuda-bench: %s: %s\n", path, test_host_error);
    return 2;
  }
  snprintf(path, sizeof path, "%s/cublaslt.so", dir);
  if (test_host_load(path, 2, 2, &lt) != 0) {
    fprintf(stderr, "cuda-bench: %s: %s\n", path, test_host_error);
    return 2;
  }
  uint32_t count = 0;
  calhost_device_info info;
  memset(&info, 0, sizeof info);
  info.header = (calhost_struct_header){CALHOST_STRUCT_DEVICE_INFO, 1, sizeof info};
  if (cg.vt->device_count(cg.inst, &count) != CALHOST_OK || count == 0) {
    printf("cuda-bench: no NVIDIA device: nothing to measure\n");
    test_host_unload(&cg);
    test_host_unload(&lt);
    return 0;
  }
  cg.vt->list_device(cg.inst, 0, &info);
  calhost_target t = {{CALHOST_STRUCT_TARGET, 1, sizeof t},
                      info.identity,
                      1,
                      NULL,
                      0,
                      "",
                      info.identity,
                      info.index};
  /* cublaslt's identity of the same GPU (its own library version in it) */
  calhost_device_info lt_info;
  memset(&lt_info, 0, sizeof lt_info);
  lt_info.header = (calhost_struct_header){CALHOST_STRUCT_DEVICE_INFO, 1, sizeof lt_info};
  if (lt.vt->device_count(lt.inst, &count) != CALHOST_OK || count == 0 ||
      lt.vt->list_device(lt.inst, 0, &lt_info) != CALHOST_OK) {
    printf("cuda-bench: cublaslt lists no device\n");
    return 1;
  }
  calhost_target lt_t = t;
  lt_t.processor = lt_t.device_identity = lt_info.identity;
  lt_t.device_index = lt_info.index;
  printf("cuda-bench: device %u: %s (%s)%s\n", info.index, info.name, info.identity,
         quick ? ", quick" : "");
  printf("%-18s %-9s %12s %12s %12s %12s %9s %9s\n", "shape", "dtype", "gemm-dflt", "gemm-tuned",
         "cublas-dflt", "lt-tuned", "gemm/cub", "lt/cub");
  int failures = 0;
  for (size_t d = 0; d < sizeof g_dtypes / sizeof g_dtypes[0]; d++)
    for (size_t i = 0; i < sizeof g_shapes / sizeof g_shapes[0]; i++) {
      const shape *sh = &g_shapes[i];
      if (d == 2 && i >= 2)
        continue; /* float16: the square shapes */
      calhost_workload w = {{CALHOST_STRUCT_WORKLOAD, 1, sizeof w},
                            sh->name,
                            "MatMul",
                            g_dtypes[d],
                            sh->mnk,
                            3,
                            NULL,
                            0,
                            "sha256:0"};
      outcome og, ol;
      if (measure(&cg, &w, &t, quick, &og) != 0 || measure(&lt, &w, &lt_t, quick, &ol) != 0) {
        failures++;
        continue;
      }
      double base = ol.def;
      printf("%-18s %-9s %12.2f %12.2f %12.2f %12.2f %9.2f %9.2f  TFLOP/s, ratios vs cuBLASLt "
             "heuristic\n",
             sh->name, g_dtypes[d], tflops(sh, og.def), tflops(sh, og.best), tflops(sh, ol.def),
             tflops(sh, ol.best), base > 0 && og.best > 0 ? base / og.best : 0,
             base > 0 && ol.best > 0 ? base / ol.best : 0);
      printf("    cuda_gemm best: %s\n    cublaslt best: %s\n", og.best_policy, ol.best_policy);
      printf("    open_session: cuda_gemm %.3f s, cublaslt %.3f s (its enumeration: the "
             "difference, %.3f s)\n",
             og.open_seconds, ol.open_seconds, ol.open_seconds - og.open_seconds);
      fflush(stdout);
    }
  test_host_unload(&cg);
  test_host_unload(&lt);
  return failures ? 1 : 0;
}
