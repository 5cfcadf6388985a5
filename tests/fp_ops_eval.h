// tests/fp_ops_eval.h — fp_eval(op, a, b, c): the function of
// tests/fp_ops.h's table numbered op, called on raw bits, its result as
// bits (FP_EVAL_NONE where this build leaves it out).
//
// Included after a cuda_fp16.h and cuda_bf16.h, CUDA's or ncclsim's, and
// inside whatever namespace the includer chose for them (ncclsim's are
// put in one where CUDA's are linked into the same program: the classes
// share names). FP_EVAL_DECL qualifies its functions (__device__
// for a GPU); FP_EVAL_HOST_ONLY leaves out the functions CUDA has no host
// code for (D) and those whose host code differs from CUDA's
// documentation (Z).
#ifndef FP_EVAL_DECL
#define FP_EVAL_DECL static inline
#endif
#define FP_EVAL_NONE 0xdeadbeefcafef00dull

FP_EVAL_DECL float fp_f(uint64_t a) {
  uint32_t u = (uint32_t)a;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
FP_EVAL_DECL double fp_d(uint64_t a) {
  double d;
  memcpy(&d, &a, sizeof d);
  return d;
}
FP_EVAL_DECL __half fp_h(uint64_t a) { return __ushort_as_half((unsigned short)a); }
FP_EVAL_DECL __nv_bfloat16 fp_b(uint64_t a) { return __ushort_as_bfloat16((unsigned short)a); }
FP_EVAL_DECL __half2 fp_h2(uint64_t a) { return __halves2half2(fp_h(a), fp_h(a >> 16)); }
FP_EVAL_DECL __nv_bfloat162 fp_b2(uint64_t a) { return __halves2bfloat162(fp_b(a), fp_b(a >> 16)); }

FP_EVAL_DECL uint64_t fp_out(__half x) { return __half_as_ushort(x); }
FP_EVAL_DECL uint64_t fp_out(__nv_bfloat16 x) { return __bfloat16_as_ushort(x); }
FP_EVAL_DECL uint64_t fp_out(__half2 x) { return fp_out(__low2half(x)) | fp_out(__high2half(x)) << 16; }
FP_EVAL_DECL uint64_t fp_out(__nv_bfloat162 x) { return fp_out(__low2bfloat16(x)) | fp_out(__high2bfloat16(x)) << 16; }
FP_EVAL_DECL uint64_t fp_out(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}
FP_EVAL_DECL uint64_t fp_out(float2 x) { return fp_out(x.x) | fp_out(x.y) << 32; }
FP_EVAL_DECL uint64_t fp_out(bool x) { return x ? 1 : 0; }
FP_EVAL_DECL uint64_t fp_out(signed char x) { return (uint64_t)(int64_t)x; }
FP_EVAL_DECL uint64_t fp_out(unsigned char x) { return x; }
FP_EVAL_DECL uint64_t fp_out(short x) { return (uint64_t)(int64_t)x; }
FP_EVAL_DECL uint64_t fp_out(unsigned short x) { return x; }
FP_EVAL_DECL uint64_t fp_out(int x) { return (uint64_t)(int64_t)x; }
FP_EVAL_DECL uint64_t fp_out(unsigned x) { return x; }
FP_EVAL_DECL uint64_t fp_out(long x) { return (uint64_t)x; }
FP_EVAL_DECL uint64_t fp_out(unsigned long x) { return x; }
FP_EVAL_DECL uint64_t fp_out(long long x) { return (uint64_t)x; }
FP_EVAL_DECL uint64_t fp_out(unsigned long long x) { return x; }

// x op= y (0 to 3: + - * /).
template <class T>
FP_EVAL_DECL T fp_opeq(T x, const T y, int which) {
  T &r = which == 0 ? (x += y) : which == 1 ? (x -= y) : which == 2 ? (x *= y) : (x /= y);
  return r;
}
// ++x or --x, x++ or x-- (0: increment): what each returns and leaves.
template <class T>
FP_EVAL_DECL uint64_t fp_incdec(const T x, int dec) {
  T pre = x, post = x;
  T got = dec ? --pre : ++pre;
  T old = dec ? post-- : post++;
  uint64_t r = fp_out(got) | fp_out(old) << 32;
  return fp_out(pre) == fp_out(got) && fp_out(post) == fp_out(got) ? r : ~r;
}

#define FP_EVAL_CASE(id, f, kind, where, expr) FP_EVAL_CASE_##where(id, expr)
#define FP_EVAL_CASE_H(id, expr) \
  case FP_OP_##id:               \
    return fp_out(expr);
#if defined(FP_EVAL_HOST_ONLY)
#define FP_EVAL_CASE_D(id, expr)
#define FP_EVAL_CASE_Z(id, expr)
#else
#define FP_EVAL_CASE_D FP_EVAL_CASE_H
#define FP_EVAL_CASE_Z FP_EVAL_CASE_H
#endif
FP_EVAL_DECL uint64_t fp_eval(int op, uint64_t a, uint64_t b, uint64_t c) {
  (void)a, (void)b, (void)c;
  switch (op) {
    FP_OPS(FP_EVAL_CASE)
    default:
      break;
  }
  return FP_EVAL_NONE;
}
#undef FP_EVAL_CASE
#undef FP_EVAL_CASE_H
#undef FP_EVAL_CASE_D
#undef FP_EVAL_CASE_Z
