/*
 * measure.h: one calibration sweep — one plugin instance x one workload x
 * one target (CPU set and thread count). Drives the plugin's vtable through
 * the lifecycle of plugin.h: the search part (host/search) chooses which
 * candidates run (the one place that does: strategy and budget from the
 * request, else the rigor's mapping, search_sweep_rigor_plan); each is
 * validated, checked against the reference, warmed up, sampled to a minimum
 * time; the sweep decides on the median, prunes clear losers, respects the
 * time budget, and measures the backend's untuned default for the speedup.
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
#include "rigor.h"
#include "search/search.h"
#include "stats.h"

/* Policies longer than this are refused (reported, never stored). */
#define CALHOST_SWEEP_MAX_POLICY (64u * 1024u)

/* The candidate index used for the backend's default policy. */
#define CALHOST_SWEEP_DEFAULT_INDEX UINT32_MAX

/* The search of a sweep, as search_start reports it. */
typedef struct sweep_search_info {
  const search_param *params; /* the space's parameters */
  size_t param_count;
  int numbered;                /* 1: the numbered candidates (one ordered parameter "index") */
  uint64_t space_size;         /* valid configurations; 0 when too many to count */
  int curated;                 /* 1: the space is the plugin's curated candidate list */
  search_strategy strategy;    /* resolved (never DEFAULT) */
  uint32_t budget_evaluations; /* 0: no limit */
  double budget_seconds;       /* 0: no limit */
  const struct sweep_request *request; /* the sweep's (workload, target, params) */
  /* the backend's default, measured before the search: its policy (NULL
   * when the plugin has none or it could not be serialized) and median
   * (NAN when it was rejected or stopped) */
  const char *default_policy;
  double default_median_us;
} sweep_search_info;

/* One candidate the search evaluated. */
typedef struct sweep_evaluation {
  uint32_t evaluation;    /* 1-based, in the search's order */
  uint32_t index;         /* the candidate's number (numbered) or its evaluation ordinal - 1 */
  const uint32_t *config; /* param_count value positions */
  const char *policy;     /* NULL when it could not be serialized */
  int rejected;           /* refused, failed or wrong output: reason says why */
  const char *reason;     /* NULL unless rejected */
  int pruned;             /* dropped as clearly slower right after its samples */
  double median_us;       /* the median the search was given (NAN when rejected) */
  double spread_us;       /* the MAD of those samples */
  uint32_t samples;       /* how many (prune_after under pruning, else every repetition) */
  double compile_seconds; /* its first prepare (compiling, for a kernel backend) */
  double seconds;         /* the whole evaluation, compile included */
} sweep_evaluation;

/* Callbacks from a running sweep; every member may be NULL. */
typedef struct sweep_hooks {
  void *user;
  /* About to hand candidate `index` (CALHOST_SWEEP_DEFAULT_INDEX for the
   * default) to the plugin, the `ordinal`-th of `total` runs planned in this
   * round; policy is borrowed. Called once its policy is serialized, before
   * validate_policy and prepare, so a crash after it is attributed to this
   * candidate, until candidate_end. */
  void (*candidate_start)(void *user, uint32_t index, uint32_t ordinal, uint32_t total,
                          const char *policy);
  /* The plugin calls of the candidate announced last are over (measured,
   * pruned or rejected): a crash from here on is not its. */
  void (*candidate_end)(void *user);
  /* The search is about to start (once per sweep, after the default was
   * measured): its space and the strategy and budget it runs with. info and
   * what it points to are borrowed for the whole sweep (until
   * sweep_run returns). The hook of `calibrate --record`. */
  void (*search_start)(void *user, const sweep_search_info *info);
  /* One candidate the search evaluated (the search's observe hook), with
   * what the search was given for it; ev is borrowed for the call. */
  void (*evaluated)(void *user, const sweep_evaluation *ev);
  /* Nonzero when the sweep must stop now (SIGINT, SIGTERM). */
  int (*is_cancelled)(void *user);
  /* The message the plugin attached with host->set_error since the last
   * call (and clears it), or NULL. The string stays valid until the next call. */
  const char *(*take_plugin_error)(void *user);
} sweep_hooks;

/* What to sweep. Everything is borrowed for the duration of the call. */
typedef struct sweep_request {
  const calhost_plugin_vtable *vtable;
  uint32_t abi_version; /* the negotiated version; gates optional entries */
  calhost_plugin_instance *instance;
  const calhost_workload *workload;
  const calhost_target *target;
  sweep_rigor_params params;
  /* Which candidates run (host/search). DEFAULT with both budgets 0: the
   * rigor's mapping (search_sweep_rigor_plan). A strategy without a
   * budget gets the rigor's evaluation budget; a budget without a strategy
   * gets search_default_strategy for it (a seconds budget alone:
   * the default for a budget below the space). */
  search_strategy strategy;
  uint32_t budget_evaluations; /* 0: the rigor's (or none with budget_seconds) */
  double budget_seconds;       /* 0: none; bounds the search (round one) */
  uint64_t seed;               /* the search's seed; 0: 1 */
  double deadline;             /* CLOCK_MONOTONIC seconds when the budget ends; 0: none */
  size_t max_policy_length;    /* 0: CALHOST_SWEEP_MAX_POLICY */
  sweep_hooks hooks;
  /* Explicit candidate policies (a caller re-timing known policies, as
   * calhost verify does): when policy_count > 0 the sweep
   * measures exactly these policies (candidate i is policies[i]; validated,
   * checked and timed like any candidate) besides the default, instead of
   * the plugin's candidate space; max_candidates does not apply. Borrowed. */
  const char *const *policies;
  size_t policy_count;
  /* Policies known to kill the process that runs them (an earlier attempt
   * of this sweep died in them): a candidate (or the default) whose policy
   * is avoid_policies[i] is rejected with avoid_reasons[i] and never
   * prepared or run. Borrowed; avoid_count 0: none. */
  const char *const *avoid_policies;
  const char *const *avoid_reasons;
  size_t avoid_count;
  /* A warm start (calibrate: the store's policies of the same backend and
   * kernel from other devices or processors, fastest recorded median
   * first): each is validated by the plugin in this session (a described
   * space: policy_assignment, then assignment_valid; numbered candidates:
   * the candidate whose policy it is, among the first
   * SWEEP_WARM_NUMBERED_MAX) and handed to the search as its warm start
   * (search_space.warm), in this order; a refused one is left out.
   * Borrowed; warm_count 0: none. */
  const char *const *warm_policies;
  size_t warm_count;
} sweep_request;

