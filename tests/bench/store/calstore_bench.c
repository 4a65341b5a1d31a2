/*
 * calstore_bench.c: calstore-bench, the store's benchmark. Every figure is
 * printed as key=value, beside the same operation on SQLite (one table
 * keyed by the profile identity, WAL, synchronous=FULL) and beside plain-I/O
 * baselines measured in the same run, so the figures read as ratios:
 *
 *   calstore-bench load FILE               profiles=N seconds=S (+ wc -l, memory, sqlite)
 *   calstore-bench lookup FILE KEYS_TSV N  lookups=N hits=H us_per_lookup=U (+ full, sqlite)
 *   calstore-bench store FILE              seconds=S (+ write+fsync of the same bytes, sqlite)
 *   calstore-bench batch FILE K            seconds=S (+ write+fsync, sqlite)
 *
 * FILE is a store made by tests/bench/store/gen_profiles.py (KEYS_TSV by its
 * --keys). store and batch work on copies in a temporary directory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "calhost/calstore.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds of this process (unaffected by waiting for a busy CPU). */
static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *fmt, const char *arg) {
  fprintf(stderr, "calstore-bench: %s %s\n", fmt, arg);
  exit(2);
}

/* Each timed operation runs this many times and the minimum is reported
 * (CALSTORE_BENCH_REPEAT, default 5): the fairest figure on a busy machine. */
static int repeats(void) {
  const char *r = getenv("CALSTORE_BENCH_REPEAT");
  int n = r ? atoi(r) : 5;
  return n > 0 ? n : 1;
}

static double min2(double a, double b) {
  return a < b ? a : b;
}

static long rss_bytes(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long size = 0, res = 0;
  if (f) {
    if (fscanf(f, "%ld %ld", &size, &res) != 2)
      res = 0;
    fclose(f);
  }
  return res * sysconf(_SC_PAGESIZE);
}

static size_t heap_bytes(void) {
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

static char *slurp(const char *path, size_t *len) {
  int fd = open(path, O_RDONLY);
  if (fd < 0)
    die("cannot open", path);
  struct stat st;
  fstat(fd, &st);
  char *b = malloc((size_t)st.st_size + 1);
  size_t n = 0;
  ssize_t r;
  while ((r = read(fd, b + n, (size_t)st.st_size - n)) > 0)
    n += (size_t)r;
  close(fd);
  b[n] = 0;
  *len = n;
  return b;
}

/* The wc -l baseline, in C: read the whole file and count newlines. */
static double wc_l_c(const char *path, size_t *lines) {
  double t0 = now();
  int fd = open(path, O_RDONLY);
  static char buf[1 << 16];
  ssize_t r;
  size_t n = 0;
  while ((r = read(fd, buf, sizeof buf)) > 0)
    for (const char *p = buf; (p = memchr(p, '\n', (size_t)(buf + r - p))); p++)
      n++;
  close(fd);
  *lines = n;
  return now() - t0;
}

/* The wc -l baseline as the tool itself (process start included). */
static double wc_l_tool(const char *path) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "wc -l < '%s' > /dev/null", path);
  double t0 = now();
  if (system(cmd) != 0)
    return -1;
  return now() - t0;
}

/* Baseline: write the same bytes to a new file and fsync it. */
static double write_fsync(const char *dir, const char *data, size_t len) {
  char path[4200];
  snprintf(path, sizeof path, "%s/baseline.bin", dir);
  double t0 = now();
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  size_t off = 0;
  while (off < len) {
    ssize_t w = write(fd, data + off, len - off);
    if (w <= 0)
      break;
    off += (size_t)w;
  }
  fsync(fd);
  close(fd);
  double t = now() - t0;
  unlink(path);
  return t;
}

static calstore *open_store(const char *path, double *seconds) {
  calstore_options o;
  calstore_options_init(&o);
  o.path = path;
  calstore *s = NULL;
  calstore_error err = {0};
  double t0 = now();
  calstore_status st = calstore_open(&o, &s, &err);
  *seconds = now() - t0;
  if (st != CALSTORE_OK) {
    fprintf(stderr, "calstore-bench: %s: %s line %u: %s\n", path, calstore_status_name(st),
            err.line, err.message);
    exit(2);
  }
  return s;
}

