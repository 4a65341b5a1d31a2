/*
 * config.c: the config_settings value itself (config.h): built-in defaults,
 * freeing, the containers the parse fills (string vectors, properties, the
 * origin of each key), and the queries commands make (workload and plugin
 * section by name, enabled backends, origins, rigor names, and the walk
 * over every effective key that `calhost config show` prints).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "processor/processor.h" /* processor_cpulist_format */
#include "base/array.h"
#include "base/str.h"
#include "config_keys.h"
#include "parser.h"
#include "values.h"

/* ---- the seen-set (parser.h) ------------------------------------------ */

void cfg_seen_free(seen_set *v) {
  for (size_t i = 0; i < v->count; i++)
    free(v->items[i].name);
  free(v->items);
  free(v->slots);
  memset(v, 0, sizeof *v);
}

/* FNV-1a of a name. */
static size_t seen_hash(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return (size_t)h;
}

/* The slot of name in v: its entry's (slots[i] != 0) or the empty one
 * where it would go. v->slot_count > 0. */
static size_t seen_slot(const seen_set *v, const char *name) {
  size_t mask = v->slot_count - 1, i = seen_hash(name) & mask;
  while (v->slots[i] && strcmp(v->items[v->slots[i] - 1].name, name))
    i = (i + 1) & mask;
  return i;
}

/* Doubles the slots (rehashing every entry); -1 when out of memory. */
static int seen_rehash(seen_set *v) {
  size_t n = v->slot_count ? v->slot_count * 2 : 64;
  size_t *slots = calloc(n, sizeof *slots);
  if (!slots)
    return -1;
  free(v->slots);
  v->slots = slots;
  v->slot_count = n;
  for (size_t k = 0; k < v->count; k++)
    v->slots[seen_slot(v, v->items[k].name)] = k + 1;
  return 0;
}

int cfg_seen_push(seen_set *v, const char *name, unsigned line) {
  if ((v->count + 1) * 2 > v->slot_count && seen_rehash(v) != 0)
    return -1;
  seen_entry *nv = base_array_grow(v->items, v->count, &v->capacity, sizeof *nv, 16);
  if (!nv)
    return -1;
  v->items = nv;
  nv[v->count].name = strdup(name);
  if (!nv[v->count].name)
    return -1;
  nv[v->count].line = line;
  v->slots[seen_slot(v, name)] = v->count + 1;
  v->count++;
  return 0;
}

const seen_entry *cfg_seen_find(const seen_set *v, const char *name) {
  if (!v->slot_count)
    return NULL;
  size_t i = seen_slot(v, name);
  return v->slots[i] ? &v->items[v->slots[i] - 1] : NULL;
}

/* ---- origins -------------------------------------------------------- */

/* Where each "section.key" (or "workload.NAME.key") was set: a seen-set, so
 * that `config show` of a file of N keys asks N lookups in O(N). */
typedef struct origin_table {
  seen_set set;
} origin_table;

static void origins_free(origin_table *t) {
  if (!t)
    return;
  cfg_seen_free(&t->set);
  free(t);
}

int cfg_origins_add(config_settings *cfg, const char *key, unsigned line) {
  origin_table *t = cfg->origins;
  if (cfg_seen_find(&t->set, key))
    return 0; /* the first setting names it (a key is set once per section) */
  return cfg_seen_push(&t->set, key, line);
}

config_origin config_origin_of(const config_settings *cfg, const char *dotted_key) {
  config_origin o = {NULL, 0};
  if (!cfg || !dotted_key || !cfg->origins)
    return o;
  const seen_entry *e = cfg_seen_find(&((const origin_table *)cfg->origins)->set, dotted_key);
  if (e) {
    o.file = cfg->source_path;
    o.line = e->line;
  }
  return o;
}

/* ---- small helpers ---------------------------------------------------- */

