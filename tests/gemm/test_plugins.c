/*
 * test_plugins.c: the cpu_gemm and openblas plugins driven like the host
 * drives them: dlopen of the built .so, negotiation, hidden internals,
 * deterministic keys, refused workloads and settings, every candidate of
 * small sessions validated, prepared, run and checked (overwrite and
 * accumulate, 1 and 2 threads), the validator on random bytes, the
 * shared reference check catching wrong, NaN and Inf outputs, and the
 * backends' shared glue (matmul.c: policy-text preconditions, build_key,
 * session allocation, the run loop with its cancellation, check) linked
 * directly under a fake backend.
 */
#include <dlfcn.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <calhost/plugin.h>

#include "gemm.h"
#include "matmul.h"
#include "policy.h"
#include "test_host.h"

/* ---- the tests' minimal host (tests/common/test_host.c) ---------------- */

typedef test_host_plugin loaded;

/* Loads build/lib/calhost/plugins/<name>.so (ABI 1); returns 0, or -1 when absent. */
static int load(const char *name, loaded *out) {
  char path[1024];
  const char *dir = getenv("CALHOST_BUILD_DIR");
  snprintf(path, sizeof path, "%s/lib/calhost/plugins/%s.so", dir ? dir : ".", name);
  if (access(path, F_OK) != 0)
    return -1;
  if (test_host_load(path, 1, 1, out) != 0)
    fail_msg("%s", test_host_error);
  assert_int_equal(out->abi, 1);
  assert_non_null(out->vt);
  assert_string_equal(out->vt->backend_name, name);
  assert_string_equal(out->vt->operators[0], "MatMul");
  assert_null(out->vt->operators[1]);
  return 0;
}

static void unload(loaded *l) {
  test_host_unload(l);
}

static calhost_workload workload(const char *op, const char *dtype, const int64_t *shape,
                                 size_t rank, const calhost_property *props, size_t nprops) {
  calhost_workload w;
  memset(&w, 0, sizeof w);
  w.header = (calhost_struct_header){CALHOST_STRUCT_WORKLOAD, 1, sizeof w};
  w.name = "test";
  w.operator_name = op;
  w.dtype = dtype;
  w.shape = shape;
  w.shape_rank = rank;
  w.properties = props;
  w.property_count = nprops;
  w.model_digest = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
  return w;
}

static const int cpus[] = {0, 1};

static calhost_target target(uint32_t threads, const char *features) {
  calhost_target t;
  memset(&t, 0, sizeof t);
  t.header = (calhost_struct_header){CALHOST_STRUCT_TARGET, 1, sizeof t};
  t.processor = "test-cpu";
  t.thread_count = threads;
  t.cpus = cpus;
  t.cpu_count = 1;
  t.features = features;
  return t;
}

/* Runs every candidate (or every `stride`-th) of a session and the default:
 * serialize, validate, prepare, run, check. Returns the candidate count. */
static uint32_t sweep(loaded *l, const calhost_workload *w, const calhost_target *t,
                      uint32_t stride) {
  calhost_session *s = NULL;
  uint32_t count = 0;
  char policy[256], err[256];
  size_t len;
  assert_int_equal(l->vt->open_session(l->inst, w, t, &s), CALHOST_OK);
  assert_int_equal(l->vt->candidate_count(s, &count), CALHOST_OK);
  assert_true(count >= 1);
  for (uint32_t i = 0; i <= count; i += stride) {
    calhost_run_result rr = {{CALHOST_STRUCT_RUN_RESULT, 1, sizeof rr}, -1.0};
    if (i == count)
      assert_int_equal(l->vt->default_policy(s, policy, sizeof policy, &len), CALHOST_OK);
    else
      assert_int_equal(l->vt->serialize_candidate(s, i, policy, sizeof policy, &len), CALHOST_OK);
    assert_int_equal(len, strlen(policy));
    if (l->vt->validate_policy(l->inst, policy, len, err, sizeof err) != CALHOST_OK)
      fail_msg("%s: candidate %u '%s' refused: %s", l->vt->backend_name, i, policy, err);
    assert_int_equal(l->vt->prepare(s, policy, len), CALHOST_OK);
    assert_int_equal(l->vt->run(s, 1, &rr), CALHOST_OK);
    if (l->vt->check(s, err, sizeof err) != CALHOST_OK)
      fail_msg("%s: candidate '%s' failed its check: %s", l->vt->backend_name, policy, err);
    assert_int_equal(l->vt->run(s, 3, &rr), CALHOST_OK);
    if (l->vt->check(s, err, sizeof err) != CALHOST_OK)
      fail_msg("%s: candidate '%s' failed after 3 iterations: %s", l->vt->backend_name, policy,
               err);
    if (i + stride > count && i != count)
      i = count - stride; /* always end with the default */
  }
  /* a too-small buffer reports the size needed */
  assert_int_equal(l->vt->serialize_candidate(s, 0, policy, 2, &len), CALHOST_BUFFER_TOO_SMALL);
  assert_true(len > 2);
  assert_int_equal(l->vt->serialize_candidate(s, count, policy, sizeof policy, &len),
                   CALHOST_INVALID_ARGUMENT);
  l->vt->close_session(s);
  return count;
}

static const int64_t odd_shapes[][3] = {{1, 1, 1}, {17, 31, 13}, {5, 40, 1}, {33, 9, 70}};

/* ---- cpu_gemm ------------------------------------------------------------ */

static void cpu_gemm_exports_no_internal_symbol(void **state) {
  loaded l;
  (void)state;
  assert_int_equal(load("cpu_gemm", &l), 0);
  assert_null(dlsym(l.dl, "gemm_sgemm"));
  assert_null(dlsym(l.dl, "cpu_gemm_policy_parse"));
  assert_null(dlsym(l.dl, "matmul_check"));
  unload(&l);
}

