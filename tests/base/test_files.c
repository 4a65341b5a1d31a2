/*
 * test_files.c: base_read_fd reads a descriptor to its end (a file, a
 * pipe fed in pieces, an empty file), NUL-terminated, and refuses more
 * than its limit with EFBIG; base_path_writable says whether a file can be written
 * before the job that writes it: an existing directory accepts, a missing
 * one is refused unless the writer makes directories (then the nearest
 * existing ancestor decides), a regular file in a directory's place and a
 * read-only file or directory are refused, each with its reason; the
 * output-file rule (issue 22 items 2, 8, 9): base_output_prepare creates
 * missing folders and refuses a directory, FIFO or device with its kind,
 * base_output_create never writes through a link planted at FILE.part,
 * base_output_replace checks the target again before the rename.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/files.h"

static char tmpdir[64];

static void touch(const char *name) {
  FILE *f = fopen(name, "w");
  assert_non_null(f);
  fclose(f);
}

static int setup(void **state) {
  (void)state;
  snprintf(tmpdir, sizeof tmpdir, "/tmp/calhost-base-XXXXXX");
  return mkdtemp(tmpdir) && chdir(tmpdir) == 0 ? 0 : -1; /* the tests' names are relative */
}

static int teardown(void **state) {
  char cmd[256];
  (void)state;
  snprintf(cmd, sizeof cmd, "chmod -R u+w %s && rm -rf %s", tmpdir, tmpdir);
  return chdir("/") == 0 && system(cmd) == 0 ? 0 : -1;
}

static void reads_a_file_and_a_pipe_to_the_end(void **state) {
  char *text = (char *)1;
  size_t len = 99;
  int fd, fds[2];
  (void)state;
  touch("empty");
  fd = open("empty", O_RDONLY);
  assert_int_equal(base_read_fd(fd, 100, &text, &len), 0);
  close(fd);
  assert_int_equal(len, 0);
  assert_string_equal(text, "");
  free(text);
  /* 100 000 bytes written in 1000-byte pieces by a child: many short reads */
  assert_int_equal(pipe(fds), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    char piece[1000];
    close(fds[0]);
    for (int i = 0; i < 100; i++) {
      memset(piece, 'a' + i % 26, sizeof piece);
      if (write(fds[1], piece, sizeof piece) != (ssize_t)sizeof piece)
        _exit(1);
    }
    _exit(0);
  }
  close(fds[1]);
  assert_int_equal(base_read_fd(fds[0], 1u << 20, &text, &len), 0);
  close(fds[0]);
  waitpid(pid, NULL, 0);
  assert_int_equal(len, 100000);
  assert_int_equal(strlen(text), 100000);
  assert_int_equal(text[0], 'a');
  assert_int_equal(text[99999], 'a' + 99 % 26);
  free(text);
}

static void refuses_more_than_the_limit(void **state) {
  char *text = (char *)1;
  size_t len = 99;
  (void)state;
  FILE *f = fopen("big", "w");
  assert_non_null(f);
  for (int i = 0; i < 20000; i++)
    fputc('x', f);
  fclose(f);
  int fd = open("big", O_RDONLY);
  errno = 0;
  assert_int_equal(base_read_fd(fd, 19999, &text, &len), -1);
  assert_int_equal(errno, EFBIG);
  assert_null(text);
  assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
  assert_int_equal(base_read_fd(fd, 20000, &text, &len), 0); /* exactly the limit */
  assert_int_equal(len, 20000);
  free(text);
  close(fd);
}

/* A file made by mkstemp (0600) gets a plain creation's mode: 0666 less
 * the umask, which is left as it was. */
