/*
 * test_store_persistence.c: the store on disk: malformed files and unknown
 * versions reported with their line and never replacing the snapshot nor
 * destroyed by a writer, stray and planted temp files, file modes (new
 * files private, rewritten files keep mode and owner), symbolic links to
 * the store, FIFOs refused without blocking, export's own temporary file,
 * a file size limit, unreadable and unwritable paths, merging with other
 * writers, write-protected store files never replaced, the lock file's
 * mode and group following the store's writers, no-op commits without a
 * store file creating nothing, names too long for the lock file refused at
 * open; an export onto the store itself (its path, a symbolic link to it)
 * merges the commits made meanwhile, onto a hard link of it or its lock
 * file is refused.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <grp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "util.h"

typedef struct fixture {
  char *dir;
  char *path;
  char *tmp;
  char *lock;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  f->dir = tu_mkdtemp();
  f->path = tu_path(f->dir, "profiles.txt");
  f->tmp = tu_path(f->dir, "profiles.txt.tmp");
  f->lock = tu_path(f->dir, "profiles.txt.lock");
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  tu_rmtree(f->dir);
  free(f->dir);
  free(f->path);
  free(f->tmp);
  free(f->lock);
  free(f);
  return 0;
}

#define HDR "onnx_light_calibration_profiles 1\n"
#define GOOD                                                                                       \
  HDR "profile exact calibrated\nbackend \"gpu\"\noperator \"MatMul\"\nimplementation "            \
      "\"3\"\nmodel_digest \"d\"\nprocessor \"p\"\nthread_count 8\npolicy \"on disk\"\nend\n"
#define BAD_LINE5                                                                                  \
  HDR "profile exact calibrated\nbackend \"gpu\"\noperator \"MatMul\"\nimplementation 3\n"

static void malformed_file_is_reported_and_kept(void **state) {
  fixture *f = *state;
  tu_write(f->path, BAD_LINE5);
  calstore_options o;
  calstore_options_init(&o);
  o.path = f->path;
  calstore *s = NULL;
  calstore_error err = {0};
  assert_int_equal(calstore_open(&o, &s, &err), CALSTORE_MALFORMED);
  assert_non_null(s); /* usable handle, empty */
  assert_int_equal(err.line, 5);
  assert_string_equal(err.path, f->path);
  assert_int_equal(calstore_count(s), 0);
  /* a writer refuses to replace it: the bad file is kept byte for byte */
  calstore_key k = tu_exact("gpu", "3", "d", "p", 8);
  tu_policy p = {"new", 0, 0};
  memset(&err, 0, sizeof err);
  assert_int_equal(calstore_store(s, &k, NULL, 0, tu_serialize, &p, NULL, NULL, &err),
                   CALSTORE_MALFORMED);
  assert_int_equal(err.line, 5);
  assert_non_null(strstr(err.message, "refusing to overwrite"));
  char *now = harness_slurp(f->path, NULL);
  assert_string_equal(now, BAD_LINE5);
  free(now);
  assert_int_equal(calstore_count(s), 0);
  assert_false(tu_exists(f->tmp));
  /* the same for an unknown version */
  const char *v2 = "onnx_light_calibration_profiles 2\nfuture stuff\n";
  tu_write(f->path, v2);
  assert_int_equal(calstore_invalidate(s, "gpu", NULL, NULL, &err), CALSTORE_UNSUPPORTED_VERSION);
  assert_int_equal(err.line, 1);
  now = harness_slurp(f->path, NULL);
  assert_string_equal(now, v2);
  free(now);
  calstore_close(&s);
  assert_int_equal(calstore_open(&o, &s, &err), CALSTORE_UNSUPPORTED_VERSION);
  calstore_close(&s);
}

static void reload_failure_keeps_the_snapshot(void **state) {
  fixture *f = *state;
  tu_write(f->path, GOOD);
  calstore *s = tu_open(f->path, NULL);
  assert_int_equal(calstore_count(s), 1);
  calstore_error err = {0};
  tu_write(f->path, BAD_LINE5);
  assert_int_equal(calstore_reload(s, &err), CALSTORE_MALFORMED);
  assert_int_equal(err.line, 5);
  assert_int_equal(calstore_count(s), 1);
  tu_write(f->path, "onnx_light_calibration_profiles 7\n");
  assert_int_equal(calstore_reload(s, &err), CALSTORE_UNSUPPORTED_VERSION);
  assert_int_equal(calstore_count(s), 1);
  /* lookups still answer from the kept snapshot */
  calstore_lookup_options o = {0};
  o.backend = "gpu";
  o.operator_name = "MatMul";
  o.implementation = "3";
  o.model_digest = "d";
  o.processor = "p";
  o.thread_count = 8;
  calstore_lookup_result *r = NULL;
  assert_int_equal(calstore_lookup(s, &o, NULL, NULL, &r, NULL), CALSTORE_OK);
  assert_string_equal(r->profile->policy, "on disk");
  calstore_lookup_result_free(&r);
  /* a removed file reloads as empty */
  unlink(f->path);
  assert_int_equal(calstore_reload(s, &err), CALSTORE_OK);
  assert_int_equal(calstore_count(s), 0);
  calstore_close(&s);
}