static void cpu_gemm_builds_the_same_key_every_time(void **state) {
  loaded l;
  int64_t big[] = {1024, 1024, 1024}, small[] = {32, 32, 32};
  calhost_property acc = {"accumulate", "1"};
  calhost_workload wb = workload("MatMul", "float32", big, 3, NULL, 0);
  calhost_workload ws = workload("MatMul", "float32", small, 3, &acc, 1);
  calhost_target t2 = target(2, "sse4_2 avx2 fma");
  calhost_built_key k1, k2;
  char first[512], second[512];
  (void)state;
  assert_int_equal(load("cpu_gemm", &l), 0);
  assert_int_equal(l.vt->build_key(l.inst, &wb, &t2, &k1), CALHOST_OK);
  snprintf(first, sizeof first, "%s|%s|%u", k1.model_digest, k1.processor, k1.thread_count);
  for (size_t i = 0; i < k1.structure_count; i++)
    snprintf(first + strlen(first), sizeof first - strlen(first), "|%s=%s", k1.structure[i].name,
             k1.structure[i].value);
  assert_int_equal(l.vt->build_key(l.inst, &wb, &t2, &k2), CALHOST_OK);
  snprintf(second, sizeof second, "%s|%s|%u", k2.model_digest, k2.processor, k2.thread_count);
  for (size_t i = 0; i < k2.structure_count; i++)
    snprintf(second + strlen(second), sizeof second - strlen(second), "|%s=%s",
             k2.structure[i].name, k2.structure[i].value);
  assert_string_equal(first, second);
  /* the target's features say avx2; a processor (or CALHOST_CPU_GEMM_MAX_ISA)
   * without it caps the class at portable */
  assert_non_null(strstr(first, gemm_isa_detect() >= GEMM_ISA_AVX2
                                    ? "|2|dtype=float32|m=1024|n=1024|k=1024|accumulate=0|isa=avx2"
                                    : "|2|dtype=float32|m=1024|n=1024|k=1024|accumulate=0|"
                                      "isa=portable"));
  /* a small product uses one thread whatever the target offers */
  assert_int_equal(l.vt->build_key(l.inst, &ws, &t2, &k1), CALHOST_OK);
  assert_int_equal(k1.thread_count, 1);
  assert_string_equal(k1.structure[4].value, "1");
  unload(&l);
}

static void cpu_gemm_refuses_bad_workloads(void **state) {
  loaded l;
  int64_t shape[] = {4, 4, 4}, zero[] = {4, 0, 4};
  calhost_property bad_acc = {"accumulate", "2"}, unknown = {"transpose_a", "1"};
  calhost_target t = target(1, NULL);
  calhost_built_key k;
  calhost_session *s = NULL;
  calhost_workload w;
  calhost_property setting = {"colour", "blue"}, isa_bad = {"max_isa", "sse9"};
  calhost_plugin_instance *inst = NULL;
  (void)state;
  assert_int_equal(load("cpu_gemm", &l), 0);
  w = workload("Conv", "float32", shape, 3, NULL, 0);
  assert_int_equal(l.vt->build_key(l.inst, &w, &t, &k), CALHOST_UNSUPPORTED);
  w = workload("MatMul", "float16", shape, 3, NULL, 0);
  assert_int_equal(l.vt->build_key(l.inst, &w, &t, &k), CALHOST_UNSUPPORTED);
  w = workload("MatMul", "float32", shape, 2, NULL, 0);
  assert_int_equal(l.vt->build_key(l.inst, &w, &t, &k), CALHOST_INVALID_ARGUMENT);
  w = workload("MatMul", "float32", zero, 3, NULL, 0);
  assert_int_equal(l.vt->open_session(l.inst, &w, &t, &s), CALHOST_UNSUPPORTED);
  w = workload("MatMul", "float32", shape, 3, &bad_acc, 1);
  assert_int_equal(l.vt->build_key(l.inst, &w, &t, &k), CALHOST_INVALID_ARGUMENT);
  w = workload("MatMul", "float32", shape, 3, &unknown, 1);
  assert_int_equal(l.vt->build_key(l.inst, &w, &t, &k), CALHOST_UNSUPPORTED);
  assert_non_null(strstr(test_host_error, "transpose_a"));
  assert_null(s);
  assert_int_equal(l.vt->create(&test_host_services, &setting, 1, &inst), CALHOST_INVALID_ARGUMENT);
  assert_non_null(strstr(test_host_error, "colour"));
  assert_int_equal(l.vt->create(&test_host_services, &isa_bad, 1, &inst), CALHOST_INVALID_ARGUMENT);
  assert_null(inst);
  unload(&l);
}

static void cpu_gemm_sessions_run_and_check_every_candidate(void **state) {
  loaded l;
  calhost_property acc = {"accumulate", "1"};
  (void)state;
  assert_int_equal(load("cpu_gemm", &l), 0);
  for (size_t i = 0; i < sizeof odd_shapes / sizeof odd_shapes[0]; i++)
    for (int a = 0; a < 2; a++) {
      calhost_workload w = workload("MatMul", "float32", odd_shapes[i], 3, &acc, (size_t)a);
      calhost_target t = target(1, NULL);
      sweep(&l, &w, &t, 1);
    }
  { /* a product on a two-thread target: a sample of the space */
    int64_t shape[] = {96, 130, 200};
    calhost_workload w = workload("MatMul", "float32", shape, 3, &acc, 1);
    calhost_target t = target(2, NULL);
    calhost_built_key k;
    uint32_t n = sweep(&l, &w, &t, 17);
    /* the plugin's own enumeration on this processor (or under
     * CALHOST_CPU_GEMM_MAX_ISA) for the threads it will really use */
    assert_int_equal(l.vt->build_key(l.inst, &w, &t, &k), CALHOST_OK);
    assert_int_equal(n, cpu_gemm_candidates((int)gemm_isa_detect(), 96, 130, 200, k.thread_count,
                                            NULL, 0));
    assert_true(n >= 6);
  }
  unload(&l);
}

