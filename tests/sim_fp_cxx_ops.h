/* tests/sim_fp_cxx_ops.h — the device intrinsics of cuda_fp16.h and
 * cuda_bf16.h as CUDA documents them: what NaNs, zeros' signs, saturation,
 * the fma's single rounding, pairs' lanes and the directed conversions
 * do. Part of tests/sim_fp_cxx (included by tests/sim_fp_cxx.h);
 * tests/fp-vs-cuda compares every call with CUDA's own host code. */

static unsigned short hbits(const __half x) { return __half_as_ushort(x); }
static unsigned short bbits(const __nv_bfloat16 x) { return __bfloat16_as_ushort(x); }
static __half hof(unsigned short b) { return __ushort_as_half(b); }
static __nv_bfloat16 bof(unsigned short b) { return __ushort_as_bfloat16(b); }
static unsigned h2bits(const __half2 x) { return hbits(x.x) | (unsigned)hbits(x.y) << 16; }

/* __hmax and __hmin let a number win over NaN; the _nan forms let NaN
 * win, as the canonical NaN; +0 counts as greater than -0 in all. */
static void test_cxx_max_min(void **state) {
  (void)state;
  __half one = 1.0f, nan = hof(0x7e01), pz = hof(0), nz = hof(0x8000);
  assert_int_equal(hbits(__hmax(nan, one)), 0x3c00);
  assert_int_equal(hbits(__hmin(one, nan)), 0x3c00);
  assert_int_equal(hbits(__hmax(nan, nan)), 0x7fff);
  assert_int_equal(hbits(__hmax_nan(nan, one)), 0x7fff);
  assert_int_equal(hbits(__hmin_nan(one, nan)), 0x7fff);
  assert_int_equal(hbits(__hmax_nan(one, hof(0x4000))), 0x4000);
  /* Both orders: CUDA's host code once returned whichever zero came first. */
  assert_int_equal(hbits(__hmax(nz, pz)), 0);
  assert_int_equal(hbits(__hmax(pz, nz)), 0);
  assert_int_equal(hbits(__hmin(pz, nz)), 0x8000);
  assert_int_equal(hbits(__hmin(nz, pz)), 0x8000);
  /* bfloat16's _nan forms as documented ("+0.0 > -0.0"), which the GPU
   * does and CUDA 13's host code does not. */
  assert_int_equal(bbits(__hmax_nan(bof(0x8000), bof(0))), 0);
  assert_int_equal(bbits(__hmin_nan(bof(0), bof(0x8000))), 0x8000);
  assert_int_equal(bbits(__hmax(bof(0x7fc1), bof(0xbf80))), 0xbf80);
  __half2 m = __hmax2_nan(__halves2half2(nan, one), __halves2half2(one, pz));
  assert_int_equal(h2bits(m), 0x3c007fff);
  assert_int_equal(h2bits(__hmin2(__halves2half2(nan, nz), __halves2half2(one, pz))), 0x80003c00);
}

/* NaN in, the canonical NaN out, also where only the sign changes (as
 * CUDA's host code and an H100 do; a bit flip would keep the payload). */
static void test_cxx_nan_results(void **state) {
  (void)state;
  assert_int_equal(hbits(__hneg(hof(0x7e01))), 0x7fff);
  assert_int_equal(hbits(-hof(0xfc01)), 0x7fff);
  assert_int_equal(hbits(__habs(hof(0xfe00))), 0x7fff);
  assert_int_equal(bbits(__hneg(bof(0x7fc1))), 0x7fff);
  assert_int_equal(hbits(__hneg(hof(0))), 0x8000);
  assert_int_equal(hbits(__habs(hof(0x8000))), 0);
  assert_int_equal(hbits(__hadd(hof(0x7c01), hof(0x3c00))), 0x7fff);
  assert_int_equal(hbits(hsqrt(hof(0xbc00))), 0x7fff);
  assert_int_equal(h2bits(__hneg2(__halves2half2(hof(0x7e00), hof(0x3c00)))), 0xbc007fff);
}

/* _sat clamps to [+0, 1] and turns NaN into +0; _relu clamps what is
 * below +0 (-0 too) to +0 and keeps NaN a NaN. */
