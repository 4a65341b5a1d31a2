/*
 * win_test.h: the small test harness of the Windows tests run under Wine
 * (cmocka is not built for mingw-w64): a list of named cases, each printing
 * one "PASS name" or "FAIL name: why" line, and an "N passed, N failed"
 * summary; plus UTF-8 file helpers over the wide Win32 API (temporary
 * directories, whole-file reads and writes, recursive removal).
 * Header-only (static functions) so each test program stays one file.
 */
#ifndef CALHOST_TESTS_WINDOWS_WIN_TEST_H
#define CALHOST_TESTS_WINDOWS_WIN_TEST_H

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* ---- cases --------------------------------------------------------------- */

typedef struct wt_case {
  const char *name;
  void (*run)(void);
} wt_case;

static char wt_why[2048];
static int wt_failed_now;

/* Records the first failure of the running case. */
static inline void wt_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(gnu_printf, 3, 4)));
static inline void wt_fail(const char *file, int line, const char *fmt, ...) {
  if (wt_failed_now++)
    return;
  int n = snprintf(wt_why, sizeof wt_why, "%s:%d: ", file, line);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(wt_why + n, sizeof wt_why - (size_t)n, fmt, ap);
  va_end(ap);
}

/* Fails the case (and leaves it) when cond is false. */
#define WT_CHECK(cond, ...)                                                                        \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      wt_fail(__FILE__, __LINE__, __VA_ARGS__);                                                    \
      return;                                                                                      \
    }                                                                                              \
  } while (0)
/* The same, continuing into a cleanup label. */
#define WT_CHECK_GOTO(cond, label, ...)                                                            \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      wt_fail(__FILE__, __LINE__, __VA_ARGS__);                                                    \
      goto label;                                                                                  \
    }                                                                                              \
  } while (0)

/* Runs every case (or those named in argv), prints a line each and the
 * summary; returns the exit status (0: all passed). */
static inline int wt_main(const wt_case *cases, size_t n, int argc, char **argv) {
  int passed = 0, failed = 0;
  setvbuf(stdout, NULL, _IONBF, 0);
  for (size_t i = 0; i < n; i++) {
    int wanted = argc < 2;
    for (int a = 1; a < argc && !wanted; a++)
      wanted = !strcmp(argv[a], cases[i].name);
    if (!wanted)
      continue;
    wt_failed_now = 0;
    wt_why[0] = '\0';
    cases[i].run();
    if (wt_failed_now) {
      failed++;
      printf("FAIL %s: %s\n", cases[i].name, wt_why);
    } else {
      passed++;
      printf("PASS %s\n", cases[i].name);
    }
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed || !passed ? 1 : 0;
}

/* ---- UTF-8 files over the wide API ---------------------------------------- */

/* s as UTF-16 (caller frees), NULL on failure. */
static inline wchar_t *wt_wide(const char *s) {
  int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
  wchar_t *w = n > 0 ? malloc((size_t)n * sizeof *w) : NULL;
  if (w && MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n) <= 0) {
    free(w);
    w = NULL;
  }
  return w;
}

/* w as UTF-8 (caller frees). */
static inline char *wt_narrow(const wchar_t *w) {
  int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
  char *s = n > 0 ? malloc((size_t)n) : NULL;
  if (s && WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL) <= 0) {
    free(s);
    s = NULL;
  }
  return s;
}

/* dir\name (caller frees). */
static inline char *wt_path(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  snprintf(p, n, "%s\\%s", dir, name);
  return p;
}

/* A fresh directory below %TEMP% whose name ends in suffix (UTF-8, may be
 * ""); aborts on failure. */
