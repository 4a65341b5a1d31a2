/*
 * runtime.h: the public C API of libcalhost_runtime, calhost's deployment
 * runtime: what an inference runtime links to use, on a production
 * machine, the policies `calhost calibrate` stored.
 *
 * It does what `calhost lookup --workload` does, from installed files only:
 * open a runtime from a configuration file (the same calhost.ini, or a
 * deployment one such as config/deploy-portable.ini) or from options set
 * in code (the same text, or only a store and plugin files), load the one
 * plugin it needs (with its [plugin NAME] settings),
 * build the keys of a workload on this machine with the plugin's
 * key-builder (exactly the keys calibrate stored), and select the policy
 * with the store's precedence (exact override, portable override, exact
 * calibrated, portable calibrated; only the portable levels with
 * force_portable), every candidate checked by the plugin's validator. The
 * answer is the store's calstore_lookup_result: the profile, its level and
 * the rejections. No calibration happens here and nothing is written.
 *
 * Conventions (as calstore.h):
 *  - Functions return a calhost_runtime_status; misuse (NULL handle, NULL
 *    where not allowed) is CALHOST_RUNTIME_INVALID_ARGUMENT, never an abort.
 *  - Functions that can fail take `char *err, size_t err_capacity` (err may
 *    be NULL): on failure one line saying what failed, naming the file and
 *    line or the plugin.
 *  - Strings passed in are borrowed for the call; the runtime copies what
 *    it keeps. What a function returns through a pointer is owned by the
 *    runtime (valid until calhost_runtime_close) unless its comment says it
 *    is the caller's to free.
 *  - A runtime handle is used from one thread at a time; see "Processes
 *    and threads" below.
 *
 * Processes and threads (what a server embedding the runtime gets):
 *  - The runtime never forks, execs or spawns a process, and never
 *    installs a signal or exit handler. Everything runs in the calling
 *    thread: a plugin file's trust checks (its owner and mode and those of
 *    every directory above it, as calhost checks them), its dlopen, the ABI
 *    negotiation and every plugin call (create, build_key,
 *    validate_policy, the device listing, destroy). So a plugin can be
 *    loaded from any thread of a busy process while other threads dlopen
 *    and dlclose libraries (Python imports, CUDA or OpenCL loading, hwloc's
 *    plugins) or select. (Earlier versions probed each plugin file in a
 *    fork()ed child first, which in a multi-threaded process can hang or
 *    die in ld.so's or malloc's locks.) Why not a probe program started
 *    with posix_spawn instead: it would have to be installed and found
 *    beside every copy of the library (the static archive has no directory
 *    of its own), and it would guard only the load, while the plugin's
 *    calls run in the program anyway. The cost: a plugin that crashes,
 *    hangs or calls exit() while it loads now takes the program with it,
 *    as one doing so in create, build_key or validate_policy always did.
 *    Check a plugin with `calhost plugin check` (each check in an isolated
 *    child) before deploying it; `calhost plugins` probes in a child.
 *  - Which files are loaded: every file named explicitly (the
 *    configuration's [plugins] paths, options.plugin_paths); of the files
 *    found in directories, those named after a backend that may be used
 *    (BACKEND.so, as calhost_add_plugin and the SDK name plugins): with a
 *    backend asked for by name only that one, else the backends [plugins]
 *    enabled/disabled allow (every file when neither is set). A file is
 *    loaded to learn its backend's name and unloaded again when its real
 *    name is filtered out or a duplicate.
 *  - File descriptors: the runtime does not touch them. A plugin's output
 *    on stdout goes to the program's stdout (calhost itself, which owns
 *    its stdout, points it at stderr around its own plugin calls; a
 *    library must not rewire its program's descriptors behind its back).
 *  - Threads: functions on different handles may run at the same time on
 *    different threads (each handle has its plugins, instances and store
 *    connection; plugins loaded by two handles are one dlopen'ed module,
 *    counted by the dynamic linker, with an instance per handle). One
 *    handle, with everything it returned, is used by one thread at a time
 *    (lock around it to share it). calhost_runtime_version,
 *    calhost_runtime_status_name and calhost_runtime_options_init are
 *    thread-safe. Two handles on two threads call one plugin library at
 *    once, each through its own instance: a plugin keeping state outside
 *    its instance (globals) must lock it itself.
 *  - exit(): a plugin that calls exit() in a call ends the program with the
 *    plugin's status (the runtime cannot stop it and does not hide it); the
 *    calhost command line turns it into a failure naming the plugin
 *    (status 2), never a success.
 *
 * Evolving the API: the soname carries CALHOST_RUNTIME_VERSION_MAJOR, which
 * changes only when the ABI breaks; within a major version functions and
 * enum values are only added. calhost_runtime_options starts with
 * struct_size (set by calhost_runtime_options_init): fields are only
 * appended and read only when struct_size covers them. Structs the library
 * allocates and returns (calhost_runtime_selection) only grow at their end.
 * Everything added after 0.1 says "(since X.Y)" in its comment; what says
 * nothing came with 0.1.
 *
 * Error details (one convention with calstore.h's, settled here before
 * 1.0): every call returns a calhost_runtime_status, the whole outcome; the
 * details are optional, caller-owned, written only when given and never
 * allocated. The runtime's details are one line of text in the caller's
 * buffer (char *err, size_t err_capacity; always NUL-terminated when
 * err_capacity > 0, cut to fit), not a struct, because one runtime call
 * crosses several layers that each name their own place: the text starts
 * with that place, "FILE:LINE: reason" for the configuration
 * ("<config_text>:LINE" for text set in code), "STORE:LINE: STATUS:
 * reason" for the store (calstore_error's path, line, status name and
 * message, in that order; ":LINE" only when a line is at fault), "plugin
 * 'NAME': ..." for a plugin. A program wanting the store's fields as
 * fields calls libcalstore on calhost_runtime_store(). A later detail
 * shape would come as new entry points (SQLite's _v2 way), these kept.
 */
