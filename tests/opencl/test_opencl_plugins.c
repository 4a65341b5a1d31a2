/*
 * test_opencl_plugins.c: opencl_plugins: the OpenCL backends through their
 * vtables, loaded from the build tree through the tests' one minimal host
 * (tests/common/test_host.c: dlopen, ABI 1..2 negotiation, create):
 *  - ABI 2 negotiation and the ABI 2 entries (devices, sample workloads;
 *    opencl_gemm's parameter space);
 *  - devices: at least one, identity printable, one line, with the driver
 *    version; kind, name, hardware, details;
 *  - keys: the exact key's processor is the device identity, for an ABI 1
 *    target (no device fields: device 0) and for a device target alike; a
 *    target naming a missing device or a changed identity is refused;
 *  - validators: a table of bad policies refused with their reasons;
 *  - every candidate is accepted by the validator and, for opencl_gemm, is a
 *    valid point of the space on this device; invalid assignments refused;
 *  - runs are checked against the reference (a sample workload, accumulate
 *    included); opencl_gemm reports device_seconds; a build of it with a
 *    wrong kernel fails the check;
 *  - every MatMul structure (transposes, alpha, a bias in each form with
 *    beta, batches with a shared or broadcast operand) runs on both and
 *    passes the reference check, a sample of opencl_gemm's kernels
 *    (vector widths, local-memory caching) included; each has its own key;
 *  - `calhost plugin check` passes on both.
 * Skips (exit 77 is not used by this project: each test skips itself) when
 * no OpenCL device is present.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <cmocka.h>

#include <calhost/plugin.h>

#include "harness.h"
#include "test_host.h"

static const char *build_dir(void) {
  const char *b = getenv("CALHOST_BUILD_DIR");
  return b && *b ? b : ".";
}

typedef struct plug {
  test_host_plugin host; /* the file and the instance (tests/common) */
  const calhost_plugin_vtable *vt;
  calhost_plugin_instance *inst;
  calhost_device_info dev;
  uint32_t device_count;
} plug;

/* Loads lib/calhost/<sub>/<name>.so, negotiates ABI 1..2, creates an
 * instance and describes device 0. Skips the test when there is no device. */
static void open_plugin(plug *p, const char *sub, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/lib/calhost/%s/%s.so", build_dir(), sub, name);
  if (test_host_load(path, 1, CALHOST_ABI_VERSION, &p->host) != 0)
    fail_msg("%s: %s", path, test_host_error);
  assert_int_equal(p->host.abi, 2);
  p->vt = p->host.vt;
  p->inst = p->host.inst;
  assert_non_null(p->vt->device_count);
  assert_non_null(p->vt->list_device);
  assert_non_null(p->vt->sample_workloads);
  assert_int_equal(p->vt->device_count(p->inst, &p->device_count), CALHOST_OK);
  if (p->device_count == 0) {
    test_host_unload(&p->host);
    skip();
  }
  memset(&p->dev, 0, sizeof p->dev);
  p->dev.header = (calhost_struct_header){CALHOST_STRUCT_DEVICE_INFO, 1, sizeof p->dev};
  assert_int_equal(p->vt->list_device(p->inst, 0, &p->dev), CALHOST_OK);
}

static void close_plugin(plug *p) {
  test_host_unload(&p->host);
}

static calhost_target device_target(const plug *p) {
  calhost_target t;
  memset(&t, 0, sizeof t);
  t.header = (calhost_struct_header){CALHOST_STRUCT_TARGET, 1, sizeof t};
  t.processor = p->dev.identity;
  t.thread_count = 1;
  t.features = "";
  t.device_identity = p->dev.identity;
  t.device_index = p->dev.index;
  return t;
}

static const char *const backends[] = {"opencl_gemm",
#ifdef HAVE_CLBLAST
                                       "clblast",
#endif
                                       NULL};

static int one_line(const char *s) {
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f)
      return 0;
  return 1;
}

