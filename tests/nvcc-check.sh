#!/bin/sh
# tests/nvcc-check.sh — ncclsim-nvcc as a compiler driver: nvcc's command
# line (version, unknown options, -c/-o, separate compilation and link,
# -x cu, -M dependencies, -Xcompiler, -ccbin; each option as the commands
# -dryrun lists; -lib, -dlink, -shared, -E, -M, -keep; what it refuses),
# what it refuses at compile time (each construct named, with its line:
# every inline PTX form ptx.c refuses, constructs written by macros), and
# what it compiles right (a nested template's >>>, __CUDA_ARCH__
# undefined, diagnostics that name the user's file and line). Run by make
# check from the build directory.
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

# the host flags' macros reach the parse, as the host compiler defines or
# drops them (real nvcc preprocesses with the host compiler): a launch under
# __OPTIMIZE__ (-O2) or under no __EXCEPTIONS (-fno-exceptions) is found
cat >"$tmp/flags.cu" <<'EOF'
#include <cstdio>
__global__ void one(int *p) { *p = 1; }
__global__ void two(int *p) { *p = 2; }
int main() {
  int *d, h = 0;
  cudaMalloc(&d, sizeof h);
#ifdef __OPTIMIZE__
  one<<<1, 1>>>(d);
#endif
#ifndef __EXCEPTIONS
  two<<<1, 1>>>(d);
#endif
  cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
  printf("%d\n", h);
  return 0;
}
EOF
if (cd "$tmp" && "$nvcc" -O2 flags.cu -o flags1 && "$nvcc" -O2 -Xcompiler -fno-exceptions flags.cu -o flags2) >"$tmp/flags.log" 2>&1 &&
  test "$("$tmp/flags1")" = 1 && test "$("$tmp/flags2")" = 2; then
  ok "host flags' macros: -O2 defines __OPTIMIZE__ and -fno-exceptions drops __EXCEPTIONS, for the parse too"
else
  bad "host flags' macros"
  cat "$tmp/flags.log"
fi

# a fatal signal mid-compile: the driver ends its command and removes its
# temporary directory, then dies of the signal (a host compiler that
# never finishes, told by -ccbin, holds it there)
mkdir "$tmp/sigtmp"
cat >"$tmp/slowcc" <<EOF
#!/bin/sh
echo \$\$ >"$tmp/slowcc.pid"
exec sleep 60
EOF
chmod +x "$tmp/slowcc"
TMPDIR="$tmp/sigtmp" "$nvcc" -ccbin "$tmp/slowcc" -c -o "$tmp/sig.o" "$tmp/flags.cu" >"$tmp/sig.log" 2>&1 &
drv=$!
i=0
while ! test -s "$tmp/slowcc.pid" && test $i -lt 600; do sleep 0.1; i=$((i + 1)); done
kill -TERM $drv
wait $drv
st=$?
left=$(ls "$tmp/sigtmp")
if test $st = 143 && test -z "$left" && ! kill -0 "$(cat "$tmp/slowcc.pid")" 2>/dev/null; then
  ok "SIGTERM mid-compile: status 143, its command ended, no temporary directory left"
else
  bad "SIGTERM mid-compile: status $st, left '$left'"
  cat "$tmp/sig.log"
fi
kill "$(cat "$tmp/slowcc.pid")" 2>/dev/null

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


# --- what libclang cannot read: the file, or clang's errors with their
# notes (where a template was instantiated), counted ---
if "$nvcc" -c -o "$tmp/missing.o" "$tmp/missing.cu" >"$tmp/missing.log" 2>&1; then bad "a missing .cu compiled"
else grep -q "ncclsim-nvcc fatal   : libclang could not read $tmp/missing.cu" "$tmp/missing.log" &&
  ok "a missing .cu: libclang could not read it" || { bad "a missing .cu"; cat "$tmp/missing.log"; }; fi
cat >"$tmp/inst.cu" <<'EOF'
template <class T> __device__ T twice(T v) { return v.nope(); }
__global__ void k(int *p) { p[0] = twice(p[0]); undeclared(p); }
EOF
if "$nvcc" -c -o "$tmp/inst.o" "$tmp/inst.cu" >"$tmp/inst.log" 2>&1; then bad "inst.cu compiled"
elif grep -q "inst.cu:1:.*error: member reference base type 'int'" "$tmp/inst.log" &&
     grep -q "inst.cu:2:.*note: in instantiation of function template specialization 'twice<int>'" "$tmp/inst.log" &&
     grep -q "inst.cu:2:.*error: use of undeclared identifier 'undeclared'" "$tmp/inst.log" &&
     grep -q "inst.cu: 2 errors while reading it as CUDA" "$tmp/inst.log"; then
  ok "clang's errors, a template's instantiation note, 2 errors counted"
