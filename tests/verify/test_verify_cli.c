/*
 * test_verify_cli.c: `calhost verify` end to end, running bin/calhost from
 * CALHOST_BUILD_DIR with two deterministic test plugins (test_speed,
 * test_speed2: policy work=N runs N units). A real calibration is stored,
 * then rewritten so that each plugin's keys are, by workload:
 *   w_ok       its calibrated policy, stored median x 1000   -> ok
 *   w_slow     its calibrated policy, stored median / 1000   -> slower
 *   w_lost     work=64 (32x the default work=2)              -> lost-to-default
 *   w_outdated stored by implementation "0" (the plugin's: 1) -> outdated
 *   w_invalid  work=999 (the validator refuses it)           -> invalid
 *   w_wrong    work=4;wrong (fails the correctness check)    -> invalid
 *   w_missing  no profile                                     -> missing
 * Every factor is >= 32x against a threshold of 3 (4x), so the verdicts
 * hold on a busy machine. Checked: verdicts in the table and in --json (the
 * shape of each result), exit statuses 0/1/2, the store byte-identical
 * after verify without --recalibrate, and --recalibrate replacing exactly
 * the failed keys of both plugins in one commit (one rename of the store
 * file, watched with inotify); a budget too small to measure gives errors
 * (exit 2); a read-only store is verified; a key built for several thread
 * counts is judged once; SIGINT stops verify (exit 130, the keys measured
 * so far listed) before --recalibrate touches anything.
 */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/inotify.h>
#endif

#include <cmocka.h>
#include <jansson.h>

#include "calhost/calstore.h"
#include "harness.h"

static char g_build[1024];
static char g_dir[256];
static char g_cfg[512], g_store[512];
static pid_t g_last_pid; /* the calhost process of the last run() */

static void path_in(char *buf, size_t cap, const char *name) {
  snprintf(buf, cap, "%s/%s", g_dir, name);
}

/* Runs bin/calhost with args (NULL-terminated) in g_dir (HOME and XDG
 * there); returns the exit status, *out / *err its output (malloc'd). */
static int run(char **out, char **err, const char *const *args) {
  harness_opts o = {.cwd = g_dir};
  harness_result r = {0};
  int code = harness_run_program(NULL, &o, &r, args);
  g_last_pid = r.pid;
  *out = r.out;
  *err = r.err;
  return code;
}

static void copy_file(const char *from, const char *to) {
  size_t n;
  struct stat st;
  if (stat(from, &st) != 0) {
    fprintf(stderr, "missing %s\n", from);
    fail();
  }
  char *b = harness_slurp_or_empty(from, &n);
  FILE *f = fopen(to, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(b, 1, n, f), n);
  fclose(f);
  free(b);
}

static const char *const workloads[] = {"w_ok",      "w_slow",  "w_lost",   "w_outdated",
                                        "w_invalid", "w_wrong", "w_missing"};
#define NW (sizeof workloads / sizeof workloads[0])

static int setup(void **state) {
  (void)state;
  const char *b = getenv("CALHOST_BUILD_DIR");
  snprintf(g_build, sizeof g_build, "%s", b ? b : ".");
  snprintf(g_dir, sizeof g_dir, "/tmp/calhost-verify-XXXXXX");
  if (!mkdtemp(g_dir))
    return -1;
  char dir[600], from[1400], to[800];
  snprintf(dir, sizeof dir, "%s/plugins", g_dir);
  mkdir(dir, 0700);
  for (int i = 0; i < 2; i++) {
    const char *name = i ? "test_speed2" : "test_speed";
    snprintf(from, sizeof from, "%s/lib/calhost/verify-plugins/%s.so", g_build, name);
    snprintf(to, sizeof to, "%s/%s.so", dir, name);
    copy_file(from, to);
  }
  path_in(g_cfg, sizeof g_cfg, "verify.ini");
  path_in(g_store, sizeof g_store, "store.txt");
  FILE *f = fopen(g_cfg, "w");
  if (!f)
    return -1;
  fprintf(f,
          "[store]\npath = %s\n[plugins]\ndirectories = %s\nenabled = test_speed, test_speed2\n"
          "[calibration]\nthreads = 1\nrigor = quick\ntime_budget = 120\nplugin_timeout = 120\n",
          g_store, dir);
  for (size_t i = 0; i < NW; i++)
    fprintf(f, "[workload %s]\noperator = Spin\nshape = %zu\n", workloads[i], i + 1);
  fclose(f);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[512];
  if (!getenv("CALHOST_KEEP_TEST_DIR")) {
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0)
      return -1;
  }
  return 0;
}

