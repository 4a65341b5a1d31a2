/*
 * store.c: the calstore handle and its commit path.
 *
 * Readers take the handle's rwlock shared and see an immutable snapshot
 * (cs_set). Every change is a list of operations (cs_op) applied by
 * cs_commit: process-local commit lock -> inter-process lock on
 * `<path>.lock` (path: the real file, a symbolic link given at open is
 * resolved there) -> reload the file unless its identity (dev, inode, size,
 * mtime, ctime) is what we last loaded or wrote -> apply the operations to a
 * copy (conditional puts decide here, against the reloaded file) -> write
 * `<path>.tmp` (the store's own temporary name: under the lock a stale one
 * is an interrupted writer's and is replaced), fsync, rename over the file
 * keeping its mode and owner, fsync the directory -> swap the copy in under
 * the write lock. Any failure leaves file and snapshot as they were (all or
 * nothing). A store file the writer may not write is refused, not replaced
 * (cs_plat_replace). Clears and invalidations alone, with no file on disk,
 * change nothing: they create neither directory nor lock file.
 *
 * A writer that finds the file on disk malformed or of an unknown version
 * refuses the commit with CALSTORE_MALFORMED / CALSTORE_UNSUPPORTED_VERSION
 * and the file's line: the file is never overwritten, so nothing in it is
 * lost (repair or remove it, then retry).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "platform.h"

struct calstore {
  char *path, *lock_path, *tmp_path;
  int persistence;
  int threads;              /* the parallel loader may start threads */
  uint32_t lock_timeout_ms; /* see calstore_options */
  cs_rwlock rw;             /* guards snap */
  cs_rwlock commit;         /* taken exclusively: serializes commits, reloads and disk_id */
  cs_set *snap;             /* the live snapshot */
  cs_file_id disk;          /* the file version snap reflects */
  int disk_known;           /* disk is valid (the file existed and was loaded or written) */
  intptr_t disk_pin;        /* holds disk's version (see cs_plat_unpin), or CS_NO_PIN */
};

#define CS_STR2(x) #x
#define CS_STR(x) CS_STR2(x)

const char *calstore_version(uint32_t *number) {
  if (number)
    *number = CALSTORE_VERSION_NUMBER;
  return CS_STR(CALSTORE_VERSION_MAJOR) "." CS_STR(CALSTORE_VERSION_MINOR) "." CS_STR(
      CALSTORE_VERSION_PATCH);
}

/* The struct_size that covers field of calstore_options. */
#define CS_OPTIONS_COVER(field)                                                                    \
  (offsetof(calstore_options, field) + sizeof(((calstore_options *)0)->field))

void calstore_options_init(calstore_options *options) {
  if (!options)
    return;
  memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
  options->path = NULL;
  options->persistence_enabled = 1;
  options->lock_timeout_ms = CALSTORE_LOCK_TIMEOUT_DEFAULT_MS;
  options->flags = 0;
}

calstore_status calstore_default_path(char *buf, size_t capacity) {
  if (!buf || !capacity)
    return CALSTORE_INVALID_ARGUMENT;
  return cs_plat_default_path(buf, capacity);
}

static char *concat(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  char *r = malloc(la + lb + 1);
  if (r) {
    memcpy(r, a, la);
    memcpy(r + la, b, lb + 1);
  }
  return r;
}

/* The store now reflects the file version id, held by pin (exists: the file
 * existed); takes over pin. Without a pin, or without a file, the version is
 * unknown and the next commit reloads. */
static void know_disk(calstore *s, const cs_file_id *id, int exists, intptr_t pin) {
  cs_plat_unpin(s->disk_pin);
  s->disk = *id;
  s->disk_known = exists && pin != CS_NO_PIN;
  s->disk_pin = s->disk_known ? pin : CS_NO_PIN;
  if (!s->disk_known)
    cs_plat_unpin(pin);
}

/* The file version is unknown: the next commit reloads. */
static void forget_disk(calstore *s) {
  cs_plat_unpin(s->disk_pin);
  s->disk_pin = CS_NO_PIN;
  s->disk_known = 0;
}

