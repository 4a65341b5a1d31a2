/*
 * test_cli_example.c: the shipped example backend and ReduceSum's
 * attributes (issue 36 item 7): a row reduction (trailing `axes`, with
 * `keepdims`) is measured as one, checked output by output, and keyed apart
 * from a full sum (portable structure `segment`); axes it does not
 * implement (leading ones, axes as an input), noop_with_empty_axes=1
 * without axes and an unknown property are refused by name, never measured
 * as a full sum. Through `calhost calibrate` on the build's example.so.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cli_harness.h"

static int setup(void **state) {
  (void)state;
  if (cli_harness_setup("example") != 0)
    return -1;
  char cmd[PATH_MAX * 3];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s/p' && cp '%s/lib/calhost/plugins/example.so' '%s/p/'",
           dir, getenv("CALHOST_BUILD_DIR"), dir);
  return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  return cli_harness_teardown();
}

/* A [workload NAME] of ReduceSum 64x256 with the extra lines props. */
static void workload(char *text, size_t cap, const char *name, const char *props) {
  size_t n = strlen(text);
  snprintf(text + n, cap - n, "[workload %s]\noperator = ReduceSum\nshape = 64,256\n%s", name,
           props);
}

static void reduce_sum_attributes_are_implemented_or_refused(void **state) {
  (void)state;
  char text[4096];
  snprintf(text, sizeof text,
           "[plugins]\ndirectories = %s/p\n[calibration]\nrigor = quick\nthreads = 1\n", dir);
  workload(text, sizeof text, "rows", "axes = -1\nkeepdims = 0\n");
  workload(text, sizeof text, "every", "axes = 1,0\nkeepdims = 1\n");
  workload(text, sizeof text, "cols", "axes = 0\n");
  workload(text, sizeof text, "dyn", "axes = input\n");
  workload(text, sizeof text, "noop", "noop_with_empty_axes = 1\n");
  workload(text, sizeof text, "odd", "foo = 1\n");
  write_file("c.ini", text);
  run_result *r =
      run("--config", "c.ini", "--store", "s.txt", "calibrate", "--plugin", "example", NULL);
  if (r->code != 0)
    fail_msg("exit %d:\n%s\n%s", r->code, r->out, r->err);
  HAS(r->out, "cols            1       -  -");
  HAS(r->out, "unsupported: ReduceSum over axis 0 of 2");
  HAS(r->out, "unsupported: ReduceSum axes given as an input tensor are not implemented");
  HAS(r->out, "unsupported: ReduceSum noop_with_empty_axes=1 without axes");
  HAS(r->out, "unsupported: unknown ReduceSum property 'foo'");
  /* rows and every are measured and stored: the row reduction keyed apart
   * (its segment), the reduction over every axis as the full sum it is */
  char store[1 << 16];
  cli_harness_read(path("s.txt"), store, sizeof store);
  HAS(store, "structure \"segment\" \"256\"");
  r = run("--config", "c.ini", "--store", "s.txt", "--json", "list", NULL);
  assert_int_equal(r->code, 0);
  size_t portable = 0;
  for (const char *p = r->out; (p = strstr(p, "\"kind\":\"portable\"")); p++)
    portable++;
  assert_int_equal(portable, 2); /* rows and every: two computations */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reduce_sum_attributes_are_implemented_or_refused),
  };
  return cmocka_run_group_tests_name("cli_example", tests, setup, teardown);
}
