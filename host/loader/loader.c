/*
 * loader.c: discovery and loading of plugins (loader.h). Gathers candidate
 * files (explicit paths, CALHOST_PLUGIN_PATH, configured directories, the
 * build tree's or installation's lib/calhost/plugins), checks each file's
 * owner and mode, probes it in a forked child (probe.c), rejects disabled
 * backends and duplicates, and loads the survivors into the host.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/array.h"
#include "base/paths.h"
#include "base/str.h"
#include "base/words.h"
#include "loader.h"
#include "module.h"
#ifndef _WIN32
#include "isolate/isolate.h"
#include "probe.h"
#endif

#ifndef CALHOST_INSTALLED_PLUGIN_DIR
#define CALHOST_INSTALLED_PLUGIN_DIR "/usr/local/lib/calhost/plugins"
#endif
#ifndef CALHOST_RELATIVE_PLUGIN_DIR
#define CALHOST_RELATIVE_PLUGIN_DIR "lib/calhost/plugins"
#endif

/* Windows: no probing in a child (isolation needs fork); the identity of
 * a plugin comes from its in-process load, as with probe == 0. */
#ifdef _WIN32
#define LOADER_NO_PROBE 1
#else
#define LOADER_NO_PROBE 0
#endif

#if defined(_WIN32)
#define secure_getenv getenv /* no set-id programs on Windows */
#elif !defined(__GLIBC__)
/* secure_getenv for the BSDs and macOS: no environment under set-id. */
static char *secure_getenv(const char *name) {
  return issetugid() ? NULL : getenv(name);
}
#endif

void loader_options_init(loader_options *o) {
  memset(o, 0, sizeof *o);
  o->use_environment = 1;
  o->use_default_dirs = 1;
  o->probe = 1;
  o->probe_timeout_seconds = 10.0;
  o->load = 1;
  o->host_abi_min = CALHOST_ABI_VERSION_MIN;
  o->host_abi_max = CALHOST_ABI_VERSION;
  o->services.min_log_level = loader_log_level_default();
}

/* ---- small helpers ---- */

