/*
 * stats.c: median, quantiles, MAD, CV, noise flag and pruning decision for
 * the measurement engine, and the figures a sweep reports (see stats.h).
 * Pure functions: each works on a private sorted copy of its input.
 */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Quantile of an already sorted array. */
static double sorted_quantile(const double *s, size_t n, double q) {
  if (q <= 0)
    return s[0];
  if (q >= 1)
    return s[n - 1];
  double pos = q * (double)(n - 1);
  size_t lo = (size_t)pos;
  double frac = pos - (double)lo;
  if (lo + 1 >= n)
    return s[n - 1];
  return s[lo] + (s[lo + 1] - s[lo]) * frac;
}

static double *sorted_copy(const double *v, size_t n) {
  double *s = malloc(n * sizeof *s);
  if (!s)
    return NULL;
  memcpy(s, v, n * sizeof *s);
  qsort(s, n, sizeof *s, cmp_double);
  return s;
}

double sweep_stats_quantile(const double *v, size_t n, double q) {
  if (!v || n == 0)
    return NAN;
  double *s = sorted_copy(v, n);
  if (!s)
    return NAN;
  double r = sorted_quantile(s, n, q);
  free(s);
  return r;
}

double sweep_stats_median(const double *v, size_t n) {
  return sweep_stats_quantile(v, n, 0.5);
}

double sweep_stats_mad(const double *v, size_t n) {
  if (!v || n == 0)
    return NAN;
  double med = sweep_stats_median(v, n);
  double *d = malloc(n * sizeof *d);
  if (!d)
    return NAN;
  for (size_t i = 0; i < n; i++)
    d[i] = fabs(v[i] - med);
  double r = sweep_stats_median(d, n);
  free(d);
  return r;
}

double sweep_stats_cv(const double *v, size_t n) {
  if (!v || n == 0)
    return NAN;
  if (n < 2)
    return 0.0;
  double mean = 0;
  for (size_t i = 0; i < n; i++)
    mean += v[i];
  mean /= (double)n;
  if (mean == 0)
    return NAN;
  double ss = 0;
  for (size_t i = 0; i < n; i++)
    ss += (v[i] - mean) * (v[i] - mean);
  return sqrt(ss / (double)(n - 1)) / fabs(mean);
}

int sweep_stats_is_noisy(double median, double mad, double cv, double threshold) {
  /* The MAD is robust to one preempted sample; the CV is not, so it only
   * flags a result when the spread is several times the threshold. */
  if (isfinite(cv) && cv > CALHOST_STATS_CV_FACTOR * threshold)
    return 1;
  if (median > 0 && isfinite(mad) && mad / median > threshold)
    return 1;
  return 0;
}

int sweep_stats_summarize(const double *v, size_t n, double threshold, sweep_stats *out) {
  memset(out, 0, sizeof *out);
  if (!v || n == 0)
    return -1;
  double *s = sorted_copy(v, n);
  if (!s)
    return -1;
  out->n = n;
  out->min = s[0];
  out->q1 = sorted_quantile(s, n, 0.25);
  out->median = sorted_quantile(s, n, 0.5);
  double sum = 0;
  for (size_t i = 0; i < n; i++)
    sum += s[i];
  out->mean = sum / (double)n;
  free(s);
  out->mad = sweep_stats_mad(v, n);
  out->cv = sweep_stats_cv(v, n);
  if (!isfinite(out->mad) || !isfinite(out->cv)) {
    if (!isfinite(out->mad))
      out->mad = 0;
    if (!isfinite(out->cv))
      out->cv = 0;
  }
  out->noisy = sweep_stats_is_noisy(out->median, out->mad, out->cv, threshold);
  return 0;
}

int sweep_stats_should_prune(const double *v, size_t n, double leader_median, double margin,
                             size_t min_samples) {
  if (!v || n == 0 || n < min_samples)
    return 0;
  if (!(leader_median > 0) || !isfinite(leader_median))
    return 0;
  double q1 = sweep_stats_quantile(v, n, 0.25);
  return isfinite(q1) && q1 > leader_median * (1.0 + margin);
}

int sweep_figures_fill(const double *v, size_t n, uint32_t iterations, double threshold,
                       sweep_figures *out) {
  memset(out, 0, sizeof *out);
  out->median_us = out->mad_us = out->min_us = out->cv = NAN;
  sweep_stats sm;
  if (sweep_stats_summarize(v, n, threshold, &sm) != 0)
    return -1;
  out->median_us = sm.median;
  out->mad_us = sm.mad;
  out->min_us = sm.min;
  out->cv = sm.cv;
  out->samples = (uint32_t)sm.n;
  out->iterations = iterations;
  out->noisy = sm.noisy;
  return 0;
}
