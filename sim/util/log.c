/*
 * sim/util/log.c — NCCL-style logging.
 *
 * NCCLSIM_DEBUG=WARN|INFO|TRACE picks the level (default: none printed),
 * NCCLSIM_DEBUG_SUBSYS=INIT,ALLOC,STREAM,P2P,COLL,RMA,DEV,KERNEL or ALL the mask.
 * Both are parameters (util/param.c): read through the parameter cache at
 * every call, so that ncclsimParamSet("DEBUG", ...) takes effect at once and
 * ncclsimParamDump lists them; this file only turns their text into values.
 * Lines look like NCCL's: "host:pid:tid [dev] NCCLSIM WARN text". Every WARN
 * is also kept as the calling thread's last error text, which
 * ncclGetLastError returns, whether printed or not.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../sim.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
#ifndef HOST_NAME_MAX
#define HOST_NAME_MAX 255 /* POSIX's _POSIX_HOST_NAME_MAX is 255 */
#endif
static char host[HOST_NAME_MAX + 1]; /* a name of HOST_NAME_MAX and its NUL */
static _Thread_local char last[1024];
/* The calling thread's device, set at load before any thread logs (a
 * program without cuda/device.c never leaves device 0). */
static int device_zero(void) { return 0; }
static int (*current_device)(void) = device_zero;

void sim_log_device_hook(int (*fn)(void)) { current_device = fn; }

static void init(void) {
  /* Every name fits. Were one longer anyway, gethostname fails with
   * ENAMETOOLONG having copied what fits (glibc), maybe without the NUL:
   * print that much rather than a made-up name. */
  if (gethostname(host, sizeof host) != 0 && errno != ENAMETOOLONG) host[0] = 0;
  host[sizeof host - 1] = 0;
  if (!host[0]) snprintf(host, sizeof host, "localhost");
  char *dot = strchr(host, '.');
  if (dot) *dot = 0;
}

void sim_log(sim_log_level lvl, unsigned subsys, const char *file, int line, const char *fmt, ...) {
  pthread_once(&once, init);
  int level = (int)sim_param(SIM_P_DEBUG);
  unsigned mask = (unsigned)sim_param(SIM_P_DEBUG_SUBSYS);
  bool print = (int)lvl <= level && (subsys & mask);
  if (lvl != SIM_LOG_WARN && !print) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (lvl == SIM_LOG_WARN) memcpy(last, msg, sizeof last);
  if (!print) return;
  static const char *names[] = {"", "WARN", "INFO", "TRACE"};
  const char *base = strrchr(file, '/');
  int dev = current_device();
  /* One fprintf per line keeps concurrent ranks' lines whole. */
  if (lvl == SIM_LOG_TRACE)
    fprintf(stderr, "%s:%d:%ld [%d] NCCLSIM %s %s:%d %s\n", host, (int)getpid(),
            (long)syscall(SYS_gettid), dev, names[lvl], base ? base + 1 : file,
            line, msg);
  else
    fprintf(stderr, "%s:%d:%ld [%d] NCCLSIM %s %s\n", host, (int)getpid(),
            (long)syscall(SYS_gettid), dev, names[lvl], msg);
}

const char *sim_last_warning(void) { return last; }
void sim_clear_warning(void) { last[0] = 0; }
