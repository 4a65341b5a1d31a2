/*
 * fuzz_policy_validators.c: libFuzzer target for the policy validators of the
 * plugins shipped with calhost (every plugin under plugins/: example, cpu_gemm, openblas, ...).
 *
 * At start-up it dlopens every *.so in the build tree's lib/calhost/plugins
 * (or $CALHOST_FUZZ_PLUGIN_DIR), negotiates ABI 1 and creates an instance
 * with no settings. Every input is then offered, as a policy of exactly
 * `size` bytes (not NUL-terminated), to each plugin's validate_policy with an
 * error buffer of exactly err_capacity bytes, so ASan sees any read past the
 * policy or write past the buffer. plugin.h says the validator "must never
 * crash on arbitrary bytes"; it must also answer CALHOST_OK or
 * CALHOST_INVALID_ARGUMENT and, when refusing, leave a NUL-terminated reason.
 * Seeds: policies printed by `calhost list` over tests/store/vectors and the
 * committed corpus.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calhost/plugin.h"
#include "fuzz_common.h"
#include "test_host.h"

#define MAX_PLUGINS 16

typedef struct loaded {
  char name[256];
  test_host_plugin p;
} loaded;

static loaded plugins[MAX_PLUGINS];
static size_t plugin_count;

static void plugin_dir(char *buf, size_t cap) {
  const char *env = getenv("CALHOST_FUZZ_PLUGIN_DIR");
  if (env) {
    snprintf(buf, cap, "%s", env);
    return;
  }
  env = getenv("CALHOST_BUILD_DIR");
  if (env) {
    if (snprintf(buf, cap, "%s/lib/calhost/plugins", env) >= (int)cap)
      buf[0] = '\0';
    return;
  }
  /* bin/fuzz/<exe> or bin/tests/<exe>: the build tree is two levels up. */
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) {
    snprintf(buf, cap, "lib/calhost/plugins");
    return;
  }
  exe[n] = '\0';
  for (int up = 0; up < 3; up++) {
    char *slash = strrchr(exe, '/');
    if (slash)
      *slash = '\0';
  }
  if (snprintf(buf, cap, "%s/lib/calhost/plugins", exe) >= (int)cap)
    buf[0] = '\0';
}

static int cmp_str(const void *a, const void *b) {
  return strcmp((const char *)a, (const char *)b);
}

static void unload_all(void) {
  for (size_t i = 0; i < plugin_count; i++) {
    if (plugins[i].p.vt && plugins[i].p.inst)
      plugins[i].p.vt->destroy(plugins[i].p.inst);
    /* Keep the handles open: LeakSanitizer reports leaks with symbolized
     * frames only while the objects stay mapped. */
  }
  plugin_count = 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  char dir[PATH_MAX], names[MAX_PLUGINS][256];
  size_t n = 0;
  plugin_dir(dir, sizeof dir);
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "fuzz_policy_validators: cannot open plugin dir %s\n", dir);
    exit(1);
  }
  struct dirent *e;
  while ((e = readdir(d)) && n < MAX_PLUGINS) {
    size_t len = strlen(e->d_name);
    if (len > 3 && !strcmp(e->d_name + len - 3, ".so"))
      snprintf(names[n++], sizeof names[0], "%s", e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof names[0], cmp_str);
  for (size_t i = 0; i < n; i++) {
    char path[PATH_MAX + 256];
    if (snprintf(path, sizeof path, "%s/%s", dir, names[i]) >= (int)sizeof path)
      continue;
    loaded *l = &plugins[plugin_count];
    if (test_host_load(path, CALHOST_ABI_VERSION_MIN, CALHOST_ABI_VERSION, &l->p) != 0) {
      fprintf(stderr, "fuzz_policy_validators: %s\n", test_host_error);
      exit(1);
    }
    if (!l->p.vt->validate_policy) {
      fprintf(stderr, "fuzz_policy_validators: %s: no validate_policy\n", path);
      exit(1);
    }
    memcpy(l->name, names[i], sizeof l->name);
    l->name[sizeof l->name - 1] = '\0';
    plugin_count++;
  }
  if (plugin_count == 0) {
    fprintf(stderr, "fuzz_policy_validators: no plugin in %s\n", dir);
    exit(1);
  }
  if (getenv("CALHOST_REPLAY_VERBOSE") || !getenv("CALHOST_FUZZ_QUIET"))
    for (size_t i = 0; i < plugin_count; i++)
      fprintf(stderr, "fuzz_policy_validators: validating with %s (%s)\n", plugins[i].name,
              plugins[i].p.vt->backend_name);
  atexit(unload_all);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  size_t err_capacity = 1 + size % 257; /* small capacities too */
  for (size_t i = 0; i < plugin_count; i++) {
    char *err = malloc(err_capacity);
    FUZZ_CHECK(err != NULL, "out of memory");
    memset(err, 'X', err_capacity);
    calhost_status st = plugins[i].p.vt->validate_policy(plugins[i].p.inst, (const char *)data,
                                                         size, err, err_capacity);
    FUZZ_CHECK(st == CALHOST_OK || st == CALHOST_INVALID_ARGUMENT,
               "%s: validate_policy returned %d", plugins[i].name, (int)st);
    if (st != CALHOST_OK)
      FUZZ_CHECK(memchr(err, '\0', err_capacity) != NULL,
                 "%s: refused without a NUL-terminated reason (capacity %zu)", plugins[i].name,
                 err_capacity);
    if (st == CALHOST_OK)
      FUZZ_CHECK(size > 0, "%s: accepted an empty policy", plugins[i].name);
    free(err);
  }
  return 0;
}
