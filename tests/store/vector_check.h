/*
 * vector_check.h: the one check of a version-1 format vector against its
 * expectations (tests/store/vectors/store-v1/expected.tsv and canonical/),
 * shared by the Linux format test (test_store_format.c) and the Windows
 * store test run under Wine (tests/windows/test_store_win.c), so both
 * platforms hold the store to the same verdicts and byte-exact rewrites.
 * Header-only, portable C (stdio and the public store API only).
 */
#ifndef CALHOST_TESTS_STORE_VECTOR_CHECK_H
#define CALHOST_TESTS_STORE_VECTOR_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calhost/calstore.h"

#define VC_PATH 4096

typedef struct vc_diags {
  int count;
  unsigned first_line;
  calstore_status first_status;
  char first_msg[512];
} vc_diags;

static inline void vc_on_diag(void *user, calstore_status st, unsigned line, const char *msg) {
  vc_diags *d = user;
  if (!d->count++) {
    d->first_line = line;
    d->first_status = st;
    snprintf(d->first_msg, sizeof d->first_msg, "%s", msg);
  }
}

/* The status whose calstore_status_name is w, or -1. */
static inline int vc_status_from_word(const char *w) {
  for (int s = 0; s <= CALSTORE_LOCK_FAILED; s++)
    if (!strcmp(calstore_status_name((calstore_status)s), w))
      return s;
  return -1;
}

/* A whole file in binary mode (NUL-terminated); NULL when it cannot be read. */
static inline char *vc_read(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 4096, n = 0, r;
  char *b = malloc(cap + 1);
  while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
    n += r;
    if (n == cap) {
      char *nb = realloc(b, 2 * cap + 1);
      if (!nb) {
        free(b);
        b = NULL;
        break;
      }
      b = nb;
      cap *= 2;
    }
  }
  fclose(f);
  if (b)
    b[n] = '\0';
  if (len)
    *len = n;
  return b;
}

/* Compares a file with the expected bytes; returns 0 or a message in why. */
static inline int vc_same_file(const char *got, const char *want, char *why, size_t cap) {
  size_t la = 0, lb = 0;
  char *a = vc_read(got, &la), *b = vc_read(want, &lb);
  int differs = !a || !b || la != lb || memcmp(a, b, la);
  if (differs) {
    size_t at = 0;
    while (a && b && at < la && at < lb && a[at] == b[at])
      at++;
    snprintf(why, cap, "%.400s differs from %.400s at byte %zu (%zu vs %zu bytes)", got, want, at,
             la, lb);
  }
  free(a);
  free(b);
  return differs;
}

/* One vector of vec_dir: verdict and count by calstore_read_file and by
 * calstore_open; for ok files the canonical rewrite by export (into
 * tmp/NAME), and the canonical file exporting to itself. Returns 0 or
 * writes what went wrong into why. */
static inline int vc_check_vector(const char *vec_dir, const char *name, calstore_status expect,
                                  size_t want, const char *tmp, char *why, size_t cap) {
  char path[VC_PATH + 300];
  snprintf(path, sizeof path, "%s/%s", vec_dir, name);
  vc_diags d = {0};
  size_t count = 99;
  calstore_status st = calstore_read_file(path, NULL, NULL, vc_on_diag, &d, &count);
  if (st != expect) {
    snprintf(why, cap, "read_file: got %s, want %s (%.300s)", calstore_status_name(st),
             calstore_status_name(expect), d.first_msg);
    return 1;
  }
  if (expect == CALSTORE_OK
          ? count != want || d.count != 0
          : count != 0 || d.count < 1 || d.first_line < 1 || d.first_status != expect) {
    snprintf(why, cap, "read_file: count %zu (want %zu), %d diagnostics, first line %u", count,
             expect == CALSTORE_OK ? want : 0, d.count, d.first_line);
    return 1;
  }
  /* the same through a store handle */
  calstore_options o;
  calstore_options_init(&o);
  o.path = path;
  calstore *s = NULL;
  calstore_error err = {0};
  st = calstore_open(&o, &s, &err);
  int bad = 0;
  if (!s || st != expect) {
    snprintf(why, cap, "open: got %s (%.300s)", calstore_status_name(st), err.message);
    bad = 1;
  } else if (expect != CALSTORE_OK) {
    if (calstore_count(s) != 0 || err.line != d.first_line || strcmp(err.path, path)) {
      snprintf(why, cap, "open: %zu profiles, line %u (read_file said %u), path %s",
               calstore_count(s), err.line, d.first_line, err.path);
      bad = 1;
    }
  } else if (calstore_count(s) != want) {
    snprintf(why, cap, "open: %zu profiles, want %zu", calstore_count(s), want);
    bad = 1;
  } else {
    char out[VC_PATH + 300], canon[VC_PATH + 300];
    snprintf(out, sizeof out, "%s/%s", tmp, name);
    snprintf(canon, sizeof canon, "%s/canonical/%s", vec_dir, name);
    if (calstore_export(s, out, &err) != CALSTORE_OK) {
      snprintf(why, cap, "export: %.300s", err.message);
      bad = 1;
    } else if (vc_same_file(out, canon, why, cap)) {
      bad = 1; /* the canonical rewrite */
    } else {
      /* the canonical file reads back to the same canonical text */
      calstore *s2 = NULL;
      o.path = canon;
      if (calstore_open(&o, &s2, &err) != CALSTORE_OK ||
          calstore_export(s2, out, &err) != CALSTORE_OK || vc_same_file(out, canon, why, cap)) {
        snprintf(why + strlen(why), cap - strlen(why), " (re-export of the canonical file) %.300s",
                 err.message);
        bad = 1;
      }
      calstore_close(&s2);
    }
  }
  calstore_close(&s);
  return bad;
}

/* Checks every line of vec_dir/expected.tsv (exports go to tmp), calling
 * report(user, name, why) for each failing vector. Returns the number of
 * vectors checked, or -1 when expected.tsv cannot be read; *failed
 * receives the number that failed. */
static inline int vc_check_all(const char *vec_dir, const char *tmp,
                               void (*report)(void *user, const char *name, const char *why),
                               void *user, int *failed) {
  char tsv[VC_PATH + 32];
  snprintf(tsv, sizeof tsv, "%s/expected.tsv", vec_dir);
  *failed = 0;
  FILE *f = fopen(tsv, "rb");
  if (!f)
    return -1;
  char line[1024];
  int files = 0;
  while (fgets(line, sizeof line, f)) {
    char name[256], word[64], why[1024] = "";
    size_t want;
    if (sscanf(line, "%255s %63s %zu", name, word, &want) != 3 || !strcmp(name, "file"))
      continue;
    files++;
    int expect = vc_status_from_word(word);
    if (expect < 0)
      snprintf(why, sizeof why, "unknown status word %s in expected.tsv", word);
    if (expect < 0 ||
        vc_check_vector(vec_dir, name, (calstore_status)expect, want, tmp, why, sizeof why)) {
      report(user, name, why);
      (*failed)++;
    }
  }
  fclose(f);
  return files;
}

#endif
