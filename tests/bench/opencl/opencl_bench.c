/*
 * opencl_bench.c: opencl-bench, the figures of the OpenCL MatMul backends.
 * Loads the built opencl_gemm and clblast plugins through the tests' one
 * minimal host (tests/common/test_host) and drives their vtables like the
 * host does, on device 0 (an ABI 2 device target):
 * for each shape it sweeps each backend's candidates (all, or with --quick
 * 12 evenly spaced ones as the host's quick rigor picks), every candidate
 * prepared (compile seconds), run once, checked against the reference and
 * timed (median of 5 samples); then it re-times the default and the winner
 * (median of 7). Times are wall-clock per product around run() (the same
 * clock for both backends; opencl_gemm's device_seconds are printed too).
 * Prints key=value lines per backend and shape:
 *   gain_vs_default, compile_s_per_candidate, sweep_s, and for opencl_gemm
 *   pct_of_clblast_tuned and pct_of_clblast_default (performance, higher
 *   is better; 100 = as fast).
 *
 *   opencl-bench [--quick] [--shapes "M,N,K M,N,K ..."] [--plugin-dir DIR]
 */
#define _GNU_SOURCE
#include <calhost/plugin.h>

#include "test_host.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

typedef struct backend {
  const char *name;
  test_host_plugin host; /* the file and the instance (tests/common) */
  const calhost_plugin_vtable *vt;
  calhost_plugin_instance *inst;
  calhost_device_info dev;
} backend;

static int load(backend *b, const char *dir) {
  char path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/%s.so", dir, b->name);
  if (test_host_load(path, 2, CALHOST_ABI_VERSION, &b->host) != 0) {
    fprintf(stderr, "opencl-bench: cannot load %s (%s)\n", path, test_host_error);
    return -1;
  }
  b->vt = b->host.vt;
  b->inst = b->host.inst;
  uint32_t n = 0;
  memset(&b->dev, 0, sizeof b->dev);
  b->dev.header = (calhost_struct_header){CALHOST_STRUCT_DEVICE_INFO, 1, sizeof b->dev};
  if (b->vt->device_count(b->inst, &n) != CALHOST_OK || n == 0 ||
      b->vt->list_device(b->inst, 0, &b->dev) != CALHOST_OK) {
    fprintf(stderr, "opencl-bench: %s: no OpenCL device (%s)\n", b->name, test_host_error);
    return -1;
  }
  return 0;
}

/* Seconds per product of the prepared candidate: median of `samples`
 * samples of enough iterations for about 20 ms each. */
static double time_it(backend *b, calhost_session *s, int samples, double *device_s) {
  calhost_run_result rr = {{CALHOST_STRUCT_RUN_RESULT, 1, sizeof rr}, -1};
  double t[16], d[16];
  uint32_t it = 1;
  double t0 = now();
  if (b->vt->run(s, 1, &rr) != CALHOST_OK)
    return -1;
  double one = now() - t0;
  if (one < 0.02)
    it = (uint32_t)(0.02 / (one > 1e-6 ? one : 1e-6)) + 1;
  if (samples > 16)
    samples = 16;
  for (int i = 0; i < samples; i++) {
    rr.device_seconds = -1;
    t0 = now();
    if (b->vt->run(s, it, &rr) != CALHOST_OK)
      return -1;
    t[i] = (now() - t0) / it;
    d[i] = rr.device_seconds >= 0 ? rr.device_seconds / it : -1;
  }
  qsort(t, (size_t)samples, sizeof t[0], cmp_double);
  qsort(d, (size_t)samples, sizeof d[0], cmp_double);
  if (device_s)
    *device_s = d[samples / 2];
  return t[samples / 2];
}

typedef struct result {
  double t_default, t_tuned, dev_tuned, sweep_s, compile_s;
  uint32_t candidates, checked;
  char winner[512];
} result;

static int prepare(backend *b, calhost_session *s, const char *pol, double *seconds) {
  double t0 = now();
  calhost_status st = b->vt->prepare(s, pol, strlen(pol));
  if (seconds)
    *seconds = now() - t0;
  return st == CALHOST_OK ? 0 : -1;
}

