/*
 * calstore.h: the public C API of libcalstore, calhost's calibration profile
 * store. Its behaviour, the file format and how it differs from the design's
 * reference implementation: host/store/README.md (installed as
 * share/doc/calhost/source/host/store/README.md) and calstore(3).
 *
 * What a deployment, a host or a test links. The store owns loading,
 * locking, merging and atomic replacement of the one profile file; callers
 * (backends) only build keys, serialize policies and validate them.
 *
 * Conventions:
 *  - Every function returns a calstore_status; misuse (NULL handle, bad key,
 *    unrepresentable value) is CALSTORE_INVALID_ARGUMENT, never an abort.
 *  - Every function that can fail takes an optional `calstore_error *err`
 *    (may be NULL); on failure it is filled with the status, a human message
 *    and, where a file was at fault, the line number.
 *  - Strings passed in are borrowed for the duration of the call only; the
 *    store copies what it keeps.
 *  - A calstore handle may be used from many threads at once.
 *
 * Evolving the API (the ABI rule): libcalstore's soname carries
 * CALSTORE_VERSION_MAJOR, which changes only when the ABI breaks. Within one
 * major version functions and enum values are only added (MINOR), never
 * changed or removed. Structs the caller fills in come in two kinds:
 *  - sized: calstore_options starts with struct_size (set by
 *    calstore_options_init); fields are only appended, and the library reads
 *    an appended field only when struct_size covers it, so a program built
 *    against an older header keeps working;
 *  - frozen: every other struct (calstore_error, calstore_key,
 *    calstore_property, calstore_measurement, calstore_profile,
 *    calstore_lookup_options, calstore_lookup_result, calstore_rejection)
 *    keeps its layout for the whole major version. A need for a new field is
 *    met with a new struct and a new function, never by changing these.
 * Everything added after 1.0 says "(since X.Y)" in its comment, as curl's
 * "Added in" does; what says nothing came with 1.0.
 *
 * Error details (the convention of both public libraries, settled for
 * libcalhost_runtime before its 1.0, see runtime.h): every call returns a
 * status enum, the whole outcome; the details are optional and owned by
 * the caller, written only when the caller passes somewhere to write them,
 * and never allocated. libcalstore's details are the frozen struct
 * calstore_error {status, line, path, message}: a store call has at most
 * one file at fault, so its place is given as fields. Callbacks the store
 * calls (serializer, validator) report into a caller-owned text buffer
 * (char *err, size_t cap) that the store copies into err->message.
 */
#ifndef CALHOST_CALSTORE_H
#define CALHOST_CALSTORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(CALSTORE_BUILDING_DLL)
#define CALSTORE_API __declspec(dllexport)
#elif defined(_WIN32) && !defined(CALSTORE_STATIC)
#define CALSTORE_API __declspec(dllimport)
#elif defined(__GNUC__)
#define CALSTORE_API __attribute__((visibility("default")))
#else
#define CALSTORE_API
#endif

/* The library's version (semantic versioning; MAJOR is the ABI and the
 * soname; the macros since 1.1). CALSTORE_VERSION_NUMBER is MAJOR * 1000000 + MINOR * 1000 +
 * PATCH, for preprocessor comparisons. Compare with calstore_version() to
 * learn which library a program actually runs with. */
#define CALSTORE_VERSION_MAJOR 1
#define CALSTORE_VERSION_MINOR 2
#define CALSTORE_VERSION_PATCH 0
#define CALSTORE_VERSION_NUMBER                                                                    \
  (CALSTORE_VERSION_MAJOR * 1000000 + CALSTORE_VERSION_MINOR * 1000 + CALSTORE_VERSION_PATCH)

/* The magic word and schema version that start every store file. */
#define CALSTORE_FORMAT_MAGIC "onnx_light_calibration_profiles"
#define CALSTORE_FORMAT_VERSION 1

