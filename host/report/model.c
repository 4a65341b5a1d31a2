/*
 * model.c: the model view of `calhost report` (issue 38): the JSON of
 * `calhost model bench --json` as one self-contained page: the model's
 * totals side by side as an inline SVG bar chart (calhost's selection, each
 * backend tuned, each default), then every node with its chosen backend,
 * policy, time and share of the selection's total (a bar per node). Every
 * string goes through rpt_text.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "base/str.h"
#include "internal.h"

static const char *S(const json_t *o, const char *k) {
  return json_string_value(json_object_get(o, k));
}

static double N(const json_t *o, const char *k) {
  const json_t *v = json_object_get(o, k);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

int rpt_is_model_bench(const json_t *root) {
  const char *c = S(root, "command");
  return json_is_object(root) && c && !strcmp(c, "model bench") &&
         json_is_array(json_object_get(root, "totals")) &&
         json_is_array(json_object_get(root, "nodes"));
}

/* The totals as horizontal bars, the selection first and highlighted. */
static void totals_chart(FILE *o, const json_t *totals, double sel) {
  size_t n = json_array_size(totals);
  double max = 0;
  for (size_t i = 0; i < n; i++) {
    double t = N(json_array_get(totals, i), "total_us");
    if (isfinite(t) && t > max)
      max = t;
  }
  const int row = 28, left = 190, width = 520, h = (int)n * row + 10;
  fprintf(o,
          "<svg class=\"chart\" role=\"img\" aria-label=\"model totals\" width=\"%d\" "
          "height=\"%d\" viewBox=\"0 0 %d %d\">\n",
          left + width + 150, h, left + width + 150, h);
  for (size_t i = 0; i < n; i++) {
    const json_t *t = json_array_get(totals, i);
    double v = N(t, "total_us");
    const char *kind = S(t, "kind");
    int y = (int)i * row + 5;
    int sel_row = kind && !strcmp(kind, "selection");
    const char *fill = sel_row ? "#d9480f" : kind && !strcmp(kind, "tuned") ? "#0b62c4" : "#9aa5b1";
    fprintf(o, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"12\">", left - 8, y + 15);
    rpt_text(o, S(t, "name") ? S(t, "name") : "?", 40);
    fputs("</text>\n", o);
    char buf[48];
    if (isfinite(v) && max > 0) {
      int w = (int)(width * v / max);
      fprintf(o, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n", left, y + 3,
              w > 1 ? w : 1, row - 10, fill);
      fprintf(o, "<text x=\"%d\" y=\"%d\" font-size=\"12\">%s", left + (w > 1 ? w : 1) + 6, y + 15,
              rpt_us(buf, sizeof buf, v));
      if (isfinite(sel) && sel > 0)
        fprintf(o, " (%.2fx)", v / sel);
      fputs("</text>\n", o);
    } else {
      fprintf(o,
              "<text x=\"%d\" y=\"%d\" font-size=\"12\" fill=\"#5b6672\">not measured "
              "(no profile for %.0f structure%s)</text>\n",
              left, y + 15, N(t, "structures_missing"), N(t, "structures_missing") == 1 ? "" : "s");
    }
  }
  fputs("</svg>\n", o);
}

static void nodes_table(FILE *o, const json_t *nodes) {
  fputs("<table><thead><tr><th>node</th><th>structure</th><th>backend</th><th>policy</th>"
        "<th>time</th><th>share of the total</th></tr></thead><tbody>\n",
        o);
  for (size_t i = 0; i < json_array_size(nodes); i++) {
    const json_t *n = json_array_get(nodes, i);
    double share = N(n, "share");
    char buf[48];
    fputs("<tr><td><code>", o);
    rpt_text(o, S(n, "name"), 80);
    fputs("</code></td><td><code>", o);
    rpt_text_wbr(o, S(n, "workload"), 120, "._");
    fputs("</code></td><td>", o);
    rpt_text(o, S(n, "backend") ? S(n, "backend") : "none (not calibrated)", 60);
    fputs("</td><td><code>", o);
    rpt_text_wbr(o, S(n, "policy") ? S(n, "policy") : "", 200, ";,");
    fprintf(o, "</code></td><td>%s</td><td>", rpt_us(buf, sizeof buf, N(n, "time_us")));
    if (isfinite(share)) {
      int w = (int)(160 * share);
      fprintf(o,
              "<svg width=\"170\" height=\"14\" role=\"img\" aria-label=\"share\"><rect x=\"0\" "
              "y=\"2\" width=\"%d\" height=\"10\" fill=\"#d9480f\"/></svg> %.1f%%",
              w > 1 ? w : 1, 100 * share);
    } else {
      fputs("\xE2\x80\x93", o);
    }
    fputs("</td></tr>\n", o);
  }
  fputs("</tbody></table>\n", o);
}

int rpt_model_page(const json_t *b, const char *source, const char *style, FILE *o, char *err,
                   size_t cap) {
  const json_t *totals = json_object_get(b, "totals"), *nodes = json_object_get(b, "nodes");
  double sel = NAN;
  for (size_t i = 0; i < json_array_size(totals); i++)
    if (S(json_array_get(totals, i), "kind") &&
        !strcmp(S(json_array_get(totals, i), "kind"), "selection"))
      sel = N(json_array_get(totals, i), "total_us");
  fprintf(o,
          "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>calhost model report</title>\n<style>\n%s</style>\n</head>\n"
          "<body>\n<main>\n<h1>Model report: ",
          style);
  rpt_text(o, S(b, "file") ? S(b, "file") : "?", 120);
  fputs("</h1>\n<p class=\"sub\">", o);
  rpt_text(o, S(b, "digest") ? S(b, "digest") : "", 80);
  fputs(" \xC2\xB7 rigor ", o);
  rpt_text(o, S(b, "rigor") ? S(b, "rigor") : "?", 20);
  fprintf(o, " \xC2\xB7 %.0f thread%s \xC2\xB7 %.0f of %.0f nodes calibrated</p>\n",
          N(b, "threads"), N(b, "threads") == 1 ? "" : "s", N(b, "calibrated_nodes"),
          N(b, "node_count"));
  fputs("<h2 id=\"totals\">The model's total</h2>\n<p class=\"sub\">Each node's time times its "
        "count, over the calibrated nodes, timed interleaved: calhost's selection (each node on "
        "the backend chosen for it), each backend tuned, each backend's default.</p>\n",
        o);
  totals_chart(o, totals, sel);
  fputs("<h2 id=\"nodes\">Nodes</h2>\n", o);
  nodes_table(o, nodes);
  if (source) {
    fputs("<p class=\"sub\">bench file <code>", o);
    rpt_text(o, source, 200);
    fputs("</code></p>\n", o);
  }
  fputs("<footer>Written by <code>calhost report</code> from <code>calhost model bench "
        "--json</code>. Self-contained: no scripts, no network, charts drawn as inline "
        "SVG.</footer>\n</main>\n</body>\n</html>\n",
        o);
  if (fflush(o) != 0 || ferror(o))
    return base_str_fail(err, cap, "write failed: %s", strerror(errno));
  return 0;
}
