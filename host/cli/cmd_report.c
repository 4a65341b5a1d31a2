/*
 * cmd_report.c: `calhost report RUN.json --html OUT` (the HTML page of a
 * calibrate run, see host/report/report.h) and the two steps of
 * `calhost calibrate --report DIR`: open DIR/run.json before the run, write
 * DIR/report.html from it after.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "report/report.h"

int calhost_cmd_report(calhost_cli *cli, int argc, char **argv) {
  const char *run = NULL, *html = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--html")) {
      if (i + 1 >= argc)
        return calhost_cli_usage_error(cli, "report: --html needs an output file");
      html = argv[++i];
    } else if (!strncmp(a, "--html=", 7)) {
      html = a + 7;
    } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      printf("usage: calhost report RUN.json --html OUT.html\n"
             "  RUN.json: what `calhost calibrate --json` printed ('-': standard input)\n");
      return 0;
    } else if (a[0] == '-' && a[1]) {
      return calhost_cli_usage_error(cli, "report: unknown option '%s'", a);
    } else if (!run) {
      run = a;
    } else {
      return calhost_cli_usage_error(cli, "report: one run file only ('%s')", a);
    }
  }
  if (!run || !html)
    return calhost_cli_usage_error(cli, "report: usage: calhost report RUN.json --html OUT.html");
  char err[1024];
  if (calhost_report_html_file(run, html, err, sizeof err) != 0) {
    fprintf(stderr, "calhost: report: %s\n", err);
    return 2;
  }
  if (!cli->quiet)
    fprintf(stderr, "calhost: report written to %s\n", html);
  return 0;
}

/* mkdir -p: 0, or -1 with errno. */
static int make_dirs(const char *dir) {
  char path[4096];
  if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  for (char *p = path + 1;; p++) {
    if (*p == '/' || !*p) {
      char c = *p;
      *p = '\0';
      struct stat st;
      if (mkdir(path, 0777) != 0 &&
          !(errno == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
        return -1;
      *p = c;
      if (!c)
        return 0;
    }
  }
}

FILE *calhost_cli_report_open(const char *dir) {
  char path[4096];
  if (make_dirs(dir) != 0) {
    fprintf(stderr, "calhost: calibrate: --report %s: %s\n", dir, strerror(errno));
    return NULL;
  }
  snprintf(path, sizeof path, "%s/run.json", dir);
  FILE *f = fopen(path, "w");
  if (!f)
    fprintf(stderr, "calhost: calibrate: %s: %s\n", path, strerror(errno));
  return f;
}

int calhost_cli_report_finish(const char *dir, FILE *json, int status, int quiet) {
  char run[4096], html[4096], err[1024];
  snprintf(run, sizeof run, "%s/run.json", dir);
  snprintf(html, sizeof html, "%s/report.html", dir);
  long written = ftell(json);
  if (fclose(json) != 0) {
    fprintf(stderr, "calhost: calibrate: %s: %s\n", run, strerror(errno));
    return status < 2 ? 2 : status;
  }
  if (written <= 0) { /* calibrate stopped before it had a report */
    remove(run);
    fprintf(stderr, "calhost: calibrate: no report written (the run stopped before any sweep)\n");
    return status;
  }
  if (calhost_report_html_file(run, html, err, sizeof err) != 0) {
    fprintf(stderr, "calhost: calibrate: report: %s\n", err);
    return status < 2 ? 2 : status;
  }
  if (!quiet)
    fprintf(stderr, "calhost: report written to %s (run data: %s)\n", html, run);
  return status;
}
