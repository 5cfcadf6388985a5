/* tests/devapi_kernels.cu — NCCL's device API from kernels on ncclsim,
 * beyond what the DEVK conformance cases check: the team arithmetic, the
 * cooperation types, symmetric pointers, resource buffers and a library's
 * own barriers (ncclLsaBarrierCreateRequirement,
 * ncclGinBarrierCreateRequirement), the reduce-copy helpers, the C form of
 * GIN (ncclGin_C), shadows, flushAsync and wait, get, the waits with a
 * timeout, the host helpers, and named barriers over shared memory an
 * earlier kernel left. Ranks are threads of this process, driven
 * by one thread. Built by ncclsim-nvcc (tests/devapi.mk). */
#include "devapi_test.h"

/* ---- host: teams and requirements ---- */

static void test_team_arithmetic(void **state) {
  (void)state;
  ncclTeam_t world = {8, 5, 1}, lsa = {4, 1, 1}, rail = {2, 1, 4};
  assert_true(ncclTeamRankIsMember(world, lsa, 3));  /* lsa member 3 is world rank 7 */
  assert_int_equal(ncclTeamRankToTeam(world, lsa, 3), 7);
  assert_int_equal(ncclTeamRankToTeam(lsa, rail, 0), -3); /* rail member 0 is world rank 1: 4 below lsa rank 1 */
  assert_false(ncclTeamRankIsMember(lsa, rail, 0));  /* world rank 1 is not in 4..7 */
  assert_true(ncclTeamRankIsMember(rail, world, 1)); /* world 1 is on rank 5's rail */
  assert_false(ncclTeamRankIsMember(rail, world, 2));
  ncclTeam_t inner = ncclTeamInnerFactor(world, 4), outer = ncclTeamOuterFactor(world, 4);
  assert_int_equal(inner.nRanks, 4);
  assert_int_equal(inner.rank, 1);
  assert_int_equal(inner.stride, 1);
  assert_int_equal(outer.nRanks, 2);
  assert_int_equal(outer.rank, 1);
  assert_int_equal(outer.stride, 4);
  /* world minus the rail {1, 5}: 0 2 3 4 6 7 */
  int want[] = {0, 2, 3, 4, 6, 7};
  for (int i = 0; i < 6; i++) assert_int_equal(ncclTeamRankInDifference(world, rail, i), want[i]);
  /* world minus the LSA team {4..7}: 0 1 2 3 */
  for (int i = 0; i < 4; i++) assert_int_equal(ncclTeamRankInDifference(world, lsa, i), i);
  assert_int_equal(ncclGetResourceBufferOffset(3), 384);
}

static void test_requirement_helpers(void **state) {
  (void)state;
  ncclTeam_t team = {4, 0, 1};
  ncclLsaBarrierHandle_t lh;
  ncclDevResourceRequirements_t q;
  assert_int_equal(ncclLsaBarrierCreateRequirement(team, 3, &lh, &q), ncclSuccess);
  assert_int_equal(q.bufferSize, (3 * 3 + 3 * 4) * 4);
  assert_ptr_equal(q.outBufferHandle, &lh.bufHandle);
  assert_int_equal(lh.nBarriers, 3);
  ncclGinBarrierHandle_t gh;
  assert_int_equal(ncclGinBarrierCreateRequirement(nullptr, team, 2, &gh, &q), ncclSuccess);
  assert_int_equal(q.ginSignalCount, 8);
  assert_ptr_equal(q.outGinSignalStart, &gh.signal0);
  assert_int_equal(ncclLLA2ACalcSlots(10, 12), 20);
  ncclLLA2AHandle_t ah;
  assert_int_equal(ncclLLA2ACreateRequirement(3, 20, &ah, &q), ncclSuccess);
  assert_int_equal(q.bufferSize, 3 * 41 * 16);
  assert_int_equal(ah.nSlots, 20);
  /* ncclsim checks what NCCL does not */
  assert_int_equal(ncclLsaBarrierCreateRequirement(team, -1, &lh, &q), ncclInvalidArgument);
  assert_int_equal(ncclLLA2ACreateRequirement(1, 2, nullptr, &q), ncclInvalidArgument);
}

/* ---- kernels ---- */

__device__ int coopOut[64];

