/*
 * keys.c: the rules of calhost.ini: which sections exist, which keys each
 * takes (the table of config_keys.h: one setter per key, and the "known
 * keys" of the unknown-key message), what a key means in the typed
 * config_settings and which values it accepts (through the value parsers
 * of values.c, shared with the command line), how paths resolve, which
 * keys are required and which combinations are refused. The reader that
 * feeds it lines and keys is parse.c.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "processor/processor.h" /* processor_cpulist_parse */
#include "base/array.h"
#include "base/str.h"
#include "config_keys.h"
#include "parser.h"
#include "values.h"

/* Resolves a path value of key: "~" and "~/..." against $HOME, a relative
 * path against the config file's directory. "~" with HOME unset or empty
 * is refused (it would name a folder literally called "~" in the current
 * directory), and so is "~NAME/..." (another user's home is not expanded).
 * Returns a malloc'd string, or NULL after reporting the error (out of
 * memory included) through cfg_perr. */
static char *resolve_path(parser *p, const char *key, const char *v) {
  char *out = NULL;
  if (v[0] == '~' && (v[1] == '/' || v[1] == '\0')) {
    const char *home = secure_getenv("HOME");
    if (!home || !*home) {
      cfg_perr(p, p->line,
               "bad value for '%s' in %s: '%s' (HOME is not set, so '~' cannot be expanded; "
               "write the full path)",
               key, p->section, v);
      return NULL;
    }
    if (asprintf(&out, "%s%s", home, v + 1) < 0)
      return cfg_oom(p), NULL;
    return out;
  }
  if (v[0] == '~') {
    cfg_perr(p, p->line,
             "bad value for '%s' in %s: '%s' (only '~' and '~/...' are expanded, against HOME; "
             "write the full path)",
             key, p->section, v);
    return NULL;
  }
  if (v[0] == '/' || !p->base_dir || !strcmp(p->base_dir, "."))
    out = strdup(v);
  else if (asprintf(&out, "%s/%s", p->base_dir, v) < 0)
    out = NULL;
  if (!out)
    cfg_oom(p);
  return out;
}

/* ---- sections ---------------------------------------------------------- */

section_kind cfg_section_kind(parser *p, const char *word, const char *name) {
  static const struct {
    const char *word;
    section_kind kind;
  } plain[] = {{"store", SEC_STORE},
               {"plugins", SEC_PLUGINS},
               {"calibration", SEC_CALIBRATION},
               {"lookup", SEC_LOOKUP}};
  section_kind kind = SEC_BAD;
  for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
    if (!strcmp(word, plain[i].word))
      kind = plain[i].kind;
  if (!strcmp(word, "workload"))
    kind = SEC_WORKLOAD;
  else if (!strcmp(word, "model"))
    kind = SEC_MODEL;
  else if (!strcmp(word, "plugin"))
    kind = SEC_PLUGIN;
  if (kind == SEC_BAD) {
    cfg_perr(p, p->line,
             "unknown section %s (expected [store], [plugins], [calibration], [lookup], "
             "[workload NAME], [model NAME] or [plugin NAME])",
             p->section);
    return SEC_BAD;
  }
  if (kind == SEC_WORKLOAD || kind == SEC_PLUGIN || kind == SEC_MODEL) {
    if (!name[0]) {
      cfg_perr(p, p->line, "[%s] needs a name: [%s NAME]", word, word);
      return SEC_BAD;
    }
    if (!cfg_valid_name(name)) {
      cfg_perr(p, p->line, "bad %s name '%s' (use letters, digits, '_', '.', '-')", word, name);
      return SEC_BAD;
    }
  } else if (name[0]) {
    cfg_perr(p, p->line, "[%s] takes no name (found '%s')", word, name);
    return SEC_BAD;
  }
  return kind;
}

/* Appends a zeroed section record to items (*count used, *capacity
 * allocated) and makes it the parser's current one (p->index). Returns the
 * grown array, which the caller stores; NULL when out of memory (reported). */
static void *section_add(parser *p, void *items, size_t *count, size_t *capacity, size_t size) {
  void *grown = base_array_grow(items, *count, capacity, size, 4);
  if (!grown) {
    cfg_oom(p);
    return NULL;
  }
  memset((char *)grown + *count * size, 0, size);
  p->index = (*count)++;
  return grown;
}

