/*
 * paths.h: file-system facts about the running program shared by the parts
 * that find the installation relative to the executable (plugin discovery
 * in host/loader, the default configuration search in host/config). Part of
 * the base layer: depends on nothing but libc (Linux /proc; Windows
 * GetModuleFileNameW).
 */
#ifndef CALHOST_BASE_PATHS_H
#define CALHOST_BASE_PATHS_H

#include <stddef.h>

/* Writes the directory of the running executable (from /proc/self/exe:
 * absolute and canonical, no trailing slash; Windows: the module file name,
 * UTF-8, no trailing backslash) into buf. Returns 0, or -1
 * when it cannot be read or does not fit in capacity bytes (buf is then
 * unchanged). */
int base_exe_dir(char *buf, size_t capacity);

#endif
