/*
 * tests/hosts_mgmt.c — one process of tests/sim-hosts.sh's cases of the
 * management calls across simulated hosts (NCCLSIM_HOST_ID): split,
 * shrink, grow, suspend and resume inside groups and on non-blocking
 * communicators, and the bootstrap keys they leave behind.
 *
 *   hosts_mgmt MODE NRANKS FIRST COUNT IDFILE
 *
 * The process holds ranks FIRST..FIRST+COUNT-1 of NRANKS and drives them
 * all from one thread, as a process of several GPUs does. FIRST == NRANKS:
 * the process of the grow's new rank (rank NRANKS of NRANKS+1), which takes
 * the grow's id from IDFILE.grow. Exit status 0 when the mode's
 * expectation holds, 1 when not (a line on stderr says what), 2 on bad
 * arguments.
 *
 * MODE:
 *   group        blocking communicators; each step one group over the
 *                process's ranks: two splits (by parity with keys in
 *                reverse; the second into a non-blocking communicator, with
 *                rank 0 NOCOLOR) and a shrink without the last rank (which
 *                does not call it), after a suspend, a resume and a grow by
 *                one rank; every child checked by an allreduce.
 *   nonblocking  the same calls on non-blocking communicators: suspend,
 *                resume and grow return ncclInProgress for the first rank
 *                (its peers have not called yet) and the thread polls every
 *                rank with ncclCommGetAsyncError until they succeed; split
 *                and shrink run on a thread per rank, since they block as
 *                on one host, and make non-blocking children.
 *   keyfail      a split inside a group that the last rank never calls:
 *                every other rank's ncclGroupEnd fails with ncclTimeout
 *                (run with a short NCCLSIM_TIMEOUT).
 * In every mode the process's bootstrap root is left with no key open, and
 * the splits and shrinks leave no record of theirs there (net/bootstrap.c:
 * a candidate id that does not become its color's is released at once, a
 * chosen one as its round ends); the grow's id, ncclCommGetUniqueId's,
 * stays on record in its maker's process, spent.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <ncclsim.h>

#include "net/net.h"
#include "slow.h"
#include "id_file.h"

enum { MAXR = 8 };

static int first, count, nranks;

static int fail(const char *what, ncclResult_t r) {
  fprintf(stderr, "hosts_mgmt: ranks %d..%d: %s: %s (%d); last error: %s\n", first, first + count - 1, what,
          ncclGetErrorString(r), (int)r, ncclGetLastError(NULL));
  return 1;
}

/* Polls a non-blocking call on comms[0..n) (NULL ones skipped) until none
 * is in progress: 0 if every one ended in ncclSuccess. The deadline is the
 * test's (twice NCCLSIM_TIMEOUT, which ends the calls themselves). */
static int settle(ncclComm_t *comms, int n, const char *what) {
  const char *t = getenv("NCCLSIM_TIMEOUT");
  double limit = 2 * (t ? atof(t) : 60) + 10;
  for (int i = 0; i < n; i++) {
    ncclResult_t ae = ncclInProgress;
    for (long k = 0; comms[i] && ae == ncclInProgress && k < (long)(limit * 1000); k++) {
      ncclResult_t r = ncclCommGetAsyncError(comms[i], &ae);
      if (r != ncclSuccess) return fail("ncclCommGetAsyncError", r);
      if (ae == ncclInProgress) usleep(1000);
    }
    if (comms[i] && ae != ncclSuccess) return fail(what, ae);
  }
  return 0;
}

/* An allreduce of (parent rank + 1) over each local child (NULL: none),
 * one group: every child of the process must sum to want[i]. */
