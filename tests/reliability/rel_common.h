/*
 * rel_common.h: helpers shared by the reliability test programs: scratch
 * directories (removed afterwards), exact keys, a policy serializer, and a
 * canonical text "snapshot" of a store or a file (one line per profile:
 * identity and policy, sorted) with which a test compares the state before
 * and after a fault, or against the state it expects. Whole files are read
 * with the harness's harness_slurp (tests/common/harness.h).
 * Header-only; every helper is static and may go unused in a given test.
 */
#ifndef CALHOST_RELIABILITY_COMMON_H
#define CALHOST_RELIABILITY_COMMON_H

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "calhost/calstore.h"
#include "harness.h" /* harness_slurp: the tests' one whole-file reader */

#define REL_UNUSED __attribute__((unused))

REL_UNUSED static double rel_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Removes a directory tree (no symlink is followed). */
REL_UNUSED static void rel_rmtree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0)
    return;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(path);
    if (d) {
      struct dirent *e;
      while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
          continue;
        char child[4096];
        snprintf(child, sizeof child, "%s/%s", path, e->d_name);
        rel_rmtree(child);
      }
      closedir(d);
    }
    chmod(path, 0700);
    rmdir(path);
  } else {
    unlink(path);
  }
}

/* Creates a scratch directory /tmp/calhost-rel-NAME-XXXXXX into buf. */
REL_UNUSED static int rel_mkdtemp(char *buf, size_t cap, const char *name) {
  const char *base = getenv("TMPDIR");
  snprintf(buf, cap, "%s/calhost-rel-%s-XXXXXX", base && *base ? base : "/tmp", name);
  return mkdtemp(buf) ? 0 : -1;
}

REL_UNUSED static int rel_write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f)
    return -1;
  int ok = fputs(text, f) >= 0;
  return (fclose(f) == 0 && ok) ? 0 : -1;
}

/* An exact key over caller-owned strings. */
REL_UNUSED static calstore_key rel_exact_key(const char *backend, const char *operator_name,
                                             const char *implementation, const char *processor,
                                             uint32_t threads) {
  calstore_key k;
  memset(&k, 0, sizeof k);
  k.kind = CALSTORE_KEY_EXACT;
  k.backend = backend;
  k.operator_name = operator_name;
  k.implementation = implementation;
  k.model_digest = "sha256:reliability";
  k.processor = processor;
  k.thread_count = threads;
  return k;
}

/* Serializer: user is the NUL-terminated policy. */
REL_UNUSED static const char *rel_serialize(void *user, size_t *length, char *err, size_t cap) {
  (void)err;
  (void)cap;
  *length = strlen((const char *)user);
  return (const char *)user;
}

REL_UNUSED static const calstore_measurement rel_measurement[] = {{"median_latency", 1.5, "us"}};

/* A growing string. */
typedef struct rel_buf {
  char *s;
  size_t len, cap;
} rel_buf;

REL_UNUSED __attribute__((format(printf, 2, 3))) static void rel_buf_add(rel_buf *b,
                                                                        const char *fmt, ...) {
  va_list ap;
  for (;;) {
    size_t room = b->cap - b->len;
    va_start(ap, fmt);
    int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
    va_end(ap);
    if (n < 0)
      return;
    if (b->s && (size_t)n < room) {
      b->len += (size_t)n;
      return;
    }
    size_t ncap = (b->cap ? b->cap * 2 : 1024) + (size_t)n;
    char *ns = realloc(b->s, ncap);
    if (!ns)
      abort();
    b->s = ns;
    b->cap = ncap;
  }
}

/* One line for a profile: source, kind and every key field, then the
 * policy. Two profiles have the same identity iff the part before " => " is
 * equal. */
REL_UNUSED static void rel_profile_line(rel_buf *b, const calstore_profile *p) {
  rel_buf_add(b, "%s %s %s|%s|%s", p->source == CALSTORE_SOURCE_OVERRIDE ? "override" : "calibrated",
              p->key.kind == CALSTORE_KEY_EXACT ? "exact" : "portable", p->key.backend,
              p->key.operator_name, p->key.implementation);
  if (p->key.kind == CALSTORE_KEY_EXACT)
    rel_buf_add(b, "|%s|%s|%u", p->key.model_digest, p->key.processor,
                (unsigned)p->key.thread_count);
  for (size_t i = 0; i < p->key.structure_count; i++)
    rel_buf_add(b, "|%s=%s", p->key.structure[i].name, p->key.structure[i].value);
  rel_buf_add(b, " => %s\n", p->policy);
}

typedef struct rel_lines {
  char **v;
  size_t n, cap;
} rel_lines;

REL_UNUSED static int rel_visit_line(void *user, const calstore_profile *p) {
  rel_lines *l = user;
  rel_buf b = {0};
  rel_profile_line(&b, p);
  if (l->n == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 64;
    l->v = realloc(l->v, l->cap * sizeof *l->v);
    if (!l->v)
      abort();
  }
  l->v[l->n++] = b.s;
  return 0;
}

REL_UNUSED static int rel_cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

REL_UNUSED static char *rel_join_sorted(rel_lines *l) {
  rel_buf out = {0};
  rel_buf_add(&out, "%s", "");
  if (l->n)
    qsort(l->v, l->n, sizeof *l->v, rel_cmp_str);
  for (size_t i = 0; i < l->n; i++) {
    rel_buf_add(&out, "%s", l->v[i]);
    free(l->v[i]);
  }
  free(l->v);
  return out.s;
}

