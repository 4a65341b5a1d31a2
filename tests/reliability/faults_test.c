/*
 * faults_test.c: resource faults on the store's write path (issue 6,
 * Faults). Each behaviour below makes one commit fail and checks that it
 * returns an explicit status with a message, and that the file on disk
 * (byte for byte) and the in-memory snapshot are exactly as before:
 *
 *   - ENOSPC: a real 64 KiB tmpfs (skipped with a message when it cannot be
 *     mounted) and an injected ENOSPC on write;
 *   - EFBIG: RLIMIT_FSIZE below the new file's size, SIGXFSZ ignored;
 *   - EIO from fsync of the temporary file;
 *   - a failed rename (EXDEV);
 *   - an unwritable directory: a read-only bind mount (root bypasses modes;
 *     skipped when mounts are not allowed) and an injected EROFS;
 *   - a missing directory: a parent that is a regular file; the store
 *     directory removed under an open store;
 *   - a lock that cannot be taken: the .lock is a directory; flock fails;
 *     and a lock held by a stopped writer, where a writer gives up with
 *     CALSTORE_LOCK_FAILED after its lock timeout (never committing without
 *     the lock) and commits once the holder dies;
 *   - EIO from the directory fsync after the rename (reported: the new file
 *     is in place, its durability is in doubt).
 * Uses interpose.c to inject errors into the system calls.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "interpose.h"
#include "rel_common.h"

typedef struct fx {
  char dir[700];
  char path[800];
  calstore *store;
  char *file_before;
  size_t file_len;
  char *snap_before;
} fx;

static int faults_injected, faults_survived;

static void store_one(calstore *s, const char *proc, const char *policy) {
  calstore_key k = rel_exact_key("faults", "MatMul", "1", proc, 4);
  calstore_error err;
  calstore_status st =
      calstore_store(s, &k, rel_measurement, 1, rel_serialize, (void *)policy, NULL, NULL, &err);
  if (st != CALSTORE_OK)
    fail_msg("setup store failed: %s: %s", calstore_status_name(st), err.message);
}

static void remember(fx *f) {
  free(f->file_before);
  free(f->snap_before);
  f->file_before = harness_slurp(f->path, &f->file_len);
  assert_non_null(f->file_before);
  f->snap_before = rel_snapshot(f->store);
}

static int setup_in(fx *f, const char *dir) {
  snprintf(f->path, sizeof f->path, "%s/profiles.txt", dir);
  f->store = rel_open(f->path);
  store_one(f->store, "cpu-a", "tile=8");
  store_one(f->store, "cpu-b", "tile=16");
  calstore_key k = rel_exact_key("faults", "MatMul", "1", "cpu-c", 4);
  calstore_error err;
  assert_int_equal(calstore_install_override(f->store, &k, rel_measurement, 1, rel_serialize,
                                             "tile=32", NULL, NULL, &err),
                   CALSTORE_OK);
  remember(f);
  return 0;
}

static int setup(void **state) {
  fx *f = calloc(1, sizeof *f);
  if (!f || rel_mkdtemp(f->dir, sizeof f->dir, "faults") != 0)
    return -1;
  *state = f;
  return setup_in(f, f->dir);
}

static int teardown(void **state) {
  fx *f = *state;
  char small[800];
  ip_disarm();
  /* A test that failed half-way may leave its mounts behind. */
  snprintf(small, sizeof small, "%.700s/small", f->dir);
  umount2(small, MNT_DETACH);
  umount2(f->dir, MNT_DETACH);
  calstore_close(&f->store);
  rel_rmtree(f->dir);
  free(f->file_before);
  free(f->snap_before);
  free(f);
  return 0;
}

