/*
 * plugin.h: the calhost plugin ABI, the only header a backend plugin needs.
 *
 * A plugin is a shared object (.so / .dll / .dylib) that exports exactly one
 * symbol, calhost_plugin_negotiate (use CALHOST_PLUGIN_EXPORT). The host calls
 * it with a calhost_negotiate_request offering its ABI range and its host
 * services; the plugin answers, in a calhost_negotiate_reply, with the ABI
 * version it chose and its vtable (calhost_plugin_vtable).
 *
 * Rules (after the Vulkan and OpenXR loaders and ONNX Runtime's plugin EPs):
 *  - Every struct crossing the boundary starts with a calhost_struct_header
 *    or with a struct_size/abi_version pair. Fields are only ever appended;
 *    a reader never reads a field past the struct_size the writer gave.
 *  - Each vtable entry says since which ABI version it exists and whether it
 *    is REQUIRED or OPTIONAL. The host calls an entry only when the plugin's
 *    chosen version is at least that version and the pointer is not NULL; a
 *    plugin missing a REQUIRED entry is rejected at load time, by name.
 *  - Ownership is stated at every pointer. "Borrowed" means: valid only for
 *    the duration of the call that passed it. Nothing allocated on one side
 *    is ever freed on the other (different C runtimes on Windows).
 *  - Plugins never touch the file system for persistence: the host and its
 *    store own profiles. A plugin builds keys, serializes and validates
 *    policies, and runs candidates.
 *  - Functions return calhost_status; on failure a plugin may explain itself
 *    with host->set_error before returning.
 *  - The entry point may be called more than once, and first in a short-lived
 *    child process (calhost probes every plugin in a fork before loading it;
 *    the deployment runtime loads it directly, in any thread of its
 *    program): it and the library's constructors must be cheap and
 *    side-effect free (no threads, no I/O, nothing written to stdout).
 *  - Strings the plugin hands over (identity, keys, policies) are printable
 *    and one line: no control characters, no line breaks.
 *
 * Compatibility of this header: ABI 1 is frozen (a copy of its header is
 * kept in tests/plugins/abi1, installed with the SDK in
 * share/doc/calhost/source/tests/plugins/abi1, and a plugin built against it
 * is tested in every build). Later versions only append fields to the end of structs,
 * entries to the end of the vtable, values to the enums, and macros/inline
 * helpers; a plugin compiled against ABI 1 keeps loading in every host whose
 * range includes 1.
 *
 * ABI 2 adds (each marked "since 2" below): devices (device_count,
 * list_device, calhost_device_info; the device fields of calhost_target),
 * parameter spaces (describe_space, assignment_valid, serialize_assignment,
 * policy_assignment, calhost_parameter_space), and sample workloads
 * (sample_workloads). None is required: an ABI 1 plugin rebuilt against
 * this header is a valid ABI 2 plugin.
 *
 * The author's guide and the sweep lifecycle: plugin-sdk/README.md in the
 * sources, installed as share/doc/calhost/plugin-sdk.md and calhost-plugin(7).
 */
#ifndef CALHOST_PLUGIN_H
#define CALHOST_PLUGIN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h> /* calhost_copy_out */

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define CALHOST_PLUGIN_EXPORT __declspec(dllexport)
#elif defined(__GNUC__)
#define CALHOST_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define CALHOST_PLUGIN_EXPORT
#endif

/* ABI versions this header describes. A plugin built against this header
 * supports [CALHOST_ABI_VERSION_MIN, CALHOST_ABI_VERSION]. */
#define CALHOST_ABI_VERSION 2u
#define CALHOST_ABI_VERSION_MIN 1u

/* The one exported symbol's name, for dlsym/GetProcAddress. */
#define CALHOST_PLUGIN_ENTRY_POINT "calhost_plugin_negotiate"

/* The longest policy (bytes, without the NUL) the host accepts from
 * serialize_candidate / default_policy, and the longest payload it ever hands
 * to validate_policy from its own store. `calhost plugin check` fails a
 * plugin whose policies are longer. Since ABI 1. */
#define CALHOST_POLICY_MAX_LENGTH 65536u

/* For a struct the host writes (workload, target, ...): nonzero when the
 * host's copy includes `field`, i.e. the host was compiled with a version of
 * the struct that has it. Check before reading a field appended after ABI 1:
 *   if (CALHOST_HAS_FIELD(target, calhost_target, some_new_field)) ... */
#define CALHOST_HAS_FIELD(ptr, type, field)                                                        \
  ((ptr)->header.struct_size >= offsetof(type, field) + sizeof(((type *)0)->field))

