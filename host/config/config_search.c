/*
 * config_search.c: where calhost looks for its configuration when no
 * --config is given (config_find_default), and that list of places
 * for messages (config_search_places).
 *
 * Build-time paths come from compile definitions set in CMakeLists.txt:
 *   CALHOST_RELATIVE_CONFIG   the installed config relative to the installed
 *                             executable's directory (../share/calhost/calhost.ini)
 *   CALHOST_RELATIVE_SYSTEM_CONFIG, CALHOST_SYSTEM_CONFIG
 *                             the system configuration, relative to the executable's
 *                             directory (../../etc/calhost/calhost.ini) and as
 *                             ${CMAKE_INSTALL_FULL_SYSCONFDIR}/calhost/calhost.ini
 *   CALHOST_INSTALLED_CONFIG  ${CMAKE_INSTALL_FULL_DATADIR}/calhost/calhost.ini
 *   CALHOST_SOURCE_CONFIG     ${CMAKE_SOURCE_DIR}/config/calhost.ini
 *   CALHOST_BUILD_DIR         ${CMAKE_BINARY_DIR}
 * The executable's directory comes from base_exe_dir (base/paths.c, /proc/self/exe), as plugin
 * discovery finds bin/../lib/calhost/plugins (host/loader/loader.c). The source tree's config is
 * used only by programs that run from the build tree (their /proc/self/exe lies below
 * CALHOST_BUILD_DIR).
 */
#define _GNU_SOURCE
#include "base/paths.h"
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The installation's paths the build does not set (a relative one under an
 * absolute install directory): none. */
#ifndef CALHOST_RELATIVE_CONFIG
#define CALHOST_RELATIVE_CONFIG NULL
#endif
#ifndef CALHOST_RELATIVE_SYSTEM_CONFIG
#define CALHOST_RELATIVE_SYSTEM_CONFIG NULL
#endif
#ifndef CALHOST_SYSTEM_CONFIG
#define CALHOST_SYSTEM_CONFIG NULL
#endif
#ifndef CALHOST_INSTALLED_CONFIG
#define CALHOST_INSTALLED_CONFIG NULL
#endif

static int is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

#ifdef CALHOST_SOURCE_CONFIG
/* Nonzero when this program's executable lies below the build tree. */
static int running_from_build_tree(void) {
#ifdef CALHOST_BUILD_DIR
  char exe[PATH_MAX], build[PATH_MAX];
  size_t bl;
  if (base_exe_dir(exe, sizeof exe) != 0 || !realpath(CALHOST_BUILD_DIR, build))
    return 0;
  bl = strlen(build);
  return strncmp(exe, build, bl) == 0 && (exe[bl] == '/' || exe[bl] == '\0');
#else
  return 0;
#endif
}
#endif

#define MAX_PLACES 7

/* What each place of the search is (config_default_role). */
enum place_kind { PLACE_CWD, PLACE_USER, PLACE_SYSTEM, PLACE_PACKAGED, PLACE_SOURCE };

/* Writes the executable's directory joined with rel (its leading "../"
 * dropping one part each) into out; returns 0, or -1 when it does not fit or
 * the directory is unknown. */
static int exe_relative(const char *rel, char out[PATH_MAX]) {
  /* /proc/self/exe is canonical (no links, no dots), so each leading
   * "../" of the relative path just drops the directory's last part. */
  char dir[PATH_MAX];
  if (base_exe_dir(dir, sizeof dir) != 0)
    return -1;
  while (!strncmp(rel, "../", 3)) {
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir)
      *slash = '\0';
    else
      snprintf(dir, sizeof dir, "/");
    rel += 3;
  }
  return snprintf(out, PATH_MAX, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", rel) < PATH_MAX ? 0
                                                                                             : -1;
}

/* Appends path as a place of kind unless it is the one before (the
 * relative and the compiled-in path of an installation in its own prefix). */
static void add_place(char places[MAX_PLACES][PATH_MAX], enum place_kind kinds[MAX_PLACES],
                      size_t *n, const char *path, enum place_kind kind) {
  size_t k = *n;
  if (k >= MAX_PLACES)
    return;
  if (k > 0 && k <= MAX_PLACES && !strcmp(places[k - 1], path))
    return;
  snprintf(places[k], PATH_MAX, "%s", path);
  kinds[k] = kind;
  *n = k + 1;
}

