/*
 * test_cuda_curated.c: cuda_curated: every curated candidate cuda_gemm
 * keeps for a named reference device (A100 = sm_80, H100/H200 = sm_90
 * limits as test data, no GPU) round-trips through the plugin's own
 * entries, as `plugin check` and calibrate use them: the session's filter
 * (cg_fill_candidates), serialize_candidate, validate_policy,
 * policy_assignment, assignment_valid and serialize_assignment giving the
 * same text back; the default policy likewise. Every dtype, several K
 * (multiples of 64, odd, tiny). The plugin's plugin.c is compiled in; a
 * session is built by hand with what those entries read.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>

#include <cmocka.h>

#include "../../plugins/cuda_gemm/plugin.c"

typedef struct reference_device {
  const char *name;
  const cgemm_limits *limits;
} reference_device;

static const reference_device g_devices[] = {
    {"NVIDIA A100-SXM4-80GB (sm_80)", &cgemm_limits_sm80},
    {"NVIDIA H100 80GB HBM3 (sm_90)", &cgemm_limits_sm90},
    {"NVIDIA H200 (sm_90)", &cgemm_limits_sm90},
};

/* One policy through every entry that reads or writes policies. */
static void round_trip(calhost_session *s, const char *policy, const char *what) {
  char err[256] = "", back[256];
  uint32_t a[CG_COUNT];
  size_t len;
  if (cg_validate_policy(s->inst, policy, strlen(policy), err, sizeof err) != CALHOST_OK)
    fail_msg("%s: validate_policy refuses %s: %s", what, policy, err);
  if (cg_policy_assignment(s, policy, strlen(policy), a, CG_COUNT) != CALHOST_OK)
    fail_msg("%s: policy_assignment refuses %s", what, policy);
  if (cg_assignment_valid(s, a, CG_COUNT, err, sizeof err) != CALHOST_OK)
    fail_msg("%s: assignment_valid refuses %s: %s", what, policy, err);
  if (cg_serialize_assignment(s, a, CG_COUNT, back, sizeof back, &len) != CALHOST_OK)
    fail_msg("%s: serialize_assignment refuses %s", what, policy);
  if (strcmp(back, policy) != 0)
    fail_msg("%s: %s came back as %s", what, policy, back);
}

static void every_curated_candidate_round_trips(void **state) {
  (void)state;
  static const size_t ks[] = {4096, 1024, 64, 40, 8192, 16};
  for (size_t d = 0; d < sizeof g_devices / sizeof g_devices[0]; d++)
    for (int t = 0; t < 3; t++)
      for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
        calhost_plugin_instance *inst = NULL;
        cu_device dev;
        calhost_session s;
        cgemm_config cands[64];
        char what[200], policy[256];
        size_t len;
        assert_true(cgemm_curated_count <= 64);
        assert_int_equal(cg_create(NULL, NULL, 0, &inst), CALHOST_OK);
        memset(&dev, 0, sizeof dev);
        memset(&s, 0, sizeof s);
        dev.limits = *g_devices[d].limits;
        s.inst = inst;
        s.cu.inst = &inst->cu;
        s.cu.dev = &dev;
        s.cu.shape.dtype = (cgemm_dtype)t;
        s.cu.shape.m = s.cu.shape.n = 1024;
        s.cu.shape.k = ks[ki];
        s.cands = cands;
        cg_fill_candidates(&s);
        snprintf(what, sizeof what, "%s %s K=%zu", g_devices[d].name,
                 cgemm_dtype_name((cgemm_dtype)t), ks[ki]);
        if (s.cu.mm.candidates < 4)
          fail_msg("%s: only %u curated candidates kept", what, s.cu.mm.candidates);
        for (uint32_t i = 0; i < s.cu.mm.candidates; i++) {
          assert_int_equal(cg_serialize_candidate(&s, i, policy, sizeof policy, &len), CALHOST_OK);
          round_trip(&s, policy, what);
        }
        assert_int_equal(cg_default_policy(&s, policy, sizeof policy, &len), CALHOST_OK);
        round_trip(&s, policy, what);
        cg_destroy(inst);
      }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_curated_candidate_round_trips),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
