/*
 * verify.c: `calhost verify` (see verify.h) as two modes of the calibrate
 * driver (run.h's cal_mode): the measuring pass (each key's sweep measures
 * the stored exact profile's policy against the default, as explicit
 * candidates; nothing is stored) and, with --recalibrate, a second pass
 * that verify drives itself over exactly the failed keys (a search, forced,
 * committed in one batch, exact profiles only). Here: the verdict rule, the
 * rows (one per exact key), and the output (table or JSON). The driver
 * knows nothing of verdicts; the engine (host/sweep/measure.c) measures.
 */
#include "verify.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json.h"
#include "base/str.h"
#include "base/text.h"
#include "base/words.h"
#include "isolate/isolate.h"
#include "run.h"
#include "runtime/binding.h"

#ifndef CALHOST_VERSION_STRING
#define CALHOST_VERSION_STRING "unknown"
#endif

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

typedef struct verify_row {
  calibrate_verdict verdict;
  size_t result; /* index into the results (the measuring pass) */
  char *reason;  /* why the verdict (every one but ok, which has NULL) */
  char *stored_policy, *stored_implementation;
  double stored_median, stored_spread;
  double current_median, current_spread, current_cv, current_min;
  uint32_t current_samples;
  int noisy;
  char *default_policy;
  double default_median, default_spread, default_min;
  /* --recalibrate */
  int recal_tried;
  size_t recal_result; /* index into the results when recal_tried */
} verify_row;

/* verify's state (the modes' r->mode_state): the options and the rows. */
typedef struct cal_verify {
  const calibrate_verify_options *v;
  verify_row *rows; /* NULL until the measuring pass is judged (judge_all) */
  size_t count;
  int recalibrated;         /* the second pass ran */
  size_t keys_tried;        /* keys the second pass was to recalibrate */
  size_t keys_recalibrated; /* of them, stored anew (an interrupt leaves some not_run) */
  size_t commits_before;
} cal_verify;

static double measurement(const calstore_profile *p, const char *name) {
  for (size_t i = 0; p && i < p->measurement_count; i++)
    if (p->measurements[i].name && !strcmp(p->measurements[i].name, name))
      return p->measurements[i].value;
  return NAN;
}

