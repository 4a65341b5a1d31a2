/*
 * config.h: calhost's configuration, read from an INI file with inih.
 *
 * Owns the typed, validated form of calhost.ini: the [store], [plugins],
 * [calibration] and [lookup] sections, the [workload NAME] sections and the
 * [plugin NAME] sections handed to plugins. Every value remembers the file
 * and line it came from (for `calhost config show`), and every error names
 * the file and line (unknown sections and keys, bad values, duplicates).
 *
 * The part's files: config.c (this value: defaults, free, queries, the
 * walk of `config show`), parse.c (the INI reader: lines, headers,
 * duplicates, the first error), keys.c (the sections and keys and what
 * they accept), values.c/values.h (value syntax and limits, shared with the
 * command line), config_search.c (where the file is searched for) and
 * digest.c/digest.h (model digests, computed on demand: loading a
 * configuration reads no model file and links no OpenSSL). Internal to the
 * host (not a public header).
 */
#ifndef CALHOST_CONFIG_H
#define CALHOST_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "calhost/plugin.h" /* calhost_property */
#include "base/tuning.h"    /* base_rigor: the rigor levels' words, shared with the engine */

/* Where a value came from: a file and line, or a built-in default (file
 * NULL, line 0). The configuration records no other origin: a command-line
 * flag that overrides a value is the CLI's to report. */
typedef struct config_origin {
  const char *file;
  unsigned line;
} config_origin;

typedef struct config_workload {
  char *name;          /* from [workload NAME] */
  char *operator_name; /* operator = MatMul (required) */
  char *dtype;         /* dtype = float32 (default float32) */
  int64_t *shape;      /* shape = 256,256,256 (required; 1 to 8 positive integers) */
  size_t shape_rank;
  char *model_file;             /* model = PATH (optional; relative to the config's dir) */
  config_origin model_origin;   /* the model key's file and line, for messages */
  char *model_digest;           /* cache of config_workload_digest (digest.h): NULL until a
                                   command needs the key; read it through that function */
  calhost_property *properties; /* every other key of the section, e.g. accumulate = 1 */
  size_t property_count;
  config_origin origin; /* the section header's line */
} config_workload;

/* One binding of a symbolic model dimension: `batch=8`. */
typedef struct config_dim {
  char *name;
  int64_t value; /* >= 1 */
} config_dim;

/* One binding of every symbolic dimension a model needs. */
typedef struct config_binding {
  config_dim *dims;
  size_t count;
} config_binding;

/* A [model NAME] section: an ONNX file whose nodes calibrate makes its
 * workloads (host/model reads it; loading a configuration reads no model). */
typedef struct config_model {
  char *name;                /* from [model NAME] */
  char *file;                /* file = PATH (required; relative to the config's dir) */
  config_origin file_origin; /* the file key's line */
  /* dims = batch=8, seq=128 | batch=1, seq=512 (optional): each binding is
   * calibrated (none: the model as it is) */
  config_binding *bindings;
  size_t binding_count;
  config_origin dims_origin; /* the dims key's line */
  config_origin origin;      /* the section header's line */
  /* backends = a, b: the backends the model's nodes are served by, in this
   * order of preference (one name: a pin), instead of [lookup] backends
   * and the race (issue 38); NULL and 0 when not set */
  char **backends;
  size_t backend_count;
} config_model;

typedef struct config_plugin_section {
  char *name;                 /* from [plugin NAME]: the backend name */
  calhost_property *settings; /* passed to the plugin's create() (every key but devices) */
  size_t setting_count;
  config_origin origin;
  /* devices = all | LIST: the host's key (never passed to the plugin), the
   * devices calibrate runs on: indices or identities (values.h); NULL and
   * 0 for all (the default) */
  char **devices;
  size_t device_count;
  /* time_budget = DURATION: the host's key (never passed to the plugin),
   * this plugin's time budget instead of [calibration] time_budget (a
   * backend whose kernels compile for tens of seconds gets its own; the
   * command line's --time-budget overrides both); 0 when not set */
  double time_budget_seconds;
} config_plugin_section;

