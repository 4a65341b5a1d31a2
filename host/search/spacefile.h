/*
 * spacefile.h: recorded search spaces: the text format (README.md, "Space
 * files"), its writer (whole files, or a header then one line per evaluated
 * configuration as a sweep goes), its strict reader (errors name the file and
 * line), and the replay of a recording as a search_space whose
 * evaluate callback reads the recorded median and whose clock advances by
 * the recorded cost of each evaluation: strategies run against it without
 * running any kernel, deterministically for a seed.
 * Internal to the host.
 */
#ifndef CALHOST_SEARCH_SPACEFILE_H
#define CALHOST_SEARCH_SPACEFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "search.h"

/* The format version this code writes and reads. */
#define CALHOST_SPACE_FORMAT_VERSION 1

/* One evaluated configuration of a recording. */
typedef struct search_space_entry {
  uint32_t *config;       /* param_count value positions (owned) */
  int rejected;           /* 1: refused or failed; reason says why */
  double median;          /* the cost (microseconds for a sweep); 0 when rejected */
  double spread;          /* its spread (the MAD, same unit); 0 when unknown */
  double compile_seconds; /* preparing / compiling it (0 when negligible) */
  double seconds;         /* what evaluating it cost in all, compile included */
  char *policy;           /* the plugin's policy text, or NULL */
  char *reason;           /* why rejected, or NULL */
} search_space_entry;

/* A recorded space. Everything is owned by the struct. */
typedef struct search_space_file {
  char *name;
  char **meta; /* "KEY VALUE..." lines (provenance: plugin, shape, machine...) */
  size_t meta_count, meta_cap;
  search_param *params; /* names and value words owned */
  size_t param_count, param_cap;
  search_space_entry *entries; /* in evaluation (recording) order */
  size_t entry_count, entry_cap;
  /* lookup index: a hash table of the entries' configuration codes (open
   * addressing; slot = entry index + 1, 0 empty), so that adding and
   * finding are O(1) whatever the order of the file */
  size_t *slots;
  size_t slot_cap;
  /* What the meta lines say (the reader checks the known keys):
   * `meta order plausible|none`: whether the recorded order is a
   * plausibility order (a plugin's candidate order) or means nothing (a
   * product order); plausible when absent. `meta complete 1`: every valid
   * configuration of the space is recorded (0 when absent). `meta curated
   * 1`: the space is the plugin's curated candidate list, which a sweep
   * runs whole at measure (search_sweep_rigor_plan; 0 when absent). `meta cost
   * median|mean|min`: the statistic of the cost column (NULL: median, the
   * sweep's). */
  int order_plausible;
  int complete;
  int curated;
  const char *cost_statistic; /* points into meta, or NULL */
  /* per parameter: its value positions in the order of their words
   * (strcmp), so that a value's word is found by binary search: a space
   * with a 300,000-value parameter reads in O(n log n) */
  uint32_t **value_order;
  size_t value_order_cap;
} search_space_file;

/* Initialises an empty space named `name` (copied). Returns 0, -1 on OOM. */
int search_space_init(search_space_file *s, const char *name);

/* Adds a metadata line "KEY VALUE" (copied; no line breaks). 0 or -1.
 * The known keys set the fields above (order, complete, curated, cost); a bad
 * value for one of them is -1 (search_space_read names it). */
int search_space_add_meta(search_space_file *s, const char *key, const char *value);

/* Adds a parameter with its value words (copied; words without whitespace,
 * distinct). Only before the first entry. Returns 0, or -1 with err. */
int search_space_add_param(search_space_file *s, const char *name, int ordered,
                           const char *const *values, uint32_t value_count, char *err, size_t cap);

/* The position of a value word in parameter p, or -1. */
int64_t search_space_value_index(const search_space_file *s, size_t p, const char *word);

/* Appends an entry (config copied; policy and reason copied when non-NULL).
 * Returns 0, or -1 with err (a duplicate configuration, a position out of
 * range, out of memory). */
int search_space_add_entry(search_space_file *s, const search_space_entry *e, char *err,
                           size_t cap);

/* The entry recorded for config, or NULL. */
const search_space_entry *search_space_find(const search_space_file *s, const uint32_t *config);

/* The value of the first meta line with key (the text after "KEY "), or
 * NULL when there is none. */
const char *search_space_meta(const search_space_file *s, const char *key);

/* The best (lowest) median of the non-rejected entries; INFINITY if none. */
double search_space_best(const search_space_file *s);

/* The number of entries that were not rejected. (entry_count, every
 * recorded configuration, is the space's size for the percentages.) */
size_t search_space_ok_count(const search_space_file *s);

/* Frees everything and zeroes *s. NULL-safe. */
void search_space_free(search_space_file *s);

/* Writes the header (version, space, meta and param lines) to f. Returns 0,
 * or -1 on a write error. */
int search_space_write_header(FILE *f, const search_space_file *s);

/* Writes one config line for e (an entry of s's parameters) to f. 0 or -1. */
int search_space_write_entry(FILE *f, const search_space_file *s, const search_space_entry *e);

/* Writes the whole space to path under the rule of every output file
 * (base/files.h: missing folders created; a device, FIFO or directory at
 * path refused; a unique temporary file created exclusively, then renamed
 * over path). Returns 0, or -1 with "path: reason" in err. */
int search_space_save(const search_space_file *s, const char *path, char *err, size_t cap);

/* Reads a space file into *s (initialised here; free with
 * search_space_free, also after a failure). Strict: returns 0, or -1 with
 * "path:line: what is wrong" in err. A truncated last line (no newline) is
 * accepted when complete. Linear in the file whatever the order of its
 * configurations; the Cartesian product of the parameters may be up to
 * 2^64 (a sparse recording: only the recorded configurations are valid). */
int search_space_load(const char *path, search_space_file *s, char *err, size_t cap);

/* Same, from a stream; `name` is used in messages. */
int search_space_read(FILE *f, const char *name, search_space_file *s, char *err, size_t cap);

/* The replay of a recorded space. */
typedef struct search_space_replay {
  const search_space_file *space;
  double clock;       /* seconds charged so far: the sum of evaluated entries' seconds */
  uint32_t *start;    /* every recorded configuration in recorded order (starts and listed) */
  uint32_t evaluated; /* evaluate calls */
} search_space_replay;

/* Sets up *r and *out so that a search over *out replays s: valid() is "was
 * recorded", evaluate() returns the recorded median (or rejected) and
 * charges the recorded seconds to r->clock; out->starts is every recorded
 * configuration in recorded order (the plugin's candidate order, whatever
 * `meta order` says: a plugin hands its order in even when it means
 * nothing) when use_start; out->listed is every recorded configuration, so
 * that the engine never enumerates the product (a product over 2^20 is
 * replayed exactly). Use search_space_replay_clock with r as the
 * options' clock for a seconds budget. s and r must outlive the search.
 * Returns 0, or -1 when out of memory. Release with
 * search_space_replay_free. */
int search_space_replay_init(const search_space_file *s, int use_start, search_space_replay *r,
                             search_space *out);
double search_space_replay_clock(void *replay);
void search_space_replay_free(search_space_replay *r);

#endif /* CALHOST_SEARCH_SPACEFILE_H */
