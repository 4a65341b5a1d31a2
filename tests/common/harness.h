/*
 * harness.h: the tests' one harness for running the calhost program and
 * reading files. It owns: where bin/calhost is (CALHOST_BUILD_DIR), the
 * environment a command runs in (HOME, XDG_*, TERM, CALHOST_PLUGIN_PATH,
 * CALHOST_LOG_LEVEL, a time limit, stdin), capturing its exit status,
 * stdout and stderr, reading a whole file (the one slurp), writing a file
 * (configs, stores) and a scratch directory per test program.
 *
 * Built as the static library calhost_test_harness (tests/CMakeLists.txt),
 * linked into every test by calhost_add_test. A test file outside
 * tests/common that defines its own slurp or fork+execs bin/calhost fails
 * the harness_only check (tests/common/harness_only.sh).
 */
#ifndef CALHOST_TESTS_HARNESS_H
#define CALHOST_TESTS_HARNESS_H

#include <stddef.h>
#include <sys/types.h>

/* How a command runs. Zero-initialised fields take the defaults, which
 * every test shares; a test that needs another environment says so here. */
typedef struct harness_opts {
  const char *cwd;             /* the command's working directory (NULL: the test's) */
  const char *home;            /* HOME (NULL: cwd, else the scratch directory, else unchanged) */
  const char *xdg_config_home; /* XDG_CONFIG_HOME (NULL: HOME) */
  const char *xdg_cache_home;  /* XDG_CACHE_HOME (NULL: HOME) */
  const char *term;            /* TERM (NULL: "dumb") */
  const char *plugin_path;     /* CALHOST_PLUGIN_PATH (NULL: unset) */
  const char *stdin_path;      /* the command's stdin (NULL: /dev/null) */
  unsigned timeout_s;          /* SIGALRM after this long (0: 120 s) */
  int merge_output;            /* nonzero: stderr goes to stdout (as 2>&1) */
  int pty; /* nonzero: stdin, stdout and stderr a pseudo-terminal; out is all it wrote there */
  int keep_log_level; /* nonzero: CALHOST_LOG_LEVEL is inherited */
  /* nonzero: RLIMIT_FSIZE of the command, SIGXFSZ at its default (as a
   * shell's ulimit -f) */
  unsigned long fsize_limit;
  /* more variables, applied last: "NAME=VALUE" sets, "NAME" unsets;
   * NULL-terminated (NULL: none) */
  const char *const *env;
} harness_opts;

/* What a command did. out and err are malloc'd and NUL-terminated (also
 * when empty); harness_result_free releases them. */
typedef struct harness_result {
  int code;   /* the exit status, or 128 + the signal that ended it */
  int signal; /* the signal that ended it, 0 when it exited */
  pid_t pid;  /* the process it ran as */
  char *out;
  size_t out_len;
  char *err; /* "" with merge_output */
  size_t err_len;
} harness_result;

/* CALHOST_BUILD_DIR, CALHOST_SOURCE_DIR (fails the test when unset). */
const char *harness_build_dir(void);
const char *harness_source_dir(void);

/* The build tree's bin/calhost. */
const char *harness_calhost(void);

/* Runs the program prog (NULL: bin/calhost) with the arguments argv (not
 * including the program; NULL-terminated) as o says (NULL: the defaults),
 * waits for it, fills *r (whose earlier out and err it frees: zero it
 * before the first run) and returns r->code. The environment is the
 * test's with the variables of harness_opts set as documented there. A
 * failure to start it (no fork, no capture file) fails the test; a program
 * that cannot be executed exits 127. */
int harness_run_program(const char *prog, const harness_opts *o, harness_result *r,
                        const char *const *argv);

/* harness_run_program for bin/calhost --config CONFIG ARGS... (args
 * NULL-terminated, at most 60): the usual way a test runs calhost on a
 * configuration it wrote. */
int harness_run_config(const harness_opts *o, harness_result *r, const char *config,
                       const char *const *args);

/* harness_run_program for bin/calhost with the arguments as a list. */
int harness_run(const harness_opts *o, harness_result *r, const char *first, ...)
    __attribute__((sentinel));

/* bin/calhost with args as a shell fragment (quoting and globbing of
 * /bin/sh: "config check 'my file.ini'"), run as `exec calhost ARGS`. */
int harness_run_sh(const harness_opts *o, harness_result *r, const char *args);

/* A shell command line (/bin/sh -c) with the harness's environment and
 * CALHOST naming bin/calhost: "CALHOST_LOG_LEVEL=info \"$CALHOST\" list
 * 2>&1", for a test whose commands carry their own redirections or
 * variables. */
int harness_shell(const harness_opts *o, harness_result *r, const char *cmdline);

void harness_result_free(harness_result *r);

/* A command started and not yet waited for (to signal it, to watch its
 * progress). */
typedef struct harness_child {
  pid_t pid;
  int out, err; /* its capture files */
} harness_child;

/* Starts prog as harness_run_program would, without waiting (no pty). */
void harness_start(const char *prog, const harness_opts *o, const char *const *argv,
                   harness_child *c);

/* What the running child has written to stderr so far (stdout too with
 * merge_output), malloc'd. */
char *harness_child_stderr(const harness_child *c);

/* Waits for the child and fills *r as harness_run_program; returns r->code. */
int harness_wait(harness_child *c, harness_result *r);

/* The whole file at path, malloc'd and NUL-terminated, its length in *len
 * (when len is not NULL); NULL when it cannot be read (errno set). */
char *harness_slurp(const char *path, size_t *len);

/* harness_slurp, but "" (malloc'd) for a file that cannot be read: for a
 * test where a missing file is an empty one. Never NULL. */
char *harness_slurp_or_empty(const char *path, size_t *len);

/* harness_slurp of CALHOST_SOURCE_DIR/rel. */
char *harness_slurp_source(const char *rel, size_t *len);

/* Writes text to path (created or truncated, mode 0644); 0, or -1 with
 * errno set. */
int harness_write(const char *path, const char *text);

/* A fresh directory /tmp/calhost-TAG-XXXXXX (the scratch directory of the
 * program until harness_scratch_remove); its path, or NULL. */
const char *harness_scratch(const char *tag);
const char *harness_scratch_dir(void); /* NULL before harness_scratch */

/* Removes the scratch directory and everything in it; 0, or -1. */
int harness_scratch_remove(void);

/* Removes path and everything under it (rm -rf); 0, or -1. */
int harness_remove_tree(const char *path);

#endif /* CALHOST_TESTS_HARNESS_H */
