/*
 * run.h: the state of one `calhost calibrate` (or `calhost verify`) run
 * shared by the files of host/calibrate: the orchestration (calibrate.c),
 * the child loop (child.c), the commit and portable rule (commit.c), the
 * run's state (run.c), its output (report.c) and the verify mode
 * (verify.c): the results of every sweep, the failures with where they
 * happened, warnings and the environment.
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
#include "sweep/measure.h"
#include "processor/processor.h"
#include "runtime/binding.h"
#include "runtime/devices.h"
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

/* A key verify wants recalibrated: a backend's exact key of a workload. */
typedef struct cal_key_ref {
  const char *backend;
  size_t workload; /* index into config->workloads */
  uint32_t thread_count;
  const char *processor; /* the key's processor (a device backend: its device) */
} cal_key_ref;

typedef struct cal_run {
  const calibrate_options *o;
  const config_settings *cfg;
  FILE *out, *err;
  calstore *store;
  processor_target_list targets;
  processor_environment env;
  loader_plugin_list plugins;
  sweep_rigor_params params;
  size_t *workloads; /* selected workload indices */
  size_t workload_count;

  cal_result *results;
  size_t result_count, result_cap;
  cal_failure *failures;
  size_t failure_count, failure_cap;
  char **warnings;
  size_t warning_count, warning_cap;

  /* the plugin being calibrated */
  loader_plugin *cur;
  const runtime_device *cur_device; /* its device being calibrated, NULL for CPU sweeps */
  /* set while devices are calibrated at once (each in a copy of the run):
   * held around every use of the store */
  pthread_mutex_t *store_lock;
  /* in such a wave, the run's finished sweeps counted by all its threads
   * (under store_lock), and this thread's last count of it: the number its
   * progress lines show (cal_sweeps_shown) */
  size_t *wave_done, wave_shown;
  int cur_in_workload;
  size_t cur_workload;
  uint32_t cur_threads;
  char *cur_candidate; /* the candidate in the plugin's hands, or NULL */
  double cur_started;  /* when it was announced (sweep_now), 0: none */
  uint32_t cur_ordinal, cur_total;
  /* the policies that killed a child of the current plugin (run_child) */
  cal_crash *crashes;
  size_t crash_count, crash_cap;
  /* the first result of the current plugin's run_child (earlier results,
   * e.g. verify's measuring pass, are not its children's) */
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
  /* child only */
  double child_deadline;

  /* modes */
  int force;         /* replace stored profiles (--force; verify's recalibration) */
  int recalibrating; /* verify's second pass: only only_keys, exact profiles only, */
  int hold_commits;  /* commits held until cal_commit_held (one batch) */
  const cal_key_ref *only_keys;
  size_t only_key_count;
  size_t commits;            /* batches committed */
  struct cal_verify *verify; /* verify's rows (verify.c), or NULL */

  /* progress */
  int bar; /* draw a bar on err */
  int bar_drawn;
  size_t sweeps_total, sweeps_done;
  int interrupted; /* the signal that stopped the run, 0 when none */
  /* device backends that listed no device on this machine (a CUDA backend
   * without a GPU; a clear skip, said once each): a run that calibrates
   * nothing for that reason alone is not a failure */
  size_t no_device_count;
  char no_device[256]; /* their names, ", "-separated (cut when long) */
  double started;
  char rigor_name[16];
} cal_run;

/* ---- run.c ---- */

/* Appends a zeroed result of the current plugin (r->cur) and returns it,
 * or NULL when out of memory. */
cal_result *cal_add_result(cal_run *r);

/* Records a failure (strings copied; any may be NULL). */
void cal_add_failure(cal_run *r, const char *backend, const char *workload, uint32_t threads,
                     const char *candidate, const char *message, const char *output);

/* Whether the current plugin (on r->cur_device when set) has a result of
 * (workload, threads) from an earlier child of this run_child (results
 * from r->results_from on): a restarted child does not repeat it. */
int cal_result_known(const cal_run *r, size_t workload, uint32_t threads);
/* Records that policy killed the current plugin's child in its sweep of
 * (workload, threads) (every_sweep: avoid it in every sweep), for the
 * reason given (strings copied). Returns 0,
 * -1 when out of memory. */
int cal_add_crash(cal_run *r, int every_sweep, size_t workload, uint32_t threads,
                  const char *policy, const char *reason);
