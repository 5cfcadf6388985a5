/*
 * sim/coll/reduce.c — reduction of one block, per datatype and op.
 *
 * Native types accumulate into a typed scratch block that stays in cache:
 * the first input is copied (or scaled) in, each further input is combined
 * in rank order, and the caller copies the block out. Loops run over
 * restrict pointers in fixed-width strips so that gcc -O2 (whose
 * "very cheap" cost model refuses loops with an unknown trip count)
 * vectorises them.
 *
 * Integer sums, products and scalings wrap (computed in the unsigned type
 * of the same width). ncclAvg on integers is that wrapped sum divided by
 * nranks with C division (truncation towards zero), as NCCL's
 * FuncSumPostDiv; on floats it is PreMulSum by 1/nranks in the type.
 *
 * The narrow floats accumulate in float, rounded back to the type after
 * every step (scaling included): NCCL combines two values of the type at a
 * time and stores the type, so each step rounds once. float8 goes straight
 * from float to the type (NCCL goes through half first; the double rounding
 * can differ in the last bit in rare ties).
 */
#include <string.h>

#include "coll_internal.h"

#define STRIP(T) (64 / sizeof(T))
#define LOOP(T, body)                                                              \
  do {                                                                             \
    size_t i_ = 0;                                                                 \
    for (; i_ + STRIP(T) <= n; i_ += STRIP(T))                                     \
      for (size_t j_ = 0; j_ < STRIP(T); j_++) {                                   \
        size_t i = i_ + j_;                                                        \
        body;                                                                      \
      }                                                                            \
    for (size_t i = i_; i < n; i++) body;                                          \
  } while (0)

#define MAXF(a, b) ((b) > (a) ? (b) : (a))
#define MINF(a, b) ((b) < (a) ? (b) : (a))

/* acc op= in, for type T (U: unsigned type of T's width, for wrapping). */
#define NATIVE_KERNELS(name, T, U)                                                          \
  /* Inputs are users' buffers, which need not be aligned to T. */                        \
  typedef T name##_in __attribute__((aligned(1)));                                          \
  static void name##_sum(T *restrict acc, const name##_in *restrict in, size_t n) {                \
    LOOP(T, acc[i] = (T)((U)acc[i] + (U)in[i]));                                            \
  }                                                                                         \
  static void name##_prod(T *restrict acc, const name##_in *restrict in, size_t n) {               \
    LOOP(T, acc[i] = (T)((U)acc[i] * (U)in[i]));                                            \
  }                                                                                         \
  static void name##_max(T *restrict acc, const name##_in *restrict in, size_t n) {                \
    LOOP(T, acc[i] = MAXF(acc[i], in[i]));                                                  \
  }                                                                                         \
  static void name##_min(T *restrict acc, const name##_in *restrict in, size_t n) {                \
    LOOP(T, acc[i] = MINF(acc[i], in[i]));                                                  \
  }                                                                                         \
  static void name##_scale(T *restrict acc, const name##_in *restrict in, T s, size_t n) {         \
    LOOP(T, acc[i] = (T)((U)in[i] * (U)s));                                                 \
  }                                                                                         \
  static void name##_scaleadd(T *restrict acc, const name##_in *restrict in, T s, size_t n) {      \
    LOOP(T, acc[i] = (T)((U)acc[i] + (U)in[i] * (U)s));                                     \
  }                                                                                         \
  /* The first two inputs in one pass (acc = x op y), sparing a copy. */                    \
  static void name##_first2(red_kind k, T *restrict acc, const name##_in *restrict x, const name##_in *restrict y, \
                            size_t n) {                                                     \
    switch (k) {                                                                            \
    case RED_PROD: LOOP(T, acc[i] = (T)((U)x[i] * (U)y[i])); break;                         \
    case RED_MAX: LOOP(T, acc[i] = MAXF(x[i], y[i])); break;                                \
    case RED_MIN: LOOP(T, acc[i] = MINF(x[i], y[i])); break;                                \
    default: LOOP(T, acc[i] = (T)((U)x[i] + (U)y[i])); break;                               \
    }                                                                                       \
  }                                                                                         \
  /* d is nranks as an int: as T it would wrap (int8 at 128 ranks, 0 at 256). */           \
  static void name##_div(T *restrict acc, int d, size_t n) {                                \
    for (size_t i = 0; i < n; i++) acc[i] = (T)(acc[i] / d);                                \
  }                                                                                         \
  static void name##_block(const red_args *a, size_t n, void *out, void *tmp) {            \
    T *restrict acc = tmp;                                                                  \
    T s;                                                                                    \
    int r = 1;                                                                              \
    if (a->kind == RED_PREMULSUM) {                                                         \
      memcpy(&s, a->scalars, sizeof s);                                                     \
      name##_scale(acc, a->in[0], s, n);                                                    \
    } else if (a->nin >= 2) {                                                               \
      name##_first2(a->kind, acc, a->in[0], a->in[1], n);                                   \
      r = 2;                                                                                \
    } else {                                                                                \
      memcpy(acc, a->in[0], n * sizeof(T));                                                 \
    }                                                                                       \
    for (; r < a->nin; r++) {                                                               \
      const name##_in *in = a->in[r];                                                       \
      switch (a->kind) {                                                                    \
      case RED_SUM:                                                                         \
      case RED_SUMPOSTDIV: name##_sum(acc, in, n); break;                                   \
      case RED_PROD: name##_prod(acc, in, n); break;                                        \
      case RED_MAX: name##_max(acc, in, n); break;                                          \
      case RED_MIN: name##_min(acc, in, n); break;                                          \
      case RED_PREMULSUM:                                                                   \
        memcpy(&s, a->scalars + a->scalar_stride * (size_t)r, sizeof s);                    \
        name##_scaleadd(acc, in, s, n);                                                     \
        break;                                                                              \
      }                                                                                     \
    }                                                                                       \
    if (a->kind == RED_SUMPOSTDIV) name##_div(acc, a->nin, n);                                \
    memcpy(out, acc, n * sizeof(T));                                                        \
  }