static int same_id(const cs_file_id *a, const cs_file_id *b) {
  return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime_ns == b->mtime_ns &&
         a->ctime_ns == b->ctime_ns;
}

/* Reads and parses path into a new set. NOT_FOUND gives an empty set.
 * On success *pin holds the version read (CS_NO_PIN when there was no
 * file); the caller takes it over. */
static calstore_status load_file(const char *path, int threads, cs_set **out, cs_file_id *id,
                                 intptr_t *pin, int *exists, calstore_error *err) {
  char *data;
  size_t len;
  *out = NULL;
  *exists = 0;
  calstore_status st = cs_plat_read_file(path, &data, &len, id, pin, err);
  if (st == CALSTORE_NOT_FOUND) {
    *out = cs_set_new();
    return *out ? CALSTORE_OK : cs_fail(err, CALSTORE_NO_MEMORY, 0, path, "out of memory");
  }
  if (st != CALSTORE_OK)
    return st;
  *exists = 1;
  cs_set *set = cs_set_new();
  cs_blob *blob = set ? cs_blob_new(data) : NULL; /* canonical records keep their text in it */
  if (!blob) {
    if (!set)
      free(data);
    cs_set_free(set);
    cs_plat_unpin(*pin);
    *pin = CS_NO_PIN;
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, path, "out of memory");
  }
  calstore_error perr = {0};
  st = cs_parse(data, len, threads, set, blob, NULL, NULL, &perr);
  cs_blob_unref(blob);
  if (st != CALSTORE_OK) {
    cs_set_free(set);
    cs_plat_unpin(*pin);
    *pin = CS_NO_PIN;
    return cs_fail(err, st, perr.line, path, "%s: %s", path, perr.message);
  }
  *out = set;
  return CALSTORE_OK;
}

calstore_status calstore_open(const calstore_options *options, calstore **out,
                              calstore_error *err) {
  char def[4096];
  if (!out)
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL, "calstore_open: out is NULL");
  *out = NULL;
  calstore_options o;
  calstore_options_init(&o);
  if (options) {
    /* the fields of the first version end with persistence_enabled */
    if (options->struct_size < CS_OPTIONS_COVER(persistence_enabled))
      return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL,
                     "calstore_open: options not initialised (use calstore_options_init)");
    o.path = options->path;
    o.persistence_enabled = options->persistence_enabled;
    if (options->struct_size >= CS_OPTIONS_COVER(lock_timeout_ms))
      o.lock_timeout_ms = options->lock_timeout_ms;
    if (options->struct_size >= CS_OPTIONS_COVER(flags))
      o.flags = options->flags;
  }
  const char *path = o.path;
  if (!path) {
    if (cs_plat_default_path(def, sizeof def) != CALSTORE_OK)
      return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL,
                     "no store path given and no default (" CS_PLAT_DEFAULT_BASE " unset)");
    path = def;
  }
  if (!path[0])
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL, "the store path is empty");
  calstore *s = calloc(1, sizeof *s);
  if (!s)
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, path, "out of memory");
  s->disk_pin = CS_NO_PIN;
  s->persistence = o.persistence_enabled != 0;
  s->threads = !(o.flags & CALSTORE_OPEN_NO_THREADS);
  s->lock_timeout_ms = o.lock_timeout_ms;
  if (s->persistence) {
    /* a symbolic link is resolved once: the store lives next to the real
     * file (its lock, its temporary file, the rename) */
    if (cs_plat_resolve(path, &s->path, NULL) != CALSTORE_OK)
      s->path = strdup(path); /* a link loop: the load below reports it */
  } else {
    s->path = strdup(path);
  }
  s->lock_path = s->path ? concat(s->path, ".lock") : NULL;
  s->tmp_path = s->path ? concat(s->path, ".tmp") : NULL;
  s->snap = cs_set_new();
  const char *why = NULL;
  calstore_status st = CALSTORE_NO_MEMORY;
  calstore_error name_err = {0};
  if (!s->path || !s->lock_path || !s->tmp_path || !s->snap)
    why = "out of memory";
  else if (s->persistence &&
           (st = cs_plat_check_names(s->path, s->lock_path, s->tmp_path, &name_err)) != CALSTORE_OK)
    why = name_err.message; /* refused up front: no commit could ever write it */
  else if (cs_rwlock_init(&s->rw) != 0)
    why = "cannot create a lock";
  else if (cs_rwlock_init(&s->commit) != 0) {
    cs_rwlock_destroy(&s->rw);
    why = "cannot create a lock";
  }
  if (why) {
    cs_set_free(s->snap);
    free(s->path);
    free(s->lock_path);
    free(s->tmp_path);
    free(s);
    return cs_fail(err, st != CALSTORE_OK ? st : CALSTORE_NO_MEMORY, 0, path, "%s", why);
  }
  *out = s;
  if (!s->persistence)
    return CALSTORE_OK;
  return calstore_reload(s, err);
}