/* Results of plugin calls. Append-only. */
typedef enum calhost_status {
  CALHOST_OK = 0,
  CALHOST_ERROR = 1,            /* generic failure; see the attached message */
  CALHOST_INVALID_ARGUMENT = 2, /* bad input (unsupported workload, bad policy, ...) */
  CALHOST_UNSUPPORTED = 3,      /* the operator, dtype or shape is not supported */
  CALHOST_BUFFER_TOO_SMALL = 4, /* *length holds the size needed (with the NUL) */
  CALHOST_NO_MEMORY = 5,
  CALHOST_CANCELLED = 6,    /* the host's cancellation flag was seen */
  CALHOST_CHECK_FAILED = 7, /* the candidate's output differs from the reference */
  CALHOST_ABI_MISMATCH = 8, /* negotiation: no common ABI version */
} calhost_status;

/* The enumerator's name ("CALHOST_OK", ...), for messages; "unknown status"
 * for a value this header does not know. Since ABI 1. */
static inline const char *calhost_status_name(calhost_status status) {
  switch (status) {
  case CALHOST_OK:
    return "CALHOST_OK";
  case CALHOST_ERROR:
    return "CALHOST_ERROR";
  case CALHOST_INVALID_ARGUMENT:
    return "CALHOST_INVALID_ARGUMENT";
  case CALHOST_UNSUPPORTED:
    return "CALHOST_UNSUPPORTED";
  case CALHOST_BUFFER_TOO_SMALL:
    return "CALHOST_BUFFER_TOO_SMALL";
  case CALHOST_NO_MEMORY:
    return "CALHOST_NO_MEMORY";
  case CALHOST_CANCELLED:
    return "CALHOST_CANCELLED";
  case CALHOST_CHECK_FAILED:
    return "CALHOST_CHECK_FAILED";
  case CALHOST_ABI_MISMATCH:
    return "CALHOST_ABI_MISMATCH";
  }
  return "unknown status";
}

/* Identifies what a calhost_struct_header starts. */
typedef enum calhost_struct_type {
  CALHOST_STRUCT_NEGOTIATE_REQUEST = 1,
  CALHOST_STRUCT_NEGOTIATE_REPLY = 2,
  CALHOST_STRUCT_HOST_SERVICES = 3,
  CALHOST_STRUCT_WORKLOAD = 4,
  CALHOST_STRUCT_TARGET = 5,
  CALHOST_STRUCT_BUILT_KEY = 6,
  CALHOST_STRUCT_RUN_RESULT = 7,
  CALHOST_STRUCT_DEVICE_INFO = 8,     /* since 2 */
  CALHOST_STRUCT_PARAMETER_SPACE = 9, /* since 2 */
} calhost_struct_type;

/* Starts every struct that crosses the boundary except the vtable. Written by
 * whoever allocates the struct (the "writer"); a reader never reads past
 * struct_size (see CALHOST_HAS_FIELD). Since ABI 1. */
typedef struct calhost_struct_header {
  uint32_t struct_type;    /* a calhost_struct_type */
  uint32_t struct_version; /* 1 for every struct of ABI 1 */
  uint32_t struct_size;    /* sizeof the struct as the writer compiled it */
} calhost_struct_header;

typedef enum calhost_log_level {
  CALHOST_LOG_DEBUG = 0,
  CALHOST_LOG_INFO = 1,
  CALHOST_LOG_WARNING = 2,
  CALHOST_LOG_ERROR = 3,
} calhost_log_level;

/* A name/value pair (structure of a workload, settings of a [plugin NAME]
 * section, structural properties of a key). Both strings are NUL-terminated
 * and owned by whoever wrote the array. Since ABI 1. */
typedef struct calhost_property {
  const char *name;
  const char *value;
} calhost_property;

/* ---- Host services ------------------------------------------------------
 * Provided by the host (owned by it); the table and the context are valid
 * from negotiation until the plugin is unloaded. The same table is passed to
 * negotiation and to create(). All entries are since ABI 1 and never NULL
 * (a plugin reading an entry appended later checks CALHOST_HAS_FIELD first).
 * They are safe to call from any thread the plugin creates. */
