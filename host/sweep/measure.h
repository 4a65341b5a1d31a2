/*
 * measure.h: one calibration sweep — one plugin instance x one workload x
 * one target (CPU set and thread count). Drives the plugin's vtable through
 * the lifecycle of plugin.h: enumerate and validate candidates, check each
 * against the reference, warm up, size samples to a minimum time, repeat,
 * decide on the median, prune clear losers, respect the time budget, and
 * measure the backend's untuned default for the speedup.
 *
 * The sweep runs in the calling thread (which the caller has pinned to the
 * target's CPUs) and does no I/O: progress and "starting candidate" notices
 * go through hooks, so the isolation layer can stream them to the parent.
 * Internal to the host.
 */
#ifndef CALHOST_SWEEP_MEASURE_H
#define CALHOST_SWEEP_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "calhost/plugin.h"
#include "plan.h"

/* Policies longer than this are refused (reported, never stored). */
#define CALHOST_SWEEP_MAX_POLICY (64u * 1024u)

/* The candidate index used for the backend's default policy. */
#define CALHOST_SWEEP_DEFAULT_INDEX UINT32_MAX

/* Callbacks from a running sweep; every member may be NULL. */
typedef struct calhost_sweep_hooks {
  void *user;
  /* About to run candidate `index` (CALHOST_SWEEP_DEFAULT_INDEX for the
   * default), the `ordinal`-th of `total` runs planned in this round; policy
   * is borrowed. Called before prepare, so a crash after it is attributed to
   * this candidate. */
  void (*candidate_start)(void *user, uint32_t index, uint32_t ordinal, uint32_t total,
                          const char *policy);
  /* Nonzero when the sweep must stop now (SIGINT, SIGTERM). */
  int (*is_cancelled)(void *user);
  /* The message the plugin attached with host->set_error since the last
   * call (and clears it), or NULL. The string stays valid until the next call. */
  const char *(*take_plugin_error)(void *user);
} calhost_sweep_hooks;

/* What to sweep. Everything is borrowed for the duration of the call. */
typedef struct calhost_sweep_request {
  const calhost_plugin_vtable *vtable;
  uint32_t abi_version; /* the negotiated version; gates optional entries */
  calhost_plugin_instance *instance;
  const calhost_workload *workload;
  const calhost_target *target;
  calhost_rigor_params params;
  double deadline;          /* CLOCK_MONOTONIC seconds when the budget ends; 0: none */
  size_t max_policy_length; /* 0: CALHOST_SWEEP_MAX_POLICY */
  calhost_sweep_hooks hooks;
  /* Explicit candidate policies (a caller re-timing known policies, as
   * calhost verify does): when policy_count > 0 the sweep
   * measures exactly these policies (candidate i is policies[i]; validated,
   * checked and timed like any candidate) besides the default, instead of
   * the plugin's candidate space; max_candidates does not apply. Borrowed. */
  const char *const *policies;
  size_t policy_count;
} calhost_sweep_request;

/* A candidate that was refused, with the reason. */
typedef struct calhost_sweep_rejection {
  uint32_t index; /* candidate index, CALHOST_SWEEP_DEFAULT_INDEX for the default */
  char *policy;   /* may be NULL when the policy could not be serialized */
  char *reason;
} calhost_sweep_rejection;

/* What became of one candidate (or the default) of a sweep. */
typedef enum calhost_candidate_status {
  CALHOST_CANDIDATE_MEASURED = 0,   /* every sample taken: a contender */
  CALHOST_CANDIDATE_PRUNED = 1,     /* dropped as slower, or stopped early (reason says) */
  CALHOST_CANDIDATE_REJECTED = 2,   /* refused: invalid, failed, wrong output */
  CALHOST_CANDIDATE_UNMEASURED = 3, /* never run: the time budget ran out first */
} calhost_candidate_status;

/* One candidate as the report shows it: its statistics over the samples it
 * got (pruned candidates have a few; rejected and unmeasured have none, and
 * then median_us etc. are NAN). Latencies per iteration, in microseconds. */
typedef struct calhost_sweep_candidate {
  uint32_t index; /* CALHOST_SWEEP_DEFAULT_INDEX for the default */
  char *policy;   /* may be NULL (not serialized, or dropped to bound the record) */
  calhost_candidate_status status;
  char *reason; /* why pruned / rejected / unmeasured; NULL when measured */
  double median_us, mad_us, min_us, cv;
  uint32_t samples, iterations;
  int noisy; /* its spread is above the noise threshold */
} calhost_sweep_candidate;

/* The outcome of a sweep; owned by the caller, freed with
 * calhost_sweep_result_free. Latencies are per iteration, in microseconds. */
typedef struct calhost_sweep_result {
  int ok;          /* 1: a winner was chosen */
  char error[512]; /* why not, when ok == 0 */
  char *winner_policy;
  uint32_t winner_index; /* CALHOST_SWEEP_DEFAULT_INDEX when the default won */
  double median_us, mad_us, cv, min_us;
  uint32_t samples;         /* timed samples of the winner */
  uint32_t iterations;      /* iterations per sample of the winner */
  int noisy;                /* the winner's spread is above the noise threshold */
  int unchecked;            /* the plugin has no check(): outputs were not verified */
  int device_timed;         /* timings came from the plugin's device_seconds */
  uint32_t candidate_count; /* size of the plugin's candidate space */
  uint32_t planned;         /* candidates the rigor level selected */
  uint32_t tried;           /* candidates run (prepared) */
  uint32_t pruned;          /* dropped as clearly slower */
  uint32_t rejected;        /* refused: invalid, failed, wrong output */
  int have_default;         /* the default was measured: speedup is meaningful */
  char *default_policy;
  double default_median_us;
  double speedup;        /* default median / winner median; 0 when no default */
  int budget_exhausted;  /* the time budget stopped the enumeration */
  uint32_t budget_after; /* ... after this many candidates */
  int cancelled;         /* hooks.is_cancelled stopped it */
  calhost_sweep_rejection *rejections;
  size_t rejection_count;
  calhost_sweep_candidate *candidates; /* every planned candidate and the default, */
  size_t candidate_entries;            /* in the order they were run (for the report) */
} calhost_sweep_result;

/* Current CLOCK_MONOTONIC time in seconds. */
double calhost_sweep_now(void);

/* Runs one sweep and fills *out (zeroed first). Returns 0 when a winner was
 * chosen, -1 otherwise (out->error says why; out->cancelled when stopped).
 * The session is opened and closed here. */
int calhost_sweep_run(const calhost_sweep_request *req, calhost_sweep_result *out);

/* Frees what *r owns and zeroes it. NULL-safe. */
void calhost_sweep_result_free(calhost_sweep_result *r);

#endif /* CALHOST_SWEEP_MEASURE_H */
