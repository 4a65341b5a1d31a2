/*
 * texts.c: a sweep's texts from and about the plugin (see
 * measure_internal.h): a candidate's policy text as the plugin serializes
 * it (sweep_serialize), the plugin's pending message, and the failure and
 * warning texts built with it. Used by the run (measure.c) and the space
 * (space.c), below both.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "base/words.h"
#include "measure_internal.h"

const char *sweep_status_word(calhost_status st) {
  static const char *const words[] = {[CALHOST_OK] = "ok",
                                      [CALHOST_ERROR] = "error",
                                      [CALHOST_INVALID_ARGUMENT] = "invalid argument",
                                      [CALHOST_UNSUPPORTED] = "unsupported",
                                      [CALHOST_BUFFER_TOO_SMALL] = "buffer too small",
                                      [CALHOST_NO_MEMORY] = "out of memory",
                                      [CALHOST_CANCELLED] = "cancelled",
                                      [CALHOST_CHECK_FAILED] = "check failed",
                                      [CALHOST_ABI_MISMATCH] = "ABI mismatch"};
  return BASE_WORD(words, CALHOST_ABI_MISMATCH, st, "unknown status");
}

const char *sweep_plugin_message(sweep *s) {
  const sweep_hooks *h = &s->req->hooks;
  const char *m = h->take_plugin_error ? h->take_plugin_error(h->user) : NULL;
  return m && *m ? m : NULL;
}

void sweep_describe_failure(sweep *s, char *buf, size_t cap, const char *what, calhost_status st) {
  const char *m = sweep_plugin_message(s);
  if (m)
    snprintf(buf, cap, "%s: %s (%s)", what, sweep_status_word(st), m);
  else
    snprintf(buf, cap, "%s: %s", what, sweep_status_word(st));
}

/* Appends a warning about the plugin (out->warning, "; "-joined): what the
 * sweep noticed without failing, for calibrate to show once per plugin. */
void sweep_add_warning(sweep *s, const char *fmt, ...) {
  char text[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  char *old = s->out->warning;
  size_t n = old ? strlen(old) : 0;
  char *w = malloc(n + 2 + strlen(text) + 1);
  if (!w)
    return;
  sprintf(w, "%s%s%s", old ? old : "", old ? "; " : "", text);
  free(old);
  s->out->warning = w;
}

/* Checks the policy text itself: non-empty, printable, no line breaks. */
static int policy_text_ok(const char *p, size_t n, char *why, size_t cap) {
  if (n == 0) {
    snprintf(why, cap, "empty policy");
    return 0;
  }
  size_t i = base_str_control_at(p, n);
  if (i < n) {
    snprintf(why, cap, "policy contains a control character (byte %zu)", i);
    return 0;
  }
  return 1;
}

/* Serializes candidate `index` (or the default) into a fresh string.
 * Returns 0, or -1 with the reason in why. */
int sweep_serialize(sweep *s, uint32_t index, const uint32_t *config, char **policy, size_t *length,
                    char *why, size_t cap) {
  size_t bufcap = 256, len = 0;
  *policy = NULL;
  for (int attempt = 0; attempt < 4; attempt++) {
    char *buf = malloc(bufcap);
    if (!buf)
      return base_str_fail(why, cap, "out of memory");
    calhost_status st;
    len = 0;
    if (index != CALHOST_SWEEP_DEFAULT_INDEX && s->req->policy_count) /* explicit */
      st = calhost_copy_out(s->req->policies[index] ? s->req->policies[index] : "", buf, bufcap,
                            &len);
    else if (index == CALHOST_SWEEP_DEFAULT_INDEX)
      st = s->vt->default_policy(s->session, buf, bufcap, &len);
    else if (s->named && config)
      st = s->vt->serialize_assignment(s->session, config, s->np, buf, bufcap, &len);
    else
      st = s->vt->serialize_candidate(s->session, index, buf, bufcap, &len);
    if (st == CALHOST_BUFFER_TOO_SMALL) {
      free(buf);
      if (len > s->max_policy + 1)
        return base_str_fail(why, cap, "policy too large (%zu bytes, limit %zu)", len,
                             s->max_policy);
      bufcap = len > bufcap ? len : bufcap * 2;
      continue;
    }
    if (st != CALHOST_OK) {
      free(buf);
      sweep_describe_failure(s, why, cap, "serialization failed", st);
      return -1;
    }
    if (len >= bufcap) { /* a plugin that lies about the length */
      free(buf);
      return base_str_fail(why, cap, "serializer reported length %zu for a %zu-byte buffer", len,
                           bufcap);
    }
    buf[len] = '\0';
    if (len > s->max_policy) {
      free(buf);
      return base_str_fail(why, cap, "policy too large (%zu bytes, limit %zu)", len, s->max_policy);
    }
    if (!policy_text_ok(buf, len, why, cap)) {
      free(buf);
      return -1;
    }
    *policy = buf;
    *length = len;
    return 0;
  }
  return base_str_fail(why, cap, "serializer keeps asking for a larger buffer");
}
