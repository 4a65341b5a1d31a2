/*
 * plugin.c: the cuda_gemm backend: MatMul (float32 on the SIMT cores,
 * float16/bfloat16 on the tensor cores with fp32 accumulation; C fp32,
 * row-major) with this project's tunable kernel (kernels.cu, parameters in
 * cgemm.c), compiled at run time by NVRTC, one module per distinct
 * compile-time configuration, cached per device for the instance's
 * lifetime; timed with CUDA events (device_seconds); checked against the
 * on-device double-precision reference (cu_driver.c).
 *
 * ABI 2: lists NVIDIA devices through the driver API (dlopen'ed: without a
 * driver the plugin loads and lists none), describes its nine-parameter
 * space with a validity rule that knows the device's limits, declares
 * sample workloads.
 */
#include <calhost/plugin.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgemm.h"
#include "cu_driver.h"
#include "cu_nvrtc.h"

#define BACKEND "cuda_gemm"

typedef struct module_entry {
  const cu_device *dev;
  char defines[160];
  CUmodule module;
  double compile_seconds;
  int registers;
} module_entry;

struct calhost_plugin_instance {
  cu_instance cu;               /* first */
  pthread_mutex_t modules_lock; /* sessions of one instance may prepare on several threads */
  module_entry *modules;
  size_t module_count;
  calhost_parameter params[CG_COUNT];
};

struct calhost_session {
  cu_session cu; /* first */
  calhost_plugin_instance *inst;
  cgemm_config *cands;
  uint32_t default_assignment[CG_COUNT];
  /* prepared candidate */
  int prepared;
  cgemm_config config;
  CUfunction gemm, reduce;
  CUevent start, stop;
};

/* The identity's library part (the NVRTC version that compiles the
 * kernels: a new one may make other code of the same policy) and the
 * "libraries" detail (dlopen only: no cuInit). */
static void cg_versions(char *libs, size_t libs_cap, char *found, size_t found_cap) {
  const cu_nvrtc *nv = cu_nvrtc_load(NULL, 0);
  int v = cu_nvrtc_version(nv);
  snprintf(libs, libs_cap, "nvrtc %d.%d", v / 1000, (v % 1000) / 10);
  cu_nvrtc_describe(found, found_cap);
}

static CUresult launch(cu_session *cs, uint32_t set, void *unused);

static calhost_status cg_create(const calhost_host_services *host, const calhost_property *settings,
                                size_t setting_count, calhost_plugin_instance **out) {
  calhost_status st = cu_instance_create(host, BACKEND, settings, setting_count, out, sizeof **out);
  if (st == CALHOST_OK) {
    pthread_mutex_init(&(*out)->modules_lock, NULL);
    (*out)->cu.devs.versions = cg_versions;
  }
  for (int k = 0; st == CALHOST_OK && k < CG_COUNT; k++)
    (*out)->params[k] = (calhost_parameter){cgemm_params[k].name, cgemm_params[k].texts,
                                            cgemm_params[k].count, CALHOST_PARAMETER_ORDERED};
  return st;
}

static void cg_destroy(calhost_plugin_instance *inst) {
  if (!inst)
    return;
  const cu_api *api = inst->cu.devs.api;
  for (size_t i = 0; api && i < inst->module_count; i++)
    if (api->cuCtxSetCurrent(inst->modules[i].dev->ctx) == CUDA_SUCCESS)
      api->cuModuleUnload(inst->modules[i].module);
  free(inst->modules);
  pthread_mutex_destroy(&inst->modules_lock);
  cu_instance_destroy(inst);
}

static calhost_status cg_validate_policy(calhost_plugin_instance *inst, const char *policy,
                                         size_t length, char *err, size_t cap) {
  cgemm_config c;
  (void)inst;
  /* the dtype is not known here: a policy valid for one of them passes */
  if (cgemm_parse_any(policy, length, &c, err, cap) != 0)
    return CALHOST_INVALID_ARGUMENT;
  if (cgemm_valid(&c, CG_F32, NULL, 0) == 0 || cgemm_valid(&c, CG_BF16, NULL, 0) == 0)
    return CALHOST_OK;
  cgemm_valid(&c, CG_F32, err, cap);
  return CALHOST_INVALID_ARGUMENT;
}