static int allreduce(ncclComm_t *sub, const int64_t *want, const char *what) {
  int64_t *buf[MAXR] = {0};
  cudaStream_t s[MAXR];
  int bad = 0;
  for (int i = 0; i < count; i++) {
    cudaSetDevice(i);
    cudaStreamCreate(&s[i]);
    if (cudaMalloc((void **)&buf[i], sizeof(int64_t)) != cudaSuccess) return fail("cudaMalloc", ncclSystemError);
    *buf[i] = first + i + 1; /* simulated device memory is the host's */
  }
  ncclResult_t r = ncclSuccess;
  ncclGroupStart();
  for (int i = 0; i < count && r == ncclSuccess; i++)
    if (sub[i]) r = ncclAllReduce(buf[i], buf[i], 1, ncclInt64, ncclSum, sub[i], s[i]);
  ncclResult_t g = ncclGroupEnd();
  if (r == ncclSuccess) r = g;
  if (r != ncclSuccess) bad = fail(what, r);
  for (int i = 0; i < count; i++) {
    if (!bad && sub[i] && cudaStreamSynchronize(s[i]) != cudaSuccess) bad = fail(what, ncclSystemError);
    if (!bad && sub[i] && *buf[i] != want[i]) {
      fprintf(stderr, "hosts_mgmt: rank %d: %s gave %lld, want %lld\n", first + i, what, (long long)*buf[i],
              (long long)want[i]);
      bad = 1;
    }
    cudaFree(buf[i]);
    cudaStreamDestroy(s[i]);
  }
  return bad;
}

/* Whether sub's rank and size are as wanted (NULL: no communicator). */
static int check_rank(ncclComm_t sub, int rank, int size, const char *what, int me) {
  int r = -1, n = -1;
  if (!sub != (size == 0)) {
    fprintf(stderr, "hosts_mgmt: rank %d: %s gave %s communicator\n", me, what, sub ? "a" : "no");
    return 1;
  }
  if (!sub) return 0;
  ncclCommUserRank(sub, &r);
  ncclCommCount(sub, &n);
  if (r == rank && n == size) return 0;
  fprintf(stderr, "hosts_mgmt: rank %d: %s gave rank %d of %d, want %d of %d\n", me, what, r, n, rank, size);
  return 1;
}

static void destroy(ncclComm_t *c) {
  for (int i = 0; i < count; i++)
    if (c[i]) ncclCommDestroy(c[i]), c[i] = NULL;
}

/* ---- the splits and the shrink ---- */

/* What rank me's parity split gives: its rank and the sum of its color. */
static void parity(int me, int *rank, int *size, int64_t *sum) {
  *rank = *size = 0;
  *sum = 0;
  for (int r = 0; r < nranks; r++)
    if (r % 2 == me % 2) {
      ++*size;
      *rank += r > me; /* keys run backwards */
      *sum += r + 1;
    }
}

typedef struct {
  ncclComm_t comm, sub;
  int me, which; /* which: 0 parity split, 1 NOCOLOR split, 2 shrink */
  ncclResult_t r;
} call_arg;

static ncclResult_t child_call(ncclComm_t comm, int me, int which, ncclComm_t *sub) {
  ncclConfig_t nb = NCCL_CONFIG_INITIALIZER;
  nb.blocking = 0;
  int ex[1] = {nranks - 1};
  switch (which) {
    case 0: return ncclCommSplit(comm, me % 2, nranks - me, sub, NULL);
    case 1: return ncclCommSplit(comm, me == 0 ? NCCL_SPLIT_NOCOLOR : 0, me, sub, &nb);
    default: return ncclCommShrink(comm, ex, 1, sub, &nb, NCCL_SHRINK_DEFAULT);
  }
}

static void *call_thread(void *p) {
  call_arg *a = p;
  cudaSetDevice(a->me - first);
  a->r = child_call(a->comm, a->me, a->which, &a->sub);
  return NULL;
}

/* The three children of every local rank, each step in one group (or, with
 * threads, a thread per rank), each checked. */