static void stray_tmp_never_replaces_the_store(void **state) {
  fixture *f = *state;
  tu_write(f->path, GOOD);
  /* an interrupted writer left a complete-looking temp with other content */
  const char *stray = HDR "profile exact calibrated\nbackend \"stray\"\noperator \"X\"\n"
                          "implementation \"1\"\nmodel_digest \"d\"\nprocessor \"p\"\n"
                          "thread_count 1\npolicy \"stray\"\nend\n";
  tu_write(f->tmp, stray);
  calstore *s = tu_open(f->path, NULL);
  assert_int_equal(calstore_count(s), 1); /* readers ignore it */
  calstore_key k = tu_exact("gpu", "3", "second", "p", 8);
  assert_int_equal(tu_store(s, &k, "second", 1), CALSTORE_OK);
  assert_false(tu_exists(f->tmp));
  calstore_close(&s);
  s = tu_open(f->path, NULL);
  assert_int_equal(calstore_count(s), 2);
  char *text = harness_slurp(f->path, NULL);
  assert_null(strstr(text, "stray"));
  assert_non_null(strstr(text, "on disk"));
  free(text);
  calstore_close(&s);
}

static void planted_tmp_symlink_is_not_followed(void **state) {
  fixture *f = *state;
  char *victim = tu_path(f->dir, "victim.txt");
  tu_write(victim, "precious\n");
  assert_int_equal(symlink(victim, f->tmp), 0);
  calstore *s = tu_open(f->path, NULL);
  calstore_key k = tu_exact("gpu", "3", "d", "p", 8);
  assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_OK);
  char *v = harness_slurp(victim, NULL);
  assert_string_equal(v, "precious\n");
  free(v);
  struct stat st;
  assert_int_equal(lstat(f->path, &st), 0);
  assert_true(S_ISREG(st.st_mode));
  assert_false(tu_exists(f->tmp));
  /* a hard link at the temp name is not written through either */
  assert_int_equal(link(victim, f->tmp), 0);
  assert_int_equal(tu_store(s, &k, "y", 1), CALSTORE_OK);
  v = harness_slurp(victim, NULL);
  assert_string_equal(v, "precious\n");
  free(v);
  calstore_close(&s);
  free(victim);
}

