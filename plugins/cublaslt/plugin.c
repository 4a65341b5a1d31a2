/*
 * plugin.c: the cublaslt backend: MatMul (float32, float16, bfloat16 A and
 * B; fp32 C and accumulation; row-major, computed as the column-major
 * C^T = B^T A^T) with NVIDIA's cuBLASLt, tuned: the candidates are
 * cublasLtMatmulAlgoGetHeuristic's top results followed by enumerated
 * algorithm configurations (each algorithm id's tiles, stages, split-K,
 * reduction schemes, swizzle) that cublasLtMatmulAlgoCheck accepts for the
 * workload; the policy is the serialized configuration (lt_policy.h), the
 * default the heuristic's first choice, and prepare refuses what
 * cublasLtMatmulAlgoCheck refuses. Timed with CUDA events, checked
 * against the on-device reference of ../cuda_gemm/cu_driver.c. libcuda and
 * libcublasLt are opened with dlopen: without them the plugin lists no
 * device. As CLBlast is to opencl_gemm: the baseline for cuda_gemm.
 */
#include <calhost/plugin.h>

#include <cublasLt.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_driver.h"
#include "lt_policy.h"

#define BACKEND "cublaslt"
#define RUN_BATCH 32
#define HEURISTIC_MAX 8
#define CANDIDATE_MAX 96
#define WORKSPACE_BYTES (32u << 20)
#define PER_ALGO_TRIES 384 /* cublasLtMatmulAlgoCheck calls per algorithm id */
#define PER_ALGO_KEPT 12   /* enumerated candidates kept per algorithm id */

#define LT_FUNCS(X)                                                                                \
  X(cublasLtCreate)                                                                                \
  X(cublasLtDestroy)                                                                               \
  X(cublasLtMatmulDescCreate)                                                                      \
  X(cublasLtMatmulDescDestroy)                                                                     \
  X(cublasLtMatrixLayoutCreate)                                                                    \
  X(cublasLtMatrixLayoutDestroy)                                                                   \
  X(cublasLtMatmulPreferenceCreate)                                                                \
  X(cublasLtMatmulPreferenceDestroy)                                                               \
  X(cublasLtMatmulPreferenceSetAttribute)                                                          \
  X(cublasLtMatmulAlgoGetHeuristic)                                                                \
  X(cublasLtMatmulAlgoGetIds)                                                                      \
  X(cublasLtMatmulAlgoInit)                                                                        \
  X(cublasLtMatmulAlgoCapGetAttribute)                                                             \
  X(cublasLtMatmulAlgoConfigSetAttribute)                                                          \
  X(cublasLtMatmulAlgoConfigGetAttribute)                                                          \
  X(cublasLtMatmulAlgoCheck)                                                                       \
  X(cublasLtMatmul)

typedef struct lt_api {
#define LT_MEMBER(f) __typeof__(f) *f;
  LT_FUNCS(LT_MEMBER)
#undef LT_MEMBER
} lt_api;

static lt_api g_lt;
static int g_lt_state;
static char g_lt_why[200];