/* ---- crafting the store ------------------------------------------------ */

typedef struct craft {
  calstore_batch *batch;
  int failed;
} craft;

static int craft_one(void *user, const calstore_profile *p) {
  craft *c = user;
  calstore_profile q = *p;
  calstore_measurement m[32];
  size_t n = p->measurement_count < 32 ? p->measurement_count : 32;
  memcpy(m, p->measurements, n * sizeof *m);
  q.measurements = m;
  q.measurement_count = n;
  if (p->key.kind == CALSTORE_KEY_EXACT) {
    const char *w = p->key.model_digest; /* the test plugin's digest: the workload's name */
    double scale = 1000.0;
    if (!strcmp(w, "w_missing"))
      return 0;
    if (!strcmp(w, "w_slow"))
      scale = 1.0 / 1000.0;
    else if (!strcmp(w, "w_lost"))
      q.policy = "work=64";
    else if (!strcmp(w, "w_outdated"))
      q.key.implementation = "0";
    else if (!strcmp(w, "w_invalid"))
      q.policy = "work=999";
    else if (!strcmp(w, "w_wrong"))
      q.policy = "work=4;wrong";
    for (size_t i = 0; i < n; i++) {
      if (!strcmp(m[i].name, "median_latency"))
        m[i].value *= scale;
      if (!strcmp(m[i].name, "spread") && scale < 1)
        m[i].value = 0;
    }
    q.policy_length = strlen(q.policy);
  }
  if (calstore_batch_put(c->batch, &q, NULL) != CALSTORE_OK)
    c->failed = 1;
  return 0;
}

/* Calibrates both plugins, then rewrites the store as the header says. */
static void build_store(void) {
  char *out, *err, calibrated[512];
  unlink(g_store);
  const char *args[] = {"calibrate", "--config", g_cfg, NULL};
  int rc = run(&out, &err, args);
  if (rc != 0)
    fprintf(stderr, "calibrate rc %d\n%s\n%s\n", rc, out, err);
  assert_int_equal(rc, 0);
  free(out);
  free(err);
  path_in(calibrated, sizeof calibrated, "calibrated.txt");
  assert_int_equal(rename(g_store, calibrated), 0);

  calstore_options so;
  calstore_options_init(&so);
  so.path = calibrated;
  calstore *from = NULL, *to = NULL;
  assert_int_equal(calstore_open(&so, &from, NULL), CALSTORE_OK);
  so.path = g_store;
  assert_int_equal(calstore_open(&so, &to, NULL), CALSTORE_OK);
  craft c = {NULL, 0};
  assert_int_equal(calstore_batch_begin(to, &c.batch, NULL), CALSTORE_OK);
  assert_int_equal(calstore_inspect(from, craft_one, &c), CALSTORE_OK);
  assert_false(c.failed);
  assert_int_equal(calstore_batch_commit(&c.batch, NULL), CALSTORE_OK);
  calstore_close(&from);
  calstore_close(&to);
}

/* ---- reading the store ---------------------------------------------------- */

#define MAX_PROFILES 64
typedef struct snapshot {
  char *key[MAX_PROFILES];  /* identity: kind, backend, implementation, digest, structure */
  char *body[MAX_PROFILES]; /* policy and measurements */
  size_t count;
} snapshot;

