/*
 * calibrate.c: the orchestration of `calhost calibrate` (calibrate.h):
 * open the store, select workloads (hashing their models once), targets and
 * plugins, run each plugin's sweeps in one isolated child (child.c),
 * receive its records, commit per workload (commit.c), stop on signals and
 * decide the exit status. Output lives in report.c. The same driver runs
 * `calhost verify` (verify.c) in its verify mode.
 */
#include "calibrate.h"

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/array.h"
#include "base/files.h"
#include "base/json.h"
#include "base/str.h"
#include "base/text.h"
#include "config/digest.h"
#include "isolate/isolate.h"
#include "run.h"
#include "runtime/binding.h"
#include "verify.h"

/* ---- signals --------------------------------------------------------- */

static volatile sig_atomic_t g_cancel;
static volatile sig_atomic_t g_signal;

static void on_signal(int sig) {
  g_cancel = 1;
  g_signal = sig;
}

/* ---- the parent: records ---------------------------------------------- */

/* The store is shared by the copies of the run that calibrate devices at
 * once: every use of it holds the lock. */
static void store_begin(cal_run *r) {
  if (r->store_lock)
    pthread_mutex_lock(r->store_lock);
}

static void store_end(cal_run *r) {
  if (r->store_lock)
    pthread_mutex_unlock(r->store_lock);
}

/* A child forked while another thread commits would inherit a store in
 * the middle of a change (the child reads it to skip calibrated keys):
 * while devices are calibrated at once, every fork waits for the lock. */
static pthread_mutex_t *volatile g_fork_lock;
static pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void) {
  if (g_fork_lock)
    pthread_mutex_lock(g_fork_lock);
}

static void fork_done(void) {
  if (g_fork_lock)
    pthread_mutex_unlock(g_fork_lock);
}

static void install_atfork(void) {
  pthread_atfork(fork_prepare, fork_done, fork_done);
}

static void commit(cal_run *r) {
  store_begin(r);
  cal_commit_pending(r);
  store_end(r);
}

/* One more sweep finished: the run's count, and in a wave of devices the
 * count over all its threads. */
static void count_sweep(cal_run *r) {
  r->sweeps_done++;
  if (r->wave_done) { /* a wave's thread: count it for the whole run */
    pthread_mutex_lock(r->store_lock);
    r->wave_shown = ++*r->wave_done;
    pthread_mutex_unlock(r->store_lock);
  }
}

/* The progress line of a finished sweep (verify's, in its measuring pass). */
static void announce(cal_run *r, const cal_result *x) {
  if (r->o->verify && !r->recalibrating)
    cal_verify_progress(r, x);
  else
    cal_progress_line(r, x);
}

