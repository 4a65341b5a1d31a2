/*
 * calibrate.c: the `calhost calibrate` driver (see calibrate.h): targets,
 * plugins, one forked child per plugin running its sweeps, batched commits
 * per workload, the portable rule, signals and the exit status. Output lives
 * in report.c.
 */
#include "calibrate.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/text.h"
#include "config/digest.h"
#include "isolate.h"
#include "run.h"
#include "verify.h"

/* ---- signals --------------------------------------------------------- */

static volatile sig_atomic_t g_cancel;
static volatile sig_atomic_t g_signal;

static void on_signal(int sig) {
  g_cancel = 1;
  g_signal = sig;
}

/* ---- small helpers ---------------------------------------------------- */

static char *dupstr(const char *s) {
  if (!s)
    return NULL;
  size_t n = strlen(s);
  char *d = malloc(n + 1);
  if (d)
    memcpy(d, s, n + 1);
  return d;
}

void cal_warn(cal_run *r, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  char **w = realloc(r->warnings, (r->warning_count + 1) * sizeof *w);
  if (!w)
    return;
  r->warnings = w;
  w[r->warning_count] = dupstr(buf);
  if (w[r->warning_count])
    r->warning_count++;
}

const char *cal_workload_name(const cal_run *r, size_t index) {
  return index < r->cfg->workload_count ? r->cfg->workloads[index].name : "?";
}

static cal_result *add_result(cal_run *r) {
  cal_result *n = realloc(r->results, (r->result_count + 1) * sizeof *n);
  if (!n)
    return NULL;
  r->results = n;
  cal_result *x = &n[r->result_count++];
  memset(x, 0, sizeof *x);
  x->backend = dupstr(r->cur ? r->cur->backend : NULL);
  x->implementation = dupstr(r->cur ? r->cur->implementation_version : NULL);
  return x;
}

static void add_failure(cal_run *r, const char *backend, const char *workload, uint32_t threads,
                        const char *candidate, const char *message, const char *output) {
  cal_failure *n = realloc(r->failures, (r->failure_count + 1) * sizeof *n);
  if (!n)
    return;
  r->failures = n;
  cal_failure *f = &n[r->failure_count++];
  f->backend = dupstr(backend);
  f->workload = dupstr(workload);
  f->threads = threads;
  f->candidate = dupstr(candidate);
  f->message = dupstr(message);
  f->output = output && *output ? dupstr(output) : NULL;
}

static int in_list(char *const *list, size_t n, const char *s) {
  for (size_t i = 0; i < n; i++)
    if (s && !strcmp(list[i], s))
      return 1;
  return 0;
}

static int plugin_serves(const calhost_plugin *p, const char *op) {
  for (size_t i = 0; i < p->operator_count; i++)
    if (!strcmp(p->operators[i], op))
      return 1;
  return 0;
}

static void fill_workload(const calhost_config_workload *w, calhost_workload *out) {
  memset(out, 0, sizeof *out);
  out->header.struct_type = CALHOST_STRUCT_WORKLOAD;
  out->header.struct_version = 1;
  out->header.struct_size = sizeof *out;
  out->name = w->name;
  out->operator_name = w->operator_name;
  out->dtype = w->dtype ? w->dtype : "float32";
  out->shape = w->shape;
  out->shape_rank = w->shape_rank;
  out->properties = w->properties;
  out->property_count = w->property_count;
  out->model_digest = w->model_digest; /* computed before the children fork (below) */
}

static void fill_target(const cal_run *r, size_t t, calhost_target *out) {
  memset(out, 0, sizeof *out);
  out->header.struct_type = CALHOST_STRUCT_TARGET;
  out->header.struct_version = 1;
  out->header.struct_size = sizeof *out;
  out->processor = r->targets.processor.description;
  out->thread_count = r->targets.items[t].thread_count;
  out->cpus = r->targets.items[t].cpus;
  out->cpu_count = r->targets.items[t].cpu_count;
  out->features = r->targets.processor.features;
}

/* ---- the child: one plugin's sweeps ----------------------------------- */

typedef struct child_ctx {
  cal_run *r;
  int fd;
  size_t workload;
  uint32_t threads;
  calhost_proto_buf buf;
} child_ctx;

static void child_send(child_ctx *c) {
  if (calhost_proto_finish(&c->buf) == 0)
    calhost_proto_write(c->fd, &c->buf);
}

static void child_candidate(void *user, uint32_t index, uint32_t ordinal, uint32_t total,
                            const char *policy) {
  child_ctx *c = user;
  calhost_proto_begin(&c->buf, CALHOST_REC_CANDIDATE);
  calhost_proto_put_u64(&c->buf, c->workload);
  calhost_proto_put_u64(&c->buf, c->threads);
  calhost_proto_put_u64(&c->buf, index);
  calhost_proto_put_u64(&c->buf, ordinal);
  calhost_proto_put_u64(&c->buf, total);
  calhost_proto_put_str(&c->buf, policy);
  child_send(c);
}

static const char *child_take_error(void *user) {
  child_ctx *c = user;
  return calhost_services_take_error(&c->r->cur->services_ctx);
}

static void child_skip(child_ctx *c, const char *reason, const calhost_built_key *k) {
  calhost_proto_begin(&c->buf, CALHOST_REC_SKIPPED);
  calhost_proto_put_u64(&c->buf, c->workload);
  calhost_proto_put_u64(&c->buf, c->threads);
  calhost_proto_put_str(&c->buf, reason);
  if (k)
    calhost_record_put_key(&c->buf, k->model_digest, k->processor, k->thread_count, k->structure,
                           k->structure_count);
  else
    calhost_record_put_key(&c->buf, NULL, NULL, 0, NULL, 0);
  child_send(c);
}

