/*
 * fault_alloc.c — SQLite-style allocation-failure loop over nccl4c on
 * ncclsim.
 *
 * For each operation and each of the two allocation hooks (ncclsim's
 * sim_malloc & co., nccl4c's n4c_malloc), N = 1, 2, ... fails the Nth
 * allocation the operation makes, until an N is never reached. After each
 * injected failure the operation must report it (N4C_ENOMEM from nccl4c,
 * ncclSystemError from ncclsim, in the call or on the stream), the
 * communicators must still be destroyable, nothing may leak (ASan at exit;
 * ncclsimMemStats and n4c_test_alloc_live here), and doing the operation
 * again without injection must succeed.
 *
 * A failure on one rank leaves its peer waiting: NCCLSIM_TIMEOUT is cut
 * short so that the peer gives up quickly. The peer's own status may then
 * be a timeout or remote error instead (see peer_ok()).
 *
 * Retry: a failed init or registration is retried on the same
 * communicators. Work that failed on a stream poisons the stream and
 * leaves an async error on the communicator, which (as with real NCCL)
 * must then be destroyed: put_signal and allreduce retry on new ones.
 */
#include "config.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <ncclsim.h>

#include "n4c_test.h"
#include "nccl4c.h"

enum { NR = 2, COUNT = 256, MAX_N = 10000 };

typedef enum { HOOK_SIM, HOOK_LIB } hook_t;
static const char *const hook_name[] = { "ncclsim", "nccl4c" };

/* ---- injection and leak accounting ---- */

static size_t base_mem_count, base_mem_bytes;
/* Injected failures after which the operation still succeeded. */
static unsigned absorbed;
static int64_t base_live;

static void snapshot(void) {
  ncclsimMemStats(&base_mem_count, &base_mem_bytes);
  base_live = n4c_test_alloc_live();
}

static void assert_no_leaks(void) {
  size_t count, bytes;
  ncclsimMemStats(&count, &bytes);
  assert_int_equal(count, base_mem_count);
  assert_int_equal(bytes, base_mem_bytes);
  assert_int_equal(n4c_test_alloc_live(), base_live);
}

static void arm(hook_t h, uint64_t n) {
  ncclsimAllocFailAfter(h == HOOK_SIM ? n : 0);
  n4c_test_alloc_fail_after(h == HOOK_LIB ? n : 0);
}

/* Disarms both hooks; true if the armed one reached its Nth allocation. */
static bool disarm(hook_t h, uint64_t n) {
  uint64_t sim = ncclsimAllocFailAfter(0), lib = n4c_test_alloc_fail_after(0);
  return (h == HOOK_SIM ? sim : lib) >= n;
}

/* The status of the rank whose allocation failed. */
static bool is_enomem(n4c_status_t st, ncclResult_t nr) {
  return st == N4C_ENOMEM || (st == N4C_ENCCL && nr == ncclSystemError);
}

/* A rank whose peer failed: it may succeed (its part was done), fail with
 * the allocation failure propagated through the clique, or give up. */
static bool peer_ok(n4c_status_t st, ncclResult_t nr) {
  return st == N4C_OK || is_enomem(st, nr) ||
         (st == N4C_ENCCL && (nr == ncclRemoteError || nr == ncclTimeout ||
                              nr == ncclInvalidUsage || nr == ncclInternalError));
}

static bool cuda_failed_ok(cudaError_t ce) {
  return ce == cudaSuccess || ce == cudaErrorMemoryAllocation || ce == cudaErrorLaunchFailure ||
         ce == cudaErrorUnknown || ce == cudaErrorTimeout;
}

/* ---- fixtures (made without injection) ---- */

struct env {
  n4c_comm_t *comm[NR];
  void *mem[NR];
  n4c_buffer_t buf[NR];
  n4c_window_t *win[NR];
  cudaStream_t stream[NR];
};

