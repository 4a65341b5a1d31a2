/*
 * loader_test_util.h: helpers shared by the loader's cmocka tests: where the
 * build tree's plugins are (CALHOST_BUILD_DIR), private temporary
 * directories, copying a plugin file, capturing a FILE report.
 */
#ifndef CALHOST_LOADER_TEST_UTIL_H
#define CALHOST_LOADER_TEST_UTIL_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The build tree (CALHOST_BUILD_DIR, set by ctest). */
static inline const char *build_dir(void) {
  const char *b = getenv("CALHOST_BUILD_DIR");
  return b && *b ? b : ".";
}

/* Writes the path of test plugin `name` (e.g. "test_good") into buf: in
 * lib/calhost/test-plugins, or in its unloadable/ subdirectory (the plugins
 * that fail negotiation) or its checker/ subdirectory (the checker's own; see
 * tests/plugins/CMakeLists.txt). */
static inline const char *test_plugin(char *buf, size_t cap, const char *name) {
  static const char *const dirs[] = {"", "unloadable/", "checker/"};
  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
    snprintf(buf, cap, "%s/lib/calhost/test-plugins/%s%s.so", build_dir(), dirs[i], name);
    if (access(buf, F_OK) == 0)
      break;
  }
  return buf;
}

/* Writes the path of the example plugin into buf. */
static inline const char *example_plugin(char *buf, size_t cap) {
  snprintf(buf, cap, "%s/lib/calhost/plugins/example.so", build_dir());
  return buf;
}

/* Creates a private (0700) temporary directory; returns buf or NULL. */
static inline char *make_tmpdir(char *buf, size_t cap) {
  snprintf(buf, cap, "/tmp/calhost-loader-test-XXXXXX");
  return mkdtemp(buf);
}

/* Copies src to dst with mode 0644; returns 0 or -1. */
static inline int copy_file(const char *src, const char *dst) {
  char chunk[65536];
  ssize_t n;
  int in = open(src, O_RDONLY), out, rc = 0;
  if (in < 0)
    return -1;
  out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out < 0) {
    close(in);
    return -1;
  }
  while ((n = read(in, chunk, sizeof chunk)) > 0)
    if (write(out, chunk, (size_t)n) != n)
      rc = -1;
  close(in);
  close(out);
  chmod(dst, 0644);
  return n < 0 ? -1 : rc;
}

/* Removes dir and the files in it (one level). */
static inline void remove_tmpdir(const char *dir) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0)
    fprintf(stderr, "could not remove %s\n", dir);
}

#endif /* CALHOST_LOADER_TEST_UTIL_H */
