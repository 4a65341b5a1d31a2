/*
 * rowsum_device.c: an ABI 2 device backend to start from, beside the
 * template (which is a CPU backend without devices or space). Operator
 * "ReduceSum" over the last axis of a float32 matrix (rows x cols -> rows),
 * with everything ABI 2 adds:
 *
 *  - devices: device_count and list_device. The "device" here is a
 *    simulated accelerator that runs on the host's CPUs (kind
 *    CALHOST_DEVICE_CPU, hardware "cpu"), so the example builds and runs
 *    everywhere; a real backend lists its runtime's devices (OpenCL
 *    clGetDeviceIDs, cudaGetDeviceCount) with an identity that carries what
 *    changes performance (vendor, name, driver, compute units, clocks).
 *  - a described parameter space (describe_space, assignment_valid,
 *    serialize_assignment, policy_assignment): rows per block x unroll x
 *    accumulators, with a validity rule (unroll * accumulators <= 32, and no
 *    more accumulators than columns), and the default's assignment.
 *  - device timers: run() reports device_seconds, the time the device's own
 *    clock measured for the kernels alone (here the computing thread's CPU
 *    clock; a real backend sums OpenCL profiling events' END - START or
 *    cudaEventElapsedTime). Never report 0: a timer that was not started
 *    (an OpenCL queue without CL_QUEUE_PROFILING_ENABLE) reads 0, and the
 *    host refuses it.
 *  - sample workloads, which `calhost plugin check` uses.
 *
 * Settings ([plugin rowsum_device] in the configuration, or `calhost plugin
 * check --setting KEY=VALUE`): devices_visible = 1 or 2 (how many simulated
 * devices to list; default 1). See the SDK guide
 * (share/doc/calhost/plugin-sdk.md), "Device backends".
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <calhost/plugin.h>

/* ---- the parameter space ---------------------------------------------- */

static const char *const block_values[] = {"1", "2", "4", "8", "16", "32"};
static const char *const unroll_values[] = {"1", "2", "4", "8"};
static const char *const acc_values[] = {"1", "2", "4", "8", "16"};
static const unsigned block_n[] = {1, 2, 4, 8, 16, 32}, unroll_n[] = {1, 2, 4, 8},
                      acc_n[] = {1, 2, 4, 8, 16};
#define NB 6u
#define NU 4u
#define NA 5u
static const calhost_parameter params[] = {
    {"block_rows", block_values, NB, CALHOST_PARAMETER_ORDERED},
    {"unroll", unroll_values, NU, CALHOST_PARAMETER_ORDERED},
    {"accumulators", acc_values, NA, CALHOST_PARAMETER_ORDERED},
};
/* the default: block_rows=4 unroll=1 accumulators=1 */
static const uint32_t default_assignment[] = {2, 0, 0};
/* the curated list (numbered candidates), most plausible first */
static const uint32_t curated[][3] = {{2, 1, 1}, {3, 2, 2}, {4, 1, 2}, {1, 3, 1}, {5, 2, 3}};
#define NCURATED (sizeof curated / sizeof curated[0])

/* ---- instance and devices --------------------------------------------- */

struct calhost_plugin_instance {
  const calhost_host_services *host;
  unsigned devices;
  char identity[2][160];
  char rows[32], cols[32];
  calhost_property structure[3];
};

static calhost_status rowsum_device_create(const calhost_host_services *host,
                                           const calhost_property *settings, size_t setting_count,
                                           calhost_plugin_instance **out) {
  unsigned devices = 1;
  for (size_t i = 0; i < setting_count; i++) {
    if (strcmp(settings[i].name, "devices_visible") ||
        (strcmp(settings[i].value, "1") && strcmp(settings[i].value, "2"))) {
      char m[200];
      snprintf(m, sizeof m,
               "unknown setting '%.80s=%.40s' (rowsum_device takes devices_visible = 1 or 2)",
               settings[i].name, settings[i].value);
      host->set_error(host->context, m);
      return CALHOST_INVALID_ARGUMENT;
    }
    devices = (unsigned)atoi(settings[i].value);
  }
  calhost_plugin_instance *in = calloc(1, sizeof *in);
  if (!in)
    return CALHOST_NO_MEMORY;
  in->host = host;
  in->devices = devices;
  for (unsigned d = 0; d < 2; d++) /* stable: the same on every listing */
    snprintf(in->identity[d], sizeof in->identity[d],
             "rowsum-sim:simulated accelerator %u/runs on the host CPUs/version 1", d);
  *out = in;
  return CALHOST_OK;
}

