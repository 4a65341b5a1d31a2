/*
 * lookup.c: the precedence walk (exact override, portable override, exact
 * calibrated, portable calibrated; force_portable skips the exact levels)
 * and the rejection report; calstore_get, the one-probe fetch of a single
 * identity. The level names are in names.c.
 *
 * Each level is one hash probe. Candidates and the (backend, operator)
 * group are referenced under the read lock; the backend's validator and the
 * report run after the lock is released, so a validator may take its time
 * (it still must not close the store). Results hold references to the
 * immutable records, so they stay valid whatever the store does later.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct cs_result {
  calstore_lookup_result pub;
  cs_prof *selected;
  calstore_rejection *rej;
  cs_prof **rej_prof;
  size_t n, cap;
} cs_result;

void calstore_lookup_result_free(calstore_lookup_result **result) {
  if (!result || !*result)
    return;
  cs_result *r = (cs_result *)*result;
  cs_prof_unref(r->selected);
  for (size_t i = 0; i < r->n; i++) {
    free((char *)r->rej[i].message);
    cs_prof_unref(r->rej_prof[i]);
  }
  free(r->rej);
  free(r->rej_prof);
  free(r);
  *result = NULL;
}

/* Adds a rejection (takes a new reference to p). Returns -1 on OOM. */
static int add_rejection(cs_result *r, cs_prof *p, calstore_reject_reason reason, const char *msg) {
  /* two arrays of one length: each grows from the same capacity */
  size_t cap = r->cap, prof_cap = r->cap;
  calstore_rejection *rej = cs_grow(r->rej, r->n + 1, &cap, sizeof *rej, 8);
  if (!rej)
    return -1;
  r->rej = rej;
  cs_prof **prof = cs_grow(r->rej_prof, r->n + 1, &prof_cap, sizeof *prof, 8);
  if (!prof)
    return -1;
  r->rej_prof = prof;
  r->cap = cap;
  char *m = strdup(msg);
  if (!m)
    return -1;
  cs_prof_ref(p);
  r->rej[r->n].reason = reason;
  r->rej[r->n].message = m;
  r->rej[r->n].profile = p->v;
  r->rej_prof[r->n] = p;
  r->n++;
  return 0;
}

static int str_differs(const char *a, const char *b) {
  if (!a || !b)
    return a != b;
  return strcmp(a, b) != 0;
}

static void render_structure(char *out, size_t cap, const calstore_property *p, size_t n) {
  size_t used = 0;
  out[0] = '\0';
  if (!n) {
    snprintf(out, cap, "(none)");
    return;
  }
  for (size_t i = 0; i < n && used < cap; i++) {
    int w = snprintf(out + used, cap - used, "%s%s=%s", i ? ";" : "", p[i].name, p[i].value);
    if (w < 0)
      break;
    used += (size_t)w;
  }
}

static int structure_differs(const calstore_key *k, const calstore_property *want, size_t n) {
  if (k->structure_count != n)
    return 1;
  for (size_t i = 0; i < n; i++)
    if (strcmp(k->structure[i].name, want[i].name) || strcmp(k->structure[i].value, want[i].value))
      return 1;
  return 0;
}

/* The first reason p does not match the request, 0 when it matches. */
static calstore_reject_reason reason_for(const calstore_profile *p,
                                         const calstore_lookup_options *o,
                                         const calstore_property *sorted, size_t sn, char *msg,
                                         size_t cap) {
  const calstore_key *k = &p->key;
  if (strcmp(k->implementation, o->implementation)) {
    snprintf(msg, cap, "implementation %s, wanted %s", k->implementation, o->implementation);
    return CALSTORE_REJECT_OUTDATED_IMPLEMENTATION;
  }
  if (k->kind == CALSTORE_KEY_EXACT) {
    if (o->force_portable) {
      snprintf(msg, cap, "exact profile skipped: force_portable is set");
      return CALSTORE_REJECT_FORCE_PORTABLE;
    }
    if (str_differs(k->model_digest, o->model_digest)) {
      snprintf(msg, cap, "model_digest %s, wanted %s", k->model_digest,
               o->model_digest ? o->model_digest : "(none)");
      return CALSTORE_REJECT_DIFFERENT_MODEL;
    }
    if (str_differs(k->processor, o->processor)) {
      snprintf(msg, cap, "processor %s, wanted %s", k->processor,
               o->processor ? o->processor : "(none)");
      return CALSTORE_REJECT_DIFFERENT_PROCESSOR;
    }
    if (k->thread_count != o->thread_count) {
      snprintf(msg, cap, "thread_count %u, wanted %u", (unsigned)k->thread_count,
               (unsigned)o->thread_count);
      return CALSTORE_REJECT_DIFFERENT_THREAD_COUNT;
    }
    return 0;
  }
  if (structure_differs(k, sorted, sn)) {
    char have[384], want[384];
    render_structure(have, sizeof have, k->structure, k->structure_count);
    render_structure(want, sizeof want, sorted, sn);
    snprintf(msg, cap, "structure %s, wanted %s", have, want);
    return CALSTORE_REJECT_DIFFERENT_STRUCTURE;
  }
  return 0;
}

