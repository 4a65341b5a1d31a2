/*
 * platform_posix.c: the store's POSIX layer (see platform.h): pthread locks,
 * flock on the sibling .lock file (its mode and group following the store
 * file's writers), whole-file reads, the atomic replace sequence (refusal
 * of a write-protected file, fresh O_EXCL|O_NOFOLLOW temp, write, fsync,
 * rename, fsync dir), the file name length check, mkdir -p 0700, the
 * default path, and the fault-injection hooks.
 */
#ifndef _WIN32
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "platform.h"

/* ---- fault injection ----------------------------------------------------- */

#ifdef CALHOST_FAULT_INJECTION
/* The errno of each of the error names CALSTORE_FAULT may use (platform.h). */
static const int fault_errnos[CS_FAULT_ERRORS] = {EIO,    ENOSPC, EFBIG, EXDEV,
                                                  EAGAIN, EACCES, EROFS, EINTR};

/* Returns the errno CALSTORE_FAULT injects at step, else 0 (FAULT). */
static int fault_at(const char *step) {
  int i = cs_fault_error_index(step);
  return i < 0 ? 0 : fault_errnos[i];
}

/* Kills the process when CALSTORE_FAULT says crash_after:step (CRASH_AFTER). */
static void crash_after(const char *step) {
  if (cs_fault_crash_after(step))
    kill(getpid(), SIGKILL);
}
#endif

/* ---- threads ------------------------------------------------------------- */

int cs_rwlock_init(cs_rwlock *l) {
  return pthread_rwlock_init(l, NULL);
}
void cs_rwlock_destroy(cs_rwlock *l) {
  pthread_rwlock_destroy(l);
}
void cs_rwlock_lock(cs_rwlock *l, cs_lock_mode mode) {
  if (mode == CS_EXCLUSIVE)
    pthread_rwlock_wrlock(l);
  else
    pthread_rwlock_rdlock(l);
}
void cs_rwlock_unlock(cs_rwlock *l, cs_lock_mode mode) {
  (void)mode; /* one call releases either mode */
  pthread_rwlock_unlock(l);
}

/* ---- files --------------------------------------------------------------- */

static void fill_id(const struct stat *st, cs_file_id *id) {
  id->dev = (uint64_t)st->st_dev;
  id->ino = (uint64_t)st->st_ino;
  id->size = (uint64_t)st->st_size;
  id->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
  id->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

/* What a file that is not a regular file is, for messages. */
static const char *file_kind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a plain file";
}

