#!/bin/sh
# tests/nvcc-check.sh — ncclsim-nvcc as a compiler driver: nvcc's command
# line (version, unknown options, -c/-o, separate compilation and link,
# -x cu, -M dependencies, -Xcompiler, -ccbin), what it refuses at compile
# time (each construct named, with its line), and what it compiles right
# (a nested template's >>>, __CUDA_ARCH__ undefined, diagnostics that name
# the user's file and line). Run by make check from the build directory.
nvcc=${NVCC:-./sim/ncclsim-nvcc}
test -x "$nvcc" || { echo "SKIP: no $nvcc"; exit 77; }
nvcc=$(cd "$(dirname "$nvcc")" && pwd)/$(basename "$nvcc")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/n4c-nvcc.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect_error NAME PATTERN: $tmp/NAME.cu must not compile, and the
# driver's message must match PATTERN (grep -E) and name the line.
expect_error() {
  if "$nvcc" -c -o "$tmp/$1.o" "$tmp/$1.cu" >"$tmp/$1.log" 2>&1; then
    bad "$1 compiled; it must be refused"
  elif grep -Eq "$2" "$tmp/$1.log"; then
    ok "$1 refused: $(grep -E "$2" "$tmp/$1.log" | head -n 1)"
  else
    bad "$1: no message matching '$2' in:"
    cat "$tmp/$1.log"
  fi
}

# --- the command line ---
v=$("$nvcc" --version) || bad "--version failed"
echo "$v" | grep -q 'Cuda compilation tools, release 13.0,' && ok "--version says release 13.0 (what nccl-tests reads)" ||
  bad "--version: $v"
if "$nvcc" --no-such-option x.cu >"$tmp/opt.log" 2>&1; then bad "an unknown option was taken"; else
  grep -q "Unknown option '--no-such-option'" "$tmp/opt.log" && ok "unknown option refused" || { bad "unknown option message"; cat "$tmp/opt.log"; }
fi

cat >"$tmp/a.cu" <<'EOF'
#include <cstdio>
#include <vector>
#include "b.h"
__global__ void twice(int *p) { p[threadIdx.x] = helper(p[threadIdx.x]); }
int main() {
  std::vector<std::vector<std::vector<int>>> nested(1); /* >>> that is no launch */
  int *d, h[4] = {1, 2, 3, 4};
  cudaMalloc(&d, sizeof h);
  cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
  twice<<<1, 4>>>(d);
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
#ifdef __CUDA_ARCH__
  printf("arch %d\n", __CUDA_ARCH__);
#else
  printf("%d %d %d %d no-arch %zu\n", h[0], h[1], h[2], h[3], nested.size());
#endif
  return 0;
}
EOF
cat >"$tmp/b.h" <<'EOF'
__device__ int helper(int x);
EOF
cat >"$tmp/b.cu" <<'EOF'
#include "b.h"
__device__ int helper(int x) { return 2 * x; }
EOF
# separate compilation (-rdc=true, -dc), dependencies, a link by the driver
if (cd "$tmp" && "$nvcc" -rdc=true -MD -c a.cu -o a.o -Xcompiler -Wall,-Wno-unused-variable -gencode arch=compute_90,code=sm_90 -lineinfo &&
    "$nvcc" -dc b.cu -o b.o -O2 && "$nvcc" -o ab a.o b.o -lcudart -lnccl) >"$tmp/ab.log" 2>&1; then
  out=$("$tmp/ab")
  test "$out" = "2 4 6 8 no-arch 1" && ok "separate compilation and link: $out" || bad "ab printed '$out'"
else
  bad "separate compilation failed"
  cat "$tmp/ab.log"
fi
if test -f "$tmp/a.d"; then
  if grep -q "ncclsim-nvcc\." "$tmp/a.d"; then bad "a.d names the driver's temporary files"; cat "$tmp/a.d"; fi
  grep -q "$tmp/b.h\|b.h" "$tmp/a.d" && ok "-MD: a.d names b.h" || { bad "-MD: a.d lacks b.h"; cat "$tmp/a.d"; }
else
  bad "-MD wrote no a.d"
fi
# -x cu on a .cpp file, -ccbin
cp "$tmp/a.cu" "$tmp/c.cpp"
if (cd "$tmp" && "$nvcc" -ccbin g++ -x cu c.cpp b.cu -o c) >"$tmp/c.log" 2>&1 && test "$("$tmp/c")" = "2 4 6 8 no-arch 1"; then
  ok "-x cu and -ccbin"