/* Result codes. Append-only: values never change meaning. */
typedef enum calstore_status {
  CALSTORE_OK = 0,
  CALSTORE_NOT_FOUND = 1,           /* no such profile / no file / nothing selected */
  CALSTORE_DISABLED = 2,            /* operation needs persistence, which is off */
  CALSTORE_UNREADABLE = 3,          /* the file exists but cannot be read (I/O, permissions) */
  CALSTORE_MALFORMED = 4,           /* the file breaks the version-1 grammar (line in err) */
  CALSTORE_UNSUPPORTED_VERSION = 5, /* the header names a schema version other than 1 */
  CALSTORE_POLICY_REJECTED = 6,     /* the backend's validator refused the policy */
  CALSTORE_WRITE_FAILED = 7,        /* write, fsync, rename or directory creation failed */
  CALSTORE_INVALID_ARGUMENT = 8,    /* bad key, bad measurement, NULL where not allowed */
  CALSTORE_NO_MEMORY = 9,           /* allocation failed; nothing was changed */
  CALSTORE_LOCK_FAILED = 10,        /* the inter-process lock could not be taken */
} calstore_status;

/* Stable lower-case word for a status ("ok", "not_found", "disabled",
 * "unreadable", "malformed", "unsupported_version", "policy_rejected",
 * "write_failed", "invalid_argument", "no_memory", "lock_failed"); "unknown"
 * for values outside the enum. The string is static. */
CALSTORE_API const char *calstore_status_name(calstore_status status);

/* The version of the library running ("MAJOR.MINOR.PATCH"; static) and,
 * when number is not NULL, its CALSTORE_VERSION_NUMBER. (since 1.1) */
CALSTORE_API const char *calstore_version(uint32_t *number);

/* Error details of a failed call. `line` is 1-based, 0 when no file line is
 * concerned; `path` names the file at fault, empty when none. */
typedef struct calstore_error {
  calstore_status status;
  unsigned line;
  char path[512];
  char message[1024];
} calstore_error;

typedef enum calstore_key_kind {
  CALSTORE_KEY_EXACT = 1,    /* backend, operator, implementation, model, processor, threads */
  CALSTORE_KEY_PORTABLE = 2, /* backend, operator, implementation, sorted structure */
} calstore_key_kind;

typedef enum calstore_source {
  CALSTORE_SOURCE_CALIBRATED = 1, /* written by a calibration sweep */
  CALSTORE_SOURCE_OVERRIDE = 2,   /* installed by a user; wins over calibrated */
} calstore_source;

typedef struct calstore_property {
  const char *name;
  const char *value;
} calstore_property;

typedef struct calstore_measurement {
  const char *name; /* non-empty */
  double value;     /* finite */
  const char *unit; /* may be empty, not NULL */
} calstore_measurement;

/* The identity of a profile.
 *
 * An exact key sets model_digest, processor (non-empty) and thread_count
 * (>= 1) and leaves structure empty. A portable key sets structure (at least
 * one property, names unique; order does not matter, the store sorts them by
 * name) and leaves model_digest and processor NULL and thread_count 0.
 * backend, operator_name and implementation are always required. A key that
 * is incomplete or mixes the two kinds is CALSTORE_INVALID_ARGUMENT.
 * No field may contain a line feed (LF) or NUL (the format cannot carry
 * them: LF ends a line, and a NUL would end the C string); a CR is carried
 * as it is inside a quoted value (both the reference's reader and calhost's
 * load it). */
typedef struct calstore_key {
  calstore_key_kind kind;
  const char *backend;
  const char *operator_name;
  const char *implementation;
  /* exact keys only */
  const char *model_digest;
  const char *processor;
  uint32_t thread_count;
  /* portable keys only */
  const calstore_property *structure;
  size_t structure_count;
} calstore_key;

/* A read-only view of one stored profile. Pointers stay valid as stated by
 * the function that handed the view out. structure is sorted by name;
 * measurements are in their original order. */
typedef struct calstore_profile {
  calstore_key key;
  calstore_source source;
  const calstore_measurement *measurements;
  size_t measurement_count;
  const char *policy; /* NUL-terminated, non-empty */
  size_t policy_length;
} calstore_profile;

/* Policy serializer: returns the policy text (borrowed from the caller; must
 * stay valid until the store call that invoked it returns) and its length in
 * *length, or NULL on failure (optionally explaining why in err). The store
 * calls it exactly once per Store/InstallOverride. */
typedef const char *(*calstore_serializer_fn)(void *user, size_t *length, char *err,
                                              size_t err_capacity);

