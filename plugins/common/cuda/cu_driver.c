/*
 * cu_driver.c: the CUDA driver through dlopen, NVIDIA devices, keys and
 * MatMul device matrices with the on-device reference, shared by the
 * cuda_gemm and cublaslt backends (see cu_driver.h).
 */
#include "cu_driver.h"

#include "cu_nvrtc.h"
#include "device_timing.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CU_STR2(x) #x
#define CU_STR(x) CU_STR2(x)

static cu_api g_api;
static int g_api_state; /* 0 untried, 1 loaded, -1 failed: set only once decided */
static char g_api_why[200];
static pthread_mutex_t g_api_lock = PTHREAD_MUTEX_INITIALIZER;

/* The driver library, once per process (never unloaded). The state is
 * decided under the lock and set only after the loading is complete, so
 * a concurrent first call waits for it instead of reading a half-made
 * answer. */
static const cu_api *load_api(char *why, size_t cap) {
  int state;
  pthread_mutex_lock(&g_api_lock);
  if (g_api_state == 0) {
    const char *path = getenv("CALHOST_CUDA_DRIVER");
    void *lib = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    int decided = -1;
    if (!lib) {
      snprintf(g_api_why, sizeof g_api_why, "no NVIDIA driver: %s not found",
               path && *path ? path : "libcuda.so.1");
    } else {
      const char *missing = NULL;
#define CU_LOAD(f)                                                                                 \
  if (!(*(void **)&g_api.f = dlsym(lib, CU_STR(f))) && !missing)                                   \
    missing = CU_STR(f);
      CU_FUNCS(CU_LOAD)
#undef CU_LOAD
      if (missing)
        snprintf(g_api_why, sizeof g_api_why, "the NVIDIA driver lacks %s (too old?)", missing);
      else
        decided = 1;
    }
    g_api_state = decided;
  }
  state = g_api_state;
  pthread_mutex_unlock(&g_api_lock);
  if (state != 1) {
    snprintf(why, cap, "%s", g_api_why);
    return NULL;
  }
  return &g_api;
}

const char *cu_error_name(const cu_api *api, CUresult r) {
  const char *name = NULL;
  if (api && api->cuGetErrorName && api->cuGetErrorName(r, &name) == CUDA_SUCCESS && name)
    return name;
  switch (r) { /* what a driver that cannot name them (the stub) returns */
  case CUDA_ERROR_ILLEGAL_ADDRESS:
    return "CUDA_ERROR_ILLEGAL_ADDRESS";
  case CUDA_ERROR_LAUNCH_FAILED:
    return "CUDA_ERROR_LAUNCH_FAILED";
  case CUDA_ERROR_OUT_OF_MEMORY:
    return "CUDA_ERROR_OUT_OF_MEMORY";
  case CUDA_ERROR_STUB_LIBRARY:
    return "CUDA_ERROR_STUB_LIBRARY";
  case CUDA_ERROR_NO_DEVICE:
    return "CUDA_ERROR_NO_DEVICE";
  case CUDA_ERROR_NOT_INITIALIZED:
    return "CUDA_ERROR_NOT_INITIALIZED";
  default:
    return "CUDA_ERROR";
  }
}

int cu_error_sticky(CUresult r) {
  switch (r) {
  case CUDA_ERROR_ECC_UNCORRECTABLE:
  case CUDA_ERROR_CONTAINED:
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_LAUNCH_TIMEOUT:
  case CUDA_ERROR_ASSERT:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_TENSOR_MEMORY_LEAK:
    return 1;
  default:
    return 0;
  }
}

void (*cu_sticky_exit)(int status) = _exit;

void cu_end_if_sticky(const cu_api *api, const calhost_host_services *host, const char *backend,
                      const char *what, CUresult e) {
  if (!cu_error_sticky(e))
    return;
  char msg[300];
  snprintf(msg, sizeof msg,
           "%s: sticky CUDA error %s in %s: ending this process so that the host starts a fresh "
           "one",
           backend, cu_error_name(api, e), what);
  if (host && host->log)
    host->log(host->context, CALHOST_LOG_ERROR, msg);
  else
    fprintf(stderr, "%s\n", msg);
  cu_sticky_exit(CU_STICKY_EXIT_STATUS);
}

CUresult cu_make_current(const cu_api *api, const calhost_host_services *host, const char *backend,
                         const cu_device *dev) {
  CUresult e = api->cuCtxSetCurrent(dev->ctx);
  if (e != CUDA_SUCCESS) {
    matmul_set_error(host, "%s: making device '%s' current: %s", backend, dev->name,
                     cu_error_name(api, e));
    cu_end_if_sticky(api, host, backend, "cuCtxSetCurrent", e);
  }
  return e;
}

void cu_identity(char *buf, size_t cap, const char *name, int cc_major, int cc_minor, int sm_count,
                 uint64_t memory, int driver_version, const char *libs) {
  char clean[96];
  size_t n = 0;
  for (const char *p = name; *p && n + 1 < sizeof clean; p++)
    clean[n++] = ((unsigned char)*p < 0x20 || *p == 0x7f) ? '?' : *p == '/' ? '_' : *p;
  clean[n] = '\0';
  snprintf(buf, cap, "cuda:%s/sm_%d.%d/SMs %d/mem %lluMiB/driver %d.%d%s%s", clean, cc_major,
           cc_minor, sm_count, (unsigned long long)(memory >> 20), driver_version / 1000,
           (driver_version % 1000) / 10, libs && *libs ? "/" : "", libs ? libs : "");
}

static int attr(const cu_api *api, CUdevice dev, CUdevice_attribute a) {
  int v = 0;
  if (api->cuDeviceGetAttribute(&v, a, dev) != CUDA_SUCCESS)
    return 0;
  return v;
}

