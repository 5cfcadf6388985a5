/* tests/sim_ipc.c — interprocess memory and event handles
 * (sim/cuda/ipc.c) between ranks as processes: forked ones (main turns
 * the mode on first, as a program would) and processes exec'd apart in
 * one launcher job, as mpirun starts them. A handle maps the exporter's
 * very bytes; one of another job, of this process, of freed memory or of
 * an exited process gets CUDA's error and reaches nothing. Also: what a
 * CUDA context owns (registrations, pools) is not a forked child's.
 *
 * The parent starts no thread (no stream work) before its last fork, as
 * ThreadSanitizer cannot follow a child that starts threads after a
 * multi-threaded fork: it reads and writes simulated device memory, which
 * is host memory, directly, and test_event_across_processes, whose parent
 * uses streams, comes after every other fork. */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
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

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <ncclsim.h>

#include "sim.h" /* sim_mem_lookup, sim_last_warning */
#include "cuda/cuda.h" /* sim_mem_lookup */

static char *self_exe;

typedef struct {
  cudaIpcMemHandle_t mem, mem2;
  cudaIpcEventHandle_t event;
  void *ptr; /* what the exporter sees */
  _Atomic int step;
  _Atomic int go; /* test_event_across_processes: the child's stream may run */
  _Atomic int child_ran;
  char why[512]; /* a child's failure */
} shared_box;

static shared_box *box;

#ifdef N4C_COVERAGE_TEST
/* libgcov: write this process's counters now (gcc >= 11). */
void __gcov_dump(void);
#endif

/* A forked child ends with _exit (its parent's state is not its own to
 * end), which skips gcov's exit handler: its counts are written first. */
static void child_exit(int status) {
#ifdef N4C_COVERAGE_TEST
  __gcov_dump();
#endif
  _exit(status);
}

#define CHILD_CHECK(cond, ...)                                 \
  do {                                                         \
    if (!(cond)) {                                             \
      snprintf(box->why, sizeof box->why, __VA_ARGS__);        \
      child_exit(1);                                           \
    }                                                          \
  } while (0)

/* Waits (up to 60 s: a sibling's progress, not a timing) until box->step
 * reaches `want`. */
static bool wait_step(int want) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (atomic_load(&box->step) < want) {
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (t.tv_sec - t0.tv_sec > 60) return false;
    sched_yield();
  }
  return true;
}

typedef void (*child_fn)(void);

static pid_t start_child(child_fn fn) {
  box->why[0] = '\0';
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    fn();
    child_exit(0);
  }
  return pid;
}

static void end_child(pid_t pid) {
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) fail_msg("child: %s", box->why[0] ? box->why : "died");
}

static void warned(const char *what) {
  if (!strstr(sim_last_warning(), what)) fail_msg("\"%s\" not in the last warning: %s", what, sim_last_warning());
}

/* ------------------------------------------------------------ memory */

enum { BYTES = 1 << 20 };

static void open_and_write(void) {
  void *p = NULL, *q = NULL;
  cudaError_t e = cudaIpcOpenMemHandle(&p, box->mem, cudaIpcMemLazyEnablePeerAccess);
  CHILD_CHECK(e == cudaSuccess, "open: %s: %s", cudaGetErrorName(e), sim_last_warning());
  CHILD_CHECK(p == box->ptr, "opened at %p, exported at %p", p, box->ptr);
  unsigned char *h = malloc(BYTES);
  CHILD_CHECK(h && cudaMemcpy(h, p, BYTES, cudaMemcpyDeviceToHost) == cudaSuccess, "read");
  for (int i = 0; i < BYTES; i++) CHILD_CHECK(h[i] == (unsigned char)(i * 7), "byte %d is %d", i, h[i]);
  struct cudaPointerAttributes a;
  CHILD_CHECK(cudaPointerGetAttributes(&a, p) == cudaSuccess && a.type == cudaMemoryTypeDevice && a.device == 1,
              "attributes: type %d device %d", (int)a.type, a.device);
  /* Opened again: the same pointer, one more reference (CUDA 13). */
  CHILD_CHECK(cudaIpcOpenMemHandle(&q, box->mem, cudaIpcMemLazyEnablePeerAccess) == cudaSuccess && q == p, "second open: %p", q);
  CHILD_CHECK(cudaMemset(p, 0x5a, BYTES) == cudaSuccess, "write");
  CHILD_CHECK(cudaIpcCloseMemHandle(p) == cudaSuccess, "first close");
  CHILD_CHECK(cudaMemset(p, 0x5b, 16) == cudaSuccess, "write after the first close");
  CHILD_CHECK(cudaIpcCloseMemHandle(p) == cudaSuccess, "second close");
  e = cudaIpcCloseMemHandle(p);
  CHILD_CHECK(e == cudaErrorInvalidValue, "third close: %s", cudaGetErrorName(e));
  /* What the exporter may not do, the importer may not either. */
  cudaIpcMemHandle_t h2;
  CHILD_CHECK(cudaIpcGetMemHandle(&h2, p) == cudaErrorInvalidValue, "re-export");
  CHILD_CHECK(cudaFree(p) == cudaErrorInvalidValue, "cudaFree of another process's memory");
  free(h);
}

