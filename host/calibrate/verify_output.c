/*
 * verify_output.c: what `calhost verify` shows: the measuring pass's
 * progress line per key, and the result as a table (rows, why, the
 * recalibrated keys, counts) or JSON (stdout with --json, and --report's
 * file). The verdicts are verify.c's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "base/text.h"
#include "isolate/isolate.h"
#include "verify_internal.h"

#ifndef CALHOST_VERSION_STRING
#define CALHOST_VERSION_STRING "unknown"
#endif

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
void verify_announce(cal_run *r, const cal_result *x) {
  const cal_verify *cv = r->mode_state;
  const cal_setup *set = r->set;
  if (set->o->quiet || set->o->json || (x->kind == CAL_SKIPPED && !verify_has_key(x)))
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
    if (verify_has_key(y) && verify_same_key(x, y)) { /* one key for several targets */
      base_text_printf(set->err, "%s\n", x->message ? x->message : "same key as before");
      return;
    }
  verify_row row;
  char a[32], b[32], c[32];
  verify_judge(r, (size_t)(x - r->sink->results), cv->v->threshold, &row);
  base_text_printf(set->err, "%s", calibrate_verdict_name(row.verdict));
  if (isfinite(row.current_median))
    base_text_printf(set->err, " (%s us, stored %s us, default %s us)",
                     us(a, sizeof a, row.current_median), us(b, sizeof b, row.stored_median),
                     us(c, sizeof c, row.default_median));
  else if (row.reason)
    base_text_printf(set->err, ": %s", row.reason);
  fputc('\n', set->err);
  fflush(set->err);
  verify_free_row(&row);
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
    calibrate_json_member_count(o, 0, "thread_count", verify_has_key(x), x->key.thread_count);
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
    base_json_member_number(o, 0, "ratio", verify_ratio(row->current_median, row->stored_median));
    base_json_member_string(o, 0, "default_policy", row->default_policy);
    base_json_member_number(o, 0, "default_median", row->default_median);
    base_json_member_number(o, 0, "default_min", row->default_min);
    base_json_member_number(o, 0, "default_ratio",
                            verify_ratio(row->current_median, row->default_median));
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
    base_text_figure(c, sizeof c, verify_ratio(row->current_median, row->stored_median), 3);
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
void verify_print(cal_run *r, int status) {
  cal_verify *cv = r->mode_state;
  if (!cv->rows && verify_judge_all(r, cv) != 0) /* the set-up failed: no key */
    cv = NULL;
  const calibrate_options *o = r->set->o;
  if (o->json)
    print_json(r, r->set->out, cv, status);
  else
    print_table(r, cv);
  if (o->json_out)
    print_json(r, o->json_out, cv, status);
}