/* Forgets the crashes of the current plugin (a new plugin or device). */
void cal_crashes_clear(cal_run *r);
/* Records a warning (printf-style); kept for the report. */
void cal_warn(cal_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* cal_warn unless the same text was already warned (a plugin's warning,
 * which every sweep of that plugin repeats, is shown once). */
void cal_warn_once(cal_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The number of targets one of the plugin's sweeps runs per workload: one
 * on a device (thread counts do not multiply device targets), else every
 * thread count of the target list. */
size_t cal_targets_per_workload(const cal_run *r);

/* The name of a result's workload ("?" when out of range). */
const char *cal_workload_name(const cal_run *r, size_t index);

/* --record: the space file of one sweep (sweep/recording.h: the --record
 * path itself when an unsharded run has one sweep, else (several sweeps,
 * or any run with --shard I/N) one file per sweep, with the
 * device in its name for a sweep on device `device`; -1: a CPU target) into
 * buf, the space's name into name (may be NULL). Returns 0, -1 when it does
 * not fit. */
int cal_record_path(const cal_run *r, const char *backend, size_t workload, long device,
                    uint32_t threads, char *buf, size_t cap, char *name, size_t name_cap);

/* Whether the run calibrates this item (plugin x workload index x target
 * index, on r->cur_device when set): the plugin serves the workload's
 * operator and the item is in the run's shard (calibrate/shard.h; a device
 * item hashes the device identity too). */
int cal_item_selected(const cal_run *r, const loader_plugin *p, size_t workload, size_t target);

/* The number of sweeps (selected items) the run has for a plugin (on
 * r->cur_device when set: cal_targets_per_workload targets). */
size_t cal_sweeps_of(const cal_run *r, const loader_plugin *p);

/* Frees everything the run holds (results, failures, warnings, plugins,
 * targets, the store); r itself is the caller's. */
void cal_run_free(cal_run *r);

/* ---- child.c ---- */

/* The child of one plugin (r->cur; user is the cal_run): creates the
 * instance with the plugin's [plugin NAME] settings, runs every selected
 * (workload, target) sweep and writes the records of records.h to fd.
 * Returns the child's exit status (isolate_run's child function). */
int cal_child_main(void *user, int fd);

/* The plugin's is_cancelled, as the loader's services call it (user is the
 * cal_run): 1 when the child's current sweep is past its time budget. */
int cal_budget_over(void *user);

/* ---- commit.c ---- */

/* Commits every pending result of the current plugin in one batch, with
 * the portable profile of each workload among them; marks each result
 * stored, skipped (kept what another writer stored) or not stored. */
void cal_commit_pending(cal_run *r);

/* Commits what r->hold_commits held back: every pending result of every
 * plugin (verify --recalibrate) in one batch, with no plugin current
 * (nothing of a plugin is needed: the child validated each policy). */
void cal_commit_held(cal_run *r);

/* ---- report.c ---- */

/* Progress: update the bar / print a plain line; end the bar line. */
/* The finished sweeps a progress line shows: the run's count, or in a wave
 * of devices the count over all its threads at this thread's last sweep. */
size_t cal_sweeps_shown(const cal_run *r);
void cal_progress(cal_run *r);
void cal_progress_line(cal_run *r, const cal_result *res);
void cal_progress_end(cal_run *r);

/* The summary table and failures (human), or the JSON report, on r->out. */
void cal_print_summary(cal_run *r);
void cal_print_json(cal_run *r, int exit_status);
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

/* ---- calibrate.c ---- */

/* Runs every selected, loaded plugin once in the current mode (calibrate,
 * verify's measuring pass, or its recalibration of r->only_keys), each in
 * its own child; sets r->interrupted when a signal stopped it. */
void cal_run_plugins(cal_run *r);

/* ---- verify.c ---- */

/* Verify mode: the progress line of a measured key; the end of the run:
 * the verdicts and --recalibrate (status: the run's so far; returns the
 * exit status), then the output (on r->out, stdout restored), which also
 * frees verify's state. */
void cal_verify_progress(cal_run *r, const cal_result *x);
int cal_verify_finish(cal_run *r, int status);
void cal_verify_print(cal_run *r, int status);

#endif /* CALHOST_CALIBRATE_RUN_H */
