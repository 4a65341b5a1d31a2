/*
 * ocl_device.h: what the OpenCL backends (opencl_gemm, clblast) share:
 * enumerating OpenCL devices lazily into calhost devices (identity, display
 * name, kind, hardware, limits), resolving a calhost_target to a device, one
 * context and profiling queue per device, and OpenCL error names.
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

/* Fills a calhost_device_info for device `position` (pointers into *d,
 * valid until ocl_devices_free). */
OCL_HIDDEN calhost_status ocl_device_info(const ocl_devices *d, uint32_t position,
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

/* printf-style host->set_error; host may be NULL. */
OCL_HIDDEN void ocl_set_error(const calhost_host_services *host, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Sum of END - START of the events, in seconds (0 when profiling info is
 * missing: *ok set to 0). Releases the events. */
OCL_HIDDEN double ocl_events_seconds(cl_event *events, uint32_t count, int *ok);

#endif /* CALHOST_OCL_DEVICE_H */
