/*
 * xgemm.c: opencl_gemm's parameters, policy text, rules, curated candidates
 * and kernel source (see xgemm.h).
 */
#include "xgemm.h"

#include "matmul.h"
#include "policy_text.h"

#include <stdio.h>
#include <string.h>

static const uint32_t v_tile[] = {16, 32, 64}, v_kwg[] = {8, 16, 32}, v_dim[] = {4, 8, 16},
                      v_vw[] = {1, 2, 4, 8}, v_bool[] = {0, 1}, v_ku[] = {1, 2, 4, 8};
static const char *const t_tile[] = {"16", "32", "64"}, *const t_kwg[] = {"8", "16", "32"},
                         *const t_dim[] = {"4", "8", "16"}, *const t_vw[] = {"1", "2", "4", "8"},
                         *const t_bool[] = {"0", "1"}, *const t_ku[] = {"1", "2", "4", "8"};

const xgemm_param xgemm_params[XG_COUNT] = {
    {"mwg", v_tile, 3, t_tile}, {"nwg", v_tile, 3, t_tile}, {"kwg", v_kwg, 3, t_kwg},
    {"mdimc", v_dim, 3, t_dim}, {"ndimc", v_dim, 3, t_dim}, {"vw", v_vw, 4, t_vw},
    {"sa", v_bool, 2, t_bool},  {"sb", v_bool, 2, t_bool},  {"ku", v_ku, 4, t_ku},
};

/*                                 mwg nwg kwg mdimc ndimc vw sa sb ku */
const xgemm_config xgemm_default = {{32, 32, 16, 8, 8, 1, 1, 1, 1}};

/* The curated configurations (curated.def). */
const xgemm_config xgemm_curated[] = {
#define XGEMM_CURATED(...) {{__VA_ARGS__}},
#include "curated.def"
#undef XGEMM_CURATED
};
const uint32_t xgemm_curated_count = sizeof xgemm_curated / sizeof xgemm_curated[0];

int xgemm_valid(const xgemm_config *c, char *err, size_t cap) {
  const uint32_t *v = c->v;
  if (v[XG_MDIMC] > v[XG_MWG])
    return matmul_fail(err, cap, "mdimc=%u exceeds mwg=%u", v[XG_MDIMC], v[XG_MWG]);
  if (v[XG_NDIMC] * v[XG_VW] > v[XG_NWG])
    return matmul_fail(err, cap, "ndimc*vw=%u exceeds nwg=%u", v[XG_NDIMC] * v[XG_VW], v[XG_NWG]);
  if (v[XG_KU] > v[XG_KWG])
    return matmul_fail(err, cap, "ku=%u exceeds kwg=%u", v[XG_KU], v[XG_KWG]);
  if ((v[XG_MWG] / v[XG_MDIMC]) * (v[XG_NWG] / v[XG_NDIMC]) > 64)
    return matmul_fail(err, cap, "work-item tile %ux%u exceeds 64 accumulators",
                       v[XG_MWG] / v[XG_MDIMC], v[XG_NWG] / v[XG_NDIMC]);
  return 0;
}

int xgemm_fits(const xgemm_config *c, size_t max_wg, const size_t max_item[3], uint64_t local_mem,
               char *err, size_t cap) {
  const uint32_t *v = c->v;
  uint64_t wg = (uint64_t)v[XG_MDIMC] * v[XG_NDIMC];
  uint64_t lmem = 4ull * v[XG_KWG] * (v[XG_SA] * v[XG_MWG] + v[XG_SB] * v[XG_NWG]);
  if (wg > max_wg)
    return matmul_fail(err, cap, "work-group size %llu exceeds the device's %zu",
                       (unsigned long long)wg, max_wg);
  if ((max_item[0] && v[XG_MDIMC] > max_item[0]) || (max_item[1] && v[XG_NDIMC] > max_item[1]))
    return matmul_fail(err, cap, "work-group %ux%u exceeds the device's item sizes %zux%zu",
                       v[XG_MDIMC], v[XG_NDIMC], max_item[0], max_item[1]);
  if (lmem > local_mem)
    return matmul_fail(err, cap, "local memory %llu bytes exceeds the device's %llu",
                       (unsigned long long)lmem, (unsigned long long)local_mem);
  return 0;
}

int xgemm_parse(const char *p, size_t len, xgemm_config *out, char *err, size_t cap) {
  if (matmul_parse_params(p, len, 128, xgemm_params, XG_COUNT, out->v, err, cap) != 0)
    return -1;
  return xgemm_valid(out, err, cap);
}

