/* tests/kernel_tsan.cu — ThreadSanitizer on kernels: a race between
 * threads of a block is reported, what orders them (a barrier, __syncwarp,
 * a volatile flag, as on a GPU) makes it none, and the engine's own work
 * around them (fibers, barriers, warp exchanges, the ring) is never
 * reported (sim/kernel/fiber.c, docs/kernels.md "Sanitizers").
 *
 * Each kernel runs in a child (this program again, its name as argument):
 * the parent reads the child's stderr and exit status (ThreadSanitizer's
 * 66 after a report). In a build without ThreadSanitizer there is nothing
 * to check: the program says so and skips (77). Built by ncclsim-nvcc
 * (tests/kernel.mk). */
#include "kernel_test.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#if defined(__SANITIZE_THREAD__)
#define TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TSAN 1
#endif
#endif

/* ---- the kernels (blocks of 64 threads) ---- */

/* Each thread reads its neighbour's cell, with or without the barrier
 * between the write and the read. */
__global__ void neighbour(int *out, int sync) {
  __shared__ int cell[64];
  int t = threadIdx.x;
  cell[t] = t;
  if (sync) __syncthreads();
  out[t] = cell[(t + 1) % 64];
}

/* Every thread stores to one word of global memory. */
__global__ void one_word(int *out) { out[0] = threadIdx.x; }

/* A warp's lanes meet at __syncwarp between the write and the read. */
__global__ void in_warp(int *out) {
  __shared__ int cell[64];
  int t = threadIdx.x;
  cell[t] = t;
  __syncwarp();
  out[t] = cell[(t & ~31) + (t + 1) % 32];
}

/* A thread polls a volatile flag that a later thread sets (a volatile
 * access is a relaxed one on a GPU: no race). */
__global__ void flag(volatile int *f, int *out) {
  if (threadIdx.x == 0) {
    while (*f == 0) {
    }
    out[0] = 1;
  } else if (threadIdx.x == blockDim.x - 1) {
    *f = 1;
  }
}

/* The engine at work, over two blocks: barriers, shuffles, votes,
 * __activemask, a thread that returns early, lanes that diverge around
 * exchanges; no race. */
__global__ void busy(int *out) {
  __shared__ int sum[2];
  int t = threadIdx.x;
  if (t == 63) return;
  if (t < 2) sum[t] = 0;
  __syncthreads();
  unsigned m = __activemask();
  int v = __shfl_down_sync(m, t, 1);
  if (t % 32 < 16) v += __shfl_xor_sync(0x0000ffffu, v, 1);
  v += __ballot_sync(m, t & 1) != 0;
  atomicAdd(&sum[t / 32], v);
  __syncthreads();
  out[blockIdx.x * 64 + t] = sum[t / 32];
}

/* ---- the child: runs one kernel ---- */

static int child(const char *which) {
  int *d = NULL;
  if (cudaMalloc(&d, 128 * sizeof(int)) != cudaSuccess || cudaMemset(d, 0, 128 * sizeof(int)) != cudaSuccess)
    return 2;
  if (!strcmp(which, "neighbour_race")) neighbour<<<1, 64>>>(d, 0);
  else if (!strcmp(which, "neighbour_sync")) neighbour<<<1, 64>>>(d, 1);
  else if (!strcmp(which, "one_word")) one_word<<<1, 64>>>(d);
  else if (!strcmp(which, "in_warp")) in_warp<<<1, 64>>>(d);
  else if (!strcmp(which, "flag")) flag<<<1, 64>>>(d, d + 1);
  else if (!strcmp(which, "busy")) busy<<<2, 64>>>(d);
  else return 3;
  if (cudaDeviceSynchronize() != cudaSuccess) return 4;
  int h[64];
  if (cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess) return 5;
  cudaFree(d);
  /* What each kernel computed, so a clean run is also a right one. */
  if (!strcmp(which, "neighbour_sync"))
    for (int t = 0; t < 64; t++)
      if (h[t] != (t + 1) % 64) return 6;
  if (!strcmp(which, "in_warp"))
    for (int t = 0; t < 64; t++)
      if (h[t] != (t & ~31) + (t + 1) % 32) return 6;
  if (!strcmp(which, "flag") && h[1] != 1) return 6;
  return 0;
}

#if TSAN
/* ---- the parent ---- */

static const char *self;