void cfg_section_open(parser *p, const char *name) {
  config_settings *c = p->cfg;
  config_origin origin = {c->source_path, p->line};
  if (p->kind == SEC_WORKLOAD) {
    config_workload *v =
        section_add(p, c->workloads, &c->workload_count, &c->workload_capacity, sizeof *v);
    if (!v)
      return;
    c->workloads = v;
    v[p->index].name = strdup(name);
    v[p->index].dtype = strdup("float32");
    v[p->index].origin = origin;
    if (!v[p->index].name || !v[p->index].dtype)
      cfg_oom(p);
  } else if (p->kind == SEC_MODEL) {
    config_model *v = section_add(p, c->models, &c->model_count, &c->model_capacity, sizeof *v);
    if (!v)
      return;
    c->models = v;
    v[p->index].name = strdup(name);
    v[p->index].origin = origin;
    if (!v[p->index].name)
      cfg_oom(p);
  } else if (p->kind == SEC_PLUGIN) {
    config_plugin_section *v = section_add(p, c->plugin_sections, &c->plugin_section_count,
                                           &c->plugin_section_capacity, sizeof *v);
    if (!v)
      return;
    c->plugin_sections = v;
    v[p->index].name = strdup(name);
    v[p->index].origin = origin;
    if (!v[p->index].name)
      cfg_oom(p);
  }
}

void cfg_section_close(parser *p) {
  if (p->kind == SEC_WORKLOAD) {
    config_workload *w = &p->cfg->workloads[p->index];
    if (!w->operator_name)
      cfg_perr(p, p->section_line, "%s lacks the required key 'operator'", p->section);
    else if (!w->shape)
      cfg_perr(p, p->section_line, "%s lacks the required key 'shape'", p->section);
  } else if (p->kind == SEC_MODEL && !p->cfg->models[p->index].file) {
    cfg_perr(p, p->section_line, "%s lacks the required key 'file'", p->section);
  }
}

/* ---- keys -------------------------------------------------------------- */

/* Splits a list value at any of seps, trimming items; calls add for each
 * non-empty item. Returns 0 or the first nonzero add result. */
static int split_list(const char *v, const char *seps, int (*add)(parser *, const char *, void *),
                      parser *p, void *ctx) {
  char *copy = strdup(v), *save = NULL, *tok;
  int rc = 0;
  if (!copy)
    return cfg_oom(p), -1;
  for (tok = strtok_r(copy, seps, &save); tok && !rc; tok = strtok_r(NULL, seps, &save)) {
    char *e;
    while (isspace((unsigned char)*tok))
      tok++;
    e = tok + strlen(tok);
    while (e > tok && isspace((unsigned char)e[-1]))
      *--e = '\0';
    if (*tok)
      rc = add(p, tok, ctx);
  }
  free(copy);
  return rc;
}

typedef struct strv_ctx {
  char ***v;
  size_t *n;
  const char *key;
  int is_path;
  int is_backend;
} strv_ctx;

static int add_item(parser *p, const char *item, void *vctx) {
  strv_ctx *c = vctx;
  if (c->is_backend && !cfg_valid_name(item)) {
    cfg_perr(p, p->line, "%s: bad backend name '%s' in '%s'", p->section, item, c->key);
    return -1;
  }
  if (c->is_backend && base_str_listed(*c->v, *c->n, item)) {
    cfg_perr(p, p->line, "%s: backend '%s' is listed twice in '%s'", p->section, item, c->key);
    return -1;
  }
  if (c->is_path) {
    char *r = resolve_path(p, c->key, item);
    if (!r)
      return -1; /* reported */
    int ok = cfg_strv_push(c->v, c->n, r) != NULL;
    free(r);
    if (!ok)
      return cfg_oom(p), -1;
  } else if (!cfg_strv_push(c->v, c->n, item)) {
    return cfg_oom(p), -1;
  }
  return 0;
}

static int set_list(parser *p, const char *key, const char *value, char ***v, size_t *n,
                    const char *seps, int is_path, int is_backend) {
  strv_ctx c = {v, n, key, is_path, is_backend};
  cfg_strv_free(v, n);
  return split_list(value, seps, add_item, p, &c) == 0;
}