#ifndef CALHOST_RUNTIME_H
#define CALHOST_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "calhost/calstore.h"
#include "calhost/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(CALHOST_RUNTIME_BUILDING_DLL)
#define CALHOST_RUNTIME_API __declspec(dllexport)
#elif defined(_WIN32) && !defined(CALHOST_RUNTIME_STATIC)
#define CALHOST_RUNTIME_API __declspec(dllimport)
#elif defined(__GNUC__)
#define CALHOST_RUNTIME_API __attribute__((visibility("default")))
#else
#define CALHOST_RUNTIME_API
#endif

/* The library's version (semantic versioning; MAJOR is the ABI and the
 * soname). */
#define CALHOST_RUNTIME_VERSION_MAJOR 0
#define CALHOST_RUNTIME_VERSION_MINOR 5
#define CALHOST_RUNTIME_VERSION_PATCH 0
#define CALHOST_RUNTIME_VERSION_NUMBER                                                             \
  (CALHOST_RUNTIME_VERSION_MAJOR * 1000000 + CALHOST_RUNTIME_VERSION_MINOR * 1000 +                \
   CALHOST_RUNTIME_VERSION_PATCH)

/* The version of the library the program runs with ("MAJOR.MINOR.PATCH";
 * static) and, when number is not NULL, its CALHOST_RUNTIME_VERSION_NUMBER. */
CALHOST_RUNTIME_API const char *calhost_runtime_version(uint32_t *number);

