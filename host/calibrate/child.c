/*
 * child.c: what runs in the forked child of one plugin (run.h), as a
 * pipeline per (workload, target) item: create the plugin instance with
 * its [plugin NAME] settings; for each item build and judge its key (the
 * binding's one rule), remember it (a key built again by a later target
 * or workload is calibrated once), ask the mode what its sweep measures
 * (cal_mode.choose: the search, one explicit policy, a skip), give it its
 * share of the plugin's time budget, run the measurement engine's sweep
 * and send every outcome to the parent as framed records (isolate/codec.h). The
 * only place the driver runs plugin code.
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
#include "warm.h"

/* An exact key built in this child, remembered so that it is calibrated
 * once, at its first item in the run's order. */
typedef struct built_rec {
  size_t workload;
  uint32_t thread_count, target_threads;
  const char *operator_name; /* the configuration's */
  char *model_digest, *processor;
} built_rec;

typedef struct child_ctx {
  cal_run *r;
  loader_plugin *p;
  calhost_plugin_instance *inst;
  int fd;
  isolate_proto_buf buf;
  size_t workload; /* the item in progress */
  uint32_t threads;
  sweep_recording *rec;   /* --record: this sweep's recording, or NULL */
  double plugin_deadline; /* 0: no budget */
  size_t sweeps_left;     /* this child's selected items not yet reached */
  size_t pass_left;       /* a pass limited to keys: this plugin's not yet swept */
  built_rec *built;       /* grows: every key of the run is remembered */
  size_t nbuilt, built_cap;
} child_ctx;

/* One (workload, target) item of the child. */
typedef struct child_item {
  const config_workload *cw;
  calhost_workload w;
  calhost_target tg;
  int mine;         /* in this run's shard, and not reported by an earlier child */
  size_t left_here; /* this child's selected items left, this one included */
} child_item;

/* The child's run: the plugin's is_cancelled reads its deadline. A child
 * process has one thread, so one run. */
static const cal_run *g_child_run;

/* ---- records to the parent -------------------------------------------- */

static void send(child_ctx *c) {
  isolate_proto_send(c->fd, &c->buf);
}

static void child_skip(child_ctx *c, const char *reason, const calhost_built_key *k) {
  isolate_rec_put_skipped(&c->buf, (isolate_rec_item){c->workload, c->threads}, reason, k);
  send(c);
}

static void child_fail(child_ctx *c, const char *message) {
  isolate_rec_put_failed(&c->buf, (isolate_rec_item){c->workload, c->threads}, message);
  send(c);
}

/* ---- the engine's hooks ----------------------------------------------- */

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

static void child_candidate(void *user, uint32_t index, uint32_t ordinal, uint32_t total,
                            const char *policy) {
  child_ctx *c = user;
  isolate_rec_put_candidate(&c->buf, (isolate_rec_item){c->workload, c->threads}, index, ordinal,
                            total, policy);
  send(c);
}

static void child_candidate_end(void *user) {
  child_ctx *c = user;
  isolate_rec_put_empty(&c->buf, CALHOST_REC_CANDIDATE_END);
  send(c);
}

static const char *child_take_error(void *user) {
  child_ctx *c = user;
  return loader_services_take_error(&c->p->services_ctx);
}

/* ---- the instance ----------------------------------------------------- */

/* The protocol version first, then the instance with the plugin's
 * [plugin NAME] settings and the plugin's time budget (it starts after its
 * first create(); the children started again after a crash go on with it:
 * the parent keeps it). Returns 0, or -1 after reporting the failure. */
static int child_start(child_ctx *c) {
  cal_run *r = c->r;
  const calhost_property *settings;
  size_t setting_count;
  char why[1024];
  runtime_binding_plugin_settings(r->set->cfg, c->p->backend, &settings, &setting_count);
  isolate_rec_put_hello(&c->buf, c->p->backend);
  send(c);
  calhost_status st = c->p->vtable.create(&c->p->services, settings, setting_count, &c->inst);
  if (st != CALHOST_OK || !c->inst) {
    runtime_binding_create_failure(r->set->cfg, c->p, st == CALHOST_OK ? CALHOST_ERROR : st, 1, why,
                                   sizeof why);
    isolate_rec_put_plugin_failed(&c->buf, why);
    send(c);
    return -1;
  }
  processor_pin_thread(r->set->targets.cpus, r->set->targets.cpu_count, NULL, 0);
  c->plugin_deadline = r->cur.plugin_deadline;
  double budget = config_plugin_time_budget(r->set->cfg, c->p->backend); /* its own, or shared */
  if (c->plugin_deadline == 0 && budget > 0) {
    c->plugin_deadline = sweep_now() + budget;
    isolate_rec_put_budget(&c->buf, c->plugin_deadline);
    send(c);
  }
  c->sweeps_left = cal_sweeps_of(r, c->p);
  c->pass_left = cal_pass_keys_of(r, c->p->backend);
  return 0;
}

