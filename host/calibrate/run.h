/*
 * run.h: the state of one run of the calibrate driver (`calhost calibrate`,
 * `calhost plan`, `calhost verify`), split by who owns it, and the driver's
 * interface to the three modes:
 *
 *   cal_setup   read-only once set up (setup.c), shared by every thread of
 *               a device wave: options, configuration, store, targets,
 *               environment, plugins, rigor, the selected workloads;
 *   cal_sink    what a run gathers: results, failures, warnings; a wave's
 *               thread has a sink of its own, merged with one call;
 *   cal_cursor  where the driver is: the plugin, device, sweep and
 *               candidate in progress, the crashes of the current plugin,
 *               its deadlines and the record stream's state;
 *   cal_pass    what the current pass calibrates (force, a key filter);
 *   cal_mode    a mode's hooks: what a key's sweep measures, how a finished
 *               sweep is classified, announced and committed, how the run
 *               ends and is printed. calibrate.c, plan.c and verify.c each
 *               supply theirs; the driver (driver.c, child.c) calls them
 *               and knows no mode by name.
 *
 * Files: setup.c (selection), driver.c (children, records, waves,
 * cal_execute), child.c (the child's pipeline), commit.c (batches and the
 * portable rule), run.c (sink, cursor, small lookups), output.c (calibrate's
 * output), calibrate.c / plan.c / verify.c (the modes).
 * Internal to host/calibrate.
 */
#ifndef CALHOST_CALIBRATE_RUN_H
#define CALHOST_CALIBRATE_RUN_H

#include <pthread.h>
#include <signal.h>
#include <stdio.h>

#include "calhost/calstore.h"
#include "calibrate.h"
#include "loader/loader.h"
#include "processor/processor.h"
#include "runtime/binding.h"
#include "runtime/devices.h"
#include "sweep/measure.h"
#include "sweep/records.h"

typedef enum cal_kind {
  CAL_PENDING = 0,    /* measured, not yet committed */
  CAL_STORED = 1,     /* committed to the store */
  CAL_SKIPPED = 2,    /* already calibrated / not applicable */
  CAL_FAILED = 3,     /* the sweep chose nothing */
  CAL_NOT_STORED = 4, /* measured, but the store refused it */
  CAL_MEASURED = 5,   /* measured by verify: compared, never stored */
} cal_kind;

/* One sweep: plugin x workload x thread count. */
typedef struct cal_result {
  char *backend;
  char *implementation;
  size_t workload; /* index into config->workloads */
  uint32_t threads;
  cal_kind kind;
  char *message; /* skip reason, failure, store error */
  sweep_record_key key;
  sweep_result sweep;
  int portable_stored; /* this winner also became the portable profile */
  char *portable_note; /* why the portable profile was not written, or NULL */
  /* the device of a device backend's sweep (on_device 0: a CPU target) */
  int on_device;
  uint32_t device_index;
  char *device_name;
  char *device_identity;
  char *recorded;    /* --record: the space file written for this sweep, or NULL */
  int record_failed; /* --record: this sweep's recording failed (an error: exit 1) */
} cal_result;

/* A failure of a plugin (or of a sweep inside it, with where it died). */
typedef struct cal_failure {
  char *backend;  /* NULL: not a plugin's failure */
  char *workload; /* NULL: outside any workload */
  uint32_t threads;
  char *candidate; /* the candidate in progress, or NULL */
  char *message;
  char *output; /* the first bytes the plugin printed, or NULL */
} cal_failure;

/* How many candidates of one sweep may kill the plugin's child (each time
 * the sweep starts again in a new child without them) before the sweep is
 * failed; a plugin's children are started again at most this many times
 * per sweep in all. */
#define CAL_SWEEP_CRASHES 4
/* A child that hangs costs the whole plugin_timeout: after this many the
 * plugin is given up. */
#define CAL_MAX_HANGS 2

/* A policy that killed the child of the current plugin (crashed, hung,
 * exited) while its sweep of (workload, threads) ran it: the next child
 * runs that sweep again without it. */