/* Result codes. Append-only. */
typedef enum calhost_runtime_status {
  CALHOST_RUNTIME_OK = 0,
  CALHOST_RUNTIME_NOT_FOUND = 1,        /* no such workload / no plugin to load */
  CALHOST_RUNTIME_CONFIG = 2,           /* the configuration is unreadable or invalid */
  CALHOST_RUNTIME_STORE = 3,            /* the store could not be opened or read */
  CALHOST_RUNTIME_PLUGIN = 4,           /* the plugin failed (create, build_key) */
  CALHOST_RUNTIME_UNSUPPORTED = 5,      /* the plugin does not serve this workload */
  CALHOST_RUNTIME_INVALID_ARGUMENT = 6, /* NULL where not allowed, bad struct_size */
  CALHOST_RUNTIME_NO_MEMORY = 7,        /* allocation failed */
  CALHOST_RUNTIME_MODEL = 8,            /* the workload's model file cannot be hashed */
  CALHOST_RUNTIME_TARGET = 9,           /* the CPU set or thread count is not available here */
} calhost_runtime_status;

/* The name of a status ("ok", "not_found", "config_error", "store_error",
 * "plugin_error", "unsupported", "invalid_argument", "no_memory",
 * "model_error", "target_error"); "unknown" outside the enum. Static. */
CALHOST_RUNTIME_API const char *calhost_runtime_status_name(calhost_runtime_status status);

/* A thread count meaning every processing unit of the configured CPU set. */
#define CALHOST_RUNTIME_THREADS_MAX UINT32_MAX

/* How to open a runtime. Sized: call calhost_runtime_options_init first. */
typedef struct calhost_runtime_options {
  size_t struct_size;              /* sizeof(calhost_runtime_options), set by _init */
  const char *config_path;         /* the configuration file (calhost.ini syntax); NULL: the
                                      built-in defaults (no workloads, the default store path) */
  const char *store_path;          /* replaces the configuration's [store] path (as --store);
                                      NULL: [store] path, else libcalstore's default path */
  int force_portable;              /* -1 (default): the configuration's [lookup] force_portable;
                                      0: walk every level; 1: the portable levels only */
  const char *const *plugin_paths; /* plugin files to consider besides the configuration's
                                      [plugins] (may be NULL) */
  size_t plugin_path_count;
  const char *const *plugin_dirs; /* directories to search besides the configuration's */
  size_t plugin_dir_count;
  const char *config_text;   /* the configuration as text set in code (calhost.ini syntax;
                                used when config_path is NULL; relative paths in it resolve
                                against the current directory; messages name it
                                "<config_text>:LINE") */
  size_t config_text_length; /* its length in bytes */
  /* Since 0.2: the device of a device backend (one that lists devices,
   * plugin ABI 2) the keys are built for: its index or its identity, as
   * `calhost devices` prints them. NULL (default): the first device that
   * calibrate calibrates, the first listed one of the configuration's
   * [plugin NAME] devices (of all when absent). A backend without devices
   * refuses a device
   * (CALHOST_RUNTIME_TARGET). Keys are built exactly as calibrate built
   * them for that device. */
  const char *device;
} calhost_runtime_options;

/* Sets every field to its default (and struct_size). */
CALHOST_RUNTIME_API void calhost_runtime_options_init(calhost_runtime_options *options);

typedef struct calhost_runtime calhost_runtime;
typedef struct calhost_runtime_plugin calhost_runtime_plugin;

/* Opens a runtime: reads the configuration (options->config_path; options
 * NULL: every default), and opens the store (persistence as the
 * configuration's [store] says; a missing file is an empty store). Returns
 * CALHOST_RUNTIME_OK with *out set; CALHOST_RUNTIME_CONFIG ("FILE:LINE:
 * reason") or CALHOST_RUNTIME_STORE ("FILE:LINE: status: reason") with *out
 * NULL. Close with calhost_runtime_close. Misuse is
 * CALHOST_RUNTIME_INVALID_ARGUMENT, before any work and naming the field:
 * out NULL, struct_size too small, plugin_path_count or plugin_dir_count
 * above 0 with a NULL array or a NULL entry in it, config_text NULL with a
 * config_text_length above 0. Every function of this header writes err
 * only when err is not NULL and err_capacity > 0, and answers a NULL
 * handle with INVALID_ARGUMENT (or, without a status, NULL / 0 / nothing
 * done). */
CALHOST_RUNTIME_API calhost_runtime_status calhost_runtime_open(
    const calhost_runtime_options *options, calhost_runtime **out, char *err, size_t err_capacity);

