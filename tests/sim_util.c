/*
 * tests/sim_util.c — ncclsim's utilities: logging (NCCLSIM_DEBUG levels,
 * the NCCLSIM_DEBUG_SUBSYS mask, the line format, the last-warning text
 * behind ncclGetLastError), parameters (environment, ncclsimParamSet
 * overrides and their validation, ncclsimParamGet, ncclsimParamDump),
 * the allocation hook (ncclsimAllocFailAfter and the sim_* allocators),
 * and the flight recorder's clock (sim_ticks).
 *
 * The log configuration is two parameters, NCCLSIM_DEBUG and
 * NCCLSIM_DEBUG_SUBSYS, read from the environment once and cached. The
 * tests of the environment run their logging in a forked child that sets
 * the environment, drops the cache (ncclsimParamSet(name, NULL)) and
 * writes its stderr to a file the parent checks; the others set the
 * parameters with ncclsimParamSet in this process.
 */
#include "config.h" /* _GNU_SOURCE: unshare */

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "capture.h"
#include "slow.h"
#include "sim.h"
#include <nccl_device.h> /* ncclGinType_t */
#include <cuda_runtime_api.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZER_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZER_ALLOCATOR 1
#endif
#endif
#ifndef SANITIZER_ALLOCATOR
#define SANITIZER_ALLOCATOR 0
#endif

/* ---- logging, in child processes ---- */

/* What every child logs, on device 3. Its exit status says whether each
 * WARN became the thread's last warning (printed or not) and whether
 * sim_clear_warning cleared it. */
static int child_logs(void) {
  int bad = 0;
  if (cudaSetDevice(3) != cudaSuccess) return 10;
  SIM_WARN(SIM_INIT, "w-init %d", 1);
  bad |= strcmp(sim_last_warning(), "w-init 1") != 0;
  SIM_WARN(SIM_DEV, "w-dev");
  bad |= strcmp(ncclGetLastError(NULL), "w-dev") != 0;
  SIM_INFO(SIM_INIT, "i-init");
  SIM_INFO(SIM_P2P, "i-p2p");
  bad |= strcmp(sim_last_warning(), "w-dev") != 0 ? 2 : 0; /* INFO is not a warning */
  SIM_TRACE(SIM_P2P, "t-p2p");
  sim_log(SIM_LOG_TRACE, SIM_ALLOC, "plain.c", 7, "t-alloc");
  /* The allocation hook reports an injected failure at INFO, ALLOC. */
  ncclsimAllocFailAfter(1);
  void *p = sim_malloc(16);
  ncclsimAllocFailAfter(0);
  bad |= p != NULL ? 4 : 0;
  sim_clear_warning();
  bad |= sim_last_warning()[0] != 0 ? 8 : 0;
  return bad;
}

/* Runs child_logs in a child with the given NCCLSIM_DEBUG and
 * NCCLSIM_DEBUG_SUBSYS (NULL: unset); returns its stderr (free it) and its
 * pid. The child must exit with status 0. */
static char *log_in_child(const char *level, const char *subsys, pid_t *pid) {
  capture c;
  capture_start(&c, 2);
  fflush(stdout);
  pid_t p = fork();
  if (p == 0) {
    if (level) setenv("NCCLSIM_DEBUG", level, 1);
    else unsetenv("NCCLSIM_DEBUG");
    if (subsys) setenv("NCCLSIM_DEBUG_SUBSYS", subsys, 1);
    else unsetenv("NCCLSIM_DEBUG_SUBSYS");
    /* This process may have read them already. */
    if (ncclsimParamSet("DEBUG", NULL) != ncclSuccess ||
        ncclsimParamSet("DEBUG_SUBSYS", NULL) != ncclSuccess)
      exit(20);
    int rc = child_logs();
    fflush(stderr);
    exit(rc);
  }
  int status = 0;
  assert_true(p > 0);
  assert_int_equal(waitpid(p, &status, 0), p);
  char *out = capture_end(&c);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail_msg("log child (NCCLSIM_DEBUG=%s) failed, status 0x%x; it printed:\n%s", level ? level : "(unset)",
             status, out);
  *pid = p;
  return out;
}

/* Lines start "host:pid:tid [device] NCCLSIM LEVEL", host cut at its first
 * dot (as NCCL does); the child's only thread has tid == pid. */
static void line_start(char *buf, size_t n, pid_t pid, const char *lvl) {
  char host[HOST_NAME_MAX + 1];
  assert_int_equal(gethostname(host, sizeof host), 0);
  host[sizeof host - 1] = 0;
  char *dot = strchr(host, '.');
  if (dot) *dot = 0;
  snprintf(buf, n, "%s:%d:%d [3] NCCLSIM %s ", host, (int)pid, (int)pid, lvl);
}

/* WARN prints warnings of every subsystem (the default mask), and nothing
 * of INFO or TRACE. */