static calstore_status do_lookup(calstore *store, const calstore_lookup_options *o,
                                 calstore_validator_fn validator, void *validator_user, int report,
                                 calstore_lookup_result **out, calstore_error *err) {
  if (out)
    *out = NULL;
  if (!store || !o || !out)
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL,
                   "lookup needs a store, options and out");
  if (!o->backend || !o->operator_name || !o->implementation)
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL,
                   "lookup needs backend, operator_name and implementation");
  if (o->structure_count && !o->structure)
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL, "structure is NULL with a count");
  calstore_property local[16], *sorted = local;
  size_t sn = o->structure_count;
  if (sn > 16 && !(sorted = malloc(sn * sizeof *sorted)))
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, NULL, "out of memory");
  for (size_t i = 0; i < sn; i++) {
    sorted[i] = o->structure[i];
    if (!sorted[i].name || !sorted[i].value) {
      if (sorted != local)
        free(sorted);
      return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL, "structural property %lu is NULL",
                     (unsigned long)i);
    }
  }
  if (cs_sort_properties(sorted, sn)) {
    if (sorted != local)
      free(sorted);
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL,
                   "a structural property name appears twice");
  }
  int exact_ok = o->model_digest && o->processor && o->thread_count >= 1 && !o->force_portable;
  int portable_ok = sn > 0;
  calstore_key ek = {CALSTORE_KEY_EXACT,
                     o->backend,
                     o->operator_name,
                     o->implementation,
                     o->model_digest,
                     o->processor,
                     o->thread_count,
                     NULL,
                     0};
  calstore_key pk = {CALSTORE_KEY_PORTABLE,
                     o->backend,
                     o->operator_name,
                     o->implementation,
                     NULL,
                     NULL,
                     0,
                     sorted,
                     sn};
  static const struct {
    calstore_level level;
    int exact;
    calstore_source source;
  } levels[4] = {{CALSTORE_LEVEL_EXACT_OVERRIDE, 1, CALSTORE_SOURCE_OVERRIDE},
                 {CALSTORE_LEVEL_PORTABLE_OVERRIDE, 0, CALSTORE_SOURCE_OVERRIDE},
                 {CALSTORE_LEVEL_EXACT_CALIBRATED, 1, CALSTORE_SOURCE_CALIBRATED},
                 {CALSTORE_LEVEL_PORTABLE_CALIBRATED, 0, CALSTORE_SOURCE_CALIBRATED}};
  cs_prof *cand[4] = {0};
  cs_prof **group = NULL;
  size_t gn = 0;
  calstore_status st = CALSTORE_OK;

  const cs_set *set = cs_store_read_begin(store);
  for (int l = 0; l < 4; l++) {
    if (levels[l].exact ? !exact_ok : !portable_ok)
      continue;
    const calstore_key *k = levels[l].exact ? &ek : &pk;
    long pos = cs_set_find(set, k, levels[l].source, cs_identity_hash(k, levels[l].source));
    if (pos >= 0) {
      cand[l] = set->items[pos];
      cs_prof_ref(cand[l]);
    }
  }
  if (report) {
    const cs_group *g = cs_set_group(set, o->backend, o->operator_name);
    if (g && g->n) {
      group = malloc(g->n * sizeof *group);
      if (!group)
        st = CALSTORE_NO_MEMORY;
      for (size_t i = 0; group && i < g->n; i++) {
        cs_prof *p = set->items[g->pos[i]];
        if (p) {
          cs_prof_ref(p);
          group[gn++] = p;
        }
      }
    }
  }
  cs_store_read_end(store);

  cs_result *r = NULL;
  if (st == CALSTORE_OK && !(r = calloc(1, sizeof *r)))
    st = CALSTORE_NO_MEMORY;
  cs_prof *refused[4];
  size_t nrefused = 0;
  char msg[1024];
  for (int l = 0; r && l < 4 && st == CALSTORE_OK; l++) {
    if (!cand[l] || r->selected)
      continue;
    if (validator) {
      msg[0] = '\0';
      if (!validator(validator_user, cand[l]->v.policy, cand[l]->v.policy_length, msg,
                     sizeof msg)) {
        msg[sizeof msg - 1] = '\0';
        char full[1100];
        snprintf(full, sizeof full, "the backend's validator refused the policy: %s",
                 msg[0] ? msg : "no reason given");
        refused[nrefused++] = cand[l];
        if (report && add_rejection(r, cand[l], CALSTORE_REJECT_POLICY_REJECTED, full) != 0)
          st = CALSTORE_NO_MEMORY;
        continue;
      }
    }
    r->selected = cand[l];
    cs_prof_ref(r->selected);
    r->pub.level = levels[l].level;
  }
  for (size_t i = 0; r && i < gn && st == CALSTORE_OK; i++) {
    cs_prof *p = group[i];
    if (p == r->selected)
      continue;
    int skip = 0;
    for (size_t j = 0; j < nrefused; j++)
      skip |= refused[j] == p;
    if (skip)
      continue;
    calstore_reject_reason why = reason_for(&p->v, o, sorted, sn, msg, sizeof msg);
    if (why && add_rejection(r, p, why, msg) != 0)
      st = CALSTORE_NO_MEMORY;
  }
  for (int l = 0; l < 4; l++)
    cs_prof_unref(cand[l]);
  for (size_t i = 0; i < gn; i++)
    cs_prof_unref(group[i]);
  free(group);
  if (sorted != local)
    free(sorted);
  if (st != CALSTORE_OK) {
    calstore_lookup_result *pr = r ? &r->pub : NULL;
    calstore_lookup_result_free(&pr);
    return cs_fail(err, st, 0, NULL, "out of memory");
  }
  r->pub.profile = r->selected ? &r->selected->v : NULL;
  r->pub.rejections = r->rej;
  r->pub.rejection_count = r->n;
  r->pub.status = r->selected ? CALSTORE_OK : CALSTORE_NOT_FOUND;
  *out = &r->pub;
  return r->pub.status;
}

