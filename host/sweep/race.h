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
                         does not decide the race; the entrants that do, the contenders, always
                         take every sample unless the race is `racing`) */
  /* out */
  int ok;          /* timed: figures hold its samples */
  char error[256]; /* why not (refused, failed, wrong output, no default) */
  sweep_figures figures;
  int device_clock; /* its figures are the device's time (every entrant reported one); 0: the
                       host's clock (a race whose entrants' clocks differ is timed by the host) */
  uint32_t rounds;  /* timed samples it took (its twin's when it was timed as another entrant) */
  int dropped;   /* it stopped early: clearly behind the leader (racing, or the rigor's pruning) */
  uint32_t tied; /* racing, a contender: how many contenders (itself included, >= 2) ended
                    within the noise of the fastest contender; 0: none (a clear race) */
} sweep_race_entrant;

/* The racing rule (calibrate's race; issue 38): samples go where the
 * decision is close (F-race, Hoeffding races). An entrant is clearly
 * behind when its lower quartile (its optimistic case, robust to one lucky
 * sample) is above the leader's median by more than a margin: a contender
 * (not `prunable`) after SWEEP_RACE_MIN_ROUNDS timed rounds, against the
 * leading contender, by the rigor's noise_threshold; a default
 * (`prunable`), whose only use is its figure, after its first timed round,
 * against the leader of every entrant, by max(noise_threshold,
 * prune_margin). It is dropped (no more samples). When one contender is
 * left the race is decided and stops. Past the `repetitions` planned
 * rounds, the leader and the undecided contenders (neither dropped nor
 * with a median within the noise of the leader's) take more rounds, with
 * the samples the dropped entrants saved (repetitions x the entrants
 * timed), up to SWEEP_RACE_ROUND_CAP x repetitions rounds. Contenders that
 * end with a median within the noise of the leader's are a tie (`tied`;
 * more rounds would not separate what the noise bound calls level). A
 * rigor without pruning (exhaustive) drops nothing and extends nothing:
 * every entrant takes every round; ties are still told. */
#define SWEEP_RACE_MIN_ROUNDS 2
#define SWEEP_RACE_ROUND_CAP 2

/* Runs the race of the n entrants with params p (min_sample_seconds,
 * warmup_samples, repetitions, noise_threshold, and pruning as the sweep
 * prunes: with p->prune, after prune_after samples a `prunable` entrant
 * clearly slower than the leader (sweep_stats_should_prune, prune_margin)
 * takes no more samples; its figures are those it took):
 * opens a session per entrant, prepares and checks each (unless
 * `checked`), sizes its sample (those runs are its first warm-up sample:
 * p->warmup_samples - 1 warm-up rounds follow), then takes p->repetitions
 * rounds, each running every entrant once, each
 * round starting one entrant later than the one before (A B C, B C A, ...);
 * racing (nonzero): the racing rule above instead of the rigor's pruning,
 * with `repetitions` the planned rounds. An entrant that fails
 * anywhere is dropped (ok 0, error) and the others go on. cancelled (may be NULL) stops the race
 * between samples. Returns how many entrants were timed. */
size_t sweep_race_run(sweep_race_entrant *e, size_t n, const sweep_rigor_params *p, int racing,
                      int (*cancelled)(void *user), void *user);

#endif /* CALHOST_SWEEP_RACE_H */
