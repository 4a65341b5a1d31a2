/*
 * runtime.c: the deployment runtime (include/calhost/runtime.h): a
 * configuration, its store, the plugins a program loaded (searched where
 * runtime.h says, the shared library's own prefix included: places.c), and the
 * selection of a workload's policy on this machine, built on the binding
 * (binding.h) that calibrate uses, so the keys are the ones it stored.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "base/words.h"
#include "binding.h"
#include "config/digest.h"
#include "config/values.h"
#include "calhost/runtime.h"
#include "config/config.h"
#include "devices.h"
#include "loader/loader.h"
#include "loader/module.h"
#include "model/model.h"
#include "places.h"
#include "race.h"

struct calhost_runtime_plugin {
  loader_plugin_list list; /* the loader's records (this plugin and what it probed) */
  int every_enabled;       /* list is a discovery of every enabled plugin (loaded for a
                              workload, not a backend by name) */
  loader_plugin *p;
  calhost_plugin_instance *inst;
  runtime_device_list devices; /* a device backend's devices, listed on first use */
  int devices_listed;
  calhost_runtime_plugin *next;
};

struct calhost_runtime {
  config_settings cfg;
  calstore *store;
  int force_portable;
  char **extra_paths; /* options' plugin files and directories, copied */
  size_t extra_path_count;
  char **extra_dirs;
  size_t extra_dir_count;
  char *device; /* the options' device (copied), or NULL */
  calhost_runtime_plugin *plugins;
  struct runtime_model *models; /* calhost_runtime_add_model's (since 0.3) */
  /* the processor's targets by thread count, described once (runtime_targets) */
  struct target_cache_entry {
    uint32_t tc;
    processor_target_list list;
  } target_cache[8];
  size_t target_cache_count;
  /* calhost_runtime_serving_backends's (since 0.4): a discovery of every
   * enabled plugin when no loaded plugin's serves, and its answer */
  loader_plugin_list every;
  int every_listed;
  const char **serving;
};

static void runtime_models_free(struct runtime_model *m);

const config_settings *runtime_settings_of(const calhost_runtime *rt) {
  return &rt->cfg;
}
static calhost_runtime_status runtime_set_device(calhost_runtime *runtime, const char *device);

#define FAIL(code, ...)                                                                            \
  do {                                                                                             \
    if (err && err_capacity)                                                                       \
      snprintf(err, err_capacity, __VA_ARGS__);                                                    \
    return (code);                                                                                 \
  } while (0)

const char *calhost_runtime_version(uint32_t *number) {
  if (number)
    *number = CALHOST_RUNTIME_VERSION_NUMBER;
#define CALHOST_RUNTIME_STR2(x) #x
#define CALHOST_RUNTIME_STR(x) CALHOST_RUNTIME_STR2(x)
  return CALHOST_RUNTIME_STR(CALHOST_RUNTIME_VERSION_MAJOR) "." CALHOST_RUNTIME_STR(
      CALHOST_RUNTIME_VERSION_MINOR) "." CALHOST_RUNTIME_STR(CALHOST_RUNTIME_VERSION_PATCH);
}

const char *calhost_runtime_status_name(calhost_runtime_status status) {
  static const char *const words[] = {[CALHOST_RUNTIME_OK] = "ok",
                                      [CALHOST_RUNTIME_NOT_FOUND] = "not_found",
                                      [CALHOST_RUNTIME_CONFIG] = "config_error",
                                      [CALHOST_RUNTIME_STORE] = "store_error",
                                      [CALHOST_RUNTIME_PLUGIN] = "plugin_error",
                                      [CALHOST_RUNTIME_UNSUPPORTED] = "unsupported",
                                      [CALHOST_RUNTIME_INVALID_ARGUMENT] = "invalid_argument",
                                      [CALHOST_RUNTIME_NO_MEMORY] = "no_memory",
                                      [CALHOST_RUNTIME_MODEL] = "model_error",
                                      [CALHOST_RUNTIME_TARGET] = "target_error"};
  return BASE_WORD(words, CALHOST_RUNTIME_TARGET, status, "unknown");
}

void calhost_runtime_options_init(calhost_runtime_options *options) {
  if (!options)
    return;
  memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
  options->force_portable = -1;
}

static char **copy_strings(const char *const *v, size_t n) {
  char **out = calloc(n + 1, sizeof *out);
  for (size_t i = 0; out && i < n; i++) {
    size_t len = strlen(v[i]);
    out[i] = malloc(len + 1);
    if (!out[i]) {
      for (size_t j = 0; j < i; j++)
        free(out[j]);
      free(out);
      return NULL;
    }
    memcpy(out[i], v[i], len + 1);
  }
  return out;
}