static int snap_one(void *user, const calstore_profile *p) {
  snapshot *s = user;
  char k[1024], b[2048];
  int o = snprintf(k, sizeof k, "%d|%d|%s|%s|%s|%s|%u|", (int)p->key.kind, (int)p->source,
                   p->key.backend, p->key.implementation,
                   p->key.model_digest ? p->key.model_digest : "-", p->key.processor ? "proc" : "-",
                   p->key.thread_count);
  for (size_t i = 0; i < p->key.structure_count && o < (int)sizeof k; i++)
    o += snprintf(k + o, sizeof k - (size_t)o, "%s=%s;", p->key.structure[i].name,
                  p->key.structure[i].value);
  o = snprintf(b, sizeof b, "%s|", p->policy);
  for (size_t i = 0; i < p->measurement_count && o < (int)sizeof b; i++)
    o += snprintf(b + o, sizeof b - (size_t)o, "%s=%.17g;", p->measurements[i].name,
                  p->measurements[i].value);
  assert_true(s->count < MAX_PROFILES);
  s->key[s->count] = strdup(k);
  s->body[s->count++] = strdup(b);
  return 0;
}

static snapshot read_snapshot(void) {
  snapshot s;
  memset(&s, 0, sizeof s);
  assert_int_equal(calstore_read_file(g_store, snap_one, &s, NULL, NULL, NULL), CALSTORE_OK);
  return s;
}

static const char *body_of(const snapshot *s, const char *key) {
  for (size_t i = 0; i < s->count; i++)
    if (!strcmp(s->key[i], key))
      return s->body[i];
  return NULL;
}

static void free_snapshot(snapshot *s) {
  for (size_t i = 0; i < s->count; i++) {
    free(s->key[i]);
    free(s->body[i]);
  }
}

static int failing_workload(const char *key) {
  static const char *const failing[] = {"|w_slow|", "|w_lost|", "|w_invalid|", "|w_wrong|"};
  for (size_t i = 0; i < 4; i++)
    if (strstr(key, failing[i]))
      return 1;
  return 0;
}

/* ---- tests ------------------------------------------------------------------ */

static const char *verdict_of(json_t *results, const char *backend, const char *workload) {
  size_t i;
  json_t *row;
  json_array_foreach(results, i, row) {
    if (!strcmp(json_string_value(json_object_get(row, "backend")), backend) &&
        !strcmp(json_string_value(json_object_get(row, "workload")), workload))
      return json_string_value(json_object_get(row, "verdict"));
  }
  return NULL;
}

static json_t *row_of(json_t *results, const char *backend, const char *workload) {
  size_t i;
  json_t *row;
  json_array_foreach(results, i, row) {
    if (!strcmp(json_string_value(json_object_get(row, "backend")), backend) &&
        !strcmp(json_string_value(json_object_get(row, "workload")), workload))
      return row;
  }
  return NULL;
}