calstore_status cs_plat_stat(const char *path, cs_file_id *id, calstore_error *err) {
  struct stat st;
  if (stat(path, &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      return CALSTORE_NOT_FOUND;
    return cs_fail(err, CALSTORE_UNREADABLE, 0, path, "cannot stat %s: %s", path, strerror(errno));
  }
  fill_id(&st, id);
  return CALSTORE_OK;
}

void cs_plat_unpin(intptr_t pin) {
  if (pin != CS_NO_PIN)
    close((int)pin);
}

/* cs_plat_read_loop's read on POSIX (file: the descriptor), again after a
 * signal. */
static calstore_status read_fd(void *file, char *buf, size_t want, size_t *got, const char *path,
                               calstore_error *err) {
  for (;;) {
    ssize_t r = read(*(int *)file, buf, want);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return cs_fail(err, CALSTORE_UNREADABLE, 0, path, "cannot read %s: %s", path,
                     strerror(errno));
    *got = (size_t)r;
    return CALSTORE_OK;
  }
}

calstore_status cs_plat_read_file(const char *path, char **data, size_t *len, cs_file_id *id,
                                  intptr_t *pin, calstore_error *err) {
  int e;
  if (pin)
    *pin = CS_NO_PIN;
  /* O_NONBLOCK: opening a FIFO (or a device) must not wait for a writer;
   * what is not a regular file is refused below, before any read. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  *data = NULL;
  *len = 0;
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      return cs_fail(err, CALSTORE_NOT_FOUND, 0, path, "%s does not exist", path);
    return cs_fail(err, CALSTORE_UNREADABLE, 0, path, "cannot open %s: %s", path, strerror(errno));
  }
  struct stat st;
  if ((e = FAULT("read")) != 0 || fstat(fd, &st) != 0) {
    e = e ? e : errno;
    close(fd);
    return cs_fail(err, CALSTORE_UNREADABLE, 0, path, "cannot read %s: %s", path, strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return cs_fail(err, CALSTORE_UNREADABLE, 0, path,
                   "%s is not a regular file (%s); refusing to read it", path,
                   file_kind(st.st_mode));
  }
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
    e = errno;
    close(fd);
    return cs_fail(err, CALSTORE_UNREADABLE, 0, path, "cannot read %s: %s", path, strerror(e));
  }
  char *buf;
  size_t n;
  calstore_status rs = cs_plat_read_loop(&fd, read_fd, (uint64_t)st.st_size, path, &buf, &n, err);
  if (rs != CALSTORE_OK) {
    close(fd);
    return rs;
  }
  if (id)
    fill_id(&st, id);
  if (pin)
    *pin = fd; /* the descriptor keeps this inode from being reused */
  else
    close(fd);
  *data = buf;
  *len = n;
  return CALSTORE_OK;
}

calstore_status cs_plat_resolve(const char *path, char **out, calstore_error *err) {
  char *cur = strdup(path);
  *out = NULL;
  if (!cur)
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, path, "out of memory");
  for (int hops = 0;; hops++) {
    struct stat st;
    if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
      break; /* not a link (or nothing there yet): this is the file */
    if (hops == 40) {
      free(cur);
      return cs_fail(err, CALSTORE_UNREADABLE, 0, path,
                     "cannot resolve %s: too many levels of symbolic links", path);
    }
    size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096;
    char *target = malloc(cap);
    ssize_t n = target ? readlink(cur, target, cap) : -1;
    if (n < 0 || (size_t)n >= cap) {
      int e = target ? (n < 0 ? errno : ENAMETOOLONG) : ENOMEM;
      free(target);
      free(cur);
      return cs_fail(err, CALSTORE_UNREADABLE, 0, path, "cannot resolve the link %s: %s", path,
                     strerror(e));
    }
    target[n] = '\0';
    char *next;
    const char *slash = strrchr(cur, '/');
    if (target[0] == '/' || !slash) {
      next = target; /* absolute, or relative to the current directory like cur */
    } else {
      size_t dl = (size_t)(slash - cur) + 1;
      next = malloc(dl + (size_t)n + 1);
      if (next) {
        memcpy(next, cur, dl);
        memcpy(next + dl, target, (size_t)n + 1);
      }
      free(target);
    }
    free(cur);
    if (!next)
      return cs_fail(err, CALSTORE_NO_MEMORY, 0, path, "out of memory");
    cur = next;
  }
  *out = cur;
  return CALSTORE_OK;
}

/* The canonical folder of path (realpath of its directory part) and its
 * last component, "FOLDER/NAME", malloc'ed; NULL when the folder cannot be
 * resolved. */
static char *canonical_name(const char *path) {
  char *copy = strdup(path), *copy2 = strdup(path);
  char *real = NULL, *out = NULL;
  if (copy && copy2) {
    const char *name = basename(copy2);
    real = realpath(dirname(copy), NULL);
    if (real && (out = malloc(strlen(real) + strlen(name) + 2)) != NULL)
      sprintf(out, "%s/%s", real, name);
  }
  free(real);
  free(copy);
  free(copy2);
  return out;
}

int cs_plat_same_name(const char *a, const char *b) {
  char *x = canonical_name(a), *y = canonical_name(b);
  int same = x && y && !strcmp(x, y);
  free(x);
  free(y);
  return same;
}

/* mkdir -p of dir (modified temporarily), mode 0700 for what it creates. */
static int mkdirs(char *dir) {
  struct stat st;
  if (stat(dir, &st) == 0)
    return S_ISDIR(st.st_mode) ? 0 : (errno = ENOTDIR, -1);
  for (char *p = dir + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = '\0';
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
      *p = '/';
      return -1;
    }
    *p = '/';
  }
  if (mkdir(dir, 0700) != 0 && errno != EEXIST)
    return -1;
  return 0;
}

/* Cuts the path in dir to its folder in place (dirname(3): "." when it has
 * no slash, "/" for a file at the root); dir holds at least 2 bytes. */
static void to_folder(char *dir) {
  const char *d = dirname(dir);
  memmove(dir, d, strlen(d) + 1);
}

