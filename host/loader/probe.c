/*
 * probe.c: running plugin code in a forked child (probe.h). After
 * GStreamer's plugin scanner: the child loads and negotiates, the parent
 * reads the answer through a pipe with a deadline and reports a signal, an
 * early exit or a hang in words.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "module.h"
#include "probe.h"

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int calhost_run_in_child(void (*fn)(void *arg, int fd), void *arg, double timeout_seconds,
                         int capture_fd, char *buf, size_t cap, char *why, size_t why_cap) {
  int fds[2], status = 0, timed_out = 0;
  size_t used = 0;
  pid_t pid;
  double deadline;
  if (timeout_seconds <= 0)
    timeout_seconds = 10;
  if (cap)
    buf[0] = '\0';
  if (pipe2(fds, O_CLOEXEC) != 0) {
    snprintf(why, why_cap, "pipe: %s", strerror(errno));
    return -1;
  }
  fflush(NULL);
  pid = fork();
  if (pid < 0) {
    snprintf(why, why_cap, "fork: %s", strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    static const int crash[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS};
    int out = capture_fd >= 0 ? capture_fd : open("/dev/null", O_WRONLY | O_CLOEXEC);
    close(fds[0]);
    /* Let a crash be a crash (a sanitizer's handler would turn it into an
     * exit status), and keep the plugin away from the host's stdout. */
    for (size_t i = 0; i < sizeof crash / sizeof crash[0]; i++)
      signal(crash[i], SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    if (out >= 0)
      dup2(out, STDOUT_FILENO);
    fn(arg, fds[1]);
    _exit(0);
  }
  close(fds[1]);
  deadline = now_seconds() + timeout_seconds;
  for (;;) {
    double left = deadline - now_seconds();
    struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
    char tmp[4096];
    int pr;
    ssize_t n;
    if (left <= 0) {
      timed_out = 1;
      break;
    }
    pr = poll(&pfd, 1, (int)(left * 1000) + 1);
    if (pr < 0 && errno == EINTR)
      continue;
    if (pr <= 0)
      continue; /* deadline re-checked above */
    n = read(fds[0], tmp, sizeof tmp);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break; /* EOF: the child closed its end (exited or crashed) */
    for (ssize_t i = 0; i < n && used + 1 < cap; i++)
      buf[used++] = tmp[i];
    if (cap)
      buf[used] = '\0';
  }
  close(fds[0]);
  if (timed_out) {
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    snprintf(why, why_cap, "timed out after %g s", timeout_seconds);
    return -1;
  }
  /* EOF seen: the child is exiting; give it until the deadline to do so. */
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid)
      break;
    if (w < 0 && errno != EINTR) {
      snprintf(why, why_cap, "waitpid: %s", strerror(errno));
      return -1;
    }
    if (now_seconds() > deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      snprintf(why, why_cap, "timed out after %g s", timeout_seconds);
      return -1;
    }
    usleep(1000);
  }
  if (WIFSIGNALED(status)) {
    char sig[64];
    snprintf(why, why_cap, "crashed (%s)", calhost_signal_text(WTERMSIG(status), sig, sizeof sig));
    return -1;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    snprintf(why, why_cap, "exited with status %d", WEXITSTATUS(status));
    return -1;
  }
  return 0;
}

/* ---- the probe ---- */

typedef struct probe_args {
  const char *path;
  uint32_t host_min, host_max;
  const calhost_services_hooks *hooks;
} probe_args;

static void put(int fd, const char *key, const char *value) {
  char line[2048];
  size_t n = (size_t)snprintf(line, sizeof line, "%s\t", key);
  for (const char *v = value ? value : ""; *v && n + 2 < sizeof line; v++)
    line[n++] = ((unsigned char)*v < 0x20 || *v == 0x7f) ? '?' : *v;
  line[n++] = '\n';
  for (size_t off = 0; off < n;) {
    ssize_t w = write(fd, line + off, n - off);
    if (w <= 0)
      return;
    off += (size_t)w;
  }
}