void calstore_close(calstore **store) {
  if (!store || !*store)
    return;
  calstore *s = *store;
  cs_set_free(s->snap);
  cs_plat_unpin(s->disk_pin);
  cs_rwlock_destroy(&s->rw);
  cs_rwlock_destroy(&s->commit);
  free(s->path);
  free(s->lock_path);
  free(s->tmp_path);
  free(s);
  *store = NULL;
}

const char *calstore_path(const calstore *store) {
  return store ? store->path : NULL;
}

/* Swaps in a new snapshot; frees the old one outside the lock. */
static void swap_snapshot(calstore *s, cs_set *next) {
  cs_rwlock_lock(&s->rw, CS_EXCLUSIVE);
  cs_set *old = s->snap;
  s->snap = next;
  cs_rwlock_unlock(&s->rw, CS_EXCLUSIVE);
  cs_set_free(old);
}

calstore_status calstore_reload(calstore *store, calstore_error *err) {
  if (!store)
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL, "store is NULL");
  if (!store->persistence)
    return cs_fail(err, CALSTORE_DISABLED, 0, store->path, "persistence is disabled");
  cs_rwlock_lock(&store->commit, CS_EXCLUSIVE);
  cs_set *next;
  cs_file_id id = {0};
  intptr_t pin;
  int exists;
  calstore_status st = load_file(store->path, store->threads, &next, &id, &pin, &exists, err);
  if (st == CALSTORE_OK) {
    know_disk(store, &id, exists, pin);
    swap_snapshot(store, next);
  }
  cs_rwlock_unlock(&store->commit, CS_EXCLUSIVE);
  return st;
}

const cs_set *cs_store_read_begin(calstore *store) {
  cs_rwlock_lock(&store->rw, CS_SHARED);
  return store->snap;
}

void cs_store_read_end(calstore *store) {
  cs_rwlock_unlock(&store->rw, CS_SHARED);
}

/* ---- operations ---------------------------------------------------------- */

void cs_op_release(cs_op *op) {
  cs_prof_unref(op->prof);
  free(op->backend);
  free(op->implementation);
  memset(op, 0, sizeof *op);
}

calstore_status cs_make_put(const calstore_key *key, calstore_source source,
                            const calstore_measurement *m, size_t n,
                            calstore_serializer_fn serializer, void *serializer_user,
                            calstore_validator_fn validator, void *validator_user, cs_op *op,
                            calstore_error *err) {
  char msg[1024] = "";
  calstore_status st;
  memset(op, 0, sizeof *op);
  if ((st = cs_check_key(key, msg, sizeof msg)) ||
      (st = cs_check_measurements(m, n, msg, sizeof msg)))
    return cs_fail(err, st, 0, NULL, "%s", msg);
  if (!serializer)
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL, "no policy serializer given");
  size_t len = 0;
  const char *policy = serializer(serializer_user, &len, msg, sizeof msg);
  if (!policy)
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL, "the policy serializer failed: %s",
                   msg[0] ? msg : "no reason given");
  if ((st = cs_check_policy(policy, len, msg, sizeof msg)))
    return cs_fail(err, st, 0, NULL, "%s", msg);
  if (validator) {
    msg[0] = '\0';
    if (!validator(validator_user, policy, len, msg, sizeof msg)) {
      msg[sizeof msg - 1] = '\0';
      return cs_fail(err, CALSTORE_POLICY_REJECTED, 0, NULL,
                     "the backend's validator rejected the policy: %s",
                     msg[0] ? msg : "no reason given");
    }
  }
  op->kind = CS_OP_PUT;
  op->prof = cs_prof_create(key, source, m, n, policy, len, NULL, 0, NULL);
  if (!op->prof)
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, NULL, "out of memory");
  return CALSTORE_OK;
}

