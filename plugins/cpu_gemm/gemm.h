/*
 * gemm.h: a tunable blocked single-precision matrix multiply (SGEMM), usable
 * outside the calhost plugin. Row-major float32, C = alpha*op(A)*op(B) or
 * C += alpha*op(A)*op(B) with op(X) = X or X^T, any M, N, K >= 1, one
 * product or a batch of them (gemm_run).
 *
 * The algorithm is the Goto/BLIS one: the N dimension is cut into NC-wide
 * column blocks, K into KC-deep slices, M into MC-tall row blocks; each
 * KC x NC slice of B and each MC x KC block of A is packed into contiguous,
 * zero-padded micro-panels, and a register-blocked MR x NR micro-kernel
 * multiplies one A micro-panel by one B micro-panel. A transposed operand is
 * read by its own packing routine (the packed layout, and so the
 * micro-kernels, are the same), and alpha is applied when A is packed. Micro-kernels are
 * written with GCC vector extensions in three instruction-set classes
 * (portable 128-bit, AVX2+FMA 256-bit, AVX-512 512-bit), selected at run time.
 * Threads (a persistent pthread pool, pinned) claim contiguous slabs of the
 * rows (split M) or of the columns (split N), about four per thread, from a
 * shared counter, and run the blocked algorithm on each independently with
 * their own packing buffers: a thread slowed by other work on its CPU just
 * takes fewer slabs.
 *
 * Everything here is internal to the plugin's shared object (hidden
 * visibility); tests and benchmarks link gemm.c directly.
 */
#ifndef CALHOST_CPU_GEMM_GEMM_H
#define CALHOST_CPU_GEMM_GEMM_H

#include <stddef.h>

#if defined(__GNUC__)
#define GEMM_HIDDEN __attribute__((visibility("hidden")))
#else
#define GEMM_HIDDEN
#endif

/* Instruction-set classes of the micro-kernels, ordered by capability. */
typedef enum gemm_isa {
  GEMM_ISA_PORTABLE = 0, /* GCC vectors of 128 bits, any target */
  GEMM_ISA_AVX2 = 1,     /* AVX2 + FMA, 256 bits */
  GEMM_ISA_AVX512 = 2,   /* AVX-512F, 512 bits */
} gemm_isa;

/* The micro-kernel contract: multiplies the packed A micro-panel a (kc steps
 * of mr floats) by the packed B micro-panel b (kc steps of nr floats, 64-byte
 * aligned) and stores the mr x nr result into c (row stride ldc floats) when
 * overwrite is nonzero, else adds it to c. */
typedef void (*gemm_kernel_fn)(size_t kc, const float *a, const float *b, float *c, size_t ldc,
                               int overwrite);

/* A micro-kernel variant. Static, valid for the life of the program. */
typedef struct gemm_kernel_info {
  const char *name; /* e.g. "avx512_12x32" */
  gemm_isa isa;
  int mr, nr;
  gemm_kernel_fn fn;
} gemm_kernel_info;

/* Number of compiled micro-kernel variants (whatever the processor). */
GEMM_HIDDEN int gemm_kernel_count(void);

/* The variant at index i in [0, gemm_kernel_count()), or NULL. */
GEMM_HIDDEN const gemm_kernel_info *gemm_kernel_at(int i);

/* Index of the variant named by the len bytes at name (no NUL needed), or -1. */
GEMM_HIDDEN int gemm_kernel_find(const char *name, size_t len);

/* The best instruction-set class this processor (and its OS) supports,
 * from __builtin_cpu_supports; GEMM_ISA_PORTABLE off x86. The environment
 * variable CALHOST_CPU_GEMM_MAX_ISA (portable, avx2 or avx512) caps it, as
 * oneDNN's ONEDNN_MAX_CPU_ISA does: cpu_gemm then behaves everywhere (space,
 * keys, validator) as on a processor without the wider classes, which is
 * how the test suite proves it does not depend on the machine it runs on.
 * An unknown value is ignored. */
GEMM_HIDDEN gemm_isa gemm_isa_detect(void);

/* Stable word for an ISA class: "portable", "avx2", "avx512". */
GEMM_HIDDEN const char *gemm_isa_name(gemm_isa isa);

/* How threads share the work. */
typedef enum gemm_split {
  GEMM_SPLIT_N = 0,      /* each thread takes a slab of columns of B and C */
  GEMM_SPLIT_M = 1,      /* each thread takes a slab of rows of A and C */
  GEMM_SPLIT_SERIAL = 2, /* the caller alone, whatever the context's threads: on a
                            busy machine or a small product one thread can win */
  GEMM_SPLIT_BATCH = 3,  /* each thread takes whole products of a batch (one
                            product: the caller alone, as serial) */
} gemm_split;

