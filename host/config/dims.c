/*
 * dims.c: the bindings of a model's symbolic dimensions, "batch=8, seq=128"
 * (config_value_dims, values.h: the syntax of `dims =` in [model NAME] and
 * of --dims), several bindings separated by '|' (config_value_bindings), a
 * name in double quotes when it is not a plain word ("past_sequence_length
 * + 1"=129), and the canonical text of a binding (config_dims_canonical).
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

void config_bindings_free(config_binding *b, size_t count) {
  for (size_t i = 0; b && i < count; i++)
    config_dims_free(b[i].dims, b[i].count);
  free(b);
}

static int name_char(int c) {
  return isalnum(c) || c == '_' || c == '.' || c == '-' || c == ':' || c == '/';
}

/* Reads a name at *pp: a plain word, or "..." with \" and \\ escapes.
 * Returns a malloc'd copy (NULL with why set). */
static char *read_name(const char **pp, const char *end, char *why, size_t cap) {
  const char *p = *pp;
  if (*p == '"') {
    size_t n = 0;
    char *out = malloc((size_t)(end - p) + 1);
    if (!out) {
      base_str_fail(why, cap, "out of memory");
      return NULL;
    }
    for (p++; p < end && *p != '"'; p++) {
      if ((unsigned char)*p < 0x20 || *p == 0x7f) {
        free(out);
        base_str_fail(why, cap, "a control character in a quoted name at '%.40s'", *pp);
        return NULL;
      }
      if (*p == '\\' && p + 1 < end && (p[1] == '"' || p[1] == '\\'))
        p++;
      out[n++] = *p;
    }
    if (p >= end || !n) {
      free(out);
      base_str_fail(why, cap,
                    p >= end ? "unterminated quoted name at '%.40s'"
                             : "an empty quoted name at '%.40s'",
                    *pp);
      return NULL;
    }
    out[n] = '\0';
    *pp = p + 1;
    return out;
  }
  while (p < end && name_char((unsigned char)*p))
    p++;
  size_t len = (size_t)(p - *pp);
  if (!len) {
    base_str_fail(why, cap,
                  "expected NAME=VALUE at '%.40s' (e.g. batch=8, seq=128; a name with other "
                  "characters in double quotes: \"past_sequence_length + 1\"=129)",
                  *pp);
    return NULL;
  }
  char *out = malloc(len + 1);
  if (!out) {
    base_str_fail(why, cap, "out of memory");
    return NULL;
  }
  memcpy(out, *pp, len);
  out[len] = '\0';
  *pp = p;
  return out;
}

/* One binding in [text, end). */
static int parse_one(const char *text, const char *end, config_dim **out, size_t *count, char *why,
                     size_t cap) {
  *out = NULL;
  *count = 0;
  config_dim *d = NULL;
  size_t n = 0;
  const char *p = text;
  while (p < end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == ','))
      p++;
    if (p >= end)
      break;
    char *name = read_name(&p, end, why, cap);
    if (!name) {
      config_dims_free(d, n);
      return -1;
    }
    while (p < end && (*p == ' ' || *p == '\t'))
      p++;
    if (p >= end || *p != '=') {
      base_str_fail(why, cap,
                    "expected NAME=VALUE at '%.40s' (e.g. batch=8, seq=128; a name with other "
                    "characters in double quotes: \"past_sequence_length + 1\"=129)",
                    name);
      free(name);
      config_dims_free(d, n);
      return -1;
    }
    p++;
    while (p < end && (*p == ' ' || *p == '\t'))
      p++;
    char *vend;
    errno = 0;
    long long v = p < end && isdigit((unsigned char)*p) ? strtoll(p, &vend, 10) : 0;
    if (p >= end || !isdigit((unsigned char)*p) || errno || v < 1 || vend > end) {
      base_str_fail(why, cap, "dimension %s: '%.*s' is not a positive integer", name,
                    (int)(end - p > 40 ? 40 : end - p), p);
      free(name);
      config_dims_free(d, n);
      return -1;
    }
    p = vend;
    while (p < end && (*p == ' ' || *p == '\t'))
      p++;
    if (p < end && *p != ',') {
      base_str_fail(why, cap, "dimension %s: unexpected '%.*s' after the value", name,
                    (int)(end - p > 40 ? 40 : end - p), p);
      free(name);
      config_dims_free(d, n);
      return -1;
    }
    for (size_t i = 0; i < n; i++)
      if (!strcmp(d[i].name, name)) {
        base_str_fail(why, cap, "dimension %s is bound twice", name);
        free(name);
        config_dims_free(d, n);
        return -1;
      }
    config_dim *nd = realloc(d, (n + 1) * sizeof *nd);
    if (!nd) {
      free(name);
      config_dims_free(d, n);
      return base_str_fail(why, cap, "out of memory");
    }
    d = nd;
    d[n++] = (config_dim){name, (int64_t)v};
  }
  *out = d;
  *count = n;
  return 0;
}