/* Policy validator/deserializer: returns nonzero when `policy` is acceptable
 * to the backend (and may deserialize it into `user`), 0 when it is not,
 * writing the backend's reason into err (NUL-terminated, at most
 * err_capacity bytes). Must not keep `policy` after returning. */
typedef int (*calstore_validator_fn)(void *user, const char *policy, size_t length, char *err,
                                     size_t err_capacity);

typedef struct calstore calstore;

/* Options of calstore_open. Initialise with calstore_options_init. */
typedef struct calstore_options {
  uint32_t struct_size;    /* sizeof(calstore_options), set by calstore_options_init */
  const char *path;        /* the store file; NULL: calstore_default_path */
  int persistence_enabled; /* 0: no disk read or write at all; default 1 */
  /* Appended fields (read only when struct_size covers them): */
  uint32_t lock_timeout_ms; /* how long a writer waits for the inter-process
                               lock before CALSTORE_LOCK_FAILED; default
                               CALSTORE_LOCK_TIMEOUT_DEFAULT_MS, 0 = try once,
                               UINT32_MAX = wait for ever */
  uint32_t flags;           /* CALSTORE_OPEN_* bits; default 0 (since 1.1) */
} calstore_options;

#define CALSTORE_LOCK_TIMEOUT_DEFAULT_MS 30000u

/* calstore_options.flags (since 1.1): never start a thread. By default a large store
 * file (8 MiB and more) is parsed by up to 8 threads that live only during
 * the load; a library embedded in a runtime that must not create threads
 * sets this flag and every load runs in the calling thread. */
#define CALSTORE_OPEN_NO_THREADS 0x1u

/* Fills *options with the defaults (default path, persistence enabled,
 * a 30 s lock timeout). */
CALSTORE_API void calstore_options_init(calstore_options *options);

/* Writes the default store file path into buf (NUL-terminated):
 * %LOCALAPPDATA%\calhost\profiles.txt on Windows, else
 * $XDG_CACHE_HOME/calhost/profiles.txt when XDG_CACHE_HOME is set, else
 * $HOME/.cache/calhost/profiles.txt. Returns CALSTORE_INVALID_ARGUMENT when
 * buf is too small or no base directory is known. */
CALSTORE_API calstore_status calstore_default_path(char *buf, size_t capacity);

/* Opens a store. *out receives a usable handle whenever memory allows, even
 * when loading the file failed (like sqlite3_open): the return value is the
 * load status. A missing file is CALSTORE_OK with an empty store. A
 * malformed file or unknown version leaves the handle empty and returns
 * CALSTORE_MALFORMED / CALSTORE_UNSUPPORTED_VERSION with the line in err.
 * A path that is not a regular file (a FIFO, a device, a directory) is
 * CALSTORE_UNREADABLE naming it; it is never opened for blocking reads.
 * With persistence disabled nothing on disk is touched.
 *
 * A path that is a symbolic link is resolved once, here (links to links
 * too, relative targets against the link's directory; a dangling link
 * names the file to create): the store then reads, locks
 * (`<real>.lock`) and replaces the real file, so the link stays a link
 * and writers through the link and through the target share one lock.
 * calstore_path returns the resolved path.
 *
 * With persistence on, a file name too long for the store's own siblings
 * (`<name>.lock`, `<name>.tmp`: longer than the directory's name limit,
 * pathconf _PC_NAME_MAX, usually 255 bytes) is refused up front with
 * CALSTORE_INVALID_ARGUMENT, a message naming the limit, and *out NULL:
 * no commit could ever write it. */
CALSTORE_API calstore_status calstore_open(const calstore_options *options, calstore **out,
                                           calstore_error *err);

/* Closes a store, frees its memory and sets *store to NULL. NULL-safe. */
CALSTORE_API void calstore_close(calstore **store);

/* The path this store reads and writes, after resolving a symbolic link
 * (valid until calstore_close). */
CALSTORE_API const char *calstore_path(const calstore *store);

/* Re-reads the file. On any failure the in-memory snapshot is unchanged.
 * CALSTORE_DISABLED when persistence is off. */
CALSTORE_API calstore_status calstore_reload(calstore *store, calstore_error *err);

