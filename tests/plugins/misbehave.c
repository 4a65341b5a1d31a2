/*
 * misbehave.c: the one generator of test-only plugins, for the loader's,
 * the checker's, the sweep's, the CLI's and the reliability suite's tests.
 * One small, correct backend ("test_good": operator ReduceSum, policies
 * "p=1".."p=4", debug and info log lines in create) that each -DBAD_* macro
 * breaks in exactly one way (OP_TRANSPOSE: a correct Transpose backend that
 * needs a 2-D shape); tests/plugins/CMakeLists.txt builds one module per
 * macro (test_* into lib/calhost/test-plugins, rel_* into
 * lib/calhost/reliability-plugins). Never installed. The reliability
 * suite's variants (sweep_plugins.sh):
 *   BAD_FLOOD          run() writes 256 KiB to stdout on every call
 *   BAD_FLOOD_FOREVER  run() writes to stdout without end
 *   BAD_FLOOD_CREATE   create() writes 1 MiB to stdout (in whatever process
 *                      loads the plugin, the host's included)
 *   BAD_EXIT0          run() calls exit(0): a "success" status mid-sweep
 *   BAD_NEWLINE        the policy holds a line break (the store format
 *                      cannot carry it), and the validator accepts it
 *   BAD_NUL            the policy's length covers an embedded NUL
 *   BAD_LENGTH_LIE     serialize_candidate says OK with a length larger
 *                      than the buffer it was given
 *   BAD_QUOTES         a valid policy full of quotes and backslashes (must be
 *                      stored and read back byte for byte)
 *   BAD_MAX_POLICY     valid policies of exactly CALHOST_POLICY_MAX_LENGTH
 *                      bytes (the largest allowed: must be stored)
 * FAKE_SPACE (ABI 2) describes the four candidates as one ordered parameter
 * "p" (values 1..4); with BAD_SPACE its validity test also accepts an index
 * out of range and serialize_assignment writes a policy the validator
 * refuses ("q=N"), as a careless plugin would.
 * BAD_DEFAULT (with FAKE_SPACE) declares two sample workloads (ReduceSum
 * 4096 "small", 65536 "big") and a default assignment p=4 that its own
 * assignment_valid refuses on the big one only.
 * BAD_ZERO_TIME: run() reports device_seconds = 0 (a device timer never
 * started: an OpenCL queue without CL_QUEUE_PROFILING_ENABLE).
 * BAD_UNSTABLE_DEVICE (with FAKE_DEVICES): device 1's identity changes at
 * every listing.
 * SETTINGS: create() takes the setting "fail" (any value: create fails
 * saying so) and "scale" (a number), and refuses any other naming it.
 * BAD_EXIT_IN: calls exit(0) in the entry named by CALHOST_TEST_EXIT_IN
 * ("negotiate", "create", "build_key" or "validate_policy"; unset: none),
 * as a vendor library exiting on a fatal error does, in whatever process
 * makes the call (calhost's own for `lookup --workload`).
 * BAD_NONDET_KEY builds a different portable key at every call.
 * BAD_CRASH_CREATE crashes in create() (config check --plugins must say
 * so, not blame a device listing).
 * BAD_CRASH_RUN with BAD_STDERR (test_crash_loud): says something on
 * stderr, then crashes, as a sanitizer's report does.
 * BAD_SHORT_ASK: serialize_candidate always says CALHOST_BUFFER_TOO_SMALL,
 * asking for fewer bytes than it was given.
 * BAD_CRASH_ONE crashes in candidate p=2 only (the sweep must go on
 * without it); BAD_HANG_ONE hangs in it. BAD_CRASH_VALIDATE crashes in
 * validate_policy("p=3") (the crash is p=3's, not the candidate before
 * it); BAD_CRASH_CLOSE in close_session (between candidates). BAD_HANG creates the
 * file named by CALHOST_TEST_RUNNING_MARK (when set) as it starts hanging,
 * so a test can wait for a candidate to be running instead of sleeping.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calhost/plugin.h"

#ifdef CALHOST_TEST_FROZEN_ABI1 /* test_abi1: built against tests/plugins/abi1 */
_Static_assert(CALHOST_ABI_VERSION == 1u, "test_abi1 must see the frozen ABI 1 header");
#endif