calstore_status cs_plat_mkdir_parent(const char *path, calstore_error *err) {
  char *dir = malloc(strlen(path) + 2);
  if (!dir)
    return cs_fail(err, CALSTORE_NO_MEMORY, 0, path, "out of memory");
  strcpy(dir, path);
  to_folder(dir);
  int rc = 0, e = 0;
  if (strcmp(dir, ".") && strcmp(dir, "/")) {
    if ((e = FAULT("mkdir")) != 0)
      rc = -1, errno = e;
    else
      rc = mkdirs(dir);
  }
  e = errno;
  calstore_status st = CALSTORE_OK;
  if (rc != 0)
    st = cs_fail(err, CALSTORE_WRITE_FAILED, 0, path, "cannot create directory %s: %s", dir,
                 strerror(e));
  free(dir);
  return st;
}

/* The longest file name (bytes) the directory holding path accepts:
 * pathconf(_PC_NAME_MAX) of it, or of its nearest existing ancestor when it
 * does not exist yet (it is created at the first commit); 255 when that
 * fails, 0 when the file system sets no limit. */
static size_t name_max_for(const char *path) {
  char *dir = malloc(strlen(path) + 2);
  size_t limit = 255;
  if (!dir)
    return limit;
  strcpy(dir, path);
  for (;;) {
    to_folder(dir);
    errno = 0;
    long n = pathconf(dir, _PC_NAME_MAX);
    if (n > 0 || (n < 0 && errno == 0)) {
      limit = n > 0 ? (size_t)n : 0;
      break;
    }
    if ((errno != ENOENT && errno != ENOTDIR) || !strcmp(dir, ".") || !strcmp(dir, "/"))
      break; /* the fallback */
  }
  free(dir);
  return limit;
}

/* The last component of path. */
static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

calstore_status cs_plat_check_names(const char *path, const char *lock_path, const char *tmp_path,
                                    calstore_error *err) {
  size_t limit = name_max_for(path);
  if (!limit)
    return CALSTORE_OK;
  const char *base = base_name(path);
  if (strlen(base) > limit)
    return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, path,
                   "the store file name %.300s is too long (%zu bytes; limit %zu bytes)", base,
                   strlen(base), limit);
  const char *role[2] = {"lock file", "temporary file"};
  const char *sibling[2] = {lock_path, tmp_path};
  for (int i = 0; i < 2; i++) {
    const char *b = sibling[i] ? base_name(sibling[i]) : "";
    size_t extra = strlen(b) - strlen(base); /* the sibling's suffix */
    if (strlen(b) > limit)
      return cs_fail(err, CALSTORE_INVALID_ARGUMENT, 0, path,
                     "the store file name is too long for its %s %.300s (%zu bytes; limit %zu "
                     "bytes): use a name of at most %zu bytes",
                     role[i], b, strlen(b), limit, limit > extra ? limit - extra : 0);
  }
  return CALSTORE_OK;
}

/* Milliseconds on the monotonic clock. */
static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* flock(LOCK_EX) bounded by timeout_ms: non-blocking tries with a growing
 * pause (1 ms up to 50 ms). Returns 0, or -1 with errno (ETIMEDOUT when
 * the time ran out). */
static int flock_bounded(int fd, uint32_t timeout_ms) {
  if (timeout_ms == UINT32_MAX) {
    int rc;
    do
      rc = flock(fd, LOCK_EX);
    while (rc != 0 && errno == EINTR);
    return rc;
  }
  uint64_t deadline = now_ms() + timeout_ms;
  long pause_us = 1000;
  for (;;) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
      return 0;
    if (errno != EWOULDBLOCK && errno != EINTR)
      return -1;
    uint64_t now = now_ms();
    if (now >= deadline) {
      errno = ETIMEDOUT;
      return -1;
    }
    long left_us = (long)(deadline - now) * 1000;
    struct timespec ts = {0, (pause_us < left_us ? pause_us : left_us) * 1000};
    nanosleep(&ts, NULL);
    if (pause_us < 50000)
      pause_us *= 2;
  }
}

/* The permission bits a lock file needs for the writers of a store file of
 * mode store_mode: read and write for its owner, and for the group and the
 * others where the store grants them write permission (they are the ones
 * that commit). A class that may only read the store gets nothing: holding
 * the lock is all an open lock file allows, so read access would only let
 * a reader block the writers. */
