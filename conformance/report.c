/*
 * report.c — the report files of a run: where they are written, and the
 * JSON report (through jansson). The JUnit report is junit.c's, the table
 * that sets several JSON reports side by side table.c's.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef HAVE_JANSSON
#include <jansson.h>
#endif
#include "runner.h"
#include "text.h"

const char *run_backend(void)
{
#ifdef NCCLSIM
  return "ncclsim";
#else
  return "nccl";
#endif
}

const char report_no_jansson[] =
  "this n4c-conformance was built without jansson, so it can neither write nor "
  "read JSON reports (TAP and --junit still work); install jansson (Debian: "
  "libjansson-dev) and configure again, or see conformance/gpu-run.sh for a "
  "host without it";

/* Written beside the target and renamed, so that a reader never sees half
 * a report (the MPI watchdog writes them just before aborting the run). */
FILE *report_open(struct report_file *rf, const char *path)
{
  size_t len = strlen(path) + 5;

  rf->path = path;
  rf->f = NULL;
  if ((rf->tmp = malloc(len)) == NULL) {
    fprintf(stderr, "n4c-conformance: %s: out of memory\n", path);
    return NULL;
  }
  snprintf(rf->tmp, len, "%s.tmp", path);
  if ((rf->f = fopen(rf->tmp, "w")) == NULL) {
    fprintf(stderr, "n4c-conformance: %s: %s\n", rf->tmp, strerror(errno));
    free(rf->tmp);
    rf->tmp = NULL;
  }
  return rf->f;
}

int report_close(struct report_file *rf, bool ok)
{
  int rc = 0;

  if (rf->f == NULL)
    return -1;
  errno = 0;
  ok &= !ferror(rf->f);
  ok &= fclose(rf->f) == 0;
  if (!ok || rename(rf->tmp, rf->path) != 0) {
    fprintf(stderr, "n4c-conformance: writing %s: %s\n", rf->path,
            errno ? strerror(errno) : "write error");
    remove(rf->tmp);
    rc = -1;
  }
  free(rf->tmp);
  rf->f = NULL;
  rf->tmp = NULL;
  return rc;
}

#ifdef HAVE_JANSSON

/* A JSON string of s; jansson takes only valid UTF-8, and a detail cut to
 * its buffer's size may end in half a character. */
static json_t *string(const char *s)
{
  char *clean = text_utf8_clean(s);
  json_t *j = clean ? json_string(clean) : NULL;

  free(clean);
  return j;
}

/* 0 on success; a NULL value (out of memory) fails it. */
static int set(json_t *obj, const char *key, json_t *value)
{
  return json_object_set_new(obj, key, value) == 0 ? 0 : -1;
}

static json_t *case_json(const struct n4c_case *c, const struct case_result *res)
{
  json_t *j = json_object();
  int bad = j == NULL;

  if (bad)
    return NULL;
  bad |= set(j, "id", string(c->id));
  bad |= set(j, "claim", string(c->claim));
  bad |= set(j, "result", json_string(verdict_name(res->verdict)));
  bad |= set(j, "detail", string(res->detail));
  if (res->divergence[0])
    bad |= set(j, "divergence", string(res->divergence));
  /* Milliseconds, printed as such (JSON_REAL_PRECISION below). */
  bad |= set(j, "seconds", json_real(round(res->seconds * 1000) / 1000));
  if (bad) {
    json_decref(j);
    return NULL;
  }
  return j;
}

int report_json_write(const struct run *run, const char *path)
{
  json_t *root = json_object(), *cases = json_array();
  struct report_file rf;
  int bad = root == NULL || cases == NULL;

  if (!bad) {
    bad |= set(root, "backend", json_string(run_backend()));
    bad |= set(root, "nccl_version", json_integer(run->nccl_version));
    bad |= set(root, "nranks", json_integer(run->nranks));
    bad |= set(root, "launch", json_string(run->launch));
    bad |= set(root, "cases", json_incref(cases));
    for (size_t i = 0; i < run->ndone && !bad; i++)
      bad |= json_array_append_new(cases, case_json(run->cases[i], &run->results[i]));
  }
  json_decref(cases);
  if (bad) {
    json_decref(root);
    fprintf(stderr, "n4c-conformance: %s: out of memory\n", path);
    return -1;
  }
  if (report_open(&rf, path) == NULL) {
    json_decref(root);
    return -1;
  }
  bad = json_dumpf(root, rf.f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
  if (bad == 0)
    fputc('\n', rf.f);
  json_decref(root);
  return report_close(&rf, bad == 0);
}

#else /* !HAVE_JANSSON: main.c refuses --json before a run starts */

int report_json_write(const struct run *run, const char *path)
{
  (void)run;
  fprintf(stderr, "n4c-conformance: --json %s: %s\n", path, report_no_jansson);
  return -1;
}

#endif
