/*
 * harness.c: the tests' one harness (harness.h): running programs (bin/
 * calhost above all) in a controlled environment with their output
 * captured, reading and writing files, the scratch directory.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static const char *env_dir(const char *name) {
  const char *v = getenv(name);
  if (!v || !*v)
    fail_msg("%s is not set (run the test through ctest)", name);
  return v;
}

const char *harness_build_dir(void) {
  return env_dir("CALHOST_BUILD_DIR");
}

const char *harness_source_dir(void) {
  return env_dir("CALHOST_SOURCE_DIR");
}

const char *harness_calhost(void) {
  static char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/bin/calhost", harness_build_dir());
  return path;
}

char *harness_slurp(const char *path, size_t *len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  size_t n = 0, cap = 4096;
  char *buf;
  if (fd < 0)
    return NULL;
  buf = malloc(cap);
  while (buf) {
    ssize_t r;
    if (n + 1 >= cap) {
      char *grown = realloc(buf, cap * 2);
      if (!grown) {
        free(buf);
        buf = NULL;
        errno = ENOMEM;
        break;
      }
      buf = grown;
      cap *= 2;
    }
    r = read(fd, buf + n, cap - 1 - n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      int e = errno;
      free(buf);
      buf = NULL;
      errno = e;
      break;
    }
    if (r == 0)
      break;
    n += (size_t)r;
  }
  close(fd);
  if (buf) {
    buf[n] = '\0';
    if (len)
      *len = n;
  }
  return buf;
}

char *harness_slurp_or_empty(const char *path, size_t *len) {
  char *s = harness_slurp(path, len);
  if (!s) {
    s = calloc(1, 1);
    if (len)
      *len = 0;
  }
  assert_non_null(s);
  return s;
}

char *harness_slurp_source(const char *rel, size_t *len) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", harness_source_dir(), rel);
  return harness_slurp(path, len);
}

int harness_write(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  int ok;
  if (!f)
    return -1;
  ok = fputs(text, f) >= 0;
  ok = (fclose(f) == 0) && ok;
  return ok ? 0 : -1;
}

static char scratch[PATH_MAX];

const char *harness_scratch(const char *tag) {
  snprintf(scratch, sizeof scratch, "/tmp/calhost-%s-XXXXXX", tag);
  if (!mkdtemp(scratch)) {
    scratch[0] = '\0';
    return NULL;
  }
  return scratch;
}

const char *harness_scratch_dir(void) {
  return scratch[0] ? scratch : NULL;
}

int harness_remove_tree(const char *path) {
  char cmd[PATH_MAX + 16];
  if (strchr(path, '\''))
    return -1;
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
  return system(cmd) == 0 ? 0 : -1;
}

int harness_scratch_remove(void) {
  int rc = scratch[0] ? harness_remove_tree(scratch) : 0;
  scratch[0] = '\0';
  return rc;
}

void harness_result_free(harness_result *r) {
  free(r->out);
  free(r->err);
  r->out = r->err = NULL;
  r->out_len = r->err_len = 0;
}

/* The child's environment, as harness_opts documents. */
static void child_env(const harness_opts *o) {
  const char *home = o->home ? o->home : o->cwd ? o->cwd : harness_scratch_dir();
  if (home) {
    setenv("HOME", home, 1);
    setenv("XDG_CONFIG_HOME", o->xdg_config_home ? o->xdg_config_home : home, 1);
    setenv("XDG_CACHE_HOME", o->xdg_cache_home ? o->xdg_cache_home : home, 1);
  }
  setenv("TERM", o->term ? o->term : "dumb", 1);
  if (getenv("CALHOST_BUILD_DIR") && *getenv("CALHOST_BUILD_DIR"))
    setenv("CALHOST", harness_calhost(), 1);
  if (o->plugin_path)
    setenv("CALHOST_PLUGIN_PATH", o->plugin_path, 1);
  else
    unsetenv("CALHOST_PLUGIN_PATH");
  if (!o->keep_log_level)
    unsetenv("CALHOST_LOG_LEVEL");
  for (const char *const *e = o->env; e && *e; e++) {
    const char *eq = strchr(*e, '=');
    if (eq) {
      char name[256];
      snprintf(name, sizeof name, "%.*s", (int)(eq - *e), *e);
      setenv(name, eq + 1, 1);
    } else {
      unsetenv(*e);
    }
  }
}

/* The whole of the (temporary) file fd from its start, malloc'd. */
static char *read_back(int fd, size_t *len) {
  char path[64];
  char *s;
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  s = harness_slurp(path, len);
  if (!s)
    fail_msg("cannot read a command's output back: %s", strerror(errno));
  return s;
}

