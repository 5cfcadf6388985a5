/*
 * conf_report.c — the conformance suite's report writers on hostile text:
 * UTF-8 repair and XML escaping (conformance/text.c), the JSON report
 * (report.c, read back with jansson) and the JUnit report (junit.c) of a
 * run whose details hold markup, quotes, control characters and bytes that
 * are not UTF-8, as a detail cut to its buffer's size can.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#ifdef HAVE_JANSSON
#include <jansson.h>
#endif

#include "../conformance/runner.h"
#include "../conformance/text.h"

#define FFFD "\xef\xbf\xbd"

/* Every case function the case table would name; none runs here. */
static void no_case(case_ctx_t *ctx) { (void)ctx; }

static char *xml_of(const char *s, bool attr)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);

  assert_non_null(f);
  text_xml(f, s, attr);
  assert_int_equal(fclose(f), 0);
  return buf;
}

static char *slurp(const char *path)
{
  FILE *f = fopen(path, "rb");
  char *buf;
  long len;

  assert_non_null(f);
  assert_int_equal(fseek(f, 0, SEEK_END), 0);
  len = ftell(f);
  rewind(f);
  buf = malloc((size_t)len + 1);
  assert_non_null(buf);
  assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
  buf[len] = '\0';
  fclose(f);
  return buf;
}

static void test_utf8_len(void **state)
{
  static const struct { const char *s; size_t n; } t[] = {
    { "a", 1 },
    { "\xc3\xa9", 2 },             /* é */
    { "\xe2\x80\x9c", 3 },         /* “ */
    { "\xf0\x9f\x98\x80", 4 },     /* U+1F600 */
    { "\xf4\x8f\xbf\xbf", 4 },     /* U+10FFFF */
    { "\x80", 0 },                 /* a stray continuation byte */
    { "\xc0\x80", 0 },             /* overlong NUL */
    { "\xe0\x80\x80", 0 },         /* overlong */
    { "\xed\xa0\x80", 0 },         /* a surrogate */
    { "\xf4\x90\x80\x80", 0 },     /* above U+10FFFF */
    { "\xe2\x82", 0 },             /* cut short by the end */
    { "\xff", 0 },
  };

  (void)state;
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    assert_int_equal(text_utf8_len((const unsigned char *)t[i].s), t[i].n);
}

static void test_utf8_clean(void **state)
{
  char *s;

  (void)state;
  s = text_utf8_clean("plain, caf\xc3\xa9 \xe2\x80\x9cq\xe2\x80\x9d");
  assert_string_equal(s, "plain, caf\xc3\xa9 \xe2\x80\x9cq\xe2\x80\x9d");
  free(s);
  s = text_utf8_clean("a\xff" "b\xc0\x80" "c expected 0x34 \xe2\x82");
  assert_string_equal(s, "a" FFFD "b" FFFD FFFD "c expected 0x34 " FFFD FFFD);
  free(s);
  s = text_utf8_clean("");
  assert_string_equal(s, "");
  free(s);
}

static void test_xml(void **state)
{
  char *s;

  (void)state;
  s = xml_of("<a href=\"x\">&amp; 'q' ]]></a>", false);
  assert_string_equal(s, "&lt;a href=&quot;x&quot;&gt;&amp;amp; &#39;q&#39; ]]&gt;&lt;/a&gt;");
  free(s);
  /* Tab and newline are kept in text; in an attribute they are references,
   * or a parser would make them spaces. CR is a reference in both. */
  s = xml_of("a\tb\nc\rd", false);
  assert_string_equal(s, "a\tb\nc&#13;d");
  free(s);
  s = xml_of("a\tb\nc\rd", true);
  assert_string_equal(s, "a&#9;b&#10;c&#13;d");
  free(s);
  /* Not allowed in XML 1.0, even as references: other C0 controls, U+FFFE,
   * U+FFFF; and bytes that are not UTF-8. */
  s = xml_of("\x01x\x1f\x1b[0m \xef\xbf\xbe\xef\xbf\xbf \xff\xe2\x82", true);
  assert_string_equal(s, FFFD "x" FFFD FFFD "[0m " FFFD FFFD " " FFFD FFFD FFFD);
  free(s);
  s = xml_of("caf\xc3\xa9 \xe2\x80\x9c \x7f", false);
  assert_string_equal(s, "caf\xc3\xa9 \xe2\x80\x9c \x7f");
  free(s);
}

