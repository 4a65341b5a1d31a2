/*
 * race.c: the race runner (race.h): one session per backend and workload
 * (its entrants share it: the backend's reference, when a check needs it,
 * is computed once, and the session is prepared again with an entrant's
 * policy before each of its samples, untimed), the reference check of what
 * this run's sweeps did not check, sample sizing, then
 * interleaved rounds (racing: drops, extra rounds, ties) and each
 * entrant's figures (stats.h).
 */
#include "race.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/policy.h"
#include "base/str.h"
#include "loader/entries.h"
#include "measure.h"

typedef struct runner {
  sweep_race_entrant *e;
  calhost_session *session; /* its own, or NULL when it shares owner's */
  struct runner *owner;     /* the runner that opened the session it uses (itself or earlier) */
  struct runner *prepared;  /* on the owner: the runner whose policy the session holds */
  char *policy;             /* what prepare takes: the entrant's policy, or its default */
  struct runner *alias;     /* an earlier runner with the same session and policy: timed once,
                               its figures copied (a default that is the winner) */
  uint32_t iterations;
  double *samples;
  uint32_t n;
  int pruned;       /* dropped (racing) or pruned: no more samples */
  int device_clock; /* its runs report the device's time */
  int host_clock;   /* the race's clock is the host's (the entrants' clocks differ) */
} runner;

static calhost_session *session_of(runner *r) {
  return r->owner->session;
}

/* One run() of `iterations`; *seconds the device's time when reported
 * (unless the race's clock is the host's), else the host's clock. Returns
 * 0, or -1 with the entrant's error set. */
static int timed(runner *r, uint32_t iterations, double *seconds) {
  calhost_run_result rr;
  double host_seconds;
  calhost_status st = sweep_run_timed(r->e->vtable, session_of(r), iterations, &rr, &host_seconds);
  if (st != CALHOST_OK) {
    snprintf(r->e->error, sizeof r->e->error, "run failed: %s", calhost_status_name(st));
    return -1;
  }
  if (rr.device_seconds > 0 && isfinite(rr.device_seconds)) {
    *seconds = r->host_clock ? host_seconds : rr.device_seconds;
    r->device_clock = 1;
  } else if (rr.device_seconds < 0)
    *seconds = host_seconds;
  else {
    snprintf(r->e->error, sizeof r->e->error, "run() reported no usable device time");
    return -1;
  }
  return 0;
}

/* Prepares the shared session with r's policy unless it holds it. */
static int prepared(runner *r) {
  if (r->owner->prepared == r)
    return 0;
  calhost_status st = r->e->vtable->prepare(session_of(r), r->policy, strlen(r->policy));
  if (st != CALHOST_OK) {
    r->owner->prepared = NULL;
    snprintf(r->e->error, sizeof r->e->error, "prepare failed: %s", calhost_status_name(st));
    return -1;
  }
  r->owner->prepared = r;
  return 0;
}

/* The default policy of r's session into a fresh string. */
static char *default_of(runner *r) {
  const calhost_plugin_vtable *vt = r->e->vtable;
  if (!CALHOST_VTABLE_CALLABLE(vt, r->e->abi_version, default_policy)) {
    snprintf(r->e->error, sizeof r->e->error, "the backend has no default policy");
    return NULL;
  }
  size_t cap = 256, len = 0;
  for (int attempt = 0; attempt < 4; attempt++) {
    char *buf = malloc(cap);
    if (!buf)
      break;
    calhost_status st = vt->default_policy(session_of(r), buf, cap, &len);
    if (st == CALHOST_OK && len < cap) {
      buf[len] = '\0';
      return buf;
    }
    free(buf);
    if (st != CALHOST_BUFFER_TOO_SMALL || len > CALHOST_SWEEP_MAX_POLICY)
      break;
    cap = len > cap ? len : cap * 2;
  }
  snprintf(r->e->error, sizeof r->e->error, "default_policy failed");
  return NULL;
}

/* Opens (or shares), validates, prepares, checks and sizes one runner.
 * Returns 0 or -1. */
