/*
 * clock.h: the host's one monotonic clock, for deadlines and timings
 * (isolate's time limits, the sweep's timings and budgets). Internal to the
 * host (POSIX: CLOCK_MONOTONIC).
 */
#ifndef CALHOST_BASE_CLOCK_H
#define CALHOST_BASE_CLOCK_H

/* The current CLOCK_MONOTONIC time in seconds. */
double base_monotonic_seconds(void);

#endif