typedef struct calhost_host_services {
  calhost_struct_header header; /* CALHOST_STRUCT_HOST_SERVICES */
  void *context;                /* pass back as the first argument */
  /* Log a message (borrowed) at a level. */
  void (*log)(void *context, calhost_log_level level, const char *message);
  /* Attach a message (borrowed, copied by the host) to the call that is
   * about to fail; the host shows it with the plugin's name. Safe from any
   * thread, also from several at once: each message is copied whole, and
   * the failing call reports the last one set before it returned. */
  void (*set_error)(void *context, const char *message);
  /* Nonzero when the user asked to stop (SIGINT, time budget): a plugin
   * running a long call should return CALHOST_CANCELLED soon. */
  int (*is_cancelled)(void *context);
  /* Progress of a long call, fraction in [0, 1]; what may be NULL. */
  void (*progress)(void *context, double fraction, const char *what);
  /* Aligned allocation if the plugin wants the host's allocator (alignment a
   * power of two, at least sizeof(void *)). Free with free_memory. */
  void *(*allocate)(void *context, size_t size, size_t alignment);
  void (*free_memory)(void *context, void *pointer);
} calhost_host_services;

/* ---- Workloads and targets ------------------------------------------- */

/* What to calibrate, from a [workload NAME] section. Written and owned by
 * the host; borrowed by every call that receives it (copy what you keep).
 * Every field since ABI 1; every pointer non-NULL (properties may be NULL
 * when property_count is 0). */
typedef struct calhost_workload {
  calhost_struct_header header; /* CALHOST_STRUCT_WORKLOAD */
  const char *name;             /* the workload's name in the config */
  const char *operator_name;    /* e.g. "MatMul" */
  const char *dtype;            /* e.g. "float32" */
  const int64_t *shape;         /* dimensions, e.g. {M, N, K} for MatMul */
  size_t shape_rank;
  const calhost_property *properties; /* other structure (e.g. "accumulate"="1") */
  size_t property_count;
  const char *model_digest; /* "sha256:<64 hex>" */
} calhost_workload;

/* Where to calibrate: a set of processors and a thread count, and since
 * ABI 2 optionally one device of the plugin. Written and owned by the host,
 * borrowed by the call. Fields up to `features` since ABI 1; strings non-NULL
 * (features may be ""), cpus may be NULL when cpu_count is 0.
 *
 * Device targets (since 2): device_identity non-NULL names the plugin's
 * device device_index (both as list_device reported them). The host then
 * sets processor to the device's identity too, so the exact key's processor
 * is the device identity (build_key may refine it, as for CPU targets);
 * thread_count and cpus describe the host thread(s) feeding the device.
 * A target without the fields (an ABI 1 host: check CALHOST_HAS_FIELD) or
 * with device_identity NULL names no device: a device backend then uses its
 * device 0 and keys by that device's identity itself. A plugin whose device
 * at device_index no longer has device_identity (hardware or driver changed
 * since the host listed it) returns CALHOST_UNSUPPORTED with a message. */
typedef struct calhost_target {
  calhost_struct_header header; /* CALHOST_STRUCT_TARGET */
  const char *processor;        /* the host's canonical processor description,
                                   or the device identity for a device target */
  uint32_t thread_count;        /* threads the candidate may use, >= 1 */
  const int *cpus;              /* OS CPU indices of the target set; the host
                                   has pinned the calling thread to them */
  size_t cpu_count;
  const char *features; /* space-separated ISA features: "sse4_2 avx2 fma ..." */
  /* since 2: the device's identity (borrowed), NULL for a CPU target */
  const char *device_identity;
  /* since 2: the plugin's index of that device (calhost_device_info.index);
   * 0 and meaningless when device_identity is NULL */
  uint32_t device_index;
} calhost_target;

/* The key-builder's answer. The struct is the host's (zeroed, header set);
 * the plugin fills every field (all since ABI 1) with pointers it owns, which
 * must stay valid until its next call on the same instance, or with pointers
 * into the workload and target of this call (the host copies them all before
 * build_key's inputs go away). */
typedef struct calhost_built_key {
  calhost_struct_header header; /* CALHOST_STRUCT_BUILT_KEY, set by the host */
  /* Exact key: usually the workload's digest and the target's processor and
   * thread count; a backend may refine them (append its own cache identity to
   * the processor, cap the thread count to what it will really use). */
  const char *model_digest;
  const char *processor;
  uint32_t thread_count;
  /* Portable key: the structural properties (names unique; the host sorts
   * them). At least one. No machine or model identity here. */
  const calhost_property *structure;
  size_t structure_count;
} calhost_built_key;

/* Timings a backend with its own device timers may report from run().
 * Owned by the host; the host sets device_seconds to -1 before each call.
 * A device backend should report device_seconds (e.g. the sum over the
 * iterations of OpenCL profiling events' END - START, cudaEventElapsedTime,
 * Vulkan timestamp queries): the host then trusts it for the median instead
 * of its wall clock, which includes launch and synchronisation overhead. */
