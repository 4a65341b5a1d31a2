/*
 * output.c: what `calhost calibrate` prints: the progress bar (a terminal
 * that understands cursor escapes) or plain progress lines, the summary
 * table with the failures and warnings after it, and the full JSON report
 * (--json). Every text line goes through base/text.h (store and plugin
 * text is escaped), every JSON value through base/json.h.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "base/text.h"
#include "base/words.h"
#include "isolate/isolate.h"
#include "race.h"
#include "run.h"

#ifndef CALHOST_VERSION_STRING
#define CALHOST_VERSION_STRING "unknown"
#endif

static const char *kind_word(cal_kind k) {
  static const char *const words[] = {
      [CAL_PENDING] = "pending", [CAL_STORED] = "stored",         [CAL_SKIPPED] = "skipped",
      [CAL_FAILED] = "failed",   [CAL_NOT_STORED] = "not_stored", [CAL_MEASURED] = "measured"};
  return BASE_WORD(words, CAL_MEASURED, k, "unknown");
}

/* The status word of the summary table: with persistence off nothing
 * reaches a file, so "stored" would be a lie. */
static const char *status_word(const cal_run *r, cal_kind k) {
  if (k == CAL_STORED && !r->set->cfg->persistence_enabled)
    return "not persisted";
  return kind_word(k);
}

static const char *nz(const char *s, const char *dflt) {
  return s ? s : dflt;
}

size_t cal_sweeps_shown(const cal_run *r) {
  return r->wave_done ? r->wave_shown : r->sweeps_done;
}

void cal_progress(cal_run *r) {
  if (!r->set->bar || !r->cur.plugin)
    return;
  const int width = 20;
  size_t total = r->sweeps_total ? r->sweeps_total : 1;
  int fill = (int)((double)r->sweeps_done / (double)total * width);
  if (fill > width)
    fill = width;
  char bar[32], be[256], we[256];
  for (int i = 0; i < width; i++)
    bar[i] = i < fill ? '#' : ' ';
  bar[width] = '\0';
  /* the cursor escapes are ours; the names are escaped */
  char tw[48];
  if (r->cur.device)
    snprintf(tw, sizeof tw, "device %u", r->cur.device->index);
  else
    snprintf(tw, sizeof tw, "t=%u", r->cur.threads);
  fprintf(r->set->err, "\r\033[K[%s] %s %s %s candidate %u/%u", bar,
          base_text_escape(be, sizeof be, r->cur.plugin->backend),
          base_text_escape(we, sizeof we, cal_workload_name(r, r->cur.workload)), tw,
          r->cur.ordinal, r->cur.total);
  fflush(r->set->err);
  r->bar_drawn = 1;
}

/* "t=N" for a CPU sweep, "device N" for a device sweep. */
static const char *target_word(const cal_result *x, char buf[48]) {
  if (x->on_device)
    snprintf(buf, 48, "device %u", x->device_index);
  else
    snprintf(buf, 48, "t=%u", x->threads);
  return buf;
}

/* The clock the median came from: the plugin's device timers or the host's. */
static const char *clock_word(const cal_result *x) {
  return x->sweep.device_timed ? "device" : "host";
}

void cal_progress_line(cal_run *r, const cal_result *x) {
  char tw[48];
  if (r->set->o->quiet || r->set->o->json)
    return;
  if (r->set->bar) {
    cal_progress(r);
    return;
  }
  if (x->kind == CAL_PENDING || x->kind == CAL_STORED) {
    const char *pol = x->sweep.winner_policy ? x->sweep.winner_policy : "";
    /* a policy may be up to CALHOST_POLICY_MAX_LENGTH bytes: show its start */
    char med[32];
    base_text_printf(
        r->set->err, "calhost: [%zu/%zu] %s %s %s: %.60s%s %s us (%s clock)\n", cal_sweeps_shown(r),
        r->sweeps_total, nz(x->backend, "?"), cal_workload_name(r, x->workload), target_word(x, tw),
        pol, strlen(pol) > 60 ? "..." : "",
        base_text_figure(med, sizeof med, x->sweep.figures.median_us, 4), clock_word(x));
  } else {
    base_text_printf(r->set->err, "calhost: [%zu/%zu] %s %s %s: %s: %s\n", cal_sweeps_shown(r),
                     r->sweeps_total, nz(x->backend, "?"), cal_workload_name(r, x->workload),
                     target_word(x, tw), kind_word(x->kind), nz(x->message, ""));
  }
  fflush(r->set->err);
}

