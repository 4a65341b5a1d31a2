/*
 * test_cli_outputs.c: the one rule for every file calhost writes (issue 22,
 * "Data, files and security"), seen through bin/calhost with test_good:
 *   - item 2: --record and export create their missing folders, as
 *     --report DIR does;
 *   - item 8: --record's FILE.part is created exclusively, never through a
 *     symbolic link planted there;
 *   - item 9: a FIFO or a directory at the output (report --html, --record,
 *     --report's run.json) is refused with its kind, before the work, and
 *     left as it was;
 *   - item 12: a recording whose final rename fails is an error: exit 1, a
 *     --json warning, no "recorded" file, the candidates kept in FILE.part;
 *   - item 13: every shard of a campaign names its recordings per sweep,
 *     even a shard of one sweep (two shards never write the same file);
 *   - item 10: a store commit whose rename succeeded but whose directory
 *     sync failed (the fsync_dir_fails shim) is "stored" with a warning that
 *     durability is not guaranteed, exit 0; override set, override clear,
 *     import and invalidate likewise (applied, a warning on stderr and in
 *     --json);
 *   - item 11: `[store] path = ~/...` with HOME unset is refused naming the
 *     file and line, and no folder named "~" is created.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_harness.h"

/* A configuration with test_good alone (a copy) and the workloads given as
 * "NAME SHAPE" pairs, quick rigor, one thread. */
static const char *config(const char *name, const char *workloads) {
  char cmd[PATH_MAX * 3];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s/p_good' && cp '%s/test_good.so' '%s/p_good/'", dir,
           plugins, dir);
  assert_int_equal(system(cmd), 0);
  char text[PATH_MAX * 2];
  int n = snprintf(text, sizeof text,
                   "[plugins]\ndirectories = %s/p_good\n[calibration]\nrigor = quick\n"
                   "threads = 1\n",
                   dir);
  char w[64];
  long shape;
  for (const char *p = workloads; sscanf(p, "%63s %ld", w, &shape) == 2;) {
    n += snprintf(text + n, sizeof text - (size_t)n,
                  "[workload %s]\noperator = ReduceSum\nshape = %ld\n", w, shape);
    for (int k = 0; k < 2 && p; k++) { /* past "NAME SHAPE" */
      p = strchr(p, ' ');
      if (p)
        p++;
    }
    if (!p)
      break;
  }
  write_file(name, text);
  return name;
}

static int is_kind(const char *name, mode_t kind) {
  struct stat st;
  return lstat(path(name), &st) == 0 && (st.st_mode & S_IFMT) == kind;
}

/* ---- item 2: folders ---------------------------------------------------- */

static void record_creates_its_folder(void **state) {
  (void)state;
  const char *c = config("one.ini", "w1 4096");
  run_result *r = run("--config", c, "--store", "s2.txt", "calibrate", "--plugin", "test_good",
                      "--record", "spaces/deep/sq.space", NULL);
  if (r->code != 0)
    fail_msg("exit %d:\n%s", r->code, r->err);
  HAS(r->out, "to spaces/deep/sq.space");
  assert_true(is_kind("spaces/deep/sq.space", S_IFREG));
  assert_false(is_kind("spaces/deep/sq.space.part", S_IFREG));
}

/* ---- item 8: FILE.part never followed ------------------------------------ */

static void record_part_is_never_written_through_a_link(void **state) {
  (void)state;
  const char *c = config("one.ini", "w1 4096");
  write_file("victim", "keep me\n");
  assert_int_equal(symlink(path("victim"), path("rec.space.part")), 0);
  run_result *r = run("--config", c, "--store", "s8.txt", "calibrate", "--plugin", "test_good",
                      "--record", "rec.space", NULL);
  if (r->code != 0)
    fail_msg("exit %d:\n%s", r->code, r->err);
  char text[64];
  cli_harness_read(path("victim"), text, sizeof text);
  assert_string_equal(text, "keep me\n");
  assert_true(is_kind("rec.space", S_IFREG));
  assert_false(is_kind("rec.space.part", S_IFLNK)); /* the link itself was removed */
}

/* ---- item 9: devices, FIFOs, directories --------------------------------- */