static void describe(const cu_api *api, cu_device *d, int driver_version, const char *libs,
                     const char *found) {
  char raw[96] = "";
  CUuuid uuid;
  if (api->cuDeviceGetName(raw, (int)sizeof raw - 1, d->dev) != CUDA_SUCCESS)
    snprintf(raw, sizeof raw, "unknown NVIDIA GPU");
  raw[sizeof raw - 1] = '\0';
  for (char *p = raw; *p; p++)
    if ((unsigned char)*p < 0x20)
      *p = '?';
  snprintf(d->name, sizeof d->name, "%s", raw);
  d->limits.cc_major = attr(api, d->dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  d->limits.cc_minor = attr(api, d->dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  d->limits.max_threads_block =
      (uint32_t)attr(api, d->dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  d->limits.max_smem_block =
      (uint32_t)attr(api, d->dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  d->limits.regs_block = (uint32_t)attr(api, d->dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  d->limits.max_regs_thread = 255;
  d->sm_count = attr(api, d->dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  size_t mem = 0;
  if (api->cuDeviceTotalMem(&mem, d->dev) == CUDA_SUCCESS)
    d->memory = mem;
  d->driver_version = driver_version;
  d->l2_bytes = (uint64_t)attr(api, d->dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  cu_identity(d->identity, sizeof d->identity, d->name, d->limits.cc_major, d->limits.cc_minor,
              d->sm_count, d->memory, driver_version, libs);
  snprintf(d->hardware, sizeof d->hardware, "pci:%04x:%02x:%02x",
           attr(api, d->dev, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID),
           attr(api, d->dev, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID),
           attr(api, d->dev, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID));
  if (api->cuDeviceGetUuid(&uuid, d->dev) == CUDA_SUCCESS) {
    const unsigned char *u = (const unsigned char *)uuid.bytes;
    snprintf(d->uuid, sizeof d->uuid,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
             u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
             u[15]);
  }
  static const char *const names[CU_DETAIL_COUNT] = {"uuid",
                                                     "compute_capability",
                                                     "sm_count",
                                                     "global_memory_bytes",
                                                     "shared_memory_per_block",
                                                     "registers_per_block",
                                                     "driver_version",
                                                     "l2_cache_bytes",
                                                     "libraries"};
  snprintf(d->detail_values[0], 64, "%s", d->uuid[0] ? d->uuid : "unknown");
  snprintf(d->detail_values[1], 64, "%d.%d", d->limits.cc_major, d->limits.cc_minor);
  snprintf(d->detail_values[2], 64, "%d", d->sm_count);
  snprintf(d->detail_values[3], 64, "%llu", (unsigned long long)d->memory);
  snprintf(d->detail_values[4], 64, "%u", d->limits.max_smem_block);
  snprintf(d->detail_values[5], 64, "%u", d->limits.regs_block);
  snprintf(d->detail_values[6], 64, "%d", driver_version);
  snprintf(d->detail_values[7], 64, "%llu", (unsigned long long)d->l2_bytes);
  snprintf(d->detail_values[8], sizeof d->detail_values[8], "%s", found ? found : "");
  for (int i = 0; i < CU_DETAIL_COUNT; i++)
    d->details[i] = (calhost_property){names[i], d->detail_values[i]};
}

calhost_status cu_devices_init(cu_devices *d, const calhost_host_services *host,
                               const char *backend) {
  const cu_api *api;
  int count = 0, driver = 0;
  CUresult r;
  if (d->initialised)
    return CALHOST_OK;
  d->initialised = 1;
  d->items = NULL;
  d->count = 0;
  api = load_api(d->why, sizeof d->why);
  if (api && (r = api->cuInit(0)) != CUDA_SUCCESS) {
    snprintf(d->why, sizeof d->why, "cuInit: %s", cu_error_name(api, r));
    api = NULL;
  }
  if (api && (api->cuDeviceGetCount(&count) != CUDA_SUCCESS || count <= 0)) {
    snprintf(d->why, sizeof d->why, "the driver reports no GPU");
    api = NULL;
  }
  char libs[96] = "", found[CU_PATH_MAX * 2] = "";
  if (d->versions)
    d->versions(libs, sizeof libs, found, sizeof found);
  if (!api) {
    if (host && host->log) {
      char msg[300 + sizeof found];
      snprintf(msg, sizeof msg, "%s: no NVIDIA device (%s)%s%s", backend, d->why,
               found[0] ? "; " : "", found);
      host->log(host->context, CALHOST_LOG_WARNING, msg);
    }
    return CALHOST_OK;
  }
  if (host && host->log && found[0]) {
    char msg[64 + sizeof found];
    snprintf(msg, sizeof msg, "%s: %s", backend, found);
    host->log(host->context, CALHOST_LOG_INFO, msg);
  }
  d->items = calloc((size_t)count, sizeof *d->items);
  if (!d->items)
    return CALHOST_NO_MEMORY;
  api->cuDriverGetVersion(&driver);
  d->api = api;
  for (int i = 0; i < count; i++) {
    cu_device *dev = &d->items[d->count];
    if (api->cuDeviceGet(&dev->dev, i) != CUDA_SUCCESS)
      continue;
    dev->ordinal = (uint32_t)i;
    describe(api, dev, driver, libs, found);
    d->count++;
  }
  return CALHOST_OK;
}

void cu_devices_free(cu_devices *d) {
  if (!d)
    return;
  for (uint32_t i = 0; d->api && i < d->count; i++) {
    cu_device *dev = &d->items[i];
    if (dev->ctx) {
      d->api->cuCtxSetCurrent(dev->ctx);
      for (int t = 0; t < 3; t++)
        if (dev->reference[t])
          d->api->cuModuleUnload(dev->reference[t]);
      d->api->cuCtxSetCurrent(NULL);
      d->api->cuDevicePrimaryCtxRelease(dev->dev);
    }
  }
  free(d->items);
  void (*versions)(char *, size_t, char *, size_t) = d->versions;
  memset(d, 0, sizeof *d);
  d->versions = versions;
}

/* ---- instances ----------------------------------------------------- */

static cu_instance *base(calhost_plugin_instance *inst) {
  return (cu_instance *)(void *)inst;
}

calhost_status cu_instance_create(const calhost_host_services *host, const char *backend,
                                  const calhost_property *settings, size_t count,
                                  calhost_plugin_instance **out, size_t size) {
  if (!out || (count && !settings))
    return CALHOST_INVALID_ARGUMENT;
  *out = NULL;
  if (count) {
    matmul_set_error(host, "%s: unknown setting '%s' (this backend has none)", backend,
                     settings[0].name ? settings[0].name : "(null)");
    return CALHOST_INVALID_ARGUMENT;
  }
  *out =
      matmul_instance_new(host, backend, size < sizeof(cu_instance) ? sizeof(cu_instance) : size);
  return *out ? CALHOST_OK : CALHOST_NO_MEMORY;
}

void cu_instance_destroy(calhost_plugin_instance *inst) {
  if (!inst)
    return;
  cu_devices_free(&base(inst)->devs);
  free(inst);
}

calhost_status cu_instance_device_count(calhost_plugin_instance *inst, uint32_t *count) {
  if (!inst || !count)
    return CALHOST_INVALID_ARGUMENT;
  if (cu_devices_init(&base(inst)->devs, base(inst)->mm.host, base(inst)->mm.backend) != CALHOST_OK)
    return CALHOST_NO_MEMORY;
  *count = base(inst)->devs.count;
  return CALHOST_OK;
}

calhost_status cu_instance_list_device(calhost_plugin_instance *inst, uint32_t position,
                                       calhost_device_info *out) {
  cu_devices *d;
  if (!inst || !out)
    return CALHOST_INVALID_ARGUMENT;
  d = &base(inst)->devs;
  if (cu_devices_init(d, base(inst)->mm.host, base(inst)->mm.backend) != CALHOST_OK)
    return CALHOST_NO_MEMORY;
  if (position >= d->count)
    return CALHOST_INVALID_ARGUMENT;
  out->index = d->items[position].ordinal;
  out->kind = CALHOST_DEVICE_GPU;
  out->identity = d->items[position].identity;
  out->name = d->items[position].name;
  out->hardware = d->items[position].hardware;
  out->details = d->items[position].details;
  out->detail_count = CU_DETAIL_COUNT;
  return CALHOST_OK;
}

calhost_status cu_parse_workload(const calhost_host_services *host, const char *backend,
                                 unsigned caps, const calhost_workload *w, cu_shape *s) {
  if (!w || !w->operator_name || strcmp(w->operator_name, "MatMul") != 0) {
    matmul_set_error(host, "%s serves operator MatMul only", backend);
    return CALHOST_UNSUPPORTED;
  }
  if (cgemm_dtype_parse(w->dtype, &s->dtype) != 0) {
    matmul_set_error(host, "%s serves dtype float32, float16 and bfloat16 (got %s)", backend,
                     w->dtype ? w->dtype : "none");
    return CALHOST_UNSUPPORTED;
  }
  if (!w->shape || w->shape_rank != 3) {
    matmul_set_error(host, "%s: MatMul needs a shape of rank 3 {M, N, K}", backend);
    return CALHOST_INVALID_ARGUMENT;
  }
  for (int i = 0; i < 3; i++)
    if (w->shape[i] < 1 || w->shape[i] > 65535) {
      matmul_set_error(host, "%s: shape dimension %d = %lld out of range [1, 65535]", backend, i,
                       (long long)w->shape[i]);
      return CALHOST_UNSUPPORTED;
    }
  /* the properties alone, on a 1x1x1 float32 stand-in: the shared
   * parser's size limits are its host reference's, which only structured
   * workloads use (checked below) */
  static const int64_t unit[3] = {1, 1, 1};
  calhost_workload props = *w;
  props.dtype = "float32";
  props.shape = unit;
  calhost_status st = matmul_parse_workload(host, backend, caps, &props, &s->st);
  if (st != CALHOST_OK)
    return st;
  s->m = s->st.m = (size_t)w->shape[0];
  s->n = s->st.n = (size_t)w->shape[1];
  s->k = s->st.k = (size_t)w->shape[2];
  s->accumulate = s->st.accumulate;
  s->structured = s->st.trans_a || s->st.trans_b || s->st.alpha != 1.0f ||
                  s->st.bias != MATMUL_BIAS_NONE || s->st.batch > 1;
  /* what one cuBLASLt call per product cannot express: its C input is
   * either the accumulator or the bias, and a batch's operands are one
   * stride apart (0 for a shared one) */
  if (s->st.accumulate && s->st.bias != MATMUL_BIAS_NONE) {
    matmul_set_error(host, "%s does not run MatMul property 'bias' with accumulate=1", backend);
    return CALHOST_UNSUPPORTED;
  }
  if ((s->st.batch_a > 1 && s->st.batch_a < s->st.batch) ||
      (s->st.batch_b > 1 && s->st.batch_b < s->st.batch)) {
    matmul_set_error(host,
                     "%s does not run MatMul property '%s' between 1 and batch (%zu): its "
                     "products' operands are one stride apart, 0 for a shared one",
                     backend,
                     s->st.batch_a > 1 && s->st.batch_a < s->st.batch ? "batch_a" : "batch_b",
                     s->st.batch);
    return CALHOST_UNSUPPORTED;
  }
  uint64_t a = (uint64_t)s->st.batch_a * s->m * s->k, b = (uint64_t)s->st.batch_b * s->k * s->n,
           c = (uint64_t)s->st.batch * s->m * s->n;
  if (a > (1ull << 28) || b > (1ull << 28) || c > (1ull << 28) ||
      (s->structured && (a > MATMUL_MATRIX_MAX || b > MATMUL_MATRIX_MAX || c > MATMUL_MATRIX_MAX ||
                         c * s->k > MATMUL_WORK_MAX))) {
    matmul_set_error(host, "%s: %zu product%s of %zux%zux%zu too large to calibrate", backend,
                     s->st.batch, s->st.batch == 1 ? "" : "s", s->m, s->n, s->k);
    return CALHOST_UNSUPPORTED;
  }
  return CALHOST_OK;
}

cu_device *cu_target_device(cu_devices *d, const calhost_target *t,
                            const calhost_host_services *host, const char *backend) {
  uint32_t index = 0;
  const char *identity = NULL;
  if (cu_devices_init(d, host, backend) != CALHOST_OK) {
    matmul_set_error(host, "%s: out of memory listing NVIDIA devices", backend);
    return NULL;
  }
  if (t && CALHOST_HAS_FIELD(t, calhost_target, device_index) && t->device_identity) {
    identity = t->device_identity;
    index = t->device_index;
  }
  if (d->count == 0) {
    matmul_set_error(host, "%s: no NVIDIA device (%s)", backend, d->why);
    return NULL;
  }
  for (uint32_t i = 0; i < d->count; i++)
    if (d->items[i].ordinal == index) {
      if (identity && strcmp(identity, d->items[i].identity) != 0) {
        matmul_set_error(host, "%s: device %u is now '%s', not '%s' (hardware or driver changed)",
                         backend, index, d->items[i].identity, identity);
        return NULL;
      }
      return &d->items[i];
    }
  matmul_set_error(host, "%s: no NVIDIA device %u (there are %u)", backend, index, d->count);
  return NULL;
}

calhost_status cu_instance_build_key(calhost_plugin_instance *inst, const calhost_workload *w,
                                     const calhost_target *t, calhost_built_key *out) {
  cu_instance *ci = base(inst);
  cu_shape s;
  cu_device *dev;
  calhost_status st;
  if (!inst || !w || !t || !out)
    return CALHOST_INVALID_ARGUMENT;
  st = cu_parse_workload(ci->mm.host, ci->mm.backend, ci->mm.caps, w, &s);
  if (st != CALHOST_OK)
    return st;
  dev = cu_target_device(&ci->devs, t, ci->mm.host, ci->mm.backend);
  if (!dev)
    return CALHOST_UNSUPPORTED;
  /* the shared structure (dtype, m, n, k, accumulate, then the non-default
   * properties in name order), its dtype the workload's */
  matmul_structure_fill(&ci->mm.shape, &s.st);
  snprintf(ci->key_dtype, sizeof ci->key_dtype, "%s", cgemm_dtype_name(s.dtype));
  out->structure_count = 0;
  for (size_t i = 0; i < ci->mm.shape.count && i < CU_KEY_PROPS - 1; i++)
    ci->key_props[out->structure_count++] = ci->mm.shape.props[i];
  ci->key_props[0] = (calhost_property){"dtype", ci->key_dtype};
  if (ci->library_key[0]) /* a policy that means another kernel under another version */
    ci->key_props[out->structure_count++] = (calhost_property){"library", ci->library_key};
  out->model_digest = w->model_digest;
  out->processor = dev->identity;
  out->thread_count = 1;
  out->structure = ci->key_props;
  return CALHOST_OK;
}

/* ---- sessions ------------------------------------------------------ */

static size_t round_up(size_t x, size_t to) {
  return (x + to - 1) / to * to;
}

static uint16_t to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even (inputs are finite) */
  return (uint16_t)(u >> 16);
}

static uint16_t to_half(float f) {
  uint32_t u, sign, mant;
  int exp;
  memcpy(&u, &f, 4);
  sign = (u >> 16) & 0x8000u;
  exp = (int)((u >> 23) & 0xff) - 127 + 15;
  mant = u & 0x7fffffu;
  if (exp <= 0) { /* subnormal or zero (|f| < 2^-14) */
    if (exp < -10)
      return (uint16_t)sign;
    mant |= 0x800000u;
    uint32_t shift = (uint32_t)(14 - exp);
    uint32_t h = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u)))
      h++;
    return (uint16_t)(sign | h);
  }
  uint32_t h = ((uint32_t)exp << 10) | (mant >> 13), rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
    h++;
  return (uint16_t)(sign | h); /* |f| < 1: never overflows */
}

/* rows x cols of deterministic values in [-1, 1) from seed, in a buffer
 * of prow x pcol elements of the dtype (zero padding). */
static void *make_matrix(size_t rows, size_t cols, size_t prow, size_t pcol, cgemm_dtype t,
                         uint64_t seed) {
  size_t es = cgemm_dtype_size(t);
  unsigned char *buf = calloc(prow * pcol, es);
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  if (!buf)
    return NULL;
  for (size_t r = 0; r < rows; r++)
    for (size_t c = 0; c < cols; c++) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      float v = (float)((double)(x >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
      size_t i = r * pcol + c;
      if (t == CG_F32)
        memcpy(buf + i * 4, &v, 4);
      else {
        uint16_t h = t == CG_BF16 ? to_bf16(v) : to_half(v);
        memcpy(buf + i * 2, &h, 2);
      }
    }
  return buf;
}

static float from_half(uint16_t h) {
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  float f = exp == 0 ? ldexpf((float)mant, -24) : ldexpf((float)(mant | 0x400u), (int)exp - 25);
  return (h & 0x8000u) ? -f : f;
}

/* `count` dense row-major rows x cols matrices at src into a zeroed
 * buffer of count matrices of prow x pcol elements of the dtype; src's
 * values rounded to the dtype in place (the inputs the device multiplies,
 * for the shared reference). NULL when out of memory. */
static void *pack_matrices(float *src, size_t count, size_t rows, size_t cols, size_t prow,
                           size_t pcol, cgemm_dtype t) {
  size_t es = cgemm_dtype_size(t);
  unsigned char *buf = calloc(count * prow * pcol, es);
  if (!buf)
    return NULL;
  for (size_t p = 0; p < count; p++)
    for (size_t r = 0; r < rows; r++)
      for (size_t c = 0; c < cols; c++) {
        float *v = &src[(p * rows + r) * cols + c];
        size_t i = (p * prow + r) * pcol + c;
        if (t == CG_F32) {
          memcpy(buf + i * 4, v, 4);
          continue;
        }
        uint16_t h = t == CG_BF16 ? to_bf16(*v) : to_half(*v);
        memcpy(buf + i * 2, &h, 2);
        if (t == CG_BF16) {
          uint32_t u = (uint32_t)h << 16;
          memcpy(v, &u, 4);
        } else {
          *v = from_half(h);
        }
      }
  return buf;
}

/* The raw bias of a structured session broadcast to each of its batch
 * outputs, laid out as C (mp x np each, zero padding); NULL when out of
 * memory. */
static float *expand_bias(const cu_session *s) {
  const matmul_shape *st = &s->shape.st;
  float *buf = calloc(st->batch * s->c_stride, sizeof *buf);
  if (!buf)
    return NULL;
  for (size_t p = 0; p < st->batch; p++)
    for (size_t i = 0; i < st->m; i++)
      for (size_t j = 0; j < st->n; j++)
        buf[p * s->c_stride + i * s->np + j] = matmul_bias_at(st, s->data.bias, i, j);
  return buf;
}

static const char *arch_of(const cu_device *dev, char *buf, size_t cap) {
  snprintf(buf, cap, "sm_%d%d", dev->limits.cc_major, dev->limits.cc_minor);
  return buf;
}

/* R = A*B, G = sum|a||b| with the device's reference kernel (compiled
 * once per device and dtype). */
static calhost_status run_reference(cu_session *s) {
  const cu_api *api = s->inst->devs.api;
  const calhost_host_services *host = s->mm.host;
  const char *backend = s->inst->mm.backend;
  cu_device *dev = s->dev;
  CUmodule *mod = &dev->reference[s->shape.dtype];
  CUfunction fn;
  CUdeviceptr r = 0, g = 0;
  CUresult e;
  char why[256], arch[16], defs[64];
  calhost_status st = CALHOST_ERROR;
  size_t mn = s->shape.m * s->shape.n;
  if (!*mod) {
    const cu_nvrtc *nv = cu_nvrtc_load(why, sizeof why);
    cu_nvrtc_result res;
    if (!nv) {
      matmul_set_error(host, "%s: %s (the reference kernel needs it)", backend, why);
      return CALHOST_UNSUPPORTED;
    }
    snprintf(defs, sizeof defs, "-DREFERENCE -DDT=%d", (int)s->shape.dtype);
    if (cu_nvrtc_compile(nv, cgemm_source, defs, arch_of(dev, arch, sizeof arch), NULL, &res) !=
        0) {
      matmul_set_error(host, "%s: compiling the reference kernel for %s: %s", backend, arch,
                       res.log);
      return CALHOST_ERROR;
    }
    e = api->cuModuleLoadData(mod, res.cubin);
    free(res.cubin);
    if (e != CUDA_SUCCESS) {
      *mod = NULL;
      matmul_set_error(host, "%s: loading the reference kernel: %s", backend,
                       cu_error_name(api, e));
      return CALHOST_ERROR;
    }
  }
  if ((e = api->cuModuleGetFunction(&fn, *mod, "reference")) != CUDA_SUCCESS ||
      (e = api->cuMemAlloc(&r, mn * sizeof(double))) != CUDA_SUCCESS ||
      (e = api->cuMemAlloc(&g, mn * sizeof(double))) != CUDA_SUCCESS)
    goto fail;
  {
    CUdeviceptr none = 0;
    int m = (int)s->shape.m, n = (int)s->shape.n, k = (int)s->shape.k, lda = (int)s->kp,
        ldb = (int)s->np, ldc = (int)s->np;
    void *args[] = {&s->a, &s->b, &none, &r, &g, &m, &n, &k, &lda, &ldb, &ldc};
    if ((e = api->cuLaunchKernel(fn, (unsigned)((s->shape.n + 127) / 128), (unsigned)s->shape.m, 1,
                                 128, 1, 1, 0, NULL, args, NULL)) != CUDA_SUCCESS ||
        (e = api->cuCtxSynchronize()) != CUDA_SUCCESS ||
        (e = api->cuMemcpyDtoH(s->ref, r, mn * sizeof(double))) != CUDA_SUCCESS ||
        (e = api->cuMemcpyDtoH(s->mag, g, mn * sizeof(double))) != CUDA_SUCCESS)
      goto fail;
  }
  st = CALHOST_OK;
fail:
  if (st != CALHOST_OK) {
    matmul_set_error(host, "%s: running the reference kernel: %s", backend, cu_error_name(api, e));
    cu_end_if_sticky(api, host, backend, "the reference kernel", e);
  }
  if (r)
    api->cuMemFree(r);
  if (g)
    api->cuMemFree(g);
  return st;
}

uint32_t cu_rotation_sets(uint64_t l2_bytes, uint64_t set_bytes, uint64_t budget) {
  if (set_bytes == 0)
    return 1;
  uint64_t want = (2 * l2_bytes + set_bytes - 1) / set_bytes, afford = budget / set_bytes;
  if (want > CU_ROTATION_MAX)
    want = CU_ROTATION_MAX;
  if (want > afford)
    want = afford;
  return want < 1 ? 1u : (uint32_t)want;
}

uint32_t cu_graph_batch(uint32_t sets) {
  uint32_t n = sets ? sets : 1;
  while (n < CU_GRAPH_MIN)
    n += sets ? sets : 1;
  return n > CU_GRAPH_MAX ? CU_GRAPH_MAX : n;
}

long cu_warmup(double seconds, uint32_t max_steps, double (*clock)(void *),
               CUresult (*step)(void *), void *ctx, CUresult *error) {
  double t0 = clock(ctx);
  long steps = 0;
  do {
    CUresult e = step(ctx);
    if (e != CUDA_SUCCESS) {
      if (error)
        *error = e;
      return -1;
    }
    steps++;
  } while ((uint32_t)steps < max_steps && clock(ctx) - t0 < seconds);
  return steps;
}

/* The copies of A and B the session rotates through (cu_rotation_sets
 * with the device's L2 and a quarter of its free memory, at most 4 GiB). */
static CUresult rotate(cu_session *s, size_t es) {
  const cu_api *api = s->inst->devs.api;
  size_t free_b = 0, total_b = 0, abytes = s->shape.st.batch_a * s->a_stride * es,
         bbytes = s->shape.st.batch_b * s->b_stride * es;
  CUresult e = api->cuMemGetInfo(&free_b, &total_b);
  uint64_t budget = e == CUDA_SUCCESS ? free_b / 4 : 0;
  if (budget > (4ull << 30))
    budget = 4ull << 30;
  s->sets = cu_rotation_sets(s->dev->l2_bytes, abytes + bbytes, budget);
  s->rot_a = calloc(s->sets, sizeof *s->rot_a);
  s->rot_b = calloc(s->sets, sizeof *s->rot_b);
  if (!s->rot_a || !s->rot_b)
    return CUDA_ERROR_OUT_OF_MEMORY;
  s->rot_a[0] = s->a;
  s->rot_b[0] = s->b;
  for (uint32_t i = 1; i < s->sets; i++) {
    if ((e = api->cuMemAlloc(&s->rot_a[i], abytes)) == CUDA_SUCCESS &&
        (e = api->cuMemAlloc(&s->rot_b[i], bbytes)) == CUDA_SUCCESS &&
        (e = api->cuMemcpyDtoD(s->rot_a[i], s->a, abytes)) == CUDA_SUCCESS &&
        (e = api->cuMemcpyDtoD(s->rot_b[i], s->b, bbytes)) == CUDA_SUCCESS)
      continue;
    if (e != CUDA_ERROR_OUT_OF_MEMORY)
      return e;
    /* memory ran short (another process): the sets made so far (warmer) */
    if (s->rot_a[i])
      api->cuMemFree(s->rot_a[i]);
    if (s->rot_b[i])
      api->cuMemFree(s->rot_b[i]);
    s->rot_a[i] = s->rot_b[i] = 0;
    s->sets = i;
    break;
  }
  return api->cuCtxSynchronize();
}

static CUresult upload(const cu_api *api, CUdeviceptr *dst, const void *src, size_t bytes) {
  CUresult e = api->cuMemAlloc(dst, bytes);
  if (e == CUDA_SUCCESS && src)
    e = api->cuMemcpyHtoD(*dst, src, bytes);
  return e;
}

/* The device of a session of shape on target t, made current (its
 * primary context retained once): NULL with *status (and the reason told
 * to the host) when the target names no device of the instance, the
 * dtype's headers are missing, or the context cannot be had. */
static cu_device *session_device(cu_instance *ci, const cu_shape *shape, const calhost_target *t,
                                 calhost_status *status) {
  cu_device *dev = cu_target_device(&ci->devs, t, ci->mm.host, ci->mm.backend);
  if (!dev) {
    *status = CALHOST_UNSUPPORTED;
    return NULL;
  }
  const cu_api *api = ci->devs.api;
  CUresult e;
  if (shape->dtype != CG_F32) { /* the reference kernel includes cuda_fp16.h / cuda_bf16.h */
    char why[256];
    const cu_nvrtc *nv = cu_nvrtc_load(why, sizeof why);
    const char *missing =
        nv ? cu_headers_missing(cu_nvrtc_headers(nv), (int)shape->dtype, 0) : NULL;
    if (missing) {
      matmul_set_error(ci->mm.host, "%s: %s", ci->mm.backend, missing);
      *status = CALHOST_UNSUPPORTED;
      return NULL;
    }
  }
  if (!dev->ctx && (e = api->cuDevicePrimaryCtxRetain(&dev->ctx, dev->dev)) != CUDA_SUCCESS) {
    dev->ctx = NULL;
    matmul_set_error(ci->mm.host, "%s: no context on '%s': %s", ci->mm.backend, dev->name,
                     cu_error_name(api, e));
    *status = CALHOST_ERROR;
    return NULL;
  }
  if (cu_make_current(api, ci->mm.host, ci->mm.backend, dev) != CUDA_SUCCESS) {
    *status = CALHOST_ERROR;
    return NULL;
  }
  return dev;
}

void *cu_session_open(calhost_plugin_instance *inst, const calhost_workload *w,
                      const calhost_target *t, size_t size, size_t pad_mn, size_t pad_k,
                      calhost_status *status) {
  cu_instance *ci = base(inst);
  cu_session *s;
  cu_shape shape;
  cu_device *dev;
  const cu_api *api;
  CUresult e = CUDA_SUCCESS;
  void *a = NULL, *b = NULL;
  float *c0p = NULL, *biasp = NULL;
  if (!inst || !w || !t) {
    *status = CALHOST_INVALID_ARGUMENT;
    return NULL;
  }
  *status = cu_parse_workload(ci->mm.host, ci->mm.backend, ci->mm.caps, w, &shape);
  if (*status != CALHOST_OK)
    return NULL;
  dev = session_device(ci, &shape, t, status);
  if (!dev)
    return NULL;
  api = ci->devs.api;
  s = calloc(1, size < sizeof *s ? sizeof *s : size);
  if (!s) {
    *status = CALHOST_NO_MEMORY;
    return NULL;
  }
  s->mm.host = ci->mm.host;
  s->inst = ci;
  s->dev = dev;
  s->shape = shape;
  s->mp = round_up(shape.m, pad_mn);
  s->np = round_up(shape.n, pad_mn);
  s->kp = round_up(shape.k, pad_k);
  const matmul_shape *st = &shape.st;
  size_t a_rows = st->trans_a ? s->kp : s->mp, b_rows = st->trans_b ? s->np : s->kp;
  s->a_ld = st->trans_a ? s->mp : s->kp;
  s->b_ld = st->trans_b ? s->kp : s->np;
  s->a_stride = a_rows * s->a_ld;
  s->b_stride = b_rows * s->b_ld;
  s->c_stride = s->mp * s->np;
  if (shape.structured) { /* the shared inputs, rounded to the dtype, and reference */
    if (matmul_data_init(&s->data, st) == 0) {
      a = pack_matrices(s->data.a, st->batch_a, st->trans_a ? shape.k : shape.m,
                        st->trans_a ? shape.m : shape.k, a_rows, s->a_ld, shape.dtype);
      b = pack_matrices(s->data.b, st->batch_b, st->trans_b ? shape.n : shape.k,
                        st->trans_b ? shape.k : shape.n, b_rows, s->b_ld, shape.dtype);
      if (shape.accumulate)
        c0p = pack_matrices(s->data.c0, st->batch, shape.m, shape.n, s->mp, s->np, CG_F32);
      if (st->bias != MATMUL_BIAS_NONE)
        biasp = expand_bias(s);
    }
  } else {
    s->ref = malloc(shape.m * shape.n * sizeof *s->ref);
    s->mag = malloc(shape.m * shape.n * sizeof *s->mag);
    a = make_matrix(shape.m, shape.k, s->mp, s->kp, shape.dtype, 1);
    b = make_matrix(shape.k, shape.n, s->kp, s->np, shape.dtype, 2);
    if (shape.accumulate) {
      c0p = make_matrix(shape.m, shape.n, s->mp, s->np, CG_F32, 3);
      s->c0_host = malloc(shape.m * shape.n * sizeof *s->c0_host);
      if (c0p && s->c0_host)
        for (size_t r = 0; r < shape.m; r++)
          memcpy(s->c0_host + r * shape.n, c0p + r * s->np, shape.n * sizeof(float));
    }
  }
  if ((!shape.structured && (!s->ref || !s->mag || (shape.accumulate && !s->c0_host))) || !a ||
      !b || (shape.accumulate && !c0p) || (st->bias != MATMUL_BIAS_NONE && !biasp)) {
    matmul_set_error(ci->mm.host, "%s: out of memory opening a %zux%zux%zu session", ci->mm.backend,
                     shape.m, shape.n, shape.k);
    *status = CALHOST_NO_MEMORY;
    goto fail;
  }
  size_t es = cgemm_dtype_size(shape.dtype), cbytes = st->batch * s->c_stride * 4;
  if ((e = upload(api, &s->a, a, st->batch_a * s->a_stride * es)) != CUDA_SUCCESS ||
      (e = upload(api, &s->b, b, st->batch_b * s->b_stride * es)) != CUDA_SUCCESS ||
      (e = upload(api, &s->c, NULL, cbytes)) != CUDA_SUCCESS ||
      (shape.accumulate && (e = upload(api, &s->c0, c0p, cbytes)) != CUDA_SUCCESS) ||
      (biasp && (e = upload(api, &s->bias, biasp, cbytes)) != CUDA_SUCCESS)) {
    matmul_set_error(ci->mm.host, "%s: allocating device buffers: %s", ci->mm.backend,
                     cu_error_name(api, e));
    *status = e == CUDA_ERROR_OUT_OF_MEMORY ? CALHOST_NO_MEMORY : CALHOST_ERROR;
    goto fail;
  }
  if ((e = api->cuStreamCreate(&s->stream, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS ||
      (e = rotate(s, es)) != CUDA_SUCCESS) {
    matmul_set_error(ci->mm.host, "%s: creating the stream and operand copies: %s", ci->mm.backend,
                     cu_error_name(api, e));
    cu_end_if_sticky(api, ci->mm.host, ci->mm.backend, "open_session", e);
    *status = e == CUDA_ERROR_OUT_OF_MEMORY ? CALHOST_NO_MEMORY : CALHOST_ERROR;
    goto fail;
  }
  *status = shape.structured ? CALHOST_OK : run_reference(s);
  if (*status != CALHOST_OK)
    goto fail;
  free(a);
  free(b);
  free(c0p);
  free(biasp);
  return s;
fail:
  free(a);
  free(b);
  free(c0p);
  free(biasp);
  cu_session_release(s);
  free(s);
  return NULL;
}

void cu_session_release(cu_session *s) {
  const cu_api *api;
  if (!s || !s->inst)
    return;
  api = s->inst->devs.api;
  cu_session_drop_graph(s);
  for (uint32_t i = 1; api && i < s->sets; i++) {
    if (s->rot_a && s->rot_a[i])
      api->cuMemFree(s->rot_a[i]);
    if (s->rot_b && s->rot_b[i])
      api->cuMemFree(s->rot_b[i]);
  }
  free(s->rot_a);
  free(s->rot_b);
  s->rot_a = s->rot_b = NULL;
  s->sets = 0;
  if (api && s->stream)
    api->cuStreamDestroy(s->stream);
  s->stream = NULL;
  CUdeviceptr *bufs[] = {&s->a, &s->b, &s->c, &s->c0, &s->work, &s->bias};
  for (size_t i = 0; api && i < sizeof bufs / sizeof bufs[0]; i++) {
    if (*bufs[i])
      api->cuMemFree(*bufs[i]);
    *bufs[i] = 0;
  }
  free(s->ref);
  free(s->mag);
  free(s->c0_host);
  s->ref = s->mag = NULL;
  s->c0_host = NULL;
  matmul_data_free(&s->data);
}

CUresult cu_session_reset(cu_session *s) {
  const cu_api *api = s->inst->devs.api;
  if (!s->c0)
    return CUDA_SUCCESS;
  size_t bytes = (s->shape.st.batch ? s->shape.st.batch : 1) * s->mp * s->np * 4;
  if (s->stream)
    return api->cuMemcpyDtoDAsync(s->c, s->c0, bytes, s->stream);
  return api->cuMemcpyDtoD(s->c, s->c0, bytes);
}

void cu_session_drop_graph(cu_session *s) {
  if (s && s->graph && s->inst && s->inst->devs.api)
    s->inst->devs.api->cuGraphExecDestroy(s->graph);
  if (s)
    s->graph = NULL;
}

typedef struct warm_ctx {
  cu_session *s;
  cu_launch_fn launch;
  void *ctx;
} warm_ctx;

static double host_seconds(void *unused) {
  struct timespec ts;
  (void)unused;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* One warm-up step: 8 products, then waits for them (the host clock then
 * measures the GPU's time, not the launch queue's). */
static CUresult warm_step(void *user) {
  warm_ctx *w = user;
  cu_session *s = w->s;
  CUresult e = CUDA_SUCCESS;
  for (int i = 0; i < 8 && e == CUDA_SUCCESS; i++) {
    e = w->launch(s, s->next_set, w->ctx);
    s->next_set = (s->next_set + 1) % (s->sets ? s->sets : 1);
  }
  return e != CUDA_SUCCESS ? e : s->inst->devs.api->cuStreamSynchronize(s->stream);
}

CUresult cu_session_prepared(cu_session *s, cu_launch_fn launch, void *ctx) {
  warm_ctx w = {s, launch, ctx};
  CUresult e = CUDA_SUCCESS;
  cu_session_drop_graph(s);
  s->no_graph = 0;
  if (cu_warmup(CU_WARMUP_SECONDS, 4096, host_seconds, warm_step, &w, &e) < 0)
    return e;
  return cu_session_reset(s); /* the warm-up wrote C */
}

/* Captures s->graph_launches products on the stream into s->graph. */
static CUresult capture(cu_session *s, cu_launch_fn launch, void *ctx) {
  const cu_api *api = s->inst->devs.api;
  CUgraph g = NULL;
  CUresult e, e2;
  s->graph_launches = cu_graph_batch(s->sets);
  if ((e = api->cuStreamBeginCapture(s->stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)) !=
      CUDA_SUCCESS)
    return e;
  for (uint32_t i = 0; i < s->graph_launches && e == CUDA_SUCCESS; i++)
    e = launch(s, i % s->sets, ctx);
  e2 = api->cuStreamEndCapture(s->stream, &g);
  if (e == CUDA_SUCCESS)
    e = e2;
  if (e == CUDA_SUCCESS)
    e = api->cuGraphInstantiate(&s->graph, g, 0);
  if (g)
    api->cuGraphDestroy(g);
  if (e != CUDA_SUCCESS)
    s->graph = NULL;
  return e;
}

/* One timed run of cu_session_time: the device loop's context. */
typedef struct time_ctx {
  cu_session *s;
  cu_launch_fn launch;
  void *ctx;
  CUevent start, stop;
} time_ctx;

/* The device loop's start (device_timing.h): C reset, then the graph
 * captured when the run holds one (a warning and no_graph when it cannot
 * be). */
static int time_start(void *user, uint32_t iterations) {
  time_ctx *t = user;
  cu_session *s = t->s;
  CUresult e;
  if ((e = cu_session_reset(s)) != CUDA_SUCCESS)
    return (int)e;
  if (iterations >= cu_graph_batch(s->sets) && !s->graph && !s->no_graph &&
      (e = capture(s, t->launch, t->ctx)) != CUDA_SUCCESS) {
    if (cu_error_sticky(e))
      return (int)e;
    s->no_graph = 1; /* not capturable here: launched one by one from now on */
    if (s->mm.host && s->mm.host->log) {
      char msg[200];
      snprintf(msg, sizeof msg, "%s: capturing a CUDA graph failed (%s): launching one by one",
               s->inst->mm.backend, cu_error_name(s->inst->devs.api, e));
      s->mm.host->log(s->mm.host->context, CALHOST_LOG_WARNING, msg);
    }
  }
  return CUDA_SUCCESS;
}

/* A whole graph when one is captured and fits, else at most CU_GRAPH_MIN
 * products launched one by one. */
static uint32_t time_batch_size(void *user, uint32_t remaining) {
  const cu_session *s = ((time_ctx *)user)->s;
  if (s->graph && remaining >= s->graph_launches)
    return s->graph_launches;
  return remaining < CU_GRAPH_MIN ? remaining : CU_GRAPH_MIN;
}

/* One batch between the event pair: the graph (a batch of graph_launches
 * when there is one: time_batch_size gives less only when it does not
 * fit) or `count` launches rotating the operand sets. */
static int time_batch(void *user, uint32_t count, double *seconds, int *timed) {
  time_ctx *t = user;
  cu_session *s = t->s;
  const cu_api *api = s->inst->devs.api;
  CUresult e;
  double secs;
  (void)timed;
  if ((e = api->cuEventRecord(t->start, s->stream)) != CUDA_SUCCESS)
    return (int)e;
  if (s->graph && count == s->graph_launches) {
    e = api->cuGraphLaunch(s->graph, s->stream);
  } else {
    for (uint32_t i = 0; i < count && e == CUDA_SUCCESS; i++) {
      e = t->launch(s, s->next_set, t->ctx);
      s->next_set = (s->next_set + 1) % s->sets;
    }
  }
  if (e != CUDA_SUCCESS || (e = api->cuEventRecord(t->stop, s->stream)) != CUDA_SUCCESS)
    return (int)e;
  if ((secs = cu_events_seconds(api, t->start, t->stop)) < 0)
    return (int)(api->cuStreamSynchronize(s->stream) != CUDA_SUCCESS ? api->cuCtxSynchronize()
                                                                     : CUDA_ERROR_UNKNOWN);
  *seconds += secs;
  return CUDA_SUCCESS;
}

static const device_timing_ops time_ops = {time_start, time_batch_size, time_batch};

CUresult cu_session_time(cu_session *s, cu_launch_fn launch, void *ctx, uint32_t iterations,
                         CUevent start, CUevent stop, double *seconds) {
  time_ctx t = {s, launch, ctx, start, stop};
  int timed = 1, code = 0;
  switch (device_timing_run(&time_ops, &t, s->mm.host, iterations, seconds, &timed, &code)) {
  case DEVICE_TIMING_OK:
    return CUDA_SUCCESS;
  case DEVICE_TIMING_CANCELLED:
    return CUDA_ERROR_NOT_READY;
  default:
    return (CUresult)code;
  }
}

CUresult cu_session_work(cu_session *s, size_t bytes) {
  const cu_api *api = s->inst->devs.api;
  CUresult e;
  if (s->work_bytes >= bytes)
    return CUDA_SUCCESS;
  if (s->work)
    api->cuMemFree(s->work);
  s->work = 0;
  s->work_bytes = 0;
  e = api->cuMemAlloc(&s->work, bytes);
  if (e == CUDA_SUCCESS)
    s->work_bytes = bytes;
  return e;
}

calhost_status cu_session_check(calhost_session *session, char *err, size_t cap) {
  cu_session *s = (cu_session *)(void *)session;
  const cu_api *api;
  float *c;
  uint32_t it;
  const double u = 1.0 / 16777216.0;
  if (!s)
    return CALHOST_INVALID_ARGUMENT;
  it = s->mm.last_iterations;
  if (it == 0) {
    snprintf(err, cap, "no completed run to check");
    return CALHOST_CHECK_FAILED;
  }
  api = s->inst->devs.api;
  size_t batch = s->shape.structured ? s->shape.st.batch : 1;
  c = malloc(batch * s->mp * s->np * sizeof *c);
  if (!c) {
    snprintf(err, cap, "out of memory reading C back");
    return CALHOST_CHECK_FAILED;
  }
  CUresult e = cu_make_current(api, s->mm.host, s->inst->mm.backend, s->dev);
  if (e == CUDA_SUCCESS)
    e = api->cuMemcpyDtoH(c, s->c, batch * s->mp * s->np * sizeof *c);
  if (e != CUDA_SUCCESS) {
    free(c);
    snprintf(err, cap, "reading C back: %s", cu_error_name(api, e));
    cu_end_if_sticky(api, s->mm.host, s->inst->mm.backend, "check", e);
    return CALHOST_CHECK_FAILED;
  }
  if (s->shape.structured) { /* the shared reference of the structure, on the host */
    for (size_t p = 0; p < batch; p++)
      for (size_t r = 0; r < s->shape.m; r++)
        memcpy(s->data.c + (p * s->shape.m + r) * s->shape.n, c + (p * s->mp + r) * s->np,
               s->shape.n * sizeof *c);
    free(c);
    return matmul_check(&s->data, it, err, cap);
  }
  double scale = 32.0 * u * sqrt((double)s->shape.k + it);
  double times = s->shape.accumulate ? (double)it : 1.0; /* C = C0 + it A*B, or A*B */
  for (size_t r = 0; r < s->shape.m; r++)
    for (size_t col = 0; col < s->shape.n; col++) {
      size_t i = r * s->shape.n + col;
      double c0 = s->c0_host ? s->c0_host[i] : 0.0;
      double want = c0 + times * s->ref[i], got = c[r * s->np + col];
      double tol = scale * (times * s->mag[i] + fabs(c0)) + 1e-30;
      if (!isfinite(got) || fabs(got - want) > tol) {
        snprintf(err, cap, "C[%zu][%zu] = %.9g, expected %.9g (tolerance %.3g) after %u run%s", r,
                 col, got, want, tol, it, it == 1 ? "" : "s");
        free(c);
        return CALHOST_CHECK_FAILED;
      }
    }
  free(c);
  return CALHOST_OK;
}

double cu_events_seconds(const cu_api *api, CUevent start, CUevent stop) {
  float ms = 0;
  if (api->cuEventSynchronize(stop) != CUDA_SUCCESS ||
      api->cuEventElapsedTime(&ms, start, stop) != CUDA_SUCCESS)
    return -1;
  return ms * 1e-3;
}
