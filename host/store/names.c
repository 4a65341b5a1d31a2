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
  static const char *const words[] = {[CALSTORE_OK] = "ok",
                                      [CALSTORE_NOT_FOUND] = "not_found",
                                      [CALSTORE_DISABLED] = "disabled",
                                      [CALSTORE_UNREADABLE] = "unreadable",
                                      [CALSTORE_MALFORMED] = "malformed",
                                      [CALSTORE_UNSUPPORTED_VERSION] = "unsupported_version",
                                      [CALSTORE_POLICY_REJECTED] = "policy_rejected",
                                      [CALSTORE_WRITE_FAILED] = "write_failed",
                                      [CALSTORE_INVALID_ARGUMENT] = "invalid_argument",
                                      [CALSTORE_NO_MEMORY] = "no_memory",
                                      [CALSTORE_LOCK_FAILED] = "lock_failed"};
  return WORD_OF(words, CALSTORE_LOCK_FAILED, status);
}

const char *calstore_reject_reason_name(calstore_reject_reason reason) {
  static const char *const words[] = {
      [CALSTORE_REJECT_OUTDATED_IMPLEMENTATION] = "outdated_implementation",
      [CALSTORE_REJECT_DIFFERENT_MODEL] = "different_model",
      [CALSTORE_REJECT_DIFFERENT_PROCESSOR] = "different_processor",
      [CALSTORE_REJECT_DIFFERENT_THREAD_COUNT] = "different_thread_count",
      [CALSTORE_REJECT_DIFFERENT_STRUCTURE] = "different_structure",
      [CALSTORE_REJECT_POLICY_REJECTED] = "policy_rejected",
      [CALSTORE_REJECT_FORCE_PORTABLE] = "force_portable"};
  return WORD_OF(words, CALSTORE_REJECT_FORCE_PORTABLE, reason);
}

const char *calstore_level_name(calstore_level level) {
  static const char *const words[] = {[CALSTORE_LEVEL_NONE] = "none",
                                      [CALSTORE_LEVEL_EXACT_OVERRIDE] = "exact_override",
                                      [CALSTORE_LEVEL_PORTABLE_OVERRIDE] = "portable_override",
                                      [CALSTORE_LEVEL_EXACT_CALIBRATED] = "exact_calibrated",
                                      [CALSTORE_LEVEL_PORTABLE_CALIBRATED] = "portable_calibrated"};
  return WORD_OF(words, CALSTORE_LEVEL_PORTABLE_CALIBRATED, level);
}