/* max_isa=portable: only portable kernels, and the validator refuses others. */
static void cpu_gemm_max_isa_portable_limits_kernels_and_the_validator(void **state) {
  loaded l;
  calhost_property setting = {"max_isa", "portable"};
  calhost_plugin_instance *inst = NULL;
  int64_t shape[] = {300, 300, 300};
  calhost_workload w = workload("MatMul", "float32", shape, 3, NULL, 0);
  calhost_target t = target(1, NULL);
  calhost_session *s = NULL;
  uint32_t count;
  char policy[256], err[256];
  size_t len;
  (void)state;
  assert_int_equal(load("cpu_gemm", &l), 0);
  assert_int_equal(l.vt->create(&test_host_services, &setting, 1, &inst), CALHOST_OK);
  assert_int_equal(l.vt->open_session(inst, &w, &t, &s), CALHOST_OK);
  assert_int_equal(l.vt->candidate_count(s, &count), CALHOST_OK);
  for (uint32_t i = 0; i < count; i++) {
    assert_int_equal(l.vt->serialize_candidate(s, i, policy, sizeof policy, &len), CALHOST_OK);
    assert_non_null(strstr(policy, "kernel=gen_"));
  }
  assert_int_equal(l.vt->validate_policy(inst, "kernel=avx2_6x16;mc=96;nc=256;kc=128;split=n", 44,
                                         err, sizeof err),
                   CALHOST_INVALID_ARGUMENT);
  assert_non_null(strstr(err, "needs avx2"));
  assert_int_equal(l.vt->prepare(s, "kernel=avx2_6x16;mc=96;nc=256;kc=128;split=n", 44),
                   CALHOST_INVALID_ARGUMENT);
  /* run before a successful prepare, and check before a run, are refused */
  assert_int_equal(l.vt->run(s, 1, NULL), CALHOST_INVALID_ARGUMENT);
  assert_int_equal(l.vt->check(s, err, sizeof err), CALHOST_CHECK_FAILED);
  l.vt->close_session(s);
  l.vt->destroy(inst);
  unload(&l);
}

/* ABI 2: the candidates as named parameters. Every numbered candidate is a
 * valid point that serializes back to its policy, no other point of the
 * product is valid (each refused with a reason), and bad assignments are
 * refused, never a crash. */
static void cpu_gemm_describes_its_candidates_as_named_parameters(void **state) {
  loaded l;
  char path[1024], policy[256], again[256], err[256];
  const char *dir = getenv("CALHOST_BUILD_DIR");
  int64_t shape[] = {300, 300, 300};
  calhost_workload w = workload("MatMul", "float32", shape, 3, NULL, 0);
  calhost_target t = target(2, NULL);
  calhost_session *s = NULL;
  uint32_t count = 0, a[5], b[5];
  size_t len;
  (void)state;
  snprintf(path, sizeof path, "%s/lib/calhost/plugins/cpu_gemm.so", dir ? dir : ".");
  if (test_host_load(path, 1, 2, &l) != 0)
    fail_msg("%s", test_host_error);
  assert_int_equal(l.abi, 2);
  assert_int_equal(l.vt->open_session(l.inst, &w, &t, &s), CALHOST_OK);
  assert_int_equal(l.vt->candidate_count(s, &count), CALHOST_OK);
  calhost_parameter_space ps;
  memset(&ps, 0, sizeof ps);
  ps.header = (calhost_struct_header){CALHOST_STRUCT_PARAMETER_SPACE, 1, sizeof ps};
  assert_int_equal(l.vt->describe_space(s, &ps), CALHOST_OK);
  assert_int_equal(ps.parameter_count, 5);
  const char *names[] = {"kernel", "mc", "nc", "kc", "split"};
  size_t product = 1;
  for (uint32_t p = 0; p < 5; p++) {
    const calhost_parameter *q = &ps.parameters[p];
    assert_string_equal(q->name, names[p]);
    assert_int_equal((q->flags & CALHOST_PARAMETER_ORDERED) != 0, p >= 1 && p <= 3);
    for (uint32_t v = 1; p >= 1 && p <= 3 && v < q->value_count; v++)
      assert_true(atoi(q->values[v - 1]) < atoi(q->values[v])); /* increasing */
    product *= q->value_count;
  }
  assert_int_equal(ps.parameters[4].value_count, 3); /* two threads: n, m, s */
  assert_null(ps.default_assignment);                /* nc=512 is not a point */
  for (uint32_t i = 0; i < count; i++) {
    assert_int_equal(l.vt->serialize_candidate(s, i, policy, sizeof policy, &len), CALHOST_OK);
    assert_int_equal(l.vt->policy_assignment(s, policy, len, a, 5), CALHOST_OK);
    assert_int_equal(l.vt->assignment_valid(s, a, 5, err, sizeof err), CALHOST_OK);
    assert_int_equal(l.vt->serialize_assignment(s, a, 5, again, sizeof again, &len), CALHOST_OK);
    assert_string_equal(again, policy);
  }
  size_t valid = 0;
  for (size_t at = 0; at < product; at++) {
    size_t rest = at;
    for (int p = 4; p >= 0; p--) {
      b[p] = (uint32_t)(rest % ps.parameters[p].value_count);
      rest /= ps.parameters[p].value_count;
    }
    err[0] = '\0';
    if (l.vt->assignment_valid(s, b, 5, err, sizeof err) == CALHOST_OK)
      valid++;
    else
      assert_true(strlen(err) > 10);
  }
  assert_int_equal(valid, count);
  /* out of range, wrong count, a policy outside this shape's candidates */
  a[0] = ps.parameters[0].value_count;
  assert_int_equal(l.vt->assignment_valid(s, a, 5, err, sizeof err), CALHOST_INVALID_ARGUMENT);
  assert_non_null(strstr(err, "out of range"));
  assert_int_equal(l.vt->serialize_assignment(s, a, 5, again, sizeof again, &len),
                   CALHOST_INVALID_ARGUMENT);
  assert_int_equal(l.vt->assignment_valid(s, b, 4, err, sizeof err), CALHOST_INVALID_ARGUMENT);
  assert_int_equal(l.vt->default_policy(s, policy, sizeof policy, &len), CALHOST_OK);
  assert_int_equal(l.vt->policy_assignment(s, policy, len, a, 5), CALHOST_INVALID_ARGUMENT);
  assert_int_equal(l.vt->policy_assignment(s, "kernel=nope", 11, a, 5), CALHOST_INVALID_ARGUMENT);
  l.vt->close_session(s);
  unload(&l);
}

static void fuzz_validator(loaded *l) {
  uint64_t s = 7;
  char err[128];
  for (int round = 0; round < 5000; round++) {
    size_t len = (size_t)(s % 100);
    char *buf = malloc(len ? len : 1);
    assert_non_null(buf);
    for (size_t i = 0; i < len; i++) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      buf[i] = (char)(s >> 56);
    }
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    (void)l->vt->validate_policy(l->inst, buf, len, err, sizeof err);
    free(buf);
  }
}

static void validators_survive_random_bytes(void **state) {
  loaded l;
  (void)state;
  assert_int_equal(load("cpu_gemm", &l), 0);
  fuzz_validator(&l);
  unload(&l);
  if (load("openblas", &l) == 0) {
    fuzz_validator(&l);
    unload(&l);
  }
}

