/*
 * tests/fuzz/fuzz_api.c — libFuzzer target driving nccl4c's public API
 * (lib/nccl4c.h) on a 2-rank ncclsim communicator.
 *
 * One thread drives both ranks (n4c_comm_init_all over devices 0 and 1),
 * which ncclsim allows because NCCL calls only enqueue work on streams.
 * Each input is a little program: a sequence of opcodes, each followed by
 * the bytes its arguments are decoded from (a byte reader that runs dry
 * yields zeros, so every input is a valid program). Arguments are fuzzed
 * freely — counts, dtypes, peers, roots, offsets, flags, descriptor
 * arrays, window and resource handles, open or closed — with one rule:
 * every buffer pointer handed over lies inside memory this file owns
 * (simulated allocations), so any access past a buffer's end is ncclsim's
 * or nccl4c's failure to reject an overrun, which ASan then reports.
 *
 * Operations that complete only with a matching call on the other rank
 * are mostly issued as matched pairs, and at most one unmatched one per
 * input (it costs a NCCLSIM_TIMEOUT, kept small). After each input the
 * groups are balanced, streams synchronized and the input's resources
 * freed; if the communicators may be out of step (a timeout, an async
 * error, a one-sided window registration, a destroyed rank) they are
 * torn down and made again, so inputs do not poison each other.
 *
 * Disabled paths (known bugs, to be fixed in lib/ or sim/) are listed
 * under "Known bugs" below.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <ncclsim.h>

#include "nccl4c.h"

/* ---- Known bugs: set to 0 (-DFUZZ_SKIP_...=0) to run a path that fails
 * today; each has its reproducer under tests/fuzz/crashes/. ---- */
/* crashes/bufreg-handle-null: n4c_buffer_reg_handle(NULL, &h) evaluates
 * &reg->base on NULL (lib/bufreg.c), UBSan "member access within null
 * pointer". */
/* crashes/reduce-misaligned: ncclsim's reduction kernels load elements
 * through typed pointers (sim/coll/reduce.c), so a buffer whose address is
 * not a multiple of the element size is a misaligned load (UBSan). NCCL
 * accepts such buffers. Skipping keeps buffer offsets element-aligned. */
#ifndef FUZZ_SKIP_MISALIGNED
#define FUZZ_SKIP_MISALIGNED 0
#endif
/* crashes/dlpack-empty-stride-overflow: n4c_dlpack_empty checks that the
 * element count (the product of the extents) fits, but when one extent is
 * 0 the count is 0 and the stride loop (lib/dlpack.c) still multiplies the
 * other, huge, extents in int64_t: signed overflow (UBSan). Skipping
 * clamps the extents when one of them is 0. */
#ifndef FUZZ_SKIP_DLPACK_EMPTY_OVERFLOW
#define FUZZ_SKIP_DLPACK_EMPTY_OVERFLOW 0
#endif
/* crashes/abort-in-group-hang: inside an open group, a window
 * registration of rank 0 (deferred to ncclGroupEnd) then ncclCommAbort of
 * rank 0 on the same thread: abort's drain (sim/comm/comm.c) times out,
 * then waits again with no deadline for work that only the blocked
 * thread's ncclGroupEnd would run: a hang. Skipping: no
 * finalize/destroy/abort while a group is open. */
#ifndef FUZZ_SKIP_TEARDOWN_IN_GROUP
#define FUZZ_SKIP_TEARDOWN_IN_GROUP 0
#endif
/* crashes/coll-describe-uaf-race (timing-dependent; replaying the file
 * alone does not reproduce it): when a wait times out, ncclsim dumps every
 * rank's pending operations (sim_clique_dump_pending, under each rank's
 * comm lock); coll_describe (sim/coll/coll.c) reads the task's coll_slot,
 * which the task's own stream worker may free at that moment in
 * slot_leave, before it clears t->slot: heap-use-after-free. Skipping:
 * NCCLSIM_TIMEOUT stays long (0.2 s) except around an operation that may
 * time out, issued outside groups once both ranks' streams have drained,
 * so no collective completes during a dump. With 0, every wait has the
 * short timeout and spurious timeouts under load hit the race. */
#ifndef FUZZ_SKIP_DUMP_RACE
#define FUZZ_SKIP_DUMP_RACE 0
#endif
#ifndef FUZZ_SKIP_BUFREG_HANDLE_NULL
#define FUZZ_SKIP_BUFREG_HANDLE_NULL 0
#endif

#define NRANKS 2
#define MEMSZ 4096        /* bytes of each fixed buffer */
#define MAX_OPS 48        /* opcodes decoded per input */
#define NSLOT 6           /* live windows / registrations / redops / dev comms */
#define NTMP 4            /* n4c_mem_alloc blocks an input may hold */
#define REINIT_WINDOWS 512 /* windows registered before the comms are remade:
                            * ncclsim keeps deregistered handles until the
                            * communicator goes */

/* ======================================================================
 * Input reader
 * ==================================================================== */

typedef struct {
  const uint8_t *p;
  size_t n;
} rd_t;

static uint8_t u8(rd_t *r) {
  if (!r->n) return 0;
  r->n--;
  return *r->p++;
}
static uint16_t u16(rd_t *r) { return (uint16_t)(u8(r) | u8(r) << 8); }
static uint32_t u32(rd_t *r) { return (uint32_t)u16(r) | (uint32_t)u16(r) << 16; }
static uint64_t u64(rd_t *r) { return (uint64_t)u32(r) | (uint64_t)u32(r) << 32; }