static int parse_threads(parser *p, const char *value) {
  config_settings *c = p->cfg;
  uint32_t *list;
  size_t n;
  char why[300];
  if (config_value_threads(value, &list, &n, why, sizeof why) != 0)
    return !strcmp(why, "out of memory")
               ? cfg_oom(p)
               : cfg_perr(p, p->line, "bad value for 'threads' in %s: %s", p->section, why);
  free(c->thread_counts);
  c->thread_counts = list;
  c->thread_count_count = n;
  return 1;
}

static int parse_shape(parser *p, config_workload *w, const char *value) {
  int64_t dims[CALHOST_MAX_SHAPE_RANK];
  size_t rank;
  char why[300];
  if (config_value_shape(value, dims, &rank, why, sizeof why) != 0)
    return cfg_perr(p, p->line, "bad value for 'shape' in %s: '%s': %s", p->section, value, why);
  free(w->shape);
  w->shape = malloc(rank * sizeof *w->shape);
  if (!w->shape)
    return cfg_oom(p);
  memcpy(w->shape, dims, rank * sizeof *dims);
  w->shape_rank = rank;
  return 1;
}

static int bad_value(parser *p, const char *key, const char *value, const char *expected) {
  return cfg_perr(p, p->line, "bad value for '%s' in %s: '%s' (expected %s)", key, p->section,
                  value, expected);
}

/* A value refused by a values.h parser: its explanation follows. */
static int refused(parser *p, const char *key, const char *value, const char *why) {
  return cfg_perr(p, p->line, "bad value for '%s' in %s: '%s' (%s)", key, p->section, value, why);
}

static int unknown_key(parser *p, const char *key, const char *known) {
  return cfg_perr(p, p->line, "unknown key '%s' in %s (known keys: %s)", key, p->section, known);
}

/* A path value (non-empty), resolved as resolve_path says, into *dst. */
static int set_path(parser *p, const char *key, const char *value, char **dst) {
  char *r;
  if (!*value)
    return bad_value(p, key, value, "a file path");
  r = resolve_path(p, key, value);
  if (!r)
    return 0; /* reported */
  free(*dst);
  *dst = r;
  return 1;
}

static int set_string(parser *p, char **dst, const char *value) {
  char *s = strdup(value);
  if (!s)
    return cfg_oom(p);
  free(*dst);
  *dst = s;
  return 1;
}

/* ---- the setters: set_SECTION_KEY for each line of config_keys.h ------
 * Each reads one key's value into p->cfg (the current section's record
 * for [workload NAME], [model NAME], [plugin NAME]) and returns 1, or
 * reports the error through cfg_perr and returns 0 (as cfg_key). */

#define WHY char why[300]
#define CHECKED(call) ((call) == 0 ? 1 : refused(p, name, value, why))

static int set_store_path(parser *p, const char *name, const char *value) {
  return set_path(p, name, value, &p->cfg->store_path);
}

static int set_store_persistence_enabled(parser *p, const char *name, const char *value) {
  WHY;
  return CHECKED(config_value_bool(value, &p->cfg->persistence_enabled, why, sizeof why));
}

static int set_plugins_directories(parser *p, const char *name, const char *value) {
  config_settings *c = p->cfg;
  return set_list(p, name, value, &c->plugin_dirs, &c->plugin_dir_count, ":,", 1, 0);
}

static int set_plugins_paths(parser *p, const char *name, const char *value) {
  config_settings *c = p->cfg;
  return set_list(p, name, value, &c->plugin_paths, &c->plugin_path_count, ":,", 1, 0);
}

static int set_plugins_enabled(parser *p, const char *name, const char *value) {
  config_settings *c = p->cfg;
  return set_list(p, name, value, &c->enabled_backends, &c->enabled_count, ",", 0, 1);
}

static int set_plugins_disabled(parser *p, const char *name, const char *value) {
  config_settings *c = p->cfg;
  return set_list(p, name, value, &c->disabled_backends, &c->disabled_count, ",", 0, 1);
}

static int set_calibration_cpus(parser *p, const char *name, const char *value) {
  config_settings *c = p->cfg;
  int *cpus = NULL, all = 0;
  size_t n = 0;
  WHY;
  (void)name;
  if (processor_cpulist_parse(value, &cpus, &n, &all, why, sizeof why) != 0)
    return cfg_perr(p, p->line, "bad value for 'cpus' in %s: %s", p->section, why);
  free(c->cpus);
  c->cpus = cpus;
  c->cpu_count = n;
  c->cpus_all = all;
  return 1;
}

