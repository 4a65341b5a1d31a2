/*
 * cu_driver.h: what the CUDA backends (cuda_gemm, cublaslt) share: the
 * driver API loaded with dlopen (libcuda.so.1, or $CALHOST_CUDA_DRIVER:
 * tests point it at the toolkit's stub), NVIDIA devices as calhost devices
 * (identity, name, hardware = PCI bus id, limits), a target's device, the
 * MatMul workload in float32, float16 or bfloat16 (fp32 C), the key, and a
 * session's device matrices (padded with zeros) with the reference check
 * computed on the device (kernels.cu's reference kernel, double
 * accumulation). Errors go through matmul_set_error (../common/matmul.h).
 * Internal (hidden).
 *
 * Nothing here touches the driver before the first call that needs a
 * device (device_count, build_key, open_session): cuInit starts threads,
 * and the host forks after creating instances.
 */
#ifndef CALHOST_CU_DRIVER_H
#define CALHOST_CU_DRIVER_H

#include <calhost/plugin.h>
#include <cuda.h> /* types and constants only: every call goes through cu_api */
#include <stddef.h>
#include <stdint.h>

#include "cgemm.h"
#include "matmul.h"

#if defined(__GNUC__)
#define CUD_HIDDEN __attribute__((visibility("hidden")))
#else
#define CUD_HIDDEN
#endif

/* The driver functions the backends call (names after cuda.h's macros:
 * cuMemAlloc is cuMemAlloc_v2, ...). */
#define CU_FUNCS(X)                                                                                \
  X(cuInit)                                                                                        \
  X(cuDriverGetVersion)                                                                            \
  X(cuDeviceGetCount)                                                                              \
  X(cuDeviceGet)                                                                                   \
  X(cuDeviceGetName)                                                                               \
  X(cuDeviceGetAttribute)                                                                          \
  X(cuDeviceTotalMem)                                                                              \
  X(cuDeviceGetUuid)                                                                               \
  X(cuDevicePrimaryCtxRetain)                                                                      \
  X(cuDevicePrimaryCtxRelease)                                                                     \
  X(cuCtxSetCurrent)                                                                               \
  X(cuCtxSynchronize)                                                                              \
  X(cuMemAlloc)                                                                                    \
  X(cuMemFree)                                                                                     \
  X(cuMemcpyHtoD)                                                                                  \
  X(cuMemcpyDtoH)                                                                                  \
  X(cuMemcpyDtoD)                                                                                  \
  X(cuModuleLoadData)                                                                              \
  X(cuModuleUnload)                                                                                \
  X(cuModuleGetFunction)                                                                           \
  X(cuFuncSetAttribute)                                                                            \
  X(cuFuncGetAttribute)                                                                            \
  X(cuLaunchKernel)                                                                                \
  X(cuEventCreate)                                                                                 \
  X(cuEventDestroy)                                                                                \
  X(cuEventRecord)                                                                                 \
  X(cuEventSynchronize)                                                                            \
  X(cuEventElapsedTime)                                                                            \
  X(cuGetErrorName)

typedef struct cu_api {
#define CU_MEMBER(f) __typeof__(f) *f;
  CU_FUNCS(CU_MEMBER)
#undef CU_MEMBER
} cu_api;

#define CU_DETAIL_COUNT 7

typedef struct cu_device {
  CUdevice dev;
  uint32_t ordinal;
  char name[96];
  char identity[320];
  char hardware[80];
  char uuid[48];
  cgemm_limits limits;
  int sm_count;
  uint64_t memory;
  int driver_version;
  char detail_values[CU_DETAIL_COUNT][64];
  calhost_property details[CU_DETAIL_COUNT];
  CUcontext ctx;         /* the primary context, retained on first use */
  CUmodule reference[3]; /* the reference kernel per cgemm_dtype, loaded on first use */
} cu_device;

typedef struct cu_devices {
  int initialised;
  const cu_api *api; /* NULL: no driver (why says so) */
  char why[200];
  cu_device *items;
  uint32_t count;
} cu_devices;

/* Loads the driver and lists its devices into *d on the first call
 * (count 0 with the reason in d->why when there is no driver, the driver
 * is the toolkit's stub, or cuInit fails). CALHOST_OK or
 * CALHOST_NO_MEMORY. `log` (may be NULL) gets "BACKEND: no NVIDIA device
 * (WHY)" once, at info level, when there is none. */
CUD_HIDDEN calhost_status cu_devices_init(cu_devices *d, const calhost_host_services *host,
                                          const char *backend);

/* Unloads the reference modules, releases the primary contexts, frees the
 * list. NULL-safe. The driver library stays loaded (libcuda does not
 * survive being unmapped with its threads running). */
CUD_HIDDEN void cu_devices_free(cu_devices *d);

/* The device's identity: "cuda:NAME/sm_MAJOR.MINOR/SMs N/mem N MiB/driver
 * MAJOR.MINOR": the same on every GPU of one model and driver (no UUID, no
 * PCI id: a fleet of identical GPUs shares profiles; see the guide). */