/* An int that is usually small and sometimes anything. */
static int fint(rd_t *r) {
  uint8_t v = u8(r);
  switch (v >> 6) {
  case 0: return v & 7;
  case 1: return -(int)(v & 3) - 1;
  case 2: return (int)(int8_t)u8(r);
  default: return (int)u32(r);
  }
}

/* A size: small, 16-bit, near a power of two, or anything. */
static size_t fsize(rd_t *r) {
  uint8_t v = u8(r);
  switch (v >> 6) {
  case 0: return v & 63;
  case 1: return u16(r);
  case 2: return ((size_t)1 << (v & 63)) - (u8(r) & 3);
  default: return (size_t)u64(r);
  }
}

/* ======================================================================
 * Global state, set up once
 * ==================================================================== */

typedef struct {
  n4c_window_t *w[NRANKS];
} win_pair;

static struct {
  bool ready;
  n4c_comm_t *comm[NRANKS];
  cudaStream_t stream[NRANKS];
  void *nmem[NRANKS][2]; /* n4c_mem_alloc */
  void *cmem[NRANKS];    /* cudaMalloc */
  void *hmem[NRANKS];    /* cudaMallocHost, one per rank: ranks sharing
                          * host memory would race, as on real GPUs */
  win_pair fixed;        /* symmetric windows over nmem[r][0] */
  n4c_comm_t *null_comm; /* n4c_comm_new, never initialized */
  n4c_comm_t *dead_comm; /* initialized, then destroyed */
  unsigned windows;      /* registered since the comms were made */
  /* N4C_FUZZ_STATS=1 prints these at exit: inputs, remakes, inputs with
   * an operation meant to time out, and why inputs remade the comms. */
  unsigned long inits, inputs, timeouts, why[4];
  const char *long_timeout, *short_timeout;
} S;

/* What one input holds; released at its end. */
typedef struct {
  rd_t rd;
  int depth;     /* open groups */
  bool unmatched; /* the one unmatched operation was used */
  bool short_mode; /* NCCLSIM_TIMEOUT is short now */
  bool dirty;     /* communicators may be out of step: remake them */
  win_pair win[NSLOT];
  n4c_buffer_reg_t *reg[NSLOT];
  n4c_redop_t *redop[NSLOT];
  n4c_dev_comm_t *dc[NSLOT];
  struct {
    void *p;
    size_t size;
    int dev;
  } tmp[NTMP];
} in_t;

static void die(const char *what) {
  fprintf(stderr, "fuzz_api setup: %s: %s\n", what, n4c_last_error_message());
  abort();
}

static void comms_make(void) {
  int devs[NRANKS] = {0, 1};
  if (n4c_comm_init_all(S.comm, NRANKS, devs) != N4C_OK) die("n4c_comm_init_all");
  for (int r = 0; r < NRANKS; r++) {
    cudaSetDevice(r);
    if (cudaStreamCreate(&S.stream[r]) != cudaSuccess) die("cudaStreamCreate");
  }
  n4c_group_start();
  for (int r = 0; r < NRANKS; r++) {
    n4c_buffer_t b = n4c_buffer(S.nmem[r][0], MEMSZ, ncclUint8, r);
    if (n4c_comm_register_window(S.comm[r], &b, N4C_WIN_COLL_SYMMETRIC, &S.fixed.w[r]) != N4C_OK)
      die("n4c_comm_register_window");
  }
  if (n4c_group_end() != N4C_OK) die("n4c_group_end");
  S.windows = 0;
  S.inits++;
}

static void comms_drop(void) {
  for (int r = 0; r < NRANKS; r++) {
    n4c_resource_free(N4C_RESOURCE(S.fixed.w[r]));
    S.fixed.w[r] = NULL;
    n4c_comm_free(S.comm[r]);
    S.comm[r] = NULL;
    cudaStreamDestroy(S.stream[r]);
    S.stream[r] = NULL;
  }
}

static void stats(void) {
  fprintf(stderr, "fuzz_api: inputs %lu, communicators remade %lu, timeouts %lu\n", S.inputs, S.inits - 1,
          S.timeouts);
  fprintf(stderr, "fuzz_api: remade for: stream error %lu, device error %lu, async error %lu, input's own ops %lu\n",
          S.why[0], S.why[1], S.why[2], S.why[3]);
}

static void setup(void) {
  S.long_timeout = getenv("N4C_FUZZ_TIMEOUT") ? getenv("N4C_FUZZ_TIMEOUT") : "0.2";
  S.short_timeout = getenv("N4C_FUZZ_SHORT_TIMEOUT") ? getenv("N4C_FUZZ_SHORT_TIMEOUT") : "0.01";
  if (!FUZZ_SKIP_DUMP_RACE) S.long_timeout = S.short_timeout;
  ncclsimParamSet("TIMEOUT", S.long_timeout);
  ncclsimParamSet("SPIN", "50");
  /* Fuzzed allocation sizes then fail cleanly instead of exhausting RAM. */
  ncclsimParamSet("DEVICE_MEM", "67108864");
  for (int r = 0; r < NRANKS; r++) {
    for (int i = 0; i < 2; i++)
      if (n4c_mem_alloc(MEMSZ, r, &S.nmem[r][i]) != N4C_OK) die("n4c_mem_alloc");
    cudaSetDevice(r);
    if (cudaMalloc(&S.cmem[r], MEMSZ) != cudaSuccess) die("cudaMalloc");
  }
  for (int r = 0; r < NRANKS; r++)
    if (cudaMallocHost(&S.hmem[r], MEMSZ) != cudaSuccess) die("cudaMallocHost");
  if (n4c_comm_new(&S.null_comm) != N4C_OK) die("n4c_comm_new");
  n4c_comm_t *d[1];
  if (n4c_comm_init_all(d, 1, NULL) != N4C_OK) die("n4c_comm_init_all(1)");
  n4c_comm_destroy(d[0]);
  S.dead_comm = d[0];
  comms_make();
  if (getenv("N4C_FUZZ_STATS")) atexit(stats);
  S.ready = true;
}

