/*
 * child.c: what runs in the forked child of one plugin during calibrate
 * (run.h): create the plugin instance with its [plugin NAME] settings, build
 * each (workload, target) key (on the run's current device, if any), skip duplicates and keys
 * already calibrated, run the measurement engine's sweep (in verify mode: the stored exact
 * profile's policy against the default, as explicit candidates; in its
 * recalibration: only the failed keys), and send every outcome to the parent
 * as framed records (records.h). The only place calibrate runs plugin code.
 */
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/str.h"
#include "base/text.h"
#include "isolate/isolate.h"
#include "runtime/binding.h"
#include "sweep/recording.h"

typedef struct child_ctx {
  cal_run *r;
  int fd;
  size_t workload;
  uint32_t threads;
  isolate_proto_buf buf;
  sweep_recording *rec; /* --record: this sweep's recording, or NULL */
} child_ctx;

static void child_search_start(void *user, const sweep_search_info *info) {
  child_ctx *c = user;
  if (c->rec)
    sweep_recording_start(c->rec, info);
}

static void child_evaluated(void *user, const sweep_evaluation *ev) {
  child_ctx *c = user;
  if (c->rec)
    sweep_recording_add(c->rec, ev);
}

/* --record: the metadata of a sweep's space file and its recording. */
static void record_begin(child_ctx *c, sweep_recording *rec, const config_workload *cw,
                         const calhost_workload *w, uint32_t threads, const char *processor,
                         char meta[9][320], const char *metap[9]) {
  cal_run *r = c->r;
  char path[4096], name[256], shape[200] = "";
  if (!r->o->record_path || cal_record_path(r, r->cur->backend, c->workload,
                                            r->cur_device ? (long)r->cur_device->index : -1,
                                            threads, path, sizeof path, name, sizeof name) != 0)
    return;
  for (size_t d = 0; d < cw->shape_rank; d++)
    snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld", d ? "x" : "",
             (long long)cw->shape[d]);
  snprintf(meta[0], 320, "plugin %s", r->cur->backend);
  snprintf(meta[1], 320, "implementation %s", r->cur->implementation_version);
  snprintf(meta[2], 320, "workload %s", cw->name);
  snprintf(meta[3], 320, "operator %s", cw->operator_name);
  snprintf(meta[4], 320, "shape %s", shape);
  snprintf(meta[5], 320, "dtype %s", w->dtype);
  snprintf(meta[6], 320, "threads %u", threads);
  snprintf(meta[7], 320, "processor %.300s", processor);
  snprintf(meta[8], 320, "rigor %s", r->rigor_name);
  for (int m = 0; m < 9; m++)
    metap[m] = meta[m];
  sweep_recording_init(rec, path, name, metap, 9);
  c->rec = rec;
}

static void child_candidate(void *user, uint32_t index, uint32_t ordinal, uint32_t total,
                            const char *policy) {
  child_ctx *c = user;
  sweep_record_put_candidate(&c->buf, (sweep_record_item){c->workload, c->threads}, index, ordinal,
                             total, policy);
  isolate_proto_send(c->fd, &c->buf);
}

static void child_candidate_end(void *user) {
  child_ctx *c = user;
  sweep_record_put_candidate_end(&c->buf);
  isolate_proto_send(c->fd, &c->buf);
}

static const char *child_take_error(void *user) {
  child_ctx *c = user;
  return loader_services_take_error(&c->r->cur->services_ctx);
}

static void child_skip(child_ctx *c, const char *reason, const calhost_built_key *k) {
  sweep_record_put_skipped(&c->buf, (sweep_record_item){c->workload, c->threads}, reason, k);
  isolate_proto_send(c->fd, &c->buf);
}

static void child_fail(child_ctx *c, uint32_t type, const char *message) {
  if (type == CALHOST_REC_FAILED)
    sweep_record_put_failed(&c->buf, (sweep_record_item){c->workload, c->threads}, message);
  else
    sweep_record_put_plugin_failed(&c->buf, message);
  isolate_proto_send(c->fd, &c->buf);
}

/* The calibrated profile with this exact key in the store as read before
 * the child was forked (one index probe), or NULL; free with
 * calstore_lookup_result_free. */
static calstore_lookup_result *stored_exact(const cal_run *r, const char *op,
                                            const calhost_built_key *k) {
  runtime_binding_key key;
  if (runtime_binding_store_key(CALSTORE_KEY_EXACT, r->cur->backend, op,
                                r->cur->implementation_version, k->model_digest, k->processor,
                                k->thread_count, NULL, 0, &key) != 0)
    return NULL;
  calstore_lookup_result *res = NULL;
  if (calstore_get(r->store, &key.key, CALSTORE_SOURCE_CALIBRATED, &res, NULL) != CALSTORE_OK ||
      !res->profile)
    calstore_lookup_result_free(&res);
  runtime_binding_key_free(&key);
  return res;
}

