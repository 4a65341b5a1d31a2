/*
 * model_policy_bench.c: model-policy-bench, what the key rule of models is
 * worth (config/README.md, "Models and keys"): the model's total time with
 * each node on its own structure's calibrated policy (the rule: per-node
 * tuning), against one policy for every node of the operator (the
 * representative's winner; and the best single one among the winners, the
 * "(b) one policy ranked by the model's total time" alternative, searched
 * over the winners only), and against the backend's default. Loads the
 * MatMul plugin in process (tests/common/test_host.c), reads the model with
 * host/model, times every (structure, policy) pair with interleaved samples
 * (median) on one thread pinned to CPU 0.
 *
 *   model-policy-bench PLUGIN.so MODEL.onnx WINNER...   (one per structure, in
 *                                                       model show's order)
 *
 * model-bench.sh's policy step passes the winners `calhost lookup --model`
 * selects after `calhost calibrate --model`. On demand only.
 */
#define _GNU_SOURCE
#include <calhost/plugin.h>

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/model.h"
#include "test_host.h"

#define MAX_S 16
#define MAX_P (MAX_S + 1)
#define REPS 9

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Seconds per run of what is prepared: `it` runs per sample, the median
 * of the samples in v. */
static double sample(const test_host_plugin *p, calhost_session *s, uint32_t it) {
  calhost_run_result rr = {{CALHOST_STRUCT_RUN_RESULT, 1, sizeof rr}, -1.0};
  double t = now();
  p->vt->run(s, it, &rr);
  return (now() - t) / it;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: model-policy-bench PLUGIN.so MODEL.onnx WINNER...\n");
    return 2;
  }
  test_host_plugin p;
  if (test_host_load(argv[1], 1, CALHOST_ABI_VERSION, &p) != 0) {
    fprintf(stderr, "%s: %s\n", argv[1], test_host_error);
    return 2;
  }
  model_info m;
  char err[1024];
  if (model_read(argv[2], NULL, 0, &m, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return 2;
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  sched_setaffinity(0, sizeof one, &one);
  static const int cpu0[] = {0};
  size_t st[MAX_S], ns = 0, rep = 0;
  for (size_t i = 0; i < m.node_count && ns < MAX_S; i++)
    if (m.nodes[i].first == i && !strcmp(m.nodes[i].operator_name, "MatMul")) {
      if (model_node_is_representative(&m, i))
        rep = ns;
      st[ns++] = i;
    }
  if ((size_t)argc - 3 != ns) {
    fprintf(stderr, "%zu MatMul structures, %d winners given\n", ns, argc - 3);
    return 2;
  }
  /* policies: 0 the default, 1..ns the winners */
  char policy[MAX_P][256];
  size_t np = ns + 1;
  for (size_t k = 0; k < ns; k++)
    snprintf(policy[k + 1], sizeof policy[0], "%s", argv[3 + k]);
  double t[MAX_S][MAX_P];
  for (size_t s = 0; s < ns; s++) {
    const model_node *n = &m.nodes[st[s]];
    calhost_workload w;
    memset(&w, 0, sizeof w);
    w.header = (calhost_struct_header){CALHOST_STRUCT_WORKLOAD, 1, sizeof w};
    w.name = n->name;
    w.operator_name = "MatMul";
    w.dtype = n->dtype;
    w.shape = n->shape;
    w.shape_rank = n->shape_rank;
    w.properties = n->properties;
    w.property_count = n->property_count;
    w.model_digest = m.digest;
    calhost_target tg;
    memset(&tg, 0, sizeof tg);
    tg.header = (calhost_struct_header){CALHOST_STRUCT_TARGET, 1, sizeof tg};
    tg.processor = "bench";
    tg.thread_count = 1;
    tg.cpus = cpu0;
    tg.cpu_count = 1;
    calhost_session *ses = NULL;
    if (p.vt->open_session(p.inst, &w, &tg, &ses) != CALHOST_OK) {
      fprintf(stderr, "%s: open_session: %s\n", n->name, test_host_error);
      return 2;
    }
    size_t len;
    if (s == 0 && (!p.vt->default_policy ||
                   p.vt->default_policy(ses, policy[0], sizeof policy[0], &len) != CALHOST_OK))
      snprintf(policy[0], sizeof policy[0], "%s", argv[3]);
    uint32_t it[MAX_P];
    double v[MAX_P][REPS];
    for (size_t k = 0; k < np; k++) {
      it[k] = 1;
      t[s][k] = NAN;
      if (p.vt->prepare(ses, policy[k], strlen(policy[k])) != CALHOST_OK)
        continue; /* a policy this shape refuses */
      while (sample(&p, ses, it[k]) * it[k] < 0.005 && it[k] < (1u << 20))
        it[k] *= 2;
    }
    for (int r = 0; r < REPS; r++) /* interleaved: drifts hit every policy alike */
      for (size_t k = 0; k < np; k++)
        if (p.vt->prepare(ses, policy[k], strlen(policy[k])) == CALHOST_OK)
          v[k][r] = sample(&p, ses, it[k]);
        else
          v[k][r] = NAN;
    for (size_t k = 0; k < np; k++) {
      if (isnan(v[k][0]))
        continue;
      qsort(v[k], REPS, sizeof v[k][0], cmp_double);
      t[s][k] = v[k][REPS / 2];
    }
    p.vt->close_session(ses);
  }
  printf("%-24s %6s", "structure (M,N,K)", "nodes");
  for (size_t k = 0; k < np; k++)
    printf(" %12s", k ? (snprintf(err, sizeof err, "winner %zu", k), err) : "default");
  printf("   (us per node)\n");
  for (size_t s = 0; s < ns; s++) {
    const model_node *n = &m.nodes[st[s]];
    snprintf(err, sizeof err, "%lld,%lld,%lld%s", (long long)n->shape[0], (long long)n->shape[1],
             (long long)n->shape[2], s == rep ? " (rep)" : "");
    printf("%-24s %6zu", err, n->count);
    for (size_t k = 0; k < np; k++)
      printf(" %12.3f", t[s][k] * 1e6);
    printf("\n");
  }
  /* the model's total with each rule */
  double per_node = 0, deflt = 0, rep_all = 0, best_one = INFINITY;
  for (size_t s = 0; s < ns; s++) {
    double c = (double)m.nodes[st[s]].count;
    per_node += c * t[s][s + 1];
    deflt += c * t[s][0];
    rep_all += c * t[s][rep + 1];
  }
  size_t best_k = 0;
  for (size_t k = 1; k < np; k++) {
    double sum = 0;
    for (size_t s = 0; s < ns; s++)
      sum += (double)m.nodes[st[s]].count * t[s][k];
    if (sum < best_one) { /* NaN (a refused policy) never wins */
      best_one = sum;
      best_k = k;
    }
  }
  printf("model total, per-node winners (the rule):        %10.3f us  1.00x\n", per_node * 1e6);
  printf("model total, the representative's winner for all: %10.3f us  %.2fx\n", rep_all * 1e6,
         rep_all / per_node);
  printf("model total, best single winner (winner %zu):      %10.3f us  %.2fx\n", best_k,
         best_one * 1e6, best_one / per_node);
  printf("model total, the backend's default:               %10.3f us  %.2fx\n", deflt * 1e6,
         deflt / per_node);
  model_info_free(&m);
  test_host_unload(&p);
  return 0;
}