char **cfg_strv_push(char ***v, size_t *n, const char *s) {
  char **nv = realloc(*v, (*n + 1) * sizeof **v);
  if (!nv)
    return NULL;
  *v = nv;
  nv[*n] = strdup(s);
  if (!nv[*n])
    return NULL;
  (*n)++;
  return nv;
}

void cfg_strv_free(char ***v, size_t *n) {
  for (size_t i = 0; i < *n; i++)
    free((*v)[i]);
  free(*v);
  *v = NULL;
  *n = 0;
}

static void props_free(calhost_property **p, size_t *n) {
  for (size_t i = 0; i < *n; i++) {
    free((char *)(*p)[i].name);
    free((char *)(*p)[i].value);
  }
  free(*p);
  *p = NULL;
  *n = 0;
}

int cfg_props_push(calhost_property **p, size_t *n, const char *name, const char *value) {
  calhost_property *np = realloc(*p, (*n + 1) * sizeof **p);
  char *a, *b;
  if (!np)
    return -1;
  *p = np;
  a = strdup(name);
  b = strdup(value);
  if (!a || !b) {
    free(a);
    free(b);
    return -1;
  }
  np[*n].name = a;
  np[*n].value = b;
  (*n)++;
  return 0;
}

int cfg_valid_name(const char *s) {
  return base_str_is_name(s, 0);
}

/* ---- defaults / free ----------------------------------------------------- */

int config_defaults(config_settings *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->persistence_enabled = 1;
  cfg->cpus_all = 1;
  cfg->thread_counts = malloc(2 * sizeof *cfg->thread_counts);
  cfg->origins = calloc(1, sizeof(origin_table));
  if (!cfg->thread_counts || !cfg->origins) {
    config_free(cfg);
    return -1;
  }
  cfg->thread_counts[0] = 1;
  cfg->thread_counts[1] = 0; /* max */
  cfg->thread_count_count = 2;
  cfg->rigor = CALHOST_RIGOR_MEASURE;
  cfg->time_budget_seconds = 60;
  cfg->repetitions = 0;
  cfg->plugin_timeout_seconds = 120;
  cfg->force_portable = 0;
  return 0;
}

static void index_free(config_settings *cfg);

void config_workload_free(config_workload *w) {
  free(w->name);
  free(w->operator_name);
  free(w->dtype);
  free(w->shape);
  free(w->model_file);
  free(w->model_digest);
  props_free(&w->properties, &w->property_count);
  memset(w, 0, sizeof *w);
}

void config_free(config_settings *cfg) {
  if (!cfg)
    return;
  index_free(cfg);
  free(cfg->source_path);
  free(cfg->store_path);
  cfg_strv_free(&cfg->plugin_dirs, &cfg->plugin_dir_count);
  cfg_strv_free(&cfg->plugin_paths, &cfg->plugin_path_count);
  cfg_strv_free(&cfg->enabled_backends, &cfg->enabled_count);
  cfg_strv_free(&cfg->lookup_backends, &cfg->lookup_backend_count);
  cfg_strv_free(&cfg->disabled_backends, &cfg->disabled_count);
  free(cfg->cpus);
  free(cfg->thread_counts);
  for (size_t i = 0; i < cfg->workload_count; i++)
    config_workload_free(&cfg->workloads[i]);
  free(cfg->workloads);
  for (size_t i = 0; i < cfg->plugin_section_count; i++) {
    free(cfg->plugin_sections[i].name);
    config_value_strings_free(cfg->plugin_sections[i].devices,
                              cfg->plugin_sections[i].device_count);
    props_free(&cfg->plugin_sections[i].settings, &cfg->plugin_sections[i].setting_count);
  }
  free(cfg->plugin_sections);
  for (size_t i = 0; i < cfg->model_count; i++) {
    free(cfg->models[i].name);
    free(cfg->models[i].file);
    config_bindings_free(cfg->models[i].bindings, cfg->models[i].binding_count);
    cfg_strv_free(&cfg->models[i].backends, &cfg->models[i].backend_count);
  }
  free(cfg->models);
  origins_free(cfg->origins);
  memset(cfg, 0, sizeof *cfg);
}

