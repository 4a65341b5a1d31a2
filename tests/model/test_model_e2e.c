/*
 * test_model_e2e.c: models as exporters write them, end to end from the
 * installed prefix (cmake --install into a temporary folder): the
 * PyTorch-style MLP (Gemm with a bias and transB=1), the encoder block
 * ([batch, seq, 768], attention's batched MatMuls), the GPT-style decoder
 * (`past_sequence_length + 1`), batched MatMuls with broadcasting and
 * shared weights, and Gemm's bias forms, each calibrated by `calibrate
 * --model` with cpu_gemm and with openblas: every MatMul/Gemm node gets a
 * calibrated policy (no "nodes left untuned", exit 0); `lookup --model` and
 * the runtime (libcalhost_runtime, calhost_runtime_add_model_with) select
 * the same policy per node for each of two bindings of the encoder, and
 * --force-portable selects per-node portable ones.
 *
 * These need the backends of the MatMul/Gemm structure contract
 * (CONTRACT37: bias, trans_a/trans_b, alpha/beta, batch/batch_a/batch_b);
 * the reader's side of them is model_read's and model_cli's.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "calhost/runtime.h"
#include "harness.h"

static char dir[] = "/tmp/calhost-model-e2e-XXXXXX";
static char calhost[PATH_MAX], plugins[PATH_MAX];
static char output[1 << 20];

static int setup(void **state) {
  (void)state;
  const char *build = getenv("CALHOST_BUILD_DIR"), *src = getenv("CALHOST_SOURCE_DIR");
  if (!build || !src || !mkdtemp(dir))
    return -1;
  char cmd[4 * PATH_MAX];
  snprintf(cmd, sizeof cmd,
           "cmake --install '%s' --prefix '%s/prefix' >'%s/install.log' 2>&1 && "
           "/usr/bin/python3 '%s/tests/model/make_models.py' '%s'",
           build, dir, dir, src, dir);
  {
    const char *const argv[] = {"-c", cmd, NULL};
    harness_result r = {0};
    int code =
        harness_run_program("/bin/sh", &(harness_opts){.cwd = dir, .timeout_s = 600}, &r, argv);
    if (code != 0)
      fprintf(stderr, "setup: exit %d:\n%s%s", code, r.out, r.err);
    harness_result_free(&r);
    if (code != 0)
      return -1;
  }
  snprintf(calhost, sizeof calhost, "%s/prefix/bin/calhost", dir);
  snprintf(plugins, sizeof plugins, "%s/prefix/lib/calhost/plugins", dir);
  /* one configuration per CPU backend */
  const char *backends[] = {"cpu_gemm", "openblas"};
  for (int i = 0; i < 2; i++) {
    snprintf(cmd, sizeof cmd, "%s/%s.ini", dir, backends[i]);
    FILE *f = fopen(cmd, "w");
    if (!f)
      return -1;
    fprintf(f,
            "[store]\npath = store-%s.txt\n[plugins]\npaths = %s/%s.so\nenabled = %s\n"
            "[calibration]\nthreads = 1\nrigor = quick\nrepetitions = 3\n",
            backends[i], plugins, backends[i], backends[i]);
    fclose(f);
  }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return harness_remove_tree(dir);
}

/* Runs `sh -c` in dir (HOME there, XDG_CONFIG_HOME dir/xdg) with the
 * installed calhost as $C; stdout and stderr into output; returns the exit
 * status. */
static int sh(const char *fmt, ...) {
  char script[8192], cmd[16384], xdg[PATH_MAX], cache[PATH_MAX], c[PATH_MAX + 8];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(script, sizeof script, fmt, ap);
  va_end(ap);
  snprintf(cmd, sizeof cmd, "%s 2>&1", script);
  snprintf(xdg, sizeof xdg, "%s/xdg", dir);
  snprintf(cache, sizeof cache, "%s/.cache", dir);
  snprintf(c, sizeof c, "C=%s", calhost);
  const char *const env[] = {c, NULL};
  harness_opts o = {.cwd = dir,
                    .home = dir,
                    .xdg_config_home = xdg,
                    .xdg_cache_home = cache,
                    .timeout_s = 600,
                    .env = env};
  harness_result r = {0};
  int code = harness_shell(&o, &r, cmd);
  snprintf(output, sizeof output, "%s", r.out);
  harness_result_free(&r);
  assert_true(code < 128); /* exited, not killed */
  return code;
}

/* calibrate --model FILE [--dims D] with backend: exit 0 and no node left
 * untuned; then lookup --model: every node exact_calibrated by backend. */