/* ---- SQLite ----------------------------------------------------------------- */

static void sql_exec(sqlite3 *db, const char *sql) {
  char *msg = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
    die("sqlite:", msg ? msg : "?");
}

static sqlite3 *sql_open(const char *path) {
  sqlite3 *db;
  if (sqlite3_open(path, &db) != SQLITE_OK)
    die("cannot open", path);
  sql_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
               "CREATE TABLE IF NOT EXISTS profiles(kind INT, source INT, backend TEXT, op TEXT,"
               " impl TEXT, model TEXT, processor TEXT, threads INT, structure TEXT,"
               " measurements TEXT, policy TEXT,"
               " PRIMARY KEY(backend, op, impl, kind, source, model, processor, threads,"
               " structure)) WITHOUT ROWID;");
  return db;
}

static void structure_text(const calstore_key *k, char *out, size_t cap) {
  size_t used = 0;
  out[0] = 0;
  for (size_t i = 0; i < k->structure_count && used < cap; i++)
    used += (size_t)snprintf(out + used, cap - used, "%s%s=%s", i ? ";" : "", k->structure[i].name,
                             k->structure[i].value);
}

static void sql_bind_profile(sqlite3_stmt *st, const calstore_profile *p) {
  char s[1024], m[1024];
  size_t used = 0;
  structure_text(&p->key, s, sizeof s);
  m[0] = 0;
  for (size_t i = 0; i < p->measurement_count && used < sizeof m; i++)
    used += (size_t)snprintf(m + used, sizeof m - used, "%s=%.17g %s;", p->measurements[i].name,
                             p->measurements[i].value, p->measurements[i].unit);
  sqlite3_bind_int(st, 1, p->key.kind);
  sqlite3_bind_int(st, 2, p->source);
  sqlite3_bind_text(st, 3, p->key.backend, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 4, p->key.operator_name, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 5, p->key.implementation, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 6, p->key.model_digest ? p->key.model_digest : "", -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 7, p->key.processor ? p->key.processor : "", -1, SQLITE_TRANSIENT);
  sqlite3_bind_int(st, 8, (int)p->key.thread_count);
  sqlite3_bind_text(st, 9, s, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 10, m, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 11, p->policy, (int)p->policy_length, SQLITE_TRANSIENT);
}

static const char *INSERT_SQL = "INSERT OR REPLACE INTO profiles VALUES(?,?,?,?,?,?,?,?,?,?,?)";

static int sql_insert_visit(void *user, const calstore_profile *p) {
  sqlite3_stmt *st = user;
  sql_bind_profile(st, p);
  if (sqlite3_step(st) != SQLITE_DONE)
    die("sqlite insert failed", "");
  sqlite3_reset(st);
  return 0;
}

/* Builds an SQLite database holding the store's profiles (not timed). */
static sqlite3 *sql_build(const char *dbpath, calstore *s) {
  unlink(dbpath);
  sqlite3 *db = sql_open(dbpath);
  sqlite3_stmt *st;
  sql_exec(db, "BEGIN");
  sqlite3_prepare_v2(db, INSERT_SQL, -1, &st, NULL);
  calstore_inspect(s, sql_insert_visit, st);
  sqlite3_finalize(st);
  sql_exec(db, "COMMIT");
  return db;
}

static char *tmpdir_make(void) {
  char tmpl[] = "/tmp/calstore-bench-XXXXXX";
  char *d = mkdtemp(tmpl);
  if (!d)
    die("mkdtemp failed", "");
  return strdup(d);
}

static void tmpdir_remove(const char *dir) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0)
    fprintf(stderr, "calstore-bench: could not remove %s\n", dir);
}

static void copy_file(const char *from, const char *to) {
  size_t len;
  char *data = slurp(from, &len);
  FILE *f = fopen(to, "wb");
  if (!f || fwrite(data, 1, len, f) != len)
    die("cannot write", to);
  fclose(f);
  free(data);
}

/* ---- commands --------------------------------------------------------------- */