/* harness_run_program on a pseudo-terminal (o->pty). */
static int run_on_pty(const char *prog, const harness_opts *o, harness_result *r,
                      const char *const *args) {
  char *buf = malloc(65536);
  size_t n = 0, cap = 65536;
  int master, status;
  pid_t pid;
  assert_non_null(buf);
  fflush(NULL);
  pid = forkpty(&master, NULL, NULL, NULL);
  if (pid < 0)
    fail_msg("forkpty: %s", strerror(errno));
  if (pid == 0) {
    if (o->cwd && chdir(o->cwd) != 0)
      _exit(126);
    child_env(o);
    alarm(o->timeout_s ? o->timeout_s : 120);
    execv(prog, (char *const *)args);
    _exit(127);
  }
  for (;;) {
    ssize_t got;
    if (n + 1 >= cap) {
      char *grown = realloc(buf, cap * 2);
      assert_non_null(grown);
      buf = grown;
      cap *= 2;
    }
    got = read(master, buf + n, cap - 1 - n);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      break; /* EIO once the child is gone */
    n += (size_t)got;
  }
  buf[n] = '\0';
  close(master);
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      fail_msg("waitpid: %s", strerror(errno));
  harness_result_free(r);
  r->pid = pid;
  r->code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  r->out = buf;
  r->out_len = n;
  r->err = calloc(1, 1);
  assert_non_null(r->err);
  return r->code;
}

void harness_start(const char *prog, const harness_opts *o, const char *const *argv,
                   harness_child *c) {
  static const harness_opts defaults;
  const char *args[256];
  int argc = 0;
  if (!o)
    o = &defaults;
  if (!prog)
    prog = harness_calhost();
  args[argc++] = prog;
  for (; argv && *argv && argc < 255; argv++)
    args[argc++] = *argv;
  args[argc] = NULL;
  if (o->pty)
    fail_msg("harness_start: a pty run is harness_run_program's");
  c->out = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  c->err = o->merge_output ? -1 : open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (c->out < 0 || (!o->merge_output && c->err < 0))
    fail_msg("no capture file for a command: %s", strerror(errno));
  fflush(NULL);
  c->pid = fork();
  if (c->pid < 0)
    fail_msg("fork: %s", strerror(errno));
  if (c->pid == 0) {
    int in = open(o->stdin_path ? o->stdin_path : "/dev/null", O_RDONLY);
    if (in < 0 || dup2(in, 0) < 0 || dup2(c->out, 1) < 0 ||
        dup2(c->err < 0 ? c->out : c->err, 2) < 0)
      _exit(126);
    if (o->cwd && chdir(o->cwd) != 0)
      _exit(126);
    if (o->fsize_limit) {
      struct rlimit rl = {o->fsize_limit, o->fsize_limit};
      signal(SIGXFSZ, SIG_DFL);
      if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
        _exit(126);
    }
    child_env(o);
    alarm(o->timeout_s ? o->timeout_s : 120); /* kept across exec */
    execv(prog, (char *const *)args);
    _exit(127);
  }
}

char *harness_child_stderr(const harness_child *c) {
  return read_back(c->err >= 0 ? c->err : c->out, NULL);
}

int harness_wait(harness_child *c, harness_result *r) {
  int status;
  while (waitpid(c->pid, &status, 0) < 0)
    if (errno != EINTR)
      fail_msg("waitpid: %s", strerror(errno));
  harness_result_free(r);
  r->pid = c->pid;
  r->code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  r->out = read_back(c->out, &r->out_len);
  if (c->err >= 0) {
    r->err = read_back(c->err, &r->err_len);
  } else {
    r->err = calloc(1, 1);
    r->err_len = 0;
    assert_non_null(r->err);
  }
  close(c->out);
  if (c->err >= 0)
    close(c->err);
  c->out = c->err = -1;
  return r->code;
}

int harness_run_program(const char *prog, const harness_opts *o, harness_result *r,
                        const char *const *argv) {
  harness_child c;
  if (o && o->pty) {
    const char *args[256];
    int argc = 0;
    args[argc++] = prog ? prog : harness_calhost();
    for (; argv && *argv && argc < 255; argv++)
      args[argc++] = *argv;
    args[argc] = NULL;
    return run_on_pty(args[0], o, r, args);
  }
  harness_start(prog, o, argv, &c);
  return harness_wait(&c, r);
}

int harness_run_config(const harness_opts *o, harness_result *r, const char *config,
                       const char *const *args) {
  const char *argv[64];
  size_t n = 0;
  argv[n++] = "--config";
  argv[n++] = config;
  for (size_t i = 0; args && args[i]; i++) {
    assert_true(n < 63);
    argv[n++] = args[i];
  }
  argv[n] = NULL;
  return harness_run_program(NULL, o, r, argv);
}

int harness_run(const harness_opts *o, harness_result *r, const char *first, ...) {
  const char *argv[256];
  int argc = 0;
  va_list ap;
  va_start(ap, first);
  for (const char *a = first; a && argc < 255; a = va_arg(ap, const char *))
    argv[argc++] = a;
  va_end(ap);
  argv[argc] = NULL;
  return harness_run_program(NULL, o, r, argv);
}

int harness_run_sh(const harness_opts *o, harness_result *r, const char *args) {
  char *script;
  int rc;
  if (asprintf(&script, "exec \"$0\" %s", args) < 0)
    fail_msg("out of memory");
  {
    const char *argv[] = {"-c", script, harness_calhost(), NULL};
    rc = harness_run_program("/bin/sh", o, r, argv);
  }
  free(script);
  return rc;
}

int harness_shell(const harness_opts *o, harness_result *r, const char *cmdline) {
  const char *argv[] = {"-c", cmdline, NULL};
  return harness_run_program("/bin/sh", o, r, argv);
}
