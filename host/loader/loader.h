/*
 * loader.h: the host's plugin loader (internal to calhost, not installed).
 *
 * Owns discovery (configured directories, CALHOST_PLUGIN_PATH, explicit
 * paths, the build tree's or installation's lib/calhost/plugins), the safety
 * checks (owner and mode of the file and of every directory above it), the
 * probe of each plugin in a forked child when the program is single-threaded
 * (a plugin that crashes or hangs while negotiating is reported, never loaded
 * in the host), negotiation of the ABI, in-process loading of the plugins that
 * passed, the host-services table handed to each plugin, and every in-process
 * call into a plugin (calls.c: the stdout guard and the exit guard).
 *
 * Typical use (the sweep engine, `calhost plugins`):
 *
 *   loader_options o;
 *   loader_options_init(&o);
 *   o.config_dirs = cfg.plugin_dirs; o.config_dir_count = cfg.plugin_dir_count;
 *   o.services.is_cancelled = my_cancel; o.services.user = my_state;
 *   loader_plugin_list list;
 *   loader_discover(&o, &list);
 *   for (size_t i = 0; i < list.count; i++) {
 *     loader_plugin *p = list.items[i];
 *     if (!p->loaded) { printf("%s: %s\n", p->path, p->reason); continue; }
 *     if (CALHOST_PLUGIN_HAS(p, default_policy)) p->vtable.default_policy(...);
 *   }
 *   loader_plugin_list_free(&list);
 *
 * Everything returned is owned by the list and valid until
 * loader_plugin_list_free. A list is used from one thread at a time; lists
 * of their own may be discovered and used on several threads at once.
 *
 * Probing forks (options.probe, the default): fork() in a process with more
 * than one thread is unsafe (the child may hang or die inside the dynamic
 * linker's or malloc's locks that another thread held), so only a
 * single-threaded program probes (the calhost command line); a library
 * (the deployment runtime) sets probe = 0, and the checks and the load run
 * in the calling thread. With probing, do not reap children you did not
 * start (a SIGCHLD handler calling waitpid(-1, ...) would steal the probe's
 * status). Plugin calls in this process: see "Calling a loaded plugin in
 * this process" below (the stdout guard, the exit guard).
 */
#ifndef CALHOST_LOADER_H
#define CALHOST_LOADER_H

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "calhost/plugin.h"
#include "entries.h"

#if defined(__GNUC__) && !defined(_WIN32)
#define CALHOST_LOADER_HIDDEN __attribute__((visibility("hidden")))
#else
#define CALHOST_LOADER_HIDDEN
#endif

struct loader_module;

/* A ticket lock (first come, first served: a thread taking it in a loop
 * cannot starve another). For short critical sections only (a waiter
 * yields the processor, it does not sleep). Zero-initialised is unlocked. */
typedef struct loader_ticket_lock {
  atomic_uint next, serving;
} loader_ticket_lock;
CALHOST_LOADER_HIDDEN void loader_ticket_lock_acquire(loader_ticket_lock *l);
CALHOST_LOADER_HIDDEN void loader_ticket_lock_release(loader_ticket_lock *l);

/* ---- Host services -----------------------------------------------------
 * What the caller can plug into the calhost_host_services table the loader
 * gives each plugin. Every callback is optional (NULL: the loader's default);
 * `user` is passed back to each. The loader keeps one context per plugin, so
 * messages and errors are attributed to their backend. */
typedef struct loader_services_hooks {
  void *user;
  /* Log sink. Default: "calhost: [backend] LEVEL: message" on stderr for
   * levels >= min_log_level. backend may be NULL (before identity is known). */
  void (*log)(void *user, const char *backend, calhost_log_level level, const char *message);
  calhost_log_level min_log_level; /* default loader_log_level_default() */
  /* Cancellation: the plugin sees cancellation when *cancel_flag != 0 or
   * is_cancelled(user) != 0. Both may be set; both may be NULL (never). */
  volatile sig_atomic_t *cancel_flag;
  int (*is_cancelled)(void *user);
  /* Progress of a long plugin call. Default: ignored. */
  void (*progress)(void *user, const char *backend, double fraction, const char *what);
} loader_services_hooks;