static mode_t lock_mode_for(mode_t store_mode) {
  mode_t m = S_IRUSR | S_IWUSR;
  if (store_mode & S_IWGRP)
    m |= S_IRGRP | S_IWGRP;
  if (store_mode & S_IWOTH)
    m |= S_IROTH | S_IWOTH;
  return m;
}

/* Lets the writers of the store file (*store) use the lock file at fd
 * (*lock: its state): a lock file this process owns takes the store's
 * group (best effort, as keep_attributes) and, when its mode is narrower
 * than lock_mode_for(the store's mode), is widened to it (never narrowed).
 * The umask does not apply: a shared store's lock stays shared. */
static void share_lock_file(int fd, const struct stat *lock, const struct stat *store) {
  if (lock->st_uid != geteuid())
    return; /* another user's lock file: only its owner may change it */
  if (lock->st_gid != store->st_gid && fchown(fd, (uid_t)-1, store->st_gid) != 0) {
    /* best effort: the caller may not be a member of the store's group */
  }
  mode_t want = lock_mode_for(store->st_mode);
  if ((lock->st_mode & want) != want && fchmod(fd, (lock->st_mode & 07777) | want) != 0) {
    /* best effort: the lock still works for this writer */
  }
}

calstore_status cs_plat_lock(const char *lock_path, const char *store_path, uint32_t timeout_ms,
                             intptr_t *handle, calstore_error *err) {
  int e;
  struct stat sst;
  int have_store = store_path && stat(store_path, &sst) == 0 && S_ISREG(sst.st_mode);
  mode_t create_mode = have_store ? lock_mode_for(sst.st_mode) : 0600;
  int fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY,
                create_mode);
  if (fd < 0) {
    e = errno;
    struct stat link;
    if (e == ELOOP && lstat(lock_path, &link) == 0 && S_ISLNK(link.st_mode))
      return cs_fail(err, CALSTORE_LOCK_FAILED, 0, lock_path,
                     "cannot use lock file %s: it is a symbolic link (never followed); remove it",
                     lock_path);
    return cs_fail(err, CALSTORE_LOCK_FAILED, 0, lock_path, "cannot open lock file %s: %s",
                   lock_path, strerror(e));
  }
  struct stat lst;
  if (fstat(fd, &lst) != 0) {
    e = errno;
    close(fd);
    return cs_fail(err, CALSTORE_LOCK_FAILED, 0, lock_path, "cannot use lock file %s: %s",
                   lock_path, strerror(e));
  }
  if (!S_ISREG(lst.st_mode)) {
    close(fd);
    return cs_fail(err, CALSTORE_LOCK_FAILED, 0, lock_path,
                   "cannot use lock file %s: it is %s, not a regular file", lock_path,
                   file_kind(lst.st_mode));
  }
  if (have_store)
    share_lock_file(fd, &lst, &sst);
  int rc;
  if ((e = FAULT("lock")) != 0) {
    rc = -1;
    errno = e;
  } else {
    rc = flock_bounded(fd, timeout_ms);
  }
  if (rc != 0) {
    e = errno;
    close(fd);
    if (e == ETIMEDOUT)
      return cs_fail(err, CALSTORE_LOCK_FAILED, 0, lock_path,
                     "cannot lock %s: another writer has held it for over %u ms", lock_path,
                     (unsigned)timeout_ms);
    return cs_fail(err, CALSTORE_LOCK_FAILED, 0, lock_path, "cannot lock %s: %s", lock_path,
                   strerror(e));
  }
  CRASH_AFTER("lock");
  *handle = fd;
  return CALSTORE_OK;
}

void cs_plat_unlock(intptr_t handle) {
  int fd = (int)handle;
  flock(fd, LOCK_UN);
  close(fd);
}

/* Writes every chunk with writev, retrying on EINTR and short writes. */
static int write_all(int fd, const cs_chunk *chunks, size_t n) {
  int e = FAULT("write");
  if (e) {
    errno = e;
    return -1;
  }
  struct iovec iov[512];
  size_t next = 0, skip = 0; /* next chunk, bytes of it already written */
  while (next < n) {
    int cnt = 0;
    for (size_t i = next; i < n && cnt < 512; i++, cnt++) {
      size_t off = i == next ? skip : 0;
      iov[cnt].iov_base = (void *)(chunks[i].data + off);
      iov[cnt].iov_len = chunks[i].len - off;
    }
    ssize_t w = writev(fd, iov, cnt);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0)
      return -1;
    if (w == 0) {
      errno = EIO;
      return -1;
    }
    size_t left = (size_t)w;
    while (next < n && left >= chunks[next].len - skip) {
      left -= chunks[next].len - skip;
      next++;
      skip = 0;
    }
    skip += left;
  }
  return 0;
}

