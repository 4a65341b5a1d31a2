/*
 * load_test.c: many writers and readers on one store (issue 6, Load).
 *
 * 16 writer processes make 100 commits each on one store file, a
 * deterministic mix of Store, InstallOverride, ClearOverride, Store of an
 * "old" implementation, Invalidate of that implementation, and an import
 * through the command line (`bin/calhost --store P import FILE`). Writer w
 * owns backend "load<w>", so the final state is computable: the test
 * replays every writer's operations into the expected state and compares it
 * with the file, profile by profile and policy by policy. Meanwhile readers
 * load the file continuously, with calstore_read_file and with
 * calstore_reload on an open handle; each load must be a complete, valid
 * file (a torn or half-written file would be malformed).
 *
 * Environment: CALHOST_LOAD_WRITERS (16), CALHOST_LOAD_COMMITS (100),
 * CALHOST_LOAD_READERS (3), CALHOST_LOAD_IMPORT_EVERY (10: one commit in ten
 * is a command-line import; 0 disables it), CALHOST_BUILD_DIR (to find
 * bin/calhost). Prints commits per second and the readers' figures.
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "harness.h"
#include "rel_common.h"

#define KEYS 6

static char dir[512], path[600], calhost_bin[1024];
static int writers, commits, readers, import_every;

typedef struct shared {
  volatile int stop;
  volatile long loads[16], bad[16], profiles_seen[16];
  volatile double commit_seconds[64];
} shared;

static shared *sh;

static int op_kind(int w, int i) {
  if (import_every > 0 && i % import_every == import_every - 1)
    return 6; /* command-line import */
  uint32_t h = (uint32_t)(w * 2654435761u) ^ (uint32_t)(i * 40503u + 17u);
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  h ^= h >> 15;
  uint32_t r = h % 100;
  return r < 40 ? 0 : r < 60 ? 1 : r < 72 ? 2 : r < 86 ? 3 : 4;
}

static void key_name(char *buf, size_t cap, int i) {
  snprintf(buf, cap, "k%d", (i * 7) % KEYS);
}

static void apply(rel_model *m, int w, int i) {
  char backend[32], proc[16], policy[64], needle[256];
  snprintf(backend, sizeof backend, "load%d", w);
  key_name(proc, sizeof proc, i);
  snprintf(policy, sizeof policy, "w%dc%d", w, i);
  switch (op_kind(w, i)) {
  case 0:
    rel_model_set(m, "calibrated", backend, "1", proc, 1, policy);
    break;
  case 1:
    rel_model_set(m, "override", backend, "1", proc, 1, policy);
    break;
  case 2:
    snprintf(needle, sizeof needle, "override exact %s|MatMul|1|sha256:reliability|%s|", backend,
             proc);
    rel_model_remove(m, needle);
    break;
  case 3:
    rel_model_set(m, "calibrated", backend, "old", proc, 1, policy);
    break;
  case 4:
    snprintf(needle, sizeof needle, " %s|MatMul|old|", backend);
    rel_model_remove(m, needle);
    break;
  case 6: {
    char imp[16];
    snprintf(imp, sizeof imp, "imp%d", i % 3);
    rel_model_set(m, "calibrated", backend, "1", imp, 1, policy);
    rel_model_set(m, "override", backend, "1", imp, 1, policy);
    break;
  }
  }
}

static int cli_import(int w, int i, char *why, size_t cap) {
  char file[700];
  snprintf(file, sizeof file, "%s/import-%d-%d.txt", dir, w, i);
  FILE *f = fopen(file, "w");
  if (!f) {
    snprintf(why, cap, "cannot write %s", file);
    return -1;
  }
  for (int src = 0; src < 2; src++)
    fprintf(f,
            "%sprofile exact %s\nbackend \"load%d\"\noperator \"MatMul\"\nimplementation \"1\"\n"
            "model_digest \"sha256:reliability\"\nprocessor \"imp%d\"\nthread_count 1\n"
            "measurement \"median_latency\" 1.5 \"us\"\npolicy \"w%dc%d\"\nend\n",
            src ? "" : "onnx_light_calibration_profiles 1\n", src ? "override" : "calibrated", w,
            i % 3, w, i);
  fclose(f);
  const char *const argv[] = {"--store", path, "import", file, NULL};
  harness_opts o = {.timeout_s = 300}; /* a storm of processes on two cores */
  harness_result r = {0};
  int code = harness_run_program(calhost_bin, &o, &r, argv);
  if (code != 0)
    fputs(r.err, stderr);
  harness_result_free(&r);
  unlink(file);
  if (code != 0) {
    snprintf(why, cap, "`%s --store %s import %s` exited with status %d", calhost_bin, path, file,
             code);
    return -1;
  }
  return 0;
}