else bad "inst.cu's diagnostics"; cat "$tmp/inst.log"; fi

# --- each option, as the commands it runs say (-dryrun lists them, as -v
# does, and runs nothing) ---
# cmd_has NAME LOG STRING...: each STRING (fixed) is on one of LOG's '#$' lines
cmd_has() {
  name=$1 log=$2
  shift 2
  for w in "$@"; do
    grep '^#\$ ' "$log" | grep -qF -- "$w" || { bad "$name: no '$w' in the commands:"; cat "$log"; return; }
  done
  ok "$name"
}
printf 'int f() { return X; }\n' >"$tmp/opt.txt"
(cd "$tmp" && NVCC_PREPEND_FLAGS='-DPRE=1' NVCC_APPEND_FLAGS='-DAPP=2' "$nvcc" -dryrun -dc -c -x c++ opt.txt -o opt.o \
  -rdc=false --Werror=cross-execution-space-call -v -forward-unknown-to-host-linker \
  -DX=3 --define-macro=Y -UZ -isystem sys -include pre.h -Iinc --include-path=inc2 -O2 -g -w -Werror all-warnings \
  -Wreorder -std=c++14 -Xcompiler -fno-common,-Wall -forward-unknown-to-host-compiler -fno-strict-aliasing \
  -gencode arch=compute_90,code=sm_90 -lineinfo -m64 -odir . -Xptxas -v --use_fast_math) >"$tmp/optmap.log" 2>&1 ||
  { bad "-dryrun -c failed"; cat "$tmp/optmap.log"; }
cmd_has "host compile options (-D -U -I -isystem -include -O -g -w -Werror -std -Xcompiler, forwarded, -x c++)" \
  "$tmp/optmap.log" "-x c++ -std=c++14" -DPRE=1 -DX=3 -DY -UZ "-isystem sys" "-include pre.h" -Iinc -Iinc2 -O2 " -g" \
  " -w" -Werror -Wreorder -fno-common -Wall -fno-strict-aliasing -DAPP=2 "opt.txt -o opt.o"
grep '^#\$ ' "$tmp/optmap.log" | grep -q -- '-DPRE=1 .*-DX=3 .*-DAPP=2' && ok "NVCC_PREPEND_FLAGS first, NVCC_APPEND_FLAGS last" ||
  { bad "NVCC_*_FLAGS order"; cat "$tmp/optmap.log"; }
test "$(grep '^#\$ ' "$tmp/optmap.log" | grep -o -- ' -Werror' | wc -l)" = 1 &&
  ok "-Werror all-warnings is the host's -Werror, -Werror=KIND (nvcc's own warnings) nothing" ||
  { bad "-Werror"; cat "$tmp/optmap.log"; }
(cd "$tmp" && "$nvcc" -dryrun -c -x c plain.txt) >"$tmp/xc.log" 2>&1
grep -qF -- "#\$ g++ -x c -isystem" "$tmp/xc.log" && ! grep -qF -- "-std=" "$tmp/xc.log" && ok "-x c: compiled as C, no -std" ||
  { bad "-x c"; cat "$tmp/xc.log"; }
if grep -qE -- '-gencode|-lineinfo|-odir|-Xptxas|fast_math|-m64' "$tmp/optmap.log"; then
  bad "GPU code generation options reached the host compiler"; cat "$tmp/optmap.log"
else ok "GPU code generation options taken, with no effect"; fi
test -e "$tmp/opt.o" && bad "-dryrun compiled opt.o" || ok "-dryrun ran nothing"
(cd "$tmp" && "$nvcc" -dryrun -x cu -o prog a.o lib.a libz.so libq.so.1 -L/opt/lib -lm -lcudart -lnccl -lcuda -lcudadevrt \
  -Xlinker -z,now --linker-options=--as-needed -shared -ccbin /usr/bin) >"$tmp/ldmap.log" 2>&1 ||
  { bad "-dryrun link failed"; cat "$tmp/ldmap.log"; }
