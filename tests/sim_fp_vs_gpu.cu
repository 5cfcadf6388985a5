// tests/sim_fp_vs_gpu.cu — ncclsim's __half and __nv_bfloat16 functions
// against a GPU's: every function of tests/fp_ops.h's table, called in a
// kernel through CUDA's own headers and on the host through ncclsim's
// (tests/sim_fp_vs_cuda_sim.cc), on the inputs tests/sim_fp_vs_cuda.cc
// tries. Prints, for each function whose results differ, how many and the
// first few; exit 0 when none differ, 1 when some do, 2 on a CUDA error.
// Not part of make check (no GPU there): run by hand where there is one,
// from the source tree's top:
//
//   g++ -std=c++17 -O2 -Isim/include -c tests/sim_fp_vs_cuda_sim.cc -o /tmp/fp_sim.o
//   nvcc -std=c++17 -O2 -arch=native tests/sim_fp_vs_gpu.cu /tmp/fp_sim.o -o /tmp/fp_vs_gpu
//   /tmp/fp_vs_gpu [-a]     (-a: list every function, equal ones too)
//
// N4C_FP_SAMPLES: random draws for the sampled inputs (default 131072).
// docs/ncclsim.md lists what this showed on an H100.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define FP_EVAL_DECL static __device__ inline
#include "fp_ops.h"
#include "fp_ops_eval.h"

uint64_t sim_fp_eval(int op, uint64_t a, uint64_t b, uint64_t c);

__global__ void eval_kernel(int op, const uint64_t *a, const uint64_t *b, const uint64_t *c, uint64_t *out, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    out[i] = fp_eval(op, a[i], b[i], c[i]);
}

#define CHECK(call)                                                                            \
  do {                                                                                         \
    cudaError_t e_ = (call);                                                                   \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(2);                                                                            \
    }                                                                                          \
  } while (0)

int main(int argc, char **argv) {
  bool all = argc > 1 && std::strcmp(argv[1], "-a") == 0;
  size_t nrand = 131072;
  if (const char *e = std::getenv("N4C_FP_SAMPLES")) nrand = std::strtoul(e, nullptr, 0);
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("GPU: %s (sm_%d%d), CUDA runtime %d\n", prop.name, prop.major, prop.minor, CUDART_VERSION);
  std::vector<uint64_t> in[3], out;
  uint64_t *d[4] = {nullptr, nullptr, nullptr, nullptr};
  size_t cap = 0;
  int differ = 0;
  for (int op = 0; op < FP_OP_COUNT; op++) {
    const fp_op_info *info = &fp_op_infos[op];
    fp_gen_inputs(info, nrand, in);
    size_t n = in[0].size();
    if (n > cap) {
      for (auto &p : d) {
        if (p) CHECK(cudaFree(p));
        CHECK(cudaMalloc(&p, n * sizeof(uint64_t)));
      }
      cap = n;
    }
    for (int k = 0; k < 3; k++) CHECK(cudaMemcpy(d[k], in[k].data(), n * sizeof(uint64_t), cudaMemcpyHostToDevice));
    eval_kernel<<<264, 256>>>(op, d[0], d[1], d[2], d[3], n);
    CHECK(cudaGetLastError());
    out.resize(n);
    CHECK(cudaMemcpy(out.data(), d[3], n * sizeof(uint64_t), cudaMemcpyDeviceToHost));
    size_t bad = 0;
    unsigned far = 0; /* the largest difference of a 16-bit lane, in units of its encoding */
    char first[3][160];
    for (size_t i = 0; i < n; i++) {
      uint64_t got = sim_fp_eval(op, in[0][i], in[1][i], in[2][i]);
      if (got == out[i]) continue;
      for (int l = 0; l < 64; l += 16) {
        unsigned x = (unsigned)(got >> l) & 0xffff, y = (unsigned)(out[i] >> l) & 0xffff;
        unsigned dist = (x ^ y) & 0x8000 ? 0xffff : x > y ? x - y : y - x;
        if (dist > far) far = dist;
      }
      if (bad < 3)
        std::snprintf(first[bad], sizeof first[bad], "(0x%llx, 0x%llx, 0x%llx): GPU 0x%llx, ncclsim 0x%llx",
                      (unsigned long long)in[0][i], (unsigned long long)in[1][i], (unsigned long long)in[2][i],
                      (unsigned long long)out[i], (unsigned long long)got);
      bad++;
    }
    const char *where = info->where == FP_WHERE_H ? "host code" : info->where == FP_WHERE_D ? "device-only" : "documented";
    if (bad) {
      differ++;
      std::printf("%s [%s]: %zu of %zu differ, by %u units of a 16-bit lane at most (65535: a sign)\n", info->name,
                  where, bad, n, far);
      for (size_t k = 0; k < bad && k < 3; k++) std::printf("  %s%s\n", info->name, first[k]);
    } else if (all) {
      std::printf("%s [%s]: all %zu equal\n", info->name, where, n);
    }
  }
  std::printf("%d of %d functions differ from the GPU somewhere\n", differ, (int)FP_OP_COUNT);
  return differ ? 1 : 0;
}