static int cmd_load(const char *file) {
  size_t lines = 0, len;
  struct stat st;
  if (stat(file, &st) != 0)
    die("cannot stat", file);
  /* warm the page cache so every contender reads from memory */
  free(slurp(file, &len));
  double wc_c = 1e9, wc_tool = 1e9, load = 1e9;
  double wc_cpu = 1e9, load_cpu = 1e9;
  for (int i = 0; i < repeats(); i++) {
    double c0 = cpu_now();
    wc_c = min2(wc_c, wc_l_c(file, &lines));
    wc_cpu = min2(wc_cpu, cpu_now() - c0);
    wc_tool = min2(wc_tool, wc_l_tool(file));
  }
  for (int i = 0; i + 1 < repeats(); i++) {
    double t, c0 = cpu_now();
    calstore *tmp = open_store(file, &t);
    load_cpu = min2(load_cpu, cpu_now() - c0);
    load = min2(load, t);
    calstore_close(&tmp);
  }
  malloc_trim(0);
  long rss0 = rss_bytes();
  size_t heap0 = heap_bytes();
  double t1;
  calstore *s = open_store(file, &t1);
  load = min2(load, t1);
  long rss1 = rss_bytes();
  size_t heap1 = heap_bytes();
  size_t n = calstore_count(s);
  printf("profiles=%zu seconds=%.6f\n", n, load);
  printf("repeats=%d (minimum of each figure)\n", repeats());
  printf("file_bytes=%lld lines=%zu\n", (long long)st.st_size, lines);
  printf("wc_l_c_seconds=%.6f load_vs_wc_l_c=%.2f\n", wc_c, load / wc_c);
  printf("wc_l_tool_seconds=%.6f load_vs_wc_l_tool=%.2f\n", wc_tool, load / wc_tool);
  if (repeats() > 1)
    printf("load_cpu_seconds=%.6f wc_l_c_cpu_seconds=%.6f load_vs_wc_l_cpu=%.2f\n", load_cpu,
           wc_cpu, load_cpu / wc_cpu);
  printf("heap_bytes=%zu heap_vs_file=%.2f\n", heap1 - heap0,
         (double)(heap1 - heap0) / (double)st.st_size);
  printf("rss_delta_bytes=%ld rss_vs_file=%.2f\n", rss1 - rss0,
         (double)(rss1 - rss0) / (double)st.st_size);
  char *dir = tmpdir_make();
  char db[4200];
  snprintf(db, sizeof db, "%s/profiles.db", dir);
  sqlite3 *sdb = sql_build(db, s);
  sqlite3_close(sdb);
  double sql = 1e9;
  size_t rows = 0, bytes = 0;
  for (int i = 0; i < repeats(); i++) {
    double t0 = now();
    sdb = sql_open(db);
    sqlite3_stmt *q;
    sqlite3_prepare_v2(sdb, "SELECT * FROM profiles", -1, &q, NULL);
    rows = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
      rows++;
      for (int c = 0; c < 11; c++)
        bytes += (size_t)sqlite3_column_bytes(q, c);
    }
    sqlite3_finalize(q);
    sql = min2(sql, now() - t0);
    sqlite3_close(sdb);
  }
  printf("sqlite_rows=%zu sqlite_seconds=%.6f calstore_vs_sqlite=%.2f\n", rows, sql, load / sql);
  tmpdir_remove(dir);
  free(dir);
  calstore_close(&s);
  return 0;
}

typedef struct key_row {
  char *f[7];
  calstore_property props[8];
  size_t nprops;
  char *structure_text;
} key_row;

/* The rows of a keys file; their fields point into *data (free both with
 * free_keys). */
