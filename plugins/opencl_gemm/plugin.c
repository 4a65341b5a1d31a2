/*
 * plugin.c: the opencl_gemm backend: SGEMM ("MatMul", float32, row-major)
 * with this project's tunable OpenCL kernel (xgemm.c), one candidate per
 * parameter set compiled with -D options and cached per device for the
 * instance's lifetime, timed with OpenCL profiling events (device_seconds),
 * checked against the double-precision reference of ../common/matmul.c.
 *
 * ABI 2: lists every OpenCL device (device_count/list_device), honours a
 * target's device (device 0 for a target without one), describes its space
 * of nine parameters with a validity test that includes the device's limits,
 * and declares sample workloads. OpenCL is touched lazily (see
 * ocl_device.h): create() and validate_policy() never call it.
 *
 * Session memory: A, B and C live on the device, padded to the largest tiles
 * (XGEMM_PAD_MN, XGEMM_PAD_K) with zeros, uploaded once per session; run()
 * leaves its output on the device and check() reads it back.
 */
#include <calhost/plugin.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device_timing.h"
#include "matmul.h"
#include "ocl_device.h"
#include "xgemm.h"

#define BACKEND "opencl_gemm"
#define RUN_BATCH 64 /* kernels enqueued between waits (and cancellation checks) */

typedef struct program_entry {
  const ocl_device *dev;
  char options[192];
  cl_program program;
  double compile_seconds;
} program_entry;

struct calhost_plugin_instance {
  ocl_instance ocl; /* first: host, devices, key storage */
  program_entry *programs;
  size_t program_count;
  calhost_parameter params[XG_COUNT];
};

struct calhost_session {
  ocl_session ocl; /* first: data, device, buffers (padded to XGEMM_PAD_MN, XGEMM_PAD_K) */
  calhost_plugin_instance *inst;
  xgemm_config *cands;
  uint32_t default_assignment[XG_COUNT];
  /* prepared candidate */
  cl_kernel kernel;
  size_t gws[3], lws[3]; /* the third dimension: the products of a batch */
};

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static calhost_status og_create(const calhost_host_services *host, const calhost_property *settings,
                                size_t setting_count, calhost_plugin_instance **out) {
  calhost_status st =
      ocl_instance_create(host, BACKEND, settings, setting_count, out, sizeof **out);
  if (st == CALHOST_OK) /* transposed reads, alpha and bias in the kernel, the batch in the grid */
    (*out)->ocl.mm.caps = MATMUL_CAN_ALL;
  for (int k = 0; st == CALHOST_OK && k < XG_COUNT; k++)
    (*out)->params[k] = (calhost_parameter){xgemm_params[k].name, xgemm_params[k].texts,
                                            xgemm_params[k].count, CALHOST_PARAMETER_ORDERED};
  return st;
}

static void og_destroy(calhost_plugin_instance *inst) {
  if (!inst)
    return;
  for (size_t i = 0; i < inst->program_count; i++)
    clReleaseProgram(inst->programs[i].program);
  free(inst->programs);
  ocl_devices_free(&inst->ocl.devs);
  free(inst);
}

static calhost_status og_validate_policy(calhost_plugin_instance *inst, const char *policy,
                                         size_t length, char *err, size_t err_capacity) {
  xgemm_config c;
  (void)inst;
  return xgemm_parse(policy, length, &c, err, err_capacity) == 0 ? CALHOST_OK
                                                                 : CALHOST_INVALID_ARGUMENT;
}

static void og_close_session(calhost_session *s) {
  if (!s)
    return;
  if (s->kernel)
    clReleaseKernel(s->kernel);
  ocl_session_release(&s->ocl);
  free(s->cands);
  matmul_session_close(s);
}

static size_t round_up(size_t x, size_t to) {
  return (x + to - 1) / to * to;
}