/* ---- one item: key, choice, budget, sweep ----------------------------- */

/* The item's key, built and judged by the binding's one rule (built twice:
 * a key must be a function of the workload and the target). Returns 0
 * with *k (valid until the plugin's next call), or -1 after reporting an
 * item of this shard (unsupported: a skip; otherwise a failure). */
static int build_key(child_ctx *c, const child_item *it, calhost_built_key *k) {
  char detail[1024], why[1200];
  calhost_status st = CALHOST_OK;
  runtime_binding_key_defect d =
      runtime_binding_build_key(c->p, c->inst, &it->w, &it->tg, 1, k, &st, detail, sizeof detail);
  if (d == RUNTIME_BINDING_KEY_USABLE)
    return 0;
  if (d == RUNTIME_BINDING_KEY_NOT_DETERMINISTIC) /* a failed second call's message: not kept */
    loader_plugin_take_error(c->p);
  if (!it->mine)
    return -1;
  if (d == RUNTIME_BINDING_KEY_UNSUPPORTED) {
    snprintf(why, sizeof why, "unsupported%s%s", detail[0] ? ": " : "", detail);
    child_skip(c, why, NULL);
    return -1;
  }
  if (d == RUNTIME_BINDING_KEY_BUILD_FAILED)
    snprintf(why, sizeof why, "build_key failed: %s%s%s", calhost_status_name(st),
             detail[0] ? ": " : "", detail);
  else if (d == RUNTIME_BINDING_KEY_NOT_DETERMINISTIC)
    snprintf(why, sizeof why,
             "build_key is not deterministic: two calls for the same workload and target gave %s",
             detail);
  else
    snprintf(why, sizeof why, "%s", detail);
  child_fail(c, why);
  return -1;
}

/* Remembers key k of the item. Returns 0 when it is new; 1 when an earlier
 * item built it (a backend that caps its thread count, two workloads of
 * the same operator and model: calibrated once, at its first item; this
 * item is skipped); -1 out of memory (a key not remembered could be
 * calibrated twice: the item fails). */
static int remember_key(child_ctx *c, const child_item *it, const calhost_built_key *k) {
  cal_run *r = c->r;
  const char *digest = k->model_digest ? k->model_digest : "";
  const char *processor = k->processor ? k->processor : "";
  char why[600];
  for (size_t j = 0; j < c->nbuilt; j++) {
    const built_rec *b = &c->built[j];
    if (b->thread_count != k->thread_count || strcmp(b->operator_name, it->cw->operator_name) ||
        strcmp(b->model_digest, digest) || strcmp(b->processor, processor))
      continue;
    if (b->workload == c->workload)
      snprintf(why, sizeof why, "same exact key as threads=%u (the plugin uses %u thread%s)",
               b->target_threads, k->thread_count, k->thread_count == 1 ? "" : "s");
    else
      snprintf(why, sizeof why,
               "same exact key as workload %.200s threads=%u (the same operator and model)",
               r->set->cfg->workloads[b->workload].name, b->target_threads);
    if (it->mine)
      child_skip(c, why, r->mode->duplicate_keyed ? k : NULL);
    return 1;
  }
  built_rec *grown = base_array_grow(c->built, c->nbuilt, &c->built_cap, sizeof *grown, 32);
  if (grown) {
    c->built = grown;
    built_rec *b = &grown[c->nbuilt];
    *b = (built_rec){c->workload,           k->thread_count, it->tg.thread_count,
                     it->cw->operator_name, strdup(digest),  strdup(processor)};
    if (b->model_digest && b->processor) {
      c->nbuilt++;
      return 0;
    }
    free(b->model_digest);
    free(b->processor);
  }
  if (it->mine)
    child_fail(c, "out of memory: the key cannot be remembered (keys are calibrated once)");
  return -1;
}

/* The sweep's deadline: its share of what is left of the plugin's time
 * budget (0: no budget). Returns 0, or -1 when the budget is spent. */
static int sweep_deadline(child_ctx *c, const child_item *it, double *deadline) {
  *deadline = 0;
  if (c->plugin_deadline <= 0)
    return 0;
  double now = sweep_now();
  if (now >= c->plugin_deadline)
    return -1;
  /* a pass limited to some keys shares the budget among them */
  size_t share = c->r->pass.only_keys ? (c->pass_left ? c->pass_left-- : 1) : it->left_here;
  *deadline = now + (c->plugin_deadline - now) / (double)(share ? share : 1);
  return 0;
}