static void verdicts_exit_status_and_an_untouched_store(void **state) {
  (void)state;
  build_store();
  size_t before_len, after_len;
  char *before = harness_slurp_or_empty(g_store, &before_len);
  char *out, *err;

  /* the table */
  const char *args[] = {"verify", "--config", g_cfg, "--threshold", "3", NULL};
  int rc = run(&out, &err, args);
  if (rc != 1)
    fprintf(stderr, "rc %d\nstdout:\n%s\nstderr:\n%s\n", rc, out, err);
  assert_int_equal(rc, 1);
  assert_non_null(strstr(out, "lost-to-default"));
  assert_non_null(strstr(out, "slower"));
  assert_non_null(strstr(out, "outdated"));
  assert_non_null(strstr(out, "invalid"));
  assert_non_null(strstr(out, "missing"));
  assert_non_null(strstr(out, "verify: 14 keys: 2 ok, 2 slower, 2 lost-to-default, 2 outdated, "
                              "4 invalid, 2 missing"));
  free(out);
  free(err);
  char *after = harness_slurp_or_empty(g_store, &after_len);
  assert_int_equal(before_len, after_len);
  assert_memory_equal(before, after, before_len);
  free(after);

  /* --json */
  const char *jargs[] = {"verify", "--config", g_cfg, "--threshold", "300%", "--json", NULL};
  rc = run(&out, &err, jargs);
  assert_int_equal(rc, 1);
  json_error_t je;
  json_t *doc = json_loads(out, 0, &je);
  if (!doc)
    fprintf(stderr, "not JSON (%s):\n%s\n", je.text, out);
  assert_non_null(doc);
  json_t *results = json_object_get(doc, "results");
  assert_true(json_is_array(results));
  assert_int_equal(json_array_size(results), 14);
  assert_true(json_number_value(json_object_get(doc, "threshold")) == 3.0);
  assert_int_equal(json_integer_value(json_object_get(doc, "exit_status")), 1);
  for (int b = 0; b < 2; b++) {
    const char *backend = b ? "test_speed2" : "test_speed";
    assert_string_equal(verdict_of(results, backend, "w_ok"), "ok");
    assert_string_equal(verdict_of(results, backend, "w_slow"), "slower");
    assert_string_equal(verdict_of(results, backend, "w_lost"), "lost-to-default");
    assert_string_equal(verdict_of(results, backend, "w_outdated"), "outdated");
    assert_string_equal(verdict_of(results, backend, "w_invalid"), "invalid");
    assert_string_equal(verdict_of(results, backend, "w_wrong"), "invalid");
    assert_string_equal(verdict_of(results, backend, "w_missing"), "missing");
  }
  const char *fields[] = {"verdict",        "backend",        "workload",     "threads",
                          "stored_median",  "current_median", "ratio",        "stored_policy",
                          "default_median", "reason",         "recalibration"};
  size_t i;
  json_t *row;
  json_array_foreach(results, i, row) {
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++)
      assert_non_null(json_object_get(row, fields[f]));
    assert_int_equal(json_integer_value(json_object_get(row, "threads")), 1);
  }
  json_t *r = row_of(results, "test_speed", "w_slow");
  assert_true(json_number_value(json_object_get(r, "ratio")) > 4.0);
  assert_true(json_is_number(json_object_get(r, "current_median")));
  /* the why of every verdict but ok, as the text's notes give it */
  assert_non_null(strstr(json_string_value(json_object_get(r, "reason")), "x the stored median"));
  r = row_of(results, "test_speed", "w_lost");
  assert_string_equal(json_string_value(json_object_get(r, "stored_policy")), "work=64");
  assert_string_equal(json_string_value(json_object_get(r, "default_policy")), "work=2");
  assert_true(json_number_value(json_object_get(r, "current_median")) >
              4.0 * json_number_value(json_object_get(r, "default_median")));
  assert_non_null(
      strstr(json_string_value(json_object_get(r, "reason")), "x the default's median"));
  r = row_of(results, "test_speed", "w_ok");
  assert_true(json_number_value(json_object_get(r, "ratio")) < 1.0);
  assert_true(json_is_null(json_object_get(r, "reason")));
  r = row_of(results, "test_speed", "w_outdated");
  assert_string_equal(json_string_value(json_object_get(r, "stored_implementation")), "0");
  assert_true(json_is_null(json_object_get(r, "current_median")));
  r = row_of(results, "test_speed", "w_invalid");
  assert_non_null(strstr(json_string_value(json_object_get(r, "reason")), "invalid policy"));
  r = row_of(results, "test_speed", "w_wrong");
  assert_non_null(strstr(json_string_value(json_object_get(r, "reason")), "wrong output"));
  r = row_of(results, "test_speed", "w_missing");
  assert_true(json_is_null(json_object_get(r, "stored_policy")));
  assert_true(json_is_null(json_object_get(doc, "recalibrated")));
  json_decref(doc);
  free(out);
  free(err);
  after = harness_slurp_or_empty(g_store, &after_len);
  assert_int_equal(before_len, after_len);
  assert_memory_equal(before, after, before_len);
  free(after);

  /* only good and missing keys: everything holds */
  const char *good[] = {"verify",     "--config", g_cfg,        "--threshold", "3",
                        "--workload", "w_ok",     "--workload", "w_missing",   NULL};
  rc = run(&out, &err, good);
  if (rc != 0)
    fprintf(stderr, "rc %d\nstdout:\n%s\nstderr:\n%s\n", rc, out, err);
  assert_int_equal(rc, 0);
  free(out);
  free(err);
  /* only missing keys: nothing was verified, a "no" (a mistyped store) */
  const char *only_missing[] = {"verify", "--config", g_cfg, "--workload", "w_missing", NULL};
  assert_int_equal(run(&out, &err, only_missing), 1);
  assert_non_null(strstr(out, "nothing was verified: no key of this run has a stored profile in"));
  free(out);
  free(err);

  /* errors */
  const char *bad_workload[] = {"verify", "--config", g_cfg, "--workload", "nope", NULL};
  assert_int_equal(run(&out, &err, bad_workload), 2);
  assert_non_null(strstr(err, "nope"));
  free(out);
  free(err);
  const char *bad_threshold[] = {"verify", "--config", g_cfg, "--threshold", "fast", NULL};
  assert_int_equal(run(&out, &err, bad_threshold), 2);
  assert_non_null(strstr(err, "threshold"));
  free(out);
  free(err);
  /* issue 22 item 17: the shared decimal parser (strtod took hex,
   * exponents and a bare 25 as 2500 %) */
  const char *const refused[] = {"0x1", "1e-1", "-0.5", "25"};
  for (size_t k = 0; k < 4; k++) {
    const char *t[] = {"verify", "--config", g_cfg, "--threshold", refused[k], NULL};
    assert_int_equal(run(&out, &err, t), 2);
    assert_non_null(strstr(err, "bad --threshold"));
    free(out);
    free(err);
  }
  free(before);
}