/* Stores a calibrated profile: validates the key and measurements, calls
 * serializer once, runs validator (if not NULL) on the result, then commits
 * (lock, reload and merge the latest file, write a temporary sibling, fsync,
 * rename, fsync the directory). A profile with the same key and source is
 * replaced. On any failure neither the file nor the in-memory snapshot
 * changes, with one exception: when only the directory sync after the
 * rename fails, the new file is already what every process reads, so the
 * snapshot follows it and the status is CALSTORE_WRITE_FAILED with a
 * message saying the change may not survive a power loss. A writer waits
 * at most the lock timeout (calstore_options) for another writer's lock,
 * then returns CALSTORE_LOCK_FAILED.
 *
 * Refusals: a value the format cannot carry (line feed or NUL in any
 * string, non-finite measurement, empty measurement name or policy) is
 * CALSTORE_INVALID_ARGUMENT; a policy the validator refuses is
 * CALSTORE_POLICY_REJECTED with the backend's message. When the file on
 * disk is malformed or of an unknown version, the commit is refused with
 * CALSTORE_MALFORMED / CALSTORE_UNSUPPORTED_VERSION and the file's line in
 * err: the file is never overwritten (repair or remove it, then retry).
 * Write failures are CALSTORE_WRITE_FAILED / CALSTORE_LOCK_FAILED with the
 * failing step, the path and the system's error text (a file size limit is
 * EFBIG, "File too large": the library never raises SIGXFSZ itself, but a
 * program must ignore SIGXFSZ to get the error instead of being killed).
 * (All of this holds for every function that commits: overrides, clear,
 * invalidate, batches.)
 *
 * The replaced file keeps the existing file's permission bits, and its
 * owner and group where the writer may set them (best effort: a writer that
 * is not allowed to give the file away keeps what it may, e.g. the group
 * when it is a member). A new store file is created 0600 and the
 * directories the store creates 0700.
 *
 * A store file the writer may not write is never replaced, although the
 * rename would need only the directory's permission: a write-protected
 * file (POSIX: access(W_OK) fails, e.g. mode 0444 for a non-root writer,
 * or a read-only file system; Windows: the read-only attribute) fails the
 * commit with CALSTORE_WRITE_FAILED, "PATH is read-only ...", and stays
 * untouched. Make it writable to commit again.
 *
 * The lock file `<path>.lock` lets every writer of the store in (POSIX):
 * it is created read-write for its owner and for the group and others
 * where the store file grants them write permission, with the store file's
 * group (best effort); a writer that owns an older, narrower lock file
 * widens it. So a store shared by a group (mode 0664, a group-writable
 * directory) stays usable by every member. Before the store file exists
 * the lock file is created 0600.
 *
 * A commit that cannot change anything when there is no store file (only
 * clears and invalidations) creates nothing: no directory, no lock file. */
CALSTORE_API calstore_status calstore_store(calstore *store, const calstore_key *key,
                                            const calstore_measurement *measurements,
                                            size_t measurement_count,
                                            calstore_serializer_fn serializer,
                                            void *serializer_user, calstore_validator_fn validator,
                                            void *validator_user, calstore_error *err);

/* Same as calstore_store for a user override. */
CALSTORE_API calstore_status calstore_install_override(
    calstore *store, const calstore_key *key, const calstore_measurement *measurements,
    size_t measurement_count, calstore_serializer_fn serializer, void *serializer_user,
    calstore_validator_fn validator, void *validator_user, calstore_error *err);

/* Removes the user override with this key. CALSTORE_NOT_FOUND when none. */
CALSTORE_API calstore_status calstore_clear_override(calstore *store, const calstore_key *key,
                                                     calstore_error *err);

/* Removes every profile (both sources) of a backend, or only those of one
 * implementation version when implementation is not NULL. *removed (may be
 * NULL) receives the count. Removing nothing is CALSTORE_OK. On
 * CALSTORE_WRITE_FAILED *removed is nonzero exactly when the rename took
 * place and only the directory sync after it failed: the profiles are gone
 * from the file every process reads, but the change may not survive a
 * power loss (as calstore_batch_commit_applied's *applied; since 1.2). */
CALSTORE_API calstore_status calstore_invalidate(calstore *store, const char *backend,
                                                 const char *implementation, size_t *removed,
                                                 calstore_error *err);

/* Calls visit for every profile in memory, in file order, until it returns
 * nonzero. The view is valid only during the callback; the store is
 * read-locked meanwhile, so visit must not call back into the same store. */
