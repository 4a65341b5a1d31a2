/*
 * matmul.h: what the MatMul backends (cpu_gemm, openblas, opencl_gemm,
 * clblast, cuda_gemm, cublaslt) share, linked into each of them
 * (calhost_matmul_common; hidden, never exported), and compiled into the
 * tests of its reference and parsing (tests/gemm, tests/race, tests/opencl):
 * error reporting, the policy-text preconditions, parsing a float32 MatMul
 * workload, the common parts of build_key and open_session, the session's
 * deterministic inputs, and the trusted double-precision reference with its
 * check.
 */
#ifndef CALHOST_CPU_GEMM_MATMUL_H
#define CALHOST_CPU_GEMM_MATMUL_H

#include <calhost/plugin.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define MATMUL_HIDDEN __attribute__((visibility("hidden")))
#else
#define MATMUL_HIDDEN
#endif

/* Formats a message (at most 511 bytes) and hands it to host->set_error;
 * nothing when host or its set_error is NULL. The MatMul backends' one
 * error reporter. */
MATMUL_HIDDEN void matmul_set_error(const calhost_host_services *host, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Formats a reason into err (capacity cap; nothing when err is NULL or cap
 * is 0) and returns -1: the backends' validators write
 * `return matmul_fail(err, cap, ...)`. */
MATMUL_HIDDEN int matmul_fail(char *err, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* 1 when the host asks the running call to stop (host->is_cancelled says
 * so), else 0; host or its is_cancelled may be NULL. */
MATMUL_HIDDEN int matmul_cancelled(const calhost_host_services *host);

/* The preconditions every policy text has: non-NULL, 1..max bytes, only
 * printable ASCII without spaces. Returns 0, or -1 with the reason ("empty
 * policy", "policy longer than MAX bytes", "invalid byte 0xHH at offset N")
 * in err (matmul_fail). */
MATMUL_HIDDEN int matmul_policy_text(const char *policy, size_t length, size_t max, char *err,
                                     size_t cap);

/* The operators a MatMul backend serves: {"MatMul", NULL}, for the
 * vtable's operators. */
/* One named parameter of a kernel's policy text: its allowed values and
 * their words (opencl_gemm's xgemm and cuda_gemm's cgemm tables). */
typedef struct matmul_param {
  const char *name;
  const uint32_t *values;
  uint32_t count;
  const char *const *texts; /* the values as words, for the ABI's space */
} matmul_param;

/* Parses "NAME=WORD;NAME=WORD;..." (or the earlier stored form with ',':
 * policy_text.h) with exactly params' names in their order (at most `max`
 * bytes of printable text) into out[i] = the value of params[i]'s word.
 * Returns 0, or -1 with the reason in err. Defined in policy_text.c. */
MATMUL_HIDDEN int matmul_parse_params(const char *policy, size_t length, size_t max,
                                      const matmul_param *params, int count, uint32_t *out,
                                      char *err, size_t cap);

MATMUL_HIDDEN extern const char *const matmul_operators[];

/* Largest dimension, matrix (elements) and product (multiply-adds) served:
 * inputs, output and reference must fit in memory and the reference must
 * finish in seconds. */
#define MATMUL_DIM_MAX (1 << 20)
#define MATMUL_MATRIX_MAX ((uint64_t)1 << 27)
#define MATMUL_WORK_MAX ((uint64_t)1 << 34)

/* The broadcast form of a Gemm bias C (ONNX Gemm's third input): a
 * scalar ([], [1], [1,1]), a row of N ([N], [1,N]), a column of M ([M,1]) or
 * a full M x N matrix. */
typedef enum matmul_bias {
  MATMUL_BIAS_NONE = 0,
  MATMUL_BIAS_SCALAR,
  MATMUL_BIAS_N,
  MATMUL_BIAS_M,
  MATMUL_BIAS_MN,
} matmul_bias;

/* The structure of a MatMul workload (the model reader's contract,
 * plugin-sdk/README.md "MatMul structure"): `batch` products, product p
 * (0 <= p < batch) computing
 *   C_p (+)= alpha * op(A_[p*batch_a/batch]) * op(B_[p mod batch_b])
 *            + beta * bias (broadcast to M x N)
 * with op(A) = A (M x K) or A^T (A stored K x M, trans_a), op(B) = B (K x N)
 * or B^T (B stored N x K, trans_b); every matrix dense, row-major and
 * contiguous (strides the matrix sizes); the `+=` when accumulate. An
 * unbatched shape has batch = batch_a = batch_b = 1; MATMUL_SHAPE gives the
 * defaults. */
typedef struct matmul_shape {
  size_t m, n, k;
  int accumulate;       /* C += ... instead of C = ... */
  int trans_a, trans_b; /* 0/1 */
  float alpha;          /* 1 by default */
  float beta;           /* the bias's factor; 1 by default, meaningful with a bias */
  matmul_bias bias;
  size_t batch, batch_a, batch_b; /* products, distinct A, distinct B (each >= 1) */
} matmul_shape;

/* A shape of defaults: C (+)= A*B, M x N x K, one product. */
#define MATMUL_SHAPE(M, N, K, ACC)                                                                 \
  { (M), (N), (K), (ACC), 0, 0, 1.0f, 1.0f, MATMUL_BIAS_NONE, 1, 1, 1 }

/* What a backend runs beyond the plain (accumulating) product: the bits
 * of a matmul_instance's caps. The parser declines a workload whose
 * property is not the default and whose bit the backend lacks
 * (CALHOST_UNSUPPORTED, naming the property). */
#define MATMUL_CAN_TRANS_A 0x1u /* trans_a=1 */
#define MATMUL_CAN_TRANS_B 0x2u /* trans_b=1 */
#define MATMUL_CAN_ALPHA 0x4u   /* alpha != 1 */
#define MATMUL_CAN_BIAS 0x8u    /* bias in each form, with beta */
#define MATMUL_CAN_BATCH 0x10u  /* batch, batch_a, batch_b */
#define MATMUL_CAN_ALL 0x1fu

/* Index of the A matrix of product p (floor(p * batch_a / batch)) and of
 * its B matrix (p mod batch_b). */
MATMUL_HIDDEN size_t matmul_a_index(const matmul_shape *s, size_t p);
MATMUL_HIDDEN size_t matmul_b_index(const matmul_shape *s, size_t p);

/* Number of bias values of s's form (0 without a bias): 1, N, M or M*N. */
MATMUL_HIDDEN size_t matmul_bias_count(const matmul_shape *s);

/* The bias value at output element (i, j) of raw bias values `bias` in s's
 * broadcast form (0 without a bias); beta not applied. */
MATMUL_HIDDEN float matmul_bias_at(const matmul_shape *s, const float *bias, size_t i, size_t j);

/* Checks that w is a float32 MatMul with shape {M, N, K} (each in
 * [1, MATMUL_DIM_MAX], within the size limits, counting every matrix of a
 * batch) and only the properties of the MatMul structure (accumulate,
 * alpha, batch, batch_a, batch_b, beta, bias, trans_a, trans_b; each at
 * most once, beta only with a bias, 1 <= batch_a, batch_b <= batch); fills
 * *s. A property whose value is not the default and whose MATMUL_CAN_ bit
 * is not in caps is declined: CALHOST_UNSUPPORTED with "BACKEND does not
 * run MatMul property 'NAME' (...)". On failure returns CALHOST_UNSUPPORTED
 * or CALHOST_INVALID_ARGUMENT after host->set_error (host may be NULL),
 * messages prefixed with backend. */
MATMUL_HIDDEN calhost_status matmul_parse_workload(const calhost_host_services *host,
                                                   const char *backend, unsigned caps,
                                                   const calhost_workload *w, matmul_shape *s);

/* The initializer of a static float32 MatMul sample workload (for the
 * vtable's sample_workloads): its name, its {M, N, K} (a static
 * int64_t[3]) and its properties (static, or NULL with count 0). */
#define MATMUL_SAMPLE(name, mnk, properties, property_count)                                       \
  {                                                                                                \
    {CALHOST_STRUCT_WORKLOAD, 1, sizeof(calhost_workload)}, (name), "MatMul", "float32", (mnk), 3, \
        (properties), (property_count), NULL                                                       \
  }

/* The portable key's structural properties of a MatMul shape, in storage
 * the caller owns (it must outlive the build_key call that returns them):
 * dtype, m, n, k and accumulate always (the keys of plain products are
 * those of earlier releases), then, only where they differ from their
 * defaults and in name order, alpha, batch, batch_a, batch_b, beta, bias,
 * trans_a, trans_b: two structures never share a key. */
#define MATMUL_STRUCTURE_MAX 13
typedef struct matmul_structure {
  char m[24], n[24], k[24], alpha[32], beta[32], batch[24], batch_a[24], batch_b[24];
  calhost_property props[MATMUL_STRUCTURE_MAX];
  size_t count; /* props used */
} matmul_structure;

/* Fills *out with s's properties (above); its props point into *out. */
MATMUL_HIDDEN void matmul_structure_fill(matmul_structure *out, const matmul_shape *s);

/* A session's matrices, row-major and dense: the batch_a A matrices (each
 * m x k, or k x m with trans_a), the batch_b B matrices (k x n, or n x k
 * with trans_b), the batch outputs C (m x n each), back to back; bias the
 * raw bias values (matmul_bias_count, NULL without a bias); C0 the starting
 * C when accumulating (else NULL); ref = alpha*op(A)*op(B) + beta*bias and
 * mag = |alpha| |op(A)|*|op(B)| + |beta*bias| per output, in double
 * (NULL until the first check: matmul_data_reference). */
typedef struct matmul_data {
  matmul_shape shape;
  float *a, *b, *c, *c0, *bias;
  double *ref, *mag;
} matmul_data;

/* Element counts of all A matrices, all B matrices and all outputs. */
MATMUL_HIDDEN size_t matmul_a_size(const matmul_shape *s);
MATMUL_HIDDEN size_t matmul_b_size(const matmul_shape *s);
MATMUL_HIDDEN size_t matmul_c_size(const matmul_shape *s);

/* Allocates and fills d for shape s: deterministic inputs in [-1, 1); the
 * reference is NOT computed here (ref and mag stay NULL) but on the first
 * matmul_check, or by matmul_data_reference: a session that is only timed
 * (a race of policies its sweep checked, a model bench) never pays for the
 * double-precision triple loop, which costs far more than the products.
 * Returns 0, or -1 when out of memory (d is then freed). */
MATMUL_HIDDEN int matmul_data_init(matmul_data *d, const matmul_shape *s);

/* Computes d's reference (ref, mag: a triple loop in double per product)
 * unless it is already there; d's inputs must not have changed since
 * matmul_data_init. Returns 0, or -1 when out of memory (ref and mag then
 * NULL). */
MATMUL_HIDDEN int matmul_data_reference(matmul_data *d);

/* Frees d's buffers; safe on a zeroed or freed d. */
MATMUL_HIDDEN void matmul_data_free(matmul_data *d);

/* Before a run: copies C0 into C when accumulating (so every run() call
 * starts from the same C); no-op otherwise. */
MATMUL_HIDDEN void matmul_data_reset(matmul_data *d);

/* Writes beta*bias, broadcast, into each of the batch m x n outputs at c
 * (adds it when add is nonzero): the first step of a Gemm with bias on a
 * library whose GEMM then adds alpha*op(A)*op(B) (beta 1), as ONNX
 * runtimes do. No-op without a bias. */
MATMUL_HIDDEN void matmul_bias_apply(const matmul_data *d, float *c, int add);

/* Compares C, the output of a run of `iterations` products (C = C0 +
 * iterations*ref when accumulating, else ref), with the reference
 * (computed on the first call and kept in d: matmul_data_reference). The
 * tolerance per element is 16 u sqrt(K + it) (mag + |C0|), u = 2^-24:
 * a statistical bound for float sums of these uniform inputs, far below one
 * missing or doubled product. NaN/Inf fail. Returns CALHOST_OK or
 * CALHOST_CHECK_FAILED with the first bad element ("C[p][i][j]" in a batch)
 * in err; CALHOST_NO_MEMORY when the reference cannot be allocated. */
MATMUL_HIDDEN calhost_status matmul_check(const matmul_data *d, uint32_t iterations, char *err,
                                          size_t err_capacity);

/* What every MatMul backend's instance struct holds as its FIRST member,
 * so that the functions below serve all of them (a calhost_plugin_instance
 * * of such a backend points to it). */
typedef struct matmul_instance {
  const calhost_host_services *host;
  const char *backend;    /* its name, the prefix of its messages */
  matmul_structure shape; /* storage behind the last built key */
  unsigned thread_cap;    /* the most threads the backend uses, 0: no cap (matmul_key) */
  unsigned caps;          /* MATMUL_CAN_ bits: the structures it runs (0: plain products) */
} matmul_instance;

/* Allocates `size` zeroed bytes (at least a matmul_instance) for a
 * backend's instance and sets its host and backend (caps 0: the backend
 * sets the structures it runs); NULL when out of memory. The caller completes it and frees it in
 * destroy. */
MATMUL_HIDDEN void *matmul_instance_new(const calhost_host_services *host, const char *backend,
                                        size_t size);

/* The destroy entry of a backend whose instance owns nothing beyond what
 * matmul_instance_new allocated: frees it; NULL-safe. */
MATMUL_HIDDEN void matmul_instance_free(calhost_plugin_instance *inst);

/* The common part of build_key for an instance starting with a
 * matmul_instance: CALHOST_INVALID_ARGUMENT when an argument is NULL, else
 * parses w (matmul_parse_workload with the instance's caps: what it does
 * not run is declined here, with the reason) into *s and fills *out: the
 * workload's model digest, t->processor and t->thread_count (the backend
 * adjusts those two where its key differs), and the portable structure of
 * s (matmul_structure_fill), stored in the instance's shape. */
MATMUL_HIDDEN calhost_status matmul_build_key(calhost_plugin_instance *inst,
                                              const calhost_workload *w, const calhost_target *t,
                                              calhost_built_key *out, matmul_shape *s);

/* The build_key entry of a backend whose key is matmul_build_key's, with
 * the thread count within [1, thread_cap] when the instance sets a cap. */
MATMUL_HIDDEN calhost_status matmul_key(calhost_plugin_instance *inst, const calhost_workload *w,
                                        const calhost_target *t, calhost_built_key *out);

/* What every MatMul backend's session struct holds as its FIRST member, so
 * that the entries below serve all of them (a calhost_session * of such a
 * backend points to it). */
typedef struct matmul_session {
  const calhost_host_services *host;
  matmul_data data;
  uint32_t candidates;      /* what candidate_count answers */
  uint32_t last_iterations; /* of the last completed run; 0 when none since prepare */
} matmul_session;

/* The common start of open_session for an instance starting with a
 * matmul_instance: CALHOST_INVALID_ARGUMENT when an argument is NULL; else
 * sets *out = NULL, parses w into *s (matmul_parse_workload, the
 * instance's caps) and allocates
 * `size` zeroed bytes for the backend's session, a struct whose first
 * member is a matmul_session, with its host set (CALHOST_NO_MEMORY).
 * Returns the allocation with *status = CALHOST_OK, or NULL with the
 * failure in *status. The caller fills data (matmul_data_init) and
 * candidates, and frees it with matmul_session_close. */
MATMUL_HIDDEN void *matmul_session_alloc(calhost_plugin_instance *inst, const calhost_workload *w,
                                         const calhost_target *t, calhost_session **out,
                                         size_t size, matmul_shape *s, calhost_status *status);

/* The close_session entry of a backend whose sessions start with a
 * matmul_session and hold nothing else to release (else the tail of its
 * close_session): frees data and s. NULL-safe. */
MATMUL_HIDDEN void matmul_session_close(calhost_session *s);

/* The candidate_count entry of a backend whose sessions start with a
 * matmul_session: its `candidates`. */
MATMUL_HIDDEN calhost_status matmul_candidate_count(calhost_session *s, uint32_t *count);

/* The check entry of a backend whose sessions start with a matmul_session
 * and compute C in data.c: matmul_check of the last completed run. */
MATMUL_HIDDEN calhost_status matmul_session_check(calhost_session *s, char *err, size_t cap);

/* One product of session s (all of a batch: C (+)= the structure's
 * formula): CALHOST_OK, or a failure after host->set_error. */
typedef calhost_status matmul_product_fn(calhost_session *s);

/* The run loop of a backend whose sessions start with a matmul_session and
 * compute on the host: resets C (matmul_data_reset), calls product
 * `iterations` times, checking for cancellation between calls (when
 * iterations > 1), and records the completed run in last_iterations (0
 * when it stopped early). Returns CALHOST_OK, CALHOST_CANCELLED or
 * product's failure. */
MATMUL_HIDDEN calhost_status matmul_run(calhost_session *s, uint32_t iterations,
                                        matmul_product_fn *product);

#endif /* CALHOST_CPU_GEMM_MATMUL_H */