calstore_status cs_make_clear(const calstore_key *key, cs_op *op, calstore_error *err) {
  char msg[1024] = "";
  calstore_status st;
  memset(op, 0, sizeof *op);
  if ((st = cs_check_key(key, msg, sizeof msg)))
    return cs_fail(err, st, 0, NULL, "%s", msg);
  op->kind = CS_OP_CLEAR;
  op->prof = cs_prof_create(key, CALSTORE_SOURCE_OVERRIDE, NULL, 0, "", 0, NULL, 0, NULL);
  if (!op->prof)
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, NULL, "out of memory");
  return CALSTORE_OK;
}

calstore_status cs_make_invalidate(const char *backend, const char *implementation, cs_op *op,
                                   calstore_error *err) {
  memset(op, 0, sizeof *op);
  if (!backend || !backend[0])
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL, "invalidate needs a backend");
  op->kind = CS_OP_INVALIDATE;
  op->backend = strdup(backend);
  op->implementation = implementation ? strdup(implementation) : NULL;
  if (!op->backend || (implementation && !op->implementation)) {
    cs_op_release(op);
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, NULL, "out of memory");
  }
  return CALSTORE_OK;
}

/* Applies ops to set; returns nonzero when something changed, -1 on OOM. */
static int apply_ops(cs_set *set, cs_op *ops, size_t n) {
  int changed = 0;
  for (size_t i = 0; i < n; i++) {
    cs_op *op = &ops[i];
    op->affected = 0;
    if (op->kind == CS_OP_PUT) {
      if (op->if_absent &&
          cs_set_find(set, &op->prof->v.key, op->prof->v.source, op->prof->id_hash) >= 0)
        continue; /* put if absent: the existing record stays */
      if (!set->borrowed)
        cs_prof_ref(op->prof);
      if (cs_set_put(set, op->prof) != 0)
        return -1;
      op->affected = 1;
      changed = 1;
    } else if (op->kind == CS_OP_CLEAR) {
      long pos = cs_set_find(set, &op->prof->v.key, CALSTORE_SOURCE_OVERRIDE, op->prof->id_hash);
      if (pos >= 0) {
        cs_set_remove_at(set, (size_t)pos);
        op->affected = 1;
        changed = 1;
      }
    } else if (op->kind == CS_OP_INVALIDATE) {
      op->affected = cs_set_invalidate(set, op->backend, op->implementation);
      if (op->affected)
        changed = 1;
    } else if (op->kind == CS_OP_REWRITE) {
      op->affected = 1; /* write the file, whatever it holds */
      changed = 1;
    }
  }
  if (changed && set->live * 2 < set->n && cs_set_compact(set) != 0)
    return -1;
  return changed;
}

/* Nonzero when ops could change an empty store: only a put can (clear and
 * invalidate find nothing there), and a rewrite creates the file. */
static int changes_empty_store(const cs_op *ops, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (ops[i].kind == CS_OP_PUT || ops[i].kind == CS_OP_REWRITE)
      return 1;
  return 0;
}

/* One commit's state: the inter-process lock, the base the operations
 * apply to (the reloaded file, or a copy of the snapshot), the identity of
 * the file version it came from and the pin on it. */
typedef struct commit {
  calstore *s;
  intptr_t lock;
  int locked, fresh, exists; /* fresh: base is the file as reloaded under the lock */
  cs_set *base;
  cs_file_id id;
  intptr_t pin;
} commit;

