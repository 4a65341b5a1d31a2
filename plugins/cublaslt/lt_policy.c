/*
 * lt_policy.c: the cublaslt policy text (see lt_policy.h).
 */
#include "lt_policy.h"

#include "matmul.h"

#include <stdio.h>
#include <string.h>

const char *const lt_field_names[LT_COUNT] = {"algo",    "tile",   "stages", "splitk", "reduction",
                                              "swizzle", "custom", "inner",  "cluster"};

void lt_format(const lt_config *c, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = '\0';
  for (int k = 0; k < LT_COUNT && n < cap; k++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%s=%u", k ? "," : "", lt_field_names[k], c->v[k]);
}

int lt_parse(const char *p, size_t len, lt_config *out, char *err, size_t cap) {
  size_t pos = 0;
  if (matmul_policy_text(p, len, 160, err, cap) != 0)
    return -1;
  for (int k = 0; k < LT_COUNT; k++) {
    const char *name = lt_field_names[k];
    size_t nl = strlen(name), digits = 0;
    uint32_t v = 0;
    if (k > 0) {
      if (pos >= len || p[pos] != ',')
        return matmul_fail(err, cap, "expected ',' before %s at offset %zu", name, pos);
      pos++;
    }
    if (len - pos < nl + 1 || memcmp(p + pos, name, nl) != 0 || p[pos + nl] != '=')
      return matmul_fail(err, cap, "expected %s= at offset %zu", name, pos);
    pos += nl + 1;
    while (pos < len && p[pos] >= '0' && p[pos] <= '9') {
      v = v * 10 + (uint32_t)(p[pos] - '0');
      pos++;
      if (++digits > 5 || v > 65535)
        return matmul_fail(err, cap, "%s: value out of range [0, 65535]", name);
    }
    if (digits == 0)
      return matmul_fail(err, cap, "%s: expected a number at offset %zu", name, pos);
    if (digits > 1 && p[pos - digits] == '0')
      return matmul_fail(err, cap, "%s: leading zero", name);
    out->v[k] = v;
  }
  if (pos != len)
    return matmul_fail(err, cap, "trailing text at offset %zu", pos);
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
