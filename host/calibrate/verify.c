/*
 * verify.c: `calhost verify` (see verify.h) as two modes of the calibrate
 * driver (run.h's cal_mode): the measuring pass (each key's sweep measures
 * the stored exact profile's policy against the default, as explicit
 * candidates; nothing is stored) and, with --recalibrate, a second pass
 * that verify drives itself over exactly the failed keys (a search, forced,
 * committed in one batch, exact profiles only: verify_recal.c). Here: the
 * verdict rule, the rows (one per exact key) and the measuring pass; the
 * progress line and the output (table or JSON) are verify_output.c's. The driver
 * knows nothing of verdicts; the engine (host/sweep/measure.c) measures.
 */
#include "verify.h"
#include "verify_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json.h"
#include "base/policy.h"
#include "base/str.h"
#include "base/text.h"
#include "base/words.h"
#include "isolate/isolate.h"
#include "run.h"
#include "runtime/binding.h"

/* ---- the rule --------------------------------------------------------- */

const char *calibrate_verdict_name(calibrate_verdict v) {
  static const char *const words[] = {[CALHOST_VERDICT_OK] = "ok",
                                      [CALHOST_VERDICT_SLOWER] = "slower",
                                      [CALHOST_VERDICT_LOST_TO_DEFAULT] = "lost-to-default",
                                      [CALHOST_VERDICT_OUTDATED] = "outdated",
                                      [CALHOST_VERDICT_INVALID] = "invalid",
                                      [CALHOST_VERDICT_MISSING] = "missing",
                                      [CALHOST_VERDICT_ERROR] = "error",
                                      [CALHOST_VERDICT_OVERRIDE] = "override"};
  return BASE_WORD(words, CALHOST_VERDICT_OVERRIDE, v, "unknown");
}

int calibrate_verdict_failed(calibrate_verdict v) {
  return v == CALHOST_VERDICT_SLOWER || v == CALHOST_VERDICT_LOST_TO_DEFAULT ||
         v == CALHOST_VERDICT_OUTDATED || v == CALHOST_VERDICT_INVALID;
}

/* a is clearly slower than b: its median beyond b's median x (1 + threshold),
 * and its fastest sample beyond b's fastest (b's median when b has no
 * fastest, as a stored profile) x (1 + threshold); an unknown fastest
 * sample leaves the medians to decide */
static int clearly_slower(double a_median, double a_min, double b_median, double b_min,
                          double threshold) {
  if (!isfinite(a_median) || !isfinite(b_median) || b_median <= 0)
    return 0;
  double limit = 1.0 + threshold;
  if (!(a_median > b_median * limit))
    return 0;
  double b_fast = isfinite(b_min) && b_min > 0 ? b_min : b_median;
  return !isfinite(a_min) || a_min > b_fast * limit;
}

calibrate_verdict calibrate_verify_judge(const calibrate_verify_numbers *n, double threshold) {
  if (!(threshold >= 0))
    threshold = CALHOST_VERIFY_DEFAULT_THRESHOLD;
  if (!n->policy_is_default && clearly_slower(n->current_median, n->current_min, n->default_median,
                                              n->default_min, threshold))
    return CALHOST_VERDICT_LOST_TO_DEFAULT;
  if (!(isfinite(n->stored_median) && n->stored_median > 0))
    return CALHOST_VERDICT_INVALID; /* nothing to compare the policy with: never "ok" */
  if (clearly_slower(n->current_median, n->current_min, n->stored_median, NAN, threshold))
    return CALHOST_VERDICT_SLOWER;
  return CALHOST_VERDICT_OK;
}

/* ---- rows ------------------------------------------------------------- */

static double measurement(const calstore_profile *p, const char *name) {
  for (size_t i = 0; p && i < p->measurement_count; i++)
    if (p->measurements[i].name && !strcmp(p->measurements[i].name, name))
      return p->measurements[i].value;
  return NAN;
}

