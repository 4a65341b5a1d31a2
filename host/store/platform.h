/*
 * platform.h: the store's operating-system layer, implemented once per
 * platform (platform_posix.c, platform_win32.c): locks between threads and
 * processes, whole-file reads, atomic replacement, directory creation, the
 * file name length check, and the fault-injection hooks
 * (CALHOST_FAULT_INJECTION builds only).
 *
 * Fault injection: when compiled with CALHOST_FAULT_INJECTION, the
 * environment variable CALSTORE_FAULT holds comma-separated rules checked at
 * each step of a write: "STEP:ERRNO" makes STEP fail with that errno
 * (EIO, ENOSPC, EFBIG, EXDEV, EAGAIN, EACCES, EROFS, EINTR), and
 * "crash_after:STEP" kills the process (SIGKILL / TerminateProcess) right
 * after STEP succeeded. Steps: mkdir, lock, open_tmp, write, fsync, rename,
 * fsync_dir, read. "alloc:N" makes the N-th allocation counted since
 * cs_fault_alloc_reset fail (internal.h: every malloc, calloc, realloc and
 * strdup of the store).
 */
#ifndef CALHOST_STORE_PLATFORM_H
#define CALHOST_STORE_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

#ifdef CALHOST_FAULT_INJECTION
/* How many error names a "STEP:NAME" rule may use (fault.c's list, in the
 * order above); each platform layer maps them, in that order, to its own
 * error codes. */
#define CS_FAULT_ERRORS 8
/* fault.c: the index (0..CS_FAULT_ERRORS) of the error CALSTORE_FAULT
 * injects at step ("STEP:NAME"), or -1. */
CS_HIDDEN int cs_fault_error_index(const char *step);
/* fault.c: nonzero when CALSTORE_FAULT says "crash_after:STEP". */
CS_HIDDEN int cs_fault_crash_after(const char *step);
/* The hooks of a platform layer, which defines fault_at (its error code
 * CALSTORE_FAULT injects at step, else 0) and crash_after (kills the
 * process when a rule says so): FAULT(step), CRASH_AFTER(step). */
#define FAULT(step) fault_at(step)
#define CRASH_AFTER(step) crash_after(step)
#else
#define FAULT(step) 0
#define CRASH_AFTER(step) ((void)0)
#endif

#ifdef _WIN32
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
typedef SRWLOCK cs_rwlock;
#else
#include <pthread.h>
typedef pthread_rwlock_t cs_rwlock;
#endif

/* The store's one lock between threads: a reader-writer lock, taken shared
 * by readers of the snapshot and exclusively by a writer (the commit lock is
 * one such lock, only ever taken exclusively). unlock takes the mode the
 * lock was taken in. init returns 0 or nonzero on failure. */
typedef enum cs_lock_mode { CS_SHARED, CS_EXCLUSIVE } cs_lock_mode;
CS_HIDDEN int cs_rwlock_init(cs_rwlock *l);
CS_HIDDEN void cs_rwlock_destroy(cs_rwlock *l);
CS_HIDDEN void cs_rwlock_lock(cs_rwlock *l, cs_lock_mode mode);
CS_HIDDEN void cs_rwlock_unlock(cs_rwlock *l, cs_lock_mode mode);

/* What identifies one version of a file on disk. */
typedef struct cs_file_id {
  uint64_t dev, ino, size;
  int64_t mtime_ns, ctime_ns;
} cs_file_id;

/* A pin keeps the identity of one file version from naming another while
 * it is held. A store handle skips the reload of a commit when the file's
 * identity is the one it knows; on POSIX an inode number is handed to the
 * next file created once the old file is gone, and timestamps may only tick
 * every few milliseconds, so another writer's replacement could carry the
 * same identity. An open descriptor keeps the inode allocated: the pin is
 * that descriptor. On Windows the NTFS file index carries a sequence number
 * that changes on reuse, and holding a handle would block other writers'
 * rename, so the pin is a placeholder (0). CS_NO_PIN: none held, the
 * identity must not be trusted. */
#define CS_NO_PIN ((intptr_t)-1)
/* Releases a pin (CS_NO_PIN: nothing). */
CS_HIDDEN void cs_plat_unpin(intptr_t pin);

/* Reads the whole file (NUL-terminated buffer of *len + 1 bytes, caller
 * frees) and its identity. NOT_FOUND when absent, UNREADABLE otherwise,
 * also (naming path) when path is not a regular file: it is opened without
 * blocking, so a FIFO or a device never stalls the caller. With pin not
 * NULL, on success *pin receives the pin of the version read (release it
 * with cs_plat_unpin); otherwise it is CS_NO_PIN. */
CS_HIDDEN calstore_status cs_plat_read_file(const char *path, char **data, size_t *len,
                                            cs_file_id *id, intptr_t *pin, calstore_error *err);
/* One read of an open file (each platform layer's): up to want bytes into
 * buf, their count in *got (0 at the end of the file). OK, or UNREADABLE
 * with the reason, naming path, in err. */
typedef calstore_status (*cs_plat_read_fn)(void *file, char *buf, size_t want, size_t *got,
                                           const char *path, calstore_error *err);
