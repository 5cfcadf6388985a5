// tests/sim_fp_vs_cuda.cc — ncclsim's narrow-float conversions
// (sim/include/ncclsim_fp.h) against CUDA's own host code, compared bit for
// bit. Built only against the real cuda_fp16.h, cuda_bf16.h and cuda_fp8.h
// (CUDA_CPPFLAGS); ncclsim_fp.h's names are all ncclsim_fp_*, so both fit
// in one program. Exit 0 = pass, 1 = a difference (printed).
//
// Coverage: every float16 and bfloat16 encoding decoded; every float8 byte
// both ways; and, for each narrowing, every float whose bits below the
// target's rounding point are one of the patterns that decide rounding
// (zero, one, just under/at/over half, all ones), over all high bits.
// N4C_FP_EXHAUSTIVE=1 checks all 2^32 floats instead (minutes).
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "../sim/include/ncclsim_fp.h"

static unsigned long failures;

static void fail(const char *what, uint64_t in, uint64_t want, uint64_t got) {
  if (failures++ < 20)
    std::printf("%s(0x%llx): CUDA 0x%llx, ncclsim 0x%llx\n", what, (unsigned long long)in, (unsigned long long)want,
                (unsigned long long)got);
}

static uint32_t fbits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
static float bitsf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Every narrowing of one float.
static void narrow(uint32_t u) {
  float f = bitsf(u);
  struct {
    const char *name;
    unsigned want, got;
  } c[] = {
      {"__float2half_rn", __half_as_ushort(__float2half_rn(f)), ncclsim_fp_to_f16(f, NCCLSIM_FP_RN)},
      {"__float2half_rz", __half_as_ushort(__float2half_rz(f)), ncclsim_fp_to_f16(f, NCCLSIM_FP_RZ)},
      {"__float2half_ru", __half_as_ushort(__float2half_ru(f)), ncclsim_fp_to_f16(f, NCCLSIM_FP_RU)},
      {"__float2half_rd", __half_as_ushort(__float2half_rd(f)), ncclsim_fp_to_f16(f, NCCLSIM_FP_RD)},
      {"__float2bfloat16_rn", __bfloat16_as_ushort(__float2bfloat16_rn(f)), ncclsim_fp_to_bf16(f, NCCLSIM_FP_RN)},
      {"__float2bfloat16_rz", __bfloat16_as_ushort(__float2bfloat16_rz(f)), ncclsim_fp_to_bf16(f, NCCLSIM_FP_RZ)},
      {"__float2bfloat16_ru", __bfloat16_as_ushort(__float2bfloat16_ru(f)), ncclsim_fp_to_bf16(f, NCCLSIM_FP_RU)},
      {"__float2bfloat16_rd", __bfloat16_as_ushort(__float2bfloat16_rd(f)), ncclsim_fp_to_bf16(f, NCCLSIM_FP_RD)},
      {"e4m3 satfinite", __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3), ncclsim_fp_to_fp8(f, 1, 0)},
      {"e4m3 nosat", __nv_cvt_float_to_fp8(f, __NV_NOSAT, __NV_E4M3), ncclsim_fp_to_fp8(f, 0, 0)},
      {"e5m2 satfinite", __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E5M2), ncclsim_fp_to_fp8(f, 1, 1)},
      {"e5m2 nosat", __nv_cvt_float_to_fp8(f, __NV_NOSAT, __NV_E5M2), ncclsim_fp_to_fp8(f, 0, 1)},
  };
  for (auto &x : c)
    if (x.want != x.got) fail(x.name, u, x.want, x.got);
}

// Doubles: a rounding decided past float's precision (double rounding
// through float would get these wrong).
static void narrow_double(double d) {
  uint64_t in;
  std::memcpy(&in, &d, 8);
  unsigned want = __half_as_ushort(__double2half(d)), got = ncclsim_fp_to_f16(d, NCCLSIM_FP_RN);
  if (want != got) fail("__double2half", in, want, got);
  want = __bfloat16_as_ushort(__double2bfloat16(d)), got = ncclsim_fp_to_bf16(d, NCCLSIM_FP_RN);
  if (want != got) fail("__double2bfloat16", in, want, got);
  for (int sat = 0; sat < 2; sat++)
    for (int e5 = 0; e5 < 2; e5++) {
      want = __nv_cvt_double_to_fp8(d, sat ? __NV_SATFINITE : __NV_NOSAT, e5 ? __NV_E5M2 : __NV_E4M3);
      got = ncclsim_fp_to_fp8(d, sat, e5);
      if (want != got) fail("__nv_cvt_double_to_fp8", in, want, got);
    }
}