static void cg_close_session(calhost_session *s) {
  if (!s)
    return;
  const cu_api *api = s->inst->cu.devs.api;
  if (api && api->cuCtxSetCurrent(s->cu.dev->ctx) == CUDA_SUCCESS) {
    if (s->start)
      api->cuEventDestroy(s->start);
    if (s->stop)
      api->cuEventDestroy(s->stop);
  }
  cu_session_release(&s->cu);
  free(s->cands);
  free(s);
}

/* The curated candidates that fit s's device and workload, into s->cands
 * (at least cgemm_curated_count entries), their count in
 * s->cu.mm.candidates. Needs only the dtype, K and the device's limits. */
static void cg_fill_candidates(calhost_session *s) {
  s->cu.mm.candidates = 0;
  for (uint32_t i = 0; i < cgemm_curated_count; i++)
    if (cgemm_fits(&cgemm_curated[i], s->cu.shape.dtype, &s->cu.dev->limits, s->cu.shape.k, NULL,
                   0) == 0)
      s->cands[s->cu.mm.candidates++] = cgemm_curated[i];
}

static calhost_status cg_open_session(calhost_plugin_instance *inst, const calhost_workload *w,
                                      const calhost_target *t, calhost_session **out) {
  calhost_status st;
  calhost_session *s;
  cu_shape shape;
  if (!out)
    return CALHOST_INVALID_ARGUMENT;
  *out = NULL;
  if (inst && w && cu_parse_workload(NULL, BACKEND, inst->cu.mm.caps, w, &shape) == CALHOST_OK &&
      shape.dtype != CG_F32) { /* the tensor-core kernels include mma.h (WMMA) */
    char why[256];
    const cu_nvrtc *nv = cu_nvrtc_load(why, sizeof why);
    const char *missing = nv ? cu_headers_missing(cu_nvrtc_headers(nv), (int)shape.dtype, 1) : NULL;
    if (missing) {
      matmul_set_error(inst->cu.mm.host, BACKEND ": %s", missing);
      return CALHOST_UNSUPPORTED;
    }
  }
  s = cu_session_open(inst, w, t, sizeof *s, CGEMM_PAD_MN, CGEMM_PAD_K, &st);
  if (!s)
    return st;
  s->inst = inst;
  const cu_api *api = inst->cu.devs.api;
  const cgemm_limits *lim = &s->cu.dev->limits;
  cgemm_dtype dt = s->cu.shape.dtype;
  if (api->cuEventCreate(&s->start, CU_EVENT_DEFAULT) != CUDA_SUCCESS ||
      api->cuEventCreate(&s->stop, CU_EVENT_DEFAULT) != CUDA_SUCCESS ||
      !(s->cands = malloc(cgemm_curated_count * sizeof *s->cands))) {
    matmul_set_error(inst->cu.mm.host, BACKEND ": out of memory opening a session");
    cg_close_session(s);
    return CALHOST_NO_MEMORY;
  }
  cg_fill_candidates(s);
  cgemm_config def = cgemm_default(dt);
  if (s->cu.mm.candidates == 0 || cgemm_fits(&def, dt, lim, s->cu.shape.k, NULL, 0) != 0) {
    char why[200] = "";
    cgemm_fits(&def, dt, lim, s->cu.shape.k, why, sizeof why);
    matmul_set_error(inst->cu.mm.host, BACKEND ": no configuration fits device '%s': %s",
                     s->cu.dev->name, why);
    cg_close_session(s);
    return CALHOST_UNSUPPORTED;
  }
  for (int k = 0; k < CG_COUNT; k++)
    for (uint32_t i = 0; i < cgemm_params[k].count; i++)
      if (cgemm_params[k].values[i] == def.v[k])
        s->default_assignment[k] = i;
  *out = s;
  return CALHOST_OK;
}

