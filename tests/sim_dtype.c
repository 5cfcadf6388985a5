/* tests/sim_dtype.c — ncclsim's software float16, bfloat16 and float8:
 * exact round trips, round-to-nearest-even on ties, and overflow as the
 * GPU conversions do (float16/bfloat16 to infinity, float8 saturating). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "coll/coll_internal.h"

/* Every encoding that is not NaN decodes and encodes back to itself, but
 * e5m2's infinities, which saturate; NaN stays NaN. */
static void test_round_trips(void **state) {
  for (uint32_t h = 0; h < 65536; h++) {
    float f = sim_f16_to_f32((uint16_t)h);
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) assert_true(isnan(f) && isnan(sim_f16_to_f32(sim_f32_to_f16(f))));
    else assert_int_equal(sim_f32_to_f16(f), h);
    float g = sim_bf16_to_f32((uint16_t)h);
    if ((h & 0x7f80) == 0x7f80 && (h & 0x7f)) assert_true(isnan(g) && isnan(sim_bf16_to_f32(sim_f32_to_bf16(g))));
    else assert_int_equal(sim_f32_to_bf16(g), h);
  }
  for (uint32_t b = 0; b < 256; b++) {
    float f = sim_e4m3_to_f32((uint8_t)b);
    if ((b & 0x7f) == 0x7f) assert_true(isnan(f) && isnan(sim_e4m3_to_f32(sim_f32_to_e4m3(f))));
    else assert_int_equal(sim_f32_to_e4m3(f), b);
    float g = sim_e5m2_to_f32((uint8_t)b);
    if ((b & 0x7f) > 0x7c) assert_true(isnan(g) && isnan(sim_e5m2_to_f32(sim_f32_to_e5m2(g))));
    else if ((b & 0x7f) == 0x7c) assert_int_equal(sim_f32_to_e5m2(g), b - 1); /* inf saturates */
    else assert_int_equal(sim_f32_to_e5m2(g), b);
  }
  /* a few known values */
  assert_true(sim_f16_to_f32(0x3c00) == 1.0f && sim_f16_to_f32(0xc000) == -2.0f);
  assert_true(sim_f16_to_f32(0x0001) == ldexpf(1, -24)); /* smallest subnormal */
  assert_true(sim_bf16_to_f32(0x3f80) == 1.0f);
  assert_true(sim_e4m3_to_f32(0x38) == 1.0f && sim_e4m3_to_f32(0x7e) == 448.0f);
  assert_true(sim_e4m3_to_f32(0x01) == ldexpf(1, -9));
  assert_true(sim_e5m2_to_f32(0x3c) == 1.0f && sim_e5m2_to_f32(0x7b) == 57344.0f);
  assert_true(isinf(sim_e5m2_to_f32(0x7c)));
}

/* Halfway between two neighbours goes to the even one; just past halfway
 * goes up. */
static void test_ties_to_even(void **state) {
  /* float16: ulp(1) = 2^-10 */
  assert_int_equal(sim_f32_to_f16(1 + ldexpf(1, -11)), 0x3c00);     /* tie, down to even */
  assert_int_equal(sim_f32_to_f16(1 + 3 * ldexpf(1, -11)), 0x3c02); /* tie, up to even */
  assert_int_equal(sim_f32_to_f16(1 + ldexpf(1, -11) + ldexpf(1, -20)), 0x3c01);
  assert_int_equal(sim_f32_to_f16(-(1 + 3 * ldexpf(1, -11))), 0xbc02);
  /* float16 subnormals: quantum 2^-24 */
  assert_int_equal(sim_f32_to_f16(ldexpf(1, -25)), 0x0000);
  assert_int_equal(sim_f32_to_f16(3 * ldexpf(1, -25)), 0x0002);
  assert_int_equal(sim_f32_to_f16(ldexpf(1, -26)), 0x0000);
  /* a carry out of the mantissa bumps the exponent: 2 - 2^-11 -> 2 */
  assert_int_equal(sim_f32_to_f16(2 - ldexpf(1, -11)), 0x4000);
  /* bfloat16: ulp(1) = 2^-7 */
  assert_int_equal(sim_f32_to_bf16(1 + ldexpf(1, -8)), 0x3f80);
  assert_int_equal(sim_f32_to_bf16(1 + 3 * ldexpf(1, -8)), 0x3f82);
  assert_int_equal(sim_f32_to_bf16(1 + ldexpf(1, -8) + ldexpf(1, -20)), 0x3f81);
  /* e4m3: ulp(1) = 2^-3 */
  assert_int_equal(sim_f32_to_e4m3(1 + ldexpf(1, -4)), 0x38);
  assert_int_equal(sim_f32_to_e4m3(1 + 3 * ldexpf(1, -4)), 0x3a);
  assert_int_equal(sim_f32_to_e4m3(ldexpf(1, -10)), 0x00); /* half the smallest subnormal */
  assert_int_equal(sim_f32_to_e4m3(3 * ldexpf(1, -10)), 0x02);
  /* e5m2: ulp(1) = 2^-2 */
  assert_int_equal(sim_f32_to_e5m2(1 + ldexpf(1, -3)), 0x3c);
  assert_int_equal(sim_f32_to_e5m2(1 + 3 * ldexpf(1, -3)), 0x3e);
}

