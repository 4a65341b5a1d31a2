/*
 * test_store_cli.c: the store's hardening seen through bin/calhost (from
 * CALHOST_BUILD_DIR), each a regression test of issue 9:
 *  - `export OUT` never deletes an unrelated OUT.tmp (item 4);
 *  - a FIFO as the store or as an `import` input is refused at once with a
 *    message naming it, instead of blocking for ever (item 7);
 *  - under a file size limit (ulimit -f) a commit reports write_failed with
 *    "File too large" and the path instead of dying of SIGXFSZ, and leaves
 *    no temporary file (item 8);
 *  - SIGHUP stops `calibrate` like SIGINT: finished work committed, exit 129
 *    (item 8);
 *  - a portable profile already in the store (imported from a fleet) is
 *    kept by `calibrate`, decided by the commit (item 1);
 *  - a store path that is a symbolic link stays a link (item 3).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "harness.h"
#include "util.h"

static char g_build[1024];
static char *g_dir;

static int setup(void **state) {
  (void)state;
  g_dir = tu_mkdtemp();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  if (!getenv("CALHOST_KEEP_TEST_DIR"))
    tu_rmtree(g_dir);
  free(g_dir);
  g_dir = NULL;
  return 0;
}

static char *in_dir(const char *name) {
  return tu_path(g_dir, name);
}

/* Starts bin/calhost with args (NULL-terminated) in the temp dir (HOME
 * and XDG there), with a limit of 30 s; fsize > 0 sets RLIMIT_FSIZE in the
 * child (SIGXFSZ left at its default, as a shell's ulimit -f does). */
static void start(const char *const *args, rlim_t fsize, harness_child *c) {
  harness_opts o = {.cwd = g_dir, .timeout_s = 30, .fsize_limit = fsize};
  harness_start(NULL, &o, args, c);
}

/* Waits for c. Returns the exit status, or 256 + the signal that killed it
 * (so a handled signal's exit 129 differs from a death by SIGHUP), or -1
 * when it blocked past its 30 s (killed); r its output. */
static int wait_exit(harness_child *c, harness_result *r) {
  harness_wait(c, r);
  return r->signal == SIGALRM ? -1 : r->signal ? 256 + r->signal : r->code;
}

static int run(char **out, char **err, rlim_t fsize, const char *const *args) {
  harness_child c;
  harness_result r = {0};
  start(args, fsize, &c);
  int rc = wait_exit(&c, &r);
  *out = r.out;
  *err = r.err;
  return rc;
}

#define HDR "onnx_light_calibration_profiles 1\n"
#define PROFILE(digest, policy)                                                                    \
  "profile exact calibrated\nbackend \"gpu\"\noperator \"MatMul\"\nimplementation \"3\"\n"         \
  "model_digest \"" digest "\"\nprocessor \"p\"\nthread_count 8\npolicy \"" policy "\"\nend\n"

static void export_never_deletes_an_unrelated_tmp(void **state) {
  (void)state;
  char *store = in_dir("store.txt"), *out_path = in_dir("fleet.txt"),
       *other = in_dir("fleet.txt.tmp"), *out, *err;
  tu_write(store, HDR PROFILE("d", "x"));
  tu_write(other, "an editor's swap file\n");
  const char *args[] = {"--store", store, "export", out_path, NULL};
  int rc = run(&out, &err, 0, args);
  if (rc != 0)
    fprintf(stderr, "%s%s", out, err);
  assert_int_equal(rc, 0);
  char *kept = harness_slurp(other, NULL);
  assert_non_null(kept);
  assert_string_equal(kept, "an editor's swap file\n");
  assert_int_equal(calstore_read_file(out_path, NULL, NULL, NULL, NULL, NULL), CALSTORE_OK);
  free(kept);
  free(out);
  free(err);
  free(store);
  free(out_path);
  free(other);
}

static void fifo_store_and_fifo_import_are_refused(void **state) {
  (void)state;
  char *store = in_dir("store.txt"), *fifo = in_dir("fifo.txt"), *out, *err;
  tu_write(store, HDR PROFILE("d", "x"));
  assert_int_equal(mkfifo(fifo, 0600), 0);
  const char *imp[] = {"--store", store, "import", fifo, NULL};
  int rc = run(&out, &err, 0, imp);
  assert_int_equal(rc, 2); /* not -1: it did not block */
  assert_non_null(strstr(err, fifo));
  assert_non_null(strstr(err, "not a regular file"));
  free(out);
  free(err);
  const char *list[] = {"--store", fifo, "list", NULL};
  rc = run(&out, &err, 0, list);
  assert_int_equal(rc, 2);
  assert_non_null(strstr(err, "not a regular file"));
  free(out);
  free(err);
  free(store);
  free(fifo);
}

