/*
 * policy_text.c: the GPU backends' policy text, written and split in one
 * place (see policy_text.h); matmul_parse_params (matmul.h), the word
 * tables' parser of opencl_gemm and cuda_gemm, is built on it.
 */
#include "policy_text.h"

#include "matmul.h"

#include <stdio.h>
#include <string.h>

void policy_text_put(char *buf, size_t cap, size_t *n, int k, const char *name,
                     unsigned long long value) {
  int w;
  if (!buf || cap == 0 || *n >= cap)
    return;
  w = snprintf(buf + *n, cap - *n, "%s%s=%llu", k > 0 ? (const char[]){POLICY_TEXT_SEP, 0} : "",
               name, value);
  if (w > 0)
    *n += (size_t)w < cap - *n ? (size_t)w : cap - *n - 1;
}

static int is_sep(char c) {
  return c == POLICY_TEXT_SEP || c == POLICY_TEXT_OLD_SEP;
}

int policy_text_split(const char *p, size_t len, size_t start, const char *const *names, int count,
                      policy_value *out, char *err, size_t cap) {
  size_t pos = start;
  char sep = 0;
  for (int k = 0; k < count; k++) {
    size_t nl = strlen(names[k]), vl = 0;
    if (k > 0) {
      if (pos >= len || !is_sep(p[pos]) || (sep && p[pos] != sep))
        return matmul_fail(err, cap, "expected '%c' before %s at offset %zu",
                           sep ? sep : POLICY_TEXT_SEP, names[k], pos);
      sep = p[pos++];
    }
    if (len - pos < nl + 1 || memcmp(p + pos, names[k], nl) != 0 || p[pos + nl] != '=')
      return matmul_fail(err, cap, "expected %s= at offset %zu", names[k], pos);
    pos += nl + 1;
    while (pos + vl < len && !is_sep(p[pos + vl]))
      vl++;
    out[k].text = p + pos;
    out[k].length = vl;
    out[k].offset = pos;
    pos += vl;
  }
  if (pos != len)
    return matmul_fail(err, cap, "trailing text at offset %zu", pos);
  return 0;
}

int policy_text_number(const policy_value *v, uint64_t max, uint64_t *out) {
  uint64_t x = 0;
  if (v->length == 0)
    return 1;
  for (size_t i = 0; i < v->length; i++)
    if (v->text[i] < '0' || v->text[i] > '9')
      return 1;
  if (v->length > 1 && v->text[0] == '0')
    return 2;
  for (size_t i = 0; i < v->length; i++) {
    x = x * 10 + (uint64_t)(v->text[i] - '0');
    if (x > max)
      return 3;
  }
  *out = x;
  return 0;
}

int matmul_parse_params(const char *p, size_t len, size_t max, const matmul_param *params,
                        int count, uint32_t *out, char *err, size_t cap) {
  const char *names[POLICY_TEXT_MAX_FIELDS] = {0};
  policy_value v[POLICY_TEXT_MAX_FIELDS];
  if (count > POLICY_TEXT_MAX_FIELDS)
    return matmul_fail(err, cap, "%d parameters: at most %d", count, POLICY_TEXT_MAX_FIELDS);
  if (matmul_policy_text(p, len, max, err, cap) != 0)
    return -1;
  for (int k = 0; k < count; k++)
    names[k] = params[k].name;
  if (policy_text_split(p, len, 0, names, count, v, err, cap) != 0)
    return -1;
  for (int k = 0; k < count; k++) {
    const matmul_param *par = &params[k];
    uint32_t i;
    for (i = 0; i < par->count; i++)
      if (strlen(par->texts[i]) == v[k].length &&
          memcmp(v[k].text, par->texts[i], v[k].length) == 0)
        break;
    if (i == par->count)
      return matmul_fail(err, cap, "%s: '%.*s' is not one of the allowed values", par->name,
                         (int)(v[k].length > 16 ? 16 : v[k].length), v[k].text);
    out[k] = par->values[i];
  }
  return 0;
}
