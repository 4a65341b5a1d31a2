/*
 * test_store_win.c: libcalstore's behaviour on Windows (platform_win32.c),
 * built with mingw-w64 and run under Wine by tests/windows/run.sh: load,
 * lookup precedence, every format vector (the Linux test's own check,
 * tests/store/vector_check.h), commits, batches, reload and merge of
 * another handle's commit, the .tmp rules, a non-ASCII store path (UTF-8 in,
 * a wide file name on disk), %LOCALAPPDATA% as the default base, read-only
 * and locked files, and two processes committing into one store at once.
 * Where Windows differs by design (no directory fsync, no mode bits, no
 * POSIX symlink rules) the case says what Windows does instead.
 *
 * Usage: test_store_win [CASE...]; CALHOST_SOURCE_DIR names the checkout
 * (a Windows path, e.g. Z:\work\calhost). The program runs itself as
 * "test_store_win --commit-child STORE TAG N" for the two-process case.
 */
#include <stdint.h>

#include "calhost/calstore.h"
#include "vector_check.h"
#include "win_test.h"

/* ---- store helpers -------------------------------------------------------- */

typedef struct policy_text {
  const char *text;
} policy_text;

static const char *serialize(void *user, size_t *length, char *err, size_t cap) {
  (void)err;
  (void)cap;
  policy_text *p = user;
  *length = strlen(p->text);
  return p->text;
}

static calstore_key exact(const char *backend, const char *impl, const char *proc) {
  calstore_key k = {CALSTORE_KEY_EXACT, backend, "MatMul", impl, "digest", proc, 4, NULL, 0};
  return k;
}

static const calstore_property shape[] = {{"m", "64"}, {"n", "64"}};

static calstore_key portable(const char *backend, const char *impl) {
  calstore_key k = {CALSTORE_KEY_PORTABLE, backend, "MatMul", impl, NULL, NULL, 0, shape, 2};
  return k;
}

/* A fresh directory and the store path in it (profiles.txt), removed by
 * fixture_done. */
typedef struct fixture {
  char *dir, *path;
} fixture;

static fixture fixture_new(void) {
  fixture f;
  f.dir = wt_mkdtemp("");
  f.path = wt_path(f.dir, "profiles.txt");
  return f;
}

static void fixture_done(fixture *f) {
  wt_rmtree(f->dir);
  free(f->path);
  free(f->dir);
}

static calstore *open_store(const char *path, uint32_t lock_timeout_ms, calstore_status *st,
                            calstore_error *err) {
  calstore_options o;
  calstore_options_init(&o);
  o.path = path;
  o.lock_timeout_ms = lock_timeout_ms;
  calstore *s = NULL;
  calstore_error local = {0};
  calstore_status r = calstore_open(&o, &s, err ? err : &local);
  if (st)
    *st = r;
  return s;
}

static calstore_status put(calstore *s, const calstore_key *k, const char *policy,
                           calstore_error *err) {
  calstore_measurement m[] = {{"median_latency", 1.25, "us"}};
  policy_text p = {policy};
  calstore_error local = {0};
  return calstore_store(s, k, m, 1, serialize, &p, NULL, NULL, err ? err : &local);
}

/* The policy stored under k (calibrated), or NULL; caller frees. */
static char *policy_of(calstore *s, const calstore_key *k) {
  calstore_lookup_result *r = NULL;
  calstore_error err = {0};
  char *out = NULL;
  if (calstore_get(s, k, CALSTORE_SOURCE_CALIBRATED, &r, &err) == CALSTORE_OK && r->profile)
    out = _strdup(r->profile->policy);
  calstore_lookup_result_free(&r);
  return out;
}

static const char *const seed =
    "onnx_light_calibration_profiles 1\n"
    "profile exact calibrated\nbackend \"naive\"\noperator \"MatMul\"\nimplementation \"1\"\n"
    "model_digest \"digest\"\nprocessor \"cpu\"\nthread_count 4\n"
    "measurement \"median_latency\" 2 \"us\"\npolicy \"from-file\"\nend\n";

/* ---- cases ---------------------------------------------------------------- */

/* A store file written by hand is loaded; its profile is found. */
static void load_reads_the_profiles_of_a_store_file(void) {
  fixture fx = fixture_new();
  char *path = fx.path;
  calstore_status st;
  calstore *s = NULL;
  char *pol = NULL;
  WT_CHECK_GOTO(wt_write(path, seed) == 0, out, "cannot write %s", path);
  s = open_store(path, 0, &st, NULL);
  WT_CHECK_GOTO(s && st == CALSTORE_OK, out, "open: %s", calstore_status_name(st));
  WT_CHECK_GOTO(calstore_count(s) == 1, out, "%zu profiles", calstore_count(s));
  calstore_key k = exact("naive", "1", "cpu");
  pol = policy_of(s, &k);
  WT_CHECK_GOTO(pol && !strcmp(pol, "from-file"), out, "policy %s", pol ? pol : "(none)");
out:
  free(pol);
  calstore_close(&s);
  fixture_done(&fx);
}

/* The walk: exact override, portable override, exact calibrated, portable
 * calibrated; a level is only reached when the ones above have nothing. */