static void test_log_warn(void **state) {
  (void)state;
  pid_t pid;
  char *out = log_in_child("WARN", NULL, &pid);
  char want[256];
  line_start(want, sizeof want, pid, "WARN");
  strcat(want, "w-init 1\n");
  assert_contains(out, want);
  assert_contains(out, "NCCLSIM WARN w-dev\n");
  assert_lacks(out, "INFO");
  assert_lacks(out, "TRACE");
  free(out);
}

/* INFO adds the INFO lines, the injected allocation failure among them; an
 * empty subsystem list means all. */
static void test_log_info(void **state) {
  (void)state;
  pid_t pid;
  char *out = log_in_child("INFO", "", &pid);
  char want[256];
  line_start(want, sizeof want, pid, "INFO");
  strcat(want, "i-init\n");
  assert_contains(out, want);
  assert_contains(out, "NCCLSIM WARN w-init 1\n");
  assert_contains(out, "NCCLSIM INFO i-p2p\n");
  assert_contains(out, "NCCLSIM INFO injected failure of allocation 1\n");
  assert_lacks(out, "TRACE");
  free(out);
}

/* TRACE (any case) prints the source file's base name and line; the
 * subsystem list (any case, unknown names ignored) filters every level,
 * WARN included. */
static void test_log_trace_subsys(void **state) {
  (void)state;
  pid_t pid;
  char *out = log_in_child("trace", "p2p,NoSuchSubsystem,Alloc", &pid);
  char want[256];
  line_start(want, sizeof want, pid, "TRACE");
  strcat(want, "sim_util.c:");
  assert_contains(out, want);
  assert_contains(out, " t-p2p\n");
  assert_contains(out, "NCCLSIM TRACE plain.c:7 t-alloc\n");
  assert_contains(out, "NCCLSIM INFO i-p2p\n");
  assert_contains(out, "NCCLSIM INFO injected failure of allocation 1\n");
  assert_lacks(out, "i-init");
  assert_lacks(out, "w-init");
  assert_lacks(out, "w-dev");
  free(out);
}

/* An unknown level prints nothing, whatever the mask; warnings are still
 * kept for ncclGetLastError (the child checks). */
static void test_log_unknown_level(void **state) {
  (void)state;
  pid_t pid;
  char *out = log_in_child("LOUD", "ALL", &pid);
  assert_string_equal(out, "");
  free(out);
  /* Unset: the default prints nothing either. */
  out = log_in_child(NULL, NULL, &pid);
  assert_string_equal(out, "");
  free(out);
}

/* Logs `what` at every level and returns what was printed (free it). */
static char *log_levels(unsigned subsys, const char *what) {
  capture c;
  capture_start(&c, 2);
  SIM_WARN(subsys, "w-%s", what);
  SIM_INFO(subsys, "i-%s", what);
  SIM_TRACE(subsys, "t-%s", what);
  return capture_end(&c);
}

/* NCCLSIM_DEBUG and NCCLSIM_DEBUG_SUBSYS are parameters: ncclsimParamSet
 * changes what is printed from the next log call on, and dropping the
 * override goes back to the environment. Any text is accepted, as from the
 * environment. A WARN is kept as the last warning, printed or not. */