/* libcublasLt (13, 12, unversioned, then $CUDA_HOME / /usr/local/cuda). */
static const lt_api *load_lt(char *why, size_t cap) {
  if (g_lt_state == 0) {
    const char *names[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so", NULL};
    void *lib = NULL;
    g_lt_state = -1;
    for (int i = 0; names[i] && !lib; i++)
      lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
    for (int i = 0; i < 3 && !lib; i++) {
      char path[4200];
      if (!homes[i] || !*homes[i])
        continue;
      snprintf(path, sizeof path, "%.4000s/lib64/libcublasLt.so", homes[i]);
      lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    if (!lib) {
      snprintf(g_lt_why, sizeof g_lt_why, "cuBLASLt not found (libcublasLt.so.13; set CUDA_HOME)");
    } else {
      int missing = 0;
#define LT_LOAD(f)                                                                                 \
  if (!(*(void **)&g_lt.f = dlsym(lib, #f)))                                                       \
    missing = 1;
      LT_FUNCS(LT_LOAD)
#undef LT_LOAD
      if (missing)
        snprintf(g_lt_why, sizeof g_lt_why, "libcublasLt lacks a function this backend calls");
      else
        g_lt_state = 1;
    }
  }
  if (g_lt_state != 1) {
    snprintf(why, cap, "%s", g_lt_why);
    return NULL;
  }
  return &g_lt;
}

struct calhost_plugin_instance {
  cu_instance cu; /* first */
  cublasLtHandle_t handle;
};

struct calhost_session {
  cu_session cu; /* first */
  calhost_plugin_instance *inst;
  const lt_api *lt;
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t la, lb, lc;
  cublasLtMatmulPreference_t pref;
  cublasComputeType_t compute;
  cudaDataType_t ab_type;
  lt_config cands[CANDIDATE_MAX];
  lt_config heuristic_first;
  CUdeviceptr workspace;
  CUevent start, stop;
  int prepared;
  cublasLtMatmulAlgo_t algo;
  size_t algo_workspace;
};

static calhost_status lt_create(const calhost_host_services *host, const calhost_property *settings,
                                size_t count, calhost_plugin_instance **out) {
  return cu_instance_create(host, BACKEND, settings, count, out, sizeof **out);
}

static void lt_destroy(calhost_plugin_instance *inst) {
  if (!inst)
    return;
  if (inst->handle && g_lt_state == 1)
    g_lt.cublasLtDestroy(inst->handle);
  cu_instance_destroy(inst);
}

static calhost_status lt_validate_policy(calhost_plugin_instance *inst, const char *policy,
                                         size_t length, char *err, size_t cap) {
  lt_config c;
  (void)inst;
  return lt_parse(policy, length, &c, err, cap) == 0 ? CALHOST_OK : CALHOST_INVALID_ARGUMENT;
}

/* The configuration of an initialised algorithm. */
static void config_of(const lt_api *lt, const cublasLtMatmulAlgo_t *a, lt_config *c) {
  static const cublasLtMatmulAlgoConfigAttributes_t attrs[LT_COUNT] = {
      CUBLASLT_ALGO_CONFIG_ID,
      CUBLASLT_ALGO_CONFIG_TILE_ID,
      CUBLASLT_ALGO_CONFIG_STAGES_ID,
      CUBLASLT_ALGO_CONFIG_SPLITK_NUM,
      CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME,
      CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING,
      CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION,
      CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID,
      CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID};
  for (int k = 0; k < LT_COUNT; k++) {
    size_t written = 0;
    uint32_t v32 = 0;
    uint16_t v16 = 0;
    if (k >= LT_INNER) {
      lt->cublasLtMatmulAlgoConfigGetAttribute(a, attrs[k], &v16, sizeof v16, &written);
      c->v[k] = v16;
    } else {
      lt->cublasLtMatmulAlgoConfigGetAttribute(a, attrs[k], &v32, sizeof v32, &written);
      c->v[k] = v32;
    }
  }
  if (c->v[LT_SPLITK] == 0)
    c->v[LT_SPLITK] = 1;
}

/* c as an algorithm checked for s's workload: 0 with *algo and its
 * workspace, or -1 with the reason (cublasLtMatmulAlgoInit or
 * cublasLtMatmulAlgoCheck refused it). */
static int algo_of(calhost_session *s, const lt_config *c, cublasLtMatmulAlgo_t *algo,
                   size_t *workspace, char *err, size_t cap) {
  const lt_api *lt = s->lt;
  cublasStatus_t st =
      lt->cublasLtMatmulAlgoInit(s->inst->handle, s->compute, CUDA_R_32F, s->ab_type, s->ab_type,
                                 CUDA_R_32F, CUDA_R_32F, (int)c->v[LT_ALGO], algo);
  if (st != CUBLAS_STATUS_SUCCESS)
    return matmul_fail(err, cap, "cublasLtMatmulAlgoInit(algo=%u) refused it (status %d)",
                       c->v[LT_ALGO], (int)st);
  uint32_t v32[] = {c->v[LT_TILE],      c->v[LT_STAGES],  c->v[LT_SPLITK],
                    c->v[LT_REDUCTION], c->v[LT_SWIZZLE], c->v[LT_CUSTOM]};
  cublasLtMatmulAlgoConfigAttributes_t a32[] = {
      CUBLASLT_ALGO_CONFIG_TILE_ID,       CUBLASLT_ALGO_CONFIG_STAGES_ID,
      CUBLASLT_ALGO_CONFIG_SPLITK_NUM,    CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME,
      CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION};
  for (int i = 0; i < 6; i++)
    lt->cublasLtMatmulAlgoConfigSetAttribute(algo, a32[i], &v32[i], sizeof v32[i]);
  uint16_t inner = (uint16_t)c->v[LT_INNER], cluster = (uint16_t)c->v[LT_CLUSTER];
  lt->cublasLtMatmulAlgoConfigSetAttribute(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &inner,
                                           sizeof inner);
  lt->cublasLtMatmulAlgoConfigSetAttribute(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster,
                                           sizeof cluster);
  cublasLtMatmulHeuristicResult_t r;
  memset(&r, 0, sizeof r);
  st = lt->cublasLtMatmulAlgoCheck(s->inst->handle, s->desc, s->la, s->lb, s->lc, s->lc, algo, &r);
  if (st != CUBLAS_STATUS_SUCCESS || r.state != CUBLAS_STATUS_SUCCESS)
    return matmul_fail(err, cap, "cublasLtMatmulAlgoCheck refuses it for this workload (status %d)",
                       (int)(st != CUBLAS_STATUS_SUCCESS ? st : r.state));
  if (r.workspaceSize > WORKSPACE_BYTES)
    return matmul_fail(err, cap, "it needs %zu bytes of workspace (at most %u)", r.workspaceSize,
                       WORKSPACE_BYTES);
  *workspace = r.workspaceSize;
  return 0;
}

static int known(const calhost_session *s, const lt_config *c) {
  for (uint32_t i = 0; i < s->cu.mm.candidates; i++)
    if (!memcmp(&s->cands[i], c, sizeof *c))
      return 1;
  return 0;
}

static void add_candidate(calhost_session *s, const lt_config *c) {
  if (s->cu.mm.candidates < CANDIDATE_MAX && !known(s, c))
    s->cands[s->cu.mm.candidates++] = *c;
}

/* The enumerated configurations: per algorithm id, its tiles x stages x
 * split-K {1, 2, 4} (when supported, with each reduction scheme it has)
 * x swizzle {0, 1} (when supported), those cublasLtMatmulAlgoCheck
 * accepts: at most PER_ALGO_KEPT of PER_ALGO_TRIES tries per id (so that
 * every id is represented), until the list is full. */
static void enumerate(calhost_session *s) {
  const lt_api *lt = s->lt;
  int ids[64], nids = 0;
  if (lt->cublasLtMatmulAlgoGetIds(s->inst->handle, s->compute, CUDA_R_32F, s->ab_type, s->ab_type,
                                   CUDA_R_32F, CUDA_R_32F, 64, ids, &nids) != CUBLAS_STATUS_SUCCESS)
    return;
  for (int i = 0; i < nids && s->cu.mm.candidates < CANDIDATE_MAX; i++) {
    cublasLtMatmulAlgo_t algo;
    uint32_t tiles[64], stages[64], red_mask = 0, tries = 0, kept = 0;
    int32_t splitk_ok = 0, swz_ok = 0;
    size_t nt = 0, ns = 0, w;
    if (lt->cublasLtMatmulAlgoInit(s->inst->handle, s->compute, CUDA_R_32F, s->ab_type, s->ab_type,
                                   CUDA_R_32F, CUDA_R_32F, ids[i], &algo) != CUBLAS_STATUS_SUCCESS)
      continue;
    if (lt->cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_TILE_IDS, tiles,
                                              sizeof tiles, &nt) != CUBLAS_STATUS_SUCCESS)
      nt = 0;
    if (lt->cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_STAGES_IDS, stages,
                                              sizeof stages, &ns) != CUBLAS_STATUS_SUCCESS)
      ns = 0;
    if (lt->cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT, &splitk_ok,
                                              sizeof splitk_ok, &w) != CUBLAS_STATUS_SUCCESS)
      splitk_ok = 0;
    if (lt->cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK,
                                              &red_mask, sizeof red_mask,
                                              &w) != CUBLAS_STATUS_SUCCESS)
      red_mask = 0;
    if (lt->cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT,
                                              &swz_ok, sizeof swz_ok, &w) != CUBLAS_STATUS_SUCCESS)
      swz_ok = 0;
    if (nt > sizeof tiles)
      nt = sizeof tiles;
    if (ns > sizeof stages)
      ns = sizeof stages;
    nt /= sizeof tiles[0];
    ns /= sizeof stages[0];
    if (nt == 0)
      tiles[nt++] = 0;
    if (ns == 0)
      stages[ns++] = 0;
    for (size_t t = 0; t < nt; t++)
      for (size_t g = 0; g < ns; g++)
        for (uint32_t split = 1; split <= (splitk_ok ? 4u : 1u); split *= 2)
          for (uint32_t red = 0; red <= (split > 1 ? 4u : 0u); red = red ? red * 2 : 1) {
            if (split > 1 && red && !(red_mask & red))
              continue;
            for (uint32_t swz = 0; swz <= (swz_ok ? 1u : 0u); swz++) {
              lt_config c = {{(uint32_t)ids[i], tiles[t], stages[g], split, red, swz, 0, 0, 0}};
              cublasLtMatmulAlgo_t a;
              size_t ws;
              if (s->cu.mm.candidates >= CANDIDATE_MAX || tries >= PER_ALGO_TRIES ||
                  kept >= PER_ALGO_KEPT)
                goto next_algo;
              tries++;
              if (algo_of(s, &c, &a, &ws, NULL, 0) == 0 && !known(s, &c)) {
                add_candidate(s, &c);
                kept++;
              }
            }
          }
  next_algo:;
  }
}