static void test_cxx_saturation(void **state) {
  (void)state;
  __half q = 0.25f, h = 0.5f, t = 0.75f, two = 2.0f, nan = hof(0x7e00);
  assert_int_equal(hbits(__hadd_sat(t, h)), 0x3c00);
  assert_int_equal(hbits(__hsub_sat(q, h)), 0);
  assert_int_equal(hbits(__hsub_sat(q, q)), 0);
  assert_int_equal(hbits(__hmul_sat(hof(0x8000), h)), 0); /* -0 too */
  assert_int_equal(hbits(__hmul_sat(nan, h)), 0);
  assert_int_equal(hbits(__hadd_sat(q, q)), 0x3800);
  assert_int_equal(hbits(__hfma_sat(two, two, hof(0xc500))), 0); /* 4 - 5 */
  assert_int_equal(hbits(__hfma_sat(two, two, h)), 0x3c00);
  assert_int_equal(hbits(__hfma_relu(two, two, hof(0xc500))), 0);
  assert_int_equal(hbits(__hfma_relu(h, hof(0x8000), hof(0x8000))), 0);
  assert_int_equal(hbits(__hfma_relu(two, two, h)), 0x4480);
  assert_int_equal(hbits(__hfma_relu(nan, two, h)), 0x7fff);
  assert_int_equal(bbits(__hfma_relu(bof(0xbf80), bof(0x3f80), bof(0x8000))), 0);
  assert_int_equal(bbits(__hadd_sat(bof(0x7fc0), bof(0x3f80))), 0);
  __half2 s = __hadd2_sat(__halves2half2(t, nan), __halves2half2(t, h));
  assert_int_equal(h2bits(s), 0x00003c00);
}

/* __hfma rounds once: (1 + 2^-10)^2 - (1 + 2^-9) is 2^-20 exactly, which
 * a product rounded first loses. Likewise in bfloat16 with 2^-7. */
static void test_cxx_fma_rounds_once(void **state) {
  (void)state;
  __half a = hof(0x3c01), c = hof(0xbc02);
  assert_int_equal(hbits(__hfma(a, a, c)), 0x0010); /* 2^-20, a subnormal */
  assert_int_equal(hbits(__hadd(__hmul(a, a), c)), 0);
  __nv_bfloat16 b = bof(0x3f81), d = bof(0xbf82);
  assert_int_equal(bbits(__hfma(b, b, d)), 0x3880); /* 2^-14 */
  assert_int_equal(bbits(__hadd(__hmul(b, b), d)), 0);
  /* An exact zero is +0, but -0 for -0 + -0; infinities and NaN as IEEE. */
  assert_int_equal(hbits(__hfma(a, hof(0x8000), hof(0x8000))), 0x8000);
  assert_int_equal(hbits(__hfma(hof(0x3c00), hof(0x3c00), hof(0xbc00))), 0);
  assert_int_equal(hbits(__hfma(hof(0x7c00), hof(0), a)), 0x7fff);
  assert_int_equal(hbits(__hfma(hof(0x7bff), hof(0x4000), hof(0xfbff))), 0x7bff); /* no overflow inside */
  /* __hcmadd: (1 + 2i)(3 + 4i) + (5 + 6i) = 0 + 16i. */
  __half2 r = __hcmadd(__floats2half2_rn(1, 2), __floats2half2_rn(3, 4), __floats2half2_rn(5, 6));
  assert_true(__low2float(r) == 0.0f && __high2float(r) == 16.0f);
}

/* Pairs: each lane computed on its own; comparisons give 1.0 or 0.0 a
 * lane, masks 0xffff; the __hb forms and the operators ask both lanes. */