static void devices_listed(void **state) {
  (void)state;
  for (int b = 0; backends[b]; b++) {
    plug p;
    open_plugin(&p, "plugins", backends[b]);
    for (uint32_t i = 0; i < p.device_count; i++) {
      calhost_device_info d;
      memset(&d, 0, sizeof d);
      d.header = (calhost_struct_header){CALHOST_STRUCT_DEVICE_INFO, 1, sizeof d};
      assert_int_equal(p.vt->list_device(p.inst, i, &d), CALHOST_OK);
      assert_int_equal(d.index, i);
      assert_true(d.kind <= CALHOST_DEVICE_ACCELERATOR);
      assert_non_null(d.identity);
      assert_true(strlen(d.identity) > 10 && strlen(d.identity) <= 512);
      assert_true(one_line(d.identity) && one_line(d.name) && one_line(d.hardware));
      assert_non_null(strstr(d.identity, "/driver "));
      assert_true(d.name[0] != '\0');
      assert_true(d.detail_count > 0);
      if (d.kind == CALHOST_DEVICE_CPU)
        assert_string_equal(d.hardware, "cpu");
    }
    calhost_device_info d;
    memset(&d, 0, sizeof d);
    d.header = (calhost_struct_header){CALHOST_STRUCT_DEVICE_INFO, 1, sizeof d};
    assert_int_not_equal(p.vt->list_device(p.inst, p.device_count, &d), CALHOST_OK);
    close_plugin(&p);
  }
}

static const int64_t shape64[] = {64, 64, 64};

static void keys_carry_device_identity(void **state) {
  (void)state;
  for (int b = 0; backends[b]; b++) {
    plug p;
    open_plugin(&p, "plugins", backends[b]);
    calhost_workload w = {{CALHOST_STRUCT_WORKLOAD, 1, sizeof w},
                          "w",
                          "MatMul",
                          "float32",
                          shape64,
                          3,
                          NULL,
                          0,
                          "sha256:00"};
    calhost_target t = device_target(&p);
    calhost_built_key k = {.header = {CALHOST_STRUCT_BUILT_KEY, 1, sizeof k}};
    char first[1024];
    assert_int_equal(p.vt->build_key(p.inst, &w, &t, &k), CALHOST_OK);
    assert_non_null(strstr(k.processor, p.dev.identity));
    assert_int_equal(k.thread_count, 1);
    snprintf(first, sizeof first, "%s", k.processor);
    /* an ABI 1 target: no device fields at all -> device 0, same key */
    calhost_target t1 = t;
    t1.processor = "x86_64 some cpu";
    t1.header.struct_size = (uint32_t)offsetof(calhost_target, device_identity);
    assert_int_equal(p.vt->build_key(p.inst, &w, &t1, &k), CALHOST_OK);
    assert_string_equal(k.processor, first);
    /* a changed identity or a missing device is refused */
    calhost_target t2 = t;
    t2.device_identity = "opencl:some other device/driver 0";
    test_host_error[0] = '\0';
    assert_int_equal(p.vt->build_key(p.inst, &w, &t2, &k), CALHOST_UNSUPPORTED);
    assert_non_null(strstr(test_host_error, "hardware or driver changed"));
    t2 = t;
    t2.device_index = p.device_count;
    assert_int_equal(p.vt->build_key(p.inst, &w, &t2, &k), CALHOST_UNSUPPORTED);
    assert_non_null(strstr(test_host_error, "no OpenCL device"));
    close_plugin(&p);
  }
}

static void validators_refuse_with_reasons(void **state) {
  static const struct {
    const char *backend, *policy, *reason;
  } bad[] = {
      {"opencl_gemm", "", "empty policy"},
      {"opencl_gemm", "database", "expected mwg="},
      {"opencl_gemm", "mwg=64,nwg=64,kwg=16,mdimc=8,ndimc=8,vw=3,sa=1,sb=1,ku=4", "vw: '3'"},
      {"opencl_gemm", "mwg=16,nwg=16,kwg=16,mdimc=4,ndimc=4,vw=8,sa=1,sb=1,ku=4",
       "ndimc*vw=32 exceeds nwg=16"},
      {"clblast", "", "empty policy"},
      {"clblast", "databasex", "expected 'database' or 'xgemm:"},
      {"clblast",
       "xgemm:GEMMK=1,KREG=1,KWG=32,KWI=2,MDIMA=16,MDIMC=16,MWG=64,NDIMB=16,NDIMC=16,NWG=64,SA=1,"
       "SB=1,STRM=0,STRN=0,VWM=2,VWN=2",
       "GEMMK=1 is not an allowed value"},
      {"clblast",
       "xgemm:GEMMK=0,KREG=1,KWG=32,KWI=2,MDIMA=16,MDIMC=16,MWG=16,NDIMB=16,NDIMC=16,NWG=64,SA=1,"
       "SB=1,STRM=0,STRN=0,VWM=2,VWN=2",
       "MWG=16 is not a multiple of MDIMC*VWM=32"},
      {"clblast",
       "xgemm:GEMMK=0,KREG=1,KWG=8,KWI=2,MDIMA=8,MDIMC=16,MWG=64,NDIMB=16,NDIMC=16,NWG=64,SA=1,"
       "SB=1,STRM=0,STRN=0,VWM=2,VWN=2",
       "KWG=8 is not a multiple of MDIMC*NDIMC/MDIMA"},
      {"clblast",
       "xgemm:GEMMK=0,KREG=1,KWG=32,KWI=2,MDIMA=16,MDIMC=16,MWG=64,NDIMB=16,NDIMC=16,NWG=64,SA=1,"
       "SB=1,STRM=0,STRN=0,VWM=2,VWN=02",
       "VWN: not a decimal number"},
  };
  (void)state;
  for (int b = 0; backends[b]; b++) {
    plug p;
    open_plugin(&p, "plugins", backends[b]);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
      char err[256] = "";
      if (strcmp(bad[i].backend, backends[b]))
        continue;
      calhost_status st =
          p.vt->validate_policy(p.inst, bad[i].policy, strlen(bad[i].policy), err, sizeof err);
      if (st != CALHOST_INVALID_ARGUMENT || !strstr(err, bad[i].reason))
        fail_msg("%s: policy '%s': %s '%s', expected '%s'", backends[b], bad[i].policy,
                 calhost_status_name(st), err, bad[i].reason);
    }
    close_plugin(&p);
  }
}