/* A blocking configuration. Valid when: kernel is a known index, mc is a
 * positive multiple of the kernel's MR, nc a positive multiple of its NR,
 * kc >= 1 (gemm_config_check states the bounds). */
typedef struct gemm_config {
  int kernel;
  int mc, nc, kc;
  gemm_split split;
} gemm_config;

/* Upper bounds of the blocking parameters. */
#define GEMM_MC_MAX 4096
#define GEMM_NC_MAX 16384
#define GEMM_KC_MAX 4096
#define GEMM_PANEL_FLOATS_MAX (1u << 22) /* mc*kc and kc*nc, 16 MiB each */

/* Checks cfg's consistency (not whether this processor can run the kernel).
 * Returns 0, or -1 with a reason written into err (NUL-terminated, at most
 * err_capacity bytes; err may be NULL). */
GEMM_HIDDEN int gemm_config_check(const gemm_config *cfg, char *err, size_t err_capacity);

/* An execution context: a pool of `threads` threads (the caller plus
 * threads-1 workers) and their packing buffers. */
typedef struct gemm_ctx gemm_ctx;

/* Creates a context for `threads` (>= 1) threads. Worker i (1..threads-1) is
 * pinned to cpus[i % cpu_count] when cpus is given (borrowed; copied); the
 * caller's own affinity is left alone. Returns NULL on failure. */
GEMM_HIDDEN gemm_ctx *gemm_ctx_create(unsigned threads, const int *cpus, size_t cpu_count);

/* Stops the workers and frees the context; NULL-safe. */
GEMM_HIDDEN void gemm_ctx_destroy(gemm_ctx *ctx);

/* Threads of the context. */
GEMM_HIDDEN unsigned gemm_ctx_threads(const gemm_ctx *ctx);

/* Allocates (or keeps) the packing buffers cfg needs for an M x N x K
 * product so that gemm_sgemm allocates nothing. Returns 0, or -1 when out of
 * memory. Optional: gemm_sgemm reserves on demand. */
GEMM_HIDDEN int gemm_ctx_reserve(gemm_ctx *ctx, const gemm_config *cfg, size_t m, size_t n,
                                 size_t k);

/* C (m x n, row stride ldc) = A (m x k, lda) * B (k x n, ldb), or C += A*B
 * when accumulate is nonzero, with configuration cfg on ctx's threads.
 * cfg must pass gemm_config_check and name a kernel this processor supports
 * (the caller's duty). Pointers are borrowed; A and B must not alias C.
 * Returns 0, or -1 when a packing buffer cannot be allocated. */
GEMM_HIDDEN int gemm_sgemm(gemm_ctx *ctx, const gemm_config *cfg, size_t m, size_t n, size_t k,
                           const float *a, size_t lda, const float *b, size_t ldb, float *c,
                           size_t ldc, int accumulate);

/* A general problem: `batch` products (0 counts as 1), product p computing
 *   C_p (+)= alpha * op(A_ia) * op(B_ib),  ia = p*batch_a/batch, ib = p mod batch_b
 * where A_i = a + i*stride_a is m x k (row stride lda), or with trans_a
 * stored k x m (A^T, row stride lda >= m); B_i = b + i*stride_b is k x n
 * (ldb), or with trans_b stored n x k (ldb >= k); C_p = c + p*stride_c is
 * m x n (ldc); `+=` when accumulate. batch_a and batch_b in [1, batch]
 * (0 counts as 1). */
typedef struct gemm_problem {
  size_t m, n, k;
  const float *a;
  size_t lda, stride_a;
  int trans_a;
  const float *b;
  size_t ldb, stride_b;
  int trans_b;
  float *c;
  size_t ldc, stride_c;
  float alpha;
  int accumulate;
  size_t batch, batch_a, batch_b;
} gemm_problem;

/* Runs problem p with configuration cfg on ctx's threads (as gemm_sgemm;
 * split=b gives each thread whole products, the other splits share each
 * product in turn). Returns 0, or -1 when a packing buffer cannot be
 * allocated. */
GEMM_HIDDEN int gemm_run(gemm_ctx *ctx, const gemm_config *cfg, const gemm_problem *p);

#endif /* CALHOST_CPU_GEMM_GEMM_H */