static void lookup_walks_the_precedence_levels_in_order(void) {
  fixture fx = fixture_new();
  char *path = fx.path;
  calstore *s = open_store(path, 0, NULL, NULL);
  calstore_lookup_result *r = NULL;
  calstore_error err = {0};
  calstore_measurement m[] = {{"median_latency", 1, "us"}};
  policy_text pe = {"exact-cal"}, pp = {"portable-cal"}, po = {"portable-ovr"}, px = {"exact-ovr"};
  calstore_key ke = exact("naive", "1", "cpu"), kp = portable("naive", "1");
  calstore_lookup_options q = {"naive", "MatMul", "1", "digest", "cpu", 4, shape, 2, 0};
  static const calstore_level want[] = {
      CALSTORE_LEVEL_PORTABLE_CALIBRATED, CALSTORE_LEVEL_EXACT_CALIBRATED,
      CALSTORE_LEVEL_PORTABLE_OVERRIDE, CALSTORE_LEVEL_EXACT_OVERRIDE};
  static const char *const want_policy[] = {"portable-cal", "exact-cal", "portable-ovr",
                                            "exact-ovr"};
  WT_CHECK_GOTO(s, out, "open failed");
  for (int step = 0; step < 4; step++) {
    calstore_status st =
        step == 0   ? calstore_store(s, &kp, m, 1, serialize, &pp, NULL, NULL, &err)
        : step == 1 ? calstore_store(s, &ke, m, 1, serialize, &pe, NULL, NULL, &err)
        : step == 2 ? calstore_install_override(s, &kp, m, 1, serialize, &po, NULL, NULL, &err)
                    : calstore_install_override(s, &ke, m, 1, serialize, &px, NULL, NULL, &err);
    WT_CHECK_GOTO(st == CALSTORE_OK, out, "step %d: %s", step, err.message);
    WT_CHECK_GOTO(calstore_lookup(s, &q, NULL, NULL, &r, &err) == CALSTORE_OK, out,
                  "lookup after step %d: %s", step, err.message);
    WT_CHECK_GOTO(r->level == want[step] && !strcmp(r->profile->policy, want_policy[step]), out,
                  "after step %d: level %s policy %s", step, calstore_level_name(r->level),
                  r->profile->policy);
    calstore_lookup_result_free(&r);
  }
out:
  calstore_lookup_result_free(&r);
  calstore_close(&s);
  fixture_done(&fx);
}

static void print_failed_vector(void *user, const char *name, const char *why) {
  (void)user;
  printf("    vector %s: %s\n", name, why);
}

/* Every line of tests/store/vectors/store-v1/expected.tsv: verdict, count
 * and byte-exact canonical rewrite, by the Linux test's own check. */
static void every_format_vector_gives_its_expected_result(void) {
  const char *src = getenv("CALHOST_SOURCE_DIR");
  WT_CHECK(src && *src, "CALHOST_SOURCE_DIR is not set (the checkout, as a Windows path)");
  char vec[VC_PATH];
  snprintf(vec, sizeof vec, "%s\\tests\\store\\vectors\\store-v1", src);
  char *tmp = wt_mkdtemp("");
  int failed = 0, files = vc_check_all(vec, tmp, print_failed_vector, NULL, &failed);
  wt_rmtree(tmp);
  free(tmp);
  WT_CHECK(files >= 40, "%d vectors read from %s\\expected.tsv", files, vec);
  WT_CHECK(failed == 0, "%d of %d vectors failed (listed above)", failed, files);
}

/* A commit replaces the file (MoveFileExW over it): a fresh handle reads
 * what was stored, and nothing but the store and its lock file is left. */
static void commit_replaces_the_file_and_leaves_no_temporary(void) {
  fixture fx = fixture_new();
  char *dir = fx.dir, *path = fx.path;
  char *tmp = wt_path(dir, "profiles.txt.tmp"), *pol = NULL, *text = NULL;
  calstore *a = NULL, *b = NULL;
  calstore_error err = {0};
  WT_CHECK_GOTO(wt_write(path, seed) == 0, out, "cannot write %s", path);
  a = open_store(path, 0, NULL, NULL);
  calstore_key k = exact("naive", "2", "cpu");
  WT_CHECK_GOTO(put(a, &k, "second", &err) == CALSTORE_OK, out, "commit: %s", err.message);
  text = wt_read(path, NULL);
  WT_CHECK_GOTO(wt_has(text, "from-file") && wt_has(text, "\"second\"") && !wt_has(text, "\r\n"),
                out, "the file holds:\n%s", text);
  b = open_store(path, 0, NULL, NULL);
  pol = policy_of(b, &k);
  WT_CHECK_GOTO(pol && !strcmp(pol, "second") && calstore_count(b) == 2, out,
                "reopened: %zu profiles, policy %s", calstore_count(b), pol ? pol : "(none)");
  WT_CHECK_GOTO(!wt_exists(tmp), out, "%s is left behind", tmp);
out:
  free(pol);
  free(text);
  calstore_close(&a);
  calstore_close(&b);
  free(tmp);
  fixture_done(&fx);
}

/* A batch is one commit: all its changes or none. */
static void batch_commits_all_its_changes_at_once(void) {
  fixture fx = fixture_new();
  char *path = fx.path;
  calstore *s = open_store(path, 0, NULL, NULL), *fresh = NULL;
  calstore_batch *b = NULL;
  calstore_error err = {0};
  calstore_measurement m[] = {{"median_latency", 3, "us"}};
  policy_text p = {"batched"};
  WT_CHECK_GOTO(s && calstore_batch_begin(s, &b, &err) == CALSTORE_OK, out, "begin: %s",
                err.message);
  for (int i = 0; i < 5; i++) {
    char impl[8];
    snprintf(impl, sizeof impl, "%d", i + 1);
    calstore_key k = exact("naive", impl, "cpu");
    WT_CHECK_GOTO(calstore_batch_store(b, &k, m, 1, serialize, &p, NULL, NULL, &err) == CALSTORE_OK,
                  out, "batch_store: %s", err.message);
  }
  WT_CHECK_GOTO(!wt_exists(path), out, "the batch wrote %s before its commit", path);
  WT_CHECK_GOTO(calstore_batch_commit(&b, &err) == CALSTORE_OK, out, "commit: %s", err.message);
  fresh = open_store(path, 0, NULL, NULL);
  WT_CHECK_GOTO(fresh && calstore_count(fresh) == 5, out, "%zu profiles on disk",
                fresh ? calstore_count(fresh) : 0);
out:
  calstore_batch_abort(&b);
  calstore_close(&s);
  calstore_close(&fresh);
  fixture_done(&fx);
}

/* A second handle's commit merges what the first committed meanwhile (the
 * file's identity changed: reload under the lock), and reload shows it. */