static void new_stores_get_private_modes_and_opening_writes_nothing(void **state) {
  fixture *f = *state;
  char *nested = tu_path(f->dir, "a/b/profiles.txt");
  calstore *s = tu_open(nested, NULL);
  assert_false(tu_exists(nested)); /* opening writes nothing */
  calstore_key k = tu_exact("gpu", "3", "d", "p", 8);
  mode_t old = umask(0);
  assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_OK);
  umask(old);
  struct stat st;
  char *a = tu_path(f->dir, "a"), *b = tu_path(f->dir, "a/b"),
       *lock = tu_path(b, "profiles.txt.lock");
  assert_int_equal(stat(a, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0700);
  assert_int_equal(stat(b, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0700);
  assert_int_equal(stat(nested, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
  assert_int_equal(stat(lock, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
  calstore_close(&s);
  free(a);
  free(b);
  free(lock);
  free(nested);
}

static void unreadable_and_unwritable_paths_are_reported(void **state) {
  fixture *f = *state;
  /* the store path is a directory: unreadable */
  char *d = tu_path(f->dir, "adir");
  mkdir(d, 0700);
  calstore_options o;
  calstore_options_init(&o);
  o.path = d;
  calstore *s = NULL;
  calstore_error err = {0};
  assert_int_equal(calstore_open(&o, &s, &err), CALSTORE_UNREADABLE);
  assert_non_null(s);
  calstore_close(&s);
  /* the parent is a regular file: the directory cannot be created */
  char *file = tu_path(f->dir, "plainfile");
  tu_write(file, "x");
  char *under = tu_path(file, "profiles.txt");
  o.path = under;
  assert_int_equal(calstore_open(&o, &s, &err), CALSTORE_OK);
  calstore_key k = tu_exact("gpu", "3", "d", "p", 8);
  tu_policy p = {"x", 0, 0};
  memset(&err, 0, sizeof err);
  assert_int_equal(calstore_store(s, &k, NULL, 0, tu_serialize, &p, NULL, NULL, &err),
                   CALSTORE_WRITE_FAILED);
  assert_non_null(strstr(err.message, "Not a directory"));
  assert_non_null(strstr(err.message, file));
  assert_int_equal(calstore_count(s), 0); /* memory unchanged */
  calstore_close(&s);
  /* the temp name is occupied by a directory: the write fails, the store stays */
  tu_write(f->path, GOOD);
  mkdir(f->tmp, 0700);
  char *inside = tu_path(f->tmp, "x");
  tu_write(inside, "x");
  s = tu_open(f->path, NULL);
  memset(&err, 0, sizeof err);
  assert_int_equal(calstore_store(s, &k, NULL, 0, tu_serialize, &p, NULL, NULL, &err),
                   CALSTORE_WRITE_FAILED);
  assert_non_null(strstr(err.message, f->tmp));
  char *text = harness_slurp(f->path, NULL);
  assert_string_equal(text, GOOD);
  free(text);
  assert_int_equal(calstore_count(s), 1);
  calstore_close(&s);
  free(inside);
  free(d);
  free(file);
  free(under);
}

/* A writer reloads a file changed behind its back, even one of the same size. */
static void an_external_change_is_merged_at_commit(void **state) {
  fixture *f = *state;
  calstore *a = tu_open(f->path, NULL);
  calstore_key k1 = tu_exact("gpu", "3", "d1", "p", 8);
  assert_int_equal(tu_store(a, &k1, "aaaa", 1), CALSTORE_OK);
  /* another process rewrites the file by hand (same length, new content) */
  char *text = harness_slurp(f->path, NULL);
  char *pos = strstr(text, "aaaa");
  memcpy(pos, "bbbb", 4);
  char *other = tu_path(f->dir, "other.txt");
  tu_write(other, text);
  rename(other, f->path);
  calstore_key k2 = tu_exact("gpu", "3", "d2", "p", 8);
  assert_int_equal(tu_store(a, &k2, "second", 1), CALSTORE_OK);
  free(text);
  text = harness_slurp(f->path, NULL);
  assert_non_null(strstr(text, "bbbb"));
  assert_null(strstr(text, "aaaa"));
  assert_non_null(strstr(text, "second"));
  free(text);
  free(other);
  calstore_close(&a);
}

/* A rewrite keeps the file's permission bits and, where the writer may set
 * them (here as root), its owner and group; a deployment reading the store
 * as another user keeps reading it after a calibrate. */
static void commit_keeps_mode_and_owner(void **state) {
  fixture *f = *state;
  static const mode_t modes[] = {0644, 0664, 0640, 0600};
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
    tu_write(f->path, GOOD);
    assert_int_equal(chmod(f->path, modes[i]), 0);
    int as_root = geteuid() == 0;
    if (as_root)
      assert_int_equal(chown(f->path, 1, 2), 0);
    calstore *s = tu_open(f->path, NULL);
    char digest[32];
    snprintf(digest, sizeof digest, "d%zu", i);
    calstore_key k = tu_exact("gpu", "3", digest, "p", 8);
    assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_OK);
    calstore_close(&s);
    struct stat st;
    assert_int_equal(stat(f->path, &st), 0);
    assert_int_equal(st.st_mode & 07777, modes[i]);
    if (as_root) {
      assert_int_equal(st.st_uid, 1);
      assert_int_equal(st.st_gid, 2);
    } else {
      assert_int_equal(st.st_uid, geteuid());
    }
    char *text = harness_slurp(f->path, NULL);
    assert_non_null(strstr(text, digest));
    free(text);
  }
}

/* --store link.txt (link -> shared.txt): the link is resolved once at open;
 * the real file is read, locked and replaced, the link stays a link. */
static void symlinked_store_follows_the_link(void **state) {
  fixture *f = *state;
  char *shared = tu_path(f->dir, "shared.txt"), *link1 = tu_path(f->dir, "link.txt"),
       *link2 = tu_path(f->dir, "link2.txt"), *shared_lock = tu_path(f->dir, "shared.txt.lock"),
       *link_lock = tu_path(f->dir, "link.txt.lock"), *link_tmp = tu_path(f->dir, "link.txt.tmp");
  tu_write(shared, GOOD);
  assert_int_equal(symlink("shared.txt", link1), 0); /* relative target */
  assert_int_equal(symlink(link1, link2), 0);        /* a link to the link */
  calstore *s = tu_open(link2, NULL);
  assert_non_null(s);
  assert_int_equal(calstore_count(s), 1);
  assert_string_equal(calstore_path(s), shared);
  calstore_key k = tu_exact("gpu", "3", "via-link", "p", 8);
  assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_OK);
  calstore_close(&s);
  struct stat st;
  assert_int_equal(lstat(link1, &st), 0);
  assert_true(S_ISLNK(st.st_mode));
  assert_int_equal(lstat(link2, &st), 0);
  assert_true(S_ISLNK(st.st_mode));
  char *text = harness_slurp(shared, NULL);
  assert_non_null(strstr(text, "via-link"));
  assert_non_null(strstr(text, "on disk"));
  free(text);
  assert_true(tu_exists(shared_lock));
  assert_false(tu_exists(link_lock));
  assert_false(tu_exists(link_tmp));
  /* a writer through the target and one through the link share the file */
  s = tu_open(shared, NULL);
  calstore_key k2 = tu_exact("gpu", "3", "via-target", "p", 8);
  assert_int_equal(tu_store(s, &k2, "y", 1), CALSTORE_OK);
  calstore_close(&s);
  s = tu_open(link1, NULL);
  assert_int_equal(calstore_count(s), 3);
  calstore_close(&s);
  /* a dangling link names the file to create (and its directory) */
  char *dangling = tu_path(f->dir, "dangling.txt"), *target = tu_path(f->dir, "sub/new.txt");
  assert_int_equal(symlink("sub/new.txt", dangling), 0);
  s = tu_open(dangling, NULL);
  assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_OK);
  calstore_close(&s);
  assert_int_equal(lstat(dangling, &st), 0);
  assert_true(S_ISLNK(st.st_mode));
  assert_int_equal(stat(target, &st), 0);
  assert_true(S_ISREG(st.st_mode));
  /* a loop is reported, not followed for ever */
  char *loop = tu_path(f->dir, "loop.txt");
  assert_int_equal(symlink("loop.txt", loop), 0);
  calstore_status ost;
  s = tu_open(loop, &ost);
  assert_int_equal(ost, CALSTORE_UNREADABLE);
  calstore_close(&s);
  free(loop);
  free(dangling);
  free(target);
  free(shared);
  free(link1);
  free(link2);
  free(shared_lock);
  free(link_lock);
  free(link_tmp);
}

static void collect_message(void *user, calstore_status status, unsigned line,
                            const char *message) {
  (void)status;
  (void)line;
  snprintf(user, 1024, "%s", message);
}

/* A FIFO as the store or as a file to read is refused at once (opening it
 * used to wait for a writer for ever). alarm() fails the test instead of
 * hanging it. */
static void fifo_is_refused_without_blocking(void **state) {
  fixture *f = *state;
  assert_int_equal(mkfifo(f->path, 0600), 0);
  alarm(20);
  calstore_options o;
  calstore_options_init(&o);
  o.path = f->path;
  calstore *s = NULL;
  calstore_error err = {0};
  assert_int_equal(calstore_open(&o, &s, &err), CALSTORE_UNREADABLE);
  assert_non_null(strstr(err.message, f->path));
  assert_non_null(strstr(err.message, "not a regular file"));
  assert_non_null(strstr(err.message, "FIFO"));
  /* a commit refuses it too (and never replaces it) */
  calstore_key k = tu_exact("gpu", "3", "d", "p", 8);
  assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_UNREADABLE);
  calstore_close(&s);
  struct stat st;
  assert_int_equal(lstat(f->path, &st), 0);
  assert_true(S_ISFIFO(st.st_mode));
  char msg[1024] = "";
  assert_int_equal(calstore_read_file(f->path, NULL, NULL, collect_message, msg, NULL),
                   CALSTORE_UNREADABLE);
  assert_non_null(strstr(msg, "not a regular file"));
  /* a FIFO at the lock file's name */
  unlink(f->path);
  unlink(f->lock); /* the refused commit above created it */
  assert_int_equal(mkfifo(f->lock, 0600), 0);
  s = tu_open(f->path, NULL);
  calstore_error lerr = {0};
  tu_policy p = {"x", 0, 0};
  assert_int_equal(calstore_store(s, &k, NULL, 0, tu_serialize, &p, NULL, NULL, &lerr),
                   CALSTORE_LOCK_FAILED);
  assert_non_null(strstr(lerr.message, "not a regular file"));
  calstore_close(&s);
  alarm(0);
}

