/*
 * driver.c: the calibrate driver (run.h), for every mode: the signals
 * caught (signals.c) around the
 * run's skeleton (cal_execute: set up, the mode's run, the mode's print),
 * one child per plugin (device backends: one per device, in waves of
 * devices that do not share hardware), the records a child sends
 * (decoded by the child protocol codec, host/isolate/codec.c), restarts after a candidate
 * killed a child, and commits through the mode. It knows no mode by name:
 * what differs between calibrate, plan and verify is in their cal_mode.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json.h"
#include "base/str.h"
#include "base/text.h"
#include "isolate/isolate.h"
#include "run.h"

/* ---- the store under a wave's lock ------------------------------------ */

/* The store is shared by the threads that calibrate devices at once:
 * every use of it holds the lock. */
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

/* The mode's commit of what is pending, under the wave's lock. */
static void commit(cal_run *r) {
  if (!r->mode->commit)
    return;
  store_begin(r);
  r->mode->commit(r);
  store_end(r);
}

/* ---- the parent: records ---------------------------------------------- */

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

/* A finished sweep x: counted and announced (a skip only when the mode
 * counts skips); the sweep is over, so a crash from here on is not in it. */
static void sweep_finished(cal_run *r, const cal_result *x) {
  int quiet = x->kind == CAL_SKIPPED && !r->mode->counts_skips;
  if (!quiet)
    count_sweep(r);
  free(r->cur.candidate);
  r->cur.candidate = NULL;
  if (!quiet)
    r->mode->announce(r, x);
  r->cur.in_workload = 0;
}

/* The candidate the child announced: the one in the plugin's hands. */
static void on_candidate(cal_run *r, isolate_proto_cursor *c) {
  isolate_rec_item it;
  uint32_t index, ordinal, total;
  const char *policy;
  if (isolate_rec_get_candidate(c, &it, &index, &ordinal, &total, &policy) != 0)
    return;
  r->cur.in_workload = 1;
  r->cur.workload = it.workload;
  r->cur.threads = it.threads;
  r->cur.ordinal = ordinal;
  r->cur.total = total;
  free(r->cur.candidate);
  r->cur.candidate = base_str_dup(policy);
  r->cur.started = sweep_now();
  cal_progress(r);
}

/* "t=N" or "device N": where a result's sweep ran, for messages. */
static const char *where_word(const cal_result *x, char *buf, size_t cap) {
  if (x->on_device)
    snprintf(buf, cap, "device %u", x->device_index);
  else
    snprintf(buf, cap, "t=%u", x->threads);
  return buf;
}

/* A successful sweep's result: classified by the mode, with its warnings. */
static void classify_result(cal_run *r, cal_result *x, int bad) {
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
    where_word(x, tw, sizeof tw);
    x->kind = r->mode->measured;
    if (x->sweep.budget_exhausted)
      cal_warn(r, "%s %s %s: budget exhausted after %u candidates", x->backend,
               cal_workload_name(r, x->workload), tw, x->sweep.budget_after);
    if (x->sweep.figures.noisy)
      cal_warn(r, "%s %s %s: noisy result (cv %.3g)", x->backend, cal_workload_name(r, x->workload),
               tw, x->sweep.figures.cv);
  }
}

/* --record: what the child reported of the sweep's recording (before its
 * result), checked against the file: a failed recording is an error. */
static void settle_recording(cal_run *r, cal_result *x) {
  if (!r->set->o->record_path)
    return;
  char path[4096] = "";
  struct stat st;
  size_t w = x->workload;
  int named = cal_record_path(r, x->backend, w, x->on_device ? (long)x->device_index : -1,
                              x->threads, path, sizeof path, NULL, 0) == 0;
  if (r->cur.record_reported && r->cur.record_error && r->cur.record_error[0]) {
    /* the recording failed (its final rename, a write): an error */
    x->record_failed = 1;
    cal_warn(r, "%s %s t=%u: --record: %s", x->backend, cal_workload_name(r, w), x->threads,
             r->cur.record_error);
  } else if (named && r->cur.record_reported && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
    x->recorded = base_str_dup(path);
  } else {
    x->record_failed = 1;
    cal_warn(r, "%s %s t=%u: --record: %s was not written", x->backend, cal_workload_name(r, w),
             x->threads, path);
  }
}

