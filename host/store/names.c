/*
 * names.c: the words of libcalstore's enums (calstore_status_name,
 * calstore_reject_reason_name): what diagnostics, the CLI and JSON output
 * print. Unknown values give "unknown".
 */
#include "internal.h"

const char *calstore_status_name(calstore_status status) {
  switch (status) {
  case CALSTORE_OK:
    return "ok";
  case CALSTORE_NOT_FOUND:
    return "not_found";
  case CALSTORE_DISABLED:
    return "disabled";
  case CALSTORE_UNREADABLE:
    return "unreadable";
  case CALSTORE_MALFORMED:
    return "malformed";
  case CALSTORE_UNSUPPORTED_VERSION:
    return "unsupported_version";
  case CALSTORE_POLICY_REJECTED:
    return "policy_rejected";
  case CALSTORE_WRITE_FAILED:
    return "write_failed";
  case CALSTORE_INVALID_ARGUMENT:
    return "invalid_argument";
  case CALSTORE_NO_MEMORY:
    return "no_memory";
  case CALSTORE_LOCK_FAILED:
    return "lock_failed";
  }
  return "unknown";
}

const char *calstore_reject_reason_name(calstore_reject_reason reason) {
  switch (reason) {
  case CALSTORE_REJECT_OUTDATED_IMPLEMENTATION:
    return "outdated_implementation";
  case CALSTORE_REJECT_DIFFERENT_MODEL:
    return "different_model";
  case CALSTORE_REJECT_DIFFERENT_PROCESSOR:
    return "different_processor";
  case CALSTORE_REJECT_DIFFERENT_THREAD_COUNT:
    return "different_thread_count";
  case CALSTORE_REJECT_DIFFERENT_STRUCTURE:
    return "different_structure";
  case CALSTORE_REJECT_POLICY_REJECTED:
    return "policy_rejected";
  case CALSTORE_REJECT_FORCE_PORTABLE:
    return "force_portable";
  }
  return "unknown";
}