/* ---- queries ---------------------------------------------------------- */

const config_model *config_model_named(const config_settings *cfg, const char *name) {
  for (size_t i = 0; cfg && name && i < cfg->model_count; i++)
    if (!strcmp(cfg->models[i].name, name))
      return &cfg->models[i];
  return NULL;
}

/* The index of workload names: open addressing over indices + 1. It
 * covers workloads[0 .. count), whose names it remembers by pointer: an
 * array that changed under it (names removed, others appended) shows as a
 * different name pointer at count - 1, and the index is rebuilt. */
typedef struct workload_index {
  size_t *slots; /* workload index + 1, 0 empty */
  size_t capacity, count;
  const config_workload *array;
  const char *last; /* workloads[count - 1].name when indexed */
} workload_index;

static uint64_t name_hash(const char *s) {
  return base_str_fnv1a(BASE_STR_FNV_OFFSET, s, strlen(s));
}

static void index_free(config_settings *cfg) {
  workload_index *x = cfg->workload_index;
  if (x)
    free(x->slots);
  free(x);
  cfg->workload_index = NULL;
}

/* Brings the index up to cfg's workloads; NULL when memory runs out (the
 * caller scans). */
static workload_index *index_update(config_settings *cfg) {
  workload_index *x = cfg->workload_index;
  if (x && (x->array != cfg->workloads || x->count > cfg->workload_count ||
            (x->count && cfg->workloads[x->count - 1].name != x->last))) {
    x->count = 0; /* changed under it: start again */
    memset(x->slots, 0, x->capacity * sizeof *x->slots);
  }
  if (!x) {
    x = calloc(1, sizeof *x);
    if (!x)
      return NULL;
    cfg->workload_index = x;
  }
  if (cfg->workload_count * 2 >= x->capacity) { /* grow: re-add everything */
    size_t cap = 64;
    while (cap <= cfg->workload_count * 2)
      cap *= 2;
    size_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
      return NULL;
    free(x->slots);
    x->slots = slots;
    x->capacity = cap;
    x->count = 0;
  }
  for (; x->count < cfg->workload_count; x->count++) {
    size_t i = name_hash(cfg->workloads[x->count].name) & (x->capacity - 1);
    while (x->slots[i])
      i = (i + 1) & (x->capacity - 1);
    x->slots[i] = x->count + 1;
  }
  x->array = cfg->workloads;
  x->last = x->count ? cfg->workloads[x->count - 1].name : NULL;
  return x;
}

const config_workload *config_workload_named(const config_settings *cfg, const char *name) {
  if (!cfg || !name)
    return NULL;
  /* the index is a cache: built through a const configuration */
  const workload_index *x = cfg->workload_count > 8 ? index_update((config_settings *)cfg) : NULL;
  if (!x) {
    for (size_t i = 0; i < cfg->workload_count; i++)
      if (!strcmp(cfg->workloads[i].name, name))
        return &cfg->workloads[i];
    return NULL;
  }
  for (size_t i = name_hash(name) & (x->capacity - 1); x->slots[i]; i = (i + 1) & (x->capacity - 1))
    if (!strcmp(cfg->workloads[x->slots[i] - 1].name, name))
      return &cfg->workloads[x->slots[i] - 1];
  return NULL;
}

double config_plugin_time_budget(const config_settings *cfg, const char *backend) {
  const config_plugin_section *s = config_plugin_named(cfg, backend);
  return s && s->time_budget_seconds > 0 ? s->time_budget_seconds
         : cfg                           ? cfg->time_budget_seconds
                                         : 0;
}

const config_plugin_section *config_plugin_named(const config_settings *cfg, const char *name) {
  for (size_t i = 0; cfg && name && i < cfg->plugin_section_count; i++)
    if (!strcmp(cfg->plugin_sections[i].name, name))
      return &cfg->plugin_sections[i];
  return NULL;
}