/* The read loop of cs_plat_read_file, the same on every platform
 * (platform_read.c): reads the open file through read_some to its end into
 * a fresh buffer sized for `size` bytes and grown when the file grew since
 * it was measured, NUL-terminated; *data and *len on OK. NO_MEMORY ("out of
 * memory reading PATH") or read_some's failure otherwise, nothing
 * allocated. The caller opens and closes the file. */
CS_HIDDEN calstore_status cs_plat_read_loop(void *file, cs_plat_read_fn read_some, uint64_t size,
                                            const char *path, char **data, size_t *len,
                                            calstore_error *err);
/* Identity of the file now: OK, NOT_FOUND or UNREADABLE. */
CS_HIDDEN calstore_status cs_plat_stat(const char *path, cs_file_id *id, calstore_error *err);
/* Resolves a symbolic link at path (the last component, link after link,
 * a relative target against the link's directory, at most 40 links): *out
 * receives a malloc'ed copy of the file the link leads to, which need not
 * exist, or of path itself when it is not a link. UNREADABLE for a loop. */
CS_HIDDEN calstore_status cs_plat_resolve(const char *path, char **out, calstore_error *err);
/* Nonzero when a and b name the same directory entry (renaming a file
 * onto a replaces b): their folders, made absolute and canonical, and
 * their last components are equal (compared as the file system does:
 * exactly on POSIX, case-insensitively on Windows). 0 when they differ or a
 * folder cannot be resolved. */
CS_HIDDEN int cs_plat_same_name(const char *a, const char *b);
/* Creates the directory holding path (and its parents), mode 0700. */
CS_HIDDEN calstore_status cs_plat_mkdir_parent(const char *path, calstore_error *err);
/* Refuses (CALSTORE_INVALID_ARGUMENT, a message naming the name and the
 * limit) a store file path whose name, or the name of its lock file
 * lock_path or temporary file tmp_path (siblings of path), is longer than
 * the directory accepts: POSIX pathconf(_PC_NAME_MAX) of the directory, or
 * of its nearest existing ancestor, 255 bytes when that fails; Windows 255
 * UTF-16 units. Checked at open, so a commit never fails for it after the
 * work it stores was done. */
CS_HIDDEN calstore_status cs_plat_check_names(const char *path, const char *lock_path,
                                              const char *tmp_path, calstore_error *err);
/* Takes the exclusive inter-process lock on lock_path (must be a regular
 * file), the lock of the store file store_path (may be NULL), waiting at
 * most timeout_ms (0: one try; UINT32_MAX: for ever); then
 * CALSTORE_LOCK_FAILED naming the lock file. *handle receives what
 * cs_plat_unlock needs.
 * POSIX: every writer of the store must be able to open the lock file, so
 * it follows the store file when that exists: it is created with read and
 * write permission for the owner, and for the group and others where the
 * store file grants them write permission (umask not applied), and the
 * store file's group (best effort); a lock file the caller owns whose mode
 * is narrower is widened (never narrowed) and takes the store's group.
 * Without a store file it is created 0600 (less the umask). Windows: the
 * lock file inherits its directory's ACL, as the store file does. */
CS_HIDDEN calstore_status cs_plat_lock(const char *lock_path, const char *store_path,
                                       uint32_t timeout_ms, intptr_t *handle, calstore_error *err);
CS_HIDDEN void cs_plat_unlock(intptr_t handle);
/* Writes the chunks, in order, to a temporary file, syncs it, renames it
 * over path and syncs the directory. The temporary file is tmp_path when
 * not NULL: the caller's own name, used under its lock, so whatever sits
 * there (a stale temp of an interrupted writer, a planted link) is unlinked
 * and a fresh file created, never written through. With tmp_path NULL it is
 * a unique name next to path (`<path>.XXXXXX.tmp`, created exclusively) and
 * nothing but that file is ever removed. The new file takes the mode of
 * the existing path, and its owner and group where allowed (best effort);
 * 0600 when path does not exist. An existing path that is not a regular
 * file is refused, and so is (CALSTORE_WRITE_FAILED naming it, before any
 * temporary file is made) one the caller may not write: POSIX access(W_OK)
 * failing with EACCES or EROFS (a write-protected file, e.g. mode 0444;
 * root passes, as it may write any file), Windows the read-only attribute;
 * the rename itself needs only the directory's write permission, so a
 * protected file would otherwise be lost. On failure before the rename the temporary file is
 * removed, path is untouched and *replaced is 0; *replaced is 1 once path
 * holds the new file (so a failure after it, the directory sync, leaves the
 * change visible). *id receives the new file's identity and, with pin not
 * NULL, *pin its pin once path holds it (CS_NO_PIN when it could not be
 * taken, or on failure); a pin needs the caller's lock, so that path still
 * names this call's file when it is taken. */
CS_HIDDEN calstore_status cs_plat_replace(const char *path, const char *tmp_path,
                                          const cs_chunk *chunks, size_t nchunks, cs_file_id *id,
                                          intptr_t *pin, int *replaced, calstore_error *err);
/* Default store path (see calstore_default_path). */
CS_HIDDEN calstore_status cs_plat_default_path(char *buf, size_t capacity);
/* The variables the default path is made of, for the message when none is
 * set. */
#ifdef _WIN32
#define CS_PLAT_DEFAULT_BASE "LOCALAPPDATA"
#else
#define CS_PLAT_DEFAULT_BASE "HOME / XDG_CACHE_HOME"
#endif

#endif /* CALHOST_STORE_PLATFORM_H */
