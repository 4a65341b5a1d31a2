/*
 * config_search.c: where calhost looks for its configuration when no
 * --config is given (config_find_default), and that list of places
 * for messages (config_search_places).
 *
 * Build-time paths come from compile definitions set in CMakeLists.txt:
 *   CALHOST_RELATIVE_CONFIG   the installed config relative to the installed
 *                             executable's directory (../share/calhost/calhost.ini)
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
    if (base_exe_dir(dir, sizeof dir) == 0) {
      while (!strncmp(rel, "../", 3)) {
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir)
          *slash = '\0';
        else
          snprintf(dir, sizeof dir, "/");
        rel += 3;
      }
      if (snprintf(places[n], PATH_MAX, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", rel) < PATH_MAX)
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

int config_find_default(char *buf, size_t capacity) {
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

size_t config_search_places(char *buf, size_t capacity) {
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
