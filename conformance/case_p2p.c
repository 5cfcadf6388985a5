/* case_p2p.c — P2P-*: send and recv. */
#include "config.h"

#include <string.h>
#include "case.h"
#include "pattern.h"

/* Bytes after a receive buffer that a receive must leave alone. */
#define GUARD 64

#define P2P_ODD 1000003                /* elements: an odd count */
#define P2P_BIG ((size_t)64 << 20)     /* bytes: the claim's large transfer */
#define RING_BUDGET ((size_t)3 << 30)  /* bytes: P2P-01's lanes on all ranks */

static int next_rank(const case_ctx_t *ctx) { return (ctx->rank + 1) % ctx->nranks; }
static int prev_rank(const case_ctx_t *ctx) { return (ctx->rank + ctx->nranks - 1) % ctx->nranks; }

/* Device memory for one direction of a transfer, and a host buffer as large
 * to fill and check it through. */
struct lane {
  void *send, *recv;
  unsigned char *host;
  size_t cap; /* bytes, each; recv has GUARD more */
};

static bool lane_alloc(case_ctx_t *ctx, struct lane *l, size_t cap)
{
  cudaError_t e;

  l->cap = cap;
  if ((e = ctx_cuda_malloc(ctx, &l->send, cap)) != cudaSuccess ||
      (e = ctx_cuda_malloc(ctx, &l->recv, cap + GUARD)) != cudaSuccess)
    return CASE_EXPECT(ctx, false, "cudaMalloc of %zu bytes: %s", cap, cudaGetErrorName(e));
  l->host = ctx_host_malloc(ctx, cap + GUARD);
  return CASE_EXPECT(ctx, l->host != NULL, "malloc of %zu bytes failed", cap + GUARD);
}

/* Send buffer: the pattern of (this rank, send_tag). Receive buffer and its
 * guard: the complement of what is expected from (src, recv_tag), so that
 * every byte left unwritten shows. */
static bool lane_prepare(case_ctx_t *ctx, struct lane *l, size_t bytes, int send_tag,
                         int src, int recv_tag)
{
  cudaError_t e;

  pattern_fill_not(l->host, bytes + GUARD, pattern_seed(src, recv_tag));
  if ((e = cudaMemcpy(l->recv, l->host, bytes + GUARD, cudaMemcpyHostToDevice)) == cudaSuccess) {
    pattern_fill(l->host, bytes, pattern_seed(ctx->rank, send_tag));
    e = cudaMemcpy(l->send, l->host, bytes, cudaMemcpyHostToDevice);
  }
  return CASE_EXPECT(ctx, e == cudaSuccess, "cudaMemcpy to the device: %s", cudaGetErrorName(e));
}

/* The receive buffer holds (src, recv_tag)'s pattern and the guard is
 * untouched. `what` names the transfer. */
static bool lane_verify(case_ctx_t *ctx, struct lane *l, size_t bytes, int src, int recv_tag,
                        const char *what)
{
  uint64_t seed = pattern_seed(src, recv_tag);
  size_t bad, ndiff;
  cudaError_t e = cudaMemcpy(l->host, l->recv, bytes + GUARD, cudaMemcpyDeviceToHost);

  if (!CASE_EXPECT(ctx, e == cudaSuccess, "%s: cudaMemcpy to the host: %s", what,
                   cudaGetErrorName(e)))
    return false;
  bad = pattern_check(l->host, bytes, seed, &ndiff);
  if (!CASE_EXPECT(ctx, bad == bytes, "%s from rank %d: byte %zu of %zu is 0x%02x, expected "
                   "0x%02x (%zu bytes differ)", what, src, bad, bytes, l->host[bad],
                   pattern_byte(seed, bad), ndiff))
    return false;
  for (size_t i = bytes; i < bytes + GUARD; i++)
    if (!CASE_EXPECT(ctx, l->host[i] == (uint8_t)~pattern_byte(seed, i),
                     "%s from rank %d: byte %zu, past the %zu received, was overwritten",
                     what, src, i, bytes))
      return false;
  return true;
}

/* One transfer per (dtype, count): send to rank `to` and receive from rank
 * `from`, either -1 for none; the tag of its data is the dtype. */
