/*
 * ocl_device.c: instance creation, OpenCL device enumeration, identities,
 * per-device contexts and MatMul device buffers shared by the opencl_gemm
 * and clblast backends (see ocl_device.h).
 */
#include "ocl_device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ocl_error_name(cl_int err) {
  switch (err) {
#define N(x)                                                                                       \
  case x:                                                                                          \
    return #x;
    N(CL_SUCCESS)
    N(CL_DEVICE_NOT_FOUND)
    N(CL_DEVICE_NOT_AVAILABLE)
    N(CL_COMPILER_NOT_AVAILABLE)
    N(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    N(CL_OUT_OF_RESOURCES)
    N(CL_OUT_OF_HOST_MEMORY)
    N(CL_PROFILING_INFO_NOT_AVAILABLE)
    N(CL_BUILD_PROGRAM_FAILURE)
    N(CL_INVALID_VALUE)
    N(CL_INVALID_DEVICE)
    N(CL_INVALID_CONTEXT)
    N(CL_INVALID_COMMAND_QUEUE)
    N(CL_INVALID_MEM_OBJECT)
    N(CL_INVALID_BUILD_OPTIONS)
    N(CL_INVALID_PROGRAM_EXECUTABLE)
    N(CL_INVALID_KERNEL_NAME)
    N(CL_INVALID_KERNEL_ARGS)
    N(CL_INVALID_WORK_GROUP_SIZE)
    N(CL_INVALID_WORK_ITEM_SIZE)
    N(CL_INVALID_GLOBAL_WORK_SIZE)
    N(CL_INVALID_BUFFER_SIZE)
#undef N
  }
  return "CL_ERROR";
}

/* Copies an info string into buf as one printable line: control bytes
 * become '?', '/' becomes '_' (it separates the identity's fields), leading
 * and trailing blanks are dropped. */
static void clean(char *buf, size_t cap, const char *s) {
  size_t n = 0;
  while (*s == ' ')
    s++;
  for (; *s && n + 1 < cap; s++)
    buf[n++] = ((unsigned char)*s < 0x20 || *s == 0x7f) ? '?' : *s == '/' ? '_' : *s;
  while (n && buf[n - 1] == ' ')
    n--;
  buf[n] = '\0';
}

/* A device string (platform NULL) or a platform string (device ignored)
 * as one clean line; "unknown" when OpenCL does not answer. */
static void info_string(cl_platform_id platform, cl_device_id device, cl_uint what, char *buf,
                        size_t cap) {
  char raw[512] = "";
  cl_int e = platform ? clGetPlatformInfo(platform, what, sizeof raw - 1, raw, NULL)
                      : clGetDeviceInfo(device, what, sizeof raw - 1, raw, NULL);
  if (e != CL_SUCCESS)
    snprintf(raw, sizeof raw, "unknown");
  raw[sizeof raw - 1] = '\0';
  clean(buf, cap, raw);
}

