/*
 * names.c: the words of libcalstore's enums (calstore_status_name,
 * calstore_reject_reason_name, calstore_level_name): what diagnostics, the
 * CLI and JSON output print. Unknown values give "unknown". libcalstore
 * links no host part, so it keeps its own table rule (word_of) rather than
 * the host's base/words.h.
 */
#include "internal.h"

/* words[v] when v < n and words[v] is set, else "unknown". */
static const char *word_of(const char *const *words, size_t n, unsigned v) {
  return v < n && words[v] ? words[v] : "unknown";
}

/* WORD_OF(words, last, v): word_of over a table indexed by an enum whose
 * last value is `last`; fails to compile unless the table has one entry for
 * each value from 0 to last. */
#define WORD_OF(words, last, v)                                                                    \
  ((void)sizeof(struct {                                                                           \
     _Static_assert(sizeof(words) / sizeof *(words) == (size_t)(last) + 1,                         \
                    #words " must name every value up to " #last);                                 \
     int covered;                                                                                  \
   }),                                                                                             \
   word_of((words), sizeof(words) / sizeof *(words), (unsigned)(v)))

const char *calstore_status_name(calstore_status status) {
  /* clang-format off */
  static const char *const words[] = {
      "ok", "not_found", "disabled", "unreadable", "malformed", "unsupported_version",
      "policy_rejected", "write_failed", "invalid_argument", "no_memory", "lock_failed"};
  /* clang-format on */
  return WORD_OF(words, CALSTORE_LOCK_FAILED, status);
}

const char *calstore_reject_reason_name(calstore_reject_reason reason) {
  /* clang-format off */
  static const char *const words[] = {
      [CALSTORE_REJECT_OUTDATED_IMPLEMENTATION] = "outdated_implementation", "different_model",
      "different_processor", "different_thread_count", "different_structure", "policy_rejected",
      "force_portable"};
  /* clang-format on */
  return WORD_OF(words, CALSTORE_REJECT_FORCE_PORTABLE, reason);
}

const char *calstore_level_name(calstore_level level) {
  static const char *const words[] = {"none", "exact_override", "portable_override",
                                      "exact_calibrated", "portable_calibrated"};
  return WORD_OF(words, CALSTORE_LEVEL_PORTABLE_CALIBRATED, level);
}