typedef int (*calstore_visit_fn)(void *user, const calstore_profile *profile);
CALSTORE_API calstore_status calstore_inspect(calstore *store, calstore_visit_fn visit, void *user);

/* Number of profiles in memory. */
CALSTORE_API size_t calstore_count(calstore *store);

/* Fetches the profile with exactly this key (structure in any order) and
 * source from memory: one hash probe, no scan. On CALSTORE_OK *out
 * receives a result like calstore_lookup's (status OK, level from the key's
 * kind and the source, no rejections) that stays valid until
 * calstore_lookup_result_free whatever the store does later. Returns
 * CALSTORE_NOT_FOUND (*out NULL) when there is none, CALSTORE_INVALID_ARGUMENT
 * for a bad key. No validator runs: this is the stored profile as is.
 * (since 1.1) */
typedef struct calstore_lookup_result calstore_lookup_result;
CALSTORE_API calstore_status calstore_get(calstore *store, const calstore_key *key,
                                          calstore_source source, calstore_lookup_result **out,
                                          calstore_error *err);

/* ---- Batches: many changes, one lock/reload/merge/write. ---------------- */

typedef struct calstore_batch calstore_batch;

/* Starts a batch. Nothing is written until calstore_batch_commit. */
CALSTORE_API calstore_status calstore_batch_begin(calstore *store, calstore_batch **out,
                                                  calstore_error *err);
/* Queue a change. The key, measurements and serialized policy are checked
 * (and the serializer and validator called) now, so a bad entry is refused
 * at once and the rest of the batch is unaffected. */
CALSTORE_API calstore_status calstore_batch_store(
    calstore_batch *batch, const calstore_key *key, const calstore_measurement *measurements,
    size_t measurement_count, calstore_serializer_fn serializer, void *serializer_user,
    calstore_validator_fn validator, void *validator_user, calstore_error *err);
CALSTORE_API calstore_status calstore_batch_install_override(
    calstore_batch *batch, const calstore_key *key, const calstore_measurement *measurements,
    size_t measurement_count, calstore_serializer_fn serializer, void *serializer_user,
    calstore_validator_fn validator, void *validator_user, calstore_error *err);
/* Queue an already-serialized profile (used by import); profile->policy is
 * checked like a serializer's output. */
CALSTORE_API calstore_status calstore_batch_put(calstore_batch *batch,
                                                const calstore_profile *profile,
                                                calstore_error *err);
/* Conditional puts ("put if absent"): like calstore_batch_store (a
 * calibrated profile) and calstore_batch_put, but the profile is written
 * only when no profile with the same key and source exists at commit time,
 * i.e. in the file as reloaded under the inter-process lock (and after the
 * changes queued before it in the batch). The decision is the commit's, so
 * a profile another process stored after this one read its snapshot is
 * kept. *stored (may be NULL; must stay valid until calstore_batch_commit
 * returns) receives 1 when the commit wrote this profile, 0 when an
 * existing one was kept or the commit failed. (since 1.1) */
CALSTORE_API calstore_status calstore_batch_store_if_absent(
    calstore_batch *batch, const calstore_key *key, const calstore_measurement *measurements,
    size_t measurement_count, calstore_serializer_fn serializer, void *serializer_user,
    calstore_validator_fn validator, void *validator_user, int *stored, calstore_error *err);
CALSTORE_API calstore_status calstore_batch_put_if_absent(calstore_batch *batch,
                                                          const calstore_profile *profile,
                                                          int *stored, calstore_error *err);
CALSTORE_API calstore_status calstore_batch_clear_override(calstore_batch *batch,
                                                           const calstore_key *key,
                                                           calstore_error *err);
CALSTORE_API calstore_status calstore_batch_invalidate(calstore_batch *batch, const char *backend,
                                                       const char *implementation,
                                                       calstore_error *err);
/* Number of queued changes. */
CALSTORE_API size_t calstore_batch_size(const calstore_batch *batch);
/* Applies every queued change in order in one commit, then frees the batch
 * and sets *batch to NULL (also on failure). All or nothing: on failure
 * neither the file nor the in-memory snapshot changes, with the one
 * exception of calstore_store: when only the directory sync after the
 * rename fails, the change is in the file every process reads (the
 * snapshot follows it; *stored of a conditional put says 1) and the status
 * is CALSTORE_WRITE_FAILED; calstore_batch_commit_applied tells the two
 * apart. */