#ifndef BACKEND
#define BACKEND "test_good"
#endif
#ifndef PLUGIN_ABI_MIN
#define PLUGIN_ABI_MIN CALHOST_ABI_VERSION_MIN
#endif
#ifndef PLUGIN_ABI_MAX
#define PLUGIN_ABI_MAX 1u /* the test plugins are ABI 1 unless a variant says otherwise */
#endif
#define OVERSIZE (CALHOST_POLICY_MAX_LENGTH * 16u)
/* Variants whose policies carry more than "p=N": the validator accepts
 * "p=N" followed by anything (up to the maximum length), to see what the
 * host and the store do with what a plugin accepts. */
#if defined(BAD_NEWLINE) || defined(BAD_NUL) || defined(BAD_LENGTH_LIE) || defined(BAD_QUOTES) ||  \
    defined(BAD_MAX_POLICY)
#define ACCEPT_ANY_TAIL 1
#else
#define ACCEPT_ANY_TAIL 0
#endif

struct calhost_plugin_instance {
  const calhost_host_services *host;
  calhost_property structure[1];
};
struct calhost_session {
  int p;
  double out;
  int device; /* FAKE_DEVICES: 1 + the device index, 0 for none */
  const calhost_host_services *host;
  int64_t size; /* the workload's first dimension (BAD_DEFAULT) */
};

static void garbage(const char *where) {
#if defined(BAD_STDOUT)
  printf("garbage from %s \x01\x02 {not json\n", where);
  fflush(stdout);
#elif defined(BAD_STDOUT_BUFFERED)
  printf("buffered garbage from %s {not json\n", where); /* left in stdio's buffer */
#elif defined(BAD_STDERR)
  fprintf(stderr, "chatter on stderr from %s\n", where);
#else
  (void)where;
#endif
}

/* BAD_EXIT_IN: exit(0) when CALHOST_TEST_EXIT_IN names this entry. */
__attribute__((unused)) static void exit_in(const char *entry) {
  const char *want = getenv("CALHOST_TEST_EXIT_IN");
  if (want && !strcmp(want, entry))
    exit(0);
}

__attribute__((unused)) static void flood(size_t bytes) {
  static char chunk[65536];
  memset(chunk, 'F', sizeof chunk);
  chunk[sizeof chunk - 1] = '\n';
  while (bytes > 0) {
    size_t n = bytes < sizeof chunk ? bytes : sizeof chunk;
    if (write(STDOUT_FILENO, chunk, n) < 0)
      return;
    bytes -= n;
  }
}

#ifdef BAD_EXPORT
/* A second exported symbol (the guide: only the entry point). */
CALHOST_PLUGIN_EXPORT int test_extra_symbol(void);
CALHOST_PLUGIN_EXPORT int test_extra_symbol(void) {
  return 42;
}
#endif

/* The operator and the shape rank build_key accepts (0: any). */
#ifdef OP_TRANSPOSE
#define OPERATOR "Transpose"
#define REQUIRE_RANK 2
#else
#define OPERATOR "ReduceSum"
#define REQUIRE_RANK 0
#endif

static calhost_status create(const calhost_host_services *host, const calhost_property *settings,
                             size_t setting_count, calhost_plugin_instance **out) {
#ifdef SETTINGS
  for (size_t i = 0; i < setting_count; i++) {
    if (!strcmp(settings[i].name, "fail")) {
      host->set_error(host->context, "create failed as the setting fail asked");
      return CALHOST_ERROR;
    }
    if (strcmp(settings[i].name, "scale")) {
      char m[160];
      snprintf(m, sizeof m, "unknown setting '%.100s' (known: fail, scale)", settings[i].name);
      host->set_error(host->context, m);
      return CALHOST_INVALID_ARGUMENT;
    }
  }
#else
  (void)settings;
  (void)setting_count;
#endif
  garbage("create");
#ifdef BAD_EXIT_IN
  exit_in("create");
#endif
  /* CALHOST_TEST_CREATE_LOG=FILE: append the creating process's id (the
   * calibrate test checks that instances are created in children only) */
  const char *log = getenv("CALHOST_TEST_CREATE_LOG");
  FILE *lf = log && *log ? fopen(log, "a") : NULL;
  if (lf) {
    fprintf(lf, "%ld\n", (long)getpid());
    fclose(lf);
  }
#ifdef BAD_FLOOD_CREATE
  flood(1u << 20);
#endif
  host->log(host->context, CALHOST_LOG_DEBUG, "debug message from create");
  host->log(host->context, CALHOST_LOG_INFO, "info message from create");
#ifdef BAD_CREATE
  host->set_error(host->context, "no device for \033]0;retitled\007 this test");
  return CALHOST_UNSUPPORTED;
#endif
#ifdef BAD_CRASH_CREATE
  raise(SIGSEGV);
#endif
  *out = calloc(1, sizeof **out);
  if (!*out)
    return CALHOST_NO_MEMORY;
  (*out)->host = host;
  return CALHOST_OK;
}