static calhost_status og_open_session(calhost_plugin_instance *inst, const calhost_workload *w,
                                      const calhost_target *t, calhost_session **out) {
  calhost_session *s;
  calhost_status st;
  matmul_shape shape;
  size_t mp, np, kp;
  ocl_device *dev;
  s = ocl_session_alloc(inst, w, t, out, sizeof *s, &shape, &st);
  if (!s)
    return st;
  s->inst = inst;
  dev = s->ocl.dev;
  mp = round_up(shape.m, XGEMM_PAD_MN);
  np = round_up(shape.n, XGEMM_PAD_MN);
  kp = round_up(shape.k, XGEMM_PAD_K);
  if ((uint64_t)shape.batch_a * mp * kp * 4 > dev->max_alloc ||
      (uint64_t)shape.batch_b * kp * np * 4 > dev->max_alloc ||
      (uint64_t)shape.batch * mp * np * 4 > dev->max_alloc) {
    matmul_set_error(inst->ocl.mm.host, BACKEND ": %zux%zux%zu exceeds the device's largest buffer",
                     shape.m, shape.n, shape.k);
    free(s);
    return CALHOST_UNSUPPORTED;
  }
  s->cands = malloc(xgemm_curated_count * sizeof *s->cands);
  if (!s->cands || ocl_session_data(&s->ocl, &shape, mp, np, kp, 0, BACKEND) != CALHOST_OK) {
    og_close_session(s);
    return CALHOST_NO_MEMORY;
  }
  /* Candidates: the curated list, less what does not fit this device. */
  for (uint32_t i = 0; i < xgemm_curated_count; i++)
    if (xgemm_fits(&xgemm_curated[i], dev->max_work_group, dev->max_item, dev->local_mem, NULL,
                   0) == 0)
      s->cands[s->ocl.mm.candidates++] = xgemm_curated[i];
  if (s->ocl.mm.candidates == 0) {
    matmul_set_error(inst->ocl.mm.host, BACKEND ": no configuration fits device '%s'", dev->name);
    og_close_session(s);
    return CALHOST_UNSUPPORTED;
  }
  for (int k = 0; k < XG_COUNT; k++)
    for (uint32_t i = 0; i < xgemm_params[k].count; i++)
      if (xgemm_params[k].values[i] == xgemm_default.v[k])
        s->default_assignment[k] = i;
  *out = s;
  return CALHOST_OK;
}

/* A configuration's policy text, out with the serialize_candidate
 * conventions: the one writer of this plugin's policies. */
static calhost_status policy_out(const xgemm_config *c, char *buf, size_t capacity,
                                 size_t *length) {
  char text[128];
  xgemm_format(c, text, sizeof text);
  return calhost_copy_out(text, buf, capacity, length);
}

static calhost_status og_serialize_candidate(calhost_session *s, uint32_t index, char *buf,
                                             size_t capacity, size_t *length) {
  if (!s || index >= s->ocl.mm.candidates)
    return CALHOST_INVALID_ARGUMENT;
  return policy_out(&s->cands[index], buf, capacity, length);
}

static calhost_status og_default_policy(calhost_session *s, char *buf, size_t capacity,
                                        size_t *length) {
  if (!s)
    return CALHOST_INVALID_ARGUMENT;
  return policy_out(&xgemm_default, buf, capacity, length);
}

/* The program of configuration c on s's device, from the instance's cache or
 * compiled now. NULL after set_error. */
