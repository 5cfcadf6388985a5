/* tests/devapi_test.h — what the device-API tests (tests/devapi_*.cu,
 * built by ncclsim-nvcc) share: ranks as threads of this process, driven
 * by one thread (inits and window registrations grouped), each with its
 * device, stream, windows and device communicator. A kernel fault is
 * sticky on its device, so each test takes devices of its own (first). */
#ifndef TESTS_DEVAPI_TEST_H_
#define TESTS_DEVAPI_TEST_H_

#include "kernel_test.h"

#include <nccl.h>
#include <nccl_device.h>
#include <ncclsim.h>

#include "capture.h"

enum { DEVAPI_MAX_RANKS = 8 };

struct Ranks {
  int n = 0, first = 0;
  ncclComm_t comm[DEVAPI_MAX_RANKS] = {};
  cudaStream_t stream[DEVAPI_MAX_RANKS] = {};
  ncclDevComm dc[DEVAPI_MAX_RANKS];
  bool have_dc = false;

  /* n ranks on devices first .. first+n-1, with ncclsim options o (NULL:
   * the environment's). */
  void init(int nranks, int first_dev, const ncclsimCommOptions_t *o = nullptr) {
    n = nranks;
    first = first_dev;
    int devs[DEVAPI_MAX_RANKS];
    for (int r = 0; r < n; r++) devs[r] = first + r;
    assert_int_equal(ncclsimSetCommOptions(o), ncclSuccess);
    assert_int_equal(ncclCommInitAll(comm, n, devs), ncclSuccess);
    assert_int_equal(ncclsimSetCommOptions(nullptr), ncclSuccess);
    for (int r = 0; r < n; r++) {
      assert_int_equal(cudaSetDevice(first + r), cudaSuccess);
      assert_int_equal(cudaStreamCreate(&stream[r]), cudaSuccess);
    }
  }
  /* A symmetric window of `bytes` on every rank, zeroed. */
  void window(size_t bytes, ncclWindow_t *win, void **buf) {
    for (int r = 0; r < n; r++) {
      assert_int_equal(cudaSetDevice(first + r), cudaSuccess);
      assert_int_equal(ncclMemAlloc(&buf[r], bytes), ncclSuccess);
      assert_int_equal(cudaMemset(buf[r], 0, bytes), cudaSuccess);
    }
    assert_int_equal(ncclGroupStart(), ncclSuccess);
    for (int r = 0; r < n; r++)
      assert_int_equal(ncclCommWindowRegister(comm[r], buf[r], bytes, &win[r], NCCL_WIN_COLL_SYMMETRIC), ncclSuccess);
    assert_int_equal(ncclGroupEnd(), ncclSuccess);
  }
  void unwindow(ncclWindow_t *win, void **buf) {
    for (int r = 0; r < n; r++) {
      assert_int_equal(ncclCommWindowDeregister(comm[r], win[r]), ncclSuccess);
      assert_int_equal(ncclMemFree(buf[r]), ncclSuccess);
    }
  }
  void devcomms(const ncclDevCommRequirements &reqs) {
    for (int r = 0; r < n; r++) assert_int_equal(ncclDevCommCreate(comm[r], &reqs, &dc[r]), ncclSuccess);
    have_dc = true;
  }
  /* launch(r) on each rank's device, then each rank's stream's error. */
  template <class F>
  void run(F launch, cudaError_t *err) {
    for (int r = 0; r < n; r++) {
      assert_int_equal(cudaSetDevice(first + r), cudaSuccess);
      launch(r);
    }
    for (int r = 0; r < n; r++) {
      assert_int_equal(cudaSetDevice(first + r), cudaSuccess);
      err[r] = cudaStreamSynchronize(stream[r]);
    }
  }
  /* As run, every rank's error required to be cudaSuccess. */
  template <class F>
  void ok(F launch) {
    cudaError_t err[DEVAPI_MAX_RANKS];
    run(launch, err);
    for (int r = 0; r < n; r++) assert_string_equal(cudaGetErrorName(err[r]), "cudaSuccess");
  }
  void fini() {
    for (int r = 0; r < n; r++) {
      cudaSetDevice(first + r);
      if (have_dc) ncclDevCommDestroy(comm[r], &dc[r]);
      cudaStreamDestroy(stream[r]);
      ncclCommDestroy(comm[r]);
    }
  }
};

/* ncclsim options with GIN type `gin` (and the railed one). */
static inline ncclsimCommOptions_t gin_options(int gin, int ranksPerNode = NCCLSIM_OPT_UNSET) {
  ncclsimCommOptions_t o = NCCLSIM_COMM_OPTIONS_INIT;
  o.ginType = gin;
  o.railedGinType = gin;
  o.ranksPerNode = ranksPerNode;
  return o;
}

#endif