/* The child sees the parent's bytes at the parent's address and writes
 * them; the parent reads what it wrote. */
static void test_mem_shared(void **state) {
  (void)state;
  assert_int_equal(cudaSetDevice(1), cudaSuccess);
  unsigned char *d, *h = malloc(BYTES);
  assert_non_null(h);
  assert_int_equal(cudaMalloc((void **)&d, BYTES), cudaSuccess);
  for (int i = 0; i < BYTES; i++) h[i] = (unsigned char)(i * 7);
  memcpy(d, h, BYTES);
  assert_int_equal(cudaIpcGetMemHandle(&box->mem, d), cudaSuccess);
  cudaIpcMemHandle_t again;
  assert_int_equal(cudaIpcGetMemHandle(&again, d), cudaSuccess); /* as often as wanted: the same handle */
  assert_memory_equal(&again, &box->mem, sizeof again);
  box->ptr = d;
  end_child(start_child(open_and_write));
  memcpy(h, d, BYTES);
  assert_int_equal(h[0], 0x5b);
  assert_int_equal(h[16], 0x5a);
  assert_int_equal(h[BYTES - 1], 0x5a);
  assert_int_equal(cudaFree(d), cudaSuccess); /* closed by then: freed at once */
  assert_false(sim_mem_lookup(d, NULL));
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
  free(h);
}

/* What cannot be exported, and what cannot be opened in this process. */
static void test_mem_errors(void **state) {
  (void)state;
  cudaIpcMemHandle_t h;
  void *d, *pinned, *nc, *pool, *p;
  char local[16];
  assert_int_equal(cudaMalloc(&d, 256), cudaSuccess);
  assert_int_equal(cudaMallocHost(&pinned, 256), cudaSuccess);
  assert_int_equal(ncclMemAlloc(&nc, 4096), ncclSuccess);
  assert_int_equal(cudaMallocAsync(&pool, 256, 0), cudaSuccess);
  assert_int_equal(cudaIpcGetMemHandle(NULL, d), cudaErrorInvalidValue);
  assert_int_equal(cudaIpcGetMemHandle(&h, NULL), cudaErrorInvalidValue);
  assert_int_equal(cudaIpcGetMemHandle(&h, pinned), cudaErrorInvalidValue);
  warned("is not cudaMalloc memory");
  assert_int_equal(cudaIpcGetMemHandle(&h, local), cudaErrorInvalidValue);
  assert_int_equal(cudaIpcGetMemHandle(&h, nc), cudaErrorInvalidValue);
  /* inside an allocation: CUDA 13 takes it (measured); the handle names the allocation */
  cudaIpcMemHandle_t inner, whole;
  assert_int_equal(cudaIpcGetMemHandle(&inner, (char *)d + 8), cudaSuccess);
  assert_int_equal(cudaIpcGetMemHandle(&whole, d), cudaSuccess);
  assert_memory_equal(&inner, &whole, sizeof inner);
  assert_int_equal(cudaIpcGetMemHandle(&h, pool), cudaErrorInvalidValue);
  warned("memory pool");
  assert_int_equal(cudaFree(pool), cudaSuccess); /* held by its pool until a synchronize */
  assert_int_equal(cudaIpcGetMemHandle(&h, pool), cudaErrorInvalidValue);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);

  assert_int_equal(cudaIpcGetMemHandle(&h, d), cudaSuccess);
  p = local;
  assert_int_equal(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess), cudaErrorDeviceUninitialized); /* its own */
  warned("made by this process");
  assert_ptr_equal(p, local);
  assert_int_equal(cudaIpcOpenMemHandle(NULL, h, cudaIpcMemLazyEnablePeerAccess), cudaErrorInvalidValue);
  assert_int_equal(cudaIpcOpenMemHandle(&p, h, 2), cudaErrorInvalidValue);
  assert_int_equal(cudaIpcOpenMemHandle(&p, h, 0), cudaErrorInvalidValue); /* CUDA 13 wants the flag (measured) */
  cudaIpcMemHandle_t junk = h;
  junk.reserved[20] ^= 1;
  assert_int_equal(cudaIpcOpenMemHandle(&p, junk, cudaIpcMemLazyEnablePeerAccess), cudaErrorInvalidValue);
  warned("not one that cudaIpcGetMemHandle made");
  cudaIpcEventHandle_t eh;
  memcpy(&eh, &h, sizeof eh); /* a memory handle is no event handle */
  cudaEvent_t ev;
  assert_int_equal(cudaIpcOpenEventHandle(&ev, eh), cudaErrorInvalidValue);
  assert_int_equal(cudaIpcCloseMemHandle(NULL), cudaErrorInvalidValue);
  assert_int_equal(cudaIpcCloseMemHandle(d), cudaErrorInvalidValue); /* never opened here */
  warned("not memory this process opened");
  assert_int_equal(cudaFree(d), cudaSuccess);
  assert_int_equal(cudaFreeHost(pinned), cudaSuccess);
  assert_int_equal(ncclMemFree(nc), ncclSuccess);
  (void)cudaGetLastError();
}