/* float16 overflows to infinity (65520, halfway to 65536, rounds up to
 * it); bfloat16 likewise; both float8 formats saturate to their largest
 * finite value, infinities included (__NV_SATFINITE). */
static void test_overflow(void **state) {
  assert_int_equal(sim_f32_to_f16(65504), 0x7bff);
  assert_int_equal(sim_f32_to_f16(65519), 0x7bff);
  assert_int_equal(sim_f32_to_f16(65520), 0x7c00);
  assert_int_equal(sim_f32_to_f16(1e6f), 0x7c00);
  assert_int_equal(sim_f32_to_f16(-1e6f), 0xfc00);
  assert_int_equal(sim_f32_to_f16(INFINITY), 0x7c00);
  assert_true(isnan(sim_f16_to_f32(sim_f32_to_f16(NAN))));
  assert_int_equal(sim_f32_to_bf16(3.4028235e38f), 0x7f80); /* FLT_MAX rounds up to inf */
  assert_int_equal(sim_f32_to_bf16(-INFINITY), 0xff80);
  assert_int_equal(sim_f32_to_e4m3(448), 0x7e);
  assert_int_equal(sim_f32_to_e4m3(464), 0x7e); /* halfway to 480, which e4m3 lacks */
  assert_int_equal(sim_f32_to_e4m3(1e6f), 0x7e);
  assert_int_equal(sim_f32_to_e4m3(INFINITY), 0x7e);
  assert_int_equal(sim_f32_to_e4m3(-INFINITY), 0xfe);
  assert_int_equal(sim_f32_to_e4m3(NAN) & 0x7f, 0x7f);
  assert_int_equal(sim_f32_to_e5m2(57344), 0x7b);
  assert_int_equal(sim_f32_to_e5m2(61440), 0x7b); /* halfway to inf: saturates */
  assert_int_equal(sim_f32_to_e5m2(1e9f), 0x7b);
  assert_int_equal(sim_f32_to_e5m2(-INFINITY), 0xfb);
  assert_true(isnan(sim_e5m2_to_f32(sim_f32_to_e5m2(NAN))));
}

/* The element accessors the reductions use agree with the scalar ones. */
static void test_narrow_access(void **state) {
  uint16_t h[3];
  uint8_t b[3];
  for (int i = 0; i < 3; i++) {
    sim_narrow_store(ncclFloat16, h, (size_t)i, 0.5f * (float)i);
    sim_narrow_store(ncclFloat8e4m3, b, (size_t)i, -1.5f * (float)i);
  }
  assert_true(sim_narrow_load(ncclFloat16, h, 2) == 1.0f);
  assert_int_equal(h[1], sim_f32_to_f16(0.5f));
  assert_true(sim_narrow_load(ncclFloat8e4m3, b, 2) == -3.0f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trips),
      cmocka_unit_test(test_ties_to_even),
      cmocka_unit_test(test_overflow),
      cmocka_unit_test(test_narrow_access),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
