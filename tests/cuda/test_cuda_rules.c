/*
 * test_cuda_rules.c: cuda_rules: cuda_gemm's GPU-independent parts with
 * fake device properties (sm_80, sm_90, an sm_75 part): the policy text
 * round trip and its refusals, the validity rule (shared memory, threads,
 * registers, compute capability, split-K against the padded K, tensor-core
 * K steps), the defaults and curated candidates, the workload parser, the
 * identity and the key builder on a fake H200; the driver loader against
 * the toolkit's stub libcuda (no device, a reason, no crash); cublaslt's
 * policy text (a serialized cuBLASLt algorithm configuration). Fast: no
 * compilation.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgemm.h"
#include "cu_driver.h"
#include "lt_policy.h"

static cgemm_config cfg(uint32_t bm, uint32_t bn, uint32_t bk, uint32_t wm, uint32_t wn,
                        uint32_t st, uint32_t vec, uint32_t split, uint32_t swz) {
  cgemm_config c = {{bm, bn, bk, wm, wn, st, vec, split, swz}};
  return c;
}

static void policy_text_round_trips_and_refuses_garbage(void **state) {
  (void)state;
  char text[128], err[256];
  cgemm_config c = cfg(128, 64, 32, 64, 32, 3, 4, 2, 8), back;
  cgemm_format(&c, text, sizeof text);
  assert_string_equal(text, "bm=128;bn=64;bk=32;wm=64;wn=32;stages=3;vec=4;splitk=2;swizzle=8");
  assert_int_equal(cgemm_parse(text, strlen(text), CG_F32, &back, err, sizeof err), 0);
  assert_memory_equal(&c, &back, sizeof c);
  /* the form stored before issue 42 (',') still validates, to the same configuration */
  static const char old[] = "bm=128,bn=64,bk=32,wm=64,wn=32,stages=3,vec=4,splitk=2,swizzle=8";
  memset(&back, 0, sizeof back);
  assert_int_equal(cgemm_parse(old, strlen(old), CG_F32, &back, err, sizeof err), 0);
  assert_memory_equal(&c, &back, sizeof c);
  const char *bad[] = {"",
                       "bm=128",
                       "bm=96,bn=64,bk=32,wm=64,wn=32,stages=3,vec=4,splitk=2,swizzle=8",
                       "bn=64,bm=128,bk=32,wm=64,wn=32,stages=3,vec=4,splitk=2,swizzle=8",
                       "bm=128,bn=64,bk=32,wm=64,wn=32,stages=3,vec=4,splitk=2,swizzle=8,",
                       "bm=128,bn=64,bk=32,wm=64,wn=32,stages=3,vec=4,splitk=2,swizzle=8 ",
                       "bm=128;bn=64,bk=32,wm=64,wn=32,stages=3,vec=4,splitk=2,swizzle=8",
                       "bm=128;bn=64;bk=32;wm=64;wn=32;stages=3;vec=4;splitk=2;swizzle=8;"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err[0] = '\0';
    assert_int_equal(cgemm_parse(bad[i], strlen(bad[i]), CG_F32, &back, err, sizeof err), -1);
    assert_true(err[0] != '\0');
  }
  /* vec=8 copies 32 bytes of fp32: refused for float32, fine for bf16 */
  const char *v8 = "bm=64,bn=64,bk=32,wm=32,wn=32,stages=2,vec=8,splitk=1,swizzle=1";
  assert_int_equal(cgemm_parse(v8, strlen(v8), CG_F32, &back, err, sizeof err), -1);
  assert_non_null(strstr(err, "cp.async"));
  assert_int_equal(cgemm_parse(v8, strlen(v8), CG_BF16, &back, err, sizeof err), 0);
}

