/*
 * charts.c: the report's charts, as inline SVG written here (no library,
 * no script): the sorted curve of candidate medians with their spread, the
 * influence of each parameter, and the heat map of the two most influential
 * parameters. Styling comes from the page's stylesheet (classes), so the
 * charts carry only geometry and the colours that encode data.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- scales ------------------------------------------------------------ */

/* 1, 2, 2.5 or 5 times a power of ten, at least x. */
static double nice_step(double x) {
  if (!(x > 0) || !isfinite(x))
    return 1;
  double p = pow(10, floor(log10(x)));
  double m = x / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 2.5 ? 2.5 : m <= 5 ? 5 : 10) * p;
}

typedef struct scale {
  int log;
  double lo, hi;     /* in us */
  double top, px;    /* pixel of hi, pixels from hi to lo */
  double unit;       /* labels in us / unit */
  const char *uname; /* "µs" or "ms" */
} scale;

static double ypix(const scale *s, double v) {
  double f;
  if (s->log) {
    if (v < s->lo)
      v = s->lo;
    f = (log10(v) - log10(s->lo)) / (log10(s->hi) - log10(s->lo));
  } else {
    f = (v - s->lo) / (s->hi - s->lo);
  }
  if (f < 0)
    f = 0;
  if (f > 1)
    f = 1;
  return s->top + s->px * (1 - f);
}

static void tick_label(char *buf, size_t cap, const scale *s, double v) {
  double x = v / s->unit;
  if (x == 0)
    snprintf(buf, cap, "0");
  else if (fabs(x) >= 100)
    snprintf(buf, cap, "%.0f", x);
  else if (fabs(x) >= 1)
    snprintf(buf, cap, "%.3g", x);
  else
    snprintf(buf, cap, "%.2g", x);
}

/* ---- the sorted curve of candidates ------------------------------------ */

/* A horizontal grid line at value v from x1 to x2, with its label left of
 * x1. */
static void grid_line(FILE *o, const scale *s, double v, double x1, double x2) {
  char lab[32];
  double y = ypix(s, v);
  tick_label(lab, sizeof lab, s, v);
  fprintf(o, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", x1, x2, y,
          y);
  fprintf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", x1 - 6,
          y + 4, lab);
}

static int cmp_median_idx(const void *a, const void *b) {
  const rpt_cand *x = *(const rpt_cand *const *)a, *y = *(const rpt_cand *const *)b;
  return (x->median > y->median) - (x->median < y->median);
}

static const char *cand_class(const rpt_cand *c) {
  if (c->is_winner)
    return "winner";
  if (c->is_default)
    return "default";
  if (c->status && !strcmp(c->status, "pruned"))
    return "pruned";
  return "measured";
}

static void point_title(FILE *o, const rpt_cand *c) {
  char m[32], s[32];
  fputs("<title>", o);
  rpt_text(o, c->policy ? c->policy : "(policy not recorded)", 200);
  fprintf(o, "\n%s \xC2\xB1 %s (%ld samples)", rpt_us(m, sizeof m, c->median),
          rpt_us(s, sizeof s, c->spread), c->samples);
  fprintf(o, "%s%s%s", c->is_default ? ", default" : "", c->is_winner ? ", winner" : "",
          c->noisy ? ", noisy" : "");
  if (c->status && strcmp(c->status, "measured")) {
    fputs(", ", o);
    rpt_text(o, c->status, 20);
  }
  fputs("</title>", o);
}

/* The candidates chart's frame (pixels): width, height, margins. */
#define CAND_W 680.0
#define CAND_H 270.0
#define CAND_ML 56.0
#define CAND_MR 84.0
#define CAND_MT 34.0
#define CAND_MB 40.0

/* The y scale of the candidates chart: log when the medians (with their
 * spread, and the default's) span more than 20x, else linear from 0 in
 * *step-sized grid steps; labels in ms from 10 ms up. */
