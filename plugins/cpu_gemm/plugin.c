/*
 * plugin.c: the cpu_gemm backend's calhost vtable (operator "MatMul",
 * float32, row-major). Thin glue: gemm.c is the algorithm, policy.c the
 * policy language, space.c the candidates as named parameters (ABI 2),
 * matmul.c the workload, inputs and reference check and the entries every
 * MatMul backend shares (candidate_count, check, the run loop).
 */
#include <calhost/plugin.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm.h"
#include "matmul.h"
#include "policy.h"
#include "space.h"

/* One thread per this many multiply-adds is worth its dispatch cost
 * (about 4 MFLOP, some 40 us of work; see README). */
#define CPU_GEMM_WORK_PER_THREAD ((uint64_t)1 << 21)
/* The pool's ceiling (gemm_ctx_create accepts up to 1024). */
#define CPU_GEMM_THREADS_MAX 256

struct calhost_plugin_instance {
  matmul_instance mm; /* first: host, name, the last key's MatMul properties */
  int max_isa;        /* min(this processor, setting "max_isa") */
  calhost_property structure[MATMUL_STRUCTURE_MAX + 1]; /* the last key's: + isa */
};

struct calhost_session {
  matmul_session mm; /* first: data, candidate count, last run */
  unsigned threads;
  int isa; /* the best kernel class this session may run */
  gemm_ctx *ctx;
  gemm_config *candidates;
  gemm_config prepared;
  int has_prepared;
  cpu_gemm_space space; /* the candidates as named parameters, once described */
  int has_space;
  uint32_t default_assignment[CPU_GEMM_SPACE_PARAMS];
};

static int has_word(const char *list, const char *word) {
  size_t wl = strlen(word);
  const char *p = list;
  while (*p) {
    const char *e;
    while (*p == ' ')
      p++;
    e = p;
    while (*e && *e != ' ')
      e++;
    if ((size_t)(e - p) == wl && memcmp(p, word, wl) == 0)
      return 1;
    p = e;
  }
  return 0;
}

/* The ISA class of a target: from its feature list when it has one (keys
 * follow the target's description), else from this processor; capped by
 * the instance's max_isa. */
static int target_isa(const calhost_plugin_instance *inst, const calhost_target *t) {
  int isa;
  if (t && t->features && t->features[0]) {
    if (has_word(t->features, "avx512f"))
      isa = GEMM_ISA_AVX512;
    else if (has_word(t->features, "avx2") && has_word(t->features, "fma"))
      isa = GEMM_ISA_AVX2;
    else
      isa = GEMM_ISA_PORTABLE;
  } else {
    isa = (int)gemm_isa_detect();
  }
  return isa < inst->max_isa ? isa : inst->max_isa;
}

/* Threads worth using: one per CPU_GEMM_WORK_PER_THREAD multiply-adds (of
 * the whole batch), at least 1, at most the target's and
 * CPU_GEMM_THREADS_MAX. */
static unsigned useful_threads(const matmul_shape *s, uint32_t target_threads) {
  uint64_t t = (uint64_t)s->batch * s->m * s->n * s->k / CPU_GEMM_WORK_PER_THREAD;
  if (t < 1)
    t = 1;
  if (t > CPU_GEMM_THREADS_MAX)
    t = CPU_GEMM_THREADS_MAX;
  if (target_threads < 1)
    target_threads = 1;
  return (unsigned)(t < target_threads ? t : target_threads);
}