/* The checks every fault shares. */
static void expect_unchanged(fx *f, calstore_status got, calstore_status want,
                             const calstore_error *err, const char *what) {
  faults_injected++;
  if (got != want)
    fail_msg("%s: status %s, expected %s (%s)", what, calstore_status_name(got),
             calstore_status_name(want), err->message);
  if (!err->message[0])
    fail_msg("%s: %s without a message", what, calstore_status_name(got));
  size_t len = 0;
  char *now = harness_slurp(f->path, &len);
  if (!now || len != f->file_len || memcmp(now, f->file_before, len) != 0)
    fail_msg("%s: the store file changed", what);
  free(now);
  char *snap = rel_snapshot(f->store);
  if (strcmp(snap, f->snap_before) != 0)
    fail_msg("%s: the in-memory snapshot changed:\n%s---\n%s", what, f->snap_before, snap);
  free(snap);
  char tmp[900];
  snprintf(tmp, sizeof tmp, "%s.tmp", f->path);
  if (access(tmp, F_OK) == 0)
    print_message("   note: %s left %s behind (allowed: it is ignored and replaced)\n", what, tmp);
  calstore_status st;
  char *disk = rel_file_snapshot(f->path, &st);
  assert_int_equal(st, CALSTORE_OK);
  free(disk);
  print_message("   %s -> %s: %s\n", what, calstore_status_name(got), err->message);
  faults_survived++;
}

static calstore_status try_store(fx *f, calstore_error *err) {
  calstore_key k = rel_exact_key("faults", "MatMul", "1", "cpu-new", 4);
  memset(err, 0, sizeof *err);
  return calstore_store(f->store, &k, rel_measurement, 1, rel_serialize, "tile=64", NULL, NULL,
                        err);
}

static void inject_and_check(fx *f, int mask, int errnum, calstore_status want, const char *what) {
  calstore_error err;
  ip_arm(f->dir, mask, 1, IP_FAIL, errnum, 1, NULL);
  calstore_status st = try_store(f, &err);
  unsigned fired = ip_fired();
  ip_disarm();
  if (fired == 0)
    fail_msg("%s: the store never made the call the fault targets", what);
  expect_unchanged(f, st, want, &err, what);
  /* And the store still works once the fault is gone. */
  assert_int_equal(try_store(f, &err), CALSTORE_OK);
}

static void enospc_on_write_is_reported(void **state) {
  inject_and_check(*state, IP_WRITE, ENOSPC, CALSTORE_WRITE_FAILED, "ENOSPC on write");
}

static void eio_on_fsync_is_reported(void **state) {
  inject_and_check(*state, IP_FSYNC, EIO, CALSTORE_WRITE_FAILED, "EIO on fsync");
}

static void failed_rename_is_reported(void **state) {
  inject_and_check(*state, IP_RENAME, EXDEV, CALSTORE_WRITE_FAILED, "EXDEV on rename");
}

static void erofs_on_create_is_reported(void **state) {
  fx *f = *state;
  calstore_error err;
  /* The lock file exists already; only the temporary file's creation fails. */
  ip_arm(f->dir, IP_OPEN, 1, IP_FAIL, EROFS, 1, NULL);
  calstore_status st = try_store(f, &err);
  ip_disarm();
  if (st == CALSTORE_LOCK_FAILED)
    st = CALSTORE_WRITE_FAILED; /* refusing at the lock is as explicit */
  expect_unchanged(f, st, CALSTORE_WRITE_FAILED, &err, "EROFS creating files");
}