static void validity_rule_knows_the_device_limits(void **state) {
  (void)state;
  char err[256];
  cgemm_config big = cfg(128, 128, 64, 64, 32, 3, 8, 1, 1);
  /* bf16 128x128x64, 3 stages: 3*(128*72 + 64*136)*2 = 107520 bytes: fits
   * both; fp32 with vec 4: 3*(128*68 + 64*132)*4 = 205824: sm_90 only */
  cgemm_config f32 = cfg(128, 128, 64, 64, 32, 3, 4, 1, 1);
  assert_int_equal(cgemm_smem_bytes(&f32, CG_F32), 205824u);
  assert_int_equal(cgemm_fits(&f32, CG_F32, &cgemm_limits_sm90, 0, err, sizeof err), 0);
  assert_int_equal(cgemm_fits(&f32, CG_F32, &cgemm_limits_sm80, 0, err, sizeof err), -1);
  assert_non_null(strstr(err, "shared memory 205824 bytes"));
  assert_int_equal(cgemm_fits(&big, CG_BF16, &cgemm_limits_sm80, 0, err, sizeof err), 0);
  /* threads: 128x128 in 16x16 warp tiles = 64 warps */
  cgemm_config many = cfg(128, 128, 32, 16, 16, 2, 4, 1, 1);
  assert_int_equal(cgemm_fits(&many, CG_F32, &cgemm_limits_sm90, 0, err, sizeof err), -1);
  assert_non_null(strstr(err, "threads"));
  /* registers: 16 warps of 32x32 fp32 warp tiles need ~112 x 512: within
   * sm_90's 64 Ki, beyond a block file of 32 Ki; a 64x32 thread tile needs
   * ~176 per thread, beyond a device allowing 128 */
  cgemm_config regs = cfg(128, 128, 16, 32, 32, 2, 4, 1, 1);
  cgemm_limits small = cgemm_limits_sm90;
  small.regs_block = 32768;
  assert_int_equal(cgemm_fits(&regs, CG_F32, &cgemm_limits_sm90, 0, err, sizeof err), 0);
  assert_int_equal(cgemm_fits(&regs, CG_F32, &small, 0, err, sizeof err), -1);
  assert_non_null(strstr(err, "registers"));
  cgemm_config fat = cfg(128, 128, 16, 64, 32, 2, 4, 1, 1);
  cgemm_limits few = cgemm_limits_sm90;
  few.max_regs_thread = 128;
  assert_int_equal(cgemm_fits(&fat, CG_F32, &cgemm_limits_sm90, 0, err, sizeof err), 0);
  assert_int_equal(cgemm_fits(&fat, CG_F32, &few, 0, err, sizeof err), -1);
  assert_non_null(strstr(err, "registers per thread"));
  cgemm_config mid = cfg(64, 64, 32, 32, 32, 2, 4, 1, 1);
  /* compute capability 7.5: no cp.async, no bf16 tensor cores */
  cgemm_limits turing = cgemm_limits_sm80;
  turing.cc_major = 7;
  turing.cc_minor = 5;
  assert_int_equal(cgemm_fits(&mid, CG_F32, &turing, 0, err, sizeof err), -1);
  assert_non_null(strstr(err, "8.0"));
  /* tensor cores step K by 16 */
  cgemm_config k16 = cfg(64, 64, 16, 32, 32, 2, 8, 1, 1);
  assert_int_equal(cgemm_fits(&k16, CG_BF16, &cgemm_limits_sm90, 0, err, sizeof err), 0);
  /* split-K must cut the padded K into whole steps: K 64 = 2 steps of 32 */
  cgemm_config split = cfg(64, 64, 32, 32, 32, 2, 4, 4, 1);
  assert_int_equal(cgemm_fits(&split, CG_F32, &cgemm_limits_sm90, 128, err, sizeof err), 0);
  assert_int_equal(cgemm_fits(&split, CG_F32, &cgemm_limits_sm90, 64, err, sizeof err), -1);
  assert_non_null(strstr(err, "splitk=4"));
}

static void defaults_and_curated_candidates_fit_both_architectures(void **state) {
  (void)state;
  char err[256];
  for (int t = 0; t < 3; t++) {
    cgemm_config d = cgemm_default((cgemm_dtype)t);
    assert_int_equal(cgemm_fits(&d, (cgemm_dtype)t, &cgemm_limits_sm80, 4096, err, sizeof err), 0);
    unsigned fit = 0;
    for (uint32_t i = 0; i < cgemm_curated_count; i++)
      fit += cgemm_fits(&cgemm_curated[i], (cgemm_dtype)t, &cgemm_limits_sm80, 4096, NULL, 0) == 0;
    assert_true(fit >= 8); /* each dtype keeps a real list */
  }
}