static void free_strings(char **v, size_t n) {
  for (size_t i = 0; v && i < n; i++)
    free(v[i]);
  free(v);
}

/* As calhost_runtime_open, over a loaded configuration: the runtime takes
 * *cfg over (it is zeroed; calhost_runtime_close frees it) whatever the
 * outcome. store_path as the option, force_portable as the option (-1: the
 * configuration's). */
static calhost_runtime_status runtime_open_config(config_settings *cfg, const char *store_path,
                                                  int force_portable, calhost_runtime **out,
                                                  char *err, size_t err_capacity) {
  if (out)
    *out = NULL;
  calhost_runtime *rt = calloc(1, sizeof *rt);
  if (!rt) {
    config_free(cfg);
    memset(cfg, 0, sizeof *cfg);
    FAIL(CALHOST_RUNTIME_NO_MEMORY, "out of memory");
  }
  rt->cfg = *cfg;
  memset(cfg, 0, sizeof *cfg);
  rt->force_portable = force_portable >= 0 ? force_portable != 0 : rt->cfg.force_portable;
  char why[4600];
  if (runtime_binding_open_store(&rt->cfg, store_path, &rt->store, why, sizeof why) !=
      CALSTORE_OK) {
    calhost_runtime_close(&rt);
    FAIL(CALHOST_RUNTIME_STORE, "%s", why);
  }
  *out = rt;
  return CALHOST_RUNTIME_OK;
}

calhost_runtime_status calhost_runtime_open(const calhost_runtime_options *options,
                                            calhost_runtime **out, char *err, size_t err_capacity) {
  calhost_runtime_options defaults;
  if (!out)
    FAIL(CALHOST_RUNTIME_INVALID_ARGUMENT, "calhost_runtime_open: out is NULL");
  *out = NULL;
  if (!options) {
    calhost_runtime_options_init(&defaults);
    options = &defaults;
  }
  /* the fields of the first version end with config_text_length */
  if (options->struct_size < offsetof(calhost_runtime_options, config_text_length) + sizeof(size_t))
    FAIL(CALHOST_RUNTIME_INVALID_ARGUMENT,
         "calhost_runtime_open: options.struct_size %zu is too small (call "
         "calhost_runtime_options_init)",
         options->struct_size);
  /* arrays and their counts, checked before any work: a count without
   * its array, or a NULL inside it, is misuse (never dereferenced) */
  static const char *const names[2] = {"plugin_paths", "plugin_dirs"};
  const char *const *arrays[2] = {options->plugin_paths, options->plugin_dirs};
  size_t counts[2] = {options->plugin_path_count, options->plugin_dir_count};
  for (int a = 0; a < 2; a++) {
    if (counts[a] && !arrays[a])
      FAIL(CALHOST_RUNTIME_INVALID_ARGUMENT,
           "calhost_runtime_open: options.%s is NULL but its count is %zu", names[a], counts[a]);
    for (size_t i = 0; i < counts[a]; i++)
      if (!arrays[a][i])
        FAIL(CALHOST_RUNTIME_INVALID_ARGUMENT, "calhost_runtime_open: options.%s[%zu] is NULL",
             names[a], i);
  }
  if (!options->config_path && !options->config_text && options->config_text_length)
    FAIL(CALHOST_RUNTIME_INVALID_ARGUMENT,
         "calhost_runtime_open: options.config_text is NULL but config_text_length is %zu",
         options->config_text_length);
  config_settings cfg;
  char why[2048];
  if (options->config_path) {
    if (config_load(options->config_path, &cfg, why, sizeof why) != 0)
      FAIL(CALHOST_RUNTIME_CONFIG, "%s", why);
  } else if (options->config_text) {
    if (config_load_string(options->config_text, options->config_text_length, "<config_text>", &cfg,
                           why, sizeof why) != 0)
      FAIL(CALHOST_RUNTIME_CONFIG, "%s", why);
  } else if (config_defaults(&cfg) != 0) {
    FAIL(CALHOST_RUNTIME_NO_MEMORY, "out of memory");
  }
  calhost_runtime_status st = runtime_open_config(&cfg, options->store_path,
                                                  options->force_portable, out, err, err_capacity);
  if (st != CALHOST_RUNTIME_OK)
    return st;
  calhost_runtime *rt = *out;
  if (options->plugin_path_count) {
    rt->extra_paths = copy_strings(options->plugin_paths, options->plugin_path_count);
    rt->extra_path_count = rt->extra_paths ? options->plugin_path_count : 0;
  }
  if (options->plugin_dir_count) {
    rt->extra_dirs = copy_strings(options->plugin_dirs, options->plugin_dir_count);
    rt->extra_dir_count = rt->extra_dirs ? options->plugin_dir_count : 0;
  }
  if (options->struct_size >= offsetof(calhost_runtime_options, device) + sizeof options->device &&
      runtime_set_device(rt, options->device) != CALHOST_RUNTIME_OK) {
    calhost_runtime_close(out);
    FAIL(CALHOST_RUNTIME_NO_MEMORY, "out of memory");
  }
  if ((options->plugin_path_count && !rt->extra_paths) ||
      (options->plugin_dir_count && !rt->extra_dirs)) {
    calhost_runtime_close(out);
    FAIL(CALHOST_RUNTIME_NO_MEMORY, "out of memory");
  }
  return CALHOST_RUNTIME_OK;
}

