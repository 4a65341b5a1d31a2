/*
 * interpose.c: the system-call wrappers behind interpose.h. Linked into the
 * reliability test programs only (never into calhost). Forwards to the raw
 * system calls with syscall(2), so it needs neither dlsym nor libc's
 * internals and coexists with ASan's (weak) interceptors.
 */
#define _GNU_SOURCE
#include "interpose.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static struct {
  volatile int armed;
  char prefix[512];
  size_t prefix_len;
  int mask;
  unsigned nth;
  ip_action action;
  int err;
  int sticky;
  ip_hook_fn hook;
  unsigned calls, fired;
  int last_kind;
} rule;

void ip_arm(const char *prefix, int mask, unsigned nth, ip_action action, int err, int sticky,
            ip_hook_fn hook) {
  rule.armed = 0;
  snprintf(rule.prefix, sizeof rule.prefix, "%s", prefix ? prefix : "");
  rule.prefix_len = strlen(rule.prefix);
  rule.mask = mask;
  rule.nth = nth ? nth : 1;
  rule.action = action;
  rule.err = err;
  rule.sticky = sticky;
  rule.hook = hook;
  rule.calls = rule.fired = 0;
  rule.last_kind = 0;
  rule.armed = 1;
}

void ip_disarm(void) { rule.armed = 0; }
unsigned ip_calls(void) { return rule.calls; }
unsigned ip_fired(void) { return rule.fired; }
int ip_last_kind(void) { return rule.last_kind; }

const char *ip_kind_name(int kind) {
  switch (kind) {
  case IP_OPEN: return "open";
  case IP_WRITE: return "write";
  case IP_TRUNC: return "ftruncate";
  case IP_FSYNC: return "fsync";
  case IP_RENAME: return "rename";
  case IP_UNLINK: return "unlink";
  case IP_CLOSE: return "close";
  case IP_LOCK: return "flock";
  default: return "none";
  }
}

static int path_matches(const char *path) {
  if (!path)
    return 0;
  if (rule.prefix_len == 0)
    return 1;
  return strncmp(path, rule.prefix, rule.prefix_len) == 0;
}

static int fd_matches(int fd) {
  char link[64], target[1024];
  if (rule.prefix_len == 0)
    return 1;
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = syscall(SYS_readlink, link, target, sizeof target - 1);
  if (n <= 0)
    return 0;
  target[n] = '\0';
  return path_matches(target);
}

/* Returns 0 to perform the call, -1 to fail it (errno set). */
static int check(int kind, const char *path, int fd) {
  if (!rule.armed || !(rule.mask & kind))
    return 0;
  if (path ? !path_matches(path) : !fd_matches(fd))
    return 0;
  unsigned n = ++rule.calls;
  if (n < rule.nth || (n > rule.nth && !rule.sticky))
    return 0;
  rule.fired++;
  rule.last_kind = kind;
  switch (rule.action) {
  case IP_KILL:
    raise(SIGKILL);
    return 0;
  case IP_STOP:
    raise(SIGSTOP);
    return 0;
  case IP_FAIL:
    errno = rule.err;
    return -1;
  case IP_HOOK: {
    int saved = rule.armed;
    rule.armed = 0; /* the hook may do I/O of its own */
    if (rule.hook) {
      char resolved[1024] = "";
      if (!path && fd >= 0) {
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t k = syscall(SYS_readlink, link, resolved, sizeof resolved - 1);
        if (k > 0)
          resolved[k] = '\0';
        path = resolved;
      }
      rule.hook(kind, path);
    }
    rule.armed = saved;
    return 0;
  }
  default:
    return 0;
  }
}

static int open_is_write(int flags) {
  return (flags & (O_CREAT | O_WRONLY | O_RDWR | O_TRUNC)) != 0;
}

int open(const char *path, int flags, ...) {
  mode_t mode = 0;
  if (flags & (O_CREAT | __O_TMPFILE)) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  if (open_is_write(flags) && check(IP_OPEN, path, -1))
    return -1;
  return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

int open64(const char *path, int flags, ...) __attribute__((alias("open")));

int openat(int dirfd, const char *path, int flags, ...) {
  mode_t mode = 0;
  if (flags & (O_CREAT | __O_TMPFILE)) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  if (open_is_write(flags) && check(IP_OPEN, path[0] == '/' ? path : NULL, dirfd))
    return -1;
  return (int)syscall(SYS_openat, dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...) __attribute__((alias("openat")));

ssize_t write(int fd, const void *buf, size_t count) {
  if (check(IP_WRITE, NULL, fd))
    return -1;
  return syscall(SYS_write, fd, buf, count);
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset) {
  if (check(IP_WRITE, NULL, fd))
    return -1;
  return syscall(SYS_pwrite64, fd, buf, count, offset);
}

ssize_t pwrite64(int fd, const void *buf, size_t count, off_t offset)
    __attribute__((alias("pwrite")));

ssize_t writev(int fd, const struct iovec *iov, int iovcnt) {
  if (check(IP_WRITE, NULL, fd))
    return -1;
  return syscall(SYS_writev, fd, iov, iovcnt);
}

int ftruncate(int fd, off_t length) {
  if (check(IP_TRUNC, NULL, fd))
    return -1;
  return (int)syscall(SYS_ftruncate, fd, length);
}

int ftruncate64(int fd, off_t length) __attribute__((alias("ftruncate")));

int fsync(int fd) {
  if (check(IP_FSYNC, NULL, fd))
    return -1;
  return (int)syscall(SYS_fsync, fd);
}

int fdatasync(int fd) {
  if (check(IP_FSYNC, NULL, fd))
    return -1;
  return (int)syscall(SYS_fdatasync, fd);
}

int rename(const char *from, const char *to) {
  if (check(IP_RENAME, path_matches(from) ? from : to, -1))
    return -1;
  return (int)syscall(SYS_renameat, AT_FDCWD, from, AT_FDCWD, to);
}

int renameat(int fromfd, const char *from, int tofd, const char *to) {
  const char *p = from[0] == '/' ? from : NULL;
  if (check(IP_RENAME, p, p ? -1 : fromfd))
    return -1;
  return (int)syscall(SYS_renameat, fromfd, from, tofd, to);
}

int unlink(const char *path) {
  if (check(IP_UNLINK, path, -1))
    return -1;
  return (int)syscall(SYS_unlinkat, AT_FDCWD, path, 0);
}

int close(int fd) {
  if (check(IP_CLOSE, NULL, fd))
    return -1;
  return (int)syscall(SYS_close, fd);
}

int flock(int fd, int operation) {
  if ((operation & (LOCK_EX | LOCK_SH)) && check(IP_LOCK, NULL, fd))
    return -1;
  return (int)syscall(SYS_flock, fd, operation);
}
