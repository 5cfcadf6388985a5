// tests/fp_ops.h — every function of CUDA 13's cuda_fp16.h and cuda_bf16.h
// that ncclsim's headers have, as one table for the programs that compare
// two implementations of them call by call: tests/sim_fp_vs_cuda.cc
// (ncclsim against CUDA's host code) and tests/sim_fp_vs_gpu.cu (ncclsim
// against a GPU). tests/fp_ops_eval.h turns the table into a function
// that calls one of them on raw bits; this file has the table, its index
// and the inputs each kind of function is tried on.
//
// FP_OPS(X) calls X(id, fmt, kind, where, expr) once a function (once an
// overload, operator or conversion):
//   fmt   F: float16 or its pairs, B: bfloat16 or its pairs (which special
//         values and random values of nearby exponents the inputs hold);
//   kind  the arguments a, b and c (uint64_t): S1 .. S3 one to three 16-bit
//         values, P1 .. P3 one to three pairs (32 bits, x low), I16, I32,
//         I64 an integer, F32 a float's bits, F32x2 two floats' (a, b),
//         F64 a double's;
//   where H: CUDA has host code for it, D: device-only in CUDA, Z: host
//         code that differs from what CUDA documents (ncclsim follows the
//         documentation; the comparison with CUDA's host code takes a
//         reference of the documented behaviour instead);
//   expr  the call: fp_h(a), fp_b(a) make a __half, an __nv_bfloat16 of
//         bits a; fp_h2(a), fp_b2(a) the pairs; integers and floats by
//         fp_f(a) (float bits), fp_d(a) (double bits) or a cast.
// Results are compared as bits (fp_out): floats and NaNs included.
#ifndef N4C_TESTS_FP_OPS_H
#define N4C_TESTS_FP_OPS_H

#include <stdint.h>

