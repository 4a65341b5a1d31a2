/*
 * cgemm.c: cuda_gemm's parameters, policy text, validity rule, NVRTC
 * defines and curated candidates (see cgemm.h). The kernel source is
 * kernels.cu, embedded by the build as cgemm_source.
 */
#include "cgemm.h"

#include "matmul.h"
#include "policy_text.h"

#include <stdio.h>
#include <string.h>

static const uint32_t v_tile[] = {32, 64, 128}, v_bk[] = {16, 32, 64}, v_warp[] = {16, 32, 64},
                      v_stages[] = {1, 2, 3}, v_vec[] = {2, 4, 8}, v_split[] = {1, 2, 4, 8},
                      v_swz[] = {1, 2, 4, 8};
static const char *const t_tile[] = {"32", "64", "128"}, *const t_bk[] = {"16", "32", "64"},
                         *const t_warp[] = {"16", "32", "64"}, *const t_stages[] = {"1", "2", "3"},
                         *const t_vec[] = {"2", "4", "8"}, *const t_pow8[] = {"1", "2", "4", "8"};

const cgemm_param cgemm_params[CG_COUNT] = {
    {"bm", v_tile, 3, t_tile}, {"bn", v_tile, 3, t_tile},      {"bk", v_bk, 3, t_bk},
    {"wm", v_warp, 3, t_warp}, {"wn", v_warp, 3, t_warp},      {"stages", v_stages, 3, t_stages},
    {"vec", v_vec, 3, t_vec},  {"splitk", v_split, 4, t_pow8}, {"swizzle", v_swz, 4, t_pow8},
};

/* A100 (sm_80): 163 KiB opt-in shared memory per block; H100/H200 (sm_90):
 * 227 KiB. Both: 1024 threads, 64 Ki registers per block, 255 per thread. */
const cgemm_limits cgemm_limits_sm80 = {8, 0, 1024, 166912, 65536, 255};
const cgemm_limits cgemm_limits_sm90 = {9, 0, 1024, 232448, 65536, 255};

int cgemm_dtype_parse(const char *name, cgemm_dtype *out) {
  static const char *const names[] = {"float32", "float16", "bfloat16"};
  for (int i = 0; name && i < 3; i++)
    if (strcmp(name, names[i]) == 0) {
      *out = (cgemm_dtype)i;
      return 0;
    }
  return -1;
}

const char *cgemm_dtype_name(cgemm_dtype t) {
  return t == CG_F16 ? "float16" : t == CG_BF16 ? "bfloat16" : "float32";
}

unsigned cgemm_dtype_size(cgemm_dtype t) {
  return t == CG_F32 ? 4u : 2u;
}

uint32_t cgemm_threads(const cgemm_config *c) {
  return (c->v[CG_BM] / c->v[CG_WM]) * (c->v[CG_BN] / c->v[CG_WN]) * 32u;
}

uint32_t cgemm_smem_bytes(const cgemm_config *c, cgemm_dtype t) {
  uint32_t es = cgemm_dtype_size(t), pad = 16 / es;
  const uint32_t *v = c->v;
  return v[CG_STAGES] * (v[CG_BM] * (v[CG_BK] + pad) + v[CG_BK] * (v[CG_BN] + pad)) * es;
}

/* Accumulators, the operands of one K step, the copy loop's addresses and
 * a fixed overhead (indices, pointers, loop counters), calibrated against
 * ptxas's reports for sm_80 and sm_90 (tests/cuda checks it). */
uint32_t cgemm_regs_estimate(const cgemm_config *c, cgemm_dtype t) {
  const uint32_t *v = c->v;
  if (t == CG_F32) {
    uint32_t tm = v[CG_WM] / 4, tn = v[CG_WN] / 8, acc = tm * tn;
    return acc + acc / 2 + 2 * (tm + tn) + 40;
  }
  uint32_t fm = v[CG_WM] / 16, fn = v[CG_WN] / 16;
  return fm * fn * 8 + (fm + fn) * 8 + 40;
}

