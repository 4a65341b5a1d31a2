/*
 * binding.h: the binding between the configuration, the loader, this
 * machine and the store: the one owner of each step that calibrate, lookup,
 * override, plugin check and the deployment runtime (runtime.h) share:
 *   - config -> loader options (plugin directories, files, enabled/disabled);
 *   - the store options and their precedence (--store > [store] path >
 *     libcalstore's default path; [store] persistence_enabled always holds)
 *     and opening the store with a diagnostic naming the file and line;
 *   - a configured workload -> the plugin ABI's calhost_workload, a target
 *     of this machine -> calhost_target, an empty calhost_built_key;
 *   - a key the plugin built -> the store's keys (exact and portable),
 *     converting calhost_property to calstore_property (never a cast);
 *   - building and judging a key (runtime_binding_build_key: build_key,
 *     the plugin's error, the rule of a usable key, the build-twice
 *     determinism check with base's key copy and comparison, base/key.h);
 *   - the plugin's validate_policy as a calstore_validator_fn;
 *   - creating a plugin instance with its [plugin NAME] settings.
 * Internal to the host (the public face is include/calhost/runtime.h).
 */
#ifndef CALHOST_RUNTIME_BINDING_H
#define CALHOST_RUNTIME_BINDING_H

#include <stddef.h>
#include <stdint.h>

#include "calhost/calstore.h"
#include "calhost/plugin.h"
#include "config/config.h"
#include "loader/loader.h"
#include "processor/processor.h"

/* Fills *lo (after loader_options_init) with the configuration's
 * plugin directories, explicit plugin files and enabled / disabled lists.
 * The arrays stay the configuration's (borrowed: keep cfg alive). */
void runtime_binding_loader_options(const config_settings *cfg, loader_options *lo);

/* Fills *opts (calstore_options_init first) from the configuration's
 * [store] with the one precedence rule: store_path (the --store flag, may
 * be NULL) > [store] path > libcalstore's default path (opts->path NULL);
 * persistence_enabled from [store]. Strings are borrowed. */
void runtime_binding_store_options(const config_settings *cfg, const char *store_path,
                                   calstore_options *opts);

/* Opens the store of runtime_binding_store_options. Returns the status of
 * calstore_open; *out gets the handle (possibly empty on failure: close it).
 * On failure why (may be NULL) gets one line naming the file and line:
 * "PATH[:LINE]: STATUS: message", with a repair hint for a malformed file. */
calstore_status runtime_binding_open_store(const config_settings *cfg, const char *store_path,
                                           calstore **out, char *why, size_t cap);

/* The one wording of a store failure: "PATH[:LINE]: STATUS: message" (+
 * the repair hint for a malformed file or an unknown version) into buf;
 * path_if_none names the file when err carries none. */
void runtime_binding_store_error(char *buf, size_t cap, calstore_status st,
                                 const calstore_error *err, const char *path_if_none);

/* The store's lookup options for a key: its backend, operator,
 * implementation, model digest, processor and thread count, the
 * structure of `portable` (NULL: key's own; an exact key carries none, so
 * a selection passes its portable key), and force_portable as given. The
 * one way the host fills calstore_lookup_options from a key (the
 * runtime's select, `calhost lookup`'s key form); the strings stay the
 * keys'. */
calstore_lookup_options runtime_binding_lookup_options(const calstore_key *key,
                                                       const calstore_key *portable,
                                                       int force_portable);

/* The plugin's [plugin NAME] settings (NULL / 0 when the configuration has
 * no such section). */
void runtime_binding_plugin_settings(const config_settings *cfg, const char *backend,
                                     const calhost_property **settings, size_t *count);

/* Creates an instance of p with its [plugin NAME] settings through the
 * loader's guarded call. Returns the plugin's status; on failure *inst is
 * NULL and the plugin's message (if any) is in the loader's error slot
 * (loader_plugin_take_error). */
calhost_status runtime_binding_create(const config_settings *cfg, loader_plugin *p,
                                      calhost_plugin_instance **inst);