static void every_output_refuses_a_fifo_or_a_directory(void **state) {
  (void)state;
  const char *c = config("one.ini", "w1 4096");
  assert_int_equal(mkfifo(path("out.fifo"), 0600), 0);
  assert_int_equal(mkdir(path("out.dir"), 0700), 0);
  /* a run to make a report of */
  run_result *r =
      run("--json", "--config", c, "--store", "s9.txt", "calibrate", "--plugin", "test_good", NULL);
  assert_int_equal(r->code, 0);
  write_file("run.json", r->out);
  static const char *const outs[] = {"out.fifo", "out.dir"};
  static const char *const kinds[] = {"it is a FIFO", "it is a directory"};
  for (int i = 0; i < 2; i++) {
    r = run("report", "run.json", "--html", outs[i], NULL);
    assert_int_equal(r->code, 2);
    HAS(r->err, outs[i]);
    HAS(r->err, kinds[i]);
    r = run("--config", c, "--store", "s9.txt", "calibrate", "--plugin", "test_good", "--force",
            "--record", outs[i], NULL);
    assert_int_equal(r->code, 2);
    HAS(r->err, "--record: cannot write");
    HAS(r->err, kinds[i]);
  }
  assert_true(is_kind("out.fifo", S_IFIFO));
  assert_true(is_kind("out.dir", S_IFDIR));
  /* --report DIR: a FIFO at DIR/run.json stops the run before it starts */
  assert_int_equal(mkdir(path("rep"), 0700), 0);
  assert_int_equal(mkfifo(path("rep/run.json"), 0600), 0);
  r = run("--config", c, "--store", "s9.txt", "calibrate", "--plugin", "test_good", "--force",
          "--report", "rep", NULL);
  assert_int_equal(r->code, 2);
  HAS(r->err, "rep/run.json: it is a FIFO");
  assert_true(is_kind("rep/run.json", S_IFIFO));
}

/* ---- item 12: the final rename fails -------------------------------------- */

static void a_failed_final_rename_is_an_error(void **state) {
  (void)state;
  const char *c = config("two.ini", "w1 4096 w2 2048");
  /* two sweeps: one file per sweep; the second's name is taken by a folder */
  assert_int_equal(mkdir(path("fr-test_good-w2-t1.space"), 0700), 0);
  run_result *r = run("--json", "--config", c, "--store", "s12.txt", "calibrate", "--plugin",
                      "test_good", "--record", "fr.space", NULL);
  assert_int_equal(r->code, 1);
  HAS(r->out, "\"exit_status\":1");
  HAS(r->out, "--record: ");
  HAS(r->out, "fr-test_good-w2-t1.space: it is a directory");
  HAS(r->out, "the recording is kept in");
  HASNT(r->out, "\"recorded\":\"fr-test_good-w2-t1.space\"");
  HAS(r->out, "\"recorded\":\"fr-test_good-w1-t1.space\"");
  assert_true(is_kind("fr-test_good-w2-t1.space.part", S_IFREG));
  /* the text output says the same, and does not claim the recording */
  r = run("--config", c, "--store", "s12.txt", "calibrate", "--plugin", "test_good", "--force",
          "--record", "fr.space", NULL);
  assert_int_equal(r->code, 1);
  HASNT(r->out, "to fr-test_good-w2-t1.space\n");
  HAS(r->out, "it is a directory");
}

/* ---- item 13: shards name recordings per sweep ------------------------------ */

static void every_shard_names_its_recordings_per_sweep(void **state) {
  (void)state;
  /* w1 falls in shard 0/2, w2 in 1/2 (calhost plan --shards 2): one each */
  const char *c = config("two.ini", "w1 4096 w2 2048");
  run_result *r = run("--config", c, "plan", "--plugin", "test_good", "--shards", "2", NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "w1              1       -  0/2");
  HAS(r->out, "w2              1       -  1/2");
  for (int s = 0; s < 2; s++) {
    r = run("--config", c, "--store", "s13.txt", "calibrate", "--plugin", "test_good", "--shard",
            s ? "1/2" : "0/2", "--record", "camp.space", NULL);
    if (r->code != 0)
      fail_msg("shard %d: exit %d:\n%s", s, r->code, r->err);
  }
  assert_false(is_kind("camp.space", S_IFREG)); /* no shard wrote the bare name */
  assert_true(is_kind("camp-test_good-w1-t1.space", S_IFREG));
  assert_true(is_kind("camp-test_good-w2-t1.space", S_IFREG));
}

/* issue 36 item 4: two workloads sharing their first 95 bytes (the name
 * was cut there) write two recordings, each its own workload's */