typedef struct calhost_run_result {
  calhost_struct_header header; /* CALHOST_STRUCT_RUN_RESULT, set by the host */
  double device_seconds;        /* since 1; total for all iterations; < 0: the host times it */
} calhost_run_result;

/* ---- ABI 2: devices, parameter spaces, sample workloads -------------- */

/* What kind of hardware a device is. Append-only. Since ABI 2. The host
 * serialises sweeps on CALHOST_DEVICE_CPU devices with its CPU sweeps (they
 * share cores and would disturb each other's timings). */
typedef enum calhost_device_kind {
  CALHOST_DEVICE_OTHER = 0,
  CALHOST_DEVICE_CPU = 1, /* runs on the host's CPUs (PoCL, oneAPI CPU, ...) */
  CALHOST_DEVICE_GPU = 2,
  CALHOST_DEVICE_ACCELERATOR = 3, /* NPU, DSP, FPGA, ... */
} calhost_device_kind;

/* One device of a plugin, as list_device describes it. The struct is the
 * host's (zeroed, header set); the plugin fills the fields (all since 2)
 * with pointers it owns that stay valid until the instance is destroyed.
 * Enumerate devices once per instance, lazily, on the first call that
 * needs them (device_count, build_key, open_session), never in the entry
 * point or in create(): the host creates instances in processes that may
 * fork afterwards (`calhost lookup`, a deployment: probing another plugin
 * forks), and a device runtime's threads do not survive a fork. */
typedef struct calhost_device_info {
  calhost_struct_header header; /* CALHOST_STRUCT_DEVICE_INFO, set by the host */
  /* The plugin's index of the device: what the host passes back in
   * calhost_target.device_index. Usually the position in the list; a
   * plugin may use its runtime's ordinal instead. Unique per instance. */
  uint32_t index;
  uint32_t kind; /* a calhost_device_kind */
  /* Stable identity: every property that determines performance and that the
   * plugin knows (vendor, device name, driver/runtime version, compute
   * units, memory size, clocks), one printable line without spaces at the
   * ends, at most 512 bytes; equal hardware with equal drivers gives equal
   * identities on every machine, and a driver upgrade changes it. It becomes
   * the exact key's processor of a device target. E.g.
   * "opencl:NVIDIA Corporation/NVIDIA GeForce RTX 4090/driver 550.54/cu 128/mem 24564MiB/1050MHz".
   */
  const char *identity;
  /* Short display name for tables, e.g. "RTX 4090" or "pocl cpu". */
  const char *name;
  /* The physical hardware behind the device, to tell when two devices (of
   * one plugin or of two plugins) share it: equal strings share hardware.
   * E.g. "pci:0000:01:00.0" (PCI bus id), "cpu" for devices that run on the
   * host's CPUs. NULL or "": unknown (the host assumes it may be shared). */
  const char *hardware;
  /* Further details for `calhost devices --json` (e.g. "compute_units"="64",
   * "global_memory_bytes"=..., "driver"=...); names unique. May be NULL
   * when detail_count is 0. */
  const calhost_property *details;
  size_t detail_count;
} calhost_device_info;

/* One named tunable parameter of a candidate space. Since ABI 2. Strings are
 * owned by the plugin (see describe_space). */
typedef struct calhost_parameter {
  const char *name;          /* [A-Za-z0-9_]+, unique within the space */
  const char *const *values; /* value_count printable words (no spaces), distinct */
  uint32_t value_count;      /* >= 1 */
  uint32_t flags;            /* CALHOST_PARAMETER_* bits */
} calhost_parameter;

/* calhost_parameter.flags: the values are ordered (numbers in increasing
 * order, or levels): neighbouring values tend to perform alike, so a search
 * may step to a neighbour. Without it the values are categories. */
#define CALHOST_PARAMETER_ORDERED 1u

/* A session's candidate space as named parameters. The struct is the host's
 * (zeroed, header set); the plugin fills it (all fields since 2) with
 * pointers it owns that stay valid until close_session. An assignment is an
 * array of parameter_count value indices, assignment[i] < parameters[i].
 * value_count. The space may be far larger than the numbered candidates
 * (which stay the plugin's curated list, e.g. for the quick rigor); the
 * product of the value counts may overflow 32 bits. */