static void on_record(void *user, const isolate_proto_msg *m) {
  cal_run *r = user;
  isolate_proto_cursor c;
  isolate_proto_cursor_init(&c, m);
  if (r->records_refused && m->type != CALHOST_REC_HELLO)
    return; /* a stream of another protocol version: nothing of it is read */
  switch (m->type) {
  case CALHOST_REC_HELLO: { /* the first record: the stream's protocol version */
    const char *backend;
    char why[200];
    r->records_refused = sweep_record_get_hello(&c, &backend, why, sizeof why) != 0;
    if (r->records_refused)
      cal_add_failure(r, r->cur->backend, NULL, 0, NULL, why, NULL);
    break;
  }
  case CALHOST_REC_CANDIDATE: {
    sweep_record_item it;
    uint32_t index, ordinal, total;
    const char *policy;
    if (sweep_record_get_candidate(&c, &it, &index, &ordinal, &total, &policy) != 0)
      break;
    r->cur_in_workload = 1;
    r->cur_workload = it.workload;
    r->cur_threads = it.threads;
    r->cur_ordinal = ordinal;
    r->cur_total = total;
    free(r->cur_candidate);
    r->cur_candidate = base_str_dup(policy);
    r->cur_started = sweep_now();
    cal_progress(r);
    break;
  }
  case CALHOST_REC_CANDIDATE_END: /* a crash from here on is not the candidate's */
    free(r->cur_candidate);
    r->cur_candidate = NULL;
    break;
  case CALHOST_REC_RECORDING: { /* this sweep's --record outcome, before its result */
    const char *error;
    free(r->record_error);
    r->record_error = sweep_record_get_recording(&c, &error) == 0 ? base_str_dup(error) : NULL;
    r->record_reported = 1;
    break;
  }
  case CALHOST_REC_BUDGET: {
    double deadline;
    if (sweep_record_get_budget(&c, &deadline) == 0 && r->plugin_deadline == 0 && deadline > 0)
      r->plugin_deadline = deadline;
    break;
  }
  case CALHOST_REC_RESULT:
  case CALHOST_REC_SKIPPED:
  case CALHOST_REC_FAILED: {
    sweep_record_item it;
    if (sweep_record_get_item(&c, &it) != 0 || it.workload >= r->cfg->workload_count)
      break;
    size_t w = it.workload;
    uint32_t t = it.threads;
    cal_result *x = cal_add_result(r);
    if (!x)
      break;
    x->workload = w;
    x->threads = t;
    r->cur_in_workload = 1;
    r->cur_workload = w;
    r->cur_threads = t;
    if (m->type == CALHOST_REC_RESULT) {
      int bad = sweep_record_get_result_body(&c, &x->key, &x->sweep) != 0;
      if (!bad && x->sweep.warning) /* about the plugin: once per plugin and text */
        cal_warn_once(r, "%s: %s", x->backend ? x->backend : "?", x->sweep.warning);
      if (bad) {
        x->kind = CAL_FAILED;
        x->message = base_str_dup("malformed result record");
      } else if (!x->sweep.ok) {
        x->kind = CAL_FAILED;
        x->message = base_str_dup(x->sweep.error);
      } else if (!x->sweep.winner_policy ||
                 strlen(x->sweep.winner_policy) > CALHOST_POLICY_MAX_LENGTH) {
        x->kind = CAL_NOT_STORED;
        x->message = base_str_dup("oversized or missing policy (not stored)");
      } else {
        char tw[48];
        if (x->on_device)
          snprintf(tw, sizeof tw, "device %u", x->device_index);
        else
          snprintf(tw, sizeof tw, "t=%u", t);
        x->kind = r->o->verify && !r->recalibrating ? CAL_MEASURED : CAL_PENDING;
        if (x->sweep.budget_exhausted) {
          cal_warn(r, "%s %s %s: budget exhausted after %u candidates", x->backend,
                   cal_workload_name(r, w), tw, x->sweep.budget_after);
        }
        if (x->sweep.figures.noisy)
          cal_warn(r, "%s %s %s: noisy result (cv %.3g)", x->backend, cal_workload_name(r, w), tw,
                   x->sweep.figures.cv);
      }
      if (r->o->record_path) {
        char path[4096] = "";
        struct stat st;
        int named = cal_record_path(r, x->backend, w, x->on_device ? (long)x->device_index : -1, t,
                                    path, sizeof path, NULL, 0) == 0;
        if (r->record_reported && r->record_error && r->record_error[0]) {
          /* the recording failed (its final rename, a write): an error */
          x->record_failed = 1;
          cal_warn(r, "%s %s t=%u: --record: %s", x->backend, cal_workload_name(r, w), t,
                   r->record_error);
        } else if (named && r->record_reported && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
          x->recorded = base_str_dup(path);
        } else {
          x->record_failed = 1;
          cal_warn(r, "%s %s t=%u: --record: %s was not written", x->backend,
                   cal_workload_name(r, w), t, path);
        }
      }
      r->record_reported = 0;
      free(r->record_error);
      r->record_error = NULL;
    } else if (m->type == CALHOST_REC_SKIPPED) {
      const char *reason = NULL;
      x->kind = CAL_SKIPPED;
      sweep_record_get_skipped_body(&c, &reason, &x->key);
      x->message = base_str_dup(reason);
    } else {
      const char *message = NULL;
      x->kind = CAL_FAILED;
      sweep_record_get_failed_body(&c, &message);
      x->message = base_str_dup(message);
    }
    /* verify's recalibration counts and shows the keys it recalibrates: a
     * target that builds one of them again (a capped thread count) is a
     * skip of neither */
    int quiet_skip = r->recalibrating && x->kind == CAL_SKIPPED;
    if (!quiet_skip)
      count_sweep(r);
    free(r->cur_candidate);
    r->cur_candidate = NULL;
    if (!quiet_skip)
      announce(r, x);
    r->cur_in_workload = 0; /* the sweep is over: a crash from here on is not in it */
    break;
  }
  case CALHOST_REC_WORKLOAD_DONE:
    commit(r);
    r->cur_in_workload = 0;
    break;
  case CALHOST_REC_PLUGIN_FAILED: {
    const char *msg = NULL;
    sweep_record_get_plugin_failed(&c, &msg);
    cal_add_failure(r, r->cur->backend, NULL, 0, NULL, msg ? msg : "plugin failed", NULL);
    break;
  }
  default:
    break;
  }
}

/* ---- one plugin ------------------------------------------------------- */

/* Fails the sweep in progress (r->cur_workload, r->cur_threads) with
 * message, as a finished sweep: the next child goes on with the others.
 * Takes over message; returns 0, -1 when out of memory. */
static int fail_sweep_in_progress(cal_run *r, char *message) {
  cal_result *x = message ? cal_add_result(r) : NULL;
  if (!x) {
    free(message);
    return -1;
  }
  x->workload = r->cur_workload;
  x->threads = r->cur_threads;
  x->kind = CAL_FAILED;
  x->message = message;
  count_sweep(r);
  announce(r, x);
  return 0;
}

/* After a child of p died abnormally (oc) inside a sweep: when a candidate
 * was in the plugin's hands (r->cur_candidate), records its policy as a
 * crash of that sweep, so that the next child runs the sweep again without
 * it (a hung one: no later sweep runs it either, and the time it hung is
 * given back to the plugin's budget), or, at the sweep's
 * CAL_SWEEP_CRASHES-th crash, fails the sweep; when it died between
 * candidates (serializing, validating, closing the session), fails the
 * sweep. Then the next child goes on with the sweeps not yet reported.
 * Returns 1 when a new child should be started, 0 when the plugin is
 * given up (outside any sweep, the restarts spent, a second hang, out of
 * memory). */