static int bench(backend *b, const int64_t shape[3], int quick, result *r) {
  calhost_workload w = {{CALHOST_STRUCT_WORKLOAD, 1, sizeof w},
                        "bench",
                        "MatMul",
                        "float32",
                        shape,
                        3,
                        NULL,
                        0,
                        "sha256:bench"};
  calhost_target t;
  calhost_session *s = NULL;
  char pol[512], def[512], err[512];
  size_t len;
  uint32_t count = 0;
  double best = 1e30;
  memset(&t, 0, sizeof t);
  memset(r, 0, sizeof *r);
  t.header = (calhost_struct_header){CALHOST_STRUCT_TARGET, 1, sizeof t};
  t.processor = b->dev.identity;
  t.thread_count = 1;
  t.features = "";
  t.device_identity = b->dev.identity;
  t.device_index = b->dev.index;
  if (b->vt->open_session(b->inst, &w, &t, &s) != CALHOST_OK ||
      b->vt->candidate_count(s, &count) != CALHOST_OK ||
      b->vt->default_policy(s, def, sizeof def, &len) != CALHOST_OK) {
    fprintf(stderr, "opencl-bench: %s: session failed: %s\n", b->name, test_host_error);
    return -1;
  }
  double sweep0 = now();
  uint32_t picks = quick && count > 12 ? 12 : count;
  for (uint32_t k = 0; k < picks; k++) {
    uint32_t i =
        picks == count
            ? k
            : (uint32_t)((k * (uint64_t)(count - 1) * 2 + (picks - 1)) / ((picks - 1) * 2));
    double c;
    if (b->vt->serialize_candidate(s, i, pol, sizeof pol, &len) != CALHOST_OK)
      continue;
    r->candidates++;
    if (prepare(b, s, pol, &c) != 0) {
      fprintf(stderr, "  %s: candidate %u refused: %s\n", b->name, i, test_host_error);
      continue;
    }
    r->compile_s += c;
    calhost_run_result rr = {{CALHOST_STRUCT_RUN_RESULT, 1, sizeof rr}, -1};
    if (b->vt->run(s, 1, &rr) != CALHOST_OK || b->vt->check(s, err, sizeof err) != CALHOST_OK) {
      fprintf(stderr, "  %s: candidate %u failed: %s\n", b->name, i, err);
      continue;
    }
    r->checked++;
    double tt = time_it(b, s, 5, NULL);
    if (tt > 0 && tt < best) {
      best = tt;
      snprintf(r->winner, sizeof r->winner, "%s", pol);
    }
  }
  r->sweep_s = now() - sweep0;
  if (r->candidates)
    r->compile_s /= r->candidates;
  if (!r->winner[0] || prepare(b, s, def, NULL) != 0) {
    b->vt->close_session(s);
    return -1;
  }
  r->t_default = time_it(b, s, 7, NULL);
  prepare(b, s, r->winner, NULL);
  r->t_tuned = time_it(b, s, 7, &r->dev_tuned);
  if (r->t_default > 0 && r->t_default < r->t_tuned) { /* the default is a candidate too */
    r->t_tuned = r->t_default;
    snprintf(r->winner, sizeof r->winner, "%s", def);
  }
  b->vt->close_session(s);
  return 0;
}

int main(int argc, char **argv) {
  char dir[PATH_MAX] = "";
  const char *shapes = "64,64,64 256,256,256 512,512,512 1024,64,256";
  int quick = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick"))
      quick = 1;
    else if (!strcmp(argv[i], "--shapes") && i + 1 < argc)
      shapes = argv[++i];
    else if (!strcmp(argv[i], "--plugin-dir") && i + 1 < argc)
      snprintf(dir, sizeof dir, "%s", argv[++i]);
    else {
      fprintf(stderr,
              "usage: opencl-bench [--quick] [--shapes \"M,N,K ...\"] [--plugin-dir DIR]\n");
      return 2;
    }
  }
  if (!dir[0]) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
      return 2;
    exe[n] = '\0';
    snprintf(dir, sizeof dir, "%s/../lib/calhost/plugins", dirname(exe));
  }
  backend bk[2] = {{.name = "opencl_gemm"}, {.name = "clblast"}};
  for (int i = 0; i < 2; i++)
    if (load(&bk[i], dir) != 0)
      return 1;
  printf("device=%s\nidentity=%s\nrigor=%s\n", bk[0].dev.name, bk[0].dev.identity,
         quick ? "quick (12 evenly spaced candidates)" : "all candidates");
  printf("\n%-14s %-12s %9s %9s %7s %8s %8s %10s %8s %8s\n", "shape", "backend", "default_ms",
         "tuned_ms", "gain", "cands", "compile_s", "sweep_s", "%clb_tun", "%clb_def");
  for (const char *p = shapes; *p;) {
    int64_t sh[3];
    int used = 0;
    while (*p == ' ')
      p++;
    if (!*p || sscanf(p, "%lld,%lld,%lld%n", (long long *)&sh[0], (long long *)&sh[1],
                      (long long *)&sh[2], &used) != 3)
      break;
    p += used;
    result r[2];
    int ok[2];
    for (int i = 0; i < 2; i++)
      ok[i] = bench(&bk[i], sh, quick, &r[i]) == 0;
    char shape[48];
    snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)sh[0], (long long)sh[1],
             (long long)sh[2]);
    for (int i = 0; i < 2; i++) {
      if (!ok[i]) {
        printf("%-14s %-12s failed\n", shape, bk[i].name);
        continue;
      }
      double pct_t = ok[1] ? 100.0 * r[1].t_tuned / r[i].t_tuned : 0;
      double pct_d = ok[1] ? 100.0 * r[1].t_default / r[i].t_tuned : 0;
      printf("%-14s %-12s %9.3f %9.3f %7.2f %4u/%-3u %8.2f %10.1f", shape, bk[i].name,
             r[i].t_default * 1e3, r[i].t_tuned * 1e3, r[i].t_default / r[i].t_tuned, r[i].checked,
             r[i].candidates, r[i].compile_s, r[i].sweep_s);
      if (i == 0)
        printf(" %8.1f %8.1f", pct_t, pct_d);
      printf("\n");
      printf("  %s %s gain_vs_default=%.3f compile_s_per_candidate=%.2f sweep_s=%.1f", shape,
             bk[i].name, r[i].t_default / r[i].t_tuned, r[i].compile_s, r[i].sweep_s);
      if (i == 0)
        printf(" pct_of_clblast_tuned=%.1f pct_of_clblast_default=%.1f device_ms=%.3f", pct_t,
               pct_d, r[i].dev_tuned * 1e3);
      printf(" winner=%s\n", r[i].winner);
    }
    fflush(stdout);
  }
  for (int i = 0; i < 2; i++)
    test_host_unload(&bk[i].host);
  return 0;
}
