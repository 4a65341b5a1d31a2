/*
 * files.h: the one way the host opens a file it must read whole (a
 * configuration, a model to hash): never blocking on the open, refusing
 * what is not a regular file before any read; reading a descriptor to its
 * end; the one check that a file can be written before a job that ends by
 * writing it; and the one rule for every file the host writes (a report
 * page, run.json, a --record space file, an export): its missing folders
 * are created, what stands at its name must be a regular file or nothing,
 * and it is written to a temporary file created exclusively (never through
 * a planted link), then renamed into place. Part of the base layer:
 * depends on nothing but libc (POSIX).
 */
#ifndef CALHOST_BASE_FILES_H
#define CALHOST_BASE_FILES_H

#include <stddef.h>

/* Opens path for reading. The open does not block (a FIFO must not wait for
 * a writer); what is not a regular file is refused before any read ("PATH:
 * is not a regular file (a FIFO); refusing to read it"; likewise a
 * directory, a device or a socket), except the null device when
 * allow_null (it reads as empty). The descriptor is then made blocking and
 * close-on-exec. Returns it, or -1 with "PATH: message" in err (err may be
 * NULL). */
int base_open_regular(const char *path, int allow_null, char *err, size_t cap);

/* The one way the host reads a descriptor to its end into memory: *text
 * (malloc'd, NUL-terminated, owned by the caller) and *length bytes,
 * retrying interrupted reads. Returns 0, or -1 with errno set: EFBIG past
 * max bytes, ENOMEM, or the read's error; *text is then NULL. Does not
 * close fd. */
int base_read_fd(int fd, size_t max, char **text, size_t *length);

/* Gives a file made by mkstemp (mode 0600) the mode a plain creation would
 * have given it: 0666 less the umask (read by setting it back: call from a
 * single-threaded moment). For files written to a temporary name, then
 * renamed into place. */
void base_file_mode_as_created(int fd);

/* The one pre-flight check before a long job writes a file: whether path
 * can be created or replaced. The file, when it exists, must be writable;
 * its directory must exist, be a directory and be writable and searchable
 * (the file, or a temporary file renamed over it, is created there). With
 * make_dirs the directory may be missing (the writer creates it): the
 * nearest existing ancestor is checked instead. Returns 0, or -1 with the
 * reason in why (may be NULL), without the path itself: "it is not writable: E", "its
 * directory D does not exist", "D is not a directory", "directory D: E", "a
 * parent of it is not a directory". The write still reports what really
 * happens; this only moves the common failures before the work. */
int base_path_writable(const char *path, int make_dirs, char *why, size_t cap);

/* What a file of this mode is when it is not a regular file, for
 * messages: "a directory", "a FIFO", "a character device", "a block
 * device", "a socket" (or "not a regular file"); NULL for a regular file. */
const char *base_file_kind(unsigned mode);

/* The one rule before an output file is written: creates the folders of
 * path that are missing (mode 0777 less the umask, like mkdir -p), then
 * refuses, with the reason in why (may be NULL; without the path itself),
 * what stands at path when it is not a regular file ("it is a FIFO, not a
 * regular file; refusing to replace it", likewise a directory, a device or
 * a socket; a symbolic link is judged by what it leads to, so /dev/stdout
 * is refused) and everything base_path_writable refuses. Returns 0 or -1. */
int base_output_prepare(const char *path, char *why, size_t cap);

/* Creates the temporary file an output is written to before it is renamed
 * over path: with suffix not NULL the fixed name path+suffix (e.g.
 * "FILE.part", which a dying writer leaves behind: a stale one there is
 * unlinked first, never written through, and the file is created with
 * O_CREAT|O_EXCL|O_NOFOLLOW), else a unique `PATH.XXXXXX.tmp` (mkostemps).
 * Either way its mode is what a plain creation gives (0666 less the umask)
 * and it is close-on-exec. The name goes to tmp (tmp_cap bytes). Returns
 * the descriptor, or -1 with "TMP: reason" in why (may be NULL). */
int base_output_create(const char *path, const char *suffix, char *tmp, size_t tmp_cap, char *why,
                       size_t cap);

/* Renames tmp over path, the last step of every output file: what stands
 * at path is checked again first (a regular file or nothing, as
 * base_output_prepare says). Returns 0, or -1 with "PATH: reason" in why
 * (may be NULL); tmp is then left where it is (the caller removes it or
 * says where the data is). */
int base_output_replace(const char *tmp, const char *path, char *why, size_t cap);

#endif