static calhost_session *open_sample(plug *p, size_t sample) {
  calhost_session *s = NULL;
  calhost_target t = device_target(p);
  const calhost_workload *w = p->vt->sample_workloads[sample];
  assert_non_null(w);
  if (p->vt->open_session(p->inst, w, &t, &s) != CALHOST_OK)
    fail_msg("open_session: %s", test_host_error);
  return s;
}

static void candidates_valid_for_device(void **state) {
  (void)state;
  for (int b = 0; backends[b]; b++) {
    plug p;
    open_plugin(&p, "plugins", backends[b]);
    calhost_session *s = open_sample(&p, 0);
    uint32_t n = 0;
    char pol[512], err[256];
    size_t len;
    assert_int_equal(p.vt->candidate_count(s, &n), CALHOST_OK);
    assert_true(n >= 12);
    calhost_parameter_space sp = {.header = {CALHOST_STRUCT_PARAMETER_SPACE, 1, sizeof sp}};
    int has_space = p.vt->describe_space && p.vt->describe_space(s, &sp) == CALHOST_OK;
    if (!strcmp(backends[b], "opencl_gemm"))
      assert_true(has_space);
    for (uint32_t i = 0; i < n; i++) {
      assert_int_equal(p.vt->serialize_candidate(s, i, pol, sizeof pol, &len), CALHOST_OK);
      if (p.vt->validate_policy(p.inst, pol, len, err, sizeof err) != CALHOST_OK)
        fail_msg("%s candidate %u '%s' refused: %s", backends[b], i, pol, err);
      if (has_space) {
        uint32_t a[64];
        char back[512];
        size_t blen;
        assert_int_equal(p.vt->policy_assignment(s, pol, len, a, sp.parameter_count), CALHOST_OK);
        if (p.vt->assignment_valid(s, a, sp.parameter_count, err, sizeof err) != CALHOST_OK)
          fail_msg("candidate %u '%s' invalid on the device: %s", i, pol, err);
        assert_int_equal(
            p.vt->serialize_assignment(s, a, sp.parameter_count, back, sizeof back, &blen),
            CALHOST_OK);
        assert_string_equal(back, pol);
      }
    }
    if (has_space) {
      uint32_t a[64];
      assert_int_equal(sp.parameter_count, 9);
      assert_non_null(sp.default_assignment);
      memcpy(a, sp.default_assignment, sp.parameter_count * sizeof a[0]);
      assert_int_equal(p.vt->assignment_valid(s, a, sp.parameter_count, err, sizeof err),
                       CALHOST_OK);
      a[0] = sp.parameters[0].value_count; /* out of range: refused, no crash */
      assert_int_equal(p.vt->assignment_valid(s, a, sp.parameter_count, err, sizeof err),
                       CALHOST_INVALID_ARGUMENT);
      assert_non_null(strstr(err, "out of range"));
      for (uint32_t k = 0; k < sp.parameter_count; k++) /* the largest of everything */
        a[k] = sp.parameters[k].value_count - 1;
      assert_int_equal(p.vt->assignment_valid(s, a, sp.parameter_count, err, sizeof err),
                       CALHOST_INVALID_ARGUMENT);
      assert_int_equal(p.vt->assignment_valid(s, a, 3, err, sizeof err), CALHOST_INVALID_ARGUMENT);
    }
    p.vt->close_session(s);
    close_plugin(&p);
  }
}