/* No file, and nothing to write into an empty one (clear, invalidate):
 * what the locked reload would do, without creating the directory or a
 * lock file for a file that does not exist. */
static calstore_status commit_without_file(calstore *s, calstore_error *err) {
  cs_set *empty = cs_set_new();
  if (!empty)
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, s->path, "out of memory");
  forget_disk(s);
  swap_snapshot(s, empty); /* the snapshot follows the file: empty */
  return CALSTORE_OK;      /* nothing happened: every affected stays 0 */
}

/* Takes the inter-process lock and, unless the snapshot is the file,
 * reloads the latest file into c->base (c->fresh). */
static calstore_status commit_lock_and_reload(commit *c, calstore_error *err) {
  calstore *s = c->s;
  calstore_status st;
  if ((st = cs_plat_mkdir_parent(s->path, err)) != CALSTORE_OK)
    return st;
  if ((st = cs_plat_lock(s->lock_path, s->path, s->lock_timeout_ms, &c->lock, err)) != CALSTORE_OK)
    return st;
  c->locked = 1;
  st = cs_plat_stat(s->path, &c->id, err);
  if (st == CALSTORE_OK && s->disk_known && same_id(&c->id, &s->disk))
    return CALSTORE_OK; /* our snapshot is the file: no reload */
  if (st != CALSTORE_NOT_FOUND && st != CALSTORE_OK)
    return st;
  st = load_file(s->path, s->threads, &c->base, &c->id, &c->pin, &c->exists, err);
  if (st == CALSTORE_MALFORMED || st == CALSTORE_UNSUPPORTED_VERSION) {
    char m[sizeof err->message];
    if (err) {
      snprintf(m, sizeof m, "%s", err->message);
      snprintf(err->message, sizeof err->message,
               "refusing to overwrite the store file, which is %s (%.800s); the file is kept "
               "unchanged: repair or remove it",
               calstore_status_name(st), m);
    }
  }
  c->fresh = st == CALSTORE_OK;
  return st;
}

/* Writes c->base over the file; *replaced says whether the rename took
 * place (also when only the directory sync after it failed). */
static calstore_status commit_replace(commit *c, int *replaced, calstore_error *err) {
  calstore *s = c->s;
  size_t nchunks;
  cs_chunk *chunks = cs_set_chunks(c->base, &nchunks);
  *replaced = 0;
  if (!chunks)
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, s->path, "out of memory");
  cs_plat_unpin(c->pin); /* the reloaded version is being replaced */
  c->pin = CS_NO_PIN;
  calstore_status st =
      cs_plat_replace(s->path, s->tmp_path, chunks, nchunks, &c->id, &c->pin, replaced, err);
  free(chunks);
  if (st == CALSTORE_OK) {
    know_disk(s, &c->id, 1, c->pin);
    c->pin = CS_NO_PIN;
  } else {
    forget_disk(s); /* reload at the next commit */
    /* When renamed but the directory sync failed, other processes already
     * see the change: the snapshot follows the file; st stays
     * CALSTORE_WRITE_FAILED (its durability is in doubt). */
  }
  return st;
}

/* The file now holds base, made from a copy of the live snapshot: makes the
 * live snapshot equal by applying the same operations to it (few changes,
 * under the write lock); out of memory half-way, resynchronises from the
 * file. */
static calstore_status commit_follow(commit *c, cs_op *ops, size_t n, calstore_error *err) {
  calstore *s = c->s;
  cs_rwlock_lock(&s->rw, CS_EXCLUSIVE);
  int rc = apply_ops(s->snap, ops, n);
  cs_rwlock_unlock(&s->rw, CS_EXCLUSIVE);
  if (rc >= 0)
    return CALSTORE_OK;
  cs_set *again;
  forget_disk(s);
  if (s->persistence &&
      load_file(s->path, s->threads, &again, &c->id, &c->pin, &c->exists, NULL) == CALSTORE_OK) {
    know_disk(s, &c->id, c->exists, c->pin);
    c->pin = CS_NO_PIN;
    swap_snapshot(s, again);
    return CALSTORE_OK;
  }
  return cs_fail(err, CALSTORE_NO_MEMORY, 0, s->path,
                 "the change was written but the in-memory snapshot could not be updated "
                 "(out of memory); reload the store");
}

