/*
 * entries.h: the one rule for whether the host may call a vtable entry of a
 * plugin, by the entry's since-version (negotiate.c's table) and pointer.
 * Depends only on the plugin ABI, so the measurement engine can use it.
 * Internal to the host.
 */
#ifndef CALHOST_LOADER_ENTRIES_H
#define CALHOST_LOADER_ENTRIES_H

#include <stddef.h>
#include <stdint.h>

#include "calhost/plugin.h"

/* Returns 1 when the entry at byte offset `offset` of *vt may be called
 * under the negotiated ABI version abi_version: the entry is one the host
 * knows, it was introduced in a version <= abi_version, the plugin's struct
 * (vt->struct_size) contains it, and its pointer is not NULL; else 0. Use
 * through CALHOST_VTABLE_CALLABLE before calling any OPTIONAL entry
 * (REQUIRED ones are checked at negotiation). vt NULL: 0. */
int loader_vtable_callable(const calhost_plugin_vtable *vt, uint32_t abi_version, size_t offset);

#define CALHOST_VTABLE_CALLABLE(vt, abi_version, field)                                            \
  loader_vtable_callable((vt), (abi_version), offsetof(calhost_plugin_vtable, field))

#endif /* CALHOST_LOADER_ENTRIES_H */