int config_backend_enabled(const config_settings *cfg, const char *backend) {
  return cfg && backend &&
         base_str_allowed(cfg->enabled_backends, cfg->enabled_count, cfg->disabled_backends,
                          cfg->disabled_count, backend);
}

/* ---- config_visit ------------------------------------------------ */

static int emit(const config_settings *cfg, config_visit_fn fn, void *user, const char *section,
                const char *okey_section, const char *key, const char *value) {
  char okey[600];
  snprintf(okey, sizeof okey, "%s.%s", okey_section, key);
  return fn(user, section, key, value, config_origin_of(cfg, okey));
}

/* A value built piece by piece (a list): a memory stream. */
typedef struct text {
  FILE *f;
  char *s;
  size_t len;
} text;

static int text_open(text *t) {
  t->s = NULL;
  t->f = open_memstream(&t->s, &t->len);
  return t->f ? 0 : -1;
}

/* Closes t and emits what was written to it as key's value (as emit). */
static int emit_text(const config_settings *cfg, config_visit_fn fn, void *user,
                     const char *section, const char *okey_section, const char *key, text *t) {
  int closed = fclose(t->f) == 0 && t->s;
  int rc = closed ? emit(cfg, fn, user, section, okey_section, key, t->s) : -1;
  free(t->s);
  return rc;
}

/* ---- the formatters: show_SECTION_KEY for each line of config_keys.h --
 * Each writes one key's value as text to f (lists joined as they would be
 * written in the file) for the section record i ([workload NAME],
 * [model NAME], [plugin NAME]; unused elsewhere) and says what to visit: */
enum {
  SHOW_SKIP = 0, /* nothing: the key is unset and has no value to show */
  SHOW_TEXT,     /* what was written to f */
  SHOW_NULL,     /* the key with value NULL (unset, no default) */
};

static int put_text(FILE *f, const char *s) {
  if (!s)
    return SHOW_NULL;
  fputs(s, f);
  return SHOW_TEXT;
}

static int put_list(FILE *f, char *const *items, size_t n, const char *sep) {
  for (size_t i = 0; i < n; i++)
    fprintf(f, "%s%s", i ? sep : "", items[i]);
  return SHOW_TEXT;
}

static int show_store_path(const config_settings *cfg, size_t i, FILE *f) {
  (void)i;
  return put_text(f, cfg->store_path);
}

static int show_store_persistence_enabled(const config_settings *cfg, size_t i, FILE *f) {
  (void)i;
  return put_text(f, cfg->persistence_enabled ? "true" : "false");
}

static int show_plugins_directories(const config_settings *cfg, size_t i, FILE *f) {
  (void)i;
  return put_list(f, cfg->plugin_dirs, cfg->plugin_dir_count, ":");
}

static int show_plugins_paths(const config_settings *cfg, size_t i, FILE *f) {
  (void)i;
  return put_list(f, cfg->plugin_paths, cfg->plugin_path_count, ":");
}

static int show_plugins_enabled(const config_settings *cfg, size_t i, FILE *f) {
  (void)i;
  return put_list(f, cfg->enabled_backends, cfg->enabled_count, ",");
}

static int show_plugins_disabled(const config_settings *cfg, size_t i, FILE *f) {
  (void)i;
  return put_list(f, cfg->disabled_backends, cfg->disabled_count, ",");
}

static int show_calibration_cpus(const config_settings *cfg, size_t i, FILE *f) {
  char cpus[4096];
  (void)i;
  if (cfg->cpus_all || cfg->cpu_count == 0)
    snprintf(cpus, sizeof cpus, "all");
  else
    processor_cpulist_format(cfg->cpus, cfg->cpu_count, cpus, sizeof cpus);
  return put_text(f, cpus);
}