static void child_fail(child_ctx *c, uint32_t type, const char *message) {
  calhost_proto_begin(&c->buf, type);
  if (type == CALHOST_REC_FAILED) {
    calhost_proto_put_u64(&c->buf, c->workload);
    calhost_proto_put_u64(&c->buf, c->threads);
  }
  calhost_proto_put_str(&c->buf, message);
  child_send(c);
}

/* The calibrated profile with this exact key in the store as read before
 * the child was forked (one index probe), or NULL; free with
 * calstore_lookup_result_free. */
static calstore_lookup_result *stored_exact(const cal_run *r, const char *op,
                                            const calhost_built_key *k) {
  calstore_key key = {CALSTORE_KEY_EXACT,
                      r->cur->backend,
                      op,
                      r->cur->implementation_version,
                      k->model_digest,
                      k->processor,
                      k->thread_count,
                      NULL,
                      0};
  calstore_lookup_result *res = NULL;
  if (calstore_get(r->store, &key, CALSTORE_SOURCE_CALIBRATED, &res, NULL) != CALSTORE_OK ||
      !res->profile)
    calstore_lookup_result_free(&res);
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
static int wanted_key(const cal_run *r, const char *backend, size_t workload,
                      uint32_t thread_count) {
  for (size_t i = 0; i < r->only_key_count; i++)
    if (r->only_keys[i].workload == workload && r->only_keys[i].thread_count == thread_count &&
        !strcmp(r->only_keys[i].backend, backend))
      return 1;
  return 0;
}

static int key_usable(const calhost_built_key *k, char *why, size_t cap) {
  if (!k->model_digest || !*k->model_digest || !k->processor || !*k->processor ||
      k->thread_count < 1) {
    snprintf(why, cap, "build_key returned an incomplete exact key");
    return 0;
  }
  if (!k->structure || k->structure_count < 1) {
    snprintf(why, cap, "build_key returned no portable structure");
    return 0;
  }
  for (size_t i = 0; i < k->structure_count; i++)
    if (!k->structure[i].name || !k->structure[i].value || !*k->structure[i].name) {
      snprintf(why, cap, "build_key returned an empty structure property");
      return 0;
    }
  return 1;
}

static int copy_key(const calhost_built_key *k, calhost_record_key *out) {
  memset(out, 0, sizeof *out);
  out->model_digest = dupstr(k->model_digest);
  out->processor = dupstr(k->processor);
  out->thread_count = k->thread_count;
  out->structure = calloc(k->structure_count, sizeof *out->structure);
  if (!out->model_digest || !out->processor || !out->structure)
    goto bad;
  for (size_t i = 0; i < k->structure_count; i++) {
    out->structure[i].name = dupstr(k->structure[i].name);
    out->structure[i].value = dupstr(k->structure[i].value);
    out->structure_count = i + 1;
    if (!out->structure[i].name || !out->structure[i].value)
      goto bad;
  }
  return 0;
bad:
  calhost_record_key_free(out);
  return -1;
}

static int child_main(void *user, int fd) {
  cal_run *r = user;
  calhost_plugin *p = r->cur;
  const calhost_plugin_vtable *vt = &p->vtable;
  child_ctx c = {.r = r, .fd = fd};
  char why[1024];
  const calhost_config_plugin_section *sec = calhost_config_plugin_named(r->cfg, p->backend);

  calhost_proto_begin(&c.buf, CALHOST_REC_HELLO);
  calhost_proto_put_str(&c.buf, p->backend);
  child_send(&c);

  calhost_plugin_instance *inst = NULL;
  calhost_status st =
      vt->create(&p->services, sec ? sec->settings : NULL, sec ? sec->setting_count : 0, &inst);
  if (st != CALHOST_OK || !inst) {
    const char *m = calhost_services_take_error(&p->services_ctx);
    snprintf(why, sizeof why, "create failed: %s%s%s", calhost_status_name(st), m ? ": " : "",
             m ? m : "");
    child_fail(&c, CALHOST_REC_PLUGIN_FAILED, why);
    calhost_proto_buf_free(&c.buf);
    return 3;
  }
  calhost_processor_pin_thread(r->targets.cpus, r->targets.cpu_count, NULL, 0);

  double budget = r->cfg->time_budget_seconds;
  double plugin_deadline = budget > 0 ? calhost_sweep_now() + budget : 0;
  size_t sweeps_left = 0;
  for (size_t i = 0; i < r->workload_count; i++)
    if (plugin_serves(p, r->cfg->workloads[r->workloads[i]].operator_name))
      sweeps_left += r->targets.count;
  size_t recal_left = 0; /* verify --recalibrate: the budget is the failing keys' */
  for (size_t i = 0; r->recalibrating && i < r->only_key_count; i++)
    recal_left += !strcmp(r->only_keys[i].backend, p->backend);

  /* exact keys built in this run: a backend that caps its thread count
   * gives the same key for several targets; calibrate it once */
  struct built_rec {
    size_t workload;
    uint32_t thread_count, target_threads;
  } built[256];
  size_t nbuilt = 0;
  for (size_t i = 0; i < r->workload_count; i++) {
    const calhost_config_workload *cw = &r->cfg->workloads[r->workloads[i]];
    if (!plugin_serves(p, cw->operator_name))
      continue;
    calhost_workload w;
    fill_workload(cw, &w);
    c.workload = r->workloads[i];
    for (size_t t = 0; t < r->targets.count; t++, sweeps_left--) {
      calhost_target tg;
      fill_target(r, t, &tg);
      c.threads = tg.thread_count;
      calhost_built_key k;
      memset(&k, 0, sizeof k);
      k.header.struct_type = CALHOST_STRUCT_BUILT_KEY;
      k.header.struct_version = 1;
      k.header.struct_size = sizeof k;
      st = vt->build_key(inst, &w, &tg, &k);
      if (st == CALHOST_UNSUPPORTED) {
        const char *m = calhost_services_take_error(&p->services_ctx);
        snprintf(why, sizeof why, "unsupported%s%s", m ? ": " : "", m ? m : "");
        child_skip(&c, why, NULL);
        continue;
      }
      if (st != CALHOST_OK) {
        const char *m = calhost_services_take_error(&p->services_ctx);
        snprintf(why, sizeof why, "build_key failed: %s%s%s", calhost_status_name(st),
                 m ? ": " : "", m ? m : "");
        child_fail(&c, CALHOST_REC_FAILED, why);
        continue;
      }
      if (!key_usable(&k, why, sizeof why)) {
        child_fail(&c, CALHOST_REC_FAILED, why);
        continue;
      }
      uint32_t dup_of = 0;
      for (size_t j = 0; j < nbuilt && !dup_of; j++)
        if (built[j].thread_count == k.thread_count && built[j].workload == c.workload)
          dup_of = built[j].target_threads;
      if (dup_of) {
        snprintf(why, sizeof why, "same exact key as threads=%u (the plugin uses %u thread%s)",
                 dup_of, k.thread_count, k.thread_count == 1 ? "" : "s");
        /* verify judges the key once, at its first target: no key here */
        child_skip(&c, why, verify_measuring(r) ? NULL : &k);
        continue;
      }
      if (nbuilt < sizeof built / sizeof built[0])
        built[nbuilt++] = (struct built_rec){c.workload, k.thread_count, tg.thread_count};
      if (r->recalibrating && !wanted_key(r, p->backend, c.workload, k.thread_count))
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
      calhost_record_key kc;
      if (copy_key(&k, &kc) != 0) {
        calstore_lookup_result_free(&stored);
        child_fail(&c, CALHOST_REC_FAILED, "out of memory");
        continue;
      }
      double now = calhost_sweep_now();
      double deadline = 0;
      if (plugin_deadline > 0) {
        if (now >= plugin_deadline) {
          calhost_record_key_free(&kc);
          calstore_lookup_result_free(&stored);
          child_fail(&c, CALHOST_REC_FAILED, "time budget exhausted before this sweep");
          continue;
        }
        size_t share = r->recalibrating ? (recal_left ? recal_left-- : 1) : sweeps_left;
        deadline = now + (plugin_deadline - now) / (double)(share ? share : 1);
      }
      r->child_deadline = deadline;
      calhost_sweep_request req = {.vtable = vt,
                                   .abi_version = p->abi_version,
                                   .instance = inst,
                                   .workload = &w,
                                   .target = &tg,
                                   .params = r->params,
                                   .deadline = deadline,
                                   .max_policy_length = CALHOST_POLICY_MAX_LENGTH};
      req.hooks.user = &c;
      req.hooks.candidate_start = child_candidate;
      req.hooks.take_plugin_error = child_take_error;
      if (explicit_policy) { /* compare the two fully: no pruning */
        req.policies = &explicit_policy;
        req.policy_count = 1;
        req.params.prune = 0;
        req.params.halving = 0;
      }
      calhost_sweep_result res;
      calhost_sweep_run(&req, &res);
      calstore_lookup_result_free(&stored);
      r->child_deadline = 0;
      calhost_proto_begin(&c.buf, CALHOST_REC_RESULT);
      calhost_proto_put_u64(&c.buf, c.workload);
      calhost_proto_put_u64(&c.buf, c.threads);
      calhost_record_put_key(&c.buf, kc.model_digest, kc.processor, kc.thread_count, kc.structure,
                             kc.structure_count);
      calhost_record_key_free(&kc);
      calhost_record_put_result(&c.buf, &res);
      child_send(&c);
      calhost_sweep_result_free(&res);
    }
    calhost_proto_begin(&c.buf, CALHOST_REC_WORKLOAD_DONE);
    calhost_proto_put_u64(&c.buf, c.workload);
    child_send(&c);
  }
  vt->destroy(inst);
  calhost_proto_begin(&c.buf, CALHOST_REC_DONE);
  child_send(&c);
  calhost_proto_buf_free(&c.buf);
  return 0;
}

/* Budget as the plugin's is_cancelled sees it (in the child). */
static int budget_over(void *user) {
  cal_run *r = user;
  return r->child_deadline > 0 && calhost_sweep_now() > r->child_deadline + 0.5;
}

/* ---- the parent: storing ---------------------------------------------- */

typedef struct policy_ref {
  const char *text;
} policy_ref;

static const char *serialize_ref(void *user, size_t *length, char *err, size_t cap) {
  policy_ref *p = user;
  (void)err, (void)cap;
  *length = strlen(p->text);
  return p->text;
}

static int validate_with_plugin(void *user, const char *policy, size_t length, char *err,
                                size_t cap) {
  cal_run *r = user;
  if (!r->validator)
    return 1;
  if (length > CALHOST_POLICY_MAX_LENGTH) {
    snprintf(err, cap, "policy of %zu bytes exceeds the limit of %u", length,
             CALHOST_POLICY_MAX_LENGTH);
    return 0;
  }
  return calhost_plugin_validate(r->cur, r->validator, policy, length, err, cap) == CALHOST_OK;
}

static void ensure_validator(cal_run *r) {
  if (r->validator || r->validator_failed)
    return;
  const calhost_config_plugin_section *sec = calhost_config_plugin_named(r->cfg, r->cur->backend);
  if (calhost_plugin_create(r->cur, sec ? sec->settings : NULL, sec ? sec->setting_count : 0,
                            &r->validator) != CALHOST_OK) {
    r->validator = NULL;
    r->validator_failed = 1;
    cal_warn(r, "%s: could not create an instance to validate policies; stored unvalidated",
             r->cur->backend);
  }
}

static void drop_validator(cal_run *r) {
  if (r->validator && r->cur)
    calhost_plugin_destroy(r->cur, r->validator);
  r->validator = NULL;
  r->validator_failed = 0;
}

/* Makes backend's plugin the current one, with its validator: a held
 * commit (verify --recalibrate) spans plugins. While one plugin is being
 * calibrated every pending result is its own, and this does nothing. */
static void use_plugin(cal_run *r, const char *backend) {
  if (r->cur && backend && !strcmp(r->cur->backend, backend))
    return;
  drop_validator(r);
  r->cur = backend ? calhost_plugin_list_find(&r->plugins, backend) : NULL;
  if (r->cur)
    ensure_validator(r);
}

static size_t build_measurements(const cal_run *r, const cal_result *x, calstore_measurement *m,
                                 int portable) {
  const calhost_sweep_result *s = &x->sweep;
  size_t n = 0;
  m[n++] = (calstore_measurement){"median_latency", s->median_us, "us"};
  m[n++] = (calstore_measurement){"spread", s->mad_us, "us"};
  m[n++] = (calstore_measurement){"cv", s->cv, ""};
  m[n++] = (calstore_measurement){"samples", (double)s->samples, "count"};
  m[n++] = (calstore_measurement){"candidates_tried", (double)s->tried, "count"};
  m[n++] = (calstore_measurement){"candidates_pruned", (double)s->pruned, "count"};
  m[n++] = (calstore_measurement){"candidates_rejected", (double)s->rejected, "count"};
  if (s->have_default && s->speedup > 0)
    m[n++] = (calstore_measurement){"speedup_vs_default", s->speedup, "x"};
  if (r->env.load_average[0] >= 0)
    m[n++] = (calstore_measurement){"load_average", r->env.load_average[0], ""};
  m[n++] = (calstore_measurement){"noisy", s->noisy ? 1.0 : 0.0, "flag"};
  m[n++] = (calstore_measurement){"unchecked", s->unchecked ? 1.0 : 0.0, "flag"};
  if (portable)
    m[n++] = (calstore_measurement){"source_threads", (double)x->key.thread_count, "count"};
  return n;
}

static void exact_key(const cal_run *r, const cal_result *x, calstore_key *k) {
  memset(k, 0, sizeof *k);
  k->kind = CALSTORE_KEY_EXACT;
  k->backend = x->backend;
  k->operator_name = r->cfg->workloads[x->workload].operator_name;
  k->implementation = x->implementation;
  k->model_digest = x->key.model_digest;
  k->processor = x->key.processor;
  k->thread_count = x->key.thread_count;
}

static void portable_key(const cal_run *r, const cal_result *x, calstore_key *k) {
  memset(k, 0, sizeof *k);
  k->kind = CALSTORE_KEY_PORTABLE;
  k->backend = x->backend;
  k->operator_name = r->cfg->workloads[x->workload].operator_name;
  k->implementation = x->implementation;
  k->structure = (const calstore_property *)x->key.structure;
  k->structure_count = x->key.structure_count;
}

/* Commits every pending result of the current plugin in one batch, with
 * the portable profile of each workload among them.
 *
 * Without --force nothing stored is replaced, and that is decided by the
 * commit itself (conditional puts, against the file as reloaded under the
 * lock), not by this process's snapshot: an exact profile or a portable
 * profile of this implementation and structure that another process stored
 * meanwhile (a concurrent calibrate, an import) is kept. */
static void commit_pending(cal_run *r) {
  size_t pending = 0;
  const char *first = NULL;
  if (r->hold_commits) /* verify --recalibrate: one batch at the end */
    return;
  for (size_t i = 0; i < r->result_count; i++)
    if (r->results[i].kind == CAL_PENDING) {
      pending++;
      first = first ? first : r->results[i].backend;
    }
  if (!pending)
    return;
  use_plugin(r, first);
  if (!r->cur)
    return;
  ensure_validator(r);
  int force = r->force;
  calstore_error err = {0};
  calstore_batch *b = NULL;
  calstore_status st = calstore_batch_begin(r->store, &b, &err);
  if (st != CALSTORE_OK) {
    for (size_t i = 0; i < r->result_count; i++)
      if (r->results[i].kind == CAL_PENDING) {
        r->results[i].kind = CAL_NOT_STORED;
        r->results[i].message = dupstr(err.message);
      }
    add_failure(r, r->cur->backend, NULL, 0, NULL, err.message, NULL);
    return;
  }
  calstore_measurement m[16];
  /* what was queued: results, whether their exact profile was written, and
   * the results whose winner is queued as a workload's portable profile */
  size_t *queued = calloc(pending, sizeof *queued);
  int *exact_stored = calloc(pending, sizeof *exact_stored);
  size_t *port = calloc(pending, sizeof *port);
  int *port_stored = calloc(pending, sizeof *port_stored);
  size_t nqueued = 0, nport = 0;
  if (!queued || !exact_stored || !port || !port_stored) {
    free(queued);
    free(exact_stored);
    free(port);
    free(port_stored);
    calstore_batch_abort(&b);
    return;
  }
  for (size_t i = 0; i < r->result_count; i++) {
    cal_result *x = &r->results[i];
    if (x->kind != CAL_PENDING)
      continue;
    use_plugin(r, x->backend);
    calstore_key k;
    exact_key(r, x, &k);
    policy_ref ref = {x->sweep.winner_policy};
    size_t n = build_measurements(r, x, m, 0);
    memset(&err, 0, sizeof err);
    if (strlen(ref.text) > CALHOST_POLICY_MAX_LENGTH) {
      x->kind = CAL_NOT_STORED;
      x->message = dupstr("oversized policy (not stored)");
      continue;
    }
    exact_stored[nqueued] = 1;
    st =
        force
            ? calstore_batch_store(b, &k, m, n, serialize_ref, &ref, validate_with_plugin, r, &err)
            : calstore_batch_store_if_absent(b, &k, m, n, serialize_ref, &ref, validate_with_plugin,
                                             r, &exact_stored[nqueued], &err);
    if (st != CALSTORE_OK) {
      char msg[1200];
      snprintf(msg, sizeof msg, "not stored: %s: %s", calstore_status_name(st), err.message);
      x->kind = CAL_NOT_STORED;
      x->message = dupstr(msg);
      continue;
    }
    queued[nqueued++] = i;
    x->kind = CAL_STORED;
  }
  /* The portable rule: per workload, the winner of the smallest thread
   * count (verify's recalibration replaces exact profiles only). */
  for (size_t i = 0; i < r->result_count && !r->recalibrating; i++) {
    cal_result *x = &r->results[i];
    if (x->kind != CAL_STORED || x->portable_stored || x->portable_note)
      continue;
    use_plugin(r, x->backend);
    cal_result *best = x;
    for (size_t j = 0; j < r->result_count; j++) {
      cal_result *y = &r->results[j];
      if (y->kind == CAL_STORED && !y->portable_stored && !y->portable_note &&
          y->workload == x->workload && !strcmp(y->backend, x->backend) &&
          y->key.thread_count < best->key.thread_count)
        best = y;
    }
    calstore_key k;
    portable_key(r, best, &k);
    for (size_t j = 0; j < r->result_count; j++) {
      cal_result *y = &r->results[j];
      if (y != best && y->kind == CAL_STORED && y->workload == best->workload &&
          !strcmp(y->backend, best->backend) && !y->portable_note && !y->portable_stored)
        y->portable_note = dupstr("portable profile taken from the smallest thread count");
    }
    policy_ref ref = {best->sweep.winner_policy};
    size_t n = build_measurements(r, best, m, 1);
    memset(&err, 0, sizeof err);
    port_stored[nport] = 1;
    st = force
             ? calstore_batch_store(b, &k, m, n, serialize_ref, &ref, validate_with_plugin, r, &err)
             : calstore_batch_store_if_absent(b, &k, m, n, serialize_ref, &ref,
                                              validate_with_plugin, r, &port_stored[nport], &err);
    if (st == CALSTORE_OK) {
      best->portable_stored = 1; /* settled after the commit */
      port[nport++] = (size_t)(best - r->results);
    } else {
      char msg[1200];
      snprintf(msg, sizeof msg, "portable profile not stored: %s", err.message);
      best->portable_note = dupstr(msg);
    }
  }
  memset(&err, 0, sizeof err);
  st = calstore_batch_commit(&b, &err);
  if (st != CALSTORE_OK) {
    char msg[1200];
    snprintf(msg, sizeof msg, "commit failed: %s: %s", calstore_status_name(st), err.message);
    for (size_t i = 0; i < nqueued; i++) {
      cal_result *x = &r->results[queued[i]];
      if (x->kind == CAL_STORED) {
        x->kind = CAL_NOT_STORED;
        free(x->message);
        x->message = dupstr(msg);
        x->portable_stored = 0;
      }
    }
    add_failure(r, r->cur->backend, NULL, 0, NULL, msg, NULL);
  } else {
    r->commits++;
    /* what the commit kept instead of writing (stored meanwhile elsewhere) */
    for (size_t i = 0; i < nqueued; i++) {
      cal_result *x = &r->results[queued[i]];
      if (!exact_stored[i] && x->kind == CAL_STORED) {
        x->kind = CAL_SKIPPED;
        free(x->message);
        x->message = dupstr("already calibrated: another writer stored this key meanwhile; "
                            "kept (use --force to recalibrate)");
      }
    }
    for (size_t i = 0; i < nport; i++) {
      cal_result *x = &r->results[port[i]];
      if (!port_stored[i]) {
        x->portable_stored = 0;
        free(x->portable_note);
        x->portable_note = dupstr("portable profile kept (one of this implementation exists; "
                                  "--force replaces it)");
      }
    }
  }
  free(queued);
  free(exact_stored);
  free(port);
  free(port_stored);
}

/* ---- the parent: records ---------------------------------------------- */

static void on_record(void *user, const calhost_proto_msg *m) {
  cal_run *r = user;
  calhost_proto_cursor c;
  calhost_proto_cursor_init(&c, m);
  switch (m->type) {
  case CALHOST_REC_CANDIDATE: {
    r->cur_in_workload = 1;
    r->cur_workload = (size_t)calhost_proto_get_u64(&c);
    r->cur_threads = (uint32_t)calhost_proto_get_u64(&c);
    calhost_proto_get_u64(&c);
    r->cur_ordinal = (uint32_t)calhost_proto_get_u64(&c);
    r->cur_total = (uint32_t)calhost_proto_get_u64(&c);
    free(r->cur_candidate);
    r->cur_candidate = calhost_proto_dup_str(&c);
    cal_progress(r);
    break;
  }
  case CALHOST_REC_RESULT:
  case CALHOST_REC_SKIPPED:
  case CALHOST_REC_FAILED: {
    size_t w = (size_t)calhost_proto_get_u64(&c);
    uint32_t t = (uint32_t)calhost_proto_get_u64(&c);
    if (c.failed || w >= r->cfg->workload_count)
      break;
    cal_result *x = add_result(r);
    if (!x)
      break;
    x->workload = w;
    x->threads = t;
    r->cur_in_workload = 1;
    r->cur_workload = w;
    r->cur_threads = t;
    if (m->type == CALHOST_REC_RESULT) {
      calhost_record_get_key(&c, &x->key);
      calhost_record_get_result(&c, &x->sweep);
      if (c.failed) {
        x->kind = CAL_FAILED;
        x->message = dupstr("malformed result record");
      } else if (!x->sweep.ok) {
        x->kind = CAL_FAILED;
        x->message = dupstr(x->sweep.error);
      } else if (!x->sweep.winner_policy ||
                 strlen(x->sweep.winner_policy) > CALHOST_POLICY_MAX_LENGTH) {
        x->kind = CAL_NOT_STORED;
        x->message = dupstr("oversized or missing policy (not stored)");
      } else {
        x->kind = verify_measuring(r) ? CAL_MEASURED : CAL_PENDING;
        if (x->sweep.budget_exhausted) {
          cal_warn(r, "%s %s t=%u: budget exhausted after %u candidates", x->backend,
                   cal_workload_name(r, w), t, x->sweep.budget_after);
        }
        if (x->sweep.noisy)
          cal_warn(r, "%s %s t=%u: noisy result (cv %.3f)", x->backend, cal_workload_name(r, w), t,
                   x->sweep.cv);
      }
    } else if (m->type == CALHOST_REC_SKIPPED) {
      x->kind = CAL_SKIPPED;
      x->message = calhost_proto_dup_str(&c);
      calhost_record_get_key(&c, &x->key);
    } else {
      x->kind = CAL_FAILED;
      x->message = calhost_proto_dup_str(&c);
    }
    r->sweeps_done++;
    free(r->cur_candidate);
    r->cur_candidate = NULL;
    if (verify_measuring(r))
      cal_verify_progress(r, x);
    else
      cal_progress_line(r, x);
    break;
  }
  case CALHOST_REC_WORKLOAD_DONE:
    commit_pending(r);
    r->cur_in_workload = 0;
    break;
  case CALHOST_REC_PLUGIN_FAILED: {
    const char *msg = calhost_proto_get_str(&c);
    add_failure(r, r->cur->backend, NULL, 0, NULL, msg ? msg : "plugin failed", NULL);
    break;
  }
  default:
    break;
  }
}

/* ---- one plugin ------------------------------------------------------- */

static void calibrate_plugin(cal_run *r, calhost_plugin *p) {
  r->cur = p;
  r->validator = NULL;
  r->validator_failed = 0;
  r->cur_in_workload = 0;
  free(r->cur_candidate);
  r->cur_candidate = NULL;
  calhost_services_take_error(&p->services_ctx);
  /* the child skips keys already calibrated (calstore_get on this
   * snapshot): take the file's latest state first (ignore a failure: the
   * snapshot stays, and the commit decides against the file anyway) */
  if (!r->force && !r->o->verify) /* verify judges on the one snapshot it opened */
    calstore_reload(r->store, NULL);

  calhost_isolate_options io = {.timeout_seconds = r->cfg->plugin_timeout_seconds,
                                .cancel_flag = &g_cancel,
                                .done_type = CALHOST_REC_DONE};
  calhost_child_outcome oc;
  size_t done_before = r->sweeps_done, failures_before = r->failure_count;
  calhost_isolate_run(&io, child_main, r, on_record, r, &oc);
  /* a child that reported its plugin's failure (create failed) and exited
   * was already reported once: its exit is not a second failure */
  int reported =
      oc.end == CALHOST_CHILD_EXITED && r->failure_count > failures_before && !r->cur_in_workload;
  if (oc.end != CALHOST_CHILD_OK && oc.end != CALHOST_CHILD_CANCELLED && !reported) {
    char msg[512];
    const char *where = r->cur_candidate ? " while running candidate " : "";
    snprintf(msg, sizeof msg, "%s%s%s", oc.message, where,
             r->cur_candidate ? r->cur_candidate : "");
    add_failure(r, p->backend, r->cur_in_workload ? cal_workload_name(r, r->cur_workload) : NULL,
                r->cur_in_workload ? r->cur_threads : 0, r->cur_candidate, msg, oc.output);
    /* the sweeps the child never reached */
    size_t expected = 0;
    for (size_t i = 0; i < r->workload_count; i++)
      if (plugin_serves(p, r->cfg->workloads[r->workloads[i]].operator_name))
        expected += r->targets.count;
    r->sweeps_done = done_before + expected;
  } else if (oc.output_total > 0 && r->o->progress != 0) {
    cal_warn(r, "%s printed %zu bytes on stdout during calibration (ignored)", p->backend,
             oc.output_total);
  }
  commit_pending(r); /* finished sweeps of a workload in progress are kept */
  drop_validator(r);
  free(r->cur_candidate);
  r->cur_candidate = NULL;
  r->cur = NULL;
}

void cal_commit_held(cal_run *r) {
  r->hold_commits = 0;
  commit_pending(r);
  drop_validator(r);
  r->cur = NULL;
}

/* Whether the store file at path could be committed: the file (when it
 * exists) and its folder (where the temporary file and the rename happen,
 * else the nearest existing ancestor that would hold the created folders)
 * are writable. A pre-flight check so that an unwritable store fails before
 * the sweeps, not after; the commit still reports what really happens. */
static int store_writable(const char *path, char *why, size_t cap) {
  struct stat st;
  char dir[4096];
  if (!path)
    return 1;
  if (stat(path, &st) == 0 && access(path, W_OK) != 0) {
    snprintf(why, cap, "the store %.400s is not writable: %s", path, strerror(errno));
    return 0;
  }
  snprintf(dir, sizeof dir, "%s", path);
  for (;;) {
    char *slash = strrchr(dir, '/');
    if (!slash) {
      snprintf(dir, sizeof dir, ".");
    } else if (slash == dir) {
      dir[1] = '\0';
    } else {
      *slash = '\0';
    }
    if (stat(dir, &st) == 0) {
      if (!S_ISDIR(st.st_mode)) {
        snprintf(why, cap, "the store %.400s cannot be written: %.400s is not a directory", path,
                 dir);
        return 0;
      }
      if (access(dir, W_OK | X_OK) != 0) {
        snprintf(why, cap, "the store %.400s cannot be written: folder %.400s: %s", path, dir,
                 strerror(errno));
        return 0;
      }
      return 1;
    }
    if (errno == ENOTDIR) {
      snprintf(why, cap, "the store %.400s cannot be written: a parent of it is not a directory",
               path);
      return 0;
    }
    if (!strcmp(dir, ".") || !strcmp(dir, "/"))
      return 1;
  }
}

/* ---- the run ---------------------------------------------------------- */

void cal_run_plugins(cal_run *r) {
  const calhost_calibrate_options *o = r->o;
  for (size_t i = 0; i < r->plugins.count && !g_cancel; i++) {
    calhost_plugin *p = r->plugins.items[i];
    if (!p->loaded || (o->plugin_count && !in_list(o->plugins, o->plugin_count, p->backend)))
      continue;
    int wanted = !r->recalibrating;
    for (size_t k = 0; k < r->only_key_count && !wanted; k++)
      wanted = !strcmp(r->only_keys[k].backend, p->backend);
    if (wanted)
      calibrate_plugin(r, p);
  }
  if (g_cancel && !r->interrupted)
    r->interrupted = g_signal ? g_signal : SIGINT;
}

static void free_run(cal_run *r) {
  for (size_t i = 0; i < r->result_count; i++) {
    cal_result *x = &r->results[i];
    free(x->backend);
    free(x->implementation);
    free(x->message);
    free(x->portable_note);
    calhost_record_key_free(&x->key);
    calhost_sweep_result_free(&x->sweep);
  }
  free(r->results);
  for (size_t i = 0; i < r->failure_count; i++) {
    cal_failure *f = &r->failures[i];
    free(f->backend);
    free(f->workload);
    free(f->candidate);
    free(f->message);
    free(f->output);
  }
  free(r->failures);
  for (size_t i = 0; i < r->warning_count; i++)
    free(r->warnings[i]);
  free(r->warnings);
  free(r->workloads);
  free(r->cur_candidate);
  calhost_plugin_list_free(&r->plugins);
  calhost_target_list_free(&r->targets);
  calstore_close(&r->store);
}

int calhost_calibrate(const calhost_calibrate_options *o) {
  cal_run run;
  cal_run *r = &run;
  memset(r, 0, sizeof *r);
  r->o = o;
  r->cfg = o->config;
  r->out = o->out ? o->out : stdout;
  r->err = o->err ? o->err : stderr;
  r->started = calhost_sweep_now();
  r->force = o->force && !o->verify;
  const char *cmd = o->verify ? "verify" : "calibrate"; /* for messages */
  r->bar = !o->quiet && !o->json && o->progress != 0 && calhost_text_cursor_ok(r->err);
  int status = 0;
  char err[1024];
  char **only = NULL; /* --plugin names that are enabled */
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

  /* Plugins run in this process too (negotiation, validation): whatever they
   * print on stdout goes to stderr, so the report on stdout stays clean. */
  int saved_stdout = -1;
  if (r->out == stdout) {
    fflush(stdout);
    saved_stdout = dup(STDOUT_FILENO);
    if (saved_stdout >= 0)
      dup2(STDERR_FILENO, STDOUT_FILENO);
  }

  calhost_rigor_params_init(r->cfg->rigor, r->cfg->repetitions, &r->params);
  snprintf(r->rigor_name, sizeof r->rigor_name, "%s", calhost_rigor_name(r->cfg->rigor));

  /* The store. */
  calstore_options so;
  calstore_error se = {0};
  calstore_options_init(&so);
  so.path = o->store_path ? o->store_path : r->cfg->store_path;
  so.persistence_enabled = r->cfg->persistence_enabled;
  calstore_status sst = calstore_open(&so, &r->store, &se);
  if (sst != CALSTORE_OK || !r->store) {
    calhost_text_diag(r->err, "calhost: ", se.path[0] ? se.path : so.path, se.line, "%s: %s%s",
                      calstore_status_name(sst), se.message,
                      sst == CALSTORE_MALFORMED || sst == CALSTORE_UNSUPPORTED_VERSION
                          ? " (repair or remove the file; `calhost check` lists its problems)"
                          : "");
    status = 2;
    goto out;
  }
  /* a store that cannot take the results fails now, not after the sweeps */
  if (r->cfg->persistence_enabled && (!o->verify || o->verify->recalibrate) &&
      !store_writable(calstore_path(r->store), err, sizeof err)) {
    calhost_text_printf(r->err, "calhost: %s: %s\n", cmd, err);
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
    if (!calhost_config_workload_named(r->cfg, o->workloads[i])) {
      calhost_text_printf(r->err, "calhost: %s: no workload named '%s' in the configuration\n", cmd,
                          o->workloads[i]);
      status = 2;
      goto out;
    }
  for (size_t i = 0; i < r->cfg->workload_count; i++)
    if (!o->workload_count || in_list(o->workloads, o->workload_count, r->cfg->workloads[i].name)) {
      /* The model digest, hashed once here in the parent: every child
       * inherits it. */
      if (!calhost_config_workload_digest(&r->cfg->workloads[i], err, sizeof err)) {
        calhost_text_printf(r->err, "calhost: %s: %s\n", cmd, err);
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
  if (calhost_processor_targets(r->cfg->cpus, r->cfg->cpu_count, r->cfg->cpus_all, tc, ntc,
                                &r->targets, err, sizeof err) != 0) {
    calhost_text_printf(r->err, "calhost: %s: %s\n", cmd, err);
    status = 2;
    goto out;
  }
  calhost_processor_environment_record(r->targets.cpus, r->targets.cpu_count, &r->env);
  for (size_t i = 0; i < r->env.warning_count; i++)
    cal_warn(r, "%s", r->env.warnings[i]);

  /* Plugins. */
  calhost_loader_options lo;
  calhost_loader_options_init(&lo);
  lo.config_dirs = r->cfg->plugin_dirs;
  lo.config_dir_count = r->cfg->plugin_dir_count;
  lo.explicit_paths = r->cfg->plugin_paths;
  lo.explicit_path_count = r->cfg->plugin_path_count;
  /* --plugin narrows the configuration's enabled list (nothing else is loaded) */
  only = calloc(o->plugin_count + 1, sizeof *only);
  if (!only) {
    status = 2;
    goto out;
  }
  for (size_t i = 0; i < o->plugin_count; i++) {
    if (r->cfg->enabled_count &&
        !in_list(r->cfg->enabled_backends, r->cfg->enabled_count, o->plugins[i])) {
      add_failure(r, o->plugins[i], NULL, 0, NULL, "not enabled in the configuration", NULL);
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
  lo.disabled = r->cfg->disabled_backends;
  lo.disabled_count = r->cfg->disabled_count;
  lo.services.user = r;
  lo.services.cancel_flag = &g_cancel;
  lo.services.is_cancelled = budget_over;
  int found = calhost_loader_discover(&lo, &r->plugins);
  if (found < 0) {
    fprintf(r->err, "calhost: %s: out of memory while loading plugins\n", cmd);
    status = 2;
    goto out;
  }
  /* every backend asked for (--plugin, else the enabled list) must be loaded */
  want = nonly ? only : r->cfg->enabled_backends;
  nwant = nonly ? nonly : r->cfg->enabled_count;
  for (size_t i = 0; i < nwant; i++) {
    calhost_plugin *p = calhost_plugin_list_find(&r->plugins, want[i]);
    if (!p || !p->loaded)
      add_failure(r, want[i], NULL, 0, NULL,
                  p && p->reason ? p->reason : "not found (or it failed to load)", NULL);
  }
  size_t usable = 0;
  for (size_t i = 0; i < r->plugins.count; i++) {
    calhost_plugin *p = r->plugins.items[i];
    if (o->plugin_count && !in_list(o->plugins, o->plugin_count, p->backend))
      continue;
    if (!p->loaded) {
      /* named in the enabled list: a failure above; otherwise a warning */
      int wanted = p->backend && in_list(want, nwant, p->backend);
      if (p->reason && !wanted && p->state != CALHOST_PLUGIN_DISABLED)
        cal_warn(r, "plugin %s not loaded: %s", p->path ? p->path : "?", p->reason);
      continue;
    }
    usable++;
    for (size_t w = 0; w < r->workload_count; w++)
      if (plugin_serves(p, r->cfg->workloads[r->workloads[w]].operator_name))
        r->sweeps_total += r->targets.count;
  }
  if (!usable) {
    fprintf(r->err, "calhost: %s: no plugin to calibrate\n", cmd);
    status = 2;
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
      if (x->kind == CAL_FAILED || x->kind == CAL_NOT_STORED)
        status = 1;
      if (x->kind == CAL_STORED || x->kind == CAL_PENDING ||
          (x->kind == CAL_SKIPPED && x->key.processor)) /* skips with a key: calibrated */
        calibrated++;
    }
    /* nothing calibrated (every sweep unsupported, or no workload for the
     * chosen plugins) is a "no", not a success */
    if (!calibrated) {
      status = 1;
      cal_warn(r, "nothing was calibrated: %s",
               r->result_count ? "every sweep was skipped or failed"
                               : "no configured workload uses an operator of the selected plugins");
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
  if (o->verify)
    cal_verify_print(r, status);
  else if (o->json)
    cal_print_json(r, status);
  else
    cal_print_summary(r);
  if (o->json_out) { /* --report: the same JSON into the report's folder */
    r->out = o->json_out;
    cal_print_json(r, status);
  }
out:
  if (saved_stdout >= 0) {
    fflush(stdout);
    dup2(saved_stdout, STDOUT_FILENO);
    close(saved_stdout);
  }
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  sigaction(SIGHUP, &old_hup, NULL);
  free(only);
  free_run(r);
  return status;
}
