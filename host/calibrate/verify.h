/*
 * verify.h: `calhost verify` — re-times each stored exact calibrated
 * profile of the configured workloads (this machine's keys: every plugin x
 * workload x thread count, built by the plugins as calibrate builds them)
 * against the backend's default, with calibrate's engine (the same driver,
 * children, isolation and measurement: verify is a mode of the driver,
 * run.h), and
 * judges each key. It never changes the store unless recalibrate is set.
 *
 * Verdicts, in the order they are decided:
 *   override         a user override serves the key (an exact override, or
 *                    a portable one of the key's structure: a lookup takes
 *                    it before any calibrated profile); not verified (verify
 *                    re-times calibrated profiles), not a failure
 *   missing          no exact calibrated profile for the key (of any
 *                    implementation); not a failure: `calhost calibrate`
 *                    fills it
 *   outdated         only profiles of another implementation version than
 *                    the plugin's (a lookup rejects them); not re-timed
 *   invalid          the plugin's validator refuses the stored policy now,
 *                    or it fails the correctness check, prepare or run; or
 *                    the stored profile has no usable median_latency
 *                    (missing, 0, negative, not finite): nothing can be
 *                    compared, so it is never "ok" (--recalibrate fixes it)
 *   error            the key could not be measured (time budget, plugin
 *                    failure); the verdict is unknown. A plugin that fails
 *                    as a whole (create() failed, its devices could not be
 *                    listed) has each key it serves (workload x thread
 *                    count of the run, not built: no instance) listed so,
 *                    with the plugin's failure
 *   lost-to-default  the default is clearly faster than the stored policy
 *                    now: the policy's median exceeds the default's median
 *                    x (1 + threshold), and its fastest sample the default's
 *                    fastest x (1 + threshold)
 *   slower           the stored policy is clearly slower than when it was
 *                    stored: the current median and the current fastest
 *                    sample both exceed the stored median x (1 + threshold)
 *   ok               otherwise (within the threshold or the noise)
 * "Beyond the noise" is the fastest-sample condition: other work on the
 * machine (preemption, a busy core) only ever adds time, so a median
 * inflated by it has a fast sample near the true time, while a real
 * regression moves every sample, the fastest one too.
 * Internal to the host.
 */
#ifndef CALHOST_CALIBRATE_VERIFY_H
#define CALHOST_CALIBRATE_VERIFY_H

#include "calibrate.h"

/* The default threshold: 25 % slower. */
#define CALHOST_VERIFY_DEFAULT_THRESHOLD 0.25
/* The largest threshold --threshold takes: 10 (1000 %, 11x slower). */
#define CALHOST_VERIFY_MAX_THRESHOLD 10.0

/* Numbered from 0 in this order, the order of calibrate_verdict_name's
 * words (nothing stores the numbers). */
typedef enum calibrate_verdict {
  CALHOST_VERDICT_OK,
  CALHOST_VERDICT_SLOWER,
  CALHOST_VERDICT_LOST_TO_DEFAULT,
  CALHOST_VERDICT_OUTDATED,
  CALHOST_VERDICT_INVALID,
  CALHOST_VERDICT_MISSING,
  CALHOST_VERDICT_ERROR,
  CALHOST_VERDICT_OVERRIDE,
} calibrate_verdict;

/* "ok", "slower", "lost-to-default", "outdated", "invalid", "missing",
 * "error", "override" (static); "unknown" outside the enum. */
const char *calibrate_verdict_name(calibrate_verdict v);

/* Nonzero for the verdicts that make verify exit 1 (slower,
 * lost-to-default, outdated, invalid) and that --recalibrate recalibrates. */
int calibrate_verdict_failed(calibrate_verdict v);

/* The numbers of a measured key (microseconds per iteration). NAN for what
 * is unknown: stored_median when the profile has no median_latency,
 * default_* when the backend has no default (or it could not run), a
 * fastest sample when it was not recorded (then the medians decide). */
typedef struct calibrate_verify_numbers {
  double stored_median;
  double current_median, current_min; /* the stored policy, now */
  double default_median, default_min; /* the backend's default, now */
  int policy_is_default;              /* the stored policy is the default's text */
} calibrate_verify_numbers;

/* The verdict of a measured, valid key by the rule above: ok, slower or
 * lost-to-default, or invalid when the stored median is not a positive
 * number (after lost-to-default, which needs no stored median). threshold is relative (0.25: 25 %),
 * >= 0. Pure. */
calibrate_verdict calibrate_verify_judge(const calibrate_verify_numbers *n, double threshold);

typedef struct calibrate_verify_options {
  double threshold; /* relative slowdown tolerated; CALHOST_VERIFY_DEFAULT_THRESHOLD */
  int recalibrate;  /* recalibrate the failed keys and commit them in one batch */
} calibrate_verify_options;

/* Runs `calhost verify` with calibrate's options (config, store, --plugin
 * and --workload filters, json, quiet, out/err; force and json_out are
 * ignored) and prints one row per key (table, or JSON with --json).
 * Returns the exit status: 0 every key holds (ok; missing keys are listed
 * but do not fail); 1 some key is slower, lost-to-default, outdated or
 * invalid (with recalibrate: some such key could not be recalibrated and
 * stored); 2 an error (store unreadable, no plugin, a plugin failed, a key
 * could not be measured); 128 + signal when interrupted. */
int calibrate_verify(const calibrate_options *o, const calibrate_verify_options *v);

#endif /* CALHOST_CALIBRATE_VERIFY_H */