/* ======================================================================
 * Argument decoders
 * ==================================================================== */

static int frank(rd_t *r) { return u8(r) & 1; }

/* A peer of rank `me`: mostly the other rank, sometimes itself or any int. */
static int fpeer(rd_t *r, int me) {
  uint8_t v = u8(r);
  if (v < 200) return 1 - me;
  if (v < 230) return me;
  return fint(r);
}

static ncclDataType_t fdtype(rd_t *r) {
  uint8_t v = u8(r);
  if (v < 240) return (ncclDataType_t)(v % ncclNumTypes);
  return (ncclDataType_t)fint(r);
}

/* The communicator an operation of rank `me` goes to: mostly its own. */
static n4c_comm_t *fcomm(in_t *in, int me) {
  uint8_t v = u8(&in->rd);
  if (v < 244) return S.comm[me];
  switch (v & 3) {
  case 0: return NULL;
  case 1: return S.null_comm;
  case 2: return S.dead_comm;
  default: return S.comm[1 - me];
  }
}

static cudaStream_t fstream(rd_t *r, int me) {
  uint8_t v = u8(r);
  if (v < 240) return S.stream[me];
  return (v & 1) ? NULL : S.stream[1 - me];
}

/* Base and size of one owned allocation, for rank `me`. */
static void *fmem(in_t *in, int me, uint8_t sel, size_t *size, int *dev) {
  *size = MEMSZ;
  *dev = me;
  switch (sel % 8) {
  case 0: return S.nmem[me][0];
  case 1: return S.nmem[me][1];
  case 2: return S.cmem[me];
  case 3: return S.hmem[me];
  case 4: *dev = 1 - me; return S.nmem[1 - me][1]; /* another device's memory */
  case 5: *size = 0; return NULL;
  default:
    for (int i = 0; i < NTMP; i++) {
      int k = (i + sel / 8) % NTMP;
      if (in->tmp[k].p) {
        *size = in->tmp[k].size;
        *dev = in->tmp[k].dev;
        return in->tmp[k].p;
      }
    }
    return S.nmem[me][1];
  }
}

/* A buffer of `count` elements of `dt` for rank `me` inside owned memory;
 * count (size_t)-1 means "fuzz the count too". */
static n4c_buffer_t fbuf_room(in_t *in, int me, ncclDataType_t dt, size_t count, size_t *room) {
  rd_t *r = &in->rd;
  uint8_t sel = u8(r);
  size_t size;
  int dev;
  char *base = fmem(in, me, sel, &size, &dev);
  size_t isz = n4c_dtype_size(dt);
  if (!isz) isz = 1;
  size_t off = 0;
  if (size) {
    if (sel & 0x80) off = u16(r) % size; /* any byte offset */
    if (FUZZ_SKIP_MISALIGNED) off -= off % isz;
    else off = ((size_t)(u8(r) & 15) * isz * 8) % size; /* aligned */
  }
  if (count == (size_t)-1) {
    uint8_t v = u8(r);
    if (v < 128) count = v & 63;
    else if (v < 224) count = size > off ? (size - off) / isz - (v & 1) + (v & 2 ? 1 : 0) : 0;
    else count = fsize(r);
  }
  int device = (sel & 0x40) && (u8(r) < 64) ? fint(r) : dev;
  if (room) *room = size - off;
  return n4c_buffer(base ? base + off : NULL, count, dt, device);
}

static n4c_buffer_t fbuf(in_t *in, int me, ncclDataType_t dt, size_t count) {
  return fbuf_room(in, me, dt, count, NULL);
}

/* Partly overlapping send and receive buffers of one rank are the
 * caller's error (NCCL allows only exact in place); make them exact. */
static void unoverlap(n4c_buffer_t *a, n4c_buffer_t *b) {
  size_t ia = n4c_dtype_size(a->dtype), ib = n4c_dtype_size(b->dtype);
  if (!a->ptr || !b->ptr || a->ptr == b->ptr) return;
  size_t la = a->count > MEMSZ ? MEMSZ : a->count * (ia ? ia : 1);
  size_t lb = b->count > MEMSZ ? MEMSZ : b->count * (ib ? ib : 1);
  uintptr_t pa = (uintptr_t)a->ptr, pb = (uintptr_t)b->ptr;
  if (pa < pb + lb && pb < pa + la) b->ptr = a->ptr;
}

/* A count that usually fits MEMSZ / 4 bytes. */
static size_t fcount(rd_t *r, ncclDataType_t dt) {
  size_t isz = n4c_dtype_size(dt);
  if (!isz) isz = 1;
  uint8_t v = u8(r);
  if (v < 192) return v % (MEMSZ / 4 / isz + 1);
  if (v < 250) return (MEMSZ / isz) - (v & 3);
  return fsize(r);
}

/* Waits for both ranks' streams (errors mark the comms for remaking). */
static void quiesce(in_t *in) {
  for (int k = 0; k < NRANKS; k++) {
    if (cudaStreamSynchronize(S.stream[k]) != cudaSuccess) in->dirty = true;
    cudaSetDevice(k);
    if (cudaDeviceSynchronize() != cudaSuccess) in->dirty = true;
  }
}