/* The context behind a plugin's calhost_host_services (one per plugin,
 * embedded in loader_plugin, so its address is stable). */
typedef struct loader_services_context {
  const loader_services_hooks *hooks; /* borrowed from the options copy in the list */
  const char *backend;                /* the plugin's backend name, or NULL */
  /* set_error may be called from any thread of the plugin: error and
   * has_error are written under a ticket lock; take_error copies the
   * message out to `taken` under it. */
  loader_ticket_lock lock;
  char error[1024]; /* last set_error message, "" when none */
  int has_error;
  char taken[1024]; /* what loader_services_take_error returned last */
} loader_services_context;

/* Fills *table with the loader's host-services implementation bound to ctx
 * (log, set_error, is_cancelled, progress, allocate, free_memory). ctx must
 * outlive every use of the table. hooks may be NULL (defaults). */
CALHOST_LOADER_HIDDEN void loader_services_init(calhost_host_services *table,
                                                loader_services_context *ctx,
                                                const loader_services_hooks *hooks,
                                                const char *backend);

/* Returns the message the plugin attached with set_error since the last
 * call (a copy inside ctx, valid until the next call of this function) and
 * clears it; returns NULL when there is none. Safe against set_error on
 * other threads; call it from one host thread. */
CALHOST_LOADER_HIDDEN const char *loader_services_take_error(loader_services_context *ctx);

/* The level below which plugin log messages are dropped by default: the
 * CALHOST_LOG_LEVEL environment variable (debug, info, warning, error) when
 * set to one of those words, else warning; lowered to debug after
 * loader_log_set_verbose(1) (the CLI's --verbose). */
CALHOST_LOADER_HIDDEN calhost_log_level loader_log_level_default(void);
/* Process-wide: verbose != 0 makes loader_log_level_default() debug. */
CALHOST_LOADER_HIDDEN void loader_log_set_verbose(int verbose);
/* Parses a level word (case-insensitive); returns 0 and sets *out, or -1. */
CALHOST_LOADER_HIDDEN int loader_log_level_parse(const char *word, calhost_log_level *out);
/* "debug", "info", "warning", "error". */
CALHOST_LOADER_HIDDEN const char *loader_log_level_name(calhost_log_level level);

/* ---- Options -------------------------------------------------------- */

typedef struct loader_options {
  /* Directories from the configuration ([plugins] directories), scanned in
   * order, each listing sorted by name. Borrowed for the call. */
  char *const *config_dirs;
  size_t config_dir_count;
  /* Explicit plugin files ([plugins] paths, tests, `plugin check`). */
  char *const *explicit_paths;
  size_t explicit_path_count;
  /* Honour CALHOST_PLUGIN_PATH (':'-separated directories or files; read with
   * secure_getenv, so ignored under elevated privileges). Default 1. */
  int use_environment;
  /* Add the default directories (loader_default_dirs): <dir of
   * /proc/self/exe>/../lib/calhost/plugins (the build tree and a relocated
   * installation) and the configured installation's
   * <prefix>/<libdir>/calhost/plugins. Default 1. */
  int use_default_dirs;
  /* Backend filters from the configuration: enabled (empty: all) and
   * disabled. A filtered plugin is listed as rejected "disabled by
   * configuration" and not loaded. Borrowed for the call. */
  char *const *enabled;
  size_t enabled_count;
  char *const *disabled;
  size_t disabled_count;
  /* Probe each plugin in a forked child before loading it. Default 1: for
   * a single-threaded program only (fork in a multi-threaded process is
   * unsafe; the runtime sets 0). 0: no child; the identity comes from the
   * in-process load (every candidate file is loaded to learn its backend,
   * then unloaded when it is filtered out or a duplicate). Timeout of one
   * probe in seconds; default 10. Windows: never a probe (no fork there). */
  int probe;
  double probe_timeout_seconds;
  /* With enabled or disabled set: a file found in a directory (not an
   * explicit path) whose name, less the module suffix, is a backend the
   * filters refuse is listed as disabled without being loaded (its backend
   * left unknown), taking the file to be named after its backend as
   * calhost_add_plugin and the SDK name them; an explicit file, and a file
   * whose name the filters allow, is loaded and filtered by its real
   * backend name as usual. For probe == 0, where learning a backend name
   * means loading the file into this process. Default 0. */
  int filter_by_file_name;
  /* Load the plugins that passed into this process (dlopen + negotiate).
   * 0: discover and probe only (identity still filled in). Default 1. */
  int load;
  /* The host's ABI range offered in negotiation. Default
   * [CALHOST_ABI_VERSION_MIN, CALHOST_ABI_VERSION]; tests narrow or widen it. */
  uint32_t host_abi_min, host_abi_max;
  /* Hooks for the host services (copied into the list). */
  loader_services_hooks services;
} loader_options;

