/*
 * safety.c: the loader's trust checks on a plugin file before anything is
 * loaded from it. Like OpenPAM's openpam_check_path_owner_perms, it walks
 * every component of the resolved path from "/" through directory fds
 * (openat with O_NOFOLLOW, so a component cannot be swapped for a link
 * between check and use of that component) and refuses a file or directory
 * owned by neither root nor the effective user, or writable by group or
 * others. A sticky directory (e.g. /tmp) is accepted above the plugin's own
 * directory, since only its owner may rename what it contains.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader.h"
#include "base/str.h"

#ifndef O_PATH
#define O_PATH O_RDONLY
#endif

/* Checks owner and mode of one object; returns 0 or -1 with err filled. */
static int check_stat(const struct stat *st, const char *what, const char *path, int allow_sticky,
                      char *err, size_t err_cap) {
  uid_t me = geteuid();
  if (st->st_uid != 0 && st->st_uid != me)
    return base_str_fail(err, err_cap,
                         "%s %s is owned by uid %u, neither root nor the current user (uid %u)",
                         what, path, (unsigned)st->st_uid, (unsigned)me);
  if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(allow_sticky && (st->st_mode & S_ISVTX))) {
    const char *who = (st->st_mode & S_IWGRP) && (st->st_mode & S_IWOTH) ? "group and others"
                      : (st->st_mode & S_IWGRP)                          ? "group"
                                                                         : "others";
    return base_str_fail(err, err_cap, "%s %s is writable by %s (mode %04o)", what, path, who,
                         (unsigned)(st->st_mode & 07777));
  }
  return 0;
}

int loader_check_path(const char *path, char *err, size_t err_cap) {
  char *real = realpath(path, NULL);
  char *walk, *comp, *next;
  struct stat st;
  int dirfd, rc = -1;
  if (!real) {
    snprintf(err, err_cap, "cannot resolve %s: %s", path, strerror(errno));
    return -2;
  }
  dirfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0 || fstat(dirfd, &st) != 0) {
    snprintf(err, err_cap, "cannot open /: %s", strerror(errno));
    rc = -2;
    goto out;
  }
  walk = real + 1; /* realpath is absolute and canonical: no "." "..", no links */
  if (!*walk) {
    snprintf(err, err_cap, "%s is not a plugin file", real);
    goto out;
  }
  for (comp = walk;; comp = next) {
    char *slash = strchr(comp, '/');
    int last = slash == NULL;
    int fd;
    /* The directory just opened (dirfd) is checked now: sticky allowed
     * unless it is the plugin's own directory. */
    char saved = comp[-1];
    comp[-1] = '\0';
    if (check_stat(&st, "directory", comp == real + 1 ? "/" : real, !last, err, err_cap) != 0) {
      comp[-1] = saved;
      goto out;
    }
    comp[-1] = saved;
    if (slash)
      *slash = '\0';
    fd = openat(dirfd, comp, (last ? 0 : O_DIRECTORY) | O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
      snprintf(err, err_cap, "cannot open %s: %s", real, strerror(errno));
      rc = -2;
      if (fd >= 0)
        close(fd);
      goto out;
    }
    close(dirfd);
    dirfd = fd;
    if (last) {
      if (!S_ISREG(st.st_mode)) {
        snprintf(err, err_cap, "%s is not a regular file", real);
        goto out;
      }
      if (check_stat(&st, "file", real, 0, err, err_cap) != 0)
        goto out;
      rc = 0;
      goto out;
    }
    *slash = '/';
    next = slash + 1;
  }
out:
  if (dirfd >= 0)
    close(dirfd);
  free(real);
  return rc;
}
