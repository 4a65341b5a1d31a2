/*
 * dims.c: the bindings of a model's symbolic dimensions, "batch=8, seq=128"
 * (model_dims_parse; the syntax of `--dims` and of `dims =` in [model
 * NAME]).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "model.h"

void model_dims_free(model_dim *dims, size_t count) {
  for (size_t i = 0; dims && i < count; i++)
    free(dims[i].name);
  free(dims);
}

static int name_char(int c) {
  return isalnum(c) || c == '_' || c == '.' || c == '-' || c == ':' || c == '/';
}

int model_dims_parse(const char *text, model_dim **out, size_t *count, char *why, size_t cap) {
  *out = NULL;
  *count = 0;
  model_dim *d = NULL;
  size_t n = 0;
  const char *p = text ? text : "";
  while (*p) {
    while (*p == ' ' || *p == '\t' || *p == ',')
      p++;
    if (!*p)
      break;
    const char *name = p;
    while (name_char((unsigned char)*p))
      p++;
    size_t len = (size_t)(p - name);
    while (*p == ' ' || *p == '\t')
      p++;
    if (!len || *p != '=') {
      model_dims_free(d, n);
      return base_str_fail(why, cap, "expected NAME=VALUE at '%.40s' (e.g. batch=8, seq=128)",
                           name);
    }
    p++;
    while (*p == ' ' || *p == '\t')
      p++;
    char *end;
    errno = 0;
    long long v = isdigit((unsigned char)*p) ? strtoll(p, &end, 10) : 0;
    if (!isdigit((unsigned char)*p) || errno || v < 1) {
      model_dims_free(d, n);
      return base_str_fail(why, cap, "dimension %.*s: '%.40s' is not a positive integer", (int)len,
                           name, p);
    }
    p = end;
    while (*p == ' ' || *p == '\t')
      p++;
    if (*p && *p != ',') {
      model_dims_free(d, n);
      return base_str_fail(why, cap, "dimension %.*s: unexpected '%.40s' after the value", (int)len,
                           name, p);
    }
    for (size_t i = 0; i < n; i++)
      if (strlen(d[i].name) == len && !strncmp(d[i].name, name, len)) {
        model_dims_free(d, n);
        return base_str_fail(why, cap, "dimension %.*s is bound twice", (int)len, name);
      }
    model_dim *nd = realloc(d, (n + 1) * sizeof *nd);
    char *copy = nd ? malloc(len + 1) : NULL;
    if (!copy) {
      model_dims_free(nd ? nd : d, n);
      return base_str_fail(why, cap, "out of memory");
    }
    memcpy(copy, name, len);
    copy[len] = '\0';
    d = nd;
    d[n++] = (model_dim){copy, (int64_t)v};
  }
  *out = d;
  *count = n;
  return 0;
}