static void file_size_limit_is_write_failed_not_a_kill(void **state) {
  (void)state;
  char *store = in_dir("store.txt"), *big = in_dir("big.txt"), *tmp = in_dir("store.txt.tmp"), *out,
       *err;
  tu_write(store, HDR PROFILE("d", "x"));
  /* an import whose merged store exceeds the 16 KiB limit */
  size_t n = 64 * 1024;
  char *text = malloc(n + 4096);
  size_t used = (size_t)snprintf(text, n + 4096, HDR);
  for (int i = 0; used < n; i++)
    used += (size_t)snprintf(text + used, n + 4096 - used,
                             "profile exact calibrated\nbackend \"gpu\"\noperator \"MatMul\"\n"
                             "implementation \"3\"\nmodel_digest \"m%d\"\nprocessor \"p\"\n"
                             "thread_count 8\npolicy \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"\nend\n",
                             i);
  tu_write(big, text);
  free(text);
  const char *args[] = {"--store", store, "import", big, NULL};
  int rc = run(&out, &err, 16 * 1024, args);
  if (rc != 2)
    fprintf(stderr, "rc %d\n%s%s", rc, out, err);
  assert_int_equal(rc, 2); /* not 256 + SIGXFSZ */
  assert_non_null(strstr(err, "write_failed"));
  assert_non_null(strstr(err, "File too large"));
  assert_non_null(strstr(err, store));
  assert_false(tu_exists(tmp));
  char *now = harness_slurp(store, NULL);
  assert_string_equal(now, HDR PROFILE("d", "x"));
  free(now);
  free(out);
  free(err);
  free(store);
  free(big);
  free(tmp);
}

static void copy_file(const char *from, const char *to) {
  size_t n;
  char *data = harness_slurp(from, &n);
  if (!data)
    fail_msg("missing %s", from);
  FILE *f = fopen(to, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, n, f), n);
  fclose(f);
  chmod(to, 0755);
  free(data);
}

/* A config naming exactly the test plugins in `enabled` (comma-separated),
 * copied into a private directory, rigor quick, two workloads. */
static char *write_config(const char *name, const char *enabled, const char *store) {
  char *cfg = in_dir(name), dir[1200], text[4096];
  snprintf(dir, sizeof dir, "%s/plugins-%s", g_dir, name);
  mkdir(dir, 0700);
  const char *p = enabled;
  while (*p) {
    while (*p == ' ' || *p == ',')
      p++;
    size_t n = strcspn(p, ", ");
    if (!n)
      break;
    char from[1400], to[1400];
    snprintf(from, sizeof from, "%s/lib/calhost/test-plugins/%.*s.so", g_build, (int)n, p);
    snprintf(to, sizeof to, "%s/%.*s.so", dir, (int)n, p);
    copy_file(from, to);
    p += n;
  }
  snprintf(text, sizeof text,
           "[store]\npath = %s\n[plugins]\ndirectories = %s\nenabled = %s\n"
           "[calibration]\nthreads = 1\nrigor = quick\ntime_budget = 3\nplugin_timeout = 60\n"
           "[workload sum_4k]\noperator = ReduceSum\nshape = 4096\n"
           "[workload sum_16k]\noperator = ReduceSum\nshape = 16384\n",
           store, dir, enabled);
  tu_write(cfg, text);
  return cfg;
}

typedef struct counts {
  int exact, portable;
  char portable_policy[256];
} counts;

static int count_visit(void *user, const calstore_profile *p) {
  counts *c = user;
  if (strcmp(p->key.backend, "test_good"))
    return 0;
  if (p->key.kind == CALSTORE_KEY_EXACT) {
    c->exact++;
  } else {
    c->portable++;
    snprintf(c->portable_policy, sizeof c->portable_policy, "%s", p->policy);
  }
  return 0;
}

static void sighup_commits_finished_workloads(void **state) {
  (void)state;
  char *store = in_dir("store.txt"), *tmp = in_dir("store.txt.tmp");
  char *cfg = write_config("hup.ini", "test_good, test_hang", store);
  const char *args[] = {"calibrate", "--config", cfg, NULL};
  harness_child child;
  harness_result r = {0};
  start(args, 0, &child);
  int seen = 0;
  for (int i = 0; i < 400 && !seen; i++) { /* up to 40 s */
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
    counts c = {0};
    if (calstore_read_file(store, count_visit, &c, NULL, NULL, NULL) == CALSTORE_OK)
      seen = c.exact == 2; /* both workloads of test_good committed */
  }
  assert_true(seen);
  kill(child.pid, SIGHUP);                      /* the terminal went away while test_hang runs */
  assert_int_equal(wait_exit(&child, &r), 129); /* exited 128 + SIGHUP, not killed by it */
  assert_non_null(strstr(r.err, "interrupted"));
  harness_result_free(&r);
  counts c = {0};
  assert_int_equal(calstore_read_file(store, count_visit, &c, NULL, NULL, NULL), CALSTORE_OK);
  assert_int_equal(c.exact, 2);
  assert_false(tu_exists(tmp));
  free(store);
  free(tmp);
  free(cfg);
}

