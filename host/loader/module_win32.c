/*
 * module_win32.c: module.h over LoadLibraryExW/GetProcAddress/FreeLibrary,
 * and discovery's directory listing (FindFirstFileW) and canonical paths
 * (GetFinalPathNameByHandleW). Paths are UTF-8 and converted to UTF-16;
 * a DLL's dependencies are searched for in its own directory and System32
 * only (never beside the program, in the current directory or on PATH).
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "base/array.h"
#include "module.h"

#ifndef LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR
#define LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR 0x00000100
#endif
#ifndef LOAD_LIBRARY_SEARCH_SYSTEM32
#define LOAD_LIBRARY_SEARCH_SYSTEM32 0x00000800
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

/* Where the dependencies of a plugin DLL are looked for: its own directory
 * and System32, nothing else. Not LOAD_LIBRARY_SEARCH_DEFAULT_DIRS: that
 * includes the application's directory, so a DLL planted beside calhost.exe
 * would be loaded (test_loader_win shows it); neither the current directory
 * nor PATH is ever searched with these flags. */
#define LOADER_DLL_SEARCH (LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_SYSTEM32)

/* Whether a DLL named name (ASCII, from an import table) is where the
 * pinned search looks: in dir (the plugin's directory, with its trailing
 * separator; may be empty) or System32, or already loaded (KERNEL32.dll,
 * the API sets). */
static int import_found(const wchar_t *dir, const char *name) {
  wchar_t wname[MAX_PATH], full[2 * MAX_PATH + 8];
  int n = MultiByteToWideChar(CP_ACP, 0, name, -1, wname, MAX_PATH);
  UINT sys;
  if (n <= 0)
    return 1; /* a name this check cannot read: not reported */
  if (GetModuleHandleW(wname))
    return 1;
  if (_snwprintf(full, sizeof full / sizeof full[0], L"%ls%ls", dir, wname) > 0 &&
      GetFileAttributesW(full) != INVALID_FILE_ATTRIBUTES)
    return 1;
  sys = GetSystemDirectoryW(full, MAX_PATH);
  if (sys == 0 || sys >= MAX_PATH)
    return 1;
  return _snwprintf(full + sys, sizeof full / sizeof full[0] - sys, L"\\%ls", wname) > 0 &&
         GetFileAttributesW(full) != INVALID_FILE_ATTRIBUTES;
}

/* Writes into out (", "-separated, NUL-terminated) the DLLs the image at
 * wpath imports directly that import_found does not find; "" when all are
 * there (the missing one is a dependency of a dependency) or the image
 * cannot be read. The file is mapped as an image resource: nothing of it
 * runs. */
static void missing_imports(const wchar_t *wpath, char *out, size_t cap) {
  HMODULE res = LoadLibraryExW(wpath, NULL, LOAD_LIBRARY_AS_IMAGE_RESOURCE);
  const unsigned char *base;
  const IMAGE_DOS_HEADER *dos;
  const IMAGE_NT_HEADERS64 *nt;
  const IMAGE_DATA_DIRECTORY *dd;
  wchar_t dir[MAX_PATH + 1] = L"";
  const wchar_t *sep = NULL;
  size_t used = 0, size;
  out[0] = '\0';
  if (!res)
    return;
  for (const wchar_t *c = wpath; *c; c++)
    if (*c == L'\\' || *c == L'/')
      sep = c;
  if (sep && (size_t)(sep - wpath) + 1 < MAX_PATH) {
    memcpy(dir, wpath, ((size_t)(sep - wpath) + 1) * sizeof *dir);
    dir[sep - wpath + 1] = L'\0';
  }
  /* the low bits of an image-resource handle are flags */
  base = (const unsigned char *)((ULONG_PTR)res & ~(ULONG_PTR)3);
  dos = (const IMAGE_DOS_HEADER *)base;
  if (dos->e_magic != IMAGE_DOS_SIGNATURE || dos->e_lfanew <= 0 || dos->e_lfanew > 4096)
    goto done;
  nt = (const IMAGE_NT_HEADERS64 *)(base + dos->e_lfanew);
  if (nt->Signature != IMAGE_NT_SIGNATURE ||
      nt->OptionalHeader.Magic != IMAGE_NT_OPTIONAL_HDR64_MAGIC ||
      nt->OptionalHeader.NumberOfRvaAndSizes <= IMAGE_DIRECTORY_ENTRY_IMPORT)
    goto done;
  size = nt->OptionalHeader.SizeOfImage;
  dd = &nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_IMPORT];
  if (!dd->VirtualAddress || dd->VirtualAddress >= size)
    goto done;
  for (const IMAGE_IMPORT_DESCRIPTOR *d =
           (const IMAGE_IMPORT_DESCRIPTOR *)(base + dd->VirtualAddress);
       (const unsigned char *)(d + 1) <= base + size && d->Name; d++) {
    const char *name = (const char *)base + d->Name;
    if (d->Name >= size || !memchr(name, '\0', size - d->Name) || import_found(dir, name))
      continue;
    int w = snprintf(out + used, cap - used, "%s%s", used ? ", " : "", name);
    if (w < 0 || (size_t)w >= cap - used)
      break;
    used += (size_t)w;
  }