void cal_progress_end(cal_run *r) {
  if (r->set->bar && r->bar_drawn) {
    fprintf(r->set->err, "\r\033[K");
    fflush(r->set->err);
  }
}

/* Who a rejection names, into who: "default policy", "numbered candidate
 * N" (the plugin's candidate index), or "candidate" for a point of a
 * described space (its policy follows; its index is only the search's
 * evaluation order, which names nothing the author knows). */
static void rejected_who(const sweep_result *s, const sweep_rejection *rj, char *who, size_t cap) {
  if (rj->index == CALHOST_SWEEP_DEFAULT_INDEX)
    snprintf(who, cap, "default policy");
  else if (s->numbered)
    snprintf(who, cap, "numbered candidate %u", rj->index);
  else if (rj->policy)
    snprintf(who, cap, "candidate");
  else
    snprintf(who, cap, "evaluation %u", rj->index + 1);
}

/* "; search S1, S2": the strategies the sweeps of the run ran (so that a
 * rigor or --budget is never mistaken for what ran), "" when none ran. */
static const char *strategies_used(const cal_run *r, char *buf, size_t cap) {
  uint32_t seen = 0;
  size_t n = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < r->sink->result_count; i++) {
    const sweep_result *s = &r->sink->results[i].sweep;
    if (!s->evaluated || s->strategy >= 32 || (seen & (1u << s->strategy)))
      continue;
    seen |= 1u << s->strategy;
    int k = snprintf(buf + n, cap - n, "%s%s", n ? ", " : "; search ",
                     base_strategy_name((search_strategy)s->strategy));
    if (k < 0 || (size_t)k >= cap - n)
      break;
    n += (size_t)k;
  }
  return buf;
}

/* Candidates a successful sweep rejected (wrong output, refused policy):
 * not failures, but an operator should see them without --json. */
static size_t print_rejection_warnings(cal_run *r, FILE *o) {
  size_t n = 0;
  for (size_t i = 0; i < r->sink->result_count; i++) {
    const cal_result *x = &r->sink->results[i];
    if (x->kind == CAL_FAILED)
      continue;
    for (size_t j = 0; j < x->sweep.rejection_count && j < 10; j++) {
      const sweep_rejection *rj = &x->sweep.rejections[j];
      char who[48];
      rejected_who(&x->sweep, rj, who, sizeof who);
      if (!n++)
        fprintf(o, "\nwarnings:\n");
      base_text_printf(o, "  %s %s t=%u: %s%s%.60s rejected: %s\n", nz(x->backend, "?"),
                       cal_workload_name(r, x->workload), x->threads, who, rj->policy ? " " : "",
                       nz(rj->policy, ""), nz(rj->reason, ""));
    }
    if (x->sweep.rejection_count > 10)
      base_text_printf(o, "  %s %s t=%u: ... and %zu more rejected candidates (see --json)\n",
                       nz(x->backend, "?"), cal_workload_name(r, x->workload), x->threads,
                       x->sweep.rejection_count - 10);
  }
  return n;
}