static void p2p_01_run(case_ctx_t *ctx, n4c_comm_t *comm, struct lane *l, cudaStream_t stream,
                       ncclDataType_t dtype, size_t count, int to, int from)
{
  size_t bytes = count * n4c_dtype_size(dtype);
  n4c_buffer_t sb = n4c_buffer(l->send, count, dtype, ctx->device);
  n4c_buffer_t rb = n4c_buffer(l->recv, count, dtype, ctx->device);
  char what[96];

  snprintf(what, sizeof what, "%s x %zu", n4c_dtype_name(dtype), count);
  if (!lane_prepare(ctx, l, bytes, dtype, from < 0 ? 0 : from, dtype))
    return;
  CASE_OK(ctx, n4c_group_start());
  if (to >= 0)
    CASE_OK(ctx, n4c_comm_send(comm, &sb, to, stream));
  if (from >= 0)
    CASE_OK(ctx, n4c_comm_recv(comm, &rb, from, stream));
  CASE_OK(ctx, n4c_group_end());
  CASE_CUDA_OK(ctx, cudaStreamSynchronize(stream));
  if (from >= 0 && lane_verify(ctx, l, bytes, from, dtype, what))
    ctx_note(ctx, "%s: %zu bytes from rank %d", what, bytes, from);
}

/* Every dtype at counts 0, 1, ODD and `big` bytes' worth, sending to `to`
 * and receiving from `from` (-1: none); false once a rank has failed. */
static bool p2p_01_sweep(case_ctx_t *ctx, n4c_comm_t *comm, struct lane *l, cudaStream_t stream,
                         size_t big, int to, int from)
{
  for (int d = 0; d < ncclNumTypes; d++) {
    size_t counts[] = { 0, 1, P2P_ODD, big / n4c_dtype_size((ncclDataType_t)d) };

    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
      if (to >= 0 || from >= 0)
        p2p_01_run(ctx, comm, l, stream, (ncclDataType_t)d, counts[k], to, from);
      /* A failed rank stops the others here, not in their next receive. */
      if (!ctx_barrier(ctx))
        return false;
    }
  }
  return true;
}

/* A lane costs 3 x its size per rank (send, receive and host copy): 192 MiB
 * for the claim's 64 MiB, 48 GiB at 256 ranks. Past RING_BUDGET for all
 * ranks, the ring sweeps with a smaller large count, and then the 64 MiB
 * transfers of the claim run from rank 0 to rank 1 alone. */
void case_P2P_01(case_ctx_t *ctx)
{
  const size_t odd_bytes = (size_t)P2P_ODD * 8; /* the widest dtype */
  size_t ring_big = P2P_BIG;
  n4c_comm_t *comm;
  cudaStream_t stream;
  struct lane l, pair;

  if ((size_t)ctx->nranks * 3 * P2P_BIG > RING_BUDGET) {
    ring_big = RING_BUDGET / 3 / (size_t)ctx->nranks & ~(size_t)63;
    if (ring_big < odd_bytes)
      ring_big = odd_bytes;
  }
  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  CASE_CUDA_OK(ctx, ctx_stream_create(ctx, &stream));
  if (!lane_alloc(ctx, &l, ring_big > odd_bytes ? ring_big : odd_bytes) || !ctx_barrier(ctx))
    return;
  if (!p2p_01_sweep(ctx, comm, &l, stream, ring_big, next_rank(ctx), prev_rank(ctx)) ||
      ring_big == P2P_BIG)
    return;
  if (ctx->rank == 0)
    ctx_note(ctx, "%d ranks: the ring's large count is %zu bytes; 64 MiB transfers "
             "run from rank 0 to rank 1", ctx->nranks, ring_big);
  if (ctx->rank <= 1 && !lane_alloc(ctx, &pair, P2P_BIG))
    return;
  if (!ctx_barrier(ctx))
    return;
  p2p_01_sweep(ctx, comm, &pair, stream, P2P_BIG, ctx->rank == 0 ? 1 : -1,
               ctx->rank == 1 ? 0 : -1);
}