/* RESULT, SKIPPED, FAILED: one finished sweep of (workload, threads). */
static void on_sweep_record(cal_run *r, const isolate_proto_msg *m, isolate_proto_cursor *c) {
  isolate_rec_item it;
  if (isolate_rec_get_item(c, &it) != 0 || it.workload >= r->set->cfg->workload_count)
    return;
  cal_result *x = cal_add_result(r);
  if (!x)
    return;
  x->workload = it.workload;
  x->threads = it.threads;
  r->cur.in_workload = 1;
  r->cur.workload = it.workload;
  r->cur.threads = it.threads;
  if (m->type == CALHOST_REC_RESULT) {
    classify_result(r, x, sweep_record_get_result_body(c, &x->key, &x->sweep) != 0);
    settle_recording(r, x);
    r->cur.record_reported = 0;
    free(r->cur.record_error);
    r->cur.record_error = NULL;
  } else if (m->type == CALHOST_REC_SKIPPED) {
    const char *reason = NULL;
    x->kind = CAL_SKIPPED;
    isolate_rec_get_skipped_body(c, &reason, &x->key);
    x->message = base_str_dup(reason);
  } else {
    const char *message = NULL;
    x->kind = CAL_FAILED;
    isolate_rec_get_failed_body(c, &message);
    x->message = base_str_dup(message);
  }
  sweep_finished(r, x);
}

/* The records of a child's stream, each by its codec (isolate/codec.h). */
static void on_record(void *user, const isolate_proto_msg *m) {
  cal_run *r = user;
  isolate_proto_cursor c;
  isolate_proto_cursor_init(&c, m);
  if (r->cur.records_refused && m->type != CALHOST_REC_HELLO)
    return; /* a stream of another protocol version: nothing of it is read */
  switch (m->type) {
  case CALHOST_REC_HELLO: { /* the first record: the stream's protocol version */
    const char *backend;
    char why[200];
    r->cur.records_refused = isolate_rec_get_hello(&c, &backend, why, sizeof why) != 0;
    if (r->cur.records_refused)
      cal_add_failure(r, r->cur.plugin->backend, NULL, 0, NULL, why, NULL);
    break;
  }
  case CALHOST_REC_CANDIDATE:
    on_candidate(r, &c);
    break;
  case CALHOST_REC_CANDIDATE_END: /* a crash from here on is not the candidate's */
    free(r->cur.candidate);
    r->cur.candidate = NULL;
    break;
  case CALHOST_REC_RECORDING: { /* this sweep's --record outcome, before its result */
    const char *error;
    free(r->cur.record_error);
    r->cur.record_error = isolate_rec_get_recording(&c, &error) == 0 ? base_str_dup(error) : NULL;
    r->cur.record_reported = 1;
    break;
  }
  case CALHOST_REC_BUDGET: {
    double deadline;
    if (isolate_rec_get_budget(&c, &deadline) == 0 && r->cur.plugin_deadline == 0 && deadline > 0)
      r->cur.plugin_deadline = deadline;
    break;
  }
  case CALHOST_REC_RESULT:
  case CALHOST_REC_SKIPPED:
  case CALHOST_REC_FAILED:
    on_sweep_record(r, m, &c);
    break;
  case CALHOST_REC_WORKLOAD_DONE:
    commit(r);
    r->cur.in_workload = 0;
    break;
  case CALHOST_REC_PLUGIN_FAILED: {
    const char *msg = NULL;
    isolate_rec_get_plugin_failed(&c, &msg);
    cal_add_failure(r, r->cur.plugin->backend, NULL, 0, NULL, msg ? msg : "plugin failed", NULL);
    break;
  }
  default:
    break;
  }
}

/* ---- one plugin's children -------------------------------------------- */

/* Fails the sweep in progress (r->cur.workload, r->cur.threads) with
 * message, as a finished sweep: the next child goes on with the others.
 * Takes over message; returns 0, -1 when out of memory. */
static int fail_sweep_in_progress(cal_run *r, char *message) {
  cal_result *x = message ? cal_add_result(r) : NULL;
  if (!x) {
    free(message);
    return -1;
  }
  x->workload = r->cur.workload;
  x->threads = r->cur.threads;
  x->kind = CAL_FAILED;
  x->message = message;
  count_sweep(r);
  r->mode->announce(r, x);
  return 0;
}