static void recalibrate_replaces_exactly_the_failed_keys_in_one_commit(void **state) {
  (void)state;
  build_store();
  snapshot before = read_snapshot();
  char *out, *err;
#ifdef __linux__
  int in = inotify_init1(IN_NONBLOCK);
  assert_true(in >= 0);
  assert_true(inotify_add_watch(in, g_dir, IN_MOVED_TO | IN_CLOSE_WRITE) >= 0);
#endif
  const char *args[] = {"verify", "--config",      g_cfg,    "--threshold",
                        "3",      "--recalibrate", "--json", NULL};
  char log[512];
  path_in(log, sizeof log, "creates.txt");
  unlink(log);
  setenv("CALHOST_TEST_CREATE_LOG", log, 1);
  int rc = run(&out, &err, args);
  unsetenv("CALHOST_TEST_CREATE_LOG");
  if (rc != 0)
    fprintf(stderr, "rc %d\nstdout:\n%s\nstderr:\n%s\n", rc, out, err);
  assert_int_equal(rc, 0);
  /* the one commit across both plugins needs no plugin instance in the
   * calhost process: every instance was created in a child (measuring and
   * recalibrating, each plugin: at least four) */
  char *pids = harness_slurp_or_empty(log, NULL);
  assert_non_null(pids);
  size_t creates = 0;
  for (char *line = strtok(pids, "\n"); line; line = strtok(NULL, "\n")) {
    creates++;
    assert_int_not_equal(atol(line), (long)g_last_pid);
  }
  assert_true(creates >= 4);
  free(pids);
#ifdef __linux__
  /* one commit: the store file was replaced (renamed onto) exactly once */
  size_t renames = 0;
  char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
  ssize_t n;
  while ((n = read(in, buf, sizeof buf)) > 0)
    for (char *p = buf; p < buf + n;) {
      struct inotify_event *ev = (struct inotify_event *)p;
      if ((ev->mask & IN_MOVED_TO) && ev->len && !strcmp(ev->name, "store.txt"))
        renames++;
      p += sizeof *ev + ev->len;
    }
  close(in);
  assert_int_equal(renames, 1);
#endif
  json_t *doc = json_loads(out, 0, NULL);
  assert_non_null(doc);
  json_t *rec = json_object_get(doc, "recalibrated");
  assert_int_equal(json_integer_value(json_object_get(rec, "keys")), 10);
  assert_int_equal(json_integer_value(json_object_get(rec, "tried")), 10);
  assert_int_equal(json_integer_value(json_object_get(rec, "commits")), 1);
  json_t *r = row_of(json_object_get(doc, "results"), "test_speed2", "w_lost");
  assert_string_equal(
      json_string_value(json_object_get(json_object_get(r, "recalibration"), "status")), "stored");
  r = row_of(json_object_get(doc, "results"), "test_speed", "w_missing");
  assert_true(json_is_null(json_object_get(r, "recalibration")));
  json_decref(doc);
  free(out);
  free(err);

  /* exactly the failed keys changed: the rest is as it was */
  snapshot after = read_snapshot();
  assert_int_equal(after.count, before.count + 2); /* + the two w_outdated of implementation 1 */
  size_t changed = 0, added = 0;
  for (size_t i = 0; i < after.count; i++) {
    const char *old = body_of(&before, after.key[i]);
    if (!old) {
      assert_non_null(strstr(after.key[i], "|1|w_outdated|"));
      added++;
    } else if (strcmp(old, after.body[i])) {
      if (!failing_workload(after.key[i]))
        fprintf(stderr, "changed: %s\n", after.key[i]);
      assert_true(failing_workload(after.key[i]));
      changed++;
    }
  }
  assert_int_equal(added, 2);
  assert_int_equal(changed, 8);
  for (size_t i = 0; i < after.count; i++)
    assert_null(strstr(after.key[i], "w_missing"));
  free_snapshot(&before);
  free_snapshot(&after);

  /* now everything holds (the missing keys are listed, not failed) */
  const char *again[] = {"verify", "--config", g_cfg, "--threshold", "10", NULL};
  rc = run(&out, &err, again);
  if (rc != 0)
    fprintf(stderr, "rc %d\nstdout:\n%s\nstderr:\n%s\n", rc, out, err);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(out, "12 ok, 2 missing"));
  free(out);
  free(err);
}