static void a_temporary_file_gets_the_mode_of_a_created_one(void **state) {
  char name[] = "tmpXXXXXX";
  struct stat st;
  (void)state;
  mode_t old = umask(027);
  int fd = mkstemp(name);
  assert_true(fd >= 0);
  base_file_mode_as_created(fd);
  assert_int_equal(fstat(fd, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0640);
  assert_int_equal(umask(old), 027); /* unchanged by the call */
  close(fd);
}

static void a_new_file_in_an_existing_directory_is_writable(void **state) {
  char why[256] = "";
  (void)state;
  assert_int_equal(base_path_writable("new.txt", 0, why, sizeof why), 0);
  touch("old.txt");
  assert_int_equal(base_path_writable("old.txt", 0, why, sizeof why), 0);
  assert_string_equal(why, "");
}

static void a_missing_directory_is_refused_unless_the_writer_makes_it(void **state) {
  char why[256] = "";
  (void)state;
  assert_int_equal(base_path_writable("no/such/f.txt", 0, why, sizeof why), -1);
  assert_string_equal(why, "its directory no/such does not exist");
  /* the writer creates no and no/such: the working directory decides */
  assert_int_equal(base_path_writable("no/such/f.txt", 1, why, sizeof why), 0);
}

static void a_file_in_a_directorys_place_is_refused(void **state) {
  char why[256] = "";
  (void)state;
  touch("plain");
  assert_int_equal(base_path_writable("plain/f.txt", 0, why, sizeof why), -1);
  assert_string_equal(why, "plain is not a directory");
  /* deeper below it, even a writer that makes directories cannot */
  assert_int_equal(base_path_writable("plain/sub/f.txt", 1, why, sizeof why), -1);
  assert_string_equal(why, "a parent of it is not a directory");
}

static void read_only_files_and_directories_are_refused(void **state) {
  char why[256] = "";
  (void)state;
  if (geteuid() == 0) {
    print_message("   SKIPPED: root writes read-only files (access(2) says yes)\n");
    skip();
  }
  touch("ro.txt");
  assert_int_equal(chmod("ro.txt", 0444), 0);
  assert_int_equal(base_path_writable("ro.txt", 0, why, sizeof why), -1);
  assert_non_null(strstr(why, "it is not writable: "));
  assert_int_equal(mkdir("rodir", 0555), 0);
  assert_int_equal(base_path_writable("rodir/f.txt", 1, why, sizeof why), -1);
  assert_non_null(strstr(why, "directory "));
  assert_non_null(strstr(why, "rodir: "));
}

static void a_bare_name_is_checked_in_the_working_directory(void **state) {
  char why[256] = "", abs[PATH_MAX];
  (void)state;
  assert_int_equal(base_path_writable("bare.txt", 0, why, sizeof why), 0);
  touch("plain2");
  assert_int_equal(base_path_writable("plain2/x", 0, why, sizeof why), -1);
  assert_string_equal(why, "plain2 is not a directory");
  /* the same file named absolutely: the message names the absolute folder */
  snprintf(abs, sizeof abs, "%s/plain2/x", tmpdir);
  assert_int_equal(base_path_writable(abs, 0, why, sizeof why), -1);
  assert_non_null(strstr(why, tmpdir));
  assert_non_null(strstr(why, "/plain2 is not a directory"));
}

static void outputs_get_their_folders_and_refuse_what_is_not_a_file(void **state) {
  char why[512] = "";
  struct stat st;
  (void)state;
  assert_int_equal(base_output_prepare("o1/o2/out.txt", why, sizeof why), 0);
  assert_int_equal(stat("o1/o2", &st), 0);
  assert_true(S_ISDIR(st.st_mode));
  assert_int_equal(mkfifo("o.fifo", 0600), 0);
  assert_int_equal(base_output_prepare("o.fifo", why, sizeof why), -1);
  assert_string_equal(why, "it is a FIFO, not a regular file; refusing to replace it");
  assert_int_equal(base_output_prepare("o1", why, sizeof why), -1);
  assert_non_null(strstr(why, "it is a directory"));
  assert_int_equal(base_output_prepare("/dev/null", why, sizeof why), -1);
  assert_non_null(strstr(why, "it is a character device"));
  /* base_path_writable, the store's pre-flight check, refuses them too */
  assert_int_equal(base_path_writable("o.fifo", 1, why, sizeof why), -1);
  assert_non_null(strstr(why, "a FIFO"));
  touch("o.file");
  assert_int_equal(base_output_prepare("o.file/x/y", why, sizeof why), -1);
}

static void a_part_file_is_never_written_through_a_link(void **state) {
  char why[512] = "", tmp[256];
  (void)state;
  FILE *v = fopen("victim", "w");
  assert_non_null(v);
  fputs("keep\n", v);
  fclose(v);
  assert_int_equal(symlink("victim", "rec.part"), 0);
  int fd = base_output_create("rec", ".part", tmp, sizeof tmp, why, sizeof why);
  assert_true(fd >= 0);
  assert_string_equal(tmp, "rec.part");
  assert_int_equal(write(fd, "new\n", 4), 4);
  close(fd);
  char buf[16] = "";
  fd = open("victim", O_RDONLY);
  assert_int_equal(read(fd, buf, sizeof buf - 1), 5);
  close(fd);
  assert_string_equal(buf, "keep\n");
  /* the rename refuses a FIFO that appeared at the name meanwhile */
  assert_int_equal(mkfifo("rec", 0600), 0);
  assert_int_equal(base_output_replace(tmp, "rec", why, sizeof why), -1);
  assert_non_null(strstr(why, "rec: it is a FIFO"));
  struct stat st;
  assert_int_equal(lstat("rec", &st), 0);
  assert_true(S_ISFIFO(st.st_mode));
  assert_int_equal(unlink("rec"), 0);
  assert_int_equal(base_output_replace(tmp, "rec", why, sizeof why), 0);
  assert_int_equal(lstat("rec", &st), 0);
  assert_true(S_ISREG(st.st_mode));
  /* a unique temporary name otherwise */
  fd = base_output_create("page.html", NULL, tmp, sizeof tmp, why, sizeof why);
  assert_true(fd >= 0);
  assert_non_null(strstr(tmp, "page.html."));
  close(fd);
  unlink(tmp);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reads_a_file_and_a_pipe_to_the_end),
      cmocka_unit_test(refuses_more_than_the_limit),
      cmocka_unit_test(a_temporary_file_gets_the_mode_of_a_created_one),
      cmocka_unit_test(a_new_file_in_an_existing_directory_is_writable),
      cmocka_unit_test(a_missing_directory_is_refused_unless_the_writer_makes_it),
      cmocka_unit_test(a_file_in_a_directorys_place_is_refused),
      cmocka_unit_test(read_only_files_and_directories_are_refused),
      cmocka_unit_test(a_bare_name_is_checked_in_the_working_directory),
      cmocka_unit_test(outputs_get_their_folders_and_refuse_what_is_not_a_file),
      cmocka_unit_test(a_part_file_is_never_written_through_a_link),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
