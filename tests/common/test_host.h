/*
 * test_host.h: the one minimal plugin host of the tests, benchmarks and
 * fuzz targets that drive a plugin in-process without the loader (the
 * MatMul plugin tests, gemm-bench, the policy-validator fuzz target): a
 * host-services table (logs dropped, the last set_error kept, never
 * cancelled, aligned allocation) and loading one plugin file (dlopen,
 * negotiation over an ABI range, create without settings). The loader's own
 * tests use the real loader instead (host/loader).
 */
#ifndef CALHOST_TEST_HOST_H
#define CALHOST_TEST_HOST_H

#include <stdint.h>

#include <calhost/plugin.h>

/* The services table handed to plugins (context NULL). */
extern const calhost_host_services test_host_services;

/* The last message a plugin passed to set_error, or the reason the last
 * test_host_load failed ("" when none). Writable: a caller may clear it or
 * put its own message there. */
extern char test_host_error[512];

/* One plugin loaded in this process. */
typedef struct test_host_plugin {
  void *dl;
  const calhost_plugin_vtable *vt;
  uint32_t abi; /* the negotiated ABI version */
  calhost_plugin_instance *inst;
} test_host_plugin;

/* Loads the plugin file at path: dlopen, negotiation offering
 * [abi_min, abi_max], create with no settings. Returns 0, or -1 with the
 * reason in test_host_error (the file's dlerror, no entry point, refused
 * negotiation, create failure). After a create failure p->dl and p->vt are
 * kept (test_host_unload releases them); otherwise *p is zeroed. */
int test_host_load(const char *path, uint32_t abi_min, uint32_t abi_max, test_host_plugin *p);

/* Destroys the instance and closes the file (either may be missing). */
void test_host_unload(test_host_plugin *p);

#endif
