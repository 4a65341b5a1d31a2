/*
 * cmd_report.c: `calhost report RUN.json|SPACE --html OUT` (the HTML page of
 * a calibrate run or of a recorded space, see host/report/report.h) and the two steps of
 * `calhost calibrate --report DIR`: open a temporary run file in DIR before
 * the run, rename it to DIR/run.json and write DIR/report.html from it
 * after (a run that stops before any sweep leaves the last report).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/files.h"
#include "base/text.h"
#include "commands.h"
#include "report/report.h"

static const cli_flag report_flags[] = {
    {FL_HTML, "--html", NULL, "OUT", "the HTML page to write (required)"},
    {FL_NONE, NULL, NULL, NULL, NULL},
};

static int run_report(cli_context *cli, cli_args *a) {
  const char *run = a->positional[0], *html = a->value[FL_HTML];
  if (!html)
    return cli_usage(a, "--html OUT is required");
  char err[1024];
  if (report_html_file(run, html, err, sizeof err) != 0)
    return cli_error("report: %s", err);
  if (!cli->quiet)
    base_text_printf(stderr, "calhost: report written to %s\n", html);
  return 0;
}

const cli_command cli_cmd_report = {
    "report",
    "RUN.json|SPACE|BENCH.json --html OUT.html",
    "write the HTML page of a calibrate run, a recorded space or a model bench",
    "RUN.json: what `calhost calibrate --json` printed ('-': standard input);\n"
    "SPACE: a recorded search space (calibrate --record, search-record);\n"
    "BENCH.json: what `calhost model bench --json` printed (the model view).\n",
    report_flags,
    1,
    1,
    run_report,
};

FILE *cli_report_open(const char *dir, char *tmp, size_t tmp_cap) {
  char run[4096], html[4096], why[800];
  snprintf(run, sizeof run, "%s/run.json", dir);
  snprintf(html, sizeof html, "%s/report.html", dir);
  /* the rule of every output file (base_output_prepare): DIR is created,
   * and a device, FIFO or directory at run.json or report.html is refused
   * before the run */
  const char *bad = base_output_prepare(run, why, sizeof why) != 0    ? run
                    : base_output_prepare(html, why, sizeof why) != 0 ? html
                                                                      : NULL;
  if (bad) {
    cli_error("calibrate: --report %s: cannot write %s: %s", dir, bad, why);
    return NULL;
  }
  int fd = base_output_create(run, NULL, tmp, tmp_cap, why, sizeof why);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    cli_error("calibrate: --report %s: %s", dir, fd >= 0 ? strerror(errno) : why);
    if (fd >= 0) {
      close(fd);
      unlink(tmp);
    }
  }
  return f;
}

int cli_report_finish(const char *dir, const char *tmp, FILE *json, int status, int quiet) {
  char run[4096], html[4096], err[1024];
  snprintf(run, sizeof run, "%s/run.json", dir);
  snprintf(html, sizeof html, "%s/report.html", dir);
  long written = ftell(json);
  fflush(stdout); /* the run's table first: these lines go to stderr */
  if (fclose(json) != 0) {
    cli_error("calibrate: %s: %s", run, strerror(errno));
    unlink(tmp);
    return status < 2 ? 2 : status;
  }
  if (written <= 0) { /* calibrate stopped before it had a report: the last one stays */
    unlink(tmp);
    fprintf(stderr, "calhost: calibrate: no report written (the run stopped before any sweep)\n");
    return status;
  }
  if (base_output_replace(tmp, run, err, sizeof err) != 0) {
    cli_error("calibrate: %s", err);
    unlink(tmp);
    return status < 2 ? 2 : status;
  }
  if (report_html_file(run, html, err, sizeof err) != 0) {
    cli_error("calibrate: report: %s", err);
    return status < 2 ? 2 : status;
  }
  if (!quiet)
    base_text_printf(stderr, "calhost: report written to %s (run data: %s)\n", html, run);
  return status;
}
