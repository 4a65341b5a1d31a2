/*
 * recording.c: a sweep's evaluated candidates as a space file (see
 * recording.h).
 */
#include "recording.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/files.h"
#include "base/str.h"

static void fail(sweep_recording *r, const char *what) {
  if (r->failed)
    return;
  r->failed = 1;
  snprintf(r->error, sizeof r->error, "%.4100s: %.500s", r->started ? r->part : r->path, what);
}

/* Copies text into a one-word form: blanks and control bytes become '_'. */
static void word_copy(char *dst, size_t cap, const char *src) {
  size_t i = 0;
  for (; src && src[i] && i + 1 < cap; i++) {
    unsigned char c = (unsigned char)src[i];
    dst[i] = c <= ' ' || c == 0x7f ? '_' : (char)c;
  }
  dst[i] = '\0';
}

/* The run this process's recordings belong to (sweep_recording_new_run;
 * inherited by the sweeps' children), "" before the first. */
static char run_id[64];

void sweep_recording_new_run(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  snprintf(run_id, sizeof run_id, "%ld-%lld.%09ld", (long)getpid(), (long long)ts.tv_sec,
           (long)ts.tv_nsec);
}

/* The longest backend or workload kept whole in a file name. */
#define REC_WORD_MAX 95
/* Where a hashed name cuts the workload: the cut, '~' and 16 hex digits
 * are REC_WORD_MAX bytes. */
#define REC_WORD_CUT (REC_WORD_MAX - 17)

int sweep_recording_path(const char *path, int single, const char *backend, const char *workload,
                         long device, uint32_t threads, char *buf, size_t cap, char *name,
                         size_t name_cap) {
  const char *bs = backend ? backend : "plugin", *ws = workload ? workload : "workload";
  char b[REC_WORD_MAX + 1], w[REC_WORD_MAX + 1], d[32] = "", nm[256];
  /* readable when nothing is lost: both are names ([A-Za-z0-9_.-], so no
   * '~'), short enough, and the backend has no '-' (its first '-' ends it);
   * otherwise the workload is cut and '~' and the hash of the whole pair
   * follow: no readable name has a '~', and two pairs share a hashed name
   * only if their 64-bit hashes collide (sweep_recording_finish refuses
   * even that: another sweep's recording of the run is never replaced) */
  int readable =
      base_str_is_name(bs, REC_WORD_MAX) && base_str_is_name(ws, REC_WORD_MAX) && !strchr(bs, '-');
  word_copy(b, sizeof b, bs);
  if (readable) {
    word_copy(w, sizeof w, ws);
  } else {
    uint64_t h = base_str_fnv1a(BASE_STR_FNV_OFFSET, bs, strlen(bs) + 1);
    h = base_str_fnv1a(h, ws, strlen(ws));
    word_copy(w, REC_WORD_CUT + 1, ws);
    for (char *c = w; *c; c++)
      if (*c == '/' || *c == '\\' || *c == '~')
        *c = '_'; /* never a folder, never a second '~' */
    for (char *c = b; *c; c++)
      if (*c == '/' || *c == '\\' || *c == '~')
        *c = '_';
    snprintf(w + strlen(w), sizeof w - strlen(w), "~%016llx", (unsigned long long)h);
  }
  if (device >= 0)
    snprintf(d, sizeof d, "-d%ld", device);
  int n = snprintf(nm, sizeof nm, "%s-%s%s-t%u", b, w, d, threads);
  if (n < 0 || (size_t)n >= sizeof nm)
    return -1;
  if (name && name_cap)
    snprintf(name, name_cap, "%s", nm);
  if (single) {
    n = snprintf(buf, cap, "%s", path);
  } else {
    size_t len = strlen(path);
    if (len >= 6 && !strcmp(path + len - 6, ".space"))
      len -= 6;
    n = snprintf(buf, cap, "%.*s-%s.space", (int)len, path, nm);
  }
  return n < 0 || (size_t)n >= cap ? -1 : 0;
}

void sweep_recording_init(sweep_recording *r, const char *path, const char *name,
                          const char *const *meta, size_t meta_count) {
  memset(r, 0, sizeof *r);
  snprintf(r->path, sizeof r->path, "%s", path);
  snprintf(r->part, sizeof r->part, "%s.part", path);
  word_copy(r->name, sizeof r->name, name);
  r->meta = meta;
  r->meta_count = meta_count;
}

