/*
 * paths.c: the running executable's directory (see paths.h).
 */
#include "paths.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

int base_exe_dir(char *buf, size_t capacity) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  char *slash;
  if (n <= 0)
    return -1;
  exe[n] = '\0';
  slash = strrchr(exe, '/');
  if (!slash || (size_t)(slash - exe) + 1 > capacity)
    return -1;
  *slash = '\0';
  memcpy(buf, exe, (size_t)(slash - exe) + 1);
  return 0;
}