static void commits_of_two_handles_merge_and_reload_sees_them(void) {
  fixture fx = fixture_new();
  char *path = fx.path;
  calstore *a = open_store(path, 0, NULL, NULL), *b = open_store(path, 0, NULL, NULL);
  calstore_error err = {0};
  char *pol = NULL;
  calstore_key ka = exact("naive", "1", "a"), kb = exact("naive", "1", "b");
  WT_CHECK_GOTO(a && b, out, "open failed");
  WT_CHECK_GOTO(put(a, &ka, "by-a", &err) == CALSTORE_OK, out, "a: %s", err.message);
  WT_CHECK_GOTO(put(b, &kb, "by-b", &err) == CALSTORE_OK, out, "b: %s", err.message);
  WT_CHECK_GOTO(calstore_count(b) == 2, out, "b sees %zu profiles after its commit",
                calstore_count(b));
  WT_CHECK_GOTO(calstore_count(a) == 1, out, "a changed before its reload");
  WT_CHECK_GOTO(calstore_reload(a, &err) == CALSTORE_OK, out, "reload: %s", err.message);
  pol = policy_of(a, &kb);
  WT_CHECK_GOTO(calstore_count(a) == 2 && pol && !strcmp(pol, "by-b"), out,
                "a after reload: %zu profiles, policy %s", calstore_count(a), pol ? pol : "(none)");
out:
  free(pol);
  calstore_close(&a);
  calstore_close(&b);
  fixture_done(&fx);
}

/* The .tmp rules: a stale <path>.tmp (an interrupted writer's) is ignored
 * by readers and replaced, never written through, by the next commit; a
 * read-only stale one too (DeleteFileW refuses a read-only file, where
 * POSIX unlink does not look at the file's mode: the store clears the
 * attribute of its own temporary name first). */
static void a_stale_tmp_is_ignored_and_replaced_by_the_next_commit(void) {
  fixture fx = fixture_new();
  char *dir = fx.dir, *path = fx.path;
  char *tmp = wt_path(dir, "profiles.txt.tmp"), *text = NULL;
  calstore *s = NULL;
  calstore_error err = {0};
  WT_CHECK_GOTO(wt_write(path, seed) == 0 && wt_write(tmp, "half a store fi") == 0, out,
                "cannot write the files");
  s = open_store(path, 0, NULL, NULL);
  WT_CHECK_GOTO(s && calstore_count(s) == 1, out, "the stale temp file was read");
  calstore_key k = exact("naive", "3", "cpu");
  WT_CHECK_GOTO(put(s, &k, "after-crash", &err) == CALSTORE_OK, out, "commit: %s", err.message);
  text = wt_read(path, NULL);
  WT_CHECK_GOTO(wt_has(text, "after-crash") && wt_has(text, "from-file"), out, "store:\n%s", text);
  WT_CHECK_GOTO(!wt_exists(tmp), out, "the stale %s is still there", tmp);
  /* again with a read-only stale temp file */
  WT_CHECK_GOTO(wt_write(tmp, "half a store fi") == 0, out, "cannot write %s", tmp);
  {
    wchar_t *w = wt_wide(tmp);
    BOOL ro = SetFileAttributesW(w, FILE_ATTRIBUTE_READONLY);
    free(w);
    WT_CHECK_GOTO(ro, out, "cannot make %s read-only", tmp);
  }
  k = exact("naive", "4", "cpu");
  WT_CHECK_GOTO(put(s, &k, "after-ro-crash", &err) == CALSTORE_OK, out,
                "commit over a read-only stale temp: %s", err.message);
  WT_CHECK_GOTO(!wt_exists(tmp) && calstore_count(s) == 3, out,
                "the read-only stale %s is still there", tmp);
out:
  free(text);
  calstore_close(&s);
  free(tmp);
  fixture_done(&fx);
}

/* calstore_export holds no lock, so it writes a unique temporary
 * (`<path>.<pid>-<n>.tmp`, CREATE_NEW) and removes nothing else: a
 * `<path>.tmp` there (someone else's) is left as it was. */
static void export_uses_a_unique_temporary_and_removes_nothing_else(void) {
  fixture fx = fixture_new();
  char *dir = fx.dir, *path = fx.path;
  char *out = wt_path(dir, "export.txt"), *other = wt_path(dir, "export.txt.tmp");
  char *text = NULL, *kept = NULL;
  calstore *s = NULL;
  calstore_error err = {0};
  WT_CHECK_GOTO(wt_write(path, seed) == 0 && wt_write(other, "not mine") == 0, out_label,
                "cannot write the files");
  s = open_store(path, 0, NULL, NULL);
  WT_CHECK_GOTO(s && calstore_export(s, out, &err) == CALSTORE_OK, out_label, "export: %s",
                err.message);
  text = wt_read(out, NULL);
  kept = wt_read(other, NULL);
  WT_CHECK_GOTO(text && !strcmp(text, seed), out_label, "exported:\n%s", text);
  WT_CHECK_GOTO(kept && !strcmp(kept, "not mine"), out_label, "%s was touched", other);
  {
    /* nothing else is left in the directory: store, export, the other's file */
    int entries = 0;
    wchar_t *pat = NULL;
    char *glob = wt_path(dir, "*");
    pat = wt_wide(glob);
    free(glob);
    WIN32_FIND_DATAW fd;
    HANDLE h = FindFirstFileW(pat, &fd);
    free(pat);
    if (h != INVALID_HANDLE_VALUE) {
      do
        entries += wcscmp(fd.cFileName, L".") && wcscmp(fd.cFileName, L"..");
      while (FindNextFileW(h, &fd));
      FindClose(h);
    }
    WT_CHECK_GOTO(entries == 3, out_label, "%d files in %s (a temporary left?)", entries, dir);
  }
out_label:
  free(text);
  free(kept);
  calstore_close(&s);
  free(other);
  free(out);
  fixture_done(&fx);
}

/* A store below a directory whose path is over 260 characters (MAX_PATH:
 * `_fullpath` returned NULL there), named plainly and with the `\\?\`
 * prefix: exporting onto the store itself is the documented in-place
 * rewrite (it was refused as "a hard link of itself"), onto its lock file
 * is refused (it was accepted and replaced the lock), onto a real hard link
 * of it is refused as one, and onto another file is a plain export. Files
 * are compared by identity (volume serial and file index of their folder),
 * never by a path normalisation that can fail. (issue 36 item 10) */