static calhost_status cg_create(const calhost_host_services *host, const calhost_property *settings,
                                size_t setting_count, calhost_plugin_instance **out) {
  calhost_plugin_instance *inst;
  int max_isa = (int)gemm_isa_detect();
  if (!out || (setting_count && !settings))
    return CALHOST_INVALID_ARGUMENT;
  *out = NULL;
  for (size_t i = 0; i < setting_count; i++) {
    const char *name = settings[i].name, *value = settings[i].value;
    if (name && value && strcmp(name, "max_isa") == 0) {
      int isa = -1;
      for (int c = GEMM_ISA_PORTABLE; c <= GEMM_ISA_AVX512; c++)
        if (strcmp(value, gemm_isa_name((gemm_isa)c)) == 0)
          isa = c;
      if (isa < 0) {
        matmul_set_error(host, "cpu_gemm: max_isa must be portable, avx2 or avx512 (got '%s')",
                         value);
        return CALHOST_INVALID_ARGUMENT;
      }
      if (isa < max_isa)
        max_isa = isa;
    } else {
      matmul_set_error(host, "cpu_gemm: unknown setting '%s' (known: max_isa)",
                       name ? name : "(null)");
      return CALHOST_INVALID_ARGUMENT;
    }
  }
  inst = matmul_instance_new(host, "cpu_gemm", sizeof *inst);
  if (!inst)
    return CALHOST_NO_MEMORY;
  inst->max_isa = max_isa;
  inst->mm.caps = MATMUL_CAN_ALL; /* transposes, alpha, bias, batches: see product() */
  *out = inst;
  return CALHOST_OK;
}

/* Exact key: the workload's digest, the target's processor, and the threads
 * the plugin will really use. Portable key: the MatMul structure
 * (matmul_structure_fill) and the ISA class (a policy names a kernel of one
 * class). */
static calhost_status cg_build_key(calhost_plugin_instance *inst, const calhost_workload *w,
                                   const calhost_target *t, calhost_built_key *out) {
  matmul_shape s;
  calhost_status st;
  st = matmul_build_key(inst, w, t, out, &s);
  if (st != CALHOST_OK)
    return st;
  memcpy(inst->structure, inst->mm.shape.props, inst->mm.shape.count * sizeof *inst->structure);
  inst->structure[inst->mm.shape.count] =
      (calhost_property){"isa", gemm_isa_name((gemm_isa)target_isa(inst, t))};
  out->thread_count = useful_threads(&s, t->thread_count);
  out->structure = inst->structure;
  out->structure_count = inst->mm.shape.count + 1;
  return CALHOST_OK;
}

static calhost_status cg_validate_policy(calhost_plugin_instance *inst, const char *policy,
                                         size_t length, char *err, size_t err_capacity) {
  int max_isa = inst ? inst->max_isa : (int)gemm_isa_detect();
  if (cpu_gemm_policy_parse(policy, length, max_isa, NULL, err, err_capacity) != 0)
    return CALHOST_INVALID_ARGUMENT;
  return CALHOST_OK;
}

static void cg_close_session(calhost_session *s) {
  if (!s)
    return;
  gemm_ctx_destroy(s->ctx);
  free(s->candidates);
  cpu_gemm_space_free(&s->space);
  matmul_session_close(s);
}

static calhost_status cg_open_session(calhost_plugin_instance *inst, const calhost_workload *w,
                                      const calhost_target *t, calhost_session **out) {
  calhost_session *s;
  calhost_status st;
  matmul_shape shape;
  s = matmul_session_alloc(inst, w, t, out, sizeof *s, &shape, &st);
  if (!s)
    return st;
  s->threads = useful_threads(&shape, t->thread_count);
  s->isa = target_isa(inst, t);
  if (s->isa > (int)gemm_isa_detect())
    s->isa = (int)gemm_isa_detect(); /* never run what this processor lacks */
  s->mm.candidates = (uint32_t)cpu_gemm_candidates_batched(s->isa, shape.m, shape.n, shape.k,
                                                           shape.batch, s->threads, NULL, 0);
  s->candidates = malloc(s->mm.candidates * sizeof *s->candidates);
  s->ctx = gemm_ctx_create(s->threads, t->cpus, t->cpu_count);
  if (!s->candidates || !s->ctx || matmul_data_init(&s->mm.data, &shape) != 0) {
    matmul_set_error(inst->mm.host,
                     "cpu_gemm: out of memory (or threads) opening a %zux%zux%zu session", shape.m,
                     shape.n, shape.k);
    cg_close_session(s);
    return CALHOST_NO_MEMORY;
  }
  cpu_gemm_candidates_batched(s->isa, shape.m, shape.n, shape.k, shape.batch, s->threads,
                              s->candidates, s->mm.candidates);
  *out = s;
  return CALHOST_OK;
}