/* export OUT writes through a unique temporary file: an unrelated OUT.tmp
 * is never deleted nor overwritten, and nothing is left behind. */
static void export_leaves_other_files_alone(void **state) {
  fixture *f = *state;
  tu_write(f->path, GOOD);
  char *out = tu_path(f->dir, "out.txt"), *out_tmp = tu_path(f->dir, "out.txt.tmp");
  tu_write(out_tmp, "somebody else's file\n");
  calstore *s = tu_open(f->path, NULL);
  calstore_error err = {0};
  assert_int_equal(calstore_export(s, out, &err), CALSTORE_OK);
  char *kept = harness_slurp(out_tmp, NULL);
  assert_string_equal(kept, "somebody else's file\n");
  free(kept);
  assert_int_equal(calstore_read_file(out, NULL, NULL, NULL, NULL, NULL), CALSTORE_OK);
  /* only the store, out.txt and out.txt.tmp: no temporary file left */
  DIR *d = opendir(f->dir);
  struct dirent *e;
  int n = 0;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') {
      n++;
      assert_true(!strcmp(e->d_name, "profiles.txt") || !strcmp(e->d_name, "out.txt") ||
                  !strcmp(e->d_name, "out.txt.tmp"));
    }
  closedir(d);
  assert_int_equal(n, 3);
  /* a re-export keeps the existing file's mode; a FIFO is refused */
  assert_int_equal(chmod(out, 0644), 0);
  assert_int_equal(calstore_export(s, out, &err), CALSTORE_OK);
  struct stat st;
  assert_int_equal(stat(out, &st), 0);
  assert_int_equal(st.st_mode & 07777, 0644);
  char *fifo = tu_path(f->dir, "fifo");
  assert_int_equal(mkfifo(fifo, 0600), 0);
  assert_int_equal(calstore_export(s, fifo, &err), CALSTORE_WRITE_FAILED);
  assert_non_null(strstr(err.message, "not a regular file"));
  calstore_close(&s);
  free(fifo);
  free(out);
  free(out_tmp);
}

