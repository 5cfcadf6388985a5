/*
 * sim/net/socket.c — the bootstrap's sockets: which interface the root
 * listens on (NCCLSIM_SOCKET_IFNAME, read as NCCL reads NCCL_SOCKET_IFNAME),
 * and whole-message reads and writes with a deadline.
 */
#define _GNU_SOURCE
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../sim.h"
#include "net_internal.h"

/* Whether `name` passes the NCCL_SOCKET_IFNAME-style filter `spec`:
 * comma-separated prefixes; a leading ^ excludes them; a leading = (after
 * any ^) makes them exact names. */
bool sim_net_ifname_match(const char *spec, const char *name) {
  bool exclude = false, exact = false;
  if (*spec == '^') exclude = true, spec++;
  if (*spec == '=') exact = true, spec++;
  bool hit = false;
  for (const char *p = spec; *p && !hit;) {
    size_t n = strcspn(p, ",");
    if (n > 0) hit = exact ? strlen(name) == n && !strncmp(name, p, n) : !strncmp(name, p, n);
    p += n;
    if (*p) p++;
  }
  return exclude ? !hit : hit;
}

/* The address to listen on: the first interface up that the filter (or,
 * with NCCLSIM_SOCKET_IFNAME=auto, "^lo,docker" and then "lo") admits,
 * IPv4 before IPv6. */
ncclResult_t sim_net_pick_addr(struct sockaddr_storage *out, char *ifname, size_t ifname_len) {
  struct ifaddrs *all;
  if (getifaddrs(&all) != 0) {
    SIM_WARN(SIM_INIT, "bootstrap: getifaddrs failed: %s", strerror(errno));
    return ncclSystemError;
  }
  const char *spec = sim_param_text(SIM_P_SOCKET_IFNAME);
  bool automatic = !strcmp(spec, "auto");
  const char *passes[2] = {automatic ? "^lo,docker" : spec, automatic ? "=lo" : NULL};
  for (int pass = 0; pass < 2 && passes[pass]; pass++)
    for (int fam = 0; fam < 2; fam++)
      for (struct ifaddrs *a = all; a; a = a->ifa_next) {
        if (!a->ifa_addr || !(a->ifa_flags & IFF_UP)) continue;
        int want = fam == 0 ? AF_INET : AF_INET6;
        if (a->ifa_addr->sa_family != want || !sim_net_ifname_match(passes[pass], a->ifa_name)) continue;
        if (want == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&((struct sockaddr_in6 *)a->ifa_addr)->sin6_addr)) continue;
        memset(out, 0, sizeof *out);
        memcpy(out, a->ifa_addr, want == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
        snprintf(ifname, ifname_len, "%s", a->ifa_name);
        freeifaddrs(all);
        return ncclSuccess;
      }
  freeifaddrs(all);
  SIM_WARN(SIM_INIT, "bootstrap: no interface is up that NCCLSIM_SOCKET_IFNAME=%s admits", spec);
  return ncclSystemError;
}

void sim_net_addr_text(const sim_net_addr *a, char *buf, size_t len) {
  char ip[INET6_ADDRSTRLEN] = "?";
  inet_ntop(a->family == 6 ? AF_INET6 : AF_INET, a->ip, ip, sizeof ip);
  snprintf(buf, len, a->family == 6 ? "[%s]:%u" : "%s:%u", ip, (unsigned)ntohs(a->port));
}

socklen_t sim_net_sockaddr(const sim_net_addr *a, struct sockaddr_storage *ss) {
  memset(ss, 0, sizeof *ss);
  if (a->family == 6) {
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
    s6->sin6_family = AF_INET6;
    s6->sin6_port = a->port;
    memcpy(&s6->sin6_addr, a->ip, 16);
    return sizeof *s6;
  }
  struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
  s4->sin_family = AF_INET;
  s4->sin_port = a->port;
  memcpy(&s4->sin_addr, a->ip, 4);
  return sizeof *s4;
}

void sim_net_addr_of(const struct sockaddr_storage *ss, sim_net_addr *a) {
  memset(a, 0, sizeof *a);
  if (ss->ss_family == AF_INET6) {
    const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
    a->family = 6;
    a->port = s6->sin6_port;
    memcpy(a->ip, &s6->sin6_addr, 16);
  } else {
    const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
    a->family = 4;
    a->port = s4->sin_port;
    memcpy(a->ip, &s4->sin_addr, 4);
  }
}

/* Waits until fd is ready for `events` or the deadline (sim_now_ns) has
 * passed: 0, or ETIMEDOUT, or the poll's errno. */
static int ready(int fd, short events, uint64_t deadline_ns) {
  for (;;) {
    uint64_t now = sim_now_ns();
    if (now >= deadline_ns) return ETIMEDOUT;
    uint64_t ms = (deadline_ns - now + 999999) / 1000000;
    struct pollfd p = {fd, events, 0};
    int n = poll(&p, 1, ms > 1000 ? 1000 : (int)ms);
    if (n > 0) return 0;
    if (n < 0 && errno != EINTR) return errno;
  }
}

int sim_net_write_all(int fd, const void *buf, size_t len, uint64_t deadline_ns) {
  const char *p = buf;
  while (len > 0) {
    ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      p += n, len -= (size_t)n;
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return errno;
    int e = ready(fd, POLLOUT, deadline_ns);
    if (e) return e;
  }
  return 0;
}

int sim_net_read_all(int fd, void *buf, size_t len, uint64_t deadline_ns) {
  char *p = buf;
  while (len > 0) {
    ssize_t n = recv(fd, p, len, MSG_DONTWAIT);
    if (n > 0) {
      p += n, len -= (size_t)n;
      continue;
    }
    if (n == 0) return ECONNRESET; /* the other side closed */
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return errno;
    int e = ready(fd, POLLIN, deadline_ns);
    if (e) return e;
  }
  return 0;
}

int sim_net_connect(const sim_net_addr *a, uint64_t deadline_ns, int *out) {
  struct sockaddr_storage ss;
  socklen_t sl = sim_net_sockaddr(a, &ss);
  for (;;) {
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return errno;
    int e = 0;
    if (connect(fd, (struct sockaddr *)&ss, sl) != 0) {
      e = errno;
      if (e == EINPROGRESS) {
        e = ready(fd, POLLOUT, deadline_ns);
        socklen_t el = sizeof e;
        if (!e && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0) e = errno;
      }
    }
    if (!e) {
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      *out = fd;
      return 0;
    }
    close(fd);
    /* A root whose backlog is full refuses for a moment: try again. */
    if ((e != ECONNREFUSED && e != EAGAIN) || sim_now_ns() + 10000000 >= deadline_ns) return e;
    usleep(10000);
  }
}