typedef struct calhost_parameter_space {
  calhost_struct_header header; /* CALHOST_STRUCT_PARAMETER_SPACE, set by the host */
  const calhost_parameter *parameters;
  uint32_t parameter_count; /* >= 1, at most 64 */
  /* The default policy's assignment (parameter_count indices), or NULL when
   * the default is not a point of the space. */
  const uint32_t *default_assignment;
} calhost_parameter_space;

typedef struct calhost_plugin_instance calhost_plugin_instance; /* plugin-defined */
typedef struct calhost_session calhost_session;                 /* plugin-defined */

/* ---- The vtable -------------------------------------------------------
 * Owned by the plugin, static or valid until the plugin is unloaded. The host
 * copies the first struct_size bytes at load time and treats every entry past
 * them as NULL; it calls an entry only when the negotiated version is at
 * least the entry's "since" version and the pointer is not NULL. A plugin
 * missing a REQUIRED entry (of a version <= the chosen one) is rejected with
 * "required vtable entry 'NAME' is missing". The entries up to `check` are
 * since ABI 1, those after it since ABI 2 (all OPTIONAL).
 * All instance/session pointers passed back are the plugin's own, from
 * create() / open_session(). Strings written into host buffers are
 * NUL-terminated and owned by the host.
 * The lifecycle of a sweep, as the host drives it:
 *
 *   create -> [build_key] -> open_session -> candidate_count ->
 *     (serialize_candidate, validate_policy)* -> default_policy ->
 *     for each candidate: prepare -> run (once, to produce output) -> check
 *       -> run (timed, repeatedly)
 *   -> close_session -> destroy
 *
 * One session is used from one thread at a time; different instances may be
 * used from different threads (the host does not do that in ABI 1).
 *
 * Since ABI 2 (all OPTIONAL, after `check`): a device backend lists its
 * devices (device_count, list_device) right after create, and the host
 * opens one session per device target. A plugin with a parameter space lets
 * the host search it (describe_space, then repeatedly assignment_valid and
 * serialize_assignment, whose policies go through prepare/run/check like
 * numbered candidates) instead of, or besides, enumerating candidates.
 */