void calhost_runtime_close(calhost_runtime **runtime) {
  if (!runtime || !*runtime)
    return;
  calhost_runtime *rt = *runtime;
  while (rt->plugins) {
    calhost_runtime_plugin *p = rt->plugins;
    rt->plugins = p->next;
    runtime_device_list_free(&p->devices);
    if (p->inst)
      loader_plugin_destroy(p->p, p->inst);
    loader_plugin_list_free(&p->list);
    free(p);
  }
  calstore_close(&rt->store);
  free_strings(rt->extra_paths, rt->extra_path_count);
  free_strings(rt->extra_dirs, rt->extra_dir_count);
  free(rt->device);
  runtime_models_free(rt->models);
  for (size_t i = 0; i < rt->target_cache_count; i++)
    processor_target_list_free(&rt->target_cache[i].list);
  loader_plugin_list_free(&rt->every);
  free(rt->serving);
  config_free(&rt->cfg);
  free(rt);
  *runtime = NULL;
}

calstore *calhost_runtime_store(calhost_runtime *runtime) {
  return runtime ? runtime->store : NULL;
}

int calhost_runtime_force_portable(const calhost_runtime *runtime) {
  return runtime ? runtime->force_portable : 0;
}

/* Sets the device keys are built for (the options' device; copied; NULL:
 * the first device of [plugin NAME] devices, all when absent). Returns
 * CALHOST_RUNTIME_OK or NO_MEMORY. */
static calhost_runtime_status runtime_set_device(calhost_runtime *runtime, const char *device) {
  char *copy = NULL;
  if (device) {
    copy = malloc(strlen(device) + 1);
    if (!copy)
      return CALHOST_RUNTIME_NO_MEMORY;
    strcpy(copy, device);
  }
  free(runtime->device);
  runtime->device = copy;
  return CALHOST_RUNTIME_OK;
}

const char *calhost_runtime_plugin_backend(const calhost_runtime_plugin *p) {
  return p ? p->p->backend : NULL;
}

const char *calhost_runtime_plugin_implementation(const calhost_runtime_plugin *p) {
  return p ? p->p->implementation_version : NULL;
}

int calhost_runtime_validate_policy(void *plugin, const char *policy, size_t length, char *err,
                                    size_t err_capacity) {
  calhost_runtime_plugin *p = plugin;
  if (!p || !policy) {
    if (err && err_capacity)
      snprintf(err, err_capacity, "no plugin or no policy");
    return 0;
  }
  runtime_binding_validator v = {p->p, p->inst};
  return runtime_binding_validate(&v, policy, length, err, err_capacity);
}