/* Destroys every plugin instance, unloads the plugins, closes the store,
 * frees the runtime and sets *runtime to NULL. NULL-safe. */
CALHOST_RUNTIME_API void calhost_runtime_close(calhost_runtime **runtime);

/* The store the runtime reads (owned by the runtime): for a program that
 * also wants calstore's other functions (list, export, install overrides). */
CALHOST_RUNTIME_API calstore *calhost_runtime_store(calhost_runtime *runtime);

/* Whether selections use only the portable levels (the option, else the
 * configuration's [lookup] force_portable). */
CALHOST_RUNTIME_API int calhost_runtime_force_portable(const calhost_runtime *runtime);

/* Loads one plugin and creates its instance with the configuration's
 * [plugin NAME] settings (exactly as calibrate creates it):
 *   backend given: that backend (only it is loaded); workload may be NULL;
 *   backend NULL: the first enabled plugin that serves the operator of the
 *     configured workload `workload` (`calhost lookup --workload W` without
 *     --plugin asks every such plugin in turn, by name, until one selects
 *     a profile: do the same when several backends serve an operator;
 *     calhost_runtime_serving_backends lists them).
 * Where plugins are searched, in this order (within a directory, by file
 * name; the first plugin of a backend name wins, [plugins] enabled/disabled
 * filter by name):
 *   1. the files of [plugins] paths, then options.plugin_paths;
 *   2. CALHOST_PLUGIN_PATH (':'-separated; ignored in a set-id program);
 *   3. [plugins] directories, then options.plugin_dirs;
 *   4. the shared library's own prefix: <directory of
 *      libcalhost_runtime.so>/calhost/plugins (found with dladdr, so a
 *      prefix copied or moved elsewhere finds its own plugins; not in
 *      libcalhost_runtime_static.a);
 *   5. <directory of the program>/../lib/calhost/plugins;
 *   6. the plugin directory of the install prefix calhost was built for
 *      (<CMAKE_INSTALL_PREFIX>/<libdir>/calhost/plugins, by default
 *      /usr/local/lib/calhost/plugins).
 * In directories, only files named after the backend asked for (and, with
 * [plugins] enabled/disabled, after an allowed backend) are loaded to look
 * at; each file is checked and loaded in the calling thread, no child
 * process ("Processes and threads" above: a plugin crashing while it loads
 * ends the program). Returns CALHOST_RUNTIME_OK with *out (owned by
 * the runtime); CALHOST_RUNTIME_NOT_FOUND (no such workload; the backend
 * not found, or found and refused, with the reason; no plugin serves the
 * operator: the message lists the directories searched), or
 * CALHOST_RUNTIME_PLUGIN (create failed, with the plugin's message).
 * Loading the same backend twice returns the same plugin. */
CALHOST_RUNTIME_API calhost_runtime_status
calhost_runtime_load_plugin(calhost_runtime *runtime, const char *backend, const char *workload,
                            calhost_runtime_plugin **out, char *err, size_t err_capacity);

/* Since 0.4. The backends of every enabled plugin that serves the operator
 * of the configured workload `workload`, in the order
 * calhost_runtime_load_plugin (backend NULL) tries them, the search order
 * above (the first is the one it loads): the backends `calhost lookup
 * --workload W` without --plugin asks (calhost_runtime_load_plugin(runtime,
 * NAME, NULL, ...) and calhost_runtime_select for each); to choose among
 * them as calhost does (the configured order, else the race calibrate
 * recorded, else the first with a profile), call calhost_runtime_choose.
 * Only plugins that load here are listed (probed, checked and loaded as
 * load_plugin does; none is created). The discovery that loaded a plugin
 * for a workload serves, else the runtime makes one (once). Returns
 * CALHOST_RUNTIME_OK with *backends (*count names, possibly 0; owned by the
 * runtime: the array is valid until the next call of this function, the
 * names until calhost_runtime_close); NOT_FOUND (no such workload),
 * NO_MEMORY. */