static int restart_after(cal_run *r, const loader_plugin *p, const isolate_child_outcome *oc,
                         size_t restarts, size_t max_restarts) {
  if (!r->cur_in_workload || restarts >= max_restarts)
    return 0;
  int hung = oc->end == CALHOST_CHILD_TIMEOUT;
  size_t here = 0, hangs = 0;
  for (size_t i = 0; i < r->crash_count; i++) {
    here += r->crashes[i].workload == r->cur_workload && r->crashes[i].threads == r->cur_threads;
    hangs += r->crashes[i].every_sweep;
  }
  if (hung && hangs + 1 >= CAL_MAX_HANGS)
    return 0;
  if (hung && r->plugin_deadline > 0 && r->cur_started > 0)
    r->plugin_deadline += sweep_now() - r->cur_started; /* the hang is not the plugin's work */
  if (!r->cur_candidate)
    return fail_sweep_in_progress(
               r, base_str_format("the plugin's child died between candidates (serializing, "
                                  "validating or closing the session): %s",
                                  oc->message)) == 0;
  if (here + 1 >= CAL_SWEEP_CRASHES)
    return fail_sweep_in_progress(
               r, base_str_format("%zu candidates killed the plugin's child; the last, '%s': %s",
                                  here + 1, r->cur_candidate, oc->message)) == 0;
  char *why = base_str_format("%s in an earlier attempt (not run again)", oc->message);
  int ok =
      why && cal_add_crash(r, hung, r->cur_workload, r->cur_threads, r->cur_candidate, why) == 0;
  free(why);
  if (!ok)
    return 0;
  char dev[64] = "";
  if (r->cur_device)
    snprintf(dev, sizeof dev, " device %u", r->cur_device->index);
  cal_warn(r, "%s%s %s t=%u: candidate '%s' %s; the sweep goes on without it in a new child%s",
           p->backend, dev, cal_workload_name(r, r->cur_workload), r->cur_threads, r->cur_candidate,
           oc->message, hung ? " (and no later sweep runs it)" : "");
  return 1;
}

/* The sweeps of p's child (r->cur_device set or not). A child that dies
 * inside a sweep (crash, exit, hang) is started again (restart_after), at
 * most CAL_SWEEP_CRASHES times per sweep; the sweeps it finished are kept
 * and not repeated. */
static void run_child(cal_run *r, loader_plugin *p) {
  r->cur = p;
  r->results_from = r->result_count;
  r->plugin_deadline = 0; /* the first child sets it after create() (CALHOST_REC_BUDGET) */
  cal_crashes_clear(r);
  size_t done_before = r->sweeps_done, all = cal_sweeps_of(r, p);
  size_t max_restarts = CAL_SWEEP_CRASHES * (all ? all : 1);
  for (size_t restarts = 0;; restarts++) {
    size_t failures_before = r->failure_count;
    r->cur_in_workload = 0;
    r->cur_started = 0;
    free(r->cur_candidate);
    r->cur_candidate = NULL;
    loader_services_take_error(&p->services_ctx);
    /* the child skips keys already calibrated (calstore_get on this
     * snapshot): take the file's latest state first (ignore a failure: the
     * snapshot stays, and the commit decides against the file anyway) */
    if (!r->force && !r->o->verify) { /* verify judges on the one snapshot it opened */
      store_begin(r);
      calstore_reload(r->store, NULL);
      store_end(r);
    }

    isolate_options io = {.timeout_seconds = r->cfg->plugin_timeout_seconds,
                          .cancel_flag = &g_cancel,
                          .done_type = CALHOST_REC_DONE};
    isolate_child_outcome oc;
    isolate_run(&io, cal_child_main, r, on_record, r, &oc);
    /* a child that reported its plugin's failure (create failed) and exited
     * was already reported once: its exit is not a second failure */
    int reported =
        oc.end == CALHOST_CHILD_EXITED && r->failure_count > failures_before && !r->cur_in_workload;
    if (reported && restarts)
      cal_warn(r,
               "%s: a child started again after a crash could not create the plugin; %zu of "
               "its %zu sweeps were not run",
               p->backend, all - (r->sweeps_done - done_before), all);
    if (oc.end != CALHOST_CHILD_OK && oc.end != CALHOST_CHILD_CANCELLED && !reported) {
      commit(r); /* finished sweeps of a workload in progress are kept */
      if (!g_cancel && restart_after(r, p, &oc, restarts, max_restarts)) {
        if (oc.output_total > 0)
          cal_warn(r, "%s printed %zu bytes on stdout before its child died: %.200s", p->backend,
                   oc.output_total, oc.output);
        continue;
      }
      char msg[512];
      const char *where = r->cur_candidate ? " while running candidate " : "";
      char dev[64] = "";
      if (r->cur_device)
        snprintf(dev, sizeof dev, "device %u: ", r->cur_device->index);
      size_t reached = r->sweeps_done - done_before;
      char lost[96] = "";
      if (reached < all)
        snprintf(lost, sizeof lost, "; %zu of its %zu sweeps were not run", all - reached, all);
      snprintf(msg, sizeof msg, "%s%s%s%s%s%s", dev, oc.message, where,
               r->cur_candidate ? r->cur_candidate : "",
               restarts ? " (after restarts without the candidates that died before)" : "", lost);
      cal_add_failure(r, p->backend,
                      r->cur_in_workload ? cal_workload_name(r, r->cur_workload) : NULL,
                      r->cur_in_workload ? r->cur_threads : 0, r->cur_candidate, msg, oc.output);
    }
    if (oc.end != CALHOST_CHILD_OK && oc.end != CALHOST_CHILD_CANCELLED)
      r->sweeps_done = done_before + all; /* the sweeps the children never reached */
    if (oc.end == CALHOST_CHILD_OK && oc.output_total > 0 && r->o->progress != 0) {
      cal_warn(r, "%s printed %zu bytes on stdout during calibration (ignored)", p->backend,
               oc.output_total);
    }
    break;
  }
  commit(r); /* finished sweeps of a workload in progress are kept */
  free(r->cur_candidate);
  r->cur_candidate = NULL;
  cal_crashes_clear(r);
  r->cur = NULL;
}

/* Appends the n items of from (each `size` bytes) to *to (*to_count used,
 * *to_cap allocated) and frees from; returns -1 (from untouched) when out
 * of memory. */
