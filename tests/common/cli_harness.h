/*
 * cli_harness.h: the short names the command-line tests (tests/cli) use
 * for the harness (harness.h): a scratch directory per program, bin/calhost
 * run there with the harness's environment (HOME and XDG_* the scratch
 * directory, TERM cli_harness_term, no plugin path or log level from the
 * environment) and a 20 s limit, so a command that blocks fails its test
 * instead of hanging it; output into fixed buffers. Header-only (static
 * inline) so each test stays one program; define _GNU_SOURCE and include
 * cmocka.h before it.
 */
#ifndef CALHOST_TESTS_CLI_HARNESS_H
#define CALHOST_TESTS_CLI_HARNESS_H

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static char calhost[PATH_MAX];                         /* bin/calhost of CALHOST_BUILD_DIR */
static char plugins[PATH_MAX] __attribute__((unused)); /* its lib/calhost/test-plugins */
static char dir[64]; /* the scratch directory: the commands' cwd */
/* TERM of the commands (their output is never a terminal here) */
static const char *cli_harness_term = "dumb";

typedef struct run_result {
  int code; /* the exit status, or 128 + the signal */
  char out[131072];
  char err[65536];
} run_result;

/* Copies at most cap - 1 bytes of s into buf, NUL-terminated. */
static inline void cli_harness_copy(char *buf, size_t cap, const char *s, size_t n) {
  if (n > cap - 1)
    n = cap - 1;
  memcpy(buf, s, n);
  buf[n] = '\0';
}

/* Reads the file at path into buf (NUL-terminated, at most cap - 1 bytes). */
static inline void cli_harness_read(const char *path, char *buf, size_t cap) {
  size_t n;
  char *s = harness_slurp(path, &n);
  assert_non_null(s);
  cli_harness_copy(buf, cap, s, n);
  free(s);
}

/* Runs calhost with the arguments (NULL-terminated) in dir; returns its
 * exit status and output (a static result, overwritten by the next run). A
 * run over 20 s is killed (SIGALRM: code 142). */
static inline run_result *run(const char *first, ...) {
  const char *argv[64];
  int argc = 0;
  va_list ap;
  va_start(ap, first);
  for (const char *a = first; a && argc < 63; a = va_arg(ap, const char *))
    argv[argc++] = a;
  va_end(ap);
  argv[argc] = NULL;
  harness_opts o = {.cwd = dir, .term = cli_harness_term, .timeout_s = 20};
  harness_result h = {0};
  static run_result r;
  r.code = harness_run_program(calhost, &o, &h, argv);
  cli_harness_copy(r.out, sizeof r.out, h.out, h.out_len);
  cli_harness_copy(r.err, sizeof r.err, h.err, h.err_len);
  harness_result_free(&h);
  return &r;
}

/* dir/name (one of four rotating buffers). */
static inline const char *path(const char *name) {
  static char p[4][PATH_MAX];
  static int k;
  k = (k + 1) % 4;
  snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
  return p[k];
}

/* Writes text to dir/name. */
static inline void write_file(const char *name, const char *text) {
  assert_int_equal(harness_write(path(name), text), 0);
}

#define HAS(hay, needle)                                                                           \
  do {                                                                                             \
    if (!strstr((hay), (needle)))                                                                  \
      fail_msg("expected '%s' in:\n%s", (needle), (hay));                                          \
  } while (0)
#define HASNT(hay, needle)                                                                         \
  do {                                                                                             \
    if (strstr((hay), (needle)))                                                                   \
      fail_msg("did not expect '%s' in:\n%s", (needle), (hay));                                    \
  } while (0)

/* The group setup: calhost and plugins from CALHOST_BUILD_DIR, a fresh
 * scratch directory /tmp/calhost-<tag>-XXXXXX. Returns 0, or -1. */
static inline int cli_harness_setup(const char *tag) {
  const char *b = getenv("CALHOST_BUILD_DIR"), *s;
  if (!b)
    return -1;
  snprintf(calhost, sizeof calhost, "%s/bin/calhost", b);
  snprintf(plugins, sizeof plugins, "%s/lib/calhost/test-plugins", b);
  s = harness_scratch(tag);
  if (!s || strlen(s) >= sizeof dir)
    return -1;
  snprintf(dir, sizeof dir, "%s", s);
  return access(calhost, X_OK);
}

/* The group teardown: removes the scratch directory. */
static inline int cli_harness_teardown(void) {
  return harness_scratch_remove();
}

#endif /* CALHOST_TESTS_CLI_HARNESS_H */
