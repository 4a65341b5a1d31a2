/*
 * params.c: policies as parameters ("name=value;name=value", or the GPU
 * plugins' stored form before issue 42, "name=value,name=value") and the
 * effect of each parameter on the measured medians (what the report's
 * influence bars and heat map show). When plugins describe their
 * parameters, the description replaces the parsing here.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/policy.h"
#include "internal.h"

static char *dup_n(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

void rpt_policy_free(rpt_policy *p) {
  if (!p)
    return;
  for (size_t i = 0; i < p->count; i++) {
    free(p->names[i]);
    free(p->values[i]);
  }
  free(p->names);
  free(p->values);
  memset(p, 0, sizeof *p);
}

int rpt_policy_parse(const char *policy, rpt_policy *out) {
  memset(out, 0, sizeof *out);
  if (!policy || !*policy)
    return 0;
  const char sep = base_policy_separator(policy, strlen(policy)), seps[2] = {sep, '\0'};
  size_t parts = 1;
  for (const char *q = policy; *q; q++)
    parts += *q == sep;
  out->names = calloc(parts, sizeof *out->names);
  out->values = calloc(parts, sizeof *out->values);
  if (!out->names || !out->values)
    goto oom;
  int any_eq = strchr(policy, '=') != NULL;
  const char *p = policy;
  for (size_t i = 0; i < parts; i++) {
    size_t len = strcspn(p, seps);
    if (len) {
      const char *eq = memchr(p, '=', len);
      char pos[32];
      if (!any_eq)
        snprintf(pos, sizeof pos, "policy");
      else
        snprintf(pos, sizeof pos, "#%zu", i + 1);
      char *name = eq ? dup_n(p, (size_t)(eq - p)) : dup_n(pos, strlen(pos));
      char *value = eq ? dup_n(eq + 1, len - (size_t)(eq - p) - 1) : dup_n(p, len);
      out->names[out->count] = name;
      out->values[out->count] = value;
      out->count++;
      if (!name || !value)
        goto oom;
    }
    p += len + (p[len] == sep);
  }
  return 0;
oom:
  rpt_policy_free(out);
  return -1;
}

const char *rpt_policy_get(const rpt_policy *p, const char *name) {
  for (size_t i = 0; i < p->count; i++)
    if (!strcmp(p->names[i], name))
      return p->values[i];
  return NULL;
}

static int is_number(const char *s, double *v) {
  char *end;
  if (!*s)
    return 0;
  *v = strtod(s, &end);
  return *end == '\0' && isfinite(*v);
}

/* The order of an effect's values: numerically when every value is a
 * number (ties by text), else by text. */
static int value_order(const char *x, const char *y, int numeric) {
  if (numeric) {
    double u = strtod(x, NULL), v = strtod(y, NULL);
    if (u != v)
      return (u > v) - (u < v);
  }
  return strcmp(x, y);
}

static int cmp_text(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}
static int cmp_numeric(const void *a, const void *b) {
  return value_order(*(const char *const *)a, *(const char *const *)b, 1);
}

int rpt_in_effects(const rpt_cand *c) {
  return c->median > 0 && isfinite(c->median) && (!c->is_default || c->is_winner);
}

size_t rpt_effect_value(const rpt_effect *e, const char *v) {
  size_t lo = 0, hi = v ? e->nvalues : 0;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = value_order(e->values[mid], v, e->numeric);
    if (c == 0)
      return mid;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return (size_t)-1;
}

void rpt_effects_free(rpt_effect *e, size_t n) {
  for (size_t i = 0; e && i < n; i++) {
    free(e[i].values);
    free(e[i].best);
    free(e[i].count);
  }
  free(e);
}

static int cmp_influence(const void *a, const void *b) {
  const rpt_effect *x = a, *y = b;
  if (x->influence != y->influence)
    return (x->influence < y->influence) - (x->influence > y->influence);
  return strcmp(x->name, y->name);
}

/* The effect of parameter name over the candidates with a median: 0, or -1
 * when it takes fewer than two values (or out of memory). */
static int one_effect(const rpt_cand *c, size_t n, const char *name, rpt_effect *e) {
  memset(e, 0, sizeof *e);
  e->name = name;
  e->values = calloc(n, sizeof *e->values);
  if (!e->values)
    return -1;
  /* every value, sorted, then each once: O(n log n) */
  for (size_t i = 0; i < n; i++) {
    const char *v = rpt_in_effects(&c[i]) ? rpt_policy_get(&c[i].params, name) : NULL;
    if (v)
      e->values[e->nvalues++] = v;
  }
  qsort(e->values, e->nvalues, sizeof *e->values, cmp_text);
  size_t distinct = 0;
  for (size_t i = 0; i < e->nvalues; i++)
    if (!distinct || strcmp(e->values[distinct - 1], e->values[i]))
      e->values[distinct++] = e->values[i];
  e->nvalues = distinct;
  if (e->nvalues < 2)
    goto none;
  e->numeric = 1;
  for (size_t i = 0; i < e->nvalues; i++) {
    double d;
    e->numeric &= is_number(e->values[i], &d);
  }
  if (e->numeric)
    qsort(e->values, e->nvalues, sizeof *e->values, cmp_numeric);
  e->best = malloc(e->nvalues * sizeof *e->best);
  e->count = calloc(e->nvalues, sizeof *e->count);
  if (!e->best || !e->count)
    goto none;
  for (size_t i = 0; i < e->nvalues; i++)
    e->best[i] = INFINITY;
  for (size_t i = 0; i < n; i++) {
    if (!rpt_in_effects(&c[i]))
      continue;
    size_t k = rpt_effect_value(e, rpt_policy_get(&c[i].params, name));
    if (k == (size_t)-1)
      continue;
    e->count[k]++;
    if (c[i].median < e->best[k])
      e->best[k] = c[i].median;
  }
  double lo = INFINITY, hi = 0;
  for (size_t i = 0; i < e->nvalues; i++) {
    lo = e->best[i] < lo ? e->best[i] : lo;
    hi = e->best[i] > hi ? e->best[i] : hi;
  }
  e->influence = lo > 0 && isfinite(hi) ? hi / lo : 1.0;
  return 0;
none:
  free(e->values);
  free(e->best);
  free(e->count);
  memset(e, 0, sizeof *e);
  return -1;
}

size_t rpt_effects(const rpt_cand *c, size_t n, rpt_effect **out) {
  *out = NULL;
  size_t total = 0, nnames = 0, ne = 0;
  for (size_t i = 0; i < n; i++)
    total += c[i].params.count;
  if (!total)
    return 0;
  const char **names = malloc(total * sizeof *names); /* distinct, in order of appearance */
  rpt_effect *e = calloc(total, sizeof *e);
  if (!names || !e)
    goto out;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < c[i].params.count; j++) {
      const char *name = c[i].params.names[j];
      size_t k = 0;
      while (k < nnames && strcmp(names[k], name))
        k++;
      if (k == nnames)
        names[nnames++] = name;
    }
  for (size_t k = 0; k < nnames; k++)
    if (one_effect(c, n, names[k], &e[ne]) == 0)
      ne++;
  if (ne) {
    qsort(e, ne, sizeof *e, cmp_influence);
    *out = e;
    e = NULL;
  }
out:
  free(names);
  free(e);
  return *out ? ne : 0;
}
