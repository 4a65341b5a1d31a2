/*
 * test_model_cli.c: models through the real program ($CALHOST_BUILD_DIR/
 * bin/calhost) with the shipped cpu_gemm plugin: `model show` (text, --json,
 * --dims, exit statuses, errors naming the file and node), `calibrate
 * --model` and [model NAME] into a fresh store (the exact key of each
 * operator's representative structure is the file's SHA-256 as sha256sum
 * prints it, the other structure keeps its own exact profile, one portable
 * profile per structure, nodes of one structure calibrated once), and the
 * configuration errors of [model NAME] with FILE:LINE; `lookup --model`
 * (exact by the keys above, --force-portable per structure) and the
 * deployment runtime's calhost_runtime_add_model selecting the same.
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

static char dir[] = "/tmp/calhost-model-cli-XXXXXX";
static char calhost[PATH_MAX];
static char output[1 << 18];

static int setup(void **state) {
  (void)state;
  const char *build = getenv("CALHOST_BUILD_DIR"), *src = getenv("CALHOST_SOURCE_DIR");
  if (!build || !src || !mkdtemp(dir))
    return -1;
  snprintf(calhost, sizeof calhost, "%s/bin/calhost", build);
  char cmd[3 * PATH_MAX];
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s/tests/model/make_models.py' '%s'", src, dir);
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
  snprintf(cmd, sizeof cmd, "%s/calhost.ini", dir);
  FILE *f = fopen(cmd, "w");
  if (!f)
    return -1;
  fprintf(f,
          "[store]\npath = store.txt\n[plugins]\npaths = "
          "%s/lib/calhost/plugins/cpu_gemm.so\nenabled = cpu_gemm\n"
          "[calibration]\nthreads = 1\nrigor = quick\nrepetitions = 3\n",
          build);
  fclose(f);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return harness_remove_tree(dir);
}

/* Runs `sh -c` in dir (HOME there, XDG_CONFIG_HOME dir/xdg) with calhost
 * as $C; stdout (and stderr when with_stderr) into output; returns the
 * exit status. */
static int sh(int with_stderr, const char *fmt, ...) {
  char script[8192], cmd[16384], xdg[PATH_MAX], cache[PATH_MAX], c[PATH_MAX + 8];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(script, sizeof script, fmt, ap);
  va_end(ap);
  snprintf(cmd, sizeof cmd, "%s %s", script, with_stderr ? "2>&1" : "2>/dev/null");
  snprintf(xdg, sizeof xdg, "%s/xdg", dir);
  snprintf(cache, sizeof cache, "%s/.cache", dir);
  snprintf(c, sizeof c, "C=%s", calhost);
  const char *const env[] = {c, NULL};
  harness_opts o = {
      .cwd = dir, .home = dir, .xdg_config_home = xdg, .xdg_cache_home = cache, .env = env};
  harness_result r = {0};
  int code = harness_shell(&o, &r, cmd);
  snprintf(output, sizeof output, "%s", r.out);
  harness_result_free(&r);
  assert_true(code < 128); /* exited, not killed */
  return code;
}

static void has(const char *needle) {
  if (!strstr(output, needle))
    fail_msg("expected '%s' in:\n%s", needle, output);
}

static void has_in(const char *text, const char *needle) {
  if (!strstr(text, needle))
    fail_msg("expected '%s' in:\n%s", needle, text);
}