static void open_stale(void) {
  void *p = NULL;
  cudaError_t e = cudaIpcOpenMemHandle(&p, box->mem, cudaIpcMemLazyEnablePeerAccess);
  CHILD_CHECK(e == cudaErrorInvalidResourceHandle, "stale handle: %s", cudaGetErrorName(e));
  CHILD_CHECK(strstr(sim_last_warning(), "has freed the memory"), "warning: %s", sim_last_warning());
  CHILD_CHECK(p == NULL, "stale handle gave %p", p);
  e = cudaIpcOpenMemHandle(&p, box->mem2, cudaIpcMemLazyEnablePeerAccess);
  CHILD_CHECK(e == cudaSuccess && p == box->ptr, "fresh handle: %s", cudaGetErrorName(e));
  CHILD_CHECK(cudaIpcCloseMemHandle(p) == cudaSuccess, "close");
}

/* A handle of freed memory opens nothing, even where a new allocation
 * took the same address. */
static void test_mem_freed(void **state) {
  (void)state;
  void *a, *b;
  assert_int_equal(cudaMalloc(&a, 4096), cudaSuccess);
  assert_int_equal(cudaIpcGetMemHandle(&box->mem, a), cudaSuccess);
  assert_int_equal(cudaFree(a), cudaSuccess);
  assert_int_equal(cudaMalloc(&b, 4096), cudaSuccess);
  assert_int_equal(cudaIpcGetMemHandle(&box->mem2, b), cudaSuccess);
  box->ptr = b;
  end_child(start_child(open_stale));
  assert_int_equal(cudaFree(b), cudaSuccess);
}

static void hold_open(void) {
  void *p;
  CHILD_CHECK(cudaIpcOpenMemHandle(&p, box->mem, cudaIpcMemLazyEnablePeerAccess) == cudaSuccess, "open");
  atomic_store(&box->step, 1);
  CHILD_CHECK(wait_step(2), "the parent never freed");
  unsigned char b[64];
  CHILD_CHECK(cudaMemcpy(b, p, sizeof b, cudaMemcpyDeviceToHost) == cudaSuccess, "read after the owner's free");
  for (int i = 0; i < 64; i++) CHILD_CHECK(b[i] == 0x33, "byte %d is %d", i, b[i]);
  CHILD_CHECK(cudaIpcCloseMemHandle(p) == cudaSuccess, "close");
}

/* The owner frees memory another process has open (undefined in CUDA):
 * the bytes stay until the last close, and are no longer the owner's. */
static void test_owner_frees_while_open(void **state) {
  (void)state;
  size_t n0, n1;
  ncclsimMemStats(&n0, NULL);
  void *a;
  assert_int_equal(cudaMalloc(&a, 4096), cudaSuccess);
  memset(a, 0x33, 4096);
  assert_int_equal(cudaIpcGetMemHandle(&box->mem, a), cudaSuccess);
  atomic_store(&box->step, 0);
  pid_t pid = start_child(hold_open);
  assert_true(wait_step(1));
  assert_int_equal(cudaFree(a), cudaSuccess);
  warned("keeps the bytes");
  ncclsimMemStats(&n1, NULL);
  assert_int_equal(n1, n0);
  assert_true(sim_mem_lookup(a, NULL)); /* still allocated */
  assert_int_equal(cudaFree(a), cudaErrorInvalidValue);
  warned("freed already");
  void *b;
  assert_int_equal(cudaMalloc(&b, 4096), cudaSuccess); /* cannot land on the bytes kept */
  assert_ptr_not_equal(b, a);
  atomic_store(&box->step, 2);
  end_child(pid);
  assert_false(sim_mem_lookup(a, NULL)); /* gone with the last close */
  assert_int_equal(cudaFree(b), cudaSuccess);
  (void)cudaGetLastError();
}

