/* tests/kernel_ptx.cu — inline PTX on ncclsim, as ncclsim-nvcc carries it
 * out (sim/nvcc/ptx.c into ncclsim_device/ptx.h): red and atom for each
 * operation, on unsigned, signed, 64-bit and floating types, under
 * contention and with memory orders; ld and st with each order, vectors,
 * widths, offsets and immediates; fences and membar; mov from the special
 * registers, from operands and numbers; activemask, nanosleep, bar.sync
 * and trap; and the ways asm statements are written (named operands,
 * several instructions in one, '+' operands, '::' between lists, strings
 * spread over lines). Results are checked against PTX's meaning of each
 * instruction. What the driver refuses is checked by tests/nvcc-check.sh.
 * Built by ncclsim-nvcc (tests/kernel.mk). */
#include "kernel_test.h"

#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"

/* ---- read-modify-write: atom returns the old value, red returns none ---- */

__global__ void rmw_u32(unsigned *m, unsigned *o) {
  asm volatile("atom.global.add.u32 %0, [%1], %2;" : "=r"(o[0]) : "l"(m + 0), "r"(5u) : "memory");
  asm volatile("atom.global.min.u32 %0, [%1], %2;" : "=r"(o[1]) : "l"(m + 1), "r"(3u) : "memory");
  asm volatile("atom.global.max.u32 %0, [%1], %2;" : "=r"(o[2]) : "l"(m + 2), "r"(9u) : "memory");
  asm volatile("atom.global.and.b32 %0, [%1], %2;" : "=r"(o[3]) : "l"(m + 3), "r"(0x0ff0u) : "memory");
  asm volatile("atom.global.or.b32 %0, [%1], %2;" : "=r"(o[4]) : "l"(m + 4), "r"(0x0fu) : "memory");
  asm volatile("atom.global.xor.b32 %0, [%1], %2;" : "=r"(o[5]) : "l"(m + 5), "r"(0xffu) : "memory");
  asm volatile("atom.global.inc.u32 %0, [%1], %2;" : "=r"(o[6]) : "l"(m + 6), "r"(5u) : "memory");
  asm volatile("atom.global.inc.u32 %0, [%1], %2;" : "=r"(o[7]) : "l"(m + 7), "r"(5u) : "memory");
  asm volatile("atom.global.dec.u32 %0, [%1], %2;" : "=r"(o[8]) : "l"(m + 8), "r"(5u) : "memory");
  asm volatile("atom.global.dec.u32 %0, [%1], %2;" : "=r"(o[9]) : "l"(m + 9), "r"(5u) : "memory");
  asm volatile("atom.global.dec.u32 %0, [%1], %2;" : "=r"(o[10]) : "l"(m + 10), "r"(5u) : "memory");
  asm volatile("atom.global.exch.b32 %0, [%1], %2;" : "=r"(o[11]) : "l"(m + 11), "r"(42u) : "memory");
  asm volatile("atom.global.cas.b32 %0, [%1], %2, %3;" : "=r"(o[12]) : "l"(m + 12), "r"(8u), "r"(99u) : "memory");
  asm volatile("atom.global.cas.b32 %0, [%1], %2, %3;" : "=r"(o[13]) : "l"(m + 13), "r"(8u), "r"(99u) : "memory");
  asm volatile("red.global.add.u32 [%0], %1;" ::"l"(m + 14), "r"(4u) : "memory");
  asm volatile("red.global.min.u32 [%0], %1;" ::"l"(m + 15), "r"(2u) : "memory");
  asm volatile("red.global.max.u32 [%0], %1;" ::"l"(m + 16), "r"(20u) : "memory");
  asm volatile("red.global.and.b32 [%0], %1;" ::"l"(m + 17), "r"(0x0fu) : "memory");
  asm volatile("red.global.or.b32 [%0], %1;" ::"l"(m + 18), "r"(0x0fu) : "memory");
  asm volatile("red.global.xor.b32 [%0], %1;" ::"l"(m + 19), "r"(0x0fu) : "memory");
  asm volatile("red.global.inc.u32 [%0], %1;" ::"l"(m + 20), "r"(10u) : "memory");
  asm volatile("red.global.dec.u32 [%0], %1;" ::"l"(m + 21), "r"(10u) : "memory");
}

