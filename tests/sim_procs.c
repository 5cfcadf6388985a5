/*
 * tests/sim_procs.c — ranks as processes (sim/util/shm.c): one rank per
 * forked process, through the public API only.
 *
 * main() turns the mode on before anything else, as a user's program
 * would; every test forks its ranks, gives them a unique id through shared
 * memory, and counts what each child reports through its exit status.
 */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include "config.h"
#include "sim.h"
#include "core/core.h"
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <ncclsim.h>
#include <nccl_device.h> /* ncclGetLsaDevicePointer */
#include "slow.h"

static char *self_exe;

typedef struct {
  ncclUniqueId id;
  ncclUniqueId grow_id; /* ncclCommGetUniqueId's, for a new rank */
  _Atomic int grow_ready;
  _Atomic int ready; /* ranks past init */
  _Atomic int step;  /* a test's order of events between its ranks */
  double took[8];    /* seconds, per rank, of what a test times */
  char why[8][256];  /* a child's failure */
} shared_box;

static shared_box *box;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A child's failed check: recorded for the parent, and its exit code. */
#define CHILD_CHECK(rank, cond, ...)                                        \
  do {                                                                      \
    if (!(cond)) {                                                          \
      snprintf(box->why[rank], sizeof box->why[rank], __VA_ARGS__);         \
      _exit(1);                                                             \
    }                                                                       \
  } while (0)

typedef void (*child_fn)(int rank, int n);

/* Forks n ranks running fn after ncclGetUniqueId in the parent; returns
 * how many did not exit 0, and prints their reasons. */
static int run_procs(int n, child_fn fn) {
  memset(box, 0, sizeof *box);
  assert_int_equal(ncclGetUniqueId(&box->id), ncclSuccess);
  pid_t pid[8];
  for (int r = 0; r < n; r++) {
    pid[r] = fork();
    assert_true(pid[r] >= 0);
    if (pid[r] == 0) {
      cudaSetDevice(r);
      fn(r, n);
      _exit(0);
    }
  }
  int bad = 0;
  for (int r = 0; r < n; r++) {
    int st;
    assert_int_equal(waitpid(pid[r], &st, 0), pid[r]);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      bad++;
      fprintf(stderr, "rank %d (pid %d): %s\n", r, (int)pid[r], box->why[r][0] ? box->why[r] : "died");
    }
  }
  return bad;
}

static ncclComm_t join(int rank, int n) {
  ncclComm_t comm;
  ncclResult_t r = ncclCommInitRank(&comm, n, box->id, rank);
  CHILD_CHECK(rank, r == ncclSuccess, "ncclCommInitRank: %s: %s", ncclGetErrorString(r), ncclGetLastError(NULL));
  return comm;
}

/* ------------------------------------------------------------- traffic */

enum { COUNT = 1 << 18 };

static void collectives_body(int rank, int n) {
  ncclComm_t comm = join(rank, n);
  cudaStream_t s;
  CHILD_CHECK(rank, cudaStreamCreate(&s) == cudaSuccess, "cudaStreamCreate");
  float *a, *b, *h = malloc(COUNT * sizeof *h);
  CHILD_CHECK(rank, h && cudaMalloc((void **)&a, COUNT * sizeof *a) == cudaSuccess &&
                        cudaMalloc((void **)&b, COUNT * sizeof *b) == cudaSuccess, "allocation");
  for (int i = 0; i < COUNT; i++) h[i] = (float)(rank + 1) + (float)(i % 7);
  cudaMemcpy(a, h, COUNT * sizeof *h, cudaMemcpyHostToDevice);
  /* allreduce: sum over ranks of (r + 1 + i % 7) */
  CHILD_CHECK(rank, ncclAllReduce(a, b, COUNT, ncclFloat32, ncclSum, comm, s) == ncclSuccess, "ncclAllReduce");
  CHILD_CHECK(rank, cudaStreamSynchronize(s) == cudaSuccess, "allreduce: %s", ncclGetLastError(comm));
  cudaMemcpy(h, b, COUNT * sizeof *h, cudaMemcpyDeviceToHost);
  for (int i = 0; i < COUNT; i++)
    CHILD_CHECK(rank, h[i] == (float)(n * (n + 1) / 2 + n * (i % 7)), "allreduce: element %d is %g", i, h[i]);
  /* a ring of grouped send/recv */
  ncclGroupStart();
  ncclSend(a, COUNT, ncclFloat32, (rank + 1) % n, comm, s);
  ncclRecv(b, COUNT, ncclFloat32, (rank + n - 1) % n, comm, s);
  CHILD_CHECK(rank, ncclGroupEnd() == ncclSuccess, "ncclGroupEnd");
  CHILD_CHECK(rank, cudaStreamSynchronize(s) == cudaSuccess, "send/recv: %s", ncclGetLastError(comm));
  cudaMemcpy(h, b, COUNT * sizeof *h, cudaMemcpyDeviceToHost);
  int from = (rank + n - 1) % n;
  for (int i = 0; i < COUNT; i += 101)
    CHILD_CHECK(rank, h[i] == (float)(from + 1) + (float)(i % 7), "recv from %d: element %d is %g", from, i, h[i]);
  /* PreMulSum with a per-rank scalar: sum of (r + 1) * 2 */
  float two = 2.0f;
  ncclRedOp_t op;
  CHILD_CHECK(rank, ncclRedOpCreatePreMulSum(&op, &two, ncclFloat32, ncclScalarHostImmediate, comm) == ncclSuccess,
              "ncclRedOpCreatePreMulSum");
  for (int i = 0; i < COUNT; i++) h[i] = (float)(rank + 1);
  cudaMemcpy(a, h, COUNT * sizeof *h, cudaMemcpyHostToDevice);
  CHILD_CHECK(rank, ncclAllReduce(a, b, COUNT, ncclFloat32, op, comm, s) == ncclSuccess, "PreMulSum");
  CHILD_CHECK(rank, cudaStreamSynchronize(s) == cudaSuccess, "PreMulSum: %s", ncclGetLastError(comm));
  cudaMemcpy(h, b, sizeof *h, cudaMemcpyDeviceToHost);
  CHILD_CHECK(rank, h[0] == (float)(n * (n + 1)), "PreMulSum: %g, want %d", h[0], n * (n + 1));
  ncclRedOpDestroy(op, comm);
  /* split by parity: each half allreduces its ranks */
  ncclComm_t half;
  CHILD_CHECK(rank, ncclCommSplit(comm, rank % 2, rank, &half, NULL) == ncclSuccess, "ncclCommSplit: %s",
              ncclGetLastError(NULL));
  int hn;
  ncclCommCount(half, &hn);
  CHILD_CHECK(rank, hn == (n + 1 - rank % 2) / 2, "split: %d ranks", hn);
  ncclCommDestroy(half);
  cudaFree(a);
  cudaFree(b);
  free(h);
  CHILD_CHECK(rank, ncclCommDestroy(comm) == ncclSuccess, "ncclCommDestroy");
}

