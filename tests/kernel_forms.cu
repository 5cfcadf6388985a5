/* tests/kernel_forms.cu — the ways a .cu writes its kernels, launches and
 * variables, each as ncclsim-nvcc rewrites it (sim/nvcc/parse.c) and run:
 * kernels with nameless parameters, default arguments (left out at the
 * launch), array pointers; template kernels with nameless,
 * template-template and pack parameters, explicit arguments (some, none,
 * with commas and brackets), character arguments that need escaping in
 * the kernel's name; overloaded kernels; __launch_bounds__ whose
 * arguments hold commas and parentheses; launches through pointers and
 * members, spread over lines; __device__, __constant__ and __shared__
 * variables in namespaces (an anonymous one too), declared extern first, a
 * struct defined in a __shared__ declaration; loops of each kind in device
 * code and device lambdas; a printf of the program's own; kernels, plain
 * and templated, declared before their definitions and launched between
 * (clang found the declaration at odds with the definition as the driver
 * read it, an error of the prelude's force_cuda_host_device pragma, and
 * the driver refused the file). Built by ncclsim-nvcc (tests/kernel.mk). */
#include "kernel_test.h"

#include <cstdio>

/* ---- kernels: parameters ---- */

__global__ void set(int *p, int v) { p[0] = v; }

/* a nameless parameter, a pointer to arrays, defaults with parentheses,
 * brackets and a template's commas */
template <int A, int B>
struct mul {
  static constexpr int value = A * B;
};
__global__ void params(int *p, int, int (*rows)[4], int n = sizeof(int[2]) * (1 + 1), int m = mul<3, 5>::value) {
  p[0] = n;
  p[1] = m;
  p[2] = rows[1][2];
}