static void export_and_exit(void) {
  void *a;
  CHILD_CHECK(cudaMalloc(&a, 64) == cudaSuccess, "cudaMalloc");
  CHILD_CHECK(cudaIpcGetMemHandle(&box->mem, a) == cudaSuccess, "export");
  cudaEvent_t e;
  CHILD_CHECK(cudaEventCreateWithFlags(&e, cudaEventInterprocess | cudaEventDisableTiming) == cudaSuccess, "event");
  CHILD_CHECK(cudaIpcGetEventHandle(&box->event, e) == cudaSuccess, "export event");
}

/* A handle of a process that has exited opens nothing. */
static void test_exporter_exited(void **state) {
  (void)state;
  end_child(start_child(export_and_exit));
  void *p = NULL;
  assert_int_equal(cudaIpcOpenMemHandle(&p, box->mem, cudaIpcMemLazyEnablePeerAccess), cudaErrorInvalidResourceHandle);
  warned("has exited");
  cudaEvent_t e;
  assert_int_equal(cudaIpcOpenEventHandle(&e, box->event), cudaErrorInvalidResourceHandle);
  (void)cudaGetLastError();
}

/* ------------------------------------------------------- across jobs */

static void to_hex(const void *p, size_t n, char *out) {
  for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", ((const unsigned char *)p)[i]);
}

/* Runs this program's --open side in a process outside this job: one that
 * shares nothing ("private") or one that is a job of its own ("job"). */
static void exec_open(const char *mode, const char *kind, const void *handle, const char *want) {
  char hex[2 * CUDA_IPC_HANDLE_SIZE + 1];
  to_hex(handle, CUDA_IPC_HANDLE_SIZE, hex);
  int fd[2];
  assert_int_equal(pipe(fd), 0);
  pid_t p = fork();
  if (p == 0) {
    dup2(fd[1], 2);
    execl(self_exe, self_exe, "--open", mode, kind, hex, (char *)NULL);
    _exit(127);
  }
  close(fd[1]);
  char out[4096];
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
}

/* The exec'd side: opens the handle, expects cudaErrorMapBufferObjectFailed. */
static int open_main(const char *mode, const char *kind, const char *hex) {
  if (!strcmp(mode, "job") && ncclsimProcessesInit() != ncclSuccess) return 2;
  char h[CUDA_IPC_HANDLE_SIZE];
  for (size_t i = 0; i < sizeof h; i++) {
    unsigned v;
    if (sscanf(hex + 2 * i, "%2x", &v) != 1) return 3;
    h[i] = (char)v;
  }
  cudaError_t e;
  if (!strcmp(kind, "mem")) {
    cudaIpcMemHandle_t mh;
    memcpy(mh.reserved, h, sizeof h);
    void *p = NULL;
    e = cudaIpcOpenMemHandle(&p, mh, cudaIpcMemLazyEnablePeerAccess);
    if (p) return 4;
  } else {
    cudaIpcEventHandle_t eh;
    memcpy(eh.reserved, h, sizeof h);
    cudaEvent_t ev = NULL;
    e = cudaIpcOpenEventHandle(&ev, eh);
    if (ev) return 4;
  }
  fprintf(stderr, "result %s: %s\n", cudaGetErrorName(e), sim_last_warning());
  return e == cudaErrorMapBufferObjectFailed ? 0 : 1;
}

/* The exec'd side of test_other_jobs' last case: a process that shares
 * nothing exports memory and an event, and prints their handles. */
static int export_main(void) {
  void *a;
  cudaEvent_t e;
  cudaIpcMemHandle_t mh;
  cudaIpcEventHandle_t eh;
  if (cudaMalloc(&a, 64) != cudaSuccess || cudaIpcGetMemHandle(&mh, a) != cudaSuccess) return 2;
  if (cudaEventCreateWithFlags(&e, cudaEventInterprocess | cudaEventDisableTiming) != cudaSuccess ||
      cudaIpcGetEventHandle(&eh, e) != cudaSuccess)
    return 3;
  char hex[2 * CUDA_IPC_HANDLE_SIZE + 1];
  to_hex(&mh, sizeof mh, hex);
  printf("%s\n", hex);
  to_hex(&eh, sizeof eh, hex);
  printf("%s\n", hex);
  return 0;
}

