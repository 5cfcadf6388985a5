/* case_win.c — WIN-*: windows, their user pointer and LSA/peer pointers. */
#include <stdint.h>
#include "case_rma.h"
#include "pattern.h"

enum { WBYTES = 8192, SLOT_BASE = 4096 }; /* pattern below SLOT_BASE, 8-byte slots above */

#ifdef NCCLSIM
#define MAX_NODES 2
#else
#define MAX_NODES 1 /* real NCCL: the topology it runs on */
#endif

void case_WIN_01(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  n4c_window_t *win;
  void *mem, *p;

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  if (!rma_window(ctx, comm, WBYTES, N4C_WIN_COLL_SYMMETRIC, &mem, &win))
    return;
  CASE_OK(ctx, n4c_window_user_ptr(win, &p));
  CASE_CHECK(ctx, p == mem, "user_ptr is %p, the registered buffer is %p", p, mem);
  CASE_CHECK(ctx, n4c_window_size(win) == WBYTES, "size %zu", n4c_window_size(win));
  CASE_OK(ctx, n4c_resource_close(N4C_RESOURCE(win)));
  CASE_STATUS(ctx, n4c_window_user_ptr(win, &p), N4C_ECLOSED);
}

/* Checks rank r's data of tag at [0, SLOT_BASE) through p. */
static bool check_through(case_ctx_t *ctx, void *p, int r, int off, const char *how)
{
  unsigned char host[SLOT_BASE];
  size_t n = SLOT_BASE - (size_t)off;
  cudaError_t e = cudaMemcpy(host, p, n, cudaMemcpyDeviceToHost);
  if (!CASE_EXPECT(ctx, e == cudaSuccess, "%s: cudaMemcpy: %s", how, cudaGetErrorName(e)))
    return false;
  uint64_t seed = pattern_seed(r, 2);
  for (size_t i = 0; i < n; i++)
    if (host[i] != pattern_byte(seed, i + (size_t)off)) {
      return CASE_EXPECT(ctx, false, "%s: byte %zu of rank %d's window is 0x%02x, expected 0x%02x",
                         how, i + (size_t)off, r, host[i], pattern_byte(seed, i + (size_t)off));
    }
  return true;
}

void case_WIN_02(case_ctx_t *ctx)
{
  for (int nn = 1; nn <= MAX_NODES; nn++) {
    n4c_comm_t *comm;
    n4c_window_t *win;
    void *mem, *p;
    unsigned char host[SLOT_BASE];

    if (nn > 1 && ctx->nranks % nn) {
      ctx_note(ctx, "%d ranks: the %d-node half is not run", ctx->nranks, nn);
      break;
    }
    if (!rma_comm_nodes(ctx, nn, &comm) ||
        !rma_window(ctx, comm, WBYTES, N4C_WIN_COLL_SYMMETRIC, &mem, &win))
      return;
    int rpn = ctx->nranks / nn, node = ctx->rank / rpn, me = ctx->rank % rpn;
    pattern_fill(host, SLOT_BASE, pattern_seed(ctx->rank, 2));
    CASE_CUDA_OK(ctx, cudaMemcpy(mem, host, SLOT_BASE, cudaMemcpyHostToDevice));
    CASE_CUDA_OK(ctx, cudaMemset((char *)mem + SLOT_BASE, 0, WBYTES - SLOT_BASE));
    if (!ctx_barrier(ctx))
      return;
    /* Read every LSA rank's data, and write a word into its slot of ours. */
    for (int r = 0; r < rpn; r++) {
      int world = node * rpn + r, off = 8 * (r + 1);
      char how[96];
      snprintf(how, sizeof how, "%d node(s): lsa_ptr(%d, %d) (rank %d)", nn, r, off, world);
      CASE_OK(ctx, n4c_window_lsa_ptr(win, r, (size_t)off, &p));
      CASE_CHECK(ctx, p != NULL, "%s is NULL", how);
      if (!check_through(ctx, p, world, off, how))
        return;
      uint64_t word = 0x5100000000ull + (uint64_t)ctx->rank;
      CASE_OK(ctx, n4c_window_lsa_ptr(win, r, SLOT_BASE + 8 * (size_t)me, &p));
      CASE_CUDA_OK(ctx, cudaMemcpy(p, &word, 8, cudaMemcpyHostToDevice));
    }
    if (!ctx_barrier(ctx))
      return;
    for (int r = 0; r < rpn; r++) {
      uint64_t word;
      CASE_CUDA_OK(ctx, cudaMemcpy(&word, (char *)mem + SLOT_BASE + 8 * r, 8, cudaMemcpyDeviceToHost));
      CASE_CHECK(ctx, word == 0x5100000000ull + (uint64_t)(node * rpn + r), "%d node(s): the "
                 "word LSA rank %d wrote through its pointer into this window reads 0x%llx",
                 nn, r, (unsigned long long)word);
    }
    ctx_note(ctx, "%d node(s): read and wrote %d LSA ranks' windows", nn, rpn);
    if (!ctx_barrier(ctx))
      return;
  }
}