/* The summary table: one row per sweep. */
static void print_table(cal_run *r, FILE *o) {
  size_t pw = 6, ww = 8, lw = 14;
  for (size_t i = 0; i < r->sink->result_count; i++) {
    const cal_result *x = &r->sink->results[i];
    size_t n = x->backend ? strlen(x->backend) : 1;
    pw = n > pw ? n : pw;
    n = strlen(cal_workload_name(r, x->workload));
    ww = n > ww ? n : ww;
    n = x->sweep.winner_policy ? strlen(x->sweep.winner_policy) : 1;
    lw = n > lw ? (n > 48 ? 48 : n) : lw;
  }
  fprintf(o, "%-*s  %-*s  %7s  %6s  %-*s  %12s  %10s  %8s  %6s  %s\n", (int)pw, "plugin", (int)ww,
          "workload", "threads", "device", (int)lw, "winning policy", "median (us)", "spread",
          "speedup", "clock", "status");
  for (size_t i = 0; i < r->sink->result_count; i++) {
    const cal_result *x = &r->sink->results[i];
    const char *name = cal_workload_name(r, x->workload);
    char dev[16] = "-";
    if (x->on_device)
      snprintf(dev, sizeof dev, "%u", x->device_index);
    if (x->kind == CAL_STORED || x->kind == CAL_NOT_STORED) {
      char speed[32] = "-", med[32], spread[32];
      if (x->sweep.have_default && x->sweep.speedup > 0 && isfinite(x->sweep.speedup))
        snprintf(speed, sizeof speed, "%sx",
                 base_text_figure(med, sizeof med, x->sweep.speedup, 3));
      base_text_figure(spread, sizeof spread, x->sweep.figures.mad_us, 3);
      base_text_figure(med, sizeof med, x->sweep.figures.median_us, 6);
      base_text_printf(o, "%-*s  %-*s  %7u  %6s  %-*.*s  %12s  %10s  %8s  %6s  %s%s%s\n", (int)pw,
                       x->backend, (int)ww, name, x->threads, dev, (int)lw, 48,
                       x->sweep.winner_policy, med, spread, speed, clock_word(x),
                       status_word(r, x->kind), x->sweep.figures.noisy ? " (noisy)" : "",
                       x->sweep.unchecked ? " (unchecked)" : "");
    } else {
      base_text_printf(o, "%-*s  %-*s  %7u  %6s  %-*s  %12s  %10s  %8s  %6s  %s: %s\n", (int)pw,
                       nz(x->backend, "-"), (int)ww, name, x->threads, dev, (int)lw, "-", "-", "-",
                       "-", "-", kind_word(x->kind), nz(x->message, ""));
    }
  }
  if (!r->sink->result_count)
    fprintf(o, "(no sweeps ran)\n");
}

/* The failed sweeps and the run's failures, on f. */
static void print_failures(cal_run *r, FILE *f) {
  size_t failed_sweeps = 0;
  for (size_t i = 0; i < r->sink->result_count; i++)
    failed_sweeps +=
        r->sink->results[i].kind == CAL_FAILED || r->sink->results[i].kind == CAL_NOT_STORED;
  if (!r->sink->failure_count && !failed_sweeps)
    return;
  fprintf(f, "\nfailures:\n");
  for (size_t i = 0; i < r->sink->result_count; i++) {
    const cal_result *x = &r->sink->results[i];
    if (x->kind == CAL_FAILED || x->kind == CAL_NOT_STORED)
      base_text_printf(f, "  %s workload %s t=%u: %s\n", nz(x->backend, "?"),
                       cal_workload_name(r, x->workload), x->threads, nz(x->message, "failed"));
  }
  for (size_t i = 0; i < r->sink->failure_count; i++) {
    const cal_failure *x = &r->sink->failures[i];
    char where[512] = "";
    if (x->workload)
      snprintf(where, sizeof where, " workload %s t=%u", x->workload, x->threads);
    base_text_printf(f, "  %s%s: %s\n", nz(x->backend, "calhost"), where, nz(x->message, "failed"));
    if (x->output) {
      char first[200];
      snprintf(first, sizeof first, "%s", x->output);
      char *nl = strchr(first, '\n');
      if (nl)
        *nl = '\0';
      base_text_printf(f, "    plugin output began: %s\n", first);
    }
  }
}