static scale candidate_scale(const rpt_cand *const *pts, size_t m, double default_median,
                             int have_default, double *step) {
  scale s = {.top = CAND_MT, .px = CAND_H - CAND_MT - CAND_MB, .unit = 1, .uname = "\xC2\xB5s"};
  double hi = 0, lo = INFINITY;
  for (size_t i = 0; i < m; i++) {
    double sp = pts[i]->spread >= 0 && pts[i]->spread <= 1e12 ? pts[i]->spread : 0;
    hi = pts[i]->median + sp > hi ? pts[i]->median + sp : hi;
    lo = pts[i]->median < lo ? pts[i]->median : lo;
  }
  if (have_default && default_median > hi)
    hi = default_median;
  if (!(hi > 0))
    hi = 1;
  s.log = lo >= 1e-9 && hi / lo > 20; /* at most 21 decades */
  *step = 0;
  if (s.log) {
    s.lo = pow(10, floor(log10(lo * 0.95)));
    s.hi = pow(10, ceil(log10(hi * 1.05)));
  } else {
    *step = nice_step(hi * 1.08 / 5);
    s.lo = 0;
    s.hi = ceil(hi * 1.08 / *step) * *step;
  }
  if (s.hi >= 10000) {
    s.unit = 1000;
    s.uname = "ms";
  }
  return s;
}

/* The grid, the axis and its labels, the x ticks (first, last and a few
 * between) of m candidates. */
static void candidate_axes(FILE *o, const scale *s, double step, size_t m) {
  double pw = CAND_W - CAND_ML - CAND_MR;
  if (s->log) {
    for (double d = s->lo; d > 0 && d <= s->hi * 1.0001; d *= 10)
      for (int k = 1; k <= 5; k += (k == 1 ? 1 : 3)) {
        double v = d * k;
        if (v > s->hi * 1.0001)
          break;
        grid_line(o, s, v, CAND_ML, CAND_W - CAND_MR);
      }
  } else {
    for (double v = 0; v <= s->hi * 1.0001; v += step) {
      grid_line(o, s, v, CAND_ML, CAND_W - CAND_MR);
    }
  }
  double base = s->top + s->px;
  fprintf(o, "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n", CAND_ML,
          CAND_W - CAND_MR, base, base);
  fprintf(o,
          "<text class=\"label\" transform=\"translate(16 %.1f) rotate(-90)\" "
          "text-anchor=\"middle\">median latency (%s%s)</text>\n",
          s->top + s->px / 2, s->uname, s->log ? ", log scale" : "");
  fprintf(o,
          "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%zu candidate%s "
          "with samples, fastest first</text>\n",
          CAND_ML + pw / 2, CAND_H - 8, m, m == 1 ? "" : "s");
  size_t xt = m < 6 ? m : 6;
  for (size_t k = 0; k < xt; k++) {
    size_t i = xt == 1 ? 0 : k * (m - 1) / (xt - 1);
    double x = CAND_ML + (i + 0.5) * pw / (double)m;
    fprintf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%zu</text>", x,
            base + 15, i + 1);
  }
  fputc('\n', o);
}

/* One point per candidate (fastest first), its spread as an error bar, the
 * default as a square, the winner larger, a ring around a noisy one. */
static void candidate_points(FILE *o, const scale *s, const rpt_cand *const *pts, size_t m) {
  double pw = CAND_W - CAND_ML - CAND_MR;
  double r = pw / (double)m / 2.6;
  r = r > 5 ? 5 : r < 1.6 ? 1.6 : r;
  for (size_t i = 0; i < m; i++) {
    const rpt_cand *p = pts[i];
    double x = CAND_ML + (i + 0.5) * pw / (double)m, y = ypix(s, p->median);
    const char *cls = cand_class(p);
    if (p->spread > 0 && p->spread <= 1e12) {
      double y1 = ypix(s, p->median - p->spread), y2 = ypix(s, p->median + p->spread);
      fprintf(o, "<line class=\"err %s\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", cls, x,
              x, y1, y2);
    }
    if (p->is_default && !p->is_winner)
      fprintf(o, "<rect class=\"pt default\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">",
              x - r, y - r, 2 * r, 2 * r);
    else
      fprintf(o, "<circle class=\"pt %s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\">", cls, x, y,
              p->is_winner ? r * 1.35 : r);
    point_title(o, p);
    fputs(p->is_default && !p->is_winner ? "</rect>\n" : "</circle>\n", o);
    if (p->noisy)
      fprintf(o, "<circle class=\"noisy\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\"/>\n", x, y,
              (p->is_winner ? r * 1.35 : r) + 2.5);
  }
}