/* Fills everything but platform/id from the device's info. */
static void describe(ocl_device *d) {
  char vendor[128], name[160], version[128], platform[128], platform_version[128];
  cl_device_type type = 0;
  cl_uint vendor_id = 0;
  info_string(NULL, d->id, CL_DEVICE_VENDOR, vendor, sizeof vendor);
  info_string(NULL, d->id, CL_DEVICE_NAME, name, sizeof name);
  info_string(NULL, d->id, CL_DEVICE_VERSION, version, sizeof version);
  info_string(NULL, d->id, CL_DRIVER_VERSION, d->driver, sizeof d->driver);
  info_string(d->platform, NULL, CL_PLATFORM_NAME, platform, sizeof platform);
  info_string(d->platform, NULL, CL_PLATFORM_VERSION, platform_version, sizeof platform_version);
  clGetDeviceInfo(d->id, CL_DEVICE_TYPE, sizeof type, &type, NULL);
  clGetDeviceInfo(d->id, CL_DEVICE_VENDOR_ID, sizeof vendor_id, &vendor_id, NULL);
  clGetDeviceInfo(d->id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof d->max_work_group,
                  &d->max_work_group, NULL);
  clGetDeviceInfo(d->id, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof d->max_item, d->max_item, NULL);
  clGetDeviceInfo(d->id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof d->local_mem, &d->local_mem, NULL);
  clGetDeviceInfo(d->id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof d->global_mem, &d->global_mem, NULL);
  clGetDeviceInfo(d->id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof d->max_alloc, &d->max_alloc, NULL);
  clGetDeviceInfo(d->id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof d->compute_units, &d->compute_units,
                  NULL);
  clGetDeviceInfo(d->id, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof d->clock_mhz, &d->clock_mhz, NULL);
  d->kind = (type & CL_DEVICE_TYPE_GPU)           ? CALHOST_DEVICE_GPU
            : (type & CL_DEVICE_TYPE_CPU)         ? CALHOST_DEVICE_CPU
            : (type & CL_DEVICE_TYPE_ACCELERATOR) ? CALHOST_DEVICE_ACCELERATOR
                                                  : CALHOST_DEVICE_OTHER;
  /* Everything that determines performance and that OpenCL reports: the
   * platform and its version (PoCL's version is its compiler), vendor,
   * device name, device version, driver version, compute units, memory,
   * local memory, clock. */
  /* A device on the host's CPUs reports a global memory that follows the
   * host's free memory (PoCL: 6490 MiB, then 6618 MiB a minute later): it
   * is not a property of the device, and an identity holding it would
   * change between calibrate and lookup. It is left out for CPU devices. */
  char mem[48] = "";
  if (d->kind != CALHOST_DEVICE_CPU)
    snprintf(mem, sizeof mem, "/mem %lluMiB", (unsigned long long)(d->global_mem >> 20));
  snprintf(d->identity, sizeof d->identity,
           "opencl:%.60s %.60s/%.60s/%.120s/%.60s/driver %.60s/cu %u%s/local %lluKiB/%uMHz",
           platform, platform_version, vendor, name, version, d->driver, d->compute_units, mem,
           (unsigned long long)(d->local_mem >> 10), d->clock_mhz);
  snprintf(d->name, sizeof d->name, "%.40s %s", name,
           d->kind == CALHOST_DEVICE_GPU   ? "gpu"
           : d->kind == CALHOST_DEVICE_CPU ? "cpu"
                                           : "device");
  /* Devices on the host's CPUs share one piece of hardware ("cpu"); others
   * are told apart by vendor id and name (two platforms exposing one GPU
   * agree on both). */
  if (d->kind == CALHOST_DEVICE_CPU)
    snprintf(d->hardware, sizeof d->hardware, "cpu");
  else
    snprintf(d->hardware, sizeof d->hardware, "opencl-vendor-%#x:%.120s", vendor_id, name);
  static const char *const names[OCL_DETAIL_COUNT] = {"platform",           "driver",
                                                      "compute_units",      "global_memory_bytes",
                                                      "local_memory_bytes", "max_work_group_size"};
  snprintf(d->detail_values[0], sizeof d->detail_values[0], "%s", platform);
  snprintf(d->detail_values[1], sizeof d->detail_values[1], "%s", d->driver);
  snprintf(d->detail_values[2], sizeof d->detail_values[2], "%u", d->compute_units);
  snprintf(d->detail_values[3], sizeof d->detail_values[3], "%llu",
           (unsigned long long)d->global_mem);
  snprintf(d->detail_values[4], sizeof d->detail_values[4], "%llu",
           (unsigned long long)d->local_mem);
  snprintf(d->detail_values[5], sizeof d->detail_values[5], "%zu", d->max_work_group);
  for (int i = 0; i < OCL_DETAIL_COUNT; i++)
    d->details[i] = (calhost_property){names[i], d->detail_values[i]};
}

