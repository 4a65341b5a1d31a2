/*
 * config_search.c: where calhost looks for its configuration when no
 * --config is given (calhost_config_find_default), and the walk over every
 * effective key that `calhost config show` prints (calhost_config_visit).
 *
 * Build-time paths come from compile definitions set in CMakeLists.txt:
 *   CALHOST_RELATIVE_CONFIG   the installed config relative to the installed
 *                             executable's directory (../share/calhost/calhost.ini)
 *   CALHOST_INSTALLED_CONFIG  ${CMAKE_INSTALL_FULL_DATADIR}/calhost/calhost.ini
 *   CALHOST_SOURCE_CONFIG     ${CMAKE_SOURCE_DIR}/config/calhost.ini
 *   CALHOST_BUILD_DIR         ${CMAKE_BINARY_DIR}
 * The executable's directory comes from /proc/self/exe, as plugin discovery
 * finds bin/../lib/calhost/plugins (host/loader/loader.c). The source
 * tree's config is used only by programs that run from the build tree
 * (their /proc/self/exe lies below CALHOST_BUILD_DIR).
 */
#define _GNU_SOURCE
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../processor/processor.h" /* calhost_cpulist_format */

static int is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The directory of the running executable into buf; 0, or -1. */
static int exe_dir(char *buf, size_t capacity) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  char *slash;
  if (n <= 0)
    return -1;
  exe[n] = '\0';
  slash = strrchr(exe, '/');
  if (!slash || (size_t)(slash - exe) + 1 > capacity)
    return -1;
  *slash = '\0';
  memcpy(buf, exe, (size_t)(slash - exe) + 1);
  return 0;
}

#ifdef CALHOST_SOURCE_CONFIG
/* Nonzero when this program's executable lies below the build tree. */
static int running_from_build_tree(void) {
#ifdef CALHOST_BUILD_DIR
  char exe[PATH_MAX], build[PATH_MAX];
  size_t bl;
  if (exe_dir(exe, sizeof exe) != 0 || !realpath(CALHOST_BUILD_DIR, build))
    return 0;
  bl = strlen(build);
  return strncmp(exe, build, bl) == 0 && (exe[bl] == '/' || exe[bl] == '\0');
#else
  return 0;
#endif
}
#endif

#define MAX_PLACES 5

/* The places of the default search, in order (see config.h); each is
 * written into its own row of places. Returns how many. */
static size_t search_places(char places[MAX_PLACES][PATH_MAX]) {
  const char *xdg = secure_getenv("XDG_CONFIG_HOME");
  const char *home = secure_getenv("HOME");
  size_t n = 0;
  snprintf(places[n++], PATH_MAX, "calhost.ini");
  /* XDG: an unset, empty or relative XDG_CONFIG_HOME means ~/.config. */
  if (xdg && xdg[0] == '/') {
    if (snprintf(places[n], PATH_MAX, "%s/calhost/calhost.ini", xdg) < PATH_MAX)
      n++;
  } else if (home && home[0]) {
    if (snprintf(places[n], PATH_MAX, "%s/.config/calhost/calhost.ini", home) < PATH_MAX)
      n++;
  }
#ifdef CALHOST_RELATIVE_CONFIG
  {
    /* /proc/self/exe is canonical (no links, no dots), so each leading
     * "../" of the relative path just drops the directory's last part. */
    char dir[PATH_MAX];
    const char *rel = CALHOST_RELATIVE_CONFIG;
    if (exe_dir(dir, sizeof dir) == 0) {
      while (!strncmp(rel, "../", 3)) {
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir)
          *slash = '\0';
        else
          snprintf(dir, sizeof dir, "/");
        rel += 3;
      }
      if (snprintf(places[n], PATH_MAX, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", rel) <
          PATH_MAX)
        n++;
    }
  }
#endif
#ifdef CALHOST_INSTALLED_CONFIG
  if (n == 0 || strcmp(places[n - 1], CALHOST_INSTALLED_CONFIG) != 0)
    snprintf(places[n++], PATH_MAX, "%s", CALHOST_INSTALLED_CONFIG);
#endif
#ifdef CALHOST_SOURCE_CONFIG
  if (running_from_build_tree())
    snprintf(places[n++], PATH_MAX, "%s", CALHOST_SOURCE_CONFIG);
#endif
  return n;
}