/* NCCLSIM_TIMEOUT is long (no spurious timeouts under load) except
 * around an operation that may wait in vain: the streams are drained, the
 * timeout made short, and after the operation the streams are drained
 * again before the long timeout returns. So every timeout is quick, and
 * none happens while other work runs (see FUZZ_SKIP_DUMP_RACE). */
static void short_begin(in_t *in) {
  quiesce(in);
  ncclsimParamSet("TIMEOUT", S.short_timeout);
  in->short_mode = true;
}
static void short_end(in_t *in) {
  if (!in->short_mode) return;
  quiesce(in);
  if (!FUZZ_SKIP_DUMP_RACE) S.long_timeout = S.short_timeout;
  ncclsimParamSet("TIMEOUT", S.long_timeout);
  in->short_mode = false;
}

/* Whether an operation that may wait in vain may be issued now: one per
 * input, outside groups (a group runs its work at its end). */
static bool may_time_out(in_t *in) {
  if (in->unmatched || in->depth > 0) return false;
  short_begin(in);
  in->unmatched = true;
  in->dirty = true;
  return true;
}

/* Whether this operation is issued on one rank only. */
static bool unmatched(in_t *in, uint8_t mode) {
  if (mode < 252 || in->unmatched) return false;
  return may_time_out(in);
}

/* Matched pairs run in a group of their own. When one rank's call fails
 * before reaching NCCL (nccl4c's own checks), the other's would wait in
 * vain: an invalid NCCL call inside the group fails the whole group at
 * ncclGroupEnd instead, as NCCL does, so neither runs. */
static void pair_begin(void) { n4c_group_start(); }
static void pair_end(in_t *in, bool failed, bool one) {
  if (failed && !one) ncclSend(NULL, 0, (ncclDataType_t)-1, 0, n4c_comm_handle(S.comm[0]), S.stream[0]);
  /* A failed group may leave the ranks' collective sequence numbers
   * apart (one rank's call was counted): remake the comms. */
  if (n4c_group_end() != N4C_OK || failed) in->dirty = true;
  short_end(in);
}

static ncclRedOp_t fop(in_t *in) {
  uint8_t v = u8(&in->rd);
  if (v < 200) return (ncclRedOp_t)(v % ncclNumOps);
  if (v < 240) {
    n4c_redop_t *o = in->redop[v % NSLOT];
    ncclRedOp_t op;
    if (o && n4c_redop_op(o, &op) == N4C_OK) return op;
    return ncclSum;
  }
  return (ncclRedOp_t)fint(&in->rd);
}

static int froot(rd_t *r) {
  uint8_t v = u8(r);
  if (v < 240) return v & 1;
  return fint(r);
}

/* ======================================================================
 * Operations
 * ==================================================================== */

static void op_group(in_t *in) {
  uint8_t v = u8(&in->rd);
  switch (v % 4) {
  case 0:
  case 1:
    if (in->depth < 4 && n4c_group_start() == N4C_OK) in->depth++;
    break;
  case 2:
    if (in->depth > 0 || (v & 0x80)) { /* sometimes an unbalanced end */
      if (n4c_group_end() != N4C_OK) in->dirty = true;
      if (in->depth > 0) in->depth--;
    }
    break;
  default:
    if (in->depth > 0) {
      double sec;
      if (v & 0x80) {
        n4c_group_simulate_end(NULL); /* leaves the group open */
      } else if (n4c_group_simulate_end(&sec) == N4C_OK) {
        in->depth--;
      } else {
        in->depth--; /* ncclGroupSimulateEnd failed: the group is gone too */
      }
    }
  }
}

static void op_p2p(in_t *in) {
  rd_t *r = &in->rd;
  uint8_t mode = u8(r);
  int a = frank(r);
  int peer = fpeer(r, a);
  ncclDataType_t dt = fdtype(r);
  bool fz = (mode & 0x1c) == 0x1c; /* counts from the input */
  size_t count = fz ? (size_t)-1 : fcount(r, dt);
  n4c_buffer_t sb = fbuf(in, a, dt, count);
  int b = (peer == 0 || peer == 1) ? peer : 1 - a;
  int rpeer = (mode & 0x62) == 0x62 ? fpeer(r, b) : a;
  ncclDataType_t rdt = (mode & 0xc4) == 0xc4 ? fdtype(r) : dt;
  n4c_buffer_t rb = fbuf(in, b, rdt, fz ? (size_t)-1 : count);
  if (a == b) unoverlap(&sb, &rb);
  bool one = unmatched(in, mode);
  bool failed = false;
  pair_begin();
  if (one) {
    if (mode & 2) n4c_comm_send(fcomm(in, a), &sb, peer, fstream(r, a));
    else n4c_comm_recv(fcomm(in, b), &rb, rpeer, fstream(r, b));
  } else if (n4c_comm_send(fcomm(in, a), &sb, peer, fstream(r, a)) == N4C_OK &&
             n4c_comm_recv(fcomm(in, b), &rb, rpeer, fstream(r, b)) != N4C_OK) {
    /* The send is in: give it a valid partner if it has one. */
    if (peer == 0 || peer == 1) {
      n4c_buffer_t v = n4c_buffer(S.nmem[b][1], sb.count, sb.dtype, b);
      if (a == b) unoverlap(&sb, &v);
      failed = n4c_comm_recv(S.comm[b], &v, a, S.stream[b]) != N4C_OK;
    }
  }
  pair_end(in, failed, one);
}

enum { C_ALLREDUCE, C_BCAST, C_REDUCE, C_ALLGATHER, C_RS, C_A2A, C_GATHER, C_SCATTER, C_N };