/* The rejected candidates of the failed sweeps, and what --record wrote. */
static void print_rejected_and_recorded(cal_run *r, FILE *o) {
  for (size_t i = 0; i < r->sink->result_count; i++) {
    const cal_result *x = &r->sink->results[i];
    if (x->kind != CAL_FAILED || !x->sweep.rejection_count)
      continue;
    fputc('\n', o);
    base_text_printf(o, "%s %s t=%u rejected candidates:\n", nz(x->backend, "?"),
                     cal_workload_name(r, x->workload), x->threads);
    for (size_t j = 0; j < x->sweep.rejection_count && j < 10; j++) {
      const sweep_rejection *rj = &x->sweep.rejections[j];
      char who[48];
      rejected_who(&x->sweep, rj, who, sizeof who);
      base_text_printf(o, "  %s%s%.60s: %s\n", who, rj->policy ? " " : "", nz(rj->policy, ""),
                       nz(rj->reason, ""));
    }
    if (x->sweep.rejection_count > 10)
      fprintf(o, "  ... and %zu more (see --json)\n", x->sweep.rejection_count - 10);
  }
  for (size_t i = 0; i < r->sink->result_count; i++) {
    const cal_result *x = &r->sink->results[i];
    if (x->recorded)
      base_text_printf(o, "%s %s t=%u: recorded %u evaluated candidates (%s) to %s\n",
                       nz(x->backend, "?"), cal_workload_name(r, x->workload), x->threads,
                       x->sweep.evaluated, base_strategy_name((search_strategy)x->sweep.strategy),
                       x->recorded);
  }
}

/* The warnings and the run's one-line context (rigor, search, governor,
 * load, store, shard). */
static void print_warnings_and_context(cal_run *r, FILE *o) {
  size_t shown = print_rejection_warnings(r, o);
  if (r->sink->warning_count) {
    if (!shown)
      fprintf(o, "\nwarnings:\n");
    for (size_t i = 0; i < r->sink->warning_count; i++)
      base_text_printf(o, "  %s\n", r->sink->warnings[i]);
  }
  fputc('\n', o);
  char shard[48] = "";
  const calibrate_options *opt = r->set->o;
  if (opt->shard.count > 1) /* calibrate --shard I/N (fleet calibration) */
    snprintf(shard, sizeof shard, "; shard %u/%u", (unsigned)opt->shard.index,
             (unsigned)opt->shard.count);
  char strategies[128];
  base_text_printf(o, "rigor %s%s; governor %s; load average %.2f; store %s%s%s\n",
                   r->set->rigor_name, strategies_used(r, strategies, sizeof strategies),
                   r->set->env.governor[0] ? r->set->env.governor : "unknown",
                   r->set->env.load_average[0], r->set->store ? calstore_path(r->set->store) : "-",
                   r->set->cfg->persistence_enabled ? "" : " (persistence disabled: not persisted)",
                   shard);
}

void cal_print_summary(cal_run *r, FILE *o) {
  int quiet = r->set->o->quiet;
  if (!quiet)
    print_table(r, o);
  print_failures(r, quiet ? r->set->err : o);
  if (!quiet) {
    print_rejected_and_recorded(r, o);
    print_warnings_and_context(r, o);
  }
  if (r->interrupted)
    fprintf(r->set->err,
            "calhost: calibrate: interrupted by %s; finished workloads were committed\n",
            isolate_signal_name(r->interrupted));
}

/* ---- JSON ------------------------------------------------------------- */

static const char *candidate_word(sweep_candidate_status st) {
  static const char *const words[] = {[CALHOST_CANDIDATE_MEASURED] = "measured",
                                      [CALHOST_CANDIDATE_PRUNED] = "pruned",
                                      [CALHOST_CANDIDATE_REJECTED] = "rejected",
                                      [CALHOST_CANDIDATE_UNMEASURED] = "unmeasured"};
  return BASE_WORD(words, CALHOST_CANDIDATE_UNMEASURED, st, "unknown");
}

/* The keys of a sweep's figures in JSON: a result's measurements use the
 * store's measurement names, a candidate's the short ones. */