typedef struct config_settings {
  char *source_path; /* the file read; NULL when only defaults */

  /* [store] */
  char *store_path;        /* path = ...; NULL: the store's default path;
                              resolved like plugin_dirs */
  int persistence_enabled; /* persistence_enabled = true|false (default true) */

  /* [plugins] */
  char **plugin_dirs; /* directories = a:b (':' or ','-separated; relative
                         to the config file's dir; "~/" = $HOME) */
  size_t plugin_dir_count;
  char **plugin_paths; /* paths = explicit plugin files (same rules) */
  size_t plugin_path_count;
  char **enabled_backends; /* enabled = a,b (empty: all) */
  size_t enabled_count;
  char **disabled_backends; /* disabled = c,d */
  size_t disabled_count;

  /* [calibration] */
  int *cpus; /* cpus = all | 0-3,6 ; NULL/0 = all; ascending, unique */
  size_t cpu_count;
  int cpus_all;
  uint32_t *thread_counts; /* threads = 1,2,max ; 0 stands for max */
  size_t thread_count_count;
  base_rigor rigor;              /* rigor = quick|measure|exhaustive */
  double time_budget_seconds;    /* time_budget = 60 (seconds, per plugin; 0: none;
                                    units s, m, h accepted; values.h) */
  uint32_t repetitions;          /* repetitions = N (0: rigor's default) */
  int strategy;                  /* strategy = default|exhaustive|random|local|annealing|genetic|
                                    model|bayes: the search (a search_strategy; 0: the rigor's) */
  uint32_t budget_evaluations;   /* budget = N: candidates the search evaluates per sweep */
  double budget_seconds;         /* budget = 30s: or seconds of search per sweep (0/0: the
                                    rigor's budget) */
  double plugin_timeout_seconds; /* plugin_timeout = 120: child-process limit */

  /* [lookup] */
  int force_portable; /* force_portable = true|false */
  /* backends = a, b: the default order of backends for a lookup without a
   * plugin (one name: a pin), instead of the race; a [model NAME]'s own
   * backends replaces it for that model's nodes; NULL and 0: the race
   * decides, else the loader's order (the selection rule, README) */
  char **lookup_backends;
  size_t lookup_backend_count;

  config_workload *workloads;
  size_t workload_count, workload_capacity;
  config_plugin_section *plugin_sections;
  size_t plugin_section_count, plugin_section_capacity;
  config_model *models; /* the [model NAME] sections, in file order */
  size_t model_count, model_capacity;

  /* Where each key set in the file was set ("calibration.rigor",
   * "workload.NAME.shape", "plugin.NAME.max_isa"), for messages and `config
   * show`; private to config.c, read through config_origin_of. */
  void *origins;
  /* config_workload_named's index of the workload names (a cache built on
   * first use and extended as workloads are appended: a model's thousands
   * of workloads are found in constant time); private to config.c. */
  void *workload_index;
} config_settings;

/* Fills *cfg with the built-in defaults (no file). Returns 0, or -1 on
 * allocation failure. */
int config_defaults(config_settings *cfg);

/* Reads and validates the INI file at path into *cfg (starting from the
 * defaults). On error returns -1, leaves *cfg freed and writes
 * "FILE:LINE: message" into err (NUL-terminated, at most err_capacity).
 * Only a regular file is read (or the null device, /dev/null, an empty
 * configuration): anything else (a FIFO, another device, a directory, a
 * socket) is refused at once, without blocking, as "FILE: is not a
 * regular file (a FIFO); refusing to read it". */
int config_load(const char *path, config_settings *cfg, char *err, size_t err_capacity);

/* config_load's failure when the file itself could not be read (missing,
 * not a regular file, a read error, too large), as config_load_file
 * returns it; an invalid configuration is -1. */
#define CONFIG_LOAD_UNREADABLE (-2)

/* config_load, telling the two failures apart: 0, -1 for an invalid
 * configuration ("FILE:LINE: message"), or CONFIG_LOAD_UNREADABLE when the
 * file could not be read ("FILE: message"); err and *cfg as config_load. */
int config_load_file(const char *path, config_settings *cfg, char *err, size_t err_capacity);

