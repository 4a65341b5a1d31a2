/*
 * places.h: where the deployment runtime searches plugins, and the message
 * that names those places when a plugin is not found (places.c). Private
 * to host/runtime.
 */
#ifndef CALHOST_RUNTIME_PLACES_H
#define CALHOST_RUNTIME_PLACES_H

#include <stddef.h>

#include "config/config.h"
#include "loader/loader.h"

/* Where load_plugin searches besides the loader's own places (runtime.h):
 * the configuration's and the options' directories, the shared library's
 * own prefix (when it has the directory: the loader warns about a missing
 * configured one), and the configuration's and the options' files. */
typedef struct runtime_places {
  char *library_dir; /* malloc'd, or NULL */
  const char **dirs; /* nd, the strings borrowed */
  const char **paths;
  size_t nd, np;
} runtime_places;

#define RUNTIME_PLACES_NO_MEMORY -2 /* the places could not be listed */
#define RUNTIME_PLACES_FAILED -1    /* the loader ran out of memory */

/* Discovers (checks and loads, in this process) the plugins where load_plugin
 * searches (cfg's directories and files, then the options' extra ones) into
 * *list: the backend given only, else every enabled plugin. Returns the
 * loader's count of loaded plugins with *sp filled (free with
 * runtime_places_free; the messages name it), or RUNTIME_PLACES_NO_MEMORY /
 * RUNTIME_PLACES_FAILED with *list and *sp empty. */
int runtime_places_discover(const config_settings *cfg, char *const *extra_dirs,
                            size_t extra_dir_count, char *const *extra_paths,
                            size_t extra_path_count, const char *backend, loader_plugin_list *list,
                            runtime_places *sp);

/* Frees what runtime_places_discover filled in sp, and empties it. */
void runtime_places_free(runtime_places *sp);

/* The message for a plugin not found in list (what discover found in sp's
 * places) into err (capacity cap): the backend asked for (found but
 * refused: its file and why), else the workload's operator no loaded plugin
 * serves; with what was loaded, refused and disabled, and every place
 * searched in the loader's order. */
void runtime_places_not_found(const runtime_places *sp, const loader_plugin_list *list,
                              const char *backend, const char *operator_name, const char *workload,
                              char *err, size_t cap);

#endif
