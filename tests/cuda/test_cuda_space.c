/*
 * test_cuda_space.c: cuda_space: cuda_gemm's ABI 2 parameter-space entries
 * (describe_space, assignment_valid, serialize_assignment,
 * policy_assignment) and validate_policy, on sessions over fake devices
 * (sm_80 and sm_90 limits, no GPU): the plugin's own plugin.c is compiled
 * into this test, and a session is built by hand with only what those
 * entries read (the dtype, the padded K, the device's limits).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>

#include <cmocka.h>

#include "../../plugins/cuda_gemm/plugin.c"

typedef struct fake {
  calhost_plugin_instance *inst;
  cu_device dev;
  calhost_session s;
} fake;

static void fake_session(fake *f, const cgemm_limits *l, cgemm_dtype t, size_t kp) {
  memset(f, 0, sizeof *f);
  assert_int_equal(cg_create(NULL, NULL, 0, &f->inst), CALHOST_OK);
  f->dev.limits = *l;
  f->s.inst = f->inst;
  f->s.cu.inst = &f->inst->cu;
  f->s.cu.dev = &f->dev;
  f->s.cu.shape.dtype = t;
  f->s.cu.kp = kp;
  f->s.cu.shape.k = kp;
  cgemm_config def = cgemm_default(t);
  for (int k = 0; k < CG_COUNT; k++)
    for (uint32_t i = 0; i < cgemm_params[k].count; i++)
      if (cgemm_params[k].values[i] == def.v[k])
        f->s.default_assignment[k] = i;
}

static void index_of(const cgemm_config *c, uint32_t *a) {
  for (int k = 0; k < CG_COUNT; k++)
    for (uint32_t i = 0; i < cgemm_params[k].count; i++)
      if (cgemm_params[k].values[i] == c->v[k])
        a[k] = i;
}

static void space_describes_nine_parameters_and_the_default(void **state) {
  (void)state;
  fake f;
  calhost_parameter_space sp;
  char policy[256], want[256];
  size_t len;
  fake_session(&f, &cgemm_limits_sm90, CG_BF16, 4096);
  memset(&sp, 0, sizeof sp);
  assert_int_equal(cg_describe_space(&f.s, &sp), CALHOST_OK);
  assert_int_equal(sp.parameter_count, CG_COUNT);
  assert_string_equal(sp.parameters[0].name, "bm");
  assert_string_equal(sp.parameters[CG_SWIZZLE].name, "swizzle");
  assert_int_equal(sp.parameters[CG_BK].value_count, 3);
  /* the default assignment is the default policy */
  assert_int_equal(
      cg_serialize_assignment(&f.s, sp.default_assignment, CG_COUNT, policy, sizeof policy, &len),
      CALHOST_OK);
  assert_int_equal(cg_default_policy(&f.s, want, sizeof want, &len), CALHOST_OK);
  assert_string_equal(policy, want);
  assert_int_equal(cg_assignment_valid(&f.s, sp.default_assignment, CG_COUNT, NULL, 0), CALHOST_OK);
  cg_destroy(f.inst);
}

