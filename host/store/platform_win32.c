/*
 * platform_win32.c: the store's Windows layer (see platform.h): SRWLOCK and
 * CRITICAL_SECTION, LockFileEx on the sibling .lock file, whole-file reads,
 * the file name length check, the atomic replace sequence (refusal of a
 * read-only file, fresh CREATE_NEW temp, write, FlushFileBuffers, a
 * POSIX-semantics rename where Windows has one, else MoveFileExW with
 * MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH, retried while
 * readers hold the file),
 * recursive directory creation, the %LOCALAPPDATA% default path, and the
 * fault-injection hooks. Paths are UTF-8 and converted to UTF-16 for the
 * wide API.
 */
#ifdef _WIN32
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "platform.h"

/* ---- fault injection ----------------------------------------------------- */

#ifdef CALHOST_FAULT_INJECTION
/* The Windows error each of the error names CALSTORE_FAULT may use
 * (platform.h) means. */
static const DWORD fault_errors[CS_FAULT_ERRORS] = {
    ERROR_IO_DEVICE,      ERROR_DISK_FULL,     ERROR_FILE_TOO_LARGE, ERROR_NOT_SAME_DEVICE,
    ERROR_LOCK_VIOLATION, ERROR_ACCESS_DENIED, ERROR_WRITE_PROTECT,  ERROR_OPERATION_ABORTED};

/* The Windows error CALSTORE_FAULT injects at step, else 0 (FAULT). */
static DWORD fault_at(const char *step) {
  int i = cs_fault_error_index(step);
  return i < 0 ? 0 : fault_errors[i];
}

/* TerminateProcess when CALSTORE_FAULT says crash_after:step (CRASH_AFTER). */
static void crash_after(const char *step) {
  if (cs_fault_crash_after(step))
    TerminateProcess(GetCurrentProcess(), 9);
}
#endif

/* ---- threads ------------------------------------------------------------- */

int cs_rwlock_init(cs_rwlock *l) {
  InitializeSRWLock(l);
  return 0;
}
void cs_rwlock_destroy(cs_rwlock *l) {
  (void)l; /* an SRW lock holds no resources */
}
void cs_rwlock_lock(cs_rwlock *l, cs_lock_mode mode) {
  if (mode == CS_EXCLUSIVE)
    AcquireSRWLockExclusive(l);
  else
    AcquireSRWLockShared(l);
}
void cs_rwlock_unlock(cs_rwlock *l, cs_lock_mode mode) {
  if (mode == CS_EXCLUSIVE)
    ReleaseSRWLockExclusive(l);
  else
    ReleaseSRWLockShared(l);
}

/* ---- helpers ------------------------------------------------------------- */

static wchar_t *widen_plain(const char *s) {
  int n = MultiByteToWideChar(CP_UTF8, 0, s, -1, NULL, 0);
  if (n <= 0)
    return NULL;
  wchar_t *w = malloc((size_t)n * sizeof *w);
  if (w && MultiByteToWideChar(CP_UTF8, 0, s, -1, w, n) <= 0) {
    free(w);
    return NULL;
  }
  return w;
}

static int has_long_prefix(const wchar_t *w) {
  return !wcsncmp(w, L"\\\\?\\", 4) || !wcsncmp(w, L"\\\\.\\", 4);
}

/* The full path of w (GetFullPathNameW: no MAX_PATH limit, unlike
 * _fullpath), malloc'd; NULL when it fails. A `\\?\` path is kept as it is. */
static wchar_t *full_path(const wchar_t *w) {
  if (has_long_prefix(w))
    return _wcsdup(w);
  DWORD n = GetFullPathNameW(w, 0, NULL, NULL);
  wchar_t *f = n ? malloc((size_t)n * sizeof *f) : NULL;
  if (f && (GetFullPathNameW(w, n, f, NULL) == 0)) {
    free(f);
    return NULL;
  }
  return f;
}