typedef struct calhost_plugin_vtable {
  uint32_t struct_size; /* REQUIRED, since 1: sizeof(calhost_plugin_vtable) as compiled */
  uint32_t abi_version; /* REQUIRED, since 1: the newest ABI this table follows,
                           as a number (2u): not CALHOST_ABI_VERSION, which a
                           newer header raises past the entries you have */

  /* -- identity (since 1, REQUIRED; static strings) -- */
  const char *backend_name;           /* unique, [A-Za-z0-9_.-]+, e.g. "cpu_gemm" */
  const char *implementation_version; /* change it and every stored profile of
                                         the backend becomes "outdated" */
  const char *const *operators;       /* NULL-terminated list, e.g. {"MatMul", NULL} */
  const char *description;            /* one line */

  /* -- lifetime (since 1) -- */
  /* REQUIRED. Creates an instance with the settings of the config's
   * [plugin NAME] section (borrowed). Unknown settings should be refused with
   * CALHOST_INVALID_ARGUMENT and a message naming them. */
  calhost_status (*create)(const calhost_host_services *host, const calhost_property *settings,
                           size_t setting_count, calhost_plugin_instance **out);
  /* REQUIRED. Frees the instance; NULL-safe. */
  void (*destroy)(calhost_plugin_instance *instance);

  /* -- key-builder (since 1, REQUIRED) --
   * Deterministic: equal inputs give equal keys. Returns CALHOST_UNSUPPORTED
   * for a workload the backend cannot serve. */
  calhost_status (*build_key)(calhost_plugin_instance *instance, const calhost_workload *workload,
                              const calhost_target *target, calhost_built_key *out);

  /* -- policies (since 1, REQUIRED) --
   * validate_policy is the validator/deserializer the store calls: it parses
   * `policy` (length bytes, not necessarily NUL-terminated) and returns
   * CALHOST_OK when the backend accepts it, else CALHOST_INVALID_ARGUMENT
   * with a reason in err (NUL-terminated, at most err_capacity bytes).
   * It must never crash on arbitrary bytes. */
  calhost_status (*validate_policy)(calhost_plugin_instance *instance, const char *policy,
                                    size_t length, char *err, size_t err_capacity);

  /* -- calibration (since 1) -- */
  /* REQUIRED. Opens a session for a workload on a target (the calling thread
   * is pinned to target->cpus); allocates inputs and the reference. */
  calhost_status (*open_session)(calhost_plugin_instance *instance,
                                 const calhost_workload *workload, const calhost_target *target,
                                 calhost_session **out);
  /* REQUIRED. Frees the session; NULL-safe. */
  void (*close_session)(calhost_session *session);
  /* REQUIRED. Number of candidates in this session's space (>= 1). */
  calhost_status (*candidate_count)(calhost_session *session, uint32_t *count);
  /* REQUIRED. The policy serializer: writes candidate `index`'s policy as a
   * NUL-terminated string into buf. *length receives strlen of the policy;
   * when capacity is too small, returns CALHOST_BUFFER_TOO_SMALL and
   * *length the size needed including the NUL. Policies are non-empty,
   * printable, without line breaks. */
  calhost_status (*serialize_candidate)(calhost_session *session, uint32_t index, char *buf,
                                        size_t capacity, size_t *length);
  /* OPTIONAL. The backend's untuned default policy, same conventions as
   * serialize_candidate. Without it the host reports no speedup. */
  calhost_status (*default_policy)(calhost_session *session, char *buf, size_t capacity,
                                   size_t *length);
  /* REQUIRED. Deserializes a policy (one validate_policy accepts) and gets
   * ready to run it: packs buffers, creates threads. */
  calhost_status (*prepare)(calhost_session *session, const char *policy, size_t length);
  /* REQUIRED. Runs the prepared candidate `iterations` times on the
   * session's inputs. The host times the call; a backend with its own
   * device timers may set result->device_seconds. */
  calhost_status (*run)(calhost_session *session, uint32_t iterations, calhost_run_result *result);
  /* OPTIONAL (strongly advised). Compares the output of the last run with the
   * backend's trusted reference; CALHOST_CHECK_FAILED with a reason in err
   * when it differs (NaN/Inf included). Without it results are marked
   * "unchecked". */
  calhost_status (*check)(calhost_session *session, char *err, size_t err_capacity);

  /* -- devices (since 2, OPTIONAL; both or neither) --
   * A plugin without them has no devices: its targets are CPU targets. */
  /* Number of devices the instance can drive (0 allowed: none usable here).
   * The first call may initialise the device runtime (OpenCL, CUDA and
   * Vulkan runtimes start threads): calibrate and `calhost devices` call it
   * in a child of their own, the deployment runtime in its caller's process
   * on the first device selection, the probe never. */
  calhost_status (*device_count)(calhost_plugin_instance *instance, uint32_t *count);
  /* Describes device `position` (0 .. count-1, the listing order) into
   * *out (see calhost_device_info for ownership). */
  calhost_status (*list_device)(calhost_plugin_instance *instance, uint32_t position,
                                calhost_device_info *out);

  /* -- parameter space (since 2, OPTIONAL; all three or none) -- */
  /* Describes the session's space (it may depend on the workload and on the
   * device's limits) into *out; CALHOST_UNSUPPORTED when the session has
   * only numbered candidates. */
  calhost_status (*describe_space)(calhost_session *session, calhost_parameter_space *out);
  /* The validity test: CALHOST_OK when `assignment` (count value indices,
   * count == parameter_count) is a runnable candidate on this session's
   * device and workload, CALHOST_INVALID_ARGUMENT with a reason in err when
   * it is not (a constraint between parameters, a device limit such as the
   * work-group size or local memory). Cheap: no compilation, no device work.
   * Indices out of range are invalid, never a crash. */
  calhost_status (*assignment_valid)(calhost_session *session, const uint32_t *assignment,
                                     size_t count, char *err, size_t err_capacity);
  /* Maps a valid assignment to its policy, with the serialize_candidate
   * conventions (buffer, *length, CALHOST_BUFFER_TOO_SMALL). Equal
   * assignments give equal policies; validate_policy accepts the result. */
  calhost_status (*serialize_assignment)(calhost_session *session, const uint32_t *assignment,
                                         size_t count, char *buf, size_t capacity, size_t *length);
  /* OPTIONAL (with the three above): the inverse, a policy (length bytes)
   * to its assignment (count == parameter_count entries written), e.g. to
   * start a search from a stored winner; CALHOST_INVALID_ARGUMENT when the
   * policy is not a point of the space. */
  calhost_status (*policy_assignment)(calhost_session *session, const char *policy, size_t length,
                                      uint32_t *assignment, size_t count);

  /* -- sample workloads (since 2, OPTIONAL; static data) --
   * NULL-terminated list of workloads the plugin accepts, smallest first,
   * for `calhost plugin check` and the template's tests (the host otherwise
   * guesses one for the first operator). Each is a full calhost_workload
   * (header set by the plugin, name unique, model_digest may be NULL: the
   * host substitutes one), static or valid until the plugin is unloaded. */
  const calhost_workload *const *sample_workloads;
} calhost_plugin_vtable;

