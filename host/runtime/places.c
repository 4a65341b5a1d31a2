/*
 * places.c: where the deployment runtime searches plugins (runtime.h:
 * the configuration's and the options' directories and files, the shared
 * library's own prefix, then the loader's places) and the messages that
 * name them when a plugin is not found. runtime.c loads and keeps what
 * is found.
 */
#define _GNU_SOURCE /* dladdr, secure_getenv */
#include "places.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/str.h"
#include "binding.h"
#include "loader/module.h"

/* The plugin directory of the prefix the shared library was loaded from:
 * <directory of libcalhost_runtime.so>/calhost/plugins (the file found with
 * dladdr on an object inside the library, then made canonical), malloc'd.
 * NULL in the static library and the host's own copy of the runtime (the
 * program's directory stands for the prefix there: the loader's default)
 * or when dladdr cannot tell. */
static char *library_plugin_dir(void) {
#if defined(CALHOST_RUNTIME_BUILDING_DLL)
  static const char anchor = 0;
  Dl_info info;
  if (!dladdr(&anchor, &info) || !info.dli_fname || !strchr(info.dli_fname, '/'))
    return NULL;
  char *real = realpath(info.dli_fname, NULL);
  const char *file = real ? real : info.dli_fname;
  const char *slash = strrchr(file, '/');
  char *dir = base_str_format("%.*s/calhost/plugins", (int)(slash - file), file);
  free(real);
  return dir;
#else
  return NULL;
#endif
}

static int is_dir(const char *path) {
  struct stat st;
  return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Appends printf-style text to buf (capacity cap, *used so far), silently
 * truncated. */
static void append(char *buf, size_t cap, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t cap, size_t *used, const char *fmt, ...) {
  if (!buf || *used + 1 >= cap)
    return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf + *used, cap - *used, fmt, ap);
  va_end(ap);
  if (n > 0)
    *used = *used + (size_t)n < cap ? *used + (size_t)n : cap - 1;
}

/* The directories already named in a message (canonical where they exist),
 * so a directory reached twice (the build tree: the library's and the
 * program's) is named once. */
typedef struct dir_seen {
  char *v[64];
  size_t n;
} dir_seen;

/* One searched directory for a message: its canonical path (as given when
 * it does not exist, then marked missing) and what it is (NULL: nothing
 * to say). */
static void append_dir(char *buf, size_t cap, size_t *used, dir_seen *seen, const char *dir,
                       const char *what) {
  char *real = realpath(dir, NULL);
  const char *name = real ? real : dir;
  for (size_t i = 0; i < seen->n; i++)
    if (!strcmp(seen->v[i], name)) {
      free(real);
      return;
    }
  int missing = !is_dir(dir);
  append(buf, cap, used, "%s%s", *used ? "; " : "", name);
  if (what || missing)
    append(buf, cap, used, " (%s%s%s)", what ? what : "", what && missing ? ", " : "",
           missing ? "missing" : "");
  if (seen->n < sizeof seen->v / sizeof seen->v[0] && (seen->v[seen->n] = base_str_dup(name)))
    seen->n++;
  free(real);
}

/* The places load_plugin searched, in the loader's order (runtime.h):
 * plugin files, CALHOST_PLUGIN_PATH, the directories given (the
 * configuration's, the options', then the library's own), the program's
 * prefix and the build's install prefix. */
static void describe_search(char *buf, size_t cap, const char *const *paths, size_t np,
                            const char *const *dirs, size_t nd, const char *library_dir) {
  size_t used = 0;
  dir_seen seen = {.n = 0};
  buf[0] = '\0';
  for (size_t i = 0; i < np; i++)
    append(buf, cap, &used, "%sfile %s", used ? "; " : "", paths[i]);
  const char *env = secure_getenv("CALHOST_PLUGIN_PATH");
  if (env && *env)
    append(buf, cap, &used, "%sCALHOST_PLUGIN_PATH=%s", used ? "; " : "", env);
  for (size_t i = 0; i < nd; i++)
    append_dir(buf, cap, &used, &seen, dirs[i],
               dirs[i] == library_dir ? "libcalhost_runtime's prefix" : NULL);
  if (library_dir && !is_dir(library_dir))
    append_dir(buf, cap, &used, &seen, library_dir, "libcalhost_runtime's prefix");
  loader_default_dir defaults[LOADER_DEFAULT_DIR_COUNT]; /* the loader's own list */
  loader_default_dirs(defaults);
  for (int i = 0; i < LOADER_DEFAULT_DIR_COUNT; i++)
    if (defaults[i].path)
      append_dir(buf, cap, &used, &seen, defaults[i].path, defaults[i].what);
  loader_default_dirs_free(defaults);
  for (size_t i = 0; i < seen.n; i++)
    free(seen.v[i]);
}

void runtime_places_free(runtime_places *sp) {
  free(sp->dirs);
  free(sp->paths);
  free(sp->library_dir);
  memset(sp, 0, sizeof *sp);
}