static void model_show_lists_nodes_digest_and_skips(void **state) {
  (void)state;
  assert_int_equal(sh(1, "$C model show three.onnx"), 0);
  has("nodes to calibrate: 3 (2 structures)");
  has("  q  MatMul float32 shape=64,256,256");
  has("same as q");
  assert_int_equal(sh(0, "sha256sum three.onnx | cut -c1-64"), 0);
  char hex[80];
  snprintf(hex, sizeof hex, "%.64s", output);
  assert_int_equal(sh(1, "$C model show three.onnx"), 0);
  has(hex);
  /* --json: one object with the nodes and the skipped ones */
  assert_int_equal(sh(0, "$C model show --json batch.onnx"), 0);
  has("\"status\":\"ok\"");
  has("\"nodes\":[]");
  has("\"name\":\"proj\"");
  has("symbolic 'batch'");
  assert_int_equal(sh(0, "$C model show --json batch.onnx --dims batch=8"), 0);
  has("\"shape\":[1024,32,64]");
  has("\"skipped\":[]");
  /* errors: exit 2, the file and node named; --json answers {status, message} */
  assert_int_equal(sh(1, "$C model show missing_input.onnx"), 2);
  has("missing_input.onnx: node lonely (MatMul): missing inputs");
  assert_int_equal(sh(0, "$C model show --json truncated.onnx"), 2);
  has("\"status\":\"error\"");
  has("truncated.onnx: not an ONNX model");
  assert_int_equal(sh(1, "$C model show batch.onnx --dims batch=zero"), 2);
  has("bad --dims");
  assert_int_equal(sh(1, "$C model list three.onnx"), 2);
  has("unknown subcommand");
}

/* The lines of the store file that follow a profile header, as "KIND
 * DIGEST-or-m=,n=,k=" summaries in output (via awk). */
static void store_summary(void) {
  assert_int_equal(
      sh(0, "awk '/^profile/{k=$2} /^model_digest/{print k, $2} "
            "/^structure \"(m|n|k)\"/{s=s $3} /^end/{if(k==\"portable\")print k, s; s=\"\"}' "
            "store.txt"),
      0);
}

static void calibrate_model_keys_exact_by_file_digest_and_portable_per_structure(void **state) {
  (void)state;
  assert_int_equal(sh(1, "rm -f store.txt && $C --config calhost.ini calibrate --model "
                         "three.onnx -q"),
                   0);
  store_summary();
  char expect[400];
  /* q (two nodes of 64x256x256) carries more of the model's work than out:
   * it is MatMul's representative, keyed by the file */
  assert_int_equal(sh(0, "sha256sum three.onnx | cut -c1-64"), 0);
  char hex[80];
  snprintf(hex, sizeof hex, "%.64s", output);
  store_summary();
  snprintf(expect, sizeof expect, "exact \"sha256:%s\"", hex);
  has(expect);
  /* out keeps its own exact profile, under its canonical digest */
  char canon[80];
  assert_int_equal(sh(0, "printf '%%s' 'operator=MatMul;dtype=float32;shape=64,128,256;' | "
                         "sha256sum | cut -c1-64"),
                   0);
  snprintf(canon, sizeof canon, "%.64s", output);
  store_summary();
  snprintf(expect, sizeof expect, "exact \"sha256:%s\"", canon);
  has(expect);
  has("portable \"256\"\"64\"\"256\"");
  has("portable \"256\"\"64\"\"128\"");
  /* two structures: two exact and two portable profiles, k (same as q) not
   * calibrated again */
  assert_int_equal(sh(0, "grep -c '^profile' store.txt"), 0);
  assert_string_equal(output, "4\n");
  /* a second run finds everything calibrated */
  assert_int_equal(sh(1, "$C --config calhost.ini calibrate --model three.onnx"), 0);
  has("already calibrated");
  /* plan and verify take --model too: the same two items, the two exact keys */
  assert_int_equal(sh(1, "$C --config calhost.ini plan --model three.onnx"), 0);
  has("three.q");
  has("three.out");
  has("2 items");
  int v = sh(1, "$C --config calhost.ini verify --model three.onnx --rigor quick");
  assert_true(v == 0 || v == 1); /* 1: a noisy machine made one look slower */
  has("verify: 2 keys");
}

