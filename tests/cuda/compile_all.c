/*
 * compile_all.c: cuda-compile-all [THREADS] [ARCH...]: compiles EVERY
 * valid point of cuda_gemm's space (each distinct module: split-K and
 * swizzle are kernel arguments) for sm_80 and sm_90 (or the ARCHs named)
 * with NVRTC, and prints per architecture the valid points, the modules,
 * how many failed to compile and how many broke the register or spill
 * promise, then "cuda-compile-all: N failed". Exit 1 when any did. Run by
 * tests/cuda/compile-all.sh (on demand; about an hour of CPU per
 * architecture).
 */
#include "space_walk.h"

typedef struct counter {
  walk_list *w;
  cgemm_dtype t;
} counter;

static void add_point(const cgemm_config *c, void *user) {
  counter *k = user;
  k->w->points++;
  walk_add(k->w, c, k->t);
}

int main(int argc, char **argv) {
  char why[256], verdict[640];
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  const char *archs_default[] = {"sm_80", "sm_90"};
  const char **archs = argc > 2 ? (const char **)argv + 2 : archs_default;
  int narch = argc > 2 ? argc - 2 : 2;
  size_t failed_total = 0;
  const cu_nvrtc *nv = cu_nvrtc_load(why, sizeof why);
  if (!nv) {
    fprintf(stderr, "cuda-compile-all: %s\n", why);
    return 2;
  }
  for (int a = 0; a < narch; a++) {
    const cgemm_limits *l =
        strcmp(archs[a], "sm_80") == 0 ? &cgemm_limits_sm80 : &cgemm_limits_sm90;
    walk_list w = {0};
    for (int t = 0; t < 3; t++) {
      counter k = {&w, (cgemm_dtype)t};
      walk_points((cgemm_dtype)t, l, 4096, add_point, &k);
    }
    walk_compile(nv, archs[a], &w, threads, 1);
    size_t failed = 0, broken = 0;
    double secs = 0;
    for (size_t i = 0; i < w.count; i++) {
      secs += w.items[i].seconds;
      if (w.items[i].rc != 0)
        failed++;
      else if (walk_verdict(&w.items[i], l, verdict, sizeof verdict)[0])
        broken++;
    }
    printf("%s: %zu valid points (K 4096), %zu modules, %zu failed to compile, %zu over the "
           "register/spill limits, %.0f s of compiling\n",
           archs[a], w.points, w.count, failed, broken, secs);
    failed_total += failed + broken;
    free(w.items);
  }
  printf("cuda-compile-all: %zu failed\n", failed_total);
  return failed_total ? 1 : 0;
}
