/*
 * race.c: calibrate's race phase (issue 38; runtime/race.h says what a race
 * records). After the sweeps, every structure (workload x CPU target) that
 * two or more backends calibrated on this machine, now or before, gets a
 * race (a backend not among the run's results joins with the exact profile
 * it stored for the same key; a run narrowed by --plugin loads the
 * configuration's other enabled plugins for that): one isolated child
 * times each backend's stored winner and its default interleaved
 * (sweep/race.h) with the run's rigor; the parent writes the outcome into
 * each entrant's exact profile, and into its portable profile when that
 * holds the very policy raced at the smallest thread count, in one batch.
 * A structure whose entrants already share a race and were all skipped
 * (nothing new) is not raced again. Device backends race on their device:
 * the backends this run calibrated (or found calibrated) on one device
 * (the same device identity) are a group of their own, timed by the
 * device's clock as their sweeps were; a CPU group and a device group never
 * share an entrant. The racing rule (sweep/race.h) spends the samples where
 * a race is close; a tie within the noise is told, and the lower median
 * still decides it. The phase's lines are printed after calibrate's
 * summary.
 */
#include "race.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/json.h"
#include "base/policy.h"
#include "base/str.h"
#include "isolate/isolate.h"
#include "runtime/binding.h"
#include "runtime/devices.h"
#include "runtime/race.h"
#include "sweep/race.h"

/* record types of the race child */
enum { RACE_REC_ENTRANT = 1, RACE_REC_DONE = 2 };

/* One backend in one group. */
typedef struct race_entrant {
  const cal_result *x; /* a result of this backend for the group's key */
  loader_plugin *plugin;
  char *policy; /* its stored winner */
  int fresh;    /* stored in this run */
  runtime_race before;
  /* the child's figures: [0] the winner, [1] the default */
  int ok[2];
  double median[2], mad[2];
  uint32_t rounds[2]; /* samples taken */
  int dropped[2];     /* dropped by the racing rule */
  uint32_t tied;      /* the winner: in a tie of this many (>= 2), 0: none */
  int device_clock;   /* the winner's figures are the device's time */
  char error[2][256];
  uint32_t rank; /* its place in the settled race, 0: not ranked */
} race_entrant;

/* One structure on one target, with its entrants. */
typedef struct race_group {
  size_t workload;
  uint32_t threads;   /* the target's thread count */
  const char *device; /* the device identity of a device group (its first result's), NULL: the
                         CPU */
  const char *device_name;
  size_t target; /* its index in the target list */
  race_entrant e[8];
  size_t n;
  /* the results that stand for backends not in this run's results (their
   * stored profiles of the same key: calibrated earlier, or narrowed out
   * by --plugin); keys borrowed from the group's first entrant */
  cal_result extra[8];
  size_t nextra;
  double id; /* the settled race's id, 0: not raced (or fewer than two timed) */
} race_group;

typedef struct race_state {
  race_group *groups;
  size_t count, cap;
  /* a run narrowed by --plugin: the configuration's other enabled plugins,
   * loaded for the race only (their stored profiles are raced) */
  loader_plugin_list more;
  int more_loaded;
  double seconds; /* the phase's wall time */
  char **lines;   /* printed after the summary */
  size_t nlines;
} race_state;

static race_state g_race; /* one calibrate run per process */

static void add_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void add_line(const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  char **grown = realloc(g_race.lines, (g_race.nlines + 1) * sizeof *grown);
  if (!grown)
    return;
  g_race.lines = grown;
  g_race.lines[g_race.nlines] = strdup(buf);
  if (g_race.lines[g_race.nlines])
    g_race.nlines++;
}

static loader_plugin *plugin_named(const cal_run *r, const char *backend) {
  for (size_t i = 0; i < r->set->plugins.count; i++) {
    loader_plugin *p = r->set->plugins.items[i];
    if (p->loaded && !strcmp(p->backend, backend))
      return p;
  }
  for (size_t i = 0; i < g_race.more.count; i++) {
    loader_plugin *p = g_race.more.items[i];
    if (p->loaded && p->backend && !strcmp(p->backend, backend))
      return p;
  }
  return NULL;
}

