/*
 * report.h: the report of `calhost plugin check`: each check's verdict as a
 * text line or a member of the JSON report, the quiet_stdout/quiet_stderr
 * verdicts and the summary. Private to host/check.
 */
#ifndef CALHOST_CHECK_REPORT_H
#define CALHOST_CHECK_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "check.h"
#include "isolate/codec.h"
#include "isolate/isolate.h"

/* A verdict: 0 failed, 1 passed, CHECK_SKIPPED not run (a device backend
 * without a device here): the codec's CHECK_RESULT verdicts. */
#define CHECK_SKIPPED CALHOST_REC_CHECK_SKIPPED

/* Where the verdicts go: text lines on out, or (o->json) the members of
 * the JSON report's "checks" array, gathered in a memory stream and written
 * whole by check_report_finish (the counts and the backend come first). */
typedef struct report_sink {
  FILE *out;
  const check_options *o;
  int passed, failed;
  int skipped;        /* checks not run: a device backend without a device */
  char skip_why[256]; /* the first skip's reason */
  FILE *checks;       /* json: the "checks" members so far */
  char *checks_text;
  size_t checks_length;
  char backend[256]; /* json: from the identity check, "" until then */
} report_sink;

/* One line of captured output for a report: control characters and quotes
 * become '.', at most 40 bytes. */
void check_report_sample(const char *text, char *buf, size_t cap);

/* One check's verdict (0, 1 or CHECK_SKIPPED): counted, and reported as a
 * text line ("PASS name", with -v "PASS name (details)", "FAIL name:
 * reason"; --quiet: FAIL lines only) or as a member of the JSON "checks"
 * array with the log messages gathered in logs (a JSON array's members;
 * NULL: none). */
void check_report(report_sink *r, const char *name, int verdict, const char *msg, const char *logs);

/* -v, under a check whose child died: the first bytes it wrote to stderr
 * (a sanitizer's report, an assertion), a line each, escaped. */
void check_report_stderr(FILE *out, const isolate_child_outcome *oc);

/* quiet_stdout / quiet_stderr: what the plugin wrote on `stream` in all. */
void check_report_quiet(report_sink *r, const char *stream, size_t total, const char *sample);

/* The end of the report: "N of M checks passed" (not with --quiet), or
 * the JSON object around the gathered checks. */
void check_report_finish(report_sink *r, const char *path);

#endif /* CALHOST_CHECK_REPORT_H */
