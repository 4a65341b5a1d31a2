/*
 * crash_test.c: crash injection on the store's write path (issue 6, Faults).
 *
 * Round after round, a writer process opens the store and commits a
 * deterministic sequence of changes (Store, InstallOverride, ClearOverride,
 * Invalidate, a three-entry batch), reporting each success over a pipe
 * before it goes on. It is killed with SIGKILL, alternately:
 *   - at the Nth open/write/ftruncate/fsync/rename/unlink/close under the
 *     store directory (interpose.c; N random), and
 *   - after a random delay (any point, including stdio's own writes).
 * After each kill the parent checks that the file loads, that it holds
 * exactly the effect of every reported commit, plus at most the one commit
 * that was in flight, that nothing but the store, its lock and at most one
 * .tmp lies in the directory, and that a stale .tmp (which the parent fills
 * with garbage) is replaced by the next writer and never loaded.
 *
 * CALHOST_CRASH_KILLS (default 400) sets how many kills to inject.
 * Prints the figures; exit 0 only when nothing was lost.
 */
#include <signal.h>
#include <sys/wait.h>

#include "interpose.h"
#include "rel_common.h"

#define MAX_OPS 40
#define KEYS 6

static char dir[512], path[600], tmp_path[640];

/* ---- the deterministic workload ---------------------------------------- */

typedef struct op {
  int kind; /* 0 store, 1 override, 2 clear, 3 invalidate "old", 4 store "old", 5 batch */
  int key;
  char policy[64];
} op;