static void every_parameter_value_is_reachable(void **state) {
  (void)state;
  /* each value of each parameter appears in some valid configuration of
   * some dtype on sm_90 (no dead values in the space) */
  for (int p = 0; p < CG_COUNT; p++)
    for (uint32_t vi = 0; vi < cgemm_params[p].count; vi++) {
      int found = 0;
      uint32_t a[CG_COUNT] = {0};
      while (!found) {
        cgemm_config c;
        for (int k = 0; k < CG_COUNT; k++)
          c.v[k] = cgemm_params[k].values[k == p ? vi : a[k]];
        for (int t = 0; t < 3 && !found; t++)
          found = cgemm_fits(&c, (cgemm_dtype)t, &cgemm_limits_sm90, 4096, NULL, 0) == 0;
        int k = 0;
        while (k < CG_COUNT && ++a[k] == cgemm_params[k].count)
          a[k++] = 0;
        if (k == CG_COUNT)
          break;
      }
      if (!found)
        fail_msg("%s=%u is never valid", cgemm_params[p].name, cgemm_params[p].values[vi]);
    }
}

static void workload_parser_takes_three_dtypes_and_refuses_others(void **state) {
  (void)state;
  int64_t shape[] = {8192, 64, 4096};
  calhost_property acc = {"accumulate", "1"}, bad = {"transpose", "1"};
  calhost_workload w = {
      {CALHOST_STRUCT_WORKLOAD, 1, sizeof w}, "w", "MatMul", "bfloat16", shape, 3, &acc, 1, NULL};
  cu_shape s;
  assert_int_equal(cu_parse_workload(NULL, "t", 0, &w, &s), CALHOST_OK);
  assert_int_equal(s.dtype, CG_BF16);
  assert_int_equal(s.m, 8192);
  assert_int_equal(s.k, 4096);
  assert_int_equal(s.accumulate, 1);
  w.dtype = "float64";
  assert_int_equal(cu_parse_workload(NULL, "t", 0, &w, &s), CALHOST_UNSUPPORTED);
  w.dtype = "float16";
  w.properties = &bad; /* the shared parser's answer to an unknown property */
  assert_int_equal(cu_parse_workload(NULL, "t", 0, &w, &s), CALHOST_UNSUPPORTED);
  w.property_count = 0;
  w.operator_name = "Conv";
  assert_int_equal(cu_parse_workload(NULL, "t", 0, &w, &s), CALHOST_UNSUPPORTED);
}

static char g_error[512];
static void record_error(void *ctx, const char *message) {
  (void)ctx;
  snprintf(g_error, sizeof g_error, "%s", message);
}

/* Parses shape {M, N, K} float16 with `count` properties under caps;
 * the status, the message in g_error. */
static calhost_status parse_with(unsigned caps, const calhost_property *p, size_t count,
                                 cu_shape *s) {
  static const int64_t shape[] = {96, 80, 64};
  calhost_host_services host;
  memset(&host, 0, sizeof host);
  host.set_error = record_error;
  calhost_workload w = {
      {CALHOST_STRUCT_WORKLOAD, 1, sizeof w}, "w", "MatMul", "float16", shape, 3, p, count, NULL};
  g_error[0] = '\0';
  return cu_parse_workload(&host, "cublaslt", caps, &w, s);
}

/* The MatMul structure: without the capabilities (cuda_gemm) each
 * non-default property is declined by name; with them (cublaslt) each is
 * run, except what one strided cuBLASLt call cannot express. */