/* ---- Negotiation ------------------------------------------------------ */

/* The host's offer. Written and owned by the host, borrowed for the call
 * (except `host`, see below). Every field since ABI 1. */
typedef struct calhost_negotiate_request {
  calhost_struct_header header;      /* CALHOST_STRUCT_NEGOTIATE_REQUEST */
  uint32_t host_abi_min;             /* the oldest ABI the host can drive */
  uint32_t host_abi_max;             /* the newest ABI the host knows */
  const calhost_host_services *host; /* valid until the plugin is unloaded */
} calhost_negotiate_request;

/* The plugin's answer. The struct is the host's (zeroed, header set); the
 * plugin fills the fields below (all since ABI 1). */
typedef struct calhost_negotiate_reply {
  calhost_struct_header header; /* CALHOST_STRUCT_NEGOTIATE_REPLY, set by the host */
  uint32_t plugin_abi_min;      /* the plugin's range, always filled in */
  uint32_t plugin_abi_max;
  uint32_t chosen_abi_version;         /* in both ranges, never above host_abi_max */
  const calhost_plugin_vtable *vtable; /* static or valid until unload */
} calhost_negotiate_reply;

/* The entry point every plugin exports. Fills reply->plugin_abi_min/max
 * always; when the ranges overlap, chooses the highest common version, sets
 * chosen_abi_version and vtable, and returns CALHOST_OK; else returns
 * CALHOST_ABI_MISMATCH. Must not do any other work (no threads, no I/O). */
typedef calhost_status (*calhost_negotiate_fn)(const calhost_negotiate_request *request,
                                               calhost_negotiate_reply *reply);

CALHOST_PLUGIN_EXPORT calhost_status
calhost_plugin_negotiate(const calhost_negotiate_request *request, calhost_negotiate_reply *reply);

/* A helper for the usual negotiation: call it from calhost_plugin_negotiate
 * with your vtable. Header-only so plugins need no library. */
static inline calhost_status calhost_negotiate_default(const calhost_negotiate_request *request,
                                                       calhost_negotiate_reply *reply,
                                                       const calhost_plugin_vtable *vtable) {
  uint32_t lo, hi;
  if (!request || !reply || !vtable ||
      request->header.struct_type != CALHOST_STRUCT_NEGOTIATE_REQUEST)
    return CALHOST_INVALID_ARGUMENT;
  reply->plugin_abi_min = CALHOST_ABI_VERSION_MIN;
  reply->plugin_abi_max = vtable->abi_version;
  lo = request->host_abi_min > CALHOST_ABI_VERSION_MIN ? request->host_abi_min
                                                       : CALHOST_ABI_VERSION_MIN;
  hi = request->host_abi_max < vtable->abi_version ? request->host_abi_max : vtable->abi_version;
  if (lo > hi)
    return CALHOST_ABI_MISMATCH;
  reply->chosen_abi_version = hi;
  reply->vtable = vtable;
  return CALHOST_OK;
}

/* fn, when its type is the vtable entry field's; any other type, or an
 * undeclared fn, is a compile error (a plain initializer would only warn).
 * Internal to the macros below. Needs C11 (_Generic) and
 * __typeof__ (GCC, Clang). */
#define CALHOST_ENTRY_(field, fn)                                                                  \
  _Generic((fn), __typeof__(((calhost_plugin_vtable *)0)->field) : (fn))

