/*
 * plugin.c: the openblas backend: Debian's OpenBLAS cblas_sgemm for
 * "MatMul" (float32, row-major), calibrating what OpenBLAS leaves to its
 * caller: how many threads to use for each shape. The policy is
 * "threads=N", N in [1, target threads]; since every workload is one shape,
 * the winners across shapes also give the size below which one thread is
 * faster (see README.md).
 *
 * OpenBLAS is dlopen()ed in create(), never linked: its constructor starts a
 * thread pool, and the host probes plugins in a child process where loading
 * must be side-effect free. Its threads are created by OpenBLAS; each run
 * sets the thread count explicitly, and a session pins OpenBLAS's worker
 * threads to the target's CPU set when the library offers
 * openblas_setaffinity.
 */
#define _GNU_SOURCE
#include <calhost/plugin.h>

#include <cblas.h>
#include <dlfcn.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matmul.h"

#ifndef CALHOST_OPENBLAS_LIBDIR
#define CALHOST_OPENBLAS_LIBDIR ""
#endif
#ifndef CALHOST_OPENBLAS_VERSION
#define CALHOST_OPENBLAS_VERSION "unknown"
#endif

#define OB_THREADS_MAX 256

typedef __typeof__(cblas_sgemm) ob_sgemm_fn;
typedef void ob_set_threads_fn(int);
typedef int ob_get_threads_fn(void);
typedef int ob_setaffinity_fn(int, size_t, cpu_set_t *);

struct calhost_plugin_instance {
  matmul_instance mm; /* first: host, name, the last key's properties */
  void *lib;
  ob_sgemm_fn *sgemm;
  ob_set_threads_fn *set_threads;
  ob_get_threads_fn *get_threads;
  ob_setaffinity_fn *setaffinity; /* may be NULL */
};

struct calhost_session {
  matmul_session mm; /* first: data, candidate count, last run */
  calhost_plugin_instance *inst;
  unsigned max_threads;
  int threads; /* prepared; 0 = none */
};

/* Parses "threads=N" (strict: no spaces, no sign, no leading zero, N in
 * [1, OB_THREADS_MAX]) into *threads. Returns 0, or -1 with a reason in err. */
static int parse_policy(const char *p, size_t len, int *threads, char *err, size_t cap) {
  static const char prefix[] = "threads=";
  const size_t pl = sizeof prefix - 1;
  int v = 0;
  if (matmul_policy_text(p, len, 32, err, cap) != 0)
    return -1;
  if (len < pl || memcmp(p, prefix, pl) != 0)
    return matmul_fail(err, cap, "expected threads=N");
  if (len == pl)
    return matmul_fail(err, cap, "threads: empty value");
  for (size_t i = pl; i < len; i++)
    if (p[i] < '0' || p[i] > '9')
      return matmul_fail(err, cap, "threads: not a decimal number (or trailing garbage)");
  if (p[pl] == '0')
    return matmul_fail(err, cap,
                       len == pl + 1 ? "threads=0 out of range [1, %d]" : "threads: leading zero",
                       OB_THREADS_MAX);
  if (len - pl > 4)
    return matmul_fail(err, cap, "threads out of range [1, %d]", OB_THREADS_MAX);
  for (size_t i = pl; i < len; i++)
    v = v * 10 + (p[i] - '0');
  if (v > OB_THREADS_MAX)
    return matmul_fail(err, cap, "threads=%d out of range [1, %d]", v, OB_THREADS_MAX);
  *threads = v;
  return 0;
}

/* The threads a target offers, within [1, OB_THREADS_MAX]: the exact key's
 * thread count and the largest candidate. */
static unsigned target_threads(const calhost_target *t) {
  return t->thread_count < 1                ? 1
         : t->thread_count > OB_THREADS_MAX ? OB_THREADS_MAX
                                            : t->thread_count;
}

