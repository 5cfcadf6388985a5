/* case_win.c — WIN-*: windows, their user pointer and LSA/peer pointers. */
#include <stdint.h>
#include "case_rma.h"
#include "pattern.h"

enum { WBYTES = 8192, SLOT_BASE = 4096 }; /* pattern below SLOT_BASE, 8-byte slots above */

/* The communicators WIN-02 and WIN-03 try, as rma_comm_nodes' nnodes: the
 * environment's layout and, on ncclsim, one asked to be on 1 node and one
 * on 2 nodes, so that a team of every rank and peers outside the team are
 * both seen whatever NCCLSIM_RANKS_PER_NODE says. Each case reads the
 * layout it got (ctx_topology) and asserts what follows from it. */
#ifdef NCCLSIM
static const int layouts[] = {0, 1, 2};
#else
static const int layouts[] = {0}; /* real NCCL: the topology it runs on */
#endif
#define NLAYOUTS ((int)(sizeof layouts / sizeof layouts[0]))

/* A layout this run cannot have, noted: nranks not a multiple of it, or
 * any asked-for one across simulated hosts, where the hosts are the nodes. */
static bool layout_skipped(case_ctx_t *ctx, int nnodes)
{
  if (nnodes > 1 && ctx->nranks % nnodes) {
    ctx_note(ctx, "%d ranks: the %d-node layout is not run", ctx->nranks, nnodes);
    return true;
  }
  if (nnodes > 0 && case_sim_hosts()) {
    ctx_note(ctx, "across simulated hosts the hosts are the nodes: the %d-node layout is not run", nnodes);
    return true;
  }
  return false;
}

/* "2 node(s) of 2 (environment)" */
static void layout_name(char *buf, size_t len, int asked, const case_topo_t *t)
{
  if (asked == 0)
    snprintf(buf, len, "%d node(s) of %d (environment)", t->nnodes, t->lsa_size);
  else
    snprintf(buf, len, "%d node(s) of %d (asked for %d)", t->nnodes, t->lsa_size, asked);
}

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
  for (int k = 0; k < NLAYOUTS; k++) {
    n4c_comm_t *comm;
    n4c_window_t *win;
    case_topo_t t;
    void *mem, *p;
    unsigned char host[SLOT_BASE];
    char lay[64];
    bool ok = true;

    if (layout_skipped(ctx, layouts[k]))
      continue;
    if (!rma_comm_nodes(ctx, layouts[k], &comm) || !ctx_topology(ctx, comm, &t) ||
        !rma_window(ctx, comm, WBYTES, N4C_WIN_COLL_SYMMETRIC, &mem, &win))
      return;
    layout_name(lay, sizeof lay, layouts[k], &t);
    pattern_fill(host, SLOT_BASE, pattern_seed(ctx->rank, 2));
    CASE_CUDA_OK(ctx, cudaMemcpy(mem, host, SLOT_BASE, cudaMemcpyHostToDevice));
    CASE_CUDA_OK(ctx, cudaMemset((char *)mem + SLOT_BASE, 0, WBYTES - SLOT_BASE));
    if (!ctx_barrier(ctx))
      return;
    /* Read every LSA rank's data, and write a word into its slot of ours.
     * A rank whose check fails still goes to the barrier below: its LSA
     * peers may be reading its window, which its return would free. */
    for (int r = 0; ok && r < t.lsa_size; r++) {
      int world = t.lsa_first + r, off = 8 * (r + 1);
      char how[160];
      snprintf(how, sizeof how, "%s: lsa_ptr(%d, %d) (rank %d)", lay, r, off, world);
      ok = case_status_(ctx, n4c_window_lsa_ptr(win, r, (size_t)off, &p), N4C_OK, how, __FILE__,
                        __LINE__) &&
           CASE_EXPECT(ctx, p != NULL, "%s is NULL", how) && check_through(ctx, p, world, off, how);
      uint64_t word = 0x5100000000ull + (uint64_t)ctx->rank;
      ok = ok &&
           case_status_(ctx, n4c_window_lsa_ptr(win, r, SLOT_BASE + 8 * (size_t)t.lsa_rank, &p), N4C_OK,
                        how, __FILE__, __LINE__) &&
           CASE_EXPECT(ctx, cudaMemcpy(p, &word, 8, cudaMemcpyHostToDevice) == cudaSuccess,
                       "%s: cudaMemcpy into LSA rank %d's slot failed", how, r);
    }
    if (!ctx_barrier(ctx))
      return;
    for (int r = 0; r < t.lsa_size; r++) {
      uint64_t word;
      CASE_CUDA_OK(ctx, cudaMemcpy(&word, (char *)mem + SLOT_BASE + 8 * r, 8, cudaMemcpyDeviceToHost));
      CASE_CHECK(ctx, word == 0x5100000000ull + (uint64_t)(t.lsa_first + r), "%s: the word LSA rank %d "
                 "wrote through its pointer into this window reads 0x%llx", lay, r, (unsigned long long)word);
    }
    ctx_note(ctx, "%s: read and wrote %d LSA ranks' windows", lay, t.lsa_size);
    if (!ctx_barrier(ctx))
      return;
  }
}

