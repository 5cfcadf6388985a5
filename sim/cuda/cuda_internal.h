/* sim/cuda/cuda_internal.h — shared by the simulated CUDA runtime's files. */
#ifndef NCCLSIM_CUDA_INTERNAL_H_
#define NCCLSIM_CUDA_INTERNAL_H_

#include "../sim.h"

/* priority within CUDA's stream priority range (props.c): out-of-range
 * priorities are clamped, as CUDA does. */
int sim_stream_priority_clamp(int priority);
/* Records err as the thread's last CUDA error (cudaGetLastError) and
 * returns it; cudaSuccess is returned untouched. */
cudaError_t sim_cuda_error(cudaError_t err);
/* Waits until every op enqueued on s so far has run; returns the stream's
 * sticky error. */
cudaError_t sim_stream_drain(sim_stream *s);

/* A marker: an op with nothing to run, whose mark() publishes that the
 * stream reached it (an event's completion). mark() runs under the
 * stream's lock, in the step that counts the marker done, and cudaStreamQuery
 * reads the count under that lock: whoever sees the one sees the other,
 * whichever is looked at first. mark() must not take a lock held by anyone
 * enqueueing on a stream. op.release frees the marker, after mark(). */
typedef struct sim_marker {
  sim_op op;
  void (*mark)(struct sim_marker *m);
} sim_marker;
/* Sets m->op.run and enqueues m, as sim_stream_enqueue; the caller sets
 * m->mark, m->op.release and m->op.what. */
cudaError_t sim_stream_enqueue_marker(sim_stream *s, sim_marker *m);

#endif