static calhost_status policy_out(const cgemm_config *c, char *buf, size_t capacity,
                                 size_t *length) {
  char text[128];
  cgemm_format(c, text, sizeof text);
  return calhost_copy_out(text, buf, capacity, length);
}

static calhost_status cg_serialize_candidate(calhost_session *s, uint32_t index, char *buf,
                                             size_t capacity, size_t *length) {
  if (!s || index >= s->cu.mm.candidates)
    return CALHOST_INVALID_ARGUMENT;
  return policy_out(&s->cands[index], buf, capacity, length);
}

static calhost_status cg_default_policy(calhost_session *s, char *buf, size_t capacity,
                                        size_t *length) {
  if (!s)
    return CALHOST_INVALID_ARGUMENT;
  cgemm_config def = cgemm_default(s->cu.shape.dtype);
  return policy_out(&def, buf, capacity, length);
}

/* Adds a module to the instance's cache under its lock: 0, or -1 when out
 * of memory. When another thread cached the same defines meanwhile, *mod
 * becomes that one and the caller's is unloaded here (same code). */
static int cg_cache_module(calhost_plugin_instance *inst, const cu_device *dev, const char *defines,
                           CUmodule *mod, double seconds, int registers) {
  int rc = 0;
  pthread_mutex_lock(&inst->modules_lock);
  for (size_t i = 0; i < inst->module_count; i++)
    if (inst->modules[i].dev == dev && strcmp(inst->modules[i].defines, defines) == 0) {
      if (inst->cu.devs.api && *mod)
        inst->cu.devs.api->cuModuleUnload(*mod);
      *mod = inst->modules[i].module;
      pthread_mutex_unlock(&inst->modules_lock);
      return 0;
    }
  module_entry *grown = realloc(inst->modules, (inst->module_count + 1) * sizeof *grown);
  if (!grown) {
    rc = -1;
  } else {
    inst->modules = grown;
    module_entry *m = &inst->modules[inst->module_count++];
    m->dev = dev;
    snprintf(m->defines, sizeof m->defines, "%s", defines);
    m->module = *mod;
    m->compile_seconds = seconds;
    m->registers = registers;
  }
  pthread_mutex_unlock(&inst->modules_lock);
  return rc;
}

/* The module of c on s's device: from the instance's cache, or compiled
 * with NVRTC for the device's architecture and loaded now. */
static CUmodule module_for(calhost_session *s, const cgemm_config *c) {
  calhost_plugin_instance *inst = s->inst;
  const calhost_host_services *host = inst->cu.mm.host;
  const cu_api *api = inst->cu.devs.api;
  char defines[160], arch[16], why[256];
  const cu_nvrtc *nv;
  cu_nvrtc_result res;
  CUmodule mod = NULL;
  CUresult e;
  cgemm_defines(c, s->cu.shape.dtype, defines, sizeof defines);
  pthread_mutex_lock(&inst->modules_lock);
  for (size_t i = 0; i < inst->module_count; i++)
    if (inst->modules[i].dev == s->cu.dev && strcmp(inst->modules[i].defines, defines) == 0) {
      mod = inst->modules[i].module;
      pthread_mutex_unlock(&inst->modules_lock);
      return mod;
    }
  pthread_mutex_unlock(&inst->modules_lock);
  nv = cu_nvrtc_load(why, sizeof why);
  if (!nv) {
    matmul_set_error(host, BACKEND ": %s", why);
    return NULL;
  }
  snprintf(arch, sizeof arch, "sm_%d%d", s->cu.dev->limits.cc_major, s->cu.dev->limits.cc_minor);
  if (cu_nvrtc_compile(nv, cgemm_source, defines, arch, "gemm", &res) != 0) {
    matmul_set_error(host, BACKEND ": NVRTC %s for %s: %s", defines, arch, res.log);
    return NULL;
  }
  e = api->cuModuleLoadData(&mod, res.cubin);
  free(res.cubin);
  if (e != CUDA_SUCCESS) {
    matmul_set_error(host, BACKEND ": loading %s: %s", defines, cu_error_name(api, e));
    cu_end_if_sticky(api, host, BACKEND, "cuModuleLoadData", e);
    return NULL;
  }
  if (cg_cache_module(inst, s->cu.dev, defines, &mod, res.seconds, res.registers) != 0) {
    api->cuModuleUnload(mod);
    matmul_set_error(host, BACKEND ": out of memory caching a module");
    return NULL;
  }
  if (host && host->log) {
    char msg[300];
    snprintf(msg, sizeof msg, BACKEND ": compiled %s for %s in %.2f s (%d registers)", defines,
             arch, res.seconds, res.registers);
    host->log(host->context, CALHOST_LOG_DEBUG, msg);
  }
  return mod;
}