/* The candidates chart's legend, along its top. */
static void candidate_legend(FILE *o) {
  static const struct {
    const char *cls, *text;
  } legend[] = {{"winner", "winner"},
                {"measured", "measured"},
                {"pruned", "pruned (few samples)"},
                {"default", "default"},
                {"noisy", "noisy"}};
  double lx = CAND_ML;
  for (size_t k = 0; k < 5; k++) {
    if (!strcmp(legend[k].cls, "default"))
      fprintf(o, "<rect class=\"lg default\" x=\"%.1f\" y=\"10\" width=\"8\" height=\"8\"/>",
              lx + 1);
    else if (!strcmp(legend[k].cls, "noisy"))
      fprintf(o, "<circle class=\"lg noisy\" cx=\"%.1f\" cy=\"14\" r=\"5\"/>", lx + 5);
    else
      fprintf(o, "<circle class=\"lg %s\" cx=\"%.1f\" cy=\"14\" r=\"4.5\"/>", legend[k].cls,
              lx + 5);
    fprintf(o, "<text class=\"legend\" x=\"%.1f\" y=\"18\">%s</text>", lx + 14, legend[k].text);
    lx += 26 + 6.7 * (double)strlen(legend[k].text);
  }
  fprintf(o, "<line class=\"lg err measured\" x1=\"%.1f\" x2=\"%.1f\" y1=\"8\" y2=\"20\"/>", lx + 4,
          lx + 4);
  fprintf(o, "<text class=\"legend\" x=\"%.1f\" y=\"18\">\xC2\xB1 spread (MAD)</text>\n", lx + 12);
}

void rpt_chart_candidates(FILE *o, const rpt_cand *c, size_t n, double default_median,
                          int have_default) {
  const rpt_cand **pts = malloc((n ? n : 1) * sizeof *pts);
  size_t m = 0;
  if (!pts)
    return;
  for (size_t i = 0; i < n; i++) /* what a scale can hold: (0, 1e12] us */
    if (c[i].median > 0 && c[i].median <= 1e12)
      pts[m++] = &c[i];
  if (!m) {
    fputs("<p class=\"muted\">No candidate was measured.</p>\n", o);
    free(pts);
    return;
  }
  qsort(pts, m, sizeof *pts, cmp_median_idx);
  have_default = have_default && default_median > 0 && default_median <= 1e12;
  double step;
  scale s = candidate_scale(pts, m, default_median, have_default, &step);
  fprintf(o,
          "<svg class=\"chart candidates\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
          "height=\"%.0f\" role=\"img\" aria-label=\"candidate medians, fastest first\">\n",
          CAND_W, CAND_H, CAND_W, CAND_H);
  candidate_axes(o, &s, step, m);
  if (have_default) { /* the default's median */
    double y = ypix(&s, default_median);
    char dm[32];
    fprintf(o, "<line class=\"defline\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", CAND_ML,
            CAND_W - CAND_MR, y, y);
    fprintf(o,
            "<text class=\"deflabel\" x=\"%.1f\" y=\"%.1f\">default</text>"
            "<text class=\"deflabel\" x=\"%.1f\" y=\"%.1f\">%s</text>\n",
            CAND_W - CAND_MR + 6, y - 2, CAND_W - CAND_MR + 6, y + 11,
            rpt_us(dm, sizeof dm, default_median));
  }
  candidate_points(o, &s, (const rpt_cand *const *)pts, m);
  candidate_legend(o);
  fputs("</svg>\n", o);
  free(pts);
}