calhost_status ocl_devices_init(ocl_devices *d) {
  cl_uint np = 0;
  cl_platform_id *plats = NULL;
  if (d->initialised)
    return CALHOST_OK;
  d->initialised = 1;
  d->items = NULL;
  d->count = 0;
  if (clGetPlatformIDs(0, NULL, &np) != CL_SUCCESS || np == 0)
    return CALHOST_OK; /* no platform: no device */
  plats = calloc(np, sizeof *plats);
  if (!plats || clGetPlatformIDs(np, plats, NULL) != CL_SUCCESS) {
    free(plats);
    return plats ? CALHOST_OK : CALHOST_NO_MEMORY;
  }
  for (cl_uint p = 0; p < np; p++) {
    cl_uint nd = 0;
    cl_device_id *ids;
    if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0)
      continue;
    ids = calloc(nd, sizeof *ids);
    ocl_device *grown = realloc(d->items, (d->count + nd) * sizeof *grown);
    if (!ids || !grown) {
      free(ids);
      if (grown)
        d->items = grown;
      free(plats);
      return CALHOST_NO_MEMORY;
    }
    d->items = grown;
    if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, ids, NULL) == CL_SUCCESS)
      for (cl_uint i = 0; i < nd; i++) {
        ocl_device *dev = &d->items[d->count++];
        memset(dev, 0, sizeof *dev);
        dev->platform = plats[p];
        dev->id = ids[i];
        describe(dev);
      }
    free(ids);
  }
  free(plats);
  return CALHOST_OK;
}

void ocl_devices_free(ocl_devices *d) {
  if (!d)
    return;
  for (uint32_t i = 0; i < d->count; i++) {
    if (d->items[i].queue)
      clReleaseCommandQueue(d->items[i].queue);
    if (d->items[i].context)
      clReleaseContext(d->items[i].context);
  }
  free(d->items);
  d->items = NULL;
  d->count = 0;
  d->initialised = 0;
}

calhost_status ocl_device_info(const ocl_devices *d, uint32_t position, calhost_device_info *out) {
  const ocl_device *dev;
  if (!d || !out || position >= d->count)
    return CALHOST_INVALID_ARGUMENT;
  dev = &d->items[position];
  out->index = position;
  out->kind = dev->kind;
  out->identity = dev->identity;
  out->name = dev->name;
  out->hardware = dev->hardware;
  out->details = dev->details;
  out->detail_count = OCL_DETAIL_COUNT;
  return CALHOST_OK;
}

ocl_device *ocl_target_device(ocl_devices *d, const calhost_target *t,
                              const calhost_host_services *host, const char *backend) {
  uint32_t index = 0;
  const char *identity = NULL;
  if (ocl_devices_init(d) != CALHOST_OK) {
    matmul_set_error(host, "%s: out of memory listing OpenCL devices", backend);
    return NULL;
  }
  if (t && CALHOST_HAS_FIELD(t, calhost_target, device_index) && t->device_identity) {
    identity = t->device_identity;
    index = t->device_index;
  }
  if (d->count == 0) {
    matmul_set_error(host, "%s: no OpenCL device (is an ICD such as pocl-opencl-icd installed?)",
                     backend);
    return NULL;
  }
  if (index >= d->count) {
    matmul_set_error(host, "%s: no OpenCL device %u (there are %u)", backend, index, d->count);
    return NULL;
  }
  if (identity && strcmp(identity, d->items[index].identity) != 0) {
    matmul_set_error(host, "%s: device %u is now '%s', not '%s' (hardware or driver changed)",
                     backend, index, d->items[index].identity, identity);
    return NULL;
  }
  return &d->items[index];
}

