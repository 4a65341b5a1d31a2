/*
 * module_win32.c: module.h over LoadLibraryExW/GetProcAddress/FreeLibrary.
 * Paths are UTF-8 and converted to UTF-16; the DLL's own directory is
 * searched for its dependencies, the current directory is not.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>

#include "module.h"

#ifndef LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR
#define LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR 0x00000100
#endif
#ifndef LOAD_LIBRARY_SEARCH_DEFAULT_DIRS
#define LOAD_LIBRARY_SEARCH_DEFAULT_DIRS 0x00001000
#endif

struct loader_module {
  HMODULE handle;
};

/* Writes the text of Windows error code `code` after `prefix` into err. */
static void win_error(DWORD code, const char *prefix, char *err, size_t err_cap) {
  char text[512];
  DWORD n;
  if (!err || !err_cap)
    return;
  n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, code, 0,
                     text, (DWORD)sizeof text, NULL);
  while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' '))
    text[--n] = '\0';
  if (n == 0)
    snprintf(text, sizeof text, "error %lu", (unsigned long)code);
  snprintf(err, err_cap, "%s%s", prefix, text);
}

loader_module *loader_module_open(const char *path, char *err, size_t err_cap) {
  loader_module *m;
  wchar_t *wpath;
  HMODULE h;
  int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, NULL, 0);
  if (n <= 0) {
    win_error(GetLastError(), "invalid UTF-8 path: ", err, err_cap);
    return NULL;
  }
  wpath = malloc((size_t)n * sizeof *wpath);
  if (!wpath) {
    if (err && err_cap)
      snprintf(err, err_cap, "out of memory");
    return NULL;
  }
  MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, wpath, n);
  h = LoadLibraryExW(wpath, NULL,
                     LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_DEFAULT_DIRS);
  free(wpath);
  if (!h) {
    win_error(GetLastError(), "LoadLibrary: ", err, err_cap);
    return NULL;
  }
  m = malloc(sizeof *m);
  if (!m) {
    FreeLibrary(h);
    if (err && err_cap)
      snprintf(err, err_cap, "out of memory");
    return NULL;
  }
  m->handle = h;
  return m;
}

loader_module_fn loader_module_symbol(loader_module *module, const char *name) {
  FARPROC p;
  if (!module)
    return NULL;
  p = GetProcAddress(module->handle, name);
  /* FARPROC and loader_module_fn are both generic function pointers. */
  return (loader_module_fn)(void (*)(void))p;
}

void loader_module_close(loader_module **module) {
  if (!module || !*module)
    return;
  FreeLibrary((*module)->handle);
  free(*module);
  *module = NULL;
}

const char *loader_module_suffix(void) {
  return ".dll";
}
