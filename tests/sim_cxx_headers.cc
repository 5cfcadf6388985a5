// sim_cxx_headers.cc — ncclsim's public headers compile as C++ and work:
// one communicator, its properties, a device communicator made with
// NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER (exit 0 = pass).
#include <cstdio>

#include <nccl.h>
#include <cuda_runtime_api.h>
#include <ncclsim.h>
#include <nccl_device.h>

#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) {                                                           \
      std::fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #cond); \
      return 1;                                                              \
    }                                                                        \
  } while (0)

int main() {
  ncclComm_t comm = nullptr;
  int dev = 0;
  CHECK(ncclCommInitAll(&comm, 1, &dev) == ncclSuccess);

  ncclCommProperties_t props = NCCL_COMM_PROPERTIES_INITIALIZER;
  CHECK(ncclCommQueryProperties(comm, &props) == ncclSuccess);
  CHECK(props.nRanks == 1 && props.rank == 0 && props.nLsaTeams == 1);

  ncclDevCommRequirements_t reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  CHECK(reqs.ginContextCount == 4 && reqs.ginStrongSignalsRequired && reqs.ginVaSignalsRequired);
  ncclDevComm_t dc;
  CHECK(ncclDevCommCreate(comm, &reqs, &dc) == ncclSuccess);
  CHECK(dc.rank == 0 && dc.nRanks == 1 && dc.lsaSize == 1 && dc.windowTable != nullptr);
  ncclTeam_t world = ncclTeamWorld(comm);
  CHECK(world.nRanks == 1 && world.stride == 1);

  // The value-initialised struct of configure's probe is rejected (no magic).
  ncclDevCommRequirements_t zero = ncclDevCommRequirements_t();
  ncclDevComm_t other;
  CHECK(ncclDevCommCreate(comm, &zero, &other) == ncclInvalidArgument);

  CHECK(ncclDevCommDestroy(comm, &dc) == ncclSuccess);
  CHECK(ncclCommDestroy(comm) == ncclSuccess);
  size_t n = 1, bytes = 1;
  ncclsimMemStats(&n, &bytes);
  std::printf("ok: C++ headers; %zu live allocation(s) at exit\n", n);
  return 0;
}