static cl_program program_for(calhost_session *s, const xgemm_config *c) {
  calhost_plugin_instance *inst = s->inst;
  const matmul_shape *sh = &s->ocl.mm.data.shape;
  char options[192];
  const char *src = xgemm_source;
  cl_int err = CL_SUCCESS;
  cl_program prog;
  double t0;
  size_t len;
  xgemm_build_options(c, options, sizeof options);
  len = strlen(options); /* the structure's variant of the kernel */
  snprintf(options + len, sizeof options - len, " -DTA=%d -DTB=%d -DBIAS=%d", sh->trans_a,
           sh->trans_b, sh->bias != MATMUL_BIAS_NONE);
  for (size_t i = 0; i < inst->program_count; i++)
    if (inst->programs[i].dev == s->ocl.dev && strcmp(inst->programs[i].options, options) == 0)
      return inst->programs[i].program;
  t0 = now_seconds();
  prog = clCreateProgramWithSource(s->ocl.dev->context, 1, &src, NULL, &err);
  if (!prog) {
    matmul_set_error(inst->ocl.mm.host, BACKEND ": clCreateProgramWithSource: %s",
                     ocl_error_name(err));
    return NULL;
  }
  err = clBuildProgram(prog, 1, &s->ocl.dev->id, options, NULL, NULL);
  if (err != CL_SUCCESS) {
    char log[400] = "";
    clGetProgramBuildInfo(prog, s->ocl.dev->id, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
    log[sizeof log - 1] = '\0';
    for (char *p = log; *p; p++)
      if ((unsigned char)*p < 0x20)
        *p = ' ';
    matmul_set_error(inst->ocl.mm.host, BACKEND ": building %s: %s: %s", options,
                     ocl_error_name(err), log);
    clReleaseProgram(prog);
    return NULL;
  }
  program_entry *grown =
      realloc(inst->programs, (inst->program_count + 1) * sizeof *inst->programs);
  if (!grown) {
    clReleaseProgram(prog);
    return NULL;
  }
  inst->programs = grown;
  program_entry *e = &inst->programs[inst->program_count++];
  e->dev = s->ocl.dev;
  snprintf(e->options, sizeof e->options, "%s", options);
  e->program = prog;
  e->compile_seconds = now_seconds() - t0;
  if (inst->ocl.mm.host && inst->ocl.mm.host->log) {
    char msg[256];
    snprintf(msg, sizeof msg, BACKEND ": compiled %s in %.2f s", options, e->compile_seconds);
    inst->ocl.mm.host->log(inst->ocl.mm.host->context, CALHOST_LOG_DEBUG, msg);
  }
  return prog;
}

static calhost_status og_prepare(calhost_session *s, const char *policy, size_t length) {
  char err[256];
  xgemm_config c;
  cl_int e = CL_SUCCESS;
  size_t kwg = 0;
  if (!s)
    return CALHOST_INVALID_ARGUMENT;
  if (s->kernel) {
    clReleaseKernel(s->kernel);
    s->kernel = NULL;
  }
  s->ocl.mm.last_iterations = 0;
  if (xgemm_parse(policy, length, &c, err, sizeof err) != 0) {
    matmul_set_error(s->ocl.mm.host, BACKEND " policy refused: %s", err);
    return CALHOST_INVALID_ARGUMENT;
  }
  if (xgemm_fits(&c, s->ocl.dev->max_work_group, s->ocl.dev->max_item, s->ocl.dev->local_mem, err,
                 sizeof err) != 0) {
    matmul_set_error(s->ocl.mm.host, BACKEND ": does not fit device '%s': %s", s->ocl.dev->name,
                     err);
    return CALHOST_UNSUPPORTED;
  }
  cl_program prog = program_for(s, &c);
  if (!prog)
    return CALHOST_ERROR;
  s->kernel = clCreateKernel(prog, "xgemm", &e);
  if (!s->kernel) {
    matmul_set_error(s->ocl.mm.host, BACKEND ": clCreateKernel: %s", ocl_error_name(e));
    return CALHOST_ERROR;
  }
  /* The compiled kernel may allow less than the device (registers). */
  if (clGetKernelWorkGroupInfo(s->kernel, s->ocl.dev->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg,
                               &kwg, NULL) == CL_SUCCESS &&
      kwg < (size_t)c.v[XG_MDIMC] * c.v[XG_NDIMC]) {
    matmul_set_error(s->ocl.mm.host,
                     BACKEND ": the compiled kernel allows work-groups of %zu, not %u", kwg,
                     c.v[XG_MDIMC] * c.v[XG_NDIMC]);
    clReleaseKernel(s->kernel);
    s->kernel = NULL;
    return CALHOST_UNSUPPORTED;
  }
  const matmul_shape *sh = &s->ocl.mm.data.shape;
  const ocl_matmul_buffers *b = &s->ocl.buf;
  cl_int k = (cl_int)b->kp, nv = (cl_int)(b->np / c.v[XG_VW]), mp = (cl_int)b->mp;
  cl_int brs = 0, bcs = 0, batch = (cl_int)sh->batch, batch_a = (cl_int)sh->batch_a,
         batch_b = (cl_int)sh->batch_b;
  float beta = sh->accumulate ? 1.0f : 0.0f, alpha = sh->alpha, bbeta = sh->beta;
  if (sh->bias == MATMUL_BIAS_N || sh->bias == MATMUL_BIAS_MN)
    bcs = 1;
  if (sh->bias == MATMUL_BIAS_M)
    brs = 1;
  if (sh->bias == MATMUL_BIAS_MN)
    brs = (cl_int)b->np;
  e = clSetKernelArg(s->kernel, 0, sizeof k, &k);
  e |= clSetKernelArg(s->kernel, 1, sizeof nv, &nv);
  e |= clSetKernelArg(s->kernel, 2, sizeof beta, &beta);
  e |= clSetKernelArg(s->kernel, 3, sizeof b->a, &b->a);
  e |= clSetKernelArg(s->kernel, 4, sizeof b->b, &b->b);
  e |= clSetKernelArg(s->kernel, 5, sizeof b->c, &b->c);
  e |= clSetKernelArg(s->kernel, 6, sizeof mp, &mp);
  e |= clSetKernelArg(s->kernel, 7, sizeof alpha, &alpha);
  e |= clSetKernelArg(s->kernel, 8, sizeof b->bias, &b->bias); /* NULL without a bias */
  e |= clSetKernelArg(s->kernel, 9, sizeof brs, &brs);
  e |= clSetKernelArg(s->kernel, 10, sizeof bcs, &bcs);
  e |= clSetKernelArg(s->kernel, 11, sizeof bbeta, &bbeta);
  e |= clSetKernelArg(s->kernel, 12, sizeof batch, &batch);
  e |= clSetKernelArg(s->kernel, 13, sizeof batch_a, &batch_a);
  e |= clSetKernelArg(s->kernel, 14, sizeof batch_b, &batch_b);
  if (e != CL_SUCCESS) {
    matmul_set_error(s->ocl.mm.host, BACKEND ": clSetKernelArg failed");
    clReleaseKernel(s->kernel);
    s->kernel = NULL;
    return CALHOST_ERROR;
  }
  s->lws[0] = c.v[XG_MDIMC];
  s->lws[1] = c.v[XG_NDIMC];
  s->lws[2] = 1;
  s->gws[0] = b->mp / c.v[XG_MWG] * c.v[XG_MDIMC];
  s->gws[1] = b->np / c.v[XG_NWG] * c.v[XG_NDIMC];
  s->gws[2] = sh->batch;
  return CALHOST_OK;
}

/* The device loop's callbacks (device_timing.h): C reset, batches of
 * RUN_BATCH kernels, each waited for and timed by its profiling events. */
static int og_start(void *ctx, uint32_t iterations) {
  (void)iterations;
  return ocl_session_reset(&((calhost_session *)ctx)->ocl);
}

static uint32_t og_batch_size(void *ctx, uint32_t remaining) {
  (void)ctx;
  return remaining < RUN_BATCH ? remaining : RUN_BATCH;
}

static int og_batch(void *ctx, uint32_t count, double *seconds, int *timed) {
  calhost_session *s = ctx;
  cl_event events[RUN_BATCH];
  cl_int e = CL_SUCCESS;
  uint32_t n = 0;
  int ok;
  for (; n < count; n++) {
    e = clEnqueueNDRangeKernel(s->ocl.dev->queue, s->kernel, 3, NULL, s->gws, s->lws, 0, NULL,
                               &events[n]);
    if (e != CL_SUCCESS)
      break;
  }
  if (clFinish(s->ocl.dev->queue) != CL_SUCCESS && e == CL_SUCCESS)
    e = CL_OUT_OF_RESOURCES;
  *seconds += ocl_events_seconds(events, n, &ok);
  *timed &= ok;
  return e;
}

static const device_timing_ops og_timing = {og_start, og_batch_size, og_batch};

/* Runs `iterations` kernels (each the whole structure: C = alpha op(A)
 * op(B) + beta bias for every product of the batch, or C += from C0 when
 * accumulating) and reports the sum of their profiled durations. */
static calhost_status og_run(calhost_session *s, uint32_t iterations, calhost_run_result *result) {
  double device = 0;
  int timed = 1, e = 0;
  if (!s || !s->kernel)
    return CALHOST_INVALID_ARGUMENT;
  s->ocl.mm.last_iterations = 0;
  switch (device_timing_run(&og_timing, s, s->ocl.mm.host, iterations, &device, &timed, &e)) {
  case DEVICE_TIMING_START_FAILED:
    matmul_set_error(s->ocl.mm.host, BACKEND ": resetting C: %s", ocl_error_name(e));
    return CALHOST_ERROR;
  case DEVICE_TIMING_BATCH_FAILED:
    matmul_set_error(s->ocl.mm.host, BACKEND ": running the kernel: %s", ocl_error_name(e));
    return CALHOST_ERROR;
  case DEVICE_TIMING_CANCELLED:
    return CALHOST_CANCELLED;
  default:
    break;
  }
  s->ocl.mm.last_iterations = iterations;
  if (result && timed && CALHOST_HAS_FIELD(result, calhost_run_result, device_seconds))
    result->device_seconds = device;
  return CALHOST_OK;
}

/* ---- parameter space (ABI 2) ------------------------------------------ */

static calhost_status og_describe_space(calhost_session *s, calhost_parameter_space *out) {
  if (!s || !out)
    return CALHOST_INVALID_ARGUMENT;
  out->parameters = s->inst->params;
  out->parameter_count = XG_COUNT;
  out->default_assignment = s->default_assignment;
  return CALHOST_OK;
}

/* assignment -> configuration; -1 with reason when an index is out of range. */
static int from_assignment(const uint32_t *a, size_t count, xgemm_config *c, char *err,
                           size_t cap) {
  if (!a || count != XG_COUNT) {
    return matmul_fail(err, cap, "expected %d parameter indices, got %zu", XG_COUNT, count);
  }
  for (int k = 0; k < XG_COUNT; k++) {
    if (a[k] >= xgemm_params[k].count)
      return matmul_fail(err, cap, "%s: value index %u out of range [0, %u)", xgemm_params[k].name,
                         a[k], xgemm_params[k].count);
    c->v[k] = xgemm_params[k].values[a[k]];
  }
  return 0;
}

static calhost_status og_assignment_valid(calhost_session *s, const uint32_t *a, size_t count,
                                          char *err, size_t cap) {
  xgemm_config c;
  if (!s)
    return CALHOST_INVALID_ARGUMENT;
  if (from_assignment(a, count, &c, err, cap) != 0 || xgemm_valid(&c, err, cap) != 0 ||
      xgemm_fits(&c, s->ocl.dev->max_work_group, s->ocl.dev->max_item, s->ocl.dev->local_mem, err,
                 cap) != 0)
    return CALHOST_INVALID_ARGUMENT;
  return CALHOST_OK;
}

static calhost_status og_serialize_assignment(calhost_session *s, const uint32_t *a, size_t count,
                                              char *buf, size_t capacity, size_t *length) {
  xgemm_config c;
  if (!s || from_assignment(a, count, &c, NULL, 0) != 0 || xgemm_valid(&c, NULL, 0) != 0)
    return CALHOST_INVALID_ARGUMENT;
  return policy_out(&c, buf, capacity, length);
}

static calhost_status og_policy_assignment(calhost_session *s, const char *policy, size_t length,
                                           uint32_t *a, size_t count) {
  xgemm_config c;
  if (!s || !a || count != XG_COUNT || xgemm_parse(policy, length, &c, NULL, 0) != 0)
    return CALHOST_INVALID_ARGUMENT;
  for (int k = 0; k < XG_COUNT; k++)
    for (uint32_t i = 0; i < xgemm_params[k].count; i++)
      if (xgemm_params[k].values[i] == c.v[k])
        a[k] = i;
  return CALHOST_OK;
}

/* ---- identity, samples, vtable ----------------------------------------- */

static const int64_t sample_small[] = {64, 64, 64}, sample_odd[] = {100, 72, 40};
static const calhost_property sample_acc[] = {{"accumulate", "1"}};
static const calhost_workload sample_w1 = MATMUL_SAMPLE("matmul_64", sample_small, NULL, 0);
static const calhost_workload sample_w2 =
    MATMUL_SAMPLE("matmul_100x72x40_acc", sample_odd, sample_acc, 1);
static const calhost_workload *const og_samples[] = {&sample_w1, &sample_w2, NULL};

/* The shared entries, under this plugin's names (ocl_device.c, plugins/common/matmul.c). */
#define og_build_key ocl_instance_build_key
#define og_candidate_count matmul_candidate_count

/* The vtable and the one exported symbol (CALHOST_PLUGIN_DEFINE,
 * calhost/plugin.h), which touches no OpenCL. */
CALHOST_PLUGIN_DEFINE(og, 2u, BACKEND, "1.0.0", matmul_operators,
                      "OpenCL SGEMM with a tunable Xgemm-style kernel, calibrated per device",
                      .default_policy = og_default_policy, .check = ocl_session_check,
                      .device_count = ocl_instance_device_count,
                      .list_device = ocl_instance_list_device, CALHOST_PLUGIN_SPACE_ENTRIES(og),
                      .sample_workloads = og_samples);