static n4c_status_t coll_call(int c, n4c_comm_t *comm, const n4c_buffer_t *s, const n4c_buffer_t *d,
                              ncclRedOp_t op, int root, cudaStream_t st) {
  switch (c) {
  case C_ALLREDUCE: return n4c_comm_allreduce(comm, s, d, op, st);
  case C_BCAST: return n4c_comm_broadcast(comm, s, d, root, st);
  case C_REDUCE: return n4c_comm_reduce(comm, s, d, op, root, st);
  case C_ALLGATHER: return n4c_comm_allgather(comm, s, d, st);
  case C_RS: return n4c_comm_reduce_scatter(comm, s, d, op, st);
  case C_A2A: return n4c_comm_alltoall(comm, s, d, st);
  case C_GATHER: return n4c_comm_gather(comm, s, d, root, st);
  default: return n4c_comm_scatter(comm, s, d, root, st);
  }
}

static void op_coll(in_t *in) {
  rd_t *r = &in->rd;
  uint8_t mode = u8(r);
  int c = u8(r) % C_N;
  ncclDataType_t dt = fdtype(r);
  ncclRedOp_t op = fop(in);
  int root = froot(r);
  size_t n = fcount(r, dt);
  /* Element counts of send and recv, as each collective wants them. */
  size_t sc = n, rc = n;
  if (c == C_ALLGATHER || c == C_GATHER) rc = n * NRANKS;
  if (c == C_RS || c == C_SCATTER) sc = n * NRANKS;
  if (c == C_A2A) sc = rc = n * NRANKS;
  bool fuzzed = (mode & 0x0e) == 0x0e; /* every count from the input */
  bool one = unmatched(in, mode);
  int only = u8(r) & 1;
  bool failed = false;
  int posted = 0;
  pair_begin();
  for (int k = 0; k < NRANKS; k++) {
    if (one && k != only) continue;
    size_t room;
    n4c_buffer_t s = fbuf_room(in, k, dt, fuzzed ? (size_t)-1 : sc, &room);
    n4c_buffer_t d = fbuf(in, k, (mode & 0x45) == 0x45 ? fdtype(r) : dt, fuzzed ? (size_t)-1 : rc);
    const n4c_buffer_t *sp = &s, *dp = &d;
    unoverlap(&s, &d);
    if (mode & 0x10) { /* in place; a shifted pointer stays inside s's memory */
      size_t isz = n4c_dtype_size(dt);
      d.ptr = s.ptr;
      if (s.ptr && isz && (c == C_ALLGATHER || c == C_RS) && n <= MEMSZ) {
        size_t shift = (size_t)k * n * isz;
        if (shift < room) {
          if (c == C_ALLGATHER) s.ptr = (char *)d.ptr + shift;
          else d.ptr = (char *)s.ptr + shift;
        }
      }
    }
    if ((mode & 0x20) && (c == C_BCAST || c == C_REDUCE || c == C_GATHER || c == C_SCATTER)) {
      if (c == C_BCAST || c == C_SCATTER) sp = NULL;
      else dp = NULL;
    }
    int rt = (mode & 0x86) == 0x86 ? froot(r) : root;
    if (coll_call(c, fcomm(in, k), sp, dp, op, rt, fstream(r, k)) == N4C_OK) {
      posted++;
    } else if (posted && !one) {
      /* The other rank's call is in: give it a valid partner. */
      n4c_buffer_t vs = n4c_buffer(S.nmem[k][0], sc, dt, k), vd = n4c_buffer(S.nmem[k][1], rc, dt, k);
      if (coll_call(c, S.comm[k], &vs, &vd, op, root, S.stream[k]) != N4C_OK) failed = true;
    } else if (!one) {
      break; /* nothing posted: the other rank need not call either */
    }
  }
  pair_end(in, failed, one);
}

/* The window (own handle of rank `me`) a slot names: fixed, input slot,
 * closed or NULL. */
static n4c_window_t *fwin(in_t *in, int me) {
  uint8_t v = u8(&in->rd);
  if (v < 128) return S.fixed.w[me];
  if (v < 250) return in->win[v % NSLOT].w[me];
  return (v & 1) ? NULL : S.fixed.w[1 - me]; /* NULL, or another comm's */
}