int calhost_config_find_default(char *buf, size_t capacity) {
  char places[MAX_PLACES][PATH_MAX];
  size_t n = search_places(places);
  for (size_t i = 0; i < n; i++) {
    if (!is_file(places[i]))
      continue;
    /* The first that exists; if it does not fit, stop rather than skip it. */
    if (strlen(places[i]) + 1 > capacity)
      return -1;
    memcpy(buf, places[i], strlen(places[i]) + 1);
    return 0;
  }
  return -1;
}

size_t calhost_config_search_places(char *buf, size_t capacity) {
  char places[MAX_PLACES][PATH_MAX];
  size_t n = search_places(places), len = 0;
  if (buf && capacity)
    buf[0] = '\0';
  for (size_t i = 0; i < n; i++) {
    int k;
    const char *shown = strcmp(places[i], "calhost.ini") ? places[i] : "./calhost.ini";
    if (buf && len < capacity)
      k = snprintf(buf + len, capacity - len, "%s%s", i ? ", " : "", shown);
    else
      k = snprintf(NULL, 0, "%s%s", i ? ", " : "", shown);
    if (k > 0)
      len += (size_t)k;
  }
  return len;
}

/* ---- calhost_config_visit ------------------------------------------------ */

typedef struct text {
  char *s;
  size_t len, cap;
  int oom;
} text;

static void put(text *t, const char *s) {
  size_t n = strlen(s);
  if (t->oom)
    return;
  if (t->len + n + 1 > t->cap) {
    size_t cap = (t->len + n + 1) * 2;
    char *ns = realloc(t->s, cap);
    if (!ns) {
      t->oom = 1;
      return;
    }
    t->s = ns;
    t->cap = cap;
  }
  memcpy(t->s + t->len, s, n + 1);
  t->len += n;
}

static int emit(const calhost_config *cfg, calhost_config_visit_fn fn, void *user,
                const char *section, const char *okey_section, const char *key, const char *value) {
  char okey[600];
  snprintf(okey, sizeof okey, "%s.%s", okey_section, key);
  return fn(user, section, key, value, calhost_config_origin_of(cfg, okey));
}

static int emit_list(const calhost_config *cfg, calhost_config_visit_fn fn, void *user,
                     const char *section, const char *key, char *const *items, size_t n,
                     const char *sep) {
  text t = {0};
  int rc;
  put(&t, "");
  for (size_t i = 0; i < n; i++) {
    if (i)
      put(&t, sep);
    put(&t, items[i]);
  }
  if (t.oom) {
    free(t.s);
    return -1;
  }
  rc = emit(cfg, fn, user, section, section, key, t.s);
  free(t.s);
  return rc;
}

