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

/* The precedence, in walk order. */
static const struct {
  calstore_level level;
  int exact;
  calstore_source source;
} levels[4] = {{CALSTORE_LEVEL_EXACT_OVERRIDE, 1, CALSTORE_SOURCE_OVERRIDE},
               {CALSTORE_LEVEL_PORTABLE_OVERRIDE, 0, CALSTORE_SOURCE_OVERRIDE},
               {CALSTORE_LEVEL_EXACT_CALIBRATED, 1, CALSTORE_SOURCE_CALIBRATED},
               {CALSTORE_LEVEL_PORTABLE_CALIBRATED, 0, CALSTORE_SOURCE_CALIBRATED}};

/* One lookup's state, from the request to the result: the request's
 * structure sorted by name, the candidate of each level and, for the
 * rejection report, every profile of the backend and operator (each held by
 * a reference, so the walk runs without the store's lock), and the
 * candidates the validator refused. */
typedef struct lookup_walk {
  const calstore_lookup_options *o;
  calstore_property local[16], *sorted;
  size_t sn;
  cs_prof *cand[4];
  cs_prof **group;
  size_t gn;
  cs_prof *refused[4];
  size_t nrefused;
} lookup_walk;

/* Checks the request and sorts its structure into w (w->sorted: w->local,
 * or malloc'ed past 16 properties). */
static calstore_status walk_request(lookup_walk *w, const calstore_lookup_options *o,
                                    calstore_error *err) {
  w->o = o;
  w->sorted = w->local;
  if (!o->backend || !o->operator_name || !o->implementation)
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL,
                   "lookup needs backend, operator_name and implementation");
  if (o->structure_count && !o->structure)
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL, "structure is NULL with a count");
  w->sn = o->structure_count;
  if (w->sn > 16 && !(w->sorted = malloc(w->sn * sizeof *w->sorted))) {
    w->sorted = w->local;
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, NULL, "out of memory");
  }
  for (size_t i = 0; i < w->sn; i++) {
    w->sorted[i] = o->structure[i];
    if (!w->sorted[i].name || !w->sorted[i].value)
      return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL, "structural property %lu is NULL",
                     (unsigned long)i);
  }
  if (cs_sort_properties(w->sorted, w->sn))
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL,
                   "a structural property name appears twice");
  return CALSTORE_OK;
}

/* Under the store's read lock: the candidate of each level the request can
 * reach and, with report, the profiles of its backend and operator. */
static calstore_status walk_gather(lookup_walk *w, calstore *store, int report) {
  const calstore_lookup_options *o = w->o;
  int exact_ok = o->model_digest && o->processor && o->thread_count >= 1 && !o->force_portable;
  int portable_ok = w->sn > 0;
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
                     w->sorted,
                     w->sn};
  calstore_status st = CALSTORE_OK;
  const cs_set *set = cs_store_read_begin(store);
  for (int l = 0; l < 4; l++) {
    if (levels[l].exact ? !exact_ok : !portable_ok)
      continue;
    const calstore_key *k = levels[l].exact ? &ek : &pk;
    long pos = cs_set_find(set, k, levels[l].source, cs_identity_hash(k, levels[l].source));
    if (pos >= 0) {
      w->cand[l] = set->items[pos];
      cs_prof_ref(w->cand[l]);
    }
  }
  const cs_group *g = report ? cs_set_group(set, o->backend, o->operator_name) : NULL;
  if (g && g->n) {
    w->group = malloc(g->n * sizeof *w->group);
    if (!w->group)
      st = CALSTORE_NO_MEMORY;
    for (size_t i = 0; w->group && i < g->n; i++) {
      cs_prof *p = set->items[g->pos[i]];
      if (p) {
        cs_prof_ref(p);
        w->group[w->gn++] = p;
      }
    }
  }
  cs_store_read_end(store);
  return st;
}

/* Walks the levels: the first candidate the validator accepts is selected;
 * each refusal is remembered (and, with report, recorded). */
static calstore_status walk_levels(lookup_walk *w, cs_result *r, calstore_validator_fn validator,
                                   void *validator_user, int report) {
  char msg[1024];
  for (int l = 0; l < 4; l++) {
    cs_prof *c = w->cand[l];
    if (!c || r->selected)
      continue;
    msg[0] = '\0';
    if (validator && !validator(validator_user, c->v.policy, c->v.policy_length, msg, sizeof msg)) {
      msg[sizeof msg - 1] = '\0';
      char full[1100];
      snprintf(full, sizeof full, "the backend's validator refused the policy: %s",
               msg[0] ? msg : "no reason given");
      w->refused[w->nrefused++] = c;
      if (report && add_rejection(r, c, CALSTORE_REJECT_POLICY_REJECTED, full) != 0)
        return CALSTORE_NO_MEMORY;
      continue;
    }
    r->selected = c;
    cs_prof_ref(r->selected);
    r->pub.level = levels[l].level;
  }
  return CALSTORE_OK;
}

/* Records why each other profile of the backend and operator was not
 * selected (the selected one and the validator's refusals aside). */
static calstore_status walk_reject_rest(lookup_walk *w, cs_result *r) {
  char msg[1024];
  for (size_t i = 0; i < w->gn; i++) {
    cs_prof *p = w->group[i];
    int skip = p == r->selected;
    for (size_t j = 0; j < w->nrefused; j++)
      skip |= w->refused[j] == p;
    if (skip)
      continue;
    calstore_reject_reason why = reason_for(&p->v, w->o, w->sorted, w->sn, msg, sizeof msg);
    if (why && add_rejection(r, p, why, msg) != 0)
      return CALSTORE_NO_MEMORY;
  }
  return CALSTORE_OK;
}

/* Drops what the walk holds. */
static void walk_free(lookup_walk *w) {
  for (int l = 0; l < 4; l++)
    cs_prof_unref(w->cand[l]);
  for (size_t i = 0; i < w->gn; i++)
    cs_prof_unref(w->group[i]);
  free(w->group);
  if (w->sorted != w->local)
    free(w->sorted);
}

static calstore_status do_lookup(calstore *store, const calstore_lookup_options *o,
                                 calstore_validator_fn validator, void *validator_user, int report,
                                 calstore_lookup_result **out, calstore_error *err) {
  if (out)
    *out = NULL;
  if (!store || !o || !out)
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL,
                   "lookup needs a store, options and out");
  lookup_walk w = {0};
  calstore_status st = walk_request(&w, o, err);
  if (st != CALSTORE_OK) {
    walk_free(&w);
    return st;
  }
  st = walk_gather(&w, store, report);
  cs_result *r = NULL;
  if (st == CALSTORE_OK && !(r = calloc(1, sizeof *r)))
    st = CALSTORE_NO_MEMORY;
  if (st == CALSTORE_OK)
    st = walk_levels(&w, r, validator, validator_user, report);
  if (st == CALSTORE_OK)
    st = walk_reject_rest(&w, r);
  walk_free(&w);
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
