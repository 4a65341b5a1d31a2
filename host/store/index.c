/*
 * index.c: snapshots (cs_set): records in file order plus two indexes, an
 * open-addressing hash table by identity (O(1) exact hits, linear loads) and
 * a table of (backend, operator) groups listing positions in file order (the
 * candidates a lookup reports as rejections). Removal leaves a hole that
 * cs_set_compact reclaims.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define TOMB 0xffffffffu
/* A table entry: the high 32 bits of the identity hash (compared before a
 * record is touched), then pos + 1 (0: empty slot, TOMB: removed). */
#define ENTRY(hash, pos) ((((hash) >> 32) << 32) | (uint64_t)((uint32_t)(pos) + 1))
#define SLOT(e) ((uint32_t)(e))
#define TAG(e) ((e) >> 32)

cs_set *cs_set_new(void) {
  return calloc(1, sizeof(cs_set));
}

static void free_groups(cs_group *g, size_t cap) {
  for (size_t i = 0; i < cap; i++) {
    free(g[i].backend);
    free(g[i].op);
    free(g[i].pos);
  }
  free(g);
}

void cs_set_free(cs_set *set) {
  if (!set)
    return;
  for (size_t i = 0; i < set->n && !set->borrowed; i++)
    cs_prof_unref(set->items[i]);
  free(set->items);
  free(set->tab);
  free_groups(set->groups, set->group_cap);
  free(set);
}

/* Inserts pos into the identity table (no duplicate check, no growth). */
static void tab_insert(uint64_t *tab, size_t cap, uint64_t hash, size_t pos) {
  size_t mask = cap - 1, i = (size_t)hash & mask;
  while (SLOT(tab[i]) != 0 && SLOT(tab[i]) != TOMB)
    i = (i + 1) & mask;
  tab[i] = ENTRY(hash, pos);
}

/* Rebuilds the identity table with capacity cap from items. */
static int tab_rebuild(cs_set *set, size_t cap) {
  uint64_t *tab = calloc(cap, sizeof *tab);
  if (!tab)
    return -1;
  for (size_t i = 0; i < set->n; i++)
    if (set->items[i])
      tab_insert(tab, cap, set->items[i]->id_hash, i);
  free(set->tab);
  set->tab = tab;
  set->tab_cap = cap;
  set->tab_used = set->live;
  return 0;
}

static cs_group *group_slot(cs_group *groups, size_t cap, uint64_t hash, const char *backend,
                            const char *op) {
  size_t mask = cap - 1, i = (size_t)hash & mask;
  while (groups[i].backend) {
    if (groups[i].hash == hash && !strcmp(groups[i].backend, backend) && !strcmp(groups[i].op, op))
      return &groups[i];
    i = (i + 1) & mask;
  }
  return &groups[i];
}

const cs_group *cs_set_group(const cs_set *set, const char *backend, const char *op) {
  if (!set->group_cap)
    return NULL;
  const cs_group *g = group_slot(set->groups, set->group_cap, cs_bo_hash(backend, op), backend, op);
  return g->backend ? g : NULL;
}

/* Adds pos to its record's group, creating the group. */
static int group_add(cs_set *set, size_t pos) {
  const cs_prof *p = set->items[pos];
  if ((set->group_used + 1) * 2 > set->group_cap) {
    size_t ncap = set->group_cap ? set->group_cap * 2 : 16;
    cs_group *ng = calloc(ncap, sizeof *ng);
    if (!ng)
      return -1;
    for (size_t i = 0; i < set->group_cap; i++)
      if (set->groups[i].backend)
        *group_slot(ng, ncap, set->groups[i].hash, set->groups[i].backend, set->groups[i].op) =
            set->groups[i];
    free(set->groups);
    set->groups = ng;
    set->group_cap = ncap;
  }
  cs_group *g =
      group_slot(set->groups, set->group_cap, p->bo_hash, p->v.key.backend, p->v.key.operator_name);
  if (!g->backend) {
    char *b = strdup(p->v.key.backend), *o = strdup(p->v.key.operator_name);
    if (!b || !o) {
      free(b);
      free(o);
      return -1;
    }
    g->backend = b;
    g->op = o;
    g->hash = p->bo_hash;
    set->group_used++;
  }
  uint32_t *gpos = cs_grow(g->pos, g->n + 1, &g->cap, sizeof *gpos, 8);
  if (!gpos)
    return -1;
  g->pos = gpos;
  g->pos[g->n++] = (uint32_t)pos;
  return 0;
}

long cs_set_find(const cs_set *set, const calstore_key *key, calstore_source source,
                 uint64_t hash) {
  if (!set->tab_cap)
    return -1;
  size_t mask = set->tab_cap - 1, i = (size_t)hash & mask;
  for (uint64_t e; SLOT(e = set->tab[i]) != 0; i = (i + 1) & mask) {
    if (SLOT(e) == TOMB || TAG(e) != hash >> 32)
      continue;
    const cs_prof *p = set->items[SLOT(e) - 1];
    if (p->id_hash == hash && p->v.source == source && cs_key_equal(&p->v.key, key))
      return (long)(SLOT(e) - 1);
  }
  return -1;
}