static void rowsum_device_destroy(calhost_plugin_instance *inst) {
  free(inst);
}

static calhost_status rowsum_device_device_count(calhost_plugin_instance *inst, uint32_t *count) {
  *count = inst->devices;
  return CALHOST_OK;
}

static calhost_status rowsum_device_list_device(calhost_plugin_instance *inst, uint32_t position,
                                                calhost_device_info *out) {
  if (position >= inst->devices)
    return CALHOST_INVALID_ARGUMENT;
  out->index = position;
  out->kind = CALHOST_DEVICE_CPU; /* the host serialises it with its CPU sweeps */
  out->identity = inst->identity[position];
  out->name = position ? "rowsum sim 1" : "rowsum sim 0";
  out->hardware = "cpu"; /* both share the host's CPUs */
  return CALHOST_OK;
}

/* ---- workloads and keys ----------------------------------------------- */

/* rows x cols of a float32 ReduceSum over the last axis (rank 2), or 0. */
static int matrix(const calhost_workload *w, size_t *rows, size_t *cols) {
  if (strcmp(w->operator_name, "ReduceSum") || strcmp(w->dtype, "float32") || w->shape_rank != 2 ||
      w->shape[0] <= 0 || w->shape[1] <= 0 || w->shape[0] > (1 << 20) || w->shape[1] > (1 << 20) ||
      (uint64_t)w->shape[0] * (uint64_t)w->shape[1] > (1u << 26))
    return 0;
  *rows = (size_t)w->shape[0];
  *cols = (size_t)w->shape[1];
  return 1;
}

static calhost_status rowsum_device_build_key(calhost_plugin_instance *inst,
                                              const calhost_workload *w, const calhost_target *t,
                                              calhost_built_key *out) {
  size_t rows, cols;
  if (!matrix(w, &rows, &cols))
    return CALHOST_UNSUPPORTED;
  snprintf(inst->rows, sizeof inst->rows, "%zu", rows);
  snprintf(inst->cols, sizeof inst->cols, "%zu", cols);
  inst->structure[0] = (calhost_property){"dtype", "float32"};
  inst->structure[1] = (calhost_property){"rows", inst->rows};
  inst->structure[2] = (calhost_property){"cols", inst->cols};
  out->model_digest = w->model_digest;
  out->processor = t->processor; /* a device target: the device's identity */
  out->thread_count = 1;
  out->structure = inst->structure;
  out->structure_count = 3;
  return CALHOST_OK;
}

/* ---- policies: "block_rows=B;unroll=U;accumulators=A" ----------------- */

static int valid(const uint32_t *a, size_t cols) {
  return a[0] < NB && a[1] < NU && a[2] < NA && unroll_n[a[1]] * acc_n[a[2]] <= 32 &&
         acc_n[a[2]] <= cols;
}

static void format(const uint32_t *a, char *buf, size_t cap) {
  snprintf(buf, cap, "block_rows=%u;unroll=%u;accumulators=%u", block_n[a[0]], unroll_n[a[1]],
           acc_n[a[2]]);
}

static int position(const unsigned *v, size_t n, unsigned x) {
  for (size_t i = 0; i < n; i++)
    if (v[i] == x)
      return (int)i;
  return -1;
}

/* Strict: exactly the canonical text of an assignment within the space's
 * values (the validity rule that depends on the shape is prepare's). */
static int parse(const char *p, size_t len, uint32_t *a) {
  char buf[96], canon[96];
  unsigned b, u, c;
  if (len == 0 || len >= sizeof buf || memchr(p, '\0', len))
    return -1;
  memcpy(buf, p, len);
  buf[len] = '\0';
  if (sscanf(buf, "block_rows=%u;unroll=%u;accumulators=%u", &b, &u, &c) != 3)
    return -1;
  int ib = position(block_n, NB, b), iu = position(unroll_n, NU, u), ia = position(acc_n, NA, c);
  if (ib < 0 || iu < 0 || ia < 0)
    return -1;
  a[0] = (uint32_t)ib, a[1] = (uint32_t)iu, a[2] = (uint32_t)ia;
  format(a, canon, sizeof canon);
  return strcmp(canon, buf) == 0 && unroll_n[a[1]] * acc_n[a[2]] <= 32 ? 0 : -1;
}