static void test_rmw_u32(void **state) {
  (void)state;
  /* before, the value after, the old value atom returns (red: none) */
  static const struct {
    unsigned before, after, old;
  } want[22] = {
      {10, 15, 10},         {7, 3, 7},          {7, 9, 7},          {0x1234, 0x0230, 0x1234},
      {0x30, 0x3f, 0x30},   {0x0f, 0xf0, 0x0f}, {5, 0, 5},          /* inc: old >= limit -> 0 */
      {2, 3, 2},            {0, 5, 0},          /* dec: old == 0 -> limit */
      {7, 5, 7},            /* dec: old > limit -> limit */
      {3, 2, 3},            {1, 42, 1},         {8, 99, 8},         /* cas: equal, swapped */
      {7, 7, 7},            /* cas: unequal, kept */
      {1, 5, 0},            {9, 2, 0},          {9, 20, 0},         {0xff, 0x0f, 0},
      {0xf0, 0xff, 0},      {0xff, 0xf0, 0},    {3, 4, 0},          {3, 2, 0},
  };
  unsigned h[22], *m, *o;
  for (int i = 0; i < 22; i++) h[i] = want[i].before;
  assert_int_equal(cudaMalloc(&m, sizeof h), cudaSuccess);
  assert_int_equal(cudaMalloc(&o, sizeof h), cudaSuccess);
  assert_int_equal(cudaMemcpy(m, h, sizeof h, cudaMemcpyHostToDevice), cudaSuccess);
  assert_int_equal(cudaMemset(o, 0, sizeof h), cudaSuccess);
  rmw_u32<<<1, 1>>>(m, o);
  assert_int_equal(launched(), cudaSuccess);
  unsigned ho[22];
  assert_int_equal(cudaMemcpy(h, m, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(cudaMemcpy(ho, o, sizeof ho, cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < 22; i++) {
    assert_int_equal(h[i], want[i].after);
    assert_int_equal(ho[i], want[i].old);
  }
  cudaFree(m), cudaFree(o);
}

/* Signed, 64-bit and floating types: the type's own comparison and width;
 * a float in a .b32 exchange goes by its bits. */
__global__ void rmw_typed(int *s, long long *l, unsigned long long *u, float *f, double *d, int *o32,
                          long long *o64, float *of, double *od) {
  asm volatile("atom.global.min.s32 %0, [%1], %2;" : "=r"(o32[0]) : "l"(s + 0), "r"(3) : "memory");
  asm volatile("atom.global.max.s32 %0, [%1], %2;" : "=r"(o32[1]) : "l"(s + 1), "r"(3) : "memory");
  asm volatile("red.global.add.s32 [%0], -7;" ::"l"(s + 2) : "memory");
  asm volatile("red.global.min.s32 [%0], %1;" ::"l"(s + 3), "r"(-9) : "memory");
  asm volatile("atom.global.add.u64 %0, [%1], %2;" : "=l"(o64[0]) : "l"(u + 0), "l"(1ull << 33) : "memory");
  asm volatile("atom.global.min.s64 %0, [%1], %2;" : "=l"(o64[1]) : "l"(l + 0), "l"(-(1ll << 40)) : "memory");
  asm volatile("atom.global.max.u64 %0, [%1], %2;" : "=l"(o64[2]) : "l"(u + 1), "l"(1ull << 63) : "memory");
  asm volatile("atom.global.exch.b64 %0, [%1], %2;" : "=l"(o64[3]) : "l"(u + 2), "l"(0x123456789abcdefull) : "memory");
  asm volatile("atom.global.cas.b64 %0, [%1], %2, %3;"
               : "=l"(o64[4])
               : "l"(u + 3), "l"(1ull << 50), "l"(7ull)
               : "memory");
  asm volatile("red.global.max.s64 [%0], %1;" ::"l"(l + 1), "l"(-1ll) : "memory");
  asm volatile("atom.global.add.f32 %0, [%1], %2;" : "=f"(of[0]) : "l"(f + 0), "f"(2.25f) : "memory");
  asm volatile("atom.global.exch.b32 %0, [%1], %2;" : "=f"(of[1]) : "l"(f + 1), "f"(-0.5f) : "memory");
  asm volatile("red.global.add.f32 [%0], %1;" ::"l"(f + 2), "f"(0.125f) : "memory");
  asm volatile("atom.global.max.f32 %0, [%1], %2;" : "=f"(of[2]) : "l"(f + 3), "f"(-1.0f) : "memory");
  asm volatile("atom.global.add.f64 %0, [%1], %2;" : "=d"(od[0]) : "l"(d + 0), "d"(0.25) : "memory");
  asm volatile("red.global.add.f64 [%0], %1;" ::"l"(d + 1), "d"(-1.5) : "memory");
}

static void test_rmw_typed(void **state) {
  (void)state;
  int hs[4] = {-5, -5, 10, -2};
  long long hl[2] = {-3, -4};
  unsigned long long hu[4] = {1ull << 40, 5, 1, 1ull << 50};
  float hf[4] = {1.5f, 3.0f, 1.0f, -2.0f};
  double hd[2] = {0.5, 2.0};
  int *s, *o32;
  long long *l, *o64;
  unsigned long long *u;
  float *f, *of;
  double *d, *od;
  assert_int_equal(cudaMalloc(&s, sizeof hs), cudaSuccess);
  assert_int_equal(cudaMalloc(&l, sizeof hl), cudaSuccess);
  assert_int_equal(cudaMalloc(&u, sizeof hu), cudaSuccess);
  assert_int_equal(cudaMalloc(&f, sizeof hf), cudaSuccess);
  assert_int_equal(cudaMalloc(&d, sizeof hd), cudaSuccess);
  assert_int_equal(cudaMalloc(&o32, 2 * sizeof(int)), cudaSuccess);
  assert_int_equal(cudaMalloc(&o64, 5 * sizeof(long long)), cudaSuccess);
  assert_int_equal(cudaMalloc(&of, 3 * sizeof(float)), cudaSuccess);
  assert_int_equal(cudaMalloc(&od, sizeof(double)), cudaSuccess);
  cudaMemcpy(s, hs, sizeof hs, cudaMemcpyHostToDevice);
  cudaMemcpy(l, hl, sizeof hl, cudaMemcpyHostToDevice);
  cudaMemcpy(u, hu, sizeof hu, cudaMemcpyHostToDevice);
  cudaMemcpy(f, hf, sizeof hf, cudaMemcpyHostToDevice);
  cudaMemcpy(d, hd, sizeof hd, cudaMemcpyHostToDevice);
  rmw_typed<<<1, 1>>>(s, l, u, f, d, o32, o64, of, od);
  assert_int_equal(launched(), cudaSuccess);
  int r32[2];
  long long r64[5];
  float rf[3];
  double rd;
  cudaMemcpy(hs, s, sizeof hs, cudaMemcpyDeviceToHost);
  cudaMemcpy(hl, l, sizeof hl, cudaMemcpyDeviceToHost);
  cudaMemcpy(hu, u, sizeof hu, cudaMemcpyDeviceToHost);
  cudaMemcpy(hf, f, sizeof hf, cudaMemcpyDeviceToHost);
  cudaMemcpy(hd, d, sizeof hd, cudaMemcpyDeviceToHost);
  cudaMemcpy(r32, o32, sizeof r32, cudaMemcpyDeviceToHost);
  cudaMemcpy(r64, o64, sizeof r64, cudaMemcpyDeviceToHost);
  cudaMemcpy(rf, of, sizeof rf, cudaMemcpyDeviceToHost);
  assert_int_equal(cudaMemcpy(&rd, od, sizeof rd, cudaMemcpyDeviceToHost), cudaSuccess);
  /* signed: -5 is below 3 (as unsigned it would be above) */
  assert_int_equal(hs[0], -5);
  assert_int_equal(r32[0], -5);
  assert_int_equal(hs[1], 3);
  assert_int_equal(r32[1], -5);
  assert_int_equal(hs[2], 3);
  assert_int_equal(hs[3], -9);
  /* 64-bit: beyond 32 bits, signed below zero, the top bit */
  assert_true(hu[0] == (1ull << 40) + (1ull << 33) && r64[0] == (long long)(1ull << 40));
  assert_true(hl[0] == -(1ll << 40) && r64[1] == -3);
  assert_true(hu[1] == 1ull << 63 && r64[2] == 5);
  assert_true(hu[2] == 0x123456789abcdefull && r64[3] == 1);
  assert_true(hu[3] == 7 && r64[4] == (long long)(1ull << 50));
  assert_true(hl[1] == -1);
  /* floating */
  assert_true(hf[0] == 3.75f && rf[0] == 1.5f);
  assert_true(hf[1] == -0.5f && rf[1] == 3.0f);
  assert_true(hf[2] == 1.125f);
  assert_true(hf[3] == -1.0f && rf[2] == -2.0f);
  assert_true(hd[0] == 0.75 && rd == 0.5);
  assert_true(hd[1] == 0.5);
  cudaFree(s), cudaFree(l), cudaFree(u), cudaFree(f), cudaFree(d);
  cudaFree(o32), cudaFree(o64), cudaFree(of), cudaFree(od);
}

/* Many threads on one word, with each memory order: atomic as a whole
 * (each atom.add sees a different old value, none lost), inc wrapping at
 * its limit as PTX says ((old >= limit) ? 0 : old + 1). */
__global__ void contended(unsigned *c, unsigned *seen, unsigned long long *sum) {
  unsigned old;
  switch (threadIdx.x % 4) {
  case 0: asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(c) : "memory"); break;
  case 1: asm volatile("atom.relaxed.sys.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(c) : "memory"); break;
  case 2: asm volatile("atom.acquire.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(c) : "memory"); break;
  default: asm volatile("atom.release.cta.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(c) : "memory"); break;
  }
  seen[old] = 1;
  asm volatile("red.release.gpu.global.inc.u32 [%0], 99;" ::"l"(c + 1) : "memory");
  asm volatile("red.relaxed.gpu.global.add.u64 [%0], %1;" ::"l"(sum), "l"((unsigned long long)old) : "memory");
}

static void test_contended(void **state) {
  (void)state;
  const unsigned n = 4 * 64;
  unsigned *c, *seen;
  unsigned long long *sum;
  assert_int_equal(cudaMalloc(&c, 2 * sizeof(unsigned)), cudaSuccess);
  assert_int_equal(cudaMalloc(&seen, n * sizeof(unsigned)), cudaSuccess);
  assert_int_equal(cudaMalloc(&sum, sizeof *sum), cudaSuccess);
  cudaMemset(c, 0, 2 * sizeof(unsigned));
  cudaMemset(seen, 0, n * sizeof(unsigned));
  cudaMemset(sum, 0, sizeof *sum);
  contended<<<4, 64>>>(c, seen, sum);
  assert_int_equal(launched(), cudaSuccess);
  unsigned hc[2], hs[4 * 64];
  unsigned long long hsum;
  cudaMemcpy(hc, c, sizeof hc, cudaMemcpyDeviceToHost);
  cudaMemcpy(hs, seen, sizeof hs, cudaMemcpyDeviceToHost);
  assert_int_equal(cudaMemcpy(&hsum, sum, sizeof hsum, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(hc[0], n);
  assert_int_equal(hc[1], n % 100);
  for (unsigned i = 0; i < n; i++) assert_int_equal(hs[i], 1);
  assert_true(hsum == (unsigned long long)n * (n - 1) / 2);
  cudaFree(c), cudaFree(seen), cudaFree(sum);
}

/* ---- loads and stores ---- */

struct node {
  node *next;
  long long value;
};

__global__ void loads(const unsigned char *b, const node *list, long long *o, float *of, double *od) {
  unsigned v32, w[2];
  unsigned long long v64;
  int s32, u8, s8;
  short s16;
  asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(v32) : "l"(b) : "memory");
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1+8];" : "=l"(v64) : "l"(b) : "memory");
  asm volatile("ld.acquire.sys.global.s32 %0, [%1 + 4];" : "=r"(s32) : "l"(b) : "memory");
  asm volatile("ld.global.u8 %0, [%1+16];" : "=r"(u8) : "l"(b));
  asm volatile("ld.global.s8 %0, [%1+16];" : "=r"(s8) : "l"(b));
  asm volatile("ld.global.nc.b16 %0, [%1+18];" : "=h"(s16) : "l"(b));
  asm volatile("ld.global.v2.u32 {%0, %1}, [%2+24];" : "=r"(w[0]), "=r"(w[1]) : "l"(b));
  asm volatile("ld.global.v4.f32 {%0,%1,%2,%3}, [%4+32];" : "=f"(of[0]), "=f"(of[1]), "=f"(of[2]), "=f"(of[3]) : "l"(b));
  asm volatile("ld.global.v2.f64 {%0, %1}, [%2+48];" : "=d"(od[0]), "=d"(od[1]) : "l"(b));
  asm volatile("ld.global.v8.b32 {%0, %1, %2, %3, %4, %5, %6, %7}, [%8+64];"
               : "=f"(of[4]), "=f"(of[5]), "=f"(of[6]), "=f"(of[7]), "=f"(of[8]), "=f"(of[9]), "=f"(of[10]),
                 "=f"(of[11])
               : "l"(b));
  /* a pointer in and out of one '+' operand: the list followed */
  const node *p = list;
  asm volatile("ld.global.u64 %0, [%0];" : "+l"(p));
  asm volatile("ld.global.u64 %0, [%0];" : "+l"(p));
  long long val;
  asm volatile("ld.global.s64 %0, [%1+8];" : "=l"(val) : "l"(p));
  o[0] = v32, o[1] = (long long)v64, o[2] = s32, o[3] = u8, o[4] = s8, o[5] = s16, o[6] = w[0], o[7] = w[1];
  o[8] = val;
}

static void test_loads(void **state) {
  (void)state;
  unsigned char h[96] = {0};
  unsigned v32 = 0xdeadbeef;
  int s32 = -123456;
  unsigned long long v64 = 0x0123456789abcdefull;
  short s16 = -2;
  unsigned w[2] = {11, 22};
  float fv[4] = {1.5f, -2.5f, 3.25f, 4.0f};
  double dv[2] = {0.125, -8.5};
  memcpy(h, &v32, 4), memcpy(h + 4, &s32, 4), memcpy(h + 8, &v64, 8);
  h[16] = 0xf0;
  memcpy(h + 18, &s16, 2), memcpy(h + 24, w, 8), memcpy(h + 32, fv, 16), memcpy(h + 48, dv, 16);
  float fv8[8] = {-1.0f, 0.5f, 7.0f, -0.25f, 9.0f, 1e-3f, -1e9f, 0.0f};
  memcpy(h + 64, fv8, 32);
  unsigned char *b;
  node *list;
  long long *o;
  float *of;
  double *od;
  assert_int_equal(cudaMalloc(&b, sizeof h), cudaSuccess);
  assert_int_equal(cudaMalloc(&list, 3 * sizeof(node)), cudaSuccess);
  assert_int_equal(cudaMalloc(&o, 9 * sizeof(long long)), cudaSuccess);
  assert_int_equal(cudaMalloc(&of, 12 * sizeof(float)), cudaSuccess);
  assert_int_equal(cudaMalloc(&od, 2 * sizeof(double)), cudaSuccess);
  node hl[3] = {{list + 1, 100}, {list + 2, 200}, {NULL, 300}};
  cudaMemcpy(list, hl, sizeof hl, cudaMemcpyHostToDevice);
  cudaMemcpy(b, h, sizeof h, cudaMemcpyHostToDevice);
  loads<<<1, 1>>>(b, list, o, of, od);
  assert_int_equal(launched(), cudaSuccess);
  long long ho[9];
  float hf[12];
  double hd[2];
  cudaMemcpy(ho, o, sizeof ho, cudaMemcpyDeviceToHost);
  cudaMemcpy(hf, of, sizeof hf, cudaMemcpyDeviceToHost);
  assert_int_equal(cudaMemcpy(hd, od, sizeof hd, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_true(ho[0] == 0xdeadbeef);
  assert_true((unsigned long long)ho[1] == v64);
  assert_true(ho[2] == -123456);
  assert_true(ho[3] == 0xf0); /* .u8 zero-extends */
  assert_true(ho[4] == -16);  /* .s8 sign-extends */
  assert_true(ho[5] == -2);
  assert_true(ho[6] == 11 && ho[7] == 22);
  assert_true(ho[8] == 300); /* two hops from the head */
  for (int i = 0; i < 4; i++) assert_true(hf[i] == fv[i]);
  for (int i = 0; i < 8; i++) assert_true(hf[4 + i] == fv8[i]);
  assert_true(hd[0] == 0.125 && hd[1] == -8.5);
  cudaFree(b), cudaFree(list), cudaFree(o), cudaFree(of), cudaFree(od);
}

/* Stores: each order, widths that write only their bytes, immediates
 * (negative, hexadecimal), vectors, offsets either way, named operands,
 * shared memory through a 64-bit address; the keyword spelt __asm. */
__global__ void stores(unsigned char *b, unsigned *out) {
  __shared__ unsigned sh[4];
  unsigned char *mid = b + 64;
  asm volatile("st.volatile.global.u32 [%0], %1;" ::"l"(b), "r"(0xcafef00du) : "memory");
  asm volatile("st.relaxed.gpu.global.u64 [%0+8], %1;" ::"l"(b), "l"(0x1122334455667788ull) : "memory");
  asm volatile("st.release.sys.global.s32 [%0-60], %1;" ::"l"(mid), "r"(-77) : "memory"); /* b + 4 */
  /* Plain (weak) stores: one thread's, as all of them to one address would
   * race (ThreadSanitizer says so). */
  if (threadIdx.x == 0) {
    asm volatile("st.global.u8 [%0+16], %1;" ::"l"(b), "r"(0x1ff) : "memory");
    asm volatile("st.global.b16 [%0+18], %1;" ::"l"(b), "h"((short)-3) : "memory");
    asm volatile("st.global.s32 [%0+20], -7;" ::"l"(b) : "memory");
    asm volatile("st.global.u64 [%0+24], 0x100000000;" ::"l"(b) : "memory");
    asm volatile("st.global.v4.u32 [%0+32], {%1, %2, %3, %4};" ::"l"(b), "r"(1), "r"(2), "r"(3), "r"(4) : "memory");
    asm volatile("st.global.v2.f64 [%0+48], {%1, %2};" ::"l"(b), "d"(2.5), "d"(-0.75) : "memory");
    asm volatile("st.global.v8.b32 [%[base]+64], {%[x], %[x], %[x], %[x], %[y], %[y], %[y], %[y]};"
                 ::[base] "l"(b), [x] "r"(5), [y] "f"(0.5f)
                 : "memory");
    asm volatile("st.global.v2.f32 [%0+96], {%1, -1};" ::"l"(b), "f"(1.25f) : "memory");
    __asm volatile("st.global.u32 [%0+104], 0;" ::"l"(b) : "memory");
  }
  asm volatile("st.shared.u32 [%0], %1;" ::"l"(&sh[threadIdx.x]), "r"(threadIdx.x * 3 + 1) : "memory");
  asm volatile("bar.sync 0;" ::: "memory");
  unsigned other;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(other) : "l"(&sh[(threadIdx.x + 1) % 4]) : "memory");
  out[threadIdx.x] = other;
}

static void test_stores(void **state) {
  (void)state;
  unsigned char h[108];
  memset(h, 0xaa, sizeof h);
  unsigned char *b;
  unsigned *out;
  assert_int_equal(cudaMalloc(&b, sizeof h), cudaSuccess);
  assert_int_equal(cudaMalloc(&out, 4 * sizeof(unsigned)), cudaSuccess);
  cudaMemcpy(b, h, sizeof h, cudaMemcpyHostToDevice);
  stores<<<1, 4>>>(b, out);
  assert_int_equal(launched(), cudaSuccess);
  unsigned ho[4];
  cudaMemcpy(h, b, sizeof h, cudaMemcpyDeviceToHost);
  assert_int_equal(cudaMemcpy(ho, out, sizeof ho, cudaMemcpyDeviceToHost), cudaSuccess);
  unsigned u32;
  int s32;
  unsigned long long u64;
  short s16;
  memcpy(&u32, h, 4), assert_true(u32 == 0xcafef00du);
  memcpy(&s32, h + 4, 4), assert_int_equal(s32, -77);
  memcpy(&u64, h + 8, 8), assert_true(u64 == 0x1122334455667788ull);
  assert_int_equal(h[16], 0xff); /* .u8 keeps the low byte */
  assert_int_equal(h[17], 0xaa); /* and writes no other */
  memcpy(&s16, h + 18, 2), assert_int_equal(s16, -3);
  memcpy(&s32, h + 20, 4), assert_int_equal(s32, -7);
  memcpy(&u64, h + 24, 8), assert_true(u64 == 0x100000000ull);
  unsigned v4[4];
  memcpy(v4, h + 32, 16);
  for (int i = 0; i < 4; i++) assert_int_equal(v4[i], i + 1);
  double d2[2];
  memcpy(d2, h + 48, 16), assert_true(d2[0] == 2.5 && d2[1] == -0.75);
  unsigned v8[8];
  memcpy(v8, h + 64, 32);
  float half = 0.5f;
  unsigned half_bits;
  memcpy(&half_bits, &half, 4);
  for (int i = 0; i < 4; i++) assert_int_equal(v8[i], 5);
  for (int i = 4; i < 8; i++) assert_int_equal(v8[i], half_bits); /* a float operand stored by its bits */
  float f2[2];
  memcpy(f2, h + 96, 8), assert_true(f2[0] == 1.25f && f2[1] == -1.0f);
  memcpy(&u32, h + 104, 4), assert_int_equal(u32, 0);
  for (int t = 0; t < 4; t++) assert_int_equal(ho[t], ((t + 1) % 4) * 3 + 1);
  cudaFree(b), cudaFree(out);
}

/* ---- fences, barriers, and the ways an asm statement is written ---- */

/* Thread 0 publishes a value and a flag with each kind of fence between;
 * after the block's barrier (bar.sync and barrier.sync) every thread reads
 * both, with an acquire load. Several instructions in one statement, in
 * { } with .reg-free bodies, tabs and line breaks as nvcc users write. */
__global__ void publish(unsigned *data, unsigned *flag, unsigned *out) {
  if (threadIdx.x == 0) {
    asm volatile("{\n\t"
                 "st.global.u32 [%0], %2;\n\t"
                 "fence.sc.gpu;\n\t"
                 "membar.gl;\n\t"
                 "fence.acq_rel.sys;\n\t"
                 "membar.cta;\n\t"
                 "st.release.gpu.global.u32 [%1], 1;\n\t"
                 "}"
                 :
                 : "l"(data), "l"(flag), "r"(1234u)
                 : "memory");
  }
  asm volatile("barrier.sync 0;" ::: "memory");
  unsigned f, d;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%2]; fence.sc.cta; membar.sys; ld.global.u32 %1, [%3];"
               : "=r"(f), "=r"(d)
               : "l"(flag), "l"(data)
               : "memory");
  out[threadIdx.x] = f * 10000 + d;
}

static void test_fences(void **state) {
  (void)state;
  unsigned *data, *flag, *out;
  assert_int_equal(cudaMalloc(&data, 4), cudaSuccess);
  assert_int_equal(cudaMalloc(&flag, 4), cudaSuccess);
  assert_int_equal(cudaMalloc(&out, 64 * sizeof(unsigned)), cudaSuccess);
  cudaMemset(data, 0, 4);
  cudaMemset(flag, 0, 4);
  publish<<<1, 64>>>(data, flag, out);
  assert_int_equal(launched(), cudaSuccess);
  unsigned ho[64];
  assert_int_equal(cudaMemcpy(ho, out, sizeof ho, cudaMemcpyDeviceToHost), cudaSuccess);
  for (int t = 0; t < 64; t++) assert_int_equal(ho[t], 10000 + 1234);
  cudaFree(data), cudaFree(flag), cudaFree(out);
}

/* mov from operands, numbers and floating immediates, braces around
 * instructions on one line, an output list followed by '::' (no inputs,
 * clobbers), a template spread over string literals and lines, empty
 * statements, and the keyword spelt __asm__. */
__global__ void moves(unsigned *o, float *of, double *od) {
  unsigned seven, bits, a, b, five, six, fbits;
  unsigned long long addr;
  float one = 1.0f;
  __asm__ __volatile__("mov.u32 %0, 7;" : "=r"(seven));
  asm("{ mov.u32 %0, 5; }" : "=r"(five));
  asm("{ { mov.u32 %0, 6; } }" : "=r"(six));
  /* 0f: an f32's bits, 0d: an f64's; into each type */
  asm("mov.f32 %0, 0f3FC00000;" : "=f"(of[0])); /* 1.5 */
  asm("mov.b32 %0, 0f3F800000;" : "=r"(fbits));
  asm("mov.f64 %0, 0dC004000000000000;" : "=d"(od[0])); /* -2.5 */
  asm("mov.f64 %0, 0F40490FDB;" : "=d"(od[1]));         /* pi as an f32, widened */
  asm volatile("st.global.f32 [%0+4], 0fC1200000;" ::"l"(of) : "memory"); /* -10 */
  asm("mov.b32 %0, %1;" : "=r"(bits) : "f"(one)); /* a float's bits */
  asm("mov.u64 %0, %1;" : "=l"(addr) : "l"(o));   /* a pointer as an address */
  asm volatile("mov.u32 %0, %%laneid;\n"
               "mov.u32 %1, "
               "-1;"
               : "=r"(a), "=r"(b)::"memory");
  asm volatile("" ::: "memory");
  asm volatile(" ; ;" ::: "memory");
  o[0] = seven, o[1] = bits, o[2] = addr == (unsigned long long)(uintptr_t)o, o[3] = a, o[4] = b;
  o[5] = five, o[6] = six, o[7] = fbits;
}

static void test_moves(void **state) {
  (void)state;
  unsigned *o, ho[8];
  float *of, hf[2];
  double *od, hd[2];
  assert_int_equal(cudaMalloc(&o, sizeof ho), cudaSuccess);
  assert_int_equal(cudaMalloc(&of, sizeof hf), cudaSuccess);
  assert_int_equal(cudaMalloc(&od, sizeof hd), cudaSuccess);
  moves<<<1, 1>>>(o, of, od);
  assert_int_equal(launched(), cudaSuccess);
  assert_int_equal(cudaMemcpy(ho, o, sizeof ho, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(cudaMemcpy(hf, of, sizeof hf, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(cudaMemcpy(hd, od, sizeof hd, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(ho[5], 5);
  assert_int_equal(ho[6], 6);
  assert_int_equal(ho[7], 0x3f800000u);
  assert_true(hf[0] == 1.5f && hf[1] == -10.0f);
  assert_true(hd[0] == -2.5 && hd[1] == (double)3.14159274101257324f);
  assert_int_equal(ho[0], 7);
  assert_int_equal(ho[1], 0x3f800000u);
  assert_int_equal(ho[2], 1);
  assert_int_equal(ho[3], 0);
  assert_int_equal(ho[4], 0xffffffffu);
  cudaFree(o), cudaFree(of), cudaFree(od);
}

/* ---- special registers ---- */

__global__ void geometry(unsigned *o) {
  unsigned r[12];
  asm("mov.u32 %0, %%tid.x;" : "=r"(r[0]));
  asm("mov.u32 %0, %%tid.y;" : "=r"(r[1]));
  asm("mov.u32 %0, %%tid.z;" : "=r"(r[2]));
  asm("mov.u32 %0, %%ntid.x;" : "=r"(r[3]));
  asm("mov.u32 %0, %%ntid.y;" : "=r"(r[4]));
  asm("mov.u32 %0, %%ntid.z;" : "=r"(r[5]));
  asm("mov.u32 %0, %%ctaid.x;" : "=r"(r[6]));
  asm("mov.u32 %0, %%ctaid.y;" : "=r"(r[7]));
  asm("mov.u32 %0, %%ctaid.z;" : "=r"(r[8]));
  asm("mov.u32 %0, %%nctaid.x;" : "=r"(r[9]));
  asm("mov.u32 %0, %%nctaid.y;" : "=r"(r[10]));
  asm("mov.u32 %0, %%nctaid.z;" : "=r"(r[11]));
  unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned *mine = o + 12 * (block * blockDim.x * blockDim.y * blockDim.z + thread);
  for (int i = 0; i < 12; i++) mine[i] = r[i];
}

static void test_geometry(void **state) {
  (void)state;
  const dim3 grid(2, 3, 2), block(4, 2, 3);
  const unsigned n = 12 * 24;
  unsigned *o;
  assert_int_equal(cudaMalloc(&o, 12 * n * sizeof(unsigned)), cudaSuccess);
  geometry<<<grid, block>>>(o);
  assert_int_equal(launched(), cudaSuccess);
  unsigned *h = (unsigned *)malloc(12 * n * sizeof(unsigned));
  assert_non_null(h);
  assert_int_equal(cudaMemcpy(h, o, 12 * n * sizeof(unsigned), cudaMemcpyDeviceToHost), cudaSuccess);
  for (unsigned bz = 0; bz < 2; bz++)
    for (unsigned by = 0; by < 3; by++)
      for (unsigned bx = 0; bx < 2; bx++)
        for (unsigned tz = 0; tz < 3; tz++)
          for (unsigned ty = 0; ty < 2; ty++)
            for (unsigned tx = 0; tx < 4; tx++) {
              unsigned b = bx + 2 * (by + 3 * bz), t = tx + 4 * (ty + 2 * tz);
              const unsigned *r = h + 12 * (b * 24 + t);
              const unsigned want[12] = {tx, ty, tz, 4, 2, 3, bx, by, bz, 2, 3, 2};
              for (int i = 0; i < 12; i++) assert_int_equal(r[i], want[i]);
            }
  free(h);
  cudaFree(o);
}

/* The lane's registers: %laneid and the lane masks; %warpid and the SM's
 * (as the device's properties say); activemask of a full and a partial
 * warp; the clocks. */
__global__ void lanes(unsigned *o, unsigned long long *t) {
  unsigned lane, warp, nwarp, sm, nsm, eq, lt, le, gt, ge, active;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  asm("mov.u32 %0, %%warpid;" : "=r"(warp));
  asm("mov.u32 %0, %%nwarpid;" : "=r"(nwarp));
  asm("mov.u32 %0, %%smid;" : "=r"(sm));
  asm("mov.u32 %0, %%nsmid;" : "=r"(nsm));
  asm("mov.u32 %0, %%lanemask_eq;" : "=r"(eq));
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
  asm("mov.u32 %0, %%lanemask_le;" : "=r"(le));
  asm("mov.u32 %0, %%lanemask_gt;" : "=r"(gt));
  asm("mov.u32 %0, %%lanemask_ge;" : "=r"(ge));
  asm volatile("activemask.b32 %0;" : "=r"(active));
  unsigned *r = o + 11 * threadIdx.x;
  r[0] = lane, r[1] = warp, r[2] = nwarp, r[3] = sm, r[4] = nsm, r[5] = eq, r[6] = lt, r[7] = le, r[8] = gt;
  r[9] = ge, r[10] = active;
  if (threadIdx.x == 0) {
    unsigned c32;
    unsigned long long c64, g;
    asm volatile("mov.u32 %0, %%clock;" : "=r"(c32));
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c64));
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
    t[0] = c32, t[1] = c64, t[2] = g;
  }
}

static unsigned long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void test_lanes(void **state) {
  (void)state;
  const unsigned n = 48; /* a full warp and half of one */
  unsigned *o;
  unsigned long long *t;
  assert_int_equal(cudaMalloc(&o, 11 * n * sizeof(unsigned)), cudaSuccess);
  assert_int_equal(cudaMalloc(&t, 3 * sizeof(unsigned long long)), cudaSuccess);
  cudaDeviceProp prop;
  assert_int_equal(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  unsigned long long before = now_ns();
  lanes<<<1, n>>>(o, t);
  assert_int_equal(launched(), cudaSuccess);
  unsigned h[11 * 48];
  unsigned long long ht[3];
  assert_int_equal(cudaMemcpy(h, o, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(cudaMemcpy(ht, t, sizeof ht, cudaMemcpyDeviceToHost), cudaSuccess);
  unsigned long long after = now_ns();
  for (unsigned i = 0; i < n; i++) {
    const unsigned *r = h + 11 * i, l = i % 32;
    assert_int_equal(r[0], l);
    assert_int_equal(r[1], i / 32);
    assert_int_equal(r[2], prop.maxThreadsPerMultiProcessor / prop.warpSize);
    assert_true(r[3] < r[4]);
    assert_int_equal(r[4], prop.multiProcessorCount);
    assert_int_equal(r[5], 1u << l);
    assert_int_equal(r[6], (1u << l) - 1);
    assert_int_equal(r[7], (1u << l) | ((1u << l) - 1));
    assert_int_equal(r[8], ~((1u << l) | ((1u << l) - 1)));
    assert_int_equal(r[9], ~((1u << l) - 1));
    assert_int_equal(r[10], i < 32 ? 0xffffffffu : 0xffffu);
  }
  assert_true(ht[1] != 0);
  /* %globaltimer: nanoseconds of the host's real-time clock */
  assert_true(ht[2] >= before && ht[2] <= after);
  cudaFree(o), cudaFree(t);
}

/* nanosleep lets the block's other threads run (ncclsim's poll): a thread
 * that waits for a flag another thread of its block sets, sleeping between
 * looks, sees it. The wait is bounded: a missing flag fails, never hangs. */
__global__ void sleeper(unsigned *flag, unsigned *seen) {
  if (threadIdx.x == 1) {
    asm volatile("nanosleep.u32 100; st.release.gpu.global.u32 [%0], 1;" ::"l"(flag) : "memory");
    return;
  }
  unsigned f = 0;
  for (int i = 0; i < 100000 && !f; i++)
    asm volatile("nanosleep.u32 %1;\n\tld.acquire.gpu.global.u32 %0, [%2];" : "=r"(f) : "r"(1000), "l"(flag) : "memory");
  *seen = f;
}

static void test_nanosleep(void **state) {
  (void)state;
  unsigned *flag, *seen, hs = 0;
  assert_int_equal(cudaMalloc(&flag, 4), cudaSuccess);
  assert_int_equal(cudaMalloc(&seen, 4), cudaSuccess);
  cudaMemset(flag, 0, 4);
  cudaMemset(seen, 0, 4);
  sleeper<<<1, 2>>>(flag, seen);
  assert_int_equal(launched(), cudaSuccess);
  assert_int_equal(cudaMemcpy(&hs, seen, 4, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(hs, 1);
  cudaFree(flag), cudaFree(seen);
}

/* trap ends the kernel as __trap() does: cudaErrorLaunchFailure, the
 * thread named. A fault ends the process's GPU state, so in a child, forked
 * before the process's first CUDA call (the first test: the simulator's
 * threads do not survive a fork); an alarm ends a child that hangs. */
__global__ void trapping(int *p) {
  if (threadIdx.x == 2) asm volatile("trap;");
  p[threadIdx.x] = 1;
}

static void test_trap(void **state) {
  (void)state;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    alarm(60);
    int *p;
    int ok = cudaMalloc(&p, 4 * sizeof(int)) == cudaSuccess;
    capture c;
    capture_start(&c, 2);
    trapping<<<1, 4>>>(p);
    cudaError_t e = cudaDeviceSynchronize();
    char *err = capture_end(&c);
    ok = ok && e == cudaErrorLaunchFailure && strstr(err, "thread (2,0,0)") && strstr(err, "trap");
    if (!ok) fprintf(stderr, "trap: error %d, stderr: %s\n", (int)e, err);
    free(err);
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
}

/* asm in host code is the host's: left as written (an empty one is a
 * compiler barrier on any host). */
static int host_barrier(int x) {
  asm volatile("" ::: "memory");
  return x + 1;
}

static void test_host_asm(void **state) {
  (void)state;
  assert_int_equal(host_barrier(41), 42);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_trap),      cmocka_unit_test(test_rmw_u32),   cmocka_unit_test(test_rmw_typed),
      cmocka_unit_test(test_contended), cmocka_unit_test(test_loads),     cmocka_unit_test(test_stores),
      cmocka_unit_test(test_fences),    cmocka_unit_test(test_moves),     cmocka_unit_test(test_geometry),
      cmocka_unit_test(test_lanes),     cmocka_unit_test(test_nanosleep), cmocka_unit_test(test_host_asm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
