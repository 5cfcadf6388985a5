/*
 * junit.c — the JUnit XML report of a run (--junit FILE), for CI systems:
 *
 *   <testsuites>
 *     <testsuite name="n4c-conformance ncclsim/threads/2" ...>
 *       <properties> backend, nccl_version, launch, nranks, ... </properties>
 *       <testcase classname="P2P" name="P2P-01" time="SECONDS">
 *         <properties> claim (and divergence) </properties>
 *         <failure message="DETAIL">DETAIL</failure>  (or <skipped message=...>)
 *         <system-out>the claim (and divergence), for UIs that show only it</system-out>
 *       </testcase> ...
 *
 * The classname is the case's area, the part of its ID before the first
 * '-'. It needs no JSON, so it works in builds without jansson.
 */
#include "config.h"

#include <string.h>
#include <unistd.h>
#include "runner.h"
#include "text.h"

static void property(FILE *out, const char *indent, const char *name, const char *value)
{
  fprintf(out, "%s<property name=\"%s\" value=\"", indent, name);
  text_xml(out, value, true);
  fputs("\"/>\n", out);
}

static void testcase(FILE *out, const struct n4c_case *c, const struct case_result *res)
{
  size_t area = strcspn(c->id, "-");
  char classname[64];

  snprintf(classname, sizeof classname, "%.*s", (int)area, c->id);
  fputs("    <testcase classname=\"", out);
  text_xml(out, classname, true);
  fputs("\" name=\"", out);
  text_xml(out, c->id, true);
  fprintf(out, "\" time=\"%.3f\">\n", res->seconds);
  fputs("      <properties>\n", out);
  property(out, "        ", "claim", c->claim);
  if (res->divergence[0])
    property(out, "        ", "divergence", res->divergence);
  fputs("      </properties>\n", out);
  if (res->verdict == VERDICT_SKIP) {
    fputs("      <skipped message=\"", out);
    text_xml(out, res->detail, true);
    fputs("\"/>\n", out);
  } else if (res->verdict == VERDICT_FAIL) {
    fputs("      <failure message=\"", out);
    text_xml(out, res->detail, true);
    fputs("\">", out);
    text_xml(out, res->detail, false);
    fputs("</failure>\n", out);
  }
  fputs("      <system-out>", out);
  text_xml(out, c->claim, false);
  if (res->divergence[0]) {
    fputs("\ndivergence: ", out);
    text_xml(out, res->divergence, false);
  }
  fputs("</system-out>\n    </testcase>\n", out);
}

int report_junit_write(const struct run *run, const char *path)
{
  struct report_file rf;
  FILE *out;
  size_t nfail = 0, nskip = 0;
  double seconds = 0;
  char name[128], ver[32], num[32], host[256] = "", stamp[32] = "";
  struct tm tm;

  for (size_t i = 0; i < run->ndone; i++) {
    nfail += run->results[i].verdict == VERDICT_FAIL;
    nskip += run->results[i].verdict == VERDICT_SKIP;
    seconds += run->results[i].seconds;
  }
  if ((out = report_open(&rf, path)) == NULL)
    return -1;
  snprintf(name, sizeof name, "n4c-conformance %s/%s/%d", run_backend(), run->launch,
           run->nranks);
  if (gethostname(host, sizeof host - 1) != 0)
    host[0] = '\0';
  if (run->started && gmtime_r(&run->started, &tm))
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm); /* UTC; JUnit has no zone */
  text_nccl_version(run->nccl_version, ver, sizeof ver);

  fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
  fputs("<testsuites name=\"n4c-conformance\"", out);
  fprintf(out, " tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%.3f\">\n",
          run->ndone, nfail, nskip, seconds);
  fputs("  <testsuite name=\"", out);
  text_xml(out, name, true);
  fprintf(out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%.3f\"",
          run->ndone, nfail, nskip, seconds);
  if (stamp[0])
    fprintf(out, " timestamp=\"%s\"", stamp);
  if (host[0]) {
    fputs(" hostname=\"", out);
    text_xml(out, host, true);
    fputs("\"", out);
  }
  fputs(">\n    <properties>\n", out);
  property(out, "      ", "backend", run_backend());
  property(out, "      ", "nccl_version", ver);
  snprintf(num, sizeof num, "%d", run->nccl_version);
  property(out, "      ", "nccl_version_code", num);
  property(out, "      ", "launch", run->launch);
  snprintf(num, sizeof num, "%d", run->nranks);
  property(out, "      ", "nranks", num);
  snprintf(num, sizeof num, "%d", run->ndevices);
  property(out, "      ", "ndevices", num);
  fputs("    </properties>\n", out);
  for (size_t i = 0; i < run->ndone; i++)
    testcase(out, run->cases[i], &run->results[i]);
  fputs("  </testsuite>\n</testsuites>\n", out);
  return report_close(&rf, true);
}
