/*
 * coll_check.c — one collective run against a host reference.
 *
 * Inputs are small exact values (halves in [-2, 2] for floats, small
 * integers otherwise, never zero) so that every dtype holds them exactly;
 * the reference reduces them in double, wrapping integers in their type.
 * Floating-point results may differ from it by the roundings of the
 * reduction steps: nranks + 1 roundings (scaling included) of at most
 * half an ulp of the largest partial result, so the tolerance is
 * (nranks + 1) * eps(dtype) * max(sum of |terms|, 1).
 */
#include <math.h> /* NAN, INFINITY */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll_check.h"

/* Without libm: the suite links none. */
static double dabs(double x) { return x < 0 ? -x : x; }
static double dmax(double a, double b) { return b > a ? b : a; }
static double dmin(double a, double b) { return b < a ? b : a; }
static double pow2(int e) {
  double r = 1;
  for (; e > 0; e--) r *= 2;
  for (; e < 0; e++) r /= 2;
  return r;
}

/* ---- narrow floats, decoded generically ---- */
typedef struct {
  int ebits, mbits, bias;
  bool fn; /* e4m3: no infinity, only S.1111.111 is NaN */
} fmt;
static const fmt F16 = {5, 10, 15, false}, BF16 = {8, 7, 127, false}, E4M3 = {4, 3, 7, true},
                 E5M2 = {5, 2, 15, false};

static const fmt *fmt_of(ncclDataType_t dt) {
  switch (dt) {
  case ncclFloat16: return &F16;
  case ncclBfloat16: return &BF16;
  case ncclFloat8e4m3: return &E4M3;
  case ncclFloat8e5m2: return &E5M2;
  default: return NULL;
  }
}

static double decode(const fmt *f, uint32_t b) {
  uint32_t emax = (1u << f->ebits) - 1, m = b & ((1u << f->mbits) - 1), e = (b >> f->mbits) & emax;
  double s = (b >> (f->ebits + f->mbits)) & 1 ? -1 : 1;
  if (f->fn ? (e == emax && m == (1u << f->mbits) - 1) : e == emax) return m || f->fn ? NAN : s * INFINITY;
  if (e == 0) return s * ((double)m) * pow2(1 - f->bias - f->mbits);
  return s * ((double)(m | (1u << f->mbits))) * pow2((int)e - f->bias - f->mbits);
}

/* Exact values only: the bit pattern that decodes to v. */
static uint32_t encode_exact(const fmt *f, double v) {
  /* The test uses a few values: remember them (per thread, per format). */
  static _Thread_local struct { const fmt *f; double v; uint32_t b; } memo[32];
  static _Thread_local unsigned nmemo;
  for (unsigned i = 0; i < nmemo; i++)
    if (memo[i].f == f && memo[i].v == v) return memo[i].b;
  uint32_t n = 1u << (1 + f->ebits + f->mbits), b;
  for (b = 0; b < n && decode(f, b) != v; b++) {
  }
  if (b == n) b = 0;
  memo[nmemo % 32].f = f, memo[nmemo % 32].v = v, memo[nmemo % 32].b = b;
  if (nmemo < 32) nmemo++;
  return b;
}

static double load(ncclDataType_t dt, const void *p, size_t i) {
  switch (dt) {
  case ncclInt8: return ((const int8_t *)p)[i];
  case ncclUint8: return ((const uint8_t *)p)[i];
  case ncclInt32: return ((const int32_t *)p)[i];
  case ncclUint32: return ((const uint32_t *)p)[i];
  case ncclInt64: return (double)((const int64_t *)p)[i];
  case ncclUint64: return (double)((const uint64_t *)p)[i];
  case ncclFloat32: return ((const float *)p)[i];
  case ncclFloat64: return ((const double *)p)[i];
  case ncclFloat16:
  case ncclBfloat16: return decode(fmt_of(dt), ((const uint16_t *)p)[i]);
  default: return decode(fmt_of(dt), ((const uint8_t *)p)[i]);
  }
}