/* Each coop type's rank and size, and a bcast from its rank 1 (32 threads). */
__global__ void coops() {
  int t = threadIdx.x;
  ncclCoopTile<8> tile;
  ncclCoopLanes lanes{0x0000ffffu};
  ncclCoopWarpSpan span{0, 1, 3};
  ncclCoopCta cta;
  ncclCoopAny any{tile};
  int v = ncclCoopBcast(tile, t * 10, 1);
  if (tile.thread_rank() != t % 8 || tile.size() != 8 || any.thread_rank() != t % 8 || any.size() != 8) v = -1;
  span.sync();
  int w = ncclCoopBcast(span, t + 100, 1);
  int x = ncclCoopBcast(cta, t + 1000, 5);
  if (t < 16) {
    int y = ncclCoopBcast(lanes, t + 7, 2);
    if (lanes.thread_rank() != t || lanes.size() != 16 || y != 9) v = -2;
  }
  coopOut[t] = (w == 101 && x == 1005 && cta.size() == 32 && span.size() == 32) ? v : -3;
}

static void test_coop(void **state) {
  (void)state;
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
  coops<<<1, 32>>>();
  assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
  int out[64];
  assert_int_equal(cudaMemcpyFromSymbol(out, coopOut, sizeof out), cudaSuccess);
  for (int t = 0; t < 32; t++) assert_int_equal(out[t], (t / 8 * 8 + 1) * 10);
}

/* A block's shared memory is not zeroed, and the worker keeps it from one
 * launch to the next: a named barrier (ncclCoopWarpSpan::sync) must start
 * afresh over what an earlier kernel left there (a regression: it counted
 * arrivals from that junk, and waited forever). */
__global__ void scribble(int *sink) {
  __shared__ unsigned junk[1024];
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) junk[i] = 0xbebebebeu + i % 3;
  __syncthreads();
  if (threadIdx.x == 0) *sink = (int)junk[threadIdx.x + 7];
}
__global__ void spanAfterJunk(int *out) {
  ncclCoopWarpSpan span{0, 2, 0};
  span.sync();
  span.sync();
  if (threadIdx.x == 0) *out = 1;
}

static void test_named_barrier_over_junk(void **state) {
  (void)state;
  int *out;
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
  assert_int_equal(cudaMallocHost(&out, 2 * sizeof(int)), cudaSuccess);
  out[1] = 0;
  scribble<<<1, 64>>>(&out[0]);
  spanAfterJunk<<<1, 64>>>(&out[1]);
  assert_string_equal(cudaGetErrorName(cudaDeviceSynchronize()), "cudaSuccess");
  assert_int_equal(out[1], 1);
  cudaFreeHost(out);
}

/* Symmetric pointers and resource buffers: a barrier of a library's own
 * (from ncclLsaBarrierCreateRequirement) in the resource buffers, and the
 * buffer's symmetric pointer. */
__global__ void ownBarrier(ncclDevComm dc, ncclLsaBarrierHandle bh, ncclDevResourceHandle buf, int *ok) {
  ncclTeam lsa = ncclTeamLsa(dc);
  ncclSymPtr<int> p = ncclGetResourceBuffer(dc, buf);
  int *mine = p.localPtr();
  ncclSymPtr<int> q = p + 3;
  bool good = q.offset == p.offset + 12 && q - p == 3 && (q -= 3) == p && mine == p.lsaPtr(dc.lsaRank);
  /* every rank writes its rank into slot [lsaRank] of every peer, then the barrier, then reads */
  for (int r = 0; r < lsa.nRanks; r++) p.lsaPtr(r)[dc.lsaRank] = dc.rank + 1;
  ncclLsaBarrierSession<ncclCoopThread> bar{ncclCoopThread(), dc, lsa, bh, 0};
  bar.sync(ncclCoopThread(), cuda::memory_order_acq_rel);
  for (int r = 0; r < lsa.nRanks; r++) good = good && mine[r] == ncclTeamRankToWorld(dc, lsa, r) + 1;
  good = good && ncclGetResourceBufferLocalPointer(dc, buf) == mine &&
         ncclGetResourceBufferPeerPointer(dc, buf, lsa, 0) == p.peerPtr(lsa, 0);
  *ok = good;
}