/* ---- Declaring a plugin ------------------------------------------------
 * CALHOST_PLUGIN_DEFINE(prefix, abi, name, version, operators, description,
 *                       optional entries...)
 * is the usual way for a plugin to declare itself, once, at file scope,
 * after the functions it names (as GStreamer's GST_PLUGIN_DEFINE and GLib's
 * G_DEFINE_TYPE do). It defines the static vtable `prefix_vtable` and the
 * exported entry point calhost_plugin_negotiate (calhost_negotiate_default
 * on that vtable), and fills in:
 *   struct_size   sizeof(calhost_plugin_vtable);
 *   abi_version   `abi`, the ABI the file implements, as a number (2u);
 *   identity      `name`, `version` (implementation_version), `operators`
 *                 (a NULL-terminated list) and `description`: static strings;
 *   the ten REQUIRED entries, by name: prefix_create, prefix_destroy,
 *                 prefix_build_key, prefix_validate_policy,
 *                 prefix_open_session, prefix_close_session,
 *                 prefix_candidate_count, prefix_serialize_candidate,
 *                 prefix_prepare and prefix_run, each checked against its
 *                 entry's type: a missing one or one of another type is a
 *                 compile error. prefix is a plain name (a macro there is
 *                 not expanded). Use a #define to give a shared function
 *                 the plugin's name;
 *   then the optional entries you implement, as designated initializers:
 *                 `.default_policy = f, .check = g`,
 *                 CALHOST_PLUGIN_SPACE_ENTRIES(prefix) (type-checked too),
 *                 `.device_count = h`. An initializer of another type draws
 *                 the compiler's incompatible-pointer warning only: build
 *                 with -Werror=incompatible-pointer-types (the template does).
 * Nothing else: a vtable written by hand (the ABI above) is equivalent, and
 * is the form for a plugin the macro does not fit (say, one whose identity
 * is computed). C11 (GCC, Clang) only: C++ has no designated initializers
 * before C++20. */
#define CALHOST_PLUGIN_DEFINE(prefix, abi, name, version, operator_list, ...)                      \
  static const calhost_plugin_vtable prefix##_vtable = {                                           \
      .struct_size = sizeof(calhost_plugin_vtable),                                                \
      .abi_version = (abi),                                                                        \
      .backend_name = (name),                                                                      \
      .implementation_version = (version),                                                         \
      .operators = (operator_list),                                                                \
      .create = CALHOST_ENTRY_(create, prefix##_create),                                           \
      .destroy = CALHOST_ENTRY_(destroy, prefix##_destroy),                                        \
      .build_key = CALHOST_ENTRY_(build_key, prefix##_build_key),                                  \
      .validate_policy = CALHOST_ENTRY_(validate_policy, prefix##_validate_policy),                \
      .open_session = CALHOST_ENTRY_(open_session, prefix##_open_session),                         \
      .close_session = CALHOST_ENTRY_(close_session, prefix##_close_session),                      \
      .candidate_count = CALHOST_ENTRY_(candidate_count, prefix##_candidate_count),                \
      .serialize_candidate = CALHOST_ENTRY_(serialize_candidate, prefix##_serialize_candidate),    \
      .prepare = CALHOST_ENTRY_(prepare, prefix##_prepare),                                        \
      .run = CALHOST_ENTRY_(run, prefix##_run),                                                    \
      .description = __VA_ARGS__};                                                                 \
  CALHOST_PLUGIN_EXPORT calhost_status calhost_plugin_negotiate(                                   \
      const calhost_negotiate_request *request, calhost_negotiate_reply *reply) {                  \
    return calhost_negotiate_default(request, reply, &prefix##_vtable);                            \
  }                                                                                                \
  typedef int prefix##_plugin_defined /* takes the semicolon after the macro */

/* The four parameter-space entries of ABI 2, by name, for the optional
 * entries of CALHOST_PLUGIN_DEFINE: prefix_describe_space,
 * prefix_assignment_valid, prefix_serialize_assignment and
 * prefix_policy_assignment (optional in the ABI: a plugin without it
 * writes the other three as designated initializers instead). */
#define CALHOST_PLUGIN_SPACE_ENTRIES(prefix)                                                       \
  .describe_space = CALHOST_ENTRY_(describe_space, prefix##_describe_space),                       \
  .assignment_valid = CALHOST_ENTRY_(assignment_valid, prefix##_assignment_valid),                 \
  .serialize_assignment = CALHOST_ENTRY_(serialize_assignment, prefix##_serialize_assignment),     \
  .policy_assignment = CALHOST_ENTRY_(policy_assignment, prefix##_policy_assignment)

/* Copies a NUL-terminated string into a caller's buffer with the
 * serialize_candidate conventions: CALHOST_OK and *length = strlen(text), or
 * CALHOST_BUFFER_TOO_SMALL and *length = the size needed including the NUL.
 * A NULL text is copied as "". */
static inline calhost_status calhost_copy_out(const char *text, char *buf, size_t capacity,
                                              size_t *length) {
  size_t n;
  if (!text)
    text = "";
  n = strlen(text);
  if (!buf || capacity < n + 1) {
    if (length)
      *length = n + 1;
    return CALHOST_BUFFER_TOO_SMALL;
  }
  memcpy(buf, text, n + 1);
  if (length)
    *length = n;
  return CALHOST_OK;
}

#ifdef __cplusplus
}
#endif
#endif /* CALHOST_PLUGIN_H */
