/* tests/devapi_trace.cu — NCCL's device API on NCCLSIM_TRACE's timeline
 * (sim/dev/trace.c): a kernel's LSA barrier session (arrive, wait), GIN
 * put, signal wait and flush are spans on its rank's track of kernels, in
 * the order the kernel made them, each naming the kernel, block and
 * thread, the put its peer and bytes; a rank's signal wait ends after its
 * peer's put began. The program runs in a child process, whose exit
 * writes the file (as any program's). Built by ncclsim-nvcc
 * (tests/devapi.mk). */
#include "devapi_test.h"

#include <jansson.h>
#include <stdlib.h>
#include <sys/wait.h>

enum { NRANKS = 2, BYTES = 64 };

/* A barrier, a put to the next rank with a signal, the wait for the
 * previous rank's, a flush, a barrier: thread 0 makes every call. */
__global__ void traced(ncclDevComm dc, ncclWindow_t w) {
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), dc, ncclTeamLsa(dc), dc.lsaBarrier, 0};
  bar.sync(ncclCoopCta(), cuda::memory_order_acq_rel);
  ncclGin gin{dc, 0};
  int peer = (dc.rank + 1) % dc.nRanks;
  if (threadIdx.x == 0) gin.put(ncclTeamWorld(dc), peer, w, BYTES, w, 0, BYTES, ncclGin_SignalInc{0});
  gin.waitSignal(ncclCoopCta(), 0, 1);
  gin.flush(ncclCoopCta());
  bar.sync(ncclCoopCta(), cuda::memory_order_acq_rel);
}

static void program(const char *path) {
  assert_int_equal(ncclsimParamSet("TRACE", path), ncclSuccess);
  Ranks k;
  ncclsimCommOptions_t o = gin_options(NCCL_GIN_TYPE_GDAKI);
  k.init(NRANKS, 0, &o);
  ncclWindow_t w[NRANKS];
  void *buf[NRANKS];
  k.window(2 * BYTES, w, buf);
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.lsaBarrierCount = 1;
  reqs.ginConnectionType = NCCL_GIN_CONNECTION_FULL;
  reqs.ginSignalCount = 1;
  k.devcomms(reqs);
  k.ok([&](int r) { traced<<<1, 4, 0, k.stream[r]>>>(k.dc[r], w[r]); });
  k.unwindow(w, buf);
  k.fini();
}

static const char *str(json_t *e, const char *key) {
  const char *s = json_string_value(json_object_get(e, key));
  return s ? s : "";
}
static double real(json_t *e, const char *key) { return json_number_value(json_object_get(e, key)); }

static int by_ts(const void *a, const void *b) {
  double x = real(*(json_t *const *)a, "ts"), y = real(*(json_t *const *)b, "ts");
  return x < y ? -1 : x > y;
}

static void test_device_events(void **state) {
  (void)state;
  char path[128];
  snprintf(path, sizeof path, "/tmp/ncclsim-devapi-trace-%d.json", (int)getpid());
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(2, 1);
    program(path);
    exit(0); /* exit, not _exit: the timeline is written at exit */
  }
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);

  json_error_t err;
  json_t *root = json_load_file(path, 0, &err);
  if (!root) fprintf(stderr, "%s: %s (line %d)\n", path, err.text, err.line);
  assert_non_null(root);
  unlink(path);
  json_t *evs = json_object_get(root, "traceEvents"), *e;
  /* the tracks of kernels, by rank */
  json_int_t tid[NRANKS] = {-1, -1};
  size_t i;
  json_array_foreach(evs, i, e) {
    int r;
    if (!strcmp(str(e, "name"), "thread_name") &&
        sscanf(str(json_object_get(e, "args"), "name"), "rank %d kernels", &r) == 1 && r >= 0 &&
        r < NRANKS)
      tid[r] = json_integer_value(json_object_get(e, "tid"));
  }
  static const char *want[] = {"ncclLsaBarrierSession::arrive", "ncclLsaBarrierSession::wait", "ncclGin::put",
                               "ncclGin::waitSignal",           "ncclGin::flush",              "ncclLsaBarrierSession::arrive",
                               "ncclLsaBarrierSession::wait"};
  enum { NWANT = sizeof want / sizeof *want };
  double put_ts[NRANKS] = {0}, wait_end[NRANKS] = {0};
  for (int r = 0; r < NRANKS; r++) {
    assert_true(tid[r] >= 0);
    json_t *mine[16];
    int n = 0;
    json_array_foreach(evs, i, e) {
      if (!strcmp(str(e, "ph"), "X") && !strcmp(str(e, "cat"), "device") &&
          json_integer_value(json_object_get(e, "tid")) == tid[r]) {
        assert_true(n < 16);
        mine[n++] = e;
      }
    }
    assert_int_equal(n, NWANT);
    qsort(mine, (size_t)n, sizeof *mine, by_ts);
    for (int j = 0; j < n; j++) {
      json_t *args = json_object_get(mine[j], "args");
      assert_string_equal(str(mine[j], "name"), want[j]);
      assert_non_null(strstr(str(args, "in"), "traced"));
      assert_non_null(strstr(str(args, "in"), "block (0,0,0), thread (0,0,0)"));
      assert_true(real(mine[j], "dur") > 0);
      if (j == 2) {
        assert_int_equal(json_integer_value(json_object_get(args, "peer")), (r + 1) % NRANKS);
        assert_int_equal(json_integer_value(json_object_get(args, "bytes")), BYTES);
        assert_non_null(strstr(str(args, "in"), "signal 0"));
        put_ts[r] = real(mine[j], "ts");
      }
      if (j == 3) wait_end[r] = real(mine[j], "ts") + real(mine[j], "dur");
    }
  }
  for (int r = 0; r < NRANKS; r++) assert_true(wait_end[r] >= put_ts[(r + NRANKS - 1) % NRANKS]);
  /* the kernel itself, on the same track, around its device events */
  for (int r = 0; r < NRANKS; r++) {
    int kernels = 0;
    json_array_foreach(evs, i, e) {
      if (strcmp(str(e, "ph"), "X") || strcmp(str(e, "cat"), "kernel") ||
          json_integer_value(json_object_get(e, "tid")) != tid[r])
        continue;
      kernels++;
      assert_non_null(strstr(str(e, "name"), "traced"));
      assert_non_null(strstr(str(json_object_get(e, "args"), "in"), "grid (1,1,1), block ("));
      assert_true(real(e, "ts") <= put_ts[r] && real(e, "ts") + real(e, "dur") >= wait_end[r]);
    }
    assert_int_equal(kernels, 1);
  }
  json_decref(root);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_device_events)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