/* A run narrowed by --plugin loaded only those: the configuration's other
 * enabled plugins are loaded too (probed in children first, as setup does),
 * for the race of their stored profiles. */
static void load_more_plugins(cal_run *r) {
  if (g_race.more_loaded || !r->set->o->plugin_count)
    return;
  g_race.more_loaded = 1;
  const config_settings *cfg = r->set->cfg;
  loader_options lo;
  loader_options_init(&lo);
  runtime_binding_loader_options(cfg, &lo);
  lo.enabled = cfg->enabled_backends;
  lo.enabled_count = cfg->enabled_count;
  lo.services.user = r;
  lo.services.cancel_flag = cal_cancel_flag();
  lo.services.is_cancelled = cal_budget_over;
  if (loader_discover(&lo, &g_race.more) < 0)
    loader_plugin_list_free(&g_race.more);
}

/* The stored calibrated profile of x's exact (or portable) key, or NULL. */
static calstore_lookup_result *stored_profile(const cal_run *r, const cal_result *x,
                                              calstore_key_kind kind) {
  runtime_binding_key k;
  if (runtime_binding_store_key(kind, x->backend, cal_workload_operator(r, x->workload),
                                x->implementation, x->key.model_digest, x->key.processor,
                                x->key.thread_count, x->key.structure, x->key.structure_count,
                                &k) != 0)
    return NULL;
  calstore_lookup_result *res = NULL;
  if (r->store_lock)
    pthread_mutex_lock(r->store_lock);
  calstore_get(r->set->store, &k.key, CALSTORE_SOURCE_CALIBRATED, &res, NULL);
  if (r->store_lock)
    pthread_mutex_unlock(r->store_lock);
  runtime_binding_key_free(&k);
  return res;
}

static size_t target_of(const cal_run *r, uint32_t threads) {
  for (size_t t = 0; t < r->set->targets.count; t++)
    if (r->set->targets.items[t].thread_count == threads)
      return t;
  return 0;
}

/* Adds backend x (a result, or a group's extra) to group g with its
 * stored exact profile; none stored: not an entrant. */
static void add_entrant(cal_run *r, race_group *g, const cal_result *x) {
  if (g->n == sizeof g->e / sizeof g->e[0])
    return;
  loader_plugin *p = plugin_named(r, x->backend);
  calstore_lookup_result *res = p ? stored_profile(r, x, CALSTORE_KEY_EXACT) : NULL;
  if (!res || !res->profile) {
    calstore_lookup_result_free(&res);
    return;
  }
  race_entrant *e = &g->e[g->n];
  memset(e, 0, sizeof *e);
  e->x = x;
  e->plugin = p;
  e->policy = base_str_dup(res->profile->policy);
  e->fresh = x->kind == CAL_STORED;
  runtime_race_read(res->profile, &e->before);
  calstore_lookup_result_free(&res);
  if (e->policy)
    g->n++;
}

static int same_str(const char *a, const char *b) {
  return !strcmp(a ? a : "", b ? b : "");
}

/* Adds x to its group (found or made): the same workload and thread count
 * on the CPU, or the same workload on the same device. */
static void group_add(cal_run *r, const cal_result *x) {
  race_group *g = NULL;
  const char *device = x->on_device ? x->device_identity : NULL;
  for (size_t i = 0; i < g_race.count && !g; i++)
    if (g_race.groups[i].workload == x->workload && g_race.groups[i].threads == x->threads &&
        same_str(g_race.groups[i].device, device))
      g = &g_race.groups[i];
  if (!g) {
    race_group *grown = realloc(g_race.groups, (g_race.count + 1) * sizeof *grown);
    if (!grown)
      return;
    g_race.groups = grown;
    g = &g_race.groups[g_race.count++];
    memset(g, 0, sizeof *g);
    g->workload = x->workload;
    g->threads = x->threads;
    g->target = target_of(r, x->threads);
    g->device = device;
    g->device_name = x->on_device ? x->device_name : NULL;
  }
  for (size_t i = 0; i < g->n; i++)
    if (!strcmp(g->e[i].x->backend, x->backend)) {
      g->e[i].fresh |= x->kind == CAL_STORED;
      return;
    }
  add_entrant(r, g, x);
}