/* Fills *o with the defaults described above. */
CALHOST_LOADER_HIDDEN void loader_options_init(loader_options *o);

/* ---- Results ------------------------------------------------------------ */

/* Where a plugin was found. */
typedef enum loader_plugin_origin {
  CALHOST_ORIGIN_EXPLICIT = 0,    /* explicit_paths */
  CALHOST_ORIGIN_ENVIRONMENT = 1, /* CALHOST_PLUGIN_PATH */
  CALHOST_ORIGIN_CONFIG = 2,      /* config_dirs */
  CALHOST_ORIGIN_DEFAULT = 3,     /* build tree / installation */
} loader_plugin_origin;

/* Where a plugin record stands: decide on this, never on the reason's
 * words (the reason is the message beside it). */
typedef enum loader_plugin_state {
  CALHOST_PLUGIN_FOUND = 0,      /* probed fine, not loaded (load == 0) or not yet */
  CALHOST_PLUGIN_LOADED = 1,     /* in this process, vtable usable */
  CALHOST_PLUGIN_UNSAFE = 2,     /* refused by the owner/mode checks */
  CALHOST_PLUGIN_UNLOADABLE = 3, /* cannot be loaded, negotiation failed, crashed or hung */
  CALHOST_PLUGIN_DUPLICATE = 4,  /* another file already provides its backend */
  CALHOST_PLUGIN_DISABLED = 5,   /* filtered out by the enabled/disabled lists */
} loader_plugin_state;

/* The state's name as `calhost plugins --json` prints it: "found",
 * "loaded", "unsafe", "unloadable", "duplicate", "disabled" (a static
 * string; "unknown" for a value outside the enum). */
const char *loader_plugin_state_name(loader_plugin_state state);

/* One discovered plugin. Strings are owned by the record (NULL when not
 * known, e.g. backend of a file without entry point). */
typedef struct loader_plugin {
  char *path; /* as found (made absolute); realpath when it resolves */
  loader_plugin_origin origin;
  loader_plugin_state state;
  char *backend;
  char *implementation_version;
  char *description;
  char **operators; /* operator_count strings */
  size_t operator_count;
  uint32_t abi_version;                    /* chosen in negotiation; 0 when none */
  uint32_t plugin_abi_min, plugin_abi_max; /* as the plugin reported; 0 unknown */
  int loaded;                              /* 1: in this process, vtable usable */
  char *reason; /* why rejected (one line, NUL-terminated); NULL when loaded
                   or when only probed (load == 0) and fine */
  /* Valid when loaded: a copy of the plugin's vtable, zero-filled past the
   * plugin's struct_size, so an entry the plugin did not compile is NULL. */
  calhost_plugin_vtable vtable;
  calhost_host_services services;       /* the table handed to the plugin */
  loader_services_context services_ctx; /* its context */
  struct loader_module *module;         /* NULL when not loaded */
  loader_services_hooks hooks;          /* this plugin's copy of the hooks */
} loader_plugin;