static void test_collectives_2(void **state) {
  (void)state;
  assert_int_equal(run_procs(2, collectives_body), 0);
}

static void test_collectives_4(void **state) {
  (void)state;
  assert_int_equal(run_procs(4, collectives_body), 0);
}

/* Windows: rank r puts into r+1's window and signals; the receiver waits,
 * checks the bytes, and reads its peer's window through the LSA pointer. */
static void windows_body(int rank, int n) {
  ncclComm_t comm = join(rank, n);
  cudaStream_t s;
  cudaStreamCreate(&s);
  enum { BYTES = 1 << 16 };
  unsigned char *mem, *src;
  CHILD_CHECK(rank, ncclMemAlloc((void **)&mem, BYTES) == ncclSuccess, "ncclMemAlloc");
  CHILD_CHECK(rank, ncclMemAlloc((void **)&src, BYTES) == ncclSuccess, "ncclMemAlloc");
  cudaMemset(mem, 0, BYTES);
  cudaMemset(src, 0x40 + rank, BYTES);
  ncclWindow_t win, wsrc; /* a put's source must be window memory too */
  CHILD_CHECK(rank, ncclCommWindowRegister(comm, mem, BYTES, &win, NCCL_WIN_COLL_SYMMETRIC) == ncclSuccess,
              "ncclCommWindowRegister: %s", ncclGetLastError(comm));
  CHILD_CHECK(rank, ncclCommWindowRegister(comm, src, BYTES, &wsrc, NCCL_WIN_COLL_SYMMETRIC) == ncclSuccess,
              "ncclCommWindowRegister: %s", ncclGetLastError(comm));
  int to = (rank + 1) % n, from = (rank + n - 1) % n;
  ncclWaitSignalDesc_t d = {1, from, 0, 0};
  ncclGroupStart();
  ncclPutSignal(src, BYTES, ncclUint8, to, win, 0, 0, 0, 0, comm, s);
  ncclWaitSignal(1, &d, comm, s);
  CHILD_CHECK(rank, ncclGroupEnd() == ncclSuccess, "put/wait group: %s", ncclGetLastError(comm));
  CHILD_CHECK(rank, cudaStreamSynchronize(s) == cudaSuccess, "put_signal: %s", ncclGetLastError(comm));
  for (int i = 0; i < BYTES; i += 97)
    CHILD_CHECK(rank, mem[i] == 0x40 + from, "byte %d from rank %d is 0x%x", i, from, mem[i]);
  /* Everyone has its bytes before anyone reads a peer's window. */
  CHILD_CHECK(rank, ncclAllReduce(src, src, 1, ncclUint8, ncclMax, comm, s) == ncclSuccess, "barrier");
  cudaStreamSynchronize(s);
  unsigned char *peer;
  CHILD_CHECK(rank, ncclGetLsaDevicePointer(win, 0, to, (void **)&peer) == ncclSuccess, "ncclGetLsaDevicePointer: %s",
              ncclGetLastError(comm));
  CHILD_CHECK(rank, peer[BYTES - 1] == 0x40 + rank, "LSA load of rank %d's window: 0x%x", to, peer[BYTES - 1]);
  CHILD_CHECK(rank, ncclAllReduce(src, src, 1, ncclUint8, ncclMax, comm, s) == ncclSuccess, "barrier");
  cudaStreamSynchronize(s);
  CHILD_CHECK(rank, ncclCommWindowDeregister(comm, win) == ncclSuccess, "deregister");
  CHILD_CHECK(rank, ncclCommWindowDeregister(comm, wsrc) == ncclSuccess, "deregister");
  ncclMemFree(mem);
  ncclMemFree(src);
  ncclCommDestroy(comm);
}

static void test_windows_2(void **state) {
  (void)state;
  assert_int_equal(run_procs(2, windows_body), 0);
}

static void test_windows_4(void **state) {
  (void)state;
  assert_int_equal(run_procs(4, windows_body), 0);
}

/* Two processes of four rank threads each: one 8-rank communicator. */
typedef struct {
  int rank;
  int ok;
} mixed_arg;

