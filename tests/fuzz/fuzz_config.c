/*
 * fuzz_config.c: libFuzzer target for calhost's INI configuration
 * (host/config, inih underneath): every input is loaded with
 * config_load_string as if it were a calhost.ini in a private scratch
 * directory (relative model paths resolve there); one input in 64 also goes
 * through a real file and config_load.
 *
 * Properties beyond "no crash, no leak, no undefined behaviour": a refused
 * file yields a non-empty "FILE:LINE: message" error and a zeroed config; an
 * accepted one has its required workload fields set, and config_free
 * leaves it zeroed; loading hashes nothing (model digests are computed on
 * demand by digest.c, which this target does not link: no OpenSSL). Seeds: the config/ INI files
 * (copied at run time by run.sh) plus the committed corpus.
 */
#include <string.h>

#include "config/config.h"
#include "fuzz_common.h"

static volatile size_t sink;

static int all_zero(const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    if (b[i])
      return 0;
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* Keep inputs small: the INI grammar has nothing that needs megabytes. */
  if (size > 64 * 1024)
    return 0;
  static char name[512];
  if (!name[0])
    snprintf(name, sizeof name, "%s/calhost.ini", fuzz_scratch());
  config_settings cfg;
  char err[1024];
  int rc;
  memset(&cfg, 0xA5, sizeof cfg); /* the loader must not rely on a zeroed cfg */
  err[0] = '\0';
  if (size % 64 == 0)
    rc = config_load(fuzz_write_file("calhost.ini", data, size), &cfg, err, sizeof err);
  else
    rc = config_load_string((const char *)data, size, name, &cfg, err, sizeof err);
  if (rc != 0) {
    FUZZ_CHECK(err[0] != '\0', "refused without a message");
    FUZZ_CHECK(memchr(err, '\0', sizeof err) != NULL, "error message not terminated");
    return 0;
  }
  for (size_t i = 0; i < cfg.workload_count; i++) {
    const config_workload *w = &cfg.workloads[i];
    FUZZ_CHECK(w->name && w->operator_name && w->dtype && w->shape && w->shape_rank,
               "workload %zu incomplete", i);
    FUZZ_CHECK(!w->model_digest, "workload %s: a digest computed while loading", w->name);
    sink += strlen(w->name) + strlen(w->operator_name) + strlen(w->dtype);
    for (size_t k = 0; k < w->shape_rank; k++)
      FUZZ_CHECK(w->shape[k] > 0, "workload %s: shape[%zu] = %lld accepted", w->name, k,
                 (long long)w->shape[k]);
    for (size_t k = 0; k < w->property_count; k++)
      sink += strlen(w->properties[k].name) + strlen(w->properties[k].value);
    FUZZ_CHECK(config_workload_named(&cfg, w->name) != NULL, "workload %s not found by name",
               w->name);
  }
  for (size_t i = 0; i < cfg.plugin_section_count; i++) {
    const config_plugin_section *s = &cfg.plugin_sections[i];
    FUZZ_CHECK(s->name != NULL, "plugin section %zu has no name", i);
    for (size_t k = 0; k < s->setting_count; k++)
      sink += strlen(s->settings[k].name) + strlen(s->settings[k].value);
    sink += (size_t)config_backend_enabled(&cfg, s->name);
  }
  static const char *keys[] = {
      "store.path",          "calibration.rigor",     "calibration.threads",
      "plugins.directories", "lookup.force_portable", "no.such"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    config_origin o = config_origin_of(&cfg, keys[i]);
    if (o.file)
      sink += strlen(o.file) + o.line;
  }
  config_free(&cfg);
  FUZZ_CHECK(all_zero(&cfg, sizeof cfg), "config_free left fields set");
  return 0;
}
