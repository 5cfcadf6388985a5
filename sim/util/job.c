/*
 * sim/util/job.c — ranks as processes started apart (mpirun, srun): the
 * processes of one launcher job share one arena (util/shm.c).
 *
 * A launcher names its job in every process's environment (Open MPI and
 * PMIx: PMIX_NAMESPACE; Slurm: SLURM_JOB_ID and SLURM_STEP_ID; or
 * NCCLSIM_JOB, set by hand). At its first allocation each process of the
 * job binds an abstract Unix socket named after the job and the user: the
 * one that succeeds creates the arena (a memfd) and hands its descriptor
 * to the others over the socket (SCM_RIGHTS); they map it at the same
 * fixed address. Abstract sockets and memfds have no name in any file
 * system: nothing outlives the job, however it ends.
 *
 * Pointers in the arena, function pointers included, must mean the same in
 * every process: the processes run one program, and a constructor
 * re-executes each once with address-space randomisation off, so that the
 * program and its libraries lie at the same addresses in all of them (the
 * arena records where ncclsim's code is, and a process that differs is
 * refused). NCCLSIM_PROCESSES=0 turns all of this off.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../sim.h"

/* Where every process of a job maps the arena: far from where the kernel
 * puts programs, libraries, heaps and stacks, and from ASan's regions.
 * ThreadSanitizer allows application memory only in its own ranges: there,
 * well above the program and its brk heap, inside the range for programs. */
#if SIM_TSAN
#define JOB_ARENA_ADDR ((uintptr_t)0x560000000000ull)
#else
#define JOB_ARENA_ADDR ((uintptr_t)0x3f0000000000ull)
#endif

typedef struct {
  uint64_t magic;
  uint64_t addr, size;
} job_hello;
#define HELLO_MAGIC 0x4e43534d4a4f4231ull /* "NCSMJOB1" */

/* The launcher's name for this job, or NULL when there is none. */
static const char *launcher_job(char *buf, size_t len) {
  const char *v;
  if ((v = getenv("NCCLSIM_JOB")) && *v) return v;
  if ((v = getenv("PMIX_NAMESPACE")) && *v) return v;
  if ((v = getenv("OMPI_MCA_ess_base_jobid")) && *v) return v;
  if ((v = getenv("SLURM_JOB_ID")) && *v) {
    const char *step = getenv("SLURM_STEP_ID");
    snprintf(buf, len, "slurm-%s.%s", v, step ? step : "0");
    return buf;
  }
  return NULL;
}

/* The job's name, and the simulated host's (NCCLSIM_HOST_ID): processes
 * of one job that play different hosts share nothing (sim/net/net.h). */
static const char *job_name(char *buf, size_t len) {
  char base[128];
  const char *job = launcher_job(base, sizeof base);
  const char *host = getenv("NCCLSIM_HOST_ID");
  if (!job) return NULL;
  if (!host || !*host || !strcmp(host, "auto")) snprintf(buf, len, "%s", job);
  else snprintf(buf, len, "%.100s@%.60s", job, host);
  return buf;
}

static bool processes_off(void) {
  const char *v = getenv("NCCLSIM_PROCESSES");
  return v && !strcmp(v, "0");
}

bool sim_job_named(void) {
  char buf[192];
  return !processes_off() && job_name(buf, sizeof buf);
}

/* Re-executes the program once, before main, with randomisation off, when
 * a launcher started it: see the top of this file. */
__attribute__((constructor)) static void job_reexec(int argc, char **argv, char **envp) {
  (void)argc;
  (void)envp;
  int pers = personality(0xffffffff);
  if (!sim_job_named() || pers < 0 || (pers & ADDR_NO_RANDOMIZE) || getenv("NCCLSIM_REEXEC")) return;
  if (personality((unsigned long)pers | ADDR_NO_RANDOMIZE) < 0) return;
  setenv("NCCLSIM_REEXEC", "1", 1);
  extern char **environ;
  execve("/proc/self/exe", argv, environ);
  /* Cannot: go on as we are; the layout check will say so if it matters. */
  personality((unsigned long)pers);
}

static void socket_name(struct sockaddr_un *a, socklen_t *len, const char *job) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (const char *p = job; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  int n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "ncclsim-%u-%016llx", (unsigned)getuid(),
                   (unsigned long long)h);
  *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

typedef struct {
  int lsock, fd;
  job_hello hello;
} server_arg;

