/*
 * module.h: the loader's one small interface over the platform's dynamic
 * loading: dlopen/dlsym/dlclose (module_posix.c) and
 * LoadLibraryExW/GetProcAddress/FreeLibrary (module_win32.c).
 */
#ifndef CALHOST_LOADER_MODULE_H
#define CALHOST_LOADER_MODULE_H

#include <stddef.h>

#if defined(__GNUC__) && !defined(_WIN32)
#define CALHOST_MODULE_HIDDEN __attribute__((visibility("hidden")))
#else
#define CALHOST_MODULE_HIDDEN
#endif

typedef struct loader_module loader_module;

/* A function pointer as found in a module (cast it to the real type). */
typedef void (*loader_module_fn)(void);

/* Opens the shared object at path (UTF-8) with its symbols kept local
 * (RTLD_NOW | RTLD_LOCAL; on Windows the DLL's own directory is searched for
 * its dependencies). Returns the handle, or NULL with the platform's error
 * text in err (NUL-terminated, at most err_cap bytes). */
CALHOST_MODULE_HIDDEN loader_module *loader_module_open(const char *path, char *err,
                                                        size_t err_cap);

/* The address of the exported function `name`, or NULL when the module does
 * not export it. Valid until loader_module_close. */
CALHOST_MODULE_HIDDEN loader_module_fn loader_module_symbol(loader_module *module,
                                                            const char *name);

/* Closes the module and sets *module to NULL. NULL-safe. */
CALHOST_MODULE_HIDDEN void loader_module_close(loader_module **module);

/* The usual file-name suffix of a plugin on this platform: ".so", ".dll",
 * ".dylib". */
CALHOST_MODULE_HIDDEN const char *loader_module_suffix(void);

#endif /* CALHOST_LOADER_MODULE_H */
