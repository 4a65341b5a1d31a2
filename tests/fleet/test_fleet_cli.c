/*
 * test_fleet_cli.c: the fleet commands end to end, running bin/calhost from
 * CALHOST_BUILD_DIR against temporary configurations and stores (no Slurm:
 * test_fleet_slurm.sh runs them on a cluster):
 *  - `plan --shard I/N` lists exactly the items `plan --shards N` gives
 *    shard I, and the shards together are `plan`'s items;
 *  - `calibrate --shard I/N` for every I stores exactly what the unsharded
 *    run stores (exact and portable keys, the portable profile from the
 *    smallest thread count), each key in one shard only;
 *  - bad --shard values are usage errors naming the flag; a run of no item
 *    fails in plan and in every shard;
 *  - `import` keeps an existing calibrated portable profile (also one from
 *    an earlier file of the same import) unless --force; exact profiles of
 *    other processors are kept apart;
 *  - `list --by-processor` counts each processor's profiles.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "calhost/calstore.h"
#include "harness.h"

static char g_build[1024];
static char g_dir[256];

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static const char *in_dir(const char *name) {
  static char buf[8][512];
  static int next;
  char *b = buf[next++ % 8];
  snprintf(b, 512, "%s/%s", g_dir, name);
  return b;
}

/* Runs bin/calhost with args (NULL-terminated) in g_dir (HOME and XDG
 * there); returns the exit status, *out / *err its output (the caller
 * frees). */
static int run(char **out, char **err, const char *const *args) {
  harness_opts o = {.cwd = g_dir};
  harness_result r = {0};
  int code = harness_run_program(NULL, &o, &r, args);
  *out = r.out;
  *err = r.err;
  return code;
}

#define RUN(out, err, ...) run(out, err, (const char *const[]){__VA_ARGS__, NULL})

/* The lines of text holding needle. */
static size_t count_lines_with(const char *text, const char *needle) {
  size_t n = 0;
  for (const char *line = text; line && *line;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    const char *hit = strstr(line, needle);
    n += hit && hit < line + len;
    line = end ? end + 1 : NULL;
  }
  return n;
}

/* The example plugin (ReduceSum, always 1 thread: "max" is a duplicate key)
 * and cpu_gemm, three workloads each. */
static void write_config(void) {
  char text[2048];
  snprintf(text, sizeof text,
           "[plugins]\ndirectories = %s/lib/calhost/plugins\nenabled = example, cpu_gemm\n"
           "[calibration]\nthreads = 1, max\nrigor = quick\ntime_budget = 30\n"
           "[workload sum_1k]\noperator = ReduceSum\nshape = 1024\n"
           "[workload sum_4k]\noperator = ReduceSum\nshape = 4096\n"
           "[workload sum_8k]\noperator = ReduceSum\nshape = 8192\n"
           "[workload mm_16]\noperator = MatMul\nshape = 16,16,16\n"
           "[workload mm_24]\noperator = MatMul\nshape = 24,24,24\n"
           "[workload mm_128x128x256]\noperator = MatMul\nshape = 128,128,256\n",
           g_build);
  write_file(in_dir("fleet.ini"), text);
}

static int setup(void **state) {
  (void)state;
  snprintf(g_dir, sizeof g_dir, "/tmp/calhost-fleet-cli-XXXXXX");
  if (!mkdtemp(g_dir))
    return -1;
  write_config();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  return getenv("CALHOST_KEEP_TEST_DIR") || system(cmd) == 0 ? 0 : -1;
}

/* The items of a `plan --json` output: one "backend workload threads shard"
 * line each, in order (the plan prints one item per line). */
static char *plan_items(const char *json, int with_shard) {
  size_t cap = strlen(json) + 1, len = 0;
  char *out = calloc(cap, 1);
  assert_non_null(out);
  for (const char *p = strstr(json, "{\"backend\":"); p; p = strstr(p + 1, "{\"backend\":")) {
    char b[64], w[64];
    unsigned t, s;
    const char *wp = strstr(p, "\"workload\":\""), *tp = strstr(p, "\"threads\":"),
               *sp = strstr(p, "\"shard\":");
    assert_non_null(wp);
    assert_non_null(tp);
    assert_non_null(sp);
    assert_int_equal(sscanf(p, "{\"backend\":\"%63[^\"]\"", b), 1);
    assert_int_equal(sscanf(wp, "\"workload\":\"%63[^\"]\"", w), 1);
    assert_int_equal(sscanf(tp, "\"threads\":%u", &t), 1);
    assert_int_equal(sscanf(sp, "\"shard\":%u", &s), 1);
    len += (size_t)snprintf(out + len, cap - len, with_shard ? "%s %s %u %u\n" : "%s %s %u\n", b, w,
                            t, s);
  }
  return out;
}

