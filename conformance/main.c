/*
 * main.c — n4c-conformance: options, the choice of cases and the case loop
 * (the TAP report is tap.c's). Exit status: 0 when no case failed, 1 when one did, 2 on
 * a usage or set-up error.
 */
#include "config.h"

#include <fnmatch.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "runner.h"

static const char usage[] =
  "usage: n4c-conformance [-n NRANKS | --procs N [--ranks-per-proc T] [--sim-hosts H] | --mpi]\n"
  "                       [--timeout SEC]\n"
  "                       [--filter GLOB[,GLOB...]] [--json FILE] [--junit FILE]\n"
  "                       [--no-fork] [-v]\n"
  "       n4c-conformance --list [--filter GLOB[,GLOB...]]\n"
  "       n4c-conformance --table REPORT.json... [--html FILE] > table.md\n"
  "\n"
  "Runs the conformance cases of nccl4c on the linked NCCL; prints TAP.\n"
  "  -n NRANKS       ranks, as threads of one process (default 4);\n"
  "                  rank r uses device r mod the device count\n"
  "  --filter GLOBS  only the cases whose ID matches one of the globs\n"
  "  --timeout SEC   a case running longer fails (default 60 x N4C_SLOWDOWN,\n"
  "                  the build's slowdown: from the environment, else configure)\n"
  "  --json FILE     also write a JSON report\n"
  "  --junit FILE    also write a JUnit XML report (one testcase per case)\n"
  "  --procs N       ranks as N processes, one rank each, forked by the runner\n"
  "                  (no MPI); a case that times out or whose process dies\n"
  "                  fails, and the next case runs in fresh processes\n"
  "  --ranks-per-proc T  (with --procs N) T ranks in each process, as threads:\n"
  "                  N*T ranks, ranks p*T .. p*T+T-1 in process p\n"
  "  --sim-hosts H   (ncclsim, with --procs N) the N processes as H simulated\n"
  "                  hosts of N/H each (NCCLSIM_HOST_ID): no memory shared\n"
  "                  between hosts, UCX over TCP between them\n"
  "  --mpi           ranks are the MPI processes (mpirun -np N ...);\n"
  "                  a case that times out aborts the run (MPI_Abort)\n"
  "  --no-fork       run the cases in this process, without the watchdog\n"
  "                  (threads mode only)\n"
  "  -v              print the cases' notes and timings (and under --procs\n"
  "                  the rank processes' pids)\n"
  "  --list          print the IDs and claims, run nothing\n"
  "  --table         merge JSON reports into one Markdown table, a column\n"
  "                  per backend, launch mode and rank count\n"
  "  --html FILE     with --table: also write the table as an HTML page\n";

static int parse_int(const char *s, const char *what, int lo, int hi)
{
  char *end;
  long v = strtol(s, &end, 10);

  if (*s == '\0' || *end != '\0' || v < lo || v > hi) {
    fprintf(stderr, "n4c-conformance: %s must be an integer in %d..%d, not '%s'\n",
            what, lo, hi, s);
    exit(2);
  }
  return (int)v;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
  enum { O_LIST = 256, O_FILTER, O_TIMEOUT, O_JSON, O_JUNIT, O_MPI, O_NO_FORK, O_TABLE,
         O_HTML, O_PROCS, O_SIM_HOSTS, O_RANKS_PER_PROC };
  static const struct option longopts[] = {
    { "list", no_argument, NULL, O_LIST },
    { "filter", required_argument, NULL, O_FILTER },
    { "timeout", required_argument, NULL, O_TIMEOUT },
    { "json", required_argument, NULL, O_JSON },
    { "junit", required_argument, NULL, O_JUNIT },
    { "mpi", no_argument, NULL, O_MPI },
    { "procs", required_argument, NULL, O_PROCS },
    { "sim-hosts", required_argument, NULL, O_SIM_HOSTS },
    { "ranks-per-proc", required_argument, NULL, O_RANKS_PER_PROC },
    { "no-fork", no_argument, NULL, O_NO_FORK },
    { "table", no_argument, NULL, O_TABLE },
    { "html", required_argument, NULL, O_HTML },
    { "verbose", no_argument, NULL, 'v' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 }
  };
  bool table = false, nranks_given = false;
  int ch;

  memset(o, 0, sizeof *o);
  o->nranks = 4;
  o->timeout = 60 * case_slowdown();
  while ((ch = getopt_long(argc, argv, "n:vh", longopts, NULL)) != -1) {
    switch (ch) {
    case 'n': o->nranks = parse_int(optarg, "-n", 1, MAX_RANKS); nranks_given = true; break;
    case O_PROCS: o->procs = parse_int(optarg, "--procs", 1, MAX_RANKS); break;
    case O_SIM_HOSTS: o->sim_hosts = parse_int(optarg, "--sim-hosts", 1, MAX_RANKS); break;
    case O_RANKS_PER_PROC: o->ranks_per_proc = parse_int(optarg, "--ranks-per-proc", 1, MAX_RANKS); break;
    case O_LIST: o->list = true; break;
    case O_FILTER: o->filter = optarg; break;
    case O_TIMEOUT: o->timeout = parse_int(optarg, "--timeout", 1, 24 * 3600); break;
    case O_JSON: o->json = optarg; break;
    case O_JUNIT: o->junit = optarg; break;
    case O_MPI: o->mpi = true; break;
    case O_NO_FORK: o->no_fork = true; break;
    case O_TABLE: table = true; break;
    case O_HTML: o->html = optarg; break;
    case 'v': o->verbose = true; break;
    case 'h': fputs(usage, stdout); exit(0);
    default: fputs(usage, stderr); exit(2);
    }
  }
#ifndef HAVE_JANSSON
  /* Refused before anything runs, not after a run whose report is lost. */
  if (table || o->json) {
    fprintf(stderr, "n4c-conformance: %s: %s\n", table ? "--table" : "--json", report_no_jansson);
    exit(2);
  }
#endif
  if (o->procs && o->mpi) {
    fputs("n4c-conformance: --procs and --mpi both say how the ranks run: give one "
          "(--procs N forks N processes; --mpi runs under mpirun)\n", stderr);
    exit(2);
  }
  if (o->procs && nranks_given) {
    fprintf(stderr, "n4c-conformance: --procs %d already gives the rank count; drop -n %d\n",
            o->procs, o->nranks);
    exit(2);
  }
  if (o->ranks_per_proc && !o->procs) {
    fprintf(stderr, "n4c-conformance: --ranks-per-proc %d puts ranks as threads into the processes of "
            "--procs N: give --procs\n", o->ranks_per_proc);
    exit(2);
  }
  if (o->procs && o->ranks_per_proc && o->procs * o->ranks_per_proc > MAX_RANKS) {
    fprintf(stderr, "n4c-conformance: --procs %d --ranks-per-proc %d makes %d ranks; at most %d\n",
            o->procs, o->ranks_per_proc, o->procs * o->ranks_per_proc, MAX_RANKS);
    exit(2);
  }
  if (o->sim_hosts && (!o->procs || o->procs % o->sim_hosts != 0)) {
    fprintf(stderr, "n4c-conformance: --sim-hosts %d splits the processes of --procs N into hosts of N/%d "
            "each: give --procs with a multiple of %d\n", o->sim_hosts, o->sim_hosts, o->sim_hosts);
    exit(2);
  }
#ifndef NCCLSIM
  if (o->sim_hosts) {
    fputs("n4c-conformance: --sim-hosts simulates hosts on ncclsim; on real NCCL, run on real hosts (--mpi)\n",
          stderr);
    exit(2);
  }
#endif
  if (o->procs && o->no_fork) {
    fputs("n4c-conformance: --no-fork runs the rank threads in this process; "
          "--procs ranks are processes of their own: give one\n", stderr);
    exit(2);
  }
  if (o->html && !table) {
    fputs("n4c-conformance: --html writes the page of --table; give --table too\n", stderr);
    exit(2);
  }
  if (table) {
    o->table_files = argv + optind;
    o->ntable = argc - optind;
    if (o->ntable < 1) {
      fputs("n4c-conformance: --table needs at least one report\n", stderr);
      exit(2);
    }
  } else if (optind < argc) {
    fprintf(stderr, "n4c-conformance: unexpected argument '%s'\n%s", argv[optind], usage);
    exit(2);
  }
}