static void structure_rules_decline_by_capability_and_stride(void **state) {
  (void)state;
  cu_shape s;
  static const calhost_property one[][1] = {{{"trans_a", "1"}},
                                            {{"trans_b", "1"}},
                                            {{"alpha", "0.5"}},
                                            {{"bias", "n"}},
                                            {{"batch", "4"}}};
  static const char *const names[] = {"trans_a", "trans_b", "alpha", "bias", "batch"};
  for (int i = 0; i < 5; i++) {
    assert_int_equal(parse_with(0, one[i], 1, &s), CALHOST_UNSUPPORTED);
    if (!strstr(g_error, "does not run MatMul property") || !strstr(g_error, names[i]))
      fail_msg("%s: %s", names[i], g_error);
    assert_int_equal(parse_with(MATMUL_CAN_ALL, one[i], 1, &s), CALHOST_OK);
    assert_int_equal(s.structured, 1);
    assert_int_equal(s.m, 96);
    assert_int_equal(s.st.m, 96);
    assert_int_equal(s.st.k, 64);
    assert_int_equal(s.dtype, CG_F16);
  }
  /* defaults written out, and accumulate, stay plain products for both */
  const calhost_property dflt[] = {
      {"accumulate", "1"}, {"alpha", "1"}, {"batch", "1"}, {"trans_a", "0"}};
  assert_int_equal(parse_with(0, dflt, 4, &s), CALHOST_OK);
  assert_int_equal(s.structured, 0);
  assert_int_equal(s.accumulate, 1);
  /* a full Gemm: every field */
  const calhost_property gemm[] = {{"alpha", "0.25"}, {"batch", "6"}, {"batch_a", "1"},
                                   {"beta", "-2"},    {"bias", "mn"}, {"trans_a", "1"},
                                   {"trans_b", "1"}};
  assert_int_equal(parse_with(MATMUL_CAN_ALL, gemm, 7, &s), CALHOST_OK);
  assert_true(s.st.trans_a && s.st.trans_b);
  assert_true(s.st.alpha == 0.25f && s.st.beta == -2.0f);
  assert_int_equal(s.st.bias, MATMUL_BIAS_MN);
  assert_int_equal(s.st.batch, 6);
  assert_int_equal(s.st.batch_a, 1);
  assert_int_equal(s.st.batch_b, 6);
  /* one stride per operand: batch_a/batch_b strictly between 1 and batch */
  const calhost_property mid_a[] = {{"batch", "6"}, {"batch_a", "3"}};
  assert_int_equal(parse_with(MATMUL_CAN_ALL, mid_a, 2, &s), CALHOST_UNSUPPORTED);
  assert_non_null(strstr(g_error, "'batch_a' between 1 and batch (6)"));
  const calhost_property mid_b[] = {{"batch", "6"}, {"batch_b", "2"}};
  assert_int_equal(parse_with(MATMUL_CAN_ALL, mid_b, 2, &s), CALHOST_UNSUPPORTED);
  assert_non_null(strstr(g_error, "'batch_b' between 1 and batch (6)"));
  const calhost_property shared_b[] = {{"batch", "6"}, {"batch_b", "1"}};
  assert_int_equal(parse_with(MATMUL_CAN_ALL, shared_b, 2, &s), CALHOST_OK);
  /* C is the accumulator or the bias, not both */
  const calhost_property acc_bias[] = {{"accumulate", "1"}, {"bias", "scalar"}};
  assert_int_equal(parse_with(MATMUL_CAN_ALL, acc_bias, 2, &s), CALHOST_UNSUPPORTED);
  assert_non_null(strstr(g_error, "'bias' with accumulate=1"));
  /* bad values are refused as by every MatMul backend */
  const calhost_property bad[] = {{"bias", "row"}};
  assert_int_equal(parse_with(MATMUL_CAN_ALL, bad, 1, &s), CALHOST_INVALID_ARGUMENT);
  /* a batch too large for the shared reference */
  const calhost_property huge[] = {{"batch", "60000"}};
  assert_int_equal(parse_with(MATMUL_CAN_ALL, huge, 1, &s), CALHOST_UNSUPPORTED);
  assert_non_null(strstr(g_error, "too large"));
}

static void identity_is_the_model_not_the_board(void **state) {
  (void)state;
  char a[320], b[320];
  cu_identity(a, sizeof a, "NVIDIA H200", 9, 0, 132, 150000ull << 20, 13000, NULL);
  assert_string_equal(a, "cuda:NVIDIA H200/sm_9.0/SMs 132/mem 150000MiB/driver 13.0");
  /* a name with a '/' and a control byte stays one printable field */
  cu_identity(b, sizeof b, "GPU/X\n", 8, 0, 108, 40960ull << 20, 12080, "");
  assert_string_equal(b, "cuda:GPU_X?/sm_8.0/SMs 108/mem 40960MiB/driver 12.8");
}