static size_t count_lines(const char *s) {
  size_t n = 0;
  for (; *s; s++)
    n += *s == '\n';
  return n;
}

static void plan_shards_partition_the_items(void **state) {
  (void)state;
  char *out, *err;
  assert_int_equal(RUN(&out, &err, "plan", "--config", "fleet.ini", "--json"), 0);
  char *all = plan_items(out, 0);
  size_t total = count_lines(all);
  assert_int_equal(total, 12); /* 2 plugins x 3 workloads x threads {1, max} (max >= 1) */
  free(out);
  free(err);
  /* with --shards 3 the same items in the same order, each with its shard */
  assert_int_equal(RUN(&out, &err, "plan", "--config", "fleet.ini", "--shards", "3", "--json"), 0);
  char *sharded = plan_items(out, 1), *unsharded = plan_items(out, 0);
  assert_string_equal(unsharded, all);
  assert_non_null(strstr(out, "\"total\":12"));
  free(out);
  free(err);
  size_t sum = 0;
  for (int i = 0; i < 3; i++) {
    char spec[8];
    snprintf(spec, sizeof spec, "%d/3", i);
    assert_int_equal(RUN(&out, &err, "plan", "--config", "fleet.ini", "--shard", spec, "--json"),
                     0);
    char *mine = plan_items(out, 1);
    /* exactly the lines of --shards 3 that end in " i" */
    char want[4096] = "";
    char *copy = strdup(sharded), *save = NULL;
    for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
      if ((unsigned)atoi(strrchr(l, ' ') + 1) == (unsigned)i)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s\n", l);
    assert_string_equal(mine, want);
    sum += count_lines(mine);
    free(copy);
    free(mine);
    free(out);
    free(err);
  }
  assert_int_equal(sum, total);
  /* the text form says how the items split, each count labelled with its
   * shard (issue 22 item 32: "3 items in 2 shards: 1 2" read like shard
   * numbers) */
  assert_int_equal(RUN(&out, &err, "plan", "--config", "fleet.ini", "--shards", "2"), 0);
  const char *split = strstr(out, "12 items in 2 shards (shard 0: ");
  unsigned a = 99, b = 99;
  assert_non_null(split);
  assert_int_equal(sscanf(split, "12 items in 2 shards (shard 0: %u", &a), 1);
  const char *second = strstr(split, ", shard 1: ");
  assert_non_null(second);
  assert_int_equal(sscanf(second, ", shard 1: %u", &b), 1);
  assert_int_equal(a + b, 12);
  assert_non_null(strstr(split, b == 1 ? " item)\n" : " items)\n"));
  free(out);
  free(err);
  free(all);
  free(sharded);
  free(unsharded);
}

/* A shard with no item (one item, two shards) succeeds with a note: the
 * array task must not fail (that would cancel the fleet's merge). */
static void empty_shard_succeeds(void **state) {
  (void)state;
  char *out, *err;
  assert_int_equal(RUN(&out, &err, "plan", "--config", "fleet.ini", "--plugin", "example",
                       "--workload", "sum_4k", "--threads", "1", "--shards", "2", "--json"),
                   0);
  const char *counts = strstr(out, "\"counts\":[");
  assert_non_null(counts);
  int empty = !strncmp(counts, "\"counts\":[0,1]", 13) ? 0 : 1;
  assert_non_null(strstr(out, empty ? "\"counts\":[1,0]" : "\"counts\":[0,1]"));
  free(out);
  free(err);
  char spec[8];
  snprintf(spec, sizeof spec, "%d/2", empty);
  assert_int_equal(RUN(&out, &err, "calibrate", "--config", "fleet.ini", "--plugin", "example",
                       "--workload", "sum_4k", "--threads", "1", "--shard", spec, "--store",
                       "empty.txt"),
                   0);
  assert_non_null(strstr(out, "holds no item of this run"));
  free(out);
  free(err);
}