static void long_and_prefixed_paths_export_by_identity(void) {
  fixture fx = fixture_new();
  char *deep = _strdup(fx.dir), *path = NULL, *lock = NULL, *pre = NULL, *prelock = NULL,
       *link = NULL, *other = NULL, *text = NULL;
  calstore *s = NULL;
  calstore_error err = {0};
  calstore_status st;
  for (int i = 0; i < 6; i++) { /* 6 x 50 characters: over MAX_PATH */
    char *next = wt_path(deep, "a-folder-name-of-fifty-characters-for-a-deep-path0");
    next[strlen(next) - 1] = (char)('0' + i);
    free(deep);
    deep = next;
    wchar_t *w = wt_wide(deep);
    BOOL made = CreateDirectoryW(w, NULL);
    free(w);
    WT_CHECK_GOTO(made, out_label, "cannot create %s", deep);
  }
  path = wt_path(deep, "profiles.txt");
  WT_CHECK_GOTO(strlen(path) > MAX_PATH, out_label, "%s is not over MAX_PATH", path);
  lock = malloc(strlen(path) + 6);
  sprintf(lock, "%s.lock", path);
  pre = malloc(strlen(path) + 5);
  sprintf(pre, "\\\\?\\%s", path);
  prelock = malloc(strlen(pre) + 6);
  sprintf(prelock, "%s.lock", pre);
  link = wt_path(deep, "hardlink.txt");
  other = wt_path(deep, "other.txt");
  WT_CHECK_GOTO(wt_write(path, seed) == 0, out_label, "cannot write %s", path);
  s = open_store(path, 0, &st, &err);
  WT_CHECK_GOTO(s, out_label, "open %s: %s", path, err.message);
  calstore_key k = exact("naive", "1", "cpu");
  WT_CHECK_GOTO(put(s, &k, "committed", &err) == CALSTORE_OK, out_label, "commit: %s", err.message);
  WT_CHECK_GOTO(wt_exists(lock), out_label, "no lock file %s", lock);
  const char *selves[] = {path, pre};
  for (int i = 0; i < 2; i++) {
    memset(&err, 0, sizeof err);
    st = calstore_export(s, selves[i], &err);
    WT_CHECK_GOTO(st == CALSTORE_OK, out_label, "export onto the store itself (%s): %s: %s",
                  i ? "\\\\?\\" : "plain", calstore_status_name(st), err.message);
  }
  text = wt_read(path, NULL);
  WT_CHECK_GOTO(wt_has(text, "committed"), out_label, "the store lost its commit:\n%s", text);
  const char *locks[] = {lock, prelock};
  for (int i = 0; i < 2; i++) {
    memset(&err, 0, sizeof err);
    st = calstore_export(s, locks[i], &err);
    WT_CHECK_GOTO(st == CALSTORE_INVALID_ARGUMENT && wt_has(err.message, "lock file"), out_label,
                  "export onto the lock file (%s) gave %s: %s", i ? "\\\\?\\" : "plain",
                  calstore_status_name(st), err.message);
  }
  {
    wchar_t *wl = wt_wide(link), *wp = wt_wide(path);
    BOOL linked = CreateHardLinkW(wl, wp, NULL);
    free(wl);
    free(wp);
    if (linked) { /* (a file system without hard links skips this part) */
      memset(&err, 0, sizeof err);
      st = calstore_export(s, link, &err);
      WT_CHECK_GOTO(st == CALSTORE_INVALID_ARGUMENT && wt_has(err.message, "hard link"), out_label,
                    "export onto a hard link gave %s: %s", calstore_status_name(st), err.message);
    }
  }
  {
    /* the store opened by its \\?\ name: commits, and knows its plain
     * spellings (itself and its lock file) */
    calstore *p = open_store(pre, 0, &st, &err);
    WT_CHECK_GOTO(p, out_label, "open %s: %s", pre, err.message);
    calstore_key k2 = exact("naive", "1", "cpu2");
    st = put(p, &k2, "prefixed", &err);
    calstore_status self = st == CALSTORE_OK ? calstore_export(p, path, &err) : st;
    calstore_status onto_lock = calstore_export(p, lock, NULL);
    calstore_close(&p);
    WT_CHECK_GOTO(st == CALSTORE_OK, out_label, "commit through %s: %s", pre, err.message);
    WT_CHECK_GOTO(self == CALSTORE_OK, out_label, "export onto the plain name: %s", err.message);
    WT_CHECK_GOTO(onto_lock == CALSTORE_INVALID_ARGUMENT, out_label,
                  "export onto the plain lock name gave %s", calstore_status_name(onto_lock));
  }
  memset(&err, 0, sizeof err);
  st = calstore_export(s, other, &err);
  WT_CHECK_GOTO(st == CALSTORE_OK, out_label, "export to %s: %s", other, err.message);
  free(text);
  text = wt_read(other, NULL);
  WT_CHECK_GOTO(wt_has(text, "committed"), out_label, "exported:\n%s", text);
  free(text);
  text = wt_read(path, NULL); /* both handles' commits are in the file */
  WT_CHECK_GOTO(wt_has(text, "committed") && wt_has(text, "prefixed"), out_label, "the store:\n%s",
                text);
out_label:
  calstore_close(&s);
  free(text);
  free(other);
  free(link);
  free(prelock);
  free(pre);
  free(lock);
  free(path);
  free(deep);
  fixture_done(&fx);
}

/* Non-ASCII directory and file names: the UTF-8 path reaches the disk as
 * the same characters (wide calls), not as ANSI code page bytes. */