int calhost_config_visit(const calhost_config *cfg, calhost_config_visit_fn fn, void *user) {
  char num[64];
  int rc;
#define EMIT(sec, key, val)                                                                        \
  do {                                                                                             \
    if ((rc = emit(cfg, fn, user, sec, sec, key, val)) != 0)                                       \
      return rc;                                                                                   \
  } while (0)
  EMIT("store", "path", cfg->store_path);
  EMIT("store", "persistence_enabled", cfg->persistence_enabled ? "true" : "false");
  if ((rc = emit_list(cfg, fn, user, "plugins", "directories", cfg->plugin_dirs,
                      cfg->plugin_dir_count, ":")) != 0)
    return rc;
  if ((rc = emit_list(cfg, fn, user, "plugins", "paths", cfg->plugin_paths, cfg->plugin_path_count,
                      ":")) != 0)
    return rc;
  if ((rc = emit_list(cfg, fn, user, "plugins", "enabled", cfg->enabled_backends,
                      cfg->enabled_count, ",")) != 0)
    return rc;
  if ((rc = emit_list(cfg, fn, user, "plugins", "disabled", cfg->disabled_backends,
                      cfg->disabled_count, ",")) != 0)
    return rc;
  {
    char cpus[4096];
    if (cfg->cpus_all || cfg->cpu_count == 0)
      snprintf(cpus, sizeof cpus, "all");
    else
      calhost_cpulist_format(cfg->cpus, cfg->cpu_count, cpus, sizeof cpus);
    EMIT("calibration", "cpus", cpus);
  }
  {
    text t = {0};
    put(&t, "");
    for (size_t i = 0; i < cfg->thread_count_count; i++) {
      if (i)
        put(&t, ",");
      if (cfg->thread_counts[i] == 0) {
        put(&t, "max");
      } else {
        snprintf(num, sizeof num, "%u", (unsigned)cfg->thread_counts[i]);
        put(&t, num);
      }
    }
    if (t.oom) {
      free(t.s);
      return -1;
    }
    rc = emit(cfg, fn, user, "calibration", "calibration", "threads", t.s);
    free(t.s);
    if (rc)
      return rc;
  }
  EMIT("calibration", "rigor", calhost_rigor_name(cfg->rigor));
  snprintf(num, sizeof num, "%g", cfg->time_budget_seconds);
  EMIT("calibration", "time_budget", num);
  snprintf(num, sizeof num, "%u", (unsigned)cfg->repetitions);
  EMIT("calibration", "repetitions", num);
  snprintf(num, sizeof num, "%g", cfg->plugin_timeout_seconds);
  EMIT("calibration", "plugin_timeout", num);
  EMIT("lookup", "force_portable", cfg->force_portable ? "true" : "false");
#undef EMIT

  for (size_t i = 0; i < cfg->workload_count; i++) {
    const calhost_config_workload *w = &cfg->workloads[i];
    char section[300], osec[300];
    text t = {0};
    calhost_config_origin o = w->origin;
    snprintf(section, sizeof section, "workload %s", w->name);
    snprintf(osec, sizeof osec, "workload.%s", w->name);
    if ((rc = emit(cfg, fn, user, section, osec, "operator", w->operator_name)) != 0)
      return rc;
    if ((rc = emit(cfg, fn, user, section, osec, "dtype", w->dtype)) != 0)
      return rc;
    put(&t, "");
    for (size_t d = 0; d < w->shape_rank; d++) {
      snprintf(num, sizeof num, "%s%lld", d ? "," : "", (long long)w->shape[d]);
      put(&t, num);
    }
    if (t.oom) {
      free(t.s);
      return -1;
    }
    rc = emit(cfg, fn, user, section, osec, "shape", t.s);
    free(t.s);
    if (rc)
      return rc;
    if (w->model_file && (rc = emit(cfg, fn, user, section, osec, "model", w->model_file)) != 0)
      return rc;
    for (size_t k = 0; k < w->property_count; k++)
      if ((rc = emit(cfg, fn, user, section, osec, w->properties[k].name,
                     w->properties[k].value)) != 0)
        return rc;
    /* Computed, not read: its origin is the section header. */
    if ((rc = fn(user, section, "model_digest", w->model_digest, o)) != 0)
      return rc;
  }
  for (size_t i = 0; i < cfg->plugin_section_count; i++) {
    const calhost_config_plugin_section *s = &cfg->plugin_sections[i];
    char section[300], osec[300];
    snprintf(section, sizeof section, "plugin %s", s->name);
    snprintf(osec, sizeof osec, "plugin.%s", s->name);
    for (size_t k = 0; k < s->setting_count; k++)
      if ((rc = emit(cfg, fn, user, section, osec, s->settings[k].name, s->settings[k].value)) != 0)
        return rc;
  }
  return 0;
}
