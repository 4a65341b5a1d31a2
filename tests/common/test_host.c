/*
 * test_host.c: the tests' minimal plugin host (see test_host.h).
 */
#include "test_host.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char test_host_error[512];

static void h_log(void *ctx, calhost_log_level level, const char *message) {
  (void)ctx;
  (void)level;
  (void)message;
}
static void h_set_error(void *ctx, const char *message) {
  (void)ctx;
  snprintf(test_host_error, sizeof test_host_error, "%s", message ? message : "");
}
static int h_is_cancelled(void *ctx) {
  (void)ctx;
  return 0;
}
static void h_progress(void *ctx, double fraction, const char *what) {
  (void)ctx;
  (void)fraction;
  (void)what;
}
static void *h_allocate(void *ctx, size_t size, size_t alignment) {
  void *p = NULL;
  (void)ctx;
  return posix_memalign(&p, alignment, size ? size : 1) == 0 ? p : NULL;
}
static void h_free(void *ctx, void *p) {
  (void)ctx;
  free(p);
}

const calhost_host_services test_host_services = {
    {CALHOST_STRUCT_HOST_SERVICES, 1, sizeof(calhost_host_services)},
    NULL,
    h_log,
    h_set_error,
    h_is_cancelled,
    h_progress,
    h_allocate,
    h_free};

int test_host_load(const char *path, uint32_t abi_min, uint32_t abi_max, test_host_plugin *p) {
  calhost_negotiate_request req = {
      {CALHOST_STRUCT_NEGOTIATE_REQUEST, 1, sizeof req}, abi_min, abi_max, &test_host_services};
  calhost_negotiate_reply rep;
  calhost_negotiate_fn fn;
  memset(p, 0, sizeof *p);
  test_host_error[0] = '\0';
  p->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!p->dl) {
    snprintf(test_host_error, sizeof test_host_error, "%s", dlerror());
    return -1;
  }
  fn = (calhost_negotiate_fn)dlsym(p->dl, CALHOST_PLUGIN_ENTRY_POINT);
  if (!fn) {
    snprintf(test_host_error, sizeof test_host_error, "%s: no %s", path,
             CALHOST_PLUGIN_ENTRY_POINT);
    goto fail;
  }
  memset(&rep, 0, sizeof rep);
  rep.header = (calhost_struct_header){CALHOST_STRUCT_NEGOTIATE_REPLY, 1, sizeof rep};
  if (fn(&req, &rep) != CALHOST_OK || !rep.vtable) {
    snprintf(test_host_error, sizeof test_host_error, "%s: negotiation failed", path);
    goto fail;
  }
  p->vt = rep.vtable;
  p->abi = rep.chosen_abi_version;
  if (!p->vt->create || p->vt->create(&test_host_services, NULL, 0, &p->inst) != CALHOST_OK) {
    if (!test_host_error[0])
      snprintf(test_host_error, sizeof test_host_error, "%s: create() failed", path);
    p->inst = NULL;
    return -1; /* p->dl and p->vt stay: the caller may look at the vtable */
  }
  return 0;
fail:
  dlclose(p->dl);
  memset(p, 0, sizeof *p);
  return -1;
}

void test_host_unload(test_host_plugin *p) {
  if (p->inst && p->vt && p->vt->destroy)
    p->vt->destroy(p->inst);
  if (p->dl)
    dlclose(p->dl);
  memset(p, 0, sizeof *p);
}