else
  bad "-x cu"
  cat "$tmp/c.log"
fi

# --- diagnostics name the user's file and line ---
cat >"$tmp/typo.cu" <<'EOF'
__global__ void k(int *p) {
  p[0] = 1;
  undeclared_thing(p);
}
EOF
"$nvcc" -c -o "$tmp/typo.o" "$tmp/typo.cu" >"$tmp/typo.log" 2>&1
grep -q "typo.cu:3:.*undeclared_thing" "$tmp/typo.log" && ok "an error names typo.cu:3" || { bad "typo's diagnostic"; cat "$tmp/typo.log"; }

# --- refused constructs ---
cat >"$tmp/dynpar.cu" <<'EOF'
__global__ void child(int *p) { p[0] = 1; }
__global__ void parent(int *p) {
  child<<<1, 1>>>(p);
}
EOF
expect_error dynpar 'dynpar.cu:3:.*kernel launch in device code.*dynamic parallelism'

cat >"$tmp/macro.cu" <<'EOF'
__global__ void k(int *p) { p[0] = 1; }
#define LAUNCH(p) k<<<1, 1>>>(p)
void f(int *p) {
  LAUNCH(p);
}
EOF
expect_error macro 'macro.cu:4:.*kernel launch written inside a macro'

cat >"$tmp/multimem.cu" <<'EOF'
__global__ void k(float *p, float v) {
  asm volatile("multimem.st.global.f32 [%0], %1;" : : "l"(p), "f"(v) : "memory");
}
EOF
expect_error multimem 'multimem.cu:2:.*multimem.st.global.f32 \[%0\], %1.*no multicast memory'

cat >"$tmp/cpasync.cu" <<'EOF'
__global__ void k(int *p) {
  unsigned s = 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" : : "r"(s), "l"(p));
}
EOF
expect_error cpasync 'cpasync.cu:3:.*cp.async.ca.shared.global'

cat >"$tmp/pred.cu" <<'EOF'
__global__ void k(int *p) {
  asm volatile("@p st.global.u32 [%0], 1;" : : "l"(p));
}
EOF
expect_error pred 'pred.cu:2:.*predicated instruction'

cat >"$tmp/shinit.cu" <<'EOF'
__global__ void k(int *p) {
  __shared__ int x = 3;
  p[0] = x;
}
EOF
expect_error shinit 'shinit.cu:2:.*__shared__ variable x has an initializer'

cat >"$tmp/ld32.cu" <<'EOF'
__global__ void k(int *p) {
  unsigned a = 0;
  int v;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(a));
  p[0] = v;
}
EOF
expect_error ld32 'ld32.cu:4:.*32-bit address'

# --- what nccl-tests writes: printf in a device template instantiated
# twice (one call, reached twice in clang's tree), loops whose bodies end
# at one offset, and an implicit conversion a kernel makes (__half x = 0)
cat >"$tmp/shapes.cu" <<'EOF'
#include <cstdio>
#include <cuda_fp16.h>
template <typename T>
__device__ void say(T v, int n) {
  if (n > 1) std::printf("%d says %d\n", n, (int)v);
}
template <typename T>
__global__ void k(int *out) {
  T zero = 0;
  int s = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) s += i * j;
  out[threadIdx.x] = s + (int)(float)zero;
  say<T>(zero, 2);
}
int main() {
  int *d, h[2];
  cudaMalloc(&d, sizeof h);
  k<__half><<<1, 1>>>(d);
  k<float><<<1, 1>>>(d + 1);
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  std::printf("%d %d\n", h[0], h[1]);
  return 0;
}
EOF
if "$nvcc" -o "$tmp/shapes" "$tmp/shapes.cu" >"$tmp/shapes.log" 2>&1 && "$tmp/shapes" >"$tmp/shapes.out" 2>&1 &&
   printf '2 says 0\n2 says 0\n9 9\n' | cmp -s - "$tmp/shapes.out"; then
  ok "a device template's printf, nested loops, __half zero = 0"
else
  bad "shapes.cu:"; cat "$tmp/shapes.log" "$tmp/shapes.out" 2>/dev/null
fi

echo "$fails failed"
test "$fails" = 0