NATIVE_KERNELS(i8, int8_t, uint8_t)
NATIVE_KERNELS(u8, uint8_t, uint8_t)
NATIVE_KERNELS(i32, int32_t, uint32_t)
NATIVE_KERNELS(u32, uint32_t, uint32_t)
NATIVE_KERNELS(i64, int64_t, uint64_t)
NATIVE_KERNELS(u64, uint64_t, uint64_t)
NATIVE_KERNELS(f32, float, float)
NATIVE_KERNELS(f64, double, double)

/* The fused kernels: a strip of 64 bytes of every input, reduced in rank
 * order, then stored to every output. An output may alias an input
 * exactly: a strip is stored only once every input's strip is read.
 *
 * The strip is four 16-byte vectors (GCC's vector extension), each its
 * own variable, so that it stays in registers. Held in an array, which
 * the memcpys of a strip in and out made addressable, gcc -O2 kept it on
 * the stack: a 2-input float sum of 512 KiB per input, in L2, alone on a
 * core, ran in 55.6 us against 28.9, max in 52.0 against 36.6 (the
 * collectives' own jobs, bench/coll_roofline: 2-rank allreduce of 1 MiB
 * at 0.39 of the roofline against 0.96).
 *
 * Sum and product compute in the unsigned type of the width (V = U), so
 * that integers wrap as the scalar kernels do; max and min compare in the
 * type itself (V = T) and select by the comparison's mask, bit for bit
 * what MAXF and MINF give, NaNs included (the extension has no select
 * operator in C). */
