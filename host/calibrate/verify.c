/*
 * verify.c: `calhost verify` (see verify.h) as two modes of the calibrate
 * driver (run.h's cal_mode): the measuring pass (each key's sweep measures
 * the stored exact profile's policy against the default, as explicit
 * candidates; nothing is stored) and, with --recalibrate, a second pass
 * that verify drives itself over exactly the failed keys (a search, forced,
 * committed in one batch, exact profiles only: verify_recal.c). Here: the
 * two modes, the measuring pass's plan and the run's exit status; each
 * key's row and verdict (the rule, the stored profile, the measurements)
 * are verify_verdict.c's, the progress line and the output (table or JSON)
 * verify_output.c's. The driver
 * knows nothing of verdicts; the engine (host/sweep/measure.c) measures.
 */
#include "verify.h"
#include "verify_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/str.h"
#include "run.h"
#include "runtime/binding.h"

/* ---- the two passes --------------------------------------------------- */

/* The measuring pass: the stored exact profile's policy is the one
 * candidate (with the default); a key without one is reported, not
 * measured. */
static cal_key_action verify_choose(const cal_run *r, size_t workload, const char *op,
                                    const calhost_built_key *k, cal_key_plan *plan) {
  (void)workload;
  if (!(plan->stored = cal_stored_exact(r, op, k))) {
    plan->why = "no stored exact profile of this implementation";
    return CAL_KEY_SKIP;
  }
  plan->explicit_policy = plan->stored->profile->policy;
  return CAL_KEY_SWEEP;
}

/* The exit status of a judged (and maybe recalibrated) run. */
static int verify_status(cal_run *r, const cal_verify *cv) {
  if (r->sink->failure_count || !cv->count)
    return 2;
  int rc = 0;
  size_t missing = 0;
  for (size_t i = 0; i < cv->count; i++)
    missing += cv->rows[i].verdict == CALHOST_VERDICT_MISSING;
  if (missing == cv->count) { /* a mistyped --store must not pass as "all holds" */
    const char *path = calstore_path(r->set->store);
    cal_warn(r, "nothing was verified: no key of this run has a stored profile in %s%s",
             path ? path : "the in-memory store (persistence_enabled = false)",
             path && access(path, F_OK) != 0 ? " (the file does not exist)" : "");
    rc = 1;
  }
  for (size_t i = 0; i < cv->count; i++) {
    const verify_row *row = &cv->rows[i];
    if (row->verdict == CALHOST_VERDICT_ERROR)
      return 2;
    if (!calibrate_verdict_failed(row->verdict))
      continue;
    int fixed = row->recal_tried && row->recal_result != (size_t)-1 &&
                r->sink->results[row->recal_result].kind == CAL_STORED;
    if (!fixed)
      rc = 1;
  }
  return rc;
}

/* A plugin that failed as a whole (create() failed or killed its child, its
 * devices could not be listed): each key it serves that the measuring pass
 * has no result for (every selected workload of its operators x target) gets
 * a failed result with the plugin's failure, so that verify lists each as
 * "error" instead of "nothing to verify". The keys are not built (no
 * instance): a key is its backend, workload and thread count. */
static void fail_keys_of_failed_plugins(cal_run *r) {
  const cal_setup *set = r->set;
  size_t failures = r->sink->failure_count;
  for (size_t f = 0; f < failures; f++) {
    const cal_failure *fl = &r->sink->failures[f];
    const loader_plugin *p = NULL;
    if (!fl->backend || fl->workload)
      continue; /* not a plugin's failure, or a sweep's (it has its result) */
    for (size_t i = 0; i < set->plugins.count && !p; i++)
      if (set->plugins.items[i]->loaded && set->plugins.items[i]->backend &&
          !strcmp(set->plugins.items[i]->backend, fl->backend))
        p = set->plugins.items[i];
    for (size_t i = 0; p && i < set->workload_count; i++) {
      const config_workload *w = &set->cfg->workloads[set->workloads[i]];
      if (!runtime_binding_serves(p, w->operator_name))
        continue;
      for (size_t t = 0; t < set->targets.count; t++) {
        uint32_t threads = set->targets.items[t].thread_count;
        if (!calibrate_shard_has(&set->o->shard, p->backend, w->name, threads, NULL))
          continue;
        int seen = 0;
        for (size_t k = 0; k < r->sink->result_count && !seen; k++) {
          const cal_result *y = &r->sink->results[k];
          seen = y->workload == set->workloads[i] && y->threads == threads && y->backend &&
                 !strcmp(y->backend, p->backend);
        }
        cal_result *x = seen ? NULL : cal_add_result(r);
        if (!x)
          continue;
        fl = &r->sink->failures[f]; /* (the results grew, not the failures) */
        free(x->backend);
        free(x->implementation);
        free(x->device_name);
        free(x->device_identity);
        memset(x, 0, sizeof *x);
        x->backend = base_str_dup(p->backend);
        x->implementation = base_str_dup(p->implementation_version);
        x->workload = set->workloads[i];
        x->threads = threads;
        x->kind = CAL_FAILED;
        x->message = base_str_dup(fl->message ? fl->message : "the plugin failed");
      }
    }
  }
}

/* The measuring pass, the verdicts, --recalibrate's pass; the exit status. */
static int verify_run(cal_run *r) {
  cal_verify *cv = r->mode_state;
  cal_run_plugins(r);
  cal_progress_end(r);
  fail_keys_of_failed_plugins(r);
  if (verify_judge_all(r, cv) != 0)
    return 2;
  if (r->interrupted)
    return 128 + r->interrupted;
  if (cv->v->recalibrate)
    verify_recalibrate(r, cv);
  if (r->interrupted)
    return 128 + r->interrupted;
  return verify_status(r, cv);
}

static const cal_mode verify_mode = {
    .command = "verify",
    .runs_plugins = 1,
    .reload_store = 0, /* verify judges on the one snapshot it opened */
    .choose = verify_choose,
    .duplicate_keyed = 0, /* a key is judged once, at its first target */
    .measured = CAL_MEASURED,
    .counts_skips = 1,
    .announce = verify_announce,
    .commit = NULL, /* nothing is stored by the measuring pass */
    .run = verify_run,
    .print = verify_print,
};

int calibrate_verify(const calibrate_options *o, const calibrate_verify_options *v) {
  calibrate_options copy = *o;
  calibrate_verify_options vo = *v;
  if (!(vo.threshold >= 0))
    vo.threshold = CALHOST_VERIFY_DEFAULT_THRESHOLD;
  copy.force = 0;
  cal_mode mode = verify_mode;
  mode.writes_store = vo.recalibrate; /* the store must take the recalibrated keys */
  cal_verify cv = {.v = &vo};
  int rc = cal_execute(&copy, &mode, &cv);
  for (size_t i = 0; i < cv.count; i++)
    verify_free_row(&cv.rows[i]);
  free(cv.rows);
  return rc;
}