/* ---- influence bars ---------------------------------------------------- */

void rpt_chart_effects(FILE *o, const rpt_effect *e, size_t n) {
  size_t rows = n < 10 ? n : 10;
  const double W = 360, lw = 110, rh = 24, mt = 6, vw = 60;
  double bw = W - lw - vw, maxi = 1;
  for (size_t i = 0; i < rows; i++)
    maxi = e[i].influence > maxi ? e[i].influence : maxi;
  double H = mt + rows * rh + 6;
  fprintf(o,
          "<svg class=\"chart effects\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
          "role=\"img\" aria-label=\"influence of each parameter\">\n",
          W, H, W, H);
  for (size_t i = 0; i < rows; i++) {
    double y = mt + i * rh;
    double len = maxi > 1.0001 ? (e[i].influence - 1) / (maxi - 1) * bw : 0;
    if (len < 2)
      len = 2;
    fprintf(o, "<g class=\"effect\"><title>");
    rpt_text(o, e[i].name, 60);
    fputs(": best median with each value:", o);
    for (size_t k = 0; k < e[i].nvalues && k < 16; k++) {
      char b[32];
      fputs(k ? ", " : " ", o);
      rpt_text(o, e[i].values[k], 24);
      fprintf(o, " %s", rpt_us(b, sizeof b, e[i].best[k]));
    }
    if (e[i].nvalues > 16)
      fputs(", \xE2\x80\xA6", o);
    fprintf(o, "</title><text class=\"pname\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", lw - 8,
            y + 16);
    rpt_text(o, e[i].name, 16);
    fprintf(o,
            "</text><rect class=\"bar%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>"
            "<text class=\"val\" x=\"%.1f\" y=\"%.1f\">\xC3\x97%.2f</text></g>\n",
            i < 2 ? " top" : "", lw, y + 5, len, rh - 9, lw + len + 6, y + 16, e[i].influence);
  }
  fputs("</svg>\n", o);
}

/* ---- heat map ---------------------------------------------------------- */

/* Green (the best) through yellow to red (the worst), for t in [0, 1]. */
static void ramp(double t, int rgb[3]) {
  static const int stops[3][3] = {{26, 152, 80}, {254, 224, 139}, {215, 48, 39}};
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  int k = t < 0.5 ? 0 : 1;
  double f = t < 0.5 ? t * 2 : (t - 0.5) * 2;
  for (int i = 0; i < 3; i++)
    rgb[i] = (int)lround(stops[k][i] + (stops[k + 1][i] - stops[k][i]) * f);
}

static size_t label_chars(const rpt_effect *e, size_t cap, size_t nvals) {
  size_t w = 1;
  for (size_t i = 0; i < nvals; i++) {
    size_t l = strlen(e->values[i]);
    w = l > w ? l : w;
  }
  return w > cap ? cap : w;
}

#define HEAT_MAX 24 /* values per axis */

/* Writes the heat map cell's parameters: "A=value" of column x, then
 * ", B=value" of row y when there is a row parameter b. */
static void cell_title(FILE *o, const rpt_effect *a, size_t x, const rpt_effect *b, size_t y) {
  rpt_text(o, a->name, 40);
  fputc('=', o);
  rpt_text(o, a->values[x], 40);
  if (b) {
    fputs(", ", o);
    rpt_text(o, b->name, 40);
    fputc('=', o);
    rpt_text(o, b->values[y], 40);
  }
}

/* A heat map's cells (nc columns of a's values by nr rows of b's): the
 * best median of each (INFINITY: none), its candidate count, whether it
 * holds the winner; the fastest cell's median and the slowest's ratio to it
 * (the colour scale); the layout. */
typedef struct heat {
  size_t nc, nr;
  double *cell;
  size_t *cnt;
  unsigned char *win;
  double best, maxr;
  double cw, ch, lw, mt; /* cell width and height, left and top margins */
} heat;