int cgemm_in_tables(const cgemm_config *c, char *err, size_t cap) {
  for (int k = 0; k < CG_COUNT; k++) {
    uint32_t i = 0;
    while (i < cgemm_params[k].count && cgemm_params[k].values[i] != c->v[k])
      i++;
    if (i == cgemm_params[k].count)
      return matmul_fail(err, cap, "%s=%u is not one of the parameter's values",
                         cgemm_params[k].name, c->v[k]);
  }
  return 0;
}

void cgemm_padded(const cgemm_config *c, uint64_t m, uint64_t n, uint64_t k, uint64_t out[3]) {
  out[0] = (m + c->v[CG_BM] - 1) / c->v[CG_BM] * c->v[CG_BM];
  out[1] = (n + c->v[CG_BN] - 1) / c->v[CG_BN] * c->v[CG_BN];
  out[2] = (k + c->v[CG_BK] - 1) / c->v[CG_BK] * c->v[CG_BK];
}

int cgemm_valid(const cgemm_config *c, cgemm_dtype t, char *err, size_t cap) {
  const uint32_t *v = c->v;
  uint32_t threads, bytes = v[CG_VEC] * cgemm_dtype_size(t);
  if (cgemm_in_tables(c, err, cap) != 0)
    return -1;
  if (v[CG_WM] > v[CG_BM] || v[CG_WN] > v[CG_BN])
    return matmul_fail(err, cap, "warp tile %ux%u exceeds block tile %ux%u", v[CG_WM], v[CG_WN],
                       v[CG_BM], v[CG_BN]);
  threads = cgemm_threads(c);
  if (threads < 64 || threads > 512)
    return matmul_fail(err, cap, "%u threads per block: 2 to 16 warps", threads);
  if (bytes != 4 && bytes != 8 && bytes != 16)
    return matmul_fail(err, cap, "vec=%u copies %u bytes (cp.async copies 4, 8 or 16)", v[CG_VEC],
                       bytes);
  if (v[CG_VEC] > v[CG_BK])
    return matmul_fail(err, cap, "vec=%u exceeds bk=%u", v[CG_VEC], v[CG_BK]);
  if (t == CG_F32) {
    if ((v[CG_WM] / 4) * (v[CG_WN] / 8) > 64)
      return matmul_fail(err, cap, "thread tile %ux%u exceeds 64 accumulators", v[CG_WM] / 4,
                         v[CG_WN] / 8);
  } else {
    if (v[CG_BK] < 16)
      return matmul_fail(err, cap, "bk=%u: tensor-core steps are 16 deep", v[CG_BK]);
    if ((v[CG_WM] / 16) * (v[CG_WN] / 16) > 8)
      return matmul_fail(err, cap, "warp tile %ux%u holds more than 8 accumulator fragments",
                         v[CG_WM], v[CG_WN]);
  }
  return 0;
}

int cgemm_fits(const cgemm_config *c, cgemm_dtype t, const cgemm_limits *l, uint64_t k, char *err,
               size_t cap) {
  uint32_t threads, smem, regs;
  if (cgemm_valid(c, t, err, cap) != 0)
    return -1;
  if (l->cc_major < 8)
    return matmul_fail(err, cap, "compute capability %d.%d: cuda_gemm needs 8.0 (cp.async%s)",
                       l->cc_major, l->cc_minor, t == CG_F32 ? "" : ", bf16 tensor cores");
  threads = cgemm_threads(c);
  if (threads > l->max_threads_block)
    return matmul_fail(err, cap, "%u threads per block exceed the device's %u", threads,
                       l->max_threads_block);
  smem = cgemm_smem_bytes(c, t);
  if (smem > l->max_smem_block)
    return matmul_fail(err, cap, "shared memory %u bytes exceeds the device's %u per block", smem,
                       l->max_smem_block);
  regs = cgemm_regs_estimate(c, t);
  if (regs > l->max_regs_thread)
    return matmul_fail(err, cap, "about %u registers per thread exceed the device's %u", regs,
                       l->max_regs_thread);
  if ((uint64_t)regs * threads > l->regs_block)
    return matmul_fail(err, cap, "about %u registers x %u threads exceed the block's %u", regs,
                       threads, l->regs_block);
  uint64_t steps = (k + c->v[CG_BK] - 1) / c->v[CG_BK];
  if (k && steps % c->v[CG_SPLITK] != 0)
    return matmul_fail(err, cap, "splitk=%u does not divide K's %llu steps of bk=%u",
                       c->v[CG_SPLITK], (unsigned long long)steps, c->v[CG_BK]);
  return 0;
}

