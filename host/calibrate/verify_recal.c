/*
 * verify_recal.c: `calhost verify --recalibrate`'s second pass: the driver
 * run again over exactly the keys the measuring pass judged failed (a
 * search, forced), committed in one batch, exact profiles only, and each
 * failed row matched to its recalibrated result.
 */
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "verify_internal.h"

/* y (of the recalibration pass) is x's key recalibrated: the same key, or
 * a failure without a key at the same target */
static int recal_of(const cal_result *x, const cal_result *y) {
  if (verify_has_key(y))
    return verify_same_key(x, y);
  return x->workload == y->workload && x->threads == y->threads && x->on_device == y->on_device &&
         (!x->on_device || x->device_index == y->device_index) && x->backend && y->backend &&
         !strcmp(x->backend, y->backend);
}

/* The recalibration pass: only the failed keys, searched as calibrate
 * searches (the pass forces: the failed profiles are replaced). */
static cal_key_action recal_choose(const cal_run *r, size_t workload, const char *op,
                                   const calhost_built_key *k, cal_key_plan *plan) {
  (void)op, (void)plan;
  if (!cal_pass_wants(r, r->cur.plugin->backend, workload, k->thread_count,
                      k->processor ? k->processor : ""))
    return CAL_KEY_IGNORE;
  return CAL_KEY_SWEEP;
}

/* The recalibration pass's mode: run by recalibrate() with cal_run_plugins;
 * its commits are held and made in one batch at the end, exact profiles
 * only; it counts and shows only the keys it recalibrates (a target that
 * builds one of them again, a capped thread count, is a skip of neither). */
static const cal_mode recal_mode = {
    .command = "verify",
    .runs_plugins = 1,
    .reload_store = 0,
    .choose = recal_choose,
    .duplicate_keyed = 1,
    .measured = CAL_PENDING,
    .counts_skips = 0,
    .announce = cal_progress_line,
    .commit = NULL,
};

/* Recalibrates the failed keys of cv's rows in a second pass of the
 * driver, committed in one batch (also after an interrupt: what finished
 * is kept). */
void verify_recalibrate(cal_run *r, cal_verify *cv) {
  cal_key_ref *keys = calloc(cv->count + 1, sizeof *keys);
  size_t n = 0;
  if (!keys)
    return;
  for (size_t i = 0; i < cv->count; i++) {
    const cal_result *x = &r->sink->results[cv->rows[i].result];
    if (calibrate_verdict_failed(cv->rows[i].verdict) && verify_has_key(x)) {
      keys[n++] = (cal_key_ref){x->backend, x->workload, x->key.thread_count, x->key.processor};
      cv->rows[i].recal_tried = 1;
      cv->rows[i].recal_result = (size_t)-1;
    }
  }
  if (n) {
    size_t before = r->sink->result_count;
    const cal_mode *measuring = r->mode;
    r->mode = &recal_mode;
    r->pass = (cal_pass){.force = 1, .only_keys = keys, .only_key_count = n};
    r->sweeps_done = 0;
    r->sweeps_total = n;
    cv->commits_before = r->sink->commits;
    if (!r->set->o->quiet && !r->set->o->json)
      base_text_printf(r->set->err, "calhost: verify: recalibrating %zu key%s\n", n,
                       n == 1 ? "" : "s");
    cal_run_plugins(r);
    cal_progress_end(r);
    cal_commit_pending(r, 0);
    cv->recalibrated = 1;
    cv->keys_tried = n;
    /* the keys of the rows point into the results, which the pass grew:
     * match by (backend, workload, exact thread count, processor) */
    for (size_t j = before; j < r->sink->result_count; j++)
      for (size_t i = 0; i < cv->count; i++)
        if (cv->rows[i].recal_tried && r->sink->results[j].kind != CAL_SKIPPED &&
            recal_of(&r->sink->results[cv->rows[i].result], &r->sink->results[j]))
          cv->rows[i].recal_result = j;
    for (size_t i = 0; i < cv->count; i++)
      cv->keys_recalibrated += cv->rows[i].recal_tried && cv->rows[i].recal_result != (size_t)-1 &&
                               r->sink->results[cv->rows[i].recal_result].kind == CAL_STORED;
    r->pass = (cal_pass){0};
    r->mode = measuring;
  }
  free(keys);
}