static key_row *read_keys(const char *path, size_t *count, char **data_out) {
  size_t len;
  char *data = slurp(path, &len);
  *data_out = data;
  size_t cap = 1024, n = 0;
  key_row *rows = malloc(cap * sizeof *rows);
  for (char *line = data; line && *line;) {
    char *nl = strchr(line, '\n');
    if (nl)
      *nl = 0;
    if (n == cap)
      rows = realloc(rows, (cap *= 2) * sizeof *rows);
    key_row *r = &rows[n];
    memset(r, 0, sizeof *r);
    char *p = line;
    for (int i = 0; i < 7; i++) {
      r->f[i] = p;
      char *tab = p ? strchr(p, '\t') : NULL;
      if (tab) {
        *tab = 0;
        p = tab + 1;
      } else {
        p = NULL;
      }
      if (!r->f[i])
        r->f[i] = "";
    }
    r->structure_text = strdup(r->f[6]);
    for (char *tok = r->f[6][0] ? strtok(r->f[6], ";") : NULL; tok && r->nprops < 8;
         tok = strtok(NULL, ";")) {
      char *eq = strchr(tok, '=');
      if (!eq)
        continue;
      *eq = 0;
      r->props[r->nprops].name = tok;
      r->props[r->nprops].value = eq + 1;
      r->nprops++;
    }
    n++;
    line = nl ? nl + 1 : NULL;
  }
  *count = n;
  return rows; /* data stays referenced by the rows */
}

static void free_keys(key_row *rows, size_t n, char *data) {
  for (size_t i = 0; i < n; i++)
    free(rows[i].structure_text);
  free(rows);
  free(data);
}

static calstore_lookup_options row_options(const key_row *r) {
  calstore_lookup_options o = {0};
  o.backend = r->f[0];
  o.operator_name = r->f[1];
  o.implementation = r->f[2];
  if (r->f[3][0]) {
    o.model_digest = r->f[3];
    o.processor = r->f[4];
    o.thread_count = (uint32_t)atoi(r->f[5]);
  }
  o.structure = r->props;
  o.structure_count = r->nprops;
  return o;
}

static int cmd_lookup(const char *file, const char *keys, long n) {
  size_t nk;
  char *key_data;
  key_row *rows = read_keys(keys, &nk, &key_data);
  if (!nk)
    die("no keys in", keys);
  double load;
  calstore *s = open_store(file, &load);
  calstore_lookup_options *opts = malloc(nk * sizeof *opts);
  for (size_t i = 0; i < nk; i++)
    opts[i] = row_options(&rows[i]);
  /* the hot path: calstore_select (no rejection report) */
  long hits = 0, exact_hits = 0, exact_n = 0;
  double t0 = now();
  for (long i = 0; i < n; i++) {
    calstore_lookup_result *r = NULL;
    if (calstore_select(s, &opts[(size_t)i % nk], NULL, NULL, &r, NULL) == CALSTORE_OK)
      hits++;
    calstore_lookup_result_free(&r);
  }
  double sel = now() - t0;
  printf("lookups=%ld hits=%ld us_per_lookup=%.3f\n", n, hits, sel / (double)n * 1e6);
  /* exact keys only */
  t0 = now();
  for (long i = 0; i < n; i++) {
    const calstore_lookup_options *o = &opts[(size_t)i % nk];
    if (!o->model_digest)
      continue;
    calstore_lookup_result *r = NULL;
    exact_n++;
    if (calstore_select(s, o, NULL, NULL, &r, NULL) == CALSTORE_OK)
      exact_hits++;
    calstore_lookup_result_free(&r);
  }
  double ex = now() - t0;
  printf("exact_lookups=%ld exact_hits=%ld us_per_exact_hit=%.3f\n", exact_n, exact_hits,
         ex / (double)exact_n * 1e6);
  /* the full lookup with the rejection report */
  long nfull = n < 20000 ? n : 20000, full_hits = 0;
  size_t rejections = 0;
  t0 = now();
  for (long i = 0; i < nfull; i++) {
    calstore_lookup_result *r = NULL;
    if (calstore_lookup(s, &opts[(size_t)i % nk], NULL, NULL, &r, NULL) == CALSTORE_OK)
      full_hits++;
    if (r)
      rejections += r->rejection_count;
    calstore_lookup_result_free(&r);
  }
  double full = now() - t0;
  printf("full_lookups=%ld full_hits=%ld us_per_full_lookup=%.3f rejections_per_lookup=%.1f\n",
         nfull, full_hits, full / (double)nfull * 1e6, (double)rejections / (double)nfull);
  /* SQLite: a primary-key SELECT per level until a hit */
  char *dir = tmpdir_make();
  char db[4200];
  snprintf(db, sizeof db, "%s/profiles.db", dir);
  sqlite3 *sdb = sql_build(db, s);
  sqlite3_stmt *q;
  sqlite3_prepare_v2(sdb,
                     "SELECT policy, measurements FROM profiles WHERE backend=? AND op=? AND "
                     "impl=? AND kind=? AND source=? AND model=? AND processor=? AND threads=? "
                     "AND structure=?",
                     -1, &q, NULL);
  long sql_hits = 0;
  t0 = now();
  for (long i = 0; i < n; i++) {
    const key_row *r = &rows[(size_t)i % nk];
    int exact = r->f[3][0] != 0;
    static const int sources[2] = {CALSTORE_SOURCE_OVERRIDE, CALSTORE_SOURCE_CALIBRATED};
    for (int l = 0; l < 2; l++) {
      sqlite3_bind_text(q, 1, r->f[0], -1, SQLITE_STATIC);
      sqlite3_bind_text(q, 2, r->f[1], -1, SQLITE_STATIC);
      sqlite3_bind_text(q, 3, r->f[2], -1, SQLITE_STATIC);
      sqlite3_bind_int(q, 4, exact ? CALSTORE_KEY_EXACT : CALSTORE_KEY_PORTABLE);
      sqlite3_bind_int(q, 5, sources[l]);
      sqlite3_bind_text(q, 6, exact ? r->f[3] : "", -1, SQLITE_STATIC);
      sqlite3_bind_text(q, 7, exact ? r->f[4] : "", -1, SQLITE_STATIC);
      sqlite3_bind_int(q, 8, exact ? atoi(r->f[5]) : 0);
      sqlite3_bind_text(q, 9, exact ? "" : r->structure_text, -1, SQLITE_STATIC);
      int found = sqlite3_step(q) == SQLITE_ROW;
      sqlite3_reset(q);
      if (found) {
        sql_hits++;
        break;
      }
    }
  }
  double sql = now() - t0;
  sqlite3_finalize(q);
  sqlite3_close(sdb);
  printf("sqlite_hits=%ld sqlite_us_per_lookup=%.3f calstore_vs_sqlite=%.3f\n", sql_hits,
         sql / (double)n * 1e6, sel / sql);
  tmpdir_remove(dir);
  free(dir);
  calstore_close(&s);
  free(opts);
  free_keys(rows, nk, key_data);
  return 0;
}