typedef struct figure_keys {
  const char *median, *min, *iterations;
} figure_keys;

static const figure_keys result_figure_keys = {"median_latency_us", "min_latency_us",
                                               "iterations_per_sample"};
static const figure_keys candidate_figure_keys = {"median_us", "min_us", "iterations"};

/* Writes figures f as members (median, spread_us, min, cv, samples,
 * iterations) under keys k; first as base_json_key's. */
static void json_figures(FILE *o, int first, const sweep_figures *f, const figure_keys *k) {
  base_json_member_number(o, first, k->median, f->median_us);
  base_json_member_number(o, 0, "spread_us", f->mad_us);
  base_json_member_number(o, 0, k->min, f->min_us);
  base_json_member_number(o, 0, "cv", f->cv);
  base_json_member_uint(o, 0, "samples", f->samples);
  base_json_member_uint(o, 0, k->iterations, f->iterations);
}

/* ,"candidates":[{"policy", "default", "winner", "status", "reason",
 * "median_us", "spread_us", "min_us", "cv", "samples", "iterations", "noisy"}]:
 * every candidate of the sweep in the order run (for `calhost report`). */
static void json_candidates(const sweep_result *s, FILE *o) {
  fputs(",\"candidates\":[", o);
  for (size_t i = 0; i < s->candidate_entries; i++) {
    const sweep_candidate *c = &s->candidates[i];
    fputs(i ? ",{" : "{", o);
    base_json_member_string(o, 1, "policy", c->policy);
    base_json_member_bool(o, 0, "default", c->index == CALHOST_SWEEP_DEFAULT_INDEX);
    base_json_member_bool(o, 0, "winner", s->ok && c->index == s->winner_index);
    base_json_member_string(o, 0, "status", candidate_word(c->status));
    base_json_member_string(o, 0, "reason", c->reason);
    json_figures(o, 0, &c->figures, &candidate_figure_keys);
    base_json_member_bool(o, 0, "noisy", c->figures.noisy);
    fputc('}', o);
  }
  fputc(']', o);
}

static const char *stop_word(uint32_t stop) {
  static const char *const words[] = {[CALHOST_SEARCH_STOP_EXHAUSTED] = "exhausted",
                                      [CALHOST_SEARCH_STOP_EVALUATIONS] = "evaluations",
                                      [CALHOST_SEARCH_STOP_SECONDS] = "seconds",
                                      [CALHOST_SEARCH_STOP_TARGET] = "target",
                                      [CALHOST_SEARCH_STOP_CALLER] = "stopped"};
  return BASE_WORD(words, CALHOST_SEARCH_STOP_CALLER, stop, "unknown");
}

/* ,"search":{"strategy", "space" (numbered|parameters), "space_size" (null:
 * unknown), "budget_evaluations" (null: none), "budget_seconds" (null:
 * none), "evaluated", "stopped" (exhausted|evaluations|seconds|target|
 * stopped), "seconds"}: which candidates the search chose to run. */
static void json_search(const sweep_result *s, FILE *o) {
  fputs(",\"search\":{", o);
  base_json_member_string(o, 1, "strategy", base_strategy_name((search_strategy)s->strategy));
  base_json_member_string(o, 0, "space", s->numbered ? "numbered" : "parameters");
  calibrate_json_member_count(o, 0, "space_size", s->space_size != 0, s->space_size);
  calibrate_json_member_count(o, 0, "budget_evaluations", s->budget_evaluations != 0,
                              s->budget_evaluations);
  base_json_member_number(o, 0, "budget_seconds", s->budget_seconds > 0 ? s->budget_seconds : NAN);
  base_json_member_uint(o, 0, "evaluated", s->evaluated);
  base_json_member_string(o, 0, "stopped", stop_word(s->search_stop));
  base_json_member_number(o, 0, "seconds", s->search_seconds);
  fputc('}', o);
}