calhost_status ocl_device_open(ocl_device *dev, const calhost_host_services *host,
                               const char *backend) {
  cl_int err = CL_SUCCESS;
  if (dev->queue)
    return CALHOST_OK;
  if (!dev->context) {
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)dev->platform, 0};
    dev->context = clCreateContext(props, 1, &dev->id, NULL, NULL, &err);
    if (!dev->context) {
      matmul_set_error(host, "%s: clCreateContext on '%s': %s", backend, dev->name,
                       ocl_error_name(err));
      return CALHOST_ERROR;
    }
  }
  dev->queue = clCreateCommandQueue(dev->context, dev->id, CL_QUEUE_PROFILING_ENABLE, &err);
  if (!dev->queue) {
    matmul_set_error(host, "%s: clCreateCommandQueue on '%s': %s", backend, dev->name,
                     ocl_error_name(err));
    return CALHOST_ERROR;
  }
  return CALHOST_OK;
}

double ocl_events_seconds(cl_event *events, uint32_t count, int *ok) {
  double total = 0;
  *ok = 1;
  for (uint32_t i = 0; i < count; i++) {
    cl_ulong start = 0, end = 0;
    if (!events[i]) {
      *ok = 0;
      continue;
    }
    if (clGetEventProfilingInfo(events[i], CL_PROFILING_COMMAND_START, sizeof start, &start,
                                NULL) != CL_SUCCESS ||
        clGetEventProfilingInfo(events[i], CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) !=
            CL_SUCCESS ||
        end < start)
      *ok = 0;
    else
      total += (double)(end - start) * 1e-9;
    clReleaseEvent(events[i]);
    events[i] = NULL;
  }
  return total;
}

/* ---- instances ----------------------------------------------------- */

/* The ocl_instance a backend's instance starts with. */
static ocl_instance *instance_base(calhost_plugin_instance *inst) {
  return (ocl_instance *)(void *)inst;
}

calhost_status ocl_instance_create(const calhost_host_services *host, const char *backend,
                                   const calhost_property *settings, size_t setting_count,
                                   calhost_plugin_instance **out, size_t size) {
  if (!out || (setting_count && !settings))
    return CALHOST_INVALID_ARGUMENT;
  *out = NULL;
  if (setting_count) {
    matmul_set_error(host, "%s: unknown setting '%s' (this backend has none)", backend,
                     settings[0].name ? settings[0].name : "(null)");
    return CALHOST_INVALID_ARGUMENT;
  }
  *out =
      matmul_instance_new(host, backend, size < sizeof(ocl_instance) ? sizeof(ocl_instance) : size);
  return *out ? CALHOST_OK : CALHOST_NO_MEMORY;
}

calhost_status ocl_instance_device_count(calhost_plugin_instance *inst, uint32_t *count) {
  if (!inst || !count)
    return CALHOST_INVALID_ARGUMENT;
  if (ocl_devices_init(&instance_base(inst)->devs) != CALHOST_OK)
    return CALHOST_NO_MEMORY;
  *count = instance_base(inst)->devs.count;
  return CALHOST_OK;
}

calhost_status ocl_instance_list_device(calhost_plugin_instance *inst, uint32_t position,
                                        calhost_device_info *out) {
  if (!inst || !out)
    return CALHOST_INVALID_ARGUMENT;
  if (ocl_devices_init(&instance_base(inst)->devs) != CALHOST_OK)
    return CALHOST_NO_MEMORY;
  return ocl_device_info(&instance_base(inst)->devs, position, out);
}

calhost_status ocl_instance_build_key(calhost_plugin_instance *inst, const calhost_workload *w,
                                      const calhost_target *t, calhost_built_key *out) {
  ocl_instance *oi = instance_base(inst);
  matmul_shape s;
  ocl_device *dev;
  calhost_status st = matmul_build_key(inst, w, t, out, &s);
  if (st != CALHOST_OK)
    return st;
  dev = ocl_target_device(&oi->devs, t, oi->mm.host, oi->mm.backend);
  if (!dev)
    return CALHOST_UNSUPPORTED;
  out->processor = dev->identity;
  out->thread_count = 1;
  return CALHOST_OK;
}

/* ---- sessions ------------------------------------------------------ */