static void test_resource_barrier(void **state) {
  (void)state;
  Ranks k;
  k.init(3, 0);
  ncclLsaBarrierHandle bh;
  ncclDevResourceRequirements qb, qbuf;
  ncclDevResourceHandle buf;
  assert_int_equal(ncclLsaBarrierCreateRequirement(ncclTeamLsa(k.comm[0]), 1, &bh, &qb), ncclSuccess);
  memset(&qbuf, 0, sizeof qbuf);
  qbuf.bufferSize = 64;
  qbuf.outBufferHandle = &buf;
  qb.next = &qbuf;
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.resourceRequirementsList = &qb;
  k.devcomms(reqs);
  int *ok[3];
  for (int r = 0; r < 3; r++) {
    assert_int_equal(cudaSetDevice(r), cudaSuccess);
    assert_int_equal(cudaMalloc(&ok[r], sizeof(int)), cudaSuccess);
  }
  k.ok([&](int r) { ownBarrier<<<1, 1, 0, k.stream[r]>>>(k.dc[r], bh, buf, ok[r]); });
  for (int r = 0; r < 3; r++) {
    int v = 0;
    assert_int_equal(cudaMemcpy(&v, ok[r], sizeof v, cudaMemcpyDeviceToHost), cudaSuccess);
    assert_int_equal(v, 1);
    cudaFree(ok[r]);
  }
  k.fini();
}

/* The reduce-copy helpers: src on every LSA rank holds rank+1 in each
 * element; the sum and copies land where they should. */
__global__ void reduceCopy(ncclDevComm dc, ncclWindow_t src, ncclWindow_t dst, int n, float *local) {
  ncclCoopCta cta;
  float *mine = (float *)ncclGetLocalPointer(src, 0);
  for (int i = threadIdx.x; i < n; i += blockDim.x) mine[i] = (float)(dc.rank + 1);
  ncclLsaBarrierSession<ncclCoopCta> bar{cta, dc, ncclTeamTagLsa(), 0};
  bar.sync(cta, cuda::memory_order_acq_rel);
  /* every rank reduces its share of the elements and copies the sum to every rank's dst */
  int share = n / dc.lsaSize, at = dc.lsaRank * share;
  ncclLsaReduceSumCopy<float>(cta, ncclSymPtr<float>(src, at * sizeof(float)), ncclSymPtr<float>(dst, at * sizeof(float)),
                              share, dc);
  ncclLsaReduceSum<float>(cta, src, 0, local, n, ncclTeamLsa(dc));
  ncclLocalCopy<float>(cta, local, 2, local + n, (size_t)n, n); /* local -> local+n and local+2n */
  bar.sync(cta, cuda::memory_order_acq_rel);
}

