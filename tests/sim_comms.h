/*
 * tests/sim_comms.h — helpers for tests where one thread drives every
 * rank of a communicator made by ncclCommInitAll (sim_comm, sim_ft).
 * Include after <cmocka.h> and "sim_ranks.h".
 */
#ifndef TESTS_SIM_COMMS_H_
#define TESTS_SIM_COMMS_H_

static inline void init_all(ncclComm_t *comms, int n) {
  assert_int_equal(ncclCommInitAll(comms, n, NULL), ncclSuccess);
}

static inline void destroy_all(ncclComm_t *comms, int n) {
  for (int r = 0; r < n; r++) assert_int_equal(ncclCommDestroy(comms[r]), ncclSuccess);
}

static inline int device_of(ncclComm_t comm) {
  int d = -1;
  assert_int_equal(ncclCommCuDevice(comm, &d), ncclSuccess);
  return d;
}

static inline void assert_rank_of(ncclComm_t comm, int rank, int count) {
  int v = -1;
  assert_int_equal(ncclCommUserRank(comm, &v), ncclSuccess);
  assert_int_equal(v, rank);
  assert_int_equal(ncclCommCount(comm, &v), ncclSuccess);
  assert_int_equal(v, count);
}

/* One thread drives an allreduce of (index + 1) over comms[0..n): it only
 * completes if they are the ranks of one communicator; checks the sum
 * everywhere. With `ranked`, comms[r] must also be rank r of n. */
static inline void check_allreduce_ranks(ncclComm_t *comms, int n, bool ranked) {
  int *buf[8];
  assert_true(n <= 8);
  for (int r = 0; r < n; r++) {
    if (ranked) assert_rank_of(comms[r], r, n);
    cudaSetDevice(device_of(comms[r]));
    assert_int_equal(cudaMalloc((void **)&buf[r], sizeof(int)), cudaSuccess);
    int v = r + 1;
    cudaMemcpy(buf[r], &v, sizeof v, cudaMemcpyHostToDevice);
  }
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < n; r++) {
    cudaSetDevice(device_of(comms[r]));
    assert_int_equal(ncclAllReduce(buf[r], buf[r], 1, ncclInt32, ncclSum, comms[r], 0), ncclSuccess);
  }
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  for (int r = 0; r < n; r++) {
    cudaSetDevice(device_of(comms[r]));
    assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
    int v = 0;
    cudaMemcpy(&v, buf[r], sizeof v, cudaMemcpyDeviceToHost);
    assert_int_equal(v, n * (n + 1) / 2);
    cudaFree(buf[r]);
  }
  cudaSetDevice(0);
}

#endif /* TESTS_SIM_COMMS_H_ */
