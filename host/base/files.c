/*
 * files.c: opening a file that must be a regular file, and checking that
 * a file can be written (files.h).
 */
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
                         S_ISDIR(m)    ? "a directory"
                         : S_ISFIFO(m) ? "a FIFO"
                         : S_ISCHR(m)  ? "a character device"
                         : S_ISBLK(m)  ? "a block device"
                                       : "a socket");
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

int base_path_writable(const char *path, int make_dirs, char *why, size_t cap) {
  struct stat st;
  char dir[4096];
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