/* Under a file size limit (ulimit -f) with SIGXFSZ ignored, a commit fails
 * with write_failed, "File too large" and the path; no temp file is left
 * and the store is unchanged. In a child: the limit is per process. */
static void file_size_limit_is_reported(void **state) {
  fixture *f = *state;
  tu_write(f->path, GOOD);
  pid_t pid = fork();
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {4096, 4096};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
      _exit(10);
    calstore *s = tu_open(f->path, NULL);
    static char big[20000];
    memset(big, 'x', sizeof big - 1);
    calstore_key k = tu_exact("gpu", "3", "big", "p", 8);
    tu_policy p = {big, 0, 0};
    calstore_error err = {0};
    calstore_status st = calstore_store(s, &k, NULL, 0, tu_serialize, &p, NULL, NULL, &err);
    calstore_close(&s);
    if (st != CALSTORE_WRITE_FAILED)
      _exit(11);
    if (!strstr(err.message, "File too large") || !strstr(err.message, f->path))
      _exit(12);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  assert_false(tu_exists(f->tmp));
  char *text = harness_slurp(f->path, NULL);
  assert_string_equal(text, GOOD);
  free(text);
}

/* The checks of write_protected_store_is_never_replaced run by a writer
 * that is not root, in a child: 0 when all held, else the number of the
 * first that failed. */
static int protected_store_child(const char *path, const char *out) {
  calstore *s = tu_open(path, NULL);
  if (!s || calstore_count(s) != 1)
    return 20;
  calstore_key k = tu_exact("gpu", "3", "new", "p", 8);
  tu_policy p = {"x", 0, 0};
  calstore_error err = {0};
  if (calstore_store(s, &k, NULL, 0, tu_serialize, &p, NULL, NULL, &err) != CALSTORE_WRITE_FAILED)
    return 21;
  if (!strstr(err.message, "read-only") || !strstr(err.message, "0444") ||
      !strstr(err.message, path) || strcmp(err.path, path))
    return 22;
  if (calstore_count(s) != 1) /* the snapshot did not take the change */
    return 23;
  /* invalidate (it removes a profile), a batch, an override: refused too */
  size_t removed = 9;
  memset(&err, 0, sizeof err);
  if (calstore_invalidate(s, "gpu", NULL, &removed, &err) != CALSTORE_WRITE_FAILED || removed)
    return 24;
  if (tu_override(s, &k, "o") != CALSTORE_WRITE_FAILED)
    return 25;
  /* an export over a write-protected file is refused as well */
  memset(&err, 0, sizeof err);
  if (calstore_export(s, out, &err) != CALSTORE_WRITE_FAILED || !strstr(err.message, "read-only"))
    return 26;
  /* made writable again, the file takes commits */
  if (chmod(path, 0644) != 0 || tu_store(s, &k, "x", 1) != CALSTORE_OK)
    return 27;
  calstore_close(&s);
  return 0;
}

/* A write-protected store file (chmod 444) is never replaced by a commit,
 * although the rename needs only the directory's permission: the commit
 * fails with write_failed naming the file and its mode, the file keeps its
 * bytes, no temporary file is left. The refusal needs a writer that is not
 * root: as root the checks run in a child that becomes nobody (skipped
 * where that uid cannot be taken); root itself may write any file, so its
 * commit replaces the file and keeps the mode. */
static void write_protected_store_is_never_replaced(void **state) {
  fixture *f = *state;
  char *out = tu_path(f->dir, "export.txt");
  tu_write(f->path, GOOD);
  tu_write(out, GOOD);
  assert_int_equal(chmod(f->path, 0444), 0);
  assert_int_equal(chmod(out, 0444), 0);
  int as_root = geteuid() == 0;
  if (as_root) { /* the child's writer owns the directory and the files */
    assert_int_equal(chown(f->dir, 65534, 65534), 0);
    assert_int_equal(chown(f->path, 65534, 65534), 0);
    assert_int_equal(chown(out, 65534, 65534), 0);
  }
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int rc = 77; /* cannot become a writer that is not root */
    if (!as_root || (setgroups(0, NULL) == 0 && setgid(65534) == 0 && setuid(65534) == 0))
      rc = protected_store_child(f->path, out);
    free(out);
    _exit(rc);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  assert_true(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) {
    print_message("cannot become uid 65534 (nobody): the refusal is not checked\n");
    free(out);
    skip();
  }
  assert_int_equal(WEXITSTATUS(status), 0);
  assert_false(tu_exists(f->tmp));
  char *text = harness_slurp(f->path, NULL);
  assert_non_null(strstr(text, "new")); /* written once the child made it writable */
  free(text);
  text = harness_slurp(out, NULL);
  assert_string_equal(text, GOOD);
  free(text);
  /* the caller's own commit: refused unless it is root */
  assert_int_equal(chmod(f->path, 0444), 0);
  calstore *s = tu_open(f->path, NULL);
  calstore_key k = tu_exact("gpu", "3", "mine", "p", 8);
  assert_int_equal(tu_store(s, &k, "x", 1), as_root ? CALSTORE_OK : CALSTORE_WRITE_FAILED);
  calstore_close(&s);
  struct stat st;
  assert_int_equal(stat(f->path, &st), 0);
  assert_int_equal(st.st_mode & 07777, 0444);
  text = harness_slurp(f->path, NULL);
  assert_true(as_root == (strstr(text, "mine") != NULL));
  free(text);
  free(out);
}