static calhost_status ob_create(const calhost_host_services *host, const calhost_property *settings,
                                size_t setting_count, calhost_plugin_instance **out) {
  const char *library = NULL;
  calhost_plugin_instance *inst;
  if (!out || (setting_count && !settings))
    return CALHOST_INVALID_ARGUMENT;
  *out = NULL;
  for (size_t i = 0; i < setting_count; i++) {
    if (settings[i].name && settings[i].value && strcmp(settings[i].name, "library") == 0) {
      library = settings[i].value;
    } else {
      matmul_set_error(host, "openblas: unknown setting '%s' (known: library)",
                       settings[i].name ? settings[i].name : "(null)");
      return CALHOST_INVALID_ARGUMENT;
    }
  }
  inst = matmul_instance_new(host, "openblas", sizeof *inst);
  if (!inst)
    return CALHOST_NO_MEMORY;
  inst->mm.thread_cap = OB_THREADS_MAX; /* the key's threads are target_threads() */
  inst->mm.caps = MATMUL_CAN_ALL;       /* CBLAS's transposes and alpha, a bias, a loop */
  if (library) {
    inst->lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  } else {
    char path[512];
    snprintf(path, sizeof path, "%s/libopenblas.so.0", CALHOST_OPENBLAS_LIBDIR);
    if (CALHOST_OPENBLAS_LIBDIR[0])
      inst->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!inst->lib)
      inst->lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  }
  if (inst->lib) {
    inst->sgemm = (ob_sgemm_fn *)dlsym(inst->lib, "cblas_sgemm");
    inst->set_threads = (ob_set_threads_fn *)dlsym(inst->lib, "openblas_set_num_threads");
    inst->get_threads = (ob_get_threads_fn *)dlsym(inst->lib, "openblas_get_num_threads");
    inst->setaffinity = (ob_setaffinity_fn *)dlsym(inst->lib, "openblas_setaffinity");
  }
  if (!inst->lib || !inst->sgemm || !inst->set_threads || !inst->get_threads) {
    matmul_set_error(host, "openblas: cannot load OpenBLAS (%s)",
                     inst->lib ? "cblas_sgemm/openblas_set_num_threads missing" : dlerror());
    if (inst->lib)
      dlclose(inst->lib);
    free(inst);
    return CALHOST_UNSUPPORTED;
  }
  *out = inst;
  return CALHOST_OK;
}

static calhost_status ob_validate_policy(calhost_plugin_instance *inst, const char *policy,
                                         size_t length, char *err, size_t err_capacity) {
  int threads;
  (void)inst;
  return parse_policy(policy, length, &threads, err, err_capacity) == 0 ? CALHOST_OK
                                                                        : CALHOST_INVALID_ARGUMENT;
}

static calhost_status ob_open_session(calhost_plugin_instance *inst, const calhost_workload *w,
                                      const calhost_target *t, calhost_session **out) {
  calhost_session *s;
  calhost_status st;
  matmul_shape shape;
  s = matmul_session_alloc(inst, w, t, out, sizeof *s, &shape, &st);
  if (!s)
    return st;
  s->inst = inst;
  s->max_threads = target_threads(t);
  s->mm.candidates = s->max_threads; /* threads = 1 .. the target's thread count */
  if (matmul_data_init(&s->mm.data, &shape) != 0) {
    matmul_set_error(inst->mm.host, "openblas: out of memory opening a %zux%zux%zu session",
                     shape.m, shape.n, shape.k);
    free(s);
    return CALHOST_NO_MEMORY;
  }
  /* Pin OpenBLAS's workers to the target's CPU set (the caller is pinned
   * there by the host; the last index may be the calling thread itself).
   * Only for targets of several threads: a one-thread target never wakes
   * them, and a worker still spinning after an earlier multi-threaded call
   * must not be put on the caller's CPU. */
  inst->set_threads((int)s->max_threads);
  if (inst->setaffinity && t->cpus && t->cpu_count > 1 && s->max_threads > 1) {
    cpu_set_t set;
    int n = inst->get_threads();
    CPU_ZERO(&set);
    for (size_t i = 0; i < t->cpu_count; i++)
      if (t->cpus[i] >= 0 && t->cpus[i] < CPU_SETSIZE)
        CPU_SET(t->cpus[i], &set);
    for (int i = 0; i + 1 < n; i++)
      (void)inst->setaffinity(i, sizeof set, &set);
  }
  *out = s;
  return CALHOST_OK;
}

/* The policy of a thread count, out with the serialize_candidate
 * conventions: the one writer of this plugin's policies. */
static calhost_status policy_out(unsigned threads, char *buf, size_t capacity, size_t *length) {
  char text[32];
  snprintf(text, sizeof text, "threads=%u", threads);
  return calhost_copy_out(text, buf, capacity, length);
}