/* ---- openblas ------------------------------------------------------------ */

static void openblas_validates_threads_and_computes_odd_shapes(void **state) {
  loaded l;
  calhost_property acc = {"accumulate", "1"};
  char err[256];
  static const char *const bad[] = {"",           "threads=",   "threads=0", "threads=01",
                                    "threads=-1", "threads=2;", "thread=2",  "threads=99999",
                                    "threads=2 ", "threads=1x", "THREADS=1", "threads=257"};
  (void)state;
  if (load("openblas", &l) != 0) {
    if (CALHOST_OPENBLAS_BUILT)
      fail_msg("cannot load the openblas plugin (built: CALHOST_OPENBLAS=ON)");
    print_message("openblas plugin off (CALHOST_OPENBLAS=OFF); skipped\n");
    skip();
  }
  assert_non_null(strstr(l.vt->implementation_version, "openblas"));
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if (l.vt->validate_policy(l.inst, bad[i], strlen(bad[i]), err, sizeof err) !=
        CALHOST_INVALID_ARGUMENT)
      fail_msg("openblas accepted '%s'", bad[i]);
  assert_int_equal(l.vt->validate_policy(l.inst, "threads=3", 9, err, sizeof err), CALHOST_OK);
  for (size_t i = 0; i < sizeof odd_shapes / sizeof odd_shapes[0]; i++)
    for (int a = 0; a < 2; a++) {
      calhost_workload w = workload("MatMul", "float32", odd_shapes[i], 3, &acc, (size_t)a);
      calhost_target t = target(2, NULL);
      assert_int_equal(sweep(&l, &w, &t, 1), 2);
    }
  { /* more threads than the target offers is refused at prepare */
    calhost_workload w = workload("MatMul", "float32", odd_shapes[1], 3, NULL, 0);
    calhost_target t = target(1, NULL);
    calhost_session *s = NULL;
    calhost_built_key k;
    assert_int_equal(l.vt->open_session(l.inst, &w, &t, &s), CALHOST_OK);
    assert_int_equal(l.vt->prepare(s, "threads=2", 9), CALHOST_INVALID_ARGUMENT);
    l.vt->close_session(s);
    assert_int_equal(l.vt->build_key(l.inst, &w, &t, &k), CALHOST_OK);
    assert_int_equal(k.thread_count, 1);
    assert_int_equal(k.structure_count, 5);
  }
  unload(&l);
}

/* ---- the MatMul structures (plugin-sdk/README.md) ------------------------ */

typedef struct structure_case {
  const char *label;
  calhost_property props[4];
  size_t count;
} structure_case;

/* What exporters write: Gemm's transposes, alpha, beta with a bias in each
 * broadcast form, batched MatMuls (one A shared, both broadcast, one B
 * shared), some with accumulate. */
static const structure_case structures[] = {
    {"trans_a", {{"trans_a", "1"}}, 1},
    {"linear", {{"bias", "n"}, {"trans_b", "1"}}, 2},
    {"trans_ab_alpha", {{"alpha", "0.5"}, {"trans_a", "1"}, {"trans_b", "1"}}, 3},
    {"bias_scalar_beta", {{"beta", "2"}, {"bias", "scalar"}}, 2},
    {"bias_m_alpha", {{"alpha", "-1.5"}, {"bias", "m"}}, 2},
    {"bias_mn_acc", {{"accumulate", "1"}, {"beta", "0.25"}, {"bias", "mn"}}, 3},
    {"batch", {{"batch", "3"}}, 1},
    {"batch_shared_a", {{"batch", "6"}, {"batch_a", "1"}}, 2},
    {"batch_broadcast", {{"batch", "6"}, {"batch_a", "2"}, {"batch_b", "3"}}, 3},
    {"batch_shared_b_trans_acc",
     {{"accumulate", "1"}, {"batch", "4"}, {"batch_b", "1"}, {"trans_b", "1"}},
     4},
};
#define STRUCTURE_COUNT (sizeof structures / sizeof structures[0])

static const int64_t structure_shapes[][3] = {{17, 31, 13}, {5, 40, 1}, {33, 9, 70}};

/* Every structure on odd shapes, a sample of the candidates of each (and
 * the default) run and checked against the reference. */
static void sweep_structures(loaded *l, uint32_t stride) {
  for (size_t c = 0; c < STRUCTURE_COUNT; c++)
    for (size_t i = 0; i < sizeof structure_shapes / sizeof structure_shapes[0]; i++) {
      calhost_workload w = workload("MatMul", "float32", structure_shapes[i], 3,
                                    structures[c].props, structures[c].count);
      calhost_target t = target(1, NULL);
      calhost_built_key k;
      if (l->vt->build_key(l->inst, &w, &t, &k) != CALHOST_OK)
        fail_msg("%s declined %s: %s", l->vt->backend_name, structures[c].label, test_host_error);
      sweep(l, &w, &t, stride);
    }
}

static void cpu_gemm_runs_every_structure(void **state) {
  loaded l;
  int64_t shape[] = {96, 130, 200};
  calhost_property bcast[] = {{"batch", "6"}, {"batch_a", "2"}, {"batch_b", "3"}};
  calhost_workload w = workload("MatMul", "float32", shape, 3, bcast, 3);
  calhost_target t = target(2, NULL);
  calhost_session *s = NULL;
  char policy[256];
  size_t len;
  uint32_t count = 0, with_b = 0;
  (void)state;
  assert_int_equal(load("cpu_gemm", &l), 0);
  sweep_structures(&l, 11);
  /* a batch worth two threads: split b (whole products per thread) among
   * the candidates, and a sample of them (every residue of the splits) */
  assert_int_equal(l.vt->open_session(l.inst, &w, &t, &s), CALHOST_OK);
  assert_int_equal(l.vt->candidate_count(s, &count), CALHOST_OK);
  for (uint32_t i = 0; i < count; i++) {
    assert_int_equal(l.vt->serialize_candidate(s, i, policy, sizeof policy, &len), CALHOST_OK);
    with_b += strstr(policy, "split=b") != NULL;
  }
  assert_int_equal(with_b * 4, count);
  l.vt->close_session(s);
  sweep(&l, &w, &t, 13);
  unload(&l);
}