static void env_comms(struct env *e) {
  *e = (struct env){ 0 };
  assert_int_equal(n4c_comm_init_all(e->comm, NR, NULL), N4C_OK);
}

static void env_mem(struct env *e) {
  for (int r = 0; r < NR; r++) {
    assert_int_equal(cudaSetDevice(r), cudaSuccess);
    /* Windows need memory from NCCL's allocator. */
    assert_int_equal(n4c_mem_alloc(2 * COUNT * sizeof(float), r, &e->mem[r]), N4C_OK);
    assert_int_equal(cudaMemset(e->mem[r], 0, 2 * COUNT * sizeof(float)), cudaSuccess);
    assert_int_equal(cudaStreamCreate(&e->stream[r]), cudaSuccess);
    e->buf[r] = n4c_buffer(e->mem[r], 2 * COUNT, ncclFloat32, r);
  }
}

static n4c_status_t register_windows(struct env *e) {
  n4c_status_t st[NR], end;
  assert_int_equal(n4c_group_start(), N4C_OK);
  for (int r = 0; r < NR; r++)
    st[r] = n4c_comm_register_window(e->comm[r], &e->buf[r], N4C_WIN_COLL_SYMMETRIC, &e->win[r]);
  end = n4c_group_end();
  for (int r = 0; r < NR; r++)
    if (st[r] != N4C_OK) end = st[r];
  return end;
}

static void free_windows(struct env *e) {
  for (int r = 0; r < NR; r++) {
    n4c_resource_free(N4C_RESOURCE(e->win[r]));
    e->win[r] = NULL;
  }
}

static void env_free(struct env *e) {
  free_windows(e);
  for (int r = 0; r < NR; r++) {
    /* Destroy must work whatever state the failure left. */
    assert_int_equal(n4c_comm_free(e->comm[r]), N4C_OK);
    if (e->stream[r]) {
      cudaSetDevice(r);
      cudaStreamDestroy(e->stream[r]);
    }
    if (e->mem[r]) assert_int_equal(n4c_mem_free(e->mem[r]), N4C_OK);
  }
  *e = (struct env){ 0 };
}

/* ---- the loop ---- */

/* One attempt: sets up, arms `h` at `n` around the operation only, checks
 * the outcome and cleans up. Returns whether the Nth allocation was hit. */
typedef bool (*attempt_fn)(hook_t h, uint64_t n);

static void fault_loop(const char *what, attempt_fn fn) {
  ncclsimParamSet("TIMEOUT", "1");
  for (int hi = HOOK_SIM; hi <= HOOK_LIB; hi++) {
    hook_t h = (hook_t)hi;
    uint64_t n = 1;
    absorbed = 0;
    snapshot();
    while (fn(h, n)) {
      assert_no_leaks();
      assert_true(++n < MAX_N);
    }
    assert_no_leaks();
    print_message("%s: %llu failure points of %s allocations\n", what,
                  (unsigned long long)(n - 1), hook_name[h]);
    assert_int_equal(absorbed, 0); /* every failure was reported */
  }
  ncclsimParamSet("TIMEOUT", NULL);
}

/* Communicator init, one thread: ncclCommInitAll. */
static bool attempt_init_all(hook_t h, uint64_t n) {
  n4c_comm_t *comm[NR] = { 0 };
  arm(h, n);
  n4c_status_t st = n4c_comm_init_all(comm, NR, NULL);
  ncclResult_t nr = n4c_last_nccl_result();
  bool hit = disarm(h, n);
  if (hit && st == N4C_OK) absorbed++;
  if (hit && st != N4C_OK) {
    assert_true(is_enomem(st, nr));
    assert_null(comm[0]);
    assert_null(comm[1]);
    assert_int_equal(n4c_comm_init_all(comm, NR, NULL), N4C_OK); /* retry */
  } else {
    assert_int_equal(st, N4C_OK);
  }
  for (int r = 0; r < NR; r++) assert_int_equal(n4c_comm_free(comm[r]), N4C_OK);
  return hit;
}

