/*
 * load.c: reading a run file (the JSON report of `calhost calibrate`) with
 * jansson: invalid UTF-8 is repaired first (a plugin's bytes must not make
 * the whole run unreadable), syntax errors name the file, line and column,
 * and a file that is not a calibrate report is refused by name.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/files.h"
#include "internal.h"
#include "report.h"

#define RUN_FILE_MAX (512u * 1024u * 1024u)

json_t *report_load(const char *path, char *err, size_t cap) {
  int is_stdin = !strcmp(path, "-");
  const char *name = is_stdin ? "<stdin>" : path;
  int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    snprintf(err, cap, "%s: %s", name, strerror(errno));
    return NULL;
  }
  size_t len = 0;
  char *raw = NULL;
  int e = base_read_fd(fd, RUN_FILE_MAX, &raw, &len) == 0 ? 0 : errno;
  if (!is_stdin)
    close(fd);
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