static void destroy(calhost_plugin_instance *inst) {
  free(inst);
}

static calhost_status build_key(calhost_plugin_instance *inst, const calhost_workload *w,
                                const calhost_target *t, calhost_built_key *out) {
#ifdef BAD_EXIT_IN
  exit_in("build_key");
#endif
  if (REQUIRE_RANK && w->shape_rank != REQUIRE_RANK) {
    inst->host->set_error(inst->host->context, "needs a 2-D shape");
    return CALHOST_UNSUPPORTED;
  }
#ifdef BAD_UNSUPPORTED
  inst->host->set_error(inst->host->context, "this test supports no workload");
  return CALHOST_UNSUPPORTED;
#endif
  inst->structure[0] = (calhost_property){"operator", w->operator_name};
  out->model_digest = w->model_digest;
  out->processor = t->processor;
  out->thread_count = t->thread_count ? t->thread_count : 1;
  out->structure = inst->structure;
  out->structure_count = 1;
#ifdef BAD_NONDET_KEY
  static char varying[32];
  static unsigned calls;
  snprintf(varying, sizeof varying, "call %u", ++calls);
  inst->structure[0].value = varying;
#endif
  return CALHOST_OK;
}

static calhost_status validate_policy(calhost_plugin_instance *inst, const char *policy,
                                      size_t length, char *err, size_t cap) {
  (void)inst;
#ifdef BAD_EXIT_IN
  exit_in("validate_policy");
#endif
#ifdef BAD_CRASH_VALIDATE
  if (length == 3 && !memcmp(policy, "p=3", 3))
    raise(SIGSEGV);
#endif
#ifdef BAD_REFUSE_ALL
  (void)policy;
  (void)length;
#elif ACCEPT_ANY_TAIL
  if (length >= 3 && length <= CALHOST_POLICY_MAX_LENGTH && policy[0] == 'p' && policy[1] == '=' &&
      policy[2] >= '1' && policy[2] <= '4')
    return CALHOST_OK;
#else
  size_t need = 3;
#ifdef BAD_OVERSIZED
  need = OVERSIZE;
#endif
  if (length == need && policy[0] == 'p' && policy[1] == '=' && policy[2] >= '1' &&
      policy[2] <= '4') {
    size_t i = 3;
    while (i < length && policy[i] == 'x')
      i++;
    if (i == length)
      return CALHOST_OK;
  }
#endif
  snprintf(err, cap, "not a test policy");
  return CALHOST_INVALID_ARGUMENT;
}

#ifdef FAKE_DEVICES
/* Three devices (ABI 2): two GPUs on different hardware and one device on
 * the host's CPUs. With CALHOST_TEST_DEVICE_DIR set, a session on device i
 * leaves start-i (open) and done-i (close) there, and writes overlap-i:
 * for a GPU whether the other GPU's session started while it waited (up to
 * 20 s: a rendezvous, no timing), for the CPU device whether a GPU session
 * was open when it started. */
static const char *const fake_identity[] = {"fake-gpu-a v1", "fake-gpu-b v1", "fake-cpu v1"};
static const char *const fake_hardware[] = {"hw-a", "hw-b", "cpu"};