/* The backends with a calibrated exact profile of a group's key (the same
 * operator, model digest, processor and thread count as its first
 * entrant's), of their loaded plugin's implementation, on the CPU. */
typedef struct scan_ctx {
  const cal_run *r;
  const race_group *g;
  const char *op;
  const cal_result *first;
  const char *names[8];
  size_t n;
} scan_ctx;

static int scan_visit(void *user, const calstore_profile *p) {
  scan_ctx *c = user;
  const calstore_key *k = &p->key;
  if (k->kind != CALSTORE_KEY_EXACT || p->source != CALSTORE_SOURCE_CALIBRATED ||
      c->n == sizeof c->names / sizeof c->names[0] || !same_str(k->operator_name, c->op) ||
      !same_str(k->model_digest, c->first->key.model_digest) ||
      !same_str(k->processor, c->first->key.processor) ||
      k->thread_count != c->first->key.thread_count)
    return 0;
  loader_plugin *pl = plugin_named(c->r, k->backend);
  if (!pl || runtime_devices_supported(pl) ||
      !same_str(pl->implementation_version, k->implementation))
    return 0;
  for (size_t i = 0; i < c->g->n; i++)
    if (!strcmp(c->g->e[i].x->backend, pl->backend))
      return 0;
  for (size_t i = 0; i < c->n; i++)
    if (!strcmp(c->names[i], pl->backend))
      return 0;
  c->names[c->n++] = pl->backend; /* the plugin's string: lives through the run */
  return 0;
}

/* Adds to g the backends calibrated for its key but not among the run's
 * results (their profiles are raced as they are stored). */
static void group_add_stored(cal_run *r, race_group *g) {
  if (!g->n || g->device) /* a device group: the backends this run calibrated on it */
    return;
  scan_ctx c = {r, g, cal_workload_operator(r, g->workload), g->e[0].x, {0}, 0};
  if (r->store_lock)
    pthread_mutex_lock(r->store_lock);
  calstore_inspect(r->set->store, scan_visit, &c);
  if (r->store_lock)
    pthread_mutex_unlock(r->store_lock);
  for (size_t i = 0; i < c.n && g->nextra < sizeof g->extra / sizeof g->extra[0]; i++) {
    loader_plugin *p = plugin_named(r, c.names[i]);
    cal_result *x = &g->extra[g->nextra];
    memset(x, 0, sizeof *x);
    x->backend = p->backend;
    x->implementation = p->implementation_version;
    x->workload = g->workload;
    x->threads = g->threads;
    x->kind = CAL_SKIPPED;
    x->key = c.first->key; /* borrowed: never freed here */
    g->nextra++;
    add_entrant(r, g, x);
  }
}

/* Whether the group needs a race: two or more entrants, and something new
 * (an entrant stored in this run, or entrants not sharing one race). */
static int group_needs_race(const race_group *g) {
  if (g->n < 2)
    return 0;
  for (size_t i = 0; i < g->n; i++)
    if (g->e[i].fresh || !g->e[i].before.id || g->e[i].before.id != g->e[0].before.id ||
        g->e[i].before.entrants != g->n)
      return 1;
  return 0;
}

/* ---- the child --------------------------------------------------------- */

static int race_cancelled(void *user) {
  (void)user;
  return *cal_cancel_flag() != 0;
}

/* Where this run's sweep of e's backend measured the policy of entrant d
 * (0 its winner, 1 its default) on this very workload and target, its
 * output was checked there: s is marked checked (and the default named by
 * the sweep's text), so the race checks it no more and a MatMul backend
 * never computes its reference. A profile stored by an earlier run is
 * checked once in the race. */
static void swept_policy(const race_entrant *e, int d, sweep_race_entrant *s) {
  const sweep_result *sw = &e->x->sweep;
  if (e->x->kind != CAL_STORED || !sw->ok || sw->unchecked)
    return;
  if (!d)
    s->checked = base_policy_same(sw->winner_policy, e->policy);
  else if (sw->have_default && sw->default_policy) {
    s->policy = sw->default_policy;
    s->checked = 1;
  }
}

