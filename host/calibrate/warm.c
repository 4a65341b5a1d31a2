/*
 * warm.c: the warm start of a calibration sweep (warm.h): which of the
 * store's profiles were found for the same kernel elsewhere, and their
 * policies in the order of their recorded medians.
 */
#include "warm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/policy.h"
#include "base/str.h"

typedef struct warm_item {
  char *policy;
  double median;
  size_t order; /* file order: ties keep it */
} warm_item;

typedef struct warm_scan {
  const char *backend, *op;
  const sweep_record_key *key;
  warm_item *items;
  size_t count, cap;
  int oom;
} warm_scan;

static int same(const char *a, const char *b) {
  return a && b && strcmp(a, b) == 0;
}

/* Whether the portable key's structure (sorted by name) is the built
 * key's (in the plugin's order): the same names with the same values. */
static int same_structure(const calstore_key *k, const sweep_record_key *key) {
  if (k->structure_count != key->structure_count || !key->structure_count)
    return 0;
  for (size_t i = 0; i < key->structure_count; i++) {
    int found = 0;
    for (size_t j = 0; j < k->structure_count && !found; j++)
      found = same(k->structure[j].name, key->structure[i].name) &&
              same(k->structure[j].value, key->structure[i].value);
    if (!found)
      return 0;
  }
  return 1;
}

static int visit(void *user, const calstore_profile *p) {
  warm_scan *s = user;
  const calstore_key *k = &p->key;
  if (!same(k->backend, s->backend) || !same(k->operator_name, s->op) || !p->policy)
    return 0;
  if (k->kind == CALSTORE_KEY_EXACT) {
    /* the same kernel (model digest) found on another processor or device */
    if (!same(k->model_digest, s->key->model_digest) || same(k->processor, s->key->processor))
      return 0;
  } else if (!same_structure(k, s->key)) {
    return 0;
  }
  double median = INFINITY;
  for (size_t i = 0; i < p->measurement_count; i++)
    if (same(p->measurements[i].name, "median_latency"))
      median = p->measurements[i].value;
  for (size_t i = 0; i < s->count; i++)
    if (base_policy_same(s->items[i].policy, p->policy)) {
      if (median < s->items[i].median)
        s->items[i].median = median;
      return 0;
    }
  warm_item *items = base_array_grow(s->items, s->count, &s->cap, sizeof *items, 8);
  char *copy = items ? base_str_dup(p->policy) : NULL;
  if (!copy) {
    s->oom = 1;
    return 1;
  }
  s->items = items;
  s->items[s->count] = (warm_item){copy, median, s->count};
  s->count++;
  return 0;
}

static int by_median(const void *a, const void *b) {
  const warm_item *x = a, *y = b;
  if (x->median != y->median)
    return x->median < y->median ? -1 : 1;
  return (x->order > y->order) - (x->order < y->order);
}

int cal_warm_collect(calstore *store, const char *backend, const char *op,
                     const sweep_record_key *key, cal_warm *out) {
  memset(out, 0, sizeof *out);
  if (!store || !backend || !op || !key)
    return 0;
  warm_scan s = {.backend = backend, .op = op, .key = key};
  calstore_inspect(store, visit, &s);
  int rc = s.oom ? -1 : 0;
  if (!s.oom && s.count) {
    qsort(s.items, s.count, sizeof *s.items, by_median);
    size_t n = s.count < CAL_WARM_MAX ? s.count : CAL_WARM_MAX;
    out->policies = malloc(n * sizeof *out->policies);
    if (!out->policies)
      rc = -1;
    for (size_t i = 0; out->policies && i < n; i++) {
      out->policies[i] = s.items[i].policy;
      s.items[i].policy = NULL;
    }
    out->count = out->policies ? n : 0;
  }
  for (size_t i = 0; i < s.count; i++)
    free(s.items[i].policy);
  free(s.items);
  return rc;
}

void cal_warm_free(cal_warm *w) {
  if (!w)
    return;
  for (size_t i = 0; i < w->count; i++)
    free(w->policies[i]);
  free(w->policies);
  memset(w, 0, sizeof *w);
}
