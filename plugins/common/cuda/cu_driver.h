/*
 * cu_driver.h: what the CUDA backends (cuda_gemm, cublaslt) share: the
 * driver API loaded with dlopen (libcuda.so.1, or $CALHOST_CUDA_DRIVER:
 * tests point it at the toolkit's stub), NVIDIA devices as calhost devices
 * (identity, name, hardware = PCI bus id, limits), a target's device, the
 * MatMul workload in float32, float16 or bfloat16 (fp32 C), the key, and a
 * session's device matrices (padded with zeros) with the reference check
 * computed on the device (kernels.cu's reference kernel, double
 * accumulation). Errors go through matmul_set_error (../matmul.h).
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
  X(cuMemcpyDtoDAsync)                                                                             \
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
  X(cuStreamCreate)                                                                                \
  X(cuStreamDestroy)                                                                               \
  X(cuStreamSynchronize)                                                                           \
  X(cuStreamBeginCapture)                                                                          \
  X(cuStreamEndCapture)                                                                            \
  X(cuGraphInstantiate)                                                                            \
  X(cuGraphLaunch)                                                                                 \
  X(cuGraphExecDestroy)                                                                            \
  X(cuGraphDestroy)                                                                                \
  X(cuMemGetInfo)                                                                                  \
  X(cuGetErrorName)

typedef struct cu_api {
#define CU_MEMBER(f) __typeof__(f) *f;
  CU_FUNCS(CU_MEMBER)
#undef CU_MEMBER
} cu_api;

#define CU_DETAIL_COUNT 9

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
  uint64_t l2_bytes; /* CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE */
  char detail_values[CU_DETAIL_COUNT][512];
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
  /* Set by the backend before the first listing (may be NULL): what else
   * decides the code a device runs, for its identity ("nvrtc 13.0",
   * "cublasLt 130100"), and which libraries and headers were found, for
   * its "libraries" detail. Loads libraries with dlopen only (no cuInit). */
  void (*versions)(char *libs, size_t libs_cap, char *found, size_t found_cap);
} cu_devices;

/* Loads the driver and lists its devices into *d on the first call
 * (count 0 with the reason in d->why when there is no driver, the driver
 * is the toolkit's stub, or cuInit fails). CALHOST_OK or
 * CALHOST_NO_MEMORY. `log` (may be NULL) gets "BACKEND: no NVIDIA device
 * (WHY); LIBRARIES" once, at warning level, when there is none, else
 * "BACKEND: LIBRARIES" at info level: LIBRARIES is d->versions' account
 * of the libraries and headers found (also each device's "libraries"
 * detail). */
CUD_HIDDEN calhost_status cu_devices_init(cu_devices *d, const calhost_host_services *host,
                                          const char *backend);

/* Unloads the reference modules, releases the primary contexts, frees the
 * list. NULL-safe. The driver library stays loaded (libcuda does not
 * survive being unmapped with its threads running). */
CUD_HIDDEN void cu_devices_free(cu_devices *d);

/* The device's identity: "cuda:NAME/sm_MAJOR.MINOR/SMs N/mem N MiB/driver
 * MAJOR.MINOR[/LIBS]": the same on every GPU of one model, driver and
 * library versions (no UUID, no PCI id: a fleet of identical GPUs shares
 * profiles; see the guide). libs (may be NULL or ""): the versions of the
 * libraries that make the code ("nvrtc 13.0", "cublasLt 130100"), so that
 * an upgrade changes the exact key. */
CUD_HIDDEN void cu_identity(char *buf, size_t cap, const char *name, int cc_major, int cc_minor,
                            int sm_count, uint64_t memory, int driver_version, const char *libs);

/* The CUDA error's name ("CUDA_ERROR_OUT_OF_MEMORY"). */
CUD_HIDDEN const char *cu_error_name(const cu_api *api, CUresult r);

/* 1 when r is a sticky error: the context is corrupt and every later call
 * of the process fails the same way (an illegal address, a failed or
 * timed-out launch, a trap, an uncorrectable ECC error). */
CUD_HIDDEN int cu_error_sticky(CUresult r);