static void test_nccl_version(void **state)
{
  char buf[32];

  (void)state;
  text_nccl_version(22803, buf, sizeof buf);
  assert_string_equal(buf, "2.28.3");
  text_nccl_version(23007, buf, sizeof buf);
  assert_string_equal(buf, "2.30.7");
  text_nccl_version(2804, buf, sizeof buf);
  assert_string_equal(buf, "2.8.4");
}

/* A run of three cases: a failure whose detail is hostile, a skip, a pass. */
static const char hostile[] = "rank 1: <b>&amp;</b> \"q\" 'a' ]]> \x01\x7f\n\ttab\r \xff cut \xe2\x82";
static const char hostile_clean[] = "rank 1: <b>&amp;</b> \"q\" 'a' ]]> \x01\x7f\n\ttab\r " FFFD " cut " FFFD FFFD;
static const struct n4c_case cases[] = {
  { "P2P-01", "send/recv deliver every byte, for counts >= 64 MiB & \"more\"", no_case },
  { "SIG-03", "wait_signal for several peers", no_case },
  { "SIG-STRESS", "signals among the ranks", no_case },
};
static const struct n4c_case *case_list[] = { &cases[0], &cases[1], &cases[2] };
static struct case_result results[3];
static struct opts opts;
static struct run run;

static int setup_run(void **state)
{
  (void)state;
  memset(results, 0, sizeof results);
  results[0].verdict = VERDICT_FAIL;
  snprintf(results[0].detail, sizeof results[0].detail, "%s", hostile);
  snprintf(results[0].divergence, sizeof results[0].divergence, "caf\xc3\xa9 <div>");
  results[0].seconds = 2.25;
  results[1].verdict = VERDICT_SKIP;
  snprintf(results[1].detail, sizeof results[1].detail, "needs 3 ranks, there are 2");
  results[1].seconds = 0.0004;
  results[2].verdict = VERDICT_PASS;
  results[2].seconds = 12;
  memset(&run, 0, sizeof run);
  run.opts = &opts;
  run.cases = case_list;
  run.ncases = run.ndone = 3;
  run.results = results;
  run.nranks = 2;
  run.nccl_version = 22803;
  run.ndevices = 2;
  run.launch = "mpi";
  run.started = 1795000000; /* 2026-11-18T11:06:40 UTC */
  return 0;
}

static void test_json(void **state)
{
#ifdef HAVE_JANSSON
  const char *path = "tests/conf_report.out.json";
  json_error_t err;
  json_t *root, *c;

  (void)state;
  remove(path);
  assert_int_equal(report_json_write(&run, path), 0);
  assert_int_equal(access("tests/conf_report.out.json.tmp", F_OK), -1);
  root = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
  if (root == NULL)
    fail_msg("%s:%d:%d: %s", path, err.line, err.column, err.text);
  assert_string_equal(json_string_value(json_object_get(root, "backend")), run_backend());
  assert_int_equal(json_integer_value(json_object_get(root, "nccl_version")), 22803);
  assert_int_equal(json_integer_value(json_object_get(root, "nranks")), 2);
  assert_string_equal(json_string_value(json_object_get(root, "launch")), "mpi");
  assert_int_equal(json_array_size(json_object_get(root, "cases")), 3);
  c = json_array_get(json_object_get(root, "cases"), 0);
  assert_string_equal(json_string_value(json_object_get(c, "id")), "P2P-01");
  assert_string_equal(json_string_value(json_object_get(c, "claim")), cases[0].claim);
  assert_string_equal(json_string_value(json_object_get(c, "result")), "fail");
  assert_string_equal(json_string_value(json_object_get(c, "detail")), hostile_clean);
  assert_string_equal(json_string_value(json_object_get(c, "divergence")), "caf\xc3\xa9 <div>");
  assert_true(json_real_value(json_object_get(c, "seconds")) == 2.25);
  c = json_array_get(json_object_get(root, "cases"), 1);
  assert_string_equal(json_string_value(json_object_get(c, "result")), "skip");
  assert_null(json_object_get(c, "divergence"));
  assert_true(json_real_value(json_object_get(c, "seconds")) == 0);
  json_decref(root);
  /* Seconds to the millisecond, printed as such. */
  char *text = slurp(path);
  assert_non_null(strstr(text, "\"seconds\": 2.25\n"));
  assert_non_null(strstr(text, "\"seconds\": 12.0\n"));
  free(text);
  assert_int_equal(remove(path), 0);
  /* A directory that is not there: an error, and no file. */
  assert_int_equal(report_json_write(&run, "tests/no-such-dir/r.json"), -1);
#else
  (void)state;
  assert_int_equal(report_json_write(&run, "tests/conf_report.out.json"), -1);
  assert_int_equal(access("tests/conf_report.out.json", F_OK), -1);
  skip();
#endif
}