static void op_signal(in_t *in) {
  rd_t *r = &in->rd;
  uint8_t mode = u8(r);
  int a = frank(r);
  int peer = fpeer(r, a);
  int b = (peer == 0 || peer == 1) ? peer : 1 - a;
  int nsig = 1 + (u8(r) & 3);
  bool one = unmatched(in, mode);
  bool put = mode & 1;
  bool failed = false;
  bool fdesc = (mode & 0x70) == 0x70 && !one && may_time_out(in); /* fuzzed descriptors */
  pair_begin();
  for (int i = 0; i < nsig && (!one || (mode & 2)); i++) {
    int si = 0, ctx = 0;
    unsigned fl = 0;
    if ((mode & 0x84) == 0x84) {
      si = fint(r);
      ctx = fint(r);
      fl = (unsigned)fint(r);
    }
    if (put) {
      ncclDataType_t dt = fdtype(r);
      n4c_buffer_t lb = fbuf(in, a, dt, (mode & 0x48) == 0x48 ? (size_t)-1 : (size_t)(u8(r) & 31));
      /* A put to oneself from memory of the target window may overlap its
       * destination, the caller's error (a memcpy overlap in ncclsim):
       * such puts take their data from host memory outside any window. */
      if (peer == a && lb.ptr) lb.ptr = S.hmem[a];
      size_t off = (mode & 0x18) == 0x18 ? fsize(r) : (size_t)(u8(r) & 63);
      failed |= n4c_comm_put_signal(fcomm(in, a), &lb, peer, fwin(in, a), off, si, ctx, fl, fstream(r, a)) != N4C_OK;
    } else {
      failed |= n4c_comm_signal(fcomm(in, a), peer, si, ctx, fl, fstream(r, a)) != N4C_OK;
    }
  }
  if (one && (mode & 2)) {
    pair_end(in, failed, one);
    return;
  }
  /* The wait on b, for what a sent; descriptors fuzzed under mode & 0x20. */
  n4c_wait_signal_desc_t d[8];
  int nd = 1;
  d[0] = (n4c_wait_signal_desc_t){a, nsig, 0, 0};
  if (fdesc) {
    nd = (int)(u8(r) % 10) - 1; /* -1 .. 8 */
    for (int i = 0; i < nd; i++) {
      uint8_t k = u8(r);
      d[i].peer = k < 128 ? a : fpeer(r, b);
      d[i].op_count = k & 1 ? fint(r) : nsig;
      d[i].signal_index = k & 2 ? fint(r) : 0;
      d[i].context = k & 4 ? fint(r) : 0;
    }
  }
  failed |= n4c_comm_wait_signal(fcomm(in, b), (mode & 0x10) && nd == 0 ? NULL : d, nd, fstream(r, b)) != N4C_OK;
  pair_end(in, failed, one);
}

static void op_register_window(in_t *in) {
  rd_t *r = &in->rd;
  uint8_t mode = u8(r);
  int k = u8(r) % NSLOT;
  win_pair *wp = &in->win[k];
  if (wp->w[0] || wp->w[1]) return; /* slot busy until the input ends */
  ncclDataType_t dt = fdtype(r);
  size_t count = (mode & 0x14) == 0x14 ? (size_t)-1 : fcount(r, dt);
  int flags = (mode & 0x28) == 0x28 ? fint(r) : (int)(u8(r) & 3);
  bool anymem = (mode & 0xc0) == 0xc0; /* else NCCL memory, as windows need */
  /* Any failed side leaves the other waiting: always under the short
   * timeout, so never inside an open group. */
  if (in->depth > 0) return;
  bool one = unmatched(in, mode);
  if (!one) short_begin(in);
  int only = mode & 1;
  bool grouped = !(mode & 2) || one;
  if (grouped) n4c_group_start();
  int ok = 0;
  for (int rk = 0; rk < NRANKS; rk++) {
    if (one && rk != only) continue;
    n4c_buffer_t b = anymem ? fbuf(in, rk, dt, count)
                            : n4c_buffer(S.nmem[rk][1], count, dt, rk);
    if (n4c_comm_register_window(fcomm(in, rk), &b, flags, &wp->w[rk]) == N4C_OK) ok++;
    if (!grouped && ok != rk + 1) break; /* the other rank would wait in vain */
  }
  if (grouped && n4c_group_end() != N4C_OK) in->dirty = true;
  /* A one-sided or failed registration leaves the ranks' rounds apart. */
  if (ok != NRANKS) in->dirty = true;
  short_end(in);
  S.windows++;
}

static void op_window_query(in_t *in) {
  rd_t *r = &in->rd;
  int me = frank(r);
  n4c_window_t *w = fwin(in, me);
  uint8_t q = u8(r);
  void *p = NULL;
  size_t off = (q & 0x80) ? fsize(r) : (size_t)(u8(r) % (MEMSZ + 8));
  void **out = (q & 0x40) ? NULL : &p;
  switch (q % 7) {
  case 0: n4c_window_lsa_ptr(w, fint(r), off, out); break;
  case 1: n4c_window_peer_ptr(w, fint(r), off, out); break;
  case 2: n4c_window_lsa_multimem_ptr(w, off, out); break;
  case 3: n4c_window_user_ptr(w, out); break;
  case 4: (void)n4c_window_handle(w); (void)n4c_window_size(w); break;
  case 5: (void)n4c_resource_is_valid(N4C_RESOURCE(w)); break;
  default:
    /* Closing a fixed window makes it a closed handle for later ops. */
    if (w) n4c_resource_close(N4C_RESOURCE(w));
  }
}

static void op_register_buffer(in_t *in) {
  rd_t *r = &in->rd;
  uint8_t mode = u8(r);
  int me = frank(r);
  int k = u8(r) % NSLOT;
  if (mode & 1) {
    n4c_buffer_reg_t *g = in->reg[k];
    void *h;
    switch ((mode >> 1) & 3) {
    case 0:
      if (FUZZ_SKIP_BUFREG_HANDLE_NULL && !g) break;
      n4c_buffer_reg_handle(g, (mode & 8) ? NULL : &h);
      break;
    case 1: (void)n4c_buffer_reg_size(g); break;
    case 2: if (g) n4c_resource_close(N4C_RESOURCE(g)); break;
    default: (void)n4c_resource_is_valid(N4C_RESOURCE(g));
    }
    return;
  }
  if (in->reg[k]) return;
  ncclDataType_t dt = fdtype(r);
  n4c_buffer_t b = fbuf(in, me, dt, (mode & 2) ? (size_t)-1 : fcount(r, dt));
  n4c_comm_register_buffer(fcomm(in, me), (mode & 4) ? NULL : &b, (mode & 8) ? NULL : &in->reg[k]);
}