cmd_has "link options (-L -l -Xlinker -shared, -ccbin a directory, libncclsim last)" "$tmp/ldmap.log" \
  "#\$ /usr/bin/g++ -shared -o prog a.o lib.a libz.so libq.so.1 -L/opt/lib -lm -Wl,-z -Wl,now -Wl,--as-needed" \
  "-lncclsim -pthread"
if grep -qE -- ' -l(cudart|nccl|cuda|cudadevrt)( |$)' "$tmp/ldmap.log"; then bad "-lcudart, -lnccl, -lcuda reached the link"; cat "$tmp/ldmap.log"
else ok "-lcudart -lnccl -lcuda -lcudadevrt are libncclsim's"; fi
test "$(grep -c '^#\$ ' "$tmp/ldmap.log")" = 1 && ok "-x cu leaves objects and libraries to the link" ||
  { bad "-x cu before objects"; cat "$tmp/ldmap.log"; }
gxx=$(command -v g++)
if test -n "$gxx"; then
  (cd "$tmp" && "$nvcc" -dryrun -ccbin "$gxx" -o prog a.o) >"$tmp/ccbin.log" 2>&1
  grep -q "^#\$ $gxx -o prog a.o" "$tmp/ccbin.log" && ok "-ccbin a compiler's path" || { bad "-ccbin $gxx"; cat "$tmp/ccbin.log"; }
fi
# a .cu under -dryrun: libclang reads it (its arguments listed); the host
# compile is listed and not run, no dependencies written
mkdir "$tmp/dry"
(cd "$tmp/dry" && "$nvcc" -dryrun -MD -c ../a.cu && "$nvcc" -dryrun -E ../a.cu) >"$tmp/drycu.log" 2>&1
if grep -q '^#\$ libclang: .*-x cuda .* \.\./a\.cu$' "$tmp/drycu.log" && grep -q '^#\$ g++ .* -MD -c .*a\.cu -o a\.o$' "$tmp/drycu.log" &&
   grep -q '^#\$ g++ .* -E .*a\.cu -o .*/stdout0$' "$tmp/drycu.log" && test -z "$(ls "$tmp/dry")"; then
  ok "-dryrun of a .cu: libclang's reading and the host compile listed, nothing written"
else
  bad "-dryrun of a .cu"; cat "$tmp/drycu.log"; ls "$tmp/dry"
fi
# inputs by suffix, more than one to compile without -o (each to its .o)
(cd "$tmp" && "$nvcc" -dryrun -c s1.cc s2.cpp s3.cxx s4.C s5.c++ s6.c s7.c s8.c s9.c) >"$tmp/suffix.log" 2>&1 ||
  { bad "-dryrun -c of nine inputs failed"; cat "$tmp/suffix.log"; }
n=$(grep -c '^#\$ ' "$tmp/suffix.log")
if test "$n" = 9 && grep -qF -- "-x c++ -std=c++17 -isystem" "$tmp/suffix.log" &&
   test "$(grep -cF -- '-x c++ -std=c++17' "$tmp/suffix.log")" = 5 && grep -qF -- "-c s5.c++ -o s5.o" "$tmp/suffix.log" &&
   test "$(grep -cE -- '-x c -isystem .* -c s[6-9]\.c -o s[6-9]\.o' "$tmp/suffix.log")" = 4; then
  ok "inputs by suffix: .cc .cpp .cxx .C .c++ as C++ (-std), .c as C, each to its .o"
else
  bad "inputs by suffix"; cat "$tmp/suffix.log"
fi

# --- what the command line refuses ---
# expect_fatal NAME MESSAGE ARGS...: the driver fails, printing MESSAGE
expect_fatal() {
  name=$1 msg=$2
  shift 2
  if (cd "$tmp" && "$nvcc" "$@") >"$tmp/fatal.log" 2>&1; then bad "$name: accepted"
  elif grep -qF -- "ncclsim-nvcc fatal   : $msg" "$tmp/fatal.log"; then ok "$name refused: $msg"
  else bad "$name: no '$msg' in:"; cat "$tmp/fatal.log"; fi
}
expect_fatal "no input" "No input files specified; use option --help for more information"
expect_fatal "-c -o with two inputs" "A single input file is required for a non-link phase when an outputfile is specified" \
  -c -o two.o s1.c s2.c