static int ready(runner *rs, size_t i, const sweep_rigor_params *p) {
  runner *r = &rs[i];
  sweep_race_entrant *e = r->e;
  const calhost_plugin_vtable *vt = e->vtable;
  r->owner = r;
  for (size_t j = 0; j < i; j++) /* an earlier runner of the same backend and workload */
    if (rs[j].owner == &rs[j] && rs[j].session && rs[j].e->vtable == vt &&
        rs[j].e->instance == e->instance && rs[j].e->workload == e->workload &&
        rs[j].e->target == e->target)
      r->owner = &rs[j];
  if (r->owner == r) {
    calhost_status st = vt->open_session(e->instance, e->workload, e->target, &r->session);
    if (st != CALHOST_OK || !r->session) {
      r->session = NULL;
      snprintf(e->error, sizeof e->error, "open_session failed: %s", calhost_status_name(st));
      return -1;
    }
  }
  r->policy = e->policy ? base_str_dup(e->policy) : default_of(r);
  if (!r->policy) {
    if (e->policy)
      snprintf(e->error, sizeof e->error, "out of memory");
    return -1;
  }
  for (size_t j = 0; j < i; j++) /* the same policy on the same session: timed once */
    if (rs[j].owner == r->owner && rs[j].policy && !rs[j].alias && rs[j].e->ok &&
        base_policy_same(rs[j].policy, r->policy)) {
      r->alias = &rs[j];
      return 0;
    }
  char err[256] = "";
  calhost_status st =
      vt->validate_policy(e->instance, r->policy, strlen(r->policy), err, sizeof err);
  if (st != CALHOST_OK) {
    snprintf(e->error, sizeof e->error, "refused: %.200s", err[0] ? err : calhost_status_name(st));
    return -1;
  }
  double t;
  if (prepared(r) != 0 || timed(r, 1, &t) != 0)
    return -1;
  if (!e->checked && CALHOST_VTABLE_CALLABLE(vt, e->abi_version, check)) {
    err[0] = '\0';
    st = vt->check(session_of(r), err, sizeof err);
    err[sizeof err - 1] = '\0';
    if (st != CALHOST_OK) {
      snprintf(e->error, sizeof e->error, "wrong output: %.200s",
               err[0] ? err : calhost_status_name(st));
      return -1;
    }
  }
  /* size a sample to the rigor's minimum time (as the sweep does) */
  uint32_t iters = 1;
  for (int step = 0; step < 24 && t < p->min_sample_seconds; step++) {
    double grow = t > 0 ? p->min_sample_seconds / t * 1.2 : 10.0;
    grow = grow > 10.0 ? 10.0 : grow < 1.5 ? 1.5 : grow;
    double next = ceil((double)iters * grow);
    iters = next > (double)(1u << 24) ? (1u << 24) : (uint32_t)next;
    if (timed(r, iters, &t) != 0)
      return -1;
    if (iters == (1u << 24))
      break;
  }
  r->iterations = iters;
  return 0;
}

/* The rigor's pruning, as the sweep prunes its candidates: after
 * prune_after samples, a prunable entrant (one whose figure does not decide
 * the race: a default) whose lower quartile is above the leader's median x
 * (1 + prune_margin) takes no more samples (its figures are those
 * samples'). The entrants that decide the race take every sample: a few
 * disturbed samples cannot prune the true winner. */
static void prune(runner *rs, size_t n, const sweep_rigor_params *p) {
  double lead = NAN;
  for (size_t i = 0; i < n; i++)
    if (rs[i].e->ok && !rs[i].alias && rs[i].n) {
      double m = sweep_stats_median(rs[i].samples, rs[i].n);
      if (!(lead <= m))
        lead = m;
    }
  for (size_t i = 0; i < n; i++)
    if (rs[i].e->ok && !rs[i].alias && rs[i].e->prunable &&
        sweep_stats_should_prune(rs[i].samples, rs[i].n, lead, p->prune_margin, p->prune_after))
      rs[i].pruned = rs[i].e->dropped = 1;
}

/* Whether r still takes samples. */
static int active(const runner *r) {
  return r->e->ok && !r->alias && !r->pruned;
}

static double median_of(const runner *r) {
  return sweep_stats_median(r->samples, r->n);
}

