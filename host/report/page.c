/*
 * page.c: the HTML page of a calibrate run: the summary table first, then
 * per plugin x workload x thread count the winner against the default, the
 * sorted curve of every candidate, the effect of each parameter and a heat
 * map of the two most influential ones, the pruned and rejected candidates
 * with their reasons and the noise flags; failures and warnings; the
 * environment last. Every value of the run is read defensively (a missing
 * or mistyped field shows as unknown) and every string goes through
 * rpt_text (escaped, control characters and invalid UTF-8 replaced).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "report.h"
#include "base/str.h"

/* ---- reading the run --------------------------------------------------- */

static const char *S(const json_t *o, const char *k) {
  const json_t *v = json_object_get(o, k);
  return json_is_string(v) ? json_string_value(v) : NULL;
}
static double N(const json_t *o, const char *k) {
  const json_t *v = json_object_get(o, k);
  return json_is_number(v) ? json_number_value(v) : NAN;
}
/* A latency of the run that the charts can draw: in (0, 1e12] us, else NAN. */
static double latency(const json_t *o, const char *k) {
  double v = N(o, k);
  return v > 0 && v <= 1e12 ? v : NAN;
}
/* A spread: in [0, 1e12] us, else NAN. */
static double spread(const json_t *o, const char *k) {
  double v = N(o, k);
  return v >= 0 && v <= 1e12 ? v : NAN;
}
static long I(const json_t *o, const char *k) {
  const json_t *v = json_object_get(o, k);
  return json_is_integer(v) ? (long)json_integer_value(v) : -1;
}
static int B(const json_t *o, const char *k) {
  return json_is_true(json_object_get(o, k));
}

/* The candidates of a result; from "candidates", or for a run file written
 * before calhost recorded them, the winner and the default alone. */
typedef struct cands {
  rpt_cand *c;
  size_t n;
  int recorded; /* 1: from "candidates" */
  size_t measured, pruned, rejected, unmeasured, noisy;
} cands;

static void cands_free(cands *cs) {
  for (size_t i = 0; i < cs->n; i++)
    rpt_policy_free(&cs->c[i].params);
  free(cs->c);
  memset(cs, 0, sizeof *cs);
}

static void cands_read(const json_t *res, cands *cs) {
  memset(cs, 0, sizeof *cs);
  const json_t *arr = json_object_get(res, "candidates");
  const json_t *m = json_object_get(res, "measurements");
  size_t n = json_is_array(arr) ? json_array_size(arr) : 2;
  cs->c = calloc(n ? n : 1, sizeof *cs->c);
  if (!cs->c)
    return;
  if (json_is_array(arr)) {
    cs->recorded = 1;
    for (size_t i = 0; i < n; i++) {
      const json_t *x = json_array_get(arr, i);
      rpt_cand *c = &cs->c[cs->n++];
      c->policy = S(x, "policy");
      c->status = S(x, "status");
      c->reason = S(x, "reason");
      c->median = latency(x, "median_us");
      c->spread = spread(x, "spread_us");
      c->cv = N(x, "cv");
      c->samples = I(x, "samples");
      c->is_default = B(x, "default");
      c->is_winner = B(x, "winner");
      c->noisy = B(x, "noisy");
      rpt_policy_parse(c->policy, &c->params);
      const char *st = c->status ? c->status : "";
      if (!strcmp(st, "pruned"))
        cs->pruned++;
      else if (!strcmp(st, "rejected"))
        cs->rejected += !c->is_default;
      else if (!strcmp(st, "unmeasured"))
        cs->unmeasured++;
      else if (!c->is_default)
        cs->measured++;
      cs->noisy += c->noisy && isfinite(c->median);
    }
    return;
  }
  /* an older run file: the winner and the default */
  if (S(res, "winner")) {
    rpt_cand *c = &cs->c[cs->n++];
    c->policy = S(res, "winner");
    c->status = "measured";
    c->median = latency(m, "median_latency_us");
    c->spread = spread(m, "spread_us");
    c->samples = I(m, "samples");
    c->is_winner = 1;
    c->is_default = B(res, "winner_is_default");
    c->noisy = B(m, "noisy");
    rpt_policy_parse(c->policy, &c->params);
  }
  if (S(res, "default_policy") && !B(res, "winner_is_default") &&
      isfinite(latency(m, "default_median_latency_us"))) {
    rpt_cand *c = &cs->c[cs->n++];
    c->policy = S(res, "default_policy");
    c->status = "measured";
    c->median = latency(m, "default_median_latency_us");
    c->spread = NAN;
    c->samples = -1;
    c->is_default = 1;
    rpt_policy_parse(c->policy, &c->params);
  }
}

/* ---- the page ---------------------------------------------------------- */