static int set_calibration_threads(parser *p, const char *name, const char *value) {
  (void)name;
  return parse_threads(p, value);
}

static int set_calibration_rigor(parser *p, const char *name, const char *value) {
  if (base_rigor_parse(value, &p->cfg->rigor) != 0)
    return bad_value(p, name, value, "quick, measure or exhaustive");
  return 1;
}

static int set_calibration_strategy(parser *p, const char *name, const char *value) {
  WHY;
  return CHECKED(config_value_strategy(value, &p->cfg->strategy, why, sizeof why));
}

static int set_calibration_budget(parser *p, const char *name, const char *value) {
  config_settings *c = p->cfg;
  WHY;
  return CHECKED(config_value_search_budget(value, &c->budget_evaluations, &c->budget_seconds, why,
                                            sizeof why));
}

static int set_calibration_time_budget(parser *p, const char *name, const char *value) {
  WHY;
  return CHECKED(config_value_duration(value, 1, &p->cfg->time_budget_seconds, why, sizeof why));
}

static int set_calibration_repetitions(parser *p, const char *name, const char *value) {
  WHY;
  return CHECKED(config_value_repetitions(value, &p->cfg->repetitions, why, sizeof why));
}

static int set_calibration_plugin_timeout(parser *p, const char *name, const char *value) {
  WHY;
  return CHECKED(config_value_duration(value, 0, &p->cfg->plugin_timeout_seconds, why, sizeof why));
}

static int set_lookup_force_portable(parser *p, const char *name, const char *value) {
  WHY;
  return CHECKED(config_value_bool(value, &p->cfg->force_portable, why, sizeof why));
}

static int set_lookup_backends(parser *p, const char *name, const char *value) {
  config_settings *c = p->cfg;
  return set_list(p, name, value, &c->lookup_backends, &c->lookup_backend_count, ",", 0, 1);
}

static int set_workload_operator(parser *p, const char *name, const char *value) {
  config_workload *w = &p->cfg->workloads[p->index];
  return cfg_valid_name(value) ? set_string(p, &w->operator_name, value)
                               : bad_value(p, name, value, "an operator name such as MatMul");
}

static int set_workload_dtype(parser *p, const char *name, const char *value) {
  config_workload *w = &p->cfg->workloads[p->index];
  return cfg_valid_name(value) ? set_string(p, &w->dtype, value)
                               : bad_value(p, name, value, "a type name such as float32");
}

static int set_workload_shape(parser *p, const char *name, const char *value) {
  (void)name;
  return parse_shape(p, &p->cfg->workloads[p->index], value);
}

static int set_workload_model(parser *p, const char *name, const char *value) {
  config_workload *w = &p->cfg->workloads[p->index];
  w->model_origin.file = p->cfg->source_path;
  w->model_origin.line = p->line;
  return set_path(p, name, value, &w->model_file);
}

static int set_model_file(parser *p, const char *name, const char *value) {
  config_model *m = &p->cfg->models[p->index];
  m->file_origin = (config_origin){p->cfg->source_path, p->line};
  return set_path(p, name, value, &m->file);
}

static int set_model_dims(parser *p, const char *name, const char *value) {
  config_model *m = &p->cfg->models[p->index];
  config_binding *b;
  size_t n;
  WHY;
  if (config_value_bindings(value, &b, &n, why, sizeof why) != 0)
    return !strcmp(why, "out of memory") ? cfg_oom(p) : refused(p, name, value, why);
  config_bindings_free(m->bindings, m->binding_count);
  m->bindings = b;
  m->binding_count = n;
  m->dims_origin = (config_origin){p->cfg->source_path, p->line};
  return 1;
}

static int set_model_backends(parser *p, const char *name, const char *value) {
  config_model *m = &p->cfg->models[p->index];
  return set_list(p, name, value, &m->backends, &m->backend_count, ",", 0, 1);
}