/* `filter` is a comma-separated list of fnmatch globs. */
static bool selected(const char *filter, const char *id)
{
  char glob[256];

  if (filter == NULL)
    return true;
  for (const char *p = filter; *p;) {
    size_t n = strcspn(p, ",");

    if (n < sizeof glob) {
      memcpy(glob, p, n);
      glob[n] = '\0';
      if (fnmatch(glob, id, 0) == 0)
        return true;
    }
    p += n + (p[n] == ',');
  }
  return false;
}

static int run_threads(struct run *run)
{
  run->launch = "threads";
  run->nranks = run->opts->nranks;
  run->tap = run_take_stdout();
  threads_probe(run);
  fprintf(run->tap, "1..%zu\n", run->ncases);
  fprintf(run->tap, "# backend %s, NCCL %d, %d ranks as threads, %d devices\n",
          run_backend(), run->nccl_version, run->nranks, run->ndevices);
  for (size_t i = 0; i < run->ncases; i++) {
    threads_run_case(run, i);
    run->ndone = i + 1;
    run_report_case(run, i);
  }
  return run_finish(run);
}

int main(int argc, char **argv)
{
  struct opts opts;
  struct run run;
  int rc;

  parse_opts(argc, argv, &opts);
  if (opts.table_files)
    return report_table(opts.table_files, opts.ntable, stdout, opts.html) == 0 ? 0 : 2;

  memset(&run, 0, sizeof run);
  run.opts = &opts;
  run.started = time(NULL);
  run.cases = calloc(n4c_ncases, sizeof *run.cases);
  run.results = calloc(n4c_ncases, sizeof *run.results);
  if (run.cases == NULL || run.results == NULL) {
    fputs("n4c-conformance: out of memory\n", stderr);
    return 2;
  }
  for (size_t i = 0; i < n4c_ncases; i++)
    if (selected(opts.filter, n4c_cases[i].id))
      run.cases[run.ncases++] = &n4c_cases[i];
  if (run.ncases == 0 || opts.list) {
    if (run.ncases == 0)
      fprintf(stderr, "n4c-conformance: no case matches --filter '%s'\n", opts.filter);
    for (size_t i = 0; i < run.ncases; i++)
      printf("%s\t%s\n", run.cases[i]->id, run.cases[i]->claim);
    free(run.cases);
    free(run.results);
    return run.ncases == 0 ? 2 : 0;
  }
  if (opts.mpi) {
#if !defined(HAVE_MPI)
    fputs("n4c-conformance: --mpi: this build has no MPI; "
          "configure --with-mpi\n", stderr);
    rc = 2;
#else
    rc = mpi_main(&run);
#endif
  } else if (opts.procs) {
    rc = procs_main(&run);
  } else {
    rc = run_threads(&run);
  }
  free(run.cases);
  free(run.results);
  return rc;
}
