/*
 * isolate.c: the host's one fork-and-timeout runtime for plugin code (see
 * isolate.h) and its signal-name table (the clock: base/clock.c).
 */
#define _GNU_SOURCE
#include "isolate.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "base/clock.h"

const char *isolate_signal_name(int sig) {
  static const struct {
    int sig;
    const char *name;
  } names[] = {
      {SIGSEGV, "SIGSEGV"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
      {SIGILL, "SIGILL"},   {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"},
      {SIGPIPE, "SIGPIPE"}, {SIGTRAP, "SIGTRAP"}, {SIGSYS, "SIGSYS"},   {SIGALRM, "SIGALRM"},
      {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}, {SIGHUP, "SIGHUP"},   {SIGQUIT, "SIGQUIT"},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].sig == sig)
      return names[i].name;
  return "signal";
}

static void set_nonblock(int fd) {
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0)
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static int in_child;

int isolate_in_child(void) {
  return in_child;
}

static void child_main(pid_t parent, int rec_fd, int out_fd, int err_fd, isolate_child_fn child,
                       void *user) {
  static const int crash[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS};
  /* Let a crash be a crash (a sanitizer's handler would turn it into an
   * exit status) and a hang be killable. */
  for (size_t i = 0; i < sizeof crash / sizeof crash[0]; i++)
    signal(crash[i], SIG_DFL);
  /* The host's SIGINT/SIGTERM/SIGHUP handlers commit finished work: a child
   * ends on them instead (the parent reports the interruption). */
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGHUP, SIG_DFL);
  signal(SIGPIPE, SIG_IGN);
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent)
    _exit(125); /* the parent died before prctl */
#endif
  in_child = 1;
  dup2(out_fd, STDOUT_FILENO); /* dup2 clears close-on-exec on the copy */
  close(out_fd);
  if (err_fd >= 0) {
    dup2(err_fd, STDERR_FILENO);
    close(err_fd);
  }
  int rc = child(user, rec_fd);
  fflush(NULL); /* what the plugin left in stdio buffers is output too */
  _exit(rc);
}

/* Keeps the first bytes of a capture stream in buf (cap bytes with NUL). */
static void keep(char *buf, size_t *total, const unsigned char *data, size_t n) {
  size_t have = *total < CALHOST_CHILD_OUTPUT_MAX - 1 ? *total : CALHOST_CHILD_OUTPUT_MAX - 1;
  size_t room = CALHOST_CHILD_OUTPUT_MAX - 1 - have;
  size_t k = n < room ? n : room;
  memcpy(buf + have, data, k);
  buf[have + k] = '\0';
  *total += n;
}

/* The parent's end of one pipe: records (rd) or a capture stream. */
typedef struct stream {
  int fd, open;
  isolate_proto_reader *rd; /* NULL: a capture stream */
  char *buf;
  size_t *total;
} stream;

/* Reads what is available; returns 1 data, 0 EOF (or unusable), -1 nothing now. */
static int drain(stream *s) {
  unsigned char buf[8192];
  ssize_t n = read(s->fd, buf, sizeof buf);
  if (n == 0)
    return 0;
  if (n < 0)
    return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? -1 : 0;
  if (s->rd)
    return isolate_proto_reader_feed(s->rd, buf, (size_t)n) != 0 ? 0 : 1;
  keep(s->buf, s->total, buf, (size_t)n);
  return 1;
}

static void dispatch(isolate_proto_reader *rd, const isolate_options *o,
                     isolate_record_fn on_record, void *user, isolate_child_outcome *out) {
  isolate_proto_msg m;
  while (isolate_proto_reader_next(rd, &m) == 1) {
    if (m.type == o->done_type)
      out->saw_done = 1;
    if (on_record)
      on_record(user, &m);
  }
}

static void close_pair(int p[2]) {
  if (p[0] >= 0)
    close(p[0]);
  if (p[1] >= 0)
    close(p[1]);
  p[0] = p[1] = -1;
}

/* Reads the child's streams (records dispatched to on_record as they
 * come) until it is reaped and its record stream is closed, killing it
 * when cancelled or past the timeout (*killed_for: CALHOST_CHILD_CANCELLED
 * or CALHOST_CHILD_TIMEOUT, else 0). Returns its wait status. */
static int watch_child(const isolate_options *o, pid_t pid, double t0, stream st[3],
                       isolate_proto_reader *rdp, isolate_record_fn on_record, void *parent_user,
                       isolate_child_outcome *out, int *killed_for_out) {
  int reaped = 0, status = 0, killed_for = 0;
  double deadline = o->timeout_seconds > 0 ? t0 + o->timeout_seconds : 0;
  while (!reaped || st[0].open) {
    if (!killed_for && o->cancel_flag && *o->cancel_flag) {
      kill(pid, SIGKILL);
      killed_for = CALHOST_CHILD_CANCELLED;
    } else if (!killed_for && deadline > 0 && base_monotonic_seconds() >= deadline) {
      kill(pid, SIGKILL);
      killed_for = CALHOST_CHILD_TIMEOUT;
    }
    struct pollfd pf[3];
    stream *ps[3];
    nfds_t np = 0;
    for (int i = 0; i < 3; i++)
      if (st[i].open) {
        ps[np] = &st[i];
        pf[np++] = (struct pollfd){.fd = st[i].fd, .events = POLLIN};
      }
    if (np > 0) {
      int pr = poll(pf, np, reaped ? 0 : 50);
      for (nfds_t i = 0; pr > 0 && i < np; i++) {
        if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
          continue;
        int d;
        while ((d = drain(ps[i])) == 1)
          if (ps[i]->rd)
            dispatch(rdp, o, on_record, parent_user, out);
        if (d == 0)
          ps[i]->open = 0;
      }
      if (pr == 0 && reaped)
        break; /* child gone and nothing more to read (a grandchild may hold the pipe) */
    } else if (!reaped) {
      struct timespec ts = {0, 20 * 1000 * 1000};
      nanosleep(&ts, NULL);
    }
    if (!reaped) {
      pid_t w = waitpid(pid, &status, WNOHANG);
      if (w == pid)
        reaped = 1;
      else if (w < 0 && errno != EINTR)
        reaped = 1;
    }
  }
  *killed_for_out = killed_for;
  return status;
}