calhost_runtime_status calhost_runtime_load_plugin(calhost_runtime *rt, const char *backend,
                                                   const char *workload,
                                                   calhost_runtime_plugin **out, char *err,
                                                   size_t err_capacity) {
  if (!rt || !out || (!backend && !workload))
    FAIL(CALHOST_RUNTIME_INVALID_ARGUMENT,
         "calhost_runtime_load_plugin: needs a runtime, out and a backend or a workload");
  *out = NULL;
  const config_workload *w = NULL;
  if (!backend) {
    w = config_workload_named(&rt->cfg, workload);
    if (!w)
      FAIL(CALHOST_RUNTIME_NOT_FOUND, "no workload named '%s' in the configuration", workload);
  }
  for (calhost_runtime_plugin *q = rt->plugins; q; q = q->next)
    if (backend ? !strcmp(q->p->backend, backend)
                : runtime_binding_serves(q->p, w->operator_name)) {
      *out = q;
      return CALHOST_RUNTIME_OK;
    }
  calhost_runtime_plugin *rp = calloc(1, sizeof *rp);
  if (!rp)
    FAIL(CALHOST_RUNTIME_NO_MEMORY, "out of memory");
  runtime_places sp;
  int found =
      runtime_places_discover(&rt->cfg, rt->extra_dirs, rt->extra_dir_count, rt->extra_paths,
                              rt->extra_path_count, backend, &rp->list, &sp);
  if (found < 0) {
    free(rp);
    FAIL(CALHOST_RUNTIME_NO_MEMORY, "%s",
         found == RUNTIME_PLACES_NO_MEMORY ? "out of memory"
                                           : "out of memory while loading plugins");
  }
  rp->every_enabled = !backend;
  for (size_t i = 0; i < rp->list.count && !rp->p; i++) {
    loader_plugin *p = rp->list.items[i];
    if (p->loaded &&
        (backend ? !strcmp(p->backend, backend) : runtime_binding_serves(p, w->operator_name)))
      rp->p = p;
  }
  if (!rp->p) {
    runtime_places_not_found(&sp, &rp->list, backend, w ? w->operator_name : NULL, workload, err,
                             err_capacity);
    runtime_places_free(&sp);
    loader_plugin_list_free(&rp->list);
    free(rp);
    return CALHOST_RUNTIME_NOT_FOUND;
  }
  runtime_places_free(&sp);
  calhost_status cs = runtime_binding_create(&rt->cfg, rp->p, &rp->inst);
  if (cs != CALHOST_OK || !rp->inst) {
    char failure[900];
    runtime_binding_create_failure(&rt->cfg, rp->p, cs == CALHOST_OK ? CALHOST_ERROR : cs, 1,
                                   failure, sizeof failure);
    if (err && err_capacity)
      snprintf(err, err_capacity, "%s: %s", rp->p->backend, failure);
    loader_plugin_list_free(&rp->list);
    free(rp);
    return CALHOST_RUNTIME_PLUGIN;
  }
  rp->next = rt->plugins;
  rt->plugins = rp;
  *out = rp;
  return CALHOST_RUNTIME_OK;
}

calhost_runtime_status calhost_runtime_serving_backends(calhost_runtime *rt, const char *workload,
                                                        const char *const **backends, size_t *count,
                                                        char *err, size_t err_capacity) {
  if (backends)
    *backends = NULL;
  if (count)
    *count = 0;
  if (!rt || !workload || !backends || !count)
    FAIL(CALHOST_RUNTIME_INVALID_ARGUMENT,
         "calhost_runtime_serving_backends: needs a runtime, a workload, backends and count");
  const config_workload *w = config_workload_named(&rt->cfg, workload);
  if (!w)
    FAIL(CALHOST_RUNTIME_NOT_FOUND, "no workload named '%s' in the configuration", workload);
  /* every enabled plugin, in the loader's order: the discovery that loaded
   * a plugin for a workload (load_plugin with no backend) is one; else the
   * runtime makes its own, once */
  const loader_plugin_list *list = NULL;
  for (calhost_runtime_plugin *q = rt->plugins; q && !list; q = q->next)
    if (q->every_enabled)
      list = &q->list;
  if (!list && !rt->every_listed) {
    runtime_places sp;
    int found =
        runtime_places_discover(&rt->cfg, rt->extra_dirs, rt->extra_dir_count, rt->extra_paths,
                                rt->extra_path_count, NULL, &rt->every, &sp);
    if (found < 0)
      FAIL(CALHOST_RUNTIME_NO_MEMORY, "%s",
           found == RUNTIME_PLACES_NO_MEMORY ? "out of memory"
                                             : "out of memory while loading plugins");
    runtime_places_free(&sp);
    rt->every_listed = 1;
  }
  if (!list)
    list = &rt->every;
  const char **names = realloc(rt->serving, (list->count + 1) * sizeof *names);
  if (!names)
    FAIL(CALHOST_RUNTIME_NO_MEMORY, "out of memory");
  rt->serving = names;
  size_t n = 0;
  for (size_t i = 0; i < list->count; i++)
    if (list->items[i]->loaded && runtime_binding_serves(list->items[i], w->operator_name))
      names[n++] = list->items[i]->backend;
  *backends = names;
  *count = n;
  return CALHOST_RUNTIME_OK;
}

/* ---- selections ------------------------------------------------------- */

/* A selection and the strings it owns, in one allocation of its own. */
typedef struct selection_box {
  calhost_runtime_selection sel;
  char *strings[7]; /* backend, operator, implementation, digest, processor, workload, device */
  calstore_property *structure;
  size_t structure_count;
} selection_box;

