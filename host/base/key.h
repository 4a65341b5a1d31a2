/*
 * key.h: a plugin's built key (calhost_built_key, valid only until the
 * plugin's next call) as an owned copy, and the host's one rule for
 * comparing a key built again with an earlier one. The calibration records
 * carry such a copy (sweep/records.h: sweep_record_key is this type), the
 * binding's build-twice check and plugin check compare with it. Here, below
 * the binding, so that the deployment runtime links no engine. Part of the
 * base layer: libc and the plugin ABI's types only.
 */
#ifndef CALHOST_BASE_KEY_H
#define CALHOST_BASE_KEY_H

#include <stddef.h>
#include <stdint.h>

#include "calhost/plugin.h"

/* A key as the plugin built it, owned (strings malloc'd). */
typedef struct base_key {
  char *model_digest;
  char *processor;
  uint32_t thread_count;
  calhost_property *structure; /* names and values malloc'd */
  size_t structure_count;
} base_key;

/* Frees what *k owns and empties it. NULL-safe. */
void base_key_free(base_key *k);

/* Copies a key as the plugin built it (valid only until its next call)
 * into *out (owned; free with base_key_free). Returns 0, or -1 when
 * out of memory (*out then empty). */
int base_key_copy(const calhost_built_key *k, base_key *out);

/* Whether the key b, built again for the same workload and target, differs
 * from the copy a of an earlier build (structure properties compared by
 * name, in any order). On a difference, returns 1 with the first one in why
 * ("processor '...x', then '...y'"); else 0. A key must be a function of
 * the workload and the target: the host's one comparison rule, behind
 * runtime_binding_build_key's build-twice check (calibrate, the runtime,
 * plugin check) and plugin check's two-instance check. */
int base_key_differs(const base_key *a, const calhost_built_key *b, char *why, size_t cap);

#endif /* CALHOST_BASE_KEY_H */