static inline char *wt_mkdtemp(const char *suffix) {
  wchar_t base[MAX_PATH + 1];
  DWORD n = GetTempPathW(MAX_PATH, base);
  if (!n || n > MAX_PATH)
    abort();
  char *b = wt_narrow(base);
  static LONG counter;
  for (int tries = 0; tries < 1000; tries++) {
    char name[128];
    snprintf(name, sizeof name, "calhost-wt-%lu-%ld", (unsigned long)GetCurrentProcessId(),
             (long)InterlockedIncrement(&counter));
    size_t len = strlen(b) + strlen(name) + strlen(suffix) + 2;
    char *d = malloc(len);
    snprintf(d, len, "%s%s%s", b, name, suffix);
    wchar_t *w = wt_wide(d);
    BOOL ok = w && CreateDirectoryW(w, NULL);
    free(w);
    if (ok) {
      free(b);
      return d;
    }
    free(d);
  }
  abort();
}

/* Removes a file or a directory tree (read-only attributes cleared first). */
static inline void wt_rmtree(const char *path) {
  wchar_t *w = wt_wide(path);
  if (!w)
    return;
  DWORD attr = GetFileAttributesW(w);
  if (attr == INVALID_FILE_ATTRIBUTES) {
    free(w);
    return;
  }
  SetFileAttributesW(w, FILE_ATTRIBUTE_NORMAL | (attr & FILE_ATTRIBUTE_DIRECTORY));
  if (attr & FILE_ATTRIBUTE_DIRECTORY) {
    size_t n = wcslen(w);
    wchar_t *pat = malloc((n + 3) * sizeof *pat);
    wcscpy(pat, w);
    wcscat(pat, L"\\*");
    WIN32_FIND_DATAW fd;
    HANDLE h = FindFirstFileW(pat, &fd);
    free(pat);
    if (h != INVALID_HANDLE_VALUE) {
      do {
        if (!wcscmp(fd.cFileName, L".") || !wcscmp(fd.cFileName, L".."))
          continue;
        char *name = wt_narrow(fd.cFileName), *sub = wt_path(path, name);
        wt_rmtree(sub);
        free(sub);
        free(name);
      } while (FindNextFileW(h, &fd));
      FindClose(h);
    }
    RemoveDirectoryW(w);
  } else {
    DeleteFileW(w);
  }
  free(w);
}

/* Whole file (NUL-terminated), NULL when it cannot be opened. */
static inline char *wt_read(const char *path, size_t *len) {
  wchar_t *w = wt_wide(path);
  HANDLE h =
      w ? CreateFileW(w, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                      OPEN_EXISTING, 0, NULL)
        : INVALID_HANDLE_VALUE;
  free(w);
  if (h == INVALID_HANDLE_VALUE)
    return NULL;
  size_t cap = 4096, n = 0;
  char *b = malloc(cap + 1);
  DWORD got;
  while (b && ReadFile(h, b + n, (DWORD)(cap - n), &got, NULL) && got > 0) {
    n += got;
    if (n == cap) {
      cap *= 2;
      b = realloc(b, cap + 1);
    }
  }
  CloseHandle(h);
  if (b)
    b[n] = '\0';
  if (len)
    *len = n;
  return b;
}

/* Writes text to path (created or truncated); 0 or -1. */
static inline int wt_write(const char *path, const char *text) {
  wchar_t *w = wt_wide(path);
  HANDLE h = w ? CreateFileW(w, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL)
               : INVALID_HANDLE_VALUE;
  free(w);
  if (h == INVALID_HANDLE_VALUE)
    return -1;
  DWORD wrote = 0, len = (DWORD)strlen(text);
  BOOL ok = WriteFile(h, text, len, &wrote, NULL) && wrote == len;
  CloseHandle(h);
  return ok ? 0 : -1;
}

/* Nonzero when something exists at path. */
static inline int wt_exists(const char *path) {
  wchar_t *w = wt_wide(path);
  DWORD attr = w ? GetFileAttributesW(w) : INVALID_FILE_ATTRIBUTES;
  free(w);
  return attr != INVALID_FILE_ATTRIBUTES;
}

/* Nonzero when s contains sub. */
static inline int wt_has(const char *s, const char *sub) {
  return s && strstr(s, sub) != NULL;
}

#endif
