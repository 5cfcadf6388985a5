/* sim/p2p/p2p_internal.h — shared by the files of sim/p2p. */
#ifndef NCCLSIM_P2P_INTERNAL_H_
#define NCCLSIM_P2P_INTERNAL_H_

#include "../core/core.h"
#include "../comm/comm.h"

/* ncclSend/ncclRecv to a rank on another host (p2p_net.c), after the
 * arguments were checked: the task is submitted as any other. */
ncclResult_t sim_p2p_net_enqueue(bool is_send, void *buf, size_t count, ncclDataType_t dt, int peer, ncclComm_t comm,
                                 cudaStream_t stream);

#endif
