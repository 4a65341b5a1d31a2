/*
 * deploy_example.c: how a deployment (an inference runtime on a production
 * machine) uses the profiles calhost calibrated, with installed files only:
 * it links the deployment runtime (libcalhost_runtime, calhost/runtime.h),
 * opens it from a deployment configuration (store path, force_portable,
 * plugin directories, [plugin NAME] settings, workloads), loads the one
 * backend it needs, and selects the policy of a workload on this machine:
 * the backend builds the keys (the ones calibrate stored) and validates
 * every candidate policy. No calibration happens here.
 *
 *   calhost-deploy-example CONFIG WORKLOAD [BACKEND]
 *   calhost-deploy-example CONFIG --model FILE.onnx [BACKEND]
 *
 * The model form (runtime 0.3) selects the policy of every node of an ONNX
 * model (calhost_runtime_add_model), as `calhost calibrate --model` stored
 * them: exact when this machine calibrated the node's shape, else portable.
 * e.g. with config/deploy-portable.ini (force_portable = true) the portable
 * profile is selected even when an exact one exists for this machine.
 * Exit status: 0 a policy was selected (for every node), 1 none (use the
 * backend's default), 2 error.
 */
#include <stdio.h>
#include <string.h>

#include "calhost/runtime.h"

/* Selects and prints the policy of one workload (label: what it stands
 * for). Returns 0 selected, 1 none, 2 error. */
static int select_one(calhost_runtime *rt, const char *backend, const char *workload,
                      const char *label) {
  char err[4096];
  int rc = 2;
  calhost_runtime_plugin *plugin = NULL;
  calhost_runtime_selection *sel = NULL;

  /* The backend (the given one, else the first serving the workload's
   * operator), created with its [plugin NAME] settings. */
  if (calhost_runtime_load_plugin(rt, backend, workload, &plugin, err, sizeof err) !=
      CALHOST_RUNTIME_OK) {
    fprintf(stderr, "%s\n", err);
    return 2;
  }

  /* The keys for this machine and the selection (threads 0: the
   * configuration's first thread count). */
  if (calhost_runtime_select(rt, plugin, workload, 0, &sel, err, sizeof err) !=
      CALHOST_RUNTIME_OK) {
    fprintf(stderr, "%s\n", err);
    return 2;
  }
  const calstore_lookup_result *res = sel->result;
  const char *name = calhost_runtime_plugin_backend(plugin);
  if (res->profile) {
    printf("%s %s: policy %s (%s %s profile", name, label, res->profile->policy,
           res->profile->key.kind == CALSTORE_KEY_EXACT ? "exact" : "portable",
           res->profile->source == CALSTORE_SOURCE_OVERRIDE ? "override" : "calibrated");
    for (size_t i = 0; i < res->profile->measurement_count; i++)
      if (!strcmp(res->profile->measurements[i].name, "median_latency"))
        printf(", measured %.3f us", res->profile->measurements[i].value);
    printf(")%s\n", sel->force_portable ? " [force_portable]" : "");
    rc = 0;
  } else {
    printf("%s %s: no calibrated policy (%zu rejected); using the backend's default%s\n", name,
           label, res->rejection_count, sel->force_portable ? " [force_portable]" : "");
    rc = 1;
  }
  for (size_t i = 0; i < res->rejection_count; i++)
    printf("  rejected: %s: %s\n", calstore_reject_reason_name(res->rejections[i].reason),
           res->rejections[i].message ? res->rejections[i].message : "");
  calhost_runtime_selection_free(&sel);
  return rc;
}

int main(int argc, char **argv) {
  int model = argc > 3 && !strcmp(argv[2], "--model");
  if (argc < 3 || (!strcmp(argv[2], "--model") && !model)) {
    fprintf(stderr,
            "usage: %s CONFIG WORKLOAD [BACKEND]\n       %s CONFIG --model FILE [BACKEND]\n",
            argv[0], argv[0]);
    return 2;
  }
  const char *backend = argc > 3 + model ? argv[3 + model] : NULL;
  char err[4096];
  int rc = 2;
  calhost_runtime *rt = NULL;

  /* The deployment configuration: store, force_portable, plugins, workloads. */
  calhost_runtime_options options;
  calhost_runtime_options_init(&options);
  options.config_path = argv[1];
  if (calhost_runtime_open(&options, &rt, err, sizeof err) != CALHOST_RUNTIME_OK) {
    fprintf(stderr, "%s\n", err);
    return 2;
  }
  if (!model) {
    rc = select_one(rt, backend, argv[2], argv[2]);
  } else {
    /* The model form: every node, through the workload of its structure. */
    const calhost_runtime_model *m = NULL;
    if (calhost_runtime_add_model(rt, argv[3], NULL, &m, err, sizeof err) != CALHOST_RUNTIME_OK) {
      fprintf(stderr, "%s\n", err);
    } else {
      printf("model %s (%s): %zu nodes\n", m->path, m->digest, m->node_count);
      rc = m->node_count ? 0 : 1;
      for (size_t i = 0; i < m->node_count; i++) {
        char label[512];
        snprintf(label, sizeof label, "node %s", m->nodes[i].name);
        int one = select_one(rt, backend, m->nodes[i].workload, label);
        if (one > rc)
          rc = one;
      }
    }
  }
  calhost_runtime_close(&rt);
  return rc;
}