static void enospc_on_small_tmpfs_is_reported(void **state) {
  fx *f = *state;
  char mnt[512];
  snprintf(mnt, sizeof mnt, "%.490s/small", f->dir);
  assert_int_equal(mkdir(mnt, 0700), 0);
  if (mount("tmpfs", mnt, "tmpfs", 0, "size=64k,mode=0700") != 0) {
    print_message("   SKIPPED: cannot mount a 64 KiB tmpfs (%s); ENOSPC covered by injection\n",
                  strerror(errno));
    skip();
  }
  fx g;
  memset(&g, 0, sizeof g);
  snprintf(g.dir, sizeof g.dir, "%s", mnt);
  snprintf(g.path, sizeof g.path, "%s/profiles.txt", mnt);
  g.store = rel_open(g.path);
  /* Fill the store to ~40 KiB: a second copy cannot fit in 64 KiB. */
  char policy[300];
  memset(policy, 'x', sizeof policy - 1);
  policy[sizeof policy - 1] = '\0';
  calstore_batch *b = NULL;
  calstore_error err;
  assert_int_equal(calstore_batch_begin(g.store, &b, &err), CALSTORE_OK);
  for (int i = 0; i < 90; i++) {
    char proc[32];
    snprintf(proc, sizeof proc, "cpu-%d", i);
    calstore_key k = rel_exact_key("faults", "MatMul", "1", proc, 4);
    assert_int_equal(calstore_batch_store(b, &k, rel_measurement, 1, rel_serialize, policy, NULL,
                                          NULL, &err),
                     CALSTORE_OK);
  }
  calstore_status st = calstore_batch_commit(&b, &err);
  if (st != CALSTORE_OK) {
    umount2(mnt, MNT_DETACH);
    fail_msg("filling the tmpfs: %s: %s", calstore_status_name(st), err.message);
  }
  remember(&g);
  print_message("   tmpfs of 64 KiB holds a %zu-byte store\n", g.file_len);
  st = try_store(&g, &err);
  expect_unchanged(&g, st, CALSTORE_WRITE_FAILED, &err, "ENOSPC on a full tmpfs");
  calstore_close(&g.store);
  free(g.file_before);
  free(g.snap_before);
  umount2(mnt, MNT_DETACH);
}

static void efbig_under_rlimit_fsize_is_reported(void **state) {
  fx *f = *state;
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {(rlim_t)f->file_len / 2, (rlim_t)f->file_len / 2};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
      _exit(9);
    calstore_error err;
    calstore_status st = try_store(f, &err);
    char *snap = rel_snapshot(f->store);
    int same = strcmp(snap, f->snap_before) == 0;
    printf("   EFBIG (RLIMIT_FSIZE %zu bytes) -> %s: %s\n", f->file_len / 2,
           calstore_status_name(st), err.message);
    fflush(stdout);
    _exit(st != CALSTORE_WRITE_FAILED ? 2 : !err.message[0] ? 3 : !same ? 4 : 0);
  }
  int status;
  waitpid(pid, &status, 0);
  faults_injected++;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail_msg("EFBIG: the child reported failure (status 0x%x: 2 wrong status, 3 no message, "
             "4 snapshot changed)",
             status);
  size_t len;
  char *now = harness_slurp(f->path, &len);
  assert_true(now && len == f->file_len && memcmp(now, f->file_before, len) == 0);
  free(now);
  faults_survived++;
}

static void readonly_directory_is_reported(void **state) {
  fx *f = *state;
  if (mount(f->dir, f->dir, "none", MS_BIND, NULL) != 0) {
    print_message("   SKIPPED: bind mount not allowed (%s); EROFS covered by injection\n",
                  strerror(errno));
    skip();
  }
  if (mount(f->dir, f->dir, "none", MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) != 0) {
    umount2(f->dir, MNT_DETACH);
    print_message("   SKIPPED: read-only remount not allowed (%s)\n", strerror(errno));
    skip();
  }
  calstore_error err;
  calstore_status st = try_store(f, &err);
  if (st == CALSTORE_LOCK_FAILED)
    st = CALSTORE_WRITE_FAILED; /* refusing at the lock is as explicit */
  umount2(f->dir, MNT_DETACH);
  expect_unchanged(f, st, CALSTORE_WRITE_FAILED, &err, "read-only directory (bind mount)");
}

static void parent_that_is_a_file_is_reported(void **state) {
  fx *f = *state;
  char blocker[800], path[900];
  snprintf(blocker, sizeof blocker, "%s/not-a-dir", f->dir);
  assert_int_equal(rel_write_file(blocker, "plain file\n"), 0);
  snprintf(path, sizeof path, "%s/sub/profiles.txt", blocker);
  calstore_options o;
  calstore_options_init(&o);
  o.path = path;
  calstore *s = NULL;
  calstore_error err;
  memset(&err, 0, sizeof err);
  calstore_status ost = calstore_open(&o, &s, &err);
  print_message("   open under a regular file -> %s: %s\n", calstore_status_name(ost),
                err.message);
  assert_non_null(s);
  calstore_key k = rel_exact_key("faults", "MatMul", "1", "cpu-x", 4);
  memset(&err, 0, sizeof err);
  calstore_status st =
      calstore_store(s, &k, rel_measurement, 1, rel_serialize, "tile=1", NULL, NULL, &err);
  faults_injected++;
  print_message("   store under a regular file -> %s: %s\n", calstore_status_name(st),
                err.message);
  assert_int_not_equal(st, CALSTORE_OK);
  assert_true(err.message[0] != '\0');
  assert_int_equal(calstore_count(s), 0);
  calstore_close(&s);
  char *t = harness_slurp(blocker, NULL);
  assert_string_equal(t, "plain file\n");
  free(t);
  faults_survived++;
}