static void from_hex(const char *hex, void *out, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned v;
    assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
    ((unsigned char *)out)[i] = (unsigned char)v;
  }
}

/* A handle reaches only processes of its own job: elsewhere its address
 * means nothing (or another job's memory), and nothing is read. */
static void test_other_jobs(void **state) {
  (void)state;
  void *a;
  assert_int_equal(cudaMalloc(&a, 64), cudaSuccess);
  cudaIpcMemHandle_t mh;
  assert_int_equal(cudaIpcGetMemHandle(&mh, a), cudaSuccess);
  cudaEvent_t e;
  assert_int_equal(cudaEventCreateWithFlags(&e, cudaEventInterprocess | cudaEventDisableTiming), cudaSuccess);
  cudaIpcEventHandle_t eh;
  assert_int_equal(cudaIpcGetEventHandle(&eh, e), cudaSuccess);
  exec_open("private", "mem", &mh, "shares nothing");
  exec_open("job", "mem", &mh, "another ncclsim job");
  exec_open("private", "event", &eh, "cudaErrorMapBufferObjectFailed");
  exec_open("job", "event", &eh, "another ncclsim job");
  assert_int_equal(cudaEventDestroy(e), cudaSuccess);
  assert_int_equal(cudaFree(a), cudaSuccess);
  /* The other way: handles from a process that shares nothing. */
  int fd[2];
  assert_int_equal(pipe(fd), 0);
  pid_t p = fork();
  if (p == 0) {
    dup2(fd[1], 1);
    execl(self_exe, self_exe, "--export", (char *)NULL);
    _exit(127);
  }
  close(fd[1]);
  char out[512];
  size_t got = 0;
  ssize_t k;
  while (got + 1 < sizeof out && (k = read(fd[0], out + got, sizeof out - 1 - got)) > 0) got += (size_t)k;
  out[got] = '\0';
  close(fd[0]);
  int st;
  assert_int_equal(waitpid(p, &st, 0), p);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  assert_true(got >= 2 * (2 * CUDA_IPC_HANDLE_SIZE + 1));
  from_hex(out, &mh, sizeof mh);
  from_hex(out + 2 * CUDA_IPC_HANDLE_SIZE + 1, &eh, sizeof eh);
  void *ptr = NULL;
  assert_int_equal(cudaIpcOpenMemHandle(&ptr, mh, cudaIpcMemLazyEnablePeerAccess), cudaErrorMapBufferObjectFailed);
  warned("a process that shares nothing");
  assert_null(ptr);
  cudaEvent_t ev = NULL;
  assert_int_equal(cudaIpcOpenEventHandle(&ev, eh), cudaErrorMapBufferObjectFailed);
  assert_null(ev);
  (void)cudaGetLastError();
}

/* ------------------------------------------------------------- events */

/* Holds the child's stream until the parent says go (up to 60 s: the
 * parent's progress, not a timing). */
static void wait_for_go(void *arg) {
  (void)arg;
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (!atomic_load(&box->go)) {
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (t.tv_sec - t0.tv_sec > 60) return;
    sched_yield();
  }
  atomic_store(&box->child_ran, 1);
}

static void record_imported(void) {
  cudaEvent_t e;
  cudaError_t err = cudaIpcOpenEventHandle(&e, box->event);
  CHILD_CHECK(err == cudaSuccess, "open: %s: %s", cudaGetErrorName(err), sim_last_warning());
  cudaStream_t s;
  CHILD_CHECK(cudaStreamCreate(&s) == cudaSuccess, "stream");
  CHILD_CHECK(cudaLaunchHostFunc(s, wait_for_go, NULL) == cudaSuccess, "host function");
  CHILD_CHECK(cudaEventRecord(e, s) == cudaSuccess, "record");
  float ms;
  CHILD_CHECK(cudaEventElapsedTime(&ms, e, e) == cudaErrorInvalidResourceHandle, "an imported event times nothing");
  atomic_store(&box->step, 1); /* recorded, held until the parent says go */
  CHILD_CHECK(cudaEventSynchronize(e) == cudaSuccess, "synchronize");
  CHILD_CHECK(atomic_load(&box->child_ran) == 1, "the record completed before the work before it");
  CHILD_CHECK(cudaEventDestroy(e) == cudaSuccess, "destroy");
  CHILD_CHECK(cudaStreamDestroy(s) == cudaSuccess, "stream destroy");
}