CALHOST_RUNTIME_API calhost_runtime_status calhost_runtime_serving_backends(
    calhost_runtime *runtime, const char *workload, const char *const **backends, size_t *count,
    char *err, size_t err_capacity);

/* The loaded plugin's backend name and implementation version (owned by
 * the runtime). */
CALHOST_RUNTIME_API const char *calhost_runtime_plugin_backend(const calhost_runtime_plugin *p);
CALHOST_RUNTIME_API const char *
calhost_runtime_plugin_implementation(const calhost_runtime_plugin *p);

/* The plugin's validate_policy as a calstore_validator_fn (user: the
 * calhost_runtime_plugin *): 1 accepted, 0 refused with the plugin's
 * message in err. For calstore_install_override and friends. */
CALHOST_RUNTIME_API int calhost_runtime_validate_policy(void *plugin, const char *policy,
                                                        size_t length, char *err,
                                                        size_t err_capacity);

/* The keys of one workload on this machine and, after a selection, the
 * store's answer. Allocated by the library, freed with
 * calhost_runtime_selection_free; every string in it is its own. */
typedef struct calhost_runtime_selection {
  calstore_key exact;             /* the exact key (kind CALSTORE_KEY_EXACT) */
  calstore_key portable;          /* the portable key (kind CALSTORE_KEY_PORTABLE) */
  const char *workload;           /* the workload's name */
  uint32_t target_threads;        /* the target's thread count (the exact key's may be
                                     smaller: the plugin caps it) */
  int force_portable;             /* whether the selection skipped the exact levels */
  calstore_status status;         /* the lookup's status (CALSTORE_OK: a profile selected,
                                     CALSTORE_NOT_FOUND: none); unset by build_keys */
  calstore_lookup_result *result; /* profile, level and rejections; NULL from build_keys */
  /* since 0.2: the device the keys were built for (device backends), else
   * device_identity NULL */
  const char *device_identity;
  uint32_t device_index;
} calhost_runtime_selection;

/* Builds the exact and portable keys of the configured workload `workload`
 * for this machine (on the options' device, for a device backend: listed
 * in this process once per plugin; TARGET when it has no such device) with
 * `threads` threads (0: the configuration's first
 * thread count, else 1; CALHOST_RUNTIME_THREADS_MAX: every PU of the
 * configured CPU set) through the plugin's key-builder: the model file is
 * hashed (once per runtime), the target is the configured CPU set.
 * Returns CALHOST_RUNTIME_OK with *out (result NULL); NOT_FOUND (no such
 * workload), MODEL, TARGET, UNSUPPORTED (the plugin does not serve it, with
 * its message), PLUGIN (build_key failed or returned an unusable key). */
CALHOST_RUNTIME_API calhost_runtime_status calhost_runtime_build_keys(
    calhost_runtime *runtime, calhost_runtime_plugin *p, const char *workload, uint32_t threads,
    calhost_runtime_selection **out, char *err, size_t err_capacity);

/* Builds the keys (as calhost_runtime_build_keys) and selects the policy:
 * the store's precedence walk, each candidate policy checked by the
 * plugin's validator, only the portable levels when force_portable.
 * Returns CALHOST_RUNTIME_OK with *out whether or not a profile was
 * selected: (*out)->result->profile is the selected profile or NULL (use
 * the backend's default), with the rejections; errors as build_keys, and
 * CALHOST_RUNTIME_STORE when the lookup itself failed. */
CALHOST_RUNTIME_API calhost_runtime_status calhost_runtime_select(
    calhost_runtime *runtime, calhost_runtime_plugin *p, const char *workload, uint32_t threads,
    calhost_runtime_selection **out, char *err, size_t err_capacity);

/* Frees a selection (and its lookup result) and sets *selection to NULL.
 * NULL-safe. */
CALHOST_RUNTIME_API void calhost_runtime_selection_free(calhost_runtime_selection **selection);

