/*
 * stats.h: the statistics of the measurement engine, as pure functions on
 * arrays of timings (no I/O, no clocks), so they can be tested on synthetic
 * data: median, quantiles, MAD, CV, the noise flag and the pruning decision
 * ("clearly slower than the leader after a few repeats"), and the figures
 * a sweep reports for a candidate and for its winner (sweep_figures).
 * Internal to the host.
 */
#ifndef CALHOST_SWEEP_STATS_H
#define CALHOST_SWEEP_STATS_H

#include <stddef.h>
#include <stdint.h>

/* A summary of one candidate's samples. All times in the unit of the input. */
typedef struct sweep_stats {
  size_t n;      /* number of samples */
  double min;    /* fastest sample */
  double q1;     /* lower quartile */
  double median; /* the decision statistic */
  double mean;
  double mad; /* median absolute deviation from the median (unscaled) */
  double cv;  /* coefficient of variation: sample stddev / mean (0 when n < 2) */
  int noisy;  /* see sweep_stats_is_noisy */
} sweep_stats;

/* Default noise threshold: a result whose relative MAD (MAD / median) is
 * above 5%, or whose CV is above CALHOST_STATS_CV_FACTOR times that, is
 * flagged noisy. */
#define CALHOST_STATS_NOISE_THRESHOLD 0.05
#define CALHOST_STATS_CV_FACTOR 5.0

/* The q-quantile (0 <= q <= 1, linear interpolation between order
 * statistics) of n values; v is not modified. NAN when n == 0 or on
 * allocation failure. */
double sweep_stats_quantile(const double *v, size_t n, double q);

/* The median of n values (quantile 0.5); NAN when n == 0. */
double sweep_stats_median(const double *v, size_t n);

/* Median absolute deviation from the median; NAN when n == 0, 0 for n == 1. */
double sweep_stats_mad(const double *v, size_t n);

/* Coefficient of variation (sample standard deviation / mean); 0 when
 * n < 2, NAN when n == 0 or the mean is 0. */
double sweep_stats_cv(const double *v, size_t n);

/* Noise flag: nonzero when mad / median > threshold or
 * cv > CALHOST_STATS_CV_FACTOR * threshold. */
int sweep_stats_is_noisy(double median, double mad, double cv, double threshold);

/* Fills *out with the summary of n samples (noise flag with `threshold`).
 * Returns 0, or -1 when n == 0 or allocation fails (then *out is zeroed). */
int sweep_stats_summarize(const double *v, size_t n, double threshold, sweep_stats *out);

/* The figures of one candidate's samples, as a sweep reports them for each
 * candidate (sweep_candidate) and for its winner (sweep_result): latencies
 * per iteration, in microseconds. The one set of them both carry. */
typedef struct sweep_figures {
  double median_us, mad_us, min_us, cv;
  uint32_t samples;    /* timed samples */
  uint32_t iterations; /* iterations per sample */
  int noisy;           /* the spread is above the noise threshold */
} sweep_figures;

/* Fills *out with the figures of n samples (per-iteration microseconds)
 * taken at `iterations` iterations each, the noise flag with `threshold`.
 * Returns 0, or -1 when n == 0 or allocation fails; then the latencies and
 * cv are NAN and the counts and noisy 0 (a candidate with no figures). */
int sweep_figures_fill(const double *v, size_t n, uint32_t iterations, double threshold,
                       sweep_figures *out);

/* The pruning decision: nonzero when a candidate with these n samples is
 * clearly slower than the leader, i.e. n >= min_samples and the candidate's
 * lower quartile (its optimistic case, robust to one lucky sample) is above
 * leader_median * (1 + margin). Never prunes when leader_median is not a
 * positive finite number. */
int sweep_stats_should_prune(const double *v, size_t n, double leader_median, double margin,
                             size_t min_samples);

#endif /* CALHOST_SWEEP_STATS_H */