int cs_set_append(cs_set *set, cs_prof *p) {
  if (set->n >= UINT32_MAX - 1)
    goto oom;
  cs_prof **items = cs_grow(set->items, set->n + 1, &set->cap, sizeof *items, 64);
  if (!items)
    goto oom;
  set->items = items;
  if ((set->tab_used + 1) * 2 > set->tab_cap) {
    size_t ncap = 64; /* rebuilt at most 1/3 full, grown past 1/2 */
    while ((set->live + 1) * 3 > ncap)
      ncap *= 2;
    if (tab_rebuild(set, ncap) != 0)
      goto oom;
  }
  size_t pos = set->n;
  set->items[pos] = p;
  if (group_add(set, pos) != 0) {
    set->items[pos] = NULL;
    goto oom;
  }
  set->n++;
  set->live++;
  tab_insert(set->tab, set->tab_cap, p->id_hash, pos);
  set->tab_used++;
  return 0;
oom:
  if (!set->borrowed)
    cs_prof_unref(p);
  return -1;
}

int cs_set_put(cs_set *set, cs_prof *p) {
  long pos = cs_set_find(set, &p->v.key, p->v.source, p->id_hash);
  if (pos >= 0) {
    if (!set->borrowed)
      cs_prof_unref(set->items[pos]);
    set->items[pos] = p; /* same identity: hash, group and position unchanged */
    return 0;
  }
  return cs_set_append(set, p);
}

void cs_set_remove_at(cs_set *set, size_t pos) {
  cs_prof *p = set->items[pos];
  if (!p)
    return;
  size_t mask = set->tab_cap - 1, i = (size_t)p->id_hash & mask;
  while (SLOT(set->tab[i]) != pos + 1)
    i = (i + 1) & mask;
  set->tab[i] = TOMB; /* tab_used keeps counting it until the next rebuild */
  set->items[pos] = NULL;
  set->live--;
  if (!set->borrowed)
    cs_prof_unref(p);
}

size_t cs_set_invalidate(cs_set *set, const char *backend, const char *implementation) {
  size_t removed = 0;
  for (size_t i = 0; i < set->n; i++) {
    const cs_prof *p = set->items[i];
    if (p && !strcmp(p->v.key.backend, backend) &&
        (!implementation || !strcmp(p->v.key.implementation, implementation))) {
      cs_set_remove_at(set, i);
      removed++;
    }
  }
  return removed;
}

/* A malloc'ed copy of the n used elements of an array with capacity cap
 * (at least 1), for a clone that keeps growing like the original. */
static void *copy_array(const void *items, size_t n, size_t cap, size_t size) {
  void *c = malloc((cap ? cap : 1) * size);
  if (c && n)
    memcpy(c, items, n * size);
  return c;
}

cs_set *cs_set_clone(const cs_set *set, int borrowed) {
  cs_set *c = cs_set_new();
  if (!c)
    return NULL;
  c->borrowed = borrowed;
  c->items = copy_array(set->items, set->n, set->cap, sizeof *c->items);
  c->tab = set->tab_cap ? copy_array(set->tab, set->tab_cap, set->tab_cap, sizeof *c->tab) : NULL;
  c->groups = set->group_cap ? calloc(set->group_cap, sizeof *c->groups) : NULL;
  if (!c->items || (set->tab_cap && !c->tab) || (set->group_cap && !c->groups))
    goto oom;
  c->n = set->n;
  c->cap = set->cap ? set->cap : 1;
  c->live = set->live;
  for (size_t i = 0; i < set->n && !borrowed; i++)
    if (c->items[i])
      cs_prof_ref(c->items[i]);
  c->tab_cap = set->tab_cap;
  c->tab_used = set->tab_used;
  c->group_cap = set->group_cap;
  for (size_t i = 0; i < set->group_cap; i++) {
    const cs_group *g = &set->groups[i];
    if (!g->backend)
      continue;
    cs_group *d = &c->groups[i];
    d->backend = strdup(g->backend);
    d->op = strdup(g->op);
    d->pos = copy_array(g->pos, g->n, g->cap, sizeof *d->pos);
    if (!d->backend || !d->op || !d->pos)
      goto oom;
    d->n = g->n;
    d->cap = g->cap ? g->cap : 1;
    d->hash = g->hash;
    c->group_used++;
  }
  return c;
oom:
  cs_set_free(c);
  return NULL;
}

int cs_set_compact(cs_set *set) {
  if (set->live == set->n)
    return 0;
  cs_set *fresh = cs_set_new();
  if (!fresh)
    return -1;
  fresh->borrowed = set->borrowed;
  for (size_t i = 0; i < set->n; i++) {
    if (!set->items[i])
      continue;
    if (!set->borrowed)
      cs_prof_ref(set->items[i]);
    if (cs_set_append(fresh, set->items[i]) != 0) {
      cs_set_free(fresh);
      return -1;
    }
  }
  cs_set old = *set;
  *set = *fresh;
  *fresh = old;
  cs_set_free(fresh);
  return 0;
}
