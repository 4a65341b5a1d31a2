/*
 * checker.h: what the conformance checks share inside a check's child: the
 * checker's state, its set-up by level, the table of the checks that run in
 * a child and the two that read the file (checks.c owns them; check.c runs
 * each in its own child and reports). Private to host/check.
 */
#ifndef CALHOST_CHECK_CHECKER_H
#define CALHOST_CHECK_CHECKER_H

#include <stddef.h>
#include <stdint.h>

#include "calhost/plugin.h"
#include "check.h"
#include "loader/loader.h"
#include "loader/module.h"
#include "runtime/devices.h"

typedef struct checker {
  const char *path;
  const check_options *o;
  int fd; /* the record pipe */
  loader_module *m;
  calhost_plugin_vtable vt;
  uint32_t abi, pmin, pmax;
  loader_services_hooks hooks;
  calhost_host_services svc;
  /* the plugin as the loader's record (record()): its services context is
   * the one svc is bound to (the plugin's set_error lands there), so that
   * runtime_binding_build_key takes the plugin's message from it */
  loader_plugin rec;
  calhost_plugin_instance *inst;
  calhost_workload w;
  calhost_target t;
  int64_t shape[16];
  int cpus[256];
  char msg[2048];
  const char *backend; /* the backend's name once identity passed (for the report) */
  /* a device backend's devices (listed at setup level 2): the checks' target
   * is device 0 when there is one, as calibrate's first device sweep */
  runtime_device_list devices;
  size_t device; /* the checks' device: its position in devices (the selection's first) */
  int device_backend;
} checker;

/* check_setup's answer for a device backend that lists no device (a skip:
 * c->msg says why). */
#define SETUP_NO_DEVICE 1

/* Sets up c (path, o and fd filled in) for a check of this level. level 0:
 * services only (the plugin's log messages go to fd as CHECK_LOG records);
 * 1: + module and negotiation; 2: + an instance (and, for a device backend,
 * its devices: the target is the selected device; SETUP_NO_DEVICE when it
 * lists none here). Returns 0, SETUP_NO_DEVICE, or -1 with c->msg. */
int check_setup(checker *c, int level);

/* A check that runs in a child: its name, the set-up level it needs and the
 * check itself (0 passed, -1 failed, reason or details in c->msg). */
typedef struct check_entry {
  const char *name;
  int level;
  int (*fn)(checker *c);
} check_entry;

/* Every check that runs in a child, in report order. */
extern const check_entry check_list[];
extern const size_t check_list_count;

/* The checks that read the file without running it: 0 passed, -1 failed,
 * the details or reason in msg. Discovery's owner and mode checks on the
 * file and its directories; only the entry point exported. */
int check_file_permissions(const char *path, char *msg, size_t cap);
int check_exported_symbols(const char *path, char *msg, size_t cap);

#endif /* CALHOST_CHECK_CHECKER_H */