/* The child's end (out->end and out->message) from how it was killed or
 * ended and from its record stream's state. */
static void classify_end(const isolate_options *o, int status, int killed_for,
                         const isolate_proto_reader *rdp, isolate_child_outcome *out) {
  int corrupt = rdp->corrupt;
  if (killed_for == CALHOST_CHILD_CANCELLED) {
    out->end = CALHOST_CHILD_CANCELLED;
    snprintf(out->message, sizeof out->message, "cancelled");
  } else if (killed_for == CALHOST_CHILD_TIMEOUT) {
    out->end = CALHOST_CHILD_TIMEOUT;
    snprintf(out->message, sizeof out->message, "timed out after %.3g s (killed)",
             o->timeout_seconds);
  } else if (WIFSIGNALED(status)) {
    out->end = CALHOST_CHILD_SIGNALED;
    out->signal = WTERMSIG(status);
    snprintf(out->message, sizeof out->message, "killed by signal %d (%s)", out->signal,
             isolate_signal_name(out->signal));
  } else if (WIFEXITED(status) && (WEXITSTATUS(status) != 0 || !out->saw_done)) {
    out->end = CALHOST_CHILD_EXITED;
    out->exit_code = WEXITSTATUS(status);
    snprintf(out->message, sizeof out->message, "exited with status %d before finishing%s",
             out->exit_code, out->exit_code == 0 ? " (exit() called by the plugin?)" : "");
  } else if (corrupt || out->truncated) {
    out->end = CALHOST_CHILD_PROTOCOL;
    snprintf(out->message, sizeof out->message, "record stream %s",
             corrupt ? rdp->error : "truncated");
  } else {
    out->end = CALHOST_CHILD_OK;
  }
  if (out->end != CALHOST_CHILD_PROTOCOL && (corrupt || out->truncated)) {
    size_t l = strlen(out->message);
    snprintf(out->message + l, sizeof out->message - l, "; record stream %s",
             corrupt ? "corrupt" : "truncated");
  }
}

int isolate_run(const isolate_options *o, isolate_child_fn child, void *child_user,
                isolate_record_fn on_record, void *parent_user, isolate_child_outcome *out) {
  memset(out, 0, sizeof *out);
  int rec[2] = {-1, -1}, cap[2] = {-1, -1}, ecap[2] = {-1, -1};
  pid_t pid = -1, parent = getpid();
  double t0 = 0;
  const char *step = "pipe";
  if (pipe2(rec, O_CLOEXEC) == 0 && pipe2(cap, O_CLOEXEC) == 0 &&
      (!o->capture_stderr || pipe2(ecap, O_CLOEXEC) == 0)) {
    fflush(NULL);
    t0 = base_monotonic_seconds();
    step = "fork";
    pid = fork();
  }
  if (pid < 0) {
    out->end = CALHOST_CHILD_START_FAILED;
    snprintf(out->message, sizeof out->message, "%s: %s", step, strerror(errno));
    close_pair(rec);
    close_pair(cap);
    close_pair(ecap);
    return -1;
  }
  if (pid == 0) {
    close(rec[0]);
    close(cap[0]);
    if (ecap[0] >= 0)
      close(ecap[0]);
    child_main(parent, rec[1], cap[1], ecap[1], child, child_user);
  }
  close(rec[1]);
  close(cap[1]);
  if (ecap[1] >= 0)
    close(ecap[1]);

  isolate_proto_reader rd = {0};
  stream st[3] = {{rec[0], 1, &rd, NULL, NULL},
                  {cap[0], 1, NULL, out->output, &out->output_total},
                  {ecap[0], ecap[0] >= 0, NULL, out->errors, &out->errors_total}};
  for (int i = 0; i < 3; i++)
    if (st[i].open)
      set_nonblock(st[i].fd);
  int killed_for = 0;
  int status = watch_child(o, pid, t0, st, &rd, on_record, parent_user, out, &killed_for);
  /* Last bytes of output, without blocking. */
  for (int i = 1; i < 3; i++)
    if (st[i].open)
      while (drain(&st[i]) == 1)
        ;
  for (int i = 0; i < 3; i++)
    if (st[i].fd >= 0)
      close(st[i].fd);
  out->seconds = base_monotonic_seconds() - t0;
  out->truncated = isolate_proto_reader_pending(&rd) > 0;

  classify_end(o, status, killed_for, &rd, out);
  isolate_proto_reader_free(&rd);
  return out->end == CALHOST_CHILD_OK ? 0 : -1;
}
