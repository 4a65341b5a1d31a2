/*
 * module.h: the loader's one small interface over the platform's dynamic
 * loading: dlopen/dlsym/dlclose (module_posix.c) and
 * LoadLibraryExW/GetProcAddress/FreeLibrary (module_win32.c), and the few
 * file-system calls discovery needs (directory listing, canonical paths)
 * that differ between the two (UTF-8 paths, wide calls on Windows).
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
 * (RTLD_NOW | RTLD_LOCAL; on Windows LoadLibraryExW searching the DLL's
 * dependencies in its own directory and System32 only). Returns the
 * handle, or NULL with the platform's error text in err (NUL-terminated,
 * at most err_cap bytes; on Windows a file that is not a DLL and a missing
 * dependency are said in words). */
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

/* The separator of the directories in CALHOST_PLUGIN_PATH: ':' (POSIX), ';'
 * (Windows, where a drive letter holds a ':'). */
#ifdef _WIN32
#define LOADER_MODULE_PATH_LIST_SEPARATOR ";"
#else
#define LOADER_MODULE_PATH_LIST_SEPARATOR ":"
#endif

/* The absolute, canonical path of an existing file or directory (UTF-8,
 * malloc'ed): POSIX realpath (links resolved); Windows the final path of
 * the object opened (GetFinalPathNameByHandleW, without the \\?\ prefix).
 * NULL with errno set (ENOENT...) when nothing is there. */
CALHOST_MODULE_HIDDEN char *loader_module_real_path(const char *path);

/* The names of the entries of directory dir (UTF-8; no "." or "..", unsorted;
 * the array and each name malloc'ed, the caller frees them). Returns 0, or
 * -1 with errno set (ENOENT, ENOTDIR, EACCES, ENOMEM) and nothing to free. */
CALHOST_MODULE_HIDDEN int loader_module_dir_names(const char *dir, char ***names, size_t *count);

/* path made absolute without looking at what is there (malloc'ed; NULL
 * when out of memory): POSIX prefixes the current directory to a relative
 * path (path itself when that cannot be read); Windows GetFullPathNameW. */
CALHOST_MODULE_HIDDEN char *loader_module_absolute_path(const char *path);

/* Nonzero when path names a directory. */
CALHOST_MODULE_HIDDEN int loader_module_is_dir(const char *path);

#endif /* CALHOST_LOADER_MODULE_H */