static void errors_read_only_stores_and_one_row_per_key(void **state) {
  (void)state;
  build_store();
  char *out, *err;
  /* a budget too small to measure anything: every measured key is an error */
  const char *tiny[] = {"verify", "--config", g_cfg, "--time-budget", "0.001", "--json", NULL};
  int rc = run(&out, &err, tiny);
  if (rc != 2)
    fprintf(stderr, "rc %d\nstdout:\n%s\nstderr:\n%s\n", rc, out, err);
  assert_int_equal(rc, 2);
  json_t *doc = json_loads(out, 0, NULL);
  assert_non_null(doc);
  json_t *results = json_object_get(doc, "results");
  assert_string_equal(verdict_of(results, "test_speed", "w_slow"), "error");
  assert_string_equal(verdict_of(results, "test_speed", "w_missing"), "missing");
  assert_string_equal(verdict_of(results, "test_speed", "w_outdated"), "outdated");
  json_decref(doc);
  free(out);
  free(err);

  /* a store (and folder) nobody may write: verify only reads */
  size_t n, m;
  char *before = harness_slurp_or_empty(g_store, &n);
  assert_int_equal(chmod(g_store, 0444), 0);
  assert_int_equal(chmod(g_dir, 0555), 0);
  /* a backend that builds one key for several thread counts is judged once */
  const char *ro[] = {"verify",    "--config", g_cfg,    "--threshold", "3",
                      "--threads", "1,max",    "--json", NULL};
  rc = run(&out, &err, ro);
  chmod(g_dir, 0700);
  chmod(g_store, 0600);
  if (rc != 1)
    fprintf(stderr, "rc %d\nstdout:\n%s\nstderr:\n%s\n", rc, out, err);
  assert_int_equal(rc, 1);
  doc = json_loads(out, 0, NULL);
  assert_non_null(doc);
  assert_int_equal(json_array_size(json_object_get(doc, "results")), 14);
  json_decref(doc);
  free(out);
  free(err);
  char *text = harness_slurp_or_empty(g_store, &m);
  assert_int_equal(m, n);
  assert_memory_equal(before, text, n);
  free(text);
  free(before);
}

/* issue 36 item 5: a plugin that dies in create() (test_speed2 with its
 * fail_create setting) has each of its keys listed as "error" with the
 * plugin's failure, not "0 keys: nothing to verify"; the exit status is 2 */