void calhost_runtime_selection_free(calhost_runtime_selection **selection) {
  if (!selection || !*selection)
    return;
  selection_box *b = (selection_box *)*selection;
  calstore_lookup_result_free(&b->sel.result);
  for (size_t i = 0; i < 7; i++)
    free(b->strings[i]);
  for (size_t i = 0; i < b->structure_count; i++) {
    free((char *)b->structure[i].name);
    free((char *)b->structure[i].value);
  }
  free(b->structure);
  free(b);
  *selection = NULL;
}

static char *dup_or_null(const char *s, int *oom) {
  if (!s)
    return NULL;
  size_t n = strlen(s);
  char *d = malloc(n + 1);
  if (!d)
    *oom = 1;
  else
    memcpy(d, s, n + 1);
  return d;
}

/* The targets of thread count tc (0: every PU), described once per
 * runtime: hwloc's topology load is the costly part of building a key.
 * NULL with why when the CPU set or count is not available here. */
static const processor_target_list *runtime_targets(calhost_runtime *rt, uint32_t tc, char *why,
                                                    size_t cap) {
  for (size_t i = 0; i < rt->target_cache_count; i++)
    if (rt->target_cache[i].tc == tc)
      return &rt->target_cache[i].list;
  if (rt->target_cache_count == sizeof rt->target_cache / sizeof rt->target_cache[0]) {
    processor_target_list_free(&rt->target_cache[0].list); /* the oldest goes */
    memmove(&rt->target_cache[0], &rt->target_cache[1],
            (rt->target_cache_count - 1) * sizeof rt->target_cache[0]);
    rt->target_cache_count--;
  }
  struct target_cache_entry *e = &rt->target_cache[rt->target_cache_count];
  memset(e, 0, sizeof *e);
  if (runtime_binding_targets(&rt->cfg, &tc, 1, &e->list, why, cap) != 0)
    return NULL;
  e->tc = tc;
  rt->target_cache_count++;
  return &e->list;
}

/* The end of a use of the cached targets (the cache keeps them). */
static void targets_done(processor_target_list *t) {
  (void)t;
}

/* The device p's key is built for (*dev; NULL for a host backend): the
 * options' device, else the first of the [plugin NAME] devices selection
 * (the target calibrate built for that device). Lists p's devices once.
 * CALHOST_RUNTIME_OK, or the failure with err set. */
static calhost_runtime_status key_device(calhost_runtime *rt, calhost_runtime_plugin *p,
                                         const runtime_device **dev, char *err,
                                         size_t err_capacity) {
  char why[2048];
  *dev = NULL;
  if (runtime_devices_supported(p->p)) {
    if (!p->devices_listed) {
      if (runtime_devices_list(p->p, p->inst, &p->devices, why, sizeof why) != 0)
        FAIL(CALHOST_RUNTIME_PLUGIN, "%s: %s", p->p->backend, why);
      p->devices_listed = 1;
    }
    size_t *pos = p->devices.count ? calloc(p->devices.count, sizeof *pos) : NULL;
    size_t npos = 0;
    int named = 0; /* why names the plugin already ("[plugin NAME] devices: ...") */
    if (rt->device)
      *dev = runtime_devices_find(&p->devices, rt->device, why, sizeof why);
    else if (!p->devices.count)
      snprintf(why, sizeof why, "no device on this machine");
    else if (!pos)
      snprintf(why, sizeof why, "out of memory");
    /* no device asked for: the first that calibrate calibrates, i.e. of
     * the [plugin NAME] devices selection (all when absent) */
    else if (runtime_devices_selected(&rt->cfg, p->p->backend, &p->devices, pos, &npos, why,
                                      sizeof why) == 0)
      *dev = npos ? &p->devices.items[pos[0]] : NULL;
    else
      named = 1;
    free(pos);
    if (!*dev)
      FAIL(CALHOST_RUNTIME_TARGET, "%s%s%s", named ? "" : p->p->backend, named ? "" : ": ", why);
  } else if (rt->device) {
    FAIL(CALHOST_RUNTIME_TARGET, "%s drives no devices (it runs on the host's CPUs): no --device",
         p->p->backend);
  }
  return CALHOST_RUNTIME_OK;
}

/* A selection box holding copies of the built key's strings (valid only
 * until the plugin's next call), w's and dev's; *oom set when out of
 * memory (the box, possibly NULL, is still returned for freeing). */
