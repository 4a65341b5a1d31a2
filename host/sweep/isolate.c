/*
 * isolate.c: fork-based isolation of a plugin's sweeps (see isolate.h).
 */
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

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *calhost_isolate_signal_name(int sig) {
  switch (sig) {
  case SIGSEGV:
    return "SIGSEGV";
  case SIGABRT:
    return "SIGABRT";
  case SIGBUS:
    return "SIGBUS";
  case SIGFPE:
    return "SIGFPE";
  case SIGILL:
    return "SIGILL";
  case SIGKILL:
    return "SIGKILL";
  case SIGTERM:
    return "SIGTERM";
  case SIGINT:
    return "SIGINT";
  case SIGPIPE:
    return "SIGPIPE";
  case SIGTRAP:
    return "SIGTRAP";
  }
  return "signal";
}

static void set_nonblock(int fd) {
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0)
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void child_main(int rec_fd, int out_fd, calhost_child_fn child, void *user) {
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGPIPE, SIG_IGN);
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
  if (out_fd != STDOUT_FILENO) {
    dup2(out_fd, STDOUT_FILENO);
    close(out_fd);
  }
  int rc = child(user, rec_fd);
  fflush(stdout);
  _exit(rc);
}

/* Reads what is available on fd; returns 1 data, 0 EOF, -1 nothing now. */
static int drain(int fd, calhost_proto_reader *rd, calhost_child_outcome *out) {
  unsigned char buf[8192];
  ssize_t n = read(fd, buf, sizeof buf);
  if (n == 0)
    return 0;
  if (n < 0)
    return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? -1 : 0;
  if (rd) {
    if (calhost_proto_reader_feed(rd, buf, (size_t)n) != 0)
      return 0;
  } else {
    size_t have = out->output_total < CALHOST_CHILD_OUTPUT_MAX - 1 ? out->output_total
                                                                   : CALHOST_CHILD_OUTPUT_MAX - 1;
    size_t room = CALHOST_CHILD_OUTPUT_MAX - 1 - have;
    size_t k = (size_t)n < room ? (size_t)n : room;
    memcpy(out->output + have, buf, k);
    out->output[have + k] = '\0';
    out->output_total += (size_t)n;
  }
  return 1;
}

static void dispatch(calhost_proto_reader *rd, const calhost_isolate_options *o,
                     calhost_record_fn on_record, void *user, calhost_child_outcome *out) {
  calhost_proto_msg m;
  int r;
  while ((r = calhost_proto_reader_next(rd, &m)) == 1) {
    if (m.type == o->done_type)
      out->saw_done = 1;
    if (on_record)
      on_record(user, &m);
  }
}

int calhost_isolate_run(const calhost_isolate_options *o, calhost_child_fn child, void *child_user,
                        calhost_record_fn on_record, void *parent_user,
                        calhost_child_outcome *out) {
  memset(out, 0, sizeof *out);
  int rec[2], cap[2];
  if (pipe(rec) != 0) {
    out->end = CALHOST_CHILD_START_FAILED;
    snprintf(out->message, sizeof out->message, "pipe: %s", strerror(errno));
    return -1;
  }
  if (pipe(cap) != 0) {
    close(rec[0]);
    close(rec[1]);
    out->end = CALHOST_CHILD_START_FAILED;
    snprintf(out->message, sizeof out->message, "pipe: %s", strerror(errno));
    return -1;
  }
  fflush(NULL);
  double t0 = now_s();
  pid_t pid = fork();
  if (pid < 0) {
    out->end = CALHOST_CHILD_START_FAILED;
    snprintf(out->message, sizeof out->message, "fork: %s", strerror(errno));
    close(rec[0]);
    close(rec[1]);
    close(cap[0]);
    close(cap[1]);
    return -1;
  }
  if (pid == 0) {
    close(rec[0]);
    close(cap[0]);
    child_main(rec[1], cap[1], child, child_user);
  }
  close(rec[1]);
  close(cap[1]);
  set_nonblock(rec[0]);
  set_nonblock(cap[0]);

  calhost_proto_reader rd = {0};
  int rec_open = 1, cap_open = 1, reaped = 0, status = 0, killed_for = 0;
  double deadline = o->timeout_seconds > 0 ? t0 + o->timeout_seconds : 0;
  while (!reaped || rec_open) {
    if (!killed_for && o->cancel_flag && *o->cancel_flag) {
      kill(pid, SIGKILL);
      killed_for = CALHOST_CHILD_CANCELLED;
    } else if (!killed_for && deadline > 0 && now_s() >= deadline) {
      kill(pid, SIGKILL);
      killed_for = CALHOST_CHILD_TIMEOUT;
    }
    struct pollfd pf[2];
    nfds_t np = 0;
    if (rec_open)
      pf[np++] = (struct pollfd){.fd = rec[0], .events = POLLIN};
    if (cap_open)
      pf[np++] = (struct pollfd){.fd = cap[0], .events = POLLIN};
    int wait_ms = 50;
    if (np > 0) {
      int pr = poll(pf, np, reaped ? 0 : wait_ms);
      for (nfds_t i = 0; pr > 0 && i < np; i++) {
        if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
          continue;
        int is_rec = pf[i].fd == rec[0];
        int d;
        while ((d = drain(pf[i].fd, is_rec ? &rd : NULL, out)) == 1)
          if (is_rec)
            dispatch(&rd, o, on_record, parent_user, out);
        if (d == 0) {
          if (is_rec)
            rec_open = 0;
          else
            cap_open = 0;
        }
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
  /* Last bytes of output, without blocking. */
  if (cap_open)
    while (drain(cap[0], NULL, out) == 1)
      ;
  close(rec[0]);
  close(cap[0]);
  out->seconds = now_s() - t0;
  out->truncated = calhost_proto_reader_pending(&rd) > 0;
  int corrupt = rd.corrupt;

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
             calhost_isolate_signal_name(out->signal));
  } else if (WIFEXITED(status) && (WEXITSTATUS(status) != 0 || !out->saw_done)) {
    out->end = CALHOST_CHILD_EXITED;
    out->exit_code = WEXITSTATUS(status);
    snprintf(out->message, sizeof out->message, "exited with status %d before finishing%s",
             out->exit_code, out->exit_code == 0 ? " (exit() called by the plugin?)" : "");
  } else if (corrupt || out->truncated) {
    out->end = CALHOST_CHILD_PROTOCOL;
    snprintf(out->message, sizeof out->message, "record stream %s",
             corrupt ? rd.error : "truncated");
  } else {
    out->end = CALHOST_CHILD_OK;
  }
  if (out->end != CALHOST_CHILD_PROTOCOL && (corrupt || out->truncated)) {
    size_t l = strlen(out->message);
    snprintf(out->message + l, sizeof out->message - l, "; record stream %s",
             corrupt ? "corrupt" : "truncated");
  }
  calhost_proto_reader_free(&rd);
  return out->end == CALHOST_CHILD_OK ? 0 : -1;
}