static int show_calibration_threads(const config_settings *cfg, size_t i, FILE *f) {
  (void)i;
  for (size_t k = 0; k < cfg->thread_count_count; k++) {
    if (cfg->thread_counts[k] == 0)
      fprintf(f, "%smax", k ? "," : "");
    else
      fprintf(f, "%s%u", k ? "," : "", (unsigned)cfg->thread_counts[k]);
  }
  return SHOW_TEXT;
}

static int show_calibration_rigor(const config_settings *cfg, size_t i, FILE *f) {
  (void)i;
  return put_text(f, base_rigor_name(cfg->rigor));
}

static int show_calibration_strategy(const config_settings *cfg, size_t i, FILE *f) {
  (void)i;
  return put_text(f, base_strategy_name((base_strategy)cfg->strategy));
}

static int show_calibration_budget(const config_settings *cfg, size_t i, FILE *f) {
  (void)i;
  if (cfg->budget_seconds > 0)
    fprintf(f, "%gs", cfg->budget_seconds);
  else
    fprintf(f, "%u", (unsigned)cfg->budget_evaluations);
  return SHOW_TEXT;
}

static int show_calibration_time_budget(const config_settings *cfg, size_t i, FILE *f) {
  (void)i;
  fprintf(f, "%g", cfg->time_budget_seconds);
  return SHOW_TEXT;
}

static int show_calibration_repetitions(const config_settings *cfg, size_t i, FILE *f) {
  (void)i;
  fprintf(f, "%u", (unsigned)cfg->repetitions);
  return SHOW_TEXT;
}

static int show_calibration_plugin_timeout(const config_settings *cfg, size_t i, FILE *f) {
  (void)i;
  fprintf(f, "%g", cfg->plugin_timeout_seconds);
  return SHOW_TEXT;
}

static int show_lookup_force_portable(const config_settings *cfg, size_t i, FILE *f) {
  (void)i;
  return put_text(f, cfg->force_portable ? "true" : "false");
}

static int show_lookup_backends(const config_settings *cfg, size_t i, FILE *f) {
  (void)i;
  return cfg->lookup_backend_count
             ? put_list(f, cfg->lookup_backends, cfg->lookup_backend_count, ", ")
             : SHOW_SKIP;
}

static int show_workload_operator(const config_settings *cfg, size_t i, FILE *f) {
  return put_text(f, cfg->workloads[i].operator_name);
}

static int show_workload_dtype(const config_settings *cfg, size_t i, FILE *f) {
  return put_text(f, cfg->workloads[i].dtype);
}

static int show_workload_shape(const config_settings *cfg, size_t i, FILE *f) {
  const config_workload *w = &cfg->workloads[i];
  for (size_t d = 0; d < w->shape_rank; d++)
    fprintf(f, "%s%lld", d ? "," : "", (long long)w->shape[d]);
  return SHOW_TEXT;
}

static int show_workload_model(const config_settings *cfg, size_t i, FILE *f) {
  return cfg->workloads[i].model_file ? put_text(f, cfg->workloads[i].model_file) : SHOW_SKIP;
}

static int show_model_file(const config_settings *cfg, size_t i, FILE *f) {
  return put_text(f, cfg->models[i].file);
}

static int show_model_dims(const config_settings *cfg, size_t i, FILE *f) {
  const config_model *m = &cfg->models[i];
  for (size_t b = 0; b < m->binding_count; b++) {
    char canon[2048];
    config_dims_canonical(m->bindings[b].dims, m->bindings[b].count, canon, sizeof canon);
    fprintf(f, "%s%s", b ? " | " : "", canon);
  }
  return m->binding_count ? SHOW_TEXT : SHOW_SKIP;
}

static int show_model_backends(const config_settings *cfg, size_t i, FILE *f) {
  const config_model *m = &cfg->models[i];
  return m->backend_count ? put_list(f, m->backends, m->backend_count, ", ") : SHOW_SKIP;
}

static int show_plugin_devices(const config_settings *cfg, size_t i, FILE *f) {
  const config_plugin_section *s = &cfg->plugin_sections[i];
  return s->device_count ? put_list(f, s->devices, s->device_count, ", ") : SHOW_SKIP;
}