/* Commits one profile (digest d) through a fresh handle on path. */
static void commit_one(const char *path, const char *d) {
  calstore *s = tu_open(path, NULL);
  calstore_key k = tu_exact("gpu", "3", d, "p", 8);
  assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_OK);
  calstore_close(&s);
}

/* A lock file that is a symbolic link is never followed, and the refusal
 * says so (it read "Too many levels of symbolic links"). */
static void a_symlinked_lock_file_is_refused_by_name(void **state) {
  fixture *f = *state;
  commit_one(f->path, "d0");
  unlink(f->lock);
  assert_int_equal(symlink("/tmp/elsewhere-calhost-lock", f->lock), 0);
  calstore *s = tu_open(f->path, NULL);
  calstore_key k = tu_exact("gpu", "3", "d1", "p", 8);
  calstore_measurement m[] = {{"median_latency", 1, "us"}};
  tu_policy p = {"x", 0, 0};
  calstore_error err = {0};
  assert_int_equal(calstore_store(s, &k, m, 1, tu_serialize, &p, NULL, NULL, &err),
                   CALSTORE_LOCK_FAILED);
  assert_non_null(strstr(err.message, "is a symbolic link (never followed)"));
  calstore_close(&s);
  assert_int_equal(access("/tmp/elsewhere-calhost-lock", F_OK), -1);
  unlink(f->lock);
}

static mode_t mode_of(const char *path) {
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  return st.st_mode & 07777;
}

/* The lock file lets in every writer the store file lets in: read-write
 * for the owner, and for the group and others where the store grants them
 * write permission (never read alone: reading a lock file only serves to
 * hold it), whatever the umask, with the store's group; an older,
 * narrower lock file is widened by its owner, never narrowed. A group
 * sharing a store (0664) shares its lock. */
static void lock_file_follows_the_writers_of_the_store(void **state) {
  fixture *f = *state;
  mode_t old_umask = umask(022);
  commit_one(f->path, "d0");
  assert_int_equal(mode_of(f->lock), 0600); /* no store file yet: private */
  static const struct {
    mode_t store, lock;
  } cases[] = {{0664, 0660}, {0640, 0600}, {0644, 0600}, {0666, 0666}, {0600, 0600}, {0620, 0660}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    unlink(f->lock);
    assert_int_equal(chmod(f->path, cases[i].store), 0);
    commit_one(f->path, "d1");
    assert_int_equal(mode_of(f->path), cases[i].store);
    assert_int_equal(mode_of(f->lock), cases[i].lock);
  }
  /* an existing lock file (0600: made for a private store) is widened when
   * the store is shared later, and never narrowed again */
  unlink(f->lock);
  assert_int_equal(chmod(f->path, 0600), 0);
  commit_one(f->path, "d2");
  assert_int_equal(mode_of(f->lock), 0600);
  assert_int_equal(chmod(f->path, 0664), 0);
  commit_one(f->path, "d3");
  assert_int_equal(mode_of(f->lock), 0660);
  assert_int_equal(chmod(f->path, 0600), 0);
  commit_one(f->path, "d4");
  assert_int_equal(mode_of(f->lock), 0660);
  /* the lock file takes the store's group (here as root: any group) */
  struct stat st, lst;
  if (geteuid() == 0) {
    assert_int_equal(chown(f->path, 1, 2), 0);
    assert_int_equal(chmod(f->path, 0664), 0);
    commit_one(f->path, "d5"); /* an existing lock file: regrouped */
    assert_int_equal(stat(f->lock, &lst), 0);
    assert_int_equal(lst.st_gid, 2);
    unlink(f->lock);
    commit_one(f->path, "d6"); /* a new one */
  }
  assert_int_equal(stat(f->path, &st), 0);
  assert_int_equal(stat(f->lock, &lst), 0);
  assert_int_equal(lst.st_gid, st.st_gid);
  umask(old_umask);
}

/* Clears and invalidations with no store file change nothing and create
 * nothing: no directory, no lock file; the snapshot follows the missing
 * file (empty). A put still creates all of it. */
