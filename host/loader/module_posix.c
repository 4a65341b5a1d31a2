/*
 * module_posix.c: module.h over dlopen/dlsym/dlclose (Linux, macOS, BSDs),
 * and discovery's directory listing (opendir) and canonical paths
 * (realpath).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/array.h"
#include "module.h"

struct loader_module {
  void *handle;
};

loader_module *loader_module_open(const char *path, char *err, size_t err_cap) {
  loader_module *m;
  void *h;
  dlerror();
  h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    if (err && err_cap)
      snprintf(err, err_cap, "%s", e ? e : "dlopen failed");
    return NULL;
  }
  m = malloc(sizeof *m);
  if (!m) {
    dlclose(h);
    if (err && err_cap)
      snprintf(err, err_cap, "out of memory");
    return NULL;
  }
  m->handle = h;
  return m;
}

loader_module_fn loader_module_symbol(loader_module *module, const char *name) {
  void *p;
  loader_module_fn fn;
  if (!module)
    return NULL;
  p = dlsym(module->handle, name);
  /* POSIX guarantees that a data pointer from dlsym converts to a function
   * pointer; the union avoids the ISO C warning. */
  union {
    void *data;
    loader_module_fn fn;
  } u = {.data = p};
  fn = u.fn;
  return fn;
}

void loader_module_close(loader_module **module) {
  if (!module || !*module)
    return;
  dlclose((*module)->handle);
  free(*module);
  *module = NULL;
}

const char *loader_module_suffix(void) {
#if defined(__APPLE__)
  return ".dylib";
#else
  return ".so";
#endif
}

char *loader_module_real_path(const char *path) {
  return realpath(path, NULL);
}

int loader_module_dir_names(const char *dir, char ***names, size_t *count) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char **v = NULL;
  size_t n = 0, cap = 0;
  *names = NULL;
  *count = 0;
  if (!d)
    return -1;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
      continue;
    char **nv = base_array_grow(v, n, &cap, sizeof *nv, 16);
    if (!nv)
      goto oom;
    v = nv;
    if (!(v[n] = strdup(e->d_name)))
      goto oom;
    n++;
  }
  closedir(d);
  *names = v;
  *count = n;
  return 0;
oom:
  closedir(d);
  for (size_t i = 0; i < n; i++)
    free(v[i]);
  free(v);
  errno = ENOMEM;
  return -1;
}

char *loader_module_absolute_path(const char *path) {
  char cwd[PATH_MAX];
  if (path[0] == '/' || !getcwd(cwd, sizeof cwd))
    return strdup(path);
  size_t n = strlen(cwd) + strlen(path) + 2;
  char *out = malloc(n);
  if (out)
    snprintf(out, n, "%s/%s", cwd, path);
  return out;
}

int loader_module_is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}