/* Communicator init, two threads: ncclCommInitRank. */
struct init_rank {
  int rank;
  const ncclUniqueId *id;
  n4c_comm_t *comm;
  n4c_status_t st;
  ncclResult_t nr;
};

static void *init_rank_main(void *p) {
  struct init_rank *t = p;
  cudaSetDevice(t->rank);
  t->st = n4c_comm_init(&t->comm, NR, t->rank, t->id, 1, NULL);
  t->nr = n4c_last_nccl_result();
  return NULL;
}

static int init_ranks(struct init_rank *t) {
  static ncclUniqueId id;
  pthread_t th[NR];
  assert_int_equal(n4c_get_unique_id(&id), N4C_OK);
  for (int r = 0; r < NR; r++) {
    t[r] = (struct init_rank){ r, &id, NULL, N4C_OK, ncclSuccess };
    pthread_create(&th[r], NULL, init_rank_main, &t[r]);
  }
  int failed = 0;
  for (int r = 0; r < NR; r++) {
    pthread_join(th[r], NULL);
    failed += t[r].st != N4C_OK;
  }
  return failed;
}

static bool attempt_init_rank(hook_t h, uint64_t n) {
  struct init_rank t[NR];
  arm(h, n);
  int failed = init_ranks(t);
  bool hit = disarm(h, n);
  if (hit && failed == 0) absorbed++;
  if (!hit) assert_int_equal(failed, 0);
  if (failed) {
    int enomem = 0;
    for (int r = 0; r < NR; r++) {
      enomem += is_enomem(t[r].st, t[r].nr);
      assert_true(peer_ok(t[r].st, t[r].nr));
      if (t[r].st != N4C_OK) assert_null(t[r].comm);
    }
    assert_true(enomem >= 1);
  }
  for (int r = 0; r < NR; r++) assert_int_equal(n4c_comm_free(t[r].comm), N4C_OK);
  if (failed) {
    assert_int_equal(init_ranks(t), 0); /* retry */
    for (int r = 0; r < NR; r++) assert_int_equal(n4c_comm_free(t[r].comm), N4C_OK);
  }
  return hit;
}

/* Window registration on both ranks in one group. */
static bool attempt_window(hook_t h, uint64_t n) {
  struct env e;
  env_comms(&e);
  env_mem(&e);
  arm(h, n);
  n4c_status_t st = register_windows(&e);
  ncclResult_t nr = n4c_last_nccl_result();
  bool hit = disarm(h, n);
  if (hit && st == N4C_OK) absorbed++;
  if (hit && st != N4C_OK) {
    /* A rank's own failure comes first, else ncclGroupEnd's. */
    assert_true(is_enomem(st, nr));
    free_windows(&e);
    /* The communicators survive a failed registration. */
    assert_int_equal(register_windows(&e), N4C_OK);
  } else {
    assert_int_equal(st, N4C_OK);
  }
  env_free(&e);
  return hit;
}

/* put_signal from rank 0 into rank 1's window, wait_signal on rank 1, in
 * one group: one thread drives both ranks, and their first one-sided
 * operations must meet (on a GPU, a lone first put_signal would wait for
 * rank 1 forever). */
