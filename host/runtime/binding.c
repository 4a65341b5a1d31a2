/*
 * binding.c: the binding between configuration, loader, this machine and
 * the store (see binding.h): one owner for each of those steps.
 */
#include "binding.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "base/text.h"
#include "base/key.h"

/* calhost_property (the plugin ABI) and calstore_property (the store) are
 * two types with one shape; keys are converted between them field by field
 * (runtime_binding_store_key), never cast. These checks keep the shapes
 * equal so a conversion loses nothing. */
_Static_assert(sizeof(calhost_property) == sizeof(calstore_property),
               "calhost_property and calstore_property differ");
_Static_assert(offsetof(calhost_property, name) == offsetof(calstore_property, name) &&
                   offsetof(calhost_property, value) == offsetof(calstore_property, value),
               "calhost_property and calstore_property differ");

void runtime_binding_loader_options(const config_settings *cfg, loader_options *lo) {
  lo->config_dirs = cfg->plugin_dirs;
  lo->config_dir_count = cfg->plugin_dir_count;
  lo->explicit_paths = cfg->plugin_paths;
  lo->explicit_path_count = cfg->plugin_path_count;
  lo->enabled = cfg->enabled_backends;
  lo->enabled_count = cfg->enabled_count;
  lo->disabled = cfg->disabled_backends;
  lo->disabled_count = cfg->disabled_count;
}

void runtime_binding_store_options(const config_settings *cfg, const char *store_path,
                                   calstore_options *opts) {
  if (cfg->store_path)
    opts->path = cfg->store_path;
  opts->persistence_enabled = cfg->persistence_enabled;
  if (store_path)
    opts->path = store_path;
}

void runtime_binding_store_error(char *buf, size_t cap, calstore_status st,
                                 const calstore_error *err, const char *path_if_none) {
  char where[4200];
  const char *path = err && err->path[0] ? err->path : path_if_none ? path_if_none : "store";
  base_text_where(where, sizeof where, path, err ? err->line : 0);
  /* the library's message may start with the place this line names first */
  const char *message = err ? err->message : "";
  char own[4200];
  snprintf(own, sizeof own, "%s: line %u: ", path, err ? err->line : 0);
  if (err && err->line && !strncmp(message, own, strlen(own)))
    message += strlen(own);
  snprintf(buf, cap, "%s: %s: %s%s", where, calstore_status_name(st), message,
           st == CALSTORE_MALFORMED || st == CALSTORE_UNSUPPORTED_VERSION
               ? " (repair or remove the file; `calhost check` lists its problems)"
               : "");
}

calstore_status runtime_binding_open_store(const config_settings *cfg, const char *store_path,
                                           calstore **out, char *why, size_t cap) {
  calstore_options opts;
  calstore_error err = {0};
  calstore_options_init(&opts);
  runtime_binding_store_options(cfg, store_path, &opts);
  calstore_status st = calstore_open(&opts, out, &err);
  if (st != CALSTORE_OK && why)
    runtime_binding_store_error(why, cap, st, &err, opts.path);
  return st;
}

calstore_lookup_options runtime_binding_lookup_options(const calstore_key *key,
                                                       const calstore_key *portable,
                                                       int force_portable) {
  const calstore_key *s = portable ? portable : key;
  calstore_lookup_options o = {.backend = key->backend,
                               .operator_name = key->operator_name,
                               .implementation = key->implementation,
                               .model_digest = key->model_digest,
                               .processor = key->processor,
                               .thread_count = key->thread_count,
                               .structure = s->structure,
                               .structure_count = s->structure_count,
                               .force_portable = force_portable};
  return o;
}

void runtime_binding_plugin_settings(const config_settings *cfg, const char *backend,
                                     const calhost_property **settings, size_t *count) {
  const config_plugin_section *sec = backend ? config_plugin_named(cfg, backend) : NULL;
  *settings = sec ? sec->settings : NULL;
  *count = sec ? sec->setting_count : 0;
}

calhost_status runtime_binding_create(const config_settings *cfg, loader_plugin *p,
                                      calhost_plugin_instance **inst) {
  const calhost_property *settings;
  size_t n;
  runtime_binding_plugin_settings(cfg, p->backend, &settings, &n);
  calhost_status st = loader_plugin_create(p, settings, n, inst);
  if (st != CALHOST_OK)
    *inst = NULL;
  return st;
}

