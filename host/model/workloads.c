/*
 * workloads.c: a model's nodes as configured workloads (model.h): one per
 * distinct node structure, and the key rule that gives each its model
 * digest (the model file's SHA-256 for each operator's representative
 * structure, the structure's canonical digest for the others).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/str.h"
#include "model.h"

int model_node_is_representative(const model_info *m, size_t i) {
  return i < m->node_count && m->nodes[m->nodes[i].first].representative;
}

/* A byte of a model name as itself, or '_' (outside [A-Za-z0-9_.-]). */
static char name_byte(unsigned char c) {
  int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
  return ok ? (char)c : '_';
}

size_t model_workload_name(const model_info *m, size_t i, const char *model_name, char *buf,
                           size_t cap) {
  return (size_t)snprintf(buf, cap, "%s.%s", model_name, m->nodes[m->nodes[i].first].key_name);
}

/* A set of names (open addressing, FNV-1a): the configuration's workload
 * names, so that adding S structures to W workloads costs W + S. */
typedef struct name_set {
  const char **slots;
  size_t capacity;
} name_set;

static uint64_t name_hash(const char *s) {
  return base_str_fnv1a(BASE_STR_FNV_OFFSET, s, strlen(s));
}

static int set_init(name_set *s, size_t expected) {
  s->capacity = 16;
  while (s->capacity < expected * 2 + 16)
    s->capacity *= 2;
  s->slots = calloc(s->capacity, sizeof *s->slots);
  return s->slots ? 0 : -1;
}

/* Adds name (borrowed); 1 when it was there already. */
static int set_add(name_set *s, const char *name) {
  size_t i = name_hash(name) & (s->capacity - 1);
  for (; s->slots[i]; i = (i + 1) & (s->capacity - 1))
    if (!strcmp(s->slots[i], name))
      return 1;
  s->slots[i] = name;
  return 0;
}

/* Fills *w from node i (a structure's first node). 0, or -1 out of memory. */
static int workload_of(const model_info *m, size_t i, const char *model_name, config_origin origin,
                       config_workload *w) {
  const model_node *n = &m->nodes[i];
  char name[512];
  memset(w, 0, sizeof *w);
  model_workload_name(m, i, model_name, name, sizeof name);
  w->name = base_str_dup(name);
  w->operator_name = base_str_dup(n->operator_name);
  w->dtype = base_str_dup(n->dtype);
  w->shape = malloc(n->shape_rank * sizeof *w->shape);
  w->shape_rank = n->shape_rank;
  w->properties = n->property_count ? calloc(n->property_count, sizeof *w->properties) : NULL;
  w->origin = origin;
  int ok =
      w->name && w->operator_name && w->dtype && w->shape && (!n->property_count || w->properties);
  for (size_t k = 0; ok && k < n->property_count; k++) {
    char *pn = base_str_dup(n->properties[k].name), *pv = base_str_dup(n->properties[k].value);
    w->properties[k] = (calhost_property){pn, pv};
    w->property_count = k + 1;
    ok = pn && pv;
  }
  if (ok)
    memcpy(w->shape, n->shape, n->shape_rank * sizeof *w->shape);
  if (ok && model_node_is_representative(m, i)) {
    w->model_file = base_str_dup(m->path);
    w->model_origin = origin;
    w->model_digest = base_str_dup(m->key_digest);
    ok = w->model_file && w->model_digest;
  } else if (ok) {
    /* the canonical digest: computed from the description, no file */
    ok = config_workload_digest(w, NULL, 0) != NULL;
  }
  if (!ok)
    config_workload_free(w);
  return ok ? 0 : -1;
}

long model_workloads_add(config_settings *cfg, const model_info *m, const char *model_name,
                         config_origin origin, char *err, size_t cap) {
  size_t before = cfg->workload_count;
  name_set taken;
  if (set_init(&taken, before + m->structure_count) != 0)
    return base_str_fail(err, cap, "out of memory");
  for (size_t i = 0; i < before; i++)
    set_add(&taken, cfg->workloads[i].name);
  for (size_t i = 0; i < m->node_count; i++) {
    if (m->nodes[i].first != i)
      continue;
    config_workload w;
    if (workload_of(m, i, model_name, origin, &w) != 0) {
      base_str_fail(err, cap, "out of memory");
      goto undo;
    }
    /* the model's own names never collide (model_workload_name); another
     * section's can */
    if (set_add(&taken, w.name)) {
      const config_workload *other = config_workload_named(cfg, w.name);
      if (other && other->origin.file)
        base_str_fail(err, cap,
                      "model %s: workload %s (node %s) exists already: %s:%u names it too",
                      model_name, w.name, m->nodes[i].name, other->origin.file, other->origin.line);
      else
        base_str_fail(err, cap,
                      "model %s: workload %s (node %s) exists already (another model of the "
                      "run gives the same name: name the models apart)",
                      model_name, w.name, m->nodes[i].name);
      config_workload_free(&w);
      goto undo;
    }
    config_workload *grown = base_array_grow(cfg->workloads, cfg->workload_count,
                                             &cfg->workload_capacity, sizeof *grown, 4);
    if (!grown) {
      config_workload_free(&w);
      base_str_fail(err, cap, "out of memory");
      goto undo;
    }
    cfg->workloads = grown;
    cfg->workloads[cfg->workload_count++] = w; /* the set's pointer is w.name's heap copy */
  }
  free(taken.slots);
  return (long)(cfg->workload_count - before);
undo:
  free(taken.slots);
  while (cfg->workload_count > before)
    config_workload_free(&cfg->workloads[--cfg->workload_count]);
  return -1;
}

void model_name_of_file(const char *path, char *buf, size_t cap) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t n = strlen(base);
  if (n > 5 && !strcmp(base + n - 5, ".onnx"))
    n -= 5;
  if (n >= cap)
    n = cap - 1;
  for (size_t i = 0; i < n; i++)
    buf[i] = name_byte((unsigned char)base[i]);
  buf[n] = '\0';
  if (!n)
    snprintf(buf, cap, "model");
}