#define FP_OPS_CONVERT_16(X, f, T, t, fromf)                                                      \
  X(float2##t##_##f, f, F32, H, fromf(fp_f(a)))                                                   \
  X(float2##t##_rn_##f, f, F32, H, fromf##_rn(fp_f(a)))                                           \
  X(float2##t##_rz_##f, f, F32, H, fromf##_rz(fp_f(a)))                                           \
  X(float2##t##_rd_##f, f, F32, H, fromf##_rd(fp_f(a)))                                           \
  X(float2##t##_ru_##f, f, F32, H, fromf##_ru(fp_f(a)))                                           \
  X(ctor_float_##f, f, F32, H, T(fp_f(a)))                                                        \
  X(ctor_double_##f, f, F64, H, T(fp_d(a)))                                                       \
  X(ctor_int_##f, f, I32, H, T((int)a))                                                           \
  X(ctor_uint_##f, f, I32, H, T((unsigned)a))                                                     \
  X(ctor_short_##f, f, I16, H, T((short)a))                                                       \
  X(ctor_ushort_##f, f, I16, H, T((unsigned short)a))                                             \
  X(ctor_long_##f, f, I64, H, T((long)a))                                                         \
  X(ctor_ulong_##f, f, I64, H, T((unsigned long)a))                                               \
  X(ctor_ll_##f, f, I64, H, T((long long)a))                                                      \
  X(ctor_ull_##f, f, I64, H, T((unsigned long long)a))                                            \
  X(op_float_##f, f, S1, H, (float)fp_##f(a))                                                     \
  X(op_schar_##f, f, S1, H, (signed char)fp_##f(a))                                               \
  X(op_uchar_##f, f, S1, H, (unsigned char)fp_##f(a))                                             \
  X(op_short_##f, f, S1, H, (short)fp_##f(a))                                                     \
  X(op_ushort_##f, f, S1, H, (unsigned short)fp_##f(a))                                           \
  X(op_int_##f, f, S1, H, (int)fp_##f(a))                                                         \
  X(op_uint_##f, f, S1, H, (unsigned)fp_##f(a))                                                   \
  X(op_long_##f, f, S1, H, (long)fp_##f(a))                                                       \
  X(op_ulong_##f, f, S1, H, (unsigned long)fp_##f(a))                                             \
  X(op_ll_##f, f, S1, H, (long long)fp_##f(a))                                                    \
  X(op_ull_##f, f, S1, H, (unsigned long long)fp_##f(a))                                          \
  X(op_bool_##f, f, S1, H, (bool)fp_##f(a))

// To and from integers: n the type's name in CUDA's function names.
#define FP_OPS_TO_INT(X, f, t, n, T, wrn)                   \
  X(t##2##n##_rn_##f, f, S1, wrn, __##t##2##n##_rn(fp_##f(a))) \
  X(t##2##n##_rz_##f, f, S1, H, __##t##2##n##_rz(fp_##f(a)))   \
  X(t##2##n##_rd_##f, f, S1, wrn, __##t##2##n##_rd(fp_##f(a))) \
  X(t##2##n##_ru_##f, f, S1, wrn, __##t##2##n##_ru(fp_##f(a)))
#define FP_OPS_FROM_INT(X, f, t, n, T, kind, wdir)                \
  X(n##2##t##_rn_##f, f, kind, H, __##n##2##t##_rn((T)a))          \
  X(n##2##t##_rz_##f, f, kind, wdir, __##n##2##t##_rz((T)a))       \
  X(n##2##t##_rd_##f, f, kind, wdir, __##n##2##t##_rd((T)a))       \
  X(n##2##t##_ru_##f, f, kind, wdir, __##n##2##t##_ru((T)a))
// wrn: where CUDA has the rounded float-to-integer conversions (device
// only for both formats); wdir: the directed integer-to-float ones (host
// code for float16, device only for bfloat16).
#define FP_OPS_INTS(X, f, t, wrn, wdir)                                  \
  FP_OPS_TO_INT(X, f, t, int, int, wrn)                                 \
  FP_OPS_TO_INT(X, f, t, uint, unsigned, wrn)                           \
  FP_OPS_TO_INT(X, f, t, short, short, wrn)                             \
  FP_OPS_TO_INT(X, f, t, ushort, unsigned short, wrn)                   \
  FP_OPS_TO_INT(X, f, t, ll, long long, wrn)                            \
  FP_OPS_TO_INT(X, f, t, ull, unsigned long long, wrn)                  \
  X(t##2char_rz_##f, f, S1, H, __##t##2char_rz(fp_##f(a)))              \
  X(t##2uchar_rz_##f, f, S1, H, __##t##2uchar_rz(fp_##f(a)))            \
  FP_OPS_FROM_INT(X, f, t, int, int, I32, wdir)                         \
  FP_OPS_FROM_INT(X, f, t, uint, unsigned, I32, wdir)                   \
  FP_OPS_FROM_INT(X, f, t, short, short, I16, wdir)                     \
  FP_OPS_FROM_INT(X, f, t, ushort, unsigned short, I16, wdir)           \
  FP_OPS_FROM_INT(X, f, t, ll, long long, I64, wdir)                    \
  FP_OPS_FROM_INT(X, f, t, ull, unsigned long long, I64, wdir)

// Comparisons: scalar, and the pair's three forms.
#define FP_OPS_CMP(X, f, c)                                  \
  X(h##c##_##f, f, S2, H, __h##c(fp_##f(a), fp_##f(b)))      \
  X(h##c##2_##f, f, P2, H, __h##c##2(fp_##f##2(a), fp_##f##2(b))) \
  X(h##c##2_mask_##f, f, P2, H, __h##c##2_mask(fp_##f##2(a), fp_##f##2(b))) \
  X(hb##c##2_##f, f, P2, H, __hb##c##2(fp_##f##2(a), fp_##f##2(b)))
#define FP_OPS_CMPS(X, f)                                                                  \
  FP_OPS_CMP(X, f, eq) FP_OPS_CMP(X, f, ne) FP_OPS_CMP(X, f, le) FP_OPS_CMP(X, f, ge)      \
  FP_OPS_CMP(X, f, lt) FP_OPS_CMP(X, f, gt) FP_OPS_CMP(X, f, equ) FP_OPS_CMP(X, f, neu)    \
  FP_OPS_CMP(X, f, leu) FP_OPS_CMP(X, f, geu) FP_OPS_CMP(X, f, ltu) FP_OPS_CMP(X, f, gtu)

// Binary arithmetic, scalar and pair (pair names as CUDA's: __hadd2,
// __hadd2_sat, __h2div).
#define FP_OPS_BIN(X, f, s, p, w)                               \
  X(s##_##f, f, S2, w, s(fp_##f(a), fp_##f(b)))                 \
  X(p##_##f, f, P2, w, p(fp_##f##2(a), fp_##f##2(b)))
#define FP_OPS_ARITH(X, f, wnan)                                  \
  FP_OPS_BIN(X, f, __hadd, __hadd2, H)                            \
  FP_OPS_BIN(X, f, __hsub, __hsub2, H)                            \
  FP_OPS_BIN(X, f, __hmul, __hmul2, H)                            \
  FP_OPS_BIN(X, f, __hdiv, __h2div, H)                            \
  FP_OPS_BIN(X, f, __hadd_rn, __hadd2_rn, H)                      \
  FP_OPS_BIN(X, f, __hsub_rn, __hsub2_rn, H)                      \
  FP_OPS_BIN(X, f, __hmul_rn, __hmul2_rn, H)                      \
  FP_OPS_BIN(X, f, __hadd_sat, __hadd2_sat, H)                    \
  FP_OPS_BIN(X, f, __hsub_sat, __hsub2_sat, H)                    \
  FP_OPS_BIN(X, f, __hmul_sat, __hmul2_sat, H)                    \
  FP_OPS_BIN(X, f, __hmax, __hmax2, H)                            \
  FP_OPS_BIN(X, f, __hmin, __hmin2, H)                            \
  FP_OPS_BIN(X, f, __hmax_nan, __hmax2_nan, wnan)                 \
  FP_OPS_BIN(X, f, __hmin_nan, __hmin2_nan, wnan)                 \
  X(hneg_##f, f, S1, H, __hneg(fp_##f(a)))                        \
  X(hneg2_##f, f, P1, H, __hneg2(fp_##f##2(a)))                   \
  X(habs_##f, f, S1, H, __habs(fp_##f(a)))                        \
  X(habs2_##f, f, P1, H, __habs2(fp_##f##2(a)))                   \
  X(hisnan_##f, f, S1, H, __hisnan(fp_##f(a)))                    \
  X(hisnan2_##f, f, P1, H, __hisnan2(fp_##f##2(a)))               \
  X(hisinf_##f, f, S1, H, __hisinf(fp_##f(a)))                    \
  X(hfma_##f, f, S3, D, __hfma(fp_##f(a), fp_##f(b), fp_##f(c)))  \
  X(hfma_sat_##f, f, S3, D, __hfma_sat(fp_##f(a), fp_##f(b), fp_##f(c))) \
  X(hfma_relu_##f, f, S3, D, __hfma_relu(fp_##f(a), fp_##f(b), fp_##f(c))) \
  X(hfma2_##f, f, P3, D, __hfma2(fp_##f##2(a), fp_##f##2(b), fp_##f##2(c))) \
  X(hfma2_sat_##f, f, P3, D, __hfma2_sat(fp_##f##2(a), fp_##f##2(b), fp_##f##2(c))) \
  X(hfma2_relu_##f, f, P3, D, __hfma2_relu(fp_##f##2(a), fp_##f##2(b), fp_##f##2(c))) \
  X(hcmadd_##f, f, P3, D, __hcmadd(fp_##f##2(a), fp_##f##2(b), fp_##f##2(c)))

// Operators, scalar (T) and pair (T2): compound ones through fp_opeq.
#define FP_OPS_OPERATORS(X, f, s)                                         \
  X(op_add_##s, f, FPK_##s##_2, H, fp_##s(a) + fp_##s(b))                       \
  X(op_sub_##s, f, FPK_##s##_2, H, fp_##s(a) - fp_##s(b))                       \
  X(op_mul_##s, f, FPK_##s##_2, H, fp_##s(a) * fp_##s(b))                       \
  X(op_div_##s, f, FPK_##s##_2, H, fp_##s(a) / fp_##s(b))                       \
  X(op_addeq_##s, f, FPK_##s##_2, H, fp_opeq(fp_##s(a), fp_##s(b), 0))          \
  X(op_subeq_##s, f, FPK_##s##_2, H, fp_opeq(fp_##s(a), fp_##s(b), 1))          \
  X(op_muleq_##s, f, FPK_##s##_2, H, fp_opeq(fp_##s(a), fp_##s(b), 2))          \
  X(op_diveq_##s, f, FPK_##s##_2, H, fp_opeq(fp_##s(a), fp_##s(b), 3))          \
  X(op_eq_##s, f, FPK_##s##_2, H, fp_##s(a) == fp_##s(b))                       \
  X(op_ne_##s, f, FPK_##s##_2, H, fp_##s(a) != fp_##s(b))                       \
  X(op_lt_##s, f, FPK_##s##_2, H, fp_##s(a) < fp_##s(b))                        \
  X(op_le_##s, f, FPK_##s##_2, H, fp_##s(a) <= fp_##s(b))                       \
  X(op_gt_##s, f, FPK_##s##_2, H, fp_##s(a) > fp_##s(b))                        \
  X(op_ge_##s, f, FPK_##s##_2, H, fp_##s(a) >= fp_##s(b))                       \
  X(op_pos_##s, f, FPK_##s##_1, H, +fp_##s(a))                                  \
  X(op_neg_##s, f, FPK_##s##_1, H, -fp_##s(a))                                  \
  X(op_inc_##s, f, FPK_##s##_1, H, fp_incdec(fp_##s(a), 0))                     \
  X(op_dec_##s, f, FPK_##s##_1, H, fp_incdec(fp_##s(a), 1))

// Math: scalar and pair.
#define FP_OPS_MATH(X, f)                                                                          \
  X(hsqrt_##f, f, S1, D, hsqrt(fp_##f(a))) X(h2sqrt_##f, f, P1, D, h2sqrt(fp_##f##2(a)))           \
  X(hrsqrt_##f, f, S1, D, hrsqrt(fp_##f(a))) X(h2rsqrt_##f, f, P1, D, h2rsqrt(fp_##f##2(a)))       \
  X(hrcp_##f, f, S1, D, hrcp(fp_##f(a))) X(h2rcp_##f, f, P1, D, h2rcp(fp_##f##2(a)))               \
  X(hlog_##f, f, S1, D, hlog(fp_##f(a))) X(h2log_##f, f, P1, D, h2log(fp_##f##2(a)))               \
  X(hlog2_##f, f, S1, D, hlog2(fp_##f(a))) X(h2log2_##f, f, P1, D, h2log2(fp_##f##2(a)))           \
  X(hlog10_##f, f, S1, D, hlog10(fp_##f(a))) X(h2log10_##f, f, P1, D, h2log10(fp_##f##2(a)))       \
  X(hexp_##f, f, S1, D, hexp(fp_##f(a))) X(h2exp_##f, f, P1, D, h2exp(fp_##f##2(a)))               \
  X(hexp2_##f, f, S1, D, hexp2(fp_##f(a))) X(h2exp2_##f, f, P1, D, h2exp2(fp_##f##2(a)))           \
  X(hexp10_##f, f, S1, D, hexp10(fp_##f(a))) X(h2exp10_##f, f, P1, D, h2exp10(fp_##f##2(a)))       \
  X(hsin_##f, f, S1, D, hsin(fp_##f(a))) X(h2sin_##f, f, P1, D, h2sin(fp_##f##2(a)))               \
  X(hcos_##f, f, S1, D, hcos(fp_##f(a))) X(h2cos_##f, f, P1, D, h2cos(fp_##f##2(a)))               \
  X(htanh_##f, f, S1, D, htanh(fp_##f(a))) X(h2tanh_##f, f, P1, D, h2tanh(fp_##f##2(a)))           \
  X(htanh_approx_##f, f, S1, D, htanh_approx(fp_##f(a)))                                           \
  X(h2tanh_approx_##f, f, P1, D, h2tanh_approx(fp_##f##2(a)))                                      \
  X(hceil_##f, f, S1, D, hceil(fp_##f(a))) X(h2ceil_##f, f, P1, D, h2ceil(fp_##f##2(a)))           \
  X(hfloor_##f, f, S1, D, hfloor(fp_##f(a))) X(h2floor_##f, f, P1, D, h2floor(fp_##f##2(a)))       \
  X(htrunc_##f, f, S1, D, htrunc(fp_##f(a))) X(h2trunc_##f, f, P1, D, h2trunc(fp_##f##2(a)))       \
  X(hrint_##f, f, S1, D, hrint(fp_##f(a))) X(h2rint_##f, f, P1, D, h2rint(fp_##f##2(a)))

#define FP_OPS(X)                                                                                \
  /* float16 */                                                                                  \
  FP_OPS_CONVERT_16(X, h, __half, half, __float2half)                                            \
  X(double2half_h, h, F64, H, __double2half(fp_d(a)))                                            \
  X(half2float_h, h, S1, H, __half2float(fp_h(a)))                                               \
  X(float2half2_rn_h, h, F32, H, __float2half2_rn(fp_f(a)))                                      \
  X(floats2half2_rn_h, h, F32x2, H, __floats2half2_rn(fp_f(a), fp_f(b)))                         \
  X(float22half2_rn_h, h, F32x2, H, __float22half2_rn(make_float2(fp_f(a), fp_f(b))))            \
  X(half22float2_h, h, P1, H, __half22float2(fp_h2(a)))                                          \
  X(low2float_h, h, P1, H, __low2float(fp_h2(a)))                                                \
  X(high2float_h, h, P1, H, __high2float(fp_h2(a)))                                              \
  X(low2half_h, h, P1, H, __low2half(fp_h2(a)))                                                  \
  X(high2half_h, h, P1, H, __high2half(fp_h2(a)))                                                \
  X(halves2half2_h, h, S2, H, __halves2half2(fp_h(a), fp_h(b)))                                  \
  X(make_half2_h, h, S2, H, make_half2(fp_h(a), fp_h(b)))                                        \
  X(half2half2_h, h, S1, H, __half2half2(fp_h(a)))                                               \
  X(lowhigh2highlow_h, h, P1, H, __lowhigh2highlow(fp_h2(a)))                                    \
  X(low2half2_h, h, P1, H, __low2half2(fp_h2(a)))                                                \
  X(high2half2_h, h, P1, H, __high2half2(fp_h2(a)))                                              \
  X(lows2half2_h, h, P2, H, __lows2half2(fp_h2(a), fp_h2(b)))                                    \
  X(highs2half2_h, h, P2, H, __highs2half2(fp_h2(a), fp_h2(b)))                                  \
  X(half_as_short_h, h, S1, H, __half_as_short(fp_h(a)))                                         \
  X(half_as_ushort_h, h, S1, H, __half_as_ushort(fp_h(a)))                                       \
  X(short_as_half_h, h, I16, H, __short_as_half((short)a))                                       \
  X(ushort_as_half_h, h, I16, H, __ushort_as_half((unsigned short)a))                            \
  X(ctor_bf16_h, h, S1, H, __half(fp_b(a)))                                                      \
  FP_OPS_INTS(X, h, half, D, H)                                                                  \
  FP_OPS_CMPS(X, h)                                                                              \
  FP_OPS_ARITH(X, h, H)                                                                          \
  FP_OPS_OPERATORS(X, h, h)                                                                      \
  FP_OPS_OPERATORS(X, h, h2)                                                                     \
  FP_OPS_MATH(X, h)                                                                              \
  /* bfloat16 */                                                                                 \
  FP_OPS_CONVERT_16(X, b, __nv_bfloat16, bfloat16, __float2bfloat16)                             \
  X(double2bfloat16_b, b, F64, H, __double2bfloat16(fp_d(a)))                                    \
  X(bfloat162float_b, b, S1, H, __bfloat162float(fp_b(a)))                                       \
  X(float2bfloat162_rn_b, b, F32, H, __float2bfloat162_rn(fp_f(a)))                              \
  X(floats2bfloat162_rn_b, b, F32x2, H, __floats2bfloat162_rn(fp_f(a), fp_f(b)))                 \
  X(float22bfloat162_rn_b, b, F32x2, H, __float22bfloat162_rn(make_float2(fp_f(a), fp_f(b))))    \
  X(bfloat1622float2_b, b, P1, H, __bfloat1622float2(fp_b2(a)))                                  \
  X(low2float_b, b, P1, H, __low2float(fp_b2(a)))                                                \
  X(high2float_b, b, P1, H, __high2float(fp_b2(a)))                                              \
  X(low2bfloat16_b, b, P1, H, __low2bfloat16(fp_b2(a)))                                          \
  X(high2bfloat16_b, b, P1, H, __high2bfloat16(fp_b2(a)))                                        \
  X(halves2bfloat162_b, b, S2, H, __halves2bfloat162(fp_b(a), fp_b(b)))                          \
  X(make_bfloat162_b, b, S2, H, make_bfloat162(fp_b(a), fp_b(b)))                                \
  X(bfloat162bfloat162_b, b, S1, H, __bfloat162bfloat162(fp_b(a)))                               \
  X(lowhigh2highlow_b, b, P1, H, __lowhigh2highlow(fp_b2(a)))                                    \
  X(low2bfloat162_b, b, P1, H, __low2bfloat162(fp_b2(a)))                                        \
  X(high2bfloat162_b, b, P1, H, __high2bfloat162(fp_b2(a)))                                      \
  X(lows2bfloat162_b, b, P2, H, __lows2bfloat162(fp_b2(a), fp_b2(b)))                            \
  X(highs2bfloat162_b, b, P2, H, __highs2bfloat162(fp_b2(a), fp_b2(b)))                          \
  X(bfloat16_as_short_b, b, S1, H, __bfloat16_as_short(fp_b(a)))                                 \
  X(bfloat16_as_ushort_b, b, S1, H, __bfloat16_as_ushort(fp_b(a)))                               \
  X(short_as_bfloat16_b, b, I16, H, __short_as_bfloat16((short)a))                               \
  X(ushort_as_bfloat16_b, b, I16, H, __ushort_as_bfloat16((unsigned short)a))                    \
  X(ctor_half_b, b, S1, H, __nv_bfloat16(fp_h(a)))                                               \
  FP_OPS_INTS(X, b, bfloat16, D, D)                                                              \
  FP_OPS_CMPS(X, b)                                                                              \
  FP_OPS_ARITH(X, b, Z)                                                                          \
  FP_OPS_OPERATORS(X, b, b)                                                                      \
  FP_OPS_OPERATORS(X, b, b2)                                                                     \
  FP_OPS_MATH(X, b)

// The operators' kinds: scalar or pair, one or two operands.
#define FPK_h_1 S1
#define FPK_h_2 S2
#define FPK_h2_1 P1
#define FPK_h2_2 P2
#define FPK_b_1 S1
#define FPK_b_2 S2
#define FPK_b2_1 P1
#define FPK_b2_2 P2

enum fp_kind { FP_S1, FP_S2, FP_S3, FP_P1, FP_P2, FP_P3, FP_I16, FP_I32, FP_I64, FP_F32, FP_F32x2, FP_F64 };
enum fp_where { FP_WHERE_H, FP_WHERE_D, FP_WHERE_Z };
#define FP_KIND_OF(k) FP_KIND_OF_(k)
#define FP_KIND_OF_(k) FP_##k

#define FP_OP_ENUM(id, f, kind, where, expr) FP_OP_##id,
enum { FP_OPS(FP_OP_ENUM) FP_OP_COUNT };
#undef FP_OP_ENUM

struct fp_op_info {
  const char *name;
  int bf16; /* the format of the values: 0 float16, 1 bfloat16 */
  int kind;
  int where;
};
#define FP_OP_INFO(id, f, kind, where, expr) {#id, #f[0] == 'b', FP_KIND_OF(kind), FP_WHERE_##where},
static const struct fp_op_info fp_op_infos[FP_OP_COUNT] = {FP_OPS(FP_OP_INFO)};
#undef FP_OP_INFO

// ---- inputs (host code) ----
#if defined(__cplusplus)
#include <vector>

static inline uint64_t fp_mix(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Values whose handling differs: zeros, the smallest and largest
// subnormals and normals, 1 and its neighbours, infinities, quiet and
// signalling NaNs, each sign.
static const uint16_t fp_special_h[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3800, 0x3bff,
                                        0x3c00, 0xbc00, 0x3c01, 0x4000, 0x7bff, 0xfbff, 0x7c00, 0xfc00,
                                        0x7e00, 0x7c01, 0xfe00, 0x7fff, 0x3555, 0xc200};
static const uint16_t fp_special_b[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x007f, 0x0080, 0x3f00, 0x3f7f,
                                        0x3f80, 0xbf80, 0x3f81, 0x4000, 0x7f7f, 0xff7f, 0x7f80, 0xff80,
                                        0x7fc0, 0x7f81, 0xffc0, 0x7fff, 0x3eab, 0xc040};
enum { FP_NSPECIAL = sizeof fp_special_h / sizeof fp_special_h[0] };

// A value of the format with exponent field e (random where e < 0),
// random sign and mantissa; now and then a NaN, an infinity or a zero.
static inline uint16_t fp_rand_val(int bf16, uint64_t *s, int e) {
  uint64_t r = fp_mix(s);
  int mbits = bf16 ? 7 : 10, emax = bf16 ? 255 : 31;
  if ((r & 63) == 0) return (bf16 ? fp_special_b : fp_special_h)[(r >> 8) % FP_NSPECIAL];
  if (e < 0) e = (int)((r >> 8) % (uint64_t)(emax + 1));
  if (e > emax) e = emax;
  return (uint16_t)(((r >> 40) & 1) << 15 | (uint64_t)e << mbits | ((r >> 16) & ((1u << mbits) - 1)));
}
static inline int fp_exp_of(int bf16, uint16_t v) { return (v >> (bf16 ? 7 : 10)) & (bf16 ? 255 : 31); }
static inline int fp_clamp_exp(int bf16, int e) { return e < 0 ? 0 : e > (bf16 ? 254 : 30) ? (bf16 ? 254 : 30) : e; }

// n operands (1 to 3) of the format: every combination of the special
// values, then random ones; half of the random b and c have exponents
// near a's (and c near a*b's), where rounding decides the most.
static inline void fp_gen_scalars(int bf16, int n, size_t nrand, uint64_t seed, std::vector<uint64_t> *v) {
  const uint16_t *sp = bf16 ? fp_special_b : fp_special_h;
  int bias = bf16 ? 127 : 15;
  size_t ns = n == 1 ? FP_NSPECIAL : n == 2 ? FP_NSPECIAL * FP_NSPECIAL : FP_NSPECIAL * FP_NSPECIAL * FP_NSPECIAL;
  for (size_t i = 0; i < ns; i++) {
    v[0].push_back(sp[i % FP_NSPECIAL]);
    if (n > 1) v[1].push_back(sp[i / FP_NSPECIAL % FP_NSPECIAL]);
    if (n > 2) v[2].push_back(sp[i / FP_NSPECIAL / FP_NSPECIAL]);
  }
  uint64_t s = seed;
  for (size_t i = 0; i < nrand; i++) {
    uint16_t x = fp_rand_val(bf16, &s, -1);
    int near = (int)(fp_mix(&s) & 1), d = (int)(fp_mix(&s) % 7) - 3;
    v[0].push_back(x);
    uint16_t y = fp_rand_val(bf16, &s, near ? fp_clamp_exp(bf16, fp_exp_of(bf16, x) + d) : -1);
    if (n > 1) v[1].push_back(y);
    if (n > 2) {
      int ep = fp_exp_of(bf16, x) + fp_exp_of(bf16, y) - bias + (int)(fp_mix(&s) % 25) - 12;
      v[2].push_back(fp_rand_val(bf16, &s, near ? fp_clamp_exp(bf16, ep) : -1));
    }
  }
}

// Integers of every magnitude: each power of two and its neighbours (the
// rounding boundaries of both formats among them), then random ones of
// random bit lengths, each sign.
static inline void fp_gen_ints(int bits, size_t nrand, uint64_t seed, std::vector<uint64_t> *v) {
  uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
  for (int k = 0; k < bits; k++)
    for (int d = -3; d <= 3; d++) {
      uint64_t p = (1ull << k) + (uint64_t)(int64_t)d;
      v[0].push_back(p & mask);
      v[0].push_back((0 - p) & mask);
    }
  for (int p = 8; p <= 11; p += 3) /* bfloat16's and float16's ties and their neighbours */
    for (int k = p; k < bits - 1; k++)
      for (int d = -1; d <= 1; d++) {
        uint64_t tie = (1ull << k) + 3 * (1ull << (k - p));
        v[0].push_back((tie + (uint64_t)(int64_t)d) & mask);
        v[0].push_back((0 - tie - (uint64_t)(int64_t)d) & mask);
      }
  uint64_t s = seed;
  for (size_t i = 0; i < nrand; i++) {
    uint64_t r = fp_mix(&s), len = fp_mix(&s) % (uint64_t)bits + 1;
    v[0].push_back((len == 64 ? r : r & ((1ull << len) - 1)) & mask);
  }
}

// Floats (as bits): specials, then random ones of magnitudes 2^-30 to
// 2^20 (every value of both formats and beyond), and of any exponent.
static inline void fp_gen_floats(int n, size_t nrand, uint64_t seed, std::vector<uint64_t> *v) {
  static const uint32_t sp[] = {0, 0x80000000u, 1, 0x00800000u, 0x3f800000u, 0xbf800000u, 0x477fe000u,
                                0x477ff000u, 0x47800000u, 0x7f7f0000u, 0x7f7f8000u, 0x7f7fffffu,
                                0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u, 0xffc00000u, 0x33800000u};
  const size_t nsp = sizeof sp / sizeof sp[0];
  for (size_t i = 0; i < nsp * (n == 2 ? nsp : 1); i++) {
    v[0].push_back(sp[i % nsp]);
    if (n == 2) v[1].push_back(sp[i / nsp]);
  }
  uint64_t s = seed;
  for (size_t i = 0; i < nrand; i++)
    for (int k = 0; k < n; k++) {
      uint64_t r = fp_mix(&s);
      uint32_t e = (r & 1) ? (uint32_t)((r >> 1) % 51) + 127 - 30 : (uint32_t)((r >> 1) % 256);
      v[k].push_back((uint32_t)((r >> 9) & 0x807fffffu) | e << 23);
    }
}
static inline void fp_gen_doubles(size_t nrand, uint64_t seed, std::vector<uint64_t> *v) {
  static const uint64_t sp[] = {0, 0x8000000000000000ull, 0x3ff0000000000000ull, 0x40effc0000000000ull,
                                0x40effe0000000000ull, 0x40effe0000000001ull, 0x7ff0000000000000ull,
                                0xfff0000000000000ull, 0x7ff8000000000000ull, 0x47efe00000000000ull,
                                0x47efefffffffffffull, 0x47eff00000000000ull, 0x3e70000000000000ull};
  for (uint64_t x : sp) v[0].push_back(x);
  uint64_t s = seed;
  for (size_t i = 0; i < nrand; i++) {
    uint64_t r = fp_mix(&s);
    uint64_t e = (r & 1) ? (r >> 1) % 51 + 1023 - 30 : (r >> 1) % 2048;
    v[0].push_back((fp_mix(&s) & 0x800fffffffffffffull) | e << 52);
  }
}

// The inputs of op: a[i], b[i], c[i]. Every 16-bit value where there is
// one operand; pairs of lanes drawn apart (lane y from another draw than
// lane x, so that a lane mixing its neighbour in shows). nrand: random
// draws where inputs are sampled.
static inline void fp_gen_inputs(const struct fp_op_info *op, size_t nrand, std::vector<uint64_t> *abc) {
  for (int k = 0; k < 3; k++) abc[k].clear();
  uint64_t seed = 0x5eed0000u + (uint64_t)op->kind * 7919u + (uint64_t)op->bf16;
  switch (op->kind) {
    case FP_S1:
    case FP_I16:
      for (uint64_t i = 0; i < 65536; i++) abc[0].push_back(i);
      break;
    case FP_P1:
      for (uint64_t i = 0; i < 65536; i++) abc[0].push_back(i | ((i * 0x9e37u + 0x1234u) & 0xffffu) << 16);
      break;
    case FP_S2:
    case FP_S3:
      fp_gen_scalars(op->bf16, op->kind == FP_S2 ? 2 : 3, nrand, seed, abc);
      break;
    case FP_P2:
    case FP_P3: {
      int n = op->kind == FP_P2 ? 2 : 3;
      std::vector<uint64_t> lo[3], hi[3];
      fp_gen_scalars(op->bf16, n, nrand, seed, lo);
      fp_gen_scalars(op->bf16, n, nrand, seed + 1, hi);
      size_t m = lo[0].size();
      for (size_t i = 0; i < m; i++) {
        size_t j = (i * 2654435761u + 12345u) % m; /* the other lane: another draw */
        for (int k = 0; k < n; k++) abc[k].push_back(lo[k][i] | hi[k][j] << 16);
      }
      break;
    }
    case FP_I32: fp_gen_ints(32, nrand, seed, abc); break;
    case FP_I64: fp_gen_ints(64, nrand, seed, abc); break;
    case FP_F32: fp_gen_floats(1, nrand, seed, abc); break;
    case FP_F32x2: fp_gen_floats(2, nrand, seed, abc); break;
    case FP_F64: fp_gen_doubles(nrand, seed, abc); break;
  }
  for (int k = 1; k < 3; k++) abc[k].resize(abc[0].size(), 0);
}
#endif

#endif