static void lt_close_session(calhost_session *s) {
  if (!s)
    return;
  const cu_api *api = s->inst->cu.devs.api;
  if (s->lt) {
    if (s->pref)
      s->lt->cublasLtMatmulPreferenceDestroy(s->pref);
    if (s->la)
      s->lt->cublasLtMatrixLayoutDestroy(s->la);
    if (s->lb)
      s->lt->cublasLtMatrixLayoutDestroy(s->lb);
    if (s->lc)
      s->lt->cublasLtMatrixLayoutDestroy(s->lc);
    if (s->desc)
      s->lt->cublasLtMatmulDescDestroy(s->desc);
  }
  if (api) {
    api->cuCtxSetCurrent(s->cu.dev->ctx);
    if (s->workspace)
      api->cuMemFree(s->workspace);
    if (s->start)
      api->cuEventDestroy(s->start);
    if (s->stop)
      api->cuEventDestroy(s->stop);
  }
  cu_session_release(&s->cu);
  free(s);
}

static calhost_status lt_open_session(calhost_plugin_instance *inst, const calhost_workload *w,
                                      const calhost_target *t, calhost_session **out) {
  calhost_status st;
  calhost_session *s;
  char why[256];
  const lt_api *lt;
  if (!out)
    return CALHOST_INVALID_ARGUMENT;
  *out = NULL;
  s = cu_session_open(inst, w, t, sizeof *s, 16, 16, &st);
  if (!s)
    return st;
  s->inst = inst;
  lt = load_lt(why, sizeof why);
  if (!lt) {
    matmul_set_error(inst->cu.mm.host, BACKEND ": %s", why);
    lt_close_session(s);
    return CALHOST_UNSUPPORTED;
  }
  s->lt = lt;
  const cu_api *api = inst->cu.devs.api;
  if (!inst->handle && lt->cublasLtCreate(&inst->handle) != CUBLAS_STATUS_SUCCESS) {
    inst->handle = NULL;
    matmul_set_error(inst->cu.mm.host, BACKEND ": cublasLtCreate failed");
    lt_close_session(s);
    return CALHOST_ERROR;
  }
  cgemm_dtype dt = s->cu.shape.dtype;
  s->ab_type = dt == CG_F32 ? CUDA_R_32F : dt == CG_F16 ? CUDA_R_16F : CUDA_R_16BF;
  s->compute = CUBLAS_COMPUTE_32F; /* fp32 accumulation, no TF32 for float32 */
  uint64_t m = s->cu.shape.n, n = s->cu.shape.m, k = s->cu.shape.k; /* C^T = B^T A^T */
  uint64_t workspace = WORKSPACE_BYTES;
  if (lt->cublasLtMatmulDescCreate(&s->desc, s->compute, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS ||
      lt->cublasLtMatrixLayoutCreate(&s->la, s->ab_type, m, k, (int64_t)s->cu.np) !=
          CUBLAS_STATUS_SUCCESS ||
      lt->cublasLtMatrixLayoutCreate(&s->lb, s->ab_type, k, n, (int64_t)s->cu.kp) !=
          CUBLAS_STATUS_SUCCESS ||
      lt->cublasLtMatrixLayoutCreate(&s->lc, CUDA_R_32F, m, n, (int64_t)s->cu.np) !=
          CUBLAS_STATUS_SUCCESS ||
      lt->cublasLtMatmulPreferenceCreate(&s->pref) != CUBLAS_STATUS_SUCCESS ||
      lt->cublasLtMatmulPreferenceSetAttribute(s->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                               &workspace,
                                               sizeof workspace) != CUBLAS_STATUS_SUCCESS ||
      api->cuMemAlloc(&s->workspace, WORKSPACE_BYTES) != CUDA_SUCCESS ||
      api->cuEventCreate(&s->start, CU_EVENT_DEFAULT) != CUDA_SUCCESS ||
      api->cuEventCreate(&s->stop, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
    matmul_set_error(inst->cu.mm.host, BACKEND ": setting up cuBLASLt descriptors failed");
    lt_close_session(s);
    return CALHOST_ERROR;
  }
  cublasLtMatmulHeuristicResult_t heur[HEURISTIC_MAX];
  int found = 0;
  memset(heur, 0, sizeof heur);
  if (lt->cublasLtMatmulAlgoGetHeuristic(inst->handle, s->desc, s->la, s->lb, s->lc, s->lc, s->pref,
                                         HEURISTIC_MAX, heur, &found) != CUBLAS_STATUS_SUCCESS ||
      found <= 0) {
    matmul_set_error(inst->cu.mm.host, BACKEND ": cuBLASLt has no algorithm for %s %zux%zux%zu",
                     cgemm_dtype_name(dt), s->cu.shape.m, s->cu.shape.n, s->cu.shape.k);
    lt_close_session(s);
    return CALHOST_UNSUPPORTED;
  }
  for (int i = 0; i < found; i++) {
    lt_config c;
    if (heur[i].state != CUBLAS_STATUS_SUCCESS)
      continue;
    config_of(lt, &heur[i].algo, &c);
    if (s->cu.mm.candidates == 0)
      s->heuristic_first = c;
    add_candidate(s, &c);
  }
  enumerate(s);
  *out = s;
  return CALHOST_OK;
}

static calhost_status policy_out(const lt_config *c, char *buf, size_t cap, size_t *length) {
  char text[200];
  lt_format(c, text, sizeof text);
  return calhost_copy_out(text, buf, cap, length);
}

static calhost_status lt_serialize_candidate(calhost_session *s, uint32_t index, char *buf,
                                             size_t cap, size_t *length) {
  if (!s || index >= s->cu.mm.candidates)
    return CALHOST_INVALID_ARGUMENT;
  return policy_out(&s->cands[index], buf, cap, length);
}

static calhost_status lt_default_policy(calhost_session *s, char *buf, size_t cap, size_t *length) {
  if (!s)
    return CALHOST_INVALID_ARGUMENT;
  return policy_out(&s->heuristic_first, buf, cap, length);
}

static calhost_status lt_prepare(calhost_session *s, const char *policy, size_t length) {
  char err[256];
  lt_config c;
  if (!s)
    return CALHOST_INVALID_ARGUMENT;
  s->prepared = 0;
  s->cu.mm.last_iterations = 0;
  if (lt_parse(policy, length, &c, err, sizeof err) != 0) {
    matmul_set_error(s->cu.mm.host, BACKEND " policy refused: %s", err);
    return CALHOST_INVALID_ARGUMENT;
  }
  s->inst->cu.devs.api->cuCtxSetCurrent(s->cu.dev->ctx);
  if (algo_of(s, &c, &s->algo, &s->algo_workspace, err, sizeof err) != 0) {
    matmul_set_error(s->cu.mm.host, BACKEND ": %s", err);
    return CALHOST_UNSUPPORTED;
  }
  s->prepared = 1;
  return CALHOST_OK;
}

static calhost_status lt_run(calhost_session *s, uint32_t iterations, calhost_run_result *result) {
  const cu_api *api;
  double device = 0;
  CUresult e;
  if (!s || !s->prepared)
    return CALHOST_INVALID_ARGUMENT;
  api = s->inst->cu.devs.api;
  api->cuCtxSetCurrent(s->cu.dev->ctx);
  s->cu.mm.last_iterations = 0;
  if ((e = cu_session_reset(&s->cu)) != CUDA_SUCCESS) {
    matmul_set_error(s->cu.mm.host, BACKEND ": resetting C: %s", cu_error_name(api, e));
    return CALHOST_ERROR;
  }
  const float alpha = 1.0f, beta = s->cu.shape.accumulate ? 1.0f : 0.0f;
  for (uint32_t done = 0; done < iterations;) {
    uint32_t batch = iterations - done < RUN_BATCH ? iterations - done : RUN_BATCH;
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    double secs;
    e = api->cuEventRecord(s->start, NULL);
    for (uint32_t i = 0; e == CUDA_SUCCESS && st == CUBLAS_STATUS_SUCCESS && i < batch; i++)
      st = s->lt->cublasLtMatmul(s->inst->handle, s->desc, &alpha, (const void *)s->cu.b, s->la,
                                 (const void *)s->cu.a, s->lb, &beta, (const void *)s->cu.c, s->lc,
                                 (void *)s->cu.c, s->lc, &s->algo, (void *)s->workspace,
                                 s->algo_workspace, NULL);
    if (e == CUDA_SUCCESS)
      e = api->cuEventRecord(s->stop, NULL);
    if (st != CUBLAS_STATUS_SUCCESS || e != CUDA_SUCCESS ||
        (secs = cu_events_seconds(api, s->start, s->stop)) < 0) {
      matmul_set_error(s->cu.mm.host, BACKEND ": cublasLtMatmul: status %d, %s", (int)st,
                       cu_error_name(api, e));
      return CALHOST_ERROR;
    }
    device += secs;
    done += batch;
    if (done < iterations && matmul_cancelled(s->cu.mm.host))
      return CALHOST_CANCELLED;
  }
  s->cu.mm.last_iterations = iterations;
  if (result && CALHOST_HAS_FIELD(result, calhost_run_result, device_seconds))
    result->device_seconds = device;
  return CALHOST_OK;
}

static const int64_t sample_small[] = {128, 128, 128}, sample_odd[] = {100, 72, 40};
static const calhost_workload sample_w1 = MATMUL_SAMPLE("matmul_128", sample_small, NULL, 0);
static const calhost_workload sample_w2 = MATMUL_SAMPLE("matmul_100x72x40", sample_odd, NULL, 0);
static const calhost_workload *const lt_samples[] = {&sample_w1, &sample_w2, NULL};

#define lt_build_key cu_instance_build_key
#define lt_candidate_count matmul_candidate_count

CALHOST_PLUGIN_DEFINE(lt, 2u, BACKEND, "1.0.0", matmul_operators,
                      "NVIDIA cuBLASLt matmul, its algorithm configuration calibrated per device",
                      .default_policy = lt_default_policy, .check = cu_session_check,
                      .device_count = cu_instance_device_count,
                      .list_device = cu_instance_list_device, .sample_workloads = lt_samples);