CUD_HIDDEN void cu_identity(char *buf, size_t cap, const char *name, int cc_major, int cc_minor,
                            int sm_count, uint64_t memory, int driver_version);

/* The CUDA error's name ("CUDA_ERROR_OUT_OF_MEMORY"). */
CUD_HIDDEN const char *cu_error_name(const cu_api *api, CUresult r);

/* The instance struct a CUDA backend's instance starts with. */
typedef struct cu_instance {
  matmul_instance mm; /* host, backend name */
  cu_devices devs;
  char key_dtype[16], key_m[24], key_n[24], key_k[24];
  calhost_property key_props[5];
} cu_instance;

/* create() of a backend without settings (as ocl_instance_create). */
CUD_HIDDEN calhost_status cu_instance_create(const calhost_host_services *host, const char *backend,
                                             const calhost_property *settings, size_t count,
                                             calhost_plugin_instance **out, size_t size);
/* destroy(): cu_devices_free, then free. */
CUD_HIDDEN void cu_instance_destroy(calhost_plugin_instance *inst);
CUD_HIDDEN calhost_status cu_instance_device_count(calhost_plugin_instance *inst, uint32_t *count);
CUD_HIDDEN calhost_status cu_instance_list_device(calhost_plugin_instance *inst, uint32_t position,
                                                  calhost_device_info *out);

/* A CUDA MatMul: dtype float32, float16 or bfloat16 (A and B; C fp32),
 * shape {M, N, K} each in [1, 65535] (the reference grid), accumulate=0|1. */
typedef struct cu_shape {
  size_t m, n, k;
  int accumulate;
  cgemm_dtype dtype;
} cu_shape;

/* Parses w into *s; CALHOST_UNSUPPORTED / CALHOST_INVALID_ARGUMENT after
 * set_error otherwise. */
CUD_HIDDEN calhost_status cu_parse_workload(const calhost_host_services *host, const char *backend,
                                            const calhost_workload *w, cu_shape *s);

/* The device a target names (device 0 without one), NULL after set_error
 * ("no NVIDIA device ...", index out of range, identity changed). */
CUD_HIDDEN cu_device *cu_target_device(cu_devices *d, const calhost_target *t,
                                       const calhost_host_services *host, const char *backend);

/* build_key: exact key = (digest, device identity, 1 thread); portable =
 * dtype, m, n, k, accumulate. */
CUD_HIDDEN calhost_status cu_instance_build_key(calhost_plugin_instance *inst,
                                                const calhost_workload *w, const calhost_target *t,
                                                calhost_built_key *out);

/* A session's device matrices: A (mp x kp) and B (kp x np) of the dtype,
 * C and C0 (when accumulating) fp32 mp x np, zero-padded copies of
 * deterministic inputs in [-1, 1) (rounded to the dtype); R and G (m x n
 * doubles) the reference and sum |a||b| from the device's reference
 * kernel. */
typedef struct cu_session {
  matmul_session mm; /* host, candidates, last_iterations (mm.data unused) */
  cu_instance *inst;
  cu_device *dev;
  cu_shape shape;
  size_t mp, np, kp;
  CUdeviceptr a, b, c, c0, work; /* work: split-K slices, grown on demand */
  size_t work_bytes;
  double *ref, *mag; /* host copies of R and G */
  float *c0_host;    /* for the check of accumulating runs */
} cu_session;

/* open_session's common part: parses w, finds the target's device, makes
 * its context current, allocates `size` zeroed bytes (a struct starting
 * with cu_session), uploads the matrices padded to multiples of pad_mn and
 * pad_k, and runs the reference. NULL with *status after set_error. */
CUD_HIDDEN void *cu_session_open(calhost_plugin_instance *inst, const calhost_workload *w,
                                 const calhost_target *t, size_t size, size_t pad_mn, size_t pad_k,
                                 calhost_status *status);

/* Frees the device buffers and host copies (not s itself). */
CUD_HIDDEN void cu_session_release(cu_session *s);

/* Before a run: C = C0 (accumulating) or nothing. CUresult. */
CUD_HIDDEN CUresult cu_session_reset(cu_session *s);

/* Makes sure s->work holds `bytes`. CUresult. */
CUD_HIDDEN CUresult cu_session_work(cu_session *s, size_t bytes);

/* check(): reads C back and compares it with C0 + iterations * A*B within
 * 32 u sqrt(K + it) (t sum|a||b| + |C0|), u = 2^-24, t = it when accumulating, else 1. */
CUD_HIDDEN calhost_status cu_session_check(calhost_session *s, char *err, size_t cap);

/* The sum of the elapsed times of event pairs in seconds, -1 on failure. */
CUD_HIDDEN double cu_events_seconds(const cu_api *api, CUevent start, CUevent stop);

#endif /* CALHOST_CU_DRIVER_H */
