/*
 * ocl_device.h: what the OpenCL backends (opencl_gemm, clblast) share:
 * creating an instance of a backend without settings, enumerating OpenCL
 * devices lazily into calhost devices (identity, display name, kind,
 * hardware, limits), resolving a calhost_target to a device, one context
 * and profiling queue per device, a MatMul session's device buffers
 * (upload, reset, read-back check), and OpenCL error names. Errors go
 * through matmul_set_error (../cpu_gemm/matmul.h, compiled into both).
 * Internal (hidden).
 *
 * Nothing here runs before the first call that needs a device: OpenCL
 * implementations (PoCL) start threads when they initialise, and the host
 * forks after creating instances that only validate policies.
 */
#ifndef CALHOST_OCL_DEVICE_H
#define CALHOST_OCL_DEVICE_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <calhost/plugin.h>
#include <stddef.h>
#include <stdint.h>

#include "matmul.h"

#if defined(__GNUC__)
#define OCL_HIDDEN __attribute__((visibility("hidden")))
#else
#define OCL_HIDDEN
#endif

#define OCL_DETAIL_COUNT 6

typedef struct ocl_device {
  cl_platform_id platform;
  cl_device_id id;
  char identity[640];
  char name[64];
  char hardware[160];
  uint32_t kind; /* calhost_device_kind */
  size_t max_work_group;
  size_t max_item[3];
  cl_ulong local_mem;
  cl_ulong global_mem;
  cl_ulong max_alloc;
  cl_uint compute_units;
  cl_uint clock_mhz;
  char driver[96];
  char detail_values[OCL_DETAIL_COUNT][128];
  calhost_property details[OCL_DETAIL_COUNT];
  /* created on first use, released by ocl_devices_free */
  cl_context context;
  cl_command_queue queue; /* in order, profiling enabled */
} ocl_device;

typedef struct ocl_devices {
  int initialised; /* 1 after the first ocl_devices_init, even when none */
  ocl_device *items;
  uint32_t count;
} ocl_devices;

/* Enumerates every device of every OpenCL platform (platform order, then
 * device order) into *d on the first call; later calls return at once.
 * Returns CALHOST_OK (count may be 0), or CALHOST_NO_MEMORY. */
OCL_HIDDEN calhost_status ocl_devices_init(ocl_devices *d);

/* Releases the queues, contexts and the list. NULL-safe, idempotent. */
OCL_HIDDEN void ocl_devices_free(ocl_devices *d);

/* device_count for a backend listing *d: initialises the list, then sets
 * *count. CALHOST_INVALID_ARGUMENT when count is NULL, CALHOST_NO_MEMORY
 * when the list cannot be made. */
OCL_HIDDEN calhost_status ocl_device_count(ocl_devices *d, uint32_t *count);

/* list_device for a backend listing *d: initialises the list, then fills a
 * calhost_device_info for device `position` (pointers into *d, valid until
 * ocl_devices_free). CALHOST_INVALID_ARGUMENT for a NULL out or a position
 * past the list, CALHOST_NO_MEMORY when the list cannot be made. */
OCL_HIDDEN calhost_status ocl_device_info(ocl_devices *d, uint32_t position,
                                          calhost_device_info *out);

/* The device a target names (ABI 2 device fields: index, identity checked),
 * or device 0 when the target names none (an ABI 1 host, a CPU target).
 * NULL after host->set_error (prefixed with backend) when there is no such
 * device, no device at all, or the identity no longer matches. Initialises
 * the list. */
OCL_HIDDEN ocl_device *ocl_target_device(ocl_devices *d, const calhost_target *t,
                                         const calhost_host_services *host, const char *backend);

/* Creates dev's context and profiling queue if not yet done. Returns
 * CALHOST_OK or CALHOST_ERROR after host->set_error. */
OCL_HIDDEN calhost_status ocl_device_open(ocl_device *dev, const calhost_host_services *host,
                                          const char *backend);

/* The name of an OpenCL error code ("CL_OUT_OF_RESOURCES"), or "CL_ERROR". */
OCL_HIDDEN const char *ocl_error_name(cl_int err);

/* The create() of a backend that takes no settings: CALHOST_INVALID_ARGUMENT
 * for a NULL out, settings NULL with a count, or any setting (after
 * host->set_error "BACKEND: unknown setting 'NAME' (this backend has
 * none)"); else sets *out = NULL and returns `size` zeroed bytes (NULL with
 * CALHOST_NO_MEMORY), which the caller fills and hands out. *status tells
 * which. */
OCL_HIDDEN void *ocl_instance_alloc(const calhost_host_services *host, const char *backend,
                                    const calhost_property *settings, size_t setting_count,
                                    calhost_plugin_instance **out, size_t size,
                                    calhost_status *status);

/* A MatMul session's matrices on the device: A (mp x kp), B (kp x np), C
 * and, when accumulating, C0 (mp x np), each the host matrix padded with
 * zeros to those sizes; staging (mp x np floats, only when padded) is where
 * C is read back. */
typedef struct ocl_matmul_buffers {
  size_t mp, np, kp;
  cl_mem a, b, c, c0;
  float *staging;
} ocl_matmul_buffers;

/* Creates b's buffers on dev for d's matrices padded to mp, np, kp (each at
 * least the shape's m, n, k): uploads A, B and C0, allocates C. Returns
 * CALHOST_OK, or CALHOST_NO_MEMORY after host->set_error ("BACKEND:
 * allocating device buffers: CL_...") with what was made left in *b for
 * ocl_matmul_buffers_release. */
OCL_HIDDEN calhost_status ocl_matmul_buffers_create(ocl_matmul_buffers *b, const ocl_device *dev,
                                                    const matmul_data *d, size_t mp, size_t np,
                                                    size_t kp, const calhost_host_services *host,
                                                    const char *backend);

/* Releases b's buffers and staging; safe on a zeroed or released b. */
OCL_HIDDEN void ocl_matmul_buffers_release(ocl_matmul_buffers *b);

/* Before a run: enqueues the copy of C0 into C when accumulating (every
 * run starts from the same C). Returns the OpenCL status (CL_SUCCESS when
 * there is nothing to copy). */
OCL_HIDDEN cl_int ocl_matmul_buffers_reset(const ocl_matmul_buffers *b, const ocl_device *dev);

/* check() of a device MatMul session: when iterations > 0, reads C back
 * into d->c (dropping the padding), then matmul_check. Returns CALHOST_OK,
 * or CALHOST_CHECK_FAILED with the reason ("reading C back: CL_..." or the
 * bad element) in err. */
OCL_HIDDEN calhost_status ocl_matmul_check(const ocl_matmul_buffers *b, const ocl_device *dev,
                                           matmul_data *d, uint32_t iterations, char *err,
                                           size_t cap);

/* Sum of END - START of the events, in seconds (0 when profiling info is
 * missing: *ok set to 0). Releases the events. */
OCL_HIDDEN double ocl_events_seconds(cl_event *events, uint32_t count, int *ok);

#endif /* CALHOST_OCL_DEVICE_H */
