/*
 * xgemm.h: opencl_gemm's tuning parameters (after CLBlast's Xgemm: work-group
 * tile MWG x NWG, K tile KWG, work-group shape MDIMC x NDIMC, vector width VW
 * along N, local-memory caching SA/SB, K unrolling KU), their policy text
 * "mwg=64;nwg=64;kwg=16;mdimc=8;ndimc=8;vw=4;sa=1;sb=1;ku=4" (the ',' form
 * stored before issue 42 still read: policy_text.h), the rules a
 * configuration must obey on every device and on a given one, and the
 * OpenCL C source of the kernel. Internal (hidden).
 */
#ifndef CALHOST_OPENCL_GEMM_XGEMM_H
#define CALHOST_OPENCL_GEMM_XGEMM_H

#include <stddef.h>
#include <stdint.h>

#include "matmul.h"

#if defined(__GNUC__)
#define XGEMM_HIDDEN __attribute__((visibility("hidden")))
#else
#define XGEMM_HIDDEN
#endif

enum { XG_MWG, XG_NWG, XG_KWG, XG_MDIMC, XG_NDIMC, XG_VW, XG_SA, XG_SB, XG_KU, XG_COUNT };

/* A configuration: value per parameter (the values themselves, not
 * indices). */
typedef struct xgemm_config {
  uint32_t v[XG_COUNT];
} xgemm_config;

/* The parameter table: names ("mwg", ...) and allowed values. */
typedef matmul_param xgemm_param; /* plugins/common/matmul.h */
XGEMM_HIDDEN extern const xgemm_param xgemm_params[XG_COUNT];

/* The padding every session applies to M, N (64, the largest MWG/NWG) and
 * K (32, the largest KWG), so that every configuration divides the padded
 * problem. */
#define XGEMM_PAD_MN 64u
#define XGEMM_PAD_K 32u

/* Parses a policy (length bytes; strict: the nine keys in order, values
 * from the table, no blanks) and checks the device-independent rules.
 * Returns 0, or -1 with a reason in err. */
XGEMM_HIDDEN int xgemm_parse(const char *policy, size_t length, xgemm_config *out, char *err,
                             size_t cap);

/* The device-independent rules: mdimc <= mwg, ndimc*vw <= nwg, ku <= kwg,
 * per-work-item tile (mwg/mdimc)*(nwg/ndimc) <= 64. 0 or -1 with reason. */
XGEMM_HIDDEN int xgemm_valid(const xgemm_config *c, char *err, size_t cap);

/* Device rules: work-group size mdimc*ndimc within max_wg and the
 * per-dimension limits, local memory 4*(sa*kwg*mwg + sb*kwg*nwg) within
 * local_mem. 0 or -1 with reason. */
XGEMM_HIDDEN int xgemm_fits(const xgemm_config *c, size_t max_wg, const size_t max_item[3],
                            uint64_t local_mem, char *err, size_t cap);

/* Writes the policy text of c into buf (at least 96 bytes). */
XGEMM_HIDDEN void xgemm_format(const xgemm_config *c, char *buf, size_t cap);

/* Writes the -D build options of c into buf (at least 160 bytes). */
XGEMM_HIDDEN void xgemm_build_options(const xgemm_config *c, char *buf, size_t cap);

/* The untuned default (a plain 32x32 tile, 8x8 work-group, both operands in
 * local memory, no vectors, no unrolling). */
XGEMM_HIDDEN extern const xgemm_config xgemm_default;

/* The curated candidate list, most promising families first and spread so
 * that any evenly spaced subset (the quick rigor's 12) covers each family;
 * the session keeps those that fit its device. */
XGEMM_HIDDEN extern const xgemm_config xgemm_curated[];
XGEMM_HIDDEN extern const uint32_t xgemm_curated_count;

/* The kernel's OpenCL C source (kernel "xgemm"). */
XGEMM_HIDDEN extern const char xgemm_source[];

#endif /* CALHOST_OPENCL_GEMM_XGEMM_H */