static calhost_status rowsum_device_validate_policy(calhost_plugin_instance *inst,
                                                    const char *policy, size_t length, char *err,
                                                    size_t cap) {
  uint32_t a[3];
  (void)inst;
  if (parse(policy, length, a) == 0)
    return CALHOST_OK;
  snprintf(err, cap,
           "expected block_rows={1..32};unroll={1,2,4,8};accumulators={1..16} with "
           "unroll*accumulators <= 32");
  return CALHOST_INVALID_ARGUMENT;
}

/* ---- sessions ------------------------------------------------------------ */

struct calhost_session {
  const calhost_host_services *host;
  size_t rows, cols;
  float *in, *out;
  uint32_t a[3]; /* the prepared assignment */
  uint32_t curated[NCURATED][3];
  uint32_t ncurated; /* the curated candidates valid for this shape */
};

static calhost_status rowsum_device_open_session(calhost_plugin_instance *inst,
                                                 const calhost_workload *w, const calhost_target *t,
                                                 calhost_session **out) {
  size_t rows, cols;
  if (!matrix(w, &rows, &cols))
    return CALHOST_UNSUPPORTED;
  /* a device target names one of our devices: refuse a stale one (the host
   * then recalibrates instead of measuring the wrong device) */
  if (CALHOST_HAS_FIELD(t, calhost_target, device_index) && t->device_identity &&
      (t->device_index >= inst->devices ||
       strcmp(t->device_identity, inst->identity[t->device_index]))) {
    inst->host->set_error(inst->host->context, "no such rowsum device (identity changed?)");
    return CALHOST_UNSUPPORTED;
  }
  calhost_session *s = calloc(1, sizeof *s);
  if (!s)
    return CALHOST_NO_MEMORY;
  s->host = inst->host;
  s->rows = rows;
  s->cols = cols;
  s->in = malloc(rows * cols * sizeof *s->in);
  s->out = calloc(rows, sizeof *s->out);
  if (!s->in || !s->out) {
    free(s->in), free(s->out), free(s);
    return CALHOST_NO_MEMORY;
  }
  for (size_t i = 0; i < rows * cols; i++)
    s->in[i] = (float)(i % 7) - 3.0f;   /* small integers: every order of sums is exact */
  for (size_t i = 0; i < NCURATED; i++) /* the curated list, filtered by the shape */
    if (valid(curated[i], cols))
      memcpy(s->curated[s->ncurated++], curated[i], sizeof curated[i]);
  *out = s;
  return CALHOST_OK;
}

static void rowsum_device_close_session(calhost_session *s) {
  if (s)
    free(s->in), free(s->out);
  free(s);
}

static calhost_status rowsum_device_candidate_count(calhost_session *s, uint32_t *count) {
  *count = s->ncurated ? s->ncurated : 1;
  return CALHOST_OK;
}

static calhost_status rowsum_device_serialize_candidate(calhost_session *s, uint32_t index,
                                                        char *buf, size_t capacity,
                                                        size_t *length) {
  char text[96];
  if (index >= (s->ncurated ? s->ncurated : 1))
    return CALHOST_INVALID_ARGUMENT;
  format(s->ncurated ? s->curated[index] : default_assignment, text, sizeof text);
  return calhost_copy_out(text, buf, capacity, length);
}

static calhost_status rowsum_device_default_policy(calhost_session *s, char *buf, size_t cap,
                                                   size_t *len) {
  char text[96];
  (void)s;
  format(default_assignment, text, sizeof text);
  return calhost_copy_out(text, buf, cap, len);
}

/* The space: its parameters and the default's assignment, static data. */
static calhost_status rowsum_device_describe_space(calhost_session *s,
                                                   calhost_parameter_space *out) {
  (void)s;
  out->parameters = params;
  out->parameter_count = 3;
  out->default_assignment = default_assignment;
  return CALHOST_OK;
}

/* The validity rule: cheap (the host calls it often), no device work. */
static calhost_status rowsum_device_assignment_valid(calhost_session *s, const uint32_t *a,
                                                     size_t n, char *err, size_t cap) {
  if (n == 3 && valid(a, s->cols))
    return CALHOST_OK;
  snprintf(err, cap, "needs unroll*accumulators <= 32 and accumulators <= cols (%zu)", s->cols);
  return CALHOST_INVALID_ARGUMENT;
}

static calhost_status rowsum_device_serialize_assignment(calhost_session *s, const uint32_t *a,
                                                         size_t n, char *buf, size_t cap,
                                                         size_t *len) {
  char text[96];
  if (n != 3 || !valid(a, s->cols))
    return CALHOST_INVALID_ARGUMENT;
  format(a, text, sizeof text);
  return calhost_copy_out(text, buf, cap, len);
}