static void model_section_calibrates_with_its_dims_and_reports_errors_by_line(void **state) {
  (void)state;
  assert_int_equal(sh(1, "rm -f store.txt && cp calhost.ini m.ini && printf '[model enc]\\nfile "
                         "= batch.onnx\\ndims = batch=2\\n' >> m.ini && $C --config m.ini "
                         "calibrate -q && grep -c '^profile' store.txt"),
                   0);
  assert_string_equal(output, "2\n");
  assert_int_equal(sh(1, "$C --config m.ini config show"), 0);
  has("[model enc]");
  has("dims = batch=2");
  assert_int_equal(sh(1, "printf '[model x]\\ndims = batch=8\\n' > bad.ini && $C --config bad.ini "
                         "config check"),
                   1);
  has("bad.ini:1: [model x] lacks the required key 'file'");
  assert_int_equal(sh(1, "printf '[model x]\\nfile = three.onnx\\ndims = b=0\\n' > bad.ini && $C "
                         "--config bad.ini config check"),
                   1);
  has("bad.ini:3:");
  assert_int_equal(sh(1, "printf '[model x]\\nfile = truncated.onnx\\n' > bad.ini && $C --config "
                         "bad.ini calibrate"),
                   2);
  has("bad.ini:2: [model x]:");
  has("truncated.onnx: not an ONNX model");
}

static void lookup_model_and_the_runtime_select_each_nodes_policy(void **state) {
  (void)state;
  assert_int_equal(sh(1, "rm -f store.txt && $C --config calhost.ini calibrate -q --model "
                         "three.onnx"),
                   0);
  assert_int_equal(sh(0, "sha256sum three.onnx | cut -c1-64"), 0);
  char hex[80], line[400];
  snprintf(hex, sizeof hex, "%.64s", output);
  assert_int_equal(sh(1, "$C --config calhost.ini lookup --model three.onnx"), 0);
  snprintf(line, sizeof line, "[exact model sha256:%s]", hex);
  has(line);
  has("q  MatMul  exact_calibrated cpu_gemm: ");
  has("out  MatMul  exact_calibrated cpu_gemm: ");
  assert_int_equal(sh(1, "$C --config calhost.ini lookup --model three.onnx --force-portable"), 0);
  has("q  MatMul  portable_calibrated cpu_gemm: ");
  has("out  MatMul  portable_calibrated cpu_gemm: ");
  assert_int_equal(sh(1, "$C --config calhost.ini lookup --model three.onnx --node nope"), 2);
  has("no node nope");
  /* the runtime, in this process, selects what the command line selects */
  char ini[PATH_MAX], model[PATH_MAX], store[PATH_MAX];
  snprintf(ini, sizeof ini, "%s/calhost.ini", dir);
  snprintf(model, sizeof model, "%s/three.onnx", dir);
  snprintf(store, sizeof store, "%s/store.txt", dir);
  /* Under valgrind this process sees valgrind's CPU (its CPUID hides
   * AVX-512): its exact keys name another processor than the native
   * calibrate stored, and cpu_gemm's validator refuses the stored AVX-512
   * policies, so the comparison runs in the plain and sanitizer builds
   * only. */
  for (int fp = getenv("CALHOST_UNDER_VALGRIND") ? 2 : 0; fp <= 1; fp++) {
    calhost_runtime_options o;
    calhost_runtime_options_init(&o);
    o.config_path = ini;
    o.store_path = store;
    o.force_portable = fp;
    calhost_runtime *rt = NULL;
    char err[2048];
    assert_int_equal(calhost_runtime_open(&o, &rt, err, sizeof err), CALHOST_RUNTIME_OK);
    const calhost_runtime_model *m = NULL;
    assert_int_equal(calhost_runtime_add_model(rt, model, NULL, &m, err, sizeof err),
                     CALHOST_RUNTIME_OK);
    snprintf(line, sizeof line, "sha256:%s", hex);
    assert_string_equal(m->digest, line);
    assert_int_equal(m->node_count, 3);
    const calhost_runtime_model *again = NULL;
    assert_int_equal(calhost_runtime_add_model(rt, model, NULL, &again, err, sizeof err),
                     CALHOST_RUNTIME_OK);
    assert_ptr_equal(again, m);
    assert_int_equal(sh(0, "$C --config calhost.ini lookup --model three.onnx --json %s",
                        fp ? "--force-portable" : ""),
                     0);
    for (size_t i = 0; i < m->node_count; i++) {
      const calhost_runtime_model_node *n = &m->nodes[i];
      assert_int_equal(n->model_keyed, strcmp(n->name, "out") != 0);
      calhost_runtime_plugin *p = NULL;
      assert_int_equal(calhost_runtime_load_plugin(rt, NULL, n->workload, &p, err, sizeof err),
                       CALHOST_RUNTIME_OK);
      calhost_runtime_selection *sel = NULL;
      assert_int_equal(calhost_runtime_select(rt, p, n->workload, 0, &sel, err, sizeof err),
                       CALHOST_RUNTIME_OK);
      assert_non_null(sel->result->profile);
      assert_int_equal(sel->result->level,
                       fp ? CALSTORE_LEVEL_PORTABLE_CALIBRATED : CALSTORE_LEVEL_EXACT_CALIBRATED);
      if (n->model_keyed)
        assert_string_equal(sel->exact.model_digest, line);
      snprintf(err, sizeof err, "{\"name\":\"%s\",", n->name);
      const char *at = strstr(output, err);
      assert_non_null(at);
      snprintf(err, sizeof err, "\"policy\":\"%s\"", sel->result->profile->policy);
      const char *end = strchr(at, '}');
      const char *pol = strstr(at, err);
      assert_true(pol && pol < end);
      calhost_runtime_selection_free(&sel);
    }
    assert_int_equal(calhost_runtime_add_model(rt, "/nonexistent.onnx", NULL, &m, err, sizeof err),
                     CALHOST_RUNTIME_MODEL);
    assert_null(m);
    calhost_runtime_close(&rt);
  }
}

