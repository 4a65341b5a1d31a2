/*
 * safety_win32.c: loader_check_path on Windows (see loader.h). POSIX's
 * checks (owner root or the user, no group or other write permission along
 * the whole path) have no equivalent in mode bits here: who may replace a
 * DLL is decided by the ACLs of the file and its directories, which this
 * check does not read (a faithful check would walk each component's DACL
 * with GetNamedSecurityInfoW for write or delete rights of anyone but
 * SYSTEM, Administrators, TrustedInstaller and the user; not done). What it
 * does check: the plugin is an existing regular file, not a directory and
 * not a reparse point (a symbolic link or junction, which could be pointed
 * elsewhere between this check and the load).
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>

#include "loader.h"
#include "base/str.h"

int loader_check_path(const char *path, char *err, size_t err_cap) {
  int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, NULL, 0);
  wchar_t *w = n > 0 ? malloc((size_t)n * sizeof *w) : NULL;
  DWORD attr, code;
  if (!w) {
    snprintf(err, err_cap, n > 0 ? "out of memory" : "%s is not valid UTF-8", path);
    return -2;
  }
  MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, w, n);
  attr = GetFileAttributesW(w);
  code = GetLastError();
  free(w);
  if (attr == INVALID_FILE_ATTRIBUTES) {
    base_str_fail(err, err_cap, "cannot check %s: %s", path,
                  code == ERROR_FILE_NOT_FOUND || code == ERROR_PATH_NOT_FOUND
                      ? "it does not exist"
                      : "its attributes cannot be read");
    return -2;
  }
  if (attr & FILE_ATTRIBUTE_DIRECTORY)
    return base_str_fail(err, err_cap, "%s is a directory, not a plugin file", path);
  if (attr & FILE_ATTRIBUTE_REPARSE_POINT)
    return base_str_fail(
        err, err_cap, "%s is a symbolic link or another reparse point; name the DLL itself", path);
  return 0;
}