typedef struct cal_crash {
  int every_sweep; /* it hung: every later sweep of the plugin avoids it too */
  size_t workload;
  uint32_t threads;
  char *policy;
  char *reason; /* the rejection the sweep reports for it */
} cal_crash;

/* A key a pass is limited to (verify --recalibrate: the failed keys): a
 * backend's exact key of a workload. */
typedef struct cal_key_ref {
  const char *backend;
  size_t workload; /* index into config->workloads */
  uint32_t thread_count;
  const char *processor; /* the key's processor (a device backend: its device) */
} cal_key_ref;

/* ---- who owns what ------------------------------------------------------ */

/* The run's set-up (setup.c): written once before any sweep, read-only
 * after, shared by the threads of a wave. */
typedef struct cal_setup {
  const calibrate_options *o;
  const config_settings *cfg;
  FILE *out, *err;
  const char *command; /* "calibrate", "plan", "verify": for messages */
  calstore *store;     /* NULL for a plan */
  processor_target_list targets;
  processor_environment env;
  loader_plugin_list plugins;
  sweep_rigor_params params;
  size_t *workloads; /* selected workload indices */
  size_t workload_count;
  int bar; /* draw a progress bar on err */
  double started;
  char rigor_name[16];
} cal_setup;

/* What a run gathers (one per thread of a device wave). */
typedef struct cal_sink {
  cal_result *results;
  size_t result_count, result_cap;
  cal_failure *failures;
  size_t failure_count, failure_cap;
  char **warnings;
  size_t warning_count, warning_cap;
  size_t commits; /* batches committed */
} cal_sink;

/* Where the driver is, for one plugin at a time (one per thread of a
 * device wave). */
typedef struct cal_cursor {
  loader_plugin *plugin;        /* the plugin being calibrated, NULL between plugins */
  const runtime_device *device; /* its device being calibrated, NULL for CPU sweeps */
  int in_workload;              /* a sweep of (workload, threads) is in progress */
  size_t workload;
  uint32_t threads;
  char *candidate; /* the candidate in the plugin's hands, or NULL */
  double started;  /* when it was announced (sweep_now), 0: none */
  uint32_t ordinal, total;
  /* the policies that killed a child of the current plugin (run_child) */
  cal_crash *crashes;
  size_t crash_count, crash_cap;
  /* the first result of the current plugin's run_child in the sink
   * (earlier results, e.g. verify's measuring pass, are not its children's) */
  size_t results_from;
  /* CLOCK_MONOTONIC seconds when the current plugin's time budget ends
   * (0: none yet, or no budget): its first child sets it after create()
   * (CALHOST_REC_BUDGET), the later ones go on with it; a hang's time is
   * given back */
  double plugin_deadline;
  /* --record: the child's report of the current sweep's recording
   * (CALHOST_REC_RECORDING): reported, and the error ("" when written) */
  int record_reported;
  char *record_error;
  /* the current child's HELLO named another record protocol version: the
   * rest of its stream is ignored (a failure says so) */
  int records_refused;
  /* in the child: when the sweep in progress must end (0: no budget) */
  double child_deadline;
} cal_cursor;

/* What the current pass calibrates: data, not a mode. */
typedef struct cal_pass {
  int force; /* replace stored profiles (--force; verify's recalibration) */
  /* only these keys (NULL: every key of the selection) */
  const cal_key_ref *only_keys;
  size_t only_key_count;
} cal_pass;

struct cal_run;

/* What a key's sweep measures (cal_mode.choose). */
typedef enum cal_key_action {
  CAL_KEY_SWEEP = 0,  /* sweep it (plan->explicit_policy, or the search) */
  CAL_KEY_SKIP = 1,   /* report it skipped, with the reason */
  CAL_KEY_IGNORE = 2, /* not this pass's key: say nothing */
} cal_key_action;

typedef struct cal_key_plan {
  const char *explicit_policy;    /* the one candidate besides the default, or NULL */
  calstore_lookup_result *stored; /* what explicit_policy points into; freed after the sweep */
  const char *why;                /* CAL_KEY_SKIP: the reason (static text) */
} cal_key_plan;

