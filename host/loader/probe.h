/*
 * probe.h: probing a plugin in a forked child (internal to the loader).
 * The child dlopens the file, negotiates, and reports the plugin's identity
 * over a pipe; the parent turns a crash, an early exit or a hang into a
 * reason, so a plugin that misbehaves while loading never runs in the host.
 */
#ifndef CALHOST_LOADER_PROBE_H
#define CALHOST_LOADER_PROBE_H

#include "loader.h"

typedef struct calhost_probe_result {
  int ok;            /* 1: negotiated; identity below is filled */
  char reason[1024]; /* why not, one line */
  char backend[128];
  char implementation_version[160];
  char description[1100];
  char **operators; /* operator_count strings (malloc'd) */
  size_t operator_count;
  uint32_t chosen, plugin_min, plugin_max;
} calhost_probe_result;

/* Probes path in a child (timeout_seconds <= 0: 10 s). Always fills *r;
 * free with calhost_probe_result_free. */
CALHOST_LOADER_HIDDEN void calhost_probe(const char *path, uint32_t host_min, uint32_t host_max,
                                         double timeout_seconds,
                                         const calhost_services_hooks *hooks,
                                         calhost_probe_result *r);

/* Frees what *r owns. */
CALHOST_LOADER_HIDDEN void calhost_probe_result_free(calhost_probe_result *r);

/* Runs fn(arg, fd) in a forked child with stdout sent to /dev/null (or, when
 * capture_fd >= 0, to that fd), crash signals reset to their defaults and
 * `fd` the write end of a pipe; reads what the child writes (at most cap-1
 * bytes, NUL-terminated into buf) until it exits or timeout_seconds pass
 * (then it is killed). Returns 0 when the child exited with status 0, else
 * -1 with a description ("crashed (signal 11 SIGSEGV)", "timed out after 10
 * s", "exited with status 3") in why. Shared by the probe and the
 * conformance checker. */
CALHOST_LOADER_HIDDEN int calhost_run_in_child(void (*fn)(void *arg, int fd), void *arg,
                                               double timeout_seconds, int capture_fd, char *buf,
                                               size_t cap, char *why, size_t why_cap);

#endif /* CALHOST_LOADER_PROBE_H */
