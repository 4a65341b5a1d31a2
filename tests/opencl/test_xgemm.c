/*
 * test_xgemm.c: opencl_xgemm: opencl_gemm's parameter rules without a
 * device: the strict policy parser (a table of bad policies with their
 * reasons), the device-independent rules, the device limits (work-group
 * size, item sizes, local memory) that keep a configuration from being a
 * candidate, round trips of every curated candidate and of the default.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "xgemm.h"

static void bad_policies_refused_with_reason(void **state) {
  (void)state;
  static const struct {
    const char *policy, *reason;
  } bad[] = {
      {"", "empty policy"},
      {"mwg=64", "expected ';' before nwg"},
      {"nwg=64,mwg=64,kwg=16,mdimc=8,ndimc=8,vw=4,sa=1,sb=1,ku=4", "expected mwg="},
      {"mwg=48,nwg=64,kwg=16,mdimc=8,ndimc=8,vw=4,sa=1,sb=1,ku=4", "mwg: '48' is not one"},
      {"mwg=64,nwg=64,kwg=16,mdimc=8,ndimc=8,vw=4,sa=1,sb=1,ku=4,", "trailing text"},
      {"mwg=64,nwg=64,kwg=16,mdimc=8,ndimc=8,vw=4,sa=1,sb=1,ku=4 ", "invalid byte 0x20"},
      {"mwg=64,nwg=64,kwg=16,mdimc=8,ndimc=8,vw=4,sa=2,sb=1,ku=4", "sa: '2' is not one"},
      {"mwg=064,nwg=64,kwg=16,mdimc=8,ndimc=8,vw=4,sa=1,sb=1,ku=4", "mwg: '064' is not one"},
      {"mwg=16,nwg=64,kwg=16,mdimc=16,ndimc=8,vw=4,sa=1,sb=1,ku=4", NULL}, /* valid: 1 row */
      {"mwg=16,nwg=64,kwg=16,mdimc=16,ndimc=16,vw=8,sa=1,sb=1,ku=4", "ndimc*vw=128 exceeds nwg"},
      {"mwg=32,nwg=64,kwg=8,mdimc=8,ndimc=8,vw=4,sa=1,sb=1,ku=8", NULL},
      {"mwg=32,nwg=64,kwg=8,mdimc=8,ndimc=8,vw=4,sa=1,sb=1,ku=16", "ku: '16' is not one"},
      {"mwg=16,nwg=16,kwg=8,mdimc=8,ndimc=4,vw=1,sa=1,sb=1,ku=8", NULL},
      {"mwg=16,nwg=16,kwg=16,mdimc=16,ndimc=4,vw=1,sa=1,sb=1,ku=8", NULL},
      {"mwg=64,nwg=64,kwg=16,mdimc=4,ndimc=4,vw=4,sa=1,sb=1,ku=4", "work-item tile 16x16 exceeds"},
      {"mwg=32,nwg=32,kwg=8,mdimc=8,ndimc=8,vw=1,sa=1,sb=1,ku=16", "ku: '16' is not one"},
      {"mwg=64,nwg=64,kwg=8,mdimc=8,ndimc=8,vw=4,sa=1,sb=1,ku=8\n", "invalid byte 0x0a"},
      /* ';' written since issue 42, ',' the stored form before: one of them throughout */
      {"mwg=32;nwg=64;kwg=8;mdimc=8;ndimc=8;vw=4;sa=1;sb=1;ku=8", NULL},
      {"mwg=32;nwg=64,kwg=8,mdimc=8,ndimc=8,vw=4,sa=1,sb=1,ku=8", "expected ';' before kwg"},
      {"mwg=32,nwg=64;kwg=8,mdimc=8,ndimc=8,vw=4,sa=1,sb=1,ku=8", "expected ',' before kwg"},
      {"mwg=32;nwg=64;kwg=8;mdimc=8;ndimc=8;vw=4;sa=1;sb=1;ku=8;", "trailing text"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char err[256] = "";
    xgemm_config c;
    int rc = xgemm_parse(bad[i].policy, strlen(bad[i].policy), &c, err, sizeof err);
    if (!bad[i].reason) {
      if (rc != 0)
        fail_msg("valid policy '%s' refused: %s", bad[i].policy, err);
      continue;
    }
    if (rc == 0 || !strstr(err, bad[i].reason))
      fail_msg("policy '%s': rc %d, reason '%s', expected '%s'", bad[i].policy, rc, err,
               bad[i].reason);
  }
  /* a policy whose value was cut off */
  static const char full[] = "mwg=32,nwg=32,kwg=8,mdimc=8,ndimc=8,vw=1,sa=1,sb=1,ku=8";
  char err[64];
  xgemm_config c;
  assert_int_equal(xgemm_parse(full, sizeof full - 1, &c, err, sizeof err), 0);
  assert_int_equal(xgemm_parse(full, sizeof full - 2, &c, err, sizeof err), -1);
  assert_non_null(strstr(err, "ku: '' is not one"));
}

static void device_limits(void **state) {
  static const size_t items[3] = {1024, 1024, 64}, small_items[3] = {8, 8, 1};
  char err[256];
  /* 16x16 work-group, both operands cached: 4*32*(64+64) = 16 KiB */
  xgemm_config c = {{64, 64, 32, 16, 16, 4, 1, 1, 4}};
  (void)state;
  assert_int_equal(xgemm_valid(&c, err, sizeof err), 0);
  assert_int_equal(xgemm_fits(&c, 1024, items, 65536, err, sizeof err), 0);
  assert_int_equal(xgemm_fits(&c, 128, items, 65536, err, sizeof err), -1);
  assert_non_null(strstr(err, "work-group size 256 exceeds the device's 128"));
  assert_int_equal(xgemm_fits(&c, 1024, items, 8192, err, sizeof err), -1);
  assert_non_null(strstr(err, "local memory 16384 bytes exceeds the device's 8192"));
  assert_int_equal(xgemm_fits(&c, 1024, small_items, 65536, err, sizeof err), -1);
  assert_non_null(strstr(err, "item sizes"));
  c.v[XG_SA] = c.v[XG_SB] = 0; /* no local memory at all */
  assert_int_equal(xgemm_fits(&c, 1024, items, 0, err, sizeof err), 0);
}

static void curated_and_default_round_trip(void **state) {
  char text[128], err[256];
  xgemm_config back;
  (void)state;
  assert_true(xgemm_curated_count >= 12);
  for (uint32_t i = 0; i <= xgemm_curated_count; i++) {
    const xgemm_config *c = i < xgemm_curated_count ? &xgemm_curated[i] : &xgemm_default;
    xgemm_format(c, text, sizeof text);
    if (xgemm_parse(text, strlen(text), &back, err, sizeof err) != 0)
      fail_msg("candidate %u '%s' refused: %s", i, text, err);
    assert_memory_equal(&back, c, sizeof back);
    for (uint32_t j = 0; j < i && i < xgemm_curated_count; j++)
      assert_memory_not_equal(&xgemm_curated[j], c, sizeof *c);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bad_policies_refused_with_reason),
      cmocka_unit_test(device_limits),
      cmocka_unit_test(curated_and_default_round_trip),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