static void a_non_ascii_store_path_is_used_as_utf8(void) {
  /* "é", "日本" and "ü" in UTF-8 */
  char *dir = wt_mkdtemp("-\xc3\xa9\xe6\x97\xa5\xe6\x9c\xac");
  char *sub = wt_path(dir, "sub-\xc3\xbc"), *path = wt_path(sub, "profiles-\xc3\xa9.txt");
  calstore *s = open_store(path, 0, NULL, NULL), *again = NULL;
  calstore_error err = {0};
  wchar_t *wdir = NULL, *want = NULL;
  WT_CHECK_GOTO(s, out, "open %s failed", path);
  calstore_key k = exact("naive", "1", "cpu");
  WT_CHECK_GOTO(put(s, &k, "unicode", &err) == CALSTORE_OK, out, "commit: %s", err.message);
  WT_CHECK_GOTO(!strcmp(calstore_path(s), path), out, "calstore_path is %s", calstore_path(s));
  /* the file exists under its wide name */
  wdir = wt_wide(path);
  want = wt_wide(path);
  WT_CHECK_GOTO(wdir && GetFileAttributesW(wdir) != INVALID_FILE_ATTRIBUTES, out,
                "no file with the wide name of %s", path);
  {
    wchar_t pat[1024];
    _snwprintf(pat, 1024, L"%ls", want);
    wchar_t *slash = wcsrchr(pat, L'\\');
    WIN32_FIND_DATAW fd;
    HANDLE h = FindFirstFileW(pat, &fd);
    WT_CHECK_GOTO(h != INVALID_HANDLE_VALUE, out, "FindFirstFileW found nothing");
    FindClose(h);
    WT_CHECK_GOTO(!wcscmp(fd.cFileName, slash + 1), out, "the file on disk has another name");
    WT_CHECK_GOTO(!wcscmp(slash + 1, L"profiles-\u00e9.txt"), out, "the name is not UTF-16 é");
  }
  again = open_store(path, 0, NULL, NULL);
  WT_CHECK_GOTO(again && calstore_count(again) == 1, out, "reopen: %zu profiles",
                again ? calstore_count(again) : 0);
out:
  calstore_close(&s);
  calstore_close(&again);
  free(wdir);
  free(want);
  wt_rmtree(dir);
  free(path);
  free(sub);
  free(dir);
}

/* The default path is %LOCALAPPDATA%\calhost\profiles.txt; without the
 * variable there is no default, and calstore_open says so. */
static void default_path_is_below_localappdata_and_refused_without_it(void) {
  char buf[1024], saved[1024] = "";
  DWORD had = GetEnvironmentVariableA("LOCALAPPDATA", saved, sizeof saved);
  char *dir = wt_mkdtemp("");
  char want[1200];
  snprintf(want, sizeof want, "%s\\calhost\\profiles.txt", dir);
  _putenv_s("LOCALAPPDATA", dir);
  calstore_status st = calstore_default_path(buf, sizeof buf);
  calstore *s = NULL;
  calstore_error err = {0};
  calstore_options o;
  calstore_options_init(&o);
  WT_CHECK_GOTO(st == CALSTORE_OK && !strcmp(buf, want), out, "default path %s (%s)", buf,
                calstore_status_name(st));
  /* a commit through the default path creates %LOCALAPPDATA%\calhost */
  st = calstore_open(&o, &s, &err);
  WT_CHECK_GOTO(st == CALSTORE_OK && s, out, "open default: %s", err.message);
  calstore_key k = exact("naive", "1", "cpu");
  WT_CHECK_GOTO(put(s, &k, "default", &err) == CALSTORE_OK, out, "commit: %s", err.message);
  WT_CHECK_GOTO(wt_exists(want), out, "%s was not created", want);
  calstore_close(&s);
  _putenv_s("LOCALAPPDATA", ""); /* the CRT removes a variable set to "" */
  WT_CHECK_GOTO(getenv("LOCALAPPDATA") == NULL, out, "LOCALAPPDATA still set");
  st = calstore_default_path(buf, sizeof buf);
  WT_CHECK_GOTO(st == CALSTORE_INVALID_ARGUMENT, out, "without LOCALAPPDATA: %s",
                calstore_status_name(st));
  memset(&err, 0, sizeof err);
  st = calstore_open(&o, &s, &err);
  WT_CHECK_GOTO(st == CALSTORE_INVALID_ARGUMENT && wt_has(err.message, "LOCALAPPDATA"), out,
                "open without LOCALAPPDATA: %s: %s", calstore_status_name(st), err.message);
out:
  calstore_close(&s);
  _putenv_s("LOCALAPPDATA", had ? saved : "");
  wt_rmtree(dir);
  free(dir);
}

/* A store file with the read-only attribute is refused by a commit, named,
 * and kept unchanged. (Windows has no mode bits: the replacing file is
 * created with the directory's inherited ACL and normal attributes; the
 * read-only attribute is what write protection means here.) */
static void a_read_only_store_file_is_refused_and_kept(void) {
  fixture fx = fixture_new();
  char *path = fx.path, *text = NULL;
  wchar_t *w = wt_wide(path);
  calstore *s = NULL;
  calstore_error err = {0};
  WT_CHECK_GOTO(wt_write(path, seed) == 0, out, "cannot write %s", path);
  WT_CHECK_GOTO(SetFileAttributesW(w, FILE_ATTRIBUTE_READONLY), out, "cannot set read-only");
  s = open_store(path, 0, NULL, NULL);
  WT_CHECK_GOTO(s && calstore_count(s) == 1, out, "a read-only store cannot be read");
  calstore_key k = exact("naive", "9", "cpu");
  calstore_status st = put(s, &k, "lost?", &err);
  WT_CHECK_GOTO(st == CALSTORE_WRITE_FAILED && wt_has(err.message, "read-only") &&
                    wt_has(err.message, path),
                out, "commit to a read-only file: %s: %s", calstore_status_name(st), err.message);
  text = wt_read(path, NULL);
  WT_CHECK_GOTO(text && !strcmp(text, seed), out, "the file changed:\n%s", text);
  WT_CHECK_GOTO(calstore_count(s) == 1, out, "the snapshot took the refused change");
out:
  if (w)
    SetFileAttributesW(w, FILE_ATTRIBUTE_NORMAL);
  free(w);
  free(text);
  calstore_close(&s);
  fixture_done(&fx);
}

/* Another process's lock (LockFileEx on <path>.lock) makes a commit wait
 * and then fail naming the lock file; once released the commit goes
 * through. */