/* After a child of p died abnormally (oc) inside a sweep: when a candidate
 * was in the plugin's hands (r->cur.candidate), records its policy as a
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
  cal_cursor *cur = &r->cur;
  if (!cur->in_workload || restarts >= max_restarts)
    return 0;
  int hung = oc->end == CALHOST_CHILD_TIMEOUT;
  size_t here = 0, hangs = 0;
  for (size_t i = 0; i < cur->crash_count; i++) {
    here += cur->crashes[i].workload == cur->workload && cur->crashes[i].threads == cur->threads;
    hangs += cur->crashes[i].every_sweep;
  }
  if (hung && hangs + 1 >= CAL_MAX_HANGS)
    return 0;
  if (hung && cur->plugin_deadline > 0 && cur->started > 0)
    cur->plugin_deadline += sweep_now() - cur->started; /* the hang is not the plugin's work */
  if (!cur->candidate)
    return fail_sweep_in_progress(
               r, base_str_format("the plugin's child died between candidates (serializing, "
                                  "validating or closing the session): %s",
                                  oc->message)) == 0;
  if (here + 1 >= CAL_SWEEP_CRASHES)
    return fail_sweep_in_progress(
               r, base_str_format("%zu candidates killed the plugin's child; the last, '%s': %s",
                                  here + 1, cur->candidate, oc->message)) == 0;
  char *why = base_str_format("%s in an earlier attempt (not run again)", oc->message);
  int ok = why && cal_add_crash(r, hung, cur->workload, cur->threads, cur->candidate, why) == 0;
  free(why);
  if (!ok)
    return 0;
  char dev[64] = "";
  if (cur->device)
    snprintf(dev, sizeof dev, " device %u", cur->device->index);
  cal_warn(r, "%s%s %s t=%u: candidate '%s' %s; the sweep goes on without it in a new child%s",
           p->backend, dev, cal_workload_name(r, cur->workload), cur->threads, cur->candidate,
           oc->message, hung ? " (and no later sweep runs it)" : "");
  return 1;
}

/* The failure of a plugin whose child died and was not started again:
 * where it died, and how many of its `all` sweeps were not reached. */
static void child_died(cal_run *r, const loader_plugin *p, const isolate_child_outcome *oc,
                       size_t restarts, size_t reached, size_t all) {
  const cal_cursor *cur = &r->cur;
  char msg[512], dev[64] = "", lost[96] = "";
  const char *where = cur->candidate ? " while running candidate " : "";
  if (cur->device)
    snprintf(dev, sizeof dev, "device %u: ", cur->device->index);
  if (reached < all)
    snprintf(lost, sizeof lost, "; %zu of its %zu sweeps were not run", all - reached, all);
  snprintf(msg, sizeof msg, "%s%s%s%s%s%s", dev, oc->message, where,
           cur->candidate ? cur->candidate : "",
           restarts ? " (after restarts without the candidates that died before)" : "", lost);
  cal_add_failure(r, p->backend, cur->in_workload ? cal_workload_name(r, cur->workload) : NULL,
                  cur->in_workload ? cur->threads : 0, cur->candidate, msg, oc->output);
}

/* One child of p: its records go to on_record. Returns the outcome in *oc. */
static void start_child(cal_run *r, loader_plugin *p, isolate_child_outcome *oc) {
  r->cur.in_workload = 0;
  r->cur.started = 0;
  free(r->cur.candidate);
  r->cur.candidate = NULL;
  loader_services_take_error(&p->services_ctx);
  /* the child skips keys already calibrated (a store probe on this
   * snapshot): take the file's latest state first (ignore a failure: the
   * snapshot stays, and the commit decides against the file anyway) */
  if (r->mode->reload_store && !r->pass.force) {
    store_begin(r);
    calstore_reload(r->set->store, NULL);
    store_end(r);
  }
  isolate_options io = {.timeout_seconds = r->set->cfg->plugin_timeout_seconds,
                        .cancel_flag = cal_cancel_flag(),
                        .done_type = CALHOST_REC_DONE};
  isolate_run(&io, cal_child_main, r, on_record, r, oc);
}