static void test_params(void **state) {
  (void)state;
  int *p, (*rows)[4], h[3], hr[2][4] = {{0, 1, 2, 3}, {4, 5, 6, 7}};
  assert_int_equal(cudaMalloc(&p, sizeof h), cudaSuccess);
  assert_int_equal(cudaMalloc(&rows, sizeof hr), cudaSuccess);
  cudaMemcpy(rows, hr, sizeof hr, cudaMemcpyHostToDevice);
  params<<<1, 1>>>(p, 0, rows); /* both defaults */
  assert_int_equal(launched(), cudaSuccess);
  assert_int_equal(cudaMemcpy(h, p, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(h[0], 16);
  assert_int_equal(h[1], 15);
  assert_int_equal(h[2], 6);
  params<<<1, 1>>>(p, 0, rows, 3); /* one */
  assert_int_equal(cudaMemcpy(h, p, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(h[0], 3);
  assert_int_equal(h[1], 15);
  /* through a pointer */
  void (*fp)(int *, int) = set;
  fp<<<1, 1>>>(p, 42);
  assert_int_equal(launched(), cudaSuccess);
  assert_int_equal(cudaMemcpy(h, p, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(h[0], 42);
  cudaFree(p), cudaFree(rows);
}

/* ---- template kernels ---- */

template <class, int N> /* a nameless parameter: the kernel cannot name itself */
__global__ void nameless(int *p) {
  p[0] = N;
}

template <class T>
struct box {
  __device__ T get() const { return (T)7; }
};
template <template <class> class Box, class T>
__global__ void boxed(T *p) {
  Box<T> b;
  p[0] = b.get();
}

template <class... Ts>
__global__ void sum(long long *out, Ts... ts) {
  *out = (0 + ... + (long long)ts);
}

template <char C>
__global__ void put_char(char *p, int at) {
  p[at] = C;
}

__device__ int touched;
template <class T = int>
__global__ void no_args() {
  touched = (int)sizeof(T);
}

static void test_templates(void **state) {
  (void)state;
  int *p, h;
  assert_int_equal(cudaMalloc(&p, sizeof(long long)), cudaSuccess);
  nameless<float, 9><<<1, 1>>>(p);
  assert_int_equal(launched(), cudaSuccess);
  assert_int_equal(cudaMemcpy(&h, p, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(h, 9);
  boxed<box><<<1, 1>>>(p); /* T deduced */
  assert_int_equal(cudaMemcpy(&h, p, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(h, 7);
  long long s;
  sum<<<1, 1>>>((long long *)p, 1, 2ll, 3u, (short)4);
  assert_int_equal(cudaMemcpy(&s, p, sizeof s, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_true(s == 10);
  char *c, hc[3];
  assert_int_equal(cudaMalloc(&c, sizeof hc), cudaSuccess);
  put_char<'"'><<<1, 1>>>(c, 0); /* quote and backslash in the kernel's name */
  put_char<'\\'><<<1, 1>>>(c, 1);
  put_char<'x'><<<1, 1>>>(c, 2);
  assert_int_equal(launched(), cudaSuccess);
  assert_int_equal(cudaMemcpy(hc, c, sizeof hc, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(hc[0], '"');
  assert_int_equal(hc[1], '\\');
  assert_int_equal(hc[2], 'x');
  no_args<<<1, 1>>>();
  no_args<double><<<1, 1>>>();
  assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
  assert_int_equal(cudaMemcpyFromSymbol(&h, touched, sizeof h), cudaSuccess);
  assert_int_equal(h, (int)sizeof(double));
  cudaFree(p), cudaFree(c);
}

/* Explicit arguments with commas, '>>', parentheses, brackets and braces
 * in them; none at all (k<>), the parameter's default. */
template <class V>
__global__ void size_of(int *p) {
  p[0] = (int)sizeof(V);
}
template <int N>
__global__ void number(int *p) {
  p[0] = N;
}
/* A kernel named whole (no argument left to deduce) is launched through a
 * pointer to it: its arguments convert to its parameters as a call's do
 * (0 and NULL become pointers), as CUDA's launch converts them. */
template <int N>
__global__ void if_null(int *p, const int *q) {
  p[0] = q == nullptr ? N : -1;
}

struct pair_ll {
  long long a, b;
};
template <class A, class B>
struct two {
  A a;
  B b;
};

static void test_explicit_args(void **state) {
  (void)state;
  int *p, h;
  assert_int_equal(cudaMalloc(&p, sizeof h), cudaSuccess);
  size_of<two<char, two<pair_ll, char>>><<<1, 1>>>(p);
  assert_int_equal(launched(), cudaSuccess);
  assert_int_equal(cudaMemcpy(&h, p, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(h, (int)sizeof(two<char, two<pair_ll, char>>));
  number<sizeof(int[2]) + int{1} + (2 * 3)><<<1, 1>>>(p);
  assert_int_equal(cudaMemcpy(&h, p, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(h, 15);
  if_null<11><<<1, 1>>>(p, 0);
  assert_int_equal(launched(), cudaSuccess);
  assert_int_equal(cudaMemcpy(&h, p, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(h, 11);
  if_null<12><<<1, 1>>>(p, NULL);
  assert_int_equal(cudaMemcpy(&h, p, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(h, 12);
  no_args<><<<1, 1>>>();
  assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
  assert_int_equal(cudaMemcpyFromSymbol(&h, touched, sizeof h), cudaSuccess);
  assert_int_equal(h, (int)sizeof(int));
  cudaFree(p);
}

/* Overloaded kernels: the launch's arguments pick one, as a call's do. */
__global__ void overloaded(int *p) { p[0] = 1; }
__global__ void overloaded(float *p) { p[0] = 2.5f; }
__global__ void overloaded(int *p, int v) { p[0] = v; }

/* Launches through a pointer, dereferenced, and a struct's member. */
struct kernels {
  void (*fn)(int *);
};

static void test_overloads_and_pointers(void **state) {
  (void)state;
  int *pi, hi;
  float *pf, hf;
  assert_int_equal(cudaMalloc(&pi, sizeof hi), cudaSuccess);
  assert_int_equal(cudaMalloc(&pf, sizeof hf), cudaSuccess);
  overloaded<<<1, 1>>>(pi);
  overloaded<<<1, 1>>>(pf);
  assert_int_equal(launched(), cudaSuccess);
  assert_int_equal(cudaMemcpy(&hi, pi, sizeof hi, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(cudaMemcpy(&hf, pf, sizeof hf, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(hi, 1);
  assert_true(hf == 2.5f);
  overloaded<<<1, 1>>>(pi, 6);
  assert_int_equal(cudaMemcpy(&hi, pi, sizeof hi, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(hi, 6);
  void (*fp)(int *) = number<7>;
  (*fp)<<<1, 1>>>(pi);
  assert_int_equal(launched(), cudaSuccess);
  assert_int_equal(cudaMemcpy(&hi, pi, sizeof hi, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(hi, 7);
  kernels k = {number<8>};
  k.fn<<<1, 1>>>(pi);
  assert_int_equal(launched(), cudaSuccess);
  assert_int_equal(cudaMemcpy(&hi, pi, sizeof hi, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(hi, 8);
  cudaFree(pi), cudaFree(pf);
}

/* ---- __launch_bounds__: the kernel's maximum, however written ---- */

__global__ void __launch_bounds__(mul<48, 2>::value, (1)) bounded_tmpl(int *p) { p[threadIdx.x] = 1; }
__global__ void __launch_bounds__((64 + 16), 2, 1) bounded_three(int *p) { p[threadIdx.x] = 1; }

static void test_launch_bounds(void **state) {
  (void)state;
  int *p;
  assert_int_equal(cudaMalloc(&p, 128 * sizeof(int)), cudaSuccess);
  bounded_tmpl<<<1, 96>>>(p);
  assert_int_equal(launched(), cudaSuccess);
  bounded_tmpl<<<1, 97>>>(p);
  assert_int_equal(launched(), cudaErrorInvalidValue);
  bounded_three<<<1, 80>>>(p);
  assert_int_equal(launched(), cudaSuccess);
  bounded_three<<<1, 81>>>(p);
  assert_int_equal(launched(), cudaErrorInvalidValue);
  assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
  cudaFree(p);
}

/* A launch written over several lines keeps the lines after it where they
 * are (__LINE__, diagnostics). */
static void test_launch_lines(void **state) {
  (void)state;
  int *p, h;
  assert_int_equal(cudaMalloc(&p, sizeof h), cudaSuccess);
  const int before = __LINE__;
  set<<<1,
        1>>>(p,
             43);
  const int after = __LINE__;
  assert_int_equal(after - before, 4);
  assert_int_equal(launched(), cudaSuccess);
  assert_int_equal(cudaMemcpy(&h, p, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(h, 43);
  cudaFree(p);
}

/* ---- variables ---- */

extern __device__ int later; /* declared here, defined below */
namespace inner {
__device__ int counter;
__constant__ int factor = 3;
__shared__ int ns_sum;
} // namespace inner
namespace {
namespace in_anonymous {
__shared__ int blocks_seen;
}
} // namespace

__global__ void variables(int *out) {
  __shared__ struct {
    int a;
    int b[2];
  } pair;
  __shared__ int
      spread[4];
  if (threadIdx.x == 0) {
    pair.a = 5, pair.b[1] = 7;
    inner::ns_sum = 0;
    in_anonymous::blocks_seen = (int)blockIdx.x + 100;
  }
  __syncthreads();
  spread[threadIdx.x] = (int)threadIdx.x;
  atomicAdd(&inner::ns_sum, (int)threadIdx.x);
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicAdd(&inner::counter, inner::factor * later);
    out[0] = pair.a * 10 + pair.b[1];
    out[1] = spread[3] + spread[2];
    out[2] = inner::ns_sum;
    out[3 + blockIdx.x] = in_anonymous::blocks_seen;
  }
}

__device__ int later = 4;

static void test_variables(void **state) {
  (void)state;
  int *out, h[5], c;
  assert_int_equal(cudaMalloc(&out, sizeof h), cudaSuccess);
  variables<<<2, 4>>>(out);
  assert_int_equal(launched(), cudaSuccess);
  assert_int_equal(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(h[0], 57);
  assert_int_equal(h[1], 5);
  assert_int_equal(h[2], 0 + 1 + 2 + 3); /* one instance per block */
  assert_int_equal(h[3], 100);
  assert_int_equal(h[4], 101);
  assert_int_equal(cudaMemcpyFromSymbol(&c, inner::counter, sizeof c), cudaSuccess);
  assert_int_equal(c, 2 * 3 * 4);
  cudaFree(out);
}

/* ---- loops in device code: each kind, each body ---- */

#define STEP(acc, i) acc += (i)

__global__ void loops(int *out, int n) {
  int a = 0, b = 0, c = 0, d = 0, e = 0, f = 0;
  int i = 0;
  do {
    a += i;
  } while (++i < n);
  for (int j = 0; j < n; j++)
    if (j % 2) {
      b += j;
    }
  for (int j = 0; j < n; j++) STEP(c, j);
  int vals[4] = {1, 2, 3, 4};
  for (int v : vals) d += v;
  int k = n;
  while (k-- > 0) e++;
  do f++;
  while (f < 3);
  out[0] = a, out[1] = b, out[2] = c, out[3] = d, out[4] = e, out[5] = f;
}

/* A device lambda from the host, with a loop of its own. */
template <class F>
__global__ void apply(F f, int *out) {
  out[threadIdx.x] = f((int)threadIdx.x);
}

static void test_loops(void **state) {
  (void)state;
  int *out, h[6];
  assert_int_equal(cudaMalloc(&out, sizeof h), cudaSuccess);
  loops<<<1, 1>>>(out, 5);
  assert_int_equal(launched(), cudaSuccess);
  assert_int_equal(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(h[0], 10);
  assert_int_equal(h[1], 1 + 3);
  assert_int_equal(h[2], 10);
  assert_int_equal(h[3], 10);
  assert_int_equal(h[4], 5);
  assert_int_equal(h[5], 3);
  int scale = 3;
  auto times = [=] __device__(int v) {
    int r = 0;
    for (int j = 0; j < scale; j++) r += v;
    return r;
  };
  apply<<<1, 6>>>(times, out);
  assert_int_equal(launched(), cudaSuccess);
  assert_int_equal(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  for (int t = 0; t < 6; t++) assert_int_equal(h[t], 3 * t);
  cudaFree(out);
}

/* ---- printf: the program's own is left alone ---- */

namespace mine {
__device__ int printf(const char *what, int v) { return v * 2 + (what[0] == 'x'); }
} // namespace mine

__global__ void own_printf(int *out) { out[0] = mine::printf("x", 20); }

static void test_own_printf(void **state) {
  (void)state;
  int *out, h;
  assert_int_equal(cudaMalloc(&out, sizeof h), cudaSuccess);
  own_printf<<<1, 1>>>(out);
  assert_int_equal(launched(), cudaSuccess);
  assert_int_equal(cudaMemcpy(&h, out, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(h, 41);
  cudaFree(out);
}

/* ---- kernels declared before they are defined ---- */

__global__ void declared_first(int *p, int v);
template <class T> __global__ void declared_first_t(T *p, T v);

static void test_declared_first(void **state) {
  (void)state;
  int *p, h[2];
  assert_int_equal(cudaMalloc(&p, sizeof h), cudaSuccess);
  declared_first<<<1, 2>>>(p, 5);
  declared_first_t<<<1, 2>>>(p, 100);
  assert_int_equal(launched(), cudaSuccess);
  assert_int_equal(cudaMemcpy(h, p, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(h[0], 105);
  assert_int_equal(h[1], 106);
  cudaFree(p);
}

__global__ void declared_first(int *p, int v) { p[threadIdx.x] = v + (int)threadIdx.x; }
template <class T> __global__ void declared_first_t(T *p, T v) { p[threadIdx.x] += v; }

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_params),        cmocka_unit_test(test_templates),
      cmocka_unit_test(test_explicit_args), cmocka_unit_test(test_overloads_and_pointers),
      cmocka_unit_test(test_launch_bounds), cmocka_unit_test(test_launch_lines),
      cmocka_unit_test(test_variables),     cmocka_unit_test(test_loops),
      cmocka_unit_test(test_own_printf),    cmocka_unit_test(test_declared_first),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