CALSTORE_API calstore_status calstore_batch_commit(calstore_batch **batch, calstore_error *err);
/* calstore_batch_commit, and *applied (may be NULL) receives whether the
 * change is now in the file every process reads: 1 on CALSTORE_OK (also
 * for an empty batch or one that changed nothing) and on a
 * CALSTORE_WRITE_FAILED after the rename (the directory sync failed: stored,
 * but the change may not survive a power loss), else 0. (since 1.2) */
CALSTORE_API calstore_status calstore_batch_commit_applied(calstore_batch **batch, int *applied,
                                                           calstore_error *err);
/* Drops a batch without committing; NULL-safe, sets *batch to NULL. */
CALSTORE_API void calstore_batch_abort(calstore_batch **batch);

/* ---- Lookup ---------------------------------------------------------- */

/* Why a candidate was not selected. Append-only. */
typedef enum calstore_reject_reason {
  CALSTORE_REJECT_OUTDATED_IMPLEMENTATION = 1,
  CALSTORE_REJECT_DIFFERENT_MODEL = 2,
  CALSTORE_REJECT_DIFFERENT_PROCESSOR = 3,
  CALSTORE_REJECT_DIFFERENT_THREAD_COUNT = 4,
  CALSTORE_REJECT_DIFFERENT_STRUCTURE = 5,
  CALSTORE_REJECT_POLICY_REJECTED = 6, /* the backend's validator refused it */
  CALSTORE_REJECT_FORCE_PORTABLE = 7,  /* exact profile skipped by force_portable */
} calstore_reject_reason;

/* Stable word for a reason ("outdated_implementation", "different_model",
 * "different_processor", "different_thread_count", "different_structure",
 * "policy_rejected", "force_portable"). */
CALSTORE_API const char *calstore_reject_reason_name(calstore_reject_reason reason);

/* What to look up. backend, operator_name and implementation are required.
 * The exact levels are consulted only when model_digest and processor are
 * set and thread_count >= 1 (and force_portable is 0); the portable levels
 * only when structure_count > 0. */
typedef struct calstore_lookup_options {
  const char *backend;
  const char *operator_name;
  const char *implementation;
  const char *model_digest;
  const char *processor;
  uint32_t thread_count;
  const calstore_property *structure;
  size_t structure_count;
  int force_portable;
} calstore_lookup_options;

/* Precedence levels, in the order they are walked. */
typedef enum calstore_level {
  CALSTORE_LEVEL_NONE = 0,
  CALSTORE_LEVEL_EXACT_OVERRIDE = 1,
  CALSTORE_LEVEL_PORTABLE_OVERRIDE = 2,
  CALSTORE_LEVEL_EXACT_CALIBRATED = 3,
  CALSTORE_LEVEL_PORTABLE_CALIBRATED = 4,
} calstore_level;

/* Stable word for a level ("none", "exact_override", "portable_override",
 * "exact_calibrated", "portable_calibrated"); "unknown" outside the enum.
 * (since 1.1) */
CALSTORE_API const char *calstore_level_name(calstore_level level);

typedef struct calstore_rejection {
  calstore_reject_reason reason;
  const char *message; /* human explanation, e.g. "implementation 2, wanted 3" */
  calstore_profile profile;
} calstore_rejection;

/* The outcome of a lookup; owned by the caller, freed with
 * calstore_lookup_result_free. Every pointer inside stays valid until then,
 * independent of later changes to the store. */
struct calstore_lookup_result {
  calstore_status status;          /* CALSTORE_OK when a profile was selected, else NOT_FOUND */
  calstore_level level;            /* where the selection came from */
  const calstore_profile *profile; /* the selected profile, NULL when none */
  const calstore_rejection *rejections; /* candidates of the same backend and operator */
  size_t rejection_count;
};