static int append(void **to, size_t *to_count, size_t *to_cap, void *from, size_t n, size_t size) {
  if (!n) {
    free(from);
    return 0;
  }
  char *a = realloc(*to, (*to_count + n) * size);
  if (!a)
    return -1;
  memcpy(a + *to_count * size, from, n * size);
  *to = a;
  *to_count += n;
  *to_cap = *to_count;
  free(from);
  return 0;
}

/* Moves what a copy of the run gathered (results, failures, warnings,
 * progress) into the run; what cannot move (out of memory) is freed. */
static void merge(cal_run *r, cal_run *c, size_t done_before) {
  if (append((void **)&r->results, &r->result_count, &r->result_cap, c->results, c->result_count,
             sizeof *c->results) == 0) {
    c->results = NULL;
    c->result_count = 0;
  }
  if (append((void **)&r->failures, &r->failure_count, &r->failure_cap, c->failures,
             c->failure_count, sizeof *c->failures) == 0) {
    c->failures = NULL;
    c->failure_count = 0;
  }
  if (append((void **)&r->warnings, &r->warning_count, &r->warning_cap, c->warnings,
             c->warning_count, sizeof *c->warnings) == 0) {
    c->warnings = NULL;
    c->warning_count = 0;
  }
  cal_run rest; /* only what did not move: nothing the run shares */
  memset(&rest, 0, sizeof rest);
  rest.results = c->results;
  rest.result_count = c->result_count;
  rest.failures = c->failures;
  rest.failure_count = c->failure_count;
  rest.warnings = c->warnings;
  rest.warning_count = c->warning_count;
  rest.crashes = c->crashes;
  rest.crash_count = c->crash_count;
  rest.record_error = c->record_error;
  cal_run_free(&rest);
  r->sweeps_done += c->sweeps_done - done_before;
}

typedef struct wave_job {
  cal_run run; /* a copy of the parent's run with its own results */
  loader_plugin *p;
  pthread_t thread;
} wave_job;

static void *wave_main(void *user) {
  wave_job *j = user;
  run_child(&j->run, j->p);
  return NULL;
}

/* The devices of one wave: one child each, at once when there are several
 * (each thread drives one child, on a copy of the run; the store is shared
 * under a lock); results are merged in device order. */
static void run_wave(cal_run *r, loader_plugin *p, const runtime_device *const *members, size_t n) {
  if (n == 1) {
    r->cur_device = members[0];
    run_child(r, p);
    r->cur_device = NULL;
    return;
  }
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
#ifdef __SANITIZE_ADDRESS__
  /* AddressSanitizer's allocator (GCC 12's libasan) is not fork-safe: a
   * child forked while another thread allocates can inherit a locked
   * allocator and hang at its first malloc. Sanitizer builds run a wave's
   * devices one after the other. */
  wave_job *jobs = NULL;
#else
  wave_job *jobs = calloc(n, sizeof *jobs);
#endif
  if (!jobs) {
    for (size_t i = 0; i < n; i++) { /* one after the other */
      r->cur_device = members[i];
      run_child(r, p);
    }
    r->cur_device = NULL;
    return;
  }
  cal_progress_end(r); /* plain lines while several children report */
  size_t done_before = r->sweeps_done, wave_done = r->sweeps_done;
  for (size_t i = 0; i < n; i++) {
    wave_job *j = &jobs[i];
    j->run = *r;
    j->run.results = NULL;
    j->run.result_count = j->run.result_cap = 0;
    j->run.failures = NULL;
    j->run.failure_count = j->run.failure_cap = 0;
    j->run.warnings = NULL;
    j->run.warning_count = j->run.warning_cap = 0;
    j->run.cur_candidate = NULL;
    j->run.record_error = NULL; /* its own: freed in merge */
    j->run.record_reported = 0;
    j->run.crashes = NULL; /* its own: freed in merge */
    j->run.crash_count = j->run.crash_cap = 0;
    j->run.bar = 0;
    j->run.cur_device = members[i];
    j->run.store_lock = &lock;
    j->run.wave_done = &wave_done;
    j->p = p;
  }
  r->store_lock = &lock;
  pthread_once(&g_atfork_once, install_atfork);
  g_fork_lock = &lock;
  size_t started = 0;
  for (size_t i = 0; i < n; i++) {
    if (pthread_create(&jobs[i].thread, NULL, wave_main, &jobs[i]) != 0)
      break;
    started++;
  }
  for (size_t i = 0; i < started; i++)
    pthread_join(jobs[i].thread, NULL);
  g_fork_lock = NULL;
  r->store_lock = NULL;
  for (size_t i = started; i < n; i++) /* threads that could not start: now */
    run_child(&jobs[i].run, p);
  for (size_t i = 0; i < n; i++)
    merge(r, &jobs[i].run, done_before);
  pthread_mutex_destroy(&lock);
  free(jobs);
}

/* Lists device plugin p's devices (in a child) into *devices and selects
 * those the configuration names: *sel (calloc'd, NULL when out of memory)
 * holds *nsel indices into devices. Returns 0; 1 when the selection failed
 * (recorded as p's failure, *nsel 0); -1 when the list failed (recorded;
 * *devices and *sel hold nothing to free). */
static int select_devices(cal_run *r, loader_plugin *p, runtime_device_list *devices, size_t **sel,
                          size_t *nsel) {
  char why[1200];
  *sel = NULL;
  *nsel = 0;
  if (runtime_devices_list_isolated(r->cfg, p, r->cfg->plugin_timeout_seconds, devices, why,
                                    sizeof why) != 0) {
    cal_add_failure(r, p->backend, NULL, 0, NULL, why, NULL);
    return -1;
  }
  *sel = calloc(devices->count + 1, sizeof **sel);
  if (*sel && devices->count && /* none here: a skip, whatever the selection names */
      runtime_devices_selected(r->cfg, p->backend, devices, *sel, nsel, why, sizeof why) != 0) {
    cal_add_failure(r, p->backend, NULL, 0, NULL, why, NULL);
    *nsel = 0;
    return 1;
  }
  return 0;
}