static void a_plugin_that_fails_create_lists_its_keys_as_errors(void **state) {
  (void)state;
  build_store();
  char cfg[600], *out, *err;
  path_in(cfg, sizeof cfg, "fail-create.ini");
  char *text = harness_slurp_or_empty(g_cfg, NULL);
  FILE *f = fopen(cfg, "w");
  assert_non_null(f);
  fprintf(f, "%s[plugin test_speed2]\nfail_create = 1\n", text);
  fclose(f);
  free(text);
  const char *table[] = {"verify", "--config", cfg, "--plugin", "test_speed2", NULL};
  int rc = run(&out, &err, table);
  if (rc != 2 || !strstr(out, "verify: 7 keys: 7 error"))
    fprintf(stderr, "rc %d\nstdout:\n%s\nstderr:\n%s\n", rc, out, err);
  assert_int_equal(rc, 2);
  assert_null(strstr(out, "nothing to verify"));
  assert_non_null(strstr(out, "verify: 7 keys: 7 error"));
  assert_non_null(strstr(out, "fail_create is set: no instance"));
  free(out);
  free(err);
  const char *json[] = {"verify", "--config", cfg, "--threshold", "3", "--json", NULL};
  rc = run(&out, &err, json);
  assert_int_equal(rc, 2);
  json_t *doc = json_loads(out, 0, NULL);
  assert_non_null(doc);
  json_t *results = json_object_get(doc, "results");
  assert_int_equal(json_array_size(results), 14);
  for (size_t i = 0; i < NW; i++) {
    assert_string_equal(verdict_of(results, "test_speed2", workloads[i]), "error");
    json_t *row = row_of(results, "test_speed2", workloads[i]);
    const char *why = json_string_value(json_object_get(row, "reason"));
    assert_non_null(why);
    assert_non_null(strstr(why, "fail_create is set: no instance"));
  }
  assert_string_equal(verdict_of(results, "test_speed", "w_slow"), "slower"); /* the other plugin */
  json_decref(doc);
  free(out);
  free(err);
}

/* issue 36 item 8: --threshold goes through the one strict decimal parser:
 * a blank around the number is refused (it was read as 50%) */
static void a_threshold_with_a_blank_is_refused(void **state) {
  (void)state;
  char *out, *err;
  const char *lead[] = {"verify", "--config", g_cfg, "--threshold", " 0.5", NULL};
  assert_int_equal(run(&out, &err, lead), 2);
  assert_non_null(strstr(err, "threshold"));
  free(out);
  free(err);
  const char *trail[] = {"verify", "--config", g_cfg, "--threshold", "50% ", NULL};
  assert_int_equal(run(&out, &err, trail), 2);
  free(out);
  free(err);
}

/* issue 22 item 32: a key a user override serves is "override (not
 * verified)", not "missing" (no calibrated profile) nor judged on the
 * calibrated profile the override hides */
static void keys_served_by_an_override_are_named_so(void **state) {
  (void)state;
  build_store();
  char *out, *err;
  const char *exact[] = {"override", "set",        "--config", g_cfg,    "--workload", "w_missing",
                         "--plugin", "test_speed", "--policy", "work=2", NULL};
  assert_int_equal(run(&out, &err, exact), 0);
  free(out);
  free(err);
  const char *portable[] = {"override",   "set",      "--config", g_cfg,
                            "--workload", "w_slow",   "--plugin", "test_speed",
                            "--portable", "--policy", "work=2",   NULL};
  assert_int_equal(run(&out, &err, portable), 0);
  free(out);
  free(err);
  const char *args[] = {"verify",     "--config", g_cfg,        "--threshold", "3",
                        "--json",     "--plugin", "test_speed", "--workload",  "w_missing",
                        "--workload", "w_slow",   "--workload", "w_ok",        NULL};
  int rc = run(&out, &err, args);
  json_t *doc = json_loads(out, 0, NULL);
  if (!doc)
    fprintf(stderr, "rc %d\nstdout:\n%s\nstderr:\n%s\n", rc, out, err);
  assert_non_null(doc);
  assert_int_equal(rc, 0); /* w_slow's slower profile is hidden by the override */
  json_t *results = json_object_get(doc, "results");
  assert_string_equal(verdict_of(results, "test_speed", "w_missing"), "override");
  assert_string_equal(verdict_of(results, "test_speed", "w_slow"), "override");
  /* the test plugin's portable key has no shape: the portable override
   * serves w_ok too (a lookup selects it before the exact calibrated) */
  assert_string_equal(verdict_of(results, "test_speed", "w_ok"), "override");
  json_t *row = row_of(results, "test_speed", "w_missing");
  assert_non_null(strstr(json_string_value(json_object_get(row, "reason")), "exact user override"));
  assert_string_equal(json_string_value(json_object_get(row, "stored_policy")), "work=2");
  row = row_of(results, "test_speed", "w_slow");
  assert_non_null(
      strstr(json_string_value(json_object_get(row, "reason")), "portable user override"));
  assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "counts"), "override")),
                   3);
  json_decref(doc);
  free(out);
  free(err);
  const char *text[] = {"verify",   "--config",   g_cfg,        "--threshold", "3",
                        "--plugin", "test_speed", "--workload", "w_missing",   NULL};
  assert_int_equal(run(&out, &err, text), 0);
  assert_non_null(strstr(out, "1 key: 1 override"));
  assert_non_null(strstr(out, "override: served by an exact user override (not verified"));
  free(out);
  free(err);
}