static void a_held_lock_makes_a_commit_fail_naming_the_lock_file(void) {
  fixture fx = fixture_new();
  char *dir = fx.dir, *path = fx.path;
  char *lock = wt_path(dir, "profiles.txt.lock"), *text = NULL;
  wchar_t *w = wt_wide(lock);
  HANDLE h = CreateFileW(w, GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
                         OPEN_ALWAYS, 0, NULL);
  OVERLAPPED ov;
  memset(&ov, 0, sizeof ov);
  calstore *s = open_store(path, 200, NULL, NULL);
  calstore_error err = {0};
  calstore_key k = exact("naive", "1", "cpu");
  WT_CHECK_GOTO(h != INVALID_HANDLE_VALUE && LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &ov),
                out, "cannot take the lock myself");
  DWORD t0 = GetTickCount();
  calstore_status st = put(s, &k, "blocked", &err);
  DWORD waited = GetTickCount() - t0;
  WT_CHECK_GOTO(st == CALSTORE_LOCK_FAILED && wt_has(err.message, lock), out,
                "commit under another's lock: %s: %s", calstore_status_name(st), err.message);
  WT_CHECK_GOTO(waited >= 150, out, "gave up after %lu ms (timeout 200)", (unsigned long)waited);
  WT_CHECK_GOTO(!wt_exists(path), out, "the store was written without the lock");
  UnlockFileEx(h, 0, 1, 0, &ov);
  WT_CHECK_GOTO(put(s, &k, "after", &err) == CALSTORE_OK, out, "after unlock: %s", err.message);
  text = wt_read(path, NULL);
  WT_CHECK_GOTO(wt_has(text, "after"), out, "store:\n%s", text);
out:
  if (h != INVALID_HANDLE_VALUE)
    CloseHandle(h);
  free(w);
  free(text);
  calstore_close(&s);
  free(lock);
  fixture_done(&fx);
}

/* A store file another program holds open without FILE_SHARE_DELETE (an
 * editor, a virus scanner) cannot be replaced on Windows: the commit fails
 * naming the file and the reason, the file keeps its text, no temporary is
 * left; when it is closed the next commit succeeds. A file held without
 * FILE_SHARE_READ cannot be loaded: UNREADABLE naming it. */
static void a_store_file_held_open_by_another_program_is_kept(void) {
  fixture fx = fixture_new();
  char *dir = fx.dir, *path = fx.path;
  char *tmp = wt_path(dir, "profiles.txt.tmp"), *text = NULL;
  wchar_t *w = wt_wide(path);
  calstore *s = NULL, *t = NULL;
  calstore_error err = {0};
  HANDLE h = INVALID_HANDLE_VALUE;
  calstore_key k = exact("naive", "5", "cpu");
  WT_CHECK_GOTO(wt_write(path, seed) == 0, out, "cannot write %s", path);
  s = open_store(path, 0, NULL, NULL);
  h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING, 0, NULL);
  WT_CHECK_GOTO(h != INVALID_HANDLE_VALUE, out, "cannot hold the file open");
  calstore_status st = put(s, &k, "held", &err);
  WT_CHECK_GOTO(st == CALSTORE_WRITE_FAILED && wt_has(err.message, path), out,
                "commit over a held file: %s: %s", calstore_status_name(st), err.message);
  text = wt_read(path, NULL);
  WT_CHECK_GOTO(text && !strcmp(text, seed), out, "the held file changed:\n%s", text);
  WT_CHECK_GOTO(!wt_exists(tmp), out, "%s was left behind", tmp);
  CloseHandle(h);
  /* held with no sharing at all: a load cannot read it */
  h = CreateFileW(w, GENERIC_READ, 0, NULL, OPEN_EXISTING, 0, NULL);
  WT_CHECK_GOTO(h != INVALID_HANDLE_VALUE, out, "cannot hold the file exclusively");
  memset(&err, 0, sizeof err);
  calstore_status lst;
  t = open_store(path, 0, &lst, &err);
  WT_CHECK_GOTO(lst == CALSTORE_UNREADABLE && wt_has(err.message, path), out,
                "load of an exclusively held file: %s: %s", calstore_status_name(lst), err.message);
  CloseHandle(h);
  h = INVALID_HANDLE_VALUE;
  WT_CHECK_GOTO(put(s, &k, "released", &err) == CALSTORE_OK, out, "after close: %s", err.message);
out:
  if (h != INVALID_HANDLE_VALUE)
    CloseHandle(h);
  free(w);
  free(text);
  calstore_close(&s);
  calstore_close(&t);
  free(tmp);
  fixture_done(&fx);
}

/* What Windows does instead of POSIX's rules, pinned: (1) no directory
 * fsync: the rename is journaled by NTFS (MOVEFILE_WRITE_THROUGH waits for
 * it), so a commit needs no handle on the directory and succeeds while
 * another program holds the directory open; (2) no mode bits: a replaced store does not keep the
 * old file's attributes (here: hidden), it gets the directory's inherited ACL and normal
 * attributes; (3) no POSIX symlink rules: a path that is not a reparse point is used as given (no
 * resolution, calstore_path is the path as passed, forward slashes included). */