void runtime_binding_create_failure(const config_settings *cfg, loader_plugin *p, calhost_status st,
                                    int name_settings, char *why, size_t cap) {
  const char *m = loader_plugin_take_error(p);
  const config_plugin_section *sec = config_plugin_named(cfg, p->backend);
  char where[600] = "";
  if (name_settings && sec && sec->setting_count && sec->origin.file)
    snprintf(where, sizeof where, " (its settings: [plugin %s] at %s:%u)", p->backend,
             sec->origin.file, sec->origin.line);
  snprintf(why, cap, "create failed: %s%s%s%s", calhost_status_name(st), m ? ": " : "", m ? m : "",
           where);
}

int runtime_binding_serves(const loader_plugin *p, const char *op) {
  return base_str_listed(p->operators, p->operator_count, op);
}

void runtime_binding_workload(const config_workload *w, calhost_workload *out) {
  memset(out, 0, sizeof *out);
  out->header = (calhost_struct_header){CALHOST_STRUCT_WORKLOAD, 1, sizeof *out};
  out->name = w->name;
  out->operator_name = w->operator_name;
  out->dtype = w->dtype ? w->dtype : "float32";
  out->shape = w->shape;
  out->shape_rank = w->shape_rank;
  out->properties = w->properties;
  out->property_count = w->property_count;
  out->model_digest = w->model_digest;
}

int runtime_binding_targets(const config_settings *cfg, const uint32_t *thread_counts,
                            size_t thread_count_count, processor_target_list *out, char *err,
                            size_t cap) {
  char why[1024];
  int rc = processor_targets(cfg->cpus, cfg->cpu_count, cfg->cpus_all, thread_counts,
                             thread_count_count, out, why, sizeof why);
  if (rc == 0)
    return 0;
  config_origin at = config_origin_of(cfg, "calibration.cpus");
  if (rc == PROCESSOR_TARGETS_CPU_UNAVAILABLE && at.file)
    return base_str_fail(err, cap, "%s:%u: %s", at.file, at.line, why);
  return base_str_fail(err, cap, "%s", why);
}

void runtime_binding_target(const processor_target_list *targets, size_t i, calhost_target *out) {
  memset(out, 0, sizeof *out);
  out->header = (calhost_struct_header){CALHOST_STRUCT_TARGET, 1, sizeof *out};
  out->processor = targets->processor.description;
  out->thread_count = targets->items[i].thread_count;
  out->cpus = targets->items[i].cpus;
  out->cpu_count = targets->items[i].cpu_count;
  out->features = targets->processor.features;
}

void runtime_binding_device_target(const processor_target_list *targets, size_t i,
                                   const char *identity, uint32_t index, calhost_target *out) {
  runtime_binding_target(targets, i, out);
  out->processor = identity;
  out->device_identity = identity;
  out->device_index = index;
}

void runtime_binding_built_key_init(calhost_built_key *k) {
  memset(k, 0, sizeof *k);
  k->header = (calhost_struct_header){CALHOST_STRUCT_BUILT_KEY, 1, sizeof *k};
}

runtime_binding_key_defect runtime_binding_key_defect_of(const calhost_built_key *k,
                                                         size_t *property) {
  if (!k->model_digest || !*k->model_digest)
    return RUNTIME_BINDING_KEY_NO_MODEL_DIGEST;
  if (!k->processor || !*k->processor)
    return RUNTIME_BINDING_KEY_NO_PROCESSOR;
  if (k->thread_count < 1)
    return RUNTIME_BINDING_KEY_NO_THREADS;
  if (!k->structure || k->structure_count < 1)
    return RUNTIME_BINDING_KEY_NO_STRUCTURE;
  for (size_t i = 0; i < k->structure_count; i++)
    if (!k->structure[i].name || !k->structure[i].value || !*k->structure[i].name) {
      if (property)
        *property = i;
      return RUNTIME_BINDING_KEY_EMPTY_PROPERTY;
    }
  return RUNTIME_BINDING_KEY_USABLE;
}

/* A key's defect (1-5) in a run's words. */
static const char *defect_words(runtime_binding_key_defect d) {
  switch (d) {
  case RUNTIME_BINDING_KEY_NO_MODEL_DIGEST:
  case RUNTIME_BINDING_KEY_NO_PROCESSOR:
  case RUNTIME_BINDING_KEY_NO_THREADS:
    return "build_key returned an incomplete exact key";
  case RUNTIME_BINDING_KEY_NO_STRUCTURE:
    return "build_key returned no portable structure";
  default:
    return "build_key returned an empty structure property";
  }
}