static void noop_commit_without_a_store_file_creates_nothing(void **state) {
  fixture *f = *state;
  char *sub = tu_path(f->dir, "sub"), *nested = tu_path(f->dir, "sub/profiles.txt"),
       *nested_lock = tu_path(f->dir, "sub/profiles.txt.lock");
  calstore *s = tu_open(nested, NULL);
  size_t removed = 9;
  calstore_error err = {0};
  assert_int_equal(calstore_invalidate(s, "gpu", NULL, &removed, &err), CALSTORE_OK);
  assert_int_equal(removed, 0);
  calstore_key k = tu_exact("gpu", "3", "d", "p", 8);
  assert_int_equal(calstore_clear_override(s, &k, &err), CALSTORE_NOT_FOUND);
  calstore_batch *b = NULL;
  assert_int_equal(calstore_batch_begin(s, &b, &err), CALSTORE_OK);
  assert_int_equal(calstore_batch_invalidate(b, "gpu", "3", &err), CALSTORE_OK);
  assert_int_equal(calstore_batch_clear_override(b, &k, &err), CALSTORE_OK);
  assert_int_equal(calstore_batch_commit(&b, &err), CALSTORE_OK);
  assert_false(tu_exists(sub));
  assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_OK);
  assert_true(tu_exists(nested));
  assert_true(tu_exists(nested_lock));
  calstore_close(&s);
  /* a store file removed behind the handle's back: the snapshot empties,
   * as a locked reload would make it, and no lock file comes back */
  s = tu_open(f->path, NULL);
  assert_int_equal(tu_store(s, &k, "x", 1), CALSTORE_OK);
  assert_int_equal(calstore_count(s), 1);
  assert_int_equal(unlink(f->path), 0);
  assert_int_equal(unlink(f->lock), 0);
  assert_int_equal(calstore_invalidate(s, "gpu", NULL, &removed, &err), CALSTORE_OK);
  assert_int_equal(removed, 0);
  assert_int_equal(calstore_count(s), 0);
  assert_false(tu_exists(f->lock));
  assert_false(tu_exists(f->path));
  calstore_close(&s);
  free(sub);
  free(nested);
  free(nested_lock);
}

/* Opens name (n bytes of 'a' plus ".txt") in dir: the open's status, *msg
 * its message; the handle is closed. */
static calstore_status open_named(const char *dir, size_t n, int persistence, char *msg, size_t cap,
                                  int *got_handle) {
  char name[600];
  memset(name, 'a', n - 4);
  memcpy(name + n - 4, ".txt", 5);
  char *path = tu_path(dir, name);
  calstore_options o;
  calstore_options_init(&o);
  o.path = path;
  o.persistence_enabled = persistence;
  calstore *s = NULL;
  calstore_error err = {0};
  calstore_status st = calstore_open(&o, &s, &err);
  *got_handle = s != NULL;
  snprintf(msg, cap, "%s", err.message);
  calstore_close(&s);
  free(path);
  return st;
}

/* A store file name whose lock file (`NAME.lock`) or temporary file would
 * exceed the directory's name limit is refused at open with
 * invalid_argument and a message naming the limit (it used to fail at the
 * first commit, after a calibration ran); the longest name that fits works
 * end to end, and an export to a name at the limit works. The limit is pathconf's (255 on the usual
 * file systems). */
static void overlong_names_are_refused_at_open(void **state) {
  fixture *f = *state;
  long max = pathconf(f->dir, _PC_NAME_MAX);
  if (max <= 0 || max > 500) {
    print_message("the file system's name limit is %ld: not checked\n", max);
    skip();
  }
  size_t limit = (size_t)max, fits = limit - strlen(".lock");
  char msg[1024];
  int handle;
  char expect[64];
  snprintf(expect, sizeof expect, "limit %zu bytes", limit);
  for (size_t n = fits + 1; n <= limit + 1; n++) {
    assert_int_equal(open_named(f->dir, n, 1, msg, sizeof msg, &handle), CALSTORE_INVALID_ARGUMENT);
    assert_false(handle);
    assert_non_null(strstr(msg, "too long"));
    assert_non_null(strstr(msg, expect));
    if (n <= limit)
      assert_non_null(strstr(msg, ".txt.lock"));
  }
  /* without persistence nothing on disk is named: accepted */
  assert_int_equal(open_named(f->dir, fits + 1, 0, msg, sizeof msg, &handle), CALSTORE_OK);
  assert_true(handle);
  /* in a directory still to be created, the nearest existing one's limit */
  char *sub = tu_path(f->dir, "new/dir");
  assert_int_equal(open_named(sub, fits + 1, 1, msg, sizeof msg, &handle),
                   CALSTORE_INVALID_ARGUMENT);
  assert_false(tu_exists(sub));
  free(sub);
  /* the longest name that fits: open, commit, reopen */
  char name[600];
  memset(name, 'a', fits - 4);
  memcpy(name + fits - 4, ".txt", 5);
  char *path = tu_path(f->dir, name);
  commit_one(path, "long");
  calstore *s = tu_open(path, NULL);
  assert_non_null(s);
  assert_int_equal(calstore_count(s), 1);
  /* an export takes any name the file system does: at the limit, its
   * unique temporary file (`NAME.XXXXXX.tmp`) falls back to a short name */
  memset(name, 'e', limit);
  name[limit] = '\0';
  char *out = tu_path(f->dir, name);
  calstore_error err = {0};
  assert_int_equal(calstore_export(s, out, &err), CALSTORE_OK);
  FILE *exported = fopen(out, "r"); /* (too long a name to open as a store) */
  char line[128] = "";
  assert_non_null(exported);
  assert_non_null(fgets(line, sizeof line, exported));
  assert_string_equal(line, "onnx_light_calibration_profiles 1\n");
  fclose(exported);
  free(out);
  calstore_close(&s);
  free(path);
}