typedef struct loader_plugin_list {
  loader_plugin **items; /* count records, in discovery order */
  size_t count;
  loader_services_hooks hooks; /* the options' hooks (each record has its copy) */
} loader_plugin_list;

/* True when a loaded plugin's vtable entry `field` may be called: the
 * plugin is loaded and CALHOST_VTABLE_CALLABLE (entries.h: since-version,
 * struct size, pointer) says so. Use before calling any OPTIONAL entry. */
#define CALHOST_PLUGIN_HAS(p, field)                                                               \
  ((p)->loaded && CALHOST_VTABLE_CALLABLE(&(p)->vtable, (p)->abi_version, field))

/* Discovers, checks, probes and (when o->load) loads every plugin the
 * options name, into *out (always initialised; free with
 * loader_plugin_list_free). Never stops at a bad plugin: each failure is in
 * its record's reason. Order: explicit paths, CALHOST_PLUGIN_PATH, config
 * dirs, default dirs; each directory listing sorted; the same file found twice
 * is listed once; a second plugin with an already-seen backend is rejected
 * naming both files. Returns the number of loaded plugins (or probed-OK ones
 * when !o->load), or -1 on allocation failure. */
CALHOST_LOADER_HIDDEN int loader_discover(const loader_options *o, loader_plugin_list *out);

/* The default plugin directories (options.use_default_dirs), in the order
 * loader_discover searches them after the configured ones:
 *   <prefix>/lib/calhost/plugins and <prefix>/<the install's plugin
 *   directory, relative> ("the program's prefix": <prefix> is the canonical
 *   parent of the program's directory; both NULL when it is unknown), then
 *   the plugin directory of the install prefix the build was configured
 *   for ("the build's install prefix"; CALHOST_INSTALLED_PLUGIN_DIR, defined
 *   once, in host/loader/CMakeLists.txt).
 * The one list behind the loader's search and every message that names
 * where plugins were searched (the runtime's "searched: ..."). The paths
 * are malloc'd (a NULL path is skipped); free with loader_default_dirs_free. */
#define LOADER_DEFAULT_DIR_COUNT 3
typedef struct loader_default_dir {
  char *path;       /* as given, not yet canonical; may not exist */
  const char *what; /* what it is, for messages (static) */
} loader_default_dir;
CALHOST_LOADER_HIDDEN void loader_default_dirs(loader_default_dir dirs[LOADER_DEFAULT_DIR_COUNT]);
CALHOST_LOADER_HIDDEN void
loader_default_dirs_free(loader_default_dir dirs[LOADER_DEFAULT_DIR_COUNT]);

/* Checks, probes and loads one file as loader_discover would (no
 * duplicate check, no enabled/disabled filter). hooks NULL: o->services.
 * Returns a new record (free with loader_plugin_free), or NULL on
 * allocation failure. */
CALHOST_LOADER_HIDDEN loader_plugin *
loader_open(const loader_options *o, const loader_services_hooks *hooks, const char *path);

/* Unloads a loaded plugin (dlclose); the record keeps its identity, loaded
 * becomes 0 and the vtable is zeroed. The caller must have destroyed every
 * instance first. NULL-safe. */
CALHOST_LOADER_HIDDEN void loader_unload(loader_plugin *p);

/* Unloads and frees one record. NULL-safe. */
CALHOST_LOADER_HIDDEN void loader_plugin_free(loader_plugin *p);

/* Unloads and frees every record and zeroes *list. NULL-safe. */
CALHOST_LOADER_HIDDEN void loader_plugin_list_free(loader_plugin_list *list);