/* A UTF-8 path as the wide API takes it: a path of MAX_PATH characters or
 * more becomes its full path with the `\\?\` (or `\\?\UNC\`) prefix, which
 * lifts the MAX_PATH limit of the file API; shorter ones stay as given. */
static wchar_t *widen(const char *s) {
  wchar_t *w = widen_plain(s);
  if (!w || wcslen(w) < MAX_PATH - 12 || has_long_prefix(w))
    return w;
  wchar_t *f = full_path(w);
  if (!f)
    return w;
  size_t n = wcslen(f);
  int unc = f[0] == L'\\' && f[1] == L'\\';
  wchar_t *l = malloc((n + 8) * sizeof *l);
  if (l) {
    wcscpy(l, unc ? L"\\\\?\\UNC" : L"\\\\?\\");
    wcscat(l, unc ? f + 1 : f);
  }
  free(f);
  if (!l)
    return w;
  free(w);
  return l;
}

static void win_message(DWORD code, char *buf, size_t cap) {
  DWORD n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, code,
                           0, buf, (DWORD)cap, NULL);
  while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
    buf[--n] = '\0';
  if (!n)
    snprintf(buf, cap, "Windows error %lu", (unsigned long)code);
}

static calstore_status fail_win(calstore_error *err, calstore_status st, const char *path,
                                const char *what, DWORD code) {
  char msg[256];
  win_message(code, msg, sizeof msg);
  return cs_fail(err, st, 0, path, "%s %s: %s", what, path, msg);
}

static void fill_id(const BY_HANDLE_FILE_INFORMATION *fi, cs_file_id *id) {
  id->dev = fi->dwVolumeSerialNumber;
  id->ino = ((uint64_t)fi->nFileIndexHigh << 32) | fi->nFileIndexLow;
  id->size = ((uint64_t)fi->nFileSizeHigh << 32) | fi->nFileSizeLow;
  id->mtime_ns = (int64_t)((((uint64_t)fi->ftLastWriteTime.dwHighDateTime << 32) |
                            fi->ftLastWriteTime.dwLowDateTime) *
                           100);
  id->ctime_ns = (int64_t)((((uint64_t)fi->ftCreationTime.dwHighDateTime << 32) |
                            fi->ftCreationTime.dwLowDateTime) *
                           100);
}

static int is_missing(DWORD code) {
  return code == ERROR_FILE_NOT_FOUND || code == ERROR_PATH_NOT_FOUND;
}

/* ---- files --------------------------------------------------------------- */

calstore_status cs_plat_stat(const char *path, cs_file_id *id, calstore_error *err) {
  wchar_t *w = widen(path);
  if (!w)
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, path, "cannot convert %s", path);
  HANDLE h = CreateFileW(w, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                         OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
  free(w);
  if (h == INVALID_HANDLE_VALUE) {
    DWORD e = GetLastError();
    if (is_missing(e))
      return CALSTORE_NOT_FOUND;
    return fail_win(err, CALSTORE_UNREADABLE, path, "cannot stat", e);
  }
  BY_HANDLE_FILE_INFORMATION fi;
  BOOL ok = GetFileInformationByHandle(h, &fi);
  DWORD e = GetLastError();
  CloseHandle(h);
  if (!ok)
    return fail_win(err, CALSTORE_UNREADABLE, path, "cannot stat", e);
  fill_id(&fi, id);
  return CALSTORE_OK;
}

/* The directory entry a path names: its folder's identity (volume serial
 * and file index, as GetFileInformationByHandle gives them) when the folder
 * exists (has_dir), and its last component; or its full path when the
 * folder cannot be opened. */
typedef struct entry_id {
  int has_dir;
  cs_file_id dir;
  wchar_t *name; /* malloc'd: the last component, or the full path */
} entry_id;