int runtime_binding_key_usable(const calhost_built_key *k, char *why, size_t cap) {
  runtime_binding_key_defect d = runtime_binding_key_defect_of(k, NULL);
  if (d == RUNTIME_BINDING_KEY_USABLE)
    return 1;
  snprintf(why, cap, "%s", defect_words(d));
  return 0;
}

/* Writes the detail of runtime_binding_build_key's answer d into why (may
 * be NULL) and returns d. */
static runtime_binding_key_defect answer(runtime_binding_key_defect d, const char *detail,
                                         char *why, size_t cap) {
  if (why && cap)
    snprintf(why, cap, "%s", detail ? detail : "");
  return d;
}

runtime_binding_key_defect
runtime_binding_build_key(loader_plugin *p, calhost_plugin_instance *inst,
                          const calhost_workload *w, const calhost_target *t, int check_twice,
                          calhost_built_key *out, calhost_status *status, char *why, size_t cap) {
  runtime_binding_built_key_init(out);
  calhost_status st = loader_plugin_build_key(p, inst, w, t, out);
  if (status)
    *status = st;
  if (st != CALHOST_OK)
    return answer(st == CALHOST_UNSUPPORTED ? RUNTIME_BINDING_KEY_UNSUPPORTED
                                            : RUNTIME_BINDING_KEY_BUILD_FAILED,
                  loader_plugin_take_error(p), why, cap);
  runtime_binding_key_defect d = runtime_binding_key_defect_of(out, NULL);
  if (d != RUNTIME_BINDING_KEY_USABLE)
    return answer(d, defect_words(d), why, cap);
  if (!check_twice)
    return answer(RUNTIME_BINDING_KEY_USABLE, "", why, cap);
  /* the key stays valid only until the plugin's next call: copy it first */
  base_key first;
  if (base_key_copy(out, &first) != 0)
    return answer(RUNTIME_BINDING_KEY_NO_MEMORY, "out of memory", why, cap);
  runtime_binding_built_key_init(out);
  st = loader_plugin_build_key(p, inst, w, t, out);
  if (status)
    *status = st;
  char diff[480] = "";
  int differs = st != CALHOST_OK || base_key_differs(&first, out, diff, sizeof diff);
  base_key_free(&first);
  if (!differs)
    return answer(RUNTIME_BINDING_KEY_USABLE, "", why, cap);
  return answer(RUNTIME_BINDING_KEY_NOT_DETERMINISTIC, diff[0] ? diff : "a key, then a failure",
                why, cap);
}

int runtime_binding_store_key(calstore_key_kind kind, const char *backend,
                              const char *operator_name, const char *implementation,
                              const char *model_digest, const char *processor,
                              uint32_t thread_count, const calhost_property *structure,
                              size_t structure_count, runtime_binding_key *out) {
  memset(out, 0, sizeof *out);
  out->key.kind = kind;
  out->key.backend = backend;
  out->key.operator_name = operator_name;
  out->key.implementation = implementation;
  if (kind == CALSTORE_KEY_EXACT) {
    out->key.model_digest = model_digest;
    out->key.processor = processor;
    out->key.thread_count = thread_count;
    return 0;
  }
  if (structure_count) {
    out->structure = calloc(structure_count, sizeof *out->structure);
    if (!out->structure)
      return -1;
    for (size_t i = 0; i < structure_count; i++) {
      out->structure[i].name = structure[i].name;
      out->structure[i].value = structure[i].value;
    }
  }
  out->key.structure = out->structure;
  out->key.structure_count = structure_count;
  return 0;
}

void runtime_binding_key_free(runtime_binding_key *k) {
  if (!k)
    return;
  free(k->structure);
  k->structure = NULL;
  k->key.structure = NULL;
  k->key.structure_count = 0;
}

int runtime_binding_validate(void *user, const char *policy, size_t length, char *err, size_t cap) {
  const runtime_binding_validator *v = user;
  if (length > CALHOST_POLICY_MAX_LENGTH) {
    snprintf(err, cap, "policy of %zu bytes exceeds the limit of %u", length,
             CALHOST_POLICY_MAX_LENGTH);
    return 0;
  }
  return loader_plugin_validate(v->plugin, v->instance, policy, length, err, cap) == CALHOST_OK;
}