calstore_status cs_commit(calstore *s, cs_op *ops, size_t n, calstore_error *err) {
  calstore_status st = CALSTORE_OK;
  commit c = {.s = s, .pin = CS_NO_PIN};
  int took = 0;
  cs_rwlock_lock(&s->commit, CS_EXCLUSIVE);
  if (s->persistence && !changes_empty_store(ops, n) &&
      cs_plat_stat(s->path, &c.id, NULL) == CALSTORE_NOT_FOUND) {
    st = commit_without_file(s, err);
    goto out;
  }
  if (s->persistence && (st = commit_lock_and_reload(&c, err)) != CALSTORE_OK)
    goto out;
  if (!c.base) {
    /* Only commits change the live snapshot and we hold the commit lock: a
     * borrowed copy (no reference counting) is safe until we apply the ops
     * to the live snapshot itself below. */
    cs_rwlock_lock(&s->rw, CS_SHARED);
    c.base = cs_set_clone(s->snap, 1);
    cs_rwlock_unlock(&s->rw, CS_SHARED);
    if (!c.base) {
      st = cs_fail(err, CALSTORE_NO_MEMORY, 0, s->path, "out of memory");
      goto out;
    }
  }
  int changed = apply_ops(c.base, ops, n);
  if (changed < 0) {
    st = cs_fail(err, CALSTORE_NO_MEMORY, 0, s->path, "out of memory");
    goto out;
  }
  if (changed && s->persistence) {
    int replaced;
    if ((st = commit_replace(&c, &replaced, err)) != CALSTORE_OK && !replaced)
      goto out;
  } else if (c.fresh) {
    know_disk(s, &c.id, c.exists, c.pin); /* adopt the reloaded file even when nothing changed */
    c.pin = CS_NO_PIN;
  }
  took = 1; /* the file (and next the snapshot) holds the change */
  if (c.fresh) {
    swap_snapshot(s, c.base);
    c.base = NULL;
  } else if (changed) {
    calstore_status follow = commit_follow(&c, ops, n, err);
    if (follow != CALSTORE_OK)
      st = follow;
  }
out:
  if (!took)
    for (size_t i = 0; i < n; i++)
      ops[i].affected = 0; /* nothing of it happened */
  cs_plat_unpin(c.pin);    /* one this commit took and did not hand to the store */
  cs_set_free(c.base);
  if (c.locked)
    cs_plat_unlock(c.lock);
  cs_rwlock_unlock(&s->commit, CS_EXCLUSIVE);
  return st;
}

/* ---- the public changes ---------------------------------------------------- */

/* Commits the one op that make (the cs_make_* that filled op) built, then
 * releases it; *affected (may be NULL) receives what it did. */
static calstore_status commit_one(calstore *store, calstore_status made, cs_op *op,
                                  size_t *affected, calstore_error *err) {
  if (made != CALSTORE_OK)
    return made;
  calstore_status st = cs_commit(store, op, 1, err);
  if (affected)
    *affected = op->affected;
  cs_op_release(op);
  return st;
}

static calstore_status put_one(calstore *store, calstore_source source, const calstore_key *key,
                               const calstore_measurement *m, size_t n, calstore_serializer_fn ser,
                               void *ser_user, calstore_validator_fn val, void *val_user,
                               calstore_error *err) {
  if (!store)
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL, "store is NULL");
  cs_op op;
  return commit_one(store, cs_make_put(key, source, m, n, ser, ser_user, val, val_user, &op, err),
                    &op, NULL, err);
}

calstore_status calstore_store(calstore *store, const calstore_key *key,
                               const calstore_measurement *measurements, size_t measurement_count,
                               calstore_serializer_fn serializer, void *serializer_user,
                               calstore_validator_fn validator, void *validator_user,
                               calstore_error *err) {
  return put_one(store, CALSTORE_SOURCE_CALIBRATED, key, measurements, measurement_count,
                 serializer, serializer_user, validator, validator_user, err);
}