static void test_log_param_set(void **state) {
  (void)state;
  assert_int_equal(ncclsimParamSet("DEBUG", "none"), ncclSuccess);
  assert_int_equal(ncclsimParamSet("DEBUG_SUBSYS", "ALL"), ncclSuccess);
  char *out = log_levels(SIM_INIT, "none");
  assert_string_equal(out, "");
  free(out);
  assert_string_equal(sim_last_warning(), "w-none");

  assert_int_equal(ncclsimParamSet("DEBUG", "WARN"), ncclSuccess);
  out = log_levels(SIM_INIT, "warn");
  assert_contains(out, "NCCLSIM WARN w-warn\n");
  assert_lacks(out, "i-warn");
  assert_lacks(out, "t-warn");
  free(out);

  assert_int_equal(ncclsimParamSet("NCCLSIM_DEBUG", "trace"), ncclSuccess);
  out = log_levels(SIM_RMA, "trace");
  assert_contains(out, "NCCLSIM WARN w-trace\n");
  assert_contains(out, "NCCLSIM INFO i-trace\n");
  assert_contains(out, "sim_util.c:");
  assert_contains(out, " t-trace\n");
  free(out);

  /* The mask filters every level; unknown names are ignored. */
  assert_int_equal(ncclsimParamSet("DEBUG", "INFO"), ncclSuccess);
  assert_int_equal(ncclsimParamSet("DEBUG_SUBSYS", "p2p,NoSuchSubsystem,Coll"), ncclSuccess);
  assert_string_equal(ncclsimParamGet("DEBUG_SUBSYS"), "p2p,NoSuchSubsystem,Coll");
  out = log_levels(SIM_INIT, "init");
  assert_string_equal(out, "");
  free(out);
  assert_string_equal(sim_last_warning(), "w-init");
  out = log_levels(SIM_COLL, "coll");
  assert_contains(out, "NCCLSIM WARN w-coll\n");
  assert_contains(out, "NCCLSIM INFO i-coll\n");
  assert_lacks(out, "t-coll");
  free(out);
  /* An empty list means all. */
  assert_int_equal(ncclsimParamSet("DEBUG_SUBSYS", ""), ncclSuccess);
  out = log_levels(SIM_DEV, "dev");
  assert_contains(out, "NCCLSIM INFO i-dev\n");
  free(out);

  /* An unknown level prints nothing. */
  assert_int_equal(ncclsimParamSet("DEBUG", "LOUD"), ncclSuccess);
  assert_string_equal(ncclsimParamGet("DEBUG"), "LOUD");
  out = log_levels(SIM_ALL, "loud");
  assert_string_equal(out, "");
  free(out);

  /* Back to the environment. */
  setenv("NCCLSIM_DEBUG", "WARN", 1);
  setenv("NCCLSIM_DEBUG_SUBSYS", "DEV", 1);
  assert_int_equal(ncclsimParamSet("DEBUG", NULL), ncclSuccess);
  assert_int_equal(ncclsimParamSet("DEBUG_SUBSYS", NULL), ncclSuccess);
  out = log_levels(SIM_DEV, "env");
  assert_contains(out, "NCCLSIM WARN w-env\n");
  assert_lacks(out, "i-env");
  free(out);
  out = log_levels(SIM_P2P, "env-p2p");
  assert_string_equal(out, "");
  free(out);
  unsetenv("NCCLSIM_DEBUG");
  unsetenv("NCCLSIM_DEBUG_SUBSYS");
  assert_int_equal(ncclsimParamSet("DEBUG", NULL), ncclSuccess);
  assert_int_equal(ncclsimParamSet("DEBUG_SUBSYS", NULL), ncclSuccess);
  assert_string_equal(ncclsimParamGet("DEBUG"), "none");
  assert_string_equal(ncclsimParamGet("DEBUG_SUBSYS"), "ALL");
  out = log_levels(SIM_ALL, "default");
  assert_string_equal(out, "");
  free(out);
  sim_clear_warning();
}

/* Threads log while another changes the level and the mask (for TSan):
 * every line printed is whole. */
enum { RACE_LOGS = 2000 };
static atomic_int race_running;

static void *race_logger(void *arg) {
  (void)arg;
  for (int i = 0; i < RACE_LOGS; i++) SIM_INFO(SIM_P2P, "race %d", i);
  atomic_fetch_sub(&race_running, 1);
  return NULL;
}

static void test_log_param_set_race(void **state) {
  (void)state;
  static const char *levels[] = {"INFO", "none"}, *masks[] = {"P2P", "ALL", "INIT"};
  capture c;
  capture_start(&c, 2);
  pthread_t t[2];
  atomic_store(&race_running, 2);
  for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&t[i], NULL, race_logger, NULL), 0);
  for (int i = 0; atomic_load(&race_running) > 0 && i < 20000; i++) {
    assert_int_equal(ncclsimParamSet("DEBUG", levels[i % 2]), ncclSuccess);
    assert_int_equal(ncclsimParamSet("DEBUG_SUBSYS", masks[i % 3]), ncclSuccess);
  }
  for (int i = 0; i < 2; i++) assert_int_equal(pthread_join(t[i], NULL), 0);
  assert_int_equal(ncclsimParamSet("DEBUG", NULL), ncclSuccess);
  assert_int_equal(ncclsimParamSet("DEBUG_SUBSYS", NULL), ncclSuccess);
  char *out = capture_end(&c);
  for (char *line = out, *nl; *line; line = nl + 1) {
    nl = strchr(line, '\n');
    assert_non_null(nl);
    *nl = 0;
    if (!strstr(line, " NCCLSIM INFO race ")) fail_msg("unexpected line: %s", line);
  }
  free(out);
}

/* A host name as long as Linux allows (HOST_NAME_MAX, 64) is printed
 * whole, not replaced by "localhost". The child sets it in a UTS namespace
 * of its own; where that is not permitted (not root) the test skips. */
