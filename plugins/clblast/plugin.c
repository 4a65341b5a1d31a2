/*
 * plugin.c: the clblast backend: CLBlast's SGEMM (CLBlastSgemm, row-major
 * "MatMul" float32) on an OpenCL device. The default policy "database" is
 * CLBlast's own tuned parameters for the device (read once per device with
 * retrieve.cpp, before any override, and restored for this policy); the
 * other candidates are Xgemm parameter sets
 * "xgemm:GEMMK=0;KREG=1;KWG=32;...;VWN=2" (',' before issue 42, still read)
 * applied with
 * CLBlastOverrideParameters, with CLBlast's indirect GEMM forced for them
 * (GemmRoutine XGEMM_MIN_INDIRECT_SIZE=0, otherwise small shapes take the
 * direct kernel and Xgemm's parameters would not matter).
 *
 * Devices, targets and session memory as in opencl_gemm (shares
 * ../common/opencl/ocl_device.c): OpenCL is touched lazily, never in create()
 * or validate_policy(). prepare() runs the routine once so CLBlast compiles
 * its kernels there, not in the timed runs. run() is timed by the host (a
 * CLBlast call may enqueue several kernels; its one event covers the last).
 */
#include <calhost/plugin.h>

#include <clblast_c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device_timing.h"
#include "matmul.h"
#include "ocl_device.h"
#include "policy_text.h"
#include "retrieve.h"

#define BACKEND "clblast"
#ifndef CALHOST_CLBLAST_VERSION
#define CALHOST_CLBLAST_VERSION "unknown"
#endif

/* Xgemm's parameters (xgemm_params.def): the enum P_NAME, and each one's
 * name and allowed values. */