/* A mode's hooks. Each mode's file defines one const table. */
typedef struct cal_mode {
  const char *command; /* "calibrate", "plan", "verify" */
  /* the run opens the store, hashes model digests, records the environment
   * and may run children (0: a plan, which only selects) */
  int runs_plugins;
  /* the store must be writable before the run starts */
  int writes_store;
  /* a child reloads the store before it starts (to skip what another
   * writer stored meanwhile), unless the pass forces */
  int reload_store;
  /* ---- in the child ---- */
  /* What the sweep of key k (of workload index `workload`, operator op,
   * the plugin's r->cur.plugin) measures, into *plan. */
  cal_key_action (*choose)(const struct cal_run *r, size_t workload, const char *op,
                           const calhost_built_key *k, cal_key_plan *plan);
  /* a key built again by a later target (or workload) is skipped; the skip
   * names the key (0: verify judges a key once, at its first target) */
  int duplicate_keyed;
  /* ---- in the parent ---- */
  /* the kind of a successful sweep's result: CAL_PENDING (to commit) or
   * CAL_MEASURED (compared, never stored) */
  cal_kind measured;
  /* skips count as finished sweeps in progress (0: a pass limited to some
   * keys counts only those) */
  int counts_skips;
  /* A finished sweep's progress line. */
  void (*announce)(struct cal_run *r, const cal_result *x);
  /* Commits what is pending (after each workload, when a child dies, at
   * the end of a plugin); NULL: nothing is committed during the run. */
  void (*commit)(struct cal_run *r);
  /* The run after its set-up: runs the plugins (cal_run_plugins), or
   * whatever the mode does; returns the exit status. */
  int (*run)(struct cal_run *r);
  /* Prints the run's outcome (status: the exit status). */
  void (*print)(struct cal_run *r, int status);
} cal_mode;

/* One run (or one thread of a device wave). */
typedef struct cal_run {
  const cal_setup *set; /* shared; read-only during the sweeps */
  const cal_mode *mode;
  void *mode_state; /* the mode's own (verify's rows), or NULL */
  cal_pass pass;
  cal_sink *sink; /* this run's (a wave's thread: its own) */
  cal_cursor cur;
  /* progress */
  int bar_drawn;
  size_t sweeps_total, sweeps_done;
  /* set while devices are calibrated at once: held around every use of
   * the store */
  pthread_mutex_t *store_lock;
  /* in such a wave, the run's finished sweeps counted by all its threads
   * (under store_lock), and this thread's last count of it: the number its
   * progress lines show (cal_sweeps_shown) */
  size_t *wave_done, wave_shown;
  int interrupted; /* the signal that stopped the run, 0 when none */
  /* device backends that listed no device on this machine (a CUDA backend
   * without a GPU; a clear skip, said once each): a run that calibrates
   * nothing for that reason alone is not a failure */
  size_t no_device_count;
  char no_device[256]; /* their names, ", "-separated (cut when long) */
} cal_run;

/* ---- driver.c ---- */

/* Runs one command of the driver: installs the signal handlers (SIGINT,
 * SIGTERM, SIGHUP stop the run), sets stdout aside while plugin code runs
 * in this process, sets the run up (setup.c) for mode m, calls m->run and
 * m->print, and frees everything. mode_state is the mode's (r->mode_state).
 * Returns the exit status (2 when the set-up failed). */
int cal_execute(const calibrate_options *o, const cal_mode *m, void *mode_state);

/* Runs every selected, loaded plugin once in r->mode and r->pass, each in
 * its own child (device backends: one per device, in waves); sets
 * r->interrupted when a signal stopped it. */
void cal_run_plugins(cal_run *r);

/* ---- signals.c ---- */

/* The flag the signal handlers set (the plugins' cancellation flag). */
volatile sig_atomic_t *cal_cancel_flag(void);
/* The signal that stopped the run (SIGINT, SIGTERM, SIGHUP), 0: none. */
int cal_cancel_signal(void);

/* The handlers cal_signals_catch replaced, for cal_signals_restore. */
typedef struct {
  struct sigaction intr, term, hup;
} cal_signals;

/* Clears the cancellation flag and catches SIGINT, SIGTERM and SIGHUP
 * (each sets the flag and records the signal); *saved receives the
 * handlers they had. */