static int children(ncclComm_t *comms, bool threads) {
  static const char *name[3] = {"ncclCommSplit by parity", "ncclCommSplit with a NOCOLOR rank",
                                "ncclCommShrink without the last rank"};
  for (int which = 0; which < 3; which++) {
    ncclComm_t sub[MAXR] = {0};
    call_arg a[MAXR];
    pthread_t t[MAXR];
    ncclResult_t r = ncclSuccess;
    if (!threads) ncclGroupStart();
    for (int i = 0; i < count; i++) {
      int me = first + i;
      a[i] = (call_arg){comms[i], NULL, me, which, ncclSuccess};
      if (which == 2 && me == nranks - 1) continue; /* excluded: it does not call */
      if (threads && pthread_create(&t[i], NULL, call_thread, &a[i]) != 0) return fail("pthread_create", ncclSystemError);
      if (!threads && (a[i].r = child_call(comms[i], me, which, &sub[i])) != ncclSuccess) r = a[i].r;
    }
    if (!threads) {
      ncclResult_t g = ncclGroupEnd();
      if (r == ncclSuccess) r = g;
    }
    for (int i = 0; threads && i < count; i++) {
      if (which == 2 && first + i == nranks - 1) continue;
      pthread_join(t[i], NULL);
      sub[i] = a[i].sub;
      if (a[i].r != ncclSuccess && r == ncclSuccess) r = a[i].r;
    }
    if (r != ncclSuccess) return fail(name[which], r);
    if (settle(sub, count, name[which])) return 1; /* a non-blocking child says it is ready */
    int64_t want[MAXR];
    int bad = 0;
    for (int i = 0; i < count && !bad; i++) {
      int me = first + i, rank, size;
      int64_t sum;
      parity(me, &rank, &size, &sum);
      if (which == 1) rank = me - 1, size = me == 0 ? 0 : nranks - 1, sum = (int64_t)nranks * (nranks + 1) / 2 - 1;
      if (which == 2)
        rank = me, size = me == nranks - 1 ? 0 : nranks - 1, sum = (int64_t)nranks * (nranks + 1) / 2 - nranks;
      want[i] = sum;
      bad = check_rank(sub[i], rank, size, name[which], me);
    }
    if (!bad) bad = allreduce(sub, want, name[which]);
    destroy(sub);
    if (bad) return 1;
  }
  return 0;
}

/* ---- suspend and resume ---- */

static int suspended_is(ncclComm_t *comms, uint64_t want, const char *what) {
  for (int i = 0; i < count; i++) {
    uint64_t v = 2;
    ncclResult_t r = ncclCommMemStats(comms[i], ncclStatGpuMemSuspended, &v);
    if (r != ncclSuccess || v != want) {
      fprintf(stderr, "hosts_mgmt: rank %d: after %s ncclStatGpuMemSuspended is %llu (%s), want %llu\n", first + i,
              what, (unsigned long long)v, ncclGetErrorString(r), (unsigned long long)want);
      return 1;
    }
  }
  return 0;
}

static int suspend_resume(ncclComm_t *comms, bool nonblocking) {
  for (int resume = 0; resume < 2; resume++) {
    const char *what = resume ? "ncclCommResume" : "ncclCommSuspend";
    ncclResult_t r = ncclSuccess;
    if (!nonblocking) ncclGroupStart();
    for (int i = 0; i < count; i++) {
      ncclResult_t ri = resume ? ncclCommResume(comms[i]) : ncclCommSuspend(comms[i], NCCL_SUSPEND_MEM);
      /* Non-blocking: the first rank's peers have not called yet. */
      if (nonblocking && i == 0 && ri != ncclInProgress) return fail("a non-blocking call was not in progress", ri);
      if (ri != ncclSuccess && ri != ncclInProgress && r == ncclSuccess) r = ri;
    }
    if (!nonblocking) {
      ncclResult_t g = ncclGroupEnd();
      if (r == ncclSuccess) r = g;
    }
    if (r != ncclSuccess) return fail(what, r);
    if (nonblocking && settle(comms, count, what)) return 1;
    if (suspended_is(comms, resume ? 0 : 1, what)) return 1;
  }
  int64_t want[MAXR];
  for (int i = 0; i < count; i++) want[i] = (int64_t)nranks * (nranks + 1) / 2;
  return allreduce(comms, want, "an allreduce after resume");
}