static int has_key(const cal_result *x) {
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
static double ratio(double a, double b) {
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
      def && def->policy && row->stored_policy && !strcmp(def->policy, row->stored_policy);
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
    set_reason(row, "%sx the stored median",
               base_text_figure(q, sizeof q, ratio(row->current_median, row->stored_median), 3));
  else if (row->verdict == CALHOST_VERDICT_LOST_TO_DEFAULT)
    set_reason(row, "%sx the default's median (default %.60s)",
               base_text_figure(q, sizeof q, ratio(row->current_median, row->default_median), 3),
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
static void judge(cal_run *r, size_t index, double threshold, verify_row *row) {
  const cal_result *x = &r->sink->results[index];
  memset(row, 0, sizeof *row);
  row->result = index;
  row->stored_median = row->stored_spread = NAN;
  row->current_median = row->current_spread = row->current_cv = row->current_min = NAN;
  row->default_median = row->default_spread = row->default_min = NAN;
  if (!has_key(x)) { /* build_key failed, or the budget ran out before the sweep */
    row->verdict = CALHOST_VERDICT_ERROR;
    set_reason(row, "%s", x->message ? x->message : "not measured");
    return;
  }
  int default_same = 0;
  if (judge_override(r, x, row) || judge_stored(r, x, row) || judge_measured(x, row, &default_same))
    return;
  judge_numbers(row, default_same, threshold);
}

static void free_row(verify_row *row) {
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
static int same_key(const cal_result *a, const cal_result *b) {
  return a->workload == b->workload && a->key.thread_count == b->key.thread_count && a->backend &&
         b->backend && !strcmp(a->backend, b->backend) && a->key.processor && b->key.processor &&
         !strcmp(a->key.processor, b->key.processor);
}

/* y (of the recalibration pass) is x's key recalibrated: the same key, or
 * a failure without a key at the same target */
static int recal_of(const cal_result *x, const cal_result *y) {
  if (has_key(y))
    return same_key(x, y);
  return x->workload == y->workload && x->threads == y->threads && x->on_device == y->on_device &&
         (!x->on_device || x->device_index == y->device_index) && x->backend && y->backend &&
         !strcmp(x->backend, y->backend);
}

/* ---- progress --------------------------------------------------------- */

/* the device column: the device's index, "-" for a CPU sweep */
static const char *device_word(const cal_result *x, char *buf, size_t cap) {
  if (x->on_device)
    snprintf(buf, cap, "%u", x->device_index);
  else
    snprintf(buf, cap, "-");
  return buf;
}

/* " device N" for a device's sweep, "" for a CPU sweep */
static const char *device_suffix(const cal_result *x, char *buf, size_t cap) {
  if (x->on_device)
    snprintf(buf, cap, " device %u", x->device_index);
  else if (cap)
    buf[0] = '\0';
  return buf;
}

/* a latency (4 significant digits), "-" when unknown */
static const char *us(char *buf, size_t cap, double v) {
  return base_text_figure(buf, cap, v, 4);
}

/* The measuring pass's progress line of key x: its verdict now. */
static void verify_announce(cal_run *r, const cal_result *x) {
  const cal_verify *cv = r->mode_state;
  const cal_setup *set = r->set;
  if (set->o->quiet || set->o->json || (x->kind == CAL_SKIPPED && !has_key(x)))
    return;
  if (set->bar) {
    cal_progress(r);
    return;
  }
  char on[32];
  base_text_printf(set->err, "calhost: [%zu/%zu] %s %s t=%u%s: ", cal_sweeps_shown(r),
                   r->sweeps_total, x->backend ? x->backend : "?",
                   cal_workload_name(r, x->workload), x->threads, device_suffix(x, on, sizeof on));
  for (const cal_result *y = r->sink->results; y < x; y++)
    if (has_key(y) && same_key(x, y)) { /* one key for several targets */
      base_text_printf(set->err, "%s\n", x->message ? x->message : "same key as before");
      return;
    }
  verify_row row;
  char a[32], b[32], c[32];
  judge(r, (size_t)(x - r->sink->results), cv->v->threshold, &row);
  base_text_printf(set->err, "%s", calibrate_verdict_name(row.verdict));
  if (isfinite(row.current_median))
    base_text_printf(set->err, " (%s us, stored %s us, default %s us)",
                     us(a, sizeof a, row.current_median), us(b, sizeof b, row.stored_median),
                     us(c, sizeof c, row.default_median));
  else if (row.reason)
    base_text_printf(set->err, ": %s", row.reason);
  fputc('\n', set->err);
  fflush(set->err);
  free_row(&row);
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
static void recalibrate(cal_run *r, cal_verify *cv) {
  cal_key_ref *keys = calloc(cv->count + 1, sizeof *keys);
  size_t n = 0;
  if (!keys)
    return;
  for (size_t i = 0; i < cv->count; i++) {
    const cal_result *x = &r->sink->results[cv->rows[i].result];
    if (calibrate_verdict_failed(cv->rows[i].verdict) && has_key(x)) {
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

/* One row per exact key the measuring pass reached (a key built by
 * several targets once). Returns 0, -1 when out of memory. */
static int judge_all(cal_run *r, cal_verify *cv) {
  cv->rows = calloc(r->sink->result_count + 1, sizeof *cv->rows);
  if (!cv->rows)
    return -1;
  for (size_t i = 0; i < r->sink->result_count; i++) {
    const cal_result *x = &r->sink->results[i];
    if (x->kind == CAL_SKIPPED && !has_key(x))
      continue; /* unsupported: the plugin does not serve this workload */
    int dup = 0;
    for (size_t j = 0; j < cv->count && !dup; j++)
      dup = has_key(x) && same_key(&r->sink->results[cv->rows[j].result], x);
    if (!dup)
      judge(r, i, cv->v->threshold, &cv->rows[cv->count++]);
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
  if (judge_all(r, cv) != 0)
    return 2;
  if (r->interrupted)
    return 128 + r->interrupted;
  if (cv->v->recalibrate)
    recalibrate(r, cv);
  if (r->interrupted)
    return 128 + r->interrupted;
  return verify_status(r, cv);
}

/* ---- output ----------------------------------------------------------- */

static const char *recal_word(const cal_run *r, const verify_row *row) {
  if (!row->recal_tried)
    return NULL;
  if (row->recal_result == (size_t)-1)
    return "not_run";
  switch (r->sink->results[row->recal_result].kind) {
  case CAL_STORED:
    return "stored";
  case CAL_FAILED:
    return "failed";
  default:
    return "not_stored";
  }
}

static void print_json(cal_run *r, FILE *o, const cal_verify *cv, int status) {
  size_t counts[CALHOST_VERDICT_OVERRIDE + 1] = {0};
  fputc('{', o);
  base_json_member_string(o, 1, "calhost_version", CALHOST_VERSION_STRING);
  base_json_member_string(o, 0, "command", "verify");
  base_json_member_string(o, 0, "rigor", r->set->rigor_name);
  base_json_member_number(o, 0, "threshold", cv ? cv->v->threshold : NAN);
  base_json_member_string(o, 0, "store", r->set->store ? calstore_path(r->set->store) : NULL);
  base_json_member_string(
      o, 0, "processor",
      r->set->targets.processor.description[0] ? r->set->targets.processor.description : NULL);
  fputs(",\"results\":[", o);
  for (size_t i = 0; cv && i < cv->count; i++) {
    const verify_row *row = &cv->rows[i];
    const cal_result *x = &r->sink->results[row->result];
    counts[row->verdict]++;
    fputs(i ? ",{" : "{", o);
    base_json_member_string(o, 1, "verdict", calibrate_verdict_name(row->verdict));
    base_json_member_string(o, 0, "backend", x->backend);
    base_json_member_string(o, 0, "operator", cal_workload_operator(r, x->workload));
    base_json_member_string(o, 0, "workload", cal_workload_name(r, x->workload));
    base_json_member_uint(o, 0, "threads", x->threads);
    cal_json_member_device(o, x);
    calibrate_json_member_count(o, 0, "thread_count", has_key(x), x->key.thread_count);
    base_json_member_string(o, 0, "implementation", x->implementation);
    base_json_member_string(o, 0, "stored_implementation", row->stored_implementation);
    base_json_member_string(o, 0, "stored_policy", row->stored_policy);
    base_json_member_number(o, 0, "stored_median", row->stored_median);
    base_json_member_number(o, 0, "stored_spread", row->stored_spread);
    base_json_member_number(o, 0, "current_median", row->current_median);
    base_json_member_number(o, 0, "current_spread", row->current_spread);
    base_json_member_number(o, 0, "current_min", row->current_min);
    base_json_member_number(o, 0, "current_cv", row->current_cv);
    base_json_member_uint(o, 0, "samples", row->current_samples);
    base_json_member_bool(o, 0, "noisy", row->noisy);
    base_json_member_number(o, 0, "ratio", ratio(row->current_median, row->stored_median));
    base_json_member_string(o, 0, "default_policy", row->default_policy);
    base_json_member_number(o, 0, "default_median", row->default_median);
    base_json_member_number(o, 0, "default_min", row->default_min);
    base_json_member_number(o, 0, "default_ratio", ratio(row->current_median, row->default_median));
    base_json_member_string(o, 0, "reason", row->reason);
    if (!row->recal_tried) {
      base_json_member_null(o, 0, "recalibration");
    } else {
      const cal_result *y =
          row->recal_result != (size_t)-1 ? &r->sink->results[row->recal_result] : NULL;
      base_json_key(o, 0, "recalibration");
      fputc('{', o);
      base_json_member_string(o, 1, "status", recal_word(r, row));
      base_json_member_string(o, 0, "policy", y && y->sweep.ok ? y->sweep.winner_policy : NULL);
      base_json_member_number(o, 0, "median", y && y->sweep.ok ? y->sweep.figures.median_us : NAN);
      base_json_member_string(o, 0, "message",
                              y ? y->message : "the recalibration did not reach this key");
      fputc('}', o);
    }
    fputc('}', o);
  }
  fputs("],\"counts\":{", o);
  for (int i = 0; i <= CALHOST_VERDICT_OVERRIDE; i++)
    base_json_member_uint(o, i == 0, calibrate_verdict_name((calibrate_verdict)i), counts[i]);
  fputc('}', o);
  if (cv && cv->recalibrated) {
    base_json_key(o, 0, "recalibrated");
    fputc('{', o);
    base_json_member_uint(o, 1, "keys", cv->keys_recalibrated);
    base_json_member_uint(o, 0, "tried", cv->keys_tried);
    base_json_member_uint(o, 0, "commits", r->sink->commits - cv->commits_before);
    fputc('}', o);
  } else {
    base_json_member_null(o, 0, "recalibrated");
  }
  fputc(',', o);
  cal_json_failures_and_end(r, o, status);
}

/* One row per key: the verdict and the figures. */
static void print_rows(cal_run *r, FILE *o, const cal_verify *cv) {
  size_t bw = 7, ww = 8;
  for (size_t i = 0; i < cv->count; i++) {
    const cal_result *x = &r->sink->results[cv->rows[i].result];
    size_t n = x->backend ? strlen(x->backend) : 1;
    bw = n > bw ? n : bw;
    n = strlen(cal_workload_name(r, x->workload));
    ww = n > ww ? n : ww;
  }
  base_text_printf(o, "%-*s  %-*s  %7s  %6s  %-15s  %11s  %11s  %11s  %6s  %11s  %s\n", (int)bw,
                   "backend", (int)ww, "workload", "threads", "device", "verdict", "stored us",
                   "current us", "fastest us", "ratio", "default us", "stored policy");
  for (size_t i = 0; i < cv->count; i++) {
    const verify_row *row = &cv->rows[i];
    const cal_result *x = &r->sink->results[row->result];
    char a[32], b[32], c[32], d[32], e[32], dev[16];
    const char *pol = row->stored_policy ? row->stored_policy : "-";
    base_text_figure(c, sizeof c, ratio(row->current_median, row->stored_median), 3);
    device_word(x, dev, sizeof dev);
    base_text_printf(o, "%-*s  %-*s  %7u  %6s  %-15s  %11s  %11s  %11s  %6s  %11s  %.48s%s\n",
                     (int)bw, x->backend ? x->backend : "-", (int)ww,
                     cal_workload_name(r, x->workload), x->threads, dev,
                     calibrate_verdict_name(row->verdict), us(a, sizeof a, row->stored_median),
                     us(b, sizeof b, row->current_median), us(e, sizeof e, row->current_min), c,
                     us(d, sizeof d, row->default_median), pol, strlen(pol) > 48 ? "..." : "");
  }
}

/* "why:": every verdict but ok, with its reason. */
static void print_why(cal_run *r, FILE *o, const cal_verify *cv) {
  int any = 0;
  for (size_t i = 0; i < cv->count; i++) {
    const verify_row *row = &cv->rows[i];
    if (row->verdict == CALHOST_VERDICT_OK)
      continue;
    const cal_result *x = &r->sink->results[row->result];
    char on[32];
    if (!any++)
      fprintf(o, "\nwhy:\n");
    base_text_printf(o, "  %s %s t=%u%s: %s", x->backend, cal_workload_name(r, x->workload),
                     x->threads, device_suffix(x, on, sizeof on),
                     calibrate_verdict_name(row->verdict));
    if (row->reason)
      base_text_printf(o, ": %s", row->reason);
    fputc('\n', o);
  }
}

/* --recalibrate: what became of each key it tried. */
static void print_recalibrated(cal_run *r, FILE *o, const cal_verify *cv) {
  size_t commits = r->sink->commits - cv->commits_before;
  fprintf(o, "\nrecalibrated %zu of %zu key%s (%zu commit%s):\n", cv->keys_recalibrated,
          cv->keys_tried, cv->keys_tried == 1 ? "" : "s", commits, commits == 1 ? "" : "s");
  for (size_t i = 0; i < cv->count; i++) {
    const verify_row *row = &cv->rows[i];
    if (!row->recal_tried)
      continue;
    const cal_result *x = &r->sink->results[row->result];
    const cal_result *y =
        row->recal_result != (size_t)-1 ? &r->sink->results[row->recal_result] : NULL;
    char a[32], on[32];
    base_text_printf(o, "  %s %s t=%u%s: %s", x->backend, cal_workload_name(r, x->workload),
                     x->threads, device_suffix(x, on, sizeof on), recal_word(r, row));
    if (y && y->sweep.ok)
      base_text_printf(o, " %.60s %s us", y->sweep.winner_policy,
                       us(a, sizeof a, y->sweep.figures.median_us));
    if (y && y->message && y->kind != CAL_STORED)
      base_text_printf(o, ": %s", y->message);
    fputc('\n', o);
  }
}

/* The count of each verdict, the threshold, rigor and store. */
static void print_counts(cal_run *r, FILE *o, const cal_verify *cv) {
  size_t counts[CALHOST_VERDICT_OVERRIDE + 1] = {0};
  for (size_t i = 0; i < cv->count; i++)
    counts[cv->rows[i].verdict]++;
  fprintf(o, "\nverify: %zu key%s:", cv->count, cv->count == 1 ? "" : "s");
  int first = 1;
  for (int i = 0; i <= CALHOST_VERDICT_OVERRIDE; i++)
    if (counts[i]) {
      base_text_printf(o, "%s %zu %s", first ? "" : ",", counts[i],
                       calibrate_verdict_name((calibrate_verdict)i));
      first = 0;
    }
  char why[400];
  if (!cv->count)
    base_text_printf(o, " nothing to verify (%s)", cal_nothing_reason(r, why, sizeof why));
  fputc('\n', o);
  base_text_printf(o, "threshold %g%% (median and fastest sample); rigor %s; store %s\n",
                   cv->v->threshold * 100.0, r->set->rigor_name,
                   r->set->store ? calstore_path(r->set->store) : "-");
}

/* The human output: rows, why, the recalibration, failures (on err with
 * --quiet), warnings and counts. */
static void print_table(cal_run *r, const cal_verify *cv) {
  FILE *o = r->set->out;
  int quiet = r->set->o->quiet;
  if (!quiet && cv && cv->count)
    print_rows(r, o, cv);
  if (!quiet && cv) {
    print_why(r, o, cv);
    if (cv->recalibrated)
      print_recalibrated(r, o, cv);
  }
  FILE *f = quiet ? r->set->err : o;
  if (r->sink->failure_count) {
    fprintf(f, "\nfailures:\n");
    for (size_t i = 0; i < r->sink->failure_count; i++) {
      const cal_failure *x = &r->sink->failures[i];
      base_text_printf(f, "  %s", x->backend ? x->backend : "calhost");
      if (x->workload)
        base_text_printf(f, " workload %s t=%u", x->workload, x->threads);
      base_text_printf(f, ": %s\n", x->message ? x->message : "failed");
    }
  }
  if (!quiet) {
    if (r->sink->warning_count) {
      fprintf(o, "\nwarnings:\n");
      for (size_t i = 0; i < r->sink->warning_count; i++)
        base_text_printf(o, "  %s\n", r->sink->warnings[i]);
    }
    if (cv)
      print_counts(r, o, cv);
  }
  if (r->interrupted)
    base_text_printf(r->set->err, "calhost: verify: interrupted by %s\n",
                     isolate_signal_name(r->interrupted));
}

/* The table (or --json) on out, and the JSON into --report's file. */
static void verify_print(cal_run *r, int status) {
  cal_verify *cv = r->mode_state;
  if (!cv->rows && judge_all(r, cv) != 0) /* the set-up failed: no key */
    cv = NULL;
  const calibrate_options *o = r->set->o;
  if (o->json)
    print_json(r, r->set->out, cv, status);
  else
    print_table(r, cv);
  if (o->json_out)
    print_json(r, o->json_out, cv, status);
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
    free_row(&cv.rows[i]);
  free(cv.rows);
  return rc;
}