static int race_child(void *user, int fd) {
  cal_run *r = user;
  isolate_proto_buf buf = {0};
  /* one instance per backend, created on first use */
  loader_plugin *made_p[16];
  calhost_plugin_instance *made_i[16];
  size_t made = 0;
  processor_pin_thread(r->set->targets.cpus, r->set->targets.cpu_count, NULL, 0);
  for (size_t gi = 0; gi < g_race.count; gi++) {
    race_group *g = &g_race.groups[gi];
    if (!group_needs_race(g))
      continue;
    const config_workload *cw = &r->set->cfg->workloads[g->workload];
    calhost_workload w;
    calhost_target tg;
    runtime_binding_workload(cw, &w);
    runtime_binding_target(&r->set->targets, g->target, &tg);
    sweep_race_entrant se[16];
    calhost_target dtg[8]; /* a device group: each backend's target names its device */
    size_t ns = 0;
    memset(se, 0, sizeof se);
    for (size_t i = 0; i < g->n; i++) {
      loader_plugin *p = g->e[i].plugin;
      if (g->device)
        runtime_binding_device_target(&r->set->targets, g->target, g->device,
                                      g->e[i].x->device_index, &dtg[i]);
      calhost_plugin_instance *inst = NULL;
      for (size_t m = 0; m < made; m++)
        if (made_p[m] == p)
          inst = made_i[m];
      if (!inst && made < 16) {
        const calhost_property *settings;
        size_t setting_count;
        runtime_binding_plugin_settings(r->set->cfg, p->backend, &settings, &setting_count);
        if (p->vtable.create(&p->services, settings, setting_count, &inst) != CALHOST_OK)
          inst = NULL;
        made_p[made] = p;
        made_i[made++] = inst;
      }
      for (int d = 0; d < 2; d++) {
        sweep_race_entrant *s = &se[ns++];
        s->vtable = &p->vtable;
        s->abi_version = p->abi_version;
        s->instance = inst;
        s->workload = &w;
        s->target = g->device ? &dtg[i] : &tg;
        s->policy = d ? NULL : g->e[i].policy;
        s->prunable = d; /* a default's figure does not decide the race */
        swept_policy(&g->e[i], d, s);
      }
    }
    /* an entrant without an instance fails alone */
    sweep_race_entrant live[16];
    size_t map[16], nl = 0;
    for (size_t s = 0; s < ns; s++)
      if (se[s].instance) {
        live[nl] = se[s];
        map[nl++] = s;
      } else {
        snprintf(se[s].error, sizeof se[s].error, "create failed");
      }
    sweep_race_run(live, nl, &r->set->params, 1, race_cancelled, NULL);
    for (size_t l = 0; l < nl; l++)
      se[map[l]] = live[l];
    for (size_t s = 0; s < ns; s++) {
      isolate_proto_begin(&buf, RACE_REC_ENTRANT);
      isolate_proto_put_u64(&buf, gi);
      isolate_proto_put_u64(&buf, s / 2);
      isolate_proto_put_u64(&buf, s % 2);
      isolate_proto_put_u64(&buf, (uint64_t)se[s].ok);
      isolate_proto_put_f64(&buf, se[s].ok ? se[s].figures.median_us : 0);
      isolate_proto_put_f64(&buf, se[s].ok ? se[s].figures.mad_us : 0);
      isolate_proto_put_u64(&buf, se[s].rounds);
      isolate_proto_put_u64(&buf, (uint64_t)se[s].dropped);
      isolate_proto_put_u64(&buf, se[s].tied);
      isolate_proto_put_u64(&buf, (uint64_t)se[s].device_clock);
      isolate_proto_put_str(&buf, se[s].error);
      isolate_proto_send(fd, &buf);
    }
  }
  for (size_t m = 0; m < made; m++)
    if (made_i[m])
      made_p[m]->vtable.destroy(made_i[m]);
  isolate_proto_begin(&buf, RACE_REC_DONE);
  isolate_proto_send(fd, &buf);
  isolate_proto_buf_free(&buf);
  return 0;
}