static n4c_status_t put_and_wait(struct env *e, n4c_status_t *sync_st) {
  n4c_buffer_t local = n4c_buffer(e->mem[0], COUNT, ncclFloat32, 0);
  n4c_wait_signal_desc_t desc = N4C_WAIT_SIGNAL_DESC(0);
  assert_int_equal(n4c_group_start(), N4C_OK);
  n4c_status_t put = n4c_comm_put_signal(e->comm[0], &local, 1, e->win[0], COUNT, 0, 0, 0,
                                         e->stream[0]);
  ncclResult_t put_nr = n4c_last_nccl_result();
  n4c_status_t wait = n4c_comm_wait_signal(e->comm[1], &desc, 1, e->stream[1]);
  ncclResult_t wait_nr = n4c_last_nccl_result();
  n4c_status_t end = n4c_group_end();
  ncclResult_t end_nr = n4c_last_nccl_result();
  cudaError_t ce0 = cudaStreamSynchronize(e->stream[0]);
  cudaError_t ce1 = cudaStreamSynchronize(e->stream[1]);
  *sync_st = ce0 == cudaSuccess && ce1 == cudaSuccess ? N4C_OK : N4C_ECUDA;
  assert_true(cuda_failed_ok(ce0) && cuda_failed_ok(ce1));
  if (put != N4C_OK) {
    assert_true(is_enomem(put, put_nr));
    return put;
  }
  if (wait != N4C_OK) {
    assert_true(is_enomem(wait, wait_nr));
    return wait;
  }
  if (end != N4C_OK) assert_true(is_enomem(end, end_nr));
  return end;
}

static bool attempt_signal(hook_t h, uint64_t n) {
  struct env e;
  n4c_status_t sync_st;
  env_comms(&e);
  env_mem(&e);
  assert_int_equal(register_windows(&e), N4C_OK);
  arm(h, n);
  n4c_status_t st = put_and_wait(&e, &sync_st);
  bool hit = disarm(h, n);
  if (hit && st == N4C_OK && sync_st == N4C_OK) absorbed++;
  if (!hit) {
    assert_int_equal(st, N4C_OK);
    assert_int_equal(sync_st, N4C_OK);
  } else if (st != N4C_OK || sync_st != N4C_OK) {
    /* Work that failed on the stream leaves an async error behind. */
    ncclResult_t ae[NR];
    for (int r = 0; r < NR; r++) n4c_comm_get_async_error(e.comm[r], &ae[r]);
    if (st == N4C_OK) assert_true(ae[0] != ncclSuccess || ae[1] != ncclSuccess);
    env_free(&e); /* retry on new communicators */
    env_comms(&e);
    env_mem(&e);
    assert_int_equal(register_windows(&e), N4C_OK);
    assert_int_equal(put_and_wait(&e, &sync_st), N4C_OK);
    assert_int_equal(sync_st, N4C_OK);
  }
  env_free(&e);
  return hit;
}

/* Allreduce over both ranks in one group. */
static n4c_status_t allreduce(struct env *e, n4c_status_t *sync_st) {
  n4c_status_t st[NR], end;
  assert_int_equal(n4c_group_start(), N4C_OK);
  for (int r = 0; r < NR; r++)
    st[r] = n4c_comm_allreduce(e->comm[r], &e->buf[r], &e->buf[r], ncclSum, e->stream[r]);
  end = n4c_group_end();
  ncclResult_t nr = n4c_last_nccl_result();
  *sync_st = N4C_OK;
  for (int r = 0; r < NR; r++) {
    cudaError_t ce = cudaStreamSynchronize(e->stream[r]);
    if (!cuda_failed_ok(ce)) print_error("rank %d: %s\n", r, cudaGetErrorName(ce));
    assert_true(cuda_failed_ok(ce));
    if (ce != cudaSuccess) *sync_st = N4C_ECUDA;
  }
  for (int r = 0; r < NR; r++)
    if (st[r] != N4C_OK) return st[r];
  if (end != N4C_OK) assert_true(is_enomem(end, nr));
  return end;
}

