/*
 * replay_main.c: libFuzzer's standalone replay pattern. Linked instead of
 * -fsanitize=fuzzer into a normal (gcc or clang, optionally ASan) build of a
 * fuzz target, it runs LLVMFuzzerTestOneInput once on every file named on the
 * command line (a directory: on every regular file in it, sorted), so the
 * committed corpus under tests/fuzz/corpus/<target>/ is a regression test of
 * the ordinary ctest suite (see tests/reliability/CMakeLists.txt).
 *
 * Prints "replayed N inputs (B bytes)" and exits 0; a crash or an abort()
 * inside the target fails the test. Exit 1 when an argument cannot be read
 * or nothing was replayed.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static size_t replayed, replayed_bytes;

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return -1;
  }
  size_t cap = 4096, len = 0;
  uint8_t *buf = malloc(cap);
  size_t n;
  while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
    len += n;
    if (len == cap) {
      uint8_t *nb = realloc(buf, cap *= 2);
      if (!nb) {
        free(buf);
        buf = NULL;
      }
      buf = nb;
    }
  }
  fclose(f);
  if (!buf) {
    fprintf(stderr, "%s: out of memory\n", path);
    return -1;
  }
  /* Copy into an exact-size allocation so ASan catches reads past the end. */
  uint8_t *exact = malloc(len ? len : 1);
  if (!exact) {
    free(buf);
    return -1;
  }
  memcpy(exact, buf, len);
  free(buf);
  if (getenv("CALHOST_REPLAY_VERBOSE"))
    fprintf(stderr, "replay %s (%zu bytes)\n", path, len);
  LLVMFuzzerTestOneInput(exact, len);
  free(exact);
  replayed++;
  replayed_bytes += len;
  return 0;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) {
    perror(path);
    return -1;
  }
  if (!S_ISDIR(st.st_mode))
    return run_file(path);
  DIR *d = opendir(path);
  if (!d) {
    perror(path);
    return -1;
  }
  char **names = NULL;
  size_t count = 0, cap = 0;
  struct dirent *e;
  int rc = 0;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    if (count == cap) {
      char **nn = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof *names);
      if (!nn) {
        rc = -1;
        break;
      }
      names = nn;
    }
    names[count] = malloc(strlen(path) + strlen(e->d_name) + 2);
    if (!names[count]) {
      rc = -1;
      break;
    }
    sprintf(names[count], "%s/%s", path, e->d_name);
    count++;
  }
  closedir(d);
  if (count)
    qsort(names, count, sizeof *names, cmp_names);
  for (size_t i = 0; i < count; i++) {
    struct stat fst;
    if (rc == 0 && stat(names[i], &fst) == 0 && S_ISREG(fst.st_mode))
      rc = run_file(names[i]);
    free(names[i]);
  }
  free(names);
  return rc;
}

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  int rc = 0;
  for (int i = 1; i < argc; i++)
    if (argv[i][0] != '-' && run_path(argv[i]) != 0)
      rc = 1;
  printf("replayed %zu inputs (%zu bytes)\n", replayed, replayed_bytes);
  if (replayed == 0) {
    fprintf(stderr, "nothing replayed\n");
    rc = 1;
  }
  return rc;
}