/* The most numbered candidates a warm policy is looked for among. */
#define SWEEP_WARM_NUMBERED_MAX 4096u

/* The most candidates a sweep numbers (a space the plugin does not
 * describe is one ordered parameter of candidate_count values, a word
 * each): a larger count fails the sweep with a message that says so. */
#define SWEEP_MAX_NUMBERED (1u << 24)

/* A candidate that was refused, with the reason. */
typedef struct sweep_rejection {
  uint32_t index; /* candidate index, CALHOST_SWEEP_DEFAULT_INDEX for the default */
  char *policy;   /* may be NULL when the policy could not be serialized */
  char *reason;
} sweep_rejection;

/* What became of one candidate (or the default) of a sweep. */
typedef enum sweep_candidate_status {
  CALHOST_CANDIDATE_MEASURED = 0,   /* every sample taken: a contender */
  CALHOST_CANDIDATE_PRUNED = 1,     /* dropped as slower, or stopped early (reason says) */
  CALHOST_CANDIDATE_REJECTED = 2,   /* refused: invalid, failed, wrong output */
  CALHOST_CANDIDATE_UNMEASURED = 3, /* never run: the time budget ran out first */
} sweep_candidate_status;

/* One candidate as the report shows it: the figures of the samples it got
 * (pruned candidates have a few; rejected and unmeasured have none, and
 * then figures.median_us etc. are NAN, the counts 0). */
typedef struct sweep_candidate {
  uint32_t index; /* CALHOST_SWEEP_DEFAULT_INDEX for the default */
  char *policy;   /* may be NULL (not serialized, or dropped to bound the record) */
  sweep_candidate_status status;
  char *reason; /* why pruned / rejected / unmeasured; NULL when measured */
  sweep_figures figures;
} sweep_candidate;

/* The outcome of a sweep; owned by the caller, freed with
 * sweep_result_free. Latencies are per iteration, in microseconds. */
typedef struct sweep_result {
  int ok;          /* 1: a winner was chosen */
  char error[512]; /* why not, when ok == 0 */
  char *winner_policy;
  uint32_t winner_index;    /* CALHOST_SWEEP_DEFAULT_INDEX when the default won */
  sweep_figures figures;    /* the winner's (zeroed when none was chosen) */
  int unchecked;            /* the plugin has no check(): outputs were not verified */
  int device_timed;         /* timings came from the plugin's device_seconds */
  uint32_t candidate_count; /* size of the plugin's candidate space */
  uint32_t planned;         /* evaluations the search's budget allows (or the space) */
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
  /* the search */
  uint32_t strategy;           /* the search_strategy that ran */
  int numbered;                /* the space was the numbered candidates */
  uint64_t space_size;         /* valid configurations of the space, 0 when unknown */
  uint32_t budget_evaluations; /* 0: none */
  double budget_seconds;       /* 0: none */
  uint32_t evaluated;          /* candidates the search evaluated (rejected ones included) */
  uint32_t search_stop;        /* search_stop: why the search ended */
  double search_seconds;       /* the search's time (round one) */
  /* What the sweep noticed about the plugin without failing ("; "-joined,
   * NULL when nothing): a described space it could not use, a default
   * assignment the plugin's own assignment_valid refuses. */
  char *warning;
  sweep_rejection *rejections;
  size_t rejection_count;
  sweep_candidate *candidates; /* every planned candidate and the default, */
  size_t candidate_entries;    /* in the order they were run (for the report) */
} sweep_result;

/* Current CLOCK_MONOTONIC time in seconds. */
double sweep_now(void);

/* One run() of `iterations` on session through vt: *rr is set up (device
 * time -1: not reported) and filled by run(); *host_seconds is the host's
 * clock around the call. Returns run()'s status. The timing of a sweep's
 * candidate and of a race's entrant. */
calhost_status sweep_run_timed(const calhost_plugin_vtable *vt, calhost_session *session,
                               uint32_t iterations, calhost_run_result *rr, double *host_seconds);

/* Runs one sweep and fills *out (zeroed first). Returns 0 when a winner was
 * chosen, -1 otherwise (out->error says why; out->cancelled when stopped).
 * The session is opened and closed here. */
int sweep_run(const sweep_request *req, sweep_result *out);

/* Frees what *r owns and zeroes it. NULL-safe. */
void sweep_result_free(sweep_result *r);

/* The one rule of a usable described parameter space (what ABI 2's
 * describe_space gives): 1 to 64 parameters, each named [A-Za-z0-9_]+ and
 * unique, with one or more values, each a printable word (no space or
 * control character: a space file stores it as one) distinct within its
 * parameter. Returns 0 when usable, else -1 with the defect in why. A sweep
 * searches a described space only when it passes (else it runs the
 * numbered candidates); `calhost plugin check` reports the defect. */
int sweep_space_defect(const calhost_parameter_space *ps, char *why, size_t cap);

#endif /* CALHOST_SWEEP_MEASURE_H */
