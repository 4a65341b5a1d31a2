/*
 * deploy_example.c: how a deployment (an inference runtime on a production
 * machine) uses the profiles calhost calibrated: it links libcalstore, reads
 * its deployment config (store path, force_portable), loads its backend,
 * builds the keys with the backend's key-builder for this machine, and looks
 * the policy up with the backend's validator. No calibration happens here.
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

#include "calhost/calstore.h"
#include "calhost/plugin.h"
#include "config/config.h"
#include "config/digest.h"
#include "loader/loader.h"
#include "processor/processor.h"

/* The store calls the backend's validator/deserializer on every candidate. */
static int validate(void *user, const char *policy, size_t length, char *err, size_t cap) {
  calhost_plugin *p = ((void **)user)[0];
  calhost_plugin_instance *inst = ((void **)user)[1];
  return p->vtable.validate_policy(inst, policy, length, err, cap) == CALHOST_OK;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s CONFIG WORKLOAD [BACKEND]\n", argv[0]);
    return 2;
  }
  char err[1024];
  int rc = 2;
  calhost_config cfg;
  calstore *store = NULL;
  calhost_target_list targets = {0};
  calhost_plugin_list plugins = {0};
  calhost_plugin *p = NULL;
  calhost_plugin_instance *inst = NULL;
  calstore_lookup_result *res = NULL;

  /* 1. The deployment config: store, force_portable, the workload. */
  if (calhost_config_load(argv[1], &cfg, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return 2;
  }
  const calhost_config_workload *w = calhost_config_workload_named(&cfg, argv[2]);
  if (!w) {
    fprintf(stderr, "no workload '%s' in %s\n", argv[2], argv[1]);
    goto out;
  }
  calstore_options so;
  calstore_error se = {0};
  calstore_options_init(&so);
  so.path = cfg.store_path;
  so.persistence_enabled = cfg.persistence_enabled;
  if (calstore_open(&so, &store, &se) != CALSTORE_OK) {
    fprintf(stderr, "store: %s\n", se.message);
    goto out;
  }

  /* 2. This machine: the processor identity and the thread count we run with. */
  uint32_t threads = cfg.thread_count_count ? cfg.thread_counts[0] : 1;
  if (calhost_processor_targets(cfg.cpus, cfg.cpu_count, cfg.cpus_all, &threads, 1, &targets, err,
                                sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    goto out;
  }

  /* 3. The backend (a runtime would link it; here it is loaded as a plugin). */
  calhost_loader_options lo;
  calhost_loader_options_init(&lo);
  lo.config_dirs = cfg.plugin_dirs;
  lo.config_dir_count = cfg.plugin_dir_count;
  lo.explicit_paths = cfg.plugin_paths;
  lo.explicit_path_count = cfg.plugin_path_count;
  lo.enabled = cfg.enabled_backends;
  lo.enabled_count = cfg.enabled_count;
  lo.disabled = cfg.disabled_backends;
  lo.disabled_count = cfg.disabled_count;
  calhost_loader_discover(&lo, &plugins);
  for (size_t i = 0; i < plugins.count && !p; i++) {
    calhost_plugin *c = plugins.items[i];
    for (size_t j = 0; c->loaded && j < c->operator_count && !p; j++)
      if (!strcmp(c->operators[j], w->operator_name) && (argc < 4 || !strcmp(c->backend, argv[3])))
        p = c;
  }
  if (!p || p->vtable.create(&p->services, NULL, 0, &inst) != CALHOST_OK) {
    fprintf(stderr, "no backend for %s\n", w->operator_name);
    goto out;
  }

  /* 4. The keys, from the backend's key-builder (the model digest is
   * hashed here, on first use). */
  const char *digest = calhost_config_workload_digest(w, err, sizeof err);
  if (!digest) {
    fprintf(stderr, "%s\n", err);
    goto out;
  }
  calhost_workload wl = {{CALHOST_STRUCT_WORKLOAD, 1, sizeof wl},
                         w->name,
                         w->operator_name,
                         w->dtype,
                         w->shape,
                         w->shape_rank,
                         w->properties,
                         w->property_count,
                         digest};
  calhost_target tg = {{CALHOST_STRUCT_TARGET, 1, sizeof tg},
                       targets.processor.description,
                       targets.items[0].thread_count,
                       targets.items[0].cpus,
                       targets.items[0].cpu_count,
                       targets.processor.features,
                       NULL, /* device_identity (ABI 2): a CPU target */
                       0};
  calhost_built_key key = {.header = {CALHOST_STRUCT_BUILT_KEY, 1, sizeof key}};
  if (p->vtable.build_key(inst, &wl, &tg, &key) != CALHOST_OK) {
    fprintf(stderr, "%s cannot serve workload %s\n", p->backend, w->name);
    goto out;
  }

  /* 5. The lookup: precedence walk, validator, force_portable from the config. */
  calstore_lookup_options q = {
      .backend = p->backend,
      .operator_name = w->operator_name,
      .implementation = p->implementation_version,
      .model_digest = key.model_digest,
      .processor = key.processor,
      .thread_count = key.thread_count,
      .structure = (const calstore_property *)key.structure,
      .structure_count = key.structure_count,
      .force_portable = cfg.force_portable,
  };
  void *ctx[2] = {p, inst};
  calstore_lookup(store, &q, validate, ctx, &res, &se);
  if (!res) {
    fprintf(stderr, "lookup: %s\n", se.message);
    goto out;
  }
  if (res->profile) {
    printf("%s %s: policy %s (%s %s profile", p->backend, w->name, res->profile->policy,
           res->profile->key.kind == CALSTORE_KEY_EXACT ? "exact" : "portable",
           res->profile->source == CALSTORE_SOURCE_OVERRIDE ? "override" : "calibrated");
    for (size_t i = 0; i < res->profile->measurement_count; i++)
      if (!strcmp(res->profile->measurements[i].name, "median_latency"))
        printf(", measured %.3f us", res->profile->measurements[i].value);
    printf(")\n");
    rc = 0;
  } else {
    printf("%s %s: no calibrated policy (%zu rejected); using the backend's default\n", p->backend,
           w->name, res->rejection_count);
    rc = 1;
  }
  for (size_t i = 0; i < res->rejection_count; i++)
    printf("  rejected: %s: %s\n", calstore_reject_reason_name(res->rejections[i].reason),
           res->rejections[i].message);

out:
  calstore_lookup_result_free(&res);
  if (inst)
    p->vtable.destroy(inst);
  calhost_plugin_list_free(&plugins);
  calhost_target_list_free(&targets);
  calstore_close(&store);
  calhost_config_free(&cfg);
  return rc;
}