void case_WIN_03(case_ctx_t *ctx)
{
  int outside = 0;

  for (int k = 0; k < NLAYOUTS; k++) {
    n4c_comm_t *comm;
    n4c_window_t *win;
    case_topo_t t;
    void *mem, *p, *l;
    char lay[64];

    if (layout_skipped(ctx, layouts[k]))
      continue;
    if (!rma_comm_nodes(ctx, layouts[k], &comm) || !ctx_topology(ctx, comm, &t) ||
        !rma_window(ctx, comm, WBYTES, N4C_WIN_COLL_SYMMETRIC, &mem, &win))
      return;
    layout_name(lay, sizeof lay, layouts[k], &t);
    for (int peer = 0; peer < ctx->nranks; peer++) {
      CASE_OK(ctx, n4c_window_peer_ptr(win, peer, 64, &p));
      if (!case_topo_lsa_peer(&t, peer)) {
        CASE_CHECK(ctx, p == NULL, "%s: peer %d is outside this rank's LSA team (ranks %d..%d), but its "
                   "pointer is %p", lay, peer, t.lsa_first, t.lsa_first + t.lsa_size - 1, p);
        outside++;
        continue;
      }
      CASE_OK(ctx, n4c_window_lsa_ptr(win, peer - t.lsa_first, 0, &l));
      CASE_CHECK(ctx, p != NULL && p == (char *)l + 64, "%s: peer_ptr(%d, 64) is %p, "
                 "lsa_ptr(%d, 0) + 64 is %p", lay, peer, p, peer - t.lsa_first, (void *)((char *)l + 64));
    }
    if (!ctx_barrier(ctx))
      return;
  }
  if (outside == 0)
    ctx_note(ctx, "every peer was in this rank's LSA team: the None half is not seen");
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
  case_topo_t t;
  void *mem, *p;

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  if (!ctx_topology(ctx, comm, &t))
    return;
  if (!rma_window(ctx, comm, WBYTES, N4C_WIN_COLL_SYMMETRIC, &mem, &win))
    return;
  /* The first LSA rank out of range is the team's size, whatever the
   * layout; ranks of other teams are valid peers (WIN-03). */
  want_nccl_invalid(ctx, n4c_window_lsa_ptr(win, t.lsa_size, 0, &p), "lsa rank = LSA size");
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
  case_topo_t t;
  void *mem, *p;

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  if (!ctx_topology(ctx, comm, &t))
    return;
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
    /* Its own LSA rank in the layout it got (not its world rank). */
    CASE_OK(ctx, n4c_window_lsa_ptr(win, t.lsa_rank, 0, &p));
    CASE_CHECK(ctx, p != NULL, "own LSA pointer (LSA rank %d of %d) NULL", t.lsa_rank, t.lsa_size);
  }
  ctx_barrier(ctx);
}