done:
  FreeLibrary(res);
}

/* The message of a failed LoadLibraryExW of path (wpath; exists: the file
 * is there): the errors a plugin author meets said in words, others as
 * Windows words them. */
static void load_error(DWORD code, const char *path, const wchar_t *wpath, int exists, char *err,
                       size_t err_cap) {
  char missing[512];
  char prefix[64];
  if (!err || !err_cap)
    return;
  missing[0] = '\0';
  if (code == ERROR_MOD_NOT_FOUND && exists)
    missing_imports(wpath, missing, sizeof missing);
  if (code == ERROR_BAD_EXE_FORMAT || code == ERROR_INVALID_EXE_SIGNATURE ||
      code == ERROR_EXE_MACHINE_TYPE_MISMATCH)
    snprintf(err, err_cap,
             "LoadLibrary: %s is not a DLL this 64-bit process can load (not a Windows image, "
             "or one for another processor; Windows error %lu)",
             path, (unsigned long)code);
  else if (code == ERROR_MOD_NOT_FOUND && exists && missing[0])
    snprintf(err, err_cap,
             "LoadLibrary: a DLL it depends on was not found: %s (searched: the plugin's own "
             "directory and System32; Windows error %lu)",
             missing, (unsigned long)code);
  else if (code == ERROR_MOD_NOT_FOUND && exists)
    snprintf(err, err_cap,
             "LoadLibrary: a DLL that one of its dependencies needs was not found (searched: the "
             "plugin's own directory and System32; Windows error %lu)",
             (unsigned long)code);
  else if (code == ERROR_PROC_NOT_FOUND)
    snprintf(err, err_cap,
             "LoadLibrary: a DLL it depends on lacks a function it imports (another version of "
             "that DLL? Windows error %lu)",
             (unsigned long)code);
  else {
    snprintf(prefix, sizeof prefix, "LoadLibrary (Windows error %lu): ", (unsigned long)code);
    win_error(code, prefix, err, err_cap);
  }
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
  h = LoadLibraryExW(wpath, NULL, LOADER_DLL_SEARCH);
  if (!h) {
    DWORD code = GetLastError();
    DWORD attr = GetFileAttributesW(wpath);
    load_error(code, path, wpath, attr != INVALID_FILE_ATTRIBUTES, err, err_cap);
    free(wpath);
    return NULL;
  }
  free(wpath);
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

/* s as UTF-16 (malloc'ed), NULL with errno EINVAL (not UTF-8) or ENOMEM. */
static wchar_t *widen(const char *s) {
  int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
  wchar_t *w;
  if (n <= 0) {
    errno = EINVAL;
    return NULL;
  }
  w = malloc((size_t)n * sizeof *w);
  if (!w) {
    errno = ENOMEM;
    return NULL;
  }
  MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n);
  return w;
}

/* w as UTF-8 (malloc'ed), NULL with errno ENOMEM. */
static char *narrow(const wchar_t *w) {
  int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
  char *s = n > 0 ? malloc((size_t)n) : NULL;
  if (!s || WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL) <= 0) {
    free(s);
    errno = ENOMEM;
    return NULL;
  }
  return s;
}