static void openblas_runs_every_structure(void **state) {
  loaded l;
  (void)state;
  if (load("openblas", &l) != 0) {
    if (CALHOST_OPENBLAS_BUILT)
      fail_msg("cannot load the openblas plugin (built: CALHOST_OPENBLAS=ON)");
    skip();
  }
  sweep_structures(&l, 1);
  unload(&l);
}

/* The portable key of each structure: distinct from every other and from
 * the plain product's, which stays as before; properties at their default
 * leave the key alone; numbers are canonical; names in order. */
static void structures_never_share_a_key(void **state) {
  loaded l;
  int64_t shape[] = {64, 48, 32};
  calhost_target t = target(1, "avx2 fma");
  char keys[STRUCTURE_COUNT + 1][512];
  calhost_built_key k;
  (void)state;
  assert_int_equal(load("cpu_gemm", &l), 0);
  for (size_t c = 0; c <= STRUCTURE_COUNT; c++) {
    calhost_workload w =
        workload("MatMul", "float32", shape, 3, c < STRUCTURE_COUNT ? structures[c].props : NULL,
                 c < STRUCTURE_COUNT ? structures[c].count : 0);
    assert_int_equal(l.vt->build_key(l.inst, &w, &t, &k), CALHOST_OK);
    keys[c][0] = '\0';
    for (size_t i = 0; i < k.structure_count; i++) {
      snprintf(keys[c] + strlen(keys[c]), sizeof keys[c] - strlen(keys[c]), "|%s=%s",
               k.structure[i].name, k.structure[i].value);
      if (i > 5)
        assert_true(strcmp(k.structure[i - 1].name, k.structure[i].name) < 0 ||
                    strcmp(k.structure[i].name, "isa") == 0);
    }
    for (size_t d = 0; d < c; d++)
      if (strcmp(keys[c], keys[d]) == 0)
        fail_msg("%s and %s share the key %s", structures[c].label, structures[d].label, keys[c]);
  }
  { /* the plain key as before; the structures' properties before isa
     * (whatever class this processor, or CALHOST_CPU_GEMM_MAX_ISA, gives) */
    static const char plain[] = "|dtype=float32|m=64|n=48|k=32|accumulate=0";
    const char *isa = keys[STRUCTURE_COUNT] + strlen(plain);
    char want[1024];
    assert_memory_equal(keys[STRUCTURE_COUNT], plain, strlen(plain));
    assert_true(!strncmp(isa, "|isa=", 5) && !strchr(isa + 1, '|'));
    snprintf(want, sizeof want, "%s|alpha=0.5|trans_a=1|trans_b=1%s", plain, isa);
    assert_string_equal(keys[2], want);
    snprintf(want, sizeof want, "|dtype=float32|m=64|n=48|k=32|accumulate=1|beta=0.25|bias=mn%s",
             isa);
    assert_string_equal(keys[5], want);
    snprintf(want, sizeof want, "%s|batch=6|batch_a=2|batch_b=3%s", plain, isa);
    assert_string_equal(keys[8], want);
  }
  { /* defaults written out: the plain key; "1.0", "0.50" canonical */
    calhost_property dflt[] = {
        {"alpha", "1.0"}, {"batch", "1"}, {"trans_a", "0"}, {"trans_b", "0"}};
    calhost_property same[] = {{"batch", "6"}, {"batch_a", "6"}, {"batch_b", "6"}};
    calhost_property half[] = {{"alpha", "0.50"}, {"beta", "1"}, {"bias", "n"}};
    calhost_workload w = workload("MatMul", "float32", shape, 3, dflt, 4);
    assert_int_equal(l.vt->build_key(l.inst, &w, &t, &k), CALHOST_OK);
    assert_int_equal(k.structure_count, 6);
    w = workload("MatMul", "float32", shape, 3, same, 3);
    assert_int_equal(l.vt->build_key(l.inst, &w, &t, &k), CALHOST_OK);
    assert_int_equal(k.structure_count, 7);
    assert_string_equal(k.structure[5].name, "batch");
    w = workload("MatMul", "float32", shape, 3, half, 3);
    assert_int_equal(l.vt->build_key(l.inst, &w, &t, &k), CALHOST_OK);
    assert_int_equal(k.structure_count, 8);
    assert_string_equal(k.structure[5].value, "0.5");
    assert_string_equal(k.structure[6].name, "bias");
  }
  unload(&l);
}

/* ---- the shared reference check ----------------------------------------- */

static void reference_check_catches_wrong_outputs(void **state) {
  matmul_shape shape = MATMUL_SHAPE(7, 9, 300, 1);
  matmul_data d;
  char err[256];
  (void)state;
  assert_int_equal(matmul_data_init(&d, &shape), 0);
  assert_int_equal(matmul_data_reference(&d), 0); /* lazy: computed for the test to read */
  /* C = C0 + 2 A*B, computed exactly enough */
  for (size_t x = 0; x < 63; x++)
    d.c[x] = (float)(d.c0[x] + 2.0 * d.ref[x]);
  assert_int_equal(matmul_check(&d, 2, err, sizeof err), CALHOST_OK);
  assert_int_equal(matmul_check(&d, 1, err, sizeof err), CALHOST_CHECK_FAILED);
  assert_int_equal(matmul_check(&d, 0, err, sizeof err), CALHOST_CHECK_FAILED);
  /* one missing product a[i][p]*b[p][j] */
  d.c[10] -= d.a[1 * 300 + 5] * d.b[5 * 9 + 1];
  assert_int_equal(matmul_check(&d, 2, err, sizeof err), CALHOST_CHECK_FAILED);
  assert_non_null(strstr(err, "C[1][1]"));
  d.c[10] = (float)(d.c0[10] + 2.0 * d.ref[10]);
  d.c[62] = NAN;
  assert_int_equal(matmul_check(&d, 2, err, sizeof err), CALHOST_CHECK_FAILED);
  assert_non_null(strstr(err, "NaN"));
  d.c[62] = INFINITY;
  assert_int_equal(matmul_check(&d, 2, err, sizeof err), CALHOST_CHECK_FAILED);
  assert_non_null(strstr(err, "Inf"));
  matmul_data_free(&d);
  matmul_data_free(&d); /* idempotent */
}

/* ---- the backends' shared glue (matmul.c) under a fake backend ---------- */

