/*
 * runner.h — the parts of n4c-conformance behind the case API: the case
 * table, events and verdicts, the launchers and the reports.
 *
 * Ranks report through events (case_event). In threads mode the rank
 * threads run in a child process, one per case, and stream their events
 * to the parent through a pipe, so that what a rank said before a hang or
 * a crash is still reported; under --procs the rank processes do the same.
 * The parent never calls CUDA or NCCL: a real CUDA context does not
 * survive fork.
 */
#ifndef N4C_CONFORMANCE_RUNNER_H_
#define N4C_CONFORMANCE_RUNNER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include "case.h"

struct n4c_case {
  const char *id;    /* catalog ID, "P2P-01" */
  const char *claim; /* catalog claim text */
  case_fn *fn;
};
extern const struct n4c_case n4c_cases[];
extern const size_t n4c_ncases;

/* Severity order: a combined verdict is the worst over the ranks. */
enum verdict { VERDICT_PASS, VERDICT_SKIP, VERDICT_FAIL };
const char *verdict_name(enum verdict v); /* "pass", "skip", "fail" */

enum event_kind {
  EV_FAIL,       /* text: the detail */
  EV_SKIP,       /* text: the reason */
  EV_DIVERGENCE, /* text: documented versus observed */
  EV_NOTE,       /* text: a diagnostic for -v */
  EV_DONE,       /* the rank returned and released its resources */
  EV_VERSION,    /* value: ncclGetVersion (probe only) */
  EV_DEVICES     /* value: cudaGetDeviceCount (probe only) */
};

/* Fixed size and under PIPE_BUF, so that each write to the pipe is atomic
 * with several rank threads writing. */
#define EVENT_TEXT 1536
struct case_event {
  int32_t kind;
  int32_t rank; /* -1: the runner itself */
  int64_t value;
  char text[EVENT_TEXT];
};

#define MAX_RANKS 256 /* of one run in threads or --procs mode */
struct case_result {
  enum verdict verdict;
  char detail[2048];
  char divergence[EVENT_TEXT];
  int nranks;
  int ndone;                /* ranks that sent EV_DONE */
  bool done[MAX_RANKS];
  int nfail;                /* failure events, over all ranks */
  double seconds;
};
void result_init(struct case_result *res, int nranks);
void result_add(struct case_result *res, const struct case_event *ev);
/* "1 3": the ranks that have not sent EV_DONE. */
void result_unfinished(const struct case_result *res, char *buf, size_t len);
/* Ends the case as a failure: "<what>", then what ranks said before. */
void result_abort(struct case_result *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

struct opts {
  int nranks;
  int procs;          /* --procs N: N ranks as processes; 0 without */
  int ranks_per_proc; /* --ranks-per-proc T (with --procs): T ranks as threads per process; 0 without */
  int sim_hosts;      /* --sim-hosts H (ncclsim, with --procs): the processes as H simulated hosts; 0 without */
  const char *filter; /* comma-separated fnmatch globs on IDs */
  int timeout;        /* seconds per case */
  const char *json;   /* --json FILE */
  const char *junit;  /* --junit FILE */
  bool mpi, no_fork, verbose, list;
  char **table_files; /* --table FILE... */
  int ntable;
  const char *html;   /* --table ... --html FILE */
};

struct run {
  const struct opts *opts;
  const struct n4c_case **cases; /* selected, in table order */
  size_t ncases;
  struct case_result *results;
  size_t ndone;
  int nranks;
  int nccl_version;
  int ndevices;
  const char *launch; /* "threads", "mpi" or "procs" */
  FILE *tap;          /* the original stdout; NULL on MPI ranks but 0 */
  time_t started;
};

/* The collective operations behind ctx_barrier & co., per launch mode. */
struct launch_ops {
  void (*emit)(case_ctx_t *ctx, const struct case_event *ev);
  bool (*barrier)(case_ctx_t *ctx);
  bool (*allgather)(case_ctx_t *ctx, const void *mine, void *all, size_t len);
  bool (*bcast)(case_ctx_t *ctx, void *buf, size_t len, int root);
};

/* ctx.c: sends an event from a rank; runs and forgets its deferred frees. */
void ctx_emit(case_ctx_t *ctx, enum event_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void ctx_run_defers(case_ctx_t *ctx);

/* tap.c: the TAP stream, the report of case i (TAP line and
 * diagnostics), and the end of a run (JSON and JUnit; the exit status). */
FILE *run_take_stdout(void);
void run_report_case(struct run *run, size_t i);
int run_finish(struct run *run);
/* An event that arrived for the case being run: notes are printed, the
 * rest go to the result. */
void run_event(struct run *run, struct case_result *res, const struct case_event *ev);

/* launch_threads.c */
void threads_probe(struct run *run);
void threads_run_case(struct run *run, size_t i);
/* launch_mpi.c: the whole run under --mpi; returns the exit status. */
int mpi_main(struct run *run);
/* launch_procs.c: the whole run under --procs; returns the exit status. */
int procs_main(struct run *run);

/* report.c: the report files of a run. A report is written to
 * "<path>.tmp" and renamed to <path> by report_close (which removes it
 * instead when !ok); both print what went wrong. */
struct report_file {
  FILE *f;
  const char *path;
  char *tmp;
};
FILE *report_open(struct report_file *rf, const char *path);
int report_close(struct report_file *rf, bool ok);
const char *run_backend(void); /* "ncclsim" or "nccl" */
/* Why --json and --table are refused in a build without jansson. */
extern const char report_no_jansson[];
int report_json_write(const struct run *run, const char *path);

/* junit.c */
int report_junit_write(const struct run *run, const char *path);

/* table.c: --table, Markdown on `out` and, with html, an HTML page. */
int report_table(char **files, int nfiles, FILE *out, const char *html);

#endif /* N4C_CONFORMANCE_RUNNER_H_ */