expect_fatal "-o with no value" "Option '-o' expects a value" a.cu -o
expect_fatal "an input of no known kind" "Don't know what to do with 'notes.txt'" notes.txt
expect_fatal "a directory's dot" "Don't know what to do with 'dir.d/file'" dir.d/file
expect_fatal "an input with no suffix" "Don't know what to do with 'README'" README
expect_fatal "stdin as an input" "Don't know what to do with '-'" -
expect_fatal "a value after '=' to an option of none" "Unknown option '-g=1'" -g=1 a.cu
expect_fatal "a value attached to -o" "Unknown option '-ofoo'" -ofoo a.cu
expect_fatal "-x of no language" "Value 'fortran' is not defined for option 'x'" -x fortran a.cu
expect_fatal "-rdc of no boolean" "Value 'maybe' is not defined for option 'relocatable-device-code'" -rdc=maybe a.cu
h=$("$nvcc" --help) && echo "$h" | grep -q "^Usage: ncclsim-nvcc \[options\] <inputs>" && ok "--help prints the usage" ||
  bad "--help: $h"

# --- -lib, -dlink, -shared, -E, -M, -keep: what each makes ---
if (cd "$tmp" && "$nvcc" -lib -o libb.a b.cu && "$nvcc" -o ab2 a.o libb.a) >"$tmp/lib.log" 2>&1 &&
   test "$("$tmp/ab2")" = "2 4 6 8 no-arch 1"; then
  ok "-lib: an archive of b.cu that a program links"
else
  bad "-lib"; cat "$tmp/lib.log"
fi
mkdir "$tmp/dl"
if (cd "$tmp/dl" && "$nvcc" -dlink ../a.o ../b.o && "$nvcc" -dlink -o dl.o ../a.o ../b.o &&
    "$nvcc" -o ab3 ../a.o ../b.o dl.o a_dlink.o) >"$tmp/dlink.log" 2>&1 && test "$("$tmp/dl/ab3")" = "2 4 6 8 no-arch 1" &&
   test -z "$(nm --defined-only "$tmp/dl/dl.o")"; then
  ok "-dlink: an empty object (a_dlink.o without -o) that links"
else
  bad "-dlink"; cat "$tmp/dlink.log"
fi
if (cd "$tmp" && "$nvcc" -shared -Xcompiler -fvisibility=default -o libb.so b.cu) >"$tmp/so.log" 2>&1 &&
   nm -D --defined-only "$tmp/libb.so" | grep -q helper; then
  ok "-shared: a shared library that defines b.cu's helper"
else
  bad "-shared"; cat "$tmp/so.log"
fi
# -E and -M write to stdout, or to -o's file: naming the sources, never the
# driver's temporary copies
(cd "$tmp" && "$nvcc" -E a.cu) >"$tmp/a.ii" 2>"$tmp/e.log"
if grep -q '__ncclsim_rt::bind' "$tmp/a.ii" && grep -q "^# 1 \"$tmp/b.h\"" "$tmp/a.ii" && ! grep -q 'ncclsim-nvcc\.' "$tmp/a.ii"; then
  ok "-E: the rewritten source, its line markers naming a.cu's files"
else
  bad "-E"; cat "$tmp/e.log"; grep 'ncclsim-nvcc\.' "$tmp/a.ii" | head -n 3
fi
(cd "$tmp" && "$nvcc" -M a.cu) >"$tmp/m.out" 2>"$tmp/m.log"
(cd "$tmp" && "$nvcc" -M a.cu -o m.dep) >>"$tmp/m.log" 2>&1
if grep -q "^a.o: $tmp/a.cu" "$tmp/m.out" && grep -q "b.h" "$tmp/m.out" && cmp -s "$tmp/m.out" "$tmp/m.dep" &&
   ! grep -q 'ncclsim-nvcc\.' "$tmp/m.out"; then
  ok "-M: a.o's rule on stdout or in -o's file, naming a.cu and b.h"
else
  bad "-M"; cat "$tmp/m.log" "$tmp/m.out"
fi
if (cd "$tmp" && "$nvcc" -MM a.cu -MF mm.d -MT target) >"$tmp/mm.log" 2>&1 && grep -q "^target: $tmp/a.cu" "$tmp/mm.d" &&
   grep -q b.h "$tmp/mm.d" && ! grep -q /usr/include "$tmp/mm.d"; then
  ok "-MM -MF -MT: the target named, system headers left out"