static void stub_driver_lists_no_device_and_says_why(void **state) {
  (void)state;
  const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (access(stub, R_OK) != 0)
    skip();
  setenv("CALHOST_CUDA_DRIVER", stub, 1);
  cu_devices d;
  memset(&d, 0, sizeof d);
  assert_int_equal(cu_devices_init(&d, NULL, "t"), CALHOST_OK);
  assert_int_equal(d.count, 0);
  assert_non_null(strstr(d.why, "cuInit: CUDA_ERROR_STUB_LIBRARY"));
  cu_devices_free(&d);
}

static void cublaslt_policy_round_trips_and_refuses_garbage(void **state) {
  (void)state;
  char text[200], err[256];
  lt_config c = {{21, 18, 13, 4, 2, 1, 0, 0, 0}}, back;
  lt_format(&c, text, sizeof text);
  assert_string_equal(text,
                      "algo=21;tile=18;stages=13;splitk=4;reduction=2;swizzle=1;custom=0;inner=0;"
                      "cluster=0");
  assert_int_equal(lt_parse(text, strlen(text), &back, err, sizeof err), 0);
  assert_memory_equal(&c, &back, sizeof c);
  /* the form stored before issue 42 (',') still validates, to the same configuration */
  static const char old[] =
      "algo=21,tile=18,stages=13,splitk=4,reduction=2,swizzle=1,custom=0,inner=0,cluster=0";
  memset(&back, 0, sizeof back);
  assert_int_equal(lt_parse(old, strlen(old), &back, err, sizeof err), 0);
  assert_memory_equal(&c, &back, sizeof c);
  const char *bad[] = {
      "algo=21",
      "algo=21,tile=18,stages=13,splitk=0,reduction=2,swizzle=1,custom=0,inner=0,cluster=0",
      "algo=21,tile=18,stages=13,splitk=4,reduction=2,swizzle=1,custom=0,inner=0,cluster=65536",
      "algo=021,tile=18,stages=13,splitk=4,reduction=2,swizzle=1,custom=0,inner=0,cluster=0",
      "algo=21,tile=18,stages=13,splitk=4,reduction=2,swizzle=1,custom=0,inner=0,cluster=0,",
      "tile=18,algo=21,stages=13,splitk=4,reduction=2,swizzle=1,custom=0,inner=0,cluster=0",
      "algo=-1,tile=18,stages=13,splitk=4,reduction=2,swizzle=1,custom=0,inner=0,cluster=0",
      "algo=21;tile=18,stages=13,splitk=4,reduction=2,swizzle=1,custom=0,inner=0,cluster=0",
      "algo=21;tile=18;stages=13;splitk=4;reduction=2;swizzle=1;custom=0;inner=0;cluster=123456",
      "algo=21;tile=18;stages=13;splitk=4;reduction=2;swizzle=1;custom=0;inner=0;cluster=0;"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err[0] = '\0';
    if (lt_parse(bad[i], strlen(bad[i]), &back, err, sizeof err) != -1)
      fail_msg("accepted %s", bad[i]);
    assert_true(err[0] != '\0');
  }
}

/* A cu_instance whose device list is one fake H200 (listed, no driver):
 * the key builder and the target rules without a GPU. */
