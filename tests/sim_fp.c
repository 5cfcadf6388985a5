/* tests/sim_fp.c — ncclsim's cuda_fp16.h, cuda_bf16.h and cuda_fp8.h on
 * the host: what C sees (storage types, the __nv_cvt_* conversions) and,
 * built again as C++ (tests/sim_fp_cxx.cc), the __half, __nv_bfloat16 and
 * __nv_fp8_* classes. Expected values are CUDA 13's (tests/fp-vs-cuda.sh
 * compares the shared implementation with CUDA's own host code where CUDA
 * is installed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#ifdef __cplusplus
extern "C" { /* this cmocka.h does not say so itself */
#endif
#include <cmocka.h>
#ifdef __cplusplus
}
#endif

#include <cuda_fp8.h> /* includes cuda_fp16.h and cuda_bf16.h, as CUDA's */

static uint32_t fbits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* Every float16 and bfloat16 encoding but NaN survives decoding and
 * encoding again; NaNs come back as CUDA's canonical 0x7fff. */
static void test_16bit_round_trips(void **state) {
  (void)state;
  for (uint32_t h = 0; h < 65536; h++) {
    int f16_nan = (h & 0x7fff) > 0x7c00, bf16_nan = (h & 0x7fff) > 0x7f80;
    assert_int_equal(ncclsim_fp_to_f16(ncclsim_fp_f16_to_float((uint16_t)h), NCCLSIM_FP_RN), f16_nan ? 0x7fff : h);
    assert_int_equal(ncclsim_fp_to_bf16(ncclsim_fp_bf16_to_float((uint16_t)h), NCCLSIM_FP_RN), bf16_nan ? 0x7fff : h);
    if (f16_nan) assert_int_equal(fbits(ncclsim_fp_f16_to_float((uint16_t)h)), 0x7fffffffu);
  }
}

/* Ties go to the even neighbour in every format; the directed modes of
 * float16 and bfloat16 go where they say. */
static void test_rounding(void **state) {
  (void)state;
  float tie = 1 + ldexpf(1, -11); /* halfway between float16 1 and 1+2^-10 */
  assert_int_equal(ncclsim_fp_to_f16(tie, NCCLSIM_FP_RN), 0x3c00);
  assert_int_equal(ncclsim_fp_to_f16(1 + 3 * ldexpf(1, -11), NCCLSIM_FP_RN), 0x3c02);
  assert_int_equal(ncclsim_fp_to_f16(tie, NCCLSIM_FP_RU), 0x3c01);
  assert_int_equal(ncclsim_fp_to_f16(tie, NCCLSIM_FP_RZ), 0x3c00);
  assert_int_equal(ncclsim_fp_to_f16(-tie, NCCLSIM_FP_RD), 0xbc01);
  assert_int_equal(ncclsim_fp_to_f16(-tie, NCCLSIM_FP_RU), 0xbc00);
  assert_int_equal(ncclsim_fp_to_f16(ldexpf(1, -25), NCCLSIM_FP_RN), 0x0000); /* subnormal tie, to even 0 */
  assert_int_equal(ncclsim_fp_to_f16(ldexpf(3, -25), NCCLSIM_FP_RN), 0x0002);
  assert_int_equal(ncclsim_fp_to_f16(ldexpf(1, -40), NCCLSIM_FP_RU), 0x0001);
  /* double rounds once: just above a float16 tie, below float's precision */
  assert_int_equal(ncclsim_fp_to_f16(1.0 + ldexp(1, -11) + ldexp(1, -40), NCCLSIM_FP_RN), 0x3c01);
  assert_int_equal(ncclsim_fp_to_bf16(1 + ldexpf(1, -8), NCCLSIM_FP_RN), 0x3f80);
  assert_int_equal(ncclsim_fp_to_bf16(1 + 3 * ldexpf(1, -8), NCCLSIM_FP_RN), 0x3f82);
  assert_int_equal(ncclsim_fp_to_bf16(1 + ldexpf(1, -8), NCCLSIM_FP_RU), 0x3f81);
  assert_int_equal(__nv_cvt_float_to_fp8(1 + ldexpf(1, -4), __NV_SATFINITE, __NV_E4M3), 0x38);
  assert_int_equal(__nv_cvt_float_to_fp8(1 + 3 * ldexpf(1, -4), __NV_SATFINITE, __NV_E4M3), 0x3a);
  assert_int_equal(__nv_cvt_float_to_fp8(1 + ldexpf(1, -3), __NV_SATFINITE, __NV_E5M2), 0x3c);
  assert_int_equal(__nv_cvt_float_to_fp8(1 + 3 * ldexpf(1, -3), __NV_SATFINITE, __NV_E5M2), 0x3e);
}

/* Overflow: float16 and bfloat16 to infinity when rounding to nearest or
 * away, to the largest finite value toward zero; float8 saturates with
 * __NV_SATFINITE, else e4m3 gives NaN and e5m2 infinity. NaN is unsigned. */
