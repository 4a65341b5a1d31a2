/*
 * device_timing.h: the one timed run loop of the device backends
 * (opencl_gemm, clblast, cuda_gemm, cublaslt; linked into each, hidden):
 * start (reset C, and what the backend does once per run) -> batches of
 * products, each waited for and timed on the device -> a cancellation
 * check between batches -> the sum of the device seconds. The device
 * specifics are the callbacks of a device_timing_ops.
 */
#ifndef CALHOST_PLUGINS_DEVICE_TIMING_H
#define CALHOST_PLUGINS_DEVICE_TIMING_H

#include <calhost/plugin.h>
#include <stdint.h>

#if defined(__GNUC__)
#define DEVICE_TIMING_HIDDEN __attribute__((visibility("hidden")))
#else
#define DEVICE_TIMING_HIDDEN
#endif

/* A backend's part of the loop; each callback gets the run's ctx. Error
 * codes are the backend's own (cl_int, CUresult), nonzero. */
typedef struct device_timing_ops {
  /* Before the first batch of a run of `iterations` products: makes the run
   * start from the same C (when accumulating) and prepares what the batches
   * reuse. 0, or the backend's error code. */
  int (*start)(void *ctx, uint32_t iterations);
  /* The size of the next batch (1..remaining) when `remaining` (> 0)
   * products are left. */
  uint32_t (*batch_size)(void *ctx, uint32_t remaining);
  /* Runs `count` products and waits until they finished: adds their device
   * time to *seconds, or sets *timed = 0 when the device did not time them.
   * 0, or the backend's error code (the batch's timing is still added). */
  int (*batch)(void *ctx, uint32_t count, double *seconds, int *timed);
} device_timing_ops;

typedef enum device_timing_status {
  DEVICE_TIMING_OK = 0,
  DEVICE_TIMING_CANCELLED,    /* host->is_cancelled said so between two batches */
  DEVICE_TIMING_START_FAILED, /* start returned *code */
  DEVICE_TIMING_BATCH_FAILED, /* a batch returned *code */
} device_timing_status;

/* Runs `iterations` products through ops: start, then batches of
 * batch_size until all ran, asking host (may be NULL) whether to stop
 * between two batches (never after the last). *seconds is the sum of the
 * batches' device time so far (also when cancelled or failed), *timed 1
 * unless a batch said it was untimed, *code the backend's error (0 when
 * none). */
DEVICE_TIMING_HIDDEN device_timing_status device_timing_run(const device_timing_ops *ops, void *ctx,
                                                            const calhost_host_services *host,
                                                            uint32_t iterations, double *seconds,
                                                            int *timed, int *code);

#endif /* CALHOST_PLUGINS_DEVICE_TIMING_H */