static void probe_child(void *arg, int fd) {
  probe_args *a = arg;
  char err[1024], num[64];
  calhost_host_services svc;
  calhost_services_context ctx;
  calhost_plugin_vtable vt;
  uint32_t chosen, pmin, pmax;
  calhost_module *m = calhost_module_open(a->path, err, sizeof err);
  calhost_services_init(&svc, &ctx, a->hooks, NULL);
  if (!m) {
    char *msg = NULL;
    if (asprintf(&msg, "cannot load: %s", err) < 0)
      msg = NULL;
    put(fd, "reason", msg ? msg : err);
    put(fd, "end", "");
    return;
  }
  int rc = calhost_loader_negotiate(m, a->host_min, a->host_max, &svc, &vt, &chosen, &pmin, &pmax,
                                    err, sizeof err);
  snprintf(num, sizeof num, "%u %u %u", chosen, pmin, pmax);
  put(fd, "abi", num);
  if (rc != 0) {
    put(fd, "reason", err);
  } else {
    put(fd, "backend", vt.backend_name);
    put(fd, "implementation", vt.implementation_version);
    put(fd, "description", vt.description);
    for (size_t i = 0; vt.operators[i]; i++)
      put(fd, "operator", vt.operators[i]);
    put(fd, "ok", "1");
  }
  put(fd, "end", "");
}

void calhost_probe(const char *path, uint32_t host_min, uint32_t host_max, double timeout_seconds,
                   const calhost_services_hooks *hooks, calhost_probe_result *r) {
  probe_args a = {path, host_min, host_max, hooks};
  char why[512];
  char *buf = malloc(65536), *line, *save = NULL;
  int rc, complete = 0;
  memset(r, 0, sizeof *r);
  if (!buf) {
    snprintf(r->reason, sizeof r->reason, "out of memory");
    return;
  }
  rc = calhost_run_in_child(probe_child, &a, timeout_seconds, -1, buf, 65536, why, sizeof why);
  for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *tab = strchr(line, '\t'), *v;
    if (!tab)
      continue;
    *tab = '\0';
    v = tab + 1;
    if (!strcmp(line, "abi"))
      sscanf(v, "%u %u %u", &r->chosen, &r->plugin_min, &r->plugin_max);
    else if (!strcmp(line, "reason"))
      snprintf(r->reason, sizeof r->reason, "%s", v);
    else if (!strcmp(line, "backend"))
      snprintf(r->backend, sizeof r->backend, "%s", v);
    else if (!strcmp(line, "implementation"))
      snprintf(r->implementation_version, sizeof r->implementation_version, "%s", v);
    else if (!strcmp(line, "description"))
      snprintf(r->description, sizeof r->description, "%s", v);
    else if (!strcmp(line, "operator")) {
      char **ops = realloc(r->operators, (r->operator_count + 1) * sizeof *ops);
      if (ops) {
        r->operators = ops;
        if ((ops[r->operator_count] = strdup(v)))
          r->operator_count++;
      }
    } else if (!strcmp(line, "ok"))
      r->ok = 1;
    else if (!strcmp(line, "end"))
      complete = 1;
  }
  free(buf);
  if (rc != 0 || !complete) {
    r->ok = 0;
    if (rc != 0 && !strncmp(why, "crashed ", 8))
      snprintf(r->reason, sizeof r->reason, "crashed during negotiation %s", why + 8);
    else if (rc != 0 && !strncmp(why, "timed out ", 10))
      snprintf(r->reason, sizeof r->reason, "timed out during negotiation (%s)", why + 10);
    else if (rc != 0)
      snprintf(r->reason, sizeof r->reason, "%s during negotiation", why);
    else
      snprintf(r->reason, sizeof r->reason, "the probe ended without an answer");
  }
}

void calhost_probe_result_free(calhost_probe_result *r) {
  for (size_t i = 0; i < r->operator_count; i++)
    free(r->operators[i]);
  free(r->operators);
  r->operators = NULL;
  r->operator_count = 0;
}