/* A device backend's selected devices, listed (in a child) before any
 * sweep of the run starts, so that the progress total counts their sweeps
 * from the first line. */
typedef struct cal_listed {
  int st; /* select_devices' status; -1: listing failed (a failure recorded) */
  runtime_device_list devices;
  size_t *sel, nsel; /* the selected devices with sweeps in this run's shard */
} cal_listed;

/* A device backend that listed no device: a skip, said once, and the
 * reason of a run with nothing in it (cal_nothing_reason). */
static void note_no_device(cal_run *r, const loader_plugin *p) {
  cal_warn(r, "%s has no device on this machine: skipped, nothing to calibrate", p->backend);
  size_t used = strlen(r->no_device);
  snprintf(r->no_device + used, sizeof r->no_device - used, "%s%s", used ? ", " : "", p->backend);
  r->no_device_count++;
}

const char *cal_nothing_reason(const cal_run *r, char *buf, size_t cap) {
  if (r->no_device_count)
    snprintf(buf, cap, "%s ha%s no device on this machine", r->no_device,
             r->no_device_count == 1 ? "s" : "ve");
  else
    snprintf(buf, cap, "no configured workload uses an operator of the selected plugins");
  return buf;
}

/* Lists p's devices into *l and adds their sweeps to the run's total. */
static void list_devices(cal_run *r, loader_plugin *p, cal_listed *l) {
  l->st = select_devices(r, p, &l->devices, &l->sel, &l->nsel);
  if (l->st < 0)
    return;
  if (!l->sel)
    cal_add_failure(r, p->backend, NULL, 0, NULL, "out of memory", NULL);
  else if (l->st == 0 && !l->devices.count)
    note_no_device(r, p);
  size_t kept = 0;
  for (size_t i = 0; i < l->nsel; i++) {
    r->cur_device = &l->devices.items[l->sel[i]];
    size_t n = cal_sweeps_of(r, p);
    r->sweeps_total += n;
    if (n)
      l->sel[kept++] = l->sel[i];
  }
  l->nsel = kept;
  r->cur_device = NULL;
}

/* One plugin: a CPU backend's sweeps in one child; a device backend's
 * devices (listed beforehand: list_devices), one child per selected device
 * ([plugin NAME] devices), in waves of devices that do not share hardware
 * (devices.h): the members of a wave at once, the waves one after the
 * other, after or before every other plugin's sweeps. Frees l's lists. */
static void calibrate_plugin(cal_run *r, loader_plugin *p, cal_listed *l) {
  r->cur_device = NULL;
  if (!runtime_devices_supported(p)) {
    run_child(r, p);
    return;
  }
  if (l->st < 0)
    return;
  runtime_device_list devices = l->devices;
  size_t *sel = l->sel, nsel = l->nsel;
  memset(l, 0, sizeof *l);
  /* waves of devices that do not share hardware run at once; a device on
   * the CPUs (PoCL) is alone in its wave */
  const runtime_device **devs = calloc(nsel + 1, sizeof *devs);
  const runtime_device **members = calloc(nsel + 1, sizeof *members); /* a wave: any size */
  size_t *wave = calloc(nsel + 1, sizeof *wave);
  size_t waves = 0;
  if (devs && members && wave) {
    for (size_t i = 0; i < nsel; i++)
      devs[i] = &devices.items[sel[i]];
    waves = runtime_devices_schedule(devs, nsel, wave);
  } else if (nsel) {
    cal_add_failure(r, p->backend, NULL, 0, NULL, "out of memory", NULL);
  }
  for (size_t w = 0; w < waves && !g_cancel; w++) {
    size_t n = 0;
    for (size_t i = 0; i < nsel; i++)
      if (wave[i] == w)
        members[n++] = devs[i];
    run_wave(r, p, members, n);
  }
  r->cur_device = NULL;
  free(devs);
  free(members);
  free(wave);
  free(sel);
  runtime_device_list_free(&devices);
}

/* ---- the run ---------------------------------------------------------- */

/* ---- the plan (calhost plan) ------------------------------------------- */

void calibrate_work_list_free(calibrate_work_list *list) {
  if (!list)
    return;
  for (size_t i = 0; i < list->count; i++) {
    calibrate_work_item *x = &list->items[i];
    free(x->backend);
    free(x->implementation);
    free(x->workload);
    free(x->operator_name);
    free(x->device);
  }
  free(list->items);
  memset(list, 0, sizeof *list);
}

/* Every item the run would calibrate, all shards; -1 when out of memory. */
/* The items of plugin p on device d (NULL: its CPU targets). */
static int plan_items(const cal_run *r, const loader_plugin *p, const runtime_device *d,
                      calibrate_work_list *out) {
  const calibrate_options *o = r->o;
  for (size_t w = 0; w < r->workload_count; w++) {
    const config_workload *cw = &r->cfg->workloads[r->workloads[w]];
    if (!runtime_binding_serves(p, cw->operator_name))
      continue;
    for (size_t t = 0; t < (d ? 1 : r->targets.count); t++) {
      calibrate_work_item *n = base_array_grow(out->items, out->count, &out->cap, sizeof *n, 16);
      if (!n)
        return -1;
      out->items = n;
      calibrate_work_item *x = &n[out->count++];
      memset(x, 0, sizeof *x);
      x->backend = base_str_dup(p->backend);
      x->implementation = base_str_dup(p->implementation_version);
      x->workload = base_str_dup(cw->name);
      x->operator_name = base_str_dup(cw->operator_name);
      x->threads = r->targets.items[t].thread_count;
      x->device = d ? base_str_dup(d->identity) : NULL;
      x->device_index = d ? d->index : 0;
      x->shard = calibrate_shard_of(p->backend, cw->name, x->threads, d ? d->identity : NULL,
                                    o->shard.count);
      if (!x->backend || !x->implementation || !x->workload || !x->operator_name ||
          (d && !x->device))
        return -1;
    }
  }
  return 0;
}

