/*
 * test_cublaslt_fake.c: cublaslt_fake: the cublaslt backend's host logic
 * over a fake cuBLASLt and a fake driver (no GPU; its plugin.c compiled
 * in): the enumeration queries capability counts first (a fake algorithm
 * with 600 tile ids that refuses a wrongly sized buffer, as cublasLt.h
 * documents), spreads its tries over every tile instead of the first
 * ones, varies the cluster and inner shapes on sm_90 only and the custom
 * option, interleaves the algorithm ids, and every candidate round-trips
 * through the validator; the default policy runs the heuristic's own
 * algorithm; run times whole CUDA graphs on the session's stream with the
 * operand sets rotating; a sticky error ends the process; every MatMul
 * structure (transposes, alpha, bias forms with beta, batches with a
 * shared operand) opens, runs and checks against the shared reference
 * over a fake cuBLASLt that computes from the descriptor and layouts the
 * plugin set.
 */
#define _GNU_SOURCE /* the plugin's dladdr */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>

#include <cmocka.h>

#include "../../plugins/cublaslt/plugin.c"

/* ---- the fake cuBLASLt ------------------------------------------------ */

#define FAKE_TILES 600
#define FAKE_STAGES 10
static const int g_ids[] = {5, 21, 66};
static int g_requested_ids;
static unsigned g_checks, g_matmuls, g_set_uses[8];
static cublasLtMatmulAlgo_t g_last_algo;
static int g_capturing;
static unsigned g_captured;

