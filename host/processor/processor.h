/*
 * processor.h: the processors calhost calibrates on.
 *
 * Owns five things, all internal to the host (not a public header):
 *  - CPU lists: parsing and formatting "0-3,6" / "all", the CPUs this
 *    process may run on, and the thread count `max` stands for;
 *  - identity: vendor, model, the ISA features that matter to backends and
 *    the cache topology of a CPU set (hwloc), summed up in one canonical
 *    processor description string used in exact store keys;
 *  - pinning: binding the calling thread (and so the threads it creates) to
 *    a CPU set;
 *  - the environment of a measurement (frequency governor, load average),
 *    with warnings when it makes timings unreliable;
 *  - the calibration targets: a CPU set x the configured thread counts.
 *
 * Errors: functions returning int return 0 on success and -1 on failure,
 * with a NUL-terminated message in err (at most err_capacity bytes; err may
 * be NULL). Nothing here keeps global state; every function is safe to call
 * from any thread.
 *
 * ---------------------------------------------------------------------
 * The processor description string (processor_describe)
 * ---------------------------------------------------------------------
 * One line of printable ASCII, fields separated by ';', in this order:
 *
 *   description = arch ";vendor=" text ";model=" text ";isa=" isa
 *                 { ";" cache } ";cores=" uint ";pus=" uint
 *   arch        = "x86_64" | "aarch64" | ... (the machine's architecture)
 *   text        = printable ASCII without ';' '=' ',' (others become '_'),
 *                 runs of spaces collapsed, trimmed; "unknown" when absent
 *   isa         = feature { "," feature }   (fixed canonical order, see
 *                 processor.c; "none" when the list is empty)
 *   cache       = name "=" size "/" share "/" count
 *   name        = "l1d" | "l1i" | "l2" | "l3" | "l4" | "l5"
 *                 ("l2i"/"l2d" style names for split levels above 1)
 *   size        = bytes of one instance (decimal)
 *   share       = how many PUs of the machine share one instance
 *   count       = how many instances the target CPU set touches
 *   uint        = decimal; cores and PUs (hardware threads) in the set
 *
 * Caches are listed by level, then l1d before l1i. A level whose instances
 * in the set differ (hybrid processors: big cores with one L2 size, little
 * cores with another) has one entry per distinct size and sharing, larger
 * first, e.g. "l2=2097152/2/2;l2=4194304/4/1" sorted as
 * "l2=4194304/4/1;l2=2097152/2/2". Example:
 *
 *   x86_64;vendor=GenuineIntel;model=Intel(R) Xeon(R) Processor;
 *   isa=sse4_2,avx,f16c,fma,avx2,avx512f,avx512dq,avx512cd,avx512bw,avx512vl;
 *   l1d=49152/1/2;l2=2097152/1/2;l3=503316480/2/1;cores=2;pus=2
 *
 * (one line; broken here for reading). Instruction caches appear only when
 * the topology holds them (hwloc drops them by default, so live machines
 * list data/unified caches only). The string is a pure function of
 * processor_info: equal machines and sets give equal strings; any
 * change of size or sharing of a cache level, of the set's reach into the
 * caches, of the core or PU count, of the ISA, vendor or model gives a
 * different one. The cache line size is recorded in the info but not in the
 * string (it is not part of the topology).
 */
#ifndef CALHOST_PROCESSOR_H
#define CALHOST_PROCESSOR_H

#include <stddef.h>
#include <stdint.h>

/* OS CPU indices accepted in CPU lists: 0 .. CALHOST_CPU_LIMIT-1. */
#define CALHOST_CPU_LIMIT 4096

/* ---- CPU lists ------------------------------------------------------- */

/* Parses a CPU list: "all" (any case), or comma-separated indices and
 * inclusive ranges, e.g. "0-3,6" (spaces around items allowed). A CPU given
 * twice, a reversed range, an index >= CALHOST_CPU_LIMIT or an empty item
 * is an error. On success *all is 1 for "all" (then *cpus is NULL and
 * *count 0), else 0 and *cpus is a malloc'd ascending list of *count
 * indices, owned by the caller (free()). */
int processor_cpulist_parse(const char *text, int **cpus, size_t *count, int *all, char *err,
                            size_t err_capacity);

/* Formats a CPU list in the shortest canonical form ("0-3,6"); an empty
 * list formats as "all". cpus need not be sorted (duplicates are merged).
 * Returns the length of the full string (like snprintf): the output was
 * truncated when the result is >= capacity. buf may be NULL if capacity 0. */
size_t processor_cpulist_format(const int *cpus, size_t count, char *buf, size_t capacity);

/* The CPUs this process may run on: the calling thread's affinity mask
 * (which only holds online CPUs). *cpus is malloc'd, ascending, owned by the
 * caller. */
int processor_allowed_cpus(int **cpus, size_t *count, char *err, size_t err_capacity);

/* ---- Identity -------------------------------------------------------- */

#define CALHOST_PROCESSOR_MAX_CACHES 12
#define CALHOST_PROCESSOR_DESCRIPTION_MAX 1024

typedef enum processor_cache_kind {
  CALHOST_CACHE_UNIFIED = 0,
  CALHOST_CACHE_DATA = 1,
  CALHOST_CACHE_INSTRUCTION = 2,
} processor_cache_kind;

/* One cache level as seen from the target CPU set. */
typedef struct processor_cache_level {
  unsigned level; /* 1, 2, 3, ... */
  processor_cache_kind kind;
  uint64_t size;             /* bytes of one instance */
  unsigned line_size;        /* bytes; 0 when unknown */
  unsigned pus_per_instance; /* PUs of the machine sharing one instance */
  unsigned instances;        /* instances the target set touches */
} processor_cache_level;