/* The first 64 hex digits sha256sum prints for file, into hex. */
static void sha256_of(const char *file, char hex[80]) {
  assert_int_equal(sh(0, "sha256sum %s | cut -c1-64", file), 0);
  snprintf(hex, 80, "%.64s", output);
}

static void one_model_at_two_sizes_keeps_two_sets_of_profiles(void **state) {
  (void)state;
  char hex[80], want[300];
  sha256_of("batch.onnx", hex);
  assert_int_equal(sh(1,
                      "rm -f store.txt && cp calhost.ini two.ini && printf '[model two]\\nfile = "
                      "batch.onnx\\ndims = batch=8 | batch=16\\n' >> two.ini && $C --config "
                      "two.ini calibrate -q"),
                   0);
  store_summary();
  /* each binding: its exact key (the file's sha256, then the binding) and
   * its portable one (M = batch x 128) */
  snprintf(want, sizeof want, "exact \"sha256:%s;dims=batch=8\"", hex);
  has(want);
  snprintf(want, sizeof want, "exact \"sha256:%s;dims=batch=16\"", hex);
  has(want);
  has("portable \"64\"\"1024\"\"32\""); /* k, m, n */
  has("portable \"64\"\"2048\"\"32\"");
  /* a lookup answers with its own binding's exact profile */
  assert_int_equal(sh(1, "$C --config two.ini lookup --model batch.onnx --dims batch=16"), 0);
  snprintf(want, sizeof want, "[exact model sha256:%s;dims=batch=16]", hex);
  has(want);
  has("proj  MatMul  exact_calibrated cpu_gemm: ");
  /* another binding is never answered exactly with one of these */
  assert_int_equal(sh(1, "$C --config two.ini lookup --model batch.onnx --dims batch=4"), 1);
  has("none: no acceptable profile");
  /* without --dims: said, not re-chosen */
  assert_int_equal(sh(1, "$C --config two.ini lookup --model batch.onnx"), 2);
  has("lookup: batch.onnx: the model needs its symbolic dimensions bound: batch");
  /* two bindings on the command line: each calibrated already */
  assert_int_equal(
      sh(1, "$C --config calhost.ini calibrate --model batch.onnx --dims 'batch=8 | batch=16'"), 0);
  has("batch-1.proj");
  has("batch-2.proj");
  has("skipped: already calibrated");
  /* the runtime: the same path with other dims is another model */
  char ini[PATH_MAX], model[PATH_MAX], store[PATH_MAX], err[2048];
  snprintf(ini, sizeof ini, "%s/two.ini", dir);
  snprintf(model, sizeof model, "%s/batch.onnx", dir);
  snprintf(store, sizeof store, "%s/store.txt", dir);
  calhost_runtime_options o;
  calhost_runtime_options_init(&o);
  o.config_path = ini;
  o.store_path = store;
  calhost_runtime *rt = NULL;
  assert_int_equal(calhost_runtime_open(&o, &rt, err, sizeof err), CALHOST_RUNTIME_OK);
  const calhost_runtime_model *m8 = NULL, *m16 = NULL, *again = NULL;
  assert_int_equal(calhost_runtime_add_model(rt, model, "batch=8", &m8, err, sizeof err),
                   CALHOST_RUNTIME_OK);
  assert_int_equal(calhost_runtime_add_model(rt, model, "batch=16", &m16, err, sizeof err),
                   CALHOST_RUNTIME_OK);
  assert_ptr_not_equal(m8, m16);
  assert_string_equal(m8->name, "batch");
  assert_string_equal(m16->name, "batch-2");
  assert_int_equal(calhost_runtime_add_model(rt, model, " batch = 8 ", &again, err, sizeof err),
                   CALHOST_RUNTIME_OK);
  assert_ptr_equal(again, m8);
  const calhost_runtime_model *both[2] = {m8, m16};
  for (int i = 0; i < 2 && !getenv("CALHOST_UNDER_VALGRIND"); i++) {
    snprintf(want, sizeof want, "sha256:%s;dims=batch=%d", hex, i ? 16 : 8);
    assert_string_equal(both[i]->key_digest, want);
    calhost_runtime_plugin *p = NULL;
    assert_int_equal(
        calhost_runtime_load_plugin(rt, NULL, both[i]->nodes[0].workload, &p, err, sizeof err),
        CALHOST_RUNTIME_OK);
    calhost_runtime_selection *sel = NULL;
    assert_int_equal(
        calhost_runtime_select(rt, p, both[i]->nodes[0].workload, 0, &sel, err, sizeof err),
        CALHOST_RUNTIME_OK);
    assert_non_null(sel->result->profile);
    assert_int_equal(sel->result->level, CALSTORE_LEVEL_EXACT_CALIBRATED);
    assert_string_equal(sel->exact.model_digest, want);
    calhost_runtime_selection_free(&sel);
  }
  calhost_runtime_close(&rt);
}