void *ocl_session_alloc(calhost_plugin_instance *inst, const calhost_workload *w,
                        const calhost_target *t, calhost_session **out, size_t size,
                        matmul_shape *shape, calhost_status *status) {
  ocl_instance *oi = instance_base(inst);
  ocl_session *s =
      matmul_session_alloc(inst, w, t, out, size < sizeof *s ? sizeof *s : size, shape, status);
  if (!s)
    return NULL;
  s->dev = ocl_target_device(&oi->devs, t, oi->mm.host, oi->mm.backend);
  *status = s->dev ? ocl_device_open(s->dev, oi->mm.host, oi->mm.backend) : CALHOST_UNSUPPORTED;
  if (*status != CALHOST_OK) {
    free(s);
    return NULL;
  }
  return s;
}

/* A device buffer of `count` rows x cols matrices, back to back, each
 * holding its src matrix (src_rows x src_cols, the src matrices back to
 * back) padded with zeros; src NULL: an uninitialised buffer. */
static cl_mem upload(const ocl_device *dev, const float *src, size_t count, size_t src_rows,
                     size_t src_cols, size_t rows, size_t cols, cl_mem_flags flags, cl_int *err) {
  float *pad;
  cl_mem m;
  if (!src)
    return clCreateBuffer(dev->context, flags, count * rows * cols * sizeof(float), NULL, err);
  pad = calloc(count * rows * cols, sizeof *pad);
  if (!pad) {
    *err = CL_OUT_OF_HOST_MEMORY;
    return NULL;
  }
  for (size_t q = 0; q < count; q++)
    for (size_t r = 0; r < src_rows; r++)
      memcpy(pad + (q * rows + r) * cols, src + (q * src_rows + r) * src_cols,
             src_cols * sizeof *pad);
  m = clCreateBuffer(dev->context, flags | CL_MEM_COPY_HOST_PTR, count * rows * cols * sizeof *pad,
                     pad, err);
  free(pad);
  return m;
}

/* The bias buffer: beta*bias broadcast to every output (batch x mp x np,
 * expanded) or the raw values padded to their form (1, np, mp or mp x np). */
static cl_mem upload_bias(const ocl_session *s, int expanded, cl_int *err) {
  const matmul_data *d = &s->mm.data;
  const matmul_shape *sh = &d->shape;
  const ocl_matmul_buffers *b = &s->buf;
  cl_mem m;
  float *full;
  if (!expanded) {
    switch (sh->bias) {
    case MATMUL_BIAS_SCALAR:
      return upload(s->dev, d->bias, 1, 1, 1, 1, 1, CL_MEM_READ_ONLY, err);
    case MATMUL_BIAS_N:
      return upload(s->dev, d->bias, 1, 1, sh->n, 1, b->np, CL_MEM_READ_ONLY, err);
    case MATMUL_BIAS_M:
      return upload(s->dev, d->bias, 1, 1, sh->m, 1, b->mp, CL_MEM_READ_ONLY, err);
    default:
      return upload(s->dev, d->bias, 1, sh->m, sh->n, b->mp, b->np, CL_MEM_READ_ONLY, err);
    }
  }
  full = calloc(matmul_c_size(sh), sizeof *full);
  if (!full) {
    *err = CL_OUT_OF_HOST_MEMORY;
    return NULL;
  }
  matmul_bias_apply(d, full, 0);
  m = upload(s->dev, full, sh->batch, sh->m, sh->n, b->mp, b->np, CL_MEM_READ_ONLY, err);
  free(full);
  return m;
}