static int fake_marker(const char *what, uint32_t i, int create) {
  const char *dir = getenv("CALHOST_TEST_DEVICE_DIR");
  char path[1024];
  if (!dir || !*dir)
    return 0;
  snprintf(path, sizeof path, "%s/%s-%u", dir, what, i);
  if (!create)
    return access(path, F_OK) == 0;
  FILE *f = fopen(path, "a");
  if (f)
    fclose(f);
  return 1;
}

static void fake_session_start(uint32_t i) {
  const char *dir = getenv("CALHOST_TEST_DEVICE_DIR");
  if (!dir || !*dir || fake_marker("start", i, 0))
    return;
  fake_marker("start", i, 1);
  if (getenv("CALHOST_TEST_DEVICE_UNTIL_CANCELLED"))
    return; /* no rendezvous: its wait would spend the time budget */
  int overlap = 0;
  if (i < 2) {
    for (int k = 0; k < 2000 && !overlap; k++) {
      overlap = fake_marker("start", 1 - i, 0);
      if (!overlap)
        usleep(10000);
    }
  } else {
    overlap = (fake_marker("start", 0, 0) && !fake_marker("done", 0, 0)) ||
              (fake_marker("start", 1, 0) && !fake_marker("done", 1, 0));
  }
  fake_marker(overlap ? "overlap" : "alone", i, 1);
}

/* CALHOST_TEST_DEVICE_COUNT=0: a machine without the devices; N above 3
 * (at most FAKE_MAX): GPUs 3..N-1 besides, each on its own hardware
 * ("fake-gpu-I v1" on "hw-I"), so that they all share one wave. */
#define FAKE_MAX 128
static uint32_t fake_count(void) {
  const char *n = getenv("CALHOST_TEST_DEVICE_COUNT");
  long v = n ? strtol(n, NULL, 10) : 3;
  return n && *n == '0' ? 0 : v > 3 && v <= FAKE_MAX ? (uint32_t)v : 3;
}

static calhost_status device_count(calhost_plugin_instance *inst, uint32_t *count) {
  (void)inst;
  *count = fake_count();
  return CALHOST_OK;
}

static calhost_status list_device(calhost_plugin_instance *inst, uint32_t position,
                                  calhost_device_info *out) {
  static char more_identity[FAKE_MAX][32], more_hardware[FAKE_MAX][16];
  (void)inst;
  if (position >= fake_count())
    return CALHOST_INVALID_ARGUMENT;
  out->index = position;
  out->kind = position != 2 ? CALHOST_DEVICE_GPU : CALHOST_DEVICE_CPU;
  if (position >= 3) {
    snprintf(more_identity[position], sizeof more_identity[position], "fake-gpu-%u v1",
             (unsigned)position);
    snprintf(more_hardware[position], sizeof more_hardware[position], "hw-%u", (unsigned)position);
    out->identity = more_identity[position];
    out->name = "fake gpu";
    out->hardware = more_hardware[position];
    return CALHOST_OK;
  }
  out->identity = fake_identity[position];
  if (position == 0 && getenv("CALHOST_TEST_DEVICE_NO_IDENTITY")) /* a careless backend */
    out->identity = "";
#ifdef BAD_UNSTABLE_DEVICE
  static unsigned listed;
  static char moving[64];
  if (position == 1) {
    snprintf(moving, sizeof moving, "fake-gpu-b v1 #%u", ++listed);
    out->identity = moving;
  }
#endif
  out->name = position < 2 ? "fake gpu" : "fake cpu device";
  out->hardware = fake_hardware[position];
  return CALHOST_OK;
}
#endif

static calhost_status open_session(calhost_plugin_instance *inst, const calhost_workload *w,
                                   const calhost_target *t, calhost_session **out) {
  (void)w;
  (void)t;
  *out = calloc(1, sizeof **out);
  if (*out)
    (*out)->host = inst->host;
  if (*out && w->shape && w->shape_rank)
    (*out)->size = w->shape[0];
#ifdef FAKE_DEVICES
  if (*out && CALHOST_HAS_FIELD(t, calhost_target, device_index) && t->device_identity) {
    (*out)->device = 1 + (int)t->device_index;
    fake_session_start(t->device_index);
  }
#endif
  return *out ? CALHOST_OK : CALHOST_NO_MEMORY;
}