/* Walks the precedence (exact override, portable override, exact calibrated,
 * portable calibrated; force_portable skips the exact levels). A candidate
 * matching the level's key is offered to validator (if not NULL; it is
 * called without the store's lock held, and must not close the store); one
 * it refuses is recorded as CALSTORE_REJECT_POLICY_REJECTED and the walk goes
 * on. With force_portable, exact profiles of the requested implementation
 * are reported as CALSTORE_REJECT_FORCE_PORTABLE. A profile that matches a
 * lower level than the selected one is not a rejection (it was not needed). Profiles of the same
 * backend and operator that do not match are recorded with the first reason that applies
 * (implementation, model, processor, thread count, structure). The rejections
 * come in this order: the validator's refusals in the walk's level order,
 * then the other profiles in the store's file order. Returns CALSTORE_OK (selected),
 * CALSTORE_NOT_FOUND (none; *out still describes the rejections) or an
 * error (then *out is NULL). */
CALSTORE_API calstore_status calstore_lookup(calstore *store,
                                             const calstore_lookup_options *options,
                                             calstore_validator_fn validator, void *validator_user,
                                             calstore_lookup_result **out, calstore_error *err);

/* calstore_lookup without the rejection report: the same walk and the same
 * validator calls, but *out never lists rejections (rejection_count 0).
 * What a deployment calls on its hot path: an exact hit costs one hash probe
 * and no copy (the result references the stored record). */
CALSTORE_API calstore_status calstore_select(calstore *store,
                                             const calstore_lookup_options *options,
                                             calstore_validator_fn validator, void *validator_user,
                                             calstore_lookup_result **out, calstore_error *err);

/* Frees a lookup result and sets *result to NULL. NULL-safe. */
CALSTORE_API void calstore_lookup_result_free(calstore_lookup_result **result);

/* ---- Files ------------------------------------------------------------ */

/* One problem found in a file. */
typedef void (*calstore_diagnostic_fn)(void *user, calstore_status status, unsigned line,
                                       const char *message);

/* Parses the file at path without a store: calls visit for each profile (the
 * view is valid during the callback; may be NULL) only if the whole file is
 * valid, and reports every problem found through diagnostic (may be NULL).
 * Returns the file's verdict: OK, NOT_FOUND, UNREADABLE (also for a path
 * that is not a regular file, such as a FIFO: it is never read from),
 * MALFORMED or UNSUPPORTED_VERSION; *profile_count (may be NULL) receives the number of
 * profiles of a valid file. */
CALSTORE_API calstore_status calstore_read_file(const char *path, calstore_visit_fn visit,
                                                void *visit_user, calstore_diagnostic_fn diagnostic,
                                                void *diagnostic_user, size_t *profile_count);

/* (calstore_read_file and calstore_read_buffer may parse a large text with
 * short-lived helper threads, as calstore_open does without
 * CALSTORE_OPEN_NO_THREADS.) */

/* The same, for text already in memory (used by the fuzzer and by tests). */
CALSTORE_API calstore_status calstore_read_buffer(const char *data, size_t length,
                                                  calstore_visit_fn visit, void *visit_user,
                                                  calstore_diagnostic_fn diagnostic,
                                                  void *diagnostic_user, size_t *profile_count);

/* Writes the in-memory profiles to path in canonical version-1 form (file
 * order), atomically: through a temporary sibling with a unique name
 * (`<path>.XXXXXX.tmp`, created exclusively, removed on failure), fsync,
 * rename. Nothing else is ever removed (an unrelated `<path>.tmp` is left
 * alone). A symbolic link at path is followed (the real file is replaced);
 * an existing file keeps its mode (and owner where possible), a new one is
 * 0600; an existing path that is not a regular file is refused, and so is
 * a file the caller may not write (CALSTORE_WRITE_FAILED, "is read-only",
 * as for a commit). Works also
 * with persistence disabled: it is an explicit export.
 * Onto the store's own file (its path, another spelling of it or a
 * symbolic link leading to it; a store that keeps a file) the export is a
 * commit like any writer's: under the store's lock, the latest file is
 * reloaded (merging other writers' commits) and rewritten canonically, so
 * nothing committed meanwhile is undone. Another name of the store file (a
 * hard link) and the store's lock file are refused
 * (CALSTORE_INVALID_ARGUMENT, naming both). */
CALSTORE_API calstore_status calstore_export(calstore *store, const char *path,
                                             calstore_error *err);

#ifdef __cplusplus
}
#endif
#endif /* CALHOST_CALSTORE_H */