enum {
#define CLB_PARAM(name, ...) P_##name,
#include "xgemm_params.def"
#undef CLB_PARAM
  P_COUNT
};
#define CLB_VALUES_MAX 4 /* the longest list (the compiler warns of a longer one) */
static const struct {
  const char *name;
  size_t count;
  size_t v[CLB_VALUES_MAX];
} params[P_COUNT] = {
#define CLB_PARAM(name, ...)                                                                       \
  {#name, sizeof((const size_t[]){__VA_ARGS__}) / sizeof(size_t), {__VA_ARGS__}},
#include "xgemm_params.def"
#undef CLB_PARAM
};

typedef struct xset {
  size_t v[P_COUNT];
} xset;

/* The curated Xgemm sets (curated.def). */
static const xset curated[] = {
#define CLB_CURATED(...) {{__VA_ARGS__}},
#include "curated.def"
#undef CLB_CURATED
};
#define CURATED_COUNT (sizeof curated / sizeof curated[0])

/* CLBlast's multiple-of constraints (its tuner's, for GEMMK=0): parameter
 * `of` is a multiple of `by` times `times` (of `by` alone when times < 0). */
static const struct {
  int of, by, times;
} multiples[] = {{P_KWG, P_KWI, -1},
                 {P_MWG, P_MDIMC, P_VWM},
                 {P_NWG, P_NDIMC, P_VWN},
                 {P_MWG, P_MDIMA, P_VWM},
                 {P_NWG, P_NDIMB, P_VWN}};

/* CLBlast's Xgemm constraints: the multiples above, then the work-group's
 * loads of A and B dividing KWG. */
static int xset_valid(const xset *x, char *err, size_t cap) {
  const size_t *v = x->v;
  for (size_t i = 0; i < sizeof multiples / sizeof multiples[0]; i++) {
    int of = multiples[i].of, by = multiples[i].by, times = multiples[i].times;
    size_t d = v[by] * (times < 0 ? 1 : v[times]);
    if (v[of] % d)
      return matmul_fail(err, cap, "%s=%zu is not a multiple of %s%s%s=%zu", params[of].name, v[of],
                         params[by].name, times < 0 ? "" : "*", times < 0 ? "" : params[times].name,
                         d);
  }
  size_t wg = v[P_MDIMC] * v[P_NDIMC];
  if (wg % v[P_MDIMA] || v[P_KWG] % (wg / v[P_MDIMA]))
    return matmul_fail(err, cap, "KWG=%zu is not a multiple of MDIMC*NDIMC/MDIMA", v[P_KWG]);
  if (wg % v[P_NDIMB] || v[P_KWG] % (wg / v[P_NDIMB]))
    return matmul_fail(err, cap, "KWG=%zu is not a multiple of MDIMC*NDIMC/NDIMB", v[P_KWG]);
  return 0;
}

static int xset_fits(const xset *x, const ocl_device *d, char *err, size_t cap) {
  const size_t *v = x->v;
  size_t wg = v[P_MDIMC] * v[P_NDIMC];
  unsigned long long lmem = 4ull * v[P_KWG] * (v[P_SA] * v[P_MWG] + v[P_SB] * v[P_NWG]);
  if (wg > d->max_work_group || (d->max_item[0] && v[P_MDIMC] > d->max_item[0]) ||
      (d->max_item[1] && v[P_NDIMC] > d->max_item[1]))
    return matmul_fail(err, cap, "work-group %zux%zu exceeds the device's limits", v[P_MDIMC],
                       v[P_NDIMC]);
  if (lmem > d->local_mem)
    return matmul_fail(err, cap, "local memory %llu bytes exceeds the device's %llu", lmem,
                       (unsigned long long)d->local_mem);
  return 0;
}

/* The parameters' names, in the policy's order (policy_text_split). */
static const char *const param_names[P_COUNT] = {
#define CLB_PARAM(name, ...) #name,
#include "xgemm_params.def"
#undef CLB_PARAM
};

/* Parses "database" (*is_db = 1) or "xgemm:NAME=V;..." (or the earlier
 * stored "xgemm:NAME=V,...": policy_text.h) with the sixteen names in
 * order. 0 or -1 with a reason. */
static int parse_policy(const char *p, size_t len, int *is_db, xset *x, char *err, size_t cap) {
  static const char prefix[] = "xgemm:";
  size_t pos = sizeof prefix - 1;
  policy_value v[P_COUNT];
  if (matmul_policy_text(p, len, 256, err, cap) != 0)
    return -1;
  *is_db = 0;
  if (len == 8 && memcmp(p, "database", 8) == 0) {
    *is_db = 1;
    return 0;
  }
  if (len < pos || memcmp(p, prefix, pos) != 0)
    return matmul_fail(err, cap, "expected 'database' or 'xgemm:GEMMK=...'");
  if (policy_text_split(p, len, pos, param_names, P_COUNT, v, err, cap) != 0)
    return -1;
  for (int k = 0; k < P_COUNT; k++) {
    uint64_t val = 0;
    size_t i;
    if (policy_text_number(&v[k], 9999, &val) != 0)
      return matmul_fail(err, cap, "%s: not a decimal number", params[k].name);
    for (i = 0; i < params[k].count; i++)
      if (params[k].v[i] == val)
        break;
    if (i == params[k].count)
      return matmul_fail(err, cap, "%s=%zu is not an allowed value", params[k].name, (size_t)val);
    x->v[k] = (size_t)val;
  }
  return xset_valid(x, err, cap);
}

/* The policy of a parameter set, or "database" for NULL, out with the
 * serialize_candidate conventions: the one writer of this plugin's policies. */
static calhost_status policy_out(const xset *x, char *buf, size_t capacity, size_t *length) {
  char text[256];
  size_t n;
  if (!x)
    return calhost_copy_out("database", buf, capacity, length);
  n = (size_t)snprintf(text, sizeof text, "xgemm:");
  for (int k = 0; k < P_COUNT; k++)
    policy_text_put(text, sizeof text, &n, k, params[k].name, x->v[k]);
  return calhost_copy_out(text, buf, capacity, length);
}

typedef struct device_db {
  int have;
  clb_params xgemm, routine; /* CLBlast's database values, before any override */
} device_db;

struct calhost_plugin_instance {
  ocl_instance ocl; /* first: host, devices, key storage */
  device_db *dbs;   /* one per device, allocated by the first session */
  char processor[768];
};

struct calhost_session {
  /* first: data, device, buffers (not padded); the candidates are
   * "database", then cands */
  ocl_session ocl;
  device_db *db;
  xset *cands;
  int prepared;
  size_t *offsets; /* a batch's: A's, B's and C's offset of each product (3 x batch) */
  float *scalars;  /* a batch's: alpha, then the GEMM's beta, of each product (2 x batch) */
};

static calhost_status cb_create(const calhost_host_services *host, const calhost_property *settings,
                                size_t setting_count, calhost_plugin_instance **out) {
  calhost_status st =
      ocl_instance_create(host, BACKEND, settings, setting_count, out, sizeof **out);
  if (st == CALHOST_OK) /* CLBlast's transposes, alpha and batched GEMM; a bias before it */
    (*out)->ocl.mm.caps = MATMUL_CAN_ALL;
  return st;
}

static void cb_destroy(calhost_plugin_instance *inst) {
  if (!inst)
    return;
  free(inst->dbs);
  ocl_devices_free(&inst->ocl.devs);
  free(inst);
}

/* Exact key: as opencl_gemm's (ocl_instance_build_key), with CLBlast's
 * version after the device identity (its database and kernels change with
 * it). */
static calhost_status cb_build_key(calhost_plugin_instance *inst, const calhost_workload *w,
                                   const calhost_target *t, calhost_built_key *out) {
  calhost_status st = ocl_instance_build_key(inst, w, t, out);
  if (st != CALHOST_OK)
    return st;
  snprintf(inst->processor, sizeof inst->processor, "%s/clblast %s", out->processor,
           CALHOST_CLBLAST_VERSION);
  out->processor = inst->processor;
  return CALHOST_OK;
}

static calhost_status cb_validate_policy(calhost_plugin_instance *inst, const char *policy,
                                         size_t length, char *err, size_t err_capacity) {
  xset x;
  int db;
  (void)inst;
  return parse_policy(policy, length, &db, &x, err, err_capacity) == 0 ? CALHOST_OK
                                                                       : CALHOST_INVALID_ARGUMENT;
}

static void cb_close_session(calhost_session *s) {
  if (!s)
    return;
  ocl_session_release(&s->ocl);
  free(s->cands);
  free(s->offsets);
  free(s->scalars);
  matmul_session_close(s);
}

static calhost_status cb_open_session(calhost_plugin_instance *inst, const calhost_workload *w,
                                      const calhost_target *t, calhost_session **out) {
  calhost_session *s;
  calhost_status st;
  matmul_shape sh;
  ocl_device *dev;
  s = ocl_session_alloc(inst, w, t, out, sizeof *s, &sh, &st);
  if (!s)
    return st;
  dev = s->ocl.dev;
  if (!inst->dbs)
    inst->dbs = calloc(inst->ocl.devs.count, sizeof *inst->dbs);
  if (!inst->dbs) {
    free(s);
    return CALHOST_NO_MEMORY;
  }
  s->db = &inst->dbs[dev - inst->ocl.devs.items];
  if (!s->db->have) {
    if (clb_retrieve(dev->id, "Xgemm", &s->db->xgemm) != 0 ||
        clb_retrieve(dev->id, "GemmRoutine", &s->db->routine) != 0) {
      matmul_set_error(inst->ocl.mm.host, BACKEND ": cannot read CLBlast's parameters for '%s'",
                       dev->name);
      free(s);
      return CALHOST_UNSUPPORTED;
    }
    s->db->have = 1;
  }
  s->cands = malloc(CURATED_COUNT * sizeof *s->cands);
  if (!s->cands || ocl_session_data(&s->ocl, &sh, sh.m, sh.n, sh.k, 1, BACKEND) != CALHOST_OK) {
    cb_close_session(s);
    return CALHOST_NO_MEMORY;
  }
  if (sh.batch > 1) { /* GemmBatched's per-product offsets and scalars */
    const float beta = sh.accumulate || sh.bias != MATMUL_BIAS_NONE ? 1.0f : 0.0f;
    s->offsets = malloc(3 * sh.batch * sizeof *s->offsets);
    s->scalars = malloc(2 * sh.batch * sizeof *s->scalars);
    if (!s->offsets || !s->scalars) {
      cb_close_session(s);
      return CALHOST_NO_MEMORY;
    }
    for (size_t p = 0; p < sh.batch; p++) {
      s->offsets[p] = matmul_a_index(&sh, p) * sh.m * sh.k;
      s->offsets[sh.batch + p] = matmul_b_index(&sh, p) * sh.k * sh.n;
      s->offsets[2 * sh.batch + p] = p * sh.m * sh.n;
      s->scalars[p] = sh.alpha;
      s->scalars[sh.batch + p] = beta;
    }
  }
  for (size_t i = 0; i < CURATED_COUNT; i++)
    if (xset_valid(&curated[i], NULL, 0) == 0 && xset_fits(&curated[i], dev, NULL, 0) == 0)
      s->cands[s->ocl.mm.candidates++] = curated[i];
  s->ocl.mm.candidates++; /* "database" */
  *out = s;
  return CALHOST_OK;
}

static calhost_status cb_serialize_candidate(calhost_session *s, uint32_t index, char *buf,
                                             size_t capacity, size_t *length) {
  if (!s || index >= s->ocl.mm.candidates)
    return CALHOST_INVALID_ARGUMENT;
  return policy_out(index ? &s->cands[index - 1] : NULL, buf, capacity, length);
}

static calhost_status cb_default_policy(calhost_session *s, char *buf, size_t capacity,
                                        size_t *length) {
  if (!s)
    return CALHOST_INVALID_ARGUMENT;
  return policy_out(NULL, buf, capacity, length);
}

/* Overrides `kernel` on the session's device with names/values. */
static int override(calhost_session *s, const char *kernel, const clb_params *p) {
  const char *names[CLB_PARAMS_MAX];
  for (size_t i = 0; i < p->count; i++)
    names[i] = p->names[i];
  CLBlastStatusCode st = CLBlastOverrideParameters(s->ocl.dev->id, kernel, CLBlastPrecisionSingle,
                                                   p->count, names, p->values);
  if (st != CLBlastSuccess) {
    matmul_set_error(s->ocl.mm.host, BACKEND ": CLBlastOverrideParameters(%s): status %d", kernel,
                     (int)st);
    return -1;
  }
  return 0;
}

/* One product of the session's structure on its buffers: the bias first
 * (copied into C, or added to it with CLBlastSaxpy when accumulating; the
 * expanded beta*bias of ocl_session_data), then CLBlastSgemm with the
 * transposes and alpha (beta 1 onto the bias or the accumulated C, else 0),
 * or for a batch CLBlastSgemmBatched with each product's offsets (the
 * contract's operand mapping, which a single stride cannot express when
 * batch_a or batch_b differs from batch and from 1). */
static int sgemm(calhost_session *s, cl_event *event) {
  const matmul_shape *sh = &s->ocl.mm.data.shape;
  const ocl_matmul_buffers *b = &s->ocl.buf;
  const CLBlastTranspose ta = sh->trans_a ? CLBlastTransposeYes : CLBlastTransposeNo;
  const CLBlastTranspose tb = sh->trans_b ? CLBlastTransposeYes : CLBlastTransposeNo;
  const size_t lda = sh->trans_a ? sh->m : sh->k, ldb = sh->trans_b ? sh->k : sh->n;
  const size_t cs = matmul_c_size(sh);
  CLBlastStatusCode st;
  if (b->bias) {
    if (sh->accumulate) {
      st = CLBlastSaxpy(cs, 1.0f, b->bias, 0, 1, b->c, 0, 1, &s->ocl.dev->queue, NULL);
      if (st != CLBlastSuccess) {
        matmul_set_error(s->ocl.mm.host, BACKEND ": CLBlastSaxpy: status %d", (int)st);
        return -1;
      }
    } else {
      cl_int e = clEnqueueCopyBuffer(s->ocl.dev->queue, b->bias, b->c, 0, 0, cs * sizeof(float), 0,
                                     NULL, NULL);
      if (e != CL_SUCCESS) {
        matmul_set_error(s->ocl.mm.host, BACKEND ": copying the bias: %s", ocl_error_name(e));
        return -1;
      }
    }
  }
  if (sh->batch > 1)
    st = CLBlastSgemmBatched(CLBlastLayoutRowMajor, ta, tb, sh->m, sh->n, sh->k, s->scalars, b->a,
                             s->offsets, lda, b->b, s->offsets + sh->batch, ldb,
                             s->scalars + sh->batch, b->c, s->offsets + 2 * sh->batch, sh->n,
                             sh->batch, &s->ocl.dev->queue, event);
  else
    st = CLBlastSgemm(CLBlastLayoutRowMajor, ta, tb, sh->m, sh->n, sh->k, sh->alpha, b->a, 0, lda,
                      b->b, 0, ldb, sh->accumulate || b->bias ? 1.0f : 0.0f, b->c, 0, sh->n,
                      &s->ocl.dev->queue, event);
  if (st != CLBlastSuccess) {
    matmul_set_error(s->ocl.mm.host, BACKEND ": CLBlastSgemm%s: status %d",
                     sh->batch > 1 ? "Batched" : "", (int)st);
    return -1;
  }
  return 0;
}

static calhost_status cb_prepare(calhost_session *s, const char *policy, size_t length) {
  char err[256];
  xset x;
  int db;
  clb_params p;
  if (!s)
    return CALHOST_INVALID_ARGUMENT;
  s->prepared = 0;
  s->ocl.mm.last_iterations = 0;
  if (parse_policy(policy, length, &db, &x, err, sizeof err) != 0) {
    matmul_set_error(s->ocl.mm.host, BACKEND " policy refused: %s", err);
    return CALHOST_INVALID_ARGUMENT;
  }
  if (db) {
    if (override(s, "Xgemm", &s->db->xgemm) || override(s, "GemmRoutine", &s->db->routine))
      return CALHOST_ERROR;
  } else {
    if (xset_fits(&x, s->ocl.dev, err, sizeof err) != 0) {
      matmul_set_error(s->ocl.mm.host, BACKEND ": does not fit device '%s': %s", s->ocl.dev->name,
                       err);
      return CALHOST_UNSUPPORTED;
    }
    p.count = P_COUNT;
    for (int k = 0; k < P_COUNT; k++) {
      snprintf(p.names[k], sizeof p.names[k], "%s", params[k].name);
      p.values[k] = x.v[k];
    }
    if (override(s, "Xgemm", &p))
      return CALHOST_ERROR;
    p = s->db->routine;
    for (size_t i = 0; i < p.count; i++)
      if (strcmp(p.names[i], "XGEMM_MIN_INDIRECT_SIZE") == 0)
        p.values[i] = 0;
    if (override(s, "GemmRoutine", &p))
      return CALHOST_ERROR;
  }
  /* CLBlast compiles on the first call with new parameters: do it here. */
  if (sgemm(s, NULL) != 0)
    return CALHOST_ERROR;
  clFinish(s->ocl.dev->queue);
  s->prepared = 1;
  return CALHOST_OK;
}

/* The device loop's callbacks (device_timing.h): C reset, batches of 64
 * SGEMM calls, each waited for; untimed (the host times the call). */
static int cb_start(void *ctx, uint32_t iterations) {
  (void)iterations;
  return ocl_session_reset(&((calhost_session *)ctx)->ocl);
}

static uint32_t cb_batch_size(void *ctx, uint32_t remaining) {
  (void)ctx;
  return remaining < 64 ? remaining : 64;
}

#define CB_SGEMM_FAILED 1 /* sgemm failed (its message set): not an OpenCL code */

static int cb_batch(void *ctx, uint32_t count, double *seconds, int *timed) {
  calhost_session *s = ctx;
  (void)seconds;
  *timed = 0;
  for (uint32_t i = 0; i < count; i++)
    if (sgemm(s, NULL) != 0)
      return CB_SGEMM_FAILED;
  return clFinish(s->ocl.dev->queue);
}

static const device_timing_ops cb_timing = {cb_start, cb_batch_size, cb_batch};

static calhost_status cb_run(calhost_session *s, uint32_t iterations, calhost_run_result *result) {
  double device = 0;
  int timed = 0, e = 0;
  (void)result; /* the host times the call */
  if (!s || !s->prepared)
    return CALHOST_INVALID_ARGUMENT;
  s->ocl.mm.last_iterations = 0;
  switch (device_timing_run(&cb_timing, s, s->ocl.mm.host, iterations, &device, &timed, &e)) {
  case DEVICE_TIMING_START_FAILED:
    matmul_set_error(s->ocl.mm.host, BACKEND ": resetting C failed");
    return CALHOST_ERROR;
  case DEVICE_TIMING_BATCH_FAILED:
    if (e != CB_SGEMM_FAILED)
      matmul_set_error(s->ocl.mm.host, BACKEND ": clFinish failed");
    return CALHOST_ERROR;
  case DEVICE_TIMING_CANCELLED:
    return CALHOST_CANCELLED;
  default:
    break;
  }
  s->ocl.mm.last_iterations = iterations;
  return CALHOST_OK;
}

static const int64_t sample_shape[] = {64, 64, 64}, sample_odd[] = {100, 72, 40};
static const calhost_workload sample_w1 = MATMUL_SAMPLE("matmul_64", sample_shape, NULL, 0);
static const calhost_workload sample_w2 = MATMUL_SAMPLE("matmul_100x72x40", sample_odd, NULL, 0);
static const calhost_workload *const cb_samples[] = {&sample_w1, &sample_w2, NULL};

/* The shared matmul entry, under this plugin's name (plugins/common/matmul.c). */
#define cb_candidate_count matmul_candidate_count

/* The vtable and the one exported symbol (CALHOST_PLUGIN_DEFINE,
 * calhost/plugin.h), which touches neither OpenCL nor CLBlast. */
CALHOST_PLUGIN_DEFINE(cb, 2u, BACKEND, "1.0.0+clblast" CALHOST_CLBLAST_VERSION, matmul_operators,
                      "CLBlast SGEMM; its tuned database against Xgemm parameter sets, per device",
                      .default_policy = cb_default_policy, .check = ocl_session_check,
                      .device_count = ocl_instance_device_count,
                      .list_device = ocl_instance_list_device, .sample_workloads = cb_samples);