static int fsync_dir(const char *path) {
  char *dir = malloc(strlen(path) + 2);
  if (!dir)
    return -1;
  strcpy(dir, path);
  to_folder(dir);
  const char *d = dir;
  int e = FAULT("fsync_dir");
  int rc = -1;
  if (e) {
    errno = e;
  } else {
    int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
      rc = fsync(fd);
      if (rc != 0 && (errno == EINVAL || errno == ENOTSUP))
        rc = 0; /* file systems that cannot sync directories */
      e = errno;
      close(fd);
      errno = e;
    }
  }
  e = errno;
  free(dir);
  errno = e;
  return rc;
}

/* Gives the new file at fd the mode of the file it replaces, and its owner
 * and group where this process may (chown of both, else of the group
 * alone; an unprivileged writer cannot give a file away). Returns 0, or -1
 * with errno when the mode cannot be set. */
static int keep_attributes(int fd, const struct stat *old) {
  struct stat now;
  if (fstat(fd, &now) == 0 && (now.st_uid != old->st_uid || now.st_gid != old->st_gid)) {
    if (fchown(fd, old->st_uid, old->st_gid) != 0 && now.st_gid != old->st_gid &&
        fchown(fd, (uid_t)-1, old->st_gid) != 0) {
      /* best effort: the writer owns the file (as a new file would be) */
    }
  }
  return fchmod(fd, old->st_mode & 07777);
}

/* Creates the temporary file: the caller's own tmp_path (a stale file there
 * is unlinked first: never written through) or, with tmp_path NULL, a
 * unique `<path>.XXXXXX.tmp` created exclusively, or `.calstore.XXXXXX.tmp`
 * in path's folder when path's name leaves no room for the 11 bytes
 * (*made receives its name, malloc'ed). Returns the descriptor or -1 with
 * errno. */
