/*
 * environment.c: the environment a measurement ran in (frequency governor,
 * load average, online CPUs), recorded with each result, and the warnings
 * that say when it makes timings unreliable.
 */
#define _GNU_SOURCE
#include "processor.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void add_warning(processor_environment *env, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void add_warning(processor_environment *env, const char *fmt, ...) {
  va_list ap;
  if (env->warning_count >= CALHOST_PROCESSOR_MAX_WARNINGS)
    return;
  va_start(ap, fmt);
  vsnprintf(env->warnings[env->warning_count], sizeof env->warnings[0], fmt, ap);
  va_end(ap);
  env->warning_count++;
}

/* Reads CPU cpu's scaling governor into buf; 0, or -1 when there is none. */
static int read_governor(int cpu, char *buf, size_t cap) {
  char path[128];
  FILE *f;
  size_t n;
  snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor", cpu);
  f = fopen(path, "r");
  if (!f)
    return -1;
  if (!fgets(buf, (int)cap, f)) {
    fclose(f);
    return -1;
  }
  fclose(f);
  n = strlen(buf);
  while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
    buf[--n] = '\0';
  return n ? 0 : -1;
}

void processor_environment_record(const int *cpus, size_t cpu_count, processor_environment *out) {
  int *allowed = NULL;
  size_t allowed_n = 0;
  const int *set = cpus;
  size_t n = cpu_count;
  long online;
  double loads[3];
  memset(out, 0, sizeof *out);
  if (n == 0 && processor_allowed_cpus(&allowed, &allowed_n, NULL, 0) == 0) {
    set = allowed;
    n = allowed_n;
  }
  snprintf(out->governor, sizeof out->governor, "unknown");
  for (size_t i = 0; i < n; i++) {
    char g[sizeof out->governor];
    if (read_governor(set[i], g, sizeof g) != 0)
      continue;
    if (!strcmp(out->governor, "unknown"))
      snprintf(out->governor, sizeof out->governor, "%s", g);
    else if (strcmp(out->governor, g) != 0)
      snprintf(out->governor, sizeof out->governor, "mixed");
  }
  out->set_cpus = (unsigned)n;
  free(allowed);
  online = sysconf(_SC_NPROCESSORS_ONLN);
  out->online_cpus = online > 0 ? (unsigned)online : 0;
  if (getloadavg(loads, 3) == 3) {
    for (int i = 0; i < 3; i++)
      out->load_average[i] = loads[i];
  } else {
    for (int i = 0; i < 3; i++)
      out->load_average[i] = -1;
  }
  processor_environment_assess(out);
}

void processor_environment_assess(processor_environment *env) {
  env->warning_count = 0;
  memset(env->warnings, 0, sizeof env->warnings);
  if (strcmp(env->governor, "unknown") != 0 && strcmp(env->governor, "performance") != 0)
    add_warning(env,
                "CPU frequency governor is '%s', not 'performance': clock scaling may distort "
                "timings",
                env->governor);
  if (env->load_average[0] >= 0 && env->set_cpus > 0 &&
      env->load_average[0] > 0.5 * (double)env->set_cpus)
    add_warning(env,
                "load average %.2f is above half the %u target CPUs: other work competes with "
                "the measurements",
                env->load_average[0], env->set_cpus);
}

size_t processor_environment_format(const processor_environment *env, char *buf, size_t capacity) {
  int n = snprintf(buf, capacity, "governor=%s;load1=%.2f;load5=%.2f;load15=%.2f;online=%u;set=%u",
                   env->governor, env->load_average[0], env->load_average[1], env->load_average[2],
                   env->online_cpus, env->set_cpus);
  return n > 0 ? (size_t)n : 0;
}
