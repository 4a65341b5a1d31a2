/*
 * clock.c: the host's one monotonic clock (clock.h).
 */
#define _GNU_SOURCE
#include "clock.h"

#include <time.h>

double base_monotonic_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