/* the host's key: which devices of the plugin to calibrate */
static int set_plugin_devices(parser *p, const char *name, const char *value) {
  config_plugin_section *s = &p->cfg->plugin_sections[p->index];
  char **list;
  size_t n;
  int all;
  WHY;
  if (config_value_devices(value, &list, &n, &all, why, sizeof why) != 0)
    return !strcmp(why, "out of memory") ? cfg_oom(p) : refused(p, name, value, why);
  config_value_strings_free(s->devices, s->device_count);
  s->devices = list;
  s->device_count = n;
  return 1;
}

/* the host's key: this plugin's time budget */
static int set_plugin_time_budget(parser *p, const char *name, const char *value) {
  config_plugin_section *s = &p->cfg->plugin_sections[p->index];
  WHY;
  return CHECKED(config_value_duration(value, 1, &s->time_budget_seconds, why, sizeof why));
}

#undef WHY
#undef CHECKED

/* Any other key of [workload NAME]: a structural property. */
static int set_workload_property(parser *p, const char *name, const char *value) {
  config_workload *w = &p->cfg->workloads[p->index];
  if (!cfg_valid_name(name))
    return cfg_perr(p, p->line, "bad property name '%s' in %s (use letters, digits, '_', '.', '-')",
                    name, p->section);
  if (!strcmp(name, "model_digest") || !strcmp(name, "name"))
    return cfg_perr(p, p->line, "'%s' is reserved and cannot be set in %s", name, p->section);
  if (!*value || strpbrk(value, ";\"\\"))
    return cfg_perr(p, p->line,
                    "bad value for property '%s' in %s: '%s' (non-empty, without ';', '\"' or "
                    "'\\')",
                    name, p->section, value);
  if (!base_str_one_line(value))
    return cfg_perr(p, p->line, "bad value for property '%s' in %s: control character", name,
                    p->section);
  return cfg_props_push(&w->properties, &w->property_count, name, value) == 0 ? 1 : cfg_oom(p);
}

/* Any other key of [plugin NAME]: a setting passed to the plugin. */
static int set_plugin_setting(parser *p, const char *name, const char *value) {
  config_plugin_section *s = &p->cfg->plugin_sections[p->index];
  if (!cfg_valid_name(name))
    return cfg_perr(p, p->line, "bad setting name '%s' in %s (use letters, digits, '_', '.', '-')",
                    name, p->section);
  return cfg_props_push(&s->settings, &s->setting_count, name, value) == 0 ? 1 : cfg_oom(p);
}

typedef int key_setter(parser *p, const char *name, const char *value);

static const struct {
  section_kind kind;
  const char *key;
  key_setter *set;
} key_table[] = {
#define KEY(kind, section, key) {kind, #key, set_##section##_##key},
    CALHOST_CONFIG_KEYS(KEY)
#undef KEY
};

int cfg_key(parser *p, const char *name, const char *value) {
  char known[512];
  size_t used = 0;
  if (p->kind == SEC_NONE)
    return cfg_perr(p, p->line,
                    "key '%s' outside any section (put it under [store], [plugins], "
                    "[calibration], [lookup], [workload NAME], [model NAME] or [plugin NAME])",
                    name);
  if (p->kind == SEC_BAD)
    return 1; /* the header's error was already reported */
  for (size_t i = 0; i < sizeof key_table / sizeof key_table[0]; i++)
    if (key_table[i].kind == p->kind && !strcmp(name, key_table[i].key))
      return key_table[i].set(p, name, value);
  if (p->kind == SEC_WORKLOAD)
    return set_workload_property(p, name, value);
  if (p->kind == SEC_PLUGIN)
    return set_plugin_setting(p, name, value);
  known[0] = '\0';
  for (size_t i = 0; i < sizeof key_table / sizeof key_table[0]; i++)
    if (key_table[i].kind == p->kind && used < sizeof known)
      used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", used ? ", " : "",
                               key_table[i].key);
  return unknown_key(p, name, known);
}

int cfg_finish(parser *p) {
  config_settings *c = p->cfg;
  for (size_t i = 0; i < c->enabled_count; i++)
    for (size_t j = 0; j < c->disabled_count; j++)
      if (!strcmp(c->enabled_backends[i], c->disabled_backends[j])) {
        config_origin o = config_origin_of(c, "plugins.disabled");
        cfg_perr(p, o.line, "backend '%s' is both enabled and disabled in [plugins]",
                 c->disabled_backends[j]);
        return -1;
      }
  return 0;
}
