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

#endif /* CALHOST_CUBLASLT_LT_POLICY_H */
