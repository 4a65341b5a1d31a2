/*
 * test_reference.c: the MatMul backends' reference (plugins/common/matmul.c)
 * is computed on the first check, not when a session's data is made: a
 * race or a model bench that only times policies the sweeps checked never
 * pays for the double-precision triple loop (issue 38's race cost). The
 * check itself is unchanged: it computes the reference when it needs it,
 * once, and still catches a wrong output.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "matmul.h"

/* C = A*B (+ C0 when accumulating) in double, from d's inputs. */
static void product(matmul_data *d) {
  const matmul_shape *s = &d->shape;
  for (size_t i = 0; i < s->m; i++)
    for (size_t j = 0; j < s->n; j++) {
      double acc = d->c0 ? d->c0[i * s->n + j] : 0.0;
      for (size_t p = 0; p < s->k; p++)
        acc += (double)d->a[i * s->k + p] * d->b[p * s->n + j];
      d->c[i * s->n + j] = (float)acc;
    }
}

static void reference_waits_for_the_first_check(void **state) {
  (void)state;
  matmul_shape shape = MATMUL_SHAPE(9, 7, 40, 1);
  matmul_data d;
  char err[256];
  assert_int_equal(matmul_data_init(&d, &shape), 0);
  assert_null(d.ref); /* not computed when the session's data is made */
  assert_null(d.mag);
  product(&d);
  assert_int_equal(matmul_check(&d, 1, err, sizeof err), CALHOST_OK);
  assert_non_null(d.ref);
  const double *ref = d.ref;
  assert_int_equal(matmul_data_reference(&d), 0); /* once: kept */
  assert_ptr_equal(d.ref, ref);
  d.c[5] += 0.5f; /* a wrong output is still caught, from the kept reference */
  assert_int_equal(matmul_check(&d, 1, err, sizeof err), CALHOST_CHECK_FAILED);
  assert_non_null(strstr(err, "C[0][5]"));
  assert_ptr_equal(d.ref, ref);
  matmul_data_free(&d);
  assert_null(d.ref);
  /* asked for explicitly (a caller reading ref), before any check */
  assert_int_equal(matmul_data_init(&d, &shape), 0);
  assert_int_equal(matmul_data_reference(&d), 0);
  assert_non_null(d.ref);
  assert_non_null(d.mag);
  matmul_data_free(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reference_waits_for_the_first_check),
  };
  return cmocka_run_group_tests_name("race_reference", tests, NULL, NULL);
}