/* Fills h's cells from the candidates that count (rpt_in_effects); best
 * (not a positive number: none) is the run's fastest median. */
static void heat_fill(heat *h, const rpt_effect *a, const rpt_effect *b, const rpt_cand *c,
                      size_t n, double best) {
  size_t nc = h->nc, nr = h->nr;
  for (size_t i = 0; i < nc * nr; i++)
    h->cell[i] = INFINITY;
  for (size_t i = 0; i < n; i++) {
    if (!rpt_in_effects(&c[i]))
      continue;
    size_t x = rpt_effect_value(a, rpt_policy_get(&c[i].params, a->name));
    size_t y = b ? rpt_effect_value(b, rpt_policy_get(&c[i].params, b->name)) : 0;
    if (x >= nc || y >= nr)
      continue;
    h->cnt[y * nc + x]++;
    h->win[y * nc + x] |= c[i].is_winner;
    if (c[i].median < h->cell[y * nc + x])
      h->cell[y * nc + x] = c[i].median;
  }
  if (!(best > 0) || !isfinite(best))
    best = INFINITY;
  h->maxr = 1.05;
  for (size_t i = 0; i < nc * nr; i++) {
    if (isfinite(h->cell[i]) && h->cell[i] < best)
      best = h->cell[i];
  }
  for (size_t i = 0; i < nc * nr; i++)
    if (isfinite(h->cell[i]) && h->cell[i] / best > h->maxr)
      h->maxr = h->cell[i] / best;
  h->best = best;
}

/* The axis titles and the column labels (rotated when they do not fit). */
static void heat_labels(FILE *o, const heat *h, const rpt_effect *a, const rpt_effect *b,
                        int rotate) {
  fprintf(o, "<text class=\"axisname\" x=\"%.1f\" y=\"14\">", h->lw);
  rpt_text(o, a->name, 40);
  fputs(" \xE2\x86\x92</text>", o);
  fprintf(o, "<text class=\"axisname\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", h->lw - 8,
          h->mt - 6);
  if (b) {
    rpt_text(o, b->name, 16);
    fputs(" \xE2\x86\x93", o);
  }
  fputs("</text>\n", o);
  for (size_t x = 0; x < h->nc; x++) {
    double cx = h->lw + (x + 0.5) * h->cw;
    if (rotate)
      fprintf(o,
              "<text class=\"tick\" transform=\"translate(%.1f %.1f) rotate(-45)\" "
              "text-anchor=\"start\">",
              cx - 2, h->mt - 6);
    else
      fprintf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", cx,
              h->mt - 6);
    rpt_text(o, a->values[x], 14);
    fputs("</text>", o);
  }
  fputc('\n', o);
}

/* The cell in column x of row y: its colour (its ratio to the fastest),
 * its title, its ratio written in it when it is wide enough. */
static void heat_cell(FILE *o, const heat *h, const rpt_effect *a, const rpt_effect *b, size_t x,
                      size_t y) {
  size_t i = y * h->nc + x;
  double cx = h->lw + x * h->cw, cy = h->mt + y * h->ch, cw = h->cw, ch = h->ch;
  if (!isfinite(h->cell[i])) {
    fprintf(o,
            "<rect class=\"cell empty\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">"
            "<title>",
            cx + 1, cy + 1, cw - 2, ch - 2);
    cell_title(o, a, x, b, y);
    fputs(": not measured</title></rect>\n", o);
    return;
  }
  double ratio = h->cell[i] / h->best;
  int rgb[3];
  ramp(log(ratio) / log(h->maxr), rgb);
  double lum = (0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]) / 255;
  char m[32];
  fprintf(o,
          "<g><rect class=\"cell%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
          "fill=\"rgb(%d,%d,%d)\"/><title>",
          h->win[i] ? " win" : "", cx + 1, cy + 1, cw - 2, ch - 2, rgb[0], rgb[1], rgb[2]);
  cell_title(o, a, x, b, y);
  fprintf(o, ": best %s, \xC3\x97%.2f the fastest (%zu candidate%s)%s</title>",
          rpt_us(m, sizeof m, h->cell[i]), ratio, h->cnt[i], h->cnt[i] == 1 ? "" : "s",
          h->win[i] ? ", holds the winner" : "");
  if (cw >= 40)
    fprintf(o,
            "<text class=\"cellval\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
            "fill=\"%s\">%.2f</text>",
            cx + cw / 2, cy + ch / 2 + 4, lum > 0.55 ? "#1d232b" : "#ffffff", ratio);
  fputs("</g>\n", o);
}