static selection_box *box_key(const calhost_runtime_plugin *p, const config_workload *w,
                              const calhost_built_key *key, const runtime_device *dev, int *oom) {
  selection_box *b = calloc(1, sizeof *b);
  *oom = !b;
  if (b) {
    b->strings[0] = dup_or_null(p->p->backend, oom);
    b->strings[1] = dup_or_null(w->operator_name, oom);
    b->strings[2] = dup_or_null(p->p->implementation_version, oom);
    b->strings[3] = dup_or_null(key->model_digest, oom);
    b->strings[4] = dup_or_null(key->processor, oom);
    b->strings[5] = dup_or_null(w->name, oom);
    b->strings[6] = dup_or_null(dev ? dev->identity : NULL, oom);
    b->structure = calloc(key->structure_count, sizeof *b->structure);
    *oom |= !b->structure;
    for (size_t i = 0; !*oom && i < key->structure_count; i++) {
      b->structure[i].name = dup_or_null(key->structure[i].name, oom);
      b->structure[i].value = dup_or_null(key->structure[i].value, oom);
      b->structure_count = i + 1;
    }
  }
  return b;
}

calhost_runtime_status calhost_runtime_build_keys(calhost_runtime *rt, calhost_runtime_plugin *p,
                                                  const char *workload, uint32_t threads,
                                                  calhost_runtime_selection **out, char *err,
                                                  size_t err_capacity) {
  if (!rt || !p || !workload || !out)
    FAIL(CALHOST_RUNTIME_INVALID_ARGUMENT,
         "calhost_runtime_build_keys: needs a runtime, a plugin, a workload and out");
  *out = NULL;
  const config_workload *w = config_workload_named(&rt->cfg, workload);
  if (!w)
    FAIL(CALHOST_RUNTIME_NOT_FOUND, "no workload named '%s' in the configuration", workload);
  char why[2048];
  if (!config_workload_digest(w, why, sizeof why))
    FAIL(CALHOST_RUNTIME_MODEL, "%s", why);
  /* threads: 0 the configured first count; MAX every PU (0 to the processor part) */
  uint32_t tc = threads == 0 ? (rt->cfg.thread_count_count ? rt->cfg.thread_counts[0] : 1)
                : threads == CALHOST_RUNTIME_THREADS_MAX ? 0
                                                         : threads;
  /* the processor described once per runtime and thread count (a model's
   * nodes build their keys one after another): the cache owns the list */
  const processor_target_list *cached = runtime_targets(rt, tc, why, sizeof why);
  if (!cached)
    FAIL(CALHOST_RUNTIME_TARGET, "%s", why);
  processor_target_list targets = *cached;
  calhost_workload wl;
  calhost_target tg;
  calhost_built_key key;
  runtime_binding_workload(w, &wl);
  /* a device backend: the options' device, else its first listed one (the
   * target calibrate built for that device) */
  const runtime_device *dev = NULL;
  calhost_runtime_status dst = key_device(rt, p, &dev, err, err_capacity);
  if (dst != CALHOST_RUNTIME_OK) {
    targets_done(&targets);
    return dst;
  }
  if (dev)
    runtime_binding_device_target(&targets, 0, dev->identity, dev->index, &tg);
  else
    runtime_binding_target(&targets, 0, &tg);
  /* the binding's one way to build and judge a key (calibrate's child
   * also checks that a second call agrees) */
  calhost_status cs;
  runtime_binding_key_defect d =
      runtime_binding_build_key(p->p, p->inst, &wl, &tg, 0, &key, &cs, why, sizeof why);
  if (d == RUNTIME_BINDING_KEY_UNSUPPORTED || d == RUNTIME_BINDING_KEY_BUILD_FAILED) {
    if (err && err_capacity)
      snprintf(err, err_capacity, "%s: build_key failed for workload '%s': %s%s%s", p->p->backend,
               workload, calhost_status_name(cs), why[0] ? ": " : "", why);
    targets_done(&targets);
    return d == RUNTIME_BINDING_KEY_UNSUPPORTED ? CALHOST_RUNTIME_UNSUPPORTED
                                                : CALHOST_RUNTIME_PLUGIN;
  }
  if (d != RUNTIME_BINDING_KEY_USABLE) {
    if (err && err_capacity)
      snprintf(err, err_capacity, "%s: workload '%s': %s", p->p->backend, workload, why);
    targets_done(&targets);
    return CALHOST_RUNTIME_PLUGIN;
  }
  /* Copy the key (valid only until the plugin's next call) into the
   * selection, then make the store keys of it (binding: the conversion
   * calibrate uses). */
  int oom = 0;
  selection_box *b = box_key(p, w, &key, dev, &oom);
  uint32_t target_threads = tg.thread_count;
  targets_done(&targets);
  if (oom) {
    calhost_runtime_selection *tmp = b ? &b->sel : NULL;
    calhost_runtime_selection_free(&tmp);
    FAIL(CALHOST_RUNTIME_NO_MEMORY, "out of memory");
  }
  calhost_runtime_selection *s = &b->sel;
  s->exact = (calstore_key){CALSTORE_KEY_EXACT, b->strings[0], b->strings[1],
                            b->strings[2],      b->strings[3], b->strings[4],
                            key.thread_count,   NULL,          0};
  s->portable = (calstore_key){
      CALSTORE_KEY_PORTABLE, b->strings[0],     b->strings[1], b->strings[2], NULL, NULL, 0,
      b->structure,          b->structure_count};
  s->workload = b->strings[5];
  s->device_identity = b->strings[6];
  s->device_index = dev ? dev->index : 0;
  s->target_threads = target_threads;
  s->force_portable = rt->force_portable;
  s->status = CALSTORE_NOT_FOUND;
  *out = s;
  return CALHOST_RUNTIME_OK;
}

