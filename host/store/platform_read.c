/*
 * platform_read.c: the read loop both platform layers share (platform.h:
 * cs_plat_read_loop): a whole file into one NUL-terminated buffer, grown
 * when the file grew since it was measured. Each layer (platform_posix.c,
 * platform_win32.c) opens, checks and closes the file and gives its one
 * read call.
 */
#include <stdlib.h>

#include "platform.h"

calstore_status cs_plat_read_loop(void *file, cs_plat_read_fn read_some, uint64_t size,
                                  const char *path, char **data, size_t *len, calstore_error *err) {
  /* room for the file and its terminator; cap counts the file's bytes only */
  size_t alloc = (size_t)size + 2, cap = alloc - 1, n = 0;
  char *buf = malloc(alloc);
  if (!buf)
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, path, "out of memory reading %s", path);
  for (;;) {
    if (n == cap) { /* the file grew since it was measured */
      char *nb = cs_grow(buf, alloc + 1, &alloc, 1, 0);
      if (!nb) {
        free(buf);
        return cs_fail(err, CALSTORE_NO_MEMORY, 0, path, "out of memory reading %s", path);
      }
      buf = nb;
      cap = alloc - 1;
    }
    size_t got = 0;
    calstore_status st = read_some(file, buf + n, cap - n, &got, path, err);
    if (st != CALSTORE_OK) {
      free(buf);
      return st;
    }
    if (got == 0)
      break;
    n += got;
  }
  buf[n] = '\0';
  *data = buf;
  *len = n;
  return CALSTORE_OK;
}