static void writer(int w) {
  calstore *s = rel_open(path);
  char backend[32], proc[16], policy[64], why[2400];
  snprintf(backend, sizeof backend, "load%d", w);
  double t0 = rel_now();
  for (int i = 0; i < commits; i++) {
    calstore_error err;
    memset(&err, 0, sizeof err);
    key_name(proc, sizeof proc, i);
    snprintf(policy, sizeof policy, "w%dc%d", w, i);
    int kind = op_kind(w, i);
    calstore_key k = rel_exact_key(backend, "MatMul", kind == 3 ? "old" : "1", proc, 1);
    calstore_status st = CALSTORE_OK;
    switch (kind) {
    case 0:
    case 3:
      st = calstore_store(s, &k, rel_measurement, 1, rel_serialize, policy, NULL, NULL, &err);
      break;
    case 1:
      st = calstore_install_override(s, &k, rel_measurement, 1, rel_serialize, policy, NULL, NULL,
                                     &err);
      break;
    case 2:
      st = calstore_clear_override(s, &k, &err);
      if (st == CALSTORE_NOT_FOUND)
        st = CALSTORE_OK;
      break;
    case 4:
      st = calstore_invalidate(s, backend, "old", NULL, &err);
      break;
    case 6:
      if (cli_import(w, i, why, sizeof why) != 0) {
        fprintf(stderr, "load: writer %d commit %d: %s\n", w, i, why);
        _exit(3);
      }
      break;
    }
    if (st != CALSTORE_OK) {
      fprintf(stderr, "load: writer %d commit %d (kind %d): %s: %s\n", w, i, kind,
              calstore_status_name(st), err.message);
      _exit(2);
    }
  }
  sh->commit_seconds[w] = rel_now() - t0;
  calstore_close(&s);
  _exit(0);
}

static int count_visit(void *user, const calstore_profile *p) {
  (void)p;
  (*(long *)user)++;
  return 0;
}

static void reader(int r) {
  calstore *s = NULL;
  int use_reload = r % 2 == 1;
  if (use_reload)
    s = rel_open(path);
  while (!sh->stop) {
    long n = 0;
    calstore_status st;
    if (use_reload) {
      calstore_error err;
      st = calstore_reload(s, &err);
      n = (long)calstore_count(s);
      if (st != CALSTORE_OK)
        fprintf(stderr, "load: reader %d: reload: %s: %s (line %u)\n", r, calstore_status_name(st),
                err.message, err.line);
    } else {
      st = calstore_read_file(path, count_visit, &n, NULL, NULL, NULL);
      if (st == CALSTORE_NOT_FOUND && sh->loads[r] == 0)
        continue; /* before the first commit */
      if (st != CALSTORE_OK)
        fprintf(stderr, "load: reader %d: read_file: %s\n", r, calstore_status_name(st));
    }
    if (st != CALSTORE_OK)
      sh->bad[r]++;
    sh->loads[r]++;
    sh->profiles_seen[r] += n;
  }
  calstore_close(&s);
  _exit(0);
}

static int env_int(const char *name, int def) {
  const char *v = getenv(name);
  return v && *v ? atoi(v) : def;
}