static void test_log_long_hostname(void **state) {
  (void)state;
  char name[HOST_NAME_MAX + 1];
  int len = snprintf(name, sizeof name, "n4c-long-host-name");
  for (; len < HOST_NAME_MAX; len++) name[len] = (char)('0' + len % 10);
  name[len] = 0;
  capture c;
  capture_start(&c, 2);
  fflush(stdout);
  pid_t p = fork();
  if (p == 0) {
    if (unshare(CLONE_NEWUTS) != 0 || sethostname(name, strlen(name)) != 0) {
      fprintf(stderr, "cannot set a host name in a UTS namespace of its own: %s", strerror(errno));
      fflush(stderr);
      _exit(77);
    }
    setenv("NCCLSIM_DEBUG", "WARN", 1);
    unsetenv("NCCLSIM_DEBUG_SUBSYS");
    int rc = child_logs();
    fflush(stderr);
    exit(rc);
  }
  int status = 0;
  assert_true(p > 0);
  assert_int_equal(waitpid(p, &status, 0), p);
  char *out = capture_end(&c);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
    print_message("skipped: %s\n", out);
    free(out);
    skip();
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail_msg("log child failed, status 0x%x; it printed:\n%s", status, out);
  char want[HOST_NAME_MAX + 128];
  snprintf(want, sizeof want, "%s:%d:%d [3] NCCLSIM WARN w-init 1\n", name, (int)p, (int)p);
  assert_contains(out, want);
  assert_lacks(out, "localhost");
  free(out);
}