static void runtime_names_models_and_files_of_one_base_name_coexist(void **state) {
  (void)state;
  assert_int_equal(sh(0, "mkdir -p a b && cp three.onnx a/model.onnx && cp batch.onnx "
                         "b/model.onnx"),
                   0);
  char a[PATH_MAX], b[PATH_MAX], err[2048];
  snprintf(a, sizeof a, "%s/a/model.onnx", dir);
  snprintf(b, sizeof b, "%s/b/model.onnx", dir);
  calhost_runtime_options o;
  calhost_runtime_options_init(&o);
  calhost_runtime *rt = NULL;
  assert_int_equal(calhost_runtime_open(&o, &rt, err, sizeof err), CALHOST_RUNTIME_OK);
  const calhost_runtime_model *ma = NULL, *mb = NULL, *mine = NULL, *x = NULL;
  assert_int_equal(calhost_runtime_add_model(rt, a, NULL, &ma, err, sizeof err),
                   CALHOST_RUNTIME_OK);
  assert_int_equal(calhost_runtime_add_model(rt, b, "batch=4", &mb, err, sizeof err),
                   CALHOST_RUNTIME_OK);
  assert_string_equal(ma->name, "model");
  assert_string_equal(mb->name, "model-2");
  assert_string_equal(mb->nodes[0].workload, "model-2.proj");
  assert_string_equal(ma->unbound, "");
  /* a name the caller gives */
  calhost_runtime_model_options mo;
  calhost_runtime_model_options_init(&mo);
  mo.path = a;
  mo.name = "encoder_v2";
  assert_int_equal(calhost_runtime_add_model_with(rt, &mo, &mine, err, sizeof err),
                   CALHOST_RUNTIME_OK);
  assert_string_equal(mine->name, "encoder_v2");
  assert_ptr_not_equal(mine, ma);
  assert_int_equal(calhost_runtime_add_model_with(rt, &mo, &x, err, sizeof err),
                   CALHOST_RUNTIME_OK);
  assert_ptr_equal(x, mine);
  /* a taken name, a bad name, a bad struct_size */
  mo.path = b;
  mo.name = "model";
  assert_int_equal(calhost_runtime_add_model_with(rt, &mo, &x, err, sizeof err),
                   CALHOST_RUNTIME_INVALID_ARGUMENT);
  has_in(err, "another model named model");
  mo.name = "a b";
  assert_int_equal(calhost_runtime_add_model_with(rt, &mo, &x, err, sizeof err),
                   CALHOST_RUNTIME_INVALID_ARGUMENT);
  mo.name = NULL;
  mo.struct_size = 3;
  assert_int_equal(calhost_runtime_add_model_with(rt, &mo, &x, err, sizeof err),
                   CALHOST_RUNTIME_INVALID_ARGUMENT);
  /* without its dims the model says what it needs */
  mo.struct_size = sizeof mo;
  mo.name = "nodims";
  assert_int_equal(calhost_runtime_add_model_with(rt, &mo, &x, err, sizeof err),
                   CALHOST_RUNTIME_OK);
  assert_string_equal(x->unbound, "batch");
  assert_int_equal(x->node_count, 0);
  calhost_runtime_close(&rt);
}