static void race_record(void *user, const isolate_proto_msg *msg) {
  (void)user;
  if (msg->type != RACE_REC_ENTRANT)
    return;
  isolate_proto_cursor c;
  isolate_proto_cursor_init(&c, msg);
  uint64_t gi = isolate_proto_get_u64(&c), ei = isolate_proto_get_u64(&c),
           d = isolate_proto_get_u64(&c), ok = isolate_proto_get_u64(&c);
  double median = isolate_proto_get_f64(&c), mad = isolate_proto_get_f64(&c);
  uint64_t rounds = isolate_proto_get_u64(&c), dropped = isolate_proto_get_u64(&c),
           tied = isolate_proto_get_u64(&c), device_clock = isolate_proto_get_u64(&c);
  const char *error = isolate_proto_get_str(&c);
  if (c.failed || gi >= g_race.count || ei >= g_race.groups[gi].n || d > 1)
    return;
  race_entrant *e = &g_race.groups[gi].e[ei];
  e->ok[d] = ok && median > 0 && isfinite(median);
  e->median[d] = median;
  e->mad[d] = mad;
  e->rounds[d] = rounds < 1000000 ? (uint32_t)rounds : 0;
  e->dropped[d] = dropped != 0;
  if (!d) {
    e->tied = tied < 1000 ? (uint32_t)tied : 0;
    e->device_clock = device_clock != 0;
  }
  snprintf(e->error[d], sizeof e->error[d], "%s", error ? error : "");
}

/* ---- the outcome ------------------------------------------------------- */

static double epoch_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return floor((double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3);
}

/* Queues profile res with the race's measurements in b. */
static void queue_raced(calstore_batch *b, const calstore_profile *old, const runtime_race *race) {
  size_t n = old->measurement_count;
  calstore_measurement *m = calloc(n + RUNTIME_RACE_MEASUREMENTS, sizeof *m);
  if (!m)
    return;
  size_t k = runtime_race_strip(old->measurements, n, m);
  runtime_race_append(race, m, &k);
  calstore_profile p = *old;
  p.measurements = m;
  p.measurement_count = k;
  calstore_batch_put(b, &p, NULL);
  free(m);
}

static uint32_t smallest_threads(const cal_run *r) {
  uint32_t s = UINT32_MAX;
  for (size_t t = 0; t < r->set->targets.count; t++)
    if (r->set->targets.items[t].thread_count < s)
      s = r->set->targets.items[t].thread_count;
  return s;
}

static void fmt_us(char *buf, size_t cap, double us) {
  if (!(us > 0) || !isfinite(us))
    snprintf(buf, cap, "-");
  else if (us >= 1000)
    snprintf(buf, cap, "%.4g ms", us / 1000);
  else
    snprintf(buf, cap, "%.4g us", us);
}

/* The tail of line (a char array) after len written, and its room, as
 * snprintf's first two arguments: never past the array's end. */
#define LINE_AT(line, len)                                                                         \
  (line) + ((len) < (int)sizeof(line) ? (len) : (int)sizeof(line)),                                \
      ((len) < (int)sizeof(line) ? sizeof(line) - (size_t)(len) : 0)

/* A group's timed winners (ok[0]) by the winner's race median, into order;
 * returns how many. */
static size_t by_median(const race_group *g, size_t *order) {
  size_t n = 0;
  for (size_t i = 0; i < g->n; i++)
    if (g->e[i].ok[0])
      order[n++] = i;
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && g->e[order[j]].median[0] < g->e[order[j - 1]].median[0]; j--) {
      size_t t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  return n;
}

/* Ranks a raced group, queues its profiles, and says the outcome. The
 * order is the winners' race medians, also in a tie (the winners whose
 * medians ended within the noise of the fastest's: `tied`): the tie rule
 * is the lower median, the best estimate the race has. (Measured against
 * the rule "the backend that won more of the run's other races", which
 * keeps one library warm: on the encoder of race-figures.sh it gave all
 * four ties to the backend with one clear win while the other was 1 to 4%
 * ahead in each, 1.045x of the best single backend.) */