#define VSEL(m, x, y) ((__typeof__(x))(((m) & (__typeof__(m))(x)) | (~(m) & (__typeof__(m))(y))))
#define VSUM(a, b) ((a) + (b))
#define VPROD(a, b) ((a) * (b))
#define VMAX(a, b) VSEL((b) > (a), b, a)
#define VMIN(a, b) VSEL((b) < (a), b, a)
#define FUSED_OP(name, T, V, op, VOP, SOP)                                                        \
  static void name##_fused_##op(const name##_in *const *in, int nin, name##_out *const *out, int nout, size_t n) { \
    typedef V v_t __attribute__((vector_size(16)));                                               \
    enum { VL = 16 / sizeof(T) };                                                                 \
    size_t i = 0;                                                                                 \
    for (; i + 4 * VL <= n; i += 4 * VL) {                                                        \
      const name##_in *x = in[0] + i;                                                             \
      v_t a0, a1, a2, a3, b;                                                                      \
      memcpy(&a0, x, 16);                                                                         \
      memcpy(&a1, x + VL, 16);                                                                    \
      memcpy(&a2, x + 2 * VL, 16);                                                                \
      memcpy(&a3, x + 3 * VL, 16);                                                                \
      for (int r = 1; r < nin; r++) {                                                             \
        x = in[r] + i;                                                                            \
        memcpy(&b, x, 16);                                                                        \
        a0 = VOP(a0, b);                                                                          \
        memcpy(&b, x + VL, 16);                                                                   \
        a1 = VOP(a1, b);                                                                          \
        memcpy(&b, x + 2 * VL, 16);                                                               \
        a2 = VOP(a2, b);                                                                          \
        memcpy(&b, x + 3 * VL, 16);                                                               \
        a3 = VOP(a3, b);                                                                          \
      }                                                                                           \
      for (int o = 0; o < nout; o++) {                                                            \
        name##_out *y = out[o] + i;                                                               \
        memcpy(y, &a0, 16);                                                                       \
        memcpy(y + VL, &a1, 16);                                                                  \
        memcpy(y + 2 * VL, &a2, 16);                                                              \
        memcpy(y + 3 * VL, &a3, 16);                                                              \
      }                                                                                           \
    }                                                                                             \
    for (; i < n; i++) {                                                                          \
      V v = (V)in[0][i];                                                                          \
      for (int r = 1; r < nin; r++) v = (V)SOP(v, (V)in[r][i]);                                   \
      for (int o = 0; o < nout; o++) out[o][i] = (T)v;                                            \
    }                                                                                             \
  }
#define FUSED(name, T, U)                                                                         \
  /* Outputs may be misaligned for T, as inputs may (a user's buffer at  \
   * any byte offset): the tails store through an aligned(1) type. */     \
  typedef T name##_out __attribute__((aligned(1)));                                               \
  FUSED_OP(name, T, U, sum, VSUM, VSUM)                                                           \
  FUSED_OP(name, T, U, prod, VPROD, VPROD)                                                        \
  FUSED_OP(name, T, T, max, VMAX, MAXF)                                                           \
  FUSED_OP(name, T, T, min, VMIN, MINF)                                                           \
  static bool name##_fused(red_kind k, const void *const *in, int nin, void *const *out, int nout, size_t n) { \
    const name##_in *const *x = (const name##_in *const *)in;                                     \
    name##_out *const *y = (name##_out *const *)out;                                              \
    switch (k) {                                                                                  \
    case RED_SUM: name##_fused_sum(x, nin, y, nout, n); return true;                              \
    case RED_PROD: name##_fused_prod(x, nin, y, nout, n); return true;                            \
    case RED_MAX: name##_fused_max(x, nin, y, nout, n); return true;                              \
    case RED_MIN: name##_fused_min(x, nin, y, nout, n); return true;                              \
    default: return false;                                                                        \
    }                                                                                             \
  }

FUSED(i8, int8_t, uint8_t)
FUSED(u8, uint8_t, uint8_t)
FUSED(i32, int32_t, uint32_t)
FUSED(u32, uint32_t, uint32_t)
FUSED(i64, int64_t, uint64_t)
FUSED(u64, uint64_t, uint64_t)
FUSED(f32, float, float)
FUSED(f64, double, double)