/* ---- models (since 0.3) ---------------------------------------------------
 *
 * An ONNX model's nodes, each with the runtime workload that stands for it:
 * select a node's policy with calhost_runtime_select(runtime, plugin,
 * node->workload, ...) (plugin NULL-loaded with calhost_runtime_load_plugin
 * (runtime, NULL, node->workload, ...)). The keys follow the rule of
 * config/README.md ("Models"), exactly as `calibrate --model` stored them:
 * nodes of one structure share a workload; each operator's representative
 * structure (the largest share of the model's work) has the model's exact
 * key (model digest = the file's SHA-256, followed since 0.5 by ";dims="
 * and the binding when the nodes use symbolic dimensions: key_digest), every
 * other structure the exact key of its canonical description; each
 * structure has its portable key.
 * So a node gets the policy calibrated for its own shape on this machine
 * (exact), else the portable one of its structure (another machine, or
 * force_portable), else none (the backend's default). */
typedef struct calhost_runtime_model_node {
  const char *name;          /* the node's name in the model ("OP#INDEX" when it has none) */
  const char *onnx_operator; /* MatMul, Gemm or ReduceSum */
  const char *workload;      /* the runtime workload of the node's structure */
  int model_keyed; /* 1: its exact key's model digest is the model's; 0: its structure's */
} calhost_runtime_model_node;

typedef struct calhost_runtime_model {
  const char *path;   /* the file as given */
  const char *name;   /* the model's name: its workloads are "NAME.NODE" */
  const char *digest; /* "sha256:<64 hex>" of the file, as sha256sum prints it */
  const calhost_runtime_model_node *nodes; /* every node listed, in graph order */
  size_t node_count;
  size_t skipped_count; /* nodes of a served operator whose shapes are not static */
  /* since 0.5: */
  const char *binding;    /* the binding the listed nodes use, canonical ("batch=8,seq=128":
                             names sorted, a name that is not a plain word quoted); "" none */
  const char *unbound;    /* the symbolic dimensions left unbound that made nodes skip
                             ("batch, seq"); "" none. Not "": the model needs dims, and its
                             calibrated policies are those of a binding */
  const char *key_digest; /* the representative's exact model digest: digest, then
                             ";dims=" and binding when binding is not "" */
} calhost_runtime_model;

/* Since 0.3. calhost_runtime_add_model_with (below) with path, dims and no
 * name: the model's name is the file's base name without ".onnx"
 * (encoder.onnx gives "encoder", its workloads "encoder.NODE"), or
 * "encoder-2", "encoder-3", ... when another model took it (since 0.5:
 * two files of one base name coexist). Adding the same path with the same
 * dims again returns the model added first; other dims add another model
 * (since 0.5). Returns
 * CALHOST_RUNTIME_OK with *out (owned by the runtime, valid until
 * calhost_runtime_close); CALHOST_RUNTIME_MODEL ("PATH: reason", naming
 * the node at fault: not ONNX, truncated or truncated while it is read, a
 * node with missing inputs, ...), CALHOST_RUNTIME_INVALID_ARGUMENT (bad
 * dims; a '|' of several bindings is refused: one model is one binding),
 * CALHOST_RUNTIME_NO_MEMORY. */
CALHOST_RUNTIME_API calhost_runtime_status
calhost_runtime_add_model(calhost_runtime *runtime, const char *path, const char *dims,
                          const calhost_runtime_model **out, char *err, size_t err_capacity);

/* How to add a model (since 0.5). Sized: call
 * calhost_runtime_model_options_init first; fields are only appended. */
typedef struct calhost_runtime_model_options {
  size_t struct_size; /* sizeof(calhost_runtime_model_options), set by _init */
  const char *path;   /* the ONNX file (required) */
  const char *dims;   /* its symbolic dimensions, "batch=8, seq=128" (a name that is not a
                         plain word in double quotes: "\"past_sequence_length + 1\"=129"),
                         or NULL */
  const char *name;   /* the model's name ([A-Za-z0-9_.-]+; its workloads are NAME.NODE), or
                         NULL: the file's base name, made unique as add_model does */
} calhost_runtime_model_options;