static void removed_directory_is_recreated_or_reported(void **state) {
  fx *f = *state;
  rel_rmtree(f->dir);
  calstore_error err;
  calstore_status st = try_store(f, &err);
  faults_injected++;
  print_message("   store after its directory was removed -> %s%s%s\n", calstore_status_name(st),
                err.message[0] ? ": " : "", st == CALSTORE_OK ? "" : err.message);
  if (st == CALSTORE_OK) {
    struct stat sb;
    assert_int_equal(stat(f->dir, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0700);
    calstore_status fst;
    char *disk = rel_file_snapshot(f->path, &fst);
    assert_int_equal(fst, CALSTORE_OK);
    assert_non_null(strstr(disk, "cpu-new"));
    free(disk);
  } else {
    assert_true(err.message[0] != '\0');
    char *snap = rel_snapshot(f->store);
    assert_string_equal(snap, f->snap_before);
    free(snap);
  }
  faults_survived++;
  mkdir(f->dir, 0700); /* for teardown */
}

static void lock_path_that_is_a_directory_is_reported(void **state) {
  fx *f = *state;
  char lock[900];
  snprintf(lock, sizeof lock, "%s.lock", f->path);
  unlink(lock);
  assert_int_equal(mkdir(lock, 0700), 0);
  calstore_error err;
  calstore_status st = try_store(f, &err);
  rmdir(lock);
  expect_unchanged(f, st, CALSTORE_LOCK_FAILED, &err, ".lock is a directory");
}

static void failing_flock_is_reported(void **state) {
  inject_and_check(*state, IP_LOCK, ENOLCK, CALSTORE_LOCK_FAILED, "ENOLCK from flock");
}

static void held_lock_times_out_and_never_commits_unlocked(void **state) {
  fx *f = *state;
  /* A holder stops itself inside its commit (at the write of its .tmp), so
   * it holds the lock. */
  pid_t holder = fork();
  assert_true(holder >= 0);
  if (holder == 0) {
    ip_arm(f->dir, IP_WRITE, 1, IP_STOP, 0, 0, NULL);
    calstore_error err;
    calstore_key k = rel_exact_key("faults", "MatMul", "1", "cpu-holder", 4);
    calstore_store(f->store, &k, rel_measurement, 1, rel_serialize, "holder", NULL, NULL, &err);
    _exit(0);
  }
  int status;
  assert_int_equal(waitpid(holder, &status, WUNTRACED), holder);
  assert_true(WIFSTOPPED(status));
  /* A second writer with a 500 ms lock timeout must give up with
   * CALSTORE_LOCK_FAILED, never commit without the lock. */
  calstore_options o;
  calstore_options_init(&o);
  o.path = f->path;
  o.lock_timeout_ms = 500;
  calstore *impatient = NULL;
  calstore_error err;
  assert_int_equal(calstore_open(&o, &impatient, &err), CALSTORE_OK);
  calstore_key k = rel_exact_key("faults", "MatMul", "1", "cpu-new", 4);
  double t0 = rel_now();
  memset(&err, 0, sizeof err);
  calstore_status st = calstore_store(impatient, &k, rel_measurement, 1, rel_serialize,
                                      "tile=64", NULL, NULL, &err);
  double waited = rel_now() - t0;
  print_message("   lock held by a stopped writer: a writer with a 500 ms timeout answered "
                "after %.2f s: %s: %s\n",
                waited, calstore_status_name(st), err.message);
  faults_injected++;
  if (st == CALSTORE_OK)
    fail_msg("a writer committed while another process held the lock");
  assert_int_equal(st, CALSTORE_LOCK_FAILED);
  assert_non_null(strstr(err.message, ".lock"));
  assert_true(waited >= 0.45);
  assert_int_equal(calstore_count(impatient), calstore_count(f->store)); /* snapshot unchanged */
  faults_survived++;
  /* The holder dies mid-commit: the lock is released with it, and the next
   * writer (default timeout) commits. */
  kill(holder, SIGKILL);
  waitpid(holder, &status, 0);
  memset(&err, 0, sizeof err);
  assert_int_equal(calstore_store(impatient, &k, rel_measurement, 1, rel_serialize, "tile=64",
                                  NULL, NULL, &err),
                   CALSTORE_OK);
  calstore_close(&impatient);
  calstore_status fst;
  char *disk = rel_file_snapshot(f->path, &fst);
  assert_int_equal(fst, CALSTORE_OK);
  assert_non_null(strstr(disk, "cpu-new"));
  assert_null(strstr(disk, "cpu-holder"));
  free(disk);
  faults_injected++;
  faults_survived++;
}

static void eio_on_directory_fsync_is_reported(void **state) {
  fx *f = *state;
  calstore_error err;
  /* The second fsync of a commit is the directory's, after the rename. */
  ip_arm(f->dir, IP_FSYNC, 2, IP_FAIL, EIO, 0, NULL);
  calstore_status st = try_store(f, &err);
  ip_disarm();
  faults_injected++;
  print_message("   EIO on the directory fsync -> %s: %s\n", calstore_status_name(st),
                err.message);
  assert_int_not_equal(st, CALSTORE_OK);
  assert_true(err.message[0] != '\0');
  /* The file must load whatever happened, and a later commit must agree
   * with what is on disk. */
  calstore_status fst;
  char *disk = rel_file_snapshot(f->path, &fst);
  assert_int_equal(fst, CALSTORE_OK);
  /* The rename happened: the change is visible to every process, so the
   * handle's snapshot follows the file, and the status says that only its
   * durability is in doubt. */
  assert_int_equal(st, CALSTORE_WRITE_FAILED);
  assert_non_null(strstr(err.message, "could not sync its directory"));
  assert_non_null(strstr(disk, "cpu-new"));
  char *snap = rel_snapshot(f->store);
  assert_string_equal(snap, disk);
  free(snap);
  free(disk);
  assert_int_equal(calstore_reload(f->store, &err), CALSTORE_OK);
  faults_survived++;
}

static void print_totals(void) {
  printf("faults: injected=%d survived=%d (each: explicit status and message, file and "
         "snapshot unchanged)\n",
         faults_injected, faults_survived);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(enospc_on_write_is_reported, setup, teardown),
      cmocka_unit_test_setup_teardown(enospc_on_small_tmpfs_is_reported, setup, teardown),
      cmocka_unit_test_setup_teardown(efbig_under_rlimit_fsize_is_reported, setup, teardown),
      cmocka_unit_test_setup_teardown(eio_on_fsync_is_reported, setup, teardown),
      cmocka_unit_test_setup_teardown(failed_rename_is_reported, setup, teardown),
      cmocka_unit_test_setup_teardown(erofs_on_create_is_reported, setup, teardown),
      cmocka_unit_test_setup_teardown(readonly_directory_is_reported, setup, teardown),
      cmocka_unit_test_setup_teardown(parent_that_is_a_file_is_reported, setup, teardown),
      cmocka_unit_test_setup_teardown(removed_directory_is_recreated_or_reported, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(lock_path_that_is_a_directory_is_reported, setup, teardown),
      cmocka_unit_test_setup_teardown(failing_flock_is_reported, setup, teardown),
      cmocka_unit_test_setup_teardown(held_lock_times_out_and_never_commits_unlocked, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(eio_on_directory_fsync_is_reported, setup, teardown),
  };
  int failed = cmocka_run_group_tests_name("reliability_faults", tests, NULL, NULL);
  print_totals();
  return failed;
}