/* The active runner with samples of the lowest median (contenders only:
 * the non-prunable ones), NULL when none. */
static const runner *leader(const runner *rs, size_t n, int contenders_only) {
  const runner *lead = NULL;
  for (size_t i = 0; i < n; i++)
    if (active(&rs[i]) && rs[i].n && !(contenders_only && rs[i].e->prunable) &&
        (!lead || median_of(&rs[i]) < median_of(lead)))
      lead = &rs[i];
  return lead;
}

/* The racing rule (race.h): drops the entrants clearly behind: their lower
 * quartile (their optimistic case, robust to one lucky sample) above the
 * leader's median by more than the margin. */
static void race_drop(runner *rs, size_t n, const sweep_rigor_params *p) {
  const runner *la = leader(rs, n, 0), *lc = leader(rs, n, 1);
  double margin = p->prune_margin > p->noise_threshold ? p->prune_margin : p->noise_threshold;
  double lead_all = la ? median_of(la) : NAN, lead = lc ? median_of(lc) : NAN;
  for (size_t i = 0; i < n; i++) {
    runner *r = &rs[i];
    if (!active(r) || !r->n)
      continue;
    double q1 = sweep_stats_quantile(r->samples, r->n, 0.25);
    if (r->e->prunable ? q1 > lead_all * (1 + margin)
                       : r->n >= SWEEP_RACE_MIN_ROUNDS && q1 > lead * (1 + p->noise_threshold))
      r->pruned = r->e->dropped = 1;
  }
}

static size_t contenders_active(const runner *rs, size_t n) {
  size_t c = 0;
  for (size_t i = 0; i < n; i++)
    c += active(&rs[i]) && !rs[i].e->prunable;
  return c;
}

/* Whether active contender r is close to the leading contender lc: its
 * median within the noise of the leader's (a tie, if the race ends so). */
static int close_to(const runner *r, const runner *lc, const sweep_rigor_params *p) {
  return median_of(r) <= median_of(lc) * (1 + p->noise_threshold);
}

/* The undecided contenders: active, neither clearly behind (dropped) nor
 * close to the leader; a race past its planned rounds times them (and the
 * leader) while there are any. */
static size_t undecided(const runner *rs, size_t n, const sweep_rigor_params *p) {
  const runner *lc = leader(rs, n, 1);
  size_t u = 0;
  for (size_t i = 0; i < n && lc; i++)
    u += active(&rs[i]) && !rs[i].e->prunable && rs[i].n && !close_to(&rs[i], lc, p);
  return u;
}

/* The contenders that end within the noise of the leading one: a tie
 * (race.h) when two or more. */
static void mark_ties(runner *rs, size_t n, const sweep_rigor_params *p) {
  const runner *lc = leader(rs, n, 1);
  uint32_t count = 0;
  for (int pass = 0; pass < 2 && lc; pass++)
    for (size_t i = 0; i < n; i++) {
      runner *r = &rs[i];
      if (!active(r) || !r->n || r->e->prunable || !close_to(r, lc, p))
        continue;
      if (!pass)
        count++;
      else
        r->e->tied = count >= 2 ? count : 0;
    }
}