calstore_status calstore_lookup(calstore *store, const calstore_lookup_options *options,
                                calstore_validator_fn validator, void *validator_user,
                                calstore_lookup_result **out, calstore_error *err) {
  return do_lookup(store, options, validator, validator_user, 1, out, err);
}

calstore_status calstore_select(calstore *store, const calstore_lookup_options *options,
                                calstore_validator_fn validator, void *validator_user,
                                calstore_lookup_result **out, calstore_error *err) {
  return do_lookup(store, options, validator, validator_user, 0, out, err);
}

calstore_status calstore_get(calstore *store, const calstore_key *key, calstore_source source,
                             calstore_lookup_result **out, calstore_error *err) {
  if (out)
    *out = NULL;
  if (!store || !key || !out)
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL, "get needs a store, a key and out");
  if (source != CALSTORE_SOURCE_CALIBRATED && source != CALSTORE_SOURCE_OVERRIDE)
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL, "profile source %d is unknown",
                   (int)source);
  char msg[1024];
  calstore_status st = cs_check_key(key, msg, sizeof msg);
  if (st != CALSTORE_OK)
    return cs_fail(err, st, 0, NULL, "%s", msg);
  /* the identity hash wants the structure sorted by name */
  calstore_property local[16], *sorted = local;
  size_t sn = key->structure_count;
  if (sn > 16 && !(sorted = malloc(sn * sizeof *sorted)))
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, NULL, "out of memory");
  for (size_t i = 0; i < sn; i++)
    sorted[i] = key->structure[i];
  cs_sort_properties(sorted, sn); /* names are unique: cs_check_key said so */
  calstore_key k = *key;
  k.structure = sn ? sorted : NULL;
  cs_prof *hit = NULL;
  const cs_set *set = cs_store_read_begin(store);
  long pos = cs_set_find(set, &k, source, cs_identity_hash(&k, source));
  if (pos >= 0) {
    hit = set->items[pos];
    cs_prof_ref(hit);
  }
  cs_store_read_end(store);
  if (sorted != local)
    free(sorted);
  if (!hit)
    return cs_fail(err, CALSTORE_NOT_FOUND, 0, NULL, "no profile with this key and source");
  cs_result *r = calloc(1, sizeof *r);
  if (!r) {
    cs_prof_unref(hit);
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, NULL, "out of memory");
  }
  int exact = key->kind == CALSTORE_KEY_EXACT;
  r->selected = hit;
  r->pub.status = CALSTORE_OK;
  r->pub.profile = &hit->v;
  r->pub.level =
      source == CALSTORE_SOURCE_OVERRIDE
          ? (exact ? CALSTORE_LEVEL_EXACT_OVERRIDE : CALSTORE_LEVEL_PORTABLE_OVERRIDE)
          : (exact ? CALSTORE_LEVEL_EXACT_CALIBRATED : CALSTORE_LEVEL_PORTABLE_CALIBRATED);
  *out = &r->pub;
  return CALSTORE_OK;
}