typedef struct keep_portable {
  calstore_batch *batch;
  int queued;
} keep_portable;

/* Queues test_good's portable profiles with the policy "fleet". */
static int queue_fleet(void *user, const calstore_profile *p) {
  keep_portable *k = user;
  if (p->key.kind != CALSTORE_KEY_PORTABLE || strcmp(p->key.backend, "test_good"))
    return 0;
  calstore_profile q = *p;
  q.policy = "fleet";
  q.policy_length = 5;
  if (calstore_batch_put(k->batch, &q, NULL) == CALSTORE_OK)
    k->queued++;
  return 0;
}

static void imported_portable_profile_survives_calibrate(void **state) {
  (void)state;
  char *store = in_dir("store.txt"), *fleet = in_dir("fleet-store.txt"), *out, *err;
  char *cfg = write_config("port.ini", "test_good", store);
  const char *args[] = {"calibrate", "--config", cfg, NULL};
  /* a first calibration tells the portable keys of test_good */
  assert_int_equal(run(&out, &err, 0, args), 0);
  free(out);
  free(err);
  /* a fleet store holding only those portable keys, policy "fleet" */
  calstore *s = tu_open(fleet, NULL);
  keep_portable k = {0};
  assert_int_equal(calstore_batch_begin(s, &k.batch, NULL), CALSTORE_OK);
  assert_int_equal(calstore_read_file(store, queue_fleet, &k, NULL, NULL, NULL), CALSTORE_OK);
  assert_true(k.queued >= 1);
  assert_int_equal(calstore_batch_commit(&k.batch, NULL), CALSTORE_OK);
  calstore_close(&s);
  /* start over from the fleet's store: calibrate keeps its portable profiles */
  copy_file(fleet, store);
  int rc = run(&out, &err, 0, args);
  if (rc != 0)
    fprintf(stderr, "%s%s", out, err);
  assert_int_equal(rc, 0);
  counts c = {0};
  assert_int_equal(calstore_read_file(store, count_visit, &c, NULL, NULL, NULL), CALSTORE_OK);
  assert_int_equal(c.exact, 2);
  assert_int_equal(c.portable, k.queued);
  assert_string_equal(c.portable_policy, "fleet");
  free(out);
  free(err);
  /* --force replaces them */
  const char *forced[] = {"calibrate", "--config", cfg, "--force", NULL};
  assert_int_equal(run(&out, &err, 0, forced), 0);
  memset(&c, 0, sizeof c);
  assert_int_equal(calstore_read_file(store, count_visit, &c, NULL, NULL, NULL), CALSTORE_OK);
  assert_string_not_equal(c.portable_policy, "fleet");
  free(out);
  free(err);
  free(store);
  free(fleet);
  free(cfg);
}

static void symlinked_store_stays_a_link(void **state) {
  (void)state;
  char *shared = in_dir("shared.txt"), *link = in_dir("link.txt"), *fleet = in_dir("fleet.txt"),
       *out, *err;
  tu_write(shared, HDR PROFILE("d", "x"));
  tu_write(fleet, HDR PROFILE("e", "y"));
  assert_int_equal(symlink("shared.txt", link), 0);
  const char *args[] = {"--store", link, "import", fleet, NULL};
  int rc = run(&out, &err, 0, args);
  if (rc != 0)
    fprintf(stderr, "%s%s", out, err);
  assert_int_equal(rc, 0);
  struct stat st;
  assert_int_equal(lstat(link, &st), 0);
  assert_true(S_ISLNK(st.st_mode));
  size_t n = 0;
  assert_int_equal(calstore_read_file(shared, NULL, NULL, NULL, NULL, &n), CALSTORE_OK);
  assert_int_equal(n, 2);
  free(out);
  free(err);
  free(shared);
  free(link);
  free(fleet);
}

int main(void) {
  const char *b = getenv("CALHOST_BUILD_DIR");
  if (!b) {
    fprintf(stderr, "CALHOST_BUILD_DIR is not set (run through ctest)\n");
    return 1;
  }
  snprintf(g_build, sizeof g_build, "%s", b);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(export_never_deletes_an_unrelated_tmp, setup, teardown),
      cmocka_unit_test_setup_teardown(fifo_store_and_fifo_import_are_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(file_size_limit_is_write_failed_not_a_kill, setup, teardown),
      cmocka_unit_test_setup_teardown(sighup_commits_finished_workloads, setup, teardown),
      cmocka_unit_test_setup_teardown(imported_portable_profile_survives_calibrate, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(symlinked_store_stays_a_link, setup, teardown),
  };
  return cmocka_run_group_tests_name("store_cli", tests, NULL, NULL);
}