int verify_has_key(const cal_result *x) {
  return x->key.model_digest && x->key.processor && x->key.thread_count;
}

/* A calibrated exact profile of the key under another implementation. */
typedef struct other_impl {
  const cal_run *r;
  const cal_result *x;
  verify_row *row;
  int found;
} other_impl;

static int find_other(void *user, const calstore_profile *p) {
  other_impl *o = user;
  const cal_result *x = o->x;
  const calstore_key *k = &p->key;
  if (p->source != CALSTORE_SOURCE_CALIBRATED || k->kind != CALSTORE_KEY_EXACT ||
      strcmp(k->backend, x->backend) ||
      strcmp(k->operator_name, cal_workload_operator(o->r, x->workload)) ||
      strcmp(k->model_digest, x->key.model_digest) || strcmp(k->processor, x->key.processor) ||
      k->thread_count != x->key.thread_count ||
      (x->implementation && !strcmp(k->implementation, x->implementation)))
    return 0;
  o->row->stored_policy = base_str_dup(p->policy);
  o->row->stored_implementation = base_str_dup(k->implementation);
  o->row->stored_median = measurement(p, "median_latency");
  o->row->stored_spread = measurement(p, "spread");
  o->found = 1;
  return 1;
}

static const sweep_candidate *candidate(const sweep_result *s, uint32_t index) {
  for (size_t i = 0; i < s->candidate_entries; i++)
    if (s->candidates[i].index == index)
      return &s->candidates[i];
  return NULL;
}