/* Whether the key holds a calibrated profile already. Only saves the
 * sweep; the commit decides again against the file (put if absent). */
static int already_calibrated(const cal_run *r, const char *op, const calhost_built_key *k) {
  calstore_lookup_result *res = stored_exact(r, op, k);
  int have = res != NULL;
  calstore_lookup_result_free(&res);
  return have;
}

/* verify's measuring pass (not its recalibration, not calibrate) */
static int verify_measuring(const cal_run *r) {
  return r->o->verify && !r->recalibrating;
}

/* verify's recalibration: is this one of the keys to recalibrate? */
static int wanted_key(const cal_run *r, const char *backend, size_t workload, uint32_t thread_count,
                      const char *processor) {
  for (size_t i = 0; i < r->only_key_count; i++)
    if (r->only_keys[i].workload == workload && r->only_keys[i].thread_count == thread_count &&
        !strcmp(r->only_keys[i].backend, backend) &&
        (!r->only_keys[i].processor || !strcmp(r->only_keys[i].processor, processor)))
      return 1;
  return 0;
}

int cal_child_main(void *user, int fd) {
  cal_run *r = user;
  loader_plugin *p = r->cur;
  const calhost_plugin_vtable *vt = &p->vtable;
  child_ctx c = {.r = r, .fd = fd};
  char why[1024];
  const calhost_property *settings; /* [plugin NAME], as every instance gets them */
  size_t setting_count;
  runtime_binding_plugin_settings(r->cfg, p->backend, &settings, &setting_count);

  sweep_record_put_hello(&c.buf, p->backend); /* the protocol version first */
  isolate_proto_send(c.fd, &c.buf);

  calhost_plugin_instance *inst = NULL;
  calhost_status st = vt->create(&p->services, settings, setting_count, &inst);
  if (st != CALHOST_OK || !inst) {
    runtime_binding_create_failure(r->cfg, p, st == CALHOST_OK ? CALHOST_ERROR : st, 1, why,
                                   sizeof why);
    child_fail(&c, CALHOST_REC_PLUGIN_FAILED, why);
    isolate_proto_buf_free(&c.buf);
    return 3;
  }
  processor_pin_thread(r->targets.cpus, r->targets.cpu_count, NULL, 0);

  /* The plugin's time budget starts after its first create(); the children
   * started again after a crash go on with it (the parent keeps it). */
  double plugin_deadline = r->plugin_deadline;
  double budget = config_plugin_time_budget(r->cfg, r->cur->backend); /* its own, or the shared */
  if (plugin_deadline == 0 && budget > 0) {
    plugin_deadline = sweep_now() + budget;
    sweep_record_put_budget(&c.buf, plugin_deadline);
    isolate_proto_send(c.fd, &c.buf);
  }
  size_t sweeps_left = cal_sweeps_of(r, p);
  size_t recal_left = 0; /* verify --recalibrate: the budget is the failing keys' */
  for (size_t i = 0; r->recalibrating && i < r->only_key_count; i++)
    recal_left += !strcmp(r->only_keys[i].backend, p->backend);

  /* exact keys built in this run: a backend that caps its thread count
   * gives the same key for several targets, and two workloads of the same
   * operator and model (no model file, the same shape) give the same keys;
   * calibrate each key once, at its first item in the run's order (every
   * shard builds every item's key, so each shard skips the same items) */
  struct built_rec {
    size_t workload;
    uint32_t thread_count, target_threads;
    const char *operator_name; /* the configuration's */
    char *model_digest, *processor;
  } *built = NULL; /* grows: every key of the run is remembered */
  size_t nbuilt = 0, built_cap = 0;
  for (size_t i = 0; i < r->workload_count; i++) {
    const config_workload *cw = &r->cfg->workloads[r->workloads[i]];
    if (!runtime_binding_serves(p, cw->operator_name))
      continue;
    calhost_workload w;
    runtime_binding_workload(cw, &w);
    c.workload = r->workloads[i];
    for (size_t t = 0; t < cal_targets_per_workload(r); t++) {
      /* Another shard's item: only its key is built, so that an item of
       * this shard with the same exact key (a backend that caps its thread
       * count) is skipped as in the unsharded run. */
      int mine = cal_item_selected(r, p, c.workload, t);
      size_t left_here = mine ? sweeps_left-- : 0;
      calhost_target tg;
      if (r->cur_device) /* one target per device: the first thread count feeds it */
        runtime_binding_device_target(&r->targets, t, r->cur_device->identity, r->cur_device->index,
                                      &tg);
      else
        runtime_binding_target(&r->targets, t, &tg);
      c.threads = tg.thread_count;
      /* a child started again after one died in a candidate: the sweeps
       * already reported are only keyed (as another shard's items) */
      if (mine && cal_result_known(r, c.workload, c.threads))
        mine = 0;
      calhost_built_key k;
      runtime_binding_built_key_init(&k);
      st = vt->build_key(inst, &w, &tg, &k);
      if (st == CALHOST_UNSUPPORTED) {
        const char *m = loader_services_take_error(&p->services_ctx);
        snprintf(why, sizeof why, "unsupported%s%s", m ? ": " : "", m ? m : "");
        if (mine)
          child_skip(&c, why, NULL);
        continue;
      }
      if (st != CALHOST_OK) {
        const char *m = loader_services_take_error(&p->services_ctx);
        snprintf(why, sizeof why, "build_key failed: %s%s%s", calhost_status_name(st),
                 m ? ": " : "", m ? m : "");
        if (mine)
          child_fail(&c, CALHOST_REC_FAILED, why);
        continue;
      }
      if (!runtime_binding_key_usable(&k, why, sizeof why)) {
        if (mine)
          child_fail(&c, CALHOST_REC_FAILED, why);
        continue;
      }
      /* A key must be a function of the workload and the target: one that
       * changes between calls would store a profile no lookup finds. The
       * key stays valid only until the next plugin call: copy it first. */
      sweep_record_key first;
      if (sweep_record_key_copy(&k, &first) == 0) {
        char diff[480] = "";
        calhost_built_key again;
        runtime_binding_built_key_init(&again);
        int differs = vt->build_key(inst, &w, &tg, &again) != CALHOST_OK ||
                      sweep_record_key_differs(&first, &again, diff, sizeof diff);
        sweep_record_key_free(&first);
        if (differs) {
          snprintf(why, sizeof why,
                   "build_key is not deterministic: two calls for the same workload and target "
                   "gave %s",
                   diff[0] ? diff : "a key, then a failure");
          if (mine)
            child_fail(&c, CALHOST_REC_FAILED, why);
          continue;
        }
        k = again;
      }
      const struct built_rec *dup = NULL;
      for (size_t j = 0; j < nbuilt && !dup; j++)
        if (built[j].thread_count == k.thread_count &&
            !strcmp(built[j].operator_name, cw->operator_name) &&
            !strcmp(built[j].model_digest, k.model_digest ? k.model_digest : "") &&
            !strcmp(built[j].processor, k.processor ? k.processor : ""))
          dup = &built[j];
      if (dup) {
        if (dup->workload == c.workload)
          snprintf(why, sizeof why, "same exact key as threads=%u (the plugin uses %u thread%s)",
                   dup->target_threads, k.thread_count, k.thread_count == 1 ? "" : "s");
        else
          snprintf(why, sizeof why,
                   "same exact key as workload %.200s threads=%u (the same operator and model)",
                   r->cfg->workloads[dup->workload].name, dup->target_threads);
        /* verify judges the key once, at its first target: no key here */
        if (mine)
          child_skip(&c, why, verify_measuring(r) ? NULL : &k);
        continue;
      }
      struct built_rec *grown = base_array_grow(built, nbuilt, &built_cap, sizeof *built, 32);
      if (grown) {
        built = grown;
        struct built_rec *b = &built[nbuilt];
        *b = (struct built_rec){c.workload,
                                k.thread_count,
                                tg.thread_count,
                                cw->operator_name,
                                strdup(k.model_digest ? k.model_digest : ""),
                                strdup(k.processor ? k.processor : "")};
        if (b->model_digest && b->processor) {
          nbuilt++;
        } else {
          free(b->model_digest);
          free(b->processor);
          grown = NULL;
        }
      }
      if (!grown) { /* a key not remembered could be calibrated twice: say so */
        if (mine)
          child_fail(&c, CALHOST_REC_FAILED,
                     "out of memory: the key cannot be remembered (keys are calibrated once)");
        continue;
      }
      if (!mine)
        continue;
      if (r->recalibrating &&
          !wanted_key(r, p->backend, c.workload, k.thread_count, k.processor ? k.processor : ""))
        continue; /* verify --recalibrate: only the keys that failed */
      /* verify: the stored exact profile's policy is the one candidate */
      calstore_lookup_result *stored = NULL;
      const char *explicit_policy = NULL;
      if (verify_measuring(r)) {
        if (!(stored = stored_exact(r, cw->operator_name, &k))) {
          child_skip(&c, "no stored exact profile of this implementation", &k);
          continue;
        }
        explicit_policy = stored->profile->policy;
      } else if (!r->force && already_calibrated(r, cw->operator_name, &k)) {
        child_skip(&c, "already calibrated (use --force to recalibrate)", &k);
        continue;
      }
      /* The key stays valid only until the next plugin call: copy it. */
      sweep_record_key kc;
      if (sweep_record_key_copy(&k, &kc) != 0) {
        calstore_lookup_result_free(&stored);
        child_fail(&c, CALHOST_REC_FAILED, "out of memory");
        continue;
      }
      double now = sweep_now();
      double deadline = 0;
      if (plugin_deadline > 0) {
        if (now >= plugin_deadline) {
          sweep_record_key_free(&kc);
          calstore_lookup_result_free(&stored);
          child_fail(&c, CALHOST_REC_FAILED, "time budget exhausted before this sweep");
          continue;
        }
        size_t share = r->recalibrating ? (recal_left ? recal_left-- : 1) : left_here;
        deadline = now + (plugin_deadline - now) / (double)(share ? share : 1);
      }
      r->child_deadline = deadline;
      sweep_request req = {.vtable = vt,
                           .abi_version = p->abi_version,
                           .instance = inst,
                           .workload = &w,
                           .target = &tg,
                           .params = r->params,
                           .deadline = deadline,
                           .max_policy_length = CALHOST_POLICY_MAX_LENGTH};
      req.strategy = (search_strategy)r->cfg->strategy;
      req.budget_evaluations = r->cfg->budget_evaluations;
      req.budget_seconds = r->cfg->budget_seconds;
      req.hooks.user = &c;
      req.hooks.candidate_start = child_candidate;
      req.hooks.candidate_end = child_candidate_end;
      req.hooks.take_plugin_error = child_take_error;
      if (explicit_policy) { /* compare the two fully: no pruning */
        req.policies = &explicit_policy;
        req.policy_count = 1;
        req.params.prune = 0;
        req.params.halving = 0;
      }
      /* the policies that killed an earlier child in this sweep */
      const char *avoid[CAL_SWEEP_CRASHES + CAL_MAX_HANGS],
          *avoid_why[CAL_SWEEP_CRASHES + CAL_MAX_HANGS];
      for (size_t j = 0; j < r->crash_count && req.avoid_count < CAL_SWEEP_CRASHES + CAL_MAX_HANGS;
           j++)
        if (r->crashes[j].every_sweep ||
            (r->crashes[j].workload == c.workload && r->crashes[j].threads == c.threads)) {
          avoid[req.avoid_count] = r->crashes[j].policy;
          avoid_why[req.avoid_count++] = r->crashes[j].reason;
        }
      req.avoid_policies = avoid;
      req.avoid_reasons = avoid_why;
      req.hooks.search_start = child_search_start;
      req.hooks.evaluated = child_evaluated;
      sweep_recording rec;
      char meta[9][320];
      const char *metap[9];
      if (!explicit_policy)
        record_begin(&c, &rec, cw, &w, tg.thread_count, kc.processor, meta, metap);
      sweep_result res;
      sweep_run(&req, &res);
      if (c.rec) { /* the parent reports the outcome with the sweep's result */
        int failed = sweep_recording_finish(c.rec) != 0;
        sweep_record_put_recording(&c.buf, failed ? c.rec->error : "");
        isolate_proto_send(c.fd, &c.buf);
        c.rec = NULL;
      }
      calstore_lookup_result_free(&stored);
      r->child_deadline = 0;
      sweep_record_put_result_record(&c.buf, (sweep_record_item){c.workload, c.threads}, &kc, &res);
      sweep_record_key_free(&kc);
      if (isolate_proto_send(c.fd, &c.buf) != 0)
        child_fail(&c, CALHOST_REC_FAILED,
                   "the sweep's result could not be sent to calhost (its record is too large)");
      sweep_result_free(&res);
    }
    sweep_record_put_workload_done(&c.buf, c.workload);
    isolate_proto_send(c.fd, &c.buf);
  }
  for (size_t j = 0; j < nbuilt; j++) {
    free(built[j].model_digest);
    free(built[j].processor);
  }
  free(built);
  vt->destroy(inst);
  sweep_record_put_done(&c.buf);
  isolate_proto_send(c.fd, &c.buf);
  isolate_proto_buf_free(&c.buf);
  return 0;
}

/* Budget as the plugin's is_cancelled sees it (in the child). */
int cal_budget_over(void *user) {
  cal_run *r = user;
  return r->child_deadline > 0 && sweep_now() > r->child_deadline + 0.5;
}