void case_WIN_03(case_ctx_t *ctx)
{
  for (int nn = 1; nn <= MAX_NODES && ctx->nranks % nn == 0; nn++) {
    n4c_comm_t *comm;
    n4c_window_t *win;
    void *mem, *p, *l;

    if (!rma_comm_nodes(ctx, nn, &comm) ||
        !rma_window(ctx, comm, WBYTES, N4C_WIN_COLL_SYMMETRIC, &mem, &win))
      return;
    int rpn = ctx->nranks / nn;
    for (int peer = 0; peer < ctx->nranks; peer++) {
      CASE_OK(ctx, n4c_window_peer_ptr(win, peer, 64, &p));
      if (peer / rpn != ctx->rank / rpn) {
        CASE_CHECK(ctx, p == NULL, "%d nodes: peer %d is on another node, but its pointer is %p",
                   nn, peer, p);
        continue;
      }
      CASE_OK(ctx, n4c_window_lsa_ptr(win, peer % rpn, 0, &l));
      CASE_CHECK(ctx, p != NULL && p == (char *)l + 64, "%d node(s): peer_ptr(%d, 64) is %p, "
                 "lsa_ptr(%d, 0) + 64 is %p", nn, peer, p, peer % rpn, (void *)((char *)l + 64));
    }
    if (!ctx_barrier(ctx))
      return;
  }
}

void case_WIN_04(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  n4c_window_t *win;
  n4c_comm_properties_t props;
  void *mem, *p = (void *)1;

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  if (!rma_window(ctx, comm, WBYTES, N4C_WIN_COLL_SYMMETRIC, &mem, &win))
    return;
  if (n4c_comm_properties(comm, &props) == N4C_OK && props.multimem_support)
    CASE_SKIP(ctx, "multimem is supported here; the claim is about platforms without it");
  CASE_OK(ctx, n4c_window_lsa_multimem_ptr(win, 0, &p));
  CASE_CHECK(ctx, p == NULL, "multimem pointer is %p without multimem support", p);
}

static bool want_nccl_invalid(case_ctx_t *ctx, n4c_status_t st, const char *what)
{
  if (st == N4C_ENOTSUP) {
    case_skip_unsupported(ctx);
    return false;
  }
  return CASE_EXPECT(ctx, st == N4C_ENCCL && n4c_last_nccl_result() == ncclInvalidArgument,
                     "%s: %s, NCCL result %d (%s); expected N4C_ENCCL with ncclInvalidArgument", what,
                     n4c_strerror(st), (int)n4c_last_nccl_result(), n4c_last_error_message());
}

void case_WIN_05(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  n4c_window_t *win;
  void *mem, *p;

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  if (!rma_window(ctx, comm, WBYTES, N4C_WIN_COLL_SYMMETRIC, &mem, &win))
    return;
  /* One node: the LSA team is every rank. */
  want_nccl_invalid(ctx, n4c_window_lsa_ptr(win, ctx->nranks, 0, &p), "lsa rank = LSA size");
  want_nccl_invalid(ctx, n4c_window_peer_ptr(win, ctx->nranks, 0, &p), "peer = nranks");
  want_nccl_invalid(ctx, n4c_window_lsa_ptr(win, 0, WBYTES, &p), "lsa_ptr offset = window size");
  want_nccl_invalid(ctx, n4c_window_peer_ptr(win, 0, WBYTES + 1, &p), "peer_ptr offset past the end");
  CASE_STATUS(ctx, n4c_window_lsa_ptr(win, -1, 0, &p), N4C_EINVAL);
}

void case_WIN_06(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  n4c_window_t *win;
  void *mem, *p;

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  if (!rma_window(ctx, comm, WBYTES, N4C_WIN_COLL_SYMMETRIC, &mem, &win))
    return;
  CASE_OK(ctx, n4c_resource_close(N4C_RESOURCE(win)));
  CASE_STATUS(ctx, n4c_window_user_ptr(win, &p), N4C_ECLOSED);
  CASE_STATUS(ctx, n4c_window_lsa_ptr(win, 0, 0, &p), N4C_ECLOSED);
  CASE_STATUS(ctx, n4c_window_peer_ptr(win, 0, 0, &p), N4C_ECLOSED);
  CASE_STATUS(ctx, n4c_window_lsa_multimem_ptr(win, 0, &p), N4C_ECLOSED);
  CASE_CHECK(ctx, n4c_window_handle(win) == NULL, "handle after close is not NULL");
}

void case_WIN_07(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  n4c_window_t *win;
  void *mem, *p;

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  if (!rma_window(ctx, comm, WBYTES, N4C_WIN_COLL_SYMMETRIC, &mem, &win))
    return;
  if (ctx->rank == 0)
    CASE_OK(ctx, n4c_resource_close(N4C_RESOURCE(win)));
  if (!ctx_barrier(ctx))
    return;
  if (ctx->rank != 0) {
    CASE_CHECK(ctx, n4c_resource_is_valid(N4C_RESOURCE(win)), "window invalid after rank 0 closed its own");
    CASE_OK(ctx, n4c_window_user_ptr(win, &p));
    CASE_CHECK(ctx, p == mem, "user_ptr changed");
    CASE_OK(ctx, n4c_window_lsa_ptr(win, ctx->rank, 0, &p));
    CASE_CHECK(ctx, p != NULL, "own LSA pointer NULL");
  }
  ctx_barrier(ctx);
}