static void close_session(calhost_session *s) {
#ifdef BAD_CRASH_CLOSE
  raise(SIGSEGV);
#endif
#ifdef FAKE_DEVICES
  if (s && s->device)
    fake_marker("done", (uint32_t)(s->device - 1), 1);
#endif
  free(s);
}

static calhost_status candidate_count(calhost_session *s, uint32_t *count) {
  (void)s;
  *count = 4;
  return CALHOST_OK;
}

static calhost_status serialize_candidate(calhost_session *s, uint32_t index, char *buf,
                                          size_t capacity, size_t *length) {
  (void)s;
  if (index >= 4)
    return CALHOST_INVALID_ARGUMENT;
#if defined(BAD_EMPTY_POLICY)
  return calhost_copy_out("", buf, capacity, length);
#elif defined(BAD_SHORT_ASK)
  (void)buf;
  (void)capacity;
  *length = 3; /* "too small", yet asks for less than it was given */
  return CALHOST_BUFFER_TOO_SMALL;
#elif defined(BAD_OVERSIZED)
  if (capacity < OVERSIZE + 1) {
    *length = OVERSIZE + 1;
    return CALHOST_BUFFER_TOO_SMALL;
  }
  memset(buf, 'x', OVERSIZE);
  buf[0] = 'p';
  buf[1] = '=';
  buf[2] = (char)('1' + index);
  buf[OVERSIZE] = '\0';
  *length = OVERSIZE;
  return CALHOST_OK;
#elif defined(BAD_NEWLINE)
  char text[] = {'p', '=', (char)('1' + index), '\n', 'e', 'n', 'd', 0};
  return calhost_copy_out(text, buf, capacity, length);
#elif defined(BAD_NUL)
  if (capacity < 6) {
    *length = 6;
    return CALHOST_BUFFER_TOO_SMALL;
  }
  memcpy(buf, (char[]){'p', '=', (char)('1' + index), 0, 'x', 0}, 6);
  *length = 5; /* covers the NUL */
  return CALHOST_OK;
#elif defined(BAD_LENGTH_LIE)
  char text[] = {'p', '=', (char)('1' + index), 0};
  calhost_status st = calhost_copy_out(text, buf, capacity, length);
  if (st == CALHOST_OK)
    *length = capacity + 1000; /* a lie: longer than the buffer */
  return st;
#elif defined(BAD_QUOTES)
  char text[64];
  snprintf(text, sizeof text, "p=%c \"quoted\" \\back\\slash\\ \"\" end\\", '1' + (int)index);
  return calhost_copy_out(text, buf, capacity, length);
#elif defined(BAD_MAX_POLICY)
  if (capacity < CALHOST_POLICY_MAX_LENGTH + 1) {
    *length = CALHOST_POLICY_MAX_LENGTH + 1;
    return CALHOST_BUFFER_TOO_SMALL;
  }
  memset(buf, 'm', CALHOST_POLICY_MAX_LENGTH);
  buf[0] = 'p';
  buf[1] = '=';
  buf[2] = (char)('1' + index);
  buf[CALHOST_POLICY_MAX_LENGTH] = '\0';
  *length = CALHOST_POLICY_MAX_LENGTH;
  return CALHOST_OK;
#else
  char text[8] = {'p', '=', (char)('1' + index), 0};
  return calhost_copy_out(text, buf, capacity, length);
#endif
}

static calhost_status prepare(calhost_session *s, const char *policy, size_t length) {
  s->p = length >= 3 ? policy[2] - '0' : 0;
  return CALHOST_OK;
}

static calhost_status run(calhost_session *s, uint32_t iterations, calhost_run_result *result) {
  (void)result;
  garbage("run");
#ifdef BAD_ZERO_TIME
  result->device_seconds = 0;
#endif
#if defined(BAD_CRASH_RUN)
  raise(SIGSEGV);
#elif defined(BAD_CRASH_ONE)
  if (s->p == 2)
    raise(SIGSEGV);
#elif defined(BAD_HANG_ONE)
  while (s->p == 2)
    sleep(1);
#elif defined(BAD_HANG)
  const char *mark = getenv("CALHOST_TEST_RUNNING_MARK");
  if (mark) {
    int fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0)
      close(fd);
  }
  for (;;)
    sleep(1);
