/*
 * files.c: opening a file that must be a regular file, checking that a
 * file can be written, and the one rule for output files (files.h).
 */
#define _GNU_SOURCE /* mkostemps */
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#include "str.h"

/* Nonzero when st is the null device. */
static int is_null_device(const struct stat *st) {
  struct stat null;
  return S_ISCHR(st->st_mode) && stat("/dev/null", &null) == 0 && S_ISCHR(null.st_mode) &&
         st->st_rdev == null.st_rdev;
}

int base_open_regular(const char *path, int allow_null, char *err, size_t cap) {
  struct stat st;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), e;
  if (fd < 0)
    return base_str_fail(err, cap, "%s: cannot open: %s", path, strerror(errno));
  if (fstat(fd, &st) != 0) {
    e = errno;
    close(fd);
    return base_str_fail(err, cap, "%s: cannot read: %s", path, strerror(e));
  }
  if (!S_ISREG(st.st_mode) && !(allow_null && is_null_device(&st))) {
    mode_t m = st.st_mode;
    close(fd);
    return base_str_fail(err, cap, "%s: is not a regular file (%s); refusing to read it", path,
                         base_file_kind(m));
  }
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    e = errno;
    close(fd);
    return base_str_fail(err, cap, "%s: cannot read: %s", path, strerror(e));
  }
  return fd;
}

int base_read_fd(int fd, size_t max, char **text, size_t *length) {
  char *buf = NULL;
  size_t len = 0, cap = 0;
  *text = NULL;
  *length = 0;
  for (;;) {
    if (len + 1 >= cap) { /* room for one more byte and the terminator */
      char *more = base_array_grow(buf, len + 1, &cap, 1, 8192);
      if (!more) {
        free(buf);
        errno = ENOMEM;
        return -1;
      }
      buf = more;
    }
    ssize_t n = read(fd, buf + len, cap - 1 - len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int e = errno;
      free(buf);
      errno = e;
      return -1;
    }
    if (n == 0)
      break;
    len += (size_t)n;
    if (len > max) {
      free(buf);
      errno = EFBIG;
      return -1;
    }
  }
  buf[len] = '\0';
  *text = buf;
  *length = len;
  return 0;
}

void base_file_mode_as_created(int fd) {
  mode_t mask = umask(0);
  umask(mask);
  (void)fchmod(fd, 0666 & ~mask);
}

const char *base_file_kind(unsigned mode) {
  mode_t m = (mode_t)mode;
  return S_ISREG(m)    ? NULL
         : S_ISDIR(m)  ? "a directory"
         : S_ISFIFO(m) ? "a FIFO"
         : S_ISCHR(m)  ? "a character device"
         : S_ISBLK(m)  ? "a block device"
         : S_ISSOCK(m) ? "a socket"
                       : "not a regular file";
}

/* 0 when what stands at path (followed) is a regular file or nothing. */
static int regular_or_absent(const char *path, char *why, size_t cap) {
  struct stat st;
  const char *kind;
  if (stat(path, &st) == 0 && (kind = base_file_kind(st.st_mode)) != NULL)
    return base_str_fail(why, cap, "it is %s, not a regular file; refusing to replace it", kind);
  return 0;
}

int base_path_writable(const char *path, int make_dirs, char *why, size_t cap) {
  struct stat st;
  char dir[4096];
  if (regular_or_absent(path, why, cap) != 0)
    return -1;
  if (stat(path, &st) == 0 && access(path, W_OK) != 0)
    return base_str_fail(why, cap, "it is not writable: %s", strerror(errno));
  snprintf(dir, sizeof dir, "%s", path);
  for (;;) {
    const char *d = dirname(dir); /* "." without a slash, "/" at the root */
    memmove(dir, d, strlen(d) + 1);
    if (stat(dir, &st) == 0) {
      if (!S_ISDIR(st.st_mode))
        return base_str_fail(why, cap, "%.400s is not a directory", dir);
      if (access(dir, W_OK | X_OK) != 0)
        return base_str_fail(why, cap, "directory %.400s: %s", dir, strerror(errno));
      return 0;
    }
    if (errno == ENOTDIR)
      return base_str_fail(why, cap, "a parent of it is not a directory");
    if (!make_dirs)
      return base_str_fail(why, cap, "its directory %.400s does not exist", dir);
    if (!strcmp(dir, ".") || !strcmp(dir, "/"))
      return 0;
  }
}

/* mkdir -p of the folder holding path: 0, or -1 with the reason in why. */
static int make_parent_dirs(const char *path, char *why, size_t cap) {
  char dir[4096];
  struct stat st;
  if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir)
    return base_str_fail(why, cap, "its name is too long");
  char *slash = strrchr(dir, '/');
  if (!slash || slash == dir)
    return 0; /* the current folder or the root */
  *slash = '\0';
  if (stat(dir, &st) == 0)
    return 0; /* base_path_writable judges it */
  for (char *p = dir + 1;; p++) {
    if (*p != '/' && *p)
      continue;
    char c = *p;
    *p = '\0';
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
      int e = errno;
      if (e == ENOTDIR)
        return base_str_fail(why, cap, "a parent of it is not a directory");
      return base_str_fail(why, cap, "cannot create its directory %.400s: %s", dir, strerror(e));
    }
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
      return base_str_fail(why, cap, "%.400s is not a directory", dir);
    *p = c;
    if (!c)
      return 0;
  }
}

int base_output_prepare(const char *path, char *why, size_t cap) {
  if (regular_or_absent(path, why, cap) != 0 || make_parent_dirs(path, why, cap) != 0)
    return -1;
  return base_path_writable(path, 0, why, cap);
}

int base_output_create(const char *path, const char *suffix, char *tmp, size_t tmp_cap, char *why,
                       size_t cap) {
  int n = snprintf(tmp, tmp_cap, "%s%s", path, suffix ? suffix : ".XXXXXX.tmp");
  if (n < 0 || (size_t)n >= tmp_cap)
    return base_str_fail(why, cap, "%s: name too long", path);
  int fd;
  if (suffix) {
    /* a stale file of a writer that died, or a planted link: removed (the
     * link itself, never what it leads to), then a fresh file created */
    if (unlink(tmp) != 0 && errno != ENOENT)
      return base_str_fail(why, cap, "%s: cannot remove the stale file: %s", tmp, strerror(errno));
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0666);
  } else {
    fd = mkostemps(tmp, 4, O_CLOEXEC); /* O_CREAT | O_EXCL, mode 0600 */
    if (fd >= 0)
      base_file_mode_as_created(fd);
  }
  if (fd < 0)
    return base_str_fail(why, cap, "%s: cannot create it: %s", tmp, strerror(errno));
  return fd;
}

int base_output_replace(const char *tmp, const char *path, char *why, size_t cap) {
  char r[300];
  if (regular_or_absent(path, r, sizeof r) != 0)
    return base_str_fail(why, cap, "%s: %s", path, r);
  if (rename(tmp, path) != 0)
    return base_str_fail(why, cap, "%s: cannot rename %s to it: %s", path, tmp, strerror(errno));
  return 0;
}