void case_P2P_02(case_ctx_t *ctx)
{
  n4c_comm_t *null_comm, *comm;
  cudaStream_t stream;
  const char *msg;
  struct lane l;
  void *other;
  int odev = (ctx->device + 1) % ctx->ndevices;

  CASE_CUDA_OK(ctx, ctx_stream_create(ctx, &stream));
  if (!lane_alloc(ctx, &l, 4096))
    return;
  n4c_buffer_t sb = n4c_buffer(l.send, 1024, ncclInt32, ctx->device);
  n4c_buffer_t rb = n4c_buffer(l.recv, 1024, ncclInt32, ctx->device);

  CASE_OK(ctx, n4c_comm_new(&null_comm));
  ctx_defer_comm(ctx, null_comm);
  CASE_STATUS(ctx, n4c_comm_send(null_comm, &sb, next_rank(ctx), stream), N4C_EINVAL);
  msg = n4c_last_error_message();
  CASE_CHECK(ctx, strstr(msg, "n4c_comm_send"), "send on a null communicator: the message '%s' "
             "does not name n4c_comm_send", msg);
  CASE_STATUS(ctx, n4c_comm_recv(null_comm, &rb, prev_rank(ctx), stream), N4C_EINVAL);
  msg = n4c_last_error_message();
  CASE_CHECK(ctx, strstr(msg, "n4c_comm_recv"), "recv on a null communicator: the message '%s' "
             "does not name n4c_comm_recv", msg);

  if (ctx->ndevices < 2)
    CASE_SKIP(ctx, "the wrong-device half needs 2 devices, there is %d (the null-communicator "
              "half passed)", ctx->ndevices);

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  CASE_CUDA_OK(ctx, cudaSetDevice(odev));
  cudaError_t e = ctx_cuda_malloc(ctx, &other, 4096);
  CASE_CUDA_OK(ctx, cudaSetDevice(ctx->device));
  CASE_CHECK(ctx, e == cudaSuccess, "cudaMalloc on device %d: %s", odev, cudaGetErrorName(e));
  n4c_buffer_t wrong = n4c_buffer(other, 1024, ncclInt32, odev);

  CASE_STATUS(ctx, n4c_comm_send(comm, &wrong, next_rank(ctx), stream), N4C_EINVAL);
  msg = n4c_last_error_message();
  CASE_CHECK(ctx, strstr(msg, "n4c_comm_send") && strstr(msg, "sendbuf"),
             "send of a buffer on device %d: the message '%s' does not name n4c_comm_send and "
             "sendbuf", odev, msg);
  CASE_STATUS(ctx, n4c_comm_recv(comm, &wrong, prev_rank(ctx), stream), N4C_EINVAL);
  msg = n4c_last_error_message();
  CASE_CHECK(ctx, strstr(msg, "n4c_comm_recv") && strstr(msg, "recvbuf"),
             "recv into a buffer on device %d: the message '%s' does not name n4c_comm_recv "
             "and recvbuf", odev, msg);

  /* Nothing of the rejected calls reached NCCL: the next pair matches. */
  if (!ctx_barrier(ctx) || !lane_prepare(ctx, &l, 4096, 1, prev_rank(ctx), 1))
    return;
  CASE_OK(ctx, n4c_group_start());
  CASE_OK(ctx, n4c_comm_send(comm, &sb, next_rank(ctx), stream));
  CASE_OK(ctx, n4c_comm_recv(comm, &rb, prev_rank(ctx), stream));
  CASE_OK(ctx, n4c_group_end());
  CASE_CUDA_OK(ctx, cudaStreamSynchronize(stream));
  lane_verify(ctx, &l, 4096, prev_rank(ctx), 1, "the send after the rejected ones");
}

/* Tags of the two directions' data. */
enum { TO_NEXT = 1, TO_PREV = 2 };

void case_P2P_03(case_ctx_t *ctx)
{
  enum { COUNT = 262147 }; /* float32: 1 MiB and a bit, an odd count */
  const size_t bytes = (size_t)COUNT * 4;
  n4c_comm_t *comm;
  cudaStream_t stream;
  struct lane fwd, back; /* fwd: sent to next, received from prev */

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  CASE_CUDA_OK(ctx, ctx_stream_create(ctx, &stream));
  if (!lane_alloc(ctx, &fwd, bytes) || !lane_alloc(ctx, &back, bytes) ||
      !lane_prepare(ctx, &fwd, bytes, TO_NEXT, prev_rank(ctx), TO_NEXT) ||
      !lane_prepare(ctx, &back, bytes, TO_PREV, next_rank(ctx), TO_PREV) || !ctx_barrier(ctx))
    return;

  n4c_buffer_t fs = n4c_buffer(fwd.send, COUNT, ncclFloat32, ctx->device);
  n4c_buffer_t fr = n4c_buffer(fwd.recv, COUNT, ncclFloat32, ctx->device);
  n4c_buffer_t bs = n4c_buffer(back.send, COUNT, ncclFloat32, ctx->device);
  n4c_buffer_t br = n4c_buffer(back.recv, COUNT, ncclFloat32, ctx->device);

  /* Sends in the order (next, prev) and receives in the order (prev,
   * next): with 2 ranks next == prev, and NCCL matches in posting order. */
  CASE_OK(ctx, n4c_group_start());
  CASE_OK(ctx, n4c_comm_send(comm, &fs, next_rank(ctx), stream));
  CASE_OK(ctx, n4c_comm_send(comm, &bs, prev_rank(ctx), stream));
  CASE_OK(ctx, n4c_comm_recv(comm, &fr, prev_rank(ctx), stream));
  CASE_OK(ctx, n4c_comm_recv(comm, &br, next_rank(ctx), stream));
  CASE_OK(ctx, n4c_group_end());
  CASE_CUDA_OK(ctx, cudaStreamSynchronize(stream));
  if (lane_verify(ctx, &fwd, bytes, prev_rank(ctx), TO_NEXT, "float32 from the previous rank"))
    lane_verify(ctx, &back, bytes, next_rank(ctx), TO_PREV, "float32 from the next rank");
}
