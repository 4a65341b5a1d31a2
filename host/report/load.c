/*
 * load.c: reading a run file (the JSON report of `calhost calibrate`) with
 * jansson: invalid UTF-8 is repaired first (a plugin's bytes must not make
 * the whole run unreadable), syntax errors name the file, line and column,
 * and a file that is not a calibrate report is refused by name.
 */
#define _GNU_SOURCE /* mkostemps */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
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
  /* The open does not wait for a writer (a FIFO nobody writes to reads as
   * empty); the reads then block as usual (a pipe being written, such as
   * <(calhost calibrate --json), is read to its end). */
  int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    snprintf(err, cap, "%s: %s", name, strerror(errno));
    return NULL;
  }
  int fl = is_stdin ? 0 : fcntl(fd, F_GETFL);
  if (!is_stdin && (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)) {
    snprintf(err, cap, "%s: cannot read: %s", name, strerror(errno));
    close(fd);
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
  if (!len) {
    snprintf(err, cap, "%s: empty (nothing was written to it)", name);
    free(raw);
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
  if (rpt_is_model_bench(root)) /* calhost model bench --json: the model view */
    return root;
  if (!json_is_object(root) || !json_is_array(json_object_get(root, "results"))) {
    snprintf(err, cap,
             "%s: not the JSON report of `calhost calibrate --json` (no \"results\" array)", name);
    json_decref(root);
    return NULL;
  }
  /* another command's report (verify's has results too) */
  const char *command = json_string_value(json_object_get(root, "command"));
  if (command && strcmp(command, "calibrate")) {
    snprintf(err, cap, "%s: the JSON report of `calhost %.40s`, not of `calhost calibrate --json`",
             name, command);
    json_decref(root);
    return NULL;
  }
  return root;
}

int report_html_file(const char *run_path, const char *html_path, char *err, size_t cap) {
  struct stat in, out_st;
  if (strcmp(run_path, "-") && stat(run_path, &in) == 0 && stat(html_path, &out_st) == 0 &&
      in.st_dev == out_st.st_dev && in.st_ino == out_st.st_ino) {
    snprintf(err, cap, "%s: is the input itself; refusing to write the page over it", html_path);
    return -1;
  }
  /* the rule of every output file (base_output_prepare): its folders are
   * created; a device, FIFO or directory at html_path is refused with its
   * kind, before the input is read */
  char why[800];
  if (base_output_prepare(html_path, why, sizeof why) != 0) {
    snprintf(err, cap, "%s: %s", html_path, why);
    return -1;
  }
  json_t *run = report_load(run_path, err, cap);
  if (!run)
    return -1;
  /* the page goes to a temporary file (created exclusively) renamed over
   * html_path: a failure leaves the page that was there */
  char tmp[4096];
  int fd = base_output_create(html_path, NULL, tmp, sizeof tmp, why, sizeof why);
  FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!out) {
    snprintf(err, cap, "%s: %s", html_path, fd >= 0 ? strerror(errno) : why);
    if (fd >= 0) {
      close(fd);
      unlink(tmp);
    }
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
  if (rc == 0 && base_output_replace(tmp, html_path, err, cap) != 0)
    rc = -1;
  if (rc != 0)
    unlink(tmp);
  json_decref(run);
  return rc;
}
