/*
 * internal.h: what the files of the report part share: HTML text output
 * (html.c), policies as parameters and their effect (params.c), and the
 * SVG charts (charts.c) that page.c assembles, and recorded spaces read as
 * runs (space.c).
 * Internal to host/report.
 */
#ifndef CALHOST_REPORT_INTERNAL_H
#define CALHOST_REPORT_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#define RPT_HIDDEN __attribute__((visibility("hidden")))

/* ---- space.c ----------------------------------------------------------- */

/* Whether a file starting with head[0..len) is a recorded search space
 * (host/search's space file) rather than a run's JSON. */
RPT_HIDDEN int rpt_is_space_file(const char *head, size_t len);

/* Parses the space file text[0..len) (name for messages) into a run object
 * of one result whose candidates are the recorded configurations (rejected
 * ones with their reason) and whose winner is the fastest. Returns the
 * object (caller json_decref()s it), or NULL with "name:line: ..." in err. */
RPT_HIDDEN json_t *rpt_space_load(const char *text, size_t len, const char *name, char *err,
                                  size_t cap);

/* ---- html.c ------------------------------------------------------------ */

/* The length of the valid UTF-8 sequence at p (at most left bytes), or 0
 * when the bytes there are not valid UTF-8 (overlong forms, surrogates and
 * code points above U+10FFFF are invalid). */
RPT_HIDDEN size_t rpt_utf8_seq(const unsigned char *p, size_t left);

/* Replaces every invalid UTF-8 byte of buf[0..len) by U+FFFD (EF BF BD).
 * Returns a new NUL-terminated buffer (malloc'd, caller frees) with its
 * length in *out_len, or NULL when out of memory. */
RPT_HIDDEN char *rpt_utf8_repair(const char *buf, size_t len, size_t *out_len);

/* Writes s as HTML text (safe in element content and in quoted attribute
 * values): & < > " ' escaped; invalid UTF-8, C0 and C1 control characters
 * (except line feed and tab) and DEL become U+FFFD. At most max characters
 * (code points) are written, then an ellipsis; max 0: no limit. NULL
 * writes nothing. */
RPT_HIDDEN void rpt_text(FILE *o, const char *s, size_t max);
/* rpt_text with a line-break opportunity (<wbr>) after each character of
 * breaks (e.g. ";" in policies, "_" in workload names). */
RPT_HIDDEN void rpt_text_wbr(FILE *o, const char *s, size_t max, const char *breaks);

/* A latency in microseconds for people: "12.5 ns", "5.48 µs", "319.5 µs", "2.31 ms";
 * "–" when not a finite number. Returns buf. */
RPT_HIDDEN const char *rpt_us(char *buf, size_t cap, double us);

/* ---- params.c ---------------------------------------------------------- */

/* A policy split into parameters: "name=value;name=value" (or, without any
 * ';' and every part a "name=value", the GPU plugins' earlier stored form
 * "name=value,name=value"). A part without
 * '=' is named by its position ("#1", "#2", ...); a policy with no '=' at
 * all is one parameter named "policy". Names and values are malloc'd. */
typedef struct rpt_policy {
  char **names, **values;
  size_t count;
} rpt_policy;

/* Parses policy (NULL: no parameters) into *out (zeroed first). Returns 0,
 * or -1 when out of memory (then *out is empty). */
RPT_HIDDEN int rpt_policy_parse(const char *policy, rpt_policy *out);
RPT_HIDDEN void rpt_policy_free(rpt_policy *p);
/* The value of parameter name, or NULL. Borrowed from p. */
RPT_HIDDEN const char *rpt_policy_get(const rpt_policy *p, const char *name);

/* One candidate of a result, as the page draws it (strings borrowed from
 * the run's JSON). median is NAN when the candidate has no samples. */
typedef struct rpt_cand {
  const char *policy, *status, *reason;
  double median, spread, cv;
  long samples;
  int is_default, is_winner, noisy;
  rpt_policy params;
} rpt_cand;

/* Whether a candidate counts for the effects and the heat map: it has a
 * median, and it is not the backend's default (a generic policy that would
 * credit its own odd values with its slowness) unless the default won. */
RPT_HIDDEN int rpt_in_effects(const rpt_cand *c);

/* The effect of one parameter over the candidates that count: its
 * distinct values (numeric order when every value is a number, else text
 * order), the best median among the candidates with each value, and its
 * influence: the worst of those bests over the best of them (1 = no
 * effect: the best candidate of every value is as fast). */
typedef struct rpt_effect {
  const char *name; /* borrowed from a candidate's params */
  const char **values;
  double *best;
  size_t *count; /* candidates with each value */
  size_t nvalues;
  int numeric; /* values are in numeric order (every one a number), else text order */
  double influence;
} rpt_effect;

/* The effects of every parameter that takes at least two values among the
 * candidates that count (rpt_in_effects), most influential first, in *out (malloc'd;
 * free with rpt_effects_free). Returns the count, or 0 (none, or out of
 * memory). */
RPT_HIDDEN size_t rpt_effects(const rpt_cand *c, size_t n, rpt_effect **out);
RPT_HIDDEN void rpt_effects_free(rpt_effect *e, size_t n);
/* The index of value v in e->values, or (size_t)-1 (a binary search:
 * O(log n), so that the effects and the heat map of 40,000 candidates with
 * distinct values take O(n log n)). */
RPT_HIDDEN size_t rpt_effect_value(const rpt_effect *e, const char *v);

/* ---- charts.c ---------------------------------------------------------- */

/* The sorted curve: every candidate with a median, fastest first, as a
 * point (class "pt" plus measured/pruned/winner/default) with its spread
 * as a bar, and the default's median as a dashed line when have_default;
 * a note instead when no candidate has a median. */
RPT_HIDDEN void rpt_chart_candidates(FILE *o, const rpt_cand *c, size_t n, double default_median,
                                     int have_default);

/* Horizontal bars: the influence of each parameter (at most 10). */
RPT_HIDDEN void rpt_chart_effects(FILE *o, const rpt_effect *e, size_t n);

/* The heat map of two parameters (b may be NULL: one row): each cell
 * (class "cell") the best median of the candidates with that pair of
 * values, coloured by its ratio to best (the fastest median of the result).
 * id makes the gradient's id unique in the page. */
RPT_HIDDEN void rpt_chart_heatmap(FILE *o, const rpt_effect *a, const rpt_effect *b,
                                  const rpt_cand *c, size_t n, double best, size_t id);

/* ---- model.c ------------------------------------------------------------ */

/* Whether root is the JSON of `calhost model bench --json` ("command":
 * "model bench", "totals" and "nodes" arrays). */
RPT_HIDDEN int rpt_is_model_bench(const json_t *root);
/* The model view of such a root on o with the report's stylesheet.
 * Returns 0, or -1 with err when writing failed. */
RPT_HIDDEN int rpt_model_page(const json_t *bench, const char *source, const char *style, FILE *o,
                              char *err, size_t cap);

#endif /* CALHOST_REPORT_INTERNAL_H */