static int entry_of(const char *path, entry_id *e) {
  memset(e, 0, sizeof *e);
  wchar_t *w = widen(path), *f = w ? full_path(w) : NULL;
  free(w);
  if (!f)
    return -1;
  /* the long form of the name (an 8.3 alias names the same entry) */
  DWORD ln = GetLongPathNameW(f, NULL, 0), got = 0;
  wchar_t *l = ln ? malloc((size_t)ln * sizeof *l) : NULL;
  if (l)
    got = GetLongPathNameW(f, l, ln);
  if (l && got > 0 && got < ln) {
    free(f);
    f = l;
  } else {
    free(l);
  }
  wchar_t *sep = NULL;
  for (wchar_t *p = f; *p; p++)
    if (*p == L'\\' || *p == L'/')
      sep = p;
  if (sep && sep[1]) {
    *sep = L'\0';
    HANDLE h = CreateFileW(f, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                           OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
    BY_HANDLE_FILE_INFORMATION fi;
    if (h != INVALID_HANDLE_VALUE && GetFileInformationByHandle(h, &fi)) {
      e->has_dir = 1;
      fill_id(&fi, &e->dir);
    }
    if (h != INVALID_HANDLE_VALUE)
      CloseHandle(h);
    *sep = L'\\';
  }
  e->name = e->has_dir ? _wcsdup(sep + 1) : _wcsdup(has_long_prefix(f) ? f + 4 : f);
  free(f);
  return e->name ? 0 : -1;
}

int cs_plat_same_name(const char *a, const char *b) {
  /* the same entry: the same folder (by identity, so that any spelling of
   * it, a long one past MAX_PATH or a \\?\ one, compares equal) and the
   * same last component but for case; the full paths when a folder does not
   * exist yet */
  entry_id x, y;
  int same = 0;
  if (entry_of(a, &x) == 0 && entry_of(b, &y) == 0) {
    same = x.has_dir == y.has_dir &&
           (!x.has_dir || (x.dir.dev == y.dir.dev && x.dir.ino == y.dir.ino)) &&
           CompareStringOrdinal(x.name, -1, y.name, -1, TRUE) == CSTR_EQUAL;
    free(y.name);
  }
  free(x.name);
  return same;
}

void cs_plat_unpin(intptr_t pin) {
  (void)pin; /* a placeholder: see platform.h */
}

/* cs_plat_read_loop's read on Windows (file: the handle), at most 1 GiB a
 * call (ReadFile counts in a DWORD). */
static calstore_status read_handle(void *file, char *buf, size_t want, size_t *got,
                                   const char *path, calstore_error *err) {
  DWORD w = (DWORD)(want > 0x40000000 ? 0x40000000 : want), g = 0;
  if (!ReadFile(*(HANDLE *)file, buf, w, &g, NULL))
    return fail_win(err, CALSTORE_UNREADABLE, path, "cannot read", GetLastError());
  *got = g;
  return CALSTORE_OK;
}

calstore_status cs_plat_read_file(const char *path, char **data, size_t *len, cs_file_id *id,
                                  intptr_t *pin, calstore_error *err) {
  if (pin)
    *pin = CS_NO_PIN;
  *data = NULL;
  *len = 0;
  wchar_t *w = widen(path);
  if (!w)
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, path, "cannot convert %s", path);
  HANDLE h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                         NULL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
  free(w);
  if (h == INVALID_HANDLE_VALUE) {
    DWORD e = GetLastError();
    if (is_missing(e))
      return cs_fail(err, CALSTORE_NOT_FOUND, 0, path, "%s does not exist", path);
    return fail_win(err, CALSTORE_UNREADABLE, path, "cannot open", e);
  }
  BY_HANDLE_FILE_INFORMATION fi;
  DWORD fe = FAULT("read");
  if (fe || !GetFileInformationByHandle(h, &fi)) {
    DWORD e = fe ? fe : GetLastError();
    CloseHandle(h);
    return fail_win(err, CALSTORE_UNREADABLE, path, "cannot read", e);
  }
  if ((fi.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) || GetFileType(h) != FILE_TYPE_DISK) {
    CloseHandle(h);
    return cs_fail(err, CALSTORE_UNREADABLE, 0, path,
                   "%s is not a regular file (a directory, pipe or device); refusing to read it",
                   path);
  }
  uint64_t size = ((uint64_t)fi.nFileSizeHigh << 32) | fi.nFileSizeLow;
  if (size > (uint64_t)SIZE_MAX / 2) {
    CloseHandle(h);
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, path, "%s is too large", path);
  }
  char *buf;
  size_t n;
  calstore_status rs = cs_plat_read_loop(&h, read_handle, size, path, &buf, &n, err);
  if (rs != CALSTORE_OK) {
    CloseHandle(h);
    return rs;
  }
  if (id)
    fill_id(&fi, id);
  if (pin)
    *pin = 0; /* a placeholder: see platform.h */
  CloseHandle(h);
  *data = buf;
  *len = n;
  return CALSTORE_OK;
}