void xgemm_format(const xgemm_config *c, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = '\0';
  for (int k = 0; k < XG_COUNT; k++)
    policy_text_put(buf, cap, &n, k, xgemm_params[k].name, c->v[k]);
}

void xgemm_build_options(const xgemm_config *c, char *buf, size_t cap) {
  const uint32_t *v = c->v;
  snprintf(buf, cap,
           "-cl-mad-enable -DMWG=%u -DNWG=%u -DKWG=%u -DMDIMC=%u -DNDIMC=%u -DVW=%u -DSA=%u "
           "-DSB=%u -DKU=%u",
           v[XG_MWG], v[XG_NWG], v[XG_KWG], v[XG_MDIMC], v[XG_NDIMC], v[XG_VW], v[XG_SA], v[XG_SB],
           v[XG_KU]);
}

/* Row-major C[M x N] = alpha * op(A) * op(B) + bbeta * bias + beta C, M, N,
 * K padded to the tiles (MP, NV*VW, K), for product get_group_id(2) of a
 * batch: its A is number p*batch_a/batch (each MP x K, or K x MP with
 * -DTA=1), its B number p mod batch_b (K x N, or N x K with -DTB=1), its C
 * number p. Work-group (gm, gn) computes the MWG x NWG tile at (gm*MWG,
 * gn*NWG); work-item (tm, tn) its rows tm*MWI .. +MWI and its vector columns
 * tn, tn + NDIMC, ... (strided, so neighbouring work-items touch
 * neighbouring vectors). B (not transposed) and C are read as vectors of VW
 * floats; NV is N / VW; a transposed B is gathered into vectors. With
 * -DBIAS=1 the bias element (i, j) is bias[i*brs + j*bcs] (strides 0 give
 * the broadcast forms). */
const char xgemm_source[] =
    "#ifndef TA\n"
    "#define TA 0\n"
    "#endif\n"
    "#ifndef TB\n"
    "#define TB 0\n"
    "#endif\n"
    "#ifndef BIAS\n"
    "#define BIAS 0\n"
    "#endif\n"
    "#if VW == 1\n"
    "typedef float realV;\n"
    "#define GATHER(f, c) (f(c))\n"
    "#elif VW == 2\n"
    "typedef float2 realV;\n"
    "#define GATHER(f, c) ((realV)(f(c), f((c) + 1)))\n"
    "#elif VW == 4\n"
    "typedef float4 realV;\n"
    "#define GATHER(f, c) ((realV)(f(c), f((c) + 1), f((c) + 2), f((c) + 3)))\n"
    "#else\n"
    "typedef float8 realV;\n"
    "#define GATHER(f, c) ((realV)(f(c), f((c) + 1), f((c) + 2), f((c) + 3), f((c) + 4), \\\n"
    "                             f((c) + 5), f((c) + 6), f((c) + 7)))\n"
    "#endif\n"
    "#define MWI (MWG / MDIMC)\n"
    "#define NWI (NWG / NDIMC)\n"
    "#define NVI (NWI / VW)\n"
    "#define NWGV (NWG / VW)\n"
    "#if TA\n"
    "#define AIDX(m, k) ((k) * MP + (m))\n"
    "#else\n"
    "#define AIDX(m, k) ((m) * K + (k))\n"
    "#endif\n"
    "#if TB\n"
    "typedef float realB;\n"
    "#else\n"
    "typedef realV realB;\n"
    "#endif\n"
    "__kernel __attribute__((reqd_work_group_size(MDIMC, NDIMC, 1)))\n"
    "void xgemm(const int K, const int NV, const float beta,\n"
    "           const __global float *restrict A, const __global realB *restrict B,\n"
    "           __global realV *C, const int MP, const float alpha,\n"
    "           const __global float *restrict bias, const int brs, const int bcs,\n"
    "           const float bbeta, const int batch, const int batch_a, const int batch_b) {\n"
    "  const int tm = get_local_id(0), tn = get_local_id(1), prod = get_group_id(2);\n"
    "  const int m0 = get_group_id(0) * MWG + tm * MWI;\n"
    "  const int nv0 = get_group_id(1) * NWGV;\n"
    "  A += (size_t)(prod * batch_a / batch) * MP * K;\n"
    "  B += (size_t)(prod % batch_b) * K * NV * (TB ? VW : 1);\n"
    "  C += (size_t)prod * MP * NV;\n"
    "#if TB\n"
    "#define BTK(c) B[(c) * K + bk]\n"
    "#endif\n"
    "#if SA || SB\n"
    "  const int lid = tn * MDIMC + tm;\n"
    "#endif\n"
    "#if SA\n"
    "  __local float alm[KWG * MWG];\n"
    "  const int am0 = get_group_id(0) * MWG;\n"
    "#endif\n"
    "#if SB\n"
    "  __local realV blm[KWG * NWGV];\n"
    "#endif\n"
    "  realV acc[MWI][NVI];\n"
    "  for (int mi = 0; mi < MWI; mi++)\n"
    "    for (int ni = 0; ni < NVI; ni++)\n"
    "      acc[mi][ni] = (realV)(0.0f);\n"
    "  for (int k0 = 0; k0 < K; k0 += KWG) {\n"
    "#if SA\n"
    "    for (int i = lid; i < KWG * MWG; i += MDIMC * NDIMC) {\n"
    "#if TA\n"
    "      const int mm = i % MWG, kk = i / MWG;\n"
    "#else\n"
    "      const int kk = i % KWG, mm = i / KWG;\n"
    "#endif\n"
    "      alm[kk * MWG + mm] = A[AIDX(am0 + mm, k0 + kk)];\n"
    "    }\n"
    "#endif\n"
    "#if SB\n"
    "    for (int i = lid; i < KWG * NWGV; i += MDIMC * NDIMC) {\n"
    "      const int nn = i % NWGV, kk = i / NWGV;\n"
    "#if TB\n"
    "      const int bk = k0 + kk;\n"
    "      blm[kk * NWGV + nn] = GATHER(BTK, (nv0 + nn) * VW);\n"
    "#else\n"
    "      blm[kk * NWGV + nn] = B[(k0 + kk) * NV + nv0 + nn];\n"
    "#endif\n"
    "    }\n"
    "#endif\n"
    "#if SA || SB\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "#endif\n"