static void test_overflow_and_nan(void **state) {
  (void)state;
  assert_int_equal(ncclsim_fp_to_f16(65519.f, NCCLSIM_FP_RN), 0x7bff);
  assert_int_equal(ncclsim_fp_to_f16(65520.f, NCCLSIM_FP_RN), 0x7c00);
  assert_int_equal(ncclsim_fp_to_f16(1e9f, NCCLSIM_FP_RZ), 0x7bff);
  assert_int_equal(ncclsim_fp_to_f16(-1e9f, NCCLSIM_FP_RU), 0xfbff);
  assert_int_equal(ncclsim_fp_to_f16(-1e9f, NCCLSIM_FP_RD), 0xfc00);
  assert_int_equal(ncclsim_fp_to_f16(INFINITY, NCCLSIM_FP_RZ), 0x7c00); /* infinity stays */
  assert_int_equal(ncclsim_fp_to_f16(-NAN, NCCLSIM_FP_RN), 0x7fff);
  assert_int_equal(ncclsim_fp_to_bf16(3.4e38f, NCCLSIM_FP_RN), 0x7f80);
  assert_int_equal(ncclsim_fp_to_bf16(NAN, NCCLSIM_FP_RN), 0x7fff);
  assert_int_equal(__nv_cvt_float_to_fp8(464.f, __NV_NOSAT, __NV_E4M3), 0x7e); /* tie to even 448 */
  assert_int_equal(__nv_cvt_float_to_fp8(1000.f, __NV_NOSAT, __NV_E4M3), 0x7f);
  assert_int_equal(__nv_cvt_float_to_fp8(1000.f, __NV_SATFINITE, __NV_E4M3), 0x7e);
  assert_int_equal(__nv_cvt_float_to_fp8(-INFINITY, __NV_SATFINITE, __NV_E4M3), 0xfe);
  assert_int_equal(__nv_cvt_float_to_fp8(-INFINITY, __NV_NOSAT, __NV_E4M3), 0xff);
  assert_int_equal(__nv_cvt_float_to_fp8(61440.f, __NV_NOSAT, __NV_E5M2), 0x7c);
  assert_int_equal(__nv_cvt_float_to_fp8(1e6f, __NV_SATFINITE, __NV_E5M2), 0x7b);
  assert_int_equal(__nv_cvt_double_to_fp8(-NAN, __NV_SATFINITE, __NV_E5M2), 0x7f);
}

/* Every float8 byte widens exactly to float16 and narrows back to itself
 * (e5m2's infinities included, with __NV_NOSAT); NaN becomes 0x7fff. */
static void test_fp8_all(void **state) {
  (void)state;
  for (uint32_t b = 0; b < 256; b++) {
    for (int e5 = 0; e5 < 2; e5++) {
      __nv_fp8_interpretation_t k = e5 ? __NV_E5M2 : __NV_E4M3;
      int nan = e5 ? (b & 0x7f) > 0x7c : (b & 0x7f) == 0x7f;
      __half_raw h = __nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)b, k);
      if (nan) {
        assert_int_equal(h.x, 0x7fff);
        continue;
      }
      assert_int_equal(__nv_cvt_halfraw_to_fp8(h, __NV_NOSAT, k), b);
      assert_int_equal(__nv_cvt_float_to_fp8(ncclsim_fp_f16_to_float(h.x), __NV_NOSAT, k), b);
      __nv_bfloat16_raw r;
      r.x = ncclsim_fp_to_bf16(ncclsim_fp_f16_to_float(h.x), NCCLSIM_FP_RN);
      assert_int_equal(__nv_cvt_bfloat16raw_to_fp8(r, __NV_NOSAT, k), b);
    }
  }
  assert_true(ncclsim_fp_fp8_to_float(0x7e, 0) == 448.0f && ncclsim_fp_fp8_to_float(0x01, 0) == ldexpf(1, -9));
  assert_true(ncclsim_fp_fp8_to_float(0x7b, 1) == 57344.0f && isinf(ncclsim_fp_fp8_to_float(0xfc, 1)));
  /* pairs: x in the low byte */
  float2 v = make_float2(1.0f, -2.0f);
  assert_int_equal(__nv_cvt_float2_to_fp8x2(v, __NV_SATFINITE, __NV_E4M3), 0xc038);
  __half2_raw h2 = __nv_cvt_fp8x2_to_halfraw2(0xc038, __NV_E4M3);
  assert_int_equal(h2.x, 0x3c00);
  assert_int_equal(h2.y, 0xc000);
}

/* The layouts CUDA gives the storage types and a few vector types. */
static void test_layouts(void **state) {
  (void)state;
  assert_int_equal(sizeof(__half_raw), 2);
  assert_int_equal(sizeof(__half2_raw), 4);
  assert_int_equal(__alignof__(__half2_raw), 4);
  assert_int_equal(sizeof(__nv_bfloat162_raw), 4);
  assert_int_equal(sizeof(__nv_fp8x4_storage_t), 4);
  assert_int_equal(__alignof__(float2), 8);
  assert_int_equal(__alignof__(float4), 16);
  assert_int_equal(sizeof(float3), 12);
  assert_int_equal(__alignof__(double4_32a), 32);
  assert_int_equal(sizeof(dim3), 12);
  int4 i4 = make_int4(1, 2, 3, 4);
  assert_int_equal(i4.w, 4);
}

#ifdef __cplusplus
#include "sim_fp_cxx.h"
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_16bit_round_trips), cmocka_unit_test(test_rounding),
      cmocka_unit_test(test_overflow_and_nan),  cmocka_unit_test(test_fp8_all),
      cmocka_unit_test(test_layouts),
#ifdef __cplusplus
      SIM_FP_CXX_TESTS
#endif
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
