/*
 * tap.c — what both launchers (threads, MPI) report through: a case's
 * events, its TAP line and diagnostics, and the end of a run (the JSON
 * and JUnit reports, report.c and junit.c).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"

/* A TAP description stops at '#'; newlines would end the line. */
static void tap_text(FILE *out, const char *s)
{
  for (; *s; s++) {
    if (*s == '#')
      fputs("\\#", out);
    else
      fputc(*s == '\n' ? ' ' : *s, out);
  }
}

/* Every line of `text` as a "# " diagnostic. */
static void tap_diag(FILE *out, const char *prefix, const char *text)
{
  fprintf(out, "# %s", prefix);
  for (; *text; text++) {
    fputc(*text, out);
    if (*text == '\n' && text[1])
      fputs("#   ", out);
  }
  fputc('\n', out);
}

void run_event(struct run *run, struct case_result *res, const struct case_event *ev)
{
  char who[32];

  switch (ev->kind) {
  case EV_NOTE:
    if (run->tap) {
      snprintf(who, sizeof who, "rank %d: ", ev->rank);
      tap_diag(run->tap, who, ev->text);
    }
    break;
  case EV_VERSION:
    run->nccl_version = (int)ev->value;
    break;
  case EV_DEVICES:
    run->ndevices = (int)ev->value;
    break;
  default:
    result_add(res, ev);
  }
}

void run_report_case(struct run *run, size_t i)
{
  const struct n4c_case *c = run->cases[i];
  const struct case_result *res = &run->results[i];
  FILE *tap = run->tap;

  if (tap == NULL)
    return;
  fprintf(tap, "%s %zu - %s ", res->verdict == VERDICT_FAIL ? "not ok" : "ok", i + 1, c->id);
  tap_text(tap, c->claim);
  if (res->verdict == VERDICT_SKIP) {
    fputs(" # SKIP ", tap);
    tap_text(tap, res->detail);
  }
  fputc('\n', tap);
  if (res->verdict == VERDICT_FAIL)
    tap_diag(tap, "", res->detail);
  if (res->divergence[0])
    tap_diag(tap, "divergence: ", res->divergence);
  if (run->opts->verbose)
    fprintf(tap, "# %s took %.2f s\n", c->id, res->seconds);
  fflush(tap);
}

/* The TAP stream keeps the real stdout; fd 1 goes to stderr from here on,
 * so that what a backend prints (real NCCL logs to stdout) stays out of
 * the TAP stream. */
FILE *run_take_stdout(void)
{
  int fd;
  FILE *tap;

  fflush(stdout);
  if ((fd = dup(1)) < 0 || (tap = fdopen(fd, "w")) == NULL || dup2(2, 1) < 0) {
    perror("n4c-conformance: setting up the TAP stream");
    exit(2);
  }
  return tap;
}

int run_finish(struct run *run)
{
  bool failed = false, unwritten = false;

  for (size_t i = 0; i < run->ndone; i++)
    failed |= run->results[i].verdict == VERDICT_FAIL;
  if (run->opts->json && report_json_write(run, run->opts->json) != 0)
    unwritten = true;
  if (run->opts->junit && report_junit_write(run, run->opts->junit) != 0)
    unwritten = true;
  return unwritten ? 2 : failed ? 1 : 0;
}