static void policy_text_preconditions_name_the_first_fault(void **state) {
  char err[128];
  (void)state;
  assert_int_equal(matmul_policy_text("ab=1", 4, 4, err, sizeof err), 0);
  assert_int_equal(matmul_policy_text(NULL, 4, 4, err, sizeof err), -1);
  assert_string_equal(err, "empty policy");
  assert_int_equal(matmul_policy_text("ab", 0, 4, err, sizeof err), -1);
  assert_string_equal(err, "empty policy");
  assert_int_equal(matmul_policy_text("ab=12", 5, 4, err, sizeof err), -1);
  assert_string_equal(err, "policy longer than 4 bytes");
  assert_int_equal(matmul_policy_text("a b", 3, 4, err, sizeof err), -1);
  assert_string_equal(err, "invalid byte 0x20 at offset 1");
  assert_int_equal(matmul_policy_text("ab\x7f", 3, 4, err, sizeof err), -1);
  assert_string_equal(err, "invalid byte 0x7f at offset 2");
  /* no reason buffer: still refused */
  assert_int_equal(matmul_policy_text("a b", 3, 4, NULL, 0), -1);
  assert_int_equal(matmul_fail(err, 4, "%d", 123456), -1);
  assert_string_equal(err, "123");
}

struct calhost_plugin_instance {
  matmul_instance mm;
};

struct calhost_session {
  matmul_session mm;
  int products; /* product() calls */
  int fail_at;  /* the call that fails (1-based), 0: none */
};

typedef struct fake_host {
  calhost_host_services services;
  char error[512];
  int cancel; /* is_cancelled answers this */
} fake_host;

static void fake_set_error(void *context, const char *message) {
  snprintf(((fake_host *)context)->error, sizeof((fake_host *)context)->error, "%s", message);
}

static int fake_is_cancelled(void *context) {
  return ((fake_host *)context)->cancel;
}

static void fake_host_init(fake_host *h) {
  memset(h, 0, sizeof *h);
  h->services.header =
      (calhost_struct_header){CALHOST_STRUCT_HOST_SERVICES, 1, sizeof(calhost_host_services)};
  h->services.context = h;
  h->services.set_error = fake_set_error;
  h->services.is_cancelled = fake_is_cancelled;
}

/* C (+)= A*B in double, rounded to float, or a failure at call fail_at. */
static calhost_status fake_product(calhost_session *s) {
  matmul_data *d = &s->mm.data;
  const matmul_shape *sh = &d->shape;
  if (++s->products == s->fail_at)
    return CALHOST_NO_MEMORY;
  for (size_t i = 0; i < sh->m; i++)
    for (size_t j = 0; j < sh->n; j++) {
      double acc = sh->accumulate ? d->c[i * sh->n + j] : 0.0;
      for (size_t p = 0; p < sh->k; p++)
        acc += (double)d->a[i * sh->k + p] * d->b[p * sh->n + j];
      d->c[i * sh->n + j] = (float)acc;
    }
  return CALHOST_OK;
}

static void shared_build_key_fills_the_portable_structure(void **state) {
  static const int64_t mnk[] = {5, 3, 7};
  static const calhost_property acc[] = {{"accumulate", "1"}};
  calhost_workload w = MATMUL_SAMPLE("w", mnk, acc, 1);
  calhost_target t = {{CALHOST_STRUCT_TARGET, 1, sizeof t}, "cpu-x", 4, NULL, 0, "", NULL, 0};
  calhost_built_key k;
  matmul_shape sh;
  fake_host h;
  calhost_plugin_instance *inst;
  (void)state;
  fake_host_init(&h);
  inst = matmul_instance_new(&h.services, "fake", sizeof *inst);
  assert_non_null(inst);
  assert_ptr_equal(inst->mm.host, &h.services);
  memset(&k, 0, sizeof k);
  assert_int_equal(matmul_build_key(inst, &w, &t, NULL, &sh), CALHOST_INVALID_ARGUMENT);
  assert_int_equal(matmul_build_key(NULL, &w, &t, &k, &sh), CALHOST_INVALID_ARGUMENT);
  w.dtype = "float16";
  assert_int_equal(matmul_build_key(inst, &w, &t, &k, &sh), CALHOST_UNSUPPORTED);
  assert_string_equal(h.error, "fake serves dtype float32 only (got float16)");
  w.dtype = "float32";
  assert_int_equal(matmul_build_key(inst, &w, &t, &k, &sh), CALHOST_OK);
  assert_string_equal(k.processor, "cpu-x");
  assert_int_equal(k.thread_count, 4);
  assert_int_equal(k.structure_count, 5);
  assert_string_equal(k.structure[1].name, "m");
  assert_string_equal(k.structure[1].value, "5");
  assert_string_equal(k.structure[3].value, "7");
  assert_string_equal(k.structure[4].value, "1");
  assert_int_equal(sh.k, 7);
  free(inst);
}

/* The shared parser: a backend that lacks a capability declines the
 * property by name (CALHOST_UNSUPPORTED) and lists what it runs; defaults
 * written out pass everywhere; bad values are invalid arguments naming the
 * property. */