static int is_sep(char c) {
  return c == '\\' || c == '/';
}

calstore_status cs_plat_resolve(const char *path, char **out, calstore_error *err) {
  *out = NULL;
  wchar_t *w = widen(path);
  if (!w)
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, path, "cannot convert %s", path);
  DWORD attr = GetFileAttributesW(w);
  if (attr == INVALID_FILE_ATTRIBUTES || !(attr & FILE_ATTRIBUTE_REPARSE_POINT)) {
    free(w); /* not a link (or nothing there yet): this is the file */
    *out = _strdup(path);
    return *out ? CALSTORE_OK : cs_fail(err, CALSTORE_NO_MEMORY, 0, path, "out of memory");
  }
  /* a symbolic link: the final path of what it leads to (it must exist) */
  HANDLE h = CreateFileW(w, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                         OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
  free(w);
  if (h == INVALID_HANDLE_VALUE) {
    *out = _strdup(path); /* a dangling link: the load reports the problem */
    return *out ? CALSTORE_OK : cs_fail(err, CALSTORE_NO_MEMORY, 0, path, "out of memory");
  }
  wchar_t final[32768];
  DWORD n = GetFinalPathNameByHandleW(h, final, 32768, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
  DWORD e = GetLastError();
  CloseHandle(h);
  if (n == 0 || n >= 32768)
    return fail_win(err, CALSTORE_UNREADABLE, path, "cannot resolve the link", e);
  const wchar_t *f = final;
  if (!wcsncmp(f, L"\\\\?\\UNC\\", 8)) {
    f += 6; /* \\?\UNC\server\share -> \\server\share */
    final[6] = L'\\';
  } else if (!wcsncmp(f, L"\\\\?\\", 4)) {
    f += 4;
  }
  int len = WideCharToMultiByte(CP_UTF8, 0, f, -1, NULL, 0, NULL, NULL);
  char *r = len > 0 ? malloc((size_t)len) : NULL;
  if (!r || WideCharToMultiByte(CP_UTF8, 0, f, -1, r, len, NULL, NULL) <= 0) {
    free(r);
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, path, "cannot convert the target of %s", path);
  }
  *out = r;
  return CALSTORE_OK;
}

calstore_status cs_plat_mkdir_parent(const char *path, calstore_error *err) {
  char *dir = _strdup(path);
  if (!dir)
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, path, "out of memory");
  char *last = NULL;
  for (char *p = dir; *p; p++)
    if (is_sep(*p))
      last = p;
  calstore_status st = CALSTORE_OK;
  if (last && last != dir) {
    *last = '\0';
    DWORD fe = FAULT("mkdir");
    /* create each component after the drive / UNC prefix (and after a
     * `\\?\` one) */
    char *start = !strncmp(dir, "\\\\?\\", 4) ? dir + 4 : dir + 1;
    for (char *p = start; fe == 0 && *p; p++) {
      if (!is_sep(*p) || p[-1] == ':' || is_sep(p[-1]))
        continue;
      char c = *p;
      *p = '\0';
      wchar_t *w = widen(dir);
      if (w && !CreateDirectoryW(w, NULL) && GetLastError() != ERROR_ALREADY_EXISTS &&
          GetLastError() != ERROR_ACCESS_DENIED)
        fe = GetLastError();
      free(w);
      *p = c;
    }
    if (!fe) {
      wchar_t *w = widen(dir);
      if (!w)
        fe = ERROR_NOT_ENOUGH_MEMORY;
      else if (!CreateDirectoryW(w, NULL) && GetLastError() != ERROR_ALREADY_EXISTS)
        fe = GetLastError();
      free(w);
    }
    if (fe)
      st = fail_win(err, CALSTORE_WRITE_FAILED, dir, "cannot create directory", fe);
  }
  free(dir);
  return st;
}