size_t sweep_race_run(sweep_race_entrant *e, size_t n, const sweep_rigor_params *p, int racing,
                      int (*cancelled)(void *user), void *user) {
  runner *rs = calloc(n ? n : 1, sizeof *rs);
  uint32_t reps = p->repetitions ? p->repetitions : 1;
  racing = racing && p->prune; /* a rigor without pruning times every entrant every round */
  uint32_t cap = racing ? reps * SWEEP_RACE_ROUND_CAP : reps;
  size_t timed_count = 0;
  for (size_t i = 0; i < n; i++) {
    e[i].ok = 0;
    e[i].error[0] = '\0';
    memset(&e[i].figures, 0, sizeof e[i].figures);
    e[i].figures.median_us = NAN;
    e[i].rounds = 0;
    e[i].dropped = 0;
    e[i].tied = 0;
    e[i].device_clock = 0;
  }
  if (!rs) {
    for (size_t i = 0; i < n; i++)
      snprintf(e[i].error, sizeof e[i].error, "out of memory");
    return 0;
  }
  for (size_t i = 0; i < n; i++) {
    rs[i].e = &e[i];
    rs[i].owner = &rs[i];
    rs[i].samples = calloc(cap, sizeof *rs[i].samples);
    if (!rs[i].samples)
      snprintf(e[i].error, sizeof e[i].error, "out of memory");
    else
      e[i].ok = ready(rs, i, p) == 0;
  }
  /* one clock: the device's when every entrant reports it, else the
   * host's for all (a device time against a host time is no comparison) */
  int mixed = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++)
      mixed |= active(&rs[i]) && active(&rs[j]) && rs[i].device_clock != rs[j].device_clock;
  for (size_t i = 0; i < n && mixed; i++)
    rs[i].host_clock = 1;
  /* racing: the samples the planned rounds would take, which the
   * contenders still close after them may spend */
  size_t budget = 0, used = 0;
  for (size_t i = 0; i < n; i++)
    budget += active(&rs[i]) ? reps : 0;
  /* warm-up rounds (ready's sized runs were each entrant's first warm-up
   * sample: its one-off costs are paid), then the timed rounds; each round
   * starts one entrant later (A B C, B C A, C A B, ...): a machine's
   * periodic interruptions cannot fall on one entrant alone */
  uint32_t warmup = p->warmup_samples ? p->warmup_samples - 1 : 0;
  for (uint32_t round = 0; round < warmup + cap; round++) {
    if (cancelled && cancelled(user))
      break;
    int extra = round >= warmup + reps; /* racing: a round past the plan */
    const runner *lc = extra ? leader(rs, n, 1) : NULL;
    if (extra && (!undecided(rs, n, p) || used + 1 + undecided(rs, n, p) > budget))
      break;
    for (size_t k = 0; k < n; k++) {
      size_t i = (k + round) % n;
      runner *r = &rs[i];
      double t;
      if (!active(r) || (extra && (e[i].prunable || (r != lc && close_to(r, lc, p)))))
        continue; /* past the plan: the leader and the undecided only */
      if (prepared(r) != 0 || timed(r, r->iterations, &t) != 0) {
        e[i].ok = 0;
        continue;
      }
      if (round >= warmup) {
        r->samples[r->n++] = t / (double)r->iterations * 1e6;
        used++;
      }
    }
    if (racing && round >= warmup) {
      race_drop(rs, n, p);
      if (round + 1 - warmup >= SWEEP_RACE_MIN_ROUNDS && contenders_active(rs, n) <= 1)
        break; /* decided */
    } else if (!racing && p->prune && round + 1 == warmup + p->prune_after && p->prune_after < reps)
      prune(rs, n, p);
  }
  mark_ties(rs, n, p);
  for (size_t i = 0; i < n; i++) {
    runner *r = &rs[i];
    if (r->alias) { /* its twin's figures (the twin comes first: already settled) */
      e[i].ok = r->alias->e->ok;
      e[i].figures = r->alias->e->figures;
      e[i].rounds = r->alias->e->rounds;
      e[i].device_clock = r->alias->e->device_clock;
      e[i].dropped = r->alias->e->dropped;
      e[i].tied = e[i].prunable ? 0 : r->alias->e->tied;
      if (!e[i].ok)
        snprintf(e[i].error, sizeof e[i].error, "%s", r->alias->e->error);
      timed_count += (size_t)e[i].ok;
      free(r->samples);
      free(r->policy);
      continue;
    }
    e[i].rounds = r->n;
    e[i].device_clock = r->device_clock && !r->host_clock;
    if (e[i].ok && r->n == 0) {
      e[i].ok = 0;
      snprintf(e[i].error, sizeof e[i].error, "stopped before its first sample");
    }
    if (e[i].ok &&
        sweep_figures_fill(r->samples, r->n, r->iterations, p->noise_threshold, &e[i].figures) == 0)
      timed_count++;
    else
      e[i].ok = 0;
    free(r->samples);
    free(r->policy);
  }
  for (size_t i = 0; i < n; i++) /* sessions last: others shared them */
    if (rs[i].session)
      e[i].vtable->close_session(rs[i].session);
  free(rs);
  return timed_count;
}