static calhost_status cg_prepare(calhost_session *s, const char *policy, size_t length) {
  char err[256];
  cgemm_config c;
  const cu_api *api;
  CUmodule mod;
  CUresult e;
  if (!s)
    return CALHOST_INVALID_ARGUMENT;
  api = s->inst->cu.devs.api;
  s->prepared = 0;
  s->cu.mm.last_iterations = 0;
  if (cgemm_parse(policy, length, s->cu.shape.dtype, &c, err, sizeof err) != 0) {
    matmul_set_error(s->cu.mm.host, BACKEND " policy refused: %s", err);
    return CALHOST_INVALID_ARGUMENT;
  }
  if (cgemm_fits(&c, s->cu.shape.dtype, &s->cu.dev->limits, s->cu.shape.k, err, sizeof err) != 0) {
    matmul_set_error(s->cu.mm.host, BACKEND ": does not fit device '%s': %s", s->cu.dev->name, err);
    return CALHOST_UNSUPPORTED;
  }
  if (cu_make_current(api, s->cu.mm.host, BACKEND, s->cu.dev) != CUDA_SUCCESS)
    return CALHOST_ERROR;
  mod = module_for(s, &c);
  if (!mod)
    return CALHOST_ERROR;
  int threads = 0, smem = (int)cgemm_smem_bytes(&c, s->cu.shape.dtype);
  if ((e = api->cuModuleGetFunction(&s->gemm, mod, "gemm")) != CUDA_SUCCESS ||
      (e = api->cuModuleGetFunction(&s->reduce, mod, "reduce")) != CUDA_SUCCESS ||
      (e = api->cuFuncSetAttribute(s->gemm, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                   smem)) != CUDA_SUCCESS ||
      (e = api->cuFuncGetAttribute(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, s->gemm)) !=
          CUDA_SUCCESS) {
    matmul_set_error(s->cu.mm.host, BACKEND ": preparing the kernel: %s", cu_error_name(api, e));
    cu_end_if_sticky(api, s->cu.mm.host, BACKEND, "prepare", e);
    return CALHOST_ERROR;
  }
  if ((uint32_t)threads < cgemm_threads(&c)) {
    matmul_set_error(s->cu.mm.host, BACKEND ": the compiled kernel allows %d threads, not %u",
                     threads, cgemm_threads(&c));
    return CALHOST_UNSUPPORTED;
  }
  if (c.v[CG_SPLITK] > 1 && (e = cu_session_work(&s->cu, (size_t)c.v[CG_SPLITK] * s->cu.mp *
                                                             s->cu.np * 4)) != CUDA_SUCCESS) {
    matmul_set_error(s->cu.mm.host, BACKEND ": split-K workspace: %s", cu_error_name(api, e));
    return CALHOST_NO_MEMORY;
  }
  s->config = c;
  if ((e = cu_session_prepared(&s->cu, launch, NULL)) != CUDA_SUCCESS) {
    matmul_set_error(s->cu.mm.host, BACKEND ": warming up: %s", cu_error_name(api, e));
    cu_end_if_sticky(api, s->cu.mm.host, BACKEND, "the warm-up", e);
    return CALHOST_ERROR;
  }
  s->prepared = 1;
  return CALHOST_OK;
}