/* --record: the metadata of a sweep's space file and its recording. */
static void record_begin(child_ctx *c, sweep_recording *rec, const child_item *it,
                         const char *processor, char meta[9][320], const char *metap[9]) {
  cal_run *r = c->r;
  const config_workload *cw = it->cw;
  char path[4096], name[256], shape[200] = "";
  if (!r->set->o->record_path ||
      cal_record_path(r, c->p->backend, c->workload,
                      r->cur.device ? (long)r->cur.device->index : -1, it->tg.thread_count, path,
                      sizeof path, name, sizeof name) != 0)
    return;
  for (size_t d = 0; d < cw->shape_rank; d++)
    snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld", d ? "x" : "",
             (long long)cw->shape[d]);
  snprintf(meta[0], 320, "plugin %s", c->p->backend);
  snprintf(meta[1], 320, "implementation %s", c->p->implementation_version);
  snprintf(meta[2], 320, "workload %s", cw->name);
  snprintf(meta[3], 320, "operator %s", cw->operator_name);
  snprintf(meta[4], 320, "shape %s", shape);
  snprintf(meta[5], 320, "dtype %s", it->w.dtype);
  snprintf(meta[6], 320, "threads %u", it->tg.thread_count);
  snprintf(meta[7], 320, "processor %.300s", processor);
  snprintf(meta[8], 320, "rigor %s", r->set->rigor_name);
  for (int m = 0; m < 9; m++)
    metap[m] = meta[m];
  sweep_recording_init(rec, path, name, metap, 9);
  c->rec = rec;
}

/* The engine's request of the item's sweep: the search over the plugin's
 * candidates, or the one explicit policy (compared fully, no pruning),
 * without the policies that killed an earlier child in this sweep
 * (avoid/avoid_why: room for CAL_SWEEP_CRASHES + CAL_MAX_HANGS). */
static void sweep_request_of(child_ctx *c, const child_item *it, const cal_key_plan *plan,
                             double deadline, const char **avoid, const char **avoid_why,
                             sweep_request *req) {
  cal_run *r = c->r;
  *req = (sweep_request){.vtable = &c->p->vtable,
                         .abi_version = c->p->abi_version,
                         .instance = c->inst,
                         .workload = &it->w,
                         .target = &it->tg,
                         .params = r->set->params,
                         .deadline = deadline,
                         .max_policy_length = CALHOST_POLICY_MAX_LENGTH};
  req->strategy = (search_strategy)r->set->cfg->strategy;
  req->budget_evaluations = r->set->cfg->budget_evaluations;
  req->budget_seconds = r->set->cfg->budget_seconds;
  req->hooks.user = c;
  req->hooks.candidate_start = child_candidate;
  req->hooks.candidate_end = child_candidate_end;
  req->hooks.take_plugin_error = child_take_error;
  req->hooks.search_start = child_search_start;
  req->hooks.evaluated = child_evaluated;
  if (plan->explicit_policy) {
    req->policies = &plan->explicit_policy;
    req->policy_count = 1;
    req->params.prune = 0;
    req->params.halving = 0;
  }
  const cal_cursor *cur = &r->cur;
  for (size_t j = 0; j < cur->crash_count && req->avoid_count < CAL_SWEEP_CRASHES + CAL_MAX_HANGS;
       j++)
    if (cur->crashes[j].every_sweep ||
        (cur->crashes[j].workload == c->workload && cur->crashes[j].threads == c->threads)) {
      avoid[req->avoid_count] = cur->crashes[j].policy;
      avoid_why[req->avoid_count++] = cur->crashes[j].reason;
    }
  req->avoid_policies = avoid;
  req->avoid_reasons = avoid_why;
}

/* Runs the item's sweep (key kc, copied) and sends its result, after the
 * outcome of its --record. */
static void run_sweep(child_ctx *c, const child_item *it, const sweep_record_key *kc,
                      const cal_key_plan *plan, double deadline) {
  const char *avoid[CAL_SWEEP_CRASHES + CAL_MAX_HANGS],
      *avoid_why[CAL_SWEEP_CRASHES + CAL_MAX_HANGS];
  sweep_request req;
  sweep_request_of(c, it, plan, deadline, avoid, avoid_why, &req);
  /* the warm start: the store's policies of this kernel from other
   * devices (warm.h), validated by the plugin in the sweep */
  cal_warm warm = {0};
  if (!plan->explicit_policy && !c->r->set->o->no_warm_start &&
      cal_warm_collect(c->r->set->store, c->p->backend, it->cw->operator_name, kc, &warm) == 0) {
    req.warm_policies = (const char *const *)warm.policies;
    req.warm_count = warm.count;
  }
  sweep_recording rec;
  char meta[9][320];
  const char *metap[9];
  if (!plan->explicit_policy)
    record_begin(c, &rec, it, kc->processor, meta, metap);
  c->r->cur.child_deadline = deadline;
  sweep_result res;
  sweep_run(&req, &res);
  cal_warm_free(&warm);
  c->r->cur.child_deadline = 0;
  if (c->rec) { /* the parent reports the outcome with the sweep's result */
    int failed = sweep_recording_finish(c->rec) != 0;
    isolate_rec_put_recording(&c->buf, failed ? c->rec->error : "");
    send(c);
    c->rec = NULL;
  }
  sweep_record_put_result_record(&c->buf, (isolate_rec_item){c->workload, c->threads}, kc, &res);
  if (isolate_proto_send(c->fd, &c->buf) != 0)
    child_fail(c, "the sweep's result could not be sent to calhost (its record is too large)");
  sweep_result_free(&res);
}