/* The sweeps of p's child (on device d, or the CPU targets). A child that
 * dies inside a sweep (crash, exit, hang) is started again (restart_after),
 * at most CAL_SWEEP_CRASHES times per sweep; the sweeps it finished are
 * kept and not repeated. */
static void run_child(cal_run *r, loader_plugin *p, const runtime_device *d) {
  cal_cursor_start(&r->cur, p, d);
  r->cur.results_from = r->sink->result_count;
  size_t done_before = r->sweeps_done, all = cal_sweeps_of(r, p);
  size_t max_restarts = CAL_SWEEP_CRASHES * (all ? all : 1);
  for (size_t restarts = 0;; restarts++) {
    size_t failures_before = r->sink->failure_count;
    isolate_child_outcome oc;
    start_child(r, p, &oc);
    /* a child that reported its plugin's failure (create failed) and exited
     * was already reported once: its exit is not a second failure */
    int reported = oc.end == CALHOST_CHILD_EXITED && r->sink->failure_count > failures_before &&
                   !r->cur.in_workload;
    if (reported && restarts)
      cal_warn(r,
               "%s: a child started again after a crash could not create the plugin; %zu of "
               "its %zu sweeps were not run",
               p->backend, all - (r->sweeps_done - done_before), all);
    int died = oc.end != CALHOST_CHILD_OK && oc.end != CALHOST_CHILD_CANCELLED;
    if (died && !reported) {
      commit(r); /* finished sweeps of a workload in progress are kept */
      if (!*cal_cancel_flag() && restart_after(r, p, &oc, restarts, max_restarts)) {
        if (oc.output_total > 0)
          cal_warn(r, "%s printed %zu bytes on stdout before its child died: %.200s", p->backend,
                   oc.output_total, oc.output);
        continue;
      }
      child_died(r, p, &oc, restarts, r->sweeps_done - done_before, all);
    }
    if (died)
      r->sweeps_done = done_before + all; /* the sweeps the children never reached */
    if (oc.end == CALHOST_CHILD_OK && oc.output_total > 0 && r->set->o->progress != 0)
      cal_warn(r, "%s printed %zu bytes on stdout during calibration (ignored)", p->backend,
               oc.output_total);
    break;
  }
  commit(r); /* finished sweeps of a workload in progress are kept */
  cal_cursor_free(&r->cur);
}

/* ---- device waves ----------------------------------------------------- */

typedef struct wave_job {
  cal_run run;   /* the run's set-up, mode and pass; its own sink and cursor */
  cal_sink sink; /* merged into the run's after the wave */
  loader_plugin *p;
  const runtime_device *device;
  pthread_t thread;
} wave_job;

static void *wave_main(void *user) {
  wave_job *j = user;
  run_child(&j->run, j->p, j->device);
  return NULL;
}

/* A thread's run in a wave: what r shares, with j's own sink and cursor,
 * the wave's lock and count. */
static void wave_job_init(wave_job *j, const cal_run *r, loader_plugin *p, const runtime_device *d,
                          pthread_mutex_t *lock, size_t *wave_done) {
  memset(j, 0, sizeof *j);
  j->run.set = r->set;
  j->run.mode = r->mode;
  j->run.mode_state = r->mode_state;
  j->run.pass = r->pass;
  j->run.sink = &j->sink;
  j->run.sweeps_total = r->sweeps_total;
  j->run.sweeps_done = r->sweeps_done;
  j->run.store_lock = lock;
  j->run.wave_done = wave_done;
  j->p = p;
  j->device = d;
}

/* The devices of one wave: one child each, at once when there are several
 * (each thread drives one child with a sink of its own; the store is
 * shared under a lock); the sinks are merged in device order. */
static void run_wave(cal_run *r, loader_plugin *p, const runtime_device *const *members, size_t n) {
#ifdef __SANITIZE_ADDRESS__
  /* AddressSanitizer's allocator (GCC 12's libasan) is not fork-safe: a
   * child forked while another thread allocates can inherit a locked
   * allocator and hang at its first malloc. Sanitizer builds run a wave's
   * devices one after the other. */
  wave_job *jobs = NULL;
#else
  wave_job *jobs = n > 1 ? calloc(n, sizeof *jobs) : NULL;
#endif
  if (!jobs) { /* one device, or one after the other */
    for (size_t i = 0; i < n; i++)
      run_child(r, p, members[i]);
    return;
  }
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  cal_progress_end(r); /* plain lines while several children report */
  size_t done_before = r->sweeps_done, wave_done = r->sweeps_done;
  for (size_t i = 0; i < n; i++)
    wave_job_init(&jobs[i], r, p, members[i], &lock, &wave_done);
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
    run_child(&jobs[i].run, p, members[i]);
  for (size_t i = 0; i < n; i++) {
    cal_sink_merge(r->sink, &jobs[i].sink);
    r->sweeps_done += jobs[i].run.sweeps_done - done_before;
  }
  pthread_mutex_destroy(&lock);
  free(jobs);
}