static void set_flag(void *arg) { atomic_store((_Atomic int *)arg, 1); }

/* The child records the parent's event behind work of its own; the
 * parent's queries, synchronize and stream waits see that record. */
static void test_event_across_processes(void **state) {
  (void)state;
  cudaEvent_t e;
  assert_int_equal(cudaEventCreateWithFlags(&e, cudaEventInterprocess | cudaEventDisableTiming), cudaSuccess);
  assert_int_equal(cudaIpcGetEventHandle(&box->event, e), cudaSuccess);
  atomic_store(&box->step, 0);
  atomic_store(&box->go, 0);
  atomic_store(&box->child_ran, 0);
  pid_t pid = start_child(record_imported);
  assert_true(wait_step(1)); /* recorded, held behind the child's host function */
  assert_int_equal(cudaEventQuery(e), cudaErrorNotReady);
  cudaStream_t s;
  _Atomic int after = 0;
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  assert_int_equal(cudaStreamWaitEvent(s, e, 0), cudaSuccess);
  assert_int_equal(cudaLaunchHostFunc(s, set_flag, (void *)&after), cudaSuccess);
  assert_int_equal(atomic_load(&after), 0);
  atomic_store(&box->go, 1);
  assert_int_equal(cudaEventSynchronize(e), cudaSuccess);
  assert_int_equal(atomic_load(&box->child_ran), 1);
  assert_int_equal(cudaEventQuery(e), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(atomic_load(&after), 1);
  end_child(pid);
  assert_int_equal(cudaEventQuery(e), cudaSuccess); /* the child's destroy ended only its own */
  assert_int_equal(cudaEventDestroy(e), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

static void open_then_lose(void) {
  cudaEvent_t e;
  CHILD_CHECK(cudaIpcOpenEventHandle(&e, box->event) == cudaSuccess, "open");
  atomic_store(&box->step, 1);
  CHILD_CHECK(wait_step(2), "the parent never destroyed it");
  cudaError_t err = cudaEventQuery(e);
  CHILD_CHECK(err == cudaErrorInvalidResourceHandle, "query after the exporter's destroy: %s", cudaGetErrorName(err));
  CHILD_CHECK(strstr(sim_last_warning(), "exporter has destroyed"), "warning: %s", sim_last_warning());
  CHILD_CHECK(cudaEventRecord(e, 0) == cudaErrorInvalidResourceHandle, "record");
  cudaIpcEventHandle_t again;
  CHILD_CHECK(cudaIpcGetEventHandle(&again, e) == cudaErrorInvalidResourceHandle, "re-export");
  CHILD_CHECK(cudaEventDestroy(e) == cudaSuccess, "destroy");
}

static void open_destroyed(void) {
  cudaEvent_t e = NULL;
  cudaError_t err = cudaIpcOpenEventHandle(&e, box->event);
  CHILD_CHECK(err == cudaErrorInvalidResourceHandle && !e, "destroyed before the open: %s", cudaGetErrorName(err));
}

static void reexport(void) {
  cudaEvent_t e;
  CHILD_CHECK(cudaIpcOpenEventHandle(&e, box->event) == cudaSuccess, "open");
  CHILD_CHECK(cudaIpcGetEventHandle(&box->event, e) == cudaSuccess, "re-export of an opened event");
  CHILD_CHECK(cudaEventRecord(e, 0) == cudaSuccess && cudaStreamSynchronize(0) == cudaSuccess, "record");
  CHILD_CHECK(cudaEventDestroy(e) == cudaSuccess, "destroy");
}

/* Event handle errors; the exporter's destroy, before or after an open. */
static void test_event_errors(void **state) {
  (void)state;
  cudaEvent_t plain, ipc, opened = NULL;
  assert_int_equal(cudaEventCreateWithFlags(&plain, cudaEventDisableTiming), cudaSuccess);
  assert_int_equal(cudaEventCreateWithFlags(&ipc, cudaEventInterprocess | cudaEventDisableTiming), cudaSuccess);
  cudaIpcEventHandle_t h;
  assert_int_equal(cudaIpcGetEventHandle(NULL, ipc), cudaErrorInvalidValue);
  assert_int_equal(cudaIpcGetEventHandle(&h, plain), cudaErrorInvalidResourceHandle);
  warned("cudaEventInterprocess");
  assert_int_equal(cudaIpcGetEventHandle(&h, NULL), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaIpcGetEventHandle(&h, ipc), cudaSuccess);
  assert_int_equal(cudaIpcOpenEventHandle(NULL, h), cudaErrorInvalidValue);
  assert_int_equal(cudaIpcOpenEventHandle(&opened, h), cudaErrorDeviceUninitialized); /* its own */
  assert_null(opened);
  cudaIpcEventHandle_t junk = h;
  junk.reserved[0] ^= 1;
  assert_int_equal(cudaIpcOpenEventHandle(&opened, junk), cudaErrorInvalidValue);
  warned("not one that cudaIpcGetEventHandle made");

  /* Opened, then destroyed by its exporter. */
  box->event = h;
  atomic_store(&box->step, 0);
  pid_t pid = start_child(open_then_lose);
  assert_true(wait_step(1));
  assert_int_equal(cudaEventDestroy(ipc), cudaSuccess);
  atomic_store(&box->step, 2);
  end_child(pid);
  /* Destroyed before the open; and a pooled event made again is another. */
  assert_int_equal(cudaEventCreateWithFlags(&ipc, cudaEventInterprocess | cudaEventDisableTiming), cudaSuccess);
  end_child(start_child(open_destroyed));
  /* An opened event exported again names the first exporter's. */
  assert_int_equal(cudaIpcGetEventHandle(&box->event, ipc), cudaSuccess);
  end_child(start_child(reexport));
  assert_int_equal(cudaEventQuery(ipc), cudaSuccess);
  assert_int_equal(cudaIpcOpenEventHandle(&opened, box->event), cudaErrorInvalidResourceHandle); /* it exited */
  assert_int_equal(cudaEventDestroy(ipc), cudaSuccess);
  assert_int_equal(cudaEventDestroy(plain), cudaSuccess);
  (void)cudaGetLastError();
}

/* ----------------------------------------------- a CUDA context's own */

static void child_has_none(void) {
  cudaError_t e = cudaHostUnregister(box->ptr);
  CHILD_CHECK(e == cudaErrorHostMemoryNotRegistered, "the parent's registration: %s", cudaGetErrorName(e));
  struct cudaPointerAttributes a;
  CHILD_CHECK(cudaPointerGetAttributes(&a, box->ptr) == cudaSuccess && a.type == cudaMemoryTypeUnregistered,
              "registered in the child: type %d", (int)a.type);
  CHILD_CHECK(cudaHostRegister(box->ptr, 64, 0) == cudaSuccess, "the child's own registration");
  CHILD_CHECK(cudaHostUnregister(box->ptr) == cudaSuccess, "unregister");
  void *p;
  unsigned long long used = 1;
  cudaMemPool_t pool;
  CHILD_CHECK(cudaDeviceGetDefaultMemPool(&pool, 0) == cudaSuccess &&
                  cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess && used == 0,
              "the child's default pool holds %llu bytes", used);
  CHILD_CHECK(cudaMallocAsync(&p, 64, 0) == cudaSuccess && cudaFreeAsync(p, 0) == cudaSuccess &&
                  cudaStreamSynchronize(0) == cudaSuccess,
              "the child's own pool");
}

/* Registrations and pools are the process's, as a CUDA context is: a
 * forked child starts without its parent's. */
static void test_context_state_not_inherited(void **state) {
  (void)state;
  static char buf[64];
  assert_int_equal(cudaHostRegister(buf, sizeof buf, 0), cudaSuccess);
  void *p;
  assert_int_equal(cudaMallocAsync(&p, 64, 0), cudaSuccess);
  box->ptr = buf;
  end_child(start_child(child_has_none));
  assert_int_equal(cudaHostUnregister(buf), cudaSuccess);
  assert_int_equal(cudaFree(p), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
}

/* --------------------------------------- processes started apart (mpirun) */

/* The exec'd side of test_job_started_apart: rank 0 exports, rank 1
 * opens, checks and writes, rank 0 reads back; files carry the handle and
 * the steps. */
static int job_main(int rank, const char *path) {
  char tmp[4096], done[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  snprintf(done, sizeof done, "%s.done", path);
  if (rank == 0) {
    unsigned char *d, h[4096];
    if (cudaMalloc((void **)&d, sizeof h) != cudaSuccess) return 2;
    for (size_t i = 0; i < sizeof h; i++) h[i] = (unsigned char)i;
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    cudaIpcMemHandle_t mh;
    if (cudaIpcGetMemHandle(&mh, d) != cudaSuccess) return 3;
    FILE *f = fopen(tmp, "wb");
    if (!f || fwrite(&mh, sizeof mh, 1, f) != 1 || fwrite(&d, sizeof d, 1, f) != 1 || fclose(f) != 0) return 4;
    if (rename(tmp, path) != 0) return 4;
    int i = 0;
    for (; i < 12000 && access(done, F_OK) != 0; i++) usleep(5000);
    if (i == 12000) return 5;
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    for (size_t k = 0; k < sizeof h; k++)
      if (h[k] != 0xee) return 6;
    return cudaFree(d) == cudaSuccess ? 0 : 7;
  }
  FILE *f = NULL;
  for (int i = 0; i < 12000 && !(f = fopen(path, "rb")); i++) usleep(5000);
  cudaIpcMemHandle_t mh;
  void *want, *p;
  if (!f || fread(&mh, sizeof mh, 1, f) != 1 || fread(&want, sizeof want, 1, f) != 1) return 8;
  fclose(f);
  cudaError_t e = cudaIpcOpenMemHandle(&p, mh, cudaIpcMemLazyEnablePeerAccess);
  if (e != cudaSuccess) {
    fprintf(stderr, "rank 1: open: %s: %s\n", cudaGetErrorName(e), sim_last_warning());
    return 9;
  }
  unsigned char h[4096];
  cudaMemcpy(h, p, sizeof h, cudaMemcpyDeviceToHost);
  for (size_t k = 0; k < sizeof h; k++)
    if (h[k] != (unsigned char)k) return 10;
  cudaMemset(p, 0xee, sizeof h);
  if (p != want || cudaIpcCloseMemHandle(p) != cudaSuccess) return 11;
  f = fopen(done, "wb");
  return f && fclose(f) == 0 ? 0 : 12;
}

/* Two processes exec'd apart in one launcher job (NCCLSIM_JOB, as mpirun
 * names its job) share bytes through a handle. */
static void test_job_started_apart(void **state) {
  (void)state;
  char job[64], path[256], done[300];
  snprintf(job, sizeof job, "sim_ipc-%d", (int)getpid());
  snprintf(path, sizeof path, "/tmp/ncclsim-test-%s.handle", job);
  snprintf(done, sizeof done, "%s.done", path);
  unlink(path);
  unlink(done);
  pid_t pid[2];
  for (int r = 0; r < 2; r++)
    if ((pid[r] = fork()) == 0) {
      setenv("NCCLSIM_JOB", job, 1);
      unsetenv("NCCLSIM_PROCESSES");
      char rs[8];
      snprintf(rs, sizeof rs, "%d", r);
      execl(self_exe, self_exe, "--job", rs, path, (char *)NULL);
      _exit(127);
    }
  int ok = 0;
  for (int r = 0; r < 2; r++) {
    int st;
    assert_int_equal(waitpid(pid[r], &st, 0), pid[r]);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) ok++;
    else fprintf(stderr, "rank %d: status %d\n", r, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  }
  unlink(path);
  unlink(done);
  assert_int_equal(ok, 2);
}

static int reset(void **state) {
  (void)state;
  cudaSetDevice(0);
  cudaGetLastError();
  return 0;
}

#define T(f) cmocka_unit_test_teardown(f, reset)

int main(int argc, char **argv) {
  self_exe = argv[0];
  if (argc == 5 && !strcmp(argv[1], "--open")) {
    unsetenv("NCCLSIM_PROCESSES");
    unsetenv("NCCLSIM_JOB");
    return open_main(argv[2], argv[3], argv[4]);
  }
  if (argc == 4 && !strcmp(argv[1], "--job")) return job_main(atoi(argv[2]), argv[3]);
  if (argc == 2 && !strcmp(argv[1], "--export")) {
    unsetenv("NCCLSIM_PROCESSES");
    unsetenv("NCCLSIM_JOB");
    return export_main();
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
      T(test_mem_shared),         T(test_mem_errors),        T(test_mem_freed),
      T(test_owner_frees_while_open), T(test_exporter_exited), T(test_other_jobs),
      T(test_event_errors),       T(test_context_state_not_inherited),
      T(test_event_across_processes), /* its parent starts threads: the last fork whose child does */
      T(test_job_started_apart),  /* exec'd children */
  };
  return cmocka_run_group_tests_name("sim_ipc", tests, NULL, NULL);
}
