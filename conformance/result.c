/* result.c — combining the events of every rank into one verdict. */
#include "config.h"

#include <stdarg.h>
#include <string.h>
#include "runner.h"

const char *verdict_name(enum verdict v)
{
  return v == VERDICT_PASS ? "pass" : v == VERDICT_SKIP ? "skip" : "fail";
}

void result_init(struct case_result *res, int nranks)
{
  memset(res, 0, sizeof *res);
  res->verdict = VERDICT_PASS;
  res->nranks = nranks;
}

static void who(char *buf, size_t len, int rank)
{
  if (rank < 0)
    snprintf(buf, len, "runner");
  else
    snprintf(buf, len, "rank %d", rank);
}

/* Any failure beats any skip: the detail is the first failure to arrive,
 * which is most often the cause of the others. */
void result_add(struct case_result *res, const struct case_event *ev)
{
  char name[32];

  who(name, sizeof name, ev->rank);
  switch (ev->kind) {
  case EV_FAIL:
    if (res->verdict != VERDICT_FAIL) {
      res->verdict = VERDICT_FAIL;
      snprintf(res->detail, sizeof res->detail, "%s: %s", name, ev->text);
    }
    res->nfail++;
    break;
  case EV_SKIP:
    if (res->verdict == VERDICT_PASS) {
      res->verdict = VERDICT_SKIP;
      snprintf(res->detail, sizeof res->detail, "%s", ev->text);
    }
    break;
  case EV_DIVERGENCE:
    if (res->divergence[0] == '\0')
      snprintf(res->divergence, sizeof res->divergence, "%s", ev->text);
    break;
  case EV_DONE:
    if (ev->rank >= 0 && ev->rank < MAX_RANKS && !res->done[ev->rank]) {
      res->done[ev->rank] = true;
      res->ndone++;
    }
    break;
  default:
    break;
  }
}

void result_unfinished(const struct case_result *res, char *buf, size_t len)
{
  size_t n = 0;

  buf[0] = '\0';
  for (int r = 0; r < res->nranks && r < MAX_RANKS && n < len; r++)
    if (!res->done[r])
      n += (size_t)snprintf(buf + n, len - n, "%s%d", n ? " " : "", r);
}

void result_abort(struct case_result *res, const char *fmt, ...)
{
  static const char sep[] = "; before that, ";
  char what[512];
  size_t n, cap = sizeof res->detail - 1;
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  n = strlen(what);
  if (res->verdict == VERDICT_FAIL) {
    /* Shift what the ranks said right, cutting its end if need be. */
    size_t keep = strlen(res->detail);

    n += sizeof sep - 1;
    keep = keep < cap - n ? keep : cap - n;
    memmove(res->detail + n, res->detail, keep);
    res->detail[n + keep] = '\0';
    memcpy(res->detail, what, n - (sizeof sep - 1));
    memcpy(res->detail + n - (sizeof sep - 1), sep, sizeof sep - 1);
  } else {
    memcpy(res->detail, what, n + 1);
  }
  res->verdict = VERDICT_FAIL;
}