int main(void) {
  writers = env_int("CALHOST_LOAD_WRITERS", 16);
  commits = env_int("CALHOST_LOAD_COMMITS", 100);
  readers = env_int("CALHOST_LOAD_READERS", 3);
  import_every = env_int("CALHOST_LOAD_IMPORT_EVERY", 10);
  if (writers < 1 || writers > 64 || readers < 0 || readers > 16 || commits < 1) {
    fprintf(stderr, "load: bad CALHOST_LOAD_* settings\n");
    return 2;
  }
  const char *build = getenv("CALHOST_BUILD_DIR");
  snprintf(calhost_bin, sizeof calhost_bin, "%s/bin/calhost", build ? build : ".");
  if (import_every > 0 && access(calhost_bin, X_OK) != 0) {
    fprintf(stderr, "load: %s not found (set CALHOST_BUILD_DIR)\n", calhost_bin);
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED || rel_mkdtemp(dir, sizeof dir, "load") != 0) {
    perror("load: setup");
    return 1;
  }
  snprintf(path, sizeof path, "%s/profiles.txt", dir);
  printf("== load: %d writers x %d commits (1 in %d through `calhost import`), %d readers, "
         "store %s\n",
         writers, commits, import_every, readers, path);

  pid_t rpids[16], wpids[64];
  for (int r = 0; r < readers; r++)
    if ((rpids[r] = fork()) == 0)
      reader(r);
  double t0 = rel_now();
  for (int w = 0; w < writers; w++)
    if ((wpids[w] = fork()) == 0)
      writer(w);
  int failures = 0;
  for (int w = 0; w < writers; w++) {
    int status;
    waitpid(wpids[w], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      printf("FAIL: writer %d ended with status 0x%x\n", w, status);
      failures++;
    }
  }
  double secs = rel_now() - t0;
  sh->stop = 1;
  long loads = 0, bad = 0, seen = 0;
  for (int r = 0; r < readers; r++) {
    int status;
    waitpid(rpids[r], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      printf("FAIL: reader %d ended with status 0x%x\n", r, status);
      failures++;
    }
    loads += sh->loads[r];
    bad += sh->bad[r];
    seen += sh->profiles_seen[r];
  }

  rel_model m = {0};
  for (int w = 0; w < writers; w++)
    for (int i = 0; i < commits; i++)
      apply(&m, w, i);
  calstore_status st;
  char *actual = rel_file_snapshot(path, &st);
  char *expect = rel_model_text(&m);
  int same = st == CALSTORE_OK && strcmp(actual, expect) == 0;
  if (!same) {
    printf("FAIL: the final store (%s) differs from the committed profiles\n",
           calstore_status_name(st));
    /* Show the first differing lines. */
    const char *a = actual, *e = expect;
    while (*a && *a == *e)
      a++, e++;
    while (a > actual && a[-1] != '\n')
      a--;
    while (e > expect && e[-1] != '\n')
      e--;
    printf("  expected: %.200s\n  actual:   %.200s\n", e, a);
    failures++;
  }
  if (bad) {
    printf("FAIL: readers saw %ld incomplete or invalid loads\n", bad);
    failures++;
  }
  long total = (long)writers * commits;
  double slowest = 0;
  for (int w = 0; w < writers; w++)
    if (sh->commit_seconds[w] > slowest)
      slowest = sh->commit_seconds[w];
  printf("load: writers=%d commits=%ld seconds=%.2f commits_per_second=%.1f "
         "slowest_writer_seconds=%.2f\n",
         writers, total, secs, (double)total / secs, slowest);
  printf("load: readers=%d loads=%ld invalid_loads=%ld profiles_read=%ld loads_per_second=%.0f\n",
         readers, loads, bad, seen, (double)loads / secs);
  size_t actual_n = 0;
  for (const char *c = actual; *c; c++)
    actual_n += *c == '\n';
  printf("load: final_profiles=%zu expected=%zu identical=%s lost=%s\n", actual_n, m.n,
         same ? "yes" : "no", same ? "none" : "SEE ABOVE");
  free(actual);
  free(expect);
  rel_model_free(&m);
  if (failures == 0)
    rel_rmtree(dir);
  else
    printf("load: store kept for inspection in %s\n", dir);
  printf("load: %s\n", failures ? "FAILED" : "PASSED");
  return failures ? 1 : 0;
}
