/*
 * verify_verdict.c: each key's verdict (verify_internal.h, verify.h): the
 * rule on numbers and the verdicts' words, the row of one key of the
 * measuring pass (the override, the stored profile, the measurements
 * judged) and the rows of the pass, and the key and row helpers. Below the
 * other files of `calhost verify`: verify.c (the modes and the passes),
 * verify_recal.c (--recalibrate) and verify_output.c (progress, table and
 * JSON) call it, and it calls none of them.
 */
#include "verify.h"
#include "verify_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/policy.h"
#include "base/str.h"
#include "base/text.h"
#include "base/words.h"
#include "run.h"
#include "runtime/binding.h"

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

/* ---- one key's row --------------------------------------------------- */

static double measurement(const calstore_profile *p, const char *name) {
  for (size_t i = 0; p && i < p->measurement_count; i++)
    if (p->measurements[i].name && !strcmp(p->measurements[i].name, name))
      return p->measurements[i].value;
  return NAN;
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
  *default_same = def && base_policy_same(def->policy, row->stored_policy);
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

/* ---- rows and keys ---------------------------------------------------- */

int verify_has_key(const cal_result *x) {
  return x->key.model_digest && x->key.processor && x->key.thread_count;
}

/* a / b, NAN when either is unknown or b is not positive. */
double verify_ratio(double a, double b) {
  return isfinite(a) && isfinite(b) && b > 0 ? a / b : NAN;
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