/* A run with no item in any shard (the plugin serves none of the
 * workloads) is a "no" as the unsharded run is: plan and every shard exit
 * 1, so a fleet campaign of nothing fails before its merge. */
static void a_run_of_no_item_fails_in_every_shard(void **state) {
  (void)state;
  char *out, *err;
  assert_int_equal(RUN(&out, &err, "plan", "--config", "fleet.ini", "--plugin", "example",
                       "--workload", "mm_16", "--shards", "2"),
                   1);
  assert_non_null(strstr(err, "calhost: plan: nothing to calibrate"));
  free(out);
  free(err);
  for (int i = 0; i < 2; i++) {
    char spec[8];
    snprintf(spec, sizeof spec, "%d/2", i);
    assert_int_equal(RUN(&out, &err, "calibrate", "--config", "fleet.ini", "--plugin", "example",
                         "--workload", "mm_16", "--shard", spec, "--store", "none.txt"),
                     1);
    assert_non_null(strstr(out, "nothing was calibrated"));
    free(out);
    free(err);
  }
  /* calibrate's search flags are plan's too (accepted, no effect) */
  assert_int_equal(RUN(&out, &err, "plan", "--config", "fleet.ini", "--plugin", "example",
                       "--strategy", "random", "--budget", "8", "--record", "x.space"),
                   0);
  free(out);
  free(err);
}

static void bad_shard_is_a_usage_error(void **state) {
  (void)state;
  const char *bad[] = {"2/2", "1/0", "x", "1/2/3", "-1/2", NULL};
  for (size_t i = 0; bad[i]; i++) {
    char *out, *err;
    assert_int_equal(RUN(&out, &err, "calibrate", "--config", "fleet.ini", "--shard", bad[i],
                         "--store", "x.txt"),
                     2);
    assert_non_null(strstr(err, "--shard"));
    free(out);
    free(err);
    assert_int_equal(RUN(&out, &err, "plan", "--config", "fleet.ini", "--shard", bad[i]), 2);
    assert_non_null(strstr(err, "--shard"));
    free(out);
    free(err);
  }
  assert_int_equal(access(in_dir("x.txt"), F_OK), -1); /* nothing ran */
}

/* Store keys as sorted text lines (portable keys with source_threads). */
typedef struct keys {
  char *text;
  size_t len, cap, count;
} keys;

static int key_visit(void *user, const calstore_profile *p) {
  keys *k = user;
  char line[2048];
  int n = snprintf(line, sizeof line, "%s %s %s %s %s", p->key.kind ? "portable" : "exact",
                   p->key.backend, p->key.operator_name, p->key.implementation,
                   p->source == CALSTORE_SOURCE_CALIBRATED ? "calibrated" : "override");
  if (p->key.kind == CALSTORE_KEY_EXACT)
    n += snprintf(line + n, sizeof line - (size_t)n, " %s %s %u", p->key.model_digest,
                  p->key.processor, (unsigned)p->key.thread_count);
  /* structure in file order: every writer here is calhost, which keeps the
   * plugin's order */
  for (size_t i = 0; i < p->key.structure_count; i++)
    n += snprintf(line + n, sizeof line - (size_t)n, " %s=%s", p->key.structure[i].name,
                  p->key.structure[i].value);
  for (size_t i = 0; i < p->measurement_count; i++)
    if (!strcmp(p->measurements[i].name, "source_threads"))
      n += snprintf(line + n, sizeof line - (size_t)n, " source_threads=%g",
                    p->measurements[i].value);
  if (k->len + (size_t)n + 2 > k->cap) {
    k->cap = (k->cap + (size_t)n + 2) * 2;
    k->text = realloc(k->text, k->cap);
    assert_non_null(k->text);
  }
  memcpy(k->text + k->len, line, (size_t)n);
  k->len += (size_t)n;
  k->text[k->len++] = '\n';
  k->text[k->len] = '\0';
  k->count++;
  return 0;
}

