/*
 * fsync_dir_fails.c: an LD_PRELOAD shim for cli_outputs: fsync of a
 * directory fails with EIO (the directory sync after a store commit's
 * rename), every other fsync is the real one. It lets a test see what
 * calibrate says when the rename succeeded but its durability is in doubt,
 * without a fault-injection build.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

__attribute__((visibility("default"))) int fsync(int fd) {
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    errno = EIO;
    return -1;
  }
  int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  if (!real) {
    errno = ENOSYS;
    return -1;
  }
  return real(fd);
}
