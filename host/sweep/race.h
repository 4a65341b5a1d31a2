/*
 * race.h: the race runner (issue 38): times known policies of several
 * backends on one workload and target interleaved, A B C A B C ..., with
 * one rigor's sampling (each sample sized to min_sample_seconds, warm-up
 * rounds, `repetitions` rounds), so that their medians are comparable
 * (measured over the same minutes of the machine, unlike sweeps that ran
 * one after the other). Each entrant is checked against its backend's
 * reference once, before it is timed, unless this run's sweep checked
 * that very policy on that workload and target (`checked`). Entrants of one backend instance on one
 * workload and target share a session (one reference, not one per policy):
 * the session is prepared again, untimed, before each sample of another
 * entrant than the last (a backend's prepare may also set process-wide
 * state, such as OpenBLAS's thread count); an entrant whose policy is an
 * earlier one's on the same session (a default that is the winner) is
 * timed once and gets its figures. Runs in the calling thread (pinned by the
 * caller), no I/O. Internal to the host.
 */
#ifndef CALHOST_SWEEP_RACE_H
#define CALHOST_SWEEP_RACE_H

#include <stddef.h>
#include <stdint.h>

#include "calhost/plugin.h"
#include "rigor.h"
#include "stats.h"

/* One policy of one backend in a race. */
typedef struct sweep_race_entrant {
  /* in (borrowed for the call) */
  const calhost_plugin_vtable *vtable;
  uint32_t abi_version;
  calhost_plugin_instance *instance;
  const calhost_workload *workload;
  const calhost_target *target;
  const char *policy; /* NULL: the backend's default policy (default_policy) */
  int checked;        /* its output on this workload and target was checked in this run (by
                         the sweep that measured it): the race does not check it again (a
                         MatMul backend then never computes its reference) */
  int prunable;       /* the rigor's pruning may stop its samples early (a default: its figure
                         does not decide the race; the entrants that do always take every
                         sample) */
  /* out */
  int ok;          /* timed: figures hold its samples */
  char error[256]; /* why not (refused, failed, wrong output, no default) */
  sweep_figures figures;
} sweep_race_entrant;

/* Runs the race of the n entrants with params p (min_sample_seconds,
 * warmup_samples, repetitions, noise_threshold, and pruning as the sweep
 * prunes: with p->prune, after prune_after samples a `prunable` entrant
 * clearly slower than the leader (sweep_stats_should_prune, prune_margin)
 * takes no more samples; its figures are those it took):
 * opens a session per entrant, prepares and checks each (unless
 * `checked`), sizes its sample (those runs are its first warm-up sample:
 * p->warmup_samples - 1 warm-up rounds follow), then takes p->repetitions
 * rounds, each running every entrant once, each
 * round starting one entrant later than the one before (A B C, B C A, ...). An entrant that fails
 * anywhere is dropped (ok 0, error) and the others go on. cancelled (may be NULL) stops the race
 * between samples. Returns how many entrants were timed. */
size_t sweep_race_run(sweep_race_entrant *e, size_t n, const sweep_rigor_params *p,
                      int (*cancelled)(void *user), void *user);

#endif /* CALHOST_SWEEP_RACE_H */