static int show_plugin_time_budget(const config_settings *cfg, size_t i, FILE *f) {
  const config_plugin_section *s = &cfg->plugin_sections[i];
  if (s->time_budget_seconds <= 0)
    return SHOW_SKIP;
  fprintf(f, "%g", s->time_budget_seconds);
  return SHOW_TEXT;
}

typedef int key_formatter(const config_settings *cfg, size_t i, FILE *f);

static const struct {
  const char *section;
  const char *key;
  key_formatter *show;
} show_table[] = {
#define KEY(kind, section, key) {#section, #key, show_##section##_##key},
    CALHOST_CONFIG_KEYS(KEY)
#undef KEY
};

/* Visits the table's keys of the section word (record i of a named one):
 * section and okey_section as emit's. */
static int visit_table(const config_settings *cfg, config_visit_fn fn, void *user, const char *word,
                       size_t i, const char *section, const char *okey_section) {
  for (size_t k = 0; k < sizeof show_table / sizeof show_table[0]; k++) {
    text t;
    int shown, rc;
    if (strcmp(show_table[k].section, word) != 0)
      continue;
    if (text_open(&t) != 0)
      return -1;
    shown = show_table[k].show(cfg, i, t.f);
    if (shown == SHOW_TEXT) {
      rc = emit_text(cfg, fn, user, section, okey_section, show_table[k].key, &t);
    } else {
      fclose(t.f);
      free(t.s);
      rc = shown == SHOW_NULL ? emit(cfg, fn, user, section, okey_section, show_table[k].key, NULL)
                              : 0;
    }
    if (rc != 0)
      return rc;
  }
  return 0;
}

int config_visit(const config_settings *cfg, config_visit_fn fn, void *user) {
  static const char *const plain[] = {"store", "plugins", "calibration", "lookup"};
  int rc;
  for (size_t k = 0; k < sizeof plain / sizeof plain[0]; k++)
    if ((rc = visit_table(cfg, fn, user, plain[k], 0, plain[k], plain[k])) != 0)
      return rc;
  for (size_t i = 0; i < cfg->workload_count; i++) {
    const config_workload *w = &cfg->workloads[i];
    char section[300], osec[300];
    snprintf(section, sizeof section, "workload %s", w->name);
    snprintf(osec, sizeof osec, "workload.%s", w->name);
    if ((rc = visit_table(cfg, fn, user, "workload", i, section, osec)) != 0)
      return rc;
    for (size_t k = 0; k < w->property_count; k++)
      if ((rc = emit(cfg, fn, user, section, osec, w->properties[k].name,
                     w->properties[k].value)) != 0)
        return rc;
    /* Computed, not read: its origin is the section header. */
    if ((rc = fn(user, section, "model_digest", w->model_digest, w->origin)) != 0)
      return rc;
  }
  for (size_t i = 0; i < cfg->model_count; i++) {
    char section[300], osec[300];
    snprintf(section, sizeof section, "model %s", cfg->models[i].name);
    snprintf(osec, sizeof osec, "model.%s", cfg->models[i].name);
    if ((rc = visit_table(cfg, fn, user, "model", i, section, osec)) != 0)
      return rc;
  }
  for (size_t i = 0; i < cfg->plugin_section_count; i++) {
    const config_plugin_section *s = &cfg->plugin_sections[i];
    char section[300], osec[300];
    snprintf(section, sizeof section, "plugin %s", s->name);
    snprintf(osec, sizeof osec, "plugin.%s", s->name);
    if ((rc = visit_table(cfg, fn, user, "plugin", i, section, osec)) != 0)
      return rc;
    for (size_t k = 0; k < s->setting_count; k++)
      if ((rc = emit(cfg, fn, user, section, osec, s->settings[k].name, s->settings[k].value)) != 0)
        return rc;
  }
  return 0;
}