static void test_reduce_copy(void **state) {
  (void)state;
  Ranks k;
  k.init(2, 0);
  enum { N = 64 };
  ncclWindow_t src[2], dst[2];
  void *sbuf[2], *dbuf[2];
  k.window(N * sizeof(float), src, sbuf);
  k.window(N * sizeof(float), dst, dbuf);
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.lsaBarrierCount = 1;
  k.devcomms(reqs);
  float *local[2];
  for (int r = 0; r < 2; r++) {
    assert_int_equal(cudaSetDevice(r), cudaSuccess);
    assert_int_equal(cudaMalloc(&local[r], 3 * N * sizeof(float)), cudaSuccess);
  }
  k.ok([&](int r) { reduceCopy<<<1, 16, 0, k.stream[r]>>>(k.dc[r], src[r], dst[r], N, local[r]); });
  for (int r = 0; r < 2; r++) {
    float h[N], l[3 * N];
    assert_int_equal(cudaMemcpy(h, dbuf[r], sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    assert_int_equal(cudaMemcpy(l, local[r], sizeof l, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < N; i++) assert_true(h[i] == 3.0f);
    for (int i = 0; i < 3 * N; i++) assert_true(l[i] == 3.0f);
    cudaFree(local[r]);
  }
  k.unwindow(src, sbuf);
  k.unwindow(dst, dbuf);
  k.fini();
}

/* GIN through its C form, shadows, flushAsync and wait, get, and a GIN
 * barrier of a library's own (ncclGinBarrierCreateRequirement). */
__global__ void ginC(ncclDevComm dc, ncclWindow_t w, ncclGinBarrierHandle gbh, int *ok) {
  ncclTeam world = ncclTeamWorld(dc);
  int me = dc.rank, peer = (me + 1) % dc.nRanks;
  ncclGin_C c(dc, NCCL_GIN_BACKEND_MASK_ALL, 1);
  uint64_t *mine = (uint64_t *)ncclGetLocalPointer(w, 0);
  mine[0] = 0x1000 + me;
  /* a put of word 0 into the peer's word 1, with signal 0 (add 5) and counter 0 */
  ncclGinPut(&c, world, peer, w, 8, w, 0, 8, true, 0, ncclGinSignalAdd, 5, true, 0, ncclCoopAny(ncclCoopThread()), false,
             nullptr, cuda::thread_scope_thread, cuda::thread_scope_device);
  ncclGinWaitSignal(&c, ncclCoopAny(ncclCoopThread()), 0, 5, 64, cuda::memory_order_acquire);
  ncclGinWaitCounter(&c, ncclCoopAny(ncclCoopThread()), 0, 1, 56, cuda::memory_order_acquire);
  bool good = mine[1] == 0x1000 + (me + dc.nRanks - 1) % dc.nRanks && ncclGinReadCounter(&c, 0, 56, cuda::memory_order_acquire) == 1;
  /* shadows: follow the signal */
  ncclGin gin{dc, 1};
  uint64_t before = 0, delta = 0;
  gin.waitSignalFollowShadow(ncclCoopThread(), 0, (uint64_t)5, &before, &delta);
  good = good && before == 0 && delta == 5 && *gin.getSignalShadowPtr(0) == 5;
  gin.increaseSignalShadow(0, 2);
  good = good && *ncclGinGetSignalShadowPtr(&c, 0) == 7;
  ncclGinResetSignal(&c, 0);
  good = good && ncclGinReadSignal(&c, 0, 64, cuda::memory_order_acquire) == 0 && *gin.getSignalShadowPtr(0) == 0;
  /* putValue in the C form, and a flushAsync/wait */
  ncclGinPutValue(&c, world, peer, w, 16, 0xabcdULL, 2, true, 1, ncclGinSignalInc, 1, ncclCoopAny(ncclCoopThread()), false,
                  nullptr, cuda::thread_scope_thread, cuda::thread_scope_device);
  ncclGinRequest_t req;
  gin.flushAsync(world, peer, &req);
  gin.wait(req);
  gin.waitSignal(ncclCoopThread(), 1, 1);
  good = good && ((uint16_t *)mine)[8] == 0xabcd;
  /* every rank's words are in: a barrier, then a get of the peer's word 1 into word 3 */
  ncclGinBarrierSession<ncclCoopThread> bar{ncclCoopThread(), gin, world, gbh, 0};
  bar.sync(ncclCoopThread(), cuda::memory_order_acq_rel, ncclGinFenceLevel::Put);
  gin.get(world, peer, w, 8, w, 24, 8);
  gin.flush(ncclCoopThread());
  good = good && mine[3] == 0x1000 + me; /* the peer's word 1 holds what this rank put */
  bar.sync(ncclCoopThread(), cuda::memory_order_acq_rel, ncclGinFenceLevel::None);
  ncclGinResetCounter(&c, 0);
  good = good && gin.readCounter(0) == 0;
  *ok = good;
}

static void gin_c(int type) {
  Ranks k;
  ncclsimCommOptions_t o = gin_options(type);
  k.init(3, 0, &o);
  ncclWindow_t w[3];
  void *buf[3];
  k.window(64, w, buf);
  ncclGinBarrierHandle gbh;
  ncclDevResourceRequirements q;
  assert_int_equal(ncclGinBarrierCreateRequirement(k.comm[0], ncclTeamWorld(k.comm[0]), 1, &gbh, &q), ncclSuccess);
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.ginConnectionType = NCCL_GIN_CONNECTION_FULL;
  reqs.ginSignalCount = 2;
  reqs.ginCounterCount = 1;
  reqs.ginContextCount = 2;
  reqs.resourceRequirementsList = &q;
  k.devcomms(reqs);
  int *ok[3];
  for (int r = 0; r < 3; r++) {
    assert_int_equal(cudaSetDevice(r), cudaSuccess);
    assert_int_equal(cudaMalloc(&ok[r], sizeof(int)), cudaSuccess);
  }
  k.ok([&](int r) { ginC<<<1, 1, 0, k.stream[r]>>>(k.dc[r], w[r], gbh, ok[r]); });
  for (int r = 0; r < 3; r++) {
    int v = 0;
    assert_int_equal(cudaMemcpy(&v, ok[r], sizeof v, cudaMemcpyDeviceToHost), cudaSuccess);
    assert_int_equal(v, 1);
    cudaFree(ok[r]);
  }
  k.unwindow(w, buf);
  k.fini();
}
static void test_gin_c_proxy(void **state) {
  (void)state;
  gin_c(NCCL_GIN_TYPE_PROXY);
}
static void test_gin_c_gpi(void **state) {
  (void)state;
  gin_c(NCCL_GIN_TYPE_GPI);
}

/* The waits with a timeout: ncclTimeout when the peer never arrives, and
 * ncclSuccess once it has. Rank 1's kernel runs only after rank 0's. */
__global__ void timedBarrier(ncclDevComm dc, int mode, int *res) {
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), dc, ncclTeamLsa(dc), dc.lsaBarrier, 0};
  ncclResult_t r = bar.sync(ncclCoopCta(), cuda::memory_order_acq_rel, mode ? 1ull << 40 : 1000);
  if (threadIdx.x == 0) *res = r;
}

static void test_timed_wait(void **state) {
  (void)state;
  Ranks k;
  k.init(2, 0);
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.lsaBarrierCount = 1;
  k.devcomms(reqs);
  int *res, h[2];
  assert_int_equal(cudaMallocHost(&res, 2 * sizeof(int)), cudaSuccess);
  /* rank 0 alone: a short timeout runs out */
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
  timedBarrier<<<1, 8, 0, k.stream[0]>>>(k.dc[0], 0, &res[0]);
  assert_int_equal(cudaStreamSynchronize(k.stream[0]), cudaSuccess);
  memcpy(h, res, sizeof h);
  assert_int_equal(h[0], ncclTimeout);
  /* then both, with a long one: rank 1's arrival meets rank 0's wait */
  k.ok([&](int r) { timedBarrier<<<1, 8, 0, k.stream[r]>>>(k.dc[r], 1, &res[r]); });
  memcpy(h, res, sizeof h);
  assert_int_equal(h[0], ncclSuccess);
  assert_int_equal(h[1], ncclSuccess);
  cudaFreeHost(res);
  k.fini();
}

/* Window lookups in a kernel: ncclFindWindow, and ncclGetPeerPointer for a
 * rank outside the LSA team (2 nodes of 2). */
__global__ void findWindow(ncclDevComm dc, ncclWindow_t w, void *user, int *ok) {
  char *p = (char *)user + 100;
  ncclWindow_t found = ncclFindWindow(ncclCoopThread(), dc, p);
  int other = (dc.rank + 2) % 4; /* on the other node */
  *ok = found == w && ncclGetPeerPointer(w, 0, other) == nullptr && ncclGetPeerPointer(w, 0, dc.rank) != nullptr &&
        ncclGetLsaMultimemPointer(w, 64, dc) == (void *)64; /* no multicast: the offset from NULL, as NCCL's */
}

static void test_find_window(void **state) {
  (void)state;
  Ranks k;
  ncclsimCommOptions_t o = NCCLSIM_COMM_OPTIONS_INIT;
  o.ranksPerNode = 2;
  k.init(4, 0, &o);
  ncclWindow_t w[4];
  void *buf[4];
  k.window(256, w, buf);
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  k.devcomms(reqs);
  int *ok[4];
  for (int r = 0; r < 4; r++) {
    assert_int_equal(cudaSetDevice(r), cudaSuccess);
    assert_int_equal(cudaMalloc(&ok[r], sizeof(int)), cudaSuccess);
  }
  k.ok([&](int r) { findWindow<<<1, 1, 0, k.stream[r]>>>(k.dc[r], w[r], buf[r], ok[r]); });
  for (int r = 0; r < 4; r++) {
    int v = 0;
    assert_int_equal(cudaMemcpy(&v, ok[r], sizeof v, cudaMemcpyDeviceToHost), cudaSuccess);
    assert_int_equal(v, 1);
    assert_int_equal(ncclTeamRankToWorld(k.comm[r], ncclTeamLsa(k.comm[r]), 0), r / 2 * 2);
    assert_int_equal(ncclTeamRankToLsa(k.comm[r], ncclTeamWorld(k.comm[r]), r), r % 2);
    cudaFree(ok[r]);
  }
  void *mm = (void *)1;
  ncclMultimemHandle_t none = {nullptr};
  assert_int_equal(ncclGetMultimemDevicePointer(w[0], 0, none, &mm), ncclInvalidArgument);
  assert_null(mm);
  k.unwindow(w, buf);
  k.fini();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_team_arithmetic), cmocka_unit_test(test_requirement_helpers),
      cmocka_unit_test(test_coop),            cmocka_unit_test(test_resource_barrier),
      cmocka_unit_test(test_reduce_copy),     cmocka_unit_test(test_gin_c_proxy),
      cmocka_unit_test(test_gin_c_gpi),       cmocka_unit_test(test_timed_wait),
      cmocka_unit_test(test_find_window),     cmocka_unit_test(test_named_barrier_over_junk),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