void coll_encode(ncclDataType_t dt, double v, void *out) {
  switch (dt) {
  case ncclInt8: *(int8_t *)out = (int8_t)v; break;
  case ncclUint8: *(uint8_t *)out = (uint8_t)v; break;
  case ncclInt32: *(int32_t *)out = (int32_t)v; break;
  case ncclUint32: *(uint32_t *)out = (uint32_t)v; break;
  case ncclInt64: *(int64_t *)out = (int64_t)v; break;
  case ncclUint64: *(uint64_t *)out = (uint64_t)v; break;
  case ncclFloat32: *(float *)out = (float)v; break;
  case ncclFloat64: *(double *)out = v; break;
  case ncclFloat16:
  case ncclBfloat16: *(uint16_t *)out = (uint16_t)encode_exact(fmt_of(dt), v); break;
  default: *(uint8_t *)out = (uint8_t)encode_exact(fmt_of(dt), v); break;
  }
}

static bool is_float(ncclDataType_t dt) { return dt >= ncclFloat16; }

static double eps_of(ncclDataType_t dt) {
  switch (dt) {
  case ncclFloat16: return (1) * pow2(-10);
  case ncclBfloat16: return (1) * pow2(-7);
  case ncclFloat8e4m3: return (1) * pow2(-3);
  case ncclFloat8e5m2: return (1) * pow2(-2);
  case ncclFloat32: return (1) * pow2(-23);
  case ncclFloat64: return (1) * pow2(-52);
  default: return 0;
  }
}

/* Input element i of rank r: exact in every dtype, never zero. Over the
 * ranks k steps by 3 mod 8, visiting all 8 entries in a fixed cyclic order.
 * A float product uses `fp`, whose entries multiply to 1 over a cycle and
 * whose partial products in rank order stay within [1/4, 4]: with `fl`
 * (2.25 per cycle) float16 overflowed past 112 ranks, and the result then
 * depends on the order of the reduction. */
static double value(ncclDataType_t dt, int op_class, int r, size_t i) {
  static const double fl[8] = {-2, -1.5, -1, -0.5, 0.5, 1, 1.5, 2};
  static const double fp[8] = {-2, -1, -0.5, 0.5, 1, 2, -1, 1};
  static const double si[8] = {-4, -3, -2, -1, 1, 2, 3, 4};
  unsigned k = (unsigned)((i * 5 + (size_t)r * 3 + i / 11) % 8);
  if (is_float(dt)) return op_class == ncclProd ? fp[k] : fl[k];
  if (dt == ncclUint8 || dt == ncclUint32 || dt == ncclUint64) return k + 1;
  return si[k];
}

/* Wraps an integer result into dt, as two's complement of its width. */
static double wrap(ncclDataType_t dt, double v) {
  int64_t x = (int64_t)v;
  switch (dt) {
  case ncclInt8: return (int8_t)(uint8_t)x;
  case ncclUint8: return (uint8_t)x;
  case ncclInt32: return (int32_t)(uint32_t)x;
  case ncclUint32: return (uint32_t)x;
  default: return v;
  }
}

/* Reduction over ranks of value(dt, op, r, idx); *mag gets the magnitude the
 * tolerance scales with. */