/* The sorted profile lines of an open store (malloc'd). */
REL_UNUSED static char *rel_snapshot(calstore *store) {
  rel_lines l = {0};
  calstore_inspect(store, rel_visit_line, &l);
  return rel_join_sorted(&l);
}

/* The sorted profile lines of a file, and its verdict in *status. A file
 * that does not exist is an empty snapshot with CALSTORE_NOT_FOUND. */
REL_UNUSED static char *rel_file_snapshot(const char *path, calstore_status *status) {
  rel_lines l = {0};
  calstore_status st = calstore_read_file(path, rel_visit_line, &l, NULL, NULL, NULL);
  if (status)
    *status = st;
  return rel_join_sorted(&l);
}

/* ---- An expected state: profile identity -> line (rel_profile_line form) */

typedef struct rel_model {
  char **id, **line;
  size_t n, cap;
} rel_model;

/* Sets the profile of an exact key (model digest "sha256:reliability"). */
REL_UNUSED static void rel_model_set(rel_model *m, const char *source, const char *backend,
                                     const char *implementation, const char *processor,
                                     unsigned threads, const char *policy) {
  char id[512], line[1024];
  snprintf(id, sizeof id, "%s exact %s|MatMul|%s|sha256:reliability|%s|%u", source, backend,
           implementation, processor, threads);
  snprintf(line, sizeof line, "%s => %s\n", id, policy);
  for (size_t i = 0; i < m->n; i++)
    if (!strcmp(m->id[i], id)) {
      free(m->line[i]);
      m->line[i] = strdup(line);
      return;
    }
  if (m->n == m->cap) {
    m->cap = m->cap ? m->cap * 2 : 64;
    m->id = realloc(m->id, m->cap * sizeof *m->id);
    m->line = realloc(m->line, m->cap * sizeof *m->line);
    if (!m->id || !m->line)
      abort();
  }
  m->id[m->n] = strdup(id);
  m->line[m->n++] = strdup(line);
}

/* Removes every profile whose identity contains needle. */
REL_UNUSED static void rel_model_remove(rel_model *m, const char *needle) {
  for (size_t i = 0; i < m->n;) {
    if (strstr(m->id[i], needle)) {
      free(m->id[i]);
      free(m->line[i]);
      m->id[i] = m->id[m->n - 1];
      m->line[i] = m->line[m->n - 1];
      m->n--;
    } else {
      i++;
    }
  }
}

REL_UNUSED static void rel_model_free(rel_model *m) {
  for (size_t i = 0; i < m->n; i++) {
    free(m->id[i]);
    free(m->line[i]);
  }
  free(m->id);
  free(m->line);
  memset(m, 0, sizeof *m);
}

REL_UNUSED static void rel_model_copy(rel_model *dst, const rel_model *src) {
  memset(dst, 0, sizeof *dst);
  for (size_t i = 0; i < src->n; i++) {
    if (dst->n == dst->cap) {
      dst->cap = dst->cap ? dst->cap * 2 : 64;
      dst->id = realloc(dst->id, dst->cap * sizeof *dst->id);
      dst->line = realloc(dst->line, dst->cap * sizeof *dst->line);
      if (!dst->id || !dst->line)
        abort();
    }
    dst->id[dst->n] = strdup(src->id[i]);
    dst->line[dst->n++] = strdup(src->line[i]);
  }
}

/* The sorted lines, comparable with rel_snapshot / rel_file_snapshot. */
REL_UNUSED static char *rel_model_text(const rel_model *m) {
  rel_lines l = {0};
  for (size_t i = 0; i < m->n; i++) {
    if (l.n == l.cap) {
      l.cap = l.cap ? l.cap * 2 : 64;
      l.v = realloc(l.v, l.cap * sizeof *l.v);
      if (!l.v)
        abort();
    }
    l.v[l.n++] = strdup(m->line[i]);
  }
  return rel_join_sorted(&l);
}

/* Lists the directory entries other than "." and ".." into buf (sorted,
 * space-separated); returns how many. */
REL_UNUSED static int rel_list_dir(const char *dir, char *buf, size_t cap) {
  rel_lines l = {0};
  DIR *d = opendir(dir);
  buf[0] = '\0';
  if (!d)
    return -1;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
      continue;
    if (l.n == l.cap) {
      l.cap = l.cap ? l.cap * 2 : 16;
      l.v = realloc(l.v, l.cap * sizeof *l.v);
    }
    l.v[l.n++] = strdup(e->d_name);
  }
  closedir(d);
  int count = (int)l.n;
  if (l.n)
    qsort(l.v, l.n, sizeof *l.v, rel_cmp_str);
  size_t off = 0;
  for (size_t i = 0; i < l.n; i++) {
    int k = snprintf(buf + off, off < cap ? cap - off : 0, "%s%s", i ? " " : "", l.v[i]);
    if (k > 0)
      off += (size_t)k;
    free(l.v[i]);
  }
  free(l.v);
  return count;
}

/* Opens the store at path (persistence on); aborts the test program on a
 * status other than OK. */
REL_UNUSED static calstore *rel_open(const char *path) {
  calstore_options o;
  calstore_options_init(&o);
  o.path = path;
  calstore *s = NULL;
  calstore_error err;
  memset(&err, 0, sizeof err);
  calstore_status st = calstore_open(&o, &s, &err);
  if (st != CALSTORE_OK || !s) {
    fprintf(stderr, "calstore_open(%s): %s: %s\n", path, calstore_status_name(st), err.message);
    abort();
  }
  return s;
}

#endif