/* After a failed call: when e is sticky, logs "BACKEND: sticky CUDA error
 * NAME in WHAT: ending this process so that the host starts a fresh one"
 * at error level and calls cu_sticky_exit (default: _exit(CU_STICKY_EXIT
 * _STATUS)); calhost's calibrate restarts a child that ends inside a
 * workload and goes on with the next candidate. Otherwise returns. */
#define CU_STICKY_EXIT_STATUS 75
CUD_HIDDEN void cu_end_if_sticky(const cu_api *api, const calhost_host_services *host,
                                 const char *backend, const char *what, CUresult e);
/* The exit cu_end_if_sticky calls (tests replace it). */
CUD_HIDDEN extern void (*cu_sticky_exit)(int status);

/* cuCtxSetCurrent(dev->ctx), its result checked: CUDA_SUCCESS, or the
 * error after set_error ("BACKEND: making device 'NAME' current: ERR")
 * and cu_end_if_sticky. */
CUD_HIDDEN CUresult cu_make_current(const cu_api *api, const calhost_host_services *host,
                                    const char *backend, const cu_device *dev);

/* The instance struct a CUDA backend's instance starts with. */
typedef struct cu_instance {
  matmul_instance mm; /* host, backend name */
  cu_devices devs;
  char key_dtype[16];
  /* non-empty: the portable key gets structure "library" = this (cublaslt:
   * its policy is valid for one cuBLASLt version only) */
  char library_key[32];
#define CU_KEY_PROPS (MATMUL_STRUCTURE_MAX + 1)
  calhost_property key_props[CU_KEY_PROPS]; /* the structure (mm.shape's), then library */
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
 * shape {M, N, K} each in [1, 65535] (the reference grid), accumulate=0|1,
 * and the MatMul structure (../matmul.h: transposes, alpha, bias with beta,
 * batches) in st, its m, n, k and accumulate those above. structured: a
 * property other than accumulate differs from its default; such a session
 * keeps its inputs on the host too (st's matmul_data) and is checked
 * against the shared reference (matmul_check) instead of the device's. */
typedef struct cu_shape {
  size_t m, n, k;
  int accumulate;
  cgemm_dtype dtype;
  matmul_shape st;
  int structured;
} cu_shape;

/* Parses w into *s: the properties with the shared parser
 * (matmul_parse_workload) under the backend's MATMUL_CAN_ bits `caps`,
 * which declines the structures the backend does not run, naming the
 * property; a structured workload must also fit the shared reference's
 * limits. CALHOST_UNSUPPORTED / CALHOST_INVALID_ARGUMENT after set_error
 * otherwise. */
CUD_HIDDEN calhost_status cu_parse_workload(const calhost_host_services *host, const char *backend,
                                            unsigned caps, const calhost_workload *w, cu_shape *s);

/* The device a target names (device 0 without one), NULL after set_error
 * ("no NVIDIA device ...", index out of range, identity changed). */
CUD_HIDDEN cu_device *cu_target_device(cu_devices *d, const calhost_target *t,
                                       const calhost_host_services *host, const char *backend);

/* build_key: exact key = (digest, device identity, 1 thread); portable =
 * dtype, m, n, k, accumulate, then the structure's non-default properties
 * (matmul_structure_fill's, in name order), then library when set. */
CUD_HIDDEN calhost_status cu_instance_build_key(calhost_plugin_instance *inst,
                                                const calhost_workload *w, const calhost_target *t,
                                                calhost_built_key *out);

/* Cold timing: how many copies of a session's A and B to rotate through
 * so that a product never finds its operands in the L2 cache left by the
 * one before: enough sets to span twice the L2 (ceil(2 l2 / set_bytes)),
 * at least 1, at most CU_ROTATION_MAX and at most budget / set_bytes
 * (the device memory the copies may take). A workload whose A and B
 * already exceed twice the L2 gets 1 (no copies). */
#define CU_ROTATION_MAX 256u
CUD_HIDDEN uint32_t cu_rotation_sets(uint64_t l2_bytes, uint64_t set_bytes, uint64_t budget);

/* Launches captured in one CUDA graph: at least CU_GRAPH_MIN launches and
 * a whole number of rotations of `sets` (every set once per rotation), at
 * most CU_GRAPH_MAX. */
#define CU_GRAPH_MIN 32u
#define CU_GRAPH_MAX 1024u
CUD_HIDDEN uint32_t cu_graph_batch(uint32_t sets);

/* Time-based warm-up: calls step(ctx) until clock(ctx) has advanced by
 * `seconds` since the first call (at least one step, at most max_steps),
 * so that the GPU's clocks have ramped up after an idle pause (a compile,
 * the host's work between candidates). Returns the steps taken, or -1
 * when a step failed (its CUresult in *error). */
#define CU_WARMUP_SECONDS 0.1
CUD_HIDDEN long cu_warmup(double seconds, uint32_t max_steps, double (*clock)(void *),
                          CUresult (*step)(void *), void *ctx, CUresult *error);

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
  CUstream stream;            /* created: every launch and event of the session */
  uint32_t sets;              /* rotated copies of A and B (cu_rotation_sets), >= 1 */
  CUdeviceptr *rot_a, *rot_b; /* sets entries; [0] is a and b */
  CUgraphExec graph;          /* the captured batch of the prepared candidate, or NULL */
  int no_graph;               /* capturing failed for this candidate: launched one by one */
  uint32_t graph_launches;    /* launches in it (cu_graph_batch) */
  uint32_t next_set;          /* the set of the next product */
  double *ref, *mag;          /* host copies of R and G */
  float *c0_host;             /* for the check of accumulating runs */
  /* The matrices as stored (shape.st): A batch_a matrices of a_rows x
   * a_cols (m x k, or k x m with trans_a) padded to a_ld columns and
   * a_stride elements each; B likewise; C batch matrices of mp x np
   * (c_stride = mp * np); plain sessions: one each, mp x kp, kp x np. */
  size_t a_ld, b_ld, a_stride, b_stride, c_stride;
  CUdeviceptr bias; /* structured with a bias: raw bias broadcast, laid out as C */
  matmul_data data; /* structured: the host inputs (rounded to the dtype) and reference */
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

/* Before a run: C = C0 (accumulating) or nothing, a copy on the
 * session's stream (ordered before its products; the legacy stream would
 * not be, the session's stream being non-blocking). CUresult. */
CUD_HIDDEN CUresult cu_session_reset(cu_session *s);

/* Makes sure s->work holds `bytes`. CUresult. */
CUD_HIDDEN CUresult cu_session_work(cu_session *s, size_t bytes);

/* check(): reads C back and compares it with C0 + iterations * A*B within
 * 32 u sqrt(K + it) (t sum|a||b| + |C0|), u = 2^-24, t = it when accumulating, else 1. */
CUD_HIDDEN calhost_status cu_session_check(calhost_session *s, char *err, size_t cap);

/* The sum of the elapsed times of event pairs in seconds, -1 on failure. */
CUD_HIDDEN double cu_events_seconds(const cu_api *api, CUevent start, CUevent stop);

/* One product on s->stream with operand set `set` (s->rot_a[set],
 * s->rot_b[set]): the backend's kernel launch or library call. */
typedef CUresult (*cu_launch_fn)(cu_session *s, uint32_t set, void *ctx);

/* After a successful prepare: drops the graph of the previous candidate
 * (and its no_graph mark) and warms the GPU up by time (cu_warmup, CU_WARMUP_SECONDS of
 * products on the stream). CUDA_SUCCESS or the failing call's error. */
CUD_HIDDEN CUresult cu_session_prepared(cu_session *s, cu_launch_fn launch, void *ctx);

/* `iterations` products timed on the device: C reset first (outside the
 * events), then whole graphs of s->graph_launches products (captured on
 * first use, when iterations hold one) each between an event pair, the
 * rest launched one by one in batches of at most CU_GRAPH_MIN between
 * pairs (also every product when capturing failed: a warning, then
 * s->no_graph); *seconds the sum of the pairs. The operand sets rotate
 * across products. CUDA_SUCCESS, CUDA_ERROR_NOT_READY when the host
 * cancelled between batches, or the failing call's error. start/stop are
 * the session's events. The loop is device_timing_run's (../device_timing.h),
 * this the CUDA side of it. */
CUD_HIDDEN CUresult cu_session_time(cu_session *s, cu_launch_fn launch, void *ctx,
                                    uint32_t iterations, CUevent start, CUevent stop,
                                    double *seconds);

/* Drops s's graph (NULL-safe). */
CUD_HIDDEN void cu_session_drop_graph(cu_session *s);

#endif /* CALHOST_CU_DRIVER_H */