static calhost_status format_out(const gemm_config *cfg, char *buf, size_t capacity,
                                 size_t *length) {
  char text[CPU_GEMM_POLICY_MAX + 1];
  int n = cpu_gemm_policy_format(cfg, text, sizeof text);
  if (n < 0 || (size_t)n >= sizeof text)
    return CALHOST_ERROR;
  return calhost_copy_out(text, buf, capacity, length);
}

static calhost_status cg_serialize_candidate(calhost_session *s, uint32_t index, char *buf,
                                             size_t capacity, size_t *length) {
  if (!s || index >= s->mm.candidates)
    return CALHOST_INVALID_ARGUMENT;
  return format_out(&s->candidates[index], buf, capacity, length);
}

static calhost_status cg_default_policy(calhost_session *s, char *buf, size_t capacity,
                                        size_t *length) {
  gemm_config cfg;
  if (!s)
    return CALHOST_INVALID_ARGUMENT;
  cpu_gemm_policy_default(&cfg);
  return format_out(&cfg, buf, capacity, length);
}

static calhost_status cg_prepare(calhost_session *s, const char *policy, size_t length) {
  char err[160];
  gemm_config cfg;
  const matmul_shape *sh;
  if (!s)
    return CALHOST_INVALID_ARGUMENT;
  sh = &s->mm.data.shape;
  s->has_prepared = 0;
  s->mm.last_iterations = 0;
  if (cpu_gemm_policy_parse(policy, length, s->isa, &cfg, err, sizeof err) != 0) {
    matmul_set_error(s->mm.host, "cpu_gemm policy refused: %s", err);
    return CALHOST_INVALID_ARGUMENT;
  }
  if (gemm_ctx_reserve(s->ctx, &cfg, sh->m, sh->n, sh->k) != 0) {
    matmul_set_error(s->mm.host, "cpu_gemm: out of memory for packing buffers");
    return CALHOST_NO_MEMORY;
  }
  s->prepared = cfg;
  s->has_prepared = 1;
  return CALHOST_OK;
}

/* One product (a whole batch) with the prepared configuration: the
 * transposes, alpha and the batch's operands are gemm_run's; a bias is
 * written (or added, when accumulating) into C first and the product then
 * accumulates onto it. */
static calhost_status product(calhost_session *s) {
  const matmul_shape *sh = &s->mm.data.shape;
  const matmul_data *d = &s->mm.data;
  gemm_problem p = {sh->m,
                    sh->n,
                    sh->k,
                    d->a,
                    sh->trans_a ? sh->m : sh->k,
                    sh->m * sh->k,
                    sh->trans_a,
                    d->b,
                    sh->trans_b ? sh->k : sh->n,
                    sh->k * sh->n,
                    sh->trans_b,
                    d->c,
                    sh->n,
                    sh->m * sh->n,
                    sh->alpha,
                    sh->accumulate || sh->bias != MATMUL_BIAS_NONE,
                    sh->batch,
                    sh->batch_a,
                    sh->batch_b};
  matmul_bias_apply(d, d->c, sh->accumulate);
  if (gemm_run(s->ctx, &s->prepared, &p) != 0) {
    matmul_set_error(s->mm.host, "cpu_gemm: out of memory");
    return CALHOST_NO_MEMORY;
  }
  return CALHOST_OK;
}

static calhost_status cg_run(calhost_session *s, uint32_t iterations, calhost_run_result *result) {
  if (!s || !s->has_prepared)
    return CALHOST_INVALID_ARGUMENT;
  (void)result; /* the host times the call */
  return matmul_run(s, iterations, product);
}

/* ---- the candidates as named parameters (ABI 2) ---- */

/* The session's space, built from its candidate list at the first use;
 * NULL out of memory (the host's message set). */
static const cpu_gemm_space *space_of(calhost_session *s) {
  if (!s->has_space) {
    if (cpu_gemm_space_init(&s->space, s->candidates, s->mm.candidates) != 0) {
      matmul_set_error(s->mm.host, "cpu_gemm: out of memory describing the candidate space");
      return NULL;
    }
    s->has_space = 1;
  }
  return &s->space;
}