static void every_node_tuned(const char *backend, const char *file, const char *dims) {
  char d[300] = "";
  if (dims)
    snprintf(d, sizeof d, "--dims '%s'", dims);
  int rc = sh("$C --config %s.ini calibrate --model %s %s", backend, file, d);
  if (rc != 0 || strstr(output, "nodes left untuned"))
    fail_msg("%s: calibrate --model %s %s exited %d:\n%s", backend, file, d, rc, output);
  rc = sh("$C --config %s.ini lookup --model %s %s", backend, file, d);
  if (rc != 0)
    fail_msg("%s: lookup --model %s %s exited %d:\n%s", backend, file, d, rc, output);
  /* the node lines (after "model FILE (...)"): each exact_calibrated */
  char *save = NULL;
  size_t nodes = 0;
  for (char *line = strtok_r(output, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (!strncmp(line, "model ", 6))
      continue;
    nodes++;
    if (!strstr(line, "exact_calibrated"))
      fail_msg("%s: %s: a node without an exact calibrated policy: %s", backend, file, line);
  }
  assert_true(nodes > 0);
}

static void exporters_models_every_node_tuned_by_each_cpu_backend(void **state) {
  (void)state;
  const char *backends[] = {"cpu_gemm", "openblas"};
  for (int i = 0; i < 2; i++) {
    every_node_tuned(backends[i], "pt_mlp.onnx", "batch=32");
    every_node_tuned(backends[i], "encoder.onnx", "batch=2, seq=32");
    every_node_tuned(backends[i], "decoder.onnx", "batch=2, \"past_sequence_length + 1\"=33");
    every_node_tuned(backends[i], "broadcast.onnx", NULL);
    every_node_tuned(backends[i], "gemm_bias.onnx", NULL);
  }
}

/* Two bindings of the encoder: each its own exact profiles; lookup and
 * the runtime agree per node; --force-portable per node portable. */
static void encoder_at_two_sizes_lookup_and_runtime_agree_per_node(void **state) {
  (void)state;
  const char *bindings[] = {"batch=1, seq=32", "batch=2, seq=16"};
  for (int b = 0; b < 2; b++) {
    int rc = sh("$C --config cpu_gemm.ini calibrate --model encoder.onnx --dims '%s'", bindings[b]);
    if (rc != 0)
      fail_msg("calibrate %s: %d\n%s", bindings[b], rc, output);
  }
  char ini[PATH_MAX], model[PATH_MAX], store[PATH_MAX], err[2048];
  snprintf(ini, sizeof ini, "%s/cpu_gemm.ini", dir);
  snprintf(model, sizeof model, "%s/encoder.onnx", dir);
  snprintf(store, sizeof store, "%s/store-cpu_gemm.txt", dir);
  for (int fp = getenv("CALHOST_UNDER_VALGRIND") ? 2 : 0; fp <= 1; fp++) {
    calhost_runtime_options o;
    calhost_runtime_options_init(&o);
    o.config_path = ini;
    o.store_path = store;
    o.force_portable = fp;
    calhost_runtime *rt = NULL;
    assert_int_equal(calhost_runtime_open(&o, &rt, err, sizeof err), CALHOST_RUNTIME_OK);
    for (int b = 0; b < 2; b++) {
      calhost_runtime_model_options mo;
      calhost_runtime_model_options_init(&mo);
      mo.path = model;
      mo.dims = bindings[b];
      const calhost_runtime_model *m = NULL;
      assert_int_equal(calhost_runtime_add_model_with(rt, &mo, &m, err, sizeof err),
                       CALHOST_RUNTIME_OK);
      assert_int_equal(m->node_count, 8);
      assert_int_equal(sh("$C --config cpu_gemm.ini lookup --json --model encoder.onnx --dims "
                          "'%s' %s",
                          bindings[b], fp ? "--force-portable" : ""),
                       0);
      for (size_t i = 0; i < m->node_count; i++) {
        const calhost_runtime_model_node *n = &m->nodes[i];
        calhost_runtime_plugin *p = NULL;
        assert_int_equal(calhost_runtime_load_plugin(rt, NULL, n->workload, &p, err, sizeof err),
                         CALHOST_RUNTIME_OK);
        calhost_runtime_selection *sel = NULL;
        assert_int_equal(calhost_runtime_select(rt, p, n->workload, 0, &sel, err, sizeof err),
                         CALHOST_RUNTIME_OK);
        if (!sel->result->profile)
          fail_msg("%s node %s: no policy", bindings[b], n->name);
        assert_int_equal(sel->result->level,
                         fp ? CALSTORE_LEVEL_PORTABLE_CALIBRATED : CALSTORE_LEVEL_EXACT_CALIBRATED);
        if (n->model_keyed)
          assert_string_equal(sel->exact.model_digest, m->key_digest);
        char want[1200];
        snprintf(want, sizeof want, "{\"name\":\"%s\",", n->name);
        const char *at = strstr(output, want);
        assert_non_null(at);
        snprintf(want, sizeof want, "\"policy\":\"%s\"", sel->result->profile->policy);
        const char *end = strchr(at, '}'), *pol = strstr(at, want);
        assert_true(pol && pol < end);
        calhost_runtime_selection_free(&sel);
      }
    }
    calhost_runtime_close(&rt);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(exporters_models_every_node_tuned_by_each_cpu_backend),
      cmocka_unit_test(encoder_at_two_sizes_lookup_and_runtime_agree_per_node),
  };
  return cmocka_run_group_tests_name("model_e2e", tests, setup, teardown);
}