/* ---- devices ---------------------------------------------------------- */

int cal_select_devices(cal_run *r, loader_plugin *p, runtime_device_list *devices, size_t **sel,
                       size_t *nsel) {
  char why[1200];
  *sel = NULL;
  *nsel = 0;
  if (runtime_devices_list_isolated(r->set->cfg, p, r->set->cfg->plugin_timeout_seconds, devices,
                                    why, sizeof why) != 0) {
    cal_add_failure(r, p->backend, NULL, 0, NULL, why, NULL);
    return -1;
  }
  *sel = calloc(devices->count + 1, sizeof **sel);
  if (*sel && devices->count && /* none here: a skip, whatever the selection names */
      runtime_devices_selected(r->set->cfg, p->backend, devices, *sel, nsel, why, sizeof why) !=
          0) {
    cal_add_failure(r, p->backend, NULL, 0, NULL, why, NULL);
    *nsel = 0;
    return 1;
  }
  return 0;
}

void cal_note_no_device(cal_run *r, const loader_plugin *p) {
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

/* A device backend's selected devices, listed (in a child) before any
 * sweep of the run starts, so that the progress total counts their sweeps
 * from the first line. */
typedef struct cal_listed {
  int st; /* cal_select_devices' status; -1: listing failed (a failure recorded) */
  runtime_device_list devices;
  size_t *sel, nsel; /* the selected devices with sweeps in this run's shard */
} cal_listed;

/* Lists p's devices into *l and adds their sweeps to the run's total. */
static void list_devices(cal_run *r, loader_plugin *p, cal_listed *l) {
  l->st = cal_select_devices(r, p, &l->devices, &l->sel, &l->nsel);
  if (l->st < 0)
    return;
  if (!l->sel)
    cal_add_failure(r, p->backend, NULL, 0, NULL, "out of memory", NULL);
  else if (l->st == 0 && !l->devices.count)
    cal_note_no_device(r, p);
  size_t kept = 0;
  for (size_t i = 0; i < l->nsel; i++) {
    r->cur.device = &l->devices.items[l->sel[i]];
    size_t n = cal_sweeps_of(r, p);
    r->sweeps_total += n;
    if (n)
      l->sel[kept++] = l->sel[i];
  }
  l->nsel = kept;
  r->cur.device = NULL;
}

/* A device backend's selected devices (listed beforehand: list_devices),
 * one child per device ([plugin NAME] devices), in waves of devices that
 * do not share hardware (devices.h): the members of a wave at once, the
 * waves one after the other; a device on the CPUs (PoCL) is alone in its
 * wave. */
static void calibrate_devices(cal_run *r, loader_plugin *p, const cal_listed *l) {
  size_t nsel = l->nsel;
  const runtime_device **devs = calloc(nsel + 1, sizeof *devs);
  const runtime_device **members = calloc(nsel + 1, sizeof *members); /* a wave: any size */
  size_t *wave = calloc(nsel + 1, sizeof *wave);
  size_t waves = 0;
  if (devs && members && wave) {
    for (size_t i = 0; i < nsel; i++)
      devs[i] = &l->devices.items[l->sel[i]];
    waves = runtime_devices_schedule(devs, nsel, wave);
  } else if (nsel) {
    cal_add_failure(r, p->backend, NULL, 0, NULL, "out of memory", NULL);
  }
  for (size_t w = 0; w < waves && !*cal_cancel_flag(); w++) {
    size_t n = 0;
    for (size_t i = 0; i < nsel; i++)
      if (wave[i] == w)
        members[n++] = devs[i];
    run_wave(r, p, members, n);
  }
  free(devs);
  free(members);
  free(wave);
}

/* ---- the run ---------------------------------------------------------- */

/* Whether plugin p takes part in this pass's sweeps. */
static int runs_plugin(cal_run *r, loader_plugin *p) {
  const calibrate_options *o = r->set->o;
  if (!p->loaded || !base_str_allowed(o->plugins, o->plugin_count, NULL, 0, p->backend))
    return 0;
  if (o->shard.count > 1 && !runtime_devices_supported(p) && !cal_sweeps_of(r, p))
    return 0; /* every item of this plugin is another shard's */
  return !r->pass.only_keys || cal_pass_keys_of(r, p->backend) > 0;
}

void cal_run_plugins(cal_run *r) {
  size_t n = r->set->plugins.count;
  loader_plugin *const *plugins = r->set->plugins.items;
  cal_listed *listed = calloc(n + 1, sizeof *listed);
  if (!listed) {
    cal_add_failure(r, "calhost", NULL, 0, NULL, "out of memory", NULL);
    return;
  }
  /* the device backends' devices first: the total is then known */
  for (size_t i = 0; i < n && !*cal_cancel_flag(); i++)
    if (runtime_devices_supported(plugins[i]) && runs_plugin(r, plugins[i]))
      list_devices(r, plugins[i], &listed[i]);
  for (size_t i = 0; i < n && !*cal_cancel_flag(); i++) {
    if (!runs_plugin(r, plugins[i]))
      continue;
    if (!runtime_devices_supported(plugins[i]))
      run_child(r, plugins[i], NULL);
    else if (listed[i].st >= 0)
      calibrate_devices(r, plugins[i], &listed[i]);
  }
  for (size_t i = 0; i < n; i++) {
    runtime_device_list_free(&listed[i].devices);
    free(listed[i].sel);
  }
  free(listed);
  if (cal_cancel_signal() && !r->interrupted)
    r->interrupted = cal_cancel_signal();
}

/* Plugins' entry points run in this process while they load
 * (negotiation): whatever they print on stdout goes to stderr, so the
 * report on stdout stays clean. Returns the saved stdout, or -1. */
static int stdout_aside(FILE *out) {
  if (out != stdout)
    return -1;
  fflush(stdout);
  int saved = dup(STDOUT_FILENO);
  if (saved >= 0)
    dup2(STDERR_FILENO, STDOUT_FILENO);
  return saved;
}

static void stdout_back(int *saved) {
  if (*saved < 0)
    return;
  fflush(stdout);
  dup2(*saved, STDOUT_FILENO);
  close(*saved);
  *saved = -1;
}

int cal_execute(const calibrate_options *o, const cal_mode *m, void *mode_state) {
  cal_setup set;
  cal_sink sink;
  cal_run run;
  cal_run *r = &run;
  memset(&set, 0, sizeof set);
  memset(&sink, 0, sizeof sink);
  memset(r, 0, sizeof *r);
  set.o = o;
  set.cfg = o->config;
  set.out = o->out ? o->out : stdout;
  set.err = o->err ? o->err : stderr;
  set.command = m->command;
  set.started = sweep_now();
  set.bar = !o->quiet && !o->json && o->progress != 0 && base_text_cursor_ok(set.err);
  r->set = &set;
  r->sink = &sink;
  r->mode = m;
  r->mode_state = mode_state;
  r->pass.force = o->force;

  /* SIGINT, SIGTERM and SIGHUP (the terminal went away) stop the run; the
   * finished work is committed and the exit status is 128 + the signal */
  cal_signals saved_signals;
  cal_signals_catch(&saved_signals);
  int saved_stdout = stdout_aside(set.out);

  char err[4608];
  int print = 0;
  calstore_status store_failed = CALSTORE_OK; /* the store would not open: --json says so */
  int status = cal_setup_open(r, &set, m, &print, &store_failed, err, sizeof err);
  if (!status) {
    status = m->run(r);
    print = 1;
  }
  stdout_back(&saved_stdout);
  if (print)
    m->print(r, status);
  if (store_failed != CALSTORE_OK && o->json) /* no run report: the reason, in JSON */
    base_json_status_message(set.out, calstore_status_name(store_failed), err);
  cal_signals_restore(&saved_signals);
  cal_sink_free(&sink);
  cal_cursor_free(&r->cur);
  cal_setup_close(&set);
  return status;
}