/* The creator's side: every process of the job that connects gets the
 * arena's descriptor, if it runs as the same user. */
static void *serve(void *p) {
  server_arg *s = p;
  for (;;) {
    int c = accept4(s->lsock, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      break;
    }
    struct ucred cred;
    socklen_t cl = sizeof cred;
    if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0 && cred.uid == getuid()) {
      char ctl[CMSG_SPACE(sizeof(int))];
      memset(ctl, 0, sizeof ctl);
      struct iovec iov = {&s->hello, sizeof s->hello};
      struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
      struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
      cm->cmsg_level = SOL_SOCKET;
      cm->cmsg_type = SCM_RIGHTS;
      cm->cmsg_len = CMSG_LEN(sizeof(int));
      memcpy(CMSG_DATA(cm), &s->fd, sizeof(int));
      (void)sendmsg(c, &m, MSG_NOSIGNAL);
    }
    close(c);
  }
  return NULL;
}

/* The joiner's side: the arena's descriptor and where to map it. */
static int receive(int sock, job_hello *hello) {
  char ctl[CMSG_SPACE(sizeof(int))];
  struct iovec iov = {hello, sizeof *hello};
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
  ssize_t n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
  struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
  if (n != (ssize_t)sizeof *hello || hello->magic != HELLO_MAGIC || !cm || cm->cmsg_type != SCM_RIGHTS) return -1;
  int fd;
  memcpy(&fd, CMSG_DATA(cm), sizeof fd);
  return fd;
}

ncclResult_t sim_job_attach(size_t size, void (*init)(void *p, size_t size), void **out, bool *created) {
  char buf[192];
  const char *job = job_name(buf, sizeof buf);
  struct sockaddr_un a;
  socklen_t alen;
  socket_name(&a, &alen, job);
  for (int attempt = 0; attempt < 200; attempt++) {
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) break;
    if (bind(s, (struct sockaddr *)&a, alen) == 0) { /* the first process of the job */
      int fd = memfd_create("ncclsim-job", MFD_CLOEXEC);
      void *p = MAP_FAILED;
      if (fd >= 0 && ftruncate(fd, (off_t)size) == 0)
        p = mmap((void *)JOB_ARENA_ADDR, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE | MAP_NORESERVE,
                 fd, 0);
      server_arg *sa = p == MAP_FAILED ? NULL : malloc(sizeof *sa);
      pthread_t t;
      if (!sa) goto fail_create;
      init(p, size); /* before anyone can map it */
      if (listen(s, 128) != 0) goto fail_create;
      *sa = (server_arg){s, fd, {HELLO_MAGIC, (uint64_t)(uintptr_t)p, size}};
      if (pthread_create(&t, NULL, serve, sa) != 0) goto fail_create;
      pthread_detach(t);
      *out = p;
      *created = true;
      SIM_INFO(SIM_INIT, "ranks as processes: job %s: this process (pid %d) made the shared arena", job, (int)getpid());
      return ncclSuccess;
    fail_create:
      SIM_WARN(SIM_INIT, "ranks as processes: job %s: cannot make the shared arena of %zu bytes at %p: %s", job, size,
               (void *)JOB_ARENA_ADDR, strerror(errno));
      free(sa);
      if (p != MAP_FAILED) munmap(p, size);
      if (fd >= 0) close(fd);
      close(s);
      return ncclSystemError;
    }
    if (connect(s, (struct sockaddr *)&a, alen) == 0) {
      job_hello hello;
      int fd = receive(s, &hello);
      close(s);
      if (fd < 0) break;
      void *p = mmap((void *)(uintptr_t)hello.addr, hello.size, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_FIXED_NOREPLACE | MAP_NORESERVE, fd, 0);
      int err = errno;
      close(fd);
      if (p == MAP_FAILED || p != (void *)(uintptr_t)hello.addr) {
        SIM_WARN(SIM_INIT, "ranks as processes: job %s: cannot map the job's arena at 0x%llx in pid %d: %s", job,
                 (unsigned long long)hello.addr, (int)getpid(), strerror(err));
        return ncclSystemError;
      }
      *out = p;
      *created = false;
      return ncclSuccess;
    }
    close(s); /* bound by a process that is not listening yet, or just gone */
    usleep(10 * 1000);
  }
  SIM_WARN(SIM_INIT, "ranks as processes: job %s: cannot reach the process that holds the job's arena", job);
  return ncclSystemError;
}