#ifdef OPENCL_GEMM_TEST_WRONG_KERNEL
    /* test builds only (tests/opencl): drops the last k of each tile, so the
     * reference check must reject every candidate */
    "    for (int kk = 0; kk < KWG - 1; kk += 1) {\n"
    "      for (int u = 0; u < 1; u++) {\n"
#else
    "    for (int kk = 0; kk < KWG; kk += KU) {\n"
    "#pragma unroll\n"
    "      for (int u = 0; u < KU; u++) {\n"
#endif
    "        const int k = kk + u;\n"
    "        realV bv[NVI];\n"
    "        for (int ni = 0; ni < NVI; ni++) {\n"
    "#if SB\n"
    "          bv[ni] = blm[k * NWGV + ni * NDIMC + tn];\n"
    "#elif TB\n"
    "          const int bk = k0 + k;\n"
    "          bv[ni] = GATHER(BTK, (nv0 + ni * NDIMC + tn) * VW);\n"
    "#else\n"
    "          bv[ni] = B[(k0 + k) * NV + nv0 + ni * NDIMC + tn];\n"
    "#endif\n"
    "        }\n"
    "        for (int mi = 0; mi < MWI; mi++) {\n"
    "#if SA\n"
    "          const float av = alm[k * MWG + tm * MWI + mi];\n"
    "#else\n"
    "          const float av = A[AIDX(m0 + mi, k0 + k)];\n"
    "#endif\n"
    "          for (int ni = 0; ni < NVI; ni++)\n"
    "            acc[mi][ni] += av * bv[ni];\n"
    "        }\n"
    "      }\n"
    "    }\n"
    "#if SA || SB\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "#endif\n"
    "  }\n"
    "  for (int mi = 0; mi < MWI; mi++) {\n"
    "#if BIAS\n"
    "    const int brow = (m0 + mi) * brs;\n"
    "#define BIASAT(c) bias[brow + (c) * bcs]\n"
    "#endif\n"
    "    for (int ni = 0; ni < NVI; ni++) {\n"
    "      const int idx = (m0 + mi) * NV + nv0 + ni * NDIMC + tn;\n"
    "      realV r = alpha * acc[mi][ni];\n"
    "#if BIAS\n"
    "      r += bbeta * GATHER(BIASAT, (nv0 + ni * NDIMC + tn) * VW);\n"
    "#endif\n"
    "      C[idx] = beta != 0.0f ? r + beta * C[idx] : r;\n"
    "    }\n"
    "  }\n"
    "}\n";
