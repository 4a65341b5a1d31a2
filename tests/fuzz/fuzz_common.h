/*
 * fuzz_common.h: small helpers shared by the fuzz targets: a private scratch
 * directory (on /dev/shm when possible, so fsync is cheap) removed at exit,
 * and writing an input to a file in it. Header-only; each target includes it
 * once.
 */
#ifndef CALHOST_FUZZ_COMMON_H
#define CALHOST_FUZZ_COMMON_H

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fuzz_dir[256];

__attribute__((unused)) static void fuzz_remove_dir(void) {
  DIR *d;
  struct dirent *e;
  char p[512];
  if (!fuzz_dir[0] || !(d = opendir(fuzz_dir)))
    return;
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
      snprintf(p, sizeof p, "%s/%s", fuzz_dir, e->d_name);
      unlink(p);
    }
  closedir(d);
  rmdir(fuzz_dir);
}

/* Creates the scratch directory once; aborts when it cannot (a fuzz run
 * without it would test nothing). */
__attribute__((unused)) static const char *fuzz_scratch(void) {
  if (fuzz_dir[0])
    return fuzz_dir;
  const char *bases[] = {"/dev/shm", getenv("TMPDIR"), "/tmp"};
  for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++) {
    if (!bases[i])
      continue;
    snprintf(fuzz_dir, sizeof fuzz_dir, "%s/calhost-fuzz-XXXXXX", bases[i]);
    if (mkdtemp(fuzz_dir)) {
      atexit(fuzz_remove_dir);
      return fuzz_dir;
    }
  }
  perror("calhost fuzz: mkdtemp");
  abort();
}

/* Writes data to DIR/name (replacing it) and returns the path (static). */
__attribute__((unused)) static const char *fuzz_write_file(const char *name, const uint8_t *data, size_t size) {
  static char path[512];
  snprintf(path, sizeof path, "%s/%s", fuzz_scratch(), name);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    perror(path);
    abort();
  }
  size_t off = 0;
  while (off < size) {
    ssize_t n = write(fd, data + off, size - off);
    if (n <= 0) {
      perror(path);
      abort();
    }
    off += (size_t)n;
  }
  close(fd);
  return path;
}

/* Reads a whole file into a malloc'd buffer; NULL when it cannot. */
__attribute__((unused)) static char *fuzz_read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 4096, len = 0, n;
  char *buf = malloc(cap);
  while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
    len += n;
    if (len == cap) {
      char *nb = realloc(buf, cap *= 2);
      if (!nb)
        free(buf);
      buf = nb;
    }
  }
  fclose(f);
  if (buf)
    *size = len;
  return buf;
}

#define FUZZ_CHECK(cond, ...)                                                                     \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      fprintf(stderr, "calhost fuzz: property violated: %s\n  ", #cond);                          \
      fprintf(stderr, __VA_ARGS__);                                                               \
      fputc('\n', stderr);                                                                        \
      abort();                                                                                    \
    }                                                                                             \
  } while (0)

#endif /* CALHOST_FUZZ_COMMON_H */
