/*
 * misuse.h: the table-driven misuse tests' one harness (store_misuse,
 * runtime_misuse). A row is a function that calls public functions with
 * NULL or size misuse and returns 0, or the line of the first expectation
 * not met (EXPECT). Each row runs in a child with the default signal
 * actions, so a crash names its row instead of ending the test program.
 * Header-only: include it after <cmocka.h>.
 */
#ifndef CALHOST_TESTS_COMMON_MISUSE_H
#define CALHOST_TESTS_COMMON_MISUSE_H

#include <signal.h>
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

/* In a row: return the line when cond does not hold. */
#define EXPECT(cond)                                                                               \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      return __LINE__;                                                                             \
  } while (0)

typedef struct misuse_row {
  const char *name;
  int (*fn)(void);
} misuse_row;

/* Runs every row in its own child; prints (cmocka's print_error) each row
 * killed by a signal or with an expectation not met (the line, found by
 * running the row again in this process). Returns how many failed. */
static inline int misuse_run_rows(const misuse_row *rows, size_t n) {
  int failed = 0;
  for (size_t i = 0; i < n; i++) {
    pid_t pid = fork();
    if (pid < 0)
      return (int)n;
    if (pid == 0) { /* cmocka's handlers would catch a crash: the default kills */
      int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE};
      for (size_t k = 0; k < sizeof sigs / sizeof sigs[0]; k++)
        signal(sigs[k], SIG_DFL);
      _exit(rows[i].fn() ? 1 : 0);
    }
    int st;
    waitpid(pid, &st, 0);
    if (WIFSIGNALED(st)) {
      print_error("%s: killed by signal %d\n", rows[i].name, WTERMSIG(st));
      failed++;
    } else if (WEXITSTATUS(st) != 0) {
      print_error("%s: expectation at line %d not met\n", rows[i].name, rows[i].fn());
      failed++;
    }
  }
  return failed;
}

#endif