int main() {
  // Decoding: every encoding.
  for (uint32_t h = 0; h < 65536; h++) {
    uint32_t want = fbits(__half2float(__ushort_as_half((unsigned short)h))), got = fbits(ncclsim_fp_f16_to_float((uint16_t)h));
    if (want != got) fail("__half2float", h, want, got);
    want = fbits(__bfloat162float(__ushort_as_bfloat16((unsigned short)h)));
    got = fbits(ncclsim_fp_bf16_to_float((uint16_t)h));
    if (want != got) fail("__bfloat162float", h, want, got);
    __half hh = __ushort_as_half((unsigned short)h);
    long long wl = __half2ll_rz(hh), gl = ncclsim_fp_to_int(__half2float(hh), INT64_MIN, INT64_MAX, INT64_MIN);
    if (wl != gl) fail("__half2ll_rz", h, (uint64_t)wl, (uint64_t)gl);
    int wi = __half2int_rz(hh), gi = (int)ncclsim_fp_to_int(__half2float(hh), INT32_MIN, INT32_MAX, 0);
    if (wi != gi) fail("__half2int_rz", h, (uint64_t)wi, (uint64_t)gi);
    unsigned long long wu = __half2ull_rz(hh), gu = ncclsim_fp_to_uint(__half2float(hh), UINT64_MAX, UINT64_C(1) << 63);
    if (wu != gu) fail("__half2ull_rz", h, wu, gu);
  }
  for (uint32_t b = 0; b < 256; b++)
    for (int e5 = 0; e5 < 2; e5++) {
      __nv_fp8_interpretation_t k = e5 ? __NV_E5M2 : __NV_E4M3;
      unsigned want = __nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)b, k).x, got = ncclsim_fp_fp8_to_f16((uint8_t)b, e5);
      if (want != got) fail("__nv_cvt_fp8_to_halfraw", b, want, got);
      __nv_fp8_e4m3 q4;
      __nv_fp8_e5m2 q5;
      q4.__x = q5.__x = (__nv_fp8_storage_t)b;
      uint32_t wf = fbits(e5 ? float(q5) : float(q4)), gf = fbits(ncclsim_fp_fp8_to_float((uint8_t)b, e5));
      if (wf != gf) fail("float(__nv_fp8)", b, wf, gf);
    }
  // Narrowing.
  if (std::getenv("N4C_FP_EXHAUSTIVE")) {
    for (uint64_t u = 0; u < (UINT64_C(1) << 32); u++) narrow((uint32_t)u);
  } else {
    for (unsigned s : {13u, 16u, 20u, 21u}) {  // float16, bfloat16, e4m3, e5m2 normals
      uint32_t half = 1u << (s - 1), all = (1u << s) - 1;
      const uint32_t lows[] = {0, 1, half - 1, half, half + 1, all};
      for (uint32_t hi = 0; hi < (1u << (32 - s)); hi++)
        for (uint32_t lo : lows) narrow(hi << s | lo);
    }
    // Subnormal results round at coarser points: every float of magnitude
    // below 2^-5 (float8's and float16's subnormal ranges and their
    // borders) with a sampled mantissa, and all of them near float16's.
    uint32_t x = 12345;
    for (uint32_t e = 0; e < 127 - 5; e++)
      for (int i = 0; i < 4096; i++) {
        x = x * 1664525u + 1013904223u;
        uint32_t u = e << 23 | (x >> 9);
        narrow(u);
        narrow(u | 0x80000000u);
      }
  }
  uint64_t y = 99;
  for (int i = 0; i < 2000000; i++) {
    y = y * 6364136223846793005ull + 1442695040888963407ull;
    double d;
    uint64_t bits = (y >> 1) % (UINT64_C(0x40f0000000000000) - UINT64_C(0x3e00000000000000)) + UINT64_C(0x3e00000000000000);
    std::memcpy(&d, &bits, 8);  // magnitudes 2^-31 .. 2^16: every format's range
    narrow_double((y & 1) ? -d : d);
  }
  if (failures) std::printf("%lu differences from CUDA\n", failures);
  else std::printf("ncclsim_fp.h matches CUDA %d's host conversions\n", CUDART_VERSION);
  return failures != 0;
}