static void recordings_of_long_workload_names_never_collide(void **state) {
  (void)state;
  char w[2][128], text[PATH_MAX * 2];
  for (int i = 0; i < 2; i++) {
    memset(w[i], 'w', 100);
    w[i][99] = i ? 'b' : 'a';
    w[i][100] = '\0';
  }
  config("long.ini", "w1 4096"); /* the plugin folder */
  snprintf(text, sizeof text,
           "[plugins]\ndirectories = %s/p_good\n[calibration]\nrigor = quick\nthreads = 1\n"
           "[workload %s]\noperator = ReduceSum\nshape = 4096\n"
           "[workload %s]\noperator = ReduceSum\nshape = 2048\n",
           dir, w[0], w[1]);
  write_file("long.ini", text);
  run_result *r = run("--config", "long.ini", "--store", "s4.txt", "calibrate", "--plugin",
                      "test_good", "--record", "long.space", NULL);
  if (r->code != 0)
    fail_msg("exit %d:\n%s\n%s", r->code, r->out, r->err);
  char cmd[PATH_MAX + 64];
  snprintf(cmd, sizeof cmd, "ls '%s' | grep -c '^long-test_good-.*\\.space$' > '%s/n'", dir, dir);
  assert_int_equal(system(cmd), 0);
  char n[16];
  cli_harness_read(path("n"), n, sizeof n);
  if (atoi(n) != 2)
    fail_msg("%s recordings, expected 2:\n%s", n, r->err);
  for (int i = 0; i < 2; i++) {
    snprintf(cmd, sizeof cmd, "grep -l '^meta workload %s$' '%s'/long-test_good-*.space >/dev/null",
             w[i], dir);
    if (system(cmd) != 0)
      fail_msg("no recording of workload %s", w[i]);
  }
}

/* Runs calhost ARGS (a shell fragment) in DIR with the harness's
 * environment and then env (harness_opts.env); stdout and stderr into r. */
static run_result *run_sh(const char *const *env, const char *args) {
  static run_result r;
  harness_opts o = {.cwd = dir, .timeout_s = 60, .env = env};
  harness_result h = {0};
  r.code = harness_run_sh(&o, &h, args);
  cli_harness_copy(r.out, sizeof r.out, h.out, h.out_len);
  cli_harness_copy(r.err, sizeof r.err, h.err, h.err_len);
  harness_result_free(&h);
  return &r;
}

/* ---- item 10: the directory sync fails after the rename -------------------- */

static void a_failed_directory_sync_is_stored_with_a_warning(void **state) {
  (void)state;
  char preload[PATH_MAX];
  snprintf(preload, sizeof preload, "LD_PRELOAD=%s/lib/calhost/test-shims/fsync_dir_fails.so",
           harness_build_dir());
  const char *const env[] = {"ASAN_OPTIONS=verify_asan_link_order=0", preload, NULL};
  config("one.ini", "w1 4096");
  run_result *r =
      run_sh(env, "--json --config one.ini --store s10.txt calibrate --plugin test_good");
  if (r->code != 0)
    fail_msg("exit %d:\n%s\n%s", r->code, r->out, r->err);
  HAS(r->out, "\"status\":\"stored\"");
  HASNT(r->out, "not_stored");
  HASNT(r->out, "nothing was calibrated");
  HAS(r->out, "durability is not guaranteed");
  HAS(r->out, "could not sync its directory");
  /* the next run reads it: already calibrated */
  r = run("--config", "one.ini", "--store", "s10.txt", "calibrate", "--plugin", "test_good", NULL);
  assert_int_equal(r->code, 0);
  HAS(r->out, "skipped");
}

/* override set, override clear, import and invalidate: the same rule as
 * calibrate's commit (issue 22 item 10's class): the change is applied,
 * exit 0, with the durability warning on stderr and in --json. */