/* The end of the binding starting at p: the first '|' outside quotes. */
static const char *binding_end(const char *p) {
  int quoted = 0;
  for (; *p; p++) {
    if (quoted && *p == '\\' && p[1])
      p++;
    else if (*p == '"')
      quoted = !quoted;
    else if (!quoted && *p == '|')
      break;
  }
  return p;
}

int config_value_dims(const char *text, config_dim **out, size_t *count, char *why, size_t cap) {
  const char *p = text ? text : "";
  const char *end = binding_end(p);
  if (*end == '|') {
    *out = NULL;
    *count = 0;
    return base_str_fail(why, cap, "one binding only here ('|' separates several)");
  }
  return parse_one(p, end, out, count, why, cap);
}

int config_value_bindings(const char *text, config_binding **out, size_t *count, char *why,
                          size_t cap) {
  *out = NULL;
  *count = 0;
  config_binding *b = NULL;
  size_t n = 0;
  const char *p = text ? text : "";
  for (;;) {
    const char *end = binding_end(p);
    config_dim *d;
    size_t nd;
    if (parse_one(p, end, &d, &nd, why, cap) != 0) {
      config_bindings_free(b, n);
      return -1;
    }
    if (!nd && (*end == '|' || n)) {
      config_bindings_free(b, n);
      return base_str_fail(why, cap, "an empty binding between '|'");
    }
    if (nd || !n) {
      config_binding *grown = realloc(b, (n + 1) * sizeof *grown);
      if (!grown) {
        config_dims_free(d, nd);
        config_bindings_free(b, n);
        return base_str_fail(why, cap, "out of memory");
      }
      b = grown;
      b[n++] = (config_binding){d, nd};
    }
    if (*end != '|')
      break;
    p = end + 1;
  }
  /* the same binding twice would calibrate the same thing twice */
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < i; j++) {
      char a[1024], c[1024];
      config_dims_canonical(b[i].dims, b[i].count, a, sizeof a);
      config_dims_canonical(b[j].dims, b[j].count, c, sizeof c);
      if (!strcmp(a, c)) {
        config_bindings_free(b, n);
        return base_str_fail(why, cap, "the binding %s is given twice", a);
      }
    }
  if (n == 1 && !b[0].count) { /* an empty text: no binding at all */
    config_bindings_free(b, n);
    b = NULL;
    n = 0;
  }
  *out = b;
  *count = n;
  return 0;
}

static int by_name(const void *a, const void *b) {
  return strcmp(((const config_dim *)a)->name, ((const config_dim *)b)->name);
}

/* The tail of buf (cap bytes) after n written, and its room, as snprintf's
 * first two arguments; a NULL buf (cap 0: only measuring) stays NULL, since
 * even NULL + 0 is undefined in C. */
#define AT(buf, n, cap)                                                                            \
  ((buf) ? (buf) + ((n) < (cap) ? (n) : (cap)) : NULL), ((buf) && (n) < (cap) ? (cap) - (n) : 0)

/* A name as written in dims: itself when a plain word, else quoted. */
static size_t put_name(const char *name, char *buf, size_t cap, size_t n) {
  int plain = *name != '\0';
  for (const char *c = name; *c; c++)
    plain = plain && name_char((unsigned char)*c);
  if (plain)
    return n + (size_t)snprintf(AT(buf, n, cap), "%s", name);
  n += (size_t)snprintf(AT(buf, n, cap), "\"");
  for (const char *c = name; *c; c++)
    n += (size_t)snprintf(AT(buf, n, cap), "%s%c", *c == '"' || *c == '\\' ? "\\" : "", *c);
  return n + (size_t)snprintf(AT(buf, n, cap), "\"");
}

size_t config_dims_canonical(const config_dim *dims, size_t count, char *buf, size_t cap) {
  if (cap)
    buf[0] = '\0';
  if (!count)
    return 0;
  config_dim *s = malloc(count * sizeof *s);
  if (!s)
    return 0;
  memcpy(s, dims, count * sizeof *s);
  qsort(s, count, sizeof *s, by_name);
  size_t n = 0;
  for (size_t i = 0; i < count; i++) {
    if (i)
      n += (size_t)snprintf(AT(buf, n, cap), ",");
    n = put_name(s[i].name, buf, cap, n);
    n += (size_t)snprintf(AT(buf, n, cap), "=%lld", (long long)s[i].value);
  }
  free(s);
  return n;
}

size_t config_dim_name_quoted(const char *name, char *buf, size_t cap) {
  if (cap)
    buf[0] = '\0';
  return put_name(name, buf, cap, 0);
}
