/*
 * test_opencl_curated.c: opencl_curated: every curated candidate of the
 * OpenCL backends that a session keeps for a named reference device
 * round-trips through the plugin's own validator (issue 39: the check
 * `plugin check` and calibrate make, run here for devices this machine
 * does not have). The reference devices are OpenCL limits as test data
 * (an NVIDIA A100 and H100: 1024 work-items, 48 KiB of local memory; an
 * AMD MI250: 256 and 64 KiB; an Intel Arc: 512 and 64 KiB) and the real
 * OpenCL devices of this machine (PoCL's CPU device in CI). opencl_gemm:
 * xgemm.c linked; clblast: its plugin.c compiled in (the curated sets,
 * the session's filter rules and the validator are static there).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>

#include <cmocka.h>

#include "../../plugins/clblast/plugin.c"
#include "xgemm.h"

typedef struct reference_device {
  const char *name;
  size_t max_wg, max_item[3];
  uint64_t local_mem;
} reference_device;

static const reference_device g_refs[] = {
    {"NVIDIA A100-SXM4-80GB", 1024, {1024, 1024, 64}, 49152},
    {"NVIDIA H100 80GB HBM3", 1024, {1024, 1024, 64}, 49152},
    {"AMD Instinct MI250X", 256, {1024, 1024, 1024}, 65536},
    {"Intel Arc A770", 512, {512, 512, 512}, 65536},
};

/* The devices: the reference ones, then this machine's. */
static size_t devices(ocl_devices *real, ocl_device *out, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < sizeof g_refs / sizeof g_refs[0] && n < cap; i++, n++) {
    memset(&out[n], 0, sizeof out[n]);
    snprintf(out[n].name, sizeof out[n].name, "%s", g_refs[i].name);
    out[n].max_work_group = g_refs[i].max_wg;
    memcpy(out[n].max_item, g_refs[i].max_item, sizeof out[n].max_item);
    out[n].local_mem = g_refs[i].local_mem;
  }
  memset(real, 0, sizeof *real);
  assert_int_equal(ocl_devices_init(real), CALHOST_OK);
  for (uint32_t i = 0; i < real->count && n < cap; i++)
    out[n++] = real->items[i];
  return n;
}

static void opencl_gemm_curated_round_trips(void **state) {
  (void)state;
  ocl_devices real;
  ocl_device devs[16];
  size_t n = devices(&real, devs, 16);
  for (size_t d = 0; d < n; d++) {
    unsigned kept = 0;
    for (uint32_t i = 0; i < xgemm_curated_count; i++) {
      char text[256], err[256] = "";
      xgemm_config back;
      /* the session's filter (plugins/opencl_gemm/plugin.c) */
      if (xgemm_fits(&xgemm_curated[i], devs[d].max_work_group, devs[d].max_item, devs[d].local_mem,
                     NULL, 0) != 0)
        continue;
      kept++;
      xgemm_format(&xgemm_curated[i], text, sizeof text);
      if (xgemm_parse(text, strlen(text), &back, err, sizeof err) != 0)
        fail_msg("opencl_gemm on %s: curated %u (%s) refused: %s", devs[d].name, i, text, err);
      assert_memory_equal(&back, &xgemm_curated[i], sizeof back);
    }
    if (kept < 4)
      fail_msg("opencl_gemm on %s: only %u curated candidates kept", devs[d].name, kept);
  }
  ocl_devices_free(&real);
}

static void clblast_curated_round_trips(void **state) {
  (void)state;
  ocl_devices real;
  ocl_device devs[16];
  size_t n = devices(&real, devs, 16);
  for (size_t d = 0; d < n; d++) {
    unsigned kept = 0;
    for (size_t i = 0; i < CURATED_COUNT; i++) {
      char text[256], err[256] = "";
      size_t len;
      xset back;
      int db = 1;
      /* the session's filter (cb_open_session) */
      if (xset_valid(&curated[i], NULL, 0) != 0 || xset_fits(&curated[i], &devs[d], NULL, 0) != 0)
        continue;
      kept++;
      assert_int_equal(policy_out(&curated[i], text, sizeof text, &len), CALHOST_OK);
      if (cb_validate_policy(NULL, text, len, err, sizeof err) != CALHOST_OK)
        fail_msg("clblast on %s: curated %zu (%s) refused: %s", devs[d].name, i, text, err);
      assert_int_equal(parse_policy(text, len, &db, &back, NULL, 0), 0);
      assert_int_equal(db, 0);
      assert_memory_equal(&back, &curated[i], sizeof back);
    }
    if (kept < 4)
      fail_msg("clblast on %s: only %u curated candidates kept", devs[d].name, kept);
    /* the database candidate too */
    assert_int_equal(cb_validate_policy(NULL, "database", 8, NULL, 0), CALHOST_OK);
  }
  ocl_devices_free(&real);
}

/* clblast writes its parameters separated by ';' (issue 42) and still
 * reads the ',' form stored before, to the same set; one separator
 * throughout. */
static void clblast_policy_reads_the_old_and_new_separators(void **state) {
  char text[256], old[256], err[256] = "";
  size_t len;
  xset back;
  int db = 1;
  (void)state;
  assert_int_equal(policy_out(&curated[0], text, sizeof text, &len), CALHOST_OK);
  assert_non_null(strchr(text, ';'));
  assert_null(strchr(text, ','));
  snprintf(old, sizeof old, "%s", text);
  for (char *p = old; *p; p++)
    if (*p == ';')
      *p = ',';
  if (parse_policy(old, len, &db, &back, err, sizeof err) != 0)
    fail_msg("stored form '%s' refused: %s", old, err);
  assert_int_equal(db, 0);
  assert_memory_equal(&back, &curated[0], sizeof back);
  *strchr(old, ',') = ';'; /* mixed */
  assert_int_equal(parse_policy(old, len, &db, &back, err, sizeof err), -1);
  assert_non_null(strstr(err, "expected ';' before"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(clblast_policy_reads_the_old_and_new_separators),
      cmocka_unit_test(opencl_gemm_curated_round_trips),
      cmocka_unit_test(clblast_curated_round_trips),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