void sweep_recording_start(sweep_recording *r, const sweep_search_info *info) {
  char err[512];
  if (r->started || r->failed)
    return;
  r->started = 1;
  if (search_space_init(&r->space, r->name) != 0) {
    fail(r, "out of memory");
    return;
  }
  for (size_t i = 0; i < info->param_count; i++)
    if (search_space_add_param(&r->space, info->params[i].name, info->params[i].ordered,
                               info->params[i].values, info->params[i].value_count, err,
                               sizeof err) != 0) {
      fail(r, err);
      return;
    }
  for (size_t i = 0; i < r->meta_count; i++) {
    const char *line = r->meta[i], *sp = strchr(line, ' ');
    char key[64];
    if (!sp || (size_t)(sp - line) >= sizeof key)
      continue;
    memcpy(key, line, (size_t)(sp - line));
    key[sp - line] = '\0';
    search_space_add_meta(&r->space, key, sp + 1);
  }
  char v[96], when[32];
  time_t now = time(NULL);
  struct tm tm;
  search_space_add_meta(&r->space, "space", info->numbered ? "numbered" : "parameters");
  /* the space is the plugin's curated list: a sweep runs it whole at
   * measure (search_sweep_rigor_plan), and search-bench replays it so */
  search_space_add_meta(&r->space, "curated", info->curated ? "1" : "0");
  if (info->default_policy) { /* the default is measured outside the search */
    search_space_add_meta(&r->space, "default", info->default_policy);
    if (isfinite(info->default_median_us) && info->default_median_us > 0) {
      snprintf(v, sizeof v, "%.17g", info->default_median_us);
      search_space_add_meta(&r->space, "default_median", v);
    }
  }
  search_space_add_meta(&r->space, "strategy", base_strategy_name(info->strategy));
  if (info->budget_seconds > 0)
    snprintf(v, sizeof v, "%g seconds", info->budget_seconds);
  else if (info->budget_evaluations)
    snprintf(v, sizeof v, "%u evaluations", info->budget_evaluations);
  else
    snprintf(v, sizeof v, "none (the whole space)");
  search_space_add_meta(&r->space, "budget", v);
  if (info->request) {
    const sweep_rigor_params *p = &info->request->params;
    snprintf(v, sizeof v, "%u", p->repetitions);
    search_space_add_meta(&r->space, "repetitions", v);
    snprintf(v, sizeof v, "%s", p->prune ? "first samples (pruning: prune_after)" : "all samples");
    search_space_add_meta(&r->space, "median_of", v);
  }
  if (gmtime_r(&now, &tm) && strftime(when, sizeof when, "%Y-%m-%dT%H:%MZ", &tm))
    search_space_add_meta(&r->space, "recorded", when);
  search_space_add_meta(&r->space, "units", "median and spread in microseconds, times in seconds");
  if (!run_id[0])
    sweep_recording_new_run();
  search_space_add_meta(&r->space, "run", run_id); /* whose: see sweep_recording_finish */
  /* PATH.part is created exclusively, never through a planted link
   * (base_output_create) */
  char why[4400], tmp[sizeof r->part];
  int fd = base_output_create(r->path, ".part", tmp, sizeof tmp, why, sizeof why);
  r->f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!r->f) {
    if (fd >= 0) {
      close(fd);
      unlink(tmp);
      fail(r, strerror(errno));
    } else {
      r->failed = 1;
      snprintf(r->error, sizeof r->error, "%s", why);
    }
    return;
  }
  if (search_space_write_header(r->f, &r->space) != 0 || fflush(r->f) != 0)
    fail(r, "write error");
}

void sweep_recording_add(sweep_recording *r, const sweep_evaluation *ev) {
  char err[512];
  if (!r->started || r->failed || !r->f)
    return;
  search_space_entry e;
  memset(&e, 0, sizeof e);
  e.config = (uint32_t *)ev->config;
  e.rejected = ev->rejected;
  e.median = ev->rejected || !isfinite(ev->median_us) ? 0 : ev->median_us;
  e.spread = isfinite(ev->spread_us) ? ev->spread_us : 0;
  e.compile_seconds = ev->compile_seconds > 0 ? ev->compile_seconds : 0;
  e.seconds = ev->seconds > 0 ? ev->seconds : 0;
  e.policy = (char *)ev->policy;
  e.reason = ev->rejected ? (char *)(ev->reason ? ev->reason : "rejected") : NULL;
  if (!ev->rejected && !(e.median > 0)) { /* a zero median cannot be a cost */
    e.rejected = 1;
    e.reason = "no positive median";
  }
  if (search_space_add_entry(&r->space, &e, err, sizeof err) != 0) {
    fail(r, err);
    return;
  }
  if (search_space_write_entry(r->f, &r->space, &e) != 0 || fflush(r->f) != 0) {
    fail(r, "write error");
    return;
  }
  r->entries++;
}

/* Whether the space file at path is another sweep's recording of this
 * run: its header says `meta run` of this run and another space name.
 * Writes that name into other. */
static int another_sweeps(const sweep_recording *r, char *other, size_t cap) {
  FILE *f = fopen(r->path, "r");
  char line[512], space[320] = "";
  int ours = 0;
  if (!f)
    return 0;
  for (int i = 0; i < 200 && fgets(line, sizeof line, f); i++) {
    line[strcspn(line, "\r\n")] = '\0';
    if (!strncmp(line, "space ", 6))
      snprintf(space, sizeof space, "%.300s", line + 6);
    else if (!strncmp(line, "meta run ", 9))
      ours = run_id[0] && !strcmp(line + 9, run_id);
    else if (!strncmp(line, "config ", 7))
      break; /* past the header */
  }
  fclose(f);
  snprintf(other, cap, "%s", space);
  return ours && strcmp(space, r->name) != 0;
}

int sweep_recording_finish(sweep_recording *r) {
  int rc = r->failed ? -1 : 0;
  if (r->f) {
    if (fclose(r->f) != 0)
      fail(r, "write error"), rc = -1;
    r->f = NULL;
    char why[4400], other[320];
    if (rc == 0 && another_sweeps(r, other, sizeof other)) {
      r->failed = 1;
      snprintf(r->error, sizeof r->error,
               "%.4000s holds the recording of another sweep of this run (space %.200s): not "
               "replaced (this sweep's recording is kept in %.300s)",
               r->path, other, r->part);
      rc = -1;
    } else if (rc == 0 && base_output_replace(r->part, r->path, why, sizeof why) != 0) {
      /* the candidates stay in PATH.part: say so */
      r->failed = 1;
      snprintf(r->error, sizeof r->error, "%.4300s (the recording is kept in %.300s)", why,
               r->part);
      rc = -1;
    }
  }
  search_space_free(&r->space);
  return rc;
}
