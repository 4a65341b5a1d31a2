/*
 * names.c: the words of libcalstore's enums (calstore_status_name,
 * calstore_reject_reason_name, calstore_level_name): what diagnostics, the
 * CLI and JSON output print. Each enum's words are one table indexed by its
 * value; unknown values give "unknown".
 */
#include "internal.h"

#define CS_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* words[value], or "unknown" outside the table or in a hole. */
static const char *word_of(const char *const *words, size_t count, long value) {
  if (value < 0 || (size_t)value >= count || !words[value])
    return "unknown";
  return words[value];
}

const char *calstore_status_name(calstore_status status) {
  static const char *const words[] = {
      [CALSTORE_OK] = "ok",
      [CALSTORE_NOT_FOUND] = "not_found",
      [CALSTORE_DISABLED] = "disabled",
      [CALSTORE_UNREADABLE] = "unreadable",
      [CALSTORE_MALFORMED] = "malformed",
      [CALSTORE_UNSUPPORTED_VERSION] = "unsupported_version",
      [CALSTORE_POLICY_REJECTED] = "policy_rejected",
      [CALSTORE_WRITE_FAILED] = "write_failed",
      [CALSTORE_INVALID_ARGUMENT] = "invalid_argument",
      [CALSTORE_NO_MEMORY] = "no_memory",
      [CALSTORE_LOCK_FAILED] = "lock_failed",
  };
  return word_of(words, CS_COUNT(words), (long)status);
}

const char *calstore_reject_reason_name(calstore_reject_reason reason) {
  static const char *const words[] = {
      [CALSTORE_REJECT_OUTDATED_IMPLEMENTATION] = "outdated_implementation",
      [CALSTORE_REJECT_DIFFERENT_MODEL] = "different_model",
      [CALSTORE_REJECT_DIFFERENT_PROCESSOR] = "different_processor",
      [CALSTORE_REJECT_DIFFERENT_THREAD_COUNT] = "different_thread_count",
      [CALSTORE_REJECT_DIFFERENT_STRUCTURE] = "different_structure",
      [CALSTORE_REJECT_POLICY_REJECTED] = "policy_rejected",
      [CALSTORE_REJECT_FORCE_PORTABLE] = "force_portable",
  };
  return word_of(words, CS_COUNT(words), (long)reason);
}

const char *calstore_level_name(calstore_level level) {
  static const char *const words[] = {
      [CALSTORE_LEVEL_NONE] = "none",
      [CALSTORE_LEVEL_EXACT_OVERRIDE] = "exact_override",
      [CALSTORE_LEVEL_PORTABLE_OVERRIDE] = "portable_override",
      [CALSTORE_LEVEL_EXACT_CALIBRATED] = "exact_calibrated",
      [CALSTORE_LEVEL_PORTABLE_CALIBRATED] = "portable_calibrated",
  };
  return word_of(words, CS_COUNT(words), (long)level);
}
