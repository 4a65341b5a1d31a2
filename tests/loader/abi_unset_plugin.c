/*
 * abi_unset_plugin.c: a test plugin whose vtable leaves abi_version at 0 and
 * negotiates with calhost_negotiate_default, as a first plugin that forgot
 * the field would: it reports the empty range 1..0 and CALHOST_ABI_MISMATCH.
 * Built by tests/loader (never installed) for test_abi_message.c; with
 * -DABI_VERSION=N it declares ABI N instead (99: newer than any host).
 */
#include "calhost/plugin.h"

#ifndef ABI_VERSION
#define ABI_VERSION 0
#endif
#ifndef BACKEND
#define BACKEND "test_abi_unset"
#endif

static const char *const operators[] = {"ReduceSum", NULL};

/* Negotiation fails (or, for a valid range, the loader reports the missing
 * entries) before any function is called: identity alone. */
static const calhost_plugin_vtable vtable = {
    .struct_size = sizeof(calhost_plugin_vtable),
    .abi_version = ABI_VERSION,
    .backend_name = BACKEND,
    .implementation_version = "1",
    .operators = operators,
    .description = "negotiation test plugin",
};

/* The usual one-line entry point. */
CALHOST_PLUGIN_EXPORT calhost_status
calhost_plugin_negotiate(const calhost_negotiate_request *request, calhost_negotiate_reply *reply) {
  return calhost_negotiate_default(request, reply, &vtable);
}
