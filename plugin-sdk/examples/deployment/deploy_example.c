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
 *
 * e.g. with config/deploy-portable.ini (force_portable = true) the portable
 * profile is selected even when an exact one exists for this machine.
 * Exit status: 0 a policy was selected, 1 none (use the backend's default),
 * 2 error.
 */
#include <stdio.h>
#include <string.h>

#include "calhost/runtime.h"

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s CONFIG WORKLOAD [BACKEND]\n", argv[0]);
    return 2;
  }
  const char *workload = argv[2], *backend = argc > 3 ? argv[3] : NULL;
  char err[4096];
  int rc = 2;
  calhost_runtime *rt = NULL;
  calhost_runtime_plugin *plugin = NULL;
  calhost_runtime_selection *sel = NULL;

  /* 1. The deployment configuration: store, force_portable, plugins, workloads. */
  calhost_runtime_options options;
  calhost_runtime_options_init(&options);
  options.config_path = argv[1];
  if (calhost_runtime_open(&options, &rt, err, sizeof err) != CALHOST_RUNTIME_OK) {
    fprintf(stderr, "%s\n", err);
    return 2;
  }

  /* 2. The backend (the given one, else the first serving the workload's
   * operator), created with its [plugin NAME] settings. */
  if (calhost_runtime_load_plugin(rt, backend, workload, &plugin, err, sizeof err) !=
      CALHOST_RUNTIME_OK) {
    fprintf(stderr, "%s\n", err);
    goto out;
  }

  /* 3. The keys for this machine and the selection (threads 0: the
   * configuration's first thread count). */
  if (calhost_runtime_select(rt, plugin, workload, 0, &sel, err, sizeof err) !=
      CALHOST_RUNTIME_OK) {
    fprintf(stderr, "%s\n", err);
    goto out;
  }
  const calstore_lookup_result *res = sel->result;
  const char *name = calhost_runtime_plugin_backend(plugin);
  if (res->profile) {
    printf("%s %s: policy %s (%s %s profile", name, workload, res->profile->policy,
           res->profile->key.kind == CALSTORE_KEY_EXACT ? "exact" : "portable",
           res->profile->source == CALSTORE_SOURCE_OVERRIDE ? "override" : "calibrated");
    for (size_t i = 0; i < res->profile->measurement_count; i++)
      if (!strcmp(res->profile->measurements[i].name, "median_latency"))
        printf(", measured %.3f us", res->profile->measurements[i].value);
    printf(")%s\n", sel->force_portable ? " [force_portable]" : "");
    rc = 0;
  } else {
    printf("%s %s: no calibrated policy (%zu rejected); using the backend's default%s\n", name,
           workload, res->rejection_count, sel->force_portable ? " [force_portable]" : "");
    rc = 1;
  }
  for (size_t i = 0; i < res->rejection_count; i++)
    printf("  rejected: %s: %s\n", calstore_reject_reason_name(res->rejections[i].reason),
           res->rejections[i].message ? res->rejections[i].message : "");

out:
  calhost_runtime_selection_free(&sel);
  calhost_runtime_close(&rt);
  return rc;
}
