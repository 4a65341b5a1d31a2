/*
 * check.h: the conformance checker behind `calhost plugin check PATH`
 * (internal to the host). It checks what the plugin guide requires and what
 * discovery enforces: the file and directory permissions, that only the
 * entry point is exported, negotiation and identity, the required entries,
 * keys, policies and the validator, a described parameter space (ABI 2), a
 * tiny sweep through the measurement engine, and that the plugin writes
 * nothing to stdout or stderr. Every
 * check that runs plugin code runs in its own isolated child (isolate.h).
 */
#ifndef CALHOST_CHECK_H
#define CALHOST_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "calhost/plugin.h"

typedef struct check_options {
  double timeout_seconds; /* per check, default 30 */
  /* Print details of passing checks too, and the plugin's log messages of
   * every level (else those at loader_log_level_default() and above). */
  int verbose;
  /* Workload for the checks; NULL/0: a representative one for the plugin's
   * first operator (MatMul/Gemm 32,32,32; Transpose 64,64; Conv
   * 1,8,16,16; anything else 4096), float32. */
  const char *operator_name;
  const char *dtype;
  const int64_t *shape;
  size_t shape_rank;
  uint32_t thread_count; /* the target's thread count (CPUs 0..N-1); 0: 1 */
  /* The instance's settings (`--setting KEY=VALUE`: what a [plugin NAME]
   * section would give create()), borrowed; 0: none. Every create() of the
   * checks gets them. */
  const calhost_property *settings;
  size_t setting_count;
  /* The host's keys of a [plugin NAME] section, never passed to create()
   * (`--setting devices=...` and `--setting time_budget=...` are these, as
   * calibrate reads the section): devices: the selection (indices or
   * identities, config_value_devices' items; 0: all): a device backend's
   * checks run on the first listed device it selects, and an item that
   * names no device fails the setup with the reason, as calibrate fails the
   * plugin; a CPU backend ignores it, as calibrate does.
   * time_budget_seconds (> 0) bounds the sample sweep as the plugin's time
   * budget bounds its sweeps. */
  const char *const *devices;
  size_t device_count;
  double time_budget_seconds;
  /* The report's form (`--json`, `--quiet`): json: one JSON object instead
   * of the text lines; quiet (text only): the FAIL lines alone. */
  int json;
  int quiet;
} check_options;

/* Fills *o with the defaults. */
void check_options_init(check_options *o);

/* Runs every conformance check on the plugin file at path (a crash or hang
 * is a FAIL with the signal or the timeout, never a crash of the caller),
 * printing "checking PATH", "PASS name" / "FAIL name: reason" lines and the
 * plugin's log lines to out, then "N of M checks passed"; with o->quiet
 * only the FAIL lines. With o->json it prints one JSON object instead
 * (base/json.h's writer): {"plugin": PATH, "backend": the backend's name
 * (null when identity failed), "passed": N, "failed": N, "skipped": N,
 * "checks": [{"name", "status": "pass", "fail" or "skip", "message":
 * details or reason, "logs": [{"level", "message"}]}]} (a check not run
 * is a "fail" whose message starts "not run: "; a device backend with no
 * device here has the checks that need an instance skipped, "SKIP name:
 * BACKEND has no device on this machine", and the summary line counts them).
 * Returns 0 when all passed or were skipped, 1 when any
 * failed, 2 (JSON only, said on stderr) when out of memory. Forks: call
 * before starting threads. */
int check_plugin_check(const char *path, const check_options *o, FILE *out);

#endif /* CALHOST_CHECK_H */