/* prepare + run(iterations) + check of one policy on sample workload ws. */
static calhost_status run_checked(plug *p, calhost_session *s, const char *pol, uint32_t iterations,
                                  double *device_seconds, char *err, size_t cap) {
  calhost_run_result rr = {{CALHOST_STRUCT_RUN_RESULT, 1, sizeof rr}, -1};
  if (p->vt->prepare(s, pol, strlen(pol)) != CALHOST_OK)
    fail_msg("prepare '%s': %s", pol, test_host_error);
  if (p->vt->run(s, iterations, &rr) != CALHOST_OK)
    fail_msg("run '%s': %s", pol, test_host_error);
  *device_seconds = rr.device_seconds;
  return p->vt->check(s, err, cap);
}

static void runs_checked_and_device_timed(void **state) {
  (void)state;
  for (int b = 0; backends[b]; b++) {
    plug p;
    char pol[512], err[256];
    size_t len;
    double dev;
    open_plugin(&p, "plugins", backends[b]);
    for (size_t w = 0; p.vt->sample_workloads[w]; w++) {
      calhost_session *s = open_sample(&p, w);
      /* the default and the first candidate; opencl_gemm also the last */
      uint32_t n = 0;
      assert_int_equal(p.vt->candidate_count(s, &n), CALHOST_OK);
      for (int k = 0; k < 3; k++) {
        if (k == 0)
          assert_int_equal(p.vt->default_policy(s, pol, sizeof pol, &len), CALHOST_OK);
        else if (k == 2 && strcmp(backends[b], "opencl_gemm"))
          break;
        else
          assert_int_equal(
              p.vt->serialize_candidate(s, k == 1 ? (n > 1 ? 1 : 0) : n - 1, pol, sizeof pol, &len),
              CALHOST_OK);
        calhost_status st = run_checked(&p, s, pol, 3, &dev, err, sizeof err);
        if (st != CALHOST_OK)
          fail_msg("%s %s '%s': %s", backends[b], p.vt->sample_workloads[w]->name, pol, err);
        if (!strcmp(backends[b], "opencl_gemm"))
          assert_true(dev > 0); /* profiling events */
      }
      p.vt->close_session(s);
    }
    close_plugin(&p);
  }
}

/* What exporters write (plugin-sdk/README.md "MatMul structure"). */
static const struct {
  const char *label;
  calhost_property props[4];
  size_t count;
} structures[] = {
    {"trans_a", {{"trans_a", "1"}}, 1},
    {"linear", {{"bias", "n"}, {"trans_b", "1"}}, 2},
    {"trans_ab_alpha", {{"alpha", "0.5"}, {"trans_a", "1"}, {"trans_b", "1"}}, 3},
    {"bias_scalar_beta", {{"beta", "2"}, {"bias", "scalar"}}, 2},
    {"bias_m_alpha", {{"alpha", "-1.5"}, {"bias", "m"}}, 2},
    {"bias_mn_acc", {{"accumulate", "1"}, {"beta", "0.25"}, {"bias", "mn"}}, 3},
    {"batch", {{"batch", "3"}}, 1},
    {"batch_shared_a", {{"batch", "6"}, {"batch_a", "1"}}, 2},
    {"batch_broadcast", {{"batch", "6"}, {"batch_a", "2"}, {"batch_b", "3"}}, 3},
    {"batch_shared_b_trans_acc",
     {{"accumulate", "1"}, {"batch", "4"}, {"batch_b", "1"}, {"trans_b", "1"}},
     4},
};
#define STRUCTURE_COUNT (sizeof structures / sizeof structures[0])

/* Each structure on two odd shapes, on both backends: the default and a
 * sample of the candidates on the first shape (opencl_gemm: three of
 * different vector widths and caching; clblast: one Xgemm set) run 2
 * iterations and pass the reference check; the structures' keys all
 * differ. */