else
  bad "-MM -MF -MT"; cat "$tmp/mm.log" "$tmp/mm.d"
fi
# -MD: gcc's dependency file, -o's name with its suffix (if any) made .d;
# the object is left as compiled (the driver once rewrote an -o with no
# suffix as if it were the dependencies, cutting it short)
if (cd "$tmp" && "$nvcc" -MD -g -c b.cu -o bobj && cp bobj bobj.o && "$nvcc" -o ab5 a.o bobj.o) >"$tmp/md.log" 2>&1 &&
   test "$("$tmp/ab5")" = "2 4 6 8 no-arch 1" && grep -q "^bobj: $tmp/b.cu" "$tmp/bobj.d" && ! grep -q 'ncclsim-nvcc\.' "$tmp/bobj.d"; then
  ok "-MD -o bobj: bobj.d names b.cu, bobj links"
else
  bad "-MD -o with no suffix"; cat "$tmp/md.log" "$tmp/bobj.d"
fi
# -I and -include with a .cu: a kernel in an included header is edited
# too, and the edited copies are found first
mkdir "$tmp/inc"
cat >"$tmp/inc/k.cuh" <<'EOF'
__global__ void add_scale(int *p) { p[threadIdx.x] += SCALE; }
EOF
printf '#define SCALE 3\n' >"$tmp/pre.h"
cat >"$tmp/inc.cu" <<'EOF'
#include <cstdio>
#include "k.cuh"
int main() {
  int h[2] = {0, 1}, *d;
  cudaMalloc(&d, sizeof h);
  cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
  add_scale<<<1, 2>>>(d);
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  std::printf("%d %d %zu\n", h[0], h[1], sizeof(std::max_align_t) > 0);
  return 0;
}
EOF
if (cd "$tmp" && "$nvcc" -I inc -I no-such-dir -include pre.h -include cstddef -o incprog inc.cu) >"$tmp/inc.log" 2>&1 &&
   test "$("$tmp/incprog")" = "3 4 1"; then
  ok "-I and -include with a .cu: the header's kernel edited and launched"
else
  bad "-I and -include with a .cu"; cat "$tmp/inc.log"
fi
mkdir "$tmp/kt"
if (cd "$tmp" && TMPDIR="$tmp/kt" "$nvcc" -keep -c b.cu -o bk.o) >"$tmp/keep.log" 2>&1 &&
   kept=$(sed -n 's/^ncclsim-nvcc: keeping //p' "$tmp/keep.log") && test -n "$kept" &&
   test "${kept#"$tmp"/kt/ncclsim-nvcc.}" != "$kept" && head -n 1 "$kept/root0$tmp/b.cu" | grep -q "^#line 1 \"b.cu\""; then
  ok "-keep: the edited copies kept under TMPDIR ($kept)"
else
  bad "-keep"; cat "$tmp/keep.log"; ls -R "$tmp/kt" | head -n 20
fi