calhost_status ocl_session_data(ocl_session *s, const matmul_shape *shape, size_t mp, size_t np,
                                size_t kp, int bias_expanded, const char *backend) {
  ocl_matmul_buffers *b = &s->buf;
  const matmul_data *d = &s->mm.data;
  const matmul_shape *sh = &d->shape;
  cl_int err = CL_SUCCESS;
  if (matmul_data_init(&s->mm.data, shape) != 0) {
    matmul_set_error(s->mm.host, "%s: out of memory opening a %zux%zux%zu session", backend,
                     shape->m, shape->n, shape->k);
    return CALHOST_NO_MEMORY;
  }
  b->mp = mp;
  b->np = np;
  b->kp = kp;
  if (mp != sh->m || np != sh->n) {
    b->staging = malloc(sh->batch * mp * np * sizeof *b->staging);
    if (!b->staging)
      err = CL_OUT_OF_HOST_MEMORY;
  }
  if (err == CL_SUCCESS)
    b->a = sh->trans_a
               ? upload(s->dev, d->a, sh->batch_a, sh->k, sh->m, kp, mp, CL_MEM_READ_ONLY, &err)
               : upload(s->dev, d->a, sh->batch_a, sh->m, sh->k, mp, kp, CL_MEM_READ_ONLY, &err);
  if (b->a)
    b->b = sh->trans_b
               ? upload(s->dev, d->b, sh->batch_b, sh->n, sh->k, np, kp, CL_MEM_READ_ONLY, &err)
               : upload(s->dev, d->b, sh->batch_b, sh->k, sh->n, kp, np, CL_MEM_READ_ONLY, &err);
  if (b->b && d->bias)
    b->bias = upload_bias(s, bias_expanded, &err);
  if (b->b && (!d->bias || b->bias) && sh->accumulate)
    b->c0 = upload(s->dev, d->c0, sh->batch, sh->m, sh->n, mp, np, CL_MEM_READ_ONLY, &err);
  if (b->b && (!d->bias || b->bias) && (!sh->accumulate || b->c0))
    b->c = upload(s->dev, NULL, sh->batch, mp, np, mp, np, CL_MEM_READ_WRITE, &err);
  if (!b->c) {
    matmul_set_error(s->mm.host, "%s: allocating device buffers: %s", backend, ocl_error_name(err));
    return CALHOST_NO_MEMORY;
  }
  return CALHOST_OK;
}

void ocl_session_release(ocl_session *s) {
  ocl_matmul_buffers *b = &s->buf;
  cl_mem *mems[] = {&b->a, &b->b, &b->c, &b->c0, &b->bias};
  for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++) {
    if (*mems[i])
      clReleaseMemObject(*mems[i]);
    *mems[i] = NULL;
  }
  free(b->staging);
  b->staging = NULL;
}

cl_int ocl_session_reset(const ocl_session *s) {
  const ocl_matmul_buffers *b = &s->buf;
  if (!b->c0)
    return CL_SUCCESS;
  return clEnqueueCopyBuffer(s->dev->queue, b->c0, b->c, 0, 0,
                             s->mm.data.shape.batch * b->mp * b->np * sizeof(float), 0, NULL, NULL);
}

calhost_status ocl_session_check(calhost_session *session, char *err, size_t cap) {
  ocl_session *s = (ocl_session *)(void *)session;
  const ocl_matmul_buffers *b;
  matmul_data *d;
  if (!s)
    return CALHOST_INVALID_ARGUMENT;
  b = &s->buf;
  d = &s->mm.data;
  if (s->mm.last_iterations) {
    float *dst = b->staging ? b->staging : d->c;
    size_t batch = d->shape.batch;
    cl_int e = clEnqueueReadBuffer(s->dev->queue, b->c, CL_TRUE, 0,
                                   batch * b->mp * b->np * sizeof(float), dst, 0, NULL, NULL);
    if (e != CL_SUCCESS) {
      snprintf(err, cap, "reading C back: %s", ocl_error_name(e));
      return CALHOST_CHECK_FAILED;
    }
    if (b->staging)
      for (size_t q = 0; q < batch; q++)
        for (size_t r = 0; r < d->shape.m; r++)
          memcpy(d->c + (q * d->shape.m + r) * d->shape.n, b->staging + (q * b->mp + r) * b->np,
                 d->shape.n * sizeof(float));
  }
  return matmul_check(d, s->mm.last_iterations, err, cap);
}
