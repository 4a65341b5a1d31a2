/*
 * values.h: the one parser of the values that calhost.ini and the command
 * line share: booleans, decimal counts, durations, thread lists, single
 * thread counts, shapes, search strategies and budgets, each with one set
 * of limits. The configuration (config.c) and the CLI's flags (--threads,
 * --time-budget, --timeout, --repetitions, --strategy, --budget, --shape)
 * call these functions, so a value accepted in one
 * place is accepted in the other and refused with the same explanation.
 *
 * Numbers are decimal only: digits, and for durations one optional '.'
 * followed by digits; no sign, no hexadecimal, no exponent, no "inf" or
 * "nan". A value has no blank before or after it (the config reader strips
 * them from a line's value; on the command line `--threshold ' 0.5'` is
 * refused like any malformed number); blanks are ignored only around each
 * item of a list ("1, 2, max"). Every numeric option and value of the CLI
 * and the config goes through these functions (no strtol/strtod of its
 * own): --shards and --shard I/N use config_value_uint too.
 *
 * Every parser returns 0 and writes *out, or returns -1, leaves *out
 * unchanged and writes into why (NUL-terminated, at most why_capacity;
 * why may be NULL) what was wrong and what is expected, e.g.
 * "'0' is not a thread count (expected 1 to 4096 or 'max')". Callers prefix
 * it with the place ("FILE:LINE: bad value for 'threads' ...", "calibrate:
 * bad --threads ...").
 */
#ifndef CALHOST_CONFIG_VALUES_H
#define CALHOST_CONFIG_VALUES_H

#include <stddef.h>
#include <stdint.h>

#define CALHOST_MAX_THREADS 4096            /* a thread count: 1 to this, or max */
#define CALHOST_MAX_SHAPE_RANK 8            /* a shape: 1 to this many dimensions */
#define CALHOST_MAX_REPETITIONS 1000000u    /* repetitions: 0 (the rigor's default) to this */
#define CALHOST_MAX_SECONDS 1e7             /* a duration: at most this many seconds */
#define CALHOST_MAX_EVALUATIONS 1000000000u /* a search budget: at most this many evaluations */

/* true/false, yes/no, on/off, 1/0 (any case) into *out (1 or 0). */
int config_value_bool(const char *text, int *out, char *why, size_t why_capacity);

/* A decimal integer from min to max (inclusive) into *out. */
int config_value_uint(const char *text, unsigned long long min, unsigned long long max,
                      unsigned long long *out, char *why, size_t why_capacity);

/* Repetitions: 0 (the rigor's default) to CALHOST_MAX_REPETITIONS. */
int config_value_repetitions(const char *text, uint32_t *out, char *why, size_t why_capacity);

/* A duration: a decimal number with an optional unit s (the default), m or
 * h ("20", "20s", "1.5m", "1h"), at most CALHOST_MAX_SECONDS, into *seconds.
 * Zero is accepted only when allow_zero is nonzero. */
int config_value_duration(const char *text, int allow_zero, double *seconds, char *why,
                          size_t why_capacity);

/* A fraction: a decimal number ("0.25") or a percentage ("25%", divided by
 * 100), 0 to max (a fraction: 10 is 1000 %), into *out. A bare number above
 * max ("25": 2500 %) is refused, saying that a bare number is a fraction. */
int config_value_fraction(const char *text, double max, double *out, char *why,
                          size_t why_capacity);

/* One thread count: 1 to CALHOST_MAX_THREADS, or "max" (any case), which is
 * written as 0. */
int config_value_thread_count(const char *text, uint32_t *out, char *why, size_t why_capacity);

/* A comma-separated list of thread counts ("1,2,max"): at least one item,
 * no empty item, no item twice. On success *out is a malloc'd array of
 * *count values (0 stands for max) that the caller frees; on failure *out
 * and *count are unchanged (-1 also on allocation failure, why "out of
 * memory"). */
int config_value_threads(const char *text, uint32_t **out, size_t *count, char *why,
                         size_t why_capacity);

