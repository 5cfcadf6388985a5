/* sim/cuda/cuda_internal.h — shared by the simulated CUDA runtime's files. */
#ifndef NCCLSIM_CUDA_INTERNAL_H_
#define NCCLSIM_CUDA_INTERNAL_H_

#include "../sim.h"

/* Records err as the thread's last CUDA error (cudaGetLastError) and
 * returns it; cudaSuccess is returned untouched. */
cudaError_t sim_cuda_error(cudaError_t err);
/* Waits until every op enqueued on s so far has run; returns the stream's
 * sticky error. */
cudaError_t sim_stream_drain(sim_stream *s);

#endif