/* The loaded (or probed-OK) plugin of a backend, or NULL. */
CALHOST_LOADER_HIDDEN loader_plugin *loader_plugin_list_find(const loader_plugin_list *list,
                                                             const char *backend);

/* The message the plugin attached with set_error during its last failing
 * call, cleared by this call; NULL when none. Valid until the next call into
 * the plugin. */
CALHOST_LOADER_HIDDEN const char *loader_plugin_take_error(loader_plugin *p);

/* ---- Calling a loaded plugin in this process ---------------------------
 * Every call the host makes into a plugin in its own process goes through
 * these (and loading and unloading, whose constructors, destructors and
 * entry point are plugin code too): each is recorded as the calling
 * thread's current plugin call (loader_call) for the exit guard, and runs
 * inside the stdout guard when the program turned it on. Thread-safe: any
 * number of threads may make plugin calls at once (a plugin's own rules,
 * plugin.h, say which calls it allows concurrently). */

/* The stdout guard. Off by default, so a library built on the loader (the
 * deployment runtime) never rewires its program's file descriptors. A
 * program that owns its standard output and must keep it clean (the calhost
 * command line: `lookup --json`, `plugins --json`) turns it on once, with
 * on != 0; from then on every plugin call runs with fd 1 pointed at stderr
 * (stdout flushed first), so a plugin that prints cannot corrupt the
 * program's output. Nested and concurrent calls share one redirection,
 * counted under a lock: the first saves fd 1, the last restores it, so
 * threads cannot leave stdout on stderr (while any plugin call runs, every
 * thread's stdout goes to stderr: a program writing stdout from other
 * threads should leave the guard off). Stands aside in an isolated child
 * (isolate.h), whose stdout is a capture pipe already. */
CALHOST_LOADER_HIDDEN void loader_stdout_guard_enable(int on);
/* Enters the guard; returns the token loader_stdout_guard_end takes (0: the
 * guard is off, stands aside, or fd 1 could not be saved). */
CALHOST_LOADER_HIDDEN int loader_stdout_guard_begin(void);
/* Leaves the guard entered with token; the last one out flushes stdout and
 * restores fd 1. */
CALHOST_LOADER_HIDDEN void loader_stdout_guard_end(int token);

/* One plugin call of the calling thread: begin records it as the thread's
 * current call (nested calls stack) and enters the stdout guard; end
 * leaves both. entry names the call ("create", "build_key", "list_device",
 * ...; "loading" and "unloading" for dlopen and dlclose) and, like plugin,
 * must outlive the call. Used by every wrapper below and by any host code
 * calling a vtable entry directly (the runtime's device listing). */
typedef struct loader_call {
  const struct loader_plugin *plugin;
  const char *entry;
  int guard; /* the stdout guard's token */
  struct loader_call *outer;
} loader_call;
CALHOST_LOADER_HIDDEN void loader_call_begin(loader_call *c, const struct loader_plugin *plugin,
                                             const char *entry);
CALHOST_LOADER_HIDDEN void loader_call_end(loader_call *c);
/* The calling thread's innermost plugin call, or NULL outside any. */
CALHOST_LOADER_HIDDEN const loader_call *loader_call_current(void);

/* The exit guard, for a program (the calhost command line; never a library:
 * it changes how the process exits). Installs, once per process (later
 * calls do nothing), an exit handler (on_exit with glibc, else atexit): when
 * the thread calling exit() is inside a plugin call (a vendor library
 * exiting on a fatal error in create()), it prints "calhost: error: plugin
 * 'NAME' (PATH) called exit(STATUS) in create(): calhost stops here, with
 * what it was doing not done" on stderr and ends the process with
 * LOADER_EXIT_GUARD_STATUS at once (_exit: the program's state is what the
 * plugin left mid-call), so a command never reports success for work it
 * did not do. Handlers registered after it (the plugin's own) run first.
 * _exit, quick_exit and signals are not seen. Stands aside in an isolated
 * child (isolate_run reports the early exit). Returns 0, or -1 when the
 * handler could not be registered. */