/* The default search, used whenever no --config is given (whatever other
 * flags are): the first regular file of
 *   1. ./calhost.ini
 *   2. $XDG_CONFIG_HOME/calhost/calhost.ini, or ~/.config/calhost/calhost.ini
 *      when XDG_CONFIG_HOME is unset, empty or not absolute
 *   3. the system configuration, the administrator's: ${sysconfdir}/calhost/
 *      calhost.ini (/etc/calhost/calhost.ini for an installation in /usr),
 *      first found relative to the running executable (<dir of
 *      /proc/self/exe>/../../etc/calhost/calhost.ini for /usr/bin), then at
 *      the compiled-in path; no package ships it, so it replaces the
 *      packaged default whole when an administrator creates it
 *   4. the installation's own config (the packaged default), found relative
 *      to the running executable: <dir of /proc/self/exe>/../share/calhost/
 *      calhost.ini (bin and datadir as installed), so an installation moved
 *      or installed with `cmake --install --prefix P` finds
 *      P/share/calhost/calhost.ini
 *   5. the compiled-in ${datadir}/calhost/calhost.ini
 *   6. only for programs running from the build tree: the source tree's
 *      config/calhost.ini.
 * Writes the first that exists into buf and returns 0; -1 when none does,
 * or when the first that exists does not fit in buf. */
int config_find_default(char *buf, size_t capacity);

/* What the default search's place path is, for `config show`: "the current
 * directory's configuration", "the user's configuration", "the system
 * configuration (it replaces the packaged default)", "the packaged default
 * (a system configuration SYSCONF replaces it)", "the source tree's
 * configuration", or NULL for a path that is none of the places (a
 * --config FILE). *kind receives a word for JSON ("current_directory",
 * "user", "system", "packaged", "source"), or NULL. The text is written
 * into buf of capacity bytes, which is returned. */
const char *config_default_role(const char *path, const char **kind, char *buf, size_t capacity);

/* The places config_find_default looks at, in order, as one line
 * for messages ("./calhost.ini, /home/u/.config/calhost/calhost.ini, ...").
 * Returns the full length like snprintf (truncated when >= capacity). */
size_t config_search_places(char *buf, size_t capacity);

/* Frees everything *cfg owns and zeroes it. NULL-safe. */
void config_free(config_settings *cfg);

/* Frees what workload w owns (its strings and properties) and zeroes it. */
void config_workload_free(config_workload *w);

/* Finds a workload / plugin section by name; NULL when absent. A workload
 * is found through a hash index of the names, a cache kept in cfg (built on
 * first use, extended when workloads were appended, rebuilt when some were
 * removed; not thread-safe, as config_workload_digest's cache). */
const config_workload *config_workload_named(const config_settings *cfg, const char *name);
const config_plugin_section *config_plugin_named(const config_settings *cfg, const char *name);
const config_model *config_model_named(const config_settings *cfg, const char *name);

/* The time budget of the plugin `backend` (seconds, 0: none): its
 * [plugin NAME] time_budget when set, else [calibration] time_budget. */
double config_plugin_time_budget(const config_settings *cfg, const char *backend);

/* Nonzero when the backend may be used (enabled list empty or naming it, and
 * not in the disabled list). */
int config_backend_enabled(const config_settings *cfg, const char *backend);

/* Where the value of "section.key" (e.g. "calibration.rigor") came from. */
config_origin config_origin_of(const config_settings *cfg, const char *dotted_key);

/* Like config_load, from text in memory (length bytes; it may hold
 * no NUL). name is used in messages and origins ("FILE:LINE"), and relative
 * paths in the text resolve against name's directory. */
int config_load_string(const char *text, size_t length, const char *name, config_settings *cfg,
                       char *err, size_t err_capacity);

/* Visits every key of the effective configuration in a stable order (the
 * order of `calhost config show`): section ("store", "calibration",
 * "workload NAME", "plugin NAME", ...), key, the value as text (lists
 * joined as they would be written in the file) and its origin. Keys that
 * are unset and have no default (e.g. store.path) are visited with value
 * NULL; so is a workload's model_digest until it has been computed
 * (config_digest_all). Stops early and returns the callback's value
 * when it is nonzero. */
typedef int (*config_visit_fn)(void *user, const char *section, const char *key, const char *value,
                               config_origin origin);
int config_visit(const config_settings *cfg, config_visit_fn fn, void *user);

#endif /* CALHOST_CONFIG_H */
