/* tests/kernel_builtins.cu — device built-ins on ncclsim: the atomic
 * functions on every type CUDA has them for, libcu++'s atomic_ref and
 * fences, integer and floating-point intrinsics, min/max, fp16 and bf16
 * arithmetic in a kernel, and the inline PTX ncclsim carries out. Each
 * atomic is hit by every thread of several blocks at once, so a lost
 * update shows. Built by ncclsim-nvcc (tests/kernel.mk). */
#include "kernel_test.h"

#include <cuda/atomic>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

struct counters {
  int i_add, i_sub, i_min, i_max, i_and, i_or, i_xor, i_exch, i_cas;
  unsigned u_add, u_inc, u_dec, u_min, u_max;
  unsigned long long ull_add, ull_min, ull_max, ull_or, ull_cas;
  long long ll_min, ll_max;
  float f_add, f_exch;
  double d_add;
  unsigned short us_cas;
  __half h_add;
  __half2 h2_add;
  __nv_bfloat16 b_add;
  __nv_bfloat162 b2_add;
  float2 f2_add;
  float4 f4_add;
  int blk, sys;
};

__global__ void hammer(counters *c) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(&c->i_add, 2);
  atomicSub(&c->i_sub, 1);
  atomicMin(&c->i_min, -t);
  atomicMax(&c->i_max, t);
  atomicAnd(&c->i_and, ~(1 << (t % 31)));
  atomicOr(&c->i_or, 1 << (t % 31));
  atomicXor(&c->i_xor, 1);
  atomicExch(&c->i_exch, 5);
  /* A CAS loop: += 1. Its reads are volatile: a plain one races with the
   * other threads' CAS (ThreadSanitizer says so). */
  volatile int *cas = &c->i_cas;
  int old = *cas;
  while (atomicCAS(&c->i_cas, old, old + 1) != old) old = *cas;
  atomicAdd(&c->u_add, 3u);
  atomicInc(&c->u_inc, 9u);   /* wraps at 9: 0..9 */
  atomicDec(&c->u_dec, 9u);
  atomicMin(&c->u_min, 1000u - t);
  atomicMax(&c->u_max, (unsigned)t);
  atomicAdd(&c->ull_add, 1ull << 33);
  atomicMin(&c->ull_min, 5000ull + t);
  atomicMax(&c->ull_max, 5000ull + t);
  atomicOr(&c->ull_or, 1ull << (t % 64));
  atomicCAS(&c->ull_cas, 0ull, (unsigned long long)t + 1); /* the first one wins */
  atomicMin(&c->ll_min, -1000000000000ll - t);
  atomicMax(&c->ll_max, 1000000000000ll + t);
  atomicAdd(&c->f_add, 0.5f);
  atomicExch(&c->f_exch, 2.5f);
  atomicAdd(&c->d_add, 0.25);
  atomicCAS(&c->us_cas, (unsigned short)0, (unsigned short)7);
  atomicAdd(&c->h_add, __float2half(1.0f));
  atomicAdd(&c->h2_add, __floats2half2_rn(1.0f, 2.0f));
  atomicAdd(&c->b_add, __float2bfloat16(1.0f));
  atomicAdd(&c->b2_add, __floats2bfloat162_rn(1.0f, 2.0f));
  atomicAdd(&c->f2_add, make_float2(1.0f, -1.0f));
  atomicAdd(&c->f4_add, make_float4(1.0f, 2.0f, 3.0f, 4.0f));
  atomicAdd_block(&c->blk, 1);
  atomicAdd_system(&c->sys, 1);
}