static void op_redop(in_t *in) {
  rd_t *r = &in->rd;
  uint8_t mode = u8(r);
  int me = frank(r);
  int k = u8(r) % NSLOT;
  if (mode & 1) {
    n4c_redop_t *o = in->redop[k];
    ncclRedOp_t op;
    if (mode & 2) n4c_redop_op(o, (mode & 4) ? NULL : &op);
    else if (o) n4c_resource_close(N4C_RESOURCE(o));
    return;
  }
  if (in->redop[k]) return;
  ncclDataType_t dt = fdtype(r);
  n4c_redop_t **out = (mode & 8) ? NULL : &in->redop[k];
  if (mode & 2) {
    n4c_buffer_t b = fbuf(in, me, dt, (mode & 4) ? (size_t)-1 : 1);
    n4c_comm_create_pre_mul_sum_device(fcomm(in, me), (mode & 0x10) ? NULL : &b, out);
  } else {
    uint64_t scalar = u64(r);
    n4c_comm_create_pre_mul_sum_host(fcomm(in, me), (mode & 0x10) ? NULL : &scalar, dt, out);
  }
}

static int freq(rd_t *r) {
  uint8_t v = u8(r);
  if (v < 128) return N4C_UNSET;
  if (v < 224) return v & 7;
  return fint(r);
}

static void op_dev_comm(in_t *in) {
  rd_t *r = &in->rd;
  uint8_t mode = u8(r);
  int me = frank(r);
  int k = u8(r) % NSLOT;
  if (mode & 1) {
    n4c_dev_comm_t *d = in->dc[k];
    void *p;
    if (mode & 2) n4c_dev_comm_ptr(d, (mode & 4) ? NULL : &p);
    else if (d) n4c_resource_close(N4C_RESOURCE(d));
    return;
  }
  if (in->dc[k]) return;
  n4c_dev_comm_requirements_t q = N4C_DEV_COMM_REQUIREMENTS_INIT;
  int *f = &q.lsa_multimem;
  int nf = (int)(sizeof q / sizeof(int));
  if (mode & 2)
    for (int i = 0; i < nf; i++) f[i] = freq(r);
  n4c_comm_create_dev_comm(fcomm(in, me), (mode & 4) ? NULL : &q, (mode & 8) ? NULL : &in->dc[k]);
}

static void op_comm_query(in_t *in) {
  rd_t *r = &in->rd;
  uint8_t q = u8(r);
  int me = frank(r);
  n4c_comm_t *c = fcomm(in, me);
  bool nul = q & 0x80;
  int i;
  ncclResult_t res;
  const char *s;
  uint64_t v;
  n4c_comm_properties_t p;
  switch (q % 12) {
  case 0: n4c_comm_nranks(c, nul ? NULL : &i); break;
  case 1: n4c_comm_rank(c, nul ? NULL : &i); break;
  case 2: n4c_comm_device(c, nul ? NULL : &i); break;
  case 3: n4c_comm_properties(c, nul ? NULL : &p); break;
  case 4: n4c_comm_get_async_error(c, nul ? NULL : &res); break;
  case 5: n4c_comm_last_error(c, nul ? NULL : &s); break;
  case 6: n4c_comm_mem_stat(c, (n4c_mem_stat_t)fint(r), nul ? NULL : &v); break;
  case 7: (void)n4c_comm_handle(c); (void)n4c_comm_is_valid(c); break;
  case 8:
    /* Closes the fixed windows too: they stay closed handles until the
     * comms are remade. */
    n4c_comm_close_all_resources(c);
    break;
  case 9:
    if ((q & 0x40) && !(FUZZ_SKIP_TEARDOWN_IN_GROUP && in->depth > 0)) { /* ends a rank: remake the comms */
      if (c == S.comm[0] || c == S.comm[1]) in->dirty = true;
      switch ((q >> 4) & 3) {
      case 0: n4c_comm_finalize(c); break;
      case 1: n4c_comm_destroy(c); break;
      default: n4c_comm_abort(c);
      }
    }
    break;
  case 10: {
    n4c_comm_t *nc = NULL;
    if (n4c_comm_new((q & 0x40) ? NULL : &nc) == N4C_OK) {
      n4c_buffer_t b = n4c_buffer(S.nmem[0][0], 1, ncclInt8, 0);
      n4c_comm_send(nc, &b, 0, NULL);
      n4c_comm_free(nc);
    }
    break;
  }
  default: {
    ncclUniqueId id;
    n4c_get_unique_id(nul ? NULL : &id);
  }
  }
}

static void op_mem(in_t *in) {
  rd_t *r = &in->rd;
  uint8_t mode = u8(r);
  size_t size = (mode & 1) ? fsize(r) : (size_t)u16(r);
  int dev = (mode & 2) ? fint(r) : (int)(u8(r) & 1);
  void *p = NULL;
  if (n4c_mem_alloc(size, dev, (mode & 4) ? NULL : &p) != N4C_OK || !p) return;
  for (int i = 0; i < NTMP; i++)
    if (!in->tmp[i].p) {
      int d = dev;
      if (d == N4C_CURRENT_DEVICE) cudaGetDevice(&d);
      in->tmp[i].p = p;
      in->tmp[i].size = size;
      in->tmp[i].dev = d;
      return;
    }
  n4c_mem_free(p); /* nothing can be using it yet */
}

