/*
 * ocl_device.h: what the OpenCL backends (opencl_gemm, clblast) share:
 * enumerating OpenCL devices lazily into calhost devices (identity, display
 * name, kind, hardware, limits), resolving a calhost_target to a device, one
 * context and profiling queue per device, OpenCL error names, and the
 * instance and session both backends' structs start with (ocl_instance,
 * ocl_session) with the vtable entries that serve both: create without
 * settings, device_count, list_device, build_key, the start of
 * open_session, the device buffers (padded upload, reset, read-back) and
 * check. Errors go through matmul_set_error (../common/matmul.h,
 * compiled into both).
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

/* Sum of END - START of the events, in seconds (0 when profiling info is
 * missing: *ok set to 0). Releases the events. */
OCL_HIDDEN double ocl_events_seconds(cl_event *events, uint32_t count, int *ok);

/* What an OpenCL backend's instance struct holds as its FIRST member, so
 * that the ocl_instance_ entries serve both backends (a
 * calhost_plugin_instance * of such a backend points to it). */
typedef struct ocl_instance {
  matmul_instance mm; /* first: host, name, the last key's properties */
  ocl_devices devs;
} ocl_instance;

/* The create() of a backend that takes no settings: CALHOST_INVALID_ARGUMENT
 * for a NULL out, settings NULL with a count, or any setting (after
 * host->set_error "BACKEND: unknown setting 'NAME' (this backend has
 * none)"); CALHOST_NO_MEMORY; else CALHOST_OK with *out = `size` zeroed
 * bytes (the backend's instance, destroyed by its destroy) whose
 * ocl_instance has host and backend set. */
OCL_HIDDEN calhost_status ocl_instance_create(const calhost_host_services *host,
                                              const char *backend, const calhost_property *settings,
                                              size_t setting_count, calhost_plugin_instance **out,
                                              size_t size);

/* The device_count entry: lists the devices (once), then their count.
 * CALHOST_INVALID_ARGUMENT for a NULL argument, CALHOST_NO_MEMORY when the
 * list cannot be made. */
OCL_HIDDEN calhost_status ocl_instance_device_count(calhost_plugin_instance *inst, uint32_t *count);

/* The list_device entry: lists the devices (once), then describes device
 * `position` (ocl_device_info). */
OCL_HIDDEN calhost_status ocl_instance_list_device(calhost_plugin_instance *inst, uint32_t position,
                                                   calhost_device_info *out);

/* The build_key entry: matmul_build_key, then the target's device
 * (ocl_target_device): the exact key's processor is the device's identity
 * (which includes its driver version), its thread count 1 (one host thread
 * feeds the device). Portable key: the MatMul structure
 * (matmul_structure_fill). */
OCL_HIDDEN calhost_status ocl_instance_build_key(calhost_plugin_instance *inst,
                                                 const calhost_workload *w, const calhost_target *t,
                                                 calhost_built_key *out);

/* A MatMul session's matrices on the device, each host matrix padded with
 * zeros, the matrices of a batch back to back (strides the padded sizes):
 * the batch_a A (mp x kp, or kp x mp with trans_a), the batch_b B (kp x np,
 * or np x kp with trans_b), the batch C and, when accumulating, C0 (mp x np
 * each); bias (with a bias only) either the raw values padded to their form
 * (1, np, mp or mp x np floats) or beta*bias expanded to every output
 * (batch x mp x np); staging (only when padded) is where C is read back. */
typedef struct ocl_matmul_buffers {
  size_t mp, np, kp;
  cl_mem a, b, c, c0, bias;
  float *staging;
} ocl_matmul_buffers;

/* What an OpenCL backend's session struct holds as its FIRST member: the
 * MatMul session (data, candidates, last run), the device and the device
 * buffers. */
typedef struct ocl_session {
  matmul_session mm;
  ocl_device *dev;
  ocl_matmul_buffers buf;
} ocl_session;

/* The common start of open_session: matmul_session_alloc, then the target's
 * device (ocl_target_device, CALHOST_UNSUPPORTED) with its context and
 * queue (ocl_device_open). Returns the session (`size` bytes starting with
 * an ocl_session, dev set; the caller's to free) with *status = CALHOST_OK,
 * or NULL with the failure in *status after host->set_error. */
OCL_HIDDEN void *ocl_session_alloc(calhost_plugin_instance *inst, const calhost_workload *w,
                                   const calhost_target *t, calhost_session **out, size_t size,
                                   matmul_shape *shape, calhost_status *status);

/* Fills s's matrices for shape (matmul_data_init: inputs and reference),
 * then creates s->buf on s->dev padded to mp, np, kp (each at least the
 * shape's m, n, k): uploads A, B, C0 and the bias (expanded when
 * bias_expanded, else raw), allocates C. Returns CALHOST_OK,
 * or CALHOST_NO_MEMORY after set_error ("BACKEND: out of memory opening a
 * MxNxK session" or "BACKEND: allocating device buffers: CL_...") with what
 * was made left for ocl_session_release and matmul_session_close. */
OCL_HIDDEN calhost_status ocl_session_data(ocl_session *s, const matmul_shape *shape, size_t mp,
                                           size_t np, size_t kp, int bias_expanded,
                                           const char *backend);

/* Releases s's device buffers; safe on a zeroed or released s (the
 * caller then closes it with matmul_session_close). */
OCL_HIDDEN void ocl_session_release(ocl_session *s);

/* Before a run: enqueues the copy of C0 into C when accumulating (every
 * run starts from the same C). Returns the OpenCL status (CL_SUCCESS when
 * there is nothing to copy). */
OCL_HIDDEN cl_int ocl_session_reset(const ocl_session *s);

/* The check entry: when the last run completed iterations, reads C back
 * into the host matrix (dropping the padding), then matmul_check. Returns
 * CALHOST_OK, or CALHOST_CHECK_FAILED with the reason ("reading C back:
 * CL_..." or the bad element) in err. */
OCL_HIDDEN calhost_status ocl_session_check(calhost_session *s, char *err, size_t cap);

#endif /* CALHOST_OCL_DEVICE_H */
