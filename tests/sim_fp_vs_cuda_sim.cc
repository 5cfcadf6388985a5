// tests/sim_fp_vs_cuda_sim.cc — ncclsim's side of tests/sim_fp_vs_cuda.cc
// and tests/sim_fp_vs_gpu.cu: tests/fp_ops_eval.h over ncclsim's
// cuda_fp16.h and cuda_bf16.h, as sim_fp_eval. Built with
// -I sim/include. The headers go into namespace sim, since the other side
// links CUDA's classes of the same names into the program; what they
// include is included first, outside it.
#include <cstdint>
#include <cstring>
#include <utility>

#include <ncclsim_fp.h>
#include <vector_functions.h>
#include <vector_types.h>

#include "fp_ops.h"

namespace sim {
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#include "fp_ops_eval.h"
}  // namespace sim

uint64_t sim_fp_eval(int op, uint64_t a, uint64_t b, uint64_t c) { return sim::fp_eval(op, a, b, c); }
