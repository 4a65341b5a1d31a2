/*
 * cgemm.h: cuda_gemm's tunable GEMM, independent of any GPU: its nine
 * parameters (block tile bm x bn, K step bk, warp tile wm x wn, pipeline
 * stages, vector width of the global->shared copies, split-K slices,
 * block-swizzle group), their policy text
 * "bm=64;bn=64;bk=16;wm=32;wn=32;stages=2;vec=4;splitk=1;swizzle=1" (the
 * ',' form stored before issue 42 still read: policy_text.h), the
 * validity rule against a device's limits (cgemm_limits, fakeable in
 * tests), the NVRTC options of a configuration (one module per distinct
 * compile-time part; split-K and swizzle are kernel arguments) and the
 * CUDA C++ source of the kernels. Internal (hidden).
 */
#ifndef CALHOST_CUDA_GEMM_CGEMM_H
#define CALHOST_CUDA_GEMM_CGEMM_H

#include <stddef.h>
#include <stdint.h>

#include "matmul.h"

#if defined(__GNUC__)
#define CGEMM_HIDDEN __attribute__((visibility("hidden")))
#else
#define CGEMM_HIDDEN
#endif

enum {
  CG_BM,
  CG_BN,
  CG_BK,
  CG_WM,
  CG_WN,
  CG_STAGES,
  CG_VEC,
  CG_SPLITK,
  CG_SWIZZLE,
  CG_COUNT,
  CG_COMPILED = CG_SPLITK /* the parameters before this one are compile-time */
};

/* The element type of A and B (C and the accumulation are always fp32). */
typedef enum cgemm_dtype { CG_F32 = 0, CG_F16 = 1, CG_BF16 = 2 } cgemm_dtype;

/* "float32", "float16", "bfloat16" -> 0 and *out, else -1. */
CGEMM_HIDDEN int cgemm_dtype_parse(const char *name, cgemm_dtype *out);
CGEMM_HIDDEN const char *cgemm_dtype_name(cgemm_dtype t);
/* Bytes of one element of A and B. */
CGEMM_HIDDEN unsigned cgemm_dtype_size(cgemm_dtype t);

typedef struct cgemm_config {
  uint32_t v[CG_COUNT]; /* values, not indices */
} cgemm_config;

typedef matmul_param cgemm_param; /* plugins/common/matmul.h */
CGEMM_HIDDEN extern const cgemm_param cgemm_params[CG_COUNT];

/* Sessions allocate A, B and C padded with zeros to multiples of this
 * (the largest block tile) and of CGEMM_PAD_K (the largest K step), so
 * that every configuration fits in the buffers; a configuration computes
 * only the problem rounded up to its own tile (cgemm_padded). */
#define CGEMM_PAD_MN 128u
#define CGEMM_PAD_K 64u

/* What the rule needs of a device (cuDeviceGetAttribute), so that tests
 * can fake an sm_80 or sm_90 part. */
typedef struct cgemm_limits {
  int cc_major, cc_minor;
  uint32_t max_threads_block; /* 1024 */
  uint32_t max_smem_block;    /* opt-in dynamic shared memory per block, bytes */
  uint32_t regs_block;        /* 32-bit registers per block (65536) */
  uint32_t max_regs_thread;   /* 255 */
} cgemm_limits;

/* The limits of an A100 (sm_80) and an H100/H200 (sm_90). */
CGEMM_HIDDEN extern const cgemm_limits cgemm_limits_sm80, cgemm_limits_sm90;

/* Threads per block, shared memory bytes and the rule's estimate of the
 * registers per thread of c for element type t. */
CGEMM_HIDDEN uint32_t cgemm_threads(const cgemm_config *c);
CGEMM_HIDDEN uint32_t cgemm_smem_bytes(const cgemm_config *c, cgemm_dtype t);
CGEMM_HIDDEN uint32_t cgemm_regs_estimate(const cgemm_config *c, cgemm_dtype t);

/* 0 when every value of c is one of its parameter's (cgemm_params), else
 * -1 naming the first that is not. */
CGEMM_HIDDEN int cgemm_in_tables(const cgemm_config *c, char *err, size_t cap);

/* The problem c computes for a workload m x n x k: M and N rounded up to
 * the block tile (bm, bn), K to the K step (bk), into out[0..2]. */
CGEMM_HIDDEN void cgemm_padded(const cgemm_config *c, uint64_t m, uint64_t n, uint64_t k,
                               uint64_t out[3]);

/* The rules that hold for every device and shape: every value in its
 * parameter's table (cgemm_in_tables), tile divisibility,
 * 2 to 16 warps (64 to 512 threads), accumulators per thread, vector width in
 * bytes 4, 8 or 16 and within bk, tensor-core tiles (bk >= 16) for
 * 16-bit types. 0, or -1 with the reason in err. */
CGEMM_HIDDEN int cgemm_valid(const cgemm_config *c, cgemm_dtype t, char *err, size_t cap);

/* The device's rules (compute capability 8.0 or later, threads, shared
 * memory, the register estimate within 255 and within the block's file)
 * and the workload's (split-K slices must divide K's steps of bk:
 * ceil(k / bk) divisible by splitk). k 0: no workload rule.
 * Includes cgemm_valid. 0 or -1 with reason. */
CGEMM_HIDDEN int cgemm_fits(const cgemm_config *c, cgemm_dtype t, const cgemm_limits *l, uint64_t k,
                            char *err, size_t cap);

/* Parses a policy (strict: the nine keys in order, values from the
 * table) and checks cgemm_valid for t. 0 or -1 with reason. */
CGEMM_HIDDEN int cgemm_parse(const char *policy, size_t length, cgemm_dtype t, cgemm_config *out,
                             char *err, size_t cap);
/* Parses without the dtype rules (validate_policy knows no workload). */
CGEMM_HIDDEN int cgemm_parse_any(const char *policy, size_t length, cgemm_config *out, char *err,
                                 size_t cap);

/* The policy text of c into buf (at least 96 bytes). */
CGEMM_HIDDEN void cgemm_format(const cgemm_config *c, char *buf, size_t cap);

/* The -D options of c's compile-time part for t, one string
 * ("-DBM=64 -DBN=64 ... -DDT=0"), the module's cache key. */
CGEMM_HIDDEN void cgemm_defines(const cgemm_config *c, cgemm_dtype t, char *buf, size_t cap);

/* The untuned default for t (a 64x64 tile of 32x32 warp tiles, two
 * stages). */
CGEMM_HIDDEN cgemm_config cgemm_default(cgemm_dtype t);

/* The curated candidates (most promising first); a session keeps those
 * cgemm_fits accepts. */
CGEMM_HIDDEN extern const cgemm_config cgemm_curated[];
CGEMM_HIDDEN extern const uint32_t cgemm_curated_count;

/* The kernels' CUDA C++ source: extern "C" gemm (the tuned kernel),
 * reduce (split-K slices into C) and reference (one thread per element,
 * double accumulation, also sum |a||b|). Compiled with cgemm_defines. */
CGEMM_HIDDEN extern const char cgemm_source[];

#endif /* CALHOST_CUDA_GEMM_CGEMM_H */
