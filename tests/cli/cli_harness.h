/*
 * cli_harness.h: the one way the command-line tests (test_cli_store.c,
 * test_cli_hardening.c, test_cli_contracts.c) run bin/calhost: a scratch
 * directory per program, the command run there with its stdout and stderr
 * captured in files, the user's configuration and cache kept out (XDG_*,
 * HOME), no plugin path or log level from the environment, and a 20 s
 * limit so a command that blocks fails its test instead of hanging it.
 * Header-only (static inline) so each test stays one program; define
 * _GNU_SOURCE and include cmocka.h before it.
 */
#ifndef CALHOST_TESTS_CLI_HARNESS_H
#define CALHOST_TESTS_CLI_HARNESS_H

#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* Reads the file at path into buf (NUL-terminated, at most cap - 1 bytes). */
static inline void cli_harness_read(const char *path, char *buf, size_t cap) {
  size_t n = 0;
  ssize_t r;
  int fd = open(path, O_RDONLY);
  assert_true(fd >= 0);
  while (n + 1 < cap && (r = read(fd, buf + n, cap - 1 - n)) > 0)
    n += (size_t)r;
  buf[n] = '\0';
  close(fd);
}

/* Runs calhost with the arguments (NULL-terminated) in dir; returns its
 * exit status and output (a static result, overwritten by the next run). A
 * run over 20 s is killed (SIGALRM: code 142). */
static inline run_result *run(const char *first, ...) {
  const char *argv[64];
  int argc = 0;
  argv[argc++] = calhost;
  va_list ap;
  va_start(ap, first);
  for (const char *a = first; a && argc < 63; a = va_arg(ap, const char *))
    argv[argc++] = a;
  va_end(ap);
  argv[argc] = NULL;
  char outp[PATH_MAX], errp[PATH_MAX];
  snprintf(outp, sizeof outp, "%s/stdout", dir);
  snprintf(errp, sizeof errp, "%s/stderr", dir);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(o, 1);
    dup2(e, 2);
    if (chdir(dir) != 0)
      _exit(126);
    setenv("XDG_CONFIG_HOME", dir, 1);
    setenv("XDG_CACHE_HOME", dir, 1);
    setenv("HOME", dir, 1);
    setenv("TERM", cli_harness_term, 1);
    unsetenv("CALHOST_PLUGIN_PATH");
    unsetenv("CALHOST_LOG_LEVEL");
    alarm(20); /* kept across exec */
    execv(calhost, (char *const *)argv);
    _exit(127);
  }
  int status;
  waitpid(pid, &status, 0);
  static run_result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  cli_harness_read(outp, r.out, sizeof r.out);
  cli_harness_read(errp, r.err, sizeof r.err);
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
  FILE *f = fopen(path(name), "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
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
  const char *b = getenv("CALHOST_BUILD_DIR");
  if (!b)
    return -1;
  snprintf(calhost, sizeof calhost, "%s/bin/calhost", b);
  snprintf(plugins, sizeof plugins, "%s/lib/calhost/test-plugins", b);
  snprintf(dir, sizeof dir, "/tmp/calhost-%s-XXXXXX", tag);
  if (!mkdtemp(dir))
    return -1;
  return access(calhost, X_OK);
}

/* The group teardown: removes the scratch directory. */
static inline int cli_harness_teardown(void) {
  char cmd[PATH_MAX + 16];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

#endif /* CALHOST_TESTS_CLI_HARNESS_H */
