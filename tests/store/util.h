/*
 * util.h: helpers shared by the store tests: temporary directories, keys,
 * serializers and validators that count their calls, file helpers.
 * Header-only (static functions) so each test program stays one file.
 */
#ifndef CALHOST_TESTS_STORE_UTIL_H
#define CALHOST_TESTS_STORE_UTIL_H

#ifndef _GNU_SOURCE
#error define _GNU_SOURCE before the first include
#endif

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calhost/calstore.h"
#include "harness.h" /* harness_slurp: the tests' one whole-file reader */

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif

/* Nonzero when the test runs under valgrind (RUNNING_ON_VALGRIND, or
 * CALHOST_UNDER_VALGRIND set by tests/reliability/run.sh): heavy randomized
 * tests then use fewer iterations so a loaded 2-core CI machine finishes
 * them within the ctest timeout. */
static inline int tu_under_valgrind(void) {
  const char *e = getenv("CALHOST_UNDER_VALGRIND");
  if (e && e[0] && strcmp(e, "0"))
    return 1;
#ifdef RUNNING_ON_VALGRIND
  return RUNNING_ON_VALGRIND ? 1 : 0;
#else
  return 0;
#endif
}

/* n, or n / divisor (at least 1) under valgrind. */
static inline long tu_iterations(long n, long divisor) {
  if (!tu_under_valgrind())
    return n;
  return n / divisor > 0 ? n / divisor : 1;
}

/* Creates a fresh temporary directory; aborts the test on failure. */
static inline char *tu_mkdtemp(void) {
  char tmpl[] = "/tmp/calstore-test-XXXXXX";
  char *d = mkdtemp(tmpl);
  if (!d) {
    perror("mkdtemp");
    abort();
  }
  return strdup(d);
}

/* rm -r of a directory tree (no symlink following). */
static inline void tu_rmtree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0)
    return;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d))) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
        continue;
      size_t n = strlen(path) + strlen(e->d_name) + 2;
      char *sub = malloc(n);
      snprintf(sub, n, "%s/%s", path, e->d_name);
      tu_rmtree(sub);
      free(sub);
    }
    if (d)
      closedir(d);
    chmod(path, 0700);
    rmdir(path);
  } else {
    unlink(path);
  }
}

static inline char *tu_path(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  snprintf(p, n, "%s/%s", dir, name);
  return p;
}

static inline void tu_write(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f)
    abort();
  fputs(text, f);
  fclose(f);
}

static inline int tu_exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

/* A serializer returning a fixed string and counting its calls. */
typedef struct tu_policy {
  const char *text;
  size_t length; /* 0: strlen(text) */
  int calls;
} tu_policy;

static inline const char *tu_serialize(void *user, size_t *length, char *err, size_t cap) {
  tu_policy *p = user;
  p->calls++;
  if (!p->text) {
    snprintf(err, cap, "test serializer has no policy");
    return NULL;
  }
  *length = p->length ? p->length : strlen(p->text);
  return p->text;
}

/* A validator refusing any policy that contains `refuse` (if set). */
typedef struct tu_validator {
  const char *refuse;
  int calls;
} tu_validator;

static inline int tu_validate(void *user, const char *policy, size_t length, char *err,
                              size_t cap) {
  tu_validator *v = user;
  v->calls++;
  if (v->refuse && memmem(policy, length, v->refuse, strlen(v->refuse))) {
    snprintf(err, cap, "policy contains '%s'", v->refuse);
    return 0;
  }
  return 1;
}

static inline calstore_key tu_exact(const char *backend, const char *impl, const char *digest,
                                    const char *proc, uint32_t threads) {
  calstore_key k = {CALSTORE_KEY_EXACT, backend, "MatMul", impl, digest, proc, threads, NULL, 0};
  return k;
}

static inline calstore_key tu_portable(const char *backend, const char *impl,
                                       const calstore_property *s, size_t n) {
  calstore_key k = {CALSTORE_KEY_PORTABLE, backend, "MatMul", impl, NULL, NULL, 0, s, n};
  return k;
}

/* Opens a store at dir/profiles.txt with persistence on. */
static inline calstore *tu_open(const char *path, calstore_status *st_out) {
  calstore_options o;
  calstore_options_init(&o);
  o.path = path;
  calstore *s = NULL;
  calstore_error err = {0};
  calstore_status st = calstore_open(&o, &s, &err);
  if (st_out)
    *st_out = st;
  return s;
}

/* Stores one calibrated profile with a fixed policy; returns the status. */
static inline calstore_status tu_store(calstore *s, const calstore_key *k, const char *policy,
                                       double median) {
  calstore_measurement m[] = {{"median_latency", median, "us"}};
  tu_policy p = {policy, 0, 0};
  calstore_error err = {0};
  return calstore_store(s, k, m, 1, tu_serialize, &p, NULL, NULL, &err);
}

static inline calstore_status tu_override(calstore *s, const calstore_key *k, const char *policy) {
  tu_policy p = {policy, 0, 0};
  calstore_error err = {0};
  return calstore_install_override(s, k, NULL, 0, tu_serialize, &p, NULL, NULL, &err);
}

#endif
