/*
 * load.c: reading a run file (the JSON report of `calhost calibrate`) with
 * jansson: invalid UTF-8 is repaired first (a plugin's bytes must not make
 * the whole run unreadable), syntax errors name the file, line and column,
 * and a file that is not a calibrate report is refused by name.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "internal.h"
#include "report.h"

#define RUN_FILE_MAX (512u * 1024u * 1024u)

static char *read_all(FILE *f, size_t *len) {
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (n < cap) {
      if (ferror(f)) {
        free(buf);
        return NULL;
      }
      *len = n;
      return buf;
    }
    if (cap >= RUN_FILE_MAX) {
      free(buf);
      errno = EFBIG;
      return NULL;
    }
    char *more = base_array_grow(buf, n, &cap, 1, 0);
    if (!more)
      free(buf);
    buf = more;
  }
  errno = ENOMEM;
  return NULL;
}

json_t *report_load(const char *path, char *err, size_t cap) {
  int is_stdin = !strcmp(path, "-");
  const char *name = is_stdin ? "<stdin>" : path;
  FILE *f = is_stdin ? stdin : fopen(path, "rb");
  if (!f) {
    snprintf(err, cap, "%s: %s", name, strerror(errno));
    return NULL;
  }
  size_t len = 0;
  char *raw = read_all(f, &len);
  int e = errno;
  if (!is_stdin)
    fclose(f);
  if (!raw) {
    snprintf(err, cap, "%s: cannot read: %s", name, strerror(e));
    return NULL;
  }
  if (rpt_is_space_file(raw, len)) { /* a recorded space, not a run */
    json_t *run = rpt_space_load(raw, len, name, err, cap);
    free(raw);
    return run;
  }
  size_t fixed_len = 0;
  char *fixed = rpt_utf8_repair(raw, len, &fixed_len);
  free(raw);
  if (!fixed) {
    snprintf(err, cap, "%s: out of memory", name);
    return NULL;
  }
  json_error_t je;
  json_t *root = json_loadb(fixed, fixed_len, 0, &je);
  free(fixed);
  if (!root) {
    snprintf(err, cap, "%s:%d:%d: not valid JSON: %s", name, je.line, je.column, je.text);
    return NULL;
  }
  if (!json_is_object(root) || !json_is_array(json_object_get(root, "results"))) {
    snprintf(err, cap,
             "%s: not the JSON report of `calhost calibrate --json` (no \"results\" array)", name);
    json_decref(root);
    return NULL;
  }
  return root;
}

int report_html_file(const char *run_path, const char *html_path, char *err, size_t cap) {
  json_t *run = report_load(run_path, err, cap);
  if (!run)
    return -1;
  FILE *out = fopen(html_path, "w");
  if (!out) {
    snprintf(err, cap, "%s: %s", html_path, strerror(errno));
    json_decref(run);
    return -1;
  }
  const char *slash = strrchr(run_path, '/');
  int rc = report_write_html(run, slash ? slash + 1 : run_path, out, err, cap);
  if (fclose(out) != 0 && rc == 0) {
    snprintf(err, cap, "%s: %s", html_path, strerror(errno));
    rc = -1;
  } else if (rc != 0) {
    /* err says what; name the file */
    char what[512];
    snprintf(what, sizeof what, "%s", err);
    snprintf(err, cap, "%s: %s", html_path, what);
  }
  json_decref(run);
  return rc;
}
