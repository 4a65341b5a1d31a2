/*
 * warm.h: the warm start of a calibration sweep from what the fleet
 * already knows (warm.c): the store's policies of the same backend and
 * kernel found on other devices or processors, which the sweep hands to
 * the search as its first configurations (sweep_request.warm_policies).
 * Internal to host/calibrate.
 */
#ifndef CALHOST_CALIBRATE_WARM_H
#define CALHOST_CALIBRATE_WARM_H

#include <stddef.h>

#include "calhost/calstore.h"
#include "sweep/records.h"

/* The most policies a warm start takes from the store (the search takes
 * at most SEARCH_WARM_MAX of them). */
#define CAL_WARM_MAX 16

/* A warm start's policies, fastest recorded median first (owned). */
typedef struct cal_warm {
  char **policies;
  size_t count;
} cal_warm;

/* Collects into *out (zeroed first) the policies of store's calibrated
 * and override profiles of `backend` and operator `op` that were found
 * elsewhere for the same kernel as key: exact profiles of the same model
 * digest on another processor (another device), and portable profiles of
 * the same structure; in the order of their median_latency measurement
 * (a profile without one last), each policy once, at most CAL_WARM_MAX.
 * The plugin validates them in the sweep (sweep_request.warm_policies).
 * store NULL: none. Returns 0, or -1 when out of memory (*out empty). */
int cal_warm_collect(calstore *store, const char *backend, const char *op,
                     const sweep_record_key *key, cal_warm *out);

/* Frees what *w owns and zeroes it. NULL-safe. */
void cal_warm_free(cal_warm *w);

#endif /* CALHOST_CALIBRATE_WARM_H */