#define LOADER_EXIT_GUARD_STATUS 2
CALHOST_LOADER_HIDDEN int loader_exit_guard_install(void);

/* create() with the plugin's services; CALHOST_OK with *out set, else the
 * plugin's status (CALHOST_ERROR when it said OK without an instance) and
 * *out NULL. p must be loaded. */
CALHOST_LOADER_HIDDEN calhost_status loader_plugin_create(loader_plugin *p,
                                                          const calhost_property *settings,
                                                          size_t setting_count,
                                                          calhost_plugin_instance **out);
/* destroy(); NULL-safe for inst. */
CALHOST_LOADER_HIDDEN void loader_plugin_destroy(loader_plugin *p, calhost_plugin_instance *inst);
/* build_key(); the key's strings belong to the plugin until its next call. */
CALHOST_LOADER_HIDDEN calhost_status loader_plugin_build_key(loader_plugin *p,
                                                             calhost_plugin_instance *inst,
                                                             const calhost_workload *w,
                                                             const calhost_target *t,
                                                             calhost_built_key *key);
/* validate_policy(). */
CALHOST_LOADER_HIDDEN calhost_status loader_plugin_validate(loader_plugin *p,
                                                            calhost_plugin_instance *inst,
                                                            const char *policy, size_t length,
                                                            char *err, size_t cap);

/* ---- Lower-level pieces (also used by `calhost plugin check`, check/) -- */

/* Checks that path is a regular file owned by root or the effective user,
 * not writable by group or others, and that every directory above it (from
 * "/", through fds) is owned by root or the effective user and not writable
 * by group or others (a sticky directory such as /tmp is allowed above the
 * plugin's own directory). Returns 0; -1 when the file is refused (unsafe),
 * with a one-line reason in err; -2 when it could not be checked at all (it
 * does not exist, or a resource ran out: "cannot open ...: Too many open
 * files"), with the system's reason in err. Windows (safety_win32.c): no
 * owner or mode checks (ACLs are not read); -1 for a directory or a
 * reparse point (symbolic link, junction), -2 for a missing file. */
CALHOST_LOADER_HIDDEN int loader_check_path(const char *path, char *err, size_t err_cap);

/* Negotiates with an opened module: looks up the entry point, offers
 * [host_min, host_max] and services, validates the reply and the vtable
 * (identity, struct_size, every REQUIRED entry). On success fills
 * *vtable_copy (zero-filled past the plugin's struct_size) and *chosen and
 * returns CALHOST_NEGOTIATE_OK (0); else one of the negative results below
 * (decide on it, never on the words) with the reason in err, e.g.
 * "plugin supports ABI 2..3, host supports 1..1" (CALHOST_NEGOTIATE_FAILED)
 * or "required vtable entry 'validate_policy' is missing"
 * (CALHOST_NEGOTIATE_MISSING_ENTRY). plugin_min/max get the plugin's range
 * when it answered (else 0). */
enum {
  CALHOST_NEGOTIATE_OK = 0,
  CALHOST_NEGOTIATE_FAILED = -1,        /* no entry point, no common ABI, bad reply or vtable */
  CALHOST_NEGOTIATE_BAD_IDENTITY = -2,  /* backend name, version, operators or description */
  CALHOST_NEGOTIATE_MISSING_ENTRY = -3, /* a REQUIRED entry of the chosen ABI is NULL */
};
CALHOST_LOADER_HIDDEN int loader_negotiate(struct loader_module *module, uint32_t host_min,
                                           uint32_t host_max, const calhost_host_services *services,
                                           calhost_plugin_vtable *vtable_copy, uint32_t *chosen,
                                           uint32_t *plugin_min, uint32_t *plugin_max, char *err,
                                           size_t err_cap);

#endif /* CALHOST_LOADER_H */
