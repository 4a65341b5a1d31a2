/*
 * lt_policy.h: the cublaslt backend's policy, a serialized cuBLASLt
 * algorithm configuration (cublasLtMatmulAlgoConfigAttributes_t):
 * "algo=ID,tile=T,stages=S,splitk=N,reduction=R,swizzle=W,custom=C,
 * inner=I,cluster=L" (no blanks, decimal, every field, in this order).
 * Independent of any GPU. Internal (hidden).
 */
#ifndef CALHOST_CUBLASLT_LT_POLICY_H
#define CALHOST_CUBLASLT_LT_POLICY_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define LT_HIDDEN __attribute__((visibility("hidden")))
#else
#define LT_HIDDEN
#endif

enum {
  LT_ALGO,
  LT_TILE,
  LT_STAGES,
  LT_SPLITK,
  LT_REDUCTION,
  LT_SWIZZLE,
  LT_CUSTOM,
  LT_INNER,
  LT_CLUSTER,
  LT_COUNT
};

typedef struct lt_config {
  uint32_t v[LT_COUNT];
} lt_config;

/* The field names, in policy order. */
LT_HIDDEN extern const char *const lt_field_names[LT_COUNT];

/* The policy text of c (at most 160 bytes with the NUL). */
LT_HIDDEN void lt_format(const lt_config *c, char *buf, size_t cap);

/* Parses a policy strictly; every value in [0, 65535] (splitk >= 1).
 * 0, or -1 with the reason in err. */
LT_HIDDEN int lt_parse(const char *policy, size_t length, lt_config *out, char *err, size_t cap);

/* The enumeration's walk over the product of an algorithm's capabilities
 * (dims[d] values in dimension d, total their product): point t of
 * `tries` is the mixed-radix digits (dimension 0 fastest) of
 * (t * lt_walk_stride(total, tries)) mod total. The stride is coprime
 * with total (the points are distinct) and about total / golden ratio, so
 * that a budget of tries spreads over every dimension (every tile id, not
 * the first ones); 1 when tries covers the product. */
LT_HIDDEN uint64_t lt_walk_stride(uint64_t total, uint64_t tries);
LT_HIDDEN void lt_walk_point(const uint32_t *dims, int ndims, uint64_t index, uint32_t *digits);

#endif /* CALHOST_CUBLASLT_LT_POLICY_H */
