/* sim/net/net_internal.h — shared by the files of sim/net. */
#ifndef NCCLSIM_NET_INTERNAL_H_
#define NCCLSIM_NET_INTERNAL_H_

#include <sys/socket.h>

#include "net.h"

/* What the floors above set (sim_net_set_hooks, peer_wait.c). */
extern sim_net_hooks sim_net_up;

/* socket.c. The int functions return 0 or an errno (ETIMEDOUT past the
 * deadline, ECONNRESET when the other side closed). */
bool sim_net_ifname_match(const char *spec, const char *name);
ncclResult_t sim_net_pick_addr(struct sockaddr_storage *out, char *ifname, size_t ifname_len);
void sim_net_addr_text(const sim_net_addr *a, char *buf, size_t len);
socklen_t sim_net_sockaddr(const sim_net_addr *a, struct sockaddr_storage *ss);
void sim_net_addr_of(const struct sockaddr_storage *ss, sim_net_addr *a);
int sim_net_connect(const sim_net_addr *a, uint64_t deadline_ns, int *out);
int sim_net_write_all(int fd, const void *buf, size_t len, uint64_t deadline_ns);
int sim_net_read_all(int fd, void *buf, size_t len, uint64_t deadline_ns);

/* The bootstrap's messages (bootstrap.c). A rank's hello, then its UCX
 * address and its extra (sim_net_join); the root's answer, then per rank an
 * entry, then the addresses one after another. Both sides run one program:
 * no byte-order games. */
enum { SIM_NET_WHY = 256, SIM_NET_ADDR_MAX = 1 << 16 };
typedef struct {
  uint64_t magic, secret, key, group;
  int32_t nranks, rank, pid;
  uint32_t addr_len;  /* the UCX address and the rank's extra, which ends it */
  uint32_t extra_len;
  char host[SIM_NET_HOST_NAME];
} sim_net_hello;
typedef struct {
  uint64_t magic;
  int32_t status; /* ncclResult_t */
  int32_t nranks;
  char why[SIM_NET_WHY];
} sim_net_answer;
typedef struct {
  uint64_t group;
  int32_t pid;
  uint32_t addr_len, extra_len; /* as the rank's hello said */
  char host[SIM_NET_HOST_NAME];
} sim_net_entry;
#define SIM_NET_HELLO_MAGIC 0x4e43534d424f4f54ull /* "NCSMBOOT" */
#define SIM_NET_ANSWER_MAGIC 0x4e43534d414e5357ull /* "NCSMANSW" */

#endif /* NCCLSIM_NET_INTERNAL_H_ */