#elif defined(BAD_EXIT)
  exit(3);
#elif defined(BAD_ABORT)
  abort();
#elif defined(BAD_FLOOD)
  flood(256u << 10);
#elif defined(BAD_FLOOD_FOREVER)
  for (;;)
    flood(1u << 20);
#elif defined(BAD_EXIT0)
  exit(0);
#endif
  for (uint32_t i = 0; i < iterations; i++)
    s->out = 1.5 * s->p;
#ifdef FAKE_DEVICES
  /* CALHOST_TEST_DEVICE_SECONDS=X: a device timer reporting X s per call */
  const char *dev_s = getenv("CALHOST_TEST_DEVICE_SECONDS");
  if (dev_s && result)
    result->device_seconds = strtod(dev_s, NULL);
  /* CALHOST_TEST_DEVICE_UNTIL_CANCELLED=1: a long kernel that polls the
   * host's is_cancelled: it leaves cancelled-I once the host says stop, or
   * ignored-I after 30 s without it */
  if (s->device && getenv("CALHOST_TEST_DEVICE_UNTIL_CANCELLED")) {
    int k = 0;
    while (k < 3000 && !s->host->is_cancelled(s->host->context)) {
      usleep(10000);
      k++;
    }
    fake_marker(k < 3000 ? "cancelled" : "ignored", (uint32_t)(s->device - 1), 1);
    return CALHOST_CANCELLED;
  }
#endif
  return CALHOST_OK;
}

static calhost_status check(calhost_session *s, char *err, size_t cap) {
#ifdef BAD_WRONG_OUTPUT
  if (s->p == 2) { /* one candidate computes garbage (its message holds an escape) */
    snprintf(err, cap, "wrong output \033]0;retitled\007 at 0");
    return CALHOST_CHECK_FAILED;
  }
#endif
  if (s->out == 1.5 * s->p)
    return CALHOST_OK;
  snprintf(err, cap, "wrong output");
  return CALHOST_CHECK_FAILED;
}

#ifdef BAD_HALF_DEVICES /* ABI 2: device_count without list_device */
static calhost_status device_count(calhost_plugin_instance *inst, uint32_t *count) {
  (void)inst;
  *count = 0;
  return CALHOST_OK;
}
#endif

#ifdef FAKE_SPACE /* ABI 2: the candidates as one parameter p = 1..4 */
static const char *const p_values[] = {"1", "2", "3", "4"};
static const calhost_parameter p_param = {"p", p_values, 4, CALHOST_PARAMETER_ORDERED};
static calhost_status describe_space(calhost_session *s, calhost_parameter_space *out) {
  (void)s;
  out->parameters = &p_param;
  out->parameter_count = 1;
  out->default_assignment = NULL;
#ifdef BAD_DEFAULT
  static const uint32_t p4[] = {3};
  out->default_assignment = p4;
#endif
  return CALHOST_OK;
}
static calhost_status assignment_valid(calhost_session *s, const uint32_t *a, size_t n, char *err,
                                       size_t cap) {
  (void)s;
#ifdef BAD_SPACE
  (void)a;
  if (n == 1)
    return CALHOST_OK; /* out of range too */
#else
#ifdef BAD_DEFAULT
  if (n == 1 && a[0] == 3 && s->size > 4096) {
    snprintf(err, cap, "p=4 needs at most 4096 elements");
    return CALHOST_INVALID_ARGUMENT;
  }
#endif
  if (n == 1 && a[0] < 4)
    return CALHOST_OK;
#endif
  snprintf(err, cap, "p: index out of range");
  return CALHOST_INVALID_ARGUMENT;
}
static calhost_status serialize_assignment(calhost_session *s, const uint32_t *a, size_t n,
                                           char *buf, size_t cap, size_t *length) {
  char text[16];
  (void)s;
  if (n != 1 || a[0] >= 4)
    return CALHOST_INVALID_ARGUMENT;
#ifdef BAD_SPACE
  snprintf(text, sizeof text, "q=%u", a[0] + 1);
#else
  snprintf(text, sizeof text, "p=%u", a[0] + 1);
#endif
  return calhost_copy_out(text, buf, cap, length);
}
static calhost_status policy_assignment(calhost_session *s, const char *policy, size_t length,
                                        uint32_t *a, size_t n) {
  (void)s;
  if (n != 1 || length != 3 || policy[0] != 'p' || policy[1] != '=' || policy[2] < '1' ||
      policy[2] > '4')
    return CALHOST_INVALID_ARGUMENT;
  a[0] = (uint32_t)(policy[2] - '1');
  return CALHOST_OK;
}
#endif