static void test_atomics(void **state) {
  (void)state;
  counters init;
  memset(&init, 0, sizeof init);
  init.i_min = 0, init.i_and = -1, init.u_min = 1000000u, init.ull_min = ~0ull, init.ll_min = 0, init.ll_max = 0;
  counters *d;
  assert_int_equal(cudaMalloc(&d, sizeof *d), cudaSuccess);
  assert_int_equal(cudaMemcpy(d, &init, sizeof init, cudaMemcpyHostToDevice), cudaSuccess);
  const int n = 4 * 128; /* threads: powers of two and half-floats stay exact */
  hammer<<<4, 128>>>(d);
  assert_int_equal(launched(), cudaSuccess);
  counters c;
  assert_int_equal(cudaMemcpy(&c, d, sizeof c, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(c.i_add, 2 * n);
  assert_int_equal(c.i_sub, -n);
  assert_int_equal(c.i_min, -(n - 1));
  assert_int_equal(c.i_max, n - 1);
  assert_int_equal(c.i_and, (int)(1u << 31));
  assert_int_equal(c.i_or, 0x7fffffff);
  assert_int_equal(c.i_xor, 0);
  assert_int_equal(c.i_exch, 5);
  assert_int_equal(c.i_cas, n);
  assert_int_equal(c.u_add, 3u * n);
  assert_int_equal(c.u_inc, n % 10);
  assert_int_equal(c.u_dec, (10 - n % 10) % 10);
  assert_int_equal(c.u_min, 1000u - (n - 1));
  assert_int_equal(c.u_max, (unsigned)(n - 1));
  assert_true(c.ull_add == (unsigned long long)n << 33);
  assert_true(c.ull_min == 5000ull);
  assert_true(c.ull_max == 5000ull + n - 1);
  assert_true(c.ull_or == ~0ull);
  assert_true(c.ull_cas >= 1 && c.ull_cas <= (unsigned long long)n);
  assert_true(c.ll_min == -1000000000000ll - (n - 1));
  assert_true(c.ll_max == 1000000000000ll + (n - 1));
  assert_true(c.f_add == 0.5f * n);
  assert_true(c.f_exch == 2.5f);
  assert_true(c.d_add == 0.25 * n);
  assert_int_equal(c.us_cas, 7);
  assert_true(__half2float(c.h_add) == (float)n);
  assert_true(__half2float(c.h2_add.x) == (float)n && __half2float(c.h2_add.y) == 2.0f * n);
  /* bfloat16's 8 bits: 256 + 1 rounds back to 256, where the sum stops */
  assert_true(__bfloat162float(c.b_add) == 256.0f);
  assert_true(__bfloat162float(c.b2_add.x) == 256.0f && __bfloat162float(c.b2_add.y) == 512.0f);
  assert_true(c.f2_add.x == (float)n && c.f2_add.y == -(float)n);
  assert_true(c.f4_add.w == 4.0f * n);
  assert_int_equal(c.blk, n);
  assert_int_equal(c.sys, n);
  cudaFree(d);
}

/* libcu++: atomic_ref with orders and scopes, atomic, fences. */
__global__ void libcu(int *x, unsigned long long *y, float *f) {
  cuda::atomic_ref<int, cuda::thread_scope_device> rx(*x);
  rx.fetch_add(1, cuda::memory_order_relaxed);
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> ry(*y);
  ry.fetch_max(100 + threadIdx.x, cuda::memory_order_acq_rel);
  cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_block);
  cuda::std::atomic_ref<float> rf(*f);
  float old = rf.load(cuda::std::memory_order_acquire);
  while (!rf.compare_exchange_weak(old, old + 1.0f, cuda::memory_order_release, cuda::memory_order_relaxed)) {
  }
}

static void test_libcu(void **state) {
  (void)state;
  int *x;
  unsigned long long *y;
  float *f;
  assert_int_equal(cudaMalloc(&x, 4), cudaSuccess);
  assert_int_equal(cudaMalloc(&y, 8), cudaSuccess);
  assert_int_equal(cudaMalloc(&f, 4), cudaSuccess);
  cudaMemset(x, 0, 4), cudaMemset(y, 0, 8), cudaMemset(f, 0, 4);
  libcu<<<3, 64>>>(x, y, f);
  int hx;
  unsigned long long hy;
  float hf;
  cudaMemcpy(&hx, x, 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(&hy, y, 8, cudaMemcpyDeviceToHost);
  cudaMemcpy(&hf, f, 4, cudaMemcpyDeviceToHost);
  assert_int_equal(hx, 192);
  assert_true(hy == 163);
  assert_true(hf == 192.0f);
  cuda::atomic<int> a(3); /* on the host too */
  assert_int_equal(a.fetch_add(2), 3);
  assert_int_equal(a.load(), 5);
  cudaFree(x), cudaFree(y), cudaFree(f);
}

/* Intrinsics: integer, bits of floats, conversions that saturate. */
__global__ void intrinsics(long long *o) {
  int i = 0;
  o[i++] = __popc(0xf0f0u);
  o[i++] = __popcll(~0ull);
  o[i++] = __clz(1);
  o[i++] = __clz(0);
  o[i++] = __clzll(1ll);
  o[i++] = __ffs(0x10);
  o[i++] = __ffsll(0);
  o[i++] = __brev(1u);
  o[i++] = (long long)(__brevll(1ull) >> 32);
  o[i++] = __byte_perm(0x33221100u, 0x77665544u, 0x4567u);
  o[i++] = __funnelshift_l(0x80000000u, 0x1u, 1);
  o[i++] = __funnelshift_r(0x1u, 0x1u, 1);
  o[i++] = __umulhi(0x80000000u, 4u);
  o[i++] = (long long)__umul64hi(1ull << 63, 4ull);
  o[i++] = __mulhi(-2, 0x40000000);
  o[i++] = __sad(3, 10, 100u);
  o[i++] = __float_as_int(1.0f);
  o[i++] = (long long)(__int_as_float(0x40400000) * 10);
  o[i++] = __float2int_rn(2.5f);
  o[i++] = __float2int_rn(3.5f);
  o[i++] = __float2int_rz(-2.7f);
  o[i++] = __float2int_ru(2.1f);
  o[i++] = __float2int_rd(-2.1f);
  o[i++] = __float2int_rz(1e20f);            /* saturates */
  o[i++] = (long long)__float2uint_rz(-5.0f); /* to 0 */
  o[i++] = min(3, -4);
  o[i++] = max(3u, 4u);
  o[i++] = (long long)(min(2.5, 1.5) * 10);
  o[i++] = (long long)(rsqrtf(4.0f) * 100);
  o[i++] = (long long)(__fdividef(1.0f, 4.0f) * 100);
  o[i++] = (long long)(fmaf(2.0f, 3.0f, 1.0f));
  o[i++] = (long long)(__saturatef(1.5f) * 10);
  o[i++] = (long long)(__saturatef(-1.0f) * 10);
  o[i++] = __double2hiint(1.0);
  o[i++] = (long long)__ldg((const int *)&o[0]) + 0 * i;
}

static void test_intrinsics(void **state) {
  (void)state;
  long long *d, h[64];
  assert_int_equal(cudaMalloc(&d, sizeof h), cudaSuccess);
  intrinsics<<<1, 1>>>(d);
  assert_int_equal(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  const long long want[] = {8, 64, 31, 32, 63, 5, 0, 0x80000000ll, 0x80000000ll, 0x44556677ll, 3, 0x80000000ll,
                            2, 2, -1, 107, 0x3f800000ll, 30, 2, 4, -2, 3, -3, 2147483647ll, 0, -4, 4, 15,
                            50, 25, 7, 10, 0, 0x3ff00000ll, 8};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    if (h[i] != want[i]) fail_msg("intrinsic %zu: %lld, want %lld", i, h[i], want[i]);
  cudaFree(d);
}

/* Half and bfloat16 arithmetic in a kernel. */
__global__ void halves(__half *h, __nv_bfloat16 *b) {
  int t = threadIdx.x;
  __half x = __float2half((float)t), one = __float2half(1.0f);
  h[t] = __hadd(__hmul(x, x), one); /* t*t + 1 */
  __nv_bfloat16 y = __float2bfloat16((float)t);
  b[t] = y * y - __float2bfloat16(1.0f);
}

static void test_half_kernels(void **state) {
  (void)state;
  __half *h;
  __nv_bfloat16 *b;
  assert_int_equal(cudaMalloc(&h, 32 * sizeof(__half)), cudaSuccess);
  assert_int_equal(cudaMalloc(&b, 32 * sizeof(__nv_bfloat16)), cudaSuccess);
  halves<<<1, 16>>>(h, b); /* t*t - 1 exact in bfloat16 below 16 */
  __half hh[32];
  __nv_bfloat16 hb[32];
  cudaMemcpy(hh, h, sizeof hh, cudaMemcpyDeviceToHost);
  cudaMemcpy(hb, b, sizeof hb, cudaMemcpyDeviceToHost);
  for (int t = 0; t < 16; t++) {
    assert_true(__half2float(hh[t]) == (float)(t * t + 1));
    assert_true(__bfloat162float(hb[t]) == (float)(t * t - 1));
  }
  cudaFree(h), cudaFree(b);
}

/* Inline PTX: what NCCL programs write (verifiable.cu's red.global), loads
 * and stores with orders, atomics, fences, special registers. */
__global__ void ptx(unsigned long long *c, int *flag, unsigned *out) {
  asm volatile("red.global.add.u64 [%0],%1;" ::"l"(c), "l"(2ull) : "memory");
  unsigned lane, warp;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  asm("mov.u32 %0, %%warpid;" : "=r"(warp));
  int v;
  asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
  int old;
  asm volatile("atom.global.add.s32 %0, [%1], %2;" : "=r"(old) : "l"(flag + 1), "r"(1) : "memory");
  unsigned prev;
  asm volatile("atom.global.cas.b32 %0, [%1], %2, %3;" : "=r"(prev) : "l"(flag + 2), "r"(0), "r"(9) : "memory");
  asm volatile("st.release.sys.global.u32 [%0+12], %1;" ::"l"(flag), "r"(77u) : "memory");
  asm volatile("fence.acq_rel.gpu;" ::: "memory");
  asm volatile("membar.sys;" ::: "memory");
  float fv;
  asm volatile("ld.volatile.global.f32 %0, [%1];" : "=f"(fv) : "l"(flag + 4));
  unsigned t = threadIdx.x;
  out[blockIdx.x * blockDim.x + t] = (lane == t % 32) + 2 * (warp == t / 32) + 4 * (v == 7) + 8 * (fv == 1.5f);
}

static void test_inline_ptx(void **state) {
  (void)state;
  unsigned long long *c;
  int *flag;
  unsigned *out;
  assert_int_equal(cudaMalloc(&c, 8), cudaSuccess);
  assert_int_equal(cudaMalloc(&flag, 5 * sizeof(int)), cudaSuccess);
  assert_int_equal(cudaMalloc(&out, 128 * sizeof(unsigned)), cudaSuccess);
  cudaMemset(c, 0, 8);
  float one5 = 1.5f;
  int hf[5] = {7, 0, 0, 0, 0};
  memcpy(&hf[4], &one5, 4);
  cudaMemcpy(flag, hf, sizeof hf, cudaMemcpyHostToDevice);
  ptx<<<2, 64>>>(c, flag, out);
  assert_int_equal(launched(), cudaSuccess);
  unsigned long long hc;
  unsigned ho[128];
  cudaMemcpy(&hc, c, 8, cudaMemcpyDeviceToHost);
  cudaMemcpy(hf, flag, sizeof hf, cudaMemcpyDeviceToHost);
  cudaMemcpy(ho, out, sizeof ho, cudaMemcpyDeviceToHost);
  assert_true(hc == 256);
  assert_int_equal(hf[1], 128);
  assert_int_equal(hf[2], 9);
  assert_int_equal(hf[3], 77);
  for (int t = 0; t < 128; t++) assert_int_equal(ho[t], 15);
  cudaFree(c), cudaFree(flag), cudaFree(out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_atomics),      cmocka_unit_test(test_libcu),      cmocka_unit_test(test_intrinsics),
      cmocka_unit_test(test_half_kernels), cmocka_unit_test(test_inline_ptx),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