/* Since 0.5. Sets every field to its default (NULL) and struct_size. */
CALHOST_RUNTIME_API void calhost_runtime_model_options_init(calhost_runtime_model_options *options);

/* Since 0.5. Reads the ONNX model at options->path bound by options->dims
 * and adds its nodes to the runtime as workloads under options->name. A
 * model is a file and a binding: the same path with the same dims (and
 * no name, or the same name) returns the model added first; the same path
 * with other dims is another model, with its own nodes, workloads and
 * exact key (key_digest). A name another model has is refused
 * (INVALID_ARGUMENT); without a name the file's base name is made unique
 * ("model", "model-2", ...), so files of one base name coexist. Returns
 * as calhost_runtime_add_model; INVALID_ARGUMENT also for a bad
 * struct_size or name. */
CALHOST_RUNTIME_API calhost_runtime_status calhost_runtime_add_model_with(
    calhost_runtime *runtime, const calhost_runtime_model_options *options,
    const calhost_runtime_model **out, char *err, size_t err_capacity);

/* ---- choosing the backend (since 0.5) -------------------------------------
 *
 * A workload (or a model's node) served by several backends gets the one
 * calibrate measured fastest on this machine: `calhost calibrate` races
 * the backends' winners of each structure interleaved in one child and
 * records the race in each entrant's profile (race_id, race_latency,
 * race_default_latency, race_entrants, race_rank; README, "Selection").
 * The rule, in order: the configured order ([model NAME] backends for a
 * model's nodes, else [lookup] backends: the first listed backend with a
 * profile; one name pins it); else the first-ranked backend of the latest
 * race recorded between two or more backends with a profile (exact
 * profiles: this machine's race; portable ones: the race of the machine
 * they came from): the fastest (also in a tie within the race's noise,
 * which the reason tells). A race compares the CPU backends, or the device backends of one
 * device, never both: when races of several devices answer (the CPU's and
 * a device's), the device of the first backend in
 * calhost_runtime_serving_backends's order that ran in its device's latest
 * race decides;
 * else (no race: one backend, or profiles from runs before races) the
 * first backend in calhost_runtime_serving_backends's order with a
 * profile; else none (use a backend's default). */

/* How the backend of a choice was chosen. */
typedef enum calhost_runtime_rule {
  CALHOST_RUNTIME_RULE_NONE = 0,       /* no backend has a profile */
  CALHOST_RUNTIME_RULE_CONFIGURED = 1, /* the configured order (a pin) */
  CALHOST_RUNTIME_RULE_RACE = 2,       /* the fastest in the latest race */
  CALHOST_RUNTIME_RULE_FIRST = 3,      /* no race: the first with a profile */
} calhost_runtime_rule;

/* One backend that was asked. */
typedef struct calhost_runtime_candidate {
  const char *backend;
  int has_profile;                /* its lookup selected a profile */
  int raced;                      /* ... that carries a race */
  double race_id;                 /* microseconds since the epoch; 0: none */
  double race_latency_us;         /* its winner's median in that race */
  double race_default_latency_us; /* its default's median in that race; NAN: none */
  const char *note;               /* why it could not answer (a load or key failure); NULL
                                     when it answered, with a profile or without */
  const char *policy;             /* its selected policy, NULL when none */
  calstore_level level;           /* where that policy came from */
  size_t rejection_count;         /* its lookup's rejected candidates */
  uint32_t race_rank;             /* its place in that race (1: chosen by it); 0: none */
  uint32_t race_tie;              /* in a tie: how many backends ended within the race's
                                     noise of the fastest (>= 2); 0: none */
} calhost_runtime_candidate;

/* The backend chosen for one workload, with the policy. Allocated by the
 * library, freed with calhost_runtime_choice_free; struct_size is
 * sizeof(calhost_runtime_choice) of the library (fields are only
 * appended). */