static void flags_messages_and_narrowing_name_the_command_and_form(void **state) {
  (void)state;
  /* --dims and --node without --model */
  assert_int_equal(sh(1, "$C --config calhost.ini calibrate --dims batch=2"), 2);
  has("calibrate: --dims binds the symbolic dimensions of --model FILE");
  assert_int_equal(sh(1, "$C --config calhost.ini plan --dims batch=2"), 2);
  has("plan: --dims");
  assert_int_equal(sh(1, "$C --config calhost.ini lookup --dims batch=2"), 2);
  has("lookup: --dims needs --model FILE");
  assert_int_equal(sh(1, "$C --config calhost.ini lookup --node q"), 2);
  has("lookup: --node needs --model FILE");
  assert_int_equal(
      sh(1, "$C --config calhost.ini lookup --model batch.onnx --dims 'batch=1|batch=2'"), 2);
  has("lookup: bad --dims: one binding only here");
  /* each command names itself */
  assert_int_equal(sh(1, "$C --config calhost.ini plan --model nothere.onnx"), 2);
  has("calhost: plan: --model: nothere.onnx");
  assert_int_equal(sh(1, "$C --config calhost.ini verify --model batch.onnx"), 2);
  has("calhost: verify: --model batch.onnx: no node to verify");
  /* the form the user can type: --dims on a command line, dims = in a section */
  assert_int_equal(sh(1, "$C --config calhost.ini plan --model batch.onnx --dims x=1"), 2);
  has("(bind it: --dims 'batch=N')");
  assert_int_equal(sh(1, "cp calhost.ini s.ini && printf '[model b]\\nfile = batch.onnx\\n' >> "
                         "s.ini && $C --config s.ini plan --model three.onnx"),
                   0);
  has("[model b]: node proj (MatMul) skipped: input A (x): dimension 0 is symbolic 'batch' "
      "(bind it: dims = batch=N)");
  /* --model naming a [model]'s file narrows the run to it (each binding;
   * --dims picks one) */
  assert_int_equal(sh(1, "cp calhost.ini n.ini && printf '[model two]\\nfile = batch.onnx\\ndims "
                         "= batch=8 | batch=16\\n' >> n.ini && $C --config n.ini plan --model "
                         "./batch.onnx"),
                   0);
  has("two-1.proj");
  has("two-2.proj");
  has("2 items");
  assert_int_equal(sh(1, "$C --config n.ini plan --model batch.onnx --dims batch=16"), 0);
  has("two-2.proj");
  has("1 items");
  /* a binding the section does not have: a run of its own */
  assert_int_equal(sh(1, "$C --config n.ini plan --model batch.onnx --dims batch=3"), 0);
  has("batch.proj");
  has("1 items");
}

