/*
 * files.h: the one way the host opens a file it must read whole (a
 * configuration, a model to hash): never blocking on the open, refusing
 * what is not a regular file before any read. Part of the base layer:
 * depends on nothing but libc (POSIX).
 */
#ifndef CALHOST_BASE_FILES_H
#define CALHOST_BASE_FILES_H

#include <stddef.h>

/* Opens path for reading. The open does not block (a FIFO must not wait for
 * a writer); what is not a regular file is refused before any read ("PATH:
 * is not a regular file (a FIFO); refusing to read it"; likewise a
 * directory, a device or a socket), except the null device when
 * allow_null (it reads as empty). The descriptor is then made blocking and
 * close-on-exec. Returns it, or -1 with "PATH: message" in err (err may be
 * NULL). */
int base_open_regular(const char *path, int allow_null, char *err, size_t cap);

#endif