static void shared_parser_declines_what_a_backend_cannot_run(void **state) {
  static const int64_t mnk[] = {8, 6, 4};
  static const struct {
    calhost_property p[3];
    size_t n;
    unsigned cap;
    const char *named;
  } declined[] = {
      {{{"trans_a", "1"}}, 1, MATMUL_CAN_TRANS_A, "'trans_a'"},
      {{{"trans_b", "1"}}, 1, MATMUL_CAN_TRANS_B, "'trans_b'"},
      {{{"alpha", "2"}}, 1, MATMUL_CAN_ALPHA, "'alpha'"},
      {{{"bias", "n"}}, 1, MATMUL_CAN_BIAS, "'bias'"},
      {{{"beta", "3"}, {"bias", "mn"}}, 2, MATMUL_CAN_BIAS, "'beta'"},
      {{{"batch", "4"}}, 1, MATMUL_CAN_BATCH, "'batch'"},
  };
  static const struct {
    calhost_property p[3];
    size_t n;
    const char *named;
  } invalid[] = {
      {{{"trans_a", "2"}}, 1, "trans_a must be 0 or 1"},
      {{{"alpha", "x"}}, 1, "alpha must be a finite"},
      {{{"alpha", "inf"}}, 1, "alpha must be a finite"},
      {{{"alpha", "1e40"}}, 1, "alpha must be a finite"},
      {{{"bias", "row"}}, 1, "bias must be scalar, n, m or mn"},
      {{{"beta", "2"}}, 1, "beta without bias"},
      {{{"batch", "0"}}, 1, "batch must be an integer"},
      {{{"batch", "02"}}, 1, "batch must be an integer"},
      {{{"batch", "4"}, {"batch_a", "5"}}, 2, "must not exceed batch=4"},
      {{{"batch_b", "2"}}, 1, "must not exceed batch=1"},
      {{{"trans_b", "1"}, {"trans_b", "1"}}, 2, "'trans_b' given twice"},
  };
  calhost_target t = {{CALHOST_STRUCT_TARGET, 1, sizeof t}, "cpu-x", 1, NULL, 0, "", NULL, 0};
  calhost_built_key k;
  matmul_shape sh;
  fake_host h;
  calhost_plugin_instance *inst;
  (void)state;
  fake_host_init(&h);
  inst = matmul_instance_new(&h.services, "fake", sizeof *inst);
  assert_non_null(inst);
  assert_int_equal(inst->mm.caps, 0); /* plain products unless the backend says more */
  for (size_t i = 0; i < sizeof declined / sizeof declined[0]; i++) {
    calhost_workload w = MATMUL_SAMPLE("w", mnk, declined[i].p, declined[i].n);
    inst->mm.caps = MATMUL_CAN_ALL & ~declined[i].cap;
    h.error[0] = '\0';
    assert_int_equal(matmul_build_key(inst, &w, &t, &k, &sh), CALHOST_UNSUPPORTED);
    assert_non_null(strstr(h.error, "fake does not run MatMul property"));
    if (!strstr(h.error, declined[i].named))
      fail_msg("decline of %s does not name it: %s", declined[i].named, h.error);
    inst->mm.caps = MATMUL_CAN_ALL;
    assert_int_equal(matmul_build_key(inst, &w, &t, &k, &sh), CALHOST_OK);
  }
  { /* batch_a alone, of a backend without batches: declined by name */
    static const calhost_property shared_a[] = {{"batch", "1"}, {"batch_a", "1"}};
    calhost_workload w = MATMUL_SAMPLE("w", mnk, shared_a, 2);
    inst->mm.caps = 0;
    assert_int_equal(matmul_build_key(inst, &w, &t, &k, &sh), CALHOST_OK); /* defaults */
    assert_int_equal(k.structure_count, 5);
  }
  { /* the message lists what the backend runs */
    static const calhost_property tb[] = {{"trans_b", "1"}};
    calhost_workload w = MATMUL_SAMPLE("w", mnk, tb, 1);
    inst->mm.caps = MATMUL_CAN_TRANS_A | MATMUL_CAN_BATCH;
    assert_int_equal(matmul_build_key(inst, &w, &t, &k, &sh), CALHOST_UNSUPPORTED);
    assert_string_equal(h.error, "fake does not run MatMul property 'trans_b' (it runs: "
                                 "accumulate, batch, batch_a, batch_b, trans_a)");
  }
  { /* defaults written out pass a backend of plain products */
    static const calhost_property dflt[] = {{"alpha", "1"}, {"batch", "1"}, {"trans_a", "0"}};
    calhost_workload w = MATMUL_SAMPLE("w", mnk, dflt, 3);
    inst->mm.caps = 0;
    assert_int_equal(matmul_build_key(inst, &w, &t, &k, &sh), CALHOST_OK);
  }
  inst->mm.caps = MATMUL_CAN_ALL;
  for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
    calhost_workload w = MATMUL_SAMPLE("w", mnk, invalid[i].p, invalid[i].n);
    h.error[0] = '\0';
    assert_int_equal(matmul_build_key(inst, &w, &t, &k, &sh), CALHOST_INVALID_ARGUMENT);
    if (!strstr(h.error, invalid[i].named))
      fail_msg("'%s=%s': expected '%s' in '%s'", invalid[i].p[0].name, invalid[i].p[0].value,
               invalid[i].named, h.error);
  }
  free(inst);
}

/* The contract's product, computed here independently (double sums), with
 * one deliberate fault: 0 none, 1 transposes ignored, 2 bias left out, 3
 * A of product p taken as p mod batch_a, 4 alpha ignored. */
static void contract_product(matmul_data *d, int fault) {
  const matmul_shape *s = &d->shape;
  for (size_t q = 0; q < s->batch; q++) {
    size_t ia = fault == 3 ? q % s->batch_a : q * s->batch_a / s->batch, ib = q % s->batch_b;
    const float *a = d->a + ia * s->m * s->k, *b = d->b + ib * s->k * s->n;
    for (size_t i = 0; i < s->m; i++)
      for (size_t j = 0; j < s->n; j++) {
        double acc = 0, bias = 0;
        for (size_t p = 0; p < s->k; p++) {
          int ta = s->trans_a && fault != 1, tb = s->trans_b && fault != 1;
          acc += (double)(ta ? a[p * s->m + i] : a[i * s->k + p]) *
                 (tb ? b[j * s->k + p] : b[p * s->n + j]);
        }
        if (d->bias && fault != 2) {
          size_t x = s->bias == MATMUL_BIAS_SCALAR ? 0
                     : s->bias == MATMUL_BIAS_N    ? j
                     : s->bias == MATMUL_BIAS_M    ? i
                                                   : i * s->n + j;
          bias = (double)s->beta * d->bias[x];
        }
        d->c[(q * s->m + i) * s->n + j] =
            (float)((fault == 4 ? 1.0 : (double)s->alpha) * acc + bias +
                    (s->accumulate ? d->c0[(q * s->m + i) * s->n + j] : 0.0));
      }
  }
}

/* The shared reference covers each structure: the contract's product
 * passes, each fault of a structure is caught. */