/* Every item the run would calibrate, all shards; -1 when out of memory.
 * A device backend's devices are listed (in a child) for it: one item per
 * selected device and workload. */
static int fill_plan(cal_run *r, calibrate_work_list *out) {
  const calibrate_options *o = r->o;
  for (size_t i = 0; i < r->plugins.count; i++) {
    loader_plugin *p = r->plugins.items[i];
    if (!p->loaded || !base_str_allowed(o->plugins, o->plugin_count, NULL, 0, p->backend))
      continue;
    if (runtime_devices_supported(p)) {
      runtime_device_list devices;
      size_t *sel, nsel;
      int st = select_devices(r, p, &devices, &sel, &nsel);
      if (st < 0)
        continue;
      if (st == 0 && !devices.count)
        note_no_device(r, p);
      int rc = sel ? 0 : -1;
      for (size_t k = 0; rc == 0 && k < nsel; k++)
        rc = plan_items(r, p, &devices.items[sel[k]], out);
      free(sel);
      runtime_device_list_free(&devices);
      if (rc != 0)
        return -1;
      continue;
    }
    if (plan_items(r, p, NULL, out) != 0)
      return -1;
  }
  return 0;
}

/* ---- the run ---------------------------------------------------------- */

/* Whether plugin p takes part in this run's sweeps. */
static int runs_plugin(cal_run *r, loader_plugin *p) {
  const calibrate_options *o = r->o;
  if (!p->loaded || !base_str_allowed(o->plugins, o->plugin_count, NULL, 0, p->backend))
    return 0;
  if (o->shard.count > 1 && !runtime_devices_supported(p) && !cal_sweeps_of(r, p))
    return 0;                     /* every item of this plugin is another shard's */
  int wanted = !r->recalibrating; /* verify --recalibrate: the failed keys' plugins */
  for (size_t k = 0; k < r->only_key_count && !wanted; k++)
    wanted = !strcmp(r->only_keys[k].backend, p->backend);
  return wanted;
}

void cal_run_plugins(cal_run *r) {
  cal_listed *listed = calloc(r->plugins.count + 1, sizeof *listed);
  if (!listed) {
    cal_add_failure(r, "calhost", NULL, 0, NULL, "out of memory", NULL);
    return;
  }
  /* the device backends' devices first: the total is then known */
  for (size_t i = 0; i < r->plugins.count && !g_cancel; i++)
    if (runtime_devices_supported(r->plugins.items[i]) && runs_plugin(r, r->plugins.items[i]))
      list_devices(r, r->plugins.items[i], &listed[i]);
  for (size_t i = 0; i < r->plugins.count && !g_cancel; i++)
    if (runs_plugin(r, r->plugins.items[i]))
      calibrate_plugin(r, r->plugins.items[i], &listed[i]);
  for (size_t i = 0; i < r->plugins.count; i++) { /* what a cancel left unrun */
    runtime_device_list_free(&listed[i].devices);
    free(listed[i].sel);
  }
  free(listed);
  if (g_cancel && !r->interrupted)
    r->interrupted = g_signal ? g_signal : SIGINT;
}