/* An installation's file of kind: relative to the executable first (an
 * installation moved with its prefix), then at its compiled-in path (the
 * same place in its own prefix: once). NULL: not set by the build. */
static void add_installed(char places[MAX_PLACES][PATH_MAX], enum place_kind kinds[MAX_PLACES],
                          size_t *n, const char *relative, const char *absolute,
                          enum place_kind kind) {
  char path[PATH_MAX];
  if (relative && exe_relative(relative, path) == 0)
    add_place(places, kinds, n, path, kind);
  if (absolute)
    add_place(places, kinds, n, absolute, kind);
}

/* The places of the default search, in order (see config.h); each is
 * written into its own row of places, its kind into kinds. Returns how
 * many. */
static size_t search_places(char places[MAX_PLACES][PATH_MAX], enum place_kind kinds[MAX_PLACES]) {
  const char *xdg = secure_getenv("XDG_CONFIG_HOME");
  const char *home = secure_getenv("HOME");
  char path[PATH_MAX];
  size_t n = 0;
  add_place(places, kinds, &n, "calhost.ini", PLACE_CWD);
  /* XDG: an unset, empty or relative XDG_CONFIG_HOME means ~/.config. */
  if (xdg && xdg[0] == '/') {
    if (snprintf(path, PATH_MAX, "%s/calhost/calhost.ini", xdg) < PATH_MAX)
      add_place(places, kinds, &n, path, PLACE_USER);
  } else if (home && home[0]) {
    if (snprintf(path, PATH_MAX, "%s/.config/calhost/calhost.ini", home) < PATH_MAX)
      add_place(places, kinds, &n, path, PLACE_USER);
  }
  add_installed(places, kinds, &n, CALHOST_RELATIVE_SYSTEM_CONFIG, CALHOST_SYSTEM_CONFIG,
                PLACE_SYSTEM);
  add_installed(places, kinds, &n, CALHOST_RELATIVE_CONFIG, CALHOST_INSTALLED_CONFIG,
                PLACE_PACKAGED);
#ifdef CALHOST_SOURCE_CONFIG
  if (running_from_build_tree())
    add_place(places, kinds, &n, CALHOST_SOURCE_CONFIG, PLACE_SOURCE);
#endif
  (void)path;
  return n;
}

const char *config_default_role(const char *path, const char **kind, char *buf, size_t capacity) {
  char places[MAX_PLACES][PATH_MAX];
  enum place_kind kinds[MAX_PLACES];
  size_t n = search_places(places, kinds);
  const char *system = NULL;
  *kind = NULL;
  for (size_t i = 0; i < n && i < MAX_PLACES; i++)
    if (kinds[i] == PLACE_SYSTEM && !system)
      system = places[i];
  for (size_t i = 0; path && i < n && i < MAX_PLACES; i++) {
    if (strcmp(places[i], path) != 0)
      continue;
    switch (kinds[i]) {
    case PLACE_CWD:
      *kind = "current_directory";
      snprintf(buf, capacity, "the current directory's configuration");
      break;
    case PLACE_USER:
      *kind = "user";
      snprintf(buf, capacity, "the user's configuration");
      break;
    case PLACE_SYSTEM:
      *kind = "system";
      snprintf(buf, capacity, "the system configuration (it replaces the packaged default)");
      break;
    case PLACE_PACKAGED:
      *kind = "packaged";
      if (system)
        snprintf(buf, capacity, "the packaged default (a system configuration %s replaces it)",
                 system);
      else
        snprintf(buf, capacity, "the packaged default");
      break;
    case PLACE_SOURCE:
      *kind = "source";
      snprintf(buf, capacity, "the source tree's configuration");
      break;
    }
    return buf;
  }
  return NULL;
}

int config_find_default(char *buf, size_t capacity) {
  char places[MAX_PLACES][PATH_MAX];
  enum place_kind kinds[MAX_PLACES];
  size_t n = search_places(places, kinds);
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

size_t config_search_places(char *buf, size_t capacity) {
  char places[MAX_PLACES][PATH_MAX];
  enum place_kind kinds[MAX_PLACES];
  size_t n = search_places(places, kinds), len = 0;
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