static void test_cxx_pairs(void **state) {
  (void)state;
  __half2 a = __floats2half2_rn(1.0f, 65504.0f), b = __floats2half2_rn(2.0f, 65504.0f);
  __half2 s = __hadd2(a, b);
  assert_true(__low2float(s) == 3.0f && isinf(__high2float(s)));
  assert_true(__low2float(__h2div(a, b)) == 0.5f && __high2float(__h2div(a, b)) == 1.0f);
  assert_int_equal(h2bits(__hfma2(a, b, a)), 0x7c004200); /* 3, then inf */
  assert_int_equal(h2bits(__heq2(a, b)), 0x3c000000);
  assert_int_equal(__heq2_mask(a, b), 0xffff0000u);
  assert_int_equal(__hlt2_mask(a, b), 0x0000ffffu);
  assert_false(__hbeq2(a, b));
  assert_true(__hble2(a, b));
  assert_false(a == b);
  assert_false(a != b); /* != needs both lanes unequal */
  assert_true(a != __floats2half2_rn(0.0f, 0.0f));
  assert_true(a <= b && !(a < b));
  __half2 n = __halves2half2(hof(0x7e00), hof(0x3c00));
  assert_int_equal(h2bits(__hisnan2(n)), 0x00003c00);
  assert_int_equal(h2bits(__hequ2(n, n)), 0x3c003c00);
  assert_false(__hbeq2(n, n));
  assert_int_equal(h2bits(__lows2half2(a, b)), 0x40003c00);
  assert_int_equal(h2bits(__highs2half2(a, b)), 0x7bff7bff);
  assert_int_equal(h2bits(__low2half2(a)), 0x3c003c00);
  assert_int_equal(h2bits(__high2half2(a)), 0x7bff7bff);
  assert_int_equal(h2bits(make_half2(hof(1), hof(2))), 0x00020001);
  __half2 x = a;
  x *= b;
  x -= a;
  ++x;
  assert_true(__low2float(x) == 2.0f && isinf(__high2float(x)));
  __nv_bfloat162 p = __floats2bfloat162_rn(1.5f, -2.0f);
  p += p;
  assert_int_equal(bbits(p.x), 0x4040);
  assert_int_equal(bbits(p.y), 0xc080);
  assert_int_equal(bbits(__highs2bfloat162(p, p).x), 0xc080);
  assert_true(__hbgt2(__float2bfloat162_rn(2.0f), __float2bfloat162_rn(1.0f)));
}

/* Math rounds the exact result once to nearest; the special values as
 * CUDA lists them. */
static void test_cxx_math(void **state) {
  (void)state;
  assert_int_equal(hbits(hsqrt(hof(0x4400))), 0x4000);             /* sqrt(4) */
  assert_int_equal(hbits(hsqrt(hof(0x8000))), 0x8000);             /* -0 */
  assert_int_equal(hbits(hrsqrt(hof(0x8000))), 0xfc00);            /* -inf */
  assert_int_equal(hbits(hrsqrt(hof(0x7c00))), 0);
  assert_int_equal(hbits(hrcp(hof(0))), 0x7c00);
  assert_int_equal(hbits(hrcp(hof(0x4000))), 0x3800);
  assert_int_equal(hbits(hexp(hof(0x8000))), 0x3c00);
  assert_int_equal(hbits(hexp(hof(0xfc00))), 0);
  assert_int_equal(hbits(hexp(hof(0x4c00))), 0x7c00);              /* e^16 overflows */
  assert_int_equal(hbits(hexp2(hof(0x4900))), 0x6400);             /* 2^10 */
  assert_int_equal(hbits(hexp10(hof(0x4000))), 0x5640);            /* 100 */
  assert_int_equal(hbits(hlog(hof(0))), 0xfc00);
  assert_int_equal(hbits(hlog(hof(0x3c00))), 0);
  assert_int_equal(hbits(hlog(hof(0xbc00))), 0x7fff);
  assert_int_equal(hbits(hlog2(hof(0x6400))), 0x4900);
  assert_int_equal(hbits(hlog10(hof(0x5640))), 0x4000);
  assert_int_equal(hbits(hsin(hof(0x8000))), 0x8000);
  assert_int_equal(hbits(hcos(hof(0x7c00))), 0x7fff);
  assert_int_equal(hbits(htanh(hof(0xfc00))), 0xbc00);
  assert_true(float(hsin(hof(0x4248))) > 0.0f && float(hsin(hof(0x4248))) < 0.001f); /* sin(3.140625) */
  assert_int_equal(hbits(hceil(hof(0xb800))), 0x8000);             /* ceil(-0.5) = -0 */
  assert_int_equal(hbits(hfloor(hof(0xb800))), 0xbc00);
  assert_int_equal(hbits(htrunc(hof(0xbe00))), 0xbc00);            /* trunc(-1.5) */
  assert_int_equal(hbits(hrint(hof(0x4100))), 0x4000);             /* 2.5 to even: 2 */
  assert_int_equal(hbits(hrint(hof(0x4300))), 0x4400);             /* 3.5: 4 */
  assert_int_equal(hbits(hrint(hof(0xb800))), 0x8000);             /* -0.5: -0 */
  assert_int_equal(hbits(hrint(hof(0x7bff))), 0x7bff);
  assert_int_equal(h2bits(h2sqrt(__floats2half2_rn(16.0f, -1.0f))), 0x7fff4400);
  assert_int_equal(h2bits(h2floor(__floats2half2_rn(-0.25f, 1.75f))), 0x3c00bc00);
  assert_int_equal(bbits(hsqrt(bof(0x4080))), 0x4000);
  assert_int_equal(bbits(hexp2(bof(0x42fe))), 0x7f00);             /* 2^127 */
  assert_int_equal(bbits(hexp2(bof(0x4300))), 0x7f80);             /* 2^128 overflows */
  assert_int_equal(bbits(hrint(bof(0x4020))), 0x4000);             /* 2.5 */
  assert_int_equal(bbits(hceil(bof(0x3f01))), 0x3f80);
}