static bool attempt_allreduce(hook_t h, uint64_t n) {
  struct env e;
  n4c_status_t sync_st;
  env_comms(&e);
  env_mem(&e);
  arm(h, n);
  n4c_status_t st = allreduce(&e, &sync_st);
  bool hit = disarm(h, n);
  if (hit && st == N4C_OK && sync_st == N4C_OK) absorbed++;
  if (!hit) {
    assert_int_equal(st, N4C_OK);
    assert_int_equal(sync_st, N4C_OK);
  } else if (st != N4C_OK || sync_st != N4C_OK) {
    ncclResult_t ae[NR];
    for (int r = 0; r < NR; r++) n4c_comm_get_async_error(e.comm[r], &ae[r]);
    if (st == N4C_OK) assert_true(ae[0] != ncclSuccess || ae[1] != ncclSuccess);
    env_free(&e);
    env_comms(&e);
    env_mem(&e);
    assert_int_equal(allreduce(&e, &sync_st), N4C_OK);
    assert_int_equal(sync_st, N4C_OK);
  }
  env_free(&e);
  return hit;
}

#ifdef HAVE_NCCL_DEVCOMM /* else lib/ has no device communicators */
/* Device communicator: collective, so one thread per rank. */
struct dev_rank {
  n4c_comm_t *comm;
  int rank;
  n4c_dev_comm_t *dc;
  n4c_status_t st;
  ncclResult_t nr;
};

static void *dev_rank_main(void *p) {
  struct dev_rank *t = p;
  cudaSetDevice(t->rank);
  t->st = n4c_comm_create_dev_comm(t->comm, NULL, &t->dc);
  t->nr = n4c_last_nccl_result();
  return NULL;
}

static int create_dev_comms(struct env *e, struct dev_rank *t) {
  pthread_t th[NR];
  for (int r = 0; r < NR; r++) {
    t[r] = (struct dev_rank){ e->comm[r], r, NULL, N4C_OK, ncclSuccess };
    pthread_create(&th[r], NULL, dev_rank_main, &t[r]);
  }
  int failed = 0;
  for (int r = 0; r < NR; r++) {
    pthread_join(th[r], NULL);
    failed += t[r].st != N4C_OK;
  }
  return failed;
}

static void free_dev_comms(struct dev_rank *t) {
  for (int r = 0; r < NR; r++) n4c_resource_free(N4C_RESOURCE(t[r].dc));
}

static bool attempt_dev_comm(hook_t h, uint64_t n) {
  struct env e;
  struct dev_rank t[NR];
  env_comms(&e);
  arm(h, n);
  int failed = create_dev_comms(&e, t);
  bool hit = disarm(h, n);
  if (hit && failed == 0) absorbed++;
  if (!hit) assert_int_equal(failed, 0);
  if (failed) {
    int enomem = 0;
    for (int r = 0; r < NR; r++) {
      enomem += is_enomem(t[r].st, t[r].nr);
      assert_true(peer_ok(t[r].st, t[r].nr));
      if (t[r].st != N4C_OK) assert_null(t[r].dc);
    }
    assert_true(enomem >= 1);
    free_dev_comms(t);
    env_free(&e);
    env_comms(&e); /* a peer may have given up on the clique: retry anew */
    assert_int_equal(create_dev_comms(&e, t), 0);
  }
  free_dev_comms(t);
  env_free(&e);
  return hit;
}
static void test_dev_comm(void **state) { (void)state; fault_loop("create_dev_comm", attempt_dev_comm); }
#endif

static void test_init_all(void **state) { (void)state; fault_loop("init_all", attempt_init_all); }
static void test_init_rank(void **state) { (void)state; fault_loop("init_rank x2 threads", attempt_init_rank); }
static void test_window(void **state) { (void)state; fault_loop("register_window", attempt_window); }
static void test_signal(void **state) { (void)state; fault_loop("put_signal+wait_signal", attempt_signal); }
static void test_allreduce(void **state) { (void)state; fault_loop("allreduce", attempt_allreduce); }

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_init_all),  cmocka_unit_test(test_init_rank),
    cmocka_unit_test(test_window),    cmocka_unit_test(test_signal),
    cmocka_unit_test(test_allreduce),
#ifdef HAVE_NCCL_DEVCOMM
    cmocka_unit_test(test_dev_comm),
#endif
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