/* The last component of path (after the last separator or drive colon). */
static const char *base_name(const char *path) {
  const char *b = path;
  for (const char *p = path; *p; p++)
    if (is_sep(*p) || *p == ':')
      b = p + 1;
  return b;
}

/* UTF-16 units of the UTF-8 name s (what NTFS counts), or strlen(s) when it
 * cannot be converted. */
static size_t name_units(const char *s) {
  int n = MultiByteToWideChar(CP_UTF8, 0, s, -1, NULL, 0);
  return n > 0 ? (size_t)n - 1 : strlen(s);
}

calstore_status cs_plat_check_names(const char *path, const char *lock_path, const char *tmp_path,
                                    calstore_error *err) {
  const size_t limit = 255; /* NTFS, FAT32 (long names) and ReFS: 255 UTF-16 units */
  const char *base = base_name(path);
  if (name_units(base) > limit)
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, path,
                   "the store file name %.300s is too long (limit %u characters)", base,
                   (unsigned)limit);
  const char *role[2] = {"lock file", "temporary file"};
  const char *sibling[2] = {lock_path, tmp_path};
  for (int i = 0; i < 2; i++) {
    const char *b = sibling[i] ? base_name(sibling[i]) : "";
    if (name_units(b) > limit)
      return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, path,
                     "the store file name is too long for its %s %.300s (limit %u characters)",
                     role[i], b, (unsigned)limit);
  }
  return CALSTORE_OK;
}

calstore_status cs_plat_lock(const char *lock_path, const char *store_path, uint32_t timeout_ms,
                             intptr_t *handle, calstore_error *err) {
  (void)store_path; /* the lock file inherits the directory's ACL, as the store file does */
  wchar_t *w = widen(lock_path);
  if (!w)
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, lock_path, "cannot convert %s", lock_path);
  HANDLE h = CreateFileW(w, GENERIC_READ | GENERIC_WRITE,
                         FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_ALWAYS,
                         FILE_ATTRIBUTE_NORMAL, NULL);
  free(w);
  if (h == INVALID_HANDLE_VALUE)
    return fail_win(err, CALSTORE_LOCK_FAILED, lock_path, "cannot open lock file", GetLastError());
  if (GetFileType(h) != FILE_TYPE_DISK) {
    CloseHandle(h);
    return cs_fail(err, CALSTORE_LOCK_FAILED, 0, lock_path,
                   "cannot use lock file %s: not a regular file", lock_path);
  }
  OVERLAPPED ov;
  memset(&ov, 0, sizeof ov);
  DWORD fe = FAULT("lock");
  BOOL locked = FALSE;
  if (!fe && timeout_ms == UINT32_MAX) {
    locked = LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &ov);
  } else if (!fe) {
    /* bounded: non-blocking tries with a growing pause (1 ms up to 50 ms) */
    ULONGLONG deadline = GetTickCount64() + timeout_ms;
    DWORD pause = 1;
    while (!(locked = LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0,
                                 &ov)) &&
           GetLastError() == ERROR_LOCK_VIOLATION && GetTickCount64() < deadline) {
      Sleep(pause);
      if (pause < 50)
        pause *= 2;
    }
  }
  if (fe || !locked) {
    DWORD e = fe ? fe : GetLastError();
    CloseHandle(h);
    return fail_win(err, CALSTORE_LOCK_FAILED, lock_path, "cannot lock", e);
  }
  CRASH_AFTER("lock");
  *handle = (intptr_t)h;
  return CALSTORE_OK;
}