/* A warning longer than the kept text is truncated, not overrun. */
static void test_log_long_warning(void **state) {
  (void)state;
  char big[2000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = 0;
  SIM_WARN(SIM_INIT, "%s", big);
  assert_int_equal(strlen(sim_last_warning()), 1023);
  sim_clear_warning();
  assert_string_equal(ncclGetLastError(NULL), "");
}

/* ---- parameters ---- */

/* A value from the environment is used once the cache is dropped (by
 * ncclsimParamSet(name, NULL)); an invalid one is reported on stderr and
 * the default used instead. Names may carry the NCCLSIM_ prefix. */
static void test_param_environment(void **state) {
  (void)state;
  setenv("NCCLSIM_LAT_US", "7.5", 1);
  assert_int_equal(ncclsimParamSet("LAT_US", NULL), ncclSuccess);
  assert_string_equal(ncclsimParamGet("NCCLSIM_LAT_US"), "7.5");
  assert_true(sim_param(SIM_P_LAT_US) == 7.5);

  setenv("NCCLSIM_LAT_US", "fast", 1);
  assert_int_equal(ncclsimParamSet("NCCLSIM_LAT_US", NULL), ncclSuccess);
  capture c;
  capture_start(&c, 2);
  const char *v = ncclsimParamGet("LAT_US");
  char *err = capture_end(&c);
  assert_string_equal(v, "5");
  assert_contains(err, "NCCLSIM WARN NCCLSIM_LAT_US=\"fast\" is not valid");
  assert_contains(err, "using the default 5");
  free(err);
  assert_int_equal(sim_param_int(SIM_P_LAT_US), 5);

  /* An override beats the environment; dropping it goes back to it. */
  setenv("NCCLSIM_LAT_US", "3", 1);
  assert_int_equal(ncclsimParamSet("LAT_US", "9"), ncclSuccess);
  assert_string_equal(ncclsimParamGet("LAT_US"), "9");
  assert_int_equal(ncclsimParamSet("LAT_US", NULL), ncclSuccess);
  assert_string_equal(ncclsimParamGet("LAT_US"), "3");
  unsetenv("NCCLSIM_LAT_US");
  assert_int_equal(ncclsimParamSet("LAT_US", NULL), ncclSuccess);
  assert_string_equal(ncclsimParamGet("LAT_US"), "5");
}

/* Numbers must be whole, finite, non-negative and in range. */
static void test_param_numbers(void **state) {
  (void)state;
  static const char *bad[] = {"", "2s", "1e999", "inf", "nan", "-1", "0x"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(ncclsimParamSet("TIMEOUT", bad[i]), ncclInvalidArgument);
    assert_contains(ncclGetLastError(NULL), "is not a valid value for NCCLSIM_TIMEOUT");
  }
  const char *env = getenv("NCCLSIM_TIMEOUT");
  assert_string_equal(ncclsimParamGet("TIMEOUT"), env ? env : "30"); /* unchanged */
  assert_int_equal(ncclsimParamSet("TIMEOUT", "2.5"), ncclSuccess);
  assert_int_equal(sim_timeout_ns(), 2500000000ull);
  assert_int_equal(ncclsimParamSet("TIMEOUT", "0"), ncclSuccess);
  assert_int_equal(sim_timeout_ns(), 0);
  assert_int_equal(ncclsimParamSet("TIMEOUT", NULL), ncclSuccess);
}

/* NCCLSIM_FAULT: "none", or RANK:K with K >= 1, each within range and
 * nothing after. */
static void test_param_fault(void **state) {
  (void)state;
  static const char *bad[] = {"1", "1:0", "x:2", "1:2x", "16777216:1", "0:4294967296", "-"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(ncclsimParamSet("FAULT", bad[i]), ncclInvalidArgument);
  assert_int_equal(ncclsimParamSet("FAULT", "16777215:4294967295"), ncclSuccess);
  assert_true(sim_param(SIM_P_FAULT) == 16777215.0 * 4294967296.0 + 4294967295.0);
  assert_int_equal(ncclsimParamSet("FAULT", "NONE"), ncclSuccess);
  assert_true(sim_param(SIM_P_FAULT) == 0);
  assert_int_equal(ncclsimParamSet("FAULT", NULL), ncclSuccess);
  assert_string_equal(ncclsimParamGet("FAULT"), getenv("NCCLSIM_FAULT") ? getenv("NCCLSIM_FAULT") : "none");
}

/* GIN types: names (any case) or the enum's numbers 0, 2, 3, 4 (1 is
 * unused by NCCL); both GIN parameters parse alike. */
static void test_param_gin(void **state) {
  (void)state;
  static const struct { const char *text; int v; } ok[] = {
      {"none", NCCL_GIN_TYPE_NONE}, {"PROXY", NCCL_GIN_TYPE_PROXY}, {"GDAKI", NCCL_GIN_TYPE_GDAKI},
      {"gpi", NCCL_GIN_TYPE_GPI},   {"0", 0}, {"2", 2}, {"3", 3}, {"4", 4}};
  static const char *bad[] = {"1", "5", "-2", "", "2x", "ib"};
  const char *names[] = {"GIN_TYPE", "RAILED_GIN_TYPE"};
  const sim_param_id ids[] = {SIM_P_GIN_TYPE, SIM_P_RAILED_GIN_TYPE};
  for (int n = 0; n < 2; n++) {
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
      assert_int_equal(ncclsimParamSet(names[n], ok[i].text), ncclSuccess);
      assert_int_equal(sim_param_int(ids[n]), ok[i].v);
      assert_string_equal(ncclsimParamGet(names[n]), ok[i].text);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
      assert_int_equal(ncclsimParamSet(names[n], bad[i]), ncclInvalidArgument);
      assert_int_equal(sim_param_int(ids[n]), NCCL_GIN_TYPE_GPI); /* unchanged: the last good "4" */
    }
    assert_int_equal(ncclsimParamSet(names[n], NULL), ncclSuccess);
  }
}

/* Unknown and NULL names are refused by ParamSet and give NULL from
 * ParamGet; names are case-sensitive, as environment variables. */
static void test_param_names(void **state) {
  (void)state;
  assert_int_equal(ncclsimParamSet(NULL, "1"), ncclInvalidArgument);
  assert_contains(ncclGetLastError(NULL), "no parameter named \"(null)\"");
  assert_int_equal(ncclsimParamSet("timeout", "1"), ncclInvalidArgument);
  assert_contains(ncclGetLastError(NULL), "no parameter named \"timeout\"");
  assert_int_equal(ncclsimParamSet("NCCLSIM_", "1"), ncclInvalidArgument);
  assert_null(ncclsimParamGet(NULL));
  assert_null(ncclsimParamGet("NO_SUCH"));
  assert_string_equal(ncclsimParamGet("SPIN"), "2000");
}

/* An override that cannot be stored (allocation failure) changes nothing. */
static void test_param_set_alloc_failure(void **state) {
  (void)state;
  assert_int_equal(ncclsimParamSet("SPIN", "10"), ncclSuccess);
  ncclsimAllocFailAfter(1);
  assert_int_equal(ncclsimParamSet("SPIN", "20"), ncclSystemError);
  ncclsimAllocFailAfter(0);
  assert_string_equal(ncclsimParamGet("SPIN"), "10");
  assert_int_equal(ncclsimParamSet("SPIN", NULL), ncclSuccess);
  assert_string_equal(ncclsimParamGet("SPIN"), "2000");
}

/* The dump lists every parameter once, with its current value, default
 * and meaning; NULL means stdout. */
static void test_param_dump(void **state) {
  (void)state;
  assert_int_equal(ncclsimParamSet("BW_GBS", "42"), ncclSuccess);
  assert_int_equal(ncclsimParamSet("DEBUG", "TRACE"), ncclSuccess);
  assert_int_equal(ncclsimParamSet("DEBUG_SUBSYS", "P2P,RMA"), ncclSuccess);
  FILE *f = tmpfile();
  assert_non_null(f);
  ncclsimParamDump(f);
  long n = ftell(f);
  char *text = calloc(1, (size_t)n + 1);
  assert_non_null(text);
  rewind(f);
  assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  assert_contains(text, "NCCLSIM_BW_GBS=42\t(default 100) "
                        "ncclGroupSimulateEnd model: link bandwidth in GB/s\n");
  assert_contains(text, "NCCLSIM_GIN_TYPE=none\t(default none) ");
  assert_contains(text, "\nNCCLSIM_DEBUG=TRACE\t(default none) log level: ");
  assert_contains(text, "\nNCCLSIM_DEBUG_SUBSYS=P2P,RMA\t(default ALL) ");
  int lines = 0;
  for (char *p = text; *p; p++) lines += *p == '\n';
  assert_int_equal(lines, SIM_P_COUNT);

  capture c;
  capture_start(&c, 1);
  ncclsimParamDump(NULL);
  char *out = capture_end(&c);
  assert_string_equal(out, text);
  free(out);
  free(text);
  assert_int_equal(ncclsimParamSet("BW_GBS", NULL), ncclSuccess);
  assert_int_equal(ncclsimParamSet("DEBUG", NULL), ncclSuccess);
  assert_int_equal(ncclsimParamSet("DEBUG_SUBSYS", NULL), ncclSuccess);
}

/* ---- the allocation hook ---- */

/* ncclsimAllocFailAfter(n) fails exactly the nth allocation from now, once,
 * and returns how many were made since the previous call. */
static void test_alloc_fail_nth(void **state) {
  (void)state;
  ncclsimAllocFailAfter(3);
  void *a = sim_malloc(8), *b = sim_calloc(2, 8), *c = sim_malloc(8), *d = sim_malloc(8);
  assert_non_null(a);
  assert_non_null(b);
  assert_null(c);
  assert_non_null(d);
  assert_int_equal(ncclsimAllocFailAfter(0), 4);
  sim_free(a);
  sim_free(b);
  sim_free(d);
  /* 0 disables: nothing fails. */
  for (int i = 0; i < 5; i++) {
    void *p = sim_malloc(1);
    assert_non_null(p);
    sim_free(p);
  }
  assert_int_equal(ncclsimAllocFailAfter(0), 5);
}

/* Allocations from threads on different CPUs: unarmed, each CPU counts in
 * a counter of its own, and ncclsimAllocFailAfter's answer is their sum;
 * armed, "the Nth" is counted across threads, so exactly one fails. */
enum { ALLOC_THREAD_CALLS = 2000 };
typedef struct {
  int cpu;
  int failed;
} alloc_thread_arg;

static void *alloc_thread(void *p) {
  alloc_thread_arg *a = p;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(a->cpu, &set);
  (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set); /* best effort: any CPU counts */
  for (int i = 0; i < ALLOC_THREAD_CALLS; i++) {
    void *q = sim_malloc(8);
    if (!q) a->failed++;
    sim_free(q);
  }
  return NULL;
}

static void alloc_on_cpus(alloc_thread_arg args[2]) {
  pthread_t th[2];
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  for (int i = 0; i < 2; i++) {
    args[i] = (alloc_thread_arg){.cpu = ncpu > 1 ? i : 0};
    assert_int_equal(pthread_create(&th[i], NULL, alloc_thread, &args[i]), 0);
  }
  for (int i = 0; i < 2; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
}

static void test_alloc_count_threads(void **state) {
  (void)state;
  alloc_thread_arg args[2];
  ncclsimAllocFailAfter(0);
  alloc_on_cpus(args);
  assert_int_equal(args[0].failed + args[1].failed, 0);
  assert_int_equal(ncclsimAllocFailAfter(ALLOC_THREAD_CALLS + ALLOC_THREAD_CALLS / 2), 2 * ALLOC_THREAD_CALLS);
  alloc_on_cpus(args);
  assert_int_equal(args[0].failed + args[1].failed, 1);
  assert_int_equal(ncclsimAllocFailAfter(0), 2 * ALLOC_THREAD_CALLS);
}

/* Every allocator can be failed; a failed realloc leaves the block as it
 * was. */
static void test_alloc_each_fails(void **state) {
  (void)state;
  char *p = sim_malloc(4);
  assert_non_null(p);
  memcpy(p, "abc", 4);
  ncclsimAllocFailAfter(1);
  assert_null(sim_realloc(p, 1 << 20));
  assert_string_equal(p, "abc");
  ncclsimAllocFailAfter(1);
  assert_null(sim_calloc(1, 1));
  ncclsimAllocFailAfter(1);
  assert_null(sim_aligned_alloc(64, 64));
  ncclsimAllocFailAfter(1);
  assert_null(sim_strdup("abc"));
  ncclsimAllocFailAfter(0);
  char *q = sim_strdup(p);
  assert_non_null(q);
  assert_ptr_not_equal(q, p);
  assert_string_equal(q, "abc");
  sim_free(q);
  p = sim_realloc(p, 1 << 20);
  assert_non_null(p);
  assert_string_equal(p, "abc");
  sim_free(p);
}

/* Zero sizes give a distinct, freeable block (as malloc(1)), never NULL,
 * so NULL always means failure. Alignment is at least a pointer's; one
 * that is not a power of two fails. */
static void test_alloc_edge_sizes(void **state) {
  (void)state;
  void *p[6];
  p[0] = sim_malloc(0);
  p[1] = sim_calloc(0, 8);
  p[2] = sim_calloc(8, 0);
  p[3] = sim_realloc(NULL, 0);
  p[4] = sim_aligned_alloc(1, 0);
  p[5] = sim_aligned_alloc(4096, 10);
  for (int i = 0; i < 6; i++) assert_non_null(p[i]);
  assert_int_equal((uintptr_t)p[4] % sizeof(void *), 0);
  assert_int_equal((uintptr_t)p[5] % 4096, 0);
  assert_ptr_not_equal(p[1], p[2]);
  p[3] = sim_realloc(p[3], 0);
  assert_non_null(p[3]);
  for (int i = 0; i < 6; i++) sim_free(p[i]);
#if !SANITIZER_ALLOCATOR /* whose posix_memalign reports a bad alignment as an error itself */
  assert_null(sim_aligned_alloc(3 * sizeof(void *), 8));
#endif
}

/* The flight recorder's clock (util/ticks.c), on the time-stamp counter as
 * the machine has it and with the counter off (as where the kernel's clock
 * does not run on it: stamps in ns, at a rate of 1): it never runs
 * backwards, and over a long interval (200 ms) its stamps, converted with
 * sim_ticks_per_ns, measure what CLOCK_MONOTONIC does within 1%. Each
 * stamp is read between two CLOCK_MONOTONIC reads, and the interval must
 * lie between the shortest and the longest those allow: a thread preempted
 * between its reads widens the bracket, so the machine's load cannot fail
 * the test (the 2% bound it had around a 20 ms sleep could: issue 43). */
static void read_bracket(uint64_t *before, uint64_t *tick, uint64_t *after) {
  *before = sim_now_ns();
  *tick = sim_ticks();
  *after = sim_now_ns();
}

static void test_ticks(void **state) {
  (void)state;
  bool had = sim_tsc;
  for (int pass = 0; pass < 2; pass++) {
    sim_tsc = pass == 0 && had;
    const char *clock = sim_tsc ? "the time-stamp counter" : "the counter off";
    uint64_t prev = sim_ticks(), back = 0;
    for (int i = 0; i < 100000; i++) {
      uint64_t t = sim_ticks();
      if (t < prev) back++;
      prev = t;
    }
    uint64_t a0, t0, b0, a1, t1, b1;
    read_bracket(&a0, &t0, &b0);
    usleep(200000);
    read_bracket(&a1, &t1, &b1);
    double rate = sim_ticks_per_ns();
    bool tsc = sim_tsc;
    sim_tsc = had;
    if (back) fail_msg("%s: a stamp went backwards %llu times in 100000 reads", clock, (unsigned long long)back);
    if (!tsc && rate != 1.0) fail_msg("the counter off: %.6f per ns, not 1", rate);
    double ms = (double)(t1 - t0) / rate / 1e6, lo = (double)(a1 - b0) / 1e6, hi = (double)(b1 - a0) / 1e6;
    print_message("%s: %.4f per ns; %.3f ms on the stamps, %.3f to %.3f ms on CLOCK_MONOTONIC\n", clock, rate, ms,
                  lo, hi);
    if (lo < 199 || ms < lo * 0.99 || ms > hi * 1.01)
      fail_msg("%s: %.3f ms on the stamps (%.4f per ns), %.3f to %.3f ms on CLOCK_MONOTONIC", clock, ms, rate, lo,
               hi);
  }
}

/* ---- busy stream workers (util/wait.c) ---- */

static _Atomic int hold_open;
static void hold(void *arg) {
  (void)arg;
  while (!atomic_load(&hold_open)) usleep(1000);
}
static void note_tid(void *arg) { atomic_store((_Atomic pid_t *)arg, (pid_t)syscall(SYS_gettid)); }

/* A thread's scheduler state ('R' runnable, 'S' asleep), from /proc. */
static char thread_state(pid_t tid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
  FILE *f = fopen(path, "r");
  if (!f) return '?';
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  char *p = strrchr(buf, ')'); /* after the thread's name, which may hold anything */
  return p && p[1] == ' ' ? p[2] : '?';
}

/* Polls for up to 5 s times the build's slowdown; true once want() holds. */
static bool within_5s(bool (*want)(void *), void *arg) {
  for (int i = 0; i < 5000 * slowdown(); i++) {
    if (want(arg)) return true;
    usleep(1000);
  }
  return want(arg);
}
typedef struct {
  _Atomic pid_t *tid;
  char state;
} state_arg;
static bool in_state(void *arg) {
  state_arg *a = arg;
  pid_t tid = atomic_load(a->tid);
  return tid && thread_state(tid) == a->state;
}
static bool busy_is(void *arg) { return sim_workers_busy() == *(int *)arg; }

/* A worker counts as busy while it runs an operation, and not while it
 * sleeps in one; an idle worker polls for work (it stays runnable) while
 * the busy ones leave a CPU free, and sleeps once they are as many as the
 * CPUs. NCCLSIM_SPIN is a billion polls here, so only that rule puts it
 * to sleep. */
static void test_idle_worker_leaves_busy_cpus(void **state) {
  (void)state;
  int base = sim_workers_busy(), n = sim_ncpus() - base; /* busy workers to add to match the CPUs */
  if (n < 1 || n > 64) skip();
  assert_int_equal(ncclsimParamSet("SPIN", "1000000000"), ncclSuccess);
  cudaStream_t idle, s[64];
  _Atomic pid_t tid = 0;
  assert_int_equal(cudaStreamCreate(&idle), cudaSuccess);
  assert_int_equal(cudaLaunchHostFunc(idle, note_tid, (void *)&tid), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(idle), cudaSuccess);
  usleep(20000);
  assert_int_equal(thread_state(atomic_load(&tid)), 'R'); /* still polling */
  int want = base;
  assert_true(within_5s(busy_is, &want));

  atomic_store(&hold_open, 0);
  for (int i = 0; i < n; i++) {
    assert_int_equal(cudaStreamCreate(&s[i]), cudaSuccess);
    assert_int_equal(cudaLaunchHostFunc(s[i], hold, NULL), cudaSuccess);
  }
  want = base + n;
  assert_true(within_5s(busy_is, &want));
  state_arg asleep = {&tid, 'S'};
  assert_true(within_5s(in_state, &asleep));

  /* A worker asleep in an operation is not busy: an event wait behind
   * the held streams, with 100 polls before it sleeps. */
  assert_int_equal(ncclsimParamSet("SPIN", "100"), ncclSuccess);
  cudaStream_t w;
  cudaEvent_t e;
  _Atomic pid_t wtid = 0;
  assert_int_equal(cudaStreamCreate(&w), cudaSuccess);
  assert_int_equal(cudaEventCreate(&e), cudaSuccess);
  assert_int_equal(cudaEventRecord(e, s[0]), cudaSuccess);
  assert_int_equal(cudaLaunchHostFunc(w, note_tid, (void *)&wtid), cudaSuccess);
  assert_int_equal(cudaStreamWaitEvent(w, e, 0), cudaSuccess);
  state_arg w_asleep = {&wtid, 'S'};
  assert_true(within_5s(in_state, &w_asleep));
  assert_int_equal(sim_workers_busy(), base + n);

  /* More busy workers than CPUs: they take turns by yielding anyway, and
   * the idle worker polls again after its next operation. */
  cudaStream_t extra;
  assert_int_equal(cudaStreamCreate(&extra), cudaSuccess);
  assert_int_equal(cudaLaunchHostFunc(extra, hold, NULL), cudaSuccess);
  want = base + n + 1;
  assert_true(within_5s(busy_is, &want));
  assert_int_equal(ncclsimParamSet("SPIN", "1000000000"), ncclSuccess);
  atomic_store(&tid, 0);
  assert_int_equal(cudaLaunchHostFunc(idle, note_tid, (void *)&tid), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(idle), cudaSuccess);
  usleep(20000);
  assert_int_equal(thread_state(atomic_load(&tid)), 'R');

  atomic_store(&hold_open, 1);
  assert_int_equal(cudaStreamSynchronize(extra), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(extra), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(w), cudaSuccess);
  for (int i = 0; i < n; i++) {
    assert_int_equal(cudaStreamSynchronize(s[i]), cudaSuccess);
    assert_int_equal(cudaStreamDestroy(s[i]), cudaSuccess);
  }
  want = base;
  assert_true(within_5s(busy_is, &want));
  assert_int_equal(cudaEventDestroy(e), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(w), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(idle), cudaSuccess);
  assert_int_equal(ncclsimParamSet("SPIN", NULL), ncclSuccess);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ticks),
      cmocka_unit_test(test_log_warn),
      cmocka_unit_test(test_log_info),
      cmocka_unit_test(test_log_trace_subsys),
      cmocka_unit_test(test_log_unknown_level),
      /* Before anything logs in this process: the host name is read once. */
      cmocka_unit_test(test_log_long_hostname),
      cmocka_unit_test(test_log_param_set),
      cmocka_unit_test(test_log_param_set_race),
      cmocka_unit_test(test_log_long_warning),
      cmocka_unit_test(test_param_environment),
      cmocka_unit_test(test_param_numbers),
      cmocka_unit_test(test_param_fault),
      cmocka_unit_test(test_param_gin),
      cmocka_unit_test(test_param_names),
      cmocka_unit_test(test_param_set_alloc_failure),
      cmocka_unit_test(test_param_dump),
      cmocka_unit_test(test_alloc_fail_nth),
      cmocka_unit_test(test_alloc_count_threads),
      cmocka_unit_test(test_alloc_each_fails),
      cmocka_unit_test(test_alloc_edge_sizes),
      cmocka_unit_test(test_idle_worker_leaves_busy_cpus),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