static void key_builder_keys_by_the_device_identity(void **state) {
  (void)state;
  cu_instance inst;
  cu_device dev;
  memset(&inst, 0, sizeof inst);
  memset(&dev, 0, sizeof dev);
  inst.mm.backend = "cuda_gemm";
  dev.ordinal = 0;
  dev.limits = cgemm_limits_sm90;
  cu_identity(dev.identity, sizeof dev.identity, "NVIDIA H200", 9, 0, 132, 143771ull << 20, 13000,
              NULL);
  inst.devs.initialised = 1;
  inst.devs.items = &dev;
  inst.devs.count = 1;
  int64_t shape[] = {4096, 4096, 4096};
  calhost_workload w = {{CALHOST_STRUCT_WORKLOAD, 1, sizeof w},
                        "w",
                        "MatMul",
                        "bfloat16",
                        shape,
                        3,
                        NULL,
                        0,
                        "sha256:ab"};
  calhost_target t = {
      {CALHOST_STRUCT_TARGET, 1, sizeof t}, dev.identity, 4, NULL, 0, "", dev.identity, 0};
  calhost_built_key k;
  memset(&k, 0, sizeof k);
  calhost_plugin_instance *pi = (calhost_plugin_instance *)(void *)&inst;
  assert_int_equal(cu_instance_build_key(pi, &w, &t, &k), CALHOST_OK);
  assert_string_equal(k.processor, "cuda:NVIDIA H200/sm_9.0/SMs 132/mem 143771MiB/driver 13.0");
  assert_int_equal(k.thread_count, 1); /* one host thread feeds the GPU */
  assert_string_equal(k.model_digest, "sha256:ab");
  assert_int_equal(k.structure_count, 5);
  assert_string_equal(k.structure[0].value, "bfloat16");
  assert_string_equal(k.structure[1].value, "4096");
  assert_string_equal(k.structure[4].value, "0");
  /* a structure: its non-default properties in name order, then the
   * library; declined by the instance's capabilities */
  calhost_property props[] = {{"trans_b", "1"}, {"bias", "n"}, {"batch", "3"}, {"alpha", "2"}};
  int64_t small[] = {512, 256, 128}; /* within the shared reference's work */
  w.properties = props;
  w.property_count = 4;
  w.shape = small;
  assert_int_equal(cu_instance_build_key(pi, &w, &t, &k), CALHOST_UNSUPPORTED);
  inst.mm.caps = MATMUL_CAN_ALL;
  snprintf(inst.library_key, sizeof inst.library_key, "cublasLt 130100");
  assert_int_equal(cu_instance_build_key(pi, &w, &t, &k), CALHOST_OK);
  static const char *const want[][2] = {{"dtype", "bfloat16"}, {"m", "512"},
                                        {"n", "256"},          {"k", "128"},
                                        {"accumulate", "0"},   {"alpha", "2"},
                                        {"batch", "3"},        {"bias", "n"},
                                        {"trans_b", "1"},      {"library", "cublasLt 130100"}};
  assert_int_equal(k.structure_count, 10);
  for (int i = 0; i < 10; i++) {
    assert_string_equal(k.structure[i].name, want[i][0]);
    assert_string_equal(k.structure[i].value, want[i][1]);
  }
  w.property_count = 0;
  w.shape = shape;
  inst.library_key[0] = '\0';
  /* a target without a device: device 0, the same key */
  t.device_identity = NULL;
  assert_int_equal(cu_instance_build_key(pi, &w, &t, &k), CALHOST_OK);
  assert_string_equal(k.processor, dev.identity);
  /* the identity changed since listing (a driver upgrade), or no such device */
  t.device_identity = "cuda:NVIDIA H200/sm_9.0/SMs 132/mem 143771MiB/driver 12.8";
  assert_int_equal(cu_instance_build_key(pi, &w, &t, &k), CALHOST_UNSUPPORTED);
  t.device_identity = dev.identity;
  t.device_index = 1;
  assert_int_equal(cu_instance_build_key(pi, &w, &t, &k), CALHOST_UNSUPPORTED);
  /* no device at all */
  inst.devs.count = 0;
  t.device_index = 0;
  assert_int_equal(cu_instance_build_key(pi, &w, &t, &k), CALHOST_UNSUPPORTED);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(policy_text_round_trips_and_refuses_garbage),
      cmocka_unit_test(validity_rule_knows_the_device_limits),
      cmocka_unit_test(defaults_and_curated_candidates_fit_both_architectures),
      cmocka_unit_test(every_parameter_value_is_reachable),
      cmocka_unit_test(workload_parser_takes_three_dtypes_and_refuses_others),
      cmocka_unit_test(structure_rules_decline_by_capability_and_stride),
      cmocka_unit_test(identity_is_the_model_not_the_board),
      cmocka_unit_test(stub_driver_lists_no_device_and_says_why),
      cmocka_unit_test(cublaslt_policy_round_trips_and_refuses_garbage),
      cmocka_unit_test(key_builder_keys_by_the_device_identity),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
