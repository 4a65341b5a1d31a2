/*
 * digest.c: SHA-256 (OpenSSL libcrypto) of bytes and of model files, the
 * canonical description of a workload, and the lazy, cached model digest
 * of each workload (see digest.h). The INI parser (config.c) never calls
 * into this file.
 */
#define _GNU_SOURCE
#include "digest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "base/files.h"

static void hex_digest(const unsigned char *md, unsigned len, char out[CALHOST_DIGEST_CAPACITY]) {
  static const char hex[] = "0123456789abcdef";
  memcpy(out, "sha256:", 7);
  for (unsigned i = 0; i < len && i < 32; i++) {
    out[7 + 2 * i] = hex[md[i] >> 4];
    out[8 + 2 * i] = hex[md[i] & 15];
  }
  out[7 + 64] = '\0';
}

int config_digest_bytes(const void *data, size_t length, char out[CALHOST_DIGEST_CAPACITY]) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  if (EVP_Digest(data, length, md, &len, EVP_sha256(), NULL) != 1 || len != 32)
    return -1;
  hex_digest(md, len, out);
  return 0;
}

int config_digest_file(const char *path, char out[CALHOST_DIGEST_CAPACITY], char *err,
                       size_t err_capacity) {
  unsigned char md[EVP_MAX_MD_SIZE], buf[65536];
  unsigned len = 0;
  size_t n;
  int rc = -1;
  FILE *f = NULL;
  EVP_MD_CTX *ctx;
  /* Only a regular file is a model: a device (/dev/zero) or a FIFO would
   * never end (base_open_regular refuses them without blocking). */
  int fd = base_open_regular(path, 0, err, err_capacity);
  if (fd < 0)
    return -1;
  f = fdopen(fd, "rb");
  if (!f) {
    if (err && err_capacity)
      snprintf(err, err_capacity, "%s: %s", path, strerror(errno));
    close(fd);
    return -1;
  }
  ctx = EVP_MD_CTX_new();
  if (ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1) {
    int ok = 1;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
      if (EVP_DigestUpdate(ctx, buf, n) != 1)
        ok = 0;
    if (ferror(f)) {
      if (err && err_capacity)
        snprintf(err, err_capacity, "%s: read error: %s", path, strerror(errno));
    } else if (ok && EVP_DigestFinal_ex(ctx, md, &len) == 1 && len == 32) {
      hex_digest(md, len, out);
      rc = 0;
    } else if (err && err_capacity) {
      snprintf(err, err_capacity, "%s: SHA-256 failed", path);
    }
  } else if (err && err_capacity) {
    snprintf(err, err_capacity, "%s: SHA-256 unavailable", path);
  }
  EVP_MD_CTX_free(ctx);
  fclose(f);
  return rc;
}

static int cmp_prop(const void *a, const void *b) {
  return strcmp(((const calhost_property *)a)->name, ((const calhost_property *)b)->name);
}

/* The canonical description as a malloc'd string (*length bytes before its
 * NUL), or NULL when memory runs out: never a description that silently
 * lacks a part (that would be another workload's digest). */
static char *canonical_text(const config_workload *w, size_t *length) {
  char *text = NULL;
  size_t len = 0;
  calhost_property *sorted = NULL;
  FILE *f;
  if (w->property_count) {
    sorted = malloc(w->property_count * sizeof *sorted);
    if (!sorted)
      return NULL;
    memcpy(sorted, w->properties, w->property_count * sizeof *sorted);
    qsort(sorted, w->property_count, sizeof *sorted, cmp_prop);
  }
  f = open_memstream(&text, &len);
  if (!f) {
    free(sorted);
    return NULL;
  }
  fprintf(f, "operator=%s;dtype=%s;shape=", w->operator_name ? w->operator_name : "",
          w->dtype ? w->dtype : "");
  for (size_t i = 0; i < w->shape_rank; i++)
    fprintf(f, "%s%lld", i ? "," : "", (long long)w->shape[i]);
  fputc(';', f);
  for (size_t i = 0; i < w->property_count; i++)
    fprintf(f, "%s=%s;", sorted[i].name, sorted[i].value);
  free(sorted);
  int bad = ferror(f);
  if (fclose(f) != 0 || bad) {
    free(text);
    return NULL;
  }
  *length = len;
  return text;
}

size_t config_workload_canonical(const config_workload *w, char *buf, size_t capacity) {
  size_t len = 0;
  char *text = canonical_text(w, &len);
  if (!text)
    len = 0;
  if (buf && capacity) {
    size_t n = text ? (len < capacity ? len : capacity - 1) : 0;
    if (n)
      memcpy(buf, text, n);
    buf[n] = '\0';
  }
  free(text);
  return len;
}

const char *config_workload_digest(const config_workload *w, char *err, size_t err_capacity) {
  char digest[CALHOST_DIGEST_CAPACITY], why[700];
  char *copy;
  if (err && err_capacity)
    err[0] = '\0';
  if (!w)
    return NULL;
  if (w->model_digest)
    return w->model_digest;
  if (w->model_file) {
    if (config_digest_file(w->model_file, digest, why, sizeof why) != 0) {
      if (err && err_capacity)
        snprintf(err, err_capacity, "%s:%u: model file of [workload %s]: %s",
                 w->model_origin.file ? w->model_origin.file : "<config>", w->model_origin.line,
                 w->name, why);
      return NULL;
    }
  } else {
    size_t n = 0;
    char *text = canonical_text(w, &n);
    int rc;
    if (!text) {
      if (err && err_capacity)
        snprintf(err, err_capacity, "[workload %s]: out of memory", w->name);
      return NULL;
    }
    rc = config_digest_bytes(text, n, digest);
    free(text);
    if (rc != 0) {
      if (err && err_capacity)
        snprintf(err, err_capacity, "[workload %s]: SHA-256 failed", w->name);
      return NULL;
    }
  }
  copy = strdup(digest);
  if (!copy) {
    if (err && err_capacity)
      snprintf(err, err_capacity, "[workload %s]: out of memory", w->name);
    return NULL;
  }
  /* The cache: the workload lives in memory the configuration malloc'd, so
   * it may be written through a pointer to it; its value is logically part
   * of the workload (a pure function of its fields and model file). */
  ((config_workload *)w)->model_digest = copy;
  return copy;
}

int config_digest_all(const config_settings *cfg, char *err, size_t err_capacity) {
  for (size_t i = 0; cfg && i < cfg->workload_count; i++)
    if (!config_workload_digest(&cfg->workloads[i], err, err_capacity))
      return -1;
  return 0;
}
