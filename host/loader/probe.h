/*
 * probe.h: probing a plugin in an isolated child (isolate.h; internal to
 * the loader). The child dlopens the file, negotiates, and reports the
 * plugin's identity as framed records; a crash, an early exit or a hang
 * becomes the reason, so a plugin that misbehaves while loading never runs
 * in the host.
 */
#ifndef CALHOST_LOADER_PROBE_H
#define CALHOST_LOADER_PROBE_H

#include "loader.h"

typedef struct loader_probe_result {
  int ok;            /* 1: negotiated; identity below is filled */
  char reason[1024]; /* why not, one line */
  char backend[128];
  char implementation_version[160];
  char description[1100];
  char **operators; /* operator_count strings (malloc'd) */
  size_t operator_count;
  uint32_t chosen, plugin_min, plugin_max;
} loader_probe_result;

/* Probes path in a child (timeout_seconds <= 0: 10 s). Always fills *r;
 * free with loader_probe_result_free. */
CALHOST_LOADER_HIDDEN void loader_probe(const char *path, uint32_t host_min, uint32_t host_max,
                                        double timeout_seconds, const loader_services_hooks *hooks,
                                        loader_probe_result *r);

/* Frees what *r owns. */
CALHOST_LOADER_HIDDEN void loader_probe_result_free(loader_probe_result *r);

#endif /* CALHOST_LOADER_PROBE_H */