static const char *bench_policy(void *user, size_t *len, char *err, size_t cap) {
  (void)err;
  (void)cap;
  *len = strlen(user);
  return user;
}

/* Commits one profile (k <= 0) or a batch of k into the store; returns the
 * seconds the commit took. round makes the identities new each time. */
static double commit_once(calstore *s, long k, int round) {
  char digest[64];
  calstore_measurement m[] = {{"median_latency", 12.5, "us"}, {"samples", 50, "count"}};
  char *policy = "algorithm=blocked;mc=64;nc=256;kc=128;note=\"bench\"";
  calstore_status st;
  calstore_error err = {0};
  double t0 = now();
  if (k <= 0) {
    snprintf(digest, sizeof digest, "bench-model-r%d", round);
    calstore_key key = {CALSTORE_KEY_EXACT, "backend_0", "MatMul", "1", digest,
                        "bench-cpu",        8,           NULL,     0};
    st = calstore_store(s, &key, m, 2, bench_policy, policy, NULL, NULL, &err);
  } else {
    calstore_batch *b = NULL;
    st = calstore_batch_begin(s, &b, &err);
    for (long i = 0; i < k && st == CALSTORE_OK; i++) {
      snprintf(digest, sizeof digest, "bench-model-r%d-%ld", round, i);
      calstore_key key = {CALSTORE_KEY_EXACT, "backend_0", "MatMul", "1", digest,
                          "bench-cpu",        8,           NULL,     0};
      st = calstore_batch_store(b, &key, m, 2, bench_policy, policy, NULL, NULL, &err);
    }
    if (st == CALSTORE_OK)
      st = calstore_batch_commit(&b, &err);
    calstore_batch_abort(&b);
  }
  double t = now() - t0;
  if (st != CALSTORE_OK) {
    fprintf(stderr, "calstore-bench: commit failed: %s: %s\n", calstore_status_name(st),
            err.message);
    exit(2);
  }
  return t;
}