/* Runs the child for `which`; its stderr (allocated) and exit status. */
static char *run_child(const char *which, int *status) {
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  posix_spawn_file_actions_addclose(&fa, fds[1]);
  /* Its reports on stderr, whatever this run's options say; the last of
   * an option wins. */
  const char *old = getenv("TSAN_OPTIONS");
  char opts[1024];
  snprintf(opts, sizeof opts, "%s log_path=stderr exitcode=66", old ? old : "");
  setenv("TSAN_OPTIONS", opts, 1);
  char *argv[] = {(char *)self, (char *)which, NULL};
  pid_t pid;
  int rc = posix_spawn(&pid, self, &fa, NULL, argv, environ);
  if (old) setenv("TSAN_OPTIONS", old, 1);
  else unsetenv("TSAN_OPTIONS");
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  assert_int_equal(rc, 0);
  size_t len = 0, cap = 4096;
  char *text = (char *)malloc(cap);
  assert_non_null(text);
  for (;;) {
    if (cap - len < 4096) {
      cap *= 2;
      text = (char *)realloc(text, cap);
      assert_non_null(text);
    }
    ssize_t n = read(fds[0], text + len, cap - len - 1);
    if (n <= 0) break;
    len += (size_t)n;
  }
  text[len] = 0;
  close(fds[0]);
  assert_int_equal(waitpid(pid, status, 0), pid);
  return text;
}

static int count(const char *text, const char *what) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, what)); p += strlen(what)) n++;
  return n;
}

/* An access's line in a report ("  Read of size 4 at ... by thread T3:",
 * "  Previous write ...", "  Atomic write ..."). */
static bool access_line(const char *line) {
  static const char *const kinds[] = {"  Read ", "  Write ", "  Previous ", "  Atomic "};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (!strncmp(line, kinds[i], strlen(kinds[i]))) return true;
  return false;
}

/* Each access a report names (its first frame) is in `kernel`, in this
 * file: not in the engine. */
static void accesses_in(const char *text, const char *kernel) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, " of size ")); p++) {
    const char *line = p;
    while (line > text && line[-1] != '\n') line--;
    if (!access_line(line)) continue;
    const char *next = strchr(p, '\n');
    assert_non_null(next);
    const char *end = strchr(next + 1, '\n');
    size_t len = end ? (size_t)(end - next - 1) : strlen(next + 1);
    char frame[1024];
    snprintf(frame, sizeof frame, "%.*s", (int)(len < sizeof frame - 1 ? len : sizeof frame - 1), next + 1);
    bool lost = strstr(frame, "[failed to restore the stack]") != NULL; /* says nothing either way */
    if (!lost && (!strstr(frame, "#0 ") || !strstr(frame, kernel) || !strstr(frame, "kernel_tsan.cu"))) {
      fprintf(stderr, "an access outside %s: %s\n", kernel, frame);
      fail();
    }
    n++;
  }
  assert_true(n >= 2); /* both sides of a race */
}

static void expect_race(const char *which, const char *kernel) {
  int status;
  char *err = run_child(which, &status);
  if (count(err, "WARNING: ThreadSanitizer: data race") < 1) fprintf(stderr, "%s: %s\n", which, err);
  assert_true(count(err, "WARNING: ThreadSanitizer: data race") >= 1);
  assert_int_equal(count(err, "WARNING: ThreadSanitizer:"), count(err, "WARNING: ThreadSanitizer: data race"));
  accesses_in(err, kernel);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 66);
  free(err);
}

static void expect_clean(const char *which) {
  int status;
  char *err = run_child(which, &status);
  if (count(err, "ThreadSanitizer") || !WIFEXITED(status) || WEXITSTATUS(status))
    fprintf(stderr, "%s: %s\n", which, err);
  assert_int_equal(count(err, "ThreadSanitizer"), 0);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  free(err);
}

/* A missing __syncthreads: each thread reads a cell its neighbour writes. */
static void test_missing_barrier(void **state) {
  (void)state;
  expect_race("neighbour_race", "neighbour");
}

/* The same with the barrier: none. */
static void test_barrier(void **state) {
  (void)state;
  expect_clean("neighbour_sync");
}

/* Threads that each run to their end, one after another here, still race
 * (each is its own to ThreadSanitizer, not the one before it). */
static void test_stores_to_one_word(void **state) {
  (void)state;
  expect_race("one_word", "one_word");
}

static void test_syncwarp(void **state) {
  (void)state;
  expect_clean("in_warp");
}

static void test_volatile_flag(void **state) {
  (void)state;
  expect_clean("flag");
}

/* The engine's bookkeeping is never a race. */
static void test_engine_quiet(void **state) {
  (void)state;
  expect_clean("busy");
}
#endif

int main(int argc, char **argv) {
  if (argc == 2) return child(argv[1]);
#if TSAN
  self = "/proc/self/exe";
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_missing_barrier), cmocka_unit_test(test_barrier),
      cmocka_unit_test(test_stores_to_one_word), cmocka_unit_test(test_syncwarp),
      cmocka_unit_test(test_volatile_flag),   cmocka_unit_test(test_engine_quiet),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
#else
  (void)argv;
  printf("kernel_tsan: built without ThreadSanitizer, nothing to check: skipped\n");
  return 77;
#endif
}
