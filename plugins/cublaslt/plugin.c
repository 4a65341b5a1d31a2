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
 * against the on-device reference of ../common/cuda/cu_driver.c. libcuda and
 * libcublasLt are opened with dlopen: without them the plugin lists no
 * device. As CLBlast is to opencl_gemm: the baseline for cuda_gemm.
 */
#define _GNU_SOURCE /* dladdr */
#include <calhost/plugin.h>

#include <cublasLt.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cu_driver.h"
#include "cu_nvrtc.h"
#include "lt_policy.h"

#define BACKEND "cublaslt"
#define HEURISTIC_MAX 8
#define CANDIDATE_MAX 96
#define WORKSPACE_BYTES (32u << 20)
#define ALGO_IDS_MAX 4096  /* cublasLtMatmulAlgoGetIds' array (it has no count query) */
#define PER_ALGO_TRIES 384 /* cublasLtMatmulAlgoCheck calls per algorithm id */
#define PER_ALGO_KEPT 12   /* enumerated candidates kept per algorithm id */

#define LT_FUNCS(X)                                                                                \
  X(cublasLtCreate)                                                                                \
  X(cublasLtDestroy)                                                                               \
  X(cublasLtMatmulDescCreate)                                                                      \
  X(cublasLtMatmulDescDestroy)                                                                     \
  X(cublasLtMatmulDescSetAttribute)                                                                \
  X(cublasLtMatrixLayoutCreate)                                                                    \
  X(cublasLtMatrixLayoutDestroy)                                                                   \
  X(cublasLtMatrixLayoutSetAttribute)                                                              \
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
  X(cublasLtGetVersion)                                                                            \
  X(cublasLtMatmul)

typedef struct lt_api {
#define LT_MEMBER(f) __typeof__(f) *f;
  LT_FUNCS(LT_MEMBER)
#undef LT_MEMBER
} lt_api;

static lt_api g_lt;
static int g_lt_state; /* 0 untried, 1 loaded, -1 absent: set once decided, under the lock */
static char g_lt_why[200], g_lt_path[CU_PATH_MAX];
static pthread_mutex_t g_lt_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const g_lt_names[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so",
                                         NULL};

/* libcublasLt (13, 12, unversioned through the loader, then the roots of
 * cu_find_library: CUDA_HOME, CUDA_PATH, /usr/local/cuda*, pip's
 * nvidia/cu13 and nvidia/cublas). Once per process, thread-safe. */