static int open_tmp(const char *path, const char *tmp_path, char **made, int *unlink_failed) {
  *made = NULL;
  *unlink_failed = 0;
  int e;
  if (tmp_path) {
    if (unlink(tmp_path) != 0 && errno != ENOENT) {
      *unlink_failed = 1;
      return -1;
    }
    if ((e = FAULT("open_tmp")) != 0) {
      errno = e;
      return -1;
    }
    return open(tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  }
  static const char suffix[] = ".XXXXXX.tmp", short_name[] = ".calstore.XXXXXX.tmp";
  size_t n = strlen(path), limit = name_max_for(path);
  char *name = malloc(n + sizeof short_name);
  if (!name) {
    errno = ENOMEM;
    return -1;
  }
  memcpy(name, path, n);
  if (limit && strlen(base_name(path)) + sizeof suffix - 1 > limit) {
    n -= strlen(base_name(path)); /* keep the folder part, slash included */
    memcpy(name + n, short_name, sizeof short_name);
  } else {
    memcpy(name + n, suffix, sizeof suffix);
  }
  if ((e = FAULT("open_tmp")) != 0) {
    free(name);
    errno = e;
    return -1;
  }
  int fd = mkostemps(name, 4, O_CLOEXEC); /* O_CREAT | O_EXCL, mode 0600 */
  if (fd < 0) {
    e = errno;
    free(name);
    errno = e;
    return -1;
  }
  *made = name;
  return fd;
}

calstore_status cs_plat_replace(const char *path, const char *tmp_path, const cs_chunk *chunks,
                                size_t nchunks, cs_file_id *id, intptr_t *pin, int *replaced,
                                calstore_error *err) {
  int e;
  *replaced = 0;
  if (pin)
    *pin = CS_NO_PIN;
  const char *what;
  struct stat old;
  int have_old = stat(path, &old) == 0;
  if (have_old && !S_ISREG(old.st_mode))
    return cs_fail(err, CALSTORE_WRITE_FAILED, 0, path,
                   "cannot replace %s: it is %s, not a regular file", path, file_kind(old.st_mode));
  /* rename needs only the directory's write permission: a file the caller
   * may not write (write-protected, e.g. chmod 444) is refused here, as
   * opening it for writing would be, so a protected store is never lost.
   * access() applies ACLs; root passes it, as it may write any file. */
  if (have_old && access(path, W_OK) != 0 && ((e = errno) == EACCES || e == EROFS)) {
    if (e == EROFS)
      return cs_fail(err, CALSTORE_WRITE_FAILED, 0, path,
                     "%s is on a read-only file system; refusing to replace it", path);
    return cs_fail(err, CALSTORE_WRITE_FAILED, 0, path,
                   "%s is read-only (mode %04o: not writable by this user); refusing to replace it",
                   path, (unsigned)(old.st_mode & 07777));
  }
  char *made = NULL;
  int unlink_failed = 0;
  int fd = open_tmp(path, tmp_path, &made, &unlink_failed);
  if (fd < 0) {
    e = errno;
    if (unlink_failed)
      return cs_fail(err, CALSTORE_WRITE_FAILED, 0, tmp_path, "cannot remove stale %s: %s",
                     tmp_path, strerror(e));
    return cs_fail(err, CALSTORE_WRITE_FAILED, 0, path, "cannot create a temporary file %s: %s",
                   tmp_path ? tmp_path : "next to it", strerror(e));
  }
  const char *tmp = made ? made : tmp_path;
  CRASH_AFTER("open_tmp");
  what = "chmod";
  if (have_old && keep_attributes(fd, &old) != 0)
    goto fail;
  what = "write";
  if (write_all(fd, chunks, nchunks) != 0)
    goto fail;
  CRASH_AFTER("write");
  what = "fsync";
  if ((e = FAULT("fsync")) != 0) {
    errno = e;
    goto fail;
  }
  if (fsync(fd) != 0)
    goto fail;
  CRASH_AFTER("fsync");
  struct stat st;
  what = "stat";
  if (fstat(fd, &st) != 0)
    goto fail;
  what = "close";
  if (close(fd) != 0) {
    fd = -1;
    goto fail;
  }
  fd = -1;
  what = "rename";
  if ((e = FAULT("rename")) != 0) {
    errno = e;
    goto fail;
  }
  if (rename(tmp, path) != 0)
    goto fail;
  CRASH_AFTER("rename");
  free(made);
  made = NULL;
  /* rename changed the inode's ctime: take the identity the file has now
   * (with the caller's lock nobody else replaces it meanwhile), through the
   * descriptor that pins it when the caller wants a pin */
  struct stat now;
  int held = pin ? open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) : -1;
  if (held >= 0 && (fstat(held, &now) != 0 || now.st_ino != st.st_ino || now.st_dev != st.st_dev)) {
    close(held); /* not this call's file: no pin, the caller reloads */
    held = -1;
    fill_id(&st, id);
  } else if (held >= 0) {
    fill_id(&now, id);
    *pin = held;
  } else {
    fill_id(stat(path, &now) == 0 ? &now : &st, id);
  }
  *replaced = 1;
  if (fsync_dir(path) != 0) {
    e = errno;
    /* The new file is in place; only its durability is in doubt. */
    return cs_fail(err, CALSTORE_WRITE_FAILED, 0, path,
                   "replaced %s but could not sync its directory: %s", path, strerror(e));
  }
  CRASH_AFTER("fsync_dir");
  return CALSTORE_OK;
fail:
  e = errno;
  if (fd >= 0)
    close(fd);
  unlink(tmp); /* the file this call created, nothing else */
  cs_fail(err, CALSTORE_WRITE_FAILED, 0, path, "%s of %s failed while replacing %s: %s", what, tmp,
          path, strerror(e));
  free(made);
  return CALSTORE_WRITE_FAILED;
}

calstore_status cs_plat_default_path(char *buf, size_t capacity) {
  const char *xdg = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  int n;
  /* The XDG rule: a relative XDG_CACHE_HOME is invalid and ignored (it
   * would make the store depend on the current directory). */
  if (xdg && xdg[0] == '/')
    n = snprintf(buf, capacity, "%s/calhost/profiles.txt", xdg);
  else if (home && home[0])
    n = snprintf(buf, capacity, "%s/.cache/calhost/profiles.txt", home);
  else
    return CALSTORE_INVALID_ARGUMENT;
  if (n < 0 || (size_t)n >= capacity)
    return CALSTORE_INVALID_ARGUMENT;
  return CALSTORE_OK;
}
#endif /* !_WIN32 */