/* Float to integer in each direction, saturating; NaN gives 0, or the
 * lowest value for 64 bits. Integer to float once, in each direction, 64
 * bits included (a double in between would round twice). */
static void test_cxx_directed_conversions(void **state) {
  (void)state;
  __half h25 = 2.5f, m25 = -2.5f, nan = hof(0x7e00);
  assert_int_equal(__half2int_rn(h25), 2);
  assert_int_equal(__half2int_rn(__half(3.5f)), 4);
  assert_int_equal(__half2int_rd(m25), -3);
  assert_int_equal(__half2int_ru(m25), -2);
  assert_int_equal(__half2int_rz(m25), -2);
  assert_int_equal(__half2uint_rn(__half(-0.4f)), 0);
  assert_int_equal(__half2uint_ru(__half(-0.6f)), 0);
  assert_int_equal(__half2short_ru(__half(40000.0f)), 32767);
  assert_int_equal(__half2ushort_rd(hof(0x7c00)), 65535);
  assert_int_equal(__half2int_rn(nan), 0);
  assert_true(__half2ll_ru(nan) == INT64_MIN);
  assert_true(__half2ull_rd(nan) == UINT64_C(0x8000000000000000));
  assert_int_equal(__bfloat162int_rn(bof(0x4f00)), INT32_MAX); /* 2^31 */
  assert_int_equal(__bfloat162short_rd(bof(0xbfc0)), -2);      /* -1.5 */
  assert_int_equal(hbits(__int2half_rz(2049)), 0x6800);        /* 2048 */
  assert_int_equal(hbits(__int2half_ru(2049)), 0x6801);
  assert_int_equal(hbits(__int2half_rd(-2049)), 0xe801);
  assert_int_equal(hbits(__ll2half_ru(INT64_MAX)), 0x7c00);
  assert_int_equal(hbits(__ll2half_rz(INT64_MAX)), 0x7bff);
  assert_int_equal(hbits(__ushort2half_rd(65535)), 0x7bff);
  assert_int_equal(bbits(__int2bfloat16_rz(257)), 0x4380);
  assert_int_equal(bbits(__int2bfloat16_ru(257)), 0x4381);
  assert_int_equal(bbits(__ull2bfloat16_rd(UINT64_MAX)), 0x5f7f);
  assert_int_equal(bbits(__ull2bfloat16_ru(UINT64_MAX)), 0x5f80);
  /* 2^60 + 2^52 + 1 lies just above a tie: up, to 2^60 + 2^53. */
  long long above_tie = (1LL << 60) + (1LL << 52) + 1;
  assert_int_equal(bbits(__ll2bfloat16_rn(above_tie)), 0x5d81);
  assert_int_equal(bbits(__nv_bfloat16(above_tie)), 0x5d81);
  assert_int_equal(bbits(__ll2bfloat16_rn(-above_tie)), 0xdd81);
  assert_int_equal(bbits(__ll2bfloat16_rz(above_tie)), 0x5d80);
}