calstore_status calstore_install_override(calstore *store, const calstore_key *key,
                                          const calstore_measurement *measurements,
                                          size_t measurement_count,
                                          calstore_serializer_fn serializer, void *serializer_user,
                                          calstore_validator_fn validator, void *validator_user,
                                          calstore_error *err) {
  return put_one(store, CALSTORE_SOURCE_OVERRIDE, key, measurements, measurement_count, serializer,
                 serializer_user, validator, validator_user, err);
}

calstore_status calstore_clear_override(calstore *store, const calstore_key *key,
                                        calstore_error *err) {
  if (!store)
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL, "store is NULL");
  cs_op op;
  size_t cleared = 0;
  calstore_status st = commit_one(store, cs_make_clear(key, &op, err), &op, &cleared, err);
  if (st == CALSTORE_OK && !cleared)
    st = cs_fail(err, CALSTORE_NOT_FOUND, 0, NULL, "no override with this key");
  return st;
}

calstore_status calstore_invalidate(calstore *store, const char *backend,
                                    const char *implementation, size_t *removed,
                                    calstore_error *err) {
  if (removed)
    *removed = 0;
  if (!store)
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL, "store is NULL");
  cs_op op;
  size_t affected = 0;
  calstore_status st =
      commit_one(store, cs_make_invalidate(backend, implementation, &op, err), &op, &affected, err);
  /* affected stays nonzero on a failure only when the rename took place
   * (the directory sync failed): the profiles are gone from the file */
  if (removed && (st == CALSTORE_OK || st == CALSTORE_WRITE_FAILED))
    *removed = affected;
  return st;
}

calstore_status calstore_inspect(calstore *store, calstore_visit_fn visit, void *user) {
  if (!store || !visit)
    return CALSTORE_INVALID_ARGUMENT;
  cs_rwlock_lock(&store->rw, CS_SHARED);
  const cs_set *set = store->snap;
  for (size_t i = 0; i < set->n; i++)
    if (set->items[i] && visit(user, &set->items[i]->v))
      break;
  cs_rwlock_unlock(&store->rw, CS_SHARED);
  return CALSTORE_OK;
}

size_t calstore_count(calstore *store) {
  if (!store)
    return 0;
  cs_rwlock_lock(&store->rw, CS_SHARED);
  size_t n = store->snap->live;
  cs_rwlock_unlock(&store->rw, CS_SHARED);
  return n;
}

/* What exporting onto target (resolved) would replace: 1 the store file
 * itself (its path, or another spelling of it), 2 another name of the
 * same file (a hard link), 3 the store's lock file, 0 anything else. Only
 * for a store that keeps a file. */
static int export_onto_store(const calstore *store, const char *target) {
  if (!store->persistence)
    return 0;
  if (cs_plat_same_name(target, store->lock_path))
    return 3;
  cs_file_id a, b;
  int ta = cs_plat_stat(target, &a, NULL) == CALSTORE_OK;
  int tb = cs_plat_stat(store->path, &b, NULL) == CALSTORE_OK;
  if (ta && tb && a.dev == b.dev && a.ino == b.ino)
    return cs_plat_same_name(target, store->path) ? 1 : 2;
  if (ta || tb)
    return 0;
  return cs_plat_same_name(target, store->path); /* neither exists yet */
}

