/*
 * security_test.c: the store's file-system hygiene (issue 6, Security).
 *
 *   - the store directory (and every parent it creates) is made 0700, the
 *     lock and the temporary file 0600, whatever the umask;
 *   - the temporary file cannot be redirected: a symlink or a hard link
 *     planted at its name before the commit, or a symlink planted between
 *     the store's cleanup and its open (the race an attacker would play),
 *     never changes the victim file it points at;
 *   - a symlink planted at the lock's name is not followed into its victim.
 * The plugin-loading side (modes, owners, CALHOST_PLUGIN_PATH under setuid)
 * is tested end to end through bin/calhost by plugin_security.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "interpose.h"
#include "rel_common.h"

#define VICTIM_TEXT "victim: must never change\n"

typedef struct fx {
  char dir[512], path[600], tmp[640], lock[640], victim[640];
} fx;

static int setup(void **state) {
  fx *f = calloc(1, sizeof *f);
  if (!f || rel_mkdtemp(f->dir, sizeof f->dir, "security") != 0)
    return -1;
  snprintf(f->path, sizeof f->path, "%s/store/profiles.txt", f->dir);
  snprintf(f->tmp, sizeof f->tmp, "%s.tmp", f->path);
  snprintf(f->lock, sizeof f->lock, "%s.lock", f->path);
  snprintf(f->victim, sizeof f->victim, "%s/victim.txt", f->dir);
  if (rel_write_file(f->victim, VICTIM_TEXT) != 0 || chmod(f->victim, 0644) != 0)
    return -1;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fx *f = *state;
  ip_disarm();
  rel_rmtree(f->dir);
  free(f);
  return 0;
}

static void check_victim(const fx *f) {
  struct stat st;
  char *t = harness_slurp(f->victim, NULL);
  assert_non_null(t);
  assert_string_equal(t, VICTIM_TEXT);
  free(t);
  assert_int_equal(lstat(f->victim, &st), 0);
  assert_true(S_ISREG(st.st_mode));
  assert_int_equal(st.st_mode & 07777, 0644);
}

static calstore_status store_one(const char *path, const char *proc, calstore_error *err) {
  calstore_options o;
  calstore_options_init(&o);
  o.path = path;
  calstore *s = NULL;
  memset(err, 0, sizeof *err);
  calstore_status st = calstore_open(&o, &s, err);
  if (st != CALSTORE_OK) {
    calstore_close(&s);
    return st;
  }
  calstore_key k = rel_exact_key("security", "MatMul", "1", proc, 2);
  st = calstore_store(s, &k, rel_measurement, 1, rel_serialize, "tile=8", NULL, NULL, err);
  calstore_close(&s);
  return st;
}

static unsigned mode_of(const char *p) {
  struct stat st;
  if (lstat(p, &st) != 0)
    return 0xffffffffu;
  return (unsigned)(st.st_mode & 07777);
}

static unsigned tmp_mode_seen = 0xffffffffu;
static char tmp_seen[700];

static void at_rename(int kind, const char *path) {
  (void)kind;
  if (path && strstr(path, ".tmp")) {
    snprintf(tmp_seen, sizeof tmp_seen, "%s", path);
    tmp_mode_seen = mode_of(path);
  }
}

static void modes_are_private_whatever_the_umask(void **state) {
  fx *f = *state;
  char deep[700], parent[700];
  snprintf(deep, sizeof deep, "%s/a/b/profiles.txt", f->dir);
  mode_t old = umask(0);
  ip_arm(f->dir, IP_RENAME, 1, IP_HOOK, 0, 1, at_rename);
  calstore_error err;
  calstore_status st = store_one(deep, "cpu", &err);
  ip_disarm();
  umask(old);
  assert_int_equal(st, CALSTORE_OK);
  snprintf(parent, sizeof parent, "%s/a", f->dir);
  *strrchr(deep, '/') = '\0';
  print_message("   with umask 0: created dirs a %o, a/b %o\n", mode_of(parent), mode_of(deep));
  assert_int_equal(mode_of(parent), 0700);
  assert_int_equal(mode_of(deep), 0700);
  strcat(deep, "/profiles.txt.lock");
  unsigned lock_mode = mode_of(deep);
  *strrchr(deep, '/') = '\0';
  strcat(deep, "/profiles.txt");
  unsigned file_mode = mode_of(deep);
  print_message("   lock %o, tmp %o (seen at rename: %s), store file %o\n", lock_mode,
                tmp_mode_seen, tmp_seen, file_mode);
  assert_int_equal(lock_mode, 0600);
  assert_int_equal(tmp_mode_seen, 0600);
  assert_int_equal(file_mode, 0600);
}

static void symlink_planted_at_tmp_is_not_followed(void **state) {
  fx *f = *state;
  calstore_error err;
  assert_int_equal(store_one(f->path, "first", &err), CALSTORE_OK);
  assert_int_equal(symlink(f->victim, f->tmp), 0);
  calstore_status st = store_one(f->path, "second", &err);
  print_message("   symlink at .tmp -> %s%s%s\n", calstore_status_name(st), err.message[0] ? ": " : "",
                err.message);
  check_victim(f);
  struct stat sb;
  assert_int_equal(lstat(f->path, &sb), 0);
  assert_true(S_ISREG(sb.st_mode));
  if (st == CALSTORE_OK) {
    char *disk = rel_file_snapshot(f->path, NULL);
    assert_non_null(strstr(disk, "second"));
    free(disk);
  } else {
    assert_true(err.message[0] != '\0');
  }
}

static void hard_link_planted_at_tmp_is_not_written_through(void **state) {
  fx *f = *state;
  calstore_error err;
  assert_int_equal(store_one(f->path, "first", &err), CALSTORE_OK);
  assert_int_equal(link(f->victim, f->tmp), 0);
  calstore_status st = store_one(f->path, "second", &err);
  print_message("   hard link at .tmp -> %s%s%s\n", calstore_status_name(st),
                err.message[0] ? ": " : "", err.message);
  check_victim(f);
}

static const char *race_victim, *race_tmp;
static int race_planted;

static void plant_before_open(int kind, const char *path) {
  (void)kind;
  if (!race_planted && path && !strcmp(path, race_tmp)) {
    race_planted = symlink(race_victim, race_tmp) == 0;
  }
}

static void symlink_raced_in_before_open_is_refused(void **state) {
  fx *f = *state;
  calstore_error err;
  assert_int_equal(store_one(f->path, "first", &err), CALSTORE_OK);
  race_victim = f->victim;
  race_tmp = f->tmp;
  race_planted = 0;
  ip_arm(f->dir, IP_OPEN, 1, IP_HOOK, 0, 1, plant_before_open);
  calstore_status st = store_one(f->path, "second", &err);
  ip_disarm();
  print_message("   symlink planted between cleanup and open (%s) -> %s%s%s\n",
                race_planted ? "planted" : "NOT planted", calstore_status_name(st),
                err.message[0] ? ": " : "", err.message);
  assert_true(race_planted);
  check_victim(f);
  assert_int_not_equal(st, CALSTORE_OK); /* O_EXCL|O_NOFOLLOW must refuse it */
  assert_true(err.message[0] != '\0');
  char *disk = rel_file_snapshot(f->path, NULL);
  assert_null(strstr(disk, "second"));
  assert_non_null(strstr(disk, "first"));
  free(disk);
}

static void symlink_planted_at_lock_is_not_followed(void **state) {
  fx *f = *state;
  calstore_error err;
  assert_int_equal(store_one(f->path, "first", &err), CALSTORE_OK);
  unlink(f->lock);
  assert_int_equal(symlink(f->victim, f->lock), 0);
  calstore_status st = store_one(f->path, "second", &err);
  print_message("   symlink at .lock -> %s%s%s\n", calstore_status_name(st),
                err.message[0] ? ": " : "", err.message);
  check_victim(f);
  if (st != CALSTORE_OK)
    assert_true(err.message[0] != '\0');
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(modes_are_private_whatever_the_umask, setup, teardown),
      cmocka_unit_test_setup_teardown(symlink_planted_at_tmp_is_not_followed, setup, teardown),
      cmocka_unit_test_setup_teardown(hard_link_planted_at_tmp_is_not_written_through, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(symlink_raced_in_before_open_is_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(symlink_planted_at_lock_is_not_followed, setup, teardown),
  };
  return cmocka_run_group_tests_name("reliability_security", tests, NULL, NULL);
}