bool sim_reduce_fused(const red_args *a, size_t n, void *const *out, int nout) {
  switch (a->dt) {
  case ncclInt8: return i8_fused(a->kind, a->in, a->nin, out, nout, n);
  case ncclUint8: return u8_fused(a->kind, a->in, a->nin, out, nout, n);
  case ncclInt32: return i32_fused(a->kind, a->in, a->nin, out, nout, n);
  case ncclUint32: return u32_fused(a->kind, a->in, a->nin, out, nout, n);
  case ncclInt64: return i64_fused(a->kind, a->in, a->nin, out, nout, n);
  case ncclUint64: return u64_fused(a->kind, a->in, a->nin, out, nout, n);
  case ncclFloat32: return f32_fused(a->kind, a->in, a->nin, out, nout, n);
  case ncclFloat64: return f64_fused(a->kind, a->in, a->nin, out, nout, n);
  default: return false;
  }
}

/* Narrow floats: a float accumulator, each step rounded through the type
 * (element i of `stage` serves as the rounding scratch). */
static void narrow_block(const red_args *a, size_t n, void *stage, void *tmp) {
  ncclDataType_t dt = a->dt;
  float *acc = tmp;
  float s = 0;
  if (a->kind == RED_PREMULSUM) s = sim_narrow_load(dt, a->scalars, 0);
  for (size_t i = 0; i < n; i++) {
    float v = sim_narrow_load(dt, a->in[0], i);
    acc[i] = a->kind == RED_PREMULSUM ? v * s : v;
  }
  /* Rounds acc[i] to the type, keeping it as float. */
#define ROUND(x) (sim_narrow_store(dt, stage, i, (x)), sim_narrow_load(dt, stage, i))
  if (a->kind == RED_PREMULSUM)
    for (size_t i = 0; i < n; i++) acc[i] = ROUND(acc[i]);
  for (int r = 1; r < a->nin; r++) {
    const void *in = a->in[r];
    if (a->kind == RED_PREMULSUM) s = sim_narrow_load(dt, a->scalars + a->scalar_stride * (size_t)r, 0);
    for (size_t i = 0; i < n; i++) {
      float v = sim_narrow_load(dt, in, i), x;
      switch (a->kind) {
      case RED_PROD: x = acc[i] * v; break;
      case RED_MAX: x = MAXF(acc[i], v); break;
      case RED_MIN: x = MINF(acc[i], v); break;
      case RED_PREMULSUM: x = acc[i] + ROUND(v * s); break;
      default: x = acc[i] + v; break;
      }
      acc[i] = ROUND(x);
    }
  }
#undef ROUND
}

void sim_reduce_block(const red_args *a, size_t n, void *out, void *tmp) {
  switch (a->dt) {
  case ncclInt8: i8_block(a, n, out, tmp); break;
  case ncclUint8: u8_block(a, n, out, tmp); break;
  case ncclInt32: i32_block(a, n, out, tmp); break;
  case ncclUint32: u32_block(a, n, out, tmp); break;
  case ncclInt64: i64_block(a, n, out, tmp); break;
  case ncclUint64: u64_block(a, n, out, tmp); break;
  case ncclFloat32: f32_block(a, n, out, tmp); break;
  case ncclFloat64: f64_block(a, n, out, tmp); break;
  default: {
    /* Round through a staging block after the float accumulator, so that
     * `out` (possibly an input) is written only at the end. */
    unsigned char *stage = (unsigned char *)tmp + ((n * 4 + 63) & ~(size_t)63);
    narrow_block(a, n, stage, tmp);
    float *acc = tmp;
    for (size_t i = 0; i < n; i++) sim_narrow_store(a->dt, stage, i, acc[i]);
    memcpy(out, stage, n * sim_dtype_size(a->dt));
    break;
  }
  }
}

void sim_avg_scalar(ncclDataType_t dt, int nranks, void *out8) {
  memset(out8, 0, 8);
  double inv = 1.0 / nranks;
  if (dt == ncclFloat64) memcpy(out8, &inv, 8);
  else if (dt == ncclFloat32) {
    float f = (float)inv;
    memcpy(out8, &f, 4);
  } else if (sim_dtype_is_narrow(dt)) sim_narrow_store(dt, out8, 0, (float)inv);
}