static double sqlite_once(sqlite3 *sdb, long k, int round) {
  char digest[64];
  calstore_measurement m[] = {{"median_latency", 12.5, "us"}, {"samples", 50, "count"}};
  char *policy = "algorithm=blocked;mc=64;nc=256;kc=128;note=\"bench\"";
  sqlite3_stmt *ins;
  sqlite3_prepare_v2(sdb, INSERT_SQL, -1, &ins, NULL);
  double t0 = now();
  sql_exec(sdb, "BEGIN");
  long rows = k <= 0 ? 1 : k;
  for (long i = 0; i < rows; i++) {
    snprintf(digest, sizeof digest, "bench-model-r%d-%ld", round, i);
    calstore_key key = {CALSTORE_KEY_EXACT, "backend_0", "MatMul", "1", digest,
                        "bench-cpu",        8,           NULL,     0};
    calstore_profile p = {key, CALSTORE_SOURCE_CALIBRATED, m, 2, policy, strlen(policy)};
    sql_insert_visit(ins, &p);
  }
  sql_exec(sdb, "COMMIT");
  double t = now() - t0;
  sqlite3_finalize(ins);
  return t;
}

static int cmd_store_or_batch(const char *file, long k) {
  char *dir = tmpdir_make();
  char copy[4200], db[4200];
  snprintf(copy, sizeof copy, "%s/profiles.txt", dir);
  snprintf(db, sizeof db, "%s/profiles.db", dir);
  double ours = 1e9, second = 1e9, load = 1e9, base = 1e9, sql = 1e9;
  sqlite3 *sdb = NULL;
  struct stat sb;
  for (int r = 0; r < repeats(); r++) {
    copy_file(file, copy); /* a fresh copy each round */
    double t;
    calstore *s = open_store(copy, &t);
    load = min2(load, t);
    if (!sdb)
      sdb = sql_build(db, s);
    ours = min2(ours, commit_once(s, k, 2 * r));
    second = min2(second, commit_once(s, k, 2 * r + 1)); /* the next commit of the same handle */
    calstore_close(&s);
    stat(copy, &sb);
    size_t len;
    char *bytes = slurp(copy, &len);
    base = min2(base, write_fsync(dir, bytes, len));
    free(bytes);
    sql = min2(sql, sqlite_once(sdb, k, r));
  }
  sqlite3_close(sdb);
  if (k > 0)
    printf("profiles=%ld ", k);
  printf("seconds=%.6f\n", ours);
  printf("repeats=%d (minimum of each figure)\n", repeats());
  printf("next_commit_seconds=%.6f open_seconds=%.6f file_bytes=%lld\n", second, load,
         (long long)sb.st_size);
  printf("write_fsync_seconds=%.6f calstore_vs_write_fsync=%.2f\n", base, ours / base);
  printf("sqlite_seconds=%.6f calstore_vs_sqlite=%.2f\n", sql, ours / sql);
  tmpdir_remove(dir);
  free(dir);
  return 0;
}

static void usage(void) {
  fprintf(stderr, "usage: calstore-bench load FILE\n"
                  "       calstore-bench lookup FILE KEYS_TSV N\n"
                  "       calstore-bench store FILE\n"
                  "       calstore-bench batch FILE K\n");
  exit(2);
}

int main(int argc, char **argv) {
  if (argc < 3)
    usage();
  if (!strcmp(argv[1], "load") && argc == 3)
    return cmd_load(argv[2]);
  if (!strcmp(argv[1], "lookup") && argc == 5)
    return cmd_lookup(argv[2], argv[3], atol(argv[4]) > 0 ? atol(argv[4]) : 1);
  if (!strcmp(argv[1], "store") && argc == 3)
    return cmd_store_or_batch(argv[2], 0);
  if (!strcmp(argv[1], "batch") && argc == 4)
    return cmd_store_or_batch(argv[2], atol(argv[3]) > 0 ? atol(argv[3]) : 1);
  usage();
  return 2;
}