static void json_result(cal_run *r, const cal_result *x, FILE *o) {
  const sweep_result *s = &x->sweep;
  fputc('{', o);
  base_json_member_string(o, 1, "plugin", x->backend);
  base_json_member_string(o, 0, "implementation", x->implementation);
  base_json_member_string(o, 0, "workload", cal_workload_name(r, x->workload));
  base_json_member_string(o, 0, "operator", r->set->cfg->workloads[x->workload].operator_name);
  base_json_member_uint(o, 0, "threads", x->threads);
  cal_json_member_device(o, x);
  base_json_member_string(o, 0, "status", kind_word(x->kind));
  /* "stored" in the in-memory store; whether it reached the file */
  base_json_member_bool(o, 0, "persisted",
                        x->kind == CAL_STORED && r->set->cfg->persistence_enabled);
  base_json_member_string(o, 0, "message", x->message);
  if (x->key.processor) {
    base_json_key(o, 0, "key");
    fputc('{', o);
    base_json_member_string(o, 1, "model_digest", x->key.model_digest);
    base_json_member_string(o, 0, "processor", x->key.processor);
    base_json_member_uint(o, 0, "thread_count", x->key.thread_count);
    base_json_key(o, 0, "structure");
    fputc('{', o);
    for (size_t i = 0; i < x->key.structure_count; i++)
      base_json_member_string(o, i == 0, x->key.structure[i].name, x->key.structure[i].value);
    fputs("}}", o);
  } else {
    base_json_member_null(o, 0, "key");
  }
  if (x->kind == CAL_STORED || x->kind == CAL_NOT_STORED || x->kind == CAL_FAILED ||
      x->kind == CAL_PENDING) {
    base_json_member_string(o, 0, "winner", s->winner_policy);
    base_json_member_bool(o, 0, "winner_is_default",
                          s->ok && s->winner_index == CALHOST_SWEEP_DEFAULT_INDEX);
    base_json_key(o, 0, "measurements");
    fputc('{', o);
    json_figures(o, 1, &s->figures, &result_figure_keys);
    base_json_member_number(o, 0, "speedup_vs_default",
                            s->have_default && s->speedup > 0 ? s->speedup : NAN);
    base_json_member_number(o, 0, "default_median_latency_us",
                            s->have_default ? s->default_median_us : NAN);
    base_json_member_bool(o, 0, "noisy", s->figures.noisy);
    base_json_member_bool(o, 0, "unchecked", s->unchecked);
    base_json_member_bool(o, 0, "device_timed", s->device_timed);
    fputc('}', o);
    base_json_member_string(o, 0, "clock", clock_word(x));
    base_json_key(o, 0, "counts");
    fputc('{', o);
    base_json_member_uint(o, 1, "candidates", s->candidate_count);
    base_json_member_uint(o, 0, "planned", s->planned);
    base_json_member_uint(o, 0, "tried", s->tried);
    base_json_member_uint(o, 0, "pruned", s->pruned);
    base_json_member_uint(o, 0, "rejected", s->rejected);
    fputc('}', o);
    base_json_member_bool(o, 0, "budget_exhausted", s->budget_exhausted);
    json_search(s, o);
    base_json_member_string(o, 0, "default_policy", s->default_policy);
    fputs(",\"rejected\":[", o);
    for (size_t i = 0; i < s->rejection_count; i++) {
      fputs(i ? ",{" : "{", o);
      base_json_member_string(o, 1, "policy", s->rejections[i].policy);
      base_json_member_string(o, 0, "reason", s->rejections[i].reason);
      fputc('}', o);
    }
    fputc(']', o);
    json_candidates(s, o);
    base_json_member_bool(o, 0, "portable_stored", x->portable_stored);
    base_json_member_string(o, 0, "portable_note", x->portable_note);
    base_json_member_string(o, 0, "recorded", x->recorded);
  }
  fputc('}', o);
}

