/*
 * race.h: the race of backends (issue 38) as the store records it, and the
 * rule that chooses a backend by it. A race times, on one machine, each
 * backend's winner for one structure (and its default) interleaved in one
 * child; its outcome is written into each entrant's own profile as named
 * measurements (the version-1 format and the seed's keys unchanged):
 *
 *   race_id               the race's start, microseconds since the epoch
 *                         ("us_epoch"): ties the entrants of one race
 *                         together and orders races (a later one
 *                         supersedes an earlier one)
 *   race_latency          this backend's winner's median in the race (us)
 *   race_default_latency  its default's median in the race (us; absent
 *                         when the backend has no default)
 *   race_entrants         how many backends ran (count)
 *   race_rank             its place, 1 = the fastest (count)
 *   race_rounds           the samples its winner took (count): the racing
 *                         rule (sweep/race.h) spends them where the race
 *                         is close
 *   race_dropped          1 when its winner was dropped, clearly behind
 *                         the leader, before the planned rounds (count)
 *   race_default_rounds   the samples its default took (count; absent
 *                         without a default)
 *   race_default_dropped  1 when its default was dropped (count; absent
 *                         without a default)
 *   race_tie              in a tie: how many backends ended with a median
 *                         within the race's noise of the fastest's
 *                         (count, >= 2; the tie rule: the lower median
 *                         still decides); absent otherwise
 *
 * A race compares backends on one processor or one device only: the CPU
 * backends of a CPU target, or the device backends on one device (the
 * same device identity); a CPU race and a device race never share an
 * entrant.
 *
 * Exact profiles are per machine, so a store merged from several machines
 * keeps each machine's race; a portable profile carries the race of the
 * machine whose calibration wrote it. Internal to the host.
 */
#ifndef CALHOST_RUNTIME_RACE_H
#define CALHOST_RUNTIME_RACE_H

#include <stddef.h>
#include <stdint.h>

#include "calhost/calstore.h"
#include "calhost/plugin.h"
#include "config/config.h"

#define RUNTIME_RACE_ID "race_id"
#define RUNTIME_RACE_LATENCY "race_latency"
#define RUNTIME_RACE_DEFAULT "race_default_latency"
#define RUNTIME_RACE_ENTRANTS "race_entrants"
#define RUNTIME_RACE_RANK "race_rank"
#define RUNTIME_RACE_ROUNDS "race_rounds"
#define RUNTIME_RACE_DROPPED "race_dropped"
#define RUNTIME_RACE_DEFAULT_ROUNDS "race_default_rounds"
#define RUNTIME_RACE_DEFAULT_DROPPED "race_default_dropped"
#define RUNTIME_RACE_TIE "race_tie"
/* how many race measurements a profile may carry */
#define RUNTIME_RACE_MEASUREMENTS 10

/* What a profile records of the last race it ran in. */
typedef struct runtime_race {
  double id;         /* race_id; 0: none */
  double latency_us; /* race_latency */
  double default_us; /* race_default_latency; NAN when absent */
  uint32_t entrants;
  uint32_t rank;
  uint32_t rounds;         /* race_rounds; 0: not recorded (a race before racing) */
  int dropped;             /* race_dropped */
  uint32_t default_rounds; /* race_default_rounds; 0: none */
  int default_dropped;     /* race_default_dropped */
  uint32_t tie;            /* race_tie; 0: not in a tie */
} runtime_race;

/* Reads the race measurements of profile p into *out. Returns 1 when p
 * carries a race (race_id and race_latency, both positive), else 0 with
 * *out zeroed (default_us NAN). */
int runtime_race_read(const calstore_profile *p, runtime_race *out);

/* Copies the measurements of in (n) that are not a race's into out (room
 * for n) and returns how many: what a profile keeps when a new race's
 * figures replace the old ones. */
size_t runtime_race_strip(const calstore_measurement *in, size_t n, calstore_measurement *out);

/* Appends race's measurements to m (room for RUNTIME_RACE_MEASUREMENTS
 * more) after *n entries; updates *n. */
void runtime_race_append(const runtime_race *race, calstore_measurement *m, size_t *n);

/* One backend that could answer a lookup, as the rule sees it. */
typedef struct runtime_race_entry {
  const char *backend;
  int has_profile; /* the backend's lookup selected a profile */
  runtime_race race;
  int raced;          /* has_profile and its profile carries a race */
  const char *device; /* the device identity its keys were built for (a device backend), NULL:
                         the CPU; races are compared only among entries of one device */
} runtime_race_entry;

/* The rule of a lookup without a plugin (README, "Selection"): the entries
 * in the loader's order; order (count n_order, may be 0) the configured
 * backends ([model NAME] backends, else [lookup] backends). Returns the
 * index of the chosen entry, or -1 when none has a profile; *rule receives
 * how: "configured" (the first entry of the configured order with a
 * profile; -1 when none of them has one), "race" (a race recorded
 * between two or more of the entries with a profile on one device, or the
 * CPU: the latest such race of each device; the device of the first entry
 * in the loader's order that ran in its device's latest race, since races
 * on different devices were never compared; that race's first-ranked
 * entry, else its fastest), "first" (no such race: the first with a
 * profile, the rule before races), or "none". */
long runtime_race_choose(const runtime_race_entry *e, size_t n, char *const *order, size_t n_order,
                         const char **rule);

/* The configured order for a workload: the backends of the [model NAME]
 * whose name is `model` (NULL: the one whose workloads "NAME." prefix
 * `workload`) when set, else [lookup] backends; buf receives where it
 * was set ("[model NAME] backends", "[lookup] backends", "" when
 * neither is set: *n 0). */
void runtime_race_order(const config_settings *cfg, const char *model, const char *workload,
                        char *const **order, size_t *n, char *buf, size_t cap);

struct calhost_runtime;
/* The runtime's configuration (runtime.c; valid until it is closed). */
const config_settings *runtime_settings_of(const struct calhost_runtime *rt);

struct calhost_runtime_plugin;
/* A loaded plugin's vtable, negotiated ABI version and instance (runtime.c;
 * valid until the runtime is closed), for timing its policies in this
 * process (calhost model bench). Returns 0; 1 for a device backend (its
 * targets are devices); -1 when p is not usable. */
int runtime_plugin_parts(struct calhost_runtime_plugin *p, const calhost_plugin_vtable **vtable,
                         uint32_t *abi_version, calhost_plugin_instance **instance);

#endif /* CALHOST_RUNTIME_RACE_H */
