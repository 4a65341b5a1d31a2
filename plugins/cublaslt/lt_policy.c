/*
 * lt_policy.c: the cublaslt policy text (see lt_policy.h).
 */
#include "lt_policy.h"

#include "matmul.h"
#include "policy_text.h"

#include <stdio.h>
#include <string.h>

const char *const lt_field_names[LT_COUNT] = {"algo",    "tile",   "stages", "splitk", "reduction",
                                              "swizzle", "custom", "inner",  "cluster"};

void lt_format(const lt_config *c, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = '\0';
  for (int k = 0; k < LT_COUNT; k++)
    policy_text_put(buf, cap, &n, k, lt_field_names[k], c->v[k]);
}

int lt_parse(const char *p, size_t len, lt_config *out, char *err, size_t cap) {
  policy_value v[LT_COUNT];
  if (matmul_policy_text(p, len, 160, err, cap) != 0 ||
      policy_text_split(p, len, 0, lt_field_names, LT_COUNT, v, err, cap) != 0)
    return -1;
  for (int k = 0; k < LT_COUNT; k++) {
    uint64_t x = 0;
    switch (policy_text_number(&v[k], 65535, &x)) {
    case 1:
      return matmul_fail(err, cap, "%s: expected a number at offset %zu", lt_field_names[k],
                         v[k].offset);
    case 2:
      return matmul_fail(err, cap, "%s: leading zero", lt_field_names[k]);
    case 3:
      return matmul_fail(err, cap, "%s: value out of range [0, 65535]", lt_field_names[k]);
    default:
      out->v[k] = (uint32_t)x;
    }
  }
  if (out->v[LT_SPLITK] == 0)
    return matmul_fail(err, cap, "splitk=0: at least 1");
  return 0;
}

uint64_t lt_walk_stride(uint64_t total, uint64_t tries) {
  if (total <= tries || total < 2)
    return 1;
  /* about total / phi, made coprime with total: i * stride mod total then
   * visits tries distinct points spread over every dimension */
  uint64_t s = (uint64_t)((double)total * 0.6180339887498949) | 1u;
  for (;; s++) {
    uint64_t a = total, b = s;
    while (b) {
      uint64_t t = a % b;
      a = b;
      b = t;
    }
    if (a == 1)
      return s;
  }
}

void lt_walk_point(const uint32_t *dims, int ndims, uint64_t index, uint32_t *digits) {
  for (int d = 0; d < ndims; d++) {
    digits[d] = (uint32_t)(index % dims[d]);
    index /= dims[d];
  }
}