/* A shape: 1 to CALHOST_MAX_SHAPE_RANK positive decimal integers (at most
 * INT64_MAX), comma-separated ("256,256,256"), into dims[0..*rank). */
int config_value_shape(const char *text, int64_t dims[CALHOST_MAX_SHAPE_RANK], size_t *rank,
                       char *why, size_t why_capacity);

/* A device selection: "all" (any case; *all = 1, *out NULL, *count 0) or
 * a comma-separated list of devices, each a device index (decimal, 0 to
 * 65535) or a device identity as `calhost devices` prints it (printable,
 * without ',' or control characters; blanks around an item are dropped):
 * at least one item, no empty item, no item twice. On success *out is a
 * malloc'd array of *count malloc'd strings (the caller frees them with
 * config_value_strings_free); on failure *out, *count and *all are
 * unchanged. */
#define CALHOST_MAX_DEVICE_INDEX 65535u
int config_value_devices(const char *text, char ***out, size_t *count, int *all, char *why,
                         size_t why_capacity);

/* Frees an array of count malloc'd strings (config_value_devices). */
void config_value_strings_free(char **v, size_t count);

/* Whether a device selection item is an index (all decimal digits), and
 * its value (0 to CALHOST_MAX_DEVICE_INDEX) in *index. */
int config_value_device_index(const char *item, uint32_t *index);

/* A search strategy (host/search): "default" (the rigor level decides),
 * "exhaustive", "random", "local", "annealing", "genetic" or "model", into
 * *out (a search_strategy; default is 0). */
int config_value_strategy(const char *text, int *out, char *why, size_t why_capacity);

/* A search budget: a number of evaluations ("200": candidates measured,
 * 1 to CALHOST_MAX_EVALUATIONS), or a duration with its unit ("30s",
 * "1.5m", "1h": as config_value_duration, but the unit is required so that
 * "200" is never read as seconds), or "0" (none: the rigor level's budget).
 * Sets *evaluations and *seconds (the other one 0). */
int config_value_search_budget(const char *text, uint32_t *evaluations, double *seconds, char *why,
                               size_t why_capacity);

/* Bindings of symbolic model dimensions: "batch=8, seq=128" (values
 * positive decimal integers; each name once; an empty text gives none). A
 * name is a word of letters, digits, '_', '.', '-', ':' and '/', or any
 * text in double quotes with \" and \\ escaped, so that every dim_param an
 * exporter writes can be bound: "past_sequence_length + 1"=129. The syntax
 * of `dims =` in [model NAME] and of --dims. Returns 0 with *out (free with
 * config_dims_free) and *count, or -1 with the reason in why and *out NULL.
 * A '|' (several bindings, config_value_bindings) is refused here. */
struct config_dim; /* config.h */
struct config_binding;
int config_value_dims(const char *text, struct config_dim **out, size_t *count, char *why,
                      size_t why_capacity);
void config_dims_free(struct config_dim *dims, size_t count);

/* Several bindings separated by '|' ("batch=1, seq=128 | batch=8, seq=512"),
 * each as config_value_dims, none empty, none given twice; an empty text
 * gives none (*count 0). Free with config_bindings_free. */
int config_value_bindings(const char *text, struct config_binding **out, size_t *count, char *why,
                          size_t why_capacity);
void config_bindings_free(struct config_binding *bindings, size_t count);

/* The canonical text of a binding: NAME=VALUE pairs sorted by name
 * (bytewise), ","-separated, without blanks, a name that is not a plain
 * word in double quotes ("past_sequence_length + 1"=129): equal bindings
 * give equal texts and the text parses back as the binding. "" for none.
 * Returns the full length like snprintf. */
size_t config_dims_canonical(const struct config_dim *dims, size_t count, char *buf, size_t cap);

/* A dimension's name as `dims` takes it: itself when a plain word, else in
 * double quotes with '"' and '\' escaped. Returns the length like snprintf. */
size_t config_dim_name_quoted(const char *name, char *buf, size_t cap);

#endif /* CALHOST_CONFIG_VALUES_H */