static void test_junit(void **state)
{
  const char *path = "tests/conf_report.out.xml";
  char *x;

  (void)state;
  remove(path);
  assert_int_equal(report_junit_write(&run, path), 0);
  x = slurp(path);
  /* Nothing XML 1.0 forbids, and valid UTF-8 throughout. */
  for (const unsigned char *p = (const unsigned char *)x; *p;) {
    size_t n = text_utf8_len(p);

    assert_true(n > 0);
    assert_true(*p >= 0x20 || *p == '\n' || *p == '\t');
    p += n;
  }
  static const char start[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites ";
  assert_true(strncmp(x, start, sizeof start - 1) == 0);
  assert_non_null(strstr(x, "<testsuites name=\"n4c-conformance\" tests=\"3\" failures=\"1\" "
                            "errors=\"0\" skipped=\"1\" time=\"14.250\">"));
  assert_non_null(strstr(x, "tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\" "
                            "time=\"14.250\" timestamp=\"2026-11-18T11:06:40\""));
  assert_non_null(strstr(x, "<property name=\"backend\" value=\"" N4C_BACKEND_NAME "\"/>"));
  assert_non_null(strstr(x, "<property name=\"nccl_version\" value=\"2.28.3\"/>"));
  assert_non_null(strstr(x, "<property name=\"launch\" value=\"mpi\"/>"));
  assert_non_null(strstr(x, "<property name=\"nranks\" value=\"2\"/>"));
  assert_non_null(strstr(x, "<testcase classname=\"P2P\" name=\"P2P-01\" time=\"2.250\">"));
  assert_non_null(strstr(x, "<property name=\"claim\" value=\"send/recv deliver every byte, for "
                            "counts &gt;= 64 MiB &amp; &quot;more&quot;\"/>"));
  assert_non_null(strstr(x, "<property name=\"divergence\" value=\"caf\xc3\xa9 &lt;div&gt;\"/>"));
  assert_non_null(strstr(x, "<failure message=\"rank 1: &lt;b&gt;&amp;amp;&lt;/b&gt; &quot;q&quot; "
                            "&#39;a&#39; ]]&gt; " FFFD "\x7f&#10;&#9;tab&#13; " FFFD " cut "
                            FFFD FFFD "\">rank 1: &lt;b&gt;&amp;amp;&lt;/b&gt; &quot;q&quot; "
                            "&#39;a&#39; ]]&gt; " FFFD "\x7f\n\ttab&#13; " FFFD " cut "
                            FFFD FFFD "</failure>"));
  assert_non_null(strstr(x, "<testcase classname=\"SIG\" name=\"SIG-03\" time=\"0.000\">"));
  assert_non_null(strstr(x, "<skipped message=\"needs 3 ranks, there are 2\"/>"));
  assert_non_null(strstr(x, "<testcase classname=\"SIG\" name=\"SIG-STRESS\" time=\"12.000\">\n"
                            "      <properties>\n        <property name=\"claim\" value=\"signals "
                            "among the ranks\"/>\n      </properties>\n      <system-out>signals "
                            "among the ranks</system-out>\n    </testcase>\n"));
  assert_non_null(strstr(x, "</testsuite>\n</testsuites>\n"));
  free(x);
  assert_int_equal(remove(path), 0);
  assert_int_equal(report_junit_write(&run, "tests/no-such-dir/r.xml"), -1);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_utf8_len),
    cmocka_unit_test(test_utf8_clean),
    cmocka_unit_test(test_xml),
    cmocka_unit_test(test_nccl_version),
    cmocka_unit_test_setup(test_json, setup_run),
    cmocka_unit_test_setup(test_junit, setup_run),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