calhost_runtime_status calhost_runtime_select(calhost_runtime *rt, calhost_runtime_plugin *p,
                                              const char *workload, uint32_t threads,
                                              calhost_runtime_selection **out, char *err,
                                              size_t err_capacity) {
  calhost_runtime_status st =
      calhost_runtime_build_keys(rt, p, workload, threads, out, err, err_capacity);
  if (st != CALHOST_RUNTIME_OK)
    return st;
  calhost_runtime_selection *s = *out;
  calstore_lookup_options lo =
      runtime_binding_lookup_options(&s->exact, &s->portable, s->force_portable);
  runtime_binding_validator v = {p->p, p->inst};
  calstore_error se = {0};
  s->status = calstore_lookup(rt->store, &lo, runtime_binding_validate, &v, &s->result, &se);
  if (!s->result) {
    char why[4600];
    runtime_binding_store_error(why, sizeof why, s->status, &se, calstore_path(rt->store));
    calhost_runtime_selection_free(out);
    FAIL(CALHOST_RUNTIME_STORE, "lookup: %s", why);
  }
  return CALHOST_RUNTIME_OK;
}

/* ---- models (since 0.3) ------------------------------------------------- */

/* A model added to the runtime: the public view and what it points into. */
struct runtime_model {
  calhost_runtime_model pub;
  char *path, *name, *digest, *dims; /* dims: the given binding, canonical */
  char *binding, *unbound, *key_digest;
  calhost_runtime_model_node *nodes;
  char **strings; /* every node's name, operator and workload */
  size_t string_count;
  struct runtime_model *next;
};

static void runtime_models_free(struct runtime_model *m) {
  while (m) {
    struct runtime_model *next = m->next;
    for (size_t i = 0; i < m->string_count; i++)
      free(m->strings[i]);
    free(m->strings);
    free(m->nodes);
    free(m->path), free(m->name), free(m->digest), free(m->dims);
    free(m->binding), free(m->unbound), free(m->key_digest);
    free(m);
    m = next;
  }
}

static const char *model_keep(struct runtime_model *m, const char *s) {
  char *copy = base_str_dup(s);
  if (copy)
    m->strings[m->string_count++] = copy;
  return copy;
}

static int model_name_taken(const calhost_runtime *rt, const char *name) {
  for (const struct runtime_model *m = rt->models; m; m = m->next)
    if (!strcmp(m->name, name))
      return 1;
  return 0;
}

static int model_name_valid(const char *s) {
  if (!*s)
    return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          *s == '_' || *s == '.' || *s == '-'))
      return 0;
  return 1;
}

void calhost_runtime_model_options_init(calhost_runtime_model_options *options) {
  if (!options)
    return;
  memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
}

calhost_runtime_status calhost_runtime_add_model(calhost_runtime *runtime, const char *path,
                                                 const char *dims,
                                                 const calhost_runtime_model **out, char *err,
                                                 size_t err_capacity) {
  calhost_runtime_model_options o;
  calhost_runtime_model_options_init(&o);
  o.path = path;
  o.dims = dims;
  return calhost_runtime_add_model_with(runtime, &o, out, err, err_capacity);
}