static void config_check_reads_every_model_as_calibrate_would(void **state) {
  (void)state;
  assert_int_equal(sh(1, "cp calhost.ini c.ini && printf '[model x]\\nfile = nothere.onnx\\n' >> "
                         "c.ini && $C --config c.ini config check"),
                   1);
  has("config check: ");
  has("c.ini:11: [model x]: ");
  has("nothere.onnx");
  assert_int_equal(sh(1, "cp calhost.ini c.ini && printf '[model x]\\nfile = text.onnx\\n' >> "
                         "c.ini && $C --config c.ini config check"),
                   1);
  has("text.onnx: not an ONNX model");
  assert_int_equal(sh(1, "cp calhost.ini c.ini && printf '[workload three.q]\\noperator = "
                         "MatMul\\nshape = 1,1,1\\n[model three]\\nfile = three.onnx\\n' >> c.ini "
                         "&& $C --config c.ini config check"),
                   1);
  has("workload three.q (node q) exists already");
  assert_int_equal(sh(1, "cp calhost.ini c.ini && printf '[model b]\\nfile = batch.onnx\\ndims = "
                         "batch=2 | batch=4\\n' >> c.ini && $C --config c.ini config check"),
                   0);
  has("ok: c.ini (1 [model NAME] section: 2 workloads)");
}

static void calibrate_names_untuned_nodes_and_fails_a_model_run_leaving_one(void **state) {
  (void)state;
  /* names that differ only outside [A-Za-z0-9_.-], an unnamed node: one
   * workload each */
  assert_int_equal(sh(1, "rm -f store.txt && $C --config calhost.ini plan --model names.onnx"), 0);
  has("6 items");
  /* a float64 node (cpu_gemm declines it) and a node left symbolic */
  assert_int_equal(sh(1, "$C --config calhost.ini calibrate --model f64.onnx"), 1);
  has("calhost: calibrate: nodes left untuned:");
  has("--model f64.onnx: node f64 (MatMul): no backend calibrated it");
  has("--model f64.onnx: node symbolic (MatMul): input A (xs): dimension 0 is symbolic 'rows' "
      "(bind it: --dims 'rows=N')");
  assert_true(strstr(output, "node f32 (MatMul)") == NULL);
  /* an identity needs no tuning (not listed); a ReduceSum that no plugin of
   * the run serves is named as such */
  assert_int_equal(sh(1, "$C --config calhost.ini calibrate --model noop.onnx --plugin cpu_gemm"),
                   1);
  has("node full (ReduceSum): no plugin of the run serves ReduceSum");
  assert_null(strstr(output, "node identity (ReduceSum):"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(model_show_lists_nodes_digest_and_skips),
      cmocka_unit_test(calibrate_model_keys_exact_by_file_digest_and_portable_per_structure),
      cmocka_unit_test(model_section_calibrates_with_its_dims_and_reports_errors_by_line),
      cmocka_unit_test(lookup_model_and_the_runtime_select_each_nodes_policy),
      cmocka_unit_test(one_model_at_two_sizes_keeps_two_sets_of_profiles),
      cmocka_unit_test(runtime_names_models_and_files_of_one_base_name_coexist),
      cmocka_unit_test(flags_messages_and_narrowing_name_the_command_and_form),
      cmocka_unit_test(config_check_reads_every_model_as_calibrate_would),
      cmocka_unit_test(calibrate_names_untuned_nodes_and_fails_a_model_run_leaving_one),
  };
  return cmocka_run_group_tests_name("model_cli", tests, setup, teardown);
}