static void warn(const loader_services_hooks *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void warn(const loader_services_hooks *h, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (h && h->log)
    h->log(h->user, NULL, CALHOST_LOG_WARNING, msg);
  else if (!h || h->min_log_level <= CALHOST_LOG_WARNING)
    fprintf(stderr, "calhost: warning: %s\n", msg);
}

/* A growable list of candidate paths with their origin. */
typedef struct cand {
  char *path;
  loader_plugin_origin origin;
} cand;
typedef struct cands {
  cand *v;
  size_t n, cap;
} cands;

static int cands_add(cands *c, const char *path, loader_plugin_origin origin) {
  cand *v = base_array_grow(c->v, c->n, &c->cap, sizeof *v, 16);
  if (!v)
    return -1;
  c->v = v;
  if (!(c->v[c->n].path = strdup(path)))
    return -1;
  c->v[c->n++].origin = origin;
  return 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int has_suffix(const char *name, const char *suffix) {
  size_t n = strlen(name), s = strlen(suffix);
  return n > s && !strcmp(name + n - s, suffix);
}

/* Adds the plugin files of a directory, sorted by name. quiet: a missing
 * directory is not worth a warning (default directories). */
static int scan_dir(cands *c, const char *dir, loader_plugin_origin origin, int quiet,
                    const loader_services_hooks *hooks) {
  char **names = NULL;
  size_t n = 0;
  int rc = 0;
  if (loader_module_dir_names(dir, &names, &n) != 0) {
    if (errno == ENOMEM)
      return -1;
    if (!quiet)
      warn(hooks, "plugin directory %s: %s", dir, strerror(errno));
    return 0;
  }
  if (n) /* an empty directory may give no array: qsort(NULL, 0) is undefined */
    qsort(names, n, sizeof *names, cmp_str);
  for (size_t i = 0; i < n; i++) {
    if (rc == 0 && names[i][0] != '.' && has_suffix(names[i], loader_module_suffix())) {
      char *p = base_str_format("%s/%s", dir, names[i]);
      if (!p || cands_add(c, p, origin) != 0)
        rc = -1;
      free(p);
    }
    free(names[i]);
  }
  free(names);
  return rc;
}

/* Adds a directory's plugins, or the file itself when path is a file. */
static int add_entry(cands *c, const char *path, loader_plugin_origin origin,
                     const loader_services_hooks *hooks) {
  if (!*path)
    return 0;
  if (loader_module_is_dir(path))
    return scan_dir(c, path, origin, 0, hooks);
  char *real = loader_module_real_path(path);
  int missing = !real;
  free(real);
  if (missing && !has_suffix(path, loader_module_suffix())) {
    warn(hooks, "plugin directory %s: %s", path, strerror(errno)); /* a missing directory */
    return 0;
  }
  return cands_add(c, path, origin); /* a file, listed even when missing: the user named it */
}

void loader_default_dirs(loader_default_dir dirs[LOADER_DEFAULT_DIR_COUNT]) {
  char exe[PATH_MAX];
  char *up = base_exe_dir(exe, sizeof exe) == 0 ? base_str_format("%s/..", exe) : NULL;
  char *real = up ? loader_module_real_path(up) : NULL;
  const char *prefix = real ? real : up;
  dirs[0].path = prefix ? base_str_format("%s/lib/calhost/plugins", prefix) : NULL;
  dirs[1].path = prefix ? base_str_format("%s/%s", prefix, CALHOST_RELATIVE_PLUGIN_DIR) : NULL;
  dirs[2].path = base_str_dup(CALHOST_INSTALLED_PLUGIN_DIR);
  dirs[0].what = dirs[1].what = "the program's prefix";
  dirs[2].what = "the build's install prefix";
  free(real);
  free(up);
}

void loader_default_dirs_free(loader_default_dir dirs[LOADER_DEFAULT_DIR_COUNT]) {
  for (int i = 0; i < LOADER_DEFAULT_DIR_COUNT; i++) {
    free(dirs[i].path);
    dirs[i].path = NULL;
  }
}

static int gather(const loader_options *o, cands *c, const loader_services_hooks *hooks) {
  for (size_t i = 0; i < o->explicit_path_count; i++)
    if (cands_add(c, o->explicit_paths[i], CALHOST_ORIGIN_EXPLICIT) != 0)
      return -1;
  if (o->use_environment) {
    const char *env = secure_getenv("CALHOST_PLUGIN_PATH");
    if (env && *env) {
      char *copy = strdup(env), *save = NULL;
      if (!copy)
        return -1;
      for (char *t = strtok_r(copy, LOADER_MODULE_PATH_LIST_SEPARATOR, &save); t;
           t = strtok_r(NULL, LOADER_MODULE_PATH_LIST_SEPARATOR, &save))
        if (add_entry(c, t, CALHOST_ORIGIN_ENVIRONMENT, hooks) != 0) {
          free(copy);
          return -1;
        }
      free(copy);
    }
  }
  for (size_t i = 0; i < o->config_dir_count; i++)
    if (add_entry(c, o->config_dirs[i], CALHOST_ORIGIN_CONFIG, hooks) != 0)
      return -1;
  if (o->use_default_dirs) {
    loader_default_dir defaults[LOADER_DEFAULT_DIR_COUNT];
    loader_default_dirs(defaults);
    char *seen[LOADER_DEFAULT_DIR_COUNT] = {NULL};
    int rc = 0;
    for (int i = 0; i < LOADER_DEFAULT_DIR_COUNT && rc == 0; i++) {
      char *real = defaults[i].path ? loader_module_real_path(defaults[i].path) : NULL;
      int dup = !real;
      for (int j = 0; j < i && !dup; j++)
        dup = seen[j] && !strcmp(seen[j], real);
      seen[i] = real;
      if (!dup)
        rc = scan_dir(c, real, CALHOST_ORIGIN_DEFAULT, 1, hooks);
    }
    for (int i = 0; i < LOADER_DEFAULT_DIR_COUNT; i++)
      free(seen[i]);
    loader_default_dirs_free(defaults);
    if (rc != 0)
      return -1;
  }
  return 0;
}

/* ---- records ---- */

const char *loader_plugin_state_name(loader_plugin_state state) {
  static const char *const words[] = {
      [CALHOST_PLUGIN_FOUND] = "found",         [CALHOST_PLUGIN_LOADED] = "loaded",
      [CALHOST_PLUGIN_UNSAFE] = "unsafe",       [CALHOST_PLUGIN_UNLOADABLE] = "unloadable",
      [CALHOST_PLUGIN_DUPLICATE] = "duplicate", [CALHOST_PLUGIN_DISABLED] = "disabled"};
  return BASE_WORD(words, CALHOST_PLUGIN_DISABLED, state, "unknown");
}

/* Sets the record's state and the reason beside it (NULL: none). */
static void set_state(loader_plugin *p, loader_plugin_state state, const char *reason) {
  p->state = state;
  free(p->reason);
  p->reason = base_str_dup(reason);
}

static int set_identity(loader_plugin *p, const char *backend, const char *impl, const char *desc,
                        const char *const *ops, size_t op_count) {
  free(p->backend);
  free(p->implementation_version);
  free(p->description);
  for (size_t i = 0; i < p->operator_count; i++)
    free(p->operators[i]);
  free(p->operators);
  p->operators = NULL;
  p->operator_count = 0;
  p->backend = base_str_dup(backend);
  p->implementation_version = base_str_dup(impl);
  p->description = base_str_dup(desc);
  if (op_count) {
    p->operators = calloc(op_count, sizeof *p->operators);
    if (!p->operators)
      return -1;
    for (size_t i = 0; i < op_count; i++)
      if (!(p->operators[p->operator_count++] = strdup(ops[i])))
        return -1;
  }
  p->services_ctx.backend = p->backend;
  return 0;
}

/* dlopen + negotiate in this process; fills the record. */
static void load_in_process(const loader_options *o, loader_plugin *p) {
  char err[1024];
  uint32_t chosen, pmin, pmax;
  loader_call c; /* the plugin's constructors and its entry point run here */
  loader_call_begin(&c, p, "loading");
  p->module = loader_module_open(p->path, err, sizeof err);
  if (!p->module) {
    loader_call_end(&c);
    char *r = base_str_format("cannot load: %s", err);
    set_state(p, CALHOST_PLUGIN_UNLOADABLE, r ? r : err);
    free(r);
    return;
  }
  if (loader_negotiate(p->module, o->host_abi_min, o->host_abi_max, &p->services, &p->vtable,
                       &chosen, &pmin, &pmax, err, sizeof err) != 0) {
    loader_call_end(&c);
    p->plugin_abi_min = pmin;
    p->plugin_abi_max = pmax;
    set_state(p, CALHOST_PLUGIN_UNLOADABLE, err);
    memset(&p->vtable, 0, sizeof p->vtable);
    loader_module_close(&p->module);
    return;
  }
  loader_call_end(&c);
  p->abi_version = chosen;
  p->plugin_abi_min = pmin;
  p->plugin_abi_max = pmax;
  if (!p->backend) { /* not probed: identity from the vtable */
    size_t n = 0;
    while (p->vtable.operators[n])
      n++;
    set_identity(p, p->vtable.backend_name, p->vtable.implementation_version, p->vtable.description,
                 p->vtable.operators, n);
  } else if (strcmp(p->backend, p->vtable.backend_name) != 0) {
    set_state(p, CALHOST_PLUGIN_UNLOADABLE,
              "the plugin changed its backend name between probe and load");
    memset(&p->vtable, 0, sizeof p->vtable);
    loader_module_close(&p->module);
    return;
  }
  set_state(p, CALHOST_PLUGIN_LOADED, NULL);
  p->loaded = 1;
}

/* Checks, probes (identity) but does not load; returns the record. */
static loader_plugin *examine(const loader_options *o, const loader_services_hooks *hooks,
                              const char *path, loader_plugin_origin origin) {
  loader_plugin *p = calloc(1, sizeof *p);
  char err[1024];
  if (!p)
    return NULL;
  p->origin = origin;
  {
    char *real = loader_module_real_path(path);
    /* a missing file: its absolute name is what the messages give */
    p->path = real ? real : loader_module_absolute_path(path);
  }
  if (!p->path) {
    free(p);
    return NULL;
  }
  p->hooks = hooks ? *hooks : o->services;
  loader_services_init(&p->services, &p->services_ctx, &p->hooks, NULL);
  int checked = loader_check_path(p->path, err, sizeof err);
  if (checked != 0) {
    /* "unsafe" only for a refusal; a file that could not be checked (EMFILE,
     * ENOENT...) says what went wrong and is not loaded either. */
    char *r = base_str_format(checked == -1 ? "unsafe: %s" : "cannot check: %s", err);
    set_state(p, checked == -1 ? CALHOST_PLUGIN_UNSAFE : CALHOST_PLUGIN_UNLOADABLE, r ? r : err);
    free(r);
    return p;
  }
#ifndef _WIN32
  if (o->probe) { /* never on Windows: LOADER_NO_PROBE */
    loader_probe_result r;
    loader_probe(p->path, o->host_abi_min, o->host_abi_max, o->probe_timeout_seconds, hooks, &r);
    p->abi_version = r.chosen;
    p->plugin_abi_min = r.plugin_min;
    p->plugin_abi_max = r.plugin_max;
    if (r.ok)
      set_identity(p, r.backend, r.implementation_version, r.description,
                   (const char *const *)r.operators, r.operator_count);
    else
      set_state(p, CALHOST_PLUGIN_UNLOADABLE, r.reason[0] ? r.reason : "probe failed");
    loader_probe_result_free(&r);
  }
#endif
  return p;
}

loader_plugin *loader_open(const loader_options *o, const loader_services_hooks *hooks,
                           const char *path) {
  loader_plugin *p = examine(o, hooks, path, CALHOST_ORIGIN_EXPLICIT);
  if (p && !p->reason && o->load)
    load_in_process(o, p);
  return p;
}

/* Whether the enabled/disabled filters allow the backend a file is named
 * after (its base name less the module suffix; filter_by_file_name). */
static int name_allowed(const loader_options *o, const char *path) {
  if (!o->enabled_count && !o->disabled_count)
    return 1;
  const char *base = strrchr(path, '/');
#ifdef _WIN32
  const char *bs = strrchr(path, '\\');
  if (bs && (!base || bs > base))
    base = bs;
#endif
  base = base ? base + 1 : path;
  char name[256];
  size_t n = strlen(base), s = strlen(loader_module_suffix());
  if (n <= s || n - s >= sizeof name)
    return 1; /* not a name to go by: load it and filter by its backend */
  memcpy(name, base, n - s);
  name[n - s] = '\0';
  return base_str_allowed(o->enabled, o->enabled_count, o->disabled, o->disabled_count, name);
}

int loader_discover(const loader_options *o, loader_plugin_list *out) {
  cands c = {0};
  int good = 0;
  memset(out, 0, sizeof *out);
  out->hooks = o->services;
  if (gather(o, &c, &out->hooks) != 0)
    goto fail;
  out->items = calloc(c.n ? c.n : 1, sizeof *out->items);
  if (!out->items)
    goto fail;
  for (size_t i = 0; i < c.n; i++) {
    loader_plugin *p;
    char *real = loader_module_real_path(c.v[i].path);
    int seen = 0;
    for (size_t j = 0; j < out->count && real && !seen; j++)
      seen = !strcmp(out->items[j]->path, real);
    free(real);
    if (seen)
      continue; /* the same file through two routes: list it once */
    if (o->filter_by_file_name && c.v[i].origin != CALHOST_ORIGIN_EXPLICIT &&
        !name_allowed(o, c.v[i].path)) {
      if (!(p = calloc(1, sizeof *p)))
        goto fail;
      if (!(p->path = loader_module_real_path(c.v[i].path)) &&
          !(p->path = loader_module_absolute_path(c.v[i].path))) {
        free(p);
        goto fail;
      }
      p->origin = c.v[i].origin;
      p->hooks = out->hooks;
      loader_services_init(&p->services, &p->services_ctx, &p->hooks, NULL);
      set_state(p, CALHOST_PLUGIN_DISABLED,
                "disabled by configuration (by its file name; not loaded)");
      out->items[out->count++] = p;
      continue;
    }
    p = examine(o, &out->hooks, c.v[i].path, c.v[i].origin);
    if (!p)
      goto fail;
    out->items[out->count++] = p;
    if (p->reason || !p->backend) {
      if ((!o->probe || LOADER_NO_PROBE) && !p->reason && o->load)
        load_in_process(o, p); /* identity comes from the load */
      if (!p->backend)
        continue;
    }
    if (p->reason)
      continue;
    for (size_t j = 0; j + 1 < out->count; j++) {
      loader_plugin *q = out->items[j];
      if (q->backend && !strcmp(q->backend, p->backend) &&
          (!q->reason || q->state == CALHOST_PLUGIN_DISABLED)) {
        char *r = base_str_format("duplicate backend '%s': already provided by %s (this file: %s)",
                                  p->backend, q->path, p->path);
        set_state(p, CALHOST_PLUGIN_DUPLICATE, r ? r : "duplicate backend");
        free(r);
        if (p->loaded)
          loader_unload(p);
        break;
      }
    }
    if (p->reason)
      continue;
    if (!base_str_allowed(o->enabled, o->enabled_count, o->disabled, o->disabled_count,
                          p->backend)) {
      set_state(p, CALHOST_PLUGIN_DISABLED, "disabled by configuration");
      if (p->loaded)
        loader_unload(p);
      continue;
    }
    if (o->load && !p->loaded)
      load_in_process(o, p);
    if (!p->reason)
      good++;
  }
  for (size_t i = 0; i < c.n; i++)
    free(c.v[i].path);
  free(c.v);
  return good;
fail:
  for (size_t i = 0; i < c.n; i++)
    free(c.v[i].path);
  free(c.v);
  loader_plugin_list_free(out);
  return -1;
}

void loader_unload(loader_plugin *p) {
  if (!p)
    return;
  if (p->module) { /* the plugin's destructors run here */
    loader_call c;
    loader_call_begin(&c, p, "unloading");
    loader_module_close(&p->module);
    loader_call_end(&c);
  }
  memset(&p->vtable, 0, sizeof p->vtable);
  p->loaded = 0;
  if (p->state == CALHOST_PLUGIN_LOADED)
    p->state = CALHOST_PLUGIN_FOUND;
}

void loader_plugin_free(loader_plugin *p) {
  if (!p)
    return;
  loader_unload(p);
  set_identity(p, NULL, NULL, NULL, NULL, 0);
  free(p->path);
  free(p->reason);
  free(p);
}

void loader_plugin_list_free(loader_plugin_list *list) {
  if (!list)
    return;
  for (size_t i = 0; i < list->count; i++)
    loader_plugin_free(list->items[i]);
  free(list->items);
  memset(list, 0, sizeof *list);
}

loader_plugin *loader_plugin_list_find(const loader_plugin_list *list, const char *backend) {
  for (size_t i = 0; list && i < list->count; i++) {
    loader_plugin *p = list->items[i];
    if (p->backend && !p->reason && !strcmp(p->backend, backend))
      return p;
  }
  return NULL;
}

const char *loader_plugin_take_error(loader_plugin *p) {
  return p ? loader_services_take_error(&p->services_ctx) : NULL;
}
