/*
 * calibrate.c: `calhost calibrate` (calibrate.h) as a mode of the driver
 * (run.h's cal_mode): each key's sweep searches the plugin's candidates
 * (a key already calibrated is skipped unless --force), winners are
 * committed per workload with the portable rule (commit.c), progress lines
 * and the summary or JSON report come from output.c, and the exit status
 * says what was calibrated. The driver (driver.c, child.c) runs it.
 */
#include "calibrate.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "base/str.h"
#include "race.h"
#include "run.h"

/* A key already calibrated is skipped (the commit decides again against
 * the file: put if absent), unless the pass forces. */
static cal_key_action calibrate_choose(const cal_run *r, size_t workload, const char *op,
                                       const calhost_built_key *k, cal_key_plan *plan) {
  (void)workload;
  if (!r->pass.force) {
    calstore_lookup_result *stored = cal_stored_exact(r, op, k);
    int have = stored != NULL;
    calstore_lookup_result_free(&stored);
    if (have) {
      plan->why = "already calibrated (use --force to recalibrate)";
      return CAL_KEY_SKIP;
    }
  }
  return CAL_KEY_SWEEP;
}

static void calibrate_commit(cal_run *r) {
  cal_commit_pending(r, 1);
}

/* Whether a usable plugin serves a selected workload: the run, all
 * shards, has items. */
static int run_has_items(const cal_run *r) {
  const calibrate_options *o = r->set->o;
  for (size_t i = 0; i < r->set->plugins.count; i++) {
    const loader_plugin *p = r->set->plugins.items[i];
    if (!p->loaded || !base_str_allowed(o->plugins, o->plugin_count, NULL, 0, p->backend))
      continue;
    for (size_t w = 0; w < r->set->workload_count; w++)
      if (runtime_binding_serves(p, cal_workload_operator(r, r->set->workloads[w])))
        return 1;
  }
  return 0;
}

/* The exit status of a finished, uninterrupted run: 1 when anything
 * failed, or when nothing was calibrated (stored now, or before) for a
 * reason other than a device backend without a device here or a shard
 * with nothing of its own. */
static int calibrate_status(cal_run *r) {
  const calibrate_options *o = r->set->o;
  int status = r->sink->failure_count ? 1 : 0;
  size_t calibrated = 0;
  for (size_t i = 0; i < r->sink->result_count; i++) {
    const cal_result *x = &r->sink->results[i];
    if (x->kind == CAL_FAILED || x->kind == CAL_NOT_STORED || x->record_failed)
      status = 1;
    if (x->kind == CAL_STORED || x->kind == CAL_PENDING ||
        (x->kind == CAL_SKIPPED && x->key.processor)) /* skips with a key: calibrated */
      calibrated++;
  }
  if (calibrated)
    return status;
  char why[400];
  /* one shard of a fleet run may hold no item, or only unsupported ones,
   * while the others calibrate; a run with no item in any shard is a "no"
   * in every shard, so that a fleet campaign of nothing fails before its
   * merge */
  if (o->shard.count > 1 && run_has_items(r)) {
    if (!r->sweeps_total)
      cal_warn(r, "shard %u/%u holds no item of this run (calhost plan --shards %u)",
               (unsigned)o->shard.index, (unsigned)o->shard.count, (unsigned)o->shard.count);
    else
      cal_warn(r, "nothing was calibrated in shard %u/%u: every sweep was skipped or failed",
               (unsigned)o->shard.index, (unsigned)o->shard.count);
  } else if (!r->sink->result_count && !r->sink->failure_count && r->no_device_count) {
    /* only device backends without a device here (a CUDA backend on a
     * machine without a GPU): a skip, said once per backend, not a failure */
    cal_warn(r, "nothing was calibrated: %s", cal_nothing_reason(r, why, sizeof why));
  } else {
    status = 1;
    cal_warn(r, "nothing was calibrated: %s",
             r->sink->result_count ? "every sweep was skipped or failed"
             : r->sink->failure_count
                 ? "the plugins failed before any sweep finished (see failures)"
                 : cal_nothing_reason(r, why, sizeof why));
  }
  return status;
}

static int calibrate_run(cal_run *r) {
  cal_run_plugins(r);
  unsigned char *served = r->set->o->served;
  for (size_t i = 0; served && i < r->sink->result_count; i++) {
    const cal_result *x = &r->sink->results[i];
    int done = x->kind == CAL_STORED || x->kind == CAL_PENDING ||
               (x->kind == CAL_SKIPPED && x->key.processor); /* as calibrate_status counts */
    if (served[x->workload] < 2)
      served[x->workload] = done ? 2 : 1;
  }
  if (!r->interrupted) {
    cal_race_run(r); /* the backends of each structure, timed side by side (race.c) */
    r->interrupted = cal_cancel_signal(); /* a signal during the race stops the run too */
  }
  cal_progress_end(r);
  if (r->interrupted)
    return 128 + r->interrupted;
  return calibrate_status(r);
}

/* The summary (or --json's report) on out; --report: the JSON into its
 * folder too. */
static void calibrate_print(cal_run *r, int status) {
  const calibrate_options *o = r->set->o;
  if (o->json)
    cal_print_json(r, r->set->out, status);
  else
    cal_print_summary(r, r->set->out);
  if (!o->json && !o->quiet)
    cal_race_print(r, r->set->out);
  if (o->json_out)
    cal_print_json(r, o->json_out, status);
  cal_race_free();
}

static const cal_mode calibrate_mode = {
    .command = "calibrate",
    .runs_plugins = 1,
    .writes_store = 1,
    .reload_store = 1,
    .choose = calibrate_choose,
    .duplicate_keyed = 1,
    .measured = CAL_PENDING,
    .counts_skips = 1,
    .announce = cal_progress_line,
    .commit = calibrate_commit,
    .run = calibrate_run,
    .print = calibrate_print,
};

int calibrate_execute(const calibrate_options *o) {
  return cal_execute(o, &calibrate_mode, NULL);
}