calstore_status calstore_export(calstore *store, const char *path, calstore_error *err) {
  if (!store || !path || !path[0])
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, NULL, "export needs a store and a path");
  cs_buf buf = {0};
  cs_rwlock_lock(&store->rw, CS_SHARED);
  cs_write_set(&buf, store->snap);
  cs_rwlock_unlock(&store->rw, CS_SHARED);
  if (buf.oom) {
    cs_buf_free(&buf);
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, path, "out of memory");
  }
  /* a unique temporary name (NULL): export holds no lock, and a `<path>.tmp`
   * may be anybody's file */
  char *real = NULL;
  calstore_status st = cs_plat_resolve(path, &real, err);
  int same = st == CALSTORE_OK ? export_onto_store(store, real) : 0;
  if (same == 1) {
    /* the store itself (also through a link): renaming a snapshot over it
     * would undo the commits made since it was read; commit a rewrite
     * instead (lock, reload and merge the latest file, write) */
    cs_buf_free(&buf);
    free(real);
    cs_op op;
    memset(&op, 0, sizeof op);
    op.kind = CS_OP_REWRITE;
    return cs_commit(store, &op, 1, err);
  }
  if (same) {
    st = cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, path,
                 same == 2 ? "%s is another name (a hard link) of the store file %s; exporting "
                             "onto it would undo the store's concurrent commits: export to "
                             "another file, or onto the store's own path"
                           : "%s is the store's lock file (of %s); refusing to export onto it",
                 path, store->path);
  } else if (st == CALSTORE_OK) {
    cs_file_id id;
    cs_chunk one = {buf.data, buf.len};
    int replaced;
    st = cs_plat_replace(real, NULL, &one, 1, &id, NULL, &replaced, err);
  }
  free(real);
  cs_buf_free(&buf);
  return st;
}

/* ---- files without a store ------------------------------------------------- */

/* An allocation failed reading a file without a store: told to the
 * diagnostic callback like every other problem. */
static calstore_status detached_no_memory(calstore_diagnostic_fn diagnostic,
                                          void *diagnostic_user) {
  if (diagnostic)
    diagnostic(diagnostic_user, CALSTORE_NO_MEMORY, 0, "out of memory while reading");
  return CALSTORE_NO_MEMORY;
}

/* Parses buf[0..len) (malloc'ed, buf[len] writable; freed here) without a
 * store: the visit and count of calstore_read_buffer and calstore_read_file. */
static calstore_status read_detached(char *buf, size_t len, calstore_visit_fn visit,
                                     void *visit_user, calstore_diagnostic_fn diagnostic,
                                     void *diagnostic_user, size_t *profile_count) {
  cs_set *set = cs_set_new();
  if (!set) {
    free(buf);
    return detached_no_memory(diagnostic, diagnostic_user);
  }
  calstore_status st = cs_parse(buf, len, 1, set, NULL, diagnostic, diagnostic_user, NULL);
  free(buf);
  if (st == CALSTORE_NO_MEMORY)
    detached_no_memory(diagnostic, diagnostic_user);
  if (st == CALSTORE_OK) {
    if (profile_count)
      *profile_count = set->live;
    for (size_t i = 0; visit && i < set->n; i++)
      if (set->items[i] && visit(visit_user, &set->items[i]->v))
        break;
  }
  cs_set_free(set);
  return st;
}

calstore_status calstore_read_buffer(const char *data, size_t length, calstore_visit_fn visit,
                                     void *visit_user, calstore_diagnostic_fn diagnostic,
                                     void *diagnostic_user, size_t *profile_count) {
  if (profile_count)
    *profile_count = 0;
  if (!data && length)
    return CALSTORE_INVALID_ARGUMENT;
  char *copy = malloc(length + 1);
  if (!copy)
    return detached_no_memory(diagnostic, diagnostic_user);
  if (length)
    memcpy(copy, data, length);
  copy[length] = '\0';
  return read_detached(copy, length, visit, visit_user, diagnostic, diagnostic_user, profile_count);
}

calstore_status calstore_read_file(const char *path, calstore_visit_fn visit, void *visit_user,
                                   calstore_diagnostic_fn diagnostic, void *diagnostic_user,
                                   size_t *profile_count) {
  if (profile_count)
    *profile_count = 0;
  if (!path)
    return CALSTORE_INVALID_ARGUMENT;
  char *data;
  size_t len;
  calstore_error err = {0};
  calstore_status st = cs_plat_read_file(path, &data, &len, NULL, NULL, &err);
  if (st != CALSTORE_OK) {
    if (diagnostic)
      diagnostic(diagnostic_user, st, 0, err.message);
    return st;
  }
  return read_detached(data, len, visit, visit_user, diagnostic, diagnostic_user, profile_count);
}
