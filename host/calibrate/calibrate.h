/*
 * calibrate.h: `calhost calibrate` — the driver that runs every selected
 * plugin's sweeps (each plugin in its own forked child, see isolate.h) over
 * the configured workloads and targets, stores the winners in batches, and
 * reports progress, a summary table or a JSON report.
 *
 * What is stored, per (plugin, workload, thread count) winner, as an exact
 * calibrated profile, in this order: median_latency (us), spread (us, the
 * MAD), cv, samples (count), candidates_tried, candidates_pruned,
 * candidates_rejected (count), speedup_vs_default (x, when the backend has a
 * default policy), load_average (1-minute, at the start of the run, when
 * known), noisy and unchecked (flag, 0/1).
 *
 * The portable rule: each workload also gets a portable calibrated profile
 * holding the winner of the smallest thread count calibrated for it in this
 * run (the most conservative policy: it runs well on any machine with at
 * least that many threads), with the same measurements plus source_threads.
 * It is written when the portable key has no calibrated profile of the
 * current implementation yet (from this machine or another), or with
 * --force; otherwise the existing one is kept (so a fleet sharing a store
 * keeps a stable portable profile until someone recalibrates on purpose).
 *
 * The race (race.c): after the sweeps, each structure (workload x CPU
 * target, or workload x device for the device backends on one device)
 * with exact profiles of two or more backends is raced: their winners and
 * defaults timed interleaved in one child with the racing rule
 * (sweep/race.h: the clearly behind dropped, close ones given more
 * rounds, ties settled by a stated rule), the outcome stored
 * as race_* measurements in their profiles (runtime/race.h) in one batch,
 * one line per race printed after the summary.
 *
 * Durability: results are committed in one batch per workload (after every
 * thread count of it is done), again when a child dies (its finished sweeps
 * are kept) and on SIGINT/SIGTERM, which stop the run (exit 130 / 143).
 * A rerun skips keys that already hold a calibrated profile of the current
 * implementation, unless force is set.
 *
 * The driver behind it (run.h: setup.c, driver.c, child.c, commit.c) also
 * runs `calhost plan` (calibrate_plan below, plan.c) and `calhost verify`
 * (verify.h): each is a mode of the driver, a table of hooks.
 * Internal to the host.
 */
#ifndef CALHOST_CALIBRATE_CALIBRATE_H
#define CALHOST_CALIBRATE_CALIBRATE_H

#include <stdio.h>

#include "config/config.h"
#include "calibrate/shard.h"

/* One work item of a run (one sweep): what `calhost plan` prints. */
typedef struct calibrate_work_item {
  char *backend;
  char *implementation; /* the plugin's implementation version */
  char *workload;       /* the workload's name */
  char *operator_name;
  uint32_t threads; /* the target thread count */
  uint32_t shard;   /* its shard of the run's shard count (0 when unsharded) */
  char *device;     /* a device backend's device identity (the item is one per
                       device, threads the first count), NULL for CPU items */
  uint32_t device_index;
} calibrate_work_item;

typedef struct calibrate_work_list {
  calibrate_work_item *items; /* plugin order, then configuration order, then targets */
  size_t count, cap;
} calibrate_work_list;

/* Frees every item and zeroes the list. NULL-safe. */
void calibrate_work_list_free(calibrate_work_list *list);

typedef struct calibrate_options {
  const config_settings *config; /* the effective configuration (flags applied) */
  const char *store_path;        /* --store: overrides config's [store] path; may be NULL */
  char *const *plugins;          /* --plugin filters (empty: every enabled plugin) */
  size_t plugin_count;
  char *const *workloads; /* --workload filters (empty: every workload) */
  size_t workload_count;
  int force;                  /* --force: recalibrate keys that already have a profile */
  int json;                   /* --json: print the full report as JSON on out */
  int quiet;                  /* --quiet: no progress, no table (failures still on err) */
  int progress;               /* -1: bar when err is a terminal, else plain lines; 0: lines */
  const char *rigor_origin;   /* where rigor came from, for the report (may be NULL) */
  const char *threads_origin; /* where threads came from (may be NULL) */
  FILE *out;                  /* NULL: stdout */
  FILE *err;                  /* NULL: stderr */
  FILE *json_out;             /* also write the JSON report here (--report); may be NULL */
  calibrate_shard shard;      /* --shard I/N: only this shard's items ({0,0}: all) */
  /* --record FILE: every candidate each sweep's search evaluates goes to a
   * space file (sweep/recording.h: FILE for a run of one sweep, else
   * FILE-BACKEND-WORKLOAD[-dD]-tN.space); NULL: no recording */
  const char *record_path;
  /* Out, optional: config->workload_count entries (zeroed by the caller),
   * set by calibrate_execute for each workload of the run: 2 some sweep
   * calibrated it (stored, or already calibrated); 1 a plugin of the run
   * serves its operator but no sweep calibrated it (every one declined its
   * structure, or failed); 0 no plugin of the run serves its operator. The
   * CLI names a model's nodes below 2 (cmd_model.c). */
  unsigned char *served;
  /* --no-warm-start: each sweep's search starts cold, without the store's
   * policies of the same kernel from other devices (warm.h) */
  int no_warm_start;
} calibrate_options;

/* Runs the calibration and returns the process exit status: 0 every sweep
 * stored or skipped; 1 some plugin, workload or sweep failed (everything
 * else was still stored, failures are listed); 2 an operational error
 * (store unreadable, no targets, no plugin); 130 / 143 interrupted by
 * SIGINT / SIGTERM (what finished was committed). Installs SIGINT and
 * SIGTERM handlers for the duration of the call.
 *
 * With o->shard set, only the items of that shard run (shard.h); the
 * portable profile of a workload is then written only by the shard that
 * owns the workload's item of the smallest target thread count, so the N
 * shards together store what the unsharded run stores. */
int calibrate_execute(const calibrate_options *o);

/* `calhost plan`: the plugins, workloads, targets and devices calibrate
 * would choose with the same options (the store is not opened, no model is
 * hashed, nothing is measured); *out receives every item of the run, all
 * shards, each with its shard of o->shard.count (the caller frees it with
 * calibrate_work_list_free). What is missing from the plan (a plugin that
 * failed, a warning) goes to o->err. Returns 0; 1 when a plugin failed or
 * nothing is to be calibrated (not when the only reason is a device backend
 * without a device here); 2 on an operational error, after printing why. */
int calibrate_plan(const calibrate_options *o, calibrate_work_list *out);

#endif /* CALHOST_CALIBRATE_CALIBRATE_H */