static void reference_check_covers_every_structure(void **state) {
  static const struct {
    matmul_shape shape;
    int faults[3];
  } cases[] = {
      {{9, 7, 30, 0, 1, 0, 1.0f, 1.0f, MATMUL_BIAS_NONE, 1, 1, 1}, {1}},
      {{9, 7, 30, 0, 0, 1, 1.0f, 1.0f, MATMUL_BIAS_NONE, 1, 1, 1}, {1}},
      {{9, 7, 30, 0, 0, 1, -0.5f, 1.0f, MATMUL_BIAS_N, 1, 1, 1}, {1, 2, 4}},
      {{9, 7, 30, 1, 0, 0, 1.0f, 2.0f, MATMUL_BIAS_SCALAR, 1, 1, 1}, {2}},
      {{9, 7, 30, 0, 0, 0, 1.0f, 1.0f, MATMUL_BIAS_M, 1, 1, 1}, {2}},
      {{9, 7, 30, 0, 1, 1, 3.0f, 0.5f, MATMUL_BIAS_MN, 1, 1, 1}, {1, 2, 4}},
      {{5, 6, 20, 0, 0, 0, 1.0f, 1.0f, MATMUL_BIAS_NONE, 6, 2, 3}, {3}},
      {{5, 6, 20, 1, 1, 0, 1.0f, 1.0f, MATMUL_BIAS_NONE, 4, 4, 1}, {1}},
  };
  char err[256];
  (void)state;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    matmul_data d;
    assert_int_equal(matmul_data_init(&d, &cases[c].shape), 0);
    contract_product(&d, 0);
    if (matmul_check(&d, 1, err, sizeof err) != CALHOST_OK)
      fail_msg("case %zu: the contract's product refused: %s", c, err);
    for (int f = 0; f < 3 && cases[c].faults[f]; f++) {
      contract_product(&d, cases[c].faults[f]);
      if (matmul_check(&d, 1, err, sizeof err) != CALHOST_CHECK_FAILED)
        fail_msg("case %zu: fault %d not caught", c, cases[c].faults[f]);
      if (cases[c].shape.batch > 1)
        assert_non_null(strstr(err, "C[")); /* C[p][i][j] */
    }
    matmul_data_free(&d);
  }
}

static void shared_run_loop_resets_checks_cancels_and_fails(void **state) {
  static const int64_t mnk[] = {4, 6, 9};
  static const calhost_property acc[] = {{"accumulate", "1"}};
  const calhost_workload w = MATMUL_SAMPLE("w", mnk, acc, 1);
  calhost_target t = {{CALHOST_STRUCT_TARGET, 1, sizeof t}, "cpu-x", 1, NULL, 0, "", NULL, 0};
  calhost_plugin_instance *inst;
  calhost_session sentinel, *s = &sentinel; /* must be reset to NULL */
  calhost_status st;
  matmul_shape sh;
  uint32_t count = 0;
  char err[256];
  fake_host h;
  (void)state;
  fake_host_init(&h);
  inst = matmul_instance_new(&h.services, "fake", sizeof *inst);
  assert_non_null(inst);
  assert_null(matmul_session_alloc(inst, NULL, &t, &s, sizeof *s, &sh, &st));
  assert_int_equal(st, CALHOST_INVALID_ARGUMENT);
  assert_null(s);
  s = matmul_session_alloc(inst, &w, &t, &s, sizeof *s, &sh, &st);
  assert_non_null(s);
  assert_int_equal(st, CALHOST_OK);
  assert_ptr_equal(s->mm.host, &h.services);
  assert_int_equal(matmul_data_init(&s->mm.data, &sh), 0);
  s->mm.candidates = 3;
  assert_int_equal(matmul_candidate_count(s, &count), CALHOST_OK);
  assert_int_equal(count, 3);
  assert_int_equal(matmul_candidate_count(s, NULL), CALHOST_INVALID_ARGUMENT);
  /* nothing has run yet */
  assert_int_equal(matmul_session_check(s, err, sizeof err), CALHOST_CHECK_FAILED);
  /* two accumulating products, twice: C is reset from C0 before each run */
  assert_int_equal(matmul_run(s, 2, fake_product), CALHOST_OK);
  assert_int_equal(matmul_session_check(s, err, sizeof err), CALHOST_OK);
  assert_int_equal(matmul_run(s, 2, fake_product), CALHOST_OK);
  assert_int_equal(matmul_session_check(s, err, sizeof err), CALHOST_OK);
  assert_int_equal(s->products, 4);
  /* a failing product stops the run, which then has nothing to check */
  s->fail_at = 6;
  assert_int_equal(matmul_run(s, 3, fake_product), CALHOST_NO_MEMORY);
  assert_int_equal(s->products, 6);
  assert_int_equal(s->mm.last_iterations, 0);
  assert_int_equal(matmul_session_check(s, err, sizeof err), CALHOST_CHECK_FAILED);
  /* cancellation is polled between products of a longer run only */
  s->fail_at = 0;
  h.cancel = 1;
  assert_int_equal(matmul_run(s, 3, fake_product), CALHOST_CANCELLED);
  assert_int_equal(s->products, 7);
  assert_int_equal(s->mm.last_iterations, 0);
  assert_int_equal(matmul_run(s, 1, fake_product), CALHOST_OK);
  assert_int_equal(s->mm.last_iterations, 1);
  assert_int_equal(matmul_session_check(s, err, sizeof err), CALHOST_OK);
  matmul_session_close(s);
  matmul_session_close(NULL);
  free(inst);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cpu_gemm_exports_no_internal_symbol),
      cmocka_unit_test(cpu_gemm_builds_the_same_key_every_time),
      cmocka_unit_test(cpu_gemm_refuses_bad_workloads),
      cmocka_unit_test(cpu_gemm_sessions_run_and_check_every_candidate),
      cmocka_unit_test(cpu_gemm_max_isa_portable_limits_kernels_and_the_validator),
      cmocka_unit_test(cpu_gemm_describes_its_candidates_as_named_parameters),
      cmocka_unit_test(validators_survive_random_bytes),
      cmocka_unit_test(openblas_validates_threads_and_computes_odd_shapes),
      cmocka_unit_test(reference_check_catches_wrong_outputs),
      cmocka_unit_test(policy_text_preconditions_name_the_first_fault),
      cmocka_unit_test(shared_build_key_fills_the_portable_structure),
      cmocka_unit_test(shared_run_loop_resets_checks_cancels_and_fails),
      cmocka_unit_test(shared_parser_declines_what_a_backend_cannot_run),
      cmocka_unit_test(reference_check_covers_every_structure),
      cmocka_unit_test(cpu_gemm_runs_every_structure),
      cmocka_unit_test(openblas_runs_every_structure),
      cmocka_unit_test(structures_never_share_a_key),
  };
  return cmocka_run_group_tests_name("gemm_plugins", tests, NULL, NULL);
}
