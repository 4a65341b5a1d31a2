/*
 * batch.c: batches (transactions): changes are checked and queued as
 * operations when added, then applied in order by one cs_commit (one lock,
 * one reload check, one write). All or nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct calstore_batch {
  calstore *store;
  cs_op *ops;
  size_t n, cap;
};

calstore_status calstore_batch_begin(calstore *store, calstore_batch **out, calstore_error *err) {
  if (!out)
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL, "out is NULL");
  *out = NULL;
  if (!store)
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL, "store is NULL");
  calstore_batch *b = calloc(1, sizeof *b);
  if (!b)
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, NULL, "out of memory");
  b->store = store;
  *out = b;
  return CALSTORE_OK;
}

/* Queues the op that make (the cs_make_* that filled op) built, taking it:
 * if_absent and stored as calstore_batch_store_if_absent's. Releases the op
 * on OOM. */
static calstore_status push(calstore_batch *b, calstore_status made, cs_op *op, int if_absent,
                            int *stored, calstore_error *err) {
  if (made != CALSTORE_OK)
    return made;
  cs_op *ops = cs_grow(b->ops, b->n + 1, &b->cap, sizeof *ops, 16);
  if (!ops) {
    cs_op_release(op);
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, NULL, "out of memory");
  }
  b->ops = ops;
  op->if_absent = if_absent;
  op->stored = stored;
  b->ops[b->n++] = *op;
  return CALSTORE_OK;
}

/* The put of calstore_batch_store, _install_override and _store_if_absent. */
static calstore_status push_put(calstore_batch *batch, calstore_source source,
                                const calstore_key *key, const calstore_measurement *m, size_t n,
                                calstore_serializer_fn serializer, void *serializer_user,
                                calstore_validator_fn validator, void *validator_user,
                                int if_absent, int *stored, calstore_error *err) {
  if (!batch)
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL, "batch is NULL");
  cs_op op;
  calstore_status made = cs_make_put(key, source, m, n, serializer, serializer_user, validator,
                                     validator_user, &op, err);
  return push(batch, made, &op, if_absent, stored, err);
}

calstore_status calstore_batch_store(calstore_batch *batch, const calstore_key *key,
                                     const calstore_measurement *measurements,
                                     size_t measurement_count, calstore_serializer_fn serializer,
                                     void *serializer_user, calstore_validator_fn validator,
                                     void *validator_user, calstore_error *err) {
  return push_put(batch, CALSTORE_SOURCE_CALIBRATED, key, measurements, measurement_count,
                  serializer, serializer_user, validator, validator_user, 0, NULL, err);
}

calstore_status calstore_batch_install_override(
    calstore_batch *batch, const calstore_key *key, const calstore_measurement *measurements,
    size_t measurement_count, calstore_serializer_fn serializer, void *serializer_user,
    calstore_validator_fn validator, void *validator_user, calstore_error *err) {
  return push_put(batch, CALSTORE_SOURCE_OVERRIDE, key, measurements, measurement_count, serializer,
                  serializer_user, validator, validator_user, 0, NULL, err);
}

calstore_status calstore_batch_store_if_absent(
    calstore_batch *batch, const calstore_key *key, const calstore_measurement *measurements,
    size_t measurement_count, calstore_serializer_fn serializer, void *serializer_user,
    calstore_validator_fn validator, void *validator_user, int *stored, calstore_error *err) {
  if (stored)
    *stored = 0;
  return push_put(batch, CALSTORE_SOURCE_CALIBRATED, key, measurements, measurement_count,
                  serializer, serializer_user, validator, validator_user, 1, stored, err);
}

typedef struct fixed_policy {
  const char *policy;
  size_t length;
} fixed_policy;

static const char *give_policy(void *user, size_t *length, char *err, size_t cap) {
  const fixed_policy *f = user;
  (void)err;
  (void)cap;
  *length = f->length;
  return f->policy;
}

/* The put of calstore_batch_put and _put_if_absent: the profile as it is. */
static calstore_status push_profile(calstore_batch *batch, const calstore_profile *profile,
                                    int if_absent, int *stored, calstore_error *err) {
  if (!batch || !profile)
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL, "batch or profile is NULL");
  if (profile->source != CALSTORE_SOURCE_CALIBRATED && profile->source != CALSTORE_SOURCE_OVERRIDE)
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL, "profile source %d is unknown",
                   (int)profile->source);
  fixed_policy f = {profile->policy, profile->policy
                                         ? (profile->policy_length ? profile->policy_length
                                                                   : strlen(profile->policy))
                                         : 0};
  return push_put(batch, profile->source, &profile->key, profile->measurements,
                  profile->measurement_count, give_policy, &f, NULL, NULL, if_absent, stored, err);
}

calstore_status calstore_batch_put(calstore_batch *batch, const calstore_profile *profile,
                                   calstore_error *err) {
  return push_profile(batch, profile, 0, NULL, err);
}

calstore_status calstore_batch_put_if_absent(calstore_batch *batch, const calstore_profile *profile,
                                             int *stored, calstore_error *err) {
  if (stored)
    *stored = 0;
  return push_profile(batch, profile, 1, stored, err);
}

calstore_status calstore_batch_clear_override(calstore_batch *batch, const calstore_key *key,
                                              calstore_error *err) {
  if (!batch)
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL, "batch is NULL");
  cs_op op;
  return push(batch, cs_make_clear(key, &op, err), &op, 0, NULL, err);
}

calstore_status calstore_batch_invalidate(calstore_batch *batch, const char *backend,
                                          const char *implementation, calstore_error *err) {
  if (!batch)
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL, "batch is NULL");
  cs_op op;
  return push(batch, cs_make_invalidate(backend, implementation, &op, err), &op, 0, NULL, err);
}

size_t calstore_batch_size(const calstore_batch *batch) {
  return batch ? batch->n : 0;
}

void calstore_batch_abort(calstore_batch **batch) {
  if (!batch || !*batch)
    return;
  calstore_batch *b = *batch;
  for (size_t i = 0; i < b->n; i++)
    cs_op_release(&b->ops[i]);
  free(b->ops);
  free(b);
  *batch = NULL;
}

calstore_status calstore_batch_commit_applied(calstore_batch **batch, int *applied,
                                              calstore_error *err) {
  if (applied)
    *applied = 0;
  if (!batch || !*batch)
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL, "batch is NULL");
  calstore_batch *b = *batch;
  calstore_status st = b->n ? cs_commit(b->store, b->ops, b->n, err) : CALSTORE_OK;
  /* a conditional put learns whether it was written (cs_commit leaves
   * affected 0 when the change did not take effect); a failure that keeps
   * an affected op is the directory sync after the rename: applied */
  int any = 0;
  for (size_t i = 0; i < b->n; i++) {
    if (b->ops[i].stored)
      *b->ops[i].stored = b->ops[i].affected != 0;
    any |= b->ops[i].affected != 0;
  }
  if (applied)
    *applied = st == CALSTORE_OK || any;
  calstore_batch_abort(batch);
  return st;
}

calstore_status calstore_batch_commit(calstore_batch **batch, calstore_error *err) {
  return calstore_batch_commit_applied(batch, NULL, err);
}