void rpt_chart_heatmap(FILE *o, const rpt_effect *a, const rpt_effect *b, const rpt_cand *c,
                       size_t n, double best, size_t id) {
  heat h = {.nc = a->nvalues < HEAT_MAX ? a->nvalues : HEAT_MAX,
            .nr = b ? (b->nvalues < HEAT_MAX ? b->nvalues : HEAT_MAX) : 1};
  size_t nc = h.nc, nr = h.nr;
  h.cell = malloc(nc * nr * sizeof *h.cell);
  h.cnt = calloc(nc * nr, sizeof *h.cnt);
  h.win = calloc(nc * nr, 1);
  if (!h.cell || !h.cnt || !h.win)
    goto out;
  heat_fill(&h, a, b, c, n, best);
  size_t cchars = label_chars(a, 14, nc), rchars = b ? label_chars(b, 14, nr) : 3;
  h.cw = 560.0 / (double)nc;
  h.cw = h.cw > 76 ? 76 : h.cw < 26 ? 26 : h.cw;
  h.ch = 28;
  int rotate = h.cw < 6.6 * (double)cchars + 6;
  h.lw = 14 + 7.0 * (double)rchars;
  h.lw = h.lw < 60 ? 60 : h.lw;
  h.mt = 22 + (rotate ? 6.0 * (double)cchars + 8 : 16);
  double W = h.lw + nc * h.cw + 16, H = h.mt + nr * h.ch + 52;
  W = W < 300 ? 300 : W;
  fprintf(o,
          "<svg class=\"chart heatmap\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
          "role=\"img\" aria-label=\"heat map of the two most influential parameters\">\n",
          W, H, W, H);
  fprintf(o,
          "<defs><linearGradient id=\"hm%zu\" x1=\"0\" x2=\"1\" y1=\"0\" y2=\"0\">"
          "<stop offset=\"0\" stop-color=\"rgb(26,152,80)\"/>"
          "<stop offset=\"0.5\" stop-color=\"rgb(254,224,139)\"/>"
          "<stop offset=\"1\" stop-color=\"rgb(215,48,39)\"/></linearGradient></defs>\n",
          id);
  heat_labels(o, &h, a, b, rotate);
  for (size_t y = 0; y < nr; y++) {
    fprintf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", h.lw - 8,
            h.mt + y * h.ch + h.ch / 2 + 4);
    rpt_text(o, b ? b->values[y] : "all", 14);
    fputs("</text>\n", o);
    for (size_t x = 0; x < nc; x++)
      heat_cell(o, &h, a, b, x, y);
  }
  /* the colour legend */
  double ly = h.mt + nr * h.ch + 18;
  fprintf(o,
          "<rect x=\"%.1f\" y=\"%.1f\" width=\"160\" height=\"10\" fill=\"url(#hm%zu)\"/>"
          "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\">\xC3\x97"
          "1.00 (fastest)</text>"
          "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">\xC3\x97%.2f</text>\n",
          h.lw, ly, id, h.lw, ly + 24, h.lw + 160, ly + 24, h.maxr);
  if (a->nvalues > nc || (b && b->nvalues > nr))
    fprintf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\">first %d values per axis</text>\n",
            h.lw + 176, ly + 9, HEAT_MAX);
  fputs("</svg>\n", o);
out:
  free(h.cell);
  free(h.cnt);
  free(h.win);
}