static calhost_status ob_serialize_candidate(calhost_session *s, uint32_t index, char *buf,
                                             size_t capacity, size_t *length) {
  if (!s || index >= s->max_threads)
    return CALHOST_INVALID_ARGUMENT;
  return policy_out(index + 1, buf, capacity, length);
}

/* The untuned default is OpenBLAS's own: every thread of the target. */
static calhost_status ob_default_policy(calhost_session *s, char *buf, size_t capacity,
                                        size_t *length) {
  if (!s)
    return CALHOST_INVALID_ARGUMENT;
  return policy_out(s->max_threads, buf, capacity, length);
}

static calhost_status ob_prepare(calhost_session *s, const char *policy, size_t length) {
  char err[128];
  int threads = 0;
  if (!s)
    return CALHOST_INVALID_ARGUMENT;
  s->threads = 0;
  s->mm.last_iterations = 0;
  if (parse_policy(policy, length, &threads, err, sizeof err) != 0) {
    matmul_set_error(s->mm.host, "openblas policy refused: %s", err);
    return CALHOST_INVALID_ARGUMENT;
  }
  if ((unsigned)threads > s->max_threads) {
    matmul_set_error(s->mm.host, "openblas: threads=%d exceeds the target's %u threads", threads,
                     s->max_threads);
    return CALHOST_INVALID_ARGUMENT;
  }
  s->threads = threads;
  return CALHOST_OK;
}

/* One product of the session's structure: cblas_sgemm with CBLAS's
 * transposes and alpha for each product of the batch (its operands by the
 * contract's mapping); a bias is written (or added, when accumulating)
 * into C first, and the GEMM's beta 1 then adds onto it, as ONNX runtimes
 * run Gemm on a BLAS. */
static calhost_status product(calhost_session *s) {
  const matmul_shape *sh = &s->mm.data.shape;
  const matmul_data *d = &s->mm.data;
  const float beta = sh->accumulate || sh->bias != MATMUL_BIAS_NONE ? 1.0f : 0.0f;
  const size_t mk = sh->m * sh->k, kn = sh->k * sh->n, mn = sh->m * sh->n;
  matmul_bias_apply(d, d->c, sh->accumulate);
  for (size_t p = 0; p < sh->batch; p++)
    s->inst->sgemm(CblasRowMajor, sh->trans_a ? CblasTrans : CblasNoTrans,
                   sh->trans_b ? CblasTrans : CblasNoTrans, (blasint)sh->m, (blasint)sh->n,
                   (blasint)sh->k, sh->alpha, d->a + matmul_a_index(sh, p) * mk,
                   (blasint)(sh->trans_a ? sh->m : sh->k), d->b + matmul_b_index(sh, p) * kn,
                   (blasint)(sh->trans_b ? sh->k : sh->n), beta, d->c + p * mn, (blasint)sh->n);
  return CALHOST_OK;
}

static calhost_status ob_run(calhost_session *s, uint32_t iterations, calhost_run_result *result) {
  if (!s || !s->threads)
    return CALHOST_INVALID_ARGUMENT;
  (void)result;                     /* the host times the call */
  s->inst->set_threads(s->threads); /* explicit on every call: the count is global */
  return matmul_run(s, iterations, product);
}

/* The shared matmul entries, under this plugin's names (plugins/common/matmul.c).
 * OpenBLAS stays loaded after destroy: unloading a library with a live
 * thread pool is not reliably safe, and another instance may use it. */
#define ob_destroy matmul_instance_free
/* Exact key: digest, processor, the target's thread count (the budget the
 * policy divides, capped as target_threads). Portable key: the MatMul
 * structure (matmul_structure_fill). */
#define ob_build_key matmul_key
#define ob_close_session matmul_session_close
#define ob_candidate_count matmul_candidate_count

/* The vtable and the one exported symbol (CALHOST_PLUGIN_DEFINE,
 * calhost/plugin.h): an ABI 1 plugin. Loads nothing (OpenBLAS is opened in
 * create()). */
CALHOST_PLUGIN_DEFINE(ob, 1u, "openblas", "1.0.0+openblas" CALHOST_OPENBLAS_VERSION,
                      matmul_operators,
                      "OpenBLAS cblas_sgemm; calibrates the thread count per shape",
                      .default_policy = ob_default_policy, .check = matmul_session_check);