int calibrate_execute(const calibrate_options *o) {
  cal_run run;
  cal_run *r = &run;
  memset(r, 0, sizeof *r);
  r->o = o;
  r->cfg = o->config;
  r->out = o->out ? o->out : stdout;
  r->err = o->err ? o->err : stderr;
  r->started = sweep_now();
  r->force = o->force && !o->verify;
  const char *cmd = o->verify ? "verify" : o->plan ? "plan" : "calibrate"; /* for messages */
  r->bar = !o->quiet && !o->json && o->progress != 0 && base_text_cursor_ok(r->err);
  int status = 0;
  char err[4608];
  calstore_status store_failed = CALSTORE_OK; /* the store would not open: --json says so */
  char **only = NULL;                         /* --plugin names that are enabled */
  size_t nonly = 0;
  char *const *want = NULL; /* backends that must load */
  size_t nwant = 0;

  g_cancel = 0;
  g_signal = 0;
  /* SIGINT, SIGTERM and SIGHUP (the terminal went away) stop the run; the
   * finished work is committed and the exit status is 128 + the signal */
  struct sigaction sa, old_int, old_term, old_hup;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  sigaction(SIGHUP, &sa, &old_hup);

  /* Plugins' entry points run in this process while they load
   * (negotiation): whatever they print on stdout goes to stderr, so the
   * report on stdout stays clean. */
  int saved_stdout = -1;
  if (r->out == stdout) {
    fflush(stdout);
    saved_stdout = dup(STDOUT_FILENO);
    if (saved_stdout >= 0)
      dup2(STDERR_FILENO, STDOUT_FILENO);
  }

  sweep_rigor_params_init(r->cfg->rigor, r->cfg->repetitions, &r->params);
  snprintf(r->rigor_name, sizeof r->rigor_name, "%s", sweep_rigor_name(r->cfg->rigor));

  /* The store: --store > [store] path > the default path (the binding's
   * rule). A plan needs none. */
  if (!o->plan && ((store_failed = runtime_binding_open_store(r->cfg, o->store_path, &r->store, err,
                                                              sizeof err)) != CALSTORE_OK ||
                   !r->store)) {
    base_text_printf(r->err, "calhost: %s\n", err);
    if (store_failed == CALSTORE_OK)
      store_failed = CALSTORE_UNREADABLE;
    status = 2;
    goto out;
  }
  /* A store that cannot take the results (its folders are created), or a
   * --record file that cannot be written, fails now, not after the
   * sweeps. */
  const char *store_path = calstore_path(r->store);
  if (!o->plan && r->cfg->persistence_enabled && (!o->verify || o->verify->recalibrate) &&
      store_path && base_path_writable(store_path, 1, err, sizeof err) != 0) {
    base_text_printf(r->err, "calhost: %s: cannot write the store %s: %s\n", cmd, store_path, err);
    status = 2;
    goto out;
  }
  /* --record follows the rule of every output file (base_output_prepare):
   * its folders are created, and what stands at FILE must be a regular
   * file or nothing */
  if (!o->plan && o->record_path && base_output_prepare(o->record_path, err, sizeof err) != 0) {
    base_text_printf(r->err, "calhost: %s: --record: cannot write %s: %s\n", cmd, o->record_path,
                     err);
    status = 2;
    goto out;
  }

  /* Workloads. */
  r->workloads = calloc(r->cfg->workload_count + 1, sizeof *r->workloads);
  if (!r->workloads) {
    status = 2;
    goto out;
  }
  for (size_t i = 0; i < o->workload_count; i++)
    if (!config_workload_named(r->cfg, o->workloads[i])) {
      base_text_printf(r->err, "calhost: %s: no workload named '%s' in the configuration\n", cmd,
                       o->workloads[i]);
      status = 2;
      goto out;
    }
  for (size_t i = 0; i < r->cfg->workload_count; i++)
    if (!o->workload_count ||
        base_str_listed(o->workloads, o->workload_count, r->cfg->workloads[i].name)) {
      /* The model digest, hashed once here in the parent: every child
       * inherits it. */
      if (!o->plan && !config_workload_digest(&r->cfg->workloads[i], err, sizeof err)) {
        base_text_printf(r->err, "calhost: %s: %s\n", cmd, err);
        status = 2;
        goto out;
      }
      r->workloads[r->workload_count++] = i;
    }
  if (!r->workload_count) {
    fprintf(r->err, "calhost: %s: the configuration has no workload\n", cmd);
    status = 2;
    goto out;
  }

  /* Targets and environment. */
  static const uint32_t one_thread = 1;
  const uint32_t *tc = r->cfg->thread_counts;
  size_t ntc = r->cfg->thread_count_count;
  if (!tc || !ntc) {
    tc = &one_thread;
    ntc = 1;
  }
  if (runtime_binding_targets(r->cfg, tc, ntc, &r->targets, err, sizeof err) != 0) {
    base_text_printf(r->err, "calhost: %s: %s\n", cmd, err);
    status = 2;
    goto out;
  }
  if (!o->plan) {
    processor_environment_record(r->targets.cpus, r->targets.cpu_count, &r->env);
    for (size_t i = 0; i < r->env.warning_count; i++)
      cal_warn(r, "%s", r->env.warnings[i]);
  }

  /* Plugins. */
  loader_options lo;
  loader_options_init(&lo);
  runtime_binding_loader_options(r->cfg, &lo);
  /* --plugin narrows the configuration's enabled list (nothing else is loaded) */
  only = calloc(o->plugin_count + 1, sizeof *only);
  if (!only) {
    status = 2;
    goto out;
  }
  for (size_t i = 0; i < o->plugin_count; i++) {
    if (r->cfg->enabled_count &&
        !base_str_listed(r->cfg->enabled_backends, r->cfg->enabled_count, o->plugins[i])) {
      cal_add_failure(r, o->plugins[i], NULL, 0, NULL, "not enabled in the configuration", NULL);
      continue;
    }
    only[nonly++] = o->plugins[i];
  }
  if (o->plugin_count && !nonly) {
    fprintf(r->err, "calhost: %s: none of the --plugin backends is enabled\n", cmd);
    status = 2;
    goto report;
  }
  lo.enabled = nonly ? only : r->cfg->enabled_backends;
  lo.enabled_count = nonly ? nonly : r->cfg->enabled_count;
  lo.services.user = r;
  lo.services.cancel_flag = &g_cancel;
  lo.services.is_cancelled = cal_budget_over;
  int found = loader_discover(&lo, &r->plugins);
  if (found < 0) {
    fprintf(r->err, "calhost: %s: out of memory while loading plugins\n", cmd);
    status = 2;
    goto out;
  }
  /* every backend asked for (--plugin, else the enabled list) must be loaded */
  want = nonly ? only : r->cfg->enabled_backends;
  nwant = nonly ? nonly : r->cfg->enabled_count;
  for (size_t i = 0; i < nwant; i++) {
    loader_plugin *p = loader_plugin_list_find(&r->plugins, want[i]);
    if (p && p->loaded)
      continue;
    char *why = NULL;
    if (base_str_listed(r->cfg->disabled_backends, r->cfg->disabled_count, want[i]))
      why = base_str_format("disabled by the configuration ([plugins] disabled in %s)",
                            r->cfg->source_path ? r->cfg->source_path : "the built-in defaults");
    cal_add_failure(r, want[i], NULL, 0, NULL,
                    why              ? why
                    : p && p->reason ? p->reason
                                     : "not found (or it failed to load)",
                    NULL);
    free(why);
  }
  size_t usable = 0;
  int served = 0; /* a usable plugin serves a configured workload: the run, all shards, has items */
  for (size_t i = 0; i < r->plugins.count; i++) {
    loader_plugin *p = r->plugins.items[i];
    if (!base_str_allowed(o->plugins, o->plugin_count, NULL, 0, p->backend))
      continue;
    for (size_t w = 0; p->loaded && !served && w < r->workload_count; w++)
      served = runtime_binding_serves(p, r->cfg->workloads[r->workloads[w]].operator_name);
    if (!p->loaded) {
      /* named in the enabled list: a failure above; otherwise a warning */
      int wanted = p->backend && base_str_listed(want, nwant, p->backend);
      if (p->reason && !wanted && p->state != CALHOST_PLUGIN_DISABLED)
        cal_warn(r, "plugin %s not loaded: %s", p->path ? p->path : "?", p->reason);
      continue;
    }
    usable++;
    /* a device backend's sweeps are counted once its devices are listed
     * (calibrate_plugin) */
    if (!runtime_devices_supported(p))
      r->sweeps_total += cal_sweeps_of(r, p);
  }
  if (!usable) {
    fprintf(r->err, "calhost: %s: no plugin to calibrate\n", cmd);
    status = 2;
    goto report;
  }
  if (o->plan) {
    status = fill_plan(r, o->plan) != 0 ? 2 : r->failure_count ? 1 : 0;
    if (status == 0 && !o->plan->count) { /* calibrate's "no" for the same flags */
      char why[400];
      if (!r->no_device_count) /* only device backends without a device here: a skip */
        status = 1;
      cal_warn(r, "nothing to calibrate: %s", cal_nothing_reason(r, why, sizeof why));
    }
    goto report;
  }

  cal_run_plugins(r);
  cal_progress_end(r);
  if (g_cancel) {
    r->interrupted = g_signal ? g_signal : SIGINT;
    status = 128 + r->interrupted;
  } else if (o->verify) {
    status = 0; /* verify.c decides (cal_verify_finish) */
  } else {
    status = r->failure_count ? 1 : 0;
    size_t calibrated = 0; /* stored now, or already calibrated before */
    for (size_t i = 0; i < r->result_count; i++) {
      const cal_result *x = &r->results[i];
      if (x->kind == CAL_FAILED || x->kind == CAL_NOT_STORED || x->record_failed)
        status = 1;
      if (x->kind == CAL_STORED || x->kind == CAL_PENDING ||
          (x->kind == CAL_SKIPPED && x->key.processor)) /* skips with a key: calibrated */
        calibrated++;
    }
    /* nothing calibrated (every sweep unsupported, or no workload for the
     * chosen plugins) is a "no", not a success; but one shard of a fleet
     * run may hold no item, or only unsupported ones, while the others
     * calibrate. A run with no item in any shard is a "no" in every shard,
     * so that a fleet campaign of nothing fails before its merge. */
    if (!calibrated && o->shard.count > 1 && served) {
      if (!r->sweeps_total)
        cal_warn(r, "shard %u/%u holds no item of this run (calhost plan --shards %u)",
                 (unsigned)o->shard.index, (unsigned)o->shard.count, (unsigned)o->shard.count);
      else
        cal_warn(r, "nothing was calibrated in shard %u/%u: every sweep was skipped or failed",
                 (unsigned)o->shard.index, (unsigned)o->shard.count);
    } else if (!calibrated && !r->result_count && !r->failure_count && r->no_device_count) {
      /* only device backends without a device here (a CUDA backend on a
       * machine without a GPU): a skip, said once per backend, not a failure */
      char why[400];
      cal_warn(r, "nothing was calibrated: %s", cal_nothing_reason(r, why, sizeof why));
    } else if (!calibrated) {
      char why[400];
      status = 1;
      cal_warn(r, "nothing was calibrated: %s",
               r->result_count    ? "every sweep was skipped or failed"
               : r->failure_count ? "the plugins failed before any sweep finished (see failures)"
                                  : cal_nothing_reason(r, why, sizeof why));
    }
  }

report:
  if (o->verify) /* verdicts and --recalibrate (plugin code: stdout still aside) */
    status = cal_verify_finish(r, status);
  if (saved_stdout >= 0) {
    fflush(stdout);
    dup2(saved_stdout, STDOUT_FILENO);
    close(saved_stdout);
    saved_stdout = -1;
  }
  if (o->plan) { /* the caller prints the plan; what is missing from it goes to err */
    for (size_t i = 0; i < r->failure_count; i++)
      base_text_printf(r->err, "calhost: plan: %s: %s\n", r->failures[i].backend,
                       r->failures[i].message);
    for (size_t i = 0; i < r->warning_count; i++)
      base_text_printf(r->err, "calhost: plan: %s\n", r->warnings[i]);
  } else if (o->verify) {
    cal_verify_print(r, status); /* also its JSON into json_out */
  } else if (o->json) {
    cal_print_json(r, status);
  } else {
    cal_print_summary(r);
  }
  if (o->json_out && !o->plan &&
      !o->verify) { /* --report: the same JSON into the report's folder */
    r->out = o->json_out;
    cal_print_json(r, status);
  }
out:
  if (saved_stdout >= 0) {
    fflush(stdout);
    dup2(saved_stdout, STDOUT_FILENO);
    close(saved_stdout);
  }
  if (store_failed != CALSTORE_OK && o->json) { /* no run report: the reason, in JSON */
    base_json_status_message(r->out, calstore_status_name(store_failed), err);
  }
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  sigaction(SIGHUP, &old_hup, NULL);
  free(only);
  cal_run_free(r);
  return status;
}