void cs_plat_unlock(intptr_t handle) {
  HANDLE h = (HANDLE)handle;
  OVERLAPPED ov;
  memset(&ov, 0, sizeof ov);
  UnlockFileEx(h, 0, 1, 0, &ov);
  CloseHandle(h);
}

/* FILE_RENAME_INFO with its Flags member (FileRenameInfoEx), declared here
 * so older SDK headers build it too. */
typedef struct cs_rename_info {
  DWORD flags;
  HANDLE root;
  DWORD name_bytes;
  WCHAR name[1];
} cs_rename_info;

/* Renames the open temporary file h over path with POSIX semantics
 * (SetFileInformationByHandle FileRenameInfoEx, FILE_RENAME_FLAG_REPLACE_IF_EXISTS
 * | FILE_RENAME_FLAG_POSIX_SEMANTICS): the name switches to the new file
 * even while other processes have the old one open (with FILE_SHARE_DELETE,
 * as the store's readers do), as rename(2) does. Windows 10 1709 and later
 * on NTFS; elsewhere (older Windows, FAT, Wine 8, which answers
 * ERROR_INVALID_PARAMETER) it fails and the caller falls back to
 * replace_file. h needs DELETE access. Returns nonzero on success. */
static int posix_rename(HANDLE h, const wchar_t *path) {
  wchar_t *full = NULL;
  DWORD n = GetFullPathNameW(path, 0, NULL, NULL);
  if (n == 0 || !(full = malloc((size_t)n * sizeof *full)) ||
      GetFullPathNameW(path, n, full, NULL) == 0) {
    free(full);
    return 0;
  }
  size_t bytes = wcslen(full) * sizeof *full;
  size_t size = offsetof(cs_rename_info, name) + bytes + sizeof(WCHAR);
  cs_rename_info *ri = calloc(1, size);
  BOOL ok = FALSE;
  if (ri && size <= MAXDWORD) {
    ri->flags = 0x1 /* REPLACE_IF_EXISTS */ | 0x2 /* POSIX_SEMANTICS */;
    ri->name_bytes = (DWORD)bytes;
    memcpy(ri->name, full, bytes);
    ok = SetFileInformationByHandle(h, (FILE_INFO_BY_HANDLE_CLASS)22 /* FileRenameInfoEx */, ri,
                                    (DWORD)size);
  }
  free(ri);
  free(full);
  return ok != 0;
}

/* MoveFileExW(tmp -> path, REPLACE_EXISTING | WRITE_THROUGH). Windows
 * refuses to replace a file another process has open, even one opened with
 * FILE_SHARE_DELETE as every reader of the store opens it
 * (ERROR_ACCESS_DENIED, or ERROR_SHARING_VIOLATION): a reader of another
 * process holds it only while it reads, so the rename is retried with a
 * growing pause (1 ms up to 64 ms) for about two seconds before the error
 * is returned. Writers are excluded by the caller's lock. Returns nonzero
 * on success, else 0 with the error in *e. */
