/*
 * dims.c: the bindings of a model's symbolic dimensions, "batch=8, seq=128"
 * (config_value_dims, values.h: the syntax of `dims =` in [model NAME] and
 * of --dims).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "config.h"
#include "values.h"

void config_dims_free(config_dim *dims, size_t count) {
  for (size_t i = 0; dims && i < count; i++)
    free(dims[i].name);
  free(dims);
}

static int name_char(int c) {
  return isalnum(c) || c == '_' || c == '.' || c == '-' || c == ':' || c == '/';
}

int config_value_dims(const char *text, config_dim **out, size_t *count, char *why, size_t cap) {
  *out = NULL;
  *count = 0;
  config_dim *d = NULL;
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
      config_dims_free(d, n);
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
      config_dims_free(d, n);
      return base_str_fail(why, cap, "dimension %.*s: '%.40s' is not a positive integer", (int)len,
                           name, p);
    }
    p = end;
    while (*p == ' ' || *p == '\t')
      p++;
    if (*p && *p != ',') {
      config_dims_free(d, n);
      return base_str_fail(why, cap, "dimension %.*s: unexpected '%.40s' after the value", (int)len,
                           name, p);
    }
    for (size_t i = 0; i < n; i++)
      if (strlen(d[i].name) == len && !strncmp(d[i].name, name, len)) {
        config_dims_free(d, n);
        return base_str_fail(why, cap, "dimension %.*s is bound twice", (int)len, name);
      }
    config_dim *nd = realloc(d, (n + 1) * sizeof *nd);
    char *copy = nd ? malloc(len + 1) : NULL;
    if (!copy) {
      config_dims_free(nd ? nd : d, n);
      return base_str_fail(why, cap, "out of memory");
    }
    memcpy(copy, name, len);
    copy[len] = '\0';
    d = nd;
    d[n++] = (config_dim){copy, (int64_t)v};
  }
  *out = d;
  *count = n;
  return 0;
}