/* errno for a Windows error of a path lookup. */
static int path_errno(DWORD code) {
  switch (code) {
  case ERROR_FILE_NOT_FOUND:
  case ERROR_PATH_NOT_FOUND:
  case ERROR_INVALID_NAME:
    return ENOENT;
  case ERROR_DIRECTORY:
    return ENOTDIR;
  case ERROR_NOT_ENOUGH_MEMORY:
  case ERROR_OUTOFMEMORY:
    return ENOMEM;
  default:
    return EACCES;
  }
}

char *loader_module_real_path(const char *path) {
  wchar_t *w = widen(path);
  HANDLE h;
  wchar_t *final = NULL;
  const wchar_t *f;
  DWORD n;
  char *out;
  if (!w)
    return NULL;
  h = CreateFileW(w, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
                  FILE_FLAG_BACKUP_SEMANTICS, NULL);
  free(w);
  if (h == INVALID_HANDLE_VALUE) {
    errno = path_errno(GetLastError());
    return NULL;
  }
  n = GetFinalPathNameByHandleW(h, NULL, 0, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
  if (n > 0 && (final = malloc((size_t)(n + 1) * sizeof *final)) != NULL)
    n = GetFinalPathNameByHandleW(h, final, n + 1, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
  CloseHandle(h);
  if (!final || n == 0) {
    free(final);
    errno = ENOMEM;
    return NULL;
  }
  f = final;
  if (!wcsncmp(f, L"\\\\?\\UNC\\", 8)) {
    f += 6; /* \\?\UNC\server\share -> \\server\share */
    final[6] = L'\\';
  } else if (!wcsncmp(f, L"\\\\?\\", 4)) {
    f += 4;
  }
  out = narrow(f);
  free(final);
  return out;
}

int loader_module_dir_names(const char *dir, char ***names, size_t *count) {
  size_t len = strlen(dir), n = 0, cap = 0;
  char *pattern = malloc(len + 3), **v = NULL;
  wchar_t *w;
  WIN32_FIND_DATAW fd;
  HANDLE h;
  *names = NULL;
  *count = 0;
  if (!pattern) {
    errno = ENOMEM;
    return -1;
  }
  memcpy(pattern, dir, len);
  memcpy(pattern + len, "\\*", 3);
  w = widen(pattern);
  free(pattern);
  if (!w)
    return -1;
  h = FindFirstFileW(w, &fd);
  free(w);
  if (h == INVALID_HANDLE_VALUE) {
    DWORD e = GetLastError();
    errno = e == ERROR_FILE_NOT_FOUND ? 0 : path_errno(e);
    if (!errno) /* an empty directory (not even "." on some file systems) */
      return 0;
    return -1;
  }
  do {
    char **nv;
    if (!wcscmp(fd.cFileName, L".") || !wcscmp(fd.cFileName, L".."))
      continue;
    nv = base_array_grow(v, n, &cap, sizeof *nv, 16);
    if (!nv || !(nv[n] = narrow(fd.cFileName))) {
      if (nv)
        v = nv;
      FindClose(h);
      for (size_t i = 0; i < n; i++)
        free(v[i]);
      free(v);
      errno = ENOMEM;
      return -1;
    }
    v = nv;
    n++;
  } while (FindNextFileW(h, &fd));
  FindClose(h);
  *names = v;
  *count = n;
  return 0;
}

char *loader_module_absolute_path(const char *path) {
  wchar_t *w = widen(path), *full = NULL;
  DWORD n = w ? GetFullPathNameW(w, 0, NULL, NULL) : 0;
  char *out = NULL;
  if (n > 0 && (full = malloc((size_t)n * sizeof *full)) != NULL &&
      GetFullPathNameW(w, n, full, NULL) > 0)
    out = narrow(full);
  free(full);
  free(w);
  return out ? out : _strdup(path);
}

int loader_module_is_dir(const char *path) {
  wchar_t *w = widen(path);
  DWORD attr = w ? GetFileAttributesW(w) : INVALID_FILE_ATTRIBUTES;
  free(w);
  return attr != INVALID_FILE_ATTRIBUTES && (attr & FILE_ATTRIBUTE_DIRECTORY);
}