static void set_reason(verify_row *row, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_reason(verify_row *row, const char *fmt, ...) {
  va_list ap;
  free(row->reason);
  va_start(ap, fmt);
  row->reason = base_str_vformat(fmt, ap);
  va_end(ap);
}

/* a / b, NAN when either is unknown or b is not positive. */
double verify_ratio(double a, double b) {
  return isfinite(a) && isfinite(b) && b > 0 ? a / b : NAN;
}

/* Whether a user override of x's key of this kind (the exact key, or the
 * portable key of its structure) is stored; its policy into row. */
static int override_of(cal_run *r, const cal_result *x, calstore_key_kind kind, verify_row *row) {
  runtime_binding_key k;
  int exact = kind == CALSTORE_KEY_EXACT;
  if (runtime_binding_store_key(kind, x->backend, cal_workload_operator(r, x->workload),
                                x->implementation, exact ? x->key.model_digest : NULL,
                                exact ? x->key.processor : NULL, exact ? x->key.thread_count : 0,
                                exact ? NULL : x->key.structure, exact ? 0 : x->key.structure_count,
                                &k) != 0)
    return 0;
  calstore_lookup_result *got = NULL;
  calstore_status gs = calstore_get(r->set->store, &k.key, CALSTORE_SOURCE_OVERRIDE, &got, NULL);
  runtime_binding_key_free(&k);
  int found = gs == CALSTORE_OK && got && got->profile;
  if (found)
    row->stored_policy = base_str_dup(got->profile->policy);
  calstore_lookup_result_free(&got);
  return found;
}

/* A user override serves the key before any calibrated profile (exact
 * override, then portable override): verify re-times calibrated profiles
 * only, so such a key is said to be an override. Returns 1 when judged. */
static int judge_override(cal_run *r, const cal_result *x, verify_row *row) {
  const char *kind = NULL;
  if (override_of(r, x, CALSTORE_KEY_EXACT, row))
    kind = "an exact";
  else if (x->key.structure_count && override_of(r, x, CALSTORE_KEY_PORTABLE, row))
    kind = "a portable";
  if (!kind)
    return 0;
  row->verdict = CALHOST_VERDICT_OVERRIDE;
  set_reason(row, "served by %s user override (not verified: verify re-times calibrated profiles)",
             kind);
  return 1;
}

/* The key's stored exact calibrated profile of the plugin's implementation
 * into row; without one: outdated (another implementation's is stored) or
 * missing. Returns 1 when judged (no stored profile), 0 to go on. */
static int judge_stored(cal_run *r, const cal_result *x, verify_row *row) {
  runtime_binding_key k; /* the binding's one conversion of a built key */
  if (runtime_binding_store_key(
          CALSTORE_KEY_EXACT, x->backend, cal_workload_operator(r, x->workload), x->implementation,
          x->key.model_digest, x->key.processor, x->key.thread_count, NULL, 0, &k) != 0) {
    row->verdict = CALHOST_VERDICT_ERROR;
    set_reason(row, "out of memory");
    return 1;
  }
  calstore_lookup_result *got = NULL;
  calstore_status gs = calstore_get(r->set->store, &k.key, CALSTORE_SOURCE_CALIBRATED, &got, NULL);
  runtime_binding_key_free(&k);
  if (gs != CALSTORE_OK || !got->profile) {
    calstore_lookup_result_free(&got);
    other_impl o = {r, x, row, 0};
    calstore_inspect(r->set->store, find_other, &o);
    if (o.found) {
      row->verdict = CALHOST_VERDICT_OUTDATED;
      set_reason(row, "stored by implementation %s; the plugin is implementation %s",
                 row->stored_implementation, x->implementation ? x->implementation : "?");
    } else {
      row->verdict = CALHOST_VERDICT_MISSING;
      set_reason(row, "no exact calibrated profile for this key (run calhost calibrate)");
    }
    return 1;
  }
  const calstore_profile *p = got->profile;
  row->stored_policy = base_str_dup(p->policy);
  row->stored_implementation = base_str_dup(p->key.implementation);
  row->stored_median = measurement(p, "median_latency");
  row->stored_spread = measurement(p, "spread");
  calstore_lookup_result_free(&got);
  return 0;
}

/* The measurements of the stored policy and the default now, into row.
 * Returns 1 when judged (the policy was rejected or not measured), 0 to
 * go on; *default_same: the stored policy is the default's text. */
static int judge_measured(const cal_result *x, verify_row *row, int *default_same) {
  const sweep_result *s = &x->sweep;
  const sweep_candidate *mine = candidate(s, 0);
  const sweep_candidate *def = candidate(s, CALHOST_SWEEP_DEFAULT_INDEX);
  if (def) {
    row->default_policy = base_str_dup(def->policy);
    if (def->status == CALHOST_CANDIDATE_MEASURED) {
      row->default_median = def->figures.median_us;
      row->default_spread = def->figures.mad_us;
      row->default_min = def->figures.min_us;
    }
  }
  /* a stored policy that is the default's is measured once, as the
   * default (the engine never runs a candidate equal to the default again) */
  *default_same =
      def && base_policy_same(def->policy, row->stored_policy);
  if (!mine && *default_same)
    mine = def;
  if (x->kind == CAL_SKIPPED || !mine) {
    row->verdict = CALHOST_VERDICT_ERROR;
    set_reason(row, "not measured: %s",
               x->message ? x->message : (s->error[0] ? s->error : "no result"));
    return 1;
  }
  if (mine->status == CALHOST_CANDIDATE_REJECTED) {
    row->verdict = CALHOST_VERDICT_INVALID;
    set_reason(row, "%s", mine->reason ? mine->reason : "rejected");
    return 1;
  }
  if (mine->status != CALHOST_CANDIDATE_MEASURED || !isfinite(mine->figures.median_us)) {
    row->verdict = CALHOST_VERDICT_ERROR;
    set_reason(row, "%s", mine->reason ? mine->reason : "not measured");
    return 1;
  }
  row->current_median = mine->figures.median_us;
  row->current_spread = mine->figures.mad_us;
  row->current_cv = mine->figures.cv;
  row->current_min = mine->figures.min_us;
  row->current_samples = mine->figures.samples;
  row->noisy = mine->figures.noisy;
  return 0;
}

/* The verdict of a measured key by the rule, and its why (the same in
 * the table's notes and in --json). */
static void judge_numbers(verify_row *row, int default_same, double threshold) {
  calibrate_verify_numbers n = {row->stored_median,  row->current_median, row->current_min,
                                row->default_median, row->default_min,    default_same};
  row->verdict = calibrate_verify_judge(&n, threshold);
  char q[32], m[32];
  if (row->verdict == CALHOST_VERDICT_SLOWER)
    set_reason(
        row, "%sx the stored median",
        base_text_figure(q, sizeof q, verify_ratio(row->current_median, row->stored_median), 3));
  else if (row->verdict == CALHOST_VERDICT_LOST_TO_DEFAULT)
    set_reason(
        row, "%sx the default's median (default %.60s)",
        base_text_figure(q, sizeof q, verify_ratio(row->current_median, row->default_median), 3),
        row->default_policy ? row->default_policy : "?");
  else if (row->verdict == CALHOST_VERDICT_INVALID)
    set_reason(row,
               "the stored profile's median_latency is %s: nothing to compare with (recalibrate "
               "the key)",
               isfinite(row->stored_median) ? base_text_figure(m, sizeof m, row->stored_median, 4)
               : isnan(row->stored_median)  ? "missing"
                                            : "not finite");
}

/* Judges one result of the measuring pass into *row (zeroed here). */
void verify_judge(cal_run *r, size_t index, double threshold, verify_row *row) {
  const cal_result *x = &r->sink->results[index];
  memset(row, 0, sizeof *row);
  row->result = index;
  row->stored_median = row->stored_spread = NAN;
  row->current_median = row->current_spread = row->current_cv = row->current_min = NAN;
  row->default_median = row->default_spread = row->default_min = NAN;
  if (!verify_has_key(x)) { /* build_key failed, or the budget ran out before the sweep */
    row->verdict = CALHOST_VERDICT_ERROR;
    set_reason(row, "%s", x->message ? x->message : "not measured");
    return;
  }
  int default_same = 0;
  if (judge_override(r, x, row) || judge_stored(r, x, row) || judge_measured(x, row, &default_same))
    return;
  judge_numbers(row, default_same, threshold);
}

void verify_free_row(verify_row *row) {
  free(row->reason);
  free(row->stored_policy);
  free(row->stored_implementation);
  free(row->default_policy);
}

/* Same exact key (a backend that caps its thread count builds one key for
 * several targets): verified once. */
/* a and b (both with a key) are one exact key: the same backend, workload
 * (its model), thread count and processor (a device backend's processor is
 * its device: each device has keys of its own) */
int verify_same_key(const cal_result *a, const cal_result *b) {
  return a->workload == b->workload && a->key.thread_count == b->key.thread_count && a->backend &&
         b->backend && !strcmp(a->backend, b->backend) && a->key.processor && b->key.processor &&
         !strcmp(a->key.processor, b->key.processor);
}

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

/* One row per exact key the measuring pass reached (a key built by
 * several targets once). Returns 0, -1 when out of memory. */
int verify_judge_all(cal_run *r, cal_verify *cv) {
  cv->rows = calloc(r->sink->result_count + 1, sizeof *cv->rows);
  if (!cv->rows)
    return -1;
  for (size_t i = 0; i < r->sink->result_count; i++) {
    const cal_result *x = &r->sink->results[i];
    if (x->kind == CAL_SKIPPED && !verify_has_key(x))
      continue; /* unsupported: the plugin does not serve this workload */
    int dup = 0;
    for (size_t j = 0; j < cv->count && !dup; j++)
      dup = verify_has_key(x) && verify_same_key(&r->sink->results[cv->rows[j].result], x);
    if (!dup)
      verify_judge(r, i, cv->v->threshold, &cv->rows[cv->count++]);
  }
  return 0;
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