# --- what ncclsim cannot carry out, each refused and named, with its line:
# every line that ends in '// refuse: PATTERN' has an error matching
# PATTERN (grep -E), and no other line has one ---
cat >"$tmp/refuse.cu" <<'EOF'
#define FENCE() asm volatile("fence.sc.gpu;" ::: "memory")
#define TEMPLATE "mov.u32 %0, 7;"
#define SEVEN "7"
#define BODY { p[0] = 1; }
#define SHARED_IN(x) __shared__ int x
#define NS ns_word
#define DECL_NS __shared__ int ns_by_macro;
#define ARGS (p)
__shared__ int ns_word;
DECL_NS // refuse: __shared__ variable ns_by_macro is declared by a macro
__global__ void d01(unsigned *p) { asm volatile("{ .reg .pred q; setp.eq.u32 q, 1, 1; }" ::: "memory"); } // refuse: a declaration \(\.reg \.pred q\): inline PTX with its own registers
__global__ void d02(unsigned *p) { asm volatile("red.global.exch.b32 [%0], %1;" ::"l"(p), "r"(1u)); } // refuse: red\.exch$
__global__ void d03(unsigned *p) { asm volatile("red.global.cas.b32 [%0], %1, %2;" ::"l"(p), "r"(1u), "r"(2u)); } // refuse: red\.cas$
__global__ void d04(unsigned *p, unsigned v) { asm volatile("atom.global.u32 %0, [%1], %0;" : "+r"(v) : "l"(p)); } // refuse: atom with an operation or type ncclsim does not carry out
__global__ void d05(unsigned *p, short v) { asm volatile("atom.global.add.noftz.f16 %0, [%1], %0;" : "+h"(v) : "l"(p)); } // refuse: atom with an operation or type ncclsim does not carry out
__global__ void d06(unsigned *p, unsigned v) { asm volatile("atom.global.add.u32 %0, [%1];" : "=r"(v) : "l"(p)); } // refuse: atom with a wrong number of operands
__global__ void d07(unsigned *p, unsigned v) { asm volatile("ld.global %0, [%1];" : "=r"(v) : "l"(p)); } // refuse: ld with operands or type ncclsim does not read \(ld\)
__global__ void d08(unsigned *p, unsigned v) { asm volatile("ld.global.u32 %0, [%1], 4;" : "=r"(v) : "l"(p)); } // refuse: ld with operands or type ncclsim does not read \(ld\)
__global__ void d09(unsigned *p) { asm volatile("st.global [%0], 1;" ::"l"(p)); } // refuse: st with operands or type ncclsim does not read \(st\)
__global__ void d10(unsigned *p) { asm volatile("st.global.u32 [%0];" ::"l"(p)); } // refuse: st with operands or type ncclsim does not read \(st\)
__global__ void d11(unsigned *p, unsigned a, unsigned b) { asm volatile("ld.global.v2.u32 {%0, %1, %1}, [%2];" : "=r"(a), "=r"(b) : "l"(p)); } // refuse: ld\.v2 whose destination is not a \{\.\.\} list of that many
__global__ void d12(unsigned *p, unsigned a) { asm volatile("ld.global.v4.u32 %0, [%1];" : "=r"(a) : "l"(p)); } // refuse: ld\.v4 whose destination is not a
__global__ void d13(unsigned *p, unsigned a) { asm volatile("ld.global.v8.u32 {%0}, [%1];" : "=r"(a) : "l"(p)); } // refuse: ld\.v8 whose destination is not a
__global__ void d14(unsigned *p) { asm volatile("st.global.v2.u32 [%0], {%1};" ::"l"(p), "r"(1u)); } // refuse: st\.v2 whose source is not a \{\.\.\} list of that many
__global__ void d15(unsigned *p) { asm volatile("st.global.v4.u32 [%0], {%1, %1};" ::"l"(p), "r"(1u)); } // refuse: st\.v4 whose source is not a
__global__ void d16(unsigned *p) { asm volatile("st.global.v8.u32 [%0], %1;" ::"l"(p), "r"(1u)); } // refuse: st\.v8 whose source is not a
__global__ void d17(unsigned *p, unsigned v) { asm volatile("ld.global.u32 %0, %1;" : "=r"(v) : "l"(p)); } // refuse: address '%1' \(expected \[%N\] or \[%N\+k\]\)
__global__ void d18(unsigned *p, unsigned v) { asm volatile("ld.global.u32 %0, [];" : "=r"(v) : "l"(p)); } // refuse: address '\[\]'
__global__ void d19(unsigned *p, unsigned v) { asm volatile("ld.global.u32 %0, [x];" : "=r"(v) : "l"(p)); } // refuse: address '\[x\]'
__global__ void d20(unsigned *p, unsigned short a) { asm volatile("st.global.u32 [%0], 1;" ::"h"(a)); } // refuse: a 32-bit address \(\[%0\]\): ncclsim's addresses are 64-bit
__global__ void d21(unsigned *p, unsigned a) { asm volatile("st.global.u32 [%0], 1;" : "+r"(a)); } // refuse: a 32-bit address \(\[%0\]\)
__global__ void d22(unsigned *p) { asm volatile("st.global.u32 [%0], foo;" ::"l"(p)); } // refuse: operand 'foo' \(an operand must be %N or a number\)
__global__ void d23(unsigned *p) { asm volatile("st.global.f32 [%0], 0f3F80;" ::"l"(p)); } // refuse: operand '0f3F80' \(a floating immediate is 0f and 8 hex digits, or 0d and 16\)
__global__ void d24(unsigned *p) { asm volatile("st.global.f64 [%0], 0d3FF0000000000000x;" ::"l"(p)); } // refuse: operand '0d3FF0000000000000x' \(a floating immediate
__global__ void d25(unsigned *p, unsigned v) { asm volatile("ld.global.u32 %1, [%0];" ::"l"(p), "r"(v)); } // refuse: destination '%1' \(expected an output operand\)
__global__ void d26(unsigned *p) { asm volatile("ld.global.u32 5, [%0];" ::"l"(p)); } // refuse: destination '5' \(expected an output operand\)
__global__ void d27(unsigned *p, unsigned a, unsigned b) { asm volatile("ld.global.v2.u32 {%0, %3}, [%2];" : "=r"(a), "=r"(b) : "l"(p), "r"(1u)); } // refuse: destination '%3'
__global__ void d28(unsigned *p, unsigned a) { asm volatile("st.global.v2.u32 [%0], {%1, bar};" ::"l"(p), "r"(a)); } // refuse: operand 'bar'
__global__ void d29() { asm volatile("membar;" ::: "memory"); } // refuse: membar\.$
__global__ void d30() { asm volatile("membar.proxy;" ::: "memory"); } // refuse: membar\.proxy$
__global__ void d31() { asm volatile("fence.proxy.alias;" ::: "memory"); } // refuse: fence\.proxy \(proxy fences: ncclsim has one proxy\)
__global__ void d32() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); } // refuse: fence\.mbarrier_init \(proxy fences
__global__ void d33(unsigned v) { asm volatile("mov %0, 1;" : "=r"(v)); } // refuse: mov with operands ncclsim does not read \(mov\)
__global__ void d34(unsigned v) { asm volatile("mov.u32 %0, 1, 2;" : "=r"(v)); } // refuse: mov with operands ncclsim does not read \(mov\)
__global__ void d35(unsigned v) { asm volatile("mov.u32 %0, %%envreg3;" : "=r"(v)); } // refuse: mov from register %envreg3
__global__ void d36(unsigned v) { asm volatile("mov.u32 %0, bogus;" : "=r"(v)); } // refuse: operand 'bogus'
__global__ void d37(unsigned v) { asm volatile("mov.u32 3, %0;" :: "r"(v)); } // refuse: destination '3'
__global__ void d38(unsigned v) { asm volatile("averyveryveryverylonginstructionname.u32 %0;" : "=r"(v)); } // refuse: 'averyveryveryverylonginstructionname\.u32 %0' \(cannot read it\)
__global__ void d39(unsigned *p) { asm volatile("ld.a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.u32 %0, [%0];" :: "l"(p)); } // refuse: 'ld\.a\.b\..*' \(cannot read it\)
__global__ void d40(unsigned *p) { asm volatile("ld.global.averyveryverylongmodifier.u32 %0, [%0];" :: "l"(p)); } // refuse: \(cannot read it\)
__global__ void d41(unsigned *p) { asm volatile("st.global.u32 %0, %0, %0, %0, %0, %0, %0, %0, %0;" :: "l"(p)); } // refuse: \(cannot read it\)
__global__ void d42() { asm volatile("bar.sync 1;" ::: "memory"); } // refuse: bar\.sync 1$
__global__ void d43() { asm volatile("bar.sync 0, 64;" ::: "memory"); } // refuse: bar\.sync 0, 64$
__global__ void d44() { asm volatile("bar.arrive 0;" ::: "memory"); } // refuse: bar\.arrive 0$
__global__ void d45() { asm volatile("trap 1;" ::: "memory"); } // refuse: trap 1$
__global__ void d46(unsigned a, unsigned b) { asm volatile("activemask.b32 %0, %1;" : "=r"(a), "=r"(b)); } // refuse: activemask\.b32 %0, %1$
__global__ void d47() { asm volatile("nanosleep.u32 x;" ::: "memory"); } // refuse: operand 'x'
__global__ void d48() { asm volatile("nanosleep.u32;" ::: "memory"); } // refuse: nanosleep\.u32$
__global__ void d49(unsigned *p, unsigned v) { asm volatile("atom.global.add.u32 %0, %1, %2;" : "=r"(v) : "l"(p), "r"(1u)); } // refuse: address '%1'
__global__ void d50(unsigned *p, unsigned v) { asm volatile("atom.global.cas.b32 %0, [%1], %2, nope;" : "=r"(v) : "l"(p), "r"(1u)); } // refuse: operand 'nope'
__global__ void d51(unsigned *p, unsigned v) { asm volatile("atom.global.add.u32 %2, [%0], %1;" : : "l"(p), "r"(1u), "r"(v)); } // refuse: destination '%2'
__global__ void d52(unsigned *p) { asm volatile("st.global.u32 [%[p], 1;" :: [p] "l"(p)); } // refuse: st with operands or type ncclsim does not read \(st\)
__global__ void e01(unsigned *p) { asm volatile("st.global.u32 [%0], %1x;" ::"l"(p), "r"(1u)); } // refuse: operand '%1x'
__global__ void e02(unsigned *p, unsigned v) { asm volatile("ld.global.u32 %0, [%1;" : "=r"(v) : "l"(p)); } // refuse: address '\[%1' \(expected
__global__ void e03(unsigned a) { asm volatile("st.global.u32 [%0], 1;" : "=r"(a)); } // refuse: a 32-bit address \(\[%0\]\)
__global__ void e04(unsigned *p, unsigned v) { asm volatile("atom.global.add.u32 %0, [%1], bad;" : "=r"(v) : "l"(p)); } // refuse: operand 'bad'
__global__ void e05(unsigned *p, unsigned v) { asm volatile("ld.global.v8.u32 {%0, %0, %0, %0, %0, %0, %0, %0, %0}, [%1];" : "=r"(v) : "l"(p)); } // refuse: ld\.v8 whose destination is not a
__global__ void d53() { FENCE(); } // refuse: inline asm written by a macro \(write it outside the macro\)
__global__ void d54(unsigned *p) { unsigned v; asm(TEMPLATE : "=r"(v)); p[0] = v; } // refuse: inline asm whose template is not string literals written in place
__global__ void d55(unsigned *p) { unsigned v; asm("mov.u32 %0, " SEVEN ";" : "=r"(v)); p[0] = v; } // refuse: inline asm whose template is not string literals written in place
__global__ void k56(int *p) BODY // refuse: the body of __global__ function k56 is written by a macro
struct holder { static __global__ void k57(int *p) { p[0] = 1; } }; // refuse: __global__ function k57 is a class member
__global__ void k58(int *p) { __shared__ int a, b; a = b = 0; p[0] = a + b; } // refuse: several __shared__ variables in one declaration \(a\)
__global__ void k58b(int *p) { __shared__ int y{3}; p[0] = y; } // refuse: __shared__ variable y has an initializer
__global__ void k58c(int *p) { __shared__ int z[2] = {1, 2}; p[0] = z[1]; } // refuse: __shared__ variable z has an initializer
__global__ void k59(int *p) { SHARED_IN(x); x = 1; p[0] = x; } // refuse: __shared__ variable x is declared by a macro
__global__ void k60(int *p) { NS = 1; p[0] = ns_word; } // refuse: __shared__ variable ns_word is used inside a macro
__global__ void k61(int *p) { p[0] = 1; }
void h62(int *p) { k61<<<1, 1>>> ARGS; } // refuse: a kernel launch ncclsim-nvcc cannot read \(its tokens\)
EOF
if "$nvcc" -c -o "$tmp/refuse.o" "$tmp/refuse.cu" >"$tmp/refuse.log" 2>&1; then
  bad "refuse.cu compiled; it must be refused"
else
  grep -n '// refuse: ' "$tmp/refuse.cu" >"$tmp/refuse.want"
  want=0 missing=0
  while IFS= read -r line; do
    want=$((want + 1))
    ln=${line%%:*} pat=${line#*// refuse: }
    if ! grep -Eq "refuse\.cu:$ln:[0-9]+: error: .*$pat" "$tmp/refuse.log"; then
      bad "refuse.cu:$ln: no error matching '$pat'"
      missing=$((missing + 1))
    fi
  done <"$tmp/refuse.want"
  got=$(grep -c 'refuse\.cu:[0-9]*:[0-9]*: error: ' "$tmp/refuse.log")
  if test "$got" != "$want"; then
    bad "refuse.cu: $got errors for $want refused lines:"; cat "$tmp/refuse.log"
  elif test "$missing" = 0; then
    ok "refuse.cu: $want constructs refused, each named with its line"
  fi
fi

echo "$fails failed"
test "$fails" = 0