static calhost_status rowsum_device_policy_assignment(calhost_session *s, const char *policy,
                                                      size_t length, uint32_t *a, size_t n) {
  (void)s;
  return n == 3 && parse(policy, length, a) == 0 ? CALHOST_OK : CALHOST_INVALID_ARGUMENT;
}

static calhost_status rowsum_device_prepare(calhost_session *s, const char *policy, size_t length) {
  memset(s->out, 0, s->rows * sizeof *s->out); /* check() must see this candidate's output */
  if (parse(policy, length, s->a) != 0)
    return CALHOST_INVALID_ARGUMENT;
  if (!valid(s->a, s->cols)) { /* a stored policy for another shape */
    s->host->set_error(s->host->context, "more accumulators than columns");
    return CALHOST_UNSUPPORTED;
  }
  return CALHOST_OK;
}

/* The kernel: block_rows rows at a time, each summed with `accumulators`
 * partial sums, the inner loop unrolled `unroll` times. */
static void kernel(calhost_session *s) {
  unsigned block = block_n[s->a[0]], unroll = unroll_n[s->a[1]], acc = acc_n[s->a[2]];
  size_t cols = s->cols, step = (size_t)unroll * acc;
  for (size_t r0 = 0; r0 < s->rows; r0 += block)
    for (size_t r = r0; r < r0 + block && r < s->rows; r++) {
      const float *row = s->in + r * cols;
      float part[16] = {0};
      size_t c = 0;
      for (; c + step <= cols; c += step)
        for (unsigned u = 0; u < unroll; u++)
          for (unsigned k = 0; k < acc; k++)
            part[k] += row[c + u * acc + k];
      for (; c < cols; c++)
        part[0] += row[c];
      float sum = 0;
      for (unsigned k = 0; k < acc; k++)
        sum += part[k];
      s->out[r] = sum;
    }
}

static double device_clock(void) { /* the "device's" own timer */
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static calhost_status rowsum_device_run(calhost_session *s, uint32_t iterations,
                                        calhost_run_result *result) {
  double device = 0;
  for (uint32_t it = 0; it < iterations; it++) {
    double t0 = device_clock();
    kernel(s);
    device += device_clock() - t0;
    if ((it & 63) == 63 && s->host->is_cancelled(s->host->context))
      return CALHOST_CANCELLED;
  }
  /* the device's time for all iterations, never 0 (a clock that did not
   * advance: report the smallest tick rather than a time the host refuses) */
  if (CALHOST_HAS_FIELD(result, calhost_run_result, device_seconds))
    result->device_seconds = device > 0 ? device : 1e-9 * iterations;
  return CALHOST_OK;
}

static calhost_status rowsum_device_check(calhost_session *s, char *err, size_t cap) {
  for (size_t r = 0; r < s->rows; r++) {
    float want = 0;
    for (size_t c = 0; c < s->cols; c++)
      want += s->in[r * s->cols + c];
    if (s->out[r] != want) {
      snprintf(err, cap, "row %zu sums to %g, expected %g", r, (double)s->out[r], (double)want);
      return CALHOST_CHECK_FAILED;
    }
  }
  return CALHOST_OK;
}

static const char *const operators[] = {"ReduceSum", NULL};

/* The sample workloads `calhost plugin check` uses, smallest first. */
static const int64_t small_shape[] = {64, 256}, wide_shape[] = {16, 4096};
static const calhost_workload small_w = {
    .header = {CALHOST_STRUCT_WORKLOAD, 1, sizeof(calhost_workload)},
    .name = "rowsum_64x256",
    .operator_name = "ReduceSum",
    .dtype = "float32",
    .shape = small_shape,
    .shape_rank = 2};
static const calhost_workload wide_w = {
    .header = {CALHOST_STRUCT_WORKLOAD, 1, sizeof(calhost_workload)},
    .name = "rowsum_16x4096",
    .operator_name = "ReduceSum",
    .dtype = "float32",
    .shape = wide_shape,
    .shape_rank = 2};
static const calhost_workload *const samples[] = {&small_w, &wide_w, NULL};

CALHOST_PLUGIN_DEFINE(rowsum_device, 2u, "rowsum_device", "1", operators,
                      "example device backend: float32 row-wise ReduceSum on a simulated device",
                      .default_policy = rowsum_device_default_policy, .check = rowsum_device_check,
                      .device_count = rowsum_device_device_count,
                      .list_device = rowsum_device_list_device, .sample_workloads = samples,
                      CALHOST_PLUGIN_SPACE_ENTRIES(rowsum_device));
