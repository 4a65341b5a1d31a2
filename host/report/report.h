/*
 * report.h: `calhost report`: turns the JSON report of a calibrate run
 * (what `calhost calibrate --json` prints, see host/calibrate/report.c) into one
 * self-contained HTML page: no network, no external assets, no scripts;
 * every chart is inline SVG written here. Every string of the run (plugin,
 * store and processor strings are untrusted) is HTML-escaped, with control
 * characters and invalid UTF-8 replaced by U+FFFD.
 * Internal to the host (the command line links it).
 */
#ifndef CALHOST_REPORT_REPORT_H
#define CALHOST_REPORT_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

/* Reads a run file ("-": standard input) and parses it. Invalid UTF-8 in
 * the file is replaced by U+FFFD first (the report is still readable). A
 * recorded search space (first line "calhost-search-space 1") is read with
 * host/search's reader and returned as a run of one result (see space.c).
 * Returns the root object (the caller json_decref()s it), or NULL with a
 * message in err naming the file (and line and column for a JSON syntax
 * error), also when the root is not an object with a "results" array. */
json_t *report_load(const char *path, char *err, size_t cap);

/* Writes the HTML page of a run (a root as report_load returns) to
 * out. source (may be NULL) is the run file's name, shown in the page.
 * Fields missing or of the wrong type are shown as unknown, never trusted.
 * Returns 0, or -1 with err set when run is not a calibrate report or
 * writing to out failed. */
int report_write_html(const json_t *run, const char *source, FILE *out, char *err, size_t cap);

/* report_load(run_path) then report_write_html into
 * html_path (created or truncated in place, so its mode, owner and links
 * are kept). Returns 0, or -1 with err naming the file at fault. */
int report_html_file(const char *run_path, const char *html_path, char *err, size_t cap);

#endif /* CALHOST_REPORT_REPORT_H */