/* sig stops verify (exit 128 + sig), named in the message (name) */
static void interrupt_verify(int sig, const char *name) {
  build_store();
  size_t n, m;
  char *before = harness_slurp_or_empty(g_store, &n);
  /* exhaustive: 20 samples of 5 ms per policy and key, seconds in all */
  const char *const args[] = {"verify",     "--config",      g_cfg, "--rigor",
                              "exhaustive", "--recalibrate", NULL};
  harness_opts opts = {.cwd = g_dir};
  harness_child child;
  harness_result r = {0};
  harness_start(NULL, &opts, args, &child);
  /* interrupt once the first key was measured (up to 40 s: a busy machine) */
  for (int i = 0; i < 4000; i++) {
    usleep(10000);
    char *progress = harness_child_stderr(&child);
    int started = strstr(progress, "[1/") != NULL || strstr(progress, "[2/") != NULL;
    free(progress);
    if (started)
      break;
  }
  kill(child.pid, sig);
  assert_int_equal(harness_wait(&child, &r), 128 + sig); /* exited so, not killed */
  char *out = r.out, *err = r.err;
  char said[64];
  snprintf(said, sizeof said, "interrupted by %s\n", name);
  if (!strstr(err, said))
    fprintf(stderr, "stdout:\n%s\nstderr:\n%s\n", out, err);
  assert_non_null(strstr(err, said));
  assert_null(strstr(err, "recalibrating")); /* stopped before --recalibrate */
  assert_non_null(strstr(out, "verify: "));  /* what was measured is listed */
  free(out);
  free(err);
  char *after = harness_slurp_or_empty(g_store, &m);
  assert_int_equal(m, n);
  assert_memory_equal(before, after, n);
  free(after);
  free(before);
}

static void sigint_stops_verify_and_leaves_the_store(void **state) {
  (void)state;
  interrupt_verify(SIGINT, "SIGINT");
}

/* issue 22 item 26: SIGHUP ends verify with 129 and says SIGHUP (it said
 * "interrupted by SIGINT") */
static void sighup_stops_verify_and_is_named_sighup(void **state) {
  (void)state;
  interrupt_verify(SIGHUP, "SIGHUP");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(verdicts_exit_status_and_an_untouched_store),
      cmocka_unit_test(recalibrate_replaces_exactly_the_failed_keys_in_one_commit),
      cmocka_unit_test(errors_read_only_stores_and_one_row_per_key),
      cmocka_unit_test(keys_served_by_an_override_are_named_so),
      cmocka_unit_test(a_plugin_that_fails_create_lists_its_keys_as_errors),
      cmocka_unit_test(a_threshold_with_a_blank_is_refused),
      cmocka_unit_test(sigint_stops_verify_and_leaves_the_store),
      cmocka_unit_test(sighup_stops_verify_and_is_named_sighup),
  };
  return cmocka_run_group_tests_name("verify_cli", tests, setup, teardown);
}