/* The item's key chosen for a sweep by the mode: copied, timed, swept. */
static void sweep_key(child_ctx *c, const child_item *it, const calhost_built_key *k,
                      cal_key_plan *plan) {
  /* The key stays valid only until the next plugin call: copy it. */
  sweep_record_key kc;
  double deadline;
  if (base_key_copy(k, &kc) != 0)
    child_fail(c, "out of memory");
  else if (sweep_deadline(c, it, &deadline) != 0)
    child_fail(c, "time budget exhausted before this sweep");
  else
    run_sweep(c, it, &kc, plan, deadline);
  base_key_free(&kc);
  calstore_lookup_result_free(&plan->stored);
}

/* One item through the pipeline: key, remembered, chosen, swept. */
static void child_item_run(child_ctx *c, child_item *it) {
  cal_run *r = c->r;
  calhost_built_key k;
  if (build_key(c, it, &k) != 0 || remember_key(c, it, &k) != 0 || !it->mine)
    return;
  cal_key_plan plan = {0};
  switch (r->mode->choose(r, c->workload, it->cw->operator_name, &k, &plan)) {
  case CAL_KEY_IGNORE:
    return;
  case CAL_KEY_SKIP:
    child_skip(c, plan.why, &k);
    calstore_lookup_result_free(&plan.stored);
    return;
  case CAL_KEY_SWEEP:
    sweep_key(c, it, &k, &plan);
    return;
  }
}

/* The items of one selected workload (index i of the selection). Another
 * shard's item is only keyed, so that an item of this shard with the same
 * exact key is skipped as in the unsharded run; an item a child that died
 * already reported is only keyed too. */
static void child_workload(child_ctx *c, size_t i) {
  cal_run *r = c->r;
  child_item it = {.cw = &r->set->cfg->workloads[r->set->workloads[i]]};
  if (!runtime_binding_serves(c->p, it.cw->operator_name))
    return;
  runtime_binding_workload(it.cw, &it.w);
  c->workload = r->set->workloads[i];
  for (size_t t = 0; t < cal_targets_per_workload(r); t++) {
    it.mine = cal_item_selected(r, c->p, c->workload, t);
    it.left_here = it.mine ? c->sweeps_left-- : 0;
    if (r->cur.device) /* one target per device: the first thread count feeds it */
      runtime_binding_device_target(&r->set->targets, t, r->cur.device->identity,
                                    r->cur.device->index, &it.tg);
    else
      runtime_binding_target(&r->set->targets, t, &it.tg);
    c->threads = it.tg.thread_count;
    if (it.mine && cal_result_known(r, c->workload, c->threads))
      it.mine = 0;
    child_item_run(c, &it);
  }
  isolate_rec_put_workload_done(&c->buf, c->workload);
  send(c);
}

int cal_child_main(void *user, int fd) {
  cal_run *r = user;
  child_ctx c = {.r = r, .p = r->cur.plugin, .fd = fd};
  g_child_run = r;
  if (child_start(&c) != 0) {
    isolate_proto_buf_free(&c.buf);
    return 3;
  }
  for (size_t i = 0; i < r->set->workload_count; i++)
    child_workload(&c, i);
  for (size_t j = 0; j < c.nbuilt; j++) {
    free(c.built[j].model_digest);
    free(c.built[j].processor);
  }
  free(c.built);
  c.p->vtable.destroy(c.inst);
  isolate_rec_put_empty(&c.buf, CALHOST_REC_DONE);
  send(&c);
  isolate_proto_buf_free(&c.buf);
  return 0;
}

/* Budget as the plugin's is_cancelled sees it (in the child: its run's
 * deadline, whichever thread of a wave forked it). */
int cal_budget_over(void *user) {
  (void)user;
  const cal_run *r = g_child_run;
  return r && r->cur.child_deadline > 0 && sweep_now() > r->cur.child_deadline + 0.5;
}