static void assignment_validity_follows_the_device(void **state) {
  (void)state;
  fake f80, f90;
  char err[256];
  uint32_t a[CG_COUNT];
  /* fp32 128x128x64 in 3 stages: 205824 bytes of shared memory */
  cgemm_config c = {{128, 128, 64, 64, 32, 3, 4, 1, 1}};
  index_of(&c, a);
  fake_session(&f80, &cgemm_limits_sm80, CG_F32, 4096);
  fake_session(&f90, &cgemm_limits_sm90, CG_F32, 4096);
  assert_int_equal(cg_assignment_valid(&f90.s, a, CG_COUNT, err, sizeof err), CALHOST_OK);
  assert_int_equal(cg_assignment_valid(&f80.s, a, CG_COUNT, err, sizeof err),
                   CALHOST_INVALID_ARGUMENT);
  assert_non_null(strstr(err, "shared memory"));
  /* an index out of range, a wrong count: invalid, never a crash */
  uint32_t bad[CG_COUNT];
  memcpy(bad, a, sizeof bad);
  bad[CG_BM] = 3;
  assert_int_equal(cg_assignment_valid(&f90.s, bad, CG_COUNT, err, sizeof err),
                   CALHOST_INVALID_ARGUMENT);
  assert_non_null(strstr(err, "out of range"));
  assert_int_equal(cg_assignment_valid(&f90.s, a, CG_COUNT - 1, err, sizeof err),
                   CALHOST_INVALID_ARGUMENT);
  /* split-K against the workload's padded K: K 64 has 1 step of 64 */
  cgemm_config split = {{64, 64, 64, 32, 32, 2, 4, 2, 1}};
  fake fk;
  fake_session(&fk, &cgemm_limits_sm90, CG_F32, 64);
  index_of(&split, a);
  assert_int_equal(cg_assignment_valid(&fk.s, a, CG_COUNT, err, sizeof err),
                   CALHOST_INVALID_ARGUMENT);
  assert_int_equal(cg_assignment_valid(&f90.s, a, CG_COUNT, err, sizeof err), CALHOST_OK);
  cg_destroy(f80.inst);
  cg_destroy(f90.inst);
  cg_destroy(fk.inst);
}

static void every_valid_assignment_round_trips_through_its_policy(void **state) {
  (void)state;
  fake f;
  fake_session(&f, &cgemm_limits_sm80, CG_F16, 4096);
  uint32_t a[CG_COUNT] = {0}, back[CG_COUNT];
  size_t valid = 0;
  for (;;) {
    if (cg_assignment_valid(&f.s, a, CG_COUNT, NULL, 0) == CALHOST_OK) {
      char policy[256], err[256];
      size_t len = 0;
      valid++;
      assert_int_equal(cg_serialize_assignment(&f.s, a, CG_COUNT, policy, sizeof policy, &len),
                       CALHOST_OK);
      assert_int_equal(cg_validate_policy(f.inst, policy, len, err, sizeof err), CALHOST_OK);
      assert_int_equal(cg_policy_assignment(&f.s, policy, len, back, CG_COUNT), CALHOST_OK);
      assert_memory_equal(a, back, sizeof a);
    }
    int k = 0;
    while (k < CG_COUNT && ++a[k] == cgemm_params[k].count)
      a[k++] = 0;
    if (k == CG_COUNT)
      break;
  }
  assert_int_equal(valid, 22464); /* the README's count for fp16 on sm_80 */
  cg_destroy(f.inst);
}

static void validator_takes_any_dtypes_policy_and_refuses_garbage(void **state) {
  (void)state;
  char err[256];
  const char *f32 = "bm=64,bn=64,bk=16,wm=32,wn=32,stages=2,vec=4,splitk=1,swizzle=1";
  const char *bf16 = "bm=64,bn=64,bk=32,wm=32,wn=32,stages=2,vec=8,splitk=1,swizzle=1";
  const char *neither = "bm=32,bn=64,bk=16,wm=64,wn=32,stages=2,vec=4,splitk=1,swizzle=1";
  assert_int_equal(cg_validate_policy(NULL, f32, strlen(f32), err, sizeof err), CALHOST_OK);
  assert_int_equal(cg_validate_policy(NULL, bf16, strlen(bf16), err, sizeof err), CALHOST_OK);
  assert_int_equal(cg_validate_policy(NULL, neither, strlen(neither), err, sizeof err),
                   CALHOST_INVALID_ARGUMENT);
  assert_non_null(strstr(err, "warp tile"));
  assert_int_equal(cg_validate_policy(NULL, "x", 1, err, sizeof err), CALHOST_INVALID_ARGUMENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(space_describes_nine_parameters_and_the_default),
      cmocka_unit_test(assignment_validity_follows_the_device),
      cmocka_unit_test(every_valid_assignment_round_trips_through_its_policy),
      cmocka_unit_test(validator_takes_any_dtypes_policy_and_refuses_garbage),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
