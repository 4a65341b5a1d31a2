/*
 * files.c: opening a file that must be a regular file (files.h).
 */
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