static double reference(const coll_run *run, int nranks, size_t idx, double *mag) {
  ncclDataType_t dt = run->dt;
  double acc = 0, sabs = 0;
  int64_t iacc = 0;
  uint64_t uacc = 1;
  for (int r = 0; r < nranks; r++) {
    double v = value(dt, run->op_class, r, idx);
    switch (run->op_class) {
    case ncclProd:
      acc = r ? acc * v : v;
      uacc *= (uint64_t)(int64_t)v;
      break;
    case ncclMax: acc = r ? dmax(acc, v) : v; break;
    case ncclMin: acc = r ? dmin(acc, v) : v; break;
    case ncclAvg: acc += v / nranks; iacc += (int64_t)v; break;
    case ncclSum: acc += v; break;
    default: acc += v * run->scalars[r]; iacc += (int64_t)v * (int64_t)run->scalars[r]; break;
    }
    sabs += dabs(v * (run->op_class >= ncclAvg && run->op_class != ncclAvg ? run->scalars[r] : 1));
  }
  *mag = dmax(dmax(sabs, dabs(acc)), 1);
  if (is_float(dt)) return acc;
  if (run->op_class == ncclProd) return wrap(dt, dt == ncclUint64 ? (double)uacc : (double)(int64_t)uacc);
  if (run->op_class == ncclAvg) {
    double s = wrap(dt, (double)iacc);
    return (double)((int64_t)s / nranks);
  }
  if (run->op_class > ncclAvg) return wrap(dt, (double)iacc);
  return wrap(dt, acc);
}

size_t coll_compare(const coll_run *run, int n, int me, const void *out, size_t rcount, char *why, size_t len) {
  size_t c = run->count;
  int root = run->root;
  double eps = eps_of(run->dt);
  for (size_t j = 0; j < rcount; j++) {
    double want, mag = 1, got = load(run->dt, out, j);
    size_t b = j / (c ? c : 1), jj = j % (c ? c : 1);
    switch (run->kind) {
    case K_ALLREDUCE:
    case K_REDUCE: want = reference(run, n, j, &mag); break;
    case K_REDUCESCATTER: want = reference(run, n, (size_t)me * c + j, &mag); break;
    case K_BROADCAST: want = value(run->dt, run->op_class, root, j); break;
    case K_ALLGATHER:
    case K_GATHER: want = value(run->dt, run->op_class, (int)b, jj); break;
    case K_ALLTOALL: want = value(run->dt, run->op_class, (int)b, (size_t)me * c + jj); break;
    default: want = value(run->dt, run->op_class, root, (size_t)me * c + j); break;
    }
    double tol = (n + 1) * eps * mag;
    if (!(dabs(got - want) <= tol)) {
      snprintf(why, len, "element %zu is %g, expected %g (tolerance %g)", j, got, want, tol);
      return j;
    }
  }
  return SIZE_MAX;
}

/* The checker's own test: a result that passed, corrupted at its first and
 * its last element, must be rejected at that element. Integers get one bit
 * flipped (their tolerance is 0); float32/float64 get off by one; the
 * narrow floats, whose tolerance can exceed 1 at 8 ranks, get NaN. */
static bool selftest(case_ctx_t *ctx, const coll_run *run, int n, int me, unsigned char *out, size_t rcount) {
  size_t es = n4c_dtype_size(run->dt), at[2] = {0, rcount - 1};
  char why[256];
  for (int k = 0; k < 2; k++) {
    unsigned char *e = out + at[k] * es, saved[8];
    memcpy(saved, e, es);
    if (!is_float(run->dt)) e[0] ^= 1;
    else if (run->dt == ncclFloat32 || run->dt == ncclFloat64) coll_encode(run->dt, load(run->dt, e, 0) + 1, e);
    else memset(e, 0xff, es);
    size_t bad = coll_compare(run, n, me, out, rcount, why, sizeof why);
    memcpy(e, saved, es);
    if (!CASE_EXPECT(ctx, bad == at[k], "checker self-test: %s result corrupted at element %zu %s",
                     n4c_dtype_name(run->dt), at[k], bad == SIZE_MAX ? "was accepted" : "was reported elsewhere"))
      return false;
  }
  ctx_note(ctx, "checker self-test: corrupted %s results rejected", n4c_dtype_name(run->dt));
  return true;
}