static void windows_replaces_without_directory_sync_mode_bits_or_link_walk(void) {
  fixture fx = fixture_new();
  char *dir = fx.dir, *path = fx.path;
  wchar_t *w = wt_wide(path), *wd = wt_wide(dir);
  HANDLE hd = CreateFileW(wd, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                          NULL, OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
  calstore *s = NULL;
  calstore_error err = {0};
  char fwd[1200];
  WT_CHECK_GOTO(wt_write(path, seed) == 0, out, "cannot write %s", path);
  WT_CHECK_GOTO(SetFileAttributesW(w, FILE_ATTRIBUTE_HIDDEN), out, "cannot set hidden");
  s = open_store(path, 0, NULL, NULL);
  calstore_key k = exact("naive", "6", "cpu");
  WT_CHECK_GOTO(put(s, &k, "replaced", &err) == CALSTORE_OK, out, "commit: %s", err.message);
  DWORD attr = GetFileAttributesW(w);
  WT_CHECK_GOTO(attr != INVALID_FILE_ATTRIBUTES && !(attr & FILE_ATTRIBUTE_HIDDEN), out,
                "the replaced file kept the old attributes (0x%lx)", (unsigned long)attr);
  calstore_close(&s);
  snprintf(fwd, sizeof fwd, "%s/profiles.txt", dir);
  s = open_store(fwd, 0, NULL, NULL);
  WT_CHECK_GOTO(s && !strcmp(calstore_path(s), fwd) && calstore_count(s) == 2, out,
                "path %s, %zu profiles", s ? calstore_path(s) : "-", s ? calstore_count(s) : 0);
out:
  if (hd != INVALID_HANDLE_VALUE)
    CloseHandle(hd);
  calstore_close(&s);
  if (w)
    SetFileAttributesW(w, FILE_ATTRIBUTE_NORMAL);
  free(w);
  free(wd);
  fixture_done(&fx);
}

/* ---- two processes -------------------------------------------------------- */

enum { PER_CHILD = 25 };

/* The child: commits n profiles, one commit each, backend "child-TAG". */
static int commit_child(const char *path, const char *tag, int n) {
  calstore *s = open_store(path, UINT32_MAX, NULL, NULL);
  if (!s)
    return 2;
  char backend[64];
  snprintf(backend, sizeof backend, "child-%s", tag);
  for (int i = 0; i < n; i++) {
    char impl[16];
    snprintf(impl, sizeof impl, "%d", i + 1);
    calstore_key k = exact(backend, impl, "cpu");
    calstore_error err = {0};
    if (put(s, &k, backend, &err) != CALSTORE_OK) {
      fprintf(stderr, "child %s: commit %d: %s\n", tag, i, err.message);
      calstore_close(&s);
      return 3;
    }
  }
  calstore_close(&s);
  return 0;
}

static HANDLE spawn_child_n(const char *path, const char *tag, int n) {
  wchar_t exe[MAX_PATH + 1], cmd[4096];
  if (!GetModuleFileNameW(NULL, exe, MAX_PATH))
    return NULL;
  wchar_t *wp = wt_wide(path), *wt = wt_wide(tag);
  _snwprintf(cmd, 4096, L"\"%ls\" --commit-child \"%ls\" %ls %d", exe, wp, wt, n);
  free(wp);
  free(wt);
  STARTUPINFOW si;
  PROCESS_INFORMATION pi;
  memset(&si, 0, sizeof si);
  si.cb = sizeof si;
  if (!CreateProcessW(exe, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi))
    return NULL;
  CloseHandle(pi.hThread);
  return pi.hProcess;
}

/* Two processes commit PER_CHILD profiles each into one store at the same
 * time while a third (this one) keeps reading it: every read sees a whole
 * file, and every one of the 2 x PER_CHILD is there afterwards. */
static void two_processes_committing_at_once_lose_nothing(void) {
  fixture fx = fixture_new();
  char *path = fx.path;
  HANDLE kids[2] = {spawn_child_n(path, "a", PER_CHILD), spawn_child_n(path, "b", PER_CHILD)};
  calstore *s = NULL;
  WT_CHECK_GOTO(kids[0] && kids[1], out, "CreateProcessW failed (%lu)",
                (unsigned long)GetLastError());
  {
    /* meanwhile this process reads the store again and again: every read
     * sees a whole file (the replace is atomic), never a partial one */
    ULONGLONG deadline = GetTickCount64() + 120000;
    int reads = 0, whole = 0;
    while (WaitForMultipleObjects(2, kids, TRUE, 0) == WAIT_TIMEOUT) {
      WT_CHECK_GOTO(GetTickCount64() < deadline, out, "the children did not finish in 120 s");
      size_t count = 0;
      calstore_status st = calstore_read_file(path, NULL, NULL, NULL, NULL, &count);
      reads++;
      WT_CHECK_GOTO(st == CALSTORE_OK || st == CALSTORE_NOT_FOUND, out,
                    "read %d during the commits: %s", reads, calstore_status_name(st));
      whole += st == CALSTORE_OK;
      /* a reader that leaves the file a moment between reads: one that
       * re-opens it without pause can keep a writer's MoveFileExW out for
       * good where Windows has no POSIX rename (host/store/README.md) */
      Sleep(2);
    }
    printf("    %d reads during the commits, %d of a store file, none partial\n", reads, whole);
  }
  for (int i = 0; i < 2; i++) {
    DWORD code = 99;
    GetExitCodeProcess(kids[i], &code);
    WT_CHECK_GOTO(code == 0, out, "child %d exited %lu", i, (unsigned long)code);
  }
  s = open_store(path, 0, NULL, NULL);
  WT_CHECK_GOTO(s && calstore_count(s) == 2 * PER_CHILD, out, "%zu profiles, want %d",
                s ? calstore_count(s) : 0, 2 * PER_CHILD);
  for (int c = 0; c < 2; c++)
    for (int i = 0; i < PER_CHILD; i++) {
      char impl[16];
      snprintf(impl, sizeof impl, "%d", i + 1);
      calstore_key k = exact(c ? "child-b" : "child-a", impl, "cpu");
      char *pol = policy_of(s, &k);
      int ok = pol != NULL;
      free(pol);
      WT_CHECK_GOTO(ok, out, "profile %d of child %c is missing", i + 1, c ? 'b' : 'a');
    }
out:
  for (int i = 0; i < 2; i++)
    if (kids[i])
      CloseHandle(kids[i]);
  calstore_close(&s);
  fixture_done(&fx);
}

/* The program again as "--commit-child path tag 1" with CALSTORE_FAULT
 * set to rule in its environment only; its exit code, or -1. */
static int run_child_with_fault(const char *path, const char *tag, const char *rule) {
  SetEnvironmentVariableA("CALSTORE_FAULT", rule);
  HANDLE kid = spawn_child_n(path, tag, 1);
  SetEnvironmentVariableA("CALSTORE_FAULT", NULL);
  if (!kid)
    return -1;
  DWORD code = (DWORD)-1;
  if (WaitForSingleObject(kid, 60000) == WAIT_OBJECT_0)
    GetExitCodeProcess(kid, &code);
  CloseHandle(kid);
  return (int)code;
}

/* The write path under injected faults (platform_win32.c's hooks, never run
 * before): a failing step (EIO at open_tmp, write, fsync, rename; EAGAIN at
 * the lock) is write_failed / lock_failed naming the step, and leaves the
 * file, the snapshot and the directory as they were; a writer killed
 * (TerminateProcess) right after open_tmp, write or fsync leaves the old
 * file and at most its <path>.tmp, which the next commit replaces; one
 * killed right after the rename leaves the new file. */
static void injected_faults_and_killed_writers_leave_the_store_whole(void) {
  fixture fx = fixture_new();
  char *path = fx.path, *tmp = wt_path(fx.dir, "profiles.txt.tmp"), *text = NULL;
  calstore *s = NULL;
  calstore_error err = {0};
  static const char *const steps[] = {"open_tmp", "write", "fsync", "rename"};
  WT_CHECK_GOTO(wt_write(path, seed) == 0, out, "cannot write %s", path);
  s = open_store(path, 0, NULL, NULL);
  for (size_t i = 0; i < 4; i++) {
    char rule[64];
    snprintf(rule, sizeof rule, "%s:EIO", steps[i]);
    _putenv_s("CALSTORE_FAULT", rule);
    calstore_key k = exact("naive", "7", "cpu");
    calstore_status st = put(s, &k, "faulted", &err);
    _putenv_s("CALSTORE_FAULT", "");
    free(text);
    text = wt_read(path, NULL);
    WT_CHECK_GOTO(st == CALSTORE_WRITE_FAILED && wt_has(err.message, path), out, "%s: %s: %s", rule,
                  calstore_status_name(st), err.message);
    WT_CHECK_GOTO(text && !strcmp(text, seed) && calstore_count(s) == 1 && !wt_exists(tmp), out,
                  "%s changed the store (%zu profiles, temp %s)", rule, calstore_count(s),
                  wt_exists(tmp) ? "left" : "gone");
  }
  {
    _putenv_s("CALSTORE_FAULT", "lock:EAGAIN");
    calstore_key k = exact("naive", "7", "cpu");
    calstore_status st = put(s, &k, "faulted", &err);
    _putenv_s("CALSTORE_FAULT", "");
    WT_CHECK_GOTO(st == CALSTORE_LOCK_FAILED && wt_has(err.message, ".lock"), out,
                  "lock:EAGAIN: %s: %s", calstore_status_name(st), err.message);
  }
  for (size_t i = 0; i < 4; i++) {
    char rule[64], tag[16];
    snprintf(rule, sizeof rule, "crash_after:%s", steps[i]);
    snprintf(tag, sizeof tag, "crash%zu", i);
    int code = run_child_with_fault(path, tag, rule);
    WT_CHECK_GOTO(code == 9, out, "%s: the writer exited %d, not killed (9)", rule, code);
    free(text);
    text = wt_read(path, NULL);
    int renamed = i == 3, has_new = wt_has(text, tag);
    WT_CHECK_GOTO(text && wt_has(text, "from-file") && has_new == renamed, out,
                  "after %s the store %s the killed writer's profile:\n%s", rule,
                  has_new ? "has" : "lacks", text);
    calstore_status lst;
    calstore *check = open_store(path, 0, &lst, NULL);
    size_t n = check ? calstore_count(check) : 0;
    calstore_close(&check);
    WT_CHECK_GOTO(lst == CALSTORE_OK && n == (size_t)(renamed ? 2 : 1), out,
                  "after %s: load %s, %zu profiles", rule, calstore_status_name(lst), n);
  }
  /* the next commit replaces whatever temp file the killed writers left */
  calstore_key k = exact("naive", "8", "cpu");
  WT_CHECK_GOTO(put(s, &k, "after-crashes", &err) == CALSTORE_OK, out, "commit: %s", err.message);
  WT_CHECK_GOTO(!wt_exists(tmp) && calstore_count(s) == 3, out, "%zu profiles, temp %s",
                calstore_count(s), wt_exists(tmp) ? "left" : "gone");
out:
  _putenv_s("CALSTORE_FAULT", "");
  free(text);
  calstore_close(&s);
  free(tmp);
  fixture_done(&fx);
}

static const wt_case cases[] = {
    {"load_reads_the_profiles_of_a_store_file", load_reads_the_profiles_of_a_store_file},
    {"lookup_walks_the_precedence_levels_in_order", lookup_walks_the_precedence_levels_in_order},
    {"every_format_vector_gives_its_expected_result",
     every_format_vector_gives_its_expected_result},
    {"commit_replaces_the_file_and_leaves_no_temporary",
     commit_replaces_the_file_and_leaves_no_temporary},
    {"batch_commits_all_its_changes_at_once", batch_commits_all_its_changes_at_once},
    {"commits_of_two_handles_merge_and_reload_sees_them",
     commits_of_two_handles_merge_and_reload_sees_them},
    {"a_stale_tmp_is_ignored_and_replaced_by_the_next_commit",
     a_stale_tmp_is_ignored_and_replaced_by_the_next_commit},
    {"export_uses_a_unique_temporary_and_removes_nothing_else",
     export_uses_a_unique_temporary_and_removes_nothing_else},
    {"long_and_prefixed_paths_export_by_identity", long_and_prefixed_paths_export_by_identity},
    {"a_non_ascii_store_path_is_used_as_utf8", a_non_ascii_store_path_is_used_as_utf8},
    {"default_path_is_below_localappdata_and_refused_without_it",
     default_path_is_below_localappdata_and_refused_without_it},
    {"a_read_only_store_file_is_refused_and_kept", a_read_only_store_file_is_refused_and_kept},
    {"a_held_lock_makes_a_commit_fail_naming_the_lock_file",
     a_held_lock_makes_a_commit_fail_naming_the_lock_file},
    {"a_store_file_held_open_by_another_program_is_kept",
     a_store_file_held_open_by_another_program_is_kept},
    {"windows_replaces_without_directory_sync_mode_bits_or_link_walk",
     windows_replaces_without_directory_sync_mode_bits_or_link_walk},
    {"two_processes_committing_at_once_lose_nothing",
     two_processes_committing_at_once_lose_nothing},
    {"injected_faults_and_killed_writers_leave_the_store_whole",
     injected_faults_and_killed_writers_leave_the_store_whole},
};

int main(int argc, char **argv) {
  if (argc == 5 && !strcmp(argv[1], "--commit-child"))
    return commit_child(argv[2], argv[3], atoi(argv[4]));
  return wt_main(cases, sizeof cases / sizeof cases[0], argc, argv);
}