static void settle_group(cal_run *r, calstore_batch *b, race_group *g, double id) {
  size_t order[8], n = by_median(g, order), tied = 0;
  for (size_t k = 0; k < n; k++)
    tied += g->e[order[k]].tied >= 2;
  char line[1024];
  int len;
  if (g->device)
    len = snprintf(line, sizeof line,
                   "race %s device %s (%s clock):", cal_workload_name(r, g->workload),
                   g->device_name ? g->device_name : g->device,
                   n && g->e[order[0]].device_clock ? "device" : "host");
  else
    len = snprintf(line, sizeof line, "race %s threads=%u:", cal_workload_name(r, g->workload),
                   (unsigned)g->threads);
  for (size_t k = 0; k < n; k++) {
    race_entrant *e = &g->e[order[k]];
    char w[32], d[32];
    fmt_us(w, sizeof w, e->median[0]);
    fmt_us(d, sizeof d, e->ok[1] ? e->median[1] : NAN);
    len += snprintf(LINE_AT(line, len), "%s %s %s x%u%s (default %s", k ? "," : "", e->x->backend,
                    w, (unsigned)e->rounds[0], e->dropped[0] ? " dropped" : "", d);
    if (e->ok[1])
      len += snprintf(LINE_AT(line, len), " x%u%s", (unsigned)e->rounds[1],
                      e->dropped[1] ? " dropped" : "");
    len += snprintf(LINE_AT(line, len), ")");
  }
  for (size_t i = 0; i < g->n; i++)
    if (!g->e[i].ok[0])
      len +=
          snprintf(LINE_AT(line, len), "; %s not timed: %s", g->e[i].x->backend, g->e[i].error[0]);
  if (n >= 2)
    len += snprintf(LINE_AT(line, len), " -> %s", g->e[order[0]].x->backend);
  if (n >= 2 && tied >= 2)
    snprintf(LINE_AT(line, len), " (tie of %zu within the noise: the lower median)", tied);
  add_line("%s", line);
  if (n < 2)
    return; /* no race: nothing recorded (the earlier one, if any, stays) */
  uint32_t smallest = smallest_threads(r);
  g->id = id;
  for (size_t k = 0; k < n; k++) {
    race_entrant *e = &g->e[order[k]];
    e->rank = (uint32_t)k + 1;
    runtime_race race = {.id = id,
                         .latency_us = e->median[0],
                         .default_us = e->ok[1] ? e->median[1] : NAN,
                         .entrants = (uint32_t)n,
                         .rank = (uint32_t)k + 1,
                         .rounds = e->rounds[0],
                         .dropped = e->dropped[0],
                         .default_rounds = e->ok[1] ? e->rounds[1] : 0,
                         .default_dropped = e->ok[1] && e->dropped[1],
                         .tie = tied >= 2 && e->tied >= 2 ? (uint32_t)tied : 0};
    calstore_lookup_result *ex = stored_profile(r, e->x, CALSTORE_KEY_EXACT);
    if (ex && ex->profile && base_policy_same(ex->profile->policy, e->policy))
      queue_raced(b, ex->profile, &race);
    calstore_lookup_result_free(&ex);
    if (g->threads != smallest)
      continue;
    calstore_lookup_result *po = stored_profile(r, e->x, CALSTORE_KEY_PORTABLE);
    if (po && po->profile && base_policy_same(po->profile->policy, e->policy))
      queue_raced(b, po->profile, &race);
    calstore_lookup_result_free(&po);
  }
}