/* The grid of c on a session of m x n x k: blocks along x (bm x bn
 * tiles of the problem padded to c's tile, cgemm_padded) and the split-K
 * slices along z; the padded problem into dims. */
static void cg_grid(const cgemm_config *c, const cu_shape *shape, uint64_t dims[3],
                    unsigned grid[3]) {
  cgemm_padded(c, shape->m, shape->n, shape->k, dims);
  grid[0] = (unsigned)((dims[0] / c->v[CG_BM]) * (dims[1] / c->v[CG_BN]));
  grid[1] = 1;
  grid[2] = c->v[CG_SPLITK];
}

/* One product on the session's stream with operand set `set`: the gemm
 * kernel over the problem padded to the configuration's tile, and the
 * reduce kernel when split. */
static CUresult launch(cu_session *cs, uint32_t set, void *unused) {
  calhost_session *s = (calhost_session *)(void *)cs;
  const cu_api *api = s->inst->cu.devs.api;
  const cgemm_config *c = &s->config;
  uint64_t dims[3];
  unsigned grid[3];
  (void)unused;
  cg_grid(c, &cs->shape, dims, grid);
  int m = (int)dims[0], n = (int)dims[1], k = (int)dims[2], lda = (int)cs->kp, ldb = (int)cs->np,
      acc = cs->shape.accumulate, split = (int)c->v[CG_SPLITK], swz = (int)c->v[CG_SWIZZLE];
  long long wstride = (long long)(cs->mp * cs->np);
  CUdeviceptr a = cs->rot_a[set], b = cs->rot_b[set], w = cs->work;
  void *args[] = {&a, &b, &cs->c, &w, &m, &n, &k, &lda, &ldb, &wstride, &acc, &split, &swz};
  CUresult e = api->cuLaunchKernel(s->gemm, grid[0], grid[1], grid[2], cgemm_threads(c), 1, 1,
                                   cgemm_smem_bytes(c, cs->shape.dtype), cs->stream, args, NULL);
  if (e != CUDA_SUCCESS || split == 1)
    return e;
  size_t mn = (size_t)m * (size_t)n;
  void *rargs[] = {&w, &cs->c, &m, &n, &ldb, &wstride, &split};
  return api->cuLaunchKernel(s->reduce, (unsigned)((mn + 255) / 256), 1, 1, 256, 1, 1, 0,
                             cs->stream, rargs, NULL);
}

/* Runs `iterations` products (cu_session_time: a captured graph per
 * batch, rotating operand copies, C reset outside the events);
 * device_seconds is the sum of the event pairs. */
static calhost_status cg_run(calhost_session *s, uint32_t iterations, calhost_run_result *result) {
  const cu_api *api;
  double device = 0;
  CUresult e;
  if (!s || !s->prepared)
    return CALHOST_INVALID_ARGUMENT;
  api = s->inst->cu.devs.api;
  s->cu.mm.last_iterations = 0;
  if (cu_make_current(api, s->cu.mm.host, BACKEND, s->cu.dev) != CUDA_SUCCESS)
    return CALHOST_ERROR;
  e = cu_session_time(&s->cu, launch, NULL, iterations, s->start, s->stop, &device);
  if (e == CUDA_ERROR_NOT_READY)
    return CALHOST_CANCELLED;
  if (e != CUDA_SUCCESS) {
    matmul_set_error(s->cu.mm.host, BACKEND ": running the kernel: %s", cu_error_name(api, e));
    cu_end_if_sticky(api, s->cu.mm.host, BACKEND, "run", e);
    return CALHOST_ERROR;
  }
  s->cu.mm.last_iterations = iterations;
  if (result && CALHOST_HAS_FIELD(result, calhost_run_result, device_seconds))
    result->device_seconds = device;
  return CALHOST_OK;
}

/* ---- parameter space (ABI 2) ------------------------------------------ */

