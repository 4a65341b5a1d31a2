/*
 * module_posix.c: module.h over dlopen/dlsym/dlclose (Linux, macOS, BSDs).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

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