typedef struct processor_info {
  char arch[32];      /* "x86_64", "aarch64", ... */
  char vendor[64];    /* "GenuineIntel", "AuthenticAMD", ...; "unknown" */
  char model[128];    /* marketing name; "unknown" */
  char features[256]; /* space-separated, canonical order: "sse4_2 avx avx2 fma" */
  processor_cache_level caches[CALHOST_PROCESSOR_MAX_CACHES]; /* ordered as in the string */
  size_t cache_count;
  unsigned cores;                                      /* cores the set touches */
  unsigned pus;                                        /* PUs (hardware threads) in the set */
  char description[CALHOST_PROCESSOR_DESCRIPTION_MAX]; /* processor_describe() */
} processor_info;

/* Identifies the processors of a CPU set on this machine (cpu_count 0: every
 * CPU this process may run on): vendor and model and cache topology from
 * hwloc, ISA features from cpuid (x86, checking OS support with xgetbv) or
 * the auxiliary vector (aarch64). Fills every field of *out, description
 * included. A CPU of the set that is not online is an error. */
int processor_identify(const int *cpus, size_t cpu_count, processor_info *out, char *err,
                       size_t err_capacity);

/* The same from an hwloc XML topology (xml, NUL-terminated; as written by
 * `lstopo file.xml`) instead of this machine's: for tests and for describing
 * another machine. ISA features still come from the running CPU. cpu_count 0:
 * every PU of the topology. */
int processor_identify_xml(const char *xml, const int *cpus, size_t cpu_count, processor_info *out,
                           char *err, size_t err_capacity);

/* Builds the canonical description string (grammar above) from an info
 * (a pure function; description is not read). Returns the full length like
 * snprintf; truncated when >= capacity. */
size_t processor_describe(const processor_info *info, char *buf, size_t capacity);

/* The ISA feature names this build knows, in canonical order, NULL-
 * terminated (static). */
const char *const *processor_known_features(void);

/* ---- Pinning --------------------------------------------------------- */

/* Binds the calling thread to the CPU set (cpu_count 0: every CPU the process
 * may run on). Threads it creates afterwards inherit the binding. */
int processor_pin_thread(const int *cpus, size_t cpu_count, char *err, size_t err_capacity);

/* Binds the calling thread to one CPU of the set: cpus[worker % cpu_count].
 * For a backend's or a sweep's worker threads that want one CPU each. */
int processor_pin_worker(const int *cpus, size_t cpu_count, unsigned worker, char *err,
                         size_t err_capacity);

/* ---- Environment of a measurement ------------------------------------ */

#define CALHOST_PROCESSOR_MAX_WARNINGS 4

typedef struct processor_environment {
  char governor[32];      /* scaling_governor of the set's CPUs; "mixed" when
                             they differ; "unknown" without cpufreq */
  double load_average[3]; /* 1, 5, 15 minutes; -1 when unknown */
  unsigned online_cpus;   /* CPUs online on the machine */
  unsigned set_cpus;      /* CPUs in the target set */
  size_t warning_count;
  char warnings[CALHOST_PROCESSOR_MAX_WARNINGS][160]; /* why timings may be unreliable */
} processor_environment;

/* Records the environment of a CPU set (cpu_count 0: every allowed CPU) and
 * assesses it (processor_environment_assess). Never fails: what
 * cannot be read is "unknown" / -1. */
void processor_environment_record(const int *cpus, size_t cpu_count, processor_environment *out);

/* Recomputes out->warnings from its other fields (a pure function):
 *  - governor not "performance" (and not "unknown"): frequency scaling;
 *  - 1-minute load average > 0.5 x set_cpus: other work competes. */
void processor_environment_assess(processor_environment *env);

/* "governor=performance;load1=0.12;load5=0.10;load15=0.05;online=2;set=2".
 * Returns the full length like snprintf. */
size_t processor_environment_format(const processor_environment *env, char *buf, size_t capacity);

/* ---- Calibration targets --------------------------------------------- */

/* One target: a CPU set and a thread count. cpus points into the list. */
typedef struct processor_target {
  const int *cpus;
  size_t cpu_count;
  uint32_t thread_count; /* >= 1 */
} processor_target;

typedef struct processor_target_list {
  int *cpus; /* the resolved set (ascending), owned */
  size_t cpu_count;
  processor_target *items; /* one per distinct thread count, in config order */
  size_t count;
  processor_info processor; /* identity of the set */
} processor_target_list;

/* What processor_targets returns when a listed CPU is not one this process
 * may run on (other failures: -1). */
#define PROCESSOR_TARGETS_CPU_UNAVAILABLE (-2)

/* Resolves the configured targets: the CPU set (cpus_all or cpu_count 0:
 * every CPU this process may run on; else each listed CPU must be one this
 * process may run on) x the thread counts (0 stands for `max` = the PUs of
 * the set; duplicates after resolving are dropped; a count above the PUs of
 * the set is an error), and identifies the set. Free with
 * processor_target_list_free. Returns 0, PROCESSOR_TARGETS_CPU_UNAVAILABLE
 * or -1, with the reason in err. */
int processor_targets(const int *cpus, size_t cpu_count, int cpus_all,
                      const uint32_t *thread_counts, size_t thread_count_count,
                      processor_target_list *out, char *err, size_t err_capacity);

/* Frees what a target list owns and zeroes it. NULL-safe. */
void processor_target_list_free(processor_target_list *list);

#endif /* CALHOST_PROCESSOR_H */