void cal_signals_catch(cal_signals *saved);
/* Puts back the handlers *saved holds. */
void cal_signals_restore(const cal_signals *saved);

/* Lists device plugin p's devices (in a child) into *devices and selects
 * those the configuration names: *sel (calloc'd, NULL when out of memory)
 * holds *nsel indices into devices. Returns 0; 1 when the selection failed
 * (recorded as p's failure, *nsel 0); -1 when the list failed (recorded;
 * *devices and *sel hold nothing to free). */
int cal_select_devices(cal_run *r, loader_plugin *p, runtime_device_list *devices, size_t **sel,
                       size_t *nsel);

/* A device backend that listed no device: a skip, said once, and the
 * reason of a run with nothing in it (cal_nothing_reason). */
void cal_note_no_device(cal_run *r, const loader_plugin *p);

/* ---- setup.c ---- */

/* Sets up *set (its options, configuration and streams already set) for
 * mode m: the store, workloads and their digests, targets, environment,
 * plugins; points r->set at it. Problems go to
 * err (operational) or r->sink (a plugin that is not loaded). Returns 0;
 * else the exit status, with *print set when the run's output is still
 * printed (a plugin selection that leaves nothing) and *store_failed when
 * the store would not open. */
int cal_setup_open(cal_run *r, cal_setup *set, const cal_mode *m, int *print,
                   calstore_status *store_failed, char *err, size_t cap);

/* Frees what cal_setup_open set up. */
void cal_setup_close(cal_setup *set);

/* ---- run.c ---- */

/* Appends a zeroed result of the current plugin (and device) to the sink
 * and returns it, or NULL when out of memory. */
cal_result *cal_add_result(cal_run *r);

/* Records a failure (strings copied; any may be NULL). */
void cal_add_failure(cal_run *r, const char *backend, const char *workload, uint32_t threads,
                     const char *candidate, const char *message, const char *output);