int cgemm_parse_any(const char *p, size_t len, cgemm_config *out, char *err, size_t cap) {
  return matmul_parse_params(p, len, 128, cgemm_params, CG_COUNT, out->v, err, cap);
}

int cgemm_parse(const char *p, size_t len, cgemm_dtype t, cgemm_config *out, char *err,
                size_t cap) {
  if (cgemm_parse_any(p, len, out, err, cap) != 0)
    return -1;
  return cgemm_valid(out, t, err, cap);
}

void cgemm_format(const cgemm_config *c, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = '\0';
  for (int k = 0; k < CG_COUNT; k++)
    policy_text_put(buf, cap, &n, k, cgemm_params[k].name, c->v[k]);
}

void cgemm_defines(const cgemm_config *c, cgemm_dtype t, char *buf, size_t cap) {
  const uint32_t *v = c->v;
  snprintf(buf, cap, "-DBM=%u -DBN=%u -DBK=%u -DWM=%u -DWN=%u -DSTAGES=%u -DVEC=%u -DDT=%d",
           v[CG_BM], v[CG_BN], v[CG_BK], v[CG_WM], v[CG_WN], v[CG_STAGES], v[CG_VEC], (int)t);
}

cgemm_config cgemm_default(cgemm_dtype t) {
  /*                       bm  bn  bk  wm  wn  st vec split swz */
  cgemm_config f32 = {{64, 64, 16, 32, 32, 2, 4, 1, 1}};
  cgemm_config f16 = {{64, 64, 32, 32, 32, 2, 8, 1, 1}};
  return t == CG_F32 ? f32 : f16;
}

/* Spread so that an evenly spaced subset covers each family; those for
 * one dtype that the other refuses are dropped by the session. Every
 * value is one of its parameter's (cgemm_valid checks it; tests/cuda's
 * cuda_curated serializes each kept entry through the validator). */
const cgemm_config cgemm_curated[] = {
    /* bm  bn  bk  wm  wn st vec split swz */
    {{128, 128, 16, 64, 32, 3, 4, 1, 4}}, {{128, 128, 32, 64, 64, 3, 8, 1, 4}},
    {{128, 64, 16, 32, 32, 3, 4, 1, 2}},  {{64, 128, 32, 32, 64, 3, 8, 1, 2}},
    {{64, 64, 16, 32, 32, 2, 4, 1, 1}},   {{64, 64, 32, 32, 32, 2, 8, 1, 1}},
    {{128, 128, 16, 64, 32, 2, 4, 1, 8}}, {{128, 128, 64, 64, 64, 2, 8, 1, 8}},
    {{128, 64, 32, 64, 32, 3, 4, 2, 1}},  {{128, 64, 32, 64, 32, 3, 8, 2, 1}},
    {{64, 64, 32, 32, 32, 3, 4, 4, 1}},   {{64, 64, 64, 32, 32, 3, 8, 4, 1}},
    {{32, 32, 16, 16, 16, 2, 4, 1, 1}},   {{32, 32, 32, 16, 16, 2, 8, 1, 1}},
    {{128, 32, 16, 32, 32, 3, 4, 1, 2}},  {{32, 128, 32, 32, 32, 3, 8, 1, 2}},
    {{64, 64, 16, 32, 16, 2, 2, 8, 1}},   {{64, 64, 64, 32, 16, 3, 4, 8, 1}},
    {{128, 128, 16, 32, 64, 3, 4, 1, 4}}, {{128, 128, 32, 32, 64, 3, 8, 1, 4}},
};
const uint32_t cgemm_curated_count = sizeof cgemm_curated / sizeof cgemm_curated[0];