calhost_runtime_status calhost_runtime_add_model_with(calhost_runtime *runtime,
                                                      const calhost_runtime_model_options *o,
                                                      const calhost_runtime_model **out, char *err,
                                                      size_t err_capacity) {
  if (out)
    *out = NULL;
  if (!runtime || !o || !o->path || !out)
    FAIL(CALHOST_RUNTIME_INVALID_ARGUMENT, "calhost_runtime_add_model: NULL argument");
  if (o->struct_size < offsetof(calhost_runtime_model_options, name) + sizeof o->name ||
      o->struct_size > 4096)
    FAIL(CALHOST_RUNTIME_INVALID_ARGUMENT,
         "calhost_runtime_add_model_with: bad struct_size %zu (call "
         "calhost_runtime_model_options_init)",
         o->struct_size);
  const char *path = o->path, *given = o->name;
  if (given && !model_name_valid(given))
    FAIL(CALHOST_RUNTIME_INVALID_ARGUMENT,
         "%s: bad model name '%s' (letters, digits, '_', '.', '-')", path, given);
  char why[1400], name[256], wname[1024], canon[1024];
  config_dim *d = NULL;
  size_t nd = 0;
  if (config_value_dims(o->dims, &d, &nd, why, sizeof why) != 0)
    FAIL(CALHOST_RUNTIME_INVALID_ARGUMENT, "%s: bad dims '%s': %s", path, o->dims, why);
  config_dims_canonical(d, nd, canon, sizeof canon);
  /* a file and a binding are one model */
  for (struct runtime_model *m = runtime->models; m; m = m->next)
    if (!strcmp(m->path, path) && !strcmp(m->dims, canon) && (!given || !strcmp(m->name, given))) {
      config_dims_free(d, nd);
      *out = &m->pub;
      return CALHOST_RUNTIME_OK;
    }
  if (given && model_name_taken(runtime, given)) {
    config_dims_free(d, nd);
    FAIL(CALHOST_RUNTIME_INVALID_ARGUMENT, "%s: another model named %s was added", path, given);
  }
  model_info mi;
  int rc = model_read(path, d, nd, &mi, why, sizeof why);
  config_dims_free(d, nd);
  if (rc != 0)
    FAIL(CALHOST_RUNTIME_MODEL, "%s", why);
  if (given) {
    snprintf(name, sizeof name, "%s", given);
  } else {
    char base[200];
    model_name_of_file(path, base, sizeof base);
    snprintf(name, sizeof name, "%s", base);
    for (unsigned k = 2; model_name_taken(runtime, name); k++)
      snprintf(name, sizeof name, "%s-%u", base, k);
  }
  struct runtime_model *m = calloc(1, sizeof *m);
  int ok = m != NULL;
  if (ok) {
    m->path = base_str_dup(path);
    m->name = base_str_dup(name);
    m->digest = base_str_dup(mi.digest);
    m->dims = base_str_dup(canon);
    m->binding = base_str_dup(mi.binding);
    m->unbound = base_str_dup(mi.unbound);
    m->key_digest = base_str_dup(mi.key_digest);
    m->nodes = calloc(mi.node_count + 1, sizeof *m->nodes);
    m->strings = calloc(3 * mi.node_count + 1, sizeof *m->strings);
    ok = m->path && m->name && m->digest && m->dims && m->binding && m->unbound && m->key_digest &&
         m->nodes && m->strings;
  }
  for (size_t i = 0; ok && i < mi.node_count; i++) {
    model_workload_name(&mi, i, name, wname, sizeof wname);
    calhost_runtime_model_node *n = &m->nodes[i];
    n->name = model_keep(m, mi.nodes[i].name);
    n->onnx_operator = model_keep(m, mi.nodes[i].onnx_operator);
    n->workload = model_keep(m, wname);
    n->model_keyed = model_node_is_representative(&mi, i);
    ok = n->name && n->onnx_operator && n->workload;
  }
  if (ok && model_workloads_add(&runtime->cfg, &mi, name, (config_origin){NULL, 0}, why,
                                sizeof why) < 0) {
    model_info_free(&mi);
    runtime_models_free(m);
    FAIL(strstr(why, "memory") ? CALHOST_RUNTIME_NO_MEMORY : CALHOST_RUNTIME_INVALID_ARGUMENT,
         "%s: %s", path, why);
  }
  if (!ok) {
    model_info_free(&mi);
    runtime_models_free(m);
    FAIL(CALHOST_RUNTIME_NO_MEMORY, "out of memory");
  }
  m->pub =
      (calhost_runtime_model){m->path,          m->name,    m->digest,  m->nodes,     mi.node_count,
                              mi.skipped_count, m->binding, m->unbound, m->key_digest};
  model_info_free(&mi);
  m->next = runtime->models;
  runtime->models = m;
  *out = &m->pub;
  return CALHOST_RUNTIME_OK;
}

/* ---- for calhost model bench (race.h) ------------------------------------ */

int runtime_plugin_parts(calhost_runtime_plugin *p, const calhost_plugin_vtable **vtable,
                         uint32_t *abi_version, calhost_plugin_instance **instance) {
  if (!p || !p->p || !p->inst)
    return -1;
  *vtable = &p->p->vtable;
  *abi_version = p->p->abi_version;
  *instance = p->inst;
  return runtime_devices_supported(p->p) ? 1 : 0;
}
