/*
 * race_common.h: the scaffolding the race tests share (race_selection,
 * race_device, race_model; tests/race/CMakeLists.txt builds race_common.c
 * into each). It owns: the test program's scratch directory and the paths
 * in it (calhost.ini, store.txt, pair.onnx), the way a test runs
 * bin/calhost on that configuration (through tests/common/harness.h),
 * writing the configuration, the model of tests/race/make_model.py,
 * opening the runtime on it, and rewriting ("rigging") the races recorded
 * in a store. What each test checks, its configuration's sections and its
 * reading of the races stay in the test.
 */
#ifndef CALHOST_TESTS_RACE_COMMON_H
#define CALHOST_TESTS_RACE_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "calhost/calstore.h"
#include "calhost/runtime.h"
#include "runtime/race.h"

/* Set by race_setup: the build tree (CALHOST_BUILD_DIR, else "."), the
 * scratch directory, and in it the configuration, the store and the model
 * file (written by race_make_model). */
extern char race_build[1024];
extern const char *race_dir;
extern char race_cfg[512], race_store[512], race_model[512];

/* A group setup's common part: the scratch directory
 * /tmp/calhost-TAG-XXXXXX and the paths in it. env (NULL-terminated
 * "NAME=VALUE" strings, NULL: none) is added to every race_run; its
 * strings are read at each run, so they may be filled after this returns.
 * Returns 0, or -1 when the directory cannot be made. */
int race_setup(const char *tag, const char *const *env);

/* The group teardown: removes the scratch directory and everything in it;
 * 0, or -1. */
int race_teardown(void **state);

/* Runs bin/calhost --config race_cfg with args (NULL-terminated) through
 * the tests' harness: working directory and XDG_CACHE_HOME the scratch
 * directory, a 600 s limit, race_setup's env. *out receives stdout; *err
 * stderr, or, when err is NULL, stderr goes to *out (as 2>&1). Returns the
 * exit status; the caller frees the output. */
int race_run(char **out, char **err, const char *const *args);

#define RUN(out, err, ...) race_run(out, err, (const char *const[]){__VA_ARGS__, NULL})

/* Writes race_cfg: "[store]\npath = race_store\n" followed by fmt
 * formatted (printf); 0, or -1 when it cannot be written. */
int race_write_config(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Writes the model of tests/race/make_model.py (CALHOST_SOURCE_DIR, else
 * ".") to race_model with /usr/bin/python3; 0, or -1 when that failed. */
int race_make_model(void);

/* Opens the runtime on race_cfg (on device `device`, NULL: the CPU),
 * and, when model is not NULL, adds race_model and sets *model to it.
 * Fails the test when either does not answer CALHOST_RUNTIME_OK. The
 * caller closes it (calhost_runtime_close). */
calhost_runtime *race_runtime_open(const char *device, const calhost_runtime_model **model);

/* How race_rig rewrites one profile p: fills *r (zeroed, default_us NAN)
 * with the race to record, given old, the race p carries (zeroed when
 * none); may change q (p's copy, to be put) other than its measurements.
 * Returns 1 to put q, 0 to leave it out. */
typedef int (*race_rig_fn)(void *user, const calstore_profile *p, const runtime_race *old,
                           runtime_race *r, calstore_profile *q);

/* Reads every exact profile of race_store (when raced_only, only those
 * that carry a race) and puts, in one batch into the store at dest
 * (race_store itself, or another file, created), a copy whose race
 * measurements are replaced by the race fn fills in (the others kept).
 * Returns how many it put; fails the test on a store error. */
size_t race_rig(const char *dest, int raced_only, race_rig_fn fn, void *user);

/* race_rig of race_store's raced profiles: `first` ranks first (latency
 * 10 us), every other backend second (30 us) of 2 entrants, defaults 40
 * us, each keeping its race's id; rounds nonzero: each also records that
 * many rounds and the second as dropped (the racing rule's record).
 * Returns how many profiles it rewrote. */
size_t race_rig_first(const char *first, uint32_t rounds);

#endif /* CALHOST_TESTS_RACE_COMMON_H */