static void op_dlpack(in_t *in) {
  rd_t *r = &in->rd;
  uint8_t mode = u8(r);
  int64_t shape[8], strides[8];
  int ndim = (int)(u8(r) % 11) - 2; /* -2 .. 8 */
  for (int i = 0; i < 8; i++) {
    uint8_t v = u8(r);
    shape[i] = v < 192 ? (int64_t)(v & 15) : (int64_t)u64(r);
    strides[i] = (int64_t)(int8_t)u8(r);
  }
  if (mode & 1) {
    /* Row-major strides for the shape, so contiguity is often right. */
    int64_t s = 1;
    for (int i = (ndim > 8 ? 8 : ndim) - 1; i >= 0; i--) {
      strides[i] = s;
      s *= shape[i] & 15;
    }
  }
  DLDataType dt = {(uint8_t)(u8(r) % 8), (uint8_t)(u8(r) < 200 ? 8u << (u8(r) & 3) : u8(r)),
                   (uint16_t)(u8(r) < 240 ? 1 : u16(r))};
  if (mode & 2) {
    char orders[] = {'C', 'F', 'A', 0};
    DLManagedTensor *t = NULL;
    int dev = (mode & 4) ? fint(r) : (int)(u8(r) & 1);
    bool zero = false;
    for (int i = 0; i < ndim; i++) zero |= shape[i] == 0;
    if (FUZZ_SKIP_DLPACK_EMPTY_OVERFLOW && zero)
      for (int i = 0; i < ndim; i++) shape[i] &= 0x7f; /* 127^8 fits */
    if (n4c_dlpack_empty((mode & 8) ? NULL : shape, ndim, fdtype(r), orders[u8(r) & 3], dev,
                         (mode & 0x10) ? NULL : &t) == N4C_OK &&
        t) {
      n4c_buffer_t b;
      n4c_buffer_from_dlpack(&t->dl_tensor, &b);
      if (t->deleter) t->deleter(t);
    }
    return;
  }
  size_t size;
  int dev;
  char *base = fmem(in, frank(r), u8(r), &size, &dev);
  DLTensor t = {
      .data = base,
      .device = {(DLDeviceType)(u8(r) < 224 ? kDLCUDA : u8(r)), u8(r) < 224 ? dev : fint(r)},
      .ndim = ndim,
      .dtype = dt,
      .shape = (mode & 8) ? NULL : shape,
      .strides = (mode & 4) ? NULL : strides,
      .byte_offset = (mode & 0x10) ? (uint64_t)fsize(r) : 0,
  };
  n4c_buffer_t b;
  n4c_buffer_from_dlpack((mode & 0x20) ? NULL : &t, (mode & 0x40) ? NULL : &b);
}

static void op_misc(in_t *in) {
  rd_t *r = &in->rd;
  int v = (int)u32(r);
  volatile const char *s;
  s = n4c_strerror((n4c_status_t)v);
  s = n4c_status_name((n4c_status_t)v);
  s = n4c_dtype_name((ncclDataType_t)v);
  s = n4c_gin_type_name((n4c_gin_type_t)v);
  s = n4c_gin_connection_type_name((n4c_gin_connection_type_t)v);
  s = n4c_last_error_message();
  (void)s;
  (void)n4c_dtype_size((ncclDataType_t)v);
  (void)n4c_last_nccl_result();
  (void)n4c_buffer(NULL, (size_t)v, (ncclDataType_t)v, v);
}

typedef void (*op_fn)(in_t *);
/* Weighted: paired communication ops appear more than one-off queries. */
static const op_fn ops[] = {
    op_p2p,  op_p2p,  op_coll,        op_coll,           op_coll,    op_signal,  op_signal,
    op_group, op_register_window, op_window_query, op_window_query, op_register_buffer,
    op_redop, op_dev_comm, op_comm_query, op_mem, op_dlpack, op_misc,
};
#define NOPS (sizeof ops / sizeof ops[0])

/* ======================================================================
 * Input end
 * ==================================================================== */

static void finish(in_t *in) {
  while (in->depth > 0) {
    if (n4c_group_end() != N4C_OK) in->dirty = true;
    in->depth--;
  }
  bool pre = in->dirty;
  for (int k = 0; k < NRANKS; k++) {
    if (cudaStreamSynchronize(S.stream[k]) != cudaSuccess) in->dirty = true, S.why[0]++;
    cudaSetDevice(k);
    if (cudaDeviceSynchronize() != cudaSuccess) in->dirty = true, S.why[1]++;
    ncclResult_t res = ncclSuccess;
    if (n4c_comm_get_async_error(S.comm[k], &res) != N4C_OK || res != ncclSuccess) in->dirty = true, S.why[2]++;
  }
  if (pre) S.why[3]++;
  cudaGetLastError();
  for (int k = 0; k < NSLOT; k++) {
    for (int rk = 0; rk < NRANKS; rk++) n4c_resource_free(N4C_RESOURCE(in->win[k].w[rk]));
    n4c_resource_free(N4C_RESOURCE(in->reg[k]));
    n4c_resource_free(N4C_RESOURCE(in->redop[k]));
    n4c_resource_free(N4C_RESOURCE(in->dc[k]));
  }
  for (int rk = 0; rk < NRANKS; rk++)
    if (!n4c_resource_is_valid(N4C_RESOURCE(S.fixed.w[rk]))) in->dirty = true;
  S.inputs++;
  if (in->unmatched) S.timeouts++;
  if (in->dirty || S.windows >= REINIT_WINDOWS) {
    comms_drop();
    comms_make();
  }
  /* After the comms went, nothing in flight can touch these. */
  for (int i = 0; i < NTMP; i++) n4c_mem_free(in->tmp[i].p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!S.ready) setup();
  in_t in;
  memset(&in, 0, sizeof in);
  in.rd = (rd_t){data, size};
  for (int n = 0; n < MAX_OPS && in.rd.n; n++) ops[u8(&in.rd) % NOPS](&in);
  finish(&in);
  return 0;
}