/* ---- the grow ---- */

/* Existing ranks: rank 0's process makes the id and leaves it in
 * IDFILE.grow for the new rank; every existing rank calls the grow in one
 * group (blocking) or one after another (non-blocking). */
static int grow(ncclComm_t *comms, const char *idfile, bool nonblocking) {
  char path[4096];
  snprintf(path, sizeof path, "%s.grow", idfile);
  ncclUniqueId id;
  ncclResult_t r;
  if (first == 0) {
    if ((r = ncclCommGetUniqueId(comms[0], &id)) != ncclSuccess) return fail("ncclCommGetUniqueId", r);
    if (write_id(path, &id) != 0) return fail("write the grow's id file", ncclSystemError);
  }
  ncclComm_t grown[MAXR] = {0};
  r = ncclSuccess;
  if (!nonblocking) ncclGroupStart();
  for (int i = 0; i < count; i++) {
    cudaSetDevice(i);
    ncclResult_t ri = ncclCommGrow(comms[i], nranks + 1, first == 0 && i == 0 ? &id : NULL, -1, &grown[i], NULL);
    if (nonblocking && ri != ncclInProgress) return fail("a non-blocking ncclCommGrow was not in progress", ri);
    if (ri != ncclSuccess && ri != ncclInProgress && r == ncclSuccess) r = ri;
  }
  if (!nonblocking) {
    ncclResult_t g = ncclGroupEnd();
    if (r == ncclSuccess) r = g;
  }
  if (r != ncclSuccess) return fail("ncclCommGrow", r);
  if (settle(grown, count, "ncclCommGrow")) return 1;
  int64_t want[MAXR];
  int bad = 0;
  for (int i = 0; i < count && !bad; i++) {
    want[i] = (int64_t)(nranks + 1) * (nranks + 2) / 2;
    bad = check_rank(grown[i], first + i, nranks + 1, "ncclCommGrow", first + i);
  }
  if (!bad) bad = allreduce(grown, want, "an allreduce on the grown communicator");
  destroy(grown);
  return bad;
}

/* The grow's new rank, alone in its process. */
static int new_rank(const char *idfile, bool nonblocking) {
  char path[4096];
  snprintf(path, sizeof path, "%s.grow", idfile);
  ncclUniqueId id;
  if (read_id(path, &id, 120) != 0) {
    fprintf(stderr, "hosts_mgmt: the new rank found no grow id in %s\n", path);
    return 1;
  }
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = nonblocking ? 0 : 1;
  ncclComm_t g = NULL;
  ncclResult_t r = ncclCommGrow(NULL, nranks + 1, &id, nranks, &g, &cfg);
  if (r != ncclSuccess && r != ncclInProgress) return fail("ncclCommGrow of the new rank", r);
  int bad = settle(&g, 1, "ncclCommGrow of the new rank");
  if (!bad) bad = check_rank(g, nranks, nranks + 1, "ncclCommGrow", nranks);
  int64_t want = (int64_t)(nranks + 1) * (nranks + 2) / 2;
  if (!bad) bad = allreduce(&g, &want, "an allreduce on the grown communicator");
  if (g) ncclCommDestroy(g);
  return bad;
}

/* keyfail: every process stays until all have seen the split fail (a
 * process that leaves first would end the others' waits with its host
 * gone, ncclRemoteError, before their NCCLSIM_TIMEOUT): each leaves
 * IDFILE.done.FIRST holding its COUNT, and waits (up to 120 s times the
 * slowdown: the others' progress, not a timing) for NRANKS ranks' worth. */
static void all_done(const char *idfile) {
  char path[4096];
  snprintf(path, sizeof path, "%s.done.%d", idfile, first);
  FILE *f = fopen(path, "w");
  if (f) fprintf(f, "%d\n", count), fclose(f);
  for (int i = 0; i < 12000 * slowdown(); i++) {
    int done = 0;
    for (int r = 0; r < nranks; r++) {
      snprintf(path, sizeof path, "%s.done.%d", idfile, r);
      int c = 0;
      if ((f = fopen(path, "r")) && fscanf(f, "%d", &c) == 1) done += c;
      if (f) fclose(f);
    }
    if (done >= nranks) return;
    usleep(10000);
  }
}