static const lt_api *load_lt(char *why, size_t cap) {
  int state;
  pthread_mutex_lock(&g_lt_lock);
  if (g_lt_state == 0) {
    void *lib = NULL;
    int decided = -1;
    for (int i = 0; g_lt_names[i] && !lib; i++)
      lib = dlopen(g_lt_names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib && cu_find_library(g_lt_names, g_lt_path, sizeof g_lt_path) == 0)
      lib = dlopen(g_lt_path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      snprintf(g_lt_why, sizeof g_lt_why,
               "cuBLASLt not found (libcublasLt.so.13 in the loader's path, CUDA_HOME, CUDA_PATH, "
               "/usr/local/cuda*, or pip's nvidia/cu13)");
    } else {
      int missing = 0;
#define LT_LOAD(f)                                                                                 \
  if (!(*(void **)&g_lt.f = dlsym(lib, #f)))                                                       \
    missing = 1;
      LT_FUNCS(LT_LOAD)
#undef LT_LOAD
      Dl_info info;
      if (!g_lt_path[0] && !missing && dladdr((void *)g_lt.cublasLtCreate, &info) && info.dli_fname)
        snprintf(g_lt_path, sizeof g_lt_path, "%.1000s", info.dli_fname);
      if (missing)
        snprintf(g_lt_why, sizeof g_lt_why, "libcublasLt lacks a function this backend calls");
      else
        decided = 1;
    }
    g_lt_state = decided;
  }
  state = g_lt_state;
  pthread_mutex_unlock(&g_lt_lock);
  if (state != 1) {
    snprintf(why, cap, "%s", g_lt_why);
    return NULL;
  }
  return &g_lt;
}

/* What a cublaslt policy depends on besides the device: the cuBLASLt
 * version (its header: algorithm configurations are valid for one version
 * only), as "cublasLt VERSION" for the identity and VERSION for the
 * portable key; "cublasLt none" when the library is absent. Tests replace
 * lt_version_of. */
static size_t lt_real_version(void) {
  char why[200];
  const lt_api *lt = load_lt(why, sizeof why);
  return lt ? lt->cublasLtGetVersion() : 0;
}
static size_t (*lt_version_of)(void) = lt_real_version;

static void lt_versions(char *libs, size_t libs_cap, char *found, size_t found_cap) {
  size_t v = lt_version_of();
  char nvrtc[CU_PATH_MAX + 200];
  if (v)
    snprintf(libs, libs_cap, "cublasLt %zu", v);
  else
    snprintf(libs, libs_cap, "cublasLt none");
  cu_nvrtc_describe(nvrtc, sizeof nvrtc);
  snprintf(found, found_cap, "cublasLt %zu (%.400s); %.560s", v, g_lt_path[0] ? g_lt_path : g_lt_why,
           nvrtc);
}

struct calhost_plugin_instance {
  cu_instance cu;            /* first */
  pthread_mutex_t lock;      /* handles */
  cublasLtHandle_t *handles; /* one per listed device (cuBLASLt binds a handle to the device
                                current when it is created), NULL until first used */
  uint32_t handle_count;
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
  cublasLtHandle_t handle; /* the device's (the instance's handles) */
  lt_config cands[CANDIDATE_MAX];
  lt_config heuristic_first;
  cublasLtMatmulAlgo_t heuristic_algo; /* the heuristic's own first algorithm, as it returned it */
  size_t heuristic_workspace;          /* and the workspace it asked for */
  double open_seconds;                 /* open_session's enumeration (AlgoCheck calls) */
  uint32_t checks;                     /* cublasLtMatmulAlgoCheck calls it made */
  CUdeviceptr workspace;
  CUevent start, stop;
  int prepared;
  cublasStatus_t last_status; /* of the last failed cublasLtMatmul */
  cublasLtMatmulAlgo_t algo;
  size_t algo_workspace;
};

static calhost_status lt_create(const calhost_host_services *host, const calhost_property *settings,
                                size_t count, calhost_plugin_instance **out) {
  calhost_status st = cu_instance_create(host, BACKEND, settings, count, out, sizeof **out);
  if (st == CALHOST_OK) {
    pthread_mutex_init(&(*out)->lock, NULL);
    (*out)->cu.devs.versions = lt_versions;
    /* every structure: TRANSA/TRANSB, alpha and beta, the bias as C,
     * strided batches (cu_parse_workload declines what one call cannot) */
    (*out)->cu.mm.caps = MATMUL_CAN_ALL;
  }
  return st;
}

static void lt_destroy(calhost_plugin_instance *inst) {
  if (!inst)
    return;
  for (uint32_t i = 0; i < inst->handle_count; i++)
    if (inst->handles[i] && g_lt_state == 1 && inst->cu.devs.api &&
        inst->cu.devs.api->cuCtxSetCurrent(inst->cu.devs.items[i].ctx) == CUDA_SUCCESS)
      g_lt.cublasLtDestroy(inst->handles[i]);
  free(inst->handles);
  pthread_mutex_destroy(&inst->lock);
  cu_instance_destroy(inst);
}

/* The handle of the device at position `pos` of the instance's list,
 * created on first use with that device's context current (the caller
 * made it current). NULL when cublasLtCreate fails or out of memory. */
static cublasLtHandle_t lt_handle_for(calhost_plugin_instance *inst, const lt_api *lt,
                                      uint32_t pos) {
  cublasLtHandle_t h = NULL;
  pthread_mutex_lock(&inst->lock);
  if (!inst->handles && inst->cu.devs.count) {
    inst->handles = calloc(inst->cu.devs.count, sizeof *inst->handles);
    inst->handle_count = inst->handles ? inst->cu.devs.count : 0;
  }
  if (pos < inst->handle_count) {
    if (!inst->handles[pos] && lt->cublasLtCreate(&inst->handles[pos]) != CUBLAS_STATUS_SUCCESS)
      inst->handles[pos] = NULL;
    h = inst->handles[pos];
  }
  pthread_mutex_unlock(&inst->lock);
  return h;
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
      lt->cublasLtMatmulAlgoInit(s->handle, s->compute, CUDA_R_32F, s->ab_type, s->ab_type,
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
  s->checks++;
  st = lt->cublasLtMatmulAlgoCheck(s->handle, s->desc, s->la, s->lb, s->lc, s->lc, algo, &r);
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

/* A uint32_t capability array of algo: its size queried first
 * (sizeInBytes 0, as cublasLt.h documents), then read whole. malloc'ed,
 * its count in *n; NULL and 0 when the algorithm has none. */
static uint32_t *cap_array(const lt_api *lt, const cublasLtMatmulAlgo_t *algo,
                           cublasLtMatmulAlgoCapAttributes_t attr, size_t *n) {
  size_t bytes = 0, written = 0;
  uint32_t *v;
  *n = 0;
  if (lt->cublasLtMatmulAlgoCapGetAttribute(algo, attr, NULL, 0, &bytes) != CUBLAS_STATUS_SUCCESS ||
      bytes < sizeof *v || !(v = malloc(bytes)))
    return NULL;
  if (lt->cublasLtMatmulAlgoCapGetAttribute(algo, attr, v, bytes, &written) !=
          CUBLAS_STATUS_SUCCESS ||
      written > bytes) {
    free(v);
    return NULL;
  }
  *n = written / sizeof *v;
  return v;
}

static int32_t cap_int(const lt_api *lt, const cublasLtMatmulAlgo_t *algo,
                       cublasLtMatmulAlgoCapAttributes_t attr) {
  int32_t v = 0;
  size_t w = 0;
  if (lt->cublasLtMatmulAlgoCapGetAttribute(algo, attr, &v, sizeof v, &w) != CUBLAS_STATUS_SUCCESS)
    return 0;
  return v;
}

/* The enumerated configurations. Per algorithm id (cublasLtMatmulAlgoGetIds),
 * the product of its capabilities: tiles and stages (counts queried
 * first), split-K {1, 2, 4} with each reduction scheme it has, CTA swizzle
 * {0, 1}, custom options 0..CUSTOM_OPTION_MAX, and on Hopper and later
 * (sm_90+) the cluster shapes (CUBLASLT_CLUSTER_SHAPE_*: auto and every
 * shape) and inner shapes; PER_ALGO_TRIES points of that product spread
 * over all of it (lt_walk_stride: not the first tiles), the first
 * PER_ALGO_KEPT that cublasLtMatmulAlgoCheck accepts kept; then the kept
 * ones of every id taken in turns (one of each id, then the next of each)
 * until CANDIDATE_MAX. */
static void enumerate(calhost_session *s) {
  const lt_api *lt = s->lt;
  int *ids = malloc(ALGO_IDS_MAX * sizeof *ids), nids = 0;
  lt_config *kept = NULL;
  uint32_t *nkept = NULL;
  int hopper = s->cu.dev->limits.cc_major >= 9;
  if (!ids ||
      lt->cublasLtMatmulAlgoGetIds(s->handle, s->compute, CUDA_R_32F, s->ab_type, s->ab_type,
                                   CUDA_R_32F, CUDA_R_32F, ALGO_IDS_MAX, ids,
                                   &nids) != CUBLAS_STATUS_SUCCESS ||
      nids <= 0)
    goto done;
  kept = calloc((size_t)nids * PER_ALGO_KEPT, sizeof *kept);
  nkept = calloc((size_t)nids, sizeof *nkept);
  if (!kept || !nkept)
    goto done;
  for (int i = 0; i < nids; i++) {
    cublasLtMatmulAlgo_t algo;
    size_t nt = 0, ns = 0;
    if (lt->cublasLtMatmulAlgoInit(s->handle, s->compute, CUDA_R_32F, s->ab_type, s->ab_type,
                                   CUDA_R_32F, CUDA_R_32F, ids[i], &algo) != CUBLAS_STATUS_SUCCESS)
      continue;
    uint32_t *tiles = cap_array(lt, &algo, CUBLASLT_ALGO_CAP_TILE_IDS, &nt);
    uint32_t *stages = cap_array(lt, &algo, CUBLASLT_ALGO_CAP_STAGES_IDS, &ns);
    int32_t splitk_ok = cap_int(lt, &algo, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT);
    uint32_t red_mask = (uint32_t)cap_int(lt, &algo, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK);
    int32_t swz_ok = cap_int(lt, &algo, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT);
    int32_t custom_max = cap_int(lt, &algo, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX);
    /* split-K options: (1, none), then (2 and 4) x each reduction scheme it has */
    uint32_t splits[16][2], nsplit = 0;
    splits[nsplit][0] = 1;
    splits[nsplit++][1] = 0;
    for (uint32_t split = 2; splitk_ok && split <= 4; split *= 2)
      for (uint32_t red = 1; red <= 4; red *= 2)
        if (red_mask & red) {
          splits[nsplit][0] = split;
          splits[nsplit++][1] = red;
        }
    /* the product's dimensions: tile, stages, split-K option, swizzle,
     * custom option, cluster shape, inner shape */
    uint32_t dims[7] = {
        nt ? (uint32_t)nt : 1u,
        ns ? (uint32_t)ns : 1u,
        nsplit,
        swz_ok ? 2u : 1u,
        custom_max > 0 ? (uint32_t)(custom_max > 63 ? 64 : custom_max + 1) : 1u,
        hopper ? (uint32_t)CUBLASLT_CLUSTER_SHAPE_END - 1u : 1u, /* auto, then 1x1x1 .. */
        hopper ? (uint32_t)CUBLASLT_MATMUL_INNER_SHAPE_END : 1u,
    };
    uint64_t total = 1;
    for (int d = 0; d < 7; d++)
      total *= dims[d];
    uint64_t tries = total < PER_ALGO_TRIES ? total : PER_ALGO_TRIES,
             stride = lt_walk_stride(total, tries);
    for (uint64_t t = 0; t < tries && nkept[i] < PER_ALGO_KEPT; t++) {
      uint32_t g[7];
      lt_walk_point(dims, 7, (t * stride) % total, g);
      uint32_t cluster = g[5] == 0 ? (uint32_t)CUBLASLT_CLUSTER_SHAPE_AUTO : g[5] + 1u;
      lt_config c = {{(uint32_t)ids[i], nt ? tiles[g[0]] : 0u, ns ? stages[g[1]] : 0u,
                      splits[g[2]][0], splits[g[2]][1], g[3], g[4], g[6], cluster}};
      cublasLtMatmulAlgo_t a;
      size_t ws;
      if (algo_of(s, &c, &a, &ws, NULL, 0) == 0)
        kept[(size_t)i * PER_ALGO_KEPT + nkept[i]++] = c;
    }
    free(tiles);
    free(stages);
  }
  for (uint32_t round = 0; round < PER_ALGO_KEPT && s->cu.mm.candidates < CANDIDATE_MAX; round++)
    for (int i = 0; i < nids && s->cu.mm.candidates < CANDIDATE_MAX; i++)
      if (round < nkept[i])
        add_candidate(s, &kept[(size_t)i * PER_ALGO_KEPT + round]);
done:
  free(ids);
  free(kept);
  free(nkept);
}

/* The matmul descriptor and layouts of s's structure (s->cu.shape.st and
 * the stored matrices' ld and strides) in cuBLASLt's column-major terms:
 * the row-major C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T,
 * so cuBLASLt's A is our B and its B our A. Our B (k x n, row-major) reads
 * as the column-major n x k it needs (TRANSA N); stored n x k (trans_b)
 * it reads as k x n: TRANSA T. Likewise our A (m x k reads as k x m,
 * TRANSB N; stored k x m, trans_a: TRANSB T). C is n x m, ld np. A batch
 * sets BATCH_COUNT on the three layouts and STRIDED_BATCH_OFFSET to each
 * operand's matrix stride, 0 for one shared by every product (batch_a or
 * batch_b 1). 0, or -1 when a call failed. */
static int lt_describe(calhost_session *s) {
  const lt_api *lt = s->lt;
  const cu_session *cs = &s->cu;
  const matmul_shape *st = &cs->shape.st;
  const cublasStatus_t ok = CUBLAS_STATUS_SUCCESS;
  uint64_t m = cs->shape.n, n = cs->shape.m, k = cs->shape.k; /* C^T = B^T A^T */
  int32_t ta = st->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
          tb = st->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (lt->cublasLtMatmulDescCreate(&s->desc, s->compute, CUDA_R_32F) != ok ||
      lt->cublasLtMatmulDescSetAttribute(s->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta) !=
          ok ||
      lt->cublasLtMatmulDescSetAttribute(s->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb) !=
          ok ||
      lt->cublasLtMatrixLayoutCreate(&s->la, s->ab_type, st->trans_b ? k : m, st->trans_b ? m : k,
                                     (int64_t)cs->b_ld) != ok ||
      lt->cublasLtMatrixLayoutCreate(&s->lb, s->ab_type, st->trans_a ? n : k, st->trans_a ? k : n,
                                     (int64_t)cs->a_ld) != ok ||
      lt->cublasLtMatrixLayoutCreate(&s->lc, CUDA_R_32F, m, n, (int64_t)cs->np) != ok)
    return -1;
  if (st->batch > 1) {
    int32_t count = (int32_t)st->batch;
    int64_t strides[3] = {st->batch_b == 1 ? 0 : (int64_t)cs->b_stride,
                          st->batch_a == 1 ? 0 : (int64_t)cs->a_stride, (int64_t)cs->c_stride};
    cublasLtMatrixLayout_t layouts[3] = {s->la, s->lb, s->lc};
    for (int i = 0; i < 3; i++)
      if (lt->cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                               &count, sizeof count) != ok ||
          lt->cublasLtMatrixLayoutSetAttribute(layouts[i],
                                               CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                               &strides[i], sizeof strides[i]) != ok)
        return -1;
  }
  return 0;
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
  if (api && api->cuCtxSetCurrent(s->cu.dev->ctx) == CUDA_SUCCESS) {
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

static double lt_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
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
  double t0 = lt_now();
  s->handle = lt_handle_for(inst, lt, (uint32_t)(s->cu.dev - inst->cu.devs.items));
  if (!s->handle) {
    matmul_set_error(inst->cu.mm.host, BACKEND ": cublasLtCreate failed on '%s'", s->cu.dev->name);
    lt_close_session(s);
    return CALHOST_ERROR;
  }
  cgemm_dtype dt = s->cu.shape.dtype;
  s->ab_type = dt == CG_F32 ? CUDA_R_32F : dt == CG_F16 ? CUDA_R_16F : CUDA_R_16BF;
  s->compute = CUBLAS_COMPUTE_32F; /* fp32 accumulation, no TF32 for float32 */
  uint64_t workspace = WORKSPACE_BYTES;
  if (lt_describe(s) != 0 ||
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
  if (lt->cublasLtMatmulAlgoGetHeuristic(s->handle, s->desc, s->la, s->lb, s->lc, s->lc, s->pref,
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
    if (s->cu.mm.candidates == 0) {
      s->heuristic_first = c;
      s->heuristic_algo = heur[i].algo;
      s->heuristic_workspace = heur[i].workspaceSize;
    }
    add_candidate(s, &c);
  }
  enumerate(s);
  s->open_seconds = lt_now() - t0;
  if (inst->cu.mm.host && inst->cu.mm.host->log) {
    char msg[200];
    snprintf(msg, sizeof msg,
             BACKEND ": %u candidates from %u cublasLtMatmulAlgoCheck calls in %.3f s",
             s->cu.mm.candidates, s->checks, s->open_seconds);
    inst->cu.mm.host->log(inst->cu.mm.host->context, CALHOST_LOG_DEBUG, msg);
  }
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

/* 1 when c is the heuristic's first choice (the default policy). */
static int lt_is_default(const calhost_session *s, const lt_config *c) {
  return memcmp(c, &s->heuristic_first, sizeof *c) == 0;
}

/* One product (all of a batch) on the session's stream with operand set
 * `set` (C^T = B^T A^T in cuBLASLt's column-major terms: lt_describe):
 * D = C = alpha op(A) op(B) + beta C, with the input C the output itself
 * (beta 1 accumulating, else 0), or with a bias the session's broadcast
 * bias (laid out as C) and beta the structure's. A failed call returns
 * CUDA_ERROR_UNKNOWN, its status in s->last_status. */
static CUresult lt_launch(cu_session *cs, uint32_t set, void *unused) {
  calhost_session *s = (calhost_session *)(void *)cs;
  const matmul_shape *shape = &cs->shape.st;
  const float alpha = cs->shape.structured ? shape->alpha : 1.0f;
  const float beta = cs->bias ? shape->beta : cs->shape.accumulate ? 1.0f : 0.0f;
  const CUdeviceptr in = cs->bias ? cs->bias : cs->c;
  (void)unused;
  cublasStatus_t st = s->lt->cublasLtMatmul(
      s->handle, s->desc, &alpha, (const void *)cs->rot_b[set], s->la, (const void *)cs->rot_a[set],
      s->lb, &beta, (const void *)in, s->lc, (void *)cs->c, s->lc, &s->algo, (void *)s->workspace,
      s->algo_workspace, cs->stream);
  if (st != CUBLAS_STATUS_SUCCESS) {
    s->last_status = st;
    return CUDA_ERROR_UNKNOWN;
  }
  return CUDA_SUCCESS;
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
  const cu_api *api = s->inst->cu.devs.api;
  if (cu_make_current(api, s->cu.mm.host, BACKEND, s->cu.dev) != CUDA_SUCCESS)
    return CALHOST_ERROR;
  if (algo_of(s, &c, &s->algo, &s->algo_workspace, err, sizeof err) != 0) {
    matmul_set_error(s->cu.mm.host, BACKEND ": %s", err);
    return CALHOST_UNSUPPORTED;
  }
  if (lt_is_default(s, &c)) { /* the heuristic's own algorithm, not a reconstruction */
    s->algo = s->heuristic_algo;
    s->algo_workspace = s->heuristic_workspace;
  }
  CUresult e = cu_session_prepared(&s->cu, lt_launch, NULL);
  if (e != CUDA_SUCCESS) {
    matmul_set_error(s->cu.mm.host, BACKEND ": warming up: %s", cu_error_name(api, e));
    cu_end_if_sticky(api, s->cu.mm.host, BACKEND, "the warm-up", e);
    return CALHOST_ERROR;
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
  s->cu.mm.last_iterations = 0;
  if (cu_make_current(api, s->cu.mm.host, BACKEND, s->cu.dev) != CUDA_SUCCESS)
    return CALHOST_ERROR;
  s->last_status = CUBLAS_STATUS_SUCCESS;
  e = cu_session_time(&s->cu, lt_launch, NULL, iterations, s->start, s->stop, &device);
  if (e == CUDA_ERROR_NOT_READY)
    return CALHOST_CANCELLED;
  if (e != CUDA_SUCCESS) {
    matmul_set_error(s->cu.mm.host, BACKEND ": cublasLtMatmul: status %d, %s", (int)s->last_status,
                     cu_error_name(api, e));
    cu_end_if_sticky(api, s->cu.mm.host, BACKEND, "run", e);
    return CALHOST_ERROR;
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

/* build_key: cu_instance_build_key with the cuBLASLt version in the
 * identity (lt_versions) and, as structure "library", in the portable key:
 * a policy is an algorithm configuration of one cuBLASLt version. */
static calhost_status lt_build_key(calhost_plugin_instance *inst, const calhost_workload *w,
                                   const calhost_target *t, calhost_built_key *out) {
  if (inst)
    snprintf(inst->cu.library_key, sizeof inst->cu.library_key, "cublasLt %zu", lt_version_of());
  return cu_instance_build_key(inst, w, t, out);
}
#define lt_candidate_count matmul_candidate_count

CALHOST_PLUGIN_DEFINE(lt, 2u, BACKEND, "1.1.0", matmul_operators,
                      "NVIDIA cuBLASLt matmul, its algorithm configuration calibrated per device",
                      .default_policy = lt_default_policy, .check = cu_session_check,
                      .device_count = cu_instance_device_count,
                      .list_device = cu_instance_list_device, .sample_workloads = lt_samples);