void cal_print_json(cal_run *r, FILE *o, int exit_status) {
  fputc('{', o);
  base_json_member_string(o, 1, "calhost_version", CALHOST_VERSION_STRING);
  base_json_member_string(o, 0, "rigor", r->set->rigor_name);
  base_json_member_string(o, 0, "rigor_origin", r->set->o->rigor_origin);
  base_json_member_string(o, 0, "threads_origin", r->set->o->threads_origin);
  base_json_member_string(o, 0, "store", r->set->store ? calstore_path(r->set->store) : NULL);
  base_json_member_bool(o, 0, "force", r->set->o->force);
  if (r->set->o->shard.count > 1) { /* calibrate --shard I/N (fleet calibration) */
    base_json_key(o, 0, "shard");
    fputc('{', o);
    base_json_member_uint(o, 1, "index", r->set->o->shard.index);
    base_json_member_uint(o, 0, "count", r->set->o->shard.count);
    fputc('}', o);
  } else {
    base_json_member_null(o, 0, "shard");
  }
  base_json_key(o, 0, "environment");
  fputc('{', o);
  base_json_member_string(
      o, 1, "processor",
      r->set->targets.processor.description[0] ? r->set->targets.processor.description : NULL);
  base_json_member_string(o, 0, "governor", r->set->env.governor[0] ? r->set->env.governor : NULL);
  fputs(",\"load_average\":[", o);
  for (int i = 0; i < 3; i++) {
    if (i)
      fputc(',', o);
    base_json_number(o, r->set->env.load_average[i] >= 0 ? r->set->env.load_average[i] : NAN);
  }
  fputc(']', o);
  base_json_member_uint(o, 0, "online_cpus", r->set->env.online_cpus);
  fputs(",\"target_cpus\":[", o);
  for (size_t i = 0; i < r->set->targets.cpu_count; i++)
    fprintf(o, "%s%d", i ? "," : "", r->set->targets.cpus[i]);
  fputs("],\"thread_counts\":[", o);
  for (size_t i = 0; i < r->set->targets.count; i++)
    fprintf(o, "%s%u", i ? "," : "", r->set->targets.items[i].thread_count);
  fputs("]},\"results\":[", o);
  for (size_t i = 0; i < r->sink->result_count; i++) {
    if (i)
      fputc(',', o);
    json_result(r, &r->sink->results[i], o);
  }
  fputs("],", o);
  cal_race_json(r, o); /* race.c: the races after the sweeps */
  cal_json_failures_and_end(r, o, exit_status);
}

void cal_json_member_device(FILE *o, const cal_result *x) {
  if (x->on_device) {
    base_json_key(o, 0, "device");
    fputc('{', o);
    base_json_member_uint(o, 1, "index", x->device_index);
    base_json_member_string(o, 0, "name", x->device_name);
    base_json_member_string(o, 0, "identity", x->device_identity);
    fputc('}', o);
  } else {
    base_json_member_null(o, 0, "device");
  }
}

void calibrate_json_member_count(FILE *o, int first, const char *key, int known, uint64_t v) {
  if (known)
    base_json_member_uint(o, first, key, v);
  else
    base_json_member_null(o, first, key);
}

void cal_json_failures_and_end(cal_run *r, FILE *o, int exit_status) {
  fputs("\"failures\":[", o);
  for (size_t i = 0; i < r->sink->failure_count; i++) {
    const cal_failure *f = &r->sink->failures[i];
    fputs(i ? ",{" : "{", o);
    base_json_member_string(o, 1, "plugin", f->backend);
    base_json_member_string(o, 0, "workload", f->workload);
    calibrate_json_member_count(o, 0, "threads", f->workload != NULL, f->threads);
    base_json_member_string(o, 0, "candidate", f->candidate);
    base_json_member_string(o, 0, "message", f->message);
    base_json_member_string(o, 0, "output", f->output);
    fputc('}', o);
  }
  fputc(']', o);
  base_json_member_strings(o, 0, "warnings", r->sink->warnings, r->sink->warning_count);
  base_json_member_bool(o, 0, "interrupted", r->interrupted);
  base_json_member_int(o, 0, "exit_status", exit_status);
  base_json_member_number(o, 0, "seconds", sweep_now() - r->set->started);
  fputs("}\n", o);
}