/* ---- the bootstrap root's keys ---- */

static int keys_left(int held0, int more, const char *after) {
  int open = -1, held = sim_net_root_keys(&open);
  if (open == 0 && held == held0 + more) return 0;
  fprintf(stderr, "hosts_mgmt: ranks %d..%d: after %s this process's bootstrap root holds %d key(s), %d of them "
          "open; want %d, none open\n", first, first + count - 1, after, held, open, held0 + more);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: hosts_mgmt group|nonblocking|keyfail NRANKS FIRST COUNT IDFILE\n");
    return 2;
  }
  const char *mode = argv[1], *idfile = argv[5];
  nranks = atoi(argv[2]), first = atoi(argv[3]), count = atoi(argv[4]);
  bool nonblocking = !strcmp(mode, "nonblocking"), keyfail = !strcmp(mode, "keyfail");
  if ((!nonblocking && !keyfail && strcmp(mode, "group")) || nranks < 2 || first < 0 || count < 1 || count > MAXR)
    return 2;
  if (first == nranks) {
    if (count != 1 || keyfail) return 2;
    return new_rank(idfile, nonblocking) || keys_left(0, 0, "the grow");
  }
  if (first + count > nranks) return 2;
  ncclUniqueId id;
  ncclResult_t r;
  if (first == 0) {
    if ((r = ncclGetUniqueId(&id)) != ncclSuccess) return fail("ncclGetUniqueId", r);
    if (write_id(idfile, &id) != 0) return fail("write the id file", ncclSystemError);
  } else if (read_id(idfile, &id, 30) != 0) {
    fprintf(stderr, "hosts_mgmt: no id in %s\n", idfile);
    return 1;
  }
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = nonblocking ? 0 : 1;
  ncclComm_t comms[MAXR] = {0};
  r = ncclSuccess;
  ncclGroupStart();
  for (int i = 0; i < count && (r == ncclSuccess || r == ncclInProgress); i++) {
    cudaSetDevice(i);
    r = ncclCommInitRankConfig(&comms[i], nranks, id, first + i, &cfg);
  }
  ncclResult_t g = ncclGroupEnd();
  if (r == ncclSuccess || r == ncclInProgress) r = g;
  if ((r != ncclSuccess && r != ncclInProgress) || settle(comms, count, "init")) {
    destroy(comms);
    return fail("init", r);
  }
  int open0 = -1, held0 = sim_net_root_keys(&open0);
  int bad = 0;
  if (keyfail) {
    /* The last rank never calls it: the others wait twice NCCLSIM_TIMEOUT. */
    ncclComm_t sub[MAXR] = {0};
    ncclGroupStart();
    for (int i = 0; i < count; i++)
      if (first + i != nranks - 1 && (r = ncclCommSplit(comms[i], 0, 0, &sub[i], NULL)) != ncclSuccess)
        bad = fail("ncclCommSplit inside a group", r);
    r = ncclGroupEnd();
    all_done(idfile);
    if (!bad && r != ncclTimeout) bad = fail("a split that a rank never called did not time out", r);
    for (int i = 0; i < count && !bad; i++)
      if (sub[i]) bad = fail("a split that timed out gave a communicator", ncclInternalError);
    if (!bad) bad = keys_left(held0, 0, "a split that timed out");
  } else {
    /* The grow first: a rank that a shrink excluded counts one child less
     * than the others, and names another grow. */
    bad = suspend_resume(comms, nonblocking) || grow(comms, idfile, nonblocking) ||
          keys_left(held0, first == 0, "the grow") || children(comms, nonblocking) ||
          keys_left(held0, first == 0, "the splits and the shrink");
  }
  destroy(comms);
  return bad;
}
