/*
 * check.c: the conformance checker behind `calhost plugin check PATH` (see
 * check.h): runs the checks. Two read the file without running it
 * (checks.c: permissions as discovery checks them, the exported dynamic
 * symbols through elf_exports.c); every other check runs in its own isolated child
 * (isolate_run), which sends its verdict and the plugin's log messages as
 * the codec's CHECK_* records (isolate/codec.h), so a plugin that crashes,
 * exits or hangs yields "FAIL name: killed by signal 11 (SIGSEGV)" and the
 * remaining checks still run. Whatever the plugin writes to stdout or
 * stderr (buffered output included) is counted by the last two checks. The
 * verdicts go to report.c.
 */
#define _GNU_SOURCE
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/text.h"
#include "checker.h"
#include "isolate/codec.h"
#include "isolate/isolate.h"
#include "loader/loader.h"
#include "report.h"

void check_options_init(check_options *o) {
  memset(o, 0, sizeof *o);
  o->timeout_seconds = 30;
  o->thread_count = 1;
}

/* ---- running a check in a child ---- */

typedef struct job {
  const char *path;
  const check_options *o;
  const check_entry *check;
} job;

static int check_child(void *arg, int fd) {
  job *j = arg;
  checker *c = calloc(1, sizeof *c);
  isolate_proto_buf b = {0};
  int rc;
  if (!c)
    return 3;
  c->path = j->path;
  c->o = j->o;
  c->fd = fd;
  rc = check_setup(c, j->check->level);
  if (rc == SETUP_NO_DEVICE) {
    rc = 2; /* skipped: c->msg says why */
  } else if (rc != 0) {
    static const char prefix[] = "not run: ";
    size_t n = strnlen(c->msg, sizeof c->msg - sizeof prefix);
    memmove(c->msg + sizeof prefix - 1, c->msg, n);
    memcpy(c->msg, prefix, sizeof prefix - 1);
    c->msg[sizeof prefix - 1 + n] = '\0';
  } else {
    rc = j->check->fn(c);
  }
  isolate_rec_put_check_result(&b, rc == 2 ? CHECK_SKIPPED : rc == 0, c->msg, c->backend);
  isolate_proto_send(fd, &b);
  isolate_rec_put_empty(&b, CALHOST_REC_CHECK_DONE);
  isolate_proto_send(fd, &b);
  isolate_proto_buf_free(&b);
  return 0; /* the instance and module are left to the process's end */
}

/* What the parent gathers from one check's child. */
typedef struct verdict {
  report_sink *sink;
  calhost_log_level show; /* log messages from this level up are reported */
  int have, passed;
  char msg[2048];
  char backend[256];
  FILE *logs; /* json: this check's "logs" members (a memory stream); NULL: none */
  char *logs_text;
  size_t logs_length, log_count;
} verdict;

static void on_record(void *user, const isolate_proto_msg *m) {
  verdict *v = user;
  if (m->type == CALHOST_REC_CHECK_LOG) {
    calhost_log_level level;
    const char *text;
    if (isolate_rec_get_check_log(m, &level, &text) != 0 || (int)level < (int)v->show)
      return;
    if (v->sink->o->json) {
      if (v->logs) {
        fputs(v->log_count++ ? ",{" : "{", v->logs);
        base_json_member_string(v->logs, 1, "level", loader_log_level_name(level));
        base_json_member_string(v->logs, 0, "message", text);
        fputc('}', v->logs);
      }
    } else if (!v->sink->o->quiet) {
      base_text_printf(v->sink->out, "  log %s: %s\n", loader_log_level_name(level), text);
    }
  } else if (m->type == CALHOST_REC_CHECK_RESULT) {
    const char *text, *backend;
    v->have = isolate_rec_get_check_result(m, &v->passed, &text, &backend) == 0;
    snprintf(v->msg, sizeof v->msg, "%s", text);
    snprintf(v->backend, sizeof v->backend, "%s", v->have ? backend : "");
  }
}

int check_plugin_check(const char *path, const check_options *o, FILE *out) {
  check_options defaults;
  size_t stdout_total = 0, stderr_total = 0;
  char stdout_sample[64] = "", stderr_sample[64] = "", msg[2048];
  report_sink r = {.out = out};
  /* dlopen searches the library path for a name without a slash: always
   * hand it the absolute path of the file the user named. */
  char *real = realpath(path, NULL);
  if (real)
    path = real;
  if (!o) {
    check_options_init(&defaults);
    o = &defaults;
  }
  r.o = o;
  if (o->json && !(r.checks = open_memstream(&r.checks_text, &r.checks_length))) {
    fprintf(stderr, "calhost: plugin check: out of memory\n");
    free(real);
    return 2;
  }
  if (!o->json && !o->quiet)
    fprintf(out, "checking %s\n", path);
  check_report(&r, "file_permissions", check_file_permissions(path, msg, sizeof msg) == 0, msg,
               NULL);
  check_report(&r, "exported_symbols", check_exported_symbols(path, msg, sizeof msg) == 0, msg,
               NULL);
  for (size_t i = 0; i < check_list_count; i++) {
    job j = {path, o, &check_list[i]};
    verdict v = {.sink = &r};
    isolate_options io = {.timeout_seconds = o->timeout_seconds > 0 ? o->timeout_seconds : 30,
                          .done_type = CALHOST_REC_CHECK_DONE,
                          .capture_stderr = 1};
    isolate_child_outcome oc;
    v.show = o->verbose ? CALHOST_LOG_DEBUG : loader_log_level_default();
    if (o->json)
      v.logs = open_memstream(&v.logs_text, &v.logs_length); /* NULL: the logs are left out */
    fflush(out);
    isolate_run(&io, check_child, &j, on_record, &v, &oc);
    if (v.logs)
      fclose(v.logs);
    if (oc.output_total && !stdout_total)
      check_report_sample(oc.output, stdout_sample, sizeof stdout_sample);
    if (oc.errors_total && !stderr_total)
      check_report_sample(oc.errors, stderr_sample, sizeof stderr_sample);
    stdout_total += oc.output_total;
    stderr_total += oc.errors_total;
    if (oc.end == CALHOST_CHILD_OK && v.have)
      check_report(&r, check_list[i].name, v.passed, v.msg, v.logs_text);
    else if (oc.end == CALHOST_CHILD_OK) {
      check_report(&r, check_list[i].name, 0, "the check ended without a verdict", v.logs_text);
    } else {
      /* The child did not finish: the outcome is the verdict (a verdict
       * already sent is kept as context). */
      char why[2400];
      snprintf(why, sizeof why, "%s%s%s", oc.message, v.have ? ": " : "", v.have ? v.msg : "");
      check_report(&r, check_list[i].name, 0, why, v.logs_text);
      if (o->verbose && !o->json && oc.errors_total)
        check_report_stderr(out, &oc);
    }
    if (v.have && v.passed && v.backend[0])
      snprintf(r.backend, sizeof r.backend, "%s", v.backend);
    free(v.logs_text);
  }
  check_report_quiet(&r, "stdout", stdout_total, stdout_sample);
  check_report_quiet(&r, "stderr", stderr_total, stderr_sample);
  check_report_finish(&r, path);
  free(real);
  return r.failed ? 1 : 0;
}