static cublasStatus_t f_get_ids(cublasLtHandle_t h, cublasComputeType_t c, cudaDataType_t s,
                                cudaDataType_t a, cudaDataType_t b, cudaDataType_t cc,
                                cudaDataType_t d, int requested, int ids[], int *ret) {
  (void)h, (void)c, (void)s, (void)a, (void)b, (void)cc, (void)d;
  g_requested_ids = requested;
  int n = requested < 3 ? requested : 3;
  for (int i = 0; i < n; i++)
    ids[i] = g_ids[i];
  *ret = n;
  return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t f_init(cublasLtHandle_t h, cublasComputeType_t c, cudaDataType_t s,
                             cudaDataType_t a, cudaDataType_t b, cudaDataType_t cc,
                             cudaDataType_t d, int id, cublasLtMatmulAlgo_t *algo) {
  (void)h, (void)c, (void)s, (void)a, (void)b, (void)cc, (void)d;
  memset(algo, 0, sizeof *algo);
  algo->data[0] = (uint64_t)id;
  return CUBLAS_STATUS_SUCCESS;
}

/* An array capability: its size for sizeInBytes 0, else exactly that size
 * or CUBLAS_STATUS_INVALID_VALUE (the header's contract). */
static cublasStatus_t array_cap(uint32_t count, void *buf, size_t size, size_t *written) {
  if (size == 0) {
    *written = count * sizeof(uint32_t);
    return CUBLAS_STATUS_SUCCESS;
  }
  if (size != count * sizeof(uint32_t) || !buf)
    return CUBLAS_STATUS_INVALID_VALUE;
  for (uint32_t i = 0; i < count; i++)
    ((uint32_t *)buf)[i] = i + 1;
  *written = size;
  return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t f_cap(const cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoCapAttributes_t at,
                            void *buf, size_t size, size_t *written) {
  (void)algo;
  int32_t v;
  switch (at) {
  case CUBLASLT_ALGO_CAP_TILE_IDS:
    return array_cap(FAKE_TILES, buf, size, written);
  case CUBLASLT_ALGO_CAP_STAGES_IDS:
    return array_cap(FAKE_STAGES, buf, size, written);
  case CUBLASLT_ALGO_CAP_SPLITK_SUPPORT:
  case CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT:
    v = 1;
    break;
  case CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK:
    v = 3;
    break;
  case CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX:
    v = 3;
    break;
  default:
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (size != sizeof v)
    return CUBLAS_STATUS_INVALID_VALUE;
  memcpy(buf, &v, sizeof v);
  *written = sizeof v;
  return CUBLAS_STATUS_SUCCESS;
}

/* The configuration in data[1..7] (data[0] the id). */
static int slot(cublasLtMatmulAlgoConfigAttributes_t at) {
  switch (at) {
  case CUBLASLT_ALGO_CONFIG_ID:
    return 0;
  case CUBLASLT_ALGO_CONFIG_TILE_ID:
    return 1;
  case CUBLASLT_ALGO_CONFIG_STAGES_ID:
    return 2;
  case CUBLASLT_ALGO_CONFIG_SPLITK_NUM:
    return 3;
  case CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME:
    return 4;
  case CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING:
    return 5;
  case CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION:
    return 6;
  case CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID:
    return 7;
  default: /* cluster: data[7]'s high half */
    return 8;
  }
}

static cublasStatus_t f_set(cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoConfigAttributes_t at,
                            const void *buf, size_t size) {
  uint64_t v = size == 2 ? *(const uint16_t *)buf : *(const uint32_t *)buf;
  int k = slot(at);
  if (k == 7)
    algo->data[7] = (algo->data[7] & ~0xffffull) | v;
  else if (k == 8)
    algo->data[7] = (algo->data[7] & 0xffffull) | (v << 16);
  else
    algo->data[k] = v;
  return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t f_get(const cublasLtMatmulAlgo_t *algo,
                            cublasLtMatmulAlgoConfigAttributes_t at, void *buf, size_t size,
                            size_t *written) {
  int k = slot(at);
  uint64_t v = k == 7 ? (algo->data[7] & 0xffff) : k == 8 ? algo->data[7] >> 16 : algo->data[k];
  if (size == 2)
    *(uint16_t *)buf = (uint16_t)v;
  else
    *(uint32_t *)buf = (uint32_t)v;
  *written = size;
  return CUBLAS_STATUS_SUCCESS;
}

/* Accepts all but every seventh tile. */
static cublasStatus_t f_check(cublasLtHandle_t h, cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t a,
                              cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
                              cublasLtMatrixLayout_t dd, const cublasLtMatmulAlgo_t *algo,
                              cublasLtMatmulHeuristicResult_t *r) {
  (void)h, (void)d, (void)a, (void)b, (void)c, (void)dd;
  g_checks++;
  memset(r, 0, sizeof *r);
  r->state = algo->data[1] % 7 == 0 ? CUBLAS_STATUS_NOT_SUPPORTED : CUBLAS_STATUS_SUCCESS;
  return r->state;
}

static cublasStatus_t f_matmul(cublasLtHandle_t h, cublasLtMatmulDesc_t d, const void *alpha,
                               const void *A, cublasLtMatrixLayout_t la, const void *B,
                               cublasLtMatrixLayout_t lb, const void *beta, const void *C,
                               cublasLtMatrixLayout_t lc, void *D, cublasLtMatrixLayout_t ld,
                               const cublasLtMatmulAlgo_t *algo, void *ws, size_t wss,
                               cudaStream_t stream) {
  (void)h, (void)d, (void)alpha, (void)la, (void)lb, (void)beta, (void)C, (void)lc, (void)D,
      (void)ld, (void)ws, (void)wss, (void)B;
  assert_ptr_equal(stream, (cudaStream_t)(uintptr_t)0x5757);
  g_last_algo = *algo;
  if (g_capturing) {
    g_captured++;
    g_set_uses[((uintptr_t)A - 0x1000) / 0x100]++; /* A is cuBLASLt's A: our B, set-indexed */
  } else {
    g_matmuls++;
  }
  return CUBLAS_STATUS_SUCCESS;
}

static uintptr_t g_next_handle = 0x100;
static cublasStatus_t f_create(cublasLtHandle_t *h) {
  *h = (cublasLtHandle_t)g_next_handle++;
  return CUBLAS_STATUS_SUCCESS;
}

static size_t f_version(void) {
  return 130100;
}

/* ---- the fake driver ---------------------------------------------------- */

static unsigned g_graph_launches, g_pairs;
static CUresult g_sync_result = CUDA_SUCCESS;
static CUstream g_recorded_on;

static CUresult CUDAAPI d_ctx(CUcontext c) {
  (void)c;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI d_stream_sync(CUstream s) {
  (void)s;
  return g_sync_result;
}
static CUresult CUDAAPI d_ctx_sync(void) {
  return g_sync_result;
}
static CUresult g_begin_result = CUDA_SUCCESS;
static unsigned g_begins;
static CUresult CUDAAPI d_begin(CUstream s, CUstreamCaptureMode m) {
  (void)s, (void)m;
  g_begins++;
  if (g_begin_result != CUDA_SUCCESS)
    return g_begin_result;
  g_capturing = 1;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI d_end(CUstream s, CUgraph *g) {
  (void)s;
  g_capturing = 0;
  *g = (CUgraph)(uintptr_t)0x6767;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI d_inst(CUgraphExec *e, CUgraph g, unsigned long long f) {
  (void)g, (void)f;
  *e = (CUgraphExec)(uintptr_t)0x7777;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI d_launch(CUgraphExec e, CUstream s) {
  (void)e, (void)s;
  g_graph_launches++;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI d_exec_destroy(CUgraphExec e) {
  (void)e;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI d_graph_destroy(CUgraph g) {
  (void)g;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI d_record(CUevent e, CUstream s) {
  (void)e;
  g_recorded_on = s;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI d_event_sync(CUevent e) {
  (void)e;
  return g_sync_result;
}
static CUresult CUDAAPI d_elapsed(float *ms, CUevent a, CUevent b) {
  (void)a, (void)b;
  *ms = 1.0f;
  g_pairs++;
  return CUDA_SUCCESS;
}
static unsigned g_resets;
static CUresult CUDAAPI d_copy_async(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
  (void)dst, (void)src, (void)n;
  assert_ptr_equal(s, (CUstream)(uintptr_t)0x5757); /* ordered before the products */
  g_resets++;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI d_error_name(CUresult r, const char **s) {
  *s = r == CUDA_ERROR_ILLEGAL_ADDRESS ? "CUDA_ERROR_ILLEGAL_ADDRESS" : "CUDA_ERROR";
  return CUDA_SUCCESS;
}

static cu_api g_fake_api;
static int g_exit_status;
static void fake_exit(int status) {
  g_exit_status = status;
}

typedef struct fixture {
  calhost_plugin_instance *inst;
  cu_device dev;
  calhost_session s;
  CUdeviceptr rot_a[4], rot_b[4];
} fixture;

static void setup(fixture *f, const cgemm_limits *l) {
  memset(&g_lt, 0, sizeof g_lt);
  g_lt.cublasLtMatmulAlgoGetIds = f_get_ids;
  g_lt.cublasLtMatmulAlgoInit = f_init;
  g_lt.cublasLtMatmulAlgoCapGetAttribute = f_cap;
  g_lt.cublasLtMatmulAlgoConfigSetAttribute = f_set;
  g_lt.cublasLtMatmulAlgoConfigGetAttribute = f_get;
  g_lt.cublasLtMatmulAlgoCheck = f_check;
  g_lt.cublasLtMatmul = f_matmul;
  g_lt.cublasLtGetVersion = f_version;
  g_lt.cublasLtCreate = f_create;
  g_lt_state = 1;
  memset(&g_fake_api, 0, sizeof g_fake_api);
  g_fake_api.cuCtxSetCurrent = d_ctx;
  g_fake_api.cuStreamSynchronize = d_stream_sync;
  g_fake_api.cuCtxSynchronize = d_ctx_sync;
  g_fake_api.cuStreamBeginCapture = d_begin;
  g_fake_api.cuStreamEndCapture = d_end;
  g_fake_api.cuGraphInstantiate = d_inst;
  g_fake_api.cuGraphLaunch = d_launch;
  g_fake_api.cuGraphExecDestroy = d_exec_destroy;
  g_fake_api.cuGraphDestroy = d_graph_destroy;
  g_fake_api.cuEventRecord = d_record;
  g_fake_api.cuEventSynchronize = d_event_sync;
  g_fake_api.cuEventElapsedTime = d_elapsed;
  g_fake_api.cuGetErrorName = d_error_name;
  g_fake_api.cuMemcpyDtoDAsync = d_copy_async; /* cuMemcpyDtoD stays NULL: never called */
  memset(f, 0, sizeof *f);
  assert_int_equal(lt_create(NULL, NULL, 0, &f->inst), CALHOST_OK);
  f->inst->cu.devs.api = &g_fake_api;
  f->dev.limits = *l;
  snprintf(f->dev.name, sizeof f->dev.name, "fake");
  f->s.inst = f->inst;
  f->s.lt = &g_lt;
  f->s.handle = (cublasLtHandle_t)(uintptr_t)0x4242;
  f->s.compute = CUBLAS_COMPUTE_32F;
  f->s.ab_type = CUDA_R_16BF;
  f->s.cu.inst = &f->inst->cu;
  f->s.cu.dev = &f->dev;
  f->s.cu.shape = (cu_shape){1024, 1024, 1024, 0, CG_BF16, MATMUL_SHAPE(1024, 1024, 1024, 0), 0};
  f->s.cu.stream = (CUstream)(uintptr_t)0x5757;
  f->s.cu.sets = 4;
  for (int i = 0; i < 4; i++) {
    f->rot_a[i] = 0x2000 + (CUdeviceptr)i * 0x100;
    f->rot_b[i] = 0x1000 + (CUdeviceptr)i * 0x100;
  }
  f->s.cu.rot_a = f->rot_a;
  f->s.cu.rot_b = f->rot_b;
  g_checks = g_matmuls = g_graph_launches = g_pairs = g_captured = 0;
  memset(g_set_uses, 0, sizeof g_set_uses);
  g_sync_result = CUDA_SUCCESS;
  g_begin_result = CUDA_SUCCESS;
  g_begins = 0;
}

static void teardown(fixture *f) {
  f->inst->cu.devs.api = NULL; /* nothing of the fake to release */
  lt_destroy(f->inst);
}

static void enumeration_spreads_over_the_capabilities(void **state) {
  (void)state;
  fixture f;
  char text[200], err[256];
  setup(&f, &cgemm_limits_sm90);
  enumerate(&f.s);
  uint32_t n = f.s.cu.mm.candidates, max_tile = 0, clusters = 0, inners = 0, customs = 0;
  assert_true(n > 12 && n <= CANDIDATE_MAX);
  assert_true(g_requested_ids > 64); /* not a 64-entry array */
  /* the ids take turns: the first three candidates are one of each */
  assert_int_equal(f.s.cands[0].v[LT_ALGO], 5);
  assert_int_equal(f.s.cands[1].v[LT_ALGO], 21);
  assert_int_equal(f.s.cands[2].v[LT_ALGO], 66);
  for (uint32_t i = 0; i < n; i++) {
    const lt_config *c = &f.s.cands[i];
    lt_config back;
    max_tile = c->v[LT_TILE] > max_tile ? c->v[LT_TILE] : max_tile;
    clusters += c->v[LT_CLUSTER] != 0;
    inners += c->v[LT_INNER] != 0;
    customs += c->v[LT_CUSTOM] != 0;
    assert_true(c->v[LT_TILE] >= 1 && c->v[LT_TILE] <= FAKE_TILES);
    assert_true(c->v[LT_TILE] % 7 != 0); /* AlgoCheck's refusals stay out */
    lt_format(c, text, sizeof text);
    if (lt_validate_policy(f.inst, text, strlen(text), err, sizeof err) != CALHOST_OK)
      fail_msg("candidate %u (%s) refused: %s", i, text, err);
    assert_int_equal(lt_parse(text, strlen(text), &back, NULL, 0), 0);
    assert_memory_equal(&back, c, sizeof back);
  }
  assert_true(max_tile > FAKE_TILES / 2); /* not the first tiles only */
  assert_true(clusters > 0 && inners > 0 && customs > 0);
  teardown(&f);
  /* sm_80: no cluster or inner shapes */
  setup(&f, &cgemm_limits_sm80);
  enumerate(&f.s);
  assert_true(f.s.cu.mm.candidates > 12);
  for (uint32_t i = 0; i < f.s.cu.mm.candidates; i++) {
    assert_int_equal(f.s.cands[i].v[LT_CLUSTER], 0);
    assert_int_equal(f.s.cands[i].v[LT_INNER], 0);
  }
  teardown(&f);
}

static void default_runs_the_heuristics_own_algorithm(void **state) {
  (void)state;
  fixture f;
  char text[200];
  setup(&f, &cgemm_limits_sm90);
  /* what the heuristic returned, with state its configuration does not show */
  f_init(NULL, 0, 0, 0, 0, 0, 0, 21, &f.s.heuristic_algo);
  uint32_t tile = 8;
  f_set(&f.s.heuristic_algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile);
  f.s.heuristic_algo.data[7] |= 0xabcd00000000ull; /* opaque bits */
  config_of(&g_lt, &f.s.heuristic_algo, &f.s.heuristic_first);
  lt_format(&f.s.heuristic_first, text, sizeof text);
  assert_int_equal(lt_prepare(&f.s, text, strlen(text)), CALHOST_OK);
  assert_true(g_matmuls > 0); /* the warm-up ran products */
  assert_memory_equal(&g_last_algo, &f.s.heuristic_algo, sizeof g_last_algo);
  /* another policy: the algorithm made from its configuration */
  lt_config other = f.s.heuristic_first;
  other.v[LT_TILE] = 9;
  lt_format(&other, text, sizeof text);
  assert_int_equal(lt_prepare(&f.s, text, strlen(text)), CALHOST_OK);
  assert_int_equal(g_last_algo.data[1], 9);
  assert_int_equal(g_last_algo.data[7] >> 32, 0);
  teardown(&f);
}

static void run_times_graphs_on_the_stream_with_rotation(void **state) {
  (void)state;
  fixture f;
  char text[200];
  calhost_run_result r = {{CALHOST_STRUCT_RUN_RESULT, 1, sizeof r}, -1};
  setup(&f, &cgemm_limits_sm90);
  lt_config c = {{21, 8, 1, 1, 0, 0, 0, 0, 0}};
  lt_format(&c, text, sizeof text);
  assert_int_equal(lt_prepare(&f.s, text, strlen(text)), CALHOST_OK);
  g_matmuls = g_pairs = 0;
  assert_int_equal(lt_run(&f.s, 100, &r), CALHOST_OK);
  /* one graph of 32 products (8 rotations of the 4 sets), launched 3 times,
   * then 4 products one by one: 4 event pairs of 1 ms */
  assert_int_equal(g_captured, 32);
  for (int i = 0; i < 4; i++)
    assert_int_equal(g_set_uses[i], 8);
  assert_int_equal(g_graph_launches, 3);
  assert_int_equal(g_matmuls, 4);
  assert_int_equal(g_pairs, 4);
  assert_ptr_equal(g_recorded_on, f.s.cu.stream); /* never the legacy stream */
  assert_true(r.device_seconds > 0.0039 && r.device_seconds < 0.0041);
  assert_int_equal(f.s.cu.mm.last_iterations, 100);
  /* a second run reuses the graph */
  assert_int_equal(lt_run(&f.s, 64, &r), CALHOST_OK);
  assert_int_equal(g_captured, 32);
  assert_int_equal(g_graph_launches, 5);
  /* accumulating: C = C0 on the session's stream before each run */
  f.s.cu.c0 = 0x9000;
  f.s.cu.shape.accumulate = 1;
  g_resets = 0;
  assert_int_equal(lt_run(&f.s, 32, &r), CALHOST_OK);
  assert_int_equal(g_resets, 1);
  /* a new candidate drops it */
  assert_int_equal(lt_prepare(&f.s, text, strlen(text)), CALHOST_OK);
  assert_null(f.s.cu.graph);
  teardown(&f);
}

static void without_a_graph_products_run_one_by_one(void **state) {
  (void)state;
  fixture f;
  char text[200];
  calhost_run_result r = {{CALHOST_STRUCT_RUN_RESULT, 1, sizeof r}, -1};
  setup(&f, &cgemm_limits_sm90);
  lt_config c = {{21, 8, 1, 1, 0, 0, 0, 0, 0}};
  lt_format(&c, text, sizeof text);
  assert_int_equal(lt_prepare(&f.s, text, strlen(text)), CALHOST_OK);
  g_begin_result = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  g_matmuls = g_pairs = 0;
  assert_int_equal(lt_run(&f.s, 100, &r), CALHOST_OK);
  assert_int_equal(g_matmuls, 100);
  assert_int_equal(g_pairs, 4); /* batches of 32, 32, 32, 4 */
  assert_int_equal(g_graph_launches, 0);
  assert_int_equal(lt_run(&f.s, 100, &r), CALHOST_OK);
  assert_int_equal(g_begins, 1); /* not tried again for this candidate */
  teardown(&f);
}

static void a_sticky_error_ends_the_child(void **state) {
  (void)state;
  fixture f;
  char text[200];
  calhost_run_result r = {{CALHOST_STRUCT_RUN_RESULT, 1, sizeof r}, -1};
  setup(&f, &cgemm_limits_sm90);
  lt_config c = {{21, 8, 1, 1, 0, 0, 0, 0, 0}};
  lt_format(&c, text, sizeof text);
  assert_int_equal(lt_prepare(&f.s, text, strlen(text)), CALHOST_OK);
  void (*saved)(int) = cu_sticky_exit;
  cu_sticky_exit = fake_exit;
  g_exit_status = -1;
  g_sync_result = CUDA_ERROR_ILLEGAL_ADDRESS;
  assert_int_equal(lt_run(&f.s, 40, &r), CALHOST_ERROR);
  assert_int_equal(g_exit_status, CU_STICKY_EXIT_STATUS);
  /* an ordinary error does not */
  g_exit_status = -1;
  g_sync_result = CUDA_ERROR_OUT_OF_MEMORY;
  assert_int_equal(lt_run(&f.s, 40, &r), CALHOST_ERROR);
  assert_int_equal(g_exit_status, -1);
  cu_sticky_exit = saved;
  g_sync_result = CUDA_SUCCESS;
  teardown(&f);
}

static void one_handle_per_device(void **state) {
  (void)state;
  fixture f;
  cu_device two[2];
  setup(&f, &cgemm_limits_sm90);
  memset(two, 0, sizeof two);
  f.inst->cu.devs.items = two;
  f.inst->cu.devs.count = 2;
  cublasLtHandle_t h0 = lt_handle_for(f.inst, &g_lt, 0), h1 = lt_handle_for(f.inst, &g_lt, 1);
  assert_non_null(h0);
  assert_non_null(h1);
  assert_ptr_not_equal(h0, h1);
  assert_ptr_equal(lt_handle_for(f.inst, &g_lt, 0), h0); /* created once */
  assert_null(lt_handle_for(f.inst, &g_lt, 2));
  f.inst->cu.devs.items = NULL;
  f.inst->cu.devs.count = 0;
  free(f.inst->handles); /* the fake handles need no cublasLtDestroy */
  f.inst->handles = NULL;
  f.inst->handle_count = 0;
  teardown(&f);
}

static void versions_enter_the_identity(void **state) {
  (void)state;
  char libs[96], found[2048];
  size_t (*saved)(void) = lt_version_of;
  lt_version_of = f_version;
  lt_versions(libs, sizeof libs, found, sizeof found);
  assert_string_equal(libs, "cublasLt 130100");
  lt_version_of = saved;
}

/* ---- structures: a fake that computes ------------------------------------ */

/* Host memory stands for device memory; the fake descriptor and layouts
 * record what the plugin set, and the fake cublasLtMatmul computes
 * cuBLASLt's column-major D = alpha op(A) op(B) + beta C from them (float32
 * and bfloat16 operands), so that the shared reference judges the
 * convention. */
typedef struct fake_layout {
  cudaDataType_t type;
  uint64_t rows, cols;
  int64_t ld, stride;
  int32_t batch;
} fake_layout;
typedef struct fake_desc {
  int32_t trans[2];
} fake_desc;

static fake_desc g_desc; /* the last descriptor set up */
static fake_layout g_layouts[3];
static int g_layout_count;
static float g_alpha, g_beta;
static const void *g_c_in;

static cublasStatus_t f_desc_create(cublasLtMatmulDesc_t *d, cublasComputeType_t c,
                                    cudaDataType_t scale) {
  assert_int_equal(c, CUBLAS_COMPUTE_32F);
  assert_int_equal(scale, CUDA_R_32F);
  *d = (cublasLtMatmulDesc_t)calloc(1, sizeof(fake_desc));
  g_layout_count = 0;
  return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t f_desc_set(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t at,
                                 const void *buf, size_t size) {
  fake_desc *fd = (fake_desc *)(void *)d;
  assert_int_equal(size, sizeof(int32_t));
  assert_true(at == CUBLASLT_MATMUL_DESC_TRANSA || at == CUBLASLT_MATMUL_DESC_TRANSB);
  memcpy(&fd->trans[at == CUBLASLT_MATMUL_DESC_TRANSB], buf, size);
  g_desc = *fd;
  return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t f_desc_destroy(cublasLtMatmulDesc_t d) {
  free(d);
  return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t f_layout_create(cublasLtMatrixLayout_t *l, cudaDataType t, uint64_t rows,
                                      uint64_t cols, int64_t ld) {
  fake_layout *fl = calloc(1, sizeof *fl);
  *fl = (fake_layout){t, rows, cols, ld, 0, 1};
  assert_true(ld >= (int64_t)rows); /* column-major: ld spans a column */
  *l = (cublasLtMatrixLayout_t)fl;
  return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t f_layout_set(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t at,
                                   const void *buf, size_t size) {
  fake_layout *fl = (fake_layout *)(void *)l;
  if (at == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT) {
    assert_int_equal(size, sizeof(int32_t));
    memcpy(&fl->batch, buf, size);
  } else {
    assert_int_equal(at, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET);
    assert_int_equal(size, sizeof(int64_t));
    memcpy(&fl->stride, buf, size);
  }
  return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t f_layout_destroy(cublasLtMatrixLayout_t l) {
  fake_layout *fl = (fake_layout *)(void *)l;
  if (g_layout_count < 3)
    g_layouts[g_layout_count++] = *fl; /* la, lb, lc in creation order */
  free(fl);
  return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t f_pref_create(cublasLtMatmulPreference_t *p) {
  *p = (cublasLtMatmulPreference_t)(uintptr_t)0x77;
  return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t f_pref_set(cublasLtMatmulPreference_t p,
                                 cublasLtMatmulPreferenceAttributes_t a, const void *b, size_t n) {
  (void)p, (void)a, (void)b, (void)n;
  return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t f_pref_destroy(cublasLtMatmulPreference_t p) {
  (void)p;
  return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t f_heuristic(cublasLtHandle_t h, cublasLtMatmulDesc_t d,
                                  cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                  cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t dd,
                                  cublasLtMatmulPreference_t p, int requested,
                                  cublasLtMatmulHeuristicResult_t r[], int *found) {
  (void)h, (void)d, (void)a, (void)b, (void)c, (void)dd, (void)p, (void)requested;
  memset(r, 0, sizeof *r);
  f_init(NULL, 0, 0, 0, 0, 0, 0, 21, &r[0].algo);
  uint32_t tile = 8;
  f_set(&r[0].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile);
  *found = 1;
  return CUBLAS_STATUS_SUCCESS;
}

static double element(const fake_layout *l, const void *base, int64_t index) {
  if (l->type == CUDA_R_32F)
    return ((const float *)base)[index];
  assert_int_equal(l->type, CUDA_R_16BF);
  uint32_t u = (uint32_t)((const uint16_t *)base)[index] << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* op(X)(i, j) of product p: X stored rows x cols column-major. */
static double op_at(const fake_layout *l, const void *x, int32_t trans, int64_t p, int64_t i,
                    int64_t j) {
  int64_t at = trans == CUBLAS_OP_N ? i + j * l->ld : j + i * l->ld;
  return element(l, x, p * l->stride + at);
}

static cublasStatus_t f_matmul_compute(cublasLtHandle_t h, cublasLtMatmulDesc_t d,
                                       const void *alpha, const void *A, cublasLtMatrixLayout_t la,
                                       const void *B, cublasLtMatrixLayout_t lb, const void *beta,
                                       const void *C, cublasLtMatrixLayout_t lc, void *D,
                                       cublasLtMatrixLayout_t ld, const cublasLtMatmulAlgo_t *algo,
                                       void *ws, size_t wss, cudaStream_t stream) {
  const fake_desc *fd = (const fake_desc *)(const void *)d;
  const fake_layout *a = (const fake_layout *)(const void *)la,
                    *b = (const fake_layout *)(const void *)lb,
                    *c = (const fake_layout *)(const void *)lc;
  (void)h, (void)algo, (void)ws, (void)wss;
  assert_ptr_equal(lc, ld);
  assert_ptr_equal(stream, (cudaStream_t)(uintptr_t)0x5757);
  g_alpha = *(const float *)alpha;
  g_beta = *(const float *)beta;
  g_c_in = C;
  g_matmuls++;
  int64_t m = fd->trans[0] == CUBLAS_OP_N ? (int64_t)a->rows : (int64_t)a->cols,
          k = fd->trans[0] == CUBLAS_OP_N ? (int64_t)a->cols : (int64_t)a->rows,
          n = fd->trans[1] == CUBLAS_OP_N ? (int64_t)b->cols : (int64_t)b->rows;
  assert_int_equal(k, fd->trans[1] == CUBLAS_OP_N ? (int64_t)b->rows : (int64_t)b->cols);
  assert_int_equal(m, (int64_t)c->rows);
  assert_int_equal(n, (int64_t)c->cols);
  assert_true(a->batch == c->batch && b->batch == c->batch);
  for (int64_t p = 0; p < c->batch; p++)
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < m; i++) {
        double sum = 0;
        for (int64_t l = 0; l < k; l++)
          sum += op_at(a, A, fd->trans[0], p, i, l) * op_at(b, B, fd->trans[1], p, l, j);
        int64_t at = p * c->stride + i + j * c->ld;
        ((float *)D)[at] = (float)(g_alpha * sum + g_beta * ((const float *)C)[at]);
      }
  return CUBLAS_STATUS_SUCCESS;
}

static CUresult CUDAAPI h_alloc(CUdeviceptr *p, size_t n) {
  *p = (CUdeviceptr)(uintptr_t)calloc(1, n ? n : 1);
  return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
static CUresult CUDAAPI h_free(CUdeviceptr p) {
  free((void *)(uintptr_t)p);
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI h_htod(CUdeviceptr d, const void *s, size_t n) {
  memcpy((void *)(uintptr_t)d, s, n);
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI h_dtoh(void *d, CUdeviceptr s, size_t n) {
  memcpy(d, (const void *)(uintptr_t)s, n);
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI h_dtod_async(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
  assert_ptr_equal(st, (CUstream)(uintptr_t)0x5757);
  memcpy((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI h_info(size_t *f, size_t *t) {
  *f = *t = 1ull << 30;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI h_stream(CUstream *s, unsigned flags) {
  (void)flags;
  *s = (CUstream)(uintptr_t)0x5757;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI h_stream_destroy(CUstream s) {
  (void)s;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI h_event(CUevent *e, unsigned flags) {
  (void)flags;
  *e = (CUevent)(uintptr_t)0x99;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI h_event_destroy(CUevent e) {
  (void)e;
  return CUDA_SUCCESS;
}

/* An instance with one fake sm_90 device whose memory is the host's, and
 * the computing fake cuBLASLt. */
static calhost_plugin_instance *structure_instance(void) {
  fixture f;
  setup(&f, &cgemm_limits_sm90);
  calhost_plugin_instance *inst = f.inst;
  g_lt.cublasLtMatmulDescCreate = f_desc_create;
  g_lt.cublasLtMatmulDescSetAttribute = f_desc_set;
  g_lt.cublasLtMatmulDescDestroy = f_desc_destroy;
  g_lt.cublasLtMatrixLayoutCreate = f_layout_create;
  g_lt.cublasLtMatrixLayoutSetAttribute = f_layout_set;
  g_lt.cublasLtMatrixLayoutDestroy = f_layout_destroy;
  g_lt.cublasLtMatmulPreferenceCreate = f_pref_create;
  g_lt.cublasLtMatmulPreferenceSetAttribute = f_pref_set;
  g_lt.cublasLtMatmulPreferenceDestroy = f_pref_destroy;
  g_lt.cublasLtMatmulAlgoGetHeuristic = f_heuristic;
  g_lt.cublasLtMatmul = f_matmul_compute;
  g_fake_api.cuMemAlloc = h_alloc;
  g_fake_api.cuMemFree = h_free;
  g_fake_api.cuMemcpyHtoD = h_htod;
  g_fake_api.cuMemcpyDtoH = h_dtoh;
  g_fake_api.cuMemcpyDtoDAsync = h_dtod_async;
  g_fake_api.cuMemGetInfo = h_info;
  g_fake_api.cuStreamCreate = h_stream;
  g_fake_api.cuStreamDestroy = h_stream_destroy;
  g_fake_api.cuEventCreate = h_event;
  g_fake_api.cuEventDestroy = h_event_destroy;
  cu_device *dev = calloc(1, sizeof *dev);
  dev->limits = cgemm_limits_sm90;
  dev->ctx = (CUcontext)(uintptr_t)0x31;
  snprintf(dev->name, sizeof dev->name, "fake");
  snprintf(dev->identity, sizeof dev->identity, "cuda:fake");
  inst->cu.devs.initialised = 1;
  inst->cu.devs.items = dev;
  inst->cu.devs.count = 1;
  return inst;
}

typedef struct structure_case {
  const char *dtype;
  int64_t mnk[3];
  calhost_property props[6];
  size_t count;
} structure_case;

/* Opens, runs once and checks each structure through the plugin's entries
 * over the computing fake; the descriptor and layouts asserted for each. */
static void structures_run_and_check_against_the_shared_reference(void **state) {
  (void)state;
  static const structure_case cases[] = {
      {"float32", {24, 20, 12}, {{"trans_a", "1"}}, 1},
      {"float32", {24, 20, 12}, {{"trans_b", "1"}}, 1},
      {"bfloat16", {17, 33, 9}, {{"trans_a", "1"}, {"trans_b", "1"}, {"alpha", "-0.5"}}, 3},
      {"float32", {24, 20, 12}, {{"bias", "scalar"}, {"beta", "0.5"}}, 2},
      {"float32", {24, 20, 12}, {{"bias", "n"}, {"trans_b", "1"}}, 2},
      {"float32", {24, 20, 12}, {{"bias", "m"}, {"beta", "-2"}}, 2},
      {"float32", {24, 20, 12}, {{"bias", "mn"}, {"alpha", "3"}}, 2},
      {"float32", {8, 20, 12}, {{"batch", "5"}, {"trans_a", "1"}}, 2},
      {"float32", {8, 20, 12}, {{"batch", "5"}, {"batch_a", "1"}, {"bias", "n"}}, 3},
      {"bfloat16", {8, 20, 12}, {{"batch", "4"}, {"batch_b", "1"}, {"trans_b", "1"}}, 3},
      {"float32", {8, 20, 12}, {{"accumulate", "1"}, {"batch", "3"}, {"alpha", "2"}}, 3},
  };
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    const structure_case *c = &cases[ci];
    calhost_plugin_instance *inst = structure_instance();
    calhost_workload w = {{CALHOST_STRUCT_WORKLOAD, 1, sizeof w},
                          "w",
                          "MatMul",
                          c->dtype,
                          c->mnk,
                          3,
                          c->props,
                          c->count,
                          NULL};
    calhost_target t = {
        {CALHOST_STRUCT_TARGET, 1, sizeof t}, "cuda:fake", 1, NULL, 0, "", "cuda:fake", 0};
    calhost_session *s = NULL;
    calhost_run_result r = {{CALHOST_STRUCT_RUN_RESULT, 1, sizeof r}, -1};
    char err[256], text[200];
    size_t len = 0;
    assert_int_equal(lt_open_session(inst, &w, &t, &s), CALHOST_OK);
    const matmul_shape shape = s->cu.shape.st, *st = &shape; /* kept past the close */
    assert_int_equal(s->cu.shape.structured, 1);
    /* the descriptor: cuBLASLt's A is our B, its B our A */
    assert_int_equal(g_desc.trans[0], st->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N);
    assert_int_equal(g_desc.trans[1], st->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N);
    assert_int_equal(lt_default_policy(s, text, sizeof text, &len), CALHOST_OK);
    assert_int_equal(lt_prepare(s, text, len), CALHOST_OK);
    /* cu_session_prepared ran products; a run of one from a reset C */
    assert_int_equal(lt_run(s, 1, &r), CALHOST_OK);
    assert_true(g_alpha == st->alpha);
    if (st->bias != MATMUL_BIAS_NONE) {
      assert_true(g_beta == st->beta);
      assert_ptr_equal(g_c_in, (const void *)(uintptr_t)s->cu.bias);
    } else {
      assert_true(g_beta == (st->accumulate ? 1.0f : 0.0f));
      assert_ptr_equal(g_c_in, (const void *)(uintptr_t)s->cu.c);
    }
    if (cu_session_check(s, err, sizeof err) != CALHOST_OK)
      fail_msg("case %zu: %s", ci, err);
    /* a wrong alpha is caught: the check is the structure's */
    if (st->alpha != 1.0f) {
      s->cu.shape.st.alpha = 1.0f;
      assert_int_equal(lt_run(s, 1, &r), CALHOST_OK);
      s->cu.shape.st.alpha = st->alpha;
      assert_int_equal(cu_session_check(s, err, sizeof err), CALHOST_CHECK_FAILED);
    }
    lt_close_session(s);
    /* the layouts (destroyed la, lb, lc in order) */
    assert_int_equal(g_layout_count, 3);
    uint64_t m = (uint64_t)c->mnk[1], n = (uint64_t)c->mnk[0], k = (uint64_t)c->mnk[2];
    assert_int_equal(g_layouts[0].rows, st->trans_b ? k : m);
    assert_int_equal(g_layouts[0].cols, st->trans_b ? m : k);
    assert_int_equal(g_layouts[1].rows, st->trans_a ? n : k);
    assert_int_equal(g_layouts[1].cols, st->trans_a ? k : n);
    assert_int_equal(g_layouts[2].rows, m);
    assert_int_equal(g_layouts[2].cols, n);
    assert_int_equal(g_layouts[0].type, strcmp(c->dtype, "float32") ? CUDA_R_16BF : CUDA_R_32F);
    assert_int_equal(g_layouts[2].type, CUDA_R_32F);
    for (int i = 0; i < 3; i++)
      assert_int_equal(g_layouts[i].batch, (int32_t)st->batch);
    if (st->batch > 1) {
      assert_int_equal(g_layouts[0].stride == 0, st->batch_b == 1);
      assert_int_equal(g_layouts[1].stride == 0, st->batch_a == 1);
      assert_true(g_layouts[2].stride >= (int64_t)(m * n));
    }
    inst->cu.devs.api = NULL;
    lt_destroy(inst);
  }
  /* and what one strided call cannot express is declined before any
   * device work */
  calhost_plugin_instance *inst = structure_instance();
  int64_t mnk[] = {8, 8, 8};
  calhost_property mid[] = {{"batch", "4"}, {"batch_a", "2"}};
  calhost_workload w = {
      {CALHOST_STRUCT_WORKLOAD, 1, sizeof w}, "w", "MatMul", "float32", mnk, 3, mid, 2, NULL};
  calhost_target t = {
      {CALHOST_STRUCT_TARGET, 1, sizeof t}, "cuda:fake", 1, NULL, 0, "", "cuda:fake", 0};
  calhost_session *s = NULL;
  assert_int_equal(lt_open_session(inst, &w, &t, &s), CALHOST_UNSUPPORTED);
  assert_null(s);
  inst->cu.devs.api = NULL;
  lt_destroy(inst);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(enumeration_spreads_over_the_capabilities),
      cmocka_unit_test(default_runs_the_heuristics_own_algorithm),
      cmocka_unit_test(run_times_graphs_on_the_stream_with_rotation),
      cmocka_unit_test(without_a_graph_products_run_one_by_one),
      cmocka_unit_test(a_sticky_error_ends_the_child),
      cmocka_unit_test(one_handle_per_device),
      cmocka_unit_test(versions_enter_the_identity),
      cmocka_unit_test(structures_run_and_check_against_the_shared_reference),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
