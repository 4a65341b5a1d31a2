/*
 * test_device_timing.c: plugins/common's shared device loop
 * (device_timing.c, used by opencl_gemm, clblast, cuda_gemm and cublaslt)
 * over fake device callbacks: batch sizes, timing, cancellation between
 * batches only, and the start's and a batch's failures with their codes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "device_timing.h"

typedef struct fake {
  int start_code, fail_at_batch, fail_code, untimed_batch;
  uint32_t batch_max, started_with, products, batches, cancel_after;
  uint32_t sizes[16];
} fake;

static int fake_start(void *ctx, uint32_t iterations) {
  fake *f = ctx;
  f->started_with = iterations;
  return f->start_code;
}

static uint32_t fake_batch_size(void *ctx, uint32_t remaining) {
  fake *f = ctx;
  return remaining < f->batch_max ? remaining : f->batch_max;
}

static int fake_batch(void *ctx, uint32_t count, double *seconds, int *timed) {
  fake *f = ctx;
  if (f->batches < 16)
    f->sizes[f->batches] = count;
  f->batches++;
  f->products += count;
  *seconds += 0.5 * count;
  if ((int)f->batches == f->untimed_batch)
    *timed = 0;
  return (int)f->batches == f->fail_at_batch ? f->fail_code : 0;
}

static const device_timing_ops ops = {fake_start, fake_batch_size, fake_batch};

static int fake_cancelled(void *context) {
  fake *f = context;
  return f->batches >= f->cancel_after;
}

static void runs_every_product_in_batches_and_sums_their_time(void **state) {
  fake f = {.batch_max = 64};
  double s = -1;
  int timed = 0, code = -1;
  (void)state;
  assert_int_equal(device_timing_run(&ops, &f, NULL, 150, &s, &timed, &code), DEVICE_TIMING_OK);
  assert_int_equal(f.started_with, 150);
  assert_int_equal(f.batches, 3);
  assert_int_equal(f.sizes[0], 64);
  assert_int_equal(f.sizes[1], 64);
  assert_int_equal(f.sizes[2], 22);
  assert_int_equal(f.products, 150);
  assert_true(s == 75.0);
  assert_int_equal(timed, 1);
  assert_int_equal(code, 0);
  /* an untimed batch makes the run untimed */
  fake g = {.batch_max = 10, .untimed_batch = 2};
  assert_int_equal(device_timing_run(&ops, &g, NULL, 30, &s, &timed, &code), DEVICE_TIMING_OK);
  assert_int_equal(timed, 0);
}

static void cancels_between_batches_never_after_the_last(void **state) {
  fake f = {.batch_max = 10, .cancel_after = 2};
  calhost_host_services host = {0};
  double s = 0;
  int timed, code;
  (void)state;
  host.context = &f;
  host.is_cancelled = fake_cancelled;
  assert_int_equal(device_timing_run(&ops, &f, &host, 100, &s, &timed, &code),
                   DEVICE_TIMING_CANCELLED);
  assert_int_equal(f.batches, 2);
  assert_true(s == 10.0); /* the time of what ran */
  /* asked to stop once everything ran: the run completes */
  fake g = {.batch_max = 10, .cancel_after = 2};
  host.context = &g;
  assert_int_equal(device_timing_run(&ops, &g, &host, 20, &s, &timed, &code), DEVICE_TIMING_OK);
  assert_int_equal(g.products, 20);
}

static void failures_name_their_step_and_code(void **state) {
  fake f = {.batch_max = 8, .start_code = -5};
  double s;
  int timed, code = 0;
  (void)state;
  assert_int_equal(device_timing_run(&ops, &f, NULL, 16, &s, &timed, &code),
                   DEVICE_TIMING_START_FAILED);
  assert_int_equal(code, -5);
  assert_int_equal(f.batches, 0);
  fake g = {.batch_max = 8, .fail_at_batch = 2, .fail_code = 700};
  assert_int_equal(device_timing_run(&ops, &g, NULL, 32, &s, &timed, &code),
                   DEVICE_TIMING_BATCH_FAILED);
  assert_int_equal(code, 700);
  assert_int_equal(g.batches, 2);
  /* zero products: started, no batch */
  fake h = {.batch_max = 8};
  assert_int_equal(device_timing_run(&ops, &h, NULL, 0, &s, &timed, &code), DEVICE_TIMING_OK);
  assert_int_equal(h.batches, 0);
  assert_true(s == 0.0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(runs_every_product_in_batches_and_sums_their_time),
      cmocka_unit_test(cancels_between_batches_never_after_the_last),
      cmocka_unit_test(failures_name_their_step_and_code),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