/* Records a warning (printf-style); kept for the report. */
void cal_warn(cal_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* cal_warn unless the same text was already warned (a plugin's warning,
 * which every sweep of that plugin repeats, is shown once). */
void cal_warn_once(cal_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Moves everything from holds (results, failures, warnings, commits) to
 * the end of into, leaving from empty; what cannot move (out of memory)
 * is freed. */
void cal_sink_merge(cal_sink *into, cal_sink *from);

/* Frees everything a sink holds and zeroes it. */
void cal_sink_free(cal_sink *s);

/* Whether the current plugin (on r->cur.device when set) has a result of
 * (workload, threads) from an earlier child of this run_child (results
 * from r->cur.results_from on): a restarted child does not repeat it. */
int cal_result_known(const cal_run *r, size_t workload, uint32_t threads);

/* Records that policy killed the current plugin's child in its sweep of
 * (workload, threads) (every_sweep: avoid it in every sweep), for the
 * reason given (strings copied). Returns 0, -1 when out of memory. */
int cal_add_crash(cal_run *r, int every_sweep, size_t workload, uint32_t threads,
                  const char *policy, const char *reason);

/* Starts the cursor at plugin p on device d (NULL: CPU targets): forgets
 * the previous plugin's candidate and crashes. */
void cal_cursor_start(cal_cursor *c, loader_plugin *p, const runtime_device *d);

/* Frees what a cursor holds and zeroes it. */
void cal_cursor_free(cal_cursor *c);

/* The number of targets one of the plugin's sweeps runs per workload: one
 * on a device (thread counts do not multiply device targets), else every
 * thread count of the target list. */
size_t cal_targets_per_workload(const cal_run *r);

/* The name of a result's workload ("?" when out of range). */
const char *cal_workload_name(const cal_run *r, size_t index);

/* The operator of a workload ("?" when out of range). */
const char *cal_workload_operator(const cal_run *r, size_t index);

/* --record: the space file of one sweep (sweep/recording.h: the --record
 * path itself when an unsharded run has one sweep, else (several sweeps,
 * or any run with --shard I/N) one file per sweep, with the
 * device in its name for a sweep on device `device`; -1: a CPU target) into
 * buf, the space's name into name (may be NULL). Returns 0, -1 when it does
 * not fit. */
int cal_record_path(const cal_run *r, const char *backend, size_t workload, long device,
                    uint32_t threads, char *buf, size_t cap, char *name, size_t name_cap);

/* Whether the run calibrates this item (plugin x workload index x target
 * index, on r->cur.device when set): the plugin serves the workload's
 * operator and the item is in the run's shard (calibrate/shard.h; a device
 * item hashes the device identity too). */
int cal_item_selected(const cal_run *r, const loader_plugin *p, size_t workload, size_t target);

/* The number of sweeps (selected items) the run has for a plugin (on
 * r->cur.device when set: cal_targets_per_workload targets). */
size_t cal_sweeps_of(const cal_run *r, const loader_plugin *p);

/* The number of keys of r->pass.only_keys that belong to backend. */
size_t cal_pass_keys_of(const cal_run *r, const char *backend);

/* Whether the pass takes this key: every key without a filter, else one
 * of r->pass.only_keys. */
int cal_pass_wants(const cal_run *r, const char *backend, size_t workload, uint32_t thread_count,
                   const char *processor);

/* The calibrated profile of this implementation with k's exact key in the
 * store as read (one index probe), or NULL; free with
 * calstore_lookup_result_free. */
calstore_lookup_result *cal_stored_exact(const cal_run *r, const char *op,
                                         const calhost_built_key *k);

/* ---- child.c ---- */

/* The child of one plugin (r->cur.plugin; user is the cal_run): creates
 * the instance with the plugin's [plugin NAME] settings, runs every
 * selected (workload, target) sweep the mode chooses and writes the
 * records of isolate/codec.h to fd. Returns the child's exit status (isolate_run's
 * child function). */
int cal_child_main(void *user, int fd);

/* The plugin's is_cancelled, as the loader's services call it (user is the
 * cal_run): 1 when the child's current sweep is past its time budget. */
int cal_budget_over(void *user);

/* ---- commit.c ---- */

/* Commits every pending result in the sink in one batch: the exact
 * profiles and, with portable, the portable profile of each workload
 * among them (the smallest thread count's winner); marks each result
 * stored, skipped (kept what another writer stored) or not stored. A
 * failed batch is the current plugin's failure (none current: calhost's,
 * or the one backend of every pending result). */
void cal_commit_pending(cal_run *r, int portable);

/* ---- output.c (calibrate's output) ---- */

/* The finished sweeps a progress line shows: the run's count, or in a wave
 * of devices the count over all its threads at this thread's last sweep. */
size_t cal_sweeps_shown(const cal_run *r);
/* Progress: update the bar (the candidate in progress). */
void cal_progress(cal_run *r);
/* The progress line of a finished sweep (the bar when drawing one). */
void cal_progress_line(cal_run *r, const cal_result *x);
/* Ends the bar's line. */
void cal_progress_end(cal_run *r);

/* The summary table and failures (human) on o. */
void cal_print_summary(cal_run *r, FILE *o);
/* The JSON report of a calibrate run on o. */
void cal_print_json(cal_run *r, FILE *o, int exit_status);
/* Ends a run's JSON object (calibrate's and verify's): the "failures" and
 * "warnings" arrays, "interrupted", "exit_status" and "seconds", then the
 * closing brace and a line break. The caller has written the members
 * before them and the comma after the last one. */
void cal_json_failures_and_end(cal_run *r, FILE *o, int exit_status);
/* Writes the object member "KEY":v (comma rule of base_json_key), v as a
 * JSON integer when known, else null. */
void calibrate_json_member_count(FILE *o, int first, const char *key, int known, uint64_t v);
/* Why a run has no sweep at all: "BACKEND has no device on this machine"
 * when the selected device backends listed none (every other plugin serving
 * nothing), else "no configured workload uses an operator of the selected
 * plugins". Into buf; returns buf. */
const char *cal_nothing_reason(const cal_run *r, char *buf, size_t cap);

/* Writes the member "device": {"index", "name", "identity"} of a device's
 * sweep, null for a CPU sweep (never the first member). */
void cal_json_member_device(FILE *o, const cal_result *x);

#endif /* CALHOST_CALIBRATE_RUN_H */