static uint32_t mix(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

static op op_of(int round, int j) {
  op o;
  uint32_t h = mix((uint32_t)round * 7919U + (uint32_t)j * 104729U + 1U);
  uint32_t r = h % 100;
  o.kind = r < 35 ? 0 : r < 60 ? 1 : r < 75 ? 2 : r < 83 ? 3 : r < 93 ? 4 : 5;
  o.key = (int)((h >> 8) % KEYS);
  snprintf(o.policy, sizeof o.policy, "r%dj%d-%c", round, j, "socibB"[o.kind]);
  return o;
}

static const char *procs[KEYS] = {"p0", "p1", "p2", "p3", "p4", "p5"};

/* ---- the expected state ---------------------------------------------- */

static void model_apply(rel_model *m, const op *o) {
  char needle[128];
  switch (o->kind) {
  case 0: rel_model_set(m, "calibrated", "crash", "1", procs[o->key], 1, o->policy); break;
  case 1: rel_model_set(m, "override", "crash", "1", procs[o->key], 1, o->policy); break;
  case 2:
    snprintf(needle, sizeof needle, "override exact crash|MatMul|1|sha256:reliability|%s|",
             procs[o->key]);
    rel_model_remove(m, needle);
    break;
  case 3: rel_model_remove(m, "crash|MatMul|old|"); break;
  case 4: rel_model_set(m, "calibrated", "crash", "old", procs[o->key], 1, o->policy); break;
  case 5:
    for (int k = 0; k < 3; k++)
      rel_model_set(m, "calibrated", "crash", "1", procs[(o->key + k) % KEYS], 1, o->policy);
    break;
  }
}

/* ---- the writer -------------------------------------------------------- */

static calstore_status run_op(calstore *s, const op *o, calstore_error *err) {
  calstore_key k = rel_exact_key("crash", "MatMul", o->kind == 4 ? "old" : "1", procs[o->key], 1);
  switch (o->kind) {
  case 0:
  case 4:
    return calstore_store(s, &k, rel_measurement, 1, rel_serialize, (void *)o->policy, NULL, NULL,
                          err);
  case 1:
    return calstore_install_override(s, &k, rel_measurement, 1, rel_serialize,
                                     (void *)o->policy, NULL, NULL, err);
  case 2: {
    calstore_status st = calstore_clear_override(s, &k, err);
    return st == CALSTORE_NOT_FOUND ? CALSTORE_OK : st;
  }
  case 3: return calstore_invalidate(s, "crash", "old", NULL, err);
  default: {
    calstore_batch *b = NULL;
    calstore_status st = calstore_batch_begin(s, &b, err);
    for (int i = 0; st == CALSTORE_OK && i < 3; i++) {
      calstore_key bk = rel_exact_key("crash", "MatMul", "1", procs[(o->key + i) % KEYS], 1);
      st = calstore_batch_store(b, &bk, rel_measurement, 1, rel_serialize, (void *)o->policy,
                                NULL, NULL, err);
    }
    if (st == CALSTORE_OK)
      return calstore_batch_commit(&b, err);
    calstore_batch_abort(&b);
    return st;
  }
  }
}

static void writer(int round, int fd, unsigned nth) {
  calstore_options opt;
  calstore_options_init(&opt);
  opt.path = path;
  calstore *s = NULL;
  calstore_error err;
  memset(&err, 0, sizeof err);
  if (nth)
    ip_arm(dir, IP_ALL, nth, IP_KILL, 0, 0, NULL);
  calstore_status st = calstore_open(&opt, &s, &err);
  if (st != CALSTORE_OK) {
    ip_disarm();
    dprintf(2, "crash: round %d: the store does not load: %s: %s (line %u)\n", round,
            calstore_status_name(st), err.message, err.line);
    _exit(4);
  }
  for (int j = 0; j < MAX_OPS; j++) {
    op o = op_of(round, j);
    st = run_op(s, &o, &err);
    if (st != CALSTORE_OK) {
      ip_disarm();
      dprintf(2, "crash: round %d op %d (kind %d): %s: %s\n", round, j, o.kind,
              calstore_status_name(st), err.message);
      _exit(3);
    }
    int32_t done = j;
    if (write(fd, &done, sizeof done) != sizeof done)
      _exit(5);
  }
  ip_disarm();
  calstore_close(&s);
  _exit(0);
}

/* ---- the parent -------------------------------------------------------- */

static int file_has(const char *p, const char *needle) {
  char *t = harness_slurp(p, NULL);
  int has = t && strstr(t, needle);
  free(t);
  return has;
}

int main(void) {
  const char *e = getenv("CALHOST_CRASH_KILLS");
  int want_kills = e ? atoi(e) : 400;
  int kills = 0, kills_nth = 0, kills_timer = 0, rounds = 0, completed = 0;
  long reported = 0, inflight_landed = 0, inflight_lost = 0;
  int stale_tmp = 0, stale_replaced = 0, failures = 0;
  char garbage[64] = "";
  ino_t garbage_ino = 0;
  time_t garbage_ctime = 0;
  rel_model m = {0};

  setvbuf(stdout, NULL, _IOLBF, 0);
  if (rel_mkdtemp(dir, sizeof dir, "crash") != 0) {
    perror("mkdtemp");
    return 1;
  }
  snprintf(path, sizeof path, "%s/profiles.txt", dir);
  snprintf(tmp_path, sizeof tmp_path, "%s.tmp", path);
  srand((unsigned)time(NULL) ^ (unsigned)getpid());
  printf("== crash injection: SIGKILL a writer at random points, %d times (store %s)\n",
         want_kills, path);
  double t0 = rel_now();

  while (kills < want_kills && rounds < want_kills * 4 && failures == 0) {
    int round = rounds++;
    int use_nth = round % 2 == 0;
    unsigned nth = use_nth ? 1 + (unsigned)(rand() % 90) : 0;
    int p[2];
    if (pipe(p) != 0) {
      perror("pipe");
      return 1;
    }
    pid_t pid = fork();
    if (pid == 0) {
      close(p[0]);
      writer(round, p[1], nth);
    }
    close(p[1]);
    if (!use_nth) {
      /* Up to ~MAX_OPS commits' time (measured so far), so most kills land
       * inside a commit rather than after the writer is done. */
      double per = reported > 0 ? (rel_now() - t0) / (double)reported : 0.002;
      long span = (long)(per * 1e9 * MAX_OPS * 0.8);
      if (span < 200000)
        span = 200000;
      struct timespec d = {0, 100000 + rand() % span};
      if (d.tv_nsec >= 1000000000L) {
        d.tv_sec = d.tv_nsec / 1000000000L;
        d.tv_nsec %= 1000000000L;
      }
      nanosleep(&d, NULL);
      kill(pid, SIGKILL);
    }
    int32_t done;
    int last = -1;
    ssize_t r;
    while ((r = read(p[0], &done, sizeof done)) == sizeof done) {
      op o = op_of(round, done);
      model_apply(&m, &o);
      last = done;
      reported++;
    }
    close(p[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
      kills++;
      if (use_nth)
        kills_nth++;
      else
        kills_timer++;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      completed++;
    } else {
      printf("FAIL: round %d: the writer ended with status 0x%x (see above)\n", round, status);
      failures++;
      break;
    }

    /* The stale .tmp of the previous round must be gone or rewritten once a
     * writer has replaced the store since (a commit that changes nothing
     * may write nothing). */
    struct stat now_st;
    int replaced_since = stat(path, &now_st) == 0 &&
                         (now_st.st_ino != garbage_ino || now_st.st_ctime != garbage_ctime);
    if (garbage[0] && replaced_since) {
      if (file_has(tmp_path, garbage) || file_has(path, garbage)) {
        printf("FAIL: round %d: the stale .tmp (%s) was not replaced by the next writer\n", round,
               garbage);
        failures++;
      } else {
        stale_replaced++;
      }
      garbage[0] = '\0';
    }

    /* The file holds the reported commits, plus at most the in-flight one. */
    calstore_status st;
    char *actual = rel_file_snapshot(path, &st);
    char *expect = rel_model_text(&m);
    if (st != CALSTORE_OK && !(st == CALSTORE_NOT_FOUND && m.n == 0 && actual[0] == '\0')) {
      printf("FAIL: round %d: after the kill the store does not load: %s\n", round,
             calstore_status_name(st));
      failures++;
    } else if (strcmp(actual, expect) != 0) {
      rel_model m2;
      rel_model_copy(&m2, &m);
      op o = op_of(round, last + 1);
      model_apply(&m2, &o);
      char *expect2 = rel_model_text(&m2);
      if (last + 1 < MAX_OPS && strcmp(actual, expect2) == 0) {
        inflight_landed++;
        rel_model_free(&m);
        m = m2;
      } else {
        printf("FAIL: round %d: the store lost or invented a commit (last reported op %d)\n"
               "--- expected\n%s--- actual\n%s",
               round, last, expect, actual);
        rel_model_free(&m2);
        failures++;
      }
      free(expect2);
    } else if (WIFSIGNALED(status)) {
      inflight_lost++; /* the in-flight commit (if any) did not land: allowed */
    }
    free(actual);
    free(expect);

    /* Only the store, its lock and at most one .tmp may be left. */
    char names[4096];
    rel_list_dir(dir, names, sizeof names);
    int tmps = 0;
    for (char *tok = strtok(names, " "); tok; tok = strtok(NULL, " ")) {
      if (!strcmp(tok, "profiles.txt") || !strcmp(tok, "profiles.txt.lock"))
        continue;
      if (strstr(tok, ".tmp")) {
        tmps++;
        continue;
      }
      printf("FAIL: round %d: unexpected file %s in the store directory\n", round, tok);
      failures++;
    }
    if (tmps > 1) {
      printf("FAIL: round %d: %d temporary files accumulate\n", round, tmps);
      failures++;
    }
    if (access(tmp_path, F_OK) == 0) {
      stale_tmp++;
      snprintf(garbage, sizeof garbage, "GARBAGE-round-%d", round);
      struct stat gst;
      if (stat(path, &gst) == 0) {
        garbage_ino = gst.st_ino;
        garbage_ctime = gst.st_ctime;
      }
      int fd = open(tmp_path, O_WRONLY | O_TRUNC | O_NOFOLLOW);
      if (fd >= 0) {
        dprintf(fd, "%s\nprofile nonsense\n", garbage);
        close(fd);
      }
    }
    if (rounds % 40 == 0)
      printf("   ... %d rounds, %d kills, %ld commits reported, %.1f s\n", rounds, kills, reported,
             rel_now() - t0);
  }
  double secs = rel_now() - t0;
  printf("crash: kills=%d (at Nth syscall: %d, at random time: %d) rounds=%d completed=%d\n", kills,
         kills_nth, kills_timer, rounds, completed);
  printf("crash: commits_reported=%ld inflight_landed=%ld inflight_not_landed=%ld "
         "profiles_at_end=%zu\n",
         reported, inflight_landed, inflight_lost, m.n);
  printf("crash: stale_tmp_left=%d stale_tmp_replaced=%d lost=%d seconds=%.1f\n", stale_tmp,
         stale_replaced, failures, secs);
  if (kills < want_kills && failures == 0) {
    printf("FAIL: only %d kills injected\n", kills);
    failures++;
  }
  rel_model_free(&m);
  if (failures == 0)
    rel_rmtree(dir);
  else
    printf("crash: the store directory is kept for inspection: %s\n", dir);
  printf("crash: %s\n", failures ? "FAILED" : "PASSED");
  return failures ? 1 : 0;
}