static void structures_run_and_check(void **state) {
  static const int64_t shapes[][3] = {{17, 31, 13}, {33, 9, 70}};
  (void)state;
  for (int b = 0; backends[b]; b++) {
    plug p;
    char keys[STRUCTURE_COUNT][512];
    open_plugin(&p, "plugins", backends[b]);
    calhost_target t = device_target(&p);
    for (size_t c = 0; c < STRUCTURE_COUNT; c++)
      for (size_t sh = 0; sh < 2; sh++) {
        calhost_workload w = {{CALHOST_STRUCT_WORKLOAD, 1, sizeof w},
                              structures[c].label,
                              "MatMul",
                              "float32",
                              shapes[sh],
                              3,
                              structures[c].props,
                              structures[c].count,
                              NULL};
        calhost_built_key k;
        calhost_session *s = NULL;
        uint32_t n = 0;
        char pol[512], err[256];
        size_t len;
        double dev;
        if (p.vt->build_key(p.inst, &w, &t, &k) != CALHOST_OK)
          fail_msg("%s declined %s: %s", backends[b], structures[c].label, test_host_error);
        if (sh == 0) {
          keys[c][0] = '\0';
          for (size_t i = 0; i < k.structure_count; i++)
            snprintf(keys[c] + strlen(keys[c]), sizeof keys[c] - strlen(keys[c]), "|%s=%s",
                     k.structure[i].name, k.structure[i].value);
          for (size_t d = 0; d < c; d++)
            assert_string_not_equal(keys[c], keys[d]);
        }
        if (p.vt->open_session(p.inst, &w, &t, &s) != CALHOST_OK)
          fail_msg("%s %s: open_session: %s", backends[b], structures[c].label, test_host_error);
        assert_int_equal(p.vt->candidate_count(s, &n), CALHOST_OK);
        int opencl_gemm = !strcmp(backends[b], "opencl_gemm");
        /* the default; on the first shape also a sample of the candidates:
         * opencl_gemm's curated 1 (vw=8, B gathered into registers), 19
         * (vw=2, into local memory) and 22 (vw=4, A in local memory, B
         * not), so each lane count of a transposed B's gather runs;
         * clblast's 1 (an Xgemm set; 0 is its database) */
        static const uint32_t picks[] = {UINT32_MAX, 1, 19, 22};
        for (size_t q = 0; q < (sh == 0 ? (opencl_gemm ? 4u : 2u) : 1u); q++) {
          uint32_t i = picks[q];
          if (i == UINT32_MAX)
            assert_int_equal(p.vt->default_policy(s, pol, sizeof pol, &len), CALHOST_OK);
          else if (i < n)
            assert_int_equal(p.vt->serialize_candidate(s, i, pol, sizeof pol, &len), CALHOST_OK);
          else
            continue; /* a device that fits fewer configurations */
          if (run_checked(&p, s, pol, 2, &dev, err, sizeof err) != CALHOST_OK)
            fail_msg("%s %s %lldx%lldx%lld '%s': %s", backends[b], structures[c].label,
                     (long long)shapes[sh][0], (long long)shapes[sh][1], (long long)shapes[sh][2],
                     pol, err);
        }
        p.vt->close_session(s);
      }
    close_plugin(&p);
  }
}

static void wrong_kernel_fails_check(void **state) {
  plug p;
  char pol[512], err[256] = "";
  size_t len;
  double dev;
  (void)state;
  open_plugin(&p, "test-plugins/opencl", "test_opencl_gemm_wrong");
  calhost_session *s = open_sample(&p, 0);
  assert_int_equal(p.vt->serialize_candidate(s, 0, pol, sizeof pol, &len), CALHOST_OK);
  assert_int_equal(run_checked(&p, s, pol, 1, &dev, err, sizeof err), CALHOST_CHECK_FAILED);
  assert_non_null(strstr(err, "reference"));
  p.vt->close_session(s);
  close_plugin(&p);
}

static void plugin_check_passes(void **state) {
  (void)state;
  plug p;
  open_plugin(&p, "plugins", "opencl_gemm"); /* skips without a device */
  close_plugin(&p);
  for (int b = 0; backends[b]; b++) {
    char plugin[4096], out[16384];
    snprintf(plugin, sizeof plugin, "%s/lib/calhost/plugins/%s.so", build_dir(), backends[b]);
    harness_opts o = {.merge_output = 1, .timeout_s = 900, .keep_log_level = 1};
    harness_result r = {0};
    int code = harness_run(&o, &r, "plugin", "check", plugin, "--timeout", "600", NULL);
    snprintf(out, sizeof out, "%s", r.out);
    harness_result_free(&r);
    if (code != 0)
      fail_msg("calhost plugin check %s --timeout 600: exit %d:\n%s", plugin, code, out);
    assert_non_null(strstr(out, " checks passed")); /* "N of N", every check */
    assert_null(strstr(out, "FAIL "));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(devices_listed),
      cmocka_unit_test(keys_carry_device_identity),
      cmocka_unit_test(validators_refuse_with_reasons),
      cmocka_unit_test(candidates_valid_for_device),
      cmocka_unit_test(runs_checked_and_device_timed),
      cmocka_unit_test(structures_run_and_check),
      cmocka_unit_test(wrong_kernel_fails_check),
      cmocka_unit_test(plugin_check_passes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
