/*
 * coverage_exit.c: in CALHOST_COVERAGE builds each test program is linked
 * with --wrap=_exit (cmake/CalhostCoverage.cmake) so that a child process
 * that ends with _exit (a misuse table's row, a forked writer) writes its
 * gcov counters first: _exit skips the exit handler that writes them, and
 * what such children ran would not be counted.
 */
#include <unistd.h>

void __gcov_dump(void);
void __real__exit(int status) __attribute__((noreturn));
void __wrap__exit(int status) __attribute__((noreturn));

void __wrap__exit(int status) {
  __gcov_dump();
  __real__exit(status);
}