/* Why creating p's instance failed with status st, in why: "create failed:
 * STATUS: the plugin's message" (taken from p's error slot), and, with
 * name_settings, when the plugin was given [plugin NAME] settings, where
 * they are ("(its settings: [plugin NAME] at FILE:LINE)"): a setting the
 * plugin refuses is then found in the file (`config check --plugins`
 * names the section itself). The one wording of calibrate's child, the
 * device listing, the deployment runtime and config check. */
void runtime_binding_create_failure(const config_settings *cfg, loader_plugin *p, calhost_status st,
                                    int name_settings, char *why, size_t cap);

/* Whether p serves operator op. */
int runtime_binding_serves(const loader_plugin *p, const char *op);

/* The plugin ABI's view of a configured workload (strings borrowed from w;
 * dtype defaults to "float32"). The model digest must have been computed
 * (config_workload_digest) when the workload has a model file. */
void runtime_binding_workload(const config_workload *w, calhost_workload *out);

/* The plugin ABI's view of target i of a target list (borrowed). */
void runtime_binding_target(const processor_target_list *targets, size_t i, calhost_target *out);

/* The targets of the configuration's CPU set (cfg->cpus) and these thread
 * counts (processor_targets); a listed CPU this process may not run on is
 * named with the origin of `cpus` ("FILE:LINE: CPU 5 of the configured set
 * ..."). Returns 0, or -1 with the reason in err. */
int runtime_binding_targets(const config_settings *cfg, const uint32_t *thread_counts,
                            size_t thread_count_count, processor_target_list *out, char *err,
                            size_t cap);

/* The plugin ABI's view of target i on a device (since ABI 2): as
 * runtime_binding_target, with device_identity and device_index set and
 * processor = the device identity (what plugin.h promises for a device
 * target). identity is borrowed. */
void runtime_binding_device_target(const processor_target_list *targets, size_t i,
                                   const char *identity, uint32_t index, calhost_target *out);

/* An empty built key with its struct header, ready for build_key. */
void runtime_binding_built_key_init(calhost_built_key *k);

/* What makes a key a plugin built unusable, by the one rule of a usable key:
 * a complete exact part (model digest, processor, thread count >= 1) and at
 * least one structure property, each with a non-empty name and a value.
 * The first defect in that order is reported. */
typedef enum runtime_binding_key_defect {
  RUNTIME_BINDING_KEY_USABLE = 0,
  RUNTIME_BINDING_KEY_NO_MODEL_DIGEST = 1, /* NULL or empty */
  RUNTIME_BINDING_KEY_NO_PROCESSOR = 2,    /* NULL or empty */
  RUNTIME_BINDING_KEY_NO_THREADS = 3,      /* thread_count 0 */
  RUNTIME_BINDING_KEY_NO_STRUCTURE = 4,    /* no structure property */
  RUNTIME_BINDING_KEY_EMPTY_PROPERTY = 5,  /* a property with no name or a NULL value */
  /* what runtime_binding_build_key reports besides the key's defects */
  RUNTIME_BINDING_KEY_UNSUPPORTED = 6,       /* build_key returned CALHOST_UNSUPPORTED */
  RUNTIME_BINDING_KEY_BUILD_FAILED = 7,      /* build_key returned another error status */
  RUNTIME_BINDING_KEY_NOT_DETERMINISTIC = 8, /* check_twice: the second call gave another key, or
                                                failed */
  RUNTIME_BINDING_KEY_NO_MEMORY = 9,
} runtime_binding_key_defect;

/* The first defect of k by the rule above; for
 * RUNTIME_BINDING_KEY_EMPTY_PROPERTY, *property (when not NULL) is the
 * index of the first such property. `calhost plugin check` words each
 * defect on its own; runtime_binding_key_usable words them for a run. */
runtime_binding_key_defect runtime_binding_key_defect_of(const calhost_built_key *k,
                                                         size_t *property);

/* Checks a key a plugin built by runtime_binding_key_defect_of. Returns 1,
 * or 0 with why ("build_key returned an incomplete exact key", "... no
 * portable structure", "... an empty structure property"). */