static calhost_status cg_describe_space(calhost_session *s, calhost_parameter_space *out) {
  if (!s || !out)
    return CALHOST_INVALID_ARGUMENT;
  out->parameters = s->inst->params;
  out->parameter_count = CG_COUNT;
  out->default_assignment = s->default_assignment;
  return CALHOST_OK;
}

static int from_assignment(const uint32_t *a, size_t count, cgemm_config *c, char *err,
                           size_t cap) {
  if (!a || count != CG_COUNT)
    return matmul_fail(err, cap, "expected %d parameter indices, got %zu", CG_COUNT, count);
  for (int k = 0; k < CG_COUNT; k++) {
    if (a[k] >= cgemm_params[k].count)
      return matmul_fail(err, cap, "%s: value index %u out of range [0, %u)", cgemm_params[k].name,
                         a[k], cgemm_params[k].count);
    c->v[k] = cgemm_params[k].values[a[k]];
  }
  return 0;
}

static calhost_status cg_assignment_valid(calhost_session *s, const uint32_t *a, size_t count,
                                          char *err, size_t cap) {
  cgemm_config c;
  if (!s)
    return CALHOST_INVALID_ARGUMENT;
  if (from_assignment(a, count, &c, err, cap) != 0 ||
      cgemm_fits(&c, s->cu.shape.dtype, &s->cu.dev->limits, s->cu.shape.k, err, cap) != 0)
    return CALHOST_INVALID_ARGUMENT;
  return CALHOST_OK;
}

static calhost_status cg_serialize_assignment(calhost_session *s, const uint32_t *a, size_t count,
                                              char *buf, size_t capacity, size_t *length) {
  cgemm_config c;
  if (!s || from_assignment(a, count, &c, NULL, 0) != 0 ||
      cgemm_valid(&c, s->cu.shape.dtype, NULL, 0) != 0)
    return CALHOST_INVALID_ARGUMENT;
  return policy_out(&c, buf, capacity, length);
}

static calhost_status cg_policy_assignment(calhost_session *s, const char *policy, size_t length,
                                           uint32_t *a, size_t count) {
  cgemm_config c;
  if (!s || !a || count != CG_COUNT ||
      cgemm_parse(policy, length, s->cu.shape.dtype, &c, NULL, 0) != 0)
    return CALHOST_INVALID_ARGUMENT;
  for (int k = 0; k < CG_COUNT; k++)
    for (uint32_t i = 0; i < cgemm_params[k].count; i++)
      if (cgemm_params[k].values[i] == c.v[k])
        a[k] = i;
  return CALHOST_OK;
}

/* ---- samples, vtable --------------------------------------------------- */

static const int64_t sample_small[] = {128, 128, 128}, sample_odd[] = {100, 72, 40};
static const calhost_property sample_acc[] = {{"accumulate", "1"}};
static const calhost_workload sample_w1 = MATMUL_SAMPLE("matmul_128", sample_small, NULL, 0);
static const calhost_workload sample_w2 =
    MATMUL_SAMPLE("matmul_100x72x40_acc", sample_odd, sample_acc, 1);
static const calhost_workload sample_w3 = {{CALHOST_STRUCT_WORKLOAD, 1, sizeof(calhost_workload)},
                                           "matmul_128_bf16",
                                           "MatMul",
                                           "bfloat16",
                                           sample_small,
                                           3,
                                           NULL,
                                           0,
                                           NULL};
static const calhost_workload *const cg_samples[] = {&sample_w1, &sample_w2, &sample_w3, NULL};

#define cg_build_key cu_instance_build_key
#define cg_candidate_count matmul_candidate_count

CALHOST_PLUGIN_DEFINE(cg, 2u, BACKEND, "1.1.0", matmul_operators,
                      "CUDA GEMM (fp32 SIMT, fp16/bf16 tensor cores) compiled by NVRTC, "
                      "calibrated per NVIDIA device",
                      .default_policy = cg_default_policy, .check = cu_session_check,
                      .device_count = cu_instance_device_count,
                      .list_device = cu_instance_list_device, CALHOST_PLUGIN_SPACE_ENTRIES(cg),
                      .sample_workloads = cg_samples);