static int replace_file(const wchar_t *tmp, const wchar_t *path, DWORD *e) {
  ULONGLONG deadline = GetTickCount64() + 2000;
  DWORD pause = 1;
  for (;;) {
    if (MoveFileExW(tmp, path, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
      return 1;
    *e = GetLastError();
    if ((*e != ERROR_ACCESS_DENIED && *e != ERROR_SHARING_VIOLATION) ||
        GetTickCount64() >= deadline)
      return 0;
    DWORD attr = GetFileAttributesW(path);
    if (attr != INVALID_FILE_ATTRIBUTES && (attr & FILE_ATTRIBUTE_READONLY))
      return 0; /* made read-only meanwhile: no retry will help */
    Sleep(pause);
    if (pause < 64)
      pause *= 2;
  }
}

/* Refuses a destination that is a directory, or read-only: MoveFileExW
 * refuses a read-only one (ERROR_ACCESS_DENIED), so say why up front,
 * before any temporary file is made. */
static calstore_status check_destination(const char *path, const wchar_t *wpath,
                                         calstore_error *err) {
  DWORD attr = GetFileAttributesW(wpath);
  if (attr != INVALID_FILE_ATTRIBUTES && (attr & FILE_ATTRIBUTE_DIRECTORY))
    return cs_fail(err, CALSTORE_WRITE_FAILED, 0, path,
                   "cannot replace %s: it is a directory, not a regular file", path);
  if (attr != INVALID_FILE_ATTRIBUTES && (attr & FILE_ATTRIBUTE_READONLY))
    return cs_fail(err, CALSTORE_WRITE_FAILED, 0, path,
                   "%s is read-only (its read-only attribute is set); refusing to replace it",
                   path);
  return CALSTORE_OK;
}

/* Creates the temporary file (CREATE_NEW: another process's file is never
 * touched): at tmp_path, whatever sits there removed first (a read-only one
 * too: POSIX unlink ignores the file's mode, DeleteFileW refuses the
 * read-only attribute), or, tmp_path NULL, at a unique name written into
 * made (`<path>.<pid>-<n>.tmp`, made_cap bytes). *wtmp receives the wide
 * name (NULL: out of memory), *h the handle. Returns 0 or the error; *stale
 * is set when the error is the removal's. */
static DWORD open_temporary(const char *path, const char *tmp_path, char *made, size_t made_cap,
                            wchar_t **wtmp, HANDLE *h, int *stale) {
  DWORD e = 0;
  *stale = 0;
  if (tmp_path) {
    *wtmp = widen(tmp_path);
    if (*wtmp && !DeleteFileW(*wtmp)) {
      e = GetLastError();
      if (e == ERROR_ACCESS_DENIED && SetFileAttributesW(*wtmp, FILE_ATTRIBUTE_NORMAL))
        e = DeleteFileW(*wtmp) ? 0 : GetLastError();
      if (e && !is_missing(e))
        return *stale = 1, e;
      e = 0;
    }
    if (*wtmp && (e = FAULT("open_tmp")) == 0) {
      *h = CreateFileW(*wtmp, GENERIC_WRITE | DELETE, 0, NULL, CREATE_NEW,
                       FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
      if (*h == INVALID_HANDLE_VALUE)
        e = GetLastError();
    }
    return e;
  }
  if ((e = FAULT("open_tmp")) != 0)
    return e;
  static volatile LONG counter;
  for (int tries = 0; tries < 100 && *h == INVALID_HANDLE_VALUE; tries++) {
    snprintf(made, made_cap, "%s.%lu-%ld.tmp", path, (unsigned long)GetCurrentProcessId(),
             (long)InterlockedIncrement(&counter));
    free(*wtmp);
    *wtmp = widen(made);
    if (!*wtmp)
      break;
    *h = CreateFileW(*wtmp, GENERIC_WRITE | DELETE, 0, NULL, CREATE_NEW,
                     FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
    e = *h == INVALID_HANDLE_VALUE ? GetLastError() : 0;
    if (e && e != ERROR_FILE_EXISTS && e != ERROR_ALREADY_EXISTS)
      break;
  }
  return e;
}

/* Writes the chunks to h, flushes them and reads the file's identity into
 * *fi. Returns 0, or the error with *what naming the step that failed. */
static DWORD write_temporary(HANDLE h, const cs_chunk *chunks, size_t nchunks,
                             BY_HANDLE_FILE_INFORMATION *fi, const char **what) {
  DWORD e;
  *what = "write";
  if ((e = FAULT("write")) != 0)
    return e;
  for (size_t c = 0; c < nchunks; c++) {
    const char *data = chunks[c].data;
    size_t len = chunks[c].len;
    for (size_t off = 0; off < len;) {
      DWORD piece = (DWORD)((len - off) > 0x40000000 ? 0x40000000 : (len - off)), wrote = 0;
      if (!WriteFile(h, data + off, piece, &wrote, NULL) || wrote == 0)
        return (e = GetLastError()) != 0 ? e : ERROR_WRITE_FAULT;
      off += wrote;
    }
  }
  CRASH_AFTER("write");
  *what = "flush";
  if ((e = FAULT("fsync")) != 0)
    return e;
  if (!FlushFileBuffers(h))
    return GetLastError();
  CRASH_AFTER("fsync");
  if (!GetFileInformationByHandle(h, fi))
    return GetLastError();
  return 0;
}

calstore_status cs_plat_replace(const char *path, const char *tmp_path, const cs_chunk *chunks,
                                size_t nchunks, cs_file_id *id, intptr_t *pin, int *replaced,
                                calstore_error *err) {
  *replaced = 0;
  if (pin)
    *pin = CS_NO_PIN;
  calstore_status st = CALSTORE_OK;
  HANDLE h = INVALID_HANDLE_VALUE;
  const char *what = "create";
  char *made = NULL; /* the unique temp name when the caller has none */
  if (!tmp_path) {
    made = malloc(strlen(path) + 48);
    if (!made)
      return cs_fail(err, CALSTORE_NO_MEMORY, 0, path, "out of memory");
  }
  wchar_t *wtmp = NULL, *wpath = widen(path);
  if (!wpath) {
    free(made);
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, path, "cannot convert %s", path);
  }
  if ((st = check_destination(path, wpath, err)) != CALSTORE_OK) {
    free(made);
    free(wpath);
    return st;
  }
  int stale;
  DWORD e = open_temporary(path, tmp_path, made, strlen(path) + 48, &wtmp, &h, &stale);
  if (stale) {
    free(wtmp);
    free(wpath);
    return fail_win(err, CALSTORE_WRITE_FAILED, tmp_path, "cannot remove stale", e);
  }
  if (made)
    tmp_path = made;
  if (!wtmp) {
    free(made);
    free(wpath);
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, path, "cannot convert %s", path);
  }
  if (e || h == INVALID_HANDLE_VALUE) {
    if (!e)
      e = ERROR_FILE_EXISTS;
    free(wtmp);
    free(wpath);
    st = fail_win(err, CALSTORE_WRITE_FAILED, tmp_path, "cannot create", e);
    free(made);
    return st;
  }
  CRASH_AFTER("open_tmp");
  BY_HANDLE_FILE_INFORMATION fi;
  if ((e = write_temporary(h, chunks, nchunks, &fi, &what)) != 0)
    goto fail;
  what = "rename";
  if ((e = FAULT("rename")) != 0)
    goto fail;
  {
    int renamed = posix_rename(h, wpath);
    CloseHandle(h);
    h = INVALID_HANDLE_VALUE;
    if (!renamed && !replace_file(wtmp, wpath, &e))
      goto fail;
  }
  CRASH_AFTER("rename");
  *replaced = 1;
  fill_id(&fi, id);
  if (pin)
    *pin = 0; /* the NTFS index names this version alone: nothing to hold */
  /* MOVEFILE_WRITE_THROUGH made the rename durable: no directory sync */
  free(wtmp);
  free(wpath);
  free(made);
  return CALSTORE_OK;
fail:
  if (h != INVALID_HANDLE_VALUE)
    CloseHandle(h);
  DeleteFileW(wtmp); /* the file this call created, nothing else */
  free(wtmp);
  free(wpath);
  {
    char msg[256];
    win_message(e, msg, sizeof msg);
    st = cs_fail(err, CALSTORE_WRITE_FAILED, 0, path, "%s of %s failed while replacing %s: %s",
                 what, tmp_path, path, msg);
  }
  free(made);
  return st;
}

calstore_status cs_plat_default_path(char *buf, size_t capacity) {
  const char *base = getenv("LOCALAPPDATA");
  if (!base || !base[0])
    return CALSTORE_INVALID_ARGUMENT;
  int n = snprintf(buf, capacity, "%s\\calhost\\profiles.txt", base);
  if (n < 0 || (size_t)n >= capacity)
    return CALSTORE_INVALID_ARGUMENT;
  return CALSTORE_OK;
}
#endif /* _WIN32 */