static void *mixed_rank(void *p) {
  mixed_arg *a = p;
  cudaSetDevice(a->rank);
  ncclComm_t comm;
  if (ncclCommInitRank(&comm, 8, box->id, a->rank) != ncclSuccess) return NULL;
  cudaStream_t s;
  cudaStreamCreate(&s);
  double *x, h = a->rank;
  cudaMalloc((void **)&x, sizeof *x);
  cudaMemcpy(x, &h, sizeof h, cudaMemcpyHostToDevice);
  ncclAllReduce(x, x, 1, ncclFloat64, ncclSum, comm, s);
  a->ok = cudaStreamSynchronize(s) == cudaSuccess;
  cudaMemcpy(&h, x, sizeof h, cudaMemcpyDeviceToHost);
  a->ok = a->ok && h == 28.0; /* 0 + 1 + ... + 7 */
  cudaFree(x);
  cudaStreamDestroy(s);
  ncclCommDestroy(comm);
  return NULL;
}

static void mixed_body(int proc, int n) {
  (void)n;
  pthread_t t[4];
  mixed_arg a[4];
  for (int i = 0; i < 4; i++) {
    a[i] = (mixed_arg){proc * 4 + i, 0};
    pthread_create(&t[i], NULL, mixed_rank, &a[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    CHILD_CHECK(proc, a[i].ok, "rank %d (thread %d of process %d) failed: %s", a[i].rank, i, proc,
                ncclGetLastError(NULL));
  }
}

static void test_processes_of_threads(void **state) {
  (void)state;
  assert_int_equal(run_procs(2, mixed_body), 0);
}

/* ------------------------------------------------------------- arena */

/* The shared arena's allocator, in this process: random sizes (small
 * classes, page classes, large runs) and alignments, each block filled
 * with its own byte and checked before it is freed, so an overlap or a
 * header overrun shows; then a block too large for the arena. */
static void test_arena_allocator(void **state) {
  (void)state;
  enum { SLOTS = 512, ROUNDS = 40000 };
  static unsigned char *p[SLOTS];
  static size_t sz[SLOTS];
  size_t used0, size;
  sim_shm_stats(&used0, &size);
  assert_true(size >= ((size_t)1 << 30));
  unsigned seed = 7;
  for (int it = 0; it < ROUNDS; it++) {
    int i = (int)(rand_r(&seed) % SLOTS);
    if (p[i]) {
      for (size_t k = 0; k < sz[i]; k += 1 + sz[i] / 64) assert_int_equal(p[i][k], (unsigned char)i);
      if (sz[i]) assert_int_equal(p[i][sz[i] - 1], (unsigned char)i);
      sim_free(p[i]);
      p[i] = NULL;
      continue;
    }
    unsigned r = rand_r(&seed) % 100;
    sz[i] = r < 70 ? rand_r(&seed) % 300 : r < 95 ? rand_r(&seed) % 20000 : rand_r(&seed) % 600000;
    switch (rand_r(&seed) % 4) {
      case 0: p[i] = sim_malloc(sz[i]); break;
      case 1:
        p[i] = sim_calloc(1, sz[i]);
        for (size_t k = 0; p[i] && k < sz[i]; k++) assert_int_equal(p[i][k], 0);
        break;
      case 2: {
        size_t align = (size_t)64 << (rand_r(&seed) % 7);
        p[i] = sim_aligned_alloc(align, sz[i]);
        assert_int_equal((uintptr_t)p[i] % align, 0);
        break;
      }
      default:
        p[i] = sim_malloc(16);
        assert_non_null(p[i]);
        memset(p[i], i, 16);
        p[i] = sim_realloc(p[i], sz[i]);
        for (size_t k = 0; p[i] && k < (sz[i] < 16 ? sz[i] : 16); k++) assert_int_equal(p[i][k], (unsigned char)i);
    }
    assert_non_null(p[i]);
    assert_true(sim_shm_contains(p[i]));
    memset(p[i], i, sz[i]);
  }
  for (int i = 0; i < SLOTS; i++) sim_free(p[i]);
  size_t used;
  sim_shm_stats(&used, &size);
  assert_int_equal(used, used0); /* every byte came back */
  assert_null(sim_malloc(size)); /* larger than the arena: NULL and a WARN */
  assert_non_null(strstr(sim_last_warning(), "NCCLSIM_SHM_SIZE"));
  sim_clear_warning(); /* forked children would inherit it as their last error */
}

/* ------------------------------------------------------------- faults */

/* Rank 1 is killed (SIGKILL) while the others are inside an allreduce: they
 * end with ncclRemoteError naming it, long before NCCLSIM_TIMEOUT (10 s
 * times the slowdown, tests/run-test.sh), and ncclCommAbort returns. */
static void kill_body(int rank, int n) {
  ncclComm_t comm = join(rank, n);
  cudaStream_t s;
  cudaStreamCreate(&s);
  float *a;
  cudaMalloc((void **)&a, 1024 * sizeof *a);
  CHILD_CHECK(rank, ncclAllReduce(a, a, 1024, ncclFloat32, ncclSum, comm, s) == ncclSuccess, "warm-up");
  CHILD_CHECK(rank, cudaStreamSynchronize(s) == cudaSuccess, "warm-up: %s", ncclGetLastError(comm));
  if (rank == 1) {
    usleep(200 * 1000); /* the others are waiting in the next allreduce */
    raise(SIGKILL);
  }
  double t0 = now();
  ncclAllReduce(a, a, 1024, ncclFloat32, ncclSum, comm, s);
  cudaError_t e = cudaStreamSynchronize(s);
  box->took[rank] = now() - t0;
  ncclResult_t async = ncclSuccess;
  ncclCommGetAsyncError(comm, &async);
  char want[64];
  snprintf(want, sizeof want, "rank 1's process (pid ");
  const char *msg = ncclGetLastError(comm);
  CHILD_CHECK(rank, e != cudaSuccess && async == ncclRemoteError, "after the kill: stream %d, async error %d", (int)e,
              (int)async);
  CHILD_CHECK(rank, strstr(msg, want) && strstr(msg, "exited"), "the error does not name the dead rank: %s", msg);
  CHILD_CHECK(rank, ncclCommAbort(comm) == ncclSuccess, "ncclCommAbort");
}

/* ---------------------------------------------------- fault tolerance */

/* The allreduce of (rank + 1) over COUNT floats on comm: true if every
 * element is the sum over its n ranks. */
static bool allreduce_ok(int rank, ncclComm_t comm, cudaStream_t s) {
  int me, n;
  ncclCommUserRank(comm, &me);
  ncclCommCount(comm, &n);
  float *a, *h = malloc(COUNT * sizeof *h);
  CHILD_CHECK(rank, h && cudaMalloc((void **)&a, COUNT * sizeof *a) == cudaSuccess, "allocation");
  for (int i = 0; i < COUNT; i++) h[i] = (float)(me + 1);
  cudaMemcpy(a, h, COUNT * sizeof *h, cudaMemcpyHostToDevice);
  bool ok = ncclAllReduce(a, a, COUNT, ncclFloat32, ncclSum, comm, s) == ncclSuccess &&
            cudaStreamSynchronize(s) == cudaSuccess;
  cudaMemcpy(h, a, COUNT * sizeof *h, cudaMemcpyDeviceToHost);
  for (int i = 0; ok && i < COUNT; i += 97) ok = h[i] == (float)(n * (n + 1) / 2);
  cudaFree(a);
  free(h);
  return ok;
}

/* A new rank (a process forked with the others) waits for the id that the
 * coordinator publishes, then grows into rank `rank` of n. */
static void newcomer(int rank, int n) {
  double t0 = now();
  while (!atomic_load(&box->grow_ready)) {
    CHILD_CHECK(rank, now() - t0 < scaled(60), "no grow id after %g s", scaled(60));
    usleep(1000);
  }
  ncclComm_t comm;
  ncclResult_t r = ncclCommGrow(NULL, n, &box->grow_id, rank, &comm, NULL);
  CHILD_CHECK(rank, r == ncclSuccess, "new rank: ncclCommGrow: %s: %s", ncclGetErrorString(r), ncclGetLastError(NULL));
  cudaStream_t s;
  cudaStreamCreate(&s);
  CHILD_CHECK(rank, allreduce_ok(rank, comm, s), "new rank: allreduce: %s", ncclGetLastError(comm));
  CHILD_CHECK(rank, ncclCommDestroy(comm) == ncclSuccess, "ncclCommDestroy");
}

/* An existing rank of the grow; rank 0 coordinates. */
static ncclComm_t grow_from(int rank, ncclComm_t parent, int n) {
  int me;
  ncclCommUserRank(parent, &me);
  if (me == 0) {
    CHILD_CHECK(rank, ncclCommGetUniqueId(parent, &box->grow_id) == ncclSuccess, "ncclCommGetUniqueId: %s",
                ncclGetLastError(parent));
    atomic_store(&box->grow_ready, 1);
  }
  ncclComm_t grown;
  ncclResult_t r = ncclCommGrow(parent, n, me == 0 ? &box->grow_id : NULL, -1, &grown, NULL);
  CHILD_CHECK(rank, r == ncclSuccess, "ncclCommGrow: %s: %s", ncclGetErrorString(r), ncclGetLastError(parent));
  int v;
  ncclCommUserRank(grown, &v);
  CHILD_CHECK(rank, v == me, "grown: rank %d, was %d", v, me);
  return grown;
}

/* Two processes grow to three with a third process. */
static void grow_body(int rank, int n) {
  (void)n;
  if (rank == 2) {
    newcomer(2, 3);
    return;
  }
  ncclComm_t comm = join(rank, 2);
  cudaStream_t s;
  cudaStreamCreate(&s);
  ncclComm_t grown = grow_from(rank, comm, 3);
  CHILD_CHECK(rank, allreduce_ok(rank, grown, s), "grown: allreduce: %s", ncclGetLastError(grown));
  CHILD_CHECK(rank, allreduce_ok(rank, comm, s), "the parent after the grow: %s", ncclGetLastError(comm));
  ncclCommDestroy(grown);
  ncclCommDestroy(comm);
}

static void test_grow(void **state) {
  (void)state;
  assert_int_equal(run_procs(3, grow_body), 0);
}

/* Fault tolerance with processes: rank 2's process exits while
 * the others are in an allreduce; they see ncclRemoteError at once,
 * revoke, shrink to two (rank 0 with NCCL_SHRINK_ABORT) and check an
 * allreduce; then a fourth process grows the communicator back to three
 * and an allreduce over all of them checks the data. */
static void death_body(int rank, int n) {
  (void)n;
  if (rank == 3) {
    newcomer(2, 3);
    return;
  }
  ncclComm_t comm = join(rank, 3);
  cudaStream_t s;
  cudaStreamCreate(&s);
  CHILD_CHECK(rank, allreduce_ok(rank, comm, s), "warm-up: %s", ncclGetLastError(comm));
  if (rank == 2) {
    usleep(200 * 1000); /* the others are waiting in the next allreduce */
    _exit(0);
  }
  double t0 = now();
  CHILD_CHECK(rank, !allreduce_ok(rank, comm, s), "an allreduce without rank 2 succeeded");
  box->took[rank] = now() - t0;
  ncclResult_t ae;
  ncclCommGetAsyncError(comm, &ae);
  CHILD_CHECK(rank, ae == ncclRemoteError, "after rank 2 exited: async error %d", (int)ae);
  CHILD_CHECK(rank, ncclCommRevoke(comm, NCCL_REVOKE_DEFAULT) == ncclSuccess, "ncclCommRevoke: %s",
              ncclGetLastError(comm));
  ncclCommGetAsyncError(comm, &ae);
  CHILD_CHECK(rank, ae == ncclSuccess, "after revoke: async error %d", (int)ae);
  int dead[1] = {2};
  ncclComm_t sub;
  ncclResult_t r;
  if (rank == 0) {
    /* A shrink that waits for the exited rank fails at once, naming it;
     * rank 1 waits until it has, lest the two meet. */
    int wrong[1] = {1};
    t0 = now();
    r = ncclCommShrink(comm, wrong, 1, &sub, NULL, NCCL_SHRINK_DEFAULT);
    CHILD_CHECK(rank, r == ncclRemoteError && now() - t0 < scaled(10), "a shrink waiting for rank 2: %d after %.1f s",
                (int)r, now() - t0);
    const char *msg = ncclGetLastError(comm);
    CHILD_CHECK(rank, strstr(msg, "rank 2 is in a process that exited"), "message: %s", msg);
    atomic_store(&box->ready, 1);
  } else {
    for (t0 = now(); !atomic_load(&box->ready); usleep(1000))
      CHILD_CHECK(rank, now() - t0 < scaled(60), "rank 0 never finished its wrong shrink");
  }
  r = ncclCommShrink(comm, dead, 1, &sub, NULL, rank == 0 ? NCCL_SHRINK_ABORT : NCCL_SHRINK_DEFAULT);
  CHILD_CHECK(rank, r == ncclSuccess, "ncclCommShrink: %s: %s", ncclGetErrorString(r), ncclGetLastError(comm));
  cudaStream_t s2;
  cudaStreamCreate(&s2); /* the old stream reported its error once already; a fresh one all the same */
  CHILD_CHECK(rank, allreduce_ok(rank, sub, s2), "shrunk: allreduce: %s", ncclGetLastError(sub));
  ncclComm_t grown = grow_from(rank, sub, 3);
  CHILD_CHECK(rank, allreduce_ok(rank, grown, s2), "grown: allreduce: %s", ncclGetLastError(grown));
  ncclCommDestroy(grown);
  ncclCommDestroy(sub);
  CHILD_CHECK(rank, ncclCommDestroy(comm) == ncclSuccess, "destroy of the revoked comm");
}

static void test_shrink_after_death(void **state) {
  (void)state;
  assert_int_equal(run_procs(4, death_body), 0);
  for (int r = 0; r < 2; r++) assert_true(box->took[r] < scaled(10)); /* the process watch, not NCCLSIM_TIMEOUT */
}

static int count_dev_shm(void) {
  DIR *d = opendir("/dev/shm");
  int n = 0;
  if (!d) return 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

static void test_kill9(void **state) {
  (void)state;
  int shm_before = count_dev_shm();
  memset(box, 0, sizeof *box);
  assert_int_equal(ncclGetUniqueId(&box->id), ncclSuccess);
  enum { N = 3 };
  pid_t pid[N];
  for (int r = 0; r < N; r++)
    if ((pid[r] = fork()) == 0) {
      cudaSetDevice(r);
      kill_body(r, N);
      _exit(0);
    }
  for (int r = 0; r < N; r++) {
    int st;
    assert_int_equal(waitpid(pid[r], &st, 0), pid[r]);
    if (r == 1) {
      assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
      continue;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st)) fprintf(stderr, "rank %d: %s\n", r, box->why[r]);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_true(box->took[r] < scaled(10)); /* noticed by the monitor, not NCCLSIM_TIMEOUT */
  }
  assert_int_equal(count_dev_shm(), shm_before); /* nothing left behind */
}

/* ---------------------------------------------------------- bad input */

/* NCCLSIM_TIMEOUT=seconds (times the slowdown) for the forked ranks of a
 * test, and back to what it was (run-test.sh's) after. */
static char *timeout_was;
static void timeout_env(double seconds) {
  const char *was = getenv("NCCLSIM_TIMEOUT");
  timeout_was = was ? strdup(was) : NULL;
  setenv("NCCLSIM_TIMEOUT", scaled_str(seconds).s, 1);
  ncclsimParamSet("TIMEOUT", NULL);
}
static void timeout_env_back(void) {
  if (timeout_was) setenv("NCCLSIM_TIMEOUT", timeout_was, 1);
  else unsetenv("NCCLSIM_TIMEOUT");
  free(timeout_was);
  timeout_was = NULL;
  ncclsimParamSet("TIMEOUT", NULL);
}

/* Ranks as processes that disagree at init: every one of them fails at
 * once with ncclInvalidUsage, its message saying `want` and `want2`
 * (ncclTimeout would be NCCLSIM_TIMEOUT, 60 s times the slowdown here,
 * run out). */
static void disagreeing_init(int rank, int nranks, int as_rank, const char *want, const char *want2) {
  ncclComm_t comm = NULL;
  ncclResult_t r = ncclCommInitRank(&comm, nranks, box->id, as_rank);
  char m[512];
  snprintf(m, sizeof m, "%s", ncclGetLastError(comm));
  CHILD_CHECK(rank, r == ncclInvalidUsage, "init with nranks %d as rank %d: %s: %.160s", nranks, as_rank,
              ncclGetErrorString(r), m);
  CHILD_CHECK(rank, strstr(m, want) && strstr(m, want2), "message: %.230s", m + (strlen(m) > 230 ? strlen(m) - 230 : 0));
  if (comm) ncclCommDestroy(comm);
}

static void run_disagreeing(int n, child_fn fn) {
  timeout_env(60);
  assert_int_equal(run_procs(n, fn), 0);
  timeout_env_back();
}

/* Two ranks with different nranks for one id: both fail, in whichever
 * order they came, and each message names both values. */
static void nranks_body(int rank, int n) {
  (void)n;
  disagreeing_init(rank, rank == 0 ? 2 : 3, rank, "nranks", rank == 0 ? "3" : "2");
}

static void test_nranks_disagree(void **state) {
  (void)state;
  run_disagreeing(2, nranks_body);
}

/* Two processes claim rank 0 of 3: both fail, and so does rank 1. */
static void same_rank_body(int rank, int n) {
  (void)n;
  disagreeing_init(rank, 3, rank == 2 ? 1 : 0, "rank 0", "twice");
}

static void test_same_rank(void **state) {
  (void)state;
  run_disagreeing(3, same_rank_body);
}

/* Processes whose NCCLSIM_RANKS_PER_NODE differ (2, 2 and 1): all three
 * fail once the last is in, naming both layouts. */
static void layout_body(int rank, int n) {
  (void)n;
  CHILD_CHECK(rank, ncclsimParamSet("RANKS_PER_NODE", rank == 2 ? "1" : "2") == ncclSuccess, "RANKS_PER_NODE");
  disagreeing_init(rank, 3, rank, "rank 0 has ranksPerNode 2 and rank 2 has 1", "disagree");
}

static void test_layout_disagree(void **state) {
  (void)state;
  run_disagreeing(3, layout_body);
}

/* An id handed to a process that does not share ncclsim's state (a fresh
 * exec, with or without a job of its own) is refused at once, with a
 * message that says why, instead of waiting out NCCLSIM_TIMEOUT. */
static void exec_join(const char *mode, const char *want) {
  ncclUniqueId id;
  assert_int_equal(ncclGetUniqueId(&id), ncclSuccess);
  char hex[2 * sizeof id + 1];
  for (size_t i = 0; i < sizeof id; i++) snprintf(hex + 2 * i, 3, "%02x", (unsigned char)id.internal[i]);
  int fd[2];
  assert_int_equal(pipe(fd), 0);
  double t0 = now();
  pid_t p = fork();
  if (p == 0) {
    dup2(fd[1], 2);
    setenv("NCCLSIM_TIMEOUT", scaled_str(30).s, 1); /* what the refusal must not wait out */
    execl(self_exe, self_exe, "--join", mode, hex, (char *)NULL);
    _exit(127);
  }
  close(fd[1]);
  char out[4096] = "";
  size_t got = 0;
  ssize_t k;
  while (got + 1 < sizeof out && (k = read(fd[0], out + got, sizeof out - 1 - got)) > 0) got += (size_t)k;
  out[got] = '\0';
  close(fd[0]);
  int st;
  assert_int_equal(waitpid(p, &st, 0), p);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || !strstr(out, want)) fprintf(stderr, "child said: %s\n", out);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  assert_non_null(strstr(out, want));
  assert_true(now() - t0 < scaled(20)); /* at once, not at the child's NCCLSIM_TIMEOUT */
}

static void test_id_from_unshared_process(void **state) {
  (void)state;
  exec_join("private", "does not share");
}

static void test_id_from_other_job(void **state) {
  (void)state;
  exec_join("job", "another ncclsim job");
}

/* The exec'd side of exec_join: joins with the id, expects a refusal. */
static int join_main(const char *mode, const char *hex) {
  if (!strcmp(mode, "job") && ncclsimProcessesInit() != ncclSuccess) return 2;
  ncclUniqueId id;
  for (size_t i = 0; i < sizeof id; i++) {
    unsigned v;
    if (sscanf(hex + 2 * i, "%2x", &v) != 1) return 3;
    id.internal[i] = (char)v;
  }
  setenv("NCCLSIM_DEBUG", "WARN", 1);
  ncclsimParamSet("DEBUG", NULL);
  ncclComm_t comm;
  ncclResult_t r = ncclCommInitRank(&comm, 2, id, 1);
  fprintf(stderr, "result %d: %s\n", (int)r, ncclGetLastError(NULL));
  return r == ncclInvalidUsage ? 0 : 1;
}

/* ncclsimProcessesInit after ncclsim has state of its own is refused. */
static void test_init_too_late(void **state) {
  (void)state;
  pid_t p = fork();
  if (p == 0) {
    /* A plain exec'd child: private state first, then the call. */
    execl(self_exe, self_exe, "--late", (char *)NULL);
    _exit(127);
  }
  int st;
  assert_int_equal(waitpid(p, &st, 0), p);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static int late_main(void) {
  void *p;
  if (cudaMalloc(&p, 64) != cudaSuccess) return 2;
  return ncclsimProcessesInit() == ncclInvalidUsage ? 0 : 1;
}

/* ------------------------------------------------- processes started apart */

/* The exec'd side of test_job_*: rank r of n in the launcher job that
 * NCCLSIM_JOB names. Rank 0 makes the id and leaves it in `path`. */
static int job_main(int rank, int n, const char *path) {
  ncclUniqueId id;
  if (rank == 0) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (ncclGetUniqueId(&id) != ncclSuccess || !f || fwrite(&id, sizeof id, 1, f) != 1 || fclose(f) != 0) return 2;
    if (rename(tmp, path) != 0) return 2;
  } else {
    FILE *f = NULL;
    for (int i = 0; i < 2000 * slowdown() && !(f = fopen(path, "rb")); i++) usleep(5000);
    if (!f || fread(&id, sizeof id, 1, f) != 1) return 3;
    fclose(f);
  }
  cudaSetDevice(rank);
  ncclComm_t comm;
  ncclResult_t r = ncclCommInitRank(&comm, n, id, rank);
  if (r != ncclSuccess) {
    fprintf(stderr, "rank %d: ncclCommInitRank: %s\n", rank, ncclGetLastError(NULL));
    return 4;
  }
  float *a, h = (float)(rank + 1);
  cudaStream_t s;
  cudaStreamCreate(&s);
  cudaMalloc((void **)&a, sizeof *a);
  cudaMemcpy(a, &h, sizeof h, cudaMemcpyHostToDevice);
  ncclAllReduce(a, a, 1, ncclFloat32, ncclSum, comm, s);
  if (cudaStreamSynchronize(s) != cudaSuccess) return 5;
  cudaMemcpy(&h, a, sizeof h, cudaMemcpyDeviceToHost);
  ncclCommDestroy(comm);
  return h == (float)(n * (n + 1) / 2) ? 0 : 6;
}

/* Starts n exec'd ranks of one launcher job; returns how many exited 0,
 * and their stderr in out. */
static int run_job(int n, bool aslr, char *out, size_t len) {
  static int seq;
  char job[64], path[256];
  snprintf(job, sizeof job, "sim_procs-%d-%d", (int)getpid(), ++seq);
  snprintf(path, sizeof path, "/tmp/ncclsim-test-%s.id", job);
  unlink(path);
  int fd[2];
  assert_int_equal(pipe(fd), 0);
  pid_t pid[8];
  for (int r = 0; r < n; r++)
    if ((pid[r] = fork()) == 0) {
      dup2(fd[1], 2);
      setenv("NCCLSIM_JOB", job, 1);
      unsetenv("NCCLSIM_PROCESSES");
      setenv("NCCLSIM_DEBUG", "WARN", 1);
      if (aslr) setenv("NCCLSIM_REEXEC", "1", 1); /* as if re-executing were impossible */
      else unsetenv("NCCLSIM_REEXEC");
      char rs[16], ns[16];
      snprintf(rs, sizeof rs, "%d", r);
      snprintf(ns, sizeof ns, "%d", n);
      execl(self_exe, self_exe, "--job", rs, ns, path, (char *)NULL);
      _exit(127);
    }
  close(fd[1]);
  size_t got = 0;
  ssize_t k;
  while (got + 1 < len && (k = read(fd[0], out + got, len - 1 - got)) > 0) got += (size_t)k;
  out[got] = '\0';
  close(fd[0]);
  int ok = 0;
  for (int r = 0; r < n; r++) {
    int st;
    assert_int_equal(waitpid(pid[r], &st, 0), pid[r]);
    ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
  }
  unlink(path);
  return ok;
}

/* Processes exec'd apart, as mpirun starts them, in one job: they share
 * the arena through the job's socket, and an allreduce adds up. */
static void test_job_started_apart(void **state) {
  (void)state;
  char out[8192];
  int ok = run_job(3, false, out, sizeof out);
  if (ok != 3) fprintf(stderr, "%s", out);
  assert_int_equal(ok, 3);
}

/* The same with address-space randomisation left on: ncclsim's code lies
 * elsewhere in each process, and a joiner is refused with a message. */
static void test_job_layouts_differ(void **state) {
  (void)state;
  char out[8192];
  int ok = run_job(2, true, out, sizeof out);
  assert_int_equal(ok, 0);
  assert_non_null(strstr(out, "ncclsim's code is at"));
}

/* ------------------------------------------------------------ timeline */

#ifdef HAVE_JANSSON
static char trace_dir[128];

/* Waits (up to 120 s times the slowdown) for box->step. */
static bool step_reached(int want) {
  for (int i = 0; i < 120000 * slowdown() && atomic_load(&box->step) < want; i++) usleep(1000);
  return atomic_load(&box->step) >= want;
}

/* Rank 0 leaves the communicator first and writes its timeline only after
 * rank 1's ncclCommDestroy, the last, has freed the clique: rank 0's
 * operations are still in its own file. They were lost when the clique
 * was freed first (tests/trace-merge.sh lacked rank 0's track at random). */
static void trace_body(int rank, int n) {
  char path[160], mine[192], want[32];
  snprintf(path, sizeof path, "%s/t.json", trace_dir);
  CHILD_CHECK(rank, ncclsimParamSet("TRACE", path) == ncclSuccess, "ncclsimParamSet(TRACE)");
  ncclComm_t comm = join(rank, n);
  cudaStream_t s;
  float *a;
  CHILD_CHECK(rank, cudaStreamCreate(&s) == cudaSuccess && cudaMalloc((void **)&a, sizeof *a) == cudaSuccess,
              "stream and buffer");
  CHILD_CHECK(rank, ncclAllReduce(a, a, 1, ncclFloat32, ncclSum, comm, s) == ncclSuccess, "ncclAllReduce");
  CHILD_CHECK(rank, cudaStreamSynchronize(s) == cudaSuccess, "allreduce: %s", ncclGetLastError(comm));
  if (rank == 1) CHILD_CHECK(rank, step_reached(1), "rank 0 never destroyed its communicator");
  CHILD_CHECK(rank, ncclCommDestroy(comm) == ncclSuccess, "ncclCommDestroy");
  atomic_store(&box->step, rank + 1);
  if (rank == 0) CHILD_CHECK(rank, step_reached(2), "rank 1 never destroyed its communicator");
  CHILD_CHECK(rank, sim_trace_flush() == 0, "sim_trace_flush");
  snprintf(mine, sizeof mine, "%s/t.%d.json", trace_dir, (int)getpid());
  FILE *f = fopen(mine, "r");
  CHILD_CHECK(rank, f, "no timeline %s", mine);
  static char text[1 << 16];
  size_t got = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[got] = 0;
  snprintf(want, sizeof want, "\"rank %d stream 0\"", rank);
  CHILD_CHECK(rank, strstr(text, want) && strstr(text, "\"ncclAllReduce\""),
              "its timeline (t.%d.json) lacks its track %s or its allreduce", (int)getpid(), want);
  unlink(mine);
}

static void test_trace_after_clique_freed(void **state) {
  (void)state;
  snprintf(trace_dir, sizeof trace_dir, "%s/sim_procs-trace.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  assert_non_null(mkdtemp(trace_dir));
  int bad = run_procs(2, trace_body);
  DIR *d = opendir(trace_dir);
  for (struct dirent *e; d && (e = readdir(d));) {
    char f[sizeof trace_dir + 256];
    snprintf(f, sizeof f, "%s/%s", trace_dir, e->d_name);
    if (e->d_name[0] != '.') unlink(f);
  }
  if (d) closedir(d);
  rmdir(trace_dir);
  assert_int_equal(bad, 0);
}
#else
static void test_trace_after_clique_freed(void **state) {
  (void)state;
  skip(); /* no jansson: no timeline */
}
#endif

/* ------------------------------------------------------ busy workers */

static void block_forever(void *arg) {
  (void)arg;
  for (;;) pause();
}

/* A process killed while its stream worker runs an operation leaves the
 * job's count of busy workers (sim/util/wait.c) where it was before the
 * process started: the monitor takes the dead process's share back. */
static void test_busy_share_of_dead_process(void **state) {
  (void)state;
  /* Last of the tests: it leaves this process with a monitor thread. */
  int before = sim_workers_busy(), fd[2], st;
  assert_int_equal(pipe(fd), 0);
  pid_t p = fork(); /* before this process has threads (ThreadSanitizer) */
  if (p == 0) {
    sim_proc_register(NULL);
    cudaStream_t s;
    if (cudaStreamCreate(&s) != cudaSuccess || cudaLaunchHostFunc(s, block_forever, NULL) != cudaSuccess) _exit(1);
    for (int i = 0; i < 5000 * slowdown() && sim_workers_busy() != before + 1; i++) usleep(1000);
    char c = 1;
    if (write(fd[1], &c, 1) != 1) _exit(1);
    for (;;) pause();
  }
  sim_proc_register(NULL); /* this process's monitor watches the child */
  close(fd[1]);
  char c;
  assert_int_equal(read(fd[0], &c, 1), 1);
  close(fd[0]);
  assert_int_equal(sim_workers_busy(), before + 1);
  kill(p, SIGKILL);
  assert_int_equal(waitpid(p, &st, 0), p);
  int left = -1;
  for (int i = 0; i < 5000 * slowdown() && (left = sim_workers_busy()) != before; i++) usleep(1000);
  assert_int_equal(left, before);
}

int main(int argc, char **argv) {
  self_exe = argv[0];
  if (argc == 5 && !strcmp(argv[1], "--job")) return job_main(atoi(argv[2]), atoi(argv[3]), argv[4]);
  if (argc == 4 && !strcmp(argv[1], "--join")) {
    unsetenv("NCCLSIM_PROCESSES");
    return join_main(argv[2], argv[3]);
  }
  if (argc == 2 && !strcmp(argv[1], "--late")) {
    unsetenv("NCCLSIM_PROCESSES");
    return late_main();
  }
  /* A modest reservation: sanitizer runtimes shadow what is mapped. */
  setenv("NCCLSIM_SHM_SIZE", "2147483648", 0);
  if (ncclsimProcessesInit() != ncclSuccess) {
    fprintf(stderr, "ncclsimProcessesInit failed: %s\n", ncclGetLastError(NULL));
    return 1;
  }
  box = mmap(NULL, sizeof *box, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (box == MAP_FAILED) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_arena_allocator), cmocka_unit_test(test_collectives_2),  cmocka_unit_test(test_collectives_4),
      cmocka_unit_test(test_processes_of_threads), cmocka_unit_test(test_windows_2),      cmocka_unit_test(test_windows_4),
      cmocka_unit_test(test_kill9),          cmocka_unit_test(test_nranks_disagree),
      cmocka_unit_test(test_grow),           cmocka_unit_test(test_shrink_after_death),
      cmocka_unit_test(test_same_rank),      cmocka_unit_test(test_layout_disagree),      cmocka_unit_test(test_id_from_unshared_process),
      cmocka_unit_test(test_id_from_other_job), cmocka_unit_test(test_init_too_late),
      cmocka_unit_test(test_job_started_apart), cmocka_unit_test(test_job_layouts_differ),
      cmocka_unit_test(test_trace_after_clique_freed),
      cmocka_unit_test(test_busy_share_of_dead_process),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
