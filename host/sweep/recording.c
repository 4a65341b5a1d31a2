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

int sweep_recording_path(const char *path, int single, const char *backend, const char *workload,
                         long device, uint32_t threads, char *buf, size_t cap, char *name,
                         size_t name_cap) {
  char b[96], w[96], d[32] = "", nm[256];
  word_copy(b, sizeof b, backend ? backend : "plugin");
  word_copy(w, sizeof w, workload ? workload : "workload");
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

int sweep_recording_finish(sweep_recording *r) {
  int rc = r->failed ? -1 : 0;
  if (r->f) {
    if (fclose(r->f) != 0)
      fail(r, "write error"), rc = -1;
    r->f = NULL;
    char why[4400];
    if (rc == 0 && base_output_replace(r->part, r->path, why, sizeof why) != 0) {
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
