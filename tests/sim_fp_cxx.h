/* tests/sim_fp_cxx.h — the C++ half of tests/sim_fp.c: the classes of
 * cuda_fp16.h, cuda_bf16.h and cuda_fp8.h, as host code uses them. */
#include <cstring>
#include <type_traits>

/* Constructors and conversions round as the functions do. */
static void test_cxx_conversions(void **state) {
  (void)state;
  for (uint32_t h = 0; h < 65536; h++) {
    __half x = __ushort_as_half((unsigned short)h);
    float f = x;
    if ((h & 0x7fff) <= 0x7c00) assert_int_equal(__half_as_ushort(__half(f)), h);
    __nv_bfloat16 b = __ushort_as_bfloat16((unsigned short)h);
    if ((h & 0x7fff) <= 0x7f80) assert_int_equal(__bfloat16_as_ushort(__float2bfloat16(float(b))), h);
  }
  __half a = 2.5f;
  assert_int_equal(__half_as_ushort(a), 0x4100);
  assert_int_equal(int(a), 2);                  /* toward zero */
  assert_int_equal(int(__half(-2.5f)), -2);
  assert_int_equal(__half_as_ushort(__half(70000)), 0x7c00);
  assert_true(__half2ll_rz(__ushort_as_half(0x7e00)) == INT64_MIN); /* NaN, as CUDA */
  assert_int_equal(__half2int_rz(__ushort_as_half(0x7e00)), 0);
  assert_int_equal(__half2uint_rz(__half(-3.0f)), 0);
  assert_int_equal(__bfloat16_as_ushort(__nv_bfloat16(__half(1.5f))), 0x3fc0);
  assert_int_equal(__half_as_ushort(__half(__nv_bfloat16(1.5f))), 0x3e00);
  __nv_fp8_e4m3 q(1000.0f); /* constructors saturate */
  assert_int_equal(q.__x, 0x7e);
  assert_true(float(q) == 448.0f);
  __nv_fp8_e5m2 r(__half(-1.0f));
  assert_int_equal(r.__x, 0xbc);
  assert_int_equal(int(r), -1);
  assert_int_equal(__half_as_ushort(__half(__nv_fp8_e5m2(__half(0.25f)))), 0x3400);
  __nv_fp8x2_e4m3 p(make_float2(0.5f, 3.0f));
  assert_int_equal(p.__x, 0x4430);
  float2 back = float2(p);
  assert_true(back.x == 0.5f && back.y == 3.0f);
  __half2 h2 = __floats2half2_rn(1.0f, 65536.0f);
  assert_true(__low2float(h2) == 1.0f && isinf(__high2float(h2)));
}

/* Operators compute in float and round once, so they are exact where the
 * result is representable, and round to nearest even otherwise. */
static void test_cxx_operators(void **state) {
  (void)state;
  __half one = 1.0f, ulp = __ushort_as_half(0x1400); /* 2^-10 */
  assert_int_equal(__half_as_ushort(one + ulp), 0x3c01);
  __half half_ulp = __ushort_as_half(0x1000); /* 2^-11: a tie, to even */
  assert_int_equal(__half_as_ushort(one + half_ulp), 0x3c00);
  __half x = 3.0f;
  x *= __half(0.5f);
  assert_true(float(x) == 1.5f);
  x -= one;
  x /= __half(0.25f);
  assert_true(float(x) == 2.0f && float(-x) == -2.0f);
  x++;
  ++x;
  assert_true(float(x) == 4.0f);
  __half nan = __ushort_as_half(0x7e00);
  assert_false(nan == nan);
  assert_true(nan != nan); /* != is unordered, as for float (CUDA's __hneu) */
  assert_false(__hne(nan, nan)); /* __hne is ordered */
  assert_true(one < x && x >= one && !(x < one));
  assert_true(__hisnan(nan) && __hisinf(__half(-1e6f)) == -1);
  assert_int_equal(__half_as_ushort(__hmax(nan, one)), 0x3c00);
  assert_int_equal(__half_as_ushort(__hmin(nan, nan)), 0x7fff);
  __nv_bfloat16 b = 3.0f, c = b * b;
  assert_true(float(c) == 9.0f && c > b && bool(c));
  assert_false(bool(__nv_bfloat16(-0.0f)));
}

/* What C++ programs written against CUDA's headers take for granted. */
static void test_cxx_types(void **state) {
  (void)state;
  static_assert(sizeof(__half) == 2 && alignof(__half) == 2, "__half layout");
  static_assert(sizeof(__half2) == 4 && alignof(__half2) == 4, "__half2 layout");
  static_assert(sizeof(__nv_bfloat162) == 4, "__nv_bfloat162 layout");
  static_assert(sizeof(__nv_fp8_e4m3) == 1 && sizeof(__nv_fp8x2_e5m2) == 2, "float8 layouts");
  static_assert(std::is_trivially_copyable<__half>::value, "__half is copied with memcpy");
  static_assert(std::is_same<half, __half>::value && std::is_same<nv_bfloat16, __nv_bfloat16>::value, "aliases");
  __half buf[4];
  for (int i = 0; i < 4; i++) buf[i] = __float2half((float)i);
  unsigned short raw[4];
  memcpy(raw, buf, sizeof raw); /* memcpy comes with cuda_fp16.h in C++ */
  assert_int_equal(raw[3], 0x4200);
  constexpr dim3 grid(4, 2);
  static_assert(grid.z == 1, "dim3 defaults");
}

#include "sim_fp_cxx_ops.h"

#define SIM_FP_CXX_TESTS                                                                        \
  cmocka_unit_test(test_cxx_conversions), cmocka_unit_test(test_cxx_operators),                 \
      cmocka_unit_test(test_cxx_types), cmocka_unit_test(test_cxx_max_min),                     \
      cmocka_unit_test(test_cxx_nan_results), cmocka_unit_test(test_cxx_saturation),            \
      cmocka_unit_test(test_cxx_fma_rounds_once), cmocka_unit_test(test_cxx_pairs),             \
      cmocka_unit_test(test_cxx_math), cmocka_unit_test(test_cxx_directed_conversions),
