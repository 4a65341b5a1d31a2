/*
 * race.h: calibrate's race phase (race.c): after the sweeps, the backends
 * that calibrated one structure on this machine are timed side by side and
 * the outcome is recorded in their profiles (runtime/race.h). Internal to
 * host/calibrate.
 */
#ifndef CALHOST_CALIBRATE_RACE_H
#define CALHOST_CALIBRATE_RACE_H

#include <stdio.h>

#include "run.h"

/* Races every structure (workload x CPU target, or workload x device)
 * with a stored exact profile of two or more backends among the run's
 * results (a device: of two or more device backends on that device), in
 * one child, with the racing rule (sweep/race.h),
 * unless they already share a race and nothing of them is new; stores the
 * outcome in one batch (a failure is a warning). Keeps the lines that
 * cal_race_print prints. */
void cal_race_run(cal_run *r);

/* The race lines ("race W threads=N: A 1 ms x2 (default 3 ms x1 dropped),
 * B 1.2 ms x2 dropped (...) -> A", "race W device NAME: ...", a tie:
 * "-> A (tie of 2 within the noise: the lower median)")
 * and the phase's time, on o; nothing when no race ran. */
void cal_race_print(const cal_run *r, FILE *o);

/* The JSON members "races": [{workload, threads, race_id (null: not
 * settled), device (identity, null: the CPU), entrants: [{backend, policy,
 * median_us, default_median_us, rank (0: not ranked), rounds, dropped,
 * default_rounds, default_dropped, tied (0: no tie), error}]}] and
 * "race_seconds", each followed by a
 * comma (calibrate --json, before its failures). */
void cal_race_json(const cal_run *r, FILE *o);

/* Frees what the phase kept. */
void cal_race_free(void);

#endif /* CALHOST_CALIBRATE_RACE_H */