/* Issue 22 item 7: a handle whose snapshot is older than the file exports
 * onto the store: the commits made meanwhile by another handle survive
 * (lock, reload, merge, rewrite), also through a symbolic link; a hard
 * link of the store and its lock file are refused, naming both. */
static void export_onto_the_store_itself_keeps_concurrent_commits(void **state) {
  fixture *f = *state;
  calstore *a = tu_open(f->path, NULL), *b = tu_open(f->path, NULL);
  calstore_key k1 = tu_exact("gpu", "3", "one", "p", 8), k2 = tu_exact("gpu", "3", "two", "p", 8);
  assert_int_equal(tu_store(a, &k1, "one", 1), CALSTORE_OK);
  assert_int_equal(tu_store(b, &k2, "two", 1), CALSTORE_OK); /* a has not seen it */
  calstore_error err = {0};
  assert_int_equal(calstore_export(a, f->path, &err), CALSTORE_OK);
  calstore *c = tu_open(f->path, NULL);
  assert_int_equal(calstore_count(c), 2);
  calstore_close(&c);
  assert_int_equal(calstore_count(a), 2); /* the export's handle follows the file */
  /* through a symbolic link, after another commit a has not seen */
  char *sym = tu_path(f->dir, "link.txt"), *hard = tu_path(f->dir, "hard.txt");
  assert_int_equal(symlink("profiles.txt", sym), 0);
  calstore_key k3 = tu_exact("gpu", "3", "three", "p", 8);
  assert_int_equal(tu_store(b, &k3, "three", 1), CALSTORE_OK);
  assert_int_equal(calstore_export(a, sym, &err), CALSTORE_OK);
  c = tu_open(f->path, NULL);
  assert_int_equal(calstore_count(c), 3);
  calstore_close(&c);
  /* a hard link and the lock file: refused, the store untouched */
  assert_int_equal(link(f->path, hard), 0);
  char *before = harness_slurp(f->path, NULL);
  assert_int_equal(calstore_export(a, hard, &err), CALSTORE_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "hard link"));
  assert_non_null(strstr(err.message, f->path));
  assert_int_equal(calstore_export(a, f->lock, &err), CALSTORE_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "lock file"));
  char *now = harness_slurp(f->path, NULL);
  assert_string_equal(now, before);
  free(now);
  free(before);
  free(sym);
  free(hard);
  calstore_close(&a);
  calstore_close(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(malformed_file_is_reported_and_kept, setup, teardown),
      cmocka_unit_test_setup_teardown(reload_failure_keeps_the_snapshot, setup, teardown),
      cmocka_unit_test_setup_teardown(stray_tmp_never_replaces_the_store, setup, teardown),
      cmocka_unit_test_setup_teardown(planted_tmp_symlink_is_not_followed, setup, teardown),
      cmocka_unit_test_setup_teardown(new_stores_get_private_modes_and_opening_writes_nothing,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(commit_keeps_mode_and_owner, setup, teardown),
      cmocka_unit_test_setup_teardown(symlinked_store_follows_the_link, setup, teardown),
      cmocka_unit_test_setup_teardown(fifo_is_refused_without_blocking, setup, teardown),
      cmocka_unit_test_setup_teardown(export_leaves_other_files_alone, setup, teardown),
      cmocka_unit_test_setup_teardown(file_size_limit_is_reported, setup, teardown),
      cmocka_unit_test_setup_teardown(unreadable_and_unwritable_paths_are_reported, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(an_external_change_is_merged_at_commit, setup, teardown),
      cmocka_unit_test_setup_teardown(write_protected_store_is_never_replaced, setup, teardown),
      cmocka_unit_test_setup_teardown(lock_file_follows_the_writers_of_the_store, setup, teardown),
      cmocka_unit_test_setup_teardown(a_symlinked_lock_file_is_refused_by_name, setup, teardown),
      cmocka_unit_test_setup_teardown(noop_commit_without_a_store_file_creates_nothing, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(overlong_names_are_refused_at_open, setup, teardown),
      cmocka_unit_test_setup_teardown(export_onto_the_store_itself_keeps_concurrent_commits, setup,
                                      teardown),
  };
  return cmocka_run_group_tests_name("store_persistence", tests, NULL, NULL);
}
