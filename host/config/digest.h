/*
 * digest.h: the model digests of calhost's workloads (SHA-256 through
 * OpenSSL libcrypto), apart from the INI parser so that reading a
 * configuration hashes nothing and links no OpenSSL.
 *
 * A workload's digest is computed on first use and cached in the workload
 * (config_workload_digest): commands that never build a key (list,
 * check, plugins, ...) never read a model file.
 */
#ifndef CALHOST_CONFIG_DIGEST_H
#define CALHOST_CONFIG_DIGEST_H

#include <stddef.h>

#include "config.h"

/* Bytes needed for a digest string: "sha256:" + 64 hex digits + NUL. */
#define CALHOST_DIGEST_CAPACITY 72

/* SHA-256 of bytes / of a file's contents, written as
 * "sha256:<64 lowercase hex>" into out (CALHOST_DIGEST_CAPACITY bytes): the
 * same hex as `sha256sum`. A file must be a regular file (a device or a FIFO
 * is refused without blocking). Return 0, or -1 (with "PATH: reason" in err
 * for config_digest_file; err may be NULL). */
int config_digest_bytes(const void *data, size_t length, char out[CALHOST_DIGEST_CAPACITY]);
int config_digest_file(const char *path, char out[CALHOST_DIGEST_CAPACITY], char *err,
                       size_t err_capacity);

/* The canonical description of a workload, the input of its digest when it
 * has no model file:
 *   "operator=OP;dtype=DT;shape=D1,D2,...;" then "NAME=VALUE;" for each
 *   property, sorted by name (bytewise).
 * The workload's name is not part of it. Returns the full length like
 * snprintf (truncated when >= capacity; buf may be NULL with capacity 0),
 * or 0 (buf "") when memory runs out: a description is never empty. */
size_t config_workload_canonical(const config_workload *workload, char *buf, size_t capacity);

/* The workload's model digest: of its model file when it has one, else of
 * its canonical description. Computed on the first call and cached in
 * workload->model_digest (owned by the configuration, freed by
 * config_free); later calls return the cached string without
 * reading anything. Not thread-safe: call it before sharing the
 * configuration between threads (forked children inherit the cache).
 * Returns the digest, or NULL with "FILE:LINE: model file of [workload
 * NAME]: reason" in err (the model key's line; err may be NULL). */
const char *config_workload_digest(const config_workload *workload, char *err, size_t err_capacity);

/* Computes every workload's digest (`config check`, `config show`). Returns
 * 0, or -1 with the first failure in err as above. */
int config_digest_all(const config_settings *cfg, char *err, size_t err_capacity);

#endif /* CALHOST_CONFIG_DIGEST_H */
