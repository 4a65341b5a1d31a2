/*
 * device_timing.c: the device backends' timed run loop (see
 * device_timing.h).
 */
#include "device_timing.h"

#include "matmul.h"

device_timing_status device_timing_run(const device_timing_ops *ops, void *ctx,
                                       const calhost_host_services *host, uint32_t iterations,
                                       double *seconds, int *timed, int *code) {
  *seconds = 0;
  *timed = 1;
  if ((*code = ops->start(ctx, iterations)) != 0)
    return DEVICE_TIMING_START_FAILED;
  for (uint32_t done = 0; done < iterations;) {
    uint32_t batch = ops->batch_size(ctx, iterations - done);
    if (batch == 0 || batch > iterations - done)
      batch = iterations - done;
    if ((*code = ops->batch(ctx, batch, seconds, timed)) != 0)
      return DEVICE_TIMING_BATCH_FAILED;
    done += batch;
    if (done < iterations && matmul_cancelled(host))
      return DEVICE_TIMING_CANCELLED;
  }
  return DEVICE_TIMING_OK;
}