static void store_commands_report_a_failed_directory_sync_as_applied(void **state) {
  (void)state;
  char preload[PATH_MAX];
  snprintf(preload, sizeof preload, "LD_PRELOAD=%s/lib/calhost/test-shims/fsync_dir_fails.so",
           harness_build_dir());
  const char *const env[] = {"ASAN_OPTIONS=verify_asan_link_order=0", preload, NULL};
  const char *const *home = NULL; /* HOME: the scratch directory, as always */
#define SYNC_KEY                                                                                   \
  "--backend b --operator o --implementation 1 --model-digest d --processor p --threads "
  /* a store file to import, written normally */
  run_result *r = run_sh(home, "--store src12.txt override set " SYNC_KEY "2 --policy y");
  assert_int_equal(r->code, 0);
  r = run_sh(env, "--store s12.txt override set " SYNC_KEY "1 --policy x");
  if (r->code != 0)
    fail_msg("override set: exit %d:\n%s\n%s", r->code, r->out, r->err);
  HAS(r->out, "override installed");
  HAS(r->err, "calhost: warning: override set: the change is stored, but durability is not "
              "guaranteed");
  HAS(r->err, "could not sync its directory");
  r = run_sh(env, "--json --store s12.txt import src12.txt");
  if (r->code != 0)
    fail_msg("import: exit %d:\n%s\n%s", r->code, r->out, r->err);
  HAS(r->out, "\"profiles\":1");
  HAS(r->out, "\"warning\":\"the change is stored, but durability is not guaranteed");
  HAS(r->err, "calhost: warning: import: ");
  /* both are in the file every process reads */
  r = run_sh(home, "--store s12.txt list");
  assert_int_equal(r->code, 0);
  HAS(r->out, "thread_count=1");
  HAS(r->out, "thread_count=2");
  /* override clear: the same (it exited 2, the override already gone) */
  r = run_sh(home, "--store s12.txt override set " SYNC_KEY "3 --policy z");
  assert_int_equal(r->code, 0);
  r = run_sh(env, "--store s12.txt override clear " SYNC_KEY "3");
  if (r->code != 0)
    fail_msg("override clear: exit %d:\n%s\n%s", r->code, r->out, r->err);
  HAS(r->out, "override cleared");
  HAS(r->err, "calhost: warning: override clear: the change is stored, but durability is not "
              "guaranteed");
  r = run_sh(home, "--store s12.txt list");
  assert_int_equal(r->code, 0);
  HASNT(r->out, "thread_count=3");
  /* and a key without an override is still a "no" */
  r = run_sh(env, "--store s12.txt override clear " SYNC_KEY "3");
  assert_int_equal(r->code, 1);
  HAS(r->err, "no override with this key");
  r = run_sh(env, "--json --store s12.txt invalidate --backend b");
  if (r->code != 0)
    fail_msg("invalidate: exit %d:\n%s\n%s", r->code, r->out, r->err);
  HAS(r->out, "\"removed\":2");
  HAS(r->out, "\"warning\":");
  HAS(r->err, "calhost: warning: invalidate: ");
  r = run_sh(home, "--store s12.txt list");
  assert_int_equal(r->code, 0);
  HASNT(r->out, "backend=\"b\"");
#undef SYNC_KEY
}

/* ---- item 11: '~' with HOME unset ----------------------------------------- */

static void a_tilde_path_with_home_unset_is_refused(void **state) {
  (void)state;
  char text[PATH_MAX];
  snprintf(text, sizeof text,
           "[plugins]\ndirectories = %s/p_good\n[store]\npath = ~/profiles.txt\n", dir);
  write_file("tilde.ini", text);
  static const char *const unset[] = {"HOME", NULL}, *const empty[] = {"HOME=", NULL};
  static const char *const *const envs[] = {unset, empty};
  for (int i = 0; i < 2; i++) {
    run_result *r = run_sh(envs[i], "--config tilde.ini list");
    assert_int_equal(r->code, 2);
    HAS(r->err, "tilde.ini:4");
    HAS(r->err, "HOME is not set");
    assert_false(is_kind("~", S_IFDIR));
  }
  /* with HOME set it expands as before */
  const char *const *env = NULL; /* HOME: the scratch directory */
  run_result *r = run_sh(env, "--config tilde.ini list");
  assert_int_equal(r->code, 0);
  /* another user's home is not expanded */
  write_file("tilde2.ini", "[store]\npath = ~root/profiles.txt\n");
  r = run_sh(env, "--config tilde2.ini list");
  assert_int_equal(r->code, 2);
  HAS(r->err, "tilde2.ini:2");
  HAS(r->err, "only '~' and '~/...' are expanded");
}

static int setup(void **state) {
  (void)state;
  return cli_harness_setup("clio");
}

static int teardown(void **state) {
  (void)state;
  return cli_harness_teardown();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(record_creates_its_folder),
      cmocka_unit_test(record_part_is_never_written_through_a_link),
      cmocka_unit_test(every_output_refuses_a_fifo_or_a_directory),
      cmocka_unit_test(a_failed_final_rename_is_an_error),
      cmocka_unit_test(every_shard_names_its_recordings_per_sweep),
      cmocka_unit_test(recordings_of_long_workload_names_never_collide),
      cmocka_unit_test(a_failed_directory_sync_is_stored_with_a_warning),
      cmocka_unit_test(store_commands_report_a_failed_directory_sync_as_applied),
      cmocka_unit_test(a_tilde_path_with_home_unset_is_refused),
  };
  return cmocka_run_group_tests_name("cli_outputs", tests, setup, teardown);
}
