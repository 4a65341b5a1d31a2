/*
 * measure_internal.h: what measure.c (the run: rounds, racing, the winner)
 * and space.c (the search's space and budget for one sweep) share: the
 * sweep's state and the few helpers both call (texts.c: policy, failure
 * and warning texts; so space.c calls nothing of measure.c). Private to
 * host/sweep.
 */
#ifndef CALHOST_SWEEP_MEASURE_INTERNAL_H
#define CALHOST_SWEEP_MEASURE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "loader/entries.h"
#include "measure.h"

/* May the sweep call optional entry `field`? (the loader's one rule) */
#define VT_HAS(s, field) CALHOST_VTABLE_CALLABLE((s)->vt, (s)->req->abi_version, field)

enum entry_state { ENTRY_ACTIVE, ENTRY_PRUNED, ENTRY_REJECTED };

typedef struct entry {
  uint32_t index;
  uint32_t *config; /* the search's configuration (param_count positions), NULL for the default */
  char *policy;
  size_t policy_length;
  enum entry_state state;
  double *samples;
  uint32_t n;
  uint32_t iterations;
  double median;
  const char *why;        /* why it was pruned (for the report), or NULL */
  char *reason;           /* why it was rejected, or NULL */
  double compile_seconds; /* its first prepare */
} entry;

typedef struct sweep {
  const sweep_request *req;
  const calhost_plugin_vtable *vt;
  calhost_session *session;
  sweep_result *out;
  size_t rejection_cap; /* allocated in out->rejections */
  size_t max_policy;
  int any_device_timing;
  int all_device_timing;
  /* the candidates run so far: the default first, then in search order */
  entry *es;
  size_t ne, cap;
  uint32_t reps, first; /* samples per candidate; in round one */
  /* the search's space: the numbered candidates (param, words), or the
   * plugin's named parameters (ABI 2 describe_space) */
  search_param param; /* numbered: the one parameter "index" */
  char **words;
  uint32_t count;
  const search_param *params;
  size_t np;
  int named;
  search_param *named_params; /* named: allocated here, strings the plugin's */
  size_t last;                /* the entry evaluate filled last */
  uint32_t shown;             /* runs announced ahead of the search's (the default: 1) */
  int oom;                    /* evaluate ran out of memory */
  /* the plugin reported a device time of zero or not finite: the sweep
   * stops at once (every later time would be as wrong), timer_why says so */
  int bad_timer;
  char timer_why[512];
  const uint32_t *default_config; /* named: the default's assignment (plugin's), or NULL */
  size_t default_entry;           /* the default's entry in es, when have_default_entry */
  int have_default_entry;
  int last_is_default; /* the search's last evaluation was the default (not re-run) */
} sweep;

/* The plugin's pending error message (hooks.take_plugin_error), or NULL;
 * taking it clears it. */
const char *sweep_plugin_message(sweep *s);

/* A plugin call's status as a word of the sweep's messages ("invalid
 * argument"). */
const char *sweep_status_word(calhost_status st);

/* "what: status (plugin message)" into buf. */
void sweep_describe_failure(sweep *s, char *buf, size_t cap, const char *what, calhost_status st);

/* Appends a warning about the plugin (out->warning, "; "-joined): what the
 * sweep noticed without failing, for calibrate to show once per plugin. */
void sweep_add_warning(sweep *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Serializes candidate `index` (or the default, CALHOST_SWEEP_DEFAULT_INDEX;
 * config: the named space's assignment) into a fresh string in *policy.
 * Returns 0, or -1 with the reason in why. */
int sweep_serialize(sweep *s, uint32_t index, const uint32_t *config, char **policy, size_t *length,
                    char *why, size_t cap);

/* The search's space and options for one sweep, built by sweep_space_build. */
typedef struct sweep_space {
  search_space space;
  search_options so;
  uint32_t *starts; /* the plausible order (space.starts), owned */
  uint32_t *warm;   /* the warm start (space.warm), owned */
  uint64_t size;    /* the space's valid configurations (0: too many to count) */
  int named;        /* the plugin's named parameters, else the numbered candidates */
  int curated;      /* the space is the plugin's curated candidate list */
} sweep_space;

/* Builds s's search space (the plugin's named parameters when it describes
 * them, else the numbered candidates; s->count candidates), the warm start,
 * the strategy and budget (search_plan), and fills the sweep's plan in
 * s->out (numbered, space_size, strategy, budgets, planned). The caller
 * sets the space's evaluate and the options' observe hooks. Returns 0, or
 * -1 with s->out->error set; sweep_space_free frees sp either way. */
int sweep_space_build(sweep *s, sweep_space *sp);

/* Frees what sweep_space_build allocated in sp and s (named_params, words). */
void sweep_space_free(sweep *s, sweep_space *sp);

#endif