#ifndef NCCLSIM
/* Real NCCL (seen on 2.30.7, H100) refuses, with ncclInvalidArgument, an fp8
 * reduction on a one-rank communicator whose op it runs as PreMulSum: ncclAvg
 * (hostToDevRedOp makes fp8 averages a PreMulSum by 1/nranks) and a PreMulSum
 * op. Such a collective goes to ncclLaunchOneRank (src/device/onerank.cu), a
 * host function whose fp8 cases stand under `__CUDA_ARCH__ >= 900`, which is
 * never defined in host code, so they fall to `default: return
 * ncclInvalidArgument`. Sum, min, max and prod copy the buffer instead, and
 * at two ranks and more the kernels do it all. ncclsim computes them. */
static bool onerank_fp8_refused(int n, const coll_run *run, n4c_status_t st) {
  bool fp8 = run->dt == ncclFloat8e4m3 || run->dt == ncclFloat8e5m2;
  bool reduction = run->kind == K_ALLREDUCE || run->kind == K_REDUCE || run->kind == K_REDUCESCATTER;
  return n == 1 && fp8 && reduction && run->op_class >= ncclAvg && st == N4C_ENCCL &&
         n4c_last_nccl_result() == ncclInvalidArgument;
}
#endif

bool coll_check(case_ctx_t *ctx, n4c_comm_t *comm, cudaStream_t stream, const coll_run *run) {
  int n = ctx->nranks, me = ctx->rank, root = run->root;
  size_t c = run->count, es = n4c_dtype_size(run->dt);
  /* Elements of each side. */
  size_t scount = c, rcount = c;
  switch (run->kind) {
  case K_ALLGATHER: rcount = n * c; break;
  case K_REDUCESCATTER: scount = n * c; break;
  case K_ALLTOALL: scount = rcount = n * c; break;
  case K_GATHER: rcount = n * c; break;
  case K_SCATTER: scount = n * c; break;
  default: break;
  }
  size_t cap = (scount > rcount ? scount : rcount) * es + 64;
  void *dsend, *drecv;
  cudaError_t e;
  /* Freed here, not at the end of the case: a case makes hundreds. */
  dsend = drecv = NULL;
  if ((e = cudaMalloc(&dsend, cap)) != cudaSuccess || (e = cudaMalloc(&drecv, cap)) != cudaSuccess) {
    cudaFree(dsend);
    return CASE_EXPECT(ctx, false, "cudaMalloc of %zu bytes: %s", cap, cudaGetErrorName(e));
  }
  unsigned char *h = malloc(cap), *hs = malloc(cap);
  if (!CASE_EXPECT(ctx, h && hs, "malloc of %zu bytes failed", cap)) {
    free(h);
    free(hs);
    cudaFree(dsend);
    cudaFree(drecv);
    return false;
  }
  /* Where the send data lives in place (offset into recv, in elements). */
  size_t inoff = 0;
  bool inplace = run->inplace;
  switch (run->kind) {
  case K_ALLGATHER: inoff = (size_t)me * c; break;
  case K_GATHER: inoff = (size_t)me * c; inplace = inplace && me == root; break;
  case K_REDUCESCATTER: inoff = 0; break;
  case K_REDUCE: inplace = inplace && me == root; break;
  case K_SCATTER: inplace = inplace && me == root; break;
  default: break;
  }
  for (size_t i = 0; i < scount; i++) coll_encode(run->dt, value(run->dt, run->op_class, me, i), hs + i * es);
  memset(h, 0xff, cap); /* poison: NaN or -1 */
  if (inplace) memcpy(h + inoff * es, hs, scount * es);
  if ((e = cudaMemcpy(drecv, h, cap, cudaMemcpyHostToDevice)) == cudaSuccess && !inplace)
    e = cudaMemcpy(dsend, hs, scount * es, cudaMemcpyHostToDevice);
  bool ok = CASE_EXPECT(ctx, e == cudaSuccess, "cudaMemcpy: %s", cudaGetErrorName(e));
  /* Buffers as the API takes them. */
  unsigned char *rp = drecv, *sp = inplace ? (unsigned char *)drecv + inoff * es : dsend;
  if (inplace && run->kind == K_REDUCESCATTER) {
    sp = drecv;
    rp = (unsigned char *)drecv + (size_t)me * c * es;
  }
  if (inplace && run->kind == K_SCATTER) rp = (unsigned char *)drecv + (size_t)me * c * es;
  n4c_buffer_t sb = n4c_buffer(sp, scount, run->dt, ctx->device), rb = n4c_buffer(rp, rcount, run->dt, ctx->device);
  n4c_status_t st = N4C_OK;
  if (ok) {
    switch (run->kind) {
    case K_ALLREDUCE: st = n4c_comm_allreduce(comm, &sb, &rb, run->op, stream); break;
    case K_BROADCAST: st = n4c_comm_broadcast(comm, inplace ? NULL : &sb, &rb, root, stream); break;
    case K_REDUCE: st = n4c_comm_reduce(comm, &sb, me == root ? &rb : NULL, run->op, root, stream); break;
    case K_ALLGATHER: st = n4c_comm_allgather(comm, &sb, &rb, stream); break;
    case K_REDUCESCATTER: st = n4c_comm_reduce_scatter(comm, &sb, &rb, run->op, stream); break;
    case K_ALLTOALL: st = n4c_comm_alltoall(comm, &sb, &rb, stream); break;
    case K_GATHER: st = n4c_comm_gather(comm, &sb, me == root ? &rb : NULL, root, stream); break;
    case K_SCATTER: st = n4c_comm_scatter(comm, me == root ? &sb : NULL, &rb, root, stream); break;
    }
#ifndef NCCLSIM
    if (onerank_fp8_refused(n, run, st)) {
      case_divergence(ctx, "at one rank real NCCL refuses fp8 reductions that it runs as PreMulSum (avg, "
                      "PreMulSum ops) with ncclInvalidArgument: ncclLaunchOneRank's fp8 cases are compiled "
                      "out of host code (__CUDA_ARCH__ >= 900); seen on NCCL 2.30.7. ncclsim computes them");
      free(h);
      free(hs);
      cudaFree(dsend);
      cudaFree(drecv);
      return true;
    }
#endif
    ok = CASE_EXPECT(ctx, st == N4C_OK, "collective %d on %s count %zu: %s", (int)run->kind,
                     n4c_dtype_name(run->dt), c, n4c_last_error_message());
  }
  if (ok && (e = cudaStreamSynchronize(stream)) != cudaSuccess)
    ok = CASE_EXPECT(ctx, false, "cudaStreamSynchronize: %s", cudaGetErrorName(e));
  size_t rbytes = (size_t)((unsigned char *)rp - (unsigned char *)drecv) + rcount * es;
  if (ok && (e = cudaMemcpy(h, drecv, rbytes, cudaMemcpyDeviceToHost)) != cudaSuccess)
    ok = CASE_EXPECT(ctx, false, "cudaMemcpy back: %s", cudaGetErrorName(e));
  const unsigned char *out = h + (rp - (unsigned char *)drecv);
  bool check = ok && !((run->kind == K_REDUCE || run->kind == K_GATHER) && me != root);
  char why[256];
  if (check && coll_compare(run, n, me, out, rcount, why, sizeof why) != SIZE_MAX)
    ok = CASE_EXPECT(ctx, false, "collective %d, %s, op %d, count %zu, %s place, root %d: %s", (int)run->kind,
                     n4c_dtype_name(run->dt), run->op_class, c, inplace ? "in" : "out of", root, why);
  if (check && ok && run->selftest && rcount)
    ok = selftest(ctx, run, n, me, h + (rp - (unsigned char *)drecv), rcount);
  free(h);
  free(hs);
  cudaFree(dsend);
  cudaFree(drecv);
  return ok;
}