void cal_race_run(cal_run *r) {
  double t0 = sweep_now();
  for (size_t i = 0; i < r->sink->result_count; i++) {
    const cal_result *x = &r->sink->results[i];
    if ((x->on_device && !x->device_identity) || !x->key.processor || !x->backend ||
        (x->kind != CAL_STORED && x->kind != CAL_SKIPPED))
      continue;
    group_add(r, x);
  }
  for (size_t i = 0; i < g_race.count; i++)
    if (!g_race.groups[i].device) { /* a CPU group: others' stored profiles may join */
      load_more_plugins(r);
      break;
    }
  for (size_t i = 0; i < g_race.count; i++)
    group_add_stored(r, &g_race.groups[i]);
  size_t raced = 0;
  for (size_t i = 0; i < g_race.count; i++)
    raced += group_needs_race(&g_race.groups[i]);
  if (!raced)
    return;
  isolate_options io = {.timeout_seconds = r->set->cfg->plugin_timeout_seconds,
                        .cancel_flag = cal_cancel_flag(),
                        .done_type = RACE_REC_DONE};
  isolate_child_outcome oc;
  isolate_run(&io, race_child, r, race_record, NULL, &oc);
  if (oc.end != CALHOST_CHILD_OK)
    cal_warn(r, "the race of the backends did not finish: %s (the races it finished are kept)",
             oc.message);
  calstore_batch *b = NULL;
  if (calstore_batch_begin(r->set->store, &b, NULL) != CALSTORE_OK)
    return;
  double id = epoch_us();
  for (size_t i = 0; i < g_race.count; i++)
    if (group_needs_race(&g_race.groups[i]))
      settle_group(r, b, &g_race.groups[i], id + (double)i);
  calstore_error err = {0};
  if (calstore_batch_size(b) && calstore_batch_commit(&b, &err) != CALSTORE_OK)
    cal_warn(r, "the races could not be stored: %s", err.message);
  calstore_batch_abort(&b);
  g_race.seconds = sweep_now() - t0;
}

void cal_race_print(const cal_run *r, FILE *o) {
  (void)r;
  for (size_t i = 0; i < g_race.nlines; i++)
    fprintf(o, "%s\n", g_race.lines[i]);
  if (g_race.nlines)
    fprintf(o, "races: %zu structure%s in %.2f s\n", g_race.nlines, g_race.nlines == 1 ? "" : "s",
            g_race.seconds);
}

void cal_race_json(const cal_run *r, FILE *o) {
  fputs("\"races\":[", o);
  for (size_t i = 0, first = 1; i < g_race.count; i++) {
    const race_group *g = &g_race.groups[i];
    if (!group_needs_race(g))
      continue;
    fputs(first ? "{" : ",{", o);
    first = 0;
    base_json_member_string(o, 1, "workload", cal_workload_name(r, g->workload));
    base_json_member_uint(o, 0, "threads", g->threads);
    if (g->id > 0)
      base_json_member_number(o, 0, "race_id", g->id);
    else
      base_json_member_null(o, 0, "race_id");
    if (g->device)
      base_json_member_string(o, 0, "device", g->device);
    else
      base_json_member_null(o, 0, "device");
    fputs(",\"entrants\":[", o);
    for (size_t j = 0; j < g->n; j++) {
      const race_entrant *e = &g->e[j];
      fputs(j ? ",{" : "{", o);
      base_json_member_string(o, 1, "backend", e->x->backend);
      base_json_member_string(o, 0, "policy", e->policy);
      base_json_member_number(o, 0, "median_us", e->ok[0] ? e->median[0] : NAN);
      base_json_member_number(o, 0, "default_median_us", e->ok[1] ? e->median[1] : NAN);
      base_json_member_uint(o, 0, "rank", e->rank);
      base_json_member_uint(o, 0, "rounds", e->rounds[0]);
      base_json_member_bool(o, 0, "dropped", e->dropped[0]);
      base_json_member_uint(o, 0, "default_rounds", e->ok[1] ? e->rounds[1] : 0);
      base_json_member_bool(o, 0, "default_dropped", e->ok[1] && e->dropped[1]);
      base_json_member_uint(o, 0, "tied", e->tied >= 2 ? e->tied : 0);
      base_json_member_string(o, 0, "error", e->ok[0] ? NULL : e->error[0]);
      fputc('}', o);
    }
    fputs("]}", o);
  }
  fprintf(o, "],\"race_seconds\":%.3f,", g_race.seconds);
}

void cal_race_free(void) {
  loader_plugin_list_free(&g_race.more);
  for (size_t i = 0; i < g_race.count; i++)
    for (size_t j = 0; j < g_race.groups[i].n; j++)
      free(g_race.groups[i].e[j].policy);
  free(g_race.groups);
  for (size_t i = 0; i < g_race.nlines; i++)
    free(g_race.lines[i]);
  free(g_race.lines);
  memset(&g_race, 0, sizeof g_race);
}