typedef struct calhost_runtime_choice {
  uint32_t struct_size;
  const char *backend;            /* chosen, NULL when none has a profile */
  calhost_runtime_plugin *plugin; /* its plugin (owned by the runtime), or NULL */
  /* the chosen backend's selection (keys, profile, rejections); none
   * chosen: the first backend's answer ("none"), or NULL. Freed with the
   * choice; a caller may take it (set the member NULL, then free it with
   * calhost_runtime_selection_free) */
  calhost_runtime_selection *selection;
  calhost_runtime_rule rule;
  const char *reason; /* one line: why this backend, with the race's figures */
  const calhost_runtime_candidate *candidates; /* every backend asked, loader order */
  size_t candidate_count;
} calhost_runtime_choice;

/* Since 0.5. Asks every enabled plugin serving the workload's operator
 * (calhost_runtime_serving_backends) for its selection with `threads` (as
 * calhost_runtime_select) and chooses the backend by the rule above.
 * Returns CALHOST_RUNTIME_OK with *out whether or not a backend was chosen
 * ((*out)->backend NULL: none); NOT_FOUND (no such workload, or no plugin
 * serves it), NO_MEMORY; a plugin that fails to load or select is a
 * candidate with a note, not an error, unless every one fails (then its
 * status and message). */
CALHOST_RUNTIME_API calhost_runtime_status calhost_runtime_choose(calhost_runtime *runtime,
                                                                  const char *workload,
                                                                  uint32_t threads,
                                                                  calhost_runtime_choice **out,
                                                                  char *err, size_t err_capacity);

/* Frees a choice and sets *choice to NULL. NULL-safe. */
CALHOST_RUNTIME_API void calhost_runtime_choice_free(calhost_runtime_choice **choice);

/* One node of a model with its chosen backend and policy. */
typedef struct calhost_runtime_node_choice {
  uint32_t struct_size;           /* sizeof(calhost_runtime_node_choice) of the library */
  const char *node;               /* the node's name */
  const char *workload;           /* its runtime workload */
  const char *backend;            /* NULL: no backend has a profile (use a backend's default) */
  calhost_runtime_plugin *plugin; /* the chosen backend's plugin, or NULL */
  const char *policy;             /* the chosen policy (NUL-terminated), or NULL */
  calstore_level level;           /* where the policy came from */
  calhost_runtime_rule rule;
  const char *reason;             /* as calhost_runtime_choice's */
  double race_latency_us;         /* the chosen backend's figure in the race; NAN: no race */
  double race_default_latency_us; /* its default's; NAN: none */
} calhost_runtime_node_choice;

/* The choice of every node of a model. */
typedef struct calhost_runtime_model_choice {
  uint32_t struct_size; /* sizeof(calhost_runtime_model_choice) of the library */
  const calhost_runtime_model *model;
  /* node_count entries of node_stride bytes each (node_stride is the
   * library's sizeof(calhost_runtime_node_choice): step by it) */
  const calhost_runtime_node_choice *nodes;
  size_t node_count;
  size_t node_stride;
  size_t chosen_count; /* nodes with a backend */
} calhost_runtime_model_choice;

/* Since 0.5. calhost_runtime_choose for every node of a model added with
 * calhost_runtime_add_model (once per structure: nodes of one structure
 * share a workload), with the model's [model NAME] backends as the
 * configured order when the configuration has that section. Returns
 * CALHOST_RUNTIME_OK with *out (free with calhost_runtime_model_choice_free)
 * whether or not every node has a backend; errors as calhost_runtime_choose. */
CALHOST_RUNTIME_API calhost_runtime_status calhost_runtime_choose_model(
    calhost_runtime *runtime, const calhost_runtime_model *model, uint32_t threads,
    calhost_runtime_model_choice **out, char *err, size_t err_capacity);

/* Frees a model choice and sets *choice to NULL. NULL-safe. */
CALHOST_RUNTIME_API void calhost_runtime_model_choice_free(calhost_runtime_model_choice **choice);

#ifdef __cplusplus
}
#endif

#endif /* CALHOST_RUNTIME_H */
