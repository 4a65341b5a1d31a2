/*
 * verify_internal.h: what the parts of `calhost verify` share (private to
 * host/calibrate): the rows and verify's state, the verdict rule applied to
 * one result (verify.c), the --recalibrate pass (verify_recal.c), the
 * progress line and the output (verify_output.c); the key and row helpers
 * all three call are verify_verdict.c's.
 */
#ifndef CALHOST_CALIBRATE_VERIFY_INTERNAL_H
#define CALHOST_CALIBRATE_VERIFY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "run.h"
#include "verify.h"

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

/* x has a built key (digest, processor and thread count). */
int verify_has_key(const cal_result *x);

/* a and b (both with a key) are one exact key: the same backend, workload
 * (its model), thread count and processor (a device backend's processor is
 * its device: each device has keys of its own). */
int verify_same_key(const cal_result *a, const cal_result *b);

/* a / b, NAN when either is unknown or b is not positive. */
double verify_ratio(double a, double b);

/* Judges result `index` of the measuring pass into *row (zeroed here; free
 * with verify_free_row). */
void verify_judge(cal_run *r, size_t index, double threshold, verify_row *row);

/* Frees the strings of one row. */
void verify_free_row(verify_row *row);

/* One row per exact key the measuring pass reached (a key built by
 * several targets once) into cv->rows. Returns 0, -1 when out of memory. */
int verify_judge_all(cal_run *r, cal_verify *cv);

/* Recalibrates the failed keys of cv's rows in a second pass of the
 * driver, committed in one batch (also after an interrupt: what finished
 * is kept); each row's recal_tried and recal_result tell the outcome. */
void verify_recalibrate(cal_run *r, cal_verify *cv);

/* The measuring pass's progress line of key x: its verdict now. */
void verify_announce(cal_run *r, const cal_result *x);

/* The table (or --json) on out, and the JSON into --report's file
 * (status: the run's exit status). */
void verify_print(cal_run *r, int status);

#endif