static const char *const operators[] = {OPERATOR, NULL};

#ifdef BAD_DEFAULT
static const int64_t small_shape[] = {4096}, big_shape[] = {65536};
static const calhost_workload small_w = {
    .header = {CALHOST_STRUCT_WORKLOAD, 1, sizeof(calhost_workload)},
    .name = "small",
    .operator_name = "ReduceSum",
    .dtype = "float32",
    .shape = small_shape,
    .shape_rank = 1};
static const calhost_workload big_w = {
    .header = {CALHOST_STRUCT_WORKLOAD, 1, sizeof(calhost_workload)},
    .name = "big",
    .operator_name = "ReduceSum",
    .dtype = "float32",
    .shape = big_shape,
    .shape_rank = 1};
static const calhost_workload *const samples[] = {&small_w, &big_w, NULL};
#endif

static const calhost_plugin_vtable vtable = {
    .struct_size = sizeof(calhost_plugin_vtable),
    .abi_version = PLUGIN_ABI_MAX,
    .backend_name = BACKEND,
    .implementation_version = "1",
    .operators = operators,
    .description = "test plugin " BACKEND,
    .create = create,
    .destroy = destroy,
    .build_key = build_key,
#ifndef BAD_MISSING
    .validate_policy = validate_policy,
#endif
    .open_session = open_session,
    .close_session = close_session,
    .candidate_count = candidate_count,
    .serialize_candidate = serialize_candidate,
    .prepare = prepare,
    .run = run,
    .check = check,
#ifdef BAD_HALF_DEVICES
    .device_count = device_count,
#endif
#ifdef FAKE_DEVICES
    .device_count = device_count,
    .list_device = list_device,
#endif
#ifdef BAD_DEFAULT
    .sample_workloads = samples,
#endif
#ifdef FAKE_SPACE
    .describe_space = describe_space,
    .assignment_valid = assignment_valid,
    .serialize_assignment = serialize_assignment,
    .policy_assignment = policy_assignment,
#endif
};

#ifdef BAD_NO_ENTRY
#define ENTRY_NAME test_not_the_entry_point /* hidden: no exported entry point */
#define ENTRY_EXPORT
#else
#define ENTRY_NAME calhost_plugin_negotiate
#define ENTRY_EXPORT CALHOST_PLUGIN_EXPORT
#endif

ENTRY_EXPORT calhost_status ENTRY_NAME(const calhost_negotiate_request *request,
                                       calhost_negotiate_reply *reply);
ENTRY_EXPORT calhost_status ENTRY_NAME(const calhost_negotiate_request *request,
                                       calhost_negotiate_reply *reply) {
  uint32_t lo, hi;
  garbage("negotiate");
#ifdef BAD_EXIT_IN
  exit_in("negotiate");
#endif
#ifdef BAD_CRASH_NEGOTIATE
  raise(SIGSEGV);
#endif
#ifdef BAD_HANG_NEGOTIATE
  for (;;)
    sleep(1);
#endif
  (void)validate_policy;
  reply->plugin_abi_min = PLUGIN_ABI_MIN;
  reply->plugin_abi_max = PLUGIN_ABI_MAX;
  lo = request->host_abi_min > PLUGIN_ABI_MIN ? request->host_abi_min : PLUGIN_ABI_MIN;
  hi = request->host_abi_max < PLUGIN_ABI_MAX ? request->host_abi_max : PLUGIN_ABI_MAX;
  if (lo > hi)
    return CALHOST_ABI_MISMATCH;
  reply->chosen_abi_version = hi;
  reply->vtable = &vtable;
  return CALHOST_OK;
}