int runtime_binding_key_usable(const calhost_built_key *k, char *why, size_t cap);

/* The one way the host builds and judges a key (the calibrate child, the
 * deployment runtime, `calhost plugin check`): workload -> target ->
 * p's build_key (through the loader: loader_plugin_build_key) -> the
 * plugin's error -> usable? (runtime_binding_key_defect_of) -> with
 * check_twice, built a second time and compared (a key must be a function
 * of the workload and the target: one that changes between calls would
 * store a profile no lookup finds). The comparison is the one rule of
 * host/base/key.c (base_key_differs: every field, structure
 * properties by name in any order; a second call that fails counts as a
 * difference). The second call is made only for a usable key.
 * Returns RUNTIME_BINDING_KEY_USABLE or what is wrong, the first in this
 * order: UNSUPPORTED / BUILD_FAILED (build_key's status), a defect of the
 * key (1-5), NO_MEMORY (the copy the comparison needs), NOT_DETERMINISTIC.
 * *out: the key as last built (runtime_binding_built_key_init'ed first;
 * its strings are the plugin's, valid only until its next call: the caller
 * copies what it keeps, e.g. base_key_copy). *status (may be
 * NULL): the status of the last build_key call (CALHOST_OK when it
 * returned OK; after NOT_DETERMINISTIC, the second call's: not CALHOST_OK
 * when it failed). why (may be NULL, cap 0) receives only the detail, each
 * caller words its own message around it:
 *   UNSUPPORTED, BUILD_FAILED  the plugin's message (taken from p's error
 *                              slot, loader_plugin_take_error), "" when none;
 *   1-5                        runtime_binding_key_usable's text ("build_key
 *                              returned an incomplete exact key", ...);
 *   NOT_DETERMINISTIC          the first difference as base_key_differs
 *                              words it ("processor 'x', then 'y'"), or "a
 *                              key, then a failure" (the second call's
 *                              message, if any, is left in p's error slot
 *                              for the caller: loader_plugin_take_error);
 *   NO_MEMORY                  "out of memory";
 *   USABLE                     "".
 * p must be loaded, inst its instance. */
runtime_binding_key_defect
runtime_binding_build_key(loader_plugin *p, calhost_plugin_instance *inst,
                          const calhost_workload *w, const calhost_target *t, int check_twice,
                          calhost_built_key *out, calhost_status *status, char *why, size_t cap);

/* A store key and the storage for its converted structure. */
typedef struct runtime_binding_key {
  calstore_key key;
  calstore_property *structure; /* malloc'd (portable keys), converted from the built key */
} runtime_binding_key;

/* The store key of a built key (strings borrowed from the arguments; the
 * structure array is converted into a new array owned by *out). kind
 * CALSTORE_KEY_EXACT takes model digest, processor and thread count;
 * CALSTORE_KEY_PORTABLE takes the structure. Returns 0, or -1 out of
 * memory. Free with runtime_binding_key_free. */
int runtime_binding_store_key(calstore_key_kind kind, const char *backend,
                              const char *operator_name, const char *implementation,
                              const char *model_digest, const char *processor,
                              uint32_t thread_count, const calhost_property *structure,
                              size_t structure_count, runtime_binding_key *out);

/* Frees what runtime_binding_store_key allocated. NULL-safe. */
void runtime_binding_key_free(runtime_binding_key *k);

/* A plugin instance as a store validator: user of runtime_binding_validate. */
typedef struct runtime_binding_validator {
  loader_plugin *plugin;
  calhost_plugin_instance *instance;
} runtime_binding_validator;

/* calstore_validator_fn over the plugin's validate_policy (user: a
 * runtime_binding_validator): 1 accepted, 0 refused with the plugin's
 * message (a policy over CALHOST_POLICY_MAX_LENGTH is refused unasked). */
int runtime_binding_validate(void *user, const char *policy, size_t length, char *err, size_t cap);

#endif /* CALHOST_RUNTIME_BINDING_H */