static int cmp_line(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The keys of a store file, one line each, sorted. */
static char *store_keys(const char *path, size_t *count) {
  keys k = {0};
  assert_int_equal(calstore_read_file(path, key_visit, &k, NULL, NULL, NULL), CALSTORE_OK);
  char **lines = calloc(k.count + 1, sizeof *lines);
  assert_non_null(lines);
  size_t n = 0;
  char *save = NULL;
  for (char *l = k.text ? strtok_r(k.text, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save))
    lines[n++] = l;
  qsort(lines, n, sizeof *lines, cmp_line);
  size_t cap = k.len + 2, len = 0;
  char *out = calloc(cap, 1);
  assert_non_null(out);
  for (size_t i = 0; i < n; i++)
    len += (size_t)snprintf(out + len, cap - len, "%s\n", lines[i]);
  free(lines);
  free(k.text);
  if (count)
    *count = n;
  return out;
}

/* Two workloads of the same operator and shape (no model file) have the
 * same exact key: it is calibrated once, at the first of them, and the
 * other is skipped, saying which, in the unsharded run and in whichever
 * shard holds it (every shard builds every item's key). */
static void a_key_shared_by_two_workloads_is_calibrated_once(void **state) {
  (void)state;
  char text[2048], *out, *err;
  snprintf(text, sizeof text,
           "[plugins]\ndirectories = %s/lib/calhost/plugins\nenabled = example\n"
           "[calibration]\nthreads = 1\nrigor = quick\ntime_budget = 30\n"
           "[workload e]\noperator = ReduceSum\nshape = 512\n"
           "[workload f]\noperator = ReduceSum\nshape = 512\n"
           "[workload g]\noperator = ReduceSum\nshape = 512\n",
           g_build);
  write_file(in_dir("same.ini"), text);
  assert_int_equal(RUN(&out, &err, "calibrate", "--config", "same.ini", "--store", "same.txt"), 0);
  assert_non_null(strstr(out, "skipped: same exact key as workload e threads=1"));
  assert_int_equal(count_lines_with(out, " stored"), 1);
  free(out);
  free(err);
  size_t stored = 0, skipped = 0;
  for (int i = 0; i < 2; i++) {
    char spec[8], store[32];
    snprintf(spec, sizeof spec, "%d/2", i);
    snprintf(store, sizeof store, "same-%d.txt", i);
    assert_int_equal(
        RUN(&out, &err, "calibrate", "--config", "same.ini", "--shard", spec, "--store", store), 0);
    stored += count_lines_with(out, " stored");
    skipped += count_lines_with(out, "skipped: same exact key as workload e threads=1");
    free(out);
    free(err);
  }
  assert_int_equal(stored, 1);
  assert_int_equal(skipped, 2);
}

/* The keys a child remembers to calibrate each once have no cap (they were
 * 256): with 300 workloads of distinct keys and a last one sharing the
 * 300th's, that last one is skipped naming it. Only the shard holding it
 * sweeps (every shard builds every item's key), so the run stays short. */
static void every_key_of_a_child_is_remembered(void **state) {
  (void)state;
  enum { N = 300, SHARDS = 60 };
  size_t cap = 200 + (size_t)N * 64, len = 0;
  char *text = malloc(cap), *out, *err;
  assert_non_null(text);
  len += (size_t)snprintf(text + len, cap - len,
                          "[plugins]\ndirectories = %s/lib/calhost/plugins\nenabled = example\n"
                          "[calibration]\nthreads = 1\nrigor = quick\ntime_budget = 30\n",
                          g_build);
  for (int i = 0; i < N; i++)
    len += (size_t)snprintf(text + len, cap - len,
                            "[workload e%d]\noperator = ReduceSum\nshape = %d\n", i, 1000 + i);
  snprintf(text + len, cap - len, "[workload dup]\noperator = ReduceSum\nshape = %d\n",
           1000 + N - 1);
  write_file(in_dir("many.ini"), text);
  free(text);
  /* the shard that holds "dup" */
  char shards[8];
  snprintf(shards, sizeof shards, "%d", SHARDS);
  assert_int_equal(RUN(&out, &err, "plan", "--config", "many.ini", "--shards", shards, "--json"),
                   0);
  const char *item = strstr(out, "\"workload\":\"dup\"");
  assert_non_null(item);
  const char *sh = strstr(item, "\"shard\":");
  assert_non_null(sh);
  int shard = atoi(sh + strlen("\"shard\":"));
  free(out);
  free(err);
  char spec[16];
  snprintf(spec, sizeof spec, "%d/%d", shard, SHARDS);
  assert_int_equal(
      RUN(&out, &err, "calibrate", "--config", "many.ini", "--shard", spec, "--store", "many.txt"),
      0);
  char want[96];
  snprintf(want, sizeof want, "skipped: same exact key as workload e%d threads=1", N - 1);
  if (!strstr(out, want))
    fail_msg("no '%s' in:\n%s\n%s", want, out, err);
  free(out);
  free(err);
}

static void shards_store_what_the_unsharded_run_stores(void **state) {
  (void)state;
  char *out, *err;
  assert_int_equal(
      RUN(&out, &err, "--quiet", "calibrate", "--config", "fleet.ini", "--store", "full.txt"), 0);
  free(out);
  free(err);
  size_t nfull;
  char *full = store_keys(in_dir("full.txt"), &nfull);
  assert_true(nfull >= 12); /* 6 exact (at least) + 6 portable */
  const int shards = 3;
  char *each[3];
  size_t total = 0;
  for (int i = 0; i < shards; i++) {
    char spec[8], store[32];
    snprintf(spec, sizeof spec, "%d/%d", i, shards);
    snprintf(store, sizeof store, "shard-%d.txt", i);
    int rc = RUN(&out, &err, "--quiet", "calibrate", "--config", "fleet.ini", "--shard", spec,
                 "--store", store);
    if (rc != 0)
      fail_msg("calibrate --shard %s: exit %d: %s", spec, rc, err);
    free(out);
    free(err);
    size_t n = 0;
    each[i] = access(in_dir(store), F_OK) == 0 ? store_keys(in_dir(store), &n) : strdup("");
    total += n;
  }
  /* disjoint: no key line in two shards */
  for (int i = 0; i < shards; i++) {
    char *copy = strdup(each[i]), *save = NULL;
    for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
      for (int j = 0; j < shards; j++)
        if (j != i && strstr(each[j], l))
          fail_msg("shards %d and %d both hold %s", i, j, l);
    free(copy);
  }
  assert_int_equal(total, nfull);
  /* the union (merged by import) is the unsharded run's store */
  assert_int_equal(RUN(&out, &err, "--store", "fleet.txt", "import", "shard-0.txt", "shard-1.txt",
                       "shard-2.txt"),
                   0);
  free(out);
  free(err);
  char *merged = store_keys(in_dir("fleet.txt"), NULL);
  assert_string_equal(merged, full);
  /* the portable profile of mm_128x128x256 (2 threads are worth it there)
   * comes from 1 thread, as in the unsharded run */
  assert_non_null(strstr(merged, "m=128"));
  for (int i = 0; i < shards; i++)
    free(each[i]);
  free(merged);
  free(full);
}

static const char *profile_text(const char *kind, const char *proc, unsigned threads,
                                const char *policy) {
  static char buf[4][1024];
  static int next;
  char *b = buf[next++ % 4];
  if (!strcmp(kind, "portable"))
    snprintf(b, 1024,
             "profile portable calibrated\nbackend \"example\"\noperator \"ReduceSum\"\n"
             "implementation \"1\"\nstructure \"elements\" \"4096\"\n"
             "measurement \"source_threads\" 1 \"count\"\npolicy \"%s\"\nend\n",
             policy);
  else
    snprintf(b, 1024,
             "profile exact calibrated\nbackend \"example\"\noperator \"ReduceSum\"\n"
             "implementation \"1\"\nmodel_digest \"sha256:00\"\nprocessor \"%s\"\n"
             "thread_count %u\npolicy \"%s\"\nend\n",
             proc, threads, policy);
  return b;
}

static void write_store(const char *name, const char *a, const char *b, const char *c) {
  char text[4096];
  snprintf(text, sizeof text, "onnx_light_calibration_profiles 1\n%s%s%s", a, b ? b : "",
           c ? c : "");
  write_file(in_dir(name), text);
}

/* The policy of the only profile of a kind ("portable"/proc name) in the
 * store, as its quoted text in the file. */
static int file_has(const char *name, const char *needle) {
  char *t = harness_slurp_or_empty(in_dir(name), NULL);
  int has = strstr(t, needle) != NULL;
  free(t);
  return has;
}

static void import_keeps_the_first_portable_profile(void **state) {
  (void)state;
  write_store("a.txt", profile_text("portable", NULL, 0, "block=first"),
              profile_text("exact", "node-a", 1, "block=a1"), NULL);
  write_store("b.txt", profile_text("portable", NULL, 0, "block=second"),
              profile_text("exact", "node-b", 1, "block=b1"),
              profile_text("exact", "node-a", 1, "block=a1-again"));
  write_store("c.txt", profile_text("portable", NULL, 0, "block=third"), NULL, NULL);
  char *out, *err;
  /* one import of several files: the first file's portable profile stays */
  assert_int_equal(RUN(&out, &err, "--store", "m.txt", "import", "a.txt", "b.txt"), 0);
  assert_non_null(strstr(out, "kept 1 existing portable profile"));
  free(out);
  free(err);
  assert_true(file_has("m.txt", "block=first"));
  assert_false(file_has("m.txt", "block=second"));
  /* exact profiles: other processors kept apart, the same key replaced */
  assert_true(file_has("m.txt", "block=b1"));
  assert_true(file_has("m.txt", "block=a1-again"));
  /* a later import keeps the stored one too */
  assert_int_equal(RUN(&out, &err, "--store", "m.txt", "import", "--json", "c.txt"), 0);
  assert_non_null(strstr(out, "\"kept\":1"));
  free(out);
  free(err);
  assert_true(file_has("m.txt", "block=first"));
  assert_false(file_has("m.txt", "block=third"));
  /* --force replaces it */
  assert_int_equal(RUN(&out, &err, "--store", "m.txt", "import", "--force", "c.txt"), 0);
  free(out);
  free(err);
  assert_false(file_has("m.txt", "block=first"));
  assert_true(file_has("m.txt", "block=third"));
  assert_int_equal(RUN(&out, &err, "--store", "m.txt", "check"), 0);
  free(out);
  free(err);
}

static void list_by_processor_counts_node_types(void **state) {
  (void)state;
  write_store("p.txt", profile_text("exact", "node-a", 1, "x=1"),
              profile_text("exact", "node-a", 4, "x=2"), profile_text("exact", "node-b", 2, "x=3"));
  char *out, *err;
  assert_int_equal(RUN(&out, &err, "--store", "p.txt", "override", "set", "--backend", "other",
                       "--operator", "Op", "--implementation", "1", "--portable", "--structure",
                       "s=1", "--policy", "p"),
                   0);
  free(out);
  free(err);
  assert_int_equal(RUN(&out, &err, "--store", "p.txt", "list", "--by-processor"), 0);
  assert_non_null(strstr(out, "processor \"node-a\"\n  2 exact calibrated, 0 exact overrides; "
                              "backends example; thread counts 1,4\n"));
  assert_non_null(strstr(out, "processor \"node-b\"\n  1 exact calibrated"));
  assert_non_null(strstr(out, "2 processor types; portable (any processor): 0 calibrated, 1 "
                              "overrides"));
  free(out);
  free(err);
  assert_int_equal(RUN(&out, &err, "--store", "p.txt", "list", "--by-processor", "--json"), 0);
  assert_non_null(strstr(out, "{\"processor\":\"node-b\",\"exact_calibrated\":1,"
                              "\"exact_overrides\":0,\"backends\":[\"example\"],"
                              "\"thread_counts\":[2]}"));
  assert_non_null(strstr(out, "\"portable_overrides\":1}"));
  free(out);
  free(err);
  /* --backend narrows it */
  assert_int_equal(
      RUN(&out, &err, "--store", "p.txt", "list", "--by-processor", "--backend", "other"), 0);
  assert_non_null(strstr(out, "0 processor types; portable (any processor): 0 calibrated, 1"));
  free(out);
  free(err);
}

int main(void) {
  const char *b = getenv("CALHOST_BUILD_DIR");
  snprintf(g_build, sizeof g_build, "%s", b ? b : ".");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(plan_shards_partition_the_items, setup, teardown),
      cmocka_unit_test_setup_teardown(empty_shard_succeeds, setup, teardown),
      cmocka_unit_test_setup_teardown(a_run_of_no_item_fails_in_every_shard, setup, teardown),
      cmocka_unit_test_setup_teardown(a_key_shared_by_two_workloads_is_calibrated_once, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(every_key_of_a_child_is_remembered, setup, teardown),
      cmocka_unit_test_setup_teardown(bad_shard_is_a_usage_error, setup, teardown),
      cmocka_unit_test_setup_teardown(shards_store_what_the_unsharded_run_stores, setup, teardown),
      cmocka_unit_test_setup_teardown(import_keeps_the_first_portable_profile, setup, teardown),
      cmocka_unit_test_setup_teardown(list_by_processor_counts_node_types, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