static const char STYLE[] =
    ":root{--fg:#1d232b;--muted:#5b6672;--line:#d9dee4;--panel:#f5f7f9;--accent:#0b62c4;"
    "--win:#d9480f;--ok:#2b7a3e;--warn:#9a5b00;--bad:#b42318}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;color:var(--fg);background:#fff;font:14px/1.45 system-ui,-apple-system,"
    "'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif}\n"
    "main{max-width:1200px;margin:0 auto;padding:28px 32px 56px}\n"
    "h1{font-size:26px;margin:0 0 4px;letter-spacing:-.01em}\n"
    "h2{font-size:19px;margin:40px 0 10px;padding-bottom:6px;border-bottom:2px solid var(--line)}\n"
    "h3{font-size:16px;margin:0}\n"
    "a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}\n"
    ".sub{color:var(--muted);margin:0 0 6px}\n"
    ".muted{color:var(--muted)}\n"
    "table{border-collapse:collapse;width:100%;font-size:13px}\n"
    "th,td{padding:6px 6px;border-bottom:1px solid var(--line);text-align:left;"
    "vertical-align:top}\n"
    "th{background:var(--panel);font-weight:600}\n"
    "td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    "tbody tr:hover{background:#fafbfc}\n"
    "code{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;"
    "overflow-wrap:break-word}\n"
    "pre{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--panel);padding:8px;"
    "border-radius:4px;font-size:12px}\n"
    ".pill{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;"
    "font-weight:600;white-space:nowrap;margin-right:3px}\n"
    ".pill.stored{background:#e3f3e7;color:#1e6b34}.pill.skipped{background:#eef1f4;"
    "color:#4a5561}\n"
    ".pill.failed,.pill.not_stored,.pill.rejected{background:#fdeceb;color:#a4161a}\n"
    ".pill.noisy,.pill.unchecked,.pill.budget{background:#fff2dc;color:#8a4b00}\n"
    ".pill.pruned,.pill.unmeasured{background:#eef1f4;color:#4a5561}\n"
    ".pill.measured{background:#e8f0fb;color:#0b4f9c}.pill.default{background:#eceff3;"
    "color:#333}\n"
    ".pill.device{background:#efe9fb;color:#5a2ca0}\n"
    ".cards{display:flex;flex-wrap:wrap;gap:12px;margin:14px 0}\n"
    ".card{border:1px solid var(--line);border-radius:8px;padding:10px 14px;min-width:150px;"
    "background:#fff}\n"
    ".card .k{color:var(--muted);font-size:12px}.card .v{font-size:22px;font-weight:650;"
    "font-variant-numeric:tabular-nums}\n"
    ".card .s{color:var(--muted);font-size:12px}\n"
    ".up{color:var(--ok)}.same{color:var(--muted)}\n"
    ".result{border:1px solid var(--line);border-radius:10px;padding:16px 18px;margin:18px 0;"
    "background:#fff;box-shadow:0 1px 2px rgba(16,24,40,.04)}\n"
    ".rhead{display:flex;flex-wrap:wrap;align-items:baseline;gap:10px}\n"
    ".facts{display:grid;grid-template-columns:max-content 1fr;gap:3px 14px;margin:8px 0 4px}\n"
    ".facts dt{color:var(--muted)}.facts dd{margin:0;min-width:0}\n"
    ".note{background:#fff8e8;border-left:3px solid #e6a23c;padding:6px 10px;margin:8px 0;"
    "border-radius:0 4px 4px 0}\n"
    ".note.bad{background:#fdf0ef;border-color:#d92d20}\n"
    ".charts{display:flex;flex-wrap:wrap;gap:8px 28px;align-items:flex-start}\n"
    "figure{margin:10px 0 4px}figcaption{color:var(--muted);font-size:12px}\n"
    "figure.curve{flex:0 1 680px}figure.side{flex:0 1 360px}figure.heat{flex:1 1 100%}\n"
    "td.wl{white-space:nowrap}tr.group "
    "td{background:#fff;font-weight:650;padding-top:12px;border-bottom:1px solid "
    "#b9c2cc}\n"
    "svg{display:block;max-width:100%;height:auto;font-family:inherit}\n"
    "svg .grid{stroke:#e8ebef;stroke-width:1}svg .axis{stroke:#9aa4ae;stroke-width:1}\n"
    "svg .tick{fill:#5b6672;font-size:11px}svg .label,svg .legend{fill:#3d4752;font-size:12px}\n"
    "svg .axisname{fill:#1d232b;font-size:12px;font-weight:600}\n"
    "svg .measured{fill:#2f6fce}svg .winner{fill:#e8590c;stroke:#fff;stroke-width:1.5}\n"
    "svg .pruned{fill:#fff;stroke:#8c96a1;stroke-width:1.5}\n"
    "svg .default{fill:#1d232b}svg .noisy{fill:none;stroke:#f08c00;stroke-width:1.5}\n"
    "svg .err{stroke:#9db8e6;stroke-width:2}svg .err.pruned{stroke:#c5cbd2}\n"
    "svg .err.winner{stroke:#f4a574}svg .err.default{stroke:#7a838d}\n"
    "svg .defline{stroke:#1d232b;stroke-width:1;stroke-dasharray:5 4}\n"
    "svg .deflabel{fill:#1d232b;font-size:11px}\n"
    "svg .pname{fill:#1d232b;font-size:12px}svg .val{fill:#3d4752;font-size:12px}\n"
    "svg .bar{fill:#9db8e6}svg .bar.top{fill:#2f6fce}\n"
    "svg .cell.empty{fill:#f1f3f5}svg .cell.win{stroke:#1d232b;stroke-width:2.5}\n"
    "svg .cellval{font-size:11px;font-variant-numeric:tabular-nums}\n"
    "details{margin:8px 0}summary{cursor:pointer;color:var(--accent);font-weight:550}\n"
    "details table{margin-top:6px}\n"
    ".sbar{display:inline-block;height:8px;background:#8fd19e;border-radius:2px;"
    "margin-left:6px;vertical-align:middle}\n"
    ".env td:first-child{color:var(--muted);white-space:nowrap;width:180px}\n"
    "footer{margin-top:40px;color:var(--muted);font-size:12px}\n";

static void pill(FILE *o, const char *cls, const char *text) {
  fputs("<span class=\"pill ", o);
  rpt_text(o, cls, 24);
  fputs("\">", o);
  rpt_text(o, text, 40);
  fputs("</span>", o);
}

/* The pills of a result r with measurement m: noisy, unchecked, the time
 * budget ran out (labelled budget), timed on the device. */
static void result_pills(FILE *o, const json_t *r, const json_t *m, const char *budget) {
  if (B(m, "noisy"))
    pill(o, "noisy", "noisy");
  if (B(m, "unchecked"))
    pill(o, "unchecked", "unchecked");
  if (B(r, "budget_exhausted"))
    pill(o, "budget", budget);
  if (B(m, "device_timed"))
    pill(o, "device", "device timed");
}

static const char *status_class(const char *st) {
  static const char *const known[] = {"stored",   "skipped", "failed",   "not_stored", "pending",
                                      "measured", "pruned",  "rejected", "unmeasured"};
  for (size_t i = 0; st && i < sizeof known / sizeof known[0]; i++)
    if (!strcmp(st, known[i]))
      return known[i];
  return "other";
}

static int has_measurements(const json_t *res) {
  return json_is_object(json_object_get(res, "measurements"));
}

static void speedup_cell(FILE *o, double sp) {
  if (!isfinite(sp) || sp <= 0) {
    fputs("<td class=\"num muted\">\xE2\x80\x93</td>", o);
    return;
  }
  double w = sp > 1 ? log2(sp) * 14 : 0;
  w = w > 48 ? 48 : w;
  fprintf(o, "<td class=\"num\"><span class=\"%s\">%.2f\xC3\x97</span>", sp >= 1.02 ? "up" : "same",
          sp);
  fprintf(o, "<span class=\"sbar\" style=\"width:%.0fpx\"></span></td>", w < 2 ? 2 : w);
}

static void summary(FILE *o, const json_t *results) {
  fputs("<h2 id=\"summary\">Summary</h2>\n<table class=\"summary\"><thead><tr>"
        "<th>workload</th><th class=\"num\">threads</th><th>status</th><th>winning policy</th>"
        "<th class=\"num\">median \xC2\xB1 spread</th><th class=\"num\">speedup vs default</th>"
        "<th class=\"num\" title=\"measured / pruned / rejected\">candidates<br>"
        "<span class=\"muted\">meas. / pruned / rej.</span></th><th>flags</th>"
        "</tr></thead><tbody>\n",
        o);
  const char *group = NULL;
  for (size_t i = 0; i < json_array_size(results); i++) {
    const json_t *r = json_array_get(results, i);
    const json_t *m = json_object_get(r, "measurements");
    const json_t *counts = json_object_get(r, "counts");
    const char *plugin = S(r, "plugin");
    char a[32], b[32];
    if (i == 0 || !plugin || !group || strcmp(plugin, group)) {
      fputs("<tr class=\"group\"><td colspan=\"8\">", o);
      rpt_text(o, plugin ? plugin : "(unnamed plugin)", 60);
      fputs(" <span class=\"muted\">", o);
      rpt_text(o, S(r, "implementation"), 60);
      fputs("</span></td></tr>\n", o);
    }
    group = plugin;
    fputs("<tr><td class=\"wl\">", o);
    if (has_measurements(r))
      fprintf(o, "<a href=\"#r%zu\">", i);
    rpt_text(o, S(r, "workload") ? S(r, "workload") : "?", 40);
    fputs(has_measurements(r) ? "</a>" : "", o);
    long t = I(r, "threads");
    if (t >= 0)
      fprintf(o, "</td><td class=\"num\">%ld</td><td>", t);
    else
      fputs("</td><td class=\"num\">?</td><td>", o);
    pill(o, status_class(S(r, "status")), S(r, "status") ? S(r, "status") : "unknown");
    fputs("</td><td>", o);
    if (S(r, "winner")) {
      fputs("<code>", o);
      rpt_text_wbr(o, S(r, "winner"), 80, ";");
      fputs("</code>", o);
    } else {
      fputs("<span class=\"muted\">", o);
      rpt_text(o, S(r, "message"), 160);
      fputs("</span>", o);
    }
    fputs("</td>", o);
    if (m && S(r, "winner")) {
      fprintf(o, "<td class=\"num\">%s <span class=\"muted\">\xC2\xB1 %s</span></td>",
              rpt_us(a, sizeof a, N(m, "median_latency_us")),
              rpt_us(b, sizeof b, N(m, "spread_us")));
      speedup_cell(o, N(m, "speedup_vs_default"));
    } else {
      fputs("<td class=\"num muted\">\xE2\x80\x93</td><td class=\"num muted\">\xE2\x80\x93</td>",
            o);
    }
    if (json_is_object(counts)) {
      long tried = I(counts, "tried"), pr = I(counts, "pruned"), rj = I(counts, "rejected");
      fprintf(o, "<td class=\"num\">%ld / %ld / %ld</td>", tried - pr - rj, pr, rj);
    } else {
      fputs("<td class=\"num muted\">\xE2\x80\x93</td>", o);
    }
    fputs("<td>", o);
    result_pills(o, r, m, "budget");
    if (B(r, "winner_is_default"))
      pill(o, "default", "default won");
    fputs("</td></tr>\n", o);
  }
  if (!json_array_size(results))
    fputs("<tr><td colspan=\"8\" class=\"muted\">No sweep ran.</td></tr>\n", o);
  fputs("</tbody></table>\n", o);
}

static void card(FILE *o, const char *k, const char *vclass, const char *v, const char *s) {
  fprintf(o, "<div class=\"card\"><div class=\"k\">%s</div><div class=\"v %s\">%s</div>", k, vclass,
          v);
  if (s)
    fprintf(o, "<div class=\"s\">%s</div>", s);
  fputs("</div>", o);
}

/* One table of candidates: every one (all) or the pruned and rejected. */
static void cand_table(FILE *o, const cands *cs, int all) {
  fputs("<table><thead><tr>", o);
  if (all)
    fputs("<th class=\"num\">#</th>", o);
  fputs("<th>policy</th><th>status</th><th class=\"num\">median</th><th class=\"num\">spread</th>"
        "<th class=\"num\">samples</th><th>",
        o);
  fputs(all ? "flags" : "reason", o);
  fputs("</th></tr></thead><tbody>\n", o);
  size_t row = 0;
  for (size_t i = 0; i < cs->n; i++) {
    const rpt_cand *c = &cs->c[i];
    const char *st = c->status ? c->status : "unknown";
    if ((!all && !strcmp(st, "measured")) || !strcmp(st, "unmeasured"))
      continue; /* never-run candidates are counted in a note, not listed */
    char a[32], b[32];
    fputs("<tr>", o);
    if (all)
      fprintf(o, "<td class=\"num\">%zu</td>", ++row);
    fputs("<td><code>", o);
    rpt_text_wbr(o, c->policy ? c->policy : "(not recorded)", 160, ";");
    fputs("</code></td><td>", o);
    pill(o, status_class(st), st);
    if (c->is_default)
      pill(o, "default", "default");
    fprintf(o, "</td><td class=\"num\">%s</td><td class=\"num\">%s</td>",
            rpt_us(a, sizeof a, c->median), rpt_us(b, sizeof b, c->spread));
    if (c->samples >= 0)
      fprintf(o, "<td class=\"num\">%ld</td><td>", c->samples);
    else
      fputs("<td class=\"num\">\xE2\x80\x93</td><td>", o);
    if (all) {
      if (c->is_winner)
        pill(o, "stored", "winner");
      if (c->noisy)
        pill(o, "noisy", "noisy");
      rpt_text(o, c->reason, 200);
    } else {
      rpt_text(o, c->reason, 400);
    }
    fputs("</td></tr>\n", o);
  }
  fputs("</tbody></table>\n", o);
}

/* The result's cards: speedup, winner median, candidates tried. */
static void result_cards(FILE *o, const json_t *r, const json_t *m) {
  const json_t *counts = json_object_get(r, "counts");
  char a[48], b[48], line[256];
  double sp = N(m, "speedup_vs_default"), med = N(m, "median_latency_us");
  if (isfinite(sp) && sp > 0) {
    snprintf(a, sizeof a, "%.2f\xC3\x97", sp);
    snprintf(line, sizeof line, "default %s",
             rpt_us(b, sizeof b, N(m, "default_median_latency_us")));
    card(o, "speedup vs backend default", sp >= 1.02 ? "up" : "same", a, line);
  } else if (B(r, "winner_is_default") || json_object_get(r, "default_policy")) {
    /* what the run knows of the default (a recorded space knows nothing:
     * the card is left out rather than claim the backend has none) */
    card(o, "speedup vs backend default", "same", "\xE2\x80\x93",
         B(r, "winner_is_default") ? "the default won"
         : S(r, "default_policy")  ? "the default was not measured"
                                   : "the backend has no default");
  }
  if (isfinite(med)) {
    double cv = N(m, "cv");
    long smp = I(m, "samples"), it = I(m, "iterations_per_sample");
    int n = snprintf(line, sizeof line, "\xC2\xB1 %s", rpt_us(b, sizeof b, N(m, "spread_us")));
    if (isfinite(cv) && n > 0)
      n += snprintf(line + n, sizeof line - (size_t)n, " \xC2\xB7 cv %.1f%%", cv * 100);
    if (smp >= 0 && n > 0)
      snprintf(line + n, sizeof line - (size_t)n, " \xC2\xB7 %ld samples \xC3\x97 %ld", smp, it);
    card(o, "winner median", "", rpt_us(a, sizeof a, med), line);
  }
  if (json_is_object(counts)) {
    long tried = I(counts, "tried"), pr = I(counts, "pruned"), rj = I(counts, "rejected");
    /* the space the search ran on: a described space's valid
     * configurations (search.space_size), else the candidate count (the
     * plugin's numbered list, or a recording's product); unknown: left out */
    const json_t *search = json_object_get(r, "search");
    long space = I(search, "space_size") > 0 ? I(search, "space_size") : I(counts, "candidates");
    int n = snprintf(a, sizeof a, "%ld", tried), k = 0;
    (void)n;
    if (space > 0)
      k = snprintf(line, sizeof line, "of %ld in the space ", space);
    if (k >= 0 && (size_t)k < sizeof line)
      snprintf(line + k, sizeof line - (size_t)k,
               "(%ld planned) \xC2\xB7 %ld pruned \xC2\xB7 %ld rejected", I(counts, "planned"), pr,
               rj);
    card(o, "candidates tried", "", a, line);
  }
}

/* The result's facts: winning policy, default, plugin, key structure,
 * portable profile. */
static void result_facts(FILE *o, const json_t *r) {
  fputs("<dl class=\"facts\">", o);
  if (S(r, "winner")) {
    fputs("<dt>winning policy</dt><dd><code>", o);
    rpt_text_wbr(o, S(r, "winner"), 600, ";");
    fputs("</code></dd>", o);
  }
  if (S(r, "default_policy")) {
    fputs("<dt>backend default</dt><dd><code>", o);
    rpt_text_wbr(o, S(r, "default_policy"), 600, ";");
    fputs("</code></dd>", o);
  }
  if (S(r, "plugin")) {
    fputs("<dt>plugin</dt><dd>", o);
    rpt_text(o, S(r, "plugin"), 80);
    fputc(' ', o);
    rpt_text(o, S(r, "implementation"), 80);
    fputs("</dd>", o);
  }
  const json_t *st = json_object_get(json_object_get(r, "key"), "structure");
  if (json_is_object(st) && json_object_size(st)) {
    fputs("<dt>key structure</dt><dd><code>", o);
    const char *k;
    const json_t *v;
    int first = 1;
    json_object_foreach((json_t *)st, k, v) {
      fputs(first ? "" : " ", o);
      first = 0;
      rpt_text(o, k, 40);
      fputc('=', o);
      rpt_text(o, json_is_string(v) ? json_string_value(v) : "?", 80);
    }
    fputs("</code></dd>", o);
  }
  if (S(r, "portable_note") || B(r, "portable_stored")) {
    fputs("<dt>portable profile</dt><dd>", o);
    rpt_text(o, B(r, "portable_stored") ? "written from this winner" : S(r, "portable_note"), 300);
    fputs("</dd>", o);
  }
  fputs("</dl>\n", o);
}

/* The result's notes: failures, noise, unchecked, budget, old run files. */
static void result_notes(FILE *o, const json_t *r, const json_t *m, const cands *cs) {
  double med = N(m, "median_latency_us");
  if (S(r, "message")) {
    fputs("<div class=\"note bad\">", o);
    rpt_text(o, S(r, "message"), 1000);
    fputs("</div>\n", o);
  }
  if (B(m, "noisy"))
    fprintf(o,
            "<div class=\"note\">Noisy: the winner's spread is %.1f%% of its median (cv %.1f%%), "
            "above the noise threshold. Its lead may not hold: rerun on a quieter machine, or with "
            "more samples (<code>--repetitions N</code>, <code>--rigor exhaustive</code>).</div>\n",
            isfinite(med) && med > 0 ? N(m, "spread_us") / med * 100 : NAN, N(m, "cv") * 100);
  if (cs->noisy && cs->recorded)
    fprintf(
        o,
        "<div class=\"note\">%zu of the candidates with samples are noisy (orange ring).</div>\n",
        cs->noisy);
  if (B(m, "unchecked"))
    fputs("<div class=\"note\">Unchecked: the plugin has no check(), so the candidates' outputs "
          "were not compared with a reference.</div>\n",
          o);
  if (B(r, "budget_exhausted"))
    fprintf(
        o,
        "<div class=\"note\">The time budget ran out: %zu planned candidate%s never ran.</div>\n",
        cs->unmeasured, cs->unmeasured == 1 ? "" : "s");
  if (!cs->recorded)
    fputs("<div class=\"note\">This run file has no per-candidate data (written by an older "
          "calhost): only the winner and the default are shown.</div>\n",
          o);
}

/* The result's charts: every candidate, the parameters' influence, the
 * heat map of the two most influential. */
static void result_charts(FILE *o, const json_t *m, const cands *cs, size_t idx) {
  double best = INFINITY;
  for (size_t i = 0; i < cs->n; i++)
    if (isfinite(cs->c[i].median) && cs->c[i].median < best)
      best = cs->c[i].median;
  fputs("<div class=\"charts\">\n<figure class=\"curve\">\n", o);
  rpt_chart_candidates(o, cs->c, cs->n, latency(m, "default_median_latency_us"),
                       isfinite(latency(m, "default_median_latency_us")));
  fputs("<figcaption>Every candidate with samples, fastest first: the dot is its median "
        "latency, the bar its spread (median absolute deviation). Pruned candidates (hollow) "
        "were stopped after a few samples as clearly slower. The dashed line is the backend's "
        "default.</figcaption>\n</figure>\n",
        o);
  rpt_effect *ef = NULL;
  size_t ne = rpt_effects(cs->c, cs->n, &ef);
  if (ne) {
    fputs("<figure class=\"side\">\n", o);
    rpt_chart_effects(o, ef, ne);
    fputs("<figcaption>Influence of each parameter: how much slower the best candidate with its "
          "worst value is than the best candidate with its best value (\xC3\x97"
          "1.00: no effect seen). Parameters are read from the policies "
          "(<code>name=value;\xE2\x80\xA6</code>).</figcaption>\n</figure>\n<figure "
          "class=\"heat\">\n",
          o);
    rpt_chart_heatmap(o, &ef[0], ne > 1 ? &ef[1] : NULL, cs->c, cs->n, best, idx);
    fputs("<figcaption>", o);
    if (ne > 1) {
      fputs("The two most influential parameters, <code>", o);
      rpt_text(o, ef[0].name, 40);
      fputs("</code> and <code>", o);
      rpt_text(o, ef[1].name, 40);
      fputs("</code>: ", o);
    } else {
      fputs("The one parameter that varies, <code>", o);
      rpt_text(o, ef[0].name, 40);
      fputs("</code>: ", o);
    }
    fputs("each cell is the best median of the candidates with that value, relative to the "
          "fastest candidate; the framed cell holds the winner; grey cells were not "
          "measured. The backend's default is left out unless it won.</figcaption>\n</figure>\n",
          o);
  } else if (cs->n) {
    fputs("<p class=\"muted\">No parameter varies among the measured candidates.</p>\n", o);
  }
  rpt_effects_free(ef, ne);
  fputs("</div>\n", o);
}

/* The result's tables: pruned and rejected candidates, every candidate. */
static void result_tables(FILE *o, const json_t *r, const cands *cs) {
  size_t off = cs->pruned + cs->rejected;
  for (size_t i = 0; i < cs->n; i++) /* a rejected default counts too */
    off += cs->c[i].is_default && cs->c[i].status && !strcmp(cs->c[i].status, "rejected");
  const json_t *rej = json_object_get(r, "rejected");
  if (off) {
    fprintf(o, "<details%s><summary>Pruned and rejected candidates (%zu)</summary>\n",
            off <= 12 || cs->rejected ? " open" : "", off);
    cand_table(o, cs, 0);
    fputs("</details>\n", o);
  } else if (!cs->recorded && json_array_size(rej)) {
    fprintf(o,
            "<details open><summary>Rejected candidates (%zu)</summary><table><thead><tr>"
            "<th>policy</th><th>reason</th></tr></thead><tbody>\n",
            json_array_size(rej));
    for (size_t i = 0; i < json_array_size(rej); i++) {
      const json_t *x = json_array_get(rej, i);
      fputs("<tr><td><code>", o);
      rpt_text(o, S(x, "policy") ? S(x, "policy") : "(not serialized)", 160);
      fputs("</code></td><td>", o);
      rpt_text(o, S(x, "reason"), 400);
      fputs("</td></tr>\n", o);
    }
    fputs("</tbody></table></details>\n", o);
  }
  if (cs->recorded && cs->n) {
    fprintf(o, "<details><summary>Every candidate that ran (%zu)</summary>\n",
            cs->n - cs->unmeasured);
    cand_table(o, cs, 1);
    fputs("</details>\n", o);
  }
}

static void result_section(FILE *o, const json_t *r, size_t idx) {
  const json_t *m = json_object_get(r, "measurements");
  cands cs;
  cands_read(r, &cs);
  fprintf(o, "<section class=\"result\" id=\"r%zu\">\n<div class=\"rhead\"><h3>", idx);
  rpt_text(o, S(r, "workload") ? S(r, "workload") : "?", 80);
  fputs("</h3><span class=\"muted\">", o);
  rpt_text(o, S(r, "operator"), 40);
  long t = I(r, "threads");
  if (t >= 0)
    fprintf(o, " \xC2\xB7 %ld thread%s", t, t == 1 ? "" : "s");
  fputs("</span>", o);
  pill(o, status_class(S(r, "status")), S(r, "status") ? S(r, "status") : "unknown");
  result_pills(o, r, m, "budget exhausted");
  fputs("</div>\n<div class=\"cards\">", o);
  result_cards(o, r, m);
  fputs("</div>\n", o);
  result_facts(o, r);
  result_notes(o, r, m, &cs);
  result_charts(o, m, &cs, idx);
  result_tables(o, r, &cs);
  fputs("</section>\n", o);
  cands_free(&cs);
}

static void results(FILE *o, const json_t *results) {
  size_t n = json_array_size(results);
  for (size_t i = 0; i < n;) {
    const char *plugin = S(json_array_get(results, i), "plugin");
    size_t end = i + 1;
    while (end < n) {
      const char *p = S(json_array_get(results, end), "plugin");
      if (!(p && plugin && !strcmp(p, plugin)) && !(!p && !plugin))
        break;
      end++;
    }
    fputs("<h2>", o);
    rpt_text(o, plugin ? plugin : "(unnamed plugin)", 80);
    fputs(" <span class=\"muted\">", o);
    rpt_text(o, S(json_array_get(results, i), "implementation"), 80);
    fputs("</span></h2>\n", o);
    int skipped = 0;
    for (size_t k = i; k < end; k++) {
      const json_t *r = json_array_get(results, k);
      if (has_measurements(r))
        result_section(o, r, k);
      else
        skipped = 1;
    }
    if (skipped) {
      fputs("<p class=\"muted\">Not calibrated in this run:</p><ul>\n", o);
      for (size_t k = i; k < end; k++) {
        const json_t *r = json_array_get(results, k);
        if (has_measurements(r))
          continue;
        fputs("<li>", o);
        rpt_text(o, S(r, "workload"), 80);
        if (I(r, "threads") >= 0)
          fprintf(o, " \xC2\xB7 %ld thread%s", I(r, "threads"), I(r, "threads") == 1 ? "" : "s");
        fputs(" \xE2\x80\x94 ", o);
        pill(o, status_class(S(r, "status")), S(r, "status") ? S(r, "status") : "unknown");
        rpt_text(o, S(r, "message"), 400);
        fputs("</li>\n", o);
      }
      fputs("</ul>\n", o);
    }
    i = end;
  }
}

static void problems(FILE *o, const json_t *run) {
  const json_t *fl = json_object_get(run, "failures"), *wr = json_object_get(run, "warnings");
  if (!json_array_size(fl) && !json_array_size(wr))
    return;
  fputs("<h2 id=\"problems\">Failures and warnings</h2>\n", o);
  if (json_array_size(fl)) {
    fputs("<table><thead><tr><th>plugin</th><th>where</th><th>message</th></tr></thead><tbody>\n",
          o);
    for (size_t i = 0; i < json_array_size(fl); i++) {
      const json_t *f = json_array_get(fl, i);
      fputs("<tr><td>", o);
      rpt_text(o, S(f, "plugin") ? S(f, "plugin") : "calhost", 80);
      fputs("</td><td>", o);
      if (S(f, "workload")) {
        rpt_text(o, S(f, "workload"), 80);
        if (I(f, "threads") >= 0)
          fprintf(o, " t=%ld", I(f, "threads"));
      }
      if (S(f, "candidate")) {
        fputs("<br>candidate <code>", o);
        rpt_text(o, S(f, "candidate"), 160);
        fputs("</code>", o);
      }
      fputs("</td><td>", o);
      rpt_text(o, S(f, "message"), 1000);
      if (S(f, "output")) {
        fputs("<pre>", o);
        rpt_text(o, S(f, "output"), 2000);
        fputs("</pre>", o);
      }
      fputs("</td></tr>\n", o);
    }
    fputs("</tbody></table>\n", o);
  }
  if (json_array_size(wr)) {
    fputs("<ul class=\"warnings\">\n", o);
    for (size_t i = 0; i < json_array_size(wr); i++) {
      const json_t *w = json_array_get(wr, i);
      fputs("<li>", o);
      rpt_text(o, json_is_string(w) ? json_string_value(w) : "?", 1000);
      fputs("</li>\n", o);
    }
    fputs("</ul>\n", o);
  }
}

/* "a;b;c" with a line break after each ';' (identity strings are long). */
static void identity(FILE *o, const char *s) {
  if (!s) {
    fputs("<span class=\"muted\">unknown</span>", o);
    return;
  }
  fputs("<code>", o);
  for (const char *p = s; *p;) {
    size_t n = strcspn(p, ";");
    char part[512];
    snprintf(part, sizeof part, "%.*s", (int)(n < sizeof part - 1 ? n : sizeof part - 1), p);
    rpt_text(o, part, 200);
    p += n;
    if (*p == ';') {
      fputs(";<br>", o);
      p++;
    }
  }
  fputs("</code>", o);
}

static void env_row(FILE *o, const char *k) {
  fprintf(o, "<tr><td>%s</td><td>", k);
}

/* The environment's plugins row: each plugin once, with its implementation. */
static void env_plugins(FILE *o, const json_t *res) {
  env_row(o, "plugins");
  for (size_t i = 0; i < json_array_size(res); i++) {
    const json_t *r = json_array_get(res, i);
    const char *p = S(r, "plugin"), *v = S(r, "implementation");
    int seen = 0;
    for (size_t k = 0; k < i && !seen; k++) {
      const json_t *q = json_array_get(res, k);
      seen = p && S(q, "plugin") && !strcmp(p, S(q, "plugin"));
    }
    if (seen || !p)
      continue;
    fputs("<code>", o);
    rpt_text(o, p, 80);
    fputs("</code> ", o);
    if (v)
      rpt_text(o, v, 80);
    fputs("<br>", o);
  }
  fputs("</td></tr>\n", o);
}

/* The environment's device identities: key processors other than the host's. */
static void env_devices(FILE *o, const json_t *env, const json_t *res) {
  for (size_t i = 0; i < json_array_size(res); i++) {
    const json_t *r = json_array_get(res, i);
    const char *d = S(json_object_get(r, "key"), "processor");
    if (!d || (S(env, "processor") && !strcmp(d, S(env, "processor"))))
      continue;
    int seen = 0;
    for (size_t k = 0; k < i && !seen; k++) {
      const char *e = S(json_object_get(json_array_get(res, k), "key"), "processor");
      seen = e && !strcmp(e, d);
    }
    if (seen)
      continue;
    fputs("<tr><td>device (", o);
    rpt_text(o, S(r, "plugin"), 40);
    fputs(")</td><td>", o);
    identity(o, d);
    fputs("</td></tr>\n", o);
  }
}

/* The environment's CPUs row: online, targets, thread counts (left out
 * when the run knows none). */
static void env_cpus(FILE *o, const json_t *env) {
  const json_t *tc = json_object_get(env, "target_cpus"),
               *th = json_object_get(env, "thread_counts");
  if (I(env, "online_cpus") >= 0 || json_array_size(tc) || json_array_size(th)) {
    const char *sep = "";
    env_row(o, "CPUs");
    if (I(env, "online_cpus") >= 0)
      fprintf(o, "%ld online", I(env, "online_cpus")), sep = "; ";
    if (json_array_size(tc)) {
      fprintf(o, "%stargets ", sep), sep = "; ";
      for (size_t i = 0; i < json_array_size(tc) && i < 512; i++)
        fprintf(o, "%s%lld", i ? "," : "", (long long)json_integer_value(json_array_get(tc, i)));
    }
    if (json_array_size(th)) {
      fprintf(o, "%sthread counts ", sep);
      for (size_t i = 0; i < json_array_size(th) && i < 64; i++)
        fprintf(o, "%s%lld", i ? ", " : "", (long long)json_integer_value(json_array_get(th, i)));
    }
    fputs("</td></tr>\n", o);
  }
}

/* The environment's rigor row, with where the rigor and threads came from. */
static void env_rigor(FILE *o, const json_t *run) {
  if (S(run, "rigor")) {
    env_row(o, "rigor");
    rpt_text(o, S(run, "rigor"), 40);
    if (S(run, "rigor_origin") || S(run, "threads_origin")) {
      fputs(" <span class=\"muted\">(", o);
      if (S(run, "rigor_origin")) {
        fputs("from ", o);
        rpt_text(o, S(run, "rigor_origin"), 200);
      }
      if (S(run, "threads_origin")) {
        fputs(S(run, "rigor_origin") ? "; threads from " : "threads from ", o);
        rpt_text(o, S(run, "threads_origin"), 200);
      }
      fputs(")</span>", o);
    }
    fprintf(o, "%s</td></tr>\n", B(run, "force") ? " \xC2\xB7 --force" : "");
  }
}

static void environment(FILE *o, const json_t *run, const char *source) {
  const json_t *env = json_object_get(run, "environment");
  const json_t *res = json_object_get(run, "results");
  fputs("<h2 id=\"environment\">Environment</h2>\n<table class=\"env\"><tbody>\n", o);
  /* what the run knows, row by row: a recorded space knows the plugin and
   * the processor, not calhost's version, the load or the CPUs (those rows
   * are left out, never shown as placeholders) */
  if (S(run, "calhost_version")) {
    env_row(o, "calhost");
    rpt_text(o, S(run, "calhost_version"), 40);
    fputs("</td></tr>\n", o);
  }
  env_plugins(o, res);
  if (S(env, "processor")) {
    env_row(o, "processor");
    identity(o, S(env, "processor"));
    fputs("</td></tr>\n", o);
  }
  env_devices(o, env, res);
  if (S(env, "governor")) {
    env_row(o, "governor");
    rpt_text(o, S(env, "governor"), 80);
    fputs("</td></tr>\n", o);
  }
  const json_t *la = json_object_get(env, "load_average");
  if (json_array_size(la) >= 3) {
    env_row(o, "load average");
    for (size_t i = 0; i < 3; i++) {
      const json_t *v = json_array_get(la, i);
      if (json_is_number(v))
        fprintf(o, "%s%.2f", i ? " / " : "", json_number_value(v));
      else
        fprintf(o, "%s?", i ? " / " : "");
    }
    fputs(" <span class=\"muted\">(1 / 5 / 15 minutes, at the start)</span></td></tr>\n", o);
  }
  env_cpus(o, env);
  env_rigor(o, run);
  if (json_object_get(run, "store")) { /* a recorded space has none: left out */
    env_row(o, "store");
    fputs("<code>", o);
    rpt_text(o, S(run, "store") ? S(run, "store") : "none", 400);
    fputs("</code></td></tr>\n", o);
  }
  double secs = N(run, "seconds");
  if (isfinite(secs) || json_object_get(run, "exit_status")) { /* a recorded space has neither */
    env_row(o, "run");
    if (isfinite(secs))
      fprintf(o, "%.1f s%s", secs, json_object_get(run, "exit_status") ? "; " : "");
    if (json_object_get(run, "exit_status"))
      fprintf(o, "exit status %ld", I(run, "exit_status"));
    fprintf(o, "%s</td></tr>\n",
            B(run, "interrupted") ? "; interrupted (finished workloads were committed)" : "");
  }
  if (source) {
    env_row(o, "run file");
    fputs("<code>", o);
    rpt_text(o, source, 200);
    fputs("</code></td></tr>\n", o);
  }
  fputs("</tbody></table>\n", o);
}

int report_write_html(const json_t *run, const char *source, FILE *o, char *err, size_t cap) {
  if (rpt_is_model_bench(run)) /* the model view (model.c) */
    return rpt_model_page(run, source, STYLE, o, err, cap);
  const json_t *res = json_object_get(run, "results");
  if (!json_is_object(run) || !json_is_array(res))
    return base_str_fail(
        err, cap, "not the JSON report of `calhost calibrate --json` (no \"results\" array)");
  size_t n = json_array_size(res), stored = 0, skipped = 0, failed = 0, noisy = 0;
  for (size_t i = 0; i < n; i++) {
    const json_t *r = json_array_get(res, i);
    const char *st = S(r, "status");
    stored += st && !strcmp(st, "stored");
    skipped += st && !strcmp(st, "skipped");
    failed += st && (!strcmp(st, "failed") || !strcmp(st, "not_stored"));
    noisy += B(json_object_get(r, "measurements"), "noisy");
  }
  fprintf(o,
          "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>calhost calibration report</title>\n<style>\n%s</style>\n</head>\n"
          "<body>\n<main>\n<h1>Calibration report</h1>\n<p class=\"sub\">",
          STYLE);
  fputs("calhost ", o);
  rpt_text(o, S(run, "calhost_version") ? S(run, "calhost_version") : "", 40);
  fputs(" \xC2\xB7 rigor ", o);
  rpt_text(o, S(run, "rigor") ? S(run, "rigor") : "?", 20);
  fprintf(o, " \xC2\xB7 %zu sweep%s: %zu stored, %zu skipped, %zu failed", n, n == 1 ? "" : "s",
          stored, skipped, failed);
  if (noisy)
    fprintf(o, ", %zu noisy", noisy);
  if (isfinite(N(run, "seconds")))
    fprintf(o, " \xC2\xB7 %.1f s", N(run, "seconds"));
  if (B(run, "interrupted"))
    fputs(" \xC2\xB7 <strong>interrupted</strong>", o);
  fputs("</p>\n<p class=\"sub\">Jump to: <a href=\"#summary\">summary</a> \xC2\xB7 ", o);
  if (json_array_size(json_object_get(run, "failures")) ||
      json_array_size(json_object_get(run, "warnings")))
    fputs("<a href=\"#problems\">failures and warnings</a> \xC2\xB7 ", o);
  fputs("<a href=\"#environment\">environment</a></p>\n", o);
  summary(o, res);
  results(o, res);
  problems(o, run);
  environment(o, run, source);
  fputs("<footer>Written by <code>calhost report</code>. This page is self-contained: no "
        "scripts, no network, charts drawn as inline SVG.</footer>\n</main>\n</body>\n</html>\n",
        o);
  if (fflush(o) != 0 || ferror(o))
    return base_str_fail(err, cap, "write failed: %s", strerror(errno));
  return 0;
}
