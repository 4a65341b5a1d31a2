/*
 * paths.c: the running executable's directory (see paths.h): Linux
 * /proc/self/exe, Windows GetModuleFileNameW (as UTF-8).
 */
#include "paths.h"

#include <limits.h>
#include <string.h>
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#else
#include <unistd.h>
#endif

#ifdef _WIN32
int base_exe_dir(char *buf, size_t capacity) {
  wchar_t exe[32768];
  DWORD n = GetModuleFileNameW(NULL, exe, 32768);
  wchar_t *slash;
  if (n == 0 || n >= 32768)
    return -1;
  slash = wcsrchr(exe, L'\\');
  if (!slash)
    return -1;
  *slash = L'\0';
  int len = WideCharToMultiByte(CP_UTF8, 0, exe, -1, NULL, 0, NULL, NULL);
  if (len <= 0 || (size_t)len > capacity)
    return -1;
  return WideCharToMultiByte(CP_UTF8, 0, exe, -1, buf, len, NULL, NULL) > 0 ? 0 : -1;
}
#else
int base_exe_dir(char *buf, size_t capacity) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  char *slash;
  if (n <= 0)
    return -1;
  exe[n] = '\0';
  slash = strrchr(exe, '/');
  if (!slash || (size_t)(slash - exe) + 1 > capacity)
    return -1;
  *slash = '\0';
  memcpy(buf, exe, (size_t)(slash - exe) + 1);
  return 0;
}
#endif
