/*
 * report.c: the report of `calhost plugin check` (report.h): verdicts as
 * text lines or JSON members, and the summary.
 */
#define _GNU_SOURCE
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/text.h"

void check_report_sample(const char *text, char *buf, size_t cap) {
  size_t n = 0;
  for (; text[n] && n < 40 && n + 1 < cap; n++)
    buf[n] = ((unsigned char)text[n] < 0x20 || text[n] == 0x7f || text[n] == '"') ? '.' : text[n];
  buf[n] = '\0';
}

void check_report(report_sink *r, const char *name, int ok, const char *msg, const char *logs) {
  if (ok == CHECK_SKIPPED) {
    if (!r->skipped++)
      snprintf(r->skip_why, sizeof r->skip_why, "%s", msg);
  } else if (ok)
    r->passed++;
  else
    r->failed++;
  if (r->o->json) {
    if (!r->checks)
      return;
    fputs(r->passed + r->failed + r->skipped > 1 ? ",\n{" : "\n{", r->checks);
    base_json_member_string(r->checks, 1, "name", name);
    base_json_member_string(r->checks, 0, "status",
                            ok == CHECK_SKIPPED ? "skip"
                            : ok                ? "pass"
                                                : "fail");
    base_json_member_string(r->checks, 0, "message", msg);
    base_json_key(r->checks, 0, "logs");
    fprintf(r->checks, "[%s]}", logs ? logs : "");
    return;
  }
  if (ok == CHECK_SKIPPED) {
    if (!r->o->quiet)
      base_text_printf(r->out, "SKIP %s: %s\n", name, msg);
  } else if (ok) {
    if (r->o->quiet)
      return;
    if (r->o->verbose && msg[0])
      base_text_printf(r->out, "PASS %s (%s)\n", name, msg);
    else
      fprintf(r->out, "PASS %s\n", name);
  } else {
    base_text_printf(r->out, "FAIL %s: %s\n", name, msg);
  }
}

void check_report_stderr(FILE *out, const isolate_child_outcome *oc) {
  fprintf(out, "    its stderr (%zu bytes%s):\n", oc->errors_total,
          oc->errors_total >= sizeof oc->errors ? ", the first shown" : "");
  const char *p = oc->errors;
  while (*p) {
    size_t n = strcspn(p, "\n");
    base_text_printf(out, "      %.*s\n", (int)n, p);
    p += n + (p[n] == '\n');
  }
}

void check_report_quiet(report_sink *r, const char *stream, size_t total, const char *sample) {
  char name[32], msg[256];
  snprintf(name, sizeof name, "quiet_%s", stream);
  if (total)
    snprintf(msg, sizeof msg, "the plugin wrote %zu bytes to %s (\"%s\"); use host->log instead",
             total, stream, sample);
  else
    snprintf(msg, sizeof msg, "nothing written to %s", stream);
  check_report(r, name, total == 0, msg, NULL);
}

void check_report_finish(report_sink *r, const char *path) {
  if (!r->o->json) {
    if (!r->o->quiet && r->skipped)
      base_text_printf(r->out, "%d of %d checks passed, %d skipped: %s\n", r->passed,
                       r->passed + r->failed, r->skipped, r->skip_why);
    else if (!r->o->quiet)
      fprintf(r->out, "%d of %d checks passed\n", r->passed, r->passed + r->failed);
    return;
  }
  fclose(r->checks);
  r->checks = NULL;
  fputc('{', r->out);
  base_json_member_string(r->out, 1, "plugin", path);
  base_json_member_string(r->out, 0, "backend", r->backend[0] ? r->backend : NULL);
  base_json_member_uint(r->out, 0, "passed", (unsigned)r->passed);
  base_json_member_uint(r->out, 0, "failed", (unsigned)r->failed);
  base_json_member_uint(r->out, 0, "skipped", (unsigned)r->skipped);
  base_json_key(r->out, 0, "checks");
  fprintf(r->out, "[%s\n]}\n", r->checks_text ? r->checks_text : "");
  free(r->checks_text);
  r->checks_text = NULL;
}