int runtime_places_discover(const config_settings *cfg, char *const *extra_dirs,
                            size_t extra_dir_count, char *const *extra_paths,
                            size_t extra_path_count, const char *backend, loader_plugin_list *list,
                            runtime_places *sp) {
  memset(sp, 0, sizeof *sp);
  memset(list, 0, sizeof *list);
  sp->library_dir = library_plugin_dir();
  sp->dirs = calloc(cfg->plugin_dir_count + extra_dir_count + 2, sizeof *sp->dirs);
  sp->paths = calloc(cfg->plugin_path_count + extra_path_count + 1, sizeof *sp->paths);
  if (!sp->dirs || !sp->paths) {
    runtime_places_free(sp);
    return RUNTIME_PLACES_NO_MEMORY;
  }
  for (size_t i = 0; i < cfg->plugin_dir_count; i++)
    sp->dirs[sp->nd++] = cfg->plugin_dirs[i];
  for (size_t i = 0; i < extra_dir_count; i++)
    sp->dirs[sp->nd++] = extra_dirs[i];
  if (is_dir(sp->library_dir))
    sp->dirs[sp->nd++] = sp->library_dir;
  for (size_t i = 0; i < cfg->plugin_path_count; i++)
    sp->paths[sp->np++] = cfg->plugin_paths[i];
  for (size_t i = 0; i < extra_path_count; i++)
    sp->paths[sp->np++] = extra_paths[i];
  loader_options lo;
  loader_options_init(&lo);
  runtime_binding_loader_options(cfg, &lo);
  /* no probe child: the runtime lives in its program's threads, where fork
   * is unsafe (runtime.h, "Processes and threads"); each file is checked,
   * then loaded and negotiated in the calling thread */
  lo.probe = 0;
  /* ... and a file of a directory named after a backend the filters (the
   * configuration's, or the one backend asked for) refuse is not loaded:
   * loading it only to learn its name would run its code here */
  lo.filter_by_file_name = 1;
  lo.config_dirs = (char *const *)sp->dirs;
  lo.config_dir_count = sp->nd;
  lo.explicit_paths = (char *const *)sp->paths;
  lo.explicit_path_count = sp->np;
  char *only[1] = {(char *)backend};
  if (backend) { /* only that plugin is loaded */
    lo.enabled = only;
    lo.enabled_count = 1;
  }
  int found = loader_discover(&lo, list);
  if (found < 0) {
    runtime_places_free(sp);
    loader_plugin_list_free(list);
    return RUNTIME_PLACES_FAILED;
  }
  return found;
}

void runtime_places_not_found(const runtime_places *sp, const loader_plugin_list *list,
                              const char *backend, const char *operator_name, const char *workload,
                              char *err, size_t cap) {
  if (!err || !cap)
    return;
  /* what was found: loaded (serving something else), refused (unsafe,
   * unloadable, duplicate) and filtered out by the configuration (or,
   * with a backend given, every other backend) */
  size_t loaded = 0, refused = 0, disabled = 0;
  for (size_t i = 0; i < list->count; i++) {
    const loader_plugin *q = list->items[i];
    if (q->loaded)
      loaded++;
    else if (q->state == CALHOST_PLUGIN_DISABLED)
      disabled++;
    else
      refused++;
  }
  char counts[192];
  if (backend)
    snprintf(counts, sizeof counts, "%zu other plugin%s", loaded + disabled,
             loaded + disabled == 1 ? "" : "s");
  else if (disabled)
    snprintf(counts, sizeof counts, "%zu plugin%s loaded, %zu disabled by the configuration",
             loaded, loaded == 1 ? "" : "s", disabled);
  else
    snprintf(counts, sizeof counts, "%zu plugin%s loaded", loaded, loaded == 1 ? "" : "s");
  if (refused)
    snprintf(counts + strlen(counts), sizeof counts - strlen(counts),
             ", %zu refused (`calhost plugins` says why)", refused);
  /* the backend asked for, found but refused: its file and the reason */
  char named_path[1024] = "", named_reason[1024] = "";
  const char *named = NULL;
  for (size_t i = 0; backend && i < list->count && !named; i++) {
    const loader_plugin *q = list->items[i];
    if (q->backend && !strcmp(q->backend, backend)) {
      snprintf(named_path, sizeof named_path, "%s", q->path ? q->path : "?");
      snprintf(named_reason, sizeof named_reason, "%s", q->reason ? q->reason : "");
      named = named_path;
    }
  }
  char where[3072];
  describe_search(where, sizeof where, sp->paths, sp->np, sp->dirs, sp->nd, sp->library_dir);
  if (backend && named)
    snprintf(err, cap, "plugin '%s' not found or not loadable: %s: %s", backend, named,
             named_reason[0] ? named_reason : "refused");
  else if (backend)
    snprintf(err, cap,
             "plugin '%s' not found or not loadable (%s; searched: %s; in a directory only %s%s "
             "is loaded for it)",
             backend, counts, where, backend, loader_module_suffix());
  else
    snprintf(err, cap, "no plugin serves operator %s of workload '%s' (%s; searched: %s)",
             operator_name, workload, counts, where);
}