/* kernel, mc, nc, kc, split: the candidate list's values; the default
 * (nc=512) is not a point of the space. */
static calhost_status cg_describe_space(calhost_session *s, calhost_parameter_space *out) {
  const cpu_gemm_space *sp;
  if (!s || !out)
    return CALHOST_INVALID_ARGUMENT;
  if (!(sp = space_of(s)))
    return CALHOST_NO_MEMORY;
  gemm_config dflt;
  cpu_gemm_policy_default(&dflt);
  if (cpu_gemm_space_assignment(sp, &dflt, s->default_assignment) != 0)
    out->default_assignment = NULL;
  else
    out->default_assignment = s->default_assignment;
  out->parameters = sp->params;
  out->parameter_count = CPU_GEMM_SPACE_PARAMS;
  return CALHOST_OK;
}

static calhost_status cg_assignment_valid(calhost_session *s, const uint32_t *assignment,
                                          size_t count, char *err, size_t err_capacity) {
  const cpu_gemm_space *sp;
  if (!s)
    return CALHOST_INVALID_ARGUMENT;
  if (!(sp = space_of(s)))
    return CALHOST_NO_MEMORY;
  if (cpu_gemm_space_config(sp, assignment, count, NULL, err, err_capacity) != 0)
    return CALHOST_INVALID_ARGUMENT;
  return CALHOST_OK;
}

static calhost_status cg_serialize_assignment(calhost_session *s, const uint32_t *assignment,
                                              size_t count, char *buf, size_t capacity,
                                              size_t *length) {
  const cpu_gemm_space *sp;
  gemm_config cfg;
  char why[256];
  if (!s)
    return CALHOST_INVALID_ARGUMENT;
  if (!(sp = space_of(s)))
    return CALHOST_NO_MEMORY;
  if (cpu_gemm_space_config(sp, assignment, count, &cfg, why, sizeof why) != 0) {
    matmul_set_error(s->mm.host, "cpu_gemm: %s", why);
    return CALHOST_INVALID_ARGUMENT;
  }
  return format_out(&cfg, buf, capacity, length);
}

static calhost_status cg_policy_assignment(calhost_session *s, const char *policy, size_t length,
                                           uint32_t *assignment, size_t count) {
  const cpu_gemm_space *sp;
  gemm_config cfg;
  char why[256];
  if (!s || !assignment || count != CPU_GEMM_SPACE_PARAMS)
    return CALHOST_INVALID_ARGUMENT;
  if (!(sp = space_of(s)))
    return CALHOST_NO_MEMORY;
  if (cpu_gemm_policy_parse(policy, length, s->isa, &cfg, why, sizeof why) != 0) {
    matmul_set_error(s->mm.host, "cpu_gemm policy refused: %s", why);
    return CALHOST_INVALID_ARGUMENT;
  }
  if (cpu_gemm_space_assignment(sp, &cfg, assignment) != 0)
    return CALHOST_INVALID_ARGUMENT; /* valid, but not one of this shape's candidates */
  return CALHOST_OK;
}

/* The shared matmul entries, under this plugin's names (plugins/common/matmul.c). */
#define cg_destroy matmul_instance_free
#define cg_candidate_count matmul_candidate_count

/* The vtable and the one exported symbol, calhost_plugin_negotiate (see
 * CALHOST_PLUGIN_DEFINE in calhost/plugin.h). ABI 2 is the ABI this file
 * implements, not the header's newest. Implementation 1.1: memory-broadcast
 * kernels, dynamic slabs. */
CALHOST_PLUGIN_DEFINE(cg, 2u, "cpu_gemm", "1.1.0", matmul_operators,
                      "blocked SGEMM (packing, MRxNR vector micro-kernels, pthreads) with "
                      "tunable tiles",
                      .default_policy = cg_default_policy, .check = matmul_session_check,
                      CALHOST_PLUGIN_SPACE_ENTRIES(cg));
